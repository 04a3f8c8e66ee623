"""Pyramid colour from how the piece changes the table seen through or behind it.

A translucent wall multiplies the light by its transmittance ``T`` once per crossing; the table under a hollow
piece is seen through two to four walls, so the ratio photo / table reference (linear RGB) is about ``T**k``:
its chromaticity is fixed per plastic while its mean grows with the path. Opaque plastic instead has its own
lightness: black is darker than any table shadow, white lighter than the wood. Each plastic is a Gaussian
prototype of that descriptor, measured on photos with truth (below).
"""

from __future__ import annotations

import math

import cv2
import numpy as np

COLORS = ("red", "yellow", "green", "blue", "purple", "orange", "cyan", "clear", "black", "white")


def _linear(bgr: np.ndarray) -> np.ndarray:
    x = np.asarray(bgr, float)[..., ::-1] / 255.0
    return np.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4)


def walls_crossed(vertices_px: np.ndarray, shape_hw: tuple[int, int]) -> np.ndarray:
    """How many of a pyramid's four walls each pixel's ray crosses before the table (uint8 map, 0-4).

    ``vertices_px`` are the four base corners and the apex projected into the photo. A wall is a flat
    triangle, so a ray crosses it exactly where the pixel lies inside the wall's projection. A lying piece
    shows its tint where the ray crosses an upper wall and the wall it lies on (2); through its open base the
    ray meets only the lower wall, or none, and sees the table and the piece's own dark inside barely tinted
    (1): pooled with the rest, those pixels pull a blue or purple piece's ratio towards clear's.
    """
    q = np.asarray(vertices_px, float)
    h, w = shape_hw
    count = np.zeros((h, w), np.uint8)
    face = np.zeros((h, w), np.uint8)
    for i in range(4):
        face[:] = 0
        cv2.fillConvexPoly(face, np.round(np.array([q[i], q[(i + 1) % 4], q[4]])).astype(np.int32), 1)
        count += face
    return count


def color_feature(piece_bgr: np.ndarray, table_bgr: np.ndarray) -> np.ndarray:
    """Log photo/table ratio (linear RGB) of the darker half of the pixels, and the piece's luminance."""
    p = _linear(piece_bgr).reshape(-1, 3)
    t = _linear(table_bgr).reshape(-1, 3)
    eps = 2e-3
    ratio = (p + eps) / (t + eps)
    lum = ratio.mean(axis=1)
    order = np.argsort(lum)
    dark = ratio[order[: max(len(order) // 2, 1)]]
    logr = np.log(np.clip(np.median(dark, axis=0), 1e-3, 10.0))
    return np.array([*logr, float(np.median(p.mean(axis=1))), float(np.median(t.mean(axis=1)))])


# Prototypes of the colour descriptor (chromaticity of the log ratio: R, G, B minus their mean; half the mean
# log ratio; log of the piece's linear luminance), each a mean at the table's log luminance TABLE_LOG_LUM_REF,
# a spread, and the mean's slope against the table's log luminance. The slope is the piece's own light: the
# walls scatter and reflect light that does not pass through the table, so the photo is about T**k * table +
# s, and the ratio's tint and level fade towards s / table as the table darkens; opaque white's ratio is its
# own lightness over the table's. A light table shows yellow and clear as themselves, a dark one pulls
# yellow's ratio towards orange's and clear's towards white's. Fitted by least squares (pieces beyond 3.5
# robust spreads left out: occluded or another's pixels) on the committed sample photos plus 39 training
# renders (``generate_ice_tiddlywinks`` with ``default_rng([4242, i])``, a seed the bench does not use), truth
# outlines, 604 visible pieces; spreads floored at 0.15 in chromaticity and 0.3 / 0.55 in the two levels (the
# path through the walls, lying or upright, and the light's key/ambient split move them: the floors with the
# best leave-one-photo-out accuracy on the set's first 27 photos, 94 % of 345 pieces).
TABLE_LOG_LUM_REF = -1.6
PROTOTYPES: dict[str, tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]] = {
    "red": (
        (0.73, -0.747, 0.016, -0.663, -2.344),
        (0.249, 0.15, 0.161, 0.3, 0.55),
        (0.305, -0.136, -0.169, -0.383, 0.373),
    ),
    "yellow": (
        (0.379, 0.192, -0.57, -0.376, -1.941),
        (0.173, 0.15, 0.164, 0.3, 0.55),
        (0.372, -0.079, -0.293, -0.382, 0.42),
    ),
    "green": (
        (-1.084, 0.545, 0.539, -0.699, -2.872),
        (0.15, 0.15, 0.15, 0.3, 0.55),
        (0.153, 0.031, -0.184, -0.415, 0.263),
    ),
    "blue": (
        (-1.313, -0.247, 1.56, -0.73, -2.793),
        (0.15, 0.15, 0.152, 0.3, 0.55),
        (-0.052, -0.117, 0.169, -0.523, 0.026),
    ),
    "purple": (
        (-0.43, -0.719, 1.149, -0.665, -2.745),
        (0.15, 0.15, 0.15, 0.3, 0.55),
        (0.294, -0.147, -0.147, -0.469, 0.14),
    ),
    "orange": (
        (0.771, -0.285, -0.486, -0.544, -2.102),
        (0.182, 0.15, 0.15, 0.3, 0.55),
        (0.366, -0.169, -0.196, -0.4, 0.426),
    ),
    "cyan": (
        (-1.5, 0.373, 1.127, -0.556, -2.443),
        (0.15, 0.15, 0.15, 0.3, 0.55),
        (0.043, -0.007, -0.036, -0.404, 0.294),
    ),
    "clear": (
        (-0.306, -0.036, 0.343, -0.056, -1.651),
        (0.15, 0.15, 0.15, 0.3, 0.55),
        (0.155, -0.01, -0.145, -0.149, 0.719),
    ),
    "black": (
        (-0.664, -0.06, 0.723, -1.181, -3.967),
        (0.15, 0.15, 0.15, 0.3, 0.55),
        (0.182, -0.057, -0.125, -0.45, 0.096),
    ),
    "white": (
        (-0.637, -0.027, 0.664, 0.228, -0.872),
        (0.15, 0.15, 0.15, 0.3, 0.55),
        (0.152, -0.081, -0.07, -0.47, 0.105),
    ),
}


def _descriptor(feature: np.ndarray) -> np.ndarray:
    logr = feature[:3]
    lum_piece, lum_table = (math.log(max(v, 1e-4)) for v in feature[3:5])
    return np.array([*(logr - logr.mean()), 0.5 * logr.mean(), lum_piece, lum_table])


def color_descriptor(piece_bgr: np.ndarray, table_bgr: np.ndarray) -> np.ndarray:
    """The prototypes' descriptor of a piece's pixels (N, 3) and the table behind them; its first three values
    are the chromaticity of the log ratio (what ``pyramids_palette`` compares between pieces of one
    photo), its last the table's log luminance (what the prototypes' means are read at)."""
    return _descriptor(color_feature(piece_bgr, table_bgr))


def descriptor_scores(x: np.ndarray) -> dict[str, float]:
    """Gaussian negative log-likelihood of each plastic for a descriptor, its mean moved to the descriptor's
    table luminance (its last value)."""
    x = np.asarray(x, float)
    out = {}
    for name, (mu, sd, slope) in PROTOTYPES.items():
        mu = np.asarray(mu) + np.asarray(slope) * (x[5] - TABLE_LOG_LUM_REF)
        sd = np.asarray(sd)
        out[name] = float(0.5 * np.sum(((x[:5] - mu) / sd) ** 2) + np.sum(np.log(sd)))
    return out


def color_scores(piece_bgr: np.ndarray, table_bgr: np.ndarray) -> dict[str, float]:
    """Gaussian negative log-likelihood of each plastic for a piece's pixels (N, 3) and the table behind them."""
    return descriptor_scores(color_descriptor(piece_bgr, table_bgr))


def classify_color(piece_bgr: np.ndarray, table_bgr: np.ndarray, allowed=None) -> tuple[str, float]:
    """Best colour and a confidence: the posterior of the best against the runner-up."""
    return classify_descriptor(color_descriptor(piece_bgr, table_bgr), allowed)


def classify_descriptor(x: np.ndarray, allowed=None) -> tuple[str, float]:
    """``classify_color`` of a descriptor already measured."""
    scores = descriptor_scores(x)
    if allowed:
        scores = {k: v for k, v in scores.items() if k in allowed} or scores
    ranked = sorted(scores.items(), key=lambda kv: kv[1])
    best, d0 = ranked[0]
    d1 = ranked[1][1] if len(ranked) > 1 else d0 + 10.0
    conf = float(1.0 / (1.0 + math.exp(-(d1 - d0))))  # two-class posterior, 0.5 .. 1
    return best, float(np.clip(2.0 * conf - 1.0, 0.0, 1.0))


OPAQUE = ("black", "white")


def classify_stacked_color(
    cap_bgr: np.ndarray, under_bgr: np.ndarray, table_bgr: np.ndarray, allowed=None
) -> tuple[str, float, str | None]:
    """Colour of a piece stacked on another, and a rival colour when the photo does not settle it.

    The cap is seen against the table through both pieces (``table_bgr``), or against the lower piece alone
    (``under_bgr``). Opaque plastic shows its own lightness whatever lies beneath, so a black or white verdict
    against the table stands. A translucent cap is named from the table (the upper walls, nearest the camera,
    dominate its tint and scatter); if the lower piece as background names another plastic, that plastic is
    returned as the rival and the caller flags the piece.
    """
    color, conf = classify_color(cap_bgr, table_bgr, allowed)
    if color in OPAQUE:
        return color, conf, None
    rival, _ = classify_color(cap_bgr, under_bgr, allowed)
    return color, conf, (rival if rival != color else None)
