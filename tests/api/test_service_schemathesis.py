"""Property-based run of schemathesis over the service's OpenAPI spec: no input makes a 500.

Bounded: a fixed number of examples per operation, no deadline (the suite shares slow CI machines).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

schemathesis = pytest.importorskip("schemathesis", reason="schemathesis is not installed (dev extra)")
from hypothesis import HealthCheck, settings

from api import live
from api.app import create_app
from api.marbles_matches import new_match_state

sys.path.insert(0, str(Path(__file__).resolve().parent))
from service_fakes import AUTH, FakePipeline, service_settings

MAX_EXAMPLES = 25


def _seeded_app():
    """The app on a database that already holds a game with an analysed position and a calibration, so the
    generated requests reach past the 404s too."""
    import tempfile

    from service_fakes import fake_document, table_image

    from api.storage import Storage

    db = Path(tempfile.mkdtemp(prefix="tableref-schemathesis-")) / "s.sqlite"
    storage = Storage(db)
    cal = storage.add_calibration("corners", {"source": "corners"})
    game = storage.add_game(game="tiddlywinks", game_type="pairs", players={"blue": "Ann"}, calibration_id=None)
    doc = fake_document(table_image())
    storage.record_analysis(game["id"], doc, doc["rulings"], 0)
    match = storage.add_match("marbles", new_match_state("individual", ["Ann", "Bob"]))
    storage.close()
    return create_app(service_settings(db), pipeline=FakePipeline()), {"game_id": game["id"],
                                                                        "calibration_id": cal["id"],
                                                                        "match_id": match["id"]}


def _no_source(spec: dict) -> None:
    raise live.SourceError(f"sources are disabled in this test: {spec!r}")


APP, SEEDED = _seeded_app()
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_no_input_makes_a_server_error(case, monkeypatch) -> None:
    # Attached sources must not reach out to whatever host or device the generator invents.
    monkeypatch.setattr(live, "open_source", _no_source)
    if case.path.endswith("/feed.mjpg"):
        case.query = {**(case.query or {}), "max_frames": 1}  # an endless stream would never return
    generated = dict(case.path_parameters or {})
    for path_parameters in (generated, {k: SEEDED.get(k, v) for k, v in generated.items()}):
        case.path_parameters = path_parameters
        for headers in ({}, AUTH):
            response = case.call(headers=headers)
            assert response.status_code < 500, (f"{case.method} {case.formatted_path} -> {response.status_code}: "
                                                f"{response.text[:500]}")
        if not generated:
            break
