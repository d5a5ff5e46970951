"""``gradsum.cuda.amp`` (``torch.cuda.amp``): torch's deprecated CUDA spellings of autocast and
GradScaler. Each warns as torch's (FutureWarning: use ``torch.amp.X('cuda', ...)``), and on
this CPU-only build then warns again and disables itself, as torch's CPU build does.

Example:
    >>> import warnings
    >>> import gradsum
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     scaler = gradsum.cuda.amp.GradScaler()
    >>> scaler.is_enabled(), scaler.get_scale()
    (False, 1.0)
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

from gradsum import _dtype as D
from gradsum.amp import autocast_mode
from gradsum.amp import grad_scaler as _grad_scaler
from gradsum.amp.grad_scaler import OptState  # noqa: F401  (torch keeps it importable here)

__all__ = ["GradScaler", "amp_definitely_not_available", "autocast", "custom_bwd",
           "custom_fwd"]


def amp_definitely_not_available() -> bool:
    """True: this build has no CUDA (torch's CPU build answers the same)."""
    return True


class autocast(autocast_mode.autocast):
    """Deprecated: ``gradsum.amp.autocast("cuda", ...)``, which this CPU build disables."""

    def __init__(self, enabled: bool = True, dtype: D.dtype = D.float16,
                 cache_enabled: bool = True) -> None:
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_grad_scaler.GradScaler):
    """Deprecated: ``gradsum.amp.GradScaler("cuda", ...)``, which this CPU build disables."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)


def custom_fwd(fwd: Any = None, *, cast_inputs: D.dtype | None = None) -> Any:
    """Deprecated: ``gradsum.amp.custom_fwd(device_type="cuda", ...)``."""
    warnings.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.",
                  FutureWarning, stacklevel=2)
    return functools.partial(autocast_mode.custom_fwd, device_type="cuda")(
        fwd=fwd, cast_inputs=cast_inputs)


def custom_bwd(bwd: Any = None) -> Any:
    """Deprecated: ``gradsum.amp.custom_bwd(device_type="cuda")``."""
    warnings.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.",
                  FutureWarning, stacklevel=2)
    return functools.partial(autocast_mode.custom_bwd, device_type="cuda")(bwd)
