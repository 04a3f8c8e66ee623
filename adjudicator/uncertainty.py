"""The referee's decision margin (RULES.md section 0) and how sure a decided comparison is."""

from __future__ import annotations

import math

from adjudicator.types import TiddlywinksParams
from geometry.types import TiddlywinksScene, Wink


def combined_sigma_mm(*winks: Wink) -> float:
    """Root-sum-square of the position sigmas: independent errors of the pieces compared."""
    return math.sqrt(sum(w.position_sigma_mm**2 for w in winks))


def eps_mm(scene: TiddlywinksScene, params: TiddlywinksParams, *winks: Wink) -> float:
    """Decision margin for a length involving ``winks``: the scene's, else the params', else 2 x sigma >= 0.5.

    >>> from geometry.types import TiddlywinksScene, Wink
    >>> w = Wink(wink_id="a", color="red", size="large", center_mm=(0, 0), position_sigma_mm=0.6)
    >>> round(eps_mm(TiddlywinksScene(winks=(w,)), TiddlywinksParams(), w), 3)
    1.2
    """
    if scene.eps_mm is not None:
        return scene.eps_mm
    if params.eps_mm is not None:
        return params.eps_mm
    return max(params.eps_sigma_factor * combined_sigma_mm(*winks), params.min_eps_mm)


def margin_confidence(margin_mm: float, sigma_mm: float, *winks: Wink) -> float:
    """Probability the sign of ``margin_mm`` is right under Gaussian error, times the detections' confidence."""
    detect = min((w.confidence for w in winks), default=1.0)
    if sigma_mm <= 0.0:
        return detect
    return detect * 0.5 * (1.0 + math.erf(abs(margin_mm) / (sigma_mm * math.sqrt(2.0))))


def detection_confidence(*winks: Wink) -> float:
    """Confidence of a ruling that rests only on the pieces being there: the weakest detection."""
    return min((w.confidence for w in winks), default=1.0)
