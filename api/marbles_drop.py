"""Who plays first in ring marbles (MB 9(f), A1): the tolleys dropped on the ring and the line scribed in the
sand, from one photo. Each drop distance is the perpendicular plan distance from a tolley's centre to the
line fitted to the groove (MB P3); distances closer than the measurement can separate are 'too close to
call' and the tied players re-drop (MB I-2, I-3)."""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np

from adjudicator.marbles import judge_first_player
from api.marbles_service import analyze_marbles_photo, annotate_marbles
from calibration.camera import CameraModel
from vision.marbles_line import find_scribed_line


# The ball finder places a glass tolley by its blob, which refraction, the highlight and the contact shadow pull
# off the sphere's centre by up to about a quarter of its radius (1-5 mm measured on `tableref bench --game
# marbles-drop`, where the finder itself claims 0.5-1.9 mm); a drop distance carries at least that.
TOLLEY_CENTRE_SIGMA_PER_DIAMETER = 1 / 8


class MarblesDropError(ValueError):
    """The photo cannot settle the drop (too few tolleys, an unknown owner); the message says what is missing."""


def judge_drop_photo(frame_bgr: np.ndarray, calibration=None, *, owners: dict[str, str] | None = None,
                     team_match: bool = True, image_path: str | None = None) -> dict[str, Any]:
    """The marbles analysis plus ``scribed_line``, ``drops`` (each tolley's player, distance and its sigma,
    closest first) and the MB 9(f) ruling. ``owners`` maps tolley ids to players (default: the ids)."""
    doc = analyze_marbles_photo(frame_bgr, calibration, image_path=image_path)
    tolleys = [p for p in doc["pieces"] if p["kind"] == "tolley" and p["on_ring"]]
    owners = dict(owners or {})
    unknown = sorted(set(owners) - {p["id"] for p in tolleys})
    if unknown:
        raise MarblesDropError(f"no tolley on the ring with id {', '.join(unknown)}; the photo shows "
                               f"{', '.join(p['id'] for p in tolleys) or 'none'}")
    if len(tolleys) < 2:
        raise MarblesDropError(f"the drop needs two or more tolleys on the ring; the photo shows {len(tolleys)}")
    camera = CameraModel.from_dict(doc["calibration"]["camera"])
    line = find_scribed_line(frame_bgr, camera, [(p["center_mm"], p["diameter_mm"] / 2) for p in doc["pieces"]])
    drops = []
    for p in tolleys:
        centre_sigma = max(float(p.get("position_sigma_mm", 0.0)), p["diameter_mm"] * TOLLEY_CENTRE_SIGMA_PER_DIAMETER)
        sigma = math.hypot(centre_sigma, line.offset_sigma_mm)
        drops.append({"tolley_id": p["id"], "player": owners.get(p["id"], p["id"]), "center_mm": p["center_mm"],
                      "distance_mm": round(line.distance_mm(p["center_mm"]), 2), "sigma_mm": round(sigma, 3)})
    drops.sort(key=lambda d: d["distance_mm"])
    if len({d["player"] for d in drops}) != len(drops):
        raise MarblesDropError("two tolleys are given the same player; name each tolley's owner once")
    ruling = judge_first_player({d["player"]: d["distance_mm"] for d in drops},
                                position_sigma_mm=max(d["sigma_mm"] for d in drops), team_match=team_match)
    return {**doc, "scribed_line": line.to_dict(), "drops": drops, "rulings": [ruling.to_dict()]}


def annotate_drop(frame_bgr: np.ndarray, doc: dict[str, Any]) -> np.ndarray:
    """The marbles picture plus the fitted line and each tolley's perpendicular to it with its distance."""
    img = annotate_marbles(frame_bgr, doc)
    line = doc.get("scribed_line")
    if not line:
        return img
    cam = CameraModel.from_dict(doc["calibration"]["camera"])
    scale = max(1.0, img.shape[1] / 1920)
    p0, p1 = np.asarray(line["p0_mm"], float), np.asarray(line["p1_mm"], float)
    ends = cam.project_mm(np.array([[*p0, 0.0], [*p1, 0.0]]))
    cv2.line(img, tuple(int(v) for v in np.round(ends[0])), tuple(int(v) for v in np.round(ends[1])), (255, 0, 255),
             max(1, int(2 * scale)), cv2.LINE_AA)
    u = (p1 - p0) / np.linalg.norm(p1 - p0)
    for d in doc.get("drops", []):
        c = np.asarray(d["center_mm"], float)
        foot = p0 + u * float((c - p0) @ u)
        seg = cam.project_mm(np.array([[*c, 0.0], [*foot, 0.0]]))
        a, b = (tuple(int(v) for v in np.round(q)) for q in seg)
        cv2.line(img, a, b, (255, 0, 255), max(1, int(scale)), cv2.LINE_AA)
        label = f"{d['player']} {d['distance_mm']:.1f} mm"
        for col, th in (((0, 0, 0), 3), ((255, 255, 255), 1)):
            cv2.putText(img, label, (a[0] + int(8 * scale), a[1] - int(8 * scale)), cv2.FONT_HERSHEY_SIMPLEX,
                        0.6 * scale, col, max(1, int(th * scale)), cv2.LINE_AA)
    return img
