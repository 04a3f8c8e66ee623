"""A lower wink darker than the felt whose crescent the labels call neutral foreground (issue 4, after twpile): the
crescent search's first look reads it as pigment by its own chromaticity (``vision.crescents.dark_pigment``).

tw_8991_001's pile laid on beige felt (``test_crescent_neutral_look``'s beige case): the green sliver under the
large red is darker than the felt, and the first look passed only samples not darker than the felt (a shadow darkens
it), so the green was never searched for. A shadow keeps the felt's chromaticity and a blurred rim lies between the
felt's and the upper wink's; the green's lies off both."""

from types import SimpleNamespace

import numpy as np

from vision.crescents import CrescentParams, lit_pigment


def test_a_darker_pigment_counts_and_a_shadow_or_a_shaded_rim_does_not():
    # BGR in [0, 1], as sampled from the 8-bit frame: beige felt, a red upper wink, a green wink darker than the felt
    felt = np.array([0.29, 0.39, 0.47], np.float32)
    red = np.array([0.16, 0.15, 0.50], np.float32)
    green = np.array([0.20, 0.36, 0.12], np.float32)
    samples = np.array([green, 0.6 * felt, 0.7 * (0.5 * felt + 0.5 * red)], np.float32)
    cs = SimpleNamespace(gains_bgr=np.ones(3, np.float32), mat_noise=(0.003, 0.02))
    got = lit_pigment(samples, np.tile(felt, (3, 1)), red, cs, CrescentParams())
    assert got.tolist() == [True, False, False]
