"""The sizes of one colour's winks read together: each colour has two large winks and four small (TW 2).

A flagged wink's size rests on weak image evidence (most of its outline hidden, in the cup, at the mat edge),
but it is not alone: the winks of its colour whose sizes were measured bound it. With two large of a colour
surely seen, any other wink of that colour is small; with four small surely seen, it is large; flagged winks of
one colour must together respect the two-and-four split. A photograph may show fewer than six of a colour (lost,
off the picture, missed), so the bound is "at most two large, at most four small", never "exactly".

The seen winks of a colour are taken as a random subset of its six: an assignment of sizes to ``n`` seen winks
with ``k`` large has the prior ``C(2, k) C(4, n - k) / C(n, k)`` (two to one for small for a lone wink, zero
past either bound). Each flagged wink adds the likelihood ratio of its own evidence; the posterior of each
wink's size is summed over the assignments. The bound is only as sure as the measured reads it rests on: with
probability ``1 - reliability ** n_sure`` one of them is wrong, and then the wink's size is read alone (its own
evidence and the two-to-one prior).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from geometry.constants import LARGE_WINKS_PER_COLOR, SMALL_WINKS_PER_COLOR

#: Winks of each size in one colour's set (TW 2).
SET_COUNTS = {"large": LARGE_WINKS_PER_COLOR, "small": SMALL_WINKS_PER_COLOR}
#: Share of measured size reads (size confidence >= 0.9) that are right, of their colour and no phantom: on the
#: development set 1881 of 1881 sizes (95 % upper error bound 3/1881 by the rule of three), 1971 of 1972 colours
#: and 1972 of 1974 detections right — about one wrong read in 300.
SURE_READ_RELIABILITY = 0.997
#: Likelihood ratio (large : small) of a flagged wink's best guess: on the development set and seeds 9090,
#: 5151, 5658 and 6161 the flagged winks' guesses were large for 37 of 40 large winks and for 6 of 103 small ones
#: (counts plus one, against two).
GUESS_LARGE_LR = (38 / 42) / (7 / 105)
GUESS_SMALL_LR = (4 / 42) / (98 / 105)
#: The share of the ring between the two radii (9.5 mm) that shows the wink's own colour: a large wink's, a
#: small one's felt. A wink among others of its colour shows theirs too, so it only ranks winks whose guesses
#: agree: its odds, floored, to this power.
RING_EVIDENCE_POWER = 0.5
RING_EVIDENCE_FLOOR = 0.1
#: Flagged winks of one colour read jointly at most (2^n assignments); more and each is read alone.
MAX_JOINT = 12


@dataclass(frozen=True, slots=True)
class SizeRead:
    """One wink's size as the image reads it: measured (``sure``) or a flagged guess with its ring evidence."""

    color: str
    size: str
    sure: bool
    ring_own_fraction: float = 0.5  # own colour on the 9.5 mm ring (0.5: not seen)

    def __post_init__(self) -> None:
        if self.size not in SET_COUNTS:
            raise ValueError(f"size must be 'large' or 'small', got {self.size!r}")
        if not 0.0 <= self.ring_own_fraction <= 1.0:
            raise ValueError(f"ring_own_fraction must be in [0, 1], got {self.ring_own_fraction!r}")


@dataclass(frozen=True, slots=True)
class SizeVerdict:
    """A flagged wink's size after its colour's set: the most probable size and its probability."""

    size: str
    confidence: float
    bound_by_set: bool  # the set's bound, not the wink's own evidence, decides it


def likelihood_ratio(read: SizeRead) -> float:
    """Large : small likelihood ratio of a flagged read's own evidence.

    >>> likelihood_ratio(SizeRead("red", "large", False)) > 1 > likelihood_ratio(SizeRead("red", "small", False))
    True
    """
    lr = GUESS_LARGE_LR if read.size == "large" else GUESS_SMALL_LR
    f = read.ring_own_fraction
    return lr * ((f + RING_EVIDENCE_FLOOR) / (1.0 - f + RING_EVIDENCE_FLOOR)) ** RING_EVIDENCE_POWER


def set_prior(n_seen: int, n_large: int) -> float:
    """Prior of one assignment of sizes to ``n_seen`` winks of a colour with ``n_large`` large.

    >>> round(set_prior(1, 0) / set_prior(1, 1), 6)
    2.0
    >>> set_prior(3, 3)
    0.0
    """
    n_small = n_seen - n_large
    if n_large > SET_COUNTS["large"] or n_small > SET_COUNTS["small"] or n_large < 0 or n_small < 0:
        return 0.0
    n_set = SET_COUNTS["large"] + SET_COUNTS["small"]
    return (math.comb(SET_COUNTS["large"], n_large) * math.comb(SET_COUNTS["small"], n_small)
            / math.comb(n_set, n_seen) / math.comb(n_seen, n_large))


def _alone(read: SizeRead) -> float:
    """P(large) of a flagged wink read alone: its evidence and the two-to-one prior."""
    odds = likelihood_ratio(read) * set_prior(1, 1) / set_prior(1, 0)
    return odds / (1.0 + odds)


def _joint(reads: list[SizeRead]) -> tuple[list[int], list[float]] | None:
    """The most probable assignment (1: large) of one colour's flagged reads under the set's bound, and each
    one's probability of being large; None when no assignment fits the bound."""
    sure_large = sum(r.sure and r.size == "large" for r in reads)
    lrs = [likelihood_ratio(r) for r in reads if not r.sure]
    total, best, best_w = 0.0, None, 0.0
    p_large = [0.0] * len(lrs)
    for bits in itertools.product((0, 1), repeat=len(lrs)):
        w = set_prior(len(reads), sure_large + sum(bits))
        if w == 0.0:
            continue
        w *= math.prod(lr for lr, b in zip(lrs, bits) if b)
        total += w
        if w > best_w:
            best, best_w = list(bits), w
        for i, b in enumerate(bits):
            p_large[i] += w * b
    if total <= 0.0 or best is None:
        return None
    return best, [p / total for p in p_large]


def sizes_by_colour_set(reads: list[SizeRead], flagged_confidence: float,
                        reliability: float = SURE_READ_RELIABILITY) -> list[SizeVerdict | None]:
    """Each flagged read's size given its colour's other reads (TW 2); None for sure reads.

    The sizes are the most probable assignment of the colour's flagged winks (together they respect the bound).
    A size is decisive only where the sure reads leave it alone possible (two large or four small of the colour
    surely seen): its confidence is then the chance that those reads are right, plus the wink's own odds if one
    is not. Elsewhere the set and the wink's weak evidence choose the guess, and its confidence stays at most
    ``flagged_confidence``.

    >>> reads = [SizeRead("red", "large", True), SizeRead("red", "large", True), SizeRead("red", "large", False)]
    >>> v = sizes_by_colour_set(reads, 0.6)[2]
    >>> v.size, v.confidence > 0.9, v.bound_by_set
    ('small', True, True)
    >>> sizes_by_colour_set([SizeRead("red", "large", False)], 0.6)[0].confidence <= 0.6
    True
    """
    out: list[SizeVerdict | None] = [None] * len(reads)
    for color in sorted({r.color for r in reads}):
        idx = [i for i, r in enumerate(reads) if r.color == color]
        group = [reads[i] for i in idx]
        flagged = [i for i, r in zip(idx, group) if not r.sure]
        if not flagged:
            continue
        alone = [_alone(reads[i]) for i in flagged]
        joint = _joint(group) if len(flagged) <= MAX_JOINT else None
        n_sure = len(group) - len(flagged)
        sure_large = sum(r.sure and r.size == "large" for r in group)
        # the sizes the sure reads leave possible for any further wink of the colour
        forced = ("small" if sure_large >= SET_COUNTS["large"]
                  else "large" if n_sure - sure_large >= SET_COUNTS["small"] else None)
        trust = reliability ** n_sure
        for k, i in enumerate(flagged):
            if joint is None:
                p_large, size = alone[k], "large" if alone[k] >= 0.5 else "small"
            else:
                p_large = trust * joint[1][k] + (1.0 - trust) * alone[k]
                size = "large" if joint[0][k] else "small"
            p = p_large if size == "large" else 1.0 - p_large
            bound = joint is not None and (size == "large") != (alone[k] >= 0.5)
            if joint is not None and size == forced:
                out[i] = SizeVerdict(size=size, confidence=p, bound_by_set=True)
            else:
                out[i] = SizeVerdict(size=size, confidence=min(p, flagged_confidence), bound_by_set=bound)
    return out
