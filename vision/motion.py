"""The motion gate: split a video of a tiddlywinks game into shots and rest states.

Each frame is shrunk (``INTER_AREA`` to ``work_width_px``, grey, a light blur) so the gate costs ~1-2 ms at
1080p. Two measures run over the mat region (or the whole frame):

- *activity*: the fraction of pixels that changed by more than ``level`` since the previous frame;
- *change*: the fraction that differ from the running *rest reference* (the last rest frame, slowly
  averaged while quiet so lighting drift does not accumulate).

At rest, a shot starts when ``change`` exceeds ``start_fraction`` on ``start_frames`` frames in a row (a hand,
a squidger). During a shot, rest returns after ``quiet_frames`` frames whose activity stays under
``stop_fraction`` (hysteresis: stop < start) *and* whose change from the old reference is small
(``max_rest_change_fraction``): winks are tiny on the mat, a hand resting on it is not, so a still hand does
not end the shot. If the change stays large though nothing moves for ``max_quiet_frames`` (the camera was
nudged, the light changed), rest is declared anyway and the reference resets. The first ``quiet_frames`` quiet
frames of the stream give the initial rest state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from geometry.constants import MAT_HALF_LENGTH_MM, MAT_HALF_WIDTH_MM, SMALL_WINK_RADIUS_MM
from vision.types import VisionError

#: One small wink's share of the mat's area (the gate watches the mat): every threshold below is a count of
#: these, so the gate sees one wink move at any resolution or framing of the whole mat.
WINK_AREA_FRACTION = math.pi * SMALL_WINK_RADIUS_MM ** 2 / (4 * MAT_HALF_LENGTH_MM * MAT_HALF_WIDTH_MM)


@dataclass(frozen=True, slots=True, kw_only=True)
class MotionParams:
    """Gate thresholds; fractions are of the watched (mat) pixels of the shrunk frame."""

    work_width_px: int = 240  # 1920 -> 240: 1/64 of the area; a wink is still ~3 px across
    blur_ksize: int = 3
    level: int = 14  # grey levels: above sensor/codec noise after the blur
    # a wink that moves changes its old and its new place: two wink areas; a squidger alone is more
    start_fraction: float = 2.0 * WINK_AREA_FRACTION
    start_frames: int = 2
    stop_fraction: float = 1.5 * WINK_AREA_FRACTION  # less than one wink still moving between two frames
    quiet_frames: int = 5  # at 15 fps a third of a second; scale with fps (see ``for_fps``)
    # a rest differs from the last one by the winks the shot moved (two areas each); a hand held still over
    # the mat is larger than five moved winks (a shot moving more waits for ``max_quiet_frames``)
    max_rest_change_fraction: float = 10.0 * WINK_AREA_FRACTION
    max_quiet_frames: int = 45
    reference_alpha: float = 0.05  # running average of the rest reference while quiet

    def __post_init__(self) -> None:
        if self.work_width_px < 16:
            raise VisionError(f"work_width_px must be >= 16, got {self.work_width_px}")
        if not 0 < self.stop_fraction <= self.start_fraction < 1:
            raise VisionError(f"need 0 < stop_fraction <= start_fraction < 1, got {self.stop_fraction}, "
                              f"{self.start_fraction}")
        if self.quiet_frames < 1 or self.start_frames < 1:
            raise VisionError("quiet_frames and start_frames must be >= 1")

    @classmethod
    def for_fps(cls, fps: float, quiet_s: float = 0.33, **kw) -> MotionParams:
        """Frame counts from durations: ``quiet_s`` of stillness ends a shot; 3 s of stillness forces rest."""
        fps = fps if fps and math.isfinite(fps) and fps > 0 else 15.0
        return cls(quiet_frames=max(2, round(quiet_s * fps)), max_quiet_frames=max(10, round(3.0 * fps)),
                   start_frames=max(1, round(0.1 * fps)), **kw)


@dataclass(frozen=True, slots=True)
class MotionEvent:
    """``shot_start`` at the first moving frame, or ``rest`` at the frame where stillness is confirmed;
    ``start_idx`` of a rest is the first still frame (its rest state spans start_idx..)."""

    kind: str
    frame_idx: int
    start_idx: int | None = None
    initial: bool = False


class MotionGate:
    """Feed frames with :meth:`update`; it returns the events they cause (usually none)."""

    def __init__(self, params: MotionParams = MotionParams(), mat_polygon_px: np.ndarray | None = None) -> None:
        self.params = params
        self._poly = None if mat_polygon_px is None else np.asarray(mat_polygon_px, dtype=np.float64)
        self._mask: np.ndarray | None = None
        self._n_mask = 0
        self._scale = 1.0
        self._size: tuple[int, int] | None = None
        self._prev: np.ndarray | None = None
        self._ref: np.ndarray | None = None
        self._ref_f: np.ndarray | None = None
        self._moving = True  # until the first rest
        self._initial = True
        self._quiet = 0
        self._quiet_start = 0
        self._busy = 0
        self._busy_start = 0
        self.last_activity = 0.0
        self.last_change = 0.0

    def set_mat_polygon(self, mat_polygon_px: np.ndarray | None) -> None:
        """Watch only this region from the next frame on (e.g. once the mat is calibrated)."""
        self._poly = None if mat_polygon_px is None else np.asarray(mat_polygon_px, dtype=np.float64)
        self._size = None

    def _prepare(self, frame: np.ndarray) -> np.ndarray:
        h, w = frame.shape[:2]
        p = self.params
        if self._size != (w, h):
            self._scale = min(1.0, p.work_width_px / w)
            self._size = (w, h)
            sw, sh = max(1, round(w * self._scale)), max(1, round(h * self._scale))
            self._small_wh = (sw, sh)
            if self._poly is not None:
                m = np.zeros((sh, sw), np.uint8)
                cv2.fillPoly(m, [np.round(self._poly * self._scale * 16).astype(np.int32)], 1, shift=4)
                self._mask = m.astype(bool)
            else:
                self._mask = None
            self._n_mask = int(self._mask.sum()) if self._mask is not None else sw * sh
            if self._n_mask == 0:
                raise VisionError("the mat region covers no pixel of the frame")
        small = cv2.resize(frame, self._small_wh, interpolation=cv2.INTER_AREA)
        if small.ndim == 3:
            small = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
        if p.blur_ksize > 1:
            small = cv2.GaussianBlur(small, (p.blur_ksize, p.blur_ksize), 0)
        return small

    def _fraction(self, a: np.ndarray, b: np.ndarray) -> float:
        d = cv2.absdiff(a, b) > self.params.level
        if self._mask is not None:
            d &= self._mask
        return float(np.count_nonzero(d)) / self._n_mask

    def update(self, frame: np.ndarray, frame_idx: int) -> list[MotionEvent]:
        """One frame (BGR or grey, any size) -> the events it triggers."""
        p = self.params
        g = self._prepare(frame)
        events: list[MotionEvent] = []
        prev = self._prev if self._prev is not None else g
        activity = self._fraction(g, prev)
        self._prev = g
        self.last_activity = activity
        if self._moving:
            change = self._fraction(g, self._ref) if self._ref is not None else 0.0
            self.last_change = change
            if activity < p.stop_fraction:
                if self._quiet == 0:
                    # This frame equals the one before it: the rest state began there.
                    self._quiet_start = max(frame_idx - 1, 0)
                self._quiet += 1
            else:
                self._quiet = 0
            settled = self._quiet >= p.quiet_frames and (change <= p.max_rest_change_fraction or self._initial)
            if settled or self._quiet >= p.max_quiet_frames:
                events.append(MotionEvent("rest", frame_idx, self._quiet_start, self._initial))
                self._moving, self._initial = False, False
                self._ref = g.copy()
                self._ref_f = g.astype(np.float32)
                self._busy = 0
        else:
            assert self._ref is not None and self._ref_f is not None
            change = self._fraction(g, self._ref)
            self.last_change = change
            if change > p.start_fraction:
                if self._busy == 0:
                    self._busy_start = frame_idx
                self._busy += 1
                if self._busy >= p.start_frames:
                    events.append(MotionEvent("shot_start", self._busy_start))
                    self._moving = True
                    self._quiet = 0
            else:
                self._busy = 0
                if activity < p.stop_fraction:
                    # Follow slow lighting drift while nothing happens.
                    cv2.accumulateWeighted(g, self._ref_f, p.reference_alpha)
                    self._ref = cv2.convertScaleAbs(self._ref_f)
        return events

    @property
    def moving(self) -> bool:
        return self._moving


def split_frames(frames, params: MotionParams = MotionParams(),
                 mat_polygon_px: np.ndarray | None = None) -> list[MotionEvent]:
    """All events of a sequence of frames (an iterable of arrays), for tests and offline use."""
    gate = MotionGate(params, mat_polygon_px)
    out: list[MotionEvent] = []
    for i, f in enumerate(frames):
        out += gate.update(f, i)
    return out
