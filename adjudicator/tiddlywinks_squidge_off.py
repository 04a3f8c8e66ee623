"""The squidge-off (TW A1, TW 5(a)): who starts, by nearest edge to the pot, never called inside eps."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from adjudicator.types import DEFAULT_PARAMS, AdjudicatorError, Decision, Ruling, TiddlywinksParams
from adjudicator.uncertainty import (
    combined_sigma_mm,
    detection_confidence,
    eps_mm,
    margin_confidence,
)
from geometry import tiddlywinks as tw
from geometry.types import COLOR_ORDER, Color, TiddlywinksScene, Wink

GAME = "tiddlywinks"
RULE = "TW 5(a)"


@dataclass(frozen=True, slots=True, kw_only=True)
class RankedWink:
    """One colour's squidge-off wink with its key: TW P1 distance (None when potted or off the mat)."""

    color: Color
    wink_id: str
    distance_mm: float | None
    uncertainty_mm: float
    potted: bool
    off_mat: bool
    place: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "color": self.color.value,
            "wink_id": self.wink_id,
            "distance_mm": None if self.distance_mm is None else round(self.distance_mm, 3),
            "uncertainty_mm": round(self.uncertainty_mm, 3),
            "potted": self.potted,
            "off_mat": self.off_mat,
            "place": self.place,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class SquidgeOffVerdict:
    """Outcome of one squidge-off round.

    ``winner`` is set only for a unique best wink decided by more than eps. ``resquidge`` lists the colours
    that squidge again (tied for best); ``replay`` the colours whose wink did not count (TW P4) and is
    replaced and replayed before anything is decided.
    """

    decision: Decision
    winner: Color | None
    ranking: tuple[RankedWink, ...]
    resquidge: tuple[Color, ...]
    replay: tuple[Color, ...]
    rulings: tuple[Ruling, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "decision": self.decision.value,
            "winner": None if self.winner is None else self.winner.value,
            "ranking": [r.to_dict() for r in self.ranking],
            "resquidge": [c.value for c in self.resquidge],
            "replay": [c.value for c in self.replay],
            "rulings": [r.to_dict() for r in self.rulings],
        }


def _one_wink_per_color(scene: TiddlywinksScene) -> dict[Color, Wink]:
    chosen: dict[Color, Wink] = {}
    for w in scene.winks:
        if w.color in chosen:
            raise AdjudicatorError(
                f"a squidge-off has one wink per colour; {w.color.value} has {chosen[w.color].wink_id!r} "
                f"and {w.wink_id!r}"
            )
        chosen[w.color] = w
    return chosen


def _baseline_rulings(
    scene: TiddlywinksScene, params: TiddlywinksParams, winks: dict[Color, Wink]
) -> tuple[list[Ruling], set[Color], set[Color]]:
    """TW P4 on every on-mat unpotted wink: not completely over its baseline -> replace and replay."""
    rulings: list[Ruling] = []
    replay: set[Color] = set()
    unsure: set[Color] = set()
    for color, w in winks.items():
        if w.potted or w.off_mat:
            continue
        if w.unplayed:
            replay.add(color)
            rulings.append(
                Ruling(
                    game=GAME,
                    rule=RULE,
                    decision=Decision.REPLAY,
                    piece_ids=(w.wink_id,),
                    colors=(color,),
                    confidence=detection_confidence(w),
                    frame_idx=params.frame_idx,
                    explanation=f"{color.value.capitalize()} has not squidged yet: it plays its "
                    "wink before the squidge-off is decided.",
                )
            )
            continue
        margin = tw.over_baseline_margin_mm(w, scene.corner_signs[color])
        eps = eps_mm(scene, params, w)
        evidence = {"over_baseline_margin_mm": margin, "eps_mm": eps}
        if margin < -eps:
            replay.add(color)
            rulings.append(
                Ruling(
                    game=GAME,
                    rule=RULE,
                    decision=Decision.REPLAY,
                    piece_ids=(w.wink_id,),
                    colors=(color,),
                    evidence=evidence,
                    confidence=margin_confidence(margin, w.position_sigma_mm, w),
                    frame_idx=params.frame_idx,
                    explanation=f"{color.value.capitalize()}'s wink is not completely over its baseline "
                    f"({-margin:.1f} mm behind): it does not count; replace it and replay.",
                )
            )
        elif margin <= eps:
            unsure.add(color)
            rulings.append(
                Ruling(
                    game=GAME,
                    rule=RULE,
                    decision=Decision.TOO_CLOSE_TO_CALL,
                    piece_ids=(w.wink_id,),
                    colors=(color,),
                    evidence=evidence,
                    confidence=detection_confidence(w),
                    frame_idx=params.frame_idx,
                    interpretations=("TW I-2",),
                    explanation=f"{color.value.capitalize()}'s wink touches its baseline within {eps:.1f} mm: "
                    "the umpire checks whether it is completely over; if not, it is replayed.",
                )
            )
    return rulings, replay, unsure


def _rank(scene: TiddlywinksScene, params: TiddlywinksParams, counted: list[Wink]) -> tuple[RankedWink, ...]:
    """Potted first (all equal), then by TW P1 key, off the mat last (all equal); eps-ties share a place."""

    def sort_key(w: Wink) -> tuple[int, float, int]:
        if w.potted:
            return (0, 0.0, COLOR_ORDER.index(w.color))
        if w.off_mat:
            return (2, 0.0, COLOR_ORDER.index(w.color))
        return (1, tw.edge_distance_to_pot_mm(w, scene.pot_center_mm), COLOR_ORDER.index(w.color))

    ordered = sorted(counted, key=sort_key)
    out: list[RankedWink] = []
    for i, w in enumerate(ordered):
        klass, key, _ = sort_key(w)
        place = i + 1
        if out:
            prev_w, prev = ordered[i - 1], out[-1]
            prev_class, prev_key, _ = sort_key(prev_w)
            tied = prev_class == klass and (klass != 1 or key - prev_key <= eps_mm(scene, params, w, prev_w))
            if tied:
                place = prev.place
        out.append(
            RankedWink(
                color=w.color,
                wink_id=w.wink_id,
                distance_mm=key if klass == 1 else None,
                uncertainty_mm=w.position_sigma_mm,
                potted=w.potted,
                off_mat=w.off_mat,
                place=place,
            )
        )
    return tuple(out)


def judge_squidge_off(
    scene: TiddlywinksScene, params: TiddlywinksParams = DEFAULT_PARAMS, *, unseen: tuple[Color, ...] = ()
) -> SquidgeOffVerdict:
    """TW 5(a) / TW A1: rank the squidged winks and name the winner, the re-squidgers, or the replays.

    Keys are TW P1 edge distances (TW I-1); an on-mat wink beyond the field still ranks by distance (TW I-4).
    Two keys within eps are never separated: ``TOO_CLOSE_TO_CALL``, and if the umpire finds them equal the tied
    colours re-squidge. ``unseen`` are colours in the game whose squidged wink is not in ``scene`` (hidden behind
    the pot or under another wink, potted out of sight, or gone): no winner is named while one is unaccounted
    for, since a potted or hidden wink next to the pot could beat every wink seen.
    """
    winks = _one_wink_per_color(scene)
    unseen = tuple(c for c in COLOR_ORDER if c in set(unseen) and c not in winks)
    rulings, replay, unsure = _baseline_rulings(scene, params, winks)
    counted = [w for c, w in winks.items() if c not in replay and c not in unsure]
    ranking = _rank(scene, params, counted)
    frame = params.frame_idx
    by_color = {w.color: w for w in counted}

    def verdict(
        decision: Decision, winner: Color | None, resquidge: tuple[Color, ...], main: Ruling
    ) -> SquidgeOffVerdict:
        return SquidgeOffVerdict(
            decision=decision,
            winner=winner,
            ranking=ranking,
            resquidge=resquidge,
            replay=tuple(c for c in COLOR_ORDER if c in replay),
            rulings=(*rulings, main),
        )

    def undecided(explanation: str, **found: Any) -> SquidgeOffVerdict:
        main = Ruling(game=GAME, rule=RULE, decision=Decision.UNDECIDED, frame_idx=frame,
                      confidence=found.pop("confidence", 1.0), explanation=explanation, **found)
        return verdict(Decision.UNDECIDED, None, (), main)

    if replay or unsure:
        waiting = tuple(sorted(replay | unsure, key=COLOR_ORDER.index))
        names = ", ".join(c.value for c in waiting)
        return undecided(f"No winner yet: {names} must first have a wink that counts.", colors=waiting,
                         piece_ids=tuple(winks[c].wink_id for c in waiting),
                         confidence=detection_confidence(*winks.values()))
    if unseen:
        names = " and ".join(c.value for c in unseen)
        missing = f"{names}'s squidged wink is" if len(unseen) == 1 else f"the squidged winks of {names} are"
        seen = ", ".join(f"{r.color.value} {r.distance_mm:.1f} mm" if r.distance_mm is not None else
                         f"{r.color.value} {'potted' if r.potted else 'off the mat'}" for r in ranking)
        return undecided(
            f"No winner yet: {missing} not seen (behind the pot, under another wink, potted out of sight, or off "
            f"the table), and a wink near the pot could be nearest; the umpire looks"
            + (f" (seen: {seen})." if seen else "."),
            colors=unseen,
            evidence={"colors_seen_count": float(len(ranking)), "colors_unseen_count": float(len(unseen))})
    if not ranking:
        return undecided("No squidge-off wink is visible, so there is nothing to rank.")

    best = [r for r in ranking if r.place == 1]
    best_colors = tuple(r.color for r in best)
    best_ids = tuple(r.wink_id for r in best)
    interps = ("TW I-1",) + (
        ("TW I-4",)
        if any(tw.out_of_bounds_penetration_mm(w) > 0 and not (w.potted or w.off_mat) for w in counted)
        else ()
    )
    names = " and ".join(c.value for c in best_colors)
    if len(best) > 1 and best[0].distance_mm is None:
        why = "potted" if best[0].potted else "off the mat"
        main = Ruling(
            game=GAME,
            rule=RULE,
            decision=Decision.RESQUIDGE,
            colors=best_colors,
            piece_ids=best_ids,
            frame_idx=frame,
            confidence=detection_confidence(*(by_color[c] for c in best_colors)),
            explanation=f"{names.capitalize()} tie (all {why}): only they re-squidge one wink each.",
        )
        return verdict(Decision.RESQUIDGE, None, best_colors, main)
    if len(best) > 1:
        ws = [by_color[c] for c in best_colors]
        spread = max(r.distance_mm for r in best) - min(r.distance_mm for r in best)
        eps = max(eps_mm(scene, params, ws[0], w) for w in ws[1:])
        main = Ruling(
            game=GAME,
            rule=RULE,
            decision=Decision.TOO_CLOSE_TO_CALL,
            colors=best_colors,
            piece_ids=best_ids,
            frame_idx=frame,
            confidence=detection_confidence(*ws),
            interpretations=interps,
            evidence={"best_distance_mm": best[0].distance_mm, "difference_mm": spread, "eps_mm": eps},
            # the words quote the gap as the document reports its distances (to the micrometre): a gap at a
            # tenth's midpoint otherwise reads either way on float noise a document never shows
            explanation=f"{names.capitalize()} are within {round(spread, 3):.1f} mm of each other "
            f"(margin {round(eps, 3):.1f} mm): the umpire measures; if equal, they re-squidge.",
        )
        return verdict(Decision.TOO_CLOSE_TO_CALL, None, best_colors, main)

    win = best[0]
    w = by_color[win.color]
    evidence: dict[str, float] = {} if win.distance_mm is None else {"winner_distance_mm": win.distance_mm}
    confidence = detection_confidence(w)
    explanation = f"{win.color.value.capitalize()} wins the squidge-off"
    if len(ranking) > 1:
        second = ranking[1]
        if win.distance_mm is not None and second.distance_mm is not None:
            v = by_color[second.color]
            margin = second.distance_mm - win.distance_mm
            evidence = {
                "winner_distance_mm": win.distance_mm,
                "runner_up_distance_mm": second.distance_mm,
                "margin_mm": margin,
                "eps_mm": eps_mm(scene, params, w, v),
            }
            confidence = margin_confidence(margin, combined_sigma_mm(w, v), w, v)
            explanation += (
                f": its wink is {win.distance_mm:.1f} mm from the pot, {margin:.1f} mm nearer "
                f"than {second.color.value}'s."
            )
        elif win.potted:
            explanation += ": it is the only colour to pot its wink."
        else:
            explanation += ": every other wink went off the mat."
    else:
        explanation += ": it is the only colour with a wink that counts."
    main = Ruling(
        game=GAME,
        rule=RULE,
        decision=Decision.WINNER,
        colors=(win.color,),
        piece_ids=(win.wink_id,),
        evidence=evidence,
        confidence=confidence,
        frame_idx=frame,
        interpretations=interps if win.distance_mm is not None else (),
        explanation=explanation,
    )
    return verdict(Decision.WINNER, win.color, (), main)
