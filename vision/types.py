"""Boundary types of the vision layer: detections in pixels, and the measured winks in table millimetres."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field


class VisionError(ValueError):
    """The picture cannot be analysed (no mat, unusable calibration...); the message names the value."""


class PieceKind(str, enum.Enum):
    WINK = "wink"
    POT = "pot"


def _finite(name: str, values) -> tuple[float, ...]:
    out = tuple(float(v) for v in values)
    if not all(math.isfinite(v) for v in out):
        raise VisionError(f"{name} must be finite, got {values!r}")
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class PieceDetection:
    """One detected piece in image pixels (STYLE.md section 2)."""

    kind: PieceKind
    center_px: tuple[float, float]
    radius_px: float | None = None
    outline_px: tuple[tuple[float, float], ...] | None = None
    color: str | None = None
    confidence: float = 1.0
    detector: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", PieceKind(self.kind))
        object.__setattr__(self, "center_px", _finite("center_px", self.center_px))
        if not 0.0 <= self.confidence <= 1.0:
            raise VisionError(f"confidence must be in [0, 1], got {self.confidence!r}")
        if self.radius_px is not None and not self.radius_px > 0:
            raise VisionError(f"radius_px must be positive, got {self.radius_px!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class FrameDetections:
    """All detections of one frame; ``FrameDetections.empty()`` rather than ``None``."""

    frame_idx: int = 0
    timestamp_s: float = 0.0
    image_size_wh_px: tuple[int, int] = (0, 0)
    pieces: tuple[PieceDetection, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "pieces", tuple(self.pieces))

    @classmethod
    def empty(cls, image_size_wh_px: tuple[int, int] = (0, 0)) -> "FrameDetections":
        return cls(image_size_wh_px=image_size_wh_px)


#: What a wink's reported size rests on (``WinkMeasurement.size_basis``).
SIZE_BASES = ("outline", "colour_set", "unverified")


@dataclass(frozen=True, slots=True, kw_only=True)
class WinkMeasurement:
    """A wink measured in the table frame, with the evidence behind it.

    ``above`` lists the ids this wink lies over; ``order_confidence`` maps each overlapping neighbour's id to
    the confidence of the vertical order decided between them (0.5 = could not tell, TW I-13).
    """

    wink_id: str
    color: str
    size: str
    center_mm: tuple[float, float]
    radius_mm: float
    sigma_mm: float
    z_mm: float = 0.75
    tilt_deg: float = 0.0
    tilt_azimuth_deg: float = 0.0
    potted: bool = False
    off_mat: bool = False
    above: tuple[str, ...] = ()
    order_confidence: dict[str, float] = field(default_factory=dict)
    confidence: float = 1.0
    color_confidence: float = 1.0
    size_confidence: float = 1.0
    #: what the size rests on: "outline" (measured), "colour_set" (TW 2's two large and four small of its colour,
    #: given the colour's measured sizes) or "unverified" (a flagged guess)
    size_basis: str = "outline"
    center_px: tuple[float, float] = (0.0, 0.0)
    visible_fraction: float = 1.0
    occluded_by_pot: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "center_mm", _finite("center_mm", self.center_mm))
        object.__setattr__(self, "above", tuple(self.above))
        if not 0.0 <= self.confidence <= 1.0:
            raise VisionError(f"confidence must be in [0, 1], got {self.confidence!r}")
        if not (math.isfinite(self.sigma_mm) and self.sigma_mm >= 0):
            raise VisionError(f"sigma_mm must be >= 0, got {self.sigma_mm!r}")
        if self.size_basis not in SIZE_BASES:
            raise VisionError(f"size_basis must be one of {SIZE_BASES}, got {self.size_basis!r}")
