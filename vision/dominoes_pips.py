"""Reading the pips of one domino tile from its rectified top view.

The tile is warped (``cv2.getPerspectiveTransform``) to a canonical top view ``CANON_W_PX`` wide and twice as
long, half ``a`` on top (rows 0 .. W), half ``b`` below. In each half, pips are blobs that differ from the tile's
own face colour (darker or more coloured on an ivory face, lighter on a black one), sized relative to the tile
width, and their centres must sit on the standard pip grid (3 x 3 at quarter points, or 3 x 4 for the double-
twelve values). A half whose blobs do not fit a standard pattern is unreadable: flagged, never guessed.
"""

from __future__ import annotations

import functools
import math

from dataclasses import dataclass

import cv2
import numpy as np

from geometry.dominoes import PIP_LAYOUTS

CANON_W_PX = 96  # canonical tile width (px); the tile is 2 x this long
# Pip diameter is 0.11-0.17 of the tile width on the sets we know; accept a wide band around it.
PIP_MIN_DIAMETER_RATIO = 0.055
PIP_MAX_DIAMETER_RATIO = 0.26
EDGE_MARGIN_RATIO = 0.07  # the bevel and the tile's outline: no pip centre is closer to the edge than this
BAR_MARGIN_RATIO = 0.07  # the centre bar band, half-height (of the width)
# A set's pip spacing may be this much wider or narrower than the quarter-point grid, the pattern this far off
# the half's centre; after that fit, a pip centre may sit GRID_FIT_TOLERANCE_RATIO (of the width) from its point.
GRID_SCALE_RANGE = (0.75, 1.3)
GRID_MAX_SHIFT_RATIO = 0.1
GRID_FIT_TOLERANCE_RATIO = 0.08
# The face of a tile is one colour: a half whose pip-free area is less than this share face-coloured (within
# FACE_DISTANCE in Lab, darker counting fully and glare half) is wood grain, a box, or two things at once.
MIN_FACE_RATIO = 0.8
BLANK_MAX_MARKED = 0.06
FACE_DISTANCE = 30.0  # Lab distance from the face colour within which a pixel is the face
# Glare on a black face: lighter, with no more chroma than this (Lab) beyond the face's, counts this much.
GLARE_MAX_CHROMA = 10.0
# A spinner (a brass stud at the centre of the bar) is up to this share of the width across (4-5 mm on 24 mm).
SPINNER_DIAMETER_RATIO = 0.22
# Along each long side, between the bevel and the pip columns (a quarter width in, pips up to 0.17 across: their
# edge 0.165 in at the nearest): a strip that shows only the face on every layout.
SIDE_STRIP_RATIO = (0.04, 0.12)
GLARE_WEIGHT_DARK = 0.15
# A pixel this far (Lab a-b) from an ivory face's colour is paint, however light: glare adds no colour.
GLARE_PIP_CHROMA = 30.0
# The middle of an even half (where the odd count's extra pip sits): a disc of this radius (of the width) against
# the ring between these radii (clear of the other pips, whose edges are 0.18 out), and the Lab contrast above
# which it is a pip not segmented (a smooth highlight gives a few units; a pip under it still tens).
MIDDLE_DISC_RATIO = 0.05
MIDDLE_RING_RATIO = (0.1, 0.15)
MIDDLE_MARK_CONTRAST = 10.0
MIDDLE_MARK_CONTRAST_DARK = 30.0
BLANK_MIDDLE_SEARCH_RATIO = 0.08
GLARE_PIP_CHROMA_WEAK = 18.0
# Light (linear, 0-1) a pip's paint takes from the face beside it in its most absorbed channel: 0.4-0.5 for the
# value colours and ink at the renders' and photos' exposure, in the open and under glare alike; noise and a
# highlight's flank stay under 0.08.
ABSORB_LINEAR = 0.2  # ... and this far, joined to such paint, is the rest of the pip
# A lone mark (a half read as 1) on a black face is either the white pip or the lamp's glare, both lighter than
# the face. Measured in the tile's plane (``mark_profile``), a pip is a disc of the set's pip size with an edge
# as crisp as the camera's blur; a specular patch is a broad lobe with a soft falloff. Beside the tile's other pips
# (the same set's pips are alike) a mark this much broader (radius at half contrast) or softer (edge width) is not
# a pip; a tile with no other pip has the absolute bounds: broader than any set's pip (PIP_MAX_DIAMETER_RATIO),
# or an edge softer than this many image pixels (camera blur makes a pip's edge 2-5 px wide, a lamp's lobe 9-12).
MARK_PROFILE_RATIO = 0.25  # the profile is taken out to this share of the width (clear of the nearest grid point)
LONE_MARK_BROADER = 1.6
LONE_MARK_SOFTER = 2.0
LONE_MARK_MAX_EDGE_PX = 7.0


# Pips run together (a small tile): the blob is parted where the distance to its edge exceeds this share of its
# greatest (a disc's middle is its radius deep, a bridge of a third of a pip's width a sixth of a diameter), each
# core as deep as this range of the radius of a disc of its share of the area, the cores a diameter apart at least
# (neighbours on the grid are 0.2-0.25 of the width apart, pips 0.12-0.17 across).
TOUCHING_CORE_SHARE = 0.6
TOUCHING_DEPTH_RANGE = (0.6, 1.4)
TOUCHING_MIN_SPACING = 0.9


@dataclass(frozen=True, slots=True, kw_only=True)
class HalfReading:
    """The pips of one half, or ``pips=None`` with the reason it could not be read."""

    pips: int | None
    blob_count: int
    reason: str = ""
    score: float = 1.0  # 1 = every blob on its grid point, falls with the worst offset
    bar_ratio: float = 0.0  # share of the width the centre bar's stroke spans at this half's bar edge
    centers: tuple[tuple[float, float], ...] = ()  # the read pips' centres (u, v, share of the width)


def rectify_tile(frame_bgr: np.ndarray, quad_px: np.ndarray, width_px: int = CANON_W_PX) -> np.ndarray:
    """The tile's top view: ``quad_px`` corners in order (a, -u), (a, +u), (b, +u), (b, -u) -> a W x 2W image."""
    w = int(width_px)
    dst = np.float32([[0, 0], [w - 1, 0], [w - 1, 2 * w - 1], [0, 2 * w - 1]])
    M = cv2.getPerspectiveTransform(np.float32(quad_px), dst)
    return cv2.warpPerspective(frame_bgr, M, (w, 2 * w), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def face_colour_lab(tile_lab: np.ndarray) -> np.ndarray:
    """The face colour: the median of the tile's inner area (pips and bar are a small share of it).

    Black or ivory is told by the darkest 35 % of that area: the face covers well over half of any tile, so on a
    black one that part is face, while white pips and the lamp's glare (a 8-8 under a highlight) may lift even
    the median above the line; on an ivory one pips and bar never cover a third."""
    w = tile_lab.shape[1]
    m = int(0.12 * w)
    inner = tile_lab[m:-m, m:-m].reshape(-1, 3).astype(np.float32)
    lightness_35 = np.percentile(inner[:, 0], 35)
    if lightness_35 < 100:
        # a black face with large white pips: the median is pulled up, the darker part is the face
        return np.median(inner[inner[:, 0] <= lightness_35], axis=0)
    # a black 9-12 under the lamp is more pip and glare than face in the middle: the strips along the long sides,
    # outside the pip columns, hold no pip on any layout, and glare (a lobe under a width across) covers neither
    # whole. Each strip mostly dark is a black face (a quad a little off its tile puts one strip on the table,
    # never both)
    lo, hi = round(SIDE_STRIP_RATIO[0] * w), round(SIDE_STRIP_RATIO[1] * w)
    strips = [tile_lab[lo:-lo, lo:hi], tile_lab[lo:-lo, w - hi:w - lo]]
    if all(np.median(s[..., 0]) < 100 for s in strips):
        side = np.vstack([s.reshape(-1, 3) for s in strips]).astype(np.float32)
        return np.median(side[side[:, 0] <= np.median(side[:, 0])], axis=0)
    return np.median(inner, axis=0)


def feature_mask(tile_lab: np.ndarray, face_lab: np.ndarray, dark_face: bool) -> np.ndarray:
    """Pixels that are not the face: ink, paint or drilled pips (uint8 0/255).

    Lightness is compared with the face around each pixel (a median over a third of the width), so a pip under
    a glare patch, or in the shade at one end, still stands out from what surrounds it.
    """
    lab = tile_lab.astype(np.float32)
    w = tile_lab.shape[1]
    k = max(5, int(0.35 * w) | 1)
    local = cv2.medianBlur(np.ascontiguousarray(tile_lab[..., 0]).astype(np.uint8), k).astype(np.float32)
    dl = lab[..., 0] - face_lab[0]
    dll = lab[..., 0] - local
    dc = np.hypot(lab[..., 1] - face_lab[1], lab[..., 2] - face_lab[2])
    spread = float(np.percentile(np.abs(dl), 50))
    if dark_face:
        # white paint is far lighter than a black face's sheen or glare: half-way to the brightest paint. Glare
        # over most of the half lifts the typical lightness (``spread``) too; the paint is still the lightest
        top = float(np.percentile(dl, 99.5))
        m = (dl > max(35.0, 0.55 * top, min(4 * spread, 0.8 * top))) & (dll > 25.0)
    else:
        # glare is lighter and colourless, so it is never a pip; paint is darker or coloured. Glare over a coloured
        # pip lightens it and thins its colour, but white light adds no chroma: far off the face's colour is paint
        m = ((dl < -max(32.0, 4 * spread)) | (dll < -28.0)) | ((dc > 22.0) & (dl < -8.0)) | (dc > GLARE_PIP_CHROMA)
        m |= _absorbs_under_glare(tile_lab, k)
        # ... and the whole pip, whose rim under glare keeps less colour than its middle: grown over the weaker
        # colour joined to it (hysteresis), so a pip under glare is measured at its size, not its core's
        weak = (dc > GLARE_PIP_CHROMA_WEAK) & ~m
        if weak.any():
            n, comp = cv2.connectedComponents((m | weak).astype(np.uint8), connectivity=8)
            seeds = np.zeros(n, bool)
            seeds[comp[m]] = True
            seeds[0] = False
            m = seeds[comp]
    m = m.astype(np.uint8) * 255
    return cv2.morphologyEx(m, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))


@functools.lru_cache(maxsize=1)
def _linear_lut() -> np.ndarray:
    """8-bit sRGB code -> linear light (the camera's tone curve taken as sRGB's)."""
    c = np.arange(256, dtype=np.float32) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4).astype(np.float32)


def _absorbs_under_glare(tile_lab: np.ndarray, k: int) -> np.ndarray:
    """Pixels that take light away from the face right around them (a median over ``k`` pixels), in linear light.

    A lamp's highlight adds the same white to a pip and to the face beside it, so the difference between them
    in linear light is the pip's own (a yellow 6 under glare is as far below the ivory in blue as one in the
    open), while in Lab the added white thins its colour below the chroma that marks paint. Paint absorbs: in
    some channel, by ``ABSORB_LINEAR`` at least, and either unevenly (a colour) or strongly in every channel
    (ink); a smooth highlight's flank is a little darker than its local median, evenly and weakly."""
    bgr = cv2.cvtColor(np.ascontiguousarray(tile_lab, dtype=np.uint8), cv2.COLOR_LAB2BGR)
    lut = _linear_lut()
    lin = lut[bgr]
    local = lut[cv2.medianBlur(bgr, k)]
    deficit = local - lin
    most, least = deficit.max(axis=2), deficit.min(axis=2)
    return (most > ABSORB_LINEAR) & ((most - least > 0.5 * ABSORB_LINEAR) | (least > 2 * ABSORB_LINEAR))


def _assign(centers: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Greedy nearest assignment of centres to reference points (n <= 12): ref index per centre."""
    d = np.linalg.norm(centers[:, None, :] - ref[None, :, :], axis=2)
    out = np.full(len(centers), -1)
    used: set[int] = set()
    for i in np.argsort(d.min(axis=1)):
        j = next(j for j in np.argsort(d[i]) if j not in used)
        used.add(int(j))
        out[i] = j
    return out


def _fit_grid(centers_uv: np.ndarray) -> tuple[int | None, float, str]:
    """Match blob centres (unit square of a half) to the standard layouts; (pips, score, reason).

    Sets differ in pip spacing and a quad may sit a little off the tile, so the layout may be scaled about the
    half's centre (``GRID_SCALE_RANGE``) and shifted (``GRID_MAX_SHIFT_RATIO``) before the residual is judged.
    """
    n = len(centers_uv)
    if n == 0:
        return 0, 1.0, ""
    if n not in PIP_LAYOUTS:
        return None, 0.0, f"{n} blobs is more than a half holds"
    base = np.asarray(PIP_LAYOUTS[n]) - 0.5
    c = centers_uv - 0.5
    best = np.inf
    for fu in (1.0, -1.0):
        for fv in (1.0, -1.0):
            ref = base * np.array([fu, fv])
            k, t = 1.0, np.zeros(2)
            for _ in range(3):
                idx = _assign(c, k * ref + t)
                r = ref[idx]
                if n == 1:
                    k, t = 1.0, c[0] - r[0]
                else:
                    # least squares for c = k r + t
                    rc, cc = r - r.mean(axis=0), c - c.mean(axis=0)
                    den = float((rc * rc).sum())
                    k = float((rc * cc).sum() / den) if den > 1e-9 else 1.0
                    k = float(np.clip(k, *GRID_SCALE_RANGE))
                    t = c.mean(axis=0) - k * r.mean(axis=0)
                t = np.clip(t, -GRID_MAX_SHIFT_RATIO, GRID_MAX_SHIFT_RATIO)
            idx = _assign(c, k * ref + t)
            if len(set(idx.tolist())) != n:
                continue
            worst = float(np.max(np.linalg.norm(c - (k * ref[idx] + t), axis=1)))
            best = min(best, worst)
    if best > GRID_FIT_TOLERANCE_RATIO:
        return None, 0.0, f"{n} blobs off the standard {n}-pip pattern by {best:.2f} of the width"
    return n, float(1.0 - best / GRID_FIT_TOLERANCE_RATIO * 0.5), ""


def read_half(mask_half: np.ndarray, max_pips: int = 12) -> HalfReading:
    """Count the pips in one half's feature mask (W x W, the tile end at row 0, the bar at the last row)."""
    r, bar_ratio = _read_half(mask_half, max_pips)
    return HalfReading(pips=r.pips, blob_count=r.blob_count, reason=r.reason, score=r.score, bar_ratio=bar_ratio,
                       centers=r.centers if r.pips is not None else ())


def _read_half(mask_half: np.ndarray, max_pips: int) -> tuple[HalfReading, float]:
    w = mask_half.shape[1]
    m = mask_half.copy()
    band = round(BAR_MARGIN_RATIO * w)
    edge = round(EDGE_MARGIN_RATIO * w)
    # the centre bar: long horizontal strokes near the half's last rows (an opening with a line longer than any
    # pip keeps only them), taken out with a pixel of margin so a pip beside the bar stands alone
    near_bar = np.zeros_like(m)
    near_bar[-round(0.22 * w):, :] = m[-round(0.22 * w):, :]
    line = cv2.morphologyEx(near_bar, cv2.MORPH_OPEN, np.ones((1, max(3, int(0.3 * w))), np.uint8))
    cols = np.nonzero(line.any(axis=0))[0]
    bar_ratio = float(len(cols)) / w
    m[cv2.dilate(line, np.ones((3, 3), np.uint8)) > 0] = 0
    m[-band:, :] = 0
    # cut thin bridges (a pip's rim touching the bar, a scratch) narrower than a third of the smallest pip
    k = max(3, round(PIP_MIN_DIAMETER_RATIO * w * 0.7) | 1)
    m = cv2.morphologyEx(m, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    n, _lab, stats, cents = cv2.connectedComponentsWithStats(m, connectivity=8)
    a_min = np.pi * (PIP_MIN_DIAMETER_RATIO * w / 2) ** 2
    a_max = np.pi * (PIP_MAX_DIAMETER_RATIO * w / 2) ** 2
    blobs = []
    odd = []
    for i in range(1, n):
        x, y, bw, bh, area = stats[i]
        cx, cy = cents[i]
        if area < a_min * 0.6:
            continue  # speck of noise or grain
        fill = area / float(bw * bh)
        aspect = max(bw, bh) / max(1, min(bw, bh))
        near_border = min(x, y, w - (x + bw), (w - band) - (y + bh)) < 0.12 * w
        if aspect > 4 and near_border:
            continue  # a line along the outline: the tile's own edge shading or a neighbour's seam
        # the outline is the end (row 0) and the two sides; the last rows are the bar, not an outline
        touches = x <= 0 or y <= 0 or x + bw >= w
        corner = 0.15 * w
        in_corner = min(x, w - (x + bw)) < corner and y < corner  # the rounded corners are at the tile's end
        near = cx < edge or cx > w - 1 - edge or cy < edge or cy > w - 1 - band
        if touches or near:
            # the table beyond a rounded corner touches both the end and a side; a pip near a corner does not
            background_corner = in_corner and y <= 0 and (x <= 0 or x + bw >= w)
            if cy > w - 1 - band or area < a_min * 0.6 or (touches and (background_corner or aspect > 3)):
                continue  # the bar's band, a speck, the background in a rounded corner, a seam along the side
            if aspect <= 2.2 and fill >= 0.45 and area <= a_max:
                # a pip on (or cut by) the outline means the outline is wrong: never count what is left
                odd.append(f"pip-sized blob on the tile's outline at ({cx / w:.2f}, {cy / w:.2f})")
            continue
        if area > a_max or aspect > 2.2 or fill < 0.45:
            parts = _touching_pips(_lab[y:y + bh, x:x + bw] == i, area, a_min, a_max)
            if not parts:
                odd.append(f"blob of {area} px (aspect {aspect:.1f}) is not a pip")
            blobs += [((x + px) / w, (y + py) / w, pa) for px, py, pa in parts]
            continue
        blobs.append((cx / w, cy / w, area))
    if odd:
        return HalfReading(pips=None, blob_count=len(blobs), reason="; ".join(odd), score=0.0), bar_ratio
    if blobs:
        areas = np.asarray([b[2] for b in blobs], float)
        if areas.max() > 2.6 * np.median(areas) or areas.min() < 0.35 * np.median(areas):
            return HalfReading(pips=None, blob_count=len(blobs), reason="pip sizes disagree (merged or hidden pip)",
                               score=0.0), bar_ratio
    pips, score, reason = _fit_grid(np.asarray([(b[0], b[1]) for b in blobs], float).reshape(-1, 2))
    if pips is not None and pips > max_pips:
        return HalfReading(pips=None, blob_count=len(blobs), reason=f"{pips} pips exceeds the set's {max_pips}",
                           score=0.0), bar_ratio
    return HalfReading(pips=pips, blob_count=len(blobs), reason=reason, score=score,
                       centers=tuple((float(b[0]), float(b[1])) for b in blobs)), bar_ratio


def _touching_pips(blob: np.ndarray, area: float, a_min: float, a_max: float) -> list[tuple[float, float, float]]:
    """A blob of pips run together into one (a small tile: blur and a coloured fringe bridge the gap of a few
    pixels between neighbours on a 3 x 4 grid) parted into its discs: the cores where the distance to the blob's
    edge exceeds ``TOUCHING_CORE_SHARE`` of its greatest, each as deep as a pip's radius about. Returns
    (x, y, area) per disc in the blob's box, or [] when it is not two or more like discs (glare, a scratch, a
    smear): a disc's middle is as far from the edge as its radius, a bridge's only half its width."""
    dist = cv2.distanceTransform(np.pad(blob.astype(np.uint8), 1), cv2.DIST_L2, 5)[1:-1, 1:-1]
    top = float(dist.max())
    n, comp, stats, cents = cv2.connectedComponentsWithStats((dist > TOUCHING_CORE_SHARE * top).astype(np.uint8))
    if n - 1 < 2:
        return []
    depth = [float(dist[comp == k].max()) for k in range(1, n)]
    each = area / (n - 1)
    radius = math.sqrt(each / math.pi)
    if (min(depth) < TOUCHING_DEPTH_RANGE[0] * radius or max(depth) > TOUCHING_DEPTH_RANGE[1] * radius
            or not a_min <= each <= a_max):
        return []
    c = cents[1:]
    spacing = min(float(np.linalg.norm(c[i] - c[j])) for i in range(len(c)) for j in range(i + 1, len(c)))
    if spacing < TOUCHING_MIN_SPACING * 2 * radius:
        return []  # cores closer than a pip across: one blob pinched, not two discs
    return [(float(cx), float(cy), each) for cx, cy in c]


def half_quads(quad_px: np.ndarray, split_ratio: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """The two halves' quads of a tile quad, cut at the centre bar (``split_ratio`` of the way from end a).

    Each is ordered so that its first two corners lie on the tile's end and its last two on the bar.
    """
    q = np.asarray(quad_px, np.float64)
    m1 = q[1] + (q[2] - q[1]) * split_ratio  # on the +u long edge
    m0 = q[0] + (q[3] - q[0]) * split_ratio  # on the -u long edge
    half_a = np.array([q[0], q[1], m1, m0])
    half_b = np.array([q[2], q[3], m0, m1])  # seen from end b: its -u/+u swap so the half is not mirrored
    return half_a, half_b


def rectify_half(frame_bgr: np.ndarray, quad_px: np.ndarray, width_px: int = CANON_W_PX) -> np.ndarray:
    """One half's top view, W x W, the tile end on row 0 and the bar on the last row."""
    w = int(width_px)
    dst = np.float32([[0, 0], [w - 1, 0], [w - 1, w - 1], [0, w - 1]])
    M = cv2.getPerspectiveTransform(np.float32(quad_px), dst)
    return cv2.warpPerspective(frame_bgr, M, (w, w), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def read_tile(frame_bgr: np.ndarray, quad_px: np.ndarray, split_ratio: float = 0.5, max_pips: int = 12
              ) -> tuple[HalfReading, HalfReading, dict]:
    """Both halves of the tile ``quad_px`` in ``frame_bgr`` (each rectified on its own, cut at the bar)."""
    qa, qb = half_quads(quad_px, split_ratio)
    ha = cv2.cvtColor(rectify_half(frame_bgr, qa), cv2.COLOR_BGR2LAB)
    hb = cv2.cvtColor(rectify_half(frame_bgr, qb), cv2.COLOR_BGR2LAB)
    face = face_colour_lab(np.vstack([ha, hb]))
    dark_face = bool(face[0] < 100)
    ma, mb = feature_mask(ha, face, dark_face), feature_mask(hb, face, dark_face)
    a = _middle_is_clear(_blank_is_clean(read_half(ma, max_pips), ha, face, dark_face), ha, face, dark_face)
    b = _middle_is_clear(_blank_is_clean(read_half(mb, max_pips), hb, face, dark_face), hb, face, dark_face)
    if dark_face and 1 in (a.pips, b.pips):
        q = np.asarray(quad_px, np.float64)
        width_px = 0.5 * float(np.linalg.norm(q[1] - q[0]) + np.linalg.norm(q[2] - q[3]))
        a, b = _lone_mark_is_pip(a, b, ha, hb, face, width_px)
    uniform = min(face_ratio(ha, ma, face, dark_face), face_ratio(hb, mb, face, dark_face))
    if uniform < MIN_FACE_RATIO:
        why = f"only {uniform:.0%} of the half is the tile's face"
        a = a if a.pips is None else HalfReading(pips=None, blob_count=a.blob_count, reason=why, score=0.0)
        b = b if b.pips is None else HalfReading(pips=None, blob_count=b.blob_count, reason=why, score=0.0)
    return a, b, {"face_lab": [float(v) for v in face], "dark_face": dark_face, "face_ratio": uniform,
                  "bar_ratio": centre_bar_ratio(frame_bgr, quad_px, split_ratio, face, dark_face)}


def centre_bar_ratio(frame_bgr: np.ndarray, quad_px: np.ndarray, split_ratio: float, face_lab: np.ndarray,
                     dark_face: bool, width_px: int = CANON_W_PX) -> float:
    """Share of the tile's width spanned by a stroke across the tile where its halves meet: the centre bar a
    true tile shows there (a quad turned a quarter or cut between two tiles shows none)."""
    w = int(width_px)
    q = np.asarray(quad_px, np.float64)
    dst = np.float32([[0, 0], [w - 1, 0], [w - 1, 2 * w - 1], [0, 2 * w - 1]])
    M = cv2.getPerspectiveTransform(np.float32(q), dst)
    tile = cv2.warpPerspective(frame_bgr, M, (w, 2 * w), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    row = round(split_ratio * 2 * w)
    r0, r1 = max(0, row - int(0.08 * w)), row + int(0.08 * w) + 1
    k = max(5, int(0.35 * w) | 1)
    # against the face's colour, and against the face right around it (a median over a third of the width, as
    # the pips are): a lamp's glare over the bar lifts its ink to the face's own lightness, not to its neighbours'
    m0 = max(0, r0 - k // 2)
    lightness = cv2.cvtColor(tile[m0:r1 + k // 2], cv2.COLOR_BGR2LAB)[..., 0]
    local = cv2.medianBlur(lightness, k)[r0 - m0:r1 - m0].astype(np.float32)
    band = lightness[r0 - m0:r1 - m0].astype(np.float32)
    dl = band - face_lab[0]
    ink = (((dl > 25.0) | (band - local > 25.0)) if dark_face else ((dl < -18.0) | (band - local < -18.0)))
    ink = ink.astype(np.uint8)
    # a spinner's stud (brass, not ink) interrupts the bar at the tile's centre: a row with ink just either side
    # of it runs on through it
    r = max(1, round(SPINNER_DIAMETER_RATIO * w / 2))
    c0, c1 = w // 2 - r, w // 2 + r
    through = ink[:, max(0, c0 - 3):c0].any(axis=1) & ink[:, c1:c1 + 3].any(axis=1)
    ink[through, c0:c1] = 1
    line = cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((1, max(3, int(0.3 * w))), np.uint8))
    return float(line.any(axis=0).mean())


def _blank_is_clean(r: HalfReading, half_lab: np.ndarray, face_lab: np.ndarray, dark_face: bool = False
                    ) -> HalfReading:
    """A half read as blank must look blank: more than ``BLANK_MAX_MARKED`` of its inner area far from the face
    (in lightness either way) means pips were there and not segmented (blur, glare): unreadable, never 0.

    On a black face the lamp's glare is a broad, smooth lightening: there the lightness is compared with its
    surroundings (a median over a third of the width), which follow the glare, and paint still stands out."""
    if r.pips != 0:
        return r
    w = half_lab.shape[1]
    m = round(EDGE_MARGIN_RATIO * w)
    band = round(0.15 * w)
    lightness = np.ascontiguousarray(half_lab[..., 0])
    ref = (cv2.medianBlur(lightness.astype(np.uint8), max(5, int(0.35 * w) | 1)).astype(np.float32)
           if dark_face else np.float32(face_lab[0]))
    inner = (lightness.astype(np.float32) - ref)[m:w - band, m:w - m]
    marked = float((np.abs(inner) > 40.0).mean())
    if marked > BLANK_MAX_MARKED:
        return HalfReading(pips=None, blob_count=r.blob_count, score=0.0, bar_ratio=r.bar_ratio,
                           reason=f"read as blank but {marked:.0%} of it is marked")
    return r


def _middle_is_clear(r: HalfReading, half_lab: np.ndarray, face_lab: np.ndarray, dark_face: bool) -> HalfReading:
    """An even count (0, 2, 4, 6, 8) and the odd one above it differ only by the pip at the middle of the half, the
    place a lamp's highlight most often sits: a pip there washed out of the mask would make a 5 read as a 4 (a
    pale blue 1 under glare, a blank).
    So the middle must look like the face around it: a disc there darker (lighter, on a black face) than the
    ring about it, or further from the face's colour, by ``MIDDLE_MARK_CONTRAST`` in all is a pip not
    segmented: unreadable, never n. A highlight is smooth and colourless, so it makes the middle lighter and
    paler than its ring, never a mark; the blur of the pips about it colours the ring, not the middle."""
    if r.pips not in (0, 2, 4, 6, 8):
        return r
    lab = half_lab.astype(np.float32)
    # a blank half has no pips about its middle to keep clear of, and its reading may come from an outline a
    # little off the tile: the middle is looked for within BLANK_MIDDLE_SEARCH_RATIO of the half's centre
    mark = 0.0
    for disc_mask, ring_mask in _middle_masks(half_lab.shape[1], r.pips == 0):
        disc, ring = lab[disc_mask].mean(axis=0), lab[ring_mask].mean(axis=0)
        dl = float(disc[0] - ring[0])
        colour = float(np.hypot(*(disc[1:] - face_lab[1:])) - np.hypot(*(ring[1:] - face_lab[1:])))
        mark = max(mark, (max(0.0, dl) if dark_face else max(0.0, -dl)) + max(0.0, colour))
    limit = MIDDLE_MARK_CONTRAST_DARK if dark_face else MIDDLE_MARK_CONTRAST
    if mark > limit:
        return HalfReading(pips=None, blob_count=r.blob_count, score=0.0, bar_ratio=r.bar_ratio,
                           reason=f"read as {r.pips} but its middle, where a pip makes {r.pips + 1}, is marked "
                                  f"({mark:.0f} off its surroundings)")
    return r


@functools.lru_cache(maxsize=8)
def _middle_masks(w: int, search: bool) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """The (disc, ring) masks about the middle of a ``w`` x ``w`` half, and with ``search`` about the points
    ``BLANK_MIDDLE_SEARCH_RATIO`` of the width around it too."""
    yy, xx = np.mgrid[0:w, 0:w]
    shifts = (-BLANK_MIDDLE_SEARCH_RATIO, 0.0, BLANK_MIDDLE_SEARCH_RATIO) if search else (0.0,)
    out = []
    for sx in shifts:
        for sy in shifts:
            rad = np.hypot(xx - (w - 1) / 2 - sx * w, yy - (w - 1) / 2 - sy * w) / w
            out.append((rad <= MIDDLE_DISC_RATIO, (rad >= MIDDLE_RING_RATIO[0]) & (rad <= MIDDLE_RING_RATIO[1])))
    return tuple(out)


def _lone_mark_is_pip(a: HalfReading, b: HalfReading, ha: np.ndarray, hb: np.ndarray, face_lab: np.ndarray,
                      width_px: float) -> tuple[HalfReading, HalfReading]:
    """A half of a black tile read as 1 stands only if its mark is like a pip: beside the tile's other pips, no
    broader (``LONE_MARK_BROADER``) nor softer-edged (``LONE_MARK_SOFTER``) than they are; with none, neither
    broader than any set's pip nor softer-edged than the camera's blur makes a pip. Otherwise it is the lamp's
    glare on a blank (a 0 read as 1): the half is flagged, never read. ``width_px``: the tile's width in the
    image."""
    profiles = [[mark_profile(h, face_lab, c) for c in r.centers] for r, h in ((a, ha), (b, hb))]
    out = []
    for i, r in enumerate((a, b)):
        if r.pips != 1 or len(profiles[i]) != 1:
            out.append(r)
            continue
        _contrast, radius, edge = profiles[i][0]
        others = profiles[1 - i] + profiles[i][1:]
        if others:
            ref_radius = float(np.median([p[1] for p in others]))
            ref_edge = float(np.median([p[2] for p in others]))
            bad = radius > LONE_MARK_BROADER * ref_radius or edge > LONE_MARK_SOFTER * ref_edge
            what = (f"{radius / ref_radius:.1f}x as broad and {edge / ref_edge:.1f}x as soft-edged as the tile's "
                    f"other pips")
        else:
            edge_px = edge * width_px
            bad = 2 * radius > PIP_MAX_DIAMETER_RATIO or edge_px > LONE_MARK_MAX_EDGE_PX
            what = f"{2 * radius:.2f} of the width across with a {edge_px:.1f} px edge"
        if bad:
            r = HalfReading(pips=None, blob_count=r.blob_count, score=0.0, bar_ratio=r.bar_ratio,
                            reason=f"read as 1 but the mark is not a pip: {what} (glare)")
        out.append(r)
    return out[0], out[1]


def mark_profile(half_lab: np.ndarray, face_lab: np.ndarray, center_uv: tuple[float, float]
                 ) -> tuple[float, float, float]:
    """The radial profile of a mark at ``center_uv`` in a half's top view (the tile's plane): its contrast (Lab
    distance from the face at its centre, over the lowest ring within ``MARK_PROFILE_RATIO``), the radius where
    it falls to half that, and the width of its edge (the contrast over the steepest fall per unit radius); radii
    as shares of the width."""
    w = half_lab.shape[1]
    rmax = int(np.ceil(MARK_PROFILE_RATIO * w))
    cx, cy = center_uv[0] * w, center_uv[1] * w
    x0, x1 = max(0, int(cx) - rmax), min(w, int(cx) + rmax + 2)
    y0, y1 = max(0, int(cy) - rmax), min(w, int(cy) + rmax + 2)
    d = np.linalg.norm(half_lab[y0:y1, x0:x1].astype(np.float32) - np.float32(face_lab), axis=2)
    yy, xx = np.mgrid[y0:y1, x0:x1]
    r = np.hypot(xx - cx, yy - cy)
    inside = r < rmax
    k = r[inside].astype(int)
    counts = np.bincount(k, minlength=rmax)
    prof = np.bincount(k, weights=d[inside], minlength=rmax) / np.maximum(counts, 1)
    prof = prof[counts > 0]
    top = float(d[r < 1.5].mean()) if (r < 1.5).any() else float(prof[0])
    low = float(prof.min())
    contrast = top - low

    # the radius where it falls to half its contrast (interpolated between the rings either side)
    level = low + 0.5 * contrast
    below = np.nonzero(prof < level)[0]
    i = int(below[0]) if len(below) else len(prof)
    if i == len(prof):
        radius = float(len(prof))
    elif i == 0:
        radius = 0.5
    else:
        radius = (i - 0.5) + float((prof[i - 1] - level) / max(prof[i - 1] - prof[i], 1e-6))
    # the edge: the width a step of the mark's contrast at its steepest fall would take (a pip's rim falls as
    # steeply as the camera's blur lets it, even on a glare's pedestal; a specular lobe falls softly all the way)
    steepest = float(np.max(-np.diff(prof))) if len(prof) > 1 else 0.0
    return contrast, radius / w, min(contrast / max(steepest, 1e-6), float(len(prof))) / w


def face_ratio(half_lab: np.ndarray, features: np.ndarray, face_lab: np.ndarray, dark_face: bool) -> float:
    """Share of a half's inner area (pips and their rims left out) that shows the tile's face colour."""
    w = half_lab.shape[1]
    m = round(EDGE_MARGIN_RATIO * w)
    band = round(BAR_MARGIN_RATIO * w)
    lab = half_lab[m:w - band, m:w - m].astype(np.float32)
    feat = cv2.dilate(features, np.ones((5, 5), np.uint8))[m:w - band, m:w - m] > 0
    dl = lab[..., 0] - face_lab[0]
    dc = np.hypot(lab[..., 1] - face_lab[1], lab[..., 2] - face_lab[2])
    # glare is lighter than the face on ivory and black alike: it counts little. On a black face it is the lamp's
    # white added to the black, so lighter there with the face's own (lack of) colour is glare, however light
    if dark_face:
        away = np.where(dl > 0, np.where(dc < GLARE_MAX_CHROMA, GLARE_WEIGHT_DARK, 0.4) * dl, -0.5 * dl)
    else:
        away = np.where(dl < 0, -dl, 0.5 * dl)
    ok = (away + dc) < FACE_DISTANCE
    rest = ~feat
    return float(ok[rest].mean()) if rest.any() else 0.0
