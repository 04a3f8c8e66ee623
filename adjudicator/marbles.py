"""British ring marbles, Tinsley Green rules (RULES.md section 4): MB A1-A5 as pure functions.

Judges take measurements in ring-frame millimetres (never pixels) and return ``Ruling``s citing the clause.
A match is a frozen ``MarblesMatch``; ``apply_shot`` returns the next match and the rulings of that shot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from adjudicator.types import AdjudicatorError, Decision, Ruling
from geometry.constants import MIN_EPS_MM
from geometry.marbles import (
    TEAM_MATCH_MARBLES,
    TEAM_WIN_POINTS,
    TIE_BREAK_MARBLES,
    TIE_BREAK_WIN_POINTS,
    check_close_packed,
    individual_win_points,
    ring_margin_mm,
)

GAME = "marbles"
FOULS_TO_ELIMINATE = 3  # MB 7: third foul in a game
FOUL_KINDS = ("fudging", "cabbaging", "blocking")


def decision_margin_mm(*sigmas_mm: float, eps_mm: float | None = None, factor: float = 2.0) -> float:
    """RULES.md section 0: 2 x the combined position sigma of the pieces involved, never below 0.5 mm."""
    if eps_mm is not None:
        if not (math.isfinite(eps_mm) and eps_mm > 0):
            raise AdjudicatorError(f"eps_mm must be positive, got {eps_mm!r}")
        return float(eps_mm)
    combined = math.sqrt(sum(float(s) ** 2 for s in sigmas_mm))
    return max(factor * combined, MIN_EPS_MM)


# --- MB P1 / I-1: on or off the ring ------------------------------------------------------------------------


def judge_on_ring(
    piece_id: str, center_mm, *, position_sigma_mm: float = 0.0, eps_mm: float | None = None
) -> Ruling:
    """MB 1 with MB I-1: a ball is on the ring when its plan centre is inside R; within eps it is too close."""
    eps = decision_margin_mm(position_sigma_mm, eps_mm=eps_mm)
    margin = ring_margin_mm(center_mm)
    evidence = {"ring_margin_mm": margin, "eps_mm": eps}
    if abs(margin) <= eps:
        return Ruling(
            game=GAME, rule="MB 1", decision=Decision.TOO_CLOSE_TO_CALL, piece_ids=(piece_id,),
            evidence=evidence, interpretations=("MB I-1",), confidence=0.5,
            explanation=f"{piece_id} lies {margin:+.1f} mm from the ring edge, within {eps:.1f} mm: referee decides",
        )
    on = margin > 0
    return Ruling(
        game=GAME, rule="MB 1", decision=Decision.IN if on else Decision.OUT, piece_ids=(piece_id,),
        evidence=evidence, interpretations=("MB I-1",),
        explanation=f"{piece_id} is {'on' if on else 'off'} the ring ({abs(margin):.1f} mm "
        f"{'inside' if on else 'outside'} the edge)",
    )


# --- set-up: MB 9(e), 11(b), 11(d) -------------------------------------------------------------------------


def judge_setup(centers_mm, expected: int = TEAM_MATCH_MARBLES, *, rule: str | None = None) -> Ruling:
    """MB 9(e) / 11(b) / 11(d): the right number of marbles, close-packed and touching, at the ring centre."""
    if rule is None:
        rule = {TEAM_MATCH_MARBLES: "MB 9(e)", TIE_BREAK_MARBLES: "MB 11(d)"}.get(expected, "MB 11(b)")
    chk = check_close_packed(centers_mm, expected)
    evidence = {
        "marbles_count": chk.count,
        "expected_count": chk.expected,
        "min_contacts_count": chk.min_contacts,
        "centroid_offset_mm": chk.centroid_offset_mm if math.isfinite(chk.centroid_offset_mm) else -1.0,
    }
    if chk.ok:
        return Ruling(game=GAME, rule=rule, decision=Decision.LEGAL, evidence=evidence,
                      explanation=f"{chk.count} marbles close-packed at the centre")
    faults = []
    if chk.count != chk.expected:
        faults.append(f"{chk.count} marbles, not {chk.expected}")
    if chk.count and not chk.connected:
        faults.append("group not all touching")
    elif chk.count >= 2 and chk.min_contacts < 2:
        faults.append("a marble touches fewer than 2 others")
    if chk.count and chk.centroid_offset_mm > 10.0:
        faults.append(f"group centre {chk.centroid_offset_mm:.1f} mm from the ring centre")
    return Ruling(game=GAME, rule=rule, decision=Decision.ILLEGAL, evidence=evidence,
                  explanation="set-up wrong: " + "; ".join(faults))


# --- MB A1: who plays first ---------------------------------------------------------------------------------


def judge_first_player(
    drop_distances_mm: dict[str, float], *, position_sigma_mm: float = 0.0, eps_mm: float | None = None,
    team_match: bool = True,
) -> Ruling:
    """MB 9(f) (A1, I-2, I-3): the tolley dropped closest to the scribed line chooses; ties within eps re-drop.

    ``drop_distances_mm`` maps each captain (team match) or player (individual) to the MB P3 distance.
    ``colors`` of the ruling lists the order, closest first (WINNER), or the tied names (TOO_CLOSE_TO_CALL).
    """
    if len(drop_distances_mm) < 2:
        raise AdjudicatorError(f"need at least two drops, got {list(drop_distances_mm)}")
    eps = decision_margin_mm(position_sigma_mm, position_sigma_mm, eps_mm=eps_mm)
    order = sorted(drop_distances_mm, key=lambda k: drop_distances_mm[k])
    evidence = {f"{k}_drop_mm": float(v) for k, v in drop_distances_mm.items()}
    evidence["eps_mm"] = eps
    interp = ("MB I-2",) if team_match else ("MB I-2", "MB I-3")
    tied = [
        k for k in order
        if any(k != j and abs(drop_distances_mm[k] - drop_distances_mm[j]) <= eps for j in order)
    ]
    first_tied = order[0] in tied
    if first_tied or (not team_match and tied):
        return Ruling(
            game=GAME, rule="MB 9(f)", decision=Decision.TOO_CLOSE_TO_CALL, evidence=evidence,
            interpretations=interp, colors=tuple(tied), confidence=0.5,
            explanation="too close to call: " + ", ".join(f"{k} {drop_distances_mm[k]:.1f} mm" for k in tied)
            + f" within {eps:.1f} mm; re-drop",
        )
    gap = drop_distances_mm[order[1]] - drop_distances_mm[order[0]]
    evidence["margin_mm"] = gap
    what = "chooses whether his team plays first" if team_match else "plays first"
    return Ruling(
        game=GAME, rule="MB 9(f)", decision=Decision.WINNER, evidence=evidence, interpretations=interp,
        colors=tuple(order),
        explanation=f"{order[0]} dropped closest ({drop_distances_mm[order[0]]:.1f} mm, {gap:.1f} mm clear) "
        f"and {what}",
    )


# --- the match state ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Shot:
    """What one shot did, as measured from the photos before and after it (MB 5(d)).

    ``tolleys_off`` names the owners of other tolleys knocked off the ring; ``shooter_on_ring`` says whether
    the shooter's tolley stayed on; ``foul`` is one of ``FOUL_KINDS`` or None (MB 7).
    """

    shooter: str
    marbles_off: int
    shooter_on_ring: bool
    tolleys_off: tuple[str, ...] = ()
    tolley_at_mm: tuple[float, float] | None = None
    foul: str | None = None

    def __post_init__(self) -> None:
        if self.marbles_off < 0:
            raise AdjudicatorError(f"marbles knocked off must be >= 0, got {self.marbles_off}")
        if self.foul is not None and self.foul not in FOUL_KINDS:
            raise AdjudicatorError(f"foul must be one of {FOUL_KINDS}, got {self.foul!r}")
        if self.shooter in self.tolleys_off:
            raise AdjudicatorError(f"the shooter {self.shooter!r} is named among the other tolleys knocked off")
        object.__setattr__(self, "tolleys_off", tuple(self.tolleys_off))


@dataclass(frozen=True, slots=True, kw_only=True)
class MarblesMatch:
    """A match between shots. ``teams`` maps player -> team (team match) or is empty (individual match).

    ``resting`` holds the players whose tolleys rest on the ring (MB P2); ``turn_points`` counts the points of
    the turn in progress, which a foul does not take away (MB 7).
    """

    players: tuple[str, ...]
    teams: dict[str, str] = field(default_factory=dict)
    marbles_start: int = TEAM_MATCH_MARBLES
    marbles_left: int = TEAM_MATCH_MARBLES
    win_points: int = TEAM_WIN_POINTS
    tie_break: bool = False
    scores: dict[str, int] = field(default_factory=dict)
    eliminated: frozenset[str] = frozenset()
    fouls: dict[str, int] = field(default_factory=dict)
    resting: frozenset[str] = frozenset()
    turn_points: int = 0
    winner: str | None = None

    def __post_init__(self) -> None:
        if len(set(self.players)) != len(self.players) or len(self.players) < 2:
            raise AdjudicatorError(f"a match needs two or more distinct players, got {self.players}")
        if self.teams and set(self.teams) != set(self.players):
            raise AdjudicatorError(f"every player needs a team, got {self.teams}")
        if not 0 <= self.marbles_left <= self.marbles_start:
            raise AdjudicatorError(f"marbles left {self.marbles_left} not within 0..{self.marbles_start}")

    @property
    def is_team_match(self) -> bool:
        return bool(self.teams)

    def side(self, player: str) -> str:
        """Who scores for ``player``: the team in a team match, the player in an individual one."""
        return self.teams[player] if self.teams else player

    def score(self, side: str) -> int:
        return int(self.scores.get(side, 0))


def team_match(teams: dict[str, str]) -> MarblesMatch:
    """MB 9: 49 marbles, first team to 25."""
    return MarblesMatch(players=tuple(teams), teams=dict(teams))


def individual_match(players) -> MarblesMatch:
    """MB 11(b),(c): max(4p + 1, 25) marbles; more than half of them wins."""
    from geometry.marbles import starting_marbles

    players = tuple(players)
    n = starting_marbles(len(players))
    return MarblesMatch(players=players, marbles_start=n, marbles_left=n, win_points=individual_win_points(n))


def tie_break_match(players) -> MarblesMatch:
    """MB 11(d),(e): 13 marbles, first to 7."""
    return MarblesMatch(players=tuple(players), marbles_start=TIE_BREAK_MARBLES, marbles_left=TIE_BREAK_MARBLES,
                        win_points=TIE_BREAK_WIN_POINTS, tie_break=True)


def _eliminate(match: MarblesMatch, player: str, rule: str, why: str) -> tuple[MarblesMatch, Ruling]:
    ruling = Ruling(game=GAME, rule=rule, decision=Decision.FORFEIT, colors=(player,),
                    interpretations=("MB I-6",), explanation=f"{player} eliminated: {why}; keeps his points")
    return replace(match, eliminated=match.eliminated | {player}, resting=match.resting - {player}), ruling


def judge_winner(match: MarblesMatch) -> list[Ruling]:
    """MB A5: team to 25 (MB 9(g)); individual over half (MB 11(c)); ties -> 13-marble tie-break (MB 11(d))."""
    rule_win = "MB 11(d)" if match.tie_break else ("MB 9(g)" if match.is_team_match else "MB 11(c)")
    sides = sorted({match.side(p) for p in match.players})
    best = max(sides, key=match.score)
    if match.score(best) >= match.win_points:
        return [Ruling(game=GAME, rule=rule_win, decision=Decision.WINNER, colors=(best,),
                       evidence={"score_points": match.score(best), "win_points": match.win_points},
                       explanation=f"{best} reaches {match.score(best)} of {match.win_points} and wins")]
    active = [p for p in match.players if p not in match.eliminated]
    if not active:
        return [Ruling(game=GAME, rule=rule_win, decision=Decision.UNDECIDED, interpretations=("MB I-7",),
                       explanation="every player is eliminated before a win: referee decides")]
    if match.marbles_left > 0:
        return []
    top = match.score(best)
    leaders = tuple(s for s in sides if match.score(s) == top)
    if len(leaders) == 1:
        return [Ruling(game=GAME, rule=rule_win, decision=Decision.WINNER, colors=leaders,
                       evidence={"score_points": top},
                       explanation=f"all marbles are off; {best} has the highest score ({top})")]
    return [Ruling(game=GAME, rule="MB 11(d)", decision=Decision.REPLAY, colors=leaders,
                   evidence={"score_points": top, "tie_break_marbles_count": TIE_BREAK_MARBLES,
                             "win_points": TIE_BREAK_WIN_POINTS},
                   explanation=f"all marbles are off with {', '.join(leaders)} level on {top}: tie-break game of "
                   f"{TIE_BREAK_MARBLES} marbles, order by drop (MB 9(f)), first to {TIE_BREAK_WIN_POINTS}")]


def apply_shot(match: MarblesMatch, shot: Shot) -> tuple[MarblesMatch, list[Ruling]]:
    """MB A2 (shot positions 1-4, MB 5(d)), A3 (fouls, MB 7) and A5 (winning) for one shot.

    Returns the match after the shot and its rulings in rule order: fouls, the shot, eliminations, the win.
    """
    if match.winner is not None:
        raise AdjudicatorError(f"the match is over: {match.winner} has won")
    if shot.shooter not in match.players:
        raise AdjudicatorError(f"unknown shooter {shot.shooter!r}; players are {match.players}")
    if shot.shooter in match.eliminated:
        raise AdjudicatorError(f"{shot.shooter} is eliminated and cannot shoot")
    for p in shot.tolleys_off:
        if p not in match.players:
            raise AdjudicatorError(f"unknown tolley owner {p!r}; players are {match.players}")
    if shot.marbles_off > match.marbles_left:
        raise AdjudicatorError(f"{shot.marbles_off} marbles knocked off but only {match.marbles_left} were left")
    rulings: list[Ruling] = []
    shooter = shot.shooter
    side = match.side(shooter)
    m = shot.marbles_off
    evidence = {"marbles_off_count": m, "tolleys_off_count": len(shot.tolleys_off)}

    if shot.foul is not None:  # MB A3
        fouls = dict(match.fouls)
        fouls[shooter] = fouls.get(shooter, 0) + 1
        match = replace(match, fouls=fouls)
        kept = match.turn_points
        rulings.append(Ruling(
            game=GAME, rule="MB 7", decision=Decision.ILLEGAL, colors=(shooter,),
            evidence={**evidence, "fouls_count": fouls[shooter], "kept_points": kept},
            explanation=f"{shot.foul} by {shooter}: the shot scores nothing, the turn ends and he removes his "
            f"tolley, keeping {kept} earlier points of the turn",
        ))
        if m:
            rulings.append(Ruling(
                game=GAME, rule="MB 7", decision=Decision.REPLACE_AT, target_mm=(0.0, 0.0),
                evidence={"marbles_off_count": m},
                explanation=f"{m} marble(s) knocked off by the foul go back as near the centre as possible",
            ))
        for owner in shot.tolleys_off:
            if match.is_team_match and match.side(owner) == side:
                match, r = _eliminate(match, owner, "MB 7", f"team-mate's tolley knocked off by {shooter}'s foul")
                rulings.append(r)
            else:
                rulings.append(Ruling(
                    game=GAME, rule="MB 7", decision=Decision.REPLACE_AT, colors=(owner,),
                    interpretations=("MB I-4",),
                    explanation=f"{owner}'s tolley is returned to him; he next shoots from off the ring",
                ))
                match = replace(match, resting=match.resting - {owner})
        match = replace(match, resting=match.resting - {shooter}, turn_points=0)
        if fouls[shooter] >= FOULS_TO_ELIMINATE and shooter not in match.eliminated:
            match, r = _eliminate(match, shooter, "MB 7", f"third foul ({shot.foul})")
            rulings.append(r)
        return match, rulings + judge_winner(match)

    scores = dict(match.scores)
    scores[side] = scores.get(side, 0) + m
    shoot_again = shot.shooter_on_ring and (m + len(shot.tolleys_off)) >= 1
    if not shot.shooter_on_ring:
        position = "MB 5(d)2" if m else "MB 5(d)1"
        text = f"tolley off the ring: {m} point(s), turn ends"
    elif shoot_again:
        position = "MB 5(d)4"
        text = f"tolley stays on with {m} marble(s) and {len(shot.tolleys_off)} tolley(s) off: {m} point(s), " \
            "shoot again from where it lies"
    else:
        position = "MB 5(d)3"
        text = "tolley stays on, nothing knocked off: no points; it stays where it lies for the next turn, and " \
            "if knocked off before then its owner is eliminated"
    interp = ("MB I-5",) if shoot_again and m == 0 else ()
    evidence.update({"score_points": m, "shoot_again_count": int(shoot_again),
                     "total_points": scores[side]})
    rulings.append(Ruling(
        game=GAME, rule=position, decision=Decision.BONUS_SHOTS if shoot_again else Decision.SCORE,
        colors=(side,), evidence=evidence, interpretations=interp, target_mm=shot.tolley_at_mm,
        explanation=f"{shooter}: {text}",
    ))
    resting = set(match.resting) - {shooter}
    if shot.shooter_on_ring and not shoot_again:
        resting.add(shooter)  # MB P2, position 3
    match = replace(
        match, scores=scores, marbles_left=match.marbles_left - m, resting=frozenset(resting),
        turn_points=match.turn_points + m if shoot_again else 0,
    )
    for owner in shot.tolleys_off:  # MB P4: a resting tolley knocked off in another player's turn
        match, r = _eliminate(match, owner, "MB 5(d)3", f"his resting tolley was knocked off by {shooter}")
        rulings.append(r)
    wins = judge_winner(match)
    for w in wins:
        if w.decision is Decision.WINNER:
            match = replace(match, winner=w.colors[0])
    return match, rulings + wins


def shot_rulings(match: MarblesMatch, shot: Shot) -> list[Ruling]:
    """The rulings of ``shot`` alone (``apply_shot`` without the next state)."""
    return apply_shot(match, shot)[1]


def next_player(match: MarblesMatch, order: tuple[str, ...], last: str) -> str | None:
    """MB 9(c): play passes in the fixed order, skipping eliminated players; None when nobody is left."""
    if last not in order:
        raise AdjudicatorError(f"{last!r} is not in the playing order {order}")
    i = order.index(last)
    for k in range(1, len(order) + 1):
        p = order[(i + k) % len(order)]
        if p not in match.eliminated:
            return p
    return None


def team_order(team_a: tuple[str, ...], team_b: tuple[str, ...]) -> tuple[str, ...]:
    """MB 9(c): A1, B1, A2, B2 ... in each captain's given order; the team that plays first is ``team_a``."""
    if len(team_a) != len(team_b):
        raise AdjudicatorError(f"teams of unequal size: {len(team_a)} and {len(team_b)}")
    return tuple(p for pair in zip(team_a, team_b) for p in pair)
