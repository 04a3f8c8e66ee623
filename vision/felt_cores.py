"""Winks of the felt's own hue found from their pigment core and read by their rim in chromaticity.

A green wink on green felt differs from the felt by being brighter and more saturated; the labels give it a
colour only in its core, its blended rim and the shadow it casts stay neutral. That neutral halo joins it to a
neighbour's (winks waiting in a corner), so neither the label circle search nor the lone-disc search sees a
disc. The shadow also darkens the felt beside the wink: in colour distance the outline then sits a shadow's
width outside the rim, on one side only, and a rim fit there moves the centre and refuses the radius. A shadow
moves the felt mostly in lightness, the pigment mostly in chroma (measured beside rigA_03's corner winks: in Lab
a*, b* the shadow departs from the felt a third as far as the wink, in BGR as far), so here each unexplained
core of the felt's class seeds a rim fit (``vision.rim_check``) on profiles read in Lab's chromatic plane
(lightness dropped), whose contrast must stand above the felt's own chromatic noise measured around the seed.
Its size is the known radius nearer the fitted apparent radius (model selection by the measured edge, not by
which ring holds more).
"""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.constants import WINK_THICKNESS_MM
from vision.colour import CLASS_NEUTRAL, COLOR_NAMES, ColourScene, lab_rows
from vision.components import components_with_stats
from vision.crescents import sample_bgr_at
from vision.ortho import OrthoGrid
from vision.rim_check import (KNOWN_CLEAR_MM, RIM_FOUND_CONFIDENCE, RimParams, _gap_mm, _on_felt,
                              felt_visible, rim_fits)
from vision.winks import (_UNIT72, EDGE_BLUR_IMAGE_PX, RADII_MM, WinkCandidate, _dist, _interior_offsets, _on_mat,
                          distances_mm)

#: Profiles of the chromatic rim fit reach this far either side of the model outline (px): the blur's width and
#: the seed's offset (a core lies within a few pixels of its wink's centre); no shadow widens a chromatic edge,
#: and a shorter profile stays on the felt beside a neighbour.
CHROMA_PROFILE_HALF_PX = 4.0
#: Felt ring around a seed on which the felt's chromatic noise is measured (mm beyond a large wink's rim).
NOISE_RING_MM = (4.0, 10.0)
#: Radius of the middle of a seed read for its colour (mm): within a small wink wherever in it the core lies.
CORE_PROBE_RADIUS_MM = 4.0
#: Fewest felt samples that measure that noise.
MIN_NOISE_SAMPLES = 24
#: A neutral blob seeds when it covers this share of a small wink's disc (a wink's core blurred short of it).
NEUTRAL_SEED_SHARE = 0.3
#: ... and its inside's chroma leaves the felt's within this angle of the felt's own chroma (more of its hue).
MAX_NEUTRAL_HUE_TURN_DEG = 30.0


def chroma_profiles(prof_bgr: np.ndarray) -> np.ndarray:
    """BGR samples (any shape ``(..., 3)``, 0-255) to Lab with lightness dropped: (0, a*, b*)."""
    lab = lab_rows(np.asarray(prof_bgr, np.float32).reshape(-1, 3) * (1.0 / 255.0)).reshape(prof_bgr.shape)
    lab[..., 0] = 0.0
    return lab


def _sample_ab(image_bgr: np.ndarray, camera: CameraModel, pts_mm: np.ndarray, z_mm: float) -> np.ndarray:
    """Lab (a*, b*) of the image at plan points at height ``z_mm``, ``(N, 2)``."""
    return lab_rows(sample_bgr_at(image_bgr, camera, pts_mm, z_mm))[:, 1:]


def _felt_chroma(image_bgr: np.ndarray, camera: CameraModel, center_mm: np.ndarray,
                 visible: Callable[[np.ndarray], np.ndarray]) -> tuple[np.ndarray, float] | None:
    """The felt's median (a*, b*) on a ring around ``center_mm`` and its robust sigma there, or None."""
    r0 = RADII_MM["large"] + NOISE_RING_MM[0]
    r1 = RADII_MM["large"] + NOISE_RING_MM[1]
    pts = np.concatenate([center_mm + r * _UNIT72 for r in np.linspace(r0, r1, 4)])
    pts = pts[visible(pts)]
    if len(pts) < MIN_NOISE_SAMPLES:
        return None
    ab = _sample_ab(image_bgr, camera, pts, 0.0)
    med = np.median(ab, axis=0)
    # a 2-D Gaussian error has a Rayleigh-distributed length whose median is 1.177 sigma (as vision.colour)
    return med, float(np.median(distances_mm(ab, med))) / 1.177


def _felt_visible(camera: CameraModel, exclude: Callable[[np.ndarray], np.ndarray] | None,
                  near: list[WinkCandidate]) -> Callable[[np.ndarray], np.ndarray]:
    """Where plan points show the felt, clear of ``near`` (a wink's rim hides 1.5 mm beyond it)."""
    return felt_visible(camera, exclude, [(o.center_mm, o.radius_mm + 1.5) for o in near])


def _piled(o: WinkCandidate, w: WinkCandidate) -> bool:
    """Whether a rim fit ``w`` overlapping a found wink ``o`` is a wink of a pile with it, not ``o`` again.

    The rim is fitted on the profiles that lie clear of the found winks (``visible``), so an arc of ``o``'s own
    outline is no part of it. ``o`` must be of another colour: its pigment is then not the felt's hue read
    twice, whereas a found wink of the felt's hue may be one disc the label search put between two (tw_102_002,
    which ``vision.twin_discs`` splits). A wink of a pile overlaps ``o`` by more than the clearance a rim fit
    keeps from it (a touching pair stays refused: its fitted arc may be ``o``'s shadow or blur) and neither
    centre lies within the other's disc (each wink's middle shows its own colour)."""
    return (o.color != w.color and _gap_mm(o, w) <= -KNOWN_CLEAR_MM
            and _dist(o.center_mm, w.center_mm) > max(o.radius_mm, w.radius_mm))


def felt_core_winks(cs: ColourScene, grid: OrthoGrid, known: list[WinkCandidate], image_bgr: np.ndarray,
                    camera: CameraModel, exclude: Callable[[np.ndarray], np.ndarray] | None = None,
                    params: RimParams = RimParams(profile_half_px=CHROMA_PROFILE_HALF_PX)) -> list[WinkCandidate]:
    """New winks of the felt's hue, one per core of the felt's class that no wink found explains and whose rim
    shows in chromaticity (see the module's docstring). ``exclude(plan points)`` marks ground that shows no
    felt (the pot and its shadow)."""
    if not cs.mat_class:
        return []
    core = cv2.compare(cs.labels, cs.mat_class, cv2.CMP_EQ)  # 255 on the felt's class: one 8-bit pass
    # a lone wink whose every pixel the labels left neutral (its pigment short of their margin) seeds too, when
    # the neutral blob is of a wink's extent: its inside is then read like a core's, along the felt's own hue
    neutral = cv2.compare(cs.labels, CLASS_NEUTRAL, cv2.CMP_EQ)
    # the cores of winks found already are theirs: only what lies beyond them (and their rims) is searched
    s = grid.mm_per_px
    for o in known:
        if not o.potted:
            oc = grid.ortho_from_table(np.asarray(o.center_mm, float)[None])[0]
            for m in (core, neutral):
                cv2.circle(m, (round(oc[0]), round(oc[1])), round((o.radius_mm + KNOWN_CLEAR_MM) / s), 0, -1)
    # a core holds at least a few ortho pixels; no larger than a large wink as the camera's blur spreads it (a
    # bigger one is felt, not a core)
    blur_mm = EDGE_BLUR_IMAGE_PX * camera.mm_per_px_at((0.0, 0.0))
    max_area = np.pi * ((RADII_MM["large"] + blur_mm) / s) ** 2
    seeds, areas, hue_only = [], [], []
    for m, min_area, span in ((core, 3, np.inf), (neutral, NEUTRAL_SEED_SHARE * np.pi * (RADII_MM["small"] / s) ** 2,
                                                   2.0 * RADII_MM["large"] / s + 2)):
        n, _, stats, _, _ = components_with_stats(m)
        keep = [i for i in range(1, n) if min_area <= stats[i, cv2.CC_STAT_AREA] <= max_area
                and max(stats[i, cv2.CC_STAT_WIDTH], stats[i, cv2.CC_STAT_HEIGHT]) <= span]
        box = stats[keep].astype(float).reshape(-1, 5)
        seeds += list(grid.table_from_ortho(np.column_stack([box[:, 0] + (box[:, 2] - 1) / 2,
                                                              box[:, 1] + (box[:, 3] - 1) / 2])))
        areas += [stats[i, cv2.CC_STAT_AREA] for i in keep]
        hue_only += [m is neutral] * len(keep)
    if not seeds:
        return []
    order = np.argsort([-a for a in areas])
    color = COLOR_NAMES[cs.mat_class - 1]
    out: list[WinkCandidate] = []
    for j in order:
        seed = seeds[j]
        found = [o for o in (*known, *out) if not o.potted]
        # a core inside (or at the rim of) a wink already found is that wink's
        if any(_dist(o.center_mm, seed) < o.radius_mm + KNOWN_CLEAR_MM for o in found):
            continue
        near = [o for o in found if _dist(o.center_mm, seed) < 2 * RADII_MM["large"] + 20.0]
        visible = _felt_visible(camera, exclude, near)
        if not visible(seed[None])[0]:
            continue
        felt = _felt_chroma(image_bgr, camera, seed, visible)
        if felt is None:
            continue
        felt_ab, noise = felt
        # the rim test asks each profile for a contrast of so many noise sigmas between the wink and the felt:
        # a core whose middle does not stand that far from the felt has no such rim (a speck of felt texture)
        inner = _sample_ab(image_bgr, camera, seed + _interior_offsets(CORE_PROBE_RADIUS_MM), WINK_THICKNESS_MM)
        step = np.median(inner, axis=0) - felt_ab
        if float(np.linalg.norm(step)) < params.contrast_noise_k * noise:
            continue
        # a neutral seed is a wink of the felt's hue only if its inside is the felt's hue, more saturated (not a
        # paler, greyer or other-hued thing: paint, glare, a shadow)
        if hue_only[j] and not float(step @ felt_ab) > np.cos(np.radians(MAX_NEUTRAL_HUE_TURN_DEG)) * float(
                np.linalg.norm(step) * np.linalg.norm(felt_ab)):
            continue
        cand = WinkCandidate(color=color, size="small", center_mm=seed.copy(), votes=0.0)
        fits = [f for f in rim_fits(image_bgr, camera, cand, visible, noise, params, chroma_profiles)
                if f.rim_share >= params.min_rim_share]
        if not fits:
            continue
        best = max(fits, key=lambda f: f.rim_share)
        # the size whose known radius the measured rim is nearer, centred by that size's own fit when it has one
        size = min(RADII_MM, key=lambda k: abs(RADII_MM[k] - best.radius_mm))
        chosen = next((f for f in fits if f.size == size), best)
        w = WinkCandidate(color=color, size=size, center_mm=chosen.center_mm, votes=0.0)
        w.edge_support = w.own_fraction = chosen.rim_share
        w.score = chosen.rim_share
        w.confidence = RIM_FOUND_CONFIDENCE
        w.size_confidence = 0.6
        if any(_gap_mm(o, w) < KNOWN_CLEAR_MM and not _piled(o, w) for o in found):
            continue
        if not _on_mat(w.center_mm[None], 0.0)[0]:
            continue
        out.append(w)
    return out


#: A label disc of the felt's hue with less of its outline as a colour step than this is a whole disc only in
#: part (felt_discs' own test for a whole disc): its pigment or its rim must show in the full image.
LABEL_DISC_WHOLE_SUPPORT = 0.75


def felt_label_rims(cands: list[WinkCandidate], cs: ColourScene, image_bgr: np.ndarray, camera: CameraModel,
                    exclude: Callable[[np.ndarray], np.ndarray] | None = None,
                    params: RimParams = RimParams(profile_half_px=CHROMA_PROFILE_HALF_PX)) -> list[WinkCandidate]:
    """The label candidates of the felt's hue that show neither a pigment nor a rim: to be dropped.

    The labels give the felt's own hue to felt departing from the felt model by a few of its noise sigmas; where
    that noise is measured low (motion blur averages the felt's grain along its path) the shading at a mat's end
    far from the light passes, and makes ragged discs there (tw_3436_000). Shade moves the felt in lightness; a
    wink's pigment moves it in chroma, and its rim is a chromatic step all round (see the module's docstring).
    So a candidate the labels show whole only in part stays when the middle of its disc stands from the felt in
    Lab chroma by the rim test's contrast (in units of the felt's own chromatic noise around it, as a core's
    seed must), or when a chromatic rim fits around it; a coarse centre may be off by most of a radius, and
    then only one of the two shows. An outline mostly beside other winks (a pile) keeps the labels' word."""
    if not cs.mat_class:
        return []
    felt = COLOR_NAMES[cs.mat_class - 1]
    drop: list[WinkCandidate] = []
    for c in cands:
        if c.color != felt or c.potted or c.edge_support >= LABEL_DISC_WHOLE_SUPPORT:
            continue
        others = [o for o in cands if o is not c and not o.potted and not any(o is d for d in drop)]
        visible = _felt_visible(camera, exclude, others)
        ring = c.center_mm + c.radius_mm * _UNIT72
        if float(np.mean(visible(ring) | ~_on_felt(ring, camera))) < params.min_visible_share:
            continue  # beside other winks: its outline cannot be judged
        felt_noise = _felt_chroma(image_bgr, camera, c.center_mm, visible)
        if felt_noise is None:
            continue
        felt_ab, noise = felt_noise
        inner = _sample_ab(image_bgr, camera, c.center_mm + _interior_offsets(CORE_PROBE_RADIUS_MM), WINK_THICKNESS_MM)
        if float(np.linalg.norm(np.median(inner, axis=0) - felt_ab)) >= params.contrast_noise_k * noise:
            continue  # its middle is pigment
        if not any(f.rim_share >= params.min_rim_share
                   for f in rim_fits(image_bgr, camera, c, visible, noise, params, chroma_profiles)):
            drop.append(c)
    return drop
