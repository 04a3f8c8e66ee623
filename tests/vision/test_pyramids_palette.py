"""Pieces of one plastic read alike within one photo (vision/pyramids_palette.py)."""

from __future__ import annotations

import numpy as np

from vision.pyramids import PyramidDetection, _flag_palette_rivals
from vision.pyramids_color import PROTOTYPES
from vision.pyramids_palette import WITHIN_PHOTO_CHROMA_SD, palette_rivals


def _yellows(n: int, seed: int = 3) -> list[np.ndarray]:
    """Chromaticities of ``n`` yellow pieces of one photo: its light pulls them off the prototype towards red."""
    rng = np.random.default_rng(seed)
    centre = np.asarray(PROTOTYPES["yellow"][0][:3]) + np.array([0.35, -0.12, -0.23])
    return [centre + 0.3 * rng.normal(0.0, WITHIN_PHOTO_CHROMA_SD) for _ in range(n)]


def _orange_read_yellow_edge(yellows: list[np.ndarray]) -> np.ndarray:
    """A yellow piece at the red edge of its photo's cluster: nearer the orange prototype than the yellow one."""
    edge = np.median(yellows, axis=0) + np.array([-0.05, -0.1, 0.12])
    orange, yellow = (np.asarray(PROTOTYPES[c][0][:3]) for c in ("orange", "yellow"))
    assert np.linalg.norm(edge - orange) < np.linalg.norm(edge - yellow)
    return edge


def test_a_piece_reading_like_the_photos_other_colour_has_that_rival():
    yellows = _yellows(5)
    edge = _orange_read_yellow_edge(yellows)
    rivals = palette_rivals(["yellow"] * 5 + ["orange"], [*yellows, edge], [True] * 6)
    assert rivals[5] is not None and rivals[5][0] == "yellow"
    assert rivals[5][1] < rivals[5][2]  # nearer the photo's yellows than the orange prototype
    assert rivals[:5] == [None] * 5  # the settled yellows sit with each other


def test_flagged_pieces_are_no_reference():
    yellows = _yellows(5)
    edge = _orange_read_yellow_edge(yellows)
    rivals = palette_rivals(["yellow"] * 5 + ["orange"], [*yellows, edge], [False] * 5 + [True])
    assert rivals[5] is None


def test_grey_plastics_are_not_compared_and_distinct_plastics_pass():
    grey = np.asarray(PROTOTYPES["clear"][0][:3])
    red = np.asarray(PROTOTYPES["red"][0][:3])
    green = np.asarray(PROTOTYPES["green"][0][:3])
    colors = ["clear", "white", "white", "red", "red", "green"]
    chroma = [grey, grey + 0.02, grey - 0.02, red, red + 0.05, green]
    assert palette_rivals(colors, chroma, [True] * 6) == [None] * 6
    # a piece read without its own pixels (a cap seen through the piece beneath) takes no part
    assert palette_rivals(["red", "green"], [None, green], [True, True]) == [None, None]


def _detection(piece_id: str, color: str, pose: str = "upright", supported_by=("table",)) -> PyramidDetection:
    return PyramidDetection(piece_id=piece_id, color=color, size="medium", pose=pose, center_px=(0.0, 0.0),
                            center_mm=(0.0, 0.0), apex_px=(0.0, 0.0), outline_px=((0.0, 0.0), (1.0, 0.0), (0.0, 1.0)),
                            axis_tilt_deg=0.0, confidence=0.9, flagged=False, supported_by=supported_by)


def test_the_detector_flags_the_rival_and_the_piece_resting_on_it():
    yellows = _yellows(5)
    edge = _orange_read_yellow_edge(yellows)
    dets = [_detection(f"p{k + 1}", "yellow") for k in range(5)]
    dets += [_detection("p6", "orange"), _detection("p7", "red", "nested", ("p6",))]
    out = _flag_palette_rivals(dets, [*yellows, edge, None])
    assert [d.flagged for d in out] == [False] * 5 + [True, True]
    assert "reads like this photo's yellow pieces" in out[5].reasons[-1]
    assert out[6].reasons == ("rests on p6, itself flagged",)
