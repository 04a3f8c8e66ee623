"""Clear or white: does the table's grain show through the piece?

Clear plastic and opaque white both brighten a dark table and carry little tint, so the colour descriptor
confuses them on light wood. What differs is what lies behind: a clear wall transmits the table, grain and
all, while opaque white hides it and shows only its own smooth shading. The fine texture (a high-pass of the
grey image) inside the piece, away from its projected edges, is compared with the same texture on the
uncovered table around it: near 1 the grain shows through, so the piece cannot be opaque white.
"""

from __future__ import annotations

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.pyramids import PyramidPose

# High-pass scale (px of the working image): wood fibres are a few pixels wide at 0.3-1 mm per pixel.
GRAIN_SIGMA_PX = 2.0
# Ring of uncovered table the piece's texture is compared with (px outside the silhouette).
RING_INNER_PX, RING_OUTER_PX = 4, 12
EDGE_CLEARANCE_PX = 2  # projected edges (apex to corners) and the silhouette carry their own contrast
MIN_PIXELS = 40
# Grain ratio measured on the development renders (43 photos, truth hulls): opaque white 0.5-0.8 with a few
# up to 1.3 (pips and edges), clear 0.6-1.9, most 0.85-1.3. A white verdict at or above CLEAR_MIN_RATIO is
# named clear (and flagged: on the detected outlines 16 of 22 such were clear); between the two, flagged.
WHITE_MAX_RATIO = 0.75
CLEAR_MIN_RATIO = 0.95
# A clear wall transmits the table's grain dimmed and blurred, never strengthened: texture beyond the clear walls'
# measured range (up to 1.9, above) is not the table's but the piece's own (its pips, edges and highlights,
# where the fitted pose puts its edges off the piece's), which opaque white shows too: the grain test does not
# decide, and a white verdict stays white, flagged (ice_fresh_013 p8, 017 p7: white, ratios 2.6 and 3.1).
TRANSMITTED_MAX_RATIO = 2.0


def high_pass_gray(frame_bgr: np.ndarray) -> np.ndarray:
    """Grey image minus its Gaussian blur: the fine texture."""
    g = cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2GRAY).astype(np.float32)
    return g - cv2.GaussianBlur(g, (0, 0), GRAIN_SIGMA_PX)


def _mad(values: np.ndarray) -> float:
    return float(np.median(np.abs(values - np.median(values))))


def grain_ratio(
    high_pass: np.ndarray,
    camera: CameraModel,
    pose: PyramidPose,
    hull_px: np.ndarray,
    foreground: np.ndarray,
    within: np.ndarray | None = None,
) -> float | None:
    """Texture inside the piece over that of the table around it (robust spreads); None if too few pixels.

    ``foreground`` (uint8) marks every pixel not plain table (pieces and shade), kept out of the ring;
    ``within`` (bool, the photo's shape), when given, the only pixels of the piece read (a stacked piece's
    skirt: the piece above it is other plastic).
    """
    h, w = high_pass.shape
    x0, y0 = np.floor(hull_px.min(axis=0)).astype(int) - RING_OUTER_PX - 1
    x1, y1 = np.ceil(hull_px.max(axis=0)).astype(int) + RING_OUTER_PX + 2
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 - x0 < 8 or y1 - y0 < 8:
        return None
    off = np.array([x0, y0], float)
    body = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillConvexPoly(body, np.round(hull_px - off).astype(np.int32), 1)
    inner = cv2.erode(body, np.ones((2 * EDGE_CLEARANCE_PX + 1,) * 2, np.uint8))
    q = camera.project_mm(pose.vertices_mm()) - off
    for corner in q[:4]:
        cv2.line(inner, tuple(int(round(v)) for v in corner), tuple(int(round(v)) for v in q[4]), 0,
                 2 * EDGE_CLEARANCE_PX + 1)
    outer = cv2.dilate(body, np.ones((2 * RING_OUTER_PX + 1,) * 2, np.uint8))
    near = cv2.dilate(body, np.ones((2 * RING_INNER_PX + 1,) * 2, np.uint8))
    ring = (outer > 0) & (near == 0) & (foreground[y0:y1, x0:x1] == 0)
    patch = high_pass[y0:y1, x0:x1]
    sel = inner > 0
    if within is not None:
        sel &= within[y0:y1, x0:x1]
    if sel.sum() < MIN_PIXELS or ring.sum() < MIN_PIXELS:
        return None
    table = _mad(patch[ring])
    return _mad(patch[sel]) / table if table > 0 else None


def clear_or_white(
    color: str, ratio: float | None, allowed=None, opaque_shading: bool = False
) -> tuple[str, str | None]:
    """The colour after the grain test, and a reason to flag when the test overrules or does not decide.

    A white verdict is looked at (only when clear is an allowed colour): opaque plastic cannot show the
    table's grain, so grain at the table's own strength names the piece clear. The converse does not hold:
    clear walls blur and dim the grain by a factor that varies with the table and the view, so grain alone
    never names a clear verdict white. ``opaque_shading`` (``pyramids_shading``: faces lit as unlike as only
    diffuse plastic is) is the second cue: it settles a white verdict whose grain half shows, keeps a white
    verdict white (flagged) against strong grain, and flags a clear verdict.
    """
    if allowed and "clear" not in allowed:
        return color, None
    if color == "clear" and opaque_shading and (not allowed or "white" in allowed):
        return color, "colour read clear, but its faces are shaded like opaque plastic"
    if color != "white" or ratio is None:
        return color, None
    if ratio > TRANSMITTED_MAX_RATIO:
        return color, (f"white or clear: texture {ratio:.2f} times the table's, more than a clear wall "
                       "transmits (the piece's own edges or pips)")
    if ratio >= CLEAR_MIN_RATIO:
        if opaque_shading:
            return color, (f"white or clear: the table's grain shows through (ratio {ratio:.2f}), "
                           "yet its faces are shaded like opaque plastic")
        return "clear", f"colour read white, but the table's grain shows through (ratio {ratio:.2f})"
    if ratio > WHITE_MAX_RATIO and not opaque_shading:
        return color, f"white or clear: the table's grain half shows through (ratio {ratio:.2f})"
    return color, None
