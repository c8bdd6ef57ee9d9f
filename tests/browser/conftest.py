"""Browser tests: the real ASGI app on a loopback port, driven by Debian's Chromium via Playwright.

Fixtures:
    aiplane_server  (session) the app under uvicorn in a background thread; `.url`, `.app`
    browser         (package) a headless Chromium (no Playwright download: /usr/bin/chromium);
                    every context it opens reports Content-Security-Policy violations, and a
                    test during which any page had one fails
    page            a fresh browser context and page at 1280x800, English Accept-Language
    sign_in         sign_in(page, username, password=PASSWORD): the /login/ form, then /tokens/
    screenshot      screenshot(page, name, widths=WIDTHS): full-page PNGs at 1280 and 390 px
                    wide in var/screenshots/<name>-<width>.png

Browser tests are plain sync functions (Playwright's sync API refuses to run inside an asyncio
loop) marked `browser` and `django_db(transaction=True)`: the server thread reads the same SQLite
file, so the data a test writes must be committed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from gateway.admin import services
from tests.support.browser import SimBackend
from tests.support.factories import PASSWORD

CHROMIUM = os.environ.get("AIPLANE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"
WIDTHS = ((1280, 800), (390, 844))


@dataclass(frozen=True)
class LiveServer:
    url: str
    app: Any


def _build_app() -> Any:
    """A fresh ASGI app, so its middleware sees this fixture's settings.

    The project's own assembly (`aiplane.wiring.build_application`, what `aiplane.asgi` serves)
    when it imports; plain Django otherwise.
    """
    from django.core.asgi import get_asgi_application

    django_app = get_asgi_application()
    try:
        from aiplane.wiring import build_application
    except ImportError:
        return django_app
    return build_application(django_app)


def _stop_runtime(app: Any) -> None:
    """Close the gateway's client sessions on its own loop (lifespan is off in this server)."""
    runtime = getattr(app, "runtime", None)
    loop = getattr(runtime, "loop", None)
    if runtime is None or loop is None or loop.is_closed() or not runtime.started:
        return
    with contextlib.suppress(Exception):
        asyncio.run_coroutine_threadsafe(runtime.stop(), loop).result(timeout=10)


@pytest.fixture(scope="package")  # its gateway runtime must not outlive the browser tests
def aiplane_server(django_db_setup: None) -> Iterator[LiveServer]:
    import uvicorn

    # Serve static files straight from static/ (no collectstatic in a test run), re-read on change.
    saved = {
        name: getattr(settings, name, None)
        for name in ("WHITENOISE_USE_FINDERS", "WHITENOISE_AUTOREFRESH")
    }
    settings.WHITENOISE_USE_FINDERS = True
    settings.WHITENOISE_AUTOREFRESH = True
    app = _build_app()

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, lifespan="off", log_level="warning", access_log=False
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=lambda: asyncio.run(server.serve(sockets=[sock])), name="aiplane-server", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield LiveServer(url=f"http://127.0.0.1:{port}", app=app)
    finally:
        _stop_runtime(app)
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        for name, value in saved.items():
            if value is None:
                with contextlib.suppress(AttributeError):
                    delattr(settings, name)
            else:
                setattr(settings, name, value)


# Chromium reports a refused inline script, style or handler with a console message that starts
# "Refused to ..."; the securitypolicyviolation event also catches what it reports otherwise.
CSP_WATCH = """
document.addEventListener("securitypolicyviolation", (event) => {
  console.error(`CSP violation: ${event.effectiveDirective} refused ${event.blockedURI || "inline"}`
    + ` at ${event.sourceFile || event.documentURI}:${event.lineNumber}`);
});
"""


class WatchedBrowser:
    """The Playwright browser, whose every new context collects its pages' CSP violations."""

    def __init__(self, browser: Any) -> None:
        self._browser = browser
        self.violations: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._browser, name)

    def new_context(self, **options: Any) -> Any:
        context = self._browser.new_context(**options)
        context.add_init_script(script=CSP_WATCH)
        context.on("console", self._on_console)
        return context

    def _on_console(self, message: Any) -> None:
        text = message.text
        if text.startswith("CSP violation") or "Refused to" in text:
            where = message.page.url if message.page is not None else "?"
            self.violations.append(f"{where}: {text}")


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    if shutil.which(CHROMIUM) is None:
        reason = f"Chromium is not installed at {CHROMIUM} (apt-get install -y chromium)"
        if os.environ.get("CI"):
            pytest.fail(reason)  # CI installs it first: a missing browser is a broken run there
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop marked running on this thread, so Django would
    # refuse the tests' own ORM calls; they are not in async code, and only while the browser lives.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    playwright = sync_playwright().start()
    chromium = playwright.chromium.launch(
        executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
    )
    try:
        yield WatchedBrowser(chromium)
    finally:
        chromium.close()
        playwright.stop()
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture(autouse=True)
def _no_content_security_violations(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail any browser test during which a page broke the Content-Security-Policy.

    Set up before the test's pages and torn down after them, so it sees what their last
    moments reported too.
    """
    if "browser" not in request.fixturenames:
        yield
        return
    watched = request.getfixturevalue("browser")
    watched.violations.clear()
    yield
    assert not watched.violations, f"Content-Security-Policy violations: {watched.violations}"


@pytest.fixture
def page(browser: Any, aiplane_server: LiveServer) -> Iterator[Any]:
    context = browser.new_context(
        base_url=aiplane_server.url,
        viewport={"width": 1280, "height": 800},
        locale="en-US",
    )
    context.set_default_timeout(10_000)
    the_page = context.new_page()
    errors: list[str] = []
    the_page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        yield the_page
    finally:
        context.close()
    assert not errors, f"uncaught errors in the page: {errors}"


@pytest.fixture
def sign_in() -> Callable[..., None]:
    def sign_in_as(page: Any, username: str, password: str = PASSWORD) -> None:
        page.goto("/login/")
        page.locator("#id_username").fill(username)
        page.locator("#id_password").fill(password)
        page.locator("form[action='/login/'] button[type=submit]").click()
        page.wait_for_url("**/tokens/")

    return sign_in_as


@pytest.fixture
def screenshot() -> Callable[..., list[Path]]:
    """Full-page PNGs of the current page at desktop and phone widths, for a human to look at."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(page: Any, name: str, widths: tuple[tuple[int, int], ...] = WIDTHS) -> list[Path]:
        before = page.viewport_size
        paths = []
        for width, height in widths:
            page.set_viewport_size({"width": width, "height": height})
            path = SCREENSHOTS / f"{name}-{width}.png"
            page.screenshot(path=str(path), full_page=True)
            paths.append(path)
        if before:
            page.set_viewport_size(before)
        return paths

    return take


# --- gateway state shared by the session's server ---------------------------------------------


@pytest.fixture(autouse=True)
def _gateway_state_is_reset(request: pytest.FixtureRequest) -> Iterator[None]:
    """The server outlives each test's database: hand its runtime the defaults again afterwards.

    Flushing the tables sends no signal, so backends, pools and settings a test applied would
    otherwise stay live in the session's gateway for the tests after it; nor would the live
    queue's list of recent dispatches forget them.
    """
    yield
    if "aiplane_server" not in request.fixturenames:
        return
    from aiplane.catalog import CATALOG, settings_update
    from gateway.models import Backend, Pool

    Pool.objects.all().delete()
    Backend.objects.all().delete()
    services.apply_topology()
    settings_update(values={spec.key: spec.default for spec in CATALOG})
    # The live queue's last dispatches belong to the test that made them.
    app = request.getfixturevalue("aiplane_server").app
    runtime = getattr(app, "runtime", None)
    if runtime is not None:
        runtime.metrics.recent.clear()
    # Activity records are written up to a second after their request: write this test's now
    # and drop them, so none lands in the next test's counts.
    gateway_app = getattr(app, "gateway", None)
    if runtime is not None and runtime.loop is not None and gateway_app is not None:
        asyncio.run_coroutine_threadsafe(gateway_app.recorder.flush(), runtime.loop).result(10)
    from gateway.models import ActivityRecord

    ActivityRecord.objects.all().delete()


@pytest.fixture
def german_carol(carol: Any) -> Any:
    """carol, the administrator, with German as her UI language."""
    from accounts.models import UserProfile

    UserProfile.objects.update_or_create(user=carol, defaults={"language": "de"})
    return carol


@pytest.fixture
def make_sim_backend(aiplane_server: LiveServer) -> Iterator[Callable[..., SimBackend]]:
    """Start a simulated engine and register it (one slot unless told) in the `chat` pool."""

    from gateway.sim.config import SimConfig
    from gateway.sim.server import SimServer

    started: list[Any] = []

    def start(
        name: str = "sim-1",
        *,
        max_inflight: int = 1,
        models: tuple[str, ...] = ("sim-small",),
        **config: Any,
    ) -> SimBackend:
        engine = SimServer(SimConfig(models=list(models), **config))
        engine.start()
        started.append(engine)
        services.backend_save(
            data={
                "name": name,
                "base_url": engine.url + "/v1",
                "max_inflight": max_inflight,
                "models": list(models),
            }
        )
        services.pool_save(
            data={"name": "chat", "kind": "chat", "backends": [name]}, known_groups=set()
        )
        return SimBackend(engine=engine, name=name, pool="chat")

    yield start
    for engine in started:
        engine.stop()
