"""Pieces stacked on an upright pyramid (IT Score: a nested piece scores its own pips).

A smaller pyramid set over an upright one rides up its faces until its rim meets them (``stacked_pose``): the
pair's silhouette is nearly the lower piece's alone, so the stack is found inside it. Where the upper piece
is, the camera sees the lower piece through (translucent) or behind (opaque) the upper one: its rim splits the
lower piece's image into a cap and a skirt whose colours differ by the upper piece's own walls. Without a
stacked piece the cap and skirt show the same four faces in the same proportions (they are scaled about the
apex), so their colours agree. The size of the upper piece is the rim where that difference is strongest.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.pyramids import PyramidPose, base_mm, stacked_pose
from vision.pyramids_fit import hull_px


@dataclass(frozen=True, slots=True, kw_only=True)
class StackEvidence:
    """Colour step across the rim of a candidate upper piece of ``size`` on an upright piece."""

    size: str
    upper: PyramidPose
    cap_px: np.ndarray  # (N, 2) hull of the upper piece in the image
    step_log_rgb: tuple[float, float, float]  # log(cap / skirt), linear RGB medians
    step_norm: float  # Euclidean norm of ``step_log_rgb``
    cap_sel: np.ndarray  # bool mask of the cap pixels used
    skirt_sel: np.ndarray  # bool mask of the skirt pixels used


def _linear(bgr: np.ndarray) -> np.ndarray:
    x = bgr.astype(np.float32) / 255.0
    return np.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4)


def stack_candidates(
    frame_bgr: np.ndarray, camera: CameraModel, lower: PyramidPose, margin_px: int = 2
) -> list[StackEvidence]:
    """The colour step at the rim of each smaller size that could sit on ``lower`` (largest step first).

    Cap and skirt are shrunk by ``margin_px`` off the rim and the silhouette so that edge pixels, blurred
    across the boundary, count on neither side.
    """
    h, w = frame_bgr.shape[:2]
    lower_hull = hull_px(camera, lower)
    x0, y0 = np.floor(lower_hull.min(axis=0)).astype(int) - 3
    x1, y1 = np.ceil(lower_hull.max(axis=0)).astype(int) + 4
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 - x0 < 4 or y1 - y0 < 4:
        return []
    patch = _linear(frame_bgr[y0:y1, x0:x1])
    off = np.array([x0, y0], float)
    body = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillConvexPoly(body, np.round(lower_hull - off).astype(np.int32), 1)
    k = np.ones((2 * margin_px + 1, 2 * margin_px + 1), np.uint8)
    body_in = cv2.erode(body, k)
    out = []
    for size in ("small", "medium", "large"):
        if base_mm(size) >= base_mm(lower.size):
            continue
        upper = stacked_pose(size, lower)
        cap_hull = hull_px(camera, upper)
        cap = np.zeros_like(body)
        cv2.fillConvexPoly(cap, np.round(cap_hull - off).astype(np.int32), 1)
        cap_sel = (cv2.erode(cap, k) > 0) & (body_in > 0)
        skirt_sel = (body_in > 0) & (cv2.dilate(cap, k) == 0)
        if cap_sel.sum() < 12 or skirt_sel.sum() < 12:
            continue
        step = np.log(np.median(patch[cap_sel], axis=0) + 2e-3) - np.log(
            np.median(patch[skirt_sel], axis=0) + 2e-3
        )
        step = step[::-1]  # BGR -> RGB
        full_cap = np.zeros((h, w), bool)
        full_cap[y0:y1, x0:x1] = cap_sel
        full_skirt = np.zeros((h, w), bool)
        full_skirt[y0:y1, x0:x1] = skirt_sel
        out.append(
            StackEvidence(
                size=size,
                upper=upper,
                cap_px=cap_hull,
                step_log_rgb=tuple(float(v) for v in step),
                step_norm=float(np.linalg.norm(step)),
                cap_sel=full_cap,
                skirt_sel=full_skirt,
            )
        )
    out.sort(key=lambda e: -e.step_norm)
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class StackParams:
    """Thresholds on the cap/skirt colour step (norm of log linear-RGB medians).

    Measured on 30 training renders (``generate_ice_tiddlywinks`` with ``default_rng([4242, i])``, a seed the
    bench does not use): upright pieces with nothing on them step by at most 0.94 (a highlight at the apex,
    grey), stacks of different plastics by 1.3 to 5.7. Stacks of one plastic step by only 0.1 to 0.25: one more
    wall of the same tint is within the shading, so this cue cannot see them (a rim-edge cue would be needed).
    """

    min_step: float = 1.1  # at or above: a stacked piece
    uncertain_step: float = 0.8  # between this and min_step: a possible stacked piece, flagged for a look
    size_step_ratio: float = 1.1  # best rim's step over the next size's below this: size uncertain, flagged

    def __post_init__(self) -> None:
        if not 0.0 < self.uncertain_step <= self.min_step:
            raise ValueError(
                f"need 0 < uncertain_step <= min_step, got {self.uncertain_step}, {self.min_step}"
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class StackVerdict:
    """``verdict`` is "stacked", "uncertain" or "none"; ``evidence`` the best rim (None if no size fits)."""

    verdict: str
    evidence: StackEvidence | None
    confidence: float
    reasons: tuple[str, ...] = ()


def find_stacked_piece(
    frame_bgr: np.ndarray, camera: CameraModel, lower: PyramidPose, params: StackParams = StackParams()
) -> StackVerdict:
    """Whether a smaller piece sits on the upright ``lower``, and which size, from the colour step at its rim."""
    cands = stack_candidates(frame_bgr, camera, lower)
    if not cands:
        return StackVerdict(verdict="none", evidence=None, confidence=1.0)
    best = cands[0]
    if best.step_norm < params.uncertain_step:
        return StackVerdict(verdict="none", evidence=best, confidence=1.0)
    reasons = []
    span = params.min_step - params.uncertain_step
    conf = float(np.clip(0.5 + 0.5 * (best.step_norm - params.min_step) / max(span, 1e-6), 0.0, 1.0))
    verdict = "stacked"
    if best.step_norm < params.min_step:
        verdict = "uncertain"
        reasons.append(f"possible piece stacked on it (colour step {best.step_norm:.2f})")
    if len(cands) > 1 and best.step_norm < params.size_step_ratio * cands[1].step_norm:
        reasons.append(f"stacked piece {best.size} or {cands[1].size}")
    return StackVerdict(verdict=verdict, evidence=best, confidence=conf, reasons=tuple(reasons))
