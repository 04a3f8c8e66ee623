"""The plane of the tile tops, fitted to every cleanly read tile at once, and each tile's size in it.

Every tile of a set is the same rectangle (width w, length rho * w) lying in one plane, so the image of that
plane is fixed by the read tiles' quads together: a homography image -> plane that makes them all congruent
rectangles. It is found up to a similarity (which does not change sizes relative to w) as a projective part
(the horizon line l: x -> x / (l . x + 1)) and an affine part (aspect and skew), by least squares over all the
quads' side lengths and corner angles, then again without the tiles that do not fit; rho is fitted too (2 on
most sets, 1.6 on some). Where the read tiles are not one rectangle to a few per cent (a steep real photo whose
outlines take in side faces), there is no plane, and nothing is judged by it.

One quad's own homography extrapolates badly to a tile a few widths away (a corner off by a pixel on a 45 px
tile tilts it), which is why the fit uses them all, and why a tile is judged against the fit rather than
against one neighbour. A tile whose length in the plane falls short of the set's by more than
``SHORT_TILE_RATIO`` was outlined short: the end it lost can hold a pip row, and what is left may still read
as a standard pattern (a 6 read as a 4), so such a reading is not trusted.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from scipy.optimize import least_squares

# A half holds its outer pip row a quarter width from the tile's end (pips 0.12-0.17 of the width across): an
# outline that lost that row without cutting a pip (the reader flags a cut one) lies at least 0.25 + 0.04 widths
# inside the end, so the tile reads at most (2 - 0.29) / 2 = 0.855 of its length; a lost pip column (9 read as 6)
# leaves at most 0.71 of its width. Right reads measure 0.97-1.04 of the set's tile in the fitted plane (90 % of
# 1052 read tiles on seeds 9001 and 4711), none below 0.878; the wrong 4-6 read 4-4 measured 0.73.
SHORT_TILE_RATIO = 0.88
# A half read blank keeps its reading when short: every other pattern has a pip within half a width of the bar
# (the 1 at the middle, the rest on the row a quarter width from it), lost whole only with the end 0.5 + 0.085
# widths in: (2 - 0.585) / 2 = 0.71 of the length. Above this, a short blank half is still blank.
BLANK_SAFE_RATIO = 0.75
MIN_TILES_FOR_PLANE = 3  # 6 unknowns; each tile gives 4 lengths and 4 angles
# A tile fits the plane when its sides and corners are within this (relative length, corner cosine) of the
# set's rectangle, or within OUTLIER_FACTOR of the typical tile's misfit where that is worse (a blurred photo).
FIT_SCALE = 0.06
OUTLIER_FACTOR = 3.0
MIN_AGREEING_SHARE = 0.6  # of the read tiles that must be the one rectangle in the plane for it to stand
# The typical read tile's width or length may be off the set's rectangle in the fitted plane by this much at most
# (0.3-3 % on the renders; 8 % on a real photo seen at 35 degrees, whose outlines take in side faces).
MAX_TYPICAL_DEVIATION = 0.04
# The horizon term (per normalised image unit) is bounded, and the horizon must stay off the picture:
# l = tan(tilt) / focal, about 0.5 at 25 degrees and 1 at 40 degrees on a phone.
HORIZON_BOUND = 1.5
MIN_PLANE_DENOMINATOR = 0.2
# Weak priors (one standard deviation) keeping the fit sane when the tiles do not fix every unknown (a hand of
# parallel tiles leaves the affine aspect along them and rho trading off against each other).
PRIOR_RHO = (2.0, 0.25)
PRIOR_AFFINE = 0.3


@dataclass(frozen=True, slots=True)
class TilePlane:
    """image -> plane map (normalised image coordinates) and the set's tile in it (width, length over width)."""

    params: np.ndarray  # l1, l2, log a, b, log w, log rho
    origin_px: np.ndarray
    scale_px: float

    def to_plane(self, pts_px: np.ndarray) -> np.ndarray:
        return _to_plane(self.params, (np.asarray(pts_px, np.float64) - self.origin_px) / self.scale_px)

    @property
    def plane_from_image(self) -> np.ndarray:
        """The map as a 3 x 3 homography on pixel coordinates (for ``cv2.perspectiveTransform``)."""
        l1, l2, log_a, b = self.params[:4]
        normalise = np.array([[1 / self.scale_px, 0, -self.origin_px[0] / self.scale_px],
                              [0, 1 / self.scale_px, -self.origin_px[1] / self.scale_px], [0, 0, 1]])
        return np.array([[np.exp(log_a), b, 0], [0, 1, 0], [0, 0, 1]]) @ np.array(
            [[1, 0, 0], [0, 1, 0], [l1, l2, 1]]) @ normalise

    @property
    def width(self) -> float:
        return float(np.exp(self.params[4]))

    @property
    def aspect_ratio(self) -> float:
        return float(np.exp(self.params[5]))

    def size_ratios(self, quad_px: np.ndarray) -> tuple[float, float]:
        """A tile quad's width and length in the plane as shares of the set's tile (1.0, 1.0 for a true one)."""
        q = self.to_plane(quad_px)
        w = (np.linalg.norm(q[1] - q[0]) + np.linalg.norm(q[2] - q[3])) / 2
        length = (np.linalg.norm(q[3] - q[0]) + np.linalg.norm(q[2] - q[1])) / 2
        return float(w / self.width), float(length / (self.width * self.aspect_ratio))


    def shorter_half(self, quad_px: np.ndarray, middle_px: np.ndarray) -> int:
        """0 when half a of ``quad_px`` (from its end to ``middle_px``, the bar) is the shorter in the plane, else 1."""
        pts = self.to_plane(np.vstack([quad_px, middle_px]))
        q, c = pts[:4], pts[4]
        return int(np.linalg.norm((q[2] + q[3]) / 2 - c) < np.linalg.norm((q[0] + q[1]) / 2 - c))

    def set_tile_quad_px(self, quad_px: np.ndarray, middle_px: np.ndarray) -> np.ndarray:
        """The set's tile laid along ``quad_px`` (corner order as ``TileDetection``) and centred on
        ``middle_px`` (its centre bar's midpoint, the tile's middle), in pixels: where the tile lies, whatever
        the walks or the refit made of its ends."""
        H = self.plane_from_image
        pts = cv2.perspectiveTransform(np.vstack([quad_px, middle_px]).reshape(-1, 1, 2).astype(np.float64), H)
        q, c = pts[:4, 0], pts[4, 0]
        axis = (q[2] + q[3]) / 2 - (q[0] + q[1]) / 2
        axis /= max(float(np.linalg.norm(axis)), 1e-12)
        across = (q[1] - q[0]) + (q[2] - q[3])
        across -= (across @ axis) * axis
        across /= max(float(np.linalg.norm(across)), 1e-12)
        half_l, half_w = self.width * self.aspect_ratio / 2 * axis, self.width / 2 * across
        rect = np.array([c - half_l - half_w, c - half_l + half_w, c + half_l + half_w, c + half_l - half_w])
        return cv2.perspectiveTransform(rect.reshape(-1, 1, 2), np.linalg.inv(H)).reshape(-1, 2)


def _to_plane(p: np.ndarray, xy: np.ndarray) -> np.ndarray:
    l1, l2, log_a, b = p[:4]
    den = 1.0 + l1 * xy[..., 0] + l2 * xy[..., 1]
    x, y = xy[..., 0] / den, xy[..., 1] / den
    return np.stack([np.exp(log_a) * x + b * y, y], axis=-1)


def _residuals(p: np.ndarray, quads: np.ndarray) -> np.ndarray:
    q = _to_plane(p, quads)  # (n, 4, 2)
    w, rho = np.exp(p[4]), np.exp(p[5])
    across = [q[:, 1] - q[:, 0], q[:, 2] - q[:, 3]]
    along = [q[:, 3] - q[:, 0], q[:, 2] - q[:, 1]]
    res = [np.linalg.norm(v, axis=1) / w - 1.0 for v in across]
    res += [np.linalg.norm(v, axis=1) / (rho * w) - 1.0 for v in along]
    for u in across:
        for v in along:
            res.append(np.sum(u * v, axis=1) / np.maximum(np.linalg.norm(u, axis=1) * np.linalg.norm(v, axis=1),
                                                          1e-12))
    prior = [(rho - PRIOR_RHO[0]) / PRIOR_RHO[1] * FIT_SCALE, p[2] / PRIOR_AFFINE * FIT_SCALE,
             p[3] / PRIOR_AFFINE * FIT_SCALE]
    return np.concatenate([np.concatenate(res), prior])


def _tile_misfit(p: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """Each tile's worst residual (relative side length or corner cosine) under the map ``p``."""
    n = len(quads)
    return np.abs(_residuals(p, quads)[:-3].reshape(-1, n)).max(axis=0)


def _corners_in_front(p: np.ndarray) -> bool:
    """The horizon line stays off the picture (a camera tilted up to about 60 degrees)."""
    corners = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]])
    return bool(np.all(1.0 + corners @ p[:2] > MIN_PLANE_DENOMINATOR))


def fit_tile_plane(quads_px: list[np.ndarray], image_size_wh: tuple[int, int]) -> TilePlane | None:
    """The plane of the tile tops from the quads of tiles read cleanly (corner order as ``TileDetection``), or
    None when fewer than ``MIN_TILES_FOR_PLANE`` of them agree on one.

    Least squares over all of them, then again without those that do not fit (a tile outlined short, a quad on a
    seam); the plane stands only when most of the tiles are the one rectangle in it."""
    if len(quads_px) < MIN_TILES_FOR_PLANE:
        return None
    origin = np.asarray(image_size_wh, np.float64) / 2
    scale = float(max(image_size_wh))
    quads = (np.asarray(quads_px, np.float64) - origin) / scale
    widths = np.array([(np.linalg.norm(q[1] - q[0]) + np.linalg.norm(q[2] - q[3])) / 2 for q in quads])
    lengths = np.array([(np.linalg.norm(q[3] - q[0]) + np.linalg.norm(q[2] - q[1])) / 2 for q in quads])
    w0 = float(np.median(widths))
    keep = (widths > 0.7 * w0) & (widths < 1.4 * w0)  # one set, one size (a quad across two tiles is not one)
    if keep.sum() < MIN_TILES_FOR_PLANE:
        return None
    rho0 = float(np.clip(np.median(lengths[keep] / widths[keep]), 1.4, 2.5))
    p = np.array([0.0, 0.0, 0.0, 0.0, np.log(w0), np.log(rho0)])
    lo = [-HORIZON_BOUND, -HORIZON_BOUND, -1.0, -1.0, np.log(w0) - 1.0, np.log(1.3)]
    hi = [HORIZON_BOUND, HORIZON_BOUND, 1.0, 1.0, np.log(w0) + 1.0, np.log(2.6)]
    for _ in range(2):
        fit = least_squares(_residuals, p, args=(quads[keep],), bounds=(lo, hi), max_nfev=100)
        p = fit.x
        misfit = _tile_misfit(p, quads)
        keep = misfit <= max(OUTLIER_FACTOR * float(np.median(misfit)), FIT_SCALE)
        if keep.sum() < MIN_TILES_FOR_PLANE:
            return None
    if not (np.all(np.isfinite(p)) and _corners_in_front(p)) or keep.mean() < MIN_AGREEING_SHARE:
        return None
    plane = TilePlane(params=p, origin_px=origin, scale_px=scale)
    # the plane says how long one tile should be only where the tiles read are that one rectangle to a few per
    # cent: on a steep view their outlines take in the near side faces, and no size can be told from it
    typical = float(np.median([max(abs(r - 1.0) for r in plane.size_ratios(q)) for q in np.asarray(quads_px)[keep]]))
    return plane if typical <= MAX_TYPICAL_DEVIATION else None
