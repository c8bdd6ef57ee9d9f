"""Sign-in throttling on django-axes: who is locked out, for how long, and what they are told.

django-axes counts failed password sign-ins in the database (shared by every process) through
Django's own authentication signals, so the API's and the page's sign-in are counted alike, and
a locked-out attempt never reaches the password hasher, whether the username exists or not.
The settings (aiplane/settings.py) lock a username from any address and an address for any
username after AIPLANE_LOGIN_FAILURE_LIMIT failures within AIPLANE_LOGIN_COOLOFF_SECS. This
module adds what axes leaves to the project: the client address behind trusted proxies, a
reset on success that cannot be abused, the exact time a lockout ends, and the 429 answer.
"""

from __future__ import annotations

import ipaddress
import math
from datetime import datetime
from functools import cache
from typing import Any

from axes.handlers.database import AxesDatabaseHandler
from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_client_username, get_cool_off, get_failure_limit
from axes.models import AccessAttempt
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone

from accounts.api_errors import API_PREFIX, ApiError

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@cache
def _trusted_proxies(entries: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(entry, strict=False) for entry in entries)


def _address(text: str | None) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address((text or "").strip())
    except ValueError:
        return None


def client_address(request: HttpRequest) -> str | None:
    """The address failures are counted against (AXES_CLIENT_IP_CALLABLE).

    The peer's address; when the peer is one of AIPLANE_TRUSTED_PROXIES, the right-most address
    in X-Forwarded-For that is not itself a trusted proxy (the entries left of it are whatever
    the client chose to send). Anything that is not an IP address counts as no address at all,
    rather than reaching the database's address column.
    """
    peer = _address(request.META.get("REMOTE_ADDR"))
    proxies = _trusted_proxies(tuple(getattr(settings, "AIPLANE_TRUSTED_PROXIES", ())))
    client = peer
    if peer is not None and any(peer in net for net in proxies):
        hops = request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")
        for hop in reversed(hops):
            address = _address(hop)
            if address is None:
                break  # the proxy itself passed on something unreadable: stop believing it
            client = address
            if not any(address in net for net in proxies):
                break
    return None if client is None else str(client)


class LoginAttempts(AxesDatabaseHandler):
    """axes' database handler, with a reset on success limited to that account from that address.

    axes resets every attempt matching any lockout parameter, so with the address among them a
    successful sign-in to the attacker's own account would also wipe the failures it just ran up
    against a victim's username from that address; and resetting the whole username would let
    the victim's own sign-in wipe an attacker's failures from elsewhere. A success proves only
    that this client knows this password: its own failures for this account go, no others.
    """

    def reset_user_attempts(self, request: Any, credentials: dict[str, Any] | None = None) -> int:
        mine = AccessAttempt.objects.filter(
            username=get_client_username(request, credentials),
            ip_address=request.axes_ip_address,
        )
        count, _ = mine.delete()
        return count

    def locked_until(self, request: Any, credentials: dict[str, Any] | None = None) -> datetime:
        """When the failures counted against this request's username or address stop locking it.

        Each stored attempt holds a failure count and its latest time, and counts while that time
        is within the cool-off; the lockout ends when the newest attempts alone no longer reach
        the limit, that is a cool-off after the attempt at which, newest first, they reach it.
        """
        limit = get_failure_limit(request, credentials)
        cool_off = get_cool_off(request)
        until = timezone.now()
        if cool_off is None:
            return until
        for attempts in self.get_user_attempts(request, credentials):
            total = 0
            newest_first = attempts.order_by("-attempt_time")
            for moment, failures in newest_first.values_list(
                "attempt_time", "failures_since_start"
            ):
                total += failures
                if total >= limit:
                    until = max(until, moment + cool_off)
                    break
        return until


def retry_after(request: HttpRequest) -> int:
    """Whole seconds until this locked-out request's username and address may try again."""
    handler = AxesProxyHandler.get_implementation()
    credentials = getattr(request, "axes_credentials", None)
    until = handler.locked_until(request, credentials)  # type: ignore[attr-defined]
    return max(1, math.ceil((until - timezone.now()).total_seconds()))


def too_many_attempts() -> ApiError:
    # The wait is in Retry-After; the body is the same for everyone locked out, known or not.
    return ApiError(429, "too_many_attempts", "Too many failed sign-in attempts. Try again later.")


def lockout_response(request: HttpRequest, *_ignored: Any) -> HttpResponse:
    """AXES_LOCKOUT_CALLABLE: 429 with Retry-After, in the envelope or as the sign-in page.

    axes calls it with (request, response, credentials), or (request, credentials) from its
    async middleware, so the credentials are read from the request, where axes puts them too.
    """
    seconds = retry_after(request)
    response: HttpResponse
    if request.path.startswith(API_PREFIX):
        response = JsonResponse(too_many_attempts().body(), status=429)
    else:
        from aiplane.ui import login_locked_out

        response = login_locked_out(request, seconds)
    response["Retry-After"] = str(seconds)
    return response
