"""A camera from whatever an integrator hands a photo service: the one loader the game services share."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from calibration.camera import CameraModel


def camera_from(calibration: Any, error: type[Exception] = ValueError) -> CameraModel | None:
    """A ``CameraModel`` from None, a ``CameraModel``, a ``TableCalibration`` (``.camera``), a document with
    ``calibration.camera`` (or a bare camera dict), or a path to such a JSON file; anything else raises
    ``error`` with a message that names the problem."""
    if calibration is None or isinstance(calibration, CameraModel):
        return calibration
    if hasattr(calibration, "camera"):
        return calibration.camera
    if isinstance(calibration, (str, Path)):
        try:
            calibration = json.loads(Path(calibration).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise error(f"{calibration}: cannot read the calibration: {exc}") from None
    if isinstance(calibration, dict):
        cal = calibration.get("calibration", calibration)
        try:
            return CameraModel.from_dict(cal.get("camera", cal))
        except (KeyError, TypeError, ValueError) as exc:
            raise error(f"the calibration has no usable camera: {exc}") from None
    raise error(f"calibration must be a camera, a calibration, a dict or a JSON path, "
                f"got {type(calibration).__name__}")
