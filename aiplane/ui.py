"""Browser pages: sign-in and sign-out, the page shells, and the JS message dictionary.

Pages are server-rendered shells; each page's script talks to /api/v0 itself. Every page needs a
session (else a redirect to /login/), and administration pages an administrator (else a 403 page).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any

from csp.decorators import csp_update
from django.conf import settings
from django.contrib.auth import authenticate, login, logout
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect, ensure_csrf_cookie
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from aiplane import audit, i18n

View = Callable[..., HttpResponse]


def is_admin(user: Any) -> bool:
    """Whether the signed-in person administers aiplane (the RBAC resolver decides)."""
    if user is None or not getattr(user, "is_authenticated", False):
        return False
    try:
        from accounts.rbac import resolve
    except ImportError:  # a checkout without the resolver: superusers only
        return bool(getattr(user, "is_superuser", False))
    return bool(getattr(resolve(user), "is_admin", False))


def ui_context(request: HttpRequest) -> dict[str, Any]:
    """What the base layout needs; cached on the request so a page resolves it once."""
    cached = getattr(request, "_aiplane_ui", None)
    if cached is None:
        lang = i18n.language_for(request)
        cached = {
            "lang": lang,
            "is_admin": is_admin(getattr(request, "user", None)),
            "languages": [
                {
                    "code": code,
                    "autonym": i18n.AUTONYMS[code],
                    # The name in the page's language too, unless it is the same word.
                    "name": i18n.translate(lang, f"language-name-{code}"),
                }
                for code in i18n.LANGUAGES
            ],
            "i18n_version": i18n.catalog_version(),
        }
        request._aiplane_ui = cached  # type: ignore[attr-defined]
    return cached


def page(request: HttpRequest, template: str, status: int = 200, **extra: Any) -> HttpResponse:
    return render(request, template, {**ui_context(request), **extra}, status=status)


def admin_required(view: View) -> View:
    """A session, and administrator rights; a signed-in non-administrator gets the 403 page."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not is_admin(request.user):
            return page(request, "403.html", status=403, title_id="forbidden-title")
        return view(request, *args, **kwargs)

    return login_required(wrapped)


@dataclass(frozen=True)
class Shell:
    """One page: its template, the Fluent id of its title, the nav entry it highlights."""

    template: str
    title_id: str
    nav: str
    admin: bool = False
    # What the page's script needs from the server's own lists, so the two cannot drift.
    context: Callable[[], dict[str, Any]] | None = None


def _audit_context() -> dict[str, Any]:
    return {"audit_actions": list(audit.ACTIONS)}


SHELLS: dict[str, Shell] = {
    "tokens": Shell("tokens.html", "tokens-title", "tokens"),
    "playground": Shell("playground.html", "playground-title", "playground"),
    "account": Shell("account.html", "account-title", "account"),
    "admin-settings": Shell("admin/settings.html", "admin-settings-title", "admin-settings", True),
    "admin-groups": Shell("admin/groups.html", "admin-groups-title", "admin-groups", True),
    "admin-users": Shell("admin/users.html", "admin-users-title", "admin-users", True),
    "admin-tokens": Shell("admin/tokens.html", "admin-tokens-title", "admin-tokens", True),
    "admin-backends": Shell("admin/backends.html", "backends-title", "admin-backends", True),
    "admin-models": Shell("admin/models.html", "models-title", "admin-models", True),
    "admin-queue": Shell("admin/queue.html", "queue-title", "admin-queue", True),
    "admin-activity": Shell("admin/activity.html", "activity-title", "admin-activity", True),
    "admin-audit": Shell(
        "admin/audit.html", "audit-title", "admin-audit", True, context=_audit_context
    ),
    "admin-usage": Shell("admin/usage.html", "usage-title", "admin-usage", True),
}


def shell_view(name: str) -> View:
    shell = SHELLS[name]

    @require_safe
    @ensure_csrf_cookie
    @never_cache
    def view(request: HttpRequest) -> HttpResponse:
        extra = shell.context() if shell.context is not None else {}
        return page(request, shell.template, title_id=shell.title_id, nav=shell.nav, **extra)

    view.__name__ = f"{name.replace('-', '_')}_page"
    return admin_required(view) if shell.admin else login_required(view)


# Swagger UI's stylesheet draws its icons as data: images; only this page may show them.
@csp_update({"img-src": ["data:"]})
@require_safe
@ensure_csrf_cookie  # "Try it out" sends it back on writes, as the pages' scripts do
def api_reference(request: HttpRequest) -> HttpResponse:
    """The OpenAPI document of /api/v0 in Swagger UI; as public as the document itself."""
    return page(
        request, "api_reference.html", title_id="api-reference-title", schema_url=reverse("openapi")
    )


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    return redirect("tokens" if request.user.is_authenticated else "login")


def _next_url(request: HttpRequest) -> str:
    wanted = request.POST.get("next") or request.GET.get("next") or ""
    safe = url_has_allowed_host_and_scheme(
        wanted, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return wanted if safe and wanted.startswith("/") else "/tokens/"


# A username longer than the column, or with a NUL (which PostgreSQL cannot compare), names no
# account: refused like a wrong password, without asking the database.
USERNAME_MAX_LENGTH = 150


def _login_page(request: HttpRequest, *, error_id: str, status: int, **extra: Any) -> HttpResponse:
    return page(
        request,
        "login.html",
        status=status,
        title_id="login-title",
        error_id=error_id,
        username=request.POST.get("username", "").strip(),
        signed_out=request.GET.get("signed_out") == "1",
        next=request.POST.get("next") or request.GET.get("next") or "",
        **extra,
    )


def login_locked_out(request: HttpRequest, seconds: int) -> HttpResponse:
    """The sign-in page saying how long a throttled username or address has to wait (429)."""
    minutes = max(1, -(-seconds // 60))
    return _login_page(request, error_id="login-too-many", status=429, minutes=minutes)


@require_http_methods(["GET", "HEAD", "POST"])
@csrf_protect
@never_cache
def login_view(request: HttpRequest) -> HttpResponse:
    """Password sign-in into a Django session; the error is shown in the page's language.

    A throttled sign-in (accounts.throttle) is answered by axes' middleware instead, with
    login_locked_out.
    """
    if request.method in ("GET", "HEAD") and request.user.is_authenticated:
        return HttpResponseRedirect(_next_url(request))
    error_id = ""
    if request.method == "POST":
        username = request.POST.get("username", "").strip()
        password = request.POST.get("password", "")
        if not username or not password:
            error_id = "login-missing"
        elif len(username) > USERNAME_MAX_LENGTH or "\x00" in username:
            error_id = "login-failed"
        else:
            user = authenticate(request, username=username, password=password)
            if user is None:
                error_id = "login-failed"
            else:
                login(request, user)
                return HttpResponseRedirect(_next_url(request))
    return _login_page(request, error_id=error_id, status=400 if error_id else 200)


@require_POST
@csrf_protect
def logout_view(request: HttpRequest) -> HttpResponse:
    logout(request)
    return HttpResponseRedirect(f"{settings.LOGIN_URL}?signed_out=1")


@require_safe
def i18n_script(request: HttpRequest, lang: str) -> HttpResponse:
    """The message dictionary of one language as a script; immutable when asked by version."""
    if lang not in i18n.LANGUAGES:
        raise Http404("unknown language")
    response = HttpResponse(
        i18n.catalog_script(lang), content_type="text/javascript; charset=utf-8"
    )
    version = i18n.catalog_version()
    response["ETag"] = f'"{lang}-{version}"'
    if request.GET.get("v") == version:
        response["Cache-Control"] = "public, max-age=31536000, immutable"
    else:
        response["Cache-Control"] = "public, max-age=300"
    return response
