"""From a photograph to a tiddlywinks scene document: calibration, mat, pot, winks, stacking order.

``analyze_tiddlywinks(frame_bgr, calibration=None)`` returns the scene document (the shape of
``geometry.records`` plus ``image``, ``mat``, ``pot`` and ``calibration``); the rulings are the adjudicator's,
added by ``api.analysis`` (vision never imports the rule engine).
``measure_tiddlywinks`` stops before the rules and returns the measured winks and pot.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry import tiddlywinks as tw
from geometry.constants import MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM, POT_TOP_RADIUS_MM, WINK_THICKNESS_MM
from geometry.records import scene_to_document
from geometry.types import DEFAULT_CORNER_SIGNS, Color, TiddlywinksScene, Wink
from vision.arc_size import decide_sizes_from_arcs, join_paint_cut
from vision.colour import COLOR_NAMES, ColourParams, ColourScene, build_colour_scene, classify_bgr
from vision.core_colour import tinted_felt
from vision.crescents import crescent_lowers
from vision.felt_cores import felt_core_winks, felt_label_rims
from vision.felt_discs import felt_discs
from vision.foreign_pigment import ForeignPigmentParams, leave_open, refuse_foreign_moves
from vision.hidden_twins import forget, hidden_twins
from vision.ortho import OrthoGrid, pyramid_size, rectify_pyramid
from vision.pile_echoes import refit_pile_echoes
from vision.pot import PotDetection, PotParams, detect_pot
from vision.pot_floor import pot_colour_winks
from vision.pot_hidden import colours_pot_may_hide, cup_floor_hidden_share
from vision.pot_rim import rim_winks
from vision.pot_side import pot_side_winks
from vision.potted import POT_FLOOR_Z_MM, check_potted_sizes, confirm_potted, split_behind_pot, winks_in_pot
from vision.rim_check import felt_rim_winks
from vision.size_sets import SizeRead, SizeVerdict, sizes_by_colour_set
from vision.twin_discs import split_twin_blobs
from vision.union_rims import union_rim_winks
from vision.types import FrameDetections, PieceDetection, PieceKind, VisionError, WinkMeasurement
from vision.stacking import (cap_by_overlap, drop_open_pairs, flag_tilted_slivers, order_thin_laps,
                             pile_implied_pairs, restore_open_pairs, review_order)
from vision.winks import (
    RADII_MM,
    WinkCandidate,
    WinkDetectorParams,
    _dist,
    _sample_labels,
    assign_poses,
    check_sizes,
    decide_order,
    find_candidates,
    order_new_overlaps,
    other_radius_fits_better,
    other_radius_shifted,
    refine,
    refine_batch,
    refit_other_size,
)

#: Height of the orthophoto plane: the top face of a flat wink.
ORTHO_Z_MM = WINK_THICKNESS_MM
#: Calibrations whose table origin comes from the photograph's own mat outline (not a measured reference).
SELF_CALIBRATED_SOURCES = ("mat", "corners")
#: Position uncertainty of a wink partly hidden behind the pot whose size the fit could not confirm.
POT_HIDDEN_SIZE_SIGMA_MM = 2.0 * (11.0 - 8.0)
#: Lab chroma above which the pot's inner wall is a colour (a grey, white or black pot stays well below).
POT_CHROMA_MIN = 12.0
#: Position uncertainty floor of a wink partly hidden behind the pot.
POT_OCCLUSION_SIGMA_MM = 0.6
#: Position uncertainty floor of a wink whose size the edge fit could not confirm: the other size through the same
#: visible arc moves the hidden side of the outline by twice the 3 mm radius gap (two sigmas cover it).
SIZE_UNVERIFIED_SIGMA_MM = 3.0
#: The two known wink radii differ by this (TW 2: 22 and 16 mm diameters).
SIZE_GAP_MM = RADII_MM["large"] - RADII_MM["small"]
#: Position uncertainty floor of a wink found by its shape alone (the labels left it neutral): its outline is
#: faint against the felt, and a soft shadow on one side can pull the fit by a few pixels.
FAINT_OUTLINE_SIGMA_MM = 1.2


@dataclass(frozen=True, slots=True)
class TiddlywinksParams:
    """Parameters of the whole photograph-to-scene pipeline."""

    ortho_mm_per_px: float = 1.25  # coarse stage only; the fit runs on full-resolution edges
    margin_mm: float = 25.0  # table shown around the mat (overhanging winks, the mat's side band)
    order_confidence_min: float = 0.75
    size_switch_margin_mm: float = 0.8  # a fitted radius this much nearer the other size changes the size  # below this a vertical order is reported as undecided (TW I-13)
    colour: ColourParams = field(default_factory=ColourParams)
    winks: WinkDetectorParams = field(default_factory=WinkDetectorParams)
    pot: PotParams = field(default_factory=PotParams)
    foreign: ForeignPigmentParams = field(default_factory=ForeignPigmentParams)


@dataclass(slots=True)
class Calib:
    camera: CameraModel
    source: str
    reprojection_error_mm: float
    mat_corners_px: np.ndarray | None = None


@dataclass(slots=True)
class Measurement:
    winks: list[WinkMeasurement]
    pot: PotDetection
    calibration: Calib
    detections: FrameDetections
    undecided_pairs: list[tuple[str, str, float]]
    timing_ms: dict[str, float]
    colour: ColourScene | None = None
    grid: OrthoGrid | None = None
    #: A pot whose inside is a wink colour: winks of that colour in it cannot be told from its shaded wall.
    pot_hides_color: str | None = None
    #: Colours short of their six winks of which the cup can hide one from this camera (``vision.pot_hidden``).
    pot_may_hide: tuple[str, ...] = ()
    #: Share of the cup's floor out of view (behind its wall, under the winks found): where a wink can lie unseen.
    pot_floor_hidden: float = 0.0


# --- calibration -------------------------------------------------------------------------------------------

def resolve_calibration(frame_bgr: np.ndarray, calibration: Any) -> Calib:
    """A ``TableCalibration``, a ``CameraModel`` or ``None`` (self-calibrate from the mat)."""
    if calibration is None:
        try:
            from calibration.mat import calibrate_from_mat
        except ImportError as exc:  # pragma: no cover - calibration is part of the package
            raise VisionError(f"no calibration given and mat self-calibration is unavailable: {exc}") from None
        cal = calibrate_from_mat(frame_bgr)
        return Calib(cal.camera, str(cal.source), float(cal.reprojection_error_mm), cal.mat_corners_px)
    if isinstance(calibration, CameraModel):
        return Calib(calibration, "given", 0.0, None)
    if hasattr(calibration, "camera"):
        return Calib(calibration.camera, str(getattr(calibration, "source", "given")),
                     float(getattr(calibration, "reprojection_error_mm", 0.0) or 0.0),
                     getattr(calibration, "mat_corners_px", None))
    if isinstance(calibration, dict):
        cam = CameraModel.from_dict(calibration.get("camera", calibration))
        return Calib(cam, str(calibration.get("source", "given")),
                     float(calibration.get("reprojection_error_mm", 0.0) or 0.0), None)
    raise VisionError(f"calibration must be a TableCalibration or CameraModel, got {type(calibration).__name__}")


def camera_for_frame(camera: CameraModel, frame_wh: tuple[int, int]) -> CameraModel:
    """The camera for a frame of another size with the same aspect (a resized picture): scale K."""
    w, h = frame_wh
    cw, ch = camera.image_size_wh_px
    if (w, h) == (cw, ch):
        return camera
    s = w / cw
    if abs(h / ch - s) > 0.01 * s:
        raise VisionError(f"frame size {w}x{h} does not match the calibration's {cw}x{ch}")
    K = camera.K.copy()
    K[0, 0] *= s
    K[1, 1] *= s
    K[0, 2] = (K[0, 2] + 0.5) * s - 0.5
    K[1, 2] = (K[1, 2] + 0.5) * s - 0.5
    return CameraModel(K=K, dist=camera.dist, rvec=camera.rvec, tvec=camera.tvec, image_size_wh_px=(w, h))


# --- measurement ---------------------------------------------------------------------------------------------

def _ortho_grid(params: TiddlywinksParams) -> OrthoGrid:
    m = params.margin_mm
    return OrthoGrid.covering(-MAT_HALF_LENGTH_MM - m, MAT_HALF_LENGTH_MM + m, -MAT_HALF_WIDTH_MM - m,
                              MAT_HALF_WIDTH_MM + m, params.ortho_mm_per_px, ORTHO_Z_MM)


def _polygon_to_ortho_mask(camera: CameraModel, grid: OrthoGrid, poly_px: np.ndarray) -> np.ndarray:
    xy = camera.image_to_table_mm(poly_px, grid.z_mm)
    cr = grid.ortho_from_table(xy)
    m = np.zeros((grid.height_px, grid.width_px), np.uint8)
    cv2.fillPoly(m, [np.round(cr * 16).astype(np.int32)], 1, shift=4)
    return m.view(bool)  # 0/1 bytes


def measure_tiddlywinks(frame_bgr: np.ndarray, calibration: Any = None,
                        params: TiddlywinksParams = TiddlywinksParams(), *,
                        focus: Callable[[tuple[float, float], float], bool] | None = None) -> Measurement:
    """Detect and measure pot and winks (no rules).

    ``focus(center_mm, radius_mm)``, when given, keeps only the wink candidates it accepts (and any in the
    pot) for the fit: the live tracker passes where the picture changed since the last rest, whose other
    winks it already measured (and the orientation of a self-calibration is then not re-decided)."""
    if frame_bgr is None or frame_bgr.ndim != 3 or frame_bgr.shape[2] != 3 or frame_bgr.dtype != np.uint8:
        raise VisionError("frame must be an 8-bit BGR image (H, W, 3)")
    t0 = time.perf_counter()
    timing: dict[str, float] = {}
    cal = resolve_calibration(frame_bgr, calibration)
    h, w = frame_bgr.shape[:2]
    camera = camera_for_frame(cal.camera, (w, h))
    cal.camera = camera
    timing["calibration"] = (time.perf_counter() - t0) * 1e3

    # coarse stage: an orthophoto at about the ortho resolution, from a pyramid level of the frame
    t1 = time.perf_counter()
    grid = _ortho_grid(params)
    mm_per_px = camera.mm_per_px_at((0.0, 0.0))
    levels, scale = 0, 1.0
    while mm_per_px / scale * 2 <= params.ortho_mm_per_px * 1.25 and min(pyramid_size((w, h), levels)) > 600:
        levels += 1
        scale *= 0.5
    ortho, valid = rectify_pyramid(frame_bgr, camera, grid, levels)
    timing["rectify"] = (time.perf_counter() - t1) * 1e3

    t2 = time.perf_counter()
    cs = build_colour_scene(ortho, grid, params.colour, valid_mask=valid)
    timing["colour"] = (time.perf_counter() - t2) * 1e3

    t3 = time.perf_counter()
    pot = detect_pot(frame_bgr, camera, cs, grid, params.pot, mm_per_px=mm_per_px,
                     trust_centre_mark=cal.source not in SELF_CALIBRATED_SOURCES)
    sil = _polygon_to_ortho_mask(camera, grid, pot.silhouette_px)
    opening = _polygon_to_ortho_mask(camera, grid, pot.opening_px)
    exclude = sil & ~opening if pot.found else None
    pot_class = 0
    block = sil if pot.found else None
    if pot.found:
        # The pot's own colour, from the top of its inner wall (a band just inside the top opening: potted
        # winks lie on the floor below it, one on the rim covers a small part of it), calibrated like the
        # winks. A chromatic pot of a wink's hue hides such winks in its shaded inside; a grey one does not.
        # (on the opening's bounding box with the erosion's reach around it: the same band, read on a patch)
        bx, by, bw, bh = cv2.boundingRect(opening.view(np.uint8))
        r0, r1, c0, c1 = max(by - 3, 0), by + bh + 3, max(bx - 3, 0), bx + bw + 3
        op = opening[r0:r1, c0:c1]
        band = op & ~cv2.erode(op.astype(np.uint8), np.ones((7, 7), np.uint8)).astype(bool)
        if band.sum() >= 30:
            med = np.median(ortho[r0:r1, c0:c1][band].astype(np.float32) / 255.0, axis=0)
            name, _, chroma = classify_bgr(med, cs.gains_bgr, cs.hue_centres_deg)
            if chroma >= POT_CHROMA_MIN:
                pot_class = COLOR_NAMES.index(name) + 1
    timing["pot"] = (time.perf_counter() - t3) * 1e3

    t4 = time.perf_counter()
    wp = params.winks
    near_misses: list[WinkCandidate] = []
    cands = find_candidates(cs, grid, wp, exclude_mask=exclude, opening_mask=opening if pot.found else None,
                            pot_class=pot_class, pot_center_mm=pot.center_mm if pot.found else None,
                            mm_per_px_at=lambda c: camera.mm_per_px_at((float(c[0]), float(c[1]))),
                            image_bgr=frame_bgr, camera=camera, near_misses=near_misses)
    # winks covered but for a crescent, beside a wink of another colour (under it)
    pot_zone = cv2.dilate(sil.view(np.uint8), np.ones((5, 5), np.uint8)).view(bool) if pot.found else None

    def near_pot(pts: np.ndarray) -> np.ndarray:
        return _sample_labels(pot_zone.view(np.uint8), grid.ortho_from_table(pts)) == 1
    # label discs of the felt's hue shown in part only (the shade at a mat's end): kept if a pigment or a rim shows
    unrimmed = felt_label_rims(cands, cs, frame_bgr, camera, exclude=near_pot if pot_zone is not None else None)
    cands = [c for c in cands if not any(c is d for d in unrimmed)]
    lowers = crescent_lowers(cands, frame_bgr, camera, cs, grid, exclude_mask=pot_zone)
    # a pile's middle wink, found from the crescent it shows beside the wink over it, that lies on a wink of its
    # own colour: little of its outline meets the felt, and an edge fit slides onto its twin's outline (the
    # crescent, read on the full image, is where it is)
    anchored = {id(c) for c in lowers if any(
        o.color == c.color and _dist(o.center_mm, c.center_mm) < o.radius_mm + c.radius_mm - 2.0
        for o in cands)}
    cands += lowers
    # winks of a found wink's own colour, partly under or over it: the part of their outline beyond its rim
    unions = union_rim_winks(cands, frame_bgr, camera, cs, grid, exclude_mask=pot_zone)
    # (each with the found wink of its colour whose outline it was split from: one outline, two discs; the
    # candidates themselves are held, not their ids, which a dropped candidate's successor may reuse)
    one_outline = [(n, o) for n in unions for o in cands
                   if o.color == n.color and _dist(o.center_mm, n.center_mm) < o.radius_mm + n.radius_mm]
    cands += unions
    # lone winks the labels left neutral (a wink of the felt's hue on noisy felt, a dull-lit one): their shape
    cands += felt_discs(cs, grid, cands, frame_bgr, camera, exclude_mask=pot_zone, near_misses=near_misses)
    # winks of the felt's hue whose labels were refused (in the shade at the mat's end, across a baseline, a pale
    # one with a neutral halo): their rims
    noise = 255.0 * max(cs.mat_noise[1], 0.01) * float(np.mean(cs.mat_bgr))
    if near_misses:
        cands += felt_rim_winks(near_misses, cands, frame_bgr, camera, noise,
                                exclude=near_pot if pot_zone is not None else None)
    # winks of the felt's hue whose neutral halo joined them to a neighbour, or whose shadow moved their outline:
    # their pigment cores, read by the rim in chromaticity
    cands += felt_core_winks(cs, grid, cands, frame_bgr, camera, exclude=near_pot if pot_zone is not None else None)
    # winks lying against the pot's wall, which the pot's zone cut (the pot hides little of one beside its foot)
    if pot_zone is not None:
        cands += pot_side_winks(cs, grid, cands, frame_bgr, camera, pot, pot_zone, noise)
    # two winks of the felt's hue whose pigment blob one wink was found in: one disc cannot explain it, two do
    cands = split_twin_blobs(cands, frame_bgr, camera, cs, grid, exclude=near_pot if pot_zone is not None else None)
    # a wink placed across a pile's colour junction beside one of its own colour: where its crescent is
    anchored |= {id(c) for c in refit_pile_echoes(cands, frame_bgr, camera, cs, grid)}
    if focus is not None:
        cands = [c for c in cands if c.opening_fraction >= 0.5
                 or focus((float(c.center_mm[0]), float(c.center_mm[1])), float(c.radius_mm))]
    timing["candidates"] = (time.perf_counter() - t4) * 1e3

    t5 = time.perf_counter()
    # potted: seen through the pot's top opening (inside the cup or on its rim, TW 5(c))
    for c in cands:
        c.potted = bool(pot.found and c.opening_fraction >= 0.5)
    if pot.found:
        # a translucent pot shows a wink lying behind it through its wall and opening: on the mat, not potted
        felt_behind = split_behind_pot(cands, frame_bgr, camera, pot, cs, ORTHO_Z_MM)
        cands = [c for c in cands if not any(c is d for d in felt_behind)]
    # a middle that is only tinted felt (a penumbra that caught the pot's colour, a neighbour's blurred halo, a
    # lighter band at the mat's end) is no wink: a wink's middle is its pigment
    tinted = tinted_felt([c for c in cands if not c.potted], frame_bgr, camera, grid, block,
                         params.colour.light_floor, params.colour.noise_k * cs.mat_noise[0])
    cands = [c for c in cands if not any(c is t for t in tinted)]
    # size of lone winks the labels cannot size (felt-coloured, at the mat edge): the outline's own edge
    check_sizes([c for c in cands if not c.potted], frame_bgr, camera, cs.mat_class)
    # a large wink across a baseline, its colour parted by the paint into two parts read as two winks
    cut = join_paint_cut(cands, frame_bgr, camera, cs, grid, pot_zone)
    cands = [c for c in cands if not any(c is r for r in cut)]
    _name(cands)
    labels = cs.labels
    live = [c for c in cands if not c.potted]
    decide_order(live, labels, grid, frame_bgr, camera, wp, noise)
    # the first fit is posed on every coarse order, as a hypothesis: the reviews then judge each pair on the fitted
    # centres, under both of its poses; the final poses, after them, rest on decided orders only
    assign_poses(live)
    # sub-pixel fit: clean winks first (they also measure the edge offset of this image), then the rest
    if live:
        cc_ = np.array([c.center_mm for c in live])
        rr_ = np.array([c.radius_mm for c in live])
        dmat = np.sqrt(((cc_[:, None, :] - cc_[None, :, :]) ** 2).sum(axis=2)) - rr_[:, None] - rr_[None, :]
        np.fill_diagonal(dmat, np.inf)
        crowded = {live[i].wink_id for i in np.flatnonzero(dmat.min(axis=1) <= 3.0)}
    else:
        crowded = set()

    def clean(c: WinkCandidate) -> bool:
        return not c.above and not c.order_confidence and c.wink_id not in crowded
    biases = [b for b in refine_batch([c for c in live if clean(c)], live, frame_bgr, camera, labels, grid,
                                      wp, None, mm_per_px, block) if b is not None]
    bias = float(np.median(biases)) if len(biases) >= 2 else 0.0
    refine_batch([c for c in live if not clean(c) and id(c) not in anchored], live, frame_bgr, camera, labels,
                 grid, wp, bias, mm_per_px, block)
    # Size from the fit (known radii 8 and 11 mm): an outline seen over most of its length measures its own
    # radius through its edge offset; the image's common offset (blur, bevel) is the median over clean winks.
    if len(biases) >= 3:
        for c in live:
            if c.edge_offset_px is None or c.tilt_deg > 0 or c.fit_fraction < wp.size_fit_fraction:
                continue
            mmpp = camera.mm_per_px_at(tuple(c.center_mm))
            r_app = c.radius_mm + (c.edge_offset_px - bias) * mmpp
            other = "small" if c.size == "large" else "large"
            r_other = RADII_MM[other]
            if c.ring_strength is not None and c.ring_strength[other] <= c.ring_strength[c.size]:
                continue  # the whole outline's edge says this size (the offset of a faint edge is not reliable)
            if abs(r_app - r_other) + params.size_switch_margin_mm < abs(r_app - c.radius_mm):
                c.size = other
                c.edge_offset_px = None
                refine(c, live, frame_bgr, camera, labels, grid, wp, bias, mm_per_px, block)
            elif abs(r_app - c.radius_mm) > SIZE_GAP_MM / 2:
                # the fitted edge lies nearer neither size's outline (a shadow's or a paint edge pulled it): the
                # fit does not confirm the size, which stays the better guess, flagged
                c.size_confidence = min(c.size_confidence, SIZE_UNVERIFIED_CONFIDENCE)
    # a partly hidden wink's size from the curvature of the arc of its rim that shows (flagged ones only)
    pre_arc = {id(c): (c.center_mm.copy(), c.size, c.size_confidence, c.edge_offset_px, c.arc_sigma_mm) for c in live}
    resized = decide_sizes_from_arcs(live, frame_bgr, camera, cs, grid, pot_zone, wp.size_fit_fraction)
    # an arc that is another wink's rim in a steep pile moves the disc over that wink's pigment: refused; the wink
    # whose pigment it is, missed by the search, lies where the arc puts it
    resized, owners = refuse_foreign_moves(resized, pre_arc, live, labels, grid, params.foreign)
    if owners:
        cands += owners
        live += owners
        _name(cands)
    refine_batch([c for c in resized if id(c) not in anchored], live, frame_bgr, camera, labels, grid, wp,
                 bias, mm_per_px, block)
    # a flagged wink on or under one of its colour shows an arc of its rim that both radii's circles may cross:
    # the radius whose circle runs along it takes the wink (its size stays flagged, read again with its colour's
    # set); the other reading is kept for the order reviews, which fit it anyway. So does the other radius where the
    # colour's set (TW 2: two large, four small) makes it the likelier size and the wink's own read does not: the
    # set reads it so at the end anyway, and its pairs are judged, and its pile posed, where that size puts it
    # (too little of its outline may show for that radius's own fit: the seen arc then puts its centre the radii's
    # difference along the arc; rigB_01's green-S2, 9 % of its outline seen, was judged large, 3.7 mm off)
    refits: dict[str, WinkCandidate | None] = {}
    by_set = {id(c): v for c, v in zip(cands, _set_verdicts(cands, params)) if v is not None}
    for c in live:
        if (c.fit_fraction >= wp.size_fit_fraction or c.arc_sigma_mm is not None or id(c) in anchored
                or not any(o is not c and o.color == c.color
                           and _dist(o.center_mm, c.center_mm) < o.radius_mm + c.radius_mm for o in live)):
            continue
        alt = refit_other_size(c, live, frame_bgr, camera, labels, grid, wp, bias, mm_per_px, block)
        refits[c.wink_id] = alt
        v = by_set.get(id(c))
        if other_radius_fits_better(c, alt) or (v is not None and v.bound_by_set and v.size != c.size):
            alt = alt or other_radius_shifted(c, live, camera, labels, grid, wp, block)
            refits[c.wink_id] = replace(c, center_mm=c.center_mm.copy())
            for f in fields(alt):
                if f.name not in ("above", "order_confidence"):
                    setattr(c, f.name, getattr(alt, f.name))
            c.size_confidence = min(c.size_confidence, SIZE_UNVERIFIED_CONFIDENCE)
    # pairs that overlap only as fitted (a size or centre the coarse read had wrong) get their first order
    new_pairs = order_new_overlaps(live, labels, grid, frame_bgr, camera, wp, noise)
    # the order again on the fitted centres, each hypothesis with the pose it implies (the cut rim, in 3-D); a
    # one-colour pair also under the other size of a wink whose size the fit did not confirm

    def refit(c: WinkCandidate) -> WinkCandidate | None:
        if c.wink_id not in refits:
            refits[c.wink_id] = refit_other_size(c, live, frame_bgr, camera, labels, grid, wp, bias, mm_per_px,
                                                 block)
        return refits[c.wink_id]

    def chosen_by_outline(c: WinkCandidate, alt: WinkCandidate | None) -> bool:
        # the other radius fits less of the seen outline, and that worse
        return alt is None or (alt.fit_fraction < c.fit_fraction and alt.fit_rms_px > c.fit_rms_px)

    def size_untested(c: WinkCandidate) -> bool:
        # too few clean winks to measure the image's edge offset (blur, bevel; no fit-offset test), no other read
        # of its radius (the curvature of its seen arc, its colour's set, the whole outline's ring), and its other
        # radius not fittable: its size_confidence of 1.0 is ``WinkCandidate``'s default, and only the fit's
        # residual, against an outline whose offset is unknown, chose its size (the raised, tilted small upper of
        # a one-colour pair at 1.44 mm per pixel posed flat and fitted large, 0.40 px against 0.50 px at its own
        # radius: claimed the wrong way at 0.85-0.99). Where the other radius fits, the pair is judged under it
        # only where the fit left the size unconfirmed, as in any image: counted unconfirmed, a small lower wink
        # of a two-wink scene, fitted as well at either radius, reads the other order surely at the large one and
        # leaves a right order undecided (``test_a_same_colour_squop_is_ordered_with_confidence_...``)
        return (len(biases) < 3 and c.arc_sigma_mm is None and not c.size_by_set and c.ring_strength is None
                and chosen_by_outline(c, refit(c)))

    def size_unconfirmed(c: WinkCandidate) -> bool:
        return c.size_confidence < SIZE_SURE_CONFIDENCE or c.fit_fraction < wp.size_fit_fraction

    def other_size(c: WinkCandidate) -> WinkCandidate | None:
        if not size_unconfirmed(c):
            return None
        # fitted once (the reviews change orders, not places): each copy carries the order graph as it stands
        alt = refit(c)
        if chosen_by_outline(c, alt):
            return None  # the other radius fits less of the seen outline, and that worse: the outline chose
        return replace(alt, center_mm=alt.center_mm.copy(), above=list(c.above),
                       order_confidence=dict(c.order_confidence))
    review_order(live, frame_bgr, camera, wp, noise, params.order_confidence_min, other_size,
                 lambda a, b: any((a is n and b is o) or (a is o and b is n) for n, o in one_outline),
                 size_unconfirmed, size_untested)
    # a wink known only from an arc of its rim and its pigment inside it: no outline of it was fitted, so no rim
    # read of its pairs is evidence (tw_6363_001's red-L2 read under red-L1 at 1.0: truth the other way round)
    leave_open(live, owners, params.foreign)
    # a pair first seen as fitted that the reviews left open is dropped; a wink known from an arc has its orders
    # left open on purpose: they are reported undecided once every fit is done (``restore_open_pairs``)
    owners_open = [(a, b) if b.wink_id in a.above else (b, a) for a, b in new_pairs
                   if a.order_confidence.get(b.wink_id, 0.5) < params.order_confidence_min
                   and any(o is w for o in owners for w in (a, b))]
    drop_open_pairs(new_pairs, params.order_confidence_min)
    # refit heights/tilts with the fitted centres, then one more pass for the tilted ones
    before = {c.wink_id: (c.z_mm, c.tilt_deg) for c in live}
    assign_poses(live, params.order_confidence_min)

    def posed_anew(c: WinkCandidate) -> bool:
        z0, t0_ = before[c.wink_id]
        moved = abs(c.z_mm - z0) > 0.1 or abs(c.tilt_deg - t0_) > 0.5
        return c.tilt_deg > 0 and moved and id(c) not in anchored
    refine_batch([c for c in live if posed_anew(c)], live, frame_bgr, camera, labels, grid, wp, bias,
                 mm_per_px, block)
    # a wink under one of its own colour that the fit put inside that wink's image disc shows nothing: one wink
    # read twice (its outline cut by the mat's edge band); the one left rests on nothing it was posed on
    twins = hidden_twins(live, camera, wp.min_crescent_px)
    if twins:
        cands = [c for c in cands if not any(c is t for t in twins)]
        live = [c for c in live if not any(c is t for t in twins)]
        forget(live, twins)
        before = {c.wink_id: (c.z_mm, c.tilt_deg) for c in live}
        assign_poses(live, params.order_confidence_min)
        refine_batch([c for c in live if id(c) not in anchored and (
            abs(c.z_mm - before[c.wink_id][0]) > 0.1 or abs(c.tilt_deg - before[c.wink_id][1]) > 0.5)],
            live, frame_bgr, camera, labels, grid, wp, bias, mm_per_px, block)
    # after every fit: the arc-known winks' open orders, and two colours whose lap the photo shows but that have no
    # order (too thin as fitted for the reviews, or left open by them and dropped), reported
    restore_open_pairs(owners_open, live, params.foreign.owner_order_confidence)
    order_thin_laps(live, frame_bgr, camera, wp, noise, params.order_confidence_min)
    # an order only as sure as the overlap it rests on, given the fitted centres and unconfirmed sizes
    cap_by_overlap(live, lambda c: c.fit_fraction < wp.size_fit_fraction)
    for c in live:
        # a wink whose own radius the fit could not see (mostly hidden) may be the other size: its edge may
        # then be 3 mm elsewhere, and its uncertainty says so
        if c.fit_fraction < wp.size_fit_fraction:
            c.sigma_mm = max(c.sigma_mm, SIZE_UNVERIFIED_SIGMA_MM if c.arc_sigma_mm is None else c.arc_sigma_mm)
        if c.neutral_inside:
            c.sigma_mm = max(c.sigma_mm, FAINT_OUTLINE_SIGMA_MM)
        # the calibration's own error adds to every measured position
        c.sigma_mm = math.hypot(c.sigma_mm, cal.reprojection_error_mm)
    # a pile's top wink over its bottom one, where their footprints overlap by a sliver (B between them)
    pile_implied_pairs(live, params.order_confidence_min)
    # an order on a sliver of a tilted wink's footprint thinner than the flat disc's excess is not asserted
    flag_tilted_slivers(live, params.order_confidence_min)
    for c in cands:
        if c.potted:
            _place_potted(c, camera, pot)
    if pot.found:
        # the cup read on its own, against the pot's inside: a tint of the cup itself is no wink, and winks
        # there the felt-based labels broke up are found
        cands = confirm_potted(cands, frame_bgr, camera, pot, cs)
        cands += winks_in_pot(frame_bgr, camera, pot, cs, pot_class, cands)
        before_rim = cands
        cands = rim_winks(frame_bgr, camera, pot, cs, cands)
        if any(not any(c is o for o in cands) for c in before_rim):
            # a candidate read in the cup was the image of a wink on the rim: the colour it stood for in the cup
            # is read again (a wink under it there shows as a crescent it no longer explains)
            cands += winks_in_pot(frame_bgr, camera, pot, cs, pot_class, cands)
        # winks of the pot's own colour in its cup, which no colour tells from it: their rims
        cands += pot_colour_winks(frame_bgr, camera, pot, cs, pot_class, cands)
        check_potted_sizes(cands, frame_bgr, camera, pot)
    timing["fit"] = (time.perf_counter() - t5) * 1e3

    # pot occlusion: a wink behind the pot (farther from the camera) whose image overlaps it is partly hidden
    cam_xy = camera.center_mm[:2]
    for c in live:
        d_img = _dist(c.center_mm, pot.center_mm)
        if pot.found and d_img < POT_TOP_RADIUS_MM + c.radius_mm + 40.0:
            behind = _dist(c.center_mm, cam_xy) > _dist(pot.center_mm, cam_xy)
            cpx = camera.project_mm(np.array([[c.center_mm[0], c.center_mm[1], ORTHO_Z_MM]]))
            near = cv2.pointPolygonTest(pot.silhouette_px.astype(np.float32).reshape(-1, 1, 2),
                                        (float(cpx[0, 0]), float(cpx[0, 1])), True)
            r_px = c.radius_mm / mm_per_px
            if behind and near > -r_px:
                c.occluded_by_pot = True
                # part of the outline is hidden by the pot: what is left is an arc whose far end is the
                # pot's own edge; say so in the uncertainty (TW I-13 spirit: never a confident guess)
                c.sigma_mm = max(c.sigma_mm, POT_OCCLUSION_SIGMA_MM)
                if c.fit_fraction < wp.size_fit_fraction and c.arc_sigma_mm is None:
                    # its size unconfirmed, and the hidden side is the one facing the pot (the TW P1 distance):
                    # the other size through the same visible arc moves that edge by twice the radius gap
                    c.sigma_mm = max(c.sigma_mm, POT_HIDDEN_SIZE_SIGMA_MM)

    # a flagged wink's size read with its colour's others: two large and four small to a colour (TW 2)
    _sizes_by_set(cands, params)
    _name(cands)  # sizes may have changed in the fit
    if cal.source == "mat" and focus is None:
        camera = _orient_by_corners(cands, pot, camera)
        cal.camera = camera
    measurements, undecided, dets = _finish(cands, params, cs, camera)
    # a colour short of its six whose missing wink the cup can hide (behind its wall, under the winks in it) is
    # said to be possibly there, not silently absent (a pot of a wink's colour already refers that colour)
    may_hide = colours_pot_may_hide(camera, pot, cands, tuple(n for k, n in enumerate(COLOR_NAMES)
                                                             if k + 1 != pot_class)) if pot.found else ()
    floor_hidden = cup_floor_hidden_share(camera, pot, cands)
    timing["total"] = (time.perf_counter() - t0) * 1e3
    return Measurement(pot_hides_color=COLOR_NAMES[pot_class - 1] if pot_class else None, pot_may_hide=may_hide,
                       pot_floor_hidden=floor_hidden,
                       winks=measurements, pot=pot, calibration=cal, detections=dets, undecided_pairs=undecided,
                       timing_ms=timing, colour=cs, grid=grid)


def _orient_by_corners(cands: list[WinkCandidate], pot: PotDetection, camera: CameraModel) -> CameraModel:
    """Choose which mat end is +x from where the colours wait (TW 1(b) corners), not from the image.

    The mat is symmetric under a half turn, so a self-calibration picks +x by image convention. Unplayed winks
    wait behind their own colour's baseline; if clearly more of them sit in the corners of the half-turned
    frame, the frame is turned: centres and azimuths follow, and the camera pose is rotated about z.
    """
    def count(flip: int) -> int:
        n = 0
        for c in cands:
            if c.potted:
                continue
            sx, sy = DEFAULT_CORNER_SIGNS[Color(c.color)]
            x, y = flip * c.center_mm
            if sx * x > 0 and sy * y > 0 and tw.baseline_margin_mm(
                    Wink(wink_id="p", color=c.color, size=c.size, center_mm=(float(x), float(y))), (sx, sy)) > -2.0:
                n += 1
        return n

    keep, turn = count(1), count(-1)
    if turn < keep + 2:
        return camera
    for c in cands:
        c.center_mm = -c.center_mm
        c.tilt_azimuth_deg = (c.tilt_azimuth_deg + 180.0) % 360.0
    pot.center_mm = -pot.center_mm
    Rz = np.diag([-1.0, -1.0, 1.0])
    R = camera.R @ Rz
    rvec, _ = cv2.Rodrigues(R)
    return CameraModel(K=camera.K, dist=camera.dist, rvec=rvec.ravel(), tvec=camera.tvec,
                       image_size_wh_px=camera.image_size_wh_px)


def _grow_polygon(poly: np.ndarray, px: float) -> np.ndarray:
    c = poly.mean(axis=0)
    v = poly - c
    n = np.linalg.norm(v, axis=1, keepdims=True)
    return c + v * (1 + px / np.maximum(n, 1e-6))


def _place_potted(c: WinkCandidate, camera: CameraModel, pot: PotDetection) -> None:
    """A potted wink's plan centre: its image centre taken down to the cup floor, kept inside the cup."""
    cpx = camera.project_mm(np.array([[c.center_mm[0], c.center_mm[1], ORTHO_Z_MM]]))
    xy = camera.image_to_table_mm(cpx, POT_FLOOR_Z_MM)[0]
    v = xy - pot.center_mm
    d = float(np.linalg.norm(v))
    lim = max(0.0, POT_TOP_RADIUS_MM - c.radius_mm)
    if d > lim and d > 0:
        xy = pot.center_mm + v / d * lim
    c.center_mm = xy
    c.z_mm = POT_FLOOR_Z_MM
    c.sigma_mm = 5.0
    c.center_px = cpx[0]


def _name(cands: list[WinkCandidate]) -> None:
    """Ids like the truth's: ``<colour>-L<n>`` / ``<colour>-S<n>``, numbered along +x (relations follow)."""
    counts: dict[tuple[str, str], int] = {}
    rename: dict[str, str] = {}
    for c in sorted(cands, key=lambda c: (c.center_mm[0], c.center_mm[1])):
        key = (c.color, c.size)
        counts[key] = counts.get(key, 0) + 1
        new = f"{c.color}-{'L' if c.size == 'large' else 'S'}{counts[key]}"
        if c.wink_id:
            rename[c.wink_id] = new
        c.wink_id = new
    if rename:
        for c in cands:
            c.above = [rename.get(i, i) for i in c.above]
            c.order_confidence = {rename.get(k, k): v for k, v in c.order_confidence.items()}


#: Size confidence of a wink whose own radius was not measured (most of its outline hidden, or in the pot): the
#: size then rests on a partial view, and its position uncertainty already allows for the other radius.
SIZE_UNVERIFIED_CONFIDENCE = 0.6
#: Size confidence from which a size counts as measured (the referee's flag is below it).
SIZE_SURE_CONFIDENCE = 0.9


def _size_confidence(c: WinkCandidate, params: TiddlywinksParams) -> float:
    if c.size_by_set:
        return c.size_confidence  # the set's bound, not the partial view, decided it (``_sizes_by_set``)
    if c.potted or (c.fit_fraction < params.winks.size_fit_fraction and c.arc_sigma_mm is None):
        return min(c.size_confidence, SIZE_UNVERIFIED_CONFIDENCE)
    return c.size_confidence


def _size_basis(c: WinkCandidate, size_confidence: float) -> str:
    """What an umpire should know of a size: measured, settled by the colour's set (TW 2), or a flagged guess."""
    if size_confidence < SIZE_SURE_CONFIDENCE:
        return "unverified"
    return "colour_set" if c.size_by_set else "outline"


def _set_verdicts(cands: list[WinkCandidate], params: TiddlywinksParams) -> list[SizeVerdict | None]:
    """Each flagged wink's size given its colour's others (``vision.size_sets``); None for measured sizes."""
    reads = [SizeRead(color=c.color, size=c.size, sure=_size_confidence(c, params) >= SIZE_SURE_CONFIDENCE,
                      ring_own_fraction=min(1.0, max(0.0, c.size_evidence))) for c in cands]
    return sizes_by_colour_set(reads, SIZE_UNVERIFIED_CONFIDENCE)


def _sizes_by_set(cands: list[WinkCandidate], params: TiddlywinksParams) -> None:
    """Flagged sizes decided with the colour's measured ones (``vision.size_sets``): a size the set leaves alone
    possible is no longer flagged; a changed size's centre came from the other radius's fit."""
    for c, v in zip(cands, _set_verdicts(cands, params)):
        if v is None:
            continue
        if v.size != c.size:
            c.size = v.size
            c.sigma_mm = max(c.sigma_mm, SIZE_UNVERIFIED_SIGMA_MM)
        c.size_confidence = v.confidence
        c.size_by_set = True


def _finish(cands: list[WinkCandidate], params: TiddlywinksParams, cs: ColourScene, camera: CameraModel):
    undecided: list[tuple[str, str, float]] = []
    seen = set()
    for c in cands:
        for other, conf in c.order_confidence.items():
            key = tuple(sorted((c.wink_id, other)))
            if conf < params.order_confidence_min and key not in seen:
                seen.add(key)
                undecided.append((key[0], key[1], conf))
    out: list[WinkMeasurement] = []
    dets: list[PieceDetection] = []
    for c in cands:
        conf = min(1.0, 0.55 + 0.45 * min(1.0, c.score + 0.3))
        if c.order_confidence:
            conf = min(conf, min(c.order_confidence.values()))
        if c.occluded_by_pot:
            conf = min(conf, 0.6)
        conf = min(conf, c.confidence)
        off_mat = bool(abs(c.center_mm[0]) > MAT_HALF_LENGTH_MM or abs(c.center_mm[1]) > MAT_HALF_WIDTH_MM)
        size_conf = _size_confidence(c, params)
        cpx = c.center_px if c.center_px is not None else camera.project_mm(
            np.array([[c.center_mm[0], c.center_mm[1], c.z_mm]]))[0]
        out.append(WinkMeasurement(
            wink_id=c.wink_id, color=c.color, size=c.size, center_mm=(float(c.center_mm[0]), float(c.center_mm[1])),
            radius_mm=c.radius_mm, sigma_mm=float(c.sigma_mm), z_mm=float(c.z_mm), tilt_deg=float(c.tilt_deg),
            tilt_azimuth_deg=float(c.tilt_azimuth_deg) % 360.0, potted=c.potted, off_mat=off_mat,
            above=tuple(sorted(c.above)), order_confidence=dict(c.order_confidence), confidence=float(conf),
            center_px=(float(cpx[0]), float(cpx[1])), visible_fraction=float(c.fit_fraction),
            size_confidence=size_conf, size_basis=_size_basis(c, size_conf),
            occluded_by_pot=c.occluded_by_pot))
        dets.append(PieceDetection(kind=PieceKind.WINK, center_px=(float(cpx[0]), float(cpx[1])),
                                   radius_px=max(1e-3, c.radius_mm / camera.mm_per_px_at(tuple(c.center_mm))),
                                   color=c.color, confidence=float(conf), detector="tableref.winks"))
    return out, undecided, FrameDetections(image_size_wh_px=camera.image_size_wh_px, pieces=tuple(dets))


# --- scene and document ------------------------------------------------------------------------------------------

#: Measurement slack of the 'waiting behind its baseline' test (winks there are placed by hand, near edges).
BEHIND_BASELINE_SLACK_MM = 1.0


def waiting_behind_baseline(wm: WinkMeasurement, sign: tuple[int, int]) -> bool:
    """A wink (nearly) wholly in its own colour's corner triangle: taken as not yet played (TW P3).

    A photograph cannot tell whether a wink was ever played; one lying wholly behind its own baseline is
    treated as waiting there, with a millimetre of measurement slack at the baseline and the mat edges.
    """
    w = Wink(wink_id=wm.wink_id, color=wm.color, size=wm.size, center_mm=wm.center_mm)
    if tw.baseline_margin_mm(w, sign) < -BEHIND_BASELINE_SLACK_MM:
        return False
    x, y = wm.center_mm
    # on the mat (centre), in that corner; an overhang at the mat edge does not make it a played wink
    return (sign[0] * x <= MAT_HALF_LENGTH_MM and sign[1] * y <= MAT_HALF_WIDTH_MM
            and sign[0] * x > 0 and sign[1] * y > 0)


def scene_from_measurement(m: Measurement) -> TiddlywinksScene:
    """The measured winks as a geometry scene (explicit ``above`` lists: the camera decided the order).

    A pair whose order is undecided loses its declared order and both winks are given the same height, so the
    rule engine reports that squop as UNDECIDED (TW I-13) rather than guessing.
    """
    undecided_ids = {a for a, _, _ in m.undecided_pairs} | {b for _, b, _ in m.undecided_pairs}
    winks = []
    for wm in m.winks:
        color = Color(wm.color)
        sign = DEFAULT_CORNER_SIGNS[color]
        unplayed = (not wm.potted and not wm.off_mat and waiting_behind_baseline(wm, sign))
        undecided = wm.wink_id in undecided_ids
        winks.append(Wink(
            wink_id=wm.wink_id, color=color, size=wm.size, center_mm=wm.center_mm,
            z_mm=WINK_THICKNESS_MM / 2 if undecided else wm.z_mm,
            tilt_deg=0.0 if undecided else min(wm.tilt_deg, 89.0),
            tilt_azimuth_deg=wm.tilt_azimuth_deg,
            above=None if undecided else tuple(wm.above), potted=wm.potted, off_mat=wm.off_mat,
            unplayed=unplayed, position_sigma_mm=round(float(wm.sigma_mm), 4), confidence=wm.confidence))
    return TiddlywinksScene(winks=tuple(winks), pot_center_mm=(float(m.pot.center_mm[0]), float(m.pot.center_mm[1])),
                            pot_hides_color=m.pot_hides_color, pot_may_hide=m.pot_may_hide,
                            pot_floor_hidden_share=round(float(m.pot_floor_hidden), 3))


def squidge_off_scene(scene: TiddlywinksScene) -> TiddlywinksScene | None:
    """One squidged wink per colour (those not waiting behind their baseline), or None if this is no squidge-off."""
    chosen: dict[Color, Wink] = {}
    for w in scene.winks:
        if w.unplayed:
            continue
        if w.color in chosen:
            return None
        chosen[w.color] = w
    if len(chosen) < 2:
        return None
    return TiddlywinksScene(winks=tuple(chosen.values()), pot_center_mm=scene.pot_center_mm)


def document_from_measurement(m: Measurement, image_path: str | None = None) -> dict[str, Any]:
    """The scene document of a measurement (no rulings: the api layer adds them from the adjudicator)."""
    scene = scene_from_measurement(m)
    doc = scene_to_document(scene)
    by_id = {wm.wink_id: wm for wm in m.winks}
    for rec in doc["pieces"]:
        wm = by_id[rec["id"]]
        rec["center_px"] = [round(wm.center_px[0], 2), round(wm.center_px[1], 2)]
        rec["uncertainty_mm"] = round(float(wm.sigma_mm), 4)
        rec["size_confidence"] = round(float(wm.size_confidence), 3)
        rec["size_basis"] = wm.size_basis
        rec["order_confidence"] = {k: round(v, 3) for k, v in sorted(wm.order_confidence.items())}
        if wm.occluded_by_pot:
            rec["occluded_by_pot"] = True
    cam = m.calibration.camera
    corners_mm = np.array([[-MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM, 0], [MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM, 0],
                           [MAT_HALF_LENGTH_MM, -MAT_HALF_WIDTH_MM, 0], [-MAT_HALF_LENGTH_MM, -MAT_HALF_WIDTH_MM, 0]])
    corners = (np.asarray(m.calibration.mat_corners_px) if m.calibration.mat_corners_px is not None
               else cam.project_mm(corners_mm))
    doc["image"] = {"path": image_path, "size_wh_px": list(cam.image_size_wh_px)}
    doc["mat"] = {"corners_px": np.round(corners, 3).tolist()}
    pc = m.pot.center_mm
    doc["pot"] = {"center_mm": [round(float(pc[0]), 4), round(float(pc[1]), 4)],
                  "center_px": np.round(cam.project_mm(np.array([[pc[0], pc[1], 0.0]]))[0], 3).tolist(),
                  "found": bool(m.pot.found), "displaced": bool(m.pot.displaced),
                  "uncertainty_mm": round(float(m.pot.sigma_mm), 4),
                  "hides_color": m.pot_hides_color,  # also in scene_to_document, kept here beside the pot
                  "may_hide": list(m.pot_may_hide), "floor_hidden_share": round(float(m.pot_floor_hidden), 3)}
    doc["calibration"] = {"source": m.calibration.source,
                          "reprojection_error_mm": round(float(m.calibration.reprojection_error_mm), 4),
                          "camera": cam.to_dict()}
    doc["undecided_orders"] = [[a, b, round(c, 3)] for a, b, c in m.undecided_pairs]
    doc["timing_ms"] = {k: round(v, 2) for k, v in m.timing_ms.items()}
    return doc


def analyze_tiddlywinks(frame_bgr: np.ndarray, calibration: Any = None, params: TiddlywinksParams | None = None,
                        *, image_path: str | None = None) -> dict[str, Any]:
    """The scene document of one photograph: pieces, pot, mat and calibration (``api.analysis`` adds rulings).

    ``calibration``: a ``TableCalibration``, a ``CameraModel``, or None to self-calibrate from the mat.
    """
    m = measure_tiddlywinks(frame_bgr, calibration, params or TiddlywinksParams())
    return document_from_measurement(m, image_path=image_path)


def detect_winks(frame_bgr: np.ndarray, calibration: Any,
                 params: TiddlywinksParams = TiddlywinksParams()) -> tuple[PieceDetection, ...]:
    """STYLE.md detector entry point: the winks as pixel detections."""
    return tuple(p for p in measure_tiddlywinks(frame_bgr, calibration, params).detections.pieces
                 if p.kind is PieceKind.WINK)
