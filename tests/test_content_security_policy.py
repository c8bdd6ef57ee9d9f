"""The Content-Security-Policy: every page answers with it, nothing we ship needs an exception to
it (no inline script, style attribute, event handler or javascript: URL), and the JSON API and
/metrics still answer. The browser tests check the pages themselves (tests/browser/conftest.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from aiplane.ui import SHELLS

ROOT = Path(settings.BASE_DIR)
POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self'",
    "font-src": "'self'",
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'none'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}


def policy_of(response: Any) -> dict[str, str]:
    header = response.headers["Content-Security-Policy"]
    directives = (part.strip().split(None, 1) for part in header.split(";") if part.strip())
    return {name: value for name, value in directives}


def page_paths(*, admin: bool) -> list[str]:
    return [
        "/" + "/".join(name.split("-")) + "/"
        for name, shell in SHELLS.items()
        if shell.admin == admin
    ]


@pytest.mark.django_db
def test_the_sign_in_page_answers_with_the_policy(anonymous: Client) -> None:
    response = anonymous.get("/login/")
    assert response.status_code == 200
    assert policy_of(response) == POLICY


@pytest.mark.django_db
def test_every_personal_page_answers_with_the_policy(alice_client: Client) -> None:
    for path in page_paths(admin=False):
        response = alice_client.get(path)
        assert (path, response.status_code) == (path, 200)
        assert policy_of(response) == POLICY, path


@pytest.mark.django_db
def test_every_administration_page_answers_with_the_policy(carol_client: Client) -> None:
    for path in page_paths(admin=True):
        response = carol_client.get(path)
        assert (path, response.status_code) == (path, 200)
        assert policy_of(response) == POLICY, path


@pytest.mark.django_db
def test_error_pages_answer_with_the_policy(alice_client: Client) -> None:
    assert policy_of(alice_client.get("/no/such/page/")) == POLICY
    forbidden = alice_client.get("/admin/users/")
    assert forbidden.status_code == 403
    assert policy_of(forbidden) == POLICY


@pytest.mark.django_db
def test_a_form_without_its_csrf_token_gets_our_localized_page(alice: Any) -> None:
    client = Client(enforce_csrf_checks=True, HTTP_ACCEPT_LANGUAGE="fr")
    response = client.post("/login/", {"username": "alice", "password": "x"})
    assert response.status_code == 403
    text = response.content.decode()
    assert "La vérification de sécurité de la page a échoué." in text
    assert "<style" not in text and "style=" not in text
    assert policy_of(response) == POLICY


@pytest.mark.django_db
def test_the_json_api_the_scripts_and_metrics_still_answer(alice_client: Client) -> None:
    me = alice_client.get("/api/v0/me")
    assert me.status_code == 200
    assert me.json()["username"] == "alice"
    assert alice_client.get("/api/v0/openapi.json").status_code == 200
    script = alice_client.get("/i18n/de.js")
    assert script.status_code == 200
    assert script.content.startswith(b"window.AIPLANE_I18N = ")
    metrics = Client().get("/metrics")
    assert metrics.status_code == 200
    assert b"# TYPE" in metrics.content


# --- nothing we ship needs 'unsafe-inline' ----------------------------------------------------

INLINE_IN_MARKUP = {
    "inline script": re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE),
    "style element": re.compile(r"<style\b", re.IGNORECASE),
    "style attribute": re.compile(r"\sstyle\s*=", re.IGNORECASE),
    "event handler attribute": re.compile(r"\son[a-z]+\s*=", re.IGNORECASE),
    "javascript: URL": re.compile(r"javascript:", re.IGNORECASE),
}
# Markup built by the page scripts: a style string, an HTML string, a handler as an attribute.
INLINE_IN_SCRIPTS = {
    "style string given to h()": re.compile(r"""\bstyle:\s*[`"']"""),
    "style attribute set": re.compile(r"""setAttribute\(\s*["'](style|on[a-z]+)["']"""),
    "HTML parsed from a string": re.compile(r"\b(innerHTML|outerHTML|insertAdjacentHTML)\b"),
    "handler given as a string": re.compile(r"""\bon[a-z]+:\s*[`"']"""),
    "javascript: URL": re.compile(r"javascript:", re.IGNORECASE),
    "string evaluated as code": re.compile(
        r"\b(eval|new Function)\s*\(|set(Timeout|Interval)\(\s*[`\"']"
    ),
}


def findings(paths: list[Path], patterns: dict[str, re.Pattern[str]]) -> list[str]:
    found = []
    for path in paths:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for what, pattern in patterns.items():
                if pattern.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {what}")
    return found


def test_no_template_has_inline_script_style_or_handlers() -> None:
    templates = sorted((ROOT / "templates").rglob("*.html"))
    assert templates
    assert findings(templates, INLINE_IN_MARKUP) == []


def test_no_page_script_builds_markup_the_policy_refuses() -> None:
    scripts = sorted((ROOT / "static" / "js").rglob("*.js"))
    assert scripts
    assert findings(scripts, INLINE_IN_SCRIPTS) == []


def test_the_scans_recognize_what_they_look_for() -> None:
    # Guards the patterns themselves: a scan that matches nothing would pass vacuously.
    markup = '<script>x()</script><p style="color:red" onclick="y()"><a href="javascript:z()">'
    assert {what for what, p in INLINE_IN_MARKUP.items() if p.search(markup)} == {
        "inline script",
        "style attribute",
        "event handler attribute",
        "javascript: URL",
    }
    assert not INLINE_IN_MARKUP["inline script"].search('<script type="module" src="/a.js">')
    script = 'h("span", { style: `width: 4%` }); el.innerHTML = s; h("b", { onclick: "f()" });'
    assert {what for what, p in INLINE_IN_SCRIPTS.items() if p.search(script)} == {
        "style string given to h()",
        "HTML parsed from a string",
        "handler given as a string",
    }
    assert not INLINE_IN_SCRIPTS["style string given to h()"].search('h("i", { style: { width } })')


@pytest.mark.django_db
def test_the_api_reference_may_show_data_images_and_nothing_else_more(anonymous: Client) -> None:
    # Swagger UI's stylesheet draws its icons as data: URLs; scripts and styles stay 'self'.
    response = anonymous.get("/api-reference/")
    assert response.status_code == 200
    assert policy_of(response) == {**POLICY, "img-src": "'self' data:"}
    assert policy_of(anonymous.get("/login/"))["img-src"] == "'self'"
