"""Ice Tiddly Winks renders: Looney/Icehouse pyramids on a wooden table, with exact truth (RULES.md 5).

Pieces are hollow square pyramids (thin shells, open base). Translucent plastic is shaded as a thin wall: each
crossing reflects (Schlick Fresnel, a soft window light) and transmits a tint raised to the path length
through the wall (1/|cos|), which darkens and saturates the edges; opaque black and white plastic is diffuse
plus a specular coat. Shadows are ray-cast towards an area light and come out tinted under translucent pieces.

Table frame: origin at the table centre, z up, mm; the table top is z = 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.pyramids import PIP_LAYOUT_MM, leaning_rest_tilt_rad
from simulation.photo import PhotoSettings, finish_photo
from simulation.pyramids_marbles_common import (
    BAND_ROWS,
    Fbm,
    Lighting,
    Noise2D,
    TriangleSet,
    camera_rays,
    downsample,
    fresnel_schlick,
    oblique_camera,
    padded_bbox,
    patch_groups,
    pixel_block,
    rays_near_spheres,
    reflect,
    smoothstep,
    write_image_and_truth,
)

GAME = "ice-tiddlywinks"

# Looney Labs standard sizes (RULES.md 5.1): base side, height (mm), pips.
PYRAMID_SIZES: dict[str, tuple[float, float, int]] = {
    "small": (14.3, 25.4, 1),
    "medium": (19.8, 34.9, 2),
    "large": (25.4, 44.5, 3),
}
WALL_MM = 1.2  # shell thickness of the moulded pieces (measured by eye on photos; only sets stacking height)
STACK_CLEARANCE_MM = (
    0.3  # a stacked piece's rim rests this far above where its inner wall meets the lower piece
)
POSES = ("upright", "lying", "standing_on_lying", "nested")

# Translucent colours: linear transmittance through one wall at normal incidence.
TRANSLUCENT_RGB: dict[str, tuple[float, float, float]] = {
    "red": (0.82, 0.05, 0.06),
    "yellow": (0.88, 0.66, 0.04),
    "green": (0.06, 0.50, 0.12),
    "blue": (0.05, 0.16, 0.78),
    "purple": (0.36, 0.05, 0.56),
    "orange": (0.92, 0.28, 0.03),
    "cyan": (0.04, 0.58, 0.72),
    "clear": (0.92, 0.92, 0.90),
}
OPAQUE_RGB: dict[str, tuple[float, float, float]] = {
    "black": (0.022, 0.022, 0.025),
    "white": (0.72, 0.72, 0.69),
}
COLORS: tuple[str, ...] = tuple(TRANSLUCENT_RGB) + tuple(OPAQUE_RGB)
PLASTIC_F0 = 0.04  # Fresnel reflectance at normal incidence of acrylic/polystyrene (n ~ 1.5)
TAPE_WIDTH_RANGE_MM = (18.0, 25.0)

# Pip layout on each face, per size: distance up the slant from the base edge, dot radius, spacing (mm).
_PIP_LAYOUT = PIP_LAYOUT_MM


def _rot_z(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _rot_x(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class PyramidPiece:
    """One pyramid: local frame has the base square in z = 0 centred at the origin and the apex on +z.

    ``rotation`` maps local to table, ``base_center_mm`` is where the local origin lands. ``supported_by``
    names what the base rests on ("table" or piece ids); ``hidden`` marks a piece enclosed by another.
    """

    piece_id: str
    color: str
    size: str
    pose: str
    rotation: np.ndarray
    base_center_mm: np.ndarray
    supported_by: tuple[str, ...] = ("table",)
    hidden: bool = False
    covers: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.size not in PYRAMID_SIZES:
            raise ValueError(f"pyramid size must be one of {sorted(PYRAMID_SIZES)}, got {self.size!r}")
        if self.color not in COLORS:
            raise ValueError(f"pyramid colour must be one of {COLORS}, got {self.color!r}")
        if self.pose not in POSES:
            raise ValueError(f"pyramid pose must be one of {POSES}, got {self.pose!r}")
        object.__setattr__(self, "rotation", np.asarray(self.rotation, float).reshape(3, 3))
        object.__setattr__(self, "base_center_mm", np.asarray(self.base_center_mm, float).reshape(3))

    @property
    def base_mm(self) -> float:
        return PYRAMID_SIZES[self.size][0]

    @property
    def height_mm(self) -> float:
        return PYRAMID_SIZES[self.size][1]

    @property
    def pips(self) -> int:
        return PYRAMID_SIZES[self.size][2]

    @property
    def translucent(self) -> bool:
        return self.color in TRANSLUCENT_RGB

    @property
    def points(self) -> int:
        """IT Score: upright pips, double when the base rests on a lying piece, nothing when lying.

        A piece stacked on or hidden under an upright piece scores its pips (IT I-2); a hidden one is
        undecided on the photo (IT I-3) but this is its true score once lifted.
        """
        if self.pose == "lying":
            return 0
        if self.pose == "standing_on_lying":
            return 2 * self.pips
        return self.pips

    def to_table(self, local: np.ndarray) -> np.ndarray:
        return np.asarray(local, float) @ self.rotation.T + self.base_center_mm

    def corners_mm(self) -> np.ndarray:
        """Base corners (4, 3), counter-clockwise seen from the apex."""
        h = self.base_mm / 2
        return self.to_table(np.array([[-h, -h, 0.0], [h, -h, 0.0], [h, h, 0.0], [-h, h, 0.0]]))

    def apex_mm(self) -> np.ndarray:
        return self.to_table(np.array([0.0, 0.0, self.height_mm]))

    def vertices_mm(self) -> np.ndarray:
        return np.vstack([self.corners_mm(), self.apex_mm()[None]])

    def faces_mm(self) -> np.ndarray:
        """The four side faces (4, 3, 3) as (base corner i, base corner i+1, apex): outward normals."""
        c = self.corners_mm()
        a = self.apex_mm()
        return np.stack([np.stack([c[i], c[(i + 1) % 4], a]) for i in range(4)])

    def hull_mm(self) -> np.ndarray:
        """Closed hull (6, 3, 3): the faces plus the base square as two triangles (for support tests)."""
        c = self.corners_mm()
        return np.concatenate([self.faces_mm(), np.stack([[c[0], c[2], c[1]], [c[0], c[3], c[2]]])])

    def axis_tilt_deg(self) -> float:
        axis = self.rotation[:, 2]
        return math.degrees(math.acos(float(np.clip(axis[2], -1.0, 1.0))))


# --- poses ----------------------------------------------------------------------------------------------


def upright_piece(piece_id: str, color: str, size: str, xy_mm, yaw_rad: float) -> PyramidPiece:
    return PyramidPiece(
        piece_id=piece_id,
        color=color,
        size=size,
        pose="upright",
        rotation=_rot_z(yaw_rad),
        base_center_mm=(xy_mm[0], xy_mm[1], 0.0),
    )


def lying_piece(piece_id: str, color: str, size: str, xy_mm, yaw_rad: float) -> PyramidPiece:
    """A piece lying on its -y face; ``xy_mm`` is the plan centroid of the face it lies on."""
    b, h, _ = PYRAMID_SIZES[size]
    # outward normal of the -y face is (0, -2h, b)/norm; turn it to straight down about the x axis
    beta = math.pi - math.atan2(2 * h, b)
    R = _rot_z(yaw_rad) @ _rot_x(beta)
    tmp = PyramidPiece(
        piece_id=piece_id, color=color, size=size, pose="lying", rotation=R, base_center_mm=(0.0, 0.0, 0.0)
    )
    face = tmp.faces_mm()[0]
    shift = np.array([xy_mm[0], xy_mm[1], 0.0]) - np.array([*face[:, :2].mean(axis=0), face[:, 2].min()])
    return PyramidPiece(
        piece_id=piece_id, color=color, size=size, pose="lying", rotation=R, base_center_mm=shift
    )


def stacked_piece(piece_id: str, color: str, size: str, lower: PyramidPiece) -> PyramidPiece:
    """A piece set over an upright ``lower`` piece at least its own size (stacked, IT I-2).

    Its open base slides down the lower piece until its inner wall meets the lower piece's faces; sizes and
    slopes of the three pieces differ by under 2 %, so the walls then nest along their length (IT I-2).
    """
    b_u = PYRAMID_SIZES[size][0]
    if b_u > lower.base_mm:
        raise ValueError(f"a {size} piece cannot sit on a {lower.size} piece: it would cover it")
    z = lower.height_mm * (1.0 - (b_u - 2 * WALL_MM) / lower.base_mm) + STACK_CLEARANCE_MM
    return PyramidPiece(
        piece_id=piece_id,
        color=color,
        size=size,
        pose="nested",
        rotation=lower.rotation,
        base_center_mm=lower.to_table(np.array([0.0, 0.0, z])),
        supported_by=(lower.piece_id,),
    )


def _surface_samples(tris: np.ndarray, n: int = 14) -> np.ndarray:
    """Points spread over triangles (T, 3, 3), vertices and edges included."""
    i, j = np.meshgrid(np.arange(n + 1), np.arange(n + 1))
    keep = i + j <= n
    u, v = i[keep] / n, j[keep] / n
    w = np.stack([1 - u - v, u, v], axis=1)  # (S, 3)
    return np.einsum("sk,tkd->tsd", w, tris).reshape(-1, 3)


REST_SAMPLES_PER_EDGE = 48


def standing_on_lying_piece(
    piece_id: str, color: str, size: str, lying: PyramidPiece, toward_rad: float, overlap_ratio: float
) -> PyramidPiece | None:
    """A piece with one base edge on the table and the base resting on ``lying`` (IT I-1: scores double).

    The piece stands beside the lying one, facing it along ``toward_rad``, its base overlapping the lying
    piece's plan extent by ``overlap_ratio`` of its side; the base is then lowered about its near edge until it
    rests on the lying piece (``leaning_rest_tilt_rad``). None when that tilt is implausible.
    """
    b = PYRAMID_SIZES[size][0]
    d = np.array([math.cos(toward_rad), math.sin(toward_rad)])
    lat = np.array([-d[1], d[0]])
    # ~1 mm apart on a large piece: the rest is found to a sample's spacing, where the plate's reach cuts a ridge
    samples = _surface_samples(lying.hull_mm(), n=REST_SAMPLES_PER_EDGE)
    near = float((samples[:, :2] @ d).min())  # nearest extent of the lying piece along d
    hinge_s = near - overlap_ratio * b  # hinge line position along d
    centre_lat = float(lying.base_center_mm[:2] @ lat)
    alpha = leaning_rest_tilt_rad(b, samples, hinge_s * d + centre_lat * lat, toward_rad)
    if alpha is None:
        return None
    # beyond ~40 deg the shell's centre of mass (1/3 up the axis) passes behind the hinge and it tips back
    if not math.radians(6.0) <= alpha <= math.radians(35.0):
        return None
    yaw = toward_rad - math.pi / 2  # local +y along d
    R = _rot_z(yaw) @ _rot_x(alpha)
    hinge = np.array([*(hinge_s * d + centre_lat * lat), 0.0])
    base_center = hinge + R @ np.array([0.0, b / 2, 0.0])
    return PyramidPiece(
        piece_id=piece_id,
        color=color,
        size=size,
        pose="standing_on_lying",
        rotation=R,
        base_center_mm=base_center,
        supported_by=("table", lying.piece_id),
    )


def covering_pair(
    outer_id: str,
    outer_color: str,
    outer_size: str,
    inner_id: str,
    inner_color: str,
    inner_size: str,
    xy_mm,
    yaw_rad: float,
    rng: np.random.Generator,
) -> tuple[PyramidPiece, ...]:
    """A larger upright piece over a smaller upright one, both on the table: the inner is hidden (IT I-3)."""
    b_o, b_i = PYRAMID_SIZES[outer_size][0], PYRAMID_SIZES[inner_size][0]
    if b_i >= b_o:
        raise ValueError(f"a {outer_size} piece cannot cover a {inner_size} piece")
    room = max((b_o - 2 * WALL_MM - b_i) / 2 - 0.5, 0.0) * 0.5
    off = rng.uniform(-room, room, 2)
    outer = PyramidPiece(
        piece_id=outer_id,
        color=outer_color,
        size=outer_size,
        pose="upright",
        rotation=_rot_z(yaw_rad),
        base_center_mm=(xy_mm[0], xy_mm[1], 0.0),
        covers=(inner_id,),
    )
    inner = PyramidPiece(
        piece_id=inner_id,
        color=inner_color,
        size=inner_size,
        pose="nested",
        rotation=_rot_z(yaw_rad + rng.uniform(-0.08, 0.08)),
        base_center_mm=(xy_mm[0] + off[0], xy_mm[1] + off[1], 0.0),
        hidden=True,
    )
    return outer, inner


# --- scene ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class StartLine:
    """A strip of tape on the table from ``p0_mm`` to ``p1_mm`` (centre line), ``width_mm`` wide."""

    p0_mm: tuple[float, float]
    p1_mm: tuple[float, float]
    width_mm: float
    color: str
    albedo_rgb: tuple[float, float, float]


_TAPES = {
    "masking": (0.62, 0.50, 0.28),
    "white": (0.78, 0.78, 0.74),
    "blue": (0.03, 0.12, 0.45),
    "green": (0.05, 0.30, 0.08),
    "black": (0.03, 0.03, 0.03),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class IceScene:
    pieces: tuple[PyramidPiece, ...]
    start_lines: tuple[StartLine, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class IceSceneSpec:
    """What to put on the table: how many groups of each kind (a group is one or two pieces)."""

    upright: int = 6
    lying: int = 3
    standing_on_lying: int = 1
    stacked: int = 1
    covered: int = 0
    start_lines: int = 0
    colors: tuple[str, ...] = ()  # empty: draw 2-4 colours


def _view_polygon_mm(camera: CameraModel, margin_ratio: float) -> np.ndarray:
    w, h = camera.image_size_wh_px
    mx, my = margin_ratio * w, margin_ratio * h
    t = np.linspace(0, 1, 9)
    edge = np.concatenate(
        [
            np.column_stack([mx + t * (w - 1 - 2 * mx), np.full(9, my)]),
            np.column_stack([np.full(9, w - 1 - mx), my + t * (h - 1 - 2 * my)]),
            np.column_stack([w - 1 - mx - t * (w - 1 - 2 * mx), np.full(9, h - 1 - my)]),
            np.column_stack([np.full(9, mx), h - 1 - my - t * (h - 1 - 2 * my)]),
        ]
    )
    return camera.image_to_table_mm(edge, 0.0)


def _inside_polygon(poly: np.ndarray, pts: np.ndarray) -> np.ndarray:
    c = poly.astype(np.float32).reshape(-1, 1, 2)
    return np.array([cv2.pointPolygonTest(c, (float(x), float(y)), False) > 0 for x, y in pts])


def random_ice_scene(rng: np.random.Generator, camera: CameraModel, spec: IceSceneSpec) -> IceScene:
    """Groups of pyramids laid out without collisions inside the camera's central view."""
    poly = _view_polygon_mm(camera, 0.1)
    colors = spec.colors or tuple(rng.choice(COLORS, size=int(rng.integers(2, 5)), replace=False))
    lo, hi = poly.min(axis=0), poly.max(axis=0)
    placed: list[tuple[np.ndarray, float]] = []  # plan centres and radii of groups
    pieces: list[PyramidPiece] = []
    w, h = camera.image_size_wh_px
    tmp_counter = iter(range(1, 1_000_000))

    def next_id() -> str:
        return f"tmp{next(tmp_counter)}"

    def relabel(group: list[PyramidPiece]) -> list[PyramidPiece]:
        """Number accepted pieces p1, p2 ... in placement order (failed attempts leave no gaps)."""
        names = {p.piece_id: f"p{len(pieces) + k + 1}" for k, p in enumerate(group)}
        return [
            replace(
                p,
                piece_id=names[p.piece_id],
                supported_by=tuple(names.get(s, s) for s in p.supported_by),
                covers=tuple(names[c] for c in p.covers),
            )
            for p in group
        ]

    def size_draw() -> str:
        return str(rng.choice(list(PYRAMID_SIZES)))

    def try_place(make) -> bool:
        for _ in range(60):
            xy = rng.uniform(lo, hi)
            if not _inside_polygon(poly, xy[None])[0]:
                continue
            group = make(xy)
            if group is None:
                continue
            verts = np.vstack([p.vertices_mm() for p in group])
            c = verts[:, :2].mean(axis=0)
            r = float(np.max(np.linalg.norm(verts[:, :2] - c, axis=1))) + 4.0
            if any(np.linalg.norm(c - c2) < r + r2 for c2, r2 in placed):
                continue
            px = camera.project_mm(verts)
            if (
                px[:, 0].min() < 0.04 * w
                or px[:, 0].max() > 0.96 * w
                or px[:, 1].min() < 0.04 * h
                or px[:, 1].max() > 0.96 * h
            ):
                continue
            placed.append((c, r))
            pieces.extend(relabel(group))
            return True
        return False

    def color() -> str:
        return str(rng.choice(colors))

    for _ in range(spec.upright):
        try_place(
            lambda xy: [upright_piece(next_id(), color(), size_draw(), xy, rng.uniform(0, 2 * math.pi))]
        )
    for _ in range(spec.lying):
        try_place(lambda xy: [lying_piece(next_id(), color(), size_draw(), xy, rng.uniform(0, 2 * math.pi))])

    def make_sol(xy):
        lying = lying_piece(
            next_id(), color(), str(rng.choice(["small", "medium", "large"])), xy, rng.uniform(0, 2 * math.pi)
        )
        top = standing_on_lying_piece(
            next_id(),
            color(),
            str(rng.choice(["medium", "large", "small"])),
            lying,
            rng.uniform(0, 2 * math.pi),
            rng.uniform(0.25, 0.6),
        )
        return None if top is None else [lying, top]

    for _ in range(spec.standing_on_lying):
        try_place(make_sol)

    def make_stack(xy):
        lower_size = str(rng.choice(["large", "large", "medium"]))
        upper_size = "small" if lower_size == "medium" else str(rng.choice(["small", "medium", "small"]))
        lower = upright_piece(next_id(), color(), lower_size, xy, rng.uniform(0, 2 * math.pi))
        return [lower, stacked_piece(next_id(), color(), upper_size, lower)]

    for _ in range(spec.stacked):
        try_place(make_stack)

    def make_cover(xy):
        outer_size, inner_size = [("large", "small"), ("large", "medium"), ("medium", "small")][
            int(rng.integers(3))
        ]
        return list(
            covering_pair(
                next_id(),
                color(),
                outer_size,
                next_id(),
                color(),
                inner_size,
                xy,
                rng.uniform(0, 2 * math.pi),
                rng,
            )
        )

    for _ in range(spec.covered):
        try_place(make_cover)

    lines = []
    for _ in range(spec.start_lines):
        p = rng.uniform(lo * 0.7, hi * 0.7)
        ang = rng.uniform(0, math.pi)
        dvec = np.array([math.cos(ang), math.sin(ang)]) * 3000.0
        kind = str(rng.choice(list(_TAPES)))
        lines.append(
            StartLine(
                p0_mm=tuple(p - dvec),
                p1_mm=tuple(p + dvec),
                width_mm=float(rng.uniform(*TAPE_WIDTH_RANGE_MM)),
                color=kind,
                albedo_rgb=_TAPES[kind],
            )
        )
    return IceScene(pieces=tuple(pieces), start_lines=tuple(lines))


# --- rendering -------------------------------------------------------------------------------------------


class WoodTop:
    """Albedo of a planked, varnished wooden top in mm: growth-ring figure, fibre streaks, plank joints."""

    _TONES = (
        ((0.16, 0.065, 0.025), (0.34, 0.15, 0.06)),  # cherry / mahogany
        ((0.30, 0.17, 0.08), (0.52, 0.33, 0.16)),  # oak
        ((0.07, 0.035, 0.016), (0.18, 0.085, 0.04)),  # walnut
        ((0.45, 0.28, 0.12), (0.66, 0.47, 0.25)),
    )  # pine / beech

    def __init__(self, rng: np.random.Generator):
        self.angle = float(rng.uniform(0.0, math.pi))
        self.plank_mm = float(rng.uniform(90.0, 220.0))
        self.period_mm = float(rng.uniform(9.0, 22.0))
        dark, light = self._TONES[int(rng.integers(len(self._TONES)))]
        self.dark, self.light = np.asarray(dark), np.asarray(light)
        self.streak = Noise2D(rng, (45.0, 0.45))
        self.streak2 = Noise2D(rng, (180.0, 1.8))
        self.warp = Fbm(rng, (500.0, 90.0), 3)
        self.blotch = Fbm(rng, 60.0, 2)
        self.plank_tone = rng.uniform(0.82, 1.18, 64)
        self.plank_shift = rng.uniform(0.0, 4000.0, (64, 2))

    def sample(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        ca, sa = math.cos(self.angle), math.sin(self.angle)
        along = x * ca + y * sa
        across = -x * sa + y * ca
        k = np.floor(across / self.plank_mm).astype(int) % 64
        a = along + self.plank_shift[k, 0]
        c = across + self.plank_shift[k, 1]
        warp = (self.warp(a, c) - 0.5) * 160.0
        ring = np.sin(2 * math.pi * (c + warp) / self.period_mm)
        ring = 0.5 + 0.5 * np.sign(ring) * np.abs(ring) ** 0.5
        t = 0.28 * ring + 0.4 * self.streak(a, c) + 0.32 * self.streak2(a, c)
        t = np.clip(t + (self.blotch(a, c) - 0.5) * 0.5, 0.0, 1.0)
        col = self.dark[None] * (1 - t[:, None]) + self.light[None] * t[:, None]
        joint = np.abs(across / self.plank_mm - np.round(across / self.plank_mm)) * self.plank_mm
        col *= (self.plank_tone[k] * (1.0 - 0.6 * smoothstep(0.6, 0.15, joint)))[:, None]
        return col


@dataclass
class _Table:
    """Wood albedo plus tape strips, and the varnish gloss."""

    wood: WoodTop
    lines: tuple[StartLine, ...]
    crepe: Noise2D
    gloss: float

    def albedo(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        alb = self.wood.sample(x, y).astype(np.float64)
        for ln in self.lines:
            p0, p1 = np.asarray(ln.p0_mm), np.asarray(ln.p1_mm)
            u = (p1 - p0) / np.linalg.norm(p1 - p0)
            dist = np.abs((x - p0[0]) * -u[1] + (y - p0[1]) * u[0])
            wobble = (self.crepe(x * 0.05, y * 0.05) - 0.5) * 0.6  # torn, slightly wavy edges
            cover = smoothstep(ln.width_mm / 2 + 0.3, ln.width_mm / 2 - 0.3, dist + wobble)
            tex = 0.92 + 0.16 * self.crepe(x, y)
            alb = alb * (1 - cover[:, None]) + (np.asarray(ln.albedo_rgb) * tex[:, None]) * cover[:, None]
        return alb


@dataclass
class _ClusterGeometry:
    tris: TriangleSet
    piece_of_tri: np.ndarray
    trans_rgb: np.ndarray  # (T, 3) per-wall transmittance (0 for opaque)
    albedo_rgb: np.ndarray  # (T, 3) diffuse albedo (opaque) or scatter tint (translucent)
    opaque: np.ndarray  # (T,) bool
    pip_count: np.ndarray  # (T,)
    pip_layout: np.ndarray  # (T, 3): slant offset, radius, spacing
    contacts: list = field(default_factory=list)  # (polygon (K, 2), strength) for table occlusion
    sphere_centers: np.ndarray = field(
        default_factory=lambda: np.zeros((0, 3))
    )  # bounding spheres, per piece
    sphere_radii: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def near(self, o: np.ndarray, d: np.ndarray) -> np.ndarray:
        return rays_near_spheres(o, d, self.sphere_centers, self.sphere_radii)


def _cluster_geometry(pieces: list[PyramidPiece]) -> _ClusterGeometry:
    tris, owner, trans, alb, opq, pips, layout, contacts = [], [], [], [], [], [], [], []
    for k, p in enumerate(pieces):
        tris.append(p.faces_mm())
        owner += [k] * 4
        if p.translucent:
            t = np.asarray(TRANSLUCENT_RGB[p.color])
            trans += [t] * 4
            alb += [np.sqrt(t)] * 4
        else:
            trans += [np.zeros(3)] * 4
            alb += [np.asarray(OPAQUE_RGB[p.color])] * 4
        opq += [not p.translucent] * 4
        pips += [p.pips] * 4
        layout += [_PIP_LAYOUT[p.size]] * 4
        # where the piece touches the table: its base, the face it lies on, or its hinge edge
        if p.pose == "lying":
            contacts.append((p.faces_mm()[0][:, :2], 1.0))
        elif "table" in p.supported_by and p.pose != "standing_on_lying":
            contacts.append((p.corners_mm()[:, :2], 0.8 if p.translucent else 1.0))
        elif p.pose == "standing_on_lying":
            c = p.corners_mm()
            low = c[np.argsort(c[:, 2])[:2]]
            contacts.append((np.vstack([low[:, :2], low[::-1, :2] + 1e-3]), 0.7))
    centers = np.array([p.vertices_mm().mean(axis=0) for p in pieces])
    radii = np.array(
        [np.linalg.norm(p.vertices_mm() - c, axis=1).max() + 0.1 for p, c in zip(pieces, centers)]
    )
    return _ClusterGeometry(
        tris=TriangleSet(np.concatenate(tris)),
        piece_of_tri=np.array(owner),
        trans_rgb=np.array(trans),
        albedo_rgb=np.array(alb),
        opaque=np.array(opq),
        pip_count=np.array(pips),
        pip_layout=np.array(layout),
        contacts=contacts,
        sphere_centers=centers,
        sphere_radii=radii,
    )


def _log_transmission(geo: _ClusterGeometry, o: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Log of RGB light transmitted from points ``o`` (N, 3) along unit ``d`` (N, 3) through the cluster."""
    out = np.zeros((len(o), 3))
    near = geo.near(o, d)
    if near.any():
        out[near] = _log_transmission_exact(geo, o[near], d[near])
    return out


def _log_transmission_exact(geo: _ClusterGeometry, o: np.ndarray, d: np.ndarray) -> np.ndarray:
    t, _, _ = geo.tris.intersect(o, d, t_min=0.05)
    hit = np.isfinite(t)
    if not hit.any():
        return np.zeros((len(o), 3))
    cos = np.abs(d @ geo.tris.n.T)  # (N, T)
    with np.errstate(divide="ignore"):
        log_t = np.log(np.maximum(geo.trans_rgb, 1e-6))  # (T, 3)
    path = 1.0 / np.maximum(cos, 0.15)
    out = np.einsum("nt,nt,tc->nc", hit.astype(float), path, log_t)
    out += (hit * np.log(1.0 - fresnel_schlick(cos, PLASTIC_F0))).sum(axis=1)[:, None]
    return out


def _shadow_rgb(geo: _ClusterGeometry, points: np.ndarray, light_dirs: np.ndarray) -> np.ndarray:
    acc = np.zeros((len(points), 3))
    for ld in light_dirs:
        acc += np.exp(_log_transmission(geo, points, np.broadcast_to(ld, points.shape)))
    return acc / len(light_dirs)


def _contact_occlusion(geo: _ClusterGeometry, xy: np.ndarray) -> np.ndarray:
    """Ambient occlusion on the table near contacts: dark at the contact line, fading over a few mm."""
    occ = np.ones(len(xy))
    for poly, strength in geo.contacts:
        n = len(poly)
        sd = np.full(len(xy), -np.inf)
        area = 0.5 * np.sum(poly[:, 0] * np.roll(poly[:, 1], -1) - np.roll(poly[:, 0], -1) * poly[:, 1])
        for i in range(n):
            a, b = poly[i], poly[(i + 1) % n]
            e = b - a
            if np.linalg.norm(e) < 1e-6:
                continue
            nrm = np.array([e[1], -e[0]]) / np.linalg.norm(e) * (1.0 if area > 0 else -1.0)
            sd = np.maximum(sd, (xy - a) @ nrm)
        size = math.sqrt(max(abs(area), 30.0))
        near = 0.45 * np.exp(-np.maximum(sd, 0) / 1.8) + 0.25 * np.exp(-np.maximum(sd, 0) / (0.25 * size))
        inside = sd < 0
        near[inside] = 0.55
        occ *= 1.0 - strength * near
    return occ


def _shade_table(
    table: _Table, lighting: Lighting, P: np.ndarray, d: np.ndarray, shadow: np.ndarray, occ: np.ndarray
) -> np.ndarray:
    alb = table.albedo(P[:, 0], P[:, 1])
    Lz = lighting.to_light[2]
    diffuse = alb * (lighting.key_rgb[None] * Lz * shadow + lighting.ambient_rgb[None] * occ[:, None])
    n = np.array([0.0, 0.0, 1.0])
    r = reflect(d, n[None])
    F = fresnel_schlick(d[:, 2], 0.04)[:, None]
    spec = (
        F
        * lighting.environment(r)
        * table.gloss
        * np.minimum(shadow.mean(axis=1, keepdims=True) * 0.6 + 0.4, occ[:, None])
    )
    return diffuse + spec


def _shade_pieces(
    geo: _ClusterGeometry,
    lighting: Lighting,
    o: np.ndarray,
    d: np.ndarray,
    t_table: np.ndarray,
    background: callable,
) -> np.ndarray:
    """Front-to-back composite of every wall a ray crosses before the table, then the table seen through."""
    t, u, v = geo.tris.intersect(o, d)
    t = np.where(t < t_table[:, None], t, np.inf)
    order = np.argsort(t, axis=1)
    n_rays = len(d)
    colour = np.zeros((n_rays, 3))
    through = np.ones((n_rays, 3))
    light_dirs = lighting.sample_dirs(4)
    rows = np.arange(n_rays)
    for layer in range(t.shape[1]):
        j = order[:, layer]
        tj = t[rows, j]
        live = np.isfinite(tj) & (through.max(axis=1) > 1e-3)
        if not live.any():
            break
        idx = rows[live]
        jj = j[live]
        X = o + tj[live, None] * d[live]
        dd = d[live]
        n_out = geo.tris.n[jj]
        cos_i = np.sum(dd * n_out, axis=1)
        outer = cos_i < 0
        n_s = np.where(outer[:, None], n_out, -n_out)
        F = fresnel_schlick(cos_i, PLASTIC_F0)[:, None]
        # light arriving at the hit: through the cluster (other walls) towards the area light
        X_off = X + n_s * 0.02
        light = np.zeros((len(idx), 3))
        for ld in light_dirs:
            light += np.exp(_log_transmission(geo, X_off, np.broadcast_to(ld, X.shape)))
        light /= len(light_dirs)
        spec_env = lighting.environment(reflect(dd, n_s))
        spec = F * spec_env * np.where(outer, 1.0, 0.35)[:, None]
        # barycentrics -> distance up the slant from the base edge, across from the face's middle
        uj, vj = u[idx, jj], v[idx, jj]
        alt = geo.tris.alt[jj]
        w0 = 1.0 - uj - vj
        edge_mm = np.minimum(np.minimum(w0 * alt[:, 0], uj * alt[:, 1]), vj * alt[:, 2])
        up_mm = vj * alt[:, 2]
        e1 = geo.tris.e1[jj]
        e1n = e1 / np.linalg.norm(e1, axis=1, keepdims=True)
        mid = geo.tris.v0[jj] + 0.5 * e1
        across_mm = np.sum((X - mid) * e1n, axis=1)
        lay = geo.pip_layout[jj]
        npip = geo.pip_count[jj]
        pip = np.zeros(len(idx), bool)
        for k in range(3):
            centre = (k - (npip - 1) / 2.0) * lay[:, 2]
            pip |= (k < npip) & ((up_mm - lay[:, 0]) ** 2 + (across_mm - centre) ** 2 <= lay[:, 1] ** 2)
        ndotl = np.clip(n_s @ lighting.to_light, 0.0, 1.0)
        amb = np.where(outer, 0.6 + 0.4 * np.clip(n_s[:, 2], 0, 1), 0.3)[:, None]
        opaque = geo.opaque[jj]
        alb = geo.albedo_rgb[jj]
        irr = lighting.key_rgb * light * ndotl[:, None] + lighting.ambient_rgb * amb
        # opaque plastic: diffuse + coat; moulded pips read as slightly different matte dots
        alb_o = np.where(pip[:, None], alb * 0.6 + 0.035, alb)
        col_o = alb_o * irr + spec * np.where(pip, 0.3, 1.0)[:, None]
        # translucent wall: reflection, a little scatter, tinted transmission longer at grazing angles; the
        # rounded edges bend light away (total internal reflection), so they read darker and more saturated
        path = 1.0 / np.maximum(np.abs(cos_i), 0.12)
        trans = geo.trans_rgb[jj] ** path[:, None] * (1.0 - F)
        edge = smoothstep(0.9, 0.2, edge_mm)[:, None]
        trans = trans * (1.0 - edge * (1.0 - geo.trans_rgb[jj] ** 2))
        scatter = (
            alb
            * (0.13 * (1.0 - 0.6 * edge))
            * (
                lighting.key_rgb * light * (0.3 + 0.7 * np.abs(n_out @ lighting.to_light))[:, None]
                + lighting.ambient_rgb
            )
        )
        frost = pip[:, None] * 0.22 * (lighting.key_rgb * light * 0.5 + lighting.ambient_rgb)
        trans = np.where(pip[:, None], trans * 0.45, trans)
        col_t = spec + scatter + frost
        contrib = np.where(opaque[:, None], col_o, col_t)
        colour[idx] += through[idx] * contrib
        through[idx] *= np.where(opaque[:, None], 0.0, trans)
    seen = through.max(axis=1) > 1e-4
    if seen.any():
        colour[seen] += through[seen] * background(seen)
    return colour


def render_ice_scene(
    scene: IceScene,
    camera: CameraModel,
    lighting: Lighting,
    rng: np.random.Generator,
    *,
    supersample: int = 3,
) -> np.ndarray:
    """Linear RGB radiance (H, W, 3) of the scene seen by ``camera``."""
    w, h = camera.image_size_wh_px
    table = _Table(
        wood=WoodTop(rng),
        lines=scene.start_lines,
        crepe=Noise2D(rng, 0.35),
        gloss=float(rng.uniform(0.5, 1.0)),
    )

    img = np.empty((h, w, 3))
    for y0 in range(0, h, BAND_ROWS):  # in bands of rows: bounded memory at 4000 x 3000
        y1 = min(y0 + BAND_ROWS, h)
        o, d = camera.rays_mm(pixel_block(0, y0, w, y1, 1).reshape(-1, 2))
        P = o + (-o[2] / d[:, 2])[:, None] * d
        img[y0:y1] = _shade_table(table, lighting, P, d, np.ones((len(P), 3)), np.ones(len(P))).reshape(
            -1, w, 3
        )

    # patches around each cluster of pieces (their shadows and contact shading included)
    L = lighting.to_light
    boxes = []
    for p in scene.pieces:
        v = p.vertices_mm()
        shadow = v - (v[:, 2:3] / L[2]) * L[None]
        pts = camera.project_mm(np.vstack([v, shadow]))
        boxes.append(padded_bbox(pts, 8.0 + 0.15 * (pts[:, 0].max() - pts[:, 0].min()), (w, h)))
    members = [(box, [scene.pieces[j] for j in idx]) for box, idx in patch_groups(boxes)]
    light_dirs = lighting.sample_dirs(8)
    ss = supersample
    for (x0, y0, x1, y1), group in members:
        geo = _cluster_geometry(group)
        # table at pixel rate: shadows and occlusion are soft, so one sample per pixel suffices
        sub = pixel_block(x0, y0, x1, y1, 1).reshape(-1, 2)
        o1, d1 = camera.rays_mm(sub)
        P1 = o1 + (-o1[2] / d1[:, 2])[:, None] * d1
        shadow = _shadow_rgb(geo, P1, light_dirs)
        occ = _contact_occlusion(geo, P1[:, :2])
        table_px = _shade_table(table, lighting, P1, d1, shadow, occ).reshape(y1 - y0, x1 - x0, 3)
        # pieces supersampled: their edges are sharp
        blk = pixel_block(x0, y0, x1, y1, ss)
        o2, d2 = camera_rays(camera, blk)
        d2 = d2.reshape(-1, 3)
        t2 = -o2[2] / d2[:, 2]
        bg = np.repeat(np.repeat(table_px, ss, axis=0), ss, axis=1).reshape(-1, 3)
        any_hit = geo.near(o2, d2)
        col = bg.copy()
        if any_hit.any():
            sel = np.flatnonzero(any_hit)
            col[sel] = _shade_pieces(geo, lighting, o2, d2[sel], t2[sel], lambda m: bg[sel][m])
        img[y0:y1, x0:x1] = downsample(col.reshape((y1 - y0) * ss, (x1 - x0) * ss, 3), ss)
    return img


# --- truth and generator ---------------------------------------------------------------------------------


def ice_truth(scene: IceScene, camera: CameraModel) -> dict:
    """Truth document: pieces with pose, points, 3-D corners and apex, scores, start lines, the camera."""
    pieces = []
    for p in scene.pieces:
        pieces.append(
            {
                "id": p.piece_id,
                "color": p.color,
                "size": p.size,
                "pose": p.pose,
                "points": p.points,
                "pips": p.pips,
                "translucent": p.translucent,
                "center_mm": np.round(p.base_center_mm[:2], 3).tolist(),
                "base_center_z_mm": round(float(p.base_center_mm[2]), 3),
                "center_px": np.round(camera.project_mm(p.base_center_mm[None])[0], 2).tolist(),
                "base_corners_mm": np.round(p.corners_mm(), 3).tolist(),
                "apex_mm": np.round(p.apex_mm(), 3).tolist(),
                "apex_px": np.round(camera.project_mm(p.apex_mm()[None])[0], 2).tolist(),
                "axis_tilt_deg": round(p.axis_tilt_deg(), 2),
                "supported_by": list(p.supported_by),
                "hidden": p.hidden,
                "covers": list(p.covers),
            }
        )
    scores: dict[str, int] = {}
    visible: dict[str, int] = {}
    for p in scene.pieces:
        scores[p.color] = scores.get(p.color, 0) + p.points
        visible[p.color] = visible.get(p.color, 0) + (0 if p.hidden else p.points)
    return {
        "game": GAME,
        "pieces": pieces,
        "scores": scores,
        "scores_visible": visible,
        "undecided_piece_ids": [p.piece_id for p in scene.pieces if p.hidden],
        "start_lines": [
            {
                "p0_mm": np.round(s.p0_mm, 2).tolist(),
                "p1_mm": np.round(s.p1_mm, 2).tolist(),
                "width_mm": round(s.width_mm, 2),
                "color": s.color,
            }
            for s in scene.start_lines
        ],
        "calibration": {"source": "simulation", "camera": camera.to_dict()},
    }


def ice_camera(
    rng: np.random.Generator,
    image_size_wh_px: tuple[int, int],
    *,
    tilt_range_deg: tuple[float, float] = (0.0, 35.0),
    distance_range_mm: tuple[float, float] = (1000.0, 2000.0),
) -> CameraModel:
    """1-2 m from the table, up to 35 deg off vertical, zoomed so a small base spans >= ~25 px everywhere."""
    w, _ = image_size_wh_px
    dist = float(rng.uniform(*distance_range_mm))
    tilt = float(rng.uniform(*tilt_range_deg))
    hfov = math.radians(rng.uniform(38.0, 60.0))
    # small base 14.3 mm >= 25 px at the far side of the view (up to ~1.35 x the axis distance when oblique)
    need = 28.0 / PYRAMID_SIZES["small"][0] * dist * (1.0 + 0.012 * tilt)
    focal = max((w / 2) / math.tan(hfov / 2), need * w / 1920.0)
    return oblique_camera(
        rng,
        target_mm=(0.0, 0.0, 0.0),
        distance_mm=dist,
        tilt_deg=tilt,
        focal_px=focal,
        image_size_wh_px=image_size_wh_px,
    )


def generate_ice_tiddlywinks(
    rng: np.random.Generator,
    out_dir,
    name: str,
    size_wh: tuple[int, int] = (1920, 1080),
    *,
    spec: IceSceneSpec | None = None,
    tilt_range_deg: tuple[float, float] = (0.0, 35.0),
    jpeg_quality: int = 85,
    supersample: int | None = None,
):
    """Render one Ice Tiddly Winks photo with truth: writes ``<name>.jpg`` and ``<name>.json``."""
    if spec is None:
        spec = IceSceneSpec(
            upright=int(rng.integers(4, 9)),
            lying=int(rng.integers(1, 4)),
            standing_on_lying=int(rng.integers(0, 3)),
            stacked=int(rng.integers(0, 2)),
            covered=int(rng.integers(0, 2)),
            start_lines=int(rng.integers(0, 2)),
        )
    camera = ice_camera(rng, size_wh, tilt_range_deg=tilt_range_deg)
    scene = random_ice_scene(rng, camera, spec)
    lighting = Lighting.random(rng)
    if supersample is None:  # 3 x 3 rays per pixel at HD; pieces span more pixels on bigger frames
        supersample = 3 if size_wh[0] * size_wh[1] <= 2_500_000 else 2
    linear = render_ice_scene(scene, camera, lighting, rng, supersample=supersample)
    settings = PhotoSettings.random(rng, motion_blur_probability=0.0)
    bgr = finish_photo(linear, rng, settings=settings)
    truth = ice_truth(scene, camera)
    return write_image_and_truth(out_dir, name, bgr, truth, jpeg_quality=jpeg_quality)


def simulate_ice_tiddlywinks(out_dir, *, count: int, seed: int, size_wh_px: tuple[int, int]) -> list:
    """``tableref simulate`` generator: ``count`` photos; item ``i`` from ``default_rng([seed, i])``.

    Files are named by game and index, so the same seed writes the same files.
    """
    paths = []
    for i in range(count):
        jpg, _ = generate_ice_tiddlywinks(
            np.random.default_rng([seed, i]), out_dir, f"ice_tiddlywinks_{i:03d}", size_wh_px
        )
        paths.append(jpg)
    return paths
