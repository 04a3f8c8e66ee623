"""Is a candidate's middle a wink's pigment, or only tinted felt? Chromaticity against the local felt.

A wink is opaque plastic of one pigment: the middle of its disc, well inside the camera's blur of its rim, shows
that pigment's chromaticity (``bgr / sum``, which a shadow leaves nearly unchanged, as it scales all three
channels) wherever it lies. Felt tinted by something beside it is another matter: the penumbra beside a red pot
catches the pot's red, the felt around a wink takes some of its colour through the blur and the JPEG's halved
colour resolution. Such a tint lies only a small part of the way from the felt's chromaticity to the pigment's.
So each candidate's middle (the part no other wink or the pot covers) is placed on the line from the felt just
around it to the median middle of the same colour's winks in this photograph: a wink sits near 1 (blur and
highlights take a little off), tinted felt near 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.constants import WINK_THICKNESS_MM
from vision.ortho import OrthoGrid
from vision.winks import WinkCandidate, _interior_offsets, _near_mask, _on_mat, _sample_labels

#: The middle read: within this share of the radius (its rim's blur and bevel stay outside).
CORE_RADIUS_RATIO = 0.6
#: Plan clearance kept from another wink's rim or the pot's outline (their blur and shadow), mm.
CLEAR_MM = 2.0
#: The felt read around a candidate: a ring this far beyond its rim, mm (beyond its blur and contact shadow).
FELT_RING_MM = (4.0, 10.0)
#: Least samples that make a middle or a felt ring readable.
MIN_SAMPLES = 6
#: Least winks of one colour whose middles give that colour's pigment in this photograph.
MIN_REFERENCE_WINKS = 3
#: A middle less than this share of the way from the felt to its colour's pigment is tinted felt, not a wink.
#: A wink's middle, more than 0.4 of its radius (3 mm, over a pixel at the coarsest 2.3 mm per pixel) inside
#: its rim, mixes a few tens of per cent of felt at most through a blur of about a pixel; a tint from beside it
#: reaches a small part of the way. In the renders looked at, felt at the mat's ends read -0.08 to 0.05 and a
#: red-tinted penumbra beside a red pot 0.12 and 0.25, while real winks a lamp's broad highlight washes out, or
#: pressed against the pot, read 0.28 to 0.34: only felt that is hardly tinted at all is told apart.
MIN_PIGMENT_SHARE = 0.15


@dataclass(frozen=True, slots=True)
class CoreReading:
    core_chroma: np.ndarray | None  # (3,) median chromaticity of the visible middle (None: too little of it)
    felt_chroma: np.ndarray | None  # (3,) median chromaticity of the felt ring around it
    brightness_ratio: float = float("nan")  # the middle's channel sum over the felt's


def _colours_at(image_bgr: np.ndarray, camera: CameraModel, pts_mm3: np.ndarray) -> np.ndarray:
    px = camera.project_mm(pts_mm3).astype(np.float32)
    v = cv2.remap(image_bgr, px[:, 0:1], px[:, 1:2], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return v.reshape(-1, 3).astype(np.float32) + 1.0


def _clear(pts: np.ndarray, others: list[WinkCandidate], block: np.ndarray | None, grid: OrthoGrid,
           middle_mm: np.ndarray, extent_mm: float) -> np.ndarray:
    """Which of a wink's read points ``pts`` lie on the mat, clear of the ``others``' rims and off the pot's mask
    (looked up only when the points' box, ``middle_mm`` and ``extent_mm``, comes near the mask's)."""
    ok = _on_mat(pts, 2.0)
    if others:
        oc = np.array([o.center_mm for o in others])
        lim = np.array([o.radius_mm + CLEAR_MM for o in others])
        d2 = ((pts[:, None, :] - oc[None, :, :]) ** 2).sum(axis=2)
        ok &= ~np.any(d2 <= lim[None, :] ** 2, axis=1)
    if block is not None and _near_mask(block, grid, middle_mm, extent_mm):
        ok &= _sample_labels(block.view(np.uint8), grid.ortho_from_table(pts)) != 1
    return ok


def read_cores(winks: list[WinkCandidate], image_bgr: np.ndarray, camera: CameraModel, grid: OrthoGrid,
               block_mask: np.ndarray | None = None) -> list[CoreReading]:
    """The chromaticity of each wink's visible middle and of the felt around it (one image read for all)."""
    cores, rings = [], []
    for w in winks:
        others = [o for o in winks if o is not w and o.potted == w.potted
                  and abs(o.center_mm[0] - w.center_mm[0]) < 45 and abs(o.center_mm[1] - w.center_mm[1]) < 45]
        offs, mid, ext = _core_offsets(w.radius_mm)
        core = w.center_mm + offs
        core = core[_clear(core, others, block_mask, grid, w.center_mm + mid, ext)]
        offs, mid, ext = _ring_offsets(w.radius_mm)
        ring = w.center_mm + offs
        ring = ring[_clear(ring, others, block_mask, grid, w.center_mm + mid, ext)]
        if len(core) < MIN_SAMPLES or len(ring) < MIN_SAMPLES:
            core, ring = core[:0], ring[:0]
        cores.append(core)
        rings.append(ring)
    n_core = np.cumsum([0] + [len(c) for c in cores])
    n_ring = np.cumsum([0] + [len(r) for r in rings])
    if n_core[-1] == 0:
        return [CoreReading(None, None) for _ in winks]
    # the middles at mid-thickness of each wink, the felt at the mat
    core_z = np.repeat([w.z_mm + WINK_THICKNESS_MM / 2 for w in winks], np.diff(n_core))
    core_bgr = _colours_at(image_bgr, camera, np.column_stack([np.concatenate(cores), core_z]))
    felt_bgr = _colours_at(image_bgr, camera, np.column_stack([np.concatenate(rings), np.zeros(n_ring[-1])]))
    core_sum, felt_sum = core_bgr.sum(axis=1, keepdims=True), felt_bgr.sum(axis=1, keepdims=True)
    core_ch, felt_ch = core_bgr / core_sum, felt_bgr / felt_sum
    core_med = _segment_medians(np.hstack([core_ch, core_sum]), n_core)
    felt_med = _segment_medians(np.hstack([felt_ch, felt_sum]), n_ring)
    out = []
    for i in range(len(winks)):
        if n_core[i] == n_core[i + 1]:
            out.append(CoreReading(None, None))
            continue
        out.append(CoreReading(core_chroma=core_med[i, :3], felt_chroma=felt_med[i, :3],
                               brightness_ratio=float(core_med[i, 3] / felt_med[i, 3])))
    return out


def _segment_medians(values: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Per column, the median of each segment ``values[bounds[i]:bounds[i + 1]]`` (rows of an empty one: nan).

    The segments padded with +inf to one length and sorted together: the middle one or two of each segment's
    ``n`` values, averaged as ``np.median`` does (``(a + b) / 2`` in the values' dtype), so the same numbers as
    one ``np.median`` per segment, whose fixed cost per call was most of the tinted-felt check."""
    lengths = np.diff(bounds)
    m = len(lengths)
    out = np.full((m, values.shape[1]), np.nan, values.dtype)
    if m == 0 or lengths.max() == 0:
        return out
    seg = np.repeat(np.arange(m), lengths)
    pos = np.arange(len(values)) - np.repeat(bounds[:-1], lengths)
    padded = np.full((m, int(lengths.max()), values.shape[1]), np.inf, values.dtype)
    padded[seg, pos] = values
    padded.sort(axis=1)
    rows = np.flatnonzero(lengths)
    lo, hi = padded[rows, (lengths[rows] - 1) // 2], padded[rows, lengths[rows] // 2]
    out[rows] = (lo + hi) / values.dtype.type(2)
    return out


def _with_box(offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Offsets with their mean and largest extent: the box the pot's mask is tested against (the few numpy
    reductions per candidate cost more than the test)."""
    offsets.setflags(write=False)
    return offsets, offsets.mean(axis=0), float(np.ptp(offsets, axis=0).max())


@lru_cache(maxsize=4)
def _core_offsets(radius_mm: float) -> tuple[np.ndarray, np.ndarray, float]:
    """Plan offsets of the middle read of a wink of this radius (with their box, ``_with_box``)."""
    return _with_box(_interior_offsets(CORE_RADIUS_RATIO * radius_mm, 1.0))


@lru_cache(maxsize=4)
def _ring_offsets(radius_mm: float) -> tuple[np.ndarray, np.ndarray, float]:
    """Plan offsets of the felt ring read around a wink of this radius (with their box, ``_with_box``)."""
    ring = _interior_offsets(radius_mm + FELT_RING_MM[1], 1.5)
    return _with_box(ring[np.linalg.norm(ring, axis=1) >= radius_mm + FELT_RING_MM[0]])


def pigment_share(reading: CoreReading, pigment_chroma: np.ndarray, min_separation: float = 0.0) -> float:
    """Where the middle lies on the line from the felt (0) to the pigment (1); nan when unreadable, or when the
    pigment lies within ``min_separation`` (chromaticity units) of the felt, where the line has no direction."""
    if reading.core_chroma is None or reading.felt_chroma is None:
        return float("nan")
    axis = pigment_chroma - reading.felt_chroma
    n2 = float(axis @ axis)
    if n2 < max(min_separation, 1e-3) ** 2:
        return float("nan")  # the pigment is the felt's own chromaticity: this test cannot speak
    return float((reading.core_chroma - reading.felt_chroma) @ axis / n2)


def tinted_felt(winks: list[WinkCandidate], image_bgr: np.ndarray, camera: CameraModel, grid: OrthoGrid,
                block_mask: np.ndarray | None = None, light_floor: float = 0.10,
                min_separation: float = 0.0) -> list[WinkCandidate]:
    """The candidates whose middle is tinted felt rather than a pigment (see the module's docstring).

    A middle brighter than the felt by more than ``light_floor`` (the colour labels' own least brightening of
    a foreground) is something lying on the felt, whatever its chromaticity: a glossy wink near the lamp, its
    channels near saturation, loses chromaticity but not brightness. Only the others are judged here, and only
    for a pigment at least ``min_separation`` from the felt's chromaticity (the labels' foreground threshold)."""
    readings = dict(zip(map(id, winks), read_cores(winks, image_bgr, camera, grid, block_mask)))
    out = []
    for color in {w.color for w in winks}:
        same = [w for w in winks if w.color == color and readings[id(w)].core_chroma is not None]
        if len(same) < MIN_REFERENCE_WINKS:
            continue
        pigment = np.median([readings[id(w)].core_chroma for w in same], axis=0)
        for w in same:
            share = pigment_share(readings[id(w)], pigment, min_separation)
            if (np.isfinite(share) and share < MIN_PIGMENT_SHARE
                    and readings[id(w)].brightness_ratio <= 1.0 + light_floor):
                out.append(w)
    return out
