"""A ball parted from its cast shadow: the shadow only darkens the sand, the ball shows a colour of its own.

Why. One lamp lights the ring, so a ball's blob (the departure from the sand round it) is the ball with its cast
shadow beside it, towards the lamp-away side. Under a low lamp the shadow is longer than the ball (a ball and its
shadow span about D (1 + 1 / tan e) at elevation e), so the blob of one ball can be longer and larger than the
single-ball shape tests allow (seed 953_003: 2.48 diameters long; 1129_006: a 18 mm tolley's blob 1.02 times the
largest single ball's area, read as a close-packed group of four), and its centroid leans into the shadow.

The shadow is the sand lit by the room alone: less light of nearly the same colour. A change of light scales the
sand's XYZ, and CIELAB's a* and b* then scale with L* + 16 (all three are cube roots of those), so a* / (L* + 16)
and b* / (L* + 16) stay the sand's: the colour departure after rescaling each pixel to the sand's own lightness is
the colour no shade can make (``shade_free_chroma``). A shade pixel is darker than the sand with little such colour;
a ball's glass or body colour, its white highlight and the vanes of a cat's eye have it (1129_002: a marble's shadow
4.1, the two marbles either side of it 14-15, on the 8-bit CIELAB scale).
"""

from __future__ import annotations

import cv2
import numpy as np

# OpenCV's 8-bit CIELAB: L* scaled by 255 / 100, a* and b* offset by 128
_L_SCALE = 255.0 / 100.0
_AB_ZERO = 128.0


def shade_departures(lab: np.ndarray, bg_lab: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each pixel's lightness departure from the local surface ``bg_lab`` (8-bit CIELAB L*, negative in shade) and its
    colour departure rescaled to the surface's lightness (``shade_free_chroma``); both 0 outside ``valid``.

    The surface is the detector's own narrow median (``vision.marbles._saliency``), passed in rather than built again
    over the whole orthophoto, and the caller reads only the window of the blob it parts.

    >>> img = np.full((40, 40, 3), (90, 160, 200), np.uint8)  # yellow sand (BGR)
    >>> img[10:20, 10:20] = (45, 80, 100)  # the same sand at half the light
    >>> img[25:32, 25:32] = (200, 120, 60)  # a blue ball
    >>> lab = cv2.cvtColor(img, cv2.COLOR_BGR2LAB)
    >>> dl, free = shade_departures(lab, np.broadcast_to(lab[0, 0], lab.shape), np.ones((40, 40), bool))
    >>> bool(dl[15, 15] < -20 and free[15, 15] < 5 and free[28, 28] > 30)
    True
    """
    lab = np.asarray(lab, np.float32)
    bg = np.asarray(bg_lab, np.float32)
    dl = lab[..., 0] - bg[..., 0]
    free = shade_free_chroma(lab, bg)
    dl[~valid] = 0.0
    free[~valid] = 0.0
    return dl, free


def shade_free_chroma(lab: np.ndarray, bg_lab: np.ndarray) -> np.ndarray:
    """The a*b* distance between a pixel's colour, brought to the background's lightness, and the background's.

    Both in OpenCV's 8-bit CIELAB, (..., 3). Pure darkening or brightening of the background gives 0.

    >>> bg = np.array([[170.0, 131.0, 150.0]])  # sand: L* 66.7, a* 3, b* 22
    >>> s = (0.5 * (170 / 2.55 + 16) - 16) / (170 / 2.55 + 16)  # half its L* + 16: the same colour in shade
    >>> shade = np.array([[2.55 * (0.5 * (170 / 2.55 + 16) - 16), 128 + 3 * 0.5, 128 + 22 * 0.5]])
    >>> float(shade_free_chroma(shade, bg)[0]) < 0.01
    True
    """
    lab = np.asarray(lab, np.float32)
    bg_lab = np.asarray(bg_lab, np.float32)
    scale = (bg_lab[..., 0] / _L_SCALE + 16.0) / (lab[..., 0] / _L_SCALE + 16.0)
    da = (lab[..., 1] - _AB_ZERO) * scale - (bg_lab[..., 1] - _AB_ZERO)
    db = (lab[..., 2] - _AB_ZERO) * scale - (bg_lab[..., 2] - _AB_ZERO)
    return np.sqrt(da * da + db * db)


def shade_mask(dl: np.ndarray, free: np.ndarray, min_chroma: float) -> np.ndarray:
    """Pixels that are shade: darker than the surface, with less colour of their own than ``min_chroma``. Read on a
    3 x 3 mean, as cores are.

    The room's light that fills a shadow is not quite the lamp's colour (1129_002: a marble's shadow 4-9 from the sand
    once brought to its lightness, the marbles beside it 13-15), so the caller passes the lit test's core split
    (``vision.marbles_lit.MIN_CORE_CHROMA``, 8: between the ground's false pieces, 5.8 at most, and its balls, 10+)."""
    free3 = cv2.blur(np.asarray(free, np.float32), (3, 3))
    return (np.asarray(dl) < 0.0) & (free3 < min_chroma)


def without_shade(mask: np.ndarray, shade: np.ndarray) -> np.ndarray:
    """``mask`` with its ``shade`` pixels taken away, opened by a 2 x 2 square as blobs are (a thread of noise does
    not join a ball to its shadow's fringe)."""
    m = (np.asarray(mask, bool) & ~np.asarray(shade, bool)).astype(np.uint8)
    return cv2.morphologyEx(m, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8)).astype(bool)
