"""Pose hypotheses for pyramids, scored by how well their projected silhouettes cover a foreground blob.

A pyramid is convex, so its silhouette is the convex hull of its five projected vertices. Each hypothesis
(upright at (x, y, yaw); lying on a face; standing tilted with its base on a lying piece) is a set of
``PyramidPose`` in table mm; its score is the IoU between the union of the hulls and the blob polygon, both
exact polygons in pixels, so the objective is continuous and Nelder-Mead can refine it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
from scipy.optimize import minimize
from shapely.geometry import Polygon
from shapely.ops import unary_union

from calibration.camera import CameraModel
from geometry.pyramids import (
    SIZES,
    PyramidPose,
    base_mm,
    height_mm,
    lying_pose,
    tilted_pose,
    upright_pose,
)

# Tilt range of a piece standing on a lying one (deg): below it the piece is upright (IT P1 uses 5 deg); above
# ~40 deg its centre of mass passes behind the hinge and it tips back.
MIN_STANDING_TILT_DEG = 5.0
MAX_STANDING_TILT_DEG = 40.0


@dataclass(frozen=True, slots=True)
class PieceHypothesis:
    """One piece of a hypothesis: its kind ("upright", "lying", "tilted") and continuous parameters."""

    kind: str
    size: str
    params: tuple[float, ...]

    def pose(self) -> PyramidPose:
        return make_pose(self.kind, self.size, self.params)


def make_pose(kind: str, size: str, params) -> PyramidPose:
    if kind == "upright":
        x, y, yaw = params
        return upright_pose(size, (x, y), yaw)
    if kind == "lying":
        x, y, yaw = params
        return lying_pose(size, (x, y), yaw)
    hx, hy, yaw, tilt = params
    tilt = float(np.clip(tilt, math.radians(MIN_STANDING_TILT_DEG), math.radians(MAX_STANDING_TILT_DEG)))
    return tilted_pose(size, (hx, hy), yaw, tilt)


def hull_px(camera: CameraModel, pose: PyramidPose) -> np.ndarray:
    q = camera.project_mm(pose.vertices_mm()).astype(np.float32)
    return cv2.convexHull(q).reshape(-1, 2).astype(np.float64)


def _polygon(points: np.ndarray) -> Polygon:
    poly = Polygon(points)
    return poly if poly.is_valid else poly.buffer(0)


def shadow_hull_px(camera: CameraModel, pose: PyramidPose, shadow_offset: np.ndarray) -> np.ndarray:
    """Silhouette of the piece's cast shadow on the table: each vertex slid down the light direction to z = 0.

    ``shadow_offset`` is the plan displacement (mm) of a point's shadow per mm of its height.
    """
    v = pose.vertices_mm()
    flat = np.column_stack([v[:, :2] + v[:, 2:3] * shadow_offset[None], np.zeros(len(v))])
    q = camera.project_mm(flat).astype(np.float32)
    return cv2.convexHull(q).reshape(-1, 2).astype(np.float64)


class BlobFitter:
    """Scores pose hypotheses against one blob polygon (pixels).

    With a ``shadow_offset`` the hypothesis also covers each piece's cast shadow: the blob is then the
    foreground with shade kept, since a translucent piece's shadow is tinted like the piece.

    ``uncertain`` (pixels disjoint from the blob that may be plastic or table: grey shade, faint tint) is
    never a penalty: a piece whose shaded face the segmentation could not claim is not pushed off it. Covered,
    it counts ``uncertain_weight`` of a blob pixel (a fuzzy IoU with target ``uncertain_weight`` there and no
    penalty for leaving it uncovered); 0 makes it neutral, so a cast shadow does not pull the fit either.
    """

    def __init__(self, camera: CameraModel, blob: Polygon, shadow_offset: np.ndarray | None = None,
                 uncertain=None, uncertain_weight: float = 0.0, edges=None, edge_weight: float = 0.0):
        self.camera = camera
        self.edges = edges if edge_weight > 0 else None
        self.edge_weight = float(edge_weight)
        self.blob = blob
        self.blob_area = blob.area
        self.shadow_offset = None if shadow_offset is None else np.asarray(shadow_offset, float)
        self.uncertain = uncertain if uncertain is not None and not uncertain.is_empty else None
        self.uncertain_weight = float(uncertain_weight)

    def union(self, pieces: list[PieceHypothesis], with_shadow: bool = True, hulls=None):
        polys = []
        shadows = with_shadow and self.shadow_offset is not None
        for k, p in enumerate(pieces):
            # the pose only when a hull or a shadow must be made from it (the fit's hot path passes hulls)
            pose = p.pose() if hulls is None or shadows else None
            polys.append(_polygon(hull_px(self.camera, pose) if hulls is None else hulls[k]))
            if shadows:
                polys.append(_polygon(shadow_hull_px(self.camera, pose, self.shadow_offset)))
        return unary_union(polys)

    def score(self, pieces: list[PieceHypothesis]) -> float:
        """What the fit maximises: the silhouette IoU, blended with the outline's edge support when an
        ``EdgeMap`` is given (``(IoU + w * support) / (1 + w)``: 1 for a perfect fit either way)."""
        if self.edges is None:
            return self.iou(pieces)
        try:
            hulls = [hull_px(self.camera, p.pose()) for p in pieces]
        except Exception:  # noqa: BLE001 - degenerate pose while searching: no overlap, no support
            return 0.0
        iou = self.iou(pieces, hulls)
        return (iou + self.edge_weight * self.edges.support(hulls)) / (1.0 + self.edge_weight)

    def iou(self, pieces: list[PieceHypothesis], hulls=None) -> float:
        try:
            shape = self.union(pieces, hulls=hulls)
        except Exception:  # noqa: BLE001 - degenerate hull while searching: scored as no overlap
            return 0.0
        inter = shape.intersection(self.blob).area
        area = shape.area
        if self.uncertain is not None:
            unsure = shape.intersection(self.uncertain).area
            area -= (1.0 - self.uncertain_weight) * unsure
            inter += self.uncertain_weight * unsure
        uni = area + self.blob_area - inter
        return inter / uni if uni > 0 else 0.0

    def refine(self, pieces: list[PieceHypothesis], max_evals: int = 240, *, score=None, step_frac: float = 0.25,
               step_yaw_deg: float = 12.0) -> tuple[list[PieceHypothesis], float]:
        """Nelder-Mead over all continuous parameters of the pieces (sizes and kinds fixed), maximising ``score``
        (``self.score`` unless given); the first simplex steps ``step_frac`` of a base and ``step_yaw_deg``."""
        score = self.score if score is None else score
        lens = [len(p.params) for p in pieces]
        x0 = np.concatenate([np.asarray(p.params, float) for p in pieces])

        def unpack(x):
            out, k = [], 0
            for p, n in zip(pieces, lens):
                out.append(PieceHypothesis(p.kind, p.size, tuple(float(v) for v in x[k : k + n])))
                k += n
            return out

        steps = []
        for p in pieces:
            b = base_mm(p.size)
            steps += ([step_frac * b, step_frac * b, math.radians(step_yaw_deg)]
                      + ([math.radians(8.0)] if p.kind == "tilted" else []))
        simplex = np.vstack([x0] + [x0 + np.eye(len(x0))[i] * s for i, s in enumerate(steps)])
        res = minimize(
            lambda x: 1.0 - score(unpack(x)),
            x0,
            method="Nelder-Mead",
            options={"maxfev": max_evals, "initial_simplex": simplex, "xatol": 0.05, "fatol": 1e-4},
        )
        best = unpack(res.x)
        return best, 1.0 - float(res.fun)


def open_base_score(fitter: BlobFitter, hyp: PieceHypothesis, shade=None, others=(), _others_px=None,
                    shade_neutral: bool = False) -> float:
    """A lying piece's fit with the table seen through its open base forgiven, held to its base rim's edges.

    A ray through the projected base square crosses one wall only (the one the piece lies on), so the photo
    there shows the table, barely tinted: a notch the hull model counts against the true size, which makes a
    smaller piece along the same axis fit better. Here the part of that square the blob leaves uncovered is
    no penalty, except over grey shade (an upright piece's face turned from the light dims the table alike).
    Forgiving it alone lets a longer reading hang its base over bare table, so the outline's edge support is
    taken over the hull *and* the square's four sides: the rim is a step in the photo all round (the walls'
    cut edge against the table), where a wrong size's square crosses the plain faces or the bare table.
    Needs the fitter's ``EdgeMap``.

    ``others`` (fixed pieces of the same hypothesis, e.g. one standing on ``hyp``) cover the blob with their hulls
    as in ``BlobFitter.score``; outline samples inside another piece's hull are left out (``EdgeMap.support``).
    ``_others_px``: their image hulls and polygons (``_fixed_hulls``), when a search scores many poses beside them.
    ``shade_neutral``: the grey shade the shape covers is neither plastic nor table (no reward, no penalty), as
    ``BlobFitter``'s uncertain pixels at weight 0: a thin dark wall or a face turned from the light is cut as
    shade just as a cast shadow is, so the photo cannot say whether a longer reading's walls reach over it.
    """
    pose = hyp.pose()
    hull_pts = hull_px(fitter.camera, pose)
    rim_pts = fitter.camera.project_mm(pose.corners_mm())
    free = _polygon(rim_pts).convex_hull.difference(fitter.blob)
    if shade is not None:
        free = free.difference(shade)
    own = _polygon(hull_pts)
    shape = own.difference(free)
    other_hulls, other_polys = _others_px if _others_px is not None else _fixed_hulls(fitter, others)
    if other_polys:
        shape = unary_union([shape] + other_polys)
    inter = shape.intersection(fitter.blob).area
    area = shape.area
    if shade_neutral and shade is not None:
        area -= shape.intersection(shade).area
    union = area + fitter.blob_area - inter
    iou = inter / union if union > 0 else 0.0
    skip = other_polys or None
    s_hull, n_hull = fitter.edges.outline_support(hull_pts, skip)
    s_rim, n_rim = fitter.edges.outline_support(rim_pts, skip)
    total, count = s_hull + s_rim, n_hull + n_rim
    for k, h in enumerate(other_hulls):
        s, n = fitter.edges.outline_support(h, [own] + [q for j, q in enumerate(other_polys) if j != k])
        total, count = total + s, count + n
    support = total / max(count, 1)
    return (iou + fitter.edge_weight * support) / (1.0 + fitter.edge_weight)


def _fixed_hulls(fitter: BlobFitter, others) -> tuple[list[np.ndarray], list]:
    """Image hulls (px) of pieces held fixed, and their polygons."""
    hulls = [hull_px(fitter.camera, o.pose()) for o in others]
    return hulls, [_polygon(h) for h in hulls]


def refine_open_base(fitter: BlobFitter, hyp: PieceHypothesis, shade=None,
                     max_evals: int = 120, others=()) -> tuple[PieceHypothesis, float]:
    """``hyp`` (lying) moved to the best ``open_base_score`` nearby (``BlobFitter.refine``, a tighter simplex);
    ``others`` stay where they are (their hulls are projected once, not at every step)."""
    try:
        fixed = _fixed_hulls(fitter, others)
    except Exception:  # noqa: BLE001 - a degenerate partner: each step scores it, and fails, as before
        fixed = None

    def score(pieces: list[PieceHypothesis]) -> float:
        try:
            return open_base_score(fitter, pieces[0], shade, others, fixed)
        except Exception:  # noqa: BLE001 - degenerate polygon while searching: scored as no fit
            return 0.0

    (best,), value = fitter.refine([hyp], max_evals, score=score, step_frac=0.15, step_yaw_deg=6.0)
    return best, value


def plan_points_mm(camera: CameraModel, contour_px: np.ndarray, z_mm: float = 0.0) -> np.ndarray:
    return camera.image_to_table_mm(contour_px.reshape(-1, 2).astype(np.float64), z_mm)


def single_seeds(camera: CameraModel, contour_px: np.ndarray) -> list[PieceHypothesis]:
    """Starting hypotheses for one piece explaining a blob: each size upright and lying."""
    seeds = []
    for size in SIZES:
        h = height_mm(size)
        plan = plan_points_mm(camera, contour_px, h / 4)
        c = plan.mean(axis=0)
        for yaw in np.radians([0.0, 30.0, 60.0]):
            seeds.append(PieceHypothesis("upright", size, (c[0], c[1], float(yaw))))
        plan0 = plan_points_mm(camera, contour_px, 0.0)
        c0 = plan0.mean(axis=0)
        cov = np.cov((plan0 - c0).T)
        _, v = np.linalg.eigh(cov)
        major = v[:, 1]
        ang = math.atan2(major[1], major[0])
        for sgn in (0.0, math.pi):
            # lying_pose's apex points along yaw - 90 deg; put it along the blob's long axis
            seeds.append(PieceHypothesis("lying", size, (c0[0], c0[1], ang + sgn + math.pi / 2)))
    return seeds


def fit_single(fitter: BlobFitter, contour_px: np.ndarray, coarse_keep: int = 5) -> list[tuple[float, list]]:
    """Best single-piece hypotheses, refined, best first: [(iou, [PieceHypothesis])]."""
    seeds = single_seeds(fitter.camera, contour_px)
    scored = sorted(((fitter.score([s]), s) for s in seeds), key=lambda t: -t[0])
    # keep the best few overall, and the best of every (kind, size) so the alternatives get a fair refine
    keep, seen = [], set()
    for iou, s in scored:
        if (s.kind, s.size) not in seen or len(keep) < coarse_keep:
            keep.append(s)
            seen.add((s.kind, s.size))
    out = []
    for s in keep:
        best, iou = fitter.refine([s])
        out.append((iou, best))
    out.sort(key=lambda t: -t[0])
    return out
