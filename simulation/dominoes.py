"""Dominoes renders with exact truth (RULES.md 3): a line of play, a hand, face-down tiles, on a table.

Frame: table plane z = 0, z up, mm; tile tops at z = ``thickness_mm``. The picture is composed per pixel
through the camera model (lens distortion included): each pixel's ray meets the tile-top plane and the table
plane; where the top plane hits a tile top that colour is seen, otherwise the table layer, which carries the
tile bodies (seen as the tile sides between the top's and the footprint's projections) and soft shadows. Both
layers are painted in table millimetres at 0.25 mm per texel, then the photo pipeline adds vignetting,
defocus, noise, tone curve and JPEG. Tiles are ivory with dark or value-coloured pips, or black with white pips;
a centre bar, sometimes a brass spinner, and glare.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from shapely.geometry import Polygon

from calibration.camera import CameraModel
from geometry.dominoes import (
    LENGTH_TO_WIDTH_RATIO,
    Bone,
    PlacedTile,
    find_joins,
    free_ends,
    pip_layout,
    set_size,
)
from simulation.photo import PhotoSettings, finish_photo
from simulation.pyramids_marbles_common import oblique_camera, write_image_and_truth
from simulation.textures import cloth_texture, felt_texture, wood_texture

GAME = "dominoes"
TEXEL_MM = 0.25  # texture resolution of both layers (finer than any pixel footprint here)
TILE_WIDTH_RANGE_MM = (20.0, 26.0)
THICKNESS_RANGE_MM = (6.0, 9.0)
JOIN_GAP_RANGE_MM = (0.6, 1.6)  # hand-laid tiles never quite touch
PIP_DIAMETER_RATIO_RANGE = (0.12, 0.16)
BAR_LENGTH_RATIO_RANGE = (0.55, 0.85)
BAR_THICKNESS_RATIO_RANGE = (0.035, 0.06)
# Value-coloured pips, linear RGB (as the "rainbow" club sets: colour encodes the value).
_PIP_COLOURS = {1: (0.08, 0.25, 0.55), 2: (0.05, 0.35, 0.08), 3: (0.55, 0.04, 0.03), 4: (0.30, 0.08, 0.30),
                5: (0.04, 0.10, 0.45), 6: (0.60, 0.38, 0.02), 7: (0.25, 0.12, 0.05), 8: (0.02, 0.30, 0.30),
                9: (0.45, 0.05, 0.20), 10: (0.10, 0.10, 0.10), 11: (0.35, 0.20, 0.02), 12: (0.05, 0.15, 0.35)}
_IVORY = ((0.78, 0.74, 0.60), (0.82, 0.80, 0.72), (0.74, 0.68, 0.50))
_BLACK = (0.025, 0.025, 0.028)


@dataclass(frozen=True, slots=True, kw_only=True)
class DominoesScene:
    """Tiles on the table and how the layout was built (``chain`` ids in line order)."""

    variant: str
    max_pips: int
    tiles: tuple[PlacedTile, ...]
    chain: tuple[str, ...]
    hand: tuple[str, ...]
    thickness_mm: float
    tile_style: dict[str, str]  # tile id -> "ivory" | "black"
    layout_legal: bool


# --- scenes -----------------------------------------------------------------------------------------------------


def _all_bones(max_pips: int) -> list[Bone]:
    return [Bone(a=a, b=b) for a in range(max_pips + 1) for b in range(a, max_pips + 1)]


def _rot(v: tuple[float, float], deg: float) -> tuple[float, float]:
    t = math.radians(deg)
    return (v[0] * math.cos(t) - v[1] * math.sin(t), v[0] * math.sin(t) + v[1] * math.cos(t))


def _poly(t: PlacedTile, grow: float = 0.0) -> Polygon:
    return Polygon(t.outline_mm()).buffer(grow, join_style=2)


def random_scene(rng: np.random.Generator, *, variant: str | None = None, max_pips: int | None = None,
                 layout_tiles: tuple[int, int] = (6, 13), hand_tiles: tuple[int, int] = (3, 7),
                 bad_join_probability: float = 0.3, face_down_probability: float = 0.25,
                 black_probability: float = 0.2) -> DominoesScene:
    """A legal line of play (or one with a bad join), laid in a snake inside a box, and a hand in a row."""
    variant = variant or str(rng.choice(["british", "american"]))
    if max_pips is None:
        max_pips = 6 if variant == "american" else int(rng.choice([6, 6, 9, 12]))
    set_size(max_pips)
    w = float(rng.uniform(*TILE_WIDTH_RANGE_MM))
    length = w * LENGTH_TO_WIDTH_RATIO
    box = (260.0, 120.0)  # half sizes of the layout box (mm), centred at (0, 60)
    box_c = (0.0, 60.0)
    pool = _all_bones(max_pips)
    rng.shuffle(pool)
    doubles = [b for b in pool if b.is_double]
    lead = doubles[0]
    pool.remove(lead)
    theta = float(rng.uniform(0, 360)) if rng.random() < 0.3 else float(rng.choice([0.0, 90.0, 180.0, 270.0])
                                                                          + rng.normal(0, 3))
    tiles: list[PlacedTile] = []
    lead_t = PlacedTile(tile_id="L0", center_mm=box_c, angle_deg=theta, width_mm=w, length_mm=length, bone=lead)
    tiles.append(lead_t)
    chain = ["L0"]
    target = int(rng.integers(layout_tiles[0], layout_tiles[1] + 1))
    # each arm: (tile, half at the open end, direction of travel, open value)
    arms = [[lead_t, "b", lead_t.axis, lead.b]]
    if variant == "british":
        arms.append([lead_t, "a", (-lead_t.axis[0], -lead_t.axis[1]), lead.a])
    polys = [_poly(lead_t)]
    stuck = 0
    k = 1
    while len(tiles) < target and stuck < 40:
        arm = arms[int(rng.integers(len(arms)))]
        prev, half, d, value = arm
        options = [b for b in pool if b.matches(value)]
        if not options:
            stuck += 1
            if all(not any(b.matches(a[3]) for b in pool) for a in arms):
                break
            continue
        bone = options[int(rng.integers(len(options)))]
        gap = float(rng.uniform(*JOIN_GAP_RANGE_MM))
        e = prev.end_center_mm(half)
        turn = 0.0
        if rng.random() < 0.12:
            turn = float(rng.choice([-90.0, 90.0]))
        placed = None
        for tr in ([turn, 0.0, 90.0, -90.0] if turn else [0.0, 90.0, -90.0]):
            dd = _rot(d, tr) if tr else d
            if tr == 0.0:
                c = (e[0] + d[0] * (gap + length / 2), e[1] + d[1] * (gap + length / 2))
            else:
                ch = (e[0] + d[0] * (gap + w / 2), e[1] + d[1] * (gap + w / 2))
                c = (ch[0] + dd[0] * w / 2, ch[1] + dd[1] * w / 2)
            # the matching half sits at the joining side: half a towards the join when its value matches
            near_a = bone.a == value
            ang = math.degrees(math.atan2(dd[1], dd[0])) if near_a else math.degrees(math.atan2(-dd[1], -dd[0]))
            t = PlacedTile(tile_id=f"L{k}", center_mm=c, angle_deg=ang, width_mm=w, length_mm=length, bone=bone)
            p = _poly(t)
            inside = all(abs(x - box_c[0]) <= box[0] and abs(y - box_c[1]) <= box[1] for x, y in t.outline_mm())
            # clear of every tile by a hand-laid gap, and of all but the one it joins by a third of a width,
            # so no end touches a tile it was not laid against
            if inside and all(p.distance(q) >= 0.4 for q in polys) and all(
                    p.distance(q) > 0.3 * w for q, o in zip(polys, tiles) if o.tile_id != prev.tile_id):
                placed = (t, dd)
                break
        if placed is None:
            stuck += 1
            continue
        t, dd = placed
        tiles.append(t)
        polys.append(_poly(t))
        pool.remove(bone)
        arm[0], arm[1], arm[2], arm[3] = t, ("b" if bone.a == value else "a"), dd, bone.other_end(value)
        chain.append(t.tile_id)
        k += 1
    # a bad join: swap one non-lead layout tile for a bone that matches neither neighbour
    layout_legal = True
    if len(tiles) > 2 and rng.random() < bad_join_probability:
        i = int(rng.integers(1, len(tiles)))
        victim = tiles[i]
        ids = {victim.tile_id}
        joined_values = {j.other_pips if j.tile_id in ids else j.pips for j in find_joins(tiles)
                         if j.tile_id in ids or j.other_id in ids}
        wrong = [b for b in pool if not ({b.a, b.b} & joined_values)]
        if wrong:
            nb = wrong[int(rng.integers(len(wrong)))]
            pool.remove(nb)
            tiles[i] = PlacedTile(tile_id=victim.tile_id, center_mm=victim.center_mm, angle_deg=victim.angle_deg,
                                  width_mm=w, length_mm=length, bone=nb)
            layout_legal = False
    # the hand: a row of tiles side by side below the layout box, some face down
    n_hand = min(int(rng.integers(hand_tiles[0], hand_tiles[1] + 1)), len(pool))
    hand_ids = []
    hx0 = -0.5 * (n_hand - 1) * (w + 2.0) + float(rng.uniform(-60, 60))
    hang = 90.0 + float(rng.normal(0, 4))
    x = hx0
    for i in range(n_hand):
        bone = pool.pop()
        down = rng.random() < face_down_probability
        c = (x, -120.0 + float(rng.normal(0, 1)))
        x += w / math.cos(math.radians(hang - 90.0)) + float(rng.uniform(2.0, 6.0))
        ang = hang + (180.0 if rng.random() < 0.5 else 0.0)
        t = PlacedTile(tile_id=f"H{i}", center_mm=c, angle_deg=ang, width_mm=w, length_mm=length,
                       bone=None if down else bone, face_up=not down)
        tiles.append(t)
        hand_ids.append(t.tile_id)
    black = rng.random() < black_probability
    style = {t.tile_id: ("black" if black else "ivory") for t in tiles}
    return DominoesScene(variant=variant, max_pips=max_pips, tiles=tuple(tiles), chain=tuple(chain),
                         hand=tuple(hand_ids), thickness_mm=float(rng.uniform(*THICKNESS_RANGE_MM)),
                         tile_style=style, layout_legal=layout_legal)


# --- rendering --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Raster:
    x0_mm: float
    y1_mm: float
    cols: int
    rows: int

    def to_px(self, pts_mm) -> np.ndarray:
        p = np.asarray(pts_mm, float).reshape(-1, 2)
        return np.column_stack([(p[:, 0] - self.x0_mm) / TEXEL_MM, (self.y1_mm - p[:, 1]) / TEXEL_MM])


def _rounded_outline(t: PlacedTile, radius_mm: float, shrink_mm: float = 0.0) -> np.ndarray:
    ax, ay = t.axis
    nx, ny = -ay, ax
    hl, hw = t.length_mm / 2 - shrink_mm, t.width_mm / 2 - shrink_mm
    r = min(radius_mm, hw * 0.9)
    pts = []
    for sv, su, a0 in ((1, 1, 0), (-1, 1, 90), (-1, -1, 180), (1, -1, 270)):
        cv, cu = sv * (hl - r), su * (hw - r)
        for a in np.linspace(a0, a0 + 90, 7):
            v = cv + r * math.cos(math.radians(a))
            u = cu + r * math.sin(math.radians(a))
            pts.append((t.center_mm[0] + v * ax + u * nx, t.center_mm[1] + v * ay + u * ny))
    return np.asarray(pts)


def _local_to_table(t: PlacedTile, v: float, u: float) -> tuple[float, float]:
    ax, ay = t.axis
    return (t.center_mm[0] + v * ax - u * ay, t.center_mm[1] + v * ay + u * ax)


def _paint(scene: DominoesScene, rng: np.random.Generator, extent_mm: tuple[float, float, float, float]):
    """The two layers (top RGBA, table RGB) in table mm."""
    x0, y0, x1, y1 = extent_mm
    ras = _Raster(x0, y1, math.ceil((x1 - x0) / TEXEL_MM), math.ceil((y1 - y0) / TEXEL_MM))
    size = (x1 - x0, y1 - y0)
    kind = int(rng.integers(3))
    if kind == 0:
        base = wood_texture(rng, size_mm=size, texel_mm=1.0).image
    elif kind == 1:
        base = cloth_texture(rng, size_mm=size, texel_mm=1.0).image
    else:
        felt = felt_texture(rng, size_mm=size, texel_mm=1.0).image
        colour = np.asarray([(0.05, 0.22, 0.08), (0.20, 0.20, 0.21), (0.06, 0.10, 0.25)][int(rng.integers(3))],
                            np.float32)
        base = felt[..., None] * colour[None, None, :]
    table = cv2.resize(base.astype(np.float32), (ras.cols, ras.rows), interpolation=cv2.INTER_LINEAR)
    top = np.zeros((ras.rows, ras.cols, 3), np.float32)
    alpha = np.zeros((ras.rows, ras.cols), np.float32)
    shadow = np.zeros((ras.rows, ras.cols), np.float32)
    bodies = np.zeros((ras.rows, ras.cols), np.float32)
    light_dir = _rot((1.0, 0.0), float(rng.uniform(0, 360)))
    shadow_len = scene.thickness_mm * float(rng.uniform(0.3, 1.0))
    ivory = np.asarray(_IVORY[int(rng.integers(len(_IVORY)))], np.float32) * float(rng.uniform(0.9, 1.05))
    coloured_pips = rng.random() < 0.3
    pip_ratio = float(rng.uniform(*PIP_DIAMETER_RATIO_RANGE))
    bar_len = float(rng.uniform(*BAR_LENGTH_RATIO_RANGE))
    bar_thick = float(rng.uniform(*BAR_THICKNESS_RATIO_RANGE))
    spinner = rng.random() < 0.3
    radius = 0.12
    shift = 4
    s = float(1 << shift)

    def poly(pts_mm, img, val):
        q = np.round(ras.to_px(pts_mm) * s).astype(np.int32)
        cv2.fillPoly(img, [q], val, cv2.LINE_8, shift)

    def disc(c_mm, r_mm, img, val):
        q = np.round(ras.to_px([c_mm])[0] * s).astype(np.int64)
        cv2.circle(img, (int(q[0]), int(q[1])), round(r_mm / TEXEL_MM * s), val, -1, cv2.LINE_8, shift)

    for t in scene.tiles:
        w = t.width_mm
        body = _rounded_outline(t, radius * w)
        poly(body, bodies, 1.0)
        poly(body + np.asarray(light_dir) * shadow_len, shadow, 1.0)
    for t in scene.tiles:
        w = t.width_mm
        black = scene.tile_style.get(t.tile_id) == "black"
        face = np.asarray(_BLACK if black else ivory, np.float32)
        outline = _rounded_outline(t, radius * w, shrink_mm=0.0)
        poly(outline, top, tuple(float(v) for v in face))
        poly(outline, alpha, 1.0)
        if not t.face_up:
            continue
        ink = (0.85, 0.85, 0.82) if black else (0.025, 0.022, 0.02)
        # centre bar across the width at v = 0
        hb, ht = bar_len * w / 2, bar_thick * w / 2
        bar = [_local_to_table(t, -ht, -hb), _local_to_table(t, -ht, hb), _local_to_table(t, ht, hb),
               _local_to_table(t, ht, -hb)]
        poly(bar, top, ink)
        if spinner and not black:
            disc(t.center_mm, 0.07 * w, top, (0.55, 0.40, 0.12))
        for half, sign in (("a", -1.0), ("b", 1.0)):
            n = t.pips(half)
            colour = ink if (black or not coloured_pips or n == 0) else _PIP_COLOURS[n]
            for u_unit, v_unit in pip_layout(n):
                v = sign * (t.length_mm / 2 - v_unit * t.length_mm / 2)
                u = (u_unit - 0.5) * w
                c = _local_to_table(t, v, u)
                disc(c, pip_ratio * w / 2, top, tuple(float(x) for x in colour))
                # drilled pip: the far rim catches light
                if not black:
                    rim = (c[0] + 0.2 * pip_ratio * w * light_dir[0], c[1] + 0.2 * pip_ratio * w * light_dir[1])
                    disc(rim, 0.25 * pip_ratio * w, top, tuple(float(x) * 1.8 + 0.02 for x in colour))
    # bevel: the top darkens towards its rounded edge
    dist = cv2.distanceTransform((alpha > 0.5).astype(np.uint8), cv2.DIST_L2, 5) * TEXEL_MM
    bevel = (0.78 + 0.22 * np.clip(dist / 1.2, 0, 1)).astype(np.float32)
    top *= bevel[..., None]
    # glare: a soft specular sheen on a few tiles, whiter than the face
    glare = np.zeros_like(alpha)
    for t in scene.tiles:
        if rng.random() < 0.25:
            c = _local_to_table(t, float(rng.uniform(-0.6, 0.6)) * t.length_mm / 2,
                                float(rng.uniform(-0.3, 0.3)) * t.width_mm)
            disc(c, float(rng.uniform(0.15, 0.35)) * t.width_mm, glare, float(rng.uniform(0.15, 0.4)))
    glare = cv2.GaussianBlur(glare, (0, 0), 2.0 / TEXEL_MM)
    top += (glare * alpha)[..., None]
    shadow = cv2.GaussianBlur(shadow, (0, 0), 1.5 / TEXEL_MM)
    table *= (1.0 - 0.55 * np.clip(shadow - bodies, 0, 1))[..., None]
    side = np.asarray(_BLACK if all(v == "black" for v in scene.tile_style.values()) else ivory * 0.55, np.float32)
    table = table * (1 - bodies[..., None]) + side[None, None, :] * bodies[..., None]
    top = cv2.GaussianBlur(top, (0, 0), 0.5)
    alpha = cv2.GaussianBlur(alpha, (0, 0), 0.5)
    return ras, top, alpha, table


def render_scene(scene: DominoesScene, camera: CameraModel, rng: np.random.Generator,
                 settings: PhotoSettings | None = None) -> np.ndarray:
    """The photograph (BGR uint8) of ``scene`` seen by ``camera``."""
    w, h = camera.image_size_wh_px
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    px = np.column_stack([xx.ravel(), yy.ravel()])
    on_top = camera.image_to_table_mm(px, scene.thickness_mm)
    on_table = camera.image_to_table_mm(px, 0.0)
    lo = np.minimum(on_top.min(axis=0), on_table.min(axis=0)) - 5
    hi = np.maximum(on_top.max(axis=0), on_table.max(axis=0)) + 5
    ras, top, alpha, table = _paint(scene, rng, (lo[0], lo[1], hi[0], hi[1]))

    def sample(img, pts):
        q = ras.to_px(pts).astype(np.float32)
        mx, my = q[:, 0].reshape(h, w), q[:, 1].reshape(h, w)
        return cv2.remap(img, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)

    a = sample(alpha, on_top)[..., None]
    img = a * sample(top, on_top) + (1 - a) * sample(table, on_table)
    # uneven room light: a broad gradient and a warm or cool cast
    g = _rot((1.0, 0.0), float(rng.uniform(0, 360)))
    ramp = ((xx - w / 2) * g[0] + (yy - h / 2) * g[1]) / max(w, h)
    img *= (1.0 + float(rng.uniform(0.1, 0.35)) * ramp)[..., None].astype(np.float32)
    img *= np.asarray([rng.uniform(0.95, 1.08), 1.0, rng.uniform(0.9, 1.05)], np.float32) * float(
        rng.uniform(0.95, 1.25))
    settings = settings or PhotoSettings.random(rng, motion_blur_probability=0.0)
    return finish_photo(img, rng, settings=settings)


def camera_for(scene: DominoesScene, rng: np.random.Generator, size_wh_px: tuple[int, int],
               max_tilt_deg: float = 25.0) -> CameraModel:
    """A phone above the table, up to ``max_tilt_deg`` off vertical, framing every tile with a margin."""
    pts = np.asarray([p for t in scene.tiles for p in t.outline_mm()])
    c = (pts.min(axis=0) + pts.max(axis=0)) / 2
    span = float(np.max(pts.max(axis=0) - pts.min(axis=0)))
    w, h = size_wh_px
    distance = float(rng.uniform(650.0, 900.0))
    focal = min(w, h) * distance / (span * 1.1)
    tilt = float(rng.uniform(0.0, max_tilt_deg))
    state = rng.bit_generator.state
    for _ in range(30):
        rng.bit_generator.state = state
        cam = oblique_camera(rng, target_mm=(float(c[0]), float(c[1]), 0.0), distance_mm=distance, tilt_deg=tilt,
                             focal_px=focal, image_size_wh_px=(w, h))
        q = cam.project_mm(np.column_stack([pts, np.full(len(pts), scene.thickness_mm)]))
        margin = 0.03 * min(w, h)
        if (q[:, 0].min() > margin and q[:, 1].min() > margin and q[:, 0].max() < w - margin
                and q[:, 1].max() < h - margin):
            return cam
        focal *= 0.92
    return cam


def truth_document(scene: DominoesScene, camera: CameraModel) -> dict:
    """Truth in the shape ``tableref analyze --game dominoes`` prints: tiles, joins, the layout, the camera."""
    layout = [t for t in scene.tiles if t.tile_id in scene.chain]
    joins = find_joins(layout)
    tiles = []
    for t in scene.tiles:
        corners = np.asarray(t.outline_mm())
        px = camera.project_mm(np.column_stack([corners, np.full(4, scene.thickness_mm)]))
        tiles.append({
            "id": t.tile_id,
            "pips": None if t.bone is None else [t.bone.a, t.bone.b],
            "face_up": t.face_up,
            "style": scene.tile_style[t.tile_id],
            "center_mm": [round(v, 3) for v in t.center_mm],
            "angle_deg": round(t.angle_deg % 360.0, 3),
            "width_mm": round(t.width_mm, 3),
            "length_mm": round(t.length_mm, 3),
            "outline_mm": [[round(x, 3), round(y, 3)] for x, y in corners],
            "outline_px": [[round(float(x), 2), round(float(y), 2)] for x, y in px],
            "in_layout": t.tile_id in scene.chain,
        })
    return {
        "game": GAME,
        "variant": scene.variant,
        "set_max_pips": scene.max_pips,
        "thickness_mm": round(scene.thickness_mm, 3),
        "tiles": tiles,
        "layout": {
            "chain": list(scene.chain),
            "legal": scene.layout_legal,
            "joins": [{"tile": j.tile_id, "half": j.half, "other": j.other_id, "other_half": j.other_half,
                       "pips": j.pips, "other_pips": j.other_pips, "matches": j.matches} for j in joins],
            "free_ends": [list(e) for e in free_ends(layout, joins)],
        },
        "hand": list(scene.hand),
        "calibration": {"source": "simulator", "camera": camera.to_dict()},
    }


def render_dominoes_item(out_dir: str | Path, *, seed: int, index: int,
                         size_wh_px: tuple[int, int] = (1280, 960)) -> Path:
    """Photograph ``index`` of the set ``seed``: ``dm_<seed>_<index>.jpg`` with its truth ``.json``."""
    rng = np.random.default_rng([seed, index])
    scene = random_scene(rng)
    cam = camera_for(scene, rng, size_wh_px)
    settings = PhotoSettings.random(rng, motion_blur_probability=0.0)
    bgr = render_scene(scene, cam, rng, settings)
    jpg, _ = write_image_and_truth(out_dir, f"dm_{seed}_{index:03d}", bgr, truth_document(scene, cam),
                                   jpeg_quality=settings.jpeg_quality)
    return jpg


def generate_dominoes(out_dir: str | Path, *, count: int, seed: int,
                      size_wh_px: tuple[int, int] = (1280, 960)) -> list[Path]:
    """``count`` photographs ``dm_<seed>_<i>.jpg`` with truth ``.json``, deterministic by seed and index."""
    return [render_dominoes_item(out_dir, seed=seed, index=i, size_wh_px=size_wh_px) for i in range(count)]
