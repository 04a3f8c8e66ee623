"""The tiddlywinks bench's image sets: the development set, and held-out sets drawn from another seed."""

from __future__ import annotations

from pathlib import Path

from api.commands import bench


def test_a_held_out_seed_draws_fresh_scenes_in_the_same_proportions():
    dev = bench.fresh_plan()
    held = bench.fresh_plan(7070)
    assert [(wh, share) for wh, _, share in held] == [(wh, share) for wh, _, share in dev]
    assert {s for _, s, _ in held} == {7070, 7071, 7072}
    assert not {s for _, s, _ in held} & {s for _, s, _ in dev}


def test_a_held_out_bench_leaves_out_the_samples(tmp_path: Path, monkeypatch, capsys):
    # no renders: the cache already holds the held-out files the plan asks for
    seen: list[list[Path]] = []
    for (w, h), s, _ in bench.fresh_plan(500):
        d = tmp_path / f"tiddlywinks_{w}x{h}_seed{s}"
        d.mkdir()
        for i in range(2):
            (d / f"tw_{s}_{i:03d}_play.jpg").write_bytes(b"")
    monkeypatch.setitem(bench.BENCHES, "tiddlywinks",
                        (lambda paths, log, verbose=False: seen.append(paths) or {}, lambda r, out, show_failures: True))
    from api.cli import main
    assert main(["bench", "--game", "tiddlywinks", "--seed", "500", "--fresh", "3", "--cache", str(tmp_path)]) == 0
    (paths,) = seen
    assert len(paths) == 3 and all("seed50" in p.parent.name for p in paths)
    assert "held-out seed 500" in capsys.readouterr().out
