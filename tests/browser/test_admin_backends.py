"""Administration → Backends: the backend editor with its priority mode, what detection found,
live health and in-flight, the pools, and a save error that takes focus in the right language."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from gateway.admin import services
from gateway.models import Backend, Pool

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Nothing listens there: detection finds nothing, health probes fail, and no test waits on it.
DEAD_URL = "http://127.0.0.1:9/v1"


def card(page: Any, name: str) -> Any:
    return page.locator(f"#backend-list [data-backend='{name}']")


def editor(page: Any) -> Any:
    return page.locator("#backend-editor")


def in_viewport(page: Any, selector: str) -> bool:
    return bool(
        page.evaluate(
            """(selector) => {
                const box = document.querySelector(selector).getBoundingClientRect();
                return box.top >= 0 && box.left >= 0 && box.height > 0
                    && box.bottom <= window.innerHeight && box.right <= window.innerWidth;
            }""",
            selector,
        )
    )


def test_the_priority_mode_editor_saves_a_manual_mapping_then_gateway_only(
    page: Any, carol: Any, sign_in: Any, screenshot: Any
) -> None:
    services.backend_save(data={"name": "gpu-1", "base_url": DEAD_URL, "max_inflight": 4})
    services.pool_save(data={"name": "chat", "backends": ["gpu-1"]}, known_groups=set())
    sign_in(page, "carol")
    page.goto("/admin/backends/")
    expect(card(page, "gpu-1")).to_contain_text("Automatic")
    expect(card(page, "gpu-1")).to_contain_text(
        "Not forwarded: the server has not been identified yet."
    )
    card(page, "gpu-1").get_by_role("button", name="Edit").click()

    form = editor(page)
    expect(form.get_by_role("heading", name="Edit backend “gpu-1”")).to_be_visible()
    expect(form.get_by_label("Automatic")).to_be_checked()
    mapping = form.get_by_role("group", name="Manual mapping")
    expect(mapping).to_be_hidden()
    form.get_by_label("Manual mapping", exact=True).check()
    expect(mapping).to_be_visible()
    form.get_by_label("Parameter name").fill("priority")
    form.get_by_label("Value for low").fill("1")
    form.get_by_label("Value for medium").fill("0")
    form.get_by_label("Value for high").fill("-1")
    forwarding = "Forwarded as “priority”: low 1, medium 0, high -1 (manual mapping)."
    expect(form.locator("#editor-forwarding")).to_have_text(forwarding)
    screenshot(page, "admin-backends-editor")
    form.get_by_role("button", name="Save backend").click()

    expect(page.locator("#page-status")).to_have_text("Backend “gpu-1” saved and applied.")
    expect(form).to_be_hidden()
    backend = Backend.objects.get(name="gpu-1")
    assert backend.priority_mode == {
        "mode": "custom",
        "mapping": {"field": "priority", "low": 1, "medium": 0, "high": -1},
    }
    assert backend.max_inflight == 4  # the rest of the editor kept its values

    page.reload()
    expect(card(page, "gpu-1")).to_contain_text("Manual mapping")
    expect(card(page, "gpu-1").locator(".forwarding")).to_have_text(forwarding)
    card(page, "gpu-1").get_by_role("button", name="Edit").click()
    expect(form.get_by_label("Manual mapping", exact=True)).to_be_checked()
    expect(form.get_by_label("Parameter name")).to_have_value("priority")
    expect(form.get_by_label("Value for high")).to_have_value("-1")

    form.get_by_label("Gateway only").check()
    expect(mapping).to_be_hidden()
    expect(form.locator("#editor-forwarding")).to_have_text(
        "Not forwarded: gateway only. The gateway queue still orders the requests."
    )
    form.get_by_role("button", name="Save backend").click()
    expect(page.locator("#page-status")).to_have_text("Backend “gpu-1” saved and applied.")
    backend.refresh_from_db()
    assert backend.priority_mode == {"mode": "gateway"}
    expect(card(page, "gpu-1")).to_contain_text("Gateway only")


@pytest.mark.parametrize("width", [1280, 390])
def test_a_backend_save_error_takes_focus_and_is_scrolled_into_view_in_german(
    page: Any, german_carol: Any, sign_in: Any, screenshot: Any, width: int
) -> None:
    services.backend_save(data={"name": "gpu-1", "base_url": DEAD_URL})
    page.set_viewport_size({"width": width, "height": 800})
    sign_in(page, "carol")
    page.goto("/admin/backends/")
    card(page, "gpu-1").get_by_role("button", name="Bearbeiten").click()
    form = editor(page)
    form.get_by_label("Manuelle Zuordnung", exact=True).check()
    form.get_by_label("Parametername").fill("messages")
    form.get_by_label("Wert für Niedrig").fill("1")
    form.get_by_label("Wert für Mittel").fill("0")
    form.get_by_label("Wert für Hoch").fill("-1")
    save = form.get_by_role("button", name="Backend speichern")
    save.scroll_into_view_if_needed()
    assert not in_viewport(page, "#backend-alert") or page.locator("#backend-alert").is_hidden()
    save.click()

    alert = page.locator("#backend-alert")
    expect(alert).to_have_text(
        "Parametername: Dieser Parametername ist reserviert"
        " und kann die Priorität nicht übertragen."
    )
    expect(alert).to_have_attribute("role", "alert")
    page.wait_for_function(
        "document.activeElement && document.activeElement.id === 'backend-alert'"
    )
    page.wait_for_function(
        """() => {
            const box = document.getElementById('backend-alert').getBoundingClientRect();
            return box.top >= 0 && box.bottom <= window.innerHeight;
        }"""
    )
    assert in_viewport(page, "#backend-alert")
    expect(form.get_by_label("Parametername")).to_have_attribute("aria-invalid", "true")
    # A rejected save changed nothing.
    assert Backend.objects.get(name="gpu-1").priority_mode == {"mode": "auto"}
    screenshot(page, "admin-backends-error-de", widths=((width, 800),))


def test_a_new_backend_with_a_key_is_detected_and_joins_a_new_pool(
    page: Any, carol: Any, sign_in: Any, screenshot: Any, make_sim_backend: Any
) -> None:
    from gateway.sim.config import SimConfig
    from gateway.sim.server import SimServer

    engine = SimServer(
        SimConfig(server_info="sglang", priority_scheduling=True, sglang_schedule_policy="fcfs")
    )
    engine.start()
    try:
        sign_in(page, "carol")
        page.goto("/admin/backends/")
        expect(page.locator("#backends-empty")).to_be_visible()
        page.get_by_role("button", name="Add backend").click()
        form = editor(page)
        form.get_by_label("Name", exact=True).fill("sglang-1")
        form.get_by_label("Base URL").fill(engine.url + "/v1")
        form.get_by_label("API key").fill("sk-never-shown")
        form.get_by_label("Maximum requests in flight").fill("8")
        form.get_by_label("Served models").fill("sim-small")
        form.get_by_label("Aliases").fill("small = sim-small")
        expect(form.get_by_role("button", name="Detect now")).to_be_hidden()
        form.get_by_role("button", name="Save backend").click()
        # Saved, but in no pool yet: a warning, not "saved and applied".
        expect(page.locator("#page-alert")).to_have_text(
            "Backend “sglang-1” saved, but it is in no pool: its models answer 404 until a pool"
            " includes it."
        )
        expect(card(page, "sglang-1").locator(".no-pool")).to_be_visible()

        backend = Backend.objects.get(name="sglang-1")
        assert (backend.max_inflight, backend.served_models, backend.aliases) == (
            8,
            ["sim-small"],
            {"small": "sim-small"},
        )
        assert backend.api_key_encrypted and "sk-never-shown" not in backend.api_key_encrypted
        expect(card(page, "sglang-1")).to_contain_text("API keySet")

        card(page, "sglang-1").get_by_role("button", name="Detect now").click()
        expect(page.locator("#page-status")).to_have_text("Detection of sglang-1 finished.")
        expect(card(page, "sglang-1")).to_contain_text("SGLang")
        expect(card(page, "sglang-1").locator(".forwarding")).to_have_text(
            "Forwarded as “priority” (detected SGLang, higher values first):"
            " low 0, medium 1, high 2."
        )
        expect(card(page, "sglang-1").locator(".live-health")).to_have_text("Healthy")
        expect(card(page, "sglang-1").locator(".live-inflight")).to_have_text("0 of 8")

        card(page, "sglang-1").get_by_role("button", name="Edit").click()
        expect(form.get_by_label("API key")).to_have_value("")
        expect(form.locator("#backend-key-state")).to_have_text("Set")
        detection = form.locator("#editor-detection")
        expect(detection).to_contain_text("SGLang")
        expect(detection).to_contain_text("fcfs")
        assert "sk-never-shown" not in page.content()
        screenshot(page, "admin-backends-editor-detected")
        form.get_by_role("button", name="Cancel").click()

        page.get_by_role("button", name="Add pool").click()
        pool_form = page.locator("#pool-editor")
        pool_form.get_by_label("Name", exact=True).fill("chat")
        pool_form.get_by_label("Strategy").select_option("prefix_affinity")
        pool_form.get_by_label("sglang-1").check()
        pool_form.get_by_role("button", name="Save pool").click()
        expect(page.locator("#page-status")).to_have_text("Pool “chat” saved and applied.")
        pool = Pool.objects.get(name="chat")
        assert pool.strategy == "prefix_affinity"
        assert [b.name for b in pool.backends.all()] == ["sglang-1"]
        pool_row = page.locator("#pools-body tr[data-pool='chat']")
        expect(pool_row).to_contain_text("Prefix affinity")
        expect(pool_row).to_contain_text("Everyone")
        expect(card(page, "sglang-1")).to_contain_text("chat")
        expect(card(page, "sglang-1").locator(".no-pool")).to_have_count(0)
        screenshot(page, "admin-backends")
    finally:
        engine.stop()


def test_a_language_switch_on_an_admin_page_translates_it_and_sticks(
    page: Any, carol: Any, sign_in: Any, screenshot: Any
) -> None:
    from accounts.models import UserProfile

    services.backend_save(data={"name": "gpu-1", "base_url": DEAD_URL})
    sign_in(page, "carol")
    page.goto("/admin/backends/")
    expect(card(page, "gpu-1").get_by_role("button", name="Detect now")).to_be_visible()

    with page.expect_navigation():
        page.get_by_label("Language").select_option("fr")
    expect(page.locator("h1")).to_have_text("Serveurs de modèles")
    assert page.url.endswith("/admin/backends/")
    # Text the page script builds comes from the same catalog, in the new language.
    expect(page.get_by_role("button", name="Ajouter un serveur")).to_be_visible()
    expect(card(page, "gpu-1").get_by_role("button", name="Détecter maintenant")).to_be_visible()
    expect(card(page, "gpu-1").locator(".forwarding")).to_have_text(
        "Non transmise : le serveur n’a pas encore été identifié."  # noqa: RUF001 - French apostrophe
    )
    admin_nav = page.get_by_role("navigation", name="Administration")
    expect(admin_nav).to_contain_text("File d’attente")  # noqa: RUF001 - French apostrophe
    assert UserProfile.objects.get(user=carol).language == "fr"
    screenshot(page, "admin-backends-fr", widths=((1280, 800),))

    page.goto("/admin/queue/")
    expect(page.locator("h1")).to_have_text("File d’attente")  # noqa: RUF001 - French apostrophe
    expect(page.locator("#live-state")).to_have_text("En direct")


@pytest.mark.parametrize(
    ("admin", "edit", "field", "choice", "served"),
    [
        ("carol", "Edit", "Anthropic Messages", "Translate to chat completions",
         "Anthropic Messages: translated to chat"),
        ("german_carol", "Bearbeiten", "Anthropic Messages", "In Chat Completions übersetzen",
         "Anthropic Messages: in Chat übersetzt"),
    ],
)  # fmt: skip
def test_how_messages_are_served_is_shown_and_chosen_per_backend(
    page: Any, request: Any, sign_in: Any, screenshot: Any,
    admin: str, edit: str, field: str, choice: str, served: str,
) -> None:  # fmt: skip
    request.getfixturevalue(admin)
    services.backend_save(data={"name": "gpu-1", "base_url": DEAD_URL})
    sign_in(page, "carol")
    page.goto("/admin/backends/")
    card(page, "gpu-1").get_by_role("button", name=edit).click()

    form = editor(page)
    form.get_by_label(field).select_option(label=choice)
    screenshot(page, f"admin-backends-surfaces-{admin}")
    # An engine not yet detected is served translated already: the card's text alone does not
    # say the save went through, the PUT's answer does.
    with page.expect_response(
        lambda r: r.url.endswith("/api/v0/admin/backends") and r.request.method == "PUT"
    ):
        form.locator("#backend-save").click()

    expect(form).to_be_hidden()  # saved: the card's text was the same before
    expect(card(page, "gpu-1")).to_contain_text(served)
    assert Backend.objects.get(name="gpu-1").surfaces == {"messages": "translate"}


@pytest.mark.parametrize(
    ("language", "failed"),
    [
        ("en", "Detection failed: {url} did not answer (ConnectError: "),
        ("de", "Erkennung fehlgeschlagen: {url} hat nicht geantwortet (ConnectError: "),
    ],
)
def test_detect_now_on_an_unreachable_backend_shows_the_url_and_the_error_in_its_card(
    page: Any, carol: Any, sign_in: Any, screenshot: Any, language: str, failed: str
) -> None:
    from accounts.models import UserProfile

    UserProfile.objects.update_or_create(user=carol, defaults={"language": language})
    services.backend_save(data={"name": "gpu-1", "base_url": DEAD_URL})
    services.pool_save(data={"name": "chat", "backends": ["gpu-1"]}, known_groups=set())
    sign_in(page, "carol")
    page.goto("/admin/backends/")
    card(page, "gpu-1").locator(".actions button").nth(1).click()  # Detect now

    failure = card(page, "gpu-1").locator(".detect-failure")
    expect(failure).to_contain_text(failed.format(url=DEAD_URL + "/models"))
    expect(page.locator("#page-status")).to_be_hidden()  # no green "finished"
    expect(page.locator("#page-alert")).to_be_visible()
    screenshot(page, f"admin-backends-detect-failed-{language}")

    # In the editor the same failure is the editor's alert.
    card(page, "gpu-1").locator(".actions button").nth(0).click()
    editor(page).locator("#editor-detect").click()
    expect(page.locator("#backend-alert")).to_contain_text(failed.format(url=DEAD_URL + "/models"))


@pytest.mark.parametrize("width", [1280, 390])
def test_a_backend_in_no_pool_is_warned_about_and_the_editor_adds_it_to_a_pool(
    page: Any, carol: Any, sign_in: Any, screenshot: Any, width: int
) -> None:
    services.backend_save(data={"name": "gpu-1", "base_url": DEAD_URL})
    services.pool_save(data={"name": "chat"}, known_groups=set())
    services.pool_save(data={"name": "batch"}, known_groups=set())
    page.set_viewport_size({"width": width, "height": 800})
    sign_in(page, "carol")
    page.goto("/admin/backends/")
    warning = card(page, "gpu-1").locator(".no-pool")
    expect(warning).to_have_text(
        "In no pool: nobody can call its models (they answer 404) until a pool includes this"
        " backend."
    )
    card(page, "gpu-1").get_by_role("button", name="Edit").click()
    form = editor(page)
    expect(form.locator("#backend-pool-warning")).to_be_visible()
    screenshot(page, "admin-backends-no-pool", widths=((width, 800),))
    form.locator("#backend-pools").get_by_label("chat").check()
    expect(form.locator("#backend-pool-warning")).to_be_hidden()
    form.get_by_role("button", name="Save backend").click()

    expect(page.locator("#page-status")).to_have_text("Backend “gpu-1” saved and applied.")
    expect(warning).to_have_count(0)
    assert [p.name for p in Backend.objects.get(name="gpu-1").pools.all()] == ["chat"]
    expect(page.locator("#pools-body tr[data-pool='chat']")).to_contain_text("gpu-1")


@pytest.mark.parametrize(
    ("language", "everyone", "confirm", "open_to_all", "nobody"),
    [
        ("en", "Everyone", "Open the pool “team” to everyone?", "Open to everyone",
         "No group checked: nobody may use this pool."),
        ("de", "Alle", "Den Pool „team“ für alle öffnen?", "Für alle öffnen",
         "Keine Gruppe angekreuzt: Niemand darf diesen Pool nutzen."),
    ],
)  # fmt: skip
def test_opening_a_pool_to_everyone_is_an_explicit_choice_that_is_confirmed_first(
    page: Any, carol: Any, sign_in: Any, screenshot: Any,
    language: str, everyone: str, confirm: str, open_to_all: str, nobody: str,
) -> None:  # fmt: skip
    from accounts.models import UserProfile
    from tests.support.factories import make_group

    UserProfile.objects.update_or_create(user=carol, defaults={"language": language})
    make_group("research")
    services.pool_save(
        data={"name": "team", "allowed_groups": ["research"]}, known_groups={"research"}
    )
    sign_in(page, "carol")
    page.goto("/admin/backends/")
    page.locator("#pools-body tr[data-pool='team'] .row-actions button").nth(0).click()
    form = page.locator("#pool-editor")
    expect(form.locator("#pool-access-groups")).to_be_checked()

    # Unchecking the last group says the pool is then for nobody (it is not opened).
    form.locator("#pool-groups").get_by_label("research").uncheck()
    expect(form.locator("#pool-nobody")).to_have_text(nobody)
    form.get_by_label(everyone, exact=True).check()
    expect(form.locator("#pool-nobody")).to_be_hidden()
    form.locator("#pool-save").click()
    dialog = page.locator("#confirm-dialog")
    expect(dialog).to_contain_text(confirm)
    screenshot(page, f"admin-pools-widen-{language}", widths=((1280, 800),))
    dialog.locator("#confirm-cancel").click()
    pool = Pool.objects.get(name="team")
    assert (pool.everyone, pool.allowed_groups) == (False, ["research"])  # cancelled: unchanged

    form.locator("#pool-save").click()
    dialog.get_by_role("button", name=open_to_all).click()
    expect(form).to_be_hidden()
    pool.refresh_from_db()
    assert (pool.everyone, pool.allowed_groups) == (True, [])
    expect(page.locator("#pools-body tr[data-pool='team']")).to_contain_text(everyone)


@pytest.mark.parametrize(
    ("admin", "edit", "keep"),
    [
        ("carol", "Edit", "Keep Responses state for callers"),
        ("german_carol", "Bearbeiten", "Responses-Zustand für Aufrufer speichern"),
    ],
)
def test_keeping_responses_state_is_chosen_per_backend_and_shown_again(
    page: Any, request: Any, sign_in: Any, admin: str, edit: str, keep: str
) -> None:
    request.getfixturevalue(admin)
    services.backend_save(data={"name": "gpu-1", "base_url": DEAD_URL})
    sign_in(page, "carol")
    page.goto("/admin/backends/")
    card(page, "gpu-1").get_by_role("button", name=edit).click()

    form = editor(page)
    expect(form.get_by_label(keep)).not_to_be_checked()
    form.get_by_label(keep).check()
    with page.expect_response(
        lambda r: r.url.endswith("/api/v0/admin/backends") and r.request.method == "PUT"
    ):
        form.locator("#backend-save").click()
    expect(form).to_be_hidden()
    assert Backend.objects.get(name="gpu-1").store_responses is True

    card(page, "gpu-1").get_by_role("button", name=edit).click()
    expect(editor(page).get_by_label(keep)).to_be_checked()
