"""Dominoes in table millimetres (RULES.md section 3): tile values, tile outlines, standard pip grids, joins.

A tile's local frame: origin at the centre of its top face, ``u`` across the width, ``v`` along the length.
Half ``a`` is the half on the tile's -v side, half ``b`` the +v side. ``angle_deg`` is the plan direction (from
+x, counter-clockwise) of the tile's +v axis, so half ``b`` lies towards ``angle_deg``. Pure Python and numpy:
no pixels, no OpenCV.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from geometry.types import GeometryError

# A standard domino is twice as long as it is wide (each half a square). Nominal tile of a common double-six
# set: 48 x 24 x 7.5 mm (pub and club sets range 40-54 mm long).
LENGTH_TO_WIDTH_RATIO = 2.0
NOMINAL_TILE_WIDTH_MM = 24.0
NOMINAL_TILE_THICKNESS_MM = 7.5
# Double-n sets (RULES.md 3.1): pips per end 0..n.
SET_MAX_PIPS: tuple[int, ...] = (6, 9, 12)
# Two tiles join when one's end face lies within this share of the tile width of the other tile (a hand-laid
# layout leaves gaps of a millimetre or two; half a pip spacing is far from the next tile over).
JOIN_GAP_WIDTH_RATIO = 0.15
# An unseen tile between an open end and a tile outside the layout: where it would lie, found tiles may cover
# this share of it (outlines from a photo are a little generous), and its far end may be this share of the
# width from the tile it would join (its place is only guessed).
UNSEEN_OVERLAP_RATIO = 0.1
UNSEEN_REACH_WIDTH_RATIO = 0.4


def set_size(max_pips: int) -> int:
    """Tiles in a double-n set, (n + 1)(n + 2) / 2 (RULES.md 3.1).

    >>> set_size(6), set_size(9), set_size(12)
    (28, 55, 91)
    """
    if max_pips not in SET_MAX_PIPS:
        raise GeometryError(f"a domino set is double-six, double-nine or double-twelve, got double-{max_pips}")
    return (max_pips + 1) * (max_pips + 2) // 2


@dataclass(frozen=True, slots=True, kw_only=True)
class Bone:
    """A tile's value: pips of half ``a`` and half ``b`` (0 = blank).

    >>> Bone(a=6, b=1).total_pips, Bone(a=6, b=6).is_double
    (7, True)
    """

    a: int
    b: int

    def __post_init__(self) -> None:
        for name in ("a", "b"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= max(SET_MAX_PIPS):
                raise GeometryError(f"a domino half holds 0..{max(SET_MAX_PIPS)} pips, got {name}={v!r}")

    @classmethod
    def parse(cls, text: str | tuple[int, int] | list[int] | Bone) -> Bone:
        """``"6-1"``, ``"6|1"``, ``(6, 1)`` or a Bone.

        >>> Bone.parse("5|2")
        Bone(a=5, b=2)
        """
        if isinstance(text, Bone):
            return text
        if isinstance(text, (tuple, list)):
            if len(text) != 2:
                raise GeometryError(f"a domino has two halves, got {text!r}")
            return cls(a=_as_int(text[0], text), b=_as_int(text[1], text))
        parts = str(text).replace("|", "-").replace(":", "-").split("-")
        if len(parts) != 2:
            raise GeometryError(f"a domino is written like '6-1', got {text!r}")
        return cls(a=_as_int(parts[0].strip(), text), b=_as_int(parts[1].strip(), text))

    @property
    def is_double(self) -> bool:
        """DM P3: both halves equal."""
        return self.a == self.b

    @property
    def total_pips(self) -> int:
        """DM P5: the tile's share of a pip count."""
        return self.a + self.b

    @property
    def high(self) -> int:
        return max(self.a, self.b)

    @property
    def low(self) -> int:
        return min(self.a, self.b)

    def matches(self, end_pips: int) -> bool:
        """DM P2: either half equals the open end's value."""
        return end_pips in (self.a, self.b)

    def other_end(self, end_pips: int) -> int:
        """The half left open when this tile is laid on ``end_pips`` (DM P2)."""
        if self.a == end_pips:
            return self.b
        if self.b == end_pips:
            return self.a
        raise GeometryError(f"{self} does not match an open end of {end_pips}")

    def key(self) -> tuple[int, int]:
        """Order-free identity: (low, high). A set holds each key once."""
        return (self.low, self.high)

    def __str__(self) -> str:
        return f"{self.a}-{self.b}"


def _as_int(v, whole) -> int:
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise GeometryError(f"domino pips must be whole numbers, got {whole!r}") from None
    if not f.is_integer():
        raise GeometryError(f"domino pips must be whole numbers, got {whole!r}")
    return int(f)


@dataclass(frozen=True, slots=True, kw_only=True)
class PlacedTile:
    """A tile lying on the table: where it is (table mm), which way, and what it shows.

    ``bone`` is None when the face is down or the pips could not be read; ``face_up`` says which.
    """

    tile_id: str
    center_mm: tuple[float, float]
    angle_deg: float
    width_mm: float = NOMINAL_TILE_WIDTH_MM
    length_mm: float = NOMINAL_TILE_WIDTH_MM * LENGTH_TO_WIDTH_RATIO
    bone: Bone | None = None
    face_up: bool = True
    position_sigma_mm: float = 0.0
    confidence: float = 1.0

    def __post_init__(self) -> None:
        if not self.tile_id:
            raise GeometryError("a tile needs a tile_id")
        c = tuple(float(v) for v in self.center_mm)
        if len(c) != 2 or not all(math.isfinite(v) for v in c):
            raise GeometryError(f"tile {self.tile_id}: center_mm must be two finite numbers, got {self.center_mm!r}")
        object.__setattr__(self, "center_mm", c)
        if not math.isfinite(self.angle_deg):
            raise GeometryError(f"tile {self.tile_id}: angle_deg must be finite, got {self.angle_deg!r}")
        if not (self.width_mm > 0 and self.length_mm > 0):
            raise GeometryError(f"tile {self.tile_id}: sizes must be positive, got {self.width_mm}x{self.length_mm}")
        if self.bone is not None and not isinstance(self.bone, Bone):
            object.__setattr__(self, "bone", Bone.parse(self.bone))
        if not self.face_up and self.bone is not None:
            raise GeometryError(f"tile {self.tile_id} is face down, so its pips cannot be known")
        if not 0.0 <= self.confidence <= 1.0:
            raise GeometryError(f"tile {self.tile_id}: confidence must be in [0, 1], got {self.confidence!r}")

    @property
    def axis(self) -> tuple[float, float]:
        """Unit plan vector of the +v (towards half b) axis."""
        t = math.radians(self.angle_deg)
        return (math.cos(t), math.sin(t))

    def end_center_mm(self, half: str) -> tuple[float, float]:
        """Midpoint of the end face of half ``'a'`` or ``'b'``.

        >>> PlacedTile(tile_id="t", center_mm=(0, 0), angle_deg=0, width_mm=20, length_mm=40).end_center_mm("b")
        (20.0, 0.0)
        """
        s = _half_sign(half)
        ax, ay = self.axis
        h = s * self.length_mm / 2
        return (self.center_mm[0] + h * ax, self.center_mm[1] + h * ay)

    def half_center_mm(self, half: str) -> tuple[float, float]:
        """Centre of the square of half ``'a'`` or ``'b'``."""
        s = _half_sign(half)
        ax, ay = self.axis
        h = s * self.length_mm / 4
        return (self.center_mm[0] + h * ax, self.center_mm[1] + h * ay)

    def outline_mm(self) -> tuple[tuple[float, float], ...]:
        """The four corners of the top face: (a, -u), (a, +u), (b, +u), (b, -u).

        >>> PlacedTile(tile_id="t", center_mm=(0, 0), angle_deg=0, width_mm=20, length_mm=40).outline_mm()
        ((-20.0, -10.0), (-20.0, 10.0), (20.0, 10.0), (20.0, -10.0))
        """
        ax, ay = self.axis
        nx, ny = -ay, ax  # +u
        hl, hw = self.length_mm / 2, self.width_mm / 2
        cx, cy = self.center_mm
        out = []
        for sv, su in ((-1, -1), (-1, 1), (1, 1), (1, -1)):
            out.append((_r(cx + sv * hl * ax + su * hw * nx), _r(cy + sv * hl * ay + su * hw * ny)))
        return tuple(out)

    def pips(self, half: str) -> int | None:
        if self.bone is None:
            return None
        return self.bone.a if _half_sign(half) < 0 else self.bone.b


def _r(v: float) -> float:
    return round(v, 9) + 0.0


def _half_sign(half: str) -> int:
    if half == "a":
        return -1
    if half == "b":
        return 1
    raise GeometryError(f"a tile's half is 'a' or 'b', got {half!r}")


def distance_to_tile_mm(point_mm: tuple[float, float], tile: PlacedTile) -> float:
    """Plan distance from a point to the tile's top-face rectangle (0 inside).

    >>> t = PlacedTile(tile_id="t", center_mm=(0, 0), angle_deg=0, width_mm=20, length_mm=40)
    >>> distance_to_tile_mm((23.0, 0.0), t), distance_to_tile_mm((0.0, 0.0), t)
    (3.0, 0.0)
    """
    ax, ay = tile.axis
    dx, dy = point_mm[0] - tile.center_mm[0], point_mm[1] - tile.center_mm[1]
    v = dx * ax + dy * ay
    u = -dx * ay + dy * ax
    ov = max(abs(v) - tile.length_mm / 2, 0.0)
    ou = max(abs(u) - tile.width_mm / 2, 0.0)
    return math.hypot(ov, ou)


@dataclass(frozen=True, slots=True, kw_only=True)
class Join:
    """One tile's end touching another tile: ``(tile, half)`` meets ``(other, other_half)``.

    ``gap_mm`` is the plan distance from the end-face midpoint to the other tile; ``crosswise`` is true when the
    two long axes are closer to perpendicular than parallel (a double laid across the line).
    """

    tile_id: str
    half: str
    other_id: str
    other_half: str
    pips: int | None
    other_pips: int | None
    gap_mm: float
    crosswise: bool

    @property
    def matches(self) -> bool | None:
        """DM P2: the touching halves show the same value; None when either is unread."""
        if self.pips is None or self.other_pips is None:
            return None
        return self.pips == self.other_pips


def find_joins(tiles: list[PlacedTile] | tuple[PlacedTile, ...], gap_width_ratio: float = JOIN_GAP_WIDTH_RATIO
               ) -> tuple[Join, ...]:
    """Every end of a tile that touches another tile, once per pair of touching halves.

    The touched half of the other tile is the one whose centre is nearest the end-face midpoint, which also
    serves a double laid crosswise (both its halves hold the same value).

    >>> t1 = PlacedTile(tile_id="t1", center_mm=(0, 0), angle_deg=0, width_mm=20, length_mm=40, bone=Bone(a=1, b=5))
    >>> t2 = PlacedTile(tile_id="t2", center_mm=(41, 0), angle_deg=0, width_mm=20, length_mm=40, bone=Bone(a=5, b=3))
    >>> [(j.tile_id, j.half, j.other_id, j.other_half, j.matches) for j in find_joins([t1, t2])]
    [('t1', 'b', 't2', 'a', True)]
    """
    seen: set[frozenset] = set()
    out: list[Join] = []
    for t in tiles:
        for half in ("a", "b"):
            end = t.end_center_mm(half)
            best = None
            for o in tiles:
                if o.tile_id == t.tile_id:
                    continue
                gap = distance_to_tile_mm(end, o)
                tol = gap_width_ratio * min(t.width_mm, o.width_mm)
                if gap <= tol and (best is None or gap < best[0]):
                    best = (gap, o)
            if best is None:
                continue
            gap, o = best
            oh = min(("a", "b"), key=lambda h: math.dist(o.half_center_mm(h), end))
            pair = frozenset({(t.tile_id, half), (o.tile_id, oh)})
            if pair in seen:
                continue
            seen.add(pair)
            dot = abs(t.axis[0] * o.axis[0] + t.axis[1] * o.axis[1])
            out.append(Join(tile_id=t.tile_id, half=half, other_id=o.tile_id, other_half=oh, pips=t.pips(half),
                            other_pips=o.pips(oh), gap_mm=round(gap, 6), crosswise=dot < math.sqrt(0.5)))
    return tuple(out)


def free_ends(tiles: list[PlacedTile] | tuple[PlacedTile, ...], joins: tuple[Join, ...]) -> tuple[tuple[str, str], ...]:
    """Ends ``(tile_id, half)`` of face-up tiles that touch nothing, in tile order.

    A crosswise double's ends are its long sides' neighbours, so a double with a join on one half and none on
    the other still counts both its halves as joined (its line runs through it).
    """
    joined: set[tuple[str, str]] = set()
    for j in joins:
        joined.add((j.tile_id, j.half))
        joined.add((j.other_id, j.other_half))
    by_id = {t.tile_id: t for t in tiles}
    for j in joins:
        # a tile end touching the long side of a crosswise double: the double is passed through, not ended
        if j.crosswise:
            for tid in (j.other_id, j.tile_id):
                t = by_id[tid]
                if t.bone is not None and t.bone.is_double:
                    joined.update({(tid, "a"), (tid, "b")})
    out = []
    for t in tiles:
        if not t.face_up:
            continue
        has_any = any(tid == t.tile_id for tid, _ in joined)
        if not has_any:
            continue  # a lone tile (in a hand, say) is not part of the layout
        for half in ("a", "b"):
            if (t.tile_id, half) not in joined:
                out.append((t.tile_id, half))
    return tuple(out)



@dataclass(frozen=True, slots=True, kw_only=True)
class Gap:
    """Room for one unseen tile (``unseen``) between the free end ``(tile_id, half)`` and ``other_id``."""

    tile_id: str
    half: str
    other_id: str
    unseen: PlacedTile


def tiles_beyond_free_ends(tiles: list[PlacedTile] | tuple[PlacedTile, ...], joins: tuple[Join, ...],
                           ends: tuple[tuple[str, str], ...]) -> tuple[Gap, ...]:
    """Tiles outside the layout that one unseen tile could join to a free end, with where that tile would lie.

    The unseen tile is tried in line with the end and turned a quarter either way (a corner); where it fits (it
    would lie on no tile found), a tile outside the layout touching its far end would have been joined through
    it, with joins nobody saw. A hand or boneyard tile beside the line, or further off, does not count.

    >>> t0 = PlacedTile(tile_id="t0", center_mm=(0, 0), angle_deg=0, width_mm=20, length_mm=40, bone=Bone(a=1, b=5))
    >>> t1 = PlacedTile(tile_id="t1", center_mm=(41, 0), angle_deg=0, width_mm=20, length_mm=40, bone=Bone(a=5, b=3))
    >>> far = PlacedTile(tile_id="t3", center_mm=(123, 0), angle_deg=0, width_mm=20, length_mm=40, bone=Bone(a=2, b=4))
    >>> js = find_joins([t0, t1, far])
    >>> [(g.tile_id, g.half, g.other_id, g.unseen.center_mm) for g in tiles_beyond_free_ends(
    ...     [t0, t1, far], js, free_ends([t0, t1, far], js))]
    [('t1', 'b', 't3', (82.5, 0.0))]
    """
    from shapely.geometry import Polygon

    in_layout = {j.tile_id for j in joins} | {j.other_id for j in joins}
    by_id = {t.tile_id: t for t in tiles}
    outlines = {t.tile_id: Polygon(t.outline_mm()) for t in tiles}
    out = []
    for tid, half in ends:
        t = by_id[tid]
        ex, ey = t.end_center_mm(half)
        s = _half_sign(half)
        ox, oy = s * t.axis[0], s * t.axis[1]  # out of the end
        px, py = -oy, ox
        w, length = t.width_mm, t.length_mm
        gap = 0.5 * JOIN_GAP_WIDTH_RATIO * w
        unseen = [(ex + ox * (length / 2 + gap), ey + oy * (length / 2 + gap), ox, oy)]  # in line
        for side in (-1, 1):  # a corner: its side against the end face, flush with one of the end tile's sides
            unseen.append((ex + ox * (w / 2 + gap) + side * px * (length / 2 - w / 2),
                           ey + oy * (w / 2 + gap) + side * py * (length / 2 - w / 2), side * px, side * py))
        for cx, cy, ax, ay in unseen:
            m = PlacedTile(tile_id="unseen", center_mm=(cx, cy), angle_deg=math.degrees(math.atan2(ay, ax)),
                           width_mm=w, length_mm=length)
            body = Polygon(m.outline_mm())
            if any(body.intersection(o).area > UNSEEN_OVERLAP_RATIO * body.area for o in outlines.values()):
                continue  # no room there for a tile
            far_end = m.end_center_mm("b")
            for o in tiles:
                if o.tile_id in in_layout or any((g.tile_id, g.half, g.other_id) == (tid, half, o.tile_id)
                                                 for g in out):
                    continue
                if distance_to_tile_mm(far_end, o) <= UNSEEN_REACH_WIDTH_RATIO * w:
                    out.append(Gap(tile_id=tid, half=half, other_id=o.tile_id, unseen=m))
    return tuple(out)


# --- pip grids of standard sets -------------------------------------------------------------------------------
# Positions in one half's unit square: (u across the width, v along the length from the tile end towards the
# centre bar), each in [0, 1]. Double-six and double-nine sets use a 3 x 3 grid at quarter points; double-twelve
# sets add a fourth row along the length (3 x 4 grid at fifths).
_G3 = (0.25, 0.5, 0.75)
_G4 = (0.2, 0.4, 0.6, 0.8)


def _g3(*cells: tuple[int, int]) -> tuple[tuple[float, float], ...]:
    return tuple((_G3[c], _G3[r]) for c, r in cells)


def _g4(*cells: tuple[int, int]) -> tuple[tuple[float, float], ...]:
    return tuple((_G3[c], _G4[r]) for c, r in cells)


PIP_LAYOUTS: dict[int, tuple[tuple[float, float], ...]] = {
    0: (),
    1: _g3((1, 1)),
    2: _g3((0, 0), (2, 2)),
    3: _g3((0, 0), (1, 1), (2, 2)),
    4: _g3((0, 0), (2, 0), (0, 2), (2, 2)),
    5: _g3((0, 0), (2, 0), (1, 1), (0, 2), (2, 2)),
    6: _g3((0, 0), (0, 1), (0, 2), (2, 0), (2, 1), (2, 2)),
    7: _g3((0, 0), (0, 1), (0, 2), (2, 0), (2, 1), (2, 2), (1, 1)),
    8: _g3((0, 0), (0, 1), (0, 2), (2, 0), (2, 1), (2, 2), (1, 0), (1, 2)),
    9: _g3(*((c, r) for c in range(3) for r in range(3))),
    10: _g4(*((c, r) for c in (0, 2) for r in range(4)), (1, 1), (1, 2)),
    11: _g4(*((c, r) for c in (0, 2) for r in range(4)), (1, 0), (1, 2), (1, 3)),
    12: _g4(*((c, r) for c in range(3) for r in range(4))),
}
# Pip diameter as a share of the tile width (measured by eye on club sets and the shared photos: 0.11-0.17).
PIP_DIAMETER_WIDTH_RATIO = 0.14


def pip_layout(pips: int) -> tuple[tuple[float, float], ...]:
    """Pip centres of a half showing ``pips`` in its unit square.

    >>> pip_layout(1)
    ((0.5, 0.5),)
    """
    try:
        return PIP_LAYOUTS[pips]
    except KeyError:
        raise GeometryError(f"a domino half shows 0..12 pips, got {pips!r}") from None
