"""Configuration as code: `manage.py config export` and `config import`, on a real database."""

from __future__ import annotations

import io
import textwrap
from typing import Any

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.models import GatewayGroup
from aiplane.catalog import CATALOG, all_settings, settings_update
from aiplane.config_file import MASK, ConfigRefused, export_text, import_text
from aiplane.models import OperatorSetting
from gateway.admin import services
from gateway.admin.crypto import decrypt
from gateway.models import Backend, Pool
from tests.support.factories import make_group, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def installed(carol: Any) -> None:
    """A small installation: carol administers; two backends (one keyed), two pools, a group."""
    make_group("research", priority="high", description="The lab.")
    services.backend_save(
        data={
            "name": "gpu1",
            "base_url": "http://127.0.0.1:9/v1",
            "api_key": "sk-gpu1-secret",
            "models": ["big"],
            "priority": {
                "mode": "custom",
                "mapping": {"field": "priority", "low": 10, "medium": 5, "high": 0},
            },
        }
    )
    services.backend_save(data={"name": "gpu2", "base_url": "http://127.0.0.1:10/v1"})
    services.pool_save(
        data={"name": "chat", "backends": ["gpu1", "gpu2"], "allowed_groups": ["research"]},
        known_groups={"research"},
    )
    services.pool_save(
        data={"name": "big", "backends": ["gpu1"], "fallback": "chat"}, known_groups=set()
    )
    settings_update(values={"gateway.priority_enabled": True, "gateway.max_waiters": 50})


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("config", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def file_with(tmp_path: Any, text: str) -> str:
    path = tmp_path / "aiplane.yaml"
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return str(path)


def stamps() -> dict[str, Any]:
    """When each object was last written: a no-op import must not move any of them."""
    return {
        "groups": dict(GatewayGroup.objects.values_list("name", "updated_at")),
        "backends": dict(Backend.objects.values_list("name", "updated_at")),
        "pools": dict(Pool.objects.values_list("name", "updated_at")),
        "settings": dict(OperatorSetting.objects.values_list("key", "updated_at")),
    }


def statuses(changes: list[Any]) -> dict[str, str]:
    return {f"{c.section}:{c.name}": c.status for c in changes}


def refusals(text: str, **options: Any) -> list[tuple[int, int, str]]:
    with pytest.raises(ConfigRefused) as refused:
        import_text(textwrap.dedent(text).lstrip("\n"), **options)
    return [(p.line, p.column, p.message) for p in refused.value.errors]


# ----- round trip ------------------------------------------------------------------------------


def test_importing_an_export_changes_nothing_and_writes_nothing(installed):
    exported = export_text().text
    before = stamps()

    changes = import_text(exported)

    assert {c.status for c in changes} == {"unchanged"}
    assert len(changes) == len(CATALOG) + 2 + 2 + 2  # every setting, group, backend and pool
    assert stamps() == before
    assert export_text().text == exported
    assert decrypt(Backend.objects.get(name="gpu1").api_key_encrypted) == "sk-gpu1-secret"


def test_a_pool_open_to_everyone_says_so_in_the_file_and_stays_open_through_a_round_trip(
    installed,
):
    pools = {p["name"]: p for p in yaml.safe_load(export_text().text)["pools"]}
    assert (pools["big"]["everyone"], pools["big"]["allowed_groups"]) == (True, [])
    assert (pools["chat"]["everyone"], pools["chat"]["allowed_groups"]) == (False, ["research"])

    exported = export_text().text
    assert {c.status for c in import_text(exported)} == {"unchanged"}
    assert Pool.objects.get(name="big").everyone


def test_a_learned_capacity_goes_out_as_auto_with_its_bounds_and_comes_back_unchanged(installed):
    import_text(
        """
        backends:
          - {name: gpu2, base_url: "http://127.0.0.1:10/v1", max_inflight: auto,
             capacity_floor: 2, capacity_ceiling: 64}
        """
    )
    gpu2 = Backend.objects.get(name="gpu2")
    assert (gpu2.capacity_auto, gpu2.capacity_floor, gpu2.capacity_ceiling) == (True, 2, 64)
    exported = export_text().text
    backends = {b["name"]: b for b in yaml.safe_load(exported)["backends"]}
    assert backends["gpu2"]["max_inflight"] == "auto"
    assert (backends["gpu2"]["capacity_floor"], backends["gpu2"]["capacity_ceiling"]) == (2, 64)
    assert backends["gpu1"]["max_inflight"] == 16  # a fixed one stays a number
    before = stamps()

    assert {c.status for c in import_text(exported)} == {"unchanged"}
    assert stamps() == before
    # Back to a fixed limit through the file: the bounds stay for the next time it learns.
    import_text(
        """
        backends: [{name: gpu2, base_url: "http://127.0.0.1:10/v1", max_inflight: 8}]
        """
    )
    gpu2.refresh_from_db()
    assert (gpu2.capacity_auto, gpu2.max_inflight) == (False, 8)


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"max_inflight": "automatic"}, "max_inflight"),
        ({"max_inflight": "auto", "capacity_floor": 0}, "capacity_floor"),
        ({"max_inflight": "auto", "capacity_floor": 9, "capacity_ceiling": 4}, "capacity_floor"),
    ],
)
def test_a_learned_capacity_the_api_refuses_the_file_refuses_too(installed, entry, field):
    exported = export_text().text
    backend = {"name": "gpu2", "base_url": "http://127.0.0.1:10/v1", **entry}
    with pytest.raises(ConfigRefused) as refused:
        import_text(yaml.safe_dump({"backends": [backend]}))
    assert [p.path for p in refused.value.errors] == [("backends", 0, field)]
    assert export_text().text == exported


def test_an_export_after_changes_through_the_api_imports_as_a_no_op(installed, carol_client):
    def put(path: str, body: dict[str, Any]) -> None:
        answer = carol_client.put(path, body, content_type="application/json")
        assert answer.status_code in (200, 201), answer.content

    put("/api/v0/admin/groups", {"name": "ops", "priority": "low", "description": "On call."})
    put(
        "/api/v0/admin/backends",
        {
            "name": "gpu3",
            "base_url": "https://gpu3.example/v1",
            "api_key": "sk-3",
            "aliases": {"small": "big"},
            "surfaces": {"messages": "translate"},
            "weight": 3,
        },
    )
    put("/api/v0/admin/pools", {"name": "chat", "backends": ["gpu3"], "strategy": "round_robin"})
    put("/api/v0/admin/pools", {"name": "ops-only", "allowed_groups": ["ops"], "fallback": "big"})
    answer = carol_client.post(
        "/api/v0/admin/settings",
        {"gateway.scheduler": "wspt", "activity.retention_days": 7},
        content_type="application/json",
    )
    assert answer.status_code == 200, answer.content
    exported = export_text().text
    before = stamps()

    assert {c.status for c in import_text(exported)} == {"unchanged"}
    assert stamps() == before
    assert export_text().text == exported


def test_an_export_with_environment_keys_rebuilds_the_installation_elsewhere(installed):
    exported = export_text(keys="env")
    assert exported.variables == {"GPU1_KEY": "gpu1"}
    assert "api_key: ${GPU1_KEY}" in exported.text
    Pool.objects.all().delete()
    Backend.objects.all().delete()
    GatewayGroup.objects.filter(name="research").delete()
    OperatorSetting.objects.all().delete()

    changes = import_text(exported.text, environ={"GPU1_KEY": "sk-gpu1-secret"})

    assert statuses(changes)["backends:gpu1"] == "created"
    assert statuses(changes)["pools:big"] == "created"
    assert decrypt(Backend.objects.get(name="gpu1").api_key_encrypted) == "sk-gpu1-secret"
    assert Pool.objects.get(name="big").fallback == Pool.objects.get(name="chat")
    assert export_text(keys="env").text == exported.text


# ----- keys ------------------------------------------------------------------------------------


def test_an_export_never_holds_a_key(installed):
    for keys in ("mask", "env"):
        assert "sk-gpu1-secret" not in export_text(keys=keys).text
    gpu1 = next(b for b in yaml.safe_load(export_text().text)["backends"] if b["name"] == "gpu1")
    gpu2 = next(b for b in yaml.safe_load(export_text().text)["backends"] if b["name"] == "gpu2")
    assert gpu1["api_key"] == MASK
    assert "api_key" not in gpu2  # none stored, none written


def test_a_masked_key_keeps_the_stored_one_and_a_new_backend_cannot_have_one(installed):
    text = export_text().text.replace("max_inflight: 16\n", "max_inflight: 4\n", 1)
    import_text(text)
    assert decrypt(Backend.objects.get(name="gpu1").api_key_encrypted) == "sk-gpu1-secret"

    assert refusals(
        f"""
        backends:
          - name: gpu9
            base_url: http://127.0.0.1:9/v1
            api_key: "{MASK}"
        """
    ) == [
        (
            4,
            14,
            f'"{MASK}" keeps a stored key, and backend gpu9 has none yet: give the key as '
            "${VARIABLE}.",
        )
    ]


def test_an_environment_reference_is_read_at_import_and_an_unset_one_is_refused(installed):
    text = """
        backends:
          - name: gpu1
            base_url: http://127.0.0.1:9/v1
            api_key: ${GPU1_KEY}
        """
    assert refusals(text, environ={}) == [
        (4, 14, "api_key refers to ${GPU1_KEY}, which is not set in the environment.")
    ]
    changes = import_text(textwrap.dedent(text), environ={"GPU1_KEY": "sk-rotated"})
    assert next(c.details for c in changes if c.name == "gpu1")[-1] == "api_key replaced"
    assert decrypt(Backend.objects.get(name="gpu1").api_key_encrypted) == "sk-rotated"
    assert "sk-rotated" not in " ".join(c.render() for c in changes)


def test_a_backend_left_without_an_api_key_in_the_file_loses_its_key(installed):
    changes = import_text("backends:\n  - name: gpu1\n    base_url: http://127.0.0.1:9/v1\n")
    assert "api_key cleared" in next(c for c in changes if c.name == "gpu1").details
    assert Backend.objects.get(name="gpu1").api_key_encrypted == ""


# ----- the diff and the dry run ------------------------------------------------------------------


def test_a_dry_run_prints_the_diff_of_the_real_run_and_changes_nothing(installed, tmp_path):
    path = file_with(
        tmp_path,
        """
        settings:
          gateway.max_waiters: 10
        groups:
          - name: research
            priority: medium
          - name: ops
        backends:
          - name: gpu2
            base_url: http://127.0.0.1:10/v1
            max_inflight: 2
        pools:
          - name: chat
            backends: [gpu2]
        """,
    )
    before, exported = stamps(), export_text().text

    dry, _ = run("import", path, "--dry-run")

    assert stamps() == before
    assert export_text().text == exported
    real, _ = run("import", path)
    assert dry.splitlines()[:-1] == real.splitlines()[:-1]
    assert dry.splitlines()[-1].startswith("Dry run, nothing was changed: 1 created, 4 changed")
    assert real.splitlines()[-1].startswith("Applied: 1 created, 4 changed, 0 deleted")
    assert "changed    setting gateway.max_waiters: 50 -> 10" in real
    assert (
        'changed    group research: description "The lab." -> ""; priority "high" -> "medium"'
        in real
    )
    assert "created    group ops" in real
    assert "changed    backend gpu2: max_inflight 16 -> 2" in real
    assert (
        'changed    pool chat: everyone false -> true; allowed_groups ["research"] -> [];'
        ' backends ["gpu1", "gpu2"] -> ["gpu2"]' in real
    )
    assert "left       backend gpu1" in real
    assert "left       pool big" in real
    assert "left       setting gateway.scheduler" in real
    assert GatewayGroup.objects.get(name="research").priority_class.label == "medium"


# ----- errors ------------------------------------------------------------------------------------


def test_every_refusal_names_its_line_and_column_and_nothing_changes(installed, tmp_path):
    path = file_with(
        tmp_path,
        """
        version: 1
        settings:
          gateway.max_waiters: -3
          gateway.nope: 1
        groups:
          - name: "bad name!"
          - name: ops
            priority: urgent
        backends:
          - name: gpu3
            base_url: ftp://gpu3.example
          - name: gpu4
            base_url: http://127.0.0.1:9/v1
            max_inflght: 3
          - name: gpu5
            base_url: http://127.0.0.1:9/v1
            priority: {mode: custom, mapping: {field: p, low: x, medium: 1, high: 2}}
        pools:
          - name: p1
            backends: [nothere]
        """,
    )
    before, exported = stamps(), export_text().text

    _, err = run_refused(path, "8 errors; nothing was changed.")

    assert err.splitlines() == [
        f"{path}:3:24: settings.gateway.max_waiters: gateway.max_waiters must be at least 0.",
        f"{path}:4:3: settings.gateway.nope: Unknown setting gateway.nope.",
        f"{path}:6:11: groups[0].name: A group name is 1-64 letters, digits, '.', '_' or '-',"
        " starting with a letter or digit.",
        f'{path}:8:15: groups[1].priority: Priority must be "low", "medium", "high" or null.',
        f"{path}:11:15: backends[0].base_url: base_url must be an http:// or https:// URL.",
        f"{path}:14:5: backends[1].max_inflght: Unknown field 'max_inflght'; there are name,"
        " base_url, api_key, max_inflight, capacity_floor, capacity_ceiling, weight, enabled,"
        " health_path, models, aliases,"
        " priority, surfaces, headroom, store_responses.",
        f"{path}:17:55: backends[2].priority.mapping.low: Priority value for 'low' must be an"
        " integer.",
        f"{path}:20:15: pools[0].backends: Unknown backend: nothere.",
    ]
    assert stamps() == before
    assert export_text().text == exported


def run_refused(path: str, summary: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError) as refused:
        call_command("config", "import", path, stdout=out, stderr=err)
    assert str(refused.value) == f"{path}: {summary}"
    return out.getvalue(), err.getvalue()


def test_a_syntax_error_names_its_line(db):
    assert refusals("pools:\n  - name: chat\n    backends: [a,\n") == [
        (
            4,
            1,
            "YAML: while parsing a flow node expected the node content, but found '<stream end>'.",
        )
    ]


def test_a_key_given_twice_and_a_name_given_twice_are_refused_where_they_stand(db):
    assert refusals(
        """
        settings:
          gateway.max_waiters: 1
          gateway.max_waiters: 2
        """
    ) == [(3, 3, "'gateway.max_waiters' appears twice.")]
    assert refusals(
        """
        groups:
          - name: ops
          - name: ops
        """
    ) == [(3, 11, "'ops' appears twice in groups.")]


def test_yaml_merge_keys_share_fields_and_a_self_containing_alias_is_refused(db):
    changes = import_text(
        """
pools:
  - &shared {name: one, strategy: round_robin, kind: embedding}
  - {<<: *shared, name: two}
"""
    )
    assert {k: v for k, v in statuses(changes).items() if k.startswith("pools:")} == {
        "pools:one": "created",
        "pools:two": "created",
    }
    assert Pool.objects.get(name="two").strategy == "round_robin"
    assert refusals("groups: &a\n  - *a\n") == [(1, 9, "An alias may not contain itself.")]


def test_a_tag_that_builds_an_object_is_refused(db):
    assert refusals("settings:\n  gateway.max_waiters: !!python/name:os.system\n") == [
        (
            2,
            24,
            "YAML: could not determine a constructor for the tag"
            " 'tag:yaml.org,2002:python/name:os.system'.",
        )
    ]


def test_an_unknown_section_or_version_is_refused(db):
    assert refusals("version: 2\nbackend: []\n") == [
        (1, 10, "This aiplane reads version 1 files."),
        (2, 1, "Unknown section 'backend'; there are version, settings, groups, backends, pools."),
    ]
    assert refusals("- a list\n") == [
        (1, 1, "The file must be a mapping of settings, groups, backends, pools.")
    ]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "x", "base_url": "http://h/v1", "max_inflight": "8"}, "max_inflight"),
        ({"name": "x", "base_url": "http://h/v1", "enabled": "yes"}, "enabled"),
        ({"name": "x", "base_url": "http://h/v1", "api_key": "has space"}, "api_key"),
        ({"name": "x", "base_url": "http://h/v1", "health_path": "health"}, "health_path"),
        ({"name": "x", "base_url": "http://h/v1", "surfaces": {"chat": "native"}}, "surfaces"),
        ({"name": "-x", "base_url": "http://h/v1"}, "name"),
    ],
)
def test_an_import_refuses_what_the_admin_api_refuses(carol_client, body, field):
    answer = carol_client.put("/api/v0/admin/backends", body, content_type="application/json")
    assert answer.status_code == 400
    api_message = answer.json()["error"]["message"]

    with pytest.raises(ConfigRefused) as refused:
        import_text(yaml.safe_dump({"backends": [body]}))

    [problem] = refused.value.errors
    assert problem.path == ("backends", 0, field)
    assert problem.message == api_message
    assert not Backend.objects.exists()


# ----- one transaction -------------------------------------------------------------------------


def test_a_refusal_late_in_the_file_undoes_everything_before_it(installed):
    exported = export_text().text
    with pytest.raises(ConfigRefused):
        import_text(
            """
            settings: {gateway.max_waiters: 1}
            groups: [{name: ops}]
            backends: [{name: gpu7, base_url: "http://127.0.0.1:9/v1"}]
            pools: [{name: chat, backends: [gpu7], fallback: nowhere}]
            """
        )
    assert export_text().text == exported
    assert not GatewayGroup.objects.filter(name="ops").exists()


def test_a_service_refusal_after_its_write_is_undone_with_the_rest(installed):
    # Written first, then found to leave nobody administering: the service's own check.
    assert refusals(
        """
        groups:
          - name: administrators
            is_admin: false
          - name: ops
        """
    ) == [(2, 5, "This change would leave no active administrator.")]
    assert GatewayGroup.objects.get(name="administrators").is_admin
    assert not GatewayGroup.objects.filter(name="ops").exists()


# ----- prune -------------------------------------------------------------------------------------


PRUNED = """
settings:
  gateway.scheduler: fcfs
groups:
  - name: administrators
    is_admin: true
backends:
  - name: gpu2
    base_url: http://127.0.0.1:10/v1
pools:
  - name: chat
    backends: [gpu2]
"""


def test_without_prune_what_the_file_leaves_out_is_left_alone(installed):
    changes = statuses(import_text(PRUNED))
    assert changes["groups:research"] == changes["backends:gpu1"] == changes["pools:big"] == "left"
    assert changes["settings:gateway.max_waiters"] == "left"
    assert Backend.objects.filter(name="gpu1").exists()
    assert all_settings()["gateway.max_waiters"] == 50


def test_with_prune_each_section_of_the_file_is_the_whole_truth(installed):
    changes = statuses(import_text(PRUNED, prune=True))

    assert (
        changes["groups:research"] == changes["backends:gpu1"] == changes["pools:big"] == "deleted"
    )
    assert changes["settings:gateway.max_waiters"] == "changed"  # back to its default
    assert changes["settings:gateway.scheduler"] == "changed"
    assert sorted(GatewayGroup.objects.values_list("name", flat=True)) == ["administrators"]
    assert list(Backend.objects.values_list("name", flat=True)) == ["gpu2"]
    assert list(Pool.objects.values_list("name", flat=True)) == ["chat"]
    assert all_settings()["gateway.max_waiters"] == 0
    assert all_settings()["gateway.priority_enabled"] is False
    assert all_settings()["gateway.scheduler"] == "fcfs"


def test_prune_leaves_the_sections_a_file_does_not_have(installed):
    changes = statuses(import_text("pools: []\n", prune=True))
    assert changes["pools:chat"] == changes["pools:big"] == "deleted"
    assert changes["backends:gpu1"] == changes["groups:research"] == "left"
    assert Backend.objects.count() == 2


def test_prune_refuses_to_delete_the_last_administrators_group(installed):
    assert refusals(
        "groups: [{name: research, priority: high, description: The lab.}]\n", prune=True
    ) == [
        (
            1,
            9,
            "deleting group administrators (not in the file): This change would leave no"
            " active administrator.",
        )
    ]
    assert GatewayGroup.objects.filter(name="administrators").exists()


def test_memberships_are_kept_and_no_user_is_part_of_the_file(installed):
    alice = make_user("alice")
    GatewayGroup.objects.get(name="research").members.add(alice)
    exported = export_text().text
    assert "alice" not in exported and "carol" not in exported
    import_text(exported.replace("priority: high", "priority: low"))
    assert list(GatewayGroup.objects.get(name="research").members.all()) == [alice]


def test_the_readme_example_imports_as_written(db):
    from django.conf import settings

    readme = (settings.BASE_DIR / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Configuration as code", 1)[1]
    example = section.split("```yaml\n", 1)[1].split("```", 1)[0]

    changes = statuses(import_text(example, environ={"GPU1_KEY": "sk-example"}))

    assert changes["groups:research"] == changes["backends:gpu1"] == "created"
    assert changes["pools:chat"] == "created"
    assert changes["settings:gateway.priority_enabled"] == "changed"
    assert decrypt(Backend.objects.get(name="gpu1").api_key_encrypted) == "sk-example"


def test_the_command_exports_to_a_file_and_names_the_variables_an_import_needs(installed, tmp_path):
    path = str(tmp_path / "exported.yaml")
    out, err = run("export", path, "--keys", "env")
    assert out == ""
    assert err.splitlines() == [
        f"wrote {path}",
        "import needs GPU1_KEY: the API key of backend gpu1",
    ]
    assert (tmp_path / "exported.yaml").read_text() == export_text(keys="env").text
    stdout, _ = run("export")
    assert stdout == export_text().text


def test_two_backend_names_that_make_one_variable_get_two_variables(db):
    for name in ("gpu-1", "gpu.1"):
        services.backend_save(data={"name": name, "base_url": "http://h/v1", "api_key": name})
    assert export_text(keys="env").variables == {"GPU_1_KEY": "gpu-1", "GPU_1_2_KEY": "gpu.1"}
    text = export_text(keys="env").text
    environ = {"GPU_1_KEY": "gpu-1", "GPU_1_2_KEY": "gpu.1"}
    assert {c.status for c in import_text(text, environ=environ)} == {"unchanged"}
