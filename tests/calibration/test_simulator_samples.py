"""Mat self-calibration on the simulator's tiddlywinks stills, scored against the truth camera beside each.

The renders are ray-traced (felt texture, lamp, shadows, winks on the edges, k1/k2/tangential distortion,
principal point off-centre). The mat alone cannot tell its ends apart, so the truth frame may be our frame
turned half a turn (truth cameras may have +x on the left); the error is taken in the matching frame.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from calib_scenes import mat_grid_mm
from calibration.camera import CameraModel
from calibration.mat import calibrate_from_mat

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images" / "tiddlywinks"
MAX_STILLS = 2  # one rig's stills share a camera; a few keep the test lean
SIM_POINT_TOL_MM = 2.0  # grid over the whole mat, z = 0 and z = 38
POT_HEIGHT_MM = 38.0


def _stills() -> list[Path]:
    stills = sorted(p for p in SAMPLES.glob("*.jpg") if p.with_suffix(".json").is_file())
    # Spread the picks over the rigs (names start with the rig), then take the first few.
    by_rig: dict[str, list[Path]] = {}
    for p in stills:
        by_rig.setdefault(p.name.split("_")[0], []).append(p)
    picks = [
        group[i]
        for i in range(max(map(len, by_rig.values()), default=0))
        for group in by_rig.values()
        if i < len(group)
    ]
    return picks[:MAX_STILLS]


@pytest.mark.skipif(not _stills(), reason="no simulator stills in sample_images/tiddlywinks yet")
@pytest.mark.parametrize("still", _stills(), ids=lambda p: p.stem)
def test_mat_calibration_matches_truth(still):
    truth = CameraModel.from_dict(json.loads(still.with_suffix(".json").read_text())["calibration"]["camera"])
    cal = calibrate_from_mat(cv2.imread(str(still)))
    assert cal.plus_x_end == "right"
    grid = mat_grid_mm()
    px0 = truth.project_mm(np.column_stack([grid, np.zeros(len(grid))]))
    sign = 1.0 if np.mean(np.linalg.norm(cal.image_to_table_mm(px0) - grid, axis=1)) < 100 else -1.0
    for z in (0.0, POT_HEIGHT_MM):
        px = truth.project_mm(np.column_stack([grid, np.full(len(grid), z)]))
        err = np.linalg.norm(sign * cal.image_to_table_mm(px, z) - grid, axis=1)
        assert err.max() < SIM_POINT_TOL_MM, (still.name, z, err.max())


CALIBRATION_RIGS = Path(__file__).resolve().parents[2] / "sample_images" / "calibration"
MAX_RIGS = 1
FOCAL_REL_TOL = 0.02  # board intrinsics from four ray-traced frames (one lying flat, three held tilted)


def _rigs() -> list[Path]:
    if not CALIBRATION_RIGS.is_dir():
        return []
    return sorted(p for p in CALIBRATION_RIGS.iterdir() if len(list(p.glob("*_board_*.json"))) >= 3)[
        :MAX_RIGS
    ]


@pytest.mark.skipif(not _rigs(), reason="no simulator calibration frames in sample_images/calibration yet")
@pytest.mark.parametrize("rig", _rigs(), ids=lambda p: p.name)
def test_charuco_frames_match_truth(rig):
    """Intrinsics from all the rig's board frames; the table from the frame with the board lying flat,
    refined with the mat (the board's declared heading picks +x)."""
    import math

    from calibration.charuco import BoardPlacement, estimate_intrinsics, estimate_table_pose

    docs = [json.loads(p.read_text()) for p in sorted(rig.glob("*_board_*.json"))]
    images = [cv2.imread(str(rig / d["image"]["path"])) for d in docs]
    truth = CameraModel.from_dict(docs[0]["calibration"]["camera"])
    intr = estimate_intrinsics(images)
    assert intr.K[0, 0] == pytest.approx(truth.K[0, 0], rel=FOCAL_REL_TOL)
    flat = min(range(len(docs)), key=lambda i: docs[i]["board"]["tilt_deg"])
    R = np.array(docs[flat]["board"]["R_table_from_board"])
    t = np.array(docs[flat]["board"]["t_table_from_board_mm"])
    placement = BoardPlacement(
        origin_mm=(t[0], t[1]), rotation_deg=math.degrees(math.atan2(R[1, 0], R[0, 0])), thickness_mm=t[2]
    )
    cal = estimate_table_pose(
        images[flat], intr.K, intr.dist, placement=placement, refine_with_mat=True, intrinsics_std=intr.std
    )
    grid = mat_grid_mm()
    for z in (0.0, POT_HEIGHT_MM):
        px = truth.project_mm(np.column_stack([grid, np.full(len(grid), z)]))
        err = np.linalg.norm(cal.image_to_table_mm(px, z) - grid, axis=1)  # same frame: the board picks +x
        assert err.max() < SIM_POINT_TOL_MM, (rig.name, z, err.max())
