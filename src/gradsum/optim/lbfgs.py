"""``LBFGS``: limited-memory BFGS with an optional strong-Wolfe line search (torch's
algorithm, step for step: the same closure calls, stopping rules and state).

Example:
    >>> import gradsum
    >>> from gradsum import nn, optim
    >>> w = nn.Parameter(gradsum.tensor([3.0, -1.0], dtype=gradsum.float64))
    >>> opt = optim.LBFGS([w], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((w - gradsum.tensor([1.0, 2.0], dtype=gradsum.float64)) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> _ = opt.step(closure)
    >>> [round(v, 6) for v in w.tolist()], opt.state[w]["func_evals"]
    ([1.0, 2.0], 3)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ClassVar

from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import enable_grad, no_grad  # noqa: F401 (enable_grad: surface)
from gradsum.optim import _messages
from gradsum.optim._kernels import _add_scaled_
from gradsum.optim.optimizer import Optimizer, _bump, _check_hyper, _run_closure

# Scalars in the algorithm are Python numbers or 0-d tensors, as in torch (a dot product is a
# 0-d tensor, a loss a float), so the state holds the same kinds of values as torch's.
_Num = Any


def _cubic_interpolate(x1: _Num, f1: _Num, g1: _Num, x2: _Num, f2: _Num, g2: _Num,
                       bounds: tuple[_Num, _Num] | None = None) -> _Num:
    """The minimizer of the cubic through ``(x1, f1)``, ``(x2, f2)`` with slopes ``g1``,
    ``g2``, clamped to ``bounds`` (default: the interval); the midpoint when the cubic has no
    real minimizer."""
    if bounds is None:
        lo, hi = (x1, x2) if x1 <= x2 else (x2, x1)
    else:
        lo, hi = bounds
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if not d2_square >= 0:
        return (lo + hi) / 2.0
    d2 = d2_square.sqrt()
    if x1 <= x2:
        min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(min_pos, lo), hi)


def _strong_wolfe(obj_func: Callable[[Any, _Num, Tensor], tuple[float, Tensor]], x: Any,
                  t: _Num, d: Tensor, f: float, g: Tensor, gtd: _Num, c1: float = 1e-4,
                  c2: float = 0.9, tolerance_change: float = 1e-9,
                  max_ls: int = 25) -> tuple[float, Tensor, _Num, int]:
    """A line search for a step ``t`` along ``d`` meeting the strong Wolfe conditions
    (bracketing, then zooming by cubic interpolation). Returns ``(f, g, t, evaluations)``."""
    d_norm = d.abs().max()
    g = g.clone()
    f_new, g_new = obj_func(x, t, d)
    evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    bracket: list[Any] = []
    bracket_f: list[Any] = []
    bracket_g: list[Any] = []
    bracket_gtd: list[Any] = []
    # phase 1: find an interval holding a point that meets the conditions
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        t_next = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                    bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new.clone(), gtd_new
        t = t_next
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:  # (no bracket found: the bracket is [0, t])
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # phase 2: zoom into the bracket
    insuf_progress = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        # keep t away from the ends of the bracket (a safeguard against tiny moves)
        hi_b, lo_b = max(bracket), min(bracket)
        eps = 0.1 * (hi_b - lo_b)
        if min(hi_b - t, t - lo_b) < eps:
            if insuf_progress or t >= hi_b or t <= lo_b:
                t = hi_b - eps if abs(t - hi_b) < abs(t - lo_b) else lo_b + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high] = t, f_new
            bracket_g[high], bracket_gtd[high] = g_new.clone(), gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low] = t, f_new
            bracket_g[low], bracket_gtd[low] = g_new.clone(), gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals


class LBFGS(Optimizer):
    """L-BFGS (torch's algorithm, after minFunc). One :meth:`step` runs up to ``max_iter``
    iterations, calling ``closure`` (required: it re-evaluates the loss and its gradients)
    at most about ``max_eval`` times.

    Args:
        params: the parameters (one group only: LBFGS has no per-group options).
        lr: the step length (default 1).
        max_iter: iterations per :meth:`step` (default 20).
        max_eval: closure evaluations per :meth:`step` (default ``max_iter * 5 // 4``).
        tolerance_grad: stop when the largest gradient entry is at most this (default 1e-7).
        tolerance_change: stop when the loss or the parameters change less (default 1e-9).
        history_size: the number of curvature pairs kept (default 100).
        line_search_fn: ``None`` (a fixed step) or ``"strong_wolfe"``.

    The state lives under the first parameter: ``func_evals``, ``n_iter``, ``d``, ``t``,
    ``old_dirs``, ``old_stps``, ``ro``, ``H_diag``, ``prev_flat_grad``, ``prev_loss`` and,
    after a second iteration, ``al``.

    Example:
        >>> import gradsum
        >>> a, b = gradsum.nn.Parameter(gradsum.ones(1)), gradsum.nn.Parameter(gradsum.ones(1))
        >>> gradsum.optim.LBFGS([{"params": [a]}, {"params": [b]}])
        Traceback (most recent call last):
        ...
        ValueError: LBFGS doesn't support per-parameter options (parameter groups)
    """

    _GROUP_DEFAULTS: ClassVar[dict[str, Any]] = {}

    def __init__(self, params: Any, lr: float | Tensor = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        _check_hyper(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {
            "lr": lr, "max_iter": max_iter, "max_eval": max_eval,
            "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
            "history_size": history_size, "line_search_fn": line_search_fn,
        }
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError(_messages.lbfgs_param_groups())
        self._params: list[Tensor] = self.param_groups[0]["params"]
        self._numel_cache: int | None = None

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self.__dict__.setdefault("_params", self.param_groups[0]["params"])
        self.__dict__.setdefault("_numel_cache", None)

    def _numel(self) -> int:
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self) -> Tensor:
        """All gradients as one vector (zeros for a parameter without one)."""
        parts = [xp.zeros(p.numel(), dtype=p._array.dtype) if p.grad is None
                 else p.grad._array.reshape(-1) for p in self._params]
        return Tensor._make(xp.concatenate(parts) if len(parts) > 1 else parts[0].copy())

    def _add_grad(self, step_size: _Num, update: Tensor) -> None:
        """``p.add_(update[slice of p], alpha=step_size)`` for every parameter (torch's
        ``_add_grad``: one fused multiply-add per element on its AVX2/AVX-512 kernels)."""
        alpha = float(step_size)
        flat = update._array
        offset = 0
        for p in self._params:
            n = p.numel()
            _add_scaled_(p._array, flat[offset:offset + n].reshape(p._array.shape), alpha)
            offset += n
            _bump(p)

    def _clone_param(self) -> list[Any]:
        return [p._array.copy() for p in self._params]

    def _set_param(self, params_data: list[Any]) -> None:
        for p, data in zip(self._params, params_data):
            p._array[...] = data
            _bump(p)

    def _directional_evaluate(self, closure: Callable[[], Any], x: list[Any], t: _Num,
                              d: Tensor) -> tuple[float, Tensor]:
        """The loss and gradient at ``x + t * d``; the parameters are restored to ``x``."""
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run up to ``max_iter`` iterations; returns the loss of the first closure call.

        Args:
            closure: re-evaluates the model, calls ``backward`` and returns the loss.
        """
        with no_grad():
            return self._step(closure)

    def _step(self, closure: Callable[[], Any]) -> Any:
        if len(self.param_groups) != 1:
            raise AssertionError(_messages.lbfgs_one_group(len(self.param_groups)))

        evaluate = functools.partial(_run_closure, closure)
        group = self.param_groups[0]
        lr = group["lr"]
        lr = lr.reshape(()) if isinstance(lr, Tensor) else lr  # (torch's _to_scalar)
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = evaluate()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:  # already optimal
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag = state.get("H_diag")
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            # the descent direction
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = y.dot(s)
                if ys > 1e-10:  # keep the pair only with positive curvature
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                # the two-loop recursion: d = -H g
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = flat_grad.neg()
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q.add_(old_dirs[i], alpha=-float(al[i]))
                d = r = q.mul(H_diag)
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r.add_(old_stps[i], alpha=float(al[i] - be_i))
            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            # the step length
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:  # not a descent direction
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError(_messages.line_search_unsupported())
                x_init = self._clone_param()

                def obj_func(x: Any, t: _Num, d: Tensor) -> tuple[float, Tensor]:
                    return self._directional_evaluate(evaluate, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd,
                    max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = flat_grad.abs().max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:  # re-evaluate (the last iteration does not need it)
                    loss = float(evaluate())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = flat_grad.abs().max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            # the stopping rules
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state["d"], state["t"] = d, t
        state["old_dirs"], state["old_stps"], state["ro"] = old_dirs, old_stps, ro
        state["H_diag"] = H_diag
        state["prev_flat_grad"], state["prev_loss"] = prev_flat_grad, prev_loss
        return orig_loss
