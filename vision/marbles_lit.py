"""Whether a candidate on the ground is a lit ball or the ground's own pattern (a paving joint, a crack, a shadow).

Why. The ground round the ring is not the ring's sand: pavement has dark joints that cross and run out of the
photo, grass and earth have tufts and clods, and a ball's own cast shadow lies beside it. A threshold on the
departure from the ground finds all of them. A ball is a sphere of glass or coloured body lit by one lamp: it
shows its own colour (a glass tint or the body's, a hue the ground has not) or, where it is pale or clear, a
specular highlight brighter than any of the ground round it. A joint, a crack or a shadow only darkens the
ground (the same albedo times less light, or less albedo): no hue of its own, no highlight.

Measured (development set and seeds 7, 99: 25 photos showing the ground or pavement, every off-ring ball in them
and every off-ring piece the ground layers found that is no ball, features read at 9 ortho px per marble): 78 of
78 balls show a core colour of 10+ (CIELAB a*b* from the ground round them) or a highlight of 7.7+ ground MADs;
the 12 false pieces (joint crossings, joints cut by the photo's edge, pavement at the rim's foot, a ball's
shadow on grass) show a core colour of at most 5.8 and a highlight of at most 1.0 MAD.
"""

from __future__ import annotations

import cv2
import numpy as np

# A ball's core (within this share of its diameter of its centre) carries its colour...
CORE_DIAMETERS = 0.3
# ... and its disc (half a diameter) its highlight, measured against the ground in an annulus 1 to 2.5 diameters
# out (beyond the ball and its contact shadow, near enough to share its light)
DISC_DIAMETERS = 0.5
GROUND_DIAMETERS = (1.0, 2.5)
# A ball's core colour departs from the ground's by at least this (CIELAB a*b*, 8-bit scale): midway between the
# false pieces' 5.8 at most and the balls' 10 at least where no highlight shows
MIN_CORE_CHROMA = 8.0
# A candidate that fails one of the detector's shape tests is kept on its colour alone only from the least core
# colour every measured ball showed (10), not the midway split: a patch of earth in grass is brown in green (seed 7:
# 8.2 from the grass, with a 4.5 MAD 'highlight' of its paler soil)
SURE_CORE_CHROMA = 10.0
# ... or its brightest (95th percentile) pixel stands this many robust deviations (1.4826 MAD) of the ground's
# lightness above the ground's median: between the false pieces' 1.0 at most and the pale balls' 7.7 at least
MIN_HIGHLIGHT_MADS = 4.0
HIGHLIGHT_PERCENTILE = 95.0


# A ball's own hue is one the ground shows almost nowhere: fewer than this share of the ground's points (each read
# over a core's reach, as a core is) lie within this CIELAB a*b* distance of its core's. A patch of earth or straw
# in grass, however far its hue from the grass round it, recurs over the ground (marbles_02's soil patch: 37 % of
# its far ground within 5), a green marble's hue does not (bench_2026_021, 029: 0.02 % and 0 %)
GROUND_HUE_RADIUS = 5.0
GROUND_HUE_MAX_SHARE = 0.01


def lit_ball_cues(lab: np.ndarray, center_px, marble_px: float) -> tuple[float, float]:
    """A candidate's core colour departure (CIELAB a*b*) and highlight (ground lightness MADs) against the ground
    round it; ``lab`` is the orthophoto in OpenCV's 8-bit CIELAB, ``center_px`` (col, row) in it.

    >>> lab = np.full((60, 60, 3), 128.0, np.float32); lab[..., 0] = 100 + (np.arange(60) % 3)  # grey ground
    >>> lab[27:34, 27:34, 1] = 150.0  # a reddish ball's core
    >>> [round(v, 1) for v in lit_ball_cues(lab, (30, 30), 10.0)]
    [22.0, 0.7]
    """
    lab = np.asarray(lab, np.float32)
    h, w = lab.shape[:2]
    cx, cy = (float(v) for v in center_px)
    half = int(np.ceil(GROUND_DIAMETERS[1] * marble_px)) + 1
    r0, r1 = max(0, int(cy) - half), min(h, int(cy) + half + 1)
    c0, c1 = max(0, int(cx) - half), min(w, int(cx) + half + 1)
    win = lab[r0:r1, c0:c1]
    rr, cc = np.mgrid[r0:r1, c0:c1]
    dist = np.hypot(cc - cx, rr - cy) / marble_px
    ground = (dist >= GROUND_DIAMETERS[0]) & (dist <= GROUND_DIAMETERS[1])
    core = dist <= CORE_DIAMETERS
    disc = dist <= DISC_DIAMETERS
    if ground.sum() < 10 or not core.any():
        return 0.0, 0.0
    ab_ground = np.median(win[ground][:, 1:], axis=0)
    chroma = float(np.hypot(*(np.median(win[core][:, 1:], axis=0) - ab_ground)))
    lum = win[..., 0]
    l_ground = float(np.median(lum[ground]))
    mad = 1.4826 * float(np.median(np.abs(lum[ground] - l_ground))) + 1e-3
    highlight = (float(np.percentile(lum[disc], HIGHLIGHT_PERCENTILE)) - l_ground) / mad
    return chroma, highlight


def is_lit_ball(lab: np.ndarray, center_px, marble_px: float) -> bool:
    """Whether the candidate shows a ball's own colour or highlight, which no joint, crack or shadow has."""
    chroma, highlight = lit_ball_cues(lab, center_px, marble_px)
    return chroma >= MIN_CORE_CHROMA or highlight >= MIN_HIGHLIGHT_MADS


def lit_point_near(lab: np.ndarray, center_px, marble_px: float) -> np.ndarray | None:
    """Where within half a diameter of a candidate a ball's own colour or highlight shows, if it shows at all.

    A ball's blob (the ball with its cast shadow) leans into the shadow, where neither its colour nor its highlight
    shows: under a low lamp its centroid may lie in the shadow itself (seeds 7, 99: a dark marble lost so). The
    ball is then within half a diameter of the centroid, beside it towards the lamp. So is the ball whose own
    shadow was taken for a candidate: the caller merges what this finds with the balls already found. The place
    returned is the middle of the points round the strongest one (within a core's reach of it) where a ball shows,
    as every point whose core lies on the ball shows it about as well.
    """
    def shows(q) -> float:
        chroma, highlight = lit_ball_cues(lab, q, marble_px)
        return max(chroma / MIN_CORE_CHROMA, highlight / MIN_HIGHLIGHT_MADS)

    def disc(c, reach):
        n = int(np.floor(reach))
        return [np.asarray(c, float) + (dx, dy) for dy in range(-n, n + 1) for dx in range(-n, n + 1)
                if dx * dx + dy * dy <= reach * reach]

    scored = [(shows(q), q) for q in disc(center_px, DISC_DIAMETERS * marble_px)]
    best, at = max(scored, key=lambda t: t[0])
    if best < 1.0:
        return None
    ball = [q for q in disc(at, CORE_DIAMETERS * marble_px) if shows(q) >= 1.0]
    return np.mean(ball, axis=0)


def ground_hues(lab: np.ndarray, ground: np.ndarray, marble_px: float) -> np.ndarray:
    """The ground's a*b* histogram (256 x 256, summing to 1) over the ``ground`` mask of the orthophoto ``lab``,
    each point's hue averaged over a core's reach so that it is read as a candidate's core is."""
    sigma = 0.5 * CORE_DIAMETERS * marble_px
    ab = cv2.GaussianBlur(np.asarray(lab, np.float32)[..., 1:], (0, 0), sigma)[ground]
    idx = np.clip(np.round(ab).astype(int), 0, 255)
    hist = np.bincount(idx[:, 0] * 256 + idx[:, 1], minlength=256 * 256).astype(np.float64)
    return (hist / max(1.0, hist.sum())).reshape(256, 256)


def ground_hue_share(hues: np.ndarray, lab: np.ndarray, center_px, marble_px: float) -> float:
    """The share of the ground (``ground_hues``) whose hue lies within ``GROUND_HUE_RADIUS`` of the candidate's core.

    >>> lab = np.full((60, 60, 3), 128.0, np.float32); lab[27:34, 27:34, 1] = 150.0  # a reddish core on grey
    >>> hues = ground_hues(lab, np.ones((60, 60), bool), 10.0)
    >>> ground_hue_share(hues, lab, (30, 30), 10.0) < GROUND_HUE_MAX_SHARE < ground_hue_share(hues, lab, (5, 5), 10.0)
    True
    """
    h, w = lab.shape[:2]
    cx, cy = (float(v) for v in center_px)
    reach = CORE_DIAMETERS * marble_px
    r0, r1 = max(0, int(cy - reach)), min(h, int(cy + reach) + 2)
    c0, c1 = max(0, int(cx - reach)), min(w, int(cx + reach) + 2)
    rr, cc = np.mgrid[r0:r1, c0:c1]
    core = np.hypot(cc - cx, rr - cy) <= reach
    if not core.any():
        return 1.0
    a0, b0 = np.median(np.asarray(lab[r0:r1, c0:c1], np.float32)[core][:, 1:], axis=0)
    aa, bb = np.mgrid[0:256, 0:256]
    return float(hues[np.hypot(aa - a0, bb - b0) <= GROUND_HUE_RADIUS].sum())
