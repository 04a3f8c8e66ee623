"""The umpire's web page (plain HTML, JS and CSS from ``api/static``) and the service health."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, RedirectResponse

from api.deps import PipelineDep
from api.routes.models import HealthOut

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
router = APIRouter(tags=["umpire"])


@router.get("/umpire", response_class=FileResponse, include_in_schema=False)
def read_umpire_page() -> FileResponse:
    return FileResponse(STATIC_DIR / "umpire.html", media_type="text/html", headers={"Cache-Control": "no-cache"})


@router.get("/", include_in_schema=False)
def read_root() -> RedirectResponse:
    return RedirectResponse("/umpire")


@router.get("/v1/health", response_model=HealthOut, tags=["meta"], summary="Service health")
def read_health(request: Request, pipeline: PipelineDep) -> dict[str, object]:
    try:
        ver = version("tableref")
    except PackageNotFoundError:
        ver = "unknown"
    return {"status": "ok", "version": ver, "supported_games": list(pipeline.supported_games),
            "database": request.app.state.storage.journal_mode}
