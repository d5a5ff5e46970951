"""``gradsum.mps``: torch.mps (Apple's Metal GPUs) as torch's build without MPS answers it.

:func:`is_available` is False and :func:`device_count` 0; :func:`manual_seed` is accepted and
does nothing, as in torch; the other calls raise torch's RuntimeError "Cannot execute ...()
without MPS backend."

Example:
    >>> import gradsum as torch
    >>> torch.mps.is_available(), torch.mps.device_count()
    (False, 0)
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "current_allocated_memory", "device_count", "driver_allocated_memory", "empty_cache",
    "get_rng_state", "is_available", "manual_seed", "recommended_max_memory", "seed",
    "set_rng_state", "synchronize",
]


def _no_mps(call: str) -> RuntimeError:
    return RuntimeError(f"Cannot execute {call}() without MPS backend: gradsum runs on the "
                        "CPU only. Guard the call with torch.backends.mps.is_available().")


def is_available() -> bool:
    """Whether an MPS device can be used: False."""
    return False


def device_count() -> int:
    """The number of MPS devices: 0."""
    return 0


def manual_seed(seed: int) -> None:
    """Seed the MPS generator: silently ignored without MPS, as in torch."""
    int(seed)


def seed() -> None:
    """torch's RuntimeError: "Cannot execute getDefaultGenerator() without MPS backend."."""
    raise _no_mps("getDefaultGenerator")


def get_rng_state(device: Any = "mps") -> Any:
    """torch's RuntimeError: "Cannot execute getDefaultGenerator() without MPS backend."."""
    raise _no_mps("getDefaultGenerator")


def set_rng_state(new_state: Any, device: Any = "mps") -> None:
    """torch's RuntimeError: "Cannot execute getDefaultGenerator() without MPS backend."."""
    raise _no_mps("getDefaultGenerator")


def synchronize() -> None:
    """torch's RuntimeError: "Cannot execute deviceSynchronize() without MPS backend."."""
    raise _no_mps("deviceSynchronize")


def empty_cache() -> None:
    """torch's RuntimeError: "Cannot execute emptyCache() without MPS backend."."""
    raise _no_mps("emptyCache")


def current_allocated_memory() -> int:
    """torch's RuntimeError: "Cannot execute getCurrentAllocatedMemory() without MPS backend."."""
    raise _no_mps("getCurrentAllocatedMemory")


def driver_allocated_memory() -> int:
    """torch's RuntimeError: "Cannot execute getDriverAllocatedMemory() without MPS backend."."""
    raise _no_mps("getDriverAllocatedMemory")


def recommended_max_memory() -> int:
    """torch's RuntimeError: "Cannot execute getRecommendedMaxMemory() without MPS backend."."""
    raise _no_mps("getRecommendedMaxMemory")
