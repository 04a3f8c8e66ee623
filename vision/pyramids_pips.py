"""The moulded pips of a pyramid: which count (1, 2 or 3: the size, IT Score) its faces show.

A piece's silhouette can lose a face to the segmentation (a dark open base, a face over wood of its hue) and
then fits a smaller size just as well; its pips cannot. Each size has its own count, moulded in a row along
the foot of every side face (``geometry.pyramids.pip_sites_mm``). Through the known camera a hypothesis
predicts where its pips are on each face the camera sees; there the photo must show small dots (a
difference-of-Gaussians at the pip's scale, strongest of B, G, R, in units of the photo's median response),
and at the places where the other counts would put theirs, on the same face, it must not. The support of a
hypothesis is that contrast, averaged over its faces turned to the camera.
"""

from __future__ import annotations

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.pyramids import PIP_LAYOUT_MM, PyramidPose, pip_sites_mm
from geometry.pyramids import pips as pip_count

# A face is read only when turned to the camera by at least this cosine (normal against the line of sight):
# steeper, its pips are foreshortened into the face's edge.
MIN_FACE_COS = 0.35
COUNTS = (1, 2, 3)


class PipMap:
    """Dot response of the working photo at the scale of each size's pips, normalised by its median."""

    def __init__(self, frame_bgr: np.ndarray, mm_per_px: float):
        self._frame = frame_bgr.astype(np.float32)
        self._mm_per_px = float(mm_per_px)
        self._maps: dict[str, np.ndarray] = {}
        self.shape = frame_bgr.shape[:2]

    def response(self, size: str) -> np.ndarray:
        if size not in self._maps:
            # a dot of radius r is best matched by a DoG of inner sigma ~ r / sqrt(2)
            sigma = max(PIP_LAYOUT_MM[size][1] / self._mm_per_px / np.sqrt(2.0), 0.6)
            f = self._frame
            d = cv2.GaussianBlur(f, (0, 0), sigma) - cv2.GaussianBlur(f, (0, 0), 2.0 * sigma)
            mag = np.abs(d).max(axis=2)
            self._maps[size] = mag / (float(np.median(mag[::3, ::3])) or 1.0)
        return self._maps[size]

    def sample(self, size: str, points_px: np.ndarray) -> np.ndarray:
        pts = np.asarray(points_px, np.float32).reshape(1, -1, 2)
        h, w = self.shape
        pts[..., 0] = np.clip(pts[..., 0], 0, w - 1)
        pts[..., 1] = np.clip(pts[..., 1], 0, h - 1)
        return cv2.remap(self.response(size), pts[..., 0], pts[..., 1], cv2.INTER_LINEAR).ravel()


def face_view_cos(camera: CameraModel, pose: PyramidPose) -> np.ndarray:
    """Cosine (4,) between each side face's outward normal and the direction to the camera."""
    c = pose.corners_mm()
    apex = pose.apex_mm()
    centre = c.mean(axis=0)
    eye = np.asarray(camera.center_mm, float)
    out = np.empty(4)
    for i in range(4):
        a, b = c[i], c[(i + 1) % 4]
        n = np.cross(b - a, apex - a)
        if n @ (centre - a) > 0:
            n = -n
        mid = (a + b + apex) / 3.0
        to_eye = eye - mid
        out[i] = float(n @ to_eye / (np.linalg.norm(n) * np.linalg.norm(to_eye)))
    return out


def pip_contrast(pips: PipMap, camera: CameraModel, pose: PyramidPose) -> dict[int, float]:
    """For each count 1-3: dot response at that count's sites minus at the other counts' sites alone, on
    ``pose``'s faces turned to the camera (weighted by how squarely), in units of the median response."""
    cos = face_view_cos(camera, pose)
    faces = np.nonzero(cos >= MIN_FACE_COS)[0]
    if len(faces) == 0:
        return {n: 0.0 for n in COUNTS}
    sites = {n: pip_sites_mm(pose, n)[faces] for n in COUNTS}
    resp = {n: pips.sample(pose.size, camera.project_mm(sites[n].reshape(-1, 3))).reshape(len(faces), n) for n in COUNTS}
    return {n: float(v) for n, v in _contrast(resp, cos[faces]).items()}


def pip_contrast_moved(
    pips: PipMap, camera: CameraModel, pose: PyramidPose, moves: np.ndarray
) -> np.ndarray:
    """``pip_contrast`` of ``pose``'s own count, for each of the small rigid moves (K, 3) of the piece in the
    table plane: (dx_mm, dy_mm, turn_rad about its axis). NaN for all when no face is turned to the camera."""
    cos = face_view_cos(camera, pose)
    faces = np.nonzero(cos >= MIN_FACE_COS)[0]
    moves = np.asarray(moves, float).reshape(-1, 3)
    if len(faces) == 0:
        return np.full(len(moves), np.nan)
    c, s = np.cos(moves[:, 2]), np.sin(moves[:, 2])
    rot = np.zeros((len(moves), 3, 3))
    rot[:, 0, 0], rot[:, 0, 1], rot[:, 1, 0], rot[:, 1, 1], rot[:, 2, 2] = c, -s, s, c, 1.0
    shift = pose.base_center_mm + np.column_stack([moves[:, :2], np.zeros(len(moves))])
    resp = {}
    for n in COUNTS:
        local = pip_sites_mm(pose, n)[faces].reshape(-1, 3) - pose.base_center_mm
        pts = np.einsum("kij,pj->kpi", rot, local) + shift[:, None, :]
        resp[n] = pips.sample(pose.size, camera.project_mm(pts.reshape(-1, 3))).reshape(len(moves), len(faces), n)
    return _contrast(resp, cos[faces])[pip_count(pose.size)]


def _contrast(resp: dict[int, np.ndarray], w: np.ndarray) -> dict[int, np.ndarray]:
    """Per count: the faces' (..., F) weighted mean of own sites' response minus the other counts' sites'."""
    across = {n: np.round([(k - (n - 1) / 2.0) for k in range(n)], 3) for n in COUNTS}
    out = {}
    for n in COUNTS:
        own = resp[n].mean(axis=-1)
        # the other counts' sites that are not this count's own (in units of the spacing along the face)
        others = [resp[m][..., k] for m in COUNTS if m != n for k in range(m) if across[m][k] not in across[n]]
        rest = np.mean(others, axis=0)
        out[n] = np.sum(w * (own - rest), axis=-1) / np.sum(w)
    return out


def count_pattern(n: int) -> np.ndarray:
    """The contrasts (counts 1-3) a face carrying exactly ``n`` equal pips reads, per unit of pip response: the
    others' sites share positions with the true row's, so a row of three also lifts count 1 (0.5, -1, 1)."""
    across = {m: np.round([(k - (m - 1) / 2.0) for k in range(m)], 3) for m in COUNTS}
    resp = {m: np.array([[1.0 if across[m][k] in across[n] else 0.0 for k in range(m)]]) for m in COUNTS}
    out = _contrast(resp, np.ones(1))
    return np.array([float(out[m]) for m in COUNTS])


def named_count(contrast: dict[int, float]) -> tuple[int, float, float]:
    """The count whose pattern (``count_pattern``) the read contrasts match best: (count, its amplitude in median
    dot responses (least squares), the cosine between read and pattern). Which count the pips name, and how
    clearly: a row of dots at the predicted sites reads its count's whole pattern, a stray dot or an edge does not."""
    v = np.array([contrast[m] for m in COUNTS], float)
    norm = float(np.linalg.norm(v))
    best = (COUNTS[0], 0.0, 0.0)
    for n in COUNTS:
        e = count_pattern(n)
        cos = float(v @ e) / (norm * float(np.linalg.norm(e))) if norm > 0 else 0.0
        if cos > best[2]:
            best = (n, float(v @ e) / float(e @ e), cos)
    return best
