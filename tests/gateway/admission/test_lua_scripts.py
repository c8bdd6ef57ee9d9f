"""The Lua scripts, pinned: processes sharing a Redis prefix must run one version of each.

Redis names a script by the SHA1 of its text (EVALSHA), and every process of a group runs the
scripts it was shipped with: a script whose text changed, even by a blank line or a line end,
is a second version beside the first during a rolling update. A change must be meant, and then
comes with a new pin here (and a release note: mixed versions must not share a prefix).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from gateway.admission.shared import scripts
from gateway.allowances import shared as shared_allowances
from gateway.core.lua import script
from gateway.runtime import state_owners

PINNED = {
    (scripts, "ACQUIRE"): "f9391f57aabbf8b000b966320482bb9c503913a2",
    (scripts, "INDEX"): "5ab53c14fad23df56acf18ef1e06e4012d40236c",
    (scripts, "CANCEL"): "1d92337c1eef8aa4dce274665608679346ab7e4c",
    (scripts, "RELEASE"): "a6b8ab7ef2911a5c0c66ef4df25ddd6bdb8bec3f",
    (scripts, "PASS"): "cb7efdc4b36301d6105529c04cbcb86e2d9ebcea",
    (scripts, "TAKE"): "9fb931e169ee68695aebdfe70c7c5b7ad63c9714",
    (scripts, "RENEW"): "10104c3956ac326db57f4d4ffd84a4f22613d928",
    (scripts, "STATS"): "44c54ae054f71df9fc9f75d7c27e8a8e381ad681",
    (scripts, "CAPACITY"): "09b28a6b55d96aae9cd76faf75d09a937e1faa34",
    (shared_allowances, "ADMIT"): "a208f1c7fc57f0d70233a38869f9244d1da21a94",
    (shared_allowances, "SETTLE"): "167ce8bcf55d34dc6c874eb83cc97669aea6bb53",
    (state_owners, "CLAIM"): "5b04c251c71423d8d5a670a9b70c2e29cec1c341",
}


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8"), usedforsecurity=False).hexdigest()


@pytest.mark.parametrize(("module", "name"), list(PINNED), ids=[name for _, name in PINNED])
def test_every_script_is_the_pinned_text(module: object, name: str) -> None:
    assert _sha1(getattr(module, name)) == PINNED[module, name]


def test_the_scripts_read_the_same_whatever_the_checkout_did_to_line_ends(
    tmp_path: Path,
) -> None:
    """A checkout with CRLF line ends (git's autocrlf on Windows) reads as the same text."""
    here = Path(scripts.__file__).parent / "lua" / "acquire.lua"
    (tmp_path / "lua").mkdir()
    crlf = here.read_bytes().replace(b"\n", b"\r\n")
    (tmp_path / "lua" / "acquire.lua").write_bytes(crlf)
    assert script(str(tmp_path / "module.py"), "acquire") == script(scripts.__file__, "acquire")
