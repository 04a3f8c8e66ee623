"""Boundary types of the adjudicator: rulings and the parameters the judges take."""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass, field
from typing import Any

from geometry.constants import MIN_EPS_MM


class AdjudicatorError(ValueError):
    """A judge was asked something it cannot answer from its inputs; the message names the offending value."""


class Decision(str, enum.Enum):
    """What a ruling decides. ``TOO_CLOSE_TO_CALL`` and ``UNDECIDED`` are answers too (RULES.md section 0)."""

    # squidge-off (TW 5(a))
    WINNER = "winner"
    RESQUIDGE = "resquidge"
    REPLAY = "replay"
    # uncertainty
    TOO_CLOSE_TO_CALL = "too_close_to_call"
    UNDECIDED = "undecided"
    REFER_TO_UMPIRE = "refer_to_umpire"
    # states
    IN = "in"
    OUT = "out"
    SQUOPPED = "squopped"
    PILE = "pile"
    # placements and penalties
    REPLACE_AT = "replace_at"
    MOVE = "move"
    FORFEIT = "forfeit"
    BONUS_SHOTS = "bonus_shots"
    # game state
    SCORE = "score"
    FREE_TURNS = "free_turns"
    NO_FREE_TURNS = "no_free_turns"
    GAME_CEASES = "game_ceases"
    GAME_CONTINUES = "game_continues"
    TURNS_REMAINING = "turns_remaining"
    LEGAL = "legal"
    ILLEGAL = "illegal"


# Evidence names carry their unit (STYLE.md section 3); counts and scores say what they count.
_EVIDENCE_SUFFIXES = ("_mm", "_mm2", "_deg", "_rad", "_s", "_ratio", "_count", "_points", "_tiddlies")
_CLAUSE = re.compile(r"^[A-Z]{2} \S.*$")


@dataclass(frozen=True, slots=True, kw_only=True)
class Ruling:
    """One decision of the referee, citing the clause it applies.

    ``rule`` is the clause exactly as RULES.md names it (``"TW 5(a)"``); the interpretations it relies on go in
    ``interpretations`` (``"TW I-3"``). ``evidence`` maps a measurement name with its unit suffix to a value.
    ``colors`` names the colours the decision is about (winner, re-squidgers, forfeiting colour), and
    ``target_mm`` the table point a wink must be put at for ``REPLACE_AT`` / ``MOVE``.
    """

    game: str
    rule: str
    decision: Decision
    explanation: str
    piece_ids: tuple[str, ...] = ()
    evidence: dict[str, float] = field(default_factory=dict)
    confidence: float = 1.0
    frame_idx: int | None = None
    interpretations: tuple[str, ...] = ()
    colors: tuple[str, ...] = ()
    target_mm: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "decision", Decision(self.decision))
        if not _CLAUSE.match(self.rule):
            raise AdjudicatorError(f"rule must cite a clause like 'TW 5(a)', got {self.rule!r}")
        for clause in self.interpretations:
            if not _CLAUSE.match(clause):
                raise AdjudicatorError(f"interpretation must cite a clause like 'TW I-3', got {clause!r}")
        if not self.explanation:
            raise AdjudicatorError(f"ruling under {self.rule} needs an explanation")
        if not (math.isfinite(self.confidence) and 0.0 <= self.confidence <= 1.0):
            raise AdjudicatorError(f"confidence must be in [0, 1], got {self.confidence!r}")
        evidence = {}
        for key, value in dict(self.evidence).items():
            if not key.endswith(_EVIDENCE_SUFFIXES):
                raise AdjudicatorError(f"evidence name {key!r} lacks a unit suffix {_EVIDENCE_SUFFIXES}")
            evidence[key] = float(value)
        object.__setattr__(self, "evidence", evidence)
        object.__setattr__(self, "piece_ids", tuple(self.piece_ids))
        object.__setattr__(self, "interpretations", tuple(self.interpretations))
        object.__setattr__(self, "colors", tuple(str(getattr(c, "value", c)) for c in self.colors))
        if self.target_mm is not None:
            object.__setattr__(self, "target_mm", (float(self.target_mm[0]), float(self.target_mm[1])))

    def __hash__(self) -> int:
        # evidence is a dict; hash its items so rulings can be deduplicated in sets across frames
        return hash(
            (
                self.game,
                self.rule,
                self.decision,
                self.explanation,
                self.piece_ids,
                tuple(sorted(self.evidence.items())),
                self.confidence,
                self.frame_idx,
                self.interpretations,
                self.colors,
                self.target_mm,
            )
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; floats rounded to 0.001 mm, well under any camera's resolution."""
        return {
            "game": self.game,
            "rule": self.rule,
            "decision": self.decision.value,
            "explanation": self.explanation,
            "piece_ids": list(self.piece_ids),
            "evidence": {k: round(v, 3) for k, v in self.evidence.items()},
            "confidence": round(self.confidence, 4),
            "frame_idx": self.frame_idx,
            "interpretations": list(self.interpretations),
            "colors": list(self.colors),
            "target_mm": None if self.target_mm is None else [round(v, 3) for v in self.target_mm],
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class TiddlywinksParams:
    """Decision margins and thresholds of the tiddlywinks judges.

    ``eps_mm`` overrides the margin everywhere (a scene's own ``eps_mm`` wins over it); otherwise a comparison
    uses ``eps_sigma_factor`` x the combined position sigma of the winks involved, never below ``min_eps_mm``
    (RULES.md section 0).
    """

    eps_mm: float | None = None
    eps_sigma_factor: float = 2.0
    min_eps_mm: float = MIN_EPS_MM
    # A squop whose vertical order rests on heights closer than this is unknown without depth (TW I-13):
    # half a wink thickness, less than any real pile step.
    min_height_step_mm: float = 0.75
    # A wink tilted more than this and touching the pot's top-rim circle is leaning on the pot (TW P9).
    pot_support_min_tilt_deg: float = 3.0
    frame_idx: int | None = None

    def __post_init__(self) -> None:
        if self.eps_mm is not None and not (math.isfinite(self.eps_mm) and self.eps_mm > 0):
            raise AdjudicatorError(f"eps_mm must be positive, got {self.eps_mm!r}")
        if not self.min_eps_mm > 0:
            raise AdjudicatorError(f"min_eps_mm must be positive, got {self.min_eps_mm!r}")


# The default parameters, shared so function defaults need no call.
DEFAULT_PARAMS = TiddlywinksParams()
