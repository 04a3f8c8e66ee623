"""A calibrated perspective camera looking at the table frame (OpenCV pinhole model with distortion).

World = table frame (mm, origin at the mat centre, z up). ``x_cam = R @ X_table + t``. Pixel coordinates
follow OpenCV: origin at the centre of the top-left pixel, x right, y down.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from calibration.errors import CalibrationError

_UNDISTORT_CRITERIA = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 40, 1e-10)
#: From this many points a projection is cheaper as numpy column arithmetic than through ``cv2.projectPoints``
#: (about 35 vs 190 ns per point, against about 50 vs 10 us fixed; equal near 300 points, measured on one core).
_NUMPY_PROJECTION_MIN_POINTS = 512
#: Up to this many points a projection is cheapest on Python floats (a few microseconds a point, against
#: ``cv2.projectPoints``'s and the array handling's fixed cost of a few tens): most of a frame's calls ask for one
#: to four points (a centre, a ground sampling distance).
_FLOAT_PROJECTION_MAX_POINTS = 4


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class CameraModel:
    """Intrinsics ``K`` (3x3), distortion ``dist`` (k1, k2, p1, p2, k3), pose ``rvec``/``tvec`` (table->camera)."""

    K: np.ndarray
    dist: np.ndarray
    rvec: np.ndarray
    tvec: np.ndarray
    image_size_wh_px: tuple[int, int]
    #: the rotation matrix of ``rvec`` (used by every ray) and the ground sampling distances asked so far: a frame's
    #: stages ask for the same wink centres again and again
    _R: np.ndarray = field(init=False, repr=False, compare=False)
    _gsd_cache: dict = field(init=False, repr=False, compare=False, default_factory=dict)
    #: R, t, the k1 k2 p1 p2 k3 model and fx cx fy cy as Python floats, for projections of a few points
    _floats: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        K = np.asarray(self.K, dtype=np.float64).reshape(3, 3)
        dist = np.asarray(self.dist, dtype=np.float64).ravel()
        if dist.size < 5:
            dist = np.concatenate([dist, np.zeros(5 - dist.size)])
        rvec = np.asarray(self.rvec, dtype=np.float64).reshape(3)
        tvec = np.asarray(self.tvec, dtype=np.float64).reshape(3)
        for name, arr in (("K", K), ("dist", dist), ("rvec", rvec), ("tvec", tvec)):
            if not np.all(np.isfinite(arr)):
                raise CalibrationError(f"camera {name} has non-finite values: {arr.tolist()}")
        if K[0, 0] <= 0 or K[1, 1] <= 0:
            raise CalibrationError(f"camera focal lengths must be positive, got fx={K[0, 0]}, fy={K[1, 1]}")
        w, h = (int(v) for v in self.image_size_wh_px)
        if w <= 0 or h <= 0:
            raise CalibrationError(f"image size must be positive, got {self.image_size_wh_px!r}")
        for name, arr in (("K", K), ("dist", dist), ("rvec", rvec), ("tvec", tvec)):
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        object.__setattr__(self, "image_size_wh_px", (w, h))
        R = cv2.Rodrigues(rvec)[0]
        R.setflags(write=False)
        object.__setattr__(self, "_R", R)
        object.__setattr__(self, "_floats", (*R.ravel().tolist(), *tvec.tolist(), *dist[:5].tolist(),
                                             float(K[0, 0]), float(K[0, 2]), float(K[1, 1]), float(K[1, 2])))

    # --- construction -----------------------------------------------------------------------------------

    @classmethod
    def look_at(cls, *, eye_mm: tuple[float, float, float], target_mm: tuple[float, float, float],
                up_hint: tuple[float, float, float] = (0.0, 1.0, 0.0), focal_px: float,
                image_size_wh_px: tuple[int, int], dist: tuple[float, ...] = (0, 0, 0, 0, 0),
                principal_offset_px: tuple[float, float] = (0.0, 0.0)) -> "CameraModel":
        """A camera at ``eye_mm`` looking at ``target_mm``; image-up leans towards ``up_hint``."""
        eye = np.asarray(eye_mm, float)
        fwd = np.asarray(target_mm, float) - eye
        fwd /= np.linalg.norm(fwd)
        up = np.asarray(up_hint, float)
        right = np.cross(fwd, up)
        if np.linalg.norm(right) < 1e-9:
            raise CalibrationError(f"up_hint {up_hint} is parallel to the viewing direction")
        right /= np.linalg.norm(right)
        down = np.cross(fwd, right)
        R = np.stack([right, down, fwd])  # rows: camera x (right), y (down), z (forward) in world
        rvec, _ = cv2.Rodrigues(R)
        tvec = -R @ eye
        w, h = image_size_wh_px
        K = np.array([[focal_px, 0, (w - 1) / 2 + principal_offset_px[0]],
                      [0, focal_px, (h - 1) / 2 + principal_offset_px[1]],
                      [0, 0, 1]])
        return cls(K=K, dist=np.asarray(dist, float), rvec=rvec, tvec=tvec, image_size_wh_px=(w, h))

    # --- geometry ---------------------------------------------------------------------------------------

    @property
    def R(self) -> np.ndarray:
        return self._R

    @property
    def center_mm(self) -> np.ndarray:
        """Camera centre in the table frame."""
        return -self.R.T @ self.tvec

    @property
    def tilt_deg(self) -> float:
        """Angle between the optical axis and straight down."""
        fwd = self.R[2]
        return math.degrees(math.acos(float(np.clip(-fwd[2], -1.0, 1.0))))

    def project_mm(self, points_mm: np.ndarray) -> np.ndarray:
        """Table points ``(N, 3)`` (or ``(N, 2)`` on the mat, z = 0) to pixels ``(N, 2)``."""
        pts = np.asarray(points_mm, dtype=np.float64).reshape(-1, np.shape(points_mm)[-1])
        if pts.shape[1] == 2:
            pts = np.column_stack([pts, np.zeros(len(pts))])
        if len(pts) == 0:
            return np.zeros((0, 2))
        if len(pts) <= _FLOAT_PROJECTION_MAX_POINTS and self.dist.size == 5:
            return np.array([self._project_floats(X, Y, Z) for X, Y, Z in pts.tolist()])
        if len(pts) >= _NUMPY_PROJECTION_MIN_POINTS and self.dist.size == 5:
            return self._project_columns(pts)
        px, _ = cv2.projectPoints(pts, self.rvec, self.tvec, self.K, self.dist)
        return px.reshape(-1, 2)

    def project_with_jacobian(self, points_mm: np.ndarray, step_mm: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
        """Pixels of table points ``(N, 3)`` and the Jacobian of the image of each one's horizontal plane
        ``(N, 2 px, 2 mm)``, by forward differences over ``step_mm``: the projection is affine over a wink's few
        centimetres, so a disc's outline and inside samples there are one matrix product away."""
        p = np.asarray(points_mm, dtype=np.float64)
        q = self.project_mm(np.vstack([p, p + (step_mm, 0.0, 0.0), p + (0.0, step_mm, 0.0)])).reshape(3, -1, 2)
        return q[0], np.stack([(q[1] - q[0]) / step_mm, (q[2] - q[0]) / step_mm], axis=2)

    def _project_columns(self, pts: np.ndarray) -> np.ndarray:
        """``cv2.projectPoints`` of many points as whole-column arithmetic: OpenCV's own operations in its own
        order (rotation rows, division by depth, the k1 k2 p1 p2 k3 model, then K), so the same doubles, at a
        fifth of its per-point cost on thousands of points (OpenCV's fixed cost is the lower one on a few)."""
        R, t, k, K = self._R, self.tvec, self.dist, self.K
        X, Y, Z = pts[:, 0], pts[:, 1], pts[:, 2]
        x = R[0, 0] * X + R[0, 1] * Y + R[0, 2] * Z + t[0]
        y = R[1, 0] * X + R[1, 1] * Y + R[1, 2] * Z + t[1]
        iz = 1.0 / (R[2, 0] * X + R[2, 1] * Y + R[2, 2] * Z + t[2])
        x *= iz
        y *= iz
        r2 = x * x + y * y
        r4 = r2 * r2
        cdist = 1 + k[0] * r2 + k[1] * r4 + k[4] * (r4 * r2)
        a1 = 2 * x * y
        out = np.empty((len(pts), 2))
        out[:, 0] = (x * cdist + k[2] * a1 + k[3] * (r2 + 2 * x * x)) * K[0, 0] + K[0, 2]
        out[:, 1] = (y * cdist + k[2] * (r2 + 2 * y * y) + k[3] * a1) * K[1, 1] + K[1, 2]
        return out

    def _project_floats(self, X: float, Y: float, Z: float) -> tuple[float, float]:
        """One point by ``_project_columns``'s operations in its order, on Python floats (the same doubles)."""
        r00, r01, r02, r10, r11, r12, r20, r21, r22, t0, t1, t2, k1, k2, p1, p2, k3, fx, cx, fy, cy = self._floats
        iz = 1.0 / (r20 * X + r21 * Y + r22 * Z + t2)
        x = (r00 * X + r01 * Y + r02 * Z + t0) * iz
        y = (r10 * X + r11 * Y + r12 * Z + t1) * iz
        r2 = x * x + y * y
        r4 = r2 * r2
        cdist = 1 + k1 * r2 + k2 * r4 + k3 * (r4 * r2)
        a1 = 2 * x * y
        return ((x * cdist + p1 * a1 + p2 * (r2 + 2 * x * x)) * fx + cx,
                (y * cdist + p1 * (r2 + 2 * y * y) + p2 * a1) * fy + cy)

    def normalized_rays(self, points_px: np.ndarray) -> np.ndarray:
        """Pixels ``(N, 2)`` to undistorted normalized camera coordinates ``(N, 2)`` (x/z, y/z)."""
        pts = np.asarray(points_px, dtype=np.float64).reshape(-1, 1, 2)
        if len(pts) == 0:
            return np.zeros((0, 2))
        if not np.any(self.dist):
            K = self.K
            return np.column_stack([(pts[:, 0, 0] - K[0, 2]) / K[0, 0], (pts[:, 0, 1] - K[1, 2]) / K[1, 1]])
        if hasattr(cv2, "undistortPointsIter"):  # OpenCV 4.x spells the iterative variant apart
            und = cv2.undistortPointsIter(pts, self.K, self.dist, None, None, _UNDISTORT_CRITERIA)
        else:
            und = cv2.undistortPoints(pts, self.K, self.dist, R=None, P=None, criteria=_UNDISTORT_CRITERIA)
        return und.reshape(-1, 2)

    def rays_mm(self, points_px: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pixel rays in the table frame: the camera centre ``(3,)`` and unit directions ``(N, 3)``."""
        xy = self.normalized_rays(points_px)
        d_cam = np.column_stack([xy, np.ones(len(xy))])
        d = d_cam @ self.R  # R.T @ d_cam for each row
        d /= np.linalg.norm(d, axis=1, keepdims=True)
        return self.center_mm, d

    def image_to_table_mm(self, points_px: np.ndarray, z_mm: float | np.ndarray = 0.0) -> np.ndarray:
        """Pixels ``(N, 2)`` to table ``(N, 2)`` where each ray meets the plane at height ``z_mm``.

        Height-aware: the top of the pot (z = 38) or a tilted wink's raised edge lands where it really is
        in plan, not where its ray meets the mat.
        """
        o, d = self.rays_mm(points_px)
        z = np.broadcast_to(np.asarray(z_mm, dtype=np.float64), (len(d),))
        with np.errstate(divide="ignore", invalid="ignore"):
            s = (z - o[2]) / d[:, 2]
        if np.any(~np.isfinite(s)) or np.any(s <= 0):
            raise CalibrationError("a pixel ray does not meet the table plane in front of the camera")
        return o[:2] + s[:, None] * d[:, :2]

    def mm_per_px_at(self, point_mm: tuple[float, float], z_mm: float = 0.0) -> float:
        """Local ground sampling distance: how many mm of table one pixel spans near ``point_mm``."""
        key = (float(point_mm[0]), float(point_mm[1]), float(z_mm))
        got = self._gsd_cache.get(key)
        if got is not None:
            return got
        x, y, z = key
        if self.dist.size == 5:
            (u0, v0), (u1, v1), (u2, v2) = (self._project_floats(x, y, z), self._project_floats(x + 1.0, y, z),
                                            self._project_floats(x, y + 1.0, z))
            J = np.array([[u1 - u0, u2 - u0], [v1 - v0, v2 - v0]])  # px per mm
        else:
            q = self.project_mm(np.array([[x, y, z], [x + 1.0, y, z], [x, y + 1.0, z]]))
            J = np.column_stack([q[1] - q[0], q[2] - q[0]])
        gsd = float(1.0 / math.sqrt(abs(np.linalg.det(J))))
        if len(self._gsd_cache) >= 4096:
            self._gsd_cache.clear()
        self._gsd_cache[key] = gsd
        return gsd

    # --- persistence ------------------------------------------------------------------------------------

    def to_dict(self) -> dict:
        return {
            "K": self.K.tolist(),
            "dist": self.dist.tolist(),
            "rvec": self.rvec.tolist(),
            "tvec": self.tvec.tolist(),
            "image_size_wh_px": list(self.image_size_wh_px),
        }

    @classmethod
    def from_dict(cls, data: dict) -> "CameraModel":
        try:
            return cls(K=np.asarray(data["K"], float), dist=np.asarray(data["dist"], float),
                       rvec=np.asarray(data["rvec"], float), tvec=np.asarray(data["tvec"], float),
                       image_size_wh_px=tuple(data["image_size_wh_px"]))
        except KeyError as exc:
            raise CalibrationError(f"camera record lacks field {exc.args[0]!r}") from None
        except (TypeError, ValueError) as exc:
            if isinstance(exc, CalibrationError):
                raise
            raise CalibrationError(f"camera record is malformed: {exc}") from None

    def to_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2))

    @classmethod
    def from_json(cls, path: str | Path) -> "CameraModel":
        try:
            return cls.from_dict(json.loads(Path(path).read_text()))
        except (OSError, json.JSONDecodeError) as exc:
            raise CalibrationError(f"cannot read camera file {path}: {exc}") from None
