"""``tableref judge`` end to end on every bundled scene, on bad input, and the published JSON Schemas."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from api.cli import main
from api.schemas import SCHEMA_DIR, JudgeOutput, json_schemas

ROOT = Path(__file__).resolve().parents[2]
SCENES = sorted((ROOT / "sample_images" / "scenes").glob("*.json"))
CLAUSE = re.compile(r"^TW (\d+(\([a-z]+\))*|\d+\([a-z]\)\([ivx]+\))$")


def run(capsys, *argv):
    code = main(["judge", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_there_are_enough_bundled_scenes():
    assert 6 <= len(SCENES) <= 10


@pytest.mark.parametrize("path", SCENES, ids=lambda p: p.stem)
def test_judge_bundled_scene(capsys, path):
    code, out, err = run(capsys, path)
    assert code == 0, err
    doc = json.loads(out)
    JudgeOutput.model_validate(doc)
    assert doc["rulings"], "every scene yields at least one ruling"
    for r in doc["rulings"]:
        assert CLAUSE.match(r["rule"]), r["rule"]
        assert r["explanation"]
    kind = json.loads(path.read_text()).get("kind", "position")
    assert ("squidge_off" in doc) == (kind == "squidge-off")


EXPECTED = {
    "squidge_off_near_tie": ("TW 5(a)", "too_close_to_call", None),
    "squidge_off_clear_winner": ("TW 5(a)", "winner", None),
    "pile_of_three": ("TW 1(a)(vi)", "pile", None),
    "cyclic_squop_game_end": ("TW 6(b)", "game_ceases", None),
    "out_of_bounds_replacement": ("TW 7(a)", "replace_at", (881.4, -57.06)),
    "under_pot_base": ("TW 7(b)", "move", (26.19, 6.55)),
    "pot_out_close_pair": ("TW 8", "move", (204.21, 20.57)),
    "end_of_time_tiddlies": ("TW 10(b)", "score", None),
    "free_turn_trigger": ("TW 11(a)", "free_turns", None),
}


@pytest.mark.parametrize("stem", sorted(EXPECTED))
def test_bundled_scene_makes_its_point(capsys, stem):
    rule, decision, target = EXPECTED[stem]
    code, out, _ = run(capsys, ROOT / "sample_images" / "scenes" / f"{stem}.json", "--pretty")
    assert code == 0 and out.startswith("{\n  ")
    hits = [r for r in json.loads(out)["rulings"] if r["rule"] == rule and r["decision"] == decision]
    assert hits
    if target is not None:
        assert hits[0]["target_mm"] == pytest.approx(target, abs=0.01)


def test_squidge_off_scene_verdict(capsys):
    _, out, _ = run(capsys, ROOT / "sample_images" / "scenes" / "squidge_off_clear_winner.json")
    verdict = json.loads(out)["squidge_off"]
    assert verdict["winner"] == "red"
    assert [r["color"] for r in verdict["ranking"]] == ["red", "yellow", "green", "blue"]


@pytest.mark.parametrize(
    "content, field",
    [
        (
            '{"pieces": [{"id": "a", "color": "purple", "size": "large", "center_mm": [0, 0]}]}',
            "pieces[0].color",
        ),
        (
            '{"pieces": [{"id": "a", "color": "red", "size": "large", "center_mm": [0]}]}',
            "pieces[0].center_mm",
        ),
        (
            '{"pieces": [{"id": "a", "color": "red", "size": "large", "center_mm": [0, 0], "tilt": 3}]}',
            "pieces[0].tilt",
        ),
        ('{"pieces": [], "eps_mm": -1}', "eps_mm"),
        ('{"pieces": [], "kind": "replay"}', "kind"),
        ('{"pot": {}}', "pieces"),
        (
            (
                '{"pieces": [{"id": "a", "color": "red", "size": "large", "center_mm": [0, 0]},'
                ' {"id": "a", "color": "red", "size": "small", "center_mm": [50, 0]}]}'
            ),
            "duplicate",
        ),
        (
            '{"pieces": [{"id": "a", "color": "red", "size": "large", "center_mm": [0, 0], "above": ["zz"]}]}',
            "unknown piece",
        ),
        (
            (
                '{"pieces": [{"id": "a", "color": "red", "size": "large", "center_mm": [0, 0]},'
                ' {"id": "b", "color": "red", "size": "small", "center_mm": [50, 0]}], "kind": "squidge-off"}'
            ),
            "one wink per colour",
        ),
        ("[1, 2]", "JSON object"),
        ("{not json", "not valid JSON"),
    ],
)
def test_bad_scene_is_a_clear_error(tmp_path, capsys, content, field):
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, out, err = run(capsys, path)
    assert code == 2 and out == ""
    assert err.startswith("tableref: error:") and field in err and "Traceback" not in err


def test_missing_file_is_a_clear_error(tmp_path, capsys):
    code, _, err = run(capsys, tmp_path / "nope.json")
    assert code == 2 and "nope.json" in err


def test_json_schema_files_are_up_to_date():
    """Regenerate with ``python -m api.schemas`` when the wire models change."""
    for name, schema in json_schemas().items():
        on_disk = json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))
        assert on_disk == json.loads(json.dumps(schema)), f"{name} is stale: run python -m api.schemas"
