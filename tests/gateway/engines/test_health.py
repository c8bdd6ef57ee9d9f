"""Backend health: the HTTP probe and the hysteresis of the tracker."""

from __future__ import annotations

import httpx
import pytest

from gateway.engines.health import HealthTracker, health_url, probe_health

BASE = "http://engine.test:8000/v1"


async def probe(
    handler: httpx.MockTransport, health_path: str = "/health", api_key: str | None = None
) -> bool:
    async with httpx.AsyncClient(transport=handler) as client:
        return await probe_health(client, BASE, api_key, health_path)


def answering(status: int, seen: list[httpx.Request] | None = None) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        return httpx.Response(status, json={})

    return httpx.MockTransport(handler)


def raising(error: Exception) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        raise error

    return httpx.MockTransport(handler)


@pytest.mark.parametrize(
    ("health_path", "url"),
    [
        ("/health", "http://engine.test:8000/health"),
        ("health", "http://engine.test:8000/health"),
        ("/v1/models", "http://engine.test:8000/v1/models"),
        ("", "http://engine.test:8000/v1/models"),
        ("  ", "http://engine.test:8000/v1/models"),
    ],
)
def test_the_health_path_is_relative_to_the_engine_root(health_path: str, url: str) -> None:
    assert health_url(BASE, health_path) == url


@pytest.mark.parametrize("status", [200, 204])
async def test_a_2xx_answer_is_healthy(status: int) -> None:
    assert await probe(answering(status)) is True


@pytest.mark.parametrize("status", [301, 401, 404, 500, 503])
async def test_any_other_status_is_unhealthy(status: int) -> None:
    assert await probe(answering(status)) is False


@pytest.mark.parametrize(
    "error",
    [httpx.ConnectTimeout("slow"), httpx.ReadTimeout("slow"), httpx.ConnectError("refused")],
)
async def test_a_timeout_or_refusal_is_unhealthy(error: Exception) -> None:
    assert await probe(raising(error)) is False


async def test_the_probe_hits_the_path_with_the_backend_key() -> None:
    seen: list[httpx.Request] = []
    assert await probe(answering(200, seen), "/health", "sk-backend") is True
    assert [str(r.url) for r in seen] == ["http://engine.test:8000/health"]
    assert seen[0].headers["authorization"] == "Bearer sk-backend"


async def test_an_empty_path_probes_the_models_list_without_a_key() -> None:
    seen: list[httpx.Request] = []
    assert await probe(answering(200, seen), "") is True
    assert [str(r.url) for r in seen] == ["http://engine.test:8000/v1/models"]
    assert "authorization" not in seen[0].headers


def answering_by_path(statuses: dict[str, int], seen: list[str]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        return httpx.Response(statuses.get(request.url.path, 404), json={})

    return httpx.MockTransport(handler)


@pytest.mark.parametrize("missing", [404, 405, 501])
async def test_an_engine_without_the_health_path_is_up_when_its_models_list_answers(
    missing: int,
) -> None:
    # llama-cpp-python's OpenAI server answers /health with 404.
    seen: list[str] = []
    handler = answering_by_path({"/health": missing, "/v1/models": 200}, seen)
    assert await probe(handler) is True
    assert seen == ["/health", "/v1/models"]


async def test_an_engine_without_the_health_path_whose_models_list_fails_is_down() -> None:
    seen: list[str] = []
    assert await probe(answering_by_path({"/health": 404, "/v1/models": 500}, seen)) is False
    assert seen == ["/health", "/v1/models"]


async def test_a_failing_health_path_is_not_second_guessed_by_the_models_list() -> None:
    seen: list[str] = []
    assert await probe(answering_by_path({"/health": 503, "/v1/models": 200}, seen)) is False
    assert seen == ["/health"]


async def test_the_probe_asks_for_a_short_timeout() -> None:
    seen: list[httpx.Request] = []
    await probe(answering(200, seen))
    timeouts = seen[0].extensions["timeout"]
    assert all(0 < value <= 2.0 for value in timeouts.values())


# --- hysteresis ---------------------------------------------------------------------------


def test_an_unknown_backend_is_healthy() -> None:
    assert HealthTracker().is_healthy("never-probed") is True


@pytest.mark.parametrize(
    ("results", "changes", "healthy"),
    [
        pytest.param([False], [False], True, id="one failure is a blip"),
        pytest.param([False, False], [False, True], False, id="two failures mark it down"),
        pytest.param([False, True, False], [False, False, False], True,
                     id="a success between failures resets the run"),
        pytest.param([False, False, False], [False, True, False], False,
                     id="further failures change nothing"),
        pytest.param([False, False, True], [False, True, True], True,
                     id="one success brings it back"),
        pytest.param([True, True], [False, False], True, id="successes on a healthy backend"),
    ],
)  # fmt: skip
def test_default_hysteresis(results: list[bool], changes: list[bool], healthy: bool) -> None:
    tracker = HealthTracker()
    assert [tracker.record("a", ok) for ok in results] == changes
    assert tracker.is_healthy("a") is healthy


def test_configured_thresholds_need_longer_runs_both_ways() -> None:
    tracker = HealthTracker(unhealthy_after=3, healthy_after=2)
    sequence = [False, False, False, True, False, True, True]
    changes = [tracker.record("a", ok) for ok in sequence]
    assert changes == [False, False, True, False, False, False, True]
    assert tracker.is_healthy("a") is True


def test_backends_are_tracked_independently() -> None:
    tracker = HealthTracker(unhealthy_after=1)
    assert tracker.record("a", False) is True
    assert (tracker.is_healthy("a"), tracker.is_healthy("b")) == (False, True)


def test_a_forgotten_backend_starts_fresh() -> None:
    tracker = HealthTracker(unhealthy_after=1)
    tracker.record("a", False)
    tracker.forget("a")
    assert tracker.is_healthy("a") is True
    tracker.forget("never-seen")


@pytest.mark.parametrize(("down", "up"), [(0, 1), (1, 0), (-1, 1)])
def test_thresholds_below_one_are_refused(down: int, up: int) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        HealthTracker(unhealthy_after=down, healthy_after=up)
