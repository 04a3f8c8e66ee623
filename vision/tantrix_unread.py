"""Tiles the reader saw but did not read: silhouette on the board's lattice that no read tile explains (issue 10).

Tantrix tiles lie edge to edge on one hex lattice and the board is one connected group, so every tile the
reader missed (a lamp's highlight over its black, white links on a cream cloth, a notch in the outline) sits
on a lattice hex next to the board. A hex of bare table shows the table; a hex holding a tile shows the tile's
black or its link bands over most of its interior. So each empty hex beside the board (and beside every hex
found so) is checked for tile pixels in its interior, well inside the edges where a neighbour's band or the
gap's shadow cannot reach. Such a hex is probed for a face like any tile, and left as an unread tile
(occupying its hex, number None) when its face is not read for sure: the referee then says "too close to
call" where the missed tile could matter, never judges it an empty space.
"""

from __future__ import annotations

import cv2
import numpy as np

from geometry.tantrix import neighbour, neighbours, opposite_edge, tile
from vision.tantrix_lattice import apply_h, hex_center_u, hexagon_u

# Interior sample rings (U: one = circumradius; the apothem is 0.866): a neighbour's band ends at the shared
# edge and a tile off by a few degrees stays within 0.1 of its hex, so samples inside 0.65 see only this hex.
INTERIOR_RADII: tuple[float, ...] = (0.0, 0.22, 0.44, 0.65)
# A tile covers its whole interior with black and bands; a highlight or links the table's colour hide part of it.
# Bare table (even under a tile's shadow, which is never as dark as the tile's black) shows almost none.
MIN_TILE_SHARE = 0.1
# ... and some of them link band (a link crosses every tile's interior; glare leaves the bands' hue).
MIN_BAND_SHARE = 0.05
# ... and not mostly colour broader than a band (a player's mat beside the board: slivers of it between the hand
# tiles pass for bands, the rest is broad).
MAX_BROAD_SHARE = 0.3
# Most of an enclosed hex washed: a tile under a lamp's highlight (bare hexes beside boards show far less).
MIN_UNSEEN_SHARE = 0.5
# Bound on the hexes searched around a board (a table holds 56 tiles).
MAX_PROBES = 200


def interior_offsets_u() -> np.ndarray:
    """Sample points in a hex's interior (U), denser outwards (rings of 1, 6, 12, 18 points)."""
    pts = [np.zeros(2)]
    for r in INTERIOR_RADII[1:]:
        n = max(6, int(round(6 * r / INTERIOR_RADII[1])))
        a = np.radians(np.arange(n) * 360.0 / n + 15.0)
        pts.extend(np.column_stack([r * np.cos(a), r * np.sin(a)]))
    return np.array(pts)


def tile_share(tile_px: np.ndarray, H_u2img: np.ndarray, hexes: list[tuple[int, int]]) -> np.ndarray:
    """Share of each hex's interior samples that show tile (``tile_px``: bool image); samples off the image
    do not count (None of them in the image: 0)."""
    if not hexes:
        return np.zeros(0)
    offs = interior_offsets_u()
    cen = np.array([hex_center_u(*hx) for hx in hexes])
    pts = apply_h(H_u2img, (cen[:, None, :] + offs[None]).reshape(-1, 2))
    h, w = tile_px.shape
    p = np.rint(pts).astype(np.int64)
    inside = (p[:, 0] >= 0) & (p[:, 0] < w) & (p[:, 1] >= 0) & (p[:, 1] < h)
    hit = np.zeros(len(p), bool)
    hit[inside] = tile_px[p[inside, 1], p[inside, 0]]
    n_in = inside.reshape(len(hexes), -1).sum(axis=1)
    return hit.reshape(len(hexes), -1).sum(axis=1) / np.maximum(n_in, 1)


def unexplained_hexes(tile_px: np.ndarray, band_px: np.ndarray, washed_px: np.ndarray, H_u2img: np.ndarray,
                      board: set[tuple[int, int]], off_lattice_u: list[tuple[np.ndarray, float]],
                      broad_px: np.ndarray | None = None) -> list[tuple[int, int]]:
    """Empty hexes next to the board (or to another such hex) that do not show bare table: the missed tiles.

    ``tile_px``: black or link pixels; ``band_px``: link bands alone (a tile's three links always cross its
    interior; a dark mat or shadow has none); ``washed_px``: hueless light pixels that are neither table nor tile
    black. A hex is a missed tile when its interior shows tile black and bands, or, enclosed by two board tiles or
    more, when most of it is washed (a lamp's highlight over black and bands alike).
    ``off_lattice_u``: (centre, angle) in U of the tiles read off the lattice (hands): their pixels are explained.
    ``broad_px``: link colour broader than a band (a mat); when given, a hex mostly of it is no tile.
    """
    mask, bands, unseen = tile_px, band_px, washed_px
    broad = np.zeros_like(tile_px) if broad_px is None else broad_px
    if off_lattice_u:
        explained = np.zeros(tile_px.shape, np.uint8)
        for c, a in off_lattice_u:
            poly = apply_h(H_u2img, hexagon_u(np.asarray(c, float), a, 1.1))
            cv2.fillPoly(explained, [np.rint(poly).astype(np.int32)], 1)
        mask, bands, unseen = (m & (explained == 0) for m in (mask, bands, unseen))
    found: list[tuple[int, int]] = []
    seen = set(board)
    occupied = set(board)
    frontier = {n for h in board for n in neighbours(h)} - seen
    while frontier and len(seen) < len(board) + MAX_PROBES:
        cand = sorted(frontier)
        seen |= frontier
        share = tile_share(mask, H_u2img, cand)
        band = tile_share(bands, H_u2img, cand)
        washed = tile_share(unseen, H_u2img, cand)
        mat = tile_share(broad, H_u2img, cand)
        new = [hx for hx, s, b, u, m in zip(cand, share, band, washed, mat)
               if (s >= MIN_TILE_SHARE and b >= MIN_BAND_SHARE and m < MAX_BROAD_SHARE)
               or (u >= MIN_UNSEEN_SHARE and sum(n in occupied for n in neighbours(hx)) >= 2)]
        found += new
        occupied |= set(new)
        frontier = {n for h in new for n in neighbours(h)} - seen
    return found


def shared_edges_agree(number: int, rotation: int, hx: tuple[int, int], read: dict) -> tuple[int, int]:
    """(matching, clashing) shared edges of a face at ``hx`` against the read tiles around it
    (``read``: hex -> (number, rotation))."""
    good = bad = 0
    for k in range(6):
        n = read.get(neighbour(hx, k))
        if n is None:
            continue
        same = tile(number).edge_color(k, rotation) is tile(n[0]).edge_color(opposite_edge(k), n[1])
        good += same
        bad += not same
    return good, bad


__all__ = ["MIN_TILE_SHARE", "interior_offsets_u", "shared_edges_agree", "tile_share", "unexplained_hexes"]
