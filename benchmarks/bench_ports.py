"""Step times of the ports suite (``ports/``): each PyTorch program run unchanged under torch and
under gradsum (``gradsum run``), one thread, interleaved (torch, gradsum, torch, gradsum, ...).

Each run reports the median of its own step times; the table shows the median over
``--repeats`` runs of each, the ratio of the medians, the range of the per-pair ratios, and
whether the first pair of runs matched (the harness's comparison: per-step values, warnings,
the final checkpoint). Needs torch.

    python benchmarks/bench_ports.py [--repeats 3] [program ...]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
from pathlib import Path

import _common  # noqa: F401  (one thread, set before anything imports NumPy)

PORTS = Path(__file__).resolve().parent.parent / "ports"


def _harness():
    spec = importlib.util.spec_from_file_location("ports_harness", PORTS / "harness.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["ports_harness"] = module
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    """Time the named programs (all by default) and print a markdown table."""
    harness = _harness()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="programs (default: all)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each (default 3)")
    ns = parser.parse_args(argv)
    names = ns.names or list(harness.PROGRAMS)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-ports-") as tmp:
        for name in names:
            program = harness.PROGRAMS[name]
            base = Path(tmp) / name
            first = harness.compare(program, work_dir=base)  # torch writes the init file
            times = {"torch": [first.torch.step_time_ms], "gradsum": [first.gradsum.step_time_ms]}
            for _ in range(ns.repeats - 1):
                for lib in ("torch", "gradsum"):
                    r = harness.run(program, lib, base / f"{name}_init.pt", base / lib)
                    times[lib].append(r.step_time_ms if r.returncode == 0 else None)
            t = [x for x in times["torch"] if x is not None]
            g = [x for x in times["gradsum"] if x is not None]
            tm = statistics.median(t) if t else None
            gm = statistics.median(g) if g else None
            ratios = [b / a for a, b in zip(times["torch"], times["gradsum"]) if a and b]
            spread = f"{min(ratios):.2f}-{max(ratios):.2f}" if ratios else "-"
            result = "match" if first.ok else ("gradsum failed" if first.gradsum.returncode
                                               else "differs")
            rows.append((name, program.dtype, tm, gm, spread, result))
            print(f"{name}: torch {tm} ms, gradsum {gm} ms, {result}", file=sys.stderr)
    print(f"Median ms per step over {ns.repeats} runs each, one thread, interleaved.\n")
    print("| program | dtype | torch ms/step | gradsum ms/step | gradsum/torch "
          "| range of the runs | per-step values |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- |")
    for name, dtype, tm, gm, spread, result in rows:
        ratio = f"{gm / tm:.2f}" if tm and gm else "-"
        ts = f"{tm:.2f}" if tm is not None else "-"
        gs = f"{gm:.2f}" if gm is not None else "-"
        print(f"| {name} | {dtype} | {ts} | {gs} | {ratio} | {spread} | {result} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
