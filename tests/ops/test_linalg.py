"""Side by side with torch: the linalg ops' errors and their types, the ``info`` of the ``_ex``
variants, named tuples, which lstsq fields are empty, batched shapes, dtypes, warnings, the outputs
the op table leaves out (lu's P, lstsq's singular values), and the names torch has."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import both_or_error, pair64  # noqa: E402

SING = [[1.0, 2.0], [2.0, 4.0]]


def _np(t: Any) -> np.ndarray:
    return t.detach().numpy()


def _same(g: Any, t: Any, tol: float = 1e-10) -> None:
    assert type(g).__name__ == type(t).__name__, (type(g), type(t))
    gs, ts = (list(g), list(t)) if isinstance(t, tuple) else ([g], [t])
    if hasattr(t, "_fields"):
        assert g._fields == t._fields
    for a, b in zip(gs, ts):
        assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol, equal_nan=True)


def _both(fn: Any, *arrays: Any) -> tuple[Any, Any]:
    gs = [gradsum.tensor(np.asarray(a, dtype=np.float64), dtype=gradsum.float64)
          for a in arrays]
    ts = [torch.tensor(np.asarray(a, dtype=np.float64)) for a in arrays]
    return fn(gradsum, *gs), fn(torch, *ts)


def _err_name(fn: Any) -> tuple[str, str]:
    g, t = both_or_error(fn, quiet=True)
    assert isinstance(g, type) and isinstance(t, type), (g, t)
    return g.__name__, t.__name__.lstrip("_")


@pytest.mark.parametrize("name", ["inv_ex", "lu_factor_ex", "cholesky_ex"])
def test_ex_info_batched(name: str) -> None:
    a = np.stack([np.eye(2) * 2, SING, [[-1.0, 2.0], [2.0, 1.0]]])
    g, t = _both(lambda lib, x: getattr(lib.linalg, name)(x), a)
    _same(g, t)
    assert g.info.dtype == gradsum.int32


def test_solve_ex_singular_gives_inf_and_info() -> None:
    g, t = _both(lambda lib, a, b: lib.linalg.solve_ex(a, b), SING, np.ones((2, 1)))
    _same(g, t)
    assert g.info.item() == 2


def test_cholesky_ex_partial_factor() -> None:
    for a in ([[1.0, 2.0], [2.0, 1.0]], [[-1.0, 2.0], [2.0, 1.0]]):
        _same(*_both(lambda lib, x: lib.linalg.cholesky_ex(x), a))


@pytest.mark.parametrize("call", [
    lambda lib, a: lib.linalg.inv_ex(a, check_errors=True),
    lambda lib, a: lib.linalg.cholesky_ex(a, check_errors=True),
    lambda lib, a: lib.cholesky_inverse(a * lib.tensor([[1.0, 0.0], [1.0, 0.0]],
                                                       dtype=a.dtype)),
])
def test_linalg_errors(call: Any) -> None:
    g, t = _err_name(lambda lib: call(lib, lib.tensor(SING, dtype=lib.float64)))
    assert g == t == "LinAlgError"
    assert issubclass(gradsum.linalg.LinAlgError, RuntimeError)


def test_lu_factor_singular_is_runtime_error() -> None:
    def fn(lib: Any) -> Any:
        return lib.linalg.lu_factor(lib.tensor(SING, dtype=lib.float64))

    assert _err_name(fn) == ("RuntimeError", "RuntimeError")
    with pytest.raises(RuntimeError, match=r"U\[2,2\] is zero"):
        fn(gradsum)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 3), (3, 5)])
def test_lu_and_lu_unpack_permutation(shape: tuple[int, ...]) -> None:
    a = np.random.default_rng(0).standard_normal(shape)
    _same(*_both(lambda lib, x: lib.linalg.lu(x), a))
    _same(*_both(lambda lib, x: lib.lu_unpack(*lib.linalg.lu_factor(x)), a))
    _same(*_both(lambda lib, x: lib.lu_unpack(*lib.linalg.lu_factor(x), unpack_data=False), a))
    g = gradsum.linalg.lu_factor(gradsum.tensor(a))
    assert g.pivots.dtype == gradsum.int32 and type(g).__name__ == "linalg_lu_factor"


@pytest.mark.parametrize("driver", [None, "gelsy", "gelsd", "gelss", "gels"])
@pytest.mark.parametrize("shapes", [((5, 3), (5, 2)), ((2, 4), (2, 2)), ((2, 5, 3), (1, 5, 2)),
                                    ((2, 5, 3), (2, 5))])
def test_lstsq_fields(driver: str | None, shapes: Any) -> None:
    """linalg.lstsq's fields for each driver and batch shape are torch's (which are empty, and the
    values)."""
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    if driver == "gels" and shapes[0][-2] < shapes[0][-1]:
        pytest.skip("gels on a wide matrix: LAPACK's QR-based minimum norm, not compared")
    g, t = _both(lambda lib, x, y: lib.linalg.lstsq(x, y, driver=driver), a, b)
    _same(g, t, tol=1e-9)


def test_lstsq_rank_deficient_has_no_residuals() -> None:
    a = np.random.default_rng(2).standard_normal((5, 3))
    a[:, 2] = a[:, 1]
    g, t = _both(lambda lib, x, y: lib.linalg.lstsq(x, y, driver="gelsd"), a, np.ones((5, 1)))
    assert g.residuals.shape == t.residuals.shape == (0,)
    assert g.rank.item() == t.rank.item() == 2
    np.testing.assert_allclose(_np(g.solution), _np(t.solution), atol=1e-9)


def test_lstsq_residual_gradient() -> None:
    rng = np.random.default_rng(3)
    (ga, ta), (gb, tb) = pair64(rng.standard_normal((5, 3))), pair64(rng.standard_normal((5, 2)))
    gradsum.linalg.lstsq(ga, gb, driver="gelsd").residuals.sum().backward()
    torch.linalg.lstsq(ta, tb, driver="gelsd").residuals.sum().backward()
    np.testing.assert_allclose(ga.grad.numpy(), ta.grad.numpy(), atol=1e-9)
    np.testing.assert_allclose(gb.grad.numpy(), tb.grad.numpy(), atol=1e-9)


@pytest.mark.parametrize("p", ["fro", 1, -1, float("inf"), -float("inf")])
def test_cond_inverse_filled_in_place_backward_raises(p: Any) -> None:
    a = np.eye(3) * 2 + 0.1

    def fn(lib: Any) -> Any:
        x = lib.tensor(a, dtype=lib.float64, requires_grad=True)
        lib.linalg.cond(x, p).backward()

    g, t = both_or_error(fn)
    assert g is t is RuntimeError


def test_cond_singular_is_inf() -> None:
    # The norms computed through the inverse give inf for a singular matrix, in both.
    for p in (1, -1, "fro", float("inf")):
        _same(*_both(lambda lib, x, p=p: lib.linalg.cond(x, p), SING), tol=1e-6)
    # The 2-norm's ratio of singular values (and the nuclear norm's) divides by a
    # rounding-noise singular value (about 1e-16, its digits LAPACK's): both only say "huge"
    # (or "tiny" for p=-2).
    huge, tiny = (lambda v: v > 1e15), (lambda v: 0 <= v < 1e-15)
    for p, check in ((None, huge), (2, huge), ("nuc", huge), (-2, tiny)):
        g, t = _both(lambda lib, x, p=p: lib.linalg.cond(x, p), SING)
        assert str(g.dtype).split(".")[-1] == str(t.dtype).split(".")[-1] == "float64"
        assert check(g.item()) and check(t.item()), (p, g.item(), t.item())


def test_solve_triangular_zero_diagonal_gives_inf() -> None:
    _same(*_both(lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=False),
                 [[0.0, 0.0], [1.0, 1.0]], np.ones((2, 1))))


def test_triangular_solve_named_tuple_and_broadcast_clone() -> None:
    rng = np.random.default_rng(4)
    a = np.triu(rng.standard_normal((3, 3))) + 3 * np.eye(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g, t = _both(lambda lib, b, x: lib.triangular_solve(b, x), rng.standard_normal((2, 3, 2)),
                     a)
    _same(g, t)
    assert g.cloned_coefficient.shape == (2, 3, 3)


def test_deprecation_and_beta_warnings_once() -> None:
    from gradsum.ops.linalg import _base

    _base._WARNED.clear()
    x = gradsum.eye(2)
    calls = [lambda: gradsum.chain_matmul(x, x), lambda: gradsum.triangular_solve(x, x),
             lambda: x.index_reduce(0, gradsum.tensor([0]), gradsum.ones(1, 2), "prod")]
    for first in (True, False):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for c in calls:
                c()
        assert len(w) == (3 if first else 0)
    assert "torch.linalg.multi_dot" in str(w[0].message) if w else True


def test_matrix_rank_tolerances() -> None:
    a = np.diag([1.0, 1e-3, 1e-9])
    for kw in ({}, {"atol": 1e-2}, {"rtol": 1e-4}, {"atol": 1e-2, "rtol": 0.0},
               {"hermitian": True}):
        g, t = _both(lambda lib, x, kw=kw: lib.linalg.matrix_rank(x, **kw), a)
        assert g.item() == t.item() and g.dtype == gradsum.int64


def test_multi_dot_and_chain_matmul_errors() -> None:
    assert _err_name(lambda lib: lib.linalg.multi_dot([lib.ones(2)])) == ("RuntimeError",) * 2
    assert _err_name(lambda lib: lib.chain_matmul()) == ("RuntimeError",) * 2


def test_linalg_names_exist_like_torch() -> None:
    for name in ("solve_triangular", "cholesky_ex", "inv_ex", "solve_ex", "lu_factor",
                 "lu_factor_ex", "lu", "lu_solve", "lstsq", "matrix_rank", "cond", "eigvalsh",
                 "diagonal", "matmul", "matrix_power", "multi_dot", "tensorinv", "tensorsolve",
                 "vander", "vecdot"):
        assert hasattr(gradsum.linalg, name), name
    for name in ("cholesky_solve", "cholesky_inverse", "triangular_solve", "index_reduce",
                 "index_reduce_"):
        assert hasattr(gradsum.Tensor, name) and hasattr(torch.Tensor, name), name
    for name in ("cholesky_solve", "cholesky_inverse", "triangular_solve", "lu_unpack",
                 "chain_matmul", "index_reduce"):
        assert hasattr(gradsum, name), name
