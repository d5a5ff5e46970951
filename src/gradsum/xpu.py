"""``gradsum.xpu``: torch.xpu (Intel GPUs) as torch's CPU-only build answers it.

:func:`is_available` is False and :func:`device_count` 0, seeding and the memory counters
answer as there (accepted; 0), and the calls that need a device raise that build's
``AssertionError: Torch not compiled with XPU enabled``.

Example:
    >>> import gradsum as torch
    >>> torch.xpu.is_available(), torch.xpu.device_count(), torch.xpu.memory_allocated()
    (False, 0, 0)
"""

from __future__ import annotations

from typing import Any

from gradsum import _device

__all__ = [
    "current_device", "device_count", "empty_cache", "get_device_name",
    "get_device_properties", "get_rng_state", "get_rng_state_all", "init", "initial_seed",
    "is_available", "is_bf16_supported", "is_initialized", "manual_seed", "manual_seed_all",
    "max_memory_allocated", "max_memory_reserved", "mem_get_info", "memory_allocated",
    "memory_reserved", "seed", "seed_all", "set_device", "synchronize",
]


def _no_xpu() -> BaseException:
    return _device.not_compiled("xpu")


def is_available() -> bool:
    """Whether an XPU can be used: False."""
    return False


def device_count() -> int:
    """The number of XPUs: 0."""
    return 0


def is_initialized() -> bool:
    """Whether XPU has been initialised: False."""
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether the current XPU supports bfloat16: False (there is none)."""
    return False


def init() -> None:
    """``AssertionError: Torch not compiled with XPU enabled``."""
    raise _no_xpu()


def current_device() -> int:
    """``AssertionError: Torch not compiled with XPU enabled``."""
    raise _no_xpu()


def set_device(device: Any) -> None:
    """``AssertionError: Torch not compiled with XPU enabled``."""
    raise _no_xpu()


def synchronize(device: Any = None) -> None:
    """``AssertionError: Torch not compiled with XPU enabled``."""
    raise _no_xpu()


def get_device_name(device: Any = None) -> str:
    """``AssertionError: Torch not compiled with XPU enabled``."""
    raise _no_xpu()


def get_device_properties(device: Any = None) -> Any:
    """``AssertionError: Torch not compiled with XPU enabled``."""
    raise _no_xpu()


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """``AssertionError: Torch not compiled with XPU enabled``."""
    raise _no_xpu()


def initial_seed() -> int:
    """``AssertionError: Torch not compiled with XPU enabled``."""
    raise _no_xpu()


def get_rng_state(device: Any = "xpu") -> Any:
    """``AssertionError: Torch not compiled with XPU enabled``."""
    raise _no_xpu()


def get_rng_state_all() -> list[Any]:
    """Every XPU's generator state: ``[]``."""
    return []


def manual_seed(seed: int) -> None:
    """Silently ignored without XPU, as in torch."""
    int(seed)


def manual_seed_all(seed: int) -> None:
    """Silently ignored without XPU, as in torch."""
    int(seed)


def seed() -> None:
    """Silently ignored without XPU, as in torch."""


def seed_all() -> None:
    """Silently ignored without XPU, as in torch."""


def empty_cache() -> None:
    """Nothing to release (XPU is not initialised)."""


def memory_allocated(device: Any = None) -> int:
    """XPU memory occupied by tensors: 0."""
    return 0


def max_memory_allocated(device: Any = None) -> int:
    """The peak of :func:`memory_allocated`: 0."""
    return 0


def memory_reserved(device: Any = None) -> int:
    """XPU memory held by the caching allocator: 0."""
    return 0


def max_memory_reserved(device: Any = None) -> int:
    """The peak of :func:`memory_reserved`: 0."""
    return 0
