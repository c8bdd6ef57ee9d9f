"""The token create dialog: an expiry, the models the token may call, and connection details
whose examples work as they stand."""

from __future__ import annotations

import subprocess
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from accounts.models import ApiToken
from tests.support.factories import make_group

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LABELS = {
    "en": {
        "create": "Create token", "dialog": "Create a token", "name": "Name", "expiry": "Expires",
        "days": "In 30 days", "secret": "Copy your token now", "example": "Example",
        "models": "Models", "base": "Base URL",
    },
    "de": {
        "create": "Token erstellen", "dialog": "Token erstellen", "name": "Name",
        "expiry": "Läuft ab", "days": "In 30 Tagen", "secret": "Kopieren Sie Ihr Token jetzt",
        "example": "Beispiel", "models": "Modelle", "base": "Basis-URL",
    },
}  # fmt: skip


def use_language(user: Any, language: str) -> None:
    from accounts.models import UserProfile

    UserProfile.objects.update_or_create(user=user, defaults={"language": language})


def run_python(source: str) -> str:
    """Run an example program as a person would paste it (the venv has both SDKs)."""
    import sys

    done = subprocess.run(  # noqa: S603 - our own interpreter, the page's example as its input
        [sys.executable, "-c", source], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("language", ["en", "de"])
def test_a_new_token_gets_an_expiry_its_models_and_examples_that_work(
    page: Any,
    alice: Any,
    sign_in: Any,
    screenshot: Any,
    make_sim_backend: Any,
    aiplane_server: Any,
    language: str,
) -> None:
    labels = LABELS[language]
    use_language(alice, language)
    make_group("research", priority="medium", members=[alice])
    make_sim_backend(models=("sim-small", "sim-large"), max_inflight=4)

    sign_in(page, "alice")
    page.get_by_role("button", name=labels["create"]).click()
    dialog = page.get_by_role("dialog", name=labels["dialog"])
    dialog.get_by_label(labels["name"], exact=True).fill("laptop agent")
    dialog.get_by_label(labels["expiry"]).select_option(label=labels["days"])
    models = dialog.get_by_role("group", name=labels["models"])
    expect(models.get_by_role("checkbox")).to_have_count(2)
    models.get_by_label("sim-small").check()
    screenshot(page, f"tokens-create-connect-{language}")
    dialog.locator("#create-submit").click()

    secret_dialog = page.get_by_role("dialog", name=labels["secret"])
    key = secret_dialog.locator("#secret-value").input_value()
    base = aiplane_server.url
    expect(secret_dialog.locator("#connect-base")).to_have_text(f"{base}/v1")
    screenshot(page, f"tokens-secret-connect-{language}")

    token = ApiToken.objects.get(owner=alice)
    assert token.model_allowlist == ["sim-small"]
    assert token.expires_at is not None
    left = token.expires_at - timezone.now()
    assert timedelta(days=29, hours=23) < left <= timedelta(days=30)

    kind = secret_dialog.get_by_label(labels["example"])
    example = secret_dialog.locator("#connect-example")
    examples = {}
    for value in ("curl", "openai", "anthropic", "claude", "codex"):
        kind.select_option(value)
        examples[value] = example.inner_text()
        assert key in examples[value]
        assert "sim-small" in examples[value]
    assert f"export ANTHROPIC_BASE_URL={base}\n" in examples["claude"]
    assert f"export ANTHROPIC_API_KEY={key}\n" in examples["claude"]
    assert f'base_url = "{base}/v1"' in examples["codex"]
    assert 'wire_api = "responses"' in examples["codex"]

    # The examples run as they are, through the gateway to the simulated engine.
    assert run_python(examples["openai"]).strip()
    assert run_python(examples["anthropic"]).strip()
    curl = subprocess.run(  # noqa: S603 - the page's example, through a shell as pasted
        ["/bin/sh", "-c", examples["curl"] + " --silent --fail"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert curl.returncode == 0, curl.stderr
    assert '"choices"' in curl.stdout

    secret_dialog.locator("#secret-done").click()
    expect(page.locator("#connect-example")).to_have_text("")
    card = page.locator(".token-card").filter(has_text="laptop agent")
    expect(card).to_contain_text("sim-small")
    expect(card).not_to_contain_text("sim-large")


def test_with_no_model_checked_the_token_reaches_every_model(
    page: Any, alice: Any, sign_in: Any, make_sim_backend: Any
) -> None:
    make_group("research", priority="medium", members=[alice])
    make_sim_backend(models=("sim-small",))
    sign_in(page, "alice")
    page.get_by_role("button", name="Create token").click()
    dialog = page.get_by_role("dialog", name="Create a token")
    dialog.get_by_label("Name", exact=True).fill("everything")
    expect(dialog.get_by_label("sim-small")).not_to_be_checked()
    dialog.locator("#create-submit").click()
    expect(page.get_by_role("dialog", name="Copy your token now")).to_be_visible()
    token = ApiToken.objects.get(owner=alice)
    assert (token.model_allowlist, token.expires_at) == (None, None)
