"""Reading a Tantrix table from one photograph: every tile's face, rotation and hex (RULES.md 2; issue 10).

Steps, each grounded in what the scene must look like rather than in one renderer's numbers:
1. tile silhouettes against the table (``vision.tantrix_tiles``);
2. the table plane: from a calibrated camera at the tile-top height, else from the hexagons themselves — three
   edge directions, one side length, honeycomb vertices (``vision.tantrix_lattice``);
3. the lattice: the largest silhouette fixes it; a silhouette on the same lattice and touching the group of
   lattice tiles belongs to the Tantrix, every other tile is in a hand (player A: the hand nearer the image
   bottom than the board);
4. each tile's six edge colours from its link bands and the face they spell (``vision.tantrix_links``).
Frames: U is the working lattice frame (y up, unit = hexagon circumradius); the table frame of the reading is the
camera's table frame when a calibration is given, else U scaled to millimetres (lattice angle 0, hex (0, 0) at
the origin). Edge colours and rotations are lattice-relative, ccw seen from above.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from calibration.camera import CameraModel
from geometry.tantrix import (
    TILE_COUNT,
    Board,
    Placement,
    TantrixError,
    hex_groups,
    neighbour,
    neighbours,
    opposite_edge,
)
from geometry.tantrix import tile as tile_of
from vision.tantrix_lattice import (
    HEX_AREA_U,
    SQ3,
    LatticeError,
    apply_h,
    edge_angle_and_side,
    fit_blob,
    free_tiles,
    hex_center_u,
    hex_sample_offsets,
    hexagon_u,
    lattice_scale,
    nearest_hex,
    rectify_from_segments,
    refine_homography,
)
from vision.tantrix_links import (
    CLASS_NAMES,
    band_contrast,
    FaceRead,
    LinkParams,
    edge_colours_lab,
    fit_colour_model,
    read_faces,
    refine_poses,
    search_pose,
    turn_to_bands,
)
from vision.tantrix_gaps import MIN_LINK_ENDS, gap_lattice_candidates, link_end_counts, midpoint_band_share
from vision.tantrix_apart import tiles_apart_on_lattice, turn_to_lattice, turned_to_lattice, weigh_hand_sizes
from vision.tantrix_shared_edges import read_from_neighbour_sides
from vision.tantrix_pose import MIN_SPACING_U, find_hexagons, fit_hexagons
from vision.tantrix_unread import shared_edges_agree, tile_share, unexplained_hexes
from vision.tantrix_tiles import (
    NEAR_DARK_RATIO,
    Blob,
    PixelClasses,
    find_blobs,
    outline_segments,
    tile_table_separation,
    to_lab,
)
from vision.types import VisionError

NOMINAL_FLAT_TO_FLAT_MM = 46.0


class TantrixVisionError(VisionError):
    """An image the Tantrix reader cannot work on; the message names the problem."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TantrixParams:
    """Reader settings. ``tile_thickness_mm``: height of the tile tops (used with a camera)."""

    tile_thickness_mm: float = 5.0
    min_blob_area_ratio: float = 4e-4
    lattice_angle_tol_deg: float = 8.0  # a silhouette turned more than this is off the board's lattice
    lattice_offset_tol: float = 0.35  # ... or shifted more than this (U units) from its lattice position
    # a tile off the Tantrix is a board tile a hex apart when it sits this close to a lattice node and turn
    # (hand-laid placement ~1.5 mm and ~3 degrees, plus the refined pose); between these and the two above, its
    # place is doubtful (vision.tantrix_apart)
    board_snap_offset_mm: float = 4.0
    board_snap_twist_deg: float = 5.0
    min_table_separation: float = 3.0  # tiles' black vs a neutral table, in the table's lightness sigmas
    # ... below it the silhouettes may be the table's mottling: the reading stands only when nearly every hexagon
    # found spells a tile's face (mottling spells none: 2 of 278 on a grey cloth under a lamp)
    min_low_contrast_read_share: float = 0.8
    # a board whose hexagons mostly spell no face is a lattice that does not fit (read boards: >= 0.83 of them do)
    min_board_read_share: float = 0.5
    links: LinkParams = field(default_factory=LinkParams)

    def __post_init__(self) -> None:
        if not 0.0 < self.tile_thickness_mm < 30.0:
            raise TantrixVisionError(f"tile_thickness_mm must be in (0, 30), got {self.tile_thickness_mm!r}")


DEFAULT_TANTRIX_PARAMS = TantrixParams()


@dataclass(frozen=True, slots=True, kw_only=True)
class TileReading:
    """One tile. ``edge_colors`` are what each lattice-relative edge's pixels show (None: unclear)."""

    tile_id: str
    number: int | None
    rotation: int | None
    hex: tuple[int, int] | None
    place: str  # "board" | "hand"
    player: str | None
    center_px: tuple[float, float]
    center_mm: tuple[float, float]
    angle_deg: float
    outline_px: tuple[tuple[float, float], ...]
    edge_colors: tuple[str | None, ...]
    confidence: float
    flagged: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class TantrixReading:
    """Everything read from one photograph (table frame in mm, y up)."""

    tiles: tuple[TileReading, ...]
    image_size_wh_px: tuple[int, int]
    flat_to_flat_mm: float
    lattice_origin_mm: tuple[float, float]
    lattice_angle_deg: float
    plane_to_image: tuple[tuple[float, float, float], ...]
    colorblind: bool
    source: str
    # found like tiles but unread while every one of the set's 56 faces is read elsewhere: not tiles
    not_tiles: tuple[TileReading, ...] = ()

    def board(self) -> Board:
        """The Tantrix: board tiles whose face was read."""
        return Board({t.hex: Placement(number=t.number, rotation=t.rotation) for t in self.tiles
                      if t.place == "board" and t.number is not None and t.hex is not None})

    def hand(self, player: str) -> tuple[int, ...]:
        """Numbers of the read tiles in a player's hand."""
        return tuple(t.number for t in self.tiles if t.place == "hand" and t.player == player and t.number is not None)


@dataclass(slots=True)
class _Tile:
    center_u: np.ndarray
    angle_deg: float  # lattice-relative pose of the tile's reading frame, in (-30, 30]
    hex: tuple[int, int] | None
    blob: int


def _check_image(image_bgr: np.ndarray) -> np.ndarray:
    if not isinstance(image_bgr, np.ndarray) or image_bgr.ndim != 3 or image_bgr.shape[2] != 3:
        shape = getattr(image_bgr, "shape", None)
        raise TantrixVisionError(f"expected a colour image (H, W, 3), got shape {shape!r}")
    if image_bgr.shape[0] < 64 or image_bgr.shape[1] < 64:
        raise TantrixVisionError(f"image too small to read tiles: {image_bgr.shape[1]}x{image_bgr.shape[0]} px")
    if image_bgr.dtype != np.uint8:
        image_bgr = np.clip(image_bgr, 0, 255).astype(np.uint8)
    return image_bgr


def _blob_segments(blobs: Sequence[Blob], diag_px: float):
    eps = max(1.5, 0.0012 * diag_px)
    segs = [outline_segments(b, i, eps_px=eps, min_len_px=6.0) for i, b in enumerate(blobs)]
    lengths = np.array([s.length for ss in segs for s in ss])
    if len(lengths) == 0:
        return segs
    typical = float(np.percentile(lengths, 75))
    return [[s for s in ss if s.length >= 0.45 * typical] for ss in segs]


def _blob_vertices(blob: Blob, diag_px: float) -> np.ndarray:
    eps = max(1.5, 0.0012 * diag_px)
    return cv2.approxPolyDP(blob.contour_px.astype(np.float32).reshape(-1, 1, 2), eps, True).reshape(-1, 2)


def _camera_plane(camera: CameraModel, thickness_mm: float, size_wh: tuple[int, int]) -> np.ndarray:
    """Image -> table-mm homography of the tile-top plane (lens distortion averaged out over a grid)."""
    w, h = size_wh
    gx, gy = np.meshgrid(np.linspace(0, w - 1, 7), np.linspace(0, h - 1, 5))
    px = np.column_stack([gx.ravel(), gy.ravel()])
    mm = camera.image_to_table_mm(px, thickness_mm)
    P, _ = cv2.findHomography(px, mm, 0)
    if P is None:
        raise TantrixVisionError("the camera calibration does not map the image onto the table plane")
    return P


def _sim2(angle_deg: float, scale: float, origin: np.ndarray) -> np.ndarray:
    """3x3 map p -> Rot(-angle) (p - origin) / scale."""
    c, s = math.cos(math.radians(angle_deg)), math.sin(math.radians(angle_deg))
    R = np.array([[c, s], [-s, c]]) / scale
    out = np.eye(3)
    out[:2, :2] = R
    out[:2, 2] = -R @ origin
    return out


class _Fit:
    """The lattice frame U and the tiles found in it."""

    def __init__(self, M_img2u: np.ndarray, tiles: list[_Tile], pairs: tuple[np.ndarray, np.ndarray],
                 free_pairs: tuple[np.ndarray, np.ndarray] = (np.zeros((0, 2)), np.zeros((0, 2)))):
        self.M = M_img2u
        self.tiles = tiles
        self.pairs = pairs  # measured image px, ideal U of board-lattice vertices
        self.free_pairs = free_pairs  # the same for the corners of tiles off the lattice (hands)


def _fit_lattice(blobs: Sequence[Blob], segs, labels: np.ndarray, bare: np.ndarray, M: np.ndarray, diag_px: float,
                 params: TantrixParams, anchored: bool = False) -> _Fit:
    """Tiles of the lattice in frame ``M`` (image -> U). ``anchored``: M is already the board's lattice (fitted
    to tiles read): the board's silhouette keeps its angle 0 and a hex centre at the origin."""
    Minv = np.linalg.inv(M)
    h, w = labels.shape
    fits = []
    blob_verts: list[np.ndarray] = []
    insides = []
    for i, b in enumerate(blobs):
        ss = segs[i]
        seg_u = None
        if len(ss) >= 2:
            seg_u = np.array([[apply_h(M, np.array([s.p0]))[0], apply_h(M, np.array([s.p1]))[0]] for s in ss])
            ang, _ = edge_angle_and_side(seg_u)
        else:
            ang = 0.0
        verts = apply_h(M, _blob_vertices(b, diag_px))

        def inside(pts_u, _lab=i + 1):
            p = np.rint(apply_h(Minv, pts_u)).astype(int)
            ok = (p[:, 0] >= 0) & (p[:, 0] < w) & (p[:, 1] >= 0) & (p[:, 1] < h)
            out = np.zeros((len(p), 2), bool)
            out[ok, 0] = labels[p[ok, 1], p[ok, 0]] == _lab
            out[ok, 1] = ~bare[p[ok, 1], p[ok, 0]]
            return out

        if anchored and i == 0:
            fits.append(fit_blob(verts, 0.0, inside, seg_u, phase_u=np.zeros(2)))
        else:
            fits.append(fit_blob(verts, ang, inside, seg_u))
        insides.append(inside)
        blob_verts.append(verts)
    main = next((f for f in fits if f is not None), None)
    if main is None:
        return _Fit(M, [], (_stack([]), _stack([])))
    o_main = np.array(main.origin_u)
    a_main = main.angle_deg
    to_main = _sim2(a_main, 1.0, o_main)  # U -> main-lattice canonical frame
    M_c = to_main @ M  # image -> canonical U
    Minv_c = np.linalg.inv(M_c)
    tiles: list[_Tile] = []
    meas, ideal = [], []
    meas_free, ideal_free = [], []
    seen: set[tuple[int, int]] = set()

    def on_lattice(centers_c: np.ndarray, dang: float) -> tuple[bool, np.ndarray]:
        hexes = nearest_hex(centers_c)
        off = np.hypot(*(centers_c - hex_center_u(hexes[:, 0], hexes[:, 1])).T)
        return abs(dang) < params.lattice_angle_tol_deg and bool(np.all(off < params.lattice_offset_tol)), hexes

    def add_lattice(key: tuple[int, int], blob: int) -> None:
        if key not in seen:
            seen.add(key)
            tiles.append(_Tile(hex_center_u(*key), 0.0, key, blob))

    for i, f in enumerate(fits):
        taken: list[tuple[np.ndarray, float]] = []
        if f is not None:
            dang = ((f.angle_deg - a_main + 30.0) % 60.0) - 30.0
            cen_c = apply_h(to_main, f.centers_u)
            ok, hexes = on_lattice(cen_c, dang)
            if ok:
                for hx in hexes:
                    add_lattice((int(hx[0]), int(hx[1])), i)
                    taken.append((hex_center_u(*hx), 0.0))
                mu, iu = f.vertex_pairs
                if len(mu):
                    meas.append(apply_h(Minv, mu))
                    ideal.append(apply_h(to_main, iu))
        # whatever the lattice does not explain: free hexagons (hand tiles, perhaps touching)
        contour_c = apply_h(M_c, blobs[i].contour_px)
        from_main = np.linalg.inv(to_main)
        for c, a in free_tiles(contour_c, taken):
            probe = apply_h(from_main, c[None, :] + hex_sample_offsets() @ _rot2(a).T)
            if insides[i](probe)[:, 1].sum() < 6:
                continue  # bare table filled in: an empty hex enclosed by the board
            dang = ((a + 30.0) % 60.0) - 30.0
            # inside the board's own silhouette a lattice position is enough (glare can spoil the outline angle)
            ok, hexes = on_lattice(c[None, :], 0.0 if i == 0 else dang)
            if ok and f is not None:
                add_lattice((int(hexes[0, 0]), int(hexes[0, 1])), i)
            else:
                tiles.append(_Tile(c, float(dang), None, i))
                # a free tile is still a regular hexagon: its outline corners pin the plane beyond the board
                corners = hexagon_u(c, a)
                vc = apply_h(to_main, blob_verts[i])
                for v in vc:
                    dist = np.hypot(*(corners - v).T)
                    j = int(np.argmin(dist))
                    if dist[j] < 0.25:
                        meas_free.append(apply_h(Minv_c, v[None, :]))
                        ideal_free.append(corners[j][None, :])
    pairs = (_stack(meas), _stack(ideal))
    return _Fit(M_c, tiles, pairs, (_stack(meas_free), _stack(ideal_free)))


def _rot2(deg: float) -> np.ndarray:
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    return np.array([[c, -s], [s, c]])


def _stack(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros((0, 2))


def _label_image(blobs: Sequence[Blob], shape: tuple[int, int]) -> np.ndarray:
    labels = np.zeros(shape, np.int32)
    for i, b in enumerate(blobs):
        cv2.drawContours(labels, [b.contour_px.astype(np.int32).reshape(-1, 1, 2)], -1, i + 1, cv2.FILLED)
    return labels


def _board_group(tiles: list[_Tile]) -> set[tuple[int, int]]:
    """The largest edge-connected group of lattice tiles: the Tantrix."""
    groups = hex_groups(t.hex for t in tiles if t.hex is not None)
    return set(groups[0]) if groups else set()


def _confidence(margin: float, flag_margin: float) -> float:
    return float(1.0 / (1.0 + math.exp(-(margin - flag_margin) / 2.0)))


def detect_tantrix(image_bgr: np.ndarray, camera: CameraModel | None = None, *,
                   flat_to_flat_mm: float | None = None,
                   params: TantrixParams = DEFAULT_TANTRIX_PARAMS) -> TantrixReading:
    """Read every tile on the table (see the module docstring)."""
    image_bgr = _check_image(image_bgr)
    if flat_to_flat_mm is not None and not 20.0 <= flat_to_flat_mm <= 120.0:
        raise TantrixVisionError(f"flat_to_flat_mm must be in [20, 120], got {flat_to_flat_mm!r}")
    h, w = image_bgr.shape[:2]
    diag = math.hypot(w, h)
    lab = to_lab(image_bgr)
    blobs, _, table, pixels = find_blobs(image_bgr, lab, min_area_ratio=params.min_blob_area_ratio)
    bare = ~pixels.tile
    sep = tile_table_separation(lab, table, near_px=int(round(NEAR_DARK_RATIO * min(h, w))))
    low_contrast = sep is not None and sep < params.min_table_separation
    refusal = None
    if low_contrast:
        # the silhouettes may be the table's mottling: the reading must then prove itself (below), else say so
        # rather than read tiles that are not there
        refusal = TantrixVisionError(f"the tiles cannot be told from the table: their black is within {sep:.1f} "
                                     "sigma of the table's lightness around them (photograph them on a surface of "
                                     "another lightness or colour)")
    segs = _blob_segments(blobs, diag)
    # the lattice's directions come from the largest silhouette (the board): hand tiles lie at any angle
    all_segs = segs[0] if segs and len(segs[0]) >= 9 else [s for ss in segs for s in ss]
    try:
        P = (_camera_plane(camera, params.tile_thickness_mm, (w, h)) if camera is not None
             else rectify_from_segments(all_segs, (w, h)))
    except LatticeError:
        if blobs:
            raise refusal or TantrixVisionError("cannot recover the table plane: too few straight tile edges") \
                from None
        P = None
    if P is None or not blobs:
        f_mm = flat_to_flat_mm or NOMINAL_FLAT_TO_FLAT_MM
        H = np.eye(3) if camera is None else np.linalg.inv(_camera_plane(camera, params.tile_thickness_mm, (w, h)))
        return TantrixReading(tiles=(), image_size_wh_px=(w, h), flat_to_flat_mm=f_mm, lattice_origin_mm=(0.0, 0.0),
                              lattice_angle_deg=0.0, plane_to_image=tuple(tuple(map(float, r)) for r in H),
                              colorblind=False, source="camera" if camera is not None else "tiles")
    labels = _label_image(blobs, (h, w))

    def fit_with(P: np.ndarray) -> _Fit:
        seg_plane = np.array([[apply_h(P, np.array([s.p0]))[0], apply_h(P, np.array([s.p1]))[0]] for s in all_segs])
        theta, side = edge_angle_and_side(seg_plane)
        G = _sim2(theta, side, np.zeros(2))  # plane -> U
        if segs and segs[0]:
            main_u = np.array([[apply_h(G, apply_h(P, np.array([s.p0])))[0],
                                apply_h(G, apply_h(P, np.array([s.p1])))[0]] for s in segs[0]])
            G = np.diag([lattice_scale(main_u)] * 2 + [1.0]) @ G
        fit = _fit_lattice(blobs, segs, labels, bare, G @ P, diag, params)
        return _refine(fit, blobs, segs, labels, bare, P, G, camera, diag, params)

    def plane_fit(P: np.ndarray) -> _Fit:
        fit = fit_with(P)
        centre_u = apply_h(fit.M, blobs[0].contour_px.mean(axis=0)[None, :])[0]
        if camera is None and (_misfit(fit, blobs[0]) > 0.5
                               or _anisotropy(np.linalg.inv(fit.M), centre_u) > MAX_ANISOTROPY):
            # the board's own silhouette should be lattice tiles only: retry from an affine view
            try:
                alt = fit_with(rectify_from_segments(all_segs, (w, h), projective=False))
                alt_c = apply_h(alt.M, blobs[0].contour_px.mean(axis=0)[None, :])[0]
                if (_anisotropy(np.linalg.inv(alt.M), alt_c) <= MAX_ANISOTROPY
                        and (_misfit(alt, blobs[0]) < _misfit(fit, blobs[0])
                             or _anisotropy(np.linalg.inv(fit.M), centre_u) > MAX_ANISOTROPY)):
                    fit = alt
            except LatticeError:
                pass
        if camera is None:
            fit = _refit_to_read_tiles(fit, lambda M: _fit_lattice(blobs, segs, labels, bare, M, diag, params,
                                                                   anchored=True), lab, params)
        return fit

    def read_with(fit: _Fit) -> TantrixReading:
        try:
            return _read_tiles(image_bgr, lab, fit, blobs, camera, P, flat_to_flat_mm, params, pixels)
        except TantrixVisionError:
            if refusal is not None:
                raise refusal from None
            raise

    reading: TantrixReading | None = None
    lattice_exc: LatticeError | None = None
    try:
        reading = read_with(plane_fit(P))
    except LatticeError as exc:
        if camera is not None:
            raise refusal or TantrixVisionError(f"cannot fit the hex lattice: {exc}") from None
        lattice_exc = exc
    if camera is None and refusal is None and (reading is None
                                               or _board_read_share(reading) < params.min_board_read_share):
        # the vanishing points of a board seen nearly square-on are ill-conditioned, and shadows bend the short
        # outline runs they rest on: the image's own frame (square pixels, no tilt) is the other starting plane,
        # and the re-fit to the tiles read supplies the tilt. The plane that reads more board faces stands.
        try:
            square_on = read_with(plane_fit(_image_frame((w, h))))
            if reading is None or _board_read_share(square_on) > _board_read_share(reading):
                reading = square_on
        except LatticeError:
            pass
    if camera is None and refusal is not None and (reading is None or _read_share(reading)
                                                   < params.min_low_contrast_read_share):
        # a table as dark as the tiles: its mottling joined the silhouettes. Tile black is kept only within the
        # links' reach, which leaves the board's outline rough; the gaps between the tiles still draw the
        # lattice, and the candidate that reads most board faces stands, then the usual re-fit
        blobs, _, table, pixels = find_blobs(image_bgr, lab, min_area_ratio=params.min_blob_area_ratio,
                                             confine_to_bands=True)
        bare = ~pixels.tile
        segs = _blob_segments(blobs, diag)
        labels = _label_image(blobs, (h, w))
        board_px = labels == 1
        maps = gap_lattice_candidates(cv2.GaussianBlur(lab[..., 0], (3, 3), 0), board_px, pixels.bands,
                                      pixels.reach_px)
        # link ends at the edge midpoints rank them (cheap); the few best are read
        maps = sorted(maps, key=lambda M: -midpoint_band_share(M, board_px, pixels.bands))[:GAP_CANDIDATES_READ]

        def gap_fit(M: np.ndarray) -> _Fit:
            return _grow_by_link_ends(_fit_lattice(blobs, segs, labels, bare, M, diag, params, anchored=True),
                                      pixels.bands, pixels.reach_px)

        cands = [gap_fit(M) for M in maps]
        scored = [(_board_faces(c, lab, params)[2], -k) for k, c in enumerate(cands) if c.tiles]
        if scored:
            fit = _refit_to_read_tiles(cands[-max(scored)[1]], gap_fit, lab, params, grows=True)
            from_gaps = _unread_where_link_ends(read_with(fit), fit, pixels.bands, pixels.reach_px)
            if reading is None or _read_share(from_gaps) > _read_share(reading):
                reading = from_gaps
    if reading is None:
        raise refusal or TantrixVisionError(f"cannot fit the hex lattice: {lattice_exc}")
    if not reading.tiles:
        # silhouettes of tile black with not one tile placed in them: an empty table would be a wrong reading
        raise refusal or TantrixVisionError(f"{len(blobs)} tile-like silhouette(s) found but no tile could be "
                                            "placed in them (the hex lattice does not fit)")
    if refusal is not None and _read_share(reading) < params.min_low_contrast_read_share:
        raise refusal
    board = [t for t in reading.tiles if t.place == "board"]
    n_read = sum(t.number is not None for t in board)
    if board and n_read < params.min_board_read_share * len(board):
        # hexagons that mostly spell no face are not the tiles: the lattice (size or plane) is wrong
        raise TantrixVisionError(f"the hex lattice found does not fit the tiles: only {n_read} of {len(board)} "
                                 "board hexagons read as a tile's face")
    if board and n_read < params.min_low_contrast_read_share * len(board):
        reading = _distrust_partial_faces(reading)
    return _beyond_a_complete_set(reading)


def _beyond_a_complete_set(reading: TantrixReading) -> TantrixReading:
    """A set holds each of its 56 faces once: when every one is read for sure, each once, whatever else was
    found like a tile (a hexagon over a link-coloured mat, cloth mottling at the border) is none, and must not
    hold the verdict back as an unread tile. It is kept apart, not dropped."""
    read = Counter(t.number for t in reading.tiles if t.number is not None)
    sure = all(not t.flagged for t in reading.tiles if t.number is not None)
    if len(read) < TILE_COUNT or max(read.values()) > 1 or not sure:
        return reading
    others = tuple(t for t in reading.tiles if t.number is None)
    if not others:
        return reading
    return replace(reading, tiles=tuple(t for t in reading.tiles if t.number is not None), not_tiles=others)


def _read_share(reading: TantrixReading) -> float:
    """Share of all tiles found whose face reads (0 when none is found)."""
    return sum(t.number is not None for t in reading.tiles) / len(reading.tiles) if reading.tiles else 0.0


def _board_read_share(reading: TantrixReading) -> float:
    """Share of the board hexagons that spell a tile's face (1 when there is no board)."""
    board = [t for t in reading.tiles if t.place == "board"]
    return sum(t.number is not None for t in board) / len(board) if board else 1.0


def _image_frame(size_wh: tuple[int, int]) -> np.ndarray:
    """Image -> plane map of a camera looking straight down: the image itself, y up, centred, unit = the long
    side (the lattice fit then sets angle and scale)."""
    w, h = size_wh
    s = float(max(w, h))
    return np.array([[1.0 / s, 0.0, -(w - 1) / 2.0 / s], [0.0, -1.0 / s, (h - 1) / 2.0 / s], [0.0, 0.0, 1.0]])


def _unread_where_link_ends(reading: TantrixReading, fit: _Fit, bands: np.ndarray, reach_px: int
                            ) -> TantrixReading:
    """Unread board tiles on the empty hexes beside the board that show link ends at (nearly) all six edges.

    On a table as dark as the tiles the silhouette is rough, so tiles it cut off are found by what every tile
    shows: a link leaving each edge midpoint. They are unread (the referee says "too close to call" where they
    matter) rather than left out, which would make them empty spaces.
    """
    Minv = np.linalg.inv(fit.M)
    occupied = {t.hex for t in reading.tiles if t.hex is not None}
    s_mm = reading.flat_to_flat_mm / SQ3
    added: list[TileReading] = []
    frontier = occupied
    while frontier:
        ring = sorted({n for hx in frontier for n in neighbours(hx)} - occupied)
        found = [hx for hx, k in zip(ring, link_end_counts(Minv, ring, bands, reach_px)) if k >= MIN_LINK_ENDS]
        for hx in found:
            c_u = hex_center_u(*hx)
            outline = apply_h(Minv, hexagon_u(c_u, 0.0))
            c_px = apply_h(Minv, c_u[None, :])[0]
            added.append(TileReading(
                tile_id=f"T{len(reading.tiles) + len(added) + 1}", number=None, rotation=None, hex=hx, place="board",
                player=None, center_px=(float(c_px[0]), float(c_px[1])),
                center_mm=(float(c_u[0] * s_mm), float(c_u[1] * s_mm)), angle_deg=0.0,
                outline_px=tuple((float(x), float(y)) for x, y in outline), edge_colors=(None,) * 6, confidence=0.0,
                flagged=True))
        occupied = occupied | set(found)
        frontier = set(found)
    return replace(reading, tiles=reading.tiles + tuple(added)) if added else reading


def _grow_by_link_ends(fit: _Fit, bands: np.ndarray, reach_px: int) -> _Fit:
    """The board's group grown over the lattice to every hex beside it whose edge midpoints show link ends.

    On a table as dark as the tiles the silhouette follows the link bands only roughly and leaves whole tiles out
    of the board, though the lattice from the gaps lies on them: the lattice is one rigid plane, and a hex holds a
    tile when (nearly) all six of its edges show the link each tile's edge carries. Such hexes join the board to
    be read like any other (a face that does not spell stays unread), and the re-fit to the tiles read then
    uses them across the whole board.
    """
    board = _board_group(fit.tiles)
    if not board:
        return fit
    Minv = np.linalg.inv(fit.M)
    taken = {t.hex for t in fit.tiles if t.hex is not None}
    added: list[_Tile] = []
    frontier, occupied = board, set(board)
    while frontier:
        ring = sorted({n for hx in frontier for n in neighbours(hx)} - occupied - taken)
        found = [hx for hx, k in zip(ring, link_end_counts(Minv, ring, bands, reach_px)) if k >= MIN_LINK_ENDS]
        added += [_Tile(hex_center_u(*hx), 0.0, hx, 0) for hx in found]
        occupied |= set(found)
        frontier = set(found)
    if not added:
        return fit
    # a hexagon posed off the lattice from the rough outline, overlapping a hex whose link ends show a tile, was
    # that tile seen badly (tiles do not overlap)
    grown = np.array([t.center_u for t in added])
    kept = [t for t in fit.tiles if t.hex is not None
            or np.min(np.hypot(*(grown - t.center_u).T)) >= OVERLAP_SHARE * SQ3]
    return _Fit(fit.M, kept + added, fit.pairs, fit.free_pairs)


# Lattices from the gaps (best by link ends at edge midpoints) whose board is read to choose among them.
GAP_CANDIDATES_READ = 2

# Rounds of re-fitting the plane to the tiles read (each must read more board faces than the last).
REFIT_ROUNDS = 4


def _board_faces(fit: _Fit, lab: np.ndarray, params: TantrixParams) -> tuple[np.ndarray, np.ndarray, int]:
    """Ideal lattice centres (U) and measured image centres (px) of the board tiles whose face reads, and how
    many board hexes of this fit read a face (its quality: a lattice off the tiles spells no faces)."""
    board = _board_group(fit.tiles)
    hexes = sorted(board)
    if not hexes:
        return np.zeros((0, 2)), np.zeros((0, 2)), 0
    Minv = np.linalg.inv(fit.M)
    ideal = hex_center_u(np.array([q for q, _ in hexes]), np.array([r for _, r in hexes]))
    cen, ang = refine_poses(lab, Minv, ideal, np.zeros(len(hexes)), params.links)
    edge_lab = edge_colours_lab(lab, Minv, cen, ang, params.links)
    faces = read_faces(edge_lab, fit_colour_model(edge_lab, params.links), params.links)
    read = np.array([f.number is not None for f in faces], bool)
    return ideal[read], apply_h(Minv, cen[read]), int(read.sum())


def _refit_to_read_tiles(fit: _Fit, refit, lab: np.ndarray, params: TantrixParams, *, grows: bool = False
                         ) -> _Fit:
    """The board plane re-fitted to the tiles it lets us read, until no more board faces read.

    The outline-based plane can drift across a steeply tilted board (the near tiles' sides and shadows widen
    the silhouette, the far edges are short): far-side hexes are then sampled off-centre and spell no face.
    The tile tops are one plane, so the ideal lattice centres map to the image by one homography; each tile
    read gives its centre as its six link bands place it (``refine_poses``), measured across the whole board.
    The homography fitted to those centres (RANSAC, then least squares on the inliers) replaces the plane, the
    lattice is found again in it, and the board is re-read: tiles near the read ones now fall within the band
    search and read in turn. A round stands only if more board hexes spell a face than before (a geometric
    test: a lattice off the tiles spells none). ``grows``: ``refit`` may add hexes to the board (link ends seen
    once the plane is right), so a board whose every hex reads is re-fitted all the same.
    """
    ideal, meas, best = _board_faces(fit, lab, params)
    for _ in range(REFIT_ROUNDS):
        if len(ideal) < 8 or (best == len(_board_group(fit.tiles)) and not grows):
            break  # too few tiles to fit a plane to, or every board hex reads already
        Minv = np.linalg.inv(fit.M)
        px_per_u = math.sqrt(abs(np.linalg.det(_jac(Minv, np.mean(ideal, axis=0)))))
        H = refine_homography(meas, ideal, max(1.5, 0.12 * px_per_u))
        if H is None or _anisotropy(H, np.mean(ideal, axis=0)) > MAX_ANISOTROPY:
            break
        try:
            cand = refit(np.linalg.inv(H))
        except LatticeError:
            break
        c_ideal, c_meas, n = _board_faces(cand, lab, params)
        if n <= best:
            break
        fit, ideal, meas, best = cand, c_ideal, c_meas, n
    return fit


def _distrust_partial_faces(reading: TantrixReading) -> TantrixReading:
    """Many board hexagons spell no face, so the lattice (plane) is off over part of the table: a face completed
    from fewer than six edges seen may be a neighbour's bands read half a tile away. Such faces become unread
    tiles (the judge then says "too close to call") rather than risk a wrong face; six clear edges still stand."""
    tiles = tuple(replace(t, number=None, rotation=None, confidence=0.0, flagged=True)
                  if t.number is not None and any(c is None for c in t.edge_colors) else t
                  for t in reading.tiles)
    return replace(reading, tiles=tiles)


# A phone over a table (tilt <= ~45 degrees) foreshortens a tile by less than this ratio of its two axes.
MAX_ANISOTROPY = 2.0


def _anisotropy(H_u2img: np.ndarray, at_u: np.ndarray) -> float:
    """Ratio of the principal stretches of a lattice -> image map at one point (1 = seen square-on)."""
    sv = np.linalg.svd(_jac(H_u2img, np.asarray(at_u, float)), compute_uv=False)
    return float(sv[0] / max(sv[1], 1e-12))


def _misfit(fit: _Fit, blob: Blob) -> float:
    """Tiles' worth of the board's silhouette that the lattice does not explain (about 0 for a good plane)."""
    on = sum(1 for t in fit.tiles if t.blob == 0 and t.hex is not None)
    free = sum(1 for t in fit.tiles if t.blob == 0 and t.hex is None)
    Minv = np.linalg.inv(fit.M)
    centre = blob.contour_px.mean(axis=0)
    hex_px = abs(np.linalg.det(_jac(Minv, apply_h(fit.M, centre[None, :])[0]))) * 1.5 * SQ3
    return free + max(0.0, blob.area_px / max(hex_px, 1e-9) - on - 1.0)


def _refine(fit: _Fit, blobs, segs, labels, bare, P: np.ndarray, G: np.ndarray, camera: CameraModel | None,
            diag: float, params: TantrixParams) -> _Fit:
    """Refit the plane to the lattice corners found (twice), then the lattice to the refined plane."""
    for round_ in range(2):
        meas, ideal = fit.pairs
        if camera is None and round_ > 0 and len(fit.free_pairs[0]):
            # hands pin the plane beyond the board once the board alone has set it roughly
            meas, ideal = np.concatenate([meas, fit.free_pairs[0]]), np.concatenate([ideal, fit.free_pairs[1]])
        if camera is None:
            Minv = np.linalg.inv(fit.M)
            px_per_u = math.sqrt(abs(np.linalg.det(_jac(Minv, apply_h(Minv, np.zeros((1, 2)))[0]))))
            Hn = refine_homography(meas, ideal, max(1.5, 0.08 * px_per_u))
            if Hn is None or _anisotropy(Hn, np.mean(ideal, axis=0)) > MAX_ANISOTROPY:
                break  # too few corners, or a degenerate plane: keep the previous one
            M = np.linalg.inv(Hn)
        else:
            if len(ideal) < 4:
                break
            plane_pts = apply_h(P, meas)
            A, _ = cv2.estimateAffinePartial2D(plane_pts, ideal, method=cv2.LMEDS)
            if A is None:
                break
            G = np.vstack([A, [0, 0, 1]])
            M = G @ P
        fit = _fit_lattice(blobs, segs, labels, bare, M, diag, params)
    return fit


def _jac(H: np.ndarray, at: np.ndarray) -> np.ndarray:
    x, y = at
    q = apply_h(H, np.array([[x, y], [x + 1e-3, y], [x, y + 1e-3]]))
    return np.column_stack([q[1] - q[0], q[2] - q[0]]) / 1e-3


def _read_tiles(image_bgr: np.ndarray, lab: np.ndarray, fit: _Fit, blobs: Sequence[Blob], camera: CameraModel | None, P: np.ndarray,
                flat_to_flat_mm: float | None, params: TantrixParams, pixels: PixelClasses) -> TantrixReading:
    h, w = image_bgr.shape[:2]
    M = fit.M
    Minv = np.linalg.inv(M)
    tiles = fit.tiles
    # table frame: the camera's, else U in millimetres
    if camera is not None:
        G = M @ np.linalg.inv(P)  # plane mm -> U (a similarity)
        scale_mm = 1.0 / math.sqrt(abs(np.linalg.det(G[:2, :2])))
        f_mm = SQ3 * scale_mm if flat_to_flat_mm is None else flat_to_flat_mm
        U2mm = np.linalg.inv(G)
        origin_mm = apply_h(U2mm, np.zeros((1, 2)))[0]
        ex = apply_h(U2mm, np.array([[1.0, 0.0]]))[0] - origin_mm
        lattice_angle = math.degrees(math.atan2(ex[1], ex[0]))
        plane_to_image = np.linalg.inv(P)
        source = "camera"
        mm_per_u = scale_mm
    else:
        f_mm = flat_to_flat_mm or NOMINAL_FLAT_TO_FLAT_MM
        s_mm = f_mm / SQ3
        U2mm = np.diag([s_mm, s_mm, 1.0])
        origin_mm = np.zeros(2)
        lattice_angle = 0.0
        plane_to_image = Minv @ np.diag([1.0 / s_mm, 1.0 / s_mm, 1.0])
        source = "tiles"
        mm_per_u = s_mm
    plane_to_image = plane_to_image / plane_to_image[2, 2]
    board_hexes = _board_group(tiles)
    cen = np.array([t.center_u for t in tiles]).reshape(-1, 2)
    ang = np.array([t.angle_deg for t in tiles], dtype=np.float64)
    # off the board's group, a tile on the lattice by chance (within the tolerances) is a hand tile like any other
    free = np.array([t.hex is None or t.hex not in board_hexes for t in tiles], bool)
    if free.any():
        tiles, cen, ang, free = _pose_hand_tiles(lab, M, blobs, tiles, cen, ang, free)
    # a hexagon posed off the lattice over board tiles is a tile there seen badly: it is probed on its hex like
    # any tile missed (kept on the board, read only if the tiles around agree), and its wrong pose no longer
    # explains the pixels of the hexes it straddles, which are probed in turn
    astray = _astray_board_tiles(tiles, cen, board_hexes)
    forced = list(astray.values())
    if astray:
        keep = np.array([i not in astray for i in range(len(tiles))], bool)
        tiles, cen, ang, free = [t for t, k in zip(tiles, keep) if k], cen[keep], ang[keep], free[keep]
    unread: set[int] = set()
    orphans = _orphan_silhouettes(blobs, tiles, M, pixels.bands)
    single: set[int] = set()  # a silhouette of one tile's size: posed from its bands, read if all six show
    if orphans:
        per_blob = Counter(t.blob for t in orphans)
        for k, t in enumerate(orphans):
            (single if per_blob[t.blob] == 1 else unread).add(len(tiles) + k)
        tiles = tiles + orphans
        cen = np.concatenate([cen, np.array([t.center_u for t in orphans])])
        ang = np.concatenate([ang, np.zeros(len(orphans))])
        free = np.concatenate([free, np.ones(len(orphans), bool)])
    # silhouette on the board's lattice that no read tile explains: tiles missed, probed like the others
    probes = unexplained_hexes(pixels.tile, pixels.bands, pixels.washed, Minv, board_hexes | set(forced),
                               [(cen[i], ang[i]) for i in np.flatnonzero(free)], pixels.broad)
    f_c, f_a, _ = _probe_poses(lab, Minv, forced, params)
    posed = list(zip(forced, f_c, f_a)) + _probes_with_link_ends(
        lab, Minv, probes, board_hexes | set(forced), cen, ang, tiles, params, pixels.washed)
    probes = [hx for hx, _, _ in posed]
    n_seen = len(tiles)
    if probes:
        tiles = tiles + [_Tile(hex_center_u(*hx), 0.0, hx, -1) for hx in probes]
        cen = np.concatenate([cen, np.array([c for _, c, _ in posed])])
        ang = np.concatenate([ang, np.array([a for _, _, a in posed], float)])
        free = np.concatenate([free, np.zeros(len(probes), bool)])
        board_hexes = board_hexes | set(probes)
    if free.any():
        ang[free] = turn_to_bands(lab, Minv, cen[free], ang[free], params.links)
    cen, ang = refine_poses(lab, Minv, cen, ang, params.links, free)
    edge_lab = edge_colours_lab(lab, Minv, cen, ang, params.links)
    model = fit_colour_model(edge_lab[:n_seen], params.links)  # probed hexes may show no link at all
    faces = read_faces(edge_lab, model, params.links)
    faces = [FaceRead(None, None, f.edge_classes, f.margin, f.mean_cost, True)
             if i in unread or (i in single and any(c is None for c in f.edge_classes)) else f
             for i, f in enumerate(faces)]
    _search_flagged_hand_tiles(lab, Minv, cen, ang, faces, free, unread, model, params)
    faces = _flag_duplicates(faces[:n_seen]) + _corroborated(faces[n_seen:], faces[:n_seen], tiles)
    faces = _read_by_elimination(faces, edge_lab, model, params,
                                 [i for i in range(len(faces)) if i not in unread and i not in single])
    # a probe read only now (among the numbers left) still needs the tiles around it to agree
    faces = faces[:n_seen] + _corroborated(faces[n_seen:], faces[:n_seen], tiles)
    sure_hexes = [t.hex if t.hex in board_hexes and i not in unread else None for i, t in enumerate(tiles)]
    faces = _flag_duplicates(read_from_neighbour_sides(faces, sure_hexes, edge_lab, model, params.links))
    # a tile off the Tantrix, read where it lies, but snapped to its lattice a hex apart is on the board (a tile
    # whose face did not read at its pose may be posed wrong there, so its pose is no evidence)
    apart, doubtful_place = tiles_apart_on_lattice(
        cen, ang, [i for i in np.flatnonzero(free) if i < n_seen and faces[i].number is not None
                   and not faces[i].flagged],
        board_hexes, mm_per_u, snap_offset_mm=params.board_snap_offset_mm, snap_twist_deg=params.board_snap_twist_deg,
        loose_offset_u=params.lattice_offset_tol, loose_twist_deg=params.lattice_angle_tol_deg)
    if apart:
        px_y = apply_h(Minv, cen)[:, 1]
        on_board_y = [px_y[i] for i, t in enumerate(tiles) if t.hex in board_hexes]
        side = ["A" if y > (np.mean(on_board_y) if on_board_y else h / 2.0) else "B" for y in px_y]
        # hand tiles read only: a smudge found like a tile must not fill a hand and so seat a hand tile on the board
        apart, doubtful_place = weigh_hand_sizes(apart, doubtful_place, side, [
            i for i in np.flatnonzero(free) if i not in apart and faces[i].number is not None and not faces[i].flagged])
    for i, hx in apart.items():
        tiles[i] = _Tile(tiles[i].center_u, 0.0, hx, tiles[i].blob)
        free[i] = False
        faces[i] = turned_to_lattice(faces[i], ang[i])
    board_hexes = board_hexes | set(apart.values())
    ang = turn_to_lattice(ang, list(apart))
    centers_px = apply_h(Minv, cen)
    board_cy = np.mean([centers_px[i, 1] for i, t in enumerate(tiles) if t.hex in board_hexes]) if board_hexes \
        else h / 2.0
    out = []
    for i, (t, f) in enumerate(zip(tiles, faces)):
        on_board = t.hex is not None and t.hex in board_hexes
        verts_u = np.array([cen[i] + [math.cos(math.radians(ang[i] + 30 + 60 * k)),
                                       math.sin(math.radians(ang[i] + 30 + 60 * k))] for k in range(6)])
        outline = apply_h(Minv, verts_u)
        c_mm = apply_h(U2mm, cen[i:i + 1])[0]
        rot = f.rotation
        angle_deg = lattice_angle + float(ang[i]) + 60.0 * (rot or 0)
        out.append(TileReading(
            tile_id=f"T{i + 1}", number=f.number, rotation=rot, hex=t.hex if on_board else None,
            place="board" if on_board else "hand",
            player=None if on_board else ("A" if centers_px[i, 1] > board_cy else "B"),
            center_px=(float(centers_px[i, 0]), float(centers_px[i, 1])), center_mm=(float(c_mm[0]), float(c_mm[1])),
            angle_deg=float(angle_deg % 360.0), outline_px=tuple((float(x), float(y)) for x, y in outline),
            edge_colors=tuple(None if c is None else CLASS_NAMES[c] for c in f.edge_classes),
            confidence=0.0 if f.flagged or i in doubtful_place else _confidence(f.margin, params.links.flag_margin),
            flagged=f.flagged or i in doubtful_place))
    out = _neighbour_confidence(out)
    return TantrixReading(tiles=tuple(out), image_size_wh_px=(w, h), flat_to_flat_mm=float(f_mm),
                          lattice_origin_mm=(float(origin_mm[0]), float(origin_mm[1])),
                          lattice_angle_deg=float(lattice_angle % 360.0),
                          plane_to_image=tuple(tuple(float(v) for v in row) for row in plane_to_image),
                          colorblind=model.colorblind, source=source)


# A hand tile found by its silhouette is kept if its ring contrast is at least this share of a typical hand tile's.
MIN_RING_SHARE = 0.6


def _pose_hand_tiles(lab: np.ndarray, M: np.ndarray, blobs: Sequence[Blob], tiles: list[_Tile], cen: np.ndarray,
                     ang: np.ndarray, free: np.ndarray):
    """Hand tiles posed by their hexagon outline (a mat hugging them misleads the silhouette; the link bands
    refine the pose afterwards); two poses landing on one tile are one tile, and tiles merged into one
    silhouette with their neighbours are found by the same template."""
    Minv = np.linalg.inv(M)
    idx = np.flatnonzero(free)
    cen, ang = cen.copy(), ang.copy()
    cen[idx], ang[idx], score = fit_hexagons(lab, Minv, cen[idx], ang[idx])
    keep = np.ones(len(tiles), bool)
    good = score[score > 0]
    new_tiles, new_c, new_a = [], [], []
    if len(good):
        # the template's peaks and the fitted poses compete by contrast: a pose between merged tiles yields to the
        # tiles the template finds around it (hexagons do not overlap)
        floor = MIN_RING_SHARE * float(np.median(good))
        found = [(c, a, sc, bi) for bi in sorted({tiles[i].blob for i in idx} - {0})
                 for c, a, sc in find_hexagons(lab, Minv, apply_h(M, blobs[bi].contour_px), cen[keep & ~free], floor)]
        # poses the template could not judge (score 0: near the image border) first: silhouette tiles all the same
        cands = [(float(score[k]) if score[k] > 0 else np.inf, 0, int(i)) for k, i in enumerate(idx) if keep[i]]
        cands += [(sc, 1, k) for k, (_, _, sc, _) in enumerate(found)]
        accepted: list[np.ndarray] = []
        for sc, kind, k in sorted(cands, key=lambda x: (-x[0], x[1])):
            c = cen[k] if kind == 0 else found[k][0]
            clash = any(np.hypot(*(c - o)) < MIN_SPACING_U for o in accepted)
            if kind == 0:
                keep[k] = not clash
                if keep[k]:
                    accepted.append(c)
            elif not clash:
                a = ((found[k][1] + 30.0) % 60.0) - 30.0
                new_tiles.append(_Tile(c, a, None, found[k][3]))
                new_c.append(c)
                new_a.append(a)
                accepted.append(c)
    tiles = [t for t, k in zip(tiles, keep) if k] + new_tiles
    cen = _stack([cen[keep]] + [np.array(new_c).reshape(-1, 2)])
    ang = np.concatenate([ang[keep], np.array(new_a, float)])
    free = np.concatenate([free[keep], np.ones(len(new_tiles), bool)])
    return tiles, cen, ang, free


# A probed hex holds a tile only if its six edge midpoints show link ends at least this share as clearly as the
# board's tiles do (every edge of a tile carries a link end at its midpoint; a mat's slivers do not line up so) ...
MIN_PROBE_CONTRAST_SHARE = 0.35
# ... unless a highlight washes this share of it or more (then nothing shows clearly, and it is probed regardless).
WASHED_PROBE_SHARE = 0.25


def _probe_poses(lab: np.ndarray, Minv: np.ndarray, probes: list[tuple[int, int]], params: TantrixParams
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each probed hex's pose (centre U, angle) within ``PROBE_REACH_U`` and ``PROBE_TURN_DEG`` of the lattice's
    where its six edge midpoints show link ends best, and that contrast. The plane fitted mostly to the board's
    middle can be a third of a tile off at its rim; a tile missed there still shows a link end at every edge
    midpoint of its own pose, bare table at most the one or two across from the board's bands. Searched on a
    coarse grid, then a fine one around the best."""
    cen = np.array([hex_center_u(*hx) for hx in probes]).reshape(-1, 2)
    ang = np.zeros(len(probes))
    for reach, step, turn, turn_step in ((PROBE_REACH_U, 2 * PROBE_STEP_U, PROBE_TURN_DEG, PROBE_TURN_STEP_DEG),
                                         (PROBE_STEP_U, PROBE_STEP_U, PROBE_TURN_STEP_DEG, PROBE_TURN_STEP_DEG / 2)):
        g = np.arange(-reach, reach + 1e-9, step)
        dx, dy = np.meshgrid(g, g)
        offs = np.column_stack([dx.ravel(), dy.ravel()])
        offs = offs[np.hypot(offs[:, 0], offs[:, 1]) <= reach + 1e-9]
        turns = np.arange(-turn, turn + 1e-9, turn_step)
        n_pose = len(offs) * len(turns)
        c = (cen[:, None, None, :] + offs[None, :, None, :] + np.zeros((1, 1, len(turns), 1))).reshape(-1, 2)
        a = (ang[:, None, None] + turns[None, None, :] + np.zeros((1, len(offs), 1))).reshape(-1)
        score = band_contrast(lab, Minv, c, a, params.links).reshape(len(probes), n_pose)
        pick = np.arange(len(probes)) * n_pose + np.argmax(score, axis=1)
        cen, ang, best = c[pick], a[pick], score.max(axis=1)
    return cen, ang, best


# Probed hexes: pose searched within this reach (U) of the lattice's, on this grid step (U; twice it first), and
# within this turn (deg) on this step.
PROBE_REACH_U = 0.3
PROBE_STEP_U = 0.05
PROBE_TURN_DEG = 6.0
PROBE_TURN_STEP_DEG = 2.0


def _probes_with_link_ends(lab: np.ndarray, Minv: np.ndarray, probes: list[tuple[int, int]],
                           board: set[tuple[int, int]], cen: np.ndarray, ang: np.ndarray, tiles: list[_Tile],
                           params: TantrixParams, washed_px: np.ndarray
                           ) -> list[tuple[tuple[int, int], np.ndarray, float]]:
    """The probed hexes whose edge midpoints show link ends like a tile's (or that a highlight washes), and
    still joined to the board, each with its pose (``_probe_poses``; the lattice's when washed)."""
    if not probes:
        return []
    on = [i for i, t in enumerate(tiles) if t.hex in board]
    ref = band_contrast(lab, Minv, cen[on], ang[on], params.links) if on else np.zeros(0)
    ref = ref[np.isfinite(ref)]
    if len(ref) == 0:
        return [(hx, hex_center_u(*hx), 0.0) for hx in probes]
    floor = MIN_PROBE_CONTRAST_SHARE * float(np.median(ref))
    pc_u = np.array([hex_center_u(*hx) for hx in probes])
    pa = np.zeros(len(probes))
    pc = band_contrast(lab, Minv, pc_u, pa, params.links)
    off = np.flatnonzero(pc < floor)  # only these need their own pose searched (the costly part)
    if len(off):
        pc_u[off], pa[off], pc[off] = _probe_poses(lab, Minv, [probes[i] for i in off], params)
    washed = tile_share(washed_px, Minv, probes)
    seen = pc >= floor
    pose = {hx: (c, float(a)) if s else (hex_center_u(*hx), 0.0) for hx, c, a, s in zip(probes, pc_u, pa, seen)}
    ok = {hx for hx, s, u in zip(probes, seen, washed) if s or u >= WASHED_PROBE_SHARE}
    kept: set[tuple[int, int]] = set()
    frontier = {hx for hx in ok if any(n in board for n in neighbours(hx))}
    while frontier:
        kept |= frontier
        frontier = {hx for hx in ok - kept if any(n in kept for n in neighbours(hx))}
    return [(hx, *pose[hx]) for hx in probes if hx in kept]


def _search_flagged_hand_tiles(lab: np.ndarray, Minv: np.ndarray, cen: np.ndarray, ang: np.ndarray,
                               faces: list[FaceRead], free: np.ndarray, unread: set[int], model,
                               params: TantrixParams) -> None:
    """A hand tile whose face did not read may be posed off its tile (two touching tiles found as one between
    them): its pose is searched where all six edge midpoints show bands, and the face taken there when all six
    edges read clearly, the number is read nowhere else and no read tile lies that close. In place."""
    todo = [i for i in np.flatnonzero(free) if faces[i].flagged and i not in unread]
    if not todo:
        return
    numbers = {f.number for f in faces if f.number is not None}
    for i in todo:
        c, a = search_pose(lab, Minv, cen[i], float(ang[i]), params.links)
        c2, a2 = refine_poses(lab, Minv, c[None, :], np.array([a]), params.links, np.ones(1, bool))
        f = read_faces(edge_colours_lab(lab, Minv, c2, a2, params.links), model, params.links)[0]
        others = [j for j, g in enumerate(faces) if j != i and g.number is not None]
        crowded = any(np.hypot(*(cen[j] - c2[0])) < MIN_SPACING_U for j in others)
        if f.flagged or any(e is None for e in f.edge_classes) or f.number in numbers or crowded:
            continue
        cen[i], ang[i], faces[i] = c2[0], a2[0], f
        numbers.add(f.number)


def _read_by_elimination(faces: list[FaceRead], edge_lab: np.ndarray, model, params: TantrixParams,
                         eligible: list[int]) -> list[FaceRead]:
    """Flagged tiles read again among the numbers no other tile reads: a set holds each number once, so a face
    whose seen edges fit it nearly as well as another face read on the table (edges washed by a lamp leave that
    tie) is the one whose seen edges fit best among the rest, when that is clear by the usual margin."""
    taken = frozenset(f.number for f in faces if f.number is not None)
    idx = [i for i in eligible if faces[i].number is None]
    if not idx or not taken:
        return faces
    again = read_faces(edge_lab[idx], model, params.links, exclude=taken)
    out = list(faces)
    for i, f in zip(idx, again):
        if f.number is not None:
            out[i] = f
    return _flag_duplicates(out)


def _flag_duplicates(faces):
    """A set holds each number once: of two tiles read as one number, the less certain is flagged."""
    by_num: dict[int, list[int]] = {}
    for i, f in enumerate(faces):
        if f.number is not None:
            by_num.setdefault(f.number, []).append(i)
    faces = list(faces)
    for idx in by_num.values():
        if len(idx) < 2:
            continue
        idx.sort(key=lambda i: -faces[i].margin)
        for i in idx[1:]:
            f = faces[i]
            faces[i] = FaceRead(None, None, f.edge_classes, f.margin, f.mean_cost, True)
    return faces


# Two tiles whose centres are closer than this share of the touching distance (sqrt 3 circumradii) overlap.
OVERLAP_SHARE = 0.92


def _astray_board_tiles(tiles: list[_Tile], cen: np.ndarray, board: set[tuple[int, int]]) -> dict[int, tuple[int, int]]:
    """Tiles found off the lattice inside the board's own silhouette and overlapping board tiles, each with the
    free hex it overlaps most.

    Tiles do not overlap: a hexagon posed closer to a board tile than two touching tiles lie (the apothem twice)
    means the plane or the lattice is off there, so its face and hex cannot be trusted: it becomes an unread tile
    on the nearest free hex (the referee says "too close to call" wherever it could matter) rather than a hand
    tile read in a wrong pose. A hand tile laid against the board touches it without overlapping and stays.
    """
    blobs = Counter(t.blob for t in tiles if t.hex in board)
    if not blobs:
        return {}
    home = blobs.most_common(1)[0][0]
    taken = set(board)
    out: dict[int, tuple[int, int]] = {}
    for i, t in enumerate(tiles):
        if t.hex is not None or t.blob != home:
            continue
        if min(float(np.hypot(*(hex_center_u(*b) - cen[i]))) for b in board) >= OVERLAP_SHARE * SQ3:
            continue
        q, r = (int(v) for v in nearest_hex(cen[i:i + 1])[0])
        near = sorted([(q, r), *neighbours((q, r))],
                      key=lambda hx: float(np.hypot(*(hex_center_u(*hx) - cen[i]))))
        hx = next((h for h in near if h not in taken), None)
        if hx is not None:
            taken.add(hx)
            out[i] = hx
    return out


# A tile's links cover a fifth or more of its face; a silhouette with under this share of band pixels is no tile.
MIN_ORPHAN_BANDS = 0.05


def _orphan_silhouettes(blobs: Sequence[Blob], tiles: list[_Tile], M: np.ndarray, band_px: np.ndarray
                        ) -> list[_Tile]:
    """Unread tiles for silhouettes no tile was found in (a plane slightly off far from the board can shrink a hand
    tile below a hexagon's size) that show link bands like a tile: as many as the silhouette holds tiles' areas,
    at its centre. Counted, never read (the pose is unknown), they keep the referee from taking a hand for smaller
    than it is."""
    Minv = np.linalg.inv(M)
    centres_px = apply_h(Minv, np.array([t.center_u for t in tiles]).reshape(-1, 2))
    areas = [abs(np.linalg.det(_jac(Minv, t.center_u))) * HEX_AREA_U for t in tiles if t.hex is not None]
    if not areas:
        return []
    tile_area_px = float(np.median(areas))
    out = []
    for b, blob in enumerate(blobs):
        n = int(round(blob.area_px / tile_area_px))
        if n < 1 or any(t.blob == b for t in tiles):
            continue
        contour = blob.contour_px.astype(np.float32).reshape(-1, 1, 2)
        if any(cv2.pointPolygonTest(contour, (float(x), float(y)), False) >= 0 for x, y in centres_px):
            continue
        x0, y0, bw, bh = blob.bbox
        inside = np.zeros((bh, bw), np.uint8)
        cv2.drawContours(inside, [np.rint(blob.contour_px - (x0, y0)).astype(np.int32)], -1, 1, cv2.FILLED)
        if np.count_nonzero(band_px[y0:y0 + bh, x0:x0 + bw] & (inside > 0)) < MIN_ORPHAN_BANDS * blob.area_px:
            continue  # no links: not a tile (a coin, a cup, a mat's corner)
        c = apply_h(M, blob.contour_px.mean(axis=0)[None, :])[0]
        out += [_Tile(c + 0.01 * k, 0.0, None, b) for k in range(n)]
    return out


def _corroborated(probed: list[FaceRead], seen: list[FaceRead], tiles: list[_Tile]) -> list[FaceRead]:
    """Faces read on hexes found only by their unexplained silhouette are kept when the tiles around agree:
    every shared edge with a read board tile matches (one at least) and the number is not read elsewhere.
    Otherwise the hex holds an unread tile (flagged, no number).

    A probe kept joins the read tiles, so a probe whose only read neighbours are other probes (a lamp's streak
    washes a run of tiles off the silhouette) is corroborated through the chain of agreeing edges from the seen
    tiles, surest face first; a chain never starts from probes alone.
    """
    n_seen = len(seen)
    read = {tiles[i].hex: (f.number, f.rotation) for i, f in enumerate(seen)
            if f.number is not None and tiles[i].hex is not None}
    numbers = {f.number for f in seen if f.number is not None}
    kept: set[int] = set()
    pending = sorted((k for k, f in enumerate(probed) if f.number is not None), key=lambda k: -probed[k].margin)
    grew = True
    while grew:
        grew = False
        for k in pending:
            f, hx = probed[k], tiles[n_seen + k].hex
            if k in kept or f.number in numbers:
                continue
            good, bad = shared_edges_agree(f.number, f.rotation, hx, read)
            if good >= 1 and bad == 0:
                kept.add(k)
                numbers.add(f.number)
                read[hx] = (f.number, f.rotation)
                grew = True
    return [f if k in kept else FaceRead(None, None, f.edge_classes, f.margin, f.mean_cost, True)
            for k, f in enumerate(probed)]


def _neighbour_confidence(tiles: list[TileReading]) -> list[TileReading]:
    """Shared edges normally match: each matching edge raises confidence a little, each mismatch lowers it.

    Never changes a face — a real mismatch is what the referee must see.
    """
    at = {t.hex: t for t in tiles if t.hex is not None and t.number is not None}
    out = []
    for t in tiles:
        if t.hex is None or t.number is None:
            out.append(t)
            continue
        good = bad = 0
        for k in range(6):
            n = at.get(neighbour(t.hex, k))
            if n is None:
                continue
            mine = tile_of(t.number).edge_color(k, t.rotation)
            theirs = tile_of(n.number).edge_color(opposite_edge(k), n.rotation)
            good += mine is theirs
            bad += mine is not theirs
        conf = t.confidence * (1.0 + 0.1 * good) * (0.7 ** bad)
        out.append(replace(t, confidence=float(min(1.0, max(0.0, conf)))))
    return out


__all__ = ["TantrixParams", "TantrixReading", "TantrixVisionError", "TileReading", "detect_tantrix",
           "DEFAULT_TANTRIX_PARAMS", "NOMINAL_FLAT_TO_FLAT_MM", "TantrixError"]
