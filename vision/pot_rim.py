"""Winks balanced on the pot's rim (potted, TW 5(c)), read at the rim's own height.

A wink resting flat on the rim lies at a known height (the pot's top plus half a wink) with its centre over
the rim's top, so half of it overhangs the outside of the cup. The mat-plane detector sees it displaced and
cut by the pot's outline, and a wink of the same colour on the cup floor (or a pot of the wink's own colour)
then hides it. Here each such pose is tried directly in the photograph: a disc of each known radius at the
rim height, its centre on the rim, is a wink when

* its whole outline holds a colour step (it lies on top of everything, so nothing hides any of its edge),
  clear of the image's own noise; where it lies over a wink of its own colour already read in the cup, the same
  plastic on both sides shows none, and the rest of the outline must hold it, and
* its inside, away from its bevelled rim, is one colour: its spread is small beside that step (an empty rim
  seen through such a disc shows the dark inside of the cup on one side and the wall's top and outside on
  the other: no single colour).

* it hides the rim under it: the outer edge of the pot's top, where it passes inside the disc's image,
  shows no consistent step. A translucent pot shows a wink on the mat behind it through its wall, with the
  lip drawn across it; such a disc is no rim wink, and one in between is kept but flagged.

Its colour is the inside's white-balanced hue. The disc's image reaches outside the top opening, which no
wink lying inside the cup can do, and inside it, which no wink on the mat behind an opaque pot can do (the
pot hides that part of it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from calibration.camera import CameraModel
from geometry.constants import POT_HEIGHT_MM, POT_TOP_RADIUS_MM, WINK_THICKNESS_MM
from vision.colour import ColourScene, classify_bgr
from vision.pot import PotDetection
from vision.sampling import sample_bilinear
from vision.winks import RADII_MM, WinkCandidate

#: Height of the mid-plane of a wink lying flat on the rim.
RIM_Z_MM = POT_HEIGHT_MM + WINK_THICKNESS_MM / 2


@dataclass(frozen=True, slots=True)
class RimParams:
    wall_mm: float = 4.0  # a balanced wink's centre lies over the rim's top: up to this inside its edge
    rho_step_mm: float = 1.0
    angle_step_deg: float = 4.0
    n_outline: int = 32
    probe_mm: float = 0.8  # inside/outside samples this far from the outline (beyond the bevel and blur)
    min_support: float = 0.8  # outline share holding a clear colour step
    step_noise_k: float = 6.0  # a clear step: this many image-noise sigmas (of a colour difference) ...
    min_step: float = 18.0  # ... and at least this (8-bit units)
    max_inside_spread: float = 0.35  # inside colour spread (away from the rim) over the outline's median step
    min_chroma: float = 14.0  # Lab C* of a wink colour (grey or white is no wink)
    lip_probe_mm: float = 1.0  # the lip's step is read this far either side of the top's outer edge ...
    lip_probe_px: float = 1.2  # ... and at least this many pixels (beyond the blur)
    lip_min_points: int = 5  # lip samples inside the disc (1 degree apart) needed to read it
    lip_covered_ratio: float = 1.5  # a consistent lip step within this many sample scatters: the disc covers it
    lip_seen_ratio: float = 3.0  # beyond this many: the lip shows across the disc, which lies behind the pot
    lip_unsure_confidence: float = 0.5  # a rim wink whose lip reading lies between the two
    # a wink whose image lies wholly under a rim wink's, to within this (the rim search's 1 mm step and about as
    # much for where a candidate was seen), is hidden by it
    covered_tol_mm: float = 2.0
    # a wink read in the cup counts as under a rim pose's outline inside its image shrunk by this (its place in
    # the cup is rough) ...
    cup_shrink_mm: float = 1.0
    # ... and the outline clear of it, at least this share, must then hold the step
    min_clear_share: float = 0.6


def _inside_unit() -> np.ndarray:
    ir = np.concatenate([[0.0], np.full(8, 0.35), np.full(12, 0.7)])
    ia = np.concatenate([[0.0], np.linspace(0, 2 * math.pi, 8, endpoint=False),
                         np.linspace(0, 2 * math.pi, 12, endpoint=False)])
    return np.column_stack([ir * np.cos(ia), ir * np.sin(ia)])


#: Where a disc's inside is read, in units of its radius: the centre and two rings (not the bevelled rim).
INSIDE_UNIT = _inside_unit()

#: The median length of the difference of two pixels, in units of the per-channel noise s: a - b has sigma
#: sqrt(2) s per channel, and the median of its length (chi, 3 degrees of freedom) is 1.54 that.
STEP_PER_NOISE = 1.54 * math.sqrt(2.0)


def _image_noise(image_bgr: np.ndarray, pts_px: np.ndarray) -> float:
    """Robust sigma of one pixel's colour (L2 over channels), from differences of neighbouring pixels."""
    h, w = image_bgr.shape[:2]
    q = np.rint(pts_px).astype(int)
    q = q[(q[:, 0] >= 0) & (q[:, 0] < w - 1) & (q[:, 1] >= 0) & (q[:, 1] < h)]
    if len(q) < 10:
        return 2.0
    a = image_bgr[q[:, 1], q[:, 0]].astype(np.float32)
    b = image_bgr[q[:, 1], q[:, 0] + 1].astype(np.float32)
    d = np.linalg.norm(a - b, axis=1)
    return max(1.0, float(np.median(d)) / STEP_PER_NOISE)


def lip_step(image_bgr: np.ndarray, camera: CameraModel, pot: PotDetection, center_mm: np.ndarray,
             radius_mm: float, params: RimParams = RimParams()) -> tuple[float, float] | None:
    """The colour step across the outer edge of the pot's top where it passes inside a disc's image.

    A wink lying on the rim hides the rim under it: across the hidden edge there is only the wink's own
    texture and noise, which change from sample to sample. A wink on the mat behind a translucent pot is seen
    through the wall, so the lip's edge is drawn across it: the same step (wall over wink against wink) at
    every sample. Returns the consistent step (length of the per-channel median of the differences) and the
    samples' scatter about it (median length of what is left), or None when too little of the edge lies well
    inside the disc (clear of the disc's own outline and its blur).
    """
    phis = np.radians(np.arange(0.0, 360.0, 1.0))
    u = np.column_stack([np.cos(phis), np.sin(phis)])
    c = np.asarray(center_mm, float)
    mmpp = camera.mm_per_px_at((float(c[0]), float(c[1])), POT_HEIGHT_MM)
    delta = max(params.lip_probe_mm, params.lip_probe_px * mmpp)
    margin = params.probe_mm + params.lip_probe_px * mmpp
    p_in = pot.center_mm + (POT_TOP_RADIUS_MM - delta) * u
    p_out = pot.center_mm + (POT_TOP_RADIUS_MM + delta) * u
    keep = ((np.linalg.norm(p_in - c, axis=1) <= radius_mm - margin)
            & (np.linalg.norm(p_out - c, axis=1) <= radius_mm - margin))
    n = int(keep.sum())
    if n < params.lip_min_points:
        return None
    z = np.full(n, POT_HEIGHT_MM)
    q = camera.project_mm(np.vstack([np.column_stack([p_in[keep], z]), np.column_stack([p_out[keep], z])]))
    v = sample_bilinear(image_bgr, q.astype(np.float32), outside_nan=False).reshape(2, n, 3).astype(np.float32)
    d = v[0] - v[1]
    step = np.median(d, axis=0)
    return float(np.linalg.norm(step)), float(np.median(np.linalg.norm(d - step, axis=1)))


def felt_noise(image_bgr: np.ndarray, camera: CameraModel, pot: PotDetection) -> float:
    """The image's noise (per channel) on the felt around the pot (a few winks there hardly move the median)."""
    ang = np.radians(np.arange(360.0))
    ring = pot.center_mm + 70.0 * np.column_stack([np.cos(ang), np.sin(ang)])
    return _image_noise(image_bgr, camera.project_mm(np.column_stack([ring, np.zeros(len(ring))])))


def lip_ratio(image_bgr: np.ndarray, camera: CameraModel, pot: PotDetection, center_mm: np.ndarray,
              radius_mm: float, noise: float, params: RimParams = RimParams()) -> float | None:
    """The lip's consistent step inside a disc's image over its samples' scatter (at least what the image's
    ``noise`` alone scatters a step by): below ``lip_covered_ratio`` the disc hides the lip, from
    ``lip_seen_ratio`` on the lip shows across it."""
    lip = lip_step(image_bgr, camera, pot, center_mm, radius_mm, params)
    return None if lip is None else lip[0] / max(lip[1], STEP_PER_NOISE * noise)


def rim_winks(image_bgr: np.ndarray, camera: CameraModel, pot: PotDetection, cs: ColourScene,
              known: list[WinkCandidate], params: RimParams = RimParams()) -> list[WinkCandidate]:
    """The candidates with the winks found on the rim: each replaces any same-colour candidate it explains."""
    if not pot.found:
        return known
    n = params.n_outline
    ang = np.linspace(0.0, 2 * math.pi, n, endpoint=False)
    u = np.column_stack([np.cos(ang), np.sin(ang)])
    rhos = np.arange(POT_TOP_RADIUS_MM - params.wall_mm, POT_TOP_RADIUS_MM + 1e-6, params.rho_step_mm)
    phis = np.radians(np.arange(0.0, 360.0, params.angle_step_deg))
    centres = (pot.center_mm[None, None, :] + rhos[:, None, None]
               * np.stack([np.cos(phis), np.sin(phis)], axis=1)[None, :, :]).reshape(-1, 2)
    iu = INSIDE_UNIT
    # each centre's pixel and Jacobian (mm -> px)
    cpx_all, jac = camera.project_with_jacobian(np.column_stack([centres, np.full(len(centres), RIM_Z_MM)]))
    noise = felt_noise(image_bgr, camera, pot)
    thr = max(params.min_step, params.step_noise_k * noise)
    found: list[tuple[float, float, str, np.ndarray, np.ndarray, str | None]] = []
    m = len(centres)
    # winks already read in the cup, where the camera sees them: a rim wink lies over them, and over one of its
    # own colour its outline shows no colour step (the same plastic on both sides)
    cup = []
    for o in known:
        if o.potted and o.z_mm < POT_HEIGHT_MM / 2:
            opx = o.center_px if o.center_px is not None else camera.project_mm(
                np.array([[o.center_mm[0], o.center_mm[1], o.z_mm]]))[0]
            r_px = (o.radius_mm - params.cup_shrink_mm) / camera.mm_per_px_at(
                (float(o.center_mm[0]), float(o.center_mm[1])), float(o.z_mm))
            if r_px > 0:
                cup.append((np.asarray(opx, np.float32), r_px, o.color))
    for size, r in RADII_MM.items():
        offs = np.concatenate([(r - params.probe_mm) * u, (r + params.probe_mm) * u, r * iu])  # (k, 2) mm
        q = cpx_all[:, None, :] + np.matmul(offs[None], jac.transpose(0, 2, 1))
        q = q.reshape(-1, 2).astype(np.float32)
        v = sample_bilinear(image_bgr, q, outside_nan=False).reshape(m, len(offs), 3)
        vin, vout, vmid = v[:, :n], v[:, n:2 * n], v[:, 2 * n:]
        dv = vin - vout
        step = np.sqrt(np.einsum("mkc,mkc->mk", dv, dv))
        support = (step >= thr).mean(axis=1)
        # the same over the outline clear of each cup wink's image (asked of a pose of that wink's colour only)
        over: list[str | None] = [None] * m
        q_out = q.reshape(m, len(offs), 2)[:, n:2 * n]
        for cpx_k, r_k, color_k in cup:
            free = np.linalg.norm(q_out - cpx_k, axis=2) > r_k
            n_free = free.sum(axis=1)
            sup_k = ((step >= thr) & free).sum(axis=1) / np.maximum(n_free, 1)
            for i in np.flatnonzero((sup_k >= params.min_support) & (support < params.min_support)
                                    & (n_free >= params.min_clear_share * n)):
                over[i] = color_k
        held = support >= params.min_support
        held |= np.array([c is not None for c in over])
        # the inside's statistics only where the outline holds (few poses); the inside's colour and spread are
        # taken away from the rim (its bevel and highlight shade it), its colour over the whole disc
        for i in np.flatnonzero(held):
            med = np.median(np.concatenate([vin[i], vmid[i]]), axis=0)
            mid = np.median(vmid[i], axis=0)
            spread = float(np.median(np.linalg.norm(vmid[i] - mid, axis=1)))
            med_step = float(np.median(step[i]))
            if spread <= params.max_inside_spread * med_step:
                score = float(support[i]) - spread / max(med_step, 1e-6)
                found.append((score, float(support[i]), size, centres[i], med, over[i]))
    found.sort(key=lambda f: -f[0])
    out = list(known)
    taken: list[tuple[np.ndarray, float]] = []
    for score, support_i, size, c, med, over_color in found:
        r = RADII_MM[size]
        if any(np.linalg.norm(c - tc) < r + tr - 1.0 for tc, tr in taken):
            continue  # one wink (or an overlapping pose of one already taken)
        name, _, chroma = classify_bgr(med / 255.0, cs.gains_bgr, cs.hue_centres_deg)
        if chroma < params.min_chroma or (over_color is not None and name != over_color):
            continue
        # on the rim it hides the lip; behind a translucent pot the lip is drawn across it
        ratio = lip_ratio(image_bgr, camera, pot, c, r, noise, params) or 0.0
        if ratio >= params.lip_seen_ratio:
            continue
        unsure = ratio > params.lip_covered_ratio
        taken.append((c, r))
        cpx = camera.project_mm(np.array([[c[0], c[1], RIM_Z_MM]]))[0]
        r_px = r / camera.mm_per_px_at((float(c[0]), float(c[1])))
        # a candidate of this colour seen inside this disc's image is this wink, read elsewhere; one of another
        # colour whose whole image lies under this disc cannot be seen at all (the disc lies on top of
        # everything): it is this wink misread (a highlight's tint)
        same = []
        for o in out:
            opx = o.center_px if o.center_px is not None else camera.project_mm(
                np.array([[o.center_mm[0], o.center_mm[1], o.z_mm]]))[0]
            d_px = float(np.linalg.norm(np.asarray(opx) - cpx))
            if o.color == name and d_px < r_px:
                same.append(o)
            elif o.color != name:
                mmpp_o = camera.mm_per_px_at((float(o.center_mm[0]), float(o.center_mm[1])))
                if d_px + (o.radius_mm - params.covered_tol_mm) / mmpp_o <= r_px:
                    same.append(o)
        out = [o for o in out if not any(o is s for s in same)]
        w = WinkCandidate(color=name, size=size, center_mm=np.asarray(c, float), votes=score)
        w.potted = True
        w.z_mm = RIM_Z_MM
        w.sigma_mm = 1.0
        w.center_px = cpx
        w.opening_fraction = 0.5
        w.confidence = params.lip_unsure_confidence if unsure else 0.8
        w.fit_fraction = support_i  # the share of its outline seen
        out.append(w)
    return out
