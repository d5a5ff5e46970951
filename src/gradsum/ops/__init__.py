"""All ops, one namespace: primitives (one class each, with its backward rule) and the few
composites built from them. Tensor methods are bound here from :data:`METHODS`.

Example:
    >>> import gradsum
    >>> from gradsum.ops import OPS
    >>> "matmul" in OPS and "log_softmax" in OPS
    True
"""

from __future__ import annotations

from typing import Any

from gradsum._creation import (  # noqa: F401 - rules use F.zeros_like etc.
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from gradsum._tensor import Tensor
from gradsum.ops import _core
from gradsum.ops._core import OPS, as_tensor_like, register
from gradsum.ops._core import wrap_dim as _wrap_dim
from gradsum.ops.elementwise import *  # noqa: F403
from gradsum.ops.elementwise import abs, pow, rdiv, round, rpow, rsub, to_dtype  # noqa: A004
from gradsum.ops.inplace import *  # noqa: F403
from gradsum.ops.inplace import (
    add_,
    bernoulli_,
    clamp_,
    copy_,
    div_,
    exponential_,
    fill_,
    index_put,
    mul_,
    normal_,
    random_,
    setitem_,
    sub_,
    uniform_,
    zero_,
)
from gradsum.ops.linalg import *  # noqa: F403
from gradsum.ops.reduction import *  # noqa: F403
from gradsum.ops.reduction import all, any, max, min, sum  # noqa: A004
from gradsum.ops.shape import *  # noqa: F403
from gradsum.ops.shape import (
    expand_as,
    getitem,
    index_grad,
    reshape_as,
    sum_to,
    view_as,
)

__all__ = ["OPS", "Tensor", "as_tensor_like", "register"]
_ = (_core, _wrap_dim)


@register("masked_fill_")
def masked_fill_(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    """In-place :func:`masked_fill`."""
    from gradsum.ops import inplace

    inplace._check_leaf(self, "masked_fill_")
    if inplace._recording(self, value):
        return inplace.apply_inplace(
            self, "masked_fill_", lambda old: masked_fill(old, mask, value), value  # noqa: F405
        )
    res = masked_fill(self.detach(), mask, value)  # noqa: F405
    inplace._write(self, res._array, "masked_fill_")
    return self


def type_as(a: Tensor, other: Tensor) -> Tensor:
    return a.to(other.dtype)


@register("repeat")
def repeat(a: Tensor, *sizes: Any) -> Tensor:
    """Tile ``a`` ``sizes`` times along each dimension (a composite of expand and reshape)."""
    reps = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes
    if len(reps) < a.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions "
            "of tensor"
        )
    x = reshape(a, (1,) * (len(reps) - a.ndim) + tuple(a.shape))  # noqa: F405
    inter: list[int] = []
    final: list[int] = []
    for r, s in zip(reps, x.shape):
        inter += [1, s]
        final.append(r * s)
    x = reshape(x, tuple(inter))  # noqa: F405
    big: list[int] = []
    for r, s in zip(reps, x.shape[1::2]):
        big += [r, s]
    return reshape(expand(x, tuple(big)), tuple(final))  # noqa: F405


def _where_method(a: Tensor, condition: Tensor, other: Any) -> Tensor:
    return where(condition, a, other)  # noqa: F405


def _max_method(a: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    return max(a, dim, keepdim)


def _min_method(a: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    return min(a, dim, keepdim)


_g = globals()
METHODS: dict[str, Any] = {
    name: _g[name]
    for name in (
        "add sub mul div pow neg exp log log1p sqrt rsqrt abs sin cos tanh sigmoid relu erf "
        "sign floor ceil round trunc reciprocal gelu silu softplus leaky_relu "
        "softmax log_softmax clamp maximum minimum sum mean var std amax amin logsumexp prod "
        "norm argmax argmin all any cumsum reshape view flatten unflatten squeeze unsqueeze "
        "expand expand_as permute transpose contiguous t index_select gather scatter_add "
        "index_add masked_fill masked_fill_ split chunk unbind narrow select eq ne lt le gt ge "
        "logical_and logical_or logical_xor logical_not isnan isinf isfinite "
        "add_ sub_ mul_ div_ zero_ fill_ copy_ clamp_ normal_ uniform_ bernoulli_ exponential_ "
        "random_ matmul view_as reshape_as type_as repeat flip tril triu outer equal allclose "
        "isclose count_nonzero remainder floor_divide"
    ).split()
}
METHODS.update({
    "multiply": mul, "subtract": sub, "divide": div, "true_divide": div,  # noqa: F405
    "clip": clamp, "clip_": clamp_, "mm": matmul, "bmm": matmul, "mv": matmul,  # noqa: F405
    "dot": matmul, "swapaxes": transpose, "max": _max_method, "min": _min_method,  # noqa: F405
    "where": _where_method, "absolute": abs, "negative": neg,  # noqa: F405
})
for _name, _fn in METHODS.items():
    if _fn is not None:
        setattr(Tensor, _name, _fn)
