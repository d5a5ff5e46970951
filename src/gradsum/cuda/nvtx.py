"""``gradsum.cuda.nvtx``: NVIDIA's profiler ranges, as torch's CPU-only build answers them.

Every call raises torch's RuntimeError "NVTX functions not installed." (``range_start`` and
``range_end`` raise its AttributeError), so a profiling script should guard them with
``torch.cuda.is_available()``, as it must for torch's CPU build.

Example:
    >>> import gradsum
    >>> try:
    ...     gradsum.cuda.nvtx.range_push("forward")
    ... except RuntimeError as e:
    ...     print(str(e).split(".")[0])
    NVTX functions not installed
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["mark", "range", "range_end", "range_pop", "range_push", "range_start"]


def _not_installed() -> RuntimeError:
    return RuntimeError("NVTX functions not installed. Are you sure you have a CUDA build? "
                        "gradsum runs on the CPU only: guard profiling ranges with "
                        "torch.cuda.is_available().")


def range_push(msg: str) -> int:
    """torch's CPU build: RuntimeError "NVTX functions not installed."."""
    raise _not_installed()


def range_pop() -> int:
    """torch's CPU build: RuntimeError "NVTX functions not installed."."""
    raise _not_installed()


def mark(msg: str) -> None:
    """torch's CPU build: RuntimeError "NVTX functions not installed."."""
    raise _not_installed()


def range_start(msg: str) -> int:
    """torch's CPU build raises AttributeError (its stub lacks ``rangeStartA``)."""
    raise AttributeError("'_NVTXStub' object has no attribute 'rangeStartA': NVTX is not "
                         "installed (gradsum runs on the CPU only).")


def range_end(range_id: int) -> None:
    """torch's CPU build raises AttributeError (its stub lacks ``rangeEnd``)."""
    raise AttributeError("'_NVTXStub' object has no attribute 'rangeEnd': NVTX is not "
                         "installed (gradsum runs on the CPU only).")


@contextlib.contextmanager
def range(msg: str, *args: Any, **kwargs: Any) -> Iterator[None]:
    """A profiler range around the block: entering it raises as :func:`range_push`."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
