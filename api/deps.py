"""FastAPI dependencies and their ``Annotated`` aliases (STYLE §4): settings, storage, pipeline, games, auth."""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from api.live import GameManager
from api.pipeline import Pipeline
from api.routes.errors import ApiError
from api.settings import Settings, get_settings
from api.storage import Storage

SettingsDep = Annotated[Settings, Depends(get_settings)]


def get_storage(request: Request) -> Storage:
    return request.app.state.storage


def get_pipeline(request: Request) -> Pipeline:
    """The app's pipeline (the real one by default); tests override this dependency or pass a fake to
    ``create_app(pipeline=...)``."""
    return request.app.state.pipeline


def get_games(request: Request) -> GameManager:
    return request.app.state.games


StorageDep = Annotated[Storage, Depends(get_storage)]
PipelineDep = Annotated[Pipeline, Depends(get_pipeline)]
GamesDep = Annotated[GameManager, Depends(get_games)]

_bearer = HTTPBearer(auto_error=False, description="The service token: env TABLEREF_TOKEN, or the one printed "
                     "at start.")


def _check_token(request: Request, credentials: HTTPAuthorizationCredentials | None) -> None:
    expected: str = request.app.state.token
    if credentials is None or credentials.scheme.lower() != "bearer":
        err = ApiError(401, "unauthorized", "this endpoint changes things and needs 'Authorization: Bearer "
                       "<token>' (env TABLEREF_TOKEN, or the token printed at start)")
        err.headers = {"WWW-Authenticate": "Bearer"}
        raise err
    if not secrets.compare_digest(credentials.credentials.encode(), expected.encode()):
        err = ApiError(401, "unauthorized", "the bearer token is wrong")
        err.headers = {"WWW-Authenticate": 'Bearer error="invalid_token"'}
        raise err


def require_token(request: Request,
                  credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> None:
    """Endpoints that change things (create a game, attach a source, calibrate) need the bearer token."""
    _check_token(request, credentials)


def require_read_access(request: Request, settings: SettingsDep,
                        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> None:
    """Read-only views are open unless ``TABLEREF_REQUIRE_TOKEN_FOR_READS`` is set; then the token comes as the
    bearer header or, for an ``<img>`` showing the MJPEG feed, as ``?token=``."""
    if settings.require_token_for_reads:
        query_token = request.query_params.get("token")
        if credentials is None and query_token:
            credentials = HTTPAuthorizationCredentials(scheme="Bearer", credentials=query_token)
        _check_token(request, credentials)


WriteAuth = Depends(require_token)
ReadAuth = Depends(require_read_access)
