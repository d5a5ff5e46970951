"""Gradient clipping in place: ``clip_grad_norm_`` and ``clip_grad_value_`` (torch's
formulas; parameters whose ``.grad`` is ``None`` are skipped).

Example:
    >>> import gradsum
    >>> from gradsum.nn.utils import clip_grad_value_
    >>> p = gradsum.nn.Parameter(gradsum.zeros(3))
    >>> p.grad = gradsum.tensor([-2.0, 0.5, 9.0])
    >>> clip_grad_value_([p], 1.0)
    >>> p.grad.tolist()
    [-1.0, 0.5, 1.0]
"""

from __future__ import annotations

import math
import types
import warnings
from collections.abc import Iterable
from typing import Any

from gradsum import _dtype as D
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import no_grad
from gradsum.nn import _messages

_TensorOrTensors = Tensor | Iterable[Tensor]


def _as_list(parameters: Any) -> list[Tensor]:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def _vector_norm(arr: Any, norm_type: float) -> Any:
    """``torch.linalg.vector_norm`` of a whole array, in the array's dtype."""
    if norm_type == 2 and arr.dtype.kind == "f":  # (the common norm: a square needs no abs)
        return xp.sqrt((arr * arr).sum(dtype=arr.dtype))
    a = xp.abs(arr)
    if abs(norm_type) == math.inf and not a.size:  # (max/min of nothing: torch refuses too)
        raise RuntimeError(_messages.foreach_norm_cannot_compute_infinity())
    if norm_type == math.inf:
        return a.max()
    if norm_type == -math.inf:
        return a.min()
    if norm_type == 0:
        return xp.asarray((a != 0).sum(), dtype=arr.dtype)
    if norm_type == 1:
        return a.sum(dtype=arr.dtype)
    if norm_type == 2:
        return xp.sqrt((a * a).sum(dtype=arr.dtype))
    return ((a ** norm_type).sum(dtype=arr.dtype) ** (1.0 / norm_type)).astype(arr.dtype)


def get_total_norm(tensors: _TensorOrTensors, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """The ``norm_type`` norm of ``tensors`` viewed as one vector (the norm of their norms),
    as a 0-d tensor (torch's ``get_total_norm``; ``foreach`` is accepted and ignored).

    Example:
        >>> import gradsum
        >>> from gradsum.nn.utils import get_total_norm
        >>> get_total_norm([gradsum.tensor([3.0]), gradsum.tensor([4.0])])
        tensor(5.)

    Raises:
        RuntimeError: the norm is nan/inf and ``error_if_nonfinite=True``.
    """
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return Tensor._make(xp.zeros((), dtype=D.get_default_dtype().np))
    with no_grad():
        norms = [_vector_norm(t._array, norm_type) for t in tensors]
        dt = xp.result_type(*[n.dtype for n in norms])
        total = _vector_norm(xp.stack([xp.asarray(n, dtype=dt) for n in norms]), norm_type)
        total = xp.asarray(total, dtype=dt)
    if error_if_nonfinite and not bool(xp.isfinite(total)):
        raise RuntimeError(_messages.total_norm_order_gradients_from(norm_type))
    return Tensor._make(total)


def clip_grads_with_norm_(parameters: _TensorOrTensors, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Scale the gradients in place by ``min(max_norm / (total_norm + 1e-6), 1)``, given a
    precomputed ``total_norm`` (torch's ``clip_grads_with_norm_``).

    Example:
        >>> import gradsum
        >>> from gradsum.nn.utils import clip_grads_with_norm_
        >>> p = gradsum.nn.Parameter(gradsum.zeros(2))
        >>> p.grad = gradsum.tensor([3.0, 4.0])
        >>> clip_grads_with_norm_([p], 1.0, gradsum.tensor(5.0))
        >>> [round(v, 4) for v in p.grad.tolist()]
        [0.6, 0.8]
    """
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    total = total_norm._array if isinstance(total_norm, Tensor) else xp.asarray(total_norm)
    dt = total.dtype
    with no_grad(), xp.errstate(invalid="ignore", divide="ignore", over="ignore"):
        # (inf total norm: 0 * inf = nan in the gradients, silently, like torch)
        coef = xp.minimum(xp.asarray(max_norm, dtype=dt) / (total + dt.type(1e-6)), 1.0)
        for g in grads:
            arr = g._array
            xp.multiply(arr, coef.astype(arr.dtype), out=arr)
            g._vc[0] += 1


def clip_grad_norm_(parameters: _TensorOrTensors, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Scale the gradients in place so that their total ``norm_type`` norm (the norm of the
    per-gradient norms) is at most ``max_norm``; returns that total norm (before clipping) as
    a tensor. The scale is ``min(max_norm / (total + 1e-6), 1)``, applied always, as torch
    (:func:`get_total_norm` then :func:`clip_grads_with_norm_`).

    ``foreach`` is accepted for torch compatibility and ignored.

    Raises:
        RuntimeError: the total norm is nan/inf and ``error_if_nonfinite=True`` (nothing is
            changed then).
    """
    if isinstance(parameters, Tensor):
        params = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        params = list(parameters)
        if is_generator and not params:
            warnings.warn(
                _messages.parameters_empty_generator_no_gradient(),
                UserWarning, stacklevel=2,
            )
    grads = [p.grad for p in params if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters: _TensorOrTensors, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Deprecated alias of :func:`clip_grad_norm_` (warns, like torch)."""
    warnings.warn(_messages.clip_grad_norm_deprecated(), FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: _TensorOrTensors, clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamp every gradient in place to ``[-clip_value, clip_value]``."""
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
