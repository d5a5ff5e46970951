"""In-place ops and their machinery: version counters, the view-aware write (``CopySlices``),
``apply_inplace``, ``add_``/``sub_``/``mul_``/``div_``, ``zero_``/``fill_``/``copy_``,
``index_put``/``setitem_``, the in-place twins of the pointwise ops (``exp_``, ``relu_``, ...),
the in-place metadata changes (``t_``, ``transpose_``, ``unsqueeze_``, ``squeeze_``) and
``apply_``/``map_``/``resize_``.

Example:
    >>> import gradsum
    >>> x = gradsum.tensor([1.0, 2.0])
    >>> x.add_(1).tolist()
    [2.0, 3.0]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import gradsum.ops as F
from gradsum import _dtype as D
from gradsum._backend import xp
from gradsum._tensor import Tensor, _ndarray
from gradsum.autograd import _messages
from gradsum.autograd.grad_mode import _state
from gradsum.autograd.graph import HOLDS_STATE, AccumulateGrad, Node
from gradsum.autograd.saved import hooks_state, on_view
from gradsum.ops import _messages as _ops_messages
from gradsum.ops._core import (
    _make,
    broadcast_error,
    edge,
    needs_grad,
    record,
    register,
    scalar_value,
    set_history,
    stale_views,
    tensor_method,
)
from gradsum.ops._messages import torch_name
from gradsum.ops.activation import relu, sigmoid
from gradsum.ops.arithmetic import add, neg, pow, reciprocal, sub
from gradsum.ops.indexing.subscript import (
    _OOB_ONLY_WARNS,
    _convert_key,
    _empty_result,
    _strict_index,
    expand_ellipsis,
    index_target,
    split_key,
)
from gradsum.ops.pointwise import (
    abs,
    ceil,
    clamp,
    cos,
    exp,
    floor,
    log,
    log1p,
    round,
    rsqrt,
    sign,
    sin,
    sqrt,
    tanh,
    trunc,
)
from gradsum.ops.special.erf import erf
from gradsum.ops.views import (
    SqueezeBackward0,
    TBackward0,
    TransposeBackward0,
    UnsqueezeBackward0,
)


def _bump(ver: list[Any]) -> None:
    """One in-place write: the version counter moves; views torch would no longer regenerate
    go stale (note "Views torch cannot regenerate" in ``ops._core.guard_view``)."""
    ver[0] += 1
    if len(ver) > 1:
        stale_views(ver)


def _bump_unrecorded(self: Tensor) -> None:
    """:func:`_bump` for a write that records nothing (no_grad mode, or nothing requires
    grad). torch regenerates the grad_fn of the base's grad-mode views on their next use,
    since the version moved: the same gradients, but new nodes, outside the graphs built
    before (``autograd.grad`` with such a view as input then finds it unused). gradsum
    regenerates them here."""
    _bump(self._vc)
    _refresh_root_views(self)


def _refresh_root_views(self: Tensor) -> None:
    """After an unrecorded write to ``self``: regenerate the grad-mode views of its root, or
    of the tensor it was detach()-ed from (the alias shares the version counter)."""
    root = self._base if self._base is not None else self
    if root.__dict__.get("_views"):
        refresh_views(root, None)
    elif "_alias_root" in self.__dict__:
        root = self._alias_root()
        if root is not None and root.__dict__.get("_views"):
            refresh_views(root, None)


def _target(self: Tensor, name: str) -> Any:
    """A writable alias of a read-only (expanded) buffer, or torch's error when elements of
    it share memory: torch checks that (``assert_no_internal_overlap``) for most in-place
    ops, not for fill_/zero_; an expand that only adds dimensions of size 1 shares none."""
    dst = self._array
    if dst.flags.writeable:
        return dst
    if name in ("fill_", "zero_", "masked_fill_") or not any(
            st == 0 and n > 1 for st, n in zip(dst.strides, dst.shape)):
        w = _writable(dst)
        if w is not None:
            return w
    raise RuntimeError(_ops_messages.write_to_expanded_tensor(name))


def _check_leaf(self: Tensor, name: str) -> None:
    if not _state.enabled:
        return
    mv = self._multi_view
    if mv is not None:
        if len(mv) == 3:  # (an output of a custom Function that is a view: autograd.function)
            raise RuntimeError(_messages.custom_view_inplace(name, mv[0], mv[1]))
        raise RuntimeError(_messages.multi_view_inplace(name, *mv))
    if self._grad_fn is None and self._requires_grad:
        if self._nograd_view_version is None:
            raise RuntimeError(_messages.leaf_inplace(name))
        if self.requires_grad:  # (torch: such a view requires grad while its base does)
            raise RuntimeError(_messages.nograd_view_inplace(name))
    base = self._base
    # torch: a view that requires grad, of a leaf (its base may have been detached in place
    # since the view was made)
    if base is not None and base._grad_fn is None and (
            base._requires_grad or self._grad_fn is not None):
        raise RuntimeError(_messages.view_of_leaf_inplace(name))

def _dense(a: Any) -> bool:
    """torch's ``is_non_overlapping_and_dense``: the elements tile one block of memory."""
    expect = a.itemsize
    for st, n in sorted((st, n) for n, st in zip(a.shape, a.strides) if n != 1):
        if st != expect:
            return False
        expect *= n
    return True

def _check_overlap(dst: Any, src: Any, name: str, full_too: bool = False) -> None:
    """torch's ``assert_no_partial_overlap`` (``full_too``: ``assert_no_overlap``, as
    index_put_'s) between the written array ``dst`` and an input ``src``: both dense (else
    torch finds it too hard and lets it pass), their memory ranges intersect, and they are not
    the very same elements with the same strides."""
    if (src is dst and not full_too) or (src is not dst and src.base is None
                                         and dst.base is None):  # (decided here: the
        return                                                   # common case)
    if not src.size or not dst.size or not (_dense(dst) and _dense(src)):
        return
    a0 = dst.__array_interface__["data"][0]
    b0 = src.__array_interface__["data"][0]
    a1, b1 = a0 + dst.nbytes, b0 + src.nbytes
    if not (a0 < b1 and b0 < a1):
        return
    if not full_too and a0 == b0 and a1 == b1 and dst.strides == src.strides:
        return
    raise RuntimeError(_ops_messages.write_overlaps_input(name))


def _recording(self: Tensor, *others: Any) -> bool:
    if not _state.enabled:
        return False
    if self.requires_grad:
        return True
    base = self._base
    if base is not None and base.requires_grad:
        return True
    return any(isinstance(o, Tensor) and o.requires_grad for o in others)


def _check_cast(self: Tensor, other: Any, name: str) -> None:
    if other.__class__ is Tensor and other._array.dtype == self._array.dtype:
        return  # (the common case: the same dtype casts)
    rt = D.result_type(self, other) if other is not None else self.dtype
    if not D.can_cast(rt, self.dtype):
        raise RuntimeError(_messages.cast_inplace(rt.name, self.dtype.name, name))


def _check_out_shape(dst_shape: tuple[int, ...], shape: tuple[int, ...], name: str) -> None:
    """An in-place result of ``shape`` must fit the tensor (broadcasting may not grow it)."""
    if shape != dst_shape:
        try:
            bshape = xp.broadcast_shapes(shape, dst_shape)
        except ValueError:
            bshape = shape
        if bshape != dst_shape:
            raise RuntimeError(_ops_messages.inplace_output_shape_mismatch(dst_shape, bshape, name))


def _write(self: Tensor, arr: Any, name: str) -> None:
    dst = self._array
    _check_out_shape(dst.shape, arr.shape, name)
    if not dst.flags.writeable:
        dst = _target(self, name)
        if name == "masked_fill_":  # (torch writes the masked elements only: with an
            old = dst.copy()          # expanded tensor, a shared element masked anywhere
            keep = (arr == old) | (xp.isnan(arr) & xp.isnan(old))  # takes the value)
            xp.copyto(dst, arr, casting="unsafe", where=~keep)
            _bump_unrecorded(self)
            return
    xp.copyto(dst, arr, casting="unsafe")
    _bump_unrecorded(self)


class CopySlices(Node):
    """An in-place op on a view, seen from the view's base (torch's node of that name).

    It wraps the op's own node ``fn``: its edges are the base's, then ``fn``'s other inputs
    (the written value, ...). The base's gradient is the incoming gradient with the view's
    region replaced by ``fn``'s gradient for its first input (zero for a copy or fill); the
    other inputs get ``fn``'s other gradients. ``fn``'s saved tensors are this node's
    (checked and released with it).
    """

    __slots__ = ("fn", "view_fn")

    def backward(self, g: Tensor) -> tuple[Tensor | None, ...]:
        fn = self.fn
        if fn is None:
            return (zero_view_region(g, self.view_fn),)
        res = fn.backward(self.view_fn(g))
        if res.__class__ is not tuple:
            res = (res,)
        gb = None
        if self.needs(0):
            gb = (zero_view_region(g, self.view_fn) if res[0] is None
                  else put_view_region(g, res[0], self.view_fn))
        return (gb, *res[1:])


def _view_region(out: Any, view_fn: Callable[[Tensor], Tensor]) -> Any:
    """The writable array of the region ``view_fn`` selects of the array ``out`` (taken with
    grad mode off; torch refuses an expanded view region, as copy_ does)."""
    prev = _state.enabled
    _state.enabled = False
    try:
        region = view_fn(_make(out))
    finally:
        _state.enabled = prev
    return _target(region, "copy_")


class PutViewRegionBackward0(Node):
    __slots__ = ("view_fn",)

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        return (zero_view_region(g, self.view_fn) if self.needs(0) else None,
                self.view_fn(g) if self.needs(1) else None)


def put_view_region(g: Tensor, r: Tensor, view_fn: Callable[[Tensor], Tensor]) -> Tensor:
    """A copy of ``g`` with the region selected by ``view_fn`` replaced by ``r``."""
    out = g._array.copy()
    _view_region(out, view_fn)[...] = r._array
    if not (_state.enabled and (g.requires_grad or r.requires_grad)):
        return _make(out)
    node = PutViewRegionBackward0()
    node.view_fn = view_fn
    return record(node, (g, r), out)


class ZeroViewRegionBackward0(Node):
    __slots__ = ("view_fn",)

    def backward(self, g: Tensor) -> Tensor:
        return zero_view_region(g, self.view_fn)  # a projection is its own adjoint


def zero_view_region(g: Tensor, view_fn: Callable[[Tensor], Tensor]) -> Tensor:
    """A copy of ``g`` with the region selected by ``view_fn`` set to zero."""
    out = g._array.copy()
    _view_region(out, view_fn)[...] = 0
    if not (_state.enabled and g.requires_grad):
        return _make(out)
    node = ZeroViewRegionBackward0()
    node.view_fn = view_fn
    return record(node, (g,), out)


#: names of the ``pure`` in-place ops whose recorded form was once seen to keep the old value
#: (a saved input, a composite): they copy it up front from then on (:func:`apply_inplace`)
_KEEPS_OLD: set[str] = set()
#: below this many elements the copy costs less than the checks that avoid it
_NO_COPY_MIN = 1 << 14
#: the slot names of a node class (its own and its bases', up to Node's)
_SLOTS: dict[type, tuple[str, ...]] = {}


def _shares(v: Any, buf: Any) -> bool:
    """Whether ``v`` (an array, a tensor, or a tuple or list of them) may alias ``buf``."""
    if isinstance(v, Tensor):
        v = v._array
    if isinstance(v, _ndarray):
        return bool(xp.may_share_memory(v, buf))
    if isinstance(v, (tuple, list)):
        return any(_shares(x, buf) for x in v)
    return False


def _reads_old_later(res: Tensor, old: Tensor, others: tuple[Any, ...]) -> bool:
    """Whether ``res = fn(old)``, computed with ``old`` aliasing the buffer about to be
    overwritten, can reach the old values after the write: its node is not one op on ``old``
    and the operands (an intermediate node behind it), or something the node keeps (a saved
    tensor, an array or tensor in a slot) shares memory with the buffer."""
    node = res._grad_fn
    buf = old._array
    if res is old or _shares(res._array, buf):
        return True
    if node is None:
        return False
    known = {id(old._grad_fn)}
    known.update(id(o._grad_fn) for o in others if isinstance(o, Tensor))
    for fn, _ in node._next:
        if fn is not None and id(fn) not in known and not isinstance(fn, AccumulateGrad):
            return True
    for s in node._saved:
        if s is not None and ((s._tensor is not None and _shares(s._tensor, buf))
                              or (s._array is not None and _shares(s._array, buf))):
            return True
    slots = _SLOTS.get(type(node))
    if slots is None:
        names: list[str] = []
        for klass in type(node).__mro__:
            if klass is Node:
                break
            names.extend(klass.__dict__.get("__slots__", ()))
        slots = _SLOTS[type(node)] = tuple(names)
    return any(_shares(getattr(node, slot, None), buf) for slot in slots)


def apply_inplace(self: Tensor, name: str, fn: Callable[[Tensor], Tensor], *others: Any,
                  pure: bool = False) -> Tensor:
    """Run the recorded form of an in-place op: ``self`` becomes ``fn(old self)``.

    The old value is a copy, so that rules that need the original see it (as torch saves
    original values). ``pure``: ``fn`` is deterministic and may run twice; it runs first on
    the buffer itself (no copy) and, when its result turns out to keep the old values
    (:func:`_reads_old_later`), again on a copy, which the op then takes up front from then on.
    """
    base = self._base
    through_view = base is not None and self._view_fn is not None
    if base is not None and self._view_fn is None:
        # (torch: a view made in no_grad mode, or an output of split/unbind of a tensor that
        # does not require grad, refuses a recorded write even when its base needs no grad)
        raise RuntimeError(_messages.nograd_view_inplace(name))
    base_edge = edge(base) if through_view else None
    arr = self._array
    old = None
    if pure and arr.size >= _NO_COPY_MIN and name not in _KEEPS_OLD and not hooks_state.stack:
        old = Tensor._make(arr, self._requires_grad, self._grad_fn, self._output_nr)
        res = fn(old)
        if _reads_old_later(res, old, others):
            _KEEPS_OLD.add(name)
            old = None
    if old is None:
        old = Tensor._make(arr.copy(), self._requires_grad, self._grad_fn, self._output_nr)
        res = fn(old)
    _write(self, res._array, name)
    node = res._grad_fn
    if node is not None:
        # Saved outputs of the new node now live in self's buffer (SEMANTICS 7: a later
        # in-place change of self must be detected).
        for s in node._saved:
            if s._is_output:
                s._array = self._array
                s._vc = self._vc
                s._version_at_save = self._vc[0]
    if through_view:
        assert base is not None and self._view_fn is not None
        cs = CopySlices()
        cs.view_fn = self._view_fn
        cs.fn = node
        if node is None:
            cs._next = (base_edge,)
        else:
            cs._next = (base_edge, *node._next[1:])
            cs._saved = node._saved  # (the same SavedTensor objects: one release frees both)
        set_history(base, cs, 0, True)
        prev = _state.enabled
        _state.enabled = True
        try:
            nv = self._view_fn(base)
        finally:
            _state.enabled = prev
        set_history(self, nv._grad_fn, nv._output_nr, True)
        if node is not None and nv._grad_fn is not None and any(
                s._is_output or getattr(s, "_out", False) for s in node._saved):
            # the op's saved outputs unpack with the view's new grad_fn (through CopySlices)
            node._saved = cs._saved = tuple(
                on_view(s, nv._grad_fn, nv._output_nr)
                if s._is_output or getattr(s, "_out", False) else s for s in node._saved)
    else:
        set_history(self, node, res._output_nr, True)
    refresh_views(base if through_view else self, self)
    return self


def refresh_views(root: Tensor, done: Tensor | None) -> None:
    """Note "Views after an in-place op": once an in-place op has given ``root`` (the base)
    a new history, every other view of it made in grad mode must read its values through
    that history too, or its gradient would skip the in-place op (``v = y[:2]; y.mul_(2);
    v.sum().backward()`` must see the factor 2). torch regenerates a view's ``grad_fn`` when
    the shared version counter has moved; gradsum does it here, eagerly, by replaying each
    live view's ``view_fn`` on the base, so reading a ``grad_fn`` costs nothing extra.
    ``done`` (the tensor just written) is already up to date."""
    views = root.__dict__.get("_views")
    if not views:
        return
    prev = _state.enabled
    _state.enabled = True
    try:
        for ref in list(views):
            v = ref()
            if v is None or v is done or v._view_fn is None or (
                    v._nograd_view_version is not None):  # (stale: see ops._core.guard_view)
                continue
            if v._array.size:
                nv = v._view_fn(root)
            else:
                # torch regenerates a view as AsStridedBackward0, whose backward gives an
                # empty view plain zeros (no graph under create_graph): as_strided here too
                nv = F.views.as_strided(root, v.shape, v.stride(), v.storage_offset())
            fn = nv._grad_fn
            if fn is None and v._grad_fn is not None:
                fn = _history_to_nowhere(v)
            set_history(v, fn, nv._output_nr)
    finally:
        _state.enabled = prev


def _history_to_nowhere(v: Tensor) -> Node | None:
    """The regenerated grad_fn of a view that had one, once its base requires grad no more
    (``detach_()`` since): torch still makes one, whose edge leads nowhere, so the view keeps
    requiring grad and ops on it are recorded (no gradient goes past it). Replayed here on a
    stand-in for the base that requires grad, then cut from it."""
    node = v._view_fn(Tensor._make(v._base._array, True))._grad_fn
    if node is not None:
        node._next = ((None, 0),) * len(node._next)
    return node


def _other_array(self: Tensor, other: Any) -> Any:
    if isinstance(other, Tensor):
        return other._array
    if hasattr(other, "shape") and not isinstance(other, xp.generic):
        return xp.asarray(other)
    return scalar_value(other)


def _binary_inplace(name: str, op: Callable[..., Tensor], ufunc: Any, **surface: Any
                    ) -> Callable[..., Tensor]:
    def method(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
        if isinstance(alpha, Tensor):
            alpha = alpha.item()  # (torch takes a one-element tensor as the number)
        _check_leaf(self, name)
        if name == "sub_":
            F.arithmetic._sub_check(self, other)  # (bool operands: torch's error)
        _check_cast(self, other, name)  # result_type ranks 0-d tensors below dimensioned ones
        if isinstance(other, Tensor):
            _check_overlap(self._array, other._array, name)
        if _recording(self, other):
            if alpha != 1:
                return apply_inplace(self, name, lambda old: op(old, other, alpha=alpha), other,
                                     pure=True)
            return apply_inplace(self, name, lambda old: op(old, other), other, pure=True)
        y = _other_array(self, other)
        # (a floating self: x + alpha * y in one rounding, below, as the out-of-place op)
        fused = alpha != 1 and self._array.dtype.kind in "fV" and not isinstance(alpha, bool)
        if alpha != 1:
            if y.__class__ is xp.ndarray and not (other.__class__ is Tensor
                                                  and y.dtype == self._array.dtype):
                # (alpha * other in the result dtype, as torch; the same dtype is that)
                rt = D.result_type(self, other).np
                y = y if y.dtype == rt else y.astype(rt)
            if not fused:
                y = y * alpha
        if y.__class__ is int and self._array.dtype.kind in "iu":
            y = F.arithmetic._wrap_int(y, self._array.dtype)  # (torch wraps: uint8 += 300)
        dst = self._array
        if not dst.flags.writeable:
            dst = _target(self, name)
        try:
            if name == "div_" and dst.dtype.kind not in "fV":
                raise RuntimeError(_messages.cast_inplace("float32", self.dtype.name, name))
            if fused:  # (torch's fused multiply-add, as the out-of-place op computes it)
                res = F.arithmetic._plus_scaled(dst, y, alpha if name == "add_" else -alpha)
                xp.copyto(dst, res, casting="unsafe")
            else:
                ufunc(dst, y, out=dst, casting="unsafe")
        except ValueError:
            shp = xp.shape(y)
            bshape = xp.broadcast_shapes(dst.shape, shp) if _bcast_ok(dst.shape, shp) else shp
            raise RuntimeError(
                _ops_messages.inplace_output_shape_mismatch(dst.shape, bshape, name)
            ) from None
        _bump_unrecorded(self)
        return self

    method.__name__ = name
    method.__doc__ = f"In-place ``{name[:-1]}``: writes into this tensor, bumps its version."
    return register(name, **surface)(method)


def _bcast_ok(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    try:
        xp.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


add_ = _binary_inplace("add_", add, xp.add, method=True)
sub_ = _binary_inplace("sub_", sub, xp.subtract, method=("sub_", "subtract_"))
mul_ = _binary_inplace("mul_", lambda a, b, alpha=1: F.mul(a, b), xp.multiply,
                       method=("mul_", "multiply_"))
div_ = _binary_inplace("div_", lambda a, b, alpha=1: F.div(a, b), xp.true_divide,
                       method=("div_", "divide_", "true_divide_"))


class ZeroBackward0(Node):
    """``zero_``: the old value is gone, its gradient is zero."""

    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        return F.zeros_like(g)


class FillBackward2(ZeroBackward0):
    """``fill_`` with a number."""

    __slots__ = ()


class FillBackward3(Node):
    """``fill_`` with a 0-d tensor: the value gets the sum of the gradient."""

    __slots__ = ()

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        return (F.zeros_like(g) if self.needs(0) else None,
                F.sum(g) if self.needs(1) else None)


def _filled(old: Tensor, value: Any, cls: type[Node]) -> Tensor:
    v = value._array if isinstance(value, Tensor) else value
    out = xp.full(old._array.shape, v, dtype=old._array.dtype)
    vt = value if isinstance(value, Tensor) else None
    if not (_state.enabled and (old.requires_grad or (vt is not None and vt.requires_grad))):
        return _make(out)
    return record(cls(), (old, vt) if cls is FillBackward3 else (old,), out)


@register("zero_", method=True)
def zero_(self: Tensor) -> Tensor:
    """Fill with zeros in place (the buffer and its identity survive)."""
    _check_leaf(self, "zero_")
    if _recording(self):
        return apply_inplace(self, "zero_", lambda old: _filled(old, 0, ZeroBackward0),
                             pure=True)
    return fill_(self, 0)


@register("fill_", method=True)
def fill_(self: Tensor, value: Any) -> Tensor:
    """Fill with ``value`` (a number or 0-d tensor) in place."""
    _check_leaf(self, "fill_")
    if isinstance(value, Tensor) and value._array.ndim != 0:
        raise RuntimeError(_ops_messages.fill_value_not_0d(value))
    if _recording(self, value):
        if isinstance(value, Tensor):
            return apply_inplace(self, "fill_", lambda old: _filled(old, value, FillBackward3),
                                 value, pure=True)
        return apply_inplace(self, "fill_", lambda old: _filled(old, value, FillBackward2),
                             pure=True)
    arr = self._array
    if not arr.flags.writeable:  # (an expanded tensor: torch fills it all the same)
        arr = _target(self, "fill_")
    v = value._array if isinstance(value, Tensor) else value
    arr[...] = v
    _bump_unrecorded(self)
    return self


class CopyBackwards(Node):
    __slots__ = ("src_dtype", "src_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        gs = F.zeros_like(g) if self.needs(0) else None
        gsrc = None
        if self.needs(1):
            gsrc = F.sum_to(g, self.src_shape)
            if gsrc.dtype is not self.src_dtype:
                gsrc = gsrc.to(self.src_dtype)
        return gs, gsrc


def _copy_from(old: Tensor, src: Tensor) -> Tensor:
    x = old._array
    out = xp.empty_like(x)
    try:
        xp.copyto(out, src._array, casting="unsafe")
    except ValueError:
        raise RuntimeError(_ops_messages.copy_size_mismatch(x, src)) from None
    if not (_state.enabled and (old.requires_grad or src.requires_grad)):
        return _make(out)
    node = CopyBackwards()
    node.src_shape, node.src_dtype = src._array.shape, src.dtype
    return record(node, (old, src), out)


@register("copy_", method=True)
def copy_(self: Tensor, src: Any) -> Tensor:
    """Copy ``src`` (broadcast, any dtype) into this tensor in place."""
    _check_leaf(self, "copy_")
    if not isinstance(src, Tensor):
        src = _make(xp.asarray(src))
    _check_overlap(self._array, src._array, "copy_")
    if _recording(self, src):
        return apply_inplace(self, "copy_", lambda old: _copy_from(old, src), src)
    if src is self or _same_data(self._array, src._array):  # (torch's copy_ returns early:
        _bump_unrecorded(self)                               # nothing written, expanded too)
        return self
    _write(self, xp.broadcast_to(src._array, self._array.shape)
           if _bcast_ok(src._array.shape, self._array.shape) else src._array, "copy_")
    return self


class IndexPutBackward0(Node):
    __slots__ = ("in_shape", "key", "value_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        gs = gv = None
        if self.needs(0):
            gs = zero_view_region(g, lambda t: F.getitem(t, self.key)) if _is_basic(
                self.key) else _zero_index(g, self.key)
        if self.needs(1):
            gv = F.sum_to(F.getitem(g, self.key), self.value_shape)
        return gs, gv


def _is_basic(key: tuple[Any, ...]) -> bool:
    return not any(isinstance(k, (xp.ndarray, bool)) for k in key)


def _zero_index(g: Tensor, key: tuple[Any, ...]) -> Tensor:
    mask = xp.zeros(g._array.shape, dtype=bool)
    arr, k = index_target(mask, key)
    _put(arr, k, True)
    return F.where(_make(mask), F.zeros_like(g), g)


@register("index_put")
def index_put(a: Tensor, key: Any, value: Any) -> Tensor:
    """Out-of-place ``a[key] = value`` (the recorded form of ``__setitem__``)."""
    k, _ = _convert_key(key)
    out = a._array.copy()
    v = value._array if isinstance(value, Tensor) else _other_array(a, value)
    arr, kk = index_target(out, k)
    try:
        _put(arr, kk, v)
    except ValueError as e:
        raise RuntimeError(
            _ops_messages.index_put_value_tensor_shape_mismatch(v, arr, kk, e)
        ) from None
    vt = value if isinstance(value, Tensor) else None
    if not (_state.enabled and (a.requires_grad or (vt is not None and vt.requires_grad))):
        return _make(out)
    node = IndexPutBackward0()
    node._saved = HOLDS_STATE  # (torch saves the indices)
    node.key, node.in_shape = k, out.shape
    node.value_shape = vt._array.shape if vt is not None else ()
    return record(node, (a, vt), out)


def _put(arr: Any, kk: tuple[Any, ...], v: Any) -> None:
    """``arr[kk] = v``; an out-of-range index naming no element (an empty region) writes
    nothing, as torch's kernel, which checks indices as it writes."""
    try:
        if _OOB_ONLY_WARNS:
            _strict_index(arr, kk, v, write=True)
        else:
            arr[kk] = v
    except IndexError:
        if _empty_result(arr, kk) is None:
            raise


def _is_noop_key(k: tuple[Any, ...], shape: tuple[int, ...]) -> bool:
    """Whether torch's slicing step returns the tensor itself for basic key ``k`` (only
    Ellipsis and slices it skips: start 0, step 1, stop at least the size)."""
    dim = 0
    consumed = sum(1 for kk in k if kk is not Ellipsis)
    for kk in k:
        if kk is Ellipsis:
            dim = len(shape) - (consumed - dim)
        elif (not isinstance(kk, slice) or dim >= len(shape) or kk.start not in (None, 0)
              or kk.step not in (None, 1) or (kk.stop is not None and kk.stop < shape[dim])):
            return False
        else:
            dim += 1
    return True


def setitem_(self: Tensor, key: Any, value: Any) -> None:
    """``self[key] = value``, recorded when ``self`` or ``value`` requires grad.

    As torch: the basic part of the key (ints, slices, None) makes a view, unless it does
    nothing; the tensors of an advanced key then ``index_put`` into it, and a basic key
    copies (or, for a 0-d value, fills) it. A write through a view turns the base's grad_fn
    into CopySlices.
    """
    # (a leaf that requires grad is refused only once the tensor written into is known: a
    # view of it, or the leaf itself, as torch's two messages tell apart)
    if _recording(self, value):
        k, advanced = _convert_key(key, self._array.shape)
        if advanced:
            k = expand_ellipsis(k, self._array.ndim)
            basic, rest = split_key(k, always=True)  # type: ignore[misc]
            if not _is_noop_key(basic, self._array.shape):
                setitem_(F.getitem(self, basic), rest, value)
                return
            _check_leaf(self, "__setitem__")
            _check_index_put_overlap(self._array, k, value)
            apply_inplace(self, "__setitem__", lambda old: index_put(old, k, value), value)
            return
        dst = self if _is_noop_key(k, self._array.shape) else F.getitem(self, key)
        _check_leaf(dst, "__setitem__")
        if not isinstance(value, Tensor):
            value = _make(xp.asarray(value, dtype=self._array.dtype))
        if value._array.ndim == 0 and dst._array.ndim != 0:
            fill_(dst, value)
        else:
            copy_(dst, value)
        return
    k, advanced = _convert_key(key, self._array.shape)
    v = value._array if isinstance(value, Tensor) else value
    x = self._array
    if advanced:
        ek = expand_ellipsis(k, x.ndim)
        basic, _ = split_key(ek, always=True)  # type: ignore[misc]
        _check_index_put_overlap(x if _is_noop_key(basic, x.shape) else x[basic], ek, value)
    elif isinstance(value, Tensor):
        dst = x[k] if Ellipsis in k else x[(*k, Ellipsis)]  # (a 0-d view for ints)
        if dst.shape == v.shape:  # (torch: copy_; a 0-d value fills, a smaller one broadcasts)
            _check_overlap(dst, v, "copy_")
    if not x.flags.writeable:  # (an expanded tensor: torch checks the written elements)
        if not advanced:
            dst = x[k]
            if isinstance(dst, xp.ndarray) and any(
                    st == 0 and n > 1 for st, n in zip(dst.strides, dst.shape)):
                if isinstance(value, Tensor) and _same_data(dst, v):
                    _bump_unrecorded(self)  # (torch: a copy_ of the same elements returns early)
                    return
                _write(self, x, "__setitem__")
        x = _writable(x)
        if x is None:
            _write(self, self._array, "__setitem__")
    arr, kk = index_target(x, k)
    try:
        _put(arr, kk, v)
    except ValueError as e:
        raise RuntimeError(_ops_messages.setitem_value_shape_mismatch(v, arr, kk, e)) from None
    _bump_unrecorded(self)


def _check_index_put_overlap(target: Any, k: tuple[Any, ...], value: Any) -> None:
    """torch's index_put_ refuses a value tensor sharing memory with the tensor written
    (after the basic part of the key), unless it becomes a masked_fill (one mask, a one-element
    value: torch drops its leading 1-dims first)."""
    if not isinstance(value, Tensor):
        return
    v = value._array
    if v.size == 1 and sum(1 for kk in k if isinstance(kk, xp.ndarray)) == 1 and any(
            isinstance(kk, xp.ndarray) and kk.dtype.kind == "b" for kk in k):
        return
    _check_overlap(target, v, "index_put_", full_too=True)


def _same_data(a: Any, b: Any) -> bool:
    """torch's early exit of copy_: the same memory, strides, shape and dtype."""
    return (a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype
            and a.__array_interface__["data"][0] == b.__array_interface__["data"][0])


def _writable(a: Any) -> Any:
    """A writable alias of array ``a`` (an expanded view NumPy made read-only), or None."""
    b = a
    while not b.flags.writeable:
        b = b.base
        if not isinstance(b, xp.ndarray):
            return None
    if not b.flags.c_contiguous:
        return None
    off = a.__array_interface__["data"][0] - b.__array_interface__["data"][0]
    return xp.ndarray(a.shape, a.dtype, buffer=b, offset=off, strides=a.strides)


def _op_inplace(name: str, op: Callable[..., Tensor], registered: bool = True,
                check_cast: bool = False, elementwise: bool = False, **surface: Any
                ) -> Callable[..., Tensor]:
    """``t.<op>_(...)``: the out-of-place ``op`` written back into ``t`` (recorded like every
    in-place op: the tensor's grad_fn becomes the op's node). A result that ``t``'s dtype
    cannot hold (``int_tensor.sqrt_()``) raises before anything is written. ``registered``:
    list it in ``OPS`` (False for a Tensor method whose out-of-place op is a composite).
    ``check_cast``: the op's result dtype is the operands' promoted dtype, checked against
    ``t``'s before the op runs (torch's order for the binary in-place ops). ``elementwise``:
    the first argument broadcasts against ``t``, and the output shape is checked first.
    ``surface``: a registered twin's Tensor methods and operators (see :func:`register`)."""

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        _check_leaf(self, name)
        if elementwise and args and isinstance(args[0], Tensor):  # (torch's order)
            _check_out_shape(self._array.shape, args[0]._array.shape, name)
        if check_cast and args:
            _check_cast(self, args[0], name)

        def fn(old: Tensor) -> Tensor:
            res = op(old, *args, **kwargs)
            if not D.can_cast(res.dtype, self.dtype):
                raise RuntimeError(_messages.cast_inplace(res.dtype.name, self.dtype.name, name))
            return res

        others = (*args, *kwargs.values())
        if _recording(self, *others):
            return apply_inplace(self, name, fn, *others, pure=True)
        _write(self, fn(self.detach())._array, name)
        return self

    method.__name__ = name
    method.__doc__ = f"In-place ``{name[:-1]}``: writes into this tensor, bumps its version."
    method.__wrapped__ = op  # type: ignore[attr-defined]  # (its signature: the op's)
    return register(name, **surface)(method) if registered else method


# the one-input ops' twins ``<op>_``, each the Tensor method of its name (abs_ and neg_ also
# under torch's long names)
_LONG_NAMES = {abs: ("abs_", "absolute_"), neg: ("neg_", "negative_")}
(relu_, exp_, log_, log1p_, sqrt_, rsqrt_, abs_, neg_, sin_, cos_, tanh_, sigmoid_, sign_,
 floor_, ceil_, round_, trunc_, reciprocal_, erf_) = (
    _op_inplace(f"{op.__name__}_", op, method=_LONG_NAMES.get(op, True))
    for op in (relu, exp, log, log1p, sqrt, rsqrt, abs, neg, sin, cos, tanh, sigmoid, sign,
               floor, ceil, round, trunc, reciprocal, erf))
pow_ = _op_inplace("pow_", pow, elementwise=True, method=True, dunders="__ipow__")
clamp_ = _op_inplace("clamp_", clamp, method=("clamp_", "clip_"))
register("clip_")(clamp_)  # (torch's alias, an op of its own name)


# -- in-place metadata changes: t_ transpose_ unsqueeze_ squeeze_ ------------------------------
# torch changes the sizes and strides of the tensor itself (the values and the buffer stay),
# bumps the version counter shared with its views and, when recording, gives the tensor a new
# grad_fn of the view op (named ``...Backward1`` and up, as torch's in-place overloads).
class TBackward1(TBackward0):
    __slots__ = ()


class TransposeBackward1(TransposeBackward0):
    __slots__ = ()


class UnsqueezeBackward1(UnsqueezeBackward0):
    __slots__ = ()


class SqueezeBackward3(SqueezeBackward0):
    """``squeeze_()`` (all dimensions)."""

    __slots__ = ()


class SqueezeBackward4(SqueezeBackward0):
    """``squeeze_(dim)``."""

    __slots__ = ()


class SqueezeBackward5(SqueezeBackward0):
    """``squeeze_(dims)``."""

    __slots__ = ()


def _restride(self: Tensor, name: str, fwd: Callable[[Tensor], Tensor],
              inv: Callable[[Tensor], Tensor], make: Callable[[Tensor], Tensor]) -> Tensor:
    """Give ``self`` the layout of the view ``fwd(self)`` in place. ``make(old)`` is the
    recorded view op (with torch's node); ``inv`` undoes ``fwd``. Views remember how to
    rebuild themselves from their root (note "Views after an in-place op"): a view's recipe
    gains ``fwd``, and the recipes of the root's other views gain ``inv`` first."""
    _check_leaf(self, name)
    if not _state.enabled:  # (torch keeps the grad_fn: only the metadata changes)
        arr = fwd(Tensor._make(self._array))._array
        if arr.shape != self._array.shape:
            _remember_shape(self)
        self._array = arr
        _bump(self._vc)
        return self
    old = Tensor._make(self._array, self._requires_grad, self._grad_fn, self._output_nr)
    res = make(old)
    self._array = res._array
    _bump(self._vc)
    if res._grad_fn is not None:
        set_history(self, res._grad_fn, res._output_nr, True)
    prev = self._view_fn
    if self._base is not None and prev is not None:
        self._view_fn = lambda r, _p=prev: fwd(_p(r))
    for ref in self.__dict__.get("_views") or ():
        v = ref()
        if v is not None and v._view_fn is not None:
            v._view_fn = lambda r, _f=v._view_fn: _f(inv(r))
    if res._grad_fn is None:  # (nothing recorded: as _bump_unrecorded)
        _refresh_root_views(self)
    return self


def _remember_shape(t: Tensor) -> None:
    """Before ``t`` changes shape in place under no_grad: the node that made it (or its leaf
    sink, if made already) keeps the shape it knew, so that the engine checks a gradient of
    the new shape against it (``_NodeHooks.shapes``: torch's input metadata)."""
    node, nr = t._grad_fn, t._output_nr
    if node is None:
        ref = t._acc_ref if t._requires_grad else None
        node = ref() if ref is not None else None
        if node is None:
            return
    node._get_hooks().shapes.setdefault(nr, t._array.shape)


@tensor_method("t_")
def t_(self: Tensor) -> Tensor:
    """In-place :meth:`t`: this tensor becomes its transpose (same buffer, version bumped).

    Example:
        >>> import gradsum
        >>> x = gradsum.tensor([[1, 2, 3]])
        >>> x.t_().shape, x._version
        ((3, 1), 1)
    """
    nd = self._array.ndim
    if nd > 2:
        raise RuntimeError(_ops_messages.t_too_many_dims(nd, self))
    dims = F.views._REVERSED[nd]
    return _restride(self, "t_", F.t, F.t,
                     lambda old: F.views._permute(old, dims, TBackward1, True))


@tensor_method("transpose_", "swapaxes_", "swapdims_")
def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """In-place :meth:`transpose` of ``dim0`` and ``dim1`` (same buffer, version bumped).

    Example:
        >>> import gradsum
        >>> gradsum.zeros(2, 3, 4).transpose_(0, 2).shape
        (4, 3, 2)
    """
    nd = self._array.ndim
    d0, d1 = F._core.wrap_dim(dim0, nd), F._core.wrap_dim(dim1, nd)
    dims = list(range(nd))
    if nd:
        dims[d0], dims[d1] = dims[d1], dims[d0]
    perm = tuple(dims)

    def swap(r: Tensor) -> Tensor:
        return F.transpose(r, d0, d1)

    return _restride(self, "transpose_", swap, swap,
                     lambda old: F.views._permute(old, perm, TransposeBackward1, True))


@tensor_method("unsqueeze_")
def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    """In-place :meth:`unsqueeze`: a dimension of size 1 is inserted at ``dim``.

    Example:
        >>> import gradsum
        >>> gradsum.zeros(2, 3).unsqueeze_(-1).shape
        (2, 3, 1)
    """
    shp = self._array.shape
    d = F._core.wrap_dim(dim, len(shp) + 1)
    new = shp[:d] + (1,) + shp[d:]
    return _restride(self, "unsqueeze_", lambda r: F.unsqueeze(r, d),
                     lambda r: F.squeeze(r, d),
                     lambda old: F.views._reshape(old, new, UnsqueezeBackward1, True))


@tensor_method("squeeze_")
def squeeze_(self: Tensor, dim: Any = None) -> Tensor:
    """In-place :meth:`squeeze`: dimensions of size 1 (all, or those in ``dim``) are removed.

    Example:
        >>> import gradsum
        >>> gradsum.zeros(2, 1, 1).squeeze_(1).shape
        (2, 1)
    """
    shp = self._array.shape
    dims = F._core.wrap_dims(dim, len(shp)) if shp else (
        () if dim is None else F._core.wrap_dims(dim, 1))
    new = tuple(s for i, s in enumerate(shp) if not (i in dims and s == 1))
    cls = (SqueezeBackward3 if dim is None else
           SqueezeBackward4 if isinstance(dim, (int, xp.integer)) else SqueezeBackward5)
    return _restride(self, "squeeze_", lambda r: F.reshape(r, new),
                     lambda r: F.reshape(r, shp),
                     lambda old: F.views._reshape(old, new, cls, True))


# -- in-place forms -------------------------------------------------------------------------------
class _CmpBackward(Node):
    """An in-place comparison (``eq_``, ...): torch records it with a zero gradient."""

    __slots__ = ("shapes",)

    def backward(self, g: Tensor) -> tuple[Tensor | None, ...]:
        return tuple(F.zeros(s, dtype=g.dtype) if self.needs(i) else None
                     for i, s in enumerate(self.shapes))


def _cmp_nodes(name: str) -> tuple[type[Node], type[Node]]:
    """The node classes ``<name>Backward0`` (a scalar operand) and ``<name>Backward1``."""

    class Scalar(_CmpBackward, name=f"{name}Backward0"):
        __slots__ = ()

    class Other(_CmpBackward, name=f"{name}Backward1"):
        __slots__ = ()

    return Scalar, Other


_CMP_NODES: dict[str, tuple[type[Node], type[Node]]] = {
    name: _cmp_nodes(name) for name in ("Eq", "Ne", "Lt", "Le", "Gt", "Ge")
}


def _cmp_inplace(name: str, op: Callable[..., Tensor], node: str) -> Callable[..., Tensor]:
    """``t.eq_(other)`` and its kin: ``t`` holds the comparison's result in its own dtype;
    recorded (a zero gradient) when ``t`` or ``other`` requires grad."""
    scalar_node, tensor_node = _CMP_NODES[node]

    def method(self: Tensor, other: Any) -> Tensor:
        _check_leaf(self, name)
        if isinstance(other, Tensor):
            _check_out_shape(self._array.shape, other._array.shape, name)

        def fn(old: Tensor) -> Tensor:
            out = op(old, other)._array.astype(self._array.dtype)
            if not needs_grad(old, other):
                return _make(out)
            if isinstance(other, Tensor):
                n: Node = tensor_node()
                n.shapes = (old._array.shape, other._array.shape)
                return record(n, (old, other), out)
            n = scalar_node()
            n.shapes = (old._array.shape,)
            return record(n, (old,), out)

        if _recording(self, other):
            return apply_inplace(self, name, fn, other)
        _write(self, fn(self.detach())._array, name)
        return self

    method.__name__ = name
    method.__doc__ = f"In-place ``{name[:-1]}``: the result (0/1) in this tensor's dtype."
    return method


def _untracked_inplace(name: str, op: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """An in-place op torch gives no derivative: written and versioned, history kept (torch
    lets it run on a leaf that requires grad too)."""

    def method(self: Tensor, *args: Any) -> Tensor:
        res = op(self, *args)._array
        _check_out_shape(self._array.shape, res.shape, name)
        if not D.can_cast(D.from_numpy_dtype(res.dtype), self.dtype):
            from gradsum.autograd import _messages

            raise RuntimeError(_messages.cast_inplace(torch_name(res.dtype), self.dtype.name, name))
        _write(self, res, name)
        return self

    method.__name__ = name
    method.__doc__ = f"In-place ``{name[:-1]}``: writes into this tensor, bumps its version."
    return method


def _no_grad_check(self: Tensor, name: str) -> None:
    if self.requires_grad:
        raise RuntimeError(_ops_messages.call_on_variable_requiring_grad(name))


@tensor_method("apply_")
def apply_(self: Tensor, callable: Callable[[Any], Any]) -> Tensor:
    """Replace each element by ``callable(element)``, in place (slow: one Python call per
    element; refused on a tensor that requires grad).

    Example:
        >>> import gradsum
        >>> gradsum.tensor([1, 2]).apply_(lambda v: v * 10).tolist()
        [10, 20]
    """
    _no_grad_check(self, "apply_")
    x = self._array
    flat = [callable(v) for v in x.reshape(-1).tolist()]
    x[...] = xp.asarray(flat, dtype=x.dtype).reshape(x.shape) if flat else x
    return self


@tensor_method("map_")
def map_(self: Tensor, tensor: Tensor, callable: Callable[[Any, Any], Any]) -> Tensor:
    """Replace each element ``a`` by ``callable(a, b)``, ``b`` from ``tensor`` (broadcast to
    this tensor's shape), in place.

    Example:
        >>> import gradsum
        >>> gradsum.tensor([1, 2]).map_(gradsum.tensor([3, 4]), lambda a, b: a * b).tolist()
        [3, 8]
    """
    _no_grad_check(self, "map_")
    x = self._array
    try:
        y = xp.broadcast_to(tensor._array, x.shape)
    except ValueError:
        raise broadcast_error(x, tensor._array) from None
    flat = [callable(a, b) for a, b in zip(x.reshape(-1).tolist(), y.reshape(-1).tolist())]
    x[...] = xp.asarray(flat, dtype=x.dtype).reshape(x.shape) if flat else x
    return self


@tensor_method("resize_")
def resize_(self: Tensor, *sizes: Any) -> Tensor:
    """Give this tensor the shape ``sizes`` in place: the first elements (in memory order)
    are kept, new ones are zero (torch's are uninitialised); refused when it requires grad.

    Example:
        >>> import gradsum
        >>> gradsum.arange(6).resize_(2, 2).tolist()
        [[0, 1], [2, 3]]
    """
    if len(sizes) == 1 and not isinstance(sizes[0], int):
        sizes = tuple(sizes[0])
    shape = tuple(int(s) for s in sizes)
    if self.requires_grad:
        raise RuntimeError(_ops_messages.resize_requires_grad())
    for s in shape:
        if s < 0:
            raise RuntimeError(_ops_messages.resize_negative_dimension(s, shape))
    x = self._array
    if shape == x.shape:
        return self
    n = math.prod(shape)
    flat = x.reshape(-1) if x.flags.c_contiguous else xp.ascontiguousarray(x).reshape(-1)
    if n <= flat.size and x.flags.c_contiguous:
        self._array = flat[:n].reshape(shape)  # (same memory: views of it still alias it)
    else:
        new = xp.zeros(n, dtype=x.dtype)
        k = min(n, flat.size)
        new[:k] = flat[:k]
        self._array = new.reshape(shape)
    self._vc[0] += 1
    return self


@tensor_method("resize_as_")
def resize_as_(self: Tensor, the_template: Tensor) -> Tensor:
    """:meth:`resize_` to ``the_template``'s shape.

    Example:
        >>> import gradsum
        >>> gradsum.zeros(4).resize_as_(gradsum.zeros(2, 2)).shape
        (2, 2)
    """
    return resize_(self, the_template._array.shape)


# -- masked_fill_ and fill_diagonal_ (bound as Tensor methods in gradsum.ops) ----------------------
@register("masked_fill_", method=True)
def masked_fill_(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    """In-place :func:`masked_fill`."""
    from gradsum.ops import inplace

    inplace._check_leaf(self, "masked_fill_")
    if inplace._recording(self, value):
        return inplace.apply_inplace(
            self, "masked_fill_", lambda old: F.masked_fill(old, mask, value), value
        )
    res = F.masked_fill(self.detach(), mask, value)
    inplace._write(self, res._array, "masked_fill_")
    return self

@tensor_method("fill_diagonal_")
def fill_diagonal_(a: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """Fill the main diagonal in place (of a matrix, or of a tensor with equal sizes); with
    ``wrap``, a tall matrix's diagonal restarts after each ``N + 1`` rows, as torch's.

    Example:
        >>> import gradsum
        >>> gradsum.zeros(2, 3).fill_diagonal_(5).tolist()
        [[5.0, 0.0, 0.0], [0.0, 5.0, 0.0]]
    """
    if isinstance(fill_value, Tensor):
        if fill_value._array.ndim != 0 or fill_value.requires_grad:
            raise TypeError(_ops_messages.fill_diagonal_value_is_tensor())
        fill_value = fill_value.item()
    shp = a._array.shape
    if len(shp) < 2:
        raise RuntimeError(_ops_messages.fill_diagonal_too_few_dims(shp))
    if len(shp) > 2 and len(set(shp)) != 1:
        raise RuntimeError(_ops_messages.fill_diagonal_unequal_dims(shp))
    mask = xp.zeros(shp, dtype=bool)
    xp.fill_diagonal(mask, True, wrap=wrap)
    masked_fill_(a, Tensor._make(mask), fill_value)
    if wrap and len(shp) == 2 and shp[0] > shp[1] + 1:
        a._vc[0] += 1  # (torch fills the wrapped part in a second write)
    return a


def _no_overlap(name: str, method: Callable[..., Tensor], pos: int, kw: str
                ) -> Callable[..., Tensor]:
    """``method`` after torch's ``assert_no_overlap`` between the tensor written and the
    source operand (argument ``pos``, or keyword ``kw``): any shared element raises."""

    def wrapped(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        _check_leaf(self, name)  # (torch's order: the leaf check comes first)
        src = kwargs.get(kw, args[pos] if len(args) > pos else None)
        if isinstance(src, Tensor):
            _check_overlap(self._array, src._array, name, full_too=True)
        return method(self, *args, **kwargs)

    wrapped.__name__ = name
    wrapped.__doc__ = method.__doc__
    wrapped.__wrapped__ = method  # type: ignore[attr-defined]  # (its signature: the op's)
    return wrapped
