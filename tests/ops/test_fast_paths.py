"""The specialised fast paths of hot ops give what the plain formulation gives.

- ``add_rows_at`` (embedding / index_select / index_add backward) is bitwise ``np.add.at``:
  repeats, negative indices, -0.0, small and large tables, every index dtype.
- ``mm`` with a transposed operand computes that gradient transposed (torch's layout rule):
  same values as torch, and a contiguous ``.grad`` for the weight-tied ``h @ E.T``.
- ``log_softmax`` and its backward (BLAS row sums) match torch, also on an all -inf row.
- ``sum_to`` over leading dimensions (a bias's gradient, as BLAS column sums) matches torch.
- the row max of softmax/log_softmax (``maximum.reduceat``) is NumPy's max, nan and -inf too.
- mean's backward (one division, written over the input's shape) is torch's bit for bit.
- mul's, tanh's and sigmoid's backward on the saved arrays (no graph recorded) give the
  recorded rule's bits, and keep the saved-tensor checks.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradsum
from gradsum.ops.indexing.subscript import add_rows_at

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)


@pytest.mark.parametrize("seed", range(40))
def test_add_rows_at_is_bitwise_add_at(seed):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 300)) if seed % 2 else int(rng.integers(600, 3000))
    n = int(rng.integers(64, 700))
    idx = rng.integers(-size, size, n) if seed % 3 == 0 else rng.integers(0, size, n)
    if seed % 5 == 0:
        idx[:] = size - 1  # one row, n times
    if size < 256 and seed % 3:
        idx = idx.astype([np.int64, np.uint64, np.int32, np.uint8][seed % 4])
    for dt in (np.float32, np.float64, np.int64):
        src = (rng.standard_normal((n, 5)) * 3).astype(dt)
        if dt != np.int64:
            src[rng.random((n, 5)) < 0.1] = -0.0
        for zeros in (False, True):
            base = np.zeros((size, 5), dt) if zeros else (rng.standard_normal((size, 5))
                                                          * 3).astype(dt)
            ref = base.copy()
            np.add.at(ref, idx, src)
            out = base.copy()
            add_rows_at(out, idx, src, zeros)
            assert out.tobytes() == ref.tobytes()


def test_tied_weight_grad_is_contiguous_and_matches_torch():
    rng = np.random.default_rng(0)
    e0 = rng.standard_normal((16, 8)).astype(np.float32)
    h0 = rng.standard_normal((4, 8)).astype(np.float32)
    idx = rng.integers(0, 16, 70)
    grads = []
    for lib in (gradsum, torch):
        e = lib.tensor(e0, requires_grad=True)
        h = lib.tensor(h0, requires_grad=True)
        rows = lib.nn.functional.embedding(lib.tensor(idx), e)
        loss = (h @ e.T).tanh().sum() + (rows * rows).sum()
        loss.backward()
        grads.append((e.grad, h.grad))
    (ge, gh), (te, th) = grads
    assert ge._array.flags.c_contiguous
    np.testing.assert_allclose(ge.numpy(), te.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gh.numpy(), th.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("lhs_t", [False, True])
@pytest.mark.parametrize("rhs_t", [False, True])
def test_mm_transposed_operands_double_backward(lhs_t, rhs_t):
    rng = np.random.default_rng(1)
    a0 = rng.standard_normal((3, 4))
    b0 = rng.standard_normal((4, 5))

    def make(lib, x, t):
        v = lib.tensor(np.ascontiguousarray(x.T) if t else x, requires_grad=True)
        return v, (v.T if t else v)

    a, _ = make(gradsum, a0, lhs_t)
    b, _ = make(gradsum, b0, rhs_t)

    def fn(x, y):
        return (x.T if lhs_t else x) @ (y.T if rhs_t else y)

    assert gradsum.autograd.gradcheck(fn, (a, b))
    assert gradsum.autograd.gradgradcheck(fn, (a, b))
    out = []
    for lib in (gradsum, torch):
        a, av = make(lib, a0, lhs_t)
        b, bv = make(lib, b0, rhs_t)
        ((av @ bv) ** 2).sum().backward()
        out.append((a.grad.numpy(), b.grad.numpy()))
    for x, y in zip(*out):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)


def test_log_softmax_matches_torch_with_an_all_minus_inf_row():
    rng = np.random.default_rng(2)
    x0 = rng.standard_normal((6, 33)).astype(np.float32) * 5
    x0[1] = -np.inf
    g0 = rng.standard_normal((6, 33)).astype(np.float32)
    res = []
    for lib in (gradsum, torch):
        x = lib.tensor(x0, requires_grad=True)
        y = lib.nn.functional.log_softmax(x, 1)
        y.backward(lib.tensor(g0))
        res.append((y.detach().numpy(), x.grad.numpy()))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape,lead", [((64, 128), 1), ((4, 5, 6), 2), ((2, 3, 4), 1),
                                        ((7,), 1), ((256, 10), 1), ((1, 8), 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bias_gradient_column_sums_match_torch(shape, lead, dtype):
    """``sum_to`` over leading dims (a broadcast bias's gradient) is a BLAS vector-matrix
    product on contiguous floats: torch's values to rounding, the shape and dtype exact."""
    from gradsum.ops.reduction import _sum_leading

    rng = np.random.default_rng(sum(shape))
    g = rng.standard_normal(shape).astype(dtype)
    ours = _sum_leading(g, lead)
    ref = torch.from_numpy(g).sum(dim=tuple(range(lead))).numpy()
    assert ours.shape == ref.shape and ours.dtype == ref.dtype
    np.testing.assert_allclose(ours, ref, rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-5 if dtype == np.float32 else 1e-12)
    # through autograd: the bias of a broadcast add
    b = gradsum.zeros(shape[lead:], dtype=gradsum.float32 if dtype == np.float32
                      else gradsum.float64, requires_grad=True)
    (gradsum.tensor(np.zeros(shape, dtype)) + b).backward(gradsum.tensor(g))
    np.testing.assert_allclose(b.grad.numpy(), ref, rtol=1e-5, atol=1e-5)
    # a non-contiguous gradient takes NumPy's reduction, with NumPy's bits
    gt = np.asfortranarray(g)
    if gt.ndim > 1 and not gt.flags.c_contiguous:
        np.testing.assert_array_equal(_sum_leading(gt, lead), gt.sum(axis=tuple(range(lead))))


@pytest.mark.parametrize("shape", [(5,), (32, 10), (64, 256), (2, 3, 4), (7, 1), (0, 3)])
def test_row_max_is_numpys_max(shape):
    """softmax/log_softmax take the row max with ``maximum.reduceat`` on contiguous rows:
    the very values of ``max(axis=-1, keepdims=True)``, nan and -inf rows included."""
    from gradsum.ops.activation import _max_along

    rng = np.random.default_rng(len(shape))
    x = rng.standard_normal(shape).astype(np.float32)
    if x.size > 3:
        x.reshape(-1)[1] = np.nan
        x.reshape(-1)[-x.shape[-1]:] = -np.inf
    got = _max_along(x, x.ndim - 1)
    want = x.max(axis=-1, keepdims=True) if x.size else np.empty(shape[:-1] + (1,), x.dtype)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    if x.size and x.ndim == 2:  # not the last axis, or not contiguous: NumPy's own max
        np.testing.assert_array_equal(_max_along(x.T, 0), x.T.max(axis=0, keepdims=True))
        np.testing.assert_array_equal(_max_along(x.T, 1), x.T.max(axis=1, keepdims=True))


@pytest.mark.parametrize("shape,dim,keepdim", [((32, 1), None, False), ((4, 5, 6), (0, 2), False),
                                               ((4, 5, 6), 1, True), ((3, 4), -1, False),
                                               ((), None, False), ((2, 3), (), False),
                                               ((0, 3), 0, False), ((0, 3), None, False)])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_mean_backward_matches_torch_bitwise(shape, dim, keepdim, dtype):
    """mean's backward without a recorded graph divides the reduced gradient once and writes
    it over the input's shape: torch's ``expand / count`` bit for bit, in a fresh contiguous
    writable array (the gradient buffer a leaf takes over). Under create_graph the recorded
    ops give the same bits, and a gradient that can be differentiated again."""
    x0 = np.random.default_rng(len(shape)).standard_normal(shape).astype(dtype)
    got = {}
    for lib in (gradsum, torch):
        def mean(x, lib=lib):
            return x.mean() if dim is None else x.mean(dim, keepdim=keepdim)

        x = lib.tensor(x0, requires_grad=True)
        m = mean(x)
        m.backward(lib.full(tuple(m.shape), 2.1, dtype=getattr(lib, dtype)))
        x2 = lib.tensor(x0, requires_grad=True)
        m2 = mean(x2)
        seed = lib.full(tuple(m2.shape), 2.1, dtype=getattr(lib, dtype), requires_grad=True)
        (g2,) = lib.autograd.grad(m2, x2, seed, create_graph=True)
        assert g2.grad_fn is not None
        got[lib.__name__] = (x.grad.numpy(), g2.detach().numpy())
    (a, a2), (b, b2) = got["gradsum"], got["torch"]
    assert a.flags.c_contiguous and a.flags.writeable
    assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    assert a2.tobytes() == b2.tobytes()


def _rules():
    """(name, inputs, fn) cases of the rules with an array-only backward (no graph recorded)."""
    rng = np.random.default_rng(7)

    def arr(*shape, dt=np.float32):
        return (rng.standard_normal(shape) * 2).astype(dt)

    const = gradsum.tensor(arr(4, 5))
    return [
        ("mul", [arr(4, 5), arr(4, 5)], lambda a, b: a * b),
        ("mul broadcast", [arr(4, 5), arr(5)], lambda a, b: a * b),
        ("mul broadcast left", [arr(1, 5), arr(3, 4, 5)], lambda a, b: a * b),
        ("mul constant", [arr(4, 5), None], lambda a: a * const),
        ("mul mixed dtypes", [arr(4, 5), arr(4, 5, dt=np.float64)], lambda a, b: a * b),
        ("mul 0-d", [arr(), arr(3)], lambda a, b: a * b),
        ("tanh", [arr(6, 3)], lambda a: a.tanh()),
        ("sigmoid", [arr(6, 3, dt=np.float64)], lambda a: a.sigmoid()),
        ("tanh 0-d", [arr()], lambda a: a.tanh()),
    ]


@pytest.mark.parametrize("case", range(len(_rules())))
def test_array_rules_match_the_recorded_rules_bitwise(case):
    """mul's, tanh's and sigmoid's backward compute on the saved arrays when no graph is
    recorded: the very bits of the same rule recorded under create_graph."""
    name, arrays, fn = _rules()[case]
    leaves = [gradsum.tensor(a, requires_grad=True) for a in arrays if a is not None]
    out = fn(*leaves)
    seed = gradsum.tensor(np.random.default_rng(1).standard_normal(out.shape)
                          .astype(out.numpy(force=True).dtype))
    recorded = gradsum.autograd.grad(out, leaves, seed, retain_graph=True, create_graph=True)
    out.backward(seed)
    for leaf, r in zip(leaves, recorded):
        assert leaf.grad.dtype == r.dtype and leaf.grad.shape == r.shape, name
        assert leaf.grad.numpy().tobytes() == r.detach().numpy().tobytes(), name


def test_array_rules_keep_the_saved_tensor_checks():
    """The array path checks its saved tensors as ``saved()`` does: modified in place, freed,
    or saved through hooks (the unpack hook runs)."""
    x = gradsum.ones(3, requires_grad=True)
    w = gradsum.ones(3)
    y = x * w
    w.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    # modified during the backward (by a hook of the product), after the checking sweep
    for lib in (gradsum, torch):
        a = lib.ones(3, requires_grad=True)
        c = lib.ones(3)
        p = a * c
        p.register_hook(lambda g, c=c: c.mul_(2))
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            p.sum().backward()
    t = (x * 2).tanh()
    t.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        t.sum().backward()
    unpacked = []

    def unpack(a):
        unpacked.append(a)
        return a

    with gradsum.autograd.graph.saved_tensors_hooks(lambda a: a, unpack):
        s = (x * w).sigmoid()
    s.sum().backward()
    assert len(unpacked) == 2
