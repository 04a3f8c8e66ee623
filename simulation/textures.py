"""Procedural textures in millimetres: mat felt (fibres, pilling, dye blotches), wooden or cloth table tops.

Textures are float32 images addressed in mm through `Texture.sample`, which uses ``cv2.remap`` (bilinear).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

_REMAP_COLS = 1024


@dataclass
class Texture:
    """A float32 image covering the rectangle ``origin_mm`` .. ``origin_mm + size * texel_mm`` (x right, y up)."""

    image: np.ndarray  # (rows, cols) or (rows, cols, C)
    origin_mm: tuple[float, float]  # table (x, y) of the centre of texel (row = last, col = 0)
    texel_mm: float

    def sample(self, x_mm: np.ndarray, y_mm: np.ndarray) -> np.ndarray:
        n = len(x_mm)
        rows = self.image.shape[0]
        u = ((np.asarray(x_mm) - self.origin_mm[0]) / self.texel_mm).astype(np.float32)
        v = (rows - 1 - (np.asarray(y_mm) - self.origin_mm[1]) / self.texel_mm).astype(np.float32)
        pad = (-n) % _REMAP_COLS
        u = np.concatenate([u, np.zeros(pad, np.float32)]).reshape(-1, _REMAP_COLS)
        v = np.concatenate([v, np.zeros(pad, np.float32)]).reshape(-1, _REMAP_COLS)
        out = []
        step = 16000  # remap's map height must stay below SHRT_MAX
        for i in range(0, len(u), step):
            out.append(cv2.remap(self.image, u[i:i + step], v[i:i + step], cv2.INTER_LINEAR,
                                 borderMode=cv2.BORDER_REFLECT_101))
        res = np.concatenate(out, axis=0)
        if res.ndim == 3:
            return res.reshape(-1, res.shape[2])[:n]
        return res.reshape(-1)[:n]


def _noise(rng: np.random.Generator, shape: tuple[int, int], sigma_px: float) -> np.ndarray:
    """Zero-mean, unit-std Gaussian-filtered noise."""
    a = rng.standard_normal(shape, dtype=np.float32)
    if sigma_px > 0.3:
        a = cv2.GaussianBlur(a, (0, 0), sigma_px)
    return (a - a.mean()) / (a.std() + 1e-8)


def _coarse_noise(rng: np.random.Generator, shape: tuple[int, int], cells: int) -> np.ndarray:
    """Smooth large-scale noise: a small random grid upsampled bicubically (via an 8x smaller stage)."""
    h, w = shape
    ch, cw = max(2, h * cells // max(h, w)), max(2, w * cells // max(h, w))
    small = rng.standard_normal((ch + 2, cw + 2)).astype(np.float32)
    mh, mw = max(h // 8, ch + 2), max(w // 8, cw + 2)
    mid = cv2.resize(small, (mw + 2 * mw // cw, mh + 2 * mh // ch), interpolation=cv2.INTER_CUBIC)
    mid = mid[mh // ch: mh // ch + mh, mw // cw: mw // cw + mw]
    big = cv2.resize(mid, (w, h), interpolation=cv2.INTER_LINEAR)
    return (big - big.mean()) / (big.std() + 1e-8)


def felt_texture(rng: np.random.Generator, *, size_mm: tuple[float, float], texel_mm: float = 0.5,
                 fibre_count_per_m2: float = 60000.0) -> Texture:
    """Luminance modulation (mean 1) of felt: fine grain, short random fibres, pilling and dye blotches."""
    w_mm, h_mm = size_mm
    cols, rows = int(np.ceil(w_mm / texel_mm)) + 2, int(np.ceil(h_mm / texel_mm)) + 2
    grain = _noise(rng, (rows, cols), 0.6) * 0.06
    fib = np.zeros((rows, cols), np.float32)
    n_fib = int(fibre_count_per_m2 * w_mm * h_mm / 1e6)
    xs = rng.uniform(0, cols, n_fib)
    ys = rng.uniform(0, rows, n_fib)
    ang = rng.uniform(0, np.pi, n_fib)
    ln = rng.uniform(1.5, 5.0, n_fib) / texel_mm
    val = rng.normal(0.0, 1.0, n_fib)
    x2 = xs + np.cos(ang) * ln
    y2 = ys + np.sin(ang) * ln
    sh = 4  # sub-pixel line positions
    for i in range(n_fib):
        cv2.line(fib, (int(xs[i] * 16), int(ys[i] * 16)), (int(x2[i] * 16), int(y2[i] * 16)),
                 float(val[i]), 1, cv2.LINE_AA, sh)
    fib = cv2.GaussianBlur(fib, (0, 0), 0.5)
    fib *= 0.05 / (fib.std() + 1e-8)
    pills = _noise(rng, (rows, cols), 2.5) * 0.035
    blotch = _coarse_noise(rng, (rows, cols), 14) * 0.02 + _coarse_noise(rng, (rows, cols), 4) * 0.015
    img = (1.0 + grain + fib + pills + blotch).astype(np.float32)
    return Texture(image=img, origin_mm=(-w_mm / 2, -h_mm / 2), texel_mm=texel_mm)


def wood_texture(rng: np.random.Generator, *, size_mm: tuple[float, float], texel_mm: float = 1.0) -> Texture:
    """Albedo (RGB, linear) of a varnished wooden table: warped growth rings along a random direction."""
    w_mm, h_mm = size_mm
    cols, rows = int(np.ceil(w_mm / texel_mm)), int(np.ceil(h_mm / texel_mm))
    yy, xx = np.mgrid[0:rows, 0:cols].astype(np.float32)
    ang = rng.uniform(0, np.pi)
    along = np.cos(ang) * xx + np.sin(ang) * yy
    across = -np.sin(ang) * xx + np.cos(ang) * yy
    # Growth rings: the phase wanders with large-scale noise, so rings bunch, widen and break like real grain.
    period = rng.uniform(5.0, 11.0) / texel_mm
    phase = (across + _coarse_noise(rng, (rows, cols), 3) * 2.0 * period
             + _coarse_noise(rng, (rows, cols), 12) * 0.25 * period) / period
    frac = phase - np.floor(phase)
    rings = np.clip(frac ** 3 * 1.2, 0, 1)  # late wood: a dark band at the end of each ring
    # Pores and fibres: noise stretched along the grain.
    fine = rng.standard_normal((rows, cols)).astype(np.float32)
    long_sigma, short_sigma = 10.0, 0.6
    c, s_ = abs(math.cos(ang)), abs(math.sin(ang))
    fine = cv2.GaussianBlur(fine, (0, 0), sigmaX=long_sigma * c + short_sigma * s_ + 0.3,
                            sigmaY=long_sigma * s_ + short_sigma * c + 0.3)
    fine /= fine.std() + 1e-6
    large = _coarse_noise(rng, (rows, cols), 4)
    t = np.clip(0.55 - 0.3 * rings + 0.12 * fine + 0.12 * large + 0.0 * along, 0, 1)
    tones = [((0.16, 0.06, 0.025), (0.30, 0.13, 0.05)),
             ((0.30, 0.17, 0.08), (0.48, 0.30, 0.15)),
             ((0.08, 0.035, 0.015), (0.17, 0.08, 0.035))]
    dark, light = tones[int(rng.integers(len(tones)))]
    dark, light = np.asarray(dark, np.float32), np.asarray(light, np.float32)
    img = dark[None, None, :] * (1 - t[..., None]) + light[None, None, :] * t[..., None]
    return Texture(image=img.astype(np.float32), origin_mm=(-w_mm / 2, -h_mm / 2), texel_mm=texel_mm)


def cloth_texture(rng: np.random.Generator, *, size_mm: tuple[float, float], texel_mm: float = 1.0) -> Texture:
    """Albedo of a tablecloth: woven fine texture with folds and a plain colour."""
    w_mm, h_mm = size_mm
    cols, rows = int(np.ceil(w_mm / texel_mm)), int(np.ceil(h_mm / texel_mm))
    base = np.asarray([(0.55, 0.52, 0.45), (0.12, 0.13, 0.22), (0.35, 0.08, 0.07), (0.62, 0.62, 0.6)]
                      [int(rng.integers(4))], np.float32)
    weave = _noise(rng, (rows, cols), 0.5) * 0.05
    folds = _coarse_noise(rng, (rows, cols), 10) * 0.06
    mod = 1.0 + weave + folds
    return Texture(image=(base[None, None, :] * mod[..., None]).astype(np.float32),
                   origin_mm=(-w_mm / 2, -h_mm / 2), texel_mm=texel_mm)
