"""One error hierarchy for every host: what went wrong, in words a person can read.

No exception here carries the API key: messages are built from redacted URLs only.
"""

from __future__ import annotations


class SpyglassError(Exception):
    """Base of every error the client raises."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class TransportError(SpyglassError):
    """The request did not get an HTTP answer."""


class ConnectFailed(TransportError):
    """Nothing accepted the connection (server down, wrong address, refused)."""


class RequestTimeout(TransportError):
    """The server did not answer in time."""


class ConnectionDropped(TransportError):
    """The connection broke while the request or the response was under way."""


class ResponseFormatError(SpyglassError):
    """The server answered, but not with the JSON the API promises."""


class APIError(SpyglassError):
    """The server answered with an error status."""

    status: int

    def __init__(self, message: str, status: int, details: list[dict] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.details = details or []


class BadRequest(APIError):
    """400 or 422: the request's parameters are not acceptable (``details`` for 422)."""


class AuthenticationError(APIError):
    """401: the key is missing or unknown."""


class NoCredits(APIError):
    """402: the account has no credits left for this call."""


class Forbidden(APIError):
    """403: the account's plan does not allow this method."""


class NotFound(APIError):
    """404: no such resource (unknown id, no data for an address)."""


class RateLimited(APIError):
    """429: too many requests; ``retry_after`` seconds if the server said."""

    def __init__(self, message: str, status: int = 429, retry_after: float | None = None) -> None:
        super().__init__(message, status)
        self.retry_after = retry_after


class ServerError(APIError):
    """5xx: the server failed."""


_BY_STATUS: dict[int, type[APIError]] = {
    400: BadRequest,
    401: AuthenticationError,
    402: NoCredits,
    403: Forbidden,
    404: NotFound,
    422: BadRequest,
    429: RateLimited,
}


def error_class_for(status: int) -> type[APIError]:
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    return ServerError if status >= 500 else APIError
