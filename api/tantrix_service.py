"""Tantrix for the CLI and the service: a photo's tiles on the hex grid, with the position's rulings and scores.

``tableref analyze IMAGE --game tantrix`` and the HTTP analysis route call :func:`analyze_tantrix_photo`;
``tableref tantrix-move`` calls :func:`judge_move_photos`. Vision reads the tiles (``vision.tantrix``), this
module writes the scene document of the contract (the simulator's truth has the same shape), and the
adjudicator rules on the board it holds (:func:`adjudicator.tantrix.judge_board`). Everything after the reading
works on documents, so a truth document is judged exactly as a photo's.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from adjudicator.tantrix import (
    align_board,
    endgame_from_counts,
    judge_board,
    judge_placement,
)
from adjudicator.types import Decision, Ruling
from api.camera_input import camera_from
from geometry.tantrix import (
    DIRECTION_NAMES,
    EDGE_COUNT,
    Board,
    Hex,
    LinkColor,
    TantrixError,
    neighbour,
    neighbours,
)

GAME = "tantrix"
PLAYERS = ("A", "B")
TILE_THICKNESS_MM = 5.0


class TantrixInputError(ValueError):
    """An input to the Tantrix service is unusable; the message names it."""


def parse_players(text: str | None) -> dict[str, str] | None:
    """``"red,yellow"`` -> ``{"A": "red", "B": "yellow"}`` (A's hand is nearest the image bottom)."""
    if text is None or not str(text).strip():
        return None
    parts = [p.strip() for p in str(text).split(",")]
    if len(parts) != 2:
        raise TantrixInputError(f"--players needs two colours like 'red,yellow', got {text!r}")
    try:
        colours = [LinkColor.parse(p).value for p in parts]
    except TantrixError as exc:
        raise TantrixInputError(f"--players: {exc}") from None
    if colours[0] == colours[1]:
        raise TantrixInputError(f"the two players need different colours, got {text!r}")
    return dict(zip(PLAYERS, colours))


# --- reading -> document ----------------------------------------------------------------------------------------


def _r(v: Any, nd: int = 2) -> Any:
    if isinstance(v, (list, tuple, np.ndarray)):
        return [_r(x, nd) for x in v]
    return None if v is None else round(float(v), nd)


def reading_document(reading: Any, *, image_path: str | None = None, camera: Any = None) -> dict[str, Any]:
    """The contract's scene document of a ``vision.tantrix.TantrixReading`` (before any ruling)."""
    tiles = []
    for t in reading.tiles:
        tiles.append({
            "id": t.tile_id, "number": t.number, "rotation": t.rotation,
            "hex": None if t.hex is None else [int(t.hex[0]), int(t.hex[1])],
            "place": t.place, "player": t.player, "center_mm": _r(t.center_mm), "center_px": _r(t.center_px, 1),
            "angle_deg": _r(t.angle_deg), "confidence": _r(t.confidence, 3), "flagged": bool(t.flagged),
            "outline_px": _r(t.outline_px, 1),
            "edge_colors": [None if c is None else str(getattr(c, "value", c)) for c in t.edge_colors],
        })
    cal: dict[str, Any] = {"source": reading.source,
                           "plane_to_image": [[float(x) for x in row] for row in reading.plane_to_image]}
    if camera is not None:
        cal["camera"] = camera.to_dict()
    return {
        "game": GAME,
        "image": {"path": image_path, "size_wh_px": [int(v) for v in reading.image_size_wh_px]},
        "tile_geometry": {"flat_to_flat_mm": _r(reading.flat_to_flat_mm), "thickness_mm": TILE_THICKNESS_MM},
        "colorblind": bool(reading.colorblind),
        "lattice": {"origin_mm": _r(reading.lattice_origin_mm), "angle_deg": _r(reading.lattice_angle_deg)},
        "tiles": tiles,
        # found like tiles while all 56 faces are read elsewhere, each once: not tiles of this set
        "not_tiles": [{"id": t.tile_id, "center_px": _r(t.center_px, 1), "outline_px": _r(t.outline_px, 1)}
                      for t in getattr(reading, "not_tiles", ())],
        "calibration": cal,
    }


# --- document -> board ------------------------------------------------------------------------------------------


def _hex(v: Any) -> Hex | None:
    return None if v is None else (int(v[0]), int(v[1]))


def board_of(doc: dict[str, Any]) -> dict[str, Any]:
    """The position a document shows: the board of read tiles, the hexes holding an unread tile, the doubtful
    (flagged but read) ones, the hands, and the id of the tile on each hex. A number read twice, or two tiles on
    one hex, keeps the more confident reading and treats the other hex as unread (a note says so)."""
    tiles: dict[Hex, tuple[int, int]] = {}
    ids: dict[Hex, str] = {}
    conf: dict[Hex, float] = {}
    unread: set[Hex] = set()
    doubtful: set[Hex] = set()
    notes: list[str] = []
    hands: dict[str, list[int]] = {p: [] for p in PLAYERS}
    hand_unread = 0
    hand_seen = False
    by_number: dict[int, Hex] = {}
    for t in doc.get("tiles", []):
        if t.get("place") == "hand":
            hand_seen = True
            if t.get("number") is None or t.get("flagged"):
                hand_unread += 1
            elif t.get("player") in hands:
                hands[t["player"]].append(int(t["number"]))
            continue
        h = _hex(t.get("hex"))
        if h is None:
            notes.append(f"{t.get('id')}: on the board but not on the hex grid")
            continue
        c = float(t.get("confidence", 1.0) or 0.0)
        if h in ids:
            notes.append(f"{t.get('id')} and {ids[h]} both read at hex {h}")
            if c <= conf[h]:
                continue
        n, rot = t.get("number"), t.get("rotation")
        ids[h], conf[h] = t.get("id"), c
        tiles.pop(h, None)
        unread.discard(h)
        doubtful.discard(h)
        if n is None or rot is None:
            unread.add(h)
            continue
        n = int(n)
        other = by_number.get(n)
        if other is not None and other != h and other in tiles:
            notes.append(f"tile {n} read twice, at {other} and {h}")
            if conf[other] >= c:
                unread.add(h)
                continue
            del tiles[other]
            doubtful.discard(other)
            unread.add(other)
        by_number[n] = h
        tiles[h] = (n, int(rot) % EDGE_COUNT)
        if t.get("flagged"):
            doubtful.add(h)
    return {"board": Board(tiles), "unread": unread, "doubtful": doubtful, "ids": ids, "notes": notes,
            "hands": hands if hand_seen else None, "hand_unread": hand_unread}


def _players_of(doc: dict[str, Any], players: dict[str, str] | None) -> dict[str, str] | None:
    if players:
        return players
    p = doc.get("players")
    if isinstance(p, dict) and len(p) == 2:
        try:
            return {str(k): LinkColor.parse(v["color"] if isinstance(v, dict) else v).value for k, v in p.items()}
        except (TantrixError, KeyError, TypeError):
            return None
    return None


def _mismatched_edges(board: Board, ids: dict[Hex, str]) -> list[dict[str, Any]]:
    out = []
    for h, p in sorted(board.tiles.items()):
        for k in range(3):
            n = neighbour(h, k)
            if n in board.tiles and p.edge_color(k) is not board[n].edge_color((k + 3) % EDGE_COUNT):
                out.append({"hex": list(h), "other_hex": list(n), "edge": DIRECTION_NAMES[k],
                            "tiles": [ids.get(h), ids.get(n)], "numbers": [p.number, board[n].number],
                            "colors": [p.edge_color(k).value, board[n].edge_color((k + 3) % EDGE_COUNT).value]})
    return out


def _crowded(board: Board, unread: set[Hex]) -> list[list[int]]:
    """Empty hexes with four or more placed neighbours (R2/R3 evidence before the endgame)."""
    occupied = set(board.tiles) | unread
    empties = {n for h in occupied for n in neighbours(h) if n not in occupied}
    return [list(e) for e in sorted(empties) if sum(n in occupied for n in neighbours(e)) >= 4]


def judge_document(doc: dict[str, Any], *, players: dict[str, str] | None = None,
                   endgame: bool | None = None) -> dict[str, Any]:
    """A copy of a scene document with the position's verdict: ``rulings``, ``legal`` (None: the umpire looks),
    ``endgame``, ``forced_spaces`` (with each hand's fitting tiles), ``scores`` per colour, ``player_scores``,
    ``best_lines`` (each colour's scoring line or loop) and ``illegal_edges``."""
    pos = board_of(doc)
    board: Board = pos["board"]
    players = _players_of(doc, players)
    j = judge_board(board, unread=pos["unread"], doubtful=pos["doubtful"], hands=pos["hands"],
                    unread_in_hands=pos["hand_unread"], endgame=endgame, players=players)
    ids = pos["ids"]
    out = dict(doc)
    rulings = [r.to_dict() for r in j.rulings]
    empty = not len(board) and not pos["unread"]
    if empty:  # a photo in which no tile lies on the grid: nothing to call legal
        rulings[0] = Ruling(game=GAME, rule="TX A1", decision=Decision.UNDECIDED,
                            explanation="no Tantrix tile found on the board in this photo").to_dict()
    for note in pos["notes"]:
        rulings.append(Ruling(game=GAME, rule="TX A1", decision=Decision.REFER_TO_UMPIRE,
                              explanation=f"reading conflict: {note}", confidence=0.5).to_dict())
    board_tiles = [t for t in doc.get("tiles", []) if t.get("place") != "hand"]
    out.update({
        "players": {k: {"color": v} for k, v in players.items()} if players else doc.get("players"),
        "counts": {"board": len(board_tiles), "hand": len(doc.get("tiles", [])) - len(board_tiles),
                   "unread": sum(t.get("number") is None for t in doc.get("tiles", [])),
                   "flagged": sum(bool(t.get("flagged")) for t in doc.get("tiles", []))},
        "legal": None if empty else j.legal if not pos["notes"] or j.legal is False else None,
        "endgame": j.endgame,
        "forced_spaces": [{"hex": list(h), "facing": {DIRECTION_NAMES[k]: c.value
                                                      for k, c in sorted(board.facing_colors(h).items())},
                           "blocked": board.is_blocked_space(h), "fits": {p: list(ns) for p, ns in fits.items()}}
                          for h, fits in sorted(j.forced_spaces.items())],
        "crowded_spaces": _crowded(board, pos["unread"]),
        "scores": dict(j.scores),
        "player_scores": dict(j.player_scores),
        "scores_exact": j.scores_exact,
        "best_lines": {c: {"hexes": [list(h) for h in line.hexes], "loop": line.is_loop, "points": line.value,
                           "tile_ids": [ids.get(h) for h in line.hexes]} for c, line in j.best_lines.items()},
        "illegal_edges": _mismatched_edges(board, ids),
        "rulings": rulings,
    })
    return out


def analyze_tantrix_photo(frame_bgr: np.ndarray, calibration: Any = None, *, image_path: str | None = None,
                          players: dict[str, str] | str | None = None, flat_to_flat_mm: float | None = None
                          ) -> dict[str, Any]:
    """The analysis document of one photograph: every tile (face number, rotation, hex or hand), and the
    position's rulings, forced spaces, scores and legal verdict."""
    if not isinstance(frame_bgr, np.ndarray) or frame_bgr.ndim != 3 or frame_bgr.shape[2] != 3:
        raise TantrixInputError("the photo must be a colour image")
    if isinstance(players, str):
        players = parse_players(players)
    if flat_to_flat_mm is not None and not (math.isfinite(flat_to_flat_mm) and 20.0 <= flat_to_flat_mm <= 100.0):
        raise TantrixInputError(f"tile flat-to-flat must be 20-100 mm, got {flat_to_flat_mm!r}")
    camera = camera_from(calibration, TantrixInputError)
    from vision.tantrix import detect_tantrix

    t0 = time.perf_counter()
    reading = detect_tantrix(frame_bgr, camera, flat_to_flat_mm=flat_to_flat_mm)
    t_detect = time.perf_counter() - t0
    doc = reading_document(reading, image_path=image_path, camera=camera)
    t0 = time.perf_counter()
    doc = judge_document(doc, players=players)
    doc["timing_ms"] = {"detect": round(t_detect * 1000, 1), "judge": round((time.perf_counter() - t0) * 1000, 1)}
    return doc


# --- a move between two photos ------------------------------------------------------------------------------------


def judge_move_documents(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """TX A1 on two analysed photos: the tile placed between them and every rule it broke, plus the tiles that
    moved or vanished. The two photos number the grid in their own frames: ``after`` is aligned onto ``before``
    by the tiles both show. Unread tiles or more than one change leave the move to the umpire."""
    b, a = board_of(before), board_of(after)
    bb: Board = b["board"]
    ab: Board = align_board(a["board"], bb) if len(bb) else a["board"]
    before_at = {p.number: h for h, p in bb.tiles.items()}
    after_at = {p.number: h for h, p in ab.tiles.items()}
    added = sorted((after_at[n], n) for n in after_at if n not in before_at)
    vanished = sorted(n for n in before_at if n not in after_at)
    moved = sorted(n for n in before_at if n in after_at and
                   (before_at[n] != after_at[n] or bb[before_at[n]].rotation != ab[after_at[n]].rotation))
    b_hands = b["hands"] or {}
    counts = [len(v) for v in b_hands.values()] if b["hands"] is not None else None
    if counts is not None:
        counts[0] += b["hand_unread"]
    endgame, why = endgame_from_counts(len(bb) + len(b["unread"]), counts)
    rulings: list[Ruling] = []
    placed = None
    unsure = len(b["unread"]) + len(a["unread"]) + len(b["doubtful"]) + len(a["doubtful"])
    if len(added) == 1 and not vanished and not moved:
        h, n = added[0]
        hand = next((tuple(v) for v in b_hands.values() if n in v), None)
        placed = {"number": n, "hex": list(h), "rotation": ab[h].rotation,
                  "player": next((p for p, v in b_hands.items() if n in v), None),
                  "tile_id": a["ids"].get(_unalign(a["board"], ab, h))}
        if h in b["unread"]:
            rulings.append(Ruling(game=GAME, rule="TX A1", decision=Decision.UNDECIDED,
                                  explanation=f"tile {n} at {h} was already there, unread, in the first photo"))
        else:
            rulings += judge_placement(bb, h, n, ab[h].rotation, endgame=endgame, hand=hand)
    else:
        rulings.append(Ruling(game=GAME, rule="TX A1", decision=Decision.UNDECIDED,
                              explanation=f"expected one new tile; added {[n for _, n in added]}, moved {moved}, "
                                          f"vanished {vanished}: the umpire looks",
                              evidence={"added_count": len(added), "moved_count": len(moved),
                                        "removed_count": len(vanished)}))
    if unsure and placed is not None:
        rulings.insert(0, Ruling(game=GAME, rule="TX A1", decision=Decision.TOO_CLOSE_TO_CALL,
                                 explanation=f"{unsure} tile(s) not read for sure in the two photos: the verdict "
                                             "below may change when the umpire looks", confidence=0.5))
    head = next(r for r in rulings if r.rule == "TX A1")
    legal = {Decision.LEGAL: True, Decision.ILLEGAL: False}.get(head.decision)
    return {"game": GAME, "kind": "move", "before": before.get("image", {}).get("path"),
            "after": after.get("image", {}).get("path"), "endgame": endgame, "endgame_note": why,
            "placed": placed, "added": [{"number": n, "hex": list(h)} for h, n in added],
            "moved": [{"number": n, "from_hex": list(before_at[n]), "to_hex": list(after_at[n])} for n in moved],
            "vanished": vanished, "legal": legal, "rulings": [r.to_dict() for r in rulings]}


def _unalign(original: Board, aligned: Board, h: Hex) -> Hex | None:
    """The hex in ``original``'s frame of the tile that sits at ``h`` in ``aligned``."""
    n = aligned[h].number
    return next((x for x, p in original.tiles.items() if p.number == n), None)


def judge_move_photos(before: tuple[str, np.ndarray], after: tuple[str, np.ndarray], calibration: Any = None
                      ) -> dict[str, Any]:
    docs = [analyze_tantrix_photo(frame, calibration, image_path=name) for name, frame in (before, after)]
    return judge_move_documents(*docs)


# --- text --------------------------------------------------------------------------------------------------------


def summary_lines(doc: dict[str, Any]) -> list[str]:
    c = doc.get("counts", {})
    legal = {None: "TOO CLOSE TO CALL (the umpire looks)", True: "legal", False: "ILLEGAL"}[doc.get("legal")]
    lines = [f"{c.get('board', 0)} tiles on the board, {c.get('hand', 0)} in hands ({c.get('unread', 0)} unread, "
             f"{c.get('flagged', 0)} flagged); {'endgame' if doc.get('endgame') else 'before the endgame'}; "
             f"position {legal}; calibration {doc.get('calibration', {}).get('source')}"]
    for t in doc.get("tiles", []):
        where = f"hex {tuple(t['hex'])}" if t.get("hex") is not None else f"{t.get('place')} {t.get('player') or ''}"
        face = "UNREAD" if t.get("number") is None else f"tile {t['number']} rot {t.get('rotation')}"
        lines.append(f"  {t['id']}: {face} at {where.strip()}{' (flagged)' if t.get('flagged') else ''}")
    for f in doc.get("forced_spaces", []):
        fits = "; ".join(f"{p}: {ns or 'none'}" for p, ns in f["fits"].items()) or "hands not visible"
        lines.append(f"  forced space {tuple(f['hex'])}: {fits}")
    lines.append("  scores: " + ", ".join(f"{k} {v}" for k, v in doc.get("scores", {}).items())
                 + ("" if doc.get("scores_exact", True) else " (at least)"))
    for r in doc.get("rulings", []):
        lines.append(f"  [{r['rule']}] {r['decision']}: {r['explanation']}")
    return lines


def move_summary_lines(doc: dict[str, Any]) -> list[str]:
    p = doc.get("placed")
    legal = {None: "undecided", True: "legal", False: "ILLEGAL"}[doc.get("legal")]
    if p:
        who = f" by {p['player']}" if p.get("player") else ""
        lines = [f"placed: tile {p['number']} at hex {tuple(p['hex'])} rotation {p['rotation']}{who} -> {legal}"]
    else:
        lines = [f"no single tile placed -> {legal}"]
    if doc.get("moved"):
        lines.append("  moved: " + ", ".join(f"tile {m['number']} {tuple(m['from_hex'])}->{tuple(m['to_hex'])}"
                                             for m in doc["moved"]))
    if doc.get("vanished"):
        lines.append(f"  vanished: tiles {doc['vanished']}")
    for r in doc.get("rulings", []):
        lines.append(f"  [{r['rule']}] {r['decision']}: {r['explanation']}")
    return lines
