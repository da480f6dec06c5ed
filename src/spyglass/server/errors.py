"""Errors as the service sends them: a status code and ``{"error": "..."}``."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException


class ApiError(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers


def bad_request(message: str) -> ApiError:
    return ApiError(400, message)


def not_found(message: str) -> ApiError:
    return ApiError(404, message)


def _describe_validation(exc: RequestValidationError) -> str:
    parts = []
    for item in exc.errors():
        loc = ".".join(str(p) for p in item.get("loc", ()) if p not in ("query", "path", "body"))
        parts.append(f"{loc}: {item.get('msg')}" if loc else str(item.get("msg")))
    return "Invalid request: " + "; ".join(parts)


def install_error_handlers(app: FastAPI, *, validation_as_400: bool = True) -> None:
    """Every error of ``app`` answers ``{error}``; validation errors too unless the API says 422."""

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse({"error": exc.message}, status_code=exc.status, headers=exc.headers)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = "No such method" if exc.status_code == 404 else str(exc.detail)
        return JSONResponse({"error": message}, status_code=exc.status_code,
                            headers=getattr(exc, "headers", None))

    if validation_as_400:
        @app.exception_handler(RequestValidationError)
        async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
            return JSONResponse({"error": _describe_validation(exc)}, status_code=400)
