"""Calibration frames: the project's ChArUco board lying on the mat or held tilted above it, per camera rig.

The board is exactly ``cv2.aruco.CharucoBoard((8, 11), 30.0, 22.0, DICT_5X5_100)``; its printed face is
textured with ``board.generateImage`` mapped in millimetres (board x right, y down, as OpenCV's object points),
on a white card with a margin. Truth: the camera, the board pose (table <- board and camera <- board), and the
projected chessboard corners.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from calibration.camera import CameraModel
from simulation.primitives import Box, Material

SQUARES_XY = (8, 11)
SQUARE_MM = 30.0
MARKER_MM = 22.0
DICTIONARY = "DICT_5X5_100"
TEXTURE_PX_PER_MM = 8
CARD_MARGIN_MM = 12.0
CARD_THICKNESS_MM = 3.0
WHITE_ALBEDO = 0.78
BLACK_ALBEDO = 0.025


def charuco_board() -> cv2.aruco.CharucoBoard:
    return cv2.aruco.CharucoBoard(SQUARES_XY, SQUARE_MM, MARKER_MM,
                                  cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, DICTIONARY)))


_TEXTURE: np.ndarray | None = None


def board_texture() -> np.ndarray:
    """The printed pattern as float32 albedo, ``TEXTURE_PX_PER_MM`` texels per mm (cached)."""
    global _TEXTURE
    if _TEXTURE is None:
        w = int(SQUARES_XY[0] * SQUARE_MM * TEXTURE_PX_PER_MM)
        h = int(SQUARES_XY[1] * SQUARE_MM * TEXTURE_PX_PER_MM)
        img = charuco_board().generateImage((w, h), marginSize=0, borderBits=1)
        _TEXTURE = (BLACK_ALBEDO + (WHITE_ALBEDO - BLACK_ALBEDO) * img.astype(np.float32) / 255.0)
    return _TEXTURE


def _sample_board(bx_mm: np.ndarray, by_mm: np.ndarray) -> np.ndarray:
    tex = board_texture()
    n = len(bx_mm)
    cols = 1024
    pad = (-n) % cols
    mx = np.concatenate([bx_mm * TEXTURE_PX_PER_MM - 0.5, np.zeros(pad)]).astype(np.float32).reshape(-1, cols)
    my = np.concatenate([by_mm * TEXTURE_PX_PER_MM - 0.5, np.zeros(pad)]).astype(np.float32).reshape(-1, cols)
    v = cv2.remap(tex, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=WHITE_ALBEDO)
    v = v.reshape(-1)[:n].astype(np.float64)
    return np.column_stack([v, v * 0.99, v * 0.97])


def board_size_mm() -> tuple[float, float]:
    return SQUARES_XY[0] * SQUARE_MM, SQUARES_XY[1] * SQUARE_MM


def board_primitive(R_table_board: np.ndarray, t_table_board: np.ndarray) -> Box:
    """The card: its printed face is the board plane z_board = 0, the card body behind it (+z_board)."""
    W, H = board_size_mm()
    xb, yb, zb = R_table_board[:, 0], R_table_board[:, 1], R_table_board[:, 2]
    n_face = -zb  # the printed face looks along -z_board (OpenCV's board z points into the board)
    center = t_table_board + xb * W / 2 + yb * H / 2 - n_face * CARD_THICKNESS_MM / 2
    axes = np.column_stack([xb, yb, n_face])

    def tex(u, v):
        return _sample_board(u + W / 2, v + H / 2)

    return Box(center=center, axes=axes, half=(W / 2 + CARD_MARGIN_MM, H / 2 + CARD_MARGIN_MM, CARD_THICKNESS_MM / 2),
               material=Material(albedo=(WHITE_ALBEDO, WHITE_ALBEDO * 0.99, WHITE_ALBEDO * 0.97), ks=0.03,
                                 roughness_deg=10.0),
               texture_fn=tex, name="charuco")


def flat_pose(rng: np.random.Generator, area_mm: tuple[float, float] = (1500.0, 650.0)) -> tuple[np.ndarray, np.ndarray]:
    """Board lying face up on the mat at a random place and heading."""
    psi = float(rng.uniform(0, 2 * math.pi))
    xb = np.array([math.cos(psi), math.sin(psi), 0.0])
    yb = np.array([math.sin(psi), -math.cos(psi), 0.0])
    R = np.column_stack([xb, yb, np.cross(xb, yb)])
    W, H = board_size_mm()
    c = np.array([rng.uniform(-area_mm[0] / 2, area_mm[0] / 2) * 0.6, rng.uniform(-area_mm[1] / 2, area_mm[1] / 2) * 0.4,
                  CARD_THICKNESS_MM])
    t = c - xb * W / 2 - yb * H / 2
    return R, t


def tilted_pose(rng: np.random.Generator, camera: CameraModel, tilt_deg: float) -> tuple[np.ndarray, np.ndarray]:
    """Board held in the air, face tilted ``tilt_deg`` from horizontal, facing the camera, wholly in view.

    Held boards are raised 250-800 mm towards the camera so that they appear larger, which intrinsics
    estimation needs (and which a person holding a board does).
    """
    cam = camera.center_mm
    W, H = board_size_mm()
    w, h = camera.image_size_wh_px
    best = None
    for attempt in range(60):
        R0, _ = flat_pose(rng)
        axis_ang = float(rng.uniform(0, 2 * math.pi))
        k = np.array([math.cos(axis_ang), math.sin(axis_ang), 0.0])
        th = math.radians(tilt_deg)
        K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
        R = (np.eye(3) + math.sin(th) * K + (1 - math.cos(th)) * K @ K) @ R0
        lift = float(rng.uniform(250, 800))
        # Along the ray through a random image point, at the chosen height.
        target_px = np.array([[rng.uniform(0.3, 0.7) * w, rng.uniform(0.3, 0.7) * h]])
        c = camera.image_to_table_mm(target_px, z_mm=lift)[0]
        c = np.array([c[0], c[1], lift])
        if -R[:, 2] @ (cam - c) < 0:  # turn the printed face towards the camera
            R = R @ np.diag([1.0, -1.0, -1.0])
        t = c - R[:, 0] * W / 2 - R[:, 1] * H / 2
        corners = np.array([[x, y, 0.0] for x in (-CARD_MARGIN_MM, W + CARD_MARGIN_MM)
                            for y in (-CARD_MARGIN_MM, H + CARD_MARGIN_MM)]) @ R.T + t
        px = camera.project_mm(corners)
        if px[:, 0].min() > 5 and px[:, 0].max() < w - 6 and px[:, 1].min() > 5 and px[:, 1].max() < h - 6:
            return R, t
        best = (R, t)
    return best


def board_truth(camera: CameraModel, R: np.ndarray, t: np.ndarray) -> dict:
    """Board pose in the table and camera frames plus the projected ChArUco corners inside the image."""
    board = charuco_board()
    corners_b = np.asarray(board.getChessboardCorners(), float).reshape(-1, 3)
    corners_t = corners_b @ R.T + t
    px = camera.project_mm(corners_t)
    w, h = camera.image_size_wh_px
    inside = (px[:, 0] >= 0) & (px[:, 0] <= w - 1) & (px[:, 1] >= 0) & (px[:, 1] <= h - 1)
    Rc = camera.R @ R
    tc = camera.R @ t + camera.tvec
    rvec, _ = cv2.Rodrigues(Rc)
    return {
        "squares_xy": list(SQUARES_XY), "square_mm": SQUARE_MM, "marker_mm": MARKER_MM, "dictionary": DICTIONARY,
        "R_table_from_board": np.round(R, 9).tolist(), "t_table_from_board_mm": np.round(t, 4).tolist(),
        "rvec_camera_from_board": np.round(rvec.ravel(), 9).tolist(),
        "tvec_camera_from_board_mm": np.round(tc, 4).tolist(),
        "tilt_deg": round(math.degrees(math.acos(abs(float(R[2, 2])))), 3),
        "charuco_corner_ids": [int(i) for i in np.nonzero(inside)[0]],
        "charuco_corners_px": np.round(px[inside], 3).tolist(),
    }
