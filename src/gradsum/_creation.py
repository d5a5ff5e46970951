"""Tensor creation: ``tensor``, ``zeros``/``ones``/``full``/``empty``, ranges, ``eye``, random
tensors and the ``*_like`` variants, with torch's dtype inference.

Example:
    >>> import gradsum
    >>> gradsum.tensor([1, 2]).dtype, gradsum.tensor([1.0, 2]).dtype
    (gradsum.int64, gradsum.float32)
    >>> gradsum.arange(3), gradsum.zeros(2, 2).shape
    (tensor([0, 1, 2]), (2, 2))
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

from gradsum import _device, _memory_format, _random
from gradsum import _dtype as D
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.graph import Node


def _check_device(device: Any, name: str = "zeros") -> None:
    """A factory's ``device=`` (None: the default device) must be the CPU; others raise what
    torch's CPU build raises (see :mod:`gradsum._device`)."""
    _device.check_factory(device, name)


def _check_copy_device(device: Any, name: str) -> None:
    """``tensor``/``as_tensor``'s ``device=`` (None: the default device): torch raises its
    ``to`` errors there."""
    if device is None and _device._state.default is None:
        return
    _device.check_transfer(_device.get_default_device() if device is None else device, name)


def _finish(arr: Any, requires_grad: bool) -> Tensor:
    t = Tensor._make(arr)
    if requires_grad is not False and requires_grad is not None:  # (None: False, as torch)
        if not isinstance(requires_grad, bool):
            t.requires_grad_(requires_grad)  # (refuses a non-bool, like torch's argument check)
        t._require_grad(requires_grad, "factory")
    return t


_PY_SCALARS = frozenset((bool, int, float))


def _infer_scalar_type(obj: Any) -> D.dtype:
    """torch's ``infer_scalar_type``: Python numbers give bool/int64/the default float,
    tensors and NumPy scalars and arrays their own dtype, and a sequence the promotion of its
    items' (the default float when empty)."""
    cls = type(obj)
    if cls is float:
        return D.get_default_dtype()
    if cls is int:
        return D.int64
    if cls is bool:
        return D.bool_
    if isinstance(obj, Tensor):
        return obj.dtype
    if isinstance(obj, (xp.ndarray, xp.generic)):
        return _numpy_dtype(obj.dtype)
    if isinstance(obj, bool):
        return D.bool_
    if isinstance(obj, int):
        return D.int64
    if isinstance(obj, float):
        return D.get_default_dtype()
    if isinstance(obj, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(obj).__name__}'. Pass numbers.")
    if isinstance(obj, complex):
        raise TypeError("gradsum has no complex dtypes: pass the real and imaginary parts as "
                        "two real tensors.")
    if isinstance(obj, (list, tuple, range, memoryview, bytearray)):
        types = set(map(type, obj))
        if types <= _PY_SCALARS:  # the common case, without a call per item
            if float in types or not types:
                return D.get_default_dtype()
            return D.int64 if int in types else D.bool_
        out: D.dtype | None = None
        for item in obj:
            d = _infer_scalar_type(item)
            out = d if out is None else D.promote_types(out, d)
        return out  # type: ignore[return-value]  # (obj is not empty here)
    raise RuntimeError(
        f"Could not infer dtype of {type(obj).__name__}: tensor() takes numbers, (nested) "
        "lists or tuples of numbers, NumPy arrays and tensors."
    )


def _numpy_dtype(np_dtype: Any) -> D.dtype:
    try:
        return D.from_numpy_dtype(np_dtype)
    except TypeError:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np_dtype.type.__name__}. The only "
            "supported types are: " + ", ".join(d.name for d in D._ALL) + ". Convert with "
            ".astype() first."
        ) from None


def _is_sequence(obj: Any) -> bool:
    # (tensors are numbers here, as in torch: a one-element tensor stands for its value)
    return isinstance(obj, (list, tuple, range, memoryview, bytearray, xp.ndarray, str, bytes))


def _sizes(data: Any) -> list[int]:
    """torch's ``compute_sizes``: the shape read along the first items."""
    sizes: list[int] = []
    seq = data
    while _is_sequence(seq):
        if isinstance(seq, str):
            raise ValueError("too many dimensions 'str'")
        n = len(seq)
        sizes.append(n)
        if n == 0:
            break
        seq = seq[0]
    return sizes


def _check_structure(seq: Any, sizes: list[int], dim: int) -> None:
    """Raise torch's error for a ragged nested sequence (``recursive_store``'s checks)."""
    last = dim + 1 == len(sizes)
    for item in seq:
        if last:
            if _is_sequence(item):
                raise TypeError(
                    f"'{type(item).__name__}' object cannot be interpreted as a number: the "
                    f"data is ragged (a sequence where dim {dim} holds numbers)"
                )
            continue
        if not _is_sequence(item):
            raise TypeError(f"not a sequence: dim {dim + 1} of the data holds "
                            f"{type(item).__name__} {item!r} beside sequences")
        if len(item) != sizes[dim + 1]:
            raise ValueError(
                f"expected sequence of length {sizes[dim + 1]} at dim {dim + 1} (got "
                f"{len(item)}). Make the nested lists rectangular."
            )
        _check_structure(item, sizes, dim + 1)


def _untensor(data: Any, integral: bool) -> Any:
    """``data`` with each tensor replaced by its value: a tensor inside a list stands for a
    number, as in torch (only one-element tensors qualify)."""
    if isinstance(data, Tensor):
        if data._array.size != 1:
            if integral:
                raise TypeError("only integer tensors of a single element can be converted "
                                f"to an index (got one of shape {tuple(data.shape)})")
            raise ValueError("only one element tensors can be converted to Python scalars "
                             f"(got one of shape {tuple(data.shape)})")
        return data._array.reshape(()).item()
    if isinstance(data, (list, tuple)):
        return [_untensor(d, integral) for d in data]
    return data


def _has_tensor(data: Any) -> bool:
    for d in data:
        if isinstance(d, Tensor) or (isinstance(d, (list, tuple)) and _has_tensor(d)):
            return True
    return False


def _from_data(data: Any, dtype: D.dtype | None) -> Any:
    """The array of ``tensor(data, dtype)`` with torch's inference and errors."""
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use "
            "sourceTensor.detach().clone() or sourceTensor.detach().clone().requires_grad_(True), "
            "rather than gradsum.tensor(sourceTensor).", UserWarning, stacklevel=3)
        arr = data._array
        return arr.copy() if dtype is None else arr.astype(dtype.np)
    if isinstance(data, xp.ndarray):
        arr = data.astype(dtype.np) if dtype is not None else data.copy()
        _numpy_dtype(arr.dtype)
        return arr
    if isinstance(data, str):
        raise TypeError(f"new(): invalid data type 'str'. Pass numbers, not {data!r}.")
    sizes = _sizes(data)
    if isinstance(data, (list, tuple)) and data and isinstance(data[0], xp.ndarray):
        warnings.warn(
            "Creating a tensor from a list of numpy.ndarrays is extremely slow. Please consider "
            "converting the list to a single numpy.ndarray with numpy.array() before converting "
            "to a tensor.", UserWarning, stacklevel=3)
    target = dtype if dtype is not None else _infer_scalar_type(data)
    if isinstance(data, (list, tuple)) and _has_tensor(data):
        data = _untensor(data, not target.is_floating_point)
    try:
        return xp.array(data, dtype=target.np)
    except (ValueError, TypeError, OverflowError) as e:
        if sizes:
            _check_structure(data, sizes, 0)
        if isinstance(e, TypeError):
            raise
        wrapped = _wrap_unsigned(data, target)
        if wrapped is not None:
            return wrapped
        if target is D.int64 and isinstance(e, OverflowError) and "float" not in str(e):
            raise ValueError("Overflow when unpacking long long: a Python int beyond the "
                             "int64 range") from None
        raise RuntimeError(
            f"value cannot be converted to type {target.name} without overflow ({e})"
        ) from None


def _wrap_unsigned(data: Any, target: D.dtype) -> Any:
    """torch's two's-complement wrap of negative Python ints into an unsigned dtype
    (``tensor(-1, dtype=uint8)`` is 255; values below ``-max`` still overflow), or None."""
    if target.np.kind != "u":
        return None
    try:
        arr = xp.array(data)
    except (ValueError, TypeError, OverflowError):
        return None
    if arr.dtype.kind not in "iu":  # (a negative float still overflows)
        return None
    top = int(xp.iinfo(target.np).max)
    if arr.size and (int(arr.min()) < -top or int(arr.max()) > top):
        return None
    return arr.astype(target.np)


def _check_numpy(arr: Any) -> None:
    # (torch also refuses negative strides; gradsum's arrays may have them: flip makes them)
    _numpy_dtype(arr.dtype)


def tensor(data: Any, dtype: D.dtype | None = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of ``data`` (lists, numbers, NumPy arrays, tensors).

    Example:
        >>> import gradsum
        >>> gradsum.tensor([[1.0, 2.0]], requires_grad=True)
        tensor([[1., 2.]], requires_grad=True)
    """
    _check_copy_device(device, "tensor")
    dtype = D.from_python_type(dtype, "tensor")
    if requires_grad is None:  # (the other factories take None as False; tensor() does not)
        raise TypeError("tensor(): argument 'requires_grad' must be bool, not NoneType. Pass "
                        "requires_grad=False or True.")
    return _finish(_from_data(data, dtype), requires_grad)


def as_tensor(data: Any, dtype: D.dtype | None = None, device: Any = None) -> Tensor:
    """Like :func:`tensor` but shares memory with a NumPy array / tensor when it can."""
    _check_copy_device(device, "as_tensor")
    dtype = D.from_python_type(dtype, "as_tensor")
    if isinstance(data, Tensor):  # (a conversion stays in the graph, as ``data.to(dtype)``)
        return data if dtype is None or data.dtype is dtype else data.to(dtype)
    if isinstance(data, xp.ndarray) and (dtype is None or data.dtype == dtype.np):
        _check_numpy(data)
        return Tensor._make(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(arr: Any) -> Tensor:
    """A tensor sharing memory with the NumPy array ``arr``."""
    if not isinstance(arr, xp.ndarray):
        name = type(arr).__module__.replace("builtins", "") + "." + type(arr).__name__
        raise TypeError(f"expected np.ndarray (got {name.lstrip('.')})")
    _check_numpy(arr)
    return Tensor._make(arr)


def _size_error(name: str, size: Any, pos: int | None = None) -> TypeError:
    what = (f"not {type(size).__name__}" if pos is None else
            f"but found element of type {type(size).__name__} at pos {pos}")
    return TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, {what}. "
                     f"Pass the shape as ints, e.g. {name}(2, 3) or {name}((2, 3)).")


def _dim(s: Any, name: str, pos: int) -> int:
    """One entry of a size: an int (a NumPy integer or an integer tensor of one element also
    qualifies, as in torch; a bool or a float does not)."""
    if isinstance(s, (int, xp.integer)) and not isinstance(s, (bool, xp.bool_)):
        return int(s)
    if isinstance(s, Tensor) and s._array.dtype.kind in "iu" and s._array.size == 1:
        return int(s._array.reshape(()))
    raise _size_error(name or "size", s, pos)


def _size(size: Sequence[Any], name: str = "") -> tuple[int, ...]:
    if name and not size:  # torch: the size is required (an empty tuple gives a 0-d tensor)
        raise TypeError(
            f'{name}() missing 1 required positional arguments: "size". Pass the shape, e.g. '
            f"{name}(2, 3) or {name}(()) for a 0-d tensor."
        )
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    if len(size) == 1 and size[0].__class__ is not int and not isinstance(
            size[0], (xp.integer, Tensor)):  # a lone float/str/... is not a size
        raise _size_error(name or "size", size[0])
    out = tuple(s if s.__class__ is int else _dim(s, name, i) for i, s in enumerate(size))
    for s in out:
        if s < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {s}: {list(out)}. Sizes "
                "must be >= 0."
            )
    return out


def _shape(shape: tuple[Any, ...], size: Any, name: str) -> tuple[int, ...]:
    """The size of ``zeros(*shape)`` or ``zeros(size=...)`` (torch's keyword form)."""
    if size is not None:
        if shape:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        if not isinstance(size, (tuple, list)):
            raise TypeError(f"{name}(): argument 'size' must be tuple of ints, not "
                            f"{type(size).__name__}")
        shape = (size,)
    return _size(shape, name)


def _check_dtype(dtype: Any, name: str) -> D.dtype | None:
    """The ``dtype`` argument of ``name`` as a gradsum dtype (or None); the Python types
    ``float``/``int``/``bool`` stand for float64/int64/bool, as in torch."""
    return D.from_python_type(dtype, name)


def _float_dtype(dtype: D.dtype | None, name: str = "") -> Any:
    if dtype is None:
        return D.get_default_dtype().np
    if not isinstance(dtype, D.dtype):
        dtype = _check_dtype(dtype, name or "factory")
    return dtype.np  # type: ignore[union-attr]


def _random_float(dt: Any, kernel: str) -> None:
    """torch's error for uniform/normal samples of a non-floating dtype."""
    if dt.kind not in "fV":
        raise D.not_implemented(kernel, dt, "Sample a floating dtype, then convert.")


def zeros(*shape: Any, size: Any = None, dtype: D.dtype | None = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """A tensor of zeros of the given size (``zeros(2, 3)``, ``zeros((2, 3))`` or
    ``zeros(size=(2, 3))``)."""
    _check_device(device, "zeros")
    return _finish(xp.zeros(_shape(shape, size, "zeros"), dtype=_float_dtype(dtype, "zeros")),
                   requires_grad)


def ones(*shape: Any, size: Any = None, dtype: D.dtype | None = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """A tensor of ones of the given size."""
    _check_device(device, "ones")
    return _finish(xp.ones(_shape(shape, size, "ones"), dtype=_float_dtype(dtype, "ones")),
                   requires_grad)


def empty(*shape: Any, size: Any = None, dtype: D.dtype | None = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor (gradsum fills it with zeros)."""
    _check_device(device, "empty")
    return _finish(xp.zeros(_shape(shape, size, "empty"), dtype=_float_dtype(dtype, "empty")),
                   requires_grad)


def _fill(value: Any, dt: Any, name: str) -> Any:
    """``value`` as a fill for an array of dtype ``dt``: torch's RuntimeError for a value out
    of an integer dtype's range (NumPy would raise OverflowError or wrap)."""
    if isinstance(value, Tensor) and value._array.ndim == 0:
        value = value.item()
    if not isinstance(value, (bool, int, float, xp.bool_, xp.integer, xp.floating)):
        raise TypeError(f"{name}(): argument 'fill_value' (position 2) must be Number, not "
                        f"{type(value).__name__}. Pass a Python number or a 0-d tensor.")
    if dt.kind not in "iu":
        return value
    try:
        v = int(value)
        info = xp.iinfo(dt)
        ok = info.min <= v <= info.max
        if not ok and dt.kind == "u" and isinstance(value, (int, xp.integer)) and \
                -int(info.max) <= v < 0:
            return v % (int(info.max) + 1)  # torch wraps small negative ints (two's complement)
    except (OverflowError, ValueError):  # inf, nan
        ok = False
    if not ok:
        raise RuntimeError(
            f"value cannot be converted to type {dt.name}_t without overflow: {name}() got "
            f"{value!r}. Use a wider dtype."
        )
    return v


def full(size: Sequence[int], fill_value: Any, *, dtype: D.dtype | None = None,
         device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor filled with ``fill_value`` (dtype inferred from it, like torch)."""
    _check_device(device, "full")
    if not isinstance(size, (tuple, list)):
        raise _size_error("full", size)
    dtype = _check_dtype(dtype, "full")
    if dtype is None:
        item = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
        _fill(item, xp.dtype(xp.float64), "full")  # (refuses a non-number first)
        dtype = D._scalar_dtype(item)
    shape = _size(size, "full" if size else "")
    return _finish(xp.full(shape, _fill(fill_value, dtype.np, "full"), dtype=dtype.np),
                   requires_grad)


def _like(t: Any, dtype: D.dtype | None, name: str,
          kw: dict[str, Any] | None = None) -> tuple[tuple[int, ...], Any]:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(t).__name__}")
    if kw and kw.get("device") is not None:  # (None: the input's device, not the default)
        _device.check_factory(kw["device"], name, "aten::empty_strided")
    dtype = _check_dtype(dtype, name)
    if dtype is None:
        return t._array.shape, t._array.dtype
    return t._array.shape, dtype.np


def _filled_like(t: Tensor, dt: Any, value: Any, kw: dict[str, Any], name: str) -> Any:
    """An array of ``t``'s shape filled with ``value``, laid out as torch lays out a
    ``*_like`` result: ``memory_format=`` (default ``preserve_format``: ``t``'s strides when
    it is dense, so ``ones_like(x.t())`` is transposed like ``x.t()``)."""
    fmt = kw.get("memory_format")
    arr = t._array
    if (fmt is None or fmt is _memory_format.preserve_format) and (
            arr.ndim < 2 or arr.flags.c_contiguous):
        return xp.full(arr.shape, value, dtype=dt) if value else xp.zeros(arr.shape, dtype=dt)
    out = _memory_format.like_array(arr, fmt, name, dt)
    out.fill(value)
    return out


def zeros_like(t: Tensor, dtype: D.dtype | None = None, requires_grad: bool = False,
               **kw: Any) -> Tensor:
    _, dt = _like(t, dtype, "zeros_like", kw)
    return _finish(_filled_like(t, dt, 0, kw, "zeros_like"), requires_grad)


def ones_like(t: Tensor, dtype: D.dtype | None = None, requires_grad: bool = False,
              **kw: Any) -> Tensor:
    _, dt = _like(t, dtype, "ones_like", kw)
    return _finish(_filled_like(t, dt, 1, kw, "ones_like"), requires_grad)


def empty_like(t: Tensor, dtype: D.dtype | None = None, requires_grad: bool = False,
               **kw: Any) -> Tensor:
    _, dt = _like(t, dtype, "empty_like", kw)
    return _finish(_filled_like(t, dt, 0, kw, "empty_like"), requires_grad)


def full_like(t: Tensor, fill_value: Any, dtype: D.dtype | None = None,
              requires_grad: bool = False, **kw: Any) -> Tensor:
    _, dt = _like(t, dtype, "full_like", kw)
    return _finish(_filled_like(t, dt, _fill(fill_value, dt, "full_like"), kw, "full_like"),
                   requires_grad)


_UNSET: Any = object()


def _range_number(v: Any, name: str, pos: int) -> Any:
    """A Python number for an ``arange``/``linspace`` bound (a 0-d tensor qualifies)."""
    if isinstance(v, (bool, int, float)):
        return v
    if isinstance(v, xp.generic) and v.dtype.kind in "biuf":
        return v.item()
    if isinstance(v, Tensor) and v._array.ndim == 0:
        return v.item()
    raise TypeError(f"{name}(): argument '{('start', 'end', 'step')[pos]}' must be Number, "
                    f"not {type(v).__name__}")


def arange(start: Any = _UNSET, end: Any = None, step: Any = _UNSET, *,
           dtype: D.dtype | None = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 unless a float is given.

    Example:
        >>> import gradsum
        >>> gradsum.arange(1, 2, 0.25).tolist()
        [1.0, 1.25, 1.5, 1.75]
    """
    _check_device(device, "arange")
    if end is None:
        if start is _UNSET or step is not _UNSET:  # torch: arange(end) takes no step
            raise TypeError(
                "arange() received an invalid combination of arguments: pass arange(end), "
                "arange(start, end) or arange(start, end, step)"
            )
        start, end = 0, start
    elif start is _UNSET:
        start = 0
    if step is _UNSET:
        step = 1
    vals = [_range_number(v, "arange", i) for i, v in enumerate((start, end, step))]
    dtype = _check_dtype(dtype, "arange")
    if dtype is None:
        dtype = D.get_default_dtype() if any(isinstance(v, float) for v in vals) else D.int64
    if dtype is D.bool_:
        raise D.not_implemented("arange_cpu", dtype.np, "Compare an integer range instead.")
    lo, hi, st = vals
    if st == 0:
        raise RuntimeError(f"step must be nonzero (arange({start}, {end}, step={step})): "
                           "pass a positive step to count up, a negative one to count down")
    if dtype is D.int64:  # torch truncates the bounds and the step to int64 first
        lo, hi, st = int(lo), int(hi), int(st)
        if st == 0:
            raise ValueError(f"step must be nonzero: step {vals[2]} is 0 as int64")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"unsupported range: {lo} -> {hi}")
    if (st > 0 and hi < lo) or (st < 0 and hi > lo):
        raise RuntimeError(
            f"upper bound and lower bound inconsistent with step sign: arange({lo}, {hi}, "
            f"{st}). Use a step of the other sign."
        )
    if abs((hi - lo) / st) >= 2.0**63:
        raise RuntimeError(
            f"invalid size, possible overflow?: arange({lo}, {hi}, {st}) would hold about "
            f"{abs((hi - lo) / st):.3g} elements. Use a larger step."
        )
    if dtype.is_floating_point or dtype is D.int64:
        arr = xp.arange(lo, hi, st, dtype=xp.float64 if dtype.is_floating_point else None)
    else:  # the other integer dtypes: a count in double, then start + i * step in the dtype
        n = math.ceil((hi - lo) / st)
        arr = int(lo) + xp.arange(n, dtype=xp.int64) * int(st)
    return _finish(arr.astype(dtype.np), requires_grad)


def linspace(start: Any, end: Any, steps: int, *, dtype: D.dtype | None = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    _check_device(device, "linspace")
    lo = _range_number(start, "linspace", 0)
    hi = _range_number(end, "linspace", 1)
    if isinstance(steps, Tensor) and steps._array.ndim == 0 and steps._array.dtype.kind in "iu":
        steps = int(steps._array)  # (a 0-d integer tensor is an int, as in torch)
    if isinstance(steps, bool) or not isinstance(steps, (int, xp.integer)):
        raise TypeError(f"linspace(): argument 'steps' must be int, not {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError(f"number of steps must be non-negative, got {steps}")
    dt = _float_dtype(dtype, "linspace")
    if dt.kind == "b":
        raise D.not_implemented("linspace_cpu", dt, "Compare a float range instead.")
    return _finish(xp.linspace(lo, hi, int(steps)).astype(dt), requires_grad)


def eye(n: int, m: Any = _UNSET, *, dtype: D.dtype | None = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    """The identity matrix (``n x m``)."""
    _check_device(device, "eye")
    if m is None:  # (torch: eye(n) or eye(n, m) with an int m; None is no int)
        raise TypeError("eye(): argument 'm' (position 2) must be int, not NoneType. Pass "
                        "eye(n) for a square matrix or eye(n, m).")
    m = None if m is _UNSET else m
    args = []
    for name, v in (("n", n), ("m", m)):
        if v is None:
            args.append(v)
            continue
        if isinstance(v, Tensor) and v._array.size == 1 and v._array.dtype.kind in "iu":
            v = int(v._array.reshape(()))  # (a one-element integer tensor is an int, as in torch)
        args.append(v)
        if isinstance(v, bool) or not isinstance(v, (int, xp.integer)):
            raise TypeError(f"eye(): argument '{name}' must be int, not {type(v).__name__}")
        if v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    return _finish(xp.eye(args[0], args[1], dtype=_float_dtype(dtype, "eye")), requires_grad)


def rand(*shape: Any, size: Any = None, generator: _random.Generator | None = None,
         dtype: D.dtype | None = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """Uniform samples in [0, 1)."""
    _check_device(device, "rand")
    dims = _shape(shape, size, "rand")
    dt = _float_dtype(dtype, "rand")
    _random_float(dt, "check_uniform_bounds")
    return _finish(_random.rng(generator).random(dims).astype(dt), requires_grad)


def randn(*shape: Any, size: Any = None, generator: _random.Generator | None = None,
          dtype: D.dtype | None = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """Standard normal samples."""
    _check_device(device, "randn")
    dims = _shape(shape, size, "randn")
    dt = _float_dtype(dtype, "randn")
    _random_float(dt, "normal_kernel_cpu")
    return _finish(_random.rng(generator).standard_normal(dims).astype(dt), requires_grad)


_C_NAMES = {"int8": "signed char", "uint8": "unsigned char", "int16": "short", "int32": "int",
            "int64": "long", "bool": "bool"}


def _randint_bounds(name: str, low: Any, high: Any, dt: Any) -> tuple[int, int]:
    """Check ``[low, high)`` as torch's ``random_`` does for dtype ``dt``."""
    for arg, v in (("low", low), ("high", high)):
        if isinstance(v, bool) or not isinstance(v, (int, xp.integer)):
            raise TypeError(f"{name}(): argument '{arg}' must be int, not {type(v).__name__}")
        if not -(2**63) <= int(v) < 2**63:
            raise ValueError(f"Overflow when unpacking long long: {name}() got {arg}={v}")
    lo, hi = int(low), int(high)
    if lo >= hi:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={hi}"
        )
    if dt.kind in "biu":
        info = (0, 1) if dt.kind == "b" else (xp.iinfo(dt).min, xp.iinfo(dt).max)
        cname = _C_NAMES.get(dt.name, dt.name)
        if lo < info[0]:
            raise RuntimeError(f"from is out of bounds for {cname}: low={lo}")
        if hi - 1 > info[1]:
            raise RuntimeError(f"to - 1 is out of bounds for {cname}: high={hi}")
    return lo, hi


def randint(low: Any = None, high: Any = None, size: Any = None, *,
            generator: _random.Generator | None = None, dtype: D.dtype | None = None,
            device: Any = None, requires_grad: bool = False) -> Tensor:
    """Integers uniform in ``[low, high)`` (``randint(high, size)`` also works)."""
    _check_device(device, "randint")
    if size is None and isinstance(high, (tuple, list)):  # randint(high, size)
        low, high, size = 0, low, high
    elif high is None and size is not None:  # randint(high, size=...)
        low, high = 0, low
    elif low is None:
        low = 0
    if high is None or size is None:
        raise TypeError(
            "randint() received an invalid combination of arguments: pass randint(high, size) "
            "or randint(low, high, size), with size a tuple of ints"
        )
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' must be tuple of ints, not "
                        f"{type(size).__name__}")
    dt = (_check_dtype(dtype, "randint") or D.int64).np
    lo, hi = _randint_bounds("randint", low, high, dt)
    shape = _size(size)
    return _finish(_random.rng(generator).integers(lo, hi, shape).astype(dt), requires_grad)


def randperm(n: int, *, generator: _random.Generator | None = None,
             dtype: D.dtype | None = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """A random permutation of ``0..n-1``."""
    _check_device(device, "randperm")
    if isinstance(n, bool) or not isinstance(n, (int, xp.integer)):
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dt = (_check_dtype(dtype, "randperm") or D.int64).np
    if dt.kind == "b":
        raise D.not_implemented("randperm", dt, "Use an integer dtype.")
    if dt.kind in "iu" and n - 1 > xp.iinfo(dt).max:
        raise RuntimeError(
            f"value cannot be converted to type {dt.name}_t without overflow: randperm({n}) "
            f"needs values up to {n - 1}. Use a wider dtype."
        )
    return _finish(_random.rng(generator).permutation(int(n)).astype(dt), requires_grad)


def _random_like(t: Tensor, draw: Any, dt: Any, kw: dict[str, Any], name: str) -> Any:
    """Samples for a random ``*_like`` factory, drawn in the order of the result's memory
    (laid out as :func:`_filled_like` lays it out)."""
    fmt = kw.get("memory_format")
    arr = t._array
    if (fmt is None or fmt is _memory_format.preserve_format) and (
            arr.ndim < 2 or arr.flags.c_contiguous):
        return draw(arr.shape).astype(dt)
    out = _memory_format.like_array(arr, fmt, name, dt)
    order = sorted(range(out.ndim), key=lambda d: -out.strides[d])  # (outermost first)
    view = out.transpose(order)
    view[...] = draw(view.shape).astype(dt)
    return out


def rand_like(t: Tensor, dtype: D.dtype | None = None, requires_grad: bool = False,
              generator: _random.Generator | None = None, **kw: Any) -> Tensor:
    _, dt = _like(t, dtype, "rand_like", kw)
    _random_float(dt, "check_uniform_bounds")
    return _finish(_random_like(t, _random.rng(generator).random, dt, kw, "rand_like"),
                   requires_grad)


def randn_like(t: Tensor, dtype: D.dtype | None = None, requires_grad: bool = False,
               generator: _random.Generator | None = None, **kw: Any) -> Tensor:
    _, dt = _like(t, dtype, "randn_like", kw)
    _random_float(dt, "normal_kernel_cpu")
    return _finish(_random_like(t, _random.rng(generator).standard_normal, dt, kw, "randn_like"),
                   requires_grad)


def randint_like(t: Tensor, low: int = 0, high: int | None = None, *,
                 dtype: D.dtype | None = None, requires_grad: bool = False,
                 generator: _random.Generator | None = None, **kw: Any) -> Tensor:
    """Integers uniform in ``[low, high)`` with the shape (and by default the dtype) of ``t``;
    ``randint_like(t, high)`` also works."""
    _, dt = _like(t, dtype, "randint_like", kw)
    if high is None:
        low, high = 0, low
    lo, hi = _randint_bounds("randint_like", low, high, dt)
    return _finish(_random_like(t, lambda n: _random.rng(generator).integers(lo, hi, n), dt, kw,
                                "randint_like"), requires_grad)


def normal(mean: Any, std: Any = 1.0, size: Sequence[int] | None = None, *,
           generator: _random.Generator | None = None, dtype: D.dtype | None = None,
           device: Any = None) -> Tensor:
    """Normal samples: ``normal(mean, std, size)`` with numbers, or ``normal(mean, std)``
    with a tensor for either (samples of their broadcast shape), as in torch.

    Example:
        >>> import gradsum
        >>> gradsum.normal(gradsum.zeros(2, 3), 1.0).shape
        (2, 3)
    """
    m_t, s_t = isinstance(mean, Tensor), isinstance(std, Tensor)
    if device is not None or not (m_t or s_t):
        _check_device(device, "normal")
    if s_t and std._array.size and float(std._array.min()) < 0:
        raise RuntimeError(f"normal expects all elements of std >= 0.0, got {std._array.min()}."
                           " Pass non-negative standard deviations.")
    if not s_t and std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}. Pass a "
                           "non-negative standard deviation.")
    if m_t or s_t:
        if size is not None:
            raise TypeError("normal(): size= goes with a number mean and std only; the shape "
                            "of a tensor mean/std gives the samples' shape")
        arrs = [t._array for t in (mean, std) if isinstance(t, Tensor)]
        for arr in arrs:
            _random_float(arr.dtype, "normal_kernel_cpu")
        dt = xp.result_type(*arrs) if dtype is None else _float_dtype(dtype, "normal")
        shape = xp.broadcast_shapes(*(a.shape for a in arrs))
        mu = mean._array if m_t else mean
        sd = std._array if s_t else std
        arr = _random.rng(generator).standard_normal(shape) * sd + mu
        return Tensor._make(xp.asarray(arr).astype(dt))
    if size is None:
        raise TypeError("normal(): with a number mean and std, pass size=, e.g. "
                        "normal(0.0, 1.0, (2, 3))")
    arr = _random.rng(generator).normal(mean, std, tuple(size)).astype(_float_dtype(dtype))
    return Tensor._make(arr)


def bernoulli(p: Tensor, p_scalar: float | None = None, *,
              generator: _random.Generator | None = None) -> Tensor:
    """0/1 samples with probabilities ``p`` (or, given ``p_scalar``, with that one
    probability and the shape and dtype of ``p``)."""
    dt = p._array.dtype
    if p_scalar is None:
        if dt.kind not in "fV":
            raise D.not_implemented("bernoulli_tensor_cpu_p_", dt, "Pass float probabilities.")
        prob = p._array
        if prob.size and not (float(prob.min()) >= 0 and float(prob.max()) <= 1):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false. "
                               "Probabilities must lie in [0, 1].")
    else:
        if not 0 <= p_scalar <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p_scalar}")
        prob = p_scalar
    arr = (_random.rng(generator).random(p._array.shape) < prob).astype(dt)
    return Tensor._make(arr)


#: NumPy's largest Poisson rate; torch's larger rates (and inf) give int64's minimum
_POISSON_LAM_MAX = 9.223372006484771e18


def poisson(input: Tensor, generator: _random.Generator | None = None) -> Tensor:
    """Poisson samples with the rates of ``input`` (its shape and floating dtype), from
    gradsum's generator (so not torch's numbers for the same seed). The output of a rate that
    requires grad has torch's ``PoissonBackward0`` node, which gives the rate a zero gradient
    (the samples are not reparameterised).

    Example:
        >>> import gradsum
        >>> gradsum.poisson(gradsum.zeros(3)).tolist()
        [0.0, 0.0, 0.0]
    """
    x = input._array
    if x.dtype.kind not in "fV":
        raise D.not_implemented("poisson_cpu", x.dtype, "Pass floating rates (.float()).")
    rates = x.astype(xp.float64)
    if rates.size and not bool((rates >= 0).all()):  # (NaN fails too, as in torch)
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    big = rates > _POISSON_LAM_MAX
    draws = xp.asarray(_random.rng(generator).poisson(xp.where(big, 0.0, rates)))
    out = xp.asarray(xp.where(big, -(2.0 ** 63), draws), dtype=x.dtype)  # (torch: overflow)
    from gradsum.ops._core import needs_grad, record

    if needs_grad(input):
        return record(PoissonBackward0(), (input,), out)
    return Tensor._make(out)


class PoissonBackward0(Node):
    """``poisson``'s node: a zero gradient for the rates, as torch's."""

    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        return zeros_like(g)


def multinomial(probs: Tensor, num_samples: int, replacement: bool = False, *,
                generator: _random.Generator | None = None) -> Tensor:
    """Sample indices from the (unnormalised) rows of ``probs``."""
    p = probs._array
    if p.ndim not in (1, 2):
        raise RuntimeError(f"prob_dist must be 1 or 2 dim, got {p.ndim} dims")
    if p.dtype.kind not in "fV":
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           f"{D._TORCH_SCALAR_NAMES.get(p.dtype.name, p.dtype.name)}")
    if num_samples <= 0:
        raise RuntimeError(f"cannot sample n_sample <= 0 samples (got {num_samples})")
    n = p.shape[-1]
    if not replacement and num_samples > n:
        raise RuntimeError(f"cannot sample n_sample > prob_dist.size(-1) samples without "
                           f"replacement ({num_samples} > {n}). Pass replacement=True.")
    rows = p.astype(xp.float64).reshape(-1, n)
    if rows.size and not (xp.isfinite(rows).all() and (rows >= 0).all()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (rows.sum(axis=1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    r = _random.rng(generator)
    out = []
    for row in rows:
        nonzero = int((row > 0).sum())
        if replacement or num_samples <= nonzero:
            out.append(r.choice(n, num_samples, replace=replacement, p=row / row.sum()))
        else:  # torch: once the nonzero categories are drawn, the zero ones follow
            first = r.choice(n, nonzero, replace=False, p=row / row.sum())
            rest = r.permutation(xp.flatnonzero(row == 0))[:num_samples - nonzero]
            out.append(xp.concatenate([first, rest]))
    arr = xp.stack(out).astype(xp.int64)
    return Tensor._make(arr.reshape(p.shape[:-1] + (num_samples,)))
