"""Leaving the field (TW A3 / TW 7(a)): which winks are out, the forfeit, and the computed replacement spot."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from shapely.geometry import Point

from adjudicator.types import DEFAULT_PARAMS, Decision, Ruling, TiddlywinksParams
from adjudicator.uncertainty import detection_confidence, eps_mm, margin_confidence
from geometry import tiddlywinks as tw
from geometry.constants import REPLACEMENT_CLEARANCE_MM, REPLACEMENT_EDGE_GAP_MM
from geometry.placement import Candidate, Disc, Stadium, nearest_feasible_boundary_points
from geometry.types import TiddlywinksScene, Wink

GAME = "tiddlywinks"
RULE = "TW 7(a)"


@dataclass(frozen=True, slots=True, kw_only=True)
class Replacement:
    """Where an out wink goes: the nearest feasible candidate, or None with the reason it is referred."""

    wink_id: str
    crossing_mm: tuple[float, float]
    point_mm: tuple[float, float] | None
    candidates: tuple[Candidate, ...]
    ambiguous: bool


def crossing_point_mm(wink: Wink) -> tuple[float, float]:
    """Estimate of where a wink at rest outside crossed the field boundary: the boundary point nearest it.

    A still photo does not show the path; a tracker that saw the shot passes the true crossing instead.
    """
    boundary = tw.field_polygon().exterior
    p = boundary.interpolate(boundary.project(Point(wink.center_mm)))
    return (p.x, p.y)


def replacement_point(
    scene: TiddlywinksScene,
    wink: Wink,
    crossing_mm: tuple[float, float],
    params: TiddlywinksParams = DEFAULT_PARAMS,
    others: tuple[Wink, ...] | None = None,
) -> Replacement:
    """TW 7(a) placement: the point nearest the crossing on the field offset inward by 22 + r (TW I-3).

    Candidates keep an edge gap of at least 100 mm from every other unpotted wink in play (``others``; by
    default every in-play wink of the scene except this one) and 100 mm from every drawn baseline that still
    has unplayed winks behind it. Two candidates equally near within eps are ambiguous: refer to the umpire.
    """
    r = wink.radius_mm
    ring = tw.field_polygon(REPLACEMENT_EDGE_GAP_MM + r)
    if others is None:
        others = tuple(o for o in scene.winks if tw.is_in_play(o) and o.wink_id != wink.wink_id)
    discs = tuple(Disc(o.center_mm, r + o.radius_mm + REPLACEMENT_CLEARANCE_MM) for o in others)
    stadiums = []
    for color in scene.colors_with_unplayed():
        a, b = tw.baseline_segment(scene.corner_signs[color]).coords
        stadiums.append(Stadium(tuple(a), tuple(b), r + REPLACEMENT_CLEARANCE_MM))
    candidates = nearest_feasible_boundary_points(ring, crossing_mm, discs, tuple(stadiums))
    eps = eps_mm(scene, params, wink)
    ambiguous = (
        len(candidates) > 1
        and candidates[1].distance_mm - candidates[0].distance_mm <= eps
        and math.dist(candidates[0].point_mm, candidates[1].point_mm) > eps
    )
    point = candidates[0].point_mm if candidates and not ambiguous else None
    return Replacement(
        wink_id=wink.wink_id,
        crossing_mm=crossing_mm,
        point_mm=point,
        candidates=candidates,
        ambiguous=ambiguous,
    )


def judge_out_of_bounds(
    scene: TiddlywinksScene,
    params: TiddlywinksParams = DEFAULT_PARAMS,
    crossings_mm: dict[str, tuple[float, float]] | None = None,
    include_in: bool = False,
) -> tuple[Ruling, ...]:
    """TW 7(a) / TW A3: OUT / IN / TOO_CLOSE_TO_CALL per wink, where each out wink goes, and the forfeit.

    The camera calls OUT only when the penetration beyond the field exceeds eps, IN when it is below -eps
    (a tangent wink is in by rule, TW I-2). A played wink off the mat is out wherever it stopped. Out winks are
    replaced one after another in id order, each respecting those already put back. ``crossings_mm`` gives
    known crossing points by wink id; otherwise the boundary point nearest the wink is used. With
    ``include_in`` clearly-in winks get an ``IN`` ruling too (default: only the ones worth a word).
    """
    crossings_mm = crossings_mm or {}
    frame = params.frame_idx
    rulings: list[Ruling] = []
    out_winks: list[Wink] = []
    for w in sorted(scene.winks, key=lambda w: w.wink_id):
        if w.potted or w.unplayed:
            continue
        if w.off_mat:
            out_winks.append(w)
            rulings.append(
                Ruling(
                    game=GAME,
                    rule=RULE,
                    decision=Decision.OUT,
                    piece_ids=(w.wink_id,),
                    colors=(w.color,),
                    confidence=detection_confidence(w),
                    frame_idx=frame,
                    explanation=f"{w.wink_id} left the mat: it is out and is replaced at once.",
                )
            )
            continue
        pen = tw.out_of_bounds_penetration_mm(w)
        eps = eps_mm(scene, params, w)
        evidence = {"penetration_mm": pen, "eps_mm": eps}
        if pen > eps:
            out_winks.append(w)
            rulings.append(
                Ruling(
                    game=GAME,
                    rule=RULE,
                    decision=Decision.OUT,
                    piece_ids=(w.wink_id,),
                    colors=(w.color,),
                    evidence=evidence,
                    confidence=margin_confidence(pen, w.position_sigma_mm, w),
                    frame_idx=frame,
                    interpretations=("TW I-2",),
                    explanation=f"{w.wink_id} reaches {pen:.1f} mm beyond the field of play: it is out.",
                )
            )
        elif pen >= -eps:
            rulings.append(
                Ruling(
                    game=GAME,
                    rule=RULE,
                    decision=Decision.TOO_CLOSE_TO_CALL,
                    piece_ids=(w.wink_id,),
                    colors=(w.color,),
                    evidence=evidence,
                    confidence=detection_confidence(w),
                    frame_idx=frame,
                    interpretations=("TW I-2",),
                    explanation=f"{w.wink_id} is within {eps:.1f} mm of the boundary line: the umpire decides "
                    "(touching the line is in).",
                )
            )
        elif include_in:
            rulings.append(
                Ruling(
                    game=GAME,
                    rule=RULE,
                    decision=Decision.IN,
                    piece_ids=(w.wink_id,),
                    colors=(w.color,),
                    evidence=evidence,
                    confidence=margin_confidence(pen, w.position_sigma_mm, w),
                    frame_idx=frame,
                    interpretations=("TW I-2",),
                    explanation=f"{w.wink_id} is {-pen:.1f} mm inside the field of play: it is in.",
                )
            )

    out_ids = {w.wink_id for w in out_winks}
    placed: list[Wink] = [w for w in scene.winks if tw.is_in_play(w) and w.wink_id not in out_ids]
    for w in out_winks:
        crossing = crossings_mm.get(w.wink_id)
        if crossing is None and w.off_mat and tw.field_polygon().contains(Point(w.center_mm)):
            # An off-mat wink recorded at a field position: where it left is unknown.
            rulings.append(
                Ruling(
                    game=GAME,
                    rule=RULE,
                    decision=Decision.REFER_TO_UMPIRE,
                    piece_ids=(w.wink_id,),
                    colors=(w.color,),
                    confidence=detection_confidence(w),
                    frame_idx=frame,
                    interpretations=("TW I-3",),
                    explanation=f"Where {w.wink_id} left the field was not seen: the players or umpire "
                    "name the crossing point, then it goes 22 mm inside it.",
                )
            )
            continue
        crossing = crossing or crossing_point_mm(w)
        rep = replacement_point(scene, w, crossing, params, others=tuple(placed))
        evidence = {
            "crossing_x_mm": crossing[0],
            "crossing_y_mm": crossing[1],
            "edge_gap_mm": REPLACEMENT_EDGE_GAP_MM,
            "eps_mm": eps_mm(scene, params, w),
        }
        if rep.point_mm is not None:
            evidence["move_mm"] = math.dist(rep.point_mm, crossing)
            rulings.append(
                Ruling(
                    game=GAME,
                    rule=RULE,
                    decision=Decision.REPLACE_AT,
                    piece_ids=(w.wink_id,),
                    colors=(w.color,),
                    target_mm=rep.point_mm,
                    evidence=evidence,
                    confidence=detection_confidence(w),
                    frame_idx=frame,
                    interpretations=("TW I-3",),
                    explanation=f"Replace {w.wink_id} at ({rep.point_mm[0]:.1f}, {rep.point_mm[1]:.1f}) mm: 22 mm "
                    "inside the boundary, 100 mm clear of winks and live baselines, nearest its exit.",
                )
            )
            placed.append(replace(w, center_mm=rep.point_mm, off_mat=False, tilt_deg=0.0))
        else:
            why = (
                "two spots are about equally near its exit"
                if rep.ambiguous
                else "no spot keeps 100 mm from every wink and live baseline"
            )
            if rep.ambiguous:
                evidence["difference_mm"] = rep.candidates[1].distance_mm - rep.candidates[0].distance_mm
            rulings.append(
                Ruling(
                    game=GAME,
                    rule=RULE,
                    decision=Decision.REFER_TO_UMPIRE,
                    piece_ids=(w.wink_id,),
                    colors=(w.color,),
                    evidence=evidence,
                    confidence=detection_confidence(w),
                    frame_idx=frame,
                    interpretations=("TW I-3",),
                    explanation=f"Where {w.wink_id} goes back is for the players or umpire: {why}.",
                )
            )

    shooter = scene.last_shot_color
    if shooter is not None and any(w.color is shooter for w in out_winks):
        ids = tuple(w.wink_id for w in out_winks if w.color is shooter)
        rulings.append(
            Ruling(
                game=GAME,
                rule=RULE,
                decision=Decision.FORFEIT,
                piece_ids=ids,
                colors=(shooter,),
                confidence=detection_confidence(*(w for w in out_winks if w.color is shooter)),
                frame_idx=frame,
                interpretations=("TW I-5",),
                explanation=f"A {shooter.value} wink left the field on a {shooter.value} shot: {shooter.value}'s "
                "next shot is forfeited, even a bonus shot this turn.",
            )
        )
    return tuple(rulings)
