"""Training-step benchmark: gradsum vs torch in one process, interleaved, single-threaded.

One step = forward, cross-entropy, backward, ``optimizer.step()``, ``zero_grad()`` for:
- MLP 64-128-128-10 at batch 32 (overhead-bound),
- MLP 784-2048-2048-10 at batch 256 (BLAS-bound),
- a weight-tied language model: embedding 256x128 used as the output projection, context 8,
  batch 64,
each with SGD-momentum and with AdamW. Peak memory of the large-MLP step is measured in fresh
subprocesses (peak RSS above the process's baseline after setup).

Run: ``python benchmarks/bench_train.py [--repeats N] [--no-memory]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import _common  # noqa: F401 - single-thread env vars before numpy/torch load
import numpy as np
from _common import (
    blas_name,
    median,
    table,
    threads_info,
    time_interleaved,
    with_blas_variants,
)


def build_mlp(lib, sizes, seed=0):
    nn = lib.nn
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    model = nn.Sequential(*layers)
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.uniform(-0.05, 0.05, tuple(p.shape)).astype(np.float32)))
    return model


class TiedLM:
    """Embedding (vocab x dim) shared with the output projection; a hidden tanh layer."""

    def __init__(self, lib, vocab=256, dim=128, context=8, seed=0):
        nn = lib.nn
        rng = np.random.default_rng(seed)
        self.lib = lib
        self.emb = nn.Embedding(vocab, dim)
        self.hidden = nn.Linear(dim * context, dim)
        with lib.no_grad():
            self.emb.weight.copy_(lib.tensor(rng.normal(0, 0.1, (vocab, dim)).astype(np.float32)))
            self.hidden.weight.copy_(lib.tensor(
                rng.uniform(-0.03, 0.03, (dim, dim * context)).astype(np.float32)))
            self.hidden.bias.zero_()

    def parameters(self):
        return [self.emb.weight, self.hidden.weight, self.hidden.bias]

    def __call__(self, tokens):
        b = tokens.shape[0]
        h = self.emb(tokens).reshape(b, -1)
        h = self.hidden(h).tanh()
        return h @ self.emb.weight.T  # the same matrix: two paths into one .grad


def lm_parts(lib, seed=0):
    """The tied LM's parameters and its forward to the cross-entropy loss."""
    rng = np.random.default_rng(seed)
    model = TiedLM(lib, seed=seed)
    x = lib.tensor(rng.integers(0, 256, (64, 8)))
    y = lib.tensor(rng.integers(0, 256, 64))

    def forward():
        return lib.nn.functional.cross_entropy(model(x), y)

    return model.parameters(), forward


def mlp_parts(lib, sizes, batch, seed=0):
    """An MLP's parameters and its forward to the cross-entropy loss (nn.Linear layers)."""
    rng = np.random.default_rng(seed)
    model = build_mlp(lib, sizes, seed)
    x = lib.tensor(rng.standard_normal((batch, sizes[0])).astype(np.float32))
    y = lib.tensor(rng.integers(0, sizes[-1], batch))

    def forward():
        return lib.nn.functional.cross_entropy(model(x), y)

    return list(model.parameters()), forward


def step_program(lib, kind, opt_name, seed=0):
    if kind == "small":
        params, forward = mlp_parts(lib, [64, 128, 128, 10], 32, seed)
    elif kind == "large":
        params, forward = mlp_parts(lib, [784, 2048, 2048, 10], 256, seed)
    else:
        params, forward = lm_parts(lib, seed)
    if opt_name == "sgd":
        opt = lib.optim.SGD(params, lr=0.01, momentum=0.9)
    else:
        opt = lib.optim.AdamW(params, lr=1e-3)

    def run():
        loss = forward()
        loss.backward()
        opt.step()
        opt.zero_grad()

    return run


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def memory_child(lib_name: str) -> None:
    """Peak RSS over three large-MLP SGD steps, and how far above the resident size after
    setup it went (gradients, momentum buffers, activations). Linux only."""
    if lib_name == "torch":
        import torch as lib

        lib.set_num_threads(1)
    else:
        import gradsum as lib
    run = step_program(lib, "large", "sgd")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the peak (VmHWM) to the current resident size
    base = _status_kib("VmRSS")
    for _ in range(3):
        run()
    peak = _status_kib("VmHWM")
    print(json.dumps({"base_kib": base, "peak_kib": peak}))


def measure_memory() -> dict[str, dict[str, int]]:
    out = {}
    for name in ("gradsum", "torch"):
        proc = subprocess.run(
            [sys.executable, __file__, "--memory-child", name], capture_output=True, text=True,
            check=True,
        )
        out[name] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--memory-child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(args.memory_child)
        return
    import torch

    import gradsum

    torch.set_num_threads(1)
    rows = []
    plan = [
        ("small", "MLP 64-128-128-10, batch 32", 20, "<= 0.8"),
        ("large", "MLP 784-2048-2048-10, batch 256", 1, "<= 1.05"),
        ("lm", "tied LM 256x128, ctx 8, batch 64", 5, "<= 1.0"),
    ]
    for kind, label, inner, target in plan:
        for opt_name in ("sgd", "adamw"):
            reps = args.repeats if kind != "large" else max(5, args.repeats // 2)
            fns = {"gradsum": step_program(gradsum, kind, opt_name),
                   "torch": step_program(torch, kind, opt_name)}
            if kind == "large":
                fns = with_blas_variants(
                    fns, lambda kind=kind, o=opt_name: step_program(gradsum, kind, o))
            r = time_interleaved(fns, reps, inner=inner)
            name = f"{label}, {'SGD-momentum' if opt_name == 'sgd' else 'AdamW'} step"
            rows.append((name, median(r["gradsum"]), median(r["torch"]), target))
            if "gradsum (NumPy BLAS)" in r:
                rows.append(("same, gradsum on NumPy's OpenBLAS (MKL off)",
                             median(r["gradsum (NumPy BLAS)"]), median(r["torch"]),
                             "(reference)"))
    print(f"threads: {threads_info()}; torch {torch.__version__}, numpy {np.__version__}; "
          f"gradsum GEMM: {blas_name()}")
    print(table(rows))
    if not args.no_memory:
        mem = measure_memory()
        print()
        print("| large-MLP SGD steps | peak RSS (MiB) | peak above RSS after setup (MiB) |")
        print("| --- | --- | --- |")
        for name, m in mem.items():
            print(f"| {name} | {m['peak_kib'] / 1024:.0f} | "
                  f"{(m['peak_kib'] - m['base_kib']) / 1024:.0f} |")


if __name__ == "__main__":
    main()
