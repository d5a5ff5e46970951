"""``gradsum demo``: runs (subprocess and in-process), prints its checks, writes its files,
is deterministic and degrades without the optional extras (the tour: tests/docs/test_readme.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gradsum
from gradsum import demo
from gradsum.__main__ import main as cli

ROOT = Path(__file__).resolve().parents[2]
EQUIV = "accumulated gradient == full-batch gradient: max abs difference"
STALE = "StaleGradientError: optimizer step 2: the .grad of '0.weight'"
SMALL = ["--steps", "5", "--no-plots"]


def check_output(out: str, folder: Path, cwd: Path | None = None) -> None:
    """What every run prints and writes; ``cwd``: the demo's current directory."""
    assert EQUIV in out
    diff = float(out.split(EQUIV)[1].split()[0])
    assert diff < 1e-6
    assert STALE in out
    assert "Fix: call optimizer.zero_grad() after optimizer.step()" in out
    assert "same as the trained model" in out
    assert "all checks passed" in out
    shown = os.path.relpath(folder, cwd) if cwd else demo._shown(str(folder.resolve()))
    assert f"output: {shown}\n" in out
    assert "loss (last 10%)" in out  # the results table says what its loss column is
    assert "loss (last 10%): the mean of the steps' losses over the last 1 of 5 steps" in out
    files = {p.name for p in folder.iterdir()}
    assert {"loss_curves.csv", "model_graph.dot", "summary.json"} <= files
    assert "model.pt" in files
    assert "loss_curves.png" not in files and "model_graph.svg" not in files  # --no-plots
    assert (folder / "model_graph.dot").read_text().startswith("digraph")
    summary = json.loads((folder / "summary.json").read_text())
    strict_run = summary["runs"][0]
    assert summary["reload_accuracy"] == strict_run["test_accuracy"]
    assert [r["steps"] for r in summary["runs"]] == [5, 5, 5]


def test_demo_subprocess(tmp_path):
    folder = tmp_path / "out"
    env = {**os.environ, "GRADSUM_STRICT": ""}
    proc = subprocess.run([sys.executable, "-m", "gradsum", "demo", *SMALL, "--out", str(folder)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    check_output(proc.stdout, folder, cwd=tmp_path)
    # no machine paths: the folder below the current directory and the call sites are relative
    assert "output: out\n" in proc.stdout and "files in out: " in proc.stdout
    assert str(tmp_path) not in proc.stdout and str(ROOT) not in proc.stdout
    assert "backward #" in proc.stdout and " at gradsum/demo.py:" in proc.stdout
    assert "\x1b[" not in proc.stdout.split("[1]")[1].split("results")[0]  # no bar when piped


def test_demo_in_process(tmp_path, capsys):
    folder = tmp_path / "out"
    state = gradsum.get_rng_state()
    assert cli(["demo", *SMALL, "--out", str(folder)]) == 0
    check_output(capsys.readouterr().out, folder)
    assert gradsum.get_rng_state() == state  # the demo leaves the global RNG alone


def test_demo_result_and_determinism(tmp_path, capsys):
    a = demo.run_demo(steps=6, out=str(tmp_path / "a"), seed=3, plots=False)
    b = demo.run_demo(steps=6, out=str(tmp_path / "b"), seed=3, plots=False)
    c = demo.run_demo(steps=6, out=str(tmp_path / "c"), seed=4, plots=False)
    capsys.readouterr()
    assert a.ok and b.ok and c.ok
    assert [r.losses for r in a.runs] == [r.losses for r in b.runs]
    assert a.max_abs_diff == b.max_abs_diff
    assert a.stale_error.split(" (")[0] == b.stale_error.split(" (")[0]  # backward #N differs
    assert [r.losses for r in a.runs] != [r.losses for r in c.runs]
    strict_run, off, forgotten = a.runs
    assert strict_run.losses == off.losses  # strict mode changes no number
    assert forgotten.losses[0] == off.losses[0] and forgotten.losses[1:] != off.losses[1:]
    assert a.naive_abs_diff > 100 * a.max_abs_diff  # 64 = 22+21+21: mean of means is off
    assert a.reload_accuracy == strict_run.accuracy
    lines = (tmp_path / "a" / "loss_curves.csv").read_text().splitlines()
    assert lines[0] == "step,loss_zero_grad,loss_forgotten_zero_grad" and len(lines) == 7


def test_demo_plots(tmp_path, capsys):
    pytest.importorskip("matplotlib", reason="matplotlib (the demo extra) is not installed")
    res = demo.run_demo(steps=4, out=str(tmp_path), plots=True)
    out = capsys.readouterr().out
    assert res.ok
    png = tmp_path / "loss_curves.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "loss curves: " in out
    assert ("model_graph.svg" in res.files) == (tmp_path / "model_graph.svg").exists()


def test_demo_without_extras(tmp_path, capsys, monkeypatch):
    """No rich, no matplotlib: plain text and notes instead of tables and pictures."""
    for name in ("rich", "rich.console", "rich.progress", "rich.table", "matplotlib",
                 "matplotlib.figure"):
        monkeypatch.setitem(sys.modules, name, None)
    res = demo.run_demo(steps=4, out=str(tmp_path), plots=True)
    out = capsys.readouterr().out
    assert res.ok
    assert "loss_curves.png: skipped (matplotlib is not installed" in out
    assert "\nresults\nrun " in out and "┏" not in out
    assert not (tmp_path / "loss_curves.png").exists()


def test_demo_progress_plain_lines(tmp_path, capsys):
    """Not a terminal: about four progress lines per run, never a line per step."""
    demo.run_demo(steps=40, out=str(tmp_path), plots=False)
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines() if "step " in ln and "/40" in ln]
    assert len(lines) == 4 * 3


def test_demo_help_documents_every_option(capsys):
    with pytest.raises(SystemExit) as info:
        cli(["demo", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for opt in ("--steps", "--micro-batches", "--batch-size", "--lr", "--out", "--seed",
                "--no-plots"):
        assert opt in out
    assert "gradsum-demo-out" in out


def test_demo_rejects_bad_options(tmp_path, capsys):
    """Usage errors exit 2 (the cases one by one: tests/cli/test_cli.py), also for arguments that
    did not come through the demo's parser."""
    with pytest.raises(SystemExit) as info:
        cli(["demo", "--steps", "0", "--out", str(tmp_path)])
    assert info.value.code == 2
    assert cli(["demo", "--micro-batches", "9", "--batch-size", "4", "--out",
                str(tmp_path)]) == 2
    args = demo.build_arg_parser().parse_args(["--out", str(tmp_path)])
    args.lr = float("nan")
    assert demo.run(args) == 2
    err = capsys.readouterr().err
    assert "gradsum demo: error: argument --steps: must be at least 1, got 0" in err
    assert "gradsum demo: error: argument --lr: must be a finite number above 0, got nan" in err


def test_shown_paths():
    here = os.getcwd()
    assert demo._shown(os.path.join(here, "gradsum-demo-out")) == "gradsum-demo-out"
    assert demo._shown(here) == "."
    outside = os.path.join(os.path.dirname(here), "elsewhere")
    assert demo._shown(outside) == outside


def test_load_digits():
    from gradsum.datasets import load_digits

    x, y = load_digits()
    assert tuple(x.shape) == (1797, 64) and x.dtype == gradsum.float32
    assert tuple(y.shape) == (1797,) and y.dtype == gradsum.int64
    assert sorted(set(y.tolist())) == list(range(10))
    raw, _ = load_digits(flatten=False, scale=False)
    assert tuple(raw.shape) == (1797, 8, 8) and raw.dtype == gradsum.uint8
    assert int(raw.max()) == 16 and int(raw.sum()) == round((x * 16).sum().item())
    data = Path(gradsum.__file__).parent / "data"
    assert "CC BY 4.0" in (data / "LICENSE-digits.txt").read_text()
    assert (data / "digits.npz").stat().st_size < 64_000
