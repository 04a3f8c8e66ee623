"""``tableref calibrate``: write a CAL.json from ChArUco board photos, one photo of the mat, or four corners.

tableref calibrate IMG1 IMG2 IMG3 TABLE.jpg -o CAL.json                    # ChArUco (default board)
tableref calibrate MAT.jpg --board mat -o CAL.json                         # self-calibration from the mat
tableref calibrate MAT.jpg --corners 101,80,1820,95,1850,1000,70,990 -o CAL.json
"""

from __future__ import annotations

import argparse
from pathlib import Path

import cv2
import numpy as np

from calibration.charuco import BoardPlacement, CharucoSpec, estimate_intrinsics, estimate_table_pose
from calibration.errors import CalibrationError
from calibration.mat import calibrate_from_mat, from_corners
from calibration.types import TableCalibration


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "calibrate",
        help="calibrate the camera against the table (ChArUco board, the mat, or four corners)",
        description="Intrinsics from all images and the table pose from the one where the board lies flat on "
        "the mat (--board charuco); or self-calibration from one photo of the mat (--board mat); or four "
        "mat corners clicked by hand (--corners). +x is the mat end in the right half of the image "
        "unless a board placement says otherwise.",
    )
    p.add_argument("images", nargs="+", type=Path, metavar="IMAGE")
    p.add_argument("--board", choices=("charuco", "mat"), default="charuco")
    p.add_argument(
        "--dict", dest="dictionary", default="DICT_5X5_100", help="ArUco dictionary (default %(default)s)"
    )
    p.add_argument("--squares", default="8x11", help="board squares COLSxROWS (default %(default)s)")
    p.add_argument("--square-mm", type=float, default=30.0)
    p.add_argument("--marker-mm", type=float, default=22.0)
    p.add_argument(
        "--table-image",
        type=Path,
        default=None,
        help="the image with the board lying flat on the mat (default: the last IMAGE)",
    )
    p.add_argument(
        "--board-origin-mm",
        default=None,
        help="X,Y of the board's origin corner on the table (default: board centred on the mat)",
    )
    p.add_argument("--board-rotation-deg", type=float, default=0.0, help="board x axis from table +x")
    p.add_argument("--board-thickness-mm", type=float, default=0.0)
    p.add_argument(
        "--refine-with-mat",
        action="store_true",
        help="with --board charuco: make the mat's own outline the table frame",
    )
    p.add_argument(
        "--corners",
        default=None,
        metavar="x1,y1,...,x4,y4",
        help="four mat corners in pixels, in the order (-x,+y), (+x,+y), (+x,-y), (-x,-y)",
    )
    p.add_argument("-o", "--output", type=Path, required=True, metavar="CAL.json")
    p.set_defaults(handler=run)


def _read(path: Path) -> np.ndarray:
    if not path.is_file():
        raise FileNotFoundError(2, "no such file", str(path))
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise CalibrationError(f"cannot decode image {path}")
    return image


def _numbers(text: str, count: int, what: str) -> list[float]:
    try:
        values = [float(v) for v in text.replace(" ", "").split(",")]
    except ValueError:
        raise CalibrationError(f"{what} must be {count} comma-separated numbers, got {text!r}") from None
    if len(values) != count:
        raise CalibrationError(f"{what} must be {count} comma-separated numbers, got {len(values)}: {text!r}")
    return values


def _squares(text: str) -> tuple[int, int]:
    try:
        sx, sy = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise CalibrationError(f"--squares must look like 8x11, got {text!r}") from None
    return sx, sy


def calibrate(args: argparse.Namespace) -> TableCalibration:
    if args.corners is not None:
        if len(args.images) != 1:
            raise CalibrationError(
                f"--corners takes exactly one IMAGE (for its size), got {len(args.images)}"
            )
        image = _read(args.images[0])
        corners = np.array(_numbers(args.corners, 8, "--corners")).reshape(4, 2)
        return from_corners(corners, (image.shape[1], image.shape[0]), ordered=True)
    if args.board == "mat":
        if len(args.images) != 1:
            raise CalibrationError(
                f"--board mat self-calibrates from one photo, got {len(args.images)} images"
            )
        return calibrate_from_mat(_read(args.images[0]))
    spec = CharucoSpec(
        squares_xy=_squares(args.squares),
        square_mm=args.square_mm,
        marker_mm=args.marker_mm,
        dictionary=args.dictionary,
    )
    origin = (
        None
        if args.board_origin_mm is None
        else tuple(_numbers(args.board_origin_mm, 2, "--board-origin-mm"))
    )
    placement = BoardPlacement(
        origin_mm=origin, rotation_deg=args.board_rotation_deg, thickness_mm=args.board_thickness_mm
    )
    paths = list(args.images)
    table_path = args.table_image if args.table_image is not None else paths[-1]
    if table_path not in paths:
        paths.append(table_path)
    images = {p: _read(p) for p in paths}
    intr = estimate_intrinsics([images[p] for p in paths], spec)
    for path, view in zip(paths, intr.views):
        state = f"rms {view.rms_px:.3f} px, tilt {view.tilt_deg:.1f} deg" if view.used else "not used"
        print(f"  {path}: {view.n_corners} corners, {state}")
    K = intr.K
    print(
        f"intrinsics: fx {K[0, 0]:.2f} fy {K[1, 1]:.2f} cx {K[0, 2]:.2f} cy {K[1, 2]:.2f} px, "
        f"dist {np.round(intr.dist, 5).tolist()}, rms {intr.rms_px:.3f} px"
    )
    return estimate_table_pose(
        images[table_path],
        intr.K,
        intr.dist,
        spec=spec,
        placement=placement,
        refine_with_mat=args.refine_with_mat,
        intrinsics_std=intr.std,
    )


def run(args: argparse.Namespace) -> int:
    cal = calibrate(args)
    cam = cal.camera
    cal.to_json(args.output)
    px = "n/a" if cal.reprojection_error_px is None else f"{cal.reprojection_error_px:.3f} px"
    print(
        f"calibration ({cal.source}): reprojection error {cal.reprojection_error_mm:.3f} mm RMS ({px}); "
        f"focal {cam.K[0, 0]:.1f} px, k1 {cam.dist[0]:+.4f}, camera at "
        f"{np.round(cam.center_mm, 1).tolist()} mm, "
        f"tilt {cam.tilt_deg:.1f} deg, +x to the image {cal.plus_x_end}"
    )
    if cal.source == "charuco" and cal.mat_corners_px is None:
        print(
            "note: the error above covers the board only; far from it the table rests on the board's pose "
            "and the lens model extrapolated. --refine-with-mat fits the mat's edges and baselines too "
            "(about 1 mm over the whole mat on the simulator's rigs)."
        )
    print(f"wrote {args.output}")
    return 0
