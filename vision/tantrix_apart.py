"""Board tiles lying apart from the Tantrix, told from hand tiles by how they sit on its lattice (issue 10).

A tile off the board's connected group is usually in a hand, but one may lie on the board a hex apart from the
rest (laid beside a forced space: TX G-5 R2; or not touching the Tantrix at all: TX G-2). Taking it for a hand
tile hides the rule it breaks and gives a wrong "legal". Distance on the lattice alone cannot tell the two: hand
tiles rest a few centimetres off the board's edge, often two hexes out.

The board is a rigid planar lattice: a tile laid on it against its neighbours sits on a lattice node within the
hand's placement error and turns with the lattice within the same few degrees (the reader's refined pose adds
about a millimetre and a degree). A hand tile rests at any angle and offset, so it lands that close to a node
and to a lattice sixth by chance only (about 1 in 400). Hence three outcomes for a tile whose nearest node is an
empty hex next to an empty hex bordering the Tantrix (lattice distance 2, or 1 when its silhouette split off):
- snapped in position and turn: a board tile on that hex;
- on the lattice only within the loose tolerances that seat a tile inside the board's own silhouette: it may be
  either, so it goes on its hex flagged, and every ruling it touches is "too close to call";
- otherwise a hand tile.
The hands weigh in (TX P7: six tiles in each hand while the bag lasts): a tile that would make its side's hand
hold more than six, or be the only hand tile on a table showing no hands, is no hand tile; one that a hand still
lacks may well be one, so a snapped tile then stays doubtful and a loosely seated one goes back to the hand.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from geometry.tantrix import HAND_SIZE, Hex, hex_distance
from vision.tantrix_lattice import hex_center_u, nearest_hex
from vision.tantrix_links import FaceRead

# A tile whose nearest node is farther than this many lattice steps from the Tantrix is in a hand: a tile laid
# on the board touches it, or one empty hex (a forced space it crowds) lies between them.
MAX_APART_STEPS = 2


def tiles_apart_on_lattice(centers_u: np.ndarray, angles_deg: np.ndarray, candidates: Iterable[int],
                           board: set[Hex], mm_per_u: float, *, snap_offset_mm: float, snap_twist_deg: float,
                           loose_offset_u: float, loose_twist_deg: float) -> tuple[dict[int, Hex], set[int]]:
    """Tiles among ``candidates`` (indices of off-board tiles posed in the lattice frame U, angles relative to it)
    that lie on the board a hex or two apart: ``{index: hex}``, and the subset whose place is doubtful.

    Nearest tiles to the board are taken first, and a hex once taken is no one else's.

    >>> import numpy as np
    >>> c = np.array([[2 * 3 ** 0.5, 0.0], [2 * 3 ** 0.5 + 0.3, 0.0]])
    >>> tiles_apart_on_lattice(c, np.array([1.0, 20.0]), [0, 1], {(0, 0)}, 27.0, snap_offset_mm=4.0,
    ...                        snap_twist_deg=5.0, loose_offset_u=0.35, loose_twist_deg=8.0)
    ({0: (2, 0)}, set())
    """
    if not board:
        return {}, set()
    cand = [int(i) for i in candidates]
    if not cand:
        return {}, set()
    hexes = nearest_hex(centers_u[cand])
    rows = []
    for i, hx in zip(cand, hexes):
        h = (int(hx[0]), int(hx[1]))
        if h in board:
            continue
        steps = min(hex_distance(h, b) for b in board)
        if steps > MAX_APART_STEPS:
            continue
        off_u = float(np.hypot(*(centers_u[i] - hex_center_u(*h))))
        twist = abs(((float(angles_deg[i]) + 30.0) % 60.0) - 30.0)
        if off_u >= loose_offset_u or twist >= loose_twist_deg:
            continue
        rows.append((steps, off_u, i, h, off_u * mm_per_u <= snap_offset_mm and twist <= snap_twist_deg))
    taken: set[Hex] = set()
    out: dict[int, Hex] = {}
    doubtful: set[int] = set()
    for _, _, i, h, snapped in sorted(rows):
        if h in taken:
            continue
        taken.add(h)
        out[i] = h
        if not snapped:
            doubtful.add(i)
    return out, doubtful


def weigh_hand_sizes(apart: dict[int, Hex], doubtful: set[int], side_of: Sequence[str | None],
                     hand: Iterable[int]) -> tuple[dict[int, Hex], set[int]]:
    """``apart`` and ``doubtful`` (from ``tiles_apart_on_lattice``) revised by what the hands hold: ``side_of``
    names each tile's side of the board (the player whose hand it would join), ``hand`` the other tiles off
    the board.

    >>> weigh_hand_sizes({7: (2, 0), 8: (0, 3)}, {8}, ["A"] * 5 + ["B"] * 4, range(7))
    ({7: (2, 0)}, {7})
    >>> weigh_hand_sizes({7: (2, 0)}, set(), ["A"] * 8, [])
    ({7: (2, 0)}, set())
    """
    counts: dict[str | None, int] = {}
    for i in hand:
        counts[side_of[i]] = counts.get(side_of[i], 0) + 1
    no_hands = not counts
    out: dict[int, Hex] = {}
    unsure: set[int] = set()
    for i, h in apart.items():
        if no_hands or counts.get(side_of[i], 0) >= HAND_SIZE:
            out[i] = h
            if i in doubtful:
                unsure.add(i)
        elif i not in doubtful:
            out[i] = h
            unsure.add(i)
    return out, unsure


def turn_to_lattice(angles_deg: np.ndarray, indices: Sequence[int]) -> np.ndarray:
    """The reading frames of ``indices`` turned by whole sixths to within 30 degrees of the lattice, so the
    rotation read is the lattice rotation a board tile reports (the face read does not change)."""
    out = np.asarray(angles_deg, dtype=np.float64).copy()
    for i in indices:
        out[i] -= 60.0 * round(out[i] / 60.0)
    return out


def turned_to_lattice(face: FaceRead, angle_deg: float) -> FaceRead:
    """A face read in a frame turned ``angle_deg`` from the lattice, restated in that frame turned by whole sixths
    to within 30 degrees of the lattice (``turn_to_lattice``): the tile's absolute angle, lattice + frame + 60 x
    rotation, stays the same.

    >>> turned_to_lattice(FaceRead(7, 5, (0, 1, 2, 3, None, 0), 9.0, 0.5, False), 121.0).rotation
    1
    """
    k = int(round(angle_deg / 60.0))
    if not k:
        return face
    edges = tuple(face.edge_classes[(j - k) % len(face.edge_classes)] for j in range(len(face.edge_classes)))
    return FaceRead(number=face.number, rotation=None if face.rotation is None else (face.rotation + k) % 6,
                    edge_classes=edges, margin=face.margin, mean_cost=face.mean_cost, flagged=face.flagged)
