"""Piles posed as the simulator rests them, for the vision tests: each wink, in the order given, lies on the winks
before it that its disc overlaps (``rest_on``), rising towards the last of them, low edge on the felt."""

from __future__ import annotations

import math

import numpy as np
from synth import SynthWink

from geometry.types import Wink, WinkSize
from simulation.tiddlywinks_scenes import rest_on


def rest_pile(spec, offset_mm=(0.0, 0.0)) -> list[Wink]:
    """``spec``: (wink id, colour, size, plan centre) bottom-up; every centre moved by ``offset_mm``."""
    placed: list[Wink] = []
    for wid, colour, size, c in spec:
        c, r = tuple(np.add(c, offset_mm)), WinkSize(size).radius_mm
        under = [w for w in placed if math.dist(w.center_mm, c) < w.radius_mm + r]
        if not under:
            placed.append(Wink(wink_id=wid, color=colour, size=size, center_mm=c))
            continue
        az = math.degrees(math.atan2(under[-1].center_mm[1] - c[1], under[-1].center_mm[0] - c[0])) % 360.0
        z, tilt = rest_on(c, r, az, under)
        placed.append(Wink(wink_id=wid, color=colour, size=size, center_mm=c, z_mm=z, tilt_deg=tilt,
                           tilt_azimuth_deg=az, above=tuple(w.wink_id for w in under)))
    return placed


def synth_pile(spec, offset_mm=(0.0, 0.0)) -> list[SynthWink]:
    """``rest_pile`` as ``synth`` winks."""
    return [SynthWink(w.wink_id, w.color.value, w.size.value, w.center_mm, z_mm=w.z_mm, tilt_deg=w.tilt_deg,
                      tilt_azimuth_deg=w.tilt_azimuth_deg, above=list(w.above or ())) for w in rest_pile(spec, offset_mm)]
