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
import functools
import os
import sys
import types
from collections.abc import Iterator
from typing import Any

__all__ = ["flags", "is_available"]

_flags: dict[str, Any] = {"enabled": True, "deterministic": False}


def is_available() -> bool:
    """Whether oneDNN kernels are available: False in gradsum."""
    return False


#: oneDNN ISA caps (``ONEDNN_MAX_CPU_ISA``) that still admit its AVX-512 kernels
_AVX512_ISAS = ("AVX512", "AVX10", "ALL", "DEFAULT")


@functools.lru_cache(maxsize=1)
def _avx512_core() -> bool:
    """Whether torch's oneDNN would run its AVX-512 kernels on this CPU: AVX-512 F, BW, VL
    and DQ present (NumPy's CPU feature table) and ``ONEDNN_MAX_CPU_ISA`` (or
    ``DNNL_MAX_CPU_ISA``) not capping it below. oneDNN chooses by the CPU alone
    (``ATEN_CPU_CAPABILITY`` does not reach it)."""
    from gradsum._backend import cpu_features

    features = cpu_features()  # (empty for an unknown NumPy layout: the common AVX2 kernels)
    if not all(features.get(f, False) for f in ("AVX512F", "AVX512BW", "AVX512VL", "AVX512DQ")):
        return False
    return _cap_admits_avx512(os.environ.get("ONEDNN_MAX_CPU_ISA")
                              or os.environ.get("DNNL_MAX_CPU_ISA") or "")


def _cap_admits_avx512(cap: str) -> bool:
    """Whether oneDNN's ISA cap ``cap`` (empty: none) admits its AVX-512 kernels."""
    return not cap.strip() or cap.strip().upper().startswith(_AVX512_ISAS)


def onednn_gelu_nan_at_inf() -> bool:
    """Whether torch's exact float32 GELU of a contiguous tensor (more than one element) gives
    nan at +inf here: oneDNN's ``gelu_erf``, which torch uses for it while oneDNN is enabled
    (:data:`enabled`), gives nan there in its AVX-512 kernel and inf in its AVX2 one (as
    torch's native kernel does)."""
    return bool(_flags["enabled"]) and _avx512_core()


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
