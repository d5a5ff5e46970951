"""The optional MKL GEMM path (``gradsum[mkl]``) gives NumPy's products, and falls back.

- every layout cblas can read in place (C-contiguous, transposed, row/column slices of a
  larger matrix) goes to MKL and matches ``np.matmul`` to float tolerance;
- everything else (small products, other dtypes, batched, reversed or doubly strided
  operands, mixed dtypes) goes to NumPy, with NumPy's exact bits;
- the switches (``enabled``, ``flags``, ``GRADSUM_BLAS=numpy``) turn it off;
- a large linear layer trained through it matches torch (forward and gradients).
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import gradsum
from gradsum import _blas


@pytest.fixture
def mkl(monkeypatch):
    """MKL loaded as a one-BLAS-thread process loads it (its sequential layer), for this test
    only; skipped where the mkl package is not installed or GRADSUM_BLAS=numpy."""
    if os.environ.get("GRADSUM_BLAS", "").lower() == "numpy":
        pytest.skip("GRADSUM_BLAS=numpy turns MKL off")
    if _blas._find_mkl() is None:
        pytest.skip("the mkl package is not installed (pip install -e '.[mkl]')")
    monkeypatch.setattr(_blas, "_threads", lambda: 1)
    monkeypatch.setattr(_blas, "_gemm", None)
    monkeypatch.setattr(_blas, "_load_error", None)
    assert _blas.available(), _blas.unavailable_reason()


@pytest.fixture
def calls(monkeypatch):
    """Counts the MKL GEMM calls (wraps the loaded cblas functions, if any)."""
    seen: list[str] = []
    if _blas._gemm is not None:
        wrapped = {}
        for dt, (fn, one, zero) in _blas._gemm.items():
            def counting(*args, _fn=fn, _dt=dt):
                seen.append(str(_dt))
                return _fn(*args)
            wrapped[dt] = (counting, one, zero)
        monkeypatch.setattr(_blas, "_gemm", wrapped)
    return seen


def _operand(rng, shape, layout, dtype):
    """A matrix of ``shape`` stored as ``layout``."""
    m, n = shape
    if layout == "c":
        return rng.standard_normal((m, n)).astype(dtype)
    if layout == "t":  # the transpose of a C-contiguous matrix
        return rng.standard_normal((n, m)).astype(dtype).T
    if layout == "rows":  # a column block of a wider matrix (leading dimension > n)
        return rng.standard_normal((m, n + 7)).astype(dtype)[:, 3 : 3 + n]
    if layout == "t-rows":
        return rng.standard_normal((n, m + 5)).astype(dtype)[:, 2 : 2 + m].T
    raise ValueError(layout)


LAYOUTS = ["c", "t", "rows", "t-rows"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("la", LAYOUTS)
@pytest.mark.parametrize("lb", LAYOUTS)
def test_mkl_layouts_match_numpy(dtype, la, lb, mkl, calls):
    rng = np.random.default_rng(0)
    m, k, n = 130, 140, 150  # above MIN_FLOPS
    assert m * k * n >= _blas.MIN_FLOPS
    x, y = _operand(rng, (m, k), la, dtype), _operand(rng, (k, n), lb, dtype)
    out = _blas.matmul(x, y)
    assert calls == [str(np.dtype(dtype))]
    assert out.dtype == dtype and out.shape == (m, n) and out.flags.c_contiguous
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out, np.matmul(x, y), rtol=tol, atol=tol * k)


@pytest.mark.parametrize(
    "case",
    ["small", "int", "batched", "reversed", "strided", "mixed", "vector"],
)
def test_other_products_use_numpy_bits(case, mkl, calls):
    rng = np.random.default_rng(1)
    big = (130, 140), (140, 150)
    if case == "small":
        x, y = rng.standard_normal((8, 9)), rng.standard_normal((9, 10))
    elif case == "int":
        x, y = rng.integers(0, 5, big[0]), rng.integers(0, 5, big[1])
    elif case == "batched":
        x = rng.standard_normal((2, *big[0])).astype(np.float32)
        y = rng.standard_normal(big[1]).astype(np.float32)
    elif case == "reversed":  # a negative stride: cblas cannot read it
        x = rng.standard_normal(big[0]).astype(np.float32)[::-1]
        y = rng.standard_normal(big[1]).astype(np.float32)
    elif case == "strided":  # every other column: neither stride is one element
        x = rng.standard_normal((130, 280)).astype(np.float32)[:, ::2]
        y = rng.standard_normal(big[1]).astype(np.float32)
    elif case == "mixed":
        x = rng.standard_normal(big[0]).astype(np.float32)
        y = rng.standard_normal(big[1])
    else:
        x, y = rng.standard_normal(140), rng.standard_normal(big[1])
    out = _blas.matmul(x, y)
    assert calls == []
    np.testing.assert_array_equal(out, np.matmul(x, y))
    assert out.dtype == np.matmul(x, y).dtype


def test_switches_turn_mkl_off(mkl, calls):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((200, 200)).astype(np.float32)
    with gradsum.backends.mkl.flags(enabled=False):
        assert gradsum.backends.mkl.enabled is False
        np.testing.assert_array_equal(_blas.matmul(x, x), np.matmul(x, x))
    assert gradsum.backends.mkl.enabled is True and calls == []
    gradsum.backends.mkl.enabled = False
    try:
        _blas.matmul(x, x)
        assert calls == []
    finally:
        gradsum.backends.mkl.enabled = True
    _blas.matmul(x, x)
    assert calls == ["float32"]


def test_env_var_disables_mkl():
    code = (
        "import gradsum; m = gradsum.backends.mkl;"
        "print(m.is_available(), m.unavailable_reason())"
    )
    env = dict(os.environ, GRADSUM_BLAS="numpy")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "False disabled by GRADSUM_BLAS=numpy"


def test_unavailable_reason_is_consistent():
    assert gradsum.backends.mkl.is_available() == (
        gradsum.backends.mkl.unavailable_reason() is None
    )


@pytest.mark.parametrize("use_mkl", [True, False])
def test_large_linear_training_matches_torch(use_mkl, mkl, calls):
    torch = pytest.importorskip("torch", reason="torch (the reference oracle) is not installed")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 300)).astype(np.float32)
    w = (rng.standard_normal((200, 300)) * 0.05).astype(np.float32)
    w2 = (rng.standard_normal((300, 100)) * 0.05).astype(np.float32)
    results = []
    for lib in (gradsum, torch):
        xw = lib.tensor(x, requires_grad=True)
        ww = lib.tensor(w, requires_grad=True)
        ww2 = lib.tensor(w2, requires_grad=True)
        with gradsum.backends.mkl.flags(enabled=use_mkl):
            h = lib.nn.functional.linear(xw, ww).relu() @ ww2.T.T[:200]
            loss = (h * h).mean()
            loss.backward()
        results.append([t.detach().numpy().copy() for t in (h, xw.grad, ww.grad, ww2.grad)])
    assert (len(calls) > 0) == use_mkl
    for g, t in zip(*results):
        np.testing.assert_allclose(g, t, rtol=1e-4, atol=1e-5)


_CHECK = """
import numpy as np
{first}
from gradsum import _blas
rng = np.random.default_rng(0)
a = rng.standard_normal((256, 784)).astype(np.float32)
b = rng.standard_normal((784, 2048)).astype(np.float32)
err = float(np.abs(_blas.matmul(a, b) - a @ b).max() / np.abs(a @ b).max())
print(_blas.available(), err < 1e-5)
"""


@pytest.mark.parametrize("threads", [None, "1"])
@pytest.mark.parametrize("first", ["import torch", "pass"])
def test_correct_products_next_to_torch(threads, first):
    """Regression: MKL's threaded layer (Intel OpenMP) gave wrong products once PyTorch had
    put GNU OpenMP in the process. MKL is used with one BLAS thread only (its sequential
    layer); with more threads NumPy computes. Either way the products are right."""
    if first == "import torch":
        pytest.importorskip("torch", reason="torch is not installed")
    env = {k: v for k, v in os.environ.items()
           if k not in ("MKL_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    if threads is not None:
        env["OMP_NUM_THREADS"] = threads
    out = subprocess.run([sys.executable, "-c", _CHECK.format(first=first)], env=env,
                         capture_output=True, text=True, check=True).stdout.split()
    assert out[1:] == ["True"], out
    one_cpu = threads == "1" or len(os.sched_getaffinity(0)) == 1
    expect_mkl = one_cpu and _blas._find_mkl() is not None and (
        os.environ.get("GRADSUM_BLAS", "").lower() != "numpy")
    assert out[0] == str(expect_mkl)


def test_aligned_buffer_is_owned_only_while_nothing_else_views_it() -> None:
    a = _blas.aligned_empty((3, _blas.ALIGNMENT // 4), np.dtype(np.float32))
    assert a.ctypes.data % _blas.ALIGNMENT == 0 and a.flags.c_contiguous
    assert _blas.owns_buffer(a)
    v = a.T  # another view of the same memory: no longer ownable
    assert not _blas.owns_buffer(a)
    del v
    assert _blas.owns_buffer(a)
    assert not _blas.owns_buffer(a[1:])  # (a part of the buffer)
    big = np.zeros(1 << 20, np.uint8)
    assert not _blas.owns_buffer(big[: 1 << 10].view(np.float32))  # (not an aligned buffer)


def test_large_weight_gradient_is_taken_over_and_accumulated_in_place(mkl) -> None:
    """A large product's gradient lands on a 2 MiB boundary; the weight's sink takes that
    buffer over (no copy) and later backwards add into it in place."""
    gradsum.manual_seed(0)
    lin = gradsum.nn.Linear(1024, 1024)
    x, y = gradsum.randn(64, 1024), gradsum.randint(0, 1024, (64,))
    gradsum.nn.functional.cross_entropy(lin(x), y).backward()
    g = lin.weight.grad
    assert g._array.ctypes.data % _blas.ALIGNMENT == 0
    first = g.clone()
    gradsum.nn.functional.cross_entropy(lin(x), y).backward()
    assert lin.weight.grad is g
    np.testing.assert_allclose(g.numpy(), 2 * first.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("la, lb", [("c", "c"), ("t", "c"), ("c", "t"), ("t", "t"), ("rows", "c")])
def test_large_numpy_products_start_on_a_huge_page_with_numpy_bits(monkeypatch, dtype, la,
                                                                   lb) -> None:
    """Without MKL a large product still lands on a 2 MiB boundary (MPI moves such a
    gradient faster), with exactly the bits of NumPy's own ``matmul``; a small one is
    NumPy's allocation as before."""
    monkeypatch.setattr(_blas, "enabled", False)
    rng = np.random.default_rng(3)
    m, k, n = 1100, 37, 1000  # m * n * 4 bytes >= ALIGNED_BYTES
    x, y = _operand(rng, (m, k), la, dtype), _operand(rng, (k, n), lb, dtype)
    out = _blas.matmul(x, y)
    assert out.ctypes.data % _blas.ALIGNMENT == 0 and out.flags.c_contiguous
    assert _blas.owns_buffer(out)
    assert out.tobytes() == np.matmul(x, y).tobytes()
    small = _blas.matmul(x[:10], y)
    assert small.tobytes() == np.matmul(x[:10], y).tobytes()


def test_large_weight_gradient_lands_aligned_without_mkl(monkeypatch) -> None:
    """The same take-over as above through NumPy's BLAS: the weight's ``.grad`` is the
    aligned product itself, and a second backward adds into it in place."""
    monkeypatch.setattr(_blas, "enabled", False)
    gradsum.manual_seed(0)
    lin = gradsum.nn.Linear(1024, 1024)
    x, y = gradsum.randn(64, 1024), gradsum.randint(0, 1024, (64,))
    gradsum.nn.functional.cross_entropy(lin(x), y).backward()
    g = lin.weight.grad
    assert g._array.ctypes.data % _blas.ALIGNMENT == 0
    first = g.clone()
    gradsum.nn.functional.cross_entropy(lin(x), y).backward()
    assert lin.weight.grad is g
    np.testing.assert_allclose(g.numpy(), 2 * first.numpy(), rtol=1e-6)
