"""The elementwise kernels of torch's single-tensor optimizer updates, shared by every algorithm.

Every optimizer's update is written with these, over the pieces
:func:`gradsum.optim.optimizer._batches` gives (a large parameter block by block, a group's
small ones concatenated), in torch's order of operations, so that each element of the
parameter and of the state gets the bits of torch's ``foreach=False`` update on its vectorised
(AVX2/AVX-512) CPU kernels: there ``add_(y, alpha=a)``, ``addcmul_`` and ``lerp_`` round once
(a fused multiply-add, emulated by gradsum._fma), ``addcdiv_`` is ``x + (value * t1) / t2``
rounded at each operation, and ``mul_``, ``div_``, ``reciprocal`` and a plain ``add_`` are
single IEEE operations (and ``sqrt`` is IEEE's where torch's MKL kernel is: see _sqrt). A
number applied to an array is first taken in the array's dtype, as torch converts a Python
scalar (or a 0-d tensor of another float dtype) to the tensor's.

The arguments are NumPy arrays (a parameter's, its gradient's and its state's buffers, or
pieces of them) and numbers; the kernels write into the arrays named with a trailing ``_``.

Example:
    >>> import numpy as np
    >>> from gradsum.optim._kernels import _ema_sq_, _lerp_
    >>> m, v, g = np.zeros(2, np.float32), np.ones(2, np.float32), np.array([2.0, -2.0], np.float32)
    >>> _lerp_(m, g, 0.1); _ema_sq_(v, g, 0.9)      # Adam's moments: m.lerp_(g, 0.1), v
    >>> m.tolist(), v.tolist()
    ([0.20000000298023224, -0.20000000298023224], [1.2999999523162842, 1.2999999523162842])
"""

from __future__ import annotations

from typing import Any

from gradsum import _fma
from gradsum._backend import xp


def _as(a: Any, v: Any) -> Any:
    """The number ``v`` (a Python number or a NumPy scalar) in the dtype of array ``a``."""
    return a.dtype.type(v)


def _fma_to(out: Any, a: Any, x: Any, y: Any) -> Any:
    """``out[...] = gradsum._fma.fma(a, x, y)`` (``out`` may be ``x`` or ``y``); returns ``out``.
    (_fma keeps its float64 temporaries in scratch arrays of its own.)"""
    out[...] = _fma.fma(a, x, y)
    return out


def _add_scaled_(dest: Any, update: Any, alpha: Any) -> None:
    """torch's ``dest.add_(update, alpha=alpha)``: ``fma(alpha, update, dest)``, rounded once,
    ``alpha`` in ``dest``'s dtype. With ``alpha`` 1 or -1 the product is exact and the plain
    sum is that once-rounded result (and far cheaper: such sums often land on the ties that
    send the emulated FMA down its slow path)."""
    if alpha == 1:
        dest += update
    elif alpha == -1:
        dest -= update
    else:
        _fma_to(dest, alpha, update, dest)


def _add_scaled(x: Any, other: Any, alpha: Any) -> Any:
    """torch's ``x.add(other, alpha=alpha)``: a new array (fused)."""
    return _fma.fma(alpha, other, x)


def _mul_(a: Any, v: Any) -> None:
    """torch's ``a.mul_(v)`` (a momentum or moment decay, a decoupled weight decay's
    ``1 - lr * wd``): ``v`` taken in ``a``'s dtype, one IEEE rounding."""
    xp.multiply(a, _as(a, v), out=a)


def _lerp(start: Any, end: Any, weight: Any) -> Any:
    """torch's ``start.lerp(end, weight)``: fused, from the nearer end
    (``fma(w, end - start, start)`` where ``|w| < 0.5``, else ``fma(w - 1, end - start,
    end)``), ``weight`` in the arrays' dtype. A new array."""
    return _fma.lerp(start, end, weight)


def _lerp_(m: Any, end: Any, weight: Any) -> None:
    """torch's ``m.lerp_(end, weight)`` (:func:`_lerp`, into ``m``)."""
    m[...] = _fma.lerp(m, end, weight)


def _addcmul_to(out: Any, x: Any, t1: Any, t2: Any, value: Any) -> Any:
    """``out[...] =`` torch's ``x.addcmul(t1, t2, value=value)``: ``fma(value * t1, t2, x)``
    (the scaled factor rounded, then one fused step); ``out`` may be ``x``. Returns ``out``."""
    out[...] = _fma.addcmul(x, value, t1, t2)
    return out


def _addcmul_(dest: Any, t1: Any, t2: Any, value: Any) -> None:
    """torch's ``dest.addcmul_(t1, t2, value=value)``."""
    _addcmul_to(dest, dest, t1, t2, value)


def _ema_sq_(v: Any, g: Any, beta: Any) -> None:
    """torch's ``v.mul_(beta).addcmul_(g, g, value=1 - beta)``: the running average of squares
    of Adam, NAdam, RAdam, RMSprop and Adadelta."""
    _mul_(v, beta)
    _addcmul_(v, g, g, 1 - beta)


def _addcdiv_(dest: Any, t1: Any, t2: Any, value: Any, t: Any = None) -> None:
    """torch's ``dest.addcdiv_(t1, t2, value=value)``: ``dest + (value * t1) / t2``, each
    operation rounded (not fused in any of torch's kernels); ``t``: a scratch array shaped like
    ``dest`` (else a temporary)."""
    u = xp.multiply(t1, _as(dest, value), out=t)
    dest += xp.divide(u, t2, out=u)


def _grad_block(ga: Any, pa: Any, wd: Any, maximize: bool) -> Any:
    """The gradient torch's updates use: negated with ``maximize``, then
    ``grad.add(param, alpha=weight_decay)`` (fused) when ``wd != 0``. A new array unless it is
    ``ga`` itself (neither applies); computed per block, so a large parameter's negated or
    decayed gradient is never a fresh full-size temporary."""
    if maximize:
        ga = xp.negative(ga)
    if wd != 0:
        ga = _fma.fma(wd, pa, ga)
    return ga


def _one_minus(a: Any, beta: Any) -> Any:
    """``1 - beta`` as torch computes the lerp weight of Adam's first moment: in Python for a
    number, in ``a``'s dtype for a tensor (torch casts a tensor ``beta1`` to the parameter's
    dtype first)."""
    return 1 - _as(a, beta) if isinstance(beta, xp.generic) else 1 - beta


def _adam_moments(pa: Any, ga: Any, m: Any, v: Any, beta1: Any, beta2: Any, lr: Any,
                  wd: float, decoupled: bool, maximize: bool = False) -> Any:
    """Weight decay (``decoupled``: ``param.mul_(1 - lr * wd)``, else the gradient becomes
    ``grad.add(param, alpha=wd)``), then Adam's moments in place, as Adam, NAdam and RAdam
    update them: ``m.lerp_(g, 1 - beta1)``, ``v.mul_(beta2).addcmul_(g, g, value=1 - beta2)``.
    Returns the gradient used (negated first with ``maximize``)."""
    if decoupled:
        if wd != 0:
            _mul_(pa, 1 - lr * wd)
        ga = _grad_block(ga, pa, 0, maximize)
    else:
        ga = _grad_block(ga, pa, wd, maximize)
    _lerp_(m, ga, _one_minus(m, beta1))
    _ema_sq_(v, ga, beta2)
    return ga


def _bias_correction(beta: Any, step: float) -> Any:
    """``1 - beta**step``, the bias correction of a moment averaged with ``beta`` since the
    first step (a Python number, or a NumPy scalar for a tensor ``beta``)."""
    return 1 - beta**step


def _rdiv(num: Any, den: Any) -> Any:
    """``num / den`` as torch computes it: in Python for two numbers, as a tensor's division
    when either is a NumPy scalar (a 0-d tensor hyper-parameter), and a number over a tensor
    as torch's ``Tensor.__rtruediv__``: ``den.reciprocal() * num``."""
    if isinstance(den, xp.generic) and not isinstance(num, xp.generic):
        one = den.dtype.type(1)
        return (one / den) * den.dtype.type(num)
    return num / den


def _sqrt(x: Any, out: Any = None) -> Any:
    """torch's ``x.sqrt()`` of the updates: IEEE's correctly rounded square root.

    torch computes ``sqrt`` with MKL's vector math (``vsSqrt``/``vdSqrt``, high accuracy),
    which is the IEEE result on some CPUs but not on all: on an AMD EPYC (Zen 4) it is one
    unit in the last place off for about 17% of float32 and 1% of float64 inputs, in every
    ``ATEN_CPU_CAPABILITY``. Those bits are MKL's undocumented algorithm, so gradsum keeps
    IEEE's; the optimizers' tests substitute torch's own kernel here to check every other
    operation bit for bit on such CPUs (tests/optim/test_optimizer_regressions.py)."""
    return xp.sqrt(x, out=out)


def _sqrt_scalar(v: Any) -> Any:
    """``v ** 0.5`` as torch computes it: Python's power for a number, ``sqrt`` for a tensor
    (torch's ``pow`` with exponent 0.5 is its ``sqrt`` kernel)."""
    return _sqrt(v)[()] if isinstance(v, xp.generic) else v**0.5


def _sqrt_plus(x: Any, eps: float, out: Any) -> Any:
    """``out[...] =`` torch's ``x.add(eps).sqrt_()`` (Adadelta's std and delta), each operation
    rounded. Returns ``out``."""
    t = xp.add(x, _as(x, eps), out=out)
    return _sqrt(t, out=t)


def _denom(x: Any, eps: float, out: Any, bias_correction2_sqrt: Any = None) -> Any:
    """``out[...] =`` torch's ``(x.sqrt() / bias_correction2_sqrt).add_(eps)`` (the division
    only where given), each operation rounded: the denominator of Adam, NAdam, RAdam, Adagrad
    and RMSprop. ``out`` may be ``x``. Returns ``out``."""
    denom = _sqrt(x, out=out)
    if bias_correction2_sqrt is not None:
        denom /= _as(denom, bias_correction2_sqrt)
    denom += _as(denom, eps)
    return denom
