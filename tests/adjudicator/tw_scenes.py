"""Named tiddlywinks scenes and builders for the adjudicator tests (RULES.md 1.6 conventions: pot at the origin,
winks flat unless stated, eps_mm = 1)."""

from __future__ import annotations

from geometry.types import Color, TiddlywinksScene, Wink

CASE_EPS_MM = 1.0  # RULES.md 1.6
FLAT_Z_MM = 0.75  # mid-plane of a flat wink on the mat
STACK_STEP_MM = 1.5  # one wink thickness


def W(wink_id: str, color: str, size: str, x: float = 0.0, y: float = 0.0, **kw) -> Wink:
    return Wink(wink_id=wink_id, color=Color(color), size=size, center_mm=(x, y), **kw)


def scene(*winks: Wink, eps_mm: float | None = CASE_EPS_MM, **kw) -> TiddlywinksScene:
    return TiddlywinksScene(winks=winks, eps_mm=eps_mm, **kw)


def potted(color: str, n: int, start: int = 1) -> tuple[Wink, ...]:
    return tuple(W(f"{color[0]}{i}", color, "small", potted=True) for i in range(start, start + n))


def two_winks_squopped() -> TiddlywinksScene:
    """TW-T6: B small resting on A large."""
    return scene(
        W("A", "blue", "large", 100, 100, z_mm=FLAT_Z_MM),
        W("B", "red", "small", 115, 100, z_mm=FLAT_Z_MM + STACK_STEP_MM),
    )


def cyclic_squop() -> TiddlywinksScene:
    """TW-T23: four winks each over the next, all others potted, none unplayed."""
    return scene(
        W("b1", "blue", "large", 300, 0, z_mm=1.5, above=("g1",)),
        W("g1", "green", "large", 318, 0, z_mm=1.5, above=("r1",)),
        W("r1", "red", "large", 318, 18, z_mm=1.5, above=("y1",)),
        W("y1", "yellow", "large", 300, 18, z_mm=1.5, above=("b1",)),
        *potted("blue", 5, 2),
        *potted("green", 5, 2),
        *potted("red", 5, 2),
        *potted("yellow", 5, 2),
    )


def free_turn_trigger(last_shot_color: str | None = "green") -> TiddlywinksScene:
    """TW-T20: green squops the last free red wink; blue all squopped; free winks G 1, Y 2."""
    return scene(
        *potted("blue", 4),
        W("b5", "blue", "small", 100, 200, above=()),
        W("b6", "blue", "small", -300, -100, above=()),
        *potted("red", 4),
        W("r5", "red", "small", 400, 100, above=()),
        W("r6", "red", "small", -500, 250, above=()),
        *potted("green", 3),
        W("g4", "green", "small", 112, 200, above=("b5",)),
        W("g5", "green", "small", 412, 100, above=("r5",)),
        W("g6", "green", "small", 600, -300, above=()),
        *potted("yellow", 2),
        W("y3", "yellow", "small", -312, -100, above=("b6",)),
        W("y4", "yellow", "small", -512, 250, above=("r6",)),
        W("y5", "yellow", "small", 0, -300, above=()),
        W("y6", "yellow", "small", -700, 0, above=()),
        last_shot_color=last_shot_color,
    )


def tiddlies_t19() -> TiddlywinksScene:
    """TW-T19: B 2 potted, 3 free, 1 squopped; G 1 potted, 4 free (+1 squopped); R 5 free, 1 unplayed;
    Y 3 potted, 3 squopped."""
    return scene(
        *potted("blue", 2),
        W("b3", "blue", "small", -300, 100, above=("g3",)),
        W("b4", "blue", "small", -500, 200, above=()),
        W("b5", "blue", "small", 500, 300, above=()),
        W("b6", "blue", "small", 200, -250, above=()),
        *potted("green", 1),
        W("g2", "green", "large", 200, -236, above=("b6",)),
        W("g3", "green", "small", -300, 112, above=()),
        W("g4", "green", "small", -600, -100, above=()),
        W("g5", "green", "small", 650, -50, above=()),
        W("g6", "green", "small", -100, 300, above=()),
        W("r1", "red", "large", 400, -100, above=("y4",)),
        W("r2", "red", "large", -200, -300, above=("y5",)),
        W("r3", "red", "small", 100, 350, above=("y6",)),
        W("r4", "red", "small", -700, 300, above=()),
        W("r5", "red", "small", 700, -300, above=()),
        W("r6", "red", "small", 895, -440, unplayed=True),
        *potted("yellow", 3),
        W("y4", "yellow", "small", 412, -100, above=()),
        W("y5", "yellow", "small", -212, -300, above=()),
        W("y6", "yellow", "small", 112, 350, above=()),
    )
