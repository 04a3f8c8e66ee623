"""Winks the cup can hide from the camera, so that one not found may lie in it unseen (TW 5(c): the umpire looks).

A wink lying on the cup's floor shows only through the top opening: in an oblique view the near wall hides a band
of the floor, and the winks lying in the cup (or on its rim, over the opening's image) hide what lies under them.
Of the potted winks missed on the development set and three seen seeds, some showed as little as a tenth of their
face (a sliver past the wink on it) and none more than 0.72 of it; a wink that can lie there with no more of its face
in view than that may be missed, and is then reported as possibly hidden rather than silently absent.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.constants import (
    LARGE_WINKS_PER_COLOR,
    POT_HEIGHT_MM,
    SMALL_WINKS_PER_COLOR,
    WINK_THICKNESS_MM,
    WINKS_PER_COLOR,
)
from vision.colour import COLOR_NAMES
from vision.pot import PotDetection
from vision.pot_floor import CUP_LEVELS_Z_MM, OPENING_INNER_RADIUS_MM, cup_pose_grid, cup_view_px
from vision.winks import RADII_MM, WinkCandidate

#: A wink that can lie in the cup with no more than this share of its top face in view may be missed there (the
#: potted misses of the development set and seeds 4040, 7474, 9898 showed 0.11 to 0.72 of their face).
MAX_SEEN_SHARE = 0.75
#: Plan grid of the places tried on the floor, and the face's samples: rings at these radius fractions, 6 k a ring
_POSE_STEP_MM = 1.0
_FACE_RINGS = (0.0, 0.2, 0.4, 0.6, 0.8, 0.97)


def _face_offsets_mm(r_mm: float) -> np.ndarray:
    """Plan offsets sampling a disc's face about evenly by area (a ring of 6 k samples at the k-th radius)."""
    pts = [np.zeros((1, 2))]
    for k, f in enumerate(_FACE_RINGS[1:], start=1):
        a = np.linspace(0.0, 2 * math.pi, 6 * k, endpoint=False)
        pts.append(f * r_mm * np.column_stack([np.cos(a), np.sin(a)]))
    return np.concatenate(pts)


def _floor_seen(camera: CameraModel, pot: PotDetection, winks: list[WinkCandidate]):
    """Whether plan points at a wink's top face on the cup's floor (where the wall hides most) are in view: their
    line of sight passes the top within the opening's inner edge, and their image lies outside the image of every
    wink found in the cup, on its rim or beside it (each may lie over them). Returns a function of (N, 2) plan
    points."""
    (x0, y0), _, under = cup_view_px(camera, pot, winks)
    z_top = CUP_LEVELS_Z_MM[0] + WINK_THICKNESS_MM / 2
    eye = camera.center_mm

    def seen(pts: np.ndarray) -> np.ndarray:
        at_top = eye[:2] + (pts - eye[:2]) * (eye[2] - POT_HEIGHT_MM) / (eye[2] - z_top)
        q = camera.project_mm(np.column_stack([pts, np.full(len(pts), z_top)])) - [x0, y0]
        clear = cv2.remap((under == 0).astype(np.uint8), q.astype(np.float32).reshape(1, -1, 2), None,
                          cv2.INTER_NEAREST, borderMode=cv2.BORDER_CONSTANT, borderValue=0).reshape(-1)
        return clear * (np.linalg.norm(at_top - pot.center_mm, axis=1) <= OPENING_INNER_RADIUS_MM)

    return seen


def hideable_sizes(camera: CameraModel, pot: PotDetection, winks: list[WinkCandidate]) -> tuple[str, ...]:
    """The wink sizes that can lie on the cup's floor with at most ``MAX_SEEN_SHARE`` of their face in view.

    In view: inside the image of the opening's inner edge (the top rim less the wall) and outside the image of
    every wink found in the cup, on its rim or beside it (each may lie over it)."""
    if not pot.found:
        return ()
    seen = _floor_seen(camera, pot, winks)
    out = []
    for size, r in RADII_MM.items():
        centres = cup_pose_grid(pot, r, _POSE_STEP_MM)
        if not len(centres):
            continue
        offs = _face_offsets_mm(r)
        v = seen((centres[:, None, :] + offs[None]).reshape(-1, 2)).reshape(len(centres), len(offs))
        if float(v.mean(axis=1).min()) <= MAX_SEEN_SHARE:
            out.append(size)
    return tuple(out)


def cup_floor_hidden_share(camera: CameraModel, pot: PotDetection, winks: list[WinkCandidate]) -> float:
    """The share of the cup's floor out of the camera's view: behind the wall (outside the opening's inner edge)
    or under the image of a wink found in the cup, on its rim or beside it. A wink lying there is hidden from the
    camera; the umpire is told how much of the floor the photograph cannot show (TW 5(c): the umpire looks)."""
    if not pot.found:
        return 0.0
    # (the centres of a 0.5 mm disc on the floor reach the floor's edge)
    return 1.0 - float(_floor_seen(camera, pot, winks)(cup_pose_grid(pot, 0.5, _POSE_STEP_MM)).mean())


def colours_pot_may_hide(camera: CameraModel, pot: PotDetection, winks: list[WinkCandidate],
                         colours: tuple[str, ...]) -> tuple[str, ...]:
    """The colours of which fewer than the six (two large, four small; TW 2) are found and the cup can hide one of
    a size missing (a size read as the other leaves the colour short all the same). With all the set's winks found
    none is hidden: a colour short while another has too many is a colour misread, not a wink in the cup."""
    if len(winks) >= WINKS_PER_COLOR * len(COLOR_NAMES):
        return ()
    short = []
    for name in colours:
        own = [w for w in winks if w.color == name]
        if len(own) >= WINKS_PER_COLOR:
            continue
        n_large = sum(w.size == "large" for w in own)
        missing = {"large"} if n_large < LARGE_WINKS_PER_COLOR else set()
        if len(own) - n_large < SMALL_WINKS_PER_COLOR:
            missing.add("small")
        short.append((name, missing or {"large", "small"}))
    if not short:
        return ()
    can = set(hideable_sizes(camera, pot, winks))
    return tuple(name for name, missing in short if missing & can)
