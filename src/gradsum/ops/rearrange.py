"""Copies that move elements: ``cat``/``stack`` and the ``*stack`` forms, ``roll``, ``rot90``,
``flip``/``fliplr``/``flipud``, ``tile``, ``repeat_interleave``, ``tril``/``triu``, ``diag``,
``diag_embed``, ``diagflat``, ``block_diag``, ``cartesian_prod``, ``combinations``,
``narrow_copy`` and ``meshgrid``.

Example:
    >>> import gradsum
    >>> gradsum.cat([gradsum.tensor([1, 2]), gradsum.tensor([3])]).tolist()
    [1, 2, 3]
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Sequence
from typing import Any

import gradsum.ops as F
from gradsum import _dtype as D
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import no_grad
from gradsum.autograd.graph import Node
from gradsum.ops import _core, _messages
from gradsum.ops._core import (
    _make,
    any_needs_grad,
    needs_grad,
    record,
    register,
    require_tensor,
    scalar_value,
    tensor_method,
    wrap_dim,
    wrap_dims,
)
from gradsum.ops._messages import torch_name
from gradsum.ops.indexing.subscript import _int_shape
from gradsum.ops.reduction import _contig
from gradsum.ops.views import (
    DiagonalBackward0,
    _diag_dims,
    _diag_view,
    _dims_arg,
    _sizes,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    diagonal,
    unsqueeze,
)


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
        raise ValueError(_messages.cat_empty_list())
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
        raise RuntimeError(_messages.cat_zero_dim())
    d = wrap_dim(dim, nd)
    arrays = [p._array if rt is None else p._array.astype(rt) for p in parts]
    for i, arr in enumerate(arrays):
        if arr.ndim != nd or builtins.any(
            arr.shape[k] != arrays[0].shape[k] for k in range(nd) if k != d
        ):
            raise RuntimeError(_messages.cat_sizes_mismatch(d, arrays, arr, i))
    out = xp.concatenate(arrays, axis=d)
    if not any_needs_grad(ts):
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
        raise RuntimeError(_messages.stack_empty_list())
    shp = ts[0]._array.shape
    for i, t in enumerate(ts):
        if t._array.shape != shp:
            raise RuntimeError(_messages.stack_sizes_mismatch(shp, t, i))
    d = wrap_dim(dim, len(shp) + 1)
    if len({t._array.dtype for t in ts}) > 1:  # mixed dtypes: cat promotes like torch
        return cat([unsqueeze(t, d) for t in ts], d)
    out = xp.stack([t._array for t in ts], axis=d)
    if not any_needs_grad(ts):
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


class FlipBackward0(Node):
    __slots__ = ("dims",)

    def backward(self, g: Tensor) -> Tensor:
        return flip(g, self.dims)


@register("flip", method=True)
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
        raise RuntimeError(_messages.tri_needs_2d(name, x))
    if x.dtype.kind in "fV" and x.flags.c_contiguous:
        # (NumPy's tril/triu select with where(), a branch per element; the same mask and
        # zeros on the bits, one fresh array: select_grad)
        from gradsum.ops.arithmetic import select_grad

        blocked = xp.tri(*x.shape[-2:], k=diagonal if lower else diagonal - 1, dtype=bool)
        out = select_grad(x, ~blocked if lower else blocked)
    else:
        out = (xp.tril if lower else xp.triu)(x, diagonal)
    if not needs_grad(a):
        return _make(out)
    node = TrilBackward0() if lower else TriuBackward0()
    node.diagonal = diagonal
    return record(node, (a,), out)


@register("tril", method=True, inplace="tril_")
def tril(a: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dimensions (the rest zeroed)."""
    return _tri(a, diagonal, True)


@register("triu", method=True, inplace="triu_")
def triu(a: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dimensions (the rest zeroed)."""
    return _tri(a, diagonal, False)


def _moved_last(a: Tensor, d: int) -> Tensor:
    return F.movedim(a, d, -1) if d != a.ndim - 1 else a


# -- roll / rot90 / flips ----------------------------------------------------------------------
class RollBackward0(Node):
    __slots__ = ("dims", "shifts")

    def backward(self, g: Tensor) -> Tensor:
        return roll(g, tuple(-s for s in self.shifts), self.dims)


@register("roll", method=True)
def roll(input: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    """Roll ``input`` by ``shifts`` along ``dims`` (elements leaving one end come back at the
    other); without ``dims`` the flattened tensor is rolled and the shape restored.

    Example:
        >>> import gradsum
        >>> gradsum.roll(gradsum.tensor([[1, 2, 3], [4, 5, 6]]), 1, 1).tolist()
        [[3, 1, 2], [6, 4, 5]]
    """
    sh = _dims_arg(shifts)
    x = input._array
    if dims is None:
        if len(sh) != 1:
            raise RuntimeError(_messages.roll_shifts_without_dims(sh))
        out = xp.roll(x.reshape(-1), sh[0]).reshape(x.shape)
        wd: tuple[int, ...] = ()
    else:
        dm = _dims_arg(dims)
        if not sh:
            raise RuntimeError(_messages.roll_shifts_required())
        if len(sh) != len(dm):
            raise RuntimeError(_messages.roll_shifts_dims_mismatch(sh, dm))
        if x.ndim == 0:
            raise IndexError(_messages.roll_dim_of_0d(dm))
        wd = tuple(wrap_dim(d, x.ndim) for d in dm)
        out = xp.roll(x, sh, wd)
    out = _contig(out)
    if out is x or xp.shares_memory(out, x):
        out = out.copy()
    if not needs_grad(input):
        return _make(out)
    node = RollBackward0()
    node.shifts, node.dims = sh, (wd if dims is not None else None)
    return record(node, (input,), out)


class Rot90Backward0(Node):
    __slots__ = ("dims", "k")

    def backward(self, g: Tensor) -> Tensor:
        return rot90(g, -self.k, self.dims)


def _rot90_last2(x: Any, kk: int) -> Any:
    """``rot90`` by ``kk`` (1 or 3) turns in the last two axes of a C-contiguous array of 2-,
    4- or 8-byte elements, as a new C-contiguous array. The transposed copy in two passes, as
    copy_c's fast path: 16 bytes at a time, then deinterleaved (NumPy's strided copy moves one
    element per step, 2-3x slower), with the flip folded into them (one turn: each row's
    16-byte groups in reverse order, then each group's elements reversed; three: the rows in
    reverse order). A width that is not a whole number of groups leaves its last few columns
    to a small strided copy."""
    w = 16 // x.dtype.itemsize
    lead, rows, cols = x.shape[:-2], x.shape[-2], x.shape[-1]
    r = cols % w
    c0 = cols - r
    out = xp.empty(lead + (cols, rows), x.dtype)
    wide = x[..., :c0].view(xp.complex128)
    wide = (wide[..., ::-1] if kk == 1 else wide[..., ::-1, :]).swapaxes(-1, -2).copy()
    parts = wide.view(x.dtype).reshape(lead + (c0 // w, rows, w)).swapaxes(-1, -2)
    dst = out[..., r:, :] if kk == 1 else out[..., :c0, :]
    # (splitting an axis: always a view of ``out``)
    dst.reshape(lead + (c0 // w, w, rows))[...] = parts[..., ::-1, :] if kk == 1 else parts
    if r:
        if kk == 1:
            out[..., :r, :] = x[..., c0:][..., ::-1].swapaxes(-1, -2)
        else:
            out[..., c0:, :] = x[..., ::-1, c0:].swapaxes(-1, -2)
    return out


@register("rot90", method=True)
def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times in the plane ``dims`` (from the first towards the
    second axis; a copy).

    Example:
        >>> import gradsum
        >>> gradsum.rot90(gradsum.tensor([[1, 2], [3, 4]])).tolist()
        [[2, 4], [1, 3]]
    """
    dm = tuple(int(d) for d in dims)
    x = input._array
    if len(dm) != 2:
        raise RuntimeError(_messages.rot90_dims_not_two(dm))
    if x.ndim < 2:
        raise RuntimeError(_messages.rot90_needs_2d(x))
    d0, d1 = wrap_dim(dm[0], x.ndim), wrap_dim(dm[1], x.ndim)
    if d0 == d1:
        raise RuntimeError(_messages.rot90_dims_identical(d0, d1))
    kk = int(k) % 4 if (d0, d1) == (x.ndim - 2, x.ndim - 1) else (-int(k)) % 4
    it = x.dtype.itemsize
    if (kk in (1, 3) and {d0, d1} == {x.ndim - 2, x.ndim - 1} and x.flags.c_contiguous
            and x.size >= 4096 and it in (2, 4, 8) and x.dtype.kind in "fiucV"
            and x.shape[-1] >= 16 // it):
        out = _rot90_last2(x, kk)
    else:
        out = _contig(xp.rot90(x, k, (d0, d1)))
        if xp.shares_memory(out, x):
            out = out.copy()
    if not needs_grad(input):
        return _make(out)
    node = Rot90Backward0()
    node.k, node.dims = int(k), (d0, d1)
    return record(node, (input,), out)


@register("fliplr", method=True)
def fliplr(input: Tensor) -> Tensor:
    """Reverse the columns (dim 1) of a tensor of at least 2 dimensions."""
    if input._array.ndim < 2:
        raise RuntimeError(_messages.fliplr_needs_2d(input))
    return F.flip(input, (1,))


@register("flipud", method=True)
def flipud(input: Tensor) -> Tensor:
    """Reverse the rows (dim 0) of a tensor of at least 1 dimension."""
    if input._array.ndim < 1:
        raise RuntimeError(_messages.flipud_needs_1d())
    return F.flip(input, (0,))


class DiagonalBackward0_copy(DiagonalBackward0):  # (torch's name for diag() of a matrix)
    __slots__ = ()


class DiagEmbedBackward0(Node):
    __slots__ = ("dim1", "dim2", "offset")

    def backward(self, g: Tensor) -> Tensor:
        return diagonal(g, self.offset, self.dim1, self.dim2)


@register("diag_embed", method=True)
def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """A tensor whose diagonals along ``dim1``/``dim2`` (new dims of size ``n + |offset|``)
    hold the last dimension of ``input``; zeros elsewhere.

    Example:
        >>> import gradsum
        >>> gradsum.diag_embed(gradsum.tensor([1, 2])).tolist()
        [[1, 0], [0, 2]]
    """
    x = input._array
    nd = x.ndim + 1
    d1, d2 = _diag_dims(nd, dim1, dim2)
    off = int(offset)
    n = x.shape[-1] if x.ndim else 1
    m = n + abs(off)
    rest = iter(x.shape[:-1])
    shape = tuple(m if i in (d1, d2) else next(rest) for i in range(nd))
    out = xp.zeros(shape, dtype=x.dtype)
    _diag_view(out, off, d1, d2)[...] = x
    if not needs_grad(input):
        return _make(out)
    node = DiagEmbedBackward0()
    node.offset, node.dim1, node.dim2 = off, d1, d2
    return record(node, (input,), out)


@register("diag", method=True)
def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A vector -> the square matrix with it on diagonal ``diagonal``; a matrix -> that
    diagonal (a copy).

    Example:
        >>> import gradsum
        >>> gradsum.diag(gradsum.tensor([1, 2]), 1).tolist()
        [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    """
    x = input._array
    if x.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if x.ndim != 2:
        raise RuntimeError(_messages.diag_needs_1d_or_2d(x))
    off = int(diagonal)
    out = _diag_view(x, off, 0, 1).copy()
    if not needs_grad(input):
        return _make(out)
    node = DiagonalBackward0_copy()
    node.in_shape, node.offset, node.dim1, node.dim2 = x.shape, off, 0, 1
    return record(node, (input,), out)


def _repeats_index(reps: Any, what: str = "repeats") -> Any:
    if reps.ndim > 1:
        raise RuntimeError(_messages.repeats_bad_ndim(reps))
    if reps.dtype.kind not in "iu":
        raise D.not_implemented("repeat_interleave_cpu", reps.dtype,
                                "Pass integer repeats (.long()).")
    if reps.size and reps.min() < 0:
        raise RuntimeError(_messages.repeats_negative(reps))
    return xp.repeat(xp.arange(reps.size), reps.reshape(-1))


@register("repeat_interleave", method=True)
def repeat_interleave(input: Tensor, repeats: Any = None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """Repeat each element (or each slice along ``dim``) ``repeats`` times; ``repeats`` is an
    int or a tensor with one count per slice. Without ``dim`` the flattened input is repeated.
    ``repeat_interleave(repeats_tensor)`` alone gives the index ``[0]*r0 + [1]*r1 + ...``.

    Example:
        >>> import gradsum
        >>> gradsum.repeat_interleave(gradsum.tensor([[1, 2], [3, 4]]), 2, 0).tolist()
        [[1, 2], [1, 2], [3, 4], [3, 4]]
    """
    if repeats is None:
        return _make(_repeats_index(require_tensor("repeat_interleave", "input", 1, input)
                                    ._array).astype(xp.int64))
    a = input if dim is not None else F.reshape(input, (-1,))
    d = wrap_dim(dim, a._array.ndim) if dim is not None else 0
    if a._array.ndim == 0:
        a = F.reshape(a, (1,))
    n = a._array.shape[d]
    if isinstance(repeats, Tensor):
        reps = repeats._array
        if reps.ndim > 1 or reps.dtype.kind not in "iu":
            _repeats_index(reps)
        if reps.size == 1:
            reps = xp.broadcast_to(reps.reshape(1), (n,))
        elif reps.size != n:
            raise RuntimeError(_messages.repeats_size_mismatch(reps, d, n))
        idx = _repeats_index(xp.asarray(reps))
        if output_size is not None and output_size != idx.size:
            raise RuntimeError(_messages.repeat_interleave_output_size_mismatch(output_size, idx))
        return F.index_select(a, d, _make(idx.astype(xp.int64)))
    r = int(scalar_value(repeats))
    if r < 0:
        raise RuntimeError(_messages.repeat_interleave_negative_repeat(r))
    if output_size is not None and output_size != r * n:
        raise RuntimeError(
            _messages.repeat_interleave_scalar_output_size_mismatch(output_size, r, n)
        )
    shape = a._array.shape
    tiled = F.clone(F.expand(F.unsqueeze(a, d + 1), shape[:d + 1] + (r,) + shape[d + 1:]))
    return F.reshape(tiled, shape[:d] + (n * r,) + shape[d + 1:])


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
        warnings.warn(_messages.meshgrid_indexing_warning(), UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(_messages.meshgrid_invalid_indexing(indexing))
    if not ts:
        raise RuntimeError(_messages.meshgrid_empty_list())
    for i, t in enumerate(ts):
        require_tensor("meshgrid", "tensors", i + 1, t)
        if t._array.ndim > 1:
            raise RuntimeError(_messages.meshgrid_bad_ndim(t))
    for t in ts[1:]:
        if t._array.dtype != ts[0]._array.dtype:
            raise RuntimeError(
                _messages.meshgrid_dtype_mismatch(torch_name(ts[0]._array.dtype),
                                                  torch_name(t._array.dtype))
            )
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


def _tensor_list(name: str, tensors: Any) -> list[Tensor]:
    """The ``tensors`` argument of a ``*stack``: a non-empty sequence of tensors."""
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(_messages.tensor_list_not_sequence(name, tensors))
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(_messages.tensor_list_element_not_tensor(name, t, i))
    if not tensors:
        raise RuntimeError(_messages.tensor_list_empty(name))
    return list(tensors)


# -- tile, stacks, atleast_*d ---------------------------------------------------------------
@register("tile")
def tile(input: Tensor, dims: Any) -> Tensor:
    """``input`` repeated ``dims`` times along each dimension; ``dims`` shorter than
    ``input.ndim`` is padded with ones at the front (a ``RepeatBackward0`` copy).

    Example:
        >>> import gradsum
        >>> gradsum.tile(gradsum.tensor([[1, 2]]), (2,)).tolist()
        [[1, 2, 1, 2]]
    """
    reps = _int_shape(dims)
    return F.repeat(input, (1,) * (input.ndim - len(reps)) + reps)


@tensor_method("tile")
def _tile_method(self: Tensor, *dims: Any) -> Tensor:
    """``t.tile(*dims)``: :func:`tile` with the dims as arguments or one sequence."""
    return tile(self, dims[0] if len(dims) == 1 and not isinstance(dims[0], int) else dims)


@register("hstack")
def hstack(tensors: Sequence[Tensor]) -> Tensor:
    """Concatenate along dim 1 (dim 0 for 1-D tensors; 0-d ones count as 1-D).

    Example:
        >>> import gradsum
        >>> gradsum.hstack([gradsum.tensor([1, 2]), gradsum.tensor([3])]).tolist()
        [1, 2, 3]
    """
    ts = atleast_1d(_tensor_list("hstack", tensors))
    return F.cat(list(ts), 0 if ts[0].ndim == 1 else 1)


@register("vstack", "row_stack")
def vstack(tensors: Sequence[Tensor]) -> Tensor:
    """Stack rows: concatenate along dim 0 after :func:`atleast_2d` (``row_stack`` too).

    Example:
        >>> import gradsum
        >>> gradsum.vstack([gradsum.tensor([1, 2]), gradsum.tensor([3, 4])]).tolist()
        [[1, 2], [3, 4]]
    """
    return F.cat(list(atleast_2d(_tensor_list("vstack", tensors))), 0)


row_stack = vstack


@register("dstack")
def dstack(tensors: Sequence[Tensor]) -> Tensor:
    """Stack along the third dimension after :func:`atleast_3d`.

    Example:
        >>> import gradsum
        >>> gradsum.dstack([gradsum.tensor([1, 2]), gradsum.tensor([3, 4])]).tolist()
        [[[1, 3], [2, 4]]]
    """
    return F.cat(list(atleast_3d(_tensor_list("dstack", tensors))), 2)


@register("column_stack")
def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """Concatenate along dim 1, each 0-d or 1-D tensor taken as one column.

    Example:
        >>> import gradsum
        >>> gradsum.column_stack([gradsum.tensor([1, 2]), gradsum.tensor([3, 4])]).tolist()
        [[1, 3], [2, 4]]
    """
    ts = _tensor_list("column_stack", tensors)
    cols = [F.reshape(t, (t._array.size, 1)) if t._array.ndim <= 1 else t for t in ts]
    return F.cat(cols, 1)


class BlockDiagBackward0(Node):
    """Each input gets its block of the gradient."""

    __slots__ = ("blocks",)

    def backward(self, g: Tensor) -> tuple[Tensor | None, ...]:
        out: list[Tensor | None] = []
        for i, (r0, c0, shape, dt) in enumerate(self.blocks):
            if not self.needs(i):
                out.append(None)
                continue
            rows = 1 if len(shape) < 2 else shape[0]
            cols = 1 if not shape else shape[-1]
            part = F.getitem(g, (slice(r0, r0 + rows), slice(c0, c0 + cols)))
            part = F.reshape(part, shape)
            if part._array.dtype != dt:
                part = F.to_dtype(part, D.from_numpy_dtype(dt))
            out.append(part)
        return tuple(out)


@register("block_diag")
def block_diag(*tensors: Tensor) -> Tensor:
    """A block-diagonal matrix of the inputs (0-d ones are 1x1 blocks, 1-D ones rows), of their
    promoted dtype.

    Example:
        >>> import gradsum
        >>> gradsum.block_diag(gradsum.tensor([[1, 2]]), gradsum.tensor(3)).tolist()
        [[1, 2, 0], [0, 0, 3]]
    """
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(_messages.block_diag_element_not_tensor(t, i))
        if t._array.ndim > 2:
            raise RuntimeError(_messages.block_diag_too_many_dims(i, t))
    if not tensors:
        return _make(xp.zeros((1, 0), dtype=D.get_default_dtype().np))
    dt = D.result_type(*tensors).np if len(tensors) > 1 else tensors[0]._array.dtype
    mats = [t._array.reshape((1, -1) if t._array.ndim < 2 else t._array.shape)
            for t in tensors]
    out = xp.zeros((sum(m.shape[0] for m in mats), sum(m.shape[1] for m in mats)), dtype=dt)
    blocks, r, c = [], 0, 0
    for t, m in zip(tensors, mats):
        out[r:r + m.shape[0], c:c + m.shape[1]] = m
        blocks.append((r, c, tuple(t._array.shape), t._array.dtype))
        r, c = r + m.shape[0], c + m.shape[1]
    if not any_needs_grad(tensors):
        return _make(out)
    node = BlockDiagBackward0()
    node.blocks = blocks
    return record(node, tensors, out)


def _require_1d(t: Any, name: str) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(_messages.expected_tensors_got(name, t))
    if t._array.ndim != 1:
        raise RuntimeError(_messages.expect_1d_vector(t))


@register("cartesian_prod")
def cartesian_prod(*tensors: Tensor) -> Tensor:
    """The Cartesian product of 1-D tensors, one row per combination (one tensor: itself).

    Example:
        >>> import gradsum
        >>> gradsum.cartesian_prod(gradsum.tensor([1, 2]), gradsum.tensor([3])).tolist()
        [[1, 3], [2, 3]]
    """
    for t in tensors:
        _require_1d(t, "cartesian_prod")
    if len(tensors) == 1:
        return tensors[0]
    if not tensors:
        raise RuntimeError(_messages.cartesian_prod_empty())
    if len({t._array.dtype for t in tensors}) > 1:
        raise RuntimeError(
            _messages.cartesian_prod_dtype_mismatch([torch_name(t._array.dtype) for t in tensors])
        )
    grids = F.meshgrid(*tensors, indexing="ij")
    return F.stack([F.reshape(g, (-1,)) for g in grids], 1)


def _combination_indices(n: int, r: int, with_replacement: bool) -> Any:
    """``(N, r)`` int64 rows of ``itertools.combinations(range(n), r)`` (or of
    ``combinations_with_replacement``), in its order, built one column at a time: each row
    is repeated once per larger (or not smaller) next index."""
    idx = xp.arange(n, dtype=xp.int64)[:, None]
    for _ in range(1, r):
        last = idx[:, -1]
        counts = n - last - (0 if with_replacement else 1)
        total = int(counts.sum())
        starts = xp.cumsum(counts) - counts
        nxt = (xp.arange(total, dtype=xp.int64) - xp.repeat(starts, counts)
               + xp.repeat(last + (0 if with_replacement else 1), counts))
        idx = xp.concatenate([xp.repeat(idx, counts, axis=0), nxt[:, None]], axis=1)
    return idx


@register("combinations")
def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-``r`` combinations of a 1-D tensor's entries, one per row (as Python's
    ``itertools.combinations``, or ``combinations_with_replacement``).

    Example:
        >>> import gradsum
        >>> gradsum.combinations(gradsum.tensor([1, 2, 3])).tolist()
        [[1, 2], [1, 3], [2, 3]]
    """
    _require_1d(input, "combinations")
    if r < 0:
        raise RuntimeError(_messages.combinations_negative_r(r))
    if r == 0:
        return _make(xp.empty((0,), dtype=input._array.dtype))
    n = input._array.shape[0]
    idx = _combination_indices(n, r, with_replacement)
    cols = [F.index_select(input, 0, _make(xp.ascontiguousarray(idx[:, k]))) for k in range(r)]
    return F.stack(cols, 1)


# -- diagflat and the *_scatter family ------------------------------------------------------
@register("diagflat", method=True)
def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A matrix with the flattened input on its ``offset`` diagonal (``DiagEmbedBackward0``).

    Example:
        >>> import gradsum
        >>> gradsum.diagflat(gradsum.tensor([[1, 2]])).tolist()
        [[1, 0], [0, 2]]
    """
    return F.diag_embed(F.reshape(input, (-1,)), offset)


class NarrowCopyBackward0(Node):
    __slots__ = ("dim", "in_shape", "start")

    def backward(self, g: Tensor) -> Tensor:
        from gradsum.ops.indexing.gather_scatter import slice_scatter

        z = F.zeros(self.in_shape, dtype=g.dtype)
        return slice_scatter(z, g, self.dim, self.start, self.start + g.shape[self.dim])


@register("narrow_copy", method=True)
def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """A copy (not a view) of :func:`narrow`'s slice.

    Example:
        >>> import gradsum
        >>> gradsum.narrow_copy(gradsum.arange(5), 0, 1, 2).tolist()
        [1, 2]
    """
    with no_grad():
        v = F.narrow(input, dim, start, length)
    out = v._array.copy()
    if not needs_grad(input):
        return _make(out)
    d = wrap_dim(dim, input._array.ndim)
    node = NarrowCopyBackward0()
    node.dim, node.in_shape = d, input._array.shape
    node.start = start + input._array.shape[d] if start < 0 else start
    return record(node, (input,), out)


# -- pixel_shuffle, pixel_unshuffle, channel_shuffle (nn.functional's; one node each) -------
def _lead(input: Tensor, name: str) -> None:
    if input.ndim < 3:
        raise RuntimeError(_messages.expects_at_least_3d(name, input))

# pixel_shuffle, pixel_unshuffle and channel_shuffle are one node each, as torch's kernels
# (not the reshape-permute-reshape they amount to): the backward of each is its inverse
# permutation, itself differentiable.
class PixelShuffleBackward0(Node):
    __slots__ = ("arg",)

    def backward(self, g: Tensor) -> Tensor:
        return pixel_unshuffle(g, self.arg)

class PixelUnshuffleBackward0(PixelShuffleBackward0):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        return pixel_shuffle(g, self.arg)

class ChannelShuffleBackward0(PixelShuffleBackward0):
    """``arg``: C // groups, the groups of the inverse shuffle."""

    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        return channel_shuffle(g, self.arg)

def _shuffled(input: Tensor, out: Any, cls: type[PixelShuffleBackward0], arg: int) -> Tensor:
    """``out`` (a permutation of ``input``'s elements) as a new tensor, recorded as ``cls``."""
    if xp.may_share_memory(out, input._array):  # (a factor of 1: torch still copies)
        out = out.copy()
    if not needs_grad(input):
        return _make(out)
    node = cls()
    node.arg = arg
    return record(node, (input,), out)

def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """``(*, C * r**2, H, W)`` to ``(*, C, H * r, W * r)``."""
    _lead(input, "pixel_shuffle")
    r = int(upscale_factor)
    if r <= 0:
        raise RuntimeError(_messages.pixel_shuffle_factor_not_positive(r))
    *b, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(_messages.pixel_shuffle_channels_not_divisible(c, r))
    n = len(b)
    x = input._array.reshape((*b, c // (r * r), r, r, h, w))
    x = x.transpose((*range(n), n, n + 3, n + 1, n + 4, n + 2))
    return _shuffled(input, x.reshape((*b, c // (r * r), h * r, w * r)),
                     PixelShuffleBackward0, r)

def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """``(*, C, H * r, W * r)`` to ``(*, C * r**2, H, W)`` (pixel_shuffle's inverse)."""
    _lead(input, "pixel_unshuffle")
    r = int(downscale_factor)
    if r <= 0:
        raise RuntimeError(_messages.pixel_unshuffle_factor_not_positive(r))
    *b, c, h, w = input.shape
    if h % r or w % r:
        dim, size = ("height", h) if h % r else ("width", w)
        raise RuntimeError(_messages.pixel_unshuffle_not_divisible(dim, size, r))
    n = len(b)
    x = input._array.reshape((*b, c, h // r, r, w // r, r))
    x = x.transpose((*range(n), n, n + 2, n + 4, n + 1, n + 3))
    return _shuffled(input, x.reshape((*b, c * r * r, h // r, w // r)),
                     PixelUnshuffleBackward0, r)

def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``(N, C, *)``: the channels, viewed as ``(groups, C // groups)``, transposed."""
    if input.ndim <= 2:
        raise RuntimeError(_messages.expects_at_least_3d("channel_shuffle", input))
    g = int(groups)
    if g <= 0:
        raise RuntimeError(_messages.channel_shuffle_groups_not_positive(g))
    n, c, *rest = input.shape
    if c % g:
        raise RuntimeError(_messages.channel_shuffle_channels_not_divisible(c, g))
    x = input._array.reshape((n, g, c // g, *rest)).swapaxes(1, 2)
    return _shuffled(input, x.reshape((n, c, *rest)), ChannelShuffleBackward0, c // g)


# -- repeat (bound as Tensor methods in gradsum.ops) -----------------------------------------------
class RepeatBackward0(Node):
    """Sum the gradient over the tiles: view it as (r0, s0, r1, s1, ...) and sum the r's."""

    __slots__ = ("in_shape", "reps")

    def backward(self, g: Tensor) -> Tensor:
        padded = (1,) * (len(self.reps) - len(self.in_shape)) + tuple(self.in_shape)
        inter: list[int] = []
        for r, s in zip(self.reps, padded):
            inter += [r, s]
        tiles = F.reshape(g, tuple(inter))
        return F.reshape(F.sum(tiles, tuple(range(0, len(inter), 2))), self.in_shape)

@register("repeat", method=True)
def repeat(a: Tensor, *sizes: Any) -> Tensor:
    """Tile ``a`` ``sizes`` times along each dimension (a copy, like torch's).

    Example:
        >>> import gradsum
        >>> gradsum.tensor([1, 2]).repeat(2).tolist()
        [1, 2, 1, 2]
    """
    if not sizes:
        raise TypeError(_messages.repeat_missing_repeats())
    reps = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes
    reps = tuple(int(r) for r in reps)
    if len(reps) < a.ndim:
        raise RuntimeError(_messages.repeat_too_few_dims(reps, a))
    x = a._array.reshape((1,) * (len(reps) - a.ndim) + tuple(a.shape))
    out = xp.tile(x, reps) if reps else x.copy()
    if not _core.needs_grad(a):
        return _core._make(out)
    node = RepeatBackward0()
    node.reps, node.in_shape = reps, a.shape
    return _core.record(node, (a,), out)
