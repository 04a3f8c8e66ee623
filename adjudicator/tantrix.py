"""Tantrix (RULES.md section 2): placement legality, moves, scores, tournament points, tie-breaks.

Judges take boards as data (``geometry.tantrix.Board``: hex -> tile number and rotation) and return ``Ruling``s
citing the clause as RULES.md names it: the verdict of a placement under ``TX A1`` and each broken rule under its
game-rule clause (``TX G-2`` mismatch or not touching, ``TX G-4`` free move while a forced space is fillable,
``TX G-5 R1``/``R2``/``R3``). Players are named by strings; a ruling's ``colors`` carries the players it is about.
:func:`judge_board` rules on a whole photographed position (what a referee sees on the table, not a move).
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from adjudicator.types import AdjudicatorError, Decision, Ruling
from geometry.tantrix import (
    DIRECTION_NAMES,
    EDGE_COUNT,
    HAND_SIZE,
    TILE_COUNT,
    Board,
    Hex,
    LinkColor,
    TantrixError,
    hex_groups,
    neighbour,
    neighbours,
    opposite_edge,
    rotate_hex,
    tile,
)

GAME = "tantrix"
TOTAL_TP = 20.0  # TX A3: 20 tournament points are shared per game
DRAW_TP = 10.0  # TX I-1: margin 0 gives 10-10


@dataclass(frozen=True, slots=True, kw_only=True)
class TpTable:
    """TX I-1: the event's score-sheet table, margin -> the winner's tournament points (the loser gets the rest).

    ``entries`` are ``(least margin, winner TPs)`` pairs; a margin takes the entry with the largest least margin
    not above it. Validated: starts at margin 0 with 10 (10-10 draw), winner TPs never fall as the margin grows
    and stay within [10, 20], so every game's two shares sum to 20.
    """

    entries: tuple[tuple[int, float], ...]

    def __post_init__(self) -> None:
        entries = tuple(sorted((int(m), float(tp)) for m, tp in self.entries))
        if not entries or entries[0] != (0, DRAW_TP):
            raise AdjudicatorError(f"TP table must give 10-10 at margin 0 (TX I-1), got {entries[:1]!r}")
        margins = [m for m, _ in entries]
        if len(set(margins)) != len(margins):
            raise AdjudicatorError(f"TP table lists a margin twice: {margins!r}")
        for (m0, tp0), (m1, tp1) in itertools.pairwise(entries):
            if tp1 < tp0:
                raise AdjudicatorError(f"TP table must not fall with the margin: {m0}->{tp0}, {m1}->{tp1}")
        if entries[-1][1] > TOTAL_TP:
            raise AdjudicatorError(f"winner TPs must not exceed {TOTAL_TP}, got {entries[-1][1]!r}")
        object.__setattr__(self, "entries", entries)

    @classmethod
    def from_pairs(cls, pairs: Mapping[int, tuple[float, float]]) -> TpTable:
        """From ``margin -> (winner TPs, loser TPs)`` as printed on a score sheet; each pair must sum to 20."""
        entries = []
        for margin, (win, lose) in pairs.items():
            if not math.isclose(win + lose, TOTAL_TP):
                raise AdjudicatorError(f"TP pair at margin {margin} must sum to 20, got {win}-{lose}")
            entries.append((margin, win))
        return cls(entries=tuple(entries))

    def winner_points(self, margin: int) -> float:
        if margin < 0:
            raise AdjudicatorError(f"margin must be >= 0, got {margin!r}")
        return [tp for m, tp in self.entries if m <= margin][-1]


@dataclass(frozen=True, slots=True, kw_only=True)
class TantrixParams:
    """Tournament settings (TX A3) with the rule book's defaults; ``tp_table`` is the event's (TX I-1)."""

    tp_table: TpTable | None = None
    penalty_free_s: float = 20 * 60.0  # TX 3, TX I-4: 20:00 already costs one penalty
    penalty_step_s: float = 60.0  # one more per full minute
    adjudication_after_s: float = 25 * 60.0  # TX 3, TX I-4: strictly more than 25:00
    wrong_call_s: float = 30.0  # TX 5: a wrong missed-forced-space call
    clock_start_late_s: float = 5 * 60.0  # TX 6: the clock may start 5 min after the scheduled time
    default_late_s: float = 15 * 60.0  # TX 6: default after 10 more
    default_tp: tuple[float, float] = (15.0, 5.0)  # TX 6 (the Controller may change)
    frame_idx: int | None = None

    def __post_init__(self) -> None:
        if not (self.penalty_free_s > 0 and self.penalty_step_s > 0 and self.adjudication_after_s > 0):
            raise AdjudicatorError("clock limits must be positive")
        if not math.isclose(sum(self.default_tp), TOTAL_TP):
            raise AdjudicatorError(f"default TPs must sum to 20, got {self.default_tp!r}")


DEFAULT_TANTRIX_PARAMS = TantrixParams()


def _ruling(rule: str, decision: Decision, explanation: str, params: TantrixParams, **kw) -> Ruling:
    return Ruling(game=GAME, rule=rule, decision=decision, explanation=explanation, frame_idx=params.frame_idx, **kw)


def _tile_id(number: int) -> str:
    return f"tile-{number}"


# ---------------------------------------------------------------- TX A1: legality


@dataclass(frozen=True, slots=True, kw_only=True)
class Violation:
    """One broken rule of a placement: its clause, what happened, and the hexes involved."""

    rule: str
    explanation: str
    hexes: tuple[Hex, ...] = ()
    interpretations: tuple[str, ...] = ()


def controlled_side_hexes(before: Board, h: Hex) -> tuple[Hex, ...]:
    """TX G-5 R3 / TX I-2: empty hexes that reach four or more neighbours when, after a tile at ``h``, the
    forced spaces it creates are filled in turn (colours ignored). Empty if the placement is not along a
    controlled side.
    """
    filled = set(before.tiles) | {h}

    def count(x: Hex) -> int:
        return sum(n in filled for n in neighbours(x))

    queue = deque(n for n in neighbours(h) if n not in filled and count(n) == 3)
    queued = set(queue)
    while queue:
        x = queue.popleft()
        filled.add(x)
        over = tuple(sorted(n for n in neighbours(x) if n not in filled and count(n) >= 4))
        if over:
            return over
        for n in neighbours(x):
            if n not in filled and n not in queued and count(n) == 3:
                queued.add(n)
                queue.append(n)
    return ()


def restriction_violations(before: Board, h: Hex, number: int, rotation: int) -> list[Violation]:
    """TX G-5 R1-R3 for a tile placed at ``h`` (they apply before the endgame only)."""
    after = before.with_tile(h, number, rotation)
    out: list[Violation] = []
    blocked = tuple(n for n in neighbours(h) if after.is_blocked_space(n))
    if blocked:
        colors = ", ".join(sorted({next(iter(after.facing_colors(b).values())).value for b in blocked}))
        out.append(Violation(rule="TX G-5 R1", hexes=blocked,
                             explanation=f"creates forced space(s) {list(blocked)} whose three links are all {colors}"))
    fourth = tuple(n for n in neighbours(h) if n not in after and before.neighbour_count(n) == 3)
    if fourth:
        out.append(Violation(rule="TX G-5 R2", hexes=fourth,
                             explanation=f"gives forced space(s) {list(fourth)} a fourth neighbour"))
    else:
        over = controlled_side_hexes(before, h)
        if over:
            out.append(Violation(rule="TX G-5 R3", hexes=over, interpretations=("TX I-2",),
                                 explanation=f"along a controlled side: filling the forced spaces it creates "
                                             f"leaves {list(over)} with four or more neighbours"))
    return out


def fillable_forced_spaces(board: Board, hand: Iterable[int], *, endgame: bool = False) -> dict[Hex, tuple[int, ...]]:
    """Forced spaces (TX G-3) -> the hand tiles that fit them legally.

    Before the endgame a fit that would break R1-R3 does not count: such a space is pair-blocked and obliges
    no one (TX A1). Spaces no hand tile fills are left out.
    """
    hand = tuple(hand)
    out: dict[Hex, tuple[int, ...]] = {}
    for space in board.forced_spaces():
        fitting = []
        for number in hand:
            if number in board.numbers():
                continue
            rotations = board.fitting_rotations(number, space)
            legal = bool(rotations) if endgame else any(
                not restriction_violations(board, space, number, r) for r in rotations)
            if legal:
                fitting.append(number)
        if fitting:
            out[space] = tuple(fitting)
    return out


def forced_space_fits(board: Board, hand: Iterable[int]) -> dict[Hex, tuple[int, ...]]:
    """Every forced space (TX G-3) -> the hand tiles that fit it for some rotation, colours only (TX P4)."""
    hand = tuple(hand)
    return {s: tuple(n for n in hand if board.fits(n, s)) for s in board.forced_spaces()}


def placement_violations(
    before: Board, h: Hex, number: int, rotation: int, *, endgame: bool = False, hand: Iterable[int] | None = None
) -> list[Violation]:
    """Every rule a tile placed at ``h`` breaks (TX A1); empty if legal."""
    tile(number)
    if h in before:
        return [Violation(rule="TX A1", hexes=(h,), explanation=f"hex {h} already holds tile {before[h].number}")]
    if number in before.numbers():
        return [Violation(rule="TX A1", explanation=f"tile {number} is already on the board")]
    out: list[Violation] = []
    if hand is not None and number not in set(hand):
        out.append(Violation(rule="TX A1", explanation=f"tile {number} is not in the player's hand"))
    after = before.with_tile(h, number, rotation)
    if len(before) and before.neighbour_count(h) == 0:
        out.append(Violation(rule="TX G-2", hexes=(h,), explanation=f"tile {number} at {h} does not touch the Tantrix"))
    bad = after.mismatched_edges(h)
    if bad:
        shown = ", ".join(f"edge {k} {after[h].edge_color(k).value} vs {after[neighbour(h, k)].number}'s "
                          f"{after.facing_colors(h)[k].value}" for k in bad)
        out.append(Violation(rule="TX G-2", hexes=tuple(neighbour(h, k) for k in bad),
                             explanation=f"tile {number} at {h} mismatches: {shown}"))
    if hand is not None and not before.is_forced_space(h):
        fillable = fillable_forced_spaces(before, hand, endgame=endgame)
        if fillable:
            out.append(Violation(rule="TX G-4", hexes=tuple(fillable),
                                 explanation=f"free move while forced space(s) can be filled: {fillable}"))
    if not endgame:
        out += restriction_violations(before, h, number, rotation)
    return out


def judge_placement(
    before: Board,
    h: Hex,
    number: int,
    rotation: int,
    *,
    endgame: bool = False,
    hand: Iterable[int] | None = None,
    params: TantrixParams = DEFAULT_TANTRIX_PARAMS,
) -> tuple[Ruling, ...]:
    """TX A1: the verdict on a tile placed at ``h``, then one ``ILLEGAL`` ruling per broken rule.

    Without the player's ``hand`` the free-move rule (TX G-4) cannot be checked when a forced space is open: an
    ``UNDECIDED`` ruling names the missing hand.
    """
    hand = None if hand is None else tuple(hand)
    violations = placement_violations(before, h, number, rotation, endgame=endgame, hand=hand)
    ids = (_tile_id(number),)
    phase = "endgame" if endgame else "before the endgame"
    evidence = {"rotation_count": rotation % EDGE_COUNT, "broken_rules_count": len(violations)}
    if violations:
        head = _ruling("TX A1", Decision.ILLEGAL,
                       f"tile {number} at {h} ({phase}) breaks " + ", ".join(v.rule for v in violations),
                       params, piece_ids=ids, evidence=evidence)
    else:
        head = _ruling("TX A1", Decision.LEGAL, f"tile {number} at {h} rotation {rotation % EDGE_COUNT} is legal "
                       f"({phase})", params, piece_ids=ids, evidence=evidence)
    out = [head]
    out += [_ruling(v.rule, Decision.ILLEGAL, v.explanation, params, piece_ids=ids,
                    interpretations=v.interpretations) for v in violations]
    if hand is None and not before.is_forced_space(h) and before.forced_spaces():
        out.append(_ruling("TX G-4", Decision.UNDECIDED,
                           f"forced space(s) {list(before.forced_spaces())} are open but the hand is not visible; "
                           "cannot tell whether a free move was allowed", params, piece_ids=ids))
    return tuple(out)


def judge_move(
    before: Board,
    after: Board,
    *,
    endgame: bool = False,
    hand: Iterable[int] | None = None,
    params: TantrixParams = DEFAULT_TANTRIX_PARAMS,
) -> tuple[Ruling, ...]:
    """TX A1 on two photos of the Tantrix: the tile placed between them and every rule it broke.

    Exactly one tile must have appeared and no placed tile may have moved or vanished; otherwise the ruling is
    ``UNDECIDED`` (several or no tiles: the umpire must look) naming what changed.
    """
    moved = sorted(h for h in before if h in after and after[h] != before[h])
    gone = sorted(h for h in before if h not in after)
    added = sorted(h for h in after if h not in before)
    if moved or gone or len(added) != 1:
        return (_ruling("TX A1", Decision.UNDECIDED,
                        f"expected one new tile; added {added}, moved {moved}, removed {gone}", params,
                        evidence={"added_count": len(added), "moved_count": len(moved), "removed_count": len(gone)}),)
    h = added[0]
    p = after[h]
    return judge_placement(before, h, p.number, p.rotation, endgame=endgame, hand=hand, params=params)


# ---------------------------------------------------------------- TX A2: score


@dataclass(frozen=True, slots=True, kw_only=True)
class ColorLine:
    """One component of a colour's link graph: a line or a loop through ``hexes``."""

    color: LinkColor
    hexes: tuple[Hex, ...]
    is_loop: bool

    @property
    def value(self) -> int:
        """TX A2: one point per tile, two for a loop."""
        return len(self.hexes) * (2 if self.is_loop else 1)


def color_lines(board: Board, color: LinkColor | str) -> tuple[ColorLine, ...]:
    """TX A2: every line and loop of ``color``, best first.

    Two adjacent tiles are linked when both show ``color`` on their shared edge; each tile carries one link of a
    colour, so each component is a path or a cycle.
    """
    color = LinkColor.parse(color)
    nodes = [h for h, p in board.tiles.items() if color in p.tile.colors]
    adj: dict[Hex, list[Hex]] = {h: [] for h in nodes}
    for h in nodes:
        for k in range(EDGE_COUNT):
            n = neighbour(h, k)
            if n in adj and board[h].edge_color(k) is color and board[n].edge_color(opposite_edge(k)) is color:
                adj[h].append(n)
    seen: set[Hex] = set()
    lines = []
    for start in nodes:
        if start in seen:
            continue
        comp, todo = [], [start]
        seen.add(start)
        while todo:
            x = todo.pop()
            comp.append(x)
            for n in adj[x]:
                if n not in seen:
                    seen.add(n)
                    todo.append(n)
        is_loop = len(comp) >= 3 and all(len(adj[x]) == 2 for x in comp)
        lines.append(ColorLine(color=color, hexes=tuple(sorted(comp)), is_loop=is_loop))
    return tuple(sorted(lines, key=lambda line: (-line.value, line.hexes)))


def color_score(board: Board, color: LinkColor | str) -> int:
    """TX G-7: the value of ``color``'s single best line or loop (0 if the colour is not on the board)."""
    lines = color_lines(board, color)
    return lines[0].value if lines else 0


def judge_score(
    board: Board, players: Mapping[str, LinkColor | str], params: TantrixParams = DEFAULT_TANTRIX_PARAMS
) -> tuple[Ruling, ...]:
    """TX A2: each player's score (``SCORE``), then the winner and margin (``WINNER``; no colours on a draw)."""
    if len(players) != 2:
        raise AdjudicatorError(f"a Tantrix game has two players, got {list(players)!r}")
    out = []
    scores: dict[str, int] = {}
    for name, color in players.items():
        color = LinkColor.parse(color)
        lines = color_lines(board, color)
        best = lines[0] if lines else None
        scores[name] = best.value if best else 0
        kind = "no line" if best is None else f"{'loop' if best.is_loop else 'line'} of {len(best.hexes)} tiles"
        out.append(_ruling("TX A2", Decision.SCORE, f"{name} ({color.value}): {kind}, {scores[name]} points", params,
                           colors=(name,), piece_ids=tuple(_tile_id(board[h].number) for h in (best.hexes if best
                                                                                                 else ())),
                           evidence={"score_points": scores[name],
                                     "tiles_count": 0 if best is None else len(best.hexes),
                                     "loop_count": int(bool(best and best.is_loop))}))
    (a, sa), (b, sb) = scores.items()
    margin = abs(sa - sb)
    if sa == sb:
        out.append(_ruling("TX A2", Decision.SCORE, f"drawn {sa}-{sb}", params, evidence={"margin_points": 0}))
    else:
        winner = a if sa > sb else b
        out.append(_ruling("TX A2", Decision.WINNER, f"{winner} wins {max(sa, sb)}-{min(sa, sb)} by {margin}",
                           params, colors=(winner,), evidence={"margin_points": margin}))
    return tuple(out)


# ---------------------------------------------------------------- a photographed position


def best_hex_transform(pairs: Iterable[tuple[Hex, Hex]]) -> tuple[int, Hex, int]:
    """The lattice rotation (sixths ccw) and translation taking most ``(src, dst)`` hexes onto each other, and how
    many it takes: two photos (or a reading and its truth) number the same grid in their own frames."""
    pairs = list(pairs)
    votes: dict[tuple[int, Hex], int] = {}
    for src, dst in pairs:
        for s in range(EDGE_COUNT):
            q, r = rotate_hex(src, s)
            key = (s, (dst[0] - q, dst[1] - r))
            votes[key] = votes.get(key, 0) + 1
    if not votes:
        return 0, (0, 0), 0
    (s, t), n = max(votes.items(), key=lambda kv: (kv[1], -kv[0][0], kv[0][1]))
    return s, t, n


def align_board(board: Board, reference: Board) -> Board:
    """``board`` turned and moved onto ``reference``'s frame, by the tiles (numbers) both show: the transform most
    of them agree on, hex and rotation together. Unchanged when they share no tile."""
    where = {p.number: h for h, p in reference.tiles.items()}
    votes: dict[tuple[int, Hex], int] = {}
    for h, p in board.tiles.items():
        if p.number not in where:
            continue
        ref = where[p.number]
        s = (reference[ref].rotation - p.rotation) % EDGE_COUNT
        q, r = rotate_hex(h, s)
        key = (s, (ref[0] - q, ref[1] - r))
        votes[key] = votes.get(key, 0) + 1
    if not votes:
        return board
    (s, (dq, dr)), _ = max(votes.items(), key=lambda kv: (kv[1], -kv[0][0], kv[0][1]))
    return board.rotated(s).translated(dq, dr)


def endgame_from_counts(board_count: int, hand_counts: Sequence[int] | None) -> tuple[bool, str]:
    """TX P5 inferred from what the photo shows: the bag is empty when board and hands hold all 56 tiles. Without
    the hands, TX P7 (six each while the bag lasts) makes a board of 44 or more tiles the endgame."""
    if hand_counts is not None and len(hand_counts) == 2:
        total = board_count + sum(hand_counts)
        if total >= TILE_COUNT:
            return True, f"board {board_count} + hands {sum(hand_counts)} = {total} tiles: the bag is empty"
        return False, f"board {board_count} + hands {sum(hand_counts)} = {total} tiles: {TILE_COUNT - total} in the bag"
    limit = TILE_COUNT - 2 * HAND_SIZE
    if board_count >= limit:
        return True, f"board of {board_count} tiles (>= {limit}): with six in each hand while the bag lasts (TX P7) " \
                     "the bag is empty"
    return False, f"board of {board_count} tiles (< {limit}): the bag still holds tiles (hands of six, TX P7)"


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardJudgement:
    """The verdict on a photographed position: ``legal`` is None when an unread or doubtful tile could change it.

    ``forced_spaces`` maps each forced space to each player's fitting hand tiles (empty without hands);
    ``scores`` each colour's best line or loop; ``player_scores`` the players' (when their colours are known).
    ``scores_exact`` is False when an unread tile could lengthen a line.
    """

    rulings: tuple[Ruling, ...]
    legal: bool | None
    endgame: bool
    forced_spaces: dict[Hex, dict[str, tuple[int, ...]]]
    scores: dict[str, int]
    player_scores: dict[str, int]
    scores_exact: bool
    best_lines: dict[str, ColorLine]


def _hex_name(h: Hex) -> str:
    return f"({h[0]}, {h[1]})"


def judge_board(
    board: Board,
    *,
    unread: Iterable[Hex] = (),
    doubtful: Iterable[Hex] = (),
    hands: Mapping[str, Iterable[int]] | None = None,
    unread_in_hands: int = 0,
    endgame: bool | None = None,
    players: Mapping[str, LinkColor | str] | None = None,
    params: TantrixParams = DEFAULT_TANTRIX_PARAMS,
) -> BoardJudgement:
    """TX A1 on a whole photographed position, with its forced spaces (TX G-3) and scores (TX A2).

    ``unread`` hexes hold a tile whose face could not be read (they count as neighbours, nothing else);
    ``doubtful`` hexes hold a tile read with low confidence. A fault resting only on sure tiles is ``ILLEGAL``;
    one that involves a doubtful or unread tile is ``TOO_CLOSE_TO_CALL``, and so is the whole board's verdict
    when any such tile is on it and nothing sure is illegal. ``hands`` (player -> tile numbers) names the tiles
    that fit each forced space and, with ``endgame`` None, lets the bag's state be inferred (TX P5); hand tiles
    seen but not read count there as ``unread_in_hands``.
    """
    unread = frozenset((int(h[0]), int(h[1])) for h in unread) - set(board.tiles)
    doubtful = frozenset((int(h[0]), int(h[1])) for h in doubtful) & set(board.tiles)
    unsure = unread | doubtful
    occupied = set(board.tiles) | unread
    hands = {str(k): tuple(int(n) for n in v) for k, v in (hands or {}).items()}
    out: list[Ruling] = []
    sure_faults = 0
    unsure_faults = 0

    def fault(rule: str, text: str, hexes: Iterable[Hex], **kw) -> None:
        nonlocal sure_faults, unsure_faults
        hexes = tuple(hexes)
        doubt = [h for h in hexes if h in unsure]
        if doubt:
            unsure_faults += 1
            out.append(_ruling(rule, Decision.TOO_CLOSE_TO_CALL, f"{text}; but the tile at "
                               f"{', '.join(map(_hex_name, doubt))} is not read for sure", params,
                               confidence=0.5, **kw))
        else:
            sure_faults += 1
            out.append(_ruling(rule, Decision.ILLEGAL, text, params, **kw))

    # TX P5: endgame or not
    if endgame is None:
        counts = [len(v) for v in hands.values()] if len(hands) == 2 else None
        if counts is not None:
            counts[0] += int(unread_in_hands)
        endgame, why = endgame_from_counts(len(occupied), counts)
        out.append(_ruling("TX P5", Decision.GAME_CONTINUES,
                           f"{'endgame' if endgame else 'before the endgame'} (inferred): {why}", params,
                           confidence=1.0 if counts is not None else 0.8,
                           evidence={"board_tiles_count": len(occupied),
                                     "hand_tiles_count": sum(counts) if counts else 0}))
    else:
        out.append(_ruling("TX P5", Decision.GAME_CONTINUES, f"{'endgame' if endgame else 'before the endgame'} "
                           "(as given)", params, evidence={"board_tiles_count": len(occupied)}))

    # TX G-2: every shared edge matches (each edge once: towards E, NE, NW)
    for h, p in sorted(board.tiles.items()):
        for k in range(3):
            n = neighbour(h, k)
            if n not in board.tiles:
                continue
            a, b = p.edge_color(k), board[n].edge_color(opposite_edge(k))
            if a is not b:
                fault("TX G-2", f"tile {p.number} at {_hex_name(h)} shows {a.value} on its {DIRECTION_NAMES[k]} "
                      f"edge, tile {board[n].number} at {_hex_name(n)} {b.value} on the shared edge (mismatch)",
                      (h, n), piece_ids=(_tile_id(p.number), _tile_id(board[n].number)))

    # TX G-2: one Tantrix (the largest connected group); every other group is not touching it
    groups = hex_groups(occupied)
    for g in groups[1:]:
        names = [f"{board[h].number}" if h in board.tiles else "unread" for h in sorted(g)]
        fault("TX G-2", f"{len(g)} tile(s) at {', '.join(map(_hex_name, sorted(g)))} (tiles {', '.join(names)}) do "
              f"not touch the Tantrix of {len(groups[0])} tiles", g,
              piece_ids=tuple(_tile_id(board[h].number) for h in sorted(g) if h in board.tiles),
              evidence={"tiles_count": len(g)})

    # TX G-3 / P2 / P4: forced spaces and who can fill them; before the endgame TX G-5 R1 (P3) and R2/R3
    empties = sorted({n for h in occupied for n in neighbours(h) if n not in occupied})
    forced: dict[Hex, dict[str, tuple[int, ...]]] = {}
    used = board.numbers()
    for e in empties:
        around = [n for n in neighbours(e) if n in occupied]
        count = len(around)
        if count == 3:
            facing = board.facing_colors(e)
            blind = [n for n in around if n in unread]
            fits = {} if blind else {
                player: tuple(n for n in hand if n not in used and board.fits(n, e)) for player, hand in hands.items()}
            forced[e] = fits
            shown = ", ".join(f"{DIRECTION_NAMES[k]} {c.value}" for k, c in sorted(facing.items()))
            fit_text = ("fits unknown (a neighbour is unread)" if blind else
                        "; ".join(f"{pl} can fill it with {list(ns) if ns else 'nothing'}" for pl, ns in fits.items())
                        or "hands not visible")
            out.append(_ruling("TX G-3", Decision.GAME_CONTINUES, f"forced space {_hex_name(e)}: facing {shown}; "
                               f"{fit_text}", params,
                               piece_ids=tuple(_tile_id(n) for ns in fits.values() for n in ns),
                               colors=tuple(pl for pl, ns in fits.items() if ns),
                               evidence={"neighbours_count": 3, "fitting_tiles_count": sum(map(len, fits.values()))}))
            if not endgame and not blind and len(facing) == 3 and len(set(facing.values())) == 1:
                color = next(iter(facing.values())).value
                fault("TX G-5 R1", f"forced space {_hex_name(e)} has three {color} links facing it (TX P3): no tile "
                      "can fill it; illegal before the endgame", around,
                      piece_ids=tuple(_tile_id(board[n].number) for n in around if n in board.tiles),
                      evidence={"neighbours_count": 3})
        elif count >= 4 and not endgame:
            fault("TX G-5 R2", f"empty hex {_hex_name(e)} has {count} neighbours: a forced space was given a fourth "
                  "(R2), or a move along a controlled side left it so (R3); illegal before the endgame", (),
                  piece_ids=tuple(_tile_id(board[n].number) for n in around if n in board.tiles),
                  interpretations=("TX I-2",), evidence={"neighbours_count": count})

    # TX A2: each colour's best line or loop, and the players'
    best: dict[str, ColorLine] = {}
    scores: dict[str, int] = {}
    for c in LinkColor:
        lines = color_lines(board, c)
        scores[c.value] = lines[0].value if lines else 0
        if lines:
            best[c.value] = lines[0]
    scores_exact = not unread
    text = ", ".join(f"{c} {v}" for c, v in scores.items())
    out.append(_ruling("TX A2", Decision.SCORE, f"best line or loop per colour: {text}"
                       + ("" if scores_exact else f" (at least: {len(unread)} unread tile(s) may extend a line)"),
                       params, confidence=1.0 if scores_exact else 0.5,
                       evidence={f"{c}_points": v for c, v in scores.items()}))
    player_scores: dict[str, int] = {}
    if players:
        colours = {str(k): LinkColor.parse(v) for k, v in players.items()}
        player_scores = {k: scores[c.value] for k, c in colours.items()}
        if len(colours) == 2:
            for r in judge_score(board, colours, params):
                out.append(r if scores_exact else _ruling(r.rule, r.decision, r.explanation + " (at least)", params,
                                                          colors=r.colors, piece_ids=r.piece_ids,
                                                          evidence=r.evidence, confidence=0.5))
    if len(occupied) == TILE_COUNT:
        out.append(_ruling("TX G-6", Decision.GAME_CEASES, "all 56 tiles are placed: the game is over",
                           params, interpretations=("TX I-5",), evidence={"board_tiles_count": len(occupied)}))

    # TX A1: the position's verdict first
    legal: bool | None = False if sure_faults else (None if unsure else True)
    ev = {"board_tiles_count": len(occupied), "unread_count": len(unread), "doubtful_count": len(doubtful),
          "broken_rules_count": sure_faults, "unsure_faults_count": unsure_faults, "forced_spaces_count": len(forced)}
    phase = "endgame" if endgame else "before the endgame"
    if legal is False:
        rules = sorted({r.rule for r in out if r.decision is Decision.ILLEGAL})
        head = _ruling("TX A1", Decision.ILLEGAL, f"the position is illegal ({phase}): breaks {', '.join(rules)}",
                       params, evidence=ev)
    elif legal is None:
        head = _ruling("TX A1", Decision.TOO_CLOSE_TO_CALL, f"{len(unsure)} tile(s) not read for sure "
                       f"({len(unread)} unread, {len(doubtful)} doubtful): the umpire looks before the position is "
                       f"called legal ({phase})", params, evidence=ev, confidence=0.5)
    else:
        head = _ruling("TX A1", Decision.LEGAL, f"every shared edge matches and no restriction is broken ({phase})",
                       params, evidence=ev)
    return BoardJudgement(rulings=(head, *out), legal=legal, endgame=endgame, forced_spaces=forced, scores=scores,
                          player_scores=player_scores, scores_exact=scores_exact, best_lines=best)


# ---------------------------------------------------------------- TX A3: tournament points and the clock


def time_penalties(time_s: float, params: TantrixParams = DEFAULT_TANTRIX_PARAMS) -> int:
    """TX 3: 0 under 20:00, else 1 + one per full minute beyond (TX I-4).

    >>> [time_penalties(t) for t in (1199, 1200, 1259, 1260, 1350)]
    [0, 1, 1, 2, 3]
    """
    if not math.isfinite(time_s) or time_s < 0:
        raise AdjudicatorError(f"clock time must be a finite number of seconds >= 0, got {time_s!r}")
    if time_s < params.penalty_free_s:
        return 0
    return 1 + math.floor((time_s - params.penalty_free_s) / params.penalty_step_s)


def is_adjudication_due(time_s: float, params: TantrixParams = DEFAULT_TANTRIX_PARAMS) -> bool:
    """TX 3: a clock strictly over 25:00 lets the Controller stop and adjudicate (TX I-4)."""
    return time_s > params.adjudication_after_s


def apply_penalties(base_tp: tuple[float, float], penalties: tuple[int, int]) -> tuple[float, float]:
    """TX A3: each penalty moves 1 TP to the opponent; both net; each share clamped to [0, 20], sum kept 20.

    >>> apply_penalties((17.0, 3.0), (3, 1))
    (15.0, 5.0)
    """
    if not math.isclose(sum(base_tp), TOTAL_TP):
        raise AdjudicatorError(f"base TPs must sum to 20, got {base_tp!r}")
    a = base_tp[0] - penalties[0] + penalties[1]
    a = min(TOTAL_TP, max(0.0, a))
    return (a, TOTAL_TP - a)


def wrong_call_times(times_s: tuple[float, float], wrong_party: int,
                     params: TantrixParams = DEFAULT_TANTRIX_PARAMS) -> tuple[float, float]:
    """TX 5: a wrong "missed forced space" call adds 30 s to the caller's clock and takes 30 s off the other's."""
    if wrong_party not in (0, 1):
        raise AdjudicatorError(f"wrong_party must be 0 or 1, got {wrong_party!r}")
    t = list(times_s)
    t[wrong_party] += params.wrong_call_s
    t[1 - wrong_party] = max(0.0, t[1 - wrong_party] - params.wrong_call_s)
    return (t[0], t[1])


def judge_clock(player: str, time_s: float, params: TantrixParams = DEFAULT_TANTRIX_PARAMS) -> tuple[Ruling, ...]:
    """TX A3 for one clock: the penalty count and, over 25:00, the adjudication flag (``REFER_TO_UMPIRE``)."""
    p = time_penalties(time_s, params)
    out = [_ruling("TX A3", Decision.SCORE, f"{player}: {p} time penalt{'y' if p == 1 else 'ies'} at "
                   f"{int(time_s // 60)}:{time_s % 60:04.1f}", params, colors=(player,),
                   evidence={"time_s": time_s, "penalty_points": p}, interpretations=("TX I-4",))]
    if is_adjudication_due(time_s, params):
        out.append(_ruling("TX A3", Decision.REFER_TO_UMPIRE,
                           f"{player}'s clock is over 25:00: the Controller may stop and adjudicate, benefit of the "
                           "doubt to the player under 25:00", params, colors=(player,),
                           evidence={"time_s": time_s}, interpretations=("TX I-4",)))
    return tuple(out)


def tournament_points(
    scores: Mapping[str, int], times_s: Mapping[str, float], params: TantrixParams
) -> dict[str, float]:
    """TX A3: each player's TPs from the margin (the event's table) and both clocks' penalties."""
    if params.tp_table is None:
        raise AdjudicatorError("tournament points need the event's TP table (TX I-1); none configured")
    if len(scores) != 2 or set(scores) != set(times_s):
        raise AdjudicatorError(f"need two players' scores and times, got {dict(scores)!r}, {dict(times_s)!r}")
    (a, sa), (b, sb) = scores.items()
    win = params.tp_table.winner_points(abs(sa - sb))
    base = (win, TOTAL_TP - win) if sa >= sb else (TOTAL_TP - win, win)
    ta, tb = apply_penalties(base, (time_penalties(times_s[a], params), time_penalties(times_s[b], params)))
    return {a: ta, b: tb}


def judge_tournament_points(
    scores: Mapping[str, int], times_s: Mapping[str, float], params: TantrixParams = DEFAULT_TANTRIX_PARAMS
) -> tuple[Ruling, ...]:
    """TX A3: one ``SCORE`` ruling with both TP shares, then each clock's rulings; ``UNDECIDED`` without a table."""
    if params.tp_table is None:
        return (_ruling("TX A3", Decision.UNDECIDED, "no TP table configured for this event (TX I-1)", params,
                        interpretations=("TX I-1",)),)
    tps = tournament_points(scores, times_s, params)
    text = ", ".join(f"{p} {tp:.1f}" for p, tp in tps.items())
    out = [_ruling("TX A3", Decision.SCORE, f"tournament points {text}", params, colors=tuple(tps),
                   evidence={f"{p}_tournament_points": tp for p, tp in tps.items()}, interpretations=("TX I-1",))]
    for player, t in times_s.items():
        out += judge_clock(player, t, params)
    return tuple(out)


def judge_lateness(
    late_player: str, opponent: str, late_s: float, params: TantrixParams = DEFAULT_TANTRIX_PARAMS
) -> Ruling:
    """TX A3 (TX 6): a player this late after the scheduled start. From 5 min the clock may be started; from
    15 min he defaults, 15.0-5.0 to the opponent (``FORFEIT``, ``colors`` = the defaulting player).
    """
    if late_s >= params.default_late_s:
        win, lose = params.default_tp
        return _ruling("TX A3", Decision.FORFEIT, f"{late_player} defaults ({late_s / 60:.1f} min late): "
                       f"{opponent} {win:.1f}-{lose:.1f}", params, colors=(late_player,),
                       evidence={"late_s": late_s, f"{opponent}_tournament_points": win,
                                 f"{late_player}_tournament_points": lose})
    note = "the opponent may start his clock" if late_s >= params.clock_start_late_s else "no sanction yet"
    return _ruling("TX A3", Decision.GAME_CONTINUES, f"{late_player} {late_s / 60:.1f} min late: {note}", params,
                   colors=(late_player,), evidence={"late_s": late_s})


# ---------------------------------------------------------------- TX A4: tie-breaks


@dataclass(frozen=True, slots=True, kw_only=True)
class GameResult:
    """One finished game of a phase: players, their game scores and tournament points."""

    player_a: str
    player_b: str
    score_a: int
    score_b: int
    tp_a: float
    tp_b: float

    def __post_init__(self) -> None:
        if self.player_a == self.player_b:
            raise AdjudicatorError(f"a game needs two different players, got {self.player_a!r} twice")
        if not math.isclose(self.tp_a + self.tp_b, TOTAL_TP):
            raise AdjudicatorError(f"TPs of a game must sum to 20, got {self.tp_a}-{self.tp_b}")

    def sides(self) -> tuple[tuple[str, int, int, float], tuple[str, int, int, float]]:
        """(player, own score, opponent score, own TPs) for both sides."""
        return ((self.player_a, self.score_a, self.score_b, self.tp_a),
                (self.player_b, self.score_b, self.score_a, self.tp_b))


def _totals(games: Sequence[GameResult], among: set[str] | None = None) -> dict[str, list[float]]:
    """player -> [TPs, wins, margin sum, own score sum] over games (only games among ``among`` if given)."""
    out: dict[str, list[float]] = {}
    for g in games:
        if among is not None and not {g.player_a, g.player_b} <= among:
            continue
        for player, own, other, tp in g.sides():
            row = out.setdefault(player, [0.0, 0.0, 0.0, 0.0])
            row[0] += tp
            row[1] += 1.0 if own > other else 0.5 if own == other else 0.0
            row[2] += own - other
            row[3] += own
    return out


def rank_players(games: Sequence[GameResult]) -> list[list[str]]:
    """TX A4 (TX 7): players best first, grouped where still level after every tie-break.

    Level on TPs: (1) TPs in the games among them, (2) wins (draw = 1/2), (3) sum of margins, (4) own tiles
    scored, the last three over all the phase's games.
    """
    overall = _totals(games)
    by_tp: dict[float, list[str]] = {}
    for player, row in overall.items():
        by_tp.setdefault(round(row[0], 6), []).append(player)
    ranking: list[list[str]] = []
    for tp in sorted(by_tp, reverse=True):
        group = sorted(by_tp[tp])
        if len(group) == 1:
            ranking.append(group)
            continue
        among = _totals(games, set(group))

        def key(p: str, among: dict[str, list[float]] = among) -> tuple[float, ...]:
            head = among.get(p, [0.0])[0]
            return (-round(head, 6), -overall[p][1], -overall[p][2], -overall[p][3])

        levels: dict[tuple[float, ...], list[str]] = {}
        for p in group:
            levels.setdefault(key(p), []).append(p)
        ranking += [sorted(levels[k]) for k in sorted(levels)]
    return ranking


def judge_ranking(games: Sequence[GameResult], params: TantrixParams = DEFAULT_TANTRIX_PARAMS) -> Ruling:
    """TX A4: the phase's order (``colors`` best first); players level after every tie-break go to the Controller."""
    ranking = rank_players(games)
    order = tuple(p for group in ranking for p in group)
    level = [g for g in ranking if len(g) > 1]
    text = " > ".join("=".join(g) for g in ranking)
    if level:
        return _ruling("TX A4", Decision.REFER_TO_UMPIRE, f"order {text}; still level after every tie-break: "
                       f"{level}", params, colors=order)
    return _ruling("TX A4", Decision.WINNER, f"order {text}", params, colors=order)


__all__ = [
    "DEFAULT_TANTRIX_PARAMS", "GAME", "BoardJudgement", "ColorLine", "align_board", "best_hex_transform",
    "endgame_from_counts", "judge_board", "GameResult", "TantrixError", "TantrixParams", "TpTable",
    "Violation", "apply_penalties", "color_lines", "color_score", "controlled_side_hexes", "fillable_forced_spaces",
    "forced_space_fits", "is_adjudication_due", "judge_clock", "judge_lateness", "judge_move", "judge_placement",
    "judge_ranking", "judge_score", "judge_tournament_points", "placement_violations", "rank_players",
    "restriction_violations", "time_penalties", "tournament_points", "wrong_call_times",
]
