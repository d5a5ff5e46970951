"""Tensor methods torch code uses that gradsum composes from its ops (or that only change
metadata): each runs the same call in both libraries and compares the outcome (values,
dtype, shape, or the exception type), then checks gradients with gradcheck in float64 and
the version counter of the in-place forms.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradsum
from gradsum.autograd import gradcheck

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)


def _outcome(lib: Any, fn: Callable[[Any], Any]) -> tuple[Any, ...]:
    """What ``fn(lib)`` does: ('err', exception type name) or ('ok', dtype, shape, values)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(lib)
    except Exception as e:  # any exception is an outcome to compare
        return ("err", type(e).__name__)
    if not isinstance(out, (torch.Tensor, gradsum.Tensor)):
        return ("value", out)
    arr = out.detach().numpy() if isinstance(out, torch.Tensor) else out._array
    vals = np.round(arr.astype(np.float64), 5) if arr.dtype.kind == "f" else arr
    return ("ok", str(out.dtype).split(".")[-1].replace("bool_", "bool"), tuple(out.shape),
            [repr(v) for v in np.ravel(vals).tolist()], out.requires_grad)


def _same(fn: Callable[[Any], Any]) -> None:
    t, g = _outcome(torch, fn), _outcome(gradsum, fn)
    assert g == t, f"gradsum {g} != torch {t}"


def _x(L: Any, rg: bool = False) -> Any:
    return L.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], requires_grad=rg)


def _i(L: Any, *v: Any, dtype: str = "int64") -> Any:
    return L.tensor(list(v), dtype=getattr(L, dtype))


def _m(L: Any) -> Any:
    return L.tensor([[True, False, True], [False, True, False]])


_CASES: dict[str, Callable[[Any], Any]] = {
    # metadata and conversions
    "ndimension": lambda L: _x(L).ndimension(),
    "H": lambda L: _x(L, True).H * 1,
    "H_1d": lambda L: L.ones(3).H,
    "H_3d": lambda L: L.ones(2, 2, 2).H,
    "H_0d": lambda L: L.tensor(2.0).H,
    "byte": lambda L: L.tensor([-1.0, 2.5, 300.0]).byte(),
    "char": lambda L: L.tensor([-1.0, 2.5, 300.0]).char(),
    "short": lambda L: L.tensor([-1.0, 2.5, 70000.0]).short(),
    # clamp_min / clamp_max
    "clamp_min": lambda L: _x(L, True).clamp_min(2),
    "clamp_min_int_float": lambda L: L.arange(3).clamp_min(1.5),
    "clamp_min_tensor": lambda L: _x(L).clamp_min(L.tensor([1.0, 2.0, 3.0])),
    "clamp_min_none": lambda L: _x(L).clamp_min(None),
    "clamp_max": lambda L: _x(L).clamp_max(3.5),
    "clamp_min_": lambda L: _x(L).clamp_min_(2),
    "clamp_max__int_float": lambda L: L.arange(3).clamp_max_(1.5),
    # broadcast_to / sum_to_size
    "broadcast_to": lambda L: L.ones(3).broadcast_to((2, -1)),
    "broadcast_to_bad": lambda L: L.ones(3).broadcast_to((2, 2)),
    "sum_to_size": lambda L: _x(L, True).sum_to_size(1, 3),
    "sum_to_size_tuple": lambda L: _x(L).sum_to_size((2, 1)),
    "sum_to_size_lead": lambda L: _x(L).sum_to_size(3),
    "sum_to_size_bad": lambda L: _x(L).sum_to_size(2, 2, 3),
    "sum_to_size_bad2": lambda L: _x(L).sum_to_size(2),
    "sum_to_size_int": lambda L: L.ones(2, 3, dtype=L.int32).sum_to_size(3),
    # argwhere / sgn / logit
    "argwhere": lambda L: L.tensor([[0, 1], [2, 0]]).argwhere(),
    "argwhere_0d": lambda L: L.tensor(3).argwhere(),
    "argwhere_0d_zero": lambda L: L.tensor(0).argwhere(),
    "argwhere_empty": lambda L: L.zeros(0, 3).argwhere(),
    "sgn": lambda L: L.tensor([-2.0, 0.0, 3.0]).sgn(),
    "sgn_int": lambda L: L.tensor([-2, 0, 3]).sgn(),
    "sgn_": lambda L: L.tensor([-2.0, 0.0, 3.0]).sgn_(),
    "logit": lambda L: L.tensor([0.0, 0.25, 1.0, 1.5]).logit(),
    "logit_eps": lambda L: L.tensor([0.0, 0.25, 1.0]).logit(eps=0.1),
    "logit_int": lambda L: L.tensor([0, 1]).logit(),
    "logit_": lambda L: L.tensor([0.0, 0.25, 1.0]).logit_(0.1),
    # diff
    "diff": lambda L: _x(L, True).diff(),
    "diff_n2_dim0": lambda L: _x(L).diff(n=2, dim=0),
    "diff_n0": lambda L: _x(L).diff(n=0),
    "diff_n_big": lambda L: _x(L).diff(n=5),
    "diff_neg": lambda L: _x(L).diff(n=-1),
    "diff_0d": lambda L: L.tensor(1.0).diff(),
    "diff_bool": lambda L: L.tensor([True, False, False]).diff(),
    "diff_int": lambda L: L.tensor([1, 4, 9]).diff(),
    "diff_pre_app": lambda L: _x(L).diff(prepend=L.zeros(2, 1), append=L.ones(2, 2)),
    "diff_pre_0d": lambda L: _x(L).diff(prepend=L.tensor(1.0)),
    "diff_pre_shape": lambda L: _x(L).diff(prepend=L.ones(3, 1)),
    "diff_pre_dtype": lambda L: _x(L).diff(prepend=L.ones(2, 1, dtype=L.float64)),
    "diff_dim_bad": lambda L: _x(L).diff(dim=3),
    # index_fill
    "index_fill": lambda L: _x(L, True).index_fill(1, _i(L, 0, 2), -1),
    "index_fill_neg": lambda L: _x(L).index_fill(1, _i(L, -1), -1),
    "index_fill_oob": lambda L: _x(L).index_fill(1, _i(L, 3), -1),
    "index_fill_oob_neg": lambda L: _x(L).index_fill(1, _i(L, -4), -1),
    "index_fill_int32": lambda L: _x(L).index_fill(1, _i(L, 0, dtype="int32"), -1),
    "index_fill_2d_index": lambda L: _x(L).index_fill(1, L.tensor([[0]]), -1),
    "index_fill_0d_index": lambda L: _x(L).index_fill(1, L.tensor(1), -1),
    "index_fill_tensor": lambda L: _x(L).index_fill(1, _i(L, 0, 2), L.tensor(7.0)),
    "index_fill_tensor_1d": lambda L: _x(L).index_fill(1, _i(L, 0), L.tensor([7.0])),
    "index_fill_int_self": lambda L: L.arange(3).index_fill(0, _i(L, 0), 2.7),
    "index_fill_0d_self": lambda L: L.tensor(1.0).index_fill(0, _i(L, 0), 2.0),
    "index_fill_dup": lambda L: _x(L).index_fill(1, _i(L, 0, 0), 1.0),
    "index_fill_": lambda L: _x(L).index_fill_(1, _i(L, 0, 2), 5),
    # index_copy
    "index_copy": lambda L: _x(L, True).index_copy(1, _i(L, 2, 0), L.tensor([[1.0, 2], [3, 4]])),
    "index_copy_dup": lambda L: _x(L).index_copy(1, _i(L, 1, 1), L.tensor([[1.0, 2], [3, 4]])),
    "index_copy_count": lambda L: _x(L).index_copy(1, _i(L, 0), L.ones(2, 2)),
    "index_copy_slices": lambda L: _x(L).index_copy(1, _i(L, 0, 2), L.ones(3, 2)),
    "index_copy_oob": lambda L: _x(L).index_copy(1, _i(L, 0, 3), L.ones(2, 2)),
    "index_copy_neg": lambda L: _x(L).index_copy(1, _i(L, 0, -1), L.ones(2, 2)),
    "index_copy_int32": lambda L: _x(L).index_copy(1, _i(L, 0, 1, dtype="int32"), L.ones(2, 2)),
    "index_copy_dtype": lambda L: _x(L).index_copy(1, _i(L, 0, 1), L.ones(2, 2).double()),
    "index_copy_2d_index": lambda L: _x(L).index_copy(1, L.tensor([[0, 1]]), L.ones(2, 2)),
    "index_copy_src_ndim": lambda L: _x(L).index_copy(1, _i(L, 0, 1), L.ones(2)),
    "index_copy_0d": lambda L: L.tensor(1.0).index_copy(0, _i(L, 0), L.tensor(5.0)),
    "index_copy_0d_index": lambda L: L.zeros(3).index_copy(0, L.tensor(2), L.tensor([5.0])),
    "index_copy_0d_src": lambda L: L.zeros(3).index_copy(0, _i(L, 2), L.tensor(5.0)),
    "index_copy_": lambda L: _x(L).index_copy_(0, _i(L, 1), L.ones(1, 3)),
    # scatter
    "scatter": lambda L: _x(L, True).scatter(0, L.tensor([[1, 0, 1]]), L.tensor([[7.0, 8, 9]])),
    "scatter_value": lambda L: _x(L).scatter(0, L.tensor([[1, 0, 1]]), 5),
    "scatter_value_int": lambda L: L.arange(4).scatter(0, _i(L, 1), 2.5),
    "scatter_big_src": lambda L: _x(L).scatter(1, L.tensor([[2], [0]]), L.arange(6.0).view(2, 3)),
    "scatter_dtype": lambda L: _x(L).scatter(0, L.tensor([[1, 0, 1]]), L.ones(1, 3).double()),
    "scatter_float_index": lambda L: _x(L).scatter(0, L.tensor([[1.0, 0, 1]]), 1.0),
    "scatter_int32_index": lambda L: _x(L).scatter(0, L.tensor([[1, 0, 1]], dtype=L.int32), 1),
    "scatter_oob": lambda L: _x(L).scatter(0, L.tensor([[2, 0, 0]]), 1.0),
    "scatter_neg": lambda L: _x(L).scatter(0, L.tensor([[-1, 0, 0]]), 1.0),
    "scatter_ndim": lambda L: _x(L).scatter(0, _i(L, 1, 0), 1.0),
    "scatter_tall_index": lambda L: _x(L).scatter(0, L.zeros(3, 3, dtype=L.int64), 1.0),
    "scatter_index_gt_src": lambda L: _x(L).scatter(0, L.zeros(1, 3, dtype=L.int64), L.ones(1, 2)),
    "scatter_index_gt_self": lambda L: _x(L).scatter(0, L.zeros(1, 4, dtype=L.int64), L.ones(1, 4)),
    "scatter_0d_src": lambda L: _x(L).scatter(0, L.tensor([[1, 0, 1]]), L.tensor(3.0)),
    "scatter_empty_index": lambda L: _x(L).scatter(0, L.zeros(0, 3, dtype=L.int64), 2.0),
    "scatter_0d": lambda L: L.tensor(1.0).scatter(0, L.tensor(0), 3.0),
    "scatter_": lambda L: _x(L).scatter_(0, L.tensor([[1, 0, 1]]), 2.0),
    # masked_scatter
    "masked_scatter": lambda L: _x(L, True).masked_scatter(_m(L), L.arange(10.0, 16).view(2, 3)),
    "masked_scatter_bcast_mask": lambda L: _x(L).masked_scatter(L.tensor([True, False, True]),
                                                                L.arange(6.0)),
    "masked_scatter_bcast_self": lambda L: L.zeros(3).masked_scatter(_m(L), L.arange(6.0)),
    "masked_scatter_short": lambda L: _x(L).masked_scatter(_m(L), L.ones(2)),
    "masked_scatter_byte_mask": lambda L: _x(L).masked_scatter(_m(L).byte(), L.ones(6)),
    "masked_scatter_dtype": lambda L: _x(L).masked_scatter(_m(L), L.ones(6).double()),
    "masked_scatter_int": lambda L: L.arange(6).view(2, 3).masked_scatter(_m(L), L.arange(3)),
    "masked_scatter_bad_bcast": lambda L: _x(L).masked_scatter(L.tensor([True, False]),
                                                               L.ones(6)),
    "masked_scatter_": lambda L: _x(L).masked_scatter_(_m(L), L.arange(3.0)),
    "masked_scatter__bcast_self": lambda L: L.zeros(3).masked_scatter_(_m(L), L.ones(6)),
    # fill_diagonal_
    "fill_diagonal_": lambda L: L.zeros(3, 3).fill_diagonal_(2),
    "fill_diagonal__tall": lambda L: L.zeros(5, 2).fill_diagonal_(2),
    "fill_diagonal__tall_wrap": lambda L: L.zeros(5, 2).fill_diagonal_(2, wrap=True),
    "fill_diagonal__wide_wrap": lambda L: L.zeros(2, 5).fill_diagonal_(2, wrap=True),
    "fill_diagonal__3d": lambda L: L.zeros(2, 2, 2).fill_diagonal_(1),
    "fill_diagonal__3d_bad": lambda L: L.zeros(2, 2, 3).fill_diagonal_(1),
    "fill_diagonal__1d": lambda L: L.zeros(2).fill_diagonal_(1),
    "fill_diagonal__0d_tensor": lambda L: L.zeros(2, 2).fill_diagonal_(L.tensor(3.0)),
    "fill_diagonal__1d_tensor": lambda L: L.zeros(2, 2).fill_diagonal_(L.tensor([3.0])),
    "fill_diagonal__int": lambda L: L.zeros(2, 2, dtype=L.int64).fill_diagonal_(2.7),
    "fill_diagonal__nonleaf": lambda L: (L.zeros(2, 2, requires_grad=True) * 1).fill_diagonal_(3),
    "fill_diagonal__leaf": lambda L: L.zeros(2, 2, requires_grad=True).fill_diagonal_(3),
    # in-place metadata changes
    "t_": lambda L: _x(L).t_(),
    "t__3d": lambda L: L.zeros(2, 2, 2).t_(),
    "t__leaf": lambda L: _x(L, True).t_(),
    "t__nonleaf": lambda L: (_x(L, True) * 1).t_(),
    "t__view_of_leaf": lambda L: _x(L, True)[0].t_(),
    "transpose_": lambda L: L.arange(24.0).view(2, 3, 4).transpose_(0, 2),
    "transpose__bad": lambda L: L.ones(2).transpose_(0, 2),
    "unsqueeze_": lambda L: _x(L).unsqueeze_(-1),
    "unsqueeze__bad": lambda L: L.ones(2).unsqueeze_(3),
    "unsqueeze__0d": lambda L: L.tensor(1.0).unsqueeze_(0),
    "squeeze_": lambda L: L.ones(2, 1, 1).squeeze_(),
    "squeeze__dim": lambda L: L.ones(2, 1, 1).squeeze_(1),
    "squeeze__dims": lambda L: L.ones(2, 1, 1).squeeze_((1, 2)),
    "squeeze__not_one": lambda L: L.ones(2, 1).squeeze_(0),
    "squeeze__bad": lambda L: L.ones(2, 1).squeeze_(2),
    # edge cases
    "logit_neg_eps": lambda L: L.tensor([0.0, 0.25, 1.0]).logit(eps=-0.5),
    "sum_to_size_is_self": lambda L: (lambda x: x.sum_to_size(2, 3) is x)(L.ones(2, 3)),
    "transpose__0d": lambda L: L.tensor(1.0).transpose_(0, 0),
    "transpose__0d_bad": lambda L: L.tensor(1.0).transpose_(0, 1),
    "squeeze__0d_bad": lambda L: L.tensor(1.0).squeeze_(1),
    "scatter__leaf": lambda L: L.zeros(2, requires_grad=True).scatter_(0, _i(L, 0), 1.0),
    "scatter__src_grad": lambda L: L.zeros(2).scatter_(0, _i(L, 0), L.ones(1, requires_grad=True)),
    "index_copy_list_index": lambda L: L.zeros(2).index_copy(0, [0], L.ones(1)),
    "masked_scatter_0d": lambda L: L.tensor(1.0).masked_scatter(L.tensor(True), L.ones(2)),
    "unsqueeze__expanded": lambda L: L.zeros(3).expand(2, 3).unsqueeze_(0),
    "fill_diagonal__column_wrap": lambda L: L.zeros(3, 1).fill_diagonal_(1.0, wrap=True),
}


@pytest.mark.parametrize("name", list(_CASES))
def test_method_matches_torch(name: str) -> None:
    _same(_CASES[name])


# -- gradients (float64) --------------------------------------------------------------------
def _r(*shape: int, lo: float = -1.0, hi: float = 1.0, seed: int = 0) -> Any:
    vals = np.random.default_rng(seed).uniform(lo, hi, shape)
    return gradsum.tensor(vals.tolist(), dtype=gradsum.float64, requires_grad=True)


_GRADS: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "H": (lambda a: a.H, (_r(2, 3),)),
    "clamp_min": (lambda a: a.clamp_min(0.1), (_r(2, 3),)),
    "clamp_max_tensor": (lambda a, b: a.clamp_max(b), (_r(2, 3), _r(3, seed=1))),
    "sum_to_size": (lambda a: a.sum_to_size(1, 3), (_r(2, 3),)),
    "broadcast_to": (lambda a: a.broadcast_to((2, 3)), (_r(3),)),
    "diff": (lambda a, p: a.diff(n=2, dim=0, prepend=p), (_r(3, 2), _r(1, 2, seed=1))),
    "logit": (lambda a: a.logit(), (_r(4, lo=0.05, hi=0.95),)),
    "logit_eps": (lambda a: a.logit(eps=0.2), (_r(6, lo=0.05, hi=0.95),)),
    "index_fill": (lambda a, v: a.index_fill(1, gradsum.tensor([0, 2, 0]), v),
                   (_r(2, 3), _r(seed=1))),
    "index_copy": (lambda a, s: a.index_copy(0, gradsum.tensor([2, 0]), s),
                   (_r(3, 2), _r(2, 2, seed=1))),
    "scatter": (lambda a, s: a.scatter(1, gradsum.tensor([[2, 0], [1, 2]]), s),
                (_r(2, 3), _r(2, 3, seed=1))),
    "scatter_value": (lambda a: a.scatter(0, gradsum.tensor([[1, 0, 1]]), 2.0), (_r(2, 3),)),
    "masked_scatter": (lambda a, s: a.masked_scatter(gradsum.tensor([True, False, True]), s),
                       (_r(2, 3), _r(7, seed=1))),
    "t_": (lambda a: (a * 1).t_(), (_r(2, 3),)),
    "transpose_": (lambda a: (a * 1).transpose_(0, 1), (_r(2, 3),)),
    "unsqueeze_": (lambda a: (a * 1).unsqueeze_(1), (_r(2, 3),)),
    "squeeze_": (lambda a: (a * 1).squeeze_(), (_r(2, 1, 3),)),
    "fill_diagonal_": (lambda a: (a * 1).fill_diagonal_(3.0, wrap=True), (_r(5, 2),)),
    "scatter_": (lambda a, s: (a * 1).scatter_(0, gradsum.tensor([[1, 0]]), s),
                 (_r(2, 2), _r(1, 2, seed=1))),
}


@pytest.mark.parametrize("name", list(_GRADS))
def test_method_gradients(name: str) -> None:
    fn, inputs = _GRADS[name]
    assert gradcheck(fn, inputs)


def test_method_gradients_match_torch() -> None:
    """The composed gradients are torch's (with the values torch's own rules give)."""
    for build in (
        lambda L, a: a.index_copy(1, L.tensor([1, 1]), a[:, :2] * 3),  # repeated index
        lambda L, a: a.scatter(0, L.tensor([[1, 0, 1]]), a[:1] ** 2),
        lambda L, a: a.masked_scatter(L.tensor([[True, False, True]] * 2), a.flip(0)),
        lambda L, a: a.logit(eps=0.3) + a.clamp_min(0.4) + a.diff(prepend=a[:, :1]).sum(),
        lambda L, a: a.index_fill(0, L.tensor([1]), a[0, 0]),
    ):
        grads = []
        for L in (torch, gradsum):
            a = L.tensor([[0.1, 0.5, 0.7], [0.3, 0.9, 0.2]], dtype=L.float64,
                         requires_grad=True)
            (build(L, a) * L.arange(1.0, 7.0, dtype=L.float64).view(2, 3)).sum().backward()
            grads.append(np.asarray(a.grad.tolist()))
        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


# -- version counters and views of the in-place forms ------------------------------------
_VERSIONED: dict[str, Callable[[Any], Any]] = {
    "t_": lambda t: t.t_(),
    "transpose_": lambda t: t.transpose_(0, 1),
    "unsqueeze_": lambda t: t.unsqueeze_(0),
    "squeeze_": lambda t: t.squeeze_(),
    "clamp_min_": lambda t: t.clamp_min_(2),
    "clamp_max_": lambda t: t.clamp_max_(2),
    "index_fill_": lambda t: t.index_fill_(0, t.new_tensor([0]).long(), 1),
    "index_copy_": lambda t: t.index_copy_(0, t.new_tensor([1]).long(), t.new_ones(1, 3)),
    "scatter_": lambda t: t.scatter_(1, t.new_tensor([[0], [2]]).long(), 9),
    "masked_scatter_": lambda t: t.masked_scatter_(t > 2, t.new_zeros(6)),
    "fill_diagonal_": lambda t: t.fill_diagonal_(7),
    "fill_diagonal__wrap": lambda t: t.t_().fill_diagonal_(7, wrap=True),
    "logit_": lambda t: t.logit_(),
    "sgn_": lambda t: t.sgn_(),
}


@pytest.mark.parametrize("name", list(_VERSIONED))
def test_inplace_method_version_and_identity(name: str) -> None:
    seen = []
    for L in (torch, gradsum):
        x = L.arange(6.0).view(2, 3) / 4
        view = x[0]
        out = _VERSIONED[name](x)
        assert out is x
        ver = (lambda t: t._version)  # (an int in both)
        seen.append((ver(x), ver(view), tuple(x.shape),
                     [repr(v) for v in np.round(np.asarray(x.tolist(), dtype=float), 5).flat]))
    assert seen[1] == seen[0]


def test_restride_ops_follow_torch_in_graph() -> None:
    """A non-leaf keeps working after a metadata change: values through a view taken before
    it, a later in-place op on it, and the saved-tensor check all behave as in torch."""
    for L in (torch, gradsum):
        p = L.arange(1.0, 7.0, dtype=L.float64).view(2, 3).requires_grad_()
        q = p * 1
        row = q[0]                 # a view taken before the metadata change
        q.t_()
        q.mul_(2)                  # the view must see the factor 2 through the new layout
        (row * L.tensor([1.0, 10.0, 100.0], dtype=L.float64)).sum().backward()
        assert p.grad.tolist() == [[2.0, 20.0, 200.0], [0.0, 0.0, 0.0]]
        assert row.tolist() == [2.0, 4.0, 6.0]
        r = p * 1
        s = r * r                  # saves r
        r.unsqueeze_(0)
        with pytest.raises(RuntimeError):
            s.sum().backward()
        u = p * 1
        with L.no_grad():
            u.squeeze_().t_()      # metadata only: the grad_fn stays
        assert type(u.grad_fn).__name__ == "MulBackward0"
        assert tuple(u.shape) == (3, 2)


def test_restride_node_names_are_torchs() -> None:
    for f in (lambda q: q.t_(), lambda q: q.transpose_(0, 1), lambda q: q.unsqueeze_(0),
              lambda q: q.squeeze_(), lambda q: q.squeeze_(1), lambda q: q.squeeze_((1,))):
        names = []
        for L in (torch, gradsum):
            q = L.ones(2, 1, requires_grad=True) * 1
            fn = f(q).grad_fn
            names.append(type(fn).__name__ if L is torch else fn.name())
        assert names[0] == names[1]


def test_scatter_reduce_argument_is_refused() -> None:
    with pytest.raises(NotImplementedError, match="scatter_add"):
        gradsum.zeros(3).scatter(0, gradsum.tensor([0]), 1.0, reduce="add")
