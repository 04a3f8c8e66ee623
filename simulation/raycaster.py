"""The numpy ray caster: table and mat (a box top at z = 0), painted lines, analytic primitives, an area light.

Cost model: every pixel gets one exact ray (``CameraModel.rays_mm``) that meets the table or mat, whose edges
and painted lines are anti-aliased analytically from the pixel footprint in mm. Only pixels inside a
primitive's projected bounding box are supersampled (``ss`` x ``ss`` rays) and intersected with the
primitives, so a 4K frame costs little more than its ground plane. Soft shadows: ``light_samples`` shadow
rays towards points of a disc light, evaluated only where some primitive's shadow can fall.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from calibration.camera import CameraModel
from geometry.constants import BASELINE_DISTANCE_MM, MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM
from geometry.tiddlywinks import corner_normal
from simulation.primitives import Disc, Pot, Primitive
from simulation.textures import Texture

BAND_PIXELS = 600_000  # rays per band of the ground pass (memory bound)


@dataclass
class AreaLight:
    """A downward-facing disc lamp; ``irradiance`` is the direct light on the table right under it."""

    position_mm: np.ndarray
    radius_mm: float
    color: np.ndarray  # linear RGB, ~1
    irradiance: float
    samples: np.ndarray = field(default=None)  # (K, 2) unit-disc offsets

    def __post_init__(self) -> None:
        self.position_mm = np.asarray(self.position_mm, float)
        self.color = np.asarray(self.color, float)
        if self.samples is None:
            k = 16
            i = np.arange(k) + 0.5
            r = np.sqrt(i / k)
            a = i * math.pi * (3 - math.sqrt(5))  # golden-angle spiral: even coverage of the disc
            self.samples = np.column_stack([r * np.cos(a), r * np.sin(a)])

    @property
    def height_mm(self) -> float:
        return float(self.position_mm[2])


@dataclass
class Environment:
    """Everything that is not a primitive: mat box, felt, painted lines, table top, light, ambient."""

    light: AreaLight
    ambient: np.ndarray  # linear RGB irradiance from the room (sky-like, from above)
    mat_albedo: np.ndarray
    felt: Texture  # luminance modulation, mean 1
    table: Texture  # RGB albedo
    table_ks: float = 0.04  # Fresnel F0 of varnish
    table_roughness_deg: float = 6.0
    mat_thickness_mm: float = 3.0
    mat_half_size_mm: tuple[float, float] = (MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM)
    mat_side_albedo: np.ndarray | None = None
    line_albedo: np.ndarray = field(default_factory=lambda: np.array([0.72, 0.72, 0.68]))
    line_half_width_mm: float = 2.5
    lines: tuple[tuple[np.ndarray, float], ...] | None = None  # (unit normal, offset): n . p = offset
    felt_sheen: float = 0.0
    # A broad directional fill (a window or a second lamp far away): unit direction towards it, irradiance on a
    # surface facing it, colour and angular softness; its shadows are analytic (see `RayCaster._fill_visibility`).
    fill_direction: np.ndarray | None = None
    fill_irradiance: float = 0.0
    fill_color: np.ndarray = field(default_factory=lambda: np.ones(3))
    fill_softness_deg: float = 6.0


def tiddlywinks_lines() -> tuple[tuple[np.ndarray, float], ...]:
    """The four baselines as (outward unit normal, distance): centreline exactly at the nominal geometry."""
    return tuple((corner_normal((sx, sy)), BASELINE_DISTANCE_MM) for sx in (1, -1) for sy in (1, -1))


def _norm(v: np.ndarray) -> np.ndarray:
    return v / (np.linalg.norm(v, axis=-1, keepdims=True) + 1e-12)


class RayCaster:
    """Render one camera view of an environment and a list of primitives into linear RGB."""

    def __init__(self, camera: CameraModel, env: Environment, primitives: list[Primitive], *,
                 rng: np.random.Generator, ss: int = 2, ray_cache: dict | None = None) -> None:
        self.cam = camera
        self.env = env
        self.prims = list(primitives)
        self.rng = rng
        self.ss = int(ss)
        self.w, self.h = camera.image_size_wh_px
        self.pix_angle = 1.0 / float(camera.K[0, 0])
        self.o = camera.center_mm
        self.ray_cache = ray_cache
        self._prepare_shadow_regions()
        self.boxes_px = [self._pixel_box(p) for p in self.prims]

    # --- culling ----------------------------------------------------------------------------------------

    def _pixel_box(self, prim: Primitive) -> tuple[int, int, int, int] | None:
        c = prim.corners()
        cam_z = (self.cam.R @ c.T).T[:, 2] + self.cam.tvec[2]
        if np.any(cam_z <= 1.0):
            return (0, 0, self.w - 1, self.h - 1)
        # Densify the box edges so that lens distortion cannot bow the silhouette outside the corner hull.
        lo, hi = prim.lo, prim.hi
        g = np.linspace(0, 1, 4)
        pts = np.array([[lo[0] + (hi[0] - lo[0]) * a, lo[1] + (hi[1] - lo[1]) * b, lo[2] + (hi[2] - lo[2]) * c_]
                        for a in g for b in g for c_ in (0.0, 1.0)])
        px = self.cam.project_mm(pts)
        x0, y0 = np.floor(px.min(axis=0)) - 2
        x1, y1 = np.ceil(px.max(axis=0)) + 2
        if x1 < 0 or y1 < 0 or x0 > self.w - 1 or y0 > self.h - 1:
            return None
        return (int(max(x0, 0)), int(max(y0, 0)), int(min(x1, self.w - 1)), int(min(y1, self.h - 1)))

    def _prepare_shadow_regions(self) -> None:
        """Plan rectangles where each primitive's shadow (or contact darkening) can fall."""
        L = self.env.light
        lpts = np.column_stack([L.position_mm[0] + L.radius_mm * L.samples[:, 0],
                                L.position_mm[1] + L.radius_mm * L.samples[:, 1],
                                np.full(len(L.samples), L.height_mm)])
        self.light_pts = lpts
        ground = -self.env.mat_thickness_mm
        regions = []
        for p in self.prims:
            c = p.corners()
            s = (L.height_mm - ground) / np.maximum(L.height_mm - c[:, 2], 1.0)  # (8,)
            proj = lpts[None, :, :2] + (c[:, None, :2] - lpts[None, :, :2]) * s[:, None, None]
            xs = np.concatenate([proj[..., 0].ravel(), c[:, 0]])
            ys = np.concatenate([proj[..., 1].ravel(), c[:, 1]])
            pad = 6.0
            regions.append((xs.min() - pad, xs.max() + pad, ys.min() - pad, ys.max() + pad, p.hi[2]))
        self.shadow_regions = regions

    # --- lighting ---------------------------------------------------------------------------------------

    def _visibility(self, P: np.ndarray, N: np.ndarray, self_ids: np.ndarray) -> np.ndarray:
        """Fraction of the light disc seen from each point (soft shadows), 1 where no primitive can shadow."""
        vis = np.ones(len(P))
        if not self.prims or len(P) == 0:
            return vis
        cand_lists = []
        anyc = np.zeros(len(P), bool)
        for j, (x0, x1, y0, y1, ztop) in enumerate(self.shadow_regions):
            m = (P[:, 0] >= x0) & (P[:, 0] <= x1) & (P[:, 1] >= y0) & (P[:, 1] <= y1) & (P[:, 2] < ztop)
            if self.prims[j].self_shadowing is False:
                m &= self_ids != j
            cand_lists.append(m)
            anyc |= m
        idx = np.nonzero(anyc)[0]
        if len(idx) == 0:
            return vis
        L = self.env.light
        # Large shadowed areas (a raised board, a hand) get fewer rays per point; every other spiral sample
        # still covers the whole disc, and the per-point rotation below turns the coarser sampling into noise.
        stride = 1 if len(idx) < 60_000 else (2 if len(idx) < 250_000 else 4)
        sx, sy = L.samples[::stride, 0], L.samples[::stride, 1]
        K = len(sx)
        # Rotate the sample pattern per point: smooth penumbrae become fine noise instead of K bands.
        rot = self.rng.uniform(0, 2 * math.pi, len(idx))
        cr, sr = np.cos(rot)[:, None], np.sin(rot)[:, None]
        lx = L.position_mm[0] + L.radius_mm * (cr * sx - sr * sy)
        ly = L.position_mm[1] + L.radius_mm * (sr * sx + cr * sy)
        lz = np.full_like(lx, L.height_mm)
        Pc = P[idx] + N[idx] * 0.02
        D = np.stack([lx - Pc[:, 0:1], ly - Pc[:, 1:2], lz - Pc[:, 2:3]], axis=-1)  # (M, K, 3)
        dist = np.linalg.norm(D, axis=-1)
        D = D / dist[..., None]
        blocked = np.zeros((len(idx), K), bool)
        O = np.repeat(Pc, K, axis=0)
        Df = D.reshape(-1, 3)
        for j, m in enumerate(cand_lists):
            mj = m[idx]
            if not mj.any():
                continue
            rows = np.nonzero(mj)[0]
            sel = (rows[:, None] * K + np.arange(K)[None, :]).ravel()
            t, _, _ = self.prims[j].intersect(O[sel], Df[sel])
            blocked[rows] |= (t < dist[rows].ravel()).reshape(len(rows), K)
        vis[idx] = 1.0 - blocked.mean(axis=1)
        return vis

    def _fill_visibility(self, P: np.ndarray, self_ids: np.ndarray) -> np.ndarray:
        """Soft shadows of winks and the pot under the directional fill, analytically: a point is shadowed when
        its plan position lies within the occluder's radius of the occluder's plan track towards the fill."""
        env = self.env
        f = env.fill_direction
        horiz = math.hypot(f[0], f[1])
        cot = horiz / max(f[2], 0.05)
        u = np.array([f[0], f[1]]) / max(horiz, 1e-9)
        vis = np.ones(len(P))
        soft_tan = math.tan(math.radians(env.fill_softness_deg))
        for j, p in enumerate(self.prims):
            if isinstance(p, Disc):
                c = p.center[:2]
                r = p.radius * (0.5 + 0.5 * abs(p.normal[2]))
                top = p.hi[2]
            elif isinstance(p, Pot):
                c = np.asarray(p.center_xy)
                r = 21.0
                top = p.hi[2]
            else:
                continue
            reach = (top - P[:, 2]).clip(0, None) * cot
            m = ((self_ids != j) & (P[:, 2] < top) & (np.abs(P[:, 0] - c[0]) < r + reach + 5)
                 & (np.abs(P[:, 1] - c[1]) < r + reach + 5))
            if not m.any():
                continue
            q = P[m, :2] - c
            # Track of the occluder's silhouette from the point towards the fill: c .. c + reach * u.
            s = np.clip(q @ u, 0, reach[m])
            d = np.hypot(q[:, 0] - s * u[0], q[:, 1] - s * u[1]) - r
            soft = 0.25 + (top - P[m, 2]).clip(0, None) * soft_tan
            vis[m] *= np.clip(0.5 + d / soft, 0, 1)
        return vis

    def _contact_ao(self, P: np.ndarray, self_ids: np.ndarray) -> np.ndarray:
        """Ambient occlusion near pieces: a wink or the pot hides part of the room from the mat beside it."""
        ao = np.ones(len(P))
        for j, p in enumerate(self.prims):
            if isinstance(p, Disc):
                reach, strength = 2.5, 0.55
                z_bottom = p.center[2] - p.half_thickness - abs(p.normal[2] - 1) * p.radius
                strength *= math.exp(-max(z_bottom - self._ground_z(p.center), 0.0) / 3.0)
                r_plan = p.radius
            elif isinstance(p, Pot):
                reach, strength, r_plan = 6.0, 0.5, 19.0
            else:
                continue
            cx, cy = (p.center[0], p.center[1]) if isinstance(p, Disc) else p.center_xy
            m = ((np.abs(P[:, 0] - cx) < r_plan + 6 * reach) & (np.abs(P[:, 1] - cy) < r_plan + 6 * reach)
                 & (self_ids != j) & (P[:, 2] < p.lo[2] + 0.5))
            if not m.any():
                continue
            de = np.hypot(P[m, 0] - cx, P[m, 1] - cy) - r_plan
            ao[m] *= 1.0 - strength * np.exp(-np.maximum(de, 0.0) / reach)
        return ao

    def _ground_z(self, c: np.ndarray) -> float:
        L, W = self.env.mat_half_size_mm
        return 0.0 if (abs(c[0]) <= L and abs(c[1]) <= W) else -self.env.mat_thickness_mm

    def _light(self, P, N, V, albedo, ks, rough_deg, amb, self_ids, wrap=None):
        """Diffuse (Lambert, optionally wrapped) from the lamp and the room, plus the lamp's reflection."""
        L = self.env.light
        Lv = L.position_mm - P
        dist = np.linalg.norm(Lv, axis=1)
        l = Lv / dist[:, None]
        ndl = np.sum(N * l, axis=1)
        if wrap is not None:
            diff = np.clip((ndl + wrap) / (1 + wrap), 0, None)
        else:
            diff = np.clip(ndl, 0, None)
        E = L.irradiance * (L.height_mm ** 2) * np.clip(l[:, 2], 0, None) / dist ** 2
        vis = self._visibility(P, N, self_ids) * (ndl > -0.2)
        direct = (E * vis)[:, None] * L.color[None, :]
        sky = (0.55 + 0.45 * N[:, 2])[:, None] * self.env.ambient[None, :] * (amb * self._contact_ao(P, self_ids))[:, None]
        rgb = albedo * (direct * diff[:, None] + sky)
        env = self.env
        if env.fill_direction is not None and env.fill_irradiance > 0:
            nf = np.clip(np.sum(N * env.fill_direction, axis=1), 0, None)
            fill = env.fill_irradiance * nf * self._fill_visibility(P, self_ids)
            rgb += albedo * fill[:, None] * env.fill_color[None, :]
        if np.any(np.asarray(ks) > 0):
            rgb += self._lamp_reflection(P, N, V, ks, rough_deg, vis)
        return rgb

    def _lamp_reflection(self, P, N, V, f0, rough_deg, vis):
        """Glossy reflection of the disc lamp: the mirror ray meets the lamp plane; roughness blurs the disc.

        The lamp's radiance follows from its irradiance under it, E = pi L (r/h)^2, so a small lamp gives a small,
        very bright highlight and a large lamp a broad, dimmer one, as on real plastic and varnish.
        """
        L = self.env.light
        ndv = np.clip(np.sum(N * V, axis=1), 0, 1)
        R = 2 * ndv[:, None] * N - V
        up = R[:, 2] > 1e-3
        out = np.zeros((len(P), 3))
        if not up.any():
            return out
        s = (L.height_mm - P[up, 2]) / R[up, 2]
        Q = P[up, :2] + s[:, None] * R[up, :2]
        rq = np.hypot(Q[:, 0] - L.position_mm[0], Q[:, 1] - L.position_mm[1])
        spread = s * math.tan(math.radians(float(np.mean(rough_deg))))
        r = L.radius_mm
        Re = np.sqrt(r * r + spread * spread)
        cover = np.clip(0.5 + (Re - rq) / (0.6 * spread + 0.05 * r), 0, 1) * (r / Re) ** 2
        radiance = L.irradiance / (math.pi * (r / L.height_mm) ** 2)
        f0 = np.broadcast_to(np.asarray(f0, float), (len(P),))[up]
        fres = f0 + (1 - f0) * (1 - ndv[up]) ** 5
        out[up] = (fres * radiance * cover * vis[up])[:, None] * L.color[None, :]
        return out

    # --- ground -----------------------------------------------------------------------------------------

    def _ground(self, d: np.ndarray, fp_angle: float) -> tuple[np.ndarray, np.ndarray]:
        """Shade camera rays that meet the mat box or the table: RGB and the hit points."""
        env = self.env
        o = self.o
        Lh, Wh = env.mat_half_size_mm
        T = env.mat_thickness_mm
        n = len(d)
        dz = d[:, 2]
        t_top = -o[2] / dz
        P = o[None, :] + t_top[:, None] * d
        sd = np.minimum(Lh - np.abs(P[:, 0]), Wh - np.abs(P[:, 1]))
        fp = t_top * fp_angle / np.maximum(np.abs(dz), 0.05)
        cov = np.clip(0.5 + sd / fp, 0.0, 1.0)
        V = -d
        rgb = np.zeros((n, 3))
        top = cov > 0
        Pout = P.copy()
        if top.any():
            Pt = P[top]
            mod = env.felt.sample(Pt[:, 0], Pt[:, 1])
            alb = env.mat_albedo[None, :] * mod[:, None]
            if env.lines:
                paint = np.zeros(len(Pt))
                for nrm, off in env.lines:
                    dl = Pt[:, 0] * nrm[0] + Pt[:, 1] * nrm[1] - off
                    paint = np.maximum(paint, np.clip(0.5 + (env.line_half_width_mm - np.abs(dl)) / fp[top], 0, 1))
                # Paint soaks unevenly into felt: the fibre texture shows through the line.
                paint *= np.clip(0.8 + 2.0 * (mod - 1.0), 0.5, 1.0)
                alb = alb * (1 - paint[:, None]) + env.line_albedo[None, :] * (0.9 + 0.1 * mod[:, None]) * paint[:, None]
            Nt = np.tile([0.0, 0.0, 1.0], (len(Pt), 1))
            rgb[top] = self._light(Pt, Nt, V[top], alb, env.felt_sheen, 35.0, np.ones(len(Pt)),
                                   np.full(len(Pt), -1), wrap=0.1)
        out = cov < 1
        if out.any():
            do = d[out]
            best = np.full(len(do), np.inf)
            nrm = np.zeros((len(do), 3))
            for axis, half in ((0, Lh), (1, Wh)):
                for s in (1.0, -1.0):
                    with np.errstate(divide="ignore", invalid="ignore"):
                        t = (s * half - o[axis]) / do[:, axis]
                    Q = o[None, :] + t[:, None] * do
                    other = 1 - axis
                    ok = ((t > 0) & (Q[:, 2] <= 0) & (Q[:, 2] >= -T) & (np.abs(Q[:, other]) <= (Wh if other else Lh))
                          & (do[:, axis] * s < 0))
                    upd = ok & (t < best)
                    best[upd] = t[upd]
                    nv = np.zeros(3)
                    nv[axis] = s
                    nrm[upd] = nv
            side = np.isfinite(best)
            t_tab = (-T - o[2]) / do[:, 2]
            tt = np.where(side, best, t_tab)
            Q = o[None, :] + tt[:, None] * do
            nrm[~side] = (0.0, 0.0, 1.0)
            alb = np.empty((len(do), 3))
            if (~side).any():
                alb[~side] = env.table.sample(Q[~side, 0], Q[~side, 1])
            side_alb = env.mat_side_albedo if env.mat_side_albedo is not None else env.mat_albedo * 0.6
            alb[side] = side_alb
            ks = np.where(side, 0.0, env.table_ks)
            rgb_out = self._light(Q, nrm, V[out], alb, ks, env.table_roughness_deg,
                                  np.ones(len(do)), np.full(len(do), -1))
            c = cov[out][:, None]
            rgb[out] = rgb[out] * c + rgb_out * (1 - c)
            Pout[out] = np.where(cov[out][:, None] > 0.5, P[out], Q)
        return rgb, Pout

    # --- primitives -------------------------------------------------------------------------------------

    def _trace(self, d: np.ndarray, pxy: np.ndarray, fp_angle: float, exclude: frozenset = frozenset()):
        n = len(d)
        best = np.full(n, np.inf)
        ids = np.full(n, -1)
        nrm = np.zeros((n, 3))
        part = np.zeros(n, int)
        o = np.broadcast_to(self.o, (n, 3))
        for j, (prim, box) in enumerate(zip(self.prims, self.boxes_px)):
            if box is None or j in exclude:
                continue
            x0, y0, x1, y1 = box
            m = (pxy[:, 0] >= x0 - 0.5) & (pxy[:, 0] <= x1 + 0.5) & (pxy[:, 1] >= y0 - 0.5) & (pxy[:, 1] <= y1 + 0.5)
            if not m.any():
                continue
            sel = np.nonzero(m)[0]
            t, nn, pp = prim.intersect(o[sel], d[sel])
            upd = t < best[sel]
            s = sel[upd]
            best[s] = t[upd]
            ids[s] = j
            nrm[s] = nn[upd]
            part[s] = pp[upd]
        rgb = np.zeros((n, 3))
        miss = ids < 0
        if miss.any():
            rgb[miss], _ = self._ground(d[miss], fp_angle)
        for j in np.unique(ids[~miss]):
            prim = self.prims[j]
            m = ids == j
            P = self.o[None, :] + best[m, None] * d[m]
            alb = prim.albedo_at(P, part[m])
            mat = prim.material
            col = self._light(P, nrm[m], -d[m], alb, mat.ks, mat.roughness_deg, prim.ambient_at(P, part[m]),
                              np.full(m.sum(), j), wrap=mat.wrap if mat.wrap > 0 else None)
            if mat.alpha < 1.0:
                behind, _ = self._trace(d[m], pxy[m], fp_angle, exclude | {int(j)})
                tint = np.asarray(mat.albedo) / max(max(mat.albedo), 1e-6)
                col = mat.alpha * col + (1 - mat.alpha) * behind * (0.35 + 0.65 * tint)[None, :]
            rgb[m] = col
        return rgb, ids

    # --- whole image --------------------------------------------------------------------------------------

    def _rays(self, key, px: np.ndarray) -> np.ndarray:
        if self.ray_cache is not None and key in self.ray_cache:
            return self.ray_cache[key]
        _, d = self.cam.rays_mm(px)
        if self.ray_cache is not None:
            self.ray_cache[key] = d
        return d

    def render(self) -> tuple[np.ndarray, np.ndarray]:
        """Linear RGB ``(H, W, 3)`` float32 and the per-pixel primitive id (-1: table/mat) at pixel centres."""
        w, h = self.w, self.h
        img = np.zeros((h, w, 3), np.float32)
        idmap = np.full((h, w), -1, np.int16)
        piece_mask = np.zeros((h, w), bool)
        coarse_mask = np.zeros((h, w), bool)
        for prim, box in zip(self.prims, self.boxes_px):
            if box is not None:
                x0, y0, x1, y1 = box
                (coarse_mask if getattr(prim, "coarse", False) else piece_mask)[y0:y1 + 1, x0:x1 + 1] = True
        coarse_mask &= ~piece_mask
        rows_per_band = max(1, BAND_PIXELS // w)
        for r0 in range(0, h, rows_per_band):
            r1 = min(h, r0 + rows_per_band)
            yy, xx = np.mgrid[r0:r1, 0:w]
            px = np.column_stack([xx.ravel(), yy.ravel()]).astype(np.float64)
            d = self._rays(("band", r0), px)
            keep = ~(piece_mask[r0:r1] | coarse_mask[r0:r1]).ravel()
            rgb, _ = self._ground(d[keep], self.pix_angle)
            band = np.zeros((len(px), 3), np.float32)
            band[keep] = rgb
            img[r0:r1] = np.where(keep.reshape(r1 - r0, w)[..., None], band.reshape(r1 - r0, w, 3), img[r0:r1])
        for mask, ss in ((piece_mask, self.ss), (coarse_mask, 1)):
            rr, cc = np.nonzero(mask)
            if not len(rr):
                continue
            offs = (np.arange(ss) + 0.5) / ss - 0.5
            ox, oy = np.meshgrid(offs, offs)
            ox, oy = ox.ravel(), oy.ravel()
            chunk = max(1, 400_000 // (ss * ss))
            for i in range(0, len(rr), chunk):
                r, c = rr[i:i + chunk], cc[i:i + chunk]
                pxy = np.column_stack([(c[:, None] + ox[None, :]).ravel(), (r[:, None] + oy[None, :]).ravel()])
                _, d = self.cam.rays_mm(pxy)
                rgb, ids = self._trace(d, pxy, self.pix_angle / ss)
                img[r, c] = rgb.reshape(-1, ss * ss, 3).mean(axis=1)
                ids = ids.reshape(-1, ss * ss)
                idmap[r, c] = ids[:, (ss * ss) // 2] if ss % 2 else ids[:, 0]
        return img, idmap
