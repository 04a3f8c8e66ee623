"""Imports point down the layer table of ARCHITECTURE.md; nothing imports api."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# ARCHITECTURE.md "Layers": package -> our packages it may import.
ALLOWED: dict[str, set[str]] = {
    "geometry": set(),
    "calibration": {"geometry"},
    "vision": {"geometry", "calibration"},
    "adjudicator": {"geometry"},
    "simulation": {"geometry", "calibration"},
    "api": {"geometry", "calibration", "vision", "adjudicator", "simulation"},
}
OURS = set(ALLOWED)


def imported_packages(tree: ast.AST) -> list[tuple[int, str]]:
    """Top-level names of absolute imports anywhere in the module (also inside functions), with line numbers."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name.split(".")[0]) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module.split(".")[0]))
    return out


def violations(package: str, root: Path = ROOT) -> list[str]:
    bad = []
    for path in sorted((root / package).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for lineno, name in imported_packages(tree):
            if name in OURS and name != package and name not in ALLOWED[package]:
                bad.append(f"{path.relative_to(root)}:{lineno} imports {name}")
    return bad


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_layers(package):
    assert violations(package) == []


def test_checker_catches_an_upward_import(tmp_path):
    (tmp_path / "geometry").mkdir()
    (tmp_path / "geometry" / "x.py").write_text("def f():\n    from adjudicator.types import Ruling\n")
    (tmp_path / "adjudicator").mkdir()
    (tmp_path / "adjudicator" / "y.py").write_text(
        "import api.cli\nimport vision\nfrom geometry import types\n"
    )
    assert violations("geometry", tmp_path) == ["geometry/x.py:2 imports adjudicator"]
    assert violations("adjudicator", tmp_path) == [
        "adjudicator/y.py:1 imports api",
        "adjudicator/y.py:2 imports vision",
    ]
