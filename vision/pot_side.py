"""Winks on the mat against the pot's outer wall, which the pot's zone cut out of the label searches.

The label searches near the pot leave out its silhouette grown by the blur of its outline (``pot_zone``): there
the pot's fringe and shadow would join any foreground. Mapped to the mat, the silhouette is exactly the mat the
pot hides (the camera's central projection of the cup onto it), and it leans away from the camera's nadir: beside
the wall's foot on the near side and at the flanks it hides little of a wink lying against the wall, which shows
almost whole, only cut by the grown zone. A wink of the felt's hue there leaves the labels a strip of foreground
along the zone, too little for any disc search; its outline still shows in the full image wherever the pot does
not hide it. Each such strip seeds the ring search of the size check (``vision.winks.ring_responses``) just
outside the wall's foot, on the line from the pot's centre through the strip, judged only where the felt shows:
a wink is an edge of one sign all round a circle of its radius, well above the felt's noise, and it lies beside
the wall's foot, not under the pot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.constants import POT_BASE_RADIUS_MM, SMALL_WINK_RADIUS_MM, WINK_THICKNESS_MM
from vision.colour import ColourScene, classify_bgr
from vision.ortho import OrthoGrid
from vision.pot import PotDetection
from vision.rim_check import KNOWN_CLEAR_MM, RIM_FOUND_CONFIDENCE, felt_visible
from vision.sampling import sample_bilinear
from vision.winks import RADII_MM, RING_SWITCH_RATIO, WinkCandidate, _interior_offsets, _sample_labels, ring_responses


@dataclass(frozen=True, slots=True)
class PotSideParams:
    min_area_fraction: float = 0.25  # of a small disc: the strip of a wink left beside the zone
    max_area_factor: float = 1.5  # of a large disc: larger regions are no lone wink
    seed_gap_mm: float = 2.0  # the seed: a small wink's rim this far beyond the wall's foot (searched 4 mm round)
    min_ring_noise_k: float = 10.0  # the outline's edge, in units of the felt's noise
    wall_overlap_mm: float = 1.0  # a disc may reach under the wall's foot by this (its lean, the fit's error)
    min_chroma: float = 8.0  # Lab C* of the inside: a wink colour, not grey


def pot_side_winks(cs: ColourScene, grid: OrthoGrid, known: list[WinkCandidate], image_bgr: np.ndarray,
                   camera: CameraModel, pot: PotDetection, pot_zone: np.ndarray, noise_255: float,
                   params: PotSideParams = PotSideParams()) -> list[WinkCandidate]:
    """New candidates: winks lying against the pot's wall (see the module's docstring). ``pot_zone``: the ortho
    mask of the pot's image mapped to the mat, grown by its outline's blur; ``noise_255`` the felt's noise."""
    if not pot.found:
        return []
    s = grid.mm_per_px
    zone = pot_zone.view(np.uint8)
    # the pot's image on the mat, with room for the zone's growth and a wink beside it
    cr = grid.ortho_from_table(camera.image_to_table_mm(np.asarray(pot.silhouette_px, float), grid.z_mm))
    pad = int(math.ceil(2 * RADII_MM["large"] / s)) + 5
    r0, r1 = max(int(cr[:, 1].min()) - pad, 0), min(int(cr[:, 1].max()) + pad + 1, zone.shape[0])
    c0, c1 = max(int(cr[:, 0].min()) - pad, 0), min(int(cr[:, 0].max()) + pad + 1, zone.shape[1])
    if r1 <= r0 or c1 <= c0:
        return []
    near = pot_zone[r0:r1, c0:c1]
    ring = cv2.dilate(near.view(np.uint8), np.ones((3, 3), np.uint8)).view(bool) & ~near
    fg = (cs.foreground[r0:r1, c0:c1] & ~near).view(np.uint8)
    _, comp, stats, _ = cv2.connectedComponentsWithStats(fg, connectivity=8)
    small_area = math.pi * (SMALL_WINK_RADIUS_MM / s) ** 2
    large_area = math.pi * (RADII_MM["large"] / s) ** 2

    def hidden(pts: np.ndarray) -> np.ndarray:
        return _sample_labels(zone, grid.ortho_from_table(pts)) == 1

    # (the winks found on the mat near enough to the pot to touch a region beside it)
    corners = grid.table_from_ortho(np.array([[c0, r0], [c1, r0], [c0, r1], [c1, r1]], float))
    reach = float(np.linalg.norm(corners - pot.center_mm, axis=1).max()) + RADII_MM["large"] + KNOWN_CLEAR_MM
    if known:
        d = np.linalg.norm(np.array([o.center_mm for o in known], float) - pot.center_mm, axis=1)
        known = [o for o, di in zip(known, d) if not o.potted and di < reach]
    out: list[WinkCandidate] = []
    for i in np.unique(comp[ring]):
        area = int(stats[i, cv2.CC_STAT_AREA]) if i else 0
        if area < params.min_area_fraction * small_area or area > params.max_area_factor * large_area:
            continue
        bx, by, bw, bh = stats[i, :4]
        py, px = np.nonzero(comp[by:by + bh, bx:bx + bw] == i)
        py, px = py + by, px + bx
        pts = grid.table_from_ortho(np.column_stack([px + c0, py + r0]).astype(float))
        found = [*known, *out]
        if _explained_by(pts, found, KNOWN_CLEAR_MM) >= 0.5:
            continue  # a wink already found beside the pot
        centroid = pts.mean(axis=0)
        u = centroid - pot.center_mm
        if float(np.linalg.norm(u)) < 1e-6:
            continue
        u /= np.linalg.norm(u)
        seed = pot.center_mm + (POT_BASE_RADIUS_MM + RADII_MM["small"] + params.seed_gap_mm) * u
        clear = [(np.asarray(o.center_mm), o.radius_mm + 1.5) for o in found
                 if _gap(o.center_mm, o.radius_mm, seed, 0.0) < 2 * RADII_MM["large"] + 10.0]
        res = ring_responses(image_bgr, camera, seed, WINK_THICKNESS_MM, felt_visible(camera, hidden, clear))
        if res is None:
            continue
        s_small, s_large, c_small, c_large = res
        size = "small" if s_small >= s_large else "large"
        strength, other, centre = (s_small, s_large, c_small) if size == "small" else (s_large, s_small, c_large)
        if strength < params.min_ring_noise_k * noise_255:
            continue  # no outline all round: the pot's fringe or shadow
        r = RADII_MM[size]
        if float(np.linalg.norm(centre - pot.center_mm)) < POT_BASE_RADIUS_MM + r - params.wall_overlap_mm:
            continue  # under the pot: no wink lies there
        if any(_gap(o.center_mm, o.radius_mm, centre, r) < KNOWN_CLEAR_MM for o in found):
            continue
        # its colour: the inside clear of the zone, in the full image (white-balanced as the labels are)
        inner = centre + _interior_offsets(r - 1.0)
        inner = inner[~hidden(inner)]
        if len(inner) < 8:
            continue
        q = camera.project_mm(np.column_stack([inner, np.full(len(inner), WINK_THICKNESS_MM)]))
        name, _, chroma = classify_bgr(np.median(sample_bilinear(image_bgr, q, outside_nan=False), axis=0) / 255.0,
                                       cs.gains_bgr, cs.hue_centres_deg)
        if chroma < params.min_chroma:
            continue
        w = WinkCandidate(color=name, size=size, center_mm=centre, votes=1.0)
        w.confidence = RIM_FOUND_CONFIDENCE
        if strength < RING_SWITCH_RATIO * other:
            w.size_confidence = 0.6
        w.neutral_inside = True
        out.append(w)
    return out


def _explained_by(pts: np.ndarray, winks: list[WinkCandidate], grow_mm: float) -> float:
    """Share of a region's plan points within a found wink's disc (grown by ``grow_mm``)."""
    inside = np.zeros(len(pts), bool)
    for o in winks:
        inside |= np.linalg.norm(pts - np.asarray(o.center_mm), axis=1) <= o.radius_mm + grow_mm
    return float(inside.mean()) if len(pts) else 0.0


def _gap(a_mm: np.ndarray, ra_mm: float, b_mm: np.ndarray, rb_mm: float) -> float:
    return float(np.linalg.norm(np.asarray(a_mm) - np.asarray(b_mm))) - ra_mm - rb_mm
