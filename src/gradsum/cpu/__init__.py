"""``gradsum.cpu`` (``torch.cpu``): the CPU device module, as torch's.

Example:
    >>> import gradsum
    >>> gradsum.cpu.is_available(), gradsum.cpu.device_count(), gradsum.cpu.current_device()
    (True, 1, 'cpu')
"""

from __future__ import annotations

from typing import Any

from gradsum.cpu import amp

__all__ = ["amp", "current_device", "device_count", "is_available", "is_initialized",
           "synchronize"]


def is_available() -> bool:
    """Always True (torch: the CPU is always available)."""
    return True


def device_count() -> int:
    """Always 1."""
    return 1


def current_device() -> str:
    """Always ``'cpu'``."""
    return "cpu"


def is_initialized() -> bool:
    """Always True."""
    return True


def synchronize(device: Any = None) -> None:
    """Nothing to wait for: CPU work is synchronous."""
