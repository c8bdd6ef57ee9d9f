"""The /v1 error hierarchy: each error knows its HTTP status, OpenAI type and code, and Fluent id.

Each also names the request's `outcome` for the activity record (None keeps the admission's).

GatewayError
├── BadRequest            400 invalid_request_error
│   └── BadHint           400 a malformed priority hint
├── Unauthorized          401 authentication_error
├── Forbidden             403 permission_error (model not allowed for this caller)
├── ModelNotFound         404 model_not_found
├── NotFound              404 unknown /v1 path
├── MethodNotAllowed      405
├── TooManyRequests       429 a bounded queue refused the request (Retry-After)
│   └── AllowanceExceeded 429 over the caller's allowance (gateway/allowances/counters.py)
├── EngineRefusal         4xx the backend refused the request itself; its status and message
├── UpstreamError         502 the backend failed or answered garbage (its message kept)
│   ├── BackendAuthFailed 502 the backend refused the gateway's own credentials (401/403)
│   ├── BackendOverloaded 503 the backend's own queue is full (Retry-After)
│   └── UpstreamTimeout   504 the backend sent nothing within the first-byte timeout
├── CapacityTimeout       503 no slot within the wait budget (Retry-After)
├── NoHealthyBackend      503 every backend for the model is down or disabled (Retry-After)
├── Unavailable           503 the model is no longer served to this caller
├── ShuttingDown          503 this gateway process stops: it was still waiting or running
└── InternalError         500 anything unexpected
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from aiplane.envelope import error_body
from gateway.core.outcomes import Outcome

# An error quotes a client's value to say which one it means; past this many characters it says
# nothing more, and a 1 MB model name would come back whole.
ECHO_LIMIT = 200


def echoed(value: str, limit: int = ECHO_LIMIT) -> str:
    """A client's value as an error message quotes it: at most `limit` characters, and an
    ellipsis where it was cut."""
    return value if len(value) <= limit else value[:limit] + "..."


class GatewayError(Exception):
    status = 500
    type_ = "server_error"
    code = "internal_error"
    outcome: Outcome | None = Outcome.ERROR
    # More headers for the answer (the caller's remaining allowance), set where it is known.
    extra_headers: Sequence[tuple[bytes, bytes]] = ()

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        param: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.param = param
        self.retry_after = retry_after

    @property
    def message_id(self) -> str:
        """The Fluent id the browser uses to show this error in the person's language."""
        return "error-" + self.code.replace("_", "-")

    def body(self) -> bytes:
        return json.dumps(error_body(self.message, self.type_, self.code, self.param)).encode()

    def headers(self) -> list[tuple[bytes, bytes]]:
        h = [(b"content-type", b"application/json")]
        if self.retry_after is not None:
            h.append((b"retry-after", str(max(1, round(self.retry_after))).encode()))
        if self.extra_headers:
            h.extend(self.extra_headers)
        return h


class BadRequest(GatewayError):
    status, type_, code = 400, "invalid_request_error", "invalid_request"
    outcome = Outcome.REFUSED


class BadHint(BadRequest):
    code = "invalid_priority_hint"


class BadMaxWait(BadRequest):
    code = "invalid_max_wait"


class Unauthorized(GatewayError):
    status, type_, code = 401, "authentication_error", "invalid_api_key"
    outcome = Outcome.REFUSED


class Forbidden(GatewayError):
    status, type_, code = 403, "permission_error", "model_not_allowed"
    outcome = Outcome.REFUSED


class ModelNotFound(GatewayError):
    status, type_, code = 404, "invalid_request_error", "model_not_found"
    outcome = Outcome.REFUSED


class NotFound(GatewayError):
    status, type_, code = 404, "invalid_request_error", "not_found"
    outcome = Outcome.REFUSED


class MethodNotAllowed(GatewayError):
    status, type_, code = 405, "invalid_request_error", "method_not_allowed"
    outcome = Outcome.REFUSED


class TooManyRequests(GatewayError):
    status, type_, code = 429, "rate_limit_error", "queue_full"
    outcome = Outcome.REJECTED


class EngineRefusal(GatewayError):
    """A backend's own 4xx (a prompt too long, a bad parameter): the caller's fault as the
    engine judged it, passed on with the engine's status and message in our envelope."""

    outcome = None  # it was admitted and answered; the admission's outcome stands

    def __init__(self, status: int, message: str, *, type_: str, code: str, param: str | None):
        super().__init__(message, code=code, param=param)
        self.status = status
        self.type_ = type_


class UpstreamError(GatewayError):
    status, type_, code = 502, "api_error", "upstream_error"
    outcome = Outcome.UPSTREAM_ERROR


class BackendAuthFailed(UpstreamError):
    code = "backend_auth_failed"


class BackendOverloaded(UpstreamError):
    status, code = 503, "backend_overloaded"


class UpstreamTimeout(UpstreamError):
    status, code = 504, "upstream_timeout"


class CapacityTimeout(GatewayError):
    status, type_, code = 503, "api_error", "capacity_timeout"
    outcome = Outcome.EXPIRED


class NoHealthyBackend(GatewayError):
    status, type_, code = 503, "api_error", "no_healthy_backend"
    outcome = Outcome.UNAVAILABLE


class Unavailable(GatewayError):
    status, type_, code = 503, "api_error", "no_backend_available"
    outcome = Outcome.UNAVAILABLE


class ShuttingDown(GatewayError):
    """The process was told to stop and its drain ended (a second SIGTERM, or the drain
    timeout) before this request had its answer; another process may serve it."""

    status, type_, code = 503, "api_error", "shutting_down"
    outcome = Outcome.UNAVAILABLE


class InternalError(GatewayError):
    status, type_, code = 500, "server_error", "internal_error"
