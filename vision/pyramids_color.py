"""Pyramid colour from how the piece changes the table seen through or behind it.

A translucent wall multiplies the light by its transmittance ``T`` once per crossing; the table under a hollow
piece is seen through two to four walls, so the ratio photo / table reference (linear RGB) is about ``T**k``:
its chromaticity is fixed per plastic while its mean grows with the path. Opaque plastic instead has its own
lightness: black is darker than any table shadow, white lighter than the wood. Each plastic is a Gaussian
prototype of that descriptor, measured on photos with truth (below).
"""

from __future__ import annotations

import math

import numpy as np

COLORS = ("red", "yellow", "green", "blue", "purple", "orange", "cyan", "clear", "black", "white")


def _linear(bgr: np.ndarray) -> np.ndarray:
    x = np.asarray(bgr, float)[..., ::-1] / 255.0
    return np.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4)


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


# Prototypes of the colour feature (chromaticity of the log ratio: R, G, B minus their mean; half the mean log
# ratio; log of the piece's linear luminance): mean and spread per plastic, measured on the committed sample
# photos plus 12 training renders (``generate_ice_tiddlywinks`` with ``default_rng([4242, i])``, a seed the
# bench does not use): 281 visible pieces, leave-one-out accuracy 95 %.
PROTOTYPES: dict[str, tuple[tuple[float, ...], tuple[float, ...]]] = {
    "black": ((-0.707, -0.054, 0.761, -1.175, -3.968), (0.181, 0.15, 0.168, 0.298, 0.347)),
    "blue": ((-1.266, -0.174, 1.44, -0.482, -2.872), (0.217, 0.15, 0.228, 0.224, 0.29)),
    "clear": ((-0.256, -0.062, 0.318, -0.166, -1.492), (0.177, 0.15, 0.152, 0.246, 0.414)),
    "cyan": ((-1.547, 0.414, 1.133, -0.539, -2.795), (0.225, 0.15, 0.15, 0.184, 0.367)),
    "green": ((-1.089, 0.549, 0.539, -0.702, -2.904), (0.153, 0.15, 0.15, 0.298, 0.32)),
    "orange": ((0.675, -0.244, -0.431, -0.455, -2.165), (0.27, 0.15, 0.164, 0.253, 0.36)),
    "purple": ((-0.392, -0.742, 1.134, -0.685, -2.672), (0.19, 0.15, 0.15, 0.284, 0.316)),
    "red": ((0.734, -0.731, -0.002, -0.6, -2.383), (0.329, 0.173, 0.177, 0.306, 0.328)),
    "white": ((-0.538, -0.052, 0.59, 0.107, -0.904), (0.15, 0.15, 0.15, 0.367, 0.589)),
    "yellow": ((0.342, 0.194, -0.536, -0.36, -2.072), (0.274, 0.15, 0.191, 0.286, 0.398)),
}


def _descriptor(feature: np.ndarray) -> np.ndarray:
    logr = feature[:3]
    return np.array([*(logr - logr.mean()), 0.5 * logr.mean(), math.log(max(feature[3], 1e-4))])


def color_descriptor(piece_bgr: np.ndarray, table_bgr: np.ndarray) -> np.ndarray:
    """The prototypes' descriptor of a piece's pixels (N, 3) and the table behind them; its first three values
    are the chromaticity of the log ratio (what ``pyramids_palette`` compares between pieces of one photo)."""
    return _descriptor(color_feature(piece_bgr, table_bgr))


def descriptor_scores(x: np.ndarray) -> dict[str, float]:
    """Gaussian negative log-likelihood of each plastic for a descriptor."""
    out = {}
    for name, (mu, sd) in PROTOTYPES.items():
        mu, sd = np.asarray(mu), np.asarray(sd)
        out[name] = float(0.5 * np.sum(((x - mu) / sd) ** 2) + np.sum(np.log(sd)))
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
