"""Toolkit overhead: one training step of a small MLP with the toolkit off / ledger / strict.

Workloads, each a full step (zero_grad, forward, cross-entropy, backward, SGD step
with momentum), interleaved, single-threaded:
- off: no toolkit (nothing registered with the engine),
- ledger: ``Ledger(model)`` attached and watching the optimizer (norms on, values off),
- ledger+values: the same with ``store_values=True`` (a copy of every contribution),
- strict: ``strict(optimizer)`` (stale / window / graph / None-vs-zero checks, value copies),
- transactional: every backward inside ``transactional()``.

Two sizes: an overhead-bound MLP 64-128-128-10 at batch 32 and a BLAS-bound 784-1024-1024-10
at batch 128. Run: ``python benchmarks/bench_toolkit.py [--repeats N]``.
"""

from __future__ import annotations

import argparse
import itertools
import time
from collections.abc import Callable
from typing import Any

import _common  # noqa: F401 - sets single-thread env vars before numpy loads
from _common import fmt, median, threads_info

import gradsum
import gradsum.nn.functional as F
from gradsum import nn, optim, toolkit
from gradsum.autograd import engine, graph


class _Toggle:
    """attach()/detach() around each timed step, so that every other mode really is off."""

    def __init__(self, on: Callable[[], Any], off: Callable[[], Any]) -> None:
        self.on, self.off = on, off


def make_step(sizes: tuple[int, ...], batch: int, mode: str) -> tuple[Callable[[], None],
                                                                      _Toggle | None]:
    gradsum.manual_seed(0)
    layers: list[nn.Module] = []
    for a, b in itertools.pairwise(sizes):
        layers += [nn.Linear(a, b), nn.ReLU()]
    model = nn.Sequential(*layers[:-1])
    opt = optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    x = gradsum.randn(batch, sizes[0])
    y = gradsum.randint(0, sizes[-1], (batch,))
    toggle = None
    if mode in ("ledger", "ledger+values"):
        led = toolkit.Ledger(model, store_values=mode == "ledger+values", max_events=64)
        toggle = _Toggle(lambda: led.attach().watch(opt), led.detach)
    elif mode == "strict":
        san = toolkit.Sanitizer(opt, params=model)
        toggle = _Toggle(san.attach, san.detach)

    def step() -> None:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        if mode == "transactional":
            toolkit.transactional_backward(loss)
        else:
            loss.backward()
        opt.step()

    return step, toggle


MODES = ("off", "ledger", "ledger+values", "strict", "transactional")


def run(name: str, sizes: tuple[int, ...], batch: int, repeats: int) -> list[str]:
    variants = {mode: make_step(sizes, batch, mode) for mode in MODES}
    times: dict[str, list[float]] = {m: [] for m in MODES}
    for r in range(repeats + 2):  # two warm-up rounds
        for mode, (step, toggle) in variants.items():
            if toggle is not None:
                toggle.on()
            if mode == "off":
                assert not engine.backward_observers and not graph.accumulate_observers
            t0 = time.perf_counter()
            step()
            dt = time.perf_counter() - t0
            if toggle is not None:
                toggle.off()
            if r >= 2:
                times[mode].append(dt)
    base = median(times["off"])
    out = []
    for mode in MODES:
        t = median(times[mode])
        out.append(f"| {name} | {mode} | {fmt(t)} | {t / base:.2f} |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=30)
    args = ap.parse_args()
    print(f"threads: {threads_info()}")
    lines = ["| model | toolkit | step (median) | ratio to off |", "| --- | --- | --- | --- |"]
    lines += run("MLP 64-128-128-10, batch 32", (64, 128, 128, 10), 32, args.repeats)
    lines += run("MLP 784-1024-1024-10, batch 128", (784, 1024, 1024, 10), 128,
                 max(5, args.repeats // 3))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
