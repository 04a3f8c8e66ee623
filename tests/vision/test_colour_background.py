"""The coarse background's second median pass, recomputed only around the replaced cells, is the whole pass."""

import numpy as np
import pytest

from vision.colour import _median_again, _median_image

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
