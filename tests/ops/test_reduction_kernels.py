"""Issue 18's kernels for reductions and index-driven ops against torch, on inputs that take
the fast path and on inputs that reach its fallback: the whole-tensor ``median`` and
``nanmedian`` (a sampled window, then a partition of the elements inside it),
``scatter_reduce`` and ``index_reduce`` (``ufunc.at`` on flat positions) and sums along short
last rows (column adds: ``sum``, and ``sum_to`` under ``expand`` and ``repeat_interleave``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradsum
from gradsum.ops import reduction
from gradsum.ops import sorting as selection
from gradsum.ops.indexing import gather_scatter

torch = pytest.importorskip("torch", reason="the kernels are compared with torch's")


def _same(g: Any, t: Any) -> None:
    a, b = g.detach().numpy(), t.detach().numpy()
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a, b, equal_nan=True)


def _median_inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    n = 70_001
    return [
        rng.standard_normal(n).astype(np.float32),
        np.sort(rng.standard_normal(n)).astype(np.float32),  # (sorted: a window at one end)
        np.resize(rng.standard_normal(5), n).astype(np.float32),  # (tiled: five values)
        np.resize(rng.standard_normal(5), 65_536).astype(np.float32),
        rng.integers(0, 3, n).astype(np.float32),  # (ties: the window is one value)
        np.full(n, 2.5, np.float32),
        rng.integers(-50, 50, n).astype(np.int64),
        rng.standard_normal(n),  # (float64)
        np.where(rng.random(n) < 0.3, np.nan, rng.standard_normal(n)).astype(np.float32),
        np.concatenate([np.zeros(n // 2), np.ones(n - n // 2)]).astype(np.float32),
    ]


@pytest.mark.parametrize("sampled_from", [1 << 15, 1 << 40])  # (the fast path; partition alone)
@pytest.mark.parametrize("case", range(len(_median_inputs())))
@pytest.mark.parametrize("op", ["median", "nanmedian"])
def test_whole_median_matches_torch(op: str, case: int, sampled_from: int,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(selection, "_SAMPLED_FROM", sampled_from)
    x = _median_inputs()[case]
    floating = x.dtype.kind == "f"
    g = gradsum.tensor(x, requires_grad=floating)
    t = torch.tensor(x, requires_grad=floating)
    gv, tv = getattr(gradsum, op)(g), getattr(torch, op)(t)
    _same(gv, tv)
    if floating:
        gv.backward()
        tv.backward()
        _same(g.grad, t.grad)


def test_kth_smallest_window_misses_fall_back() -> None:
    # every sampled position of this input holds the largest value: the window misses k
    n = 1 << 16
    x = np.zeros(n, np.float32)
    pos = np.arange(selection._SAMPLE, dtype=np.int64) * 2654435761 % n
    x[pos] = 1.0
    k = (n - 1) // 2
    assert selection._kth_smallest(x, k) == np.sort(x)[k]


def _scatter_case(reduce: str, include_self: bool, lib: Any, d: int) -> tuple[Any, ...]:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((40, 30)).astype(np.float32)
    shape = (90, 30) if d == 0 else (40, 70)
    idx = rng.integers(0, x.shape[d], shape)
    src = rng.standard_normal(shape).astype(np.float32)
    src[::7, ::5] = 0.0  # (zeros: prod's backward)
    if reduce in ("amax", "amin"):
        src = np.round(src)  # (ties: the gradient shared among them)
    xt = lib.tensor(x, requires_grad=True)
    st = lib.tensor(src, requires_grad=True)
    out = lib.scatter_reduce(xt, d, lib.tensor(idx), st, reduce, include_self=include_self)
    (out * lib.tensor(rng.standard_normal(x.shape).astype(np.float32))).sum().backward()
    return out, xt.grad, st.grad


@pytest.mark.parametrize("d", [0, 1])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
def test_scatter_reduce_flat_positions(reduce: str, include_self: bool, d: int,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # flat positions (2,700 indices >= 1) against the tuple of broadcast indices, bit for bit
    monkeypatch.setattr(gather_scatter, "_FLAT_INDEX_MIN", 1)
    fast = _scatter_case(reduce, include_self, gradsum, d)
    monkeypatch.setattr(gather_scatter, "_FLAT_INDEX_MIN", 1 << 40)
    slow = _scatter_case(reduce, include_self, gradsum, d)
    ref = _scatter_case(reduce, include_self, torch, d)
    for f, s, r in zip(fast, slow, ref):
        _same(f, s)
        np.testing.assert_allclose(f.detach().numpy(), r.detach().numpy(), rtol=2e-5,
                                   atol=2e-5)


def _index_reduce_case(reduce: str, include_self: bool, lib: Any, d: int) -> tuple[Any, ...]:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((30, 20)).astype(np.float32)
    idx = rng.integers(0, x.shape[d], 50)
    shape = (50, 20) if d == 0 else (30, 50)
    src = rng.standard_normal(shape).astype(np.float32)
    src[::7, ::5] = 0.0
    if reduce in ("amax", "amin"):
        src = np.round(src)
    xt = lib.tensor(x, requires_grad=True)
    st = lib.tensor(src, requires_grad=True)
    out = xt.index_reduce(d, lib.tensor(idx), st, reduce, include_self=include_self)
    (out * lib.tensor(rng.standard_normal(x.shape).astype(np.float32))).sum().backward()
    return out, xt.grad, st.grad


@pytest.mark.filterwarnings("ignore:index_reduce")
@pytest.mark.parametrize("d", [0, 1])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_index_reduce_flat_positions(reduce: str, include_self: bool, d: int,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gather_scatter, "_FLAT_INDEX_MIN", 1)
    fast = _index_reduce_case(reduce, include_self, gradsum, d)
    monkeypatch.setattr(gather_scatter, "_FLAT_INDEX_MIN", 1 << 40)
    slow = _index_reduce_case(reduce, include_self, gradsum, d)
    ref = _index_reduce_case(reduce, include_self, torch, d)
    for f, s, r in zip(fast, slow, ref):
        _same(f, s)
        np.testing.assert_allclose(f.detach().numpy(), r.detach().numpy(), rtol=2e-5,
                                   atol=2e-5)


def _short_rows(rng: np.random.Generator, r: int, dtype: Any) -> np.ndarray:
    x = rng.standard_normal((300, r)) * 10.0 ** rng.integers(-3, 4, (300, r))
    x[::7, 0] = -0.0
    x[::11] = -0.0  # (a row of -0.0: NumPy's sum is +0.0)
    x[5, 1], x[6, 0], x[7, 1], x[8] = np.inf, -np.inf, np.nan, [np.inf, -np.inf] + [0.0] * (r - 2)
    x[9, :2] = 1e38, 1e38  # (overflow in float32)
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("r", [2, 3, 5, 7, 8])
def test_short_row_sums_same_bits(r: int, dtype: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    x = _short_rows(np.random.default_rng(r), r, dtype)
    x3 = np.ascontiguousarray(np.stack([x, x[::-1]]))  # (300 x r rows in two blocks)

    def run() -> list[Any]:
        outs = [gradsum.sum(gradsum.tensor(x), 1), gradsum.sum(gradsum.tensor(x3), -1, True)]
        g = gradsum.tensor(x3[..., :1], requires_grad=True)
        g.expand(2, 300, r).backward(gradsum.tensor(x3))  # (sum_to over the last axis)
        v = gradsum.tensor(x[:, 0].copy(), requires_grad=True)
        gradsum.repeat_interleave(v, r).backward(gradsum.tensor(x.reshape(-1)))
        return outs + [g.grad, v.grad]

    fast = run()
    monkeypatch.setattr(reduction, "_SHORT_LAST", 0)
    slow = run()
    for f, s_ in zip(fast, slow):
        a, b = f.numpy(), s_.numpy()
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()
    ok = np.isfinite(x).all(axis=1)  # (against torch: within rounding of the row's terms)
    ref = torch.tensor(x[ok]).sum(1).numpy()
    scale = np.abs(x[ok]).sum(axis=1)
    assert (np.abs(fast[0].numpy()[ok] - ref) <= 1e-6 * scale).all()


def _nonzero_inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((40, 30, 7)).astype(np.float32)
    x[rng.random(x.shape) < 0.5] = 0.0
    x[0, 0, :3] = -0.0, np.nan, np.inf
    return [
        x.reshape(-1), x.reshape(40, 210), x, x.reshape(4, 10, 30, 7),
        np.asfortranarray(x), x[:, ::2, :], x.transpose(2, 0, 1),
        x != 0, (x * 3).astype(np.int64), x.astype(np.float16),
        np.zeros((70, 70), np.float32), np.ones((70, 70), np.float64),
        np.zeros((1, 5000), np.float32), np.eye(5000, 1, dtype=np.float32),
    ]


@pytest.mark.parametrize("case", range(len(_nonzero_inputs())))
def test_nonzero_by_rows(case: int) -> None:
    x = _nonzero_inputs()[case]
    assert x.size >= 4096
    g = gradsum.tensor(x)
    expect = np.nonzero(x)
    got = gradsum.nonzero(g, as_tuple=True)
    assert len(got) == len(expect)
    for a, b in zip(got, expect):
        assert a.numpy().dtype == np.int64 and np.array_equal(a.numpy(), b)
    assert np.array_equal(gradsum.argwhere(g).numpy(), np.argwhere(x))
    assert np.array_equal(gradsum.nonzero(g).numpy(), torch.nonzero(torch.tensor(x)).numpy())


@pytest.mark.parametrize("create_graph", [False, True])
def test_take_backward_into_fresh_zeros(create_graph: bool) -> None:
    rng = np.random.default_rng(6)
    x = rng.standard_normal((60, 80)).astype(np.float32)
    idx = rng.integers(-4800, 4800, 9000)  # (repeats, negative positions)
    seed = rng.standard_normal(9000).astype(np.float32)
    seed[::5] = -0.0
    grads = []
    for lib in (gradsum, torch):
        t = lib.tensor(x, requires_grad=True)
        s = lib.tensor(seed, requires_grad=create_graph)
        (g,) = lib.autograd.grad(lib.take(t, lib.tensor(idx)), t, s, create_graph=create_graph)
        if create_graph:
            (gg,) = lib.autograd.grad((g * g).sum(), s)
            grads.append((g, gg))
        else:
            grads.append((g,))
    for a, b in zip(*grads):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-5)
    expect = np.zeros(x.size, np.float32)
    np.add.at(expect, np.where(idx < 0, idx + x.size, idx), seed)  # (in index order)
    assert grads[0][0].detach().numpy().reshape(-1).tobytes() == expect.tobytes()
