"""Graph nodes: the backward half of every op, and the one sink that writes ``.grad``.

A :class:`Node` is created by an op when any input requires grad. It holds the edges to the
nodes that produced its inputs (``next_functions``), the tensors its rule needs (saved through
:mod:`gradsum.autograd.saved`, versioned, released after backward), and tensor hooks.

:class:`AccumulateGrad` is the sink of a leaf. It is the only code in gradsum that writes a
leaf's ``.grad`` during backward; see the note "Taking over a gradient buffer" below.

Example:
    >>> import gradsum
    >>> w = gradsum.tensor([1.0, 2.0], requires_grad=True)
    >>> y = (w * 3).sum()
    >>> y.grad_fn.name()
    'SumBackward0'
    >>> y.grad_fn.next_functions[0][0].name()
    'MulBackward0'
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gradsum.autograd import _messages
from gradsum.autograd.grad_mode import _state
from gradsum.autograd.saved import SavedTensor, ViewOutputSaved, hooks_active, pack_saved

if TYPE_CHECKING:
    from gradsum._tensor import Tensor

_seq = itertools.count()
#: ``Node.metadata`` dicts, allocated on first access only (nodes have no slot for them)
_node_metadata: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()
_handle_ids = itertools.count()
_Tensor: Any = None  # gradsum._tensor.Tensor, bound on first use (import cycle)


def _bind_tensor() -> Any:
    global _Tensor
    from gradsum._tensor import Tensor

    _Tensor = Tensor
    return Tensor

#: ``fn(leaf, grad)`` callables run by every sink just before it updates ``leaf.grad`` during
#: backward (the accumulation toolkit's ledger uses this). Empty, and so free, by default.
accumulate_observers: list[Callable[[Any, Any], None]] = []
_ACC_SEQ = 1 << 62  # sinks run as soon as they are ready (torch gives them the highest priority)


class RemovableHandle:
    """Returned by every ``register_*hook``; ``remove()`` unregisters the hook.

    Example:
        >>> import gradsum
        >>> x = gradsum.ones(2, requires_grad=True)
        >>> h = x.register_hook(lambda g: g * 2)
        >>> h.remove()
        >>> (x * 1).sum().backward(); x.grad.tolist()
        [1.0, 1.0]
    """

    __slots__ = ("_hook", "_list_ref", "id")

    def __init__(self, hooks: list[Any], hook: Any) -> None:
        self._list_ref = hooks
        self._hook = hook
        #: a number unique to this handle (torch's handles carry one)
        self.id: int = next(_handle_ids)

    def remove(self) -> None:
        hooks = self._list_ref
        for i, h in enumerate(hooks):
            if h is self._hook:
                del hooks[i]
                return

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class _NodeHooks:
    """The rarely used per-node state, allocated only when a hook or retain_grad needs it."""

    __slots__ = ("post", "pre", "retains", "shapes", "tensor")

    def __init__(self) -> None:
        self.tensor: dict[int, list[Callable[..., Any]]] = {}
        self.retains: dict[int, Any] = {}
        self.pre: list[Callable[..., Any]] = []
        self.post: list[Callable[..., Any]] = []
        # output_nr -> its shape when the node was made, for an output whose tensor changed
        # shape in place under no_grad since (ops.inplace._restride; the engine checks the
        # gradient against it, as torch's validate_outputs against its input metadata)
        self.shapes: dict[int, tuple[int, ...]] = {}


class Node:
    """One step of the backward graph (``grad_fn``); subclasses are named ``<Op>Backward0``.

    Subclasses implement :meth:`backward`, which receives one gradient per output of the forward
    op and returns one gradient (or ``None``) per input edge, written in differentiable gradsum
    ops so that ``create_graph=True`` records it (double backward for free).

    ``_saved`` is ``()`` when nothing was saved and ``None`` once the saved tensors were
    released by a backward without ``retain_graph``.
    """

    __slots__ = ("__weakref__", "_hooks", "_next", "_saved", "_seq")
    #: number of forward outputs (gradients this node receives)
    num_outputs = 1
    #: the backward is user code (a :class:`~gradsum.autograd.Function`): a gradient it hands
    #: on unchanged may also be kept by it (in ``ctx``, a global), so the engine takes it as
    #: shared; a built-in node's pass-through (``CloneBackward0``, ``x + c``) keeps nothing,
    #: and its gradient stays as owned as it arrived (torch's sink counts the tensor's other
    #: holders, and a pass-through adds none)
    _user_backward = False

    def __init__(self) -> None:
        self._seq = next(_seq)
        self._next: tuple[tuple[Node | None, int], ...] = ()
        self._saved: tuple[SavedTensor, ...] | None = ()
        self._hooks: _NodeHooks | None = None

    # -- public, torch-named API -------------------------------------------------------------
    def name(self) -> str:
        """The node's class name, e.g. ``'MulBackward0'``."""
        return type(self).__name__

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        """``((node, input_nr), ...)``, one per forward input; ``(None, 0)`` where no grad flows."""
        return self._next

    @property
    def metadata(self) -> dict[str, Any]:
        """A dict kept with this node (torch's; anomaly mode stores ``"traceback_"`` there)."""
        d = _node_metadata.get(self)
        if d is None:
            d = _node_metadata[self] = {}
        return d

    @property
    def _released(self) -> bool:
        """True once a backward without ``retain_graph`` freed this node's saved tensors."""
        return self._saved is None

    def _get_hooks(self) -> _NodeHooks:
        if self._hooks is None:
            self._hooks = _NodeHooks()
        return self._hooks

    def register_hook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after this node; it may return new grad_inputs."""
        hooks = self._get_hooks().post
        hooks.append(fn)
        return RemovableHandle(hooks, fn)

    def register_prehook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before this node; it may return new grad_outputs."""
        hooks = self._get_hooks().pre
        hooks.append(fn)
        return RemovableHandle(hooks, fn)

    def __call__(self, *grads: Tensor | None) -> Any:
        out = self.backward(*grads)
        return out[0] if len(self._next) == 1 and isinstance(out, tuple) else out

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"

    # -- for op implementations -----------------------------------------------------------------
    def backward(self, *grads: Tensor) -> tuple[Tensor | None, ...]:
        raise NotImplementedError(f"{self.name()} has no backward rule")

    def needs(self, i: int) -> bool:
        """Whether input ``i`` needs a gradient (its edge leads somewhere)."""
        return self._next[i][0] is not None

    def save(self, *tensors: Tensor | None, outputs: tuple[Tensor, ...] = ()) -> None:
        """Save input tensors (and this node's own outputs) for backward, with their versions."""
        if outputs:
            if not tensors and len(outputs) == 1:
                self._saved = (_saved_output(outputs[0]),)
            else:
                self._saved = tuple([_saved_input(t) for t in tensors]
                                    + [_saved_output(t) for t in outputs])
        elif len(tensors) == 2:
            a, b = tensors
            self._saved = (_NOTHING_SAVED if a is None else _saved_input(a),
                           _NOTHING_SAVED if b is None else _saved_input(b))
        else:
            self._saved = tuple([_saved_input(t) for t in tensors])

    def saved(self) -> list[Tensor | None]:
        """Unpack saved tensors, checking that none was freed or modified in place.
        (:meth:`saved_arrays` accepts a subset of the cases below itself and hands every
        other to this method: keep the two in step.)"""
        saved = self._saved
        if saved is None:
            raise RuntimeError(_messages.freed_graph(self.name()))
        out: list[Tensor | None] = []
        for s in saved:  # SavedTensor.unpack, inlined for the common cases
            t = s._tensor
            ver = s._vc
            if ver is None:  # a "saved None" slot
                out.append(None)
            elif ver[0] != s._version_at_save:
                out.append(s.unpack(self))  # raises
            elif t is not None:
                if s._output_nr < 0 and t._grad_fn is None:  # a non-leaf detached in place
                    s.check(self)  # raises
                out.append(t)
            elif s._array is not None and s.__class__ is not ViewOutputSaved:
                # this node's own output, rebuilt (see unpack)
                t = _new(_Tensor if _Tensor is not None else _bind_tensor())
                t._array = s._array
                t._requires_grad = False
                t._grad_fn = self
                t._output_nr = s._output_nr
                t._vc = ver
                out.append(t)
            else:
                out.append(s.unpack(self))
        return out

    def saved_arrays(self) -> list[Any]:
        """The arrays of the saved tensors (None for a saved None): ``[t._array for t in
        self.saved()]`` with the same checks, without rebuilding a saved output's tensor.
        For a rule that computes on arrays when no graph is recorded."""
        saved = self._saved
        if saved:
            out = []
            for s in saved:
                ver = s._vc
                if ver is None:
                    if s is not _NOTHING_SAVED:
                        break
                    out.append(None)
                    continue
                if ver[0] != s._version_at_save or s.__class__ is not SavedTensor:
                    break  # (a modified tensor, hooks: the general unpack)
                t = s._tensor
                if t is None:
                    a = s._array
                    if a is None:
                        break
                    out.append(a)
                elif s._output_nr < 0 and t._grad_fn is None:
                    break
                else:
                    out.append(t._array)
            else:
                return out
        return [None if t is None else t._array for t in self.saved()]

    def _check_saved(self) -> None:
        saved = self._saved
        if saved is None:
            raise RuntimeError(_messages.freed_graph(self.name()))
        for s in saved:
            ver = s._vc
            if ver is not None and (ver[0] != s._version_at_save or (
                    s._output_nr < 0 and s._tensor._grad_fn is None)):
                s.check(self)  # raises

    def _release(self) -> None:
        saved = self._saved
        if saved:
            self._saved = None
            for s in saved:  # SavedTensor.release, inlined (a holder of one sees it freed)
                s._tensor = None
                s._array = None

    def _add_tensor_hook(self, output_nr: int, fn: Callable[..., Any]) -> RemovableHandle:
        hooks = self._get_hooks().tensor.setdefault(output_nr, [])
        hooks.append(fn)
        return RemovableHandle(hooks, fn)


_NOTHING_SAVED = SavedTensor(None, False)  # shared by every "saved None" slot (immutable)

#: The ``_saved`` of a node whose backward needs tensors it holds outside saved tensors (an
#: index, a mask, the number torch wraps as a tensor in ``x * 2``). torch saves those as saved
#: variables, so a second backward without ``retain_graph`` raises; with this marker the
#: engine releases such a node like any other and a second backward raises the same error.
HOLDS_STATE: tuple[SavedTensor, ...] = (_NOTHING_SAVED,)


_new = object.__new__
_weakref = weakref.ref


def _saved_input(t: Tensor | None) -> SavedTensor:
    """``SavedTensor(t, False)`` without the generic constructor (the hot path of ``save``)."""
    if t is None:
        return _NOTHING_SAVED
    if hooks_active:  # (note "Saved tensor hooks on the hot path" in saved.py)
        return pack_saved(t, False)
    s = _new(SavedTensor)
    s._is_output = False
    s._tensor = t
    s._array = None
    s._output_nr = -1 if t._grad_fn is not None else 0  # (-1: a non-leaf; see SavedTensor)
    s._vc = v = t._vc
    s._version_at_save = v[0]
    return s


def _saved_output(t: Tensor) -> SavedTensor:
    """``SavedTensor(t, True)``: a node's own output, kept as buffer + counter only."""
    if hooks_active:  # (note "Saved tensor hooks on the hot path" in saved.py)
        return pack_saved(t, True)
    s = _new(SavedTensor)
    s._is_output = True
    s._tensor = None
    s._array = t._array
    s._output_nr = t._output_nr
    s._vc = v = t._vc
    s._version_at_save = v[0]
    return s


class AccumulateGrad(Node):
    """The sink of one leaf: the only writer of ``leaf.grad`` during backward.

    Note "Taking over a gradient buffer": when ``.grad`` is ``None`` the incoming gradient is
    stored as is if the engine says nothing else references its buffer (``owned``), otherwise
    a copy is stored, so a later in-place accumulation can never write into somebody else's
    array. With an existing ``.grad`` the sum is written in place (same object, a reference held
    elsewhere sees it), except under ``create_graph`` where ``grad = grad + new`` is recorded.
    """

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor) -> None:
        super().__init__()
        self._seq = _ACC_SEQ
        self.variable = variable

    def accumulate(self, grad: Tensor, owned: bool, create_graph: bool) -> None:
        var = self.variable
        if accumulate_observers:
            for obs in list(accumulate_observers):
                obs(var, grad)
        old = var._grad
        if old is None:
            if create_graph:
                # Out of place and recorded: the stored grad may carry a graph (SEMANTICS 5).
                var._grad = _copy_recorded(grad)
            elif owned and grad._grad_fn is None:
                var._grad = grad
            else:
                var._grad = grad.detach().clone()
        elif create_graph:
            prev = _state.enabled
            _state.enabled = True
            try:
                var._grad = old + grad
            finally:
                _state.enabled = prev
        else:
            arr = old._array
            if arr.flags.writeable:
                arr += grad._array
                old._vc[0] += 1
            elif _overlaps(arr):
                # torch's ``grad += new`` refuses a .grad the user assigned as an expanded
                # tensor (several elements share memory); the .grad stays as it was.
                raise RuntimeError(_messages.grad_overlaps(tuple(arr.shape)))
            else:  # a read-only .grad that does not overlap (from a read-only array): replace
                var._grad = old.detach() + grad.detach()
        if var._post_acc_hooks:
            run_post_acc_hooks(var)


def _copy_recorded(grad: Tensor) -> Tensor:
    """The first ``.grad`` under ``create_graph``: as torch's AccumulateGrad, a new tensor
    ``copy_``-ed from the gradient with grad mode on, so its ``grad_fn`` is CopyBackwards."""
    from gradsum.ops.inplace import copy_

    dst = (_Tensor if _Tensor is not None else _bind_tensor())._make(grad._array.copy())
    prev = _state.enabled
    _state.enabled = True
    try:
        return copy_(dst, grad)
    finally:
        _state.enabled = prev


def _overlaps(arr: Any) -> bool:
    """Whether several elements of ``arr`` share memory (a zero stride over a dimension
    longer than one: what ``expand`` makes)."""
    return any(st == 0 and n > 1 for st, n in zip(arr.strides, arr.shape))


def run_post_acc_hooks(var: Tensor) -> None:
    """``register_post_accumulate_grad_hook`` hooks of leaf ``var``, in order."""
    for hook in list(var._post_acc_hooks or ()):
        r = hook(var)
        if r is not None:
            _post_acc_hook_returned(hook, r)


def _post_acc_hook_returned(hook: Any, r: Any) -> None:
    """torch refuses a post-accumulate-grad hook's return value: TypeError for a non-tensor,
    RuntimeError for a tensor."""
    name = getattr(hook, "__name__", type(hook).__name__)
    if not isinstance(r, _Tensor if _Tensor is not None else _bind_tensor()):
        raise TypeError(_messages.hook_not_tensor(name, r))
    raise RuntimeError(_messages.post_acc_hook_result(name))


def grad_accumulator(t: Tensor) -> AccumulateGrad:
    """The (unique) sink of leaf ``t``; created on first use, held weakly by the tensor."""
    ref = t._acc_ref
    acc = ref() if ref is not None else None
    if acc is None:
        # AccumulateGrad(t), inlined: a training step makes one per parameter (the sink
        # lives as long as the graph that reaches it, as in torch)
        acc = _new(AccumulateGrad)
        acc._seq = _ACC_SEQ
        acc._next = ()
        acc._saved = ()
        acc._hooks = None
        acc.variable = t
        t._acc_ref = _weakref(acc)
    return acc


# torch.autograd.graph's public utilities (defined apart to keep this hot module small)
from gradsum.autograd._graph_utils import (  # noqa: E402
    GradientEdge,
    disable_saved_tensors_hooks,
    get_gradient_edge,
    increment_version,
    register_multi_grad_hook,
    save_on_cpu,
    saved_tensors_hooks,
)

__all__ = [
    "AccumulateGrad",
    "GradientEdge",
    "Node",
    "RemovableHandle",
    "disable_saved_tensors_hooks",
    "get_gradient_edge",
    "increment_version",
    "register_multi_grad_hook",
    "save_on_cpu",
    "saved_tensors_hooks",
]
