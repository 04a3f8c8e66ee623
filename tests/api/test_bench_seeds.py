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


def _wink(wink_id: str, x_mm: float, above: tuple[str, ...] = (), conf: dict[str, float] | None = None):
    from vision.types import WinkMeasurement
    return WinkMeasurement(wink_id=wink_id, color="red", size="small", center_mm=(x_mm, 0.0), radius_mm=8.0,
                           sigma_mm=0.2, above=above, order_confidence=conf or {})


def test_the_bench_says_why_each_squop_was_missed():
    # five truth squops in one row of winks, 10 mm apart: each missed for another reason, one right
    xs = {f"red-S{i}": 10.0 * i for i in range(1, 9)}
    truth = {"pieces": [{"id": k, "color": "red", "size": "small", "center_mm": [x, 0.0], "potted": False}
                        for k, x in xs.items()],
             "squops": [["red-S1", "red-S2"], ["red-S3", "red-S4"], ["red-S5", "red-S6"], ["red-S7", "red-S8"],
                        ["red-S2", "red-S3"]]}
    found = [
        _wink("a1", xs["red-S1"], ("a2",), {"a2": 0.95}),  # right
        _wink("a2", xs["red-S2"], (), {"a1": 0.95}),
        _wink("a3", xs["red-S3"], (), {"a4": 0.6}),  # flagged undecided (reported the other way, at 0.6)
        _wink("a4", xs["red-S4"], ("a3",), {"a3": 0.6}),
        _wink("a5", xs["red-S5"], (), {"a6": 0.9}),  # decided the wrong way round
        _wink("a6", xs["red-S6"], ("a5",), {"a5": 0.9}),
        _wink("a7", xs["red-S7"]),  # no order reported; red-S8 not found at all
    ]
    # red-S2 over red-S3: both found, no order reported
    t = bench.Tally()
    bench.score_image(truth, found, t, "hd", "img", None)
    assert (t.squop_tp, t.squop_fp, t.squop_fn) == (1, 1, 4)
    assert (t.squop_fn_wink_missed, t.squop_fn_flagged, t.squop_fn_wrong, t.squop_fn_unordered) == (1, 1, 1, 1)
    assert (t.squop_fp_reversed, t.squop_fp_invented) == (1, 0)
    assert "img: missed squop red-S3 over red-S4 (flagged undecided)" in t.failures
    assert "img: missed squop red-S5 over red-S6 (decided the other way round)" in t.failures
    assert "img: missed squop red-S7 over red-S8 (a wink not found)" in t.failures


def test_a_bench_directory_that_does_not_exist_is_a_named_error(tmp_path: Path, capsys):
    """`--show-failures 40` once made "40" the directory, and the Tantrix bench skipped it without a word."""
    from api.cli import main
    missing = tmp_path / "40"
    for game in ("tantrix", "tiddlywinks", "marbles"):
        assert main(["bench", "--game", game, "--fresh", "0", str(missing)]) == 2
        assert f"no such directory of images to bench: {missing}" in capsys.readouterr().err
