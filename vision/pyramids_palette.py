"""One photo's pieces of one plastic read alike: a piece that reads like another colour's pieces is flagged.

The colour descriptor's chromaticity (``pyramids_color.color_descriptor``, the first three values) is set by the
plastic, and, for the whole photo alike, by its light, its table and its camera: pieces of one plastic in one
photo cluster more tightly than the prototypes, which pool every photo. A verdict whose chromaticity lies closer
to the settled (unflagged) pieces of another colour of the same photo than to the settled pieces of its own
colour (or, when it is the only one, to its plastic's prototype) is not clearly decided: the photo itself holds
the rival plastic, read so by pieces nearby in colour. Opaque black and white and clear plastic share a grey
chromaticity and are told apart by lightness and the table's grain, not here: a pair of them is not compared.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vision.pyramids_color import GREY_PLASTICS, PROTOTYPES

#: spread of the descriptor's chromaticity (R, G, B of the log ratio minus their mean) among pieces of one plastic
#: in one photo: the standard deviation of each piece's residual from its photo's mean residual against its true
#: plastic's prototype, 43 development images (committed samples and seed 7007), 477 pieces
WITHIN_PHOTO_CHROMA_SD = (0.21, 0.10, 0.17)


def _distance(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.sqrt(np.sum(((a - b) / np.asarray(WITHIN_PHOTO_CHROMA_SD)) ** 2)))


def palette_rivals(
    colors: Sequence[str], chroma: Sequence[np.ndarray | None], settled: Sequence[bool]
) -> list[tuple[str, float, float] | None]:
    """For each piece, the colour of the photo's settled pieces it reads more like than its own, or None.

    ``chroma`` is each piece's descriptor chromaticity (None when its own pixels were not read alone), ``settled``
    whether its verdict stands unflagged (only settled pieces serve as a colour's reference). Two pieces that read
    like each other's colours are both flagged: one of them is wrong, and the photo does not say which (leaving the
    one whose colour more of the photo's pieces share caught 2 of 11 silent wrong colours on the development
    images, not 5). A rival comes with the piece's distances (in within-photo spreads) to the rival's and to its
    own colour's reference.

    >>> rivals = palette_rivals(["yellow", "yellow", "orange"],
    ...                         [np.array([0.8, 0.1, -0.9]), np.array([0.75, 0.1, -0.85]),
    ...                          np.array([0.66, 0.0, -0.65])], [True, True, True])
    >>> rivals[2][0], rivals[0]
    ('yellow', None)
    """
    members: dict[str, list[int]] = {}
    for i, (c, x, ok) in enumerate(zip(colors, chroma, settled)):
        if x is not None and ok:
            members.setdefault(c, []).append(i)
    refs = {c: np.median(np.array([chroma[i] for i in idx]), axis=0) for c, idx in members.items()}
    out: list[tuple[str, float, float] | None] = []
    for i, (a, x) in enumerate(zip(colors, chroma)):
        if x is None:
            out.append(None)
            continue
        own = [chroma[j] for j in members.get(a, []) if j != i]
        ref_a = np.median(np.array(own), axis=0) if own else np.asarray(PROTOTYPES[a][0][:3])
        d_own = _distance(x, ref_a)
        best = None
        for b, ref_b in refs.items():
            if b == a or (a in GREY_PLASTICS and b in GREY_PLASTICS):
                continue
            d_b = _distance(x, ref_b)
            if d_b < d_own and (best is None or d_b < best[1]):
                best = (b, d_b, d_own)
        out.append(best)
    return out
