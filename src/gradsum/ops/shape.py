"""Shape and indexing ops: views, broadcasting, gathering and scattering.

Pairs of ops are each other's backward: ``expand``/``sum_to``, ``getitem``/``index_grad``,
``gather``/``scatter_add``, ``index_select``/``index_add``. Views (reshape when possible,
slicing, transpose, permute, squeeze, unsqueeze, expand) share their base's buffer and version
counter, so an in-place change through either is seen by saved-tensor checks.

Example:
    >>> import gradsum
    >>> x = gradsum.arange(6.0).requires_grad_()
    >>> y = x[gradsum.tensor([0, 0, 5])]       # repeated indices: their gradients add
    >>> y.sum().backward()
    >>> x.grad.tolist()
    [2.0, 0.0, 0.0, 0.0, 0.0, 1.0]
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import gradsum.ops as F
from gradsum import _dtype as D
from gradsum import _memory_format
from gradsum._backend import bincount as _bincount
from gradsum._backend import copy_c, xp
from gradsum._backend import dot as _xp_dot  # (2-D products: less dispatch than matmul)
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import _state
from gradsum.autograd.graph import HOLDS_STATE, Node
from gradsum.ops._core import (
    _make,
    broadcast_view,
    const,
    guard_view,
    index_range,
    mark_view,
    needs_grad,
    record,
    register,
    wrap_dim,
    wrap_dims,
)
from gradsum.ops.reduction import add_reduce

_max_reduce = xp.maximum.reduce
_min_reduce = xp.minimum.reduce


def _sizes(args: Sequence[Any]) -> tuple[int, ...]:
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    return tuple(map(int, args))


# -- sum_to / expand ---------------------------------------------------------------------------
class SumToBackward0(Node):
    __slots__ = ("in_shape",)

    def backward(self, g: Tensor) -> Tensor:
        return F.expand(g, self.in_shape)


_ONES: dict[tuple[int, Any], Any] = {}


def _sum_leading(x: Any, lead: int) -> Any:
    """``x.sum(axis=range(lead))``. For a C-contiguous float array it is the vector-matrix
    product ``ones @ x`` (BLAS), which on the column sums of a bias gradient is 2-3 times
    faster than NumPy's reduction across rows (the summation order differs: the result may
    differ in the last bit, as between any two libraries)."""
    rows = 1
    for s in x.shape[:lead]:
        rows *= s
    if rows < 2 or x.dtype.char not in "fd" or not x.flags.c_contiguous or x.size == 0:
        out = x.sum(axis=tuple(range(lead)))
        return out if out.__class__ is xp.ndarray else xp.asarray(out)
    ones = _ONES.get((rows, x.dtype.char))
    if ones is None:
        if len(_ONES) >= 64:
            _ONES.clear()
        ones = _ONES[(rows, x.dtype.char)] = xp.ones(rows, dtype=x.dtype)
        ones.flags.writeable = False
    tail = x.shape[lead:]
    out = xp.matmul(ones, x.reshape(rows, -1))
    return out.reshape(tail) if len(tail) != 1 else out


def _prod(shape: Sequence[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def sum_to(a: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Sum ``a`` down to ``shape`` (the reverse of broadcasting): the one unbroadcast helper."""
    x = a._array
    xs = x.shape
    if xs == shape or xs == tuple(shape):
        return a
    lead = x.ndim - len(shape)
    if lead > 0 and xs[lead:] == tuple(shape):  # only leading dimensions to sum (a bias)
        # (the bias gradient of a 2-D activation: _sum_leading's product, inlined)
        ones = _ONES.get((xs[0], x.dtype.char)) if lead == 1 and x.ndim == 2 else None
        if ones is not None and x.flags.c_contiguous:
            out = _xp_dot(ones, x)
        else:
            out = _sum_leading(x, lead)
        if not _state.enabled or (a._grad_fn is None and not a._requires_grad):
            return _make(out)  # (needs_grad(a), inlined: every bias gradient comes here)
        node = SumToBackward0()
        node.in_shape = xs
        return record(node, (a,), out)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and x.shape[i + lead] != 1
    )
    out = add_reduce(x, axes, True) if axes else x
    if lead > 0:
        out = out.reshape(-1) if out.size != _prod(shape) else out.reshape(shape)
    if out.shape != tuple(shape):  # (torch's engine refuses a gradient that shape cannot
        raise RuntimeError(        # be broadcast to, e.g. after an unsqueeze_ in no_grad mode)
            f"Function returned an invalid gradient - got {list(xs)} but expected shape "
            f"compatible with {list(shape)}: the gradient must be {list(shape)} or "
            "broadcast from it."
        )
    if not needs_grad(a):
        return _make(out)
    node = SumToBackward0()
    node.in_shape = x.shape
    return record(node, (a,), out)


class ExpandBackward0(Node):
    __slots__ = ("in_shape",)

    def backward(self, g: Tensor) -> Tensor:
        return F.sum_to(g, self.in_shape)


@register("expand", "broadcast_to")
def expand(a: Tensor, *sizes: Any) -> Tensor:
    """A broadcast view of ``a`` with ``sizes`` (-1 keeps a dimension). Read-only, like torch's
    expanded tensors that refuse in-place writes."""
    shape = _sizes(sizes)
    x = a._array
    lead = len(shape) - x.ndim
    if lead < 0:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(shape)}) must be greater or equal to "
            f"the number of dimensions in the tensor ({x.ndim})"
        )
    if -1 in shape[:lead]:
        raise RuntimeError(
            f"The expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
            f"dimension {shape.index(-1)}: cannot expand shape {tuple(x.shape)} to {shape}. "
            "Give the size of each new leading dimension."
        )
    target = shape if -1 not in shape else tuple(
        (x.shape[i - lead] if s == -1 else s) for i, s in enumerate(shape)
    )
    try:
        # (to its own shape: a plain view, writable like torch's, still a new tensor)
        out = x.view() if target == x.shape else broadcast_view(x, target)
    except ValueError:
        raise RuntimeError(
            f"The expanded size of the tensor must match the existing size at non-singleton "
            f"dimensions: cannot expand shape {tuple(x.shape)} to {target}."
        ) from None
    if not needs_grad(a):
        return mark_view(_make(out), a, (lambda b: expand(b, target)) if _state.enabled else None)
    node = ExpandBackward0()
    node.in_shape = x.shape
    return mark_view(record(node, (a,), out), a, lambda b: expand(b, target))


def expand_as(a: Tensor, other: Tensor) -> Tensor:
    return expand(a, other.shape)


# -- reshape family ----------------------------------------------------------------------------
class ViewBackward0(Node):
    __slots__ = ("in_shape",)

    def backward(self, g: Tensor) -> Tensor:
        return F.reshape(g, self.in_shape)


class UnsafeViewBackward0(ViewBackward0):
    __slots__ = ()


class ReshapeAliasBackward0(ViewBackward0):
    """A reshape of a non-contiguous tensor that is still a view (torch's ``_reshape_alias``)."""

    __slots__ = ()


class SqueezeBackward0(ViewBackward0):
    """``squeeze()`` (torch: ``squeeze(dim)`` is ``SqueezeBackward1``, a tuple of dims
    ``SqueezeBackward2``: the same rule)."""

    __slots__ = ()


class SqueezeBackward1(SqueezeBackward0):
    __slots__ = ()


class SqueezeBackward2(SqueezeBackward0):
    __slots__ = ()


class UnsqueezeBackward0(ViewBackward0):
    __slots__ = ()


def _infer_shape(shape: tuple[int, ...], numel: int) -> tuple[int, ...]:
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _reshape(a: Tensor, shape: tuple[int, ...], cls: type[ViewBackward0], must_view: bool
             ) -> Tensor:
    x = a._array
    if shape and min(shape) < 0:
        shape = _infer_shape(shape, x.size)
    try:
        out = x.reshape(shape)
    except ValueError:
        shape = _infer_shape(shape, x.size)  # raises torch's message for a bad shape
        raise RuntimeError(
            f"view size is not compatible with input tensor's size and stride (at least "
            f"one dimension spans across two contiguous subspaces): input shape "
            f"{tuple(x.shape)}, requested {shape}. Use .reshape(...) instead."
        ) from None
    # (an empty array shares no memory, but numpy still returns a view of it; a reshape
    # that had to copy returns a fresh array whose bounds do not overlap x's; a view's base
    # is x or x's own base, the quick test)
    b = out.base
    is_view = b is not None and (b is x or b is x.base or x.size == 0
                                 or xp.may_share_memory(out, x))
    if must_view and not is_view:
        raise RuntimeError(
            f"view size is not compatible with input tensor's size and stride (at least "
            f"one dimension spans across two contiguous subspaces): input shape "
            f"{tuple(x.shape)}, requested {tuple(out.shape)}. Use .reshape(...) instead."
        )
    shape = out.shape
    if not needs_grad(a):
        t = _make(out)
        if not is_view:
            return t
        return mark_view(t, a, (lambda b: reshape(b, shape)) if _state.enabled else None)
    if not is_view:
        # torch's reshape that must copy is ``_unsafe_view(clone(a))``: two nodes, the clone
        # (of a's shape, here a view of the copy just made) under an UnsafeViewBackward0
        c = record(F.elementwise.CloneBackward0(), (a,), out.reshape(x.shape))
        node: ViewBackward0 = UnsafeViewBackward0()
        node.in_shape = x.shape
        return record(node, (c,), out)
    # (torch: a reshape of a non-contiguous tensor that can still be a view is
    # ``_reshape_alias``; ``view`` and a contiguous input are ``ViewBackward0``)
    node = (ReshapeAliasBackward0() if cls is ViewBackward0 and not must_view
            and not x.flags.c_contiguous else cls())
    node.in_shape = x.shape
    t = record(node, (a,), out)
    return mark_view(t, a, lambda b: reshape(b, shape))


@register("reshape")
def reshape(a: Tensor, *shape: Any) -> Tensor:
    """Same elements in a new shape; a view when the layout allows, else a copy."""
    return _reshape(a, _sizes(shape), ViewBackward0, False)


@register("view")
def view(a: Tensor, *shape: Any) -> Tensor:
    """A view with a new shape; raises when the layout needs a copy (use reshape)."""
    if len(shape) == 1 and isinstance(shape[0], D.dtype):
        raise RuntimeError("view(dtype) is not supported by gradsum; use .to(dtype)")
    return _reshape(a, _sizes(shape), ViewBackward0, True)


def view_as(a: Tensor, other: Tensor) -> Tensor:
    return view(a, other.shape)


def reshape_as(a: Tensor, other: Tensor) -> Tensor:
    return reshape(a, other.shape)


@register("flatten")
def flatten(a: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dimensions ``start_dim..end_dim`` into one."""
    nd = a._array.ndim
    if nd == 0:  # (dims are checked as for a 1-d tensor, like torch)
        wrap_dim(start_dim, 0)
        wrap_dim(end_dim, 0)
        return reshape(a, (1,))
    s, e = wrap_dim(start_dim, nd), wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shp = a._array.shape
    n = 1
    for d in shp[s : e + 1]:
        n *= d
    return reshape(a, shp[:s] + (n,) + shp[e + 1 :])


@register("unflatten")
def unflatten(a: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    d = wrap_dim(dim, a._array.ndim)
    shp = a._array.shape
    sizes = tuple(int(s) for s in sizes)
    n = shp[d] if shp else 1
    # torch infers a -1 from the size of ``dim`` alone: reshaping the whole tensor could not
    # (an empty tensor of shape (0, 1, 1) leaves -1 undetermined, yet dim -1 has size 1)
    try:
        sizes = _infer_shape(sizes, n)
    except RuntimeError:
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim "
            f"{dim} ({n}) in the input tensor of shape {tuple(shp)}. Pass sizes whose product "
            f"is {n} (at most one -1)."
        ) from None
    return reshape(a, shp[:d] + sizes + shp[d + 1 :])


@register("squeeze")
def squeeze(a: Tensor, dim: Any = None) -> Tensor:
    """Remove dimensions of size 1 (all, or those in ``dim``)."""
    shp = a._array.shape
    if shp:
        dims = wrap_dims(dim, len(shp))
    else:  # (a 0-d tensor takes dim 0 or -1, like torch)
        dims = ()
        if dim is not None:
            wrap_dims(dim, 1)
    new = tuple(s for i, s in enumerate(shp) if not (i in dims and s == 1))
    cls = (SqueezeBackward0 if dim is None
           else SqueezeBackward1 if isinstance(dim, (int, xp.integer)) else SqueezeBackward2)
    return _reshape(a, new, cls, True)


@register("unsqueeze")
def unsqueeze(a: Tensor, dim: int) -> Tensor:
    """Insert a dimension of size 1 at ``dim``."""
    shp = a._array.shape
    d = wrap_dim(dim, len(shp) + 1)
    return _reshape(a, shp[:d] + (1,) + shp[d:], UnsqueezeBackward0, True)


class PermuteBackward0(Node):
    __slots__ = ("inverse",)

    def backward(self, g: Tensor) -> Tensor:
        return F.permute(g, self.inverse)


class TransposeBackward0(PermuteBackward0):
    __slots__ = ()


class TBackward0(PermuteBackward0):
    __slots__ = ()


def _permute(a: Tensor, dims: tuple[int, ...], cls: type[PermuteBackward0],
             checked: bool = False) -> Tensor:
    """``checked``: ``dims`` is already a permutation of ``range(ndim)`` (t, transpose)."""
    x = a._array
    if not checked:
        if len(dims) != x.ndim:
            raise RuntimeError(
                f"permute(sparse_coo): number of dimensions in the tensor input does not match "
                f"the length of the desired ordering of dimensions i.e. input.dim() = {x.ndim} "
                f"is not equal to len(dims) = {len(dims)}"
            )
        dims = wrap_dims(dims, x.ndim)
    out = x.transpose(dims)
    if not needs_grad(a):
        return mark_view(_make(out), a, (lambda b: permute(b, dims)) if _state.enabled else None)
    node = cls()
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    node.inverse = tuple(inv)
    return mark_view(record(node, (a,), out), a, lambda b: permute(b, dims))


@register("permute")
def permute(a: Tensor, *dims: Any) -> Tensor:
    """Reorder dimensions (a view)."""
    return _permute(a, _sizes(dims), PermuteBackward0)


@register("transpose", "swapaxes")
def transpose(a: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dimensions (a view)."""
    nd = a._array.ndim
    d0, d1 = wrap_dim(dim0, nd), wrap_dim(dim1, nd)  # (a 0-d tensor takes 0 and -1)
    if nd == 0:
        return _permute(a, (), TransposeBackward0, True)  # a view, as torch's
    dims = list(range(nd))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return _permute(a, tuple(dims), TransposeBackward0, True)


@register("t")
def t(a: Tensor) -> Tensor:
    """Transpose of a tensor of at most 2 dimensions."""
    nd = a._array.ndim
    if nd > 2:
        raise RuntimeError(
            f"t() expects a tensor with <= 2 dimensions, but self is {nd}D (shape "
            f"{tuple(a.shape)}). Use transpose(dim0, dim1) or permute for more dimensions."
        )
    return _permute(a, _REVERSED[nd], TBackward0, True)


_REVERSED = {0: (), 1: (0,), 2: (1, 0)}  # t()'s dims by rank


@register("contiguous")
def contiguous(a: Tensor, memory_format: Any = None) -> Tensor:
    """``a`` itself when laid out in ``memory_format``'s order (default: row-major, i.e.
    C-contiguous), else a copy in that layout that stays in the graph."""
    fmt = (_memory_format.contiguous_format if memory_format is None
           else _memory_format.check(memory_format, "contiguous"))
    _memory_format.check_rank(a._array, fmt)
    if _memory_format.is_contiguous(a._array, fmt):
        return a
    if fmt is _memory_format.preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator; "
                           "pass contiguous_format or channels_last.")
    x = a._array
    return F.copied(a, copy_c(x) if fmt is _memory_format.contiguous_format
                    else _memory_format.relayout(x, fmt))


# -- indexing ----------------------------------------------------------------------------------
def _convert_key(key: Any, shape: tuple[int, ...] | None = None) -> tuple[Any, bool]:
    """Backend index for a torch-style key; also says whether it is advanced indexing.
    ``shape`` (of the tensor indexed): errors torch finds before a negative slice step."""
    if not isinstance(key, tuple):
        key = (key,)
    out = []
    advanced = False
    for k in key:
        if isinstance(k, Tensor):
            arr = k._array
            kind = arr.dtype.kind
            if kind not in "iub":
                raise IndexError(
                    "tensors used as indices must be long, int, byte or bool tensors, got "
                    f"{k.dtype.name}"
                )
            if arr.dtype == xp.uint8:  # torch reads a byte tensor as a (legacy) mask
                arr = arr.astype(bool)
            elif kind != "b" and arr.ndim == 0:  # torch: a 0-d integer tensor is an int
                out.append(int(arr))
                continue
            out.append(arr)
            advanced = True
        elif isinstance(k, (list, tuple, xp.ndarray)):  # a sequence inside a key: advanced
            arr = xp.asarray(k)
            if arr.dtype.kind in "US":  # (torch makes a tensor of it, which refuses strings)
                raise TypeError(f"new(): invalid data type 'str': index {k!r}. Index with "
                                "ints, slices, None, ... or int/bool tensors.")
            if arr.size == 0 and arr.dtype.kind in "fV":  # torch: [] is an empty int64 index
                arr = arr.astype(xp.int64)
            out.append(arr)
            advanced = True
        elif isinstance(k, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(k).__name__}': index {k!r}. "
                            "Index with ints, slices, None, ... or int/bool tensors.")
        elif isinstance(k, bool):
            out.append(k)
            advanced = True
        else:
            if isinstance(k, slice) and k.step is not None and k.step <= 0:
                if shape is not None:
                    _check_before_step(key, out, shape)
                raise ValueError(
                    f"step must be greater than zero (got slice step {k.step}): gradsum, like "
                    "torch, has no negative strides. Use flip() to reverse."
                )
            out.append(k)
    return tuple(out), advanced


def _check_before_step(key: tuple[Any, ...], done: list[Any], shape: tuple[int, ...]) -> None:
    """torch counts the dimensions a whole key indexes, then applies its items in order, so
    "too many indices" and an out-of-range int before a negative-step slice raise first."""
    used = 0
    for k in key:
        if isinstance(k, Tensor):
            used += k._array.ndim if k._array.dtype.kind == "b" else 1
        elif isinstance(k, (list, tuple, xp.ndarray)):
            arr = xp.asarray(k)
            used += arr.ndim if arr.dtype.kind == "b" else 1
        elif k is not None and k is not Ellipsis and not isinstance(k, bool):
            used += 1
    if used > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)} (got {used})")
    if not builtins.any(kk is Ellipsis for kk in done):
        _check_bounds(_Shape(shape),  # (what _check_bounds reads of an array)
                      tuple(kk for kk in done if not isinstance(kk, (xp.ndarray, bool))))


class _Shape:
    __slots__ = ("ndim", "shape")

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape, self.ndim = shape, len(shape)


def split_key(k: tuple[Any, ...], always: bool = False
              ) -> tuple[tuple[Any, ...], tuple[Any, ...]] | None:
    """For an advanced key with ints, torch's two steps: ``(basic, rest)``; ``None`` when the
    key has no int (then NumPy's indexing in one step agrees), unless ``always``.

    torch applies ints (select) before the index tensors, so they never take part in the
    broadcast of advanced indices; NumPy broadcasts them with the arrays, which moves the
    result's dimensions (``x[0, :, [1, 2]]``: torch (n, 2), NumPy (2, n)). ``x[basic][rest]``
    is torch's result; ``basic`` keeps a full slice for each dimension an array indexes.
    """
    if not always and not builtins.any(
        isinstance(kk, (int, xp.integer)) and not isinstance(kk, bool) for kk in k
    ):
        return None
    basic: list[Any] = []
    rest: list[Any] = []
    for kk in k:
        if isinstance(kk, xp.ndarray) and kk.ndim == 0 and kk.dtype.kind == "b":
            basic.append(None)  # a 0-d mask: as a Python bool
            rest.append(kk.reshape(1))
        elif isinstance(kk, xp.ndarray):
            basic.extend([slice(None)] * (kk.ndim if kk.dtype.kind == "b" else 1))
            rest.append(kk)
        elif isinstance(kk, bool):  # torch: unsqueeze, then a one-element mask
            basic.append(None)
            rest.append(xp.array([kk]))
        elif kk is None or isinstance(kk, slice):
            basic.append(kk)
            rest.append(slice(None))
        elif kk is Ellipsis:
            basic.append(kk)
            rest.append(kk)
        else:  # an int: selected away in the first step
            basic.append(kk)
    return tuple(basic), tuple(rest)


def expand_ellipsis(k: tuple[Any, ...], ndim: int) -> tuple[Any, ...]:
    """``k`` with its Ellipsis spelled out as full slices. An Ellipsis that stands for no
    dimension separates advanced indices for NumPy (their dimensions then go first), not for
    torch."""
    i = next((j for j, kk in enumerate(k) if kk is Ellipsis), -1)  # ("in" compares arrays)
    if i < 0:
        return k
    used = 0
    for kk in k:
        if isinstance(kk, xp.ndarray) and kk.dtype.kind == "b":
            used += kk.ndim
        elif kk is not None and kk is not Ellipsis and not isinstance(kk, bool):
            used += 1
    return k[:i] + (slice(None),) * builtins.max(ndim - used, 0) + k[i + 1:]


def index_target(x: Any, k: tuple[Any, ...]) -> tuple[Any, tuple[Any, ...]]:
    """``(arr, key)`` with ``arr[key]`` the elements torch's ``x[k]`` names, ``k`` an
    advanced key from ``_convert_key`` (for writes: ``arr`` is ``x`` or a view of it)."""
    if not builtins.any(isinstance(kk, (xp.ndarray, bool)) for kk in k):
        return x, k  # basic indexing: NumPy's is torch's
    k = expand_ellipsis(k, x.ndim)
    parts = split_key(k)
    if parts is None:
        return x, k
    return x[parts[0]], parts[1]


class IndexBackward0(Node):
    __slots__ = ("in_shape", "key")

    def backward(self, g: Tensor) -> Tensor:
        return F.index_grad(g, self.key, self.in_shape)


class SliceBackward0(IndexBackward0):
    __slots__ = ()


class SelectBackward0(IndexBackward0):
    __slots__ = ()


def _check_bounds(x: Any, key: tuple[Any, ...]) -> None:
    dim = 0
    for k in key:
        if k is None:
            continue
        if k is Ellipsis:
            dim = x.ndim - builtins.sum(
                1 for kk in key if kk is not None and kk is not Ellipsis
            ) + 1 + dim
            continue
        if isinstance(k, (int, xp.integer)) and not isinstance(k, bool):
            size = x.shape[dim] if dim < x.ndim else 0
            if dim >= x.ndim or not -size <= k < size:
                raise IndexError(
                    f"index {k} is out of bounds for dimension {dim} with size {size}"
                )
        dim += 1


class AliasBackward0(IndexBackward0):
    __slots__ = ()


# ``x[None]`` is torch's unsqueeze; the rule is still indexing's (index_grad).
_IndexUnsqueezeBackward0 = type("UnsqueezeBackward0", (IndexBackward0,), {"__slots__": ()})


def _basic_index_node(k: tuple[Any, ...], shape: tuple[int, ...], key: Any) -> IndexBackward0:
    """The node torch would show for basic indexing: that of the last step that does
    something (select for an int, slice for a partial slice, unsqueeze for None); full slices
    and Ellipsis do nothing (``x[...]`` is an alias), but a lone slice key is always a slice."""
    if isinstance(key, slice):
        return SliceBackward0()
    consumed = builtins.sum(1 for kk in k if kk is not None and kk is not Ellipsis)
    dim = 0
    cls: type[IndexBackward0] = AliasBackward0
    for kk in k:
        if kk is Ellipsis:
            dim = len(shape) - (consumed - dim)
        elif kk is None:
            cls = _IndexUnsqueezeBackward0
        elif isinstance(kk, slice):
            # torch skips a slice whose raw start is 0 (or None), step 1 and stop at least
            # the size (or None); anything else (x[-3:] too) records a slice
            stop = kk.stop
            if (kk.start not in (None, 0) or kk.step not in (None, 1)
                    or (stop is not None and stop < shape[dim])):
                cls = SliceBackward0
            dim += 1
        else:
            cls = SelectBackward0
            dim += 1
    return cls()


#: NumPy before 2.3 only warns (a DeprecationWarning) when an out-of-range integer index
#: selects no element; later ones raise IndexError, which getitem and the writes handle as
#: torch does (``_empty_result``). On the older ones the warning is made that IndexError.
_OOB_ONLY_WARNS = tuple(int(p) for p in xp.__version__.split(".")[:2]) < (2, 3)


def _strict_index(x: Any, k: tuple[Any, ...], value: Any = None, write: bool = False) -> Any:
    """``x[k]`` (or ``x[k] = value`` if ``write``), raising IndexError for an out-of-range
    integer index that selects no element, as NumPy 2.3 and later do."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", "Out of bound index found", DeprecationWarning)
        try:
            if write:
                x[k] = value
                return None
            return x[k]
        except DeprecationWarning:
            raise IndexError("an index is out of bounds (the indexing result is empty)") \
                from None


def getitem(a: Tensor, key: Any) -> Tensor:
    """``a[key]``: slices, ints, None, Ellipsis (views) and bool/int tensors (copies)."""
    k, advanced = _convert_key(key, a._array.shape)
    if advanced:
        k = expand_ellipsis(k, a._array.ndim)
        parts = split_key(k)
        if parts is not None:  # ints select first, then the tensors index (as torch)
            return getitem(getitem(a, parts[0]), parts[1])
    x = a._array
    try:
        out = _strict_index(x, k) if advanced and _OOB_ONLY_WARNS else x[k]
    except IndexError as e:
        if not advanced:
            _check_bounds(x, k)
        out = _empty_result(x, k)  # (torch checks no index when the result is empty)
        if out is None:
            raise IndexError(f"{e} (tensor of shape {tuple(x.shape)})") from None
    if not isinstance(out, xp.ndarray):
        out = xp.asarray(out)
        if not advanced:
            out = x[k + (Ellipsis,)] if Ellipsis not in k else out
    is_view = not advanced
    if not needs_grad(a):
        t = _make(out)
        if not is_view:
            return t
        # Grad mode on: remember how to recompute the view, so an in-place write through it
        # that brings in a tensor requiring grad rebases the base (torch's CopySlices).
        return mark_view(t, a, (lambda b: getitem(b, key)) if _state.enabled else None)
    if advanced:
        node = IndexBackward0()
        node._saved = HOLDS_STATE  # (torch saves the indices)
    else:
        node = _basic_index_node(k, x.shape, key)
    node.key = k
    node.in_shape = x.shape
    t = record(node, (a,), out)
    if is_view:
        return mark_view(t, a, lambda b: getitem(b, key))
    return t


def _empty_result(x: Any, k: tuple[Any, ...]) -> Any:
    """``x[k]`` when it is empty although an index of ``k`` is out of range (torch's kernel
    checks indices as it reads, so an empty result raises nothing), else None. An index into
    a dimension of size 0 still raises."""
    clipped = []
    dim = 0
    for kk in k:
        if isinstance(kk, xp.ndarray) and kk.dtype.kind in "iu":
            n = x.shape[dim] if dim < x.ndim else 0
            if not n:
                return None
            clipped.append(xp.clip(kk, -n, n - 1))
            dim += 1
        else:
            clipped.append(kk)  # (the key's Ellipsis is spelled out already)
            if isinstance(kk, xp.ndarray):  # (a mask)
                dim += kk.ndim
            elif kk is not None and not isinstance(kk, bool):
                dim += 1
    try:
        out = x[tuple(clipped)]
    except IndexError:
        return None
    return out if out.size == 0 else None


class IndexGradBackward0(Node):
    __slots__ = ("key",)

    def backward(self, g: Tensor) -> Tensor:
        return F.getitem(g, self.key)


_ROWS_BY_PASS_MIN = 64  # below this many indices np.add.at is as fast


def _small_key(a: Any, bound: int) -> Any:
    """``a`` (values in ``[0, bound)``) as int16 when it fits: NumPy's stable argsort is a
    radix sort for 16-bit keys, several times faster than its merge sort of int64."""
    return a.astype(xp.int16) if bound <= 32767 else a


def _sum_rows_into_zeros(out: Any, idx: Any, src: Any, counts: Any) -> None:
    """``add_rows_at`` into an all-zero ``out`` when indices repeat (``counts``: the bincount
    of ``idx``), bitwise the same. The used rows are summed in a compact accumulator, one row
    per used index, ordered by count (most first) so that the indices with more than r
    occurrences are a prefix of it: pass r is then a contiguous slice add of the r-th
    occurrences (gathered once, in that layout), and one fancy store writes the sums."""
    n, size = idx.shape[0], out.shape[0]
    cmax = int(_max_reduce(counts, None))
    seg = _small_key(cmax - counts, cmax + 1).argsort(kind="stable")
    nuniq = int(xp.count_nonzero(counts))
    seg = seg[:nuniq]  # the used indices, by count descending (ties: index ascending)
    segpos = xp.empty(size, dtype=xp.intp)
    segpos[seg] = xp.arange(nuniq)
    order = _small_key(idx, size).argsort(kind="stable")  # rows by index, stable
    sidx = idx[order]
    starts = counts.cumsum()
    starts -= counts
    rank = xp.arange(n)
    rank -= starts[sidx]  # occurrence number of each sorted row
    key = rank * nuniq + segpos[sidx]  # pass first, then the accumulator's row
    perm = order[_small_key(key, cmax * nuniq).argsort(kind="stable")]
    rows = src[perm]
    passes = _bincount(rank).tolist()
    first = passes[0]  # == nuniq
    acc = rows[:first] + 0  # (+ 0: 0 + -0.0 is +0.0, as add.at into zeros gives)
    off = first
    for count in passes[1:]:
        acc[:count] += rows[off : off + count]
        off += count
    out[seg] = acc


def add_rows_at(out: Any, idx: Any, src: Any, zeros: bool = False) -> None:
    """``out[idx[i]] += src[i]`` along axis 0 for every i, repeats accumulated in index order:
    bitwise what ``xp.add.at(out, idx, src)`` gives (and torch's sequential index_add), but
    ``add.at`` adds one row at a time. Here pass r adds the r-th occurrence of every index at
    once (unique within a pass, so a plain fancy ``+=`` is exact). ``zeros``: ``out`` is
    known to be all zeros, so the first pass is a plain store."""
    n = idx.shape[0]
    if n < _ROWS_BY_PASS_MIN or src.ndim < 2 or src.shape[0] != n:
        xp.add.at(out, idx, src)
        return
    size = out.shape[0]
    if idx.dtype != xp.intp:
        idx = idx.astype(xp.intp)  # (bincount refuses uint64)
    if _min_reduce(idx, None) < 0:  # -1 and size-1 name one row: show the sort the repeats
        idx = idx % size
    rank = order = None
    if size <= 8 * n:  # (few NumPy calls: after a large matmul each runs with cold caches)
        counts = _bincount(idx, None, size)
        repeats = _max_reduce(counts, None) > 1
        if zeros and repeats and out.flags.c_contiguous:
            _sum_rows_into_zeros(out, idx, src, counts)
            return
        if repeats:
            order = _small_key(idx, size).argsort(kind="stable")
            starts = counts.cumsum()
            starts -= counts  # first sorted position of each value
            rank = xp.arange(n)
            rank -= starts[idx[order]]  # occurrence number of each sorted position
    else:  # a large table: compare sorted neighbours instead of counting every row
        order = idx.argsort(kind="stable")
        sidx = idx[order]
        first = xp.empty(n, dtype=bool)
        first[0] = True
        xp.not_equal(sidx[1:], sidx[:-1], out=first[1:])
        if not first.all():
            pos = xp.arange(n)
            rank = pos - xp.maximum.accumulate(xp.where(first, pos, 0))
    if rank is None:  # no repeats: one pass
        passes = [n]
        by_rank = None
    else:
        by_rank = order[_small_key(rank, n).argsort(kind="stable")]
        passes = _bincount(rank).tolist()
        idx = idx[by_rank]  # one gather each, then every pass is a slice
        src = src[by_rank]
    start = 0
    for count in passes:
        end = start + count
        if zeros and start == 0:
            rows = src[:end]
            if rows.dtype.kind in "fc":  # (+ 0 first: 0 + -0.0 is +0.0, as add.at gives)
                rows = rows + 0 if by_rank is None else xp.add(rows, 0, out=rows)
            out[idx[:end]] = rows
        else:
            out[idx[start:end]] += src[start:end]
        start = end


def index_grad(g: Tensor, key: Any, shape: tuple[int, ...]) -> Tensor:
    """Scatter-add ``g`` into zeros of ``shape`` at ``key`` (the backward of indexing);
    repeated indices add up."""
    ga = g._array
    out = xp.zeros(shape, dtype=ga.dtype)
    k0 = key[0] if len(key) == 1 else None
    if not ga.size:  # (an empty result: nothing to scatter, its indices unchecked by torch)
        pass
    elif isinstance(k0, xp.ndarray) and k0.dtype.kind in "iu" and k0.ndim >= 1:
        add_rows_at(out, k0.reshape(-1), ga.reshape((-1,) + tuple(shape[1:])), zeros=True)
    elif builtins.any(isinstance(kk, xp.ndarray) and kk.dtype.kind != "b" for kk in key):
        xp.add.at(out, key, ga)
    else:
        out[key] = ga
    if not needs_grad(g):
        return _make(out)
    node = IndexGradBackward0()
    node.key = key
    return record(node, (g,), out)


class IndexSelectBackward0(Node):
    __slots__ = ("dim", "in_shape", "index")

    def backward(self, g: Tensor) -> Tensor:
        # index_add into zeros, without re-checking the index index_select already checked
        zeros = _make(xp.zeros(self.in_shape, dtype=g._array.dtype))
        return _index_add(zeros, self.dim, self.index, g, 1, copy=False)


_UNSIGNED = {xp.dtype(f"i{n}"): xp.dtype(f"u{n}") for n in (1, 2, 4, 8)}


def in_bounds(idx: Any, size: int) -> bool:
    """Whether every integer in ``idx`` lies in ``[0, size)`` (True for an empty ``idx``)."""
    if not idx.size:
        return True
    # (one pass: a negative index read as unsigned is larger than any size)
    u = _UNSIGNED.get(idx.dtype)
    if u is not None and idx.flags.c_contiguous:
        return bool(_max_reduce(idx.view(u), None) < size)
    return bool(_max_reduce(idx, None) < size and _min_reduce(idx, None) >= 0)


def _check_index_bounds(idx: Any, size: int, dim: int) -> None:
    """torch's check for gather/scatter indices: ``0 <= index < size`` (no wrapping)."""
    if not in_bounds(idx, size):
        hi, lo = _max_reduce(idx, None), _min_reduce(idx, None)
        if hi >= size or lo < 0:
            bad = int(hi) if hi >= size else int(lo)
            raise RuntimeError(
                f"index {bad} is out of bounds for dimension {dim} with size {size}: "
                f"indices must lie in [0, {size - 1}] (negative indices are not wrapped)"
            )


def _index_array(index: Any, name: str) -> Any:
    arr = index._array if isinstance(index, Tensor) else xp.asarray(index)
    if arr.dtype.kind not in "iu":
        raise RuntimeError(
            f"{name}(): Expected dtype int64 for index, got {D.from_numpy_dtype(arr.dtype).name}"
            ". Convert the index with .long()."
        )
    return arr


@register("index_select")
def index_select(a: Tensor, dim: int, index: Any) -> Tensor:
    """Entries of ``a`` along ``dim`` at the 1-D ``index`` (repeats allowed)."""
    idx = _index_array(index, "index_select")
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    x = a._array
    d = wrap_dim(dim, x.ndim)
    size = x.shape[d] if x.ndim else 1
    if not x.ndim and idx.size != 1:
        raise RuntimeError(
            f"index_select(): Index to scalar can have only 1 value, got {idx.size} value(s). "
            "A 0-d tensor has one entry: pass one index (0)."
        )
    if not in_bounds(idx, size):
        # torch refuses negative indices too; its kernel for dim 1 raises RuntimeError,
        # the others IndexError (and its path for an empty >= 2-d tensor RuntimeError)
        err = RuntimeError if x.ndim >= 2 and (d == 1 or not x.size) else IndexError
        raise err(
            f"index out of range in self: index_select on dimension {d} of size {size} with "
            f"indices in [{int(idx.min())}, {int(idx.max())}]; valid indices are 0 to "
            f"{size - 1} (negative indices are not wrapped)"
        )
    return _index_select(a, d, idx)


def _index_select(a: Tensor, d: int, idx: Any) -> Tensor:
    """index_select once its arguments are checked (``d`` wrapped, ``idx`` in range)."""
    x = a._array
    out = xp.take(x, idx.reshape(-1), axis=d) if x.ndim else x.reshape(1)[idx].reshape(())
    if not needs_grad(a):
        return _make(out)
    node = IndexSelectBackward0()
    node._saved = HOLDS_STATE  # (torch saves the index)
    node.dim, node.index, node.in_shape = d, _make(idx.reshape(-1)), x.shape
    return record(node, (a,), out)


class IndexAddBackward0(Node):
    __slots__ = ("alpha", "dim", "index")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        gs = g if self.needs(0) else None
        gsrc = None
        if self.needs(1):
            gsrc = F.index_select(g, self.dim, self.index)
            if self.alpha != 1:
                gsrc = F.mul(gsrc, self.alpha)
        return gs, gsrc


@register("index_add")
def index_add(a: Tensor, dim: int, index: Any, source: Tensor, *, alpha: Any = 1) -> Tensor:
    """``a`` with ``alpha * source`` added at ``index`` along ``dim`` (repeats add up)."""
    idx = _index_array(index, "index_add")
    x = a._array
    d = wrap_dim(dim, x.ndim)
    src = source._array if alpha == 1 else source._array * alpha
    if idx.ndim > 1:
        raise IndexError("index_add_(): Index is supposed to be a vector")
    if not src.ndim and idx.size != 1:
        # torch's count check formats source.size(dim) into its message, and a 0-d source
        # has no dim 0: it raises IndexError instead of the count's RuntimeError
        raise IndexError(
            f"Dimension specified as 0 but tensor has no dimensions: index_add_() got "
            f"{idx.size} indices for a 0-d source. Pass one index per source entry along dim."
        )
    src_n = src.shape[d] if src.ndim else 1
    if src_n != idx.size or src.ndim != x.ndim or builtins.any(
        src.shape[i] != x.shape[i] for i in range(x.ndim) if i != d
    ):
        raise RuntimeError(
            f"index_add_(): Number of indices ({idx.size}) should be equal to source.size(dim): "
            f"({src_n}), for dim: {d}; self has shape {tuple(x.shape)}, source "
            f"{tuple(src.shape)}. The source must match self except along dim."
        )
    size = x.shape[d] if x.ndim else 1
    if not x.size and x.ndim >= 2:
        # torch checks no index against an empty >= 2-d self (nothing is written; a 1-d one
        # is checked); a backward for the source then refuses the index in index_select
        return _index_add(a, d, _make(idx.reshape(-1)), source, alpha)
    if (x.ndim <= 1 or 0 < d < x.ndim - 1) and not in_bounds(idx, size):
        # torch's kernels for the first and last dim of a >= 2-d tensor raise RuntimeError
        # (below); its others (0-d, 1-d, the middle dims) raise IndexError
        raise IndexError(
            f"index out of range in self: index_add on dimension {d} of size {size} with "
            f"indices in [{int(idx.min())}, {int(idx.max())}]; valid indices are 0 to "
            f"{size - 1} (negative indices are not wrapped)"
        )
    _check_index_bounds(idx, size, d)
    return _index_add(a, d, _make(idx.reshape(-1)), source, alpha)


def _index_add(a: Tensor, d: int, index: Tensor, source: Tensor, alpha: Any,
               copy: bool = True) -> Tensor:
    """index_add once its arguments are checked (``index`` 1-D). ``copy=False`` adds into
    ``a``'s own buffer: only for a fresh ``a`` nobody else sees (a backward's zeros)."""
    x = a._array
    src = source._array if alpha == 1 else source._array * alpha
    out = x.copy() if copy else x
    src = src.astype(x.dtype, copy=False)
    if not x.size:
        pass  # (nothing to write into an empty self: see index_add)
    elif not x.ndim:  # a 0-d tensor is indexed as one dim of size 1 (NumPy has no axis 0)
        add_rows_at(out.reshape(1), index._array, src.reshape(1), zeros=not copy)
    elif d == 0:
        add_rows_at(out, index._array, src, zeros=not copy)
    else:
        add_rows_at(xp.moveaxis(out, d, 0), index._array, xp.moveaxis(src, d, 0), not copy)
    if not needs_grad(a, source):
        return _make(out)
    node = IndexAddBackward0()
    if source.requires_grad:  # (torch saves the index for the source's gradient only)
        node._saved = HOLDS_STATE
    node.dim, node.index, node.alpha = d, index, alpha
    return record(node, (a, source), out)


class GatherBackward0(Node):
    __slots__ = ("dim", "in_shape", "index", "key")
    #: whether the index never repeats along ``dim`` (a sort's or topk's order), so the
    #: backward may assign the gradient instead of adding it up
    distinct = False

    def backward(self, g: Tensor) -> Tensor:
        # scatter_add into zeros, without re-checking the index gather already checked
        zeros = _make(xp.zeros(self.in_shape, dtype=g._array.dtype))
        return _scatter_add(zeros, self.dim, self.index, g, self.key, fresh=True,
                            distinct=self.distinct)


class SortBackward0(GatherBackward0):
    """The values of a sort: a gather along the sorted order (torch's own node)."""

    __slots__ = ()
    distinct = True


class TopkBackward0(GatherBackward0):
    """The values of a topk: a gather along the selected order (torch's own node)."""

    __slots__ = ()
    distinct = True


def as_node(t: Tensor, cls: type[Node]) -> Tensor:
    """``t`` whose grad_fn, a node of ``cls``'s base class (same slots, same rule), is
    renamed ``cls``: torch's name for a node that gradsum makes with a more general op
    (the values of a sort are a gather). A no-op when ``t`` has another grad_fn or none."""
    fn = t._grad_fn
    if fn is not None and type(fn) is cls.__base__:
        fn.__class__ = cls
    return t


@register("gather")
def gather(a: Tensor, dim: int, index: Tensor) -> Tensor:
    """``out[i][j] = a[index[i][j]][j]`` for ``dim=0`` (and so on): values along ``dim``."""
    if index.__class__ is Tensor and index._array.dtype.kind in "iu":
        idx = index._array  # (_index_array's common case, inlined)
    else:
        idx = _index_array(index, "gather")
        index = _make(idx)
    x = a._array
    d = wrap_dim(dim, x.ndim)
    if idx.ndim != x.ndim:
        raise RuntimeError(
            f"Index tensor must have the same number of dimensions as input tensor: index has "
            f"{idx.ndim}, input has {x.ndim}"
        )
    for i in range(x.ndim):
        if i != d and idx.shape[i] > x.shape[i]:
            raise RuntimeError(
                f"Size does not match at dimension {i} expected index {tuple(idx.shape)} to be "
                f"no larger than self {tuple(x.shape)} apart from dimension {d}"
            )
    _check_index_bounds(idx, x.shape[d] if x.ndim else 1, d)
    key: Any
    if x.ndim and idx.size >= _FLAT_INDEX_MIN:
        key = _flat_along(idx, d, x.shape)
        out = xp.take(x.reshape(-1), key)  # (a 1-D take: several times a 2-D fancy index)
    else:
        if idx.ndim == 2:  # (_along, inlined for the common 2-D case)
            key = ((idx, index_range(idx.shape[1], 1, 2)) if d == 0
                   else (index_range(idx.shape[0], 0, 2), idx))
        else:
            key = _along(idx, d)
        out = x[key]
    if not _state.enabled or (a._grad_fn is None and not a._requires_grad):  # (needs_grad)
        return _make(out)
    node = GatherBackward0()
    node._saved = HOLDS_STATE  # (torch saves the index)
    node.dim, node.index, node.in_shape, node.key = d, index, x.shape, key
    return record(node, (a,), out)


#: from this many indices gather and scatter_add index by flat positions (below, building
#: them costs more than the 2-D fancy index saves: a 32-row gather 7.3 -> 9.9 us)
_FLAT_INDEX_MIN = 4096


def _flat_along(idx: Any, d: int, shape: tuple[int, ...]) -> Any:
    """The flat (C-order) positions in an array of ``shape`` that ``idx`` picks along
    dimension ``d`` (and position i elsewhere), shaped as ``idx``: :func:`_along` as one
    integer array, which NumPy's 1-D take, put and ``add.at`` run many times faster than a
    tuple of broadcast indices."""
    nd = idx.ndim
    strides = [1] * nd
    for i in range(nd - 1, 0, -1):
        strides[i - 1] = strides[i] * shape[i]
    offsets = [index_range(idx.shape[i], i, nd) * strides[i] for i in range(nd)
               if i != d and idx.shape[i] > 1]
    if strides[d] != 1:
        lin = xp.multiply(idx, strides[d], dtype=xp.intp)
    elif offsets:  # (the common 2-D case: one pass)
        return xp.add(idx, offsets.pop() if len(offsets) == 1 else builtins.sum(offsets),
                      dtype=xp.intp)
    else:
        lin = idx.astype(xp.intp, copy=True)
    for off in offsets:
        lin += off
    return lin


def _along(idx: Any, d: int) -> tuple[Any, ...]:
    """The fancy index that picks ``idx`` along dimension ``d`` (and position i elsewhere):
    what ``take_along_axis`` builds, without its overhead for small arrays."""
    nd = idx.ndim
    key: list[Any] = []
    for i in range(nd):
        if i == d:
            key.append(idx)
        else:
            key.append(index_range(idx.shape[i], i, nd))
    return tuple(key)


class ScatterAddBackward0(Node):
    __slots__ = ("dim", "index", "src_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        gs = g if self.needs(0) else None
        gsrc = None
        if self.needs(1):
            gsrc = F.gather(g, self.dim, self.index)
            if gsrc.shape != self.src_shape:  # src may be larger than index: zeros elsewhere
                # (torch refuses this backward with "invalid gradient"; the zeros are exact)
                key = tuple(slice(0, n) for n in gsrc.shape)
                gsrc = index_grad(gsrc, key, self.src_shape)
        return gs, gsrc


@register("scatter_add")
def scatter_add(a: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """``a`` with ``src`` added at ``index`` along ``dim`` (the reverse of gather)."""
    idx = _index_array(index, "scatter_add")
    x = a._array
    d = wrap_dim(dim, x.ndim)
    sa = src._array
    if not idx.ndim == x.ndim == sa.ndim:
        raise RuntimeError(
            f"Index tensor must have the same number of dimensions as self tensor and src: "
            f"index {tuple(idx.shape)}, self {tuple(x.shape)}, src {tuple(sa.shape)}"
        )
    if builtins.any(idx.shape[i] > sa.shape[i] or (i != d and idx.shape[i] > x.shape[i])
                    for i in range(x.ndim)):
        raise RuntimeError(
            f"Expected index {list(idx.shape)} to be no larger than self {list(x.shape)} apart "
            f"from dimension {d} and to be no larger size than src {list(sa.shape)}"
        )
    _check_index_bounds(idx, x.shape[d] if x.ndim else 1, d)
    return _scatter_add(a, d, _make(idx), src,
                        _flat_along(idx, d, x.shape) if x.ndim and idx.size >= _FLAT_INDEX_MIN
                        else _along(idx, d))


def _scatter_add(a: Tensor, d: int, index: Tensor, src: Tensor, key: Any,
                 fresh: bool = False, distinct: bool = False) -> Tensor:
    """scatter_add once its arguments are checked; ``key`` is ``_flat_along(index, d,
    a.shape)`` (or ``_along(index, d)``, a tuple). ``fresh``: ``a`` is zeros made for this
    call, which it may fill instead of a copy. ``distinct``: the index never repeats along
    ``d``."""
    x, idx, sa = a._array, index._array, src._array
    out = x if fresh else x.copy()
    s = sa if sa.shape == idx.shape else sa[tuple(slice(0, n) for n in idx.shape)]
    s = s.astype(x.dtype, copy=False)
    if isinstance(key, xp.ndarray):  # flat positions: into the (C-contiguous) copy's buffer
        o1, k1, s1 = out.reshape(-1), key.reshape(-1), s.reshape(-1)
        if distinct or (x.ndim and idx.shape[d] == 1):
            if fresh:  # (``s + 0``: the bits an add into zeros gives, -0.0 included)
                o1[k1] = s1 + const(s.dtype, 0)
            else:
                o1[k1] += s1
        else:
            xp.add.at(o1, k1, s1)  # repeated indices add up, in order
    elif x.ndim and idx.shape[d] == 1:
        # one index per position: no repeats, plain fancy-index add is exact (into zeros an
        # assignment of ``s + 0``: the same bits, -0.0 included, without reading ``out``)
        if fresh:
            out[key] = s + const(s.dtype, 0)
        else:
            out[key] += s
    else:
        xp.add.at(out, key, s)  # repeated indices add up
    if not needs_grad(a, src):
        return _make(out)
    node = ScatterAddBackward0()
    node._saved = HOLDS_STATE  # (torch saves the index)
    node.dim, node.index, node.src_shape = d, index, sa.shape
    return record(node, (a, src), out)


class CatBackward0(Node):
    __slots__ = ("dim", "sizes")

    def backward(self, g: Tensor) -> tuple[Tensor | None, ...]:
        outs: list[Tensor | None] = []
        start = 0
        for i, n in enumerate(self.sizes):
            if n is None:  # a skipped legacy empty tensor
                outs.append(F.zeros(0, dtype=g.dtype) if self.needs(i) else None)
                continue
            if self.needs(i):
                key = (slice(None),) * self.dim + (slice(start, start + n),)
                outs.append(F.getitem(g, key))
            else:
                outs.append(None)
            start += n
        return tuple(outs)


@register("cat", "concat", "concatenate")
def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join tensors along an existing dimension (dtypes promote like torch's)."""
    ts = [t for t in tensors]
    if not ts:
        raise ValueError(
            "torch.cat(): expected a non-empty list of Tensors, got an empty sequence"
        )
    # torch skips legacy empty 1-D tensors of shape (0,) in the shape checks and in wrapping
    # dim, but not in dtype promotion (they still get a (0,) gradient)
    skipped = [t._array.ndim == 1 and t._array.size == 0 for t in ts]
    rt = D.result_type(*ts).np if len({t._array.dtype for t in ts}) > 1 else None
    if builtins.all(skipped):  # torch returns (0,) for any dim, unchecked
        skipped = [False] * len(ts)
        dim = 0
    parts = [t for t, sk in zip(ts, skipped) if not sk]
    nd = parts[0]._array.ndim
    if nd == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = wrap_dim(dim, nd)
    arrays = [p._array if rt is None else p._array.astype(rt) for p in parts]
    for i, arr in enumerate(arrays):
        if arr.ndim != nd or builtins.any(
            arr.shape[k] != arrays[0].shape[k] for k in range(nd) if k != d
        ):
            raise RuntimeError(
                f"Sizes of tensors must match except in dimension {d}. Expected "
                f"{tuple(arrays[0].shape)} but got {tuple(arr.shape)} for tensor number {i} "
                "in the list."
            )
    out = xp.concatenate(arrays, axis=d)
    if not needs_grad(*ts):
        return _make(out)
    node = CatBackward0()
    sizes = iter(a.shape[d] for a in arrays)
    node.dim, node.sizes = d, [None if sk else next(sizes) for sk in skipped]
    return record(node, ts, out)


@register("stack")
def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join tensors of the same shape along a new dimension."""
    ts = list(tensors)
    if not ts:
        raise RuntimeError("stack expects a non-empty TensorList")
    shp = ts[0]._array.shape
    for i, t in enumerate(ts):
        if t._array.shape != shp:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shp)} at entry 0 "
                f"and {list(t.shape)} at entry {i}"
            )
    d = wrap_dim(dim, len(shp) + 1)
    if len({t._array.dtype for t in ts}) > 1:  # mixed dtypes: cat promotes like torch
        return cat([unsqueeze(t, d) for t in ts], d)
    out = xp.stack([t._array for t in ts], axis=d)
    if not needs_grad(*ts):
        return _make(out)
    node = StackBackward0()
    node.dim = d
    return record(node, ts, out)


class StackBackward0(Node):
    """Each input's gradient is its slice of the output's gradient."""

    __slots__ = ("dim",)

    def backward(self, g: Tensor) -> tuple[Tensor | None, ...]:
        return tuple(F.select(g, self.dim, i) if self.needs(i) else None
                     for i in range(len(self._next)))


@register("narrow")
def narrow(a: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``length`` entries of ``dim`` from ``start`` (a negative start counts from the end;
    the range must fit: torch checks it rather than clipping like a slice)."""
    if a._array.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor. Unsqueeze it first.")
    if length < 0:
        raise RuntimeError(f"narrow(): length must be non-negative. Got length={length}.")
    d = wrap_dim(dim, a._array.ndim)
    n = a._array.shape[d]
    if not -n <= start <= n:
        raise IndexError(
            f"start out of range (expected to be in range of [{-n}, {n}], but got {start}) "
            f"for dim {d} of shape {tuple(a.shape)}"
        )
    start = start + n if start < 0 else start
    if start + length > n:
        raise RuntimeError(
            f"start ({start}) + length ({length}) exceeds dimension size ({n}). Pass a "
            f"start and length within dim {d} of shape {tuple(a.shape)}."
        )
    return getitem(a, (slice(None),) * d + (slice(start, start + length),))


@register("select")
def select(a: Tensor, dim: int, index: int) -> Tensor:
    d = wrap_dim(dim, a._array.ndim)
    return getitem(a, (slice(None),) * d + (index,))


def _check_splittable(a: Tensor, name: str) -> None:
    """torch refuses a 0-d tensor before looking at ``dim`` or the sizes."""
    if not a._array.ndim:
        raise RuntimeError(
            f"{name} expects at least a 1-dimensional tensor, got a 0-d tensor. Unsqueeze it "
            "first (t.unsqueeze(0)) or use it whole."
        )


@register("split")
def split(a: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Pieces of ``split_size`` (the last may be smaller) or of the given section sizes."""
    _check_splittable(a, "split")
    d = wrap_dim(dim, a._array.ndim)
    n = a._array.shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, got {step}")
        sizes = [min(step, n - s) for s in range(0, n, step)] if n else [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if builtins.sum(sizes) != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's "
                f"size at dimension {d}), but got split_sizes={sizes}"
            )
    cls = SplitBackward0 if isinstance(split_size_or_sections, int) else SplitWithSizesBackward0
    if a._view_guard is not None:  # (a piece of a guarded view: narrow's own bookkeeping)
        out = []
        start = 0
        for s in sizes:
            out.append(narrow(a, d, start, s))
            start += s
        return _multi_views(tuple(out), a, cls.__name__[:-9], cls, d)
    return _multi_views(_pieces(a, d, sizes, cls), a, cls.__name__[:-9], cls, d)


def _pieces(a: Tensor, d: int, sizes: list[int], cls: type[SplitBackward0]
            ) -> tuple[Tensor, ...]:
    """The views ``narrow(a, d, start, size)`` for consecutive ``sizes`` (in range), each
    what narrow makes (a view of ``a`` that narrow replays on a new base), but sliced at once
    and recorded by one ``cls`` node (what :func:`_multi_views` would attach)."""
    x = a._array
    pre = (slice(None),) * d
    keys = []
    start = 0
    for s in sizes:
        keys.append(pre + (slice(start, start + s),))
        start += s
    enabled = _state.enabled
    if not needs_grad(a):
        return tuple(mark_view(_make(x[k]), a, _regetter(k) if enabled else None)
                     for k in keys)
    shared = cls()
    return tuple(mark_view(record(shared, (a,), x[k], i), a, _regetter(k))
                 for i, k in enumerate(keys))


def _regetter(key: Any) -> Callable[[Tensor], Tensor]:
    """A view's ``view_fn``: ``getitem(base, key)`` on a new base."""
    return lambda b: getitem(b, key)


class SplitBackward0(Node):
    """One node for all the pieces of a split (output ``i`` is piece ``i``), as torch's:
    the gradient is the pieces' gradients concatenated, zeros for a piece that got none."""

    __slots__ = ("_dtype", "_shapes", "dim", "num_outputs")

    def backward(self, *grads: Tensor | None) -> Tensor:
        if not _state.enabled and self._shapes and builtins.all(
                g is None or g._array.dtype == self._dtype.np for g in grads):
            # (no graph: each piece's gradient written into one buffer, zeros where none)
            d, first = self.dim, self._shapes[0]
            shape = (first[:d] + (builtins.sum(s[d] for s in self._shapes),) + first[d + 1:])
            missing = builtins.any(g is None for g in grads)
            out = (xp.zeros if missing else xp.empty)(shape, dtype=self._dtype.np)
            start = 0
            for g, sh in zip(grads, self._shapes):
                if g is not None:
                    out[(slice(None),) * d + (slice(start, start + sh[d]),)] = g._array
                start += sh[d]
            return _make(out)
        parts = [g if g is not None else F.zeros(s, dtype=self._dtype)
                 for g, s in zip(grads, self._shapes)]
        return F.cat(parts, self.dim)

    def _materialize(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        return grads


class SplitWithSizesBackward0(SplitBackward0):
    __slots__ = ()


class UnbindBackward0(SplitBackward0):
    """The slices of an unbind: their gradients stacked."""

    __slots__ = ()

    def backward(self, *grads: Tensor | None) -> Tensor:
        parts = [g if g is not None else F.zeros(s, dtype=self._dtype)
                 for g, s in zip(grads, self._shapes)]
        return F.stack(parts, self.dim)


def _multi_views(out: tuple[Tensor, ...], a: Tensor, node: str,
                 cls: type[SplitBackward0], dim: int) -> tuple[Tensor, ...]:
    """Mark the outputs of split/chunk/unbind made in grad mode of a tensor that requires
    grad: torch refuses an in-place op on them (``_check_leaf`` in ops.inplace). While
    recording, the pieces (views made by narrow/select) share one ``cls`` node instead of
    a slice node each, as torch's (their ``output_nr`` is their position)."""
    first = out[0]._grad_fn if out else None
    if first is not None:
        made = first.__class__ is cls  # (split's pieces come with their node: _pieces)
        shared = first if made else cls()
        shared.num_outputs = len(out)
        shared.dim, shared._dtype = dim, a.dtype
        shared._shapes = [o._array.shape for o in out]
        if not made:
            shared._next = first._next
            for i, o in enumerate(out):
                o._grad_fn, o._output_nr = shared, i
    if _state.enabled and a.requires_grad:
        for i, o in enumerate(out):
            o._multi_view = (node, i)
            if o._grad_fn is not None:
                guard_view(o, "multi", node, i)
    elif _state.enabled:  # (torch: no grad_fn, so "created in no_grad mode": a recorded
        for o in out:     # write into one raises, see ops.inplace.apply_inplace)
            o._view_fn = None
    return out


@register("chunk")
def chunk(a: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """Split into ``chunks`` pieces of equal size (the last may be smaller), like torch."""
    _check_splittable(a, "chunk")
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0")
    d = wrap_dim(dim, a._array.ndim)
    n = a._array.shape[d]
    if n == 0:  # torch: ``chunks`` empty pieces
        return split(a, [0] * chunks, d)
    return split(a, -(-n // chunks), d)


@register("unbind")
def unbind(a: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """The slices along ``dim``, as a tuple."""
    d = wrap_dim(dim, a._array.ndim)
    return _multi_views(tuple(select(a, d, i) for i in range(a._array.shape[d])), a, "Unbind",
                        UnbindBackward0, d)


class MaskedFillBackward0(Node):
    __slots__ = ("in_shape", "mask")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        m = _make(self.mask)
        # a mask larger than ``a`` broadcast the output: a's gradient is summed back down
        ga = sum_to(F.where(m, F.zeros_like(g), g), self.in_shape) if self.needs(0) else None
        gv = None
        if self.needs(1):
            gv = F.sum(F.where(m, g, F.zeros_like(g)))
        return ga, gv


class MaskedFillBackward1(MaskedFillBackward0):
    """masked_fill with a 0-d tensor value (which gets the sum of the masked gradient)."""

    __slots__ = ()


@register("masked_fill")
def masked_fill(a: Tensor, mask: Tensor, value: Any) -> Tensor:
    """``a`` with ``value`` where ``mask`` is True (``value`` a number or a 0-d tensor)."""
    m = mask._array if isinstance(mask, Tensor) else xp.asarray(mask)
    if m.dtype.kind != "b":
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{D.from_numpy_dtype(m.dtype).name}"
        )
    x = a._array
    v_t = value if isinstance(value, Tensor) else None
    if v_t is not None and v_t._array.ndim != 0:
        raise RuntimeError(
            f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{v_t.ndim} dimension(s)."
        )
    v = v_t._array.astype(x.dtype) if v_t is not None else value
    try:
        # out of place, torch broadcasts ``a`` and the mask together (the result may be
        # larger than ``a``); masked_fill_ refuses a result that would grow its tensor
        out = xp.where(m, xp.asarray(v, dtype=x.dtype), x)
    except ValueError:
        raise F._core.broadcast_error(m, x) from None
    if not needs_grad(a, v_t):
        return _make(out)
    node = MaskedFillBackward0() if v_t is None else MaskedFillBackward1()
    node._saved = HOLDS_STATE  # (torch saves the mask)
    node.mask = xp.broadcast_to(m, out.shape)
    node.in_shape = x.shape
    return record(node, (a, v_t), out)


@register("one_hot")
def one_hot(index: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding with a new last dimension (not differentiable)."""
    idx = index._array
    if idx.dtype.kind not in "iu":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if not idx.size:
        n = int(idx.max()) + 1 if num_classes == -1 else num_classes
        return _make(xp.zeros(idx.shape + (n,), dtype=xp.int64))
    if idx.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    hi = int(idx.max())
    n = hi + 1 if num_classes == -1 else num_classes
    if hi >= n:
        raise RuntimeError("Class values must be smaller than num_classes.")
    # (zeros, then a 1 at each row's class: no comparison against every class)
    out = xp.zeros(idx.shape + (n,), dtype=xp.int64)
    flat = xp.arange(0, idx.size * n, n, dtype=xp.int64)
    flat += idx.reshape(-1)
    out.reshape(-1)[flat] = 1
    return _make(out)


class FlipBackward0(Node):
    __slots__ = ("dims",)

    def backward(self, g: Tensor) -> Tensor:
        return flip(g, self.dims)


@register("flip")
def flip(a: Tensor, *dims: Any) -> Tensor:
    """Reverse the order of elements along ``dims`` (a copy, like torch's); ``flip(t, (0, 1))``
    and ``t.flip(0, 1)`` both work."""
    dims = _sizes(dims)
    nd = a._array.ndim
    if nd:
        wd = wrap_dims(tuple(dims), nd)
    else:  # (a 0-d tensor takes dim 0 or -1, like torch)
        wrap_dims(tuple(dims), 1)
        wd = ()
    out = xp.flip(a._array, wd).copy() if wd else a._array.copy()
    if not needs_grad(a):
        return _make(out)
    node = FlipBackward0()
    node.dims = wd
    return record(node, (a,), out)


class TrilBackward0(Node):
    __slots__ = ("diagonal",)

    def backward(self, g: Tensor) -> Tensor:
        return tril(g, self.diagonal)


class TriuBackward0(Node):
    __slots__ = ("diagonal",)

    def backward(self, g: Tensor) -> Tensor:
        return triu(g, self.diagonal)


def _tri(a: Tensor, diagonal: int, lower: bool) -> Tensor:
    x = a._array
    name = "tril" if lower else "triu"
    if x.ndim < 2:
        raise RuntimeError(
            f"{name}: input tensor must have at least 2 dimensions, got shape {tuple(x.shape)}. "
            "Reshape it to a matrix first."
        )
    if x.dtype.kind in "fV" and x.flags.c_contiguous:
        # (NumPy's tril/triu select with where(), a branch per element; the same mask and
        # zeros on the bits, one fresh array: select_grad)
        from gradsum.ops.elementwise import select_grad

        blocked = xp.tri(*x.shape[-2:], k=diagonal if lower else diagonal - 1, dtype=bool)
        out = select_grad(x, ~blocked if lower else blocked)
    else:
        out = (xp.tril if lower else xp.triu)(x, diagonal)
    if not needs_grad(a):
        return _make(out)
    node = TrilBackward0() if lower else TriuBackward0()
    node.diagonal = diagonal
    return record(node, (a,), out)


@register("tril")
def tril(a: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dimensions (the rest zeroed)."""
    return _tri(a, diagonal, True)


@register("triu")
def triu(a: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dimensions (the rest zeroed)."""
    return _tri(a, diagonal, False)
