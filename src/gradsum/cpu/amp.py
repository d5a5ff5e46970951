"""``gradsum.cpu.amp`` (``torch.cpu.amp``): torch's deprecated CPU spellings of autocast and
GradScaler, which warn as torch's (FutureWarning: use ``torch.amp.X('cpu', ...)``) and then
work as :class:`gradsum.amp.autocast` / :class:`gradsum.amp.GradScaler` on ``"cpu"``.

Example:
    >>> import warnings
    >>> import gradsum
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     with gradsum.cpu.amp.autocast():
    ...         print(gradsum.get_autocast_dtype("cpu"), gradsum.is_autocast_enabled("cpu"))
    gradsum.bfloat16 True
"""

from __future__ import annotations

import warnings

from gradsum import _dtype as D
from gradsum.amp import autocast_mode, grad_scaler

__all__ = ["GradScaler", "autocast"]


class autocast(autocast_mode.autocast):
    """Deprecated: ``gradsum.amp.autocast("cpu", ...)``."""

    def __init__(self, enabled: bool = True, dtype: D.dtype = D.bfloat16,
                 cache_enabled: bool = True) -> None:
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(grad_scaler.GradScaler):
    """Deprecated: ``gradsum.amp.GradScaler("cpu", ...)``."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        warnings.warn("`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)
