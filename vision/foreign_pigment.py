"""A wink's disc over another colour's pigment that no found wink explains: the disc is misplaced or misread.

A wink is opaque: where its footprint shows, the picture shows its own colour (or, at its rim and shading, a
neutral). The part of a disc that no other found wink's footprint covers can be hidden by no found wink, so a
pigment of another colour there belongs to a wink the search missed, lying over this one, or says this disc is not
where it was put. The size read from an arc (``vision.arc_size``) moves a flagged wink to the centre of the circle
through the arc it saw; in a steep pile the arc may be another wink's rim. In tw_6363_001 yellow-S1 (tilted 59 deg,
its outline an ellipse whose minor axis is half its diameter) was found at its place, 0.5 mm off, as a small wink;
its arc read took the rim of the red large beside it (missed), and moved it 6.2 mm onto that wink as a yellow large:
the new disc's uncovered part showed 26 % red and green pigment against 5 % at its place, and the order read on it
claimed the red pair the wrong way. Such a move is refused: the wink keeps its place and its flagged size; and
where one colour makes most of that pigment, the arc is the rim of a wink of that colour, added where the arc's
circle lies (red-L2, 0.3 mm off), its size flagged and its orders left undecided (no outline of it is fitted: read
with the rim cues, red-L1 was claimed over it at 1.0, the wrong way).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vision.colour import COLOR_NAMES
from vision.ortho import OrthoGrid
from vision.winks import RADII_MM, WinkCandidate

#: Step of the plan grid a disc is sampled on (the orthophoto's own step is 1.25 mm).
_SAMPLE_STEP_MM = 0.5


@dataclass(frozen=True, slots=True)
class ForeignPigmentParams:
    """How much unexplained pigment of another colour a re-read disc may take on."""

    max_foreign: float = 0.15  # share of the disc's uncovered part another colour may show (a blurred rim: 0.05)
    min_gain: float = 0.10  # ... and no more than this above what the disc showed where it was
    owner_size_confidence: float = 0.6  # the size of the wink whose rim the arc was: read from the arc alone
    owner_confidence: float = 0.9  # its presence: inferred from an arc of its rim and its pigment inside it
    owner_order_confidence: float = 0.5  # its orders: undecided (no outline of it fitted, nor posed on one)


def foreign_shares(center_mm: np.ndarray, radius_mm: float, color: str, others: list[WinkCandidate],
                   labels: np.ndarray, grid: OrthoGrid) -> dict[str, float]:
    """Share of the disc's part that no other wink's footprint covers labelled with each other wink colour."""
    r = float(radius_mm)
    g = np.mgrid[-r:r + 1e-6:_SAMPLE_STEP_MM, -r:r + 1e-6:_SAMPLE_STEP_MM].reshape(2, -1).T
    g = g[(g ** 2).sum(axis=1) <= r * r] + np.asarray(center_mm, float)
    free = np.ones(len(g), bool)
    for o in others:
        free &= ((g - o.center_mm) ** 2).sum(axis=1) > o.radius_mm ** 2
    cr = np.rint(grid.ortho_from_table(g[free])).astype(int)
    h, w = labels.shape
    ok = (cr[:, 0] >= 0) & (cr[:, 0] < w) & (cr[:, 1] >= 0) & (cr[:, 1] < h)
    if not ok.any():
        return {}
    lab = labels[cr[ok, 1], cr[ok, 0]]
    return {n: float((lab == k + 1).mean()) for k, n in enumerate(COLOR_NAMES) if n != color}


def foreign_share(center_mm: np.ndarray, radius_mm: float, color: str, others: list[WinkCandidate],
                  labels: np.ndarray, grid: OrthoGrid) -> float:
    """Share of the disc's part that no other wink's footprint covers labelled with another wink colour."""
    return sum(foreign_shares(center_mm, radius_mm, color, others, labels, grid).values())


def refuse_foreign_moves(moved: list[WinkCandidate], before: dict[int, tuple], winks: list[WinkCandidate],
                         labels: np.ndarray, grid: OrthoGrid, params: ForeignPigmentParams = ForeignPigmentParams()
                         ) -> tuple[list[WinkCandidate], list[WinkCandidate]]:
    """Undo the re-reads (``before``: id -> (centre, size, size_confidence, edge_offset_px, arc_sigma_mm)) that put
    a disc over another colour's unexplained pigment. Returns the moves kept and, for each refused one whose
    unexplained pigment is mostly one colour, the wink of that colour the arc is the rim of (the arc's circle, its
    size flagged): its pigment inside the arc is what no found wink explains."""
    kept, owners = [], []
    for w in moved:
        c0, s0, conf0, off0, arc0 = before[id(w)]
        others = [o for o in winks if o is not w and not o.potted]
        shares = foreign_shares(w.center_mm, w.radius_mm, w.color, others, labels, grid)
        new = sum(shares.values())
        old = foreign_share(c0, RADII_MM[s0], w.color, others, labels, grid)
        if not (new > params.max_foreign and new > old + params.min_gain):
            kept.append(w)
            continue
        colour, share = max(shares.items(), key=lambda kv: kv[1])
        if share > params.max_foreign:
            n = WinkCandidate(color=colour, size=w.size, center_mm=w.center_mm.copy(), votes=share,
                              size_confidence=min(w.size_confidence, params.owner_size_confidence),
                              arc_sigma_mm=w.arc_sigma_mm, own_fraction=share, confidence=params.owner_confidence)
            n.score = n.votes
            owners.append(n)
        w.center_mm, w.size, w.size_confidence, w.edge_offset_px, w.arc_sigma_mm = c0, s0, conf0, off0, arc0
    return kept, owners


def leave_open(winks: list[WinkCandidate], owners: list[WinkCandidate],
               params: ForeignPigmentParams = ForeignPigmentParams()) -> None:
    """Leave every order of the winks known only from another's arc undecided."""
    ids = {o.wink_id for o in owners}
    cap = params.owner_order_confidence
    for w in winks:
        for k in list(w.order_confidence):
            if k in ids or w.wink_id in ids:
                w.order_confidence[k] = min(w.order_confidence[k], cap)
