"""Versioned saved tensors: what a node keeps for its backward rule.

A saved tensor remembers the version counter of the tensor it saves. Every in-place op bumps
that counter (views share it with their base), so backward can tell when a value it needs was
overwritten and raise instead of returning a wrong gradient. A node's own outputs are saved
without a reference back to the tensor (only its buffer and counter): holding the output would
make a cycle output -> grad_fn -> saved output, and the graph would outlive its last user.
After backward (unless ``retain_graph``) every saved tensor is released.

Example:
    >>> import gradsum
    >>> x = gradsum.tensor([1.0, 2.0], requires_grad=True)
    >>> y = x * 1
    >>> z = y * y
    >>> _ = y.add_(1)
    >>> try:
    ...     z.sum().backward()
    ... except RuntimeError as e:
    ...     print(str(e)[:60])
    one of the variables needed for gradient computation has bee
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gradsum.autograd import _messages

if TYPE_CHECKING:
    from gradsum._tensor import Tensor
    from gradsum.autograd.graph import Node


_make: Any = None  # Tensor._make


class SavedTensor:
    """One tensor saved by a node, with the version it had when saved."""

    __slots__ = ("_array", "_is_output", "_output_nr", "_tensor", "_vc",
                 "_version_at_save")

    def __init__(self, t: Tensor | None, is_output: bool) -> None:
        self._is_output = is_output
        if t is None:
            self._tensor = self._array = self._vc = None
            self._version_at_save = self._output_nr = 0
        elif is_output:
            self._tensor = None
            self._array = t._array
            self._output_nr = t._output_nr
            self._vc = v = t._vc
            self._version_at_save = v[0]
        else:
            self._tensor = t
            self._array = None
            # (-1: ``t`` was a non-leaf when saved; a later ``detach_()`` makes it unusable)
            self._output_nr = -1 if t._grad_fn is not None else 0
            self._vc = v = t._vc
            self._version_at_save = v[0]

    def check(self, node: Node) -> None:
        ver = self._vc
        if self._output_nr < 0 and self._tensor is not None and self._tensor._grad_fn is None:
            raise RuntimeError(_messages.saved_detached_inplace(self._tensor, node.name()))
        if ver is not None and ver[0] != self._version_at_save:
            t = self._tensor
            if t is None:
                from gradsum._tensor import Tensor

                t = Tensor._make(self._array)
                producer = f"output {self._output_nr} of {node.name()}"
            else:
                producer = (
                    f"output {t._output_nr} of {t._grad_fn.name()}"
                    if t._grad_fn is not None
                    else "a leaf tensor"
                )
            raise RuntimeError(
                _messages.modified_inplace(t, producer, self._version_at_save, ver[0],
                                           node.name())
            )

    def unpack(self, node: Node) -> Any:
        ver = self._vc
        if ver is None:
            return None
        if ver[0] != self._version_at_save or self._output_nr < 0:
            self.check(node)
        if not self._is_output:
            if self._tensor is None:  # (released through a node sharing it, e.g. CopySlices)
                raise RuntimeError(_messages.freed_graph(node.name()))
            return self._tensor
        if self._array is None:
            raise RuntimeError(_messages.freed_graph(node.name()))
        global _make
        if _make is None:
            from gradsum._tensor import Tensor  # (import cycle: bound on first use)

            _make = Tensor._make
        # Rebuild the output tensor so that differentiating through it (double backward)
        # reaches this node, without the node ever holding the output object itself.
        out = _make(self._array, False, node, self._output_nr)
        out._vc = ver
        return out

    def release(self) -> None:
        self._tensor = None
        self._array = None


class ViewOutputSaved(SavedTensor):
    """The output of an in-place op on a view, saved by that op's node (torch's
    ``is_inplace_on_view``). Unpacked, it carries the view's ``grad_fn`` as it was right after
    the op (held weakly, as torch does; the saving node once that is gone), so that
    differentiating through it (double backward) goes through the base's ``CopySlices``,
    like the forward did, instead of reaching the wrapped node directly."""

    __slots__ = ("_fn_nr", "_fn_ref")

    def unpack(self, node: Node) -> Any:
        out = super().unpack(node)
        if out is not None:
            fn = self._fn_ref()
            if fn is not None:
                out._grad_fn, out._output_nr = fn, self._fn_nr
        return out


def on_view(s: SavedTensor, fn: Node, output_nr: int) -> SavedTensor:
    """``s`` (an output saved by an in-place op on a view) as a :class:`ViewOutputSaved` whose
    unpacked tensor has ``grad_fn`` ``fn`` (the view's, after the op)."""
    if s.__class__ is SavedTensor:
        v = ViewOutputSaved.__new__(ViewOutputSaved)
        v._is_output, v._array, v._tensor = True, s._array, s._tensor
        v._output_nr, v._vc, v._version_at_save = s._output_nr, s._vc, s._version_at_save
    else:
        v = s  # (a PackedSavedTensor: it has the slots itself)
    v._fn_ref, v._fn_nr = weakref.ref(fn), output_nr
    return v


def saved_array(s: SavedTensor) -> Any:
    """The array a saved tensor holds (its own buffer for a saved output, the tensor's for a
    saved input, what a saved-tensor pack hook returned when that is a tensor), or None once
    released or when a pack hook kept something else. For the toolkit's memory accounting."""
    if s._array is not None:
        return s._array
    t = s._tensor
    arr = getattr(t, "_array", None)  # (a packed value may be any object)
    return arr if arr is not None and hasattr(arr, "nbytes") else None


# -- saved tensor hooks (``gradsum.autograd.graph.saved_tensors_hooks``) -----------------------
#
# Note "Saved tensor hooks on the hot path": every op that records saves tensors through
# ``graph._saved_input``/``graph._saved_output``. Those test ``hooks_active`` (a module-level
# list, non-empty while any thread has a pair of hooks pushed) and only then call
# :func:`pack_saved`, which looks at this thread's own stack. Without hooks a save costs one
# truth test of a global.

#: one entry per pair of hooks pushed in any thread (see the note above)
hooks_active: list[None] = []


class _HooksState(threading.local):
    def __init__(self) -> None:
        #: this thread's ``(pack_hook, unpack_hook)`` pairs, innermost last
        self.stack: list[tuple[Callable[[Any], Any], Callable[[Any], Any]]] = []
        #: the message of ``disable_saved_tensors_hooks``, or None when hooks are allowed
        self.disabled: str | None = None


hooks_state = _HooksState()

#: what ``_vc`` of a packed saved tensor points to: its ``_version_at_save`` (-1) never
#: matches, which sends every inlined fast path (engine validation, ``Node.saved``) to the
#: methods of :class:`PackedSavedTensor` (torch checks no version through hooks)
_PACKED_VC = [0]
_PACKED_NONE = object()  # stands for a pack hook's ``None`` (``None`` marks a released slot)


class PackedSavedTensor(SavedTensor):
    """A tensor saved while saved-tensor hooks were active: the node keeps only what the pack
    hook returned (in ``_tensor``, released after backward like any saved tensor) and the
    autograd metadata needed to rebuild the tensor, as torch's ``SavedVariable`` with hooks.

    ``_is_output`` is False even for an output (in-place ops re-point saved outputs at their
    destination buffer, see ``ops.inplace``: a packed value must stay as packed); ``_out``
    says whether this is the node's own output.
    """

    __slots__ = ("_acc_ref", "_fn_nr", "_fn_ref", "_grad_fn", "_out", "_requires_grad",
                 "_unpack_hook")

    def check(self, node: Node) -> None:
        if self._tensor is None:  # (released through another holder of the same slot)
            raise RuntimeError(_messages.freed_graph(node.name()))

    def unpack(self, node: Node) -> Any:
        packed = self._tensor
        if packed is None:
            raise RuntimeError(_messages.freed_graph(node.name()))
        global _make
        if _make is None:
            from gradsum._tensor import Tensor

            _make = Tensor._make
        r = self._unpack_hook(None if packed is _PACKED_NONE else packed)
        if not isinstance(r, _make.__self__):
            raise TypeError(_messages.unpack_not_tensor(r))
        # torch's make_variable(data, edge): a new tensor on the unpacked data, carrying the
        # saved tensor's place in the graph, so double backward through it still works
        if self._out:
            fn = self._fn_ref() if self._fn_ref is not None else None  # (see ViewOutputSaved)
            out = (_make(r._array, False, node, self._output_nr) if fn is None
                   else _make(r._array, False, fn, self._fn_nr))
        elif self._grad_fn is not None:
            out = _make(r._array, False, self._grad_fn, self._output_nr)
        else:
            out = _make(r._array, self._requires_grad)
            if self._requires_grad:
                out._acc_ref = self._acc_ref  # (the original leaf's sink: grads reach it)
        out._vc = r._vc
        return out

    def release(self) -> None:
        self._tensor = None
        self._array = None


def pack_saved(t: Tensor, is_output: bool) -> SavedTensor:
    """Save ``t`` through this thread's innermost pack hook (the plain way when this thread
    has none: another thread's hooks do not apply here)."""
    stack = hooks_state.stack
    if not stack:
        return SavedTensor(t, is_output)
    from gradsum.autograd.grad_mode import _state
    from gradsum.autograd.graph import grad_accumulator

    pack_hook, unpack_hook = stack[-1]
    s = PackedSavedTensor.__new__(PackedSavedTensor)
    s._is_output = False
    s._out = is_output
    s._array = None
    s._vc = _PACKED_VC
    s._version_at_save = -1
    s._unpack_hook = unpack_hook
    s._output_nr = t._output_nr
    s._grad_fn = None if is_output else t._grad_fn  # (an output's is the saving node)
    s._requires_grad = t._requires_grad and t._grad_fn is None
    s._acc_ref = s._fn_ref = None
    if s._requires_grad:
        grad_accumulator(t)  # (as torch: the sink exists for the unpacked tensor to reach)
        s._acc_ref = t._acc_ref
    version = t._vc[0]
    prev = _state.enabled
    _state.enabled = False  # (torch packs under no_grad)
    try:
        packed = pack_hook(t)
    finally:
        _state.enabled = prev
    if t._vc[0] != version:
        raise RuntimeError(_messages.pack_modified_input())
    s._tensor = _PACKED_NONE if packed is None else packed
    return s
