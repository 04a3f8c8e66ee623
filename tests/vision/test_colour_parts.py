"""Shortcuts in the colour scene give what the plain operations give: the coarse background's second median pass
recomputed only around the replaced cells, the per-class opening taken from the label image at once, and medians of
8-bit samples read from their counts."""

import cv2
import numpy as np
import pytest

from vision.colour import (_local_max_at, _median_again, _median_image, _opened_classes, _opened_classes_at, lab_rows,
                           median_u8_scaled)

MEDIAN_CELLS = 9


@pytest.mark.parametrize("share", [0.001, 0.01, 0.1])
def test_patched_median_equals_whole_median(share):
    rng = np.random.default_rng(11)
    for _ in range(20):
        h, w = int(rng.integers(12, 120)), int(rng.integers(12, 240))
        img = rng.random((h, w, 3)).astype(np.float32)
        ref = _median_image(img, MEDIAN_CELLS)
        changed = rng.random((h, w)) < share
        changed[0, 0] = changed[-1, -1] = changed[h // 2, 0] = True  # corners and an edge: replicated borders
        img[changed] = rng.random((int(changed.sum()), 3)).astype(np.float32)
        np.testing.assert_array_equal(_median_again(img, ref, changed, MEDIAN_CELLS),
                                      _median_image(img, MEDIAN_CELLS))


@pytest.mark.parametrize("spread", [4, 256])
def test_median_from_counts_equals_numpy_median(spread):
    rng = np.random.default_rng(spread)
    for n in [*range(1, 40), 1000, 1001, 14321]:  # odd and even counts: the two middle samples' mean
        v = rng.integers(128 - spread // 2, 128 + spread // 2, (n, 3)).astype(np.uint8)
        want = np.median(v.astype(np.float32) / 255.0, axis=0)
        got = median_u8_scaled(v)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        assert median_u8_scaled(v[:, 1]) == want[1]


@pytest.mark.parametrize("kernel_px", [3, 5])
def test_opening_of_every_class_at_once_equals_one_opening_per_class(kernel_px):
    rng = np.random.default_rng(4)
    kern = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (kernel_px, kernel_px))
    for trial in range(60):
        h, w = int(rng.integers(1, 40)), int(rng.integers(1, 40))
        labels = rng.choice(6, size=(h, w), p=[0.3, 0.3, 0.2, 0.1, 0.05, 0.05]).astype(np.uint8)
        if trial % 2:  # blobs several pixels wide, as winks are, beside speckle
            labels = cv2.resize(labels, (3 * w, 3 * h), interpolation=cv2.INTER_NEAREST)
        want = np.zeros(labels.shape, bool)
        for k in range(1, 5):
            want |= cv2.morphologyEx((labels == k).astype(np.uint8), cv2.MORPH_OPEN, kern).astype(bool)
        got = _opened_classes(labels, (labels >= 1) & (labels <= 4), kern)
        np.testing.assert_array_equal(got, want)


def test_opening_gathered_at_the_foreground_equals_the_opening_of_its_bounding_box():
    rng = np.random.default_rng(6)
    kern = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (3, 3))
    for trial in range(60):
        h, w = int(rng.integers(1, 30)), int(rng.integers(1, 30))
        blob = rng.choice(6, size=(h, w), p=[0.3, 0.3, 0.2, 0.1, 0.05, 0.05]).astype(np.uint8)
        if trial % 2:
            blob = cv2.resize(blob, (3 * w, 3 * h), interpolation=cv2.INTER_NEAREST)
        labels = np.zeros((blob.shape[0] + 9, blob.shape[1] + 7), np.uint8)
        top, left = (0, 0) if trial % 3 == 0 else (4, 3)  # the foreground touching the image's corner, or inside
        labels[top:top + blob.shape[0], left:left + blob.shape[1]] = blob
        idx = np.flatnonzero(labels)
        if not len(idx):
            continue
        x, y, bw, bh = cv2.boundingRect((labels > 0).astype(np.uint8))
        sub = labels[y:y + bh, x:x + bw]
        want = np.zeros(sub.shape, bool)
        for k in range(1, 5):  # OpenCV's opening of each class on the box (its outside counted as the class)
            want |= cv2.morphologyEx((sub == k).astype(np.uint8), cv2.MORPH_OPEN, kern).astype(bool)
        full = np.zeros(labels.shape, bool)
        full[y:y + bh, x:x + bw] = want
        classed = (labels.reshape(-1)[idx] >= 1) & (labels.reshape(-1)[idx] <= 4)
        got = _opened_classes_at(labels, idx)
        np.testing.assert_array_equal(got[classed], full.reshape(-1)[idx][classed])


def test_lab_of_colours_in_one_row_equals_lab_of_a_column_of_pixels():
    rng = np.random.default_rng(7)
    bgr = np.concatenate([rng.random((997, 3)), np.eye(3), np.zeros((1, 3)), np.ones((1, 3))]).astype(np.float32)
    want = cv2.cvtColor(bgr.reshape(-1, 1, 3), cv2.COLOR_BGR2Lab).reshape(-1, 3)
    np.testing.assert_array_equal(lab_rows(bgr), want)
    assert want[-1, 0] == pytest.approx(100.0, abs=0.01) and want[-2, 0] == pytest.approx(0.0, abs=0.01)


def test_blend_line_places_a_rims_mixed_pixels_on_the_blend_and_a_third_colour_off_it():
    from vision.colour import blend_line
    felt = np.array([[0.2, 0.5, 0.2]] * 3)
    red = np.array([0.1, 0.1, 0.8])
    samples = np.array([0.3 * red + 0.7 * felt[0],          # a rim pixel: 30 % wink
                        [0.1, 0.8, 0.8],                    # a third colour
                        1.5 * red - 0.5 * felt[0]])         # beyond the wink's own colour
    a, off, vv = blend_line(samples, felt, red)
    assert a[0] == pytest.approx(0.3) and off[0] == pytest.approx(0.0, abs=1e-12)
    assert off[1] > 0.3 * np.sqrt(vv[1])
    assert a[2] == pytest.approx(1.5) and off[2] == pytest.approx(0.0, abs=1e-12)
    a_s, off_s, _ = blend_line(samples, felt, red, segment=True)
    assert a_s[2] == 1.0 and off_s[2] == pytest.approx(0.5 * np.sqrt(vv[2]))  # off the segment's end


def test_local_max_at_pixels_is_the_dilation_there():
    rng = np.random.default_rng(5)
    img = np.where(rng.random((60, 90)) < 0.2, rng.random((60, 90)) * 400, 0).astype(np.float32)
    kern = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (7, 7))
    want = cv2.dilate(img, kern).reshape(-1)
    inner = np.array([r * 90 + c for r in range(3, 57) for c in range(3, 87) if img[r, c] > 0])
    np.testing.assert_array_equal(_local_max_at(img, inner, kern), want[inner])  # gathered
    edge = np.flatnonzero(img)  # pixels by the border: the whole dilation
    np.testing.assert_array_equal(_local_max_at(img, edge, kern), want[edge])
