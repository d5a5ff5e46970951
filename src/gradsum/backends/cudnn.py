"""``gradsum.backends.cudnn``: torch.backends.cudnn as torch's CPU-only build answers it.

cuDNN is not available (:func:`is_available` is False, :func:`version` None), and its switches
are kept as torch keeps them, so ``cudnn.benchmark = True`` and ``cudnn.deterministic = True``
run unchanged (they select nothing on the CPU). Assigning a non-bool raises torch's
RuntimeError.

Example:
    >>> import gradsum.backends.cudnn as cudnn
    >>> cudnn.benchmark = True
    >>> cudnn.benchmark, cudnn.is_available(), cudnn.version()
    (True, False, None)
    >>> cudnn.benchmark = False
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Iterator
from typing import Any

__all__ = ["flags", "is_acceptable", "is_available", "version"]

_flags: dict[str, Any] = {
    "enabled": True, "benchmark": False, "benchmark_limit": None, "deterministic": False,
    "allow_tf32": True, "fp32_precision": "none",
}

# the setter each flag's error names in torch
_SETTERS = {"enabled": "set_enabled_cudnn", "benchmark": "set_benchmark_cudnn",
            "deterministic": "set_deterministic_cudnn", "allow_tf32": "set_allow_tf32_cublas"}


def is_available() -> bool:
    """Whether cuDNN can be used: False (gradsum runs on the CPU)."""
    return False


def version() -> int | None:
    """cuDNN's version: None (it is not there)."""
    return None


def is_acceptable(tensor: Any) -> bool:
    """Whether cuDNN would take ``tensor``: False (no tensor is on a GPU)."""
    return False


def _set(name: str, value: Any) -> None:
    if name in _SETTERS and not isinstance(value, bool):
        raise RuntimeError(f"{_SETTERS[name]} expects a bool, but got {type(value).__name__}")
    _flags[name] = value


@contextlib.contextmanager
def flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int = 10,
          deterministic: bool = False, allow_tf32: bool = True,
          fp32_precision: str = "none") -> Iterator[None]:
    """Set every cuDNN switch inside the block (torch's defaults for those not given);
    restored afterwards."""
    prev = dict(_flags)
    try:
        for name, value in (("enabled", enabled), ("benchmark", benchmark),
                            ("benchmark_limit", benchmark_limit),
                            ("deterministic", deterministic), ("allow_tf32", allow_tf32),
                            ("fp32_precision", fp32_precision)):
            _set(name, value)
        yield
    finally:
        _flags.clear()
        _flags.update(prev)


class _CudnnModule(types.ModuleType):
    """Makes the switches live module attributes (read and assigned), as torch's."""

    def __getattr__(self, name: str) -> Any:
        if name in _flags:
            return _flags[name]
        raise AttributeError(f"module 'gradsum.backends.cudnn' has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _flags:
            _set(name, value)
        else:
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _CudnnModule
