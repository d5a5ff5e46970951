"""Extra tests of ops/special.py and ops/decomp.py beyond the op table: special-function
accuracy sweeps against torch in float64 (wide ranges, negative non-integers, poles and signs),
LinAlgError, named-tuple returns, grad_fn names the table cannot compare (gauge-fixed
eigen/singular vectors), Tensor methods and in-place forms, torch's gradients at singular
points."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from gradsum.ops.special import bessel as S  # noqa: E402

_RNG = np.random.default_rng(20240613)
_WIDE = np.concatenate([
    _RNG.uniform(-30, 30, 4000), _RNG.uniform(0, 3, 2000), _RNG.uniform(-6, 0, 2000),
    10.0 ** _RNG.uniform(-300, 300, 500), -(10.0 ** _RNG.uniform(-300, 2, 500)),
    np.array([0.0, -0.0, -1.0, -2.0, 1.0, 2.0, 10.0, np.inf, -np.inf, np.nan, 1e-300]),
])


def _close(mine: np.ndarray, ref: np.ndarray, rtol: float, atol: float = 0.0) -> None:
    """Same nan/inf pattern (with signs), finite values within rtol (+ atol)."""
    np.testing.assert_array_equal(np.isnan(mine), np.isnan(ref))
    inf = np.isinf(ref)
    np.testing.assert_array_equal(mine[inf], ref[inf])
    f = np.isfinite(ref)
    np.testing.assert_allclose(mine[f], ref[f], rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_gamma_family_accuracy_against_torch(name: str) -> None:
    mine = getattr(gradsum, name)(gradsum.tensor(_WIDE, dtype=gradsum.float64)).numpy()
    ref = getattr(torch, name)(torch.tensor(_WIDE)).numpy()
    # (absolute slack only near the zeros of lgamma/digamma, where relative error is
    # meaningless for any float64 implementation)
    _close(mine, ref, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7])
def test_polygamma_accuracy_against_torch(n: int) -> None:
    x = _WIDE[np.abs(_WIDE) < 1e6]  # (the direct sum for large negative x is slow in both)
    mine = gradsum.polygamma(n, gradsum.tensor(x, dtype=gradsum.float64)).numpy()
    ref = torch.polygamma(n, torch.tensor(x)).numpy()
    _close(mine, ref, rtol=1e-12, atol=1e-300)


def test_erfc_erfinv_i0_accuracy_against_torch() -> None:
    x = np.concatenate([_RNG.uniform(-6, 27, 5000), [0.0, -0.0, np.inf, -np.inf, np.nan]])
    _close(gradsum.erfc(gradsum.tensor(x, dtype=gradsum.float64)).numpy(),
           torch.erfc(torch.tensor(x)).numpy(), rtol=1e-12)
    y = np.concatenate([_RNG.uniform(-1, 1, 5000), 1 - 10.0 ** _RNG.uniform(-16, -1, 500),
                        [1.0, -1.0, 0.0, -0.0, 2.0, np.nan]])
    _close(gradsum.erfinv(gradsum.tensor(y, dtype=gradsum.float64)).numpy(),
           torch.erfinv(torch.tensor(y)).numpy(), rtol=1e-12)
    z = _RNG.uniform(-700, 700, 3000)
    _close(gradsum.i0(gradsum.tensor(z, dtype=gradsum.float64)).numpy(),
           torch.i0(torch.tensor(z)).numpy(), rtol=1e-12)
    _close(S._i1_array(z), torch.special.i1(torch.tensor(z)).numpy(), rtol=1e-12)


def test_pole_values_and_signs() -> None:
    x = [0.0, -0.0, -1.0, -3.0, math.inf, -math.inf, math.nan]
    for name in ("lgamma", "digamma"):
        mine = getattr(gradsum, name)(gradsum.tensor(x, dtype=gradsum.float64)).tolist()
        ref = getattr(torch, name)(torch.tensor(x, dtype=torch.float64)).tolist()
        assert np.array_equal(mine, ref, equal_nan=True), name
    for n in (1, 2, 3):
        mine = gradsum.polygamma(n, gradsum.tensor(x, dtype=gradsum.float64)).numpy()
        ref = torch.polygamma(n, torch.tensor(x, dtype=torch.float64)).numpy()
        _close(mine, ref, rtol=1e-12)


def test_float32_results_round_like_torch() -> None:
    x = _RNG.uniform(0.1, 20, 200).astype(np.float32)
    for name in ("lgamma", "digamma", "erfc", "i0", "sinc"):
        mine = getattr(gradsum, name)(gradsum.tensor(x)).numpy()
        ref = getattr(torch, name)(torch.tensor(x)).numpy()
        assert mine.dtype == np.float32
        np.testing.assert_allclose(mine, ref, rtol=3e-6, atol=1e-6, err_msg=name)


def test_xlogy_zero_rule_and_its_gradient() -> None:
    xs = [0.0, 0.0, 0.0, 1.0, 0.0]
    ys = [0.0, math.nan, -1.0, 0.0, 0.5]
    res = []
    for lib in (gradsum, torch):
        x = lib.tensor(xs, dtype=lib.float64, requires_grad=True)
        y = lib.tensor(ys, dtype=lib.float64, requires_grad=True)
        out = lib.xlogy(x, y)
        gx, gy = lib.autograd.grad(out.sum(), [x, y])
        res.append((out.tolist(), gx.tolist(), gy.tolist()))
    assert np.array_equal(np.array(res[0], dtype=float), np.array(res[1], dtype=float),
                          equal_nan=True)


def test_heaviside_backward_raises_like_torch() -> None:
    for lib in (gradsum, torch):
        x = lib.tensor([1.0, -1.0], requires_grad=True)
        out = lib.heaviside(x, lib.tensor([0.5]))
        assert out.requires_grad
        assert type(out.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::heaviside is not "
                                               "implemented"):
            out.sum().backward()


def test_polygamma_errors() -> None:
    with pytest.raises(RuntimeError, match="does not support negative n"):
        gradsum.polygamma(-1, gradsum.ones(2))
    with pytest.raises(RuntimeError, match="does not support negative n"):
        torch.polygamma(-1, torch.ones(2))


def test_methods_and_inplace_forms() -> None:
    a = np.array([0.3, 1.7, 2.5])
    g, t = gradsum.tensor(a, dtype=gradsum.float64), torch.tensor(a)
    for name in ("erfc", "erfinv", "lgamma", "digamma", "i0", "sinc", "frac", "deg2rad",
                 "rad2deg"):
        if name == "erfinv":
            g2, t2 = g / 3, t / 3
        else:
            g2, t2 = g, t
        np.testing.assert_allclose(getattr(g2, name)().numpy(), getattr(t2, name)().numpy(),
                                   rtol=1e-12, err_msg=name)
        gc, tc = g2.clone(), t2.clone()
        assert getattr(gc, name + "_")() is gc
        getattr(tc, name + "_")()
        np.testing.assert_allclose(gc.numpy(), tc.numpy(), rtol=1e-12, err_msg=name + "_")
    assert g.polygamma(2).tolist() == pytest.approx(t.polygamma(2).tolist(), rel=1e-12)
    gc, tc = g.clone(), t.clone()
    gc.polygamma_(1)
    tc.polygamma_(1)
    np.testing.assert_allclose(gc.numpy(), tc.numpy(), rtol=1e-12)
    o = np.array([1.0, -2.0, 0.5])
    go, to = gradsum.tensor(o, dtype=gradsum.float64), torch.tensor(o)
    for name in ("hypot", "xlogy", "fmod", "copysign", "nextafter", "heaviside"):
        np.testing.assert_allclose(getattr(g, name)(go).numpy(), getattr(t, name)(to).numpy(),
                                   rtol=1e-12, err_msg=name)
        gc, tc = g.clone(), t.clone()
        getattr(gc, name + "_")(go)
        getattr(tc, name + "_")(to)
        np.testing.assert_allclose(gc.numpy(), tc.numpy(), rtol=1e-12, err_msg=name + "_")
    for name in ("logaddexp", "logaddexp2"):
        np.testing.assert_allclose(getattr(g, name)(go).numpy(), getattr(t, name)(to).numpy(),
                                   rtol=1e-12, err_msg=name)
    assert g.signbit().tolist() == t.signbit().tolist()


def test_inplace_records_like_torch() -> None:
    a = np.array([0.3, 1.7, 2.5])
    names = []
    for lib in (gradsum, torch):
        x = lib.tensor(a, dtype=lib.float64, requires_grad=True)
        y = x * 1.0
        y.lgamma_()
        y.sum().backward()
        names.append((y.grad_fn.name(), x.grad.tolist()))
    assert names[0][0] == names[1][0] == "LgammaBackward0"
    np.testing.assert_allclose(names[0][1], names[1][1], rtol=1e-12)


# -- linalg -----------------------------------------------------------------------------------
def test_linalg_error_is_a_runtime_error_like_torch() -> None:
    assert issubclass(gradsum.linalg.LinAlgError, RuntimeError)
    assert issubclass(torch.linalg.LinAlgError, RuntimeError)
    sing = np.array([[1.0, 2.0], [2.0, 4.0]])
    cases = [
        (lambda m: m.linalg.inv(m.tensor(sing)), "linalg.inv: The diagonal element 2 is zero"),
        (lambda m: m.inverse(m.tensor(np.stack([np.eye(2), sing]))),
         "linalg.inv: (Batch element 1): The diagonal element 2 is zero"),
        (lambda m: m.linalg.solve(m.tensor(sing.tolist()), m.tensor([1.0, 2.0])),
         "torch.linalg.solve: The solver failed because the input matrix is singular."),
        (lambda m: m.linalg.cholesky(m.tensor(-np.eye(2))),
         "the leading minor of order 1 is not positive-definite"),
        (lambda m: m.linalg.cholesky(m.tensor(np.stack([np.eye(2), np.diag([1.0, -1.0])]))),
         "linalg.cholesky: (Batch element 1): The factorization could not be completed"),
    ]
    for fn, text in cases:
        with pytest.raises(torch.linalg.LinAlgError) as te:
            fn(torch)
        with pytest.raises(gradsum.linalg.LinAlgError) as ge:
            fn(gradsum)
        assert text in str(te.value) and text in str(ge.value), (str(te.value), str(ge.value))


def test_named_tuple_returns() -> None:
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    for path, fields in [("slogdet", ("sign", "logabsdet")),
                         ("linalg.slogdet", ("sign", "logabsdet")),
                         ("linalg.qr", ("Q", "R")),
                         ("linalg.eigh", ("eigenvalues", "eigenvectors")),
                         ("linalg.svd", ("U", "S", "Vh")), ("svd", ("U", "S", "V"))]:
        outs = []
        for lib in (gradsum, torch):
            fn = lib
            for part in path.split("."):
                fn = getattr(fn, part)
            r = fn(lib.tensor(a))
            assert len(r) == len(fields), path
            for k, f in enumerate(fields):
                assert getattr(r, f) is r[k], (path, f)
            outs.append(r)
        assert type(outs[0]).__name__ == type(outs[1]).__name__, path


def test_decomposition_grad_fn_names() -> None:
    a = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 0.5], [0.0, 0.5, 4.0]])
    calls = [
        lambda m, x: m.linalg.eigh(x), lambda m, x: m.linalg.svd(x), lambda m, x: m.svd(x),
        lambda m, x: m.linalg.qr(x), lambda m, x: m.linalg.slogdet(x),
        lambda m, x: (m.linalg.matrix_norm(x, "nuc"), m.linalg.matrix_norm(x, 2),
                      m.linalg.matrix_norm(x, 1), m.logdet(x), m.linalg.norm(x)),
    ]
    for call in calls:
        names = []
        for lib in (gradsum, torch):
            x = lib.tensor(a, dtype=lib.float64, requires_grad=True)
            names.append([type(o.grad_fn).__name__ if lib is torch else o.grad_fn.name()
                          for o in call(lib, x)])
        assert names[0] == names[1]


def test_det_gradient_at_a_singular_matrix_is_torchs() -> None:
    sing = np.array([[1.0, 2.0], [2.0, 4.0]])
    grads = []
    for lib in (gradsum, torch):
        x = lib.tensor(sing, dtype=lib.float64, requires_grad=True)
        lib.linalg.det(x).backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]


def test_svd_vectors_match_torch_up_to_sign_and_gradient() -> None:
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 3))
    res = []
    for lib in (gradsum, torch):
        x = lib.tensor(a, dtype=lib.float64, requires_grad=True)
        U, S, Vh = lib.linalg.svd(x, full_matrices=False)
        loss = (U[:, 0] * U[:, 0]).sum() * 0 + (U @ Vh).sum() + S.sum()  # gauge invariant
        loss.backward()
        res.append(x.grad.numpy().copy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-10, atol=1e-12)


def test_qr_mode_r_and_complete_backward_errors() -> None:
    for lib in (gradsum, torch):
        x = lib.tensor(np.ones((3, 2)) + np.eye(3, 2), dtype=lib.float64, requires_grad=True)
        q, r = lib.linalg.qr(x, mode="r")
        assert tuple(q.shape) == (0,)
        with pytest.raises(RuntimeError, match="not computed when mode='r'"):
            r.sum().backward()
        q, r = lib.linalg.qr(x, mode="complete")
        with pytest.raises(RuntimeError, match="mode='complete' and nrows > ncols"):
            (q.sum() + r.sum()).backward()
