"""Fixtures of the referee-service tests: an app on a temporary SQLite file with a fake pipeline."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.app import create_app

sys.path.insert(0, str(Path(__file__).resolve().parent))  # service_fakes, whatever pytest's import mode

from service_fakes import FakePipeline, service_settings


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
