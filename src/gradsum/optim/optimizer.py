"""``Optimizer``: param groups, per-parameter state, ``zero_grad``, ``state_dict``, step hooks.

The rule all optimizers share (SEMANTICS 3): a parameter whose ``.grad`` is ``None`` is
skipped entirely (no state, no decay, no step count); a zero gradient is a real gradient.
Updates are written into the parameters' own buffers under ``no_grad``, so a Parameter and
its buffer keep their identity.

The step pattern: every algorithm's ``step`` is :meth:`Optimizer._plan_group` then
:meth:`Optimizer._apply_plan` for each group (torch's ``step``: the group's options,
``_init_group``, the single-tensor update), every group planned before any parameter moves
(:meth:`Optimizer._update_groups`). An
algorithm's file holds only its own parts: defaults and checks, ``_init_state``, ``_options``
(the numbers it reads from a group) and ``_update`` (its formula, written with the kernels of
:mod:`gradsum.optim._kernels`); the walk, the lazy state, the step counter, the version
counts and the batching of small parameters (:func:`_batches`) are here, once. LBFGS, whose
step is a loop of closure calls, has a ``step`` of its own.

Example:
    >>> import gradsum
    >>> from gradsum import nn, optim
    >>> w = nn.Parameter(gradsum.tensor([1.0, 2.0]))
    >>> opt = optim.SGD([w], lr=0.1, momentum=0.9)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w.tolist()
    [0.800000011920929, 1.600000023841858]
    >>> sd = opt.state_dict()
    >>> list(sd["state"]), sd["param_groups"][0]["params"]
    ([0], [0])
"""

from __future__ import annotations

import copy
import functools
import numbers
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from itertools import chain
from typing import Any, ClassVar

from gradsum._backend import silenced, xp
from gradsum._dtype import bool_, float64, get_default_dtype
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import _run_in_mode, enable_grad, no_grad  # noqa: F401 (enable_grad: the module surface)
from gradsum.autograd.graph import RemovableHandle, _clear_grad
from gradsum.optim import _messages


class _RequiredParameter:
    """Singleton marking a hyper-parameter that each param group must give."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj: object) -> str:
    return f"gradsum.{type(obj).__name__}" if isinstance(obj, Tensor) else type(obj).__qualname__


def _scalar(v: Any) -> float:
    """A Python float for a hyper-parameter given as a number or a one-element tensor.

    Raises:
        TypeError: ``v`` is a tensor of several elements (e.g. a group's ``lr`` set to one
            after construction; torch's update kernels refuse it with a TypeError too).
    """
    if isinstance(v, Tensor):
        if v.numel() != 1:
            raise TypeError(_messages.hyperparameter_not_one_element(v))
        return float(v.item())
    return float(v)


_STATE_DICT_HOOK_KINDS = (
    "state_dict_pre", "state_dict_post", "load_state_dict_pre", "load_state_dict_post",
)

_global_step_pre_hooks: list[Callable[..., Any]] = []
_global_step_post_hooks: list[Callable[..., Any]] = []


def register_optimizer_step_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Run ``hook(optimizer, args, kwargs)`` before the ``step`` of every optimizer (before
    each optimizer's own pre-hooks), like torch's global hook.

    Example:
        >>> import gradsum
        >>> seen = []
        >>> h = gradsum.optim.optimizer.register_optimizer_step_pre_hook(
        ...     lambda opt, args, kwargs: seen.append(type(opt).__name__))
        >>> p = gradsum.nn.Parameter(gradsum.ones(1))
        >>> p.grad = gradsum.ones(1)
        >>> _ = gradsum.optim.SGD([p], lr=0.1).step()
        >>> h.remove(); seen
        ['SGD']
    """
    _global_step_pre_hooks.append(hook)
    return RemovableHandle(_global_step_pre_hooks, hook)


def register_optimizer_step_post_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Run ``hook(optimizer, args, kwargs)`` after the ``step`` of every optimizer."""
    _global_step_post_hooks.append(hook)
    return RemovableHandle(_global_step_post_hooks, hook)


#: NumPy's error settings of the code that called ``step`` (closures run under them)
_caller_errstate: ContextVar[dict[str, str] | None] = ContextVar(
    "gradsum_optim_caller_errstate", default=None
)


def _run_closure(closure: Callable[[], Any]) -> Any:
    """``closure()`` as every optimizer calls it: grad mode on, under the floating-point
    settings of ``step``'s caller (``step`` itself runs with them off); both put back however
    it ends (:func:`_run_in_mode`'s pattern: read, changed inside the ``try``, assigned back)."""
    prev = xp.geterr()
    try:
        xp.seterr(**(_caller_errstate.get() or prev))
        return _run_in_mode(True, closure)
    finally:
        xp.seterr(**prev)


def _call(step: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return step(*args, **kwargs)


#: ``step(*args, **kwargs)`` without NumPy's floating-point warnings, underflow included
_quietly = silenced(_call, underflow=True)


def _run_step_hooks(step: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(step)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        self: Optimizer = args[0]
        for pre in [*_global_step_pre_hooks, *self._optimizer_step_pre_hooks]:
            result = pre(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(_messages.pre_hook_result(step, result))
        # torch's updates are silent on inf/nan (eps=0 with a zero gradient, an overflowing
        # gradient): NumPy's floating-point warnings are off inside step, even where warnings
        # are errors; the closure runs under the caller's settings (_run_closure).
        closure = kwargs.get("closure") if kwargs else args[1] if len(args) > 1 else None
        caller = _caller_errstate.get()
        try:  # (set inside the try, put back as read: see grad_mode._run_in_mode)
            if closure is not None:
                _caller_errstate.set(xp.geterr())
            out = _quietly(step, args, kwargs)
        except (TypeError, ValueError) as e:
            translated = _step_error(self, e)
            if translated is None:
                raise
            raise translated from e
        finally:
            _caller_errstate.set(caller)
        for post in [*self._optimizer_step_post_hooks, *_global_step_post_hooks]:
            post(self, args, kwargs)
        return out

    wrapper.hooked = True  # type: ignore[attr-defined]
    return wrapper


_BROADCAST_ERRORS = (
    "could not be broadcast", "cannot be broadcast", "non-broadcastable output",
    "could not broadcast input",
)


def _integral_param_error(opt: Optimizer) -> Exception | None:
    """The error for the first integer or bool parameter that has a gradient (torch cannot
    write a floating-point update into it), or None when every such parameter is a float."""
    for group in opt.param_groups:
        for i, p in enumerate(group["params"]):
            if p._grad is not None and p._array.dtype.kind not in "fcV":
                kind = opt._integral_error(group, p)
                return kind(
                    f"{type(opt).__name__}.step() can't update a parameter of dtype {p.dtype} "
                    f"(#{i} of its group): the update is floating-point arithmetic, which can't "
                    f"be written back into an integer or bool tensor (torch raises "
                    f"{kind.__name__} too). Optimize floating-point parameters: convert them "
                    "with .float()."
                )
    return None


def _step_error(opt: Optimizer, err: Exception) -> Exception | None:
    """The error torch raises where NumPy failed inside ``opt.step()`` (no cost unless a step
    fails): an integer or bool parameter with a gradient (torch cannot write a floating-point
    update into it: ``RuntimeError``, or ``NotImplementedError`` where its first failing kernel
    is ``lerp``), or a state tensor whose shape does not match its parameter (a state dict of
    other parameters: ``RuntimeError``). ``None``: not one of these, re-raise ``err``."""
    name = type(opt).__name__
    text = str(err)
    numpy_error = type(err).__module__.startswith("numpy") or "numpy" in text
    if numpy_error:
        bad = _integral_param_error(opt)
        if bad is not None:
            return bad
    if isinstance(err, ValueError) and any(m in text for m in _BROADCAST_ERRORS):
        return RuntimeError(
            _messages.state_shape_mismatch(name, text)
        )
    return None


class Optimizer:
    """Base class of all optimizers (torch's ``torch.optim.Optimizer``).

    Args:
        params: an iterable of tensors, of ``(name, tensor)`` pairs, or of dicts (parameter
            groups, each a dict with ``"params"`` and per-group options).
        defaults: default values of the options, used where a group does not set them.
    """

    def __init__(self, params: Any, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: list[Callable[..., Any]] = []
        self._optimizer_step_post_hooks: list[Callable[..., Any]] = []
        self._optimizer_state_dict_pre_hooks: list[Callable[..., Any]] = []
        self._optimizer_state_dict_post_hooks: list[Callable[..., Any]] = []
        self._optimizer_load_state_dict_pre_hooks: list[Callable[..., Any]] = []
        self._optimizer_load_state_dict_post_hooks: list[Callable[..., Any]] = []
        self._patch_step_function()
        if isinstance(params, Tensor):
            raise TypeError(_messages.params_not_iterable(_typename(params)))
        self.state: defaultdict[Tensor, Any] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        groups = list(params)
        if not groups:
            raise ValueError(_messages.empty_parameter_list())
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def _patch_step_function(self) -> None:
        cls = type(self)
        if not getattr(cls.step, "hooked", False):
            cls.step = _run_step_hooks(cls.step)  # type: ignore[method-assign]

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    #: Options each optimizer's ``__setstate__`` fills into groups that lack them (state dicts
    #: saved by older torch versions), with torch's values.
    _GROUP_DEFAULTS: ClassVar[dict[str, Any]] = {}
    #: Whether ``state['step']`` is a 0-d tensor: a number there (old state dicts) becomes one.
    _TENSOR_STEP: bool = False
    #: The other 0-d tensors of a parameter's state (NAdam's ``mu_product``, ASGD's ``eta``
    #: and ``mu``): numbers there (old state dicts) become tensors too (:func:`_scalar_state`).
    _SCALAR_STATE: ClassVar[tuple[str, ...]] = ()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("_optimizer_step_pre_hooks", [])
        self.__dict__.setdefault("_optimizer_step_post_hooks", [])
        for kind in _STATE_DICT_HOOK_KINDS:
            self.__dict__.setdefault(f"_optimizer_{kind}_hooks", [])
        self.defaults.setdefault("differentiable", False)
        for group in self.param_groups:
            for key, value in self._GROUP_DEFAULTS.items():
                group.setdefault(key, value)
            if self._TENSOR_STEP:
                for p in group["params"]:
                    p_state = self.state.get(p)
                    if not p_state:
                        continue
                    if not isinstance(p_state["step"], Tensor):
                        # (torch: float32 for a fused group, else the default dtype's)
                        step = _step_tensor(group.get("fused"))
                        step._array[...] = float(p_state["step"])
                        p_state["step"] = step
                    for key in self._SCALAR_STATE:
                        if not isinstance(p_state[key], Tensor):
                            p_state[key] = _scalar_state(float(p_state[key]))

    def __repr__(self) -> str:
        s = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    # -- groups --------------------------------------------------------------------------------
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (missing options take
        :attr:`defaults`). A parameter may belong to one group only.

        Example:
            >>> import gradsum
            >>> from gradsum import nn, optim
            >>> a, b = nn.Parameter(gradsum.ones(1)), nn.Parameter(gradsum.ones(1))
            >>> opt = optim.SGD([a], lr=0.1)
            >>> opt.add_param_group({"params": [b], "lr": 0.01})
            >>> [g["lr"] for g in opt.param_groups]
            [0.1, 0.01]
        """
        if not isinstance(param_group, dict):
            raise TypeError(_messages.param_group_not_dict(param_group))
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(_messages.params_as_set())
        else:
            param_group["params"] = list(params)
        tensors: list[Any] = []
        names: list[str] = []
        for p in param_group["params"]:
            if isinstance(p, tuple):
                names.append(p[0])
                tensors.append(p[1])
            else:
                tensors.append(p)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError(_messages.params_names_mixed())
            param_group["param_names"] = names
        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError(_messages.param_not_tensor(_typename(p)))
            if not self.defaults.get("differentiable", None) and not (
                p.is_leaf or p.retains_grad
            ):
                raise ValueError(_messages.non_leaf_param(p))
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(_messages.missing_group_option(name))
            param_group.setdefault(name, default)
        ids = [id(p) for p in tensors]
        if len(ids) != len(set(ids)):
            warnings.warn(
                _messages.duplicate_params_in_group(), stacklevel=3,
            )
        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                txt = "with names" if "param_names" in param_group else "without names"
                raise ValueError(_messages.group_names_mixed(txt))
        if not seen.isdisjoint(ids):
            raise ValueError(_messages.params_in_several_groups())
        self.param_groups.append(param_group)

    # -- gradients -----------------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the gradients of every optimized parameter: ``p.grad = None`` (default), or
        with ``set_to_none=False`` detach a grad that carries a graph, then zero it in place
        (the same tensor object)."""
        for group in self.param_groups:
            for p in group["params"]:
                _clear_grad(p, set_to_none)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient (every group planned, then
        applied: :meth:`_update_groups`, without grad); returns the closure's loss."""
        loss = self._closure_loss(closure)
        _run_in_mode(False, self._update_groups)
        return loss

    def _update_groups(self) -> None:
        """Note "A failed step changes nothing": every group's options and every state the
        update will read are checked (:meth:`_plan_group`) before the first parameter moves;
        a check that fails raises with the parameters, their gradients and the state as they
        were (the state this step made for a parameter's first update is dropped again).
        torch checks as it goes, so a bad option of a later group raises after the earlier
        groups were updated."""
        state = self.state
        fresh = [p for group in self.param_groups for p in group["params"]
                 if p.grad is not None and not state.get(p)]
        try:
            plans = [self._plan_group(i, group) for i, group in enumerate(self.param_groups)]
        except BaseException:
            for p in fresh:
                state.pop(p, None)
            raise
        for params, options in plans:
            self._apply_plan(params, options)

    # -- the step pattern (see the module's docstring) -----------------------------------------

    #: Whether the update is elementwise: its entries then run through :func:`_batches` (a
    #: group's small parameters concatenated, a large one block by block). Otherwise
    #: (Adafactor's norms and means, Muon's matrix products) each entry is updated whole,
    #: parameter by parameter, in the group's order.
    _ELEMENTWISE: ClassVar[bool] = True
    #: The state tensors an entry holds after the parameter and its gradient, in the order
    #: :meth:`_update` receives them (see :meth:`_roles`).
    _ROLES: ClassVar[tuple[str, ...]] = ()

    def _plan_group(self, index: int, group: dict[str, Any]) -> tuple[list[Tensor], Any]:
        """The first half of a group's update: the parameters of group ``index`` that have a
        gradient (the others are skipped: SEMANTICS 3) and the group's numbers and missing
        state (:meth:`_options`, which calls :meth:`_init_group` where torch's step makes
        it), every option's type checked first and every state tensor the update reads
        after. :meth:`step` plans every group before it applies any."""
        _check_option_types(self.defaults, index, group)
        params = _params_with_grad(group)
        options = self._options(group, params)
        if self._ELEMENTWISE:
            _check_param_states(self.state, params, group, index)
        return params, options

    def _apply_plan(self, params: list[Tensor], options: Any) -> None:
        """The second half: one ``(key, arrays)`` entry per parameter (:meth:`_entries`: its
        step counted, its writes counted in the version counters), then :meth:`_update` over
        the pieces of the entries (:func:`_batches`, or each entry whole where the update is
        not elementwise)."""
        entries = self._entries(params, options)
        pieces = _batches(entries, _WRITES) if self._ELEMENTWISE else entries
        for key, arrays in pieces:
            self._update(options, key, *arrays)

    def _options(self, group: dict[str, Any], params: list[Tensor]) -> Any:
        """The numbers the update of ``group`` uses (numbers or one-element tensors in the
        group, as torch's kernels take them), passed back to :meth:`_entries` and
        :meth:`_update`; it makes the group's missing state by calling
        ``self._init_group(group, params)`` at the point where torch's step does (most
        optimizers read every option first; an option tuple is unpacked before, like torch's
        ``beta1, beta2 = group["betas"]``)."""
        raise NotImplementedError(_messages.no_step_implemented(type(self).__name__))

    def _init_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        """torch's ``_init_group``: the state of every parameter in ``params`` whose state is
        empty (:meth:`_init_state`), all before any update, then the group's device checks
        (``capturable``, for the optimizers that take it)."""
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                self._init_state(state, p, group)
        if params:
            self._check_group(group)

    def _init_state(self, state: dict[str, Any], p: Tensor, group: dict[str, Any]) -> None:
        """Fill the empty ``state`` of parameter ``p`` (at its first gradient); by default
        ``step`` (a 0-d tensor, :func:`_step_tensor`) and zeros like ``p`` for each of
        :attr:`_ROLES`, in that order."""
        state["step"] = _step_tensor(group.get("fused"))
        for role in self._ROLES:
            state[role] = _zeros_like(p)

    def _check_group(self, group: dict[str, Any]) -> None:
        """torch's checks of a group that has parameters to update, after their state exists:
        a ``capturable`` step refused on gradsum's CPU tensors."""
        if "capturable" in self.defaults:
            _check_capturable(group)

    def _roles(self, options: Any) -> tuple[str, ...]:
        """The state tensors an entry holds, by name (default :attr:`_ROLES`)."""
        return self._ROLES

    def _entries(self, params: list[Tensor], options: Any) -> list[tuple[Any, tuple[Any, ...]]]:
        """One ``(key, arrays)`` entry per parameter, in order: by default ``state['step']``
        counted and the key its new value (what the update's numbers depend on besides the
        group's options: parameters of the same key and dtype may be updated together), the
        arrays those of ``p``, its gradient and the state tensors :meth:`_roles` names, each
        of them but the gradient counted as written (:func:`_entry_arrays`)."""
        roles = self._roles(options)
        state = self.state
        return [(_count_step(state[p]), _entry_arrays(p, state[p], roles)) for p in params]

    def _update(self, options: Any, key: Any, *arrays: Any) -> None:
        """The algorithm's update formula on one piece: ``arrays`` are (pieces of) the
        arrays of :meth:`_entries`, written in place."""
        raise NotImplementedError(_messages.no_update_implemented(type(self).__name__))

    def _scratch(self, slot: int, like: Any) -> Any:
        """A scratch array shaped like ``like`` for ``out=`` arithmetic in ``step``.

        Large buffers are cached on the optimizer (one per slot and dtype, grown to the largest
        parameter) because a fresh multi-megabyte temporary page-faults on every step. They hold
        no state: they are not in ``state``/``state_dict`` nor pickled, and are overwritten
        freely.
        """
        n = like.size
        if n < _WORK_MIN:
            return xp.empty(like.shape, dtype=like.dtype)
        work = self.__dict__.setdefault("_work", {})
        key = (slot, like.dtype)
        buf = work.get(key)
        if buf is None or buf.size < n:
            buf = work[key] = xp.empty(n, dtype=like.dtype)
        return buf[:n].reshape(like.shape)

    #: The exception torch's step raises on an integer parameter when no weight decay applies
    #: first (optimizers whose first update kernel is ``lerp`` raise ``NotImplementedError``).
    _INTEGRAL_ERROR: ClassVar[type[Exception]] = RuntimeError

    def _integral_error(self, group: dict[str, Any], p: Tensor) -> type[Exception]:
        """The exception type torch's ``step`` raises for the integer or bool parameter ``p``:
        negating a bool gradient (``maximize``) and a weight decay (a float ``alpha`` or
        factor on an integer tensor) fail first, with ``RuntimeError``."""
        if group.get("maximize", False) and p.dtype == bool_:
            return RuntimeError
        if _scalar(group.get("weight_decay", 0)) != 0:
            return RuntimeError
        return self._INTEGRAL_ERROR

    def _closure_loss(self, closure: Callable[[], Any] | None) -> Any:
        """Run the closure (grad mode on, the caller's floating-point settings), then refuse
        an integer or bool parameter with a gradient before any parameter is updated: torch
        raises partway through the update, gradsum leaves every parameter and the state as
        they were (a failed call changes nothing)."""
        loss = None if closure is None else _run_closure(closure)
        bad = _integral_param_error(self)
        if bad is not None:
            raise bad
        return loss

    # -- hooks ---------------------------------------------------------------------------------
    def register_step_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Run ``hook(optimizer, args, kwargs)`` before each ``step``; it may return
        ``(new_args, new_kwargs)``."""
        self._optimizer_step_pre_hooks.append(hook)
        return RemovableHandle(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Run ``hook(optimizer, args, kwargs)`` after each ``step``.

        Example:
            >>> import gradsum
            >>> from gradsum import nn, optim
            >>> w = nn.Parameter(gradsum.ones(1))
            >>> opt = optim.SGD([w], lr=0.1)
            >>> calls = []
            >>> h = opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
            >>> opt.step(); calls
            ['post']
        """
        self._optimizer_step_post_hooks.append(hook)
        return RemovableHandle(self._optimizer_step_post_hooks, hook)

    def _register(self, kind: str, hook: Callable[..., Any], prepend: bool) -> RemovableHandle:
        hooks: list[Callable[..., Any]] = self.__dict__.setdefault(f"_optimizer_{kind}_hooks", [])
        if prepend:
            hooks.insert(0, hook)
        else:
            hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable[[Optimizer], None],
                                     prepend: bool = False) -> RemovableHandle:
        """Run ``hook(optimizer)`` at the start of each :meth:`state_dict` (``prepend``: before
        the hooks already registered)."""
        return self._register("state_dict_pre", hook, prepend)

    def register_state_dict_post_hook(
        self, hook: Callable[[Optimizer, dict[str, Any]], dict[str, Any] | None],
        prepend: bool = False,
    ) -> RemovableHandle:
        """Run ``hook(optimizer, state_dict)`` at the end of each :meth:`state_dict`; a dict it
        returns replaces the state dict.

        Example:
            >>> import gradsum
            >>> from gradsum import nn, optim
            >>> opt = optim.SGD([nn.Parameter(gradsum.ones(1))], lr=0.1)
            >>> h = opt.register_state_dict_post_hook(lambda o, sd: {**sd, "epoch": 3})
            >>> opt.state_dict()["epoch"]
            3
        """
        return self._register("state_dict_post", hook, prepend)

    def register_load_state_dict_pre_hook(
        self, hook: Callable[[Optimizer, dict[str, Any]], dict[str, Any] | None],
        prepend: bool = False,
    ) -> RemovableHandle:
        """Run ``hook(optimizer, state_dict)`` at the start of each :meth:`load_state_dict`
        (it gets a shallow copy of the dict); a dict it returns is loaded instead."""
        return self._register("load_state_dict_pre", hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable[[Optimizer], None],
                                           prepend: bool = False) -> RemovableHandle:
        """Run ``hook(optimizer)`` at the end of each :meth:`load_state_dict`."""
        return self._register("load_state_dict_post", hook, prepend)

    # -- state ---------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [index, ...]}]}`` with
        parameters replaced by their position across all groups (torch's layout). Like
        torch, the per-parameter state dicts are the live ones (not copies). The
        ``register_state_dict_pre_hook``/``post_hook`` hooks run around it."""
        for pre in list(self._optimizer_state_dict_pre_hooks):
            pre(self)
        mapping: dict[int, int] = {}
        start = 0

        def pack(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v
                 for k, v in self.state.items()}
        state_dict = {"state": state, "param_groups": groups}
        for post in list(self._optimizer_state_dict_post_hooks):
            result = post(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a :meth:`state_dict`: the group options and a deep copy of the state, whose
        tensors are cast to their parameter's dtype (``'step'`` is kept as saved, except in a
        group saved with ``capturable`` or ``fused`` set, where it becomes float32, as torch).
        The ``register_load_state_dict_pre_hook``/``post_hook`` hooks run around it.

        Raises:
            ValueError: the number of groups or a group's size differs (nothing is loaded).
        """
        state_dict = state_dict.copy()
        for pre in list(self._optimizer_load_state_dict_pre_hooks):
            result = pre(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError(_messages.loaded_group_count(saved_groups, groups))
        for g, s in zip(groups, saved_groups):
            if len(g["params"]) != len(s["params"]):
                raise ValueError(_messages.loaded_group_size(s, g))
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        # torch reads capturable/fused from the saved group holding the parameter
        step_f32 = {i for g in state_dict["param_groups"]
                    if g.get("capturable", False) or g.get("fused", False) for i in g["params"]}

        def cast(param: Tensor, value: Any, key: Any = None, f32_step: bool = False) -> Any:
            if isinstance(value, Tensor):
                v = Tensor._make(value._array.copy())
                if key == "step":
                    if f32_step and v._array.dtype != xp.float32:
                        v = Tensor._make(v._array.astype(xp.float32))
                elif param.is_floating_point() and v._array.dtype != param._array.dtype:
                    v = Tensor._make(v._array.astype(param._array.dtype))
                return v
            if isinstance(value, dict):
                return {k: cast(param, v, k, f32_step) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v, None, f32_step) for v in value)
            return copy.deepcopy(value)

        state: defaultdict[Any, Any] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = cast(id_map[k], v, None, k in step_f32)
            else:
                state[k] = copy.deepcopy(v)

        def update_group(group: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
            new["params"] = group["params"]
            if "param_names" in group and "param_names" not in new:
                new["param_names"] = group["param_names"]
            return new

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post in list(self._optimizer_load_state_dict_post_hooks):
            post(self)


def _check_hyper(lr: Any, *, nan_ok: bool = False, **nonnegative: Any) -> None:
    """torch's argument checks: a one-element ``lr`` and non-negative options, in order, each
    with torch's ValueError text ("Invalid learning rate: -1", "Invalid epsilon value: ...");
    ``betas`` in that order is checked by :func:`_check_betas`.

    ``nan_ok``: the test is ``value < 0`` (torch's SGD), which lets nan through, instead of
    ``not 0 <= value`` (the other optimizers), which refuses it.
    """
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError(_messages.tensor_lr_one_element())
    if (lr < 0.0) if nan_ok else not lr >= 0.0:
        raise ValueError(_messages.invalid_learning_rate(lr))
    for name, value in nonnegative.items():
        if name == "betas":
            _check_betas(value)
            continue
        if (value < 0.0) if nan_ok else not value >= 0.0:
            label = "epsilon" if name == "eps" else name
            raise ValueError(_messages.invalid_value(label, value))


def _pair(value: Any) -> tuple[float, float]:
    """A pair option (``betas``) unpacked, as torch's ``beta1, beta2 = group["betas"]`` (a
    tuple of another length raises ValueError), then each as a Python float (:func:`_scalar`)."""
    first, second = value
    return _scalar(first), _scalar(second)


def _scalars(group: dict[str, Any], *names: str) -> tuple[float, ...]:
    """The group's options ``names``, in order, each as a Python float (:func:`_scalar`)."""
    return tuple(_scalar(group[name]) for name in names)


def _adam_options(group: dict[str, Any], *names: str) -> tuple[Any, ...]:
    """The Adam family's options ``lr`` (:func:`_lr_value`), ``betas`` (:func:`_pair`),
    ``eps`` and ``weight_decay``, then the options ``names`` (:func:`_scalars`), in order."""
    lr = _lr_value(group["lr"])  # (a tensor lr: torch's 0-d tensor arithmetic)
    beta1, beta2 = _pair(group["betas"])
    return (lr, beta1, beta2, *_scalars(group, "eps", "weight_decay", *names))


def _is_number(v: Any) -> bool:
    """A real number as torch's update kernels take it (a bool too, as Python's), or a
    tensor; not a string, None or a container."""
    if isinstance(v, Tensor):
        return True  # (its element count is :func:`_scalar`'s check, with torch's text)
    return isinstance(v, numbers.Real)


def _check_option_types(defaults: dict[str, Any], index: int, group: dict[str, Any]) -> None:
    """Every option of ``group`` whose default is a number (or a tuple of numbers, like
    ``betas``) is still one: a TypeError naming it, before any parameter moves."""
    for key, default in defaults.items():
        value = group.get(key, default)
        if isinstance(default, bool) or value is default:
            continue
        if isinstance(default, (int, float)) and not _is_number(value):
            raise TypeError(_messages.option_not_a_number(index, key, value))
        if (isinstance(default, tuple) and default and all(
                isinstance(d, (int, float)) and not isinstance(d, bool) for d in default)
                and isinstance(value, (tuple, list))
                and not all(v is None or _is_number(v) for v in value)):
            # (a pair of another length is torch's ValueError, from unpacking it: _pair;
            # None is an entry some options take, Adafactor's eps)
            raise TypeError(_messages.option_not_numbers(index, key, value, default))


def _check_param_states(state: Any, params: list[Tensor], group: dict[str, Any],
                        index: int) -> None:
    """Every state tensor of an elementwise update (not the 0-d ``step``) has its
    parameter's shape and dtype, as the update needs (a state resumed from another model's
    checkpoint would fail part way through torch's update)."""
    for p in params:
        st = state.get(p)
        if not st:
            continue
        for key, t in st.items():
            if not isinstance(t, Tensor) or t._array.ndim == 0:
                continue
            if t._array.shape != p._array.shape:
                raise RuntimeError(_messages.state_not_param_shaped(
                    index, group["params"].index(p), key, t._array.shape, p._array.shape))
            if t._array.dtype != p._array.dtype:
                raise RuntimeError(_messages.state_dtype_mismatch(
                    index, group["params"].index(p), key, t.dtype, p.dtype))


def _params_with_grad(group: dict[str, Any]) -> list[Tensor]:
    """The group's parameters that have a gradient (the others are skipped: SEMANTICS 3)."""
    return [p for p in group["params"] if p.grad is not None]


def _bump(*tensors: Tensor) -> None:
    """Count an in-place write into each tensor's buffer (version counters, SEMANTICS 7)."""
    for t in tensors:
        t._vc[0] += 1


def _count_step(state: dict[str, Any]) -> float:
    """``state['step'] += 1`` (a 0-d tensor, its write counted); the new count."""
    step_t = state["step"]
    step_t._array += 1
    step_t._vc[0] += 1
    return float(step_t._array)


def _entry_arrays(p: Tensor, state: dict[str, Any], roles: Sequence[str]) -> tuple[Any, ...]:
    """The arrays of ``p``, its gradient and its state tensors ``roles``, in that order, the
    parameter's and the state's writes counted (:func:`_bump`)."""
    p._vc[0] += 1
    arrays = [p._array, p.grad._array]  # type: ignore[union-attr]
    for role in roles:
        t = state[role]
        t._vc[0] += 1
        arrays.append(t._array)
    return tuple(arrays)


#: the arrays of an entry an update writes: all but the gradient (index 1)
_WRITES = (0, 2, 3, 4)


_WORK_MIN = 1 << 15  # elements: below this a fresh temporary is as cheap as a cached one


#: elements per block of a blocked update (see :func:`_blocks`): 512 KiB of float32 per array.
#: (Most updates are emulated fused multiply-adds, a dozen NumPy calls each with float64
#: temporaries: 2**17 elements per call measured 20-30% faster steps than 2**15 on a 4M
#: parameter, whose fixed cost per call then counts less; the temporaries still fit a 1 MiB
#: L2 cache two at a time.)
BLOCK = 1 << 17


def _blocks(*arrays: Any) -> Sequence[tuple[Any, ...]]:
    """Matching flat slices of ``BLOCK`` elements of same-size C-contiguous ``arrays``, one
    tuple per block; the arrays themselves, as one tuple, when they are smaller or not all
    C-contiguous.

    An optimizer's update is a handful of elementwise passes over the parameter, its gradient
    and its state. Over a multi-megabyte tensor each pass streams every array from memory;
    run block by block, the passes find the block's slices of all of them in the CPU's cache.
    Each element goes through the same operations in the same order, so the result is
    bitwise the same (an AdamW step of a 2048x2048 weight takes 40% less time)."""
    n = arrays[0].size
    if n <= BLOCK or not all(a.flags.c_contiguous and a.size == n for a in arrays):
        return (arrays,)
    flat = [a.reshape(-1) for a in arrays]
    return [tuple(f[start:start + BLOCK] for f in flat) for start in range(0, n, BLOCK)]


#: parameters of at most this many elements are updated together, concatenated (see
#: :func:`_batches`); larger ones block by block, in their own buffers
BATCH_MAX = 1 << 14


def _batchable(entries: Sequence[tuple[Any, tuple[Any, ...]]], writes: Sequence[int]) -> bool:
    """Whether ``entries`` may be updated concatenated: every array of an entry has its
    parameter's shape and a floating dtype (float16/32/64), and no array written by the update
    shares memory with another array of the update (so no parameter's update reads what another
    one writes, and none is written twice). Anything else (integer parameters, state of other
    shapes, duplicates) takes the one-by-one path, which raises torch's errors."""
    owners: set[int] = set()
    for _, arrays in entries:
        a0 = arrays[0]
        shape, dt = a0.shape, a0.dtype
        if dt.kind != "f" or dt.itemsize > 8:
            return False
        for j, a in enumerate(arrays):
            if a.shape != shape or a.dtype != dt:
                return False
            if j in writes:
                owner = id(a if a.base is None else a.base)
                if owner in owners:
                    return False
                owners.add(owner)
    for _, arrays in entries:  # (the read-only ones: not inside anything written)
        for j, a in enumerate(arrays):
            if j not in writes and id(a if a.base is None else a.base) in owners:
                return False
    return True


def _batches(entries: Sequence[tuple[Any, tuple[Any, ...]]],
             writes: Sequence[int]) -> Iterator[tuple[Any, tuple[Any, ...]]]:
    """The ``(key, arrays)`` pieces an optimizer's update runs its elementwise operations on,
    for ``entries``, one ``(key, (param, grad, state...))`` per parameter (``key``: what the
    update's numbers depend on besides the group's options, e.g. the step count; hashable).

    A model's many small parameters cost a dozen NumPy calls each per step, whatever their
    size. Here parameters of at most :data:`BATCH_MAX` elements with the same key and dtype are
    concatenated (up to :data:`BLOCK` elements at a time), each array role into one flat
    array, the update runs once over them, and the arrays at the indices ``writes`` are copied
    back into the parameters' own buffers when the loop asks for the next piece (so a consumer
    must finish with a piece before the next). Every element goes through the same operations
    with the same numbers, so the result is bitwise the one-by-one update's (the updates are
    elementwise). Larger parameters come block by block (:func:`_blocks`). When
    :func:`_batchable` refuses, every entry comes alone, in order."""
    if not _batchable(entries, writes):
        for key, arrays in entries:
            for block in _blocks(*arrays):
                yield key, block
        return
    pending: dict[Any, list[tuple[Any, ...]]] = {}
    sizes: dict[Any, int] = {}
    for key, arrays in entries:
        n = arrays[0].size
        if n > BATCH_MAX:
            for block in _blocks(*arrays):
                yield key, block
            continue
        k = (key, arrays[0].dtype)
        if sizes.get(k, 0) + n > BLOCK:
            yield from _flush(k[0], pending.pop(k), writes)
            sizes[k] = 0
        pending.setdefault(k, []).append(arrays)
        sizes[k] = sizes.get(k, 0) + n
    for k, group in pending.items():
        yield from _flush(k[0], group, writes)


def _flush(key: Any, group: list[tuple[Any, ...]],
           writes: Sequence[int]) -> Iterator[tuple[Any, tuple[Any, ...]]]:
    """One piece of :func:`_batches`: ``group``'s arrays concatenated per role (a single
    entry as it is), then the written roles copied back."""
    if len(group) == 1:
        yield key, group[0]
        return
    flat = tuple(xp.concatenate([a.reshape(-1) for a in role]) for role in zip(*group))
    yield key, flat
    for j in writes:
        if j >= len(flat):
            continue
        start = 0
        f = flat[j]
        for arrays in group:
            a = arrays[j]
            n = a.size
            a[...] = f[start:start + n].reshape(a.shape)
            start += n


def _zeros_like(p: Tensor) -> Tensor:
    return Tensor._make(xp.zeros_like(p._array))


def _step_tensor(fused: bool | None = None) -> Tensor:
    """torch's ``state['step']``: a 0-d tensor, float32 for a fused group, else float64 when
    the default dtype is float64 and float32 otherwise (torch's ``_get_scalar_dtype``)."""
    dtype = xp.float64 if not fused and get_default_dtype() is float64 else xp.float32
    return Tensor._make(xp.zeros((), dtype=dtype))


def _check_betas(betas: Any) -> None:
    """torch's check of ``betas`` (NAdam, RAdam, Adamax): each in ``[0, 1)``."""
    for i in range(2):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(_messages.invalid_beta(i, betas))


def _scalar_state(value: float, fused: bool | None = None) -> Tensor:
    """A 0-d tensor of torch's scalar-state dtype (that of ``state['step']``) holding
    ``value``: NAdam's ``mu_product``, ASGD's ``eta`` and ``mu``."""
    t = _step_tensor(fused)
    t._array[...] = value
    return t


def _lr_value(lr: Any) -> Any:
    """A learning rate for arithmetic that rounds like torch's: a Python float for a number,
    a NumPy scalar of the tensor's dtype for a one-element tensor (torch computes ``lr * x``
    with a 0-d float32 ``lr`` in float32; NumPy's weak Python scalars then follow the same
    rules). Raises like :func:`_scalar` for a tensor of several elements."""
    if isinstance(lr, Tensor):
        _scalar(lr)  # (the one-element check and its TypeError)
        return lr._array.reshape(())[()]
    return float(lr)


#: the devices torch's capturable optimizers accept (gradsum's tensors are all on the CPU)
_CAPTURABLE_DEVICES = ["cuda", "xpu", "hpu", "privateuseone", "xla"]


def _check_capturable(group: dict[str, Any]) -> None:
    """torch's capturable step on CPU tensors fails (after creating the missing state)."""
    if group.get("capturable", False):
        raise AssertionError(_messages.capturable_devices(_CAPTURABLE_DEVICES))


def _check_differentiable(differentiable: bool, fused: bool | None = None,
                          foreach: bool | None = None) -> None:
    """torch's checks of ``fused`` (after the param groups are built, like torch), then
    gradsum's refusal of ``differentiable=True``."""
    if fused:
        if differentiable:
            raise RuntimeError(_messages.fused_differentiable())
        if foreach:
            raise RuntimeError(_messages.fused_and_foreach())
    if differentiable:
        raise NotImplementedError(_messages.differentiable_unsupported())


__all__ = ["Optimizer", "no_grad", "required"]
