"""The crescent search's disc counts (vision/crescents._disc_counts): each the boolean count it stands for."""

import numpy as np

from vision.crescents import _disc_counts


def test_disc_counts_are_the_samples_of_each_set_inside_each_disc():
    # a crescent's samples on the 0.5 mm raster, candidate centres on another raster's offset, both float32 as
    # the search keeps them: per centre, the count of each set's samples inside the disc, to the sample
    rng = np.random.default_rng(2)
    g = np.arange(-20.0, 20.01, 0.5)
    raster = np.column_stack([a.ravel() for a in np.meshgrid(g, g)])
    for r in (8.0, 11.0):
        samples = (np.array([3.25, -7.75]) + raster[rng.random(len(raster)) < 0.6]).astype(np.float32)
        centres = (np.array([1.1, 0.3]) + raster[np.hypot(raster[:, 0], raster[:, 1]) <= r]).astype(np.float32)
        sets = [rng.random(len(samples)) < p for p in (0.3, 0.6, 0.05)]
        dx = samples[None, :, 0] - centres[:, None, 0]
        dy = samples[None, :, 1] - centres[:, None, 1]
        inside = dx * dx + dy * dy < r * r
        want = np.stack([(inside & s[None, :]).sum(axis=1) for s in sets], axis=1)
        got = _disc_counts(samples, centres, r, sets)
        assert got.dtype.kind == "i" and np.array_equal(got, want)
