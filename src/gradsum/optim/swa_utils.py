"""Stochastic Weight Averaging and exponential moving averages of a model (torch's
``torch.optim.swa_utils``): :class:`AveragedModel`, the averaging functions
``get_swa_avg_fn``/``get_ema_avg_fn`` and their list forms ``get_swa_multi_avg_fn``/
``get_ema_multi_avg_fn``, :func:`update_bn` (BatchNorm statistics recomputed over a loader)
and the :class:`SWALR` scheduler.

Example:
    >>> import gradsum
    >>> from gradsum import nn, optim
    >>> from gradsum.optim.swa_utils import AveragedModel, SWALR
    >>> model = nn.Linear(1, 1, bias=False)
    >>> swa = AveragedModel(model)
    >>> opt = optim.SGD(model.parameters(), lr=1.0)
    >>> sched = SWALR(opt, swa_lr=0.5, anneal_epochs=1)
    >>> for value in (1.0, 2.0, 6.0):
    ...     with gradsum.no_grad():
    ...         _ = model.weight.fill_(value)
    ...     swa.update_parameters(model)
    >>> swa.module.weight.item(), swa.n_averaged.item()      # the mean of 1, 2 and 6
    (3.0, 3)
    >>> opt.step(); sched.step(); sched.get_last_lr()
    [0.5]
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any, Literal

from gradsum._creation import tensor
from gradsum._dtype import long
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import no_grad
from gradsum.nn import Module
from gradsum.nn.modules.batchnorm import _BatchNorm  # (torch.nn.modules.batchnorm._BatchNorm)
from gradsum.optim import _messages
from gradsum.optim.lr_scheduler import LRScheduler, _format_param
from gradsum.optim.optimizer import Optimizer

__all__ = [
    "SWALR", "AveragedModel", "get_ema_avg_fn", "get_ema_multi_avg_fn", "get_swa_avg_fn",
    "get_swa_multi_avg_fn", "update_bn",
]

PARAM_LIST = tuple[Tensor, ...] | list[Tensor]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(_messages.invalid_ema_decay(decay))


def _is_float_or_complex(t: Tensor) -> bool:
    return t.is_floating_point() or bool(getattr(t, "is_complex", lambda: False)())


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[[PARAM_LIST, PARAM_LIST, Any], None]:
    """The in-place exponential moving average of lists of tensors:
    ``ema = decay * ema + (1 - decay) * current`` (a ``lerp_`` for floating-point lists, an
    arithmetic copy otherwise, judged by the first tensor, as torch).

    Raises:
        ValueError: ``decay`` is outside ``[0, 1]``.

    Example:
        >>> import gradsum
        >>> from gradsum.optim.swa_utils import get_ema_multi_avg_fn
        >>> ema, cur = [gradsum.zeros(2)], [gradsum.ones(2)]
        >>> get_ema_multi_avg_fn(0.75)(ema, cur, 1)
        >>> ema[0].tolist()
        [0.25, 0.25]
    """
    _check_decay(decay)

    def ema_update(ema_param_list: PARAM_LIST, current_param_list: PARAM_LIST,
                   _: Any) -> None:
        with no_grad():
            if _is_float_or_complex(ema_param_list[0]):
                for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                    p_ema.lerp_(p_model, 1 - decay)
            else:
                for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable[[PARAM_LIST, PARAM_LIST, Any], None]:
    """The in-place running mean of lists of tensors: ``avg += (current - avg) / (n + 1)``
    after ``n`` models (a ``lerp_`` with weight ``1 / (n + 1)`` for floating-point lists).

    Example:
        >>> import gradsum
        >>> from gradsum.optim.swa_utils import get_swa_multi_avg_fn
        >>> avg = [gradsum.tensor([1.0])]
        >>> get_swa_multi_avg_fn()(avg, [gradsum.tensor([4.0])], gradsum.tensor(2))
        >>> avg[0].tolist()
        [2.0]
    """

    def swa_update(averaged_param_list: PARAM_LIST, current_param_list: PARAM_LIST,
                   num_averaged: Tensor | int) -> None:
        with no_grad():
            if _is_float_or_complex(averaged_param_list[0]):
                # (1 / (n + 1): a tensor of the default dtype when n is one, as torch)
                weight = float(1 / (num_averaged + 1))
                for p_avg, p_model in zip(averaged_param_list, current_param_list,
                                          strict=True):
                    p_avg.lerp_(p_model, weight)
            else:
                diffs = [c - a for c, a in zip(current_param_list, averaged_param_list,
                                               strict=True)]
                for p_avg, diff in zip(averaged_param_list, diffs, strict=True):
                    if isinstance(num_averaged, Tensor):
                        p_avg.addcdiv_(diff, num_averaged + 1)
                    else:
                        p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[[Tensor, Tensor, Any], Tensor]:
    """The exponential moving average of one tensor, returned (not in place):
    ``decay * ema + (1 - decay) * current``.

    Raises:
        ValueError: ``decay`` is outside ``[0, 1]``.

    Example:
        >>> import gradsum
        >>> from gradsum.optim.swa_utils import get_ema_avg_fn
        >>> get_ema_avg_fn(0.5)(gradsum.tensor([0.0]), gradsum.tensor([2.0]), 3).tolist()
        [1.0]
    """
    _check_decay(decay)

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable[[Tensor, Tensor, Any], Tensor]:
    """The running mean of one tensor after ``n`` models, returned (not in place):
    ``avg + (current - avg) / (n + 1)``.

    Example:
        >>> import gradsum
        >>> from gradsum.optim.swa_utils import get_swa_avg_fn
        >>> get_swa_avg_fn()(gradsum.tensor([1.0]), gradsum.tensor([4.0]), 2).tolist()
        [2.0]
    """

    def swa_update(averaged_param: Tensor, current_param: Tensor,
                   num_averaged: Tensor | int) -> Tensor:
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _group_by_dtype(self_params: list[Tensor], model_params: list[Tensor]
                    ) -> list[tuple[list[Tensor], list[Tensor]]]:
    """The pairs split by the averaged tensor's dtype, groups in order of first appearance
    (torch groups by device and dtype before its list averaging functions)."""
    groups: dict[Any, tuple[list[Tensor], list[Tensor]]] = {}
    for a, m in zip(self_params, model_params, strict=True):
        mine, theirs = groups.setdefault(a.dtype, ([], []))
        mine.append(a)
        theirs.append(m)
    return list(groups.values())


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and, with ``use_buffers``, buffers) hold a
    running average of ``model``'s, updated by :meth:`update_parameters` (torch's
    ``AveragedModel``, for SWA and EMA).

    The first :meth:`update_parameters` copies ``model``'s values; later ones apply
    ``avg_fn(averaged, current, n_averaged)`` to each tensor (its result is copied in) or
    ``multi_avg_fn(averaged_list, current_list, n_averaged)`` in place to each dtype's list;
    neither given: the equally weighted mean. Without ``use_buffers``, buffers are copied from
    ``model`` on each update. ``n_averaged`` (a long buffer, in the state dict) counts the
    updates. Calling the averaged model runs the copy's forward.

    Args:
        model: the module to average (deep-copied).
        device: where to put the copy (``module.to(device)``), if given.
        avg_fn: a per-tensor averaging function (see :func:`get_ema_avg_fn`).
        multi_avg_fn: an in-place list averaging function (see :func:`get_ema_multi_avg_fn`).
        use_buffers: average the buffers too (e.g. BatchNorm's running statistics).

    Raises:
        AssertionError: both ``avg_fn`` and ``multi_avg_fn`` are given (torch's type).

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> from gradsum.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
        >>> model = nn.Linear(1, 1, bias=False)
        >>> ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.9))
        >>> with gradsum.no_grad():
        ...     _ = model.weight.fill_(0.0)
        >>> ema.update_parameters(model)                 # first call: a copy
        >>> with gradsum.no_grad():
        ...     _ = model.weight.fill_(1.0)
        >>> ema.update_parameters(model)
        >>> round(ema.module.weight.item(), 4), ema(gradsum.ones(1, 1)).shape
        (0.1, (1, 1))
    """

    n_averaged: Tensor

    def __init__(self, model: Module, device: Any = None,
                 avg_fn: Callable[[Tensor, Tensor, Tensor | int], Tensor] | None = None,
                 multi_avg_fn: Callable[[PARAM_LIST, PARAM_LIST, Tensor | int], None]
                 | None = None,
                 use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError(_messages.avg_fn_and_multi_avg_fn())
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=long))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The averaged copy's forward."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters (and buffers, with ``use_buffers``) into the
        average, then count one more model in ``n_averaged``."""
        if self.use_buffers:
            self_param: Iterable[Tensor] = itertools.chain(self.module.parameters(),
                                                           self.module.buffers())
            model_param: Iterable[Tensor] = itertools.chain(model.parameters(),
                                                            model.buffers())
        else:
            self_param, model_param = self.parameters(), model.parameters()
        self_detached: list[Tensor] = []
        model_detached: list[Tensor] = []
        copy_param = bool(self.n_averaged == 0)
        for p_averaged, p_model in zip(self_param, model_param):  # (not strict, as torch)
            p_model_ = p_model.detach()
            self_detached.append(p_averaged.detach())
            model_detached.append(p_model_)
            if copy_param:
                p_averaged.detach().copy_(p_model_)

        if self.n_averaged > 0:
            if self.multi_avg_fn is not None or self.avg_fn is None:
                for mine, theirs in _group_by_dtype(self_detached, model_detached):
                    if self.multi_avg_fn is not None:
                        self.multi_avg_fn(mine, theirs, self.n_averaged)
                    else:  # (torch's path on the CPU: the per-tensor mean)
                        avg_fn = get_swa_avg_fn()
                        for p_averaged, p_model in zip(mine, theirs, strict=True):
                            p_averaged.copy_(avg_fn(p_averaged, p_model, self.n_averaged))
            else:
                for p_averaged, p_model in zip(self_detached, model_detached, strict=True):
                    p_averaged.detach().copy_(
                        self.avg_fn(p_averaged.detach(), p_model, self.n_averaged))

        if not self.use_buffers:
            # buffers are not averaged: keep them in sync with the source model
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.detach().copy_(b_model.detach())
        self.n_averaged += 1


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the running statistics of every BatchNorm layer of ``model`` with one pass
    over ``loader`` (torch's ``update_bn``): the statistics are reset, the layers set to a
    cumulative average (``momentum=None``) in training mode, each batch (a tensor, or the
    first element of a list/tuple; moved to ``device`` if given) run through ``model``
    under ``no_grad``; then the momenta and the training mode are restored. A model without
    BatchNorm layers is left alone.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> from gradsum.optim.swa_utils import update_bn
        >>> bn = nn.BatchNorm1d(1)
        >>> loader = [gradsum.tensor([[1.0], [3.0]]), (gradsum.tensor([[5.0], [7.0]]), None)]
        >>> update_bn(loader, bn)
        >>> bn.running_mean.tolist(), bn.momentum, bn.num_batches_tracked.item()
        ([4.0], 0.1, 2)
    """
    with no_grad():
        momenta: dict[Module, Any] = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for input in loader:
            if isinstance(input, (list, tuple)):
                input = input[0]
            if device is not None:
                input = input.to(device)
            model(input)
        for bn_module, momentum in momenta.items():
            bn_module.momentum = momentum
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to its ``swa_lr`` over ``anneal_epochs`` steps, then
    hold it there (torch's ``SWALR``, for the SWA phase). ``anneal_strategy``: ``"cos"``
    (``alpha = (1 - cos(pi t)) / 2``) or ``"linear"`` (``alpha = t``), ``t`` the fraction of
    the annealing done; each step sets ``lr = swa_lr * alpha + lr0 * (1 - alpha)`` with
    ``lr0`` recovered from the current rate (torch's chainable form). ``swa_lr``: one value,
    or one per group (stored in each group as ``"swa_lr"``).

    Raises:
        ValueError: a ``swa_lr`` list of the wrong length, an unknown ``anneal_strategy`` or a
            negative or non-int ``anneal_epochs``.

    Example:
        >>> import gradsum
        >>> from gradsum.optim.swa_utils import SWALR
        >>> opt = gradsum.optim.SGD([gradsum.nn.Parameter(gradsum.ones(1))], lr=1.0)
        >>> sched = SWALR(opt, swa_lr=0.1, anneal_epochs=2, anneal_strategy="linear")
        >>> lrs = []
        >>> for _ in range(3):
        ...     opt.step()
        ...     sched.step()
        ...     lrs.append(round(sched.get_last_lr()[0], 4))
        >>> lrs
        [0.55, 0.1, 0.1]
    """

    def __init__(self, optimizer: Optimizer, swa_lr: float | list[float],
                 anneal_epochs: int = 10, anneal_strategy: Literal["cos", "linear"] = "cos",
                 last_epoch: int = -1) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(_messages.anneal_strategy_invalid(anneal_strategy))
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(_messages.negative_anneal_epochs(anneal_epochs))
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: Any, swa_lr: Any, alpha: float) -> Any:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[Any]:
        """The next learning rates (call :meth:`get_last_lr` for the current ones: calling
        this outside ``step`` warns, as torch)."""
        self._warn_get_lr()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)]

    def _set_anneal_func(self, anneal_strategy: Literal["cos", "linear"]) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func: Callable[[float], float] = (
            self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal)

    def state_dict(self) -> dict[str, Any]:
        """Every attribute except the optimizer and the annealing function."""
        return {key: value for key, value in self.__dict__.items()
                if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a :meth:`state_dict` (the annealing function follows the saved strategy)."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
