"""The pot (TW A4 / TW 7(b)) and the pot-out separations (TW A5 / TW 8)."""

from __future__ import annotations

import math
from dataclasses import replace

from adjudicator.types import DEFAULT_PARAMS, Decision, Ruling, TiddlywinksParams
from adjudicator.uncertainty import detection_confidence, eps_mm, margin_confidence
from geometry import tiddlywinks as tw
from geometry.constants import POT_BASE_RADIUS_MM, POT_OUT_MIN_GAP_MM
from geometry.types import COLOR_ORDER, TiddlywinksScene, Wink

GAME = "tiddlywinks"
RULE_POT = "TW 7(b)"
RULE_POT_OUT = "TW 8"
# A separated pair is checked against the rest with this float slack (mm), far below any measurement.
_GAP_SLACK_MM = 1e-6


def judge_under_pot_base(
    scene: TiddlywinksScene, params: TiddlywinksParams = DEFAULT_PARAMS
) -> tuple[Ruling, ...]:
    """TW 7(b) / TW A4, TW P8: a wink under the pot base moves radially out to touch it (not a shot).

    Ruled MOVE only when the footprint reaches under the base by more than eps; within eps the umpire looks.
    A wink centred on the pot axis (within eps) has no radial direction: players or umpire decide.
    """
    rulings: list[Ruling] = []
    for w in scene.winks:
        if not tw.is_in_play(w) or not tw.is_under_pot_base(w, scene.pot_center_mm):
            continue
        clearance = tw.pot_base_clearance_mm(w, scene.pot_center_mm)
        eps = eps_mm(scene, params, w)
        evidence = {"pot_base_clearance_mm": clearance, "eps_mm": eps}
        base = {
            "game": GAME,
            "rule": RULE_POT,
            "piece_ids": (w.wink_id,),
            "colors": (w.color,),
            "frame_idx": params.frame_idx,
        }
        target = tw.radial_position_mm(w.center_mm, POT_BASE_RADIUS_MM + w.radius_mm, scene.pot_center_mm)
        if clearance >= -eps:
            rulings.append(
                Ruling(
                    **base,
                    decision=Decision.TOO_CLOSE_TO_CALL,
                    evidence=evidence,
                    confidence=detection_confidence(w),
                    explanation=f"{w.wink_id} may just touch the pot base (within {eps:.1f} mm): "
                    "the umpire looks.",
                )
            )
        elif target is None or math.dist(w.center_mm, scene.pot_center_mm) < eps:
            rulings.append(
                Ruling(
                    **base,
                    decision=Decision.REFER_TO_UMPIRE,
                    evidence=evidence,
                    confidence=detection_confidence(w),
                    explanation=f"{w.wink_id} is centred under the pot: there is no radial "
                    "direction, so the players or umpire place it.",
                )
            )
        else:
            evidence["move_mm"] = -clearance
            rulings.append(
                Ruling(
                    **base,
                    decision=Decision.MOVE,
                    target_mm=target,
                    evidence=evidence,
                    confidence=margin_confidence(clearance, w.position_sigma_mm, w),
                    explanation=f"{w.wink_id} is under the pot base: move it radially "
                    f"{-clearance:.1f} mm out to ({target[0]:.2f}, {target[1]:.2f}) "
                    "so it just touches the base; not a shot.",
                )
            )
    return tuple(rulings)


def judge_pot_supported(
    scene: TiddlywinksScene,
    params: TiddlywinksParams = DEFAULT_PARAMS,
    relations: tuple[tw.SquopRelation, ...] | None = None,
) -> tuple[Ruling, ...]:
    """TW 7(b) / TW A4, TW P9: a free wink leaning on the pot is laid flat touching it, radially (TW I-12).

    If the flat footprint then overlaps another wink it lands on top of it (squops it). A leaning wink that
    squops or is squopped stays until it is free (not ruled here).
    """
    relations = tw.squop_relations(scene) if relations is None else relations
    rulings: list[Ruling] = []
    for w in scene.winks:
        if not tw.is_in_play(w) or not tw.is_pot_supported(
            w, relations, scene.pot_center_mm, params.pot_support_min_tilt_deg
        ):
            continue
        target = tw.radial_position_mm(w.center_mm, POT_BASE_RADIUS_MM + w.radius_mm, scene.pot_center_mm)
        if target is None:
            continue
        flat = replace(w, center_mm=target, tilt_deg=0.0)
        landed_on = tuple(
            o.wink_id
            for o in scene.winks
            if o.wink_id != w.wink_id and tw.is_in_play(o) and tw.overlap_area_mm2(flat, o) > 0
        )
        tail = f"; it lands on top of {', '.join(landed_on)}" if landed_on else ""
        rulings.append(
            Ruling(
                game=GAME,
                rule=RULE_POT,
                decision=Decision.MOVE,
                piece_ids=(w.wink_id, *landed_on),
                colors=(w.color,),
                target_mm=target,
                frame_idx=params.frame_idx,
                interpretations=("TW I-12",),
                evidence={
                    "tilt_deg": w.tilt_deg,
                    "move_mm": math.dist(w.center_mm, target),
                    "eps_mm": eps_mm(scene, params, w),
                },
                confidence=detection_confidence(w),
                explanation=f"{w.wink_id} leans on the pot: lay it flat touching the pot at "
                f"({target[0]:.2f}, {target[1]:.2f}){tail}; not a shot.",
            )
        )
    return tuple(rulings)


def is_pot_out_phase(scene: TiddlywinksScene) -> bool:
    """TW 8 applies once any colour has potted out (TW P11), from the scene's order or its winks."""
    return bool(scene.potted_out_order) or any(tw.is_potted_out(scene, c) for c in COLOR_ORDER)


def _wrap_rad(a: float) -> float:
    return (a + math.pi) % (2.0 * math.pi) - math.pi


def _angle_about(point_mm: tuple[float, float], pot_center_mm: tuple[float, float]) -> float:
    return math.atan2(point_mm[1] - pot_center_mm[1], point_mm[0] - pot_center_mm[0])


def separation_targets_mm(
    moving: Wink,
    fixed: Wink,
    gap_mm: float = POT_OUT_MIN_GAP_MM,
    pot_center_mm: tuple[float, float] = (0.0, 0.0),
) -> tuple[tuple[float, float], ...]:
    """Points on ``moving``'s circle about the pot where its gap to ``fixed`` is ``gap_mm``, smaller turn first.

    Empty when no point of the circle is that far from ``fixed`` (the players must agree instead).

    >>> [tuple(round(v, 2) for v in p) for p in separation_targets_mm(
    ...     Wink(wink_id="b", color="red", size="small", center_mm=(205, 10)),
    ...     Wink(wink_id="a", color="blue", size="large", center_mm=(200, 0)))][:1]
    [(204.21, 20.57)]
    """
    px, py = pot_center_mm
    mx, my = moving.center_mm[0] - px, moving.center_mm[1] - py
    fx, fy = fixed.center_mm[0] - px, fixed.center_mm[1] - py
    r_m, r_f = math.hypot(mx, my), math.hypot(fx, fy)
    d = moving.radius_mm + fixed.radius_mm + gap_mm
    if r_m == 0.0 or r_f == 0.0:
        return ()
    cos_delta = (r_m**2 + r_f**2 - d**2) / (2.0 * r_m * r_f)
    if cos_delta < -1.0:
        return ()
    delta = math.acos(min(cos_delta, 1.0))
    theta, phi = math.atan2(my, mx), math.atan2(fy, fx)
    turns = sorted((_wrap_rad(phi + s * delta - theta) for s in (1.0, -1.0)), key=abs)
    return tuple((px + r_m * math.cos(theta + t), py + r_m * math.sin(theta + t)) for t in turns)


def judge_pot_out_separation(
    scene: TiddlywinksScene,
    params: TiddlywinksParams = DEFAULT_PARAMS,
    relations: tuple[tw.SquopRelation, ...] | None = None,
) -> tuple[Ruling, ...]:
    """TW 8 / TW A5: after a pot-out, propose moves leaving every pair at least 2 mm apart.

    Squops are undone by moving the upper wink, top of each pile first; other pairs closer than 2 mm move the
    wink needing the smaller turn (a still photo cannot tell which one just moved, TW I-10). Every move keeps
    the wink's distance from the pot and takes the smaller rotation that clears all other winks; the players
    agree the final spots, so these are proposals.
    """
    if not is_pot_out_phase(scene):
        return ()
    relations = tw.squop_relations(scene) if relations is None else relations
    live = {w.wink_id: w for w in scene.winks if tw.is_in_play(w)}
    rulings: list[Ruling] = []
    frame = params.frame_idx

    def clear_of_others(cand: Wink, *skip: str) -> bool:
        return all(
            tw.gap_mm(cand, o) >= POT_OUT_MIN_GAP_MM - _GAP_SLACK_MM
            for oid, o in live.items()
            if oid not in (cand.wink_id, *skip)
        )

    def propose(moving: Wink, fixed: Wink, why: str) -> None:
        for target in separation_targets_mm(moving, fixed, POT_OUT_MIN_GAP_MM, scene.pot_center_mm):
            cand = replace(moving, center_mm=target, tilt_deg=0.0, above=())
            if clear_of_others(cand, fixed.wink_id):
                pot = scene.pot_center_mm
                turn_deg = math.degrees(
                    abs(_wrap_rad(_angle_about(target, pot) - _angle_about(moving.center_mm, pot)))
                )
                live[moving.wink_id] = cand
                rulings.append(
                    Ruling(
                        game=GAME,
                        rule=RULE_POT_OUT,
                        decision=Decision.MOVE,
                        piece_ids=(moving.wink_id, fixed.wink_id),
                        colors=(moving.color,),
                        target_mm=target,
                        frame_idx=frame,
                        interpretations=("TW I-10",),
                        evidence={
                            "gap_before_mm": tw.gap_mm(moving, fixed),
                            "gap_after_mm": tw.gap_mm(cand, fixed),
                            "rotation_deg": turn_deg,
                            "pot_distance_mm": math.dist(target, scene.pot_center_mm),
                        },
                        confidence=detection_confidence(moving, fixed),
                        explanation=f"Proposed: {why}; move {moving.wink_id} round the pot to ({target[0]:.2f}, "
                        f"{target[1]:.2f}) for a 2 mm gap from {fixed.wink_id}; players agree.",
                    )
                )
                return
        rulings.append(
            Ruling(
                game=GAME,
                rule=RULE_POT_OUT,
                decision=Decision.REFER_TO_UMPIRE,
                piece_ids=(moving.wink_id, fixed.wink_id),
                colors=(moving.color,),
                frame_idx=frame,
                interpretations=("TW I-10",),
                evidence={"gap_before_mm": tw.gap_mm(moving, fixed)},
                confidence=detection_confidence(moving, fixed),
                explanation=f"No move of {moving.wink_id} round the pot clears {fixed.wink_id} and the rest by "
                "2 mm: the players agree its place.",
            )
        )

    # Top of each pile first: an upper wink that is not itself squopped.
    lowers = tw.squopped_ids(relations)
    pending = sorted(relations, key=lambda r: (r.upper_id in lowers, r.upper_id, r.lower_id))
    handled = {frozenset((r.upper_id, r.lower_id)) for r in pending}
    for rel in pending:
        if (
            rel.upper_id in live
            and rel.lower_id in live
            and tw.gap_mm(live[rel.upper_id], live[rel.lower_id]) < 0
        ):
            propose(live[rel.upper_id], live[rel.lower_id], f"{rel.upper_id} squops {rel.lower_id}")

    ids = sorted(live)
    for i, a_id in enumerate(ids):
        for b_id in ids[i + 1 :]:
            if frozenset((a_id, b_id)) in handled:
                continue
            a, b = live[a_id], live[b_id]
            gap = tw.gap_mm(a, b)
            eps = eps_mm(scene, params, a, b)
            if gap >= POT_OUT_MIN_GAP_MM - _GAP_SLACK_MM:
                continue
            if gap >= POT_OUT_MIN_GAP_MM - eps:
                rulings.append(
                    Ruling(
                        game=GAME,
                        rule=RULE_POT_OUT,
                        decision=Decision.TOO_CLOSE_TO_CALL,
                        piece_ids=(a_id, b_id),
                        frame_idx=frame,
                        evidence={"gap_mm": gap, "eps_mm": eps},
                        confidence=detection_confidence(a, b),
                        explanation=f"{a_id} and {b_id} are {gap:.1f} mm apart, too close to tell from 2 mm: "
                        "the players measure.",
                    )
                )
                continue
            # Move whichever needs the smaller turn round the pot.
            options = []
            for moving, fixed in ((a, b), (b, a)):
                targets = separation_targets_mm(moving, fixed, POT_OUT_MIN_GAP_MM, scene.pot_center_mm)
                if targets:
                    options.append((math.dist(moving.center_mm, targets[0]), moving.wink_id, moving, fixed))
            moving, fixed = min(options)[2:] if options else (a, b)
            propose(moving, fixed, f"{a_id} and {b_id} are {gap:.1f} mm apart")
    return tuple(rulings)


def judge_pot_contents(scene: TiddlywinksScene) -> tuple[Ruling, ...]:
    """TW 5(c): a pot whose inside is a wink colour hides potted winks of that colour from the camera, and a cup
    seen obliquely or holding a pile can hide a wink of a colour short of its six, so those counts come from the
    umpire (and the score with it), never from a silent miss."""
    rulings = []
    color = scene.pot_hides_color
    if color is not None:
        rulings.append(Ruling(game="tiddlywinks", rule="TW 5(c)", decision=Decision.REFER_TO_UMPIRE,
                              explanation=(f"the pot's inside is {color.value}: {color.value} winks in it cannot be "
                                           f"told from its wall, so the {color.value} potted count comes from the "
                                           "umpire, not the photograph"),
                              colors=(color,), confidence=1.0))
    # a colour short of its six whose missing wink the cup can hide from the camera: it may be potted, unseen
    share = scene.pot_floor_hidden_share
    unseen = "" if share is None else f"; {100 * share:.0f} % of the cup's floor is out of the camera's view"
    evidence = {} if share is None else {"pot_floor_hidden_ratio": share}
    for c in scene.pot_may_hide:
        if c == color:
            continue
        rulings.append(Ruling(game="tiddlywinks", rule="TW 5(c)", decision=Decision.REFER_TO_UMPIRE,
                              explanation=(f"fewer than six {c.value} winks are seen and a {c.value} wink may be "
                                           f"hidden in the pot (behind its wall or under the winks in it{unseen}): "
                                           f"the {c.value} potted count comes from the umpire"),
                              colors=(c,), evidence=dict(evidence), confidence=1.0))
    return tuple(rulings)

