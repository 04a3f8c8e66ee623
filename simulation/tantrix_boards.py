"""Plausible Tantrix positions for the simulator: a game played tile by tile, hands, and planted defects.

Built on geometry/tantrix.py only (simulation never imports the adjudicator). A legal position is grown the
way a game grows (RULES.md 2.2): forced spaces are filled whenever some tile fits, then one free move touching
the Tantrix; every placement matches colours (TX G-2) and, before the endgame, breaks none of R1-R3 (TX G-5),
R3 by the same forced-space cascade TX A1 describes. A deliberately illegal position records one ``defect``:
``mismatch`` (a tile turned so an edge clashes), ``four_neighbours`` (a tile laid beside a forced space,
giving it a fourth neighbour) or ``blocked_space`` (a forced space whose three links share one colour).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from geometry.tantrix import (
    EDGE_COUNT,
    HAND_SIZE,
    TILE_COUNT,
    Board,
    Hex,
    LinkColor,
    neighbour,
    neighbours,
    opposite_edge,
    tile,
)

MIN_BOARD_TILES = 10  # the simulated boards span 10-56 tiles
DEFECTS = ("mismatch", "four_neighbours", "blocked_space")
_FREE_MOVE_TRIES = 400


@dataclass(frozen=True, slots=True, kw_only=True)
class TantrixDeal:
    """A position: the board, each player's hand (tile numbers), whether the bag is empty, and any defect."""

    board: Board
    hands: dict[str, tuple[int, ...]]
    bag_empty: bool
    defect: str | None = None
    defect_hexes: tuple[Hex, ...] = ()


def _count(filled, h: Hex) -> int:
    return sum(n in filled for n in neighbours(h))


def cascade_overflow(filled: set[Hex], h: Hex) -> bool:
    """TX G-5 R3 / TX I-2: after a tile at ``h``, filling the forced spaces it creates in turn (colours
    ignored) leaves some empty hex with four or more neighbours."""
    filled = set(filled) | {h}
    queue = deque(n for n in neighbours(h) if n not in filled and _count(filled, n) == 3)
    queued = set(queue)
    while queue:
        x = queue.popleft()
        filled.add(x)
        for n in neighbours(x):
            if n in filled:
                continue
            c = _count(filled, n)
            if c >= 4:
                return True
            if c == 3 and n not in queued:
                queued.add(n)
                queue.append(n)
    return False


def _facing(tiles: dict[Hex, tuple[int, int]], h: Hex) -> dict[int, LinkColor]:
    """Edge k of ``h`` -> colour the placed neighbour across it shows (Board.facing_colors on a plain dict,
    which the game loop edits in place)."""
    out = {}
    for k in range(EDGE_COUNT):
        n = neighbour(h, k)
        if n in tiles:
            number, rotation = tiles[n]
            out[k] = tile(number).edge_color(opposite_edge(k), rotation)
    return out


def _empty_around(tiles: dict[Hex, tuple[int, int]]) -> set[Hex]:
    return {n for h in tiles for n in neighbours(h) if n not in tiles}


def _rotations_matching(facing: dict[int, LinkColor], number: int) -> list[int]:
    t = tile(number)
    return [r for r in range(EDGE_COUNT) if all(t.edge_color(k, r) is c for k, c in facing.items())]


def breaks_restrictions(tiles: dict[Hex, tuple[int, int]], h: Hex, number: int, rotation: int) -> bool:
    """Whether a tile at ``h`` would break R1 (blocked forced space), R2 (fourth neighbour of a forced
    space) or R3 (controlled side)."""
    filled = set(tiles)
    for n in neighbours(h):
        if n not in filled and _count(filled, n) == 3:
            return True  # R2
    after = {**tiles, h: (number, rotation)}
    for n in neighbours(h):
        if n not in after and _count(after, n) == 3 and len(set(_facing(after, n).values())) == 1:
            return True  # R1
    return cascade_overflow(filled, h)


def _try_place(tiles: dict[Hex, tuple[int, int]], pool: list[int], h: Hex, rng: np.random.Generator,
               restrict: bool) -> tuple[int, int] | None:
    """A (number, rotation) from ``pool`` that fits ``h`` (and keeps R1-R3 if ``restrict``), or None."""
    facing = _facing(tiles, h)
    for i in rng.permutation(len(pool)):
        number = pool[int(i)]
        rots = _rotations_matching(facing, number)
        rng.shuffle(rots)
        for r in rots:
            if not restrict or not breaks_restrictions(tiles, h, number, r):
                return number, int(r)
    return None


def _fill_forced(tiles, pool, rng, restrict: bool) -> None:
    """TX G-4 (a)/(c): fill every forced space some pool tile fits, new ones included."""
    progress = True
    while progress and pool:
        progress = False
        spaces = sorted(n for n in _empty_around(tiles) if _count(tiles, n) == 3)
        for s in [spaces[int(i)] for i in rng.permutation(len(spaces))]:
            if s in tiles or _count(tiles, s) != 3:
                continue
            got = _try_place(tiles, pool, s, rng, restrict)
            if got:
                tiles[s] = got
                pool.remove(got[0])
                progress = True


def _free_move(tiles, pool, rng, restrict: bool) -> bool:
    """TX G-4 (b): one tile touching the Tantrix; compact growth (hexes with two neighbours preferred)."""
    frontier = sorted(h for h in _empty_around(tiles) if _count(tiles, h) < 3)
    if not frontier:
        return False
    weights = np.asarray([(1.0, 1.0, 4.0)[_count(tiles, h)] for h in frontier])
    order = rng.choice(len(frontier), size=len(frontier), replace=False, p=weights / weights.sum())
    for i in order[:40]:
        got = _try_place(tiles, pool, frontier[int(i)], rng, restrict)
        if got:
            tiles[frontier[int(i)]] = got
            pool.remove(got[0])
            return True
    return False


def play_board(rng: np.random.Generator, n_tiles: int, *,
               lapse_in_endgame: bool = True) -> tuple[Board, list[int]]:
    """A legal board of about ``n_tiles`` tiles grown move by move, and the tiles left (bag + hands),
    shuffled.

    R1-R3 hold for every placement while the bag is non-empty (board + two hands < 56); once it empties they
    lapse (TX G-6) when ``lapse_in_endgame``, so the endgame can place the last tiles. Stops early if no tile
    can be placed.
    """
    if not 1 <= n_tiles <= TILE_COUNT:
        raise ValueError(f"a Tantrix board holds 1..{TILE_COUNT} tiles, got {n_tiles}")
    pool = [int(v) for v in rng.permutation(np.arange(1, TILE_COUNT + 1))]
    first = pool.pop()
    tiles: dict[Hex, tuple[int, int]] = {(0, 0): (first, int(rng.integers(EDGE_COUNT)))}
    while True:
        endgame = len(tiles) + 2 * HAND_SIZE >= TILE_COUNT
        _fill_forced(tiles, pool, rng, True)
        if endgame and lapse_in_endgame:
            _fill_forced(tiles, pool, rng, False)
        if len(tiles) >= n_tiles or not pool:
            break
        if not _free_move(tiles, pool, rng, True):
            if not (endgame and lapse_in_endgame and _free_move(tiles, pool, rng, False)):
                break
    return Board(tiles), pool


def _plant_mismatch(tiles, rng) -> tuple[Hex, ...]:
    """Turn one tile so at least one of its edges clashes with a neighbour (a misrotated placement)."""
    board = Board(tiles)
    hexes = [h for h in sorted(tiles) if board.neighbour_count(h) >= 1]
    for i in rng.permutation(len(hexes)):
        h = hexes[int(i)]
        number, rot = tiles[h]
        bad = [r for r in range(EDGE_COUNT)
               if r != rot and Board({**tiles, h: (number, r)}).mismatched_edges(h)]
        if bad:
            tiles[h] = (number, int(bad[int(rng.integers(len(bad)))]))
            return (h,)
    return ()


def _plant_fourth_neighbour(tiles, pool, rng) -> tuple[Hex, ...]:
    """A colour-matching tile beside a forced space, giving that space a fourth neighbour (R2)."""
    board = Board(tiles)
    spaces = [s for s in board.forced_spaces()]
    for i in rng.permutation(len(spaces)):
        s = spaces[int(i)]
        empties = [n for n in neighbours(s) if n not in tiles]
        for j in rng.permutation(len(empties)):
            h = empties[int(j)]
            got = _try_place(tiles, pool, h, rng, False)
            if got:
                tiles[h] = got
                pool.remove(got[0])
                return (s,)
    # no forced space: take out a tile with four or more neighbours whose removal keeps the Tantrix whole
    # (boards keep at least MIN_BOARD_TILES)
    for h in [sorted(tiles)[int(i)] for i in rng.permutation(len(tiles))]:
        if board.neighbour_count(h) >= 4 and len(tiles) > MIN_BOARD_TILES:
            rest = {k: v for k, v in tiles.items() if k != h}
            if Board(rest).is_connected():
                pool.append(tiles.pop(h)[0])
                return (h,)
    return ()


def _plant_blocked_space(tiles, pool, rng) -> tuple[Hex, ...]:
    """A matching tile that turns a two-neighbour hex into a forced space with three equal links (R1)."""
    board = Board(tiles)
    empties = sorted(board.empty_neighbours())
    for s in [empties[int(i)] for i in rng.permutation(len(empties))]:
        facing = board.facing_colors(s)
        if len(facing) != 2 or len(set(facing.values())) != 1:
            continue
        color = next(iter(facing.values()))
        for k in range(EDGE_COUNT):
            h = neighbour(s, k)
            if h in tiles or not board.neighbour_count(h):
                continue
            need = {**board.facing_colors(h), opposite_edge(k): color}
            for number in pool:
                rots = _rotations_matching(need, number)
                if rots:
                    tiles[h] = (number, int(rots[0]))
                    pool.remove(number)
                    if Board(tiles).is_blocked_space(s):
                        return (s,)
                    pool.append(tiles.pop(h)[0])
    return ()


def plant_defect(board: Board, pool: list[int], rng: np.random.Generator,
                 defect: str) -> tuple[Board, str | None, tuple[Hex, ...]]:
    """``board`` with one deliberate illegality; falls back to a mismatch when ``defect`` cannot be
    planted."""
    tiles = {h: (p.number, p.rotation) for h, p in board.tiles.items()}
    hexes: tuple[Hex, ...] = ()
    if defect == "four_neighbours":
        hexes = _plant_fourth_neighbour(tiles, pool, rng)
    elif defect == "blocked_space":
        hexes = _plant_blocked_space(tiles, pool, rng)
    if not hexes:
        defect = "mismatch"
        hexes = _plant_mismatch(tiles, rng)
    return Board(tiles), (defect if hexes else None), hexes


def deal(rng: np.random.Generator, n_tiles: int, *, defect: str | None = None,
         hands_visible: bool = True) -> TantrixDeal:
    """A position of about ``n_tiles`` board tiles, hands of six while the bag lasts (the rest, split, after).

    With hidden hands the restrictions hold to the end, so the board is legal under either reading of the
    endgame; ``bag_empty`` is true when board + visible hands hold all 56 tiles, or, with the hands out of
    the picture, when the board holds 44 or more (six each in hand while the bag lasts, TX P7).
    """
    board, pool = play_board(rng, n_tiles, lapse_in_endgame=hands_visible)
    hexes: tuple[Hex, ...] = ()
    if defect is not None:
        # R1/R2 lapse in the endgame (a planted tile may start it): only a clash stays illegal there
        if len(board) + 1 + 2 * HAND_SIZE >= TILE_COUNT and defect != "mismatch":
            defect = "mismatch"
        board, defect, hexes = plant_defect(board, pool, rng, defect)
    hands: dict[str, tuple[int, ...]] = {"A": (), "B": ()}
    if hands_visible:
        if len(pool) > 2 * HAND_SIZE:
            hands = {"A": tuple(pool[:HAND_SIZE]), "B": tuple(pool[HAND_SIZE:2 * HAND_SIZE])}
        else:
            half = (len(pool) + 1) // 2
            hands = {"A": tuple(pool[:half]), "B": tuple(pool[half:])}
    if hands_visible:
        bag_empty = len(board) + sum(len(v) for v in hands.values()) == TILE_COUNT
    else:  # the hands hold six each while the bag lasts (TX P7), so 44 placed tiles mean it is empty
        bag_empty = len(board) + 2 * HAND_SIZE >= TILE_COUNT
    return TantrixDeal(board=board, hands=hands, bag_empty=bag_empty, defect=defect, defect_hexes=hexes)
