"""Tiddly-Wink block dominoes (RULES.md section 3): deal, lead, plays, a double's extra tile, the settlement.

Judges take tiles as data (``geometry.dominoes.Bone``, a layout's ``Join``s) and return ``Ruling``s citing the
clause as RULES.md names it. Players are named by strings; a ruling's ``colors`` field carries the players it
is about (the leader, the winners). A tile that could not be read is never guessed: the judge that needs it
answers ``UNDECIDED`` naming it.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from adjudicator.types import AdjudicatorError, Decision, Ruling
from geometry.dominoes import SET_MAX_PIPS, Bone, Join, set_size

GAME = "dominoes"


class Variant(str, enum.Enum):
    """American (single arm, 5-8 players, 3 tiles each) or British (two ends, floor(T/p) each)."""

    AMERICAN = "american"
    BRITISH = "british"

    @property
    def tag(self) -> str:
        """The clause prefix of this version: ``Am`` or ``Br``."""
        return "Am" if self is Variant.AMERICAN else "Br"

    @property
    def open_end_count(self) -> int:
        """DM P1: American one open end (single arm), British two."""
        return 1 if self is Variant.AMERICAN else 2


AMERICAN_PLAYERS = (5, 8)  # DM Am-Deal
AMERICAN_HAND = 3  # DM Am-Deal
AMERICAN_SET = 6  # double-six only


@dataclass(frozen=True, slots=True, kw_only=True)
class DominoesParams:
    """Configurable interpretations (RULES.md 3.4).

    ``chained_doubles``: DM I-2, each double grants one more tile (True) or only once per turn (False).
    ``lead_double_grants_extra``: DM A2 INTERP, the lead double grants the extra tile too.
    ``british_max_players_double_six``: DM I-5, beyond this a British game needs double-nine or double-twelve.
    """

    chained_doubles: bool = True
    lead_double_grants_extra: bool = True
    british_max_players_double_six: int = 6
    frame_idx: int | None = None

    def __post_init__(self) -> None:
        if not 2 <= self.british_max_players_double_six <= set_size(6):
            raise AdjudicatorError("british_max_players_double_six must be in 2..28, "
                                   f"got {self.british_max_players_double_six!r}")


DEFAULT_DOMINOES_PARAMS = DominoesParams()


def parse_variant(variant: str | Variant) -> Variant:
    try:
        return Variant(str(getattr(variant, "value", variant)).strip().lower())
    except ValueError:
        raise AdjudicatorError(f"dominoes version must be 'american' or 'british', got {variant!r}") from None


def _ruling(rule: str, decision: Decision, explanation: str, params: DominoesParams, **kw) -> Ruling:
    return Ruling(game=GAME, rule=rule, decision=decision, explanation=explanation, frame_idx=params.frame_idx, **kw)


def _bones(tiles: Iterable) -> tuple[Bone | None, ...]:
    return tuple(None if t is None else Bone.parse(t) for t in tiles)


# --- DM Am-Deal / Br-Deal ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class DealPlan:
    """What a deal must look like: tiles per hand and tiles left unused in the boneyard."""

    variant: Variant
    players: int
    max_pips: int
    hand_size: int
    boneyard: int

    @property
    def dealt(self) -> int:
        return self.players * self.hand_size


def deal_plan(variant: str | Variant, players: int, max_pips: int = 6,
              params: DominoesParams = DEFAULT_DOMINOES_PARAMS) -> DealPlan:
    """The deal by version, players and set (RULES.md 3.1); an impossible game raises ``AdjudicatorError``.

    >>> p = deal_plan("british", 8, 9); (p.hand_size, p.boneyard)
    (6, 7)
    """
    v = parse_variant(variant)
    if isinstance(players, bool) or not isinstance(players, int) or players < 2:
        raise AdjudicatorError(f"a dominoes game needs at least 2 players, got {players!r}")
    total = set_size(max_pips)
    if v is Variant.AMERICAN:
        lo, hi = AMERICAN_PLAYERS
        if not lo <= players <= hi:
            raise AdjudicatorError(f"American Tiddly-Wink is for {lo}-{hi} players (DM Am-Deal), got {players}")
        if max_pips != AMERICAN_SET:
            raise AdjudicatorError(f"American Tiddly-Wink uses a double-six set (DM Am-Deal), got double-{max_pips}")
        return DealPlan(variant=v, players=players, max_pips=max_pips, hand_size=AMERICAN_HAND,
                        boneyard=total - AMERICAN_HAND * players)
    if players > total:
        raise AdjudicatorError(f"a double-{max_pips} set of {total} tiles cannot deal to {players} players")
    return DealPlan(variant=v, players=players, max_pips=max_pips, hand_size=total // players,
                    boneyard=total % players)


def judge_deal(variant: str | Variant, players: int, max_pips: int = 6, *,
               hand_sizes: Sequence[int] | None = None, boneyard: int | None = None,
               params: DominoesParams = DEFAULT_DOMINOES_PARAMS) -> Ruling:
    """DM Am-Deal / DM Br-Deal: hand sizes and boneyard by version, players and set.

    With no ``hand_sizes`` / ``boneyard`` observed, the ruling states the deal (``LEGAL``); with them, each is
    checked and a wrong one is ``ILLEGAL`` naming it. A British game beyond the configured player count on a
    double-six set is ``ILLEGAL`` (DM I-5).
    """
    v = parse_variant(variant)
    rule = f"DM {v.tag}-Deal"
    try:
        plan = deal_plan(v, players, max_pips, params)
    except AdjudicatorError as exc:
        if v is Variant.AMERICAN and isinstance(players, int) and not isinstance(players, bool) and players >= 2:
            return _ruling(rule, Decision.ILLEGAL, str(exc), params, evidence={"players_count": players})
        raise
    evidence = {"players_count": players, "hand_tiles_count": plan.hand_size, "dealt_count": plan.dealt,
                "boneyard_count": plan.boneyard, "set_tiles_count": set_size(max_pips)}
    interp: tuple[str, ...] = ()
    if v is Variant.BRITISH and max_pips == 6 and players > params.british_max_players_double_six:
        return _ruling(rule, Decision.ILLEGAL,
                       f"{players} players need a double-nine or double-twelve set; double-six serves up to "
                       f"{params.british_max_players_double_six}", params, evidence=evidence, interpretations=("DM I-5",))
    if v is Variant.BRITISH and max_pips != 6:
        interp = ("DM I-5",)
    problems = []
    if hand_sizes is not None:
        sizes = list(hand_sizes)
        if len(sizes) != players:
            problems.append(f"{len(sizes)} hands seen for {players} players")
        for i, n in enumerate(sizes):
            if n != plan.hand_size:
                problems.append(f"hand {i + 1} holds {n} tiles, not {plan.hand_size}")
        evidence["observed_dealt_count"] = sum(sizes)
    if boneyard is not None:
        evidence["observed_boneyard_count"] = boneyard
        if boneyard != plan.boneyard:
            problems.append(f"the boneyard holds {boneyard} tiles, not {plan.boneyard}")
    what = (f"{plan.hand_size} each, {plan.dealt} dealt, {plan.boneyard} unused "
            f"({players} players, double-{max_pips})")
    if problems:
        return _ruling(rule, Decision.ILLEGAL, "misdeal: " + "; ".join(problems) + f" — the deal is {what}", params,
                       evidence=evidence, interpretations=interp)
    return _ruling(rule, Decision.LEGAL, f"deal {what}", params, evidence=evidence, interpretations=interp)


# --- DM A1 lead ----------------------------------------------------------------------------------------------


def highest_double(hands: Mapping[str, Sequence]) -> tuple[str, Bone] | None:
    """The player holding the highest double and that double, or None when no hand holds a double."""
    best: tuple[str, Bone] | None = None
    for player, hand in hands.items():
        for b in _bones(hand):
            if b is not None and b.is_double and (best is None or b.a > best[1].a):
                best = (player, b)
    return best


def judge_lead(variant: str | Variant, hands: Mapping[str, Sequence], *, played: tuple[str, object] | None = None,
               drawn_lead=None, first_player: str | None = None,
               params: DominoesParams = DEFAULT_DOMINOES_PARAMS) -> Ruling:
    """DM A1: the holder of the highest double leads it.

    No double in any hand: the tile ``drawn_lead`` from the boneyard is laid with its higher end open and
    ``first_player`` (left of the dealer) plays first (DM I-1; British by DM I-3). ``played`` =
    ``(player, tile)`` is the lead actually made: ``LEGAL`` if it is the right one, else ``ILLEGAL``. An
    unreadable tile (None) in a hand leaves the lead ``UNDECIDED``.
    """
    v = parse_variant(variant)
    if not hands:
        raise AdjudicatorError("the lead needs the players' hands")
    unread = [p for p, h in hands.items() if any(b is None for b in _bones(h))]
    if unread:
        return _ruling("DM A1", Decision.UNDECIDED,
                       f"a tile in the hand of {', '.join(unread)} is unread: the lead cannot be settled", params,
                       colors=tuple(unread), confidence=0.0)
    play_clause = f"DM {v.tag}-Play"
    best = highest_double(hands)
    if best is None:
        interp = ("DM I-1",) if v is Variant.AMERICAN else ("DM I-3", "DM I-1")
        if drawn_lead is None:
            return _ruling("DM A1", Decision.UNDECIDED,
                           "no hand holds a double: draw a tile from the boneyard and lay it as the lead, higher end "
                           f"open ({play_clause})", params, interpretations=interp)
        d = Bone.parse(drawn_lead)
        who = f"; {first_player} (left of the dealer) plays first" if first_player else ""
        return _ruling("DM A1", Decision.LEGAL,
                       f"no hand holds a double: the drawn {d} leads with its {d.high} end open{who} ({play_clause})",
                       params, piece_ids=(str(d),), colors=(first_player,) if first_player else (),
                       evidence={"open_end_pips_count": d.high}, interpretations=interp)
    player, double = best
    evidence = {"lead_pips_count": double.a}
    if played is not None:
        p_player, p_tile = played[0], Bone.parse(played[1])
        if p_player == player and p_tile.key() == double.key():
            return _ruling("DM A1", Decision.LEGAL, f"{player} leads {double}, the highest double ({play_clause})",
                           params, piece_ids=(str(double),), colors=(player,), evidence=evidence)
        return _ruling("DM A1", Decision.ILLEGAL,
                       f"{p_player} led {p_tile}, but {player} holds {double}, the highest double, and must lead it "
                       f"({play_clause})", params, piece_ids=(str(p_tile), str(double)), colors=(player,),
                       evidence=evidence)
    return _ruling("DM A1", Decision.LEGAL, f"{player} leads {double}, the highest double ({play_clause})", params,
                   piece_ids=(str(double),), colors=(player,), evidence=evidence)


# --- DM P2 / A2 play -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class LineOfPlay:
    """The open ends of a layout: one value (American single arm) or two (British), DM P1."""

    variant: Variant
    ends: tuple[int, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "variant", parse_variant(self.variant))
        ends = tuple(int(e) for e in self.ends)
        if len(ends) != self.variant.open_end_count:
            raise AdjudicatorError(f"a {self.variant.value} layout has {self.variant.open_end_count} open end(s) "
                                   f"(DM P1), got {ends}")
        if any(not 0 <= e <= max(SET_MAX_PIPS) for e in ends):
            raise AdjudicatorError(f"open ends hold 0..12 pips, got {ends}")
        object.__setattr__(self, "ends", ends)

    @classmethod
    def from_lead(cls, variant: str | Variant, lead) -> LineOfPlay:
        """The line after the lead: British both halves open; American the higher half (DM I-1 for a non-double)."""
        v = parse_variant(variant)
        b = Bone.parse(lead)
        return cls(variant=v, ends=(b.high,) if v is Variant.AMERICAN else (b.a, b.b))

    def legal_ends(self, tile) -> tuple[int, ...]:
        """Indices of the open ends ``tile`` may be laid on (DM P2)."""
        b = Bone.parse(tile)
        return tuple(i for i, e in enumerate(self.ends) if b.matches(e))

    def play(self, tile, end: int) -> LineOfPlay:
        b = Bone.parse(tile)
        ends = list(self.ends)
        ends[end] = b.other_end(ends[end])
        return LineOfPlay(variant=self.variant, ends=tuple(ends))


def judge_play(line: LineOfPlay, tile, end: int | None = None,
               params: DominoesParams = DEFAULT_DOMINOES_PARAMS) -> Ruling:
    """DM P2: a tile is legal on an open end one of its halves equals; the other half becomes the open end.

    ``end`` is the index of the open end it is laid on (None: any end it fits, the first such).
    """
    b = Bone.parse(tile)
    if end is not None and not 0 <= end < len(line.ends):
        raise AdjudicatorError(f"the layout has open ends 0..{len(line.ends) - 1}, got end {end}")
    candidates = line.legal_ends(b) if end is None else ((end,) if b.matches(line.ends[end]) else ())
    ends_txt = " and ".join(str(e) for e in line.ends)
    if not candidates:
        where = f"the open end {line.ends[end]}" if end is not None else f"open end(s) {ends_txt}"
        return _ruling("DM P2", Decision.ILLEGAL, f"{b} matches neither half to {where}", params,
                       piece_ids=(str(b),), evidence={"open_end_pips_count": line.ends[end if end is not None else 0]})
    i = candidates[0]
    after = line.play(b, i)
    return _ruling("DM P2", Decision.LEGAL,
                   f"{b} is laid on the open end {line.ends[i]}; its {after.ends[i]} end is now open", params,
                   piece_ids=(str(b),),
                   evidence={"open_end_pips_count": line.ends[i], "new_open_end_pips_count": after.ends[i]})


def judge_double_option(tile, *, lead: bool = False, extra_already: bool = False,
                        params: DominoesParams = DEFAULT_DOMINOES_PARAMS) -> Ruling:
    """DM A2: a double played grants the option of one more legal tile (the lead double too, INTERP; a double
    played as that extra tile again, DM I-2, unless configured once per turn)."""
    b = Bone.parse(tile)
    interp = ("DM I-2",) if extra_already else ()
    if not b.is_double:
        return _ruling("DM A2", Decision.ILLEGAL, f"{b} is not a double: no further tile this turn", params,
                       piece_ids=(str(b),), evidence={"extra_tiles_count": 0})
    if lead and not params.lead_double_grants_extra:
        return _ruling("DM A2", Decision.ILLEGAL, f"the lead double {b} grants no extra tile (configured)", params,
                       piece_ids=(str(b),), evidence={"extra_tiles_count": 0})
    if extra_already and not params.chained_doubles:
        return _ruling("DM A2", Decision.ILLEGAL,
                       f"{b} was itself the extra tile: one extra per turn (DM I-2 configured once per turn)", params,
                       piece_ids=(str(b),), evidence={"extra_tiles_count": 0}, interpretations=("DM I-2",))
    return _ruling("DM A2", Decision.LEGAL, f"{b} is a double: the player may play one more legal tile", params,
                   piece_ids=(str(b),), evidence={"extra_tiles_count": 1}, interpretations=interp)


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnResult:
    rulings: tuple[Ruling, ...]
    line: LineOfPlay
    legal: bool


def judge_turn(line: LineOfPlay, plays: Sequence[tuple[object, int | None]], *, hand: Sequence | None = None,
               lead_turn: bool = False, params: DominoesParams = DEFAULT_DOMINOES_PARAMS) -> TurnResult:
    """DM A2: one player's turn: each tile ``(tile, end)`` checked by DM P2; a second (third ...) tile only after a
    double (DM Am-Play / Br-Play, DM I-2). An empty turn is a pass, legal only when ``hand`` (if given) holds no
    legal tile. Tiles played must come from ``hand`` when it is given."""
    rulings: list[Ruling] = []
    tag = f"DM {line.variant.tag}-Play"
    if not plays:
        if hand is None:
            r = _ruling("DM A2", Decision.LEGAL, f"pass ({tag}); the hand was not seen", params, confidence=0.5)
        else:
            bones = _bones(hand)
            if any(b is None for b in bones):
                r = _ruling("DM A2", Decision.UNDECIDED, "pass with an unread tile in hand: cannot check", params,
                            confidence=0.0)
            else:
                playable = [str(b) for b in bones if line.legal_ends(b)]
                if playable:
                    r = _ruling("DM A2", Decision.ILLEGAL,
                                f"passed holding {', '.join(playable)}, legal on {line.ends} ({tag}: play or pass "
                                "if none)", params, piece_ids=tuple(playable))
                else:
                    r = _ruling("DM A2", Decision.LEGAL, f"pass: no tile in hand matches {line.ends} ({tag})", params)
        return TurnResult(rulings=(r,), line=line, legal=r.decision is not Decision.ILLEGAL)
    remaining = list(_bones(hand)) if hand is not None else None
    legal = True
    may_continue = True
    extra_already = False
    prev: Bone | None = None
    for k, (tile, end) in enumerate(plays):
        b = Bone.parse(tile)
        if k > 0:
            opt = judge_double_option(prev, lead=lead_turn and k == 1, extra_already=extra_already, params=params) \
                if prev is not None else None
            if not may_continue or opt is None or opt.decision is not Decision.LEGAL:
                rulings.append(_ruling("DM A2", Decision.ILLEGAL,
                                       f"{b} is a further tile after {prev}, which is not a double that grants one "
                                       f"({tag})", params, piece_ids=(str(b),)))
                legal = False
                break
            extra_already = True
        if remaining is not None:
            keys = [x.key() if x is not None else None for x in remaining]
            if b.key() not in keys:
                rulings.append(_ruling("DM A2", Decision.ILLEGAL, f"{b} is not in the player's hand", params,
                                       piece_ids=(str(b),)))
                legal = False
                break
            remaining.pop(keys.index(b.key()))
        r = judge_play(line, b, end, params)
        rulings.append(r)
        if r.decision is not Decision.LEGAL:
            legal = False
            break
        line = line.play(b, line.legal_ends(b)[0] if end is None else end)
        if b.is_double:
            rulings.append(judge_double_option(b, lead=lead_turn and k == 0, extra_already=extra_already,
                                               params=params))
            may_continue = rulings[-1].decision is Decision.LEGAL
        else:
            may_continue = False
        prev = b
    return TurnResult(rulings=tuple(rulings), line=line, legal=legal)


# --- DM P2 on a photographed layout --------------------------------------------------------------------------


def judge_joins(joins: Iterable[Join], params: DominoesParams = DEFAULT_DOMINOES_PARAMS) -> tuple[Ruling, ...]:
    """DM P2 on a layout: every pair of touching halves must match. One ruling per bad or unreadable join,
    then a summary ruling (``LEGAL`` when every join matches)."""
    out: list[Ruling] = []
    joins = tuple(joins)
    bad = 0
    for j in joins:
        ids = (j.tile_id, j.other_id)
        ev = {"gap_mm": j.gap_mm}
        if j.matches is None:
            out.append(_ruling("DM P2", Decision.UNDECIDED,
                               f"{j.tile_id}.{j.half} touches {j.other_id}.{j.other_half} but a half is unread", params,
                               piece_ids=ids, evidence=ev, confidence=0.0))
        elif not j.matches:
            bad += 1
            out.append(_ruling("DM P2", Decision.ILLEGAL,
                               f"bad join: {j.tile_id} shows {j.pips} against {j.other_pips} on {j.other_id}", params,
                               piece_ids=ids, evidence={**ev, "pips_count": j.pips, "other_pips_count": j.other_pips}))
    unread = sum(1 for j in joins if j.matches is None)
    ev = {"joins_count": len(joins), "bad_joins_count": bad, "unread_joins_count": unread}
    if bad:
        out.append(_ruling("DM P2", Decision.ILLEGAL, f"{bad} of {len(joins)} joins do not match", params, evidence=ev))
    elif unread:
        out.append(_ruling("DM P2", Decision.UNDECIDED, f"{unread} of {len(joins)} joins have an unread half", params,
                           evidence=ev, confidence=0.0))
    else:
        out.append(_ruling("DM P2", Decision.LEGAL, f"all {len(joins)} joins match", params, evidence=ev))
    return tuple(out)


# --- DM A3 end of hand ---------------------------------------------------------------------------------------


def pip_count(hand: Sequence) -> int | None:
    """DM P5: the sum of both halves over the tiles in hand; None when a tile is unread."""
    bones = _bones(hand)
    if any(b is None for b in bones):
        return None
    return sum(b.total_pips for b in bones)


def judge_hand_end(variant: str | Variant, hands: Mapping[str, Sequence],
                   params: DominoesParams = DEFAULT_DOMINOES_PARAMS, unplaced: Sequence = ()) -> Ruling:
    """DM A3: a player with no tiles left has dominoed and wins; else (blocked) the lowest pip count wins, equal
    lowest share (DM I-4). American: the winners take (share) the pool. An unread tile that could change the
    result leaves it ``UNDECIDED`` naming the hand; so do ``unplaced`` tiles (seen, but in no player's hand: any
    player's) that could."""
    if len(unplaced):
        return _with_unplaced(variant, hands, params, unplaced)
    v = parse_variant(variant)
    if not hands:
        raise AdjudicatorError("settling a hand needs the players' remaining hands")
    win_clause = f"DM {v.tag}-Win"
    pool = " and take the pool" if v is Variant.AMERICAN else ""
    empty = [p for p, h in hands.items() if len(h) == 0]
    if len(empty) > 1:
        raise AdjudicatorError(f"only one player can domino, but {', '.join(empty)} all hold no tiles")
    if empty:
        return _ruling("DM A3", Decision.WINNER, f"{empty[0]} played the last tile: domino, wins{pool} ({win_clause})",
                       params, colors=(empty[0],))
    counts = {p: pip_count(h) for p, h in hands.items()}
    evidence = {f"{p}_pips_count": c for p, c in counts.items() if c is not None}
    unread = [p for p, c in counts.items() if c is None]
    if unread:
        # an unread tile adds at least 0 pips: it cannot matter if its lowest total still loses
        known_min = min((c for c in counts.values() if c is not None), default=None)
        low_bounds = {p: pip_count([t for t in hands[p] if t is not None]) for p in unread}
        if known_min is None or any(low_bounds[p] <= known_min for p in unread):
            return _ruling("DM A3", Decision.UNDECIDED,
                           f"blocked: a tile in the hand of {', '.join(unread)} is unread, and it decides the winner",
                           params, colors=tuple(unread), evidence=evidence, confidence=0.0)
        counts = {p: c for p, c in counts.items() if c is not None}
    low = min(counts.values())
    winners = tuple(p for p, c in counts.items() if c == low)
    listing = ", ".join(f"{p} {c}" for p, c in counts.items())
    if len(winners) == 1:
        return _ruling("DM A3", Decision.WINNER,
                       f"blocked: {winners[0]} has the fewest pips ({low}) and wins{pool} ({win_clause}; {listing})",
                       params, colors=winners, evidence={**evidence, "winning_pips_count": low})
    return _ruling("DM A3", Decision.WINNER,
                   f"blocked: {' and '.join(winners)} tie on {low} pips and share the "
                   f"{'pool' if v is Variant.AMERICAN else 'win'} ({win_clause}; {listing})",
                   params, colors=winners, evidence={**evidence, "winning_pips_count": low},
                   interpretations=("DM I-4",))


def _with_unplaced(variant: str | Variant, hands: Mapping[str, Sequence], params: DominoesParams,
                   unplaced: Sequence) -> Ruling:
    """The result without the unplaced tiles, kept only if giving them all to a winner cannot change it."""
    result = judge_hand_end(variant, hands, params)
    if result.decision is not Decision.WINNER:
        return result
    extra = pip_count(unplaced)
    winners = set(result.colors)
    others = [pip_count([t for t in h if t is not None]) for p, h in hands.items() if p not in winners]
    winner_pips = max(pip_count(hands[p]) or 0 for p in winners)
    if extra is None:
        why = "one of them is unread, and it could decide the winner"
    elif any(len(hands[p]) == 0 for p in winners):
        why = "one may belong to the player who seems to have dominoed"
    elif len(winners) > 1 and extra > 0:
        why = f"worth {extra} pips, they could break the tie"
    elif others and winner_pips + extra >= min(others):
        why = f"worth {extra} pips, they could be the winner's and change the result"
    else:
        return result
    return _ruling("DM A3", Decision.UNDECIDED, f"{len(unplaced)} tile(s) lie in no player's hand: {why}",
                   params, colors=tuple(sorted(winners)), evidence=dict(result.evidence), confidence=0.0)


def judge_blocked(variant: str | Variant, line: LineOfPlay, hands: Mapping[str, Sequence],
                  params: DominoesParams = DEFAULT_DOMINOES_PARAMS) -> Ruling:
    """DM P4: the hand is blocked when no player holds a tile legal on any open end; then DM A3 settles it."""
    for p, h in hands.items():
        for b in _bones(h):
            if b is None:
                return _ruling("DM P4", Decision.UNDECIDED, f"{p} holds an unread tile: cannot tell if blocked",
                               params, colors=(p,), confidence=0.0)
            if line.legal_ends(b):
                return _ruling("DM P4", Decision.GAME_CONTINUES, f"not blocked: {p} can play {b} on {line.ends}",
                               params, colors=(p,), piece_ids=(str(b),))
    return judge_hand_end(variant, hands, params)
