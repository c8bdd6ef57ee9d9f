"""API token secrets: generation, display prefix and digest (only the digest is ever stored)."""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass

SCHEME = "gwk_"
PREFIX_LENGTH = (
    12  # "gwk_" and 8 hex: enough to tell tokens apart in a list, useless to an attacker
)
_SHAPE = re.compile(r"gwk_[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class NewSecret:
    plaintext: str
    prefix: str
    digest: str


def digest_of(plaintext: str) -> str:
    # A plain SHA-256 is enough: the secret carries 256 random bits, so there is nothing to salt.
    return hashlib.sha256(plaintext.encode()).hexdigest()


def new_secret() -> NewSecret:
    plaintext = SCHEME + secrets.token_hex(32)
    return NewSecret(plaintext, plaintext[:PREFIX_LENGTH], digest_of(plaintext))


def looks_like_token(value: str) -> bool:
    """Whether a string has the token shape (so junk never reaches the cache or the database)."""
    return _SHAPE.fullmatch(value) is not None
