"""A live tiddlywinks game as a pure state machine over rest states in table mm (issue 6).

``apply_rest(state, after_scene, elapsed_s=...)`` takes each rest state the camera sees and decides whether it
is a shot (some wink moved), a placement (only winks the referee asked to be put back moved, and they are now
at their spots: TW 7(a) replacements, TW 5(b) disturbed winks, TW 8 separations) or nothing. A shot goes to
``apply_shot``, which reuses the still-photo judges and the turn functions of ``tiddlywinks_turns``:

- who plays: the turn due (TW 5(a) clockwise from the squidge-off winner), confirmed by the moved winks; a
  shot whose moved winks hold no wink of the colour due is flagged (TW 12: wrong colour or out of turn, or a
  pass the camera did not see), never guessed; the umpire corrects with ``apply_correction``;
- shots left, bonus shots (TW 5(c)) and forfeits (TW 7(a), TW I-5) via :meth:`TurnState.after_shot`; a colour
  with no playable wink (all potted or squopped) has its turn passed at once (the turn still counts);
- free turns (TW 11, TW A9): triggered, counted turn by turn, freed, or failed (TW 11(d): refer, recount);
- pot-outs (TW 8): order with same-shot groups, no time limit afterwards, separations, end when three colours
  are out, score by TW 10(a);
- the clock (TW 9, TW I-8): the first shot starts it; at expiry the remaining turns come from
  :func:`turns_after_expiry` and the game ends after the last of them, scored by TW 10(b);
- the end when every unpotted wink is squopped (TW 6(b)), with the final score.

Everything is a frozen value with a JSON round-trip, so a game log can be stored and replayed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from shapely.geometry import LineString, Point

from adjudicator.tiddlywinks import (
    GAME,
    judge_free_turns,
    judge_game_ceases,
    judge_out_of_bounds,
    judge_pot_out_separation,
    judge_score,
    judge_shot,
    judge_time_expiry,
    playable_winks,
)
from adjudicator.tiddlywinks_turns import TIME_LIMIT_S, TurnState, turns_after_expiry
from adjudicator.types import DEFAULT_PARAMS, AdjudicatorError, Decision, Ruling, TiddlywinksParams
from geometry import tiddlywinks as tw
from geometry.constants import WINK_THICKNESS_MM
from geometry.matching import DEFAULT_MATCH_PARAMS, MatchParams, ShotDiff, diff_rest_states, with_winks
from geometry.rest_change import RestChange
from geometry.records import scene_from_document, scene_to_document
from geometry.types import COLOR_ORDER, Color, GameType, TiddlywinksScene, Wink

# A wink put back counts as at its spot within this plan distance (hand placement, not measurement).
PLACEMENT_TOLERANCE_MM = 15.0
# Game-end reasons as written in the log.
END_CEASES = "game_ceases"
END_TIME = "time"
END_POT_OUT = "pot_out"
PARTNERSHIPS: tuple[str, ...] = ("blue-red", "green-yellow")


@dataclass(frozen=True, slots=True, kw_only=True)
class Placement:
    """A wink the referee asked to be put at ``target_mm`` (``rule`` says why); not a shot (TW 7, 5(b), 8)."""

    wink_id: str
    target_mm: tuple[float, float]
    rule: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.wink_id, "target_mm": [round(v, 3) for v in self.target_mm], "rule": self.rule}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Placement:
        return cls(wink_id=d["id"], target_mm=(float(d["target_mm"][0]), float(d["target_mm"][1])), rule=d["rule"])


@dataclass(frozen=True, slots=True, kw_only=True)
class GameState:
    """Everything needed to referee the next rest state; frozen, JSON round-trip with ``to_dict``/``from_dict``.

    ``turns_left`` is ``None`` until the time limit expires, then the turns still to play after the current
    one (TW 9(b)). ``free_turns`` lists the free turns still to come (TW 11(a)); ``squopping_side`` is set while
    free turns run; ``in_free_turn`` says the current turn is one of them. ``keep_free_side`` must keep an
    opponent wink free after freeing until the freed side has played (TW 11).
    """

    scene: TiddlywinksScene
    squidge_off_winner: Color
    game_type: GameType = GameType.PAIRS
    turn: TurnState | None = None
    turn_number: int = 1
    shot_number: int = 0
    time_limit_s: float | None = None
    clock_start_s: float | None = None
    last_shot_color: Color | None = None
    last_shot_turn_number: int = 0
    expired_in: Color | None = None
    turns_left: tuple[Color, ...] | None = None
    pot_out_order: tuple[tuple[Color, ...], ...] = ()
    free_turns: tuple[Color, ...] = ()
    free_turns_total: int = 0
    squopping_side: str | None = None
    in_free_turn: bool = False
    keep_free_side: str | None = None
    pending: tuple[Placement, ...] = ()
    ended: bool = False
    end_reason: str | None = None
    final_score: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "squidge_off_winner", Color(self.squidge_off_winner))
        object.__setattr__(self, "game_type", GameType(self.game_type))
        if self.turn is None:
            object.__setattr__(self, "turn", TurnState(color=self.squidge_off_winner))
        if self.time_limit_s is not None and not (math.isfinite(self.time_limit_s) and self.time_limit_s > 0):
            raise AdjudicatorError(f"time_limit_s must be positive, got {self.time_limit_s!r}")
        for side in (self.squopping_side, self.keep_free_side):
            if side is not None and side not in PARTNERSHIPS:
                raise AdjudicatorError(f"side must be one of {PARTNERSHIPS}, got {side!r}")
        for name in ("last_shot_color", "expired_in"):
            v = getattr(self, name)
            if v is not None:
                object.__setattr__(self, name, Color(v))
        if self.turns_left is not None:
            object.__setattr__(self, "turns_left", tuple(Color(c) for c in self.turns_left))
        object.__setattr__(self, "free_turns", tuple(Color(c) for c in self.free_turns))
        object.__setattr__(self, "pot_out_order", tuple(tuple(Color(c) for c in g) for g in self.pot_out_order))
        object.__setattr__(self, "pending", tuple(self.pending))

    @property
    def due_color(self) -> Color:
        assert self.turn is not None
        return self.turn.color

    def to_dict(self) -> dict[str, Any]:
        t = self.turn
        assert t is not None
        return {
            "scene": scene_to_document(self.scene),
            "squidge_off_winner": self.squidge_off_winner.value,
            "game_type": self.game_type.value,
            "turn": {"color": t.color.value, "shots_left": t.shots_left, "shots_played": t.shots_played,
                     "forfeits": [c.value for c in t.forfeits]},
            "turn_number": self.turn_number,
            "shot_number": self.shot_number,
            "time_limit_s": self.time_limit_s,
            "clock_start_s": self.clock_start_s,
            "last_shot_color": None if self.last_shot_color is None else self.last_shot_color.value,
            "last_shot_turn_number": self.last_shot_turn_number,
            "expired_in": None if self.expired_in is None else self.expired_in.value,
            "turns_left": None if self.turns_left is None else [c.value for c in self.turns_left],
            "pot_out_order": [[c.value for c in g] for g in self.pot_out_order],
            "free_turns": [c.value for c in self.free_turns],
            "free_turns_total": self.free_turns_total,
            "squopping_side": self.squopping_side,
            "in_free_turn": self.in_free_turn,
            "keep_free_side": self.keep_free_side,
            "pending": [p.to_dict() for p in self.pending],
            "ended": self.ended,
            "end_reason": self.end_reason,
            "final_score": self.final_score,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GameState:
        t = d["turn"]
        return cls(
            scene=scene_from_document(d["scene"]),
            squidge_off_winner=d["squidge_off_winner"],
            game_type=d.get("game_type", "pairs"),
            turn=TurnState(color=t["color"], shots_left=int(t["shots_left"]), shots_played=int(t["shots_played"]),
                           forfeits=tuple(t.get("forfeits", ()))),
            turn_number=int(d["turn_number"]),
            shot_number=int(d["shot_number"]),
            time_limit_s=d.get("time_limit_s"),
            clock_start_s=d.get("clock_start_s"),
            last_shot_color=d.get("last_shot_color"),
            last_shot_turn_number=int(d.get("last_shot_turn_number", 0)),
            expired_in=d.get("expired_in"),
            turns_left=None if d.get("turns_left") is None else tuple(d["turns_left"]),
            pot_out_order=tuple(tuple(g) for g in d.get("pot_out_order", ())),
            free_turns=tuple(d.get("free_turns", ())),
            free_turns_total=int(d.get("free_turns_total", 0)),
            squopping_side=d.get("squopping_side"),
            in_free_turn=bool(d.get("in_free_turn", False)),
            keep_free_side=d.get("keep_free_side"),
            pending=tuple(Placement.from_dict(p) for p in d.get("pending", ())),
            ended=bool(d.get("ended", False)),
            end_reason=d.get("end_reason"),
            final_score=d.get("final_score"),
        )


def new_game(scene: TiddlywinksScene, squidge_off_winner: Color, *, game_type: GameType | None = None,
             time_limit_s: float | None | str = "default") -> GameState:
    """The state before the first shot after the squidge-off: ``squidge_off_winner`` plays first (TW 5(a)).

    ``time_limit_s`` defaults to TW 9(a) (25 min pairs, 20 min singles); ``None`` plays without a clock.
    """
    gt = GameType(game_type if game_type is not None else scene.game_type)
    limit = TIME_LIMIT_S[gt] if time_limit_s == "default" else time_limit_s
    state = GameState(scene=replace(scene, game_type=gt, squidge_off_winner=Color(squidge_off_winner)),
                      squidge_off_winner=squidge_off_winner, game_type=gt,
                      time_limit_s=None if limit is None else float(limit))
    rulings: list[Ruling] = []
    return _settle_turn(state, rulings, DEFAULT_PARAMS)


@dataclass(frozen=True, slots=True, kw_only=True)
class ShotReport:
    """One rest event as the log and ``tableref track`` print it: ``kind`` is shot / placement / no_change /
    correction; ids are the game's wink ids."""

    kind: str
    shot_number: int | None = None
    turn_number: int | None = None
    color: Color | None = None
    due_color: Color | None = None
    wink: str | None = None
    diff: ShotDiff | None = None
    shots_left: int | None = None
    elapsed_s: float | None = None
    placed: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.shot_number is not None:
            out.update({"shot": self.shot_number, "turn": self.turn_number,
                        "color": None if self.color is None else self.color.value,
                        "due_color": None if self.due_color is None else self.due_color.value,
                        "wink": self.wink, "shots_left": self.shots_left})
        if self.elapsed_s is not None:
            out["elapsed_s"] = round(self.elapsed_s, 3)
        if self.diff is not None:
            out.update(self.diff.to_dict())
        if self.placed:
            out["placed"] = list(self.placed)
        if self.notes:
            out["notes"] = list(self.notes)
        return out


# --- helpers -----------------------------------------------------------------------------------------------


def _ruling(rule: str, decision: Decision, explanation: str, params: TiddlywinksParams, **kw: Any) -> Ruling:
    return Ruling(game=GAME, rule=rule, decision=decision, explanation=explanation, frame_idx=params.frame_idx,
                  **kw)


def _side_all_squopped(scene: TiddlywinksScene, side: str) -> bool:
    rel = tw.squop_relations(scene)
    lowers = tw.squopped_ids(rel)
    ws = [w for w in scene.winks if w.color.partnership == side and not w.potted]
    return bool(ws) and all(w.wink_id in lowers for w in ws)


def _other_side(side: str) -> str:
    return PARTNERSHIPS[1] if side == PARTNERSHIPS[0] else PARTNERSHIPS[0]


def _scene_for_state(state: GameState, scene: TiddlywinksScene) -> TiddlywinksScene:
    return replace(scene, game_type=state.game_type, squidge_off_winner=state.squidge_off_winner,
                   potted_out_order=state.pot_out_order, last_shot_color=state.last_shot_color)


def _final(state: GameState, reason: str, rulings: list[Ruling], params: TiddlywinksParams) -> GameState:
    scene = _scene_for_state(state, state.scene)
    score = judge_score(scene, params, final=True)
    rulings.append(score)
    return replace(state, ended=True, end_reason=reason, final_score=score.to_dict(), turns_left=state.turns_left)


def _settle_turn(state: GameState, rulings: list[Ruling], params: TiddlywinksParams) -> GameState:
    """Move on while the turn due has ended, cannot play (no playable wink) or is forfeited; count turns for
    the time-limit rounds (TW 9(b)) and free turns (TW 11(a)); end the game when the rounds run out."""
    guard = 0
    while not state.ended:
        turn = state.turn
        assert turn is not None
        can_play = bool(playable_winks(state.scene, turn.color))
        if not turn.ended and can_play:
            return state
        if not turn.ended:
            turn = turn.after_pass()
            rulings.append(_ruling("TW 5(a)", Decision.GAME_CONTINUES,
                                   f"{turn.color.value.capitalize()} has no wink it may play: its turn passes.",
                                   params, colors=(turn.color,)))
        # The turn that just ended: was it the last free turn, with the opponents still all squopped?
        if state.in_free_turn and not state.free_turns and state.squopping_side is not None:
            squopped_side = _other_side(state.squopping_side)
            if _side_all_squopped(state.scene, squopped_side):
                rulings.append(_ruling(
                    "TW 11(d)", Decision.REFER_TO_UMPIRE,
                    f"The free turns ended with every {squopped_side} wink still squopped: the next player "
                    "nominates an unsquopped wink to play first; free turns are recounted.", params,
                    colors=(turn.color,)))
                state = replace(state, squopping_side=None, free_turns=(), in_free_turn=False)
                state = _trigger_free_turns(state, rulings, params, last_color=turn.color)
            else:
                state = replace(state, squopping_side=None, in_free_turn=False)
        if state.turns_left is not None:
            if not state.turns_left:
                rulings.append(_ruling("TW 9(b)", Decision.GAME_CEASES,
                                       "The last of the five rounds after time is over: the game ends and is "
                                       "scored by tiddlies.", params))
                return _final(replace(state, turn=turn), END_TIME, rulings, params)
            state = replace(state, turns_left=state.turns_left[1:])
        nxt = turn.next_turn()
        in_free = False
        free_left = state.free_turns
        if state.squopping_side is not None and free_left and nxt.color is free_left[0]:
            in_free, free_left = True, free_left[1:]
            k = state.free_turns_total - len(free_left)
            rulings.append(_ruling("TW 11(a)", Decision.FREE_TURNS,
                                   f"Free turn {k} of {state.free_turns_total}: {nxt.color.value}.", params,
                                   colors=(nxt.color,), evidence={"free_turn_count": k}))
        if nxt.ended:
            rulings.append(_ruling("TW 7(a)", Decision.FORFEIT,
                                   f"{nxt.color.value.capitalize()} forfeits this shot (a wink of its colour left "
                                   "the field on its own shot): the turn passes.", params,
                                   colors=(nxt.color,), interpretations=("TW I-5",)))
        state = replace(state, turn=nxt, turn_number=state.turn_number + 1, free_turns=free_left,
                        in_free_turn=in_free)
        guard += 1
        if guard > 64:
            # No colour can play at all: that is TW 6(b), which the caller checks; stop here.
            return state
    return state


def _trigger_free_turns(state: GameState, rulings: list[Ruling], params: TiddlywinksParams,
                        last_color: Color) -> GameState:
    scene = replace(_scene_for_state(state, state.scene), last_shot_color=last_color)
    r = judge_free_turns(scene, params)
    if r.decision is not Decision.FREE_TURNS:
        return state
    rulings.append(r)
    squopping = Color(r.colors[0]).partnership
    return replace(state, squopping_side=squopping, free_turns=tuple(Color(c) for c in r.colors),
                   free_turns_total=len(r.colors), keep_free_side=None)


def _crossings(before: TiddlywinksScene, after: TiddlywinksScene, ids: tuple[str, ...]
               ) -> dict[str, tuple[float, float]]:
    """Where each out wink's straight path from rest to rest crossed the field boundary (TW A3 X)."""
    boundary = tw.field_polygon().exterior
    out: dict[str, tuple[float, float]] = {}
    bw = {w.wink_id: w for w in before.winks}
    aw = {w.wink_id: w for w in after.winks}
    for wid in ids:
        if wid not in bw or wid not in aw:
            continue
        p0, p1 = bw[wid].center_mm, aw[wid].center_mm
        if p0 == p1:
            continue
        hit = LineString([p0, p1]).intersection(boundary)
        if hit.is_empty:
            continue
        pts = [hit] if isinstance(hit, Point) else list(getattr(hit, "geoms", []))
        pts = [p for p in pts if isinstance(p, Point)]
        if pts:
            best = min(pts, key=lambda p: math.dist((p.x, p.y), p0))
            out[wid] = (best.x, best.y)
    return out


#: Share of the pot's opening whose image must change for something to have gone into the cup: a small wink
#: fills about a fifth of the opening's image, one landing half-hidden by the rim still a few per cent.
POT_CHANGED_MIN_RATIO = 0.03
#: A change off the mat this close to a wink detected there is that wink's landing (blob centroid vs centre).
OFF_MAT_LANDING_MATCH_MM = 40.0


def _vanish_evidence(change: RestChange | None) -> dict[str, Any]:
    if change is None:
        return {}
    ev: dict[str, Any] = {"off_mat_changes_count": len(change.off_mat_blobs_mm)}
    if change.pot_changed_ratio is not None:
        ev["pot_changed_ratio"] = round(change.pot_changed_ratio, 3)
    return ev


def vanished_destinations(before: TiddlywinksScene, after: TiddlywinksScene, missing: tuple[str, ...],
                          hidden: Color | None, change: RestChange | None, may_hide: tuple[Color, ...] = (),
                          ) -> tuple[tuple[str, ...], tuple[str, ...], dict[str, str]]:
    """Where each vanished wink went: (into the pot, off the mat, the evidence in words by id).

    A wink not seen after the shot is in the cup (hidden by the rim, or of the colour a pot of a wink's colour
    hides) or off the mat out of the detector's search. The pixels between the two rest frames decide when
    they can: the cup's opening changed (something landed in it), or the table outside the mat changed where
    no wink is seen (a wink landed there). Both or neither: the nearer place to where the wink was last seen,
    and without pixels the colour the pot hides or a colour whose missing wink the cup can hide from this camera
    (``may_hide``: behind its wall or under the winks in it). The umpire confirms either way (the rulings refer)."""
    if not missing:
        return (), (), {}
    bw = {w.wink_id: w for w in before.winks}
    pot_changed = None
    blobs: list[tuple[float, float]] = []
    if change is not None:
        if change.pot_changed_ratio is not None:
            pot_changed = change.pot_changed_ratio >= POT_CHANGED_MIN_RATIO
        seen_off = [w.center_mm for w in after.winks if w.off_mat or tw.is_out_of_bounds(w)]
        # a landing a detected wink already accounts for is no trace of a vanished one
        blobs = [b for b in change.off_mat_blobs_mm
                 if all(math.dist(b, c) > OFF_MAT_LANDING_MATCH_MM for c in seen_off)]
    into: list[str] = []
    off: list[str] = []
    why: dict[str, str] = {}
    pot_c = after.pot_center_mm
    def cup_hides(color: Color) -> bool:
        return color is hidden or color in may_hide

    for m in sorted(missing):
        w = bw[m]
        if pot_changed is None and not blobs:
            in_pot = cup_hides(w.color)
            why[m] = ("no wink of its colour can hide in the pot" if not in_pot else
                      f"the pot hides {w.color.value} winks" if w.color is hidden else
                      f"the cup can hide a {w.color.value} wink from the camera")
        elif pot_changed and not blobs:
            in_pot, why[m] = True, "the pot's opening changed and the table off the mat did not"
        elif blobs and not pot_changed:
            in_pot, why[m] = False, "the table off the mat changed and the pot's opening did not"
        else:
            d_pot = math.dist(w.center_mm, pot_c)
            d_off = min(math.dist(w.center_mm, b) for b in blobs) if blobs else math.inf
            in_pot = d_pot < d_off if pot_changed else cup_hides(w.color)
            why[m] = ("both the pot's opening and the table off the mat changed; the nearer to where it was"
                      if pot_changed else "neither the pot's opening nor the table off the mat changed")
        (into if in_pot else off).append(m)
        if not in_pot and blobs:
            blobs.remove(min(blobs, key=lambda b: math.dist(w.center_mm, b)))
    return tuple(into), tuple(off), why


# --- the shot ----------------------------------------------------------------------------------------------


def apply_shot(state: GameState, before_scene: TiddlywinksScene, after_scene: TiddlywinksScene,
               played_color: Color | None = None, elapsed_s: float | None = None, *,
               played_id: str | None = None, params: TiddlywinksParams = DEFAULT_PARAMS,
               match_params: MatchParams = DEFAULT_MATCH_PARAMS,
               diff: ShotDiff | None = None, change: RestChange | None = None,
               ) -> tuple[GameState, ShotReport, tuple[Ruling, ...]]:
    """One shot from rest to rest: the new state, what happened, and the rulings (in rule order).

    ``played_color`` defaults to the colour due; ``elapsed_s`` is game-clock time of the shot (seconds on any
    fixed origin; the first shot starts the TW 9 clock). ``change`` is the pixels' record of where the picture
    changed (see :func:`diff_rest_states` and :func:`vanished_destinations`).
    """
    if state.ended:
        raise AdjudicatorError(f"the game has ended ({state.end_reason}); no shot can be applied")
    turn = state.turn
    assert turn is not None
    due = turn.color
    color = Color(played_color) if played_color is not None else due
    rulings: list[Ruling] = []
    if diff is None:
        diff = diff_rest_states(before_scene, after_scene, played_color=color, played_id=played_id,
                                params=match_params, change=change)
    after = _scene_for_state(state, diff.after)
    bw = {w.wink_id: w for w in before_scene.winks}
    # Missing winks: not seen anywhere after the shot; where they went is weighed on the evidence.
    into_pot, off, why = vanished_destinations(before_scene, after, diff.missing, after_scene.pot_hides_color,
                                               change, after_scene.pot_may_hide)
    if into_pot:
        after = with_winks(after, list(after.winks) + [replace(bw[m], potted=True, center_mm=after.pot_center_mm,
                                                               above=()) for m in into_pot])
        rulings.append(_ruling("TW 5(c)", Decision.REFER_TO_UMPIRE,
                               f"{', '.join(into_pot)} not seen after the shot; {why[into_pot[0]]}: taken as "
                               "potted; the umpire corrects if it is elsewhere.", params, piece_ids=into_pot,
                               evidence=_vanish_evidence(change)))
    if off:
        after = with_winks(after, list(after.winks) + [replace(bw[m], off_mat=True) for m in off])
        rulings.append(_ruling("TW 7(a)", Decision.REFER_TO_UMPIRE,
                               f"{', '.join(off)} not seen after the shot; {why[off[0]]}: taken as off the mat; "
                               "the umpire corrects if it is in the pot or elsewhere.", params, piece_ids=off,
                               evidence=_vanish_evidence(change)))
    out_ids = tuple(sorted(set(diff.out) | set(off)))
    moved_colors = {bw[w].color for w in diff.moved if w in bw}
    notes: list[str] = []
    # TW 12: the moved winks must include one of the colour due (the played wink); else refer, don't guess.
    if played_color is None and diff.moved and due not in moved_colors:
        others = sorted(c.value for c in moved_colors)
        rulings.append(_ruling("TW 12", Decision.REFER_TO_UMPIRE,
                               f"{due.value.capitalize()} was due but only {', '.join(others)} wink(s) moved: a "
                               "wrong colour or out-of-turn shot, or a pass not seen. Counted as "
                               f"{due.value}'s shot until the umpire corrects.", params,
                               colors=(due, *sorted(moved_colors, key=lambda c: c.value))))
        notes.append("colour_mismatch")
    # Clock (TW 9): the first shot starts it; expiry belongs to the turn in progress (TW I-8).
    clock_start = state.clock_start_s
    if clock_start is None and elapsed_s is not None:
        clock_start = elapsed_s
    state = replace(state, clock_start_s=clock_start)
    if (elapsed_s is not None and state.time_limit_s is not None and state.turns_left is None
            and not state.pot_out_order and elapsed_s - clock_start >= state.time_limit_s):
        if turn.shots_played == 0 and state.last_shot_color is not None:
            expiry_color = state.last_shot_color
            skipped = state.turn_number - state.last_shot_turn_number
        else:
            expiry_color, skipped = turn.color, 0
        left = turns_after_expiry(state.squidge_off_winner, expiry_color)
        rulings.append(judge_time_expiry(replace(after, potted_out_order=()), expiry_color, params))
        state = replace(state, expired_in=expiry_color, turns_left=left[skipped:])
    # Turn accounting (TW 5(c), 7(a)).
    shot_potted = tuple(sorted({*diff.potted, *into_pot}))
    potted_colors = [bw[w].color for w in shot_potted]
    out_colors = [bw[w].color for w in out_ids if w in bw]
    new_turn, shot_rulings = judge_shot(turn if turn.color is color else replace(turn, color=color),
                                        potted=potted_colors, left_field=out_colors, params=params)
    if color is not due:
        new_turn = replace(new_turn, color=due)
    rulings += shot_rulings
    # Out of the field: where each goes back (TW 7(a)); the forfeit came from judge_shot.
    pending: list[Placement] = []
    if out_ids:
        crossings = _crossings(before_scene, after, out_ids)
        oob = judge_out_of_bounds(replace(after, last_shot_color=None), params, crossings_mm=crossings)
        for r in oob:
            if set(r.piece_ids) & set(out_ids):
                rulings.append(r)
                if r.decision is Decision.REPLACE_AT and r.target_mm is not None:
                    pending.append(Placement(wink_id=r.piece_ids[0], target_mm=r.target_mm, rule="TW 7(a)"))
    # Disturbed winks go back where they were (TW 5(b)).
    for wid in diff.disturbed:
        b = bw[wid]
        rulings.append(_ruling("TW 5(b)", Decision.REPLACE_AT,
                               f"{wid} moved though the played pile and its path did not reach it: put it back at "
                               f"({b.center_mm[0]:.1f}, {b.center_mm[1]:.1f}) mm unless the opponents accept the "
                               "shot.", params, piece_ids=(wid,), colors=(b.color,), target_mm=b.center_mm))
        pending.append(Placement(wink_id=wid, target_mm=b.center_mm, rule="TW 5(b)"))
    shot_number = state.shot_number + 1
    report_turn = state.turn_number
    state = replace(state, scene=after, turn=new_turn, shot_number=shot_number, last_shot_color=color,
                    last_shot_turn_number=state.turn_number, pending=tuple(pending))
    # Pot-outs (TW 8).
    placed = {c for g in state.pot_out_order for c in g}
    newly = tuple(c for c in COLOR_ORDER if c not in placed and tw.is_potted_out(after, c))
    if newly:
        order = (*state.pot_out_order, newly)
        state = replace(state, pot_out_order=order, turns_left=None, expired_in=None,
                        scene=replace(state.scene, potted_out_order=order))
        rulings.append(_ruling("TW 8", Decision.GAME_CONTINUES,
                               f"{', '.join(c.value for c in newly)} potted out (place {len(placed) + 1}); no "
                               "time limit from now on.", params, colors=newly))
        seps = judge_pot_out_separation(state.scene, params)
        rulings += seps
        pending += [Placement(wink_id=r.piece_ids[0], target_mm=r.target_mm, rule="TW 8") for r in seps
                    if r.decision is Decision.MOVE and r.target_mm is not None and r.piece_ids]
        state = replace(state, pending=tuple(pending))
        if len(placed) + len(newly) >= 3:
            report = ShotReport(kind="shot", shot_number=shot_number, turn_number=report_turn, color=color,
                                due_color=due, wink=diff.played_id, diff=replace(diff, after=state.scene, out=out_ids, potted=shot_potted),
                                shots_left=new_turn.shots_left, elapsed_s=elapsed_s, notes=tuple(notes))
            state = _final(state, END_POT_OUT, rulings, params)
            return state, report, tuple(rulings)
    elif state.pot_out_order:
        rulings += judge_pot_out_separation(state.scene, params)
    # Free turns (TW 11).
    state = _free_turn_progress(state, color, rulings, params)
    # The end (TW 6(b)).
    ceases = judge_game_ceases(state.scene, params)
    if ceases.decision is Decision.GAME_CEASES:
        rulings.append(ceases)
        report = ShotReport(kind="shot", shot_number=shot_number, turn_number=report_turn, color=color,
                            due_color=due, wink=diff.played_id, diff=replace(diff, after=state.scene, out=out_ids, potted=shot_potted),
                            shots_left=new_turn.shots_left, elapsed_s=elapsed_s, notes=tuple(notes))
        return _final(state, END_CEASES, rulings, params), report, tuple(rulings)
    state = _settle_turn(state, rulings, params)
    report = ShotReport(kind="shot", shot_number=shot_number, turn_number=report_turn, color=color,
                        due_color=due, wink=diff.played_id, diff=replace(diff, after=state.scene, out=out_ids, potted=shot_potted),
                        shots_left=new_turn.shots_left, elapsed_s=elapsed_s, notes=tuple(notes))
    return state, report, tuple(rulings)


def _free_turn_progress(state: GameState, color: Color, rulings: list[Ruling],
                        params: TiddlywinksParams) -> GameState:
    scene = state.scene
    if state.squopping_side is not None:
        squopped = _other_side(state.squopping_side)
        freed = (not _side_all_squopped(scene, squopped)) or bool(state.pot_out_order and any(
            tw.is_potted_out(scene, c) for c in COLOR_ORDER))
        if freed:
            rulings.append(_ruling("TW 11", Decision.NO_FREE_TURNS,
                                   f"A {squopped} wink is free again: the free turns are over; {state.squopping_side}"
                                   f" must keep a {squopped} wink free until {squopped} has played.", params))
            return replace(state, squopping_side=None, free_turns=(), in_free_turn=False,
                           keep_free_side=state.squopping_side)
        return state
    if state.keep_free_side is not None:
        squopped = _other_side(state.keep_free_side)
        if color.partnership == squopped:
            state = replace(state, keep_free_side=None)
        elif _side_all_squopped(scene, squopped):
            rulings.append(_ruling("TW 11(d)", Decision.REFER_TO_UMPIRE,
                                   f"{color.value.capitalize()} left no {squopped} wink free before {squopped} "
                                   "could play: the turn ends; the next player nominates a wink.", params,
                                   colors=(color,)))
            state = replace(state, keep_free_side=None, turn=replace(state.turn, shots_left=0))
            return _trigger_free_turns(state, rulings, params, last_color=color)
        return state
    return _trigger_free_turns(state, rulings, params, last_color=color)


# --- rest states, placements, corrections ------------------------------------------------------------------


def _with_positions(scene: TiddlywinksScene, moves: dict[str, tuple[float, float]]) -> TiddlywinksScene:
    winks = tuple(replace(w, center_mm=moves[w.wink_id], off_mat=False, tilt_deg=0.0, above=None,
                          z_mm=WINK_THICKNESS_MM / 2)
                  if w.wink_id in moves else w for w in scene.winks)
    return replace(scene, winks=winks)


def apply_rest(state: GameState, after_scene: TiddlywinksScene, *, elapsed_s: float | None = None,
               played_color: Color | None = None, params: TiddlywinksParams = DEFAULT_PARAMS,
               match_params: MatchParams = DEFAULT_MATCH_PARAMS, change: RestChange | None = None,
               ) -> tuple[GameState, ShotReport, tuple[Ruling, ...]]:
    """A new rest state from the camera: a placement, nothing, or a shot (then :func:`apply_shot`).

    Winks the referee asked to move (``state.pending``) that now stand within ``PLACEMENT_TOLERANCE_MM`` of
    their spots count as put back, not as moved. ``change`` is where the picture changed since the last rest
    (pixel evidence; ``None`` without frames).
    """
    first = diff_rest_states(state.scene, after_scene, played_color=state.due_color, params=match_params,
                             change=change)
    aw = {w.wink_id: w for w in first.after.winks}
    placed = {p.wink_id: p.target_mm for p in state.pending
              if p.wink_id in aw and math.dist(aw[p.wink_id].center_mm, p.target_mm) <= PLACEMENT_TOLERANCE_MM}
    before = _with_positions(state.scene, placed) if placed else state.scene
    still_pending = tuple(p for p in state.pending if p.wink_id not in placed)
    diff = first if not placed else diff_rest_states(before, after_scene, played_color=state.due_color,
                                                     params=match_params, change=change)
    if not diff.moved:
        kind = "placement" if placed else "no_change"
        new = replace(state, scene=_scene_for_state(state, diff.after), pending=still_pending)
        return new, ShotReport(kind=kind, elapsed_s=elapsed_s, placed=tuple(sorted(placed))), ()
    if state.ended:
        r = _ruling("TW 6(b)", Decision.REFER_TO_UMPIRE, "Winks moved after the game ended.", params,
                    piece_ids=diff.moved)
        return state, ShotReport(kind="after_end", elapsed_s=elapsed_s, diff=diff), (r,)
    state = replace(state, scene=before, pending=still_pending)
    new, report, rulings = apply_shot(state, before, after_scene, played_color, elapsed_s, params=params,
                                      match_params=match_params,
                                      diff=diff if played_color is None else None, change=change)
    return new, replace(report, placed=tuple(sorted(placed))), rulings


#: A declared squop may bridge this much daylight between the measured footprints: the winks' measured places
#: are a few millimetres uncertain.
SQUOP_CORRECTION_SLACK_MM = 6.0


def _check_squop_possible(upper: Wink, lower: Wink) -> None:
    """An umpire's squop is only refused when it cannot be: a wink out of play, or two winks far apart (then the
    position is what needs correcting first)."""
    if upper.wink_id == lower.wink_id:
        raise AdjudicatorError(f"a wink cannot squop itself ({upper.wink_id!r})")
    for x in (upper, lower):
        if x.potted or x.off_mat:
            where = "potted" if x.potted else "off the mat"
            raise AdjudicatorError(f"{x.wink_id} is {where}: only winks in play can squop or be squopped")
    gap_mm = tw.gap_mm(upper, lower)
    if gap_mm > SQUOP_CORRECTION_SLACK_MM:
        raise AdjudicatorError(f"{upper.wink_id} and {lower.wink_id} are {gap_mm:.1f} mm apart (edge to edge): "
                               f"a squop needs them to overlap; correct their positions first")


def _turn_to_correct(state: GameState, kind: str) -> TurnState:
    if state.turn is None:
        raise AdjudicatorError(f"a {kind!r} correction needs a turn in progress; the game has "
                               f"{'ended' if state.ended else 'no turn yet (before the squidge-off)'}")
    return state.turn


def apply_correction(state: GameState, correction: dict[str, Any],
                     params: TiddlywinksParams = DEFAULT_PARAMS) -> tuple[GameState, tuple[Ruling, ...]]:
    """An umpire's edit; play goes on from the corrected state.

    Kinds: ``{"kind": "scene", "scene": DOC}`` replaces the rest state; ``{"kind": "wink", "id": ID, ...}`` sets
    ``center_mm``, ``potted``, ``off_mat``, ``unplayed`` or ``tilt_deg`` of one wink; ``{"kind": "squop",
    "upper": A, "lower": B}`` / ``{"kind": "unsquop", ...}`` declares the vertical order; ``{"kind": "turn",
    "color": C, "shots_left": N}`` sets the turn; ``{"kind": "pass"}`` ends the turn (TW 5(d));
    ``{"kind": "clear_pending"}`` forgets placements; ``{"kind": "pot_out_order", "order": [[C...]...]}``.
    """
    kind = correction.get("kind")
    scene = state.scene
    rulings: list[Ruling] = []

    def set_wink(wid: str, **changes: Any) -> TiddlywinksScene:
        if wid not in {w.wink_id for w in scene.winks}:
            raise AdjudicatorError(f"correction names unknown wink {wid!r}")
        return replace(scene, winks=tuple(replace(w, **changes) if w.wink_id == wid else w for w in scene.winks))

    if kind == "scene":
        state = replace(state, scene=_scene_for_state(state, scene_from_document(correction["scene"])))
    elif kind == "wink":
        allowed = {"center_mm", "potted", "off_mat", "unplayed", "tilt_deg", "tilt_azimuth_deg", "z_mm"}
        extra = set(correction) - allowed - {"kind", "id"}
        if extra:
            raise AdjudicatorError(f"unknown wink fields in correction: {sorted(extra)}")
        changes = {k: (tuple(v) if k == "center_mm" else v) for k, v in correction.items() if k in allowed}
        state = replace(state, scene=set_wink(correction["id"], **changes))
    elif kind in ("squop", "unsquop"):
        up, lo = correction["upper"], correction["lower"]
        w = scene.wink(up)
        lower = scene.wink(lo)
        if kind == "squop":
            _check_squop_possible(w, lower)
        above = set(w.above or ())
        if kind == "squop":
            above.add(lo)
        else:
            above.discard(lo)
        scene = set_wink(up, above=tuple(sorted(above)))
        if kind == "squop" and lower.above is not None and up in lower.above:
            scene = replace(scene, winks=tuple(replace(x, above=tuple(a for a in x.above if a != up))
                                               if x.wink_id == lo else x for x in scene.winks))
        if kind == "unsquop" and lower.above is None:
            # Make the "no squop" explicit for the pair: the lower one is over nothing of the upper either.
            scene = replace(scene, winks=tuple(replace(x, above=()) if x.wink_id == lo else x
                                               for x in scene.winks))
        state = replace(state, scene=scene)
    elif kind == "turn":
        t = _turn_to_correct(state, kind)
        state = replace(state, turn=replace(t, color=Color(correction["color"]),
                                            shots_left=int(correction.get("shots_left", 1)),
                                            shots_played=int(correction.get("shots_played", 0))))
    elif kind == "pass":
        t = _turn_to_correct(state, kind)
        state = replace(state, turn=t.after_pass())
    elif kind == "clear_pending":
        state = replace(state, pending=())
    elif kind == "pot_out_order":
        order = tuple(tuple(Color(c) for c in g) for g in correction["order"])
        state = replace(state, pot_out_order=order, scene=replace(state.scene, potted_out_order=order))
    else:
        raise AdjudicatorError(f"unknown correction kind {kind!r}")
    if state.ended:
        return state, tuple(rulings)
    ceases = judge_game_ceases(state.scene, params)
    if ceases.decision is Decision.GAME_CEASES:
        rulings.append(ceases)
        return _final(state, END_CEASES, rulings, params), tuple(rulings)
    state = _settle_turn(state, rulings, params)
    return state, tuple(rulings)


def state_summary(state: GameState) -> dict[str, Any]:
    """The short state printed after each shot (the full state is ``state.to_dict()``)."""
    t = state.turn
    assert t is not None
    rel = tw.squop_relations(state.scene)
    return {
        "due": t.color.value, "shots_left": t.shots_left, "turn": state.turn_number, "shots": state.shot_number,
        "forfeits": [c.value for c in t.forfeits],
        "potted": {c.value: sum(1 for w in state.scene.winks_of(c) if w.potted) for c in COLOR_ORDER},
        "squops": [[r.upper_id, r.lower_id] for r in rel],
        "pot_out_order": [[c.value for c in g] for g in state.pot_out_order],
        "free_turns_left": [c.value for c in state.free_turns],
        "squopping_side": state.squopping_side,
        "time_expired_in": None if state.expired_in is None else state.expired_in.value,
        "turns_left": None if state.turns_left is None else len(state.turns_left),
        "pending": [p.to_dict() for p in state.pending],
        "ended": state.ended, "end_reason": state.end_reason, "final_score": state.final_score,
    }
