"""Ring-marbles matches followed photo by photo through the service: the state kept between photos.

A match is the rule engine's ``MarblesMatch`` plus what only the photos tell: where each tolley on the ring lies
(so the next photo's tolleys are named by position, without the umpire typing ids), the current position (the
last photo's analysis: the next shot's 'before') and the playing order (MB 9(c)). Functions here are pure on a
JSON state; ``api.routes.marbles`` applies them inside ``Storage.advance_match`` so shots never interleave.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from adjudicator.marbles import (
    MarblesMatch,
    apply_shot,
    individual_match,
    judge_setup,
    next_player,
    team_match,
    team_order,
    tie_break_match,
)
from adjudicator.types import AdjudicatorError, Decision, Ruling
from api.marbles_service import SAME_TOLLEY_MM, measure_shot, nearest_pairs, shot_of, tolleys_on_ring

KINDS = ("team", "individual", "tie_break")


class MatchInputError(ValueError):
    """A match or shot the rules cannot take; the message names the player, option or photo at fault."""


class MatchOverError(MatchInputError):
    """A shot posted after the match was won."""


# --- the state --------------------------------------------------------------------------------------------------


def match_to_dict(m: MarblesMatch) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields(m):
        v = getattr(m, f.name)
        out[f.name] = sorted(v) if isinstance(v, frozenset) else list(v) if isinstance(v, tuple) else v
    return out


def match_from_dict(d: dict[str, Any]) -> MarblesMatch:
    kw = dict(d)
    kw["players"] = tuple(kw["players"])
    kw["eliminated"] = frozenset(kw.get("eliminated", ()))
    kw["resting"] = frozenset(kw.get("resting", ()))
    return MarblesMatch(**kw)


def new_match_state(kind: str, players: list[str], teams: dict[str, str] | None = None,
                    order: list[str] | None = None, calibration_id: str | None = None) -> dict[str, Any]:
    """A fresh match: team (MB 9: 49 marbles, first to 25), individual (MB 11(b),(c)) or tie-break (MB 11(d)).

    ``order`` is the playing order (default: ``players``; in a team match the teams alternate, each in the
    order its players are listed).
    """
    if kind not in KINDS:
        raise MatchInputError(f"match kind must be one of {', '.join(KINDS)}, got {kind!r}")
    try:
        if kind == "team":
            if not teams or set(teams) != set(players):
                raise MatchInputError("a team match needs 'teams' naming the team of every player")
            sides = list(dict.fromkeys(teams[p] for p in players))
            if len(sides) != 2:
                raise MatchInputError(f"a team match is two teams, got {len(sides)}: {sides}")
            m = team_match({p: teams[p] for p in players})
            default = team_order(*(tuple(p for p in players if teams[p] == s) for s in sides))
        else:
            if teams:
                raise MatchInputError(f"'teams' is for a team match, not a {kind} one")
            m = individual_match(players) if kind == "individual" else tie_break_match(players)
            default = tuple(players)
    except AdjudicatorError as exc:
        raise MatchInputError(str(exc)) from None
    order = list(order) if order else list(default)
    if sorted(order) != sorted(players):
        raise MatchInputError(f"the playing order {order} must name every player once: {players}")
    return {"kind": kind, "match": match_to_dict(m), "order": order, "next_shooter": order[0],
            "tolleys_mm": {}, "position": None, "shots": 0, "calibration_id": calibration_id}


def summary(state: dict[str, Any]) -> dict[str, Any]:
    """What the umpire's board shows: scores, marbles left, who is out, who shoots next, the winner."""
    m = state["match"]
    return {"kind": state["kind"], "players": m["players"], "teams": m["teams"], "scores": m["scores"],
            "marbles_start": m["marbles_start"], "marbles_left": m["marbles_left"], "win_points": m["win_points"],
            "eliminated": m["eliminated"], "fouls": m["fouls"], "winner": m["winner"],
            "next_shooter": state["next_shooter"], "order": state["order"], "shots": state["shots"],
            "tolleys_on_ring_mm": state["tolleys_mm"],
            "position_counts": (state["position"] or {}).get("counts")}


def _position(doc: dict[str, Any]) -> dict[str, Any]:
    """The part of an analysis the next shot compares with: pieces on the ring and the counts."""
    keep = ("id", "kind", "center_mm", "on_ring", "diameter_mm")
    return {"pieces": [{k: p[k] for k in keep if k in p} for p in doc.get("pieces", [])],
            "counts": doc.get("counts")}


def _name_by_position(known_mm: dict[str, list[float]], doc: dict[str, Any]) -> dict[str, str]:
    """Tolley id -> player: each known tolley position takes the nearest tolley on the ring in ``doc`` within
    ``SAME_TOLLEY_MM``."""
    on = tolleys_on_ring(doc)
    players = list(known_mm)
    pairs = nearest_pairs([known_mm[p] for p in players], [t["center_mm"] for t in on], SAME_TOLLEY_MM)
    return {on[j]["id"]: players[i] for i, j in pairs.items()}


# --- photos -------------------------------------------------------------------------------------------------


def set_position(state: dict[str, Any], doc: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A photo of the ring between shots (or of the set-up) becomes the next shot's 'before'. Before the
    first shot it is the set-up and is checked: the right number of marbles, close-packed at the centre
    (MB 9(e), 11(b), 11(d))."""
    rulings: list[Ruling] = []
    if state["shots"] == 0:
        group = [p["center_mm"] for p in doc.get("pieces", []) if p.get("kind") == "marble" and p.get("on_ring")]
        rulings.append(judge_setup(group, int(state["match"]["marbles_start"])))
    new = {**state, "position": _position(doc)}
    record = {"counts": doc.get("counts"), "rulings": [r.to_dict() for r in rulings]}
    return new, record


def play_shot(state: dict[str, Any], after_doc: dict[str, Any], *, shooter: str | None = None,
              foul: str | None = None, before_doc: dict[str, Any] | None = None
              ) -> tuple[dict[str, Any], dict[str, Any]]:
    """One shot, from the position before it (the stored one unless ``before_doc``) and the photo after it:
    MB 5(d) positions 1-4, eliminations, fouls (MB 7) and the win, with the running scores."""
    match = match_from_dict(state["match"])
    if match.winner is not None:
        raise MatchOverError(f"the match is over: {match.winner} has won")
    before = before_doc if before_doc is not None else state["position"]
    if before is None:
        raise MatchInputError("no position before this shot: post a photo of the ring first (…/position), or "
                              "send the 'before' photo with the shot")
    shooter = shooter or state["next_shooter"]
    if shooter is None:
        raise MatchInputError("nobody is left to shoot; name the shooter")
    owners = _name_by_position(state["tolleys_mm"], before)
    own = [tid for tid, player in owners.items() if player == shooter]
    shot_m = measure_shot(before, after_doc, shooter=shooter, owners=owners, shooter_tolley=own[0] if own else None)
    unowned = [o for o in shot_m["tolleys_knocked_off"] if o not in match.players]
    shot_m["tolleys_knocked_off"] = [o for o in shot_m["tolleys_knocked_off"] if o in match.players]
    shot_m["unowned_tolleys_knocked_off"] = unowned
    try:
        after_match, rulings = apply_shot(match, shot_of(shot_m, foul))
    except AdjudicatorError as exc:
        raise MatchInputError(str(exc)) from None
    if unowned:
        rulings.append(Ruling(
            game="marbles", rule="MB 5(d)3", decision=Decision.REFER_TO_UMPIRE, interpretations=("MB I-4",),
            evidence={"tolleys_count": len(unowned)},
            explanation=f"{len(unowned)} tolley(s) left the ring that no player was known to have resting there "
            f"({', '.join(unowned)}): the umpire says whose, as an owner knocked off is eliminated"))
    shoot_again = foul is None and any(r.decision is Decision.BONUS_SHOTS for r in rulings)
    if after_match.winner is not None:
        nxt = None
    elif shoot_again:
        nxt = shooter
    else:
        nxt = next_player(after_match, tuple(state["order"]), shooter)
    # Where the tolleys on the ring lie now: the resting ones where the after photo finds them, the shooter's
    # where it stopped while it rests or he shoots again from it (MB 6(b)).
    stay = set(after_match.resting) | ({shooter} if shoot_again else set())
    known = {p: xy for p, xy in state["tolleys_mm"].items() if p in stay and p != shooter}
    found = _name_by_position(known, after_doc)
    on = {t["id"]: t["center_mm"] for t in tolleys_on_ring(after_doc)}
    tolleys_mm = {p: [round(float(v), 2) for v in on[tid]] for tid, p in found.items()}
    tolleys_mm.update({p: xy for p, xy in known.items() if p not in tolleys_mm})
    if shooter in stay and shot_m["shooter_tolley_at_mm"] is not None:
        tolleys_mm[shooter] = shot_m["shooter_tolley_at_mm"]
    new = {**state, "match": match_to_dict(after_match), "next_shooter": nxt, "tolleys_mm": tolleys_mm,
           "position": _position(after_doc), "shots": state["shots"] + 1}
    record = {"shooter": shooter, "foul": foul, "shot": shot_m, "rulings": [r.to_dict() for r in rulings],
              "scores": dict(after_match.scores), "eliminated": sorted(after_match.eliminated),
              "marbles_left": after_match.marbles_left, "winner": after_match.winner, "next_shooter": nxt}
    return new, record
