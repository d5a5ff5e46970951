"""``t[key]``: the key's parsing (``split_key``, ``expand_ellipsis``, ``index_target``), basic
indexing as views and advanced indexing as copies (``getitem``), and the row-scatter kernels
their backward uses (``add_rows_at``, ``index_grad``).

Example:
    >>> import gradsum
    >>> x = gradsum.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> x[1].grad_fn.name()
    'SelectBackward0'
"""

from __future__ import annotations

import builtins
import warnings
from typing import Any

import gradsum.ops as F
from gradsum._backend import bincount as _bincount
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import _state
from gradsum.autograd.graph import HOLDS_STATE, Node
from gradsum.ops import _messages
from gradsum.ops._core import (
    _make,
    mark_view,
    needs_grad,
    record,
    tensor_method,
)

_max_reduce = xp.maximum.reduce
_min_reduce = xp.minimum.reduce


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
                raise IndexError(_messages.index_tensor_bad_dtype(k))
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
                raise TypeError(_messages.index_str_invalid_type(k))
            if arr.size == 0 and arr.dtype.kind in "fV":  # torch: [] is an empty int64 index
                arr = arr.astype(xp.int64)
            out.append(arr)
            advanced = True
        elif isinstance(k, (str, bytes)):
            raise TypeError(_messages.index_invalid_type(k))
        elif isinstance(k, bool):
            out.append(k)
            advanced = True
        else:
            if isinstance(k, slice) and k.step is not None and k.step <= 0:
                if shape is not None:
                    _check_before_step(key, out, shape)
                raise ValueError(_messages.slice_step_not_positive(k))
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
        raise IndexError(_messages.too_many_indices(shape, used))
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
                raise IndexError(_messages.index_out_of_bounds_for_dim(k, dim, size))
        dim += 1


class AliasBackward0(IndexBackward0):
    __slots__ = ()


# ``x[None]`` is torch's unsqueeze; the rule is still indexing's (index_grad).
class _IndexUnsqueezeBackward0(IndexBackward0, name="UnsqueezeBackward0"):
    __slots__ = ()


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
            raise IndexError(_messages.index_out_of_bounds_empty_result()) \
                from None


@tensor_method(dunders="__getitem__")
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
            raise IndexError(_messages.index_error_with_shape(e, x)) from None
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


def as_node(t: Tensor, cls: type[Node]) -> Tensor:
    """``t`` (just made, by a more general op: the values of a sort are a gather) with its
    grad_fn, a node of ``cls``'s base class (same slots, same rule), made again as a ``cls``,
    torch's node for the op: the state moves over whole, its sequence number included. A
    no-op when ``t`` has another grad_fn or none."""
    fn = t._grad_fn
    if fn is not None and type(fn) is cls.__base__:
        node = cls.__new__(cls)
        for k in cls.__mro__:
            for s in k.__dict__.get("__slots__", ()):
                if s != "__weakref__" and hasattr(fn, s):
                    setattr(node, s, getattr(fn, s))
        t._grad_fn = node
    return t


def _int_shape(s: Any) -> tuple[int, ...]:
    if isinstance(s, (int, xp.integer)):
        return (int(s),)
    return tuple(int(v) for v in s)
