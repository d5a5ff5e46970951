"""Core benchmark: gradsum vs torch in one process, interleaved, single-threaded.

Workloads:
- chain: 1,000 small elementwise ops forward + backward (per-op overhead),
- MLP 784-2048-2048-10 at batch 256, forward + backward (BLAS-bound),
- MLP 64-128-128-10 at batch 32, forward + backward (overhead-bound).

Run: ``python benchmarks/bench_core.py [--repeats N]``. Prints medians and gradsum/torch ratios.
"""

from __future__ import annotations

import argparse

import _common  # noqa: F401 - sets single-thread env vars before numpy/torch load
import numpy as np
from _common import (
    blas_name,
    median,
    table,
    threads_info,
    time_interleaved,
    with_blas_variants,
)


def chain_parts(lib, n_ops: int = 1000, size: int = 8):
    """The chain's leaf ``x`` and its forward (to the scalar whose backward is timed)."""
    x = lib.tensor(np.linspace(-1, 1, size).astype(np.float32), requires_grad=True)
    w = lib.tensor(np.full(size, 0.999, np.float32))
    b = lib.tensor(np.full(size, 0.001, np.float32))

    def forward():
        y = x
        for i in range(n_ops):
            k = i % 3
            if k == 0:
                y = y * w
            elif k == 1:
                y = y + b
            else:
                y = y.tanh()
        return y.sum()

    return [x], forward


def mlp_parts(lib, sizes: list[int], batch: int, seed: int = 0):
    """An MLP's parameters and its forward to the cross-entropy loss."""
    rng = np.random.default_rng(seed)
    params = []
    for i in range(len(sizes) - 1):
        bound = 1 / np.sqrt(sizes[i])
        w = rng.uniform(-bound, bound, (sizes[i], sizes[i + 1])).astype(np.float32)
        b = rng.uniform(-bound, bound, sizes[i + 1]).astype(np.float32)
        params += [lib.tensor(w, requires_grad=True), lib.tensor(b, requires_grad=True)]
    x = lib.tensor(rng.standard_normal((batch, sizes[0])).astype(np.float32))
    y = lib.tensor(rng.integers(0, sizes[-1], batch))

    def forward():
        h = x
        for i in range(0, len(params), 2):
            h = h @ params[i] + params[i + 1]
            if i < len(params) - 2:
                h = h.relu()
        return -lib.log_softmax(h, 1).gather(1, y.unsqueeze(1)).mean()

    return params, forward


def program(parts):
    """One forward + backward, then the leaves' ``.grad`` set to None."""
    leaves, forward = parts

    def run():
        forward().backward()
        for t in leaves:
            t.grad = None

    return run


def chain_program(lib, n_ops: int = 1000, size: int = 8):
    return program(chain_parts(lib, n_ops, size))


def mlp_program(lib, sizes: list[int], batch: int, seed: int = 0):
    return program(mlp_parts(lib, sizes, batch, seed))


def main() -> None:
    import torch  # (here: ab_trees.py imports the workloads without torch or gradsum)

    import gradsum

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = []
    r = time_interleaved(
        {"gradsum": chain_program(gradsum), "torch": chain_program(torch)}, args.repeats
    )
    g, t = median(r["gradsum"]), median(r["torch"])
    rows.append(("chain of 1,000 elementwise ops, fwd+bwd", g, t, "<= 1.0"))
    print(f"per op (fwd+bwd): gradsum {g / 1000 * 1e6:.2f} us, torch {t / 1000 * 1e6:.2f} us")
    big = [784, 2048, 2048, 10]
    r = time_interleaved(
        with_blas_variants({"gradsum": mlp_program(gradsum, big, 256),
                            "torch": mlp_program(torch, big, 256)},
                           lambda: mlp_program(gradsum, big, 256)),
        max(5, args.repeats // 2),
    )
    rows.append(("MLP 784-2048-2048-10, batch 256, fwd+bwd", median(r["gradsum"]),
                 median(r["torch"]), "<= 1.05"))
    if "gradsum (NumPy BLAS)" in r:
        rows.append(("same, gradsum on NumPy's OpenBLAS (MKL off)",
                     median(r["gradsum (NumPy BLAS)"]), median(r["torch"]), "(reference)"))
    r = time_interleaved(  # (a step is short: 4x the repeats, for a steadier median)
        {"gradsum": mlp_program(gradsum, [64, 128, 128, 10], 32),
         "torch": mlp_program(torch, [64, 128, 128, 10], 32)},
        4 * args.repeats, inner=20,
    )
    rows.append(("MLP 64-128-128-10, batch 32, fwd+bwd", median(r["gradsum"]),
                 median(r["torch"]), "<= 0.8"))
    print(f"threads: {threads_info()}; torch {torch.__version__}, numpy {np.__version__}; "
          f"gradsum GEMM: {blas_name()}")
    print(table(rows))


if __name__ == "__main__":
    main()
