"""A wink reported under one of its own colour whose fitted image disc that wink's covers: one wink read twice.

The coarse search works in the table plane, at one height. One wink whose outline the mat's edge band cuts (a
corner wink, tw_8990_000's yellow-L1) can yield two same-colour centres a few image pixels apart, each a little
off; the order then puts one on the other, the pose lifts the upper onto the lower, and the sub-pixel fit takes
both to the one outline the image holds. In the image a lower wink shows only what reaches beyond the winks over
it: a disc lying inside its upper's image disc, but for less than the blur resolves (``min_crescent_px``, the rule
``find_candidates`` already applies in plan), shows nothing and is no evidence of a second wink. It is dropped,
and the one left is posed again without it.
"""

from __future__ import annotations

import numpy as np

from calibration.camera import CameraModel
from vision.winks import WinkCandidate


def _image_disc(w: WinkCandidate, camera: CameraModel) -> tuple[np.ndarray, float]:
    """The wink's top disc in the image: centre and radius (pixels)."""
    c = w.center_px if w.center_px is not None else camera.project_mm(
        np.array([[w.center_mm[0], w.center_mm[1], w.z_mm]]))[0]
    return np.asarray(c, float), w.radius_mm / camera.mm_per_px_at((float(w.center_mm[0]), float(w.center_mm[1])))


def hidden_twins(winks: list[WinkCandidate], camera: CameraModel, min_crescent_px: float) -> list[WinkCandidate]:
    """Winks under one of their own colour that show no crescent beyond it in the image (to drop)."""
    by_id = {w.wink_id: w for w in winks if not w.potted}
    out: list[WinkCandidate] = []
    for upper in by_id.values():
        cu, ru = _image_disc(upper, camera)
        for lid in upper.above:
            lower = by_id.get(lid)
            if lower is None or lower.color != upper.color or any(lower is o for o in out):
                continue
            cl, rl = _image_disc(lower, camera)
            if float(np.linalg.norm(cl - cu)) + rl - ru < min_crescent_px:
                out.append(lower)
    return out


def forget(winks: list[WinkCandidate], gone: list[WinkCandidate]) -> None:
    """Remove the dropped winks from the others' orders."""
    ids = {g.wink_id for g in gone}
    for w in winks:
        w.above = [a for a in w.above if a not in ids]
        for i in ids:
            w.order_confidence.pop(i, None)
