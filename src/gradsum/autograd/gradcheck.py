"""Numerical gradient checks in float64: ``gradcheck`` (first order) and ``gradgradcheck``
(second order), by central differences.

Example:
    >>> import gradsum
    >>> x = gradsum.randn(3, dtype=gradsum.float64, requires_grad=True)
    >>> gradsum.autograd.gradcheck(lambda t: (t.sin() * t).sum(), (x,))
    True
    >>> gradsum.autograd.gradgradcheck(lambda t: (t.sin() * t).sum(), (x,))
    True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from gradsum._backend import xp
from gradsum.autograd import _messages

if TYPE_CHECKING:
    from gradsum._tensor import Tensor


class GradcheckError(RuntimeError):
    """Raised when analytical and numerical gradients disagree."""


def _outputs(fn: Callable[..., Any], inputs: Sequence[Any]) -> list[Tensor]:
    from gradsum._tensor import Tensor

    out = fn(*inputs)
    outs = [out] if isinstance(out, Tensor) else list(out)
    return [o for o in outs if isinstance(o, Tensor) and o.dtype.is_floating_point]


def _numerical_jacobian(fn: Callable[..., Any], inputs: Sequence[Any], i: int, eps: float
                        ) -> list[Any]:
    """d(each output, flattened) / d(input i, flattened), by central differences."""
    x = inputs[i]._array
    if x.size and any(st == 0 and n > 1 for st, n in zip(x.strides, x.shape)):
        raise RuntimeError(_messages.gradcheck_overlapping_input(i))
    cols: list[list[Any]] = []
    # Each element is perturbed where it lives (``x[pos]``, in C order: the column order of
    # the analytical Jacobian): a non-contiguous input (a transposed or sliced view) has no
    # flat view to write through. Grad mode stays on: the function may itself call
    # autograd.grad (gradgradcheck).
    for pos in xp.ndindex(x.shape):
        orig = x[pos]
        x[pos] = orig + eps
        plus = [o._array.astype(xp.float64).reshape(-1).copy() for o in _outputs(fn, inputs)]
        x[pos] = orig - eps
        minus = [o._array.astype(xp.float64).reshape(-1).copy() for o in _outputs(fn, inputs)]
        x[pos] = orig
        cols.append([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
    sizes = ([c.size for c in cols[0]] if cols
             else [o._array.size for o in _outputs(fn, inputs)])  # an empty input: no columns
    jac = []
    for j, size in enumerate(sizes):
        m = xp.zeros((size, x.size))
        for k, col in enumerate(cols):
            m[:, k] = col[j]
        jac.append(m)
    return jac


def _analytical_jacobian(fn: Callable[..., Any], inputs: Sequence[Any], diff_idx: list[int]
                         ) -> list[list[Any]]:
    """jac[i][j]: d(output j) / d(input i), one vector-Jacobian product per output element."""
    from gradsum._tensor import Tensor
    from gradsum.autograd import grad

    outs = _outputs(fn, inputs)
    jac = [[xp.zeros((o._array.size, inputs[i]._array.size)) for o in outs] for i in diff_idx]
    for j, o in enumerate(outs):
        if not o.requires_grad:
            continue
        for r in range(o._array.size):
            seed = xp.zeros(o._array.size, dtype=o._array.dtype)
            seed[r] = 1
            gs = grad([o], [inputs[i] for i in diff_idx],
                      [Tensor._make(seed.reshape(o._array.shape))], retain_graph=True,
                      allow_unused=True)
            for k, g in enumerate(gs):
                if g is not None:
                    jac[k][j][r, :] = g._array.astype(xp.float64).reshape(-1)
    return jac


def gradcheck(
    func: Callable[..., Any],
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    **_: Any,
) -> bool:
    """Compare autograd's gradients with central differences for the inputs that require
    grad. Use float64 inputs (float32 differences are too coarse)."""
    from gradsum._tensor import Tensor

    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    diff_idx = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not diff_idx:
        raise ValueError(_messages.gradcheck_no_input_requires_grad())
    analytical = _analytical_jacobian(func, inputs, diff_idx)
    for k, i in enumerate(diff_idx):
        numerical = _numerical_jacobian(func, inputs, i, eps)
        for j, (a, n) in enumerate(zip(analytical[k], numerical)):
            if not xp.allclose(a, n, rtol=rtol, atol=atol, equal_nan=True):
                msg = (
                    f"Jacobian mismatch for output {j} with respect to input {i},\n"
                    f"numerical:{n}\nanalytical:{a}\n"
                    f"max abs difference {float(xp.nanmax(xp.abs(a - n))):.3g} "
                    f"(atol={atol}, rtol={rtol})"
                )
                if raise_exception:
                    raise GradcheckError(msg)
                return False
    return True


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Any,
    grad_outputs: Any = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    **_: Any,
) -> bool:
    """Check second derivatives: gradcheck of (inputs, v) -> vJp(func)(inputs, v), with the
    backward recorded by ``create_graph=True``."""
    from gradsum._creation import randn_like
    from gradsum._tensor import Tensor
    from gradsum.autograd import grad

    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        from gradsum._random import Generator

        gen = Generator().manual_seed(0)
        grad_outputs = [randn_like(o, generator=gen).requires_grad_() for o in outs]
    else:
        grad_outputs = [grad_outputs] if isinstance(grad_outputs, Tensor) else list(
            grad_outputs)
    n_in = len(inputs)
    diff_idx = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]

    def first_order(*args: Any) -> tuple[Tensor, ...]:
        ins, vs = args[:n_in], args[n_in:]
        o = _outputs(func, ins)
        gs = grad(o, [ins[i] for i in diff_idx], list(vs), create_graph=True,
                  allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_order, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol,
                     rtol=rtol, raise_exception=raise_exception)
