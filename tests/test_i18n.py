"""Drift tests of the Fluent catalogs: six languages with the same keys, every message formats,
every id the templates, page scripts and views use exists, every API error code has a message,
and the translations are translations."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.template import Context, Template
from django.test import RequestFactory

from aiplane import i18n
from aiplane.ui import SHELLS

ROOT = Path(settings.BASE_DIR)
OTHERS = [lang for lang in i18n.LANGUAGES if lang != "en"]
# Messages that may read the same in a language: names, symbols, loanwords used as they are.
SAME_IN_ANY_LANGUAGE = 0.20

T_TAG = re.compile(r"""\{%\s*t\s+(["'])([^"']+)\1""")
T_CALL = re.compile(r"""\bt\(\s*(["'])([a-z0-9][a-z0-9-]*)\1\s*[,)]""")


def surfaces(lang: str) -> set[str]:
    return {path.stem for path in (ROOT / "locale" / lang).glob("*.ftl")}


def test_every_language_has_a_catalog_directory() -> None:
    on_disk = {path.name for path in (ROOT / "locale").iterdir() if path.is_dir()}
    assert on_disk == set(i18n.LANGUAGES)


@pytest.mark.parametrize("lang", OTHERS)
def test_every_language_has_the_same_surface_files(lang: str) -> None:
    assert surfaces(lang) == surfaces("en")


@pytest.mark.parametrize("surface", sorted(surfaces("en")))
def test_every_key_of_a_surface_is_in_all_six_languages(surface: str) -> None:
    keys = {lang: set(i18n.catalog(lang).surfaces.get(surface, ())) for lang in i18n.LANGUAGES}
    union = set().union(*keys.values())
    missing = {lang: sorted(union - have) for lang, have in keys.items() if union - have}
    assert not missing, f"{surface}.ftl lacks keys: {missing}"


@pytest.mark.parametrize("lang", i18n.LANGUAGES)
def test_no_key_is_defined_twice(lang: str) -> None:
    seen: dict[str, str] = {}
    for surface, ids in i18n.catalog(lang).surfaces.items():
        for msg_id in ids:
            assert msg_id not in seen, f"{lang}: {msg_id} in {seen[msg_id]} and {surface}"
            seen[msg_id] = surface


@pytest.mark.parametrize("lang", i18n.LANGUAGES)
def test_every_message_parses_and_formats(lang: str) -> None:
    from fluent.syntax import FluentParser
    from fluent.syntax import ast as fluent_ast

    for path in sorted((ROOT / "locale" / lang).glob("*.ftl")):
        junk = [
            entry
            for entry in FluentParser().parse(path.read_text(encoding="utf-8")).body
            if isinstance(entry, fluent_ast.Junk)
        ]
        assert not junk, f"{path}: unparsable {[j.content for j in junk]}"
    cat = i18n.catalog(lang)
    for msg_id, names in cat.variables.items():
        message = cat.bundle.get_message(msg_id)
        assert message.value is not None, f"{lang}: {msg_id} has no value"
        text, errors = cat.bundle.format_pattern(message.value, {name: "x" for name in names})
        assert not errors, f"{lang}: {msg_id}: {errors}"
        assert str(text).strip(), f"{lang}: {msg_id} is empty"


@pytest.mark.parametrize("lang", OTHERS)
def test_variables_match_english(lang: str) -> None:
    english = i18n.catalog("en").variables
    for msg_id, names in i18n.catalog(lang).variables.items():
        assert set(names) == set(english.get(msg_id, ())), f"{lang}: {msg_id} uses {names}"


@pytest.mark.parametrize("lang", OTHERS)
def test_translations_are_not_english_copies(lang: str) -> None:
    english = i18n.catalog_messages("en")
    mine = i18n.catalog_messages(lang)
    same = sorted(msg_id for msg_id, text in mine.items() if english.get(msg_id) == text)
    assert len(same) < SAME_IN_ANY_LANGUAGE * len(english), f"{lang} copies English: {same}"


def used_template_ids() -> set[str]:
    return {
        match.group(2)
        for path in (ROOT / "templates").rglob("*.html")
        for match in T_TAG.finditer(path.read_text(encoding="utf-8"))
    }


def used_script_ids() -> set[str]:
    return {
        match.group(2)
        for path in (ROOT / "static" / "js").rglob("*.js")
        for match in T_CALL.finditer(path.read_text(encoding="utf-8"))
    }


def test_the_scans_find_ids() -> None:
    # Guards the regexes themselves: an empty scan would make the next tests pass vacuously.
    assert "login-title" in used_template_ids()
    assert "error-network" in used_script_ids()


def test_every_id_used_in_templates_exists_in_english() -> None:
    english = i18n.catalog_messages("en")
    missing = sorted(used_template_ids() - english.keys())
    assert not missing, f"templates use unknown ids: {missing}"


def test_every_id_used_in_page_scripts_exists_in_english() -> None:
    english = i18n.catalog_messages("en")
    missing = sorted(used_script_ids() - english.keys())
    assert not missing, f"static/js uses unknown ids: {missing}"


def test_every_page_title_and_language_name_exists() -> None:
    english = i18n.catalog_messages("en")
    wanted = {shell.title_id for shell in SHELLS.values()}
    wanted |= {f"language-name-{lang}" for lang in i18n.LANGUAGES}
    wanted |= {f"priority-{level}" for level in ("low", "medium", "high")}
    wanted |= {f"token-status-{state}" for state in ("active", "revoked", "expired")}
    assert not sorted(wanted - english.keys())


def _slug(value: str) -> str:
    return value.replace(".", "-").replace("_", "-")


def dynamic_ids() -> set[str]:
    """Ids the page scripts build from values the server sends: every value they can meet needs
    its label (a new setting, scheduler, pool strategy or outcome without one shows raw)."""
    from aiplane.catalog import CATALOG
    from gateway.admin.serializers.topology import CapacityOut
    from gateway.core.classes import CLASS_NAMES
    from gateway.engines.priority_forwarding import MODES
    from gateway.models import KINDS, STRATEGIES
    from gateway.observability.queue_metrics import OUTCOMES

    wanted: set[str] = set()
    for spec in CATALOG:
        wanted |= {f"setting-{_slug(spec.key)}", f"setting-{_slug(spec.key)}-hint"}
        wanted |= {f"settings-section-{_slug(spec.section)}"}
        if spec.key == "gateway.priority_default":
            wanted |= {f"priority-{choice}" for choice in spec.choices}
        elif spec.kind == "choice":
            wanted |= {f"setting-{_slug(spec.key)}-{choice}" for choice in spec.choices}
    wanted |= {f"pool-kind-{kind}" for kind in KINDS}
    wanted |= {f"pool-strategy-{_slug(s)}" for s in STRATEGIES}
    wanted |= {f"pool-strategy-{_slug(s)}-hint" for s in STRATEGIES}
    wanted |= {f"priority-{name}" for name in CLASS_NAMES}
    wanted |= {f"backend-priority-{'custom' if mode == 'custom' else mode}" for mode in MODES}
    wanted |= {f"capacity-reason-{reason}" for reason in CapacityOut().fields["reason"].choices}
    outcomes = {*OUTCOMES, "refused", "error", "client_closed", "upstream_error", "unknown"}
    wanted |= {f"outcome-{_slug(outcome)}" for outcome in outcomes}
    return wanted


def test_every_label_built_from_a_server_value_exists() -> None:
    english = i18n.catalog_messages("en")
    missing = sorted(dynamic_ids() - english.keys())
    assert not missing, f"labels the pages build at run time are missing: {missing}"


def test_the_activity_page_offers_every_outcome_the_gateway_records() -> None:
    import re as regex

    from gateway.core.outcomes import Outcome

    script = (ROOT / "static" / "js" / "activity.js").read_text(encoding="utf-8")
    listed = set(
        regex.findall(r'"([a-z_]+)"', script.split("const OUTCOMES = [", 1)[1].split("]")[0])
    )
    recorded = {str(outcome) for outcome in Outcome}
    assert recorded == listed, f"outcomes the filter lacks: {sorted(recorded - listed)}"


def _codes_in(path: Path) -> set[str]:
    """Error code literals of one module: code="x", "code": "x", code = "x" (also in tuples),
    a `code` parameter's default, and ApiError(status, "x", ...)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    codes: set[str] = set()

    def literal(node: ast.AST | None) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "code":
            codes.add(literal(node.value) or "")
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if literal(key) == "code":
                    codes.add(literal(value) or "")
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id == "code":
                    codes.add(literal(node.value) or "")
                elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                    for name, value in zip(target.elts, node.value.elts, strict=False):
                        if isinstance(name, ast.Name) and name.id == "code":
                            codes.add(literal(value) or "")
        elif isinstance(node, ast.arguments):
            positional = node.posonlyargs + node.args
            for arg, default in zip(positional[-len(node.defaults) :], node.defaults, strict=False):
                if arg.arg == "code":
                    codes.add(literal(default) or "")
            for arg, default in zip(node.kwonlyargs, node.kw_defaults, strict=True):
                if arg.arg == "code":
                    codes.add(literal(default) or "")
        elif isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", "")
            if name.endswith("Error") and len(node.args) >= 2:
                status, code = node.args[0], node.args[1]
                if isinstance(status, ast.Constant) and isinstance(status.value, int):
                    codes.add(literal(code) or "")
    return {code for code in codes if re.fullmatch(r"[a-z][a-z0-9_]*", code)}


def api_error_codes() -> dict[str, str]:
    found: dict[str, str] = {}
    for package in ("accounts", "gateway", "aiplane"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for code in _codes_in(path):
                found.setdefault(code, str(path.relative_to(ROOT)))
    return found


def test_the_code_scan_finds_codes() -> None:
    codes = api_error_codes()
    assert {"priority_above_ceiling", "csrf_failed", "not_admin"} <= codes.keys()


def test_every_api_error_code_has_a_message() -> None:
    english = i18n.catalog_messages("en")
    missing = {
        code: where
        for code, where in api_error_codes().items()
        if "error-" + code.replace("_", "-") not in english
    }
    assert not missing, f"error codes without an error-<code> message: {missing}"


@pytest.mark.parametrize(
    "code",
    [
        "priority_above_ceiling",
        "invalid_priority",
        "token_not_found",
        "not_found",
        "not_authenticated",
        "permission_denied",
        "not_admin",
        "csrf_failed",
        "invalid_request",
        "unknown_member",
        "unknown_setting",
        "invalid_setting",
        "invalid_priority_mode",
        "protected_priority_field",
        "invalid_priority_mapping",
        "network",
        "unknown",
    ],
)
def test_the_errors_the_pages_rely_on_exist(code: str) -> None:
    assert "error-" + code.replace("_", "-") in i18n.catalog_messages("en")


# --- the Python API -------------------------------------------------------------------------


def test_translate_formats_arguments_without_isolation_marks() -> None:
    assert i18n.translate("en", "signed-in-as", username="alice") == "Signed in as alice"
    assert i18n.translate("de", "signed-in-as", username="alice") == "Angemeldet als alice"


def test_translate_falls_back_to_english_then_to_the_id() -> None:
    assert i18n.translate("xx", "login-title") == "Sign in"
    assert i18n.translate("de", "no-such-message") == "no-such-message"


def test_catalog_messages_leave_placeholders_for_scripts() -> None:
    assert i18n.catalog_messages("fr")["signed-in-as"] == "Connecté en tant que {username}"
    assert "\u2068" not in "".join(i18n.catalog_messages("ru").values())


def test_the_script_is_valid_assignment_of_json() -> None:
    import json

    script = i18n.catalog_script("zh")
    prefix = "window.AIPLANE_I18N = "
    assert script.startswith(prefix)
    payload = json.loads(script[len(prefix) :].rstrip().rstrip(";"))
    assert payload["lang"] == "zh"
    assert payload["messages"]["login-title"] == "登录"


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("de-CH,de;q=0.9,en;q=0.8", "de"),
        ("ja,zh-CN;q=0.8,en;q=0.5", "zh"),
        ("en;q=0.1, ru;q=0.9", "ru"),
        ("pt-BR, it", "en"),
        ("", "en"),
        ("fr;q=0, es", "es"),
    ],
)
def test_accept_language_picks_the_best_supported_language(header: str, expected: str) -> None:
    request = RequestFactory().get("/", HTTP_ACCEPT_LANGUAGE=header)
    assert i18n.language_for(request) == expected


def test_the_cookie_beats_the_browser_language() -> None:
    request = RequestFactory().get("/", HTTP_ACCEPT_LANGUAGE="de")
    request.COOKIES["lang"] = "es"
    assert i18n.language_for(request) == "es"
    request.COOKIES["lang"] = "klingon"
    assert i18n.language_for(request) == "de"


def test_the_template_tag_escapes_and_takes_arguments() -> None:
    template = Template(
        '{% load fluent %}{% t "signed-in-as" username=name %}|{% t "login-title" as x %}{{ x }}'
    )
    rendered = template.render(Context({"lang": "es", "name": "<b>"}))
    assert rendered == "Sesión iniciada como &lt;b&gt;|Iniciar sesión"


def test_the_script_view_serves_each_language(client: object) -> None:
    from django.test import Client

    assert isinstance(client, Client)
    response = client.get(f"/i18n/de.js?v={i18n.catalog_version()}")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/javascript")
    assert "immutable" in response["Cache-Control"]
    assert "Anmelden" in response.content.decode()
    assert client.get("/i18n/xx.js").status_code == 404
