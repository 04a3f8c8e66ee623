"""Dominoes vision: pip reading on drawn halves, tiles found and read in renders and in real photographs.

A tile it cannot read is flagged, never guessed: on every image here, a misread tile fails the test.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from geometry.dominoes import pip_layout
from vision.dominoes import DominoDetectorParams, DominoVisionError, detect_dominoes
from vision.dominoes_pips import face_colour_lab, feature_mask, read_half

REAL = Path(__file__).resolve().parents[3] / "shared" / "real_images" / "dominoes"
LABELS = REAL / "labels.json"
W = 96


def _half(pips: int, *, jitter: float = 0.0, seed: int = 0, diameter_ratio: float = 0.14) -> np.ndarray:
    """A feature mask of one half (end at row 0, bar at the last rows) with standard pips."""
    rng = np.random.default_rng(seed)
    m = np.zeros((W, W), np.uint8)
    for u, v in pip_layout(pips):
        c = (round((u + rng.normal(0, jitter)) * W), round((v + rng.normal(0, jitter)) * W))
        cv2.circle(m, c, round(diameter_ratio * W / 2), 255, -1)
    cv2.line(m, (int(0.15 * W), W - 3), (int(0.85 * W), W - 3), 255, 4)  # the centre bar
    return m


@pytest.mark.parametrize("pips", range(13))
def test_read_half_counts_every_standard_pattern(pips):
    r = read_half(_half(pips, jitter=0.015, seed=pips))
    assert r.pips == pips, r.reason


def test_read_half_refuses_off_grid_blobs_and_too_many_for_the_set():
    m = np.zeros((W, W), np.uint8)
    for c in ((30, 30), (40, 62)):  # two blobs, not on the diagonal of a two
        cv2.circle(m, c, 7, 255, -1)
    r = read_half(m)
    assert r.pips is None and "off the standard" in r.reason
    nine = read_half(_half(9), max_pips=6)
    assert nine.pips is None and "exceeds the set's 6" in nine.reason


def test_read_half_refuses_a_smudge_the_size_of_several_pips():
    m = _half(2)
    cv2.circle(m, (48, 48), 20, 255, -1)
    r = read_half(m)
    assert r.pips is None and "not a pip" in r.reason


def _glared_half(pips: int, glare_uv: tuple[float, float], pip_bgr=(40, 185, 225)) -> np.ndarray:
    """An ivory half (W x W, BGR) with coloured pips and a lamp's specular highlight centred on ``glare_uv``:
    light added (a quarter of full white at its peak), clipped at white, as on a glossy tile."""
    img = np.zeros((W, W, 3), np.float32)
    img[:] = (200, 226, 236)
    for u, v in pip_layout(pips):
        cv2.circle(img, (round(u * W), round(v * W)), round(0.07 * W), pip_bgr, -1, cv2.LINE_AA)
    yy, xx = np.mgrid[0:W, 0:W]
    glare = 0.25 * np.exp(-((xx - glare_uv[0] * W) ** 2 + (yy - glare_uv[1] * W) ** 2) / (2 * (0.2 * W) ** 2))
    img = img + 255 * glare[..., None]
    return cv2.GaussianBlur(np.clip(img, 0, 255).astype(np.uint8), (3, 3), 0)


@pytest.mark.parametrize(("pips", "glare_uv"), [(5, (0.25, 0.25)), (6, (0.25, 0.5)), (9, (0.75, 0.5))])
def test_coloured_pips_under_glare_are_counted_at_their_size(pips, glare_uv):
    # glare lightens a coloured pip past the face but adds no colour: it is still paint, and its whole disc
    # (before: the pip under the highlight was lost and the half flagged)
    half = cv2.cvtColor(_glared_half(pips, glare_uv), cv2.COLOR_BGR2LAB)
    face = face_colour_lab(half)
    r = read_half(feature_mask(half, face, dark_face=False))
    assert r.pips == pips, r.reason


def _washed_middle_half(pips: int, glare_peak: float = 0.7) -> np.ndarray:
    """An ivory half with coloured pips under a strong highlight on its middle: the light there is 70 % the lamp's
    white (mixed, not added; ``glare_peak``), so the middle pip keeps only a trace of its colour."""
    img = np.zeros((W, W, 3), np.float32)
    img[:] = (200, 226, 236)
    for u, v in pip_layout(pips):
        cv2.circle(img, (round(u * W), round(v * W)), round(0.07 * W), (40, 185, 225), -1, cv2.LINE_AA)
    yy, xx = np.mgrid[0:W, 0:W]
    glare = glare_peak * np.exp(-((xx - 0.5 * W) ** 2 + (yy - 0.5 * W) ** 2) / (2 * (0.2 * W) ** 2))[..., None]
    img = img * (1 - glare) + 255 * glare
    return cv2.GaussianBlur(np.clip(img, 0, 255).astype(np.uint8), (3, 3), 0)


@pytest.mark.parametrize("pips", [4, 5, 6, 7])
def test_a_pip_washed_out_at_the_middle_is_flagged_not_dropped(pips):
    # 5 and 4 differ only by the middle pip, where the highlight sits: the trace of it left must stop a 4 (and
    # a smooth highlight on a true 4 must not)
    from vision.dominoes_pips import read_tile

    half = _washed_middle_half(pips)
    blank = np.full((W, W, 3), (200, 226, 236), np.uint8)
    tile = np.vstack([half, blank])
    quad = np.float32([[0, 0], [W - 1, 0], [W - 1, 2 * W - 1], [0, 2 * W - 1]])
    a, _b, _ = read_tile(tile, quad, 0.5)
    # the odd count is read (the pip's paint still takes light from the face beside it) or flagged, never even
    assert a.pips in ((pips,) if pips % 2 == 0 else (pips, None)), a.reason


def _black_half_under_glare(pips: int, glare_peak: float) -> np.ndarray:
    """A black half (W x W, BGR) with white pips and a broad lamp highlight over it (added light, clipped)."""
    img = np.full((W, W, 3), 38, np.float32)
    for u, v in pip_layout(pips):
        cv2.circle(img, (round(u * W), round(v * W)), round(0.09 * W), (245, 245, 245), -1, cv2.LINE_AA)
    yy, xx = np.mgrid[0:W, 0:W]
    img += glare_peak * np.exp(-((xx - 0.5 * W) ** 2 + (yy - 0.5 * W) ** 2) / (2 * (0.35 * W) ** 2))[..., None]
    return cv2.GaussianBlur(np.clip(img, 0, 255).astype(np.uint8), (3, 3), 0)


def test_black_face_under_glare_keeps_its_white_pips():
    # a highlight over most of a black half lifts its typical lightness; the paint is still far the lightest
    half = cv2.cvtColor(_black_half_under_glare(5, 150.0), cv2.COLOR_BGR2LAB)
    face = face_colour_lab(cv2.cvtColor(_black_half_under_glare(0, 0.0), cv2.COLOR_BGR2LAB))
    r = read_half(feature_mask(half, face, dark_face=True))
    assert r.pips == 5, r.reason


def test_black_tile_with_many_pips_under_glare_is_black():
    # an 8-8 under a highlight: white pips and glare lift the median above the line, the face is still black
    tile = cv2.cvtColor(np.vstack([_black_half_under_glare(8, 150.0), _black_half_under_glare(8, 0.0)]),
                        cv2.COLOR_BGR2LAB)
    assert face_colour_lab(tile)[0] < 100


def test_bad_frames_are_named_errors():
    with pytest.raises(DominoVisionError, match="too small"):
        detect_dominoes(np.zeros((20, 20, 3), np.uint8))
    with pytest.raises(DominoVisionError, match="BGR image"):
        detect_dominoes(np.zeros((100, 100), np.uint8))
    with pytest.raises(DominoVisionError, match="max_pips"):
        DominoDetectorParams(max_pips=7)


def test_empty_table_has_no_tiles():
    rng = np.random.default_rng(5)
    frame = np.clip(rng.normal(120, 6, (480, 640, 3)), 0, 255).astype(np.uint8)
    assert detect_dominoes(frame) == ()


# --- renders -------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def renders(tmp_path_factory):
    from simulation.dominoes import render_dominoes_item

    d = tmp_path_factory.mktemp("dominoes")
    return [render_dominoes_item(d, seed=4242, index=i, size_wh_px=(1280, 960)) for i in range(3)]


def _inside(poly, pt) -> bool:
    return cv2.pointPolygonTest(np.float32(poly).reshape(-1, 1, 2), (float(pt[0]), float(pt[1])), False) >= 0


def test_renders_are_read_or_flagged_never_misread(renders):
    face_up = exact = 0
    for path in renders:
        truth = json.loads(path.with_suffix(".json").read_text())
        found = detect_dominoes(cv2.imread(str(path)))
        for t in truth["tiles"]:
            hits = [d for d in found if _inside(t["outline_px"], d.center_px)]
            if not t["face_up"]:
                assert all(d.pips is None for d in hits), f"{path.name} {t['id']}: pips read on a face-down tile"
                continue
            face_up += 1
            if hits and hits[0].pips is not None:
                assert sorted(hits[0].pips) == sorted(t["pips"]), f"{path.name} {t['id']}: misread"
                exact += 1
    assert face_up >= 20
    assert exact >= 0.75 * face_up


def test_tile_outline_matches_truth_within_a_few_pixels(renders):
    truth = json.loads(renders[0].with_suffix(".json").read_text())
    found = [d for d in detect_dominoes(cv2.imread(str(renders[0]))) if d.pips is not None]
    assert found
    errs = []
    for d in found:
        t = next(t for t in truth["tiles"] if _inside(t["outline_px"], d.center_px))
        c_truth = np.mean(t["outline_px"], axis=0)
        errs.append(float(np.linalg.norm(np.asarray(d.center_px) - c_truth)))
        w_truth = np.linalg.norm(np.subtract(t["outline_px"][1], t["outline_px"][0]))
        assert d.width_px == pytest.approx(w_truth, rel=0.12)
    assert float(np.median(errs)) < 3.0


# --- real photographs (development only: ../shared beside the checkout) --------------------------------------


def _real(name):
    labels = json.loads(LABELS.read_text())[name]
    found = detect_dominoes(cv2.imread(str(REAL / name)))
    out = []
    for t in labels["tiles"]:
        x0, y0, x1, y1 = t["bbox"]
        hits = [d for d in found if x0 <= d.center_px[0] <= x1 and y0 <= d.center_px[1] <= y1]
        out.append((t["pips"], hits))
    return out


@pytest.mark.skipif(not LABELS.exists(), reason="../shared/real_images is not beside the checkout")
@pytest.mark.parametrize("name", ["pd_single_img_0350.jpg", "pd_single_img_0354.jpg", "pd_single_img_0359.jpg"])
def test_real_single_tiles_with_coloured_pips_are_read(name):
    ((pips, hits),) = _real(name)
    assert len(hits) == 1 and hits[0].pips is not None
    assert sorted(hits[0].pips) == sorted(pips)


@pytest.mark.skipif(not LABELS.exists(), reason="../shared/real_images is not beside the checkout")
def test_real_layout_photo_reads_nearly_every_tile_and_misreads_none():
    rows = _real("pd_vintage_game_night.jpg")
    exact = 0
    for pips, hits in rows:
        read = [d for d in hits if d.pips is not None]
        for d in read:
            assert sorted(d.pips) == sorted(pips), f"{pips} misread as {d.pips}"
        exact += bool(read)
    assert exact >= 10, f"only {exact} of {len(rows)} tiles read"


@pytest.mark.skipif(not LABELS.exists(), reason="../shared/real_images is not beside the checkout")
def test_real_oblique_photo_reads_every_labelled_tile():
    # seen at 30-40 degrees: tiles pointing away are foreshortened and show their near side face, three of them
    # in a block of touching tiles; each is placed on its bar in the plane of the read tiles and read there
    for pips, hits in _real("donimoes_index_hero.jpg"):
        assert len(hits) == 1, f"{pips}: {len(hits)} detections"
        assert hits[0].pips is not None and sorted(hits[0].pips) == sorted(pips), f"{pips} read as {hits[0].pips}"


def _black_half_with_glare_spot(pips: int, glare_peak: float = 0.0, glare_sigma: float = 0.13) -> np.ndarray:
    """A black half (W x W, BGR, end at row 0, bar at the last rows) with crisp white pips of the set's size and
    a round specular patch (added light, Gaussian falloff of ``glare_sigma`` of the width) at its middle."""
    img = np.full((W, W, 3), 38, np.float32)
    for u, v in pip_layout(pips):
        cv2.circle(img, (round(u * W), round(v * W)), round(0.065 * W), (245, 245, 245), -1, cv2.LINE_AA)
    yy, xx = np.mgrid[0:W, 0:W]
    lobe = np.exp(-((xx - 0.5 * W) ** 2 + (yy - 0.5 * W) ** 2) / (2 * (glare_sigma * W) ** 2))
    img += glare_peak * lobe[..., None]
    cv2.line(img, (int(0.15 * W), W - 2), (int(0.85 * W), W - 2), (235, 235, 235), 3)  # the centre bar
    return cv2.GaussianBlur(np.clip(img, 0, 255).astype(np.uint8), (5, 5), 0)


def _black_tile(half_a: np.ndarray, half_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    tile = np.vstack([half_a, half_b[::-1, ::-1]])  # half b seen from its own end
    return tile, np.float32([[0, 0], [W - 1, 0], [W - 1, 2 * W - 1], [0, 2 * W - 1]])


@pytest.mark.parametrize("glare_sigma", [0.1, 0.13, 0.16])
def test_glare_spot_on_a_black_blank_is_flagged_not_read_as_one(glare_sigma):
    # the 0-5 of seed 2468 read 1-5: the lamp's round highlight in the middle of the blank half is lighter than
    # the face and its core passes for a white pip. In the tile's plane it is twice as broad as the tile's pips at
    # half its contrast, with an edge several times softer: flagged, never read as 1
    from vision.dominoes_pips import read_tile

    tile, quad = _black_tile(_black_half_with_glare_spot(0, 150.0, glare_sigma), _black_half_with_glare_spot(5))
    a, b, _ = read_tile(tile, quad, 0.5)
    assert a.pips is None and "not a pip" in a.reason, (a.pips, a.reason)
    assert b.pips == 5, b.reason
    # with no other pip on the tile (a 0-0), broader than any set's pip and softer than the camera's blur
    tile, quad = _black_tile(_black_half_with_glare_spot(0, 150.0, glare_sigma), _black_half_with_glare_spot(0))
    a, b, _ = read_tile(tile, quad, 0.5)
    assert a.pips is None and "not a pip" in a.reason, (a.pips, a.reason)
    assert b.pips == 0, b.reason


@pytest.mark.parametrize(("other", "glare_peak"), [(5, 0.0), (0, 0.0), (1, 0.0), (5, 100.0)])
def test_a_real_one_on_a_black_tile_is_read_one(other, glare_peak):
    # a real pip is as crisp as the tile's others, even on the pedestal of a highlight (dm_9001_044's 1-1)
    from vision.dominoes_pips import read_tile

    tile, quad = _black_tile(_black_half_with_glare_spot(1, glare_peak, 0.16), _black_half_with_glare_spot(other))
    a, b, _ = read_tile(tile, quad, 0.5)
    assert (a.pips, b.pips) == (1, other), (a.reason, b.reason)


def test_a_tile_whose_bar_glare_shortened_is_placed_along_the_bar_and_read(tmp_path):
    # seed 777's photo 34: a lamp's highlight on the 4 half of a 12-4 washes out the lower part of its centre bar;
    # the stroke left is a third of the width off the tile's middle, so a rectangle laid on the stroke's centre
    # reads pips on its outline and the tile was missed. Its middle lies somewhere along the unseen part of the bar.
    from simulation.dominoes import render_dominoes_item

    path = render_dominoes_item(tmp_path, seed=777, index=34, size_wh_px=(1280, 960))
    truth = json.loads(path.with_suffix(".json").read_text())
    tile = next(t for t in truth["tiles"] if sorted(t["pips"]) == [4, 12])
    found = [d for d in detect_dominoes(cv2.imread(str(path))) if _inside(tile["outline_px"], d.center_px)]
    assert len(found) == 1
    assert found[0].pips is not None and sorted(found[0].pips) == [4, 12]
    centre = np.mean(np.asarray(tile["outline_px"], float), axis=0)
    assert np.linalg.norm(np.asarray(found[0].center_px) - centre) < 0.1 * found[0].width_px


def test_a_blank_blank_with_a_spinner_seen_obliquely_is_placed_on_its_clear_outline(tmp_path):
    # seed 777's photo 26: a 0-0 in a hand, its spinner's stud stopping the walks; placed on its bar, it has no pips
    # to vouch for it, but the set's rectangle there meets the tile's edge on every side (grain does not)
    from simulation.dominoes import render_dominoes_item

    path = render_dominoes_item(tmp_path, seed=777, index=26, size_wh_px=(1280, 960))
    truth = json.loads(path.with_suffix(".json").read_text())
    tile = next(t for t in truth["tiles"] if t["face_up"] and list(t["pips"]) == [0, 0])
    found = detect_dominoes(cv2.imread(str(path)))
    hits = [d for d in found if _inside(tile["outline_px"], d.center_px)]
    assert len(hits) == 1 and hits[0].pips == (0, 0)
    # and no blank-blank anywhere else in the photo
    assert [d for d in found if d.pips == (0, 0)] == hits


@pytest.mark.parametrize("index", [3, 27])
def test_a_face_down_tile_beside_a_hand_is_found_as_a_plain_back(tmp_path, index):
    # seed 777's photos 3 (an ivory back between two hand tiles) and 27 (a black back at the end of a hand): the
    # face-coloured rectangle runs along the back's rounded corners and shaded edge; read there they look like pips
    # cut by the outline, so the back was taken for a marked tile and missed. Read inset, it is a plain back.
    from simulation.dominoes import render_dominoes_item

    path = render_dominoes_item(tmp_path, seed=777, index=index, size_wh_px=(1280, 960))
    truth = json.loads(path.with_suffix(".json").read_text())
    found = detect_dominoes(cv2.imread(str(path)))
    backs = [d for d in found if not d.face_up]
    down = [t for t in truth["tiles"] if not t["face_up"]]
    assert down
    for t in down:
        assert any(_inside(t["outline_px"], d.center_px) for d in backs), f"{t['id']} face down, not found"
    for d in backs:  # every back found is a face-down tile
        assert any(_inside(t["outline_px"], d.center_px) for t in down)


@pytest.mark.parametrize("offset", [0.0, 0.05])
@pytest.mark.parametrize("pips", [0, 1])
def test_a_lone_pip_washed_out_at_the_middle_stops_a_blank(pips, offset):
    # a blank and a 1 differ only by the middle pip (seed 3131's 0-1 under a highlight read 0-0: the lamp's light
    # half its white there): a trace of it left stops the blank, even read from an outline 5 % of the width off
    # the tile; a smooth highlight alone does not
    from vision.dominoes_pips import read_tile

    tile = np.vstack([_washed_middle_half(pips, 0.5), np.full((W, W, 3), (200, 226, 236), np.uint8)])
    tile = cv2.copyMakeBorder(tile, 0, 0, W // 4, W // 4, cv2.BORDER_REPLICATE)
    x0 = W // 4 + offset * W
    quad = np.float32([[x0, 0], [x0 + W - 1, 0], [x0 + W - 1, 2 * W - 1], [x0, 2 * W - 1]])
    a, b, _ = read_tile(tile, quad, 0.5)
    assert b.pips == 0
    assert a.pips in ((0,) if pips == 0 else (1, None)), a.reason
