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

from collections.abc import Sequence
from typing import Any

from gradsum import _dtype as D
from gradsum import _random
from gradsum._backend import xp
from gradsum._tensor import Tensor


def _check_device(device: Any) -> None:
    if device is not None and str(device) not in ("cpu",):
        raise RuntimeError(f"gradsum runs on the CPU only; got device={device!r}")


def _finish(arr: Any, requires_grad: bool) -> Tensor:
    t = Tensor._make(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _infer(data: Any) -> Any:
    if isinstance(data, Tensor):
        return data._array.copy()
    if isinstance(data, (list, tuple)) and any(isinstance(d, Tensor) for d in _flat(data)):
        data = _untensor(data)
    arr = xp.array(data)
    if arr.dtype.kind == "f" and not hasattr(data, "dtype"):
        arr = arr.astype(D.get_default_dtype().np)
    elif arr.dtype.kind in "iu" and not hasattr(data, "dtype"):
        arr = arr.astype(xp.int64)
    elif arr.dtype.kind == "O":
        raise TypeError(f"can't build a tensor from {type(data).__name__} with ragged or "
                        "non-numeric entries")
    elif arr.dtype.kind not in "fiub":
        raise TypeError(f"can't convert data of dtype {arr.dtype} to a tensor")
    return arr


def _flat(data: Any) -> list[Any]:
    out: list[Any] = []
    for d in data:
        if isinstance(d, (list, tuple)):
            out.extend(_flat(d))
        else:
            out.append(d)
    return out


def _untensor(data: Any) -> Any:
    if isinstance(data, Tensor):
        return data._array.tolist()
    if isinstance(data, (list, tuple)):
        return [_untensor(d) for d in data]
    return data


def tensor(data: Any, dtype: D.dtype | None = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of ``data`` (lists, numbers, NumPy arrays, tensors).

    Example:
        >>> import gradsum
        >>> gradsum.tensor([[1.0, 2.0]], requires_grad=True)
        tensor([[1., 2.]], requires_grad=True)
    """
    _check_device(device)
    if dtype is not None and not isinstance(data, Tensor):
        if isinstance(data, (list, tuple)):
            data = _untensor(data)
        arr = xp.array(data, dtype=D.to_numpy_dtype(dtype))
    else:
        arr = _infer(data)
        if dtype is not None:
            arr = arr.astype(D.to_numpy_dtype(dtype))
    return _finish(arr, requires_grad)


def as_tensor(data: Any, dtype: D.dtype | None = None, device: Any = None) -> Tensor:
    """Like :func:`tensor` but shares memory with a NumPy array / tensor when it can."""
    if isinstance(data, Tensor) and (dtype is None or data.dtype is dtype):
        return data
    if isinstance(data, xp.ndarray) and (dtype is None or data.dtype == dtype.np):
        return Tensor._make(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(arr: Any) -> Tensor:
    """A tensor sharing memory with the NumPy array ``arr``."""
    D.from_numpy_dtype(arr.dtype)
    return Tensor._make(arr)


def _size(size: Sequence[Any], name: str = "") -> tuple[int, ...]:
    if name and not size:  # torch: the size is required (an empty tuple gives a 0-d tensor)
        raise TypeError(
            f'{name}() missing 1 required positional arguments: "size". Pass the shape, e.g. '
            f"{name}(2, 3) or {name}(()) for a 0-d tensor."
        )
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    out = tuple(int(s) for s in size)
    if any(s < 0 for s in out):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(out)}")
    return out


def _float_dtype(dtype: D.dtype | None) -> Any:
    return (dtype or D.get_default_dtype()).np


def zeros(*size: Any, dtype: D.dtype | None = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """A tensor of zeros of the given size."""
    _check_device(device)
    return _finish(xp.zeros(_size(size, "zeros"), dtype=_float_dtype(dtype)), requires_grad)


def ones(*size: Any, dtype: D.dtype | None = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """A tensor of ones of the given size."""
    _check_device(device)
    return _finish(xp.ones(_size(size, "ones"), dtype=_float_dtype(dtype)), requires_grad)


def empty(*size: Any, dtype: D.dtype | None = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor (gradsum fills it with zeros)."""
    _size(size, "empty")  # (the size is required)
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def full(size: Sequence[int], fill_value: Any, dtype: D.dtype | None = None,
         device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor filled with ``fill_value`` (dtype inferred from it, like torch)."""
    _check_device(device)
    if dtype is None:
        dtype = D._scalar_dtype(fill_value)
    return _finish(xp.full(_size((size,)), fill_value, dtype=dtype.np), requires_grad)


def _like(t: Tensor, dtype: D.dtype | None) -> tuple[tuple[int, ...], Any]:
    return t._array.shape, (dtype.np if dtype is not None else t._array.dtype)


def zeros_like(t: Tensor, dtype: D.dtype | None = None, requires_grad: bool = False,
               **_: Any) -> Tensor:
    shape, dt = _like(t, dtype)
    return _finish(xp.zeros(shape, dtype=dt), requires_grad)


def ones_like(t: Tensor, dtype: D.dtype | None = None, requires_grad: bool = False,
              **_: Any) -> Tensor:
    shape, dt = _like(t, dtype)
    return _finish(xp.ones(shape, dtype=dt), requires_grad)


def empty_like(t: Tensor, dtype: D.dtype | None = None, requires_grad: bool = False,
               **_: Any) -> Tensor:
    return zeros_like(t, dtype=dtype, requires_grad=requires_grad)


def full_like(t: Tensor, fill_value: Any, dtype: D.dtype | None = None,
              requires_grad: bool = False, **_: Any) -> Tensor:
    shape, dt = _like(t, dtype)
    return _finish(xp.full(shape, fill_value, dtype=dt), requires_grad)


def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: D.dtype | None = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 unless a float is given."""
    _check_device(device)
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        dtype = D.get_default_dtype() if any(isinstance(v, float) for v in vals) else D.int64
    arr = xp.arange(vals[0], vals[1], vals[2], dtype=xp.float64 if dtype.is_floating_point
                    else None).astype(dtype.np)
    return _finish(arr, requires_grad)


def linspace(start: float, end: float, steps: int, *, dtype: D.dtype | None = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    _check_device(device)
    arr = xp.linspace(start, end, steps).astype(_float_dtype(dtype))
    return _finish(arr, requires_grad)


def eye(n: int, m: int | None = None, *, dtype: D.dtype | None = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    """The identity matrix (``n x m``)."""
    _check_device(device)
    return _finish(xp.eye(n, m, dtype=_float_dtype(dtype)), requires_grad)


def rand(*size: Any, generator: _random.Generator | None = None, dtype: D.dtype | None = None,
         device: Any = None, requires_grad: bool = False) -> Tensor:
    """Uniform samples in [0, 1)."""
    _check_device(device)
    arr = _random.rng(generator).random(_size(size, "rand")).astype(_float_dtype(dtype))
    return _finish(arr, requires_grad)


def randn(*size: Any, generator: _random.Generator | None = None, dtype: D.dtype | None = None,
          device: Any = None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples."""
    _check_device(device)
    arr = _random.rng(generator).standard_normal(_size(size, "randn")).astype(
        _float_dtype(dtype))
    return _finish(arr, requires_grad)


def randint(low: int, high: int | None = None, size: Sequence[int] = (), *,
            generator: _random.Generator | None = None, dtype: D.dtype | None = None,
            device: Any = None) -> Tensor:
    """Integers uniform in ``[low, high)`` (``randint(high, size)`` also works)."""
    _check_device(device)
    if high is None or (isinstance(high, (tuple, list))):
        if isinstance(high, (tuple, list)):
            size = high
        low, high = 0, low
    arr = _random.rng(generator).integers(low, high, tuple(size)).astype(
        (dtype or D.int64).np)
    return Tensor._make(arr)


def randperm(n: int, *, generator: _random.Generator | None = None,
             dtype: D.dtype | None = None, device: Any = None) -> Tensor:
    """A random permutation of ``0..n-1``."""
    _check_device(device)
    return Tensor._make(_random.rng(generator).permutation(n).astype((dtype or D.int64).np))


def rand_like(t: Tensor, dtype: D.dtype | None = None, requires_grad: bool = False,
              generator: _random.Generator | None = None, **_: Any) -> Tensor:
    shape, dt = _like(t, dtype)
    return _finish(_random.rng(generator).random(shape).astype(dt), requires_grad)


def randn_like(t: Tensor, dtype: D.dtype | None = None, requires_grad: bool = False,
               generator: _random.Generator | None = None, **_: Any) -> Tensor:
    shape, dt = _like(t, dtype)
    return _finish(_random.rng(generator).standard_normal(shape).astype(dt), requires_grad)


def randint_like(t: Tensor, low: int, high: int | None = None,
                 generator: _random.Generator | None = None, **_: Any) -> Tensor:
    if high is None:
        low, high = 0, low
    return Tensor._make(_random.rng(generator).integers(low, high, t._array.shape).astype(
        t._array.dtype))


def normal(mean: float, std: float, size: Sequence[int], *,
           generator: _random.Generator | None = None, dtype: D.dtype | None = None) -> Tensor:
    """Normal samples with the given mean and std."""
    arr = _random.rng(generator).normal(mean, std, tuple(size)).astype(_float_dtype(dtype))
    return Tensor._make(arr)


def bernoulli(p: Tensor, *, generator: _random.Generator | None = None) -> Tensor:
    """0/1 samples with probabilities ``p``."""
    arr = (_random.rng(generator).random(p._array.shape) < p._array).astype(p._array.dtype)
    return Tensor._make(arr)


def multinomial(probs: Tensor, num_samples: int, replacement: bool = False, *,
                generator: _random.Generator | None = None) -> Tensor:
    """Sample indices from the (unnormalised) rows of ``probs``."""
    r = _random.rng(generator)
    p = probs._array.astype(xp.float64)
    rows = p.reshape(-1, p.shape[-1])
    out = xp.stack([
        r.choice(rows.shape[1], num_samples, replace=replacement, p=row / row.sum())
        for row in rows
    ]).astype(xp.int64)
    return Tensor._make(out.reshape(p.shape[:-1] + (num_samples,)))
