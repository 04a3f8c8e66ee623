"""Still photos: analyse (scene and rulings, the same JSON as ``tableref analyze``) and the squidge-off."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, File, Form, Response, UploadFile

from api.deps import PipelineDep, ReadAuth, SettingsDep, StorageDep
from api.pipeline import check_game, encode_jpeg
from api.routes.errors import ApiError
from api.routes.models import ErrorOut
from api.routes.uploads import read_image_upload
from api.storage import Storage

router = APIRouter(prefix="/v1", tags=["analysis"], dependencies=[ReadAuth])

_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 404, 413, 415, 422, 503)}


def calibration_dict(storage: Storage, calibration_id: str | None) -> dict[str, Any] | None:
    if not calibration_id:
        return None
    cal = storage.get_calibration(calibration_id)
    if cal is None:
        raise ApiError(404, "calibration_not_found", f"no calibration with id {calibration_id!r}")
    return cal["calibration"]


@router.post("/analyze", responses=_ERRORS, summary="Analyse a still photo")
def analyze_photo(
    image: Annotated[UploadFile, File(description="PNG, JPEG, BMP or WebP photo of the table.")],
    settings: SettingsDep, storage: StorageDep, pipeline: PipelineDep,
    game: Annotated[str, Form(max_length=64, description="tiddlywinks, marbles, ice-tiddlywinks, dominoes or "
                                                         "tantrix")] = "tiddlywinks",
    calibration_id: Annotated[str | None, Form(max_length=64)] = None,
) -> dict[str, Any]:
    """The analysis document: ``pieces[]``, ``pot``, ``mat.corners_px``, ``calibration``, ``rulings[]`` and the
    ``squidge_off`` verdict — the same JSON as ``tableref analyze``; ``game`` may also be ``marbles`` (ring,
    pieces, counts), ``ice-tiddlywinks`` (pieces with pose and points, ``scores``), ``dominoes`` (tiles, layout)
    or ``tantrix`` (tiles with face number, rotation and hex or hand; ``forced_spaces``, ``scores`` per colour,
    ``legal`` true/false/null and the TX rulings)."""
    game = check_game(game, pipeline, getattr(pipeline, "photo_games", None))
    calibration = calibration_dict(storage, calibration_id)
    frame = read_image_upload(image, settings)
    return pipeline.analyze(game, frame, calibration)


@router.post("/analyze/annotated", responses={200: {"content": {"image/jpeg": {}}}, **_ERRORS},
             response_class=Response, summary="The umpire's picture of a still photo")
def annotate_photo(
    image: Annotated[UploadFile, File(description="PNG, JPEG, BMP or WebP photo of the table.")],
    settings: SettingsDep, storage: StorageDep, pipeline: PipelineDep,
    game: Annotated[str, Form(max_length=64)] = "tiddlywinks",
    calibration_id: Annotated[str | None, Form(max_length=64)] = None,
) -> Response:
    """The photo with the analysis drawn on it (as ``tableref analyze --annotate``): outlines, squops, rulings
    for tiddlywinks; balls and the ring for marbles; readings and bad joins for dominoes; tiles, forced spaces
    and scoring lines for Tantrix; pieces and points for Ice Tiddly Winks. The header ``X-Tableref-Rulings``
    gives the number of rulings drawn."""
    game = check_game(game, pipeline, getattr(pipeline, "photo_games", None))
    calibration = calibration_dict(storage, calibration_id)
    frame = read_image_upload(image, settings)
    doc = pipeline.analyze(game, frame, calibration)
    return Response(encode_jpeg(pipeline.annotate(frame, doc), quality=90), media_type="image/jpeg",
                    headers={"X-Tableref-Rulings": str(len(doc.get("rulings") or [])), "Cache-Control": "no-store"})


@router.post("/squidge-off", responses=_ERRORS, summary="Squidge-off verdict of a still photo")
def judge_squidge_off_photo(
    image: Annotated[UploadFile, File(description="Photo of the mat after the squidge-off.")],
    settings: SettingsDep, storage: StorageDep, pipeline: PipelineDep,
    calibration_id: Annotated[str | None, Form(max_length=64)] = None,
) -> dict[str, Any]:
    """``winner``, ``ranking[]`` (nearest to the pot first) and ``resquidge`` (TW 5)."""
    calibration = calibration_dict(storage, calibration_id)
    frame = read_image_upload(image, settings)
    doc = pipeline.analyze("tiddlywinks", frame, calibration)
    verdict = doc.get("squidge_off")
    if not isinstance(verdict, dict):
        raise ApiError(422, "no_squidge_off", "the analysis of this photo gives no squidge-off verdict")
    return verdict
