"""The picture an umpire looks at: the analysis document drawn over the photograph.

Outlines in each wink's colour (dashed where the position is uncertain), arrows from each squopping wink to
the wink it lies on, pile ids, edge distances to the pot for the winks nearest it, out-of-bounds winks in red
with their replacement spot, and the pot and mat outline. Works from the document alone (its calibration
camera projects table millimetres back into the picture); the input frame is never modified.
"""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np

from calibration.camera import CameraModel

_BGR = {"blue": (255, 90, 0), "green": (0, 190, 0), "red": (0, 0, 235), "yellow": (0, 220, 255)}
_OUT_BGR = (0, 0, 255)
_TEXT_BGR = (255, 255, 255)
_POT_BGR = (255, 0, 255)
_NEAREST_SHOWN = 4
_DISTANCE_SHOWN_MM = 200.0  # distances to the pot matter near it (squidge-off, potting attempts)


def _circle_px(camera: CameraModel, center_mm, radius_mm: float, z_mm: float = 1.5, n: int = 48) -> np.ndarray:
    a = np.linspace(0, 2 * math.pi, n, endpoint=False)
    pts = np.column_stack([center_mm[0] + radius_mm * np.cos(a), center_mm[1] + radius_mm * np.sin(a),
                           np.full(n, z_mm)])
    return camera.project_mm(pts)


def _text(img: np.ndarray, s: str, org, scale: float, color=_TEXT_BGR) -> None:
    org = (int(org[0]), int(org[1]))
    th = max(1, int(round(scale * 2)))
    cv2.putText(img, s, org, cv2.FONT_HERSHEY_SIMPLEX, scale, (0, 0, 0), th + 2, cv2.LINE_AA)
    cv2.putText(img, s, org, cv2.FONT_HERSHEY_SIMPLEX, scale, color, th, cv2.LINE_AA)


def _polyline(img, pts, color, thickness, dashed=False):
    p = np.round(pts).astype(np.int32)
    if not dashed:
        cv2.polylines(img, [p.reshape(-1, 1, 2)], True, color, thickness, cv2.LINE_AA)
        return
    for i in range(0, len(p), 2):
        cv2.line(img, tuple(map(int, p[i])), tuple(map(int, p[(i + 1) % len(p)])), color, thickness, cv2.LINE_AA)


def annotate_tiddlywinks(frame_bgr: np.ndarray, document: dict[str, Any]) -> np.ndarray:
    """A copy of ``frame_bgr`` with the analysis ``document`` drawn on it."""
    img = frame_bgr.copy()
    cal = document.get("calibration") or {}
    if "camera" not in cal:
        return img
    camera = CameraModel.from_dict(cal["camera"])
    h, w = img.shape[:2]
    if (w, h) != tuple(camera.image_size_wh_px):
        s = w / camera.image_size_wh_px[0]
        K = camera.K.copy()
        K[:2] *= s
        camera = CameraModel(K=K, dist=camera.dist, rvec=camera.rvec, tvec=camera.tvec, image_size_wh_px=(w, h))
    scale = max(0.4, w / 3200.0)
    thick = max(1, int(round(w / 1300.0)))

    corners = document.get("mat", {}).get("corners_px")
    if corners:
        cv2.polylines(img, [np.round(np.asarray(corners)).astype(np.int32).reshape(-1, 1, 2)], True,
                      (200, 200, 200), thick, cv2.LINE_AA)
    pot = document.get("pot", {})
    pc = pot.get("center_mm", [0.0, 0.0])
    _polyline(img, _circle_px(camera, pc, 24.0, 38.0, 64), _POT_BGR, thick)
    _polyline(img, _circle_px(camera, pc, 19.0, 0.0, 64), _POT_BGR, thick, dashed=True)

    pieces = {p["id"]: p for p in document.get("pieces", [])}
    centers_px: dict[str, np.ndarray] = {}
    for pid, p in pieces.items():
        z = float(p.get("z_mm", 0.75)) + 0.75
        ring = _circle_px(camera, p["center_mm"], float(p["radius_mm"]), z)
        centers_px[pid] = ring.mean(axis=0)
        oob = bool(p.get("out_of_bounds"))
        color = _OUT_BGR if oob else _BGR.get(p["color"], (255, 255, 255))
        unsure = float(p.get("uncertainty_mm", 0.0)) > 1.0 or float(p.get("confidence", 1.0)) < 0.7
        _polyline(img, ring, color, thick + (1 if oob else 0), dashed=unsure)
        if not p.get("potted"):
            # a thin dark inner ring keeps the colour outline readable on a same-coloured wink
            _polyline(img, _circle_px(camera, p["center_mm"], float(p["radius_mm"]) - 1.2, z), (20, 20, 20), 1)

    # squop arrows: from the upper wink's centre towards the lower one's
    for upper, lower in document.get("squops", []):
        if upper in centers_px and lower in centers_px:
            a, b = centers_px[upper], centers_px[lower]
            cv2.arrowedLine(img, tuple(np.round(a).astype(int)), tuple(np.round(b).astype(int)), (255, 255, 255),
                            thick, cv2.LINE_AA, tipLength=0.35)
    for a, b, conf in document.get("undecided_orders", []):
        if a in centers_px and b in centers_px:
            m = (centers_px[a] + centers_px[b]) / 2
            _text(img, "?", m + (4, -4), scale * 1.2, (0, 165, 255))
    # pile ids
    for k, pile in enumerate(document.get("piles", []), start=1):
        pts = np.array([centers_px[i] for i in pile if i in centers_px])
        if len(pts):
            top = pts[np.argmin(pts[:, 1])]
            _text(img, f"P{k}", top + (-10, -22 * scale), scale, (255, 255, 255))

    # distances to the pot for the nearest winks on the mat
    live = [p for p in pieces.values() if not p.get("potted") and not p.get("off_mat")]
    dist = sorted((math.dist(p["center_mm"], pc) - float(p["radius_mm"]), p) for p in live)
    for d, p in [(d, p) for d, p in dist[:_NEAREST_SHOWN] if d <= _DISTANCE_SHOWN_MM]:
        c = centers_px[p["id"]]
        u = float(p.get("uncertainty_mm", 0.0))
        _text(img, f"{d:.1f}+-{2 * u:.1f} mm", c + (12 * scale * 2, 4), scale, _BGR.get(p["color"], _TEXT_BGR))

    # out of bounds: replacement spots from the rulings
    for r in document.get("rulings", []):
        if r.get("rule") == "TW 7(a)" and r.get("target_mm") and r.get("piece_ids"):
            pid = r["piece_ids"][0]
            if pid not in pieces:
                continue
            tgt = r["target_mm"]
            ring = _circle_px(camera, tgt, float(pieces[pid]["radius_mm"]), 0.75)
            _polyline(img, ring, _OUT_BGR, thick, dashed=True)
            c = ring.mean(axis=0)
            if pid in centers_px:
                cv2.arrowedLine(img, tuple(np.round(centers_px[pid]).astype(int)), tuple(np.round(c).astype(int)),
                                _OUT_BGR, thick, cv2.LINE_AA, tipLength=0.15)
            _text(img, f"replace {pid}", c + (10, -10), scale, _OUT_BGR)

    so = document.get("squidge_off")
    if so:
        winner = so.get("winner")
        msg = f"squidge-off: {winner} starts" if winner else f"squidge-off: {so.get('decision', '?')}"
        _text(img, msg, (20, int(40 * scale * 2)), scale * 1.6, _TEXT_BGR)
    return img
