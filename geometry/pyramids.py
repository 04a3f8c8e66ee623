"""Looney/Icehouse pyramids in table millimetres: sizes and the 3-D shape of each pose (RULES.md 5.1).

A pyramid's local frame has its open square base in z = 0, centred on the origin, and the apex on +z. A pose
is a rotation (local -> table) and the table point where the local origin lands. Pure numpy: no pixels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from geometry.types import GeometryError

# Looney Labs standard sizes (RULES.md 5.1, [X9]): base side (mm), height (mm), pips.
PYRAMID_SIZES: dict[str, tuple[float, float, int]] = {
    "small": (14.3, 25.4, 1),
    "medium": (19.8, 34.9, 2),
    "large": (25.4, 44.5, 3),
}
SIZES: tuple[str, ...] = ("small", "medium", "large")
# Moulded pips on each side face, per size: distance up the face from its base edge to the pips' centres, pip
# radius, spacing between neighbouring pips (mm; by eye on photos of Looney pyramids). A face carries as many
# pips as its size's count, in a row parallel to the base edge and centred on it.
PIP_LAYOUT_MM: dict[str, tuple[float, float, float]] = {
    "small": (3.2, 0.75, 2.3),
    "medium": (3.9, 0.85, 2.7),
    "large": (4.6, 1.0, 3.1),
}
POSES: tuple[str, ...] = ("upright", "lying", "standing_on_lying", "nested")
# IT P1 (INTERP): an upright piece's base-to-apex axis is within this of vertical on a flat support.
UPRIGHT_MAX_TILT_DEG = 5.0
# Moulded shell thickness (mm, by eye on photos); it only sets how high a stacked piece rides.
WALL_MM = 1.2
# A stacked piece's rim rests this far above where its inner wall meets the lower piece (mm).
STACK_CLEARANCE_MM = 0.3


def base_mm(size: str) -> float:
    """Base side of a size (mm).

    >>> base_mm("large")
    25.4
    """
    return _size(size)[0]


def height_mm(size: str) -> float:
    """Apex height above the base of a size (mm).

    >>> height_mm("small")
    25.4
    """
    return _size(size)[1]


def pips(size: str) -> int:
    """Pips of a size: 1, 2 or 3.

    >>> pips("medium")
    2
    """
    return _size(size)[2]


def _size(size: str) -> tuple[float, float, int]:
    try:
        return PYRAMID_SIZES[size]
    except KeyError:
        raise GeometryError(f"pyramid size must be one of {SIZES}, got {size!r}") from None


def rot_z(angle_rad: float) -> np.ndarray:
    c, s = math.cos(angle_rad), math.sin(angle_rad)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rot_x(angle_rad: float) -> np.ndarray:
    c, s = math.cos(angle_rad), math.sin(angle_rad)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class PyramidPose:
    """A pyramid of ``size`` placed by ``rotation`` (local -> table) and ``base_center_mm`` (3,)."""

    size: str
    rotation: np.ndarray
    base_center_mm: np.ndarray

    def __post_init__(self) -> None:
        _size(self.size)
        rotation = np.asarray(self.rotation, float).reshape(3, 3)
        center = np.asarray(self.base_center_mm, float).reshape(3)
        if not (np.isfinite(rotation).all() and np.isfinite(center).all()):
            raise GeometryError(f"pyramid pose must be finite, got {rotation!r}, {center!r}")
        object.__setattr__(self, "rotation", rotation)
        object.__setattr__(self, "base_center_mm", center)

    def to_table(self, local_mm: np.ndarray) -> np.ndarray:
        return np.asarray(local_mm, float) @ self.rotation.T + self.base_center_mm

    def corners_mm(self) -> np.ndarray:
        """Base corners (4, 3), counter-clockwise seen from the apex."""
        h = base_mm(self.size) / 2
        return self.to_table(np.array([[-h, -h, 0.0], [h, -h, 0.0], [h, h, 0.0], [-h, h, 0.0]]))

    def apex_mm(self) -> np.ndarray:
        return self.to_table(np.array([0.0, 0.0, height_mm(self.size)]))

    def vertices_mm(self) -> np.ndarray:
        """Base corners then apex (5, 3): the convex hull of the piece, so its silhouette's too."""
        return np.vstack([self.corners_mm(), self.apex_mm()[None]])

    def axis_tilt_deg(self) -> float:
        return math.degrees(math.acos(float(np.clip(self.rotation[2, 2], -1.0, 1.0))))

    def plan_footprint_mm(self) -> np.ndarray:
        """Plan (x, y) of the vertices (5, 2)."""
        return self.vertices_mm()[:, :2]


def upright_pose(size: str, xy_mm, yaw_rad: float) -> PyramidPose:
    """Upright on the table: base in z = 0 centred at ``xy_mm``.

    >>> upright_pose("medium", (10.0, 0.0), 0.0).apex_mm().round(1).tolist()
    [10.0, 0.0, 34.9]
    """
    return PyramidPose(size=size, rotation=rot_z(yaw_rad), base_center_mm=(xy_mm[0], xy_mm[1], 0.0))


def lying_rotation(size: str, yaw_rad: float) -> np.ndarray:
    """Rotation of a piece lying on its local -y face, the apex pointing along plan direction yaw - 90 deg."""
    b, h, _ = _size(size)
    # the -y face's outward normal (0, -2h, b) is turned straight down about the local x axis
    beta = math.pi - math.atan2(2 * h, b)
    return rot_z(yaw_rad) @ rot_x(beta)


def lying_pose(size: str, xy_mm, yaw_rad: float) -> PyramidPose:
    """Lying on a face; ``xy_mm`` is the plan centroid of that face (which lies in z = 0).

    >>> p = lying_pose("small", (0.0, 0.0), 0.0)
    >>> round(float(p.vertices_mm()[:, 2].min()), 6), round(p.axis_tilt_deg(), 1)
    (0.0, 105.7)
    """
    R = lying_rotation(size, yaw_rad)
    tmp = PyramidPose(size=size, rotation=R, base_center_mm=(0.0, 0.0, 0.0))
    c, a = tmp.corners_mm(), tmp.apex_mm()
    face = np.stack([c[0], c[1], a])
    shift = np.array([xy_mm[0], xy_mm[1], 0.0]) - np.array([*face[:, :2].mean(axis=0), face[:, 2].min()])
    return PyramidPose(size=size, rotation=R, base_center_mm=shift)


def lying_centroid_mm(pose: PyramidPose) -> np.ndarray:
    """Plan centroid of the face a lying piece rests on (its lowest face)."""
    c, a = pose.corners_mm(), pose.apex_mm()
    faces = [np.stack([c[i], c[(i + 1) % 4], a]) for i in range(4)]
    low = min(faces, key=lambda f: float(f[:, 2].sum()))
    return low[:, :2].mean(axis=0)


def tilted_pose(size: str, hinge_xy_mm, yaw_rad: float, tilt_rad: float) -> PyramidPose:
    """Standing with one base edge (the hinge, centred at ``hinge_xy_mm``) on the table, the base raised by
    ``tilt_rad`` about it towards plan direction ``yaw + 90 deg`` (the piece leans onto what lies there).

    >>> p = tilted_pose("large", (0.0, 0.0), 0.0, math.radians(20.0))
    >>> round(p.axis_tilt_deg(), 1), round(float(p.corners_mm()[:, 2].min()), 6)
    (20.0, 0.0)
    """
    b = base_mm(size)
    R = rot_z(yaw_rad) @ rot_x(tilt_rad)
    hinge = np.array([hinge_xy_mm[0], hinge_xy_mm[1], 0.0])
    return PyramidPose(size=size, rotation=R, base_center_mm=hinge + R @ np.array([0.0, b / 2, 0.0]))


def leaning_rest_tilt_rad(base_side_mm: float, surface_mm: np.ndarray, hinge_xy_mm, toward_rad: float) -> float | None:
    """Tilt at which a base plate of side ``base_side_mm``, hinged on the table at ``hinge_xy_mm`` and swung
    down towards plan direction ``toward_rad``, first touches a solid sampled by ``surface_mm`` (M, 3); None
    when nothing lies under its reach.

    Lowered about the hinge, the plate sweeps the points within its side of the hinge, so it comes to rest on
    the one of those with the steepest elevation seen from the hinge. (Taking the points under the plate's
    *plan* reach at the current tilt instead, and iterating, can stop short of that point and leave the solid
    through the plate: it did so for a fifth of the simulator's leaning pieces, by up to 37 deg.)

    >>> ridge = np.array([[5.0, 0.0, 4.0], [12.0, 0.0, 4.0], [30.0, 0.0, 20.0]])
    >>> round(math.degrees(leaning_rest_tilt_rad(20.0, ridge, (0.0, 0.0), 0.0)), 2)
    38.66
    """
    d = np.array([math.cos(toward_rad), math.sin(toward_rad)])
    lat = np.array([-d[1], d[0]])
    pts = np.asarray(surface_mm, float)
    rel = pts[:, :2] - np.asarray(hinge_xy_mm, float)[None]
    s, q, z = rel @ d, rel @ lat, pts[:, 2]
    under = (s > 1e-6) & (np.abs(q) <= base_side_mm / 2) & (np.hypot(s, z) <= base_side_mm)
    if not under.any():
        return None
    return float(np.max(np.arctan2(z[under], s[under])))


def pip_sites_mm(pose: PyramidPose, count: int) -> np.ndarray:
    """Centres (4, count, 3) of ``count`` pips laid out as on ``pose``'s size, on each of its four side faces.

    Face ``i`` is the one over base edge (corner i, corner i + 1). Any count may be asked of any size: the
    places where a piece of that count would show its pips, for testing which count a face shows.

    >>> pip_sites_mm(upright_pose("small", (0.0, 0.0), 0.0), 1).shape
    (4, 1, 3)
    """
    up_mm, _, spacing_mm = PIP_LAYOUT_MM[pose.size]
    c = pose.corners_mm()
    apex = pose.apex_mm()
    out = np.empty((4, count, 3))
    for i in range(4):
        a, b = c[i], c[(i + 1) % 4]
        mid = (a + b) / 2
        up = (apex - mid) / np.linalg.norm(apex - mid)  # the face's altitude meets its base edge mid-way
        along = (b - a) / np.linalg.norm(b - a)
        for k in range(count):
            out[i, k] = mid + up_mm * up + (k - (count - 1) / 2.0) * spacing_mm * along
    return out


def stacked_pose(size: str, lower: PyramidPose) -> PyramidPose:
    """A piece set over an upright ``lower`` piece at least its own size; its rim rides up the lower faces."""
    b_u = base_mm(size)
    if b_u > base_mm(lower.size):
        raise GeometryError(f"a {size} piece cannot sit on a {lower.size} piece: it would cover it")
    z = height_mm(lower.size) * (1.0 - (b_u - 2 * WALL_MM) / base_mm(lower.size)) + STACK_CLEARANCE_MM
    return PyramidPose(size=size, rotation=lower.rotation, base_center_mm=lower.to_table(np.array([0, 0, z])))


def is_upright(axis_tilt_deg: float, max_tilt_deg: float = UPRIGHT_MAX_TILT_DEG) -> bool:
    """IT P1: the base-to-apex axis within ``max_tilt_deg`` of vertical.

    >>> is_upright(1.0), is_upright(25.0)
    (True, False)
    """
    return abs(axis_tilt_deg) <= max_tilt_deg


def points_for(size: str, pose: str) -> int:
    """IT Score (A2): upright scores its pips, on a lying piece double, lying nothing; stacked/nested its pips.

    >>> points_for("large", "standing_on_lying"), points_for("small", "lying"), points_for("medium", "nested")
    (6, 0, 2)
    """
    if pose not in POSES:
        raise GeometryError(f"pyramid pose must be one of {POSES}, got {pose!r}")
    if pose == "lying":
        return 0
    if pose == "standing_on_lying":
        return 2 * pips(size)
    return pips(size)


def side_of_line(p0_mm, p1_mm, points_mm) -> np.ndarray:
    """Signed side (cross product sign, mm) of plan points (N, 2) relative to the line p0 -> p1.

    >>> side_of_line((0, 0), (1, 0), [[0, 5], [0, -5]]).tolist()
    [5.0, -5.0]
    """
    p0, p1 = np.asarray(p0_mm, float), np.asarray(p1_mm, float)
    u = p1 - p0
    n = np.linalg.norm(u)
    if n <= 0:
        raise GeometryError(f"a line needs two distinct points, got {p0_mm!r} and {p1_mm!r}")
    pts = np.asarray(points_mm, float).reshape(-1, 2)
    return (u[0] * (pts[:, 1] - p0[1]) - u[1] * (pts[:, 0] - p0[0])) / n


@dataclass(frozen=True, slots=True, kw_only=True)
class IcePiece:
    """A pyramid as the referee sees it (table mm): what the Ice Tiddly Winks judges take.

    ``supported_by`` names what the base rests on: "table" and/or other pieces' ids. ``hidden`` marks a
    piece enclosed by another (IT I-3). ``flagged`` carries the detector's request for a human look.
    """

    piece_id: str
    color: str
    size: str
    pose: str
    center_mm: tuple[float, float]
    axis_tilt_deg: float = 0.0
    supported_by: tuple[str, ...] = ("table",)
    on_table: bool = True
    hidden: bool = False
    is_launcher: bool = False
    confidence: float = 1.0
    flagged: bool = False

    def __post_init__(self) -> None:
        _size(self.size)
        if self.pose not in POSES:
            raise GeometryError(f"pyramid pose must be one of {POSES}, got {self.pose!r}")
        if not self.piece_id:
            raise GeometryError("a piece needs an id")
        c = tuple(float(v) for v in self.center_mm)
        if len(c) != 2 or not all(math.isfinite(v) for v in c):
            raise GeometryError(f"center_mm must be two finite numbers, got {self.center_mm!r}")
        object.__setattr__(self, "center_mm", c)
        object.__setattr__(self, "supported_by", tuple(self.supported_by))
        if not (math.isfinite(self.confidence) and 0.0 <= self.confidence <= 1.0):
            raise GeometryError(f"confidence must be in [0, 1], got {self.confidence!r}")

    @property
    def pips(self) -> int:
        return pips(self.size)


@dataclass(frozen=True, slots=True, kw_only=True)
class StartLine:
    """A player's start line through two table points; the stash area is on the side of ``stash_point_mm``
    (a point between the line and that player's table edge)."""

    color: str
    p0_mm: tuple[float, float]
    p1_mm: tuple[float, float]
    stash_point_mm: tuple[float, float]

    def __post_init__(self) -> None:
        for name in ("p0_mm", "p1_mm", "stash_point_mm"):
            v = tuple(float(x) for x in getattr(self, name))
            if len(v) != 2 or not all(math.isfinite(x) for x in v):
                raise GeometryError(f"{name} must be two finite numbers, got {getattr(self, name)!r}")
            object.__setattr__(self, name, v)
        if self.p0_mm == self.p1_mm:
            raise GeometryError(f"a start line needs two distinct points, got {self.p0_mm!r} twice")
        if abs(float(side_of_line(self.p0_mm, self.p1_mm, [self.stash_point_mm])[0])) < 1e-9:
            raise GeometryError(f"stash_point_mm {self.stash_point_mm!r} lies on the start line")

    def depth_into_stash_mm(self, points_mm) -> np.ndarray:
        """Signed distance (mm) of plan points past the line into the stash area (negative: outside it).

        >>> StartLine(color="red", p0_mm=(0, 0), p1_mm=(1, 0), stash_point_mm=(0, -9)).depth_into_stash_mm(
        ...     [[0, -40], [0, 10]]).tolist()
        [40.0, -10.0]
        """
        sign = np.sign(side_of_line(self.p0_mm, self.p1_mm, [self.stash_point_mm])[0])
        return sign * side_of_line(self.p0_mm, self.p1_mm, points_mm)
