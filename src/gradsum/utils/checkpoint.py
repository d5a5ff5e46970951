"""Activation checkpointing (torch's ``torch.utils.checkpoint``): trade compute for memory.

A checkpointed function keeps none of its intermediate activations; backward runs it again
(with the RNG state of the forward, so dropout draws the same mask) and differentiates the
recomputation. Two variants, as in torch:

* ``use_reentrant=False`` (recommended): built on saved tensor hooks. Every tensor the
  function's nodes save is replaced by a small holder; the first backward read of one of
  them recomputes the function under recording hooks that fill the holders. Works with
  ``autograd.grad``, ``inputs=`` and keyword arguments.
* ``use_reentrant=True`` (torch 2.13's default, with a warning, when not passed): an
  ``autograd.Function`` that runs the function under ``no_grad`` and, in its backward,
  reruns it and calls ``backward`` on the recomputed outputs (a backward within the
  backward), which rules out ``autograd.grad`` and ``inputs=``.

Example:
    >>> import gradsum
    >>> from gradsum.utils.checkpoint import checkpoint
    >>> x = gradsum.tensor([1.0, 2.0], requires_grad=True)
    >>> y = checkpoint(lambda t: (t.sin() * t).sum(), x, use_reentrant=False)
    >>> y.backward()
    >>> ref = gradsum.tensor([1.0, 2.0], requires_grad=True)
    >>> (ref.sin() * ref).sum().backward()
    >>> bool((x.grad == ref.grad).all())
    True
"""

from __future__ import annotations

import contextlib
import warnings
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from gradsum._random import get_rng_state, set_rng_state
from gradsum._tensor import Tensor
from gradsum.autograd import _messages, graph_task
from gradsum.autograd.function import Function
from gradsum.autograd.grad_mode import enable_grad, no_grad
from gradsum.autograd.graph import saved_tensors_hooks

__all__ = [
    "CheckpointError",
    "checkpoint",
    "checkpoint_sequential",
    "detach_variable",
    "noop_context_fn",
]


class CheckpointError(RuntimeError):
    """A checkpointed function behaved differently when recomputed (torch's name)."""


def noop_context_fn() -> tuple[contextlib.nullcontext[None], contextlib.nullcontext[None]]:
    """The default ``context_fn``: no context around the forward nor the recomputation.

    Example:
        >>> from gradsum.utils.checkpoint import noop_context_fn
        >>> fwd, re = noop_context_fn()
        >>> with fwd, re:
        ...     pass
    """
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """Detach every tensor of ``inputs``, keeping its ``requires_grad`` (torch's helper).

    Example:
        >>> import gradsum
        >>> from gradsum.utils.checkpoint import detach_variable
        >>> (d,) = detach_variable((gradsum.ones(1, requires_grad=True) * 2,))
        >>> d.is_leaf, d.requires_grad
        (True, True)
    """
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            "Only tuple of tensors is supported. Got Unsupported input type: "
            f"{type(inputs).__name__}"
        )
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad_(inp.requires_grad)
        out.append(x)
    return tuple(out)


def _check_backward_validity(inputs: Iterable[Any]) -> None:
    if not any(isinstance(inp, Tensor) and inp.requires_grad for inp in inputs):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      UserWarning, stacklevel=3)


@contextlib.contextmanager
def _fork_rng(enabled: bool) -> Any:
    """Restore the RNG state on exit (torch's ``fork_rng`` over the CPU generator)."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


# -- use_reentrant=True ---------------------------------------------------------------------------
class CheckpointFunction(Function):
    """The reentrant variant: forward under ``no_grad``, backward recomputes and backwards."""

    @staticmethod
    def forward(ctx: Any, run_function: Callable[..., Any], preserve_rng_state: bool,
                *args: Any) -> Any:
        _check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_cpu_state = get_rng_state()
        ctx.inputs = []
        ctx.tensor_indices = []
        tensor_inputs = []
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx: Any, *args: Any) -> tuple[Any, ...]:
        task = graph_task.current_task()
        if task is not None and task[2] is not None:  # (autograd.grad, or inputs=)
            raise RuntimeError(_messages.checkpoint_reentrant_grad())
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        with _fork_rng(ctx.preserve_rng_state):
            if ctx.preserve_rng_state:
                set_rng_state(ctx.fwd_cpu_state)
            detached = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        outs_with_grad, grads_with = [], []
        for o, g in zip(outputs, args):
            if isinstance(o, Tensor) and o.requires_grad:
                outs_with_grad.append(o)
                grads_with.append(g)
        if not outs_with_grad:
            raise RuntimeError(_messages.checkpoint_reentrant_no_grad_output())
        from gradsum.autograd import backward

        backward(outs_with_grad, grads_with)
        grads = tuple(inp.grad if isinstance(inp, Tensor) else None for inp in detached)
        return (None, None, *grads)


# -- use_reentrant=False --------------------------------------------------------------------------
class _NoopSaveInputs(Function):
    """Saves the checkpoint's inputs (through any outer saved tensor hooks, with their
    version check) on a node of its own, that the recomputation reads them from."""

    @staticmethod
    def forward(ctx: Any, dummy: Tensor, kwargs: dict[str, Any], *args: Any) -> Tensor:
        from gradsum._creation import empty

        idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.layout = (len(args), idx, [None if i in idx else a for i, a in enumerate(args)],
                      kwargs)
        ctx.save_for_backward(*[args[i] for i in idx])
        return empty(0)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        raise AssertionError(_messages.noop_saver_backward())


class _Holder:
    """What a node keeps for one tensor saved inside a checkpoint: per backward (graph task
    id), the recomputed tensor until it is read once."""

    __slots__ = ("__weakref__", "handles")

    def __init__(self) -> None:
        self.handles: dict[int, Any] = {}


_UNPACKED = object()  # a holder's entry once read (a second read is an error, as torch)


class _StopRecomputation(Exception):
    pass


class _Frame:
    """One checkpointed call: how to recompute it and the holders its forward made."""

    def __init__(self, recompute_fn: Callable[..., None], early_stop: bool,
                 check: bool) -> None:
        self.recompute_fn = recompute_fn
        self.early_stop = early_stop
        self.check = check
        self.input_saver: Tensor | None = None
        self.weak_holders: list[weakref.ref[_Holder]] = []
        self.metadata: list[tuple[Any, ...]] = []
        self.re_metadata: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
        self.recomp_counter: dict[int, int] = defaultdict(int)
        self.is_recomputed: dict[int, bool] = defaultdict(bool)
        self.ignore_mismatch = False

    def check_recomputed(self, gid: int) -> None:
        if not self.check or self.ignore_mismatch:
            return
        n_fwd = len(self.weak_holders)
        n_re = self.recomp_counter[gid]
        if n_re != n_fwd and not (self.early_stop and n_re <= n_fwd):
            raise CheckpointError(_messages.checkpoint_recompute_mismatch(n_fwd, n_re))
        for i, (a, b) in enumerate(zip(self.metadata, self.re_metadata[gid])):
            if a != b:
                raise CheckpointError(_messages.checkpoint_metadata_mismatch(i, a, b))


def _meta(x: Tensor) -> tuple[Any, ...]:
    return (tuple(x.shape), x.dtype, x.device)


class _recomputation_hook(saved_tensors_hooks):
    def __init__(self, frame_ref: weakref.ref[_Frame], gid: int) -> None:
        def pack_hook(x: Tensor) -> Tensor:
            x = x.detach() if x.requires_grad else x
            frame = frame_ref()
            assert frame is not None  # (alive: its holders' unpack is running)
            idx = frame.recomp_counter[gid]
            frame.recomp_counter[gid] += 1
            if idx >= len(frame.weak_holders):
                frame.ignore_mismatch = True  # (a grad() inside the function, as torch)
                return x
            if frame.check:
                frame.re_metadata[gid].append(_meta(x))
            holder = frame.weak_holders[idx]()
            if holder is not None:  # (a holder already freed needs nothing)
                holder.handles[gid] = x
            if frame.early_stop and frame.recomp_counter[gid] == len(frame.weak_holders):
                raise _StopRecomputation
            return x

        super().__init__(pack_hook, lambda x: x)


class _checkpoint_hook(saved_tensors_hooks):
    def __init__(self, frame: _Frame) -> None:
        def pack_hook(x: Tensor) -> _Holder:
            holder = _Holder()
            frame.weak_holders.append(weakref.ref(holder))
            if frame.check:
                frame.metadata.append(_meta(x))
            return holder

        def unpack_hook(holder: _Holder) -> Tensor:
            gid = graph_task.current_graph_task_id()
            if gid == -1:  # (read outside backward: a fresh id, as torch)
                gid = -id(object()) - 2
            if not frame.is_recomputed[gid]:
                saver = frame.input_saver
                assert saver is not None and saver.grad_fn is not None
                ctx = saver.grad_fn
                _, idx, args, kwargs = ctx.layout
                args = list(args)
                for i, t in zip(idx, ctx.saved_tensors):
                    args[i] = t
                try:
                    with _recomputation_hook(weakref.ref(frame), gid), enable_grad():
                        frame.recompute_fn(kwargs, *args)
                except _StopRecomputation:
                    pass
                frame.is_recomputed[gid] = True
                frame.check_recomputed(gid)
            ret = holder.handles.get(gid, _UNPACKED)
            if ret is _UNPACKED:
                raise CheckpointError(_messages.checkpoint_twice())
            holder.handles[gid] = _UNPACKED
            return ret

        super().__init__(pack_hook, unpack_hook)


def _checkpoint_without_reentrant(function: Callable[..., Any], preserve_rng_state: bool,
                                  context_fn: Callable[[], Any], determinism_check: str,
                                  *args: Any, **kwargs: Any) -> Any:
    if determinism_check not in ("default", "none"):
        raise ValueError(_messages.checkpoint_determinism_value(determinism_check))
    forward_context, recompute_context = context_fn()
    fwd_state = get_rng_state() if preserve_rng_state else None

    def recompute_fn(kw: dict[str, Any], *a: Any) -> None:
        with _fork_rng(preserve_rng_state):
            if fwd_state is not None:
                set_rng_state(fwd_state)
            with recompute_context:
                function(*a, **kw)

    from gradsum._creation import empty

    frame = _Frame(recompute_fn, True, determinism_check == "default")
    dummy = empty(0, requires_grad=True)
    frame.input_saver = _NoopSaveInputs.apply(dummy, kwargs, *args)
    if frame.input_saver.grad_fn is None:  # (grad mode off: nothing to recompute)
        return function(*args, **kwargs)
    with _checkpoint_hook(frame), forward_context:
        return function(*args, **kwargs)


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable[[], Any] = noop_context_fn,
               determinism_check: str = "default", debug: bool = False,
               early_stop: bool = True, **kwargs: Any) -> Any:
    """Run ``function(*args, **kwargs)`` without keeping its intermediate activations;
    backward recomputes them (see the module docstring for the two variants).

    ``preserve_rng_state`` (default True, passed as a keyword) restores the forward's RNG
    state for the recomputation. Not passing ``use_reentrant`` warns and uses
    ``use_reentrant=True``, as torch 2.13. ``debug`` is accepted (torch's extra logs of the
    recomputation are not produced).

    Example:
        >>> import gradsum
        >>> from gradsum.utils.checkpoint import checkpoint
        >>> lin = gradsum.nn.Linear(3, 3)
        >>> x = gradsum.ones(2, 3, requires_grad=True)
        >>> y = checkpoint(lambda t: lin(t).relu(), x, use_reentrant=True)
        >>> y.sum().backward()
        >>> lin.weight.grad.shape, x.grad.shape
        ((3, 3), (2, 3))
    """
    if use_reentrant is None:
        warnings.warn(_messages.checkpoint_use_reentrant("checkpoint"), UserWarning,
                      stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError(_messages.checkpoint_kwargs(list(kwargs)))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError(_messages.checkpoint_reentrant_options())
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check,
                                         *args, **kwargs)


def checkpoint_sequential(functions: Any, segments: int, input: Tensor,
                          use_reentrant: bool | None = None, **kwargs: Any) -> Tensor:
    """Run ``functions`` (a list or an ``nn.Sequential``) in order on ``input``, in
    ``segments`` chunks: all but the last are checkpointed.

    Example:
        >>> import gradsum
        >>> from gradsum.utils.checkpoint import checkpoint_sequential
        >>> model = gradsum.nn.Sequential(gradsum.nn.Linear(2, 2), gradsum.nn.Tanh(),
        ...                               gradsum.nn.Linear(2, 1))
        >>> x = gradsum.ones(4, 2, requires_grad=True)
        >>> y = checkpoint_sequential(model, 2, x, use_reentrant=False)
        >>> y.sum().backward(); x.grad.shape
        (4, 2)
    """
    from gradsum.nn import Sequential

    if use_reentrant is None:
        warnings.warn(_messages.checkpoint_use_reentrant("checkpoint_sequential"),
                      UserWarning, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError(_messages.checkpoint_kwargs(list(kwargs)))

    def run_function(start: int, end: int, functions: list[Any]) -> Callable[[Any], Any]:
        def forward(input: Any) -> Any:
            for j in range(start, end + 1):
                input = functions[j](input)
            return input

        return forward

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)
