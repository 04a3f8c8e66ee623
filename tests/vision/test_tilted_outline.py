"""A wink's outline fitted as a tilted disc of a known radius (vision/tilted_outline.py)."""

import math

import numpy as np
import pytest

from geometry.constants import WINK_THICKNESS_MM
from vision.stacking import flag_tilted_slivers
from vision.tilted_outline import fit_tilted_outline, inside_footprint, model_outline_mm, tilted_fit
from vision.winks import WinkCandidate, assign_poses

CAMERA_MM = np.array([0.0, -700.0, 1900.0])  # a camera 20 degrees off vertical, as the bench rigs
RADII = {"large": 11.0, "small": 8.0}


def _outline_points(center, radius, tilt, az, noise_mm=0.1, n=90, seed=3):
    """Points where rays from ``center`` meet the model outline in the plane z = thickness, with noise."""
    model, mid = model_outline_mm(CAMERA_MM, np.asarray(center, float), radius, tilt, az, WINK_THICKNESS_MM)
    ang = np.linspace(-np.pi, np.pi, n, endpoint=False)
    u = np.column_stack([np.cos(ang), np.sin(ang)])
    # the silhouette: along each ray the outer of the two rims (top and bottom), read as polygons
    r = np.zeros(n)
    for rim in np.split(model - mid, 2):
        for k in range(len(rim)):
            p0, p1 = rim[k], rim[(k + 1) % len(rim)]
            # ray t u meets the segment p0 + s (p1 - p0)
            m = np.stack([u, np.broadcast_to(p0 - p1, u.shape)], axis=2)
            det = np.linalg.det(m)
            ok = np.abs(det) > 1e-12
            sol = np.linalg.solve(m[ok], np.broadcast_to(p0, (ok.sum(), 2))[..., None])[..., 0]
            hit = (sol[:, 1] >= 0) & (sol[:, 1] <= 1) & (sol[:, 0] > 0)
            idx = np.flatnonzero(ok)[hit]
            r[idx] = np.maximum(r[idx], sol[hit, 0])
    rng = np.random.default_rng(seed)
    r = r + rng.normal(0.0, noise_mm, n)
    return mid + r[:, None] * u


# 15 degrees shorten the minor axis by 0.37 mm: measurable at 4K's 0.3 mm per pixel, not at 0.6
@pytest.mark.parametrize("tilt, az, mm_per_px", [(39.0, 268.0, 0.6), (25.0, 155.0, 0.6), (15.0, 30.0, 0.3)])
def test_a_tilted_large_wink_is_fitted_as_one_tilted_disc_with_its_tilt_and_raised_side(tilt, az, mm_per_px):
    c = np.array([-290.0, 60.0])
    p = _outline_points(c, 11.0, tilt, az)
    support = c + 12.0 * np.array([math.cos(math.radians(az)), math.sin(math.radians(az))])
    got = tilted_fit(p, c + 1.5, RADII, CAMERA_MM, WINK_THICKNESS_MM, mm_per_px, [(support, 8.0)])
    assert got is not None
    if tilt < 20.0:  # less than a pixel short of a circle at 0.6 mm per pixel: a circle
        assert tilted_fit(p, c + 1.5, RADII, CAMERA_MM, WINK_THICKNESS_MM, 0.6, [(support, 8.0)]) is None
    size, t = got
    assert size == "large"
    assert t.tilt_deg == pytest.approx(tilt, abs=2.0)
    # the raised side (an ellipse alone is symmetric; the raised rim's parallax and the support say which)
    assert abs((t.tilt_azimuth_deg - az + 180.0) % 360.0 - 180.0) < 10.0
    assert np.linalg.norm(t.center_mm - c) < 0.5


def test_a_flat_wink_is_no_tilted_one_and_a_tilt_needs_a_support_under_its_raised_side():
    c = np.array([100.0, -40.0])
    flat = _outline_points(c, 8.0, 0.0, 0.0)
    assert tilted_fit(flat, c, RADII, CAMERA_MM, WINK_THICKNESS_MM, 0.6, [(c + 14.0, 11.0)]) is None
    f = fit_tilted_outline(flat, c, 8.0, CAMERA_MM, WINK_THICKNESS_MM)
    assert f.shortfall_mm < 3.0 * f.shortfall_sigma_mm + 0.6
    tilted = _outline_points(c, 11.0, 35.0, 90.0)
    # nothing under the raised (+y) side: only a wink resting on another can be tilted so
    assert tilted_fit(tilted, c, RADII, CAMERA_MM, WINK_THICKNESS_MM, 0.6, [(c - np.array([0.0, 15.0]), 8.0)]) is None


def test_footprint_of_a_tilted_wink_is_foreshortened_along_its_azimuth():
    p = np.array([[0.0, 9.5], [0.0, -9.5], [9.5, 0.0]])
    assert inside_footprint(p, np.zeros(2), 11.0, 0.0, 0.0).all()
    assert inside_footprint(p, np.zeros(2), 11.0, 39.0, 90.0).tolist() == [False, False, True]


def _wink(wid, color, size, xy, sigma=0.2):
    w = WinkCandidate(color=color, size=size, center_mm=np.array(xy, float), votes=1.0, wink_id=wid)
    w.sigma_mm = sigma
    return w


def test_an_order_on_a_sliver_thinner_than_the_flat_discs_excess_is_flagged_not_asserted():
    # Y (large, its outline tilted 39 degrees towards B) over B (small): centres 17 mm apart. Flat, the discs
    # would overlap by 2 mm; tilted, Y reaches 8.5 mm: 0.5 mm of overlap, less than the 2.5 mm it lost
    y, b = _wink("Y", "yellow", "large", (0.0, 17.0)), _wink("B", "blue", "small", (0.0, 0.0))
    y.outline_tilt = (39.0, 270.0)
    y.above, y.order_confidence, b.order_confidence = ["B"], {"B": 0.95}, {"Y": 0.95}
    assign_poses([y, b])
    assert y.tilt_deg == pytest.approx(39.0)
    # B lies on a pile four winks high (its top 7.5 mm up): nothing lower holds a large wink at 39 degrees, its bottom
    # 6.9 mm up at its centre (stacking.held_up; on a lone flat B that outline tilt is no pose)
    b.z_mm = 6.75
    assert flag_tilted_slivers([y, b]) == 1 and y.order_confidence["B"] < 0.75
    # 12 mm apart the tilted footprints still overlap by 4.5 mm, more than the excess: the order stands
    y2, b2 = _wink("Y", "yellow", "large", (0.0, 12.0)), _wink("B", "blue", "small", (0.0, 0.0))
    y2.outline_tilt = (39.0, 270.0)
    y2.above, y2.order_confidence, b2.order_confidence = ["B"], {"B": 0.95}, {"Y": 0.95}
    assign_poses([y2, b2])
    b2.z_mm = 6.75
    assert flag_tilted_slivers([y2, b2]) == 0 and y2.order_confidence["B"] == pytest.approx(0.95)
    # no wink whose outline showed a tilt: not this test's business (cap_by_overlap's)
    p, q = _wink("P", "red", "large", (50.0, 0.0)), _wink("Q", "green", "large", (50.0, 21.5))
    p.above, p.order_confidence, q.order_confidence = ["Q"], {"Q": 0.9}, {"P": 0.9}
    assert flag_tilted_slivers([p, q]) == 0


def test_an_outline_tilt_no_wink_under_it_could_hold_up_flags_no_sliver():
    # R (small) over B (small, flat), 13 mm apart, R's outline fitted at 51 degrees towards B (tw_6969_001: red-S3,
    # truly 9 degrees on blue-S3): its centre would stand 6 mm up on a wink 1.5 mm thick. That is no pose, and its
    # foreshortened footprint (2.5 mm short of the flat disc's) no reason to doubt an order read at 0.95
    r, b = _wink("R", "red", "small", (0.0, 13.0)), _wink("B", "blue", "small", (0.0, 0.0))
    r.outline_tilt = (51.0, 270.0)
    r.above, r.order_confidence, b.order_confidence = ["B"], {"B": 0.95}, {"R": 0.95}
    assign_poses([r, b])
    assert flag_tilted_slivers([r, b]) == 0 and r.order_confidence["B"] == pytest.approx(0.95)
    from vision.stacking import held_up
    assert not held_up(r, [r, b])
    # at 12 degrees a wink 1.5 mm thick holds it: the sliver test stands (its footprint reaches 7.8 mm towards B)
    r.outline_tilt = (12.0, 270.0)
    assign_poses([r, b])
    assert held_up(r, [r, b])
    # on a pile three winks high, 25 degrees is held up too
    pile = [_wink(f"P{i}", "green", "large", (0.0, -2.0 * i)) for i in range(3)]
    for i in range(1, 3):
        pile[i].above, pile[i].order_confidence = [pile[i - 1].wink_id], {pile[i - 1].wink_id: 0.95}
    r.outline_tilt = (25.0, 270.0)
    r.above, r.order_confidence = ["P2"], {"P2": 0.95}
    assign_poses([*pile, r])
    assert held_up(r, [*pile, r])


def _residuals_by_interp(points_mm, model_mm, origin_mm):
    """The radial residuals as first written (each rim read by ``np.interp``): the reference of the batch."""
    q = points_mm - origin_mm
    tq = np.arctan2(q[:, 1], q[:, 0])
    r_model = np.zeros(len(q))
    for rim in np.split(model_mm - origin_mm, 2):
        th = np.arctan2(rim[:, 1], rim[:, 0])
        k = np.argsort(th)
        r_model = np.maximum(r_model, np.interp(tq, th[k], np.hypot(rim[k, 0], rim[k, 1]), period=2 * np.pi))
    return np.hypot(q[:, 0], q[:, 1]) - r_model


def test_the_fits_batched_steps_give_each_disc_the_residuals_it_has_alone():
    # the least-squares Jacobian evaluates its steps together: each must be the very residual of its disc
    # evaluated alone (the fit's path, and so every decision on it, must not depend on the batching)
    from vision.tilted_outline import _model_outlines, _radial_residuals_of
    rng = np.random.default_rng(5)
    for _ in range(40):
        c = rng.uniform(-400.0, 400.0, 2)
        pts = _outline_points(c, 11.0, rng.uniform(0.0, 45.0), rng.uniform(0.0, 360.0), seed=int(rng.integers(99)))
        discs = [(c + rng.normal(0.0, 0.5, 2), float(rng.choice([8.0, 11.0]) + rng.uniform(-1.0, 1.0)),
                  float(rng.uniform(0.0, 80.0)), float(rng.uniform(-360.0, 360.0))) for _ in range(5)]
        models, mids = _model_outlines(CAMERA_MM, discs, WINK_THICKNESS_MM)
        got = _radial_residuals_of(pts, models, mids)
        for disc, model, mid, res in zip(discs, models, mids, got):
            alone, mid_alone = model_outline_mm(CAMERA_MM, *disc, WINK_THICKNESS_MM)
            assert np.array_equal(model, alone) and np.array_equal(mid, mid_alone)
            assert np.array_equal(res, _residuals_by_interp(pts, alone, mid_alone))


def test_the_fit_with_its_steps_batched_is_the_fit_without(monkeypatch):
    # the batch changes how the Jacobian's steps are evaluated, not what they are: every fit the same to the bit
    import vision.tilted_outline as tilted_outline
    c = np.array([-120.0, 240.0])
    pts = _outline_points(c, 11.0, 33.0, 200.0, seed=8)
    runs = []
    for batched in (True, False):
        monkeypatch.setattr(tilted_outline, "_BATCHED_STEPS", batched)
        runs.append([fit_tilted_outline(pts, c + 1.0, r, CAMERA_MM, WINK_THICKNESS_MM, tilted=t)
                     for r in (8.0, 11.0) for t in (True, False)])
    for a, b in zip(*runs):
        assert np.array_equal(a.center_mm, b.center_mm)
        assert (a.tilt_deg, a.tilt_azimuth_deg, a.offset_mm, a.rms_mm, a.shortfall_sigma_mm) == (
            b.tilt_deg, b.tilt_azimuth_deg, b.offset_mm, b.rms_mm, b.shortfall_sigma_mm)


def test_poses_from_the_order_graph_are_the_physical_rest_of_each_upper_wink():
    # random squop scenes with their true centres and orders: each upper wink rests with its low bottom edge on
    # the mat and its underside on its supports' highest face point under its footprint (the simulator's rest).
    # The line-of-centres lever (rim to the lower's near rim, r not r cos t) read piles' tilts up to 6 deg shallow
    from simulation.tiddlywinks_scenes import random_scene
    errs, z_errs = [], []
    for seed in range(6):
        scene = random_scene(np.random.default_rng([31, seed]), "squops")
        live = [w for w in scene.winks if not w.potted and not w.off_mat]
        cands = {w.wink_id: _wink(w.wink_id, w.color.value, w.size.value, w.center_mm) for w in live}
        for w in live:
            c = cands[w.wink_id]
            c.above = [i for i in (w.above or ()) if i in cands]
            for i in c.above:
                c.order_confidence[i] = cands[i].order_confidence[w.wink_id] = 0.95
        assign_poses(list(cands.values()), 0.75)
        for w in live:
            if w.above:
                errs.append(cands[w.wink_id].tilt_deg - w.tilt_deg)
                z_errs.append(cands[w.wink_id].z_mm - w.z_mm)
    assert len(errs) >= 10
    assert np.abs(errs).max() < 0.5 and abs(np.mean(errs)) < 0.1
    assert np.abs(z_errs).max() < 0.1


def _render_three_high(tmp_path):
    """A large yellow resting on a small blue that rests on a large red (each placed over the one under it, its
    pose the simulator's physical rest), rendered at 1920 x 1080 by the project's renderer."""
    import json

    import cv2

    from calibration.camera import CameraModel
    from geometry.types import TiddlywinksScene, Wink
    from simulation.generate import make_rig, render_tiddlywinks_item
    from simulation.tiddlywinks_scenes import rest_on
    red = Wink(wink_id="red-L1", color="red", size="large", center_mm=(-250.0, 80.0))
    a, b = math.radians(200.0), math.radians(160.0)
    p = (-250.0 - 12.0 * math.cos(a), 80.0 - 12.0 * math.sin(a))
    z, t = rest_on(p, 8.0, 200.0, [red])
    blue = Wink(wink_id="blue-S1", color="blue", size="small", center_mm=p, z_mm=z, tilt_deg=t,
                tilt_azimuth_deg=200.0, above=("red-L1",))
    q = (p[0] - 11.0 * math.cos(b), p[1] - 11.0 * math.sin(b))
    z2, t2 = rest_on(q, 11.0, 160.0, [blue])
    yellow = Wink(wink_id="yellow-L1", color="yellow", size="large", center_mm=q, z_mm=z2, tilt_deg=t2,
                  tilt_azimuth_deg=160.0, above=("blue-S1",))
    rng = np.random.default_rng([77, 0])
    rig = make_rig("pile_0", 77000, (1920, 1080))
    path = render_tiddlywinks_item(tmp_path, "pile_0", TiddlywinksScene(winks=(red, blue, yellow)), rig, rng,
                                   kind="squops")
    doc = json.loads(path.with_suffix(".json").read_text())
    return cv2.imread(str(path)), CameraModel.from_dict(doc["calibration"]["camera"]), yellow


def test_a_wink_on_a_tilted_wink_is_posed_at_its_physical_rest(tmp_path):
    # the yellow rests 9.9 deg on the blue (itself 9.7 deg on the red): the line-of-centres lever read it 7.3
    from vision.tiddlywinks import measure_tiddlywinks
    img, cam, yellow = _render_three_high(tmp_path)
    m = measure_tiddlywinks(img, cam)
    got = [w for w in m.winks if w.color == "yellow" and math.dist(w.center_mm, yellow.center_mm) < 8.0]
    assert len(got) == 1
    y = got[0]
    assert y.tilt_deg == pytest.approx(yellow.tilt_deg, abs=1.0)
    assert math.dist(y.center_mm, yellow.center_mm) < 0.5


def test_a_fit_that_would_tilt_a_disc_past_upright_stays_a_disc_no_further_than_80_degrees():
    # a small flat wink's outline (or a 47-degree one's) fitted at the large radius asks for more foreshortening than
    # any tilt gives: the tilt vector ran past the model's 80-degree clamp onto a flat residual and drifted, and
    # the fit reported 648 and 3441 degrees (seen in a pile: 1173), its outline no better for it
    c = np.array([300.0, 120.0])
    for tilt, az in ((0.0, 0.0), (47.0, 100.0)):
        got = fit_tilted_outline(_outline_points(c, 8.0, tilt, az), c + 0.5, 11.0, CAMERA_MM, WINK_THICKNESS_MM)
        assert got is not None and 0.0 <= got.tilt_deg <= 80.0
