"""Winks inside the pot, counted in the photograph itself, against the pot's own inside.

The label image is built against the felt: through the pot's opening the background is the pot's inside (dark,
white or a colour), so winks lying in the cup come out as fragments there. Here the opening (the image of the
top rim) is read on its own: a pixel is a wink colour when its white-balanced Lab chroma and hue say so (the
pot's wall and floor are achromatic, or of the one colour ``pot_class`` which is then not read). Each colour's
region is explained by discs of the known image radius, greedily from the deepest interior point (distance
transform): a new disc is a new wink only when it explains enough of the region that no earlier disc did.
Positions inside the cup are rough (walls hide parts of the floor) and say so; what the rules need is which
winks are potted (TW 5(c), 10).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.constants import (
    LARGE_WINK_RADIUS_MM,
    POT_BASE_RADIUS_MM,
    POT_HEIGHT_MM,
    SMALL_WINK_RADIUS_MM,
    WINK_THICKNESS_MM,
)
from vision.colour import COLOR_NAMES, ColourScene, hue_distance_deg
from vision.pot import PotDetection
from vision.pot_rim import RIM_Z_MM, RimParams, felt_noise, lip_ratio
from vision.winks import RING_SWITCH_RATIO, WinkCandidate, ring_responses

#: Height of the cup floor where potted winks rest.
POT_FLOOR_Z_MM = 3.25


@dataclass(frozen=True, slots=True)
class PottedParams:
    rim_clear_px: int = 2  # the rim's own edge pixels are left out
    floor_radius_mm: float = POT_BASE_RADIUS_MM + 1.0  # the floor (base radius) and a wink leaning on the wall
    min_chroma: float = 14.0  # Lab C* of a wink colour (the pot's achromatic wall stays below)
    min_chroma_floor: float = 8.0  # ... lowered for a pale cup down to this
    cup_chroma_factor: float = 3.0  # ... and to this multiple of the cup's own colour spread (median departure)
    min_cup_floor_share: float = 0.2  # floor seen of no wink's colour that the cup's own is read from (else all)
    max_hue_deg: float = 30.0
    min_region_fraction: float = 0.30  # of a small disc's area: smaller colour regions are fringes
    min_new_fraction: float = 0.45  # a further disc must explain this share of its own area anew
    known_grow_max_mm: float = 3.0  # a wink already found explains its disc grown by its uncertainty, up to this
    large_depth_fraction: float = 0.85  # interior depth (of the large radius) that only a large wink reaches
    min_crescent_fraction: float = 0.12  # a colour's unexplained crescent, of a small disc's area
    crescent_held: float = 0.9  # share of the crescent a disc of the hidden wink must hold
    crescent_open_max: float = 0.15  # share of that disc that may be open floor of no colour of its own
    crescent_under_min: float = 0.4  # share of that disc under winks of other colours (what hides the rest)


def _colour_index(crop_bgr: np.ndarray, cs: ColourScene, params: PottedParams,
                  mask: np.ndarray | None = None, pot_class: int = 0) -> np.ndarray:
    """Wink colour index per pixel (-1: none). Colour is judged against the cup's own (its median a, b on the
    floor seen, ``mask``): a wink lit inside a white pot is pale yet stands out from the floor around it, and a
    pale-tinted or cool-lit pot's own colour is no wink.

    The cup's colour is the median of the floor's pixels that are not plainly a wink's (of a wink hue other than
    the pot's own, ``pot_class``, at a wink's chroma): a pile in the cup can cover half the floor seen, and the
    median of it all is then a blend that the winks' own shaded colour departs from too little."""
    px = np.clip(crop_bgr.astype(np.float32) / 255.0 * cs.gains_bgr, 0, 1)
    lab = cv2.cvtColor(px, cv2.COLOR_BGR2Lab)
    hue = np.degrees(np.arctan2(lab[..., 2], lab[..., 1])) % 360.0
    chroma = np.hypot(lab[..., 1], lab[..., 2])
    dist = np.stack([hue_distance_deg(hue, cs.hue_centres_deg[n]) for n in COLOR_NAMES], axis=-1)
    cls = np.argmin(dist, axis=-1)
    hue_ok = np.take_along_axis(dist, cls[..., None], -1)[..., 0] <= params.max_hue_deg
    departure = chroma
    min_departure = params.min_chroma
    if mask is not None and mask.any():
        ab = lab[..., 1:]
        floor = mask > 0
        own = floor & ~(hue_ok & (chroma >= params.min_chroma) & (cls + 1 != pot_class))
        cup = np.median(ab[own if own.sum() >= params.min_cup_floor_share * floor.sum() else floor], axis=0)
        departure = np.linalg.norm(ab - cup, axis=-1)
        spread = float(np.median(departure[floor]))
        min_departure = min(params.min_chroma, max(params.min_chroma_floor, params.cup_chroma_factor * spread))
    return np.where((departure >= min_departure) & hue_ok, cls, -1)


def _cup_ab(image_bgr: np.ndarray, pot: PotDetection, cs: ColourScene) -> np.ndarray | None:
    """The cup's own colour (median Lab a, b through its opening; winks in it rarely cover half): a white pot
    under cool light, or a pale-tinted one, is not neutral grey."""
    poly = np.asarray(pot.opening_px, np.float64)
    h, w = image_bgr.shape[:2]
    x0, y0 = np.maximum(np.floor(poly.min(axis=0)).astype(int), 0)
    x1, y1 = np.minimum(np.ceil(poly.max(axis=0)).astype(int) + 1, [w, h])
    if x1 - x0 < 4 or y1 - y0 < 4:
        return None
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillPoly(mask, [np.round((poly - [x0, y0]) * 16).astype(np.int32)], 1, lineType=cv2.LINE_8, shift=4)
    px = np.clip(image_bgr[y0:y1, x0:x1].astype(np.float32) / 255.0 * cs.gains_bgr, 0, 1)
    ab = cv2.cvtColor(px, cv2.COLOR_BGR2Lab)[..., 1:][mask > 0]
    if len(ab) < 20:
        return None
    return np.median(ab, axis=0)


#: Where a wink seen through the top opening can lie (``cup_place``).
IN_CUP, BEHIND_POT, ON_RIM = "in_cup", "behind_pot", "on_rim"


def cup_place(center_px: np.ndarray, radius_mm: float, sigma_mm: float, camera: CameraModel,
              pot: PotDetection) -> str:
    """Where a wink seen through the pot's top opening can lie, from where its image meets each height.

    Everything seen of a wink in the cup lies inside the cup, so its image centre taken down to the floor lies
    within the base radius. A translucent pot also shows, through its wall, a wink on the mat behind it: that
    one's image centre taken to the mat lies clear of the pot's base (it cannot stand under it). A centre
    that fits neither is on the rim (``vision.pot_rim`` looks for it there). ``sigma_mm`` is the uncertainty
    of the centre in the plan.
    """
    px = np.asarray(center_px, float).reshape(1, 2)
    tol_mm = 2.0 * math.hypot(sigma_mm, pot.sigma_mm)
    floor = camera.image_to_table_mm(px, POT_FLOOR_Z_MM)[0]
    if float(np.linalg.norm(floor - pot.center_mm)) <= POT_BASE_RADIUS_MM + tol_mm:
        return IN_CUP
    mat = camera.image_to_table_mm(px, WINK_THICKNESS_MM / 2)[0]
    if float(np.linalg.norm(mat - pot.center_mm)) >= POT_BASE_RADIUS_MM + radius_mm - tol_mm:
        return BEHIND_POT
    return ON_RIM


def _stands_out_from_cup(c: WinkCandidate, image_bgr: np.ndarray, camera: CameraModel, cs: ColourScene,
                         tint: np.ndarray, params: PottedParams) -> bool:
    """The candidate's colour (around where it was seen in the image) differs from the cup's own tint."""
    # around where it was seen in the image (a wink on the rim sits 38 mm above the cup's floor)
    cpx = c.center_px if c.center_px is not None else camera.project_mm(
        np.array([[c.center_mm[0], c.center_mm[1], POT_FLOOR_Z_MM]]))[0]
    r_px = 0.5 * c.radius_mm / camera.mm_per_px_at((float(c.center_mm[0]), float(c.center_mm[1])))
    ang = np.linspace(0, 2 * np.pi, 24, endpoint=False)
    rr = np.concatenate([np.zeros(1), np.full(len(ang), r_px)])
    aa = np.concatenate([np.zeros(1), ang])
    q = np.column_stack([cpx[0] + rr * np.cos(aa), cpx[1] + rr * np.sin(aa)]).astype(np.float32)
    v = cv2.remap(image_bgr, q[:, 0:1], q[:, 1:2], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    px = np.clip(v.reshape(-1, 1, 3).astype(np.float32) / 255.0 * cs.gains_bgr, 0, 1)
    ab = np.median(cv2.cvtColor(px, cv2.COLOR_BGR2Lab).reshape(-1, 3)[:, 1:], axis=0)
    return float(np.linalg.norm(ab - tint)) >= params.min_chroma


def confirm_potted(cands: list[WinkCandidate], image_bgr: np.ndarray, camera: CameraModel, pot: PotDetection,
                   cs: ColourScene, params: PottedParams = PottedParams()) -> list[WinkCandidate]:
    """Drop potted candidates whose colour is only the cup's own tint: a wink in the cup must stand out from the
    cup's colour (Lab a, b distance), not just from neutral grey."""
    if not pot.found or pot.opening_px is None or len(pot.opening_px) < 3:
        return cands
    tint = _cup_ab(image_bgr, pot, cs)
    if tint is None:
        return cands
    return [c for c in cands if not c.potted or _stands_out_from_cup(c, image_bgr, camera, cs, tint, params)]


def split_behind_pot(cands: list[WinkCandidate], image_bgr: np.ndarray, camera: CameraModel, pot: PotDetection,
                     cs: ColourScene, plane_z_mm: float, params: PottedParams = PottedParams(),
                     rim: RimParams = RimParams()) -> list[WinkCandidate]:
    """Winks seen through the top opening that lie on the mat behind a (translucent) pot: no longer potted.

    One is behind the pot when its image centre fits neither the cup's floor nor a place on the mat under the
    pot (``cup_place``), it is of a colour of its own (not the cup's tint, which ``confirm_potted`` drops), and
    the pot's lip is drawn across it where it crosses its image (``vision.pot_rim.lip_step``); a disc that hides
    the lip lies on the rim and stays potted. A lip reading between the two keeps it potted but flagged.

    Returns the candidates that are no wink: one behind the pot of the felt's own hue is the felt seen through
    the tinted wall, which departs from the open felt as a wink of its hue does (tw_9899_005's green felt behind a
    translucent pot read as a green wink there).
    """
    tint = _cup_ab(image_bgr, pot, cs) if pot.opening_px is not None and len(pot.opening_px) >= 3 else None
    felt = COLOR_NAMES[cs.mat_class - 1] if cs.mat_class else None
    dropped: list[WinkCandidate] = []
    noise = None
    for c in cands:
        if not c.potted:
            continue
        cpx = camera.project_mm(np.array([[c.center_mm[0], c.center_mm[1], plane_z_mm]]))[0]
        if cup_place(cpx, c.radius_mm, c.sigma_mm, camera, pot) != BEHIND_POT:
            continue
        if tint is not None and not _stands_out_from_cup(c, image_bgr, camera, cs, tint, params):
            continue
        if noise is None:
            noise = felt_noise(image_bgr, camera, pot)
        ratio = lip_ratio(image_bgr, camera, pot, camera.image_to_table_mm(cpx[None, :], RIM_Z_MM)[0],
                          c.radius_mm, noise, rim)
        if ratio is None or ratio >= rim.lip_seen_ratio:
            c.potted = False
            if c.color == felt:
                dropped.append(c)
        elif ratio > rim.lip_covered_ratio:
            c.confidence = min(c.confidence, rim.lip_unsure_confidence)
    return dropped


def winks_in_pot(image_bgr: np.ndarray, camera: CameraModel, pot: PotDetection, cs: ColourScene,
                 pot_class: int, known: list[WinkCandidate], params: PottedParams = PottedParams()
                 ) -> list[WinkCandidate]:
    """Potted winks the label image missed (``known``: winks already found, which are not found twice)."""
    if not pot.found or pot.opening_px is None or len(pot.opening_px) < 3:
        return []
    h, w = image_bgr.shape[:2]
    poly = np.asarray(pot.opening_px, np.float64)
    x0, y0 = np.maximum(np.floor(poly.min(axis=0)).astype(int) - 2, 0)
    x1, y1 = np.minimum(np.ceil(poly.max(axis=0)).astype(int) + 3, [w, h])
    if x1 - x0 < 4 or y1 - y0 < 4:
        return []
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillPoly(mask, [np.round((poly - [x0, y0]) * 16).astype(np.int32)], 1, lineType=cv2.LINE_8, shift=4)
    # winks lie on the cup's floor: the inner wall above it (which a translucent pot tints with the felt
    # behind it) is not searched
    ang = np.linspace(0, 2 * np.pi, 72, endpoint=False)
    floor = np.column_stack([pot.center_mm[0] + params.floor_radius_mm * np.cos(ang),
                             pot.center_mm[1] + params.floor_radius_mm * np.sin(ang),
                             np.full(len(ang), POT_FLOOR_Z_MM)])
    floor_px = camera.project_mm(floor)
    floor_mask = np.zeros_like(mask)
    cv2.fillPoly(floor_mask, [np.round((floor_px - [x0, y0]) * 16).astype(np.int32)], 1, lineType=cv2.LINE_8,
                 shift=4)
    mask &= floor_mask
    if params.rim_clear_px > 0:
        k = 2 * params.rim_clear_px + 1
        mask = cv2.erode(mask, np.ones((k, k), np.uint8))
    cls = _colour_index(image_bgr[y0:y1, x0:x1], cs, params, mask, pot_class)
    floor_xy = camera.image_to_table_mm(np.array([[(x0 + x1) / 2, (y0 + y1) / 2]]), POT_FLOOR_Z_MM)[0]
    mmpp = camera.mm_per_px_at((float(floor_xy[0]), float(floor_xy[1])))
    r_px = {"small": SMALL_WINK_RADIUS_MM / mmpp, "large": LARGE_WINK_RADIUS_MM / mmpp}
    small_area = math.pi * r_px["small"] ** 2
    out: list[WinkCandidate] = []
    for k, name in enumerate(COLOR_NAMES):
        if k + 1 == pot_class:
            continue
        region = ((cls == k) & (mask > 0)).astype(np.uint8)
        region = cv2.morphologyEx(region, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        if region.sum() < params.min_region_fraction * small_area and (
                region.sum() < params.min_crescent_fraction * small_area
                or blend_of_neighbours(region.astype(bool), image_bgr[y0:y1, x0:x1], cls, mask > 0)):
            continue  # a fringe: the blurred blend of the colours around it (a crescent of a pigment goes on)
        explained = np.zeros_like(region)
        for c in known:
            if c.color != name:
                continue
            cpx = c.center_px if c.center_px is not None else camera.project_mm(
                np.array([[c.center_mm[0], c.center_mm[1], c.z_mm]]))[0]
            # its outline in the cup is known only to its uncertainty (part of it is hidden by the wall)
            grow_mm = min(c.sigma_mm, params.known_grow_max_mm)
            cv2.circle(explained, (round(cpx[0] - x0), round(cpx[1] - y0)),
                       round((c.radius_mm + grow_mm) / mmpp), 1, -1)
        while True:
            free = region & (1 - explained)
            if free.sum() < params.min_region_fraction * small_area:
                break
            depth = cv2.distanceTransform(region, cv2.DIST_L2, 5) * free
            iy, ix = np.unravel_index(int(np.argmax(depth)), depth.shape)
            d = float(depth[iy, ix])
            if d < 0.4 * r_px["small"]:
                break
            size = "large" if d >= params.large_depth_fraction * r_px["large"] else "small"
            disc = np.zeros_like(region)
            cv2.circle(disc, (int(ix), int(iy)), round(r_px[size]), 1, -1)
            new = int((disc & free).sum())
            explained |= disc
            if new < params.min_new_fraction * small_area:
                continue  # a corner of a wink already counted
            xy = camera.image_to_table_mm(np.array([[ix + x0, iy + y0]], float), POT_FLOOR_Z_MM)[0]
            cand = WinkCandidate(color=name, size=size, center_mm=xy, votes=new / small_area)
            cand.potted = True
            cand.z_mm = POT_FLOOR_Z_MM
            cand.sigma_mm = 5.0  # inside the cup: the walls hide part of the floor
            cand.center_px = np.array([ix + x0, iy + y0], float)
            cand.confidence = 0.7  # counted from a colour region, its size from how deep the region is
            cand.opening_fraction = 1.0
            out.append(cand)
        lower = _cup_crescent(region, explained, mask, [*known, *out], name, camera, x0, y0, r_px, params)
        if lower is not None:
            out.append(lower)
    return out


#: A colour region lying within this share of its distance to its nearest neighbour's colour off the blend line of
#: two neighbouring colours is their blurred mix (a fringe), not a pigment of its own.
BLEND_RESIDUAL_RATIO = 0.5


def blend_of_neighbours(region: np.ndarray, crop_bgr: np.ndarray, cls: np.ndarray, inside: np.ndarray) -> bool:
    """Whether a small colour region's mean colour is a mix of two colours beside it (a fringe).

    Where two colours meet, the camera's blur mixes them over a pixel or two, and the mix can take a third
    wink hue (red beside green reads yellow); a pigment no two of its neighbours can mix (red beside green and
    blue) is a wink's own, however little of it shows. The neighbours are the colour classes, and the cup's
    uncoloured inside, in a thin ring around the region."""
    ring = cv2.dilate(region.view(np.uint8), np.ones((5, 5), np.uint8)).astype(bool) & ~region & inside
    colours = crop_bgr.astype(np.float32)
    c = colours[region].mean(axis=0)
    sources = [colours[ring & (cls == k)].mean(axis=0) for k in np.unique(cls[ring]) if (ring & (cls == k)).sum() >= 3]
    if len(sources) < 2:
        return True  # nothing to judge it by: left a fringe, as before
    nearest = min(float(np.linalg.norm(c - a)) for a in sources)
    for i, a in enumerate(sources):
        for b in sources[i + 1:]:
            ab = b - a
            t = float(np.clip((c - a) @ ab / max(float(ab @ ab), 1e-6), 0.0, 1.0))
            if float(np.linalg.norm(c - (a + t * ab))) <= BLEND_RESIDUAL_RATIO * nearest:
                return True
    return False


def _cup_crescent(region: np.ndarray, explained: np.ndarray, floor: np.ndarray, winks: list[WinkCandidate],
                  name: str, camera: CameraModel, x0: int, y0: int, r_px: dict[str, float],
                  params: PottedParams) -> WinkCandidate | None:
    """A wink in the cup covered but for a crescent by winks of other colours lying on it.

    What is left of a colour's region after the discs that explain it is too thin for a disc of its own; it is
    a wink when a disc of a known radius holds it, much of the rest of that disc lies under the other-coloured
    winks found in the cup, and little of it is open floor (which would show the wink's colour there).
    """
    free = (region & (1 - explained)).astype(bool)
    small_area = math.pi * r_px["small"] ** 2
    if free.sum() < params.min_crescent_fraction * small_area:
        return None
    covered = np.zeros(region.shape, np.uint8)
    for o in winks:
        # winks of other colours hide it; so does one of its own colour on the rim, above everything in the cup
        if (o.color == name and o.z_mm < POT_HEIGHT_MM / 2) or o.center_px is None:
            continue
        ro = o.radius_mm / camera.mm_per_px_at((float(o.center_mm[0]), float(o.center_mm[1])))
        cv2.circle(covered, (round(o.center_px[0] - x0), round(o.center_px[1] - y0)), round(ro), 1, -1)
    # floor seen, not under another wink, not this colour: a disc there would show it
    open_floor = ((floor > 0) & (covered == 0) & ~region.astype(bool)).astype(np.float32)
    f = free.astype(np.float32)
    n_free = float(f.sum())
    best = None
    for size in ("small", "large"):
        rr = int(round(r_px[size]))
        k = np.zeros((2 * rr + 1, 2 * rr + 1), np.float32)
        cv2.circle(k, (rr, rr), rr, 1.0, -1)
        held = cv2.filter2D(f, -1, k, borderType=cv2.BORDER_CONSTANT)  # crescent pixels inside the disc
        shown = cv2.filter2D(open_floor, -1, k, borderType=cv2.BORDER_CONSTANT)  # other floor inside it
        under = cv2.filter2D(covered.astype(np.float32), -1, k, borderType=cv2.BORDER_CONSTANT)  # hidden by others
        ok = ((held >= params.crescent_held * n_free) & (shown <= params.crescent_open_max * k.sum())
              & (under >= params.crescent_under_min * k.sum()))
        if not ok.any():
            continue
        score = np.where(ok, held - shown, -np.inf)
        i = int(np.argmax(score))
        iy, ix = divmod(i, score.shape[1])
        if best is None or score[iy, ix] > best[0]:
            best = (float(score[iy, ix]), size, ix, iy)
    if best is None:
        return None
    _, size, ix, iy = best
    xy = camera.image_to_table_mm(np.array([[ix + x0, iy + y0]], float), POT_FLOOR_Z_MM)[0]
    cand = WinkCandidate(color=name, size=size, center_mm=xy, votes=n_free / small_area)
    cand.potted = True
    cand.z_mm = POT_FLOOR_Z_MM
    cand.sigma_mm = 5.0
    cand.center_px = np.array([ix + x0, iy + y0], float)
    cand.confidence = 0.6  # a crescent only: its size and place rest on the part that shows
    cand.size_confidence = 0.6
    cand.opening_fraction = 1.0
    return cand


#: Plan radius of the cup floor that shows a wink's outline against the floor itself (inside the floor's own edge
#: with the wall, a circle of its own).
FLOOR_CLEAR_RADIUS_MM = POT_BASE_RADIUS_MM - 2.5


def check_potted_sizes(cands: list[WinkCandidate], image_bgr: np.ndarray, camera: CameraModel,
                       pot: PotDetection) -> None:
    """Size (and centre) of winks lying in the cup from their own outline, at their height in the cup.

    The labels inside the cup see a fragment of a wink, and a region's depth sizes it only roughly. A wink on
    the floor shows its outline against the floor through the top opening: the ring search of the mat
    (``ring_responses``) runs in the plane of its top face, on the floor seen through the opening and away from
    the other winks in the cup. A clear majority of outline edge for the other radius changes the size.
    """
    if not pot.found or pot.opening_px is None or len(pot.opening_px) < 3:
        return
    opening = np.asarray(pot.opening_px, np.float32).reshape(-1, 1, 2)
    potted = [c for c in cands if c.potted]
    for c in potted:
        if c.z_mm > POT_HEIGHT_MM / 2:
            continue  # on the rim: sized by its own whole outline there (vision.pot_rim)
        z_top = c.z_mm + WINK_THICKNESS_MM / 2
        others = [o for o in potted if o is not c]

        # the other winks in the cup as the camera sees them (one on the rim hides the floor under its image)
        discs = []
        for o in others:
            opx = camera.project_mm(np.array([[o.center_mm[0], o.center_mm[1], o.z_mm]]))[0]
            discs.append((opx, (o.radius_mm + 1.5) / camera.mm_per_px_at((float(o.center_mm[0]),
                                                                           float(o.center_mm[1])))))

        def visible(pts: np.ndarray, discs=discs, z_top=z_top) -> np.ndarray:
            ok = np.linalg.norm(pts - pot.center_mm, axis=1) <= FLOOR_CLEAR_RADIUS_MM
            idx = np.flatnonzero(ok)
            if len(idx):
                q = camera.project_mm(np.column_stack([pts[idx], np.full(len(idx), z_top)]))
                seen = np.array([cv2.pointPolygonTest(opening, (float(x), float(y)), True) > 1.0 for x, y in q])
                for opx, r_px in discs:
                    seen &= np.linalg.norm(q - opx, axis=1) > r_px
                ok[idx[~seen]] = False
            return ok

        res = ring_responses(image_bgr, camera, c.center_mm, z_top, visible)
        if res is None:
            continue
        s_small, s_large, c_small, c_large = res
        cur, oth = (s_small, s_large) if c.size == "small" else (s_large, s_small)
        if oth > RING_SWITCH_RATIO * cur:
            c.size = "large" if c.size == "small" else "small"
            c.center_mm = c_large if c.size == "large" else c_small
            c.center_px = camera.project_mm(np.array([[c.center_mm[0], c.center_mm[1], z_top]]))[0]
