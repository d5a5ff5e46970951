"""``gradsum.autocast`` (``torch.autocast``): mixed precision regions, as torch's CPU build.

On the CPU, ops on torch's lower-precision list (``linear``, ``matmul``, the convolutions ...)
compute in bfloat16 (the default) or float16 inside the region, ops on its fp32 list (the
losses, ``prod``, ...) in float32, and every other op in the dtypes it is given: see
:mod:`gradsum._autocast` for the lists and the cast. Gradients come back in each parameter's
own dtype, through the casts. ``autocast("cuda")`` on this CPU-only build warns and disables
itself, as torch's does; a CPU dtype other than bfloat16/float16 warns and disables.

Example:
    >>> import gradsum
    >>> lin = gradsum.nn.Linear(3, 2)
    >>> with gradsum.autocast("cpu", dtype=gradsum.bfloat16):
    ...     y = lin(gradsum.ones(1, 3))
    >>> y.dtype, lin.weight.dtype
    (gradsum.bfloat16, gradsum.float32)
"""

from __future__ import annotations

import collections.abc
import functools
import re
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from gradsum import _autocast
from gradsum import _dtype as D
from gradsum._backend import xp
from gradsum._device import DEVICE_TYPES
from gradsum._tensor import Tensor

__all__ = ["autocast", "autocast_decorator", "custom_bwd", "custom_fwd",
           "is_autocast_available"]

FnT = TypeVar("FnT", bound=Callable[..., Any])

#: the lower-precision dtypes torch's autocast accepts on a device other than CUDA
_SUPPORTED = (D.bfloat16, D.float16)


def _check_device_type(device_type: str) -> None:
    """torch's device-string check of ``device_type`` (RuntimeError for an unknown one)."""
    if not re.fullmatch(r"[a-zA-Z_]+(:([1-9][0-9]*|0))?", device_type):
        raise RuntimeError(f"Invalid device string: '{device_type}'")
    if device_type.split(":")[0] not in DEVICE_TYPES:
        raise RuntimeError(
            f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of device string: "
            f"{device_type}"
        )


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast knows ``device_type`` (torch's answer: True for cpu, cuda, mps, xla,
    xpu, hpu ..., even where the device itself is absent; False for meta).

    Example:
        >>> import gradsum
        >>> gradsum.amp.is_autocast_available("cpu"), gradsum.amp.is_autocast_available("meta")
        (True, False)
    """
    _check_device_type(device_type)
    return device_type in _autocast.DEFAULT_DTYPES


def autocast_decorator(autocast_instance: autocast, func: FnT) -> FnT:
    """``func`` run inside ``autocast_instance`` (what ``@autocast(...)`` returns)."""

    @functools.wraps(func)
    def decorate_autocast(*args: Any, **kwargs: Any) -> Any:
        with autocast_instance:
            return func(*args, **kwargs)

    return decorate_autocast  # type: ignore[return-value]


class autocast:
    """A mixed-precision region, as a context manager or a decorator (torch's ``autocast``).

    Args:
        device_type: ``"cpu"`` computes listed ops in ``dtype``; ``"cuda"`` (and the other
            accelerators) warn and disable themselves on this CPU-only build, as torch's.
        dtype: the lower-precision dtype, ``bfloat16`` (the CPU default) or ``float16``;
            ``None`` takes :func:`gradsum.get_autocast_dtype`.
        enabled: ``False`` turns autocast off inside the region (nested regions restore).
        cache_enabled: cache the casts of parameters for the region (the default: True).

    Example:
        >>> import gradsum
        >>> with gradsum.autocast("cpu"):
        ...     print(gradsum.mm(gradsum.ones(2, 2), gradsum.ones(2, 2)).dtype)
        ...     with gradsum.autocast("cpu", enabled=False):
        ...         print(gradsum.mm(gradsum.ones(2, 2), gradsum.ones(2, 2)).dtype)
        gradsum.bfloat16
        gradsum.float32
    """

    def __init__(self, device_type: str, dtype: D.dtype | None = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(device_type):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{device_type}'"
            )
        self._cache_enabled = (_autocast._state.cache_enabled if cache_enabled is None
                               else cache_enabled)
        name = device_type.upper()
        if enabled:
            if device_type == "cuda":  # (torch's CPU build: amp_definitely_not_available())
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                              "autocast.", stacklevel=2)
                enabled = False
            elif self.fast_dtype not in _SUPPORTED:
                warnings.warn(
                    f"In {name} autocast, but the target dtype is not supported. Disabling "
                    f"autocast.\n{name} Autocast only supports dtypes of torch.bfloat16, "
                    "torch.float16 currently.", stacklevel=2)
                enabled = False
            elif isinstance(self.fast_dtype, D._UnavailableDtype):
                raise TypeError(
                    f"autocast({device_type!r}) would compute in {self.fast_dtype.name} (the "
                    f"default on the CPU), which needs the optional ml_dtypes package: pip "
                    f"install ml_dtypes (or gradsum[bfloat16]); or pass dtype=gradsum.float16")
        self._enabled = enabled

    def __enter__(self) -> autocast:
        st = _autocast._state
        self.prev_cache_enabled = st.cache_enabled
        self.prev = _autocast.is_enabled(self.device)
        self.prev_fastdtype = _autocast.get_dtype(self.device)
        _autocast.set_enabled(self.device, self._enabled)
        _autocast.set_dtype(self.device, self.fast_dtype)
        st.nesting += 1
        st.cache_enabled = self._cache_enabled
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> bool:
        st = _autocast._state
        st.nesting -= 1
        if st.nesting == 0:  # (the outermost region: the cached casts go)
            _autocast.clear_cache()
        _autocast.set_enabled(self.device, self.prev)
        _autocast.set_dtype(self.device, self.prev_fastdtype)
        st.cache_enabled = self.prev_cache_enabled
        return False

    def __call__(self, func: FnT) -> FnT:
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. Did you "
                "mean to use autocast as a context manager? For example:\n"
                "    with torch.autocast(device_type=...):\n        output = model(input)"
            )
        return autocast_decorator(self, func)


# -- the module-level state functions of torch (torch.is_autocast_enabled, ...) --------------
def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type``; without one, torch's GPU ("cuda") state.

    Example:
        >>> import gradsum
        >>> with gradsum.autocast("cpu"):
        ...     gradsum.is_autocast_enabled("cpu"), gradsum.is_autocast_enabled()
        (True, False)
    """
    return _autocast.is_enabled("cuda" if device_type is None else device_type)


def set_autocast_enabled(device_type: Any, enabled: bool | None = None) -> None:
    """Turn autocast on or off for ``device_type`` (torch also takes just the flag: cuda)."""
    if enabled is None:
        device_type, enabled = "cuda", bool(device_type)
    _autocast.set_enabled(device_type, enabled)


def get_autocast_dtype(device_type: str) -> D.dtype:
    """The dtype autocast uses on ``device_type`` (bfloat16 for cpu, float16 for cuda).

    Example:
        >>> import gradsum
        >>> gradsum.get_autocast_dtype("cpu"), gradsum.get_autocast_dtype("cuda")
        (gradsum.bfloat16, gradsum.float16)
    """
    try:
        return _autocast.get_dtype(device_type)
    except KeyError:
        _check_device_type(device_type)
        raise RuntimeError("unsupported scalarType") from None


def set_autocast_dtype(device_type: str, dtype: D.dtype) -> None:
    """Set the dtype autocast uses on ``device_type``."""
    _autocast.set_dtype(device_type, dtype)


def is_autocast_cache_enabled() -> bool:
    """Whether autocast regions cache the casts of parameters (True by default)."""
    return _autocast._state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _autocast._state.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Drop the cached casts (torch does so when the outermost region exits)."""
    _autocast.clear_cache()


def autocast_increment_nesting() -> int:
    _autocast._state.nesting += 1
    return _autocast._state.nesting


def autocast_decrement_nesting() -> int:
    _autocast._state.nesting -= 1
    return _autocast._state.nesting


def _deprecated_getter(name: str, device_type: str, what: str) -> Callable[..., Any]:
    def fn() -> Any:
        warnings.warn(f"torch.{name}() is deprecated. Please use torch.{what}('{device_type}') "
                      "instead.", DeprecationWarning, stacklevel=2)
        return (is_autocast_enabled if what == "is_autocast_enabled" else
                get_autocast_dtype)(device_type)

    fn.__name__ = name
    fn.__doc__ = f"Deprecated: ``{what}('{device_type}')``, with torch's DeprecationWarning."
    return fn


is_autocast_cpu_enabled = _deprecated_getter("is_autocast_cpu_enabled", "cpu",
                                             "is_autocast_enabled")
get_autocast_cpu_dtype = _deprecated_getter("get_autocast_cpu_dtype", "cpu",
                                            "get_autocast_dtype")
get_autocast_gpu_dtype = _deprecated_getter("get_autocast_gpu_dtype", "cuda",
                                            "get_autocast_dtype")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """Deprecated: ``set_autocast_enabled('cpu', enabled)``."""
    warnings.warn("torch.set_autocast_cpu_enabled(enabled) is deprecated. Please use "
                  "torch.set_autocast_enabled('cpu', enabled) instead.", DeprecationWarning,
                  stacklevel=2)
    _autocast.set_enabled("cpu", enabled)


def set_autocast_cpu_dtype(dtype: D.dtype) -> None:
    """Deprecated: ``set_autocast_dtype('cpu', dtype)``."""
    warnings.warn("torch.set_autocast_cpu_dtype(dtype) is deprecated. Please use "
                  "torch.set_autocast_dtype('cpu', dtype) instead.", DeprecationWarning,
                  stacklevel=2)
    _autocast.set_dtype("cpu", dtype)


# -- custom autograd Functions ------------------------------------------------------------------
def _cast(value: Any, device_type: str, dtype: D.dtype) -> Any:
    """torch's ``_cast`` of ``custom_fwd``: floating tensors (not float64) of the device to
    ``dtype``, through containers; strings and NumPy arrays pass."""
    if isinstance(value, Tensor):
        eligible = (value.is_floating_point() and device_type == "cpu"
                    and value.dtype is not D.float64)
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes, xp.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        iterable = (_cast(v, device_type, dtype) for v in value)
        return type(value)(iterable) if isinstance(value, (list, tuple)) else iterable
    return value


def custom_fwd(fwd: Callable[..., Any] | None = None, *, device_type: str,
               cast_inputs: D.dtype | None = None) -> Any:
    """Decorate the ``forward`` of a custom :class:`gradsum.autograd.Function` for autocast:
    with ``cast_inputs``, inside an autocast region its floating tensor inputs are cast to
    that dtype and ``forward`` runs with autocast off; without, it runs in the current state.

    Example:
        >>> import gradsum
        >>> class Square(gradsum.autograd.Function):
        ...     @staticmethod
        ...     @gradsum.amp.custom_fwd(device_type="cpu", cast_inputs=gradsum.float32)
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x * x
        ...     @staticmethod
        ...     @gradsum.amp.custom_bwd(device_type="cpu")
        ...     def backward(ctx, g):
        ...         (x,) = ctx.saved_tensors
        ...         return 2 * x * g
        >>> with gradsum.autocast("cpu"):
        ...     Square.apply(gradsum.ones(2).bfloat16()).dtype
        gradsum.float32
    """
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        args[0]._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        in_autocast = is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if in_autocast:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs),
                           **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd: Callable[..., Any] | None = None, *, device_type: str) -> Any:
    """Decorate the ``backward`` of a custom Function: it runs in the autocast state that its
    ``forward`` (decorated with :func:`custom_fwd`) ran in."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast,
                      dtype=args[0]._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
