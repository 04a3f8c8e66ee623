"""Winks the colour labels left neutral: a lone round foreground disc of a wink's radius, coloured by its inside.

The labels give a foreground pixel a wink colour only when its hue is plain and, for a wink of the felt's own
hue (green on green felt), only when it departs from the felt by a wide margin in units of the felt's noise; a
dull-lit wink, or a felt-coloured one on noisy felt, stays neutral foreground. The foreground itself still shows
its shape: a whole disc of exactly a wink's radius, alone on the mat (no other wink within a wink's width),
whose outline holds a colour step all round in the full image. Its colour is then its own inside's hue
(white-balanced, as the labels'), and its size the radius whose outline holds more edge.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.constants import LARGE_WINK_RADIUS_MM, SMALL_WINK_RADIUS_MM, WINK_THICKNESS_MM
from vision.colour import CLASS_BG, CLASS_NEUTRAL, ColourScene, classify_bgr
from vision.components import component_window, components_with_stats
from vision.ortho import OrthoGrid
from vision.winks import (
    _UNIT72,
    RADII_MM,
    RING_SWITCH_RATIO,
    WinkCandidate,
    _edge_directions,
    _interior_offsets,
    _on_mat,
    _sample_labels,
    _votes,
    ring_size_check,
)


@dataclass(frozen=True, slots=True)
class FeltDiscParams:
    clear_mm: float = 6.0  # no other wink within this of the disc's rim (its blend and shadow would join it)
    min_arc_fraction: float = 0.5  # centre votes: a whole outline, not an arc
    min_edge_support: float = 0.75  # rim share with foreground just inside and background just outside
    near_miss_support: float = 0.5  # ... below that but above this, a whole disc is left to its rim's test
    min_inside: float = 0.9  # disc share that is foreground
    probe_mm: float = 2.0
    min_chroma: float = 8.0  # Lab C* of the inside: a wink colour, not grey
    max_area_factor: float = 1.5  # a component larger than this many large discs is no lone wink


def felt_discs(cs: ColourScene, grid: OrthoGrid, known: list[WinkCandidate], image_bgr: np.ndarray,
               camera: CameraModel, exclude_mask: np.ndarray | None = None,
               params: FeltDiscParams = FeltDiscParams(),
               near_misses: list[WinkCandidate] | None = None) -> list[WinkCandidate]:
    """New candidates: lone neutral foreground discs of a wink's radius (see the module's docstring).

    ``near_misses``, when given, receives the whole discs whose rim the labels show only in part (a halo or
    shadow around the wink left neutral too): ``vision.rim_check`` reads their rims in the full image."""
    labels = cs.labels
    s = grid.mm_per_px
    fg = cs.foreground  # labels >= 1 (a colour or neutral)
    if exclude_mask is not None:
        fg = fg & ~exclude_mask
    # only the components' boxes and areas are needed first (counted on the rows and columns that hold any)
    n, comp, stats, comp_rows, comp_cols = components_with_stats(fg)
    h, w = labels.shape
    small_area = math.pi * (SMALL_WINK_RADIUS_MM / s) ** 2
    large_area = math.pi * (LARGE_WINK_RADIUS_MM / s) ** 2
    pad = int(math.ceil(LARGE_WINK_RADIUS_MM / s)) + 4
    known_c = np.array([k.center_mm for k in known]) if known else np.zeros((0, 2))
    known_r = np.array([k.radius_mm for k in known]) if known else np.zeros(0)
    out: list[WinkCandidate] = []
    for i in range(1, n):
        x0, y0, bw, bh, area = stats[i]
        if area < 0.6 * small_area or area > params.max_area_factor * large_area:
            continue
        xa, ya = max(0, x0 - pad), max(0, y0 - pad)
        xb, yb = min(w, x0 + bw + pad), min(h, y0 + bh + pad)
        sub = component_window(comp, comp_rows, comp_cols, i, ya, yb, xa, xb)
        # mostly neutral: a component the labels coloured is the wink detector's own business
        if (labels[ya:yb, xa:xb][sub] == CLASS_NEUTRAL).mean() < 0.5:
            continue
        mask = sub.astype(np.float32)
        best = None
        edges = _edge_directions(mask)  # (the same outline for both radii)
        for size, r_mm in RADII_MM.items():
            r_px = r_mm / s
            acc = cv2.boxFilter(_votes(mask, r_px, edges), -1, (5, 5), normalize=False)
            j = int(np.argmax(acc))
            pr, pc = divmod(j, acc.shape[1])
            frac = float(acc[pr, pc]) / (2 * math.pi * r_px)
            if frac < params.min_arc_fraction:
                continue
            cmm = grid.table_from_ortho(np.array([[pc + xa, pr + ya]], float))[0]
            if best is None or frac > best[0]:
                best = (frac, size, cmm)
        if best is None:
            continue
        frac, size, cmm = best
        r = RADII_MM[size]
        # alone: no wink already found near it, and wholly on the mat
        if len(known_c) and np.any(np.linalg.norm(known_c - cmm, axis=1) < known_r + r + params.clear_mm):
            continue
        if not _on_mat(cmm[None], r + params.probe_mm)[0]:
            continue
        # the disc and its rim in the labels: foreground inside, background just outside, all round
        lab_in = _sample_labels(labels, grid.ortho_from_table(cmm + (r - params.probe_mm) * _UNIT72))
        lab_out = _sample_labels(labels, grid.ortho_from_table(cmm + (r + params.probe_mm) * _UNIT72))
        support = float((((lab_in >= 1) & (lab_in <= CLASS_NEUTRAL)) & (lab_out == CLASS_BG)).mean())
        inner = _sample_labels(labels, grid.ortho_from_table(cmm + _interior_offsets(r)))
        inside = float(((inner >= 1) & (inner <= CLASS_NEUTRAL)).mean())
        if inside < params.min_inside:
            continue
        near_miss = support < params.min_edge_support
        if near_miss and (near_misses is None or support < params.near_miss_support):
            continue
        # its colour: the inside in the full image (white-balanced as the labels are)
        pts = cmm + _interior_offsets(r - 1.0)
        q = camera.project_mm(np.column_stack([pts, np.full(len(pts), WINK_THICKNESS_MM)])).astype(np.float32)
        v = cv2.remap(image_bgr, q[:, 0:1], q[:, 1:2], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        med = np.median(v.reshape(-1, 3).astype(np.float32), axis=0) / 255.0
        name, _, chroma = classify_bgr(med, cs.gains_bgr, cs.hue_centres_deg)
        if chroma < params.min_chroma:
            continue
        c = WinkCandidate(color=name, size=size, center_mm=cmm, votes=frac)
        c.edge_support, c.own_fraction, c.score = support, inside, support + 0.25 * inside
        c.neutral_inside = True
        if near_miss:
            near_misses.append(c)
            continue
        # the outline in the full image decides the size (the label disc is blurred by a pixel or two)
        res = ring_size_check(c, [*known, *out], image_bgr, camera)
        if res is not None:
            s_small, s_large, c_small, c_large = res
            cur, oth = (s_small, s_large) if size == "small" else (s_large, s_small)
            if oth > RING_SWITCH_RATIO * cur:
                c.size = "large" if size == "small" else "small"
                c.center_mm = c_large if c.size == "large" else c_small
            elif cur < RING_SWITCH_RATIO * oth:
                c.size_confidence = 0.6
        c.confidence = 0.8  # found by its shape, its colour from its inside alone
        out.append(c)
    return out

