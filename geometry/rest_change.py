"""Where the picture changed between two rest states, in table mm: the pixels' testimony about a shot.

A wink can only have moved if the picture changed where it was or where it now is. A detector re-reading a
still table may place a wink a few mm elsewhere, flip its size, lose it or report a phantom; none of that
changes the pixels. ``RestChange`` is a boolean grid over the table (cells of ``cell_mm``, run-length coded
so a game log stores it in a few numbers) of the places whose image changed between the two rest frames,
plus the changed share of the pot's opening and of the table around the mat (where a wink that left the mat
lands), all measured by the tracker from the two frames. The matcher uses it as evidence; ``None`` (no frames,
or a camera that moved so everything changed) means no evidence, never "nothing changed".

>>> c = RestChange.from_mask(np.array([[0, 0, 0], [0, 1, 0]], bool), x0_mm=0.0, y0_mm=0.0, cell_mm=10.0)
>>> c.changed_within((15.0, 15.0), 4.0), c.changed_within((5.0, 5.0), 4.0)
(True, False)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from geometry.types import GeometryError


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class RestChange:
    """Changed cells between two rest frames. Cell (row, col) covers x in [x0 + col*cell, x0 + (col+1)*cell),
    y in [y0 + row*cell, ...) mm. ``runs`` are (start, length) of changed cells in the row-major flattening."""

    x0_mm: float
    y0_mm: float
    cell_mm: float
    shape: tuple[int, int]
    runs: tuple[tuple[int, int], ...]
    #: Share of the pot's opening (its image) that changed: something went into (or out of) the cup.
    pot_changed_ratio: float | None = None
    #: Plan positions (mm) of changed blobs on the table outside the mat: where a wink that left it landed.
    off_mat_blobs_mm: tuple[tuple[float, float], ...] = ()
    _grid: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not (math.isfinite(self.cell_mm) and self.cell_mm > 0):
            raise GeometryError(f"cell_mm must be > 0, got {self.cell_mm!r}")
        ny, nx = (int(self.shape[0]), int(self.shape[1]))
        if ny <= 0 or nx <= 0:
            raise GeometryError(f"shape must be positive, got {self.shape!r}")
        flat = np.zeros(ny * nx, bool)
        for start, length in self.runs:
            if start < 0 or length < 0 or start + length > flat.size:
                raise GeometryError(f"run ({start}, {length}) is outside a {ny}x{nx} grid")
            flat[start:start + length] = True
        object.__setattr__(self, "shape", (ny, nx))
        object.__setattr__(self, "_grid", flat.reshape(ny, nx))

    @classmethod
    def from_mask(cls, mask: np.ndarray, *, x0_mm: float, y0_mm: float, cell_mm: float,
                  pot_changed_ratio: float | None = None,
                  off_mat_blobs_mm: tuple[tuple[float, float], ...] = ()) -> RestChange:
        m = np.asarray(mask, bool)
        flat = np.concatenate([[False], m.ravel(), [False]]).astype(np.int8)
        edges = np.flatnonzero(np.diff(flat))
        runs = tuple((int(a), int(b - a)) for a, b in zip(edges[::2], edges[1::2]))
        return cls(x0_mm=float(x0_mm), y0_mm=float(y0_mm), cell_mm=float(cell_mm), shape=m.shape, runs=runs,
                   pot_changed_ratio=pot_changed_ratio, off_mat_blobs_mm=tuple(off_mat_blobs_mm))

    @classmethod
    def from_discs(cls, discs_mm: tuple[tuple[float, float, float], ...], *, cell_mm: float = 2.5,
                   x0_mm: float = -1100.0, y0_mm: float = -650.0, size_mm: tuple[float, float] = (2200.0, 1300.0),
                   pot_changed_ratio: float | None = None,
                   off_mat_blobs_mm: tuple[tuple[float, float], ...] = ()) -> RestChange:
        """The evidence when exactly these (x, y, r) mm discs changed: what a truth feed knows of a shot."""
        nx, ny = int(round(size_mm[0] / cell_mm)), int(round(size_mm[1] / cell_mm))
        xs = x0_mm + (np.arange(nx) + 0.5) * cell_mm
        ys = y0_mm + (np.arange(ny) + 0.5) * cell_mm
        m = np.zeros((ny, nx), bool)
        for x, y, r in discs_mm:
            m |= (xs[None, :] - x) ** 2 + (ys[:, None] - y) ** 2 <= r ** 2
        return cls.from_mask(m, x0_mm=x0_mm, y0_mm=y0_mm, cell_mm=cell_mm, pot_changed_ratio=pot_changed_ratio,
                             off_mat_blobs_mm=off_mat_blobs_mm)

    @property
    def grid(self) -> np.ndarray:
        return self._grid

    def changed_within(self, center_mm: tuple[float, float], radius_mm: float) -> bool:
        """Whether any changed cell reaches within ``radius_mm`` of ``center_mm`` (a cell counts when its
        centre is within ``radius_mm`` plus half a cell: the cells are a coarse record, read generously)."""
        return self.changed_cells_within(center_mm, radius_mm) > 0

    def changed_cells_within(self, center_mm: tuple[float, float], radius_mm: float) -> int:
        ny, nx = self.shape
        cx, cy = float(center_mm[0]), float(center_mm[1])
        radius_mm = radius_mm + 0.5 * self.cell_mm
        c0 = max(0, int(math.floor((cx - radius_mm - self.x0_mm) / self.cell_mm)))
        c1 = min(nx, int(math.ceil((cx + radius_mm - self.x0_mm) / self.cell_mm)) + 1)
        r0 = max(0, int(math.floor((cy - radius_mm - self.y0_mm) / self.cell_mm)))
        r1 = min(ny, int(math.ceil((cy + radius_mm - self.y0_mm) / self.cell_mm)) + 1)
        if c0 >= c1 or r0 >= r1:
            return 0
        sub = self._grid[r0:r1, c0:c1]
        if not sub.any():
            return 0
        xs = self.x0_mm + (np.arange(c0, c1) + 0.5) * self.cell_mm
        ys = self.y0_mm + (np.arange(r0, r1) + 0.5) * self.cell_mm
        d2 = (xs[None, :] - cx) ** 2 + (ys[:, None] - cy) ** 2
        return int(np.count_nonzero(sub & (d2 <= radius_mm ** 2)))

    def to_dict(self) -> dict[str, Any]:
        return {"x0_mm": self.x0_mm, "y0_mm": self.y0_mm, "cell_mm": self.cell_mm, "shape": list(self.shape),
                "runs": [list(r) for r in self.runs],
                "pot_changed_ratio": None if self.pot_changed_ratio is None else round(self.pot_changed_ratio, 4),
                "off_mat_blobs_mm": [[round(x, 1), round(y, 1)] for x, y in self.off_mat_blobs_mm]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RestChange:
        try:
            return cls(x0_mm=float(d["x0_mm"]), y0_mm=float(d["y0_mm"]), cell_mm=float(d["cell_mm"]),
                       shape=(int(d["shape"][0]), int(d["shape"][1])),
                       runs=tuple((int(a), int(b)) for a, b in d.get("runs", ())),
                       pot_changed_ratio=d.get("pot_changed_ratio"),
                       off_mat_blobs_mm=tuple((float(x), float(y)) for x, y in d.get("off_mat_blobs_mm", ())))
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise GeometryError(f"malformed rest change: {exc}") from None
