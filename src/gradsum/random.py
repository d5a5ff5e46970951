"""``torch.random``: the default generator's functions and :func:`fork_rng`.

The functions are the top-level ones (``gradsum.random.manual_seed is gradsum.manual_seed``);
this module exists because scripts written for torch spell them ``torch.random.X``.

Example:
    >>> import gradsum
    >>> _ = gradsum.random.manual_seed(0)
    >>> with gradsum.random.fork_rng():
    ...     inside = gradsum.rand(2)
    >>> bool((gradsum.rand(2) == inside).all())  # the state was restored on leaving
    True
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

from gradsum import _device
from gradsum._random import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed",
           "manual_seed", "seed", "set_rng_state"]


@contextlib.contextmanager
def fork_rng(devices: Iterable[Any] | None = None, enabled: bool = True,
             _caller: str = "fork_rng", _devices_kw: str = "devices",
             device_type: str = "cuda") -> Iterator[None]:
    """Restore the default generator's state on leaving the block, as ``torch.random.fork_rng``.

    Random numbers drawn inside do not change the stream outside. ``devices`` and
    ``device_type`` name accelerator generators to fork as well; gradsum has none, so only
    an empty ``devices`` (or ``None``: no device found to fork) is accepted, as in torch's CPU
    build. ``enabled=False`` makes the block a no-op.

    Raises:
        AssertionError: ``devices`` names a ``cuda`` or ``xpu`` device ("Torch not compiled
            with CUDA enabled", torch's CPU-build error).
        RuntimeError: ``devices`` names a device of another type.
    """
    if not enabled:
        yield
        return
    if devices is not None and list(devices):
        if device_type in ("cuda", "xpu"):
            raise _device.not_compiled(device_type)
        raise RuntimeError(
            f"Cannot execute getDefaultGenerator() without {device_type.upper()} backend: "
            f"{_devices_kw}={list(devices)!r} names {device_type} devices, which gradsum (CPU "
            f"only) does not have; pass {_devices_kw}=[] or leave it None.")
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
