"""A plain baseline detector for the bench: ``cv2.HoughCircles`` + nearest colour, no occlusion reasoning.

It exists to show what the physics-based pipeline buys: circles are found on the grey image with the radius
range the calibration implies, each circle takes the nearest of four fixed colour prototypes (no white
balance), its centre is mapped to the table at wink height, overlapping circles are ordered by Hough
accumulator strength, and a wink is potted when its centre falls within the pot's top radius of the nominal
pot position (the mat centre).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.constants import LARGE_WINK_RADIUS_MM, POT_TOP_RADIUS_MM, SMALL_WINK_RADIUS_MM, WINK_THICKNESS_MM
from vision.types import WinkMeasurement

#: sRGB prototypes (BGR) of the four plastics under white light.
PROTOTYPES_BGR = {"blue": (160, 60, 20), "green": (60, 150, 40), "red": (40, 40, 190), "yellow": (30, 190, 220)}


@dataclass(frozen=True, slots=True)
class HoughBaselineParams:
    dp: float = 1.2
    param1: float = 100.0
    param2: float = 14.0
    min_dist_mm: float = 10.0


def detect_winks_hough(frame_bgr: np.ndarray, camera: CameraModel,
                       params: HoughBaselineParams = HoughBaselineParams()) -> list[WinkMeasurement]:
    mmpp = camera.mm_per_px_at((0.0, 0.0))
    gray = cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2GRAY)
    gray = cv2.GaussianBlur(gray, (0, 0), 1.0)
    r_lo = max(2, int(math.floor(SMALL_WINK_RADIUS_MM / mmpp * 0.8)))
    r_hi = int(math.ceil(LARGE_WINK_RADIUS_MM / mmpp * 1.2))
    circles = cv2.HoughCircles(gray, cv2.HOUGH_GRADIENT, dp=params.dp, minDist=params.min_dist_mm / mmpp,
                               param1=params.param1, param2=params.param2, minRadius=r_lo, maxRadius=r_hi)
    out: list[WinkMeasurement] = []
    if circles is None:
        return out
    protos = {k: np.asarray(v, np.float32) for k, v in PROTOTYPES_BGR.items()}
    h, w = gray.shape
    for i, (x, y, r) in enumerate(circles[0]):
        mask = np.zeros((h, w), np.uint8)
        cv2.circle(mask, (int(round(x)), int(round(y))), max(1, int(r * 0.7)), 1, -1)
        mean = np.asarray(cv2.mean(frame_bgr, mask)[:3], np.float32)
        color = min(protos, key=lambda k: float(np.linalg.norm(mean - protos[k])))
        xy = camera.image_to_table_mm(np.array([[x, y]]), WINK_THICKNESS_MM)[0]
        r_mm = r * camera.mm_per_px_at(tuple(xy))
        size = "large" if r_mm > (LARGE_WINK_RADIUS_MM + SMALL_WINK_RADIUS_MM) / 2 else "small"
        out.append(WinkMeasurement(wink_id=f"h{i}", color=color, size=size, center_mm=(float(xy[0]), float(xy[1])),
                                   radius_mm=LARGE_WINK_RADIUS_MM if size == "large" else SMALL_WINK_RADIUS_MM,
                                   sigma_mm=mmpp, potted=bool(np.linalg.norm(xy) < POT_TOP_RADIUS_MM),
                                   center_px=(float(x), float(y))))
    # no occlusion reasoning: of two overlapping circles the stronger (earlier) one is taken as the upper
    result = []
    for i, a in enumerate(out):
        above = tuple(b.wink_id for b in out[i + 1:]
                      if math.dist(a.center_mm, b.center_mm) < a.radius_mm + b.radius_mm - 0.5)
        result.append(WinkMeasurement(**{**{f: getattr(a, f) for f in a.__slots__}, "above": above}))
    return result
