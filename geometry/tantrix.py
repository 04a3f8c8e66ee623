"""Tantrix tiles and boards on an axial hex grid (RULES.md section 2.1 and 2.3).

Pure data: the 56 tile faces, rotations, axial coordinates and a board of placed tiles. Edge ``k`` of a hex faces
direction ``DIRECTIONS[k]`` (counter-clockwise from E); a tile with ccw colour sequence ``s`` at rotation ``rho``
shows ``s[(k - rho) % 6]`` on edge ``k``; edge ``k`` meets the neighbour's edge ``(k + 3) % 6``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

EDGE_COUNT = 6
TILE_COUNT = 56
HAND_SIZE = 6  # TX G-1, TX P7: six tiles in each hand while the bag lasts


class TantrixError(ValueError):
    """A tile, colour, coordinate or board that does not exist; the message names the offending value."""


class LinkColor(str, enum.Enum):
    """The four link colours. White on colour-blind sets plays the green role (TX 10)."""

    RED = "red"
    YELLOW = "yellow"
    BLUE = "blue"
    GREEN = "green"

    @classmethod
    def parse(cls, value: str | LinkColor) -> LinkColor:
        """A colour from its name or letter; white (``W``) is the colour-blind alias of green.

        >>> LinkColor.parse("W") is LinkColor.GREEN
        True
        """
        if isinstance(value, LinkColor):
            return value
        key = str(value).strip().lower()
        try:
            return _COLOR_ALIASES[key]
        except KeyError:
            raise TantrixError(f"unknown Tantrix link colour {value!r}") from None

    @property
    def letter(self) -> str:
        return self.value[0].upper()


_COLOR_ALIASES: dict[str, LinkColor] = {
    **{c.value: c for c in LinkColor},
    **{c.value[0]: c for c in LinkColor},
    "white": LinkColor.GREEN,
    "w": LinkColor.GREEN,
}


class LinkShape(enum.IntEnum):
    """Shape of a link by how far apart its two edges are (RULES.md 2.1: 1 sharp, 2 gentle, 3 straight)."""

    SHARP = 1
    GENTLE = 2
    STRAIGHT = 3


# RULES.md 2.1 tile table [X4][X5]: number -> (ccw edge colours, link shapes).
TILE_TABLE: dict[int, tuple[str, str]] = {
    1: ("YYBRBR", "Y1 B2 R2"), 2: ("YYBRRB", "Y1 R1 B3"), 3: ("YYRRBB", "Y1 R1 B1"),
    4: ("RYBYRB", "R2 Y2 B3"), 5: ("YYRBBR", "Y1 B1 R3"), 6: ("RBYBRY", "R2 B2 Y3"),
    7: ("BBYRYR", "B1 Y2 R2"), 8: ("BBRYRY", "B1 R2 Y2"), 9: ("BYRYBR", "B2 Y2 R3"),
    10: ("YYRBRB", "Y1 R2 B2"), 11: ("RRBYBY", "R1 B2 Y2"), 12: ("RRYBYB", "R1 Y2 B2"),
    13: ("RRYBBY", "R1 B1 Y3"), 14: ("YYBBRR", "Y1 B1 R1"), 15: ("YYRGGR", "Y1 G1 R3"),
    16: ("RRYGGY", "R1 G1 Y3"), 17: ("YYGRGR", "Y1 G2 R2"), 18: ("YYRGRG", "Y1 R2 G2"),
    19: ("RRGYGY", "R1 G2 Y2"), 20: ("RRYGYG", "R1 Y2 G2"), 21: ("YYGGRR", "Y1 G1 R1"),
    22: ("YYGRRG", "Y1 R1 G3"), 23: ("YYRRGG", "Y1 R1 G1"), 24: ("RRBGGB", "R1 G1 B3"),
    25: ("RRBBGG", "R1 B1 G1"), 26: ("RRGBBG", "R1 B1 G3"), 27: ("RRBGBG", "R1 B2 G2"),
    28: ("RRGGBB", "R1 G1 B1"), 29: ("RRGBGB", "R1 G2 B2"), 30: ("BBRGGR", "B1 G1 R3"),
    31: ("GGRYRY", "G1 R2 Y2"), 32: ("YGYRGR", "Y2 R2 G3"), 33: ("GGYRYR", "G1 Y2 R2"),
    34: ("YGRGYR", "Y2 G2 R3"), 35: ("YGRYRG", "G2 R2 Y3"), 36: ("GGRBRB", "G1 R2 B2"),
    37: ("BBGRGR", "B1 G2 R2"), 38: ("BBRGRG", "B1 R2 G2"), 39: ("RBGBRG", "R2 B2 G3"),
    40: ("RGBGRB", "R2 G2 B3"), 41: ("GGBRBR", "G1 B2 R2"), 42: ("BRBGRG", "B2 G2 R3"),
    43: ("YYGGBB", "Y1 G1 B1"), 44: ("YGBYBG", "Y3 G2 B2"), 45: ("YYBBGG", "Y1 B1 G1"),
    46: ("GGBYBY", "G1 B2 Y2"), 47: ("GGYBBY", "G1 B1 Y3"), 48: ("YYBGGB", "Y1 G1 B3"),
    49: ("BBGYYG", "B1 Y1 G3"), 50: ("YBYGBG", "Y2 G2 B3"), 51: ("YGYBGB", "Y2 B2 G3"),
    52: ("GGYBYB", "G1 Y2 B2"), 53: ("YYGBGB", "Y1 G2 B2"), 54: ("YYBGBG", "Y1 B2 G2"),
    55: ("BBGYGY", "B1 G2 Y2"), 56: ("BBYGYG", "B1 Y2 G2"),
}


def link_shape(edge_a: int, edge_b: int) -> LinkShape:
    """Shape of the link joining two edges of one hex.

    >>> link_shape(0, 3).name
    'STRAIGHT'
    """
    gap = (edge_b - edge_a) % EDGE_COUNT
    return LinkShape(min(gap, EDGE_COUNT - gap))


@dataclass(frozen=True, slots=True, kw_only=True)
class Tile:
    """One Tantrix tile: its number (1-56, on the back) and its face's edge colours ccw at rotation 0."""

    number: int
    edges: tuple[LinkColor, ...]

    def __post_init__(self) -> None:
        if not 1 <= self.number <= TILE_COUNT:
            raise TantrixError(f"tile number must be in 1..{TILE_COUNT}, got {self.number!r}")
        edges = tuple(LinkColor.parse(c) for c in self.edges)
        if len(edges) != EDGE_COUNT:
            raise TantrixError(f"tile {self.number} needs {EDGE_COUNT} edge colours, got {len(edges)}")
        for color in set(edges):
            if edges.count(color) != 2:
                raise TantrixError(f"tile {self.number}: colour {color.value} must be on exactly two edges")
        object.__setattr__(self, "edges", edges)

    @property
    def colors(self) -> frozenset[LinkColor]:
        return frozenset(self.edges)

    def edge_color(self, edge: int, rotation: int = 0) -> LinkColor:
        """Colour shown on edge ``edge`` (0 = E, ccw) when the tile is turned ``rotation`` sixths ccw."""
        return self.edges[(edge - rotation) % EDGE_COUNT]

    def rotated_edges(self, rotation: int) -> tuple[LinkColor, ...]:
        return tuple(self.edge_color(k, rotation) for k in range(EDGE_COUNT))

    def link_edges(self, color: LinkColor | str) -> tuple[int, int]:
        """The two face edges (at rotation 0) that the link of ``color`` joins."""
        color = LinkColor.parse(color)
        found = tuple(k for k, c in enumerate(self.edges) if c is color)
        if len(found) != 2:
            raise TantrixError(f"tile {self.number} has no {color.value} link")
        return found  # type: ignore[return-value]

    def links(self) -> dict[LinkColor, LinkShape]:
        """Each colour's link shape."""
        return {c: link_shape(*self.link_edges(c)) for c in self.colors}

    def canonical_pattern(self) -> tuple[str, ...]:
        """The lexicographically least rotation of the face (identifies the face up to rotation)."""
        return min(tuple(c.letter for c in self.rotated_edges(r)) for r in range(EDGE_COUNT))


def _build_tiles() -> dict[int, Tile]:
    return {n: Tile(number=n, edges=tuple(LinkColor.parse(ch) for ch in seq)) for n, (seq, _) in TILE_TABLE.items()}


TILES: dict[int, Tile] = _build_tiles()


def tile(number: int) -> Tile:
    """The tile with this number."""
    try:
        return TILES[int(number)]
    except (KeyError, ValueError, TypeError):
        raise TantrixError(f"no Tantrix tile number {number!r} (1..{TILE_COUNT})") from None


def identify_face(edge_colors: Iterable[LinkColor | str]) -> tuple[int, int]:
    """(tile number, rotation) of a face seen as six edge colours ccw from E; white counts as green.

    >>> identify_face("YYBRBR")
    (1, 0)
    >>> identify_face("WWRYYR")
    (15, 3)
    """
    seen = tuple(LinkColor.parse(c) for c in edge_colors)
    if len(seen) != EDGE_COUNT:
        raise TantrixError(f"a face has {EDGE_COUNT} edges, got {len(seen)}")
    for t in TILES.values():
        for rotation in range(EDGE_COUNT):
            if t.rotated_edges(rotation) == seen:
                return t.number, rotation
    raise TantrixError(f"no Tantrix tile shows {''.join(c.letter for c in seen)}")


# Axial coordinates (q, r); neighbour directions ccw from E (RULES.md 2.3).
Hex = tuple[int, int]
DIRECTIONS: tuple[Hex, ...] = ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))
DIRECTION_NAMES = ("E", "NE", "NW", "W", "SW", "SE")


def neighbour(h: Hex, edge: int) -> Hex:
    """The hex across edge ``edge`` of ``h``.

    >>> neighbour((0, 0), 1)
    (1, -1)
    """
    dq, dr = DIRECTIONS[edge % EDGE_COUNT]
    return (h[0] + dq, h[1] + dr)


def neighbours(h: Hex) -> tuple[Hex, ...]:
    return tuple(neighbour(h, k) for k in range(EDGE_COUNT))


def hex_groups(occupied: Iterable[Hex]) -> tuple[frozenset[Hex], ...]:
    """The edge-connected groups of hexes, largest first (ties: the smaller least hex first), so the first is
    the Tantrix and the rest are groups that do not touch it."""
    todo_all = set(occupied)
    groups = []
    while todo_all:
        start = min(todo_all)
        group, todo = {start}, [start]
        while todo:
            for n in neighbours(todo.pop()):
                if n in todo_all and n not in group:
                    group.add(n)
                    todo.append(n)
        todo_all -= group
        groups.append(frozenset(group))
    return tuple(sorted(groups, key=lambda g: (-len(g), min(g))))


def opposite_edge(edge: int) -> int:
    return (edge + 3) % EDGE_COUNT


def hex_distance(a: Hex, b: Hex) -> int:
    """Grid steps between two hexes.

    >>> hex_distance((0, 0), (2, -1))
    2
    """
    dq, dr = a[0] - b[0], a[1] - b[1]
    return max(abs(dq), abs(dr), abs(dq + dr))


def rotate_hex(h: Hex, sixths: int = 1) -> Hex:
    """Rotate a hex about the origin by ``sixths`` x 60 degrees counter-clockwise.

    >>> rotate_hex((1, 0))
    (1, -1)
    """
    q, r = h
    for _ in range(sixths % EDGE_COUNT):
        q, r = q + r, -q
    return (q, r)


@dataclass(frozen=True, slots=True, kw_only=True)
class Placement:
    """A tile on the board: its number and rotation (sixths ccw)."""

    number: int
    rotation: int = 0

    def __post_init__(self) -> None:
        tile(self.number)
        object.__setattr__(self, "rotation", int(self.rotation) % EDGE_COUNT)

    @property
    def tile(self) -> Tile:
        return TILES[self.number]

    def edge_color(self, edge: int) -> LinkColor:
        return self.tile.edge_color(edge, self.rotation)


@dataclass(frozen=True, slots=True)
class Board:
    """Placed tiles: hex -> Placement. Immutable; ``with_tile`` returns a new board.

    Built from a mapping whose values are ``Placement`` or ``(number, rotation)`` pairs. A tile number may be
    placed only once.
    """

    tiles: Mapping[Hex, Placement] = field(default_factory=dict)

    def __post_init__(self) -> None:
        tiles: dict[Hex, Placement] = {}
        for h, p in dict(self.tiles).items():
            if not isinstance(p, Placement):
                number, rotation = p
                p = Placement(number=number, rotation=rotation)
            tiles[(int(h[0]), int(h[1]))] = p
        numbers = [p.number for p in tiles.values()]
        if len(set(numbers)) != len(numbers):
            dupes = sorted({n for n in numbers if numbers.count(n) > 1})
            raise TantrixError(f"tile numbers placed more than once: {dupes}")
        object.__setattr__(self, "tiles", tiles)

    def __contains__(self, h: object) -> bool:
        return h in self.tiles

    def __len__(self) -> int:
        return len(self.tiles)

    def __iter__(self) -> Iterator[Hex]:
        return iter(self.tiles)

    def __getitem__(self, h: Hex) -> Placement:
        return self.tiles[h]

    def __hash__(self) -> int:
        return hash(frozenset(self.tiles.items()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Board) and dict(self.tiles) == dict(other.tiles)

    def with_tile(self, h: Hex, number: int, rotation: int = 0) -> Board:
        if h in self.tiles:
            raise TantrixError(f"hex {h} is already occupied by tile {self.tiles[h].number}")
        return Board({**self.tiles, h: Placement(number=number, rotation=rotation)})

    def numbers(self) -> frozenset[int]:
        return frozenset(p.number for p in self.tiles.values())

    def rotated(self, sixths: int = 1) -> Board:
        """The whole board turned about the origin: coordinates and every tile's rotation together."""
        return Board({rotate_hex(h, sixths): Placement(number=p.number, rotation=p.rotation + sixths)
                      for h, p in self.tiles.items()})

    def translated(self, dq: int, dr: int) -> Board:
        return Board({(h[0] + dq, h[1] + dr): p for h, p in self.tiles.items()})

    def neighbour_count(self, h: Hex) -> int:
        """TX P1: placed tiles around ``h``."""
        return sum(n in self.tiles for n in neighbours(h))

    def facing_colors(self, h: Hex) -> dict[int, LinkColor]:
        """Edge k of ``h`` -> colour the placed neighbour across it shows towards ``h``."""
        out = {}
        for k in range(EDGE_COUNT):
            n = neighbour(h, k)
            if n in self.tiles:
                out[k] = self.tiles[n].edge_color(opposite_edge(k))
        return out

    def empty_neighbours(self) -> frozenset[Hex]:
        """Empty hexes touching the Tantrix."""
        return frozenset(n for h in self.tiles for n in neighbours(h) if n not in self.tiles)

    def is_forced_space(self, h: Hex) -> bool:
        """TX P2: empty with exactly three placed neighbours."""
        return h not in self.tiles and self.neighbour_count(h) == 3

    def forced_spaces(self) -> tuple[Hex, ...]:
        return tuple(sorted(h for h in self.empty_neighbours() if self.neighbour_count(h) == 3))

    def is_blocked_space(self, h: Hex) -> bool:
        """TX P3: a forced space whose three facing edges share one colour."""
        return self.is_forced_space(h) and len(set(self.facing_colors(h).values())) == 1

    def fitting_rotations(self, number: int, h: Hex) -> tuple[int, ...]:
        """TX P4: rotations at which tile ``number`` matches every placed neighbour's facing colour at ``h``."""
        t = tile(number)
        facing = self.facing_colors(h)
        return tuple(r for r in range(EDGE_COUNT) if all(t.edge_color(k, r) is c for k, c in facing.items()))

    def fits(self, number: int, h: Hex) -> bool:
        """TX P4."""
        return h not in self.tiles and bool(self.fitting_rotations(number, h))

    def mismatched_edges(self, h: Hex) -> tuple[int, ...]:
        """Edges of the placed tile at ``h`` whose colour differs from the neighbour's facing edge."""
        p = self.tiles[h]
        return tuple(k for k, c in self.facing_colors(h).items() if p.edge_color(k) is not c)

    def is_connected(self) -> bool:
        """Whether the placed tiles form one group (the Tantrix)."""
        return len(hex_groups(self.tiles)) <= 1
