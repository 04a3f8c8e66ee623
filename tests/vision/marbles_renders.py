"""One bench photo of ring marbles drawn again, with only some of its balls: marbles tests read a scene as the bench
rendered it (its camera, sand, lamp, photo settings and JPEG) without the rest of the photo."""

from __future__ import annotations

import dataclasses
import math

import cv2
import numpy as np

from simulation.marbles import Lighting, marbles_camera, random_marbles_scene, random_marbles_spec, render_marbles_scene
from simulation.photo import PhotoSettings, encode_jpeg, finish_photo


def redrawn_marbles(seed: int, item: int, near_mm: tuple[float, float], within_mm: float):
    """Item ``item`` of ``seed`` as the generator draws it, with only the balls within ``within_mm`` of ``near_mm``
    (all of them where that is infinite: the bench's render itself), read back from its JPEG. With balls taken
    away the photo's later draws, hence its blur and noise, differ."""
    rng = np.random.default_rng([seed, item])
    spec = random_marbles_spec(rng)
    cam = marbles_camera(rng, (1920, 1080), spec.framing)
    scene = random_marbles_scene(rng, spec, cam)
    kept = tuple(b for b in scene.balls if math.dist(b.center_mm[:2], near_mm) < within_mm)
    scene = dataclasses.replace(scene, balls=kept)
    light = Lighting.random(rng, elevation_deg=(35.0, 70.0))
    linear = render_marbles_scene(scene, cam, light, rng, supersample=3)
    photo = finish_photo(linear, rng, settings=PhotoSettings.random(rng, motion_blur_probability=0.0))
    # as the bench reads it: the generator's JPEG at quality 85
    photo = cv2.imdecode(np.frombuffer(encode_jpeg(photo, 85), np.uint8), cv2.IMREAD_COLOR)
    return photo, cam, kept
