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
