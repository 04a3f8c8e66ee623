"""Ice Tiddly Winks judges (RULES.md 5): launch returns (IT Launch), piece scores and the result (IT Score).

Each judge names its clause. A verdict the detector was unsure of is referred to a human, never guessed; a
hidden nested piece is ``UNDECIDED`` until the outer piece is lifted (IT I-3).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from adjudicator.types import AdjudicatorError, Decision, Ruling
from geometry.pyramids import UPRIGHT_MAX_TILT_DEG, IcePiece, StartLine, pips

GAME = "ice-tiddlywinks"


@dataclass(frozen=True, slots=True, kw_only=True)
class IceWinksParams:
    """Margins of the Ice Tiddly Winks judges.

    ``tilt_eps_deg``: an axis tilt within this of the P1 limit (5 deg) is too close to call.
    ``stash_eps_mm``: a base centroid within this of a start line is too close to call (IT I-4); RULES.md
    section 0's default margin floor.
    ``min_confidence``: a detector verdict below this confidence is referred to the umpire.
    """

    max_upright_tilt_deg: float = UPRIGHT_MAX_TILT_DEG
    tilt_eps_deg: float = 1.0
    stash_eps_mm: float = 2.0
    min_confidence: float = 0.5
    frame_idx: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_upright_tilt_deg", "tilt_eps_deg", "stash_eps_mm"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v >= 0):
                raise AdjudicatorError(f"{name} must be finite and >= 0, got {v!r}")
        if not 0.0 <= self.min_confidence <= 1.0:
            raise AdjudicatorError(f"min_confidence must be in [0, 1], got {self.min_confidence!r}")


DEFAULT_ICE_PARAMS = IceWinksParams()


def _ruling(rule: str, decision: Decision, explanation: str, params: IceWinksParams, **kw) -> Ruling:
    return Ruling(game=GAME, rule=rule, decision=decision, explanation=explanation, frame_idx=params.frame_idx, **kw)


def own_start_line(piece: IcePiece, start_lines: Iterable[StartLine]) -> StartLine | None:
    for line in start_lines:
        if line.color == piece.color:
            return line
    return None


def judge_launch(
    piece: IcePiece, start_lines: Iterable[StartLine] = (), params: IceWinksParams = DEFAULT_ICE_PARAMS
) -> Ruling:
    """IT Launch (A1): a missile at rest off the table or in its own stash area (P3, by base centroid, IT I-4)
    goes back for relaunch (``REPLAY``); anywhere else on the table, including an opponent's stash, it stays
    (``LEGAL``)."""
    ids = (piece.piece_id,)
    if not piece.on_table:
        return _ruling(
            "IT Launch", Decision.REPLAY, f"{piece.piece_id} is off the table: returned for relaunch", params,
            piece_ids=ids, colors=(piece.color,),
        )
    line = own_start_line(piece, start_lines)
    if line is None:
        return _ruling(
            "IT Launch", Decision.LEGAL, f"{piece.piece_id} rests on the table: played, it stays", params,
            piece_ids=ids, colors=(piece.color,),
        )
    depth = float(line.depth_into_stash_mm([piece.center_mm])[0])
    evidence = {"depth_into_own_stash_mm": depth}
    if abs(depth) <= params.stash_eps_mm:
        return _ruling(
            "IT Launch", Decision.TOO_CLOSE_TO_CALL,
            f"{piece.piece_id}'s base centroid is {depth:+.1f} mm from its own start line", params,
            piece_ids=ids, evidence=evidence, interpretations=("IT I-4",), colors=(piece.color,),
        )
    if depth > 0:
        return _ruling(
            "IT Launch", Decision.REPLAY,
            f"{piece.piece_id} rests {depth:.1f} mm inside its own stash area: returned for relaunch", params,
            piece_ids=ids, evidence=evidence, interpretations=("IT I-4",), colors=(piece.color,),
        )
    return _ruling(
        "IT Launch", Decision.LEGAL,
        f"{piece.piece_id} rests outside its own stash area: played, it stays", params,
        piece_ids=ids, evidence=evidence, interpretations=("IT I-4",), colors=(piece.color,),
    )


def judge_piece_score(
    piece: IcePiece,
    pieces_by_id: dict[str, IcePiece],
    start_lines: Iterable[StartLine] = (),
    params: IceWinksParams = DEFAULT_ICE_PARAMS,
) -> Ruling:
    """IT Score (A2) for one piece: upright (P1) scores its pips; a base resting on a non-upright piece (P2,
    IT I-1) double; on an upright piece single (IT I-2); lying, off the table (IT I-5), the launcher (IT I-6)
    or returned to its own stash nothing; hidden ``UNDECIDED`` (IT I-3); an unsure detection is referred."""
    ids = (piece.piece_id,)
    colors = (piece.color,)
    ev = {"pips_count": float(pips(piece.size)), "axis_tilt_deg": piece.axis_tilt_deg}

    def score(points: int, why: str, interp: tuple[str, ...] = ()) -> Ruling:
        return _ruling(
            "IT Score", Decision.SCORE, f"{piece.piece_id} ({piece.color} {piece.size}) {why}: {points} points",
            params, piece_ids=ids, evidence={**ev, "score_points": float(points)}, interpretations=interp,
            colors=colors, confidence=piece.confidence,
        )

    if piece.hidden:
        return _ruling(
            "IT Score", Decision.UNDECIDED,
            f"{piece.piece_id} is hidden under another piece: lift the outer piece to see it", params,
            piece_ids=ids, evidence=ev, interpretations=("IT I-3",), colors=colors, confidence=piece.confidence,
        )
    if piece.flagged or piece.confidence < params.min_confidence:
        return _ruling(
            "IT Score", Decision.REFER_TO_UMPIRE,
            f"{piece.piece_id}: the photo does not settle its size, colour or pose; please look", params,
            piece_ids=ids, evidence={**ev, "confidence_ratio": piece.confidence}, colors=colors,
            confidence=piece.confidence,
        )
    if piece.is_launcher:
        return score(0, "is a launcher", ("IT I-6",))
    if not piece.on_table:
        return score(0, "is off the table", ("IT I-5",))
    line = own_start_line(piece, start_lines)
    if line is not None and float(line.depth_into_stash_mm([piece.center_mm])[0]) > params.stash_eps_mm:
        return score(0, "is in its own stash area (returned, not scored)", ("IT I-4",))
    if piece.pose == "lying":
        return score(0, "is lying")
    supports = [s for s in piece.supported_by if s != "table"]
    missing = [s for s in supports if s not in pieces_by_id]
    if missing:
        return _ruling(
            "IT Score", Decision.UNDECIDED, f"{piece.piece_id} rests on unknown pieces {missing}", params,
            piece_ids=ids, evidence=ev, colors=colors,
        )
    under = [pieces_by_id[s] for s in supports]
    if any(u.pose == "lying" for u in under) or piece.pose == "standing_on_lying":
        return score(2 * piece.pips, "rests on a lying piece (double)", ("IT I-1",))
    if under:  # every support upright: stacked or nested
        return score(piece.pips, "rests on an upright piece", ("IT I-2",))
    tilt_margin = params.max_upright_tilt_deg - abs(piece.axis_tilt_deg)
    if abs(tilt_margin) <= params.tilt_eps_deg:
        return _ruling(
            "IT Score", Decision.TOO_CLOSE_TO_CALL,
            f"{piece.piece_id}'s axis tilt {piece.axis_tilt_deg:.1f} deg is at the upright limit", params,
            piece_ids=ids, evidence={**ev, "tilt_margin_deg": tilt_margin}, colors=colors,
        )
    if tilt_margin < 0:
        return score(0, f"is not upright (axis tilt {piece.axis_tilt_deg:.1f} deg)")
    return score(piece.pips, "is upright")


def judge_result(
    scores: dict[str, int],
    params: IceWinksParams = DEFAULT_ICE_PARAMS,
    pending_points: dict[str, int] | None = None,
    pending_ids: tuple[str, ...] = (),
) -> Ruling:
    """IT Score: most points wins; equal top scores share the win (IT I-7).

    ``pending_points`` is the most each colour could still gain from pieces not yet decided (hidden,
    referred): the result stands only if no such gain could change who wins; otherwise ``UNDECIDED``.
    """
    if not scores:
        return _ruling("IT Score", Decision.UNDECIDED, "no scoring colours on the table", params)
    pending = {c: v for c, v in (pending_points or {}).items() if v > 0}
    if pending:
        top_now = max(scores.values())
        leaders = [c for c, v in scores.items() if v == top_now]
        if len(leaders) > 1 or any(
            scores.get(c, 0) + v >= top_now for c, v in pending.items() if c != leaders[0]
        ):
            return _ruling(
                "IT Score", Decision.UNDECIDED,
                f"the winner depends on {len(pending_ids)} undecided piece(s): look at them first", params,
                piece_ids=pending_ids, colors=tuple(sorted(pending)),
                evidence={"undecided_max_points": float(sum(pending.values()))},
            )
    top = max(scores.values())
    winners = tuple(sorted(c for c, v in scores.items() if v == top))
    text = ", ".join(f"{c} {v}" for c, v in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0])))
    return _ruling(
        "IT Score", Decision.WINNER,
        (f"shared win: {' and '.join(winners)}" if len(winners) > 1 else f"{winners[0]} wins") + f" ({text})",
        params, colors=winners, evidence={"top_score_points": float(top)},
        interpretations=("IT I-7",) if len(winners) > 1 else (),
    )


def adjudicate(
    pieces: Iterable[IcePiece],
    start_lines: Iterable[StartLine] = (),
    params: IceWinksParams = DEFAULT_ICE_PARAMS,
    colors: Iterable[str] | None = None,
) -> tuple[dict[str, int], tuple[Ruling, ...]]:
    """Every piece's launch and score rulings, the per-colour scores and the result, in rule order.

    ``colors`` are the players' colours (every colour seen when None); pieces of other colours (start-line
    markers) are not scored. Scores count only decided ``SCORE`` rulings; undecided and referred pieces are
    left out and named by their own rulings.
    """
    pieces = tuple(pieces)
    start_lines = tuple(start_lines)
    by_id = {p.piece_id: p for p in pieces}
    if len(by_id) != len(pieces):
        raise AdjudicatorError("piece ids must be unique")
    players = tuple(colors) if colors else tuple(sorted({p.color for p in pieces}))
    rulings: list[Ruling] = []
    scores = {c: 0 for c in players}
    pending: dict[str, int] = {}
    pending_ids: list[str] = []
    for p in pieces:
        if p.color not in scores:
            continue
        if start_lines and not p.hidden:
            rulings.append(judge_launch(p, start_lines, params))
        r = judge_piece_score(p, by_id, start_lines, params)
        rulings.append(r)
        if r.decision is Decision.SCORE:
            scores[p.color] += int(r.evidence["score_points"])
        else:  # undecided or referred: at most double its pips
            pending[p.color] = pending.get(p.color, 0) + 2 * p.pips
            pending_ids.append(p.piece_id)
    rulings.append(judge_result(scores, params, pending, tuple(pending_ids)))
    return scores, tuple(rulings)
