"""``gradsum.backends.mkldnn``: the oneDNN (MKLDNN) switch.

gradsum has no oneDNN kernels and no ``mkldnn`` tensors, so :func:`is_available` is False
(torch's CPU build, which ships oneDNN, says True: scripts that branch on it then take their
plain-tensor path). ``enabled`` is kept as torch keeps it.

Example:
    >>> import gradsum
    >>> gradsum.backends.mkldnn.is_available(), gradsum.backends.mkldnn.enabled
    (False, True)
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Iterator
from typing import Any

__all__ = ["flags", "is_available"]

_flags: dict[str, Any] = {"enabled": True, "deterministic": False}


def is_available() -> bool:
    """Whether oneDNN kernels are available: False in gradsum."""
    return False


@contextlib.contextmanager
def flags(enabled: bool = False, deterministic: bool = False) -> Iterator[None]:
    """Set the switches inside the block; restored afterwards."""
    prev = dict(_flags)
    _flags.update(enabled=bool(enabled), deterministic=bool(deterministic))
    try:
        yield
    finally:
        _flags.clear()
        _flags.update(prev)


class _MkldnnModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name in _flags:
            return _flags[name]
        raise AttributeError(f"module 'gradsum.backends.mkldnn' has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _flags:
            if not isinstance(value, bool):
                raise RuntimeError(f"set_{name}_mkldnn expects a bool, but got "
                                   f"{type(value).__name__}")
            _flags[name] = value
        else:
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _MkldnnModule
