"""Selection, order statistics and counting: ``median``/``nanmedian``/``kthvalue``/``mode``,
``quantile``/``nanquantile``, ``std_mean``/``var_mean``, ``aminmax``, ``unique`` and
``unique_consecutive``, ``bincount``/``histc``, ``searchsorted``/``bucketize``, ``meshgrid``,
``take`` and ``scatter_reduce``.

Each differentiable primitive has its own ``<Op>Backward0`` (torch's name) whose rule is written
in gradsum ops, so double backward works; the value-selecting reductions send the gradient to
the returned index, as torch's ``value_selecting_reduction_backward``. Ops that torch composes
(``quantile``, ``meshgrid``) are composed the same way, so their ``grad_fn`` is torch's.

Ties: the indices are torch's on CPU. ``median``/``nanmedian`` along a dim return the median's
position in the stable (value, index) order; ``kthvalue`` follows torch's quickselect (ported
below) and ``mode`` the last element of the mode's run after ``std::sort`` (libstdc++'s
introsort, ported below; beyond its depth limit, which needs adversarial inputs, the heap sort
fallback is replaced by a stable sort).

Example:
    >>> import gradsum
    >>> x = gradsum.tensor([3.0, 1.0, 2.0, 5.0], requires_grad=True)
    >>> v, i = gradsum.median(x, 0)
    >>> v.backward()
    >>> v.item(), i.item(), x.grad.tolist()
    (2.0, 2, [0.0, 0.0, 1.0, 0.0])
"""

from __future__ import annotations

import math
import warnings
from collections import namedtuple
from typing import Any

import gradsum.ops as F
from gradsum import _dtype as D
from gradsum._autocast import autocast_policy
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.graph import HOLDS_STATE, Node
from gradsum.ops._core import _make, needs_grad, record, register, wrap_dim
from gradsum.ops.more import _contig, _require_tensor, _tname
from gradsum.ops.reduction import (
    MaxBackward0,
    _correction,
    _dims,
    _expand_back,
    _kept_shape,
    _var_backward,
)
from gradsum.ops.shape import _FLAT_INDEX_MIN, _flat_along, _scatter_add

#: torch.return_types' named tuples (same names and fields)
median_t = namedtuple("median", ["values", "indices"])
nanmedian_t = namedtuple("nanmedian", ["values", "indices"])
kthvalue_t = namedtuple("kthvalue", ["values", "indices"])
mode_t = namedtuple("mode", ["values", "indices"])
aminmax_t = namedtuple("aminmax", ["min", "max"])


# -- value-selecting reductions: median(dim), nanmedian(dim), kthvalue, mode ------------------
class _SelectBackward(MaxBackward0):
    """torch's ``value_selecting_reduction_backward``: the gradient goes to the returned
    index along ``dim`` (max/min's rule: a scatter into zeros, whose own derivative is a
    gather)."""

    __slots__ = ()


class MedianBackward1(_SelectBackward):
    __slots__ = ()


class NanmedianBackward1(_SelectBackward):
    __slots__ = ()


class KthvalueBackward0(_SelectBackward):
    __slots__ = ()


class ModeBackward0(_SelectBackward):
    __slots__ = ()


def _rows(x: Any, d: int) -> Any:
    """``x`` with ``dim`` moved last, as a 2-D array of rows (a copy)."""
    m = xp.moveaxis(x, d, -1)
    return _contig(m).reshape(-1, m.shape[-1]), m.shape[:-1]


def _select_result(name: str, cls: type[_SelectBackward], tuple_t: Any, input: Tensor, d: int,
                   keepdim: bool, vals: Any, idx: Any) -> Any:
    """Wrap row results (``vals``/``idx`` of the leading shape) as torch's named tuple."""
    x = input._array
    if x.ndim and keepdim:
        vals, idx = xp.expand_dims(vals, d), xp.expand_dims(idx, d)
    vals = _contig(xp.asarray(vals, dtype=x.dtype))
    idx_t = _make(_contig(xp.asarray(idx, dtype=xp.int64)))
    if not needs_grad(input):
        return tuple_t(_make(vals), idx_t)
    node = cls()
    node.dim, node.indices, node.in_shape, node.keepdim = d, idx_t, x.shape, keepdim
    node._saved = HOLDS_STATE  # (torch saves the indices)
    return tuple_t(record(node, (input,), vals), idx_t)


def _check_dim_nonempty(name: str, x: Any, d: int) -> None:
    if x.ndim and x.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size. Reduce "
                         f"over a non-empty dim (input shape {tuple(x.shape)}).")


def _median_dim(input: Tensor, dim: int, keepdim: bool, ignore_nan: bool) -> Any:
    name = "nanmedian" if ignore_nan else "median"
    x = input._array
    d = wrap_dim(dim, x.ndim)
    _check_dim_nonempty(name, x, d)
    rows, lead = _rows(x.reshape(1) if x.ndim == 0 else x, d)
    n = rows.shape[1]
    isnan = xp.isnan(rows) if rows.dtype.kind in "fV" else xp.zeros(rows.shape, dtype=bool)
    if ignore_nan:
        m = n - isnan.sum(axis=1)
        pos = xp.maximum(m - 1, 0) // 2
    else:
        pos = xp.full(rows.shape[0], (n - 1) // 2)
    idx = _stable_pick(rows, pos)
    if not ignore_nan:  # torch.median: the first nan of a row is its median
        has = isnan.any(axis=1)
        idx = xp.where(has, xp.argmax(isnan, axis=1), idx)
    vals = rows[xp.arange(rows.shape[0]), idx]
    vals, idx = vals.reshape(lead), idx.reshape(lead)
    cls = NanmedianBackward1 if ignore_nan else MedianBackward1
    return _select_result(name, cls, nanmedian_t if ignore_nan else median_t, input, d,
                          keepdim, vals, idx)


def _stable_pick(rows: Any, pos: Any) -> Any:
    """Per row, the index a stable sort (nan last) puts at ``pos[row]``: found by a
    partition where the rows share few positions (the value, then its occurrence among
    equal ones in position order), else by the stable sort itself."""
    r = xp.arange(rows.shape[0])
    kths = xp.unique(pos)
    if rows.dtype.kind not in "fiu" or kths.size > 4 or not rows.size:
        return xp.argsort(rows, axis=1, kind="stable")[r, pos]
    v = xp.partition(rows, kths, axis=1)[r, pos][:, None]  # (nan last, as the sort)
    eq = rows == v
    if rows.dtype.kind == "f":
        eq |= xp.isnan(rows) & xp.isnan(v)
    idx = xp.argmax(eq, axis=1)
    count = eq.sum(axis=1)
    tied = xp.nonzero(count > 1)[0]
    if tied.size:  # the (pos - number smaller)-th of the equal ones, in position order
        t_rows, t_eq = rows[tied], eq[tied]
        below = (t_rows < v[tied]).sum(axis=1)
        if rows.dtype.kind == "f":  # (a nan's place comes after every number)
            below = xp.where(xp.isnan(v[tied, 0]), (~xp.isnan(t_rows)).sum(axis=1), below)
        nth = (pos[tied] - below)[:, None]
        idx[tied] = xp.argmax(t_eq & (xp.cumsum(t_eq, axis=1) == nth + 1), axis=1)
    return idx


class MedianBackward0(Node):
    """torch's ``evenly_distribute_backward``: the gradient is shared by the entries equal to
    the result (the nans, when the result is nan)."""

    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        a, out = self.saved()
        x, o = a._array, out._array
        mask = xp.isnan(x) if (o.dtype.kind in "fV" and xp.isnan(o)) else (x == o)
        count = int(mask.sum())
        share = F.div(g, count) if count else F.mul(g, math.nan)
        return F.where(_make(mask), share, F.zeros((), dtype=g.dtype))


class NanmedianBackward0(MedianBackward0):
    __slots__ = ()


def _median_all(input: Tensor, ignore_nan: bool) -> Tensor:
    x = input._array
    flat = x.reshape(-1)
    if flat.dtype.kind in "fV" and flat.size and (
            flat.dtype.kind == "V" or xp.isnan(flat.max())):  # (max: nan when one is)
        nan = xp.isnan(flat)
        if ignore_nan:
            flat = flat[~nan]
        elif nan.any():
            flat = xp.asarray([xp.nan], dtype=x.dtype)
    if flat.size == 0:
        if x.dtype.kind not in "fV":
            raise IndexError("median() input tensor cannot be empty (an integer tensor has no "
                             "nan to return). Pass a non-empty tensor.")
        out = xp.asarray(xp.nan, dtype=x.dtype)
    else:
        out = xp.asarray(_kth_smallest(flat, (flat.size - 1) // 2), dtype=x.dtype)
    out = xp.array(out)
    if not needs_grad(input):
        return _make(out)
    node = NanmedianBackward0() if ignore_nan else MedianBackward0()
    t = record(node, (input,), out)
    node.save(input, outputs=(t,))
    return t


#: from this many elements, :func:`_kth_smallest` narrows the search by a sample first
_SAMPLED_FROM = 1 << 15
#: the sample's size and the half-width of the window around the target's rank in it
#: (about four standard deviations of that rank)
_SAMPLE, _WINDOW = 4096, 128


def _kth_smallest(flat: Any, k: int) -> Any:
    """The ``k``-th smallest (0-based) of a 1-D array without nans: the element a sort puts
    at ``k``. From :data:`_SAMPLED_FROM` elements (numbers), Floyd and Rivest's narrowing:
    a strided sample's sorted values around ``k``'s rank bound a window ``[lo, hi]``; the
    elements inside it are partitioned alone when the number below ``lo`` shows that ``k``
    falls in it (else the whole array is, as for short ones). The value is exact either way.
    The sample's positions are ``i c mod n`` with Knuth's multiplicative-hash prime ``c``,
    so a periodic input (a tiled pattern) is not sampled at one phase."""
    n = flat.size
    if flat.dtype.kind not in "fiu":
        return xp.sort(flat)[k]
    if n >= _SAMPLED_FROM:
        s = xp.sort(flat[xp.arange(_SAMPLE, dtype=xp.int64) * 2654435761 % n])
        r = k * s.size // n
        lo, hi = s[max(0, r - _WINDOW)], s[min(s.size - 1, r + _WINDOW)]
        j = k - int(xp.count_nonzero(flat < lo))
        inside = flat >= lo
        inside &= flat <= hi
        mid = flat[xp.flatnonzero(inside)]
        if 0 <= j < mid.size:
            return xp.partition(mid, j)[j]
    return xp.partition(flat, k)[k]


@register("median")
def median(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """The lower median of all elements (a nan if any is nan); with ``dim``, the named tuple
    ``(values, indices)`` along it (ties: the median's position in the stable order).

    Example:
        >>> import gradsum
        >>> gradsum.median(gradsum.tensor([4.0, 1.0, 3.0, 2.0])).item()
        2.0
        >>> gradsum.median(gradsum.tensor([[1.0, 1.0, 0.0]]), 1).indices.tolist()
        [0]
    """
    _require_tensor("median", "input", 1, input)
    if dim is None:
        return _median_all(input, False)
    return _median_dim(input, dim, keepdim, False)


@register("nanmedian")
def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """:func:`median` ignoring nans (a nan only where every element is nan)."""
    _require_tensor("nanmedian", "input", 1, input)
    if dim is None:
        return _median_all(input, True)
    return _median_dim(input, dim, keepdim, True)


def _gt_or_nan(a: float, b: float) -> bool:
    return (a != a and b == b) or a > b


def _quickselect(vals: list[Any], k: int) -> int:
    """The index of the ``k``-th smallest (0-based) of ``vals`` as torch's CPU
    ``quick_select_template`` picks it (median-of-three Hoare partitions; nan largest)."""
    arr, ind = list(vals), list(range(len(vals)))

    def sw(i: int, j: int) -> None:
        arr[i], arr[j] = arr[j], arr[i]
        ind[i], ind[j] = ind[j], ind[i]

    lo, hi = 0, len(arr) - 1
    while True:
        if hi <= lo:
            break
        if hi == lo + 1:
            if _gt_or_nan(arr[lo], arr[hi]):
                sw(lo, hi)
            break
        p = lo + (hi - lo) // 2
        sw(p, lo + 1)
        if _gt_or_nan(arr[lo + 1], arr[hi]):
            sw(lo + 1, hi)
        if _gt_or_nan(arr[lo], arr[hi]):
            sw(lo, hi)
        if _gt_or_nan(arr[lo + 1], arr[lo]):
            sw(lo + 1, lo)
        i, j = lo + 1, hi
        piv = arr[lo]
        while True:
            i += 1
            while _gt_or_nan(piv, arr[i]):
                i += 1
            j -= 1
            while _gt_or_nan(arr[j], piv):
                j -= 1
            if j < i:
                break
            sw(i, j)
        sw(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return ind[k]


@register("kthvalue")
def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    """The ``k``-th smallest element along ``dim`` (1-based; nan is the largest) and its
    index, as torch's named tuple ``(values, indices)``; ties pick torch's index.

    Example:
        >>> import gradsum
        >>> gradsum.kthvalue(gradsum.tensor([3.0, 1.0, 2.0]), 2)
        kthvalue(values=tensor(2.), indices=tensor(2))
    """
    _require_tensor("kthvalue", "input", 1, input)
    x = input._array
    d = wrap_dim(dim, x.ndim)
    n = x.shape[d] if x.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d} "
                           f"(k={k}, size {n}): pass 1 <= k <= {n}")
    rows, lead = _rows(x.reshape(1) if x.ndim == 0 else x, d)
    r = xp.arange(rows.shape[0])
    v = None
    if rows.dtype.kind in "fiu" and rows.size:  # (a partition finds the value; an untied
        v = xp.partition(rows, k - 1, axis=1)[:, k - 1]  # one has a single index)
        idx = xp.argmax(rows == v[:, None], axis=1)
        if v.dtype.kind == "f" and xp.isnan(v).any():
            v = None
    if v is None:  # (a nan, or a dtype partition does not take: the stable sort's index)
        idx = xp.argsort(rows, axis=1, kind="stable")[r, k - 1].copy()
        v = rows[r, idx]
    if rows.dtype.kind in "fV":
        same = (rows == v[:, None]) | (xp.isnan(rows) & xp.isnan(v)[:, None])
    else:
        same = rows == v[:, None]
    for i in xp.nonzero(same.sum(axis=1) > 1)[0]:  # ties: torch's quickselect decides
        idx[i] = _quickselect(rows[i].tolist(), k - 1)
    vals = rows[r, idx]
    return _select_result("kthvalue", KthvalueBackward0, kthvalue_t, input, d, keepdim,
                          vals.reshape(lead), idx.reshape(lead))


# libstdc++'s std::sort (introsort + final insertion sort) on (value, index) pairs compared by
# value only: torch's CPU mode kernel reports the index of the last pair of the mode's run
def _std_sort(a: list[tuple[Any, int]]) -> None:
    n = len(a)
    if n < 2:
        return
    if not _introsort_loop(a, 0, n, 2 * (n.bit_length() - 1)):
        a.sort(key=lambda p: p[0])  # (heap sort fallback: not reproduced)
        return
    if n > 16:
        _insertion_sort(a, 0, 16)
        for i in range(16, n):
            _linear_insert(a, i)
    else:
        _insertion_sort(a, 0, n)


def _introsort_loop(a: list[tuple[Any, int]], first: int, last: int, depth: int) -> bool:
    while last - first > 16:
        if depth == 0:
            return False
        depth -= 1
        mid = first + (last - first) // 2
        x, y, z = first + 1, mid, last - 1
        if a[x][0] < a[y][0]:
            m = y if a[y][0] < a[z][0] else (z if a[x][0] < a[z][0] else x)
        elif a[x][0] < a[z][0]:
            m = x
        elif a[y][0] < a[z][0]:
            m = z
        else:
            m = y
        a[first], a[m] = a[m], a[first]
        lo, hi, piv = first + 1, last, a[first][0]
        while True:
            while a[lo][0] < piv:
                lo += 1
            hi -= 1
            while piv < a[hi][0]:
                hi -= 1
            if not lo < hi:
                break
            a[lo], a[hi] = a[hi], a[lo]
            lo += 1
        if not _introsort_loop(a, lo, last, depth):
            return False
        last = lo
    return True


def _insertion_sort(a: list[tuple[Any, int]], first: int, last: int) -> None:
    for i in range(first + 1, last):
        if a[i][0] < a[first][0]:
            val = a[i]
            a[first + 1:i + 1] = a[first:i]
            a[first] = val
        else:
            _linear_insert(a, i)


def _linear_insert(a: list[tuple[Any, int]], last: int) -> None:
    val = a[last]
    nxt = last - 1
    while val[0] < a[nxt][0]:
        a[last] = a[nxt]
        last = nxt
        nxt -= 1
    a[last] = val


def _mode_row(row: Any) -> tuple[Any, int]:
    pairs = list(zip(row.tolist(), range(row.size)))
    _std_sort(pairs)
    best_v, best_i, best_n, run = pairs[0][0], pairs[0][1], 0, 0
    for j, (v, i) in enumerate(pairs):
        run += 1
        if j == len(pairs) - 1 or v != pairs[j + 1][0]:
            if run > best_n:
                best_v, best_i, best_n = v, i, run
            run = 0
    return best_v, best_i


@register("mode")
def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> Any:
    """The most frequent value along ``dim`` (the smallest among equally frequent ones) and
    an index of it, as torch's named tuple ``(values, indices)`` (torch's index on CPU).

    Example:
        >>> import gradsum
        >>> gradsum.mode(gradsum.tensor([2, 1, 2, 1, 3]))
        mode(values=tensor(1), indices=tensor(3))
    """
    _require_tensor("mode", "input", 1, input)
    x = input._array
    d = wrap_dim(dim, x.ndim)
    _check_dim_nonempty("mode", x, d)
    rows, lead = _rows(x.reshape(1) if x.ndim == 0 else x, d)
    n = rows.shape[1]
    vals = xp.empty(rows.shape[0], dtype=x.dtype)
    idx = xp.empty(rows.shape[0], dtype=xp.int64)
    for i, row in enumerate(rows):
        if n <= 16 and not xp.isnan(row).any():  # (insertion sort: stable, so the mode's
            # last occurrence; a nan compares false both ways and moves the others around it)
            u, c = xp.unique(row, return_counts=True)
            v = u[int(xp.argmax(c))]
            vals[i], idx[i] = v, int(xp.nonzero(row == v)[0][-1])
        else:
            vals[i], idx[i] = _mode_row(row)
    return _select_result("mode", ModeBackward0, mode_t, input, d, keepdim,
                          vals.reshape(lead), idx.reshape(lead))


# -- quantile / nanquantile (torch composes them: sort, gather, lerp_, squeeze_) --------------
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name: str, input: Tensor, q: Any, dim: int | None, keepdim: bool,
              interpolation: str, ignore_nan: bool) -> Tensor:
    _require_tensor(name, "input", 1, input)
    x = input._array
    if x.size == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty (got shape "
                           f"{tuple(x.shape)})")
    if isinstance(q, Tensor) and q._array.ndim > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor (got shape "
                           f"{tuple(q.shape)})")
    if x.dtype.kind not in "fV":
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype (got "
                           f"{_tname(x.dtype)}); convert it with .float()")
    if isinstance(q, Tensor) and q._array.dtype != x.dtype:
        raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor (q "
                           f"{_tname(q._array.dtype)}, input {_tname(x.dtype)})")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    qa = q._array if isinstance(q, Tensor) else xp.asarray(q, dtype=x.dtype)
    qflat = qa.reshape(-1)
    bad = qflat[(qflat < 0) | (qflat > 1)]
    if bad.size:
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got "
                           f"{float(bad[0]):g}" if qa.ndim == 0 else
                           f"{name}() q values must be in the range [0, 1]")
    if dim is None:
        src = F.reshape(input, (-1,))
        red_shape: tuple[int, ...] = (1,) * x.ndim if keepdim else ()
    else:
        d = wrap_dim(dim, x.ndim)
        src = input if x.ndim else F.reshape(input, (1,))
        if x.ndim and d != x.ndim - 1:
            src = F.movedim(src, d, -1)
        red = list(x.shape)
        if x.ndim:
            red[d] = 1
        red_shape = tuple(red) if keepdim else tuple(s for i, s in enumerate(x.shape) if i != d)
    srt = F.sort(src, -1).values  # (nan last)
    lead = tuple(srt.shape[:-1])
    n = srt.shape[-1]
    nq = qflat.size
    srt = F.reshape(srt, (1,) + lead + (n,))
    s = srt._array
    qb = qflat.reshape((nq,) + (1,) * (len(lead) + 1)).astype(x.dtype)
    isnan = xp.isnan(s)
    with xp.errstate(invalid="ignore"):
        if ignore_nan:
            cnt = (~isnan).sum(axis=-1, keepdims=True).astype(x.dtype)
            ranks = qb * (cnt - 1)
            ranks = xp.where(ranks < 0, xp.zeros((), dtype=x.dtype), ranks)
        else:
            ranks = qb * xp.asarray(n - 1, dtype=x.dtype)
            ranks = xp.where(isnan.any(axis=-1, keepdims=True), xp.asarray(n - 1, x.dtype),
                             ranks)
    ranks = xp.broadcast_to(ranks, (nq,) + lead + (1,)).astype(x.dtype)
    if interpolation == "lower":
        ranks = xp.floor(ranks)
    elif interpolation == "higher":
        ranks = xp.ceil(ranks)
    elif interpolation == "nearest":
        ranks = xp.round(ranks)
    below = ranks.astype(xp.int64)
    full = F.expand(srt, (nq,) + lead + (n,))
    out = F.gather(full, -1, _make(_contig(below)))
    if interpolation in ("linear", "midpoint"):
        w = (xp.full(ranks.shape, 0.5, dtype=x.dtype) if interpolation == "midpoint"
             else (ranks - below).astype(x.dtype))
        above = F.gather(full, -1, _make(_contig(xp.ceil(ranks).astype(xp.int64))))
        out = F.lerp(out, above, _make(_contig(w)))
    shape = ((nq,) if qa.ndim else ()) + red_shape + (1,)
    out = F.reshape(out, shape)
    return F.squeeze_(out, -1)


@register("quantile")
@autocast_policy("quantile")
def quantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """The ``q``-th quantiles (``q`` a number, a 0-d or a 1-D tensor of the input's dtype)
    over ``dim`` (all elements by default); a 1-D ``q`` adds a leading dim. Rows with a nan
    give nan.

    Example:
        >>> import gradsum
        >>> gradsum.quantile(gradsum.tensor([1.0, 2.0, 3.0, 4.0]), 0.5).item()
        2.5
    """
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


@register("nanquantile")
@autocast_policy("nanquantile")
def nanquantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """:func:`quantile` ignoring nans (a nan only where a row is all nan)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


# -- std_mean / var_mean / aminmax: one node, two outputs --------------------------------------
class _TwoOut(Node):
    __slots__ = ("correction", "dims", "full", "in_shape", "keepdim")
    num_outputs = 2

    def _materialize(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        return grads  # (the rules take a None gradient for an unused output)


class VarMeanBackward0(_TwoOut):
    """torch's ``var_mean`` rule: var's gradient plus mean's."""

    __slots__ = ()

    def backward(self, gv: Tensor | None, gm: Tensor | None) -> Tensor | None:
        (a,) = self.saved()[:1]
        res = None if gv is None else _var_backward(gv, a, self)
        return _add_mean_grad(res, gm, self)


class StdMeanBackward0(_TwoOut):
    """torch's ``std_mean`` rule: std's gradient (0 where the std is 0) plus mean's."""

    __slots__ = ()

    def backward(self, gs: Tensor | None, gm: Tensor | None) -> Tensor | None:
        a, out = self.saved()
        res = None
        if gs is not None:
            with xp.errstate(divide="ignore", invalid="ignore"):
                g_var = F.div(gs, F.mul(out, 2))
            g_var = F.where(_make(out._array == 0), F.zeros((), dtype=gs.dtype), g_var)
            res = _var_backward(g_var, a, self)
        return _add_mean_grad(res, gm, self)


def _add_mean_grad(res: Tensor | None, gm: Tensor | None, node: _TwoOut) -> Tensor | None:
    if gm is None:
        return res
    n = 1
    for d in node.dims:
        n *= node.in_shape[d]
    gmean = F.div(_expand_back(gm, node.in_shape, node.dims, node.keepdim), n)
    return gmean if res is None else F.add(res, gmean)


def _welford_nonfinite_mean(x: Any, m: Any, dims: tuple[int, ...]) -> Any:
    """The mean ``m`` (reduced with keepdims) as torch's Welford kernel gives it where a slice
    holds an inf or nan: each step adds ``(x - mean) / k``, so after an infinite mean any
    further element gives ``inf - inf``: the mean is +-inf only when the slice's one
    non-finite element is an infinity at its end (in the reduction's order), otherwise nan."""
    rest = [d for d in range(x.ndim) if d not in dims]
    flat = x.transpose(rest + list(dims)).reshape([x.shape[d] for d in rest] + [-1])
    bad = ~xp.isfinite(flat)
    keep_inf = (bad.sum(axis=-1) == 1) & xp.isinf(flat[..., -1])
    nan_at = (bad.any(axis=-1) & ~keep_inf).reshape(m.shape)
    return xp.where(nan_at, math.nan, m).astype(m.dtype, copy=False)


def _stat_mean(name: str, input: Tensor, dim: Any, unbiased: Any, keepdim: bool,
               correction: Any, is_std: bool) -> tuple[Tensor, Tensor]:
    _require_tensor(name, "input", 1, input)
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    x = input._array
    if x.dtype.kind not in "fV":
        raise RuntimeError(f"{name} only support floating point and complex dtypes (got "
                           f"{_tname(x.dtype)}); convert the input with .float()")
    corr = _correction(unbiased, correction)
    dims = _dims(dim, x.ndim)
    n = 1
    for d in dims:
        n *= x.shape[d]
    with xp.errstate(invalid="ignore", divide="ignore"):
        m = x.mean(axis=dims, keepdims=True)
        v = ((x - m) ** 2).sum(axis=dims, keepdims=keepdim) / max(n - corr, 0)
        if n and not xp.isfinite(m).all():
            m = _welford_nonfinite_mean(x, m, dims)
        first = xp.sqrt(v) if is_std else v
        mean = m if keepdim else m.reshape(xp.sum(x, axis=dims).shape)
    first = _contig(xp.asarray(first, dtype=x.dtype))
    mean = _contig(xp.asarray(mean, dtype=x.dtype))
    if not needs_grad(input):
        return (_make(first), _make(mean))
    node: _TwoOut = StdMeanBackward0() if is_std else VarMeanBackward0()
    node.dims, node.in_shape, node.keepdim, node.correction = dims, x.shape, keepdim, corr
    node.full = dim is None or x.ndim == 0
    t0 = record(node, (input,), first)
    t1 = Tensor._make(mean, False, node, 1)
    if is_std:
        node.save(input, outputs=(t0,))
    else:
        node.save(input)
    return (t0, t1)


@register("var_mean")
def var_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
             correction: Any = None) -> tuple[Tensor, Tensor]:
    """``(var, mean)`` over ``dim`` in one node (``correction=1`` by default).

    Example:
        >>> import gradsum
        >>> v, m = gradsum.var_mean(gradsum.tensor([1.0, 2.0, 3.0]), correction=0)
        >>> round(v.item(), 4), m.item()
        (0.6667, 2.0)
    """
    return _stat_mean("var_mean", input, dim, unbiased, keepdim, correction, False)


@register("std_mean")
def std_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
             correction: Any = None) -> tuple[Tensor, Tensor]:
    """``(std, mean)`` over ``dim`` in one node (``correction=1`` by default)."""
    return _stat_mean("std_mean", input, dim, unbiased, keepdim, correction, True)


class AminmaxBackward0(_TwoOut):
    """Each of min and max shares its gradient evenly among its tied elements (amin/amax)."""

    __slots__ = ()

    def backward(self, gmin: Tensor | None, gmax: Tensor | None) -> Tensor | None:
        a, lo, hi = self.saved()
        res = None
        for g, out in ((gmin, lo), (gmax, hi)):
            if g is None:
                continue
            o = out._array
            if not self.keepdim and self.dims:
                o = o.reshape(_kept_shape(self.in_shape, self.dims))
            mask = a._array == o
            w = _make((mask / mask.sum(axis=self.dims, keepdims=True)).astype(g._array.dtype))
            part = F.mul(_expand_back(g, self.in_shape, self.dims, self.keepdim), w)
            res = part if res is None else F.add(res, part)
        return res


@register("aminmax")
def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> Any:
    """The named tuple ``(min, max)`` over ``dim`` (all elements by default); ties share the
    gradient evenly, as amin/amax.

    Example:
        >>> import gradsum
        >>> gradsum.aminmax(gradsum.tensor([[1, 5], [3, 2]]), dim=1)
        aminmax(min=tensor([1, 2]), max=tensor([5, 3]))
    """
    _require_tensor("aminmax", "input", 1, input)
    x = input._array
    if dim is None:
        dims = tuple(range(x.ndim))
        if x.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               f"operation has no identity (input shape {tuple(x.shape)}).")
    else:
        d = wrap_dim(dim, x.ndim)
        dims = (d,) if x.ndim else ()
        if x.ndim and x.shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size (input "
                             f"shape {tuple(x.shape)}). Reduce over a non-empty dim.")
    kd = keepdim and dim is not None  # (torch: keepdim applies only with a dim)
    if dim is None and keepdim and x.ndim:
        kd = True
    lo = _contig(xp.asarray(xp.min(x, axis=dims, keepdims=kd), dtype=x.dtype))
    hi = _contig(xp.asarray(xp.max(x, axis=dims, keepdims=kd), dtype=x.dtype))
    if not needs_grad(input):
        return aminmax_t(_make(lo), _make(hi))
    node = AminmaxBackward0()
    node.dims, node.in_shape, node.keepdim = dims, x.shape, kd
    t0 = record(node, (input,), lo)
    t1 = Tensor._make(hi, False, node, 1)
    node.save(input, outputs=(t0, t1))
    return aminmax_t(t0, t1)


# -- unique / unique_consecutive (not differentiable: torch's node raises in backward) --------
class _NotDifferentiable(Node):
    __slots__ = ()
    _fn = ""

    def backward(self, *grads: Tensor | None) -> Tensor:
        raise NotImplementedError(f"the derivative for '{self._fn}' is not implemented.")


class Unique2Backward0(_NotDifferentiable):
    __slots__ = ()
    _fn = "_unique2"


class UniqueDimBackward0(_NotDifferentiable):
    __slots__ = ()
    _fn = "unique_dim"


class UniqueConsecutiveBackward0(_NotDifferentiable):
    __slots__ = ()
    _fn = "unique_consecutive"


def _unique_outputs(input: Tensor, node_cls: type[_NotDifferentiable], out: Any, inv: Any,
                    counts: Any, return_inverse: bool, return_counts: bool) -> Any:
    vals = _make(_contig(out))
    if needs_grad(input) and input._array.dtype.kind in "fV":
        vals = record(node_cls(), (input,), _contig(out))
    res: list[Tensor] = [vals]
    # (the index arrays are new, made by the caller: int64 ones are kept, not copied)
    if return_inverse:
        res.append(_make(_contig(inv.astype(xp.int64, copy=False))))
    if return_counts:
        res.append(_make(_contig(counts.astype(xp.int64, copy=False))))
    return res[0] if len(res) == 1 else tuple(res)


@register("unique")
def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim: int | None = None) -> Any:
    """The distinct elements (sorted; torch's CPU kernel sorts with ``sorted=False`` too),
    optionally with each input element's position in them (``return_inverse``, the input's
    shape) and the counts; with ``dim``, the distinct slices along it.

    Example:
        >>> import gradsum
        >>> gradsum.unique(gradsum.tensor([3, 1, 3]), return_inverse=True, return_counts=True)
        (tensor([1, 3]), tensor([1, 0, 1]), tensor([1, 2]))
    """
    _require_tensor("unique", "input", 1, input)
    x = input._array
    if dim is None:
        out, inv, counts = xp.unique(x.reshape(-1), return_inverse=True, return_counts=True)
        inv = inv.reshape(x.shape)
        return _unique_outputs(input, Unique2Backward0, out, inv, counts, return_inverse,
                               return_counts)
    d = wrap_dim(dim, x.ndim)
    if x.ndim == 0:
        out, inv, counts = x.reshape(1), xp.zeros(1, xp.int64), xp.ones(1, xp.int64)
        return _unique_outputs(input, UniqueDimBackward0, out, inv, counts, return_inverse,
                               return_counts)
    if x.shape[d] == 0:
        return _unique_outputs(input, UniqueDimBackward0, x.copy(), xp.zeros(0, xp.int64),
                               xp.zeros(0, xp.int64), return_inverse, return_counts)
    if x.size == 0:
        raise RuntimeError(f"Number of zero sized dimensions is more than one, so unique cannot "
                           f"be applied here (shape {tuple(x.shape)}, dim {d})")
    out, inv, counts = xp.unique(x, return_inverse=True, return_counts=True, axis=d)
    return _unique_outputs(input, UniqueDimBackward0, out, inv.reshape(-1), counts,
                           return_inverse, return_counts)


@register("unique_consecutive")
def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> Any:
    """Collapse each run of equal consecutive elements (slices along ``dim``) to one, with
    the inverse and counts as :func:`unique`.

    Example:
        >>> import gradsum
        >>> gradsum.unique_consecutive(gradsum.tensor([1, 1, 2, 1]), return_counts=True)
        (tensor([1, 2, 1]), tensor([2, 1, 1]))
    """
    _require_tensor("unique_consecutive", "input", 1, input)
    x = input._array
    if dim is None:
        flat = x.reshape(-1)
        slabs = flat
        axis = 0
    else:
        axis = wrap_dim(dim, x.ndim)
        slabs = x if x.ndim else x.reshape(1)
    m = xp.moveaxis(slabs, axis, 0)
    n = m.shape[0]
    if n == 0:
        out = slabs.copy()
        inv = xp.zeros(x.shape if dim is None else (0,), xp.int64)
        return _unique_outputs(input, UniqueConsecutiveBackward0, out, inv, xp.zeros(0, xp.int64),
                               return_inverse, return_counts)
    flat_m = m.reshape(n, -1)
    change = xp.ones(n, dtype=bool)
    if n > 1 and flat_m.shape[1] == 1:  # (single elements: no reduction along rows)
        col = flat_m[:, 0]
        xp.not_equal(col[1:], col[:-1], out=change[1:])
    elif n > 1:
        change[1:] = (flat_m[1:] != flat_m[:-1]).any(axis=1)
    starts = xp.nonzero(change)[0]
    inv = change.astype(xp.int64)
    xp.cumsum(inv, out=inv)  # (in place: several times faster than into a new array)
    inv -= 1
    counts = xp.diff(xp.append(starts, n))
    out = xp.moveaxis(m[starts], 0, axis)
    if dim is None:
        inv = inv.reshape(x.shape)
    return _unique_outputs(input, UniqueConsecutiveBackward0, out, inv, counts, return_inverse,
                           return_counts)


# -- bincount / histc --------------------------------------------------------------------------
class _NoDerivative(Node):
    """The node torch attaches where an op has no derivative formula (its backward raises)."""

    __slots__ = ("op",)

    def backward(self, g: Tensor) -> Tensor:
        raise RuntimeError(f"derivative for aten::{self.op} is not implemented")


_NoDerivative.__name__ = _NoDerivative.__qualname__ = "NotImplemented"  # (torch's node name)


@register("bincount")
def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value ``0 .. max`` occurs in a 1-D non-negative integer tensor (at
    least ``minlength`` bins), or the sums of ``weights`` per value.

    Example:
        >>> import gradsum
        >>> gradsum.bincount(gradsum.tensor([1, 1, 3]), minlength=5).tolist()
        [0, 2, 0, 1, 0]
    """
    _require_tensor("bincount", "input", 1, input)
    x = input._array
    if x.dtype.kind not in "iu" and x.dtype.kind != "b":
        raise D.not_implemented("bincount_cpu", x.dtype, "Convert the input with .long().")
    if minlength < 0:
        raise RuntimeError(f"minlength should be >= 0 (got {minlength})")
    if x.ndim != 1 or (x.size and x.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs. (got shape "
                           f"{tuple(x.shape)}{', with negative values' if x.ndim == 1 else ''})")
    if weights is not None:
        w = weights._array
        if w.ndim != 1 or w.shape[0] != x.shape[0]:
            raise RuntimeError("weights should be 1-d and have the same length as input (input "
                               f"{tuple(x.shape)}, weights {tuple(w.shape)})")
        odt = xp.float32 if w.dtype == xp.float32 else xp.float64
        out = xp.bincount(x, w.astype(xp.float64), minlength).astype(odt)
        if needs_grad(weights):
            node = _NoDerivative()
            node.op = "bincount"
            return record(node, (weights,), _contig(out))
        return _make(_contig(out))
    return _make(xp.bincount(x.astype(xp.int64, copy=False), minlength=minlength
                             ).astype(xp.int64, copy=False))  # (no copies of int64 arrays)


@register("histc")
def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """A histogram of ``bins`` equal-width bins between ``min`` and ``max`` (the data's range
    when both are 0; values outside are ignored). Not differentiable.

    Example:
        >>> import gradsum
        >>> gradsum.histc(gradsum.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3).tolist()
        [0.0, 2.0, 1.0, 0.0]
    """
    _require_tensor("histc", "input", 1, input)
    x = input._array
    if x.dtype.kind not in "fV":
        raise D.not_implemented("histogram_cpu", x.dtype, "Convert the input with .float().")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError(f"torch.histc: max must be larger than min (min={min}, max={max})")
    flat = x.reshape(-1).astype(xp.float64)
    keep = flat[(flat >= lo) & (flat <= hi)]
    pos = xp.floor((keep - lo) * bins / (hi - lo)).astype(xp.int64)
    pos = xp.minimum(pos, bins - 1)
    return _make(xp.bincount(pos, minlength=bins).astype(x.dtype))


# -- searchsorted / bucketize ------------------------------------------------------------------
@register("searchsorted")
def searchsorted(sorted_sequence: Tensor, input: Any, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None, sorter: Tensor | None = None
                 ) -> Tensor:
    """For each value of ``input``, the index where it would be inserted into the innermost
    dim of ``sorted_sequence`` to keep it sorted (``right``/``side="right"``: after equal
    values). ``sorter`` sorts an unsorted sequence.

    Example:
        >>> import gradsum
        >>> seq = gradsum.tensor([1.0, 3.0, 5.0])
        >>> gradsum.searchsorted(seq, gradsum.tensor([3.0, 6.0]), right=True).tolist()
        [2, 3]
    """
    _require_tensor("searchsorted", "sorted_sequence", 1, sorted_sequence)
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    seq = sorted_sequence._array
    scalar = not isinstance(input, Tensor)
    vals = xp.asarray(input) if scalar else input._array
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    if seq.ndim > 1 and (scalar or vals.ndim != seq.ndim or vals.shape[:-1] != seq.shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq.shape)} and input value tensor {list(vals.shape)}")
    if sorter is not None:
        srt = sorter._array
        if srt.shape != seq.shape:
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same "
                               f"size, but got boundary tensor {list(seq.shape)}and got sorter "
                               f"tensor {list(srt.shape)}")
        if srt.dtype != xp.int64:
            raise TypeError("torch.searchsorted(): sorter must be a tensor of long dtype but got "
                            f"dtype {_tname(srt.dtype)}")
        seq = xp.take_along_axis(seq, srt, axis=-1)
    s = "right" if right else "left"
    if seq.ndim == 1:
        out = xp.searchsorted(seq, vals, side=s)
    else:
        r = seq.reshape(-1, seq.shape[-1])
        v = vals.reshape(r.shape[0], -1)
        out = xp.stack([xp.searchsorted(r[i], v[i], side=s) for i in range(r.shape[0])])
        out = out.reshape(vals.shape)
    return _make(_contig(xp.asarray(out, dtype=xp.int32 if out_int32
                                                  else xp.int64)))


@register("bucketize")
def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False
              ) -> Tensor:
    """The bucket of each value of ``input`` among the sorted 1-D ``boundaries`` (``right``:
    ``boundaries[i-1] <= x < boundaries[i]``; default ``boundaries[i-1] < x <= boundaries[i]``).

    Example:
        >>> import gradsum
        >>> gradsum.bucketize(gradsum.tensor([1, 4, 9]), gradsum.tensor([1, 5, 9])).tolist()
        [0, 1, 2]
    """
    _require_tensor("bucketize", "boundaries", 2, boundaries)
    if boundaries._array.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries._array.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


# -- meshgrid (views of the inputs, as torch's: view + expand) ---------------------------------
@register("meshgrid")
def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids from 0-d/1-D tensors: with ``indexing='ij'`` output ``i`` varies along
    dim ``i``; ``'xy'`` swaps the first two dims. The outputs are expanded views.

    Example:
        >>> import gradsum
        >>> a, b = gradsum.meshgrid(gradsum.tensor([1, 2]), gradsum.tensor([3, 4, 5]),
        ...                         indexing="ij")
        >>> a.shape, b.tolist()[0]
        ((2, 3), [3, 4, 5])
    """
    ts = tuple(tensors[0]) if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) \
        else tensors
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f"received: {indexing}")
    if not ts:
        raise RuntimeError("torch.meshgrid expects a non-empty TensorList")
    for i, t in enumerate(ts):
        _require_tensor("meshgrid", "tensors", i + 1, t)
        if t._array.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got a tensor of shape {tuple(t.shape)}")
    for t in ts[1:]:
        if t._array.dtype != ts[0]._array.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype (got "
                               f"{_tname(ts[0]._array.dtype)} and {_tname(t._array.dtype)})")
    axes = list(range(len(ts)))
    if indexing == "xy" and len(ts) >= 2:  # (the first two dims swap places)
        axes[0], axes[1] = 1, 0
    grid = [0] * len(ts)
    for t, ax in zip(ts, axes):
        grid[ax] = int(t._array.size)
    outs = []
    for t, ax in zip(ts, axes):
        shape = [1] * len(ts)
        shape[ax] = -1
        outs.append(F.expand(F.view(t, tuple(shape)), tuple(grid)))
    return tuple(outs)


# -- take --------------------------------------------------------------------------------------
class TakeBackward0(Node):
    """torch's ``take_backward``: the gradient added at the (flat) indices of a zero tensor."""

    __slots__ = ("flat_index", "in_shape")

    def backward(self, g: Tensor) -> Tensor:
        n = 1
        for s in self.in_shape:
            n *= s
        # (scatter_add into zeros made here: filled in place, not copied first)
        flat = _scatter_add(F.zeros((n,), dtype=g.dtype), 0, self.flat_index,
                            F.reshape(g, (-1,)), self.flat_index._array, fresh=True)
        return F.reshape(flat, self.in_shape)


@register("take")
def take(input: Tensor, index: Tensor) -> Tensor:
    """The elements of ``input`` read as a flat array at ``index`` (negative counts from the
    end); the result has ``index``'s shape.

    Example:
        >>> import gradsum
        >>> gradsum.take(gradsum.tensor([[1, 2], [3, 4]]), gradsum.tensor([0, -1])).tolist()
        [1, 4]
    """
    _require_tensor("take", "input", 1, input)
    _require_tensor("take", "index", 2, index)
    x, idx = input._array, index._array
    if idx.dtype != xp.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{_tname(idx.dtype)}. Convert it with .long().")
    n = x.size
    bad = idx[(idx < -n) | (idx >= n)]
    if bad.size:
        raise IndexError(f"out of range: tried to access index {int(bad.reshape(-1)[0])} on a "
                         f"tensor of {n} elements.")
    wrapped = xp.where(idx < 0, idx + n, idx)
    out = _contig(x.reshape(-1)[wrapped])
    if not needs_grad(input):
        return _make(out)
    node = TakeBackward0()
    node.flat_index, node.in_shape = _make(wrapped.reshape(-1)), x.shape
    node._saved = HOLDS_STATE  # (torch saves the index)
    return record(node, (input,), out)


# -- scatter_reduce ----------------------------------------------------------------------------
_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _scatter_reduce_array(x: Any, d: int, idx: Any, s: Any, reduce: str, include_self: bool
                          ) -> Any:
    """The result of scatter_reduce."""
    out = x.copy()
    key = _along_key(idx, d, x.shape)
    s = s[tuple(slice(0, k) for k in idx.shape)].astype(x.dtype, copy=False)
    if not include_self:
        hit = _hit_mask(x.shape, key)
        init = {"sum": 0, "mean": 0, "prod": 1}.get(reduce)
        if init is not None:
            out[hit] = init
        elif reduce == "amax":
            out[hit] = -xp.inf if x.dtype.kind in "fV" else xp.iinfo(x.dtype).min
        else:
            out[hit] = xp.inf if x.dtype.kind in "fV" else xp.iinfo(x.dtype).max
    if reduce in ("sum", "mean"):
        _at(xp.add, out, key, s)
        if reduce == "mean":
            cnt = xp.zeros(x.shape, dtype=xp.int64) + (1 if include_self else 0)
            _at(xp.add, cnt, key, 1)
            cnt = xp.maximum(cnt, 1)
            out = out / cnt if x.dtype.kind in "fV" else out // cnt
    elif reduce == "prod":
        _at(xp.multiply, out, key, s)
    elif reduce == "amax":
        _at(xp.maximum, out, key, s)
    else:
        _at(xp.minimum, out, key, s)
    return _contig(out.astype(x.dtype, copy=False))


def _hit_mask(shape: tuple[int, ...], key: Any) -> Any:
    """A bool mask of the positions :func:`_along_key`'s ``key`` writes."""
    hit = xp.zeros(shape, dtype=bool)
    _on(hit, key)[key] = True
    return hit


def _along_key(idx: Any, d: int, shape: tuple[int, ...]) -> Any:
    """The index that picks ``idx`` along ``d`` (and position i elsewhere) in an array of
    ``shape``: from :data:`_FLAT_INDEX_MIN` indices its flat positions as one 1-D array
    (``idx``'s C order), for the 1-D view that :func:`_on` gives, else that tuple. NumPy's
    ``ufunc.at`` runs 10-15 times faster with one 1-D index and 1-D values than with a tuple
    of broadcast ones (or an N-D index); see :func:`_at` for the order."""
    if idx.ndim and idx.size >= _FLAT_INDEX_MIN:
        return _flat_along(idx, d, shape).reshape(-1)
    grids = list(xp.indices(idx.shape, sparse=True))
    grids[d] = idx
    return tuple(grids)


def _on(a: Any, key: Any) -> Any:
    """What :func:`_along_key`'s ``key`` indexes: ``a`` (C-contiguous) as a 1-D view for
    flat positions, else ``a``."""
    if isinstance(key, tuple):
        return a
    assert a.flags.c_contiguous  # (a reshape would copy: the writes would be lost)
    return a.reshape(-1)


def _at(op: Any, a: Any, key: Any, vals: Any) -> None:
    """``op.at(a, key, vals)`` in place for :func:`_along_key`'s ``key`` (``vals`` of
    ``idx``'s shape, or a number). Flat positions visit the elements in the same C order of
    ``idx`` as the tuple, so each position is updated in the same order (the same bits); a
    count (adding the number 1, which ``ufunc.at`` runs element by element) is a
    ``bincount``, exact in integers."""
    if isinstance(key, tuple):
        op.at(a, key, vals)
        return
    flat = _on(a, key)
    if op is xp.add and isinstance(vals, int) and vals == 1:
        flat += xp.bincount(key, minlength=flat.size).astype(a.dtype, copy=False)
        return
    op.at(flat, key, xp.reshape(vals, -1))


class ScatterReduceBackward0(Node):
    """torch's ``scatter_reduce_backward`` (sum, mean, prod, amax, amin; ``include_self``)."""

    __slots__ = ("dim", "include_self", "index", "reduce")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        x, src, out = self.saved()
        d, idx, red = self.dim, self.index, self.reduce
        if red not in _REDUCES:
            raise RuntimeError(f"Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', "
                               f"'amin' but got {red}.")
        hit = (_make(_hit_mask(x.shape, _along_key(idx._array, d, x.shape)))
               if not self.include_self else None)
        zero = F.zeros((), dtype=g.dtype)
        gs = gsrc = None
        if red == "sum":
            gs = g
            gsrc = F.gather(g, d, idx)
        elif red == "mean":
            cnt = xp.zeros(x.shape, dtype=g._array.dtype) + (1 if self.include_self else 0)
            _at(xp.add, cnt, _along_key(idx._array, d, x.shape), 1)
            cnt = _make(xp.maximum(cnt, 1).astype(g._array.dtype))
            gs = F.div(g, cnt)
            gsrc = F.gather(gs, d, idx)
        elif red == "prod":
            gs, gsrc = _scatter_prod_grads(g, x, src, out, d, idx, self.include_self)
        else:
            # torch multiplies by the masks (an inf or nan gradient gives nan where the
            # element is not the extreme) and divides by the tie count, 0 where the result
            # is nan (nothing equals it)
            value = F.gather(out, d, idx)
            dt = g._array.dtype
            s_used = F.getitem(src, tuple(slice(0, k) for k in idx.shape))
            self_is = (x._array == out._array).astype(dt)
            src_is = (s_used._array == value._array).astype(dt)
            n = self_is.copy()
            _at(xp.add, n, _along_key(idx._array, d, x.shape), src_is)
            with xp.errstate(divide="ignore", invalid="ignore"):
                dist = F.div(g, _make(n))
            gs = F.mul(_make(self_is), dist)
            gsrc = F.mul(_make(src_is), F.gather(dist, d, idx))
        if hit is not None:
            gs = F.where(hit, zero, gs)
        if gsrc is not None and tuple(gsrc.shape) != tuple(src.shape):
            full = F.zeros(tuple(src.shape), dtype=g.dtype)
            gsrc = F.scatter_add(full, d, _make(_arange_like(idx._array, d)), gsrc)
        return (gs if self.needs(0) else None, gsrc if self.needs(1) else None)


class DelayedError(Node):
    """A gradient whose own derivative torch does not provide: passing through it is
    fine, differentiating it raises (torch's ``DelayedError`` node)."""

    __slots__ = ("msg",)

    def name(self) -> str:
        return "Error"  # (torch's grad_fn shows <Error>)

    def backward(self, g: Tensor) -> Tensor:
        raise RuntimeError(self.msg)


def _scatter_prod_grads(g: Tensor, x: Tensor, src: Tensor, out: Tensor, d: int, idx: Tensor,
                        include_self: bool) -> tuple[Tensor, Tensor]:
    """torch's ``scatter_reduce_backward`` for ``'prod'``: the product of the others by
    reducing again with the zeros masked to 1 (one zero among a position's sources: the
    product of the others; two or more: 0, and a double backward that raises)."""
    xa = x._array
    used = tuple(slice(0, k) for k in idx.shape)
    s_used = F.getitem(src, used)
    masked_self = F.masked_fill(x, _make(xa == 0), 1.0)
    gs = F.div(F.mul(g, scatter_reduce(masked_self, d, idx, src, "prod",
                                       include_self=include_self)), masked_self)
    src_zero = s_used._array == 0
    nz = xp.zeros(xa.shape, dtype=xp.int64)
    _at(xp.add, nz, _along_key(idx._array, d, xa.shape), src_zero)
    num_zeros = xp.take_along_axis(nz, idx._array, d)
    single = src_zero & (num_zeros == 1)
    single_full = xp.zeros(src.shape, dtype=bool)
    single_full[used] = single
    masked_src = F.masked_fill(src, _make(single_full), 1.0)
    others = scatter_reduce(x, d, idx, masked_src, "prod", include_self=include_self)
    gsrc = F.where(_make(single), F.gather(F.mul(g, others), d, idx),
                   F.div(F.gather(F.mul(g, out), d, idx),
                         F.masked_fill(s_used, _make(src_zero), 1.0)))
    if (num_zeros > 1).any() and gsrc.requires_grad:
        node = DelayedError()
        node.msg = ("scatter_reduce(): Double backward is unsupported for src when >1 zeros "
                    "in src are scattered to the same position in self")
        gsrc = record(node, (gsrc,), gsrc._array)
    return gs, gsrc


def _arange_like(idx: Any, d: int) -> Any:
    """Indices ``0 .. idx.shape[d]-1`` along ``d`` broadcast to ``idx``'s shape."""
    shape = [1] * idx.ndim
    shape[d] = idx.shape[d]
    return _contig(xp.broadcast_to(xp.arange(idx.shape[d]).reshape(shape),
                                                idx.shape))


@register("scatter_reduce")
def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """``input`` with each ``src[i][j]`` reduced into position ``[index[i][j]][j]`` (for
    ``dim=0``) by ``reduce`` (sum, prod, mean, amax, amin); ``include_self=False`` leaves the
    input's value out of the positions written.

    Example:
        >>> import gradsum
        >>> x = gradsum.tensor([1.0, 2.0])
        >>> src = gradsum.tensor([5.0, 3.0, 4.0])
        >>> gradsum.scatter_reduce(x, 0, gradsum.tensor([0, 0, 1]), src, "amax").tolist()
        [5.0, 4.0]
    """
    _require_tensor("scatter_reduce", "input", 1, input)
    _require_tensor("scatter_reduce", "index", 3, index)
    _require_tensor("scatter_reduce", "src", 4, src)
    if reduce not in _REDUCES + ("max", "min"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    # (torch's kernel also takes "max"/"min" for amax/amin; its backward then raises)
    fwd = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    x, idx, s = input._array, index._array, src._array
    if idx.dtype != xp.int64:
        raise RuntimeError(f"scatter_reduce(): Expected dtype int64 for index, got "
                           f"{_tname(idx.dtype)}. Convert it with .long().")
    if x.dtype != s.dtype:
        raise RuntimeError(f"scatter_reduce(): Expected self.dtype to be equal to src.dtype "
                           f"(self {_tname(x.dtype)}, src {_tname(s.dtype)}). Convert src.")
    d = wrap_dim(dim, x.ndim)
    if not (idx.ndim == x.ndim == s.ndim):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor "
                           f"(index {idx.ndim}, self {x.ndim}, src {s.ndim})")
    if any(idx.shape[i] > s.shape[i] or (i != d and idx.shape[i] > x.shape[i])
           for i in range(x.ndim)):
        raise RuntimeError(f"Expected index {list(idx.shape)} to be no larger than self "
                           f"{list(x.shape)} apart from dimension {d} and to be no larger size "
                           f"than src {list(s.shape)}")
    size = x.shape[d] if x.ndim else 1
    bad = idx[(idx < 0) | (idx >= size)]
    if bad.size:
        raise RuntimeError(f"index {int(bad.reshape(-1)[0])} is out of bounds for dimension {d} "
                           f"with size {size}")
    if x.ndim == 0:
        res = scatter_reduce(F.reshape(input, (1,)), 0, F.reshape(index, (1,)),
                             F.reshape(src, (1,)), reduce, include_self=include_self)
        return F.reshape(res, ())
    out = _scatter_reduce_array(x, d, idx, s, fwd, include_self)
    if not needs_grad(input, src):
        return _make(out)
    node = ScatterReduceBackward0()
    node.dim, node.index, node.reduce, node.include_self = d, index, reduce, include_self
    t = record(node, (input, src), out)
    node.save(input, src, outputs=(t,))
    return t
