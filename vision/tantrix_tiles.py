"""Tantrix tile silhouettes: the black hexagons against whatever table they lie on (RULES.md 2.1).

A tile is black (dark and nearly neutral) with saturated link bands; a table is whatever fills the image border.
So a pixel belongs to a tile when it is much darker than the table, or neutral where the table is coloured, or a
saturated colour the table is not — thresholds relative to the table's own measured colour and noise, not a
fixed grey level. Links are closed into their tile and holes (links, glare) filled. Each silhouette's outline is
cut into straight runs: a union of hexagons has only edges in three directions, which is what the plane and
lattice fit (``vision.tantrix_lattice``) need.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

# On a coloured table, a pixel with less than this share of the table's chroma is the tile's neutral black.
NEUTRAL_RATIO = 0.4
# On a neutral table, black is below this fraction of the way from the tiles' black to the table (a soft shadow
# on a light table stays above it).
SPLIT_RATIO = 0.4
# Chroma (Lab C*) below which a pixel is hueless (the tile); a table must exceed it by its noise to be coloured.
NEUTRAL_FLOOR = 6.0
# Chroma (Lab C*) below which a pixel has no hue of its own: a lamp's light, white, grey.
HUELESS_CHROMA = 15.0
# A link band lies within this share of the image's short side of a tile's black.
NEAR_DARK_RATIO = 0.008


@dataclass(frozen=True, slots=True)
class TableModel:
    """The table's Lab colour (median) and noise (robust sigma per channel) measured on the image border."""

    lab: tuple[float, float, float]
    sigma: tuple[float, float, float]

    @property
    def chroma(self) -> float:
        return math.hypot(self.lab[1], self.lab[2])


@dataclass(frozen=True, slots=True)
class Blob:
    """One connected silhouette: its filled mask bounding box, area and outline (image px, closed)."""

    label: int
    area_px: float
    contour_px: np.ndarray  # (N, 2) float
    bbox: tuple[int, int, int, int]  # x, y, w, h


def to_lab(image_bgr: np.ndarray) -> np.ndarray:
    """Float Lab (L 0..100, a/b about -128..127)."""
    return cv2.cvtColor(image_bgr.astype(np.float32) / 255.0, cv2.COLOR_BGR2Lab)


def measure_table(lab: np.ndarray, border_ratio: float = 0.04) -> TableModel:
    """The table is what the image border shows (boards sit inside the frame)."""
    h, w = lab.shape[:2]
    b = max(2, int(round(border_ratio * min(h, w))))
    ring = np.concatenate([lab[:b].reshape(-1, 3), lab[-b:].reshape(-1, 3),
                           lab[:, :b].reshape(-1, 3), lab[:, -b:].reshape(-1, 3)])
    med = np.median(ring, axis=0)
    sig = 1.4826 * np.median(np.abs(ring - med), axis=0)
    return TableModel(lab=tuple(float(v) for v in med), sigma=tuple(float(max(v, 1.0)) for v in sig))


def link_mask(lab: np.ndarray, table: TableModel, min_link_chroma: float = 25.0) -> np.ndarray:
    """Pixels of a saturated colour the table is not: link bands (they lie only on tiles), wherever they are."""
    a, b = lab[..., 1], lab[..., 2]
    floor = max(min_link_chroma, table.chroma + 6.0 * max(table.sigma[1], table.sigma[2]))
    da, db = a - table.lab[1], b - table.lab[2]
    return (a * a + b * b > floor * floor) & (da * da + db * db > (0.6 * floor) ** 2)


def band_pixels(link: np.ndarray, reach_px: int) -> np.ndarray:
    """Link pixels in bands no wider than a link (``reach_px``: a band's half-width): broad colour (a mat, a
    coloured object) is removed with a margin of one band width."""
    h, w = link.shape
    f = max(1, reach_px // 3)  # broad areas are found as well at a coarser scale (and far faster)
    small = cv2.resize(link.astype(np.uint8) * 255, (max(1, w // f), max(1, h // f)), interpolation=cv2.INTER_AREA)
    k = (4 * max(1, reach_px)) // f + 1
    ker = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    broad = cv2.dilate(cv2.morphologyEx((small > 127).astype(np.uint8), cv2.MORPH_OPEN, ker), ker)
    return link & (cv2.resize(broad, (w, h), interpolation=cv2.INTER_NEAREST) == 0)


def tile_black_l(lab: np.ndarray, table: TableModel, share: float = 0.01) -> float:
    """Lightness of the tiles' black: the darkest nearly neutral pixels (``share`` of the image)."""
    L = lab[..., 0]
    chroma = np.hypot(lab[..., 1], lab[..., 2])
    neutral = L[chroma < max(6.0, 0.5 * table.chroma)]
    if neutral.size == 0:
        return float(np.percentile(L, 1))
    k = max(1, int(share * L.size))
    k = min(k, neutral.size)
    darkest = np.partition(neutral.ravel(), k - 1)[:k]
    return float(np.median(darkest))


def tile_l_beside_links(L: np.ndarray, chroma: np.ndarray, link: np.ndarray, near_px: int) -> float | None:
    """Lightness of the tiles' neutral face: the median of hueless pixels right beside link bands."""
    ker = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * near_px + 1, 2 * near_px + 1))
    beside = (cv2.dilate(link.astype(np.uint8), ker) > 0) & ~link & (chroma < 8.0)
    if beside.sum() < 500:
        return None
    return float(np.median(L[beside]))


def tile_table_separation(lab: np.ndarray, table: TableModel, near_px: int) -> float | None:
    """How far the tiles' black stands from the table around it, in the table's lightness noise (sigmas).

    Only a neutral table is told from the tiles by lightness: a grey cloth as light as the glossy black under a
    lamp leaves nothing to split on (the silhouettes would be the table's own mottling). None on a coloured
    table (hue tells them apart) or when no link is seen.
    """
    k = max(3, int(round(min(lab.shape[:2]) / 540)) | 1)
    lab = cv2.GaussianBlur(lab, (k, k), 0)
    L, a, b = lab[..., 0], lab[..., 1], lab[..., 2]
    chroma = np.hypot(a, b)
    if table.chroma - 3.0 * max(table.sigma[1], table.sigma[2]) > NEUTRAL_FLOOR:
        return None
    link = link_mask(lab, table)
    lt = tile_l_beside_links(L, chroma, link, near_px)
    if lt is None:
        return None
    ker = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * near_px + 1, 2 * near_px + 1))
    beside = (cv2.dilate(link.astype(np.uint8), ker) > 0) & ~link & (chroma < 8.0)
    white = (L > max(table.lab[0] + 6.0 * table.sigma[0], 60.0)) & (chroma < 15.0)
    local_tl = local_table_l(L, link | white, far_px=max(3 * near_px, 8))
    return abs(lt - float(np.median(local_tl[beside]))) / table.sigma[0]


def local_table_l(L: np.ndarray, lit: np.ndarray, far_px: int, cell_px: int = 32) -> np.ndarray:
    """The table's lightness here (a lamp or vignetting makes it vary): the mean of pixels far from any link
    (links lie only on tiles), per cell, spread smoothly into the cells the tiles cover."""
    h, w = L.shape
    ker = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * far_px + 1, 2 * far_px + 1))
    far = (cv2.dilate(lit.astype(np.uint8), ker) == 0).astype(np.float32)
    gw, gh = max(1, w // cell_px), max(1, h // cell_px)
    num = cv2.resize(L.astype(np.float32) * far, (gw, gh), interpolation=cv2.INTER_AREA)
    den = cv2.resize(far, (gw, gh), interpolation=cv2.INTER_AREA)
    sig = max(1.0, 0.06 * max(gw, gh))
    num = cv2.GaussianBlur(num, (0, 0), sig)
    den = cv2.GaussianBlur(den, (0, 0), sig)
    grid = num / np.maximum(den, 1e-6)
    grid[den < 1e-4] = float(np.sum(L * far) / max(far.sum(), 1.0))
    return cv2.resize(grid, (w, h), interpolation=cv2.INTER_LINEAR)


def tile_mask(lab: np.ndarray, table: TableModel, *, min_link_chroma: float = 25.0, near_px: int = 0) -> np.ndarray:
    """uint8 mask (255 = tile) before filling: the tiles' black or a saturated colour the table is not.

    With ``near_px`` a link or white pixel counts only that close to black: a link band lies on a black tile,
    a player's coloured mat under a hand is as saturated but reaches far from any tile.

    Black: nearer the tiles' own black than the table in lightness, and no more than half the table's chroma
    (a shadow on a coloured table keeps its hue; the tile is neutral).
    """
    L, a, b = lab[..., 0], lab[..., 1], lab[..., 2]
    chroma = np.hypot(a, b)
    tL = table.lab[0]
    tc = table.chroma
    link_floor = max(min_link_chroma, tc + 6.0 * max(table.sigma[1], table.sigma[2]))
    link = link_mask(lab, table, min_link_chroma)
    if tc - 3.0 * max(table.sigma[1], table.sigma[2]) > NEUTRAL_FLOOR:
        # on a coloured table the tile is what has no hue: its black and the glare on its gloss alike; a shadow
        # or a lighter patch of the table keeps the table's chromaticity (chroma in proportion to lightness)
        dark = chroma < np.maximum(NEUTRAL_FLOOR, NEUTRAL_RATIO * tc * np.clip(L / tL, 0.0, 1.5))
        if near_px > 0:
            # where a mat of another hue meets the table the blend passes through grey (yellow on blue, blue on
            # brown): a hueless line a few pixels wide round the mat, which would anchor the mat's colour as
            # "link" and close into a ring. A tile's black is broad; hueless pixels count only near broad black
            # (the thin black between a tile's edge and a band end stays).
            k = max(3, near_px // 2) | 1
            disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
            # (closed first: sensor noise speckles a dark tile's chroma; the blend line stays a line)
            core = cv2.morphologyEx(cv2.morphologyEx(dark.astype(np.uint8), cv2.MORPH_CLOSE, disc), cv2.MORPH_OPEN,
                                    disc)
            dark &= cv2.dilate(core, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * near_px + 1,) * 2)) > 0
    else:
        # on a neutral table, lightness: the tile's own, measured beside its links (links lie only on tiles;
        # glossy tiles may even be lighter than a black table), against the table's
        lt = tile_l_beside_links(L, chroma, link, near_px) if near_px > 0 else None
        lt = tile_black_l(lab, table) if lt is None else lt
        local_tl = local_table_l(L, link | ((L > max(tL + 6.0 * table.sigma[0], 60.0)) & (chroma < 15.0)),
                                 far_px=max(3 * near_px, 8)) if near_px > 0 else tL
        dark = (chroma < 10.0) & (np.abs(L - lt) < SPLIT_RATIO / (1 - SPLIT_RATIO) * np.abs(L - local_tl))
    # white links of colour-blind sets: clearly lighter than the table and hueless
    white = (L > max(tL + 6.0 * table.sigma[0], 60.0)) & (chroma < 15.0)
    lit = link | white
    if near_px > 0:
        ker = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * near_px + 1, 2 * near_px + 1))
        lit &= cv2.dilate(dark.astype(np.uint8), ker) > 0
        # a link of the table's own colour (red on a red cloth) is told from the table by being enclosed in black
        own = (chroma > link_floor * 0.6) & ~link
        wide = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (4 * near_px + 1, 4 * near_px + 1))
        lit |= own & (cv2.morphologyEx(dark.astype(np.uint8), cv2.MORPH_CLOSE, wide) > 0) & ~(dark > 0)
    return ((dark | lit).astype(np.uint8)) * 255


def table_like(smooth: np.ndarray, table: TableModel, tile_px: np.ndarray, reach_px: int) -> np.ndarray:
    """Pixels (of a lightly smoothed Lab image) that look like the bare table: its chromaticity within its noise
    and its lightness within its noise of the table around them (a lamp or vignetting shades the table smoothly;
    ``tile_px`` are left out of that local lightness). A highlight washing a tile looks like neither."""
    L, a, b = smooth[..., 0], smooth[..., 1], smooth[..., 2]
    tol_ab = max(6.0, 5.0 * max(table.sigma[1], table.sigma[2]))
    da, db = a - table.lab[1], b - table.lab[2]
    hue_ok = da * da + db * db < tol_ab * tol_ab
    local_l = local_table_l(L, tile_px | ~hue_ok, far_px=max(2, reach_px))  # nor a mat beside it
    return hue_ok & (np.abs(L - local_l) < 5.0 * table.sigma[0])


def fill_holes(mask: np.ndarray) -> np.ndarray:
    """Fill every hole of a binary mask (links and glare inside a tile)."""
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    out = np.zeros_like(mask)
    cv2.drawContours(out, contours, -1, 255, thickness=cv2.FILLED)
    return out


def _silhouettes(mask: np.ndarray, close_px: int, min_area: float) -> tuple[list[Blob], np.ndarray]:
    k = max(3, close_px | 1)
    ker = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    filled = fill_holes(cv2.morphologyEx(mask, cv2.MORPH_CLOSE, ker))
    contours, _ = cv2.findContours(filled, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    blobs = []
    for i, c in enumerate(contours):
        area = cv2.contourArea(c)
        if area < min_area:
            continue
        blobs.append(Blob(label=i, area_px=float(area), contour_px=c.reshape(-1, 2).astype(np.float64),
                          bbox=tuple(int(v) for v in cv2.boundingRect(c))))
    blobs.sort(key=lambda bl: -bl.area_px)
    return blobs, filled


def _band_reach_px(lab: np.ndarray, table: TableModel) -> int:
    """How far a link band's middle lies from the black beside it: the typical half-width of saturated runs
    (the ridge of their distance transform; a close camera makes bands wider than an image-scaled reach)."""
    link = link_mask(lab, table)
    dist = cv2.distanceTransform(link.astype(np.uint8), cv2.DIST_L2, 3)
    ridge = (dist >= 1.0) & (dist >= cv2.dilate(dist, np.ones((3, 3), np.uint8)))
    if ridge.sum() < 200:
        return 0
    return int(math.ceil(float(np.median(dist[ridge])))) + 1


@dataclass(frozen=True, slots=True)
class PixelClasses:
    """What each pixel shows. ``tile``: tile black or a link band, near black or not (an empty hex inside a board
    is filled in the silhouette but not tile); ``bands``: link colour no wider than a band (a mat is broad);
    ``washed``: hueless, lighter than tile black and unlike the table (a lamp's highlight over a tile)."""

    tile: np.ndarray
    bands: np.ndarray
    washed: np.ndarray
    broad: np.ndarray | None = None  # link colour broader than a band: a mat, a coloured object
    reach_px: int = 0  # a link band's half-width plus a pixel (0: too few bands seen)


def band_hull(bands: np.ndarray, reach_px: int) -> np.ndarray:
    """Where tiles can be: within reach of the link bands (bool mask).

    Every tile carries three links that touch all six edge midpoints, so no point of a tile top lies farther from
    a band than about half a side (the centre of a tile of three sharp curves); a band's half-width is about a
    tenth of the side (5-6 mm bands on a 46 mm tile). Closing the bands over ``HULL_CLOSE_REACHES`` band reaches
    fills each tile; growing the result by ``HULL_GROW_REACHES`` restores the rim beyond the outermost bands.
    Broad mottling of a table as dark as the tiles, farther from every link, falls outside.
    """
    def disc(r: float) -> np.ndarray:
        k = 2 * int(round(r)) + 1
        return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))

    closed = cv2.morphologyEx(bands.astype(np.uint8) * 255, cv2.MORPH_CLOSE, disc(HULL_CLOSE_REACHES * reach_px))
    return cv2.dilate(fill_holes(closed), disc(HULL_GROW_REACHES * reach_px)) > 0


# Band hull: closing radius and growth in band reaches (a reach is a band's half-width plus a pixel, about a
# tenth of a tile's side): 4 reaches close the widest band-free part of a tile, 2 restore its rim.
HULL_CLOSE_REACHES = 4.0
HULL_GROW_REACHES = 2.0


def find_blobs(image_bgr: np.ndarray, lab: np.ndarray | None = None, *, min_area_ratio: float = 4e-4,
               link_width_ratio: float = 0.3, near_dark_ratio: float = NEAR_DARK_RATIO,
               confine_to_bands: bool = False) -> tuple[list[Blob], np.ndarray, TableModel, PixelClasses]:
    """Tile silhouettes (largest first), the filled mask, the table model and the pixel classes.

    A link of the table's own colour (blue on blue felt) or a glare streak cuts a notch into the outline; a
    closing as wide as a link band (``link_width_ratio`` of the side, measured on a first pass) mends it.
    ``confine_to_bands``: tile black counts only within the links' reach (``band_hull``): on a table as dark as
    the tiles its mottling passes for black and would join the silhouettes.
    """
    lab = to_lab(image_bgr) if lab is None else lab
    table = measure_table(lab)
    h, w = lab.shape[:2]
    k = max(3, int(round(min(h, w) / 540)) | 1)
    # chroma of near-black pixels is mostly sensor noise: judge colour on a lightly smoothed image
    smooth = cv2.GaussianBlur(lab, (k, k), 0)
    reach_px = _band_reach_px(smooth, table)
    near_px = max(int(round(near_dark_ratio * min(h, w))), reach_px)
    raw = tile_mask(smooth, table, near_px=near_px)
    if confine_to_bands and reach_px > 0:
        link0 = link_mask(smooth, table)
        bands0 = band_pixels(link0, near_px)
        # a tile lying on a coloured mat is told from the mat, not from the cloth: what the mat's broad colour
        # encloses is a tile (the table's lightness beside it, taken from the cloth around the mat, says nothing)
        broad0 = (link0 & ~bands0).astype(np.uint8) * 255
        on_mat = (fill_holes(broad0) > 0) & (broad0 == 0)
        raw[~band_hull(bands0, reach_px)] = 0
        raw[on_mat] = 255
    raw = cv2.morphologyEx(raw, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    min_area = min_area_ratio * h * w
    blobs, filled = _silhouettes(raw, k, min_area)
    eps = max(1.5, 0.0012 * math.hypot(w, h))
    segs = [s for i, b in enumerate(blobs) for s in outline_segments(b, i, eps_px=eps, min_len_px=6.0)]
    lengths = np.array([s.length for s in segs])
    if len(lengths) >= 6:
        # the longest runs are whole edges (shorter ones are edges cut by a notch not yet closed)
        side = 0.95 * float(np.percentile(lengths, 95))
        blobs, filled = _silhouettes(raw, int(round(link_width_ratio * side)), min_area)
    # a link band is tile wherever it is (under a lamp's highlight the black beside it may look like the table);
    # a player's mat is as saturated but broad
    link = link_mask(smooth, table)
    bands = band_pixels(link, near_px)
    tile = (raw > 0) | bands
    washed = ~tile & ~table_like(smooth, table, tile, near_px) & (
        smooth[..., 1] ** 2 + smooth[..., 2] ** 2 < HUELESS_CHROMA ** 2)
    return blobs, filled, table, PixelClasses(tile=tile, bands=bands, washed=washed, broad=link & ~bands,
                                               reach_px=reach_px)


@dataclass(frozen=True, slots=True)
class Segment:
    """A straight run of a silhouette outline (image px)."""

    p0: tuple[float, float]
    p1: tuple[float, float]
    blob: int

    @property
    def length(self) -> float:
        return math.hypot(self.p1[0] - self.p0[0], self.p1[1] - self.p0[1])

    @property
    def angle_deg(self) -> float:
        """Direction mod 180."""
        return math.degrees(math.atan2(self.p1[1] - self.p0[1], self.p1[0] - self.p0[0])) % 180.0


def outline_segments(blob: Blob, index: int, *, eps_px: float, min_len_px: float) -> list[Segment]:
    """Straight runs of the outline: polygon simplification, then a line refit to each run's own points."""
    c = blob.contour_px.astype(np.float32).reshape(-1, 1, 2)
    poly = cv2.approxPolyDP(c, eps_px, True).reshape(-1, 2)
    pts = blob.contour_px
    # index of each polygon vertex on the contour
    idx = []
    for v in poly:
        d = np.hypot(pts[:, 0] - v[0], pts[:, 1] - v[1])
        idx.append(int(np.argmin(d)))
    out = []
    m = len(idx)
    for i in range(m):
        a, b = idx[i], idx[(i + 1) % m]
        run = pts[a:b + 1] if b >= a else np.concatenate([pts[a:], pts[:b + 1]])
        if len(run) < 4:
            continue
        p0, p1 = run[0], run[-1]
        if math.hypot(*(p1 - p0)) < min_len_px:
            continue
        # trim the rounded corners, then fit
        t = max(1, len(run) // 8)
        core = run[t:-t] if len(run) > 2 * t + 2 else run
        vx, vy, x0, y0 = cv2.fitLine(core.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        d = np.array([vx, vy])
        s0 = float(np.dot(p0 - (x0, y0), d))
        s1 = float(np.dot(p1 - (x0, y0), d))
        q0 = (float(x0 + s0 * vx), float(y0 + s0 * vy))
        q1 = (float(x0 + s1 * vx), float(y0 + s1 * vy))
        out.append(Segment(q0, q1, index))
    return out
