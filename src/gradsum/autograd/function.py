"""User-defined differentiable ops: subclass :class:`Function`, write ``forward`` on tensors
(run without recording) and ``backward`` in gradsum ops (so double backward works when the
backward itself is differentiable).

Example:
    >>> import gradsum
    >>> class Cube(gradsum.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return g * 3 * x ** 2
    >>> x = gradsum.tensor(2.0, requires_grad=True)
    >>> y = Cube.apply(x)
    >>> (dx,) = gradsum.autograd.grad(y, x, create_graph=True)
    >>> (d2x,) = gradsum.autograd.grad(dx, x)
    >>> y.grad_fn.name(), dx.item(), d2x.item()
    ('CubeBackward', 12.0, 12.0)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gradsum import _dtype as D
from gradsum.autograd import _messages
from gradsum.autograd.grad_mode import _state
from gradsum.autograd.graph import Node, _saved_input, _saved_output

if TYPE_CHECKING:
    from gradsum._tensor import Tensor


class FunctionCtx:
    """What ``forward`` and ``backward`` receive as ``ctx`` (it is the backward node)."""


class BackwardCFunction(Node):
    """The node of a user :class:`Function`; ``ctx`` in forward/backward is this object."""

    _user_backward = True

    __slots__ = (
        "__dict__",
        "_fn_cls",
        "_in_meta",
        "_out_meta",
        "_to_save",
        "dirty",
        "materialize_grads",
        "needs_input_grad",
        "non_differentiable",
    )

    def __init__(self) -> None:
        super().__init__()
        self._to_save: tuple[Any, ...] = ()
        self.materialize_grads = True
        self.non_differentiable: set[int] = set()
        self.dirty: set[int] = set()

    @property
    def num_outputs(self) -> int:  # type: ignore[override]
        return len(self._out_meta)

    def name(self) -> str:
        return f"{self._fn_cls.__name__}Backward"

    # torch's ctx API
    def save_for_backward(self, *tensors: Tensor | None) -> None:
        from gradsum._tensor import Tensor

        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(_messages.save_non_tensor(i, t))
        self._to_save = tensors

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        return tuple(self.saved())

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        self.non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors: Tensor) -> None:
        self.dirty.update(id(t) for t in tensors)

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value

    def _materialize(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        if not self.materialize_grads:
            return grads
        from gradsum._backend import xp
        from gradsum._tensor import Tensor

        return [  # (a non-tensor output, dtype None, keeps a None gradient)
            g if g is not None or dt is None else Tensor._make(xp.zeros(shape, dtype=dt))
            for g, (shape, dt) in zip(grads, self._out_meta)
        ]

    def backward(self, *grads: Tensor | None) -> tuple[Tensor | None, ...]:
        if self.materialize_grads and any(g is None for g in grads):
            grads = tuple(self._materialize(list(grads)))
        out = self._fn_cls.backward(self, *grads)
        if not isinstance(out, tuple):
            out = (out,)
        n = len(self._in_meta)
        if len(out) != n:
            if len(out) > n and all(o is None for o in out[n:]):
                out = out[:n]
            else:
                raise RuntimeError(_messages.wrong_grad_count(self.name(), len(out), n))
        return tuple(self._validate(i, g) for i, g in enumerate(out))

    def _validate(self, i: int, g: Any) -> Tensor | None:
        from gradsum._tensor import Tensor

        meta = self._in_meta[i]
        if g is None:
            return None
        if meta is False:  # forward's argument i is not a tensor: only None fits
            raise RuntimeError(_messages.grad_for_non_tensor(self.name(), i))
        if meta is None:  # (a tensor that needs no gradient: no edge takes the value, but
            if not isinstance(g, Tensor):  # torch's post hooks of this node still see it)
                raise RuntimeError(_messages.function_grad_not_tensor(self.name(), i, g))
            return g
        if not isinstance(g, Tensor):
            raise RuntimeError(_messages.function_grad_not_tensor(self.name(), i, g))
        shape, dt = meta
        if g._array.shape != shape:
            from gradsum.ops import sum_to

            try:
                if not _expandable(shape, g._array.shape):
                    raise ValueError
                g = sum_to(g, shape)
            except ValueError:
                raise RuntimeError(
                    _messages.invalid_gradient(self.name(), i, g._array.shape, shape)
                ) from None
        if g._array.dtype != dt:
            from gradsum import _dtype as D

            g = g.to(D.from_numpy_dtype(dt))
        if g._grad_fn is None:
            # A user backward may return a tensor it also keeps (a saved tensor, a global):
            # hand the engine a view, which no sink takes over or adds into in place (see
            # graph.AccumulateGrad, note "Taking over a gradient buffer"). No data is copied.
            g = Tensor._make(g._array.view())
        return g


def _expandable(shape: tuple[int, ...], to: tuple[int, ...]) -> bool:
    """Whether ``shape`` broadcasts to ``to`` (then a gradient of shape ``to`` sums back)."""
    if len(shape) > len(to):
        return False
    return all(s in (1, t) for s, t in zip(reversed(shape), reversed(to)))


class Function:
    """Base class for differentiable ops defined by the user (see the module example)."""

    #: the node class of this Function, named ``<Name>Backward`` like torch's
    _backward_cls: type[BackwardCFunction] = BackwardCFunction

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)

        class Backward(BackwardCFunction, name=f"{cls.__name__}Backward"):
            pass

        cls._backward_cls = Backward

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(_messages.forward_not_implemented())

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(_messages.backward_not_implemented())

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        """Override to save state from ``inputs`` and ``output``; ``forward`` then takes no
        ``ctx`` (torch's split style)."""
        raise NotImplementedError(_messages.setup_context_missing())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(_messages.legacy_function_call(type(self).__name__))

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` without recording, then attach one node for the whole op.

        Keyword arguments are bound to ``forward``'s positional parameters by name, as in
        torch (split style: with ``forward``'s defaults filled in), so they count as inputs.
        """
        from gradsum._tensor import Tensor
        from gradsum.ops._core import edge

        split = cls.setup_context is not Function.setup_context
        if split or kwargs:
            args = _bind(cls.forward, args, kwargs, split)
        node = cls._backward_cls()
        node._fn_cls = cls
        # (torch: the inputs' requires_grad, whatever the grad mode)
        node.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        prev = _state.enabled
        _state.enabled = False
        try:
            if not split:
                raw = cls.forward(node, *args)
            else:  # split style: forward(*args), then setup_context(ctx, inputs, output)
                raw = cls.forward(*args)
                cls.setup_context(node, args, raw)
        finally:
            _state.enabled = prev
        single = not isinstance(raw, tuple)
        outs = (raw,) if single else raw
        record = _state.enabled and any(node.needs_input_grad)
        inputs_by_id = {id(a): a for a in args if isinstance(a, Tensor)}
        if node.dirty:
            out_ids = {id(o) for o in outs}
            missing = len(node.dirty - out_ids)
            if missing:
                raise RuntimeError(_messages.dirty_not_returned(cls.__name__, missing))
        if record:
            # Edges first: an input modified in place and returned (mark_dirty) is about to
            # get this node as its grad_fn, and its edge must point to its previous history.
            n_out = sum(isinstance(o, Tensor) for o in outs)
            for a in args:
                if isinstance(a, Tensor) and id(a) in node.dirty:
                    if a.is_leaf and a._requires_grad:
                        raise RuntimeError(_messages.leaf_inplace(f"{cls.__name__}.forward"))
                    if a._base is not None and n_out > 1:
                        raise RuntimeError(_messages.dirty_view_many_outputs(cls.__name__,
                                                                             n_out))
            node._next = tuple(edge(a) if isinstance(a, Tensor) else (None, 0) for a in args)
            node._in_meta = [  # (shape, dtype); None: no gradient needed; False: no tensor
                ((a._array.shape, a._array.dtype) if node._next[i][0] is not None else None)
                if isinstance(a, Tensor) else False
                for i, a in enumerate(args)
            ]
        node._out_meta = [
            (o._array.shape, o._array.dtype) if isinstance(o, Tensor) else ((), None)
            for o in outs
        ]
        roots = {id(a._base if a._base is not None else a) for a in inputs_by_id.values()}
        results: list[Any] = []
        rebase: tuple[Tensor, int, tuple[Node | None, int]] | None = None
        for i, o in enumerate(outs):
            if not isinstance(o, Tensor):
                results.append(o)
                continue
            is_input = id(o) in inputs_by_id
            dirty = id(o) in node.dirty
            if dirty:
                o._vc[0] += 1  # torch bumps a tensor marked dirty once more
                if len(o._vc) > 1:  # (views torch no longer regenerates: ops._core)
                    from gradsum.ops._core import stale_views

                    stale_views(o._vc)
            differentiable = record and id(o) not in node.non_differentiable and (
                D.is_float_np(o._array.dtype)
            )
            # torch's _wrap_outputs: which tensor the caller gets, and its history
            if not differentiable:
                if not o.requires_grad:
                    if is_input and not dirty:
                        o = _view_as_self(o)
                elif is_input:  # (a detached alias, not the input losing its history)
                    o = o.detach()
                elif o._base is None:
                    o.detach_()
            elif dirty and o._base is not None and o._view_fn is not None:
                k = next(j for j, a in enumerate(args) if a is o)
                rebase = (o, k, edge(o._base))  # (done once the saved tensors are known)
            else:
                if is_input and not dirty:
                    o = _view_as_self(o)
                    o._multi_view = (cls.__name__, i, "custom")
                elif not dirty and o._base is not None and id(o._base) in roots:
                    o._multi_view = (cls.__name__, i, "custom")  # (a view of an input)
                o._grad_fn = node
                o._output_nr = i
                o._requires_grad = False
                if dirty and o._base is None:  # (note "Views after an in-place
                    from gradsum.ops.inplace import refresh_views  # op" in ops.inplace)

                    refresh_views(o, o)
            results.append(o)
        if record:
            out_ids = {id(r): r for r in results if isinstance(r, Tensor)}
            raw_ids = {id(o): k for k, o in enumerate(outs)}
            saved = []
            for t in node._to_save:
                if t is not None and id(t) in raw_ids and isinstance(results[raw_ids[id(t)]],
                                                                     Tensor):
                    saved.append(_saved_output(results[raw_ids[id(t)]]))
                elif t is not None and id(t) in out_ids:
                    saved.append(_saved_output(t))
                else:  # (through the saved tensor hooks when some are active)
                    saved.append(_saved_input(t))
            node._saved = tuple(saved)
            node._to_save = ()
        if rebase is not None:
            _rebase_view(node, *rebase)
        return results[0] if single else tuple(results)


def _bind(forward: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
          split: bool) -> tuple[Any, ...]:
    """``apply``'s arguments as forward's positional inputs, as torch binds them: the split
    style binds with Python's rules and fills in defaults; otherwise each keyword names one
    positional parameter after ``ctx`` (no defaults are filled in)."""
    import inspect

    if split:
        bound = inspect.signature(forward).bind(*args, **kwargs)
        bound.apply_defaults()
        if bound.kwargs:  # (keyword-only or **kwargs parameters: torch refuses them)
            raise TypeError(_messages.apply_kwarg_unexpected(next(iter(bound.kwargs))))
        return tuple(bound.args)
    params = [p.name for p in inspect.signature(forward).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][1:]
    extra: dict[int, Any] = {}
    for k, v in kwargs.items():
        if k not in params:
            raise TypeError(_messages.apply_kwarg_unexpected(k))
        i = params.index(k)
        if i < len(args):
            raise TypeError(_messages.apply_kwarg_twice(k))
        extra[i] = v
    n = max(extra) + 1
    for i in range(len(args), n):
        if i not in extra:
            raise TypeError(_messages.apply_kwarg_missing(params[i], i))
    return args + tuple(extra[i] for i in range(len(args), n))


def _view_as_self(t: Tensor) -> Tensor:
    """torch's ``view_as(self)`` of an input a Function returns as is: a new tensor on the
    same buffer and version counter, a view of the input's base."""
    from gradsum._tensor import Tensor

    o = Tensor._make(t._array)
    o._vc = t._vc
    o._base = t._base if t._base is not None else t
    return o


class _DirtyViewFn:
    """The node of a Function that modified an input view in place, seen by
    ``ops.inplace.CopySlices`` as an op whose first input is that view."""

    __slots__ = ("index", "node")

    def __init__(self, node: BackwardCFunction, index: int) -> None:
        self.node = node
        self.index = index

    def backward(self, g: Tensor) -> tuple[Tensor | None, ...]:
        res = self.node.backward(g)
        k = self.index
        return (res[k], *res[:k], *res[k + 1:])


def _rebase_view(node: BackwardCFunction, v: Tensor, k: int,
                 base_edge: tuple[Node | None, int]) -> None:
    """Input ``k`` of the Function, a view, was modified in place (mark_dirty): like an
    in-place op on a view (``ops.inplace.apply_inplace``), the base's history gains a
    CopySlices around ``node`` (its first edge ``base_edge``, the base's history before) and
    every view of the base is rebuilt from it."""
    from gradsum.ops._core import set_history
    from gradsum.ops.inplace import CopySlices, refresh_views

    base = v._base
    assert base is not None and v._view_fn is not None
    nxt = node._next
    cs = CopySlices()
    cs.view_fn = v._view_fn
    cs.fn = _DirtyViewFn(node, k)
    cs._next = (base_edge, *nxt[:k], *nxt[k + 1:])
    cs._saved = node._saved
    set_history(base, cs, 0, True)
    prev = _state.enabled
    _state.enabled = True
    try:
        nv = v._view_fn(base)
    finally:
        _state.enabled = prev
    set_history(v, nv._grad_fn, nv._output_nr, True)
    refresh_views(base, v)


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a ``backward`` that is not itself differentiable: it runs without recording,
    so its results carry no graph and a double backward through it finds nothing to
    differentiate (and raises) instead of silently returning wrong values."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *grads: Any) -> Any:
        prev = _state.enabled
        _state.enabled = False
        try:
            return fn(ctx, *grads)
        finally:
            _state.enabled = prev

    return wrapper
