"""Calibrations: from a board image or from four mat corners; list and fetch."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, File, UploadFile

from api.deps import PipelineDep, ReadAuth, SettingsDep, StorageDep, WriteAuth
from api.routes.errors import ApiError
from api.routes.models import CalibrationOut, CornersIn, ErrorOut
from api.routes.uploads import read_image_upload

router = APIRouter(prefix="/v1/calibrations", tags=["calibrations"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 404, 413, 415, 422, 503)}


@router.post("", status_code=201, response_model=CalibrationOut, responses=_ERRORS, dependencies=[WriteAuth],
             summary="Calibrate from a board image")
def create_calibration(image: Annotated[UploadFile, File(description="Image showing the whole mat.")],
                       settings: SettingsDep, storage: StorageDep, pipeline: PipelineDep) -> dict[str, Any]:
    frame = read_image_upload(image, settings)
    return storage.add_calibration("image", pipeline.calibrate_image(frame))


@router.post("/corners", status_code=201, response_model=CalibrationOut, responses=_ERRORS,
             dependencies=[WriteAuth], summary="Calibrate from four mat corners")
def create_calibration_from_corners(body: CornersIn, storage: StorageDep, pipeline: PipelineDep) -> dict[str, Any]:
    data = pipeline.calibrate_corners([list(c) for c in body.corners_px], body.image_size_wh_px)
    return storage.add_calibration("corners", data)


@router.get("", response_model=list[CalibrationOut], dependencies=[ReadAuth], summary="List calibrations")
def list_calibrations(storage: StorageDep) -> list[dict[str, Any]]:
    return storage.list_calibrations()


@router.get("/{calibration_id}", response_model=CalibrationOut, responses=_ERRORS, dependencies=[ReadAuth],
            summary="Fetch a calibration")
def read_calibration(calibration_id: str, storage: StorageDep) -> dict[str, Any]:
    cal = storage.get_calibration(calibration_id)
    if cal is None:
        raise ApiError(404, "calibration_not_found", f"no calibration with id {calibration_id!r}")
    return cal
