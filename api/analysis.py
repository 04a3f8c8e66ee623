"""A photograph to its analysis document: vision's measured scene plus the adjudicator's rulings.

This is where the two meet: vision never imports the rule engine (layers), so the CLI, the service and the
tracker all come through here for a still photo's rulings.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from adjudicator.tiddlywinks import adjudicate, judge_squidge_off
from geometry.types import TiddlywinksScene
from vision.tiddlywinks import (
    TiddlywinksParams,
    document_from_measurement,
    measure_tiddlywinks,
    scene_from_measurement,
    squidge_off_scene,
)


def squidge_off_verdict(scene: TiddlywinksScene) -> dict[str, Any] | None:
    """The TW 5(a) verdict when the scene is a squidge-off (one wink in play per colour), else None.

    A colour whose unplayed winks wait behind its baseline but whose squidged wink is nowhere seen is in the game
    with its wink unaccounted for (the adjudicator then names no winner)."""
    sub = squidge_off_scene(scene)
    if sub is None:
        return None
    squidged = {w.color for w in sub.winks}
    unseen = tuple(dict.fromkeys(w.color for w in scene.winks if w.unplayed and w.color not in squidged))
    return judge_squidge_off(sub, unseen=unseen).to_dict()


def add_rulings(document: dict[str, Any], scene: TiddlywinksScene) -> dict[str, Any]:
    """Attach ``rulings`` (rule order, see ``adjudicate``) and ``squidge_off`` to a scene document."""
    document["rulings"] = [r.to_dict() for r in adjudicate(scene)]
    document["squidge_off"] = squidge_off_verdict(scene)
    return document


def analyze_tiddlywinks_photo(frame_bgr: np.ndarray, calibration: Any = None, *,
                              image_path: str | None = None,
                              params: TiddlywinksParams | None = None) -> dict[str, Any]:
    """The analysis document of one photograph: scene, pot, mat, calibration, ``rulings``, ``squidge_off``."""
    m = measure_tiddlywinks(frame_bgr, calibration, params or TiddlywinksParams())
    return add_rulings(document_from_measurement(m, image_path=image_path), scene_from_measurement(m))
