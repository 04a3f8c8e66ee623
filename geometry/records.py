"""Plain-dict records of tiddlywinks scenes: the one JSON shape shared by scene files, simulator truth and
``tableref analyze`` output (``pieces[]``), so a benchmark can compare truth and detection field by field.

The pydantic wire models in ``api/schemas.py`` validate this shape at the edge and publish its JSON Schema.
"""

from __future__ import annotations

from typing import Any

from geometry import tiddlywinks as tw
from geometry.types import (
    DEFAULT_CORNER_SIGNS,
    Color,
    GameType,
    GeometryError,
    TiddlywinksScene,
    Wink,
    WinkSize,
)


def wink_record(wink: Wink, scene: TiddlywinksScene, relations: tuple[tw.SquopRelation, ...]) -> dict[str, Any]:
    """One ``pieces[]`` entry with the derived states (exact predicates, no uncertainty applied)."""
    uppers = {r.upper_id for r in relations}
    lowers = {r.lower_id for r in relations}
    above = sorted(r.lower_id for r in relations if r.upper_id == wink.wink_id)
    in_play = wink.on_field_candidate and not wink.unplayed
    sign = scene.corner_signs[wink.color]
    return {
        "id": wink.wink_id,
        "color": wink.color.value,
        "size": wink.size.value,
        "center_mm": [round(wink.center_mm[0], 4), round(wink.center_mm[1], 4)],
        "radius_mm": wink.radius_mm,
        "uncertainty_mm": wink.position_sigma_mm,
        "z_mm": round(wink.z_mm, 4),
        "tilt_deg": round(wink.tilt_deg, 4),
        "tilt_azimuth_deg": round(wink.tilt_azimuth_deg, 4),
        "potted": wink.potted,
        "off_mat": wink.off_mat,
        "unplayed": wink.unplayed,
        "out_of_bounds": bool(in_play and tw.is_out_of_bounds(wink)),
        "behind_baseline": bool(not wink.potted and tw.is_behind_baseline(wink, sign)),
        "squopped": wink.wink_id in lowers,
        "squopping": wink.wink_id in uppers,
        "above": above,
        "confidence": wink.confidence,
    }


def scene_to_document(scene: TiddlywinksScene) -> dict[str, Any]:
    """The scene as a JSON-ready document (``game``, ``pieces``, ``pot``, game facts)."""
    relations = tw.squop_relations(scene)
    doc: dict[str, Any] = {
        "game": "tiddlywinks",
        "game_type": scene.game_type.value,
        "pieces": [wink_record(w, scene, relations) for w in scene.winks],
        "pot": {"center_mm": list(scene.pot_center_mm),
                "hides_color": None if scene.pot_hides_color is None else scene.pot_hides_color.value,
                "may_hide": [c.value for c in scene.pot_may_hide]},
        "squops": [[r.upper_id, r.lower_id] for r in relations],
        "piles": [sorted(p) for p in tw.piles(relations)],
    }
    if scene.pot_floor_hidden_share is not None:
        doc["pot"]["floor_hidden_share"] = scene.pot_floor_hidden_share
    if scene.squidge_off_winner is not None:
        doc["squidge_off_winner"] = scene.squidge_off_winner.value
    if scene.potted_out_order:
        doc["potted_out_order"] = [[c.value for c in group] for group in scene.potted_out_order]
    if scene.eps_mm is not None:
        doc["eps_mm"] = scene.eps_mm
    if scene.unplayed_corners is not None:
        doc["unplayed_corners"] = [c.value for c in scene.unplayed_corners]
    if scene.last_shot_color is not None:
        doc["last_shot_color"] = scene.last_shot_color.value
    if scene.corner_signs != DEFAULT_CORNER_SIGNS:
        doc["corner_signs"] = {c.value: list(s) for c, s in scene.corner_signs.items()}
    return doc


def _wink_from_record(rec: dict[str, Any], explicit_above: bool) -> Wink:
    try:
        size = rec["size"]
        return Wink(
            wink_id=str(rec["id"]),
            color=Color(rec["color"]),
            size=size,
            center_mm=tuple(rec["center_mm"]),
            z_mm=float(rec.get("z_mm", 0.75)),
            tilt_deg=float(rec.get("tilt_deg", 0.0)),
            tilt_azimuth_deg=float(rec.get("tilt_azimuth_deg", 0.0)),
            above=tuple(rec["above"]) if explicit_above and rec.get("above") is not None else None,
            potted=bool(rec.get("potted", False)),
            off_mat=bool(rec.get("off_mat", False)),
            unplayed=bool(rec.get("unplayed", False)),
            position_sigma_mm=float(rec.get("uncertainty_mm", 0.0)),
            confidence=float(rec.get("confidence", 1.0)),
            # Only a radius that differs from the nominal one for the size overrides it.
            radius_override_mm=(float(rec["radius_mm"])
                                if rec.get("radius_mm") not in (None, WinkSize(size).radius_mm) else None),
        )
    except KeyError as exc:
        raise GeometryError(f"piece {rec.get('id', '?')!r} lacks field {exc.args[0]!r}") from None
    except (TypeError, ValueError) as exc:
        if isinstance(exc, GeometryError):
            raise
        raise GeometryError(f"piece {rec.get('id', '?')!r} is malformed: {exc}") from None


def scene_from_document(doc: dict[str, Any]) -> TiddlywinksScene:
    """Rebuild a scene from a document; ``above`` lists are authoritative when the document says so.

    A document with ``"above_is_explicit": false`` (or pieces without ``above``) lets heights and tilts decide
    the vertical order instead.
    """
    if doc.get("game", "tiddlywinks") != "tiddlywinks":
        raise GeometryError(f"not a tiddlywinks scene: game={doc.get('game')!r}")
    pieces = doc.get("pieces")
    if not isinstance(pieces, list):
        raise GeometryError("scene has no 'pieces' list")
    explicit = bool(doc.get("above_is_explicit", True))
    winks = tuple(_wink_from_record(p, explicit) for p in pieces)
    return TiddlywinksScene(
        winks=winks,
        game_type=GameType(doc.get("game_type", "pairs")),
        pot_center_mm=tuple(doc.get("pot", {}).get("center_mm", (0.0, 0.0))),
        squidge_off_winner=doc.get("squidge_off_winner"),
        potted_out_order=tuple(tuple(g) for g in doc.get("potted_out_order", ())),
        eps_mm=doc.get("eps_mm"),
        unplayed_corners=(tuple(doc["unplayed_corners"]) if doc.get("unplayed_corners") is not None else None),
        last_shot_color=doc.get("last_shot_color"),
        pot_hides_color=(doc.get("pot") or {}).get("hides_color"),
        pot_may_hide=tuple((doc.get("pot") or {}).get("may_hide", ())),
        pot_floor_hidden_share=(doc.get("pot") or {}).get("floor_hidden_share"),
        corner_signs={Color(c): tuple(s) for c, s in doc.get("corner_signs", DEFAULT_CORNER_SIGNS).items()},
    )
