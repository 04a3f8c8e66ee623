"""Tiddlywinks rule engine on scenes in table millimetres (RULES.md section 1): squops, play, game state.

``adjudicate(scene, params)`` runs the still-photo judges in rule order. The squidge-off, out-of-bounds,
pot, scoring and turn judges live in their own modules and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import combinations

from adjudicator.tiddlywinks_bounds import (
    Replacement,
    crossing_point_mm,
    judge_out_of_bounds,
    replacement_point,
)
from adjudicator.tiddlywinks_pot import (
    is_pot_out_phase,
    judge_pot_contents,
    judge_pot_out_separation,
    judge_pot_supported,
    judge_under_pot_base,
    separation_targets_mm,
)
from adjudicator.tiddlywinks_scoring import (
    Score,
    score_after_pot_out,
    score_by_tiddlies,
    tiddlies,
)
from adjudicator.tiddlywinks_squidge_off import RankedWink, SquidgeOffVerdict, judge_squidge_off
from adjudicator.tiddlywinks_turns import (
    ROUNDS_AFTER_EXPIRY,
    TIME_LIMIT_S,
    TurnState,
    free_turn_schedule,
    turns_after_expiry,
)
from adjudicator.types import DEFAULT_PARAMS, AdjudicatorError, Decision, Ruling, TiddlywinksParams
from adjudicator.uncertainty import detection_confidence, eps_mm, margin_confidence
from geometry import tiddlywinks as tw
from geometry.types import COLOR_ORDER, Color, TiddlywinksScene, Wink

__all__ = [
    "ROUNDS_AFTER_EXPIRY",
    "TIME_LIMIT_S",
    "RankedWink",
    "Replacement",
    "Score",
    "SquidgeOffVerdict",
    "TurnState",
    "adjudicate",
    "crossing_point_mm",
    "free_turn_schedule",
    "is_pot_out_phase",
    "judge_first_contact",
    "judge_free_turns",
    "judge_game_ceases",
    "judge_out_of_bounds",
    "judge_piles",
    "judge_pot_contents",
    "judge_pot_out_separation",
    "judge_pot_supported",
    "judge_score",
    "judge_shot",
    "judge_squidge_off",
    "judge_squops",
    "judge_time_expiry",
    "judge_under_pot_base",
    "playable_winks",
    "replacement_point",
    "score_after_pot_out",
    "score_by_tiddlies",
    "separation_targets_mm",
    "tiddlies",
    "turns_after_expiry",
]

GAME = "tiddlywinks"
PARTNERSHIPS: tuple[str, ...] = ("blue-red", "green-yellow")


# --- squops and piles --------------------------------------------------------------------------------------


def judge_squops(
    scene: TiddlywinksScene,
    params: TiddlywinksParams = DEFAULT_PARAMS,
    relations: tuple[tw.SquopRelation, ...] | None = None,
) -> tuple[Ruling, ...]:
    """TW 6(a), TW P6: one ruling per squop; overlaps within eps are too close to call.

    The vertical order comes from the camera's declared ``above`` lists or from heights; heights closer than
    ``params.min_height_step_mm`` say nothing without depth (TW I-13), so that squop is ``UNDECIDED``.
    """
    relations = tw.squop_relations(scene) if relations is None else relations
    frame = params.frame_idx
    by_pair = {frozenset((r.upper_id, r.lower_id)): r for r in relations}
    live = sorted((w for w in scene.winks if tw.is_in_play(w)), key=lambda w: w.wink_id)
    rulings: list[Ruling] = []
    for a, b in combinations(live, 2):
        rel = by_pair.get(frozenset((a.wink_id, b.wink_id)))
        gap = tw.gap_mm(a, b)
        eps = eps_mm(scene, params, a, b)
        if rel is None and gap > eps:
            continue
        evidence = {"overlap_depth_mm": -gap, "eps_mm": eps}
        if rel is None or -gap <= eps:
            rulings.append(
                Ruling(
                    game=GAME,
                    rule="TW 6(a)",
                    decision=Decision.TOO_CLOSE_TO_CALL,
                    piece_ids=(a.wink_id, b.wink_id),
                    colors=(a.color, b.color),
                    evidence=evidence,
                    confidence=detection_confidence(a, b),
                    frame_idx=frame,
                    explanation=f"{a.wink_id} and {b.wink_id} overlap in plan by at most {eps:.1f} mm: the umpire "
                    "looks whether one is over the other.",
                )
            )
            continue
        upper, lower = scene.wink(rel.upper_id), scene.wink(rel.lower_id)
        if rel.overlap_mm2:
            evidence["overlap_mm2"] = rel.overlap_mm2
        if rel.height_difference_mm is not None:
            evidence["height_difference_mm"] = rel.height_difference_mm
            if rel.height_difference_mm < params.min_height_step_mm:
                rulings.append(
                    Ruling(
                        game=GAME,
                        rule="TW 6(a)",
                        decision=Decision.UNDECIDED,
                        piece_ids=(upper.wink_id, lower.wink_id),
                        colors=(upper.color, lower.color),
                        evidence=evidence,
                        confidence=detection_confidence(a, b),
                        frame_idx=frame,
                        interpretations=("TW I-13",),
                        explanation=f"{a.wink_id} and {b.wink_id} overlap but the view does not show which is on "
                        "top: the umpire looks.",
                    )
                )
                continue
        same = " (same colour)" if upper.color is lower.color else ""
        rulings.append(
            Ruling(
                game=GAME,
                rule="TW 6(a)",
                decision=Decision.SQUOPPED,
                piece_ids=(upper.wink_id, lower.wink_id),
                colors=(upper.color, lower.color),
                evidence=evidence,
                frame_idx=frame,
                confidence=margin_confidence(
                    -gap, (a.position_sigma_mm**2 + b.position_sigma_mm**2) ** 0.5, a, b
                ),
                explanation=f"{upper.wink_id} squops {lower.wink_id}{same}: {lower.wink_id} may not be played.",
            )
        )
    return tuple(rulings)


def judge_piles(
    scene: TiddlywinksScene,
    params: TiddlywinksParams = DEFAULT_PARAMS,
    relations: tuple[tw.SquopRelation, ...] | None = None,
) -> tuple[Ruling, ...]:
    """TW 1(a)(vi), TW P7: each pile of three or more winks, naming its top (playable) winks.

    Two-wink piles are already stated by their squop ruling.
    """
    relations = tw.squop_relations(scene) if relations is None else relations
    lowers = tw.squopped_ids(relations)
    rulings: list[Ruling] = []
    for pile in tw.piles(relations):
        if len(pile) < 3:
            continue
        ids = tuple(sorted(pile))
        tops = [i for i in ids if i not in lowers]
        top_text = ", ".join(tops) if tops else "none (cyclic squop)"
        rulings.append(
            Ruling(
                game=GAME,
                rule="TW 1(a)(vi)",
                decision=Decision.PILE,
                piece_ids=ids,
                frame_idx=params.frame_idx,
                evidence={
                    "winks_count": len(ids),
                    "squops_count": sum(1 for r in relations if r.upper_id in pile),
                },
                confidence=detection_confidence(*(scene.wink(i) for i in ids)),
                explanation=f"Pile of {len(ids)} winks; only the top may be played: {top_text}.",
            )
        )
    return tuple(rulings)


# --- who may play what -------------------------------------------------------------------------------------


def playable_winks(
    scene: TiddlywinksScene, color: Color, relations: tuple[tw.SquopRelation, ...] | None = None
) -> tuple[Wink, ...]:
    """TW P13: the winks ``color`` may play: its own, unpotted and unsquopped (unplayed winks included)."""
    relations = tw.squop_relations(scene) if relations is None else relations
    lowers = tw.squopped_ids(relations)
    return tuple(w for w in scene.winks_of(color) if not w.potted and w.wink_id not in lowers)


def judge_first_contact(
    scene: TiddlywinksScene, wink_id: str, color: Color, params: TiddlywinksParams = DEFAULT_PARAMS
) -> Ruling:
    """TW 5(b), TW P13: is ``wink_id`` a legal first contact for a shot by ``color``?"""
    color = Color(color)
    w = scene.wink(wink_id)
    legal = w in playable_winks(scene, color)
    if legal:
        why = f"{wink_id} is an unsquopped {color.value} wink"
    elif w.color is not color:
        why = f"{wink_id} is {w.color.value}, not {color.value}"
    elif w.potted:
        why = f"{wink_id} is potted"
    else:
        why = f"{wink_id} is squopped"
    return Ruling(
        game=GAME,
        rule="TW 5(b)",
        decision=Decision.LEGAL if legal else Decision.ILLEGAL,
        piece_ids=(wink_id,),
        colors=(color,),
        confidence=detection_confidence(w),
        frame_idx=params.frame_idx,
        explanation=f"{why}: {'a legal' if legal else 'not a legal'} shot.",
    )


# --- free turns and the end of the game --------------------------------------------------------------------


def _all_squopped(winks: list[Wink], lowers: frozenset[str]) -> bool:
    return bool(winks) and all(w.wink_id in lowers for w in winks)


def judge_free_turns(
    scene: TiddlywinksScene,
    params: TiddlywinksParams = DEFAULT_PARAMS,
    relations: tuple[tw.SquopRelation, ...] | None = None,
) -> Ruling:
    """TW 11(a) / TW A9: does this rest state give free turns, how many, and to whom.

    Trigger: every unpotted wink of one partnership is squopped; an unplayed wink is free, so it prevents the
    trigger (TW I-7). N = 1 + free unpotted winks in play, of every colour. The schedule needs the colour of the
    shot just played (``scene.last_shot_color``).
    """
    relations = tw.squop_relations(scene) if relations is None else relations
    lowers, uppers = tw.squopped_ids(relations), tw.squopping_ids(relations)
    unpotted = {
        side: [w for w in scene.winks if w.color.partnership == side and not w.potted]
        for side in PARTNERSHIPS
    }
    squopped_sides = [s for s in PARTNERSHIPS if _all_squopped(unpotted[s], lowers)]
    frame = params.frame_idx
    all_winks = [w for ws in unpotted.values() for w in ws]
    if len(squopped_sides) != 1:
        if len(squopped_sides) == 2:
            why = "both partnerships are wholly squopped, so the game ceases instead (TW 6(b))"
        else:
            blocked = [
                s
                for s in PARTNERSHIPS
                if unpotted[s]
                and all(w.wink_id in lowers or w.unplayed for w in unpotted[s])
                and any(w.unplayed for w in unpotted[s])
            ]
            if blocked:
                why = f"{blocked[0]} still has unplayed winks, which count as free"
            elif not all_winks:
                why = "no wink is left unpotted"
            else:
                why = "no partnership has every unpotted wink squopped"
        return Ruling(
            game=GAME,
            rule="TW 11(a)",
            decision=Decision.NO_FREE_TURNS,
            frame_idx=frame,
            interpretations=("TW I-7",),
            confidence=detection_confidence(*all_winks),
            explanation=f"No free turns: {why}.",
        )
    squopped_side = squopped_sides[0]
    squopping_side = next(s for s in PARTNERSHIPS if s != squopped_side)
    free = [
        w for w in scene.winks if tw.is_in_play(w) and w.wink_id not in lowers and w.wink_id not in uppers
    ]
    n = 1 + len(free)
    evidence: dict[str, float] = {"free_turns_count": n, "free_winks_count": len(free)}
    evidence.update(
        {f"{c.value}_free_winks_count": sum(1 for w in free if w.color is c) for c in COLOR_ORDER}
    )
    colors: tuple[Color, ...] = tuple(c for c in COLOR_ORDER if c.partnership == squopping_side)
    schedule_text = ""
    if scene.last_shot_color is not None:
        colors = free_turn_schedule(squopping_side, scene.last_shot_color, n)
        schedule_text = f" ({', '.join(c.value for c in colors)})"
    return Ruling(
        game=GAME,
        rule="TW 11(a)",
        decision=Decision.FREE_TURNS,
        colors=colors,
        piece_ids=tuple(w.wink_id for w in free),
        evidence=evidence,
        frame_idx=frame,
        interpretations=("TW I-7",),
        confidence=detection_confidence(*all_winks),
        explanation=f"Every {squopped_side} wink is squopped: {squopping_side} gets {n} free turns"
        f"{schedule_text} and must free a wink by the last of them.",
    )


def judge_game_ceases(
    scene: TiddlywinksScene,
    params: TiddlywinksParams = DEFAULT_PARAMS,
    relations: tuple[tw.SquopRelation, ...] | None = None,
) -> Ruling:
    """TW 6(b), TW P14: the game ceases when no unpotted wink, in play or unplayed, is unsquopped (TW I-6)."""
    relations = tw.squop_relations(scene) if relations is None else relations
    lowers = tw.squopped_ids(relations)
    unpotted = [w for w in scene.winks if not w.potted]
    free = [w for w in unpotted if w.wink_id not in lowers]
    frame = params.frame_idx
    evidence = {"unpotted_winks_count": len(unpotted), "unsquopped_winks_count": len(free)}
    if not scene.winks:
        return Ruling(
            game=GAME,
            rule="TW 6(b)",
            decision=Decision.UNDECIDED,
            evidence=evidence,
            frame_idx=frame,
            confidence=1.0,
            explanation="No winks are in the scene, so nothing shows whether play goes on.",
        )
    if not unpotted:
        return Ruling(
            game=GAME,
            rule="TW 6(b)",
            decision=Decision.GAME_CEASES,
            evidence=evidence,
            frame_idx=frame,
            confidence=detection_confidence(*scene.winks),
            explanation="Every wink is potted.",
        )
    if free:
        return Ruling(
            game=GAME,
            rule="TW 6(b)",
            decision=Decision.GAME_CONTINUES,
            evidence=evidence,
            frame_idx=frame,
            interpretations=("TW I-6",),
            confidence=detection_confidence(*free),
            explanation=f"Play goes on: {len(free)} unpotted wink(s) are unsquopped.",
        )
    return Ruling(
        game=GAME,
        rule="TW 6(b)",
        decision=Decision.GAME_CEASES,
        evidence=evidence,
        piece_ids=tuple(w.wink_id for w in unpotted),
        frame_idx=frame,
        interpretations=("TW I-6",),
        confidence=detection_confidence(*unpotted),
        explanation="Every unpotted wink is squopped (a cyclic squop): the game ceases and is scored "
        "by tiddlies.",
    )


def judge_shot(
    state: TurnState,
    *,
    potted: Iterable[Color] = (),
    left_field: Iterable[Color] = (),
    params: TiddlywinksParams = DEFAULT_PARAMS,
) -> tuple[TurnState, tuple[Ruling, ...]]:
    """TW 5(c) / TW A2 and TW 7(a): the turn after one shot, with rulings for bonus shots and a forfeit.

    ``potted`` and ``left_field`` are the colours of the winks the shot potted and sent off the field.
    """
    potted, left_field = [Color(c) for c in potted], [Color(c) for c in left_field]
    after = state.after_shot(potted=potted, left_field=left_field)
    color = state.color
    bonus = sum(1 for c in potted if c is color)
    rulings: list[Ruling] = []
    if bonus:
        rulings.append(
            Ruling(
                game=GAME,
                rule="TW 5(c)",
                decision=Decision.BONUS_SHOTS,
                colors=(color,),
                frame_idx=params.frame_idx,
                evidence={"bonus_shots_count": bonus, "shots_left_count": after.shots_left},
                explanation=f"{color.value.capitalize()} potted {bonus} of its own wink(s): {bonus} more shot(s).",
            )
        )
    if color in left_field:
        now = len(after.forfeits) == len(state.forfeits)
        when = "this turn's bonus shot" if now else "its next shot"
        rulings.append(
            Ruling(
                game=GAME,
                rule="TW 7(a)",
                decision=Decision.FORFEIT,
                colors=(color,),
                frame_idx=params.frame_idx,
                interpretations=("TW I-5",),
                evidence={"shots_left_count": after.shots_left},
                explanation=f"A {color.value} wink left the field on a {color.value} shot: {color.value} "
                f"forfeits {when}.",
            )
        )
    return after, tuple(rulings)


def judge_time_expiry(
    scene: TiddlywinksScene, expiry_color: Color, params: TiddlywinksParams = DEFAULT_PARAMS
) -> Ruling:
    """TW 9(b) / TW A6: the turns left when time expires during ``expiry_color``'s turn (TW I-8).

    After a pot-out the time limit no longer applies (TW 8); the squidge-off winner must be known.
    """
    expiry_color = Color(expiry_color)
    frame = params.frame_idx
    if is_pot_out_phase(scene):
        return Ruling(
            game=GAME,
            rule="TW 9(b)",
            decision=Decision.GAME_CONTINUES,
            frame_idx=frame,
            explanation="A colour has potted out, so the time limit no longer applies (TW 8).",
        )
    winner = scene.squidge_off_winner
    if winner is None:
        return Ruling(
            game=GAME,
            rule="TW 9(b)",
            decision=Decision.UNDECIDED,
            frame_idx=frame,
            explanation="The squidge-off winner is not recorded, so the last rounds cannot be counted.",
        )
    turns = turns_after_expiry(winner, expiry_color)
    return Ruling(
        game=GAME,
        rule="TW 9(b)",
        decision=Decision.TURNS_REMAINING,
        colors=turns,
        frame_idx=frame,
        evidence={"turns_count": len(turns)},
        interpretations=("TW I-8",),
        explanation=f"Time is up: finish {expiry_color.value}'s turn, play on to {winner.value}'s, "
        f"then five rounds ending with {winner.value}: {len(turns)} more turns.",
    )


# --- scores ------------------------------------------------------------------------------------------------


def _score_evidence(score: Score) -> dict[str, float]:
    ev: dict[str, float] = {}
    if score.tiddlies is not None:
        ev.update({f"{c.value}_tiddlies": t for c, t in score.tiddlies.items()})
    ev.update({f"{c.value}_points": float(p) for c, p in score.color_points.items()})
    ev.update({f"{s.replace('-', '_')}_points": float(p) for s, p in score.side_points.items()})
    if score.transfer_points:
        ev["transfer_points"] = score.transfer_points
    return ev


def _side_text(score: Score) -> str:
    return ", ".join(f"{s} {float(p):g}" for s, p in score.side_points.items())


def judge_score(
    scene: TiddlywinksScene,
    params: TiddlywinksParams = DEFAULT_PARAMS,
    relations: tuple[tw.SquopRelation, ...] | None = None,
    final: bool = False,
) -> Ruling:
    """TW 10(a) after a pot-out, else TW 10(b) tiddlies (provisional unless ``final``), per colour and side."""
    frame = params.frame_idx
    if is_pot_out_phase(scene):
        order = scene.potted_out_order
        listed = {c for g in order for c in g}
        out_now = [c for c in COLOR_ORDER if tw.is_potted_out(scene, c)]
        unknown = [c for c in out_now if c not in listed]
        if not order and len(out_now) == 1:
            order, unknown = ((out_now[0],),), []
        placed = len(listed) + len(unknown)
        if unknown and placed > 1:
            return Ruling(
                game=GAME,
                rule="TW 10(a)",
                decision=Decision.UNDECIDED,
                colors=tuple(unknown),
                frame_idx=frame,
                confidence=1.0,
                explanation=f"The pot-out order of {', '.join(c.value for c in unknown)} is not known: "
                "the scorer records it.",
            )
        if placed < 3:
            return Ruling(
                game=GAME,
                rule="TW 10(a)",
                decision=Decision.GAME_CONTINUES,
                colors=tuple(c for g in order for c in g),
                frame_idx=frame,
                confidence=1.0,
                evidence={"potted_out_count": placed},
                explanation="A colour has potted out: play goes on, without the time limit, until "
                "the finishing order is fixed (TW 8).",
            )
        score = score_after_pot_out(order, scene.game_type)
        return Ruling(
            game=GAME,
            rule="TW 10(a)",
            decision=Decision.SCORE,
            evidence=_score_evidence(score),
            frame_idx=frame,
            confidence=1.0,
            interpretations=("TW I-11",) if not score.transfer_points else (),
            explanation=f"Score by pot-out order: {_side_text(score)}.",
        )
    counts = tiddlies(scene, relations)
    score = score_by_tiddlies(counts, scene.game_type)
    status = "Score by tiddlies" if final else "Tiddlies if play ended now"
    return Ruling(
        game=GAME,
        rule="TW 10(b)",
        decision=Decision.SCORE,
        evidence=_score_evidence(score),
        frame_idx=frame,
        confidence=detection_confidence(*scene.winks),
        explanation=f"{status}: "
        + ", ".join(f"{c.value} {t}" for c, t in counts.items())
        + f"; points {_side_text(score)}.",
    )


# --- everything, in rule order -----------------------------------------------------------------------------


def adjudicate(scene: TiddlywinksScene, params: TiddlywinksParams = DEFAULT_PARAMS) -> tuple[Ruling, ...]:
    """All still-photo rulings for a game in progress, in rule order.

    Squops and piles (TW 6(a), 1(a)(vi)); out of bounds and replacement spots (TW 7(a)); under the pot base and
    pot-supported winks (TW 7(b)); a pot hiding a colour's potted winks (TW 5(c)); pot-out separations (TW 8); the score (TW 10(a), else provisional TW 10(b));
    the free-turn trigger (TW 11(a)); whether the game ceases (TW 6(b)). The squidge-off is judged apart
    (:func:`judge_squidge_off`).
    """
    if not isinstance(scene, TiddlywinksScene):
        raise AdjudicatorError(f"adjudicate needs a TiddlywinksScene, got {type(scene).__name__}")
    relations = tw.squop_relations(scene)
    ceases = judge_game_ceases(scene, params, relations)
    return (
        *judge_squops(scene, params, relations),
        *judge_piles(scene, params, relations),
        *judge_out_of_bounds(scene, params),
        *judge_under_pot_base(scene, params),
        *judge_pot_supported(scene, params, relations),
        *judge_pot_contents(scene),
        *judge_pot_out_separation(scene, params, relations),
        judge_score(scene, params, relations, final=ceases.decision is Decision.GAME_CEASES),
        judge_free_turns(scene, params, relations),
        ceases,
    )
