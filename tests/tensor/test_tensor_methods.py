"""Side-by-side tests (gradsum vs torch) of the Tensor methods bound in ``ops/__init__.py``:
in-place identity and versions, views, errors, dtypes, integer/bool and empty inputs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import both_or_error, check_grads, same_error, same_tensor  # noqa: E402


def _same(fn: Any) -> None:
    """Both libraries give equal results (tensors, tuples of tensors, or plain values)."""
    g, t = both_or_error(fn, quiet=True)
    assert not isinstance(t, type), t
    assert not isinstance(g, type), g
    if isinstance(t, torch.Tensor):
        same_tensor(g, t, tol=1e-6)
    elif isinstance(t, tuple):
        assert len(g) == len(t)
        for a, b in zip(g, t):
            same_tensor(a, b, tol=1e-6)
    else:
        assert g == t


# -- in-place methods: identity, version, values, dtype ------------------------------------------
INPLACE = [
    ("acosh_", lambda L: L.tensor([1.5, 2.0]), ()),
    ("asinh_", lambda L: L.tensor([-1.5, 2.0]), ()),
    ("atanh_", lambda L: L.tensor([-0.5, 0.25]), ()),
    ("arccosh_", lambda L: L.tensor([1.5, 2.0]), ()),
    ("arcsinh_", lambda L: L.tensor([1.5, 2.0]), ()),
    ("arctanh_", lambda L: L.tensor([0.5, 0.1]), ()),
    ("fix_", lambda L: L.tensor([-1.5, 2.7]), ()),
    ("bitwise_not_", lambda L: L.tensor([1, -3]), ()),
    ("bitwise_not_", lambda L: L.tensor([True, False]), ()),
    ("logical_not_", lambda L: L.tensor([0.0, 2.0]), ()),
    ("logical_not_", lambda L: L.tensor([0, 3]), ()),
    ("eq_", lambda L: L.tensor([1.0, 2.0]), (2.0,)),
    ("ne_", lambda L: L.tensor([1, 2]), (2,)),
    ("lt_", lambda L: L.tensor([1.0, 2.0, 3.0]), (2.0,)),
    ("le_", lambda L: L.tensor([1.0, 2.0, 3.0]), (2.0,)),
    ("gt_", lambda L: L.tensor([[1.0, 2.0], [3.0, 4.0]]), (2.5,)),
    ("ge_", lambda L: L.tensor([True, False]), (True,)),
    ("greater_", lambda L: L.tensor([1.0, 2.0]), (1.0,)),
    ("greater_equal_", lambda L: L.tensor([1.0, 2.0]), (2.0,)),
    ("less_", lambda L: L.tensor([1.0, 2.0]), (2.0,)),
    ("less_equal_", lambda L: L.tensor([1.0, 2.0]), (1.0,)),
    ("not_equal_", lambda L: L.tensor([1.0, 2.0]), (1.0,)),
    ("divide_", lambda L: L.tensor([1.0, 2.0]), (4.0,)),
    ("true_divide_", lambda L: L.tensor([1.0, 2.0]), (4.0,)),
    ("multiply_", lambda L: L.tensor([1, 2]), (3,)),
    ("absolute_", lambda L: L.tensor([-1.0, 2.0]), ()),
    ("cumsum_", lambda L: L.tensor([[1.0, 2.0], [3.0, 4.0]]), (1,)),
    ("tril_", lambda L: L.ones(3, 3), ()),
    ("triu_", lambda L: L.ones(3, 4), (1,)),
    ("gcd_", lambda L: L.tensor([4, 9]), ()),
    ("lcm_", lambda L: L.tensor([4, 9]), ()),
    ("ldexp_", lambda L: L.tensor([1.0, 3.0]), ()),
    ("bitwise_left_shift_", lambda L: L.tensor([1, 3]), (2,)),
    ("bitwise_right_shift_", lambda L: L.tensor([-8, 16]), (2,)),
    ("renorm_", lambda L: L.tensor([[3.0, 4.0], [0.1, 0.1]]), (2, 0, 1.0)),
    ("mvlgamma_", lambda L: L.tensor([2.5, 3.0]), (2,)),
]


def _args(L: Any, name: str, extra: tuple[Any, ...]) -> tuple[Any, ...]:
    if name in ("gcd_", "lcm_"):
        return (L.tensor([6, 6]),)
    if name == "ldexp_":
        return (L.tensor([1, 2]),)
    return extra


@pytest.mark.parametrize(("name", "make", "extra"), INPLACE, ids=[f"{c[0]}-{i}" for i, c in
                                                                   enumerate(INPLACE)])
def test_inplace_identity_version_values(name: str, make: Any, extra: tuple[Any, ...]) -> None:
    def run(L: Any) -> Any:
        x = make(L)
        v = x._version
        out = getattr(x, name)(*_args(L, name, extra))
        assert out is x
        return x, x._version - v

    g, t = both_or_error(run, quiet=True)
    assert not isinstance(t, type) and not isinstance(g, type), (g, t)
    same_tensor(g[0], t[0], tol=1e-6)
    assert g[1] == t[1]


@pytest.mark.parametrize("name", ["acosh_", "fix_", "cumsum_", "renorm_", "eq_", "lt_"])
def test_inplace_on_leaf_requiring_grad_raises(name: str) -> None:
    args = {"cumsum_": (0,), "renorm_": (2, 0, 1.0), "eq_": (1.0,), "lt_": (1.0,)}.get(name, ())
    same_error(lambda L: getattr(L.ones(2, 2, requires_grad=True), name)(*args))


def test_inplace_comparison_records_a_zero_gradient() -> None:
    for L in (gradsum, torch):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1
        y.eq_(2.0)
        assert type(y.grad_fn).__name__ if L is torch else y.grad_fn.name() == "EqBackward0"
        y.sum().backward()
        assert x.grad.tolist() == [0.0, 0.0]
    g = gradsum.tensor([1.0, 2.0], requires_grad=True) * 1
    g.lt_(gradsum.tensor([2.0, 2.0]))
    assert g.grad_fn.name() == "LtBackward1"


def test_logical_not_keeps_history_like_torch() -> None:
    for L in (gradsum, torch):
        x = L.tensor([1.5, 0.0], requires_grad=True)
        y = x * 1
        y.logical_not_()
        assert y.requires_grad and y._version == 1
        assert y.tolist() == [0.0, 1.0]


def test_inplace_cast_errors() -> None:
    same_error(lambda L: L.tensor([1, 2]).acosh_())
    same_error(lambda L: L.tensor([1, 2]).ldexp_(L.tensor([1, 2])))
    same_error(lambda L: L.tensor([1.0]).bitwise_not_())
    same_error(lambda L: L.ones(2).eq_(L.ones(3)))
    same_error(lambda L: L.ones(2, 2).eq_(L.ones(3, 2, 2)))


def test_inplace_through_view_updates_base() -> None:
    def run(L: Any) -> Any:
        x = L.tensor([0.5, 1.5, 2.5, 1.0], requires_grad=True)
        y = x * 1
        y[1:].cumsum_(0)
        (y * L.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
        return x.grad

    _same(run)


def test_inverse_hyperbolic_inplace_backward_raises_like_torch() -> None:
    for name, node in (("acosh_", "AcoshBackward1"), ("arcsinh_", "AsinhBackward1"),
                       ("atanh_", "AtanhBackward1")):
        def run(L: Any, n: str = name) -> Any:
            y = L.tensor([1.5, 0.5], requires_grad=True) * 1
            getattr(y, n)()
            return type(y.grad_fn).__name__

        g, t = both_or_error(run, quiet=True)
        assert g == t == node
        same_error(lambda L, n=name: getattr(L.tensor([1.5], requires_grad=True) * 1, n)()
                   .sum().backward())


def test_inplace_gradients_match_torch() -> None:
    check_grads(lambda L, F, x: (x * 1).fix_() + x, [np.array([0.1, -0.4, 0.7])], name=True)
    check_grads(lambda L, F, x: (x * 1).mvlgamma_(2), [np.array([1.1, 2.4])], name=True)
    check_grads(lambda L, F, x: (x * 1).cumsum_(0), [np.array([0.1, -0.4, 0.7])], name=True)
    check_grads(lambda L, F, x: (x * 1).renorm_(2, 0, 0.5), [np.ones((2, 3))], name=True)
    check_grads(lambda L, F, x, i, s: (x * 1).index_add_(0, i, s),
                [np.ones((3, 2)), np.array([0, 0]), np.ones((2, 2))], consts=(1,), name=True)
    check_grads(lambda L, F, x, i, s: (x * 1).scatter_add_(0, i, s),
                [np.ones((3, 2)), np.array([[0, 2]]), np.ones((1, 2))], consts=(1,), name=True)


# -- shifts and their operators ------------------------------------------------------------------
def test_shift_operators() -> None:
    _same(lambda L: L.tensor([1, 3]) << 2)
    _same(lambda L: L.tensor([-9, 16]) >> L.tensor([1, 2]))
    _same(lambda L: 1 << L.tensor([1, 2]))
    _same(lambda L: 64 >> L.tensor([1, 2]))
    _same(lambda L: L.tensor([1, 2], dtype=L.uint8) << 7)
    _same(lambda L: L.tensor([True]) << 1)
    _same(lambda L: L.tensor([5], dtype=L.int32) << L.tensor([40]))
    same_error(lambda L: L.tensor([1.0]) << 1)
    same_error(lambda L: L.tensor([1]) << 1.5)

    def ishift(L: Any) -> Any:
        x = L.tensor([1, 2])
        y = x
        y <<= 3
        assert y is x and x._version == 1
        x >>= L.tensor([1, 0])
        return x

    _same(ishift)


# -- views: unfold, split_with_sizes, unsafe_split -----------------------------------------------
@pytest.mark.parametrize("args", [(0, 2, 1), (1, 2, 2), (-1, 3, 1), (0, 0, 1), (1, 4, 5)])
def test_unfold_values_and_grads(args: tuple[int, int, int]) -> None:
    _same(lambda L: L.arange(12.0).reshape(3, 4).unfold(*args))
    if args[1]:
        check_grads(lambda L, F, x: x.unfold(*args), [np.arange(12.0).reshape(3, 4) / 7],
                    name=True)


def test_unfold_is_a_view() -> None:
    for L in (gradsum, torch):
        x = L.arange(6.0)
        u = x.unfold(0, 2, 2)
        assert u._base is x
        x.add_(1)
        assert u.tolist() == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
        assert u._version == x._version == 1
    _same(lambda L: L.tensor(3.0).unfold(0, 1, 1))
    for bad in [(0, 7, 1), (0, 2, 0), (1, 1, 1)]:
        same_error(lambda L, b=bad: L.arange(6.0).unfold(*b))


def test_split_with_sizes_and_unsafe_split() -> None:
    _same(lambda L: L.arange(6.0).split_with_sizes([2, 4]))
    _same(lambda L: L.arange(6.0).reshape(2, 3).split_with_sizes([1, 2], 1))
    _same(lambda L: L.arange(5).unsafe_split(2))
    _same(lambda L: L.arange(5).unsafe_chunk(3))
    _same(lambda L: L.unsafe_split(L.arange(4.0), 3))
    same_error(lambda L: L.arange(6.0).split_with_sizes([2, 2]))
    check_grads(lambda L, F, x: x.unsafe_split(2)[1] * x.unsafe_chunk(2)[0],
                [np.arange(4.0)], name=True)
    for L in (gradsum, torch):
        x = L.ones(4, requires_grad=True)
        a, b = (x * 2).unsafe_split(2)
        assert a._base is None
        a.add_(1)  # (not a view for autograd: allowed, unlike split's outputs)
        (a.sum() + b.sum()).backward()
        assert x.grad.tolist() == [2.0] * 4


# -- put, index_put --------------------------------------------------------------------------------
def test_put_and_index_put_accumulate() -> None:
    _same(lambda L: L.zeros(2, 2).put_(L.tensor([0, 3, 3]), L.tensor([1.0, 2.0, 3.0]),
                                       accumulate=True))
    _same(lambda L: L.zeros(3).index_put((L.tensor([0, 0, 2]),), L.tensor(1.0),
                                         accumulate=True))
    _same(lambda L: L.zeros(2, 3).index_put((L.tensor([0, 0]), L.tensor([1, 1])),
                                            L.tensor([1.0, 2.0]), accumulate=True))
    _same(lambda L: L.zeros(3).index_put_((L.tensor([True, False, True]),), L.tensor(5.0)))
    _same(lambda L: L.zeros(2, 2).index_put((L.tensor([1]),), L.tensor([7.0, 8.0])))
    same_error(lambda L: L.zeros(3).index_put((L.tensor([0]),), L.tensor([1])))
    for name, args in (("index_add_", lambda x, L: (0, L.tensor([0, 1, 2]), x)),
                       ("index_add_", lambda x, L: (0, L.tensor([0]), x[:1])),
                       ("scatter_add_", lambda x, L: (0, L.tensor([0, 1, 2]), x)),
                       ("put_", lambda x, L: (L.tensor([0, 1, 2]), x)),
                       ("index_put_", lambda x, L: ((L.tensor([0, 1, 2]),), x, True))):
        def overlap(L: Any, n: str = name, a: Any = args) -> Any:
            x = L.ones(3)
            return getattr(x, n)(*a(x, L))

        same_error(overlap)
        same_error(lambda L, n=name, a=args: getattr(L.ones(3, requires_grad=True), n)(
            *a(L.ones(3, requires_grad=True), L)))
    check_grads(lambda L, F, x, v: x.index_put((L.tensor([0, 0, 1]),), v, accumulate=True),
                [np.ones(3), np.array([1.0, 2.0, 3.0])])
    check_grads(lambda L, F, x, v: x.put(L.tensor([0, 2, 2]), v, accumulate=True),
                [np.ones(3), np.array([1.0, 2.0, 3.0])], name=True)

    def version(L: Any) -> Any:
        x = L.zeros(3)
        out = x.put_(L.tensor([1]), L.tensor([4.0]))
        assert out is x
        return x, x._version

    g, t = version(gradsum), version(torch)
    same_tensor(g[0], t[0])
    assert g[1] == t[1]


# -- small ops ---------------------------------------------------------------------------------
def test_real_tensor_identities() -> None:
    for L in (gradsum, torch):
        x = L.tensor([1.0, -2.0])
        assert x.conj() is x and x.resolve_conj() is x and x.resolve_neg() is x
        assert x.real is x and x.positive() is x and L.positive(x) is x
        assert not x.is_conj() and not x.is_neg() and not x.is_inference()
        assert x.conj_physical() is x
    same_error(lambda L: L.tensor([1.0]).imag)
    same_error(lambda L: L.tensor([True]).positive())


def test_attributes() -> None:
    for make in (lambda L: L.ones(3), lambda L: L.ones(2, 3, dtype=L.int64),
                 lambda L: L.zeros(0, dtype=L.bool), lambda L: L.arange(10.0)[3:]):
        g, t = make(gradsum), make(torch)
        assert g.nbytes == t.nbytes and g.itemsize == t.itemsize
        assert g.storage_offset() == t.storage_offset()
        assert (g.is_cpu, g.is_sparse, g.is_quantized, g.is_meta, g.get_device()) == (
            t.is_cpu, t.is_sparse, t.is_quantized, t.is_meta, t.get_device())
    x = gradsum.arange(4.0)
    assert x[2:].data_ptr() - x.data_ptr() == 8
    assert not x.is_pinned() and not x.is_shared()


def test_misc_values() -> None:
    _same(lambda L: L.tensor([[3, 1], [2, 4]]).msort())
    _same(lambda L: L.tensor([1.0, float("inf"), -float("inf")]).isposinf())
    _same(lambda L: L.tensor([1, 2]).isneginf())
    _same(lambda L: L.tensor([1, 2]).isreal())
    _same(lambda L: L.frexp(L.tensor([8.0, -0.3, 0.0])))
    _same(lambda L: L.tensor([8.0, 3.0], dtype=L.float64).frexp())
    _same(lambda L: L.tensor([-1.5, 0.3]).fix())
    _same(lambda L: L.gcd(L.tensor([0, 12, -18]), L.tensor([0, 8, 12])))
    _same(lambda L: L.tensor([4, 6]).lcm(L.tensor([6, 4])))
    _same(lambda L: L.tensor([-2.0, 0.0, 3.0]).angle())
    _same(lambda L: L.ones(2, 3).adjoint())
    _same(lambda L: L.tensor([1.0, 2.0]).ger(L.tensor([3.0, 4.0])))
    _same(lambda L: L.zeros(2, 2).addr(L.tensor([1.0, 2.0]), L.tensor([3.0, 4.0]),
                                       beta=0.5, alpha=2))
    _same(lambda L: L.tensor([-1.0, 0.2, 0.7]).hardshrink(0.5))
    _same(lambda L: L.tensor([[-1.0, 2.0]]).prelu(L.tensor([0.1, 0.2])))
    _same(lambda L: L.arange(5).narrow_copy(0, 1, 3))
    _same(lambda L: L.zeros(0, 3).acosh())
    _same(lambda L: L.tensor([], dtype=L.int64) << 1)
    same_error(lambda L: L.ones(2).adjoint())
    same_error(lambda L: L.tensor([1]).frexp())
    same_error(lambda L: L.tensor([1.5]).gcd(L.tensor([2.5])))


def test_addr_inplace_and_grads() -> None:
    def run(L: Any) -> Any:
        x = L.zeros(2, 2)
        out = x.addr_(L.tensor([1.0, 2.0]), L.tensor([3.0, 4.0]))
        assert out is x
        return x

    _same(run)
    check_grads(lambda L, F, a, b, c: a.addr(b, c, beta=2.0, alpha=0.5),
                [np.ones(3), np.array([1.0, 2.0]), np.array([0.5, -1.0, 2.0])], name=True)


def test_cov_corrcoef() -> None:
    data = np.array([[0.0, 1.5, 2.0, 4.0], [2.0, 1.0, -0.5, 0.0], [1.0, 1.0, 3.0, 2.0]])
    _same(lambda L: L.tensor(data).cov())
    _same(lambda L: L.tensor(data).corrcoef())
    _same(lambda L: L.cov(L.tensor(data[0])))
    _same(lambda L: L.cov(L.tensor(data), correction=0))
    _same(lambda L: L.cov(L.tensor(data), fweights=L.tensor([1, 2, 1, 3]),
                          aweights=L.tensor([0.5, 1.0, 2.0, 1.0])))
    _same(lambda L: L.cov(L.tensor([[1, 2, 4], [3, 4, 1]])))
    _same(lambda L: L.corrcoef(L.tensor([1.0, 2.0])))
    same_error(lambda L: L.cov(L.ones(2, 2, 2)))
    same_error(lambda L: L.cov(L.ones(2, 3), fweights=L.tensor([1.0, 2.0, 3.0])))
    same_error(lambda L: L.cov(L.ones(2, 3), aweights=L.tensor([1, 2, 3])))
    same_error(lambda L: L.cov(L.ones(2, 3), fweights=L.tensor([1, -2, 3])))
    check_grads(lambda L, F, x: L.cov(x), [data], name=True)
    check_grads(lambda L, F, x, w: L.cov(x, aweights=w), [data, np.array([0.5, 1, 2, 1.0])],
                name=True)
    check_grads(lambda L, F, x: L.corrcoef(x), [data], name=True)


def test_histogram() -> None:
    for kwargs in ({"bins": 4}, {"bins": 3, "range": (0.0, 3.0)}, {"bins": 2, "density": True}):
        def run(L: Any, kw: dict[str, Any] = kwargs) -> Any:
            r = L.histogram(L.tensor([1.0, 2.0, 1.0, 2.5]), **kw)
            assert type(r).__name__ == "histogram" and r.hist is r[0]
            return tuple(r)

        _same(run)
    _same(lambda L: tuple(L.tensor([1.0, 1.0]).histogram(2)))
    _same(lambda L: tuple(L.tensor([1.0, 2.0, 3.0]).histogram(L.tensor([0.0, 1.5, 4.0]))))
    _same(lambda L: tuple(L.tensor([1.0, 2.0]).histogram(
        2, weight=L.tensor([0.5, 2.0]))))
    same_error(lambda L: L.tensor([1, 2]).histogram(2))
    same_error(lambda L: L.tensor([1.0, 2.0]).histogram(2, range=(3.0, 1.0)))


# -- apply_, map_, resize_ -------------------------------------------------------------------------
def test_apply_map_resize() -> None:
    def run(L: Any) -> Any:
        x = L.tensor([1, 2, 3])
        assert x.apply_(lambda v: v * 2) is x
        assert x.map_(L.tensor([1]), lambda a, b: a + b) is x
        return x, x._version

    g, t = run(gradsum), run(torch)
    same_tensor(g[0], t[0])
    assert g[1] == t[1]
    same_error(lambda L: L.ones(2, requires_grad=True).apply_(lambda v: v))
    same_error(lambda L: L.ones(2, requires_grad=True).map_(L.ones(2), lambda a, b: a))

    def resize(L: Any) -> Any:
        x = L.arange(6.0)
        assert x.resize_(2, 2) is x
        v1 = x._version
        x.resize_as_(L.zeros(2, 2))
        return x, v1, x._version

    g, t = resize(gradsum), resize(torch)
    same_tensor(g[0], t[0])
    assert g[1:] == t[1:]
    same_error(lambda L: L.ones(2, requires_grad=True).resize_(3))
    same_error(lambda L: (L.ones(2, requires_grad=True) * 1).resize_(3))
    g = gradsum.arange(3.0).resize_(5)
    assert g.shape == (5,) and g[:3].tolist() == [0.0, 1.0, 2.0]


# -- random methods: argument checks --------------------------------------------------------------
def test_random_fills_and_methods() -> None:
    for L in (gradsum, torch):
        x = L.zeros(200)
        assert x.geometric_(0.5) is x and bool((x >= 1).all()) and x._version == 1
        assert x.cauchy_(0.0, 2.0) is x
        assert x.log_normal_(0.0, 0.5) is x and bool((x > 0).all())
        assert L.zeros(3, dtype=L.int64).geometric_(0.5).dtype == L.int64
        p = L.tensor([0.0, 1.0])
        assert p.bernoulli().tolist() == [0.0, 1.0]
        assert L.tensor([[0.0, 1.0]]).multinomial(1).tolist() == [[1]]
    same_error(lambda L: L.zeros(3).geometric_(1.5))
    same_error(lambda L: L.zeros(3, dtype=L.int64).cauchy_())
    same_error(lambda L: L.zeros(3).log_normal_(1.0, 0.0))
    same_error(lambda L: L.zeros(3, dtype=L.int64).log_normal_())
    same_error(lambda L: L.zeros(3, requires_grad=True).geometric_(0.5))


def test_linalg_method_forms() -> None:
    a = np.array([[2.0, 1.0], [1.0, 3.0], [0.5, 0.0]])
    g, t = both_or_error(lambda L: L.tensor(a).qr(), quiet=True)
    same_tensor(g.Q, t.Q, tol=1e-6)
    same_tensor(g.R, t.R, tol=1e-6)
    g, t = both_or_error(lambda L: L.tensor(a).qr(some=False), quiet=True)
    assert tuple(g.Q.shape) == tuple(t.Q.shape) == (3, 3)
    for name in ("solve", "lstsq"):
        same_error(lambda L, n=name: getattr(L.eye(2), n)(L.eye(2)))
    for name in ("eig", "symeig"):
        same_error(lambda L, n=name: getattr(L.eye(2), n)())


def test_method_spellings_grad_and_grad_fn_names() -> None:
    """The Tensor-method spellings of these ops give torch's gradients and grad_fn names."""
    check_grads(lambda L, F, x: x.acosh(), [np.array([1.5, 3.0])], name=True)
    check_grads(lambda L, F, x: x.arcsinh(), [np.array([-1.5, 3.0])], name=True)
    check_grads(lambda L, F, x, e: L.ldexp(x, e), [np.array([1.5, 3.0]), np.array([1.0, -2.0])],
                name=True)
    check_grads(lambda L, F, x: x.frexp()[0], [np.array([1.5, -3.0])], name=True)
    check_grads(lambda L, F, x: x.mvlgamma(2), [np.array([1.5, 3.0])], name=True)
    check_grads(lambda L, F, x: x.renorm(1, 1, 1.5), [np.arange(6.0).reshape(2, 3) / 3],
                name=True)
    check_grads(lambda L, F, x: x.narrow_copy(1, 1, 2), [np.arange(6.0).reshape(2, 3)],
                name=True)
    check_grads(lambda L, F, x, w: x.prelu(w), [np.array([[-1.0, 2.0], [0.5, -3.0]]),
                                               np.array([0.25, 0.5])], name=True)
