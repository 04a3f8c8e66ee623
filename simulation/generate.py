"""Batch generators behind ``tableref simulate``: each writes images (or videos) with truth JSON beside them.

Every generator has the signature ``fn(out_dir, *, count, seed, size_wh_px) -> list[Path]`` and is
deterministic by seed: item ``i`` draws from ``numpy.random.default_rng([seed, i])`` only.

A *rig* is a camera plus a table look (mat, table top, lamp) that several frames share, so its calibration
frames describe the same camera as its game images.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from calibration.camera import CameraModel
from geometry.types import TiddlywinksScene
from simulation.calibration_frames import board_primitive, board_truth, flat_pose, tilted_pose
from simulation.camera_rig import describe_camera, random_camera
from simulation.photo import PhotoSettings
from simulation.render_style import TableStyle, random_style
from simulation.tiddlywinks_render import render_tiddlywinks, truth_document, write_render
from simulation.tiddlywinks_scenes import SCENE_KINDS, random_scene

DEFAULT_SIZE_WH_PX = (1920, 1080)
CALIBRATION_TILTS_DEG = (0.0, 25.0, 40.0, 55.0)


@dataclass
class Rig:
    """A camera and the room it looks at."""

    name: str
    camera: CameraModel
    style_seed: tuple[int, ...]
    mat_color: str | None = None  # None: drawn with the rest of the style
    _style: TableStyle | None = None

    def style(self) -> TableStyle:
        if self._style is None:
            self._style = random_style(np.random.default_rng(list(self.style_seed)), mat_color=self.mat_color)
        return self._style


def make_rig(name: str, seed: int, size_wh_px: tuple[int, int], mat_color: str | None = None) -> Rig:
    rng = np.random.default_rng([seed, 7777])
    return Rig(name=name, camera=random_camera(rng, image_size_wh_px=size_wh_px), style_seed=(seed, 8888),
               mat_color=mat_color)


def render_tiddlywinks_item(out_dir: Path, name: str, scene: TiddlywinksScene, rig: Rig, rng: np.random.Generator, *,
                            kind: str, jpeg_quality_range: tuple[int, int] = (80, 95)) -> Path:
    """Render one scene with a rig and write ``<name>.jpg`` + ``<name>.json``."""
    photo = PhotoSettings.random(rng, jpeg_quality_range=jpeg_quality_range)
    r = render_tiddlywinks(scene, rig.camera, rng, style=rig.style(), photo=photo)
    extra = {"render": {"rig": rig.name, "scene_kind": kind, **rig.style().describe(),
                        "camera": describe_camera(rig.camera), "jpeg_quality": r.photo.jpeg_quality,
                        "defocus_sigma_px": round(r.photo.defocus_sigma_px, 3),
                        "motion_blur_px": round(r.photo.motion_blur_px, 3),
                        "visible_px": {k: v for k, v in r.visible_px.items()}}}
    doc = truth_document(scene, rig.camera, f"{name}.jpg", extra=extra)
    return write_render(r, doc, out_dir, name)


def generate_tiddlywinks(out_dir: Path, *, count: int, seed: int,
                         size_wh_px: tuple[int, int] = DEFAULT_SIZE_WH_PX,
                         kinds: tuple[str, ...] | None = None, rig: Rig | None = None,
                         prefix: str = "tw", jpeg_quality_range: tuple[int, int] = (80, 95)) -> list[Path]:
    """``count`` tiddlywinks photographs; scene kinds cycle through ``kinds`` (default: all kinds)."""
    return [render_tiddlywinks_seeded(out_dir, seed, i, size_wh_px=size_wh_px, kinds=kinds, rig=rig, prefix=prefix,
                                      jpeg_quality_range=jpeg_quality_range) for i in range(count)]


def render_tiddlywinks_seeded(out_dir: Path, seed: int, item: int, *,
                              size_wh_px: tuple[int, int] = DEFAULT_SIZE_WH_PX,
                              kinds: tuple[str, ...] | None = None, rig: Rig | None = None, prefix: str = "tw",
                              jpeg_quality_range: tuple[int, int] = (80, 95)) -> Path:
    """Item ``item`` of ``generate_tiddlywinks(seed=seed)``, drawn alone: a test can redraw one bench photo
    exactly as the bench rendered it."""
    rng = np.random.default_rng([seed, item])
    item_rig = rig or make_rig(f"{prefix}_{seed}_{item:03d}", seed * 1000 + item, size_wh_px)
    kinds = tuple(kinds or SCENE_KINDS)
    kind = kinds[item % len(kinds)]
    scene = random_scene(rng, kind)
    return render_tiddlywinks_item(Path(out_dir), f"{prefix}_{seed}_{item:03d}_{kind}", scene, item_rig, rng,
                                   kind=kind, jpeg_quality_range=jpeg_quality_range)


def render_calibration_frame(out_dir: Path, name: str, rig: Rig, rng: np.random.Generator, tilt_deg: float, *,
                             jpeg_quality_range: tuple[int, int] = (80, 95)) -> Path:
    """The ChArUco board flat on the empty mat (tilt 0) or held tilted above it."""
    R, t = flat_pose(rng) if tilt_deg == 0 else tilted_pose(rng, rig.camera, tilt_deg)
    board = board_primitive(R, t)
    photo = PhotoSettings.random(rng, jpeg_quality_range=jpeg_quality_range, motion_blur_probability=0.0)
    empty = TiddlywinksScene(winks=())
    r = render_tiddlywinks(empty, rig.camera, rng, style=rig.style(), photo=photo, extra_primitives=[board],
                           pot_look="black")
    doc = {"kind": "calibration_frame", "image": {"path": f"{name}.jpg", "size_wh_px": list(rig.camera.image_size_wh_px)},
           "board": board_truth(rig.camera, R, t),
           "calibration": {"source": "truth", "reprojection_error_mm": 0.0, "camera": rig.camera.to_dict()},
           "render": {"rig": rig.name, **rig.style().describe(), "camera": describe_camera(rig.camera),
                      "jpeg_quality": r.photo.jpeg_quality}}
    return write_render(r, doc, out_dir, name)


def generate_calibration(out_dir: Path, *, count: int, seed: int,
                         size_wh_px: tuple[int, int] = DEFAULT_SIZE_WH_PX, rig: Rig | None = None,
                         tilts_deg: tuple[float, ...] = CALIBRATION_TILTS_DEG,
                         jpeg_quality_range: tuple[int, int] = (80, 95)) -> list[Path]:
    """``count`` ChArUco frames of one rig (drawn from ``seed``): one flat on the mat, then held tilted."""
    out_dir = Path(out_dir)
    rig = rig or make_rig(f"rig_{seed}", seed, size_wh_px)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "camera.json").write_text(json.dumps({"rig": rig.name, "camera": rig.camera.to_dict()}, indent=1))
    paths = []
    for i in range(count):
        rng = np.random.default_rng([seed, 5000 + i])
        tilt = tilts_deg[i % len(tilts_deg)]
        if tilt > 0:
            tilt += float(rng.uniform(-5, 5))
        paths.append(render_calibration_frame(out_dir, f"{rig.name}_board_{i:02d}", rig, rng, tilt,
                                              jpeg_quality_range=jpeg_quality_range))
    return paths


def generate_videos(out_dir: Path, *, count: int, seed: int, size_wh_px: tuple[int, int] = (1280, 720)) -> list[Path]:
    """``count`` shot videos (mp4) with rest-state truth."""
    from simulation.shot_video import OUTCOMES, render_shot_video
    out_dir = Path(out_dir)
    paths = []
    for i in range(count):
        rig = make_rig(f"video_{seed}_{i:02d}", seed * 1000 + 500 + i, size_wh_px)
        paths.append(render_shot_video(out_dir, f"shot_{seed}_{i:02d}", rig, np.random.default_rng([seed, 9000 + i]),
                                       outcome=OUTCOMES[i % len(OUTCOMES)]))
    return paths
