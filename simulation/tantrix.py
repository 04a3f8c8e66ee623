"""Tantrix photographs with exact truth (RULES.md 2): black glossy hex tiles on a table, seen by a phone.

A position from simulation/tantrix_boards.py is laid out in table millimetres (pointy-top hex lattice at any
angle, tiles slightly apart and misaligned as players leave them, hands in rows beside the board, A's nearest
the image bottom), a camera frames it (tilt 0-35 degrees, any yaw), and simulation/tantrix_paint.py composes
the picture per pixel through that CameraModel. Truth is the scene document of the Tantrix contract
(the shape ``tableref analyze --game tantrix --json`` prints), plus the planted ``defect`` if any.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from shapely.geometry import Polygon

from calibration.camera import CameraModel
from geometry.tantrix import EDGE_COUNT, TILE_COUNT, Board, Hex, LinkColor, tile
from simulation.photo import PhotoSettings
from simulation.pyramids_marbles_common import write_image_and_truth
from simulation.tantrix_boards import DEFECTS, TantrixDeal, deal
from simulation.tantrix_paint import render_tantrix_photo

GAME = "tantrix"
RENDER_VERSION = 9  # bumped whenever the same seed renders differently (benches key their caches on it)
FLAT_TO_FLAT_RANGE_MM = (43.0, 50.0)
THICKNESS_RANGE_MM = (4.5, 5.5)
GAP_RANGE_MM = (0.0, 2.0)  # extra lattice pitch: hand-laid tiles rarely touch
OFFSET_MAX_MM = 1.5  # per-tile misplacement
TWIST_MAX_DEG = 3.0  # per-tile rotation jitter
MAX_TILT_DEG = 35.0
ILLEGAL_FRACTION = 0.22
HANDS_PROBABILITY = 0.5
COLORBLIND_PROBABILITY = 0.2
HAND_MATS_PROBABILITY = 0.35
SQRT3 = math.sqrt(3.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class TilePose:
    """One physical tile on the table: what it is, where it lies (centre, direction of its face's edge 0)."""

    tile_id: str
    number: int
    place: str  # "board" | "hand"
    hex: Hex | None
    rotation: int  # board: lattice rotation; hand: nearest sixth relative to the lattice (information only)
    player: str | None
    center_mm: tuple[float, float]
    angle_deg: float  # direction of the face's edge 0 (s[0]) in the table frame


@dataclass(frozen=True, slots=True, kw_only=True)
class TantrixScene:
    """A position laid on the table, with the set's physical size and the lattice the board tiles follow."""

    deal: TantrixDeal
    tiles: tuple[TilePose, ...]
    flat_to_flat_mm: float
    thickness_mm: float
    pitch_mm: float  # centre spacing of neighbouring board tiles (flat-to-flat + the players' gap)
    lattice_origin_mm: tuple[float, float]
    lattice_angle_deg: float
    colorblind: bool
    players: dict[str, str]  # "A"/"B" -> colour name
    hand_mats: bool = False  # each hand on a tile mat in its player's colour (TX 1)

    @property
    def circumradius_mm(self) -> float:
        return self.flat_to_flat_mm / SQRT3


def hex_center_mm(h: Hex, origin_mm: tuple[float, float], angle_deg: float,
                  pitch_mm: float) -> tuple[float, float]:
    """Centre of hex (q, r) on a pointy-top lattice whose edge 0 faces ``angle_deg`` (contract formula)."""
    q, r = h
    s = pitch_mm / SQRT3
    lx, ly = s * SQRT3 * (q + r / 2.0), -1.5 * s * r
    t = math.radians(angle_deg)
    c, s_ = math.cos(t), math.sin(t)
    return (origin_mm[0] + lx * c - ly * s_, origin_mm[1] + lx * s_ + ly * c)


def hex_outline_mm(center_mm: tuple[float, float], angle_deg: float, circumradius_mm: float) -> np.ndarray:
    """The six vertices (ccw) of a tile whose edge 0 faces ``angle_deg``; vertex k lies between edges k and
    k + 1."""
    a = np.radians(angle_deg + 30.0 + 60.0 * np.arange(EDGE_COUNT))
    r = circumradius_mm
    return np.column_stack([center_mm[0] + r * np.cos(a), center_mm[1] + r * np.sin(a)])


def _untangle(centres: np.ndarray, angles: np.ndarray, nominal: np.ndarray, lattice_deg: float,
              radius_mm: float) -> tuple[np.ndarray, np.ndarray]:
    """Halve the misplacement of tiles that overlap a neighbour until none do (real tiles cannot overlap)."""
    centres, angles = centres.copy(), angles.copy()
    close = np.linalg.norm(nominal[:, None, :] - nominal[None, :, :], axis=-1) < 2.2 * radius_mm
    pairs = [(i, j) for i, j in zip(*np.nonzero(np.triu(close, 1)))]
    for _ in range(8):
        polys = [Polygon(hex_outline_mm(tuple(c), a, radius_mm)) for c, a in zip(centres, angles)]
        # touching is fine (gap 0): only a real overlap counts
        bad = {k for i, j in pairs if polys[i].intersection(polys[j]).area > 0.05 for k in (i, j)}
        if not bad:
            break
        for i in bad:
            centres[i] = nominal[i] + 0.5 * (centres[i] - nominal[i])
            base = lattice_deg + 60.0 * round((angles[i] - lattice_deg) / 60.0)
            angles[i] = base + 0.5 * (angles[i] - base)
    return centres, angles


def _hand_layout(rng: np.random.Generator, n: int, s_mm: float, sign: float,
                 edge_y_mm: float) -> list[tuple[tuple[float, float], float]]:
    """Centres and angles of ``n`` hand tiles beside the board edge ``edge_y_mm`` (``sign`` -1 below, +1
    above): a row, a block of two rows, or a loose row, each tile turned any way. Centres stay at least a
    tile's full width (2 s) plus 2 mm apart, so tiles never overlap whatever their angles."""
    if n == 0:
        return []
    style = rng.choice(["row", "block", "loose"], p=[0.6, 0.25, 0.15])
    per_row = n if style != "block" or n < 4 else (n + 1) // 2
    jitter = 4.0 if style == "loose" else 1.0
    step = 2.0 * s_mm + 2.0 + 2.0 * math.sqrt(2.0) * jitter + float(rng.uniform(0.0, 10.0))
    x0 = -0.5 * step * (per_row - 1) + float(rng.uniform(-30.0, 30.0))
    y0 = edge_y_mm + sign * (float(rng.uniform(25.0, 50.0)) + s_mm)
    slope = float(rng.normal(0.0, 0.03))
    out = []
    for i in range(n):
        row, col = divmod(i, per_row)
        x = x0 + col * step + (0.5 * step if row % 2 else 0.0)
        y = y0 + sign * row * step + slope * (x - x0)
        c = (x + float(rng.uniform(-jitter, jitter)), y + float(rng.uniform(-jitter, jitter)))
        out.append((c, float(rng.uniform(0.0, 360.0))))
    return out


def layout_scene(rng: np.random.Generator, position: TantrixDeal, *, colorblind: bool = False,
                 flat_to_flat_mm: float | None = None, hand_mats: bool | None = None) -> TantrixScene:
    """Lay ``position`` on the table: the board on a lattice at a random angle, hands in rows below (A) and
    above (B) it along y."""
    f = float(flat_to_flat_mm or rng.uniform(*FLAT_TO_FLAT_RANGE_MM))
    s = f / SQRT3
    pitch = f + float(rng.uniform(*GAP_RANGE_MM))
    theta = float(rng.uniform(0.0, 360.0))
    board = position.board
    hexes = sorted(board.tiles)
    nominal = np.asarray([hex_center_mm(h, (0.0, 0.0), theta, pitch) for h in hexes])
    turn = float(rng.uniform(-20.0, 20.0))
    if any(position.hands.values()) and len(hexes) > 2:
        # players sit across the board from each other: its long side runs between them, along x, so the
        # photo (hands at its top and bottom) shows the tiles large; a random half-turn keeps both ends
        spread = np.cov((nominal - nominal.mean(axis=0)).T)
        evals, evecs = np.linalg.eigh(spread)
        long_deg = math.degrees(math.atan2(evecs[1, 1], evecs[0, 1]))
        theta = (theta - long_deg + turn + (180.0 if rng.random() < 0.5 else 0.0)) % 360.0
        nominal = np.asarray([hex_center_mm(h, (0.0, 0.0), theta, pitch) for h in hexes])
    shift = -(nominal.min(axis=0) + nominal.max(axis=0)) / 2.0
    origin = (float(shift[0]), float(shift[1]))
    nominal = nominal + shift
    offsets = np.clip(rng.normal(0.0, OFFSET_MAX_MM / 2.0, nominal.shape), -OFFSET_MAX_MM, OFFSET_MAX_MM)
    twists = np.clip(rng.normal(0.0, TWIST_MAX_DEG / 2.0, len(hexes)), -TWIST_MAX_DEG, TWIST_MAX_DEG)
    angles = np.asarray([theta + 60.0 * board[h].rotation for h in hexes]) + twists
    centres, angles = _untangle(nominal + offsets, angles, nominal, theta, s)
    poses = [TilePose(tile_id="", number=board[h].number, place="board", hex=h, rotation=board[h].rotation,
                      player=None, center_mm=(float(c[0]), float(c[1])), angle_deg=float(a % 360.0))
             for h, c, a in zip(hexes, centres, angles)]
    # hands: A's below the board (towards the camera), B's above it
    lo = min(c[1] for c in centres) - s
    hi = max(c[1] for c in centres) + s
    for player, sign, edge in (("A", -1.0, lo), ("B", 1.0, hi)):
        for c, ang in _hand_layout(rng, len(position.hands.get(player, ())), s, sign, edge):
            number = position.hands[player][len([p for p in poses if p.player == player])]
            poses.append(TilePose(tile_id="", number=int(number), place="hand", hex=None,
                                  rotation=int(round((ang - theta) / 60.0)) % EDGE_COUNT, player=player,
                                  center_mm=c, angle_deg=ang))
    poses = [replace(p, tile_id=f"T{i + 1}") for i, p in enumerate(poses)]
    names = [c.value for c in LinkColor]
    pa = int(rng.integers(4))
    pb = (pa + 1 + int(rng.integers(3))) % 4
    thickness = float(rng.uniform(*THICKNESS_RANGE_MM))
    drawn_mats = rng.random() < HAND_MATS_PROBABILITY  # drawn even when fixed: the same seed, the same rest
    return TantrixScene(deal=position, tiles=tuple(poses), flat_to_flat_mm=f, thickness_mm=thickness,
                        pitch_mm=pitch,
                        lattice_origin_mm=origin, lattice_angle_deg=theta % 360.0, colorblind=colorblind,
                        players={"A": names[pa], "B": names[pb]},
                        hand_mats=bool(drawn_mats if hand_mats is None else hand_mats))


def camera_for(scene: TantrixScene, rng: np.random.Generator, size_wh_px: tuple[int, int], *,
               tilt_deg: float | None = None, fill: float | None = None) -> CameraModel:
    """A phone above the table, ``tilt_deg`` off vertical, image-up roughly along +y when hands are shown
    (A's hand at the image bottom) or any way otherwise, framing every tile top with a margin."""
    w, h = size_wh_px
    r = scene.circumradius_mm
    pts = np.concatenate([hex_outline_mm(t.center_mm, t.angle_deg, r) for t in scene.tiles])
    pts3 = np.column_stack([pts, np.full(len(pts), scene.thickness_mm)])
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    target = np.array([(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, 0.0])
    tilt = float(rng.uniform(0.0, MAX_TILT_DEG) if tilt_deg is None else tilt_deg)
    has_hands = any(t.place == "hand" for t in scene.tiles)
    # with hands the yaw stays within 8 degrees so every tile of A's row lies below every board tile
    if has_hands:
        up_deg = 90.0 + float(np.clip(rng.normal(0.0, 4.0), -8.0, 8.0))
    else:
        up_deg = float(rng.uniform(0.0, 360.0))
    up = np.array([math.cos(math.radians(up_deg)), math.sin(math.radians(up_deg)), 0.0])
    focal = float(rng.uniform(0.75, 1.05)) * w
    dist = (float(rng.uniform(-0.08, 0.02)), float(rng.uniform(0.0, 0.03)), 0.0, 0.0, 0.0)
    offset = (float(rng.uniform(-0.01, 0.01)) * w, float(rng.uniform(-0.01, 0.01)) * h)
    fill = float(rng.uniform(0.78, 0.92) if fill is None else fill)
    # the camera stands on the side opposite image-up and leans towards the target
    horiz = -up * math.sin(math.radians(tilt))
    direction = np.array([horiz[0], horiz[1], math.cos(math.radians(tilt))])
    distance = 2.0 * float(np.max(hi - lo)) * focal / min(w, h)
    cam = None
    for _ in range(12):
        cam = CameraModel.look_at(eye_mm=tuple(target + distance * direction), target_mm=tuple(target),
                                  up_hint=tuple(up), focal_px=focal, image_size_wh_px=(w, h), dist=dist,
                                  principal_offset_px=offset)
        q = cam.project_mm(pts3)
        cx, cy = cam.K[0, 2], cam.K[1, 2]
        used = max((q[:, 0].max() - cx) / (w - 1 - cx), (cx - q[:, 0].min()) / cx,
                   (q[:, 1].max() - cy) / (h - 1 - cy), (cy - q[:, 1].min()) / cy)
        if abs(used - fill) < 0.005:
            break
        distance *= used / fill
    return cam


def truth_document(scene: TantrixScene, camera: CameraModel) -> dict:
    """The scene document of the Tantrix contract, exact, plus the planted defect and a few extras."""
    tiles = []
    for t in scene.tiles:
        top = hex_outline_mm(t.center_mm, t.angle_deg, scene.circumradius_mm)
        pts = np.column_stack([np.vstack([t.center_mm, top]), np.full(7, scene.thickness_mm)])
        px = camera.project_mm(pts)
        face = tile(t.number)
        # lattice-relative edge colours: for hand tiles at their nearest sixth (information only)
        edges = [face.edge_color(k, t.rotation).value for k in range(EDGE_COUNT)]
        tiles.append({
            "id": t.tile_id, "number": t.number, "rotation": t.rotation,
            "hex": None if t.hex is None else [int(t.hex[0]), int(t.hex[1])],
            "place": t.place, "player": t.player,
            "center_mm": [round(v, 3) for v in t.center_mm],
            "center_px": [round(float(v), 2) for v in px[0]],
            "angle_deg": round(t.angle_deg % 360.0, 3),
            "confidence": 1.0, "flagged": False,
            "outline_px": [[round(float(x), 2), round(float(y), 2)] for x, y in px[1:]],
            "edge_colors": [("white" if scene.colorblind and c == "green" else c) for c in edges],
        })
    d = scene.deal
    return {
        "game": GAME,
        "tile_geometry": {"flat_to_flat_mm": round(scene.flat_to_flat_mm, 3),
                          "thickness_mm": round(scene.thickness_mm, 3)},
        "colorblind": scene.colorblind,
        "lattice": {"origin_mm": [round(v, 3) for v in scene.lattice_origin_mm],
                    "angle_deg": round(scene.lattice_angle_deg, 3), "pitch_mm": round(scene.pitch_mm, 3)},
        "players": {p: {"color": c} for p, c in scene.players.items()},
        "tiles": tiles,
        "bag_empty": d.bag_empty,
        "hand_mats": scene.hand_mats and any(t.place == "hand" for t in scene.tiles),
        "defect": d.defect,
        "defect_hexes": [list(h) for h in d.defect_hexes],
        "calibration": {"source": "simulator", "camera": camera.to_dict()},
        "camera_tilt_deg": round(camera.tilt_deg, 2),
        "render_version": RENDER_VERSION,
    }


def board_size_for(seed: int, index: int) -> int:
    """Board sizes spread evenly over 10..56 along a set: a golden-ratio sequence with a per-seed phase."""
    phase = float(np.random.default_rng([seed, 10**6]).random())
    return 10 + int(((phase + 0.6180339887 * index) % 1.0) * (TILE_COUNT - 10 + 1))


def is_planted_illegal(seed: int, index: int) -> bool:
    """Which items of a set carry a planted defect: ILLEGAL_FRACTION of them, spread evenly along the set."""
    phase = float(np.random.default_rng([seed, 10**6 + 1]).random())
    return (phase + 0.41421356 * index) % 1.0 < ILLEGAL_FRACTION


def random_tantrix_scene(rng: np.random.Generator, *, n_tiles: int, illegal: bool | None = None,
                         hands: bool | None = None, colorblind: bool | None = None,
                         defect: str | None = None, hand_mats: bool | None = None) -> TantrixScene:
    """A random position of about ``n_tiles`` board tiles laid on the table (options fixed when given)."""
    illegal = bool(rng.random() < ILLEGAL_FRACTION) if illegal is None else illegal
    hands = bool(rng.random() < HANDS_PROBABILITY) if hands is None else hands
    colorblind = bool(rng.random() < COLORBLIND_PROBABILITY) if colorblind is None else colorblind
    if illegal and defect is None:
        defect = DEFECTS[int(rng.integers(len(DEFECTS)))]
    position = deal(rng, n_tiles, defect=defect if illegal else None, hands_visible=hands)
    return layout_scene(rng, position, colorblind=colorblind, hand_mats=hand_mats)


def render_tantrix_scene(scene: TantrixScene, camera: CameraModel, rng: np.random.Generator, *,
                         settings: PhotoSettings | None = None,
                         glare: bool = True) -> tuple[np.ndarray, dict]:
    """The photograph (BGR uint8) of ``scene`` and its truth document (image path left to the writer)."""
    bgr = render_tantrix_photo(scene, camera, rng, settings=settings, glare=glare)
    truth = truth_document(scene, camera)
    truth["image"] = {"path": None, "size_wh_px": [int(bgr.shape[1]), int(bgr.shape[0])]}
    return bgr, truth


def render_board(board: Board, *, hands: dict[str, tuple[int, ...]] | None = None, seed: int = 0,
                 size_wh_px: tuple[int, int] = (1920, 1080), tilt_deg: float | None = None,
                 colorblind: bool = False,
                 glare: bool = True, bag_empty: bool | None = None) -> tuple[np.ndarray, dict]:
    """A given position photographed: (BGR image, truth document). For tests and rule cases (TX-T...).

    The board may be anything geometry accepts (legal or not; ``defect`` stays None, the caller knows what it
    built); ``bag_empty`` defaults to board + hands == 56.
    """
    hands = {"A": tuple(hands.get("A", ())), "B": tuple(hands.get("B", ()))} if hands else {"A": (), "B": ()}
    if bag_empty is None:
        bag_empty = len(board) + len(hands["A"]) + len(hands["B"]) == TILE_COUNT
    rng = np.random.default_rng([seed, 7])
    position = TantrixDeal(board=board, hands=hands, bag_empty=bag_empty)
    scene = layout_scene(rng, position, colorblind=colorblind)
    cam = camera_for(scene, rng, size_wh_px, tilt_deg=tilt_deg)
    settings = PhotoSettings.random(rng, motion_blur_probability=0.0)
    return render_tantrix_scene(scene, cam, rng, settings=settings,
                                glare=glare)


def render_tantrix_item(out_dir: str | Path, *, seed: int, index: int,
                        size_wh_px: tuple[int, int] = (1920, 1080),
                        name: str | None = None, jpeg_quality: int | None = None, **options) -> Path:
    """Photograph ``index`` of the set ``seed``: ``tx_<seed>_<index>.jpg`` (or ``<name>.jpg``) with its truth
    ``.json``.

    ``options`` fix scene choices (``n_tiles``, ``illegal``, ``hands``, ``colorblind``, ``defect``,
    ``hand_mats``, ``tilt_deg``); the rest are drawn from ``default_rng([seed, index])``.
    """
    rng = np.random.default_rng([seed, index])
    n_tiles = int(options.pop("n_tiles", board_size_for(seed, index)))
    options.setdefault("illegal", is_planted_illegal(seed, index))
    tilt = options.pop("tilt_deg", None)
    unknown = set(options) - {"illegal", "hands", "colorblind", "defect", "hand_mats"}
    if unknown:
        raise ValueError(f"unknown Tantrix simulation option(s): {sorted(unknown)}")
    scene = random_tantrix_scene(rng, n_tiles=n_tiles, **options)
    cam = camera_for(scene, rng, size_wh_px, tilt_deg=tilt)
    settings = PhotoSettings.random(rng, motion_blur_probability=0.05)
    if jpeg_quality is not None:
        settings = replace(settings, jpeg_quality=int(jpeg_quality))
    bgr, truth = render_tantrix_scene(scene, cam, rng, settings=settings)
    jpg, _ = write_image_and_truth(out_dir, name or f"tx_{seed}_{index:03d}", bgr, truth,
                                   jpeg_quality=settings.jpeg_quality)
    return jpg


def generate_tantrix(out_dir: str | Path, count: int, seed: int, size_wh_px: tuple[int, int] = (1920, 1080),
                     **options) -> list[Path]:
    """``count`` photographs ``tx_<seed>_<i>.jpg`` with truth ``.json``, deterministic by seed and index;
    board sizes spread evenly over 10-56 tiles, about 22 % planted illegal."""
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    return [render_tantrix_item(out_dir, seed=seed, index=i, size_wh_px=size_wh_px, **dict(options))
            for i in range(count)]
