"""Mat and paint colour models, foreground, and wink colour classes in a white-balanced Lab space.

Physics rather than fixed thresholds:

* the background is the mat's own local colour (a coarse median image, so lighting gradients are followed),
  or the mat-to-paint mixture inside the known baseline bands, or the table outside the mat;
* a cast shadow scales all three channels: sRGB chromaticity ``bgr / sum`` is nearly invariant to it
  (a power-law gamma keeps channel ratios), so shadows stay background while a wink of another hue, or a
  same-hue wink that is lighter or more saturated than the felt (green on green), becomes foreground;
* thresholds are multiples of the mat's own measured noise (robust MAD), with small physical floors;
* colour classes come from CIE Lab hue after white-balancing on the baseline paint (or, without paint, on
  the mat's grey-world mean), with the hue prototypes re-centred per image on the pixels themselves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from geometry import tiddlywinks as tw
from geometry.constants import MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM
from vision.ortho import OrthoGrid

COLOR_NAMES: tuple[str, ...] = ("blue", "green", "red", "yellow")
CLASS_BG = 0
CLASS_NEUTRAL = 5
#: CIE Lab hue angles (deg) of saturated sRGB-like pigments, the starting prototypes.
HUE_PROTOTYPES_DEG: dict[str, float] = {"blue": 285.0, "green": 150.0, "red": 35.0, "yellow": 90.0}


@dataclass(frozen=True, slots=True)
class ColourParams:
    """Foreground and colour-class parameters (thresholds in units of the mat's own noise, with floors)."""

    background_cell_mm: float = 8.0  # cell of the coarse background image
    background_median_cells: int = 9  # median window (72 mm: larger than a two-wink squop)
    noise_k: float = 7.0  # foreground threshold in robust sigmas of the mat
    chroma_floor: float = 0.018  # minimum chromaticity distance (sRGB bgr/sum units)
    light_floor: float = 0.10  # minimum relative brightening
    dark_ratio: float = 0.42  # darker than this fraction of the local mat: a dark object, not a shadow
    min_wink_chroma: float = 14.0  # Lab C* below which a foreground pixel has no wink hue (pot, glare)
    hue_adapt_deg: float = 25.0  # how far a prototype may move to this image's pixels
    baseline_band_mm: float = 12.0  # full width of the band around a painted baseline
    paint_flank_mm: float = 9.0  # felt read beside a baseline's centre line: beyond the band's half-width
    mat_edge_band_mm: float = 1.5  # mixed mat/table pixels just inside the mat edge
    mat_side_band_mm: float = 7.0  # outside the edge: the mat's own thickness (side wall) and its shadow
    mat_hue_min_departure: float = 2.5  # winks of the felt's own hue: departure in threshold units
    mat_hue_min_ratio: float = 0.8  # ... and at least this bright relative to the felt
    core_ratio: float = 0.5  # blend fraction above which a pixel is wink core (gets a colour class)
    core_window_px: int = 7  # neighbourhood of the strongest departure (about two blur widths)
    search_table: bool = False  # look for foreground on the table top beyond the mat's side band
    opening_px: int = 3  # per-class opening that removes one-pixel rings of blended outline colours


@dataclass(slots=True)
class ColourScene:
    labels: np.ndarray  # (H, W) uint8: 0 background, 1..4 COLOR_NAMES, 5 neutral foreground
    foreground: np.ndarray  # (H, W) bool
    hue_centres_deg: dict[str, float]
    gains_bgr: np.ndarray  # white balance gains
    mat_bgr: np.ndarray  # median mat colour (0..1)
    paint_bgr: np.ndarray | None
    mat_noise: tuple[float, float]  # robust sigma of chromaticity distance and brightness ratio
    background_bgr: np.ndarray  # (H, W, 3) uint8 local background
    mat_mask: np.ndarray
    edge_band: np.ndarray
    mat_class: int = 0  # the wink class the felt's own hue falls in (0: none, e.g. grey felt)


def _polygon_mask(grid: OrthoGrid, poly_xy: np.ndarray) -> np.ndarray:
    m = np.zeros((grid.height_px, grid.width_px), np.uint8)
    cr = grid.ortho_from_table(poly_xy)
    cv2.fillPoly(m, [np.round(cr * 16).astype(np.int32)], 1, lineType=cv2.LINE_8, shift=4)
    return m.astype(bool)


def _line_band_mask(grid: OrthoGrid, half_width_mm: float) -> np.ndarray:
    m = np.zeros((grid.height_px, grid.width_px), np.uint8)
    th = max(1, int(round(2 * half_width_mm / grid.mm_per_px)))
    for sx in (1, -1):
        for sy in (1, -1):
            seg = np.asarray(tw.baseline_segment((sx, sy)).coords)
            cr = np.round(grid.ortho_from_table(seg)).astype(int)
            cv2.line(m, tuple(map(int, cr[0])), tuple(map(int, cr[1])), 1, th)
    return m.astype(bool)


#: From this many hues on, ``hue_distance_deg`` folds them by a masked subtraction instead of numpy's remainder.
_FOLD_MIN_HUES = 64


def hue_distance_deg(a: np.ndarray, b: float) -> np.ndarray:
    """Angular distance (deg, 0..180) of hues ``a`` in [0, 360) from hue ``b`` in [0, 360)."""
    x = np.asarray(a) - b + 180.0
    if x.size < _FOLD_MIN_HUES or not -360.0 < x.min() <= x.max() < 720.0:
        return np.abs(x % 360.0 - 180.0)
    # within (-360, 720) the remainder by 360 is x less 360 above 360 and x plus 360 below 0, the very operations
    # numpy's remainder does there (the subtraction exact), at half its cost on the thousands of a colour scene's
    # foreground pixels
    np.subtract(x, 360.0, out=x, where=x >= 360.0)
    np.add(x, 360.0, out=x, where=x < 0.0)
    x -= 180.0
    return np.abs(x, out=x)


def median_u8_scaled(values_u8: np.ndarray) -> np.ndarray:
    """``np.median(values_u8.astype(np.float32) / 255.0, axis=0)`` of 8-bit samples (N,) or (N, C), from their
    counts: the middle ranks read off a 256-bin histogram (no partition of the samples), and the same float32
    value (the mean of the two middle samples when N is even)."""
    v = values_u8.reshape(len(values_u8), -1)
    n = len(v)
    half = np.float32(0.5)
    out = np.empty(v.shape[1], np.float32)
    for c in range(v.shape[1]):
        cum = np.cumsum(np.bincount(v[:, c], minlength=256))
        hi = np.float32(np.searchsorted(cum, n // 2, side="right")) / np.float32(255.0)
        if n % 2:
            out[c] = hi
        else:
            lo = np.float32(np.searchsorted(cum, n // 2 - 1, side="right")) / np.float32(255.0)
            out[c] = (lo + hi) * half
    return out if values_u8.ndim > 1 else out[0]


def _median_background(small: np.ndarray, valid: np.ndarray, ksize: int,
                       small_u8: np.ndarray | None = None) -> np.ndarray:
    """Median-filtered coarse image; invalid cells, and cells that stand out (winks), do not vote.

    Two passes: the first median image is the reference; cells departing from it by more than four robust
    sigmas of the cell-to-reference scatter (a cluster of winks waiting in a corner, the pot) are replaced by
    the reference before the second median, so a crowd of winks cannot pull the felt's colour.
    """
    img = small.copy()
    if small_u8 is not None:  # ``small`` is ``small_u8 / 255``: the same medians from the 8-bit counts
        fill = median_u8_scaled(small_u8[valid] if valid.any() else small_u8.reshape(-1, 3)).astype(small.dtype)
    else:
        sel = small[valid] if valid.any() else small.reshape(-1, 3)
        fill = np.array([np.median(sel[:, c]) for c in range(sel.shape[1])], small.dtype)
    img[~valid] = fill
    k = ksize if ksize % 2 == 1 else ksize + 1
    ref = _median_image(img, k)
    e = img - ref
    dev = np.sqrt(e[..., 0] * e[..., 0] + e[..., 1] * e[..., 1] + e[..., 2] * e[..., 2])  # the norm's sums, in order
    if valid.any():
        sig = 1.4826 * float(np.median(dev[valid])) + 1e-3
        out = valid & (dev > max(4.0 * sig, 0.03))
        out = cv2.dilate(out.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool) & valid
        if out.any():
            img[out] = ref[out]
            ref = _median_again(img, ref, out, k)
    return ref


def _baseline_samples(ortho_bgr: np.ndarray, grid: OrthoGrid, offset_mm: float = 0.0) -> np.ndarray:
    """Colours (0..1) along the painted baselines' centre lines moved ``offset_mm`` to one side, ``(480, 3)``;
    NaN for a point off the orthophoto."""
    h, w = ortho_bgr.shape[:2]
    t = np.linspace(0.05, 0.95, 120)[:, None]
    out = []
    for sx in (1, -1):
        for sy in (1, -1):
            seg = np.asarray(tw.baseline_segment((sx, sy)).coords)
            along = (seg[1] - seg[0]) / np.linalg.norm(seg[1] - seg[0])
            pts = seg[0] + t * (seg[1] - seg[0]) + offset_mm * np.array([-along[1], along[0]])
            cr = np.round(grid.ortho_from_table(pts)).astype(int)
            ok = (cr[:, 0] >= 0) & (cr[:, 0] < w) & (cr[:, 1] >= 0) & (cr[:, 1] < h)
            v = np.full((len(pts), 3), np.nan, np.float32)
            v[ok] = ortho_bgr[cr[ok, 1], cr[ok, 0]].astype(np.float32) / 255.0
            out.append(v)
    return np.concatenate(out)


def _lighter_than_flanks(ortho_bgr: np.ndarray, grid: OrthoGrid, centre: np.ndarray, flank_mm: float) -> float:
    """Median brightness (channel sum) of the baselines' centre-line samples over that of the felt ``flank_mm`` to
    either side of each (beyond the paint and its blur)."""
    flanks = 0.5 * (_baseline_samples(ortho_bgr, grid, flank_mm) + _baseline_samples(ortho_bgr, grid, -flank_mm))
    ok = np.isfinite(centre.sum(axis=1)) & (np.nan_to_num(flanks.sum(axis=1)) > 0)
    if not ok.any():
        return 1.0
    return float(np.median(centre[ok].sum(axis=1) / flanks[ok].sum(axis=1)))


def _median_image(a: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` x ``k`` median of a (0..1) float image, taken on its 8-bit quantisation."""
    u8 = np.clip(a * 255.0 + 0.5, 0, 255).astype(np.uint8)
    return cv2.medianBlur(u8, k).astype(np.float32) / 255.0


def _median_again(img: np.ndarray, ref: np.ndarray, changed: np.ndarray, k: int) -> np.ndarray:
    """``_median_image(img, k)`` when ``ref`` is that of the image before the ``changed`` cells were replaced.

    Only cells whose window holds a changed cell can differ; those are recomputed on patches reaching ``k // 2``
    beyond them (an image edge keeps its replicated border), the same medians at a fraction of the cost.
    """
    h, w = changed.shape
    r = k // 2
    near = cv2.dilate(changed.view(np.uint8), np.ones((k, k), np.uint8))
    _, _, stats, _ = cv2.connectedComponentsWithStats(near, connectivity=8)
    boxes = stats[1:, :4]
    if int(((boxes[:, 2] + 2 * r) * (boxes[:, 3] + 2 * r)).sum()) > h * w // 2:
        return _median_image(img, k)
    out = ref.copy()
    for x, y, bw, bh in boxes.tolist():
        y0, y1, x0, x1 = max(y - r, 0), min(y + bh + r, h), max(x - r, 0), min(x + bw + r, w)
        out[y:y + bh, x:x + bw] = _median_image(img[y0:y1, x0:x1], k)[y - y0:y - y0 + bh, x - x0:x - x0 + bw]
    return out


def _upsample(small: np.ndarray, cell: int, wh: tuple[int, int]) -> np.ndarray:
    """A coarse background (cells of ``cell`` pixels) back at full size as uint8, the margin left over by whole
    cells filled from the nearest cells."""
    sh, sw = small.shape[:2]
    h, w = sh * cell, sw * cell
    # interpolated straight into the full image, whose margin then repeats its last column and row (the
    # pixels of cv2.copyMakeBorder's BORDER_REPLICATE, without a second full-size image)
    out = np.empty((wh[1], wh[0]) + small.shape[2:], np.uint8)
    cv2.resize(np.clip(small * 255 + 0.5, 0, 255).astype(np.uint8), (w, h), dst=out[:h, :w],
               interpolation=cv2.INTER_LINEAR)
    out[:h, w:] = out[:h, w - 1:w]
    out[h:] = out[h - 1:h]
    return out


@lru_cache(maxsize=4)
def _static_masks(grid: OrthoGrid, edge_band_mm: float, baseline_band_mm: float, side_band_mm: float):
    L, W = MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM
    mat_mask = _polygon_mask(grid, np.array([(-L, W), (L, W), (L, -W), (-L, -W)]))
    eb = edge_band_mm
    inner = _polygon_mask(grid, np.array([(-L + eb, W - eb), (L - eb, W - eb), (L - eb, -W + eb),
                                          (-L + eb, -W + eb)]))
    sb = side_band_mm
    outer = _polygon_mask(grid, np.array([(-L - sb, W + sb), (L + sb, W + sb), (L + sb, -W - sb),
                                          (-L - sb, -W - sb)]))
    band = _line_band_mask(grid, baseline_band_mm / 2)
    stat = inner & ~band
    sub = np.zeros_like(stat)
    sub[::9, ::9] = stat[::9, ::9]
    sample_rc = np.nonzero(sub)
    for m in (mat_mask, inner, outer, band):
        m.setflags(write=False)
    return mat_mask, inner, outer, outer & ~inner, band, sample_rc


@lru_cache(maxsize=4)
def _searched_u8(grid: OrthoGrid, edge_band_mm: float, baseline_band_mm: float, side_band_mm: float,
                 search_table: bool) -> np.ndarray:
    """Where foreground is looked for (1, else 0): off the mat's edge band, and within its side band unless the
    table top is searched too."""
    _, _, outer, edge_band, _, _ = _static_masks(grid, edge_band_mm, baseline_band_mm, side_band_mm)
    m = ~edge_band if search_table else outer & ~edge_band
    m = m.astype(np.uint8)
    m.setflags(write=False)
    return m


@lru_cache(maxsize=4)
def _small_masks(grid: OrthoGrid, edge_band_mm: float, baseline_band_mm: float, side_band_mm: float,
                 size_wh: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """The coarse background image's cells wholly on the mat, and wholly beyond its side band."""
    _, inner, outer, _, _, _ = _static_masks(grid, edge_band_mm, baseline_band_mm, side_band_mm)
    sw, sh = size_wh
    cell = inner.shape[1] // sw  # whole cells, as the coarse image (the margin left over is not a cell)
    inner, outer = inner[:sh * cell, :sw * cell], outer[:sh * cell, :sw * cell]
    small_mat = cv2.resize(inner.astype(np.uint8) * 255, size_wh, interpolation=cv2.INTER_AREA) > 242
    small_out = cv2.resize((~outer).astype(np.uint8) * 255, size_wh, interpolation=cv2.INTER_AREA) > 242
    for m in (small_mat, small_out):
        m.setflags(write=False)
    return small_mat, small_out


def build_colour_scene(ortho_bgr: np.ndarray, grid: OrthoGrid, params: ColourParams = ColourParams(),
                       valid_mask: np.ndarray | None = None) -> ColourScene:
    """Foreground and colour labels of an orthophoto of the mat (``grid`` at wink height)."""
    h, w = ortho_bgr.shape[:2]
    mat_mask, inner, outer, edge_band, band, (fy, fx) = _static_masks(grid, params.mat_edge_band_mm,
                                                                      params.baseline_band_mm,
                                                                      params.mat_side_band_mm)
    if valid_mask is None:
        valid_mask = cv2.cvtColor(ortho_bgr, cv2.COLOR_BGR2GRAY) > 0

    # --- coarse local background: mat and table separately --------------------------------------------
    cell = max(1, int(round(params.background_cell_mm / grid.mm_per_px)))
    sw, sh = max(1, w // cell), max(1, h // cell)
    # whole cells only (an integer area factor takes OpenCV's fast path); the few columns and rows left over at
    # the far margins take the nearest cells' background
    small_u8 = cv2.resize(ortho_bgr[:sh * cell, :sw * cell], (sw, sh), interpolation=cv2.INTER_AREA)
    small = small_u8.astype(np.float32) / 255.0
    small_mat, small_out = _small_masks(grid, params.mat_edge_band_mm, params.baseline_band_mm,
                                        params.mat_side_band_mm, (sw, sh))
    bg_mat = _median_background(small, small_mat, params.background_median_cells, small_u8)
    bg_mat_u8 = _upsample(bg_mat, cell, (w, h))
    if params.search_table:
        # the table top beyond the mat's side band has its own background
        if valid_mask.all():  # the usual case: the whole mat and its margin in the picture
            small_tab = small_out
        else:
            small_tab = cv2.resize((~outer & valid_mask)[:sh * cell, :sw * cell].astype(np.uint8) * 255, (sw, sh),
                                   interpolation=cv2.INTER_AREA) > 242
        bg_tab = _median_background(small, small_tab, params.background_median_cells, small_u8)
        bg_u8 = _upsample(bg_tab, cell, (w, h))
        cv2.copyTo(bg_mat_u8, mat_mask.view(np.uint8), bg_u8)
    else:
        # only the mat is searched (foreground candidates lie inside its edge band): its background serves all
        bg_u8 = bg_mat_u8

    mat_bgr = median_u8_scaled(ortho_bgr[fy, fx]) if len(fy) else np.array([0.3, 0.5, 0.3], np.float32)

    # --- baseline paint: sampled on the known centre lines ---------------------------------------------
    centre_line = _baseline_samples(ortho_bgr, grid)  # NaN off the orthophoto, kept for the flank test
    samples = centre_line[np.isfinite(centre_line[:, 0])]
    paint_bgr = None
    paint_seen = None  # paint told from its flanking felt alone (see below): not taken as the white reference
    if len(samples) > 20:
        cand = np.median(samples, axis=0)
        if np.linalg.norm(cand - mat_bgr) > 0.12:
            paint_bgr = cand.astype(np.float32)
        else:
            paint_seen = cand.astype(np.float32)

    # --- foreground --------------------------------------------------------------------------------------
    # Cheap uint8 prefilter (any channel departs from the local background by > 3.5 noise sigmas), then the
    # shadow-invariant tests on those candidate pixels only.
    eps = 1e-4
    diff = cv2.absdiff(ortho_bgr, bg_u8)
    d0, d1, d2 = cv2.split(diff)  # one pass into planes (a strided channel view is copied per call)
    # in place: the planes are not read again (new outputs cost more than the maximum itself)
    dmax = cv2.max(d0, d1, dst=d0)
    cv2.max(dmax, d2, dst=dmax)
    noise_px = dmax[fy, fx].astype(np.float32)
    noise_u8 = max(1.0, float(np.median(noise_px)) / 1.6)  # median of the max of 3 |N(0, s)| ~ 1.6 s
    # (8-bit masks through OpenCV: an integer exceeds a threshold exactly when it exceeds its floor)
    cand = cv2.threshold(dmax, math.floor(3.5 * noise_u8), 1, cv2.THRESH_BINARY, dst=d1)[1]  # a free plane
    # the table top around the mat is not searched (see WinkDetectorParams.detect_off_mat)
    cv2.bitwise_and(cand, _searched_u8(grid, params.mat_edge_band_mm, params.baseline_band_mm,
                                       params.mat_side_band_mm, params.search_table), dst=cand)
    if valid_mask.strides != (0, 0) or not valid_mask.flat[0]:  # not the all-seen mask of ``rectify_pyramid``
        cv2.bitwise_and(cand, np.ascontiguousarray(valid_mask).view(np.uint8), dst=cand)  # 0/1 bytes
    # noise statistics of the features themselves, on a sample of mat pixels

    ortho_flat = ortho_bgr.reshape(-1, 3)
    bg_flat = bg_u8.reshape(-1, 3)
    band_flat = band.reshape(-1)
    inv255 = np.float32(1.0 / 255.0)

    def planes(flat_img: np.ndarray, flat: np.ndarray) -> list[np.ndarray]:
        # the pixels' rows gathered at once, then parted into contiguous channel columns (whose arithmetic runs
        # at SIMD speed; strided columns of (N, 3) rows do not): the same float32 operations in the same order
        if not len(flat):  # (OpenCV parts an empty array into no planes)
            return [np.zeros(0, np.float32) for _ in range(3)]
        rows = np.take(flat_img, flat, axis=0)
        return [p.reshape(-1).astype(np.float32) for p in cv2.split(rows.reshape(-1, 1, 3))]

    def features(flat, sq_diff=None):
        xs = planes(ortho_flat, flat)
        bs = planes(bg_flat, flat)
        if sq_diff is not None:
            # the squared 8-bit differences, whole numbers (exact in float32 in any order), from the same samples
            for xi, bi in zip(xs, bs):
                di = xi - bi
                sq_diff += di * di
        for a in xs + bs:
            a *= inv255
        sx = xs[0] + xs[1]
        sx += xs[2]
        sx += np.float32(eps)
        sb = bs[0] + bs[1]
        sb += bs[2]
        sb += np.float32(eps)
        isx = np.float32(1.0) / sx
        isb = np.float32(1.0) / sb
        for xi, bi in zip(xs, bs):  # e_i = x_i / sx - b_i / sb, squared in place
            xi *= isx
            bi *= isb
            xi -= bi
            xi *= xi
        dch = xs[0] + xs[1]
        dch += xs[2]
        np.sqrt(dch, out=dch)
        ratio = sx * isb
        rel = ratio
        if paint_bgr is not None:
            inb = band_flat[flat]
            if inb.any():
                x = np.take(ortho_flat, flat[inb], axis=0).astype(np.float32)
                b = np.take(bg_flat, flat[inb], axis=0).astype(np.float32)
                x *= inv255
                b *= inv255
                cx = x / sx[inb, None]
                cb = b / sb[inb, None]
                cp = paint_bgr / (paint_bgr.sum() + eps)
                seg = cp[None, :] - cb
                d0 = cx - cb
                t = np.clip((d0 * seg).sum(axis=1) / ((seg * seg).sum(axis=1) + 1e-9), 0, 1)
                dseg = np.linalg.norm(d0 - t[:, None] * seg, axis=1)
                rmax = 1.0 + t * (paint_bgr.sum() / sb[inb] - 1.0)
                rel = rel.copy()
                dch[inb] = dseg
                rel[inb] = ratio[inb] / np.maximum(rmax, 1e-3)
        return dch, rel, ratio

    dc_s, rl_s, _ = features(fy * w + fx)
    # a 2-D Gaussian error has a Rayleigh-distributed length whose median is 1.177 sigma
    sig_c = float(np.median(dc_s)) / 1.177 if len(dc_s) else 0.01
    sig_l = 1.4826 * float(np.median(np.abs(rl_s - np.median(rl_s)))) if len(rl_s) else 0.03
    thr_c = max(params.noise_k * sig_c, params.chroma_floor)
    thr_l = max(params.noise_k * sig_l, params.light_floor)
    if paint_seen is not None and _lighter_than_flanks(ortho_bgr, grid, centre_line,
                                                       params.paint_flank_mm) > 1.0 + thr_l:
        # Pale paint on a pale felt under warm light (beige felt: paint 0.09 from the felt's median, under the
        # 0.12 above) is still a line lighter than the felt on both sides of it, by more than the foreground's
        # threshold: it is paint, and the band's pixels are read as felt-to-paint blends. Unread, the line's
        # pale-yellow pixels were foreground of the felt's hue, and where a wink or the mat's edge cut the line,
        # its ends voted for false winks (tw_7778_002: four yellow winks on the baselines).
        paint_bgr = paint_seen
    cflat = np.flatnonzero(cand.view(bool))  # 0/1 bytes read as bool: nonzero takes its fast path
    ss = np.zeros(len(cflat), np.float32)
    dch, rel, ratio = features(cflat, ss)
    keep = (dch > thr_c) | (rel > 1.0 + thr_l) | (ratio < params.dark_ratio)
    fg = np.zeros((h, w), bool)
    fg.reshape(-1)[cflat[keep]] = True
    fg_u8 = cv2.morphologyEx(fg.view(np.uint8), cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
    fg = fg_u8.view(bool)  # 0/1 bytes
    # Blend fraction: a pixel's departure from the background relative to the strongest departure nearby.
    # Outline pixels mix the wink with the felt (hues in between, e.g. blue + green felt = cyan); only the
    # core (blend >= core_ratio) gets a colour class, the blended rim stays neutral foreground.
    # (kept on the candidate pixels only: the labels below need them at foreground pixels, a subset)
    def departure(rows: np.ndarray) -> np.ndarray:
        """The candidate rows' departure in threshold units (read at the foreground's few rows only)."""
        return np.sqrt((dch[rows] / thr_c) ** 2 + (np.maximum(rel[rows] - 1.0, 0.0) / thr_l) ** 2
                       + (np.maximum(1.0 - ratio[rows], 0.0) / (1.0 - params.dark_ratio)) ** 2)
    # the blend fraction must be linear in the mix: the plain colour difference is, chromaticity is not
    # (summed in ``features`` from its own samples: squared 8-bit differences are whole numbers, exact in float32
    # in any order, so the same values as a row reduction, with no second gather on a quarter of the orthophoto)
    lin = np.zeros((h, w), np.float32)
    lin.reshape(-1)[cflat] = np.sqrt(ss, out=ss)
    core_kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (params.core_window_px, params.core_window_px))

    # --- colour classes in white-balanced Lab ----------------------------------------------------------
    # (paint told from the felt by its flanks alone is as near the felt's colour as its white is: the camera's
    # balance is left as it was, and every class with it)
    white = paint_bgr if paint_bgr is not None and paint_seen is None else None
    ref = white if white is not None else mat_bgr
    gains = (float(ref.mean()) / np.maximum(ref, 1e-3)).astype(np.float32)
    if white is None:
        gains = np.ones(3, np.float32)  # a coloured felt is no white reference: leave the camera's balance
    labels = np.zeros((h, w), np.uint8)
    mat_class = 0
    idx = np.flatnonzero(fg)
    centres = dict(HUE_PROTOTYPES_DEG)
    if len(idx):
        x_bgr = np.take(ortho_flat, idx, axis=0).astype(np.float32)
        lab = lab_rows(np.clip(x_bgr / 255.0 * gains, 0, 1))
        hue = np.degrees(np.arctan2(lab[:, 2], lab[:, 1])) % 360.0
        chroma = np.hypot(lab[:, 1], lab[:, 2])
        strong = chroma >= params.min_wink_chroma
        cls = _assign(hue, centres)
        for _ in range(2):
            for k, name in enumerate(COLOR_NAMES):
                sel = strong & (cls == k)
                if sel.sum() > 30:
                    wgt = chroma[sel]
                    ang = np.radians(hue[sel])
                    m = math.degrees(math.atan2(float((wgt * np.sin(ang)).sum()), float((wgt * np.cos(ang)).sum())))
                    d = float(hue_distance_deg(np.array([m]), HUE_PROTOTYPES_DEG[name])[0])
                    if d <= params.hue_adapt_deg:
                        centres[name] = m % 360.0
            cls = _assign(hue, centres)
        # A felt of a wink's own hue (green felt): a wink of that hue must depart from it clearly (it is
        # lighter or more saturated); mottled or shadowed felt of that hue stays neutral.
        mat_px = np.clip(mat_bgr.reshape(1, 1, 3).astype(np.float32) * gains, 0, 1)
        mat_lab = cv2.cvtColor(mat_px, cv2.COLOR_BGR2Lab).reshape(3)
        mat_chroma = float(np.hypot(mat_lab[1], mat_lab[2]))
        lin_i = lin.reshape(-1)[idx]
        lmax_i = _local_max_at(lin, idx, core_kernel)
        strong_core = strong & (lin_i >= params.core_ratio * lmax_i)
        if mat_chroma >= params.min_wink_chroma * 0.5:
            mat_hue = math.degrees(math.atan2(float(mat_lab[2]), float(mat_lab[1]))) % 360.0
            mat_cls = int(_assign(np.array([mat_hue]), centres)[0])
            mat_class = mat_cls + 1
            # ... and it is lighter or more saturated, never darker: darker felt is shadow
            # (a shadow keeps the felt's chromaticity; a wink of a nearby hue on a pale felt changes it)
            # the feature rows of the foreground pixels (the 2x2 opening may add a few non-candidates: no row)
            pos = np.minimum(np.searchsorted(cflat, idx), max(len(cflat) - 1, 0))
            has = cflat[pos] == idx if len(cflat) else np.zeros(len(idx), bool)
            lit = has & (ratio[pos] >= params.mat_hue_min_ratio)
            hue_shift = has & (dch[pos] >= params.mat_hue_min_departure * thr_c) & (ratio[pos] >= 0.35)
            strong_core &= ((cls != mat_cls) | hue_shift | (has & (departure(pos) >= params.mat_hue_min_departure) & lit))
        # Unmixing: an outline pixel is a blend a*W + (1 - a)*M of a wink colour W and the local felt M;
        # hue alone misreads blends (red on green felt looks yellow). Each class's W is measured on its deep
        # core pixels; every labelled pixel takes the class whose blend line explains it best.
        m_bgr = np.take(bg_flat, idx, axis=0).astype(np.float32)
        deep = strong_core & (lin_i >= 0.85 * lmax_i)
        # per-channel columns: the same sums, in the same order, as row reductions over (N, 3) arrays
        d0, d1, d2 = (x_bgr[:, c] - m_bgr[:, c] for c in range(3))
        m0, m1, m2 = (np.ascontiguousarray(m_bgr[:, c]) for c in range(3))
        resid = np.full((len(idx), len(COLOR_NAMES)), np.inf, np.float32)
        for k in range(len(COLOR_NAMES)):
            sel = deep & (cls == k)
            if sel.sum() < 12:
                continue
            wk = np.median(x_bgr[sel], axis=0)
            v0, v1, v2 = wk[0] - m0, wk[1] - m1, wk[2] - m2
            vv = np.maximum(v0 * v0 + v1 * v1 + v2 * v2, 1.0)
            a_k = np.clip((d0 * v0 + d1 * v1 + d2 * v2) / vv, 0.0, 1.3)
            e0, e1, e2 = d0 - a_k * v0, d1 - a_k * v1, d2 - a_k * v2
            resid[:, k] = np.sqrt(e0 * e0 + e1 * e1 + e2 * e2)
        known = np.isfinite(resid[np.arange(len(idx)), cls]) & np.isfinite(resid).any(axis=1)
        best = np.argmin(resid, axis=1)
        # only move a pixel to another class when that class explains it clearly better
        better = known & (resid[np.arange(len(idx)), best] < 0.6 * resid[np.arange(len(idx)), cls])
        cls = np.where(better, best, cls)
        lab_cls = np.where(strong_core, cls + 1, CLASS_NEUTRAL).astype(np.uint8)
        labels.reshape(-1)[idx] = lab_cls
        # Mixed pixels along an outline (wink colour blended with the felt) take intermediate hues and form
        # thin rings of a wrong class; a wink is wide, so a morphological opening per class removes them.
        kern = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (params.opening_px, params.opening_px))
        if _is_cross(kern):
            # the foreground's pixels are about 1 % of its bounding box: the opening gathered at them
            keep_i = _opened_classes_at(labels, idx)
            labels.reshape(-1)[idx[(lab_cls >= 1) & (lab_cls <= len(COLOR_NAMES)) & ~keep_i]] = CLASS_NEUTRAL
            bw = bh = 0
        else:
            bx, by, bw, bh = cv2.boundingRect(fg_u8)
        if bw and bh:
            r0, r1, c0, c1 = by, by + bh, bx, bx + bw
            sub = labels[r0:r1, c0:c1]
            classed = (sub >= 1) & (sub <= len(COLOR_NAMES))
            keep = _opened_classes(sub, classed, kern)
            sub[classed & ~keep] = CLASS_NEUTRAL
    return ColourScene(labels=labels, foreground=fg, hue_centres_deg=centres, gains_bgr=gains,
                       mat_bgr=mat_bgr, paint_bgr=paint_bgr, mat_noise=(sig_c, sig_l), background_bgr=bg_u8,
                       mat_mask=mat_mask, edge_band=edge_band, mat_class=mat_class)


def lab_rows(bgr: np.ndarray) -> np.ndarray:
    """CIE Lab (N, 3) of N colours (N, 3; float32 BGR in 0..1).

    Given to OpenCV as one row of N pixels: as a column of one-pixel rows it pays its per-row call N times, about
    five times the cost, for the same values."""
    return cv2.cvtColor(np.ascontiguousarray(bgr, np.float32).reshape(1, -1, 3), cv2.COLOR_BGR2Lab).reshape(-1, 3)


def _local_max_at(img: np.ndarray, flat_idx: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """``cv2.dilate(img, kernel).reshape(-1)[flat_idx]``: the maximum over the kernel's offsets gathered at those
    pixels only (the foreground is about 1 % of the orthophoto), where the kernel stays inside the image."""
    h, w = img.shape
    ky, kx = kernel.shape[0] // 2, kernel.shape[1] // 2
    rows, cols = np.divmod(flat_idx, w)
    if not len(flat_idx) or rows.min() < ky or rows.max() >= h - ky or cols.min() < kx or cols.max() >= w - kx:
        return cv2.dilate(img, kernel).reshape(-1)[flat_idx]
    dy, dx = np.nonzero(kernel)
    flat = img.reshape(-1)
    offsets = ((dy - ky) * w + (dx - kx)).tolist()
    out = np.take(flat, flat_idx + offsets[0])
    for off in offsets[1:]:
        np.maximum(out, np.take(flat, flat_idx + off), out=out)
    return out


def _is_cross(kern: np.ndarray) -> bool:
    return kern.shape == (3, 3) and np.array_equal(kern, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (3, 3)))


def _opened_classes_at(labels: np.ndarray, flat_idx: np.ndarray) -> np.ndarray:
    """``_opened_classes`` by the 3 x 3 cross on the bounding box of ``flat_idx`` (sorted flat indices, every
    labelled pixel among them), gathered at those pixels only: whether each keeps its class.

    A pixel survives the erosion when its four neighbours in the box carry its label (beyond the box: its own), and
    the opening keeps it when it or one of those neighbours survived."""
    h, w = labels.shape
    flat = labels.reshape(-1)
    lab = flat[flat_idx]
    rows, cols = np.divmod(flat_idx, w)
    r0, r1, c0, c1 = rows[0], rows[-1], cols.min(), cols.max()
    steps = ((-w, rows > r0), (w, rows < r1), (-1, cols > c0), (1, cols < c1))
    nbrs = [(np.where(inside, flat_idx + off, flat_idx), inside) for off, inside in steps]
    core = (lab >= 1) & (lab <= len(COLOR_NAMES))
    for nb, _ in nbrs:
        core &= np.take(flat, nb) == lab
    core_img = np.zeros(h * w, bool)
    core_img[flat_idx[core]] = True
    keep = core
    for nb, inside in nbrs:
        keep |= inside & np.take(core_img, nb)
    return keep


def _opened_classes(sub: np.ndarray, classed: np.ndarray, kern: np.ndarray) -> np.ndarray:
    """Pixels each colour class keeps through a morphological opening of its own mask by ``kern`` (the patch's
    outside counted as the class while eroding, as ``cv2.morphologyEx`` does).

    With the 3 x 3 cross the openings of all classes come at once from the label image: a pixel survives the
    erosion when its four neighbours carry its own label, and the opening keeps it when it or a neighbour
    survived (a surviving neighbour's label is its own). Other kernels take the class masks one by one.
    """
    if not _is_cross(kern):
        keep = np.zeros(sub.shape, bool)
        for k in range(1, len(COLOR_NAMES) + 1):
            mk = (sub == k).astype(np.uint8)
            if mk.any():
                keep |= cv2.morphologyEx(mk, cv2.MORPH_OPEN, kern).astype(bool)
        return keep
    same_v = sub[1:] == sub[:-1]
    same_h = sub[:, 1:] == sub[:, :-1]
    core = classed.copy()
    core[1:] &= same_v
    core[:-1] &= same_v
    core[:, 1:] &= same_h
    core[:, :-1] &= same_h
    keep = core.copy()
    keep[1:] |= core[:-1]
    keep[:-1] |= core[1:]
    keep[:, 1:] |= core[:, :-1]
    keep[:, :-1] |= core[:, 1:]
    return keep


def blend_line(bgr: np.ndarray, felt_bgr: np.ndarray, colour_bgr: np.ndarray, *, segment: bool = False
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each sample's place on the blend from its felt (0) to ``colour_bgr`` (1), its distance off that line (off
    the segment between them with ``segment``) and the blend's squared length: a rim's mixed pixels lie on the
    blend, a third colour off it. By channel columns: the row reductions' sums in their order, at a fraction of
    their cost on a few thousand samples."""
    f0, f1, f2 = felt_bgr[:, 0], felt_bgr[:, 1], felt_bgr[:, 2]
    v0, v1, v2 = colour_bgr[0] - f0, colour_bgr[1] - f1, colour_bgr[2] - f2
    d0, d1, d2 = bgr[:, 0] - f0, bgr[:, 1] - f1, bgr[:, 2] - f2
    vv = v0 * v0 + v1 * v1 + v2 * v2
    a = (d0 * v0 + d1 * v1 + d2 * v2) / np.maximum(vv, 1e-6)
    if segment:
        a = np.clip(a, 0.0, 1.0)
    e0, e1, e2 = d0 - a * v0, d1 - a * v1, d2 - a * v2
    return a, np.sqrt(e0 * e0 + e1 * e1 + e2 * e2), vv


def nearest_hue(hue: np.ndarray, centres: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """Index in ``COLOR_NAMES`` of the hue centre nearest each hue (deg), and the distance to it.

    A tie goes to the earlier colour, as ``np.argmin`` over the stacked distances does; the distance comes
    with it (no gather of each row's entry)."""
    best = hue_distance_deg(hue, centres[COLOR_NAMES[0]])
    cls = np.zeros(best.shape, np.intp)
    for k in range(1, len(COLOR_NAMES)):
        d = hue_distance_deg(hue, centres[COLOR_NAMES[k]])
        closer = d < best
        cls[closer] = k
        best = np.where(closer, d, best)
    return cls, best


def _assign(hue: np.ndarray, centres: dict[str, float]) -> np.ndarray:
    d = np.stack([hue_distance_deg(hue, centres[n]) for n in COLOR_NAMES], axis=1)
    return np.argmin(d, axis=1)


def classify_bgr(bgr: np.ndarray, gains: np.ndarray, centres: dict[str, float]) -> tuple[str, float, float]:
    """Colour name, its margin (deg of hue to the next class) and Lab chroma of one mean BGR (0..1)."""
    px = np.clip(np.asarray(bgr, np.float32).reshape(1, 1, 3) * gains, 0, 1)
    lab = cv2.cvtColor(px, cv2.COLOR_BGR2Lab).reshape(3)
    hue = math.degrees(math.atan2(float(lab[2]), float(lab[1]))) % 360.0
    d = sorted((float(hue_distance_deg(np.array([hue]), centres[n])[0]), n) for n in COLOR_NAMES)
    return d[0][1], d[1][0] - d[0][0], float(math.hypot(lab[1], lab[2]))
