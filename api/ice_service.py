"""Ice Tiddly Winks service: score a photo of pyramids, draw the verdicts, and bench the pipeline.

``score_ice_photo`` wires vision (pieces in pixels and mm) to the adjudicator (IT Launch / IT Score rulings);
``annotate_ice`` draws each verdict and its points; ``bench_ice`` measures the figures of issue 7 against the
simulator's exact truth, next to a plain baseline (colour blobs, all taken as upright) on the same images.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from adjudicator.ice_winks import adjudicate
from adjudicator.types import Decision
from calibration.camera import CameraModel
from geometry.pyramids import SIZES, IcePiece, StartLine, base_mm
from vision.pyramids import DEFAULT_PARAMS, analyze_ice_tiddlywinks
from vision.pyramids_color import classify_color
from vision.pyramids_segment import difference_map, foreground_mask, shadow_mask, table_reference_bgr

GAME = "ice-tiddlywinks"


class IceServiceError(ValueError):
    """A request to the Ice Tiddly Winks service is malformed; the message names the offending value."""


# --- start lines ----------------------------------------------------------------------------------------------


def parse_start_line(spec: dict, camera: CameraModel | None, image_size_wh_px: tuple[int, int]) -> StartLine:
    """A start line from ``{"color", "p0", "p1", "frame": "px"|"mm", "stash_point"?}``.

    Pixel points need a camera (they are taken where their rays meet the table). Without ``stash_point`` the
    stash area is the side away from the middle of the view (a player stands at the table edge).
    """
    try:
        color = str(spec["color"])
        p0, p1 = np.asarray(spec["p0"], float), np.asarray(spec["p1"], float)
    except (KeyError, TypeError, ValueError) as exc:
        raise IceServiceError(f"start line needs color, p0 and p1, got {spec!r}") from exc
    frame = spec.get("frame", "px")
    stash = spec.get("stash_point")
    w, h = image_size_wh_px
    if frame == "px":
        if camera is None:
            raise IceServiceError("start lines in pixels need a calibration (--calibration)")
        pts = [p0, p1] + ([np.asarray(stash, float)] if stash is not None else [])
        mm = camera.image_to_table_mm(np.array(pts), 0.0)
        p0, p1 = mm[0], mm[1]
        stash = mm[2] if stash is not None else None
        middle = camera.image_to_table_mm(np.array([[(w - 1) / 2, (h - 1) / 2]]), 0.0)[0]
    elif frame == "mm":
        middle = np.zeros(2)
        if camera is not None:
            middle = camera.image_to_table_mm(np.array([[(w - 1) / 2, (h - 1) / 2]]), 0.0)[0]
    else:
        raise IceServiceError(f"start line frame must be 'px' or 'mm', got {frame!r}")
    if stash is None:
        # the foot of the perpendicular from the middle, mirrored: a point on the far side of the line
        u = (p1 - p0) / (np.linalg.norm(p1 - p0) or 1.0)
        foot = p0 + u * float((middle - p0) @ u)
        away = foot - middle
        n = float(np.linalg.norm(away))
        away = away / n if n > 1e-6 else np.array([-u[1], u[0]])
        stash = foot + 100.0 * away
    return StartLine(color=color, p0_mm=tuple(p0), p1_mm=tuple(p1), stash_point_mm=tuple(stash))


# --- scoring --------------------------------------------------------------------------------------------------


def _ice_pieces(doc: dict) -> list[IcePiece]:
    out = []
    for p in doc["pieces"]:
        out.append(
            IcePiece(
                piece_id=p["id"],
                color=p["color"],
                size=p["size"],
                pose=p["pose"],
                center_mm=tuple(p["center_mm"]),
                axis_tilt_deg=min(float(p["axis_tilt_deg"]), 90.0) if p["pose"] != "lying" else 90.0,
                supported_by=tuple(p.get("supported_by", ("table",))),
                hidden=bool(p.get("hidden", False)),
                confidence=float(p["confidence"]),
                flagged=bool(p["flagged"]),
            )
        )
    return out


def score_ice_photo(
    frame_bgr: np.ndarray,
    camera: CameraModel | None = None,
    colours: Iterable[str] | None = None,
    start_lines: Iterable[dict] | None = None,
) -> dict[str, Any]:
    """Scene document of one photo plus ``scores`` (colour -> points) and ``rulings``.

    ``colours`` are the players' colours: pieces are only given those colours and only those are scored.
    ``start_lines`` are dicts as ``parse_start_line`` takes. A flagged piece is not scored: its ruling refers
    it to the umpire (``refer_to_umpire``) and it is listed in ``flagged_piece_ids``.
    """
    cols = tuple(c.strip() for c in colours if c.strip()) if colours else None
    doc = analyze_ice_tiddlywinks(frame_bgr, camera, colours=cols)
    h, w = frame_bgr.shape[:2]
    lines = [parse_start_line(s, camera, (w, h)) for s in (start_lines or [])]
    pieces = _ice_pieces(doc)
    scores, rulings = adjudicate(pieces, lines, colors=cols)
    points: dict[str, int] = {}
    verdicts: dict[str, str] = {}
    for r in rulings:
        if r.rule == "IT Score" and len(r.piece_ids) == 1:
            verdicts[r.piece_ids[0]] = r.decision.value
            points[r.piece_ids[0]] = int(r.evidence.get("score_points", 0)) if r.decision is Decision.SCORE else 0
    for p in doc["pieces"]:
        p["points"] = points.get(p["id"], 0)
        p["verdict"] = verdicts.get(p["id"], "not_scored")
    doc["scores"] = scores
    doc["rulings"] = [r.to_dict() for r in rulings]
    doc["start_lines"] = [
        {"color": s.color, "p0_mm": list(s.p0_mm), "p1_mm": list(s.p1_mm), "stash_point_mm": list(s.stash_point_mm)}
        for s in lines
    ]
    doc["flagged_piece_ids"] = [p["id"] for p in doc["pieces"] if p["flagged"]]
    return doc


# --- annotation -----------------------------------------------------------------------------------------------

_DRAW_BGR = {
    "red": (40, 40, 230), "yellow": (0, 220, 255), "green": (40, 180, 40), "blue": (230, 90, 20),
    "purple": (160, 40, 140), "orange": (0, 140, 255), "cyan": (220, 200, 0), "clear": (235, 235, 235),
    "black": (30, 30, 30), "white": (255, 255, 255),
}


def annotate_ice(frame_bgr: np.ndarray, doc: dict) -> np.ndarray:
    """A copy of the photo with each piece's outline, verdict and points; flagged pieces in magenta."""
    out = frame_bgr.copy()
    scale = max(out.shape[1] / 1920.0, 0.6)
    thick = max(1, round(2 * scale))
    for p in doc.get("pieces", []):
        poly = np.round(np.asarray(p["outline_px"], float)).astype(np.int32)
        col = (255, 0, 255) if p.get("flagged") else _DRAW_BGR.get(p["color"], (0, 255, 0))
        cv2.polylines(out, [poly], True, col, thick, cv2.LINE_AA)
        cx, cy = poly.max(axis=0)[0] + 4, poly.min(axis=0)[1] + int(12 * scale)
        tag = {"upright": "UP", "lying": "LY", "standing_on_lying": "x2", "nested": "NS"}[p["pose"]]
        text = f"{p['id']} {p['size'][0].upper()}{tag} {p.get('points', 0)}" + ("?" if p.get("flagged") else "")
        cv2.putText(out, text, (int(cx), int(cy)), cv2.FONT_HERSHEY_SIMPLEX, 0.45 * scale, (0, 0, 0), thick + 2,
                    cv2.LINE_AA)
        cv2.putText(out, text, (int(cx), int(cy)), cv2.FONT_HERSHEY_SIMPLEX, 0.45 * scale, col, thick, cv2.LINE_AA)
    y = int(30 * scale)
    for c, v in sorted(doc.get("scores", {}).items(), key=lambda kv: -kv[1]):
        cv2.putText(out, f"{c}: {v}", (10, y), cv2.FONT_HERSHEY_SIMPLEX, 0.9 * scale, (0, 0, 0), thick + 3,
                    cv2.LINE_AA)
        cv2.putText(out, f"{c}: {v}", (10, y), cv2.FONT_HERSHEY_SIMPLEX, 0.9 * scale, _DRAW_BGR.get(c, (255,) * 3),
                    thick, cv2.LINE_AA)
        y += int(32 * scale)
    return out


# --- bench ----------------------------------------------------------------------------------------------------

FRESH_SEED = 7007
DEFAULT_FRESH_DIR = Path.home() / ".cache" / "tableref" / "bench" / "ice_tiddlywinks_1920x1080_seed7007"
MATCH_GATE_MM = 12.0  # a detection whose plan centroid is further than this from a truth piece misses it
TARGETS = {"pose": 0.99, "size": 0.99, "color": 0.99, "score_images": 0.95}


def fresh_ice_images(n: int, cache: Path, log: Callable[[str], None] = print, seed: int = FRESH_SEED) -> list[Path]:
    """``n`` simulated 1920x1080 photos, item ``i`` from ``default_rng([seed, i])``, rendered once and cached."""
    from simulation.pyramids import generate_ice_tiddlywinks

    cache.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(n):
        jpg = cache / f"ice_fresh_{i:03d}.jpg"
        if not (jpg.exists() and jpg.with_suffix(".json").exists()):
            log(f"rendering {jpg} ...")
            generate_ice_tiddlywinks(np.random.default_rng([seed, i]), cache, jpg.stem, (1920, 1080))
        out.append(jpg)
    return out


def _plan_centroid_truth(p: dict) -> np.ndarray:
    v = np.vstack([np.asarray(p["base_corners_mm"]), np.asarray(p["apex_mm"])[None]])
    return v[:, :2].mean(axis=0)


#: Matching cost added when one of a truth/found pair is a nested (stacked) piece and the other is not: a stacked
#: piece and the one beneath share a plan centroid, and only the stacking tells them apart.
NESTING_MISMATCH_MM = 8.0


def _match(truth_xy: list[np.ndarray], found_xy: list[np.ndarray], truth_nested: list[bool] | None = None,
           found_nested: list[bool] | None = None) -> dict[int, int]:
    from scipy.optimize import linear_sum_assignment

    if not truth_xy or not found_xy:
        return {}
    D = np.array([[float(np.linalg.norm(a - b)) for b in found_xy] for a in truth_xy])
    C = D
    if truth_nested is not None and found_nested is not None:
        # only the assignment prefers like with like; the gate is on plan distance alone
        C = D + NESTING_MISMATCH_MM * (np.asarray(truth_nested)[:, None] != np.asarray(found_nested)[None, :])
    r, c = linear_sum_assignment(np.minimum(C, 1e6))
    return {int(i): int(j) for i, j in zip(r, c) if D[i, j] <= MATCH_GATE_MM}


def _baseline(frame_bgr: np.ndarray, camera: CameraModel) -> list[dict]:
    """Plain baseline: colour blobs of the same segmentation, each one upright piece sized by its plan area."""
    ref = table_reference_bgr(frame_bgr, int(DEFAULT_PARAMS.reference_kernel_mm / camera.mm_per_px_at((0, 0))))
    mask, _ = foreground_mask(difference_map(frame_bgr, ref), 6.0, 4.0, shadow_mask(frame_bgr, ref, 0.25, 0.15))
    n, lab, stats, cents = cv2.connectedComponentsWithStats(mask)
    out = []
    for i in range(1, n):
        if stats[i, cv2.CC_STAT_AREA] < 30:
            continue
        xy = camera.image_to_table_mm(cents[i][None], 0.0)[0]
        area_mm2 = stats[i, cv2.CC_STAT_AREA] * camera.mm_per_px_at(tuple(xy)) ** 2
        if area_mm2 < DEFAULT_PARAMS.min_blob_mm2:
            continue
        size = min(SIZES, key=lambda s: abs(math.sqrt(area_mm2 / 1.3) - base_mm(s)))
        sel = lab == i
        color, _ = classify_color(frame_bgr[sel], ref[sel])
        out.append({"color": color, "size": size, "pose": "upright", "xy": xy,
                    "points": {"small": 1, "medium": 2, "large": 3}[size]})
    return out


def _tally_image(truth: dict, found: list[dict], tally: dict, name: str, failures: list[str]) -> None:
    vis = [p for p in truth["pieces"] if not p["hidden"]]
    m = _match([_plan_centroid_truth(p) for p in vis], [np.asarray(f["xy"]) for f in found],
               [p.get("pose") == "nested" for p in vis], [f.get("pose") == "nested" for f in found])
    resolved: dict[str, int] = {}  # scores once a human has looked at every flagged piece
    for j, f in enumerate(found):
        if not f.get("flagged"):
            resolved[f["color"]] = resolved.get(f["color"], 0) + f["points"]
    truth_of = {j: vis[i] for i, j in m.items()}
    for j, f in enumerate(found):
        if f.get("flagged") and j in truth_of:
            t = truth_of[j]
            resolved[t["color"]] = resolved.get(t["color"], 0) + t["points"]
        elif not f.get("flagged") and j not in truth_of:
            tally["silent_extra"] += 1
    for i, p in enumerate(vis):
        tally["pieces"] += 1
        if p["pose"] in ("upright", "lying", "standing_on_lying"):
            tally["pose_n"] += 1
        j = m.get(i)
        if j is None:
            failures.append(f"{name}: missed {p['id']} {p['color']} {p['size']} {p['pose']}")
            tally["missed"] += 1
            continue
        f = found[j]
        tally["found"] += 1
        tally["flagged"] += bool(f.get("flagged"))
        if p["pose"] in ("upright", "lying", "standing_on_lying") and f["pose"] == p["pose"]:
            tally["pose_ok"] += 1
        tally["size_ok"] += f["size"] == p["size"]
        tally["color_ok"] += f["color"] == p["color"]
        if (f["pose"], f["size"], f["color"]) != (p["pose"], p["size"], p["color"]) and not f.get("flagged"):
            tally["silent_wrong"] += 1
        for key in ("pose", "size", "color"):  # the breakdown: which verdict is wrong, and was it flagged
            if f[key] != p[key]:
                tally[f"wrong_{key}_{'flagged' if f.get('flagged') else 'silent'}"] += 1
        if (f["pose"], f["size"], f["color"]) != (p["pose"], p["size"], p["color"]):
            failures.append(f"{name}: {p['id']} truth {p['color']} {p['size']} {p['pose']} -> "
                            f"{f['color']} {f['size']} {f['pose']}" + (" (flagged)" if f.get("flagged") else ""))
    tally["extra"] += len(found) - len(m)
    want = {c: v for c, v in truth["scores_visible"].items() if v}
    got: dict[str, int] = {}
    for f in found:
        got[f["color"]] = got.get(f["color"], 0) + f["points"]
    got = {c: v for c, v in got.items() if v}
    tally["images"] += 1
    tally["score_ok"] += got == want
    tally["score_resolved_ok"] += {c: v for c, v in resolved.items() if v} == want


def _new_tally() -> dict[str, int]:
    keys = ("pieces", "pose_n", "found", "flagged", "pose_ok", "size_ok", "color_ok", "extra", "images",
            "score_ok", "score_resolved_ok", "silent_wrong", "silent_extra", "missed",
            *(f"wrong_{k}_{f}" for k in ("pose", "size", "color") for f in ("flagged", "silent")))
    return {k: 0 for k in keys}


def bench_ice_paths(paths: list[Path], log: Callable[[str], None] = print, verbose: bool = False) -> dict:
    """Run the pipeline and the baseline on every image with truth; the tallies, timings and failures."""
    cv2.setNumThreads(1)
    ours, base = _new_tally(), _new_tally()
    fails: list[str] = []
    base_fails: list[str] = []
    times: dict[str, list[float]] = {}
    for path in paths:
        truth = json.loads(Path(path).with_suffix(".json").read_text())
        frame = cv2.imread(str(path))
        camera = CameraModel.from_dict(truth["calibration"]["camera"])
        t0 = time.perf_counter()
        doc = score_ice_photo(frame, camera)
        dt = time.perf_counter() - t0
        mp = frame.shape[0] * frame.shape[1] / 1e6
        times.setdefault(f"{frame.shape[1]}x{frame.shape[0]} ({mp:.1f} MP)", []).append(dt)
        found = []
        for p in doc["pieces"]:
            outline = np.asarray(p["outline_px"], float)
            # plan centroid of the fitted piece: its hull's vertices back on the table at their own heights
            found.append({**p, "xy": _found_plan_xy(p, camera, outline)})
        found = [f for f in found if not f.get("hidden")]
        # the score figure counts decided points only; a flagged piece scores 0 until a human looks
        _tally_image(truth, found, ours, Path(path).stem, fails)
        _tally_image(truth, _baseline(frame, camera), base, Path(path).stem, base_fails)
        if verbose:
            log(f"{Path(path).name}: {dt:.2f} s, {len(found)} pieces, scores {doc['scores']}")
    return {"ours": ours, "baseline": base, "failures": fails, "times": times, "n_images": len(paths)}


def _found_plan_xy(p: dict, camera: CameraModel, outline_px: np.ndarray) -> np.ndarray:
    return np.asarray(p["plan_centroid_mm"], float) if "plan_centroid_mm" in p else np.asarray(p["center_mm"])


def report_ice(result: dict, out: Callable[[str], None] = print, show_failures: int = 15) -> bool:
    """Print each figure with its condition, target and PASS/FAIL, the baseline beside it; True if all pass."""
    lines = format_ice_report(result, show_failures)
    for line in lines:
        out(line)
    return all("FAIL" not in line for line in lines if line.startswith("  "))


def _ratio(a: int, b: int) -> float:
    return a / b if b else 0.0


def format_ice_report(result: dict, show_failures: int = 15) -> list[str]:
    o, b = result["ours"], result["baseline"]
    cond = (f"{result['n_images']} images, calibrated camera (the simulator's, as `--calibration` gives), "
            "missed pieces count as wrong, hidden nested pieces excluded")
    lines = [f"Ice Tiddly Winks bench: {cond}"]
    figs = [
        ("pose (upright/lying/standing-on-lying) correct", o["pose_ok"], o["pose_n"], b["pose_ok"], b["pose_n"],
         TARGETS["pose"]),
        ("size correct", o["size_ok"], o["pieces"], b["size_ok"], b["pieces"], TARGETS["size"]),
        ("colour correct", o["color_ok"], o["pieces"], b["color_ok"], b["pieces"], TARGETS["color"]),
        ("images with exact per-colour score (visible pieces; flagged pieces score 0)", o["score_ok"],
         o["images"], b["score_ok"], b["images"], TARGETS["score_images"]),
    ]
    for name, a, n, ba, bn, target in figs:
        r = _ratio(a, n)
        lines.append(f"  {name}: {100 * r:.1f} % ({a}/{n}), target >= {100 * target:.0f} % "
                     f"{'PASS' if r >= target else 'FAIL'}; baseline (colour blobs, all upright) "
                     f"{100 * _ratio(ba, bn):.1f} %")
    lines.append(f"  detections: {o['found']}/{o['pieces']} found, {o['extra']} extra, {o['flagged']} flagged "
                 f"for a human look; baseline {b['found']} found, {b['extra']} extra")
    lines.append(f"  (info) images with exact score once a human has resolved the flagged pieces: "
                 f"{100 * _ratio(o['score_resolved_ok'], o['images']):.1f} % ({o['score_resolved_ok']}/{o['images']})")
    lines.append(f"  (info) silent errors (wrong and not flagged): {o['silent_wrong']} wrong verdicts, "
                 f"{o['silent_extra']} phantom pieces, {o['missed']} missed pieces, of {o['pieces']} pieces")
    lines.append("  (info) per piece: " + ", ".join(
        f"wrong {k} {o.get(f'wrong_{k}_silent', 0) + o.get(f'wrong_{k}_flagged', 0)} "
        f"({o.get(f'wrong_{k}_flagged', 0)} flagged)"
        for k in ("pose", "size", "color")) + f"; missed {o['missed']}; extra {o['extra']}")
    for res, ts in sorted(result["times"].items()):
        lines.append(f"  time per photo {res}: median {np.median(ts):.2f} s over {len(ts)} (one core)")
    if show_failures:
        lines.append(f"failures ({len(result['failures'])}, first {show_failures}):")
        lines += ["    " + f for f in result["failures"][:show_failures]]
    return lines


def bench_ice(n_fresh: int = 32, sample_dir: Path | str | None = "sample_images/ice_tiddlywinks",
              cache: Path = DEFAULT_FRESH_DIR, log: Callable[[str], None] = print, show_failures: int = 15,
              seed: int = FRESH_SEED) -> list[str]:
    """The figures of issue 7 as report lines: committed samples plus ``n_fresh`` cached fresh renders of
    ``seed`` (another seed than the development one is a held-out set)."""
    paths: list[Path] = []
    if sample_dir is not None and Path(sample_dir).exists():
        paths += sorted(p for p in Path(sample_dir).glob("*.jpg") if p.with_suffix(".json").exists())
    if n_fresh > 0:
        paths += fresh_ice_images(n_fresh, Path(cache), log, seed)
    return format_ice_report(bench_ice_paths(paths, log), show_failures)


def run_bench_ice(directory: Path | str | None, fresh: int, cache: Path | None = None, failures: int = 15,
                  out: Callable[[str], None] = print) -> int:
    """``tableref bench --game ice-tiddlywinks`` body: prints the figures; exit code 0 only if all pass."""
    sample_dir = Path(directory) if directory is not None else Path("sample_images") / "ice_tiddlywinks"
    lines = bench_ice(n_fresh=fresh, sample_dir=sample_dir, cache=Path(cache) if cache else DEFAULT_FRESH_DIR,
                      log=out, show_failures=failures)
    for line in lines:
        out(line)
    figures = [line for line in lines if line.startswith("  ") and ("PASS" in line or "FAIL" in line)]
    return 0 if figures and all("FAIL" not in line for line in figures) else 1
