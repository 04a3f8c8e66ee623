"""The line the referee scribes in the sand for the drop (MB 9(f), RULES.md MB P3), found in the ring plane.

A groove a millimetre or two wide tilts the sand's normal one way on one side and the other way on the other, so
under any lamp it shades as an odd profile across the line (dark then bright) that runs straight for a metre or
more, while sand grains shade at random. The photo is rectified onto the sand (z = 0, millimetre pixels), and a
bank of elongated odd filters (derivative across, long Gaussian along) at 10° steps picks out straight shading
edges; balls are masked. A Hough vote over the strongest responses gives the line, which is then refitted by
total least squares to the response ridge along it. Its offset uncertainty is the groove's scatter about the
fit (a hand-drawn groove wanders by millimetres, so 'the line' is defined no better) plus the fit's own error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.marbles import RING_RADIUS_MM
from vision.ortho import OrthoGrid, image_outline_mm, in_view, ortho_maps
from vision.types import VisionError

MM_PER_PX = 1.0  # the groove is ~1.6 mm wide: coarser sampling averages its two shading lobes away
ACROSS_SIGMA_MM = 1.2
ALONG_SIGMA_MM = 10.0
N_ORIENTATIONS = 18
MIN_LENGTH_MM = 300.0  # a drop line runs across the ring; shorter straight marks are scuffs or a ball's edge
SAND_QUANTILE = 0.995  # a pixel votes when its ridge strength beats this share of the sand's own responses
MIN_COVER = 0.5  # ... and a line needs votes along at least this share of its length
STRETCH_MM = 50.0  # the groove's wander decorrelates over about this length (sets the fit's independent points)


class ScribedLineNotFoundError(VisionError):
    """No straight groove long enough was found on the sand."""


@dataclass(frozen=True, slots=True)
class ScribedLine:
    """The drop line in the ring frame: points ``p0_mm``..``p1_mm`` where it was seen, unit ``normal``,
    ``offset_mm`` (normal . p on the line), and the 1-sigma uncertainty of the offset."""

    p0_mm: tuple[float, float]
    p1_mm: tuple[float, float]
    normal: tuple[float, float]
    offset_mm: float
    offset_sigma_mm: float
    length_mm: float
    residual_mm: float
    snr: float

    def distance_mm(self, xy_mm) -> float:
        """Perpendicular plan distance from a point (a tolley's centre) to the line (MB P3)."""
        return abs(float(np.dot(self.normal, np.asarray(xy_mm, float))) - self.offset_mm)

    def to_dict(self) -> dict:
        return {"p0_mm": [round(v, 2) for v in self.p0_mm], "p1_mm": [round(v, 2) for v in self.p1_mm],
                "offset_sigma_mm": round(self.offset_sigma_mm, 3), "length_mm": round(self.length_mm, 1),
                "residual_mm": round(self.residual_mm, 2), "snr": round(self.snr, 1)}


def _kernel(theta: float) -> np.ndarray:
    half = int(math.ceil(2.5 * ALONG_SIGMA_MM / MM_PER_PX))
    y, x = np.mgrid[-half:half + 1, -half:half + 1].astype(np.float32) * MM_PER_PX
    u = x * math.cos(theta) + y * math.sin(theta)
    v = -x * math.sin(theta) + y * math.cos(theta)
    k = -v * np.exp(-v**2 / (2 * ACROSS_SIGMA_MM**2) - u**2 / (2 * ALONG_SIGMA_MM**2))
    return (k / np.abs(k).sum()).astype(np.float32)


def _sand_view(frame_bgr: np.ndarray, camera: CameraModel, balls_mm) -> tuple[OrthoGrid, np.ndarray, np.ndarray]:
    """Grey sand rectified to millimetre pixels, its local mean removed, and where it is usable."""
    w, h = camera.image_size_wh_px
    fp = image_outline_mm(camera, 0.0)
    lo = np.maximum(np.nanmin(fp, 0), -RING_RADIUS_MM)
    hi = np.minimum(np.nanmax(fp, 0), RING_RADIUS_MM)
    if np.any(hi - lo < MIN_LENGTH_MM / 2):
        raise ScribedLineNotFoundError("the photo shows too little of the ring's sand to find the drop line")
    grid = OrthoGrid.covering(lo[0], hi[0], lo[1], hi[1], MM_PER_PX, 0.0)
    mx, my = ortho_maps(camera, grid, step_px=16)
    grey = cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2GRAY).astype(np.float32)
    g = cv2.remap(grey, mx, my, cv2.INTER_LINEAR)
    valid = ((mx >= 1) & (my >= 1) & (mx <= w - 2) & (my <= h - 2)).astype(np.float32)
    valid *= in_view(camera, grid, fp)  # sand beyond the photo that the lens folds back into it is not seen
    cols, rows = np.meshgrid(np.arange(grid.width_px), np.arange(grid.height_px))
    xy = grid.table_from_ortho(np.column_stack([cols.ravel(), rows.ravel()]).astype(np.float64))
    valid *= (np.hypot(xy[:, 0], xy[:, 1]) < RING_RADIUS_MM - 20.0).reshape(valid.shape)
    for c, r in balls_mm:  # a ball and its shadow shade like anything but sand
        cr = grid.ortho_from_table(np.asarray([c], float))[0]
        cv2.circle(valid, (int(round(cr[0])), int(round(cr[1]))), int(math.ceil((r * 1.8 + 3) / MM_PER_PX)), 0, -1)
    sigma = 6.0 / MM_PER_PX
    mean = cv2.GaussianBlur(g * valid, (0, 0), sigma) / np.maximum(cv2.GaussianBlur(valid, (0, 0), sigma), 1e-3)
    valid = cv2.erode(valid, np.ones((2 * int(sigma) + 1,) * 2, np.uint8))
    return grid, (g - mean) * valid, valid > 0


def find_scribed_line(frame_bgr: np.ndarray, camera: CameraModel, balls_mm=()) -> ScribedLine:
    """The drop line; ``balls_mm`` is [(centre_mm, radius_mm)] of the balls to mask. Raises
    ``ScribedLineNotFoundError`` when no straight groove of ``MIN_LENGTH_MM`` stands out of the sand."""
    grid, hp, valid = _sand_view(frame_bgr, camera, balls_mm)
    best = np.zeros_like(hp)
    for i in range(N_ORIENTATIONS):
        np.maximum(best, np.abs(cv2.filter2D(hp, -1, _kernel(math.pi * i / N_ORIENTATIONS))), out=best)
    vals = best[valid]
    if vals.size < MIN_LENGTH_MM / MM_PER_PX * 10:
        raise ScribedLineNotFoundError("too little clear sand in view to find the drop line")
    noise = float(np.median(vals)) + 1e-6
    z = np.where(valid, best / noise, 0.0)
    strong = (z > float(np.quantile(z[valid], SAND_QUANTILE))).astype(np.uint8)
    min_votes = int(MIN_LENGTH_MM / MM_PER_PX * MIN_COVER)
    lines = cv2.HoughLines(strong, 1, math.pi / 720, min_votes)
    if lines is None:
        raise ScribedLineNotFoundError(f"no straight groove of {MIN_LENGTH_MM:.0f} mm or more stands out of the "
                                       "sand (scribe the drop line deeper, or light it from the side)")
    rho, theta = (float(v) for v in lines[0][0])
    # Refit to the ridge: the strong pixels within a few mm of the Hough line, weighted by their strength.
    r_idx, c_idx = np.nonzero(strong)
    n_px = np.array([math.cos(theta), math.sin(theta)])
    near = np.abs(c_idx * n_px[0] + r_idx * n_px[1] - rho) < 4.0 / MM_PER_PX
    pts = grid.table_from_ortho(np.column_stack([c_idx[near], r_idx[near]]).astype(np.float64))
    wts = z[r_idx[near], c_idx[near]]
    for _ in range(3):
        mu = (wts[:, None] * pts).sum(0) / wts.sum()
        d = pts - mu
        cov = (wts[:, None, None] * d[:, :, None] * d[:, None, :]).sum(0) / wts.sum()
        evals, evecs = np.linalg.eigh(cov)
        normal = evecs[:, 0]
        res = d @ normal
        keep = np.abs(res) < max(3.0 * math.sqrt(max(evals[0], 1e-6)), 1.5)
        pts, wts = pts[keep], wts[keep]
    along = (pts - mu) @ np.array([-normal[1], normal[0]])
    length = float(along.max() - along.min())
    if length < MIN_LENGTH_MM:
        raise ScribedLineNotFoundError(f"the straightest groove found runs only {length:.0f} mm "
                                       f"(a drop line needs {MIN_LENGTH_MM:.0f} mm)")
    resid = float(math.sqrt(max(evals[0], 0.0)))
    # The fit's own error, and the groove's wander about it: a hand-drawn line is no straighter than that, so
    # a distance 'to the line' is not defined more finely (the umpire's tape would sit somewhere in it).
    sigma = math.hypot(resid / math.sqrt(max(1.0, length / STRETCH_MM)), resid, 0.25 * MM_PER_PX)
    tangent = np.array([-normal[1], normal[0]])
    p0, p1 = mu + along.min() * tangent, mu + along.max() * tangent
    return ScribedLine(p0_mm=(float(p0[0]), float(p0[1])), p1_mm=(float(p1[0]), float(p1[1])),
                       normal=(float(normal[0]), float(normal[1])), offset_mm=float(normal @ mu),
                       offset_sigma_mm=sigma, length_mm=length, residual_mm=resid,
                       snr=float(np.median(z[r_idx[near], c_idx[near]])))
