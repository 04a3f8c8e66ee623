"""Ring marbles from one photograph: the ring, every marble and tolley, in the ring frame (RULES.md section 4).

Method. The ring frame comes from a given ``CameraModel`` (``--calibration``) or, without one, from the sand rim:
the sand-vs-ground boundary is fitted with a robust ellipse and the ring's plane pose is recovered from that conic
and the known radius (``vision.marbles_ring``). The photo is then rectified to a top-down orthophoto of the plane
through the centres of resting marbles (z = 6.35 mm on the ring top; a second one at the ground for knocked-off
balls, and a third for the far ground beyond it, whose light and texture, hence noise, are its own), where every
marble is a disc of the same known size. Balls are found as colour/brightness departures from the median sand or
ground (a window twice the opening group for groups, a window of three tolleys for single balls); a round blob the
size of one ball is one ball, sized in millimetres to tell a marble (12.7 mm) from a tolley (16-19 mm); a larger
blob is a close-packed group, counted by fitting the triangular lattice of touching marbles (spacing 12.7 mm,
unknown rotation and offset) to it; a doubtful member (barely coloured core) no brighter than the sand on the side
the group's cast shadow leans to is that shadow (``vision.marbles_group_shadow``). Faint single balls (clear glass
shows the sand through it, so no pixel stands out and the threshold splits or misses them) are found by a matched
filter: the departure averaged over a marble's disc, whose peaks are kept when the ball's own outline, cut at half
its contrast, is round and ball-sized (a paving joint or the rim's shading runs on). A ball touching a line (a
paving joint, the rim's edge, the ring's shadow border) merges with it into one long blob; lines thinner than three
quarters of a marble are opened away there, and what still holds nearly a marble's disc, has a coloured core and
(at the rim's foot) is no mix of the sand's, the ground's and shade's colours is a ball. On the ground a ball must
also show a lit ball's own colour or specular highlight, which a paving joint's crossing, a crack or a ball's
shadow (they only darken the ground) lacks (``vision.marbles_lit``); a candidate that shows neither at its centre is
read again within half a diameter, as a blob's centroid leans into its ball's shadow, and what it finds beside a
ball already found was that ball's shadow. At the rim's foot a ball blurred into the rim's edge holds less than a
ball's disc once the edge is opened away; it counts there when its core's colour is surely a ball's and no mix of
the sand's, the ground's and shade's. A blob read as one tolley with two surely coloured cores a ball's diameter or
more apart, and no further than two touching tolleys, is two touching balls. Each size-based kind carries
``kind_confidence``, the probability from the measured diameter's margin to the 14.35 mm split against its
uncertainty (which grows with the photo's pixel size), so an undecidable size says so. In photos under 9 px per
marble a clear ball whose caustic (the lamp focused through it onto the ground) lies clear of it is sized again by
that spot's distance, which grows with its radius and no blurred edge biases (``vision.marbles_caustic``);
and an opaque ball (``shadow_sizes``; in sharper photos too, where its dark shadow joins its silhouette) by its
image and cast shadow fitted together under the photo's one lamp (``vision.marbles_shadow``). ``on_ring``
compares the plan centre with R = 914.4 mm (MB P1); calls within the position uncertainty are flagged for the
referee (MB I-1) by the adjudicator, not here (vision makes no rulings).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import cv2
import numpy as np

from calibration.camera import CameraModel
from calibration.errors import CalibrationError
from geometry.marbles import (
    GROUP_CENTROID_TOL_MM,
    LATTICE_SPACING_MM,
    MARBLE_DIAMETER_MM,
    MARBLE_TOLLEY_SPLIT_MM,
    RING_HEIGHT_MM,
    RING_RADIUS_MM,
    TOLLEY_MAX_DIAMETER_MM,
)
from vision.marbles_group import (
    BRIGHTER_MADS,
    INTERIOR_NEIGHBOURS,
    INTERIOR_PRESENCE,
    SETUP_RADIUS_MM,
    arc_sizes_mm,
    brighter_than_sand,
    brightness_mads,
    disc_mean,
    interior_neighbours,
    lattice_neighbours,
    lightness_departure,
    lit_and_coloured,
    outline_arc_radii,
    setup_shape,
)
from vision.marbles_group_shadow import on_shadow_side, shadow_direction
from vision.marbles_outline import lab_gradients, outline_diameter_mm
from vision.marbles_ring import detect_ring
from vision.marbles_shade import shade_departures, shade_mask, without_shade
from vision.marbles_caustic import brightness, lamp_offset, read_caustic
from vision.marbles_halo import halo_diameter_mm, wall_sky_share
from vision.marbles_kind import join_reads, marble_probability, photo_scale
from vision.marbles_lit import (GROUND_HUE_MAX_SHARE, MIN_CORE_CHROMA, MIN_HIGHLIGHT_MADS, SURE_CORE_CHROMA,
                                ground_hue_share, ground_hues, is_lit_ball, lit_ball_cues, lit_point_near)
from vision.marbles_shadow import fit_ball_shadow, fit_lamp
from vision.marbles_size import WINDOW_TOLLEY_RADII, local_affine, measured_psf_px, model_fits, photo_lab
from vision.ortho import OrthoGrid, before_fold, image_outline_mm, in_view, ortho_maps
from vision.types import VisionError

__all__ = ["BallDetection", "MarblesParams", "analyze_marbles", "detect_marbles", "detect_ring"]

# The sand shoulder outside R: balls there are neither on the top nor at rest on the ground (sand slumps
# over roughly half the ring height; by eye on the renders and photos).
RIM_WIDTH_MM = 40.0
GROUND_SEARCH_MM = 450.0  # how far beyond the rim knocked-off balls are looked for against the near ground
# ... and beyond that, out towards the benches (MB 9(d): 3 m or more from the ring's edge; balls knocked off roll
# on there), the far ground: a layer of its own, as it lies further from the lamp and the ring's sand, so its
# light, texture and noise are its own (one threshold over both read rim sand as balls). Bounded here, where a
# ball of 12.7 mm still spans several pixels in a whole-ring photo and the ortho's cost stays that of the ring's
FAR_GROUND_MM = 1000.0


@dataclass(frozen=True, slots=True, kw_only=True)
class MarblesParams:
    """Detector settings, with the physical reason for each default."""

    # Ortho resolution: a marble spans this many pixels, never more than the photo gives (no invented detail)
    min_marble_px: float = 9.0
    max_marble_px: float = 16.0
    # Local background: median over this width, twice the opening group of 49 (116 mm across), so even
    # inside a group the median is sand
    background_mm: float = 240.0
    # ... and, for single balls, three tolleys wide: it also takes out the sand's scuffs
    single_background_mm: float = 57.0
    # Shadows darken the sand without changing its hue: lightness counts this much of a colour difference
    lightness_weight: float = 0.5
    # Foreground: this many robust deviations (MAD) above the typical sand/ground departure
    threshold_mads: float = 10.0
    # ...and a ball's strongest pixel stands this many more MADs above (grass blades and pebbles do not)
    peak_extra_mads: float = 10.0
    # a blob smaller than this share of a marble's disc is grit...
    min_area_ratio: float = 0.35
    min_inner_radius_ratio: float = 0.5  # ... and a ball's blob holds a disc of at least half its radius
    max_area_per_inner_disc: float = 4.0  # a ball with its shadow is roundish: area < 4 x its inner disc
    # a ball with its shadow is at most about twice as long as wide; longer blobs are strips
    max_single_elongation: float = 2.2
    group_inner_radii: float = 1.6  # a close-packed group (7 or more) holds a disc of 1.6+ marble radii
    # A blob is one ball up to this many areas of the largest tolley (with its soft edge and contact shadow)
    single_ball_max_tolley_areas: float = 2.72
    # Lattice points whose marble disc is covered by the blob at least this much are marbles
    lattice_cover: float = 0.7
    # ... and whose core differs in colour (CIELAB a*b*, above the surface's typical) by at least this: the
    # shadow beside a group darkens the sand but barely changes its hue (renders: shadows < 4, marbles > 5)
    lattice_min_core_chroma: float = 5.0
    # ... but a core below twice that is too close to call: at 6-8 px per marble the blur spills a neighbour's
    # colour into the shadow beside a group (shadow points up to ~9 on the development renders, while a pale
    # marble's core may be as low as ~5), so such a member is counted but widens the count's range
    lattice_sure_core_chroma: float = 10.0
    # Ball size from the blob's area includes the soft edge and the contact shadow; subtract this rim from it:
    # a fixed part (shadow, mm) and a part growing with the photo's pixel size (blur, native px); measured on
    # renders with known diameters, not on the bench images
    size_bias_mm: float = 1.4
    size_bias_native_px: float = 4.1
    # Position uncertainty: this many of the photo's own pixels (shadow-biased centroid of a small blob;
    # measured 0.3-1 px on renders), never below the floor
    position_sigma_native_px: float = 1.0
    min_position_sigma_mm: float = 0.5
    # Uncertainty of a ball's diameter from its silhouette area: a part fixed by the contact shadow and glass
    # clarity (mm) and a part growing with the photo's pixel (the outline is placed to about half a native
    # pixel on each side); it turns the size's margin to the marble/tolley split into a kind confidence
    size_sigma_mm: float = 0.6
    size_sigma_native_px: float = 0.6
    # Matched filter for faint single balls: the colour departure averaged over a marble's disc must stand
    # this many robust deviations (MAD of that average over the surface) above the surface's typical value; a
    # disc average of ~60-200 pixels, so sand grain noise averages out while a ball does not
    matched_filter_mads: float = 15.0
    # ... and the ball's own outline, cut at half its contrast, must be round and ball-sized (not a pavement
    # joint, grass blade or the rim's shading, which run on past a ball's size)
    matched_filter_window_tolleys: float = 1.6
    # Single balls are sized by the mean of their area and their outline when a marble spans at least this many
    # of the photo's pixels. The two err differently at every resolution (area: the contact shadow, the
    # caustic and clear glass; outline: edge placement), so even at 6-10 px per marble, where each alone
    # misreads about one tolley in ten, their mean halves the wrong kinds (development renders: 19 -> 10 of
    # 539 single balls). Below 5 px the outline is a couple of pixels and the area alone is used.
    outline_min_native_px: float = 5.0
    # Inside a large blob that is no group (paving joints, the rim's edge, the ring's shadow border), lines
    # thinner than this share of a marble are opened away before looking for balls: a ball lying on a joint or
    # at the rim's foot holds a disc of half its diameter (min_inner_radius_ratio), a line does not
    line_open_marbles: float = 0.75
    # ... and what survives there is a ball only if it still holds a disc of nearly a marble's own radius (the
    # corner where a joint meets the rim's edge survives the opening but holds little more than the opening's
    # own disc, 0.75 of it)
    line_ball_inner_radius: float = 0.9
    # ... except on the ground, where a ball at the rim's foot under 7 native px per marble, blurred into the rim's
    # edge, holds only about the opening's own disc (0.71-0.8 of its radius: marbles_06, bench_2026_025): there a
    # candidate holding less counts when its core shows a ball's own colour surely (``SURE_CORE_CHROMA``; those two
    # 12.7 and 13.4), which the grey corner of a joint at the rim lacks, and that colour is no mix of the sand's, the
    # ground's and shade's wherever it lies (7.2 and 11.5 from them; beside the rim the sand in its surround makes the
    # pavement itself look coloured: seed 99, 0.0 from the mix, 17.7 from its surround)
    ground_line_colour: bool = True
    # ... and beside the rim a blob is the rim's own sand only when no core within a marble's radius of its centre
    # (this share of its diameter) shows a colour outside the mix of sand, ground and shade: the centroid of a ball and
    # its cast shadow leans into the shadow, and a clear cat's eye shows the ground through its middle, its colour in
    # its vanes off the centre (seed 1597: cat's eye m60 at the foot, 2.9 px off its centre, read 3.1 at the centroid
    # against the 5 asked, 7.2 within the radius; the rim's own blobs on the development set 0.0-1.3 within it)
    rim_colour_reach_marbles: float = 0.5
    # A single blob read as a tolley may be a tolley and a marble touching (or two balls): two spheres of known
    # radii, so two disc-covered peaks a ball's diameter apart at least and no further apart than two touching
    # tolleys' centres, each with a surely coloured core (``lattice_sure_core_chroma``; a ball's shadow beside it is
    # at most faintly tinted by blur), are two balls (bench_2026_010: a marble beside a 19 mm tolley read as one)
    split_touching: bool = True
    # A ground candidate showing no lit ball at its centre is read again where a ball's colour or highlight shows
    # best within half a diameter (``vision.marbles_lit.lit_point_near``): a blob's centroid leans into its ball's
    # shadow, where neither shows. What that finds within a tolley's diameter of a ball already lit is that ball
    # (the candidate was its shadow) and is dropped; otherwise the ball is there (seeds 7, 99: 7_000, 99_000)
    lit_within_ball: bool = True
    # A close-packed group whose sure members fill a set-up group's shape (the N lattice points nearest the ring's
    # centre, RULES.md 4.1) but for a hole or two holds no member beyond it (there lies its shade: bench_503_009's
    # two 'members' a row beyond a 37) and a member at each point inside it that the silhouette covers, flagged
    # (bench_2026_017's near-black swirl in its 49's shaded edge) (``vision.marbles_group.setup_shape``)
    group_setup_shape: bool = True
    # ... and where a set-up shape's evidence is short of a call, the count's range says so: a hole inside the shape
    # whose core is tinted counts (flagged), an untinted hole or a doubtful point beyond the shape may be a marble
    # (``possible_pieces``: not counted, each widens the count's range upwards)
    group_setup_possible: bool = True
    # A kind confidence the doubting checks drive below a half is reported as a half (``_toss_ups``)
    kind_floor_half: bool = True
    # A ground candidate whose centre lies within a marble's radius of the shoulder's foot (less its position
    # uncertainty) is no ball at rest on the ground: the foot's shade and the rim's lit lip make ball-sized blobs
    # there (bench_503_001: three 'balls' at r 955-959 mm, the lip 7 ground MADs bright read as their highlight)
    ground_beyond_foot: bool = True
    # Under 9 px per marble, size single balls whose shadow is cast whole (opaque glass) by their image and shadow
    # fitted together under the photo's lamp (``vision.marbles_shadow``; the lamp from the sure marbles' shadows
    # stacked on the ground): an opaque (swirl) tolley is read small by every size read, its shadow, 2R wide across
    # the lamp, is not. It calls a kind only beyond SHADOW_DECISIVE, else only doubts one (``_shadow_sizes``).
    # Development set, seeds 99 and 7 (30 renders each), one detection per photo scored by the bench's own scorer:
    # tolley vs marble right 1241 -> 1243, 1004 -> 1005, 940 -> 941; count exact 31 -> 31, 18 -> 19, 21 -> 22;
    # confident wrong kinds 1 -> 0, 1 -> 1, 2 -> 1; about 1.16-1.30x the CPU per photo (the shadow stage's process
    # time over the pipeline's)
    shadow_sizes: bool = True
    # ... and at min_marble_px and more too, where no blurred-sphere read is taken: at 13-23 px per marble an opaque
    # marble's dark cast shadow joins its silhouette (its blob's area reads 15-16 mm) and leans its centre into the
    # shadow (its outline's chords then reach the shadow's end), while its image and shadow fitted together under
    # the photo's lamp place both where they are
    shadow_sizes_sharp: bool = True
    # Under min_marble_px a faint ball, whose area read is under this share of its blurred-sphere read (clear glass
    # shows the sand: its colour departure barely passes the threshold), is read by the blurred sphere with its sky
    # shadow (``vision.marbles_halo``) where that reads it smaller: the plain fit grows over the soft contact shadow
    # round it (seen 1627_008 and marbles_06: clear 12.7 mm marbles at 18.2-20.8 mm, their area 1.5-8.3 mm). Where
    # that moves the kind the kind is too close to call: two models of one faint ball disagree. Development and seen
    # 1627, 1613 under 9 px (docs/measurements.md, stop 39): every ball under 0.5 a marble; a tolley at 0.58
    # (2026_002 t1, 11.8 of 20.45 mm). None: off
    faint_area_share: float | None = 0.5
    # Look for knocked-off balls on the far ground too (``FAR_GROUND_MM``), in a layer of its own: balls knocked off
    # roll on towards the benches (development set and seeds 7, 99: 4 beyond the near ground's reach). Every ground
    # candidate must show a lit ball's own colour or highlight (``vision.marbles_lit``), which a pavement joint's
    # crossing or a joint cut by the photo's edge lacks (the layer read 3 such as balls in 2 of 31 photos of seeds
    # 7, 99 before that test)
    far_ground: bool = True
    # On the ground a single ball whose strongest pixel falls short of the peak test still counts when its core
    # surely shows a hue of its own: far from the ground's round it (``SURE_CORE_CHROMA``) and one the ground shows
    # almost nowhere (``vision.marbles_lit.GROUND_HUE_MAX_SHARE``). The peak test keeps grass blades and pebbles out
    # by how far one pixel stands above the ground's texture, but a ball in a hue near the ground's (a green marble
    # on grass: bench_2026_021, 029) departs from it by little more than the grass's own mottling. Colour against
    # the local ground alone is not enough: a patch of soil in grass is as far from the grass round it (seed 7's
    # 7_013, marbles_02: stop 27), but its hue recurs over the ground; a ball's does not
    ground_peak_by_colour: bool = True
    # On the ground a ball opened away from a line (a paving joint) with a grey core counts when it shows a lit ball's
    # specular highlight (``vision.marbles_lit.MIN_HIGHLIGHT_MADS``): a clear or pale ball lying on a joint has no
    # colour of its own, but it reflects the lamp, while a joint's crossing or a shadow's corner only darkens the
    # ground (bench_311_009: a clear cat's eye of 4.9 native px on a joint, core colour 0, highlight 4.7 MADs)
    ground_line_highlight: bool = True
    # A free lattice point beside a close-packed group whose core is tinted and whose disc is brighter than the sand,
    # neither alone surely, is a pale marble touching the group, flagged (``vision.marbles_group.lit_and_coloured``:
    # a shadow's spilled colour comes with darkness, a bright scuff or caustic with the sand's hue; bench_2026_029)
    group_lit_tint: bool = True
    # A blob too large or too long for one ball (or large enough to pass for a group) may be one ball with its cast
    # shadow under a low lamp: where taking away its shade pixels (darker than the surface, with less colour of their
    # own than a ball's core, ``vision.marbles_shade``) leaves only parts that each pass the single-ball tests, those
    # parts are the balls, centred on their own discs and sized by their outline and blurred-sphere reads (their area
    # lost its contact shadow with the shade). Seed 1129: a tolley with its shadow read as a group of four
    # (1129_006), a marble lost in a chain with its neighbour's shadow (1129_002); seed 953_003's off-ring ball
    part_shade: bool = True


DEFAULT_PARAMS = MarblesParams()
# A ball's kind is called when the probability that it is right (``kind_confidence``) reaches this; below, the
# counts it belongs to are given as ranges (one in ten such calls would be wrong)
KIND_SURE = 0.9
# A photo's clear balls correct its size reads by what their caustics add to them when at least this many read one
CAUSTIC_MIN_BALLS = 3
# ... and by what their shadows read short of a marble when at least this many sure marbles read one
SHADOW_MIN_MARBLES = 3
# ... where the shadow is at least this share as deep as the photo's deep shadows (this quantile of its balls':
# the opaque balls'), so cast whole, not lit through clear glass
SHADOW_DEPTH_SHARE = 0.5
DEEP_SHADOW_QUANTILE = 0.9
# ... and that read calls a ball the other kind than its size read only at this confidence (one in a hundred such
# calls wrong by its own error); below it, it only lowers the kind's confidence
SHADOW_DECISIVE = 0.99


@dataclass(frozen=True, slots=True, kw_only=True)
class BallDetection:
    """One ball in the ring frame: ``center_mm`` is the plan centre (contact point), ``center_px`` its image."""

    kind: str
    center_mm: tuple[float, float]
    center_z_mm: float
    diameter_mm: float
    on_ring: bool
    ring_margin_mm: float
    center_px: tuple[float, float]
    confidence: float
    position_sigma_mm: float
    in_group: bool = False
    # probability that ``kind`` is right, from the measured size's margin to the marble/tolley split against
    # its uncertainty (for a close-packed group's member, 1.0 by the set-up rule unless its own outline reads a
    # tolley or it lies where no opening group is: then 0.5)
    kind_confidence: float = 1.0
    measured_diameter_mm: float | None = None
    # probability that this is a ball at all: below 1 for a close-packed group's member whose core is barely
    # coloured (it may be the shadow beside the group)
    presence_confidence: float = 1.0
    # 1-sigma of ``measured_diameter_mm`` by the size model, where it reads the whole ball (None for a group's
    # member, a guess, or a ball cut by unseen ground: a lower bound); such reads are checked against the photo's
    # own marbles (``vision.marbles_kind``)
    size_sigma_mm: float | None = None
    # the ball's independent size reads (mm; NaN where it has none): its silhouette's area, its outline and the
    # blurred-sphere fit, joined under the photo's own calibration of each for a second opinion on its kind
    # (``vision.marbles_kind.join_reads``)
    size_reads_mm: tuple[float, float, float] | None = None


# --- orthophotos ---------------------------------------------------------------------------------------------


def _ortho(frame_bgr, camera: CameraModel, z_mm: float, limit_mm: float, mm_per_px: float):
    fp = image_outline_mm(camera, z_mm)
    lo = np.maximum(fp.min(0), -limit_mm)
    hi = np.minimum(fp.max(0), limit_mm)
    if np.any(hi <= lo):
        return None, None
    grid = OrthoGrid.covering(lo[0], hi[0], lo[1], hi[1], mm_per_px, z_mm)
    mx, my = ortho_maps(camera, grid, step_px=16)
    img = cv2.remap(frame_bgr, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    w, h = camera.image_size_wh_px
    valid = ((mx >= 1) & (my >= 1) & (mx <= w - 2) & (my <= h - 2) & in_view(camera, grid, fp)
             & before_fold(camera, grid))
    return grid, (img, valid)


def _saliency(lab: np.ndarray, valid: np.ndarray, kernel_px: int, params: MarblesParams
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Colour departure from the local median surface (CIELAB, lightness down-weighted against shadows).

    Returns that departure, its colour-only part (shadows darken the sand but barely change its hue) and the median
    surface itself (8-bit CIELAB; the shade map reads its departures against the same surface).
    Pixels outside ``valid`` (other surface, outside the photo) are set to the surface's median colour first,
    so the rim and the photo's edge do not stand out as departures.
    """
    lab = lab.copy()
    f = 4
    outside = ~valid
    if valid.any():
        np.copyto(lab, _nearby_colour(lab, valid, kernel_px / f, f), where=outside[..., None])
    # median on a 4x coarser copy: the window must span sand beyond the largest close-packed group
    small = cv2.resize(lab, (max(1, lab.shape[1] // f), max(1, lab.shape[0] // f)), interpolation=cv2.INTER_AREA)
    k = int(np.clip(kernel_px / f, 3, 255)) | 1
    bg = cv2.resize(cv2.medianBlur(small, k), (lab.shape[1], lab.shape[0]), interpolation=cv2.INTER_LINEAR)
    diff = lab.astype(np.float32) - bg.astype(np.float32)
    d_l, d_a, d_b = diff[..., 0] * np.float32(params.lightness_weight), diff[..., 1], diff[..., 2]
    chroma = cv2.GaussianBlur(np.sqrt(d_a * d_a + d_b * d_b), (0, 0), 0.6)
    # the squared departure summed in the order L*, a*, b*, one channel at a time (no (H, W, 3) temporaries)
    sq = d_l * d_l
    sq += d_a * d_a
    sq += d_b * d_b
    mag = cv2.GaussianBlur(np.sqrt(sq, out=sq), (0, 0), 0.6)
    mag[outside] = 0
    chroma[outside] = 0
    return mag, chroma, bg


def _nearby_colour(lab: np.ndarray, valid: np.ndarray, sigma_small_px: float, f: int) -> np.ndarray:
    """The surface's colour near each pixel, from valid pixels only (normalised convolution on a coarse copy).

    Filling what lies outside the photo with this, not with one global colour, keeps the photo's corners (where
    vignetting darkens the sand and most of a median window lies outside) from standing out as departures.
    """
    h, w = valid.shape
    size = (max(1, w // f), max(1, h // f))
    v = cv2.resize(valid.astype(np.float32), size, interpolation=cv2.INTER_AREA)
    col = cv2.resize(lab.astype(np.float32) * valid[..., None], size, interpolation=cv2.INTER_AREA)
    s = max(1.0, sigma_small_px / 2)
    den = cv2.GaussianBlur(v, (0, 0), s)
    num = cv2.GaussianBlur(col, (0, 0), s)
    glob = np.median(lab[valid], axis=0)
    out = np.where(den[..., None] > 1e-3, num / np.maximum(den, 1e-3)[..., None], glob)
    # a weighted mean of 8-bit colours, and bilinear resizing, stay within 0-255: no clipping needed
    return cv2.resize(out, (w, h), interpolation=cv2.INTER_LINEAR).astype(np.uint8)


def _threshold(mag: np.ndarray, region: np.ndarray, params: MarblesParams) -> float:
    vals = mag[region]
    if vals.size < 100:
        return math.inf
    med = float(np.median(vals))
    mad = float(np.median(np.abs(vals - med))) + 1e-3
    return med + params.threshold_mads * mad


# --- lattice fit for close-packed groups ---------------------------------------------------------------------


def _disc_kernel(radius_px: float) -> np.ndarray:
    r = math.ceil(radius_px)
    yy, xx = np.mgrid[-r:r + 1, -r:r + 1]
    k = ((xx * xx + yy * yy) <= radius_px * radius_px).astype(np.float32)
    return k / k.sum()


def _fit_lattice(mask: np.ndarray, spacing_px: float, saliency: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Triangular lattice (spacing ``spacing_px``) best explaining a blob: centres (N, 2), their cover, their
    saliency and the lattice's turn (rad; one of its axes, the others 60 deg apart).

    Searches rotation (0-60 deg) and offset over one unit cell. The score rewards lattice points whose marble
    disc the silhouette covers and, inside it, points where the colour departure is strongest: a marble's
    core (vanes, body colour) stands out, while the interstices between touching balls show the sand.
    """
    pad = int(spacing_px * 2)
    m = cv2.copyMakeBorder(mask.astype(np.float32), pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0)
    cover = cv2.filter2D(m, -1, _disc_kernel(0.5 * spacing_px * 0.9), borderType=cv2.BORDER_CONSTANT)
    if saliency is not None:
        sal = cv2.copyMakeBorder(saliency.astype(np.float32), pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0)
        sal = cv2.filter2D(sal, -1, _disc_kernel(0.3 * spacing_px), borderType=cv2.BORDER_CONSTANT)
        inside = m > 0
        sal = (sal - sal[inside].mean()) / (sal[inside].std() + 1e-6)
    else:
        sal = np.zeros_like(cover)
    h, w = cover.shape
    cy, cx = np.array(np.nonzero(m)).mean(1)
    n_half = int(max(h, w) / spacing_px) + 2
    ii, jj = np.meshgrid(np.arange(-n_half, n_half + 1), np.arange(-n_half, n_half + 1))
    base = np.column_stack([(ii + 0.5 * jj).ravel(), (jj * math.sqrt(3) / 2).ravel()]) * spacing_px
    best = (-math.inf, None, None, None, 0.0)
    offs = np.linspace(0, 1, max(4, round(spacing_px / 1.0)), endpoint=False)
    for ang in np.deg2rad(np.arange(0.0, 60.0, 1.5)):
        c, s = math.cos(ang), math.sin(ang)
        rot = base @ np.array([[c, s], [-s, c]])
        a1 = np.array([c, s]) * spacing_px
        a2 = np.array([0.5 * c - math.sqrt(3) / 2 * s, 0.5 * s + math.sqrt(3) / 2 * c]) * spacing_px
        for u in offs:
            for v in offs:
                p = rot + np.array([cx, cy]) + u * a1 + v * a2
                xi = np.round(p[:, 0]).astype(int)
                yi = np.round(p[:, 1]).astype(int)
                ok = (xi >= 0) & (yi >= 0) & (xi < w) & (yi < h)
                cv_ = cover[yi[ok], xi[ok]]
                sel = cv_ > 0.5
                score = float(np.sum(cv_[sel] - 0.5) + 0.5 * np.sum(sal[yi[ok], xi[ok]][sel]))
                if score > best[0]:
                    best = (score, p[ok], cv_, sal[yi[ok], xi[ok]], float(ang))
    _, pts, cv_, sv, turn = best
    pts = pts - pad
    return pts, cv_, sv, turn


def _solid(mask: np.ndarray, marble_px: float) -> np.ndarray:
    """The group's silhouette without holes: clear glass shows the sand through it, a group has no gaps."""
    k = max(3, round(0.6 * marble_px) | 1)
    pad = k
    m = cv2.copyMakeBorder(mask.astype(np.uint8), pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0)
    m = cv2.morphologyEx(m, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    ff = m.copy()
    cv2.floodFill(ff, np.zeros((m.shape[0] + 2, m.shape[1] + 2), np.uint8), (0, 0), 1)
    holes = (ff == 0).astype(np.uint8)
    # fill only holes up to two marbles in area: a ring-shaped blob (the rim all round) is not a group
    n, lbl, st, _ = cv2.connectedComponentsWithStats(holes, connectivity=4)
    small = np.zeros(n, bool)
    small[1:] = st[1:, 4] <= 2 * math.pi * (0.5 * marble_px) ** 2
    solid = (m > 0) | small[lbl]
    return solid[pad:-pad, pad:-pad]


# --- detection -----------------------------------------------------------------------------------------------


@dataclass
class _Blob:
    center_ortho: np.ndarray
    area_px: int
    peak: float
    mask: np.ndarray
    bbox: tuple[int, int, int, int]
    inner_radius_px: float  # largest disc inside the blob: thin strips (rim shading, grass) have a small one


def _blobs(mag: np.ndarray, region: np.ndarray, thr: float, min_area_px: float, marble_px: float,
           line_open_px: float = 0.0) -> list[_Blob]:
    """Connected departures above ``thr`` in ``region``; with ``line_open_px``, lines thinner than that (a paving
    joint, the rim's edge, a shadow's border) are first opened away, so a ball lying on one stands apart."""
    fg = ((mag > thr) & region).astype(np.uint8)
    fg = cv2.morphologyEx(fg, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
    if line_open_px >= 3:
        k = int(round(line_open_px)) | 1
        fg = cv2.morphologyEx(fg, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    n, lbl, st, _ = cv2.connectedComponentsWithStats(fg, connectivity=8)
    out = []
    for i in range(1, n):
        x, y, bw, bh, area = (int(v) for v in st[i])
        if area < min_area_px:
            continue
        sub = lbl[y:y + bh, x:x + bw] == i
        wts = mag[y:y + bh, x:x + bw] * sub
        rr, cc = np.nonzero(sub)
        ww = wts[rr, cc]
        ctr = np.array([x + float((cc * ww).sum() / ww.sum()), y + float((rr * ww).sum() / ww.sum())])
        # on the silhouette with its holes closed: a clear marble shows sand between its vanes
        dt = cv2.distanceTransform(np.pad(_solid(sub, marble_px), 1).astype(np.uint8), cv2.DIST_L2, 5)
        out.append(_Blob(ctr, area, float(ww.max()), sub, (x, y, bw, bh), float(dt.max())))
    return out


def _elongation(b: _Blob) -> float:
    """Square root of the ratio of the blob's principal second moments (1 for a disc)."""
    rr, cc = np.nonzero(b.mask)
    if len(rr) < 4:
        return 1.0
    ev = np.linalg.eigvalsh(np.cov(np.vstack([cc, rr]).astype(float)))
    return math.sqrt(max(ev[1], 1e-9) / max(ev[0], 1e-9))


def _shade_parted(b: _Blob, shade: np.ndarray, mag: np.ndarray, marble_px: float, min_area_px: float,
                  single_max_px: float, params: MarblesParams) -> list[_Blob]:
    """The balls of a blob that fails the single-ball tests once its shade is taken away, or nothing.

    Each part of the blob left without its ``shade`` pixels (read over the blob's box) must be smaller than any ball's
    blob (``min_area_px``: the shadow's fringe) or pass every single-ball test (a disc of ``min_inner_radius_ratio``,
    area, roundness, length, a marble apart from the other balls). One part that fails leaves the blob as it was (a
    group, the rim's strip, a chain the split reads)."""
    x, y, bw, bh = b.bbox
    left = without_shade(b.mask, shade)
    n, lbl = cv2.connectedComponents(left.astype(np.uint8), connectivity=8)
    out = []
    for i in range(1, n):
        part = lbl == i
        area = int(part.sum())
        if area < min_area_px:
            continue
        dt = cv2.distanceTransform(np.pad(_solid(part, marble_px), 1).astype(np.uint8), cv2.DIST_L2, 5)
        inner = float(dt.max())
        if inner < params.min_inner_radius_ratio * 0.5 * marble_px:
            return []  # a strip the size of a ball's blob: the rim's edge, a joint
        rr, cc = np.nonzero(part)
        ww = mag[y + rr, x + cc]
        ctr = np.array([x + float((cc * ww).sum() / ww.sum()), y + float((rr * ww).sum() / ww.sum())])
        pb = _Blob(ctr, area, float(ww.max()), part, b.bbox, inner)
        if (area > single_max_px or area > params.max_area_per_inner_disc * math.pi * inner ** 2
                or _elongation(pb) > params.max_single_elongation or _near_any(ctr, [q.center_ortho for q in out],
                                                                               marble_px)):
            return []  # not a ball, or two parts of one ball (a dark vane across it): no parting
        out.append(pb)
    return out


def _hidden_by_ring(xy_mm: np.ndarray, z_mm: float, camera_center_mm: np.ndarray, n_heights: int = 12,
                    traced_from_mm: float = 0.0) -> np.ndarray:
    """Ground points (plan ``xy_mm`` (H, W, 2) at height ``z_mm``) whose line of sight passes through the ring.

    The ring is a drum of radius R on top whose sand shoulder falls to the ground at R + RIM_WIDTH_MM; the
    shoulder is taken as a straight slope (the render's and a real ring's are rounder, so this hides slightly
    less than the real one does). The sight line is sampled at heights from the point up to the ring's top.
    Points nearer the centre than ``traced_from_mm`` (ground the caller does not search) are returned hidden
    untraced.
    """
    c = np.asarray(camera_center_mm, float)
    hidden = np.zeros(xy_mm.shape[:2], bool)
    if c[2] <= 0.0:
        return hidden
    rad = np.hypot(xy_mm[..., 0], xy_mm[..., 1])
    z0 = max(z_mm, -RING_HEIGHT_MM)
    # a point under the shoulder at its own height is hidden by the first sample of its sight line (the point
    # itself), so it needs no tracing
    under = rad < max(traced_from_mm, RING_RADIUS_MM + RIM_WIDTH_MM * (-z0 / RING_HEIGHT_MM) if z0 == z_mm else 0.0)
    hidden[under] = True
    # only points whose sight line comes within the foot's circle before it rises above the ring are hidden:
    # the line's plan run up to the ring's top is (0 - z) / (camera height - z) of the way to the camera
    run = (0.0 - z_mm) / (c[2] - z_mm) * np.hypot(c[0] - xy_mm[..., 0], c[1] - xy_mm[..., 1])
    near = (rad - run < RING_RADIUS_MM + RIM_WIDTH_MM) & ~under
    p = xy_mm[near]
    out = np.zeros(len(p), bool)
    for z in np.linspace(z0, 0.0, n_heights):
        t = (z - z_mm) / (c[2] - z_mm)
        q = p + t * (c[:2] - p)
        out |= np.hypot(q[:, 0], q[:, 1]) < RING_RADIUS_MM + RIM_WIDTH_MM * (-z / RING_HEIGHT_MM)
    hidden[near] = out
    return hidden


def _shows_ground(camera: CameraModel, base_z: float) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """For a ball on the ground beyond the rim: which of its fit window's pixels (N, 2) show what the blurred-sphere
    model holds, the ball (rays within a marble's radius of its centre) or the open ground it rests on; not the
    rim's shoulder nor ground the raised ring hides. Beside a ball at the rim's foot the shoulder's lit or shaded
    sand is an edge of its own, and a disc fitted over it grows into it: on the development set swirl marbles half
    hidden there read 21-23 mm (marbles_06, marbles_07, bench_2026_025) and a clear tolley's read was lost."""
    def shows(px: np.ndarray, center_mm: np.ndarray) -> np.ndarray:
        eye, d = camera.rays_mm(px)
        v = np.asarray(center_mm, float) - eye
        ball = np.linalg.norm(v[None] - (d @ v)[:, None] * d, axis=1) <= 0.5 * MARBLE_DIAMETER_MM
        xy = camera.image_to_table_mm(px, base_z)
        ground = np.hypot(xy[:, 0], xy[:, 1]) >= RING_RADIUS_MM + RIM_WIDTH_MM
        ground[ground] = ~_hidden_by_ring(xy[ground][None], base_z, camera.center_mm)[0]
        return ball | ground
    return shows


def _split_chain(b: _Blob, mag: np.ndarray, chroma: np.ndarray, c_med: float, marble_px: float,
                 params: MarblesParams) -> list[np.ndarray]:
    """Balls in a blob too long to be one: balls joined by the shadow or caustic between them.

    A ball is a peak of the departure averaged over a marble's disc whose disc the blob covers (as for a
    lattice point of a group) and whose core is coloured: a shadow darkens the sand without changing its hue
    and a caustic brightens it, so neither passes, while the rim's shading strip is too thin to cover a disc.
    Peaks closer than a marble's diameter are one ball (touching balls are a diameter apart).
    """
    x, y, bw, bh = b.bbox
    pad = int(math.ceil(marble_px))
    m = np.pad(b.mask.astype(np.float32), pad)
    cover = cv2.filter2D(m, -1, _disc_kernel(0.45 * marble_px), borderType=cv2.BORDER_CONSTANT)
    sal = cv2.filter2D(np.pad(mag[y:y + bh, x:x + bw] * b.mask, pad).astype(np.float32), -1,
                       _disc_kernel(0.5 * marble_px), borderType=cv2.BORDER_CONSTANT)
    # a ball's centre is the highest within a marble's own disc: a square's corners reach 0.7 of a marble away,
    # onto the flank of a brighter ball touching it (bench_419_001: a clear marble beside a red tolley)
    k = int(marble_px) | 1
    peaks = ((sal >= cv2.dilate(sal, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))))
             & (cover >= params.lattice_cover) & (sal > 0))
    rr, cc = np.nonzero(peaks)
    order = np.argsort(-sal[rr, cc])
    cand = np.column_stack([x + cc[order] - pad, y + rr[order] - pad]).astype(float).reshape(-1, 2)
    coloured = _coloured_core(chroma, c_med, cand, params)
    out: list[np.ndarray] = []
    for p, ok in zip(cand, coloured):
        if ok and not _near_any(p, out, marble_px):
            out.append(p)
    return out


def _touching_pair(b: _Blob, mag: np.ndarray, chroma: np.ndarray, c_med: float, marble_px: float, mm_per_px: float,
                   params: MarblesParams) -> list[np.ndarray]:
    """The two balls of a round blob that is two touching balls, else nothing.

    Two touching spheres are two circles of known radii, their centres the sum of the radii apart: from a
    marble's diameter (two marbles) to a tolley's (two 19 mm tolleys). One ball with its shadow holds one
    coloured core only: a shadow darkens the ground without a hue of its own, but blur tints it with its ball's
    colour (a white swirl tolley's shadow on sand, seed 7: cores 6.3 and 7.1 above the sand's typical, where the
    marble and tolley of bench_2026_010 show 41 and 42), so both cores must be surely coloured.
    """
    centers = _split_chain(b, mag, chroma, c_med, marble_px, params)
    if len(centers) != 2 or np.any(_core_chroma(chroma, c_med, np.array(centers)) < params.lattice_sure_core_chroma):
        return []
    gap_mm = math.hypot(*(centers[0] - centers[1])) * mm_per_px
    return centers if gap_mm <= TOLLEY_MAX_DIAMETER_MM else []


def _coloured_core(chroma: np.ndarray, c_med: float, pts_px: np.ndarray, params: MarblesParams) -> np.ndarray:
    """Whether the colour (CIELAB a*b*) at each point departs from the surface's typical by a ball's core:
    a shadow darkens the sand and a caustic brightens it, but neither changes its hue much."""
    return _core_chroma(chroma, c_med, pts_px) >= params.lattice_min_core_chroma


def _core_chroma(chroma: np.ndarray, c_med: float, pts_px: np.ndarray) -> np.ndarray:
    """The colour departure (CIELAB a*b*) of the 3 x 3 core at each point, above the surface's typical."""
    return _sample(cv2.blur(chroma, (3, 3)), pts_px) - c_med


def _presence_confidence(core_chroma: float, params: MarblesParams) -> float:
    """How sure a close-packed group's member is a marble, not the shadow beside the group: 1 from a core of
    ``lattice_sure_core_chroma`` up, 0.5-0.9 between the split and that (too close to call, KIND_SURE)."""
    lo, hi = params.lattice_min_core_chroma, params.lattice_sure_core_chroma
    if core_chroma >= hi:
        return 1.0
    return float(0.5 + (KIND_SURE - 0.5) * np.clip((core_chroma - lo) / (hi - lo), 0.0, 1.0))


def _is_rim_sand(c, rim_band: np.ndarray, lab_ab: np.ndarray, sand_ab: np.ndarray, ground_ab: np.ndarray,
                 marble_px: float, params: MarblesParams) -> bool:
    """Whether a ground blob centred at ortho ``c`` at the rim's foot or beside the ground the ring hides is the
    rim itself: every core's colour within ``rim_colour_reach_marbles`` of ``c`` is a mix of the sand, the ground
    and shade (``_rim_mix_distance``)."""
    x, y = (int(round(v)) for v in c)
    h, w = rim_band.shape
    if not (0 <= x < w and 0 <= y < h and rim_band[y, x]):
        return False
    reach = params.rim_colour_reach_marbles * marble_px
    r = int(reach)
    return max(_rim_mix_distance((x + dx, y + dy), lab_ab, sand_ab, ground_ab)
               for dy in range(-r, r + 1) for dx in range(-r, r + 1)
               if dx * dx + dy * dy <= reach * reach) < params.lattice_min_core_chroma


def _rim_mix_distance(c, lab_ab: np.ndarray, sand_ab: np.ndarray, ground_ab: np.ndarray) -> float:
    """How far the core's colour (CIELAB a*, b*) at ortho ``c`` lies from every mix of the sand, the ground and
    shade (shade only pulls a colour towards grey): the triangle those three span. A ball's glass or body colour is
    not such a mix; the rim and the ground at its foot are."""
    x, y = (int(round(v)) for v in c)
    core = lab_ab[max(0, y - 1):y + 2, max(0, x - 1):x + 2].reshape(-1, 2).mean(0)
    grey = np.array([128.0, 128.0])  # OpenCV's 8-bit CIELAB puts a* = b* = 0 at 128
    return _distance_to_triangle(core, np.asarray(sand_ab, float), np.asarray(ground_ab, float), grey)


def _distance_to_triangle(p: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
    """Distance from 2-D point ``p`` to the triangle abc (0 inside; degenerate triangles are their edges)."""
    def cross(u, v):
        return float(u[0] * v[1] - u[1] * v[0])

    s = [cross(q - p0, p - p0) for p0, q in ((a, b), (b, c), (c, a))]
    if (all(v >= 0 for v in s) or all(v <= 0 for v in s)) and abs(cross(b - a, c - a)) > 1e-9:
        return 0.0

    def seg(p0, q):
        d = q - p0
        t = float(np.clip(np.dot(p - p0, d) / max(float(np.dot(d, d)), 1e-12), 0.0, 1.0))
        return float(np.hypot(*(p - p0 - t * d)))

    return min(seg(a, b), seg(b, c), seg(c, a))


def _disc_cut(c, seen: np.ndarray, radius_px: float) -> bool:
    """Whether the disc of ``radius_px`` round ortho point ``c`` reaches pixels the photo does not show."""
    h, w = seen.shape
    r = math.ceil(radius_px)
    x, y = (int(round(v)) for v in np.asarray(c, float))
    if x - r < 0 or y - r < 0 or x + r >= w or y + r >= h:
        return True
    yy, xx = np.mgrid[-r:r + 1, -r:r + 1]
    disc = (xx * xx + yy * yy) <= radius_px * radius_px
    return not bool(seen[y - r:y + r + 1, x - r:x + r + 1][disc].all())


def _inside(pts_px: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Whether each point (N, 2) falls on a true pixel of ``mask`` (points off the array are not)."""
    gi = np.round(np.asarray(pts_px, float).reshape(-1, 2)).astype(int)
    h, w = mask.shape
    ok = (gi[:, 0] >= 0) & (gi[:, 1] >= 0) & (gi[:, 0] < w) & (gi[:, 1] < h)
    out = np.zeros(len(gi), bool)
    out[ok] = mask[gi[ok, 1], gi[ok, 0]]
    return out


def _near_any(p: np.ndarray, points: list[np.ndarray], dist_px: float) -> bool:
    """Whether ``p`` lies within ``dist_px`` of any of ``points`` (two balls' centres are a diameter apart)."""
    return any(math.hypot(*(np.asarray(p, float) - q)) < dist_px for q in points)


def _blob_mask(blobs: list[_Blob], shape: tuple[int, int], marble_px: float) -> np.ndarray:
    """The blobs' pixels, grown by half a marble on each side."""
    m = np.zeros(shape, np.uint8)
    for b in blobs:
        x, y, bw, bh = b.bbox
        m[y:y + bh, x:x + bw] |= b.mask.astype(np.uint8)
    return cv2.dilate(m, np.ones((int(marble_px) | 1,) * 2, np.uint8)).astype(bool)


def _is_group(b: _Blob, base_z: float, marble_px: float, mag: np.ndarray, region: np.ndarray, thr: float,
              params: MarblesParams) -> bool:
    """Whether a blob larger than any single ball is a close-packed group of marbles.

    Groups are set up on the ring top (never on the ground), are round (a long thin blob is the rim's
    shading) and thick (hold a disc of 1.6+ marble radii), and stand out as strongly as a ball does.
    """
    peak_thr = thr + params.peak_extra_mads * (thr - float(np.median(mag[region]))) / params.threshold_mads
    return (base_z == 0.0 and b.peak >= peak_thr
            and b.inner_radius_px >= params.group_inner_radii * 0.5 * marble_px
            and _elongation(b) <= params.max_single_elongation)


def _without_cast_shadow(members: np.ndarray, presence: list[float], conf: list[float], dl_px: np.ndarray,
                         dl_disc: np.ndarray, region: np.ndarray, marble_px: float, spacing_px: float
                         ) -> tuple[np.ndarray, list[float], list[float]]:
    """A group's members without the doubtful ones that are its cast shadow (``vision.marbles_group_shadow``)."""
    pres = np.asarray(presence, float)
    sure = members[pres >= KIND_SURE]
    doubtful = (pres < 1.0) & (_sample(dl_disc, members) <= 0.0)
    if not doubtful.any():
        return members, presence, conf
    # the shadow falls beyond the group's edge, never within it: a point that sure members touch on most of its
    # sides is inside the group (a dark or clear marble there is no shadow)
    doubtful &= interior_neighbours(members, sure, spacing_px) < INTERIOR_NEIGHBOURS
    shade = doubtful & on_shadow_side(members, sure, shadow_direction(dl_px, region, sure, marble_px), spacing_px)
    return (members[~shade], [p for p, s in zip(presence, shade) if not s],
            [c for c, s in zip(conf, shade) if not s])


def _sample(values: np.ndarray, pts_px: np.ndarray) -> np.ndarray:
    """``values`` at the nearest pixel of each point (N, 2), clipped to the array."""
    gi = np.clip(np.round(np.asarray(pts_px, float)).astype(int), 0,
                 [values.shape[1] - 1, values.shape[0] - 1]).reshape(-1, 2)
    return values[gi[:, 1], gi[:, 0]]


def _ball_diameter_mm(area_px: float, mm_per_px: float, native_mm_per_px: float, params: MarblesParams) -> float:
    eq = 2.0 * math.sqrt(area_px / math.pi) * mm_per_px
    return max(eq - params.size_bias_mm - params.size_bias_native_px * native_mm_per_px, 1.0)



def _size_sigma_mm(native_px: float, params: MarblesParams) -> float:
    """Uncertainty of a single ball's measured diameter in a photo where a marble spans ``native_px``."""
    return math.hypot(params.size_sigma_mm, params.size_sigma_native_px * MARBLE_DIAMETER_MM / native_px)


def _split_confidence(diameter_mm: float, sigma_mm: float) -> float:
    """Probability that the size-based kind is right: the margin to the split over the size's sigma."""
    z = abs(diameter_mm - MARBLE_TOLLEY_SPLIT_MM) / sigma_mm
    return float(0.5 * (1.0 + math.erf(z / math.sqrt(2.0))))


def _kind_confidence(diameter_mm: float, native_px: float, params: MarblesParams) -> float:
    return _split_confidence(diameter_mm, _size_sigma_mm(native_px, params))


def _member_kind_confidences(grid, members_ortho: np.ndarray, reads_mm: np.ndarray, native_px: float,
                              params: MarblesParams) -> list[float]:
    """How sure each close-packed group member is a marble. The set-up rule (MB 9(e), 11(b)) says marbles lie
    at the opening group's place, not what lies there after shots, so it only tips a call the member's own size
    read leaves open: a member whose outline reads a tolley at KIND_SURE on its own, or one lying where no opening
    group is (no prior, and a cluster too small to calibrate its reads), is too close to call (0.5)."""
    if not len(members_ortho):
        return []
    r_mm = np.hypot(*grid.table_from_ortho(np.asarray(members_ortho, float).reshape(-1, 2)).T)
    sized = arc_sizes_mm(reads_mm, _size_sigma_mm(native_px, params))
    out = []
    for i, r in enumerate(r_mm):
        if r > SETUP_RADIUS_MM:
            out.append(0.5)
        elif (sized is not None and np.isfinite(sized[0][i]) and sized[0][i] > MARBLE_TOLLEY_SPLIT_MM
              and _split_confidence(float(sized[0][i]), sized[1]) >= KIND_SURE):
            out.append(0.5)
        else:
            out.append(1.0)
    return out


def _placed(camera: CameraModel, center_px, dmm: float, base_z: float) -> dict[str, Any]:
    """A ball's kind, size and place from its image centre and measured diameter: re-aimed at its own centre
    height (bigger balls sit higher), on the ring when it rests on the ring top within its radius."""
    is_tolley = dmm > MARBLE_TOLLEY_SPLIT_MM
    z_c = base_z + (dmm if is_tolley else MARBLE_DIAMETER_MM) / 2
    xy_c = camera.image_to_table_mm(np.asarray(center_px, float)[None], z_c)[0]
    r_plan = float(math.hypot(*xy_c))
    return dict(kind="tolley" if is_tolley else "marble", center_mm=(float(xy_c[0]), float(xy_c[1])),
                center_z_mm=float(z_c),
                diameter_mm=float(min(dmm, TOLLEY_MAX_DIAMETER_MM + 2.0)) if is_tolley else MARBLE_DIAMETER_MM,
                on_ring=bool(base_z == 0.0 and r_plan <= RING_RADIUS_MM), ring_margin_mm=RING_RADIUS_MM - r_plan)


def _emit_ball(found: list, grid, camera: CameraModel, c, dmm: float, cf: float, grouped: bool,
               kind_conf: float, base_z: float, z_mid: float, native_px: float, params: MarblesParams,
               presence: float = 1.0, size_sigma: float | None = None,
               size_reads: tuple[float, float, float] | None = None) -> None:
    xy_mm = grid.table_from_ortho(np.asarray(c, float)[None])[0]
    px = camera.project_mm(np.array([[xy_mm[0], xy_mm[1], z_mid]]))[0]
    found.append(BallDetection(
        **_placed(camera, px, dmm, base_z),
        center_px=(float(px[0]), float(px[1])),
        confidence=float(np.clip(min(cf, kind_conf), 0.05, 1.0)),
        position_sigma_mm=max(params.min_position_sigma_mm,
                              params.position_sigma_native_px * MARBLE_DIAMETER_MM / native_px),
        in_group=grouped,
        kind_confidence=float(kind_conf),
        measured_diameter_mm=None if grouped else float(dmm),
        presence_confidence=float(presence),
        size_sigma_mm=size_sigma,
        size_reads_mm=size_reads,
    ))


def _matched_filter_singles(mag: np.ndarray, region: np.ndarray, accepted: list[np.ndarray], marble_px: float,
                            mm_per_px: float, single_max_px: float, thr: float, native_mm_per_px: float,
                            params: MarblesParams
                            ) -> list[tuple[np.ndarray, float, float]]:
    """Single balls the threshold missed: peaks of the disc-averaged departure, checked for a ball's shape.

    Returns (ortho centre, diameter mm, confidence) for each. The disc average over a marble's disc is the
    matched filter of a ball of known size; its peaks stand out of the sand's texture far more than any pixel.
    """
    if region.sum() < 100:
        return []
    rad_px = 0.5 * marble_px
    disc = cv2.filter2D(np.where(region, mag, 0).astype(np.float32), -1, _disc_kernel(rad_px),
                        borderType=cv2.BORDER_CONSTANT)
    vals = disc[region]
    med = float(np.median(vals))
    mad = float(np.median(np.abs(vals - med))) + 1e-3
    level = med + params.matched_filter_mads * mad
    # whole disc on the surface: a ball at the region's edge was cut (photo edge, rim) and is not measured here
    inner = cv2.erode(region.astype(np.uint8), cv2.getStructuringElement(
        cv2.MORPH_ELLIPSE, (2 * int(rad_px) + 1,) * 2)).astype(bool)
    k = max(3, int(marble_px) | 1)
    peaks = (disc >= cv2.dilate(disc, np.ones((k, k), np.uint8))) & inner & (disc > level)
    rr, cc = np.nonzero(peaks)
    order = np.argsort(-disc[rr, cc])
    acc = [np.asarray(a, float) for a in accepted]
    surface = float(np.median(mag[region]))
    half_w = math.ceil(params.matched_filter_window_tolleys * TOLLEY_MAX_DIAMETER_MM / mm_per_px)
    h, w = mag.shape
    out = []
    for i in order:
        r0, c0 = int(rr[i]), int(cc[i])
        p = np.array([c0, r0], float)
        if _near_any(p, acc, marble_px):
            continue  # already a ball there (two touching balls are one diameter apart)
        y0, y1, x0, x1 = r0 - half_w, r0 + half_w + 1, c0 - half_w, c0 + half_w + 1
        if y0 < 0 or x0 < 0 or y1 > h or x1 > w:
            continue
        win = mag[y0:y1, x0:x1]
        # the ball's outline at half its own contrast (a contrast-free cut: the blur's midpoint is the edge)
        cut = surface + 0.5 * (float(disc[r0, c0]) - surface)
        m = ((win > cut) & region[y0:y1, x0:x1]).astype(np.uint8)
        m = cv2.morphologyEx(m, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (3, 3)))
        n, lbl, st, cen = cv2.connectedComponentsWithStats(m, connectivity=8)
        lab = lbl[half_w, half_w]
        if lab == 0:
            # the peak pixel itself may be below the cut (clear glass): take the component nearest the centre
            if n < 2:
                continue
            d = np.hypot(cen[1:, 0] - half_w, cen[1:, 1] - half_w)
            lab = 1 + int(np.argmin(d))
            if d[lab - 1] > rad_px:
                continue
        x, y, bw, bh, area = (int(v) for v in st[lab])
        if x == 0 or y == 0 or x + bw >= m.shape[1] or y + bh >= m.shape[0]:
            continue  # runs on past a ball's size: a line, a blade, the rim
        sub = lbl[y:y + bh, x:x + bw] == lab
        solid = _solid(sub, marble_px)
        area = int(solid.sum())
        if area > single_max_px or area < params.min_area_ratio * math.pi * rad_px ** 2:
            continue
        blob = _Blob(np.zeros(2), area, 0.0, solid, (x, y, bw, bh), 0.0)
        if _elongation(blob) > params.max_single_elongation:
            continue
        ctr = np.array([x0 + x + float(np.nonzero(solid)[1].mean()), y0 + y + float(np.nonzero(solid)[0].mean())])
        # size as every other single ball: its area above the surface's threshold, less the soft rim (the
        # half-contrast cut of a faint ball takes in its contact shadow too)
        core = int((solid & (win[y:y + bh, x:x + bw] > thr)).sum())
        dmm = _ball_diameter_mm(max(core, 1), mm_per_px, native_mm_per_px, params)
        conf = float(min(1.0, (float(disc[r0, c0]) - med) / (2 * params.matched_filter_mads * mad)))
        acc.append(ctr)
        out.append((ctr, dmm, conf))
    return out


def detect_marbles(
    frame_bgr: np.ndarray, camera: CameraModel, params: MarblesParams = DEFAULT_PARAMS
) -> tuple[BallDetection, ...]:
    """Every marble and tolley seen, on the ring top and on the ground around it (ring frame, mm)."""
    return detect_marbles_and_possible(frame_bgr, camera, params)[0]


def detect_marbles_and_possible(
    frame_bgr: np.ndarray, camera: CameraModel, params: MarblesParams = DEFAULT_PARAMS
) -> tuple[tuple[BallDetection, ...], tuple[BallDetection, ...]]:
    """The balls seen (``detect_marbles``), and the places that may hold a marble the evidence neither shows nor
    rules out (a set-up group's untinted hole, a doubtful point beside it): not counted, they widen the range."""
    native_px = MARBLE_DIAMETER_MM / camera.mm_per_px_at((0.0, 0.0), MARBLE_DIAMETER_MM / 2)
    marble_px = float(np.clip(native_px, params.min_marble_px, params.max_marble_px))
    mm_per_px = MARBLE_DIAMETER_MM / marble_px
    tolley_px = TOLLEY_MAX_DIAMETER_MM / mm_per_px
    native_mm_per_px = MARBLE_DIAMETER_MM / native_px
    kernel = int(params.background_mm / mm_per_px)
    found: list[BallDetection] = []
    possible: list[BallDetection] = []
    # each found ball's image centre from the blurred-sphere fit, where its caustic may size it again
    fitted_px: list[np.ndarray | None] = []
    # ... and whether its size is read in full (sized again by its shadow, ``_shadow_sizes``)
    shadowed: list[bool] = []
    # ... and, for a faint ball read with its sky shadow, what the plain blurred-sphere fit made of it (the read the
    # photo's own scale is measured on, ``_photo_kinds``)
    plain_mm: list[float | None] = []
    sand_ab = None  # the ring top's sand colour (CIELAB a*, b*), from the ring-top layer
    model: dict[str, Any] = {"lab": None, "psf": None}  # the photo for the blurred-sphere fits, and its PSF
    # (surface height, region in plan radius) for the ring top and for the ground beyond the rim
    layers = (
        (0.0, 0.0, RING_RADIUS_MM + 0.5 * RIM_WIDTH_MM),
        # from the foot of the shoulder: a ball rolled off rests on the ground with its centre a radius beyond
        # the foot, so its whole disc lies beyond it and none of the sand does
        (-RING_HEIGHT_MM, RING_RADIUS_MM + RIM_WIDTH_MM, RING_RADIUS_MM + RIM_WIDTH_MM + GROUND_SEARCH_MM),
        # the far ground, overlapping the near one by a tolley so a ball on their border is seen whole in one
        (-RING_HEIGHT_MM, RING_RADIUS_MM + RIM_WIDTH_MM + GROUND_SEARCH_MM - TOLLEY_MAX_DIAMETER_MM,
         RING_RADIUS_MM + RIM_WIDTH_MM + GROUND_SEARCH_MM + FAR_GROUND_MM),
    )[:3 if params.far_ground else 2]
    for base_z, r_lo, r_hi in layers:
        # a far-ground ball the near ground's layer already holds is not counted twice
        near_found = list(found) if r_lo > RING_RADIUS_MM + RIM_WIDTH_MM else []
        z_mid = base_z + MARBLE_DIAMETER_MM / 2
        try:
            grid, res = _ortho(frame_bgr, camera, z_mid, r_hi, mm_per_px)
        except CalibrationError:  # a corner ray misses the plane (horizon in view): no such surface seen
            continue
        if grid is None:
            continue
        img, valid = res
        # the grid is axis-aligned: each pixel's plan point from its column's x and its row's y
        x_col = grid.table_from_ortho(np.column_stack([np.arange(grid.width_px), np.zeros(grid.width_px)]))[:, 0]
        y_row = grid.table_from_ortho(np.column_stack([np.zeros(grid.height_px), np.arange(grid.height_px)]))[:, 1]
        rad = np.hypot(x_col[None, :], y_row[:, None])
        # keep half a marble away from the photo's edge: a ball cut by the frame cannot be measured
        k = max(3, int(marble_px) | 1)
        inside = cv2.erode(valid.astype(np.uint8), np.ones((k, k), np.uint8)).astype(bool)
        region = inside & (rad >= r_lo) & (rad <= r_hi)
        if region.sum() < 100:
            continue
        seen = valid.copy()  # the surface the photo shows (a ball whose disc reaches past it is cut)
        rim_band = None
        # the rim shoulder itself is a colour change: keep each surface to itself
        if base_z == 0.0:
            region &= rad <= RING_RADIUS_MM + 2.0
        else:
            # behind the ring the raised sand hides the ground: what shows there is the rim, not the ground
            # (the far ground's layer searches only beyond the near one: inside, less the reach of a ball's disc and
            # the rim band's dilation, it traces nothing)
            xy = np.stack(np.broadcast_arrays(x_col[None, :], y_row[:, None]), axis=-1)
            hidden = _hidden_by_ring(xy, z_mid, camera.center_mm,
                                     traced_from_mm=0.0 if r_lo <= RING_RADIUS_MM + RIM_WIDTH_MM
                                     else r_lo - 4 * k * mm_per_px)
            region &= ~hidden
            seen &= ~hidden
            # where the real shoulder hides more than the modelled one, or slumps further than its modelled foot,
            # the rim's sand shows just beside the hidden ground and the foot: a blob there in the sand's own hue
            # is the rim, not a ball
            near = (hidden | (rad < RING_RADIUS_MM + RIM_WIDTH_MM)).astype(np.uint8)
            rim_band = cv2.dilate(near, np.ones((2 * k + 1, 2 * k + 1), np.uint8)).astype(bool) & ~hidden
        min_area = params.min_area_ratio * math.pi * (0.5 * marble_px) ** 2
        single_max = params.single_ball_max_tolley_areas * math.pi * (0.5 * tolley_px) ** 2
        # two backgrounds: a wide median (twice a group) so a close-packed group stands out as a whole, and a
        # narrow one (three tolleys) that also takes out the sand's scuffs, so a faint single ball stands out
        lab_img = cv2.cvtColor(img, cv2.COLOR_BGR2LAB)
        mag, chroma, _ = _saliency(lab_img, region, kernel, params)
        c_med = float(np.median(chroma[region]))
        lab_ab = lab_img[..., 1:].astype(np.float32)
        if base_z == 0.0:
            sand_ab = np.median(lab_ab[region], axis=0)
        ground_ab = np.median(lab_ab[region], axis=0)
        thr = _threshold(mag, region, params)
        # a large blob is a close-packed group only when set up on the ring, round and thick (the opening
        # group); any other large blob (the ring's shadow on the ground, the rim's shading, paving) is no ball
        # but may hold single balls, which the narrow background finds inside it
        large = [b for b in _blobs(mag, region, thr, min_area, marble_px) if b.area_px > single_max]
        shade_free: list[_Blob] = []  # balls parted from their shadow: their area is no longer a size read

        def parted(b: _Blob) -> list[_Blob]:
            if not params.part_shade:
                return []
            # shade against the singles' narrow background (a ball's shadow is a few balls long at most), read
            # only in the blob's box and the one pixel round it that the shade test's 3 x 3 mean reaches
            x, y, bw, bh = b.bbox
            y0, x0 = max(0, y - 1), max(0, x - 1)
            win = np.s_[y0:y + bh + 1, x0:x + bw + 1]
            shade = shade_mask(*shade_departures(lab_img[win], bg_n[win], region[win]), MIN_CORE_CHROMA)
            balls = _shade_parted(b, shade[y - y0:y - y0 + bh, x - x0:x - x0 + bw], mag_n, marble_px, min_area,
                                  single_max, params)
            shade_free.extend(balls)
            return balls

        mag_n, _, bg_n = _saliency(lab_img, region, int(params.single_background_mm / mm_per_px), params)
        # a blob that is one or two balls with their cast shadows is no group, however large the shadows make it
        is_group = [_is_group(b, base_z, marble_px, mag, region, thr, params) and not parted(b) for b in large]
        groups = [b for b, g in zip(large, is_group) if g]
        taken = _blob_mask(groups, region.shape, marble_px)
        other = _blob_mask([b for b, g in zip(large, is_group) if not g], region.shape, marble_px) & ~taken
        thr_n = _threshold(mag_n, region, params)
        # singles apart from every large blob, then inside the ones that are no group (searched apart, so a
        # ball beside the rim's shading is not joined to it); one too large for a ball may be a ball and its shadow
        singles = [q for part in (region & ~taken & ~other, region & other)
                   for b in _blobs(mag_n, part, thr_n, min_area, marble_px)
                   for q in ([b] if b.area_px <= single_max else parted(b))]
        # a ball touching a line there (a paving joint, the rim's edge, the ring's shadow border) was merged into
        # it and lost: opened away from the lines, it stands apart, and counts when it holds nearly a marble's
        # own disc, its core is coloured (a joint's crossing or a shadow's corner is grey) and, at the rim's
        # foot, its colour is no mix of sand, ground and shade
        opened = [b for b in _blobs(mag_n, region & other, thr_n, min_area, marble_px,
                                    params.line_open_marbles * marble_px)
                  if b.area_px <= single_max
                  and (_coloured_core(chroma, c_med, b.center_ortho[None], params)[0]
                       or (base_z != 0.0 and params.ground_line_highlight
                           and lit_ball_cues(lab_img, b.center_ortho, marble_px)[1] >= MIN_HIGHLIGHT_MADS))
                  and (b.inner_radius_px >= params.line_ball_inner_radius * 0.5 * marble_px
                       or (base_z != 0.0 and params.ground_line_colour and sand_ab is not None
                           and _rim_mix_distance(b.center_ortho, lab_ab, sand_ab, ground_ab)
                           >= params.lattice_min_core_chroma
                           and lit_ball_cues(lab_img, b.center_ortho, marble_px)[0] >= SURE_CORE_CHROMA))
                  and not (rim_band is not None and sand_ab is not None
                           and _is_rim_sand(b.center_ortho, rim_band, lab_ab, sand_ab, ground_ab, marble_px, params))]
        singles += opened
        # ... one beside the rim whose colour shows only off its blob's centroid: the blob is mostly its shadow or the
        # rim's edge, so its area is no size read (it is sized by its outline and blurred-sphere reads, as a ball
        # parted from its shadow is; 1597_004 m57: 16.3 mm from that area, read a tolley at 0.935)
        if rim_band is not None and sand_ab is not None:
            shade_free.extend(b for b in opened if _is_rim_sand(b.center_ortho, rim_band, lab_ab, sand_ab, ground_ab,
                                                                0.0, params))
        dl_px = dl_disc = None  # the lightness departure and its disc average, made for the first group
        inner_disc = cv2.erode(region.astype(np.uint8), cv2.getStructuringElement(
            cv2.MORPH_ELLIPSE, (2 * int(0.5 * marble_px) + 1,) * 2)).astype(bool)
        accepted_ortho: list[np.ndarray] = []
        maybe: list[tuple] = []  # (ortho centre, presence) of points that may hold a marble, not counted
        pending: list[tuple] = []  # (ortho centre, diameter mm, confidence, grouped, presence, group kind confidence), emitted once all are known

        def emit(c, dmm, cf, grouped, presence=1.0, kind_conf=1.0, acc=accepted_ortho, pending=pending):
            acc.append(np.asarray(c, float))
            pending.append((np.asarray(c, float), dmm, cf, grouped, presence, kind_conf))

        # a ball's strongest pixel stands peak_extra_mads more above the threshold (each background's own MAD)
        k_peak = params.peak_extra_mads / params.threshold_mads
        peak_thr_wide = thr + k_peak * (thr - float(np.median(mag[region])))
        peak_thr_narrow = thr_n + k_peak * (thr_n - float(np.median(mag_n[region])))
        hues: list[np.ndarray] = []  # the ground's hues, made for the first candidate that needs them

        def _own_hue(c) -> bool:
            """Whether a ground candidate's core surely shows a hue of its own, which the ground shows nowhere."""
            if lit_ball_cues(lab_img, c, marble_px)[0] < SURE_CORE_CHROMA:
                return False
            if not hues:
                hues.append(ground_hues(lab_img, region, marble_px))
            return ground_hue_share(hues[0], lab_img, c, marble_px) < GROUND_HUE_MAX_SHARE

        for b in groups + singles:
            peak_thr = peak_thr_wide if b.area_px > single_max else peak_thr_narrow
            if b.inner_radius_px < params.min_inner_radius_ratio * 0.5 * marble_px:
                continue
            if b.peak < peak_thr and not (params.ground_peak_by_colour and base_z != 0.0
                                          and b.area_px <= single_max and _own_hue(b.center_ortho)):
                continue
            if b.area_px <= single_max:
                if _near_any(b.center_ortho, accepted_ortho, marble_px):
                    continue  # the same ball seen from both sides of a large blob's edge
                if (b.area_px > params.max_area_per_inner_disc * math.pi * b.inner_radius_px**2
                        or _elongation(b) > params.max_single_elongation):
                    # not one round ball: a ball with its long shadow (its shade taken away, a round ball is
                    # left), a strip along the rim or a shadow edge, or balls joined by the shadow between them;
                    # only coloured, disc-covered departure peaks in it are balls
                    centers = [q.center_ortho for q in parted(b)] or _split_chain(b, mag_n, chroma, c_med,
                                                                                   marble_px, params)
                    diam = [None] * len(centers)  # sized by their outline alone (the area is the chain's)
                    conf = [min(1.0, b.peak / (2 * thr_n))] * len(centers)
                    for c, dmm, cf in zip(centers, diam, conf):
                        emit(c, dmm, cf, False)
                    continue
                centers = [b.center_ortho]
                # a ball parted from its shadow is sized by its outline and blurred-sphere reads, as a chain's are
                diam = [None if any(b is q for q in shade_free)
                        else _ball_diameter_mm(b.area_px, mm_per_px, native_mm_per_px, params)]
                conf = [min(1.0, b.peak / (2 * thr_n))]
                grouped = False
                if params.split_touching and diam[0] is not None and diam[0] > MARBLE_TOLLEY_SPLIT_MM:
                    pair = _touching_pair(b, mag_n, chroma, c_med, marble_px, mm_per_px, params)
                    if pair:
                        centers, diam, conf = pair, [None, None], conf * 2  # each sized by its own outline
            else:
                x, y, bw, bh = b.bbox
                spacing_px = LATTICE_SPACING_MM / mm_per_px
                solid = _solid(b.mask, marble_px)
                pts, cov, _, turn = _fit_lattice(solid, spacing_px, mag[y:y + bh, x:x + bw])
                pts = pts + np.array([x, y])
                if dl_disc is None:
                    dl_px = lightness_departure(img, region, kernel)
                    dl_disc = disc_mean(dl_px, 0.45 * marble_px)
                # a lattice point is a marble where the silhouette covers its disc and its core is coloured, or
                # its disc is brighter than the sand (lit glass: a shadow only darkens)
                core = _core_chroma(chroma, c_med, pts)
                bright = brighter_than_sand(dl_disc, region, pts)
                keep = (cov >= params.lattice_cover) & ((core >= params.lattice_min_core_chroma) | bright)
                members = pts[keep]
                presence = [1.0 if br else _presence_confidence(float(v), params)
                            for v, br in zip(core[keep], bright[keep])]
                conf = [float(min(1.0, 0.5 + c / 2)) for c in cov[keep]]
                # a doubtful member no brighter than the sand, beyond the group's centre towards the shadow the
                # group casts, is that shadow with the neighbours' colour blurred into it (vision.marbles_group_shadow)
                members, presence, conf = _without_cast_shadow(members, presence, conf, dl_px, dl_disc, region,
                                                               marble_px, spacing_px)
                # a covered point with a grey core but sure members on most of its sides is inside the group: a
                # group's shadow falls beyond its down-light edge, never within it, so there it is a grey or
                # clear marble (flagged: a marble knocked out of the middle would leave such a hole too)
                sure = members[np.asarray(presence) >= KIND_SURE]  # a shade-grey member may be shadow itself
                inner = (cov >= params.lattice_cover) & ~keep & (interior_neighbours(pts, sure, spacing_px)
                                                                  >= INTERIOR_NEIGHBOURS)
                members = np.vstack([members, pts[inner]])
                presence += [INTERIOR_PRESENCE] * int(inner.sum())
                conf += [float(min(1.0, 0.5 + c / 2)) for c in cov[inner]]
                # a pale marble touching the group, left out of the silhouette, sits on a free neighbour point
                # of the lattice; it counts there when its disc is brighter than the sand, or (flagged) when it is
                # both tinted and brighter than the sand by enough together (``lit_and_coloured``)
                while len(members):
                    nb = lattice_neighbours(members, turn, spacing_px)
                    nb = nb[_inside(nb, inner_disc)] if len(nb) else nb
                    nb = np.array([q for q in nb if not _near_any(q, accepted_ortho, marble_px)]).reshape(-1, 2)
                    if not len(nb):
                        break
                    mads = brightness_mads(dl_disc, region, nb)
                    bright = mads > BRIGHTER_MADS
                    tinted = (lit_and_coloured(_core_chroma(chroma, c_med, nb), mads, params.lattice_sure_core_chroma)
                              if params.group_lit_tint else np.zeros(len(nb), bool))
                    nb, bright = nb[bright | tinted], bright[bright | tinted]
                    if not len(nb):
                        break
                    members = np.vstack([members, nb])
                    presence += [1.0 if b else INTERIOR_PRESENCE for b in bright]
                    conf += [0.75] * len(nb)
                if params.group_setup_shape and len(members):
                    # a set-up group (RULES.md 4.1) has no member beyond its shape and none missing inside it
                    fit = setup_shape(members, np.asarray(presence) >= KIND_SURE,
                                      grid.ortho_from_table(np.zeros((1, 2)))[0], turn, spacing_px,
                                      GROUP_CENTROID_TOL_MM / mm_per_px)
                    if fit is not None:
                        inside, holes = fit
                        # a doubtful point beyond the shape is most likely its shade, but may be a marble that
                        # lies beside the group (bench_953_006: a clear cat's eye 3.5 mm off its edge, core 5.8,
                        # as tinted as 503_009's shade): not counted, it widens the count's range upwards
                        if params.group_setup_possible:
                            maybe += [(q, p) for q, p, k in zip(members, presence, inside) if not k]
                        members = members[inside]
                        presence = [p for p, k in zip(presence, inside) if k]
                        conf = [c for c, k in zip(conf, inside) if k]
                        for q in holes:
                            if _near_any(q, accepted_ortho, marble_px):
                                continue
                            j = int(np.argmin(np.hypot(*(pts - q).T)))
                            on_pt = math.hypot(*(pts[j] - q)) < 0.25 * spacing_px
                            if on_pt and cov[j] >= params.lattice_cover:
                                members = np.vstack([members, pts[j][None]])
                                presence.append(INTERIOR_PRESENCE)
                                conf.append(float(min(1.0, 0.5 + cov[j] / 2)))
                            elif params.group_setup_possible:
                                # the set-up rule puts a marble in each of the shape's points: a pale or clear
                                # one the silhouette leaves out (bench_953_009: two clear cat's eyes at the
                                # edge of a 25, covered 0.27 and 0.08) still tints its core as a member's must
                                # (flagged, as a member that faint is); an untinted hole may be a marble or
                                # none (knocked out), so it widens the range upwards
                                core_q = float(_core_chroma(chroma, c_med, q[None])[0])
                                if core_q >= params.lattice_min_core_chroma:
                                    members = np.vstack([members, q[None]])
                                    presence.append(min(INTERIOR_PRESENCE, _presence_confidence(core_q, params)))
                                    conf.append(0.5)
                                else:
                                    maybe.append((q, 0.0))
                centers = list(members)
                diam = [MARBLE_DIAMETER_MM] * len(centers)
                kinds = _member_kind_confidences(grid, members, 2 * mm_per_px * outline_arc_radii(
                    solid, members - np.array([x, y]), marble_px), native_px, params)
                grouped = True
            if not grouped:
                presence = [1.0] * len(centers)
                kinds = [1.0] * len(centers)
            for c, dmm, cf, pr, kc in zip(centers, diam, conf, presence, kinds):
                emit(c, dmm, cf, grouped, presence=pr, kind_conf=kc)
        # faint balls the threshold split or missed: a ball is a disc of known size, so the colour departure
        # averaged over a marble's disc is a matched filter with far less noise than any single pixel
        # (on the ring top only: the ground's paving joints and grass make ball-sized crossings there)
        extra = [] if base_z != 0.0 else _matched_filter_singles(
            mag_n, region & ~taken, accepted_ortho, marble_px, mm_per_px, single_max, thr_n,
            native_mm_per_px, params)
        for c, dmm, cf in extra:
            emit(c, dmm, cf, False)
        if base_z != 0.0:
            # the ground's own pattern (a joint's crossing, a joint cut by the photo's edge, a ball's shadow) only
            # darkens it; a ball shows its own colour or highlight (vision.marbles_lit)
            lit = [is_lit_ball(lab_img, e[0], marble_px) for e in pending]
            if params.lit_within_ball:
                _lit_beside(lab_img, pending, lit, marble_px, tolley_px)
            pending[:] = [e for e, ok in zip(pending, lit) if ok]
            if params.ground_beyond_foot:
                # a ball at rest on the ground touches it beyond the shoulder's foot, its centre at least a marble's
                # radius out (nearer, it would lie on the slope and roll down); less one position uncertainty
                sigma_mm = max(params.min_position_sigma_mm,
                               params.position_sigma_native_px * MARBLE_DIAMETER_MM / native_px)
                r_min = RING_RADIUS_MM + RIM_WIDTH_MM + 0.5 * MARBLE_DIAMETER_MM - sigma_mm
                pending[:] = [e for e in pending
                              if math.hypot(*grid.table_from_ortho(np.asarray(e[0], float)[None])[0]) >= r_min]
            accepted_ortho[:] = [e[0] for e in pending]
        # single balls in a sharp enough photo are sized by their outline (their silhouette's sharp edge), which
        # neither the contact shadow nor clear glass biases; in coarser photos the outline is too few pixels
        grads = lab_gradients(img) if native_px >= params.outline_min_native_px else None
        # where the ortho had to enlarge the photo (a marble under min_marble_px of its own pixels) the silhouette
        # reads balls small by an amount that depends on their size; the blurred-sphere model fitted in the
        # photo's own pixels reads both kinds true in the median, and its errors (tinted shadow, vanes) differ
        fits: list = [None] * len(pending)
        sharp = native_px >= params.min_marble_px
        shadow_sharp = sharp and params.shadow_sizes and params.shadow_sizes_sharp
        if shadow_sharp and pending and model["psf"] is None:
            # the photo's PSF for the shadow fit, measured on its single balls (their sizes are not used)
            if model["lab"] is None:
                model["lab"] = photo_lab(frame_bgr)
            ctrs = np.array([[*grid.table_from_ortho(np.asarray(e[0], float)[None])[0], z_mid] for e in pending])
            model["psf"] = measured_psf_px(model["lab"], camera, ctrs, np.array([not e[3] for e in pending]),
                                           None if base_z == 0.0 else _shows_ground(camera, base_z))
        if not sharp and pending:
            if model["lab"] is None:
                model["lab"] = photo_lab(frame_bgr)
            ctrs = np.array([[*grid.table_from_ortho(np.asarray(e[0], float)[None])[0], z_mid] for e in pending])
            shows = None if base_z == 0.0 else _shows_ground(camera, base_z)
            fits, model["psf"] = model_fits(model["lab"], camera, ctrs, np.array([not e[3] for e in pending]),
                                            model["psf"], shows)
        fitted = [None if f is None else f.diameter_mm for f in fits]
        for i, (c, dmm, cf, grouped, presence, group_kind_conf) in enumerate(pending):
            halo_kind = None  # the kind the plain fit gives a faint ball read with its sky shadow
            d_plain = None  # ... and its size so
            d_area, d_out = dmm, None
            if grads is not None and not grouped:
                d_out = _outline_size(grads, grid, camera, c, z_mid, mm_per_px,
                                      [q for j, q in enumerate(accepted_ortho) if j != i])
                # the two measures err differently (area: shadow and glass clarity; outline: edge placement)
                if dmm is None:
                    dmm = d_out
                elif d_out is not None:
                    dmm = 0.5 * (dmm + d_out)
            if fitted[i] is not None:
                d_fit = fitted[i]
                if (params.faint_area_share is not None and d_area is not None
                        and d_area < params.faint_area_share * d_fit):
                    d_halo = _halo_size(model, camera, ctrs, i, shows)
                    if d_halo is not None and d_halo < d_fit:
                        d_plain = d_fit if dmm is None else 0.5 * (dmm + d_fit)
                        halo_kind = d_plain > MARBLE_TOLLEY_SPLIT_MM
                        d_fit = d_halo
                dmm = d_fit if dmm is None else 0.5 * (dmm + d_fit)
            kind_conf = group_kind_conf if grouped else None
            # a ball whose size is read in full (not a guess, not a lower bound) may be sized again by its caustic
            caustic_px = None if fits[i] is None or dmm is None else np.asarray(fits[i].center_px, float)
            shadow_ok = caustic_px is not None or (shadow_sharp and not grouped and dmm is not None)
            if dmm is None:
                # a ball parted from a chain with no outline to size it: the common ball, a marble, but its
                # kind is a guess (too close to call)
                dmm, kind_conf = MARBLE_DIAMETER_MM, 0.5
            size_sigma = None
            if kind_conf is None:
                kind_conf = _kind_confidence(dmm, native_px, params)
                size_sigma = _size_sigma_mm(native_px, params)
                if halo_kind is not None and halo_kind != (dmm > MARBLE_TOLLEY_SPLIT_MM):
                    kind_conf = min(kind_conf, 0.5)
                # a ball whose largest possible disc reaches where the surface is not seen (behind the raised
                # ring, past the photo's edge) shows only part of itself: its size is a lower bound, which tells
                # a tolley but cannot rule one out
                if dmm <= MARBLE_TOLLEY_SPLIT_MM and _disc_cut(c, seen, 0.5 * tolley_px + 1.0):
                    kind_conf = min(kind_conf, 0.5)
                    caustic_px = None
                    shadow_ok = False
                    size_sigma = None
            if near_found and _seen_before(grid.table_from_ortho(np.asarray(c, float)[None])[0], near_found):
                continue
            reads = None if size_sigma is None else tuple(math.nan if v is None else float(v)
                                                          for v in (d_area, d_out, fitted[i]))
            _emit_ball(found, grid, camera, c, dmm, cf, grouped,
                       kind_conf, base_z,
                       z_mid, native_px, params, presence, size_sigma, reads)
            fitted_px.append(caustic_px)
            shadowed.append(shadow_ok)
            plain_mm.append(d_plain)
        for q, pr in maybe:
            if not _near_any(q, accepted_ortho, 0.5 * marble_px):  # a counted ball's own place
                _emit_ball(possible, grid, camera, q, MARBLE_DIAMETER_MM, 0.5, True, 1.0, base_z, z_mid, native_px,
                           params, pr)
    caustics: dict = {}
    if params.shadow_sizes and any(shadowed):
        found = _shadow_sizes(model["lab"], camera, found, shadowed, model["psf"], native_px, params, plain_mm)
    if any(p is not None for p in fitted_px):
        caustics = _caustic_reads(frame_bgr, camera, found, fitted_px, plain_mm)
    joined = _joined_marble_probabilities(found, caustics)
    if caustics:
        found = _caustic_sizes(camera, found, caustics, native_px, params, plain_mm)
    found = _read_spread_doubts(_joined_doubts(_photo_kinds(camera, found, params, plain_mm), joined))
    found = _plain_kind_doubts(found, plain_mm)
    return tuple(_toss_ups(found) if params.kind_floor_half else found), tuple(possible)


def _toss_ups(found: list[BallDetection]) -> list[BallDetection]:
    """Each kind confidence below a half raised to a half: too close to call.

    Why. The checks that lower a kind confidence (``_photo_kinds``, ``_joined_doubts``, ``_read_spread_doubts``)
    only doubt a call, never make one (calling kinds from them made development seed 7 worse), so a confidence
    they drive below a half is no call of the other kind either: reported as 0.004 on the first kind (self-calibrated
    bench_2026_017's tolley read a marble) it reads as a sure call of the other kind that nothing made. Counts and
    ranges do not move (both are under KIND_SURE)."""
    return [replace(b, kind_confidence=0.5) if b.kind_confidence < 0.5 else b for b in found]


def _lit_beside(lab: np.ndarray, pending: list[tuple], lit: list[bool], marble_px: float, tolley_px: float
                ) -> None:
    """Ground candidates not lit at their centre (``lit`` False) read again beside it (``lit_point_near``): one that
    finds a ball apart from every lit one is that ball, moved to where it shows (``pending`` and ``lit`` updated in
    place); one that finds a place within a tolley's diameter of a lit ball (the point found lies on that ball's
    near side, a tolley's shadow reaching a diameter out) was that ball's shadow and stays unlit."""
    balls = [e[0] for e, ok in zip(pending, lit) if ok]
    for i, ok in enumerate(lit):
        if ok:
            continue
        q = lit_point_near(lab, pending[i][0], marble_px)
        if q is not None and not _near_any(q, balls, tolley_px):
            pending[i] = (q, *pending[i][1:])
            lit[i] = True
            balls.append(q)


def _seen_before(xy_mm: np.ndarray, balls: list[BallDetection]) -> bool:
    """Whether a ball at plan ``xy_mm`` is one of ``balls`` (two resting balls' centres are at least a marble's
    diameter apart in plan)."""
    return any(math.hypot(xy_mm[0] - b.center_mm[0], xy_mm[1] - b.center_mm[1]) < MARBLE_DIAMETER_MM for b in balls)


def _base_z(b: BallDetection) -> float:
    """The surface a ball rests on: the ring top (z = 0) or the ground (z = -ring height)."""
    return 0.0 if b.center_z_mm > -0.5 * RING_HEIGHT_MM else -RING_HEIGHT_MM


def _resized(b: BallDetection, camera: CameraModel, dmm: float, kind_conf: float, sigma_mm: float | None
             ) -> BallDetection:
    """``b`` with a new measured diameter (of 1-sigma ``sigma_mm``) and kind confidence: its kind, height and plan
    centre follow, and the reads it replaces are no longer its own (no second opinion from them)."""
    # the detection's own confidence, without the old kind's
    cf = b.confidence if b.confidence < b.kind_confidence else 1.0
    return replace(
        b, **_placed(camera, b.center_px, dmm, _base_z(b)),
        confidence=float(np.clip(min(cf, kind_conf), 0.05, 1.0)), kind_confidence=float(kind_conf),
        measured_diameter_mm=float(dmm), size_sigma_mm=sigma_mm, size_reads_mm=None)


def _joined_marble_probabilities(found: list[BallDetection], caustics: dict) -> dict[int, float]:
    """A second opinion on each single ball read in full: the probability that it is a marble from its reads
    (area, outline, blurred sphere and, for a clear ball, its caustic from ``caustics``) joined under the photo's
    own calibration of each (``vision.marbles_kind.join_reads``), with the joined read's scatter over the
    photo's marbles (``marble_probability``); a ball whose reads disagree beyond their errors is a guess (0.5).
    Empty for a photo with too few single balls to calibrate on.

    It only lowers a confidence (``_joined_doubts``), never calls a kind: calling kinds from the calibrated read
    made them worse on development seed 7 (count exact 21 -> 10-16 of 30, whatever the weighting), as a read's
    bias differs with the glass (clear or opaque) while the photo's marbles are mostly clear."""
    read = [i for i, b in enumerate(found) if b.size_sigma_mm is not None and b.size_reads_mm is not None
            and b.measured_diameter_mm is not None]
    if not read:
        return {}
    got = join_reads(np.array([[*found[i].size_reads_mm, caustics[i].diameter_mm if i in caustics else math.nan]
                               for i in read]))
    if got is None:
        return {}
    out = {}
    for i, d, sigma in zip(read, got.diameter_mm, got.sigma_mm):
        if np.isfinite(d):
            # reads that disagree: one of them is wrong, and the size is a guess
            out[i] = 0.5 if sigma > got.scale.scatter_mm else marble_probability(float(d), got.scale, float(sigma))
    return out


def _joined_doubts(found: list[BallDetection], p_marble: dict[int, float]) -> list[BallDetection]:
    """Each ball's kind confidence lowered to what its joined reads give its kind (``p_marble``, by index), where
    that is lower."""
    out = list(found)
    for i, p in p_marble.items():
        b = found[i]
        conf = p if b.kind == "marble" else 1.0 - p
        if conf < b.kind_confidence:
            out[i] = replace(b, kind_confidence=float(conf), confidence=float(np.clip(min(b.confidence, conf), 0.05, 1.0)))
    return out


def _read_spread_doubts(found: list[BallDetection]) -> list[BallDetection]:
    """Each ball's kind confidence lowered to what the spread of its own independent size reads allows: their
    mean's standard error (half the gap of two reads), where it exceeds the size model's sigma.

    Why. The model's sigma is one photo-wide figure for a whole read; reads of one ball that disagree by several
    millimetres (area, outline and blurred sphere: one took the contact shadow, clear glass' sand-coloured core or a
    neighbour) say their mean is known no better than their spread. Seed 1471_010's clear 16.7 mm tolley at the
    rim's foot read 7.9, 16.1 and 12.7 mm: a 12.3 mm marble at 0.935 by the model's 1.33 mm, 0.80 by its reads'
    2.4 mm. It only lowers a confidence, after every stage that picks sure marbles, so no kind and no lamp moves."""
    out = list(found)
    for i, b in enumerate(found):
        if b.size_reads_mm is None or b.measured_diameter_mm is None or b.size_sigma_mm is None:
            continue
        reads = np.array([v for v in b.size_reads_mm if math.isfinite(v)])
        if len(reads) < 2:
            continue
        spread = float(np.std(reads, ddof=1)) / math.sqrt(len(reads))
        if spread <= b.size_sigma_mm:
            continue
        conf = _split_confidence(b.measured_diameter_mm, spread)
        if conf < b.kind_confidence:
            out[i] = replace(b, kind_confidence=float(conf), confidence=float(np.clip(min(b.confidence, conf), 0.05, 1.0)))
    return out


def _photo_kinds(camera: CameraModel, found: list[BallDetection], params: MarblesParams,
                 plain_mm: list[float | None] | None = None) -> list[BallDetection]:
    """Each single ball's kind checked against the photo's own marbles (``vision.marbles_kind``): all marbles are
    one size, so their reads measure this photo's size bias and scatter, and a kind is no surer than that read of
    it allows. It only lowers a confidence, never calls a kind: the bias is measured on the photo's marbles and
    is the marbles', while an opaque (swirl) tolley reads 4-6 mm small where the photo's marbles read about 2 mm
    small (development renders, seeds 2026, 7, 99), so a read the photo finds marble-like may still be a tolley.
    Balls without a whole size read, and photos whose marbles cannot be told (too few), are left as they are.
    The scale is measured on the read every ball shares: a faint ball read with its sky shadow enters it by its
    plain read (``plain_mm``, by index; None: its own), since that other read's bias is not the photo's (seen
    1613_010: the scale measured on the faint marbles' new reads made a marble read 18.02 mm a tolley at 0.93)."""
    read = [i for i, b in enumerate(found) if b.size_sigma_mm is not None and b.measured_diameter_mm is not None]
    plain = plain_mm if plain_mm is not None else [None] * len(found)
    scale = photo_scale(np.array([found[i].measured_diameter_mm if plain[i] is None else plain[i] for i in read]),
                        params.size_sigma_mm)
    if scale is None:
        return list(found)
    out = list(found)
    for i in read:
        b = found[i]
        p_marble = marble_probability(b.measured_diameter_mm, scale, b.size_sigma_mm)
        conf = p_marble if b.kind == "marble" else 1.0 - p_marble
        if conf < b.kind_confidence:
            out[i] = replace(b, kind_confidence=float(conf), confidence=float(np.clip(min(b.confidence, conf), 0.05, 1.0)))
    return out


def _shadow_sizes(lab: np.ndarray, camera: CameraModel, found: list[BallDetection],
                  shadowed: list[bool], psf_px: tuple[float, float] | None, native_px: float,
                  params: MarblesParams, plain_mm: list[float | None] | None = None) -> list[BallDetection]:
    """Single balls read in full (``shadowed``: fitted by the blurred-sphere model, or any single ball of a sharp
    photo), sized again with their cast shadow (``vision.marbles_shadow``): the photo's lamp from its sure single
    marbles, then each ball's image and shadow fitted together. The read's own bias in this photo (a width of
    blur or penumbra it misplaces on every ball alike) is what the sure marbles, whose size is known, lack of
    12.7 mm, and its scatter over them is its uncertainty. Where it calls the ball's other kind beyond
    SHADOW_DECISIVE it replaces the size read (the blurred-sphere model it extends took the shadow for ground: an
    opaque tolley read small, and the silhouette's area and outline err the same way on it); where it calls the
    other kind less surely it only lowers the kind's confidence to its own; where it agrees it leaves the ball as
    it is. Replacing every size read with it (each kind called at the split) lost 2 of the development set's 39
    counts and 1 of seed 99's first 17: a swirl tolley read 13.2 mm by its shadow (marbles_07), marbles read
    14.4-15.4 mm (its scatter over the photo's marbles understates a single ball's). A sharp photo whose sure
    marbles are too few opaque ones to calibrate it on (their clear glass lets the lamp through, so their shadows
    are too shallow to be read) takes the read as it is: at 12-26 px per marble the seen renders' opaque balls
    read 0.7-1.1 mm small by it (medians), both kinds alike."""
    if psf_px is None:
        return found
    single = [i for i, (b, ok) in enumerate(zip(found, shadowed))
              if ok and not b.in_group and b.measured_diameter_mm is not None]
    contact = {i: np.asarray(found[i].center_mm, float) for i in single}
    every = np.array([[*b.center_mm, b.center_z_mm] for b in found]).reshape(-1, 3)
    sure = [i for i in single if _sure_marble(found[i], None if plain_mm is None else plain_mm[i])]
    lamp = fit_lamp(lab, camera, np.array([[*contact[i], _base_z(found[i])] for i in sure]).reshape(-1, 3),
                    every, psf_px)
    if lamp is None:
        return found
    fits = {}
    for i in single:
        base_z = _base_z(found[i])
        got = fit_ball_shadow(lab, camera, contact[i], base_z, lamp, psf_px, np.delete(every, i, axis=0),
                              None if base_z == 0.0 else _shows_ground(camera, base_z))
        if got is not None:
            fits[i] = got
    if not fits:
        return found
    # only a shadow the ball casts whole is its cylinder's section: a clear ball lets light through, focused into
    # its caustic inside the shadow, so its shadow is shallower than an opaque ball's (renders: 42 % of the key
    # light passes clear glass, 6 % opaque) or even brighter than the ground; those keep their size read
    deep = float(np.quantile([f.shadow_depth_ratio for f in fits.values()], DEEP_SHADOW_QUANTILE))
    reads = {i: f.diameter_mm for i, f in fits.items() if f.shadow_depth_ratio >= SHADOW_DEPTH_SHARE * deep > 0.0}
    known = np.array([reads[i] for i in sure if i in reads])
    # the glass the bias is measured on: no ball's shadow deeper than the calibrating marbles' deepest is covered
    deepest = math.inf
    if len(known) >= SHADOW_MIN_MARBLES:
        deepest = max(fits[i].shadow_depth_ratio for i in sure if i in reads)
        bias = MARBLE_DIAMETER_MM - float(np.median(known))
        # the read's scatter over balls of one size, and the bias's error from so few of them
        spread = 1.4826 * float(np.median(np.abs(known - np.median(known))))
        sigma_shadow = math.hypot(max(spread, params.size_sigma_mm), spread / math.sqrt(len(known)))
    elif native_px >= params.min_marble_px:
        # too few sure opaque marbles to measure its bias on: in a sharp photo the read is taken as it is (blur
        # and penumbra move its edges by a fraction of a millimetre), with a single ball's size sigma
        bias, sigma_shadow = 0.0, _size_sigma_mm(native_px, params)
    else:
        return found
    out = list(found)
    for i, d in reads.items():
        b, dmm = found[i], d + bias
        kind = "tolley" if dmm > MARBLE_TOLLEY_SPLIT_MM else "marble"
        if kind == b.kind:
            continue  # it agrees: the ball's own reads keep their word on how sure it is
        conf = _split_confidence(dmm, sigma_shadow)
        if fits[i].shadow_depth_ratio > deepest:
            # a shadow deeper than every calibrating marble's is cast by more opaque glass than theirs: cast whole,
            # it needs less of their bias (an opaque ball's read is taken as it is in a sharp photo), so its size
            # lies between its raw read and the calibrated one, and is known only where both call one kind
            conf = min(conf, _split_confidence(d, sigma_shadow)) if (d > MARBLE_TOLLEY_SPLIT_MM) == (
                dmm > MARBLE_TOLLEY_SPLIT_MM) else 0.5
        if conf >= SHADOW_DECISIVE:
            out[i] = _resized(b, camera, dmm, conf, sigma_shadow)
        elif 1.0 - conf < b.kind_confidence:
            out[i] = replace(b, kind_confidence=float(1.0 - conf),
                             confidence=float(np.clip(min(b.confidence, 1.0 - conf), 0.05, 1.0)))
    return out


def _caustic_reads(frame_bgr: np.ndarray, camera: CameraModel, found: list[BallDetection],
                   fitted_px: list[np.ndarray | None], plain_mm: list[float | None] | None = None) -> dict:
    """Single balls fitted by the blurred-sphere model, read by their caustic (``vision.marbles_caustic``) where
    the photo's lamp throws one clear of the balls (the lamp's offset from its sure single marbles): ball index ->
    its read."""
    lum = brightness(frame_bgr)
    centre_px = [np.asarray(b.center_px, float) if p is None else p for b, p in zip(found, fitted_px)]
    scale = [math.sqrt(abs(np.linalg.det(local_affine(camera, np.array([*b.center_mm, b.center_z_mm])))))
             for b in found]
    disc_px = np.array([0.5 * b.diameter_mm * s for b, s in zip(found, scale)])
    every = [(c, r) for c, r in zip(centre_px, disc_px)]
    plain = plain_mm if plain_mm is not None else [None] * len(found)
    sure = [(c, _base_z(b), 0.5 * MARBLE_DIAMETER_MM) for b, c, p, q in zip(found, centre_px, fitted_px, plain)
            if p is not None and not b.in_group and _sure_marble(b, q)]
    k = lamp_offset(lum, camera, sure, every)
    if k is None:
        return {}
    px_all = np.array(centre_px)
    reads = {}
    for i, (b, p) in enumerate(zip(found, fitted_px)):
        if p is not None and not b.in_group and b.measured_diameter_mm is not None:
            got = read_caustic(lum, camera, p, _base_z(b), k, others_px=np.delete(px_all, i, axis=0),
                               others_r_px=np.delete(disc_px, i))
            if got is not None:
                reads[i] = got
    return reads


def _caustic_sizes(camera: CameraModel, found: list[BallDetection], reads: dict, native_px: float,
                   params: MarblesParams, plain_mm: list[float | None] | None = None) -> list[BallDetection]:
    """Each clear ball's caustic read (``_caustic_reads``) joined with its size read (less the photo's bias on
    clear glass, from all its caustic reads), weighted by their uncertainties. Where the two disagree beyond
    their errors one of them is wrong, and the kind's uncertainty is at least half their gap, so such a ball is
    flagged rather than called. The bias is measured on the read every ball shares: a ball read with its sky shadow
    gives its plain read there (``plain_mm``, by index; seen 1597_004: its two such balls' new reads moved the bias
    and a swirl at the rim's foot read a tolley at 0.94)."""
    if not reads:
        return found
    plain = plain_mm if plain_mm is not None else [None] * len(found)
    # the size read's own bias on clear glass in this photo (the ground showing through its rim eats a width of
    # blur): what the caustics, which no edge biases, add to it, taken over the photo's clear balls
    gaps = np.array([r.diameter_mm - (found[i].measured_diameter_mm if plain[i] is None else plain[i])
                     for i, r in reads.items()])
    sigma_size = _size_sigma_mm(native_px, params)
    bias = 0.0
    if len(gaps) >= CAUSTIC_MIN_BALLS:
        bias = float(np.median(gaps))
        # the size read's own scatter here (the gaps' less the caustics'), and the bias's error from so few balls
        spread = 1.4826 * float(np.median(np.abs(gaps - bias)))
        own = math.sqrt(max(spread**2 - float(np.median([r.sigma_mm for r in reads.values()])) ** 2, 0.0))
        sigma_size = math.hypot(max(sigma_size, own), spread / math.sqrt(len(gaps)))
    out = list(found)
    for i, got in reads.items():
        d_s, d_c = found[i].measured_diameter_mm + bias, got.diameter_mm
        w_s, w_c = sigma_size ** -2, got.sigma_mm ** -2
        dmm = (w_s * d_s + w_c * d_c) / (w_s + w_c)
        sigma = max((w_s + w_c) ** -0.5, 0.5 * abs(d_s - d_c))
        out[i] = _resized(found[i], camera, dmm, _split_confidence(dmm, sigma), sigma)
    return out


def _plain_kind_doubts(found: list[BallDetection], plain_mm: list[float | None]) -> list[BallDetection]:
    """A ball read with its sky shadow whose kind its plain read does not give is too close to call (0.5), after
    every stage that sizes it again (the caustic's join recomputes its confidence)."""
    out = list(found)
    for i, (b, p) in enumerate(zip(found, plain_mm)):
        if p is not None and (p > MARBLE_TOLLEY_SPLIT_MM) != (b.kind == "tolley") and b.kind_confidence > 0.5:
            out[i] = replace(b, kind_confidence=0.5, confidence=float(np.clip(min(b.confidence, 0.5), 0.05, 1.0)))
    return out


def _sure_marble(b: BallDetection, plain_mm: float | None) -> bool:
    """Whether ``b`` is a sure marble the photo's lamp may be measured on: a ball read with its sky shadow must be
    one by its plain read too, so the lamp is measured on the balls it was before that read (seen 1597_004: the
    faint marbles it made sure moved the shadow stage's lamp, and a swirl at the rim's foot read a tolley at
    0.94)."""
    if b.kind != "marble" or b.kind_confidence < KIND_SURE:
        return False
    return plain_mm is None or (b.size_sigma_mm is not None and plain_mm <= MARBLE_TOLLEY_SPLIT_MM
                                and _split_confidence(plain_mm, b.size_sigma_mm) >= KIND_SURE)


#: The sky share a ball's own contact shadow hides at its window's edge, about (``vision.marbles_halo``): ground
#: the ring's shoulder shades more than this is no open ground for the sky-shadow template.
HALO_SKY_SHARE = 0.1


def _halo_size(model: dict, camera: CameraModel, ctrs: np.ndarray, i: int,
               shows: Callable[[np.ndarray, np.ndarray], np.ndarray] | None) -> float | None:
    """Ball ``i`` of ``ctrs`` read with its sky shadow (``vision.marbles_halo``), the other balls' discs left out
    of its window as the blurred-sphere fit leaves them. None for a ball on the ground (``shows``) whose window
    comes where the raised ring's shoulder hides more of the sky than a tenth (as much as the ball's own shadow
    at its edge): there the ground darkens towards the foot of its own accord, which the open-ground template
    takes for the ball's shadow (marbles_06's swirl marble m25, 13 mm beyond the foot, read 8.8 mm with it)."""
    if model["psf"] is None:
        return None
    # the window's nearest ground to the foot of the shoulder
    near_mm = (math.hypot(ctrs[i][0], ctrs[i][1]) - (RING_RADIUS_MM + RIM_WIDTH_MM)
               - WINDOW_TOLLEY_RADII * 0.5 * TOLLEY_MAX_DIAMETER_MM)
    if shows is not None and wall_sky_share(max(near_mm, 0.0), RING_HEIGHT_MM) > HALO_SKY_SHARE:
        return None
    px = camera.project_mm(ctrs)
    return halo_diameter_mm(model["lab"], camera, ctrs[i], model["psf"], others_px=np.delete(px, i, axis=0),
                            shows_model=shows)


def _outline_size(grads, grid, camera: CameraModel, c, z_mid: float, mm_per_px: float, others: list
                  ) -> float | None:
    """Outline diameter of the ball at ortho ``c``, with the view direction there (see vision.marbles_outline)."""
    xy = grid.table_from_ortho(np.asarray(c, float)[None])[0]
    v = np.array([xy[0], xy[1], z_mid]) - camera.center_mm
    cos_view = abs(float(v[2])) / float(np.linalg.norm(v))
    azimuth = math.atan2(-float(v[1]), float(v[0]))  # ortho rows run towards -y
    return outline_diameter_mm(grads, c, mm_per_px, cos_view, azimuth, 0.3 * MARBLE_DIAMETER_MM / 2,
                               1.3 * TOLLEY_MAX_DIAMETER_MM / 2, others)


# --- the document --------------------------------------------------------------------------------------------


def count_ranges(pieces: list[dict], kind_sure: float = KIND_SURE, possible: list[dict] = ()) -> dict[str, Any]:
    """Each count as the range it may span when some balls' kind, or whether they are balls, is too close to call.

    A ball whose measured size lies within the size's uncertainty of the marble/tolley split
    (``kind_confidence`` < ``kind_sure``) may be either; it widens the range of its kind's count downwards and
    of the other kind's upwards. A piece that may be no ball at all (``presence_confidence`` < ``kind_sure``:
    a close-packed group's member that may be the group's shadow) widens its kind's count downwards, and a
    ``possible`` piece (not counted: a place that may hold a ball the photo neither shows nor rules out) upwards.
    Returns ``count_ranges`` ({count: [low, high]}), ``kind_too_close_to_call`` and ``presence_too_close_to_call``
    (those pieces' ids, and the possible pieces') and ``counts_certain``.

    >>> count_ranges([], possible=[{"id": "p1", "kind": "marble", "on_ring": True}])["count_ranges"]["marbles_on_ring"]
    [0, 1]
    """
    def absent(p: dict) -> bool:
        return p.get("presence_confidence", 1.0) < kind_sure

    ranges = {}
    for side, on in (("on_ring", True), ("off_ring", False)):
        here = [p for p in pieces if p["on_ring"] == on]
        for kind, other in (("marble", "tolley"), ("tolley", "marble")):
            n = sum(p["kind"] == kind for p in here)
            lose = sum(p["kind"] == kind and (p["kind_confidence"] < kind_sure or absent(p)) for p in here)
            gain = sum(p["kind"] == other and p["kind_confidence"] < kind_sure for p in here)
            gain += sum(p["kind"] == kind and p["on_ring"] == on for p in possible)
            ranges[f"{kind}s_{side}"] = [n - lose, n + gain]
    unsure = [p["id"] for p in pieces if p["kind_confidence"] < kind_sure]
    maybe = [p["id"] for p in pieces if absent(p)] + [p["id"] for p in possible]
    return {"count_ranges": ranges, "kind_too_close_to_call": unsure, "presence_too_close_to_call": maybe,
            "counts_certain": not unsure and not maybe}


def analyze_marbles(
    frame_bgr: np.ndarray, camera: CameraModel | None = None, *, image_path: str | None = None,
    params: MarblesParams = DEFAULT_PARAMS,
) -> dict[str, Any]:
    """The ring, pieces and counts seen in one photo, as a JSON-ready document (no rulings).

    ``ring``: ``center_mm`` (0, 0), ``radius_mm``, ``center_px``, ``ellipse_px`` {center, axes (full), angle_deg}.
    ``pieces[]``: ``id`` (m1.., t1..), ``kind`` marble|tolley, ``center_mm`` (ring frame, plan contact point),
    ``center_z_mm``, ``diameter_mm``, ``on_ring``, ``ring_margin_mm`` (+ inside), ``center_px``,
    ``confidence``, ``position_sigma_mm``, ``in_group``. ``counts``: marbles and tolleys on and off the ring;
    ``count_ranges``, ``kind_too_close_to_call``, ``counts_certain``: see ``count_ranges``.
    ``calibration``: ``source`` (given | ring_outline | ring_sand_edge), ``camera`` and ``frame_sigma_mm``
    (self-calibrated: how loose the ring frame is; folded into each piece's ``position_sigma_mm``).
    """
    if frame_bgr is None or frame_bgr.ndim != 3:
        raise VisionError("frame must be a colour image (H, W, 3)")
    t0 = time.perf_counter()
    h, w = frame_bgr.shape[:2]
    ring = detect_ring(frame_bgr, camera)
    balls, possible = detect_marbles_and_possible(frame_bgr, ring.camera, params)
    order = sorted(range(len(balls)), key=lambda i: (balls[i].kind, balls[i].center_mm[0], balls[i].center_mm[1]))
    pieces = []
    n_m = n_t = 0
    for i in order:
        b = balls[i]
        if b.kind == "marble":
            n_m += 1
            pid = f"m{n_m}"
        else:
            n_t += 1
            pid = f"t{n_t}"
        pieces.append({
            "id": pid,
            "kind": b.kind,
            "center_mm": [round(b.center_mm[0], 2), round(b.center_mm[1], 2)],
            "center_z_mm": round(b.center_z_mm, 2),
            "diameter_mm": round(b.diameter_mm, 2),
            "on_ring": b.on_ring,
            "ring_margin_mm": round(b.ring_margin_mm, 2),
            "center_px": [round(b.center_px[0], 2), round(b.center_px[1], 2)],
            "confidence": round(b.confidence, 3),
            # a self-calibrated ring frame is only as sure as the outline makes it
            "position_sigma_mm": round(math.hypot(b.position_sigma_mm, ring.frame_sigma_mm), 3),
            "in_group": b.in_group,
            "kind_confidence": round(b.kind_confidence, 3),
            "measured_diameter_mm": None if b.measured_diameter_mm is None else round(b.measured_diameter_mm, 2),
            "presence_confidence": round(b.presence_confidence, 3),
        })
    counts = {
        "marbles_on_ring": sum(p["kind"] == "marble" and p["on_ring"] for p in pieces),
        "marbles_off_ring": sum(p["kind"] == "marble" and not p["on_ring"] for p in pieces),
        "tolleys_on_ring": sum(p["kind"] == "tolley" and p["on_ring"] for p in pieces),
        "tolleys_off_ring": sum(p["kind"] == "tolley" and not p["on_ring"] for p in pieces),
    }
    # places that may hold a marble the photo neither shows nor rules out: not counted, they widen the ranges
    maybe = [{"id": f"p{i + 1}", "kind": b.kind, "center_mm": [round(b.center_mm[0], 2), round(b.center_mm[1], 2)],
              "on_ring": b.on_ring, "center_px": [round(b.center_px[0], 2), round(b.center_px[1], 2)],
              "presence_confidence": round(b.presence_confidence, 3)} for i, b in enumerate(possible)]
    return {
        "game": "marbles",
        "image": {"path": image_path, "size_wh_px": [w, h]},
        "ring": ring.to_dict(),
        "pieces": pieces,
        "possible_pieces": maybe,
        "counts": counts,
        **count_ranges(pieces, possible=maybe),
        "calibration": {"source": ring.source, "camera": ring.camera.to_dict(),
                        "frame_sigma_mm": round(ring.frame_sigma_mm, 2)},
        "timing_ms": round((time.perf_counter() - t0) * 1e3, 1),
    }
