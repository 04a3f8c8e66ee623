"""The service's view of the vision pipeline, behind the ``PipelineDep`` dependency so tests can fake it.

:class:`Pipeline` is what routes and the live loop call; :class:`VisionPipeline` wires the real packages
(imported lazily, so the service starts, and reports 503, when a part is not installed). Also here: decoding an
uploaded image with the limits the issue sets, before any pixel buffer is allocated.
"""

from __future__ import annotations

import enum
import math
import struct
from typing import Any, Protocol, runtime_checkable

import cv2
import numpy as np

from api.routes.errors import ApiError, PipelineUnavailable

SUPPORTED_GAMES: tuple[str, ...] = ("tiddlywinks",)
# Games a still photo can be analysed for (live games follow tiddlywinks only, for now).
PHOTO_GAMES: tuple[str, ...] = ("tiddlywinks", "marbles", "ice_tiddlywinks", "dominoes", "tantrix")
# Games the project plans but whose vision does not exist yet: refused with a clear "not supported yet".
PLANNED_GAMES: tuple[str, ...] = ("ice_tiddlywinks", "marbles", "tantrix", "dominoes")
_OUR_PACKAGES = {"geometry", "calibration", "vision", "adjudicator", "simulation", "api"}


@runtime_checkable
class Pipeline(Protocol):
    """What the HTTP routes and the live loop need from vision and calibration."""

    supported_games: tuple[str, ...]

    def analyze(self, game: str, frame_bgr: np.ndarray, calibration: dict[str, Any] | None) -> dict[str, Any]:
        """The analysis document (scene, ``rulings[]``, ``squidge_off``) of one still frame."""
        ...

    def calibrate_image(self, frame_bgr: np.ndarray) -> dict[str, Any]:
        """A calibration (``TableCalibration.to_dict()``) found from the mat in a board image."""
        ...

    def calibrate_corners(self, corners_px: list[list[float]], image_size_wh_px: tuple[int, int]) -> dict[str, Any]:
        """A calibration from the four mat corners in pixels, order (-x,+y), (+x,+y), (+x,-y), (-x,-y)."""
        ...

    def annotate(self, frame_bgr: np.ndarray, document: dict[str, Any] | None) -> np.ndarray:
        """A copy of the frame with the overlay of an analysis document drawn on it."""
        ...


def jsonable(value: Any) -> Any:
    """Plain JSON types for a document (numpy scalars and arrays, tuples, enums, non-finite floats -> None),
    so a response or a stored row never fails to serialise."""
    if isinstance(value, dict):
        return {str(getattr(k, "value", k)): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)) and not isinstance(value, enum.Enum):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return f if math.isfinite(f) else None
    if isinstance(value, enum.Enum):
        return jsonable(value.value)
    if value is None or isinstance(value, str):
        return value
    return str(value)


def check_game(game: str, pipeline: Pipeline, games: tuple[str, ...] | None = None) -> str:
    """The game name if the pipeline supports it (or ``games``), else a 422 naming the supported games."""
    name = game.strip().lower().replace("-", "_").replace(" ", "_")
    games = pipeline.supported_games if games is None else games
    if name in games:
        return name
    supported = list(games)
    if name in PLANNED_GAMES:
        raise ApiError(422, "game_not_supported", f"game {game!r} is not supported yet; supported games: "
                       f"{', '.join(supported)}", supported_games=supported)
    raise ApiError(422, "game_not_supported", f"unknown game {game!r}; supported games: {', '.join(supported)}",
                   supported_games=supported)


def _is_ours(exc: BaseException) -> bool:
    return type(exc).__module__.split(".")[0] in _OUR_PACKAGES


def _is_no_mat(exc: BaseException) -> bool:
    return any(cls.__name__ in ("NoMatFoundError", "MatNotFoundError") for cls in type(exc).__mro__)


def pipeline_error(exc: ValueError) -> ApiError:
    """Our packages' named errors as a 422 with their message; anything else is a bug and is re-raised."""
    if _is_no_mat(exc):
        return ApiError(422, "no_mat_found", f"no mat found in the image: {exc}")
    if _is_ours(exc):
        return ApiError(422, "analysis_failed", f"{type(exc).__name__}: {exc}")
    raise exc


class VisionPipeline:
    """The real pipeline: ``vision.tiddlywinks``, ``calibration`` and the ``api.overlay`` annotator."""

    supported_games: tuple[str, ...] = SUPPORTED_GAMES
    photo_games: tuple[str, ...] = PHOTO_GAMES

    def _calibration_object(self, calibration: dict[str, Any] | None) -> Any:
        if calibration is None:
            return None
        try:
            from calibration.types import TableCalibration
        except ImportError as exc:
            raise PipelineUnavailable(f"calibration types are not installed: {exc}") from None
        try:
            return TableCalibration.from_dict(calibration)
        except (ValueError, KeyError, TypeError) as exc:
            raise ApiError(422, "invalid_calibration", f"stored calibration cannot be used: {exc}") from None

    def analyze(self, game: str, frame_bgr: np.ndarray, calibration: dict[str, Any] | None) -> dict[str, Any]:
        name = check_game(game, self, self.photo_games)
        cal = self._calibration_object(calibration)
        try:
            if name == "marbles":
                from api.marbles_service import analyze_marbles_photo
                return jsonable(analyze_marbles_photo(frame_bgr, cal.camera if cal is not None else None))
            if name == "ice_tiddlywinks":
                from api.ice_service import score_ice_photo
                return jsonable(score_ice_photo(frame_bgr, cal.camera if cal is not None else None))
            if name == "dominoes":
                from api.dominoes_service import analyze_dominoes_photo
                return jsonable(analyze_dominoes_photo(frame_bgr, cal.camera if cal is not None else None))
            if name == "tantrix":
                from api.tantrix_service import analyze_tantrix_photo
                return jsonable(analyze_tantrix_photo(frame_bgr, cal.camera if cal is not None else None))
            from api.analysis import analyze_tiddlywinks_photo
            return jsonable(analyze_tiddlywinks_photo(frame_bgr, cal))
        except ImportError as exc:
            raise PipelineUnavailable(f"the {name} vision pipeline is not installed: {exc}") from None
        except ValueError as exc:
            raise pipeline_error(exc) from None

    def rest_scene(self, frame_bgr: np.ndarray, calibration: dict[str, Any] | None,
                   change: Any = None) -> dict[str, Any]:
        """The scene document of a tiddlywinks rest frame for the live tracker (``api.tracking``), measuring
        only where ``change`` (a ``RestChange`` since the last rest) says the picture changed. A pipeline
        without this method keeps the per-frame path in live games."""
        from api.tracking import analyze_rest_frame
        try:
            return jsonable(analyze_rest_frame(frame_bgr, calibration, change))
        except ValueError as exc:
            raise pipeline_error(exc) from None

    def calibrate_image(self, frame_bgr: np.ndarray) -> dict[str, Any]:
        try:
            from calibration.mat import calibrate_from_mat
        except ImportError as exc:
            raise PipelineUnavailable(f"mat calibration is not installed: {exc}") from None
        try:
            return jsonable(calibrate_from_mat(frame_bgr).to_dict())
        except ValueError as exc:
            raise pipeline_error(exc) from None

    def calibrate_corners(self, corners_px: list[list[float]], image_size_wh_px: tuple[int, int]) -> dict[str, Any]:
        try:
            from calibration.mat import from_corners
        except ImportError as exc:
            raise PipelineUnavailable(f"calibration from corners is not installed: {exc}") from None
        try:
            return jsonable(from_corners(np.asarray(corners_px, dtype=np.float64), tuple(image_size_wh_px),
                                         ordered=True).to_dict())
        except ValueError as exc:
            raise pipeline_error(exc) from None

    def annotate(self, frame_bgr: np.ndarray, document: dict[str, Any] | None) -> np.ndarray:
        if document is None:
            return frame_bgr.copy()
        game = document.get("game", "tiddlywinks")
        try:
            if game == "marbles":
                from api.marbles_service import annotate_marbles as annotate
            elif game == "ice-tiddlywinks":
                from api.ice_service import annotate_ice as annotate
            elif game == "dominoes":
                from api.dominoes_service import annotate_dominoes as annotate
            elif game == "tantrix":
                from api.tantrix_overlay import annotate_tantrix as annotate
            else:
                from api.overlay import annotate_tiddlywinks as annotate
        except ImportError:
            return basic_overlay(frame_bgr, document)
        return annotate(frame_bgr, document)


# --- a minimal overlay for when api.overlay is not installed --------------------------------------------------
_BGR = {"blue": (255, 80, 0), "green": (0, 170, 0), "red": (0, 0, 230), "yellow": (0, 220, 255)}


def basic_overlay(frame_bgr: np.ndarray, document: dict[str, Any]) -> np.ndarray:
    """Mat outline and piece circles placed through the mat-corner homography (fallback overlay)."""
    from geometry.constants import MAT_HALF_LENGTH_MM as L
    from geometry.constants import MAT_HALF_WIDTH_MM as W

    out = frame_bgr.copy()
    corners = (document.get("mat") or {}).get("corners_px")
    if not corners or len(corners) != 4:
        return out
    px = np.asarray(corners, dtype=np.float32)
    cv2.polylines(out, [px.astype(np.int32)], True, (255, 255, 255), 2)
    mm = np.asarray([(-L, W), (L, W), (L, -W), (-L, -W)], dtype=np.float32)
    H = cv2.getPerspectiveTransform(mm, px)
    for piece in document.get("pieces", []):
        if piece.get("potted") or piece.get("off_mat"):
            continue
        c = np.asarray([[piece["center_mm"]]], dtype=np.float32)
        edge = c + np.asarray([[[piece.get("radius_mm", 8.0), 0.0]]], dtype=np.float32)
        (cx, cy), (ex, ey) = cv2.perspectiveTransform(c, H)[0, 0], cv2.perspectiveTransform(edge, H)[0, 0]
        r = max(2, round(float(np.hypot(ex - cx, ey - cy))))
        color = (0, 0, 255) if piece.get("out_of_bounds") else _BGR.get(piece.get("color", ""), (200, 200, 200))
        cv2.circle(out, (round(float(cx)), round(float(cy))), r, color, 2)
    return out


# --- uploads ---------------------------------------------------------------------------------------------------
IMAGE_TYPES = ("PNG", "JPEG", "BMP", "WebP")


def _image_kind(data: bytes) -> str | None:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "PNG"
    if data.startswith(b"\xff\xd8\xff"):
        return "JPEG"
    if data.startswith(b"BM"):
        return "BMP"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WebP"
    return None


def _png_size(data: bytes) -> tuple[int, int]:
    if len(data) < 33 or data[12:16] != b"IHDR":
        raise ApiError(422, "corrupt_image", "PNG is truncated or corrupt: no IHDR header")
    if b"IEND" not in data[-32:]:
        raise ApiError(422, "truncated_image", "PNG is truncated: it has no IEND chunk at its end")
    return struct.unpack(">II", data[16:24])


_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def _jpeg_size(data: bytes) -> tuple[int, int]:
    i, n = 2, len(data)
    while i + 4 <= n:
        if data[i] != 0xFF:
            raise ApiError(422, "corrupt_image", f"JPEG is corrupt: bad marker at byte {i}")
        marker = data[i + 1]
        if marker == 0xFF:
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        (length,) = struct.unpack(">H", data[i + 2:i + 4])
        if marker in _SOF:
            if i + 9 > n:
                break
            h, w = struct.unpack(">HH", data[i + 5:i + 9])
            if b"\xff\xd9" not in data[-64:]:
                raise ApiError(422, "truncated_image", "JPEG is truncated: it has no end-of-image marker")
            return w, h
        if marker == 0xDA or length < 2:
            break
        i += 2 + length
    raise ApiError(422, "corrupt_image", "JPEG is truncated or corrupt: no frame header found")


def _bmp_size(data: bytes) -> tuple[int, int]:
    if len(data) < 26:
        raise ApiError(422, "truncated_image", "BMP is truncated: header incomplete")
    (file_size,) = struct.unpack("<I", data[2:6])
    if file_size > len(data):
        raise ApiError(422, "truncated_image", f"BMP is truncated: {len(data)} of {file_size} bytes")
    w, h = struct.unpack("<ii", data[18:26])
    return abs(w), abs(h)


def _webp_size(data: bytes) -> tuple[int, int]:
    (riff_size,) = struct.unpack("<I", data[4:8])
    if riff_size + 8 > len(data):
        raise ApiError(422, "truncated_image", f"WebP is truncated: {len(data)} of {riff_size + 8} bytes")
    chunk = data[12:16]
    try:
        if chunk == b"VP8X":
            w = 1 + int.from_bytes(data[24:27], "little")
            h = 1 + int.from_bytes(data[27:30], "little")
            return w, h
        if chunk == b"VP8L":
            bits = int.from_bytes(data[21:25], "little")
            return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
        if chunk == b"VP8 ":
            w, h = struct.unpack("<HH", data[26:30])
            return w & 0x3FFF, h & 0x3FFF
    except (struct.error, IndexError):
        pass
    raise ApiError(422, "corrupt_image", "WebP is corrupt: unknown or short header")


def decode_image(data: bytes, *, max_bytes: int, max_pixels: int, what: str = "image") -> np.ndarray:
    """Decode an uploaded image to BGR after checking size, type, header dimensions and completeness.

    The pixel count is read from the header, so a 40-megapixel bomb is refused before it is decoded.
    """
    if not data:
        raise ApiError(400, "empty_upload", f"the {what} upload is empty (0 bytes)")
    if len(data) > max_bytes:
        raise ApiError(413, "image_too_large", f"the {what} is {len(data)} bytes; the limit is {max_bytes} bytes "
                       f"({max_bytes / 1024 / 1024:.0f} MB)")
    kind = _image_kind(data)
    if kind is None:
        raise ApiError(415, "not_an_image", f"the {what} is not an image this service reads; send one of "
                       f"{', '.join(IMAGE_TYPES)}")
    try:
        w, h = {"PNG": _png_size, "JPEG": _jpeg_size, "BMP": _bmp_size, "WebP": _webp_size}[kind](data)
    except struct.error:
        raise ApiError(422, "corrupt_image", f"{kind} header is truncated or corrupt") from None
    if w <= 0 or h <= 0:
        raise ApiError(422, "corrupt_image", f"{kind} header gives an empty image ({w}x{h} px)")
    if w * h > max_pixels:
        raise ApiError(413, "image_too_large", f"the {what} is {w}x{h} = {w * h / 1e6:.1f} megapixels; the limit "
                       f"is {max_pixels / 1e6:.0f} megapixels")
    frame = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), cv2.IMREAD_COLOR)
    if frame is None or frame.size == 0:
        raise ApiError(422, "corrupt_image", f"the {what} looks like {kind} but cannot be decoded (corrupt data)")
    return frame


def encode_jpeg(frame_bgr: np.ndarray, quality: int = 80) -> bytes:
    ok, buf = cv2.imencode(".jpg", frame_bgr, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return buf.tobytes()
