"""Wink identity between two rest states, and what a shot changed (moved, potted, out, disturbed, squops).

Association: winks match only within the same colour and size (at most four candidates a side). A potted
wink stays potted (TW A2: one knocked out is put back), so potted winks of the earlier state are matched to
potted winks of the later one first. The rest is an optimal assignment (Hungarian,
``scipy.optimize.linear_sum_assignment``) on *plain* plan distance with a gating radius: the linear cost (not
the squared one) never prefers splitting one long move into two short ones, so a still wink keeps its id when
another of its group passes near it, and a wink that tilts onto another (a squop) keeps its id because its
plan centre moves by a few mm only. Winks of the earlier state left unmatched are ``missing`` (hidden in the
pot, or off the mat out of view); later ones left unmatched ``appeared`` and get fresh ids.

Unplayed winks that stay unplayed are in hand behind their baseline (TW P3): their rearrangement is not a
move. Once over its baseline a wink is never unplayed again, whatever a detector says.

Disturbed winks (TW 5(b)): a moved wink is *explained* if it belongs to the played pile (the squop component
of the earlier state holding the played wink), or if its earlier footprint touches the swept path (the plan
segment from start to rest, widened by both radii plus ``contact_margin_mm``) of an explained moving wink;
explained winks propagate along chains of knocks. Moved winks left unexplained are disturbed: they moved but
nothing played could have struck them, so they go back where they were. When the played wink is not known,
every moved, unsquopped wink of the played colour is tried and the one explaining the most moves is taken.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
from scipy.optimize import linear_sum_assignment

from geometry import tiddlywinks as tw
from geometry.constants import LARGE_WINKS_PER_COLOR, SMALL_WINKS_PER_COLOR
from geometry.rest_change import RestChange
from geometry.types import Color, GeometryError, TiddlywinksScene, Wink


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchParams:
    """Thresholds of identity association and of the shot diff (all in table mm)."""

    # Knocked or disturbed winks rarely travel further than this in one shot; only the winks that may have
    # been played (``long_move_ids``) are also paired beyond it (a long pot crosses half the mat).
    gate_mm: float = 300.0
    # A leftover wink of the earlier state and a leftover of the later one this close are the same wink whose
    # colour or size the detector read differently (it keeps its earlier identity, colour and size).
    relabel_radius_mm: float = 6.0
    # Plan displacement above which a wink has moved: above the detector's rest-to-rest repeatability (up to
    # ~6 mm on the simulated 720p shot videos, though it reports sigma ~0.5-1.5 mm).
    moved_eps_mm: float = 8.0
    # Multiple of the combined position sigma also required before calling a wink moved.
    moved_sigma_factor: float = 4.0
    # A tilt change above this is a move too (a wink lifted onto another without sliding).
    moved_tilt_deg: float = 15.0
    # Slack added to the contact distance when deciding whether a moving wink's path touched another.
    contact_margin_mm: float = 6.0
    # With pixel evidence (``RestChange``): a wink's footprint grown by this much plus two position sigmas is
    # where the picture must have changed for it to have moved (blur and the change grid's cells).
    change_margin_mm: float = 4.0

    def __post_init__(self) -> None:
        for name in ("gate_mm", "moved_eps_mm", "moved_sigma_factor", "contact_margin_mm", "change_margin_mm"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v >= 0):
                raise GeometryError(f"{name} must be finite and >= 0, got {v!r}")


DEFAULT_MATCH_PARAMS = MatchParams()


@dataclass(frozen=True, slots=True, kw_only=True)
class Association:
    """``pairs`` maps later-state ids to earlier-state ids; ``missing`` / ``appeared`` are the unmatched."""

    pairs: dict[str, str]
    relabelled: tuple[str, ...] = ()  # later ids paired across colour/size (detector flips)
    missing: tuple[str, ...] = ()
    appeared: tuple[str, ...] = ()
    distances_mm: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class ShotDiff:
    """What changed between two rest states, by the earlier state's ids (see the module docstring)."""

    after: TiddlywinksScene  # the later state renamed to the earlier ids (appeared winks get fresh ids)
    moved: tuple[str, ...]
    potted: tuple[str, ...]
    out: tuple[str, ...]
    disturbed: tuple[str, ...]
    missing: tuple[str, ...]
    unseen: tuple[str, ...]
    discarded: tuple[str, ...]
    appeared: tuple[str, ...]
    played_id: str | None
    played_pile: tuple[str, ...]
    squops_made: tuple[tuple[str, str], ...]
    squops_broken: tuple[tuple[str, str], ...]
    displacement_mm: dict[str, float]

    def to_dict(self) -> dict:
        return {
            "moved": list(self.moved), "potted": list(self.potted), "out": list(self.out),
            "disturbed": list(self.disturbed), "missing": list(self.missing),
            "unseen": list(self.unseen), "discarded": list(self.discarded), "appeared": list(self.appeared),
            "played_wink": self.played_id, "played_pile": list(self.played_pile),
            "squops_made": [list(p) for p in self.squops_made],
            "squops_broken": [list(p) for p in self.squops_broken],
            "displacement_mm": {k: round(v, 2) for k, v in sorted(self.displacement_mm.items())},
        }


def _group(w: Wink) -> tuple[str, str]:
    return (w.color.value, w.size.value)


def group_capacity(size: str) -> int:
    """Winks of one colour and size in a set (TW 2): two large, four small."""
    return LARGE_WINKS_PER_COLOR if size == "large" else SMALL_WINKS_PER_COLOR


def dedupe_same_spot(scene: TiddlywinksScene, max_offset_ratio: float = 0.6
                     ) -> tuple[TiddlywinksScene, tuple[str, ...]]:
    """Drop the less confident of two same-colour winks whose centres are closer than ``max_offset_ratio`` x
    the smaller radius: one physical wink reported twice (say as large and as small). A real squop of two
    winks of one colour leaves their centres further apart than that unless stacked almost concentrically."""
    ws = sorted(scene.winks, key=lambda w: (-w.confidence, w.position_sigma_mm, w.wink_id))
    keep: list[Wink] = []
    dropped: list[str] = []
    for w in ws:
        if w.potted or w.off_mat:
            keep.append(w)
            continue
        dup = any(k.color is w.color and not (k.potted or k.off_mat)
                  and math.dist(k.center_mm, w.center_mm) < max_offset_ratio * min(k.radius_mm, w.radius_mm)
                  for k in keep)
        if dup:
            dropped.append(w.wink_id)
        else:
            keep.append(w)
    if not dropped:
        return scene, ()
    kept = {w.wink_id for w in keep}
    return with_winks(scene, [w for w in scene.winks if w.wink_id in kept]), tuple(sorted(dropped))


def trim_to_equipment(scene: TiddlywinksScene) -> tuple[TiddlywinksScene, tuple[str, ...]]:
    """At most six winks per colour (TW 2): the least confident extras are dropped (a detector's phantoms);
    returns the scene and the dropped ids. A colour's count is capped, not each size's: three 'large' winks of
    one colour are likelier a size misread (a partly hidden wink) than a phantom, and dropping a real wink would
    make a later shot pair the played wink with it."""
    keep: list[Wink] = []
    dropped: list[str] = []
    groups: dict[Color, list[Wink]] = {}
    for w in scene.winks:
        groups.setdefault(w.color, []).append(w)
    cap = LARGE_WINKS_PER_COLOR + SMALL_WINKS_PER_COLOR
    for ws in groups.values():
        ranked = sorted(ws, key=lambda w: (-w.confidence, w.position_sigma_mm, w.wink_id))
        keep += ranked[:cap]
        dropped += [w.wink_id for w in ranked[cap:]]
    order = {w.wink_id: i for i, w in enumerate(scene.winks)}
    return with_winks(scene, sorted(keep, key=lambda w: order[w.wink_id])), tuple(sorted(dropped))


def _assign(before: list[Wink], after: list[Wink], gate_mm: float,
            ungated: list[bool] | None = None) -> list[tuple[int, int, float]]:
    """Optimal pairs (i_before, j_after, distance) under the gate (rows flagged ``ungated`` have none);
    order-independent for distinct costs."""
    if not before or not after:
        return []
    b = np.array([w.center_mm for w in before], dtype=float)
    a = np.array([w.center_mm for w in after], dtype=float)
    d = np.linalg.norm(b[:, None, :] - a[None, :, :], axis=2)
    big = 1e9
    allowed = d <= gate_mm
    if ungated is not None:
        allowed |= np.asarray(ungated, dtype=bool)[:, None]
    cost = np.where(allowed, d, big)
    rows, cols = linear_sum_assignment(cost)
    return [(int(i), int(j), float(d[i, j])) for i, j in zip(rows, cols) if cost[i, j] < big]


def associate(before: TiddlywinksScene, after: TiddlywinksScene,
              params: MatchParams = DEFAULT_MATCH_PARAMS, long_move_ids: set[str] | None = None,
              all_arrived: bool = False) -> Association:
    """Match the winks of ``after`` to those of ``before`` (same colour and size only).

    Pairs beyond ``params.gate_mm`` are allowed only for earlier winks in ``long_move_ids`` (``None``: all).
    Leftovers within ``params.relabel_radius_mm`` of each other are then paired whatever their colour or size
    (a detector's misreading, not a move). ``all_arrived`` says every wink of ``after`` stands where the
    picture changed (the pixels say so): a wink does not come from nowhere, so a leftover there is a leftover
    earlier wink of its colour whose size was misread (a size never changes; the earlier reading is kept).

    >>> b = TiddlywinksScene(winks=(Wink(wink_id="a", color="red", size="small", center_mm=(0, 100)),
    ...                             Wink(wink_id="b", color="red", size="small", center_mm=(300, 100))))
    >>> a = TiddlywinksScene(winks=(Wink(wink_id="x", color="red", size="small", center_mm=(301, 99)),
    ...                             Wink(wink_id="y", color="red", size="small", center_mm=(40, 100))))
    >>> sorted(associate(b, a).pairs.items())
    [('x', 'b'), ('y', 'a')]
    """
    groups: dict[tuple[str, str], tuple[list[Wink], list[Wink]]] = {}
    # Sort by id and position so that the result does not depend on input order.
    for w in sorted(before.winks, key=lambda w: (w.wink_id,)):
        groups.setdefault(_group(w), ([], []))[0].append(w)
    for w in sorted(after.winks, key=lambda w: (w.center_mm, w.wink_id)):
        groups.setdefault(_group(w), ([], []))[1].append(w)
    pairs: dict[str, str] = {}
    dist: dict[str, float] = {}
    missing: list[Wink] = []
    appeared: list[Wink] = []
    for key in sorted(groups):
        bs, as_ = groups[key]
        used_b: set[int] = set()
        used_a: set[int] = set()
        # 1. Potted winks stay potted: match them among themselves first.
        bp = [i for i, w in enumerate(bs) if w.potted]
        ap = [j for j, w in enumerate(as_) if w.potted]
        for i, j, d in _assign([bs[i] for i in bp], [as_[j] for j in ap], math.inf):
            used_b.add(bp[i]), used_a.add(ap[j])
            pairs[as_[ap[j]].wink_id] = bs[bp[i]].wink_id
            dist[bs[bp[i]].wink_id] = d
        # 2. Everything else in one assignment: within the gate, or any distance for a wink that may have
        # been played.
        bi = [i for i in range(len(bs)) if i not in used_b]
        aj = [j for j in range(len(as_)) if j not in used_a]
        longs = [long_move_ids is None or bs[i].wink_id in long_move_ids for i in bi]
        for i, j, d in _assign([bs[i] for i in bi], [as_[j] for j in aj], params.gate_mm, longs):
            used_b.add(bi[i]), used_a.add(aj[j])
            pairs[as_[aj[j]].wink_id] = bs[bi[i]].wink_id
            dist[bs[bi[i]].wink_id] = d
        # An earlier potted wink not seen again is still in the pot (hidden by the rim): not missing.
        missing += [bs[i] for i in range(len(bs)) if i not in used_b and not bs[i].potted]
        appeared += [as_[j] for j in range(len(as_)) if j not in used_a]
    relabelled: list[str] = []

    def relabel(gone: list[Wink], new: list[Wink], gate_mm: float) -> None:
        for i, j, d in _assign(gone, new, gate_mm):
            pairs[new[j].wink_id] = gone[i].wink_id
            dist[gone[i].wink_id] = d
            relabelled.append(new[j].wink_id)

    # 4. Colour or size misread: leftovers at the same spot are one wink.
    missing.sort(key=lambda w: w.wink_id)
    appeared.sort(key=lambda w: (w.center_mm, w.wink_id))
    relabel(missing, appeared, params.relabel_radius_mm)
    # 5. A wink that left the mat while one of its colour appeared in the pot went in: in the cup only part of a
    # wink shows, so its size may be misread (any distance: a shot pots from anywhere).
    for color in sorted({w.color for w in missing if w.wink_id not in dist}, key=lambda c: c.value):
        relabel([w for w in missing if w.color is color and w.wink_id not in dist],
                [w for w in appeared if w.potted and w.color is color and w.wink_id not in pairs], math.inf)
    missing = [w for w in missing if w.wink_id not in dist]
    appeared = [w for w in appeared if w.wink_id not in pairs]
    if all_arrived:
        # 6. Arrived where the picture changed, read at the other size: the same colour's vanished wink (within
        # the gate unless it may have been played).
        for color in sorted({w.color for w in missing}, key=lambda c: c.value):
            gone = [w for w in missing if w.color is color and w.wink_id not in dist]
            new = [w for w in appeared if w.color is color and w.wink_id not in pairs]
            longs = [long_move_ids is None or w.wink_id in long_move_ids for w in gone]
            for i, j, d in _assign(gone, new, params.gate_mm, longs):
                pairs[new[j].wink_id] = gone[i].wink_id
                dist[gone[i].wink_id] = d
                relabelled.append(new[j].wink_id)
        missing = [w for w in missing if w.wink_id not in dist]
        appeared = [w for w in appeared if w.wink_id not in pairs]
    return Association(pairs=pairs, relabelled=tuple(sorted(relabelled)),
                       missing=tuple(sorted(w.wink_id for w in missing)),
                       appeared=tuple(sorted(w.wink_id for w in appeared)), distances_mm=dist)


def renamed(before: TiddlywinksScene, after: TiddlywinksScene, assoc: Association) -> TiddlywinksScene:
    """``after`` with the earlier ids; appeared winks keep their id unless it clashes (then ``<id>~n``);
    earlier potted winks hidden in the pot are carried over as potted."""
    taken = set(assoc.pairs.values()) | {w.wink_id for w in before.winks}
    new_ids: dict[str, str] = dict(assoc.pairs)
    for wid in assoc.appeared:
        nid, n = wid, 1
        while nid in taken:
            n += 1
            nid = f"{wid}~{n}"
        taken.add(nid)
        new_ids[wid] = nid
    winks = []
    b_by_id = {w.wink_id: w for w in before.winks}
    for w in after.winks:
        above = None if w.above is None else tuple(new_ids.get(x, x) for x in w.above)
        w2 = replace(w, wink_id=new_ids[w.wink_id], above=above)
        if w.wink_id in assoc.relabelled:
            b = b_by_id[assoc.pairs[w.wink_id]]
            w2 = replace(w2, color=b.color, size=b.size, radius_override_mm=b.radius_override_mm)
        winks.append(w2)
    seen = {w.wink_id for w in winks}
    return with_winks(after, winks + [w for w in before.winks if w.potted and w.wink_id not in seen])


def with_winks(scene: TiddlywinksScene, winks: list[Wink] | tuple[Wink, ...]) -> TiddlywinksScene:
    """``scene`` holding ``winks``; ``above`` references to winks not among them are dropped (a wink carried
    over from an earlier state may name one that has since gone)."""
    ids = {w.wink_id for w in winks}
    fixed = tuple(w if w.above is None or set(w.above) <= ids
                  else replace(w, above=tuple(a for a in w.above if a in ids)) for w in winks)
    return replace(scene, winks=fixed)


def is_left_field(w: Wink) -> bool:
    """Off the mat, or at rest outside the field of play (TW P2)."""
    return (not w.potted) and (w.off_mat or (not w.unplayed and tw.is_out_of_bounds(w)))


def _has_moved(b: Wink, a: Wink, params: MatchParams) -> tuple[bool, float]:
    d = math.dist(b.center_mm, a.center_mm)
    eps = max(params.moved_eps_mm,
              params.moved_sigma_factor * math.hypot(b.position_sigma_mm, a.position_sigma_mm))
    changed = (b.potted != a.potted or b.off_mat != a.off_mat
               or abs(b.tilt_deg - a.tilt_deg) > params.moved_tilt_deg)
    return (d > eps or changed), d


def _segment_distance_mm(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    ab = b - a
    L2 = float(ab @ ab)
    t = 0.0 if L2 == 0 else min(max(float((p - a) @ ab) / L2, 0.0), 1.0)
    return float(np.linalg.norm(p - (a + t * ab)))


def explained_moves(before: TiddlywinksScene, after: TiddlywinksScene, moved: set[str],
                    played_pile: set[str], params: MatchParams = DEFAULT_MATCH_PARAMS) -> set[str]:
    """Moved winks accounted for by the shot: the played pile, then winks touched by an explained path."""
    explained = set(played_pile) & moved
    frontier = list(explained)
    bw = {w.wink_id: w for w in before.winks}
    aw = {w.wink_id: w for w in after.winks}
    while frontier:
        m = frontier.pop()
        p0 = np.asarray(bw[m].center_mm)
        p1 = np.asarray(aw[m].center_mm) if m in aw else p0  # a vanished wink: its path is unknown
        for wid in moved - explained:
            reach = bw[m].radius_mm + bw[wid].radius_mm + params.contact_margin_mm
            if _segment_distance_mm(np.asarray(bw[wid].center_mm), p0, p1) <= reach:
                explained.add(wid)
                frontier.append(wid)
    return explained


def _touched(before: TiddlywinksScene, after: TiddlywinksScene, wink_id: str, movers: set[str],
             params: MatchParams) -> bool:
    bw = {w.wink_id: w for w in before.winks}
    aw = {w.wink_id: w for w in after.winks}
    p = np.asarray(bw[wink_id].center_mm)
    for m in movers:
        if m == wink_id or m not in aw:
            continue
        reach = bw[m].radius_mm + bw[wink_id].radius_mm + params.contact_margin_mm
        if _segment_distance_mm(p, np.asarray(bw[m].center_mm), np.asarray(aw[m].center_mm)) <= reach:
            return True
    return False


def _pile_of(wink_id: str, piles: tuple[frozenset[str], ...]) -> set[str]:
    for p in piles:
        if wink_id in p:
            return set(p)
    return {wink_id}


def _quiet(change: RestChange, w: Wink, params: MatchParams) -> bool:
    """No pixel changed over ``w``'s footprint (grown by its uncertainty): whatever it is, the shot left it."""
    return not change.changed_within(w.center_mm, w.radius_mm + params.change_margin_mm
                                     + 2.0 * w.position_sigma_mm)


@dataclass(frozen=True, slots=True)
class _StillSplit:
    """The winks the pixels prove untouched, set apart before the identity assignment of the movers."""

    pairs: dict[str, str]  # later id -> earlier id, both at one unchanged spot
    unseen: tuple[str, ...]  # earlier winks at an unchanged spot with no detection now (still there)
    quiet_new: tuple[str, ...]  # later detections at an unchanged spot no earlier wink explains


def split_still(before: TiddlywinksScene, after: TiddlywinksScene, change: RestChange,
                params: MatchParams = DEFAULT_MATCH_PARAMS) -> _StillSplit:
    """Pair each earlier wink whose footprint did not change with the detection at its spot (any colour or
    size: the same physical wink, whatever the detector now reads), so that only winks where the picture
    changed compete for the movers' identities. A wink cannot have moved, nor one have arrived, where nothing
    changed; a detection there that no earlier wink explains is a re-read (a wink missed before, or a phantom),
    never a destination of a mover."""
    still_b = [b for b in sorted(before.winks, key=lambda w: w.wink_id)
               if not (b.potted or b.off_mat) and _quiet(change, b, params)]
    quiet_a = [a for a in sorted(after.winks, key=lambda w: (w.center_mm, w.wink_id))
               if not (a.potted or a.off_mat) and _quiet(change, a, params)]
    pairs: dict[str, str] = {}
    if still_b and quiet_a:
        b = np.array([w.center_mm for w in still_b], dtype=float)
        a = np.array([w.center_mm for w in quiet_a], dtype=float)
        d = np.linalg.norm(b[:, None, :] - a[None, :, :], axis=2)
        # overlapping discs where nothing changed are one physical wink read twice (two winks cannot
        # overlap there unless they did so in both frames, and then both were seen or the pile is read
        # again); a colour or size read differently costs the reach once more
        reach = np.array([[x.radius_mm + y.radius_mm + 2.0 * math.hypot(x.position_sigma_mm, y.position_sigma_mm)
                           for y in quiet_a] for x in still_b])
        mismatch = np.array([[_group(x) != _group(y) for y in quiet_a] for x in still_b], dtype=float)
        big = 1e9
        cost = np.where(d <= reach, d + mismatch * reach, big)
        rows, cols = linear_sum_assignment(cost)
        for i, j in zip(rows, cols):
            if cost[i, j] < big:
                pairs[quiet_a[j].wink_id] = still_b[i].wink_id
    paired_b = set(pairs.values())
    return _StillSplit(pairs=pairs,
                       unseen=tuple(b.wink_id for b in still_b if b.wink_id not in paired_b),
                       quiet_new=tuple(a.wink_id for a in quiet_a if a.wink_id not in pairs))


def diff_rest_states(before: TiddlywinksScene, after: TiddlywinksScene, *, played_color: Color | None = None,
                     played_id: str | None = None, params: MatchParams = DEFAULT_MATCH_PARAMS,
                     change: RestChange | None = None) -> ShotDiff:
    """Associate ``after`` with ``before`` and list what the shot changed, by ``before``'s ids.

    ``played_id`` names the played wink when known; otherwise the moved, unsquopped wink of
    ``played_color`` (or, failing that, of any colour) that explains the most moves is taken. ``change``, the
    pixels' record of where the picture changed between the two rest frames, settles first every wink the shot
    cannot have touched (:func:`split_still`).
    """
    lowers_0 = tw.squopped_ids(tw.squop_relations(before))
    long_ids = None
    if played_id is not None:
        long_ids = {played_id}
    elif played_color is not None:
        long_ids = {w.wink_id for w in before.winks if w.color is Color(played_color) and w.wink_id not in lowers_0}
    bw = {w.wink_id: w for w in before.winks}
    still = None
    if change is not None:
        still = split_still(before, after, change, params)
        settled_b = set(still.pairs.values()) | set(still.unseen)
        set_apart = set(still.pairs) | set(still.quiet_new)
        assoc = associate(with_winks(before, [w for w in before.winks if w.wink_id not in settled_b]),
                          with_winks(after, [w for w in after.winks if w.wink_id not in set_apart]),
                          params, long_ids, all_arrived=True)
        assoc = replace(assoc, pairs={**assoc.pairs, **still.pairs},
                        appeared=tuple(sorted({*assoc.appeared, *still.quiet_new})),
                        distances_mm={**assoc.distances_mm, **{b: 0.0 for b in still.pairs.values()}})
        after_r = renamed(before, after, assoc)
        # an untouched wink is the earlier one, as it was (its history outweighs one re-reading)
        after_r = with_winks(after_r, [bw[w.wink_id] if w.wink_id in settled_b else w for w in after_r.winks])
    else:
        assoc = associate(before, after, params, long_ids)
        after_r = renamed(before, after, assoc)
    # Once over its baseline a wink is never unplayed again, whatever the detector thinks.
    after_r = with_winks(after_r, [replace(w, unplayed=False) if w.unplayed and w.wink_id in bw
                                   and not bw[w.wink_id].unplayed else w for w in after_r.winks])
    aw = {w.wink_id: w for w in after_r.winks}
    moved: set[str] = set()
    disp: dict[str, float] = {}
    for wid, b in bw.items():
        a = aw.get(wid)
        if a is None:
            continue
        if b.unplayed and a.unplayed and not a.potted and not a.off_mat:
            # Unplayed winks are in hand behind their baseline (TW P3): rearranging them is not a move.
            continue
        is_moved, d = _has_moved(b, a, params)
        if is_moved:
            moved.add(wid)
            disp[wid] = d
    potted = sorted(w for w in moved if aw[w].potted and not bw[w].potted)
    out = sorted(w for w in moved if is_left_field(aw[w]) and not is_left_field(bw[w]))
    rel_b = tw.squop_relations(before)
    rel_a = tw.squop_relations(after_r)
    piles_b = tw.piles(rel_b)
    lowers_b = tw.squopped_ids(rel_b)
    if played_id is not None and played_id not in bw:
        raise GeometryError(f"played wink {played_id!r} is not in the earlier state")
    missing_all = set(assoc.missing)
    candidates: list[str]
    if played_id is not None:
        candidates = [played_id]
    else:
        def pool_of(ids: set[str]) -> list[str]:
            mine = [w for w in ids if played_color is None or bw[w].color is Color(played_color)]
            return sorted([w for w in mine if w not in lowers_b] or mine)
        # The played wink: a moved one of the colour due; failing that one that vanished (potted unseen);
        # failing that any moved wink (a wrong colour: the caller flags it).
        candidates = pool_of(moved) or pool_of(missing_all) or sorted(moved)
    best: tuple[int, float, str] | None = None
    best_explained: set[str] = set()
    best_pile: set[str] = set()
    for c in candidates:
        pile = _pile_of(c, piles_b)
        ex = explained_moves(before, after_r, moved | (pile & missing_all), pile, params)
        key = (len(ex), disp.get(c, 0.0), c)
        if best is None or key[:2] > best[:2]:
            best, best_explained, best_pile = key, ex, pile
    chosen = None if best is None else best[2]
    # A vanished wink counts as moved only if the shot could have reached it (its pile, or touched by an
    # explained path); any other is unseen (occluded, missed by the detector) and stays where it was.
    missing = {m for m in missing_all if m in best_pile or _touched(before, after_r, m, best_explained, params)}
    unseen = missing_all - missing
    # untouched winks the detector did not report again (or was not asked to: the tracker measures only
    # where the picture changed) are where they were
    untouched = set(still.unseen) if still is not None else set()
    if unseen | untouched:
        after_r = with_winks(after_r, (*after_r.winks, *(bw[m] for m in sorted(unseen | untouched))))
    disturbed = sorted(moved - best_explained) if chosen is not None else []
    # A wink that appears where its colour and size are already complete is a phantom (TW 2): dropped.
    discarded: list[str] = []
    new_ones = [w for w in after_r.winks if w.wink_id not in bw]
    if new_ones:
        count: dict[tuple[str, str], int] = {}
        for w in after_r.winks:
            if w.wink_id in bw:
                count[_group(w)] = count.get(_group(w), 0) + 1
        for w in sorted(new_ones, key=lambda w: (-w.confidence, w.wink_id)):
            k = _group(w)
            if count.get(k, 0) < group_capacity(k[1]):
                count[k] = count.get(k, 0) + 1
            else:
                discarded.append(w.wink_id)
        if discarded:
            after_r = with_winks(after_r, [w for w in after_r.winks if w.wink_id not in discarded])
    pairs_b = {(r.upper_id, r.lower_id) for r in rel_b}
    pairs_a = {(r.upper_id, r.lower_id) for r in rel_a}
    return ShotDiff(
        after=after_r,
        moved=tuple(sorted(moved | missing)),
        potted=tuple(potted),
        out=tuple(out),
        disturbed=tuple(disturbed),
        missing=tuple(sorted(missing)),
        unseen=tuple(sorted(unseen)),
        discarded=tuple(sorted(discarded)),
        appeared=tuple(sorted(w.wink_id for w in after_r.winks if w.wink_id not in bw)),
        played_id=chosen,
        played_pile=tuple(sorted(best_pile)),
        squops_made=tuple(sorted(pairs_a - pairs_b)),
        squops_broken=tuple(sorted(pairs_b - pairs_a)),
        displacement_mm=disp,
    )
