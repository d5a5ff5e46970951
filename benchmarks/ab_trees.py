"""A/B of two gradsum source trees in one process: is a change faster, by how much?

Separate benchmark runs on a shared machine vary by about 5%, more than most single changes
to a hot path are worth. This script loads both trees into one process (each copied under
its own package name, ``gs0`` and ``gs1``) and alternates them step by step, so that both
see the same machine state; the medians of thousands of steps then resolve about 1%.

Run: ``python benchmarks/ab_trees.py OLD_SRC NEW_SRC [--steps N] [--workload mlp|chain|lm]``,
where each ``*_SRC`` is a folder holding a ``gradsum`` package (e.g. ``src`` of a checkout;
``git archive HEAD src | tar -x -C /tmp/old`` gives the committed tree). Prints the median
forward, backward and total time of a step for each tree and the change of the second.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import _common  # noqa: F401 - sets single-thread env vars before numpy loads
import numpy as np
from bench_core import chain_parts, mlp_parts
from bench_train import lm_parts

Step = Callable[[], tuple[float, float, float]]


def load_as(src: str, name: str, root: str) -> Any:
    """Import the ``gradsum`` package below ``src`` under the name ``name``."""
    dst = os.path.join(root, name)
    shutil.copytree(os.path.join(src, "gradsum"), dst)
    for folder, _, files in os.walk(dst):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(folder, f)
                with open(path) as fh:
                    text = re.sub(r"\bgradsum\b", name, fh.read())
                with open(path, "w") as fh:
                    fh.write(text)
    return importlib.import_module(name)


def timed(parts: tuple[list[Any], Callable[[], Any]]) -> Step:
    """One forward + backward of ``parts`` (bench_core's), timed in its two halves."""
    leaves, forward = parts

    def step() -> tuple[float, float, float]:
        t0 = time.perf_counter()
        loss = forward()
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        for t in leaves:
            t.grad = None
        del loss
        return t1 - t0, t2 - t1, time.perf_counter() - t0

    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old_src")
    parser.add_argument("new_src")
    parser.add_argument("--steps", type=int, default=6000, help="timed steps per tree")
    parser.add_argument("--workload", choices=("mlp", "chain", "lm"), default="mlp")
    args = parser.parse_args()
    def make(lib: Any) -> Step:
        if args.workload == "mlp":
            return timed(mlp_parts(lib, [64, 128, 128, 10], 32))
        if args.workload == "lm":
            return timed(lm_parts(lib))
        return timed(chain_parts(lib))

    steps = {"mlp": args.steps, "lm": max(args.steps // 6, 20),
             "chain": max(args.steps // 40, 20)}[args.workload]
    with tempfile.TemporaryDirectory() as root:
        sys.path.insert(0, root)
        runs = [make(load_as(src, f"gs{i}", root))
                for i, src in enumerate((args.old_src, args.new_src))]
        times: list[list[tuple[float, float, float]]] = [[], []]
        warm = max(steps // 20, 5)
        for it in range(steps + warm):
            for j in ((0, 1) if it % 2 else (1, 0)):  # (each goes first every other step)
                t = runs[j]()
                if it >= warm:
                    times[j].append(t)
    base = np.median(np.array(times[0]), axis=0) * 1e6
    for src, ts in zip((args.old_src, args.new_src), times, strict=True):
        m = np.median(np.array(ts), axis=0) * 1e6
        print(f"{args.workload} {src}: forward {m[0]:.1f} us, backward {m[1]:.1f} us, "
              f"total {m[2]:.1f} us ({100 * (m[2] / base[2] - 1):+.1f}%)")


if __name__ == "__main__":
    main()
