"""Side-by-side checks of ``ops/compose.py`` that the op table cannot express: views and
identity of results, the non-differentiable helpers (broadcast_shapes, isin, unravel_index,
logspace, scalar_tensor, the predicates), the alias names, Tensor methods and in-place forms,
gradients at ties and nan (fmax/fmin, nansum, nanmean, clamp_min), and error messages."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import pair64 as _pair  # noqa: E402
from diff_helpers import same_error, same_error_type, same_meta  # noqa: E402
from diff_helpers import same_tensor as _same  # noqa: E402


def _is_view(t: Any) -> bool:
    return t._is_view() if isinstance(t, torch.Tensor) else t._base is not None


# -- broadcasting -------------------------------------------------------------------------------
@pytest.mark.parametrize("shapes", [((3, 1), (4,)), (), ((2, 0), (1,)), (3, (4, 1)),
                                    ((1,), ()), ((5, 1, 2), (3, 1))])
def test_broadcast_shapes_matches_torch(shapes: Any) -> None:
    args = shapes if isinstance(shapes, tuple) else (shapes,)
    assert tuple(gradsum.broadcast_shapes(*args)) == tuple(torch.broadcast_shapes(*args))


@pytest.mark.parametrize("shapes", [((3, 1), (2, 4)), ((-1,),), ((2,), (3,))])
def test_broadcast_shapes_errors(shapes: Any) -> None:
    err = same_error(lambda lib: lib.broadcast_shapes(*shapes))
    with pytest.raises(err, match="broadcast"):
        gradsum.broadcast_shapes(*shapes)


def test_broadcast_tensors_returns_views_and_keeps_a_same_shape_input() -> None:
    for lib in (gradsum, torch):
        x = lib.ones(3, 4, requires_grad=True)
        y = lib.ones(4, requires_grad=True)
        a, b = lib.broadcast_tensors(x, y)
        assert a is x
        assert _is_view(b) and b.grad_fn.name() == "ExpandBackward0"
        assert lib.broadcast_tensors() == ()
    with pytest.raises(RuntimeError, match=r"size of tensor a \(4\).*tensor b \(5\)"):
        gradsum.broadcast_tensors(gradsum.ones(3, 4), gradsum.ones(5))


# -- atleast_*d, stacks, splits, ravel ---------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4)])
def test_atleast_nd_shapes_views_and_identity(n: int, shape: tuple[int, ...]) -> None:
    arr = np.arange(float(np.prod(shape))).reshape(shape)
    res = []
    for lib in (gradsum, torch):
        x = lib.tensor(arr, requires_grad=True)
        y = getattr(lib, f"atleast_{n}d")(x)
        pair = getattr(lib, f"atleast_{n}d")([x, x])
        assert isinstance(pair, tuple) and len(pair) == 2
        res.append((tuple(y.shape), y is x, _is_view(y), y.grad_fn and y.grad_fn.name(),
                    tuple(pair[1].shape)))
    assert res[0] == res[1]


def test_atleast_rejects_numbers() -> None:
    same_error(lambda lib: lib.atleast_1d(3))


def test_stacks_promote_and_reject_bad_arguments() -> None:
    ints = np.array([1, 2])
    for name in ("hstack", "vstack", "dstack", "column_stack", "row_stack"):
        same_meta(lambda lib, n=name: getattr(lib, n)([lib.tensor(ints), lib.tensor([0.5, 1.0])]),
                  quiet=True)
        same_error_type(lambda lib, n=name: getattr(lib, n)(lib.tensor(ints)), quiet=True)
    with pytest.raises(RuntimeError, match="non-empty"):
        gradsum.hstack([])


def test_tensor_split_parts_are_views_and_methods_match() -> None:
    g, t = _pair(np.arange(12.0).reshape(3, 4))
    for gp, tp in zip(g.tensor_split(3, 1), t.tensor_split(3, 1)):
        assert _is_view(gp) and _is_view(tp)
        _same(gp, tp)
    for name in ("hsplit", "vsplit"):
        gs, ts = getattr(g, name)([1]), getattr(t, name)([1])
        assert len(gs) == len(ts)
        for gp, tp in zip(gs, ts):
            _same(gp, tp)
    sum(p.sum() * (i + 1) for i, p in enumerate(g.tensor_split([1, 2], dim=1))).backward()
    sum(p.sum() * (i + 1) for i, p in enumerate(t.tensor_split([1, 2], dim=1))).backward()
    _same(g.grad, t.grad)


def test_split_error_messages_name_the_sizes() -> None:
    with pytest.raises(RuntimeError, match="size of the dimension 4 is not divisible by the "
                                           "split_size 3"):
        gradsum.hsplit(gradsum.zeros(3, 4), 3)
    with pytest.raises(RuntimeError, match="number of sections must be larger than 0, got 0"):
        gradsum.tensor_split(gradsum.zeros(3), 0)


def test_ravel_is_a_view_when_contiguous() -> None:
    for lib in (gradsum, torch):
        x = lib.zeros(2, 3, requires_grad=True) * 1
        r = lib.ravel(x)
        assert _is_view(r) and r._base is x if lib is gradsum else r._base is x
        rt = x.t().ravel()
        assert rt.tolist() == [0.0] * 6 and rt.grad_fn.name() == "ViewBackward0"
        assert tuple(lib.ravel(lib.tensor(3.0)).shape) == (1,)


def test_swapdims_and_in_place_forms() -> None:
    for name in ("swapdims", "swapaxes"):
        g, t = _pair(np.arange(6.0).reshape(2, 3), requires_grad=False)
        assert getattr(g, name + "_")(0, 1) is g
        getattr(t, name + "_")(0, 1)
        _same(g, t)
        _same(getattr(gradsum, name)(g, 0, 1), getattr(torch, name)(t, 0, 1))


# -- nan reductions ------------------------------------------------------------------------------
def test_nansum_and_nanmean_gradients_skip_nan() -> None:
    arr = np.array([[1.0, np.nan, 2.0], [np.nan, np.nan, 3.0]])
    for name, kw in [("nansum", {}), ("nansum", {"dim": 1}), ("nanmean", {}),
                     ("nanmean", {"dim": 1, "keepdim": True})]:
        g, t = _pair(arr)
        gy, ty = getattr(g, name)(**kw), getattr(t, name)(**kw)
        _same(gy, ty)
        assert gy.grad_fn.name() == type(ty.grad_fn).__name__
        gy.sum().backward()
        ty.sum().backward()
        _same(g.grad, t.grad)


def test_nan_reduction_dtypes() -> None:
    same_meta(lambda lib: lib.nansum(lib.tensor([1, 2, 3])))
    same_meta(lambda lib: lib.nansum(lib.tensor([True, True])))
    same_meta(lambda lib: lib.nansum(lib.tensor([1.0, float("nan")]), dtype=lib.float64))
    _same(gradsum.nanmean(gradsum.tensor([float("nan")])), torch.nanmean(torch.tensor([np.nan])))
    same_meta(lambda lib: lib.nansum(lib.zeros(0, 3), 0))
    with pytest.raises(RuntimeError, match=r"nanmean.*floating point.*Long"):
        gradsum.nanmean(gradsum.tensor([1, 2]))


# -- elementwise --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_ties_and_nan_send_the_gradient_like_torch(name: str) -> None:
    a = np.array([1.0, 2.0, np.nan, np.nan, 3.0, 0.0])
    b = np.array([1.0, np.nan, 2.0, np.nan, 0.0, 3.0])
    ga, ta = _pair(a)
    gb, tb = _pair(b)
    gy, ty = getattr(gradsum, name)(ga, gb), getattr(torch, name)(ta, tb)
    _same(gy, ty)
    assert gy.grad_fn.name() == type(ty.grad_fn).__name__
    up = np.arange(1.0, 7.0)
    gy.backward(gradsum.tensor(up, dtype=gradsum.float64))
    ty.backward(torch.tensor(up))
    _same(ga.grad, ta.grad)
    _same(gb.grad, tb.grad)
    _same(getattr(ga, name)(gb), getattr(ta, name)(tb))


def test_clamp_min_max_nodes_ties_and_in_place() -> None:
    arr = np.array([-1.0, 0.0, 0.5, np.nan])
    for name, bound in [("clamp_min", 0.0), ("clamp_max", 0.0)]:
        g, t = _pair(arr)
        gy, ty = getattr(g, name)(bound), getattr(t, name)(bound)
        assert gy.grad_fn.name() == type(ty.grad_fn).__name__
        gy.sum().backward()
        ty.sum().backward()
        _same(g.grad, t.grad)
        gb, tb = _pair([0.0, 0.0, 0.5, 1.0])
        gy, ty = getattr(gradsum, name)(g * 1, gb), getattr(torch, name)(t * 1, tb)
        assert gy.grad_fn.name() == type(ty.grad_fn).__name__
        gy.sum().backward()
        ty.sum().backward()
        _same(gb.grad, tb.grad)
        gz, tz = g.detach().clone(), t.detach().clone()
        assert getattr(gz, name + "_")(0.25) is gz
        getattr(tz, name + "_")(0.25)
        _same(gz, tz)
    same_meta(lambda lib: lib.clamp_min(lib.tensor([1, 2]), 1.5))
    same_error(lambda lib: lib.tensor([1.0]).clamp_min(None))


def test_logit_node_and_gradients_outside_the_domain() -> None:
    arr = np.array([-0.5, 0.0, 0.05, 0.5, 0.97, 1.0, 1.5])
    for eps in (None, 0.1):
        g, t = _pair(arr)
        gy, ty = gradsum.logit(g, eps), torch.logit(t, eps)
        _same(gy, ty)
        assert gy.grad_fn.name() == type(ty.grad_fn).__name__ == "LogitBackward0"
        gy.sum().backward()
        ty.sum().backward()
        _same(g.grad, t.grad)
    same_meta(lambda lib: lib.logit(lib.tensor([0, 1])))
    gz, tz = _pair([0.25, 0.5], requires_grad=False)
    gz.logit_()
    tz.logit_()
    _same(gz, tz)


def test_float_power_dtypes_and_in_place() -> None:
    same_meta(lambda lib: lib.float_power(lib.tensor([1, 2]), 2))
    same_meta(lambda lib: lib.float_power(2, lib.tensor([1.0, 2.0])))
    same_meta(lambda lib: lib.tensor([1.0, 2.0]).float_power(lib.tensor([2, 3])))
    same_error(lambda lib: lib.float_power(2, 3))
    with pytest.raises(RuntimeError, match=r"float_power_ has dtype Float but .* Double"):
        gradsum.tensor([1.0, 2.0]).float_power_(2)
    g, t = _pair([1.5, 2.0], requires_grad=False)
    g.float_power_(3)
    t.float_power_(3)
    _same(g, t)


def test_aliases_are_the_same_functions() -> None:
    pairs = {"subtract": "sub", "greater": "gt", "greater_equal": "ge", "less": "lt",
             "less_equal": "le", "not_equal": "ne", "negative": "neg"}
    g, t = _pair([1.0, 2.0, 3.0], requires_grad=False)
    go, to = _pair([2.0, 2.0, 2.0], requires_grad=False)
    for alias, name in pairs.items():
        if alias == "negative":
            _same(getattr(gradsum, alias)(g), getattr(torch, alias)(t))
            continue
        assert getattr(gradsum, alias) is getattr(gradsum, name)
        _same(getattr(gradsum, alias)(g, go), getattr(torch, alias)(t, to))
        _same(getattr(g, alias)(go), getattr(t, alias)(to))
    _same(gradsum.subtract(g, go, alpha=2), torch.subtract(t, to, alpha=2))
    g.subtract_(go)
    t.subtract_(to)
    g.negative_()
    t.negative_()
    _same(g, t)
    gradsum.square_(g)
    torch.square_(t)
    _same(g, t)
    _same(g.square_(), t.square_())


# -- products, distances, matrices --------------------------------------------------------------
def test_vdot_inner_dtypes_and_errors() -> None:
    same_meta(lambda lib: lib.vdot(lib.tensor([1, 2]), lib.tensor([3, 4])))
    same_meta(lambda lib: lib.inner(lib.tensor([1, 2]), lib.tensor(3.0)))
    with pytest.raises(RuntimeError, match=r"expected both vectors to have same dtype, but found"
                                           r" Float and Long"):
        gradsum.vdot(gradsum.tensor([1.0, 2.0]), gradsum.tensor([1, 2]))
    with pytest.raises(RuntimeError, match=r"shapes \[3, 4\] and \[5\]"):
        gradsum.inner(gradsum.zeros(3, 4), gradsum.zeros(5))


def test_dist_gradients_at_ties_and_kinks() -> None:
    # (torch's own backward of p = 0 raises "Expected a proper Tensor"; gradsum's gives zeros)
    a, b = np.array([1.0, -2.0, 2.0]), np.array([0.0, 0.0, 0.0])
    for p in (float("inf"), float("-inf"), 1, 2, 3):
        ga, ta = _pair(a)
        gb, tb = _pair(b)
        gy, ty = gradsum.dist(ga, gb, p), torch.dist(ta, tb, p)
        _same(gy, ty)
        gy.backward()
        ty.backward()
        _same(ga.grad, ta.grad)
        _same(gb.grad, tb.grad)


def test_matrix_power_zero_and_one_nodes() -> None:
    for n in (0, 1, 4, -1):
        g, t = _pair([[2.0, 1.0], [0.5, 3.0]])
        gy, ty = gradsum.matrix_power(g, n), t.matrix_power(n)
        _same(gy, ty)
        assert gy.grad_fn.name() == type(ty.grad_fn).__name__
        gy.sum().backward()
        ty.sum().backward()
        _same(g.grad, t.grad)


def test_block_diag_cartesian_prod_combinations_edge_cases() -> None:
    same_meta(lambda lib: lib.block_diag())
    same_meta(lambda lib: lib.block_diag(lib.tensor(1), lib.tensor([2.0, 3.0])))
    same_meta(lambda lib: lib.combinations(lib.tensor([1, 2, 3]), 0))
    same_meta(lambda lib: lib.combinations(lib.tensor([1, 2, 3]), 4))
    same_meta(lambda lib: lib.combinations(lib.tensor([1, 2, 3]), 2, with_replacement=True))
    for lib in (gradsum, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        assert lib.cartesian_prod(x) is x


def test_scatter_family_casts_src_and_checks_shapes() -> None:
    same_meta(lambda lib: lib.select_scatter(lib.zeros(2, 3, dtype=lib.float64),
                                             lib.ones(3), 0, -1))
    same_meta(lambda lib: lib.slice_scatter(lib.zeros(4), lib.ones(2), 0, 0, None, 2))
    same_meta(lambda lib: lib.diagonal_scatter(lib.zeros(3, 2), lib.ones(2), -1))
    with pytest.raises(RuntimeError, match=r"src size = \[3\], slice size = \[4\]"):
        gradsum.select_scatter(gradsum.zeros(3, 4), gradsum.zeros(3), 0, 1)
    same_error(lambda lib: lib.select_scatter(lib.zeros(3, 4), lib.zeros(4), 0, 3))
    g, t = _pair(np.zeros((2, 3)), requires_grad=False)
    for lib, x in ((gradsum, g), (torch, t)):
        out = x.diagonal_scatter(lib.ones(2, dtype=lib.float64))
        assert out.tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
        assert x.tolist() == [[0.0] * 3] * 2  # (a copy: the input is unchanged)


def test_diagflat_and_tile_methods() -> None:
    g, t = _pair([[1.0, 2.0], [3.0, 4.0]])
    _same(g.diagflat(1), t.diagflat(1))
    _same(g.tile(2), t.tile(2))
    _same(g.tile(2, 1, 1), t.tile(2, 1, 1))
    _same(g.tile((1, 2)), t.tile((1, 2)))


# -- non-differentiable helpers -------------------------------------------------------------------
@pytest.mark.parametrize("kw", [{}, {"invert": True}, {"assume_unique": True}])
def test_isin(kw: dict[str, Any]) -> None:
    same_meta(lambda lib: lib.isin(lib.tensor([1, 2, 3]), lib.tensor([2.0]), **kw))
    same_meta(lambda lib: lib.isin(lib.tensor([[1.0, float("nan")]]), 1.0, **kw))
    same_meta(lambda lib: lib.isin(2, lib.tensor([1, 2, 3]), **kw))
    same_meta(lambda lib: lib.isin(lib.zeros(0), lib.tensor([1.0]), **kw))
    same_error(lambda lib: lib.isin(lib.tensor([1.0]), lib.tensor([True])))


@pytest.mark.parametrize("indices", [[5, 7], 5, [12], [-1], [[0, 11], [3, 4]]])
def test_unravel_index(indices: Any) -> None:
    gs = gradsum.unravel_index(gradsum.tensor(indices), (3, 4))
    ts = torch.unravel_index(torch.tensor(indices), (3, 4))
    assert len(gs) == len(ts)
    for g, t in zip(gs, ts):
        _same(g, t)
    same_error(lambda lib: lib.unravel_index(lib.tensor([1.0]), (3, 4)))
    same_error(lambda lib: lib.unravel_index(lib.tensor([1]), (3, -4)))


@pytest.mark.parametrize(("args", "kw"), [((0, 2, 3), {}), ((0, 2, 3), {"base": 2}),
                                          ((-1, 1, 5), {"dtype": "float64"}),
                                          ((0, 2, 3), {"dtype": "int64"}), ((1, 1, 1), {}),
                                          ((0, 1, 0), {})])
def test_logspace(args: Any, kw: dict[str, Any]) -> None:
    def run(lib: Any) -> Any:
        k = dict(kw)
        if "dtype" in k:
            k["dtype"] = getattr(lib, k["dtype"])
        return lib.logspace(*args, **k)

    g, t = run(gradsum), run(torch)
    assert tuple(g.shape) == tuple(t.shape) and g.dtype.name == str(t.dtype)[6:]
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-6)


def test_scalar_tensor_and_predicates() -> None:
    same_meta(lambda lib: lib.scalar_tensor(3))
    same_meta(lambda lib: lib.scalar_tensor(True))
    same_meta(lambda lib: lib.scalar_tensor(3, dtype=lib.int64))
    for lib in (gradsum, torch):
        x = lib.zeros(2, 3)
        assert lib.is_complex(x) is False and x.is_complex() is False
        assert lib.is_same_size(x, lib.ones(2, 3)) and not x.is_same_size(lib.ones(3))
    same_error(lambda lib: lib.is_complex(3))


def test_argwhere_diff_index_ops_at_top_level() -> None:
    same_meta(lambda lib: lib.argwhere(lib.tensor([[0, 1], [2, 0]])))
    same_meta(lambda lib: lib.diff(lib.tensor([1, 4, 9, 16]), n=2))
    same_meta(lambda lib: lib.index_fill(lib.zeros(2, 3), 1, lib.tensor([0, 2]), 7.0))
    same_meta(lambda lib: lib.index_copy(lib.zeros(3), 0, lib.tensor([2]), lib.ones(1)))


def test_transpose_of_a_0d_tensor_is_a_view() -> None:
    # torch: transpose(0, -1)/swapdims of a 0-d tensor is a TransposeBackward0 view; a dim
    # other than 0/-1 is an IndexError
    for m in (torch, gradsum):
        x = m.tensor(2.0, requires_grad=True)
        for y in (x.transpose(0, -1), m.swapdims(x, 0, 0)):
            assert y.grad_fn.name() == "TransposeBackward0" and y._base is x
        y.backward()
        assert x.grad.item() == 1.0
        with pytest.raises(IndexError, match=r"range of \[-1, 0\], but got 1"):
            x.transpose(0, 1)
