"""What building the /v1 app sets up before any server runs."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator

import pytest

from gateway.dataplane.app import GatewayApp
from gateway.dataplane.relay import DropConnection
from gateway.runtime.registry import Topology
from gateway.runtime.runtime import Runtime

SERVER_LOGGERS = ("uvicorn.error", "daphne.server")


async def no_caller(token: str) -> None:
    return None


@pytest.fixture
def bare_server_loggers() -> Iterator[list[logging.Logger]]:
    """The servers' loggers without any filter, as in a process that built nothing yet."""
    loggers = [logging.getLogger(name) for name in SERVER_LOGGERS]
    kept = [list(logger.filters) for logger in loggers]
    for logger in loggers:
        logger.filters.clear()
    yield loggers
    for logger, filters in zip(loggers, kept, strict=True):
        logger.filters[:] = filters


def a_dropped_connection_logged(name: str) -> logging.LogRecord:
    """What a server logs when the app raised DropConnection: the error, with its traceback."""
    try:
        raise DropConnection("the client stopped reading its answer")
    except DropConnection:
        exc_info = sys.exc_info()
    return logging.LogRecord(
        name, logging.ERROR, __file__, 1, "Exception in ASGI app", (), exc_info
    )


def test_building_the_app_keeps_dropped_connections_out_of_the_servers_tracebacks(
    bare_server_loggers: list[logging.Logger],
) -> None:
    # Not started: no server and no runtime start-up are needed for the filter to be on.
    rt = Runtime(load_topology=lambda: Topology([], []), load_settings=dict, background=False)
    GatewayApp(rt, caller_for_token=no_caller)
    for logger in bare_server_loggers:
        assert not logger.filter(a_dropped_connection_logged(logger.name))
        other = logging.LogRecord(logger.name, logging.ERROR, __file__, 1, "boom", (), None)
        assert logger.filter(other)


def test_building_the_app_twice_installs_the_filter_once(
    bare_server_loggers: list[logging.Logger],
) -> None:
    rt = Runtime(load_topology=lambda: Topology([], []), load_settings=dict, background=False)
    GatewayApp(rt, caller_for_token=no_caller)
    GatewayApp(rt, caller_for_token=no_caller)
    assert [len(logger.filters) for logger in bare_server_loggers] == [1, 1]
