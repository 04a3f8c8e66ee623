"""Painting a Tantrix scene: glossy black hex tiles with link bands, their side walls, shadows, the table.

Two planes are painted in table millimetres: the tile-top plane (z = thickness: faces, links, bevels, glare)
and the table plane (z = 0: tile bodies, which show as the side walls between a top's and a footprint's
projections, soft shadows and the table texture). Every pixel's ray through the CameraModel (distortion
included) meets both planes; where it meets a tile top that is what it sees, else the table plane. Rays are
computed exactly on an 8-pixel grid and interpolated bilinearly in between (the ray field is smooth, the error
is far below a pixel), which keeps a 1080p render near a second.

Glare is physical in placement: a lamp or window mirrored in the coplanar tile tops shows as one patch or
streak across several tiles, each tile shifting it a little because no tile lies perfectly flat; the broad
sheen is the room (a dim base and bright lobes) seen in each point's mirror direction times Fresnel
reflectance, so it is stronger at grazing views and steps slightly from tile to tile.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.tantrix import EDGE_COUNT, LinkColor, tile
from simulation.photo import PhotoSettings, finish_photo
from simulation.pyramids_marbles_common import fresnel_schlick
from simulation.textures import cloth_texture, felt_texture, wood_texture

# tile layers: 2/3 of the finest pixel footprint on the tiles, within this range
TEXEL_RANGE_MM = (0.12, 0.35)
CORNER_RADIUS_MM = 1.5
RAY_GRID_PX = 8
LINK_WIDTH_RATIO_RANGE = (0.112, 0.13)  # of flat-to-flat: 5-6 mm bands on a 46 mm tile
BEVEL_RANGE_MM = (0.6, 1.1)
# printed link colours, linear RGB
LINK_RGB = {
    "red": (0.55, 0.025, 0.018),
    "yellow": (0.72, 0.50, 0.02),
    "blue": (0.02, 0.085, 0.48),
    "green": (0.03, 0.30, 0.06),
    "white": (0.70, 0.70, 0.68),
}
TILE_BLACK = (0.010, 0.010, 0.012)
PHOTOGRAPHER_SHADOW_PROBABILITY = 0.25
_SUPERSAMPLE_SHIFT = 4


class _Raster:
    """A texel grid over table millimetres (x right, y up; row 0 at the top)."""

    def __init__(self, lo_mm, hi_mm, texel_mm: float):
        self.x0, self.y1, self.texel = float(lo_mm[0]), float(hi_mm[1]), float(texel_mm)
        self.cols = int(math.ceil((hi_mm[0] - lo_mm[0]) / texel_mm)) + 1
        self.rows = int(math.ceil((hi_mm[1] - lo_mm[1]) / texel_mm)) + 1

    def to_px(self, pts_mm) -> np.ndarray:
        p = np.asarray(pts_mm, float).reshape(-1, 2)
        return np.column_stack([(p[:, 0] - self.x0) / self.texel, (self.y1 - p[:, 1]) / self.texel])

    def to_mm(self, col: np.ndarray, row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.x0 + col * self.texel, self.y1 - row * self.texel

    def sample(self, img: np.ndarray, xy_mm: np.ndarray, border=cv2.BORDER_CONSTANT) -> np.ndarray:
        """Bilinear sample at table points ``(H, W, 2)``."""
        mx = ((xy_mm[..., 0] - self.x0) / self.texel).astype(np.float32)
        my = ((self.y1 - xy_mm[..., 1]) / self.texel).astype(np.float32)
        return cv2.remap(img, mx, my, cv2.INTER_LINEAR, borderMode=border, borderValue=0)


class _RayField:
    """Pixel rays through the camera model, computed exactly on an 8-pixel grid and interpolated bilinearly to
    every pixel (the field is smooth: the error is far below a pixel)."""

    def __init__(self, camera: CameraModel):
        w, h = camera.image_size_wh_px
        self.gx = np.arange(0, w - 1 + RAY_GRID_PX, RAY_GRID_PX, dtype=np.float64)
        self.gy = np.arange(0, h - 1 + RAY_GRID_PX, RAY_GRID_PX, dtype=np.float64)
        xx, yy = np.meshgrid(self.gx, self.gy)
        self.o, self.d = camera.rays_mm(np.column_stack([xx.ravel(), yy.ravel()]))
        if np.any(self.d[:, 2] >= -1e-6):
            raise ValueError("a pixel ray does not reach the table: the camera must look down at it")
        self._mx, self._my = np.meshgrid(np.arange(w, dtype=np.float32) / RAY_GRID_PX,
                                         np.arange(h, dtype=np.float32) / RAY_GRID_PX)

    def upsample(self, coarse: np.ndarray) -> np.ndarray:
        """A value per grid node (any shape of that many values) to a full ``(H, W)`` float32 image."""
        grid = np.asarray(coarse, np.float32).reshape(len(self.gy), len(self.gx))
        return cv2.remap(grid, self._mx, self._my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)

    def on_grid(self, z_mm: float) -> np.ndarray:
        """Where the grid nodes' rays meet the plane z = ``z_mm``: ``(N, 2)`` table mm."""
        s = (z_mm - self.o[2]) / self.d[:, 2]
        return self.o[:2] + s[:, None] * self.d[:, :2]

    def on_plane(self, z_mm: float) -> np.ndarray:
        """Where each pixel's ray meets the plane z = ``z_mm``: ``(H, W, 2)`` table mm."""
        pts = self.on_grid(z_mm)
        return np.stack([self.upsample(pts[:, 0]), self.upsample(pts[:, 1])], axis=-1)


def _table_texture(rng: np.random.Generator, size_mm: tuple[float, float], texel_mm: float) -> np.ndarray:
    """Albedo of the table top (linear RGB): varnished wood, a cloth, or felt in a plain colour (often
    dark)."""
    kind = int(rng.integers(3))
    if kind == 0:
        return wood_texture(rng, size_mm=size_mm, texel_mm=texel_mm).image
    if kind == 1:
        return cloth_texture(rng, size_mm=size_mm, texel_mm=texel_mm).image
    felt = felt_texture(rng, size_mm=size_mm, texel_mm=texel_mm).image
    colours = [(0.05, 0.22, 0.08), (0.20, 0.20, 0.21), (0.06, 0.10, 0.25), (0.03, 0.03, 0.035),
               (0.35, 0.05, 0.05), (0.45, 0.42, 0.36), (0.10, 0.16, 0.18)]
    colour = np.asarray(colours[int(rng.integers(len(colours)))], np.float32)
    return felt[..., None] * colour[None, None, :]


def rounded_hex_mm(center, angle_deg: float, flat_to_flat_mm: float, corner_radius_mm: float,
                   points_per_corner: int = 6) -> np.ndarray:
    """Outline of a hex tile with rounded corners: an inner hex grown by the corner radius (ccw polygon)."""
    inner = (flat_to_flat_mm / 2.0 - corner_radius_mm) * 2.0 / math.sqrt(3.0)
    pts = []
    for k in range(EDGE_COUNT):
        v = math.radians(angle_deg + 30.0 + 60.0 * k)
        vc = (center[0] + inner * math.cos(v), center[1] + inner * math.sin(v))
        for a in np.radians(angle_deg + 60.0 * k + np.linspace(0.0, 60.0, points_per_corner)):
            pts.append((vc[0] + corner_radius_mm * math.cos(a), vc[1] + corner_radius_mm * math.sin(a)))
    return np.asarray(pts)


def _link_polyline_mm(center, angle_deg: float, s_mm: float, a: int, b: int) -> np.ndarray:
    """Centre line of the link joining edges ``a`` and ``b`` (face edges, the tile's edge 0 at ``angle_deg``):
    sharp = arc of radius s/2 about the shared vertex, gentle = arc of radius 1.5 s about the centre of the
    hex across the middle edge, straight = the line through the centre (contract geometry)."""
    c = np.asarray(center, float)
    gap = (b - a) % EDGE_COUNT
    if gap > 3:
        a, b, gap = b, a, EDGE_COUNT - gap
    f_mm = math.sqrt(3.0) * s_mm

    def unit(deg):
        return np.array([math.cos(math.radians(deg)), math.sin(math.radians(deg))])

    ma = c + f_mm / 2 * unit(angle_deg + 60 * a)
    mb = c + f_mm / 2 * unit(angle_deg + 60 * b)
    if gap == 3:
        return np.stack([ma, mb])
    if gap == 1:
        pivot, radius = c + s_mm * unit(angle_deg + 60 * a + 30), s_mm / 2
    else:
        pivot, radius = c + f_mm * unit(angle_deg + 60 * (a + 1)), 1.5 * s_mm
    t0 = math.atan2(*(ma - pivot)[::-1])
    t1 = math.atan2(*(mb - pivot)[::-1])
    dt = (t1 - t0 + math.pi) % (2 * math.pi) - math.pi  # the short way round, through the tile
    ts = t0 + np.linspace(0.0, dt, 24)
    return pivot + radius * np.column_stack([np.cos(ts), np.sin(ts)])


def _glare_sources(rng: np.random.Generator, lo_mm, hi_mm) -> list[tuple]:
    """Mirror images of lamps and windows on the tile-top plane: (centre, sigma_major, sigma_minor, angle,
    peak). Placed over the tiles' area, since that is where a photographer notices (and keeps) them."""
    out = []
    for _ in range(int(rng.choice([0, 1, 2], p=[0.25, 0.45, 0.3]))):
        c = (float(rng.uniform(lo_mm[0], hi_mm[0])), float(rng.uniform(lo_mm[1], hi_mm[1])))
        if rng.random() < 0.35:  # a fluorescent tube or window bar: a long thin streak
            out.append((c, float(rng.uniform(60, 200)), float(rng.uniform(1.5, 4.0)),
                        float(rng.uniform(0, 180)),
                        float(rng.uniform(0.15, 0.5))))
        else:  # a lamp: a compact bright patch
            major = float(rng.uniform(8, 30))
            out.append((c, major, major * float(rng.uniform(0.3, 0.8)), float(rng.uniform(0, 180)),
                        float(rng.uniform(0.2, 0.8))))
    return out


def _glare_at(sources, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    g = np.zeros(x.shape, np.float32)
    for (cx, cy), s1, s2, ang, peak in sources:
        t = math.radians(ang)
        u = (x - cx) * math.cos(t) + (y - cy) * math.sin(t)
        v = -(x - cx) * math.sin(t) + (y - cy) * math.cos(t)
        g += (peak * np.exp(-0.5 * ((u / s1) ** 2 + (v / s2) ** 2))).astype(np.float32)
    return g


def _room_lobes(rng: np.random.Generator) -> list[tuple[np.ndarray, float, float]]:
    """The room as the glossy tops mirror it: a dim base plus one or two broad bright lobes (a window, a lit
    wall): (unit direction towards it, angular width in radians, radiance)."""
    lobes = []
    for _ in range(int(rng.integers(1, 3))):
        az, el = float(rng.uniform(0, 2 * math.pi)), math.radians(float(rng.uniform(25, 75)))
        lobes.append((np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)]),
                      float(rng.uniform(0.15, 0.4)), float(rng.uniform(0.3, 1.2))))
    return lobes


def _sheen(x, y, z_mm: float, eye_mm: np.ndarray, tilt: np.ndarray, base: float, lobes) -> np.ndarray:
    """Radiance the glossy top reflects at table points (x, y, z): Fresnel (Schlick, f0 = 0.04) times the
    room seen in the mirror direction, for a top whose normal leans by ``tilt`` (no tile lies quite flat)."""
    vx, vy, vz = eye_mm[0] - x, eye_mm[1] - y, np.full_like(x, eye_mm[2] - z_mm)
    norm = np.sqrt(vx * vx + vy * vy + vz * vz)
    vx, vy, vz = vx / norm, vy / norm, vz / norm
    n = np.array([tilt[0], tilt[1], 1.0]) / math.sqrt(1.0 + tilt[0] ** 2 + tilt[1] ** 2)
    cos = vx * n[0] + vy * n[1] + vz * n[2]
    rx, ry, rz = 2 * cos * n[0] - vx, 2 * cos * n[1] - vy, 2 * cos * n[2] - vz
    room = np.full_like(x, base)
    for w, width, radiance in lobes:
        room += radiance * np.exp((rx * w[0] + ry * w[1] + rz * w[2] - 1.0) / (width * width))
    return (fresnel_schlick(cos, 0.04) * room).astype(np.float32)


def _paint_tiles(scene, rng: np.random.Generator, ras: _Raster, eye_mm: np.ndarray, *, glare: bool):
    """The tile-top layer (RGB with the room's reflection, coverage; the footprint has the same coverage), the
    table-plane body layer (side-wall RGB) and the soft shadows (on a 4x coarser raster, returned with it)."""
    s_mm = scene.circumradius_mm
    f_mm = scene.flat_to_flat_mm
    top = np.zeros((ras.rows, ras.cols, 3), np.float32)
    top_a = np.zeros((ras.rows, ras.cols), np.float32)
    body = np.zeros((ras.rows, ras.cols, 3), np.float32)
    lo = (ras.x0, ras.y1 - ras.rows * ras.texel)
    hi = (ras.x0 + ras.cols * ras.texel, ras.y1)
    sras = _Raster(lo, hi, 4 * ras.texel)
    shadow = np.zeros((sras.rows, sras.cols), np.float32)
    link_w = f_mm * float(rng.uniform(*LINK_WIDTH_RATIO_RANGE))
    bevel = float(rng.uniform(*BEVEL_RANGE_MM))
    light_az = float(rng.uniform(0, 360))
    light_el = math.radians(float(rng.uniform(35, 70)))
    light_h = np.array([math.cos(math.radians(light_az)), math.sin(math.radians(light_az))])
    shadow_off = light_h * -scene.thickness_mm / math.tan(light_el)  # shadows fall away from the light
    palette = {}
    for name, rgb in LINK_RGB.items():
        palette[name] = tuple(float(v) for v in np.asarray(rgb) * rng.uniform(0.85, 1.12, 3))
    black = np.asarray(TILE_BLACK, np.float32) * float(rng.uniform(0.8, 1.3))
    lo = np.array([ras.x0, ras.y1 - ras.rows * ras.texel])
    hi = np.array([ras.x0 + ras.cols * ras.texel, ras.y1])
    sources = _glare_sources(rng, lo + 0.2 * (hi - lo), hi - 0.2 * (hi - lo)) if glare else []
    room_base, lobes = float(rng.uniform(0.1, 0.4)), _room_lobes(rng)
    sc = float(1 << _SUPERSAMPLE_SHIFT)
    pad = int(math.ceil((s_mm + 1.0) / ras.texel))
    for t in scene.tiles:
        cpx = ras.to_px([t.center_mm])[0]
        c0, r0 = max(int(cpx[0]) - pad, 0), max(int(cpx[1]) - pad, 0)
        c1, r1 = min(int(cpx[0]) + pad + 1, ras.cols), min(int(cpx[1]) + pad + 1, ras.rows)
        if c1 <= c0 or r1 <= r0:
            continue
        roi_w, roi_h = c1 - c0, r1 - r0

        def local(pts_mm):
            return np.round((ras.to_px(pts_mm) - [c0, r0]) * sc).astype(np.int32)

        verts = rounded_hex_mm(t.center_mm, t.angle_deg, f_mm, CORNER_RADIUS_MM)
        mask = np.zeros((roi_h, roi_w), np.float32)
        cv2.fillPoly(mask, [local(verts)], 1.0, cv2.LINE_AA, _SUPERSAMPLE_SHIFT)
        cast = np.round(sras.to_px(verts + shadow_off) * sc).astype(np.int32)
        cv2.fillPoly(shadow, [cast], 1.0, cv2.LINE_AA,
                     _SUPERSAMPLE_SHIFT)
        face = np.empty((roi_h, roi_w, 3), np.float32)
        face[:] = black
        number_tile = tile(t.number)
        # a fixed drawing order (by the link's first edge): which band crosses over which must not depend on
        # the process's hash seed, or the same seed would render different bytes in another run
        for color in sorted(number_tile.colors, key=number_tile.link_edges):
            a, b = number_tile.link_edges(color)
            name = "white" if (scene.colorblind and color is LinkColor.GREEN) else color.value
            line = _link_polyline_mm(t.center_mm, t.angle_deg, s_mm, a, b)
            cv2.polylines(face, [local(line)], False, palette[name], max(1, round(link_w / ras.texel)),
                          cv2.LINE_AA, _SUPERSAMPLE_SHIFT)
        # distance to the outline and the nearest edge (for the bevel and the side walls)
        cols, rows = np.meshgrid(np.arange(c0, c1, dtype=np.float32), np.arange(r0, r1, dtype=np.float32))
        x, y = ras.to_mm(cols, rows)
        dx, dy = x - t.center_mm[0], y - t.center_mm[1]
        normals = np.radians(t.angle_deg + 60 * np.arange(EDGE_COUNT))
        # opposite edges share an axis: three projections give the distance to all six edges
        proj = np.stack([dx * math.cos(n) + dy * math.sin(n) for n in normals[:3]])
        axis = np.abs(proj).argmax(axis=0)
        along = np.take_along_axis(proj, axis[None], axis=0)[0]
        inset = f_mm / 2 - np.abs(along)
        nearest = axis + 3 * (along < 0)
        facing_light = np.cos(normals - math.radians(light_az)).astype(np.float32)[nearest]
        # bevel: the rim rounds off, darker except where it faces the light and catches it
        rim = np.clip(1.0 - inset / bevel, 0.0, 1.0)
        face *= (1.0 - 0.5 * rim)[..., None]
        face += (rim * np.clip(facing_light, 0, 1) ** 3 * 0.05)[..., None]
        near = [g for g in sources if math.dist(g[0], t.center_mm) < 4.0 * g[1] + s_mm]
        # each tile lies a little off flat: its reflections shift and dim a little
        wobble, gain = rng.normal(0.0, 2.5, 2), float(rng.uniform(0.6, 1.1))
        lean = rng.normal(0.0, 0.012, 2)
        face += _sheen(x, y, scene.thickness_mm, eye_mm, lean, room_base, lobes)[..., None]
        if near:
            face += (_glare_at(near, x + wobble[0], y + wobble[1]) * gain)[..., None] \
                * np.asarray([1.0, 0.98, 0.93], np.float32)
        sl = (slice(r0, r1), slice(c0, c1))
        m = mask[..., None]
        top[sl] = top[sl] * (1 - m) + face * m
        top_a[sl] = np.maximum(top_a[sl], mask)
        wall = black * (0.6 + 1.6 * np.clip(facing_light, 0.0, 1.0))[..., None]
        body[sl] = body[sl] * (1 - m) + wall * m
    shadow = cv2.GaussianBlur(shadow, (0, 0), max(0.5, 0.3 * scene.thickness_mm / sras.texel))
    return top, top_a, body, shadow, sras


def _paint_hand_mats(scene, rng: np.random.Generator, tras: _Raster, table: np.ndarray) -> None:
    """Each player's tile mat (TX 1: it shows his colour) under his hand: a felt rectangle on the table."""
    for player, colour in scene.players.items():
        hand = np.asarray([t.center_mm for t in scene.tiles if t.player == player])
        if not len(hand):
            continue
        grow = scene.circumradius_mm + float(rng.uniform(10.0, 25.0))
        lo, hi = hand.min(axis=0) - grow, hand.max(axis=0) + grow
        corners = np.asarray([(lo[0], lo[1]), (hi[0], lo[1]), (hi[0], hi[1]), (lo[0], hi[1])])
        tone = np.asarray(LINK_RGB[colour], np.float32) * float(rng.uniform(0.4, 0.7))
        sc = float(1 << _SUPERSAMPLE_SHIFT)
        mask = np.zeros(table.shape[:2], np.float32)
        cv2.fillPoly(mask, [np.round(tras.to_px(corners) * sc).astype(np.int32)], 1.0, cv2.LINE_AA,
                     _SUPERSAMPLE_SHIFT)
        lum = table.mean(axis=2)
        grain = 1.0 + 0.5 * (lum / max(float(lum.mean()), 1e-6) - 1.0)  # the table's texture shows through
        table[:] = table * (1 - mask[..., None]) + (tone[None, None, :] * grain[..., None]) * mask[..., None]


def render_tantrix_photo(scene, camera: CameraModel, rng: np.random.Generator, *,
                         settings: PhotoSettings | None = None, glare: bool = True) -> np.ndarray:
    """The photograph (BGR uint8) of ``scene`` (a simulation.tantrix.TantrixScene) seen by ``camera``."""
    rays = _RayField(camera)
    on_top, on_table = rays.on_plane(scene.thickness_mm), rays.on_plane(0.0)
    # tile layers over the tiles' area only; the table over everything the camera sees (coarser)
    centres = np.asarray([t.center_mm for t in scene.tiles])
    margin = scene.circumradius_mm + 3 * scene.thickness_mm + 5.0
    footprint = min(camera.mm_per_px_at(tuple(c), scene.thickness_mm) for c in centres)
    ras = _Raster(centres.min(axis=0) - margin, centres.max(axis=0) + margin,
                  float(np.clip(footprint / 1.5, *TEXEL_RANGE_MM)))
    top, top_a, body, shadow, sras = _paint_tiles(scene, rng, ras, camera.center_mm, glare=glare)
    seen = rays.on_grid(0.0)
    lo_t = np.maximum(seen.min(axis=0), centres.mean(axis=0) - 3000.0) - 5.0
    hi_t = np.minimum(seen.max(axis=0), centres.mean(axis=0) + 3000.0) + 5.0
    table_texel = max(1.0, float(np.max(hi_t - lo_t)) / 2500.0)
    tras = _Raster(lo_t, hi_t, table_texel)
    table = _table_texture(rng, (tras.cols * table_texel, tras.rows * table_texel), table_texel)
    table = cv2.resize(table.astype(np.float32), (tras.cols, tras.rows), interpolation=cv2.INTER_LINEAR)
    if scene.hand_mats:
        _paint_hand_mats(scene, rng, tras, table)
    a = ras.sample(top_a, on_top)[..., None]
    ba = ras.sample(top_a, on_table)[..., None]
    sh = sras.sample(shadow, on_table)[..., None]
    ground = tras.sample(table, on_table, cv2.BORDER_REPLICATE) * (1.0 - 0.6 * np.clip(sh - ba, 0, 1))
    img = a * ras.sample(top, on_top) + (1 - a) * (ba * ras.sample(body, on_table) + (1 - ba) * ground)
    # uneven room light: a broad gradient and a lamp's pool, warm or cool (smooth: on the ray grid)
    w, h = camera.image_size_wh_px
    xx, yy = np.meshgrid(rays.gx, rays.gy)
    g = float(rng.uniform(0, 2 * math.pi))
    ramp = ((xx - w / 2) * math.cos(g) + (yy - h / 2) * math.sin(g)) / max(w, h)
    pool_c = (float(rng.uniform(0.2, 0.8)) * w, float(rng.uniform(0.2, 0.8)) * h)
    pool_r = float(rng.uniform(0.3, 0.7)) * w
    pool = np.exp(-(((xx - pool_c[0]) ** 2 + (yy - pool_c[1]) ** 2) / (2 * pool_r ** 2)))
    light = 1.0 + float(rng.uniform(0.1, 0.4)) * ramp + float(rng.uniform(0.0, 0.5)) * pool
    if rng.random() < PHOTOGRAPHER_SHADOW_PROBABILITY:  # the photographer between the lamp and the table
        sx, sr = float(rng.uniform(0.1, 0.9)) * w, float(rng.uniform(0.25, 0.45)) * w
        d2 = ((xx - sx) ** 2 + ((yy - float(rng.uniform(0.95, 1.1)) * h) * 1.4) ** 2) / (sr * sr)
        light *= 1.0 - float(rng.uniform(0.3, 0.55)) / (1.0 + np.exp(5.0 * (d2 - 1.0)))
    img *= rays.upsample(light)[..., None]
    img *= np.asarray([rng.uniform(0.95, 1.08), 1.0, rng.uniform(0.9, 1.05)], np.float32) * float(
        rng.uniform(0.95, 1.2))
    settings = settings or PhotoSettings.random(rng, motion_blur_probability=0.0)
    return finish_photo(img, rng, settings=settings)
