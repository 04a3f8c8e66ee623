"""Tiddly-Wink dominoes for the CLI and the service: a photo's tiles and layout with rulings, hands, overlay.

``tableref analyze IMAGE --game dominoes`` and the HTTP analysis route call :func:`analyze_dominoes_photo`;
``tableref dominoes-hands`` calls :func:`settle_hands`. Vision finds and reads the tiles (pixels), this module
puts them on the table (a calibration's camera, or the tiles' own size from straight above), and the
adjudicator rules on the layout (DM P2) and the hands (DM A3).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from adjudicator.dominoes import judge_deal, judge_hand_end, judge_joins, parse_variant
from adjudicator.types import Decision
from api.camera_input import camera_from
from geometry.dominoes import (
    NOMINAL_TILE_THICKNESS_MM,
    NOMINAL_TILE_WIDTH_MM,
    Bone,
    PlacedTile,
    find_joins,
    free_ends,
    tiles_beyond_free_ends,
)
from vision.dominoes import (
    DEFAULT_DOMINO_PARAMS,
    DominoDetectorParams,
    TileDetection,
    detect_dominoes,
    face_share,
)
from vision.dominoes_plane import fit_tile_plane

GAME = "dominoes"
# Where an unseen tile would close a gap in the line, at least this share of the place shows a tile's face colour
# (a tile there, missed); less is bare table: no tile, no gap.
UNSEEN_TILE_FACE_SHARE = 0.3


class DominoesInputError(ValueError):
    """An input to the dominoes service is unusable; the message names it."""


def _camera(calibration):
    return camera_from(calibration, DominoesInputError)


def _to_table(dets: tuple[TileDetection, ...], camera, image_size_wh: tuple[int, int]
              ) -> tuple[list[np.ndarray], dict[str, Any]]:
    """Each tile's quad in table mm. With a camera: the rays through its corners meet the plane of the tile
    tops. Without: the plane of the tile tops fitted to the tiles read (``vision.dominoes_plane``), scaled so the
    set's tile is the nominal width; with too few tiles for that, straight above, scaled so the median tile is the
    nominal width (the frame is then the image's, y up, origin at the image centre)."""
    quads = [np.asarray(d.quad_px, float) for d in dets]
    if camera is not None:
        out = [camera.image_to_table_mm(q, NOMINAL_TILE_THICKNESS_MM) for q in quads]
        return out, {"source": "camera", "camera": camera.to_dict()}
    plane = fit_tile_plane([np.asarray(d.quad_px) for d in dets if d.face_up and d.pips is not None],
                           image_size_wh)
    if plane is not None:
        # the plane of the tile tops fitted to the tiles read: every tile the same rectangle in it, so gaps and
        # angles come out right on a tilted view too (the overhead assumption stretches them across the picture)
        mm_per_unit = NOMINAL_TILE_WIDTH_MM / plane.width
        H = plane.plane_from_image
        out = [_plane_to_mm(cv2.perspectiveTransform(q.reshape(-1, 1, 2), H).reshape(-1, 2), mm_per_unit)
               for q in quads]
        return out, {"source": "tile_plane", "mm_per_unit": mm_per_unit,
                     "plane_from_image": [[float(v) for v in row] for row in H],
                     "note": f"no calibration: the plane of the tile tops fitted to the {sum(d.pips is not None for d in dets)}"
                             f" tiles read, tiles taken as {NOMINAL_TILE_WIDTH_MM:g} mm wide"}
    widths = [d.width_px for d in dets if d.face_up] or [d.width_px for d in dets]
    mm_per_px = NOMINAL_TILE_WIDTH_MM / float(np.median(widths)) if widths else 1.0
    cx, cy = image_size_wh[0] / 2, image_size_wh[1] / 2
    out = [np.column_stack([(q[:, 0] - cx) * mm_per_px, (cy - q[:, 1]) * mm_per_px]) for q in quads]
    return out, {"source": "tile_scale_assumed", "mm_per_px": mm_per_px,
                 "note": f"no calibration: overhead view assumed, tiles taken as {NOMINAL_TILE_WIDTH_MM:g} mm wide"}


def _to_image(quad_mm: np.ndarray, camera, cal: dict[str, Any], image_size_wh: tuple[int, int]) -> np.ndarray:
    """A quad in table mm (tile tops) back to pixels: the inverse of :func:`_to_table`."""
    if camera is not None:
        pts = np.column_stack([quad_mm, np.full(len(quad_mm), NOMINAL_TILE_THICKNESS_MM)])
        return camera.project_mm(pts)
    if cal["source"] == "tile_plane":
        plane_pts = np.column_stack([quad_mm[:, 0], -quad_mm[:, 1]]) / cal["mm_per_unit"]
        H = np.linalg.inv(np.asarray(cal["plane_from_image"], float))
        return cv2.perspectiveTransform(plane_pts.reshape(-1, 1, 2), H).reshape(-1, 2)
    s = cal["mm_per_px"]
    return np.column_stack([quad_mm[:, 0] / s + image_size_wh[0] / 2, image_size_wh[1] / 2 - quad_mm[:, 1] / s])


def _plane_to_mm(pts: np.ndarray, mm_per_unit: float) -> np.ndarray:
    """Points of the tile plane (image-like axes, y down) in mm with y up, as the table frame has it."""
    return np.column_stack([pts[:, 0], -pts[:, 1]]) * mm_per_unit


def placed_tile(det: TileDetection, quad_mm: np.ndarray) -> PlacedTile:
    """The geometry of a detection: centre, direction (towards half b), width and length in table mm."""
    q = np.asarray(quad_mm, float)
    mid_a, mid_b = (q[0] + q[1]) / 2, (q[2] + q[3]) / 2
    axis = mid_b - mid_a
    length = float(np.linalg.norm(axis))
    width = float((np.linalg.norm(q[1] - q[0]) + np.linalg.norm(q[2] - q[3])) / 2)
    bone = Bone(a=det.pips[0], b=det.pips[1]) if det.face_up and det.pips is not None else None
    return PlacedTile(tile_id=det.tile_id, center_mm=tuple(q.mean(axis=0)),
                      angle_deg=float(np.degrees(np.arctan2(axis[1], axis[0]))), width_mm=max(width, 1e-3),
                      length_mm=max(length, 1e-3), bone=bone, face_up=det.face_up,
                      confidence=float(min(max(det.confidence, 0.0), 1.0)))


def _connected_pieces(ids: list[str], joins) -> int:
    parent = {i: i for i in ids}

    def find(i: str) -> str:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for j in joins:
        parent[find(j.tile_id)] = find(j.other_id)
    return len({find(i) for i in ids})


def layout_of(tiles: list[PlacedTile], room_is_empty: Callable[[PlacedTile], bool] | None = None
              ) -> dict[str, Any]:
    """Joins between touching tiles, the layout's tiles (those in a join), its free ends, and legality: False
    with a bad join, None when a tile in a join could not be read (or lies face down), when the line is seen in
    pieces, or when a tile lies a tile's length beyond an open end (``gaps``: one between them went unseen),
    else True. ``room_is_empty`` (from the photo) clears a gap where no unseen tile can lie (bare table)."""
    joins = find_joins(tiles)
    in_layout = sorted({j.tile_id for j in joins} | {j.other_id for j in joins})
    ends = free_ends(tiles, joins)
    by_id = {t.tile_id: t for t in tiles}
    bad = [j for j in joins if j.matches is False]
    unread = [j for j in joins if j.matches is None]
    pieces = _connected_pieces(in_layout, joins)
    # a tile one tile length beyond an open end: the tile between them (and its joins) went unseen
    beyond = tiles_beyond_free_ends(tiles, joins, ends) if joins else ()
    if room_is_empty is not None:
        beyond = tuple(g for g in beyond if not room_is_empty(g.unseen))
    return {
        "tile_ids": in_layout,
        "joins": [{"tile": j.tile_id, "half": j.half, "other": j.other_id, "other_half": j.other_half,
                   "pips": j.pips, "other_pips": j.other_pips, "matches": j.matches, "gap_mm": round(j.gap_mm, 2),
                   "crosswise": j.crosswise} for j in joins],
        "open_ends": [{"tile": tid, "half": h, "pips": by_id[tid].pips(h)} for tid, h in ends],
        # a line of play is one piece: seen in several, a tile between them was not found, so no "legal"
        "legal": False if bad else (None if unread or not joins or pieces > 1 or beyond else True),
        "bad_joins": len(bad),
        "pieces": pieces,
        "gaps": [{"tile": g.tile_id, "half": g.half, "beyond": g.other_id,
                  "unseen_outline_mm": [[round(x, 2), round(y, 2)] for x, y in g.unseen.outline_mm()]}
                 for g in beyond],
        "_joins": joins,
    }


def analyze_dominoes_photo(frame_bgr: np.ndarray, calibration=None, *, image_path: str | None = None,
                           variant: str = "british", params: DominoDetectorParams = DEFAULT_DOMINO_PARAMS
                           ) -> dict[str, Any]:
    """The analysis document of one photograph: tiles (pixels and table mm, pips or the reason they are not
    read, face up or down), the layout (joins, open ends, legal or not) and the DM P2 rulings."""
    v = parse_variant(variant)
    if not isinstance(frame_bgr, np.ndarray) or frame_bgr.ndim != 3:
        raise DominoesInputError("the photo must be a colour image")
    camera = _camera(calibration)
    t0 = time.perf_counter()
    dets = detect_dominoes(frame_bgr, params)
    t_detect = time.perf_counter() - t0
    h, w = frame_bgr.shape[:2]
    quads_mm, cal = _to_table(dets, camera, (w, h))
    placed = [placed_tile(d, q) for d, q in zip(dets, quads_mm)]

    def room_is_empty(unseen: PlacedTile) -> bool:
        quad_px = _to_image(np.asarray(unseen.outline_mm(), float), camera, cal, (w, h))
        return face_share(frame_bgr, quad_px, dets, params) < UNSEEN_TILE_FACE_SHARE

    layout = layout_of(placed, room_is_empty)
    for g in layout["gaps"]:
        px = _to_image(np.asarray(g["unseen_outline_mm"], float), camera, cal, (w, h))
        g["unseen_outline_px"] = [[round(float(x), 2), round(float(y), 2)] for x, y in px]
    joins = layout.pop("_joins")
    rulings = [r.to_dict() for r in judge_joins(joins)] if joins else []
    tiles = []
    for d, p, q in zip(dets, placed, quads_mm):
        rec = d.to_dict()
        rec.update({"outline_mm": [[round(float(x), 2), round(float(y), 2)] for x, y in q],
                    "center_mm": [round(v_, 2) for v_ in p.center_mm], "angle_deg": round(p.angle_deg % 360, 2),
                    "width_mm": round(p.width_mm, 2), "length_mm": round(p.length_mm, 2),
                    "in_layout": d.tile_id in layout["tile_ids"]})
        tiles.append(rec)
    open_note = ("American: a single arm, one of these ends is the open end (the other is the lead's)"
                 if v.value == "american" else "British: both ends of the line are open")
    layout["open_ends_note"] = open_note
    return {
        "game": GAME,
        "variant": v.value,
        "image": {"path": image_path, "size_wh_px": [w, h]},
        "tiles": tiles,
        "counts": {"tiles": len(dets), "face_up": sum(d.face_up for d in dets),
                   "face_down": sum(not d.face_up for d in dets),
                   "unreadable": sum(1 for d in dets if d.face_up and d.pips is None)},
        "layout": layout,
        "rulings": rulings,
        "calibration": cal,
        "timing_ms": {"detect": round(t_detect * 1000, 1)},
    }


# --- hands (DM A3) ---------------------------------------------------------------------------------------------


def hand_of(doc: dict[str, Any]) -> list[str | None]:
    """The tiles of a hand photo: ``"a-b"`` for each read tile, None for a tile that could not be read (a face-
    down tile in a hand photo is a tile whose pips are not shown: unread too)."""
    out: list[str | None] = []
    for t in doc["tiles"]:
        out.append(f"{t['pips'][0]}-{t['pips'][1]}" if t["face_up"] and t["pips"] is not None else None)
    return out


def _hand_entry(player: str, image: str, tiles: list[str | None]) -> dict[str, Any]:
    read = [t for t in tiles if t is not None]
    return {"player": player, "image": image, "tiles": tiles, "tile_count": len(tiles),
            "unread": sum(t is None for t in tiles),
            "pips": None if len(read) != len(tiles) else sum(Bone.parse(t).total_pips for t in read),
            "known_pips": sum(Bone.parse(t).total_pips for t in read)}


def _settled(per_hand: list[dict[str, Any]], *, players: int | None, variant: str, max_pips: int,
             boneyard: int | None, unplaced: list[str | None] | None = None) -> dict[str, Any]:
    """The hands' document: the blocked hand's winner (DM A3, ties share by DM I-4) and, given the players and the
    boneyard, the deal check."""
    ruling = judge_hand_end(variant, {h["player"]: h["tiles"] for h in per_hand}, unplaced=unplaced or ())
    rulings = [ruling.to_dict()]
    if players is not None and boneyard is not None:
        rulings.append(judge_deal(variant, players, max_pips, boneyard=boneyard).to_dict())
    winners = list(ruling.colors) if ruling.decision is Decision.WINNER else []
    return {"game": GAME, "variant": parse_variant(variant).value, "hands": per_hand, "winners": winners,
            "decision": ruling.decision.value, "rulings": rulings}


def settle_hands(frames: list[tuple[str, np.ndarray]], *, players: int | None = None, variant: str = "british",
                 max_pips: int = 6, boneyard: int | None = None) -> dict[str, Any]:
    """One photo per remaining hand -> each pip total (DM P5) and the winner of a blocked hand (DM A3, ties share
    by DM I-4). With ``players``, the photos must be one per player."""
    if not frames:
        raise DominoesInputError("no hand photos given")
    if players is not None and players != len(frames):
        raise DominoesInputError(f"{players} players but {len(frames)} hand photos: give one photo per hand")
    per_hand: list[dict[str, Any]] = []
    for name, frame in frames:
        doc = analyze_dominoes_photo(frame, image_path=name, variant=variant)
        key = Path(name).stem
        if any(h["player"] == key for h in per_hand):
            key = f"{key}#{len(per_hand) + 1}"
        per_hand.append(_hand_entry(key, name, hand_of(doc)))
    return _settled(per_hand, players=players, variant=variant, max_pips=max_pips, boneyard=boneyard)


Region = tuple[str, tuple[float, float, float, float]]


def parse_region(text: str) -> Region:
    """``NAME=X0,Y0,X1,Y1``: a player's hand region, a box in the photo's pixels."""
    name, sep, box = text.partition("=")
    try:
        x0, y0, x1, y1 = (float(v) for v in box.split(","))
    except ValueError:
        raise DominoesInputError(f"region {text!r}: expected NAME=X0,Y0,X1,Y1 in pixels") from None
    if not sep or not name.strip():
        raise DominoesInputError(f"region {text!r}: expected NAME=X0,Y0,X1,Y1 in pixels (the player's name first)")
    if x1 <= x0 or y1 <= y0:
        raise DominoesInputError(f"region {text!r}: X1 must exceed X0 and Y1 exceed Y0")
    return name.strip(), (x0, y0, x1, y1)


def _inside(box: tuple[float, float, float, float], xy) -> bool:
    return box[0] <= xy[0] <= box[2] and box[1] <= xy[1] <= box[3]


def settle_hands_in_regions(name: str, frame: np.ndarray, regions: list[Region], *, variant: str = "british",
                            max_pips: int = 6, boneyard: int | None = None) -> dict[str, Any]:
    """One photo of every remaining hand, each laid in its player's marked region (a box in the photo) -> the same
    document as :func:`settle_hands`. A tile belongs to the region holding its centre. A tile in no region is
    listed under ``outside_regions`` and makes the result undecided if it could change it (it may belong to any
    hand: never silently dropped); regions that overlap are refused, since a tile there would count twice."""
    if len(regions) < 2:
        raise DominoesInputError(f"{len(regions)} hand region given: mark one region per player (at least 2)")
    names = [r[0] for r in regions]
    if len(set(names)) != len(names):
        raise DominoesInputError(f"hand regions {names}: each player's name once")
    h, w = frame.shape[:2]
    for i, (na, a) in enumerate(regions):
        if a[2] <= 0 or a[3] <= 0 or a[0] >= w or a[1] >= h:
            raise DominoesInputError(f"region {na!r} {a} lies outside the {w}x{h} photo")
        for nb, b in regions[i + 1:]:
            if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]:
                raise DominoesInputError(f"regions {na!r} and {nb!r} overlap: a tile there would count for both")
    doc = analyze_dominoes_photo(frame, image_path=name, variant=variant)
    tiles = hand_of(doc)
    held: dict[str, list[str | None]] = {n: [] for n in names}
    outside: list[dict[str, Any]] = []
    for t, reading in zip(doc["tiles"], tiles):
        owner = next((n for n, box in regions if _inside(box, t["center_px"])), None)
        if owner is None:
            outside.append({"id": t["id"], "tile": reading, "center_px": t["center_px"]})
        else:
            held[owner].append(reading)
    per_hand = [_hand_entry(n, name, held[n]) for n in names]
    out = _settled(per_hand, players=len(names), variant=variant, max_pips=max_pips, boneyard=boneyard,
                   unplaced=[o["tile"] for o in outside])
    out["outside_regions"] = outside
    return out


# --- overlay and summary ---------------------------------------------------------------------------------------


def annotate_dominoes(frame_bgr: np.ndarray, doc: dict[str, Any]) -> np.ndarray:
    """A copy of the photo with each tile's outline and reading (green read, red unreadable, grey face down),
    every bad join as a red line between the two tiles, and in orange where an unseen tile would close a gap."""
    out = frame_bgr.copy()
    scale = max(1.0, min(out.shape[:2]) / 900)
    centers = {}
    for t in doc.get("tiles", []):
        q = np.round(np.asarray(t["outline_px"], float)).astype(np.int32)
        colour = (150, 150, 150) if not t["face_up"] else ((0, 200, 0) if t["pips"] is not None else (0, 0, 255))
        cv2.polylines(out, [q], True, colour, max(1, int(2 * scale)), cv2.LINE_AA)
        label = "down" if not t["face_up"] else ("?" if t["pips"] is None else f"{t['pips'][0]}|{t['pips'][1]}")
        c = tuple(int(v) for v in t["center_px"])
        centers[t["id"]] = c
        cv2.putText(out, label, (c[0] - int(12 * scale), c[1] + int(5 * scale)), cv2.FONT_HERSHEY_SIMPLEX,
                    0.5 * scale, (0, 0, 0), max(1, int(3 * scale)), cv2.LINE_AA)
        cv2.putText(out, label, (c[0] - int(12 * scale), c[1] + int(5 * scale)), cv2.FONT_HERSHEY_SIMPLEX,
                    0.5 * scale, (255, 255, 255), max(1, int(scale)), cv2.LINE_AA)
    for j in doc.get("layout", {}).get("joins", []):
        if j["matches"] is False and j["tile"] in centers and j["other"] in centers:
            cv2.line(out, centers[j["tile"]], centers[j["other"]], (0, 0, 255), max(2, int(3 * scale)), cv2.LINE_AA)
    for g in doc.get("layout", {}).get("gaps", []):
        if "unseen_outline_px" not in g:
            continue
        # where an unseen tile would join an open end to a lone tile: the reason the layout is undecided
        q = np.round(np.asarray(g["unseen_outline_px"], float)).astype(np.int32)
        cv2.polylines(out, [q], True, (0, 165, 255), max(1, int(2 * scale)), cv2.LINE_AA)
        c = tuple(int(v) for v in q.mean(axis=0))
        cv2.putText(out, "unseen?", (c[0] - int(25 * scale), c[1] + int(5 * scale)), cv2.FONT_HERSHEY_SIMPLEX,
                    0.5 * scale, (0, 165, 255), max(1, int(scale)), cv2.LINE_AA)
    return out


def summary_lines(doc: dict[str, Any]) -> list[str]:
    c = doc["counts"]
    lay = doc["layout"]
    lines = [(f"{c['tiles']} tiles: {c['face_up']} face up ({c['unreadable']} unreadable), {c['face_down']} face down; "
             f"calibration {doc['calibration']['source']}")]
    for t in doc["tiles"]:
        what = ("face down" if not t["face_up"] else
                f"{t['pips'][0]}|{t['pips'][1]}" if t["pips"] is not None else "UNREADABLE: " + "; ".join(t["reasons"]))
        lines.append(f"  {t['id']}: {what}{' (layout)' if t['in_layout'] else ''}")
    gaps = f", a tile's length gap at {len(lay['gaps'])} open ends" if lay.get("gaps") else ""
    legal = {None: f"undecided (an unread tile, or the line seen in {lay['pieces']} pieces{gaps})", True: "legal",
             False: f"ILLEGAL ({lay['bad_joins']} bad joins)"}
    lines.append(f"layout: {len(lay['tile_ids'])} tiles, {len(lay['joins'])} joins, {legal[lay['legal']]}; open ends "
                 + (", ".join(f"{e['tile']}.{e['half']}={e['pips']}" for e in lay["open_ends"]) or "none"))
    for r in doc["rulings"]:
        lines.append(f"  [{r['rule']}] {r['decision']}: {r['explanation']}")
    return lines
