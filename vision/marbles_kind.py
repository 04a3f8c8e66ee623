"""A single ball's kind read against its own photo's marbles.

Why. Every marble in one photo is the same 12.7 mm glass ball (MB 3), so the photo's own marbles measure what
its size reads do there: their bias (blur, clear glass and the contact shadow move every read in a photo alike:
medians 9.9-12.6 mm for true marbles at 6-7 px per marble on the development renders) and their scatter (0.6-1.7
mm robust, with tails: the RMS is up to twice that). The detector's size model carries one fixed sigma and no
bias, so in a photo whose reads scatter widely or run large it calls a misread marble a tolley with confidence.
Here the single balls' reads below the bulk's median plus half the marble-to-smallest-tolley gap are the photo's
marbles (tolleys are few on a ring; a photo of too few such balls, or whose bulk sits more than that whole gap
from a marble, says nothing); each read, less their bias, is weighed as a marble (12.7 mm) or a tolley (16-19.05
mm, MB 4), each as common as the photo's own balls say (its marbles and the reads above them, one more of each:
Laplace's rule), under a Student-t error of their measured scale (a read far from both sizes is a broken read).
The detector uses it only to lower a kind's confidence (``vision.marbles._photo_kinds``): the bias holds for the
marbles, not for an opaque (swirl) tolley, which reads 4-6 mm small where they read about 2 mm small.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from geometry.marbles import MARBLE_DIAMETER_MM, TOLLEY_MAX_DIAMETER_MM, TOLLEY_MIN_DIAMETER_MM

# The photo's marbles are the reads up to its bulk's median plus half the gap from a marble to the smallest
# tolley: a tolley misread by half that gap still reads above it
REFERENCE_MARGIN_MM = 0.5 * (TOLLEY_MIN_DIAMETER_MM - MARBLE_DIAMETER_MM)
# ... and a bulk more than the whole gap from a marble may be the tolleys themselves: no photo scale then
MAX_BIAS_MM = TOLLEY_MIN_DIAMETER_MM - MARBLE_DIAMETER_MM
# A robust scale needs this many marbles (a MAD of fewer is a guess)
MIN_REFERENCE_BALLS = 5
# Degrees of freedom of the read's Student-t error: heavy tails, as the renders' marble reads show. The maximum-
# likelihood fit to 268 single marbles' reads (less their photo's bias, over the error used here) on the development
# renders is 5-8; 5 puts 3 % beyond 3 sigmas (measured 2.6 %) where a Gaussian puts 0.3 %
T_DOF = 5.0
# The tolley's size is uniform over MB 4's range, integrated on this many points
TOLLEY_GRID_POINTS = 32


@dataclass(frozen=True, slots=True, kw_only=True)
class PhotoScale:
    """What one photo's size reads do to its marbles: ``bias_mm`` (median read less 12.7 mm), ``scatter_mm``
    (their robust 1-sigma), how many marbles measured them and how many single balls were read in all."""

    bias_mm: float
    scatter_mm: float
    n_marbles: int
    n_read: int

    @property
    def marble_prior(self) -> float:
        """How common a marble is among the photo's single balls (Laplace's rule of succession)."""
        return (self.n_marbles + 1.0) / (self.n_read + 2.0)

    def __post_init__(self) -> None:
        if not (self.scatter_mm > 0.0 and 0 < self.n_marbles <= self.n_read and math.isfinite(self.bias_mm)):
            raise ValueError(f"photo scale needs a positive scatter and marbles, got {self}")


def photo_scale(reads_mm: np.ndarray, floor_sigma_mm: float) -> PhotoScale | None:
    """The photo's marble bias and scatter from its single balls' size reads, or None where they cannot say.

    >>> s = photo_scale(np.array([11.0, 11.2, 10.8, 11.1, 10.9, 15.5]), 0.3)
    >>> round(s.bias_mm, 2), s.n_marbles
    (-1.7, 5)
    """
    reads = np.asarray(reads_mm, float)
    reads = reads[np.isfinite(reads)]
    if len(reads) < MIN_REFERENCE_BALLS:
        return None
    ref = reads[reads <= float(np.median(reads)) + REFERENCE_MARGIN_MM]
    if len(ref) < MIN_REFERENCE_BALLS:
        return None
    med = float(np.median(ref))
    bias = med - MARBLE_DIAMETER_MM
    if abs(bias) > MAX_BIAS_MM:
        return None
    # the MAD: the tolley cut trims the upper tail 2 sigmas out at 0.8 mm scatter, which moves it little, while
    # the reads below the median alone carry the small misreads (a ball half hidden by its neighbour) and read a
    # sharp photo's scatter 2.3 times its MAD (marbles_09, 19 px per marble)
    scatter = 1.4826 * float(np.median(np.abs(ref - med)))
    return PhotoScale(bias_mm=bias, scatter_mm=max(scatter, floor_sigma_mm), n_marbles=len(ref), n_read=len(reads))


def _t_pdf(z: np.ndarray) -> np.ndarray:
    """Student-t density with T_DOF degrees of freedom (unnormalised: only ratios are used)."""
    return (1.0 + z * z / T_DOF) ** (-(T_DOF + 1.0) / 2.0)


def marble_probability(read_mm: float, scale: PhotoScale, read_sigma_mm: float) -> float:
    """Probability that a ball reading ``read_mm`` is a marble, against a tolley, in a photo of ``scale``:
    the photo's own share of marbles as the prior, the read less the photo's bias, an error of the larger of the read's own sigma and the
    photo's scatter, widened by the bias's own error (the scatter over the root of the marbles counted)."""
    sigma = math.hypot(max(read_sigma_mm, scale.scatter_mm), scale.scatter_mm / math.sqrt(scale.n_marbles))
    d = read_mm - scale.bias_mm
    tolleys = np.linspace(TOLLEY_MIN_DIAMETER_MM, TOLLEY_MAX_DIAMETER_MM, TOLLEY_GRID_POINTS)
    like_marble = scale.marble_prior * float(_t_pdf(np.array((d - MARBLE_DIAMETER_MM) / sigma)))
    like_tolley = (1.0 - scale.marble_prior) * float(np.mean(_t_pdf((d - tolleys) / sigma)))
    return like_marble / (like_marble + like_tolley)


# The floor of a read's measured scatter (mm): a handful of marbles can agree by chance
MIN_READ_SCATTER_MM = 0.3
# Two of a ball's calibrated reads farther apart than this many of their combined scatters cannot both be right
# (one took a neighbour, the rim or a shadow for the ball): its size is then known no better than half their gap
DISAGREE_SIGMAS = 3.0


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinedReads:
    """Single balls' independent size reads joined under one photo's own calibration: ``diameter_mm`` each
    ball's joined read (NaN: no read) and ``sigma_mm`` its 1-sigma, ``scale`` what that joined read does to the
    photo's marbles (its bias about 0, its scatter measured), and per read kind its ``bias_mm`` and
    ``scatter_mm`` (NaN: not used)."""

    diameter_mm: np.ndarray
    sigma_mm: np.ndarray
    scale: PhotoScale
    bias_mm: tuple[float, ...]
    scatter_mm: tuple[float, ...]


def _weighted(R: np.ndarray, bias: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Each row's reads less their biases, averaged with their weights (NaN where a row has no weighted read)."""
    have = np.isfinite(R) & (weight > 0)[None]
    w = np.where(have, weight[None], 0.0)
    tot = w.sum(1)
    return np.where(tot > 0, (np.where(have, R - bias[None], 0.0) * w).sum(1) / np.maximum(tot, 1e-12), np.nan)


def _disagreement(R: np.ndarray, bias: np.ndarray, weight: np.ndarray, scatter_mm: float) -> np.ndarray:
    """Each row's 1-sigma: ``scatter_mm``, or half the widest gap between two of its calibrated reads that differ
    by more than DISAGREE_SIGMAS of their combined scatter."""
    C = np.where((weight > 0)[None], R - bias[None], np.nan)
    s = np.where(weight > 0, np.maximum(weight, 1e-12) ** -0.5, np.inf)
    out = np.full(len(R), scatter_mm)
    for a in range(R.shape[1]):
        for b in range(a + 1, R.shape[1]):
            gap = np.abs(C[:, a] - C[:, b])
            bad = np.isfinite(gap) & (gap > DISAGREE_SIGMAS * math.hypot(s[a], s[b]))
            out[bad] = np.maximum(out[bad], 0.5 * gap[bad])
    return out


def _reference(joined: np.ndarray, calibrated: bool) -> np.ndarray:
    """The photo's marbles among joined reads: up to the bulk's median plus REFERENCE_MARGIN_MM (as photo_scale)
    while the reads are uncalibrated; once calibrated (the marbles then centred on 12.7 mm), up to the
    marble/tolley split, which trims less of the marbles' own upper tail."""
    ok = np.isfinite(joined)
    if ok.sum() < MIN_REFERENCE_BALLS:
        return np.zeros(len(joined), bool)
    if calibrated:
        return ok & (joined <= MARBLE_DIAMETER_MM + REFERENCE_MARGIN_MM)
    return ok & (joined <= float(np.median(joined[ok])) + REFERENCE_MARGIN_MM)


def join_reads(reads_mm: np.ndarray, floor_sigma_mm: float = MIN_READ_SCATTER_MM) -> JoinedReads | None:
    """Each ball's size reads (N, K: one column per independent read, NaN where it has none) joined after each is
    calibrated on the photo's own marbles, or None where the photo has too few of them.

    Why. The reads err differently (the silhouette's area takes in the contact shadow and misses clear glass'
    rim, the outline takes the shadow's edge on the dark side, the blurred-sphere fit takes a tinted shadow for
    glass) and by amounts that change from photo to photo (the same marble reads 8, 16 and 19 mm by three reads
    in one whole-ring photo). Every marble is 12.7 mm (MB 3), so the photo's marbles measure each read's bias and
    scatter there; each read, less its bias, is weighed by its scatter (inverse variance), and the joined read's
    own scatter over the marbles (the reads' errors are partly shared, so it is measured, not derived) is its
    uncertainty, or half the gap between two of the ball's reads that disagree beyond their errors (``sigma_mm``).
    The marbles are found on the joined read itself, twice: first with the reads uncalibrated.

    >>> rng = np.random.default_rng(0)
    >>> a = 12.7 - 3.0 + rng.normal(0, 0.4, 12); b = 12.7 + 4.0 + rng.normal(0, 1.5, 12)
    >>> a[-1], b[-1] = 16.0 - 3.0, 17.0 + 4.0  # a tolley of 16-17 mm
    >>> j = join_reads(np.column_stack([a, b]))
    >>> [round(v) for v in j.bias_mm], round(float(j.diameter_mm[-1]), 1) > 15.0
    ([-3, 4], True)
    """
    R = np.asarray(reads_mm, float)
    R = R.reshape(len(R), -1)
    k = R.shape[1]
    bias = np.zeros(k)
    weight = np.ones(k)
    for step in range(2):
        joined = _weighted(R, bias, weight)
        ref = _reference(joined, calibrated=step > 0)
        if ref.sum() < MIN_REFERENCE_BALLS:
            return None
        for j in range(k):
            m = R[ref & np.isfinite(R[:, j]), j]
            if len(m) < MIN_REFERENCE_BALLS:
                bias[j], weight[j] = np.nan, 0.0
                continue
            med = float(np.median(m))
            bias[j] = med - MARBLE_DIAMETER_MM
            weight[j] = max(1.4826 * float(np.median(np.abs(m - med))), floor_sigma_mm) ** -2
        if not (weight > 0).any():
            return None
        bias = np.where(weight > 0, bias, 0.0)
    joined = _weighted(R, bias, weight)
    ref = _reference(joined, calibrated=True)
    if ref.sum() < MIN_REFERENCE_BALLS:
        return None
    m = joined[ref]
    med = float(np.median(m))
    scatter = max(1.4826 * float(np.median(np.abs(m - med))), floor_sigma_mm)
    scale = PhotoScale(bias_mm=med - MARBLE_DIAMETER_MM, scatter_mm=scatter, n_marbles=int(ref.sum()),
                       n_read=int(np.isfinite(joined).sum()))
    return JoinedReads(diameter_mm=joined, sigma_mm=_disagreement(R, bias, weight, scatter), scale=scale,
                       bias_mm=tuple(float(b) if wt > 0 else math.nan for b, wt in zip(bias, weight)),
                       scatter_mm=tuple(float(wt ** -0.5) if wt > 0 else math.nan for wt in weight))
