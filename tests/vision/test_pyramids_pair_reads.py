"""A piece standing on a lying one: the pair is believed with the lying piece's open base unseen, and the
standing piece's size is read at each size on its hinge (vision/pyramids ``_pair_plausible``,
``_pair_size_reads``).

A lying piece's base square shows the table through one wall, so the segmentation leaves much of it out
(the bench's ice_fresh_000 of seed 8686: a red small lying piece under a red medium, 65 % of its hull in the
blob, 96 % of it once the open base is set aside); and the pair search's leaning seeds favour the larger piece
at one hinge (ice_fresh_002 of the development set: a red medium on a red large read large, unflagged).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from shapely.geometry import MultiPoint, Polygon
from shapely.ops import unary_union

from geometry.pyramids import base_mm
from tests.vision.test_pyramids_open_base import _camera
from vision.pyramids import _pair_plausible, _pair_size_reads, _physical, _rest_on
from vision.pyramids_fit import BlobFitter, PieceHypothesis, hull_px
from vision.pyramids_physics import resting_tilt_rad


def _pair(lying_size: str, top_size: str, lean_deg: float = 0.0, reach: float = 0.4):
    """A lying piece with its apex along -x (its open base turned to the camera, which looks from +x) and a piece
    leaning on it along plan direction ``lean_deg`` (0: from the apex end), its base reaching ``reach`` of its side
    over the lying piece's near extent, at the tilt where it comes to rest."""
    low = PieceHypothesis("lying", lying_size, (0.0, 0.0, math.radians(270.0)))
    toward = math.radians(lean_deg)
    d = np.array([math.cos(toward), math.sin(toward)])
    near = float((low.pose().plan_footprint_mm() @ d).min())
    hinge = d * (near - reach * base_mm(top_size))
    tilt = resting_tilt_rad(top_size, low.pose(), hinge, toward)
    assert tilt is not None
    top = PieceHypothesis("tilted", top_size, (float(hinge[0]), float(hinge[1]), toward - math.pi / 2, tilt))
    return low, top


def _hulls(cam, pieces):
    return [Polygon(hull_px(cam, p.pose())).buffer(0) for p in pieces]


def _inner(poly: Polygon, share: float) -> Polygon:
    """``poly`` shrunk about its centroid to ``share`` of its size (the rim's walls stay in view)."""
    c = np.asarray(poly.centroid.coords[0])
    return Polygon(c + share * (np.asarray(poly.exterior.coords) - c))


@pytest.mark.parametrize(("tilt_deg", "lying_size", "top_size"),
                         [(30.0, "small", "medium"), (40.0, "medium", "large"), (35.0, "large", "medium")])
def test_a_pair_whose_lying_piece_shows_the_table_through_its_open_base_is_believed(tilt_deg, lying_size, top_size):
    cam = _camera(tilt_deg)
    low, top = _pair(lying_size, top_size)
    hulls = _hulls(cam, (low, top))
    base = MultiPoint(cam.project_mm(low.pose().corners_mm())).convex_hull
    blob = unary_union(hulls).difference(_inner(base, 0.85).difference(hulls[1]))
    seen = hulls[0].intersection(blob).area / hulls[0].area
    assert seen < 0.75  # the segmentation's cut: the old check wanted 75 % of each hull in the blob
    assert _pair_plausible(BlobFitter(cam, blob), [low, top])


@pytest.mark.parametrize("tilt_deg", [25.0, 30.0])
def test_a_lying_piece_missing_its_solid_apex_end_is_still_not_believed(tilt_deg):
    # the part forgiven is the open base only: the apex end is solid plastic, and a lying reading that hangs it
    # over bare table is not the piece
    cam = _camera(tilt_deg)
    low, top = _pair("medium", "medium", lean_deg=180.0, reach=0.55)
    hulls = _hulls(cam, (low, top))
    base = MultiPoint(cam.project_mm(low.pose().corners_mm())).convex_hull
    apex = cam.project_mm(low.pose().apex_mm()[None])[0]
    cut = hulls[0].intersection(Polygon(apex + 0.65 * (np.asarray(hulls[0].exterior.coords) - apex)))
    blob = unary_union(hulls).difference(cut.difference(hulls[1]).difference(base))
    assert hulls[0].intersection(blob).area / hulls[0].area < 0.75
    assert not _pair_plausible(BlobFitter(cam, blob), [low, top])


@pytest.mark.parametrize(("tilt_deg", "lying_size", "top_size", "read_as"),
                         [(30.0, "large", "medium", "large"), (35.0, "large", "small", "medium"),
                          (30.0, "medium", "medium", "small")])
def test_the_standing_piece_is_read_at_its_own_size_on_its_hinge(tilt_deg, lying_size, top_size, read_as):
    # the blob a pair makes, read with the standing piece a size off at its hinge (the leaning seeds' crowding):
    # the reading at its own size, resting on the lying piece, is among the size reads and fits better
    cam = _camera(tilt_deg)
    low, top = _pair(lying_size, top_size)
    fitter = BlobFitter(cam, unary_union(_hulls(cam, (low, top))))
    wrong = _rest_on(low, PieceHypothesis("hinge", read_as, top.params[:3]))
    assert wrong is not None
    _, wrong_score = fitter.refine([low, wrong], max_evals=200)
    reads = _pair_size_reads(fitter, [(wrong_score, [low, wrong])], max_evals=200)
    score, (got_low, got_top) = max(reads, key=lambda t: t[0])
    assert (got_low.size, got_top.kind, got_top.size) == (lying_size, "tilted", top_size)
    assert score > wrong_score
    assert _physical([got_low, got_top])
    assert math.dist(got_top.params[:2], top.params[:2]) < 0.1 * base_mm(top_size)

