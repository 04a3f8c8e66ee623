"""ChArUco board calibration: intrinsics from several views, table pose from the board lying on the mat.

The board frame is OpenCV's: origin at the board's outer top-left corner as printed, x along the printed
columns, y along the printed rows, z into the board. Lying face-up on the mat, board x maps to a table
direction set by :class:`BoardPlacement`, board y to the table direction 90 degrees clockwise from it, and
board z to table -z. Works with OpenCV 4.8+ and 5.x (``CharucoDetector`` + ``matchImagePoints`` +
``calibrateCamera``; no ``calibrateCameraCharuco``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, NamedTuple, Sequence

import cv2
import numpy as np

from calibration._fit import reprojection_rms, rigid_fit_2d
from calibration.camera import CameraModel
from calibration.errors import CalibrationError
from calibration.mat import (
    PlanarPoints,
    calibrate_from_mat,
    find_mat_outline,
    plane_corners_from_edges,
    refine_on_mat,
)
from calibration.types import MAT_CORNERS_MM, TableCalibration

#: Fewest ChArUco corners for a view to count towards the intrinsics (a board has 70 with 8 x 11 squares).
MIN_CORNERS_PER_VIEW = 8
#: Views needed by ``estimate_intrinsics``: Zhang's method needs three board tilts for f, c and distortion.
MIN_INTRINSIC_VIEWS = 3
#: The board normals must spread at least this much between views, or the focal length is unobservable.
MIN_TILT_SPREAD_DEG = 5.0
#: Formal standard deviations from calibrateCamera assume a perfect model; the mat refinement trusts the
#: board's intrinsics to this many of them (floors keep a zero deviation from freezing a parameter).
INTRINSICS_STD_INFLATION = 3.0
_STD_FLOOR = {"f": 0.5, "cx": 0.5, "cy": 0.5, "k1": 1e-4, "k2": 1e-4, "p1": 1e-5, "p2": 1e-5}
#: Fewest corners for the table pose (4 would do for a homography; more keeps the pose stable).
MIN_CORNERS_FOR_POSE = 6


@dataclass(frozen=True, slots=True, kw_only=True)
class CharucoSpec:
    """The printed board: squares (columns, rows), square and ArUco marker sizes in mm, the dictionary."""

    squares_xy: tuple[int, int] = (8, 11)
    square_mm: float = 30.0
    marker_mm: float = 22.0
    dictionary: str = "DICT_5X5_100"
    legacy_pattern: bool = False  # boards printed by OpenCV < 4.6 with an even number of rows

    def __post_init__(self) -> None:
        sx, sy = (int(v) for v in self.squares_xy)
        if sx < 2 or sy < 2:
            raise CalibrationError(f"a ChArUco board needs at least 2x2 squares, got {self.squares_xy}")
        object.__setattr__(self, "squares_xy", (sx, sy))
        if not (0 < self.marker_mm < self.square_mm):
            raise CalibrationError(
                f"marker size must be in (0, square size {self.square_mm}), got {self.marker_mm}"
            )
        if not hasattr(cv2.aruco, self.dictionary) or not self.dictionary.startswith("DICT_"):
            raise CalibrationError(f"unknown ArUco dictionary {self.dictionary!r} (e.g. 'DICT_5X5_100')")
        n_markers = sx * sy // 2
        capacity = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, self.dictionary)).bytesList.shape[0]
        if n_markers > capacity:
            raise CalibrationError(
                f"a {sx}x{sy} board needs {n_markers} markers but {self.dictionary} has {capacity}"
            )

    @property
    def size_mm(self) -> tuple[float, float]:
        return self.squares_xy[0] * self.square_mm, self.squares_xy[1] * self.square_mm

    def board(self) -> "cv2.aruco.CharucoBoard":
        dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, self.dictionary))
        board = cv2.aruco.CharucoBoard(
            self.squares_xy, float(self.square_mm), float(self.marker_mm), dictionary
        )
        if self.legacy_pattern:
            board.setLegacyPattern(True)
        return board


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardPlacement:
    """Where the board lies on the mat: its origin in table mm, its x axis's angle from table +x, thickness.

    ``origin_mm=None`` centres the board on the mat centre. With ``rotation_deg = 0`` the printed columns run
    along table +x and the printed rows (downwards on the print) along table -y, i.e. the print is read the
    right way up by someone standing on the -y side.
    """

    origin_mm: tuple[float, float] | None = None
    rotation_deg: float = 0.0
    thickness_mm: float = 0.0

    def table_from_board(self, spec: CharucoSpec) -> tuple[np.ndarray, np.ndarray]:
        """``X_table = M @ X_board + T`` as (M 3x3 proper rotation, T (3,))."""
        th = math.radians(self.rotation_deg)
        c, s = math.cos(th), math.sin(th)
        M = np.array([[c, s, 0.0], [s, -c, 0.0], [0.0, 0.0, -1.0]])
        if self.origin_mm is None:
            w, h = spec.size_mm
            origin = -M[:2, :2] @ np.array([w / 2, h / 2])
        else:
            origin = np.asarray(self.origin_mm, float)
        return M, np.array([origin[0], origin[1], self.thickness_mm])


class CharucoDetection(NamedTuple):
    """ChArUco corners in one image: pixels ``(N, 2)``, corner ids ``(N,)``, board points ``(N, 3)`` mm."""

    corners_px: np.ndarray
    ids: np.ndarray
    object_mm: np.ndarray


class ViewStats(NamedTuple):
    index: int
    n_corners: int
    used: bool
    rms_px: float | None
    tilt_deg: float | None  # angle between the board normal and the optical axis


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Intrinsics:
    """Board intrinsics; unpacks as ``K, dist, rms_px, views``. ``std`` holds the formal standard deviations
    (``f``, ``cx``, ``cy`` in px; ``k1``, ``k2``, ``p1``, ``p2``) from ``cv2.calibrateCameraExtended``."""

    K: np.ndarray
    dist: np.ndarray
    rms_px: float
    views: tuple[ViewStats, ...]
    std: dict[str, float]

    def __iter__(self):
        return iter((self.K, self.dist, self.rms_px, self.views))


def _gray(image: np.ndarray) -> np.ndarray:
    img = np.asarray(image)
    if img.ndim == 3:
        return cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    return img


#: ArUco's default minimum marker perimeter (3 % of the image's larger side) drops the 22 mm markers of a
#: board lying on a mat 2 m from a 1920 px camera (about 16 px a side); 1 % keeps them.
MIN_MARKER_PERIMETER_RATE = 0.01
#: When a view yields fewer corners than this share of the board's, it is searched again at twice the size
#: (small, far or steeply tilted boards), and the better of the two is kept.
UPSCALE_BELOW_RATIO = 0.8


def _detect(board: "cv2.aruco.CharucoBoard", gray: np.ndarray, upscale: int):
    params = cv2.aruco.DetectorParameters()
    params.minMarkerPerimeterRate = MIN_MARKER_PERIMETER_RATE
    detector = cv2.aruco.CharucoDetector(board, cv2.aruco.CharucoParameters(), params)
    if upscale == 1:
        return detector.detectBoard(gray)[:2]
    big = cv2.resize(gray, None, fx=upscale, fy=upscale, interpolation=cv2.INTER_CUBIC)
    corners, ids = detector.detectBoard(big)[:2]
    if corners is not None:
        corners = (corners + 0.5) / upscale - 0.5  # pixel centres of the enlarged image back to the original
    return corners, ids


def detect_charuco(image: np.ndarray, spec: CharucoSpec = CharucoSpec()) -> CharucoDetection:
    """Find the board's chessboard corners (sub-pixel) in a BGR or grey image; empty arrays if none."""
    board = spec.board()
    gray = _gray(image)
    n_total = (spec.squares_xy[0] - 1) * (spec.squares_xy[1] - 1)
    corners, ids = _detect(board, gray, 1)
    if ids is None or len(ids) < UPSCALE_BELOW_RATIO * n_total:
        corners2, ids2 = _detect(board, gray, 2)
        if ids2 is not None and (ids is None or len(ids2) > len(ids)):
            corners, ids = corners2, ids2
    if ids is None or len(ids) == 0:
        return CharucoDetection(np.zeros((0, 2)), np.zeros(0, int), np.zeros((0, 3)))
    obj, img = board.matchImagePoints(corners, ids)
    return CharucoDetection(
        np.asarray(img, float).reshape(-1, 2),
        np.asarray(ids, int).ravel(),
        np.asarray(obj, float).reshape(-1, 3),
    )


def estimate_intrinsics(
    images: Sequence[np.ndarray],
    spec: CharucoSpec = CharucoSpec(),
    *,
    min_corners: int = MIN_CORNERS_PER_VIEW,
    flags: int | None = None,
) -> Intrinsics:
    """Camera matrix and distortion (k1, k2, p1, p2, k3) from >= 3 views of the board at different tilts.

    ``flags`` go to ``cv2.calibrateCamera`` (default: square pixels, k3 fixed at 0). Returns ``(K, dist, rms_px, views)``.
    """
    if flags is None:
        flags = cv2.CALIB_FIX_K3 | cv2.CALIB_FIX_ASPECT_RATIO
    sizes = {(int(im.shape[1]), int(im.shape[0])) for im in images}
    if len(sizes) > 1:
        raise CalibrationError(f"all calibration images must have the same size, got {sorted(sizes)}")
    detections = [detect_charuco(im, spec) for im in images]
    counts = [len(d.ids) for d in detections]
    usable = [i for i, n in enumerate(counts) if n >= min_corners]
    if len(usable) < MIN_INTRINSIC_VIEWS:
        raise CalibrationError(
            f"intrinsics need >= {MIN_INTRINSIC_VIEWS} views of the board at different tilts; "
            f"only {len(usable)} of {len(images)} images had >= {min_corners} ChArUco "
            f"corners (corners per image: {counts})"
        )
    size = sizes.pop()
    obj = [detections[i].object_mm.astype(np.float32) for i in usable]
    img = [detections[i].corners_px.astype(np.float32).reshape(-1, 1, 2) for i in usable]
    rms, K, dist, rvecs, tvecs, std_intr, _, _ = cv2.calibrateCameraExtended(
        obj, img, size, np.eye(3), None, flags=flags  # eye: the fixed aspect ratio fx / fy is 1
    )
    sd = np.asarray(std_intr, float).ravel()
    std = {
        "f": float(np.hypot(sd[0], sd[1]) / math.sqrt(2)),
        "cx": float(sd[2]),
        "cy": float(sd[3]),
        "k1": float(sd[4]),
        "k2": float(sd[5]),
        "p1": float(sd[6]),
        "p2": float(sd[7]),
    }
    dist = np.asarray(dist, float).ravel()[:5]
    normals = np.array([cv2.Rodrigues(np.asarray(r, float))[0][:, 2] for r in rvecs])
    spread = max(math.degrees(math.acos(float(np.clip(a @ b, -1.0, 1.0)))) for a in normals for b in normals)
    if spread < MIN_TILT_SPREAD_DEG:
        raise CalibrationError(
            f"the {len(usable)} usable views all show the board at nearly the same tilt "
            f"(normals within {spread:.1f} deg < {MIN_TILT_SPREAD_DEG}); tilt it between shots"
        )
    views = []
    for i, n in enumerate(counts):
        if i in usable:
            k = usable.index(i)
            proj, _ = cv2.projectPoints(obj[k], rvecs[k], tvecs[k], K, dist)
            rms_i = float(np.sqrt(np.mean(np.sum((proj - img[k]) ** 2, axis=2))))
            tilt = math.degrees(math.acos(min(1.0, abs(float(normals[k][2])))))
            views.append(ViewStats(i, n, True, rms_i, tilt))
        else:
            views.append(ViewStats(i, n, False, None, None))
    return Intrinsics(K=np.asarray(K, float), dist=dist, rms_px=float(rms), views=tuple(views), std=std)


def estimate_table_pose(
    image: np.ndarray,
    K: np.ndarray,
    dist: np.ndarray,
    *,
    spec: CharucoSpec = CharucoSpec(),
    placement: BoardPlacement = BoardPlacement(),
    refine_with_mat: bool = False,
    intrinsics_std: Mapping[str, float] | None = None,
) -> TableCalibration:
    """Table plane and camera pose from the board lying flat on the mat (board plane = table z = 0).

    With ``refine_with_mat`` the mat's outline is found too and the table frame becomes the mat's own frame
    (origin at the mat centre, x along its long side); ``placement`` then only picks which end is +x (the
    one nearer the board's +x direction) and the board's thickness, and the intrinsics are refined too, held
    to the board's values within ``intrinsics_std`` (``Intrinsics.std``, inflated by
    ``INTRINSICS_STD_INFLATION``) when given.
    """
    K = np.asarray(K, float).reshape(3, 3)
    dist = np.asarray(dist, float).ravel()
    det = detect_charuco(image, spec)
    if len(det.ids) < MIN_CORNERS_FOR_POSE:
        raise CalibrationError(
            f"the table image shows {len(det.ids)} ChArUco corners; the pose needs "
            f">= {MIN_CORNERS_FOR_POSE} (is the board lying flat and in view?)"
        )
    obj = det.object_mm.astype(np.float64)
    img = det.corners_px.astype(np.float64)
    ok, rvec, tvec = cv2.solvePnP(obj, img, K, dist, flags=cv2.SOLVEPNP_IPPE)
    if not ok:
        raise CalibrationError("solvePnP failed on the board corners of the table image")
    rvec, tvec = cv2.solvePnPRefineLM(obj, img, K, dist, rvec, tvec)
    R_cam_board = cv2.Rodrigues(rvec)[0]
    M, T = placement.table_from_board(spec)
    R = R_cam_board @ M.T
    t = tvec.ravel() - R @ T
    h, w = image.shape[:2]
    camera = CameraModel(K=K, dist=dist, rvec=cv2.Rodrigues(R)[0], tvec=t, image_size_wh_px=(w, h))
    obj_table = obj @ M.T + T
    if refine_with_mat:
        return _refine_with_mat(image, camera, obj_table, img, intrinsics_std)
    rms_mm, rms_px = reprojection_rms(camera, obj_table, img)
    return TableCalibration(
        camera=camera,
        source="charuco",
        reprojection_error_mm=rms_mm,
        reprojection_error_px=rms_px,
        mat_corners_px=None,
    )


def _refine_with_mat(
    image: np.ndarray,
    camera: CameraModel,
    board_mm: np.ndarray,
    board_px: np.ndarray,
    intrinsics_std: Mapping[str, float] | None,
) -> TableCalibration:
    """One fit of pose and intrinsics to the mat's edges and baselines plus the board's corners, the board
    free to slide on the mat (the mat reaches the frame's edges, the board does not).

    Two starts: the board's camera (intrinsics held near the board's within ``intrinsics_std``), and the mat's
    own self-calibration (which survives intrinsics extrapolated badly beyond the board's views). The fit with
    the smaller residual wins. ``board_mm`` are the corners in the placement's frame, whose +x picks the end.
    """
    cam_b, felt_bgr, A, a = _align_to_mat(image, camera)
    sigmas = None
    if intrinsics_std is not None:
        sigmas = {
            n: INTRINSICS_STD_INFLATION * max(float(v), _STD_FLOOR.get(n, 0.0))
            for n, v in intrinsics_std.items()
        }
    fits = [
        refine_on_mat(
            image,
            cam_b,
            felt_bgr,
            points=PlanarPoints((board_mm - a) @ A, board_px),
            source="charuco",
            prior_sigmas=sigmas,
        )
    ]
    try:
        cam_m = calibrate_from_mat(image).camera
    except CalibrationError:
        cam_m = None
    if cam_m is not None:
        seen = cam_m.image_to_table_mm(board_px, board_mm[:, 2])
        R2, t2, _ = rigid_fit_2d(board_mm[:, :2], seen)
        if R2[0, 0] < 0:  # the mat's "+x right" end is the board's -x end: turn the frame half a turn
            half = np.diag([-1.0, -1.0, 1.0])
            cam_m = CameraModel(
                K=cam_m.K,
                dist=cam_m.dist,
                rvec=cv2.Rodrigues(cam_m.R @ half)[0],
                tvec=cam_m.tvec,
                image_size_wh_px=cam_m.image_size_wh_px,
            )
            R2, t2 = -R2, -t2
        board_m = np.column_stack([board_mm[:, :2] @ R2.T + t2, board_mm[:, 2]])
        fits.append(
            refine_on_mat(image, cam_m, felt_bgr, points=PlanarPoints(board_m, board_px), source="charuco")
        )
    return min(fits, key=lambda cal: cal.reprojection_error_px)


def _align_to_mat(
    image: np.ndarray, camera: CameraModel
) -> tuple[CameraModel, np.ndarray, np.ndarray, np.ndarray]:
    """Move the table frame onto the mat: fit the mat rectangle to its edges seen in the board's plane.

    Returns the moved camera, the felt colour, and ``A``, ``a`` with ``X_provisional = A @ X_mat + a``."""
    outline = find_mat_outline(image)
    corners_plane = plane_corners_from_edges(camera, outline.edge_points_px)  # clockwise from above
    best = []
    for shift in range(4):
        R2, t2, rms = rigid_fit_2d(MAT_CORNERS_MM, np.roll(corners_plane, -shift, axis=0))
        best.append((rms, abs(math.atan2(R2[1, 0], R2[0, 0])), R2, t2))
    best.sort(key=lambda b: b[0])
    # The two half-turn-symmetric fits have equal residuals: keep the one nearest the board's +x.
    rms, _, R2, t2 = min(best[:2], key=lambda b: b[1])
    A = np.eye(3)
    A[:2, :2] = R2
    a = np.array([t2[0], t2[1], 0.0])
    R_old = camera.R
    R = R_old @ A
    t = R_old @ a + camera.tvec
    new = CameraModel(
        K=camera.K,
        dist=camera.dist,
        rvec=cv2.Rodrigues(R)[0],
        tvec=t,
        image_size_wh_px=camera.image_size_wh_px,
    )
    return new, outline.felt_bgr, A, a
