"""Optimizer-step benchmark: gradsum vs torch in one process, interleaved, single-threaded.

Each optimizer updates a 2048x2048 weight and a 2048 bias (4.2M parameters, gradients
fixed), ``step()`` alone: the elementwise passes over parameter, gradient and state that
dominate a large model's update. Prints medians and gradsum/torch ratios (no targets).

Run: ``python benchmarks/bench_optim.py [--repeats N]``.
"""

from __future__ import annotations

import argparse

import _common  # noqa: F401 - single-thread env vars before numpy/torch load
import numpy as np
from _common import median, table, threads_info, time_interleaved

CASES = [
    ("SGD", {"lr": 0.01, "momentum": 0.9}),
    ("Adam", {"lr": 1e-3}),
    ("AdamW", {"lr": 1e-3}),
    ("RMSprop", {"lr": 1e-3}),
    ("RMSprop", {"lr": 1e-3, "momentum": 0.9, "centered": True}),
    ("Adagrad", {"lr": 0.01}),
    ("Adamax", {"lr": 1e-3}),
    ("NAdam", {"lr": 1e-3}),
    ("RAdam", {"lr": 1e-3}),
    ("Adadelta", {"lr": 1.0}),
    ("ASGD", {"lr": 1e-3}),
    ("Rprop", {"lr": 1e-3}),
]


def step_program(lib, name, kw, seed=0):
    rng = np.random.default_rng(seed)
    params = []
    for shape in [(2048, 2048), (2048,)]:
        p = lib.nn.Parameter(lib.tensor(rng.standard_normal(shape).astype(np.float32)))
        p.grad = lib.tensor(rng.standard_normal(shape).astype(np.float32))
        params.append(p)
    return getattr(lib.optim, name)(params, **kw).step


def main() -> None:
    import torch

    import gradsum

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = []
    for name, kw in CASES:
        r = time_interleaved({"gradsum": step_program(gradsum, name, kw),
                              "torch": step_program(torch, name, kw)}, args.repeats)
        label = name + "".join(f", {k}={v}" for k, v in kw.items() if k != "lr")
        rows.append((f"{label} step, 4.2M parameters", median(r["gradsum"]),
                     median(r["torch"]), "(reference)"))
    print(f"threads: {threads_info()}; torch {torch.__version__}, numpy {np.__version__}")
    print(table(rows))


if __name__ == "__main__":
    main()
