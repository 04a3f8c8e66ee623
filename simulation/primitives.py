"""Analytic ray-traceable primitives in the table frame (mm): discs (winks, squidgers), the pot (a concave cup,
a surface of revolution), ellipsoids (hand, forearm) and oriented boxes (calibration board).

Every primitive answers ``intersect(o, d) -> (t, normal, part)`` for ray origins ``o (N, 3)`` and unit
directions ``d (N, 3)``: ``t`` is ``inf`` where the ray misses, ``normal`` is the shading normal (unit, facing
the ray), ``part`` a small integer naming the surface hit (used for texture and ambient occlusion).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from geometry.constants import POT_BASE_RADIUS_MM, POT_HEIGHT_MM, POT_TOP_RADIUS_MM

_EPS_T = 1e-6


@dataclass
class Material:
    """Linear-RGB albedo and Blinn-Phong parameters; ``alpha`` < 1 makes a surface translucent."""

    albedo: tuple[float, float, float]
    ks: float = 0.0  # Fresnel reflectance at normal incidence (plastics ~0.04)
    roughness_deg: float = 3.0  # angular blur of reflections
    alpha: float = 1.0
    wrap: float = 0.0  # wrapped diffuse (skin, felt): light reaches slightly past the terminator


def _basis(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    e1 = np.cross(n, a)
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(n, e1)


class Primitive:
    """Base class: a bounding box in mm, a material, an optional identity for truth bookkeeping."""

    material: Material
    name: str = ""
    self_shadowing: bool = False
    coarse: bool = False  # large soft objects (a hand) are not supersampled
    lo: np.ndarray
    hi: np.ndarray

    def intersect(self, o: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        raise NotImplementedError

    def albedo_at(self, p: np.ndarray, part: np.ndarray) -> np.ndarray:
        return np.broadcast_to(np.asarray(self.material.albedo, np.float64), (len(p), 3)).copy()

    def ambient_at(self, p: np.ndarray, part: np.ndarray) -> np.ndarray:
        """Ambient-occlusion factor of the surface itself (1 = open sky)."""
        return np.ones(len(p))

    def corners(self) -> np.ndarray:
        lo, hi = self.lo, self.hi
        return np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])


@dataclass(eq=False)
class Disc(Primitive):
    """A flat cylinder (a wink or a squidger) with rounded-edge shading normals.

    ``center`` is the centre of the mid-plane, ``normal`` its axis; the geometry is an exact finite cylinder
    and the rounding of the edge (``bevel_mm``) bends the shading normal, giving the bright rim of real winks.
    """

    center: np.ndarray
    normal: np.ndarray
    radius: float
    half_thickness: float
    material: Material
    bevel_mm: float = 0.45
    name: str = ""
    self_shadowing: bool = False

    def __post_init__(self) -> None:
        self.center = np.asarray(self.center, float)
        n = np.asarray(self.normal, float)
        self.normal = n / np.linalg.norm(n)
        self.e1, self.e2 = _basis(self.normal)
        ext = np.sqrt(np.clip(1.0 - self.normal ** 2, 0, 1)) * self.radius + np.abs(self.normal) * self.half_thickness
        self.lo = self.center - ext - 0.05
        self.hi = self.center + ext + 0.05

    def intersect(self, o, d):
        ol = o - self.center
        oz, dz = ol @ self.normal, d @ self.normal
        ox, oy = ol @ self.e1, ol @ self.e2
        dx, dy = d @ self.e1, d @ self.e2
        with np.errstate(divide="ignore", invalid="ignore"):
            ta = (-self.half_thickness - oz) / dz
            tb = (self.half_thickness - oz) / dz
        par = np.abs(dz) < 1e-12
        inside_slab = np.abs(oz) < self.half_thickness
        s_in = np.where(par, np.where(inside_slab, -np.inf, np.inf), np.minimum(ta, tb))
        s_out = np.where(par, np.where(inside_slab, np.inf, -np.inf), np.maximum(ta, tb))
        a = dx * dx + dy * dy
        b = 2 * (ox * dx + oy * dy)
        c = ox * ox + oy * oy - self.radius ** 2
        disc = b * b - 4 * a * c
        ok = disc >= 0
        sq = np.sqrt(np.where(ok, disc, 0.0))
        apar = a < 1e-14
        with np.errstate(divide="ignore", invalid="ignore"):
            c_in = np.where(apar, np.where(c < 0, -np.inf, np.inf), (-b - sq) / (2 * a))
            c_out = np.where(apar, np.where(c < 0, np.inf, -np.inf), (-b + sq) / (2 * a))
        c_in = np.where(ok | apar, c_in, np.inf)
        c_out = np.where(ok | apar, c_out, -np.inf)
        t_in = np.maximum(s_in, c_in)
        t_out = np.minimum(s_out, c_out)
        hit = (t_in < t_out) & (t_in > _EPS_T)
        t = np.where(hit, t_in, np.inf)
        cap = s_in >= c_in
        tt = np.where(hit, t, 0.0)
        px, py, pz = ox + tt * dx, oy + tt * dy, oz + tt * dz
        rho = np.sqrt(px * px + py * py) + 1e-12
        rx, ry = px / rho, py / rho
        # Cap: face normal, bent towards the radial direction inside the rounded rim.
        sgn = np.where(pz >= 0, 1.0, -1.0)
        f = np.clip((rho - (self.radius - self.bevel_mm)) / self.bevel_mm, 0.0, 1.0)
        ang = f * (0.45 * math.pi)
        cz = np.where(cap, sgn * np.cos(ang), np.clip(pz / self.half_thickness, -1, 1) * 1.1)
        cr = np.where(cap, np.sin(ang), 1.0)
        nl = np.stack([cr * rx, cr * ry, cz], axis=1)
        nl /= np.linalg.norm(nl, axis=1, keepdims=True)
        n = nl[:, :1] * self.e1 + nl[:, 1:2] * self.e2 + nl[:, 2:3] * self.normal
        part = np.where(cap, np.where(sgn > 0, 0, 2), 1)
        return t, n, part


def pot_outer_radius_mm(z: np.ndarray) -> np.ndarray:
    """Outside radius of the concave-sided pot at height z: 19 at the base, 24 at the top (TW 4)."""
    s = np.clip(np.asarray(z, float) / POT_HEIGHT_MM, 0.0, 1.0)
    return POT_BASE_RADIUS_MM + (POT_TOP_RADIUS_MM - POT_BASE_RADIUS_MM) * s ** 1.8


def pot_outer_slope(z: np.ndarray) -> np.ndarray:
    s = np.clip(np.asarray(z, float) / POT_HEIGHT_MM, 1e-6, 1.0)
    return (POT_TOP_RADIUS_MM - POT_BASE_RADIUS_MM) * 1.8 * s ** 0.8 / POT_HEIGHT_MM


POT_WALL_MM = 1.6
POT_FLOOR_MM = 2.5


@dataclass(eq=False)
class Pot(Primitive):
    """The pot: a concave-sided cup standing on the mat at ``center`` (plan), ray-marched then bisected."""

    center_xy: tuple[float, float]
    material: Material
    base_z: float = 0.0
    name: str = "pot"
    self_shadowing: bool = True
    steps: int = 128

    def __post_init__(self) -> None:
        cx, cy = self.center_xy
        R = POT_TOP_RADIUS_MM + 0.05
        self.lo = np.array([cx - R, cy - R, self.base_z - 0.01])
        self.hi = np.array([cx + R, cy + R, self.base_z + POT_HEIGHT_MM + 0.01])

    def _solid(self, p: np.ndarray) -> np.ndarray:
        z = p[..., 2] - self.base_z
        rho = np.hypot(p[..., 0] - self.center_xy[0], p[..., 1] - self.center_xy[1])
        ro = pot_outer_radius_mm(z)
        return (z >= 0) & (z <= POT_HEIGHT_MM) & (rho <= ro) & ((rho >= ro - POT_WALL_MM) | (z <= POT_FLOOR_MM))

    def _march(self, o, d, steps):
        chunk = 16384
        if len(o) > chunk:
            return np.concatenate([self._march(o[i:i + chunk], d[i:i + chunk], steps)
                                   for i in range(0, len(o), chunk)])
        n = len(o)
        t = np.full(n, np.inf)
        if n == 0:
            return t
        # Clip to the bounding cylinder.
        box = Disc(center=np.array([*self.center_xy, self.base_z + POT_HEIGHT_MM / 2]), normal=np.array([0, 0, 1.0]),
                   radius=POT_TOP_RADIUS_MM + 0.05, half_thickness=POT_HEIGHT_MM / 2 + 0.01,
                   material=self.material)
        t0, _, _ = box.intersect(o, d)
        # Origins inside the bounding cylinder (shadow rays from the pot's own floor) start at 0.
        ol = o - box.center
        inside = (np.hypot(ol[:, 0], ol[:, 1]) < box.radius) & (np.abs(ol[:, 2]) < box.half_thickness)
        t0 = np.where(inside, 1e-4, t0)
        cand = np.isfinite(t0)
        if not cand.any():
            return t
        idx = np.nonzero(cand)[0]
        oo, dd, ts = o[idx], d[idx], t0[idx]
        span = 2 * math.hypot(2 * POT_TOP_RADIUS_MM, POT_HEIGHT_MM) / steps
        tk = ts[:, None] + span * 0.5 * np.arange(steps)[None, :]
        pts = oo[:, None, :] + tk[..., None] * dd[:, None, :]
        solid = self._solid(pts)
        anyhit = solid.any(axis=1)
        k = np.argmax(solid, axis=1)
        hi_t = tk[np.arange(len(idx)), k]
        lo_t = np.where(k > 0, tk[np.arange(len(idx)), np.maximum(k - 1, 0)], ts - 1e-4)
        for _ in range(16):
            mid = 0.5 * (lo_t + hi_t)
            s = self._solid(oo + mid[:, None] * dd)
            hi_t = np.where(s, mid, hi_t)
            lo_t = np.where(s, lo_t, mid)
        t[idx[anyhit]] = hi_t[anyhit]
        return t

    def intersect(self, o, d):
        t = self._march(o, d, self.steps)
        hit = np.isfinite(t)
        n = np.zeros_like(o)
        n[:, 2] = 1.0
        part = np.full(len(o), -1)
        if hit.any():
            p = o[hit] + t[hit, None] * d[hit]
            n_h, part_h = self._normal(p, d[hit])
            n[hit] = n_h
            part[hit] = part_h
        return t, n, part

    def _normal(self, p, d):
        z = p[:, 2] - self.base_z
        rx, ry = p[:, 0] - self.center_xy[0], p[:, 1] - self.center_xy[1]
        rho = np.hypot(rx, ry) + 1e-9
        ux, uy = rx / rho, ry / rho
        ro = pot_outer_radius_mm(z)
        ri = ro - POT_WALL_MM
        slope = pot_outer_slope(z)
        dists = np.stack([np.abs(rho - ro), np.abs(rho - ri), np.abs(z - POT_HEIGHT_MM),
                          np.where(rho < ri, np.abs(z - POT_FLOOR_MM), np.inf), np.abs(z)], axis=1)
        part = np.argmin(dists, axis=1)  # 0 outer, 1 inner, 2 rim top, 3 floor, 4 bottom
        outer = np.stack([ux, uy, -slope], axis=1)
        outer /= np.linalg.norm(outer, axis=1, keepdims=True)
        n = np.where(part[:, None] == 0, outer, 0.0)
        n = np.where(part[:, None] == 1, -outer, n)
        # The rim is rounded: bend its normal across the wall thickness.
        f = np.clip((rho - (ri + ro) / 2) / (POT_WALL_MM / 2), -1, 1)
        rim = np.stack([f * 0.8 * ux, f * 0.8 * uy, np.ones_like(f)], axis=1)
        rim /= np.linalg.norm(rim, axis=1, keepdims=True)
        n = np.where(part[:, None] == 2, rim, n)
        n = np.where((part[:, None] == 3), np.array([0, 0, 1.0]), n)
        n = np.where((part[:, None] == 4), np.array([0, 0, -1.0]), n)
        flip = np.sum(n * d, axis=1) > 0
        n[flip] *= -1
        return n, part

    def ambient_at(self, p, part):
        z = np.clip((p[:, 2] - self.base_z) / POT_HEIGHT_MM, 0, 1)
        inner = (part == 1) | (part == 3)
        return np.where(inner, 0.25 + 0.75 * z ** 1.5, 1.0)


@dataclass(eq=False)
class Ellipsoid(Primitive):
    """An ellipsoid with semi-axes ``radii`` along the columns of ``axes`` (3x3 rotation)."""

    center: np.ndarray
    radii: tuple[float, float, float]
    axes: np.ndarray
    material: Material
    name: str = ""
    self_shadowing: bool = False
    coarse: bool = False

    def __post_init__(self) -> None:
        self.center = np.asarray(self.center, float)
        self.axes = np.asarray(self.axes, float)
        r = np.asarray(self.radii, float)
        self.M = self.axes * r[None, :]  # local unit sphere -> world
        self.Minv = np.linalg.inv(self.M)
        ext = np.sqrt(np.sum(self.M ** 2, axis=1))
        self.lo = self.center - ext
        self.hi = self.center + ext

    def intersect(self, o, d):
        ol = (o - self.center) @ self.Minv.T
        dl = d @ self.Minv.T
        a = np.sum(dl * dl, axis=1)
        b = 2 * np.sum(ol * dl, axis=1)
        c = np.sum(ol * ol, axis=1) - 1.0
        disc = b * b - 4 * a * c
        ok = disc >= 0
        sq = np.sqrt(np.where(ok, disc, 0))
        t0 = (-b - sq) / (2 * a)
        t1 = (-b + sq) / (2 * a)
        tt = np.where(t0 > _EPS_T, t0, t1)
        hit = ok & (tt > _EPS_T)
        t = np.where(hit, tt, np.inf)
        pl = ol + np.where(hit, tt, 0)[:, None] * dl
        n = pl @ self.Minv  # gradient: Minv^T p_local, as rows
        n /= np.linalg.norm(n, axis=1, keepdims=True) + 1e-12
        return t, n, np.zeros(len(o), int)


@dataclass(eq=False)
class Box(Primitive):
    """An oriented box; face 5 (+z local) may carry a texture ``texture_fn(u_mm, v_mm) -> albedo (N, 3)``."""

    center: np.ndarray
    axes: np.ndarray  # columns: local x, y, z in the table frame
    half: tuple[float, float, float]
    material: Material
    texture_fn: object = None
    name: str = ""
    self_shadowing: bool = False

    def __post_init__(self) -> None:
        self.center = np.asarray(self.center, float)
        self.axes = np.asarray(self.axes, float)
        h = np.asarray(self.half, float)
        ext = np.abs(self.axes) @ h
        self.lo = self.center - ext
        self.hi = self.center + ext

    def intersect(self, o, d):
        ol = (o - self.center) @ self.axes
        dl = d @ self.axes
        h = np.asarray(self.half, float)
        with np.errstate(divide="ignore", invalid="ignore"):
            ta = (-h - ol) / dl
            tb = (h - ol) / dl
        par = np.abs(dl) < 1e-12
        ins = np.abs(ol) < h
        tmin = np.where(par, np.where(ins, -np.inf, np.inf), np.minimum(ta, tb))
        tmax = np.where(par, np.where(ins, np.inf, -np.inf), np.maximum(ta, tb))
        t_in = tmin.max(axis=1)
        t_out = tmax.min(axis=1)
        axis = tmin.argmax(axis=1)
        hit = (t_in < t_out) & (t_in > _EPS_T)
        t = np.where(hit, t_in, np.inf)
        sign = -np.sign(dl[np.arange(len(o)), axis])
        nl = np.zeros_like(o)
        nl[np.arange(len(o)), axis] = sign
        n = nl @ self.axes.T
        part = axis * 2 + (sign > 0)
        return t, n, part

    def albedo_at(self, p, part):
        alb = super().albedo_at(p, part)
        if self.texture_fn is not None:
            top = part == 5
            if top.any():
                pl = (p[top] - self.center) @ self.axes
                alb[top] = self.texture_fn(pl[:, 0], pl[:, 1])
        return alb
