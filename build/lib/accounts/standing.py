"""Where a browser session stands now, read afresh from the session store and the database.

A right granted to a session for longer than one request (the live queue's websocket) is held
against this, not against the user object resolved when it was granted: the session may since
have been signed out, flushed or expired, the password changed (the session's auth hash no longer
matches), the user deactivated or deleted, or their administrator rights taken away.
"""

from __future__ import annotations

import enum
from importlib import import_module

from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, load_backend
from django.contrib.auth.models import User
from django.utils.crypto import constant_time_compare

from accounts.rbac import resolve


class Standing(enum.Enum):
    ADMIN = "admin"
    NOT_ADMIN = "not_admin"  # signed in, but not (or no longer) an administrator
    SIGNED_OUT = "signed_out"  # no such session, expired, stale hash, user inactive or gone


def session_standing(session_key: str | None) -> Standing:
    """Read-only (unlike django.contrib.auth.get_user, it flushes nothing); blocking: call it off
    the event loop."""
    if not session_key:
        return Standing.SIGNED_OUT
    user = _session_user(session_key)
    if user is None:
        return Standing.SIGNED_OUT
    return Standing.ADMIN if resolve(user).is_admin else Standing.NOT_ADMIN


def _session_user(session_key: str) -> User | None:
    """The session's user as django.contrib.auth verifies it on a request, or None."""
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    data = store.load()  # {} for a session that is gone or expired
    user_id, backend_path = data.get(SESSION_KEY), data.get(BACKEND_SESSION_KEY)
    if user_id is None or backend_path not in settings.AUTHENTICATION_BACKENDS:
        return None
    try:
        # The backend's own lookup: ModelBackend answers None for an inactive user.
        user = load_backend(backend_path).get_user(User._meta.pk.to_python(user_id))
    except Exception:
        return None  # an id that does not parse: not a session we signed in
    if user is None or not _hash_matches(user, data.get(HASH_SESSION_KEY)):
        return None
    return user  # type: ignore[no-any-return]


def _hash_matches(user: User, session_hash: object) -> bool:
    """A password change changes the hash and so ends the user's other sessions; a hash made
    with a SECRET_KEY_FALLBACKS key still counts, as Django counts it."""
    if not isinstance(session_hash, str) or not session_hash:
        return False
    if constant_time_compare(session_hash, user.get_session_auth_hash()):
        return True
    return any(
        constant_time_compare(session_hash, fallback)
        for fallback in user.get_session_auth_fallback_hash()
    )
