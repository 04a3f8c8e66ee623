"""Clear or white from the table's grain seen through the piece (vision/pyramids_grain.py)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from geometry.pyramids import upright_pose
from vision.pyramids import assumed_overhead_camera
from vision.pyramids_fit import hull_px
from vision.pyramids_grain import clear_or_white, grain_ratio, high_pass_gray


def _photo(plastic: str, seed: int = 5):
    """Pale wood with fibres along x; an upright medium piece at the middle, clear (the grain
    brightened by a reflection) or opaque white (its own smooth faces, shaded by orientation)."""
    rng = np.random.default_rng(seed)
    cam = assumed_overhead_camera((400, 300), 0.25)
    pose = upright_pose("medium", (0.0, 0.0), 0.4)
    hull = hull_px(cam, pose)
    h, w = 300, 400
    fibres = np.repeat(rng.normal(0.0, 9.0, size=(h, 1)), w, axis=1) + rng.normal(0.0, 3.0, size=(h, w))
    grey = 170.0 + cv2.GaussianBlur(fibres.astype(np.float32), (0, 0), 0.8)
    body = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(body, np.round(hull).astype(np.int32), 1)
    inside = body > 0
    if plastic == "clear":
        grey[inside] = grey[inside] + 25.0
    else:
        q = cam.project_mm(pose.vertices_mm())
        faces = np.zeros((h, w), np.float32)
        for i in range(4):  # each face its own flat shade
            tri = np.round(np.stack([q[i], q[(i + 1) % 4], q[4]])).astype(np.int32)
            cv2.fillConvexPoly(faces, tri, 200.0 + 12.0 * i)
        grey[inside] = faces[inside]
    grey += rng.normal(0.0, 1.0, size=(h, w))  # sensor noise on both
    frame = np.repeat(np.clip(grey, 0, 255).astype(np.uint8)[..., None], 3, axis=2)
    return frame, cam, pose, hull, body


@pytest.mark.parametrize("plastic", ["clear", "white"])
def test_grain_shows_through_clear_plastic_and_not_through_white(plastic):
    frame, cam, pose, hull, body = _photo(plastic)
    ratio = grain_ratio(high_pass_gray(frame), cam, pose, hull, body)
    assert ratio is not None
    if plastic == "clear":
        assert ratio > 0.8
    else:
        assert ratio < 0.5
    # a white verdict on grain that shows through is named clear, and flagged; a true white stands
    color, why = clear_or_white("white", ratio)
    if plastic == "clear":
        assert color == "clear" and why is not None
    else:
        assert (color, why) == ("white", None)


def test_grain_only_overrules_a_white_verdict_when_clear_is_in_play():
    assert clear_or_white("red", 0.2) == ("red", None)
    assert clear_or_white("clear", 0.3) == ("clear", None)  # dimmed grain does not prove opaque plastic
    assert clear_or_white("white", 1.2, allowed=("white", "red")) == ("white", None)
    assert clear_or_white("white", None) == ("white", None)
    color, why = clear_or_white("white", 0.85)  # between the bands: kept, but flagged
    assert color == "white" and "grain" in why
