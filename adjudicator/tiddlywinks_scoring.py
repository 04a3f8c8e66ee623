"""Scores (TW A7 / TW 10(a) after a pot-out, TW A8 / TW 10(b) by tiddlies), per colour and per partnership.

In singles one player holds both colours of a partnership, so the side scores are the players' scores; the
per-colour points are reported either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from adjudicator.types import AdjudicatorError
from geometry import tiddlywinks as tw
from geometry.types import COLOR_ORDER, Color, GameType, TiddlywinksScene

# Points for 1st..4th place (TW 10(a), 10(b)); 7 in total.
PLACE_POINTS: tuple[int, ...] = (4, 2, 1, 0)
# Tiddlies (TW 10(b)): a potted wink is worth three, an unsquopped wink in play one.
POTTED_TIDDLIES = 3
FREE_TIDDLIES = 1
# The winning partnership under TW 10(a) takes one point from the losers.
TRANSFER_POINTS = 1
PARTNERSHIPS: tuple[str, ...] = ("blue-red", "green-yellow")


@dataclass(frozen=True, slots=True, kw_only=True)
class Score:
    """Points per colour and per partnership (side); ``transfer_points`` moved to the leader (TW 10(a))."""

    game_type: GameType
    color_points: dict[Color, Fraction]
    side_points: dict[str, Fraction]
    transfer_points: int = 0
    tiddlies: dict[Color, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "game_type": self.game_type.value,
            "color_points": {c.value: float(p) for c, p in self.color_points.items()},
            "side_points": {s: float(p) for s, p in self.side_points.items()},
            "transfer_points": self.transfer_points,
        }
        if self.tiddlies is not None:
            out["tiddlies"] = {c.value: t for c, t in self.tiddlies.items()}
        return out


def shared_place_points(groups: list[list[Color]]) -> dict[Color, Fraction]:
    """4/2/1/0 by place; colours in one group occupy consecutive places and share their sum equally.

    >>> {c.value: float(p) for c, p in shared_place_points([[Color.BLUE, Color.GREEN], [Color.RED]]).items()}
    {'blue': 3.0, 'green': 3.0, 'red': 1.0}
    """
    out: dict[Color, Fraction] = {}
    place = 0
    for group in groups:
        total = sum(PLACE_POINTS[place : place + len(group)])
        for c in group:
            out[c] = Fraction(total, len(group))
        place += len(group)
    return out


def _side_points(color_points: dict[Color, Fraction]) -> dict[str, Fraction]:
    return {
        side: sum((p for c, p in color_points.items() if c.partnership == side), Fraction(0))
        for side in PARTNERSHIPS
    }


def score_after_pot_out(order: tuple[tuple[Color, ...], ...], game_type: GameType = GameType.PAIRS) -> Score:
    """TW 10(a) / TW A7: places by pot-out order, then one point from the lower side to the higher.

    ``order`` groups colours that potted out in the same shot. Once three colours are placed the fourth is
    last (INTERP in TW A5); equal side totals transfer nothing (TW I-11).
    """
    groups = [list(g) for g in order]
    placed = [c for g in groups for c in g]
    if len(set(placed)) != len(placed):
        raise AdjudicatorError(f"a colour appears twice in the pot-out order {order!r}")
    rest = [c for c in COLOR_ORDER if c not in placed]
    if len(rest) > 1:
        raise AdjudicatorError(
            f"finishing order not fixed: {', '.join(c.value for c in rest)} not yet potted out"
        )
    if rest:
        groups.append(rest)
    color_points = shared_place_points(groups)
    side = _side_points(color_points)
    hi, lo = sorted(PARTNERSHIPS, key=lambda s: side[s], reverse=True)
    transfer = 0
    if side[hi] != side[lo]:
        transfer = TRANSFER_POINTS
        side[hi] += TRANSFER_POINTS
        side[lo] -= TRANSFER_POINTS
    return Score(game_type=game_type, color_points=color_points, side_points=side, transfer_points=transfer)


def tiddlies(
    scene: TiddlywinksScene, relations: tuple[tw.SquopRelation, ...] | None = None
) -> dict[Color, int]:
    """TW 10(b): 3 per potted wink + 1 per unsquopped wink in play; unplayed winks count 0.

    A squopping wink is unsquopped; a wink off the field awaiting replacement (TW 7(a)) counts as in play.
    """
    lowers = tw.squopped_ids(tw.squop_relations(scene) if relations is None else relations)
    out = {c: 0 for c in COLOR_ORDER}
    for w in scene.winks:
        if w.potted:
            out[w.color] += POTTED_TIDDLIES
        elif not w.unplayed and w.wink_id not in lowers:
            out[w.color] += FREE_TIDDLIES
    return out


def score_by_tiddlies(counts: dict[Color, int], game_type: GameType = GameType.PAIRS) -> Score:
    """TW 10(b) / TW A8: rank colours by tiddlies, 4/2/1/0 with shared places; no transfer point."""
    full = {c: counts.get(c, 0) for c in COLOR_ORDER}
    groups = [[c for c in COLOR_ORDER if full[c] == v] for v in sorted(set(full.values()), reverse=True)]
    color_points = shared_place_points(groups)
    return Score(
        game_type=game_type, color_points=color_points, side_points=_side_points(color_points), tiddlies=full
    )
