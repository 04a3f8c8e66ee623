"""A window of a photo with the camera that sees exactly it: pyramid tests read one blob without the rest."""

from __future__ import annotations

import numpy as np

from calibration.camera import CameraModel


def crop_with_camera(frame: np.ndarray, cam: CameraModel, center_px, half_wh=(120, 100)):
    """The ``2 half_wh`` window centred on ``center_px`` and ``cam`` with its principal point moved into it."""
    cx, cy = (round(v) for v in center_px)
    x0, y0, x1, y1 = cx - half_wh[0], cy - half_wh[1], cx + half_wh[0], cy + half_wh[1]
    d = cam.to_dict()
    d["K"][0][2] -= x0
    d["K"][1][2] -= y0
    d["image_size_wh_px"] = [x1 - x0, y1 - y0]
    return np.ascontiguousarray(frame[y0:y1, x0:x1]), CameraModel.from_dict(d)
