"""A lower wink whose crescent the labels call neutral foreground (issue 4, held-out seed 8989): the crescent search's
first look reads those samples in the image for a pigment in the light (``vision.crescents.lit_pigment``).

tw_8991_001's pile as posed there: a small green on grey felt lying on a small red (itself on a small blue) and under
a large red, about a fifth of it showing, a sliver the labels' opening thins to neutral foreground: never searched
for. Once the green is found under the large red, the pile-echo refit must still take the large red's colour in
its disc as the large red's, not the small red's own (``vision.pile_echoes``: it moved the small red 5-6 mm off and
then claimed it over the green)."""

import math

import numpy as np
import pytest

from geometry.types import TiddlywinksScene, Wink
from simulation.camera_rig import random_camera
from simulation.photo import PhotoSettings
from simulation.render_style import random_style
from simulation.tiddlywinks_render import render_tiddlywinks
from vision.tiddlywinks import measure_tiddlywinks

#: A wink of the pile placed at 1080p (about a millimetre a pixel); the lower ones from what shows of them: the
#: bench's gate is 5 mm; the green was found 1.2 mm off on the held-out render.
CENTRE_TOL_MM = 2.0


@pytest.fixture(scope="module", params=["grey", "beige"])
def sliver_on_felt(request):
    """On grey felt the green sliver is lighter than the felt; on beige darker, the first look's dark pigment
    (``vision.crescents.dark_pigment``, ``test_crescent_dark_look``)."""
    blue = Wink(wink_id="blue-S3", color="blue", size="small", center_mm=(106.62, -208.43), above=())
    red_s = Wink(wink_id="red-S1", color="red", size="small", center_mm=(107.94, -200.22), z_mm=2.203,
                 tilt_deg=10.56, tilt_azimuth_deg=260.88, above=("blue-S3",))
    green = Wink(wink_id="green-S2", color="green", size="small", center_mm=(102.87, -189.18), z_mm=2.161,
                 tilt_deg=10.25, tilt_azimuth_deg=294.64, above=("red-S1",))
    red_l = Wink(wink_id="red-L1", color="red", size="large", center_mm=(96.59, -190.93), z_mm=4.353,
                 tilt_deg=19.35, tilt_azimuth_deg=15.59, above=("green-S2", "red-S1"))
    winks = (blue, red_s, green, red_l)
    cam = random_camera(np.random.default_rng([5, 7777]), image_size_wh_px=(1920, 1080))
    style = random_style(np.random.default_rng([5, 8888]), mat_color=request.param)
    photo = PhotoSettings.random(np.random.default_rng(5))
    img = render_tiddlywinks(TiddlywinksScene(winks=winks), cam, np.random.default_rng(5), style=style,
                             photo=photo).bgr
    m = measure_tiddlywinks(img, cam)
    found = {}
    for w in winks:
        near = [g for g in m.winks if g.color == w.color and g.size == w.size
                and math.dist(g.center_mm, w.center_mm) < CENTRE_TOL_MM]
        found[w.wink_id] = near[0] if near else None
    return winks, m, found


def test_every_wink_of_the_pile_is_found_where_it_lies(sliver_on_felt):
    winks, m, found = sliver_on_felt
    assert len(m.winks) == len(winks)
    assert all(found[w.wink_id] is not None for w in winks), {k: v is not None for k, v in found.items()}


def test_the_green_sliver_is_reported_under_the_large_red_and_over_the_small_one(sliver_on_felt):
    _, _, found = sliver_on_felt
    green, red_s, red_l = found["green-S2"], found["red-S1"], found["red-L1"]
    assert green is not None
    assert green.wink_id in red_l.above
    assert red_s.wink_id in green.above
    assert green.wink_id not in red_s.above and red_l.wink_id not in green.above
