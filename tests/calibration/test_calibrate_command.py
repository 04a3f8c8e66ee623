"""``tableref calibrate`` end to end on rendered photos written to disk."""

from __future__ import annotations

import cv2
import numpy as np

from api.cli import main
from calib_scenes import mapping_errors_mm, mat_grid_mm
from calibration.types import MAT_CORNERS_MM, TableCalibration

TABLE_POINT_TOL_MM = 1.0
MAT_POINT_TOL_MM = 2.0


def _write(path, image):
    cv2.imwrite(str(path), image, [cv2.IMWRITE_PNG_COMPRESSION, 1])
    return str(path)


def test_charuco_command(tmp_path, board_views, table_with_board, capsys):
    table, true_cam = table_with_board
    paths = [_write(tmp_path / f"board{i}.png", im) for i, im in enumerate(board_views[:4])]
    out = tmp_path / "CAL.json"
    args = paths + [
        "--table-image",
        _write(tmp_path / "table.png", table),
        "--board",
        "charuco",
        "--dict",
        "DICT_5X5_100",
        "--squares",
        "8x11",
        "--square-mm",
        "30",
        "--marker-mm",
        "22",
        "-o",
        str(out),
    ]
    assert main(["calibrate", *args]) == 0
    text = capsys.readouterr().out
    assert "mm RMS" in text and " px)" in text
    cal = TableCalibration.from_json(out)
    assert cal.source == "charuco"
    assert mapping_errors_mm(true_cam, cal, mat_grid_mm(), 0.0).max() < TABLE_POINT_TOL_MM


def test_mat_and_corner_commands(tmp_path, mat_photo_30, table_without_mat, capsys):
    image, true_cam = mat_photo_30
    photo = _write(tmp_path / "mat.png", image)
    out = tmp_path / "CAL.json"
    assert main(["calibrate", photo, "--board", "mat", "-o", str(out)]) == 0
    assert "calibration (mat)" in capsys.readouterr().out
    assert (
        mapping_errors_mm(true_cam, TableCalibration.from_json(out), mat_grid_mm(), 0.0).max()
        < MAT_POINT_TOL_MM
    )

    corners = ",".join(f"{v:.2f}" for v in true_cam.project_mm(MAT_CORNERS_MM).ravel())
    assert main(["calibrate", photo, "--corners", corners, "-o", str(out)]) == 0
    assert TableCalibration.from_json(out).source == "corners"

    bare = _write(tmp_path / "bare.png", table_without_mat)
    assert main(["calibrate", bare, "--board", "mat", "-o", str(out)]) == 2
    assert "no mat-sized uniform region found" in capsys.readouterr().err
    assert main(["calibrate", bare, "--corners", "1,2,3", "-o", str(out)]) == 2
    assert np.isfinite(TableCalibration.from_json(out).reprojection_error_mm)
