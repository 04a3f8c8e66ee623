"""The picture an umpire looks at: the analysis document drawn over the photograph.

Outlines in each wink's colour (dashed where the position is uncertain), arrows from each squopping wink to
the wink it lies on, pile ids, edge distances to the pot for the winks nearest it, out-of-bounds winks in red
with their replacement spot, and the pot and mat outline; then magnified insets of the places the umpire must
look at (each pile or squop, orange where the referee could not decide; the pot when winks are in it), laid
along the picture's border where they hide least of the mat, each tied to its place. Works from the document alone (its calibration
camera projects table millimetres back into the picture); the input frame is never modified.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.constants import POT_BASE_RADIUS_MM, POT_HEIGHT_MM, POT_TOP_RADIUS_MM

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
    # a dark halo drawn at the text's own thickness, shifted a pixel each way: OpenCV widens each glyph's advance
    # by the stroke thickness, so a thicker dark copy would drift off the text along a long label
    for dx, dy in ((-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)):
        cv2.putText(img, s, (org[0] + dx, org[1] + dy), cv2.FONT_HERSHEY_SIMPLEX, scale, (0, 0, 0), th, cv2.LINE_AA)
    cv2.putText(img, s, org, cv2.FONT_HERSHEY_SIMPLEX, scale, color, th, cv2.LINE_AA)


def _polyline(img, pts, color, thickness, dashed=False):
    p = np.round(pts).astype(np.int32)
    if not dashed:
        cv2.polylines(img, [p.reshape(-1, 1, 2)], True, color, thickness, cv2.LINE_AA)
        return
    for i in range(0, len(p), 2):
        cv2.line(img, tuple(map(int, p[i])), tuple(map(int, p[(i + 1) % len(p)])), color, thickness, cv2.LINE_AA)


def annotate_tiddlywinks(frame_bgr: np.ndarray, document: dict[str, Any]) -> np.ndarray:
    """A copy of ``frame_bgr`` with the analysis ``document`` drawn on it, and magnified insets of the places the
    umpire must look at (piles and squops, undecided orders, the pot when winks are in it)."""
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
    _draw_scene(img, camera, document, scale, thick)
    draw_insets(img, frame_bgr, camera, document)

    so = document.get("squidge_off")
    if so:
        winner = so.get("winner")
        msg = f"squidge-off: {winner} starts" if winner else f"squidge-off: {so.get('decision', '?')}"
        _text(img, msg, (20, int(40 * scale * 2)), scale * 1.6, _TEXT_BGR)
    return img


def _draw_scene(img: np.ndarray, camera: CameraModel, document: dict[str, Any], scale: float, thick: int,
                inset: bool = False) -> None:
    """Pot, wink outlines, squop arrows, undecided marks, pile ids, pot distances and replacement spots.

    In a magnified inset the outlines stay one pixel wide (the umpire looks at the real edges beside them) and
    pile ids are left to the inset's caption."""
    pot = document.get("pot", {})
    pc = pot.get("center_mm", [0.0, 0.0])
    _polyline(img, _circle_px(camera, pc, POT_TOP_RADIUS_MM, POT_HEIGHT_MM, 64), _POT_BGR, thick)
    _polyline(img, _circle_px(camera, pc, POT_BASE_RADIUS_MM, 0.0, 64), _POT_BGR, thick, dashed=True)

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
        if not p.get("potted") and not inset:
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
            _text(img, "?", m + (4, -4), scale * 1.2, _LOOK_BGR)
    # pile ids
    for k, pile in enumerate([] if inset else document.get("piles", []), start=1):
        pts = np.array([centers_px[i] for i in pile if i in centers_px])
        if len(pts):
            top = pts[np.argmin(pts[:, 1])]
            _text(img, f"P{k}", top + (-10, -22 * scale), scale, (255, 255, 255))

    # distances to the pot for the nearest winks on the mat
    live = [p for p in pieces.values() if not p.get("potted") and not p.get("off_mat")]
    dist = sorted(((math.dist(p["center_mm"], pc) - float(p["radius_mm"]), p) for p in live), key=lambda t: t[0])
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


# --- insets: the places the umpire must look at, magnified ------------------------------------------------------

_LOOK_BGR = (0, 165, 255)  # orange: the referee could not decide, the umpire looks
_INSET_SHARE = 0.26  # inset side as a share of the picture's shorter side
_INSET_MAX = 6
_INSET_MARGIN_MM = 14.0  # felt shown around a group (a wink's width)
_INSET_MIN_ZOOM = 1.6  # a group already this large in the picture needs no inset


@dataclass(frozen=True, slots=True)
class Inset:
    """Where an inset went: its top-left corner and side in the picture, and the camera of its magnified view."""

    focus: "Focus"
    slot_px: tuple[int, int]
    side_px: int
    zoom: float
    camera: CameraModel


@dataclass(frozen=True, slots=True)
class Focus:
    """A place worth a magnified look: its pieces' bounding box in the picture and its label."""

    label: str
    box_px: tuple[float, float, float, float]  # x0, y0, x1, y1
    undecided: bool


def focus_regions(camera: CameraModel, document: dict[str, Any]) -> list[Focus]:
    """Piles and squops (as the document groups them), undecided first, then the pot when winks are in it."""
    pieces = {p["id"]: p for p in document.get("pieces", [])}
    unsure = {pid for r in document.get("rulings", []) if r.get("decision") in ("too_close_to_call", "undecided")
              for pid in r.get("piece_ids", [])}
    for a, b, _ in document.get("undecided_orders", []):
        unsure |= {a, b}

    def box(ids: list[str], pad_mm: float) -> tuple[float, float, float, float]:
        return _bbox([_circle_px(camera, pieces[i]["center_mm"], float(pieces[i]["radius_mm"]) + pad_mm,
                                 float(pieces[i].get("z_mm", 0.75)), 16) for i in ids])

    out: list[Focus] = []
    for k, pile in enumerate(document.get("piles", []), start=1):
        ids = [i for i in pile if i in pieces]
        if ids:
            look = bool(unsure & set(ids))
            out.append(Focus(f"P{k}: {len(ids)} winks" + (" - umpire looks" if look else ""),
                             box(ids, _INSET_MARGIN_MM), look))
    grouped = {i for f in document.get("piles", []) for i in f}
    for pid in sorted(unsure - grouped):
        if pid in pieces:
            out.append(Focus(f"{pid} - umpire looks", box([pid], _INSET_MARGIN_MM), True))
    potted = [p for p in pieces.values() if p.get("potted")]
    if potted:
        pc = document.get("pot", {}).get("center_mm", [0.0, 0.0])
        r = POT_TOP_RADIUS_MM + _INSET_MARGIN_MM
        rings = [_circle_px(camera, pc, r, POT_HEIGHT_MM, 32), _circle_px(camera, pc, r, 0.0, 32)]
        out.append(Focus(f"pot: {len(potted)} potted", _bbox(rings), False))
    out.sort(key=lambda f: not f.undecided)  # stable: undecided first, then the document's order
    return out[:_INSET_MAX]


def _bbox(point_sets: list[np.ndarray]) -> tuple[float, float, float, float]:
    pts = np.vstack(point_sets)
    return float(pts[:, 0].min()), float(pts[:, 1].min()), float(pts[:, 0].max()), float(pts[:, 1].max())


def inset_camera(camera: CameraModel, origin_px: tuple[float, float], zoom: float,
                 size_px: int) -> CameraModel:
    """The camera of a picture cut at ``origin_px`` (its top-left pixel's centre) and magnified ``zoom`` times:
    pixel centres map as ``u' = zoom (u - x0 + 1/2) - 1/2``; lens distortion acts before ``K`` and is unchanged."""
    x0, y0 = origin_px
    K = camera.K.copy()
    K[0, 0] *= zoom
    K[1, 1] *= zoom
    K[0, 1] *= zoom
    K[0, 2] = zoom * (K[0, 2] - x0 + 0.5) - 0.5
    K[1, 2] = zoom * (K[1, 2] - y0 + 0.5) - 0.5
    return CameraModel(K=K, dist=camera.dist, rvec=camera.rvec, tvec=camera.tvec,
                       image_size_wh_px=(size_px, size_px))


def _slots(w: int, h: int, side: int, gap: int) -> list[tuple[int, int]]:
    """Inset positions along the picture's four borders."""
    xs = list(range(gap, max(gap, w - side - gap) + 1, side + gap))
    ys = list(range(gap, max(gap, h - side - gap) + 1, side + gap))
    top = [(x, gap) for x in xs] + [(x, h - side - gap) for x in xs]
    sides = [(gap, y) for y in ys[1:-1]] + [(w - side - gap, y) for y in ys[1:-1]]
    return [(x, y) for x, y in top + sides if x >= 0 and y >= 0 and x + side <= w and y + side <= h]


def draw_insets(img: np.ndarray, frame_bgr: np.ndarray, camera: CameraModel,
                document: dict[str, Any]) -> list[Inset]:
    """Magnified views of ``focus_regions`` cut from the clean ``frame_bgr``, redrawn at their own scale and laid
    along the picture's borders where they hide least of the mat and of the winks; returns where each went."""
    h, w = img.shape[:2]
    side = int(round(_INSET_SHARE * min(w, h)))
    regions = focus_regions(camera, document)
    placed: list[Inset] = []
    if not regions or side < 80:
        return placed
    gap = max(4, side // 30)
    # what an inset must not hide: the mat (where play is) and every wink, each group's own place most of all;
    # drawn at about 540 px (a 4K picture's full-size mask and its integral would cost tens of MB a frame)
    q = max(1, round(min(w, h) / 540))
    keep_clear = np.zeros((-(-h // q), -(-w // q)), np.uint8)
    corners = document.get("mat", {}).get("corners_px")
    if corners:
        cv2.fillPoly(keep_clear, [np.round(np.asarray(corners) / q).astype(np.int32)], 1)
    for p in document.get("pieces", []):
        cx, cy = (int(round(v / q)) for v in p.get("center_px", (-1, -1)))
        cv2.circle(keep_clear, (cx, cy), max(2, side // (12 * q)), 4, -1)
    for f in regions:
        x0, y0, x1, y1 = (int(round(v / q)) for v in f.box_px)
        cv2.rectangle(keep_clear, (x0, y0), (x1, y1), 8, -1)
    integral = cv2.integral(keep_clear)
    free = _slots(w, h, side, gap)
    for f in regions:
        x0, y0, x1, y1 = f.box_px
        extent = max(x1 - x0, y1 - y0, 1.0)
        zoom = side / extent
        if zoom < _INSET_MIN_ZOOM or not free:
            continue
        zoom = min(zoom, 8.0)
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        ox, oy = cx - side / (2 * zoom) + 0.5, cy - side / (2 * zoom) + 0.5  # the cut's top-left pixel centre

        def cost(s: tuple[int, int]) -> float:
            a, b, e = s[0] // q, s[1] // q, max(1, side // q)
            covered = (integral[b + e, a + e] - integral[b, a + e] - integral[b + e, a] + integral[b, a]) / float(e * e)
            sx, sy = s
            return covered * 10.0 + math.hypot(sx + side / 2 - cx, sy + side / 2 - cy) / math.hypot(w, h)
        slot = min(free, key=cost)
        # neighbouring slots would overlap this one's frame: each inset takes its own
        free = [s for s in free if abs(s[0] - slot[0]) >= side + gap or abs(s[1] - slot[1]) >= side + gap]
        sx, sy = slot
        M = np.array([[1.0 / zoom, 0.0, ox + 0.5 / zoom - 0.5], [0.0, 1.0 / zoom, oy + 0.5 / zoom - 0.5]])
        cut = cv2.warpAffine(frame_bgr, M, (side, side), flags=cv2.INTER_CUBIC | cv2.WARP_INVERSE_MAP,
                             borderMode=cv2.BORDER_REPLICATE)
        cam_in = inset_camera(camera, (ox, oy), zoom, side)
        _draw_scene(cut, cam_in, document, max(0.45, side / 700.0), 1, inset=True)
        colour = _LOOK_BGR if f.undecided else _TEXT_BGR
        # the caption on a dark strip, readable on any felt
        ts = max(0.45, side / 650.0)
        (tw, th), _ = cv2.getTextSize(f.label, cv2.FONT_HERSHEY_SIMPLEX, ts, max(1, int(round(ts * 2))))
        cut[:th + 14, :] = (cut[:th + 14, :] * 0.35).astype(np.uint8)
        _text(cut, f"{f.label}  x{zoom:.1f}", (8, th + 7), ts, colour)
        img[sy:sy + side, sx:sx + side] = cut
        cv2.rectangle(img, (sx, sy), (sx + side - 1, sy + side - 1), colour, max(2, side // 150), cv2.LINE_AA)
        # a leader from the inset to the place it shows
        tx, ty = min(max(cx, sx), sx + side), min(max(cy, sy), sy + side)
        cv2.line(img, (int(tx), int(ty)), (int(cx), int(cy)), colour, 1, cv2.LINE_AA)
        placed.append(Inset(f, (sx, sy), side, zoom, cam_in))
    return placed
