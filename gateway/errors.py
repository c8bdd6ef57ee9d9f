"""The /v1 error hierarchy: each error knows its HTTP status, OpenAI type and code, and Fluent id.

GatewayError
├── BadRequest           400 invalid_request_error
│   └── BadHint          400 a malformed priority hint
├── Unauthorized         401 authentication_error
├── Forbidden            403 permission_error (model not allowed for this caller)
├── ModelNotFound        404 model_not_found
├── NotFound             404 unknown /v1 path
├── MethodNotAllowed     405
├── TooManyRequests      429 a bounded queue refused the request (Retry-After)
├── UpstreamError        502 the backend failed or answered garbage
├── CapacityTimeout      503 no slot within the wait budget (Retry-After)
├── Unavailable          503 no backend is up for the model, or no longer for this caller
└── InternalError        500 anything unexpected
"""

from __future__ import annotations

import json

from aiplane.envelope import error_body


class GatewayError(Exception):
    status = 500
    type_ = "server_error"
    code = "internal_error"

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
        return h


class BadRequest(GatewayError):
    status, type_, code = 400, "invalid_request_error", "invalid_request"


class BadHint(BadRequest):
    code = "invalid_priority_hint"


class Unauthorized(GatewayError):
    status, type_, code = 401, "authentication_error", "invalid_api_key"


class Forbidden(GatewayError):
    status, type_, code = 403, "permission_error", "model_not_allowed"


class ModelNotFound(GatewayError):
    status, type_, code = 404, "invalid_request_error", "model_not_found"


class NotFound(GatewayError):
    status, type_, code = 404, "invalid_request_error", "not_found"


class MethodNotAllowed(GatewayError):
    status, type_, code = 405, "invalid_request_error", "method_not_allowed"


class TooManyRequests(GatewayError):
    status, type_, code = 429, "rate_limit_error", "queue_full"


class UpstreamError(GatewayError):
    status, type_, code = 502, "api_error", "upstream_error"


class CapacityTimeout(GatewayError):
    status, type_, code = 503, "api_error", "capacity_timeout"


class Unavailable(GatewayError):
    status, type_, code = 503, "api_error", "no_backend_available"


class InternalError(GatewayError):
    status, type_, code = 500, "server_error", "internal_error"
