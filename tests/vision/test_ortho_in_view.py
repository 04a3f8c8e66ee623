"""An ortho pixel counts as seen only inside the photo's outline on its plane, not wherever it remaps into the image.

With barrel distortion (k1, k2 < 0) the lens's radial polynomial turns back beyond the field of view, so plan points
far outside the photo project into it: seed 587's render 11 read three 'marbles on the ground' at the ring's
centre from ground 2.3 m away that landed on the balls there."""

import cv2
import numpy as np

from calibration.camera import CameraModel
from vision.ortho import OrthoGrid, in_view, ortho_maps


def _camera() -> CameraModel:
    # the render's own camera (bench_587_011: 22 deg tilt, focal 793 px, k1 -0.076, k2 -0.014)
    return CameraModel.from_dict({
        "K": [[792.842978780465, 0.0, 978.6905301571772], [0.0, 792.842978780465, 559.2905055466789],
              [0.0, 0.0, 1.0]],
        "dist": [-0.07553133096869305, -0.013615033507878443, 0.0003243116391691451, 0.0005627699236462246, 0.0],
        "rvec": [2.6920080569353524, -0.6264193995374734, 0.12213258362442699],
        "tvec": [23.577308938519366, 2.308393873788413, 1662.22438678494], "image_size_wh_px": [1920, 1080]})


def test_a_far_plan_point_folds_into_the_image_but_is_not_in_view():
    cam = _camera()
    far = np.array([[-1214.8, -1957.3, -69.85]])
    px = cam.project_mm(far)[0]
    w, h = cam.image_size_wh_px
    assert 0 <= px[0] < w and 0 <= px[1] < h  # the fold: it lands inside the photo
    back = cam.image_to_table_mm(px[None], -69.85)[0]
    assert np.hypot(*(back - far[0, :2])) > 1000.0  # ... where the photo shows another place
    grid = OrthoGrid.covering(-2500.0, 2500.0, -2500.0, 2500.0, 10.0, -69.85)
    seen = in_view(cam, grid)
    c, r = np.round(grid.ortho_from_table(far[:, :2])[0]).astype(int)
    assert not seen[r, c]
    # a plan point the photo does show is in view, and every pixel in view (but the outline's own, rounded to
    # the grid's 10 mm) remaps inside the photo
    near = cam.image_to_table_mm(np.array([[960.0, 540.0]]), -69.85)[0]
    c, r = np.round(grid.ortho_from_table(near[None])[0]).astype(int)
    assert seen[r, c]
    mx, my = ortho_maps(cam, grid, step_px=16)
    inside = (mx >= 0) & (my >= 0) & (mx <= w - 1) & (my <= h - 1)
    core = cv2.erode(seen.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
    assert core.sum() > 10000 and inside[core].all()


def test_the_ball_finders_ground_view_leaves_out_ground_the_lens_folds_in():
    """The marbles finder's rectified ground (``vision.marbles._ortho``) marks the folded far ground unusable, and
    keeps the ground the photo shows."""
    from vision.marbles import _ortho

    cam = _camera()
    frame = np.full((1080, 1920, 3), 128, np.uint8)
    grid, (_, valid) = _ortho(frame, cam, -69.85, 2500.0, 10.0)
    far = np.round(grid.ortho_from_table(np.array([[-1214.8, -1957.3]]))[0]).astype(int)
    near = np.round(grid.ortho_from_table(cam.image_to_table_mm(np.array([[960.0, 540.0]]), -69.85))[0]).astype(int)
    assert not valid[far[1], far[0]] and valid[near[1], near[0]]


def test_the_drop_lines_sand_view_leaves_out_ring_sand_the_lens_folds_in():
    """The scribed line's sand view (``vision.marbles_line._sand_view``) is the ring's own sand, so a fold matters
    only for a close camera: the render's camera lowered to 600 mm shows part of the ring, and ring sand outside
    the photo folds back into it. That sand is unusable there; the sand the photo shows stays usable."""
    from shapely.geometry import Point, Polygon

    from vision.marbles_line import _sand_view
    from vision.ortho import image_outline_mm

    d = _camera().to_dict()
    d["tvec"] = [d["tvec"][0], d["tvec"][1], 600.0]
    cam = CameraModel.from_dict(d)
    w, h = cam.image_size_wh_px
    outline = Polygon(image_outline_mm(cam, 0.0))
    folded = None
    for x in np.arange(-880.0, 881.0, 20.0):  # a ring point outside the photo's outline that lands in the photo
        for y in np.arange(-880.0, 881.0, 20.0):
            if np.hypot(x, y) > 860.0 or outline.buffer(40.0).contains(Point(x, y)):
                continue
            px = cam.project_mm(np.array([[x, y, 0.0]]))[0]
            if 20 <= px[0] < w - 20 and 20 <= px[1] < h - 20:
                folded = (x, y)
                break
        if folded:
            break
    assert folded is not None  # the lens does fold ring sand in at this height
    frame = np.full((h, w, 3), 128, np.uint8)
    grid, _, valid = _sand_view(frame, cam, ())
    c, r = np.round(grid.ortho_from_table(np.array([folded]))[0]).astype(int)
    assert not valid[r, c]
    seen = cam.image_to_table_mm(np.array([[960.0, 540.0]]), 0.0)[0]
    c, r = np.round(grid.ortho_from_table(seen[None])[0]).astype(int)
    assert np.hypot(*seen) < 860.0 and valid[r, c]


def _wide_camera() -> CameraModel:
    # bench_503_011's camera: focal 777 px, k1 -0.039, k2 -0.028; the photo's side edges lie 1.24 from the axis,
    # beyond the largest radius its polynomial reaches (1.16), so no ray traces them and the outline is no guide
    return CameraModel.from_dict({
        "K": [[777.1603548608081, 0.0, 966.8656630811553], [0.0, 777.1603548608081, 537.2082068085433],
              [0.0, 0.0, 1.0]],
        "dist": [-0.038916214997430434, -0.02801514973886933, 0.00018159340572067295, -0.0003434488660531897, 0.0],
        "rvec": [1.2937710067837824, -2.705322136321452, 0.37712580843535776],
        "tvec": [-759.9708242897838, 70.82765143558781, 1610.1159875081323], "image_size_wh_px": [1920, 1080]})


def test_ground_beyond_the_lens_fold_is_not_seen_where_the_outline_cannot_be_traced():
    """bench_503_011 read an 'off-ring marble' at r 861 mm, under the ring: the ground 1.97 m out projected, past the
    lens's fold, onto a ring marble's pixels, and lay inside the photo's outline as traced (its side edges have no
    true ray). The ball finder's ground view leaves it out; the ground the photo shows there stays in."""
    from vision.marbles import _ortho

    cam = _wide_camera()
    far = np.array([[335.0, 1945.0, -69.85]])
    px = cam.project_mm(far)[0]
    back = cam.image_to_table_mm(px[None], -69.85)[0]
    assert 0 <= px[0] < 1920 and 0 <= px[1] < 1080 and np.hypot(*(back - far[0, :2])) > 1000.0
    frame = np.full((1080, 1920, 3), 128, np.uint8)
    grid, (_, valid) = _ortho(frame, cam, -69.85, 2500.0, 10.0)
    c, r = np.round(grid.ortho_from_table(far[:, :2])[0]).astype(int)
    assert not valid[r, c]
    for u, v in ((960.0, 540.0), (600.0, 900.0), (1500.0, 300.0)):
        c, r = np.round(grid.ortho_from_table(cam.image_to_table_mm(np.array([[u, v]]), -69.85))[0]).astype(int)
        assert valid[r, c]
