"""Edge support of a pyramid hypothesis: do the photo's intensity steps run along its projected outline?

A colour segmentation loses the faces of a translucent piece over wood of its own hue, or a face turned from
the light (cut as shade), so a silhouette fitted to the blob alone shrinks or slides onto a smaller piece. The
piece's outline still shows as a straight step in the photo: the plastic's Fresnel rim and the change of
path length through the walls step the light at the edge whatever the table's hue. The projected outline of
a hypothesis (the convex hull of its five vertices, through the known camera) is sampled every pixel; at each
sample the step across the outline (the photo's gradient along the outline's normal, strongest of B, G, R) is
read in units of the photo's own gradient noise and capped, so one strong line (a tape's edge, a plank joint)
cannot carry a fit; wood grain steps mostly along its streaks, a piece's edge at any angle. The mean capped
step over the outline is the support, in [0, 1].
"""

from __future__ import annotations

import cv2
import numpy as np
from shapely.geometry import Polygon

# A step this many times the photo's median gradient magnitude counts fully; beyond it no more (one strong
# line does not carry a fit). The median is mostly the table's grain and sensor noise.
EDGE_SATURATION_RATIO = 6.0
# Outline samples per pixel of outline length.
SAMPLES_PER_PX = 1.0


class EdgeMap:
    """Per-channel image gradients of the working photo, normalised by the photo's median gradient."""

    def __init__(self, frame_bgr: np.ndarray):
        f = cv2.GaussianBlur(frame_bgr.astype(np.float32), (3, 3), 0.8)
        gx = cv2.Sobel(f, cv2.CV_32F, 1, 0, ksize=3) / 8.0
        gy = cv2.Sobel(f, cv2.CV_32F, 0, 1, ksize=3) / 8.0
        mag = np.sqrt(gx**2 + gy**2).max(axis=2)
        noise = float(np.median(mag[::3, ::3])) or 1.0
        scale = 1.0 / (EDGE_SATURATION_RATIO * noise)
        self.gx = gx * scale
        self.gy = gy * scale
        self.shape = frame_bgr.shape[:2]

    def outline_support(self, outline_px: np.ndarray, skip: list[Polygon] | None = None) -> tuple[float, int]:
        """Sum of capped normal steps along a closed outline (N, 2) and the number of samples taken.

        Samples strictly inside any polygon of ``skip`` (another piece of the same hypothesis, in front of
        or behind this one) are not on the union's outline and are left out.
        """
        pts = np.asarray(outline_px, float)
        nxt = np.concatenate([pts[1:], pts[:1]])  # the next vertex (np.roll's result, without its overhead)
        seg = nxt - pts
        length = np.hypot(seg[:, 0], seg[:, 1])
        ok = length > 1e-6
        pts, seg, length = pts[ok], seg[ok], length[ok]
        if len(pts) == 0:
            return 0.0, 0
        counts = np.maximum(1, np.round(length * SAMPLES_PER_PX).astype(int))
        idx = np.repeat(np.arange(len(pts)), counts)
        starts = np.cumsum(counts) - counts
        t = (np.arange(int(counts.sum())) - starts[idx] + 0.5) / counts[idx]
        xy = pts[idx] + seg[idx] * t[:, None]
        normal = np.column_stack([seg[idx, 1], -seg[idx, 0]]) / length[idx, None]
        if skip:
            from shapely import contains_xy

            keep = np.ones(len(xy), bool)
            for poly in skip:
                keep &= ~contains_xy(poly, xy[:, 0], xy[:, 1])
            xy, normal = xy[keep], normal[keep]
        n = len(xy)
        if n == 0:
            return 0.0, 0
        h, w = self.shape
        inside = (xy[:, 0] >= 0) & (xy[:, 0] <= w - 1) & (xy[:, 1] >= 0) & (xy[:, 1] <= h - 1)
        xy, normal = xy[inside], normal[inside]
        if len(xy) == 0:
            return 0.0, n
        mx = np.ascontiguousarray(xy[:, 0], np.float32).reshape(1, -1)
        my = np.ascontiguousarray(xy[:, 1], np.float32).reshape(1, -1)
        gx = cv2.remap(self.gx, mx, my, cv2.INTER_LINEAR).reshape(-1, 3)
        gy = cv2.remap(self.gy, mx, my, cv2.INTER_LINEAR).reshape(-1, 3)
        step = np.abs(gx * normal[:, :1] + gy * normal[:, 1:2]).max(axis=1)
        return float(np.minimum(step, 1.0).sum()), n

    def support(self, hulls_px: list[np.ndarray]) -> float:
        """Mean capped step over the outline of the union of convex hulls, in [0, 1]."""
        # a convex hull is a valid polygon: no repair needed to test points against it
        polys = [Polygon(h) for h in hulls_px] if len(hulls_px) > 1 else []
        total, count = 0.0, 0
        for k, h in enumerate(hulls_px):
            s, n = self.outline_support(h, [p for j, p in enumerate(polys) if j != k] or None)
            total += s
            count += n
        return total / count if count else 0.0
