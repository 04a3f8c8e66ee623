"""Boundary types of the geometry layer: winks and tiddlywinks scenes in table millimetres.

Table frame: origin at the mat centre, x along the long side, y along the short side, z up (mm).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

from geometry.constants import LARGE_WINK_RADIUS_MM, SMALL_WINK_RADIUS_MM, WINK_THICKNESS_MM


class GeometryError(ValueError):
    """A scene or piece that cannot exist: the message names the offending value."""


class Color(str, enum.Enum):
    """Wink colours in turn order: clockwise, alphabetical (TW 1(b))."""

    BLUE = "blue"
    GREEN = "green"
    RED = "red"
    YELLOW = "yellow"

    @property
    def partner(self) -> Color:
        return {Color.BLUE: Color.RED, Color.RED: Color.BLUE, Color.GREEN: Color.YELLOW,
                Color.YELLOW: Color.GREEN}[self]

    @property
    def partnership(self) -> str:
        """'blue-red' or 'green-yellow' (TW 1(b))."""
        return "blue-red" if self in (Color.BLUE, Color.RED) else "green-yellow"

    def next_clockwise(self) -> Color:
        order = list(Color)
        return order[(order.index(self) + 1) % len(order)]


COLOR_ORDER: tuple[Color, ...] = tuple(Color)

# Default corners (RULES.md 1.1): sign of (x, y) of each colour's corner.
DEFAULT_CORNER_SIGNS: dict[Color, tuple[int, int]] = {
    Color.BLUE: (-1, 1),
    Color.GREEN: (1, 1),
    Color.RED: (1, -1),
    Color.YELLOW: (-1, -1),
}


class WinkSize(str, enum.Enum):
    LARGE = "large"
    SMALL = "small"

    @property
    def radius_mm(self) -> float:
        return LARGE_WINK_RADIUS_MM if self is WinkSize.LARGE else SMALL_WINK_RADIUS_MM


class GameType(str, enum.Enum):
    PAIRS = "pairs"
    SINGLES = "singles"


def _finite_pair(name: str, value: tuple[float, float]) -> tuple[float, float]:
    if len(value) != 2 or not all(math.isfinite(float(v)) for v in value):
        raise GeometryError(f"{name} must be two finite numbers, got {value!r}")
    return (float(value[0]), float(value[1]))


@dataclass(frozen=True, slots=True, kw_only=True)
class Wink:
    """One wink at rest, in the table frame.

    ``center_mm`` is the plan position of the disc centre. A tilted wink (``tilt_deg`` > 0) rises towards
    ``tilt_azimuth_deg`` (measured in plan from +x, counter-clockwise); its plan footprint is an ellipse.
    ``z_mm`` is the height of the disc's mid-plane at its centre (a flat wink on the mat: half its thickness).
    ``above`` lists the ids of winks this one lies over, when known from the camera or the umpire; when it is
    ``None`` the vertical order is derived from heights.
    """

    wink_id: str
    color: Color
    size: WinkSize
    center_mm: tuple[float, float]
    z_mm: float = WINK_THICKNESS_MM / 2
    tilt_deg: float = 0.0
    tilt_azimuth_deg: float = 0.0
    above: tuple[str, ...] | None = None
    potted: bool = False
    off_mat: bool = False
    unplayed: bool = False
    position_sigma_mm: float = 0.0
    confidence: float = 1.0
    radius_override_mm: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "color", Color(self.color))
        object.__setattr__(self, "size", WinkSize(self.size))
        object.__setattr__(self, "center_mm", _finite_pair("center_mm", self.center_mm))
        if not self.wink_id:
            raise GeometryError("wink_id must be a non-empty string")
        if not 0.0 <= self.tilt_deg < 90.0:
            raise GeometryError(f"tilt_deg must be in [0, 90), got {self.tilt_deg!r} for {self.wink_id}")
        if not (math.isfinite(self.position_sigma_mm) and self.position_sigma_mm >= 0):
            raise GeometryError(f"position_sigma_mm must be >= 0, got {self.position_sigma_mm!r}")
        if not 0.0 <= self.confidence <= 1.0:
            raise GeometryError(f"confidence must be in [0, 1], got {self.confidence!r}")
        if self.above is not None:
            object.__setattr__(self, "above", tuple(self.above))
            if self.wink_id in self.above:
                raise GeometryError(f"wink {self.wink_id} cannot lie above itself")

    @property
    def radius_mm(self) -> float:
        return self.radius_override_mm if self.radius_override_mm is not None else self.size.radius_mm

    @property
    def on_field_candidate(self) -> bool:
        """In play on the mat: not potted, not off the mat, not unplayed in hand."""
        return not (self.potted or self.off_mat)


@dataclass(frozen=True, slots=True, kw_only=True)
class TiddlywinksScene:
    """A rest state of a tiddlywinks game in table millimetres.

    ``unplayed_corners`` names the colours whose baseline still has unplayed winks behind it; ``None`` derives
    it from the winks' ``unplayed`` flags. ``last_shot_color`` is the colour that played the shot that led to
    this rest state, when known (for TW 7(a) forfeits and TW 11 free turns).
    """

    winks: tuple[Wink, ...]
    game_type: GameType = GameType.PAIRS
    pot_center_mm: tuple[float, float] = (0.0, 0.0)
    squidge_off_winner: Color | None = None
    potted_out_order: tuple[tuple[Color, ...], ...] = ()
    unplayed_corners: tuple[Color, ...] | None = None
    eps_mm: float | None = None
    corner_signs: dict[Color, tuple[int, int]] = field(default_factory=lambda: dict(DEFAULT_CORNER_SIGNS))
    last_shot_color: Color | None = None
    #: A pot whose inside is a wink colour hides potted winks of that colour from the camera.
    pot_hides_color: Color | None = None
    #: Colours short of their six winks of which the cup can hide one from the camera (behind its wall, under the
    #: winks in it): the missing one may be potted.
    pot_may_hide: tuple[Color, ...] = ()
    #: The share of the cup's floor the camera cannot see (behind its wall by the line of sight, or under the winks
    #: found in it), as measured on the photograph; ``None`` where nobody measured it.
    pot_floor_hidden_share: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "winks", tuple(self.winks))
        if self.pot_hides_color is not None:
            object.__setattr__(self, "pot_hides_color", Color(self.pot_hides_color))
        object.__setattr__(self, "pot_may_hide", tuple(Color(c) for c in self.pot_may_hide))
        if self.last_shot_color is not None:
            object.__setattr__(self, "last_shot_color", Color(self.last_shot_color))
        if self.unplayed_corners is not None:
            object.__setattr__(self, "unplayed_corners", tuple(Color(c) for c in self.unplayed_corners))
        signs = {Color(c): (int(s[0]), int(s[1])) for c, s in dict(self.corner_signs).items()}
        if set(signs) != set(Color) or sorted(signs.values()) != sorted(DEFAULT_CORNER_SIGNS.values()):
            raise GeometryError(f"corner_signs must give each colour a distinct corner (+-1, +-1), got {signs!r}")
        object.__setattr__(self, "corner_signs", signs)
        object.__setattr__(self, "game_type", GameType(self.game_type))
        object.__setattr__(self, "pot_center_mm", _finite_pair("pot_center_mm", self.pot_center_mm))
        ids = [w.wink_id for w in self.winks]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise GeometryError(f"duplicate wink ids: {dupes}")
        known = set(ids)
        for w in self.winks:
            for other in w.above or ():
                if other not in known:
                    raise GeometryError(f"wink {w.wink_id} lies above unknown wink {other!r}")
        share = self.pot_floor_hidden_share
        if share is not None and not (math.isfinite(share) and 0.0 <= share <= 1.0):
            raise GeometryError(f"pot_floor_hidden_share must be a share in [0, 1], got {share!r}")
        if self.eps_mm is not None and not (math.isfinite(self.eps_mm) and self.eps_mm > 0):
            raise GeometryError(f"eps_mm must be positive, got {self.eps_mm!r}")
        if self.squidge_off_winner is not None:
            object.__setattr__(self, "squidge_off_winner", Color(self.squidge_off_winner))
        object.__setattr__(
            self, "potted_out_order", tuple(tuple(Color(c) for c in group) for group in self.potted_out_order)
        )

    def wink(self, wink_id: str) -> Wink:
        for w in self.winks:
            if w.wink_id == wink_id:
                return w
        raise KeyError(wink_id)

    def winks_of(self, color: Color) -> tuple[Wink, ...]:
        return tuple(w for w in self.winks if w.color is Color(color))

    def colors_with_unplayed(self) -> tuple[Color, ...]:
        """Colours whose baseline still has unplayed winks behind it (TW 7(a), TW I-3)."""
        if self.unplayed_corners is not None:
            return self.unplayed_corners
        return tuple(c for c in COLOR_ORDER if any(w.unplayed and not w.potted for w in self.winks_of(c)))
