"""The label Hough's batched votes: every mask's outline votes as it would alone."""

import numpy as np

from vision.winks import _edge_directions, _votes, _votes_of_masks

#: Votes are sums of gradient magnitudes (about one per outline pixel); the shared canvas may round the blur's
#: last bit otherwise than a mask filtered alone.
VOTE_TOL = 1e-4


def _outline_off_band(mask: np.ndarray, votable_sub: np.ndarray) -> tuple[np.ndarray, ...]:
    """The outline of a mask filtered alone, less its pixels on the unread band: what a cut blob votes with."""
    edges = _edge_directions(mask)
    keep = votable_sub[edges[0], edges[1]]
    return tuple(e[keep] for e in edges)


def _disc_mask(h: int, w: int, centre_rc: tuple[float, float], r_px: float) -> np.ndarray:
    rr, cc = np.mgrid[:h, :w]
    return (((rr - centre_rc[0]) ** 2 + (cc - centre_rc[1]) ** 2) <= r_px * r_px).astype(np.float32)


def test_batched_votes_match_each_mask_alone():
    rng = np.random.default_rng(7)
    radii_px = np.array([8.8, 6.4])
    masks, votable = [], []
    for i in range(6):
        h, w = (int(v) for v in rng.integers(34, 60, 2))
        m = _disc_mask(h, w, (rng.uniform(14, h - 14), rng.uniform(14, w - 14)), rng.uniform(5.0, 9.0))
        if i == 2:
            m += _disc_mask(h, w, (h - 3.0, w / 2), 6.0)  # a second blob at the window's edge (reflected border)
            m = np.minimum(m, 1.0)
        masks.append(m)
        if i % 2:  # a blob cut by the mat's unread band: the band's side does not vote
            v = np.ones((h, w), bool)
            v[:, : w // 3] = False
            votable.append(v)
        else:
            votable.append(None)
    masks.append(np.zeros((40, 40), np.float32))  # no outline at all
    votable.append(None)
    got = _votes_of_masks(masks, votable, radii_px)
    assert len(got) == len(masks)
    assert got[-1] is None
    for m, v, g in zip(masks[:-1], votable[:-1], got[:-1]):
        edges = _outline_off_band(m, v) if v is not None else _edge_directions(m)
        want = np.stack([_votes(m, r, edges) for r in radii_px.tolist()])
        assert g.shape == want.shape
        assert want.max() > 1.0  # the discs do vote
        np.testing.assert_allclose(g, want, atol=VOTE_TOL)
