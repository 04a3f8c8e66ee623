"""Score calibrations against the simulator's truth cameras (the JSON beside each render), in table mm.

    python -m calibration.evaluate sample_images/tiddlywinks/*.jpg          # mat self-calibration per still
    python -m calibration.evaluate --charuco sample_images/calibration/*/  # board frames of each rig

The error is the plan distance between grid points over the whole mat (13 x 7, edges included) and where the
calibration maps their true image positions, on the mat (z = 0) and at the pot's rim (z = 38). The mat alone
cannot tell its ends apart, so for mat self-calibration the truth frame may be ours turned half a turn; that
frame is used (and flagged) when it fits better.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import cv2
import numpy as np

from calibration.camera import CameraModel
from calibration.charuco import BoardPlacement, estimate_intrinsics, estimate_table_pose
from calibration.errors import CalibrationError
from calibration.mat import calibrate_from_mat
from calibration.types import TableCalibration
from geometry.constants import MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM, POT_HEIGHT_MM

HEIGHTS_MM = (0.0, POT_HEIGHT_MM)


def mat_grid_mm(nx: int = 13, ny: int = 7) -> np.ndarray:
    xs, ys = np.meshgrid(
        np.linspace(-MAT_HALF_LENGTH_MM, MAT_HALF_LENGTH_MM, nx),
        np.linspace(-MAT_HALF_WIDTH_MM, MAT_HALF_WIDTH_MM, ny),
    )
    return np.column_stack([xs.ravel(), ys.ravel()])


def grid_errors_mm(
    calibration: TableCalibration, truth: CameraModel, *, allow_half_turn: bool = False
) -> tuple[dict[float, float], bool]:
    """Worst grid error (mm) per height, and whether the half-turned truth frame was used."""
    grid = mat_grid_mm()
    best: tuple[dict[float, float], bool] | None = None
    for sign in (1.0, -1.0) if allow_half_turn else (1.0,):
        worst = {}
        for z in HEIGHTS_MM:
            px = truth.project_mm(np.column_stack([grid, np.full(len(grid), z)]))
            worst[z] = float(
                np.max(np.linalg.norm(sign * calibration.image_to_table_mm(px, z) - grid, axis=1))
            )
        if best is None or max(worst.values()) < max(best[0].values()):
            best = (worst, sign < 0)
    return best


def _truth_camera(doc: dict) -> CameraModel:
    return CameraModel.from_dict(doc["calibration"]["camera"])


def _line(name: str, cal: TableCalibration, worst: dict[float, float], turned: bool, extra: str = "") -> str:
    errs = "  ".join(f"z={z:g}: {e:5.2f} mm" for z, e in worst.items())
    return (
        f"{name:28s} {errs}  fit {cal.reprojection_error_mm:.2f} mm / {cal.reprojection_error_px:.2f} px"
        f"{'  (truth +x on our -x side)' if turned else ''}{extra}"
    )


def evaluate_stills(paths: list[Path]) -> list[float]:
    worst_all = []
    for path in paths:
        doc = json.loads(path.with_suffix(".json").read_text())
        try:
            cal = calibrate_from_mat(cv2.imread(str(path)))
        except CalibrationError as exc:
            print(f"{path.name:28s} FAILED: {exc}")
            worst_all.append(math.inf)
            continue
        worst, turned = grid_errors_mm(cal, _truth_camera(doc), allow_half_turn=True)
        worst_all.append(max(worst.values()))
        print(_line(path.name, cal, worst, turned))
    return worst_all


def evaluate_rig(rig: Path) -> list[float]:
    """Intrinsics from all board frames; the table from the flattest one, board-only and with the mat."""
    docs = [json.loads(p.read_text()) for p in sorted(rig.glob("*_board_*.json"))]
    images = [cv2.imread(str(rig / d["image"]["path"])) for d in docs]
    truth = _truth_camera(docs[0])
    try:
        intr = estimate_intrinsics(images)
    except CalibrationError as exc:
        print(f"{rig.name:28s} FAILED: {exc}")
        return [math.inf]
    print(
        f"{rig.name}: f {intr.K[0, 0]:.1f} px (truth {truth.K[0, 0]:.1f}, "
        f"{100 * (intr.K[0, 0] / truth.K[0, 0] - 1):+.2f} %), "
        f"k1 {intr.dist[0]:+.4f} (truth {truth.dist[0]:+.4f}), "
        f"rms {intr.rms_px:.3f} px, corners per frame {[v.n_corners for v in intr.views]}"
    )
    flat = min(range(len(docs)), key=lambda i: docs[i]["board"]["tilt_deg"])
    R = np.asarray(docs[flat]["board"]["R_table_from_board"], float)
    t = np.asarray(docs[flat]["board"]["t_table_from_board_mm"], float)
    placement = BoardPlacement(
        origin_mm=(t[0], t[1]), rotation_deg=math.degrees(math.atan2(R[1, 0], R[0, 0])), thickness_mm=t[2]
    )
    out = []
    for label, refine in (("board", False), ("board+mat", True)):
        try:
            cal = estimate_table_pose(
                images[flat],
                intr.K,
                intr.dist,
                placement=placement,
                refine_with_mat=refine,
                intrinsics_std=intr.std,
            )
        except CalibrationError as exc:
            print(f"  {label:26s} FAILED: {exc}")
            out.append(math.inf)
            continue
        worst, _ = grid_errors_mm(cal, truth)
        out.append(max(worst.values()))
        print("  " + _line(label, cal, worst, False))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m calibration.evaluate", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "paths", nargs="+", type=Path, help="renders with truth JSON beside them, or rig folders"
    )
    parser.add_argument("--charuco", action="store_true", help="paths are rig folders of board frames")
    args = parser.parse_args(argv)
    if args.charuco:
        worst = [w for rig in args.paths for w in evaluate_rig(rig)]
    else:
        worst = evaluate_stills([p for p in args.paths if p.with_suffix(".json").is_file()])
    if worst:
        finite = [w for w in worst if math.isfinite(w)]
        print(
            f"worst grid error over {len(worst)} fits: {max(worst):.2f} mm; "
            f"median {np.median(finite):.2f} mm; "
            f"failures {len(worst) - len(finite)}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
