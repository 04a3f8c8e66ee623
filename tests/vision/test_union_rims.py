"""A tilted outline is a pose only where a wink under its raised side can hold it up (vision/union_rims.py)."""

import math

import numpy as np

from geometry.constants import WINK_THICKNESS_MM
from vision.tilted_outline import TiltedOutline
from vision.union_rims import tilt_held_up
from vision.winks import WinkCandidate


def _tilted_small(tilt_deg: float) -> TiltedOutline:
    # a small wink at the origin rising towards +x (the raised side over a large wink 15 mm away)
    short = 8.0 * (1.0 - math.cos(math.radians(tilt_deg)))
    return TiltedOutline(center_mm=np.zeros(2), radius_mm=8.0, tilt_deg=tilt_deg, tilt_azimuth_deg=0.0,
                         offset_mm=0.0, rms_mm=0.1, shortfall_mm=short, shortfall_sigma_mm=0.05)


def _wink(color: str, size: str, x_mm: float, y_mm: float) -> WinkCandidate:
    return WinkCandidate(color=color, size=size, center_mm=np.array([x_mm, y_mm]), votes=1.0)


def test_a_steep_outline_over_one_flat_wink_is_no_pose_and_a_gentle_one_is():
    # seed 3434 #1: a red small wink's outline, cut by the green large wink over it, fitted a disc tilted 35
    # degrees rising over the green. Its underside would be 10.6 mm x tan 35 = 7.4 mm up at the green's rim: five
    # thicknesses, over a green lying on the mat (its top 1.5 mm up)
    me = _wink("red", "small", 0.0, 0.0)
    green = _wink("green", "large", 15.0, 0.0)
    assert not tilt_held_up(_tilted_small(35.0), me, [me, green])
    # the pose a wink on a flat one takes: 2.2 mm at the rim, a flat wink's top and a little more
    assert tilt_held_up(_tilted_small(12.0), me, [me, green])
    lever_mm = 15.0 - 11.0 + 8.0 * math.cos(math.radians(12.0))
    assert lever_mm * math.tan(math.radians(12.0)) > WINK_THICKNESS_MM  # a bound, not the bare flat top


def test_a_steep_outline_over_a_pile_is_held_up_by_it():
    # the same 35 degrees where the green lies on two winks of its own pile: its top may stand that high
    me = _wink("red", "small", 0.0, 0.0)
    green = _wink("green", "large", 15.0, 0.0)
    pile = [_wink("blue", "small", 22.0, 6.0), _wink("yellow", "small", 24.0, -7.0)]
    assert tilt_held_up(_tilted_small(35.0), me, [me, green, *pile])
    # a wink not under the raised side, or beyond its reach, holds nothing up
    behind = _wink("blue", "large", -15.0, 0.0)
    assert not tilt_held_up(_tilted_small(35.0), me, [me, behind, *pile])
