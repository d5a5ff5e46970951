"""Run each ports program under PyTorch and under gradsum and compare them step by step.

Every program in :data:`PROGRAMS` is a plain torch script. The harness runs it first with
``python <script>`` (real torch), passing ``--init FILE`` so that torch writes the initial weights,
then with ``python -m gradsum run <script>`` (``import torch`` resolved to gradsum, the real torch
made unimportable), reading that same file: both start from the same weights, and gradsum's
``torch.load`` of a file written by ``torch.save`` is exercised, without torch, on the way.
Both run in subprocesses with one thread (``OMP_NUM_THREADS=1`` and the BLAS equivalents).
Each program prints lines

    step <i> <name> <value> [<name> <value> ...]
    eval <name> <value> [...]
    step_time_ms <median milliseconds per step>

and every ``step``/``eval`` value is compared: relative ``1e-5`` for float32 programs,
``1e-10`` for float64 ones. So are the warnings each run printed (category and message) and
the final checkpoint gradsum wrote, read back by the real torch.

Usage::

    python ports/harness.py                 # every program, a markdown table of step times
    python ports/harness.py nanogpt_train   # some of them

Example:
    >>> parse_output("step 0 loss 1.5 gnorm 2.0\\neval val 1.25\\nstep_time_ms 3.0\\n")
    ({'step 0 loss': 1.5, 'step 0 gnorm': 2.0, 'eval val': 1.25}, 3.0)
"""

from __future__ import annotations

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: environment of every run: one thread everywhere, unbuffered output
ONE_THREAD = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "PYTHONUNBUFFERED": "1",
}

#: relative tolerance of the comparison, by the program's floating-point type
RTOL = {"float32": 1e-5, "float64": 1e-10}


@dataclass(frozen=True)
class Program:
    """One entry of the suite: a script, its arguments, and its floating-point type."""

    name: str
    script: str
    dtype: str = "float32"
    args: tuple[str, ...] = ()
    torch_args: tuple[str, ...] = ()  # only under torch
    gradsum_args: tuple[str, ...] = ()  # only under gradsum
    #: the checkpoint (state dicts, possibly nested with optimizer state) the program writes
    #: at the end: gradsum's is read by torch and compared with torch's own
    checkpoint: str = ""
    slow: bool = False
    note: str = ""


PROGRAMS: dict[str, Program] = {p.name: p for p in [
    # torch's compile is inductor here (a C++ toolchain, tens of seconds, fused kernels): torch
    # runs eagerly, gradsum with nanoGPT's default compile=True (eager, as backend="eager")
    Program("nanogpt_train", "nanogpt_train.py", torch_args=("--compile", "False"),
            checkpoint="ckpt.pt",
            note="GPT: weight tying, accumulation, AdamW groups, cosine LR, torch.compile"),
    Program("char_lstm", "char_lstm.py", checkpoint="char_lstm_state.pt",
            note="char-rnn: 2-layer LSTM, truncated BPTT"),
    Program("word_lm_transformer", "word_language_model.py", args=("--model", "Transformer"),
            checkpoint="model_state.pt",
            note="word_language_model: TransformerEncoder, SGD with annealing"),
    Program("word_lm_gru", "word_language_model.py", args=("--model", "GRU", "--tied"),
            checkpoint="model_state.pt",
            note="word_language_model: GRU, tied weights"),
    Program("mnist_cnn", "mnist_cnn.py", checkpoint="mnist_cnn.pt",
            note="CNN: Conv2d/BatchNorm/MaxPool/Dropout, DataLoader workers=2, StepLR"),
    Program("vae", "vae.py", checkpoint="vae.pt",
            note="VAE: reparameterisation with NumPy noise, BCE + KLD"),
    Program("wgan_gp", "wgan_gp.py", checkpoint="wgan_gp.pt",
            note="WGAN-GP: autograd.grad(create_graph=True)"),
    Program("dcgan", "dcgan.py", checkpoint="dcgan.pt",
            note="DCGAN: ConvTranspose2d/BatchNorm generator, BCELoss, two Adams"),
    Program("maml_sine", "maml_sine.py", dtype="float64", checkpoint="maml.pt",
            note="second-order MAML: functional_call fast weights"),
    Program("lbfgs_sequence", "lbfgs_sequence.py", dtype="float64", checkpoint="seq.pt",
            note="time_sequence_prediction: LSTMCell, LBFGS closure"),
    Program("hessian_newton", "hessian_newton.py", dtype="float64", checkpoint="newton.pt",
            note="Newton-CG with Hessian-vector products (double backward and functional.hvp)"),
]}


@dataclass
class Run:
    """What one run of a program printed, and how it ended."""

    values: dict[str, float]
    step_time_ms: float | None
    returncode: int
    stdout: str
    stderr: str

    def log(self) -> str:
        """The run's output, for a failure message."""
        return f"exit {self.returncode}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


@dataclass
class Comparison:
    """A program run under both libraries."""

    program: Program
    torch: Run
    gradsum: Run
    mismatches: list[str] = field(default_factory=list)
    #: differences between gradsum's final checkpoint (read by torch) and torch's own
    checkpoint_mismatches: list[str] = field(default_factory=list)
    #: warnings (category: message) one library printed and the other did not
    warning_mismatches: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Both ran to the end, printed the same keys and warnings, every value agrees, and
        gradsum's final checkpoint is torch's."""
        return (self.torch.returncode == 0 and self.gradsum.returncode == 0
                and not self.mismatches and not self.checkpoint_mismatches
                and not self.warning_mismatches)

    @property
    def ratio(self) -> float | None:
        """gradsum's median step time over torch's."""
        t, g = self.torch.step_time_ms, self.gradsum.step_time_ms
        return None if t is None or g is None or t == 0 else g / t


def parse_output(text: str) -> tuple[dict[str, float], float | None]:
    """The compared values (``'step 3 loss' -> 1.25``) and the step time of a program's output."""
    values: dict[str, float] = {}
    step_time = None
    for line in text.splitlines():
        tokens = line.split()
        if not tokens:
            continue
        if tokens[0] == "step_time_ms" and len(tokens) == 2:
            step_time = float(tokens[1])
            continue
        if tokens[0] == "step" and len(tokens) >= 4:
            prefix, rest = f"step {tokens[1]}", tokens[2:]
        elif tokens[0] == "eval" and len(tokens) >= 3:
            prefix, rest = "eval", tokens[1:]
        else:
            continue
        for name, value in zip(rest[::2], rest[1::2]):
            values[f"{prefix} {name}"] = float(value)
    return values, step_time


def run(program: Program, lib: str, init: Path, out_dir: Path, timeout: float = 300.0) -> Run:
    """Run ``program`` under ``lib`` (``"torch"`` or ``"gradsum"``) in a one-thread subprocess."""
    script = str(HERE / program.script)
    common = [*program.args, "--init", str(init), "--out_dir", str(out_dir)]
    if lib == "torch":
        cmd = [sys.executable, script, *common, *program.torch_args]
    elif lib == "gradsum":
        cmd = [sys.executable, "-m", "gradsum", "run", script, *common, *program.gradsum_args]
    else:
        raise ValueError(f"lib must be 'torch' or 'gradsum', got {lib!r}")
    env = {**os.environ, **ONE_THREAD}
    if lib == "gradsum":
        # PyTorch made unimportable: the gradsum run must not touch the real torch, not even to
        # read torch's init file (the alias resolves ``import torch`` before sys.path is
        # seen); and this checkout's gradsum first, should another be installed
        src = [str(HERE.parent / "src")] if (HERE.parent / "src" / "gradsum").is_dir() else []
        env["PYTHONPATH"] = os.pathsep.join(
            [str(_torch_blocker(out_dir)), *src, *filter(None, [os.environ.get("PYTHONPATH")])])
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout,
                              cwd=out_dir)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return Run({}, None, 124, out, f"timed out after {timeout}s")
    values, step_time = parse_output(proc.stdout)
    return Run(values, step_time, proc.returncode, proc.stdout, proc.stderr)


def _torch_blocker(directory: Path) -> Path:
    """A folder holding a ``torch`` package whose import fails (put first on PYTHONPATH)."""
    blocker = directory / "_no_torch"
    (blocker / "torch").mkdir(parents=True, exist_ok=True)
    (blocker / "torch" / "__init__.py").write_text(
        "raise ImportError('the real torch was imported during a gradsum run of a port')\n")
    return blocker


def compare_values(torch_values: dict[str, float], gradsum_values: dict[str, float],
                   rtol: float) -> list[str]:
    """One line per key missing on either side or value outside ``rtol`` (relative).

    Example:
        >>> compare_values({"step 0 loss": 1.0}, {"step 0 loss": 1.0 + 1e-7}, 1e-5)
        []
        >>> compare_values({"step 0 loss": 1.0}, {"step 0 loss": 1.1}, 1e-5)
        ['step 0 loss: torch 1.0, gradsum 1.1 (relative difference 0.1)']
    """
    problems = []
    for key in sorted(set(torch_values) | set(gradsum_values)):
        if key not in gradsum_values or key not in torch_values:
            side = "gradsum" if key not in gradsum_values else "torch"
            problems.append(f"{key}: missing under {side}")
            continue
        t, g = torch_values[key], gradsum_values[key]
        if not math.isclose(g, t, rel_tol=rtol, abs_tol=rtol * 1e-3):
            rel = abs(g - t) / max(abs(t), 1e-300)
            problems.append(f"{key}: torch {t!r}, gradsum {g!r} (relative difference {rel:.2g})")
    return problems


_WARNING_LINE = re.compile(r"^\S.*:\d+: (\w+Warning): (.*)$")


def warnings_printed(stderr: str) -> set[str]:
    """The ``Category: message`` of every warning in a run's stderr (where it was raised left
    out: torch's file and line are not gradsum's).

    Example:
        >>> sorted(warnings_printed("/x/a.py:3: UserWarning: careful\\n  code line\\n"))
        ['UserWarning: careful']
    """
    found = set()
    for line in stderr.splitlines():
        m = _WARNING_LINE.match(line)
        if m:
            found.add(f"{m.group(1)}: {re.sub(r'0x[0-9a-f]+', '0x...', m.group(2))}")
    return found


def _leaves(obj: object, path: str = "") -> dict[str, object]:
    """A nested checkpoint (dicts, lists, tensors, numbers) flattened to ``path -> leaf``."""
    if isinstance(obj, dict):
        out: dict[str, object] = {}
        for k, v in obj.items():
            out.update(_leaves(v, f"{path}/{k}"))
        return out
    if isinstance(obj, (list, tuple)):
        out = {}
        for i, v in enumerate(obj):
            out.update(_leaves(v, f"{path}[{i}]"))
        return out
    return {path: obj}


def compare_checkpoints(torch_file: Path, gradsum_file: Path, rtol: float) -> list[str]:
    """Read both files with the real torch (``weights_only=True``, its default) and compare.

    Tensors must agree in shape and dtype and normwise within ``100 * rtol``; numbers within
    ``rtol``; anything else exactly. (The per-step losses are the tight comparison. Final
    parameters get room: a gradient that is zero in exact arithmetic, as that of the key bias
    of softmax attention, is rounding noise in both libraries, and Adam's normalised step
    turns noise of 1e-9 into steps of up to 1e-5.)
    """
    import torch

    try:
        t = _leaves(torch.load(torch_file))
        g = _leaves(torch.load(gradsum_file))
    except Exception as e:  # (what torch says is the finding)
        return [f"torch.load of gradsum's {gradsum_file.name}: {type(e).__name__}: {e}"]
    problems = [f"{k}: only in {'torch' if k in t else 'gradsum'}'s checkpoint"
                for k in sorted(set(t) ^ set(g))]
    for k in sorted(set(t) & set(g)):
        a, b = t[k], g[k]
        if isinstance(a, torch.Tensor):
            if not isinstance(b, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype:
                problems.append(f"{k}: torch {type(a).__name__} {getattr(a, 'dtype', '')} "
                                f"{tuple(getattr(a, 'shape', ()))}, gradsum {type(b).__name__} "
                                f"{getattr(b, 'dtype', '')} {tuple(getattr(b, 'shape', ()))}")
                continue
            if a.dtype.is_floating_point:
                diff = (a.double() - b.double()).norm().item()
                if diff > 100 * rtol * a.double().norm().item() + 1e-30:
                    problems.append(f"{k}: normwise difference {diff:.3g} "
                                    f"(torch norm {a.double().norm().item():.6g})")
            elif not torch.equal(a, b):
                problems.append(f"{k}: integer tensors differ")
        elif isinstance(a, float) and isinstance(b, float):
            if not math.isclose(a, b, rel_tol=rtol, abs_tol=rtol * 1e-3):
                problems.append(f"{k}: torch {a!r}, gradsum {b!r}")
        elif type(a) is not type(b) or a != b:
            problems.append(f"{k}: torch {a!r}, gradsum {b!r}")
    return problems


def compare(program: Program, work_dir: Path | None = None, timeout: float = 300.0) -> Comparison:
    """Run ``program`` under torch (writing its initial weights) then gradsum (reading them)."""
    with tempfile.TemporaryDirectory(prefix=f"ports-{program.name}-") as tmp:
        base = Path(work_dir or tmp)
        init = base / f"{program.name}_init.pt"
        (base / "torch").mkdir(parents=True, exist_ok=True)
        (base / "gradsum").mkdir(parents=True, exist_ok=True)
        if init.exists():
            init.unlink()
        t = run(program, "torch", init, base / "torch", timeout)
        if t.returncode != 0 or not init.exists():
            why = "torch's run failed" if t.returncode else f"torch's run wrote no {init.name}"
            return Comparison(program, t, Run({}, None, -1, "", f"not run: {why}"), [why])
        g = run(program, "gradsum", init, base / "gradsum", timeout)
        mismatches = [] if g.returncode != 0 else compare_values(t.values, g.values,
                                                                  RTOL[program.dtype])
        if t.returncode == 0 and not t.values:
            mismatches.append("torch's run printed no step values")
        checkpoint = []
        if g.returncode == 0 and program.checkpoint:
            checkpoint = compare_checkpoints(base / "torch" / program.checkpoint,
                                             base / "gradsum" / program.checkpoint,
                                             RTOL[program.dtype])
        warned = []
        if g.returncode == 0:
            tw, gw = warnings_printed(t.stderr), warnings_printed(g.stderr)
            warned = ([f"only torch warned: {w}" for w in sorted(tw - gw)]
                      + [f"only gradsum warned: {w}" for w in sorted(gw - tw)])
        return Comparison(program, t, g, mismatches, checkpoint, warned)


def markdown_table(results: list[Comparison]) -> str:
    """The step-time table: program, dtype, steps compared, median ms per step, ratio, result."""
    lines = ["| program | dtype | values compared | torch ms/step | gradsum ms/step "
             "| gradsum/torch | result |",
             "| --- | --- | ---: | ---: | ---: | ---: | --- |"]
    for c in results:
        def ms(r: Run) -> str:
            return "-" if r.step_time_ms is None else f"{r.step_time_ms:.2f}"
        ratio = "-" if c.ratio is None else f"{c.ratio:.1f}x"
        if c.ok:
            result = "match"
        elif c.torch.returncode != 0:
            result = "torch run failed"
        elif c.gradsum.returncode != 0:
            last = (c.gradsum.stderr.strip().splitlines() or ["?"])[-1]
            result = f"gradsum failed: {last[:80]}"
        elif c.mismatches:
            result = f"{len(c.mismatches)} mismatches"
        elif c.warning_mismatches:
            result = f"warnings: {len(c.warning_mismatches)} differences"
        else:
            result = f"checkpoint: {len(c.checkpoint_mismatches)} differences"
        lines.append(f"| {c.program.name} | {c.program.dtype} | {len(c.torch.values)} "
                     f"| {ms(c.torch)} | {ms(c.gradsum)} | {ratio} | {result} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Compare the named programs (all by default); print failures and the table."""
    parser = argparse.ArgumentParser(description="Run the ports suite under torch and gradsum.")
    parser.add_argument("names", nargs="*", help=f"programs (default all): {', '.join(PROGRAMS)}")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per run")
    ns = parser.parse_args(argv)
    unknown = [n for n in ns.names if n not in PROGRAMS]
    if unknown:
        parser.error(f"unknown programs {unknown}; choose from {', '.join(PROGRAMS)}")
    results = []
    for name in ns.names or list(PROGRAMS):
        c = compare(PROGRAMS[name], timeout=ns.timeout)
        results.append(c)
        if not c.ok:
            print(f"## {name}: FAILED", file=sys.stderr)
            for m in (c.mismatches + c.checkpoint_mismatches + c.warning_mismatches)[:10]:
                print(f"  {m}", file=sys.stderr)
            if c.torch.returncode != 0:
                print(c.torch.log()[-3000:], file=sys.stderr)
            elif c.gradsum.returncode != 0:
                print(c.gradsum.log()[-3000:], file=sys.stderr)
    print(markdown_table(results))
    return 0 if all(c.ok for c in results) else 1


if __name__ == "__main__":
    sys.exit(main())
