"""Shared benchmark helpers: single-threaded BLAS, interleaved timing, median tables.

Set the thread variables before NumPy or torch is imported (each benchmark script imports
this module first).
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


def time_interleaved(
    fns: dict[str, Callable[[], object]], repeats: int, warmup: int = 2, inner: int = 1,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, list[float]]:
    """Run each function ``repeats`` times, interleaved (a, b, a, b, ...), return seconds.
    Each timing is the mean of ``inner`` calls; ``warmup`` such groups run first, untimed.
    ``clock`` is wall time by default; ``time.process_time`` (the process's CPU time, which
    leaves out the time other processes hold the cores) steadies one-thread timings on a
    busy machine."""
    for _ in range(warmup):
        for fn in fns.values():
            for _ in range(inner):
                fn()
    out: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = clock()
            for _ in range(inner):
                fn()
            out[name].append((clock() - t0) / inner)
    return out


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def table(rows: list[tuple[str, float, float, str]]) -> str:
    """Markdown table: workload, gradsum median, torch median, ratio, target."""
    lines = [
        "| workload | gradsum (median) | torch (median) | gradsum/torch | target |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, g, t, target in rows:
        lines.append(f"| {name} | {fmt(g)} | {fmt(t)} | {g / t:.2f} | {target} |")
    return "\n".join(lines)


def fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def threads_info() -> str:
    try:
        from threadpoolctl import threadpool_info

        return ", ".join(
            f"{i['internal_api']}:{i['num_threads']}" for i in threadpool_info()
        )
    except ImportError:
        return "threadpoolctl not installed"


def blas_name() -> str:
    """Which GEMM gradsum's large products use in this environment."""
    import gradsum

    if gradsum.backends.mkl.is_available():
        return "MKL (the mkl extra)"
    return f"NumPy's BLAS ({gradsum.backends.mkl.unavailable_reason()})"


def with_blas_variants(fns: dict[str, Callable[[], object]],
                       make: Callable[[], Callable[[], object]]) -> dict[str, Callable[[], object]]:
    """Add ``gradsum (NumPy BLAS)``: a second gradsum program (from ``make``) run with MKL
    switched off, when MKL is in use; torch uses MKL, so both rows show what the BLAS is
    worth."""
    import gradsum

    if not gradsum.backends.mkl.is_available():
        return fns
    inner = make()

    def numpy_blas() -> object:
        with gradsum.backends.mkl.flags(enabled=False):
            return inner()

    return {**fns, "gradsum (NumPy BLAS)": numpy_blas}
