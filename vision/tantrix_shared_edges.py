"""A board tile's washed edges read from its neighbours' side of the shared edge (RULES.md 2.1; issue 10).

A link crosses a shared edge at its midpoint, so its colour shows twice: in this tile's band just inside the edge
and in the neighbour's band just across it, a link's width apart at least (the two bands' samples lie 0.13 U or
more either side of the edge). A lamp's streak or a clipped highlight can wash one side and spare the other. So an
edge whose own pixels name no colour takes the colour the neighbour's pixels show on its side — what the board
shows there, not what its rules would want.

This assumes the shared edge matches, which a position under judgement may break (TX A1). A face is therefore read
this way only when every edge it cannot see is seen from the other side: the faces consistent with a tile's seen
edges differ on two unseen edges at least (each colour lies on exactly two edges), so a mismatch at one of them
contradicts the neighbour at the other and no face clears the margin; the tile stays unread. With an unseen edge
on an open side or beside another unseen edge, nothing is read.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from geometry.tantrix import EDGE_COUNT, Hex, neighbour, opposite_edge
from vision.tantrix_links import ColourModel, FaceRead, LinkParams, read_faces

# An edge needs seeing from its neighbour only when a tile has at least this many edges unseen: five seen edges
# already fix the sixth colour (each colour lies on exactly two edges), and the usual reading covers that.
MIN_UNSEEN_EDGES = 2


def read_from_neighbour_sides(faces: Sequence[FaceRead], hexes: Sequence[Hex | None], edge_lab: np.ndarray,
                              model: ColourModel, params: LinkParams) -> list[FaceRead]:
    """Unread board tiles (``hexes[i]`` not None) read with each unseen edge's colour taken from the neighbour's
    band across it, when every unseen edge has a neighbour that sees it, the face clears the usual margin and its
    number is read nowhere else. Edge classes stay what the tile's own pixels show (None where unseen)."""
    at = {hx: i for i, hx in enumerate(hexes) if hx is not None}
    taken = {f.number for f in faces if f.number is not None}
    out = list(faces)
    for i, f in enumerate(faces):
        if f.number is not None or hexes[i] is None:
            continue
        unseen = [k for k in range(EDGE_COUNT) if f.edge_classes[k] is None]
        if len(unseen) < MIN_UNSEEN_EDGES:
            continue
        lab_i = edge_lab[i].copy()
        for k in unseen:
            j = at.get(neighbour(hexes[i], k))
            if j is None or faces[j].edge_classes[opposite_edge(k)] is None:
                break
            lab_i[k] = edge_lab[j, opposite_edge(k)]
        else:
            g = read_faces(lab_i[None], model, params, exclude=frozenset(taken))[0]
            if g.number is not None:
                out[i] = FaceRead(g.number, g.rotation, f.edge_classes, g.margin, g.mean_cost, False)
                taken.add(g.number)
    return out


__all__ = ["MIN_UNSEEN_EDGES", "read_from_neighbour_sides"]
