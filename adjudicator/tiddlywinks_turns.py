"""Turns, shots and rounds as small pure state functions (TW A2 / TW 5(c),(d), 7(a); TW A6 / TW 9; TW A9).

A live tracker feeds shots into :class:`TurnState` and asks these functions what is due next; nothing here
looks at positions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from adjudicator.types import AdjudicatorError
from geometry.types import Color, GameType

# TW 9(a): the time limit, started by the first shot after the squidge-off (organisers may vary it).
TIME_LIMIT_S: dict[GameType, float] = {GameType.PAIRS: 25 * 60.0, GameType.SINGLES: 20 * 60.0}
# TW 9(b): rounds played after the squidge-off winner's turn that follows expiry.
ROUNDS_AFTER_EXPIRY = 5


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnState:
    """The turn in progress: whose it is, shots left, and forfeits pending per colour (TW A2, TW 7(a)).

    ``forfeits`` holds one entry per next-shot-due forfeited under TW 7(a); a forfeit is spent on the very next
    shot due with that colour, including a bonus shot later in the same turn (TW I-5).

    >>> t = TurnState(color=Color.BLUE).after_shot(potted=[Color.BLUE], left_field=[Color.BLUE])  # TW-T14
    >>> t.shots_left, t.ended
    (0, True)
    """

    color: Color
    shots_left: int = 1
    shots_played: int = 0
    forfeits: tuple[Color, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "color", Color(self.color))
        object.__setattr__(self, "forfeits", tuple(Color(c) for c in self.forfeits))
        if self.shots_left < 0:
            raise AdjudicatorError(f"shots_left must be >= 0, got {self.shots_left}")

    @property
    def ended(self) -> bool:
        """No shot left in this turn."""
        return self.shots_left == 0

    def after_shot(self, *, potted: Iterable[Color] = (), left_field: Iterable[Color] = ()) -> TurnState:
        """State after one shot, given the colours of the winks it potted and of those that left the field.

        Each potted wink of the colour in play adds a shot, the shot itself costs one (TW 5(c)); other colours'
        potted winks count nothing. If a wink of the colour in play left the field (TW 7(a)), the next shot
        due with that colour is forfeited: a pending bonus shot now (TW I-5), else its next turn's first shot.
        """
        if self.ended:
            raise AdjudicatorError(f"{self.color.value}'s turn has no shot left")
        shots = self.shots_left + sum(1 for c in potted if Color(c) is self.color) - 1
        forfeits = self.forfeits
        if any(Color(c) is self.color for c in left_field):
            if shots > 0:
                shots -= 1
            else:
                forfeits = (*forfeits, self.color)
        return replace(self, shots_left=shots, shots_played=self.shots_played + 1, forfeits=forfeits)

    def after_pass(self) -> TurnState:
        """The player passes (opponents told) or a foul is accepted under TW 12(a)(ii): the turn ends."""
        return replace(self, shots_left=0)

    def next_turn(self) -> TurnState:
        """The next colour clockwise starts with one shot, less a pending forfeit (the turn still counts)."""
        nxt = self.color.next_clockwise()
        forfeits = list(self.forfeits)
        shots = 1
        if nxt in forfeits:
            forfeits.remove(nxt)
            shots = 0
        return TurnState(color=nxt, shots_left=shots, forfeits=tuple(forfeits))


def turns_after_expiry(
    squidge_off_winner: Color, expiry_color: Color, rounds: int = ROUNDS_AFTER_EXPIRY
) -> tuple[Color, ...]:
    """TW 9(b) / TW A6: the turns still to play after the turn in progress at expiry (TW I-8).

    Play continues up to and including the squidge-off winner's turn, then ``rounds`` full rounds each ending
    with the winner.

    >>> len(turns_after_expiry(Color.GREEN, Color.YELLOW))   # TW-T21
    22
    """
    out: list[Color] = []
    c = Color(expiry_color)
    winner = Color(squidge_off_winner)
    while c is not winner:
        c = c.next_clockwise()
        out.append(c)
    for _ in range(rounds):
        for _ in range(4):
            c = c.next_clockwise()
            out.append(c)
    return tuple(out)


def free_turn_schedule(squopping_side: str, last_shot_color: Color, free_turns: int) -> tuple[Color, ...]:
    """TW 11(a) / TW A9: the colours that take the free turns, in order (TW I-7).

    Free turns go to the squopping partnership's colours in normal rotation, starting with its next turn
    after the turn in which the trigger shot was played; opponents' turns pass in between.

    >>> [c.value for c in free_turn_schedule("green-yellow", Color.GREEN, 4)]   # TW-T20
    ['yellow', 'green', 'yellow', 'green']
    """
    if squopping_side not in ("blue-red", "green-yellow"):
        raise AdjudicatorError(f"squopping_side must be 'blue-red' or 'green-yellow', got {squopping_side!r}")
    if free_turns < 1:
        raise AdjudicatorError(f"free_turns must be >= 1, got {free_turns}")
    out: list[Color] = []
    c = Color(last_shot_color)
    while len(out) < free_turns:
        c = c.next_clockwise()
        if c.partnership == squopping_side:
            out.append(c)
    return tuple(out)
