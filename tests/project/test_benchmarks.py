"""The benchmark scripts' workloads run in gradsum (a smoke test: their timings are not
asserted, and torch is not needed, except by the op sweep's test, which skips without it).
Each builder takes the library as an argument, so the same code runs in torch when the
scripts compare the two."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import gradsum

BENCH = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                                     os.pardir, "benchmarks"))
sys.path.insert(0, BENCH)

import bench_core  # noqa: E402
import bench_optim  # noqa: E402
import bench_train  # noqa: E402


def _one_step(parts: tuple[list[gradsum.Tensor], object]) -> float:
    leaves, forward = parts
    loss = forward()  # type: ignore[operator]
    loss.backward()
    assert all(t.grad is not None and np.isfinite(t.grad.numpy()).all() for t in leaves)
    return loss.item()


def test_core_workloads_run() -> None:
    assert np.isfinite(_one_step(bench_core.chain_parts(gradsum, n_ops=30)))
    loss = _one_step(bench_core.mlp_parts(gradsum, [64, 128, 128, 10], 32))
    assert 1.5 < loss < 3.5  # (cross-entropy of 10 classes at initialisation, about log 10)


@pytest.mark.parametrize("kind", ["small", "lm"])
def test_train_workloads_run(kind: str) -> None:
    parts = (bench_train.lm_parts(gradsum) if kind == "lm"
             else bench_train.mlp_parts(gradsum, [64, 128, 128, 10], 32))
    assert np.isfinite(_one_step(parts))
    for opt in ("sgd", "adamw"):
        run = bench_train.step_program(gradsum, kind, opt)
        run()
        run()


@pytest.mark.parametrize(("name", "kw"), bench_optim.CASES)
def test_optimizer_steps_run(name: str, kw: dict[str, object]) -> None:
    step = bench_optim.step_program(gradsum, name, kw)
    step()
    step()


def test_ab_trees_runs_two_trees(tmp_path: object) -> None:
    src = os.path.join(os.path.dirname(BENCH), "src")
    out = subprocess.run(
        [sys.executable, os.path.join(BENCH, "ab_trees.py"), src, src, "--steps", "40"],
        capture_output=True, text=True, timeout=300, check=True,
    ).stdout
    assert out.count("mlp ") == 2 and "(+0.0%)" in out


def test_op_sweep_prints_ratios_and_geometric_mean() -> None:
    pytest.importorskip("torch", reason="the op sweep times gradsum against torch: "
                                        "pip install -e .[test]")
    out = subprocess.run(
        [sys.executable, os.path.join(BENCH, "bench_ops.py"), "--quick", "--repeats", "1",
         "--ops", "add,gelu,sum,matmul"],
        capture_output=True, text=True, timeout=300, check=True,
    ).stdout
    assert "| op | elements | gradsum (median) | torch (median) | gradsum/torch |" in out
    for name in ("add", "gelu", "sum", "matmul"):
        row = next(line for line in out.splitlines() if line.startswith(f"| {name} |"))
        ratio = row.split("|")[5].strip()
        assert float(ratio) > 0, row
    assert re.search(r"Geometric mean of gradsum/torch over the 4 entries timed at this size: "
                     r"\*\*\d+\.\d\d\*\*", out), out
