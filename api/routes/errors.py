"""The service's error shape: every refusal is JSON ``{"error": <code>, "detail": <message>, ...}``."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

log = logging.getLogger("tableref.api")


class ApiError(Exception):
    """A refusal with an HTTP status, a stable machine code and a message naming the problem."""

    def __init__(self, status_code: int, code: str, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.status_code = status_code
        self.code = code
        self.detail = detail
        self.extra = extra
        self.headers: dict[str, str] | None = None

    def body(self) -> dict[str, Any]:
        return {"error": self.code, "detail": self.detail, **self.extra}


class PipelineUnavailable(ApiError):
    """The vision pipeline (or a part of it) is not installed in this build."""

    def __init__(self, detail: str) -> None:
        super().__init__(503, "pipeline_unavailable", detail)


_STATUS_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
                 405: "method_not_allowed", 409: "conflict", 413: "too_large", 415: "unsupported_media_type",
                 422: "invalid_request", 429: "too_many_requests", 503: "unavailable"}


def install_error_handlers(app: FastAPI) -> None:
    """Map our errors, HTTP errors and request validation errors to the one JSON shape."""

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(exc.body(), status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _STATUS_CODES.get(exc.status_code, "error")
        return JSONResponse({"error": code, "detail": exc.detail}, status_code=exc.status_code,
                            headers=getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err.get("loc", ()))
            problems.append(f"{where}: {err.get('msg', 'invalid')}")
        return JSONResponse({"error": "invalid_request", "detail": "; ".join(problems) or "invalid request",
                             "problems": [{"loc": list(e.get("loc", ())), "msg": e.get("msg", "")}
                                          for e in exc.errors()]}, status_code=422)
