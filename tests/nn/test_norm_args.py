"""Side by side with torch: layer_norm's argument errors and empty normalized shape, the
single ``NativeLayerNormBackward0`` node of layer_norm with torch's derivatives, RMSNorm and
LocalResponseNorm. Batch, group and instance norm: test_normalization.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from derivative_helpers import (  # noqa: E402
    compare_derivatives,
    normal_arrays,
)
from diff_helpers import (  # noqa: E402  # noqa: E402
    as_np,
    same,
    same_error,
)
from nn_helpers import gradsum_repr, lib_tensor  # noqa: E402

_arr = normal_arrays(8)


# -- layers ------------------------------------------------------------------------------------
def test_layer_norm_over_an_empty_shape() -> None:
    def program(lib: Any) -> Any:
        ln = lib.nn.LayerNorm([])
        return repr(ln), [tuple(p.shape) for p in ln.parameters()]

    same(program)


LIBS = [gradsum, torch]


# -- RMSNorm / LocalResponseNorm / Softmax2d -----------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("ns,eps,affine,shape", [
    (4, None, True, (3, 4)), ((2, 3), 1e-3, True, (2, 2, 3)), ([3], None, False, (5, 3)),
    ((4,), 0.5, True, (4,)), ((2, 2), None, False, (3, 1, 2, 2)),
])
def test_rmsnorm_matches_torch(ns: Any, eps: float | None, affine: bool,
                               shape: tuple[int, ...], dtype: str) -> None:
    res = []
    arr = np.random.default_rng(3).standard_normal(shape)
    for lib in (torch, gradsum):
        m = lib.nn.RMSNorm(ns, eps=eps, elementwise_affine=affine)
        if dtype == "float64":
            m = m.double()
        if affine:
            with lib.no_grad():
                m.weight.copy_(lib_tensor(lib, np.linspace(0.5, 1.5, m.weight.numel()).reshape(
                    tuple(m.weight.shape)), dtype, False))
        x = lib_tensor(lib, arr, dtype)
        y = m(x)
        gs = lib.autograd.grad((y * y * y).sum(), [x, *m.parameters()], create_graph=True)
        gg = lib.autograd.grad(sum((g * g).sum() for g in gs), x)
        res.append([as_np(y), *[as_np(g) for g in gs], as_np(gg[0]), y.grad_fn.name(),
                    gradsum_repr(m), list(m.state_dict()), m.eps, str(y.dtype).split(".")[-1]])
    t, g = res
    tol = 1e-10 if dtype == "float64" else 2e-5
    n = len(t) - 5
    for a, b in zip(g[:n], t[:n]):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    assert g[n:] == t[n:]


def test_rmsnorm_default_init_and_errors_match_torch() -> None:
    for lib in LIBS:
        m = lib.nn.RMSNorm([2, 3])
        assert as_np(m.weight).tolist() == [[1.0] * 3] * 2
        assert tuple(m.weight.shape) == (2, 3) and m.weight.requires_grad
    assert same_error(lambda lib: lib.nn.functional.rms_norm(lib.ones(2, 3), [4])) \
        is RuntimeError
    assert same_error(lambda lib: lib.nn.functional.rms_norm(lib.ones(2, 3), [3],
                                                             lib.ones(2))) is RuntimeError
    assert same_error(lambda lib: lib.nn.functional.rms_norm(lib.ones(2, 3), 3)) is TypeError
    assert same_error(lambda lib: lib.nn.functional.rms_norm(lib.ones(2, 3, dtype=lib.int64),
                                                             [3])) is NotImplementedError
    # a float64 weight on a float32 input: float32 out, with torch's warning
    out = []
    for lib in LIBS:
        with pytest.warns(UserWarning, match="Mismatch dtype between input and weight"):
            y = lib.nn.functional.rms_norm(lib.ones(2, 3), [3], lib.ones(3, dtype=lib.float64))
        out.append(str(y.dtype).split(".")[-1])
    assert out[0] == out[1]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("size,shape,kw", [
    (2, (2, 5, 4), {}), (3, (2, 5, 4), {"alpha": 0.5, "beta": 0.5, "k": 2.0}),
    (5, (1, 4, 3, 3), {"alpha": 1.0}), (4, (2, 6, 2, 2, 2), {"alpha": 0.3, "k": 0.5}),
    (1, (2, 3, 2), {"alpha": 2.0}), (7, (1, 3, 2, 2), {"alpha": 0.9}),
])
def test_local_response_norm_matches_torch(size: int, shape: tuple[int, ...], kw: dict[str, Any],
                                           dtype: str) -> None:
    res = []
    arr = np.random.default_rng(5).standard_normal(shape)
    for lib in (torch, gradsum):
        m = lib.nn.LocalResponseNorm(size, **kw)
        x = lib_tensor(lib, arr, dtype)
        y = m(x)
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        res.append([as_np(y), as_np(g), as_np(gg), y.grad_fn.name(), gradsum_repr(m)])
    t, g = res
    tol = 1e-10 if dtype == "float64" else 5e-5
    for a, b in zip(g[:3], t[:3]):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    assert g[3:] == t[3:]


def test_local_response_norm_edges_match_torch() -> None:
    assert same_error(lambda lib: lib.nn.functional.local_response_norm(lib.ones(2, 3), 2)) \
        is ValueError
    for lib in LIBS:
        x = lib.ones(0, 3, 2)
        assert lib.nn.functional.local_response_norm(x, 2) is x


# -- layer norm -----------------------------------------------------------------------------------
@pytest.mark.parametrize("affine", ["wb", "w", "b", ""])
@pytest.mark.parametrize("shape,ns", [((3, 4), (4,)), ((2, 3, 4), (3, 4))])
def test_layer_norm_one_node_two_derivatives(affine: str, shape: tuple[int, ...],
                                             ns: tuple[int, ...]) -> None:
    x, w, b = _arr(*shape), _arr(*ns), _arr(*ns)

    def fn(lib: Any, xx: Any, ww: Any, bb: Any) -> Any:
        return lib.nn.functional.layer_norm(xx, ns, ww if "w" in affine else None,
                                            bb if "b" in affine else None)

    for idx in [(0, 1, 2), (1, 2), (2,), (0,), (1,)]:
        idx = tuple(i for i in idx if i == 0 or "wb"[i - 1] in affine)
        if not idx:
            continue
        # (torch's layer_norm_double_backward fails with an internal error when the bias
        # gradient is differentiated without a weight, or when only the bias requires grad)
        broken = 2 in idx and ("w" not in affine or idx == (2,))
        t = compare_derivatives(fn, [x, w, b], idx, tol=1e-9, second=not broken)
        assert t["name"] == "NativeLayerNormBackward0"
        assert set(t["g_names"]) == {"NativeLayerNormBackwardBackward0"}


def test_layer_norm_module_bias_grad_requires_grad() -> None:
    x = _arr(2, 5)
    res = []
    for lib in (torch, gradsum):
        m = lib.nn.LayerNorm(5)
        y = m(lib.tensor(x, dtype=lib.float32))
        gw, gb = lib.autograd.grad((y * y).sum(), [m.weight, m.bias], create_graph=True)
        res.append((gw.requires_grad, gb.requires_grad, as_np(gw), as_np(gb)))
    assert res[0][:2] == res[1][:2] == (True, True)
    np.testing.assert_allclose(res[1][2], res[0][2], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(res[1][3], res[0][3], rtol=1e-5, atol=1e-5)
