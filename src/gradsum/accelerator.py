"""``gradsum.accelerator``: torch.accelerator as torch's CPU-only build answers it.

There is no accelerator: :func:`is_available` is False, :func:`current_accelerator` is None,
:func:`device_count` is 0, and the operations that need one raise torch's RuntimeError
"Cannot access accelerator device when none is available."

Example:
    >>> import gradsum as torch
    >>> acc = torch.accelerator.current_accelerator()
    >>> device = acc if torch.accelerator.is_available() else torch.device("cpu")
    >>> acc, device
    (None, device(type='cpu'))
"""

from __future__ import annotations

import warnings
from typing import Any

from gradsum import _device

__all__ = [
    "current_accelerator", "current_device_idx", "current_device_index", "current_stream",
    "device_count", "device_index", "empty_cache", "get_memory_info", "is_available",
    "max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved",
    "memory_stats", "reset_accumulated_memory_stats", "reset_peak_memory_stats",
    "set_device_idx", "set_device_index", "set_stream", "synchronize",
]


def is_available() -> bool:
    """Whether an accelerator is available: False."""
    return False


def current_accelerator(check_available: bool = False) -> _device.device | None:
    """The accelerator's device type as a device: None (there is none)."""
    return None


def device_count() -> int:
    """The number of accelerator devices: 0."""
    return 0


def current_device_index() -> int:
    """torch's RuntimeError: "Cannot access accelerator device when none is available."."""
    raise _device.no_accelerator()


def current_device_idx() -> int:
    """Deprecated name of :func:`current_device_index` (warns, then raises as it)."""
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    raise _device.no_accelerator()


def set_device_index(device: Any) -> None:
    """torch's RuntimeError: "Cannot access accelerator device when none is available."."""
    raise _device.no_accelerator()


def set_device_idx(device: Any) -> None:
    """Deprecated name of :func:`set_device_index` (warns, then raises as it)."""
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    raise _device.no_accelerator()


def synchronize(device: Any = None) -> None:
    """torch's RuntimeError: "Cannot access accelerator device when none is available."."""
    raise _device.no_accelerator()


def current_stream(device: Any = None) -> Any:
    """torch's RuntimeError: "Cannot access accelerator device when none is available."."""
    raise _device.no_accelerator()


def set_stream(stream: Any) -> None:
    """torch's RuntimeError: "Cannot access accelerator device when none is available."."""
    raise _device.no_accelerator()


def empty_cache() -> None:
    """torch's RuntimeError: "Cannot access accelerator device when none is available."."""
    raise _device.no_accelerator()


def memory_stats(device_index: Any = None, /) -> dict[str, Any]:
    """torch's RuntimeError: "Cannot access accelerator device when none is available."."""
    raise _device.no_accelerator()


def memory_allocated(device_index: Any = None, /) -> int:
    """torch's RuntimeError: "Cannot access accelerator device when none is available."."""
    raise _device.no_accelerator()


def max_memory_allocated(device_index: Any = None, /) -> int:
    """torch's RuntimeError: "Cannot access accelerator device when none is available."."""
    raise _device.no_accelerator()


def memory_reserved(device_index: Any = None, /) -> int:
    """torch's RuntimeError: "Cannot access accelerator device when none is available."."""
    raise _device.no_accelerator()


def max_memory_reserved(device_index: Any = None, /) -> int:
    """torch's RuntimeError: "Cannot access accelerator device when none is available."."""
    raise _device.no_accelerator()


def reset_peak_memory_stats(device_index: Any = None, /) -> None:
    """torch's RuntimeError: "Cannot access accelerator device when none is available."."""
    raise _device.no_accelerator()


def reset_accumulated_memory_stats(device_index: Any = None, /) -> None:
    """torch's RuntimeError: "Cannot access accelerator device when none is available."."""
    raise _device.no_accelerator()


def get_memory_info(device_index: Any = None, /) -> tuple[int, int]:
    """torch's RuntimeError: "Cannot access accelerator device when none is available."."""
    raise _device.no_accelerator()


class device_index:
    """Context manager selecting an accelerator device: entering it raises torch's
    RuntimeError (there is none)."""

    def __init__(self, device: Any, /) -> None:
        self.idx = device

    def __enter__(self) -> None:
        if self.idx is not None:
            raise _device.no_accelerator()

    def __exit__(self, *exc: Any) -> None:
        return None
