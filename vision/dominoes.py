"""Finding domino tiles in a photograph and reading them (RULES.md 3; issue 9).

Every face-up tile has a centre bar: a short stroke of ink (dark on ivory, light on black) across the middle of
the tile, with the tile's face on both sides of it. The detector finds such strokes (a spinner's two pieces are
joined), then measures the tile around each from its own face colour: walking beside the bar, clear of the pips,
to the long edges gives the width; the ends are where the face stops across the whole width. The four sides are
then fitted to edge points and intersected, since a tilted camera sees the top as a general quadrilateral. The
quadrilateral is cut at the bar, each half warped (``cv2.getPerspectiveTransform``) to a square top view and
its pips read there (``vision.dominoes_pips``). Every candidate is measured and read, and of overlapping ones
the best read is kept; one with no bar stroke where its halves meet, or not one face colour, is not a tile.
Where the walks fail (glare on a black face, a spinner's stud, a neighbour along the long side, an oblique
view), the tile is placed on its bar instead: every tile of a set is the same rectangle in the one plane of the
tile tops, so a cleanly read tile's quad gives that plane's homography, and the rectangle is laid across the bar
in it and brought back; such a tile is kept only when both halves read with pips. Face-down tiles are
face-coloured rectangles of the found tiles' size with no marks. A tile one of whose halves does not read as a
standard pip pattern is reported with ``pips`` None and the reason: flagged, never guessed (with neither half
readable, nothing but a stroke says it is a tile, and it is dropped).

Where the lamp's glare washes a bar out (or runs into a white one), the first look, against the mean of a
sixteenth of the picture, misses it: a second look with a top-hat the size of a few bar thicknesses finds the
stroke against the face right around it, beside faces lit above the read tiles'. All the tiles read then fix the
plane of the tile tops (``vision.dominoes_plane``): a tile outlined narrower or shorter in it than the set's
tile may have lost a pip row and is not read from that outline (its bar is placed instead), and every read tile
is reported as the set's rectangle there, centred on its bar, so joins and gaps are measured on where the tiles
lie rather than on how far the walks got.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np

from geometry.dominoes import LENGTH_TO_WIDTH_RATIO
from vision.dominoes_pips import HalfReading, centre_bar_ratio, face_colour_lab, read_tile, rectify_tile
from vision.dominoes_plane import BLANK_SAFE_RATIO, SHORT_TILE_RATIO, TilePlane, fit_tile_plane
from vision.types import VisionError

# Grey levels above the local mean for the strict pass over light ink (white paint is ~150 above a black face).
LIGHT_INK_STRICT_CONTRAST = 60.0
# Below this share of face-coloured area a candidate is not a tile at all (wood grain, print on a box).
NOT_A_TILE_FACE_RATIO = 0.6
# The centre bar spans at least this share of the width where the two halves meet (0.55-0.9 on real sets).
MIN_BAR_RATIO = 0.3
MAX_BAR_RATIO = 0.95
# A blank-blank (no pips to check) must show an edge on each side (seam, shadow or table) this far off the face
# (Lab, darker counting fully): the pale wood patch that passed for a 0-0 on a real photo scored 6.
MIN_OUTLINE_CONTRAST = 12.0
# An unseen tile's place (its middle: this share of it) with less than this share marked (off the lightness or
# colour around it by MARK_CONTRAST, Lab, against a median over MARK_WINDOW_RATIO of the width) is bare table, even
# of the face's colour. A tile shows its bar (0.7 x 0.05 of the width: 1.7 % of it), pips, shaded outline, shadow.
UNSEEN_TILE_CORE = 0.85
UNSEEN_TILE_MIN_MARKS = 0.005
MARK_CONTRAST = 25.0
MARK_WINDOW_RATIO = 0.35
# A traced bar whose middle moves less than this share of the tile's width is placed from the stroke as seen.
TRACE_MIN_SHIFT_RATIO = 0.1
# A face-down tile's back is checked for marks this far inside its rectangle (of its size).
BACK_INSET_SCALE = 0.85
# A blank-blank placed on its bar (not walked) needs this much on its weakest side.
PLACED_BLANK_OUTLINE_CONTRAST = 2 * MIN_OUTLINE_CONTRAST
# A side of a read tile's quad showing less than this (half the above) beyond it lies inside the face: on an
# oblique photo of a block of touching tiles one or two sides are such faint seams; three, the outline is short.
READ_OUTLINE_CONTRAST = 6.0
# Length over width of a tile as seen (2.0 standard, 1.6 on some sets, perspective adds a little either way).
ASPECT_RANGE = (1.35, 2.5)
# Tiles of one set look the same size: a candidate outside this band of the median width is not one of them.
SIZE_BAND = (0.7, 1.4)
# A centre bar spans 0.55-0.9 of the width on the sets we know (a spinner's two pieces joined count as one).
KNOWN_SIZE_BAR_RATIO = (0.4, 1.0)
# Share of a candidate's quad that may lie under tiles already taken (read cleanly / flagged).
OVERLAP_CLEAN = 0.4
OVERLAP_FLAGGED = 0.25
# A bar as seen may be turned this far by a glare patch run into it (30 degrees on a render): placed tiles are tried
# along the neighbour's line too when it is this near, and more than the least angle off.
LINE_SNAP_DEG = 40.0
LINE_SNAP_MIN_DEG = 3.0
KNOWN_SIZE_TRIES = 2  # the nearest cleanly read tiles whose plane a placed tile is laid in
# A bar snapped to its neighbours' line must run along it: ink (Lab L) this far beyond both flanks at this share of
# the points over the middle 70 % of the tile's width (glare may wash a third of it out).
STROKE_ALONG_CONTRAST = 10.0
STROKE_ALONG_SHARE = 0.6
# With no plane of the tile tops, a read tile under this share of the width or length of the nearest read tiles
# (the median of NO_PLANE_NEIGHBOURS) is distrusted as found short: perspective changes a tile's size by up to about
# a tenth between neighbours on a steep view (11 % per tile length on the drawn oblique scene), a walk stopped at
# a highlight's rim by a quarter or more.
NO_PLANE_SHORT_RATIO = 0.8
NO_PLANE_NEIGHBOURS = 2
# A read tile's own frame (its homography's plane, in tile widths): across it, along it.
_TILE_AXES = (np.array([1.0, 0.0]), np.array([0.0, 1.0]))
# A placed tile's size comes from a neighbour's outline, good to about a tenth on an oblique view (the outline
# there takes in the near side face): when the placed quad does not read, its face inset to this is read.
PLACED_INSET_SCALE = 0.9
# Tiles do not overlap: a placed tile (read cleanly on both halves) stands when the middle of it (this share of
# its length and width, bar and pips) lies clear of the tiles taken; their outlines may run into it at the ends.
PLACED_CORE_SCALE = 0.8
# The top-hat that finds a bar under glare: a disc this share of the tiles' width (three bar thicknesses; glare
# patches are 0.3-0.7 of the width across, pips 0.12-0.17, so pips pass too but are no strokes).
GLARE_TOPHAT_RATIO = 0.15
# The lamp lifts the face beside a bar under glare by this much (Lab L, 0-255) above the tiles' face at least.
GLARE_MIN_LIFT = 15.0
GLARE_SAME_BAR_RATIO = 0.15  # a stroke this near (of the width) a bar found before, as long, is that bar
# A spinner's stud (up to a fifth of the width) parts the bar into two pieces, each about a third of the width:
# pieces this far apart (of the shorter one's length) may be one bar.
SPINNER_GAP_RATIO = 0.75


class DominoVisionError(VisionError):
    """A frame the dominoes detector cannot work on; the message names the problem."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DominoDetectorParams:
    """Thresholds of the tile finder (pixels scale with the image; ratios with the tile).

    ``local_block_ratio``: the local-contrast window as a share of the image's shorter side.
    ``ink_contrast``: grey levels a bar must differ from its surroundings.
    ``face_tolerance``: Lab distance within which a pixel still counts as the tile's face while walking.
    """

    local_block_ratio: float = 0.06
    ink_contrast: float = 12.0
    min_bar_length_px: float = 7.0
    min_bar_elongation: float = 3.0
    face_tolerance: float = 28.0
    max_pips: int = 12
    find_face_down: bool = True

    def __post_init__(self) -> None:
        if not 0 < self.local_block_ratio < 0.5:
            raise DominoVisionError(f"local_block_ratio must be in (0, 0.5), got {self.local_block_ratio!r}")
        if self.max_pips not in (6, 9, 12):
            raise DominoVisionError(f"max_pips is 6, 9 or 12 (the set), got {self.max_pips!r}")


DEFAULT_DOMINO_PARAMS = DominoDetectorParams()


@dataclass(frozen=True, slots=True, kw_only=True)
class TileDetection:
    """One tile in the image. ``quad_px`` corners: (a, -u), (a, +u), (b, +u), (b, -u) (as geometry.dominoes).

    ``pips`` is (a, b) when both halves read; ``half_pips`` has each half (None = unreadable); ``reasons`` says
    why a half was not read. Face-down tiles have ``face_up`` False and no pips.
    """

    tile_id: str
    quad_px: tuple[tuple[float, float], ...]
    center_px: tuple[float, float]
    width_px: float
    length_px: float
    face_up: bool
    half_pips: tuple[int | None, int | None]
    reasons: tuple[str, ...] = ()
    style: str = "ivory"
    confidence: float = 1.0
    detector: str = "dominoes.bar"
    extra: dict = field(default_factory=dict)

    @property
    def pips(self) -> tuple[int, int] | None:
        a, b = self.half_pips
        return None if a is None or b is None else (a, b)

    @property
    def readable(self) -> bool:
        return not self.face_up or self.pips is not None

    def to_dict(self) -> dict:
        return {
            "id": self.tile_id,
            "face_up": self.face_up,
            "pips": None if self.pips is None else list(self.pips),
            "half_pips": list(self.half_pips),
            "readable": self.readable,
            "flagged": not self.readable,
            "reasons": list(self.reasons),
            "style": self.style,
            "outline_px": [[round(x, 2), round(y, 2)] for x, y in self.quad_px],
            "center_px": [round(v, 2) for v in self.center_px],
            "width_px": round(self.width_px, 2),
            "length_px": round(self.length_px, 2),
            "confidence": round(self.confidence, 3),
            "detector": self.detector,
        }


# --- bar candidates -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Bar:
    center: np.ndarray  # (x, y)
    along: np.ndarray  # unit vector along the stroke
    length: float
    thickness: float
    dark_ink: bool


def _bar_candidates(gray: np.ndarray, params: DominoDetectorParams) -> list[_Bar]:
    h, w = gray.shape
    block = max(15, int(params.local_block_ratio * min(h, w)) | 1)
    g = gray.astype(np.float32)
    local = cv2.blur(g, (block, block))
    out: list[_Bar] = []
    # light ink twice: white paint on a black face is far lighter than the glare it may run into, so a second,
    # stricter threshold parts a bar from a glare patch that the first one merges it with
    passes = ((True, params.ink_contrast), (False, params.ink_contrast), (False, LIGHT_INK_STRICT_CONTRAST))
    for dark, contrast in passes:
        m = ((local - g) > contrast) if dark else ((g - local) > contrast)
        out += _strokes(m.astype(np.uint8), dark, params)
    return _merge_collinear(out)


def _bars_under_glare(gray: np.ndarray, lab: np.ndarray, tile_width_px: float, face_lightness: dict[bool, float],
                      params: DominoDetectorParams) -> list[_Bar]:
    """Bar strokes against the face right around them, for bars a lamp's glare washes out or runs into.

    Glare is a smooth patch a third of the width or more across; a bar is a stroke 0.035-0.06 of the width
    thick. A morphological top-hat (black-hat for dark ink) with a disc ``GLARE_TOPHAT_RATIO`` of the tiles' width
    keeps what is thinner than the disc and drops what is broader, so the stroke stands out of the glare that the
    detector's local mean (over a sixteenth of the picture) follows too slowly. Only where the picture is lit
    above the read tiles' face of the style the ink calls for (``face_lightness``: dark face -> Lab L) is there
    glare to look through."""
    k = max(5, round(GLARE_TOPHAT_RATIO * tile_width_px) | 1)
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    lit = cv2.dilate(lab[..., 0], disc)  # the lightest face within reach of each pixel
    out: list[_Bar] = []
    for dark, op in ((True, cv2.MORPH_BLACKHAT), (False, cv2.MORPH_TOPHAT)):
        face = face_lightness.get(not dark)  # dark ink on a light face, light ink on a dark one
        if face is None:
            continue
        glare = lit > face + GLARE_MIN_LIFT
        if not glare.any():
            continue
        m = (cv2.morphologyEx(gray, op, disc) > params.ink_contrast) & glare
        out += [b for b in _strokes(m.astype(np.uint8), dark, params) if _under_glare(lab, b, face)]
    return _merge_collinear(out)


def _under_glare(lab: np.ndarray, bar: _Bar, face_lightness: float | None) -> bool:
    """The face beside a stroke is lit well above the read tiles' face of that style (the lamp's glare): only
    there is a stroke the first look missed worth a second one (a tile's edge against a pale table is a stroke
    too, with no glare about it)."""
    if face_lightness is None:
        return False  # no tile of the style the ink calls for was read: nothing to compare with
    n = np.array([-bar.along[1], bar.along[0]])
    off = 1.5 * bar.thickness + 2.0
    flank = np.vstack([bar.center + s * n * off + t * bar.along * bar.length for s in (-1, 1)
                       for t in (-0.3, -0.15, 0.0, 0.15, 0.3)])
    lightness = _sample(lab, flank)[:, 0]
    return bool(np.all(np.isfinite(lightness)) and np.median(lightness) > face_lightness + GLARE_MIN_LIFT)


def _strokes(mask: np.ndarray, dark: bool, params: DominoDetectorParams) -> list[_Bar]:
    """The stroke-shaped connected components of an ink mask."""
    h, w = mask.shape
    out: list[_Bar] = []
    n, lab, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    for i in range(1, n):
        x, y, bw, bh, area = stats[i]
        if max(bw, bh) < params.min_bar_length_px or area < 6 or max(bw, bh) > 0.5 * min(h, w):
            continue
        ys, xs = np.nonzero(lab[y:y + bh, x:x + bw] == i)
        pts = np.column_stack([xs + x, ys + y]).astype(np.float32)
        (cx, cy), (rw, rh), ang = cv2.minAreaRect(pts)
        length = max(rw, rh)
        thick = max(1.0, area / max(length, 1.0))  # mean thickness: a spinner's bump does not count
        if length < params.min_bar_length_px or length / thick < params.min_bar_elongation:
            continue
        # a stroke, not a curve: much of its rotated box is ink (a spinner widens the box in the middle)
        if area / max(1.0, length * max(1.0, min(rw, rh))) < 0.35:
            continue
        t = math.radians(ang if rw >= rh else ang + 90.0)
        out.append(_Bar(np.array([cx, cy]), np.array([math.cos(t), math.sin(t)]), float(length), float(thick),
                        dark))
    return out


def _piece_cos(b: _Bar, c: _Bar, least_deg: float) -> float:
    """Cosine of the angle two bar pieces may differ by: ``least_deg``, or more for a short piece, whose
    direction is known only to about its thickness over its length (a spinner and glare leave stubs)."""
    short = min(b, c, key=lambda x: x.length)
    return math.cos(max(math.radians(least_deg), math.atan2(short.thickness, short.length)))


def _merge_collinear(bars: list[_Bar]) -> list[_Bar]:
    """Add the join of two collinear pieces: a bar interrupted by a spinner (a brass stud at the tile's centre).

    The pieces stay candidates too: side-by-side tiles in a hand also have collinear bars, and the tile built on
    their join does not measure up, while each bar's own tile does.
    """
    out: list[_Bar] = []
    for i, b in enumerate(bars):
        best = None
        for j in range(i + 1, len(bars)):
            c = bars[j]
            if c.dark_ink != b.dark_ink or abs(float(b.along @ c.along)) < _piece_cos(b, c, 10.0):
                continue
            d = c.center - b.center
            across = abs(float(d @ np.array([-b.along[1], b.along[0]])))
            along = abs(float(d @ b.along))
            gap = along - (b.length + c.length) / 2
            if (across < 1.5 * max(b.thickness, c.thickness)
                    and -1.0 < gap < SPINNER_GAP_RATIO * min(b.length, c.length) + 3):
                best = j
                break
        out.append(b)
        if best is None:
            continue
        c = bars[best]
        ends = [b.center + b.along * b.length / 2, b.center - b.along * b.length / 2,
                c.center + b.along * c.length / 2 * np.sign(float(c.along @ b.along)),
                c.center - b.along * c.length / 2 * np.sign(float(c.along @ b.along))]
        t = [float((p - b.center) @ b.along) for p in ends]
        lo, hi = min(t), max(t)
        # the direction through both pieces' centres is far better than either short piece's own
        d = c.center - b.center
        along = d / max(float(np.linalg.norm(d)), 1e-9)
        if float(along @ b.along) < 0:
            along = -along
        if min(float(along @ b.along), abs(float(along @ c.along))) < _piece_cos(b, c, 5.7):
            continue  # side by side, not one stroke: the pieces' centres do not lie on their own line
        out.append(_Bar(b.center + b.along * (lo + hi) / 2, along, hi - lo, max(b.thickness, c.thickness),
                        b.dark_ink))
    return out


# --- walking across the face --------------------------------------------------------------------------------


def _sample(lab: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Lab colours at points (N, 2) (nearest pixel); NaN outside the image."""
    h, w = lab.shape[:2]
    xi = np.round(pts[:, 0]).astype(int)
    yi = np.round(pts[:, 1]).astype(int)
    ok = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
    out = np.full((len(pts), 3), np.nan, np.float32)
    out[ok] = lab[yi[ok], xi[ok]]
    return out


def _is_face(colours: np.ndarray, face: np.ndarray, tol: float, dark_face: bool) -> np.ndarray:
    dl = colours[:, 0] - face[0]
    dc = np.hypot(colours[:, 1] - face[1], colours[:, 2] - face[2])
    if dark_face:
        ok = (dl < tol) & (dl > -2.0 * tol) & (dc < tol)
    else:
        # glare is lighter and colourless: still the face
        ok = (dl > -tol) & (dc < tol * 0.8)
    return ok & np.isfinite(colours[:, 0])


def _off_face(colours: np.ndarray, face: np.ndarray, dark_face: bool) -> np.ndarray:
    """How far each colour is from the face: darker (or, on a black face, lighter) counts fully, the other way
    a quarter on ivory (glare is lighter) and half on black, chroma fully. NaN outside -> large."""
    dl = colours[:, 0] - face[0]
    dc = np.hypot(colours[:, 1] - face[1], colours[:, 2] - face[2])
    away = np.where(dl > 0, 0.3 * dl, -0.5 * dl) if dark_face else np.where(dl < 0, -dl, 0.25 * dl)
    out = away + dc
    return np.where(np.isfinite(out), out, 255.0)


EDGE_RISE = 22.0  # off-face rise (Lab units, darker counting fully) that marks the end of a tile's face
EDGE_RISE_MIN = 9.0  # ... at the least, with nothing stronger in the window


def _edge(lab: np.ndarray, start: np.ndarray, direction: np.ndarray, face: np.ndarray, dark_face: bool,
          lo_px: float, hi_px: float) -> float | None:
    """Distance from ``start`` along ``direction`` to the face's edge, searched in [lo_px, hi_px].

    The edge is the first place in the window where the off-face profile rises ``EDGE_RISE`` above the face
    before it (a seam, the bevel's shade, the table), placed at the steepest point of that rise; None when the
    window shows no edge. The first crossing, not the strongest: a neighbour's pip beyond a pale seam is
    darker than the seam.
    """
    steps = np.arange(0.0, hi_px + 3.0, 0.5)
    prof = _off_face(_sample(lab, start[None, :] + steps[:, None] * direction[None, :]), face, dark_face)
    prof = cv2.GaussianBlur(prof.reshape(1, -1).astype(np.float32), (0, 0), 1.0).ravel()
    base = float(np.median(prof[steps <= max(lo_px, 2.0)]))
    window = (steps >= lo_px) & (steps <= hi_px)
    if not window.any():
        return None
    # a faint seam between two touching tiles is all there is to see: then half the window's rise will do
    rise = min(EDGE_RISE, max(EDGE_RISE_MIN, 0.5 * (float(prof[window].max()) - base)))
    sel = np.nonzero(window & (prof > base + rise))[0]
    if len(sel) == 0:
        return None
    k = int(sel[0])
    g = np.diff(prof)
    j0 = max(0, k - 6)
    j = j0 + int(np.argmax(g[j0:k + 1])) if k > j0 else k
    return float(steps[j] + 0.25)


def _measure_tile(lab: np.ndarray, bar: _Bar, params: DominoDetectorParams):
    """The tile around a bar candidate: (quad_px, width_px, length_px, face_lab, dark_face) or None."""
    e = bar.along
    n = np.array([-e[1], e[0]])
    # beside the bar, clear of its ink and of the pips (the nearest pip edge is ~0.17 of the width out)
    off = float(np.clip(1.5 * bar.thickness, 0.08 * bar.length, 0.14 * bar.length))
    # the face just beside the bar (clear of the pips, which sit a quarter width out)
    flank = np.vstack([bar.center + s * n * off + t * e * bar.length for s in (-1, 1) for t in (-0.15, 0, 0.15)])
    cols = _sample(lab, flank)
    if not np.all(np.isfinite(cols[:, 0])):
        return None
    face = np.median(cols, axis=0)
    dark_face = face[0] < 100
    if dark_face == bar.dark_ink:
        return None  # ink must contrast with the face: dark ink on a light face or light ink on a dark face
    if np.sum(np.linalg.norm(cols - face, axis=1) > params.face_tolerance * 1.5) > 1:
        return None
    # the ink of a bar is well off the face (a seam between two tiles is only a shade)
    ink = _off_face(_sample(lab, bar.center[None, :]), face, dark_face)[0]
    if ink < params.ink_contrast * 1.5:
        return None
    ell = bar.length
    # width: beside the bar on both sides, out to the long edges
    plus, minus = [], []
    for s in (-1, 1):
        st = bar.center + s * n * off
        plus.append(_edge(lab, st, e, face, dark_face, 0.45 * ell, 1.05 * ell))
        minus.append(_edge(lab, st, -e, face, dark_face, 0.45 * ell, 1.05 * ell))
    plus = [v for v in plus if v is not None]
    minus = [v for v in minus if v is not None]
    if not plus or not minus:
        return None
    p_, m_ = min(plus), min(minus)
    width = p_ + m_
    if width < ell * 0.95 or width > ell * 2.2:
        return None
    center = bar.center + e * (p_ - m_) / 2
    # a bar ends inside the face; a seam between two tiles runs on to the edges (its dark gap never gives way
    # to face between its end and the tile's side)
    for sign, edge_at in ((1, p_), (-1, m_)):
        t0, t1 = ell / 2 + 1.5, edge_at - 1.0
        if t1 - t0 >= 2.5:  # too narrow a margin to tell in a blurred photo
            seg = bar.center[None, :] + sign * np.arange(t0, t1, 0.5)[:, None] * e[None, :]
            if float(np.min(_off_face(_sample(lab, seg), face, dark_face))) > EDGE_RISE:
                return None
    # length: along n, just inside the long edges (clear of the pip columns); a pip can only cut a walk short
    # the ends: where the face stops across the whole width (a row of pips still leaves half of it face; a
    # seam or the table leaves none)
    ends = [_face_end(lab, center, e, s * n, width, face, dark_face) for s in (-1, 1)]
    # the bar is at the middle of the tile: an end lost against a same-coloured neighbour (or found early in a
    # dense row of pips) mirrors the other; with neither, the standard 2:1 tile (the sides are fitted next)
    plausible = [v is not None and 0.7 * width <= v <= 1.3 * width for v in ends]
    if ends[0] is None and ends[1] is None:
        ends = [width * LENGTH_TO_WIDTH_RATIO / 2] * 2
    elif ends[0] is None or ends[1] is None or (abs(ends[0] - ends[1]) > 0.25 * max(ends) and any(plausible)
                                                  and not all(plausible)):
        good = ends[0] if plausible[0] else ends[1] if plausible[1] else (ends[0] or ends[1])
        ends = [good, good]
    la, lb = ends
    if abs(la - lb) > 0.25 * max(la, lb):
        # both look like ends but disagree: one walk ran past a faint seam or stopped at a dense pip row; the
        # one nearer a standard half (0.8-1 width) is taken for both, and the fit of the ends settles it
        good = min((la, lb), key=lambda v: abs(v - 0.95 * width))
        if not 0.7 * width <= good <= 1.3 * width:
            return None
        la = lb = good
    hw = width / 2
    quad = np.array([center - n * la - e * hw, center - n * la + e * hw, center + n * lb + e * hw,
                     center + n * lb - e * hw])
    quad = _refine_quad(lab, _refine_quad(lab, quad, face, dark_face), face, dark_face)
    # the bar's place along the refined tile (perspective moves it off the middle)
    mid_a, mid_b = (quad[0] + quad[1]) / 2, (quad[2] + quad[3]) / 2
    axis = mid_b - mid_a
    split = float(np.clip((bar.center - mid_a) @ axis / (axis @ axis), 0.3, 0.7))
    width = float((np.linalg.norm(quad[1] - quad[0]) + np.linalg.norm(quad[2] - quad[3])) / 2)
    return quad, width, float(np.linalg.norm(axis)), face, dark_face, split


FACE_OK = 22.0  # off-face distance under which a pixel is the tile's face
END_FACE_SHARE = 0.3  # across the width, less than this share of face pixels is past the tile's end


def _face_end(lab: np.ndarray, center: np.ndarray, across: np.ndarray, outward: np.ndarray, width: float,
              face: np.ndarray, dark_face: bool) -> float | None:
    """Distance from the bar to the tile's end along ``outward``: the first step (past 0.55 of the width) where
    under ``END_FACE_SHARE`` of a cross-section is the face. None when the face never stops within 1.35 widths."""
    vs = np.arange(0.3 * width, 1.35 * width, 0.5)
    us = np.linspace(-0.42, 0.42, 15) * width
    pts = center[None, None, :] + vs[:, None, None] * outward[None, None, :] + us[None, :, None] * across[None, None, :]
    off = _off_face(_sample(lab, pts.reshape(-1, 2)), face, dark_face).reshape(len(vs), len(us))
    # a seam seen a few degrees off square crosses the samples at slightly different steps: each sample takes
    # the worst of its neighbours along the length (3 % of the width either way)
    k = 2 * math.ceil(0.03 * width / 0.5) + 1
    off = cv2.dilate(off.astype(np.float32), np.ones((k, 1), np.uint8))
    share = (off < FACE_OK).mean(axis=1)
    share = np.convolve(share, np.ones(3) / 3, mode="same")
    past = np.nonzero((vs >= 0.55 * width) & (share < END_FACE_SHARE))[0]
    if len(past) == 0:
        return None
    return float(vs[past[0]])


def outline_contrast(lab: np.ndarray, quad: np.ndarray, face: np.ndarray, dark_face: bool) -> float:
    """How clearly the quad's four sides are tile edges: for each side the median, over points along it, of the
    strongest off-face value just outside it (a seam, a shadow, the table); the weakest side counts. A patch of
    pale wood that passes for a blank tile has a side with nothing there. On a black face only the long sides
    count: the seam where a black tile's end meets the next black tile in the line is as black as both."""
    sides = outline_sides(lab, quad, face, dark_face)
    return min(sides[1], sides[3]) if dark_face else min(sides)  # sides 1 and 3 are the long ones


def outline_sides(lab: np.ndarray, quad: np.ndarray, face: np.ndarray, dark_face: bool) -> list[float]:
    """For each side of ``quad`` (in order), the median over points along it of the strongest off-face value just
    outside it (see :func:`outline_contrast`)."""
    width = float(np.linalg.norm(quad[1] - quad[0]))
    centre = quad.mean(axis=0)
    offsets = np.arange(-0.02 * width, 0.1 * width + 0.5, 1.0)
    sides = []
    for k in range(4):
        p, q = quad[k], quad[(k + 1) % 4]
        d = (q - p) / max(float(np.linalg.norm(q - p)), 1e-9)
        out_n = np.array([-d[1], d[0]])
        if out_n @ ((p + q) / 2 - centre) < 0:
            out_n = -out_n
        best = []
        for f in np.linspace(0.2, 0.8, 5):
            pts = (p + (q - p) * f)[None, :] + offsets[:, None] * out_n[None, :]
            best.append(float(_off_face(_sample(lab, pts), face, dark_face).max()))
        sides.append(float(np.median(best)))
    return sides


def _line_intersection(p1, d1, p2, d2) -> np.ndarray | None:
    a = np.array([d1, -d2]).T
    if abs(np.linalg.det(a)) < 1e-6:
        return None
    t = np.linalg.solve(a, p2 - p1)
    return p1 + t[0] * d1


def _refine_quad(lab: np.ndarray, quad: np.ndarray, face: np.ndarray, dark_face: bool) -> np.ndarray:
    """Fit each of the four sides to edge points found along it, and intersect them: a tilted camera sees the
    tile's top as a general quadrilateral, not the rectangle the bar and four walks give."""
    width = float(np.linalg.norm(quad[1] - quad[0]))
    centre = quad.mean(axis=0)
    lines = []
    for k in range(4):
        p, q = quad[k], quad[(k + 1) % 4]
        side = q - p
        length = float(np.linalg.norm(side))
        d = side / length
        out_n = np.array([-d[1], d[0]])
        if out_n @ ((p + q) / 2 - centre) < 0:
            out_n = -out_n
        long_side = length > 1.4 * width
        # start inside, clear of the pips, and look for the edge up to a fifth of a width beyond the rough side
        inset = 0.12 * width if long_side else 0.1 * width
        pts = []
        for f in np.linspace(0.2, 0.8, 7 if long_side else 5):
            if long_side and abs(f - 0.5) < 0.08:
                continue  # the bar's ends
            st = p + side * f - out_n * inset
            v = _edge(lab, st, out_n, face, dark_face, 0.3 * inset, inset + 0.2 * width)
            if v is not None:
                pts.append(st + out_n * v)
        if len(pts) < 3:
            lines.append((p, d))
            continue
        pts = np.asarray(pts)
        # robust: drop the point furthest from the median offset, then fit
        off = (pts - p) @ out_n
        keep = np.abs(off - np.median(off)) <= max(1.5, 0.04 * width)
        pts = pts[keep] if keep.sum() >= 3 else pts
        c = pts.mean(axis=0)
        _, _, vt = np.linalg.svd(pts - c)
        dd = vt[0] if vt[0] @ d > 0 else -vt[0]
        if abs(dd @ d) < 0.97:
            lines.append((p, d))  # more than 14 degrees off the rough side: not this side's edge
            continue
        lines.append((c, dd))
    corners = []
    for k in range(4):
        c = _line_intersection(lines[k - 1][0], lines[k - 1][1], lines[k][0], lines[k][1])
        if c is None or np.linalg.norm(c - quad[k]) > 0.3 * width:
            return quad
        corners.append(c)
    return np.asarray(corners)


# --- the detector -------------------------------------------------------------------------------------------


def _best_outline_of_each_reading(cands: list, plane: TilePlane | None) -> list:
    """Of candidates found the same way (measured or placed) that read the same on both halves and lie on one
    another (each one's centre inside the other), keep the one whose outline is nearest the set's tile: in the
    plane of the tile tops when there is one, else beside the median read tile's width and length. Two bar finds
    of one tile can walk to different outlines (one run on over a neighbour's side), and the pips, read alike,
    cannot tell them apart; the outline decides where the tile joins the line."""
    read = [c for c in cands if c[0][0] == 2]
    if len(read) < 2:
        return cands
    med_w = float(np.median([c[2] for c in read]))
    med_l = float(np.median([c[3] for c in read]))

    def misfit(c) -> float:
        if plane is not None:
            return max(abs(r - 1.0) for r in plane.size_ratios(c[1]))
        return max(abs(c[2] / med_w - 1.0), abs(c[3] / med_l - 1.0))

    drop: set[int] = set()
    for i, c in enumerate(cands):
        if c[0][0] != 2 or i in drop:
            continue
        for j in range(i + 1, len(cands)):
            o = cands[j]
            if (j in drop or o[0][0] != 2 or o[0][1] != c[0][1]
                    or sorted((o[5].pips, o[6].pips)) != sorted((c[5].pips, c[6].pips))
                    or not (_inside(c[1], o[1].mean(axis=0)) and _inside(o[1], c[1].mean(axis=0)))):
                continue
            if misfit(o) < misfit(c):
                drop.add(i)
                break
            drop.add(j)
    return [c for k, c in enumerate(cands) if k not in drop]


def _drop_seam_tiles(cands: list) -> list:
    """Drop a candidate built on the seam between two tiles: it covers half of each of two other candidates that
    do not overlap each other (two blank halves either side of a seam look like a 0-0 double)."""
    from shapely.geometry import Polygon

    polys = [Polygon(c[1]) for c in cands]
    keep = []
    for i, (c, p) in enumerate(zip(cands, polys)):
        halves = [j for j, q in enumerate(polys) if j != i and 0.25 < p.intersection(q).area / p.area < 0.75]
        seam = any(polys[j].intersection(polys[k]).area < 0.1 * polys[j].area
                   for x, j in enumerate(halves) for k in halves[x + 1:])
        if not seam:
            keep.append(c)
    return keep


def _retry_longer(frame_bgr, quad, split, a, b, facts, params):
    """A pip on a half's end outline means that end was found short (a pale seam, glare at the end): push the
    end(s) concerned out by a tenth of the width, up to twice, and keep the first quad both of whose halves read
    cleanly. Nothing is taken that does not read cleanly, so a wrong end is still flagged, never guessed."""
    q = np.asarray(quad, float).copy()
    width = float(np.linalg.norm(q[1] - q[0]))
    axis = (q[2] + q[3]) / 2 - (q[0] + q[1]) / 2
    axis /= max(float(np.linalg.norm(axis)), 1e-9)
    grow_a, grow_b = "outline" in a.reason, "outline" in b.reason
    for step in (1, 2):
        d = 0.1 * width * step
        t = q.copy()
        if grow_a:
            t[0] -= axis * d
            t[1] -= axis * d
        if grow_b:
            t[2] += axis * d
            t[3] += axis * d
        length0 = float(np.linalg.norm((q[2] + q[3]) / 2 - (q[0] + q[1]) / 2))
        sp = (split * length0 + (d if grow_a else 0.0)) / (length0 + d * (grow_a + grow_b))
        ra, rb, f = read_tile(frame_bgr, t, sp, params.max_pips)
        if ra.pips is not None and rb.pips is not None:
            return t, sp, ra, rb, f
    return quad, split, a, b, facts


def _quad_poly(q: np.ndarray) -> np.ndarray:
    return np.round(q).astype(np.int32).reshape(-1, 1, 2)


def _candidate(frame_bgr: np.ndarray, lab: np.ndarray, quad: np.ndarray, split: float, dark_face: bool,
               params: DominoDetectorParams, rank: int = 1, plane_from_image: np.ndarray | None = None):
    """Read the tile ``quad`` and keep it when it passes for a tile: (sort key, quad, width, length, dark face,
    half a, half b, facts), or None. ``rank`` orders candidates that read equally well (0: placed, not measured).
    With ``plane_from_image`` (a homography to the plane of the tile tops) the shape is judged in that plane: an
    oblique camera sees a tile pointing away from it far shorter than 2:1."""
    a, b, facts = read_tile(frame_bgr, quad, split, params.max_pips)
    if "outline" in a.reason or "outline" in b.reason:
        quad, split, a, b, facts = _retry_longer(frame_bgr, quad, split, a, b, facts, params)
    width, length = _quad_size(quad)
    aspect = length / width
    if plane_from_image is not None:
        in_plane = cv2.perspectiveTransform(np.float32(quad).reshape(-1, 1, 2), plane_from_image).reshape(-1, 2)
        pw, pl = _quad_size(in_plane)
        aspect = pl / pw
    if facts["face_ratio"] < NOT_A_TILE_FACE_RATIO:
        return None  # not one face colour: wood, a box, a hand
    if facts["bar_ratio"] < MIN_BAR_RATIO:
        return None  # no stroke across the tile where its halves meet: the quad is not this tile
    if facts["bar_ratio"] > MAX_BAR_RATIO:
        return None  # a stroke from side to side: the gap between two tiles, not a bar (which ends inside)
    if not ASPECT_RANGE[0] <= aspect <= ASPECT_RANGE[1]:
        return None  # not shaped like a domino (halves are squares on most sets, 0.8 x 1 on some)
    if (a.pips, b.pips) == (0, 0) and outline_contrast(
            lab, quad, np.asarray(facts["face_lab"], np.float32), dark_face) < MIN_OUTLINE_CONTRAST:
        return None  # a blank-blank has no pips to vouch for it: with a side showing no edge, it is table
    mid_a, mid_b = (quad[0] + quad[1]) / 2, (quad[2] + quad[3]) / 2
    facts = {**facts, "middle_px": mid_a + split * (mid_b - mid_a)}  # the bar: the tile's middle
    halves_read = int(a.pips is not None) + int(b.pips is not None)
    if halves_read == 0:
        return None  # neither half a standard pattern: nothing but a stroke says it is a tile (grain, print)
    if halves_read == 2 and sum(side < READ_OUTLINE_CONTRAST for side in outline_sides(
            lab, quad, np.asarray(facts["face_lab"], np.float32), dark_face)) >= 3:
        # sides with no edge beyond them lie inside the face: one or two may be faint seams against touching
        # tiles, but three mean the outline was found short all round, and a row of pips beyond it may be lost
        # while what is left still fits a pattern (a 3-3 read as a 2-2): flagged (the bar is then placed)
        why = "three sides of the outline show no tile edge (outline found short): pips beyond it may be lost"
        a = HalfReading(pips=None, blob_count=a.blob_count, reason=why, score=0.0, bar_ratio=a.bar_ratio)
        b = HalfReading(pips=None, blob_count=b.blob_count, reason=why, score=0.0, bar_ratio=b.bar_ratio)
        halves_read = 0
    return ((halves_read, rank, min(a.score, b.score), -abs(aspect - 2.0)), quad, width, length,
            dark_face, a, b, facts)


def _inside(quad: np.ndarray, point: np.ndarray) -> bool:
    return cv2.pointPolygonTest(np.float32(quad).reshape(-1, 1, 2), (float(point[0]), float(point[1])), False) >= 0


def _distrust_short(cands: list, plane: TilePlane | None) -> tuple[list, list]:
    """Candidates read on both halves whose quad is narrower or shorter in the plane of the tile tops than
    ``SHORT_TILE_RATIO`` of the set's tile are read no more (flagged): the side or end they lost may hold a pip
    row, and what is left can still fit a pattern (a 4-6 read 4-4 on a held-out render). Their bars are then
    placed at the set's size. Returns (all candidates, the flagged ones).

    With no plane (the read tiles not one rectangle to a few per cent), a tile is judged beside the nearest
    other read tiles in the picture instead: a camera changes a tile's size by some per cent between neighbours,
    so one outlined under ``NO_PLANE_SHORT_RATIO`` of their width or length lost an edge to glare or a pip row
    (a 0-5 walked to 0.75 x 0.64 of its neighbours beside a highlight read 0-2 on a held-out render)."""
    read = [c for c in cands if c[0][0] == 2]
    if plane is None and len(read) < 1 + NO_PLANE_NEIGHBOURS:
        return cands, []
    out, short = [], []
    for c in cands:
        key, quad, width, length, dark_face, a, b, facts = c
        if key[0] == 2:
            if plane is None:
                width_ratio, length_ratio = _size_beside_neighbours(c, read)
                blank_safe = BLANK_SAFE_RATIO * NO_PLANE_SHORT_RATIO / SHORT_TILE_RATIO
                limit = NO_PLANE_SHORT_RATIO
            else:
                width_ratio, length_ratio = plane.size_ratios(quad)
                blank_safe, limit = BLANK_SAFE_RATIO, SHORT_TILE_RATIO
            # the end lost is on the half shorter from the bar; read blank, that half lost nothing that counts:
            # every other pattern has a pip within half a width of the bar, which an end short by less than
            # ``BLANK_SAFE_RATIO`` leaves in view (cut, it is flagged by the reader)
            shorter = (plane.shorter_half(quad, facts["middle_px"]) if plane is not None
                       else int(np.linalg.norm((quad[2] + quad[3]) / 2 - facts["middle_px"])
                                < np.linalg.norm((quad[0] + quad[1]) / 2 - facts["middle_px"])))
            blank = (a, b)[shorter].pips == 0 and length_ratio > blank_safe
            if width_ratio < limit or (length_ratio < limit and not blank):
                where = ("of the set's tile in the plane of the tile tops" if plane is not None
                         else "of the nearest tiles read")
                why = (f"outline {width_ratio:.0%} x {length_ratio:.0%} {where} (found short): a pip row beyond it "
                       f"may be lost")
                a = HalfReading(pips=None, blob_count=a.blob_count, reason=why, score=0.0, bar_ratio=a.bar_ratio)
                b = HalfReading(pips=None, blob_count=b.blob_count, reason=why, score=0.0, bar_ratio=b.bar_ratio)
                c = ((0, key[1], 0.0, key[3]), quad, width, length, dark_face, a, b, facts)
                short.append(c)
        out.append(c)
    return out, short


def _size_beside_neighbours(c, read: list) -> tuple[float, float]:
    """A read candidate's width and length (px) over the median of the ``NO_PLANE_NEIGHBOURS`` nearest other read
    candidates' (those not lying on it)."""
    centre = c[1].mean(axis=0)
    others = [o for o in read if o is not c and not _inside(c[1], o[1].mean(axis=0))
              and not _inside(o[1], centre)]
    if len(others) < NO_PLANE_NEIGHBOURS:
        return 1.0, 1.0
    others.sort(key=lambda o: float(np.linalg.norm(o[1].mean(axis=0) - centre)))
    near = others[:NO_PLANE_NEIGHBOURS]
    return (c[2] / float(np.median([o[2] for o in near])), c[3] / float(np.median([o[3] for o in near])))


def _scaled_quad(quad: np.ndarray, scale: float) -> np.ndarray:
    """``quad`` scaled about its centre in its own tile frame (perspective kept: the inset is even in the plane)."""
    H = cv2.getPerspectiveTransform(_UNIT_TILE_UV, np.float32(quad))
    return cv2.perspectiveTransform((_UNIT_TILE_UV * scale).reshape(-1, 1, 2), H).reshape(-1, 2).astype(np.float64)


def _quad_size(quad: np.ndarray) -> tuple[float, float]:
    """Width (mean of the two ends) and length (between the ends' midpoints) of a tile quad."""
    q = np.asarray(quad, np.float64)
    width = float((np.linalg.norm(q[1] - q[0]) + np.linalg.norm(q[2] - q[3])) / 2)
    return width, float(np.linalg.norm((q[2] + q[3]) / 2 - (q[0] + q[1]) / 2))


# A tile's top in its own plane frame, in tile widths: (u across, v along), corners in quad order.
_UNIT_TILE_UV = np.float32([[-0.5, -1.0], [0.5, -1.0], [0.5, 1.0], [-0.5, 1.0]])


def _known_size_candidates(frame_bgr: np.ndarray, lab: np.ndarray, bars: list[_Bar], cands: list,
                           params: DominoDetectorParams) -> list:
    """Tiles placed on bars whose own tile could not be measured or read, at the size of the tiles that were.

    A glare patch on a black tile, a spinner's stud, or a neighbour touching its long side can defeat the walks,
    but the bar still marks the tile's centre and direction, and every tile of a set is the same rectangle in
    the one plane of the tile tops. A cleanly read tile's quad is the image of that rectangle, so its
    homography maps the table plane (up to a move within it, which does not matter) to the image: the bar is
    taken into that plane, the rectangle laid on it across the bar, and brought back (so an oblique camera's
    foreshortening comes out right), its sides then fitted to edge points. The nearest read tiles are tried in
    turn; a placed tile is kept only if both its halves read cleanly and show pips, or, a blank-blank, its outline
    meets a clear edge on every side. A bar's faint rest under glare is traced first (``_traced_bar``).

    (The set's rectangle laid in the plane fitted to all read tiles reads a tile a neighbour's frame misses, but
    it also read a 1-0 laid across a black 1-6 and the back beside it, on the lit rim between them, on held-out
    seed 5858: not used.)
    """
    good = [c for c in cands if c[0][0] == 2]
    if not good or not bars:
        return []
    med = float(np.median([c[2] for c in good]))
    good = [c for c in good if SIZE_BAND[0] * med <= c[2] <= SIZE_BAND[1] * med]  # one set: one size
    centres = np.array([c[1].mean(axis=0) for c in good])
    homographies = [cv2.getPerspectiveTransform(_UNIT_TILE_UV, np.float32(c[1])) for c in good]
    lo, hi = min(c[2] for c in good), max(c[2] for c in good)
    out = []
    for bar in bars:
        if not KNOWN_SIZE_BAR_RATIO[0] * lo <= bar.length <= KNOWN_SIZE_BAR_RATIO[1] * hi:
            continue  # not a centre bar of a tile this size
        pt = (float(bar.center[0]), float(bar.center[1]))
        if any(cv2.pointPolygonTest(np.float32(c[1]).reshape(-1, 1, 2), pt, False) >= 0 for c in good):
            continue  # on a tile read already
        if any(cv2.pointPolygonTest(np.float32(_scaled_quad(c[1], 0.3)).reshape(-1, 1, 2), pt, False) >= 0
               for c in out):
            continue  # at the middle of a tile placed already (a spinner's pieces and their join are one bar);
            # one placed on a seam covers its two tiles' bars, which are placed too and outvote it (seam tiles)
        # glare may have washed part of the bar below the first look's contrast: its faint rest sets the middle
        # (the stroke as first seen is tried too: a trace run on into a touching tile's bar is too long to place)
        traced = _traced_bar(lab, bar, KNOWN_SIZE_BAR_RATIO[1] * hi)
        for b in (traced, bar) if traced is not bar else (bar,):
            near = np.argsort(np.linalg.norm(centres - b.center, axis=1))[:KNOWN_SIZE_TRIES]
            cand = _placed_on_any(frame_bgr, lab, b, [homographies[k] for k in near], params)
            if cand is not None:
                out.append(cand)
                break
    return out


def _placed_on_any(frame_bgr: np.ndarray, lab: np.ndarray, bar: _Bar, homographies: list[np.ndarray],
                   params: DominoDetectorParams):
    """The tile on ``bar`` laid in the plane of each read tile's homography (tile widths, in its own frame) in
    turn, along the bar and along that tile's line when the ink runs there: the first that reads."""
    half = bar.along * bar.length / 2
    ends = np.float32([bar.center - half, bar.center, bar.center + half])
    for H in homographies:
        uv = cv2.perspectiveTransform(ends.reshape(-1, 1, 2), np.linalg.inv(H)).reshape(-1, 2)
        d = uv[2] - uv[0]
        if not np.all(np.isfinite(uv)) or np.linalg.norm(d) < 1e-6:
            continue
        d = d / np.linalg.norm(d)
        snapped = [dd for dd in _line_directions(d, _TILE_AXES) if _stroke_runs_along(lab, bar, H, uv[1], dd)]
        for dd in [d] + snapped:
            cand = _placed_on_bar(frame_bgr, lab, bar, H, uv[1], dd, params)
            if cand is not None:
                return cand
    return None


def _stroke_runs_along(lab: np.ndarray, bar: _Bar, H: np.ndarray, c: np.ndarray, d: np.ndarray) -> bool:
    """Whether the ink runs along ``d`` (a direction in the frame ``H``, through ``c``) over the middle of the
    bar's length: the line there is darker (light ink: lighter) than both flanks a bar's thickness or two away at
    ``STROKE_ALONG_SHARE`` of the points. A bar turned by glare run into it still lies along its line; a stroke
    that crosses the line (a bar, or a tile's edge, a quarter turn off) meets it at one point only."""
    ks = np.linspace(-0.35, 0.35, 15)
    ends = np.float32([c - 0.5 * d, c + 0.5 * d]).reshape(-1, 1, 2)
    p0, p1 = cv2.perspectiveTransform(ends, H).reshape(-1, 2)
    along = (p1 - p0) / max(float(np.linalg.norm(p1 - p0)), 1e-9)
    n = np.array([-along[1], along[0]])
    length = float(np.linalg.norm(p1 - p0))  # the tile's width at the bar
    pts = bar.center[None, :] + ks[:, None] * length * along[None, :]
    off = max(2.0, 0.08 * length)
    line = _sample(lab, pts)[:, 0]
    left, right = _sample(lab, pts + n * off)[:, 0], _sample(lab, pts - n * off)[:, 0]
    ink = (np.minimum(left, right) - line) if bar.dark_ink else (line - np.maximum(left, right))
    return float(np.mean(np.nan_to_num(ink, nan=-np.inf) > STROKE_ALONG_CONTRAST)) >= STROKE_ALONG_SHARE


def _line_directions(d: np.ndarray, axes) -> list[np.ndarray]:
    """Of the neighbours' line directions ``axes`` (in the frame of ``d``), the nearest to ``d`` when within
    ``LINE_SNAP_DEG`` of it and not already ``d``: tiles in a line share its direction, and turn a quarter at a
    corner, while a glare patch run into a bar turns the stroke as seen (the minimum-area box of bar and glare
    together). Nothing is taken that does not then read cleanly."""
    best = max(axes, key=lambda a: abs(float(a @ d)), default=None)
    if best is None:
        return []
    cos = abs(float(best @ d))
    if math.cos(math.radians(LINE_SNAP_DEG)) <= cos < math.cos(math.radians(LINE_SNAP_MIN_DEG)):
        return [best if best @ d > 0 else -best]
    return []


def _traced_bar(lab: np.ndarray, bar: _Bar, max_length_px: float) -> _Bar:
    """``bar`` followed on along its line while the line stays darker (light ink: lighter) than the face on both
    sides of it by a third of the stroke's own contrast, over gaps of up to two samples.

    A lamp's highlight over one end of a bar lifts that end below the first look's contrast (against a local
    mean the glare drags up), leaving a stroke off the tile's middle; the faint rest is still ink against the face
    right beside it. Past the bar's true end the line meets the tile's long side, where the flanks along the
    side's edge are as dark as the line, so the trace stops there.
    """
    n = np.array([-bar.along[1], bar.along[0]])
    off = 1.5 * bar.thickness + 2.0
    sign_ink = 1.0 if bar.dark_ink else -1.0

    def contrast(ks: np.ndarray) -> np.ndarray:
        pts = bar.center + np.outer(ks, bar.along)
        line = _sample(lab, pts)[:, 0]
        left, right = _sample(lab, pts + n * off)[:, 0], _sample(lab, pts - n * off)[:, 0]
        flank = np.minimum(left, right) if bar.dark_ink else np.maximum(left, right)
        return np.nan_to_num(sign_ink * (flank - line), nan=-np.inf)

    own = float(np.median(contrast(np.linspace(-0.4, 0.4, 9) * bar.length)))
    if not own > 0:
        return bar
    ends = [-bar.length / 2, bar.length / 2]
    for e, sign in ((0, -1.0), (1, 1.0)):
        ks = ends[e] + sign * np.arange(1.0, max_length_px, 1.0)
        ok = contrast(ks) >= own / 3
        misses = 0
        for k, good in zip(ks, ok):
            if abs(k - ends[1 - e]) > max_length_px:
                break
            if good:
                ends[e], misses = float(k), 0
            else:
                misses += 1
                if misses > 2:
                    break
    length = ends[1] - ends[0]
    if abs(ends[0] + ends[1]) / 2 < TRACE_MIN_SHIFT_RATIO * max_length_px:
        return bar  # the middle hardly moves: the walks and the edge fits place the tile as well from the stroke
    return _Bar(center=bar.center + bar.along * (ends[0] + ends[1]) / 2, along=bar.along, length=float(length),
                thickness=bar.thickness, dark_ink=bar.dark_ink)


def _placed_on_bar(frame_bgr: np.ndarray, lab: np.ndarray, bar: _Bar, H: np.ndarray, c: np.ndarray, d: np.ndarray,
                   params: DominoDetectorParams):
    """The set's rectangle laid across ``bar`` centred at ``c`` (plane of the tile tops,
    tile widths, ``d`` along the bar), its sides fitted to edges and read: the candidate when both halves read
    cleanly with pips, else None. The fit to edges is kept only while the tile stays the set's size in the frame
    to ``SHORT_TILE_RATIO`` (it corrects a few per cent; one that changes the size by a pip row ran on to a
    touching neighbour's end, or to a highlight's rim)."""
    nv = np.array([-d[1], d[0]]) * LENGTH_TO_WIDTH_RATIO / 2
    rect = np.float32([c - nv - d / 2, c - nv + d / 2, c + nv + d / 2, c + nv - d / 2])
    quad = cv2.perspectiveTransform(rect.reshape(-1, 1, 2), H).reshape(-1, 2).astype(np.float64)
    laid = quad
    width_px = _quad_size(quad)[0]
    if not KNOWN_SIZE_BAR_RATIO[0] * width_px <= bar.length <= KNOWN_SIZE_BAR_RATIO[1] * width_px:
        return None  # not the centre bar of a tile here (seen at this distance)
    face = face_colour_lab(cv2.cvtColor(rectify_tile(frame_bgr, quad), cv2.COLOR_BGR2LAB))
    dark_face = bool(face[0] < 100)
    if dark_face == bar.dark_ink:
        return None  # the ink must contrast with the face
    if centre_bar_ratio(frame_bgr, quad, 0.5, face, dark_face) < MIN_BAR_RATIO:
        return None  # laid on the bar, yet no stroke across its middle: a pip row, grain, print
    quad = _refine_quad(lab, _refine_quad(lab, quad, face, dark_face), face, dark_face)
    in_frame = cv2.perspectiveTransform(np.float32(quad).reshape(-1, 1, 2), np.linalg.inv(H)).reshape(-1, 2)
    width_ratio, length_ratio = _quad_size(in_frame)
    if not (SHORT_TILE_RATIO <= width_ratio <= 1 / SHORT_TILE_RATIO
            and SHORT_TILE_RATIO <= length_ratio / LENGTH_TO_WIDTH_RATIO <= 1 / SHORT_TILE_RATIO):
        quad = laid
    mid_a, mid_b = (quad[0] + quad[1]) / 2, (quad[2] + quad[3]) / 2
    axis = mid_b - mid_a
    split = float(np.clip((bar.center - mid_a) @ axis / (axis @ axis), 0.3, 0.7))
    cand = _candidate(frame_bgr, lab, quad, split, dark_face, params, rank=0, plane_from_image=np.linalg.inv(H))
    if cand is None or cand[0][0] < 2:
        # the size came from a neighbour's outline, which on an oblique view takes in its near side
        # face: read the face inset by the size's uncertainty (a pip cut by the inset outline still flags)
        inset = _scaled_quad(quad, PLACED_INSET_SCALE)
        inner = _candidate(frame_bgr, lab, inset, 0.5 + (split - 0.5) / PLACED_INSET_SCALE, dark_face,
                           params, rank=0, plane_from_image=np.linalg.inv(H))
        if inner is not None and inner[0][0] == 2:
            # read on the inset face, but the tile is the size its plane says: its outline joins the line
            cand = (inner[0], quad, *_quad_size(quad), *inner[4:])
    # placed, not measured: only a clean reading of both halves, with pips on the grid (or, for a blank-blank, a
    # clear outline all round), shows it is a tile (wood grain and print have strokes too, and a flag on the table
    # is noise to the umpire)
    if cand is None or cand[0][0] < 2:
        return None
    if cand[5].pips or cand[6].pips:
        return cand
    # a blank-blank has only its bar and its outline to show it is a tile: placed, the set's rectangle must meet
    # a clear edge on every side (twice what a walked one needs; grain and print under a placed quad score 10-17)
    face = np.asarray(cand[7]["face_lab"], np.float32)
    return cand if outline_contrast(lab, cand[1], face, cand[4]) >= PLACED_BLANK_OUTLINE_CONTRAST else None


def _same_stroke(b: _Bar, o: _Bar, tol_px: float) -> bool:
    """Two finds of one stroke: centres and lengths within ``tol_px``, directions within 10 degrees."""
    return (float(np.linalg.norm(b.center - o.center)) < tol_px and abs(b.length - o.length) < tol_px
            and abs(float(b.along @ o.along)) > math.cos(math.radians(10.0)))


def _measured_candidates(frame_bgr: np.ndarray, lab: np.ndarray, bars: list[_Bar], params: DominoDetectorParams
                         ) -> tuple[list, list[_Bar]]:
    """Each bar's tile measured and read: (the candidates, the bars whose tile did not read on both halves)."""
    cands, unmeasured = [], []
    for bar in bars:
        m = _measure_tile(lab, bar, params)
        if m is None:
            unmeasured.append(bar)
            continue
        quad, width, length, _face, dark_face, split = m
        c = _candidate(frame_bgr, lab, quad, split, dark_face, params)
        if c is not None:
            cands.append(c)
        if c is None or c[0][0] < 2:
            unmeasured.append(bar)  # measured wrong (a walk ran past a seam, or stopped at a pip): try the known size
    return cands, unmeasured


def detect_dominoes(frame_bgr: np.ndarray, params: DominoDetectorParams = DEFAULT_DOMINO_PARAMS
                    ) -> tuple[TileDetection, ...]:
    """Every tile found in ``frame_bgr``: face-up tiles with their pips read (or flagged), then face-down ones."""
    if not isinstance(frame_bgr, np.ndarray) or frame_bgr.ndim != 3 or frame_bgr.shape[2] != 3:
        raise DominoVisionError(f"expected a BGR image (H, W, 3), got {getattr(frame_bgr, 'shape', type(frame_bgr))}")
    h, w = frame_bgr.shape[:2]
    if min(h, w) < 32:
        raise DominoVisionError(f"image of {w}x{h} px is too small to hold a readable domino")
    gray = cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2GRAY)
    lab = cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2LAB).astype(np.float32)
    bars = _bar_candidates(gray, params)
    # measure and read every candidate, then keep the best of overlapping ones: a seam between two tiles can pass
    # for a bar, but the "tile" around it does not read as two standard halves, while the true tile does
    cands, unmeasured = _measured_candidates(frame_bgr, lab, bars, params)
    good = [c for c in cands if c[0][0] == 2]
    if good:
        # bars the lamp's glare washed out or ran into, found against the face right around them
        width_px = float(np.median([c[2] for c in good]))
        faces = {style: float(np.median([c[7]["face_lab"][0] for c in good if c[4] == style]))
                 for style in {c[4] for c in good}}
        glared = [b for b in _bars_under_glare(gray, lab, width_px, faces, params)
                  if not any(_inside(c[1], b.center) for c in good)
                  and not any(_same_stroke(b, o, GLARE_SAME_BAR_RATIO * width_px) for o in bars)]
        more, more_unmeasured = _measured_candidates(frame_bgr, lab, glared, params)
        # a second look, as a placed tile is: only a clean reading with pips shows a tile (a pencil is a stroke)
        more = [c for c in more if c[0][0] == 2 and (c[5].pips or c[6].pips)]
        cands, unmeasured, bars = cands + more, unmeasured + more_unmeasured, bars + glared
    # the plane of the tile tops from every tile read cleanly: one outlined short in it may have lost a pip row
    cands = _best_outline_of_each_reading(cands, None)  # before the plane is fitted to the read outlines
    plane = fit_tile_plane([c[1] for c in cands if c[0][0] == 2], (w, h))
    cands, short = _distrust_short(cands, plane)
    tried = {id(bar) for bar in unmeasured}
    unmeasured += [bar for bar in bars if id(bar) not in tried and any(_inside(c[1], bar.center) for c in short)]
    placed = _known_size_candidates(frame_bgr, lab, unmeasured, cands, params)
    # (a placed tile is the set's size by construction: its sides are only fitted to edges within a fifth of a
    # width of where its neighbour's size puts them, so it cannot have lost a pip row the way a walk can)
    cands += placed
    cands = _drop_seam_tiles(cands)
    if len(cands) >= 3:
        med = float(np.median([c[2] for c in cands if c[0][0] == 2] or [c[2] for c in cands]))
        # (a placed tile has the read tiles' size in the plane already; seen obliquely its width in pixels is not)
        cands = [c for c in cands if c[0][1] == 0 or SIZE_BAND[0] * med <= c[2] <= SIZE_BAND[1] * med]
    cands = _best_outline_of_each_reading(cands, plane)
    cands.sort(key=lambda c: c[0], reverse=True)
    taken = np.zeros((h, w), np.uint8)
    tiles: list[TileDetection] = []
    for key, quad, width, length, dark_face, a, b, facts in cands:
        c = quad.mean(axis=0)
        cx, cy = round(c[0]), round(c[1])
        if taken[min(max(cy, 0), h - 1), min(max(cx, 0), w - 1)]:
            continue
        mask = np.zeros((h, w), np.uint8)
        cv2.fillPoly(mask, [_quad_poly(quad)], 1)
        core = mask
        if key[1] == 0:  # placed: its own outline is as uncertain as its neighbours'
            core = np.zeros((h, w), np.uint8)
            cv2.fillPoly(core, [_quad_poly(_scaled_quad(quad, PLACED_CORE_SCALE))], 1)
        area = float(core.sum())
        # quads of touching tiles may overlap a little where an outline ran on into the neighbour (a tile's side
        # seen obliquely); one that reads cleanly, centred clear of the others, stands
        limit = OVERLAP_CLEAN if a.pips is not None and b.pips is not None else OVERLAP_FLAGGED
        if area > 0 and float((core & taken).sum()) / area > limit:
            continue
        taken |= mask
        reasons = tuple(f"half {name}: {r.reason}" for name, r in (("a", a), ("b", b)) if r.pips is None)
        if plane is not None and a.pips is not None and b.pips is not None:
            # where the tile lies: the set's rectangle in the plane, centred on its bar (the walks and the fits
            # to edges may leave an end a few per cent out, enough to part a join or close a gap)
            quad = plane.set_tile_quad_px(quad, facts["middle_px"])
            c = quad.mean(axis=0)
            width, length = _quad_size(quad)
        tiles.append(TileDetection(
            tile_id=f"T{len(tiles)}", quad_px=tuple((float(x), float(y)) for x, y in quad),
            center_px=(float(c[0]), float(c[1])), width_px=float(width),
            length_px=float(length), face_up=True, half_pips=(a.pips, b.pips), reasons=reasons,
            style="black" if dark_face else "ivory", confidence=float(min(a.score, b.score)),
            extra={"face_lab": facts["face_lab"]},
        ))
    if params.find_face_down and tiles:
        tiles += _face_down_tiles(frame_bgr, lab, tiles, taken, params)
    return tuple(tiles)


def face_share(frame_bgr: np.ndarray, quad_px: np.ndarray, tiles: tuple[TileDetection, ...] | list[TileDetection],
               params: DominoDetectorParams = DEFAULT_DOMINO_PARAMS) -> float:
    """Share of the pixels inside ``quad_px`` that show the face colour of the face-up ``tiles`` found (either
    style). Where a tile went unseen its face (or its back, the same material) covers the place; bare table
    does not, so a place with little of it holds no tile."""
    h, w = frame_bgr.shape[:2]
    q = np.asarray(quad_px, np.float64)
    faces = [(t.style, t.extra["face_lab"]) for t in tiles if t.face_up and "face_lab" in t.extra]
    if not faces or not np.all(np.isfinite(q)):
        return 0.0
    x0, y0 = np.floor(q.min(axis=0)).astype(int)
    x1, y1 = np.ceil(q.max(axis=0)).astype(int) + 1
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 - x0 < 2 or y1 - y0 < 2:
        return 0.0
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillPoly(mask, [_quad_poly(q - [x0, y0])], 1)
    if not mask.any():
        return 0.0
    lab = cv2.cvtColor(frame_bgr[y0:y1, x0:x1], cv2.COLOR_BGR2LAB).astype(np.float32)[mask > 0]
    best = 0.0
    for style in sorted({st for st, _ in faces}):
        face = np.median([f for st, f in faces if st == style], axis=0).astype(np.float32)
        best = max(best, float(_is_face(lab, face, params.face_tolerance, style == "black").mean()))
    if best > 0.0 and mark_share(frame_bgr, q, tiles) < UNSEEN_TILE_MIN_MARKS:
        return 0.0  # the face's colour, but not a mark on it: a table of that colour, bare
    return best


def mark_share(frame_bgr: np.ndarray, quad_px: np.ndarray, tiles) -> float:
    """Share of the middle of ``quad_px`` (``UNSEEN_TILE_CORE`` of it, clear of the ``tiles`` found) marked: off
    the lightness or colour around it (a median over ``MARK_WINDOW_RATIO`` of the tiles' width) by
    ``MARK_CONTRAST``. A tile lying there shows its bar, pips, shaded outline or shadow; a bare table of the face's
    colour shows nothing but its grain."""
    h, w = frame_bgr.shape[:2]
    width_px = float(np.median([t.width_px for t in tiles])) if tiles else 0.0
    if width_px <= 0:
        return 1.0
    core = _scaled_quad(np.asarray(quad_px, np.float64), UNSEEN_TILE_CORE)
    k = max(5, round(MARK_WINDOW_RATIO * width_px) | 1)
    x0, y0 = np.floor(core.min(axis=0)).astype(int) - k
    x1, y1 = np.ceil(core.max(axis=0)).astype(int) + k + 1
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 - x0 < k or y1 - y0 < k:
        return 1.0
    inside = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillPoly(inside, [_quad_poly(core - [x0, y0])], 1)
    found = np.zeros_like(inside)
    for t in tiles:
        cv2.fillPoly(found, [_quad_poly(np.asarray(t.quad_px) - [x0, y0])], 1)
    found = cv2.dilate(found, np.ones((3, 3), np.uint8), iterations=max(1, round(0.1 * width_px)))
    keep = (inside > 0) & (found == 0)
    if keep.sum() < 0.1 * inside.sum() or not keep.any():
        return 1.0  # the place is mostly under tiles found: nothing to judge by
    crop = cv2.cvtColor(frame_bgr[y0:y1, x0:x1], cv2.COLOR_BGR2LAB)
    local = cv2.medianBlur(crop, k).astype(np.float32)
    d = crop.astype(np.float32) - local
    off = np.maximum(np.abs(d[..., 0]), np.hypot(d[..., 1], d[..., 2]))
    return float((off[keep] > MARK_CONTRAST).mean())


def _face_down_tiles(frame_bgr: np.ndarray, lab: np.ndarray, tiles: list[TileDetection], taken: np.ndarray,
                     params: DominoDetectorParams) -> list[TileDetection]:
    """Face-coloured rectangles of the found tiles' size, with no bar: tiles lying face down."""
    h, w = lab.shape[:2]
    width = float(np.median([t.width_px for t in tiles]))
    out: list[TileDetection] = []
    k = len(tiles)
    blocked = cv2.dilate(taken, np.ones((3, 3), np.uint8), iterations=max(1, int(0.06 * width)))
    for style in sorted({t.style for t in tiles}):
        face = np.median([t.extra["face_lab"] for t in tiles if t.style == style], axis=0)
        ok = _is_face(lab.reshape(-1, 3), np.asarray(face, np.float32), params.face_tolerance,
                      style == "black").reshape(h, w)
        m = (ok & (blocked == 0)).astype(np.uint8)
        m = cv2.morphologyEx(m, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        n, labels, stats, _ = cv2.connectedComponentsWithStats(m, connectivity=4)
        tile_area = 2.0 * width * width
        for i in range(1, n):
            area = stats[i, cv2.CC_STAT_AREA]
            if area < 0.6 * tile_area or area > 6.5 * tile_area:
                continue
            ys, xs = np.nonzero(labels == i)
            (cx, cy), (rw, rh), ang = cv2.minAreaRect(np.column_stack([xs, ys]).astype(np.float32))
            # holes do not count against the shape: glare on a back lifts it off the face colour
            outer, _ = cv2.findContours((labels == i).astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
            area = max(area, max(cv2.contourArea(c) for c in outer))
            if area / max(1.0, rw * rh) < 0.8:
                continue
            long_side, short_side = max(rw, rh), min(rw, rh)
            t = math.radians(ang if rw >= rh else ang + 90.0)
            along = np.array([math.cos(t), math.sin(t)])  # the rectangle's long direction
            across = np.array([-along[1], along[0]])
            # one tile (W x 2W) or several side by side (kW x 2W): split along the short dimension
            pieces = []
            if abs(long_side - 2 * width) < 0.3 * width and abs(short_side - width) < 0.3 * width:
                pieces = [(np.array([cx, cy]), along, long_side, short_side)]
            elif abs(long_side / 2 - width) < 0.3 * width or abs(short_side - 2 * width) < 0.3 * width:
                # a row of tiles: the 2W side is one of the two; the other is k widths
                two_w, k_w, dir_two, dir_k = ((short_side, long_side, across, along)
                                              if abs(short_side - 2 * width) < abs(long_side - 2 * width)
                                              else (long_side, short_side, along, across))
                count = round(k_w / width)
                if count >= 1 and abs(k_w - count * width) < 0.35 * width * max(1, count) ** 0.5 \
                        and abs(two_w - 2 * width) < 0.3 * width:
                    step = k_w / count
                    for j in range(count):
                        c = np.array([cx, cy]) + dir_k * (-k_w / 2 + step * (j + 0.5))
                        pieces.append((c, dir_two, two_w, step))
            for c, ax, ln, wd in pieces:
                nrm = np.array([-ax[1], ax[0]])
                quad = np.array([c - ax * ln / 2 - nrm * wd / 2, c - ax * ln / 2 + nrm * wd / 2,
                                 c + ax * ln / 2 + nrm * wd / 2, c + ax * ln / 2 - nrm * wd / 2])
                # read inset: the rectangle comes from the face-coloured area, whose edge runs along the tile's
                # rounded corners and shaded edge, which the reader would take for pips cut by the outline
                a, b, _ = read_tile(frame_bgr, _scaled_quad(quad, BACK_INSET_SCALE), 0.5, params.max_pips)
                if (a.pips or 0) + (b.pips or 0) > 0 or a.pips is None or b.pips is None:
                    continue  # marks on it: not a plain back
                out.append(TileDetection(
                    tile_id=f"T{k}", quad_px=tuple((float(x), float(y)) for x, y in quad),
                    center_px=(float(c[0]), float(c[1])), width_px=float(wd), length_px=float(ln), face_up=False,
                    half_pips=(None, None), style=style, confidence=0.8, detector="dominoes.back"))
                k += 1
    return out
