"""Render a `TiddlywinksScene` through a `CameraModel` and write its truth document.

Public API: `render_tiddlywinks(scene, camera, rng, ...)` -> `Render` (BGR photo, per-pixel piece ids, truth),
`wink_primitive`, `pot_primitive`, `truth_document`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from calibration.camera import CameraModel
from geometry.constants import MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM, POT_HEIGHT_MM, WINK_THICKNESS_MM
from geometry.records import scene_to_document
from geometry.types import Color, TiddlywinksScene, Wink
from simulation.photo import PhotoSettings, encode_jpeg, finish_photo
from simulation.primitives import Disc, Material, Pot, Primitive
from simulation.raycaster import RayCaster
from simulation.render_style import TableStyle, auto_exposure, random_style

# Linear-RGB albedos of the four wink plastics (saturated, slightly translucent-looking hues).
WINK_ALBEDOS = {
    Color.BLUE: (0.012, 0.045, 0.40),
    Color.GREEN: (0.015, 0.26, 0.05),
    Color.RED: (0.52, 0.022, 0.018),
    Color.YELLOW: (0.80, 0.50, 0.012),
}
POT_LOOKS = {  # albedo, alpha
    "red": ((0.45, 0.03, 0.03), 1.0),
    "black": ((0.03, 0.03, 0.03), 1.0),
    "white": ((0.75, 0.74, 0.70), 1.0),
    "blue": ((0.05, 0.12, 0.45), 1.0),
    "clear": ((0.80, 0.82, 0.85), 0.35),
    "smoked": ((0.25, 0.22, 0.20), 0.55),
}


def wink_normal(wink: Wink) -> np.ndarray:
    """Unit normal of the wink's top face: tilted by ``tilt_deg``, rising towards ``tilt_azimuth_deg``."""
    th, az = math.radians(wink.tilt_deg), math.radians(wink.tilt_azimuth_deg)
    return np.array([-math.sin(th) * math.cos(az), -math.sin(th) * math.sin(az), math.cos(th)])


def wink_primitive(wink: Wink, rng: np.random.Generator) -> Disc:
    """A wink as a rounded-edge disc; each wink's plastic differs a little in hue and gloss."""
    base = np.asarray(WINK_ALBEDOS[wink.color]) * np.exp(rng.normal(0, 0.07, 3))
    # Most winks are satin (worn, handled plastic); some are glossy and can mirror the lamp.
    rough = float(rng.uniform(4.0, 8.0)) if rng.random() < 0.15 else float(rng.uniform(10.0, 22.0))
    mat = Material(albedo=tuple(np.clip(base, 0, 0.95)), ks=float(rng.uniform(0.035, 0.05)), roughness_deg=rough)
    return Disc(center=np.array([wink.center_mm[0], wink.center_mm[1], wink.z_mm]), normal=wink_normal(wink),
                radius=wink.radius_mm, half_thickness=WINK_THICKNESS_MM / 2, material=mat,
                bevel_mm=float(rng.uniform(0.35, 0.6)), name=wink.wink_id)


def pot_primitive(center_mm: tuple[float, float], look: str) -> Pot:
    albedo, alpha = POT_LOOKS[look]
    return Pot(center_xy=tuple(center_mm), material=Material(albedo=albedo, ks=0.045, roughness_deg=4.0, alpha=alpha),
               name="pot")


def mat_corners_mm() -> np.ndarray:
    """Mat corners in the truth order (-x,+y), (+x,+y), (+x,-y), (-x,-y)."""
    L, W = MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM
    return np.array([[-L, W, 0.0], [L, W, 0.0], [L, -W, 0.0], [-L, -W, 0.0]])


def truth_document(scene: TiddlywinksScene, camera: CameraModel, image_path: str, *,
                   extra: dict | None = None) -> dict:
    """``scene_to_document`` plus image, mat corners, pot and the exact calibration (source "truth")."""
    doc = scene_to_document(scene)
    doc["image"] = {"path": image_path, "size_wh_px": list(camera.image_size_wh_px)}
    doc["mat"] = {"corners_px": np.round(camera.project_mm(mat_corners_mm()), 3).tolist()}
    pc = scene.pot_center_mm
    doc["pot"] = {"center_mm": [float(pc[0]), float(pc[1])],
                  "center_px": np.round(camera.project_mm(np.array([[pc[0], pc[1], 0.0]]))[0], 3).tolist(),
                  "top_center_px": np.round(camera.project_mm(np.array([[pc[0], pc[1], POT_HEIGHT_MM]]))[0],
                                            3).tolist()}
    doc["calibration"] = {"source": "truth", "reprojection_error_mm": 0.0, "camera": camera.to_dict()}
    if extra:
        doc.update(extra)
    return doc


@dataclass
class Render:
    """A finished photograph with its truth: ``bgr`` uint8, ``ids`` per-pixel primitive names index."""

    bgr: np.ndarray
    ids: np.ndarray
    names: list[str]
    photo: PhotoSettings
    style: TableStyle
    visible_px: dict = field(default_factory=dict)

    def jpeg(self) -> bytes:
        return encode_jpeg(self.bgr, self.photo.jpeg_quality)


def scene_primitives(scene: TiddlywinksScene, rng: np.random.Generator, *, pot_look: str) -> list[Primitive]:
    prims: list[Primitive] = [pot_primitive(scene.pot_center_mm, pot_look)]
    for w in scene.winks:
        if w.off_mat and w.unplayed:
            continue  # in the player's hand
        prims.append(wink_primitive(w, rng))
    return prims


def render_tiddlywinks(scene: TiddlywinksScene, camera: CameraModel, rng: np.random.Generator, *,
                       style: TableStyle | None = None, photo: PhotoSettings | None = None,
                       pot_look: str | None = None, extra_primitives: list[Primitive] = (), ss: int = 2,
                       ray_cache: dict | None = None, exposure: float | None = None) -> Render:
    """Ray-cast ``scene`` as seen by ``camera`` and finish it as a camera photograph.

    ``style`` (mat felt, table, lamp) and ``photo`` (noise, blur, JPEG quality) are drawn from ``rng`` when
    not given, so one seed gives one image. Returns the BGR photo and an id map of the visible primitives.
    """
    style = style or random_style(rng)
    photo = photo or PhotoSettings.random(rng)
    pot_look = pot_look or str(rng.choice(list(POT_LOOKS), p=[0.25, 0.15, 0.15, 0.15, 0.2, 0.1]))
    prims = scene_primitives(scene, rng, pot_look=pot_look) + list(extra_primitives)
    rc = RayCaster(camera, style.env, prims, rng=rng, ss=ss, ray_cache=ray_cache)
    linear, ids = rc.render()
    exp = exposure if exposure is not None else auto_exposure(linear, rng)
    photo_e = PhotoSettings(**{**{f: getattr(photo, f) for f in photo.__slots__}, "exposure": photo.exposure * exp})
    bgr = finish_photo(linear, rng, settings=photo_e)
    names = [p.name for p in prims]
    counts = np.bincount(ids[ids >= 0].ravel(), minlength=len(prims)) if (ids >= 0).any() else np.zeros(len(prims))
    visible = {names[i]: int(counts[i]) for i in range(len(prims))}
    return Render(bgr=bgr, ids=ids, names=names, photo=photo_e, style=style, visible_px=visible)


def write_render(render: Render, doc: dict, out_dir: Path, name: str) -> Path:
    """Write ``<name>.jpg`` and ``<name>.json`` side by side; the JSON image path is relative."""
    out_dir.mkdir(parents=True, exist_ok=True)
    img_path = out_dir / f"{name}.jpg"
    img_path.write_bytes(render.jpeg())
    (out_dir / f"{name}.json").write_text(json.dumps(doc, indent=1))
    return img_path
