"""Physical checks on pyramid hypotheses in table millimetres: contact and solidity.

A piece standing on a lying one has one base edge on the table (the hinge) and its open base resting on the
lying piece beneath it (IT I-1): its base must touch that piece, not float clear of it, or nothing holds it up
(``tilted_support_gap_mm``). Pieces resting on the table are solid plastic and cannot pass through each other
(``interpenetration_mm``). Silhouettes alone can be fitted by hypotheses that break either rule.
"""

from __future__ import annotations

import numpy as np

from geometry.pyramids import PyramidPose, base_mm, leaning_rest_tilt_rad

# Surface samples per edge of each face of the lying piece (the contact is at its ridge or apex, found to
# about base / (2 * n) mm).
SURFACE_SAMPLES_PER_EDGE = 10


def surface_points_mm(pose: PyramidPose, n: int = SURFACE_SAMPLES_PER_EDGE) -> np.ndarray:
    """Points on the four slanted faces of a piece (M, 3), barycentric grid of ``n`` steps per edge."""
    c, a = pose.corners_mm(), pose.apex_mm()
    i, j = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    keep = i + j <= n
    u, v = i[keep] / n, j[keep] / n
    pts = []
    for k in range(4):
        p0, p1 = c[k], c[(k + 1) % 4]
        pts.append(p0[None] + u[:, None] * (p1 - p0)[None] + v[:, None] * (a - p0)[None])
    return np.vstack(pts)


# Grid steps along each side of a tilted base when it is tested against the lying piece.
BASE_SAMPLES_PER_SIDE = 16


def _face_planes(pose: PyramidPose) -> tuple[np.ndarray, np.ndarray]:
    """Outward unit normals (5, 3) and offsets (5,) of a piece's faces (four slanted, one base): n . p <= d."""
    c, a = pose.corners_mm(), pose.apex_mm()
    inner = pose.vertices_mm().mean(axis=0)
    faces = [(c[k], c[(k + 1) % 4], a) for k in range(4)] + [(c[0], c[1], c[2])]
    normals, offsets = [], []
    for p0, p1, p2 in faces:
        n = np.cross(p1 - p0, p2 - p0)
        n /= np.linalg.norm(n)
        if n @ (inner - p0) > 0:
            n = -n
        normals.append(n)
        offsets.append(float(n @ p0))
    return np.array(normals), np.array(offsets)


def tilted_support_gap_mm(tilted: PyramidPose, lying: PyramidPose) -> float:
    """Separation (mm) between a tilted piece's base and the lying piece it should rest on.

    The base is taken as a plate spanning its square rim, the lying piece as the convex solid it is; the
    separation of a point from the solid is its largest signed distance beyond the face planes (exact next
    to a face, a lower bound near its edges, minus the depth inside), continuous as the pieces move. Positive:
    the base floats clear of the lying piece (nothing holds it up); negative: the lying piece reaches through
    it (into the hollow shell, or it would cut in); about 0: it rests on it.
    """
    h = base_mm(tilted.size) / 2
    t = np.linspace(-h, h, BASE_SAMPLES_PER_SIDE)
    u, v = np.meshgrid(t, t)
    plate = tilted.to_table(np.column_stack([u.ravel(), v.ravel(), np.zeros(u.size)]))
    normals, offsets = _face_planes(lying)
    separation = (plate @ normals.T - offsets[None]).max(axis=1)
    return float(separation.min())


def interpenetration_mm(a: PyramidPose, b: PyramidPose) -> float:
    """How deep (mm) either piece's surface reaches into the other's solid; 0 when they are apart or touch.

    Plastic cannot pass through plastic, so two pieces on the table (upright or lying) that overlap this
    much in 3-D are one wrong hypothesis, however well their silhouettes fit. (A piece standing on a lying one
    is left out: the lying piece may reach into its open base.)
    """
    depth = 0.0
    for p, q in ((a, b), (b, a)):
        normals, offsets = _face_planes(q)
        inside = (surface_points_mm(p) @ normals.T - offsets[None]).max(axis=1)
        depth = max(depth, float(-inside.min()))
    return depth


def wall_penetration_mm(tilted: PyramidPose, lying: PyramidPose) -> float:
    """How deep (mm) a tilted piece's walls (its four slanted faces, base rim included) reach into the lying
    piece it leans on; 0 or less when they stay clear of it.

    The lying piece may reach into the tilted piece's open base (``interpenetration_mm`` leaves such pairs
    out), but not through its walls: a piece resting on another touches it with its rim. A pair fitted with
    the smaller piece's walls cutting through the lying one (a lying piece read too small, the rest of its
    silhouette claimed by a piece 'standing' on top of it) is one wrong hypothesis, however well it fits.
    """
    normals, offsets = _face_planes(lying)
    inside = (surface_points_mm(tilted) @ normals.T - offsets[None]).max(axis=1)
    return float(-inside.min())


# Tilt range (deg) in which a piece leaning on a lying one stays put: below it, it stands nearly upright and
# rests on its base edge alone; beyond ~40 deg its centre of mass (1/3 up the axis) passes behind the hinge.
RESTING_TILT_RANGE_DEG = (5.0, 40.0)


def resting_tilt_rad(size: str, lying: PyramidPose, hinge_xy_mm, toward_rad: float,
                     surface_mm: np.ndarray | None = None) -> float | None:
    """Tilt at which a piece of ``size``, hinged on the table at ``hinge_xy_mm`` and leaning along plan
    direction ``toward_rad``, comes to rest on ``lying``; None when its base meets nothing there or the tilt
    could not hold it (``RESTING_TILT_RANGE_DEG``).

    The base is a plate swung down about its hinge edge onto the lying piece (``leaning_rest_tilt_rad``).
    ``surface_mm``: the lying piece's ``surface_points_mm``, when the caller tries many hinges on one lying piece.
    """
    pts = surface_points_mm(lying) if surface_mm is None else surface_mm
    alpha = leaning_rest_tilt_rad(base_mm(size), pts, hinge_xy_mm, toward_rad)
    if alpha is None:
        return None
    lo, hi = np.radians(RESTING_TILT_RANGE_DEG)
    return alpha if lo <= alpha <= hi else None
