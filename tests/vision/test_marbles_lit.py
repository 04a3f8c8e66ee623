"""Issue 8 detection: a candidate on the ground is a ball only if it shows a lit ball's own colour or highlight
(``vision.marbles_lit``); a paving joint's crossing or a ball's shadow only darkens the ground."""

from __future__ import annotations

import numpy as np

from vision.marbles_lit import MIN_CORE_CHROMA, MIN_HIGHLIGHT_MADS, is_lit_ball, lit_ball_cues

MARBLE_PX = 9.0
SIZE_PX = 61
CENTRE = (30.0, 30.0)


def _pavement(rng: np.random.Generator) -> np.ndarray:
    """Grey slabs (OpenCV 8-bit CIELAB, a* = b* = 128) with aggregate speckle."""
    lab = np.full((SIZE_PX, SIZE_PX, 3), 128.0, np.float32)
    lab[..., 0] = 110.0 + rng.normal(0.0, 3.0, (SIZE_PX, SIZE_PX))
    return lab


def _disc(radius_px: float) -> np.ndarray:
    rr, cc = np.mgrid[:SIZE_PX, :SIZE_PX]
    return np.hypot(cc - CENTRE[0], rr - CENTRE[1]) <= radius_px


def test_a_joint_crossing_is_no_lit_ball():
    lab = _pavement(np.random.default_rng(1))
    lab[28:33, :, 0] -= 45.0  # two dark joints, 5 px wide, crossing at the centre
    lab[:, 28:33, 0] -= 45.0
    chroma, highlight = lit_ball_cues(lab, CENTRE, MARBLE_PX)
    assert chroma < MIN_CORE_CHROMA and highlight < MIN_HIGHLIGHT_MADS
    assert not is_lit_ball(lab, CENTRE, MARBLE_PX)


def test_a_shadow_is_no_lit_ball():
    lab = _pavement(np.random.default_rng(2))
    lab[_disc(0.6 * MARBLE_PX), 0] -= 30.0  # darker, with the ground's own hue
    assert not is_lit_ball(lab, CENTRE, MARBLE_PX)


def test_a_tinted_glass_ball_is_a_lit_ball_by_its_colour():
    lab = _pavement(np.random.default_rng(3))
    core = _disc(0.45 * MARBLE_PX)
    lab[core, 1] -= 14.0  # green glass: a* down, b* up, no brighter than the ground
    lab[core, 2] += 10.0
    lab[core, 0] -= 10.0
    assert lit_ball_cues(lab, CENTRE, MARBLE_PX)[0] >= MIN_CORE_CHROMA
    assert is_lit_ball(lab, CENTRE, MARBLE_PX)


def test_a_pale_ball_is_a_lit_ball_by_its_highlight():
    lab = _pavement(np.random.default_rng(4))
    lab[_disc(0.45 * MARBLE_PX), 0] += 8.0  # a grey-white ball, barely coloured...
    lab[28:31, 27:30, 0] = 250.0  # ... with the lamp's specular highlight on its lamp side
    chroma, highlight = lit_ball_cues(lab, CENTRE, MARBLE_PX)
    assert chroma < MIN_CORE_CHROMA and highlight >= MIN_HIGHLIGHT_MADS
    assert is_lit_ball(lab, CENTRE, MARBLE_PX)


def test_a_ball_beside_its_shadow_is_found_within_half_a_diameter():
    # a dark green ball whose blob's centroid lies in its long shadow (seeds 7, 99: neither colour nor highlight
    # shows there): read at the centroid it is no lit ball; half a diameter towards the lamp its colour shows
    from vision.marbles_lit import lit_point_near

    lab = _pavement(np.random.default_rng(5))
    rr, cc = np.mgrid[:SIZE_PX, :SIZE_PX]
    ball_xy = (CENTRE[0] - 0.45 * MARBLE_PX, CENTRE[1])
    ball = np.hypot(cc - ball_xy[0], rr - ball_xy[1]) <= 0.45 * MARBLE_PX
    lab[(np.abs(rr - CENTRE[1]) <= 0.45 * MARBLE_PX) & (cc >= ball_xy[0]) & (cc <= CENTRE[0] + MARBLE_PX), 0] -= 35.0
    lab[ball, 0] = 70.0
    lab[ball, 1] -= 18.0
    lab[ball, 2] += 12.0
    assert not is_lit_ball(lab, CENTRE, MARBLE_PX)
    q = lit_point_near(lab, CENTRE, MARBLE_PX)
    assert q is not None and np.hypot(*(q - np.asarray(ball_xy))) <= 0.3 * MARBLE_PX
    # bare ground holds no ball anywhere near
    assert lit_point_near(_pavement(np.random.default_rng(6)), CENTRE, MARBLE_PX) is None
