"""``gradsum.nn.init``: torch's initialisers, writing in place under ``no_grad``.

Random values come from gradsum's generator (``gradsum.manual_seed`` makes them
reproducible); the distributions and their parameters (bounds, gains, fans) are torch's.

Example:
    >>> import gradsum
    >>> from gradsum.nn import init
    >>> w = gradsum.empty(4, 3)
    >>> _ = init.kaiming_uniform_(w, a=5 ** 0.5)
    >>> bool((w.abs() <= 1 / 3 ** 0.5).all())       # bound = 1 / sqrt(fan_in)
    True
    >>> init.calculate_gain("relu") == 2 ** 0.5
    True
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

from gradsum._backend import xp
from gradsum._random import Generator, rng
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import no_grad
from gradsum.nn import _messages

__all__ = [
    "calculate_gain", "constant_", "dirac_", "eye_", "kaiming_normal_", "kaiming_uniform_",
    "normal_", "ones_", "orthogonal_", "sparse_", "trunc_normal_", "uniform_",
    "xavier_normal_", "xavier_uniform_", "zeros_",
]


def calculate_gain(nonlinearity: str, param: Any = None) -> float:
    """The recommended gain for ``nonlinearity`` (torch's table).

    Example:
        >>> from gradsum.nn import init
        >>> init.calculate_gain("tanh")
        1.6666666666666667
    """
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(_messages.negative_slope_not_a_number(param))
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(_messages.unsupported_nonlinearity(nonlinearity))


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight: ``size(1) * receptive``, ``size(0) * receptive``."""
    if tensor.ndim < 2:
        raise ValueError(_messages.fan_in_fan_out_fewer_than_2_dims())
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid = ["fan_in", "fan_out"]
    if mode not in valid:
        raise ValueError(_messages.unsupported_fan_mode(mode, valid))
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0,
             generator: Generator | None = None) -> Tensor:
    """Fill with values from U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0,
            generator: Generator | None = None) -> Tensor:
    """Fill with values from N(mean, std^2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: Generator | None = None) -> Tensor:
    """Fill with N(mean, std^2) values redrawn until they lie in [a, b] (a truncated normal;
    torch samples the same distribution by inverting the CDF).

    Example:
        >>> import gradsum
        >>> from gradsum.nn import init
        >>> t = init.trunc_normal_(gradsum.empty(1000), std=1.0, a=-0.5, b=0.5)
        >>> bool((t.abs() <= 0.5).all())
        True
    """
    if not tensor.is_floating_point():  # (torch's normal_ kernel refuses integer tensors)
        raise NotImplementedError(_messages.trunc_normal_not_floating(tensor))
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(_messages.mean_more_2_std_from(), UserWarning, stacklevel=2)
    r = rng(generator)
    arr = tensor._array
    out = r.standard_normal(arr.shape) * std + mean
    bad = (out < a) | (out > b)
    for _ in range(1000):
        if not bad.any():
            break
        out[bad] = r.standard_normal(int(bad.sum())) * std + mean
        bad = (out < a) | (out > b)
    out = out.clip(a, b)  # only reached if the interval has (almost) no mass
    with no_grad():
        arr[...] = out.astype(arr.dtype)
        tensor._vc[0] += 1
    return tensor


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones."""
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros."""
    return constant_(tensor, 0.0)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0,
                    generator: Generator | None = None) -> Tensor:
    """Glorot uniform: U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0,
                   generator: Generator | None = None) -> Tensor:
    """Glorot normal: N(0, std^2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu",
                     generator: Generator | None = None) -> Tensor:
    """He uniform: U(-bound, bound), ``bound = gain * sqrt(3 / fan)``."""
    if 0 in tensor.shape:
        warnings.warn(_messages.initializing_zero_element_tensors_no(), UserWarning, stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    bound = math.sqrt(3.0) * gain / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu",
                    generator: Generator | None = None) -> Tensor:
    """He normal: N(0, std^2), ``std = gain / sqrt(fan)``."""
    if 0 in tensor.shape:
        warnings.warn(_messages.initializing_zero_element_tensors_no(), UserWarning, stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def _write(tensor: Tensor, values: Any) -> Tensor:
    """Overwrite ``tensor``'s values in place (an in-place write under ``no_grad``)."""
    with no_grad():
        arr = tensor._array
        arr[...] = xp.asarray(values).astype(arr.dtype, copy=False)
        tensor._vc[0] += 1
    return tensor


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity matrix (ones on the main diagonal).

    Example:
        >>> import gradsum
        >>> from gradsum.nn import init
        >>> init.eye_(gradsum.empty(2, 3)).tolist()
        [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """
    if tensor.ndim != 2:
        raise ValueError(_messages.only_tensors_2_dimensions_supported())
    return _write(tensor, xp.eye(*tensor.shape))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-D convolution weight with the Dirac delta: output channel ``d`` of
    each group copies input channel ``d`` (at the kernel's centre), so the convolution
    preserves as many input channels as it can.

    Example:
        >>> import gradsum
        >>> from gradsum.nn import init
        >>> w = init.dirac_(gradsum.empty(2, 2, 3, 3))
        >>> w[1, 1].tolist()
        [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]
    """
    dims = tensor.ndim
    if dims not in (3, 4, 5):
        raise ValueError(_messages.only_tensors_3_4_or())
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError(_messages.dim_0_divisible_by_groups())
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    values = xp.zeros(sizes)
    centre = tuple(k // 2 for k in sizes[2:])
    for g in range(groups):
        for d in range(min_dim):
            values[(g * out_per_group + d, d) + centre] = 1
    return _write(tensor, values)


def orthogonal_(tensor: Tensor, gain: float = 1, generator: Generator | None = None) -> Tensor:
    """Fill with a (semi-)orthogonal matrix (the tensor viewed as ``(size(0), -1)``): the Q
    of the QR decomposition of a standard normal matrix, signs fixed by ``R``'s diagonal so
    that it is uniformly distributed (torch's algorithm), times ``gain``.

    Example:
        >>> import gradsum
        >>> from gradsum.nn import init
        >>> q = init.orthogonal_(gradsum.empty(3, 5))
        >>> bool(((q @ q.T - gradsum.eye(3)).abs() < 1e-5).all())
        True
    """
    if tensor.ndim < 2:
        raise ValueError(_messages.only_tensors_2_or_more())
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = rng(generator).standard_normal((rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = xp.linalg.qr(flat)
    q = q * xp.sign(xp.diag(r))
    if rows < cols:
        q = q.T
    return _write(tensor, (q * gain).reshape(tensor.shape))


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01,
            generator: Generator | None = None) -> Tensor:
    """Fill a 2-D tensor from N(0, std^2), then zero ``ceil(sparsity * rows)`` randomly
    chosen rows in every column.

    Example:
        >>> import gradsum
        >>> from gradsum.nn import init
        >>> w = init.sparse_(gradsum.empty(10, 3), sparsity=0.3)
        >>> (w == 0).sum(0).tolist()
        [3, 3, 3]
    """
    if tensor.ndim != 2:
        raise ValueError(_messages.only_tensors_2_dimensions_supported())
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    r = rng(generator)
    values = r.standard_normal((rows, cols)) * std
    for col in range(cols):
        values[r.permutation(rows)[:num_zeros], col] = 0
    return _write(tensor, values)


# -- torch's deprecated spellings without the trailing underscore -------------------------------
def _make_deprecate(meth: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``nn.init.<name>``: warns (``FutureWarning``, torch's text) and calls ``<name>_``."""
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args: Any, **kwargs: Any) -> Tensor:
        warnings.warn(
            _messages.init_function_deprecated(old_name, new_name),
            FutureWarning, stacklevel=2,
        )
        return meth(*args, **kwargs)

    deprecated_init.__doc__ = (
        f"{old_name}(...): deprecated alias of :func:`{new_name}` (warns, like torch)."
    )
    deprecated_init.__name__ = deprecated_init.__qualname__ = old_name
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)

__all__ += [
    "constant", "dirac", "eye", "kaiming_normal", "kaiming_uniform", "normal", "orthogonal",
    "sparse", "uniform", "xavier_normal", "xavier_uniform",
]
