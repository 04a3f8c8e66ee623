"""The umpire's picture of a Tantrix position: the analysis document drawn over the photograph.

Each tile's outline and number (orange with ``?`` when unread or flagged), forced spaces as dashed magenta
hexagons with the hand tiles that fit (red when blocked), empty hexes with four or more neighbours dashed red,
every mismatched shared edge as a thick red line, and each player's
scoring line or loop (each colour's when the players are not known) traced through its tiles in its colour.
Works from the document alone: empty hexes are placed by the homography from the lattice to the tiles' centres.
"""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np

from geometry.tantrix import EDGE_COUNT, Board, Hex, LinkColor, neighbour

_BGR = {"red": (40, 40, 230), "yellow": (0, 215, 255), "blue": (230, 120, 20), "green": (40, 200, 40)}
_ILLEGAL_BGR = (0, 0, 255)
_FORCED_BGR = (255, 0, 255)
_UNSURE_BGR = (0, 150, 255)
_TEXT_BGR = (255, 255, 255)


def _text(img: np.ndarray, s: str, org, scale: float, color=_TEXT_BGR, center: bool = False) -> None:
    th = max(1, int(round(scale * 2)))
    if center:
        (w, h), _ = cv2.getTextSize(s, cv2.FONT_HERSHEY_SIMPLEX, scale, th)
        org = (org[0] - w / 2, org[1] + h / 2)
    org = (int(round(org[0])), int(round(org[1])))
    cv2.putText(img, s, org, cv2.FONT_HERSHEY_SIMPLEX, scale, (0, 0, 0), th + 2, cv2.LINE_AA)
    cv2.putText(img, s, org, cv2.FONT_HERSHEY_SIMPLEX, scale, color, th, cv2.LINE_AA)


def _lattice_xy(h: Hex) -> tuple[float, float]:
    """A hex centre in units of the circumradius, lattice frame (x along edge 0, y up)."""
    return (math.sqrt(3.0) * (h[0] + h[1] / 2.0), -1.5 * h[1])


class HexPixels:
    """Hex -> image pixel: the tiles' own centres where a tile lies, else the lattice-to-image homography fitted
    to them (the tile tops share one plane, so a homography is exact up to how players left the tiles)."""

    def __init__(self, board_tiles: list[dict[str, Any]]):
        self.at: dict[Hex, np.ndarray] = {(int(t["hex"][0]), int(t["hex"][1])): np.asarray(t["center_px"], float)
                                          for t in board_tiles}
        self.H = None
        if len(self.at) >= 4:
            src = np.array([_lattice_xy(h) for h in self.at], np.float64)
            dst = np.array(list(self.at.values()), np.float64)
            H, _ = cv2.findHomography(src, dst, cv2.RANSAC, 0.25 * self._spacing(dst))
            self.H = H
        elif len(self.at) >= 2:
            src = np.array([_lattice_xy(h) for h in self.at], np.float32)
            dst = np.array(list(self.at.values()), np.float32)
            A, _ = cv2.estimateAffinePartial2D(src, dst)
            if A is not None:
                self.H = np.vstack([A, [0, 0, 1]])

    @staticmethod
    def _spacing(pts: np.ndarray) -> float:
        d = np.linalg.norm(pts[:, None] - pts[None], axis=2) + np.eye(len(pts)) * 1e9
        return float(np.median(d.min(axis=1)))

    def __call__(self, h: Hex) -> np.ndarray | None:
        if h in self.at:
            return self.at[h]
        return self.lattice(h)

    def lattice(self, h: Hex) -> np.ndarray | None:
        if self.H is None:
            return None
        p = self.H @ np.array([*_lattice_xy(h), 1.0])
        return p[:2] / p[2] if abs(p[2]) > 1e-12 else None

    def outline(self, h: Hex, shrink: float = 1.0) -> np.ndarray | None:
        """The hexagon of ``h`` (pointy-top: vertices at 30 + 60 k degrees in the lattice frame)."""
        if self.H is None:
            return None
        cx, cy = _lattice_xy(h)
        a = np.radians(30 + 60 * np.arange(6))
        pts = np.column_stack([cx + shrink * np.cos(a), cy + shrink * np.sin(a), np.ones(6)]) @ self.H.T
        return pts[:, :2] / pts[:, 2:3]


def _dashed(img, pts, color, thickness) -> None:
    n = len(pts)
    for i in range(n):
        a, b = np.asarray(pts[i], float), np.asarray(pts[(i + 1) % n], float)
        for s in np.arange(0.0, 1.0, 0.2):
            p0, p1 = a + (b - a) * s, a + (b - a) * min(1.0, s + 0.1)
            cv2.line(img, tuple(np.round(p0).astype(int)), tuple(np.round(p1).astype(int)), color, thickness,
                     cv2.LINE_AA)


def _board(doc: dict[str, Any]) -> Board:
    from api.tantrix_service import board_of
    return board_of(doc)["board"]


def annotate_tantrix(frame_bgr: np.ndarray, doc: dict[str, Any]) -> np.ndarray:
    """A copy of ``frame_bgr`` with the Tantrix analysis ``doc`` drawn on it."""
    img = frame_bgr.copy()
    h_img, w_img = img.shape[:2]
    scale = max(0.45, w_img / 2600.0)
    thick = max(1, int(round(w_img / 900.0)))
    tiles = doc.get("tiles", [])
    on_board = [t for t in tiles if t.get("hex") is not None and t.get("place") != "hand"]
    px = HexPixels(on_board)

    # scoring lines: each player's colour (or every colour), tile centre to tile centre along the links
    board = _board(doc)
    # (drawn first: the tile numbers go on top)
    players = doc.get("players") or {}
    colours = [p["color"] for p in players.values()] if players else list(doc.get("best_lines", {}))
    for i, c in enumerate(colours):
        line = doc.get("best_lines", {}).get(c)
        if not line:
            continue
        color = LinkColor.parse(c)
        hexes = {(int(a), int(b)) for a, b in line["hexes"]}
        bgr = _BGR.get(c, _TEXT_BGR)
        for h in hexes:
            for k in range(3):
                n = neighbour(h, k)
                if (n in hexes and h in board and n in board and board[h].edge_color(k) is color
                        and board[n].edge_color((k + 3) % EDGE_COUNT) is color):
                    a, b = px(h), px(n)
                    if a is not None and b is not None:
                        cv2.line(img, tuple(np.round(a).astype(int)), tuple(np.round(b).astype(int)), (0, 0, 0),
                                 thick * 5 + 2, cv2.LINE_AA)
                        cv2.line(img, tuple(np.round(a).astype(int)), tuple(np.round(b).astype(int)), bgr, thick * 5,
                                 cv2.LINE_AA)
        pts = [px(h) for h in hexes]
        pts = [p for p in pts if p is not None]
        if pts:
            top = min(pts, key=lambda p: p[1])
            who = next((k for k, v in players.items() if v.get("color") == c), None)
            label = f"{who + ': ' if who else ''}{c} {'loop' if line['loop'] else 'line'} {line['points']}"
            _text(img, label, (top[0], top[1] - (30 + 26 * i) * scale), scale, bgr, center=True)

    # tiles: outline and number
    for t in tiles:
        unsure = t.get("number") is None or t.get("flagged")
        colour = _UNSURE_BGR if unsure else (200, 200, 200)
        if t.get("outline_px"):
            q = np.round(np.asarray(t["outline_px"], float)).astype(np.int32)
            cv2.polylines(img, [q.reshape(-1, 1, 2)], True, colour, thick + (1 if unsure else 0), cv2.LINE_AA)
        label = "?" if t.get("number") is None else str(t["number"]) + ("?" if t.get("flagged") else "")
        _text(img, label, t["center_px"], scale * 1.1, _UNSURE_BGR if unsure else _TEXT_BGR, center=True)

    # forced spaces
    for f in doc.get("forced_spaces", []):
        h = (int(f["hex"][0]), int(f["hex"][1]))
        ring = px.outline(h, 0.9)
        c = px(h)
        colour = _ILLEGAL_BGR if f.get("blocked") else _FORCED_BGR
        if ring is not None:
            _dashed(img, ring, colour, thick + 1)
        if c is not None:
            fits = " ".join(f"{p}:{','.join(map(str, ns)) or '-'}" for p, ns in f.get("fits", {}).items())
            _text(img, "F" + (" blocked" if f.get("blocked") else ""), c, scale * 1.2, colour, center=True)
            if fits:
                _text(img, fits, (c[0], c[1] + 28 * scale), scale * 0.7, _FORCED_BGR, center=True)

    # empty hexes with four or more neighbours (illegal before the endgame)
    for e in doc.get("crowded_spaces", []):
        ring = px.outline((int(e[0]), int(e[1])), 0.9)
        if ring is not None:
            _dashed(img, ring, _ILLEGAL_BGR, thick + 1)

    # mismatched shared edges: the edge between the two tiles, thick red
    for e in doc.get("illegal_edges", []):
        a, b = px(tuple(e["hex"])), px(tuple(e["other_hex"]))
        if a is None or b is None:
            continue
        m, d = (a + b) / 2, b - a
        perp = np.array([-d[1], d[0]]) / (2 * math.sqrt(3.0))
        cv2.line(img, tuple(np.round(m - perp).astype(int)), tuple(np.round(m + perp).astype(int)), _ILLEGAL_BGR,
                 thick * 4, cv2.LINE_AA)

    legal = doc.get("legal")
    verdict = {True: ("LEGAL", (0, 200, 0)), False: ("ILLEGAL", _ILLEGAL_BGR),
               None: ("TOO CLOSE TO CALL", _UNSURE_BGR)}[legal]
    scores = doc.get("player_scores") or doc.get("scores") or {}
    _text(img, f"{verdict[0]}  " + "  ".join(f"{k} {v}" for k, v in scores.items()), (20, 50 * scale * 1.5),
          scale * 1.5, verdict[1])
    return img
