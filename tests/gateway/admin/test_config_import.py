"""An import reaches the gateway running in the same process, as the admin API's saves do."""

from __future__ import annotations

import textwrap

import pytest

from aiplane.config_file import import_text
from tests.support.drive import chat
from tests.support.factories import make_token_with_secret, make_user


@pytest.mark.django_db(transaction=True)
def test_an_imported_backend_serves_at_once_in_the_running_gateway(gateway, sim):
    alice = make_user("alice")
    _, key = make_token_with_secret(alice)
    text = f"""
        backends:
          - name: sim
            base_url: {sim.url}/v1
            models: [sim-small]
        pools:
          - name: chat
            backends: [sim]
        """
    assert chat(gateway, key).status_code == 404  # no backend serves the model yet

    import_text(textwrap.dedent(text), dry_run=True)
    assert chat(gateway, key).status_code == 404  # a dry run applies nothing

    import_text(textwrap.dedent(text))
    answer = chat(gateway, key)
    assert answer.status_code == 200, answer.text
