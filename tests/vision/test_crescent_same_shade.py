"""The colour test of a lower wink of the upper's own colour (vision/crescents._same_colour): under a raised upper
the lower lies in its shadow (issue 4, tw_9898_001: green-S4 under green-L2 on beige felt read at 0.85 of the
upper's brightness with its chromaticity), whereas the felt in that shadow keeps the felt's chromaticity."""

import numpy as np
import pytest

from vision.crescents import CrescentParams, _same_colour

#: tw_9898_001's beige felt and green-L2's median colour (BGR in [0, 1]) beside green-S4's crescent.
FELT_BGR = np.array([0.333, 0.451, 0.565])
UPPER_BGR = np.array([0.329, 0.498, 0.388])


def _reads(bgr) -> bool:
    return bool(_same_colour(np.array([bgr], float), FELT_BGR[None, :], UPPER_BGR, CrescentParams())[0])


@pytest.mark.parametrize("shade", [0.6, 0.85, 1.0])
def test_the_upper_colour_in_shade_is_its_colour(shade):
    assert _reads(shade * UPPER_BGR)


@pytest.mark.parametrize("shade", [0.6, 0.85])
def test_the_felt_in_shade_is_not(shade):
    assert not _reads(shade * FELT_BGR)


def test_a_half_blend_of_the_upper_with_the_felt_is_not():
    assert not _reads(0.5 * UPPER_BGR + 0.5 * FELT_BGR)


def test_the_crescent_as_read_on_tw_9898_001_is_the_upper_colour():
    # green-S4's crescent beyond green-L2's rim: median BGR 0.278, 0.439, 0.329 (0.86 of the upper's)
    assert _reads([0.278, 0.439, 0.329])
