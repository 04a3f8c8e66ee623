"""The referee service: ``create_app`` builds the FastAPI app (versioned API under ``/v1``, umpire page)."""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from api.live import GameManager
from api.pipeline import Pipeline, VisionPipeline
from api.routes import analysis, calibrations, feed, games, marbles, umpire
from api.routes.errors import install_error_handlers
from api.settings import Settings, get_settings
from api.storage import Storage

log = logging.getLogger("tableref.api")


def create_app(settings: Settings | None = None, pipeline: Pipeline | None = None) -> FastAPI:
    """The app; storage opens, and saved game sources resume, when its lifespan starts.

    ``settings`` replaces the environment's (also through the ``get_settings`` dependency); ``pipeline``
    replaces the real vision pipeline (tests, demos without vision). The token is ``settings.token`` or a fresh
    random one, in ``app.state.token`` (``app.state.token_generated`` tells which).
    """
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        storage = Storage(settings.db_path)
        app.state.storage = storage
        manager = GameManager(storage, settings, lambda: app.state.pipeline)
        app.state.games = manager
        if settings.resume_games:
            resumed = manager.resume()
            if resumed:
                log.info("resumed %d game(s): %s", len(resumed), ", ".join(resumed))
        try:
            yield
        finally:
            manager.shutdown()
            storage.close()

    app = FastAPI(title="tableref referee", version="1", lifespan=lifespan,
                  description="Computer-vision referee for table games: live rulings with rule citations, "
                              "annotated feed, umpire page (/umpire). Endpoints that change things need "
                              "'Authorization: Bearer <token>'. Rulings as they happen: WebSocket "
                              "/v1/games/{game_id}/ws?after=<seq> (messages of type ruling, analysis, status). "
                              "Errors are JSON {\"error\": <code>, \"detail\": <message>}.")
    app.state.settings = settings
    app.state.pipeline = pipeline or VisionPipeline()
    app.state.token = settings.token or secrets.token_urlsafe(24)
    app.state.token_generated = settings.token is None
    app.dependency_overrides[get_settings] = lambda: settings
    install_error_handlers(app)
    for module in (analysis, calibrations, games, feed, marbles, umpire):
        app.include_router(module.router)
    app.mount("/static", StaticFiles(directory=umpire.STATIC_DIR), name="static")
    return app
