"""Winks of the pot's own colour lying in its cup, found by their rim rather than by their colour.

A chromatic pot of a wink's hue shows such a wink in its cup in the hue of its own floor, so the colour regions
of ``vision.potted`` cannot tell the two apart. What does: the wink is a disc of a known radius lying flat at a
known height (on the floor, or on one or two winks under it), and its rim is a sharp colour step all round the
part of its outline the camera sees through the top opening (the bevel's shading, its contact shadow, its own
plastic beside the pot's paint), while the painted floor has no edge of its own but its circle with the wall. Each
such pose is tried in the photograph, as ``vision.pot_rim`` does on the rim: a disc is a wink when

* enough of its outline is seen: clear of the wall (the outside sample on the floor, inside the opening's image),
  of the winks of other colours found in the cup (which may lie on it) and of winks on the rim;
* that seen outline holds a clear step (image-noise sigmas, ``RimParams``) almost all round, and
* its inside, away from the bevel and where no other wink hides it, is one colour, of the pot's hue.

The poses are tried coarse to fine: every other node of the grid under looser tests, then the whole grid only
within a millimetre of the nodes that pass them. Its size is the radius of the best pose; both are rough (part of
the outline may be hidden), and it says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.constants import POT_BASE_RADIUS_MM, POT_HEIGHT_MM, POT_TOP_RADIUS_MM, WINK_THICKNESS_MM
from vision.colour import COLOR_NAMES, ColourScene, hue_distance_deg, lab_rows
from vision.pot import PotDetection
from vision.pot_rim import INSIDE_UNIT, RimParams, felt_noise
from vision.sampling import sample_bilinear
from vision.winks import EDGE_BLUR_IMAGE_PX, RADII_MM, WinkCandidate

#: Mid-plane heights of a wink lying flat in the cup: on the floor (its top 2.5 mm above the mat) or on one or
#: two winks there.
CUP_LEVELS_Z_MM = tuple(2.5 + WINK_THICKNESS_MM * (k + 0.5) for k in range(3))
#: The cup's inner radius at its floor (the wall 1.6 mm thick, its outside 19.3 mm there; TW 4's base radius 19).
FLOOR_INNER_RADIUS_MM = POT_BASE_RADIUS_MM + 0.3 - 1.6
#: The opening's inner radius at the top (the wall 1.6 mm thick there too).
OPENING_INNER_RADIUS_MM = POT_TOP_RADIUS_MM - 1.6
#: Image pixels past another wink's image (or the wall's foot) that its blurred edge still reaches (the camera's blur
#: width): a wink read under others is read on its outline clear of them by this.
UNDER_CLEAR_PX = EDGE_BLUR_IMAGE_PX
#: A wink on the mat farther than this beyond the pot's top radius cannot lie over the opening's image (a camera
#: tilted by up to 35 degrees sees the 38 mm high opening shifted by about 27 mm).
NEAR_POT_MM = 40.0


@dataclass(frozen=True, slots=True)
class PotFloorParams:
    step_mm: float = 0.5  # plan grid of centres tried
    n_outline: int = 36
    probe_mm: float = 0.8  # inside/outside samples this far from the outline (beyond the bevel and the blur)
    opening_margin_px: float = 1.5  # a sample seen through the opening lies this far inside its image
    floor_margin_mm: float = 0.8  # an outside sample on the floor lies this far inside the wall's foot
    other_grow_mm: float = 1.5  # the image discs of the other winks in the cup, grown by this, hide the outline
    min_seen: float = 0.55  # share of the outline that must be seen ...
    # ... or, for a wink lying under others, this share seen when with the share hidden under the winks lying
    # over the cup's image it makes up ``min_seen``: an outline cut short by a wink over it is cut where that
    # wink's image is, not where nothing is (its inside must show over the same share)
    min_seen_under: float = 0.3
    under_confidence: float = 0.5  # found by a part of its rim the winks on it leave: the umpire looks
    min_support: float = 0.85  # ... and of that, the share holding a clear step
    along_noise_k: float = 6.0  # a clear step along the outline's one direction: this many image-noise sigmas
    max_inside_spread: float = 0.35  # inside spread (away from the bevel) over the outline's median step
    max_hue_deg: float = 30.0  # the inside's hue from the pot colour's centre
    min_chroma: float = 14.0  # Lab C* of the inside (a wink colour, not the grey shade of the wall)
    confidence: float = 0.6  # found by its rim alone: the umpire looks
    size_confidence: float = 0.5
    # the coarse pass (every other grid node, 1 mm apart) keeps a pose this far below the seen share and the
    # support (its inside spread untested): a node within 0.7 mm of a wink still sees most of its rim's step
    coarse_seen_slack: float = 0.15
    coarse_support_slack: float = 0.3


def opening_inner_px(camera: CameraModel, pot: PotDetection) -> np.ndarray:
    """The image of the top opening's inner edge (the outer rim less the wall): what is seen in the cup lies
    inside it."""
    ring = np.linspace(0.0, 2 * math.pi, 120, endpoint=False)
    return camera.project_mm(np.column_stack([pot.center_mm[0] + OPENING_INNER_RADIUS_MM * np.cos(ring),
                                              pot.center_mm[1] + OPENING_INNER_RADIUS_MM * np.sin(ring),
                                              np.full(len(ring), POT_HEIGHT_MM)]))


def cup_view_px(camera: CameraModel, pot: PotDetection, winks, grow_mm: float = 0.0
                ) -> tuple[tuple[int, int], np.ndarray, np.ndarray]:
    """The cup as the camera sees it, over the bounding box of the opening's image (its origin ``(x0, y0)``
    first): the opening's inner edge filled (1 inside), and the images of the ``winks`` that may lie over it,
    each grown by ``grow_mm`` (1 under one); what is seen of the floor lies in the first and outside the second."""
    inner = opening_inner_px(camera, pot)
    x0, y0 = np.floor(inner.min(axis=0)).astype(int) - 2
    x1, y1 = np.ceil(inner.max(axis=0)).astype(int) + 3
    opening = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillPoly(opening, [np.round((inner - [x0, y0]) * 16).astype(np.int32)], 1, lineType=cv2.LINE_8, shift=4)
    under = np.zeros_like(opening)
    # (only winks in the pot or near it can lie over the opening's image; the scale of the cup's, for all)
    mmpp = camera.mm_per_px_at((float(pot.center_mm[0]), float(pot.center_mm[1])), POT_HEIGHT_MM / 2)
    for o in winks:
        if not may_lie_over_cup(o, pot):
            continue
        opx = o.center_px if o.center_px is not None else camera.project_mm(
            np.array([[o.center_mm[0], o.center_mm[1], o.z_mm]]))[0]
        r_px = max(1, round((o.radius_mm + grow_mm) / mmpp))
        cv2.circle(under, (round(opx[0] - x0), round(opx[1] - y0)), r_px, 1, -1)
    return (int(x0), int(y0)), opening, under


def may_lie_over_cup(o: WinkCandidate, pot: PotDetection) -> bool:
    """Whether a wink's image can lie over the cup's: one in the pot, or on the mat near enough to it."""
    return o.potted or float(np.linalg.norm(np.asarray(o.center_mm) - pot.center_mm)) < POT_TOP_RADIUS_MM + NEAR_POT_MM


def cup_pose_grid(pot: PotDetection, r_mm: float, step_mm: float) -> np.ndarray:
    """Plan centres of a disc of radius ``r_mm`` lying inside the cup's floor."""
    reach = max(FLOOR_INNER_RADIUS_MM - r_mm + 0.5, 0.0)
    g = np.arange(-reach, reach + 1e-9, step_mm)
    xx, yy = np.meshgrid(g, g)
    off = np.column_stack([xx.ravel(), yy.ravel()])
    return pot.center_mm + off[np.linalg.norm(off, axis=1) <= reach]


def _seen_median(values: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """Per row, the median of ``values`` (rows, samples, channels) over the seen samples (at least one a row):
    ``np.nanmedian`` of the unseen set to NaN, by one sort (NaN sorts last)."""
    srt = np.sort(np.where(seen[..., None], values, np.nan), axis=1)
    cnt = seen.sum(axis=1)
    lo = ((cnt - 1) // 2)[:, None, None]
    hi = (cnt // 2)[:, None, None]
    return 0.5 * (np.take_along_axis(srt, lo, axis=1) + np.take_along_axis(srt, hi, axis=1))[:, 0]


def _offset_pixels(cpx: np.ndarray, jac: np.ndarray, offs_mm: np.ndarray) -> np.ndarray:
    """(poses, offsets, 2) float32 pixels ``cpx + jac @ off`` of plan offsets around each pose's centre pixel.

    Written out per output axis: the same two products and sums as a stacked ``matmul`` of 2 x 2 matrices, which
    numpy loops over the poses at about three times the cost."""
    o0, o1 = offs_mm[None, :, 0], offs_mm[None, :, 1]
    q = np.empty((len(cpx), len(offs_mm), 2), np.float32)
    q[..., 0] = cpx[:, :1] + (o0 * jac[:, 0, :1] + o1 * jac[:, 0, 1:])
    q[..., 1] = cpx[:, 1:] + (o0 * jac[:, 1, :1] + o1 * jac[:, 1, 1:])
    return q


def _hue_class(bgr: np.ndarray, cs: ColourScene) -> tuple[np.ndarray, np.ndarray]:
    """``classify_bgr`` of many mean colours (N, 3; 8-bit scale): each one's colour index and Lab chroma."""
    lab = lab_rows(np.clip(bgr.reshape(-1, 3).astype(np.float32) / 255.0 * cs.gains_bgr, 0, 1))
    hue = np.degrees(np.arctan2(lab[:, 2], lab[:, 1])) % 360.0
    dist = np.stack([hue_distance_deg(hue, cs.hue_centres_deg[c]) for c in COLOR_NAMES], axis=1)
    return np.argmin(dist, axis=1), np.hypot(lab[:, 1], lab[:, 2])


def pot_colour_winks(image_bgr: np.ndarray, camera: CameraModel, pot: PotDetection, cs: ColourScene,
                     pot_class: int, known: list[WinkCandidate], params: PotFloorParams = PotFloorParams(),
                     rim: RimParams = RimParams()) -> list[WinkCandidate]:
    """Winks of the pot's own colour (``pot_class``, 1-based; 0: a grey pot) in its cup, found by their rim.

    ``known``: every candidate found so far; those in the pot's image hide what lies under them, and a pot-colour
    disc one of them explains (a rim wink of the pot's colour) is not found twice.
    """
    if pot_class <= 0 or not pot.found or pot.opening_px is None or len(pot.opening_px) < 3:
        return []
    name = COLOR_NAMES[pot_class - 1]
    n = params.n_outline
    ang = np.linspace(0.0, 2 * math.pi, n, endpoint=False)
    u = np.column_stack([np.cos(ang), np.sin(ang)])
    iu = INSIDE_UNIT  # the inside away from the bevel
    # the opening's image over its bounding box, and the other winks where the camera sees them: each hides the
    # floor and whatever lies under it there (a wink on the mat with no image position is not drawn)
    (x0, y0), mask, hide = cup_view_px(camera, pot, [o for o in known if o.center_px is not None or o.potted],
                                       params.other_grow_mm)
    h, w = image_bgr.shape[:2]
    if x0 < 0 or y0 < 0 or x0 + mask.shape[1] > w or y0 + mask.shape[0] > h:
        return []
    # distance inside the opening's image, per pixel of its bounding box
    inside_px = cv2.distanceTransform(mask, cv2.DIST_L2, 5)
    mmpp = camera.mm_per_px_at((float(pot.center_mm[0]), float(pot.center_mm[1])), POT_HEIGHT_MM / 2)

    # where a sample is seen: inside the opening's image by the margin, and under no other wink's image (1); under
    # another wink's image there (2): hidden by it, which accounts for the outline missing there; seen but within the
    # camera's blur of such an image (3): its own edge reaches there
    in_opening = inside_px >= params.opening_margin_px
    near = cv2.distanceTransform((hide == 0).astype(np.uint8), cv2.DIST_L2, 5) <= UNDER_CLEAR_PX
    seen_map = np.where(in_opening, np.where(hide > 0, 2, np.where(near, 3, 1)), 0).astype(np.uint8)

    def seen(q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(poses, samples, 2) px -> seen, seen clear of the other winks' blur, hidden by a wink."""
        v = cv2.remap(seen_map, q - np.array([x0, y0], np.float32), None, cv2.INTER_NEAREST,
                      borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        return (v == 1) | (v == 3), v == 1, v == 2

    noise = felt_noise(image_bgr, camera, pot)
    thr = max(rim.min_step, rim.step_noise_k * noise)
    hue_c = cs.hue_centres_deg[name]
    found: list[tuple[float, str, float, np.ndarray, bool]] = []
    for size, r in RADII_MM.items():
        centres = cup_pose_grid(pot, r, params.step_mm)
        if not len(centres):
            continue
        # an outside sample on the wall (or the wall's foot) shows the wall's own edge, not the wink's
        # (per axis: the norm's own sums in its order, at a tenth of the cost of a norm over a 3-D array's axis)
        reach = (r + params.probe_mm) * u
        dx = (centres[:, :1] + reach[None, :, 0]) - pot.center_mm[0]
        dy = (centres[:, 1:] + reach[None, :, 1]) - pot.center_mm[1]
        d_centre = np.sqrt(dx * dx + dy * dy)
        floor_ok = d_centre <= FLOOR_INNER_RADIUS_MM - params.floor_margin_mm
        # (read under others: clear of the wall's foot by the blur too, whose dark step reaches onto the floor)
        floor_clear = d_centre <= FLOOR_INNER_RADIUS_MM - params.floor_margin_mm - UNDER_CLEAR_PX * mmpp
        m = len(centres)
        offs = np.concatenate([(r - params.probe_mm) * u, (r + params.probe_mm) * u, r * iu])
        # a wink lies on the floor unless a wink in the cup lies under it: only there are the higher levels tried
        cup = [(np.asarray(o.center_mm, float), o.radius_mm) for o in known if o.potted and o.z_mm < POT_HEIGHT_MM / 2]
        on_wink = np.zeros(m, bool)
        for oc, orad in cup:
            on_wink |= np.linalg.norm(centres - oc, axis=1) < r + orad
        # every other node of the grid first, under looser tests (a pose half a grid step off still sees most of
        # the rim's step): the whole grid is read only around the nodes that pass them
        ij = np.rint((centres - centres.min(axis=0)) / params.step_mm).astype(int)
        coarse_node = (ij % 2 == 0).all(axis=1)

        def passing(poses: np.ndarray, z: float, loose: bool) -> list[tuple[float, int, bool]]:
            """(score, pose, under a wink) of the poses at mid-height ``z`` that pass the tests, in the order given
            (under a wink: seen short of ``min_seen``, the rest of its outline hidden by winks over it)."""
            slack = params.coarse_seen_slack if loose else 0.0
            min_seen = params.min_seen - slack
            min_under = params.min_seen_under - slack
            min_support = params.min_support - (params.coarse_support_slack if loose else 0.0)
            zt = z + WINK_THICKNESS_MM / 2  # the top face, where its outline shows
            # each centre's pixel and Jacobian (mm -> px)
            cpx, jac = camera.project_with_jacobian(np.column_stack([centres[poses], np.full(len(poses), zt)]))
            q = _offset_pixels(cpx, jac, offs)
            ok, clear_ok, hid = seen(q)
            vis = ok[:, :n] & ok[:, n:2 * n] & floor_ok[poses]
            seen_share = vis.mean(axis=1)
            mid_seen = ok[:, 2 * n:]
            full = (seen_share >= min_seen) & (mid_seen.mean(axis=1) >= min_seen)
            # short of that, a wink under others: its outline read only clear of their blurred edges, and with the
            # outline and inside hidden by them (a sample pair with either half hidden) making up the share
            vis_clear = clear_ok[:, :n] & clear_ok[:, n:2 * n] & floor_clear[poses]
            shown = (ok[:, :n] | hid[:, :n]) & (ok[:, n:2 * n] | hid[:, n:2 * n]) & floor_ok[poses]
            inside_shown = (ok | hid)[:, 2 * n:].mean(axis=1) >= min_seen
            # its outline seen as an open wink's is, its inside short of that only where a wink lies on it: the
            # inside is read where it shows (as under others), the outline as in the open
            covered = ~full & (seen_share >= min_seen) & (mid_seen.mean(axis=1) >= min_under) & inside_shown
            under = (~full & ~covered & (vis_clear.mean(axis=1) >= min_under)
                     & (clear_ok[:, 2 * n:].mean(axis=1) >= min_under) & (shown.mean(axis=1) >= min_seen) & inside_shown)
            vis = np.where(under[:, None], vis_clear, vis)
            mid_seen = np.where(under[:, None], clear_ok[:, 2 * n:], mid_seen)
            seen_share = vis.mean(axis=1)
            rows = np.flatnonzero(full | covered | under)
            if not len(rows):
                return []
            vis = vis[rows]
            v = sample_bilinear(image_bgr, q[rows].reshape(-1, 2), outside_nan=False).reshape(len(rows), len(offs), 3)
            vin, vout, vmid = v[:, :n], v[:, n:2 * n], v[:, 2 * n:]
            dv = vin - vout
            step = np.sqrt(np.einsum("mkc,mkc->mk", dv, dv))
            # a wink in paint of its own hue still differs from that paint the same way all round (its own
            # albedo, its shadow on the floor), which the image's noise does not: the step along the outline's
            # median difference is clear at fewer noise sigmas than a step of any direction must be
            med_dv = _seen_median(dv, vis)
            along = np.einsum("mkc,mc->mk", dv, med_dv / np.maximum(np.linalg.norm(med_dv, axis=1, keepdims=True),
                                                                       1e-6))
            clear = ((step >= thr) | (along >= params.along_noise_k * noise)) & vis
            support = clear.sum(axis=1) / vis.sum(axis=1)
            held = np.flatnonzero(support >= min_support)
            if not len(held):
                return []
            inner_seen = mid_seen[rows[held]]  # the inside where no other wink hides it
            mid = _seen_median(vmid[held], inner_seen)
            spread = _seen_median(np.linalg.norm(vmid[held] - mid[:, None], axis=2)[..., None], inner_seen)[:, 0]
            med_step = _seen_median(step[held][..., None], vis[held])[:, 0]
            got, chroma = _hue_class(mid, cs)
            keep = (got == pot_class - 1) & (chroma >= params.min_chroma)
            if not loose:
                keep &= spread <= params.max_inside_spread * med_step
            return [(float(support[j] * seen_share[rows[j]]) - float(sp) / max(float(ms), 1e-6), int(poses[rows[j]]),
                     bool(under[rows[j]] or covered[rows[j]])) for j, sp, ms in zip(held[keep], spread[keep],
                                                                                      med_step[keep])]

        for level, z in enumerate(CUP_LEVELS_Z_MM):
            poses = np.arange(m) if level == 0 else np.flatnonzero(on_wink)
            if not len(poses):
                break
            hits = passing(poses[coarse_node[poses]], z, loose=True)
            if not hits:
                continue
            hc = centres[[i for _, i, _ in hits]]
            d2 = ((centres[poses][:, None, :] - hc[None]) ** 2).sum(axis=2).min(axis=1)
            near = poses[d2 <= (2 * params.step_mm) ** 2 + 1e-9]
            for score, i, hidden in passing(near, z, loose=False):
                found.append((score, size, z, centres[i], hidden))
    found.sort(key=lambda f: -f[0])
    out: list[WinkCandidate] = []
    taken = [(np.asarray(o.center_mm, float), o.radius_mm) for o in known
             if o.potted and o.color == name and o.z_mm < POT_HEIGHT_MM / 2]
    for score, size, z, c, hidden in found:
        r = RADII_MM[size]
        if any(float(np.linalg.norm(c - tc)) < r + tr - 2.0 for tc, tr in taken):
            continue  # a pose of a wink already taken (or of a pot-colour wink found before)
        taken.append((c, r))
        cand = WinkCandidate(color=name, size=size, center_mm=np.asarray(c, float), votes=score)
        cand.potted = True
        cand.z_mm = float(z)
        cand.sigma_mm = 2.0  # a 0.5 mm grid, and part of its outline hidden
        cand.center_px = camera.project_mm(np.array([[c[0], c[1], z]]))[0]
        cand.opening_fraction = 1.0
        cand.confidence = params.under_confidence if hidden else params.confidence
        cand.size_confidence = params.size_confidence
        out.append(cand)
    return out
