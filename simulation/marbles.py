"""Ring-marbles renders: glass marbles and tolleys on the raised sand ring, with exact truth (RULES.md 4).

Frame: origin at the ring centre on the ring's top plane (z = 0), z up, mm; the ground is at z = -76.2. The
ring's top is flat out to R = 914.4 mm, then a soft sand shoulder falls to the ground over ``RIM_WIDTH_MM``.
Marbles are exact spheres: each visible pixel refracts through the ball (Snell at entry and exit, n = 1.52)
to the sand behind it, so the sand shows inverted through the glass; cat's-eye vanes are planes through the
ball's axis met on the way through. Shadows are the ball's exact projection along an area light, lightened by
the glass, with the ball-lens caustic as a bright spot on the far side from the light. The raised ring hides the
ground (and balls lying on it) close behind its rim; a knocked-off ball is only placed where its centre shows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import CameraModel
from simulation.camera_rig import random_camera
from simulation.photo import PhotoSettings, finish_photo
from simulation.pyramids_marbles_common import (
    BAND_ROWS,
    Fbm,
    Lighting,
    Noise2D,
    camera_rays,
    downsample,
    fresnel_schlick,
    padded_bbox,
    patch_groups,
    pixel_block,
    reflect,
    smoothstep,
    sphere_intersect,
    write_image_and_truth,
)

GAME = "marbles"

RING_RADIUS_MM = 914.4  # 6 ft diameter (MB 1)
RING_HEIGHT_MM = 76.2  # raised about 3 in (MB 1)
RIM_WIDTH_MM = 40.0  # plan width of the soft sand shoulder outside R (by eye: sand slumps at ~60 deg)
MARBLE_DIAMETER_MM = 12.7  # MB 3
TOLLEY_DIAMETER_RANGE_MM = (16.0, 19.05)  # MB 4: up to 3/4 in
LATTICE_SPACING_MM = 12.7  # close-packed group: touching marbles (RULES.md 4.1)
GLASS_IOR = 1.52
VANES = 3  # cat's-eye: three coloured blades through the axis
VANE_HALF_WIDTH_RATIO = 0.5  # blade half-width at the equator, of the ball radius
GLASS_F0 = 0.043  # ((n - 1) / (n + 1))^2 for n = 1.52

_MARBLE_TINTS = [(0.93, 0.97, 0.93), (0.90, 0.96, 0.98), (0.97, 0.97, 0.97), (0.85, 0.95, 0.88)]
_VANE_RGB = [
    (0.75, 0.06, 0.04),
    (0.05, 0.18, 0.70),
    (0.85, 0.55, 0.03),
    (0.05, 0.50, 0.12),
    (0.8, 0.8, 0.78),
    (0.55, 0.05, 0.45),
    (0.9, 0.3, 0.02),
]
# opaque swirl glass: base colours well away from sand and soil (milky white, milky blue, jade, oxblood, ink)
_SWIRL_BASE = [
    (0.82, 0.82, 0.80),
    (0.22, 0.42, 0.78),
    (0.10, 0.45, 0.25),
    (0.42, 0.05, 0.04),
    (0.04, 0.04, 0.06),
]


def _random_rotation(rng: np.random.Generator) -> np.ndarray:
    q = rng.standard_normal(4)
    q /= np.linalg.norm(q)
    a, b, c, d = q
    return np.array(
        [
            [a * a + b * b - c * c - d * d, 2 * (b * c - a * d), 2 * (b * d + a * c)],
            [2 * (b * c + a * d), a * a - b * b + c * c - d * d, 2 * (c * d - a * b)],
            [2 * (b * d - a * c), 2 * (c * d + a * b), a * a - b * b - c * c + d * d],
        ]
    )


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Ball:
    """A marble or tolley: ``center_mm`` is the sphere centre (3-D, ring frame)."""

    piece_id: str
    kind: str  # "marble" | "tolley"
    center_mm: np.ndarray
    diameter_mm: float
    on_ring: bool
    style: str  # "cats_eye" (clear glass, coloured vanes) | "swirl" (opaque banded glass)
    tint_rgb: tuple[float, float, float]  # clear glass: transmittance per 12.7 mm; swirl: body colour
    vane_rgb: tuple[float, float, float]
    orientation: np.ndarray  # local -> ring frame

    def __post_init__(self) -> None:
        if self.kind not in ("marble", "tolley"):
            raise ValueError(f"ball kind must be 'marble' or 'tolley', got {self.kind!r}")
        if self.diameter_mm <= 0:
            raise ValueError(f"ball diameter must be positive, got {self.diameter_mm}")
        object.__setattr__(self, "center_mm", np.asarray(self.center_mm, float).reshape(3))

    @property
    def radius_mm(self) -> float:
        return self.diameter_mm / 2


def make_ball(
    rng: np.random.Generator, piece_id: str, kind: str, xy_mm, *, diameter_mm: float | None = None
) -> Ball:
    """A ball resting on the ring top (plan radius <= R) or on the ground outside the rim."""
    if diameter_mm is None:
        diameter_mm = (
            MARBLE_DIAMETER_MM if kind == "marble" else float(rng.uniform(*TOLLEY_DIAMETER_RANGE_MM))
        )
    r = diameter_mm / 2
    plan_r = float(np.hypot(*xy_mm))
    on = plan_r <= RING_RADIUS_MM
    if not on and plan_r < RING_RADIUS_MM + RIM_WIDTH_MM + r:
        raise ValueError(f"ball at plan radius {plan_r:.1f} mm would rest on the rim slope")
    z = r if on else r - RING_HEIGHT_MM
    if kind == "marble":
        style = "cats_eye" if rng.random() < 0.8 else "swirl"
    else:
        style = str(rng.choice(["swirl", "cats_eye", "swirl"]))
    tint = _MARBLE_TINTS[int(rng.integers(len(_MARBLE_TINTS)))]
    if style == "swirl":  # for opaque glass the "tint" is the body colour
        tint = _SWIRL_BASE[int(rng.integers(len(_SWIRL_BASE)))]
    if kind == "tolley" and style == "cats_eye":
        tint = tuple(float(v) for v in np.asarray(_VANE_RGB[int(rng.integers(len(_VANE_RGB)))]) * 0.4 + 0.55)
    vane = _VANE_RGB[int(rng.integers(len(_VANE_RGB)))]
    return Ball(
        piece_id=piece_id,
        kind=kind,
        center_mm=np.array([xy_mm[0], xy_mm[1], z]),
        diameter_mm=diameter_mm,
        on_ring=on,
        style=style,
        tint_rgb=tint,
        vane_rgb=vane,
        orientation=_random_rotation(rng),
    )


# --- scenes ---------------------------------------------------------------------------------------------


def close_packed_group(n: int, *, rotation_rad: float = 0.0, offset_mm=(0.0, 0.0)) -> np.ndarray:
    """Plan centres (n, 2) of the ``n`` triangular-lattice points nearest the ring centre (RULES.md 4.1).

    The lattice (spacing 12.7 mm, touching marbles) is turned by ``rotation_rad`` and shifted by
    ``offset_mm``; a small shift breaks the ties between equidistant shells deterministically.
    """
    k = np.arange(-8, 9)
    i, j = np.meshgrid(k, k)
    pts = np.column_stack([(i + 0.5 * j).ravel(), (j * math.sqrt(3) / 2).ravel()]) * LATTICE_SPACING_MM
    c, s = math.cos(rotation_rad), math.sin(rotation_rad)
    pts = pts @ np.array([[c, s], [-s, c]]) + np.asarray(offset_mm, float)
    order = np.lexsort((np.arctan2(pts[:, 1], pts[:, 0]), np.round(np.linalg.norm(pts, axis=1), 6)))
    return pts[order[:n]]


@dataclass(frozen=True, slots=True, kw_only=True)
class MarblesScene:
    balls: tuple[Ball, ...]
    ground: str  # "grass" | "earth" | "pavement"
    scribed_line: tuple[tuple[float, float], tuple[float, float]] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MarblesSceneSpec:
    """What lies on and around the ring."""

    group: int = 0  # close-packed opening group of this many (13, 25, 37, 49); 0 for none
    scatter_on: int = 0  # marbles scattered on the ring
    scatter_off: int = 0  # marbles knocked off onto the ground
    tolleys_on: int = 0
    tolleys_off: int = 0
    scribed_line: bool = False
    ground: str = ""  # empty: random
    framing: str = "ring"  # "ring": the whole ring; "centre": zoomed on the middle; "edge": a stretch of rim


def _free(xy: np.ndarray, r: float, placed: list[tuple[np.ndarray, float]], gap: float = 0.5) -> bool:
    return all(np.hypot(*(xy - p)) >= r + q + gap for p, q in placed)


def random_marbles_scene(
    rng: np.random.Generator, spec: MarblesSceneSpec, camera: CameraModel
) -> MarblesScene:
    """Balls laid out without overlaps; off-ring balls only where the camera sees them."""
    ground = spec.ground or str(rng.choice(["grass", "earth", "pavement"]))
    balls: list[Ball] = []
    placed: list[tuple[np.ndarray, float]] = []
    w, h = camera.image_size_wh_px
    m_id = iter(range(1, 10_000))
    t_id = iter(range(1, 10_000))

    def visible(xy: np.ndarray, z: float) -> bool:
        px = camera.project_mm(np.array([[xy[0], xy[1], z]]))[0]
        if not (0.03 * w < px[0] < 0.97 * w and 0.03 * h < px[1] < 0.97 * h):
            return False
        if z > 0:
            return True
        # on the ground: the raised ring must not hide the ball's centre from the camera
        q = np.array([xy[0], xy[1], z])
        ray = q - camera.center_mm
        dist = float(np.linalg.norm(ray))
        P, _, _ = _trace_ground(camera.center_mm, (ray / dist)[None])
        return float(np.linalg.norm(P[0] - camera.center_mm)) >= dist - (z + RING_HEIGHT_MM)

    if spec.group:
        for xy in close_packed_group(
            spec.group, rotation_rad=rng.uniform(0, math.pi / 3), offset_mm=rng.uniform(-2.5, 2.5, 2)
        ):
            balls.append(make_ball(rng, f"m{next(m_id)}", "marble", xy, diameter_mm=MARBLE_DIAMETER_MM))
            placed.append((xy, MARBLE_DIAMETER_MM / 2))

    def scatter(count: int, kind: str, on: bool, near_centre: bool) -> None:
        for _ in range(count):
            for _try in range(200):
                d = MARBLE_DIAMETER_MM if kind == "marble" else float(rng.uniform(*TOLLEY_DIAMETER_RANGE_MM))
                if on:
                    rmax = RING_RADIUS_MM - 15.0
                    rad = (
                        rmax * math.sqrt(rng.random()) * (0.45 if near_centre and rng.random() < 0.6 else 1.0)
                    )
                else:
                    rad = RING_RADIUS_MM + RIM_WIDTH_MM + d / 2 + 3.0 + rng.exponential(120.0)
                ang = rng.uniform(0, 2 * math.pi)
                xy = np.array([rad * math.cos(ang), rad * math.sin(ang)])
                z = d / 2 if on else d / 2 - RING_HEIGHT_MM
                if not visible(xy, z) or not _free(xy, d / 2, placed):
                    continue
                pid = f"m{next(m_id)}" if kind == "marble" else f"t{next(t_id)}"
                balls.append(make_ball(rng, pid, kind, xy, diameter_mm=d))
                placed.append((xy, d / 2))
                break

    scatter(spec.scatter_on, "marble", True, spec.framing != "edge")
    scatter(spec.scatter_off, "marble", False, False)
    scatter(spec.tolleys_on, "tolley", True, spec.framing != "edge")
    scatter(spec.tolleys_off, "tolley", False, False)
    line = None
    if spec.scribed_line:
        ang = rng.uniform(0, math.pi)
        e = np.array([math.cos(ang), math.sin(ang)]) * (RING_RADIUS_MM - 30.0)
        off = np.array([-e[1], e[0]]) / np.linalg.norm(e) * rng.uniform(-25, 25)
        line = (tuple(np.round(-e + off, 2)), tuple(np.round(e + off, 2)))
    return MarblesScene(balls=tuple(balls), ground=ground, scribed_line=line)


def marbles_camera(rng: np.random.Generator, image_size_wh_px: tuple[int, int], framing: str) -> CameraModel:
    """1.5-2.2 m above the ring, 0-25 deg tilt (the shared rig), framing the ring, its middle or its edge."""
    w, h = image_size_wh_px
    aspect = w / h
    if framing == "centre":
        span = float(rng.uniform(380.0, 650.0))
        return random_camera(rng, image_size_wh_px=(w, h), look_area_mm=(span * aspect, span))
    if framing == "edge":
        cam = random_camera(rng, image_size_wh_px=(w, h), look_area_mm=(900.0 * aspect, 900.0))
        # slide the rig sideways so the view straddles the rim: same pose, shifted target
        ang = rng.uniform(0, 2 * math.pi)
        shift = np.array([math.cos(ang), math.sin(ang), 0.0]) * (RING_RADIUS_MM - rng.uniform(80, 250))
        tvec = cam.tvec - cam.R @ shift
        return CameraModel(K=cam.K, dist=cam.dist, rvec=cam.rvec, tvec=tvec, image_size_wh_px=(w, h))
    cam = random_camera(rng, image_size_wh_px=(w, h), look_area_mm=(1800.0, 1800.0))
    # refit the focal length to the round ring (the rig fits a rectangle's corners): the outer foot of the rim
    # spans ``fill`` of the limiting image side
    a = np.linspace(0, 2 * math.pi, 90, endpoint=False)
    foot = RING_RADIUS_MM + RIM_WIDTH_MM
    rim = np.column_stack([foot * np.cos(a), foot * np.sin(a), np.full_like(a, -RING_HEIGHT_MM)])
    xc = (cam.R @ rim.T).T + cam.tvec
    xn, yn = xc[:, 0] / xc[:, 2], xc[:, 1] / xc[:, 2]
    cx, cy = cam.K[0, 2], cam.K[1, 2]
    limit = min(
        cx / max(-xn.min(), 1e-9),
        (w - 1 - cx) / max(xn.max(), 1e-9),
        cy / max(-yn.min(), 1e-9),
        (h - 1 - cy) / max(yn.max(), 1e-9),
    )
    K = cam.K.copy()
    K[0, 0] = K[1, 1] = float(rng.uniform(1.0, 1.08)) * limit
    return CameraModel(K=K, dist=cam.dist, rvec=cam.rvec, tvec=cam.tvec, image_size_wh_px=(w, h))


# --- surfaces -------------------------------------------------------------------------------------------


def ring_height_mm(r: np.ndarray) -> np.ndarray:
    """Surface height of the ring (0 on top, falling over the soft rim to the ground at -76.2)."""
    s = np.clip((r - RING_RADIUS_MM) / RIM_WIDTH_MM, 0.0, 1.0)
    return -RING_HEIGHT_MM * s * s * (3 - 2 * s)


def _ring_slope(r: np.ndarray) -> np.ndarray:
    s = np.clip((r - RING_RADIUS_MM) / RIM_WIDTH_MM, 0.0, 1.0)
    return -RING_HEIGHT_MM * 6 * s * (1 - s) / RIM_WIDTH_MM


class _Surfaces:
    """Albedo and bump of the sand (ring top and rim) and of the ground around the ring."""

    def __init__(self, rng: np.random.Generator, ground: str, line):
        self.ground = ground
        self.line = line
        self.sand_rgb = np.asarray(
            [(0.50, 0.40, 0.26), (0.56, 0.47, 0.33), (0.46, 0.33, 0.20)][int(rng.integers(3))]
        ) * rng.uniform(0.9, 1.05)
        self.grain = Noise2D(rng, 0.45)
        self.grain2 = Noise2D(rng, 1.3)
        self.speck = Noise2D(rng, 0.7)
        self.scuff = Fbm(rng, 70.0, 3)
        self.broad = Fbm(rng, 600.0, 2)
        self.bump = Noise2D(rng, 2.2)
        self.line_wobble = Fbm(rng, 150.0, 2)
        self.g1 = Noise2D(rng, (0.7, 5.0))
        self.g2 = Noise2D(rng, (5.0, 0.7))
        self.g3 = Noise2D(rng, 5.0)  # pebbles and grass tufts
        self.g4 = Noise2D(rng, 22.0)  # clods and bare patches
        self.clump = Fbm(rng, 120.0, 3)
        self.slab_mm = float(rng.uniform(450.0, 650.0))
        self.slab_tone = rng.uniform(0.85, 1.15, 256)

    def sand_albedo(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        g = 0.8 + 0.28 * self.grain(x, y) + 0.14 * self.grain2(x, y)
        sp = self.speck(x, y)
        g = g * np.where(sp > 0.82, 0.55, 1.0) * np.where(sp < 0.1, 1.25, 1.0)
        g = g * (0.9 + 0.2 * self.scuff(x, y)) * (0.92 + 0.16 * self.broad(x, y))
        return self.sand_rgb[None] * g[:, None]

    def ground_albedo(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        if self.ground == "grass":
            blades = 0.5 * self.g1(x, y) + 0.5 * self.g2(x, y)
            tuft = self.g3(x, y)
            green = np.array([0.045, 0.13, 0.025])
            straw = np.array([0.20, 0.18, 0.07])
            mix = np.clip((self.clump(x, y) - 0.5) * 1.2 + 0.12, 0, 0.5) + 0.25 * (self.g4(x, y) > 0.78)
            col = green * (1 - mix[:, None]) + straw * mix[:, None]
            return col * (0.45 + 0.8 * blades**1.5 + 0.35 * tuft)[:, None]
        if self.ground == "earth":
            pebble = self.g3(x, y)
            clod = self.g4(x, y)
            col = np.array([0.15, 0.10, 0.065]) * (0.7 + 0.4 * self.clump(x, y) + 0.3 * (clod - 0.5))[:, None]
            shade = 0.75 + 0.5 * self.grain2(x, y)
            shade = np.where(pebble > 0.82, 1.7, np.where(pebble < 0.12, 0.55, shade))
            return col * shade[:, None]
        # pavement: square slabs with dark joints and aggregate speckle
        i = np.floor(x / self.slab_mm).astype(int)
        j = np.floor(y / self.slab_mm).astype(int)
        tone = self.slab_tone[(i * 31 + j * 17) % 256]
        jx = np.abs(x / self.slab_mm - np.round(x / self.slab_mm)) * self.slab_mm
        jy = np.abs(y / self.slab_mm - np.round(y / self.slab_mm)) * self.slab_mm
        joint = 1.0 - 0.7 * smoothstep(4.0, 1.5, np.minimum(jx, jy))
        col = np.array([0.24, 0.23, 0.21]) * (tone * joint * (0.8 + 0.3 * self.grain2(x, y)))[:, None]
        return col * (0.9 + 0.2 * self.clump(x, y))[:, None]

    def sand_normal(self, x: np.ndarray, y: np.ndarray, base_n: np.ndarray) -> np.ndarray:
        """Bumpy grains, plus the scribed groove if any."""
        e = 0.4
        h0 = self.bump(x, y)
        gx = (self.bump(x + e, y) - h0) / e * 0.35
        gy = (self.bump(x, y + e) - h0) / e * 0.35
        if self.line is not None:
            p0, p1 = np.asarray(self.line[0]), np.asarray(self.line[1])
            u = (p1 - p0) / np.linalg.norm(p1 - p0)
            nrm = np.array([-u[1], u[0]])
            along = (x - p0[0]) * u[0] + (y - p0[1]) * u[1]
            dist = (
                (x - p0[0]) * nrm[0]
                + (y - p0[1]) * nrm[1]
                + (self.line_wobble(along, 0.0 * along) - 0.5) * 6.0
            )
            inside = (along > 0) & (along < np.linalg.norm(p1 - p0))
            width = 1.6
            # groove height -0.9 exp(-(dist/width)^2): its slope tilts the normal across the line
            slope = 0.9 * 2 * dist / width**2 * np.exp(-((dist / width) ** 2)) * inside
            gx = gx + slope * nrm[0]
            gy = gy + slope * nrm[1]
        n = base_n + np.column_stack([-gx, -gy, np.zeros_like(gx)])
        return n / np.linalg.norm(n, axis=1, keepdims=True)


def _trace_ground(o: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """First hit of rays on the ring (top, rim) or ground: points (N, 3), normals (N, 3), on-sand mask."""
    n_rays = len(d)
    t_top = -o[2] / d[:, 2]
    P = o + t_top[:, None] * d
    r_top = np.hypot(P[:, 0], P[:, 1])
    t_gnd = (-RING_HEIGHT_MM - o[2]) / d[:, 2]
    normal = np.tile([0.0, 0.0, 1.0], (n_rays, 1))
    sand = r_top <= RING_RADIUS_MM
    rest = ~sand
    if rest.any():
        A = P[rest, :2]
        B = (o + t_gnd[rest, None] * d[rest])[:, :2]
        AB = B - A
        lam = np.clip(-np.sum(A * AB, 1) / np.maximum(np.sum(AB * AB, 1), 1e-9), 0, 1)
        closest = np.hypot(*(A + lam[:, None] * AB).T)
        cand = np.flatnonzero(rest)[closest < RING_RADIUS_MM + RIM_WIDTH_MM]
        far = np.flatnonzero(rest)[closest >= RING_RADIUS_MM + RIM_WIDTH_MM]
        P[far] = o + t_gnd[far, None] * d[far]
        if len(cand):
            ta, tb = t_top[cand], t_gnd[cand]
            steps = 40
            ts = ta[:, None] + (tb - ta)[:, None] * np.linspace(0, 1, steps + 1)[None]
            X = o[None, None] + ts[..., None] * d[cand, None, :]
            below = X[..., 2] <= ring_height_mm(np.hypot(X[..., 0], X[..., 1])) + 1e-9
            below[:, -1] = True
            k = np.argmax(below, axis=1)
            lo = ts[np.arange(len(cand)), np.maximum(k - 1, 0)]
            hi = ts[np.arange(len(cand)), k]
            dc = d[cand]
            for _ in range(14):
                mid = 0.5 * (lo + hi)
                Xm = o + mid[:, None] * dc
                bel = Xm[:, 2] <= ring_height_mm(np.hypot(Xm[:, 0], Xm[:, 1]))
                hi = np.where(bel, mid, hi)
                lo = np.where(bel, lo, mid)
            Xh = o + hi[:, None] * dc
            P[cand] = Xh
            r = np.hypot(Xh[:, 0], Xh[:, 1])
            on_rim = r < RING_RADIUS_MM + RIM_WIDTH_MM
            slope = _ring_slope(r)
            radial = Xh[:, :2] / np.maximum(r, 1e-9)[:, None]
            nr = np.column_stack([-slope[:, None] * radial, np.ones(len(r))])
            normal[cand] = nr / np.linalg.norm(nr, axis=1, keepdims=True)
            sand[cand[on_rim]] = True
    return P, normal, sand


def _ring_shadow(P: np.ndarray, light_dirs: np.ndarray) -> np.ndarray:
    """Share of the key light the ring itself blocks at ground points (the raised ring's cast shadow)."""
    lit = np.zeros(len(P))
    zs = np.linspace(0.0, 1.0, 10)[1:]
    for L in light_dirs:
        rise = -P[:, 2]  # height up to the ring top
        s = rise[:, None] * zs[None] / L[2]
        X = P[:, None, :] + s[..., None] * L[None, None]
        inside = X[..., 2] < ring_height_mm(np.hypot(X[..., 0], X[..., 1])) - 1e-6
        lit += ~inside.any(axis=1)
    return lit / len(light_dirs)


# --- rendering -------------------------------------------------------------------------------------------


def _shade_background(
    surf: _Surfaces,
    lighting: Lighting,
    P: np.ndarray,
    n_geo: np.ndarray,
    sand: np.ndarray,
    d: np.ndarray,
    shadow: np.ndarray,
    occ: np.ndarray,
    light_dirs: np.ndarray,
) -> np.ndarray:
    alb = np.empty((len(P), 3))
    n = n_geo.copy()
    if sand.any():
        alb[sand] = surf.sand_albedo(P[sand, 0], P[sand, 1])
        n[sand] = surf.sand_normal(P[sand, 0], P[sand, 1], n_geo[sand])
    if (~sand).any():
        alb[~sand] = surf.ground_albedo(P[~sand, 0], P[~sand, 1])
    near_ring = (~sand) & (
        np.hypot(P[:, 0], P[:, 1])
        < RING_RADIUS_MM + RIM_WIDTH_MM + RING_HEIGHT_MM / max(lighting.to_light[2], 0.2) * 1.2 + 30
    )
    ring_lit = np.ones(len(P))
    if near_ring.any():
        ring_lit[near_ring] = _ring_shadow(P[near_ring], light_dirs[:4])
    ndl = np.clip(n @ lighting.to_light, 0, 1)
    key = lighting.key_rgb[None] * (ndl * ring_lit)[:, None] * shadow
    amb = lighting.ambient_rgb[None] * (occ * (0.6 + 0.4 * n[:, 2]))[:, None]
    # grass blades and sand are rough: a faint sheen only
    spec = fresnel_schlick(np.sum(d * n, 1), 0.02)[:, None] * lighting.environment(reflect(d, n)) * 0.15
    return alb * (key + amb) + spec


def _ball_effects(
    balls: list[Ball], lighting: Lighting, P: np.ndarray, sand: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Tinted soft shadows with the ball-lens caustic (RGB factor on the key light) and contact occlusion."""
    L = lighting.to_light
    pen = math.tan(math.radians(lighting.radius_deg))
    shadow = np.ones((len(P), 3))
    occ = np.ones(len(P))
    for b in balls:
        r = b.radius_mm
        rel = b.center_mm[None] - P
        s = rel @ L
        perp = np.linalg.norm(rel - s[:, None] * L[None], axis=1)
        soft = np.maximum(s, 0) * pen + 0.15
        cover = smoothstep(r + soft, r - soft, perp) * (s > 0)
        trans = np.asarray(b.tint_rgb) * (0.45 if b.style == "cats_eye" else 0.08)
        # ball lens: light converges ~1.46 r beyond the centre; the spot is smallest near that distance
        f = GLASS_IOR * r / (2 * (GLASS_IOR - 1))
        spot_r = np.maximum(r * np.abs(s - f) / f, 0.35 * r)
        gain = np.minimum((r / spot_r) ** 2 * 0.5, 6.0) if b.style == "cats_eye" else 0.0
        caustic = gain * np.exp(-((perp / spot_r) ** 2)) * (s > 0)
        shadow *= 1 - cover[:, None] * (1 - trans[None]) + (caustic[:, None] * np.asarray(b.tint_rgb)[None])
        plan = np.hypot(rel[:, 0], rel[:, 1])
        same = sand == b.on_ring
        occ *= 1 - same * (
            0.55 * np.exp(-((plan / (0.38 * r)) ** 2)) + 0.25 * np.exp(-((plan / (1.1 * r)) ** 2))
        )
    return shadow, occ


def _shade_balls(
    balls: list[Ball], surf: _Surfaces, lighting: Lighting, o: np.ndarray, d: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Colour of rays (N) that hit a ball, and the hit mask."""
    centers = np.array([b.center_mm for b in balls])
    radii = np.array([b.radius_mm for b in balls])
    t0, _ = sphere_intersect(o, d, centers, radii)
    k = np.argmin(t0, axis=1)
    tk = t0[np.arange(len(d)), k]
    hit = np.isfinite(tk)
    # a ball on the ground close behind the raised ring is hidden by it where the ring is nearer on the ray
    low = np.flatnonzero(hit & ~np.array([b.on_ring for b in balls])[k])
    if len(low):
        P_bg, _, _ = _trace_ground(o, d[low])
        hit[low[np.linalg.norm(P_bg - o, axis=1) < tk[low]]] = False
    out = np.zeros((len(d), 3))
    if not hit.any():
        return out, hit
    idx = np.flatnonzero(hit)
    kk = k[idx]
    dd = d[idx]
    C = centers[kk]
    R = radii[kk]
    E = o + tk[idx, None] * dd
    n = (E - C) / R[:, None]
    cos_i = -np.sum(dd * n, 1)
    F = fresnel_schlick(cos_i, GLASS_F0)[:, None]
    refl = lighting.environment(reflect(dd, n))
    # refraction in, across the ball, and out (total internal reflection cannot occur leaving a sphere)
    eta = 1.0 / GLASS_IOR
    k_in = 1 - eta**2 * (1 - cos_i**2)
    d_in = eta * dd + (eta * cos_i - np.sqrt(np.maximum(k_in, 0)))[:, None] * n
    chord = -2 * np.sum((E - C) * d_in, 1)
    X = E + chord[:, None] * d_in
    nx = (X - C) / R[:, None]
    cos_x = np.sum(d_in * nx, 1)
    k_out = 1 - GLASS_IOR**2 * (1 - cos_x**2)
    d_out = GLASS_IOR * d_in + (-GLASS_IOR * cos_x + np.sqrt(np.maximum(k_out, 0)))[:, None] * nx
    d_out /= np.linalg.norm(d_out, axis=1, keepdims=True)
    tint = np.array([b.tint_rgb for b in balls])[kk]
    # what the refracted ray sees: the surface the ball rests on (lit, in the ball's own light), or sky
    base_z = np.where(np.array([b.on_ring for b in balls])[kk], 0.0, -RING_HEIGHT_MM)
    down = d_out[:, 2] < -0.05
    seen = lighting.environment(d_out)
    if down.any():
        tq = (base_z[down] - X[down, 2]) / d_out[down, 2]
        Q = X[down] + tq[:, None] * d_out[down]
        on_sand = base_z[down] == 0.0
        alb = np.where(
            on_sand[:, None], surf.sand_albedo(Q[:, 0], Q[:, 1]), surf.ground_albedo(Q[:, 0], Q[:, 1])
        )
        # the ball's own shadow lies right behind it: light reaching Q passes through the ball (tinted, ~45 %)
        L = lighting.to_light
        rel = C[down] - Q
        along = rel @ L
        perp = np.linalg.norm(rel - along[:, None] * L[None], axis=1)
        own = smoothstep(R[down] * 1.05, R[down] * 0.9, perp)[:, None] * (along > 0)[:, None]
        key_in = 1.0 - own * (1.0 - 0.45 * tint[down])
        contact = 1.0 - 0.5 * np.exp(-((np.hypot(rel[:, 0], rel[:, 1]) / (0.5 * R[down])) ** 2))
        seen[down] = alb * (
            lighting.key_rgb * lighting.to_light[2] * key_in + lighting.ambient_rgb * (0.8 * contact)[:, None]
        )
    vane = np.array([b.vane_rgb for b in balls])[kk]
    inner = tint ** (chord / 12.7)[:, None] * seen
    # cat's-eye vanes: nv planes through the ball's local z axis, met along the chord
    style = np.array([b.style for b in balls])[kk]
    rot = np.array([b.orientation for b in balls])[kk]
    El = np.einsum("nji,nj->ni", rot, E - C)
    Dl = np.einsum("nji,nj->ni", rot, d_in)
    best = np.full(len(idx), np.inf)
    facing = np.zeros(len(idx))
    for j in range(VANES):
        th = j * math.pi / VANES
        pn = np.array([-math.sin(th), math.cos(th), 0.0])
        denom = Dl @ pn
        with np.errstate(divide="ignore", invalid="ignore"):
            tv = -(El @ pn) / denom
        Q = El + tv[:, None] * Dl
        along = Q[:, 0] * math.cos(th) + Q[:, 1] * math.sin(th)
        zl = Q[:, 2] / R
        halfw = (
            VANE_HALF_WIDTH_RATIO
            * R
            * np.sqrt(np.clip(1 - (zl / 0.92) ** 2, 0, 1))
            * (0.85 + 0.15 * np.cos(7 * zl + j))
        )
        ok = (tv > 0) & (tv < chord) & (np.abs(along) < halfw) & (style == "cats_eye")
        closer = ok & (tv < best)
        best = np.where(closer, tv, best)
        facing = np.where(closer, np.abs(denom), facing)
    has_vane = np.isfinite(best)
    key = lighting.key_rgb * 0.55 + lighting.ambient_rgb * 0.9
    vane_col = vane * key[None] * (0.45 + 0.55 * facing)[:, None] * tint**0.5
    inner = np.where(has_vane[:, None], vane_col, inner)
    # swirl (opaque banded glass): a diffuse surface with bands around the local axis
    sw = style == "swirl"
    if sw.any():
        El_s = El[sw] / R[sw, None]
        band = 0.5 + 0.5 * np.sin(
            3 * np.arctan2(El_s[:, 1], El_s[:, 0]) + 4.0 * El_s[:, 2] + 1.5 * np.sin(5 * El_s[:, 2])
        )
        albedo = tint[sw] * (1 - band[:, None] ** 3) + vane[sw] * band[:, None] ** 3
        ndl = np.clip(n[sw] @ lighting.to_light, 0, 1)
        diff = albedo * (
            lighting.key_rgb * ndl[:, None] + lighting.ambient_rgb * (0.55 + 0.45 * n[sw, 2])[:, None]
        )
        inner[sw] = 0.85 * diff + 0.15 * inner[sw]
    out[idx] = F * refl + (1 - F) * inner
    return out, hit


def render_marbles_scene(
    scene: MarblesScene,
    camera: CameraModel,
    lighting: Lighting,
    rng: np.random.Generator,
    *,
    supersample: int = 3,
) -> np.ndarray:
    """Linear RGB radiance (H, W, 3) of the ring seen by ``camera``."""
    w, h = camera.image_size_wh_px
    surf = _Surfaces(rng, scene.ground, scene.scribed_line)
    light_dirs = lighting.sample_dirs(8)
    img = np.empty((h, w, 3))
    for y0 in range(0, h, BAND_ROWS):  # in bands of rows: bounded memory at 4000 x 3000
        y1 = min(y0 + BAND_ROWS, h)
        o, d = camera.rays_mm(pixel_block(0, y0, w, y1, 1).reshape(-1, 2))
        P, n, sand = _trace_ground(o, d)
        img[y0:y1] = _shade_background(
            surf, lighting, P, n, sand, d, np.ones((len(P), 3)), np.ones(len(P)), light_dirs
        ).reshape(-1, w, 3)
    L = lighting.to_light
    boxes = []
    for b in scene.balls:
        r = b.radius_mm
        c = b.center_mm
        base_z = c[2] - r
        shadow_c = c - ((c[2] - base_z) / L[2]) * L * 2.0
        ext = np.array([[sx, sy, sz] for sx in (-r, r) for sy in (-r, r) for sz in (-r, r)])
        pts = camera.project_mm(np.vstack([c + ext, shadow_c + ext * 1.5]))
        box = padded_bbox(pts, 3.0, (w, h))
        boxes.append(box)
    ss = supersample
    for (x0, y0, x1, y1), idx in patch_groups(boxes):
        group = [scene.balls[j] for j in idx]
        sub = pixel_block(x0, y0, x1, y1, 1).reshape(-1, 2)
        o1, d1 = camera.rays_mm(sub)
        P1, n1, sand1 = _trace_ground(o1, d1)
        shadow, occ = _ball_effects(group, lighting, P1, sand1)
        bg = _shade_background(surf, lighting, P1, n1, sand1, d1, shadow, occ, light_dirs)
        bg = bg.reshape(y1 - y0, x1 - x0, 3)
        blk = pixel_block(x0, y0, x1, y1, ss)
        o2, d2 = camera_rays(camera, blk)
        d2 = d2.reshape(-1, 3)
        col = np.repeat(np.repeat(bg, ss, axis=0), ss, axis=1).reshape(-1, 3)
        ball_col, hit = _shade_balls(group, surf, lighting, o2, d2)
        col[hit] = ball_col[hit]
        img[y0:y1, x0:x1] = downsample(col.reshape((y1 - y0) * ss, (x1 - x0) * ss, 3), ss)
    return img


# --- truth and generator ---------------------------------------------------------------------------------


def ring_ellipse_px(camera: CameraModel) -> dict:
    """``cv2.fitEllipse`` of the projected rim circle (R at z = 0): centre, full axes, angle."""
    a = np.linspace(0, 2 * math.pi, 360, endpoint=False)
    rim = np.column_stack([RING_RADIUS_MM * np.cos(a), RING_RADIUS_MM * np.sin(a), np.zeros_like(a)])
    (cx, cy), (ax1, ax2), ang = cv2.fitEllipse(camera.project_mm(rim).astype(np.float32))
    return {
        "center": [round(cx, 2), round(cy, 2)],
        "axes": [round(ax1, 2), round(ax2, 2)],
        "angle_deg": round(ang, 3),
    }


def marbles_truth(scene: MarblesScene, camera: CameraModel) -> dict:
    pieces = [
        {
            "id": b.piece_id,
            "kind": b.kind,
            "center_mm": np.round(b.center_mm[:2], 3).tolist(),
            "center_z_mm": round(float(b.center_mm[2]), 3),
            "diameter_mm": round(b.diameter_mm, 3),
            "on_ring": b.on_ring,
            "center_px": np.round(camera.project_mm(b.center_mm[None])[0], 2).tolist(),
            "style": b.style,
        }
        for b in scene.balls
    ]
    counts = {
        "marbles_on_ring": sum(b.kind == "marble" and b.on_ring for b in scene.balls),
        "marbles_off_ring": sum(b.kind == "marble" and not b.on_ring for b in scene.balls),
        "tolleys_on_ring": sum(b.kind == "tolley" and b.on_ring for b in scene.balls),
        "tolleys_off_ring": sum(b.kind == "tolley" and not b.on_ring for b in scene.balls),
    }
    truth = {
        "game": GAME,
        "ring": {
            "center_mm": [0.0, 0.0],
            "radius_mm": RING_RADIUS_MM,
            "height_mm": RING_HEIGHT_MM,
            "center_px": np.round(camera.project_mm(np.zeros((1, 3)))[0], 2).tolist(),
            "ellipse_px": ring_ellipse_px(camera),
        },
        "ground": scene.ground,
        "pieces": pieces,
        "counts": counts,
        "calibration": {"source": "simulation", "camera": camera.to_dict()},
    }
    if scene.scribed_line is not None:
        truth["scribed_line"] = {"p0_mm": list(scene.scribed_line[0]), "p1_mm": list(scene.scribed_line[1])}
    return truth


def random_marbles_spec(rng: np.random.Generator) -> MarblesSceneSpec:
    """The generator's first draws for a photo: framing and how many balls of each kind lie where. A test that
    redraws one bench photo takes the same draws in the same order from the same ``rng``."""
    framing = str(rng.choice(["ring", "ring", "centre", "edge"]))
    return MarblesSceneSpec(
        group=int(rng.choice([0, 13, 25, 37, 49])) if framing != "edge" else 0,
        scatter_on=int(rng.integers(3, 25)),
        scatter_off=int(rng.integers(0, 8)),
        tolleys_on=int(rng.integers(0, 3)),
        tolleys_off=int(rng.integers(0, 2)),
        scribed_line=bool(rng.random() < 0.3),
        framing=framing,
    )


def generate_marbles(
    rng: np.random.Generator,
    out_dir,
    name: str,
    size_wh: tuple[int, int] = (1920, 1080),
    *,
    spec: MarblesSceneSpec | None = None,
    jpeg_quality: int = 85,
    supersample: int | None = None,
):
    """Render one ring-marbles photo with truth: writes ``<name>.jpg`` and ``<name>.json``."""
    if spec is None:
        spec = random_marbles_spec(rng)
    camera = marbles_camera(rng, size_wh, spec.framing)
    scene = random_marbles_scene(rng, spec, camera)
    lighting = Lighting.random(rng, elevation_deg=(35.0, 70.0))
    if supersample is None:  # 3 x 3 rays per pixel at HD; pieces span more pixels on bigger frames
        supersample = 3 if size_wh[0] * size_wh[1] <= 2_500_000 else 2
    linear = render_marbles_scene(scene, camera, lighting, rng, supersample=supersample)
    settings = PhotoSettings.random(rng, motion_blur_probability=0.0)
    bgr = finish_photo(linear, rng, settings=settings)
    return write_image_and_truth(out_dir, name, bgr, marbles_truth(scene, camera), jpeg_quality=jpeg_quality)


def simulate_marbles(out_dir, *, count: int, seed: int, size_wh_px: tuple[int, int]) -> list:
    """``tableref simulate`` generator: ``count`` photos; item ``i`` from ``default_rng([seed, i])``.

    Files are named by game and index, so the same seed writes the same files.
    """
    paths = []
    for i in range(count):
        jpg, _ = generate_marbles(np.random.default_rng([seed, i]), out_dir, f"marbles_{i:03d}", size_wh_px)
        paths.append(jpg)
    return paths
