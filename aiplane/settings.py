"""Project settings: typed environment helpers, SQLite by default, PostgreSQL via DATABASE_URL."""

from __future__ import annotations

import ipaddress
import os
import secrets
from datetime import timedelta
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return raw.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return default if raw in (None, "") else int(raw)


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    return default if raw in (None, "") else float(raw)


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


DATA_DIR = Path(env_str("AIPLANE_DATA_DIR", str(BASE_DIR / "var")))
DATA_DIR.mkdir(parents=True, exist_ok=True)


def _secret_key() -> str:
    """A stable per-installation key: from the environment, else generated once into DATA_DIR."""
    from_env = os.environ.get("AIPLANE_SECRET_KEY")
    if from_env:
        return from_env
    path = DATA_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = env_bool("AIPLANE_DEBUG", False)
ALLOWED_HOSTS = env_list("AIPLANE_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("AIPLANE_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI's files, served from static (no CDN)
    "channels",
    "django_prometheus",
    "axes",
    "csp",
    "aiplane",
    "accounts",
    "gateway",
]

MIDDLEWARE = [
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Turns a sign-in that django-axes refused into accounts.throttle.lockout_response.
    "axes.middleware.AxesMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]

ROOT_URLCONF = "aiplane.urls"
ASGI_APPLICATION = "aiplane.asgi.application"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{DATA_DIR / 'aiplane.sqlite3'}"),
        conn_max_age=env_int("AIPLANE_DB_CONN_MAX_AGE", 0),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file, not memory, so the gateway server thread in integration tests sees the same data.
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / "test.sqlite3")}
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# django-axes first: it refuses a locked-out sign-in before the password hasher runs.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]

# Sign-in throttling (accounts/throttle.py): failures lock the username from any address and
# the address for any username, until the cool-off has passed since the failures that locked it.
AXES_FAILURE_LIMIT = env_int("AIPLANE_LOGIN_FAILURE_LIMIT", 10)
AXES_COOLOFF_TIME = timedelta(seconds=env_int("AIPLANE_LOGIN_COOLOFF_SECS", 900))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
# Attempts while locked out are neither stored nor prolong the lockout: the rows stay bounded.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_DISABLE_ACCESS_LOG = True  # no row per successful sign-in, kept forever
AXES_ENABLE_ADMIN = False
AXES_HANDLER = "accounts.throttle.LoginAttempts"
AXES_LOCKOUT_CALLABLE = "accounts.throttle.lockout_response"
AXES_CLIENT_IP_CALLABLE = "accounts.throttle.client_address"
# Reverse proxies (addresses or networks) whose X-Forwarded-For names the client's address;
# parsed here so that a typo stops the start, not every sign-in.
AIPLANE_TRUSTED_PROXIES = [
    str(ipaddress.ip_network(entry, strict=False))
    for entry in env_list("AIPLANE_TRUSTED_PROXIES", [])
]

# Django's four checks; a refusal lists every reason, localized (accounts/services.py
# password_reasons, static/js/passwords.js). Only passwords people choose are checked:
# ensure_admin and the demo set theirs directly.
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = False  # UI text comes from Fluent catalogs, not gettext
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = DATA_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
WHITENOISE_USE_FINDERS = True  # serve straight from static/: no collectstatic step to forget
STATICFILES_DIRS = [BASE_DIR / "static"]

LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/login/"

# Every page, and every other answer of the Django side, may load only from its own origin: no
# inline script, style attribute, event handler or javascript: URL, so an injected fragment of
# markup cannot run or restyle anything. 'self' covers same-origin ws:// and wss:// (CSP 3).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # the page scripts read it to send X-CSRFToken
CSRF_FAILURE_VIEW = "accounts.api_errors.csrf_failure"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["accounts.api_auth.SessionAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["aiplane.parsers.JSONParser"],
    "EXCEPTION_HANDLER": "accounts.api_errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "aiplane.schema.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "aiplane administration and personal API",
    "DESCRIPTION": "The /api/v0 REST API of aiplane. Errors use the OpenAI error envelope.",
    "VERSION": "0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": r"/api/v0",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "aiplane.api_input.closed_bodies",
    ],
    "ENUM_NAME_OVERRIDES": {
        "PriorityEnum": ["low", "medium", "high"],
        "PoolKindEnum": ["chat", "embedding"],
        "SettingKindEnum": ["bool", "int", "choice"],
    },
    # The <name:...> segment of aiplane/converters.py (tests/accounts/test_openapi.py checks).
    "PATH_CONVERTER_OVERRIDES": {
        "name": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$"}
    },
}

CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# Operator knobs that are process-wide (not in the settings catalog).
AIPLANE_CALLER_CACHE_TTL = float(env_str("AIPLANE_CALLER_CACHE_TTL", "30"))
AIPLANE_ENCRYPTION_KEY = env_str("AIPLANE_ENCRYPTION_KEY", "")
AIPLANE_METRICS_TOKEN = env_str("AIPLANE_METRICS_TOKEN", "")  # empty: /metrics is open
# Shared admission and change propagation over several processes; empty: one process, in memory.
AIPLANE_REDIS_URL = env_str("AIPLANE_REDIS_URL", "")
AIPLANE_REDIS_PREFIX = env_str("AIPLANE_REDIS_PREFIX", "aiplane:")
# How soon a dead process's slots come back (renewed every third of it while its requests run).
AIPLANE_REDIS_LEASE_SECS = float(env_str("AIPLANE_REDIS_LEASE_SECS", "3"))

# How long a client may take to send a request, and how many connections a process holds
# (gateway/dataplane/server_protocol.py; `manage.py serve` applies them, daphne only in part). A
# request's headers are a few hundred bytes: 10 s is generous on any link. A body may pause for 30 s
# (a mobile link) and take 300 s in all (Node's total request timeout; 50 MB at 1.3 Mbit/s).
AIPLANE_HEADER_TIMEOUT = env_float("AIPLANE_HEADER_TIMEOUT", 10.0)
AIPLANE_BODY_IDLE_TIMEOUT = env_float("AIPLANE_BODY_IDLE_TIMEOUT", 30.0)
AIPLANE_BODY_TIMEOUT = env_float("AIPLANE_BODY_TIMEOUT", 300.0)
# Above the idle expiry of the clients' own pools (httpx and the OpenAI SDK 5 s, aiohttp 15 s),
# so a client never sends into a connection the server is closing; behind a proxy, set it above
# the proxy's upstream keep-alive (nginx: 60 s).
AIPLANE_KEEPALIVE_TIMEOUT = env_float("AIPLANE_KEEPALIVE_TIMEOUT", 20.0)
# A last guard for the process (files, memory), far above the queue's own bounds: every
# waiter, stream, kept-alive idle connection and websocket is one.
AIPLANE_MAX_CONNECTIONS = env_int("AIPLANE_MAX_CONNECTIONS", 2048)
# A SIGTERM drains (gateway/dataplane/drain.py): what runs and waits may take this long to
# finish (an agent's stream runs for minutes); the process keeps accepting for the grace first,
# while /readyz already says 503, so a balancer that polls it stops sending (Kubernetes: 5-10 s).
AIPLANE_DRAIN_TIMEOUT = env_float("AIPLANE_DRAIN_TIMEOUT", 600.0)
AIPLANE_DRAIN_GRACE = env_float("AIPLANE_DRAIN_GRACE", 0.0)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("AIPLANE_LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},  # health probes every few seconds are not news
        "axes": {"level": "WARNING"},  # failures and lockouts, not every clean-up it runs
    },
}
