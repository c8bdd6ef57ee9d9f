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
    (scripts, "ACQUIRE"): "d300c0cebb6e3ec4b79d192dee51dbba473ad0db",
    (scripts, "INDEX"): "e7f081b14a9750c1165a0afe904acb3fe5b4a1a4",
    (scripts, "CANCEL"): "14236a8ec385a91bf5c3edf13b61e66e7b3d3043",
    (scripts, "RELEASE"): "4d83cc4c07fafc8f4e9137777f39bd2051a23e19",
    (scripts, "PASS"): "20c2df03d3c5ef5daca42b675a11a64e666009c7",
    (scripts, "TAKE"): "b8475dd46eadb32d24d727b4bb9bd7608124c536",
    (scripts, "RENEW"): "964b41ac4738276c275358858d6f50f6d8c9c2e5",
    (scripts, "STATS"): "5abe8128bcf1d22dd1f4c2e4663eb0c39a0daf6c",
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
