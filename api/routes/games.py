"""Games: create, list, current state, push frames, attach a video source, rulings, events, measurements."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlparse

from fastapi import APIRouter, File, Query, Response, UploadFile

from api.deps import GamesDep, PipelineDep, ReadAuth, SettingsDep, StorageDep, WriteAuth
from api.live import log_line, score_summary
from api.pipeline import check_game
from api.routes.errors import ApiError
from api.routes.models import (
    COLORS,
    DistanceOut,
    CorrectionIn,
    ErrorOut,
    EventRecord,
    FrameOut,
    GameIn,
    GameOut,
    GameStateOut,
    RulingRecord,
    ShotRecord,
    SourceIn,
)
from api.routes.uploads import read_image_upload
from api.storage import Storage

router = APIRouter(prefix="/v1/games", tags=["games"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 404, 409, 413, 415, 422, 503)}
_URL_SCHEMES = ("rtsp", "rtsps", "rtmp", "http", "https")
GameId = Annotated[str, "game id"]


def game_or_404(storage: Storage, game_id: str) -> dict[str, Any]:
    game = storage.get_game(game_id)
    if game is None:
        raise ApiError(404, "game_not_found", f"no game with id {game_id!r}")
    return game


def _public(game: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in game.items() if k != "state"}


@router.post("", status_code=201, response_model=GameOut, responses=_ERRORS, dependencies=[WriteAuth],
             summary="Create a game")
def create_game(body: GameIn, storage: StorageDep, pipeline: PipelineDep) -> dict[str, Any]:
    """A new game; ``players`` maps colours to names (all four in pairs; in singles one name per partnership
    may be given on either colour)."""
    game = check_game(body.game, pipeline)
    if body.calibration_id is not None and storage.get_calibration(body.calibration_id) is None:
        raise ApiError(404, "calibration_not_found", f"no calibration with id {body.calibration_id!r}")
    players = dict(body.players)
    if body.game_type == "singles":
        for a, b in (("blue", "red"), ("green", "yellow")):
            name = players.get(a) or players.get(b)
            if players.get(a) and players.get(b) and players[a] != players[b]:
                raise ApiError(422, "invalid_players", f"in singles one player plays {a} and {b}; got "
                               f"{players[a]!r} and {players[b]!r}")
            if name:
                players[a] = players[b] = name
    created = storage.add_game(game=game, game_type=body.game_type, players=players,
                               calibration_id=body.calibration_id)
    storage.add_event(created["id"], "created", {"game": game, "game_type": body.game_type, "players": players})
    return _public(created)


@router.get("", response_model=list[GameOut], dependencies=[ReadAuth], summary="List games")
def list_games(storage: StorageDep) -> list[dict[str, Any]]:
    return [_public(g) for g in storage.list_games()]


@router.get("/{game_id}", response_model=GameStateOut, responses=_ERRORS, dependencies=[ReadAuth],
            summary="Current state of a game")
def read_game(game_id: GameId, storage: StorageDep, games: GamesDep,
              recent: Annotated[int, Query(ge=0, le=1000)] = 50) -> dict[str, Any]:
    game = game_or_404(storage, game_id)
    rulings = storage.list_rulings(game_id, 0, 1_000_000)[-recent:] if recent else []
    return {"game": _public(game), "state": game["state"], "summary": score_summary(game["state"]),
            "source_status": games.status(game_id), "rulings": rulings}


@router.post("/{game_id}/frames", response_model=FrameOut, responses=_ERRORS, dependencies=[WriteAuth],
             summary="Push a frame")
def push_frame(game_id: GameId, image: Annotated[UploadFile, File(description="A still frame of the table.")],
               settings: SettingsDep, storage: StorageDep, games: GamesDep) -> dict[str, Any]:
    """Analyse a pushed frame as a picture at rest; new rulings are stored and streamed."""
    game_or_404(storage, game_id)
    frame = read_image_upload(image, settings, what="frame")
    result = games.process_frame(game_id, frame, origin="push")
    games.publish_feed(game_id, frame, result["document"])
    return result


@router.put("/{game_id}/source", response_model=GameOut, responses=_ERRORS, dependencies=[WriteAuth],
            summary="Attach a video source")
def attach_source(game_id: GameId, body: SourceIn, storage: StorageDep, games: GamesDep) -> dict[str, Any]:
    """Read frames from an OpenCV ``VideoCapture`` source; analysis runs whenever the picture is at rest. A
    source that drops is reopened with exponential backoff."""
    game_or_404(storage, game_id)
    spec: dict[str, Any] = {"kind": body.kind, "value": body.value, "loop": body.loop}
    if body.hold_end_s:
        spec["hold_end_s"] = body.hold_end_s
    if body.kind == "device":
        try:
            index = int(body.value)
        except ValueError:
            raise ApiError(422, "invalid_source", f"device index must be an integer, got {body.value!r}") from None
        if not 0 <= index < 64:
            raise ApiError(422, "invalid_source", f"device index must be in [0, 64), got {index}")
        spec["value"] = index
    elif body.kind == "file":
        path = Path(str(body.value)).expanduser()
        if not path.is_file():
            raise ApiError(422, "source_not_found", f"no video file at {str(body.value)!r} on the server")
        spec["value"] = str(path.resolve())
    else:
        url = urlparse(str(body.value))
        if url.scheme.lower() not in _URL_SCHEMES or not url.netloc:
            raise ApiError(422, "invalid_source", f"stream URL {str(body.value)!r} must be "
                           f"{'/'.join(_URL_SCHEMES)}://host/...")
    games.attach(game_id, spec)
    return _public(game_or_404(storage, game_id))


@router.delete("/{game_id}/source", status_code=204, responses=_ERRORS, dependencies=[WriteAuth],
               summary="Detach the video source")
def detach_source(game_id: GameId, storage: StorageDep, games: GamesDep) -> Response:
    game_or_404(storage, game_id)
    games.detach(game_id)
    return Response(status_code=204)


@router.get("/{game_id}/rulings", response_model=list[RulingRecord], responses=_ERRORS, dependencies=[ReadAuth],
            summary="Rulings of a game")
def read_rulings(game_id: GameId, storage: StorageDep,
                 after: Annotated[int, Query(ge=0, le=2**62, description="Only rulings with seq > after.")] = 0,
                 limit: Annotated[int, Query(ge=1, le=10000)] = 1000) -> list[dict[str, Any]]:
    game_or_404(storage, game_id)
    return storage.list_rulings(game_id, after, limit)


@router.get("/{game_id}/shots", response_model=list[ShotRecord], responses=_ERRORS, dependencies=[ReadAuth],
            summary="Shot-by-shot log of a tiddlywinks game")
def read_shots(game_id: GameId, storage: StorageDep,
               after: Annotated[int, Query(ge=0, le=2**62, description="Only records with seq > after.")] = 0,
               limit: Annotated[int, Query(ge=1, le=10000)] = 1000,
               full: Annotated[bool, Query(description="Whole records (input, state): the log replays.")] = False,
               ) -> list[dict[str, Any]]:
    """Each rest (the shot, its rulings, the state summary after it) and each correction, in order."""
    game_or_404(storage, game_id)
    return [{"seq": r["seq"], "created_at": r["created_at"], **r["record"]} if full else log_line(r)
            for r in storage.list_shots(game_id, after, limit)]


@router.post("/{game_id}/corrections", response_model=ShotRecord, responses=_ERRORS, dependencies=[WriteAuth],
             summary="Correct a tiddlywinks game by hand")
def post_correction(game_id: GameId, body: CorrectionIn, storage: StorageDep, games: GamesDep) -> dict[str, Any]:
    """The umpire's edit (e.g. a wink marked squopped); stored in the log, and play goes on from it."""
    game_or_404(storage, game_id)
    message = games.correct(game_id, body.to_correction())
    return {k: v for k, v in message.items() if k != "type"}


@router.get("/{game_id}/events", response_model=list[EventRecord], responses=_ERRORS, dependencies=[ReadAuth],
            summary="Events of a game (sources, errors, resumes)")
def read_events(game_id: GameId, storage: StorageDep,
                after: Annotated[int, Query(ge=0, le=2**62)] = 0,
                limit: Annotated[int, Query(ge=1, le=10000)] = 1000) -> list[dict[str, Any]]:
    game_or_404(storage, game_id)
    return storage.list_events(game_id, after, limit)


@router.get("/{game_id}/squidge-off", responses=_ERRORS, dependencies=[ReadAuth],
            summary="Squidge-off verdict of the current position")
def read_squidge_off(game_id: GameId, storage: StorageDep) -> dict[str, Any]:
    state = _state_or_409(game_or_404(storage, game_id))
    verdict = state.get("squidge_off")
    if not isinstance(verdict, dict):
        raise ApiError(409, "no_squidge_off", "the current analysis has no squidge-off verdict")
    return verdict


@router.get("/{game_id}/distance", response_model=DistanceOut, responses=_ERRORS, dependencies=[ReadAuth],
            summary="Distance between two winks")
def read_distance(game_id: GameId, storage: StorageDep,
                  a: Annotated[str, Query(max_length=64, description="First wink id.")],
                  b: Annotated[str, Query(max_length=64, description="Second wink id.")]) -> dict[str, Any]:
    """Centre distance and edge gap in the current position (the umpire page's two-tap measure)."""
    state = _state_or_409(game_or_404(storage, game_id))
    pieces = {str(p.get("id")): p for p in state.get("pieces", []) if isinstance(p, dict)}
    for wid in (a, b):
        if wid not in pieces:
            raise ApiError(404, "piece_not_found", f"no wink {wid!r} in the current position; winks: "
                           f"{', '.join(sorted(pieces)) or 'none'}")
    pa, pb = pieces[a], pieces[b]
    try:
        (xa, ya), (xb, yb) = pa["center_mm"], pb["center_mm"]
        centre = math.hypot(float(xb) - float(xa), float(yb) - float(ya))
        gap = _gap_mm(state, a, b)
        if gap is None:
            gap = centre - float(pa.get("radius_mm", 0.0)) - float(pb.get("radius_mm", 0.0))
    except (KeyError, TypeError, ValueError) as exc:
        raise ApiError(409, "bad_state", f"the stored position cannot be measured: {exc}") from None
    return {"a": a, "b": b, "center_distance_mm": round(centre, 2), "gap_mm": round(gap, 2)}


def _gap_mm(state: dict[str, Any], a: str, b: str) -> float | None:
    """The geometry layer's gap (tilt-aware footprints) when the document rebuilds into a scene."""
    from geometry import tiddlywinks as tw
    from geometry.records import scene_from_document
    from geometry.types import GeometryError

    try:
        scene = scene_from_document(state)
    except (GeometryError, ValueError, TypeError, KeyError):
        return None
    winks = {w.wink_id: w for w in scene.winks}
    return float(tw.gap_mm(winks[a], winks[b]))


def _state_or_409(game: dict[str, Any]) -> dict[str, Any]:
    if not game["state"]:
        raise ApiError(409, "no_state", f"game {game['id']!r} has no analysed frame yet")
    return game["state"]


__all__ = ["COLORS", "router"]
