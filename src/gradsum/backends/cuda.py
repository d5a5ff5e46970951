"""``gradsum.backends.cuda``: torch.backends.cuda as torch's CPU-only build answers it.

:func:`is_built` is False. ``matmul.allow_tf32`` is tied to
:func:`gradsum.get_float32_matmul_precision` as in torch (True means ``'high'``); the other
``matmul`` switches and the scaled-dot-product-attention kernel switches are kept as torch
keeps them (they choose GPU kernels; gradsum's attention is one CPU implementation).

Example:
    >>> import gradsum
    >>> gradsum.backends.cuda.matmul.allow_tf32 = True
    >>> gradsum.get_float32_matmul_precision()
    'high'
    >>> gradsum.backends.cuda.matmul.allow_tf32 = False
    >>> gradsum.backends.cuda.is_built(), gradsum.backends.cuda.flash_sdp_enabled()
    (False, True)
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

from gradsum import _process_settings

__all__ = [
    "cudnn_sdp_enabled", "enable_cudnn_sdp", "enable_flash_sdp", "enable_math_sdp",
    "enable_mem_efficient_sdp", "flash_sdp_enabled", "is_built", "math_sdp_enabled", "matmul",
    "mem_efficient_sdp_enabled", "sdp_kernel",
]


def is_built() -> bool:
    """Whether gradsum was built with CUDA: False."""
    return False


_reduced = {"allow_fp16_reduced_precision_reduction": True,
            "allow_bf16_reduced_precision_reduction": True,
            "allow_fp16_accumulation": False}


class cuBLASModule:
    """``backends.cuda.matmul``: cuBLAS's switches, as torch's object (unknown names raise
    AttributeError)."""

    def __getattr__(self, name: str) -> Any:
        if name == "allow_tf32":
            return _process_settings.get_float32_matmul_precision() != "highest"
        if name in _reduced:
            return _reduced[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "allow_tf32":
            if not isinstance(value, bool):
                raise RuntimeError("set_allow_tf32_cublas expects a bool, but got "
                                   f"{type(value).__name__}")
            _process_settings.set_float32_matmul_precision("high" if value else "highest")
        elif name in _reduced:
            flag = value[0] if isinstance(value, (list, tuple)) and value else value
            if not isinstance(flag, bool):
                raise TypeError(f"{name} expects a bool or a tuple/list of bools, but got "
                                f"{type(value)!r}")
            _reduced[name] = flag
        else:
            raise AttributeError(f"Unknown attribute {name}")


matmul = cuBLASModule()

_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def flash_sdp_enabled() -> bool:
    """Whether the flash attention kernel may be chosen (torch's switch; default True)."""
    return _sdp["flash"]


def mem_efficient_sdp_enabled() -> bool:
    """Whether the memory-efficient attention kernel may be chosen (default True)."""
    return _sdp["mem_efficient"]


def math_sdp_enabled() -> bool:
    """Whether the math attention kernel may be chosen (default True)."""
    return _sdp["math"]


def cudnn_sdp_enabled() -> bool:
    """Whether the cuDNN attention kernel may be chosen (default True)."""
    return _sdp["cudnn"]


def enable_flash_sdp(enabled: bool) -> None:
    """Allow (or not) the flash attention kernel."""
    _sdp["flash"] = bool(enabled)


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Allow (or not) the memory-efficient attention kernel."""
    _sdp["mem_efficient"] = bool(enabled)


def enable_math_sdp(enabled: bool) -> None:
    """Allow (or not) the math attention kernel."""
    _sdp["math"] = bool(enabled)


def enable_cudnn_sdp(enabled: bool) -> None:
    """Allow (or not) the cuDNN attention kernel."""
    _sdp["cudnn"] = bool(enabled)


@contextlib.contextmanager
def sdp_kernel(enable_flash: bool = True, enable_math: bool = True,
               enable_mem_efficient: bool = True, enable_cudnn: bool = True) -> Iterator[dict]:
    """Deprecated (warns, as torch's): set the attention kernel switches inside the block."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this "
                  "context manager will be removed. Please see `torch.nn.attention.sdpa_kernel()`"
                  " for the new context manager, with updated signature.", FutureWarning,
                  stacklevel=3)
    prev = dict(_sdp)
    _sdp.update(flash=bool(enable_flash), math=bool(enable_math),
                mem_efficient=bool(enable_mem_efficient), cudnn=bool(enable_cudnn))
    try:
        yield {}
    finally:
        _sdp.clear()
        _sdp.update(prev)
