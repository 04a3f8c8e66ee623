"""A wink of the felt's own hue half hidden under a wink of another colour, found from the crescent of its pigment
that shows (vision/crescents.felt_pigment): issue 4, tw_9900_001's green-S4 beside blue-L2 on green felt."""

import math

import numpy as np
import pytest

from geometry.types import TiddlywinksScene, Wink
from simulation.camera_rig import random_camera
from simulation.photo import PhotoSettings
from simulation.render_style import random_style
from simulation.tiddlywinks_render import render_tiddlywinks
from simulation.tiddlywinks_scenes import rest_on
from vision.tiddlywinks import measure_tiddlywinks

#: The lower wink's centre from half its rim and the upper's outline: at 1080p about a pixel (the bench's gate is
#: 5 mm; tw_9900_001's was found 1.1 mm off).
CENTRE_TOL_MM = 1.5
#: The upper's centre 10 mm from the lower's (tw_9900_001: 10.1 mm): about half the small wink shows.
OFFSET_MM = 10.0


@pytest.fixture(scope="module")
def pile():
    """The simulator's photograph (its ray caster, felt texture, lamp and camera finish) of a small green wink on
    green felt with a large blue one resting on it, posed as the simulator rests it (``rest_on``)."""
    lower = Wink(wink_id="green-S1", color="green", size="small", center_mm=(-300.0, -150.0))
    d = OFFSET_MM / math.sqrt(2.0)
    c = (-300.0 + d, -150.0 + d)
    az = math.degrees(math.atan2(-d, -d)) % 360.0  # it rises towards the wink under it
    z, tilt = rest_on(c, 11.0, az, [lower])
    upper = Wink(wink_id="blue-L1", color="blue", size="large", center_mm=c, z_mm=z, tilt_deg=tilt,
                 tilt_azimuth_deg=az, above=("green-S1",))
    cam = random_camera(np.random.default_rng([5, 7777]), image_size_wh_px=(1920, 1080))
    style = random_style(np.random.default_rng([5, 8888]), mat_color="green")
    photo = PhotoSettings.random(np.random.default_rng(2))
    img = render_tiddlywinks(TiddlywinksScene(winks=(lower, upper)), cam, np.random.default_rng(1), style=style,
                             photo=photo).bgr
    return lower, upper, measure_tiddlywinks(img, cam)


def test_a_felt_coloured_wink_half_under_another_is_found_where_it_lies(pile):
    lower, upper, m = pile
    assert len(m.winks) == 2
    got = {w.color: w for w in m.winks}
    assert got["green"].size == "small" and got["blue"].size == "large"
    assert math.dist(got["green"].center_mm, lower.center_mm) < CENTRE_TOL_MM
    assert math.dist(got["blue"].center_mm, upper.center_mm) < CENTRE_TOL_MM


def test_the_squop_over_the_felt_coloured_wink_is_reported(pile):
    _, _, m = pile
    got = {w.color: w for w in m.winks}
    assert got["blue"].above == (got["green"].wink_id,)
    assert got["green"].above == ()
