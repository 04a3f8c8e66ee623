"""Ring marbles through the service: one shot from two photos, and matches followed photo by photo with
running scores, eliminations, the next shooter and each photo's annotated picture (``tableref marbles-shot``
is the command-line twin of ``POST /v1/marbles/shot``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import cv2
import numpy as np
from fastapi import APIRouter, File, Form, Response, UploadFile
from pydantic import BaseModel, ConfigDict, Field

from api.deps import PipelineDep, ReadAuth, SettingsDep, StorageDep, WriteAuth
from api.marbles_matches import MatchInputError, MatchOverError, new_match_state, play_shot, set_position, summary
from api.pipeline import Pipeline, encode_jpeg
from api.routes.analysis import calibration_dict
from api.routes.errors import ApiError
from api.routes.models import ErrorOut
from api.routes.uploads import read_image_upload
from api.storage import Storage

router = APIRouter(prefix="/v1/marbles", tags=["marbles"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 404, 409, 413, 415, 422, 503)}
_JPEG: dict[int | str, dict[str, Any]] = {200: {"content": {"image/jpeg": {}}}}
ANNOTATED_MAX_SIDE_PX = 1600  # stored pictures: enough to see every ball, ~0.3 MB a shot
Foul = Literal["fudging", "cabbaging", "blocking"]


class MatchIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["team", "individual", "tie_break"] = Field(
        description="team (MB 9: 49 marbles, first team to 25), individual (MB 11(b),(c)) or tie_break (MB 11(d))")
    players: list[Annotated[str, Field(min_length=1, max_length=100)]] = Field(min_length=2, max_length=64)
    teams: dict[str, str] | None = Field(default=None, description="player -> team, for a team match")
    order: list[str] | None = Field(default=None, description="playing order (default: players; teams alternate)")
    calibration_id: str | None = Field(default=None, max_length=64)


def _owners(text: str | None) -> dict[str, str]:
    """The form's ``TOLLEY_ID=PLAYER,…`` as ``marbles-shot --owner`` reads it."""
    from api.marbles_service import owners_from_args
    try:
        return owners_from_args([item for item in (text or "").split(",") if item.strip()])
    except ValueError as exc:
        raise ApiError(422, "invalid_owner", f"owners are TOLLEY_ID=PLAYER, comma-separated: {exc}") from None


def _analyze(pipeline: Pipeline, frame: np.ndarray, calibration: dict[str, Any] | None) -> dict[str, Any]:
    doc = pipeline.analyze("marbles", frame, calibration)
    if not isinstance(doc.get("pieces"), list):
        raise ApiError(422, "analysis_failed", "the marbles analysis of this photo has no pieces")
    return doc


def _picture(pipeline: Pipeline, frame: np.ndarray, doc: dict[str, Any]) -> bytes:
    img = pipeline.annotate(frame, doc)
    scale = ANNOTATED_MAX_SIDE_PX / max(img.shape[:2])
    if scale < 1.0:
        img = cv2.resize(img, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    return encode_jpeg(img, quality=85)


def _match_or_404(storage: Storage, match_id: str) -> dict[str, Any]:
    m = storage.get_match(match_id)
    if m is None:
        raise ApiError(404, "match_not_found", f"no marbles match with id {match_id!r}")
    return m


def _public(m: dict[str, Any]) -> dict[str, Any]:
    return {"id": m["id"], "created_at": m["created_at"], "updated_at": m["updated_at"], "game": m["game"],
            "summary": summary(m["state"])}


def _advance(storage: Storage, match_id: str, step, kind: str, image: bytes | None) -> dict[str, Any]:
    def apply(state: dict[str, Any]):
        new, record = step(state)
        return new, kind, record, image
    try:
        done = storage.advance_match(match_id, apply)
    except MatchOverError as exc:
        raise ApiError(409, "match_over", str(exc)) from None
    except MatchInputError as exc:
        raise ApiError(422, "invalid_shot", str(exc)) from None
    except KeyError:
        raise ApiError(404, "match_not_found", f"no marbles match with id {match_id!r}") from None
    return {"seq": done["seq"], "kind": kind, **done["record"], "summary": summary(done["state"]),
            "annotated_url": f"/v1/marbles/matches/{match_id}/records/{done['seq']}/annotated.jpg"}


@router.post("/shot", responses=_ERRORS, dependencies=[ReadAuth], summary="Score one shot from two photos")
def score_shot(
    before: Annotated[UploadFile, File(description="The ring before the shot.")],
    after: Annotated[UploadFile, File(description="The ring after the shot.")],
    settings: SettingsDep, storage: StorageDep, pipeline: PipelineDep,
    shooter: Annotated[str, Form(max_length=100)] = "shooter",
    owners: Annotated[str | None, Form(max_length=2000, description="TOLLEY_ID=PLAYER,… for the tolleys "
                                       "resting on the ring in the before photo")] = None,
    shooter_tolley: Annotated[str | None, Form(max_length=64)] = None,
    foul: Annotated[Foul | None, Form()] = None,
    calibration_id: Annotated[str | None, Form(max_length=64)] = None,
) -> dict[str, Any]:
    """MB 5(d) positions 1-4, eliminations, fouls and the win for one shot, as ``tableref marbles-shot``:
    ``shot`` (marbles off, tolleys knocked off or stayed), ``rulings``, ``scores``, ``before_counts`` and
    ``after_counts``. Without a match an individual match of the shooter and the owners is assumed."""
    from api.marbles_service import MarblesInputError, judge_marbles_shot
    calibration = calibration_dict(storage, calibration_id)
    docs = [_analyze(pipeline, read_image_upload(f, settings, what=name), calibration)
            for f, name in ((before, "before photo"), (after, "after photo"))]
    try:
        result = judge_marbles_shot(docs[0], docs[1], shooter=shooter, owners=_owners(owners),
                                    shooter_tolley=shooter_tolley, foul=foul)
    except (MarblesInputError, ValueError) as exc:
        raise ApiError(422, "invalid_shot", str(exc)) from None
    return {**result, "before_counts": docs[0].get("counts"), "after_counts": docs[1].get("counts")}


@router.post("/drop", responses=_ERRORS, dependencies=[ReadAuth], summary="Who plays first: the drop")
def judge_drop(
    image: Annotated[UploadFile, File(description="The ring after the captains dropped their tolleys.")],
    settings: SettingsDep, storage: StorageDep,
    owners: Annotated[str | None, Form(max_length=2000, description="TOLLEY_ID=PLAYER,…")] = None,
    individual: Annotated[bool, Form(description="an individual match: order by distance (MB I-3)")] = False,
    calibration_id: Annotated[str | None, Form(max_length=64)] = None,
) -> dict[str, Any]:
    """MB 9(f): the line scribed in the sand (``scribed_line``), each tolley's perpendicular distance to it
    with its uncertainty (``drops``, closest first) and the ruling: who chooses, or 'too close to call' and a
    re-drop of the tied. The same as ``tableref marbles-drop``."""
    from api.pipeline import PipelineUnavailable, jsonable, pipeline_error
    try:
        from api.marbles_drop import MarblesDropError, judge_drop_photo
    except ImportError as exc:
        raise PipelineUnavailable(f"the marbles vision pipeline is not installed: {exc}") from None
    calibration = calibration_dict(storage, calibration_id)
    frame = read_image_upload(image, settings)
    try:
        camera = None if calibration is None else calibration.get("camera")
        return jsonable(judge_drop_photo(frame, camera, owners=_owners(owners), team_match=not individual))
    except MarblesDropError as exc:
        raise ApiError(422, "invalid_drop", str(exc)) from None
    except ValueError as exc:
        raise pipeline_error(exc) from None


@router.post("/matches", status_code=201, responses=_ERRORS, dependencies=[WriteAuth], summary="Start a match")
def create_match(body: MatchIn, storage: StorageDep) -> dict[str, Any]:
    """A match followed photo by photo: post the set-up photo to ``…/position``, then one photo after each
    shot to ``…/shots``; the service names the tolleys by where they rested and keeps the scores."""
    if body.calibration_id is not None and storage.get_calibration(body.calibration_id) is None:
        raise ApiError(404, "calibration_not_found", f"no calibration with id {body.calibration_id!r}")
    try:
        state = new_match_state(body.kind, body.players, body.teams, body.order, body.calibration_id)
    except MatchInputError as exc:
        raise ApiError(422, "invalid_match", str(exc)) from None
    return _public(storage.add_match("marbles", state))


@router.get("/matches", dependencies=[ReadAuth], summary="List matches")
def list_matches(storage: StorageDep) -> list[dict[str, Any]]:
    return [_public(m) for m in storage.list_matches()]


@router.get("/matches/{match_id}", responses=_ERRORS, dependencies=[ReadAuth], summary="A match and its record")
def read_match(match_id: str, storage: StorageDep) -> dict[str, Any]:
    """The running summary and every photo's record in order (set-up checks, shots, rulings)."""
    m = _match_or_404(storage, match_id)
    return {**_public(m), "records": storage.list_match_records(match_id)}


@router.post("/matches/{match_id}/position", responses=_ERRORS, dependencies=[WriteAuth],
             summary="Photo of the ring before a shot")
def post_position(match_id: str, image: Annotated[UploadFile, File(description="The ring now.")],
                  settings: SettingsDep, storage: StorageDep, pipeline: PipelineDep) -> dict[str, Any]:
    """The ring as it stands (before the first shot: the set-up, checked by MB 9(e) / 11(b) / 11(d))."""
    state = _match_or_404(storage, match_id)["state"]
    frame = read_image_upload(image, settings)
    doc = _analyze(pipeline, frame, calibration_dict(storage, state.get("calibration_id")))
    return _advance(storage, match_id, lambda s: set_position(s, doc), "position", _picture(pipeline, frame, doc))


@router.post("/matches/{match_id}/shots", responses=_ERRORS, dependencies=[WriteAuth],
             summary="Photo after a shot")
def post_shot(
    match_id: str, after: Annotated[UploadFile, File(description="The ring after the shot.")],
    settings: SettingsDep, storage: StorageDep, pipeline: PipelineDep,
    shooter: Annotated[str | None, Form(max_length=100, description="default: the next shooter")] = None,
    foul: Annotated[Foul | None, Form()] = None,
    before: Annotated[UploadFile | None, File(description="the ring before (default: the last photo)")] = None,
) -> dict[str, Any]:
    """Scores the shot against the last photo (or ``before``): the rulings, running scores, eliminations,
    marbles left, the winner and who shoots next (the same player after MB 5(d)4)."""
    state = _match_or_404(storage, match_id)["state"]
    calibration = calibration_dict(storage, state.get("calibration_id"))
    before_doc = None if before is None else _analyze(
        pipeline, read_image_upload(before, settings, what="before photo"), calibration)
    frame = read_image_upload(after, settings, what="after photo")
    doc = _analyze(pipeline, frame, calibration)
    return _advance(storage, match_id, lambda s: play_shot(s, doc, shooter=shooter, foul=foul, before_doc=before_doc),
                    "shot", _picture(pipeline, frame, doc))


@router.get("/matches/{match_id}/records/{seq}/annotated.jpg", responses={**_JPEG, **_ERRORS},
            response_class=Response, dependencies=[ReadAuth], summary="A photo of the match, annotated")
def read_record_picture(match_id: str, seq: int, storage: StorageDep) -> Response:
    _match_or_404(storage, match_id)
    jpeg = storage.match_record_image(match_id, seq)
    if jpeg is None:
        raise ApiError(404, "no_picture", f"match {match_id!r} has no picture for record {seq}")
    return Response(jpeg, media_type="image/jpeg", headers={"Cache-Control": "private, max-age=3600"})
