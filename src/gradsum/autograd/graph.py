"""Graph nodes: the backward half of every op, and the one sink that writes ``.grad``.

A :class:`Node` is created by an op when any input requires grad. It holds the edges to the
nodes that produced its inputs (``next_functions``), the tensors its rule needs (saved through
:mod:`gradsum.autograd.saved`, versioned, released after backward), and tensor hooks.

:class:`AccumulateGrad` is the sink of a leaf, and this module the only code in gradsum that
writes ``.grad``: :func:`_accumulate_grad` adds a gradient in (a leaf's sink, retain_grad, DDP),
:func:`_set_grad` replaces it (the ``.grad`` setter, ``copy.deepcopy``, the toolkit restoring
a snapshot). See the note "Taking over a gradient buffer" below; a test
(``tests/autograd/test_grad_single_writer.py``) fails if any other module assigns ``._grad``.

Below them, torch.autograd.graph's utilities: saved tensor hooks (``saved_tensors_hooks``,
``save_on_cpu``, ``disable_saved_tensors_hooks``), gradient edges (``GradientEdge``,
``get_gradient_edge``), ``increment_version`` and ``register_multi_grad_hook``.

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

import contextlib
import functools
import itertools
import threading
import weakref
from collections import defaultdict
from collections.abc import Callable, Generator, Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from gradsum._backend import xp
from gradsum._blas import owns_buffer as _owns_buffer
from gradsum.autograd import _messages
from gradsum.autograd.grad_mode import _state
from gradsum.autograd.hooks import changed_shape_pair as _changed_shape_pair
from gradsum.autograd.hooks import checked_hook_result as _checked_hook_result
from gradsum.autograd.hooks import run_node_post_hooks as _run_node_post_hooks
from gradsum.autograd.hooks import run_node_pre_hooks as _run_node_pre_hooks
from gradsum.autograd.saved import (
    SavedTensor,
    ViewOutputSaved,
    hooks_active,
    pack_saved,
)
from gradsum.autograd.saved import (
    hooks_state as _hooks_state,
)

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
#: Held while a ``.grad`` is read and written back (note "Accumulation is atomic" in
#: :func:`_accumulate_grad`): one lock for every leaf, as each update holds it for one add
_ACCUMULATE_LOCK = threading.Lock()
#: the Python threads running and starting (threading's own tables): with one thread there is
#: nobody to race, and the lock (a fifth of a small leaf's update) is skipped
_threads = threading._active  # type: ignore[attr-defined]
_threads_starting = threading._limbo  # type: ignore[attr-defined]


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

    def __init_subclass__(cls, name: str | None = None, **kwargs: Any) -> None:
        """``class _MulScalar(MulScalarBackward, name="MulBackward0")``: a node class whose
        name is torch's where gradsum has a second class for the node (a rule specialised for
        a scalar operand, the Backward0 and Backward1 forms of one factory): ``name()``,
        ``type(node).__name__`` and the repr give ``name``."""
        super().__init_subclass__(**kwargs)
        if name is not None:
            cls.__name__ = cls.__qualname__ = name

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
        raise NotImplementedError(_messages.no_backward_rule(self.name()))

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
        """Unpack saved tensors, checking that none was freed or modified in place (the one
        place the checks are written: :meth:`saved_arrays` hands every case but the plain
        ones to this method)."""
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
        self.saved()]``, without rebuilding a saved output's tensor. For a rule that computes
        on arrays when no graph is recorded. It takes only the plain cases itself (a slot
        saved unmodified, without hooks, not detached in place) and sends every other, where
        a check may raise, to :meth:`saved`."""
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
        """Add ``grad`` into ``.grad`` of this sink's leaf (:func:`_accumulate_grad`)."""
        _accumulate_grad(self.variable, grad, owned, create_graph)


def _accumulate_grad(var: Tensor, grad: Tensor, owned: bool = False,
                     create_graph: bool = False, retained: bool = False) -> None:
    """Add ``grad`` into ``var.grad``: the one function through which a backward (a leaf's
    sink, a non-leaf's retain_grad, DDP's reducer) changes a ``.grad``.

    For a leaf, note "Taking over a gradient buffer" (:class:`AccumulateGrad`): ``owned`` says
    that nothing else references the buffer of ``grad``; under ``create_graph`` the sum is
    recorded out of place. ``retained``: a non-leaf's ``.grad`` kept by retain_grad, which
    keeps a copy and accumulates out of place (as torch's retains_grad hook), recorded when
    grad mode is on (in a backward: under ``create_graph``); no observers, no hooks.

    Note "Accumulation is atomic": backwards running in several threads may reach one leaf
    at once (torch locks each leaf's AccumulateGrad). NumPy lets go of the interpreter inside
    ``arr += g``, so two unguarded updates can both read the old values and one sum is lost;
    two first gradients can both see ``None``. The read and the write of ``.grad`` are made
    under ``_ACCUMULATE_LOCK`` whenever another Python thread exists (or is starting); with
    this thread alone nothing can run between them, and no thread can start (only this one
    could start it). The observers and the post-accumulate hooks run outside the lock (a hook
    may run a backward of its own). (A thread a C library makes without ``threading``, that
    calls into gradsum, is not seen: run such code under a ``threading.Thread``.)
    """
    if retained:
        with _ACCUMULATE_LOCK:
            old = var._grad
            if old is None:
                var._grad = grad.clone() if _state.enabled else grad.detach().clone()
            else:
                var._grad = old + grad
        return
    if accumulate_observers:
        for obs in list(accumulate_observers):
            obs(var, grad)
    if len(_threads) > 1 or _threads_starting:  # (see "Accumulation is atomic")
        with _ACCUMULATE_LOCK:
            _add_into(var, grad, owned, create_graph)
    else:
        _add_into(var, grad, owned, create_graph)
    if var._post_acc_hooks:
        run_post_acc_hooks(var)


def _add_into(var: Tensor, grad: Tensor, owned: bool, create_graph: bool) -> None:
    """The read and the write of a leaf's ``.grad`` (:func:`_accumulate_grad`'s core)."""
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


def _assign_grad(var: Tensor, value: Tensor | None) -> None:
    """``var.grad = value``, the user's write (the ``.grad`` setter is this function): checked
    as torch checks it (a tensor of the leaf's shape and dtype, or None), then stored as it
    is; nothing is added, no hook runs."""
    if value is not None:
        if not isinstance(value, _Tensor if _Tensor is not None else _bind_tensor()):
            raise TypeError(_messages.grad_assign_type(value))
        if value._array.shape != var._array.shape:
            raise RuntimeError(_messages.grad_assign_shape(value._array.shape, var._array.shape))
        if value._array.dtype != var._array.dtype:
            raise RuntimeError(_messages.grad_assign_dtype(value.dtype.name, var.dtype.name))
    var._grad = value


def _set_grad(var: Tensor, value: Tensor | None) -> None:
    """Make ``value`` the ``.grad`` of ``var`` (None clears it), unchecked: a copy's
    (``copy.deepcopy``), a buffer DDP's reducer averaged into, a toolkit restoring what it
    saved (the user's write is :func:`_assign_grad`). Nothing is added, no hook runs."""
    var._grad = value


def _clear_grad(var: Tensor, set_to_none: bool) -> None:
    """``zero_grad``'s rule for one tensor, shared by ``Module.zero_grad`` and
    ``Optimizer.zero_grad`` (SEMANTICS 2): ``.grad = None``, or with ``set_to_none=False`` a
    grad that carries a graph detached, then zeroed in place (the same tensor object)."""
    g = var._grad
    if g is None:
        return
    if set_to_none:
        _set_grad(var, None)
        return
    if g.grad_fn is not None:
        g.detach_()
    else:
        g.requires_grad_(False)
    g.zero_()


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


#: The gradients of a backward whose buffer someone else may hold (passed through a node
#: unchanged, given to several inputs, returned by a hook, a seed): ``id(t) -> t._vc``. The
#: version counter (a tensor's for its lifetime, kept alive by this dict) tells ``t`` from a
#: later tensor that reuses the id of a dead one (which would look shared and be copied).
_Shared = dict[int, Any]


def _is_owned(g: Tensor, shared: _Shared) -> bool:
    # See AccumulateGrad, note "Taking over a gradient buffer": a gradient may be taken over
    # (or added into in place) only if no one else can hold its buffer.
    if shared.get(id(g)) is g._vc:
        return False
    a = g._array
    if a.base is not None:  # (a huge-page-aligned product is a view of its own buffer)
        return a.flags.writeable and _owns_buffer(a)
    flags = a.flags
    return flags.writeable and flags.owndata


def _mark_shared(user: bool, outs: tuple[Tensor | None, ...], grads: list[Tensor | None],
                 shared: _Shared) -> None:
    """A gradient handed to several inputs, or passed through unchanged where user code saw
    it (``user``: a Function's backward, :attr:`Node._user_backward`, or the node's hooks),
    has a shared buffer: record it so that nobody takes it over or adds into it in place."""
    if not user:
        grads = []  # (a built-in pass-through: the gradient stays as owned as it came)
    n = len(outs)
    if n == 1 or n == 2:  # (the same marks as the loop below, without its set)
        o0 = outs[0]
        if o0 is not None:
            for x in grads:
                if o0 is x:
                    shared[id(o0)] = o0._vc
                    break
        if n == 2:
            o1 = outs[1]
            if o1 is not None:
                if o1 is o0:
                    shared[id(o1)] = o1._vc
                else:
                    for x in grads:
                        if o1 is x:
                            shared[id(o1)] = o1._vc
                            break
        return
    seen_ids: set[int] = set()
    for o in outs:
        if o is not None:
            if id(o) in seen_ids:
                shared[id(o)] = o._vc
            else:
                for x in grads:
                    if o is x:
                        shared[id(o)] = o._vc
            seen_ids.add(id(o))


def _add_to_buffer(buffers: dict[Node, list[Tensor | None]], child: Node, cnr: int,
                   g: Tensor, create_graph: bool, shared: _Shared) -> None:
    """Sum ``g`` into the input buffer of ``child`` (in place only into an owned buffer)."""
    buf = buffers.get(child)
    if buf is None:
        buf = buffers[child] = [None] * child.num_outputs
    old = buf[cnr]
    if old is None:
        buf[cnr] = g
    elif create_graph:
        if old._array.shape != g._array.shape and child._hooks is not None:
            old, g = _changed_shape_pair(child, cnr, old, g)
        buf[cnr] = old + g
    elif _is_owned(old, shared) and old._array.shape == g._array.shape:
        old._array += g._array
    elif (_is_owned(g, shared) and old._array.shape == g._array.shape
          and old._array.dtype == g._array.dtype):
        g._array += old._array  # (addition commutes: the same bits as old + g)
        buf[cnr] = g
    else:
        if old._array.shape != g._array.shape and child._hooks is not None:
            old, g = _changed_shape_pair(child, cnr, old, g)
        buf[cnr] = old + g




def _sink(node: AccumulateGrad, g: Tensor | None, targets: dict[tuple[Node, int], int],
          captured: list[Tensor | None], needed: set[Node] | None, accumulate: bool,
          create_graph: bool, shared: _Shared) -> None:
    """A leaf's gradient arrives: leaf hooks, then capture (grad) and/or accumulate with the
    sink's own pre/post hooks. As in torch, the hooks run with None when the gradient is
    None (the node runs all the same)."""
    var = node.variable
    hooks = var._hooks
    if hooks:
        for hook in list(hooks):
            r = hook(g)
            if r is not None:
                g = _checked_hook_result(hook, g, r)
                shared[id(g)] = g._vc
    if g is not None and g._array.dtype != var._array.dtype:
        g = g.to(var.dtype)
    if targets:
        idx = targets.get((node, 0))
        if idx is not None:
            captured[idx] = g
    if not (node in needed if needed is not None else accumulate):
        return  # (only captured: autograd.grad runs no sink)
    nh = node._hooks
    if nh is not None and nh.pre:
        g = _run_node_pre_hooks(nh, [g], shared)[0]
    if g is not None and var._requires_grad:
        if nh is not None and nh.shapes and g._array.shape != var._array.shape:
            g = _into_changed_leaf(var, g)
        _accumulate_grad(var, g, _is_owned(g, shared), create_graph)
    elif g is not None and var._grad_fn is not None:
        # torch's AccumulateGrad refuses a leaf that an in-place op gave a history since
        # (after detach_() or requires_grad_(False)); its .grad stays as it was
        raise RuntimeError(_messages.leaf_moved_into_interior(var, var._grad_fn.name()))
    elif var._post_acc_hooks:  # (no gradient, or detach_() after the graph was built:
        run_post_acc_hooks(var)  # torch's sink skips the update, not the hooks)
    if nh is not None and nh.post:
        _run_node_post_hooks(nh, (), [g], shared)


def _into_changed_leaf(var: Tensor, g: Tensor) -> Tensor:
    """The gradient for a leaf whose shape changed in place under no_grad since its sink was
    made: torch copies it into a new ``.grad`` of the leaf's shape, or adds it into the
    existing ``.grad`` in place, broadcasting either way (and refusing what does not)."""
    old = var._grad
    want = var._array.shape if old is None else old._array.shape
    try:
        shape = xp.broadcast_shapes(want, g._array.shape)
    except ValueError:
        shape = None
    if shape != want:
        from gradsum.ops._core import broadcast_error

        raise broadcast_error(var if old is None else old, g)
    if old is not None:
        return g
    return g.expand(*want).clone()


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


def _target_of(t: Tensor) -> tuple[Node | None, int]:
    """The (node, slot) where the gradient of ``t`` arrives in a backward (its ``grad_fn`` or
    its sink), or (None, 0) if none can."""
    if t.__class__ is GradientEdge:  # (autograd.graph.get_gradient_edge)
        return t.node, t.output_nr
    if t._grad_fn is not None:
        return t._grad_fn, t._output_nr
    if t._requires_grad:
        if t._nograd_view_version is not None:  # (a view made in no_grad mode: no sink)
            t._check_nograd_view()  # (torch refuses one whose base changed since)
            return None, 0
        return grad_accumulator(t), 0
    return None, 0


# -- torch.autograd.graph's public utilities ----------------------------------------------
# -- saved tensor hooks ----------------------------------------------------------------------
class saved_tensors_hooks:
    """Context manager: tensors saved for backward inside it go through ``pack_hook`` (what
    it returns is what the node keeps) and come back through ``unpack_hook`` when backward
    (or ``ctx.saved_tensors``) reads them. Nested contexts use the innermost pair; the
    pairs are per thread. As torch, no version check is made through hooks, and an
    ``unpack_hook`` result that is not a tensor raises ``TypeError``.

    Example:
        >>> import gradsum
        >>> from gradsum.autograd.graph import saved_tensors_hooks
        >>> x = gradsum.tensor([3.0], requires_grad=True)
        >>> with saved_tensors_hooks(lambda t: t.tolist(), lambda p: gradsum.tensor(p)):
        ...     y = x ** 2
        >>> y.backward()
        >>> x.grad.tolist()
        [6.0]
    """

    def __init__(self, pack_hook: Callable[[Tensor], Any],
                 unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        if _hooks_state.disabled is not None:
            raise RuntimeError(_hooks_state.disabled)
        _hooks_state.stack.append((self.pack_hook, self.unpack_hook))
        hooks_active.append(None)  # (note "Saved tensor hooks on the hot path", saved.py)

    def __exit__(self, *args: object) -> None:
        if not _hooks_state.stack:
            raise RuntimeError(_messages.pop_hooks_empty())
        _hooks_state.stack.pop()
        hooks_active.pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU and moved back to their device for backward.

    gradsum runs on the CPU, so as in torch for CPU tensors, nothing is copied unless
    ``pin_memory=True`` (then a copy is kept). ``device_type`` is accepted for torch's
    signature.

    Example:
        >>> import gradsum
        >>> from gradsum.autograd.graph import save_on_cpu
        >>> x = gradsum.tensor([1.0, 2.0], requires_grad=True)
        >>> with save_on_cpu(pin_memory=True):
        ...     y = (x * x).sum()
        >>> y.backward(); x.grad.tolist()
        [2.0, 4.0]
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor: Tensor) -> tuple[Any, Tensor]:
            if not pin_memory:
                return (tensor.device, tensor.cpu())
            return (tensor.device, tensor.detach().clone())

        def unpack_from_cpu(packed: tuple[Any, Tensor]) -> Tensor:
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Generator[None, None, None]:
    """Within it, registering saved tensor hooks raises ``RuntimeError(error_message)``;
    entering it while hooks are active raises the same.

    Example:
        >>> from gradsum.autograd.graph import disable_saved_tensors_hooks, save_on_cpu
        >>> with disable_saved_tensors_hooks("no hooks here"):
        ...     try:
        ...         with save_on_cpu():
        ...             pass
        ...     except RuntimeError as e:
        ...         print(e)
        no hooks here
    """
    prev = _hooks_state.disabled
    try:
        _hooks_state.disabled = error_message
        if _hooks_state.stack:  # (torch refuses to disable hooks that are already active)
            raise RuntimeError(error_message)
        yield
    finally:
        _hooks_state.disabled = prev


# -- gradient edges ------------------------------------------------------------------------------
class GradientEdge(NamedTuple):
    """Where the gradient of a tensor arrives in the graph: ``(node, output_nr)``. Accepted
    wherever torch accepts one: ``inputs=`` of ``autograd.grad`` and ``backward``, and the
    outputs of ``autograd.grad``/``backward`` (with an explicit gradient).

    Example:
        >>> import gradsum
        >>> from gradsum.autograd.graph import get_gradient_edge
        >>> x = gradsum.tensor([2.0], requires_grad=True)
        >>> h = x * 3
        >>> y = (h * h).sum()
        >>> (gh,) = gradsum.autograd.grad(y, get_gradient_edge(h))
        >>> gh.tolist()
        [12.0]
    """

    node: Node
    output_nr: int
    ownership_token: Node | None = None


def _node_of(t: Tensor | GradientEdge) -> Node:
    """torch's ``_get_grad_fn_or_grad_acc``: the grad_fn, or a leaf's sink (created)."""
    if isinstance(t, GradientEdge):
        return t.node
    node = t._grad_fn
    if node is None and t._requires_grad:
        node = grad_accumulator(t)
    if node is None:
        raise AssertionError(_messages.node_expected())
    return node


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The :class:`GradientEdge` where ``tensor``'s gradient is computed.

    Example:
        >>> import gradsum
        >>> from gradsum.autograd.graph import get_gradient_edge
        >>> x = gradsum.ones(2, requires_grad=True)
        >>> get_gradient_edge(x).node.name(), get_gradient_edge(x * 2).node.name()
        ('AccumulateGrad', 'MulBackward0')
    """
    if not tensor.requires_grad:
        raise RuntimeError(_messages.gradient_edge_no_grad())
    return GradientEdge(_node_of(tensor), tensor._output_nr)


def increment_version(tensor: Tensor | Iterable[Tensor]) -> None:
    """Bump the version counter of ``tensor`` (or of each tensor of an iterable), for an
    in-place change autograd did not see: backward then refuses saved copies of it.

    Example:
        >>> import gradsum
        >>> from gradsum.autograd.graph import increment_version
        >>> x = gradsum.ones(2)
        >>> increment_version(x); x._version
        1
    """
    from gradsum._tensor import Tensor
    from gradsum.ops._core import stale_views

    tensors = (tensor,) if isinstance(tensor, Tensor) else tensor
    for t in tensors:
        vc = t._vc
        vc[0] += 1
        if len(vc) > 1:  # (views guarded by this counter: as every in-place op, ops._core)
            stale_views(vc)


# -- multi-grad hooks ---------------------------------------------------------------------------
class _MultiHandle(RemovableHandle):
    """The handle of :func:`register_multi_grad_hook`: ``remove()`` removes every part."""

    __slots__ = ("handles",)

    def __init__(self, handles: tuple[RemovableHandle, ...]) -> None:
        self.handles = handles
        self.id = next(_handle_ids)

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()


def register_multi_grad_hook(tensors: Sequence[Tensor], fn: Callable[..., None], *,
                             mode: str = "all") -> RemovableHandle:
    """Call ``fn`` once per backward, as torch's:

    * ``mode="all"``: after the gradients of every tensor of ``tensors`` that this backward
      computes are known, with the list of them (``None`` for a tensor the backward does not
      reach or, under ``inputs=``, does not need);
    * ``mode="any"``: with the first of those gradients computed.

    Example:
        >>> import gradsum
        >>> from gradsum.autograd.graph import register_multi_grad_hook
        >>> a = gradsum.ones(2, requires_grad=True)
        >>> b = gradsum.ones(2, requires_grad=True)
        >>> c, d = a * b, a * b
        >>> h = register_multi_grad_hook((a, b, c, d),
        ...                              lambda gs: print([g is not None for g in gs]))
        >>> c.sum().backward(retain_graph=True)
        [True, True, True, False]
        >>> c.sum().backward(inputs=(a,))
        [True, False, True, False]
        >>> h.remove()
    """
    from gradsum.autograd.graph_task import current_graph_task_id, will_engine_execute_node

    lock = threading.Lock()
    if mode not in ("all", "any"):
        raise ValueError(_messages.multi_grad_mode(mode))
    if mode == "all":
        count: dict[int, int] = {}
        nb_calls: list[int] = [0]
        buffer: dict[int, list[Tensor | None]] = {}
        grad_fns = [_node_of(t) for t in tensors]  # (held: a leaf's sink stays the same)
        n = len(tensors)

        def get_inner_hook(idx: int) -> Callable[[Tensor], None]:
            def inner_hook(grad: Tensor) -> None:
                task = current_graph_task_id()
                if task == -1:
                    raise AssertionError(_messages.hook_outside_backward())
                count.setdefault(task, 0)
                buffer.setdefault(task, [None] * n)
                with lock:
                    curr, count[task] = count[task], count[task] + 1
                    if curr == 0:  # (first call: how many of the hooks this backward runs)
                        nb_calls[0] = sum(map(will_engine_execute_node, grad_fns))
                buffer[task][idx] = grad
                if curr == nb_calls[0] - 1:
                    fn(buffer[task])
                    del count[task]
                    del buffer[task]

            return inner_hook

        handles = tuple(t.register_hook(get_inner_hook(i)) for i, t in enumerate(tensors))
    else:
        ran_hook: dict[int, bool] = defaultdict(bool)

        @functools.wraps(fn)
        def wrapped_fn(grad: Tensor) -> None:
            task = current_graph_task_id()
            if task == -1:
                raise AssertionError(_messages.hook_outside_backward())
            with lock:
                prev, ran_hook[task] = ran_hook[task], True
            if prev:
                return
            fn(grad)

        handles = tuple(t.register_hook(wrapped_fn) for t in tensors if t.requires_grad)
    return _MultiHandle(handles)


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
