"""Ray-casting pieces shared by the Ice Tiddly Winks and ring-marbles renderers.

Both renderers cast one exact ray per pixel (``CameraModel.rays_mm``, distortion included) at a flat or
revolved background, then re-cast small supersampled patches around the pieces, where the geometry is
analytic (triangles, spheres) and the truth is therefore exact. Everything here is linear RGB in [0, ~1].
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from calibration.camera import CameraModel
from simulation.photo import encode_jpeg

_REMAP_ROW_PX = 4096  # cv2.remap maps must stay below SHRT_MAX per side: sample long arrays in rows this wide
BAND_ROWS = 256  # image rows shaded at once on a full frame (bounds memory at 4000 x 3000)


# --- small maths ---------------------------------------------------------------------------------------


def smoothstep(edge0: float, edge1: float, x: np.ndarray) -> np.ndarray:
    t = np.clip((x - edge0) / (edge1 - edge0), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


def fresnel_schlick(cos_theta: np.ndarray, f0: float) -> np.ndarray:
    """Schlick's approximation of the unpolarised Fresnel reflectance (f0 = 0.04 for glass and varnish)."""
    c = np.clip(np.abs(cos_theta), 0.0, 1.0)
    return f0 + (1.0 - f0) * (1.0 - c) ** 5


def reflect(d: np.ndarray, n: np.ndarray) -> np.ndarray:
    return d - 2.0 * np.sum(d * n, axis=-1, keepdims=True) * n


# --- procedural textures --------------------------------------------------------------------------------


def sample_grid(grid: np.ndarray, gx: np.ndarray, gy: np.ndarray) -> np.ndarray:
    """Bicubic, periodic sample of a float32 ``grid`` at fractional cell coordinates (any array shape)."""
    shape = np.shape(gx)
    n = int(np.prod(shape))
    if n == 0:
        return np.zeros(shape)
    rows = -(-n // _REMAP_ROW_PX)
    pad = rows * _REMAP_ROW_PX - n
    h, w = grid.shape
    mx = np.pad(np.mod(np.ravel(gx), w).astype(np.float32), (0, pad)).reshape(rows, _REMAP_ROW_PX)
    my = np.pad(np.mod(np.ravel(gy), h).astype(np.float32), (0, pad)).reshape(rows, _REMAP_ROW_PX)
    out = cv2.remap(grid, mx, my, cv2.INTER_CUBIC, borderMode=cv2.BORDER_WRAP)
    return out.ravel()[:n].reshape(shape).astype(np.float64)


class Noise2D:
    """Value noise in [0, 1] with anisotropic cells (mm); periodic over ``size`` cells."""

    def __init__(self, rng: np.random.Generator, cell_mm: float | tuple[float, float], size: int = 256):
        self.cell_x_mm, self.cell_y_mm = (cell_mm, cell_mm) if np.isscalar(cell_mm) else cell_mm
        self.grid = rng.random((size, size)).astype(np.float32)

    def __call__(self, x_mm: np.ndarray, y_mm: np.ndarray) -> np.ndarray:
        # bicubic overshoots a little: clip back to [0, 1] so powers and logs stay finite
        return np.clip(
            sample_grid(self.grid, np.asarray(x_mm) / self.cell_x_mm, np.asarray(y_mm) / self.cell_y_mm),
            0.0,
            1.0,
        )


class Fbm:
    """Sum of value-noise octaves, halving the cell each octave; result roughly in [0, 1]."""

    def __init__(
        self, rng: np.random.Generator, cell_mm: float | tuple[float, float], octaves: int, gain: float = 0.5
    ):
        cx, cy = (cell_mm, cell_mm) if np.isscalar(cell_mm) else cell_mm
        self.layers = [Noise2D(rng, (cx / 2**k, cy / 2**k)) for k in range(octaves)]
        self.weights = np.array([gain**k for k in range(octaves)])
        self.weights /= self.weights.sum()

    def __call__(self, x_mm: np.ndarray, y_mm: np.ndarray) -> np.ndarray:
        return sum(w * layer(x_mm, y_mm) for w, layer in zip(self.weights, self.layers))


# --- light --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Lighting:
    """One soft key light (a window or lamp of angular radius ``radius_deg``) plus a hemispherical ambient."""

    to_light: np.ndarray  # unit vector from the scene towards the key light, table frame
    radius_deg: float
    key_rgb: np.ndarray  # irradiance on a surface facing the light
    ambient_rgb: np.ndarray  # irradiance from the upper hemisphere

    @classmethod
    def random(
        cls,
        rng: np.random.Generator,
        *,
        elevation_deg: tuple[float, float] = (40.0, 72.0),
        warmth: float | None = None,
    ) -> "Lighting":
        elev = math.radians(rng.uniform(*elevation_deg))
        az = rng.uniform(0.0, 2.0 * math.pi)
        to_light = np.array([math.cos(elev) * math.cos(az), math.cos(elev) * math.sin(az), math.sin(elev)])
        warm = rng.uniform(-0.5, 1.0) if warmth is None else warmth  # >0 tungsten-ish, <0 daylight-ish
        key = np.array([1.0 + 0.12 * warm, 1.0, 1.0 - 0.18 * warm]) * rng.uniform(0.85, 1.1)
        amb = np.array([1.0 - 0.05 * warm, 1.0, 1.0 + 0.1 * warm]) * rng.uniform(0.28, 0.42)
        return cls(to_light=to_light, radius_deg=float(rng.uniform(2.5, 6.0)), key_rgb=key, ambient_rgb=amb)

    def sample_dirs(self, n: int) -> np.ndarray:
        """``n`` directions spread over the light's disc (Vogel spiral: deterministic, even)."""
        L = self.to_light
        a = np.cross(L, [0.0, 0.0, 1.0] if abs(L[2]) < 0.9 else [1.0, 0.0, 0.0])
        a /= np.linalg.norm(a)
        b = np.cross(L, a)
        k = np.arange(n) + 0.5
        r = math.tan(math.radians(self.radius_deg)) * np.sqrt(k / n)
        phi = k * math.pi * (3.0 - math.sqrt(5.0))
        dirs = L[None] + (r * np.cos(phi))[:, None] * a + (r * np.sin(phi))[:, None] * b
        return dirs / np.linalg.norm(dirs, axis=1, keepdims=True)

    def environment(self, dirs: np.ndarray) -> np.ndarray:
        """Radiance seen along ``dirs`` (N, 3): a bright disc at the light, a sky/ceiling dome, dark below."""
        up = np.clip(dirs[:, 2], -1.0, 1.0)
        dome = (0.25 + 0.75 * smoothstep(-0.2, 0.9, up))[:, None] * self.ambient_rgb * 0.55
        cos_l = dirs @ self.to_light
        cos_r = math.cos(math.radians(self.radius_deg))
        disc = smoothstep(cos_r - 0.004, cos_r + 0.002, cos_l)[:, None] * self.key_rgb * 9.0
        halo = (np.clip(cos_l, 0, 1) ** 60)[:, None] * self.key_rgb * 0.8
        return dome + disc + halo


# --- ray casting ----------------------------------------------------------------------------------------


class TriangleSet:
    """Triangles ``(T, 3, 3)`` prepared for vectorised ray tests by matrix products (rays x triangles)."""

    def __init__(self, tris: np.ndarray):
        tris = np.asarray(tris, dtype=np.float64).reshape(-1, 3, 3)
        self.v0 = tris[:, 0]
        self.e1 = tris[:, 1] - tris[:, 0]
        self.e2 = tris[:, 2] - tris[:, 0]
        n = np.cross(self.e1, self.e2)
        self.area2 = np.linalg.norm(n, axis=1)
        self.n = n / self.area2[:, None]
        g11 = np.sum(self.e1 * self.e1, 1)
        g12 = np.sum(self.e1 * self.e2, 1)
        g22 = np.sum(self.e2 * self.e2, 1)
        det = g11 * g22 - g12**2
        # dual basis: (X - v0) . a1 = u, (X - v0) . a2 = v for X in the triangle's plane
        self.a1 = (g22 / det)[:, None] * self.e1 - (g12 / det)[:, None] * self.e2
        self.a2 = (g11 / det)[:, None] * self.e2 - (g12 / det)[:, None] * self.e1
        self.c1 = np.sum(self.v0 * self.a1, 1)
        self.c2 = np.sum(self.v0 * self.a2, 1)
        self.dn = np.sum(self.v0 * self.n, 1)
        # altitudes onto the edges opposite v0, v1, v2: barycentric weight x altitude = distance to that edge
        e3 = self.e2 - self.e1
        self.alt = np.stack(
            [
                self.area2 / np.linalg.norm(e3, axis=1),
                self.area2 / np.linalg.norm(self.e2, axis=1),
                self.area2 / np.linalg.norm(self.e1, axis=1),
            ],
            axis=1,
        )

    def __len__(self) -> int:
        return len(self.v0)

    def intersect(self, o: np.ndarray, d: np.ndarray, t_min: float = 1e-6):
        """Ray parameters ``t`` (N, T) (``inf`` on a miss) and barycentrics ``u``, ``v`` (N, T).

        ``o`` is one origin ``(3,)`` or one per ray ``(N, 3)``; ``d`` (N, 3) need not be unit length.
        """
        dn = d @ self.n.T
        with np.errstate(divide="ignore", invalid="ignore"):
            if o.ndim == 1:
                t = (self.dn - self.n @ o)[None, :] / dn
                u = (o @ self.a1.T - self.c1)[None, :] + t * (d @ self.a1.T)
                v = (o @ self.a2.T - self.c2)[None, :] + t * (d @ self.a2.T)
            else:
                t = (self.dn[None, :] - o @ self.n.T) / dn
                u = o @ self.a1.T - self.c1 + t * (d @ self.a1.T)
                v = o @ self.a2.T - self.c2 + t * (d @ self.a2.T)
        hit = (np.abs(dn) > 1e-12) & (t > t_min) & (u >= 0) & (v >= 0) & (u + v <= 1)
        return np.where(hit, t, np.inf), u, v


def sphere_intersect(o: np.ndarray, d: np.ndarray, centers: np.ndarray, radii: np.ndarray):
    """Nearest entry ``t`` (N, S) of unit rays into spheres (``inf`` on a miss) and the exit ``t``."""
    if o.ndim == 1:
        oc = o[None, :] - centers  # (S, 3)
        b = d @ oc.T
        c = (np.sum(oc * oc, axis=1) - radii**2)[None, :]
    else:
        oc = o[:, None, :] - centers[None, :, :]
        b = np.einsum("nk,nsk->ns", d, oc)
        c = np.sum(oc * oc, axis=2) - radii[None, :] ** 2
    disc = b * b - c
    root = np.sqrt(np.maximum(disc, 0.0))
    t0 = -b - root
    t1 = -b + root
    ok = (disc > 0) & (t0 > 1e-6)
    return np.where(ok, t0, np.inf), np.where(ok, t1, np.inf)


def rays_near_spheres(o: np.ndarray, d: np.ndarray, centers: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """Mask of unit rays (origin ``(3,)`` or ``(N, 3)``) whose forward half passes through any sphere.

    A cheap cull before exact tests against the primitives the spheres bound; origins inside count.
    """
    oc = (o[None, :] - centers)[None] if o.ndim == 1 else o[:, None, :] - centers[None]
    b = np.einsum("nk,nsk->ns", d, np.broadcast_to(oc, (len(d),) + oc.shape[1:]))
    c = np.sum(oc * oc, axis=2) - radii[None, :] ** 2
    disc = b * b - c
    return ((disc > 0) & (-b + np.sqrt(np.maximum(disc, 0)) > 0)).any(axis=1)


def pixel_block(x0: int, y0: int, x1: int, y1: int, ss: int) -> np.ndarray:
    """Sub-pixel sample positions ``(H*ss, W*ss, 2)`` covering pixels ``[x0, x1) x [y0, y1)``."""
    offs = (np.arange(ss) + 0.5) / ss - 0.5
    xs = (np.arange(x0, x1)[:, None] + offs[None, :]).ravel()
    ys = (np.arange(y0, y1)[:, None] + offs[None, :]).ravel()
    gx, gy = np.meshgrid(xs, ys)
    return np.stack([gx, gy], axis=-1)


def downsample(block: np.ndarray, ss: int) -> np.ndarray:
    """Box-filter ``(H*ss, W*ss, C)`` down to ``(H, W, C)``."""
    h, w = block.shape[0] // ss, block.shape[1] // ss
    return block.reshape(h, ss, w, ss, -1).mean(axis=(1, 3))


def camera_rays(camera: CameraModel, px: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact rays for pixel positions of any leading shape ``(..., 2)``: origin (3,), unit dirs (..., 3)."""
    lead = px.shape[:-1]
    o, d = camera.rays_mm(px.reshape(-1, 2))
    return o, d.reshape(*lead, 3)


def padded_bbox(
    points_px: np.ndarray, pad_px: float, size_wh: tuple[int, int]
) -> tuple[int, int, int, int] | None:
    """Integer pixel box ``(x0, y0, x1, y1)`` around points, clipped to the image; None when empty."""
    w, h = size_wh
    x0 = max(int(math.floor(points_px[:, 0].min() - pad_px)), 0)
    y0 = max(int(math.floor(points_px[:, 1].min() - pad_px)), 0)
    x1 = min(int(math.ceil(points_px[:, 0].max() + pad_px)) + 1, w)
    y1 = min(int(math.ceil(points_px[:, 1].max() + pad_px)) + 1, h)
    if x1 <= x0 or y1 <= y0:
        return None
    return x0, y0, x1, y1


def boxes_overlap(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def patch_groups(
    boxes: list[tuple[int, int, int, int] | None],
) -> list[tuple[tuple[int, int, int, int], list[int]]]:
    """Each piece's pixel box with the indices of every piece whose box overlaps it.

    A patch is rendered with all the pieces that can touch its pixels (occlusion, shadows), so overlapping
    patches agree where they overlap; boxes are not merged, which keeps a spread-out chain of pieces from
    turning into one huge supersampled patch.
    """
    out = []
    for i, box in enumerate(boxes):
        if box is None:
            continue
        out.append(
            (box, [j for j, other in enumerate(boxes) if other is not None and boxes_overlap(box, other)])
        )
    return out


# --- camera -------------------------------------------------------------------------------------------


def oblique_camera(
    rng: np.random.Generator,
    *,
    target_mm: tuple[float, float, float],
    distance_mm: float,
    tilt_deg: float,
    focal_px: float,
    image_size_wh_px: tuple[int, int],
) -> CameraModel:
    """A camera ``distance_mm`` from ``target_mm`` whose axis is ``tilt_deg`` off straight down.

    Random azimuth, a little roll and mild barrel distortion, as a phone or webcam on a stand.
    """
    az = rng.uniform(0.0, 2.0 * math.pi)
    tilt = math.radians(tilt_deg)
    eye = np.asarray(target_mm, float) + distance_mm * np.array(
        [math.sin(tilt) * math.cos(az), math.sin(tilt) * math.sin(az), math.cos(tilt)]
    )
    # image-up points away from the camera's ground position for oblique views; roll a few degrees
    roll = math.radians(rng.uniform(-6.0, 6.0))
    base = (
        np.array([-math.cos(az), -math.sin(az), 0.0])
        if tilt_deg > 3
        else np.array([math.cos(az), math.sin(az), 0.0])
    )
    up = base * math.cos(roll) + np.cross([0.0, 0.0, 1.0], base) * math.sin(roll)
    k1 = rng.uniform(-0.08, 0.0)
    dist = (k1, rng.uniform(0.0, 0.04), 0.0, 0.0, 0.0)
    w, h = image_size_wh_px
    return CameraModel.look_at(
        eye_mm=tuple(eye),
        target_mm=tuple(target_mm),
        up_hint=tuple(up),
        focal_px=focal_px,
        image_size_wh_px=(w, h),
        dist=dist,
        principal_offset_px=(rng.uniform(-0.01, 0.01) * w, rng.uniform(-0.01, 0.01) * h),
    )


# --- finishing and output -------------------------------------------------------------------------------


def write_image_and_truth(
    out_dir: str | Path, name: str, bgr: np.ndarray, truth: dict, *, jpeg_quality: int = 85
) -> tuple[Path, Path]:
    """Write ``<name>.jpg`` and ``<name>.json`` (truth, with the image path and size filled in)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    jpg = out / f"{name}.jpg"
    jpg.write_bytes(encode_jpeg(bgr, jpeg_quality))
    truth = {**truth, "image": {"path": jpg.name, "size_wh_px": [int(bgr.shape[1]), int(bgr.shape[0])]}}
    js = out / f"{name}.json"
    js.write_text(json.dumps(truth, indent=1))
    return jpg, js
