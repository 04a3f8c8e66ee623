"""Shot videos: a hand with a squidger enters, presses a wink's edge, the wink hops (and may pot, knock
another wink or leave the mat), everything settles, the hand leaves. Simple kinematics, no physics engine.

Truth: every rest state with its frame range and scene document, and which winks moved, were potted or left
the field. Written as ``<name>.mp4`` (mp4v) and ``<name>.json``.

Public API: `OUTCOMES`, `render_shot_video(out_dir, name, rig, rng, outcome=...)`, `plan_shot(...)`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from geometry import tiddlywinks as tw
from geometry.constants import MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM, POT_HEIGHT_MM, WINK_THICKNESS_MM
from geometry.types import TiddlywinksScene, Wink
from simulation.photo import PhotoSettings, finish_photo
from simulation.primitives import POT_FLOOR_MM, Disc, Ellipsoid, Material, Primitive
from simulation.raycaster import RayCaster
from simulation.render_style import auto_exposure
from simulation.tiddlywinks_render import POT_LOOKS, scene_primitives, truth_document
from simulation.tiddlywinks_scenes import MIN_GAP_MM, random_scene

OUTCOMES = ("pot", "knock", "off")
FPS = 15
N_FRAMES = 54
HALF_T = WINK_THICKNESS_MM / 2
SKIN_ALBEDOS = ((0.56, 0.33, 0.23), (0.45, 0.25, 0.16), (0.25, 0.13, 0.08), (0.62, 0.42, 0.32))
# Timeline (frames at 15 fps).
F_ENTER, F_PRESS, F_FLICK, F_FLIGHT_END, F_LEAVE_START, F_LEAVE_END = 4, 18, 22, 31, 30, 44


@dataclass
class Motion:
    """One wink's path: plan start -> end over frames [f0, f1], hop ``apex_mm``, final rest state ``end``."""

    start: Wink
    end: Wink
    f0: int
    f1: int
    apex_mm: float
    spin: float  # flips during the hop (visual)

    def at(self, frame: int) -> Wink:
        if frame <= self.f0:
            return self.start
        if frame >= self.f1:
            return self.end
        s = (frame - self.f0) / (self.f1 - self.f0)
        e = 1 - (1 - s) ** 2 if self.apex_mm < 5 else s  # slides decelerate, hops fly evenly
        c0, c1 = np.asarray(self.start.center_mm), np.asarray(self.end.center_mm)
        c = c0 + (c1 - c0) * e
        z = self.start.z_mm + (self.end.z_mm - self.start.z_mm) * s + 4 * self.apex_mm * s * (1 - s)
        tilt = min(abs(math.sin(math.pi * self.spin * s)) * 70.0, 80.0) if self.apex_mm >= 5 else 0.0
        az = (math.degrees(math.atan2(c1[1] - c0[1], c1[0] - c0[0])) + 360) % 360
        return replace(self.start, center_mm=(float(c[0]), float(c[1])), z_mm=float(z), tilt_deg=float(tilt),
                       tilt_azimuth_deg=float(az), above=None)


def _free_flat(scene: TiddlywinksScene) -> list[Wink]:
    rel = tw.squop_relations(scene)
    busy = {r.upper_id for r in rel} | {r.lower_id for r in rel}
    return [w for w in scene.winks if not (w.potted or w.off_mat or w.unplayed) and w.tilt_deg == 0
            and w.wink_id not in busy and tw.out_of_bounds_penetration_mm(w) < -5]


def _clear(scene: TiddlywinksScene, c: tuple[float, float], r: float, ignore: set[str]) -> bool:
    if math.dist(c, scene.pot_center_mm) < 19 + r + 2:
        return False
    return all(math.dist(c, w.center_mm) >= w.radius_mm + r + MIN_GAP_MM for w in scene.winks
               if w.wink_id not in ignore and not w.potted and not (w.off_mat and w.unplayed))


def plan_shot(scene: TiddlywinksScene, rng: np.random.Generator, outcome: str,
              mat_thickness_mm: float) -> tuple[Wink, np.ndarray, list[Motion], str]:
    """The shooter, the shot direction and the winks' motions for ``outcome`` (falls back to 'pot')."""
    free = _free_flat(scene)
    if not free:
        raise ValueError("no free flat wink to shoot")
    pot = np.asarray(scene.pot_center_mm)
    if outcome == "knock":
        pairs = [(a, b) for a in free for b in free if a is not b and 80 < math.dist(a.center_mm, b.center_mm) < 350]
        for k in rng.permutation(len(pairs)):
            w, x = pairs[int(k)]
            u = np.subtract(x.center_mm, w.center_mm)
            u /= np.linalg.norm(u)
            x_end = tuple(np.asarray(x.center_mm) + u * float(rng.uniform(90, 220)))
            w_end = tuple(np.asarray(x.center_mm) - u * float(rng.uniform(2, 10)))
            probe_x = replace(x, center_mm=x_end)
            if tw.out_of_bounds_penetration_mm(probe_x) > -3 or not _clear(scene, x_end, x.radius_mm, {x.wink_id, w.wink_id}):
                continue
            if math.dist(w_end, x_end) < w.radius_mm + x.radius_mm + 1 or not _clear(scene, w_end, w.radius_mm, {x.wink_id, w.wink_id}):
                continue
            hit_frame = F_FLICK + 6
            m_w = Motion(start=w, end=replace(w, center_mm=w_end), f0=F_FLICK, f1=hit_frame + 2, apex_mm=18.0, spin=1.0)
            m_x = Motion(start=x, end=replace(x, center_mm=x_end), f0=hit_frame, f1=hit_frame + 9, apex_mm=0.0, spin=0.0)
            return w, u, [m_w, m_x], "knock"
        outcome = "pot"
    if outcome == "off":
        def edge_gap(w):
            return min(MAT_HALF_LENGTH_MM - abs(w.center_mm[0]), MAT_HALF_WIDTH_MM - abs(w.center_mm[1]))
        w = min(free, key=edge_gap)
        cx, cy = w.center_mm
        if MAT_HALF_LENGTH_MM - abs(cx) < MAT_HALF_WIDTH_MM - abs(cy):
            u = np.array([math.copysign(1.0, cx), 0.0])
            end = (math.copysign(MAT_HALF_LENGTH_MM + float(rng.uniform(30, 90)), cx), cy + float(rng.uniform(-40, 40)))
        else:
            u = np.array([0.0, math.copysign(1.0, cy)])
            end = (cx + float(rng.uniform(-40, 40)), math.copysign(MAT_HALF_WIDTH_MM + float(rng.uniform(30, 90)), cy))
        u = np.subtract(end, w.center_mm)
        u /= np.linalg.norm(u)
        w_end = replace(w, center_mm=(float(end[0]), float(end[1])), z_mm=-mat_thickness_mm + HALF_T, off_mat=True)
        return w, u, [Motion(start=w, end=w_end, f0=F_FLICK, f1=F_FLIGHT_END, apex_mm=45.0, spin=1.5)], "off"
    # Pot: the free wink whose distance to the pot is most like a real potting shot.
    w = min(free, key=lambda x: abs(math.dist(x.center_mm, pot) - 250.0))
    u = pot - np.asarray(w.center_mm)
    u /= np.linalg.norm(u)
    ang = float(rng.uniform(0, 2 * math.pi))
    rho = float(rng.uniform(0, max(17.4 - w.radius_mm - 0.5, 0)))
    end_c = (float(pot[0] + rho * math.cos(ang)), float(pot[1] + rho * math.sin(ang)))
    z = POT_FLOOR_MM + HALF_T
    for o in scene.winks:
        if o.potted and math.dist(o.center_mm, end_c) < o.radius_mm + w.radius_mm:
            z = max(z, o.z_mm + WINK_THICKNESS_MM)
    w_end = replace(w, center_mm=end_c, z_mm=z, potted=True)
    return w, u, [Motion(start=w, end=w_end, f0=F_FLICK, f1=F_FLIGHT_END, apex_mm=POT_HEIGHT_MM + 40.0, spin=1.0)], "pot"


def _rot_from_x(a: np.ndarray) -> np.ndarray:
    """A rotation whose first column is ``a`` (unit) and whose second is horizontal."""
    a = a / np.linalg.norm(a)
    b = np.cross([0.0, 0.0, 1.0], a)
    if np.linalg.norm(b) < 1e-6:
        b = np.array([0.0, 1.0, 0.0])
    b /= np.linalg.norm(b)
    return np.column_stack([a, b, np.cross(a, b)])


def hand_primitives(contact: np.ndarray, u: np.ndarray, offset: np.ndarray, squidger_r: float, skin: Material,
                    squidger_mat: Material, press_mm: float = 0.0) -> list[Primitive]:
    """A squidger pressing at ``contact`` (its edge), held by thumb and fingers, palm and forearm behind."""
    u3 = np.array([u[0], u[1], 0.0])
    alpha = math.radians(48.0)  # squidger tilt: rises away from the shot
    back = -u3
    sq_c = contact + back * squidger_r * math.cos(alpha) + np.array([0, 0, squidger_r * math.sin(alpha)]) \
        + offset - np.array([0, 0, press_mm])
    n = np.array([-math.sin(alpha) * back[0], -math.sin(alpha) * back[1], math.cos(alpha)])
    prims: list[Primitive] = [Disc(center=sq_c, normal=n, radius=squidger_r, half_thickness=2.0,
                                   material=squidger_mat, bevel_mm=0.8, name="squidger")]
    up_slope = back * math.cos(alpha) + np.array([0, 0, math.sin(alpha)])
    grip = sq_c + up_slope * squidger_r * 0.75
    side = np.cross([0.0, 0.0, 1.0], u3)
    side /= np.linalg.norm(side)
    finger_dir = -up_slope * 0.3 + u3 * 0.7
    prims.append(Ellipsoid(center=grip + n * 9 + finger_dir * 8, radii=(38, 10, 8), axes=_rot_from_x(finger_dir),
                           material=skin, name="index", coarse=True))
    prims.append(Ellipsoid(center=grip - n * 9 + side * 6, radii=(30, 11, 9), axes=_rot_from_x(finger_dir + side * 0.3),
                           material=skin, name="thumb", coarse=True))
    palm_c = grip + back * 45 + np.array([0, 0, 40.0])
    prims.append(Ellipsoid(center=palm_c, radii=(50, 42, 20), axes=_rot_from_x(back * 0.8 + np.array([0, 0, 0.6])),
                           material=skin, name="palm", coarse=True))
    arm_dir = back * 0.75 + np.array([0, 0, 0.66])
    arm_dir /= np.linalg.norm(arm_dir)
    prims.append(Ellipsoid(center=palm_c + arm_dir * 200, radii=(190, 40, 34), axes=_rot_from_x(arm_dir),
                           material=skin, name="forearm", coarse=True))
    return prims


def _ease(s: float) -> float:
    s = min(max(s, 0.0), 1.0)
    return s * s * (3 - 2 * s)


def render_shot_video(out_dir: Path, name: str, rig, rng: np.random.Generator, *, outcome: str = "pot",
                      ss: int = 2) -> Path:
    """Render one shot as ``<name>.mp4`` with ``<name>.json`` truth; returns the video path."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    style = rig.style()
    T = style.env.mat_thickness_mm
    scene0 = None
    for _ in range(20):
        scene0 = random_scene(rng, "play")
        try:
            shooter, u, motions, outcome = plan_shot(scene0, rng, outcome, T)
            break
        except ValueError:
            continue
    moving = {m.start.wink_id: m for m in motions}
    final_winks = tuple(moving[w.wink_id].end if w.wink_id in moving else w for w in scene0.winks)
    scene1 = replace(scene0, winks=final_winks)
    pot_look = str(rng.choice([k for k in POT_LOOKS if POT_LOOKS[k][1] == 1.0]))
    skin = Material(albedo=tuple(np.asarray(SKIN_ALBEDOS[int(rng.integers(len(SKIN_ALBEDOS)))]) * rng.uniform(0.9, 1.1)),
                    ks=0.03, roughness_deg=18.0, wrap=0.35)
    sq_mat = Material(albedo=tuple(rng.choice([(0.02, 0.02, 0.02), (0.6, 0.6, 0.58), (0.4, 0.05, 0.3)])), ks=0.045,
                      roughness_deg=5.0)
    sq_r = float(rng.uniform(12.5, 25.5))
    contact = np.array([shooter.center_mm[0] - u[0] * shooter.radius_mm, shooter.center_mm[1] - u[1] * shooter.radius_mm,
                        WINK_THICKNESS_MM])
    # Hand starts (and ends) far back and up, out of the frame.
    away = np.array([-u[0], -u[1], 0.0]) * 900 + np.array([0, 0, 500.0])
    photo = PhotoSettings.random(rng, motion_blur_probability=0.0, jpeg_quality_range=(90, 95))
    prim_rng_seed = int(rng.integers(2 ** 31))
    w, h = rig.camera.image_size_wh_px
    ray_cache: dict = {}
    cache: dict = {}
    exposure = None
    video_path = out_dir / f"{name}.mp4"
    writer = cv2.VideoWriter(str(video_path), cv2.VideoWriter_fourcc(*"mp4v"), FPS, (w, h))
    if not writer.isOpened():
        raise ValueError(f"cannot open a video writer for {video_path}")
    for f in range(N_FRAMES):
        if f < F_ENTER:
            hand_s = None
        elif f <= F_PRESS:
            hand_s = 1 - _ease((f - F_ENTER) / (F_PRESS - F_ENTER))
        elif f < F_LEAVE_START:
            hand_s = 0.0
        elif f <= F_LEAVE_END:
            hand_s = _ease((f - F_LEAVE_START) / (F_LEAVE_END - F_LEAVE_START))
        else:
            hand_s = None
        press = 1.0 if F_PRESS < f <= F_FLICK else 0.0
        follow = np.array([u[0], u[1], 0.0]) * 15.0 if F_FLICK < f < F_LEAVE_START else np.zeros(3)
        winks = tuple(moving[x.wink_id].at(f) if x.wink_id in moving else x for x in scene0.winks)
        key = (None if hand_s is None or hand_s >= 1 else round(hand_s, 4), press, tuple(follow),
               tuple((x.center_mm, x.z_mm, x.tilt_deg) for x in winks))
        if key not in cache:
            sc = replace(scene0, winks=winks)
            prims = scene_primitives(sc, np.random.default_rng(prim_rng_seed), pot_look=pot_look)
            if hand_s is not None and hand_s < 1:
                prims += hand_primitives(contact, u, away * hand_s + follow, sq_r, skin, sq_mat, press_mm=press)
            rc = RayCaster(rig.camera, style.env, prims, rng=np.random.default_rng([prim_rng_seed, f]), ss=ss,
                           ray_cache=ray_cache)
            linear, _ = rc.render()
            if exposure is None:
                exposure = auto_exposure(linear, rng)
            cache = {key: linear}  # consecutive identical frames reuse the render (noise still differs)
        settings = replace(photo, exposure=photo.exposure * exposure)
        writer.write(finish_photo(cache[key], rng, settings=settings))
    writer.release()

    settle = max(m.f1 for m in motions)
    moved = sorted(m.start.wink_id for m in motions if m.start.center_mm != m.end.center_mm)
    potted = sorted(m.start.wink_id for m in motions if m.end.potted and not m.start.potted)
    left = sorted(m.start.wink_id for m in motions
                  if (m.end.off_mat or tw.is_out_of_bounds(m.end)) and not m.end.potted)
    doc = {
        "kind": "shot_video",
        "video": {"path": video_path.name, "fps": FPS, "frame_count": N_FRAMES, "size_wh_px": [w, h],
                  "codec": "mp4v"},
        "calibration": {"source": "truth", "reprojection_error_mm": 0.0, "camera": rig.camera.to_dict()},
        "shot": {"outcome": outcome, "color": shooter.color.value, "wink": shooter.wink_id,
                 "direction": [round(float(u[0]), 6), round(float(u[1]), 6)], "squidger_radius_mm": round(sq_r, 3),
                 "press_frames": [F_PRESS, F_FLICK], "hand_frames": [F_ENTER, F_LEAVE_END],
                 "moved": moved, "potted": potted, "left_field": left},
        "rest_states": [
            {"frames": [0, F_FLICK], "scene": truth_document(scene0, rig.camera, video_path.name)},
            {"frames": [settle, N_FRAMES - 1], "scene": truth_document(scene1, rig.camera, video_path.name)},
        ],
        "render": {"rig": rig.name, **style.describe()},
    }
    (out_dir / f"{name}.json").write_text(json.dumps(doc, indent=1))
    return video_path
