"""A/B of two gradsum source trees in one process: is a change faster, by how much?

Separate benchmark runs on a shared machine vary by about 5%, more than most single changes
to a hot path are worth. This script loads both trees into one process (each copied under
its own package name, ``gs0`` and ``gs1``) and alternates them step by step, so that both
see the same machine state; the medians of thousands of steps then resolve about 1%.

Run: ``python benchmarks/ab_trees.py OLD_SRC NEW_SRC [--steps N] [--workload mlp|chain]``,
where each ``*_SRC`` is a folder holding a ``gradsum`` package (e.g. ``src`` of a checkout;
``git archive HEAD src | tar -x -C /tmp/old`` gives the committed tree). Prints the median
forward, backward and total time of a step for each tree and the change of the second.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
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


def mlp_step(lib: Any) -> Step:
    """One forward+backward of bench_core's small MLP (64-128-128-10, batch 32)."""
    rng = np.random.default_rng(0)
    sizes = [64, 128, 128, 10]
    params = []
    for m, n in itertools.pairwise(sizes):
        bound = 1 / np.sqrt(m)
        params.append((
            lib.tensor(rng.uniform(-bound, bound, (m, n)).astype(np.float32),
                       requires_grad=True),
            lib.tensor(rng.uniform(-bound, bound, n).astype(np.float32), requires_grad=True),
        ))
    x = lib.tensor(rng.standard_normal((32, 64)).astype(np.float32))
    y = lib.tensor(rng.integers(0, 10, 32))

    def step() -> tuple[float, float, float]:
        t0 = time.perf_counter()
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w + b
            if i < len(params) - 1:
                h = h.relu()
        loss = -lib.log_softmax(h, 1).gather(1, y.unsqueeze(1)).mean()
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        for w, b in params:
            w.grad = None
            b.grad = None
        del loss
        return t1 - t0, t2 - t1, time.perf_counter() - t0

    return step


def chain_step(lib: Any) -> Step:
    """One forward+backward of bench_core's chain of 1,000 elementwise ops."""
    x = lib.tensor(np.linspace(-1, 1, 8).astype(np.float32), requires_grad=True)
    w = lib.tensor(np.full(8, 0.999, np.float32))
    b = lib.tensor(np.full(8, 0.001, np.float32))

    def step() -> tuple[float, float, float]:
        t0 = time.perf_counter()
        y = x
        for i in range(1000):
            k = i % 3
            y = y * w if k == 0 else (y + b if k == 1 else y.tanh())
        loss = y.sum()
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        x.grad = None
        del loss
        return t1 - t0, t2 - t1, time.perf_counter() - t0

    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old_src")
    parser.add_argument("new_src")
    parser.add_argument("--steps", type=int, default=6000, help="timed steps per tree")
    parser.add_argument("--workload", choices=("mlp", "chain"), default="mlp")
    args = parser.parse_args()
    make = mlp_step if args.workload == "mlp" else chain_step
    steps = args.steps if args.workload == "mlp" else max(args.steps // 40, 20)
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
