"""Live views of a game: the annotated MJPEG feed, a snapshot, and the WebSocket of rulings."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator
from functools import lru_cache
from typing import Annotated, Any

import cv2
import numpy as np
from fastapi import APIRouter, Query, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import Response, StreamingResponse

from api.deps import GamesDep, ReadAuth, SettingsDep, StorageDep
from api.pipeline import encode_jpeg
from api.routes.errors import ApiError
from api.routes.games import game_or_404
from api.routes.models import ErrorOut

router = APIRouter(prefix="/v1/games", tags=["live"])
_BOUNDARY = "frame"
_ERRORS: dict[int | str, dict[str, Any]] = {code: {"model": ErrorOut} for code in (401, 404, 422)}


@lru_cache
def waiting_jpeg() -> bytes:
    """The picture shown before a game's first frame."""
    img = np.full((360, 640, 3), 40, np.uint8)
    cv2.putText(img, "waiting for frames...", (150, 190), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (220, 220, 220), 2)
    return encode_jpeg(img)


def _part(jpeg: bytes) -> bytes:
    return (f"--{_BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: {len(jpeg)}\r\n\r\n".encode()
            + jpeg + b"\r\n")


@router.get("/{game_id}/feed.mjpg", responses={200: {"content": {f"multipart/x-mixed-replace; boundary={_BOUNDARY}": {}},
                                                     "description": "MJPEG stream"}, **_ERRORS},
            response_class=StreamingResponse, dependencies=[ReadAuth], summary="Annotated MJPEG feed")
async def stream_feed(game_id: str, request: Request, storage: StorageDep, games: GamesDep, settings: SettingsDep,
                      max_frames: Annotated[int | None, Query(ge=1, le=1_000_000,
                                                              description="End the stream after this many "
                                                              "frames.")] = None) -> StreamingResponse:
    """The game's frames with the overlay drawn (outlines by colour, squops, piles, out-of-bounds winks)."""
    game_or_404(storage, game_id)
    box = games.live(game_id).feed
    period_s = 1.0 / settings.feed_fps

    async def frames() -> AsyncIterator[bytes]:
        sent, last = 0, -1
        version, jpeg = box.get()
        if jpeg is None:
            yield _part(waiting_jpeg())
            sent += 1
        while max_frames is None or sent < max_frames:
            version, jpeg = box.get()
            if jpeg is not None and version != last:
                last = version
                yield _part(jpeg)
                sent += 1
                continue
            if await request.is_disconnected():
                return
            await asyncio.sleep(period_s)

    return StreamingResponse(frames(), media_type=f"multipart/x-mixed-replace; boundary={_BOUNDARY}",
                             headers={"Cache-Control": "no-store"})


@router.get("/{game_id}/snapshot.jpg", responses={200: {"content": {"image/jpeg": {}}}, **_ERRORS},
            response_class=Response, dependencies=[ReadAuth], summary="Latest annotated frame")
def read_snapshot(game_id: str, storage: StorageDep, games: GamesDep) -> Response:
    game_or_404(storage, game_id)
    _, jpeg = games.live(game_id).feed.get()
    if jpeg is None:
        raise ApiError(404, "no_frame", f"game {game_id!r} has no frame yet")
    return Response(jpeg, media_type="image/jpeg", headers={"Cache-Control": "no-store"})


@router.websocket("/{game_id}/ws")
async def stream_rulings(websocket: WebSocket, game_id: str, after: int = 0, token: str | None = None) -> None:
    """Rulings as they happen: first the stored ones with ``seq > after``, then live messages
    ``{"type": "ruling" | "analysis" | "status", ...}``. Close codes: 4401 token needed, 4404 unknown game."""
    app = websocket.app
    if app.state.settings.require_token_for_reads and not (
            token and secrets.compare_digest(token.encode(), app.state.token.encode())):
        await websocket.close(code=4401, reason="token required")
        return
    storage, games = app.state.storage, app.state.games
    if storage.get_game(game_id) is None:
        await websocket.close(code=4404, reason=f"no game with id {game_id!r}")
        return
    await websocket.accept()
    g = games.live(game_id)
    sub = g.hub.subscribe()
    last_seq = max(0, after)
    receiver = asyncio.create_task(websocket.receive())
    try:
        for item in storage.list_rulings(game_id, last_seq, 10_000):
            await websocket.send_json({"type": "ruling", **item})
            last_seq = item["seq"]
        await websocket.send_json({"type": "status", "status": games.status(game_id)})
        while True:
            getter = asyncio.create_task(sub[1].get())
            done, _ = await asyncio.wait({getter, receiver}, return_when=asyncio.FIRST_COMPLETED)
            if receiver in done:
                getter.cancel()
                msg = receiver.result()
                if msg.get("type") == "websocket.disconnect":
                    return
                receiver = asyncio.create_task(websocket.receive())  # client pings are ignored
                continue
            message = getter.result()
            if message.get("type") == "ruling":
                if message["seq"] <= last_seq:
                    continue
                last_seq = message["seq"]
            await websocket.send_json(message)
    except (WebSocketDisconnect, RuntimeError):
        return
    finally:
        receiver.cancel()
        g.hub.unsubscribe(sub)
