"""Foreground of pyramids on a table: colour difference from the table's own local texture.

Translucent plastic changes the table's chroma (and darkens it); opaque black and white change its lightness.
The table reference is a median filter of the photo over a window several pieces wide, so wood grain and
lighting gradients stay in the reference and a piece does not.
"""

from __future__ import annotations

import cv2
import numpy as np

# Lightness counts less than chroma: soft shadows and grain darken the wood without changing its hue.
LIGHTNESS_WEIGHT = 0.6
# Extra log-ratio spread across RGB allowed in deep shade (photo/table < ~0.5): measured 0.45-0.63 in the
# shadows of translucent pieces on the simulator's renders, against 1.5-2.8 on the pieces themselves; 0.3-0.6
# tried on 7 photos, 0.45 best (pose 72/85, size 67/85).
DEEP_SHADE_EXTRA_SPREAD = 0.45


def table_reference_bgr(frame_bgr: np.ndarray, kernel_px: int) -> np.ndarray:
    """Median-filtered table colour (same size as the frame), computed at quarter resolution."""
    h, w = frame_bgr.shape[:2]
    small = cv2.resize(frame_bgr, (max(w // 4, 1), max(h // 4, 1)), interpolation=cv2.INTER_AREA)
    k = max(3, (kernel_px // 4) | 1)
    ref = cv2.medianBlur(small, k)
    ref = cv2.medianBlur(ref, k)  # twice: pieces clustered in a group leave no residue
    return cv2.resize(ref, (w, h), interpolation=cv2.INTER_LINEAR)


def difference_map(frame_bgr: np.ndarray, ref_bgr: np.ndarray) -> np.ndarray:
    """Per-pixel Lab distance (L weighted by ``LIGHTNESS_WEIGHT``) between the photo and the table reference."""
    lab = cv2.cvtColor(frame_bgr.astype(np.float32) / 255.0, cv2.COLOR_BGR2Lab)
    ref = cv2.cvtColor(ref_bgr.astype(np.float32) / 255.0, cv2.COLOR_BGR2Lab)
    d = lab - ref
    return np.sqrt((LIGHTNESS_WEIGHT * d[..., 0]) ** 2 + d[..., 1] ** 2 + d[..., 2] ** 2)


def log_ratio(frame_bgr: np.ndarray, ref_bgr: np.ndarray) -> np.ndarray:
    """log(photo / table reference) per channel in linear RGB (order B, G, R): light scaled or tinted on its
    way to the camera is a sum here, so shade is a grey offset and a tint a fixed chromaticity."""
    x = frame_bgr.astype(np.float32) / 255.0
    r = ref_bgr.astype(np.float32) / 255.0
    lin = np.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4)
    lin_r = np.where(r <= 0.04045, r / 12.92, ((r + 0.055) / 1.055) ** 2.4)
    return np.log((lin + 2e-3) / (lin_r + 2e-3))


def shadow_mask(frame_bgr: np.ndarray, ref_bgr: np.ndarray, spread_max: float, darkest_ratio: float) -> np.ndarray:
    """Pixels that look like the table in shade: every channel dimmed by about the same factor.

    A shadow scales the light reaching the wood, so the photo / reference ratio (linear RGB) is grey and
    between ``darkest_ratio`` and 1; plastic tints it (translucent) or is far darker (black) or lighter (white).
    """
    ratio = log_ratio(frame_bgr, ref_bgr)
    spread = ratio.max(axis=2) - ratio.min(axis=2)
    mean = ratio.mean(axis=2)
    # deep shade may keep a little tint (light through a translucent neighbour, coloured bounce); pale shade
    # must be grey, or a clear piece's faint tint would be taken for it
    allowed = spread_max + DEEP_SHADE_EXTRA_SPREAD * np.clip((-mean - 0.3) / 0.4, 0.0, 1.0)
    return (spread < allowed) & (mean < -0.05) & (mean > np.log(darkest_ratio))


def foreground_mask(
    diff: np.ndarray, threshold_sigma: float, min_threshold: float, shadow: np.ndarray | None = None,
    max_hole_px: int | None = None,
) -> tuple[np.ndarray, float]:
    """Binary mask of pixels that differ from the table by more than a robust noise threshold.

    Holes are filled (the table seen through a clear piece's middle); with ``max_hole_px`` only holes up to
    that area, so that the outline of something far larger than a piece (a tape's two edges) is not filled
    into a solid strip.
    """
    med = float(np.median(diff))
    mad = float(np.median(np.abs(diff - med))) * 1.4826
    thr = max(min_threshold, med + threshold_sigma * mad)
    mask = (diff > thr).astype(np.uint8)
    if shadow is not None:
        mask[shadow] = 0
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5)))
    # fill holes: a clear wall lets the table show through the middle of a piece
    if max_hole_px is not None:
        return _fill_small_holes(mask, max_hole_px), thr
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    filled = np.zeros_like(mask)
    cv2.drawContours(filled, contours, -1, 1, thickness=cv2.FILLED)
    return filled, thr


def _fill_small_holes(mask: np.ndarray, max_hole_px: int) -> np.ndarray:
    """``mask`` with every enclosed background region of at most ``max_hole_px`` pixels set."""
    _, labels, stats, _ = cv2.connectedComponentsWithStats((mask == 0).astype(np.uint8), connectivity=4)
    h, w = mask.shape
    x, y = stats[:, cv2.CC_STAT_LEFT], stats[:, cv2.CC_STAT_TOP]
    bw, bh = stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT]
    enclosed = (x > 0) & (y > 0) & (x + bw < w) & (y + bh < h)  # not touching the border: a hole
    small = enclosed & (stats[:, cv2.CC_STAT_AREA] <= max_hole_px)
    small[0] = False  # label 0: the mask's own pixels
    out = mask.copy()
    out[small[labels]] = 1
    return out


def chroma_zscore(frame_bgr: np.ndarray, ref_bgr: np.ndarray) -> np.ndarray:
    """How far each pixel's tint departs from the table's, in units of the table's own tint noise.

    Plastic multiplies the light from the table by its transmittance, so the photo / table ratio (linear RGB)
    of a translucent piece has a chromaticity however faint the piece; grain, shade and JPEG leave that ratio
    nearly grey. The ratio's chromaticity (log ratio minus its mean over RGB) is scored against its robust
    spread over the whole photo, most of which is table: a faint yellow on orange wood, lost in a Lab distance
    dominated by lightness, stands out here.
    """
    ratio = log_ratio(frame_bgr, ref_bgr)
    chroma = (ratio - ratio.mean(axis=2, keepdims=True))[..., :2]
    sample = chroma.reshape(-1, 2)[::7]
    med = np.median(sample, axis=0)
    mad = np.maximum(np.median(np.abs(sample - med), axis=0) * 1.4826, 1e-3)
    return np.sqrt((((chroma - med) / mad) ** 2).sum(axis=2) / 2.0)


def uncertain_mask(
    certain: np.ndarray,
    unshaded: np.ndarray,
    chroma_z: np.ndarray,
    chroma_z_min: float,
    reach_px: int,
) -> np.ndarray:
    """Pixels next to the pieces that may be plastic or table: the third class of a three-way segmentation.

    Grey darkening (``unshaded`` minus ``certain``: cast shade, or a clear or pale wall that only dims the
    table) and a faint tint (``chroma_z`` above ``chroma_z_min`` but under the strict threshold: a pale piece,
    or the tinted shadow of a translucent one) cannot be told apart pixel by pixel. Within ``reach_px`` of a
    certain piece pixel they are left for the silhouette fit to explain (it neither rewards nor penalises a
    hypothesis for covering them); anywhere else they are table.
    """
    cand = ((unshaded > 0) | (chroma_z > chroma_z_min)) & (certain == 0)
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * reach_px + 1, 2 * reach_px + 1))
    near = cv2.dilate(certain, k) > 0
    out = cv2.morphologyEx((cand & near).astype(np.uint8), cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
    out[certain > 0] = 0  # the opening's dilation may step back onto certain pixels
    return out
