"""Tensor contractions: ``einsum``, ``tensordot``, ``kron`` and ``cdist``.

Example:
    >>> import gradsum
    >>> x = gradsum.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> gradsum.einsum("ii->", x).item()
    5.0
"""

from __future__ import annotations

from typing import Any

import gradsum.ops as F
from gradsum import _dtype as D
from gradsum._autocast import autocast_policy, cast_for
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.graph import Node
from gradsum.ops import _messages
from gradsum.ops._core import (
    _make,
    any_needs_grad,
    broadcast_error,
    needs_grad,
    quietly,
    record,
    register,
    require_tensor,
    wrap_dim,
)
from gradsum.ops.reduction import _contig
from gradsum.ops.views import _dims_arg

# -- einsum ------------------------------------------------------------------------------------
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _parse_einsum(equation: str, shapes: list[tuple[int, ...]]
                  ) -> tuple[list[str], str, dict[str, int]]:
    """Each operand's labels and the output's (ellipsis dims as fresh letters, right-aligned),
    plus each label's broadcast size; torch's errors for a bad equation."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(shapes):
        raise RuntimeError(_messages.einsum_fewer_operands_than_equation(terms, shapes))
    if len(terms) < len(shapes):
        raise RuntimeError(_messages.einsum_more_operands_than_equation(terms, shapes))
    pos = 0
    parsed: list[tuple[list[str], bool]] = []
    for k, term in enumerate(terms):
        labels: list[str] = []
        ell = False
        i = 0
        while i < len(term):
            c = term[i]
            if c == ".":
                if ell:
                    raise RuntimeError(_messages.einsum_ellipsis_already_found(k))
                if term[i:i + 3] != "...":
                    raise RuntimeError(_messages.einsum_dot_not_part_of_ellipsis(k))
                ell = True
                labels.append("...")
                i += 3
                pos += 3
                continue
            if c not in _LETTERS:
                raise RuntimeError(_messages.einsum_invalid_subscript(pos))
            labels.append(c)
            i += 1
            pos += 1
        pos += 1
        parsed.append((labels, ell))
    used = {c for c in eq if c in _LETTERS}
    fresh = [c for c in _LETTERS if c not in used]
    ell_nd = 0
    for k, ((labels, ell), shape) in enumerate(zip(parsed, shapes)):
        named = len(labels) - (1 if ell else 0)
        if ell:
            if named > len(shape):
                raise RuntimeError(
                    _messages.einsum_more_subscripts_than_dimensions(named, shape, k)
                )
            ell_nd = max(ell_nd, len(shape) - named)
        elif named != len(shape):
            raise RuntimeError(_messages.einsum_subscripts_do_not_match_dimensions(named, shape, k))
    ell_letters = fresh[:ell_nd]
    ops: list[str] = []
    sizes: dict[str, int] = {}
    for k, ((labels, ell), shape) in enumerate(zip(parsed, shapes)):
        named = len(labels) - (1 if ell else 0)
        full: list[str] = []
        for lab in labels:
            if lab == "...":
                nd = len(shape) - named
                full.extend(ell_letters[ell_nd - nd:] if nd else [])
            else:
                full.append(lab)
        own: dict[str, int] = {}
        for lab, s in zip(full, shape):
            if lab in own and own[lab] != s:
                raise RuntimeError(
                    _messages.einsum_repeated_subscript_size_mismatch(lab, k, own, s)
                )
            own[lab] = s
        for lab, s in own.items():
            prev = sizes.get(lab)
            if prev is None or prev == 1:
                sizes[lab] = s
            elif s != 1 and s != prev:
                shown = lab if lab not in ell_letters else "..."
                raise RuntimeError(_messages.einsum_subscript_does_not_broadcast(shown, s, k, prev))
        ops.append("".join(full))
    if arrow:
        out: list[str] = []
        seen_ell = False
        i = 0
        while i < len(rhs):
            c = rhs[i]
            if c == ".":
                if seen_ell or rhs[i:i + 3] != "...":
                    raise RuntimeError(_messages.einsum_output_dot(seen_ell))
                seen_ell = True
                out.extend(ell_letters)
                i += 3
                continue
            if c not in _LETTERS:
                raise RuntimeError(_messages.einsum_invalid_output_subscript(lhs, i))
            if c in out:
                raise RuntimeError(_messages.einsum_output_subscript_repeated(c))
            if c not in sizes:
                raise RuntimeError(_messages.einsum_output_subscript_not_in_inputs(c))
            out.append(c)
            i += 1
        out_s = "".join(out)
    else:
        counts: dict[str, int] = {}
        for o in ops:
            for c in o:
                if c not in ell_letters:
                    counts[c] = counts.get(c, 0) + 1
        out_s = "".join(ell_letters) + "".join(
            sorted((c for c, n in counts.items() if n == 1), key=_LETTERS.index))
    return ops, out_s, sizes


def _einsum_arrays(ops: list[str], out: str, sizes: dict[str, int], arrays: list[Any]) -> Any:
    expanded = []
    for sub, arr in zip(ops, arrays):
        target = tuple(sizes[c] for c in sub)
        expanded.append(arr if arr.shape == target else xp.broadcast_to(arr, target))
    spec = ",".join(ops) + "->" + out
    low = expanded[0].dtype if expanded and expanded[0].dtype.kind == "V" else None
    if low is not None:  # bfloat16 (NumPy's einsum has no loop): float32, rounded once
        expanded = [a.astype(xp.float32) for a in expanded]
    # two large operands: NumPy's optimised path contracts with BLAS (tensordot), as torch's
    # bmm does; small ones stay on the plain loop (the path search costs more than it saves)
    big = len(arrays) == 2 and max(a.size for a in expanded) >= 4096
    res = xp.einsum(spec, *expanded, optimize=len(arrays) > 2 or big)
    return _contig(res if low is None else res.astype(low))


class EinsumBackward0(Node):
    """Operand ``k``'s gradient is the einsum of the incoming gradient with the other operands
    onto ``k``'s labels: expanded along labels only ``k`` sums, placed on the diagonal for a
    repeated label, summed over dims ``k`` broadcast from size 1."""

    __slots__ = ("ops", "out", "shapes", "sizes")

    def backward(self, g: Tensor) -> tuple[Tensor | None, ...]:
        ops, out, sizes = self.ops, self.out, self.sizes
        others_t = self.saved() if len(ops) > 1 else []
        res: list[Tensor | None] = []
        for k, sub in enumerate(ops):
            if not self.needs(k):
                res.append(None)
                continue
            rest = [(o, t) for j, (o, t) in enumerate(zip(ops, others_t)) if j != k]
            avail = set(out).union(*[set(o) for o, _ in rest]) if rest else set(out)
            uniq = list(dict.fromkeys(sub))
            keep = "".join(c for c in uniq if c in avail)
            if rest:
                # torch sums out an operand's labels that no other operand and not the output
                # has before it multiplies (so an inf gradient meets that sum, not its terms)
                rest = [_einsum_presum(o, t, set(out).union(sub, *[set(q) for j, (q, _)
                                                                   in enumerate(rest) if j != i]))
                        for i, (o, t) in enumerate(rest)]
            terms = [out] + [o for o, _ in rest]
            tens = [g] + [_expand_to(t, o, sizes) for o, t in rest]
            gk = einsum(",".join(terms) + "->" + keep, *tens)
            if len(keep) != len(uniq):  # labels only operand k sums: constant along them
                for i, c in enumerate(uniq):
                    if c not in avail:
                        gk = F.unsqueeze(gk, i)
                gk = F.expand(gk, tuple(sizes[c] for c in uniq))
            if len(uniq) != len(sub):  # a repeated label: onto the diagonal
                gk = _einsum_diagonal_embed(gk, uniq, sub, sizes)
            shape = self.shapes[k]
            red = tuple(i for i, (c, s) in enumerate(zip(sub, shape)) if s == 1 and sizes[c] != 1)
            if red:
                gk = F.sum(gk, red, keepdim=True)
            res.append(gk)
        return tuple(res)


def _einsum_presum(sub: str, t: Tensor, needed: set[str]) -> tuple[str, Tensor]:
    """``(sub, t)`` with the labels outside ``needed`` summed out (and repeats taken along
    their diagonal), when there are any."""
    kept = "".join(c for c in dict.fromkeys(sub) if c in needed)
    if kept == sub:
        return sub, t
    return kept, einsum(sub + "->" + kept, t)


def _expand_to(t: Tensor, sub: str, sizes: dict[str, int]) -> Tensor:
    target = tuple(sizes[c] for c in sub)
    return t if tuple(t.shape) == target else F.expand(t, target)


def _einsum_diagonal_embed(gk: Tensor, uniq: list[str], sub: str, sizes: dict[str, int]
                           ) -> Tensor:
    """``gk`` (labels ``uniq``) placed on ``sub``'s repeated-label diagonals, zeros elsewhere,
    selected (torch's ``diagonal_backward`` copies into zeros: an inf or nan gradient stays on
    the diagonal): ``gk`` broadcast along each repeat, then a ``where`` on the diagonal mask.
    """
    first: dict[str, int] = {}
    t = gk
    mask = None
    for p, c in enumerate(sub):
        if c not in first:
            first[c] = p
            continue
        t = F.unsqueeze(t, p)  # (first occurrences keep uniq's order: the dims line up)
        n = sizes[c]
        shape_q = [1] * len(sub)
        shape_q[first[c]] = n
        shape_p = [1] * len(sub)
        shape_p[p] = n
        on = xp.arange(n).reshape(shape_q) == xp.arange(n).reshape(shape_p)
        mask = on if mask is None else mask & on
    target = tuple(sizes[c] for c in sub)
    full = xp.broadcast_to(mask, target) if mask is not None else xp.ones(target, bool)
    return F.where(_make(xp.ascontiguousarray(full)), F.expand(t, target),
                   F.zeros((), dtype=gk.dtype))


@register("einsum")
def einsum(equation: str, *operands: Any) -> Tensor:
    """Sum of products over the labels of ``equation`` (NumPy/torch notation: ``"ij,jk->ik"``,
    implicit output, repeated labels for diagonals, ``...`` for broadcast dims; a size-1 dim
    broadcasts against its label's size). Operands may also be given as one list.

    Example:
        >>> import gradsum
        >>> a, b = gradsum.ones(2, 3), gradsum.ones(3, 4)
        >>> gradsum.einsum("ij,jk->ik", a, b).shape
        (2, 4)
        >>> gradsum.einsum("ii", gradsum.eye(3)).item()
        3.0
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(_messages.einsum_equation_not_str(equation))
    for k, t in enumerate(operands):
        require_tensor("einsum", f"operands[{k}]", 2, t)
    if len(operands) > 1:  # (torch contracts pairs with bmm, which autocast casts)
        operands = cast_for("bmm", *operands)
    arrays = [t._array for t in operands]
    for arr in arrays[1:]:
        if arr.dtype != arrays[0].dtype:
            raise RuntimeError(_messages.einsum_dtype_mismatch(arrays, arr))
    ops, out, sizes = _parse_einsum(equation, [a.shape for a in arrays])
    if len(ops) > 2:
        # torch contracts left to right, one pair at a time (without opt_einsum): the same
        # graph gives the same rounding and the same inf/nan in the gradients
        sub, acc = ops[0], operands[0]
        for i in range(1, len(ops)):
            needed = set(out).union(*ops[i + 1:])
            pair = out if i == len(ops) - 1 else "".join(
                c for c in dict.fromkeys(sub + ops[i]) if c in needed)
            acc = einsum(f"{sub},{ops[i]}->{pair}", acc, operands[i])
            sub = pair
        return acc
    res = _einsum_arrays(ops, out, sizes, arrays)
    if res.dtype != arrays[0].dtype:
        res = res.astype(arrays[0].dtype)
    if not any_needs_grad(operands):
        return _make(res)
    node = EinsumBackward0()
    node.ops, node.out, node.sizes = ops, out, sizes
    node.shapes = [a.shape for a in arrays]
    t = record(node, operands, res)
    if len(operands) > 1:
        node.save(*operands)
    return t


# -- tensordot / kron / cross / cdist ----------------------------------------------------------
@register("tensordot")
def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Any = None) -> Tensor:
    """Contract the last ``dims`` dims of ``a`` with the first ``dims`` of ``b``, or the dims
    listed in ``dims = (dims_a, dims_b)``: a permute, a reshape and one matrix product.

    Example:
        >>> import gradsum
        >>> gradsum.tensordot(gradsum.ones(2, 3, 4), gradsum.ones(3, 4, 5)).shape
        (2, 5)
    """
    if out is not None:
        raise NotImplementedError(_messages.tensordot_out_not_supported())
    na, nb = a._array.ndim, b._array.ndim
    if isinstance(dims, (int, xp.integer)) or (isinstance(dims, Tensor) and dims.ndim == 0):
        n = int(dims.item() if isinstance(dims, Tensor) else dims)
        if n < 0:
            raise RuntimeError(_messages.tensordot_negative_dims(n))
        if n > na or n > nb:
            raise RuntimeError(_messages.tensordot_dims_too_large(n))
        da, db = list(range(na - n, na)), list(range(n))
    else:
        pa, pb = dims
        da = [wrap_dim(d, na) for d in _dims_arg(pa)]
        db = [wrap_dim(d, nb) for d in _dims_arg(pb)]
        if len(da) != len(db):
            raise RuntimeError(_messages.tensordot_dim_lists_length_mismatch(da, db))
    for x, y in zip(da, db):
        sa, sb = a._array.shape[x], b._array.shape[y]
        if sa != sb:
            raise RuntimeError(_messages.tensordot_contracted_sizes_mismatch(sa, x, sb, y))
    fa = [i for i in range(na) if i not in da]
    fb = [i for i in range(nb) if i not in db]
    sa_free = [a._array.shape[i] for i in fa]
    sb_free = [b._array.shape[i] for i in fb]
    k = 1
    for x in da:
        k *= a._array.shape[x]
    m = 1
    for s in sa_free:
        m *= s
    n_ = 1
    for s in sb_free:
        n_ *= s
    am = F.reshape(F.permute(a, tuple(fa + da)), (m, k))
    bm = F.reshape(F.permute(b, tuple(db + fb)), (k, n_))
    return F.reshape(F.mm(am, bm), tuple(sa_free + sb_free))


class KronBackward0(Node):
    """``kron(a, b)`` viewed as ``a[i, None, j, None] * b[None, k, None, l]``; torch records
    the final reshape of that product (``UnsafeViewBackward0``)."""

    __slots__ = ("nd",)

    def name(self) -> str:
        return "UnsafeViewBackward0"

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = self.saved()
        nd = self.nd
        sa = (1,) * (nd - a.ndim) + tuple(a.shape)
        sb = (1,) * (nd - b.ndim) + tuple(b.shape)
        inter: list[int] = []
        for p, q in zip(sa, sb):
            inter += [p, q]
        g4 = F.reshape(g, tuple(inter))
        ga = gb = None
        if self.needs(0):
            br = F.reshape(b, tuple(v for q in sb for v in (1, q)))
            ga = F.reshape(F.sum(F.mul(g4, br), tuple(range(1, 2 * nd, 2))), tuple(a.shape))
        if self.needs(1):
            ar = F.reshape(a, tuple(v for p in sa for v in (p, 1)))
            gb = F.reshape(F.sum(F.mul(g4, ar), tuple(range(0, 2 * nd, 2))), tuple(b.shape))
        return ga, gb


@register("kron", method=True)
def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product (the operand with fewer dims gets leading ones).

    Example:
        >>> import gradsum
        >>> gradsum.kron(gradsum.tensor([1, 2]), gradsum.tensor([1, 10])).tolist()
        [1, 10, 2, 20]
    """
    require_tensor("kron", "input", 1, input)
    require_tensor("kron", "other", 2, other)
    rt = D.result_type(input, other).np
    x, y = input._array.astype(rt, copy=False), other._array.astype(rt, copy=False)
    nd = max(x.ndim, y.ndim)
    out = quietly(xp.kron, x.reshape((1,) * (nd - x.ndim) + x.shape),
                  y.reshape((1,) * (nd - y.ndim) + y.shape))  # (silent on inf, as torch)
    out = _contig(out, rt)
    if not needs_grad(input, other):
        return _make(out)
    node = KronBackward0()
    node.nd = nd
    t = record(node, (input, other), out)
    node.save(input, other)
    return t


class CdistBackward0(Node):
    """torch's ``_cdist_backward`` (its gradient is 0 at zero distance), written in gradsum
    ops so it can itself be differentiated (torch's cannot)."""

    __slots__ = ("p", "shapes")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        x1, x2, dist = self.saved()
        p = self.p
        diff = F.sub(F.unsqueeze(x1, -2), F.unsqueeze(x2, -3))  # (..., P, R, M)
        zero = F.zeros((), dtype=g.dtype)
        if p == 0:
            return (F.mul(x1, 0) if self.needs(0) else None,
                    F.mul(x2, 0) if self.needs(1) else None)
        at0 = _make(dist._array == 0)
        with xp.errstate(divide="ignore", invalid="ignore"):
            if p == 1:
                term = F.mul(F.sign(diff), F.unsqueeze(g, -1))
            elif p == 2:
                ratio = F.where(at0, zero, F.div(g, dist))
                term = F.mul(diff, F.unsqueeze(ratio, -1))
            elif p == float("inf"):
                hit = F.eq(F.abs(diff), F.unsqueeze(dist, -1))
                term = F.mul(F.mul(F.sign(diff), F.unsqueeze(g, -1)),
                             F.where(hit, F.ones((), dtype=g.dtype), zero))
            else:
                scale = F.where(at0, zero, F.div(g, F.pow(dist, p - 1)))
                mag = F.pow(F.abs(diff), p - 1)
                if p < 1:
                    mag = F.where(F.eq(diff, 0), zero, mag)
                term = F.mul(F.mul(F.sign(diff), mag), F.unsqueeze(scale, -1))
        ga = F.sum_to(F.sum(term, -2), self.shapes[0]) if self.needs(0) else None
        gb = F.sum_to(F.neg(F.sum(term, -3)), self.shapes[1]) if self.needs(1) else None
        return ga, gb


@register("cdist")
@autocast_policy("cdist")
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str | None = None) -> Tensor:
    """The ``p``-norm distances between the rows of ``x1`` (``..., P, M``) and of ``x2``
    (``..., R, M``), batch dims broadcast: shape ``(..., P, R)``. The gradient at zero
    distance is 0, as torch's.

    Example:
        >>> import gradsum
        >>> gradsum.cdist(gradsum.tensor([[0.0, 0.0]]), gradsum.tensor([[3.0, 4.0]])).tolist()
        [[5.0]]
    """
    a, b = x1._array, x2._array
    for name, arr in (("X1", a), ("X2", b)):
        if arr.ndim < 2:
            raise RuntimeError(_messages.cdist_needs_2d(name, arr))
    for name, arr in (("X1", a), ("X2", b)):
        if arr.dtype.kind not in "fV":
            raise RuntimeError(_messages.cdist_needs_floating_point(name, arr))
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(_messages.cdist_columns_mismatch(a, b))
    p = float(p)
    if p < 0:
        raise RuntimeError(_messages.cdist_negative_p(p))
    if a.dtype != b.dtype:
        raise RuntimeError(_messages.cdist_dtype_mismatch(a, b))
    try:
        batch = xp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise broadcast_error(a[..., 0, 0], b[..., 0, 0]) from None
    diff = xp.abs(a[..., :, None, :] - b[..., None, :, :])
    if p == 0:
        out = (diff != 0).sum(-1).astype(a.dtype)
    elif p == 1:
        out = diff.sum(-1)
    elif p == 2:
        out = xp.sqrt((diff * diff).sum(-1))
    elif p == float("inf"):
        out = diff.max(-1) if diff.shape[-1] else diff.sum(-1)
    else:
        out = ((diff ** p).sum(-1)) ** (1.0 / p)
    out = _contig(xp.broadcast_to(out, batch + out.shape[-2:]), dtype=a.dtype)
    if not needs_grad(x1, x2):
        return _make(out)
    node = CdistBackward0()
    node.p, node.shapes = p, (a.shape, b.shape)
    t = record(node, (x1, x2), out)
    node.save(x1, x2, outputs=(t,))
    return t
