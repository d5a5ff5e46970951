"""The ports suite: real-style PyTorch training programs (``ports/``) run unchanged under torch
and under gradsum (``gradsum run``) from the same initial weights, per-step losses compared
(float32 programs to 1e-5 relative, float64 ones to 1e-10). Torch writes the initial weights
with ``torch.save``; gradsum reads that file with its own ``torch.load``."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="the ports suite compares against PyTorch")

PORTS = Path(__file__).resolve().parents[2] / "ports"
_spec = importlib.util.spec_from_file_location("ports_harness", PORTS / "harness.py")
assert _spec is not None and _spec.loader is not None
harness = importlib.util.module_from_spec(_spec)
sys.modules["ports_harness"] = harness  # (dataclasses look their module up by name)
_spec.loader.exec_module(harness)

#: what every program does, as the public scripts do (a regular expression each)
IDIOMS = {
    "device selection": r"torch\.(cuda|accelerator)\.is_available\(\)",
    "seeding": r"torch\.manual_seed\(.*\)\s+torch\.cuda\.manual_seed_all\(",
    "cudnn.benchmark": r"torch\.backends\.cudnn\.benchmark = True",
    "argparse": r"argparse\.ArgumentParser\(",
    ".to(device)": r"\.to\(device\)",
    "initial weights": r"if os\.path\.exists\(\w+\.init\):",
    "state_dict save": r"torch\.save\(\{?[^\n]*state_dict\(\)",
    "whole-model save": r"torch\.save\((model|raw_model|netG|seq), ",
    "whole-model load": r"torch\.load\((?:[^()]|\([^()]*\))*weights_only=False",
    "map_location": r"map_location=device",
    "evaluation mode": r"torch\.(inference_mode|no_grad)\(\)",
    "train/eval": r"\.(train|eval)\(\)",
    "per-step output": r'print\(f"step \{',
}


def test_every_program_is_in_the_suite() -> None:
    scripts = {p.name for p in PORTS.glob("*.py")} - {"harness.py"}
    listed = {p.script for p in harness.PROGRAMS.values()}
    assert scripts == listed
    assert len(harness.PROGRAMS) >= 8


@pytest.mark.parametrize("script", sorted({p.script for p in harness.PROGRAMS.values()}))
def test_programs_use_the_idioms_of_real_scripts(script: str) -> None:
    source = (PORTS / script).read_text()
    missing = [name for name, pattern in IDIOMS.items() if not re.search(pattern, source)]
    assert not missing, f"{script} lacks {missing}"
    assert "torch.randn" not in source and "shuffle=True" not in source  # same data in both


def test_parse_and_compare_detect_differences() -> None:
    values, step_time = harness.parse_output(
        "step 0 loss 1.5 g 2.0\nnoise line\n  wasserstein_d 0.1\neval val 1.25\n"
        "step_time_ms 3.5\n")
    assert values == {"step 0 loss": 1.5, "step 0 g": 2.0, "eval val": 1.25}
    assert step_time == 3.5
    assert harness.compare_values(values, dict(values), 1e-10) == []
    near = {**values, "step 0 loss": 1.5 * (1 + 5e-6)}
    assert harness.compare_values(values, near, 1e-5) == []
    assert harness.compare_values(values, near, 1e-10) != []
    missing = {k: v for k, v in values.items() if k != "eval val"}
    assert harness.compare_values(values, missing, 1e-5) == ["eval val: missing under gradsum"]


def test_harness_docstring_examples() -> None:
    import doctest

    result = doctest.testmod(harness)
    assert result.attempted >= 4 and result.failed == 0


def test_warnings_are_read_from_stderr() -> None:
    stderr = ("/site/torch/nn/x.py:12: UserWarning: enable_nested_tensor is True\n"
              "  self.encoder = TransformerEncoder(...)\n"
              "/repo/ports/a.py:3: FutureWarning: `torch.cuda.amp.GradScaler(args...)` is "
              "deprecated at 0x7f00ab\n"
              "Traceback (most recent call last):\n"
              "ValueError: not a warning\n")
    assert harness.warnings_printed(stderr) == {
        "UserWarning: enable_nested_tensor is True",
        "FutureWarning: `torch.cuda.amp.GradScaler(args...)` is deprecated at 0x...",
    }


def test_checkpoint_comparison_detects_differences(tmp_path: Path) -> None:
    state = {"model": {"w": torch.ones(3), "n": torch.tensor([1, 2])}, "step": 3, "lr": 0.5}
    torch.save(state, tmp_path / "a.pt")
    assert harness.compare_checkpoints(tmp_path / "a.pt", tmp_path / "a.pt", 1e-5) == []
    variants = {
        "w": {**state, "model": {**state["model"], "w": torch.ones(3) * 1.01}},
        "dtype": {**state, "model": {**state["model"], "w": torch.ones(3, dtype=torch.float64)}},
        "key": {**state, "model": {"w": torch.ones(3)}},
        "n": {**state, "model": {**state["model"], "n": torch.tensor([1, 3])}},
        "step": {**state, "step": 4},
    }
    for name, variant in variants.items():
        torch.save(variant, tmp_path / f"{name}.pt")
        problems = harness.compare_checkpoints(tmp_path / "a.pt", tmp_path / f"{name}.pt", 1e-5)
        assert len(problems) == 1, (name, problems)
    (tmp_path / "bad.pt").write_bytes(b"not a checkpoint")
    (problem,) = harness.compare_checkpoints(tmp_path / "a.pt", tmp_path / "bad.pt", 1e-5)
    assert problem.startswith("torch.load of gradsum's bad.pt: UnpicklingError")


def test_bench_ports_prints_the_step_time_table() -> None:
    import subprocess

    res = subprocess.run([sys.executable, str(PORTS.parent / "benchmarks" / "bench_ports.py"),
                          "--repeats", "1", "vae"], capture_output=True, text=True, timeout=240)
    assert res.returncode == 0, res.stderr
    rows = [line for line in res.stdout.splitlines() if line.startswith("| vae |")]
    assert len(rows) == 1 and rows[0].endswith("| match |"), res.stdout


def _last_script_line(stderr: str, script: str) -> str:
    frames = re.findall(rf'File "[^"]*{re.escape(script)}", line (\d+)', stderr)
    return frames[-1] if frames else ""


@pytest.mark.parametrize(("script", "args"), [
    ("nanogpt_train.py", ("--device", "cuda", "--compile", "False")),
    ("nanogpt_train.py", ("--device", "cuda:1", "--compile", "False")),
])
def test_asking_for_cuda_fails_as_torchs_cpu_build(script: str, args: tuple[str, ...],
                                                   tmp_path: Path) -> None:
    """A script told to use the GPU stops at the same line, with the same error, under both:
    at ``model.to(device)`` when it starts afresh, at ``torch.load(..., map_location=device)``
    when it resumes from a checkpoint (torch's, written by the first run)."""
    program = harness.Program("cuda_request", script, args=args)
    t = harness.run(program, "torch", tmp_path / "torch_init.pt", tmp_path, timeout=120)
    g = harness.run(program, "gradsum", tmp_path / "gradsum_init.pt", tmp_path, timeout=120)
    assert t.returncode == g.returncode == 1, (t.log(), g.log())
    phrase = "AssertionError: Torch not compiled with CUDA enabled"
    assert t.stderr.splitlines()[-1] == phrase, t.log()
    assert g.stderr.splitlines()[-1].startswith(phrase), g.log()
    assert _last_script_line(t.stderr, script) == _last_script_line(g.stderr, script) != ""
    # resuming: both read torch's file onto the device that is not there
    t = harness.run(program, "torch", tmp_path / "torch_init.pt", tmp_path, timeout=120)
    g = harness.run(program, "gradsum", tmp_path / "torch_init.pt", tmp_path, timeout=120)
    assert t.returncode == g.returncode == 1, (t.log(), g.log())
    phrase = "RuntimeError: Attempting to deserialize object on a CUDA device"
    assert t.stderr.splitlines()[-1].startswith(phrase), t.log()
    assert g.stderr.splitlines()[-1].startswith(phrase), g.log()
    assert _last_script_line(t.stderr, script) == _last_script_line(g.stderr, script) != ""


@pytest.mark.parametrize("name", list(harness.PROGRAMS))
def test_port_matches_torch(name: str, tmp_path: Path) -> None:
    program = harness.PROGRAMS[name]
    c = harness.compare(program, work_dir=tmp_path, timeout=240)
    assert c.torch.returncode == 0, c.torch.log()
    assert c.gradsum.returncode == 0, c.gradsum.log()
    assert len(c.torch.values) >= 5, c.torch.log()
    assert not c.mismatches, "\n".join(c.mismatches[:20])
    # gradsum's final checkpoint, read by the real torch (weights_only=True), is torch's
    assert not c.checkpoint_mismatches, "\n".join(c.checkpoint_mismatches[:20])
    # the same warnings (deprecations, a GradScaler disabling itself without CUDA, ...)
    assert not c.warning_mismatches, "\n".join(c.warning_mismatches)
    print(f"{name}: torch {c.torch.step_time_ms:.2f} ms/step, "
          f"gradsum {c.gradsum.step_time_ms:.2f} ms/step")
