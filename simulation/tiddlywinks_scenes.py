"""Random tiddlywinks rest states that could physically occur, with heights and tilts from the geometry.

A squopping wink rests with its low edge on the mat and its underside on the highest point of the winks
beneath it (`rest_on`); a pile is built bottom-up, so every upper wink's tilt and height follow from the ones
below. Potted winks lie on the pot floor (stacked) or balance on the rim. Unplayed winks lie wholly inside their
colour's corner triangle.

Public API: `SCENE_KINDS`, `random_scene(rng, kind)`, `rest_on(...)`, `full_set()`.
"""

from __future__ import annotations

import math

import numpy as np

from geometry import tiddlywinks as tw
from geometry.constants import (
    LARGE_WINKS_PER_COLOR,
    MAT_HALF_LENGTH_MM,
    MAT_HALF_WIDTH_MM,
    POT_BASE_RADIUS_MM,
    POT_HEIGHT_MM,
    POT_TOP_RADIUS_MM,
    SMALL_WINKS_PER_COLOR,
    WINK_THICKNESS_MM,
)
from geometry.types import (
    COLOR_ORDER,
    DEFAULT_CORNER_SIGNS,
    Color,
    GeometryError,
    TiddlywinksScene,
    Wink,
    WinkSize,
)
from simulation.primitives import POT_FLOOR_MM, POT_WALL_MM, pot_outer_radius_mm

SCENE_KINDS = ("play", "squops", "potted", "edges", "unplayed", "squidge_off")
HALF_T = WINK_THICKNESS_MM / 2
MIN_GAP_MM = 0.6  # winks placed apart keep at least this edge gap (no accidental contact)
MAX_TILT_DEG = 60.0


def full_set() -> list[tuple[str, Color, WinkSize]]:
    """All 24 winks (TW 2): ids like ``blue-L1`` (large) and ``blue-S3`` (small)."""
    out = []
    for c in COLOR_ORDER:
        out += [(f"{c.value}-L{i + 1}", c, WinkSize.LARGE) for i in range(LARGE_WINKS_PER_COLOR)]
        out += [(f"{c.value}-S{i + 1}", c, WinkSize.SMALL) for i in range(SMALL_WINKS_PER_COLOR)]
    return out


# --- physics of resting winks -------------------------------------------------------------------------------

def _top_face_points(w: Wink, n_ring: int = 48) -> np.ndarray:
    """Points (N, 3) on the top face of a wink: centre, two rings and the rim."""
    th, az = math.radians(w.tilt_deg), math.radians(w.tilt_azimuth_deg)
    u = np.array([math.cos(az), math.sin(az), 0.0])
    n = np.array([-math.sin(th) * u[0], -math.sin(th) * u[1], math.cos(th)])
    e1 = np.array([math.cos(th) * u[0], math.cos(th) * u[1], math.sin(th)])  # up the slope
    e2 = np.cross(n, e1)
    c = np.array([w.center_mm[0], w.center_mm[1], w.z_mm]) + HALF_T * n
    phi = np.linspace(0, 2 * math.pi, n_ring, endpoint=False)
    pts = [c[None, :]]
    for f in (0.35, 0.7, 1.0):
        rr = f * w.radius_mm
        pts.append(c + rr * (np.cos(phi)[:, None] * e1 + np.sin(phi)[:, None] * e2))
    return np.concatenate(pts)


def rest_on(center_mm: tuple[float, float], radius_mm: float, azimuth_deg: float,
            supports: list[Wink]) -> tuple[float, float]:
    """Height ``z_mm`` and ``tilt_deg`` of a wink whose low edge is on the mat and which rises towards
    ``azimuth_deg`` over ``supports``: the smallest tilt at which its underside clears every support's top face.
    """
    az = math.radians(azimuth_deg)
    u = np.array([math.cos(az), math.sin(az)])
    v = np.array([-u[1], u[0]])
    pts = np.concatenate([_top_face_points(s) for s in supports]) if supports else np.zeros((0, 3))
    rel = pts[:, :2] - np.asarray(center_mm)
    s_u, s_v = rel @ u, rel @ v

    def clearance(th: float) -> float:
        a = radius_mm * math.cos(th)
        inside = (s_u / a) ** 2 + (s_v / radius_mm) ** 2 <= 1.0
        if not inside.any():
            return -1.0
        zc = radius_mm * math.sin(th) + HALF_T * math.cos(th)
        under = zc - HALF_T / math.cos(th) + math.tan(th) * s_u[inside]
        return float(np.max(pts[inside, 2] - under))

    lo, hi = 0.0, math.radians(MAX_TILT_DEG)
    if clearance(lo) <= 0:
        return HALF_T, 0.0
    if clearance(hi) > 0:
        raise GeometryError(f"no resting tilt for a wink at {center_mm} over {[s.wink_id for s in supports]}")
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if clearance(mid) > 0:
            lo = mid
        else:
            hi = mid
    th = hi
    return radius_mm * math.sin(th) + HALF_T * math.cos(th), math.degrees(th)


# --- placement helpers ---------------------------------------------------------------------------------------

class _Layout:
    def __init__(self, rng: np.random.Generator, pot_center: tuple[float, float] = (0.0, 0.0)) -> None:
        self.rng = rng
        self.pot = pot_center
        self.winks: list[Wink] = []
        self.pool = {wid: (c, s) for wid, c, s in full_set()}

    def take(self, color: Color | None = None, size: WinkSize | None = None) -> tuple[str, Color, WinkSize]:
        ids = [i for i, (c, s) in self.pool.items() if (color is None or c is color) and (size is None or s is size)]
        if not ids:
            raise GeometryError(f"no {color} {size} wink left")
        wid = ids[int(self.rng.integers(len(ids)))]
        c, s = self.pool.pop(wid)
        return wid, c, s

    def free(self, c: tuple[float, float], r: float, gap: float = MIN_GAP_MM, ignore: set[str] = frozenset()) -> bool:
        if math.dist(c, self.pot) < POT_BASE_RADIUS_MM + r + 2.0:
            return False
        for w in self.winks:
            if w.wink_id in ignore or w.potted or (w.off_mat and w.unplayed):
                continue
            # A tilted wink's plan footprint (an ellipse) lies inside its disc radius.
            if math.dist(c, w.center_mm) < r + w.radius_mm + gap:
                return False
        return True

    def random_field_point(self, r: float, inset: float = 0.0) -> tuple[float, float]:
        """A point whose disc of radius r lies inside the field (inset mm from its boundary)."""
        for _ in range(1000):
            p = (float(self.rng.uniform(-MAT_HALF_LENGTH_MM, MAT_HALF_LENGTH_MM)),
                 float(self.rng.uniform(-MAT_HALF_WIDTH_MM, MAT_HALF_WIDTH_MM)))
            probe = Wink(wink_id="probe", color=Color.BLUE, size=WinkSize.LARGE, center_mm=p, radius_override_mm=r)
            if tw.out_of_bounds_penetration_mm(probe) <= -inset:
                return p
        raise GeometryError("could not find a point in the field")

    def place_played(self, color: Color | None = None, size: WinkSize | None = None,
                     near: tuple[float, float] | None = None, spread: float = 300.0) -> Wink | None:
        wid, c, s = self.take(color, size)
        for _ in range(300):
            if near is None:
                p = self.random_field_point(s.radius_mm, inset=1.0)
            else:
                p = (near[0] + float(self.rng.normal(0, spread)), near[1] + float(self.rng.normal(0, spread)))
                probe = Wink(wink_id="p", color=c, size=s, center_mm=p)
                if tw.out_of_bounds_penetration_mm(probe) > -1.0:
                    continue
            if self.free(p, s.radius_mm):
                w = Wink(wink_id=wid, color=c, size=s, center_mm=p)
                self.winks.append(w)
                return w
        self.pool[wid] = (c, s)
        return None

    def place_unplayed(self, wid: str, c: Color, s: WinkSize, sign: tuple[int, int]) -> bool:
        tri = tw.corner_triangle(sign)
        x0, y0, x1, y1 = tri.bounds
        for _ in range(2000):
            p = (float(self.rng.uniform(x0, x1)), float(self.rng.uniform(y0, y1)))
            w = Wink(wink_id=wid, color=c, size=s, center_mm=p, unplayed=True)
            if tw.baseline_margin_mm(w, sign) < 1.0:
                continue
            if (abs(p[0]) + s.radius_mm > MAT_HALF_LENGTH_MM - 1.0
                    or abs(p[1]) + s.radius_mm > MAT_HALF_WIDTH_MM - 1.0):
                continue
            if self.free(p, s.radius_mm, gap=0.8):
                self.winks.append(w)
                return True
        return False

    def rest_unplayed(self) -> None:
        """Every wink not yet placed waits behind its colour's baseline (or in hand if the corner is full)."""
        for wid, (c, s) in sorted(self.pool.items()):
            sign = DEFAULT_CORNER_SIGNS[c]
            if not self.place_unplayed(wid, c, s, sign):
                self.winks.append(Wink(wink_id=wid, color=c, size=s, center_mm=(0.0, 0.0), unplayed=True,
                                       off_mat=True))
        self.pool.clear()

    def squop(self, lower: list[Wink], color: Color | None = None, size: WinkSize | None = None,
              overlap_ratio: tuple[float, float] = (0.25, 0.7)) -> Wink | None:
        """Put a wink over ``lower`` (the last one is the target): low edge on the mat, resting on the pile."""
        wid, c, s = self.take(color, size)
        target = lower[-1]
        r = s.radius_mm
        for _ in range(200):
            ang = float(self.rng.uniform(0, 2 * math.pi))
            k = float(self.rng.uniform(*overlap_ratio))
            dist = (target.radius_mm + r) * (1 - k) + 0.5
            p = (target.center_mm[0] - math.cos(ang) * dist, target.center_mm[1] - math.sin(ang) * dist)
            probe = Wink(wink_id="p", color=c, size=s, center_mm=p)
            if tw.out_of_bounds_penetration_mm(probe) > -2.0:
                continue
            ids = {w.wink_id for w in lower}
            if not self.free(p, r, ignore=ids):
                continue
            supports = [w for w in self.winks if not w.potted and not (w.off_mat and w.unplayed)
                        and math.dist(w.center_mm, p) < w.radius_mm + r]
            if any(w.wink_id not in ids for w in supports):
                continue
            try:
                z, tilt = rest_on(p, r, math.degrees(ang), supports)
            except GeometryError:
                continue
            if tilt < 1.0:
                continue
            w = Wink(wink_id=wid, color=c, size=s, center_mm=p, z_mm=z, tilt_deg=tilt,
                     tilt_azimuth_deg=math.degrees(ang) % 360.0, above=tuple(sorted(x.wink_id for x in supports)))
            self.winks.append(w)
            return w
        self.pool[wid] = (c, s)
        return None

    def pot_inside(self, n: int) -> list[Wink]:
        """``n`` winks on the pot floor, stacked flat where they overlap."""
        out = []
        for _ in range(n):
            wid, c, s = self.take()
            r = s.radius_mm
            r_free = pot_outer_radius_mm(POT_FLOOR_MM) - POT_WALL_MM - r - 0.3
            ang = float(self.rng.uniform(0, 2 * math.pi))
            rho = float(self.rng.uniform(0, max(r_free, 0.0)))
            p = (self.pot[0] + rho * math.cos(ang), self.pot[1] + rho * math.sin(ang))
            z = POT_FLOOR_MM + HALF_T
            for o in out:
                if math.dist(o.center_mm, p) < o.radius_mm + r:
                    z = max(z, o.z_mm + WINK_THICKNESS_MM)
            w = Wink(wink_id=wid, color=c, size=s, center_mm=p, z_mm=z, potted=True)
            out.append(w)
            self.winks.append(w)
        return out

    def pot_rim(self) -> Wink:
        """A wink balanced flat on the rim: its centre over the rim's top annulus, half over the opening."""
        wid, c, s = self.take()
        r_out = POT_TOP_RADIUS_MM
        r_in = r_out - POT_WALL_MM
        ang = float(self.rng.uniform(0, 2 * math.pi))
        rho = float(self.rng.uniform(r_in + 0.2, r_out - 0.2))
        p = (self.pot[0] + rho * math.cos(ang), self.pot[1] + rho * math.sin(ang))
        w = Wink(wink_id=wid, color=c, size=s, center_mm=p, z_mm=POT_HEIGHT_MM + HALF_T, potted=True)
        self.winks.append(w)
        return w

    def scene(self, **kw) -> TiddlywinksScene:
        return TiddlywinksScene(winks=tuple(sorted(self.winks, key=lambda w: w.wink_id)), pot_center_mm=self.pot,
                                **kw)


# --- scene kinds ---------------------------------------------------------------------------------------------

def _play(lay: _Layout, n: int) -> None:
    for _ in range(n):
        lay.place_played()


def _scene_play(rng, lay):
    _play(lay, int(rng.integers(8, 17)))
    if rng.random() < 0.5:
        lay.pot_inside(int(rng.integers(1, 3)))


def _scene_squops(rng, lay):
    # A pile of three or more.
    base = lay.place_played(near=(float(rng.uniform(-500, 500)), float(rng.uniform(-250, 250))), spread=60)
    if base is not None:
        pile = [base]
        for _ in range(int(rng.integers(2, 4))):
            w = lay.squop(pile)
            if w is not None:
                pile.append(w)
    # A same-colour squop.
    low = lay.place_played()
    if low is not None:
        lay.squop([low], color=low.color)
    # Some ordinary squops.
    for _ in range(int(rng.integers(1, 3))):
        low = lay.place_played()
        if low is not None:
            lay.squop([low])
    _play(lay, int(rng.integers(4, 10)))


def _scene_potted(rng, lay):
    lay.pot_inside(int(rng.integers(1, 4)))
    lay.pot_rim()
    # Some winks close to the pot, as after attempts at potting.
    for _ in range(int(rng.integers(2, 5))):
        lay.place_played(near=lay.pot, spread=60)
    _play(lay, int(rng.integers(4, 10)))


def _scene_edges(rng, lay):
    for _ in range(int(rng.integers(2, 4))):  # overhanging a mat edge (centre still on the mat)
        wid, c, s = lay.take()
        r = s.radius_mm
        for _ in range(200):
            edge = int(rng.integers(4))
            d_in = float(rng.uniform(0.5, r - 1.0))  # centre's distance inside the edge
            if edge < 2:
                x = (MAT_HALF_LENGTH_MM - d_in) * (1 if edge == 0 else -1)
                y = float(rng.uniform(-180, 180))
            else:
                y = (MAT_HALF_WIDTH_MM - d_in) * (1 if edge == 2 else -1)
                x = float(rng.uniform(-750, 750))
            if lay.free((x, y), r):
                lay.winks.append(Wink(wink_id=wid, color=c, size=s, center_mm=(x, y)))
                break
    for _ in range(int(rng.integers(2, 4))):  # straddling a baseline
        wid, c, s = lay.take()
        r = s.radius_mm
        sign = DEFAULT_CORNER_SIGNS[COLOR_ORDER[int(rng.integers(4))]]
        seg = tw.baseline_segment(sign)
        n = tw.corner_normal(sign)
        for _ in range(200):
            q = seg.interpolate(float(rng.uniform(0.15, 0.85)), normalized=True)
            off = float(rng.uniform(-r + 0.5, r - 0.5))
            p = (q.x + n[0] * off, q.y + n[1] * off)
            if lay.free(p, r):
                lay.winks.append(Wink(wink_id=wid, color=c, size=s, center_mm=p))
                break
    _play(lay, int(rng.integers(5, 12)))


def _scene_unplayed(rng, lay):
    _play(lay, int(rng.integers(0, 5)))


def _scene_squidge_off(rng, lay):
    """One wink per colour squidged towards the pot; two or more finish within a hair of each other."""
    keys = {}
    base_gap = float(rng.uniform(0.5, 5.0))
    colors = list(COLOR_ORDER)
    rng.shuffle(colors)
    n_tied = int(rng.integers(2, 4))
    for i, c in enumerate(colors):
        size = WinkSize.LARGE if rng.random() < 0.3 else WinkSize.SMALL
        wid, c, s = lay.take(c, size)
        if i < n_tied:  # the leaders: within half a millimetre of each other
            gap = float(np.clip(base_gap + float(rng.uniform(-0.5, 0.5)) * (0 if i == 0 else 1), 0.5, 5.0))
        else:  # the rest finish clearly further away
            gap = base_gap + float(rng.uniform(3.0, 60.0))
        for _ in range(500):
            ang = float(rng.uniform(0, 2 * math.pi))
            rho = POT_BASE_RADIUS_MM + gap + s.radius_mm
            p = (lay.pot[0] + rho * math.cos(ang), lay.pot[1] + rho * math.sin(ang))
            if all(math.dist(p, w.center_mm) >= w.radius_mm + s.radius_mm + 1.0 for w in lay.winks):
                lay.winks.append(Wink(wink_id=wid, color=c, size=s, center_mm=p))
                keys[c] = gap
                break
        else:
            lay.pool[wid] = (c, s)


_BUILDERS = {"play": _scene_play, "squops": _scene_squops, "potted": _scene_potted, "edges": _scene_edges,
             "unplayed": _scene_unplayed, "squidge_off": _scene_squidge_off}


def random_scene(rng: np.random.Generator, kind: str = "play") -> TiddlywinksScene:
    """A physically plausible rest state of ``kind`` (one of `SCENE_KINDS`); unplaced winks wait behind
    their baselines."""
    if kind not in _BUILDERS:
        raise GeometryError(f"unknown scene kind {kind!r}; choose from {SCENE_KINDS}")
    lay = _Layout(rng)
    _BUILDERS[kind](rng, lay)
    lay.rest_unplayed()
    return lay.scene()
