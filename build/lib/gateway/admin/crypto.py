"""Backend API keys at rest: Fernet-encrypted with a key derived from the installation secret."""

from __future__ import annotations

import base64
import hashlib
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings


@lru_cache(maxsize=1)
def _fernet() -> Fernet:
    secret = settings.AIPLANE_ENCRYPTION_KEY or settings.SECRET_KEY
    # A dedicated derivation so the same secret never serves two purposes unchanged.
    digest = hashlib.sha256(b"aiplane-backend-keys:" + secret.encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def encrypt(plaintext: str) -> str:
    return "" if not plaintext else _fernet().encrypt(plaintext.encode()).decode()


def decrypt(ciphertext: str) -> str:
    """The stored key, or "" when none is stored or the installation secret changed."""
    if not ciphertext:
        return ""
    try:
        return _fernet().decrypt(ciphertext.encode()).decode()
    except InvalidToken:
        return ""
