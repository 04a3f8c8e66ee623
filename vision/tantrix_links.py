"""Reading a tile's six edge colours and naming the face (RULES.md 2.1; TX 10 colour-blind sets).

Every link meets its edge at the midpoint, square to the edge, so just inside each edge midpoint the tile shows
one band of link colour between black. The band is first located across the edge (its centre gives the tile's
own small turn and shift against the lattice: players leave tiles a little askew), then sampled along its middle
and summarised by a robust median. Colours are judged by CIE Lab hue — shading and glare change lightness and
chroma far more than hue — against prototypes re-centred on this image's own links (white balance), white being
the light, hueless link of colour-blind sets. The face is the tile and rotation whose colour pattern costs least
over all six edges at once (each colour on exactly two edges); a face not clearly cheaper than the next one is
flagged rather than guessed.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import cv2
import numpy as np

from geometry.tantrix import EDGE_COUNT, TILES, LinkColor
from vision.sampling import sample_bilinear
from vision.tantrix_lattice import apply_h

CLASS_NAMES: tuple[str, ...] = ("red", "yellow", "blue", "green")
_CLASS_OF = {LinkColor.RED: 0, LinkColor.YELLOW: 1, LinkColor.BLUE: 2, LinkColor.GREEN: 3}
#: Lab hue angles (deg) of the printed link colours, the starting prototypes.
HUE_PROTOTYPES_DEG = (40.0, 92.0, 285.0, 150.0)
APOTHEM_U = math.sqrt(3.0) / 2.0


def _face_table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (number, rotation) and its class per lattice edge: (336,), (336,), (336, 6)."""
    nums, rots, pats = [], [], []
    for n, t in TILES.items():
        for r in range(EDGE_COUNT):
            nums.append(n)
            rots.append(r)
            pats.append([_CLASS_OF[c] for c in t.rotated_edges(r)])
    return np.array(nums), np.array(rots), np.array(pats)


FACE_NUMBERS, FACE_ROTATIONS, FACE_PATTERNS = _face_table()


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkParams:
    """Where and how the link bands are read (U units: one = hexagon circumradius)."""

    profile_radius: float = 0.70  # band search line, just inside the edge (apothem 0.866)
    profile_halfwidth: float = 0.28  # across the edge; the band is ~0.2 wide
    sample_radii: tuple[float, ...] = (0.64, 0.69, 0.74, 0.79)
    sample_tangents: tuple[float, ...] = (-0.035, 0.0, 0.035)
    max_turn_deg: float = 7.0  # a tile askew by more is not corrected further
    max_shift: float = 0.18
    free_max_turn_deg: float = 15.0  # tiles off the lattice: found from the outline only
    free_max_shift: float = 0.4
    refine_rounds: int = 3
    glare_radii: tuple[float, ...] = (0.58, 0.64, 0.70, 0.76)  # within the usual samples' span: not the bevel
    glare_tangents: tuple[float, ...] = (-0.06, -0.03, 0.0, 0.03, 0.06)
    glare_flank: float = 0.2  # beside the band, on the black
    glare_rise_l: float = 20.0  # L* above the image's usual black beside a band: a highlight
    glare_clip_l: float = 97.0  # clipped: no colour left
    hue_sigma_deg: float = 14.0
    min_chroma: float = 16.0  # below this a link's hue is unreliable
    white_chroma: float = 12.0
    white_min_l: float = 55.0
    hue_adapt_deg: float = 25.0
    pale_sigma: float = 0.5  # log-chroma below the colour's own typical chroma (shade and glare lower it)
    flag_margin: float = 4.0  # cost units between the best and second face
    max_mean_cost: float = 5.0  # per edge: beyond this the best face does not explain the pixels
    edges_that_must_fit: int = 5


@dataclass(frozen=True, slots=True)
class FaceRead:
    """One tile's reading: face (None when flagged), its cost margin, and what each edge's pixels say."""

    number: int | None
    rotation: int | None
    edge_classes: tuple[int | None, ...]
    margin: float
    mean_cost: float
    flagged: bool


def _edge_frames(angle_deg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Outward normal and ccw tangent of each edge: (T, 6, 2) each."""
    phi = np.radians(angle_deg[:, None] + 60.0 * np.arange(EDGE_COUNT)[None, :])
    n = np.stack([np.cos(phi), np.sin(phi)], axis=-1)
    t = np.stack([-np.sin(phi), np.cos(phi)], axis=-1)
    return n, t


def refine_poses(lab: np.ndarray, H_u2img: np.ndarray, centers_u: np.ndarray, angles_deg: np.ndarray,
                 params: LinkParams, free: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each tile's own centre and angle from where its six link bands cross the edges.

    A turn by ``d`` moves every band along its edge by ``r d``; a shift moves it by the shift's tangential part.
    ``free`` tiles (found by their outline alone, which a shadow or the tile's side can bias) may move further.
    """
    T = len(centers_u)
    if T == 0:
        return centers_u, angles_deg
    free = np.zeros(T, bool) if free is None else np.asarray(free, bool)
    max_turn = np.where(free, params.free_max_turn_deg, params.max_turn_deg)
    max_shift = np.where(free, params.free_max_shift, params.max_shift)
    ts = np.linspace(-params.profile_halfwidth, params.profile_halfwidth, 29)
    radii = np.array([params.profile_radius - 0.05, params.profile_radius, params.profile_radius + 0.05])
    c, ang = centers_u.copy(), angles_deg.copy()
    for _ in range(params.refine_rounds):
        n, t = _edge_frames(ang)
        pts = (c[:, None, None, None, :] + radii[None, None, :, None, None] * n[:, :, None, None, :]
               + ts[None, None, None, :, None] * t[:, :, None, None, :])
        vals = sample_bilinear(lab, apply_h(H_u2img, pts.reshape(-1, 2)))
        vals = vals.reshape(T, EDGE_COUNT, len(radii), len(ts), 3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a tile cut by the image border
            black = np.nanpercentile(vals[..., 0].reshape(T, -1), 15, axis=1)
            prof = np.sqrt((vals[..., 0] - black[:, None, None, None]) ** 2 + vals[..., 1] ** 2 + vals[..., 2] ** 2)
            prof = np.nanmean(prof, axis=2)  # (T, 6, n_t)
        prof = np.nan_to_num(prof, nan=0.0)
        lo = prof.min(axis=2, keepdims=True)
        hi = prof.max(axis=2, keepdims=True)
        wgt = np.clip(prof - (lo + 0.5 * (hi - lo)), 0.0, None)
        ok = (hi[..., 0] - lo[..., 0]) > 15.0
        cent = (wgt * ts).sum(axis=2) / np.maximum(wgt.sum(axis=2), 1e-9)  # (T, 6)
        r0 = params.profile_radius
        for i in range(T):
            m = ok[i]
            if m.sum() < 4:
                continue
            A = np.column_stack([np.full(EDGE_COUNT, r0), t[i, :, 0], t[i, :, 1]])[m]
            y = cent[i][m]
            sol, *_ = np.linalg.lstsq(A, y, rcond=None)
            res = np.abs(A @ sol - y)
            if m.sum() >= 5 and res.max() > 0.05:
                keep = res < res.max()
                sol, *_ = np.linalg.lstsq(A[keep], y[keep], rcond=None)
            turn = float(np.clip(math.degrees(sol[0]), -max_turn[i], max_turn[i]))
            shift = sol[1:]
            sn = np.hypot(*shift)
            if sn > max_shift[i]:
                shift = shift * max_shift[i] / sn
            ang[i] = ang[i] + turn
            c[i] = c[i] + shift
        # clamp the total against the found pose
        dang = np.clip(ang - angles_deg, -max_turn, max_turn)
        ang = angles_deg + dang
        dc = c - centers_u
        dn = np.maximum(np.hypot(dc[:, 0], dc[:, 1]), 1e-12)
        big = dn > max_shift
        c[big] = centers_u[big] + dc[big] * (max_shift[big] / dn[big])[:, None]
    return c, ang


def band_contrast(lab: np.ndarray, H_u2img: np.ndarray, centers_u: np.ndarray, angles_deg: np.ndarray,
                  params: LinkParams) -> np.ndarray:
    """How strongly each pose shows a band at all six edge midpoints: the mean over the edges of the distance
    from the tile's black (Lab) at the midpoint minus that a band's width to either side. (T,)"""
    T = len(centers_u)
    if T == 0:
        return np.zeros(0)
    n, t = _edge_frames(angles_deg)
    radii = np.array(params.sample_radii)
    ts = np.array([-0.24, -0.2, -0.03, 0.0, 0.03, 0.2, 0.24])
    pts = (centers_u[:, None, None, None, :] + radii[None, None, :, None, None] * n[:, :, None, None, :]
           + ts[None, None, None, :, None] * t[:, :, None, None, :])
    vals = sample_bilinear(lab, apply_h(H_u2img, pts.reshape(-1, 2))).reshape(T, EDGE_COUNT, len(radii), len(ts), 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # off the image: no contrast
        black = np.nanpercentile(vals[..., 0].reshape(T, -1), 15, axis=1)
        d = np.sqrt((vals[..., 0] - black[:, None, None, None]) ** 2 + vals[..., 1] ** 2 + vals[..., 2] ** 2)
        mid = np.nanmean(d[..., 2:5], axis=(2, 3))
        side = np.nanmean(d[..., [0, 1, 5, 6]], axis=(2, 3))
        out = np.nanmean(mid - side, axis=1)
    return np.nan_to_num(out, nan=-np.inf)


def turn_to_bands(lab: np.ndarray, H_u2img: np.ndarray, centers_u: np.ndarray, angles_deg: np.ndarray,
                  params: LinkParams, step_deg: float = 2.0) -> np.ndarray:
    """Each tile's angle (mod 60) at which its six edge midpoints show link bands best.

    Every edge of every tile carries a link end at its midpoint, so a hexagon turned off the tile's true angle
    samples black beside the bands on every edge at once. A hand tile's outline angle can be off by tens of
    degrees (a mat hugging it, tiles merged in one silhouette): beyond the band refinement's reach, not this one's.
    """
    T = len(centers_u)
    if T == 0:
        return angles_deg
    turns = np.arange(-30.0, 30.0, step_deg)
    a = (angles_deg[:, None] + turns[None, :]).ravel()
    c = np.repeat(centers_u, len(turns), axis=0)
    score = band_contrast(lab, H_u2img, c, a, params).reshape(T, len(turns))
    return angles_deg + turns[np.argmax(score, axis=1)]


def search_pose(lab: np.ndarray, H_u2img: np.ndarray, center_u: np.ndarray, angle_deg: float, params: LinkParams,
                reach: float = 1.0, step: float = 0.125, step_deg: float = 3.0) -> tuple[np.ndarray, float]:
    """The pose within ``reach`` (U) of a tile's whose six edge midpoints show bands best (a pose between two
    touching hand tiles shows black beside the bands; either tile's own pose shows all six)."""
    g = np.arange(-reach, reach + 1e-9, step)
    dx, dy = np.meshgrid(g, g)
    offs = np.column_stack([dx.ravel(), dy.ravel()])
    offs = offs[np.hypot(offs[:, 0], offs[:, 1]) <= reach + 1e-9]
    turns = np.arange(-30.0, 30.0, step_deg)
    c = np.repeat(np.asarray(center_u, float)[None, :] + offs, len(turns), axis=0)
    a = np.tile(angle_deg + turns, len(offs))
    k = int(np.argmax(band_contrast(lab, H_u2img, c, a, params)))
    return c[k], float(a[k])


def edge_colours_lab(lab: np.ndarray, H_u2img: np.ndarray, centers_u: np.ndarray, angles_deg: np.ndarray,
                     params: LinkParams) -> np.ndarray:
    """Median Lab of each edge's link band: (T, 6, 3)."""
    T = len(centers_u)
    n, t = _edge_frames(angles_deg)
    rr = np.array(params.sample_radii)
    tt = np.array(params.sample_tangents)
    pts = (centers_u[:, None, None, None, :] + rr[None, None, :, None, None] * n[:, :, None, None, :]
           + tt[None, None, None, :, None] * t[:, :, None, None, :])
    vals = sample_bilinear(lab, apply_h(H_u2img, pts.reshape(-1, 2)))
    vals = vals.reshape(T, EDGE_COUNT, len(rr) * len(tt), 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an edge off the image: NaN, costs every face alike
        out = np.nanmedian(vals, axis=2)
    if T:
        _glare_edges(lab, H_u2img, centers_u, n, t, params, out)
    return out


def _glare_edges(lab: np.ndarray, H_u2img: np.ndarray, centers_u: np.ndarray, n: np.ndarray, t: np.ndarray,
                 params: LinkParams, out: np.ndarray) -> None:
    """Re-read, in place, the edges under a specular highlight from the band's least-washed pixels.

    A lamp's highlight adds the lamp's light to band and black alike, so it shows on the black tile beside the
    band (a white link of a colour-blind set stays within the band's width). On such an edge the band's hue
    survives where the highlight is weakest: the band is read from the samples of highest chroma along it,
    saturated (clipped) pixels excluded, or from the band with the highlight taken away (``_without_highlight``),
    whichever keeps more colour. Where every sample is washed out the edge is left unread (NaN: it costs every
    face alike) and the other five decide, or the face is flagged; nothing is guessed.
    """
    T = len(centers_u)
    rr = np.array(params.glare_radii)
    side = np.array([-params.glare_flank, params.glare_flank])
    fl = (centers_u[:, None, None, None, :] + rr[None, None, :, None, None] * n[:, :, None, None, :]
          + side[None, None, None, :, None] * t[:, :, None, None, :])
    fv_lab = sample_bilinear(lab, apply_h(H_u2img, fl.reshape(-1, 2))).reshape(T, EDGE_COUNT, len(rr), 2, 3)
    fv = fv_lab[..., 0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # flanks off the image
        flank_l = np.nanmedian(np.nanmin(fv, axis=3), axis=2)  # the darker side: an adjacent arc is not black
        ref = np.nanmedian(flank_l)
    glare = np.isfinite(flank_l) & (flank_l > ref + params.glare_rise_l)
    if not glare.any():
        return
    # per radius, the darker flank's full colour: the black beside the band under the same highlight
    side_dark = np.argmin(np.where(np.isfinite(fv), fv, np.inf), axis=3)
    dark = np.take_along_axis(fv_lab, side_dark[..., None, None], axis=3)[..., 0, :]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        black_lab = np.nanmedian(dark[~glare].reshape(-1, 3), axis=0) if (~glare).any() else np.array([ref, 0., 0.])
    ti, ki = np.nonzero(glare)
    tt = np.array(params.glare_tangents)
    pts = (centers_u[ti, None, None, :] + rr[None, :, None, None] * n[ti, ki][:, None, None, :]
           + tt[None, None, :, None] * t[ti, ki][:, None, None, :])
    v = sample_bilinear(lab, apply_h(H_u2img, pts.reshape(-1, 2))).reshape(len(ti), len(rr) * len(tt), 3)
    C = np.hypot(v[..., 1], v[..., 2])
    C[~np.isfinite(C) | (v[..., 0] > params.glare_clip_l)] = -1.0
    k = max(3, C.shape[1] // 6)
    top = np.argsort(-C, axis=1)[:, :k]
    sel = np.take_along_axis(v, top[..., None], axis=1)
    good = np.take_along_axis(C, top, axis=1) >= 0
    sel[~good] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an edge with every sample clipped stays as read
        re = np.nanmedian(sel, axis=1)
    # the colour must run along the band (two radii or more), not peek past a smudge at one end
    coloured = (C >= params.min_chroma).reshape(len(ti), len(rr), len(tt)).any(axis=2).sum(axis=1) >= 2
    ok = (coloured & np.all(np.isfinite(re), axis=1)
          & (np.hypot(re[:, 1], re[:, 2]) > np.hypot(out[ti, ki, 1], out[ti, ki, 2])))
    out[ti[ok], ki[ok]] = re[ok]
    # the highlight itself taken away: what the band adds over the black beside it, in linear light
    de = _without_highlight(v.reshape(len(ti), len(rr), len(tt), 3), dark[ti, ki], black_lab, params)
    Cd = np.hypot(de[..., 1], de[..., 2])
    Cd[~np.isfinite(Cd)] = -1.0
    top = np.argsort(-Cd.reshape(len(ti), -1), axis=1)[:, :k]
    sel = np.take_along_axis(de.reshape(len(ti), -1, 3), top[..., None], axis=1)
    sel[np.take_along_axis(Cd.reshape(len(ti), -1), top, axis=1) < 0] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        rd = np.nanmedian(sel, axis=1)
    coloured_d = (Cd >= params.min_chroma).any(axis=2).sum(axis=1) >= 2
    # taking the highlight away restores colour, it does not change a hue the band still shows (a highlight
    # brighter on the black than on the band would tilt it: then the edge keeps its pale reading)
    raw = out[ti, ki]
    hued = np.hypot(raw[:, 1], raw[:, 2]) >= params.min_chroma
    with np.errstate(invalid="ignore"):
        turn = _hue_diff(np.degrees(np.arctan2(rd[:, 2], rd[:, 1]) - np.arctan2(raw[:, 2], raw[:, 1])), 0.0)
    same_hue = ~hued | (turn <= MAX_HIGHLIGHT_HUE_TURN_SIGMAS * params.hue_sigma_deg)
    ok_d = (coloured_d & same_hue & np.all(np.isfinite(rd), axis=1)
            & (np.hypot(rd[:, 1], rd[:, 2]) > np.hypot(out[ti, ki, 1], out[ti, ki, 2])))
    out[ti[ok_d], ki[ok_d]] = rd[ok_d]
    ok = ok | ok_d
    # washed out to a white's chroma with no colour along the band: the pixels say nothing here (a lamp's tint
    # is not a link's hue), so the edge costs every face alike; a pale but hued band is kept as read. A band
    # still far lighter than its lit flanks is printed white (colour-blind set): the light a highlight adds to
    # band and black alike leaves a washed band barely above the black beside it (Lab L compresses near white)
    white = out[ti, ki, 0] - flank_l[ti, ki] >= params.glare_rise_l
    lost = ~ok & (np.hypot(out[ti, ki, 1], out[ti, ki, 2]) < params.white_chroma) & ~white
    out[ti[lost], ki[lost]] = np.nan


# The hue of a band with the highlight taken away stays within this many hue sigmas of the pale band's own hue.
MAX_HIGHLIGHT_HUE_TURN_SIGMAS = 2.0


def _without_highlight(band_lab: np.ndarray, flank_lab: np.ndarray, black_lab: np.ndarray,
                       params: LinkParams) -> np.ndarray:
    """Band samples (N, R, S, 3) with the highlight taken away: a glossy tile's highlight adds the lamp's light
    to band and black alike, so in linear light the band minus the black beside it (``flank_lab``, (N, R, 3),
    per radius) plus the tile's usual black is the band as it looks unlit by the highlight. Clipped samples (no
    colour left) and samples beside no black are NaN."""
    def lin(x):
        return cv2.cvtColor(np.ascontiguousarray(x, np.float32).reshape(-1, 1, 3), cv2.COLOR_Lab2LBGR).reshape(x.shape)

    shape = band_lab.shape
    flank = np.broadcast_to(flank_lab[:, :, None, :], shape)
    # a flank as colourful as a link is a neighbouring band, not the black: subtracting it would invent a hue
    bad = (~np.all(np.isfinite(band_lab), axis=-1) | ~np.all(np.isfinite(flank), axis=-1)
           | (np.nan_to_num(band_lab[..., 0]) > params.glare_clip_l)
           | (np.nan_to_num(flank[..., 0]) > params.glare_clip_l)
           | (np.hypot(np.nan_to_num(flank[..., 1]), np.nan_to_num(flank[..., 2])) >= params.min_chroma))
    mixed = (lin(np.nan_to_num(band_lab)) - lin(np.nan_to_num(flank))
             + lin(np.broadcast_to(black_lab, shape)))
    out = cv2.cvtColor(np.clip(mixed, 0.0, 1.0).astype(np.float32).reshape(-1, 1, 3),
                       cv2.COLOR_LBGR2Lab).reshape(shape).astype(np.float64)
    out[bad] = np.nan
    return out


@dataclass(frozen=True, slots=True)
class ColourModel:
    """This image's link hues and whether green links are drawn white (colour-blind set, TX 10)."""

    hues_deg: tuple[float, float, float, float]
    colorblind: bool
    chroma: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)  # typical C* of each class's links here


def _hue_diff(a: np.ndarray, b: float) -> np.ndarray:
    return np.abs((a - b + 180.0) % 360.0 - 180.0)


def class_costs(edge_lab: np.ndarray, model: ColourModel, params: LinkParams) -> np.ndarray:
    """Cost of each class for each edge: (..., 4) in squared-sigma units; class 3 is green, or white if
    the set is colour-blind."""
    L, a, b = edge_lab[..., 0], edge_lab[..., 1], edge_lab[..., 2]
    C = np.hypot(a, b)
    hue = np.degrees(np.arctan2(b, a)) % 360.0
    costs = []
    low = np.clip(params.min_chroma - C, 0.0, None) / 6.0
    # the hue of a nearly hueless pixel is noise: its evidence fades with chroma (a band washed to grey, or
    # black where no band was found, costs every colour nearly alike instead of whichever hue the noise has)
    hue_w = np.clip(C / params.min_chroma, 0.0, 1.0) ** 2
    for j in range(4):
        if j == 3 and model.colorblind:
            costs.append(white_cost(L, C, params))
        else:
            # a link much paler than this colour's links here is another link (white), not this one in shade
            pale = np.log(np.clip(C, 1.0, None) / model.chroma[j]) if model.chroma[j] > 0 else np.zeros_like(C)
            pale = np.clip(-pale, 0.0, None) / params.pale_sigma
            costs.append(hue_w * (_hue_diff(hue, model.hues_deg[j]) / params.hue_sigma_deg) ** 2 + low ** 2
                         + pale ** 2)
    out = np.stack(costs, axis=-1)
    if model.colorblind:
        # white is the one class a hueless sample can match by lightness alone, so a sample as dark and
        # hueless as the tile's black (no band found there) would count for white against every colour; it
        # shows no band at all and, like an unseen edge, costs every class alike
        no_band = (C < params.min_chroma) & (params.white_min_l - L > UNSEEN_WHITE_SIGMAS * WHITE_L_SIGMA)
        out[no_band] = np.nan
    return np.nan_to_num(out, nan=9.0)


#: Lightness spread (L*) of white links below ``white_min_l``, and how many of those below it a hueless sample is
#: no white link but the tile's black.
WHITE_L_SIGMA = 8.0
UNSEEN_WHITE_SIGMAS = 2.0


def white_cost(L: np.ndarray, C: np.ndarray, params: LinkParams) -> np.ndarray:
    return (C / params.white_chroma) ** 2 + (np.clip(params.white_min_l - L, 0.0, None) / WHITE_L_SIGMA) ** 2


def fit_colour_model(edge_lab: np.ndarray, params: LinkParams) -> ColourModel:
    """Colour-blind or not from white vs green links, then hue prototypes re-centred on this image."""
    flat = edge_lab.reshape(-1, 3)
    flat = flat[np.all(np.isfinite(flat), axis=1)]
    hues = list(HUE_PROTOTYPES_DEG)
    base = ColourModel(tuple(hues), False)
    normal = class_costs(flat, base, params)
    wc = white_cost(flat[:, 0], np.hypot(flat[:, 1], flat[:, 2]), params)
    n_white = int(np.sum(wc < normal.min(axis=1)))
    n_green = int(np.sum(normal.argmin(axis=1) == 3))
    colorblind = n_white > n_green and n_white >= 3
    hue = np.degrees(np.arctan2(flat[:, 2], flat[:, 1])) % 360.0
    C = np.hypot(flat[:, 1], flat[:, 2])
    for _ in range(3):
        model = ColourModel(tuple(hues), colorblind)
        costs = class_costs(flat, model, params)
        cls = costs.argmin(axis=1)
        for j in range(4):
            if j == 3 and colorblind:
                continue
            sel = (cls == j) & (costs[:, j] < 4.0) & (C > params.min_chroma)
            if sel.sum() < 3:
                continue
            z = np.exp(1j * np.radians(hue[sel]))
            m = math.degrees(np.angle(np.sum(z * C[sel])))
            d = float(_hue_diff(np.array([m]), HUE_PROTOTYPES_DEG[j])[0])
            sign = 1.0 if ((m - HUE_PROTOTYPES_DEG[j] + 180.0) % 360.0 - 180.0) >= 0 else -1.0
            hues[j] = (HUE_PROTOTYPES_DEG[j] + sign * min(d, params.hue_adapt_deg)) % 360.0
    model = ColourModel(tuple(hues), colorblind)
    costs = class_costs(flat, model, params)
    cls = costs.argmin(axis=1)
    chroma = []
    for j in range(4):
        sel = (cls == j) & (costs[:, j] < 4.0)
        chroma.append(float(np.median(C[sel])) if sel.sum() >= 3 and not (j == 3 and colorblind) else 0.0)
    return ColourModel(tuple(hues), colorblind, tuple(chroma))


def read_faces(edge_lab: np.ndarray, model: ColourModel, params: LinkParams,
               exclude: frozenset[int] = frozenset()) -> list[FaceRead]:
    """The least-cost consistent face of every tile, flagged when not clearly the best. ``exclude``: numbers
    that cannot be these tiles (a set holds each number once, and those are read elsewhere)."""
    costs = class_costs(edge_lab, model, params)  # (T, 6, 4)
    allowed = ~np.isin(FACE_NUMBERS, list(exclude))
    out = []
    for i in range(len(costs)):
        c = costs[i]
        per_edge = c[np.arange(EDGE_COUNT)[None, :], FACE_PATTERNS]  # (336, 6)
        total = np.where(allowed, per_edge.sum(axis=1), np.inf)
        order = np.argsort(total)
        best, second = order[0], order[1]
        # every number excluded (a phantom beside a full set): no face is possible, so none may clear the margin
        margin = float(total[second] - total[best]) if np.isfinite(total[best]) else 0.0
        # the face must explain most edges well; one or two edges lost under glare cost every face alike, so
        # they neither decide nor spoil the choice (a tie between faces differing there is flagged by the margin)
        mean_cost = float(np.mean(np.sort(per_edge[best])[:params.edges_that_must_fit]))
        edge_cls = []
        for k in range(EDGE_COUNT):
            srt = np.sort(c[k])
            edge_cls.append(int(np.argmin(c[k])) if srt[1] - srt[0] > 1.0 and srt[0] < 4.0 else None)
        flagged = margin < params.flag_margin or mean_cost > params.max_mean_cost
        out.append(FaceRead(number=None if flagged else int(FACE_NUMBERS[best]),
                            rotation=None if flagged else int(FACE_ROTATIONS[best]),
                            edge_classes=tuple(edge_cls), margin=margin, mean_cost=mean_cost, flagged=flagged))
    return out
