"""``tableref bench --game marbles-drop``: the drop for who plays first (MB 9(f)) against simulated truth.

Fresh renders of a ring with a scribed line and two to four tolleys on it (and a few marbles), plus as many
without a line (the finder must refuse those); each found line is scored by its angle to the truth, each tolley
by its drop distance against the truth's (perpendicular to the scribed line), and whether that error lies
within the two sigma the referee reports. The verdict is checked too: never a wrong first player; 'too close
to call' is allowed. The camera is the truth's, so the figures are the line finder's and the ball centres'.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

from api.marbles_drop import MarblesDropError, judge_drop_photo
from api.marbles_service import fresh_renders
from vision.marbles_line import ScribedLineNotFoundError

DEV_SEED = 9001


def _drop_spec(rng: np.random.Generator, i: int):
    """Two to four tolleys dropped on the ring and a few marbles; two photos in three with the line scribed."""
    from simulation.marbles import MarblesSceneSpec

    return MarblesSceneSpec(scatter_on=int(rng.integers(0, 8)), tolleys_on=int(rng.integers(2, 5)),
                            scribed_line=i % 3 != 2, framing=str(rng.choice(["ring", "centre"])))


def baseline_line(frame: np.ndarray, camera_dict: dict, balls) -> tuple[np.ndarray, float] | None:
    """The plain method: Canny edges of the same rectified sand and OpenCV's strongest Hough line
    (unit normal, offset in mm), or None when no line gets the votes of the finder's minimum length."""
    from calibration.camera import CameraModel
    from vision.marbles_line import MIN_COVER, MIN_LENGTH_MM, MM_PER_PX, _sand_view

    grid, hp, valid = _sand_view(frame, CameraModel.from_dict(camera_dict), balls)
    img = cv2.normalize(hp, None, 0, 255, cv2.NORM_MINMAX).astype(np.uint8)
    edges = cv2.Canny(cv2.GaussianBlur(img, (0, 0), 1.0), 30, 90) * valid.astype(np.uint8)
    lines = cv2.HoughLines(edges, 1, math.pi / 720, int(MIN_LENGTH_MM / MM_PER_PX * MIN_COVER))
    if lines is None:
        return None
    rho, theta = (float(v) for v in lines[0][0])
    n_px = np.array([math.cos(theta), math.sin(theta)])  # col, row; rows run against +y
    normal = np.array([n_px[0], -n_px[1]])
    offset = rho * grid.mm_per_px + normal @ np.array([grid.x0_mm, grid.y0_mm])
    return normal, float(offset)


def _truth_distances(truth: dict) -> dict[str, float]:
    line = truth["scribed_line"]
    p0, p1 = np.asarray(line["p0_mm"], float), np.asarray(line["p1_mm"], float)
    u = (p1 - p0) / np.linalg.norm(p1 - p0)
    n = np.array([-u[1], u[0]])
    return {p["id"]: abs(float((np.asarray(p["center_mm"], float) - p0) @ n)) for p in truth["pieces"]
            if p["kind"] == "tolley" and p["on_ring"]}


def bench_marbles_drop(n_fresh: int = 24, *, cache_dir: Path, seed: int = DEV_SEED,
                       log: Callable[[str], None] = print) -> list[str]:
    paths = fresh_renders(n_fresh, cache_dir, seed, log, prefix="drop", spec_of=_drop_spec)
    with_line = found = false_lines = refused = 0
    errs, within, angles, times = [], 0, [], []
    verdicts = {"right": 0, "too_close": 0, "wrong": 0}
    b_found = b_false = b_refused = no_drop = 0
    b_errs: list[float] = []
    notes = []
    for jpg in paths:
        truth = json.loads(jpg.with_suffix(".json").read_text())
        frame = cv2.imread(str(jpg))
        has = truth.get("scribed_line") is not None
        with_line += has
        td_base = _truth_distances(truth) if has else {}
        base = baseline_line(frame, truth["calibration"]["camera"],
                             [(p["center_mm"], p["diameter_mm"] / 2) for p in truth["pieces"]])
        if base is None:
            b_refused += not has
        elif not has:
            b_false += 1
        else:
            b_found += 1
            for p in truth["pieces"]:
                if p["id"] in td_base:
                    b_errs.append(abs(float(base[0] @ np.asarray(p["center_mm"])) - base[1]) - td_base[p["id"]])
        t0 = time.process_time()
        try:
            doc = judge_drop_photo(frame, truth["calibration"]["camera"])
        except ScribedLineNotFoundError as exc:
            refused += not has
            if has:
                notes.append(f"{jpg.name}: line missed ({exc})")
            continue
        except MarblesDropError as exc:
            no_drop += 1
            notes.append(f"{jpg.name}: {exc}")
            continue
        finally:
            times.append(1000 * (time.process_time() - t0))
        if not has:
            false_lines += 1
            notes.append(f"{jpg.name}: a line found where none was scribed")
            continue
        found += 1
        line = doc["scribed_line"]
        p0, p1 = np.asarray(truth["scribed_line"]["p0_mm"]), np.asarray(truth["scribed_line"]["p1_mm"])
        q0, q1 = np.asarray(line["p0_mm"]), np.asarray(line["p1_mm"])
        cosang = abs(float((p1 - p0) @ (q1 - q0))) / (np.linalg.norm(p1 - p0) * np.linalg.norm(q1 - q0))
        angles.append(math.degrees(math.acos(min(1.0, cosang))))
        td = _truth_distances(truth)
        truth_xy = {p["id"]: np.asarray(p["center_mm"]) for p in truth["pieces"] if p["id"] in td}
        matched = {}
        for d in doc["drops"]:  # each measured tolley to the nearest true one
            tid = min(truth_xy, key=lambda k: np.linalg.norm(truth_xy[k] - np.asarray(d["center_mm"])))
            if np.linalg.norm(truth_xy[tid] - np.asarray(d["center_mm"])) < 15.0:
                matched[tid] = d
                e = d["distance_mm"] - td[tid]
                errs.append(e)
                within += abs(e) <= 2 * d["sigma_mm"]
        if len(matched) >= 2:
            true_first = min(matched, key=td.get)
            r = doc["rulings"][0]
            if r["decision"] == "too_close_to_call":
                verdicts["too_close"] += 1
            elif r["colors"][0] == matched[true_first]["player"]:
                verdicts["right"] += 1
            else:
                verdicts["wrong"] += 1
                notes.append(f"{jpg.name}: wrong first player {r['colors'][0]} (truth {true_first})")
    a = np.abs(np.asarray(errs)) if errs else np.zeros(1)
    no_line = len(paths) - with_line
    lines = [
        f"tableref bench --game marbles-drop: {len(paths)} fresh renders (1920x1080, seed {seed}): "
        f"{with_line} with a scribed line, {no_line} without; camera from the truth",
        f"  line found: {found}/{with_line} ({no_drop} photos with fewer than two tolleys found are not asked); "
        f"refused where none was scribed: {refused}/{no_line} (false lines {false_lines})",
        f"  line angle error: median {np.median(angles) if angles else float('nan'):.3f} deg, "
        f"max {max(angles) if angles else float('nan'):.3f} deg",
        f"  drop distance error over {len(errs)} tolleys: median {np.median(a):.2f} mm, p95 "
        f"{np.percentile(a, 95):.2f} mm, max {a.max():.2f} mm; within the reported 2 sigma: "
        f"{within}/{len(errs)}",
        f"  first player (MB 9(f)): {verdicts['right']} right, {verdicts['too_close']} too close to call "
        f"(re-drop), {verdicts['wrong']} wrong",
        f"  time per photo (CPU, analysis + line): median {np.median(times):.0f} ms",
    ]
    ba = np.abs(np.asarray(b_errs)) if b_errs else np.full(1, np.nan)
    lines.append(f"  baseline (Canny + cv2.HoughLines on the same rectified sand, truth balls masked): line found "
                 f"{b_found}/{with_line}, refused {b_refused}/{no_line} (false lines {b_false}); drop distance "
                 f"error median {np.median(ba):.2f} mm, p95 {np.percentile(ba, 95):.2f} mm")
    return lines + [f"  - {n}" for n in notes]

