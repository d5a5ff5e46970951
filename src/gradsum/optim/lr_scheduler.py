"""Learning-rate schedulers with torch's (recursive, chainable) formulas, so that the values
match torch step by step: ``StepLR``, ``MultiStepLR``, ``ExponentialLR``,
``CosineAnnealingLR``, ``LambdaLR``, ``MultiplicativeLR``, ``LinearLR``, ``ConstantLR``,
``PolynomialLR``, ``SequentialLR``, ``ChainedScheduler``, ``CosineAnnealingWarmRestarts``,
``CyclicLR``, ``OneCycleLR`` and ``ReduceLROnPlateau``.

A scheduler sets ``initial_lr`` in each param group, then performs its first step at
construction (``last_epoch`` becomes 0). Call ``optimizer.step()`` before
``scheduler.step()``.

Example:
    >>> import gradsum
    >>> from gradsum import nn, optim
    >>> opt = optim.SGD([nn.Parameter(gradsum.zeros(1))], lr=1.0)
    >>> sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4)
    >>> lrs = []
    >>> for _ in range(4):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    >>> lrs
    [0.8536, 0.5, 0.1464, 0.0]
"""

from __future__ import annotations

import math
import types
import warnings
import weakref
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from functools import partial, wraps
from typing import Any, Literal, SupportsFloat

from gradsum._tensor import Tensor
from gradsum.optim import _messages
from gradsum.optim.optimizer import Optimizer

__all__ = [
    "ChainedScheduler", "ConstantLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts",
    "CyclicLR", "ExponentialLR", "LRScheduler", "LambdaLR", "LinearLR", "MultiStepLR",
    "MultiplicativeLR", "OneCycleLR", "PolynomialLR", "ReduceLROnPlateau", "SequentialLR",
    "StepLR",
]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if "
    "epoch is different from None, the closed form is used instead of the new chainable form, "
    "where available. Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)


def _group_values(optimizer: Optimizer, key: str) -> list[Any]:
    return [g[key].clone() if isinstance(g[key], Tensor) else g[key]
            for g in optimizer.param_groups]


def _set_group_value(group: dict[str, Any], key: str, value: Any) -> None:
    if isinstance(group[key], Tensor):
        group[key].fill_(float(value))
    else:
        group[key] = value


def _format_param(name: str, optimizer: Optimizer, param: Any) -> list[Any]:
    """One value per param group (a scalar repeated, or a list/tuple of the right length)."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(_messages.per_group_length(name, param, optimizer))
    else:
        param = [param] * len(optimizer.param_groups)
    return [v.clone() if isinstance(v, Tensor) else v for v in param]


def _set_momentum(group: dict[str, Any], momentum: Any, use_beta1: bool) -> None:
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def _init_momentums(optimizer: Optimizer, base_momentum: Any, max_momentum: Any,
                    last_epoch: int, max_first: bool = False
                    ) -> tuple[bool, list[Any], list[Any]]:
    """Check the optimizer has a momentum (``momentum`` or ``betas``); when starting
    (``last_epoch == -1``) set each group's momentum to its max and record
    ``max_momentum``/``base_momentum`` in the group. Returns (use_beta1, bases, maxes)."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError(_messages.cycle_momentum_unsupported())
    use_beta1 = "betas" in optimizer.defaults
    if max_first:  # (only which length error comes first differs: as torch's OneCycleLR)
        maxes = _format_param("max_momentum", optimizer, max_momentum)
    bases = _format_param("base_momentum", optimizer, base_momentum)
    if not max_first:
        maxes = _format_param("max_momentum", optimizer, max_momentum)
    if last_epoch == -1:
        for m, b, group in zip(maxes, bases, optimizer.param_groups, strict=True):
            _set_momentum(group, m, use_beta1)
            group["max_momentum"] = m
            group["base_momentum"] = b
    return use_beta1, bases, maxes


class LRScheduler:
    """Base class: keeps ``base_lrs`` (the groups' ``initial_lr``), ``last_epoch`` and the
    last computed rates; subclasses implement :meth:`get_lr` (torch's chainable form) and
    optionally ``_get_closed_form_lr``."""

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(_messages.not_an_optimizer(optimizer))
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                initial = group["lr"]
                group.setdefault("initial_lr", initial.clone() if isinstance(initial, Tensor)
                                 else initial)
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(_messages.initial_lr_missing(i))
        self.base_lrs: list[Any] = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._patch_optimizer_step()
        self._initial_step()

    def _patch_optimizer_step(self) -> None:
        # Mark optimizer.step calls, to warn when scheduler.step() comes first (as torch).
        opt = self.optimizer
        if hasattr(opt.step, "_wrapped_by_lr_sched"):
            return
        opt_ref = weakref.ref(opt)
        func = opt.step.__func__  # type: ignore[attr-defined]

        @wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            o = opt_ref()
            o._opt_called = True  # type: ignore[union-attr]
            return func.__get__(o, o.__class__)(*args, **kwargs)

        wrapper._wrapped_by_lr_sched = True  # type: ignore[attr-defined]
        opt.step = wrapper  # type: ignore[method-assign]

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self) -> dict[str, Any]:
        """Every attribute except the optimizer."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list[Any]:
        """The learning rates set by the last :meth:`step`, one per param group."""
        return self._last_lr

    def get_lr(self) -> list[Any]:
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (``epoch`` given: jump there with the closed form, deprecated)."""
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(
                    _messages.optimizer_step_overridden(), UserWarning, stacklevel=2,
                )
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(
                    _messages.scheduler_step_before_optimizer(), UserWarning, stacklevel=2,
                )
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed = getattr(self, "_get_closed_form_lr", None)
                values = closed() if closed is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        # (strict, like torch: a group added after the scheduler was built is a ValueError)
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")

    def _warn_get_lr(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn(
                _messages.use_get_last_lr(), UserWarning, stacklevel=3,
            )

    def _current(self) -> list[Any]:
        return _group_values(self.optimizer, "lr")


_LRScheduler = LRScheduler  # torch's old name, kept for code that still uses it


def _per_group_lambdas(optimizer: Optimizer, lr_lambda: Any) -> list[Any]:
    """One function for every group, or the list given (one per group)."""
    if not isinstance(lr_lambda, (list, tuple)):
        return [lr_lambda] * len(optimizer.param_groups)
    if len(lr_lambda) != len(optimizer.param_groups):
        raise ValueError(_messages.lr_lambda_count(optimizer, lr_lambda))
    return list(lr_lambda)


class LambdaLR(LRScheduler):
    """``lr = initial_lr * lr_lambda(epoch)`` (one lambda, or one per group).

    Example:
        >>> import gradsum
        >>> from gradsum import nn, optim
        >>> opt = optim.SGD([nn.Parameter(gradsum.zeros(1))], lr=1.0)
        >>> s = optim.lr_scheduler.LambdaLR(opt, lambda e: 0.5 ** e)
        >>> opt.step(); s.step(); s.get_last_lr()
        [0.5]
    """

    def __init__(self, optimizer: Optimizer,
                 lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        self.lr_lambdas = _per_group_lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict[str, Any]:
        """Like the base, but a lambda is saved only when it is a callable object (its
        ``__dict__``), never a function."""
        sd = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        sd["lr_lambdas"] = [None] * len(self.lr_lambdas)
        for i, fn in enumerate(self.lr_lambdas):
            if not isinstance(fn, types.FunctionType):
                sd["lr_lambdas"][i] = fn.__dict__.copy()
        return sd

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        lr_lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = lr_lambdas
        for i, fn in enumerate(lr_lambdas):
            if fn is not None:
                self.lr_lambdas[i].__dict__.update(fn)

    def get_lr(self) -> list[Any]:
        self._warn_get_lr()
        return [base * lmbda(self.last_epoch)
                for lmbda, base in zip(self.lr_lambdas, self.base_lrs, strict=True)]


class StepLR(LRScheduler):
    """Multiply the rate by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_get_lr()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current()
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [base * self.gamma ** (self.last_epoch // self.step_size)
                for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the rate by ``gamma`` at each milestone epoch."""

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_get_lr()
        if self.last_epoch not in self.milestones:
            return self._current()
        return [g["lr"] * self.gamma ** self.milestones[self.last_epoch]
                for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        milestones = sorted(self.milestones.elements())
        return [base * self.gamma ** bisect_right(milestones, self.last_epoch)
                for base in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the rate linearly from ``start_factor`` to ``end_factor`` over
    ``total_iters`` epochs."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(_messages.start_factor_range())
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError(_messages.end_factor_range())
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_get_lr()
        if self.last_epoch == 0:
            return [g["lr"] * self.start_factor for g in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current()
        factor = 1.0 + (self.end_factor - self.start_factor) / (
            self.total_iters * self.start_factor
            + (self.last_epoch - 1) * (self.end_factor - self.start_factor)
        )
        return [g["lr"] * factor for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [base * (self.start_factor + (self.end_factor - self.start_factor)
                        * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the rate by ``gamma`` every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_get_lr()
        if self._is_initial:
            return self._current()
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the initial rate to ``eta_min`` over ``T_max`` epochs, with
    torch's recursive formula (so values match torch's, including when other code changes
    the rate in between)."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_get_lr()
        groups = self.optimizer.param_groups
        t, e = self.T_max, self.eta_min
        if self._is_initial:
            return self._current()
        if self._step_count == 1 and self.last_epoch > 0:
            return [e + (base - e) * (1 + math.cos(self.last_epoch * math.pi / t)) / 2
                    for base, _ in zip(self.base_lrs, groups, strict=True)]
        if (self.last_epoch - 1 - t) % (2 * t) == 0:
            return [g["lr"] + (base - e) * (1 - math.cos(math.pi / t)) / 2
                    for base, g in zip(self.base_lrs, groups, strict=True)]
        return [(1 + math.cos(math.pi * self.last_epoch / t))
                / (1 + math.cos(math.pi * (self.last_epoch - 1) / t)) * (g["lr"] - e) + e
                for g in groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


def _check_schedulers(name: str, schedulers: Sequence[LRScheduler], optimizer: Optimizer,
                      plateau_hint: str = "") -> None:
    """torch's checks of the schedulers SequentialLR and ChainedScheduler (``name``) run:
    each has an ``optimizer``, none is a ReduceLROnPlateau (``plateau_hint`` ends that
    error's text), all share ``optimizer``."""
    for i, s in enumerate(schedulers):
        if not hasattr(s, "optimizer"):
            raise TypeError(_messages.scheduler_without_optimizer(name, i))
        if isinstance(s, ReduceLROnPlateau):
            raise ValueError(_messages.plateau_in_composite(name, i, plateau_hint))
        if optimizer != s.optimizer:  # (torch: !=, identity for optimizers)
            raise ValueError(_messages.schedulers_different_optimizers(name, s, i, optimizer))


class SequentialLR(LRScheduler):
    """Run ``schedulers`` one after another, switching at each of the ``milestones``
    (the next scheduler restarts from its epoch 0 there)."""

    def __init__(self, optimizer: Optimizer, schedulers: list[LRScheduler],
                 milestones: list[int], last_epoch: int = -1) -> None:
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(_messages.no_schedulers(name))
        _check_schedulers(name, schedulers, optimizer,
                          " Step the ReduceLROnPlateau scheduler yourself, with its metric.")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(_messages.sequential_milestone_count(schedulers, milestones))
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            _set_group_value(group, "lr", group["initial_lr"])
        self._recursive_undo()
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def _recursive_undo(self, sched: Any = None) -> None:
        # Undo the initial step every scheduler took at its construction.
        s = self if sched is None else sched
        if hasattr(s, "_schedulers"):
            for sub in s._schedulers:
                self._recursive_undo(sub)
        elif hasattr(s, "last_epoch"):
            s.last_epoch -= 1

    recursive_undo = _recursive_undo

    def step(self) -> None:  # type: ignore[override]
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        sd = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        sd["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return sd

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        schedulers = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        state_dict["_schedulers"] = schedulers
        for i, s in enumerate(schedulers):
            self._schedulers[i].load_state_dict(s)


class MultiplicativeLR(LRScheduler):
    """Multiply the current rate by ``lr_lambda(epoch)`` every epoch (one function, or one
    per group); the lambdas are saved in :meth:`state_dict` only when they are callable
    objects (their ``__dict__``).

    Example:
        >>> import gradsum
        >>> from gradsum import nn, optim
        >>> opt = optim.SGD([nn.Parameter(gradsum.zeros(1))], lr=1.0)
        >>> s = optim.lr_scheduler.MultiplicativeLR(opt, lambda e: 0.5)
        >>> for _ in range(2):
        ...     opt.step(); s.step()
        >>> s.get_last_lr()
        [0.25]
    """

    def __init__(self, optimizer: Optimizer,
                 lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        self.lr_lambdas = _per_group_lambdas(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(_messages.lr_lambda_not_callable(fn))
        super().__init__(optimizer, last_epoch)

    state_dict = LambdaLR.state_dict
    load_state_dict = LambdaLR.load_state_dict

    def get_lr(self) -> list[Any]:
        self._warn_get_lr()
        if self._is_initial:
            return self._current()
        return [g["lr"] * lmbda(self.last_epoch)
                for lmbda, g in zip(self.lr_lambdas, self.optimizer.param_groups, strict=True)]


class ConstantLR(LRScheduler):
    """Multiply the rate by ``factor`` until epoch ``total_iters``, then restore it.

    Example:
        >>> import gradsum
        >>> from gradsum import nn, optim
        >>> opt = optim.SGD([nn.Parameter(gradsum.zeros(1))], lr=1.0)
        >>> s = optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
        >>> lrs = [s.get_last_lr()[0]]
        >>> for _ in range(3):
        ...     opt.step(); s.step(); lrs.append(s.get_last_lr()[0])
        >>> lrs
        [0.5, 0.5, 1.0, 1.0]
    """

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError(_messages.constant_factor_range())
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_get_lr()
        if self.last_epoch == 0:
            return [g["lr"] * self.factor for g in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return self._current()
        return [g["lr"] * (1.0 / self.factor) for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [base * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the rate as ``initial_lr * (1 - epoch / total_iters) ** power`` until
    ``total_iters`` (torch's recursive form), then keep it.

    Example:
        >>> import gradsum
        >>> from gradsum import nn, optim
        >>> opt = optim.SGD([nn.Parameter(gradsum.zeros(1))], lr=1.0)
        >>> s = optim.lr_scheduler.PolynomialLR(opt, total_iters=4, power=2.0)
        >>> lrs = []
        >>> for _ in range(5):
        ...     opt.step(); s.step(); lrs.append(round(s.get_last_lr()[0], 4))
        >>> lrs
        [0.5625, 0.25, 0.0625, 0.0, 0.0]
    """

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_get_lr()
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current()
        decay = ((1.0 - self.last_epoch / self.total_iters)
                 / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [g["lr"] * decay for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [base * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters)
                ** self.power for base in self.base_lrs]


class ChainedScheduler(LRScheduler):
    """Step several chainable schedulers of one optimizer together (each :meth:`step` calls
    theirs in order, so their factors compose). Takes no initial step of its own.

    Example:
        >>> import gradsum
        >>> from gradsum import nn, optim
        >>> opt = optim.SGD([nn.Parameter(gradsum.zeros(1))], lr=1.0)
        >>> S = optim.lr_scheduler
        >>> s = S.ChainedScheduler([S.ConstantLR(opt, factor=0.5, total_iters=2),
        ...                         S.ExponentialLR(opt, gamma=0.9)])
        >>> lrs = [s.get_last_lr()[0]]
        >>> for _ in range(3):
        ...     opt.step(); s.step(); lrs.append(round(s.get_last_lr()[0], 4))
        >>> lrs
        [0.5, 0.45, 0.81, 0.729]
    """

    def __init__(self, schedulers: Sequence[LRScheduler],
                 optimizer: Optimizer | None = None) -> None:
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(_messages.no_chained_schedulers(name))
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(name, schedulers, optimizer)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _group_values(schedulers[-1].optimizer, "lr")

    def step(self) -> None:  # type: ignore[override]
        """Step every scheduler, in order."""
        for s in self._schedulers:
            s.step()
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")

    state_dict = SequentialLR.state_dict
    load_state_dict = SequentialLR.load_state_dict


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR: cosine annealing from the initial rate to ``eta_min`` over ``T_i`` epochs, then
    a restart, with ``T_i`` starting at ``T_0`` and multiplied by ``T_mult`` at each restart.
    ``step(epoch)`` takes fractional epochs (e.g. ``epoch + i / iters`` per batch) and can
    be interleaved with plain ``step()`` calls.

    Example:
        >>> import gradsum
        >>> from gradsum import nn, optim
        >>> opt = optim.SGD([nn.Parameter(gradsum.zeros(1))], lr=1.0)
        >>> s = optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2)
        >>> lrs = []
        >>> for _ in range(6):
        ...     opt.step(); s.step(); lrs.append(round(s.get_last_lr()[0], 4))
        >>> lrs
        [0.5, 1.0, 0.8536, 0.5, 0.1464, 1.0]
        >>> s.step(2.5); round(s.get_last_lr()[0], 4)
        0.9619
    """

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(_messages.not_positive_integer("T_0", T_0))
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(_messages.t_mult_invalid(T_mult))
        if not isinstance(eta_min, (float, int)):
            raise ValueError(_messages.eta_min_not_number(eta_min))
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur: float = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_get_lr()
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:  # type: ignore[override]
        """Advance one epoch, or jump to (possibly fractional) ``epoch`` (not deprecated
        here, and no ordering warning: as torch)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(_messages.negative_epoch(epoch))
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")


class CyclicLR(LRScheduler):
    """Cyclical learning rates (per batch) between ``base_lr`` and ``max_lr`` with policy
    ``triangular``, ``triangular2`` or ``exp_range`` (or a custom ``scale_fn`` evaluated on
    the cycle number or the iteration, per ``scale_mode``); with ``cycle_momentum`` the
    momentum (SGD's ``momentum`` or Adam's ``beta1``) cycles inversely between
    ``max_momentum`` and ``base_momentum``.

    Example:
        >>> import gradsum
        >>> from gradsum import nn, optim
        >>> opt = optim.SGD([nn.Parameter(gradsum.zeros(1))], lr=1.0, momentum=0.9)
        >>> s = optim.lr_scheduler.CyclicLR(opt, base_lr=0.1, max_lr=1.0, step_size_up=2)
        >>> lrs, moms = [], []
        >>> for _ in range(4):
        ...     opt.step(); s.step()
        ...     lrs.append(round(s.get_last_lr()[0], 4))
        ...     moms.append(round(opt.param_groups[0]["momentum"], 4))
        >>> lrs, moms
        ([0.55, 1.0, 0.55, 0.1], [0.85, 0.8, 0.85, 0.9])
    """

    def __init__(self, optimizer: Optimizer, base_lr: float | list[float],
                 max_lr: float | list[float], step_size_up: int = 2000,
                 step_size_down: int | None = None,
                 mode: Literal["triangular", "triangular2", "exp_range"] = "triangular",
                 gamma: float = 1.0, scale_fn: Callable[[float], float] | None = None,
                 scale_mode: Literal["cycle", "iterations"] = "cycle",
                 cycle_momentum: bool = True, base_momentum: float | list[float] = 0.8,
                 max_momentum: float | list[float] = 0.9, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(_messages.not_an_optimizer(optimizer))
        self.optimizer = optimizer
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups, strict=True):
                _set_group_value(group, "lr", lr)
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError(_messages.cyclic_mode_invalid())
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_ref: Callable[[float], float]
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1, self.base_momentums, self.max_momentums = _init_momentums(
                optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref = self._triangular_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = self._triangular2_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref = partial(self._exp_range_scale_fn, self.gamma)
            self.scale_mode = "iterations"

    def scale_fn(self, x: float) -> float:
        """The scaling policy at ``x`` (a cycle number or an iteration)."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    @staticmethod
    def _triangular_scale_fn(x: float) -> float:
        return 1.0

    @staticmethod
    def _triangular2_scale_fn(x: float) -> float:
        return 1 / (2.0 ** (x - 1))

    @staticmethod
    def _exp_range_scale_fn(gamma: float, x: float) -> float:
        return gamma ** x

    def get_lr(self) -> list[Any]:
        """The rates at ``last_epoch`` (a batch index); sets the momentums as a side effect
        when ``cycle_momentum``."""
        self._warn_get_lr()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        at = cycle if self.scale_mode == "cycle" else self.last_epoch
        lrs = [base + (top - base) * scale_factor * self.scale_fn(at)
               for base, top in zip(self.base_lrs, self.max_lrs, strict=True)]
        if self.cycle_momentum:
            momentums = [top - (top - base) * scale_factor * self.scale_fn(at)
                         for base, top in zip(self.base_momentums, self.max_momentums,
                                              strict=True)]
            for group, m in zip(self.optimizer.param_groups, momentums, strict=True):
                _set_momentum(group, m, self.use_beta1)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """Like the base, without the built-in scale function; a custom ``scale_fn`` is saved
        only when it is a callable object (its ``__dict__``), never a function."""
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        state_dict["_scale_fn_custom"] = fn
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


class OneCycleLR(LRScheduler):
    """The 1cycle policy (per batch): anneal from ``max_lr / div_factor`` up to ``max_lr``
    over ``pct_start`` of ``total_steps`` (or ``epochs * steps_per_epoch``), then down to
    ``initial_lr / final_div_factor`` (``three_phase``: back to the initial rate first, then
    down), with cosine or linear annealing; with ``cycle_momentum`` the momentum (SGD's
    ``momentum`` or Adam's ``beta1``) moves inversely. Stepping past ``total_steps`` is a
    ValueError.

    Example:
        >>> import gradsum
        >>> from gradsum import nn, optim
        >>> opt = optim.SGD([nn.Parameter(gradsum.zeros(1))], lr=1.0, momentum=0.9)
        >>> s = optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=5,
        ...                                   anneal_strategy="linear")
        >>> lrs = [s.get_last_lr()[0]]
        >>> for _ in range(4):
        ...     opt.step(); s.step(); lrs.append(round(s.get_last_lr()[0], 4))
        >>> lrs
        [0.04, 0.8571, 0.5714, 0.2857, 0.0]
    """

    def __init__(self, optimizer: Optimizer, max_lr: float | list[float],
                 total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: Literal["cos", "linear"] = "cos",
                 cycle_momentum: bool = True, base_momentum: float | list[float] = 0.85,
                 max_momentum: float | list[float] = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(_messages.not_an_optimizer(optimizer))
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(_messages.not_positive_integer("total_steps", total_steps))
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(_messages.not_positive_integer("epochs", epochs))
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(_messages.not_positive_integer("steps_per_epoch", steps_per_epoch))
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError(_messages.onecycle_steps_undefined())
        first_end = float(pct_start * self.total_steps) - 1
        last_end = self.total_steps - 1
        self._schedule_phases: list[dict[str, Any]]
        if three_phase:
            self._schedule_phases = [
                _phase(first_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _phase(float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr",
                       "base_momentum", "max_momentum"),
                _phase(last_end, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._schedule_phases = [
                _phase(first_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _phase(last_end, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(_messages.pct_start_range(pct_start))
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(_messages.anneal_strategy_invalid(anneal_strategy))
        self._anneal_func_type = anneal_strategy
        max_lrs = _format_param("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for top, group in zip(max_lrs, optimizer.param_groups, strict=True):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1, _, _ = _init_momentums(optimizer, base_momentum, max_momentum,
                                                   last_epoch, max_first=True)
        super().__init__(optimizer, last_epoch)

    def _anneal_func(self, start: Any, end: Any, pct: float) -> Any:
        if self._anneal_func_type == "cos":
            return self._annealing_cos(start, end, pct)
        if self._anneal_func_type == "linear":
            return self._annealing_linear(start, end, pct)
        raise ValueError(_messages.unknown_anneal_func(self._anneal_func_type))

    @staticmethod
    def _annealing_cos(start: Any, end: Any, pct: float) -> Any:
        """Cosine anneal from ``start`` to ``end`` as ``pct`` goes from 0 to 1."""
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _annealing_linear(start: Any, end: Any, pct: float) -> Any:
        """Linear anneal from ``start`` to ``end`` as ``pct`` goes from 0 to 1."""
        return (end - start) * pct + start

    def get_lr(self) -> list[Any]:
        """The rates at step ``last_epoch``; sets the momentums as a side effect when
        ``cycle_momentum``."""
        self._warn_get_lr()
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(_messages.onecycle_too_many_steps(step_num, self.total_steps))
        lrs = []
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == last:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lr = self._anneal_func(group[phase["start_lr"]], group[phase["end_lr"]],
                                           pct)
                    if self.cycle_momentum:
                        momentum = self._anneal_func(group[phase["start_momentum"]],
                                                     group[phase["end_momentum"]], pct)
                    break
                start_step = phase["end_step"]
            lrs.append(lr)
            if self.cycle_momentum:
                _set_momentum(group, momentum, self.use_beta1)
        return lrs


def _phase(end_step: float, start_lr: str, end_lr: str, start_momentum: str,
           end_momentum: str) -> dict[str, Any]:
    return {"end_step": end_step, "start_lr": start_lr, "end_lr": end_lr,
            "start_momentum": start_momentum, "end_momentum": end_momentum}


class ReduceLROnPlateau(LRScheduler):
    """Multiply the rate by ``factor`` (not below ``min_lr``, and only by more than ``eps``)
    when the metric passed to :meth:`step` has not improved (``mode`` min/max, by
    ``threshold`` in ``threshold_mode`` rel/abs) for more than ``patience`` epochs, then wait
    ``cooldown`` epochs. Takes no initial step.

    Example:
        >>> import gradsum
        >>> from gradsum import nn, optim
        >>> opt = optim.SGD([nn.Parameter(gradsum.zeros(1))], lr=1.0)
        >>> s = optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=1)
        >>> for loss in [3.0, 2.0, 2.5, 2.5, 2.5]:
        ...     opt.step(); s.step(loss)
        >>> s.get_last_lr(), s.num_bad_epochs
        ([0.5], 1)
    """

    def __init__(self, optimizer: Optimizer, mode: Literal["min", "max"] = "min",
                 factor: float = 0.1, patience: int = 10, threshold: float = 1e-4,
                 threshold_mode: Literal["rel", "abs"] = "rel", cooldown: int = 0,
                 min_lr: list[float] | float = 0, eps: float = 1e-8) -> None:
        if factor >= 1.0:
            raise ValueError(_messages.plateau_factor_range())
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError(_messages.not_an_optimizer(optimizer))
        self.optimizer = optimizer
        self.default_min_lr: float | None
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(_messages.min_lr_count(optimizer, min_lr))
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _group_values(optimizer, "lr")
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics: SupportsFloat, epoch: int | None = None  # type: ignore[override]
             ) -> None:
        """Record the metric of one epoch (a float or a one-element tensor)."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _group_values(self.optimizer, "lr")

    def _reduce_lr(self, epoch: int) -> None:
        if len(self.optimizer.param_groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    _messages.plateau_group_count_changed(
                        len(self.optimizer.param_groups), len(self.min_lrs)
                    )
                )
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for i, group in enumerate(self.optimizer.param_groups):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                _set_group_value(group, "lr", new_lr)

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min" and self.threshold_mode == "abs":
            return a < best - self.threshold
        if self.mode == "max" and self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in {"min", "max"}:
            raise ValueError(_messages.unknown_plateau_mode(mode))
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError(_messages.unknown_threshold_mode(threshold_mode))
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold,
                             threshold_mode=self.threshold_mode)
