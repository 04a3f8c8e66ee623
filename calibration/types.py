"""Boundary types of the calibration package: a camera placed in the table frame, and how it was found."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from calibration.camera import CameraModel
from calibration.errors import CalibrationError
from geometry.constants import MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM

CalibrationSource = Literal["charuco", "mat", "corners", "truth"]
CALIBRATION_SOURCES: tuple[str, ...] = ("charuco", "mat", "corners", "truth")

#: Nominal mat corners in the table frame, in the order every ``mat_corners_px`` uses:
#: (-x, +y), (+x, +y), (+x, -y), (-x, -y) -- clockwise seen from above with +y "north".
MAT_CORNERS_MM = np.array(
    [
        [-MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM],
        [MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM],
        [MAT_HALF_LENGTH_MM, -MAT_HALF_WIDTH_MM],
        [-MAT_HALF_LENGTH_MM, -MAT_HALF_WIDTH_MM],
    ]
)
MAT_CORNERS_MM.setflags(write=False)

_REQUIRED_KEYS = ("source", "reprojection_error_mm", "camera")
_OPTIONAL_KEYS = ("reprojection_error_px", "mat_corners_px", "plus_x_end")


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class TableCalibration:
    """A calibrated camera in the table frame (origin at the mat centre, x along the long side, z up, mm).

    ``source`` says how it was made: ``"charuco"`` (board lying on the mat), ``"mat"`` (self-calibration from
    the mat outline), ``"corners"`` (four mat corners given by hand) or ``"truth"`` (the simulator's camera).
    ``reprojection_error_mm`` is the RMS fit residual carried to the table through the local mm-per-pixel
    scale; ``reprojection_error_px`` the same in pixels when known. ``mat_corners_px`` are the measured mat
    corners (order (-x,+y), (+x,+y), (+x,-y), (-x,-y)) or None when the mat was not measured.

    Which mat end is +x is a convention, not a measurement (the mat is symmetric under a half turn): from the
    mat alone the end that appears in the right half of the image is +x; with a board it is the board's
    placement. ``plus_x_end`` reports where +x points in the image.
    """

    camera: CameraModel
    source: CalibrationSource
    reprojection_error_mm: float
    reprojection_error_px: float | None = None
    mat_corners_px: np.ndarray | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.camera, CameraModel):
            raise CalibrationError(f"camera must be a CameraModel, got {type(self.camera).__name__}")
        if self.source not in CALIBRATION_SOURCES:
            raise CalibrationError(
                f"unknown calibration source {self.source!r}; expected one of {CALIBRATION_SOURCES}"
            )
        for name in ("reprojection_error_mm", "reprojection_error_px"):
            value = getattr(self, name)
            if value is None and name == "reprojection_error_px":
                continue
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise CalibrationError(f"{name} must be a number, got {value!r}") from None
            if not math.isfinite(value) or value < 0:
                raise CalibrationError(f"{name} must be finite and >= 0, got {value}")
            object.__setattr__(self, name, value)
        if self.mat_corners_px is not None:
            corners = np.asarray(self.mat_corners_px, dtype=np.float64)
            if corners.shape != (4, 2) or not np.all(np.isfinite(corners)):
                raise CalibrationError(f"mat_corners_px must be 4x2 finite pixels, got {corners.tolist()}")
            corners.setflags(write=False)
            object.__setattr__(self, "mat_corners_px", corners)

    # --- mapping ----------------------------------------------------------------------------------------

    @property
    def image_size_wh_px(self) -> tuple[int, int]:
        return self.camera.image_size_wh_px

    def image_to_table_mm(self, points_px: np.ndarray, z_mm: float | np.ndarray = 0.0) -> np.ndarray:
        """Pixels ``(N, 2)`` (or one ``(2,)``) to table ``(N, 2)`` on the plane at height ``z_mm``."""
        pts = np.asarray(points_px, dtype=np.float64)
        out = self.camera.image_to_table_mm(pts.reshape(-1, 2), z_mm)
        return out[0] if pts.ndim == 1 else out

    def table_to_image_px(self, points_mm: np.ndarray) -> np.ndarray:
        """Table points ``(N, 2)`` (z = 0) or ``(N, 3)`` (or a single point) to pixels."""
        pts = np.asarray(points_mm, dtype=np.float64)
        out = self.camera.project_mm(pts.reshape(-1, pts.shape[-1]))
        return out[0] if pts.ndim == 1 else out

    @property
    def H_table_from_image(self) -> np.ndarray:
        """Homography from *undistorted* pixels to the mat plane (z = 0); exact only if ``dist`` is zero."""
        R = self.camera.R
        H_image_from_table = self.camera.K @ np.column_stack([R[:, 0], R[:, 1], self.camera.tvec])
        H = np.linalg.inv(H_image_from_table)
        return H / H[2, 2]

    @property
    def plus_x_end(self) -> str:
        """Where the table's +x end shows in the image: ``"right"``, ``"left"``, ``"top"`` or ``"bottom"``."""
        a, b = self.camera.project_mm(
            np.array([[-MAT_HALF_LENGTH_MM / 2, 0.0], [MAT_HALF_LENGTH_MM / 2, 0.0]])
        )
        dx, dy = b - a
        if abs(dx) >= abs(dy):
            return "right" if dx > 0 else "left"
        return "bottom" if dy > 0 else "top"

    # --- persistence ------------------------------------------------------------------------------------

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "reprojection_error_mm": self.reprojection_error_mm,
            "reprojection_error_px": self.reprojection_error_px,
            "mat_corners_px": None if self.mat_corners_px is None else self.mat_corners_px.tolist(),
            "plus_x_end": self.plus_x_end,
            "camera": self.camera.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict) -> "TableCalibration":
        """Read a calibration record; a missing required key or an unknown key is a ``CalibrationError``."""
        if not isinstance(data, dict):
            raise CalibrationError(f"calibration record must be a JSON object, got {type(data).__name__}")
        missing = [k for k in _REQUIRED_KEYS if k not in data]
        unknown = sorted(set(data) - set(_REQUIRED_KEYS) - set(_OPTIONAL_KEYS))
        if missing or unknown:
            parts = []
            if missing:
                parts.append(f"missing keys {missing}")
            if unknown:
                parts.append(f"unknown keys {unknown}")
            raise CalibrationError(f"calibration record has {' and '.join(parts)}")
        if not isinstance(data["camera"], dict):
            raise CalibrationError(f"calibration 'camera' must be an object, got {data['camera']!r}")
        calibration = cls(
            camera=CameraModel.from_dict(data["camera"]),
            source=data["source"],
            reprojection_error_mm=data["reprojection_error_mm"],
            reprojection_error_px=data.get("reprojection_error_px"),
            mat_corners_px=data.get("mat_corners_px"),
        )
        # plus_x_end is derived from the camera; a stored value that disagrees means a hand-edited file.
        stored = data.get("plus_x_end")
        if stored is not None and stored != calibration.plus_x_end:
            raise CalibrationError(
                f"calibration record says plus_x_end={stored!r} but its camera puts +x at "
                f"{calibration.plus_x_end!r}"
            )
        return calibration

    def to_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def from_json(cls, path: str | Path) -> "TableCalibration":
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise CalibrationError(f"cannot read calibration file {path}: {exc}") from None
        return cls.from_dict(data)

    @classmethod
    def from_camera(cls, camera: CameraModel, *, source: CalibrationSource = "truth") -> "TableCalibration":
        """Wrap a known camera (e.g. the simulator's truth): zero residual, mat corners projected."""
        return cls(
            camera=camera,
            source=source,
            reprojection_error_mm=0.0,
            reprojection_error_px=0.0,
            mat_corners_px=camera.project_mm(MAT_CORNERS_MM),
        )
