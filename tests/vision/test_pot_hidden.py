"""Which winks the cup can hide from the camera (``vision.pot_hidden``): its wall in an oblique view, the winks in it."""

import math

import numpy as np
import pytest

from calibration.camera import CameraModel
from vision.pot import PotDetection, pot_polygons
from geometry.constants import POT_HEIGHT_MM, POT_TOP_RADIUS_MM
from vision.pot_floor import CUP_LEVELS_Z_MM, FLOOR_INNER_RADIUS_MM
from vision.pot_hidden import colours_pot_may_hide, cup_floor_hidden_share, hideable_sizes
from vision.potted import POT_FLOOR_Z_MM
from vision.winks import WinkCandidate, lens_area_mm2


def _scene(tilt_deg: float) -> tuple[CameraModel, PotDetection]:
    """A camera 1.8 m from the pot, looking at it from ``tilt_deg`` off the vertical (the bench's range is 2-23)."""
    t = math.radians(tilt_deg)
    cam = CameraModel.look_at(eye_mm=(0.0, -1800.0 * math.sin(t), 1800.0 * math.cos(t)), target_mm=(0.0, 0.0, 0.0),
                              focal_px=1450.0, image_size_wh_px=(1920, 1080))
    centre = np.zeros(2)
    sil, top = pot_polygons(cam, centre)
    pot = PotDetection(found=True, center_mm=centre, center_px=cam.project_mm(np.zeros((1, 3)))[0], sigma_mm=0.5,
                       confidence=1.0, silhouette_px=sil, opening_px=top)
    return cam, pot


def _wink(cam: CameraModel, color: str, size: str, xy, potted: bool = True) -> WinkCandidate:
    w = WinkCandidate(color=color, size=size, center_mm=np.asarray(xy, float), votes=1.0)
    w.potted = potted
    w.z_mm = POT_FLOOR_Z_MM if potted else 0.75
    w.center_px = cam.project_mm(np.array([[xy[0], xy[1], w.z_mm]]))[0]
    return w


def _full_set(cam: CameraModel, skip: str | None = None, potted: str | None = None) -> list[WinkCandidate]:
    """Six winks of each colour (two large, four small) on the mat far from the pot, less ``skip``; ``potted`` lies
    in the cup instead."""
    out = []
    for i, color in enumerate(("blue", "green", "red", "yellow")):
        for k, size in enumerate(("large", "large", "small", "small", "small", "small")):
            if f"{color}-{k}" == potted:
                out.append(_wink(cam, color, size, (2.0, 1.0)))
            elif f"{color}-{k}" != skip:
                out.append(_wink(cam, color, size, (200.0 + 40.0 * k, -300.0 + 150.0 * i), potted=False))
    return out


def test_an_empty_cup_seen_from_nearly_above_hides_no_wink():
    cam, pot = _scene(6.0)
    assert hideable_sizes(cam, pot, []) == ()


def test_the_near_wall_of_an_obliquely_seen_cup_can_hide_a_small_wink():
    # at 22 degrees the near wall hides a band of the floor that holds more than a quarter of a small wink
    cam, pot = _scene(22.0)
    assert "small" in hideable_sizes(cam, pot, [])


def test_a_wink_lying_in_the_cup_hides_one_under_it_even_from_nearly_above():
    cam, pot = _scene(6.0)
    assert set(hideable_sizes(cam, pot, [_wink(cam, "red", "large", (2.0, 1.0))])) == {"small", "large"}


def test_a_colour_short_of_six_is_said_to_be_possibly_in_the_cup_only_where_it_can_hide():
    cam, pot = _scene(6.0)
    winks = _full_set(cam, skip="green-2")  # a small green not found
    colours = ("blue", "green", "red", "yellow")
    assert colours_pot_may_hide(cam, pot, winks, colours) == ()  # an empty cup seen from above shows all its floor
    # a large red lying in the cup can cover it; red itself is complete
    assert colours_pot_may_hide(cam, pot, _full_set(cam, skip="green-2", potted="red-0"), colours) == ("green",)
    # every colour complete: nothing to say
    assert colours_pot_may_hide(cam, pot, _full_set(cam), colours) == ()


def test_a_colour_misread_as_another_is_no_wink_hidden_in_the_cup():
    # all 24 winks found, a small green read as yellow: green is short and yellow has seven, none is missing
    cam, pot = _scene(22.0)
    winks = _full_set(cam, potted="red-0")
    misread = next(w for w in winks if w.color == "green" and w.size == "small")
    misread.color = "yellow"
    assert colours_pot_may_hide(cam, pot, winks, ("blue", "green", "red", "yellow")) == ()


@pytest.mark.parametrize("tilt_deg", [6.0, 15.0, 22.0])
def test_the_share_of_the_cup_floor_hidden_by_its_wall_is_the_floor_outside_the_openings_shadow(tilt_deg):
    # issue 4: a wink the camera cannot see is not counted; the analysis says how much of the floor it cannot see.
    # From the camera's centre the opening's inner edge (a circle at the top) falls on the plane of a floor wink's
    # top face as a circle, scaled and shifted away from the camera: the floor outside it is hidden
    cam, pot = _scene(tilt_deg)
    t = math.radians(tilt_deg)
    eye_xy, eye_z = 1800.0 * math.sin(t), 1800.0 * math.cos(t)
    z_top = CUP_LEVELS_Z_MM[0] + 0.75
    shift = eye_xy * (POT_HEIGHT_MM - z_top) / (eye_z - POT_HEIGHT_MM)
    r_open = (POT_TOP_RADIUS_MM - 1.6) * (eye_z - z_top) / (eye_z - POT_HEIGHT_MM)
    want = 1.0 - lens_area_mm2(FLOOR_INNER_RADIUS_MM, r_open, shift) / (math.pi * FLOOR_INNER_RADIUS_MM ** 2)
    assert cup_floor_hidden_share(cam, pot, []) == pytest.approx(want, abs=0.01)


def test_a_wink_lying_in_the_cup_hides_the_floor_under_it():
    cam, pot = _scene(6.0)  # the wall hides none of the floor from here
    got = cup_floor_hidden_share(cam, pot, [_wink(cam, "red", "large", (2.0, 1.0))])
    assert got == pytest.approx((11.0 / FLOOR_INNER_RADIUS_MM) ** 2, abs=0.02)
