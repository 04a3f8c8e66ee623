"""Pyramid colour from how the piece changes the table seen through or behind it.

A translucent wall multiplies the light by its transmittance ``T`` once per crossing; the table under a hollow
piece is seen through two to four walls, so the ratio photo / table reference (linear RGB) is about ``T**k``:
its log is a fixed direction per plastic. Opaque plastic instead has its own lightness: black is darker than
any table shadow, white lighter than the wood. The reference transmittances are those of Looney Labs plastic
as measured for the simulator's renders (linear RGB, one wall at normal incidence).
"""

from __future__ import annotations

import math

import numpy as np

TRANSMITTANCE_RGB: dict[str, tuple[float, float, float]] = {
    "red": (0.82, 0.05, 0.06),
    "yellow": (0.88, 0.66, 0.04),
    "green": (0.06, 0.50, 0.12),
    "blue": (0.05, 0.16, 0.78),
    "purple": (0.36, 0.05, 0.56),
    "orange": (0.92, 0.28, 0.03),
    "cyan": (0.04, 0.58, 0.72),
    "clear": (0.92, 0.92, 0.90),
}
OPAQUE = ("black", "white")
COLORS = tuple(TRANSMITTANCE_RGB) + OPAQUE


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
# photos (sample_images/ice_tiddlywinks, 139 visible pieces; white from one piece, so its spread is a guess).
PROTOTYPES: dict[str, tuple[tuple[float, ...], tuple[float, ...]]] = {
    "black": ((-0.686, -0.049, 0.734, -1.136, -3.92), (0.211, 0.15, 0.209, 0.243, 0.324)),
    "blue": ((-1.203, -0.138, 1.341, -0.471, -2.886), (0.219, 0.15, 0.236, 0.22, 0.299)),
    "clear": ((-0.212, -0.072, 0.284, -0.121, -1.454), (0.21, 0.15, 0.15, 0.165, 0.304)),
    "cyan": ((-1.199, 0.256, 0.943, -0.663, -2.281), (0.398, 0.153, 0.246, 0.15, 0.17)),
    "green": ((-1.079, 0.547, 0.532, -0.673, -2.894), (0.165, 0.15, 0.16, 0.302, 0.338)),
    "orange": ((0.819, -0.297, -0.522, -0.618, -1.852), (0.408, 0.163, 0.26, 0.257, 0.318)),
    "purple": ((-0.471, -0.599, 1.07, -0.558, -2.896), (0.162, 0.15, 0.205, 0.238, 0.331)),
    "red": ((0.784, -0.725, -0.06, -0.573, -2.244), (0.49, 0.27, 0.222, 0.469, 0.295)),
    "white": ((-0.767, -0.001, 0.768, 0.427, -0.719), (0.4, 0.4, 0.4, 0.4, 0.4)),
    "yellow": ((0.221, 0.195, -0.415, -0.218, -2.006), (0.253, 0.15, 0.262, 0.251, 0.402)),
}


def _descriptor(feature: np.ndarray) -> np.ndarray:
    logr = feature[:3]
    return np.array([*(logr - logr.mean()), 0.5 * logr.mean(), math.log(max(feature[3], 1e-4))])


def color_scores(piece_bgr: np.ndarray, table_bgr: np.ndarray) -> dict[str, float]:
    """Gaussian negative log-likelihood of each plastic for a piece's pixels (N, 3) and the table behind them."""
    x = _descriptor(color_feature(piece_bgr, table_bgr))
    out = {}
    for name, (mu, sd) in PROTOTYPES.items():
        mu, sd = np.asarray(mu), np.asarray(sd)
        out[name] = float(0.5 * np.sum(((x - mu) / sd) ** 2) + np.sum(np.log(sd)))
    return out


def classify_color(piece_bgr: np.ndarray, table_bgr: np.ndarray, allowed=None) -> tuple[str, float]:
    """Best colour and a confidence: the posterior of the best against the runner-up."""
    scores = color_scores(piece_bgr, table_bgr)
    if allowed:
        scores = {k: v for k, v in scores.items() if k in allowed} or scores
    ranked = sorted(scores.items(), key=lambda kv: kv[1])
    best, d0 = ranked[0]
    d1 = ranked[1][1] if len(ranked) > 1 else d0 + 10.0
    conf = float(1.0 / (1.0 + math.exp(-(d1 - d0))))  # two-class posterior, 0.5 .. 1
    return best, float(np.clip(2.0 * conf - 1.0, 0.0, 1.0))
