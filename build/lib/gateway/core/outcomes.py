"""What happened to one request: the one vocabulary of the relay, /metrics and the activity API."""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    """A request's fate. The first five are the admission queue's (the `aiplane_admissions`
    counter counts them); the rest say how a request that was answered, or not, ended."""

    IMMEDIATE = "immediate"  # admitted at once and answered
    WAITED = "waited"  # admitted after waiting and answered
    EXPIRED = "expired"  # the wait budget ran out (503)
    CANCELLED = "cancelled"  # the client left before its answer started (499)
    REJECTED = "rejected"  # a bounded queue turned it away (429)
    REFUSED = "refused"  # a caller's own fault: bad token, body, hint or model (4xx)
    LIMITED = "limited"  # over its allowance: refused before admission (429)
    UNAVAILABLE = "unavailable"  # no usable backend for its model (503)
    UPSTREAM_ERROR = "upstream_error"  # the backend failed or answered garbage
    CLIENT_CLOSED = "client_closed"  # the client left, or stopped reading, mid-answer
    ERROR = "error"  # the gateway itself failed (500)


# The outcomes the admission queue itself reports, in the order /metrics lists them.
ADMISSION_OUTCOMES = (
    Outcome.IMMEDIATE,
    Outcome.WAITED,
    Outcome.EXPIRED,
    Outcome.CANCELLED,
    Outcome.REJECTED,
)

# The gateway said no: the reasons the usage views count refusals by, in the order they list them.
REFUSALS = (
    Outcome.REFUSED,
    Outcome.REJECTED,
    Outcome.EXPIRED,
    Outcome.UNAVAILABLE,
    Outcome.LIMITED,
)

# Outcomes whose record's queue_ms is a real time in the admission queue (admitted, or given up
# waiting); the others never queued, and their zero would pull the queue-wait percentiles down.
QUEUED = (
    Outcome.IMMEDIATE,
    Outcome.WAITED,
    Outcome.EXPIRED,
    Outcome.CANCELLED,
    Outcome.UPSTREAM_ERROR,
    Outcome.CLIENT_CLOSED,
)
