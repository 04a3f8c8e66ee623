"""Fixtures of the referee-service tests: an app on a temporary SQLite file with a fake pipeline."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.settings import Settings

sys.path.insert(0, str(Path(__file__).resolve().parent))  # service_fakes, whatever pytest's import mode

from service_fakes import TOKEN, FakePipeline  # noqa: E402


def service_settings(db_path: Path, **overrides: object) -> Settings:
    base = dict(token=TOKEN, db_path=db_path, still_frames=2, reconnect_initial_s=0.05, reconnect_max_s=0.2,
                feed_fps=50.0)
    base.update(overrides)
    return Settings(**base)


@pytest.fixture
def fake_pipeline() -> FakePipeline:
    return FakePipeline()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "service.sqlite"


@pytest.fixture
def client(db_path: Path, fake_pipeline: FakePipeline) -> Iterator[TestClient]:
    app = create_app(service_settings(db_path), pipeline=fake_pipeline)
    with TestClient(app) as c:
        yield c
