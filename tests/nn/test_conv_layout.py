"""Side-by-side tests of the first-order array paths of convolution, max pooling and batch
norm: the convolution's flat layout (stride phases, spans, tap-first col2im) over random
geometries in every dimension count, with groups, dilation and output padding, against torch
in float64; its non-finite inputs against the windows' layout; max pooling's per-tap path
(ties, signed zeros, padding, ceil mode) against torch; batch norm's array backward against
its recorded rule, bit for bit."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from gradsum.ops import conv as _conv  # noqa: E402
from gradsum.ops import normalization as _norm  # noqa: E402


def _geometry(rng: np.random.Generator) -> tuple[str, dict[str, Any], np.ndarray, np.ndarray]:
    nd = int(rng.integers(1, 4))
    transposed = bool(rng.integers(0, 2))
    groups = int(rng.choice([1, 1, 2]))
    n = int(rng.integers(1, 4))
    cin, cout = groups * int(rng.integers(1, 4)), groups * int(rng.integers(1, 4))
    k = tuple(int(v) for v in rng.integers(1, 5, nd))
    s = tuple(int(v) for v in rng.integers(1, 4, nd))
    d = tuple(int(v) for v in rng.integers(1, 3, nd))
    p = tuple(int(rng.integers(0, (kk - 1) * dd // 2 + 2)) for kk, dd in zip(k, d))
    x = rng.standard_normal((n, cin) + tuple(int(v) for v in rng.integers(1, 9, nd)))
    if transposed:
        w = rng.standard_normal((cin, cout // groups) + k)
        op = tuple(int(rng.integers(0, max(ss, dd))) for ss, dd in zip(s, d))
        kw = dict(stride=s, padding=p, output_padding=op, groups=groups, dilation=d)
        return f"conv_transpose{nd}d", kw, x, w
    w = rng.standard_normal((cout, cin // groups) + k)
    return f"conv{nd}d", dict(stride=s, padding=p, dilation=d, groups=groups), x, w


def _run(lib: Any, name: str, kw: dict[str, Any], x: np.ndarray, w: np.ndarray,
         b: np.ndarray | None, gy_inf: bool = False) -> Any:
    xt = lib.tensor(x, requires_grad=True)
    wt = lib.tensor(w, requires_grad=True)
    bt = None if b is None else lib.tensor(b, requires_grad=True)
    try:
        y = getattr(lib.nn.functional, name)(xt, wt, bt, **kw)
    except (RuntimeError, ValueError) as e:
        return type(e)
    gy = np.cos(np.arange(y.numel())).reshape(tuple(y.shape))
    if gy_inf and gy.size:
        gy.flat[0] = np.inf
    y.backward(lib.tensor(gy))
    out = [y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()]
    return out + ([] if bt is None else [bt.grad.numpy()])


@pytest.mark.parametrize("seed", range(8))
def test_conv_random_geometries_like_torch(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    for _ in range(25):
        name, kw, x, w = _geometry(rng)
        if rng.random() < 0.1:
            x = x[:0]  # (an empty batch)
        b = rng.standard_normal(w.shape[1] * kw["groups"] if "output_padding" in kw
                                else w.shape[0])
        t, g = _run(torch, name, kw, x, w, b), _run(gradsum, name, kw, x, w, b)
        if isinstance(t, type) or isinstance(g, type):
            # (torch checks the output size of an empty batch's transposed conv later)
            assert t is g or x.size == 0, (name, kw, x.shape)
            continue
        for a, c in zip(t, g):
            assert a.shape == c.shape, (name, kw, x.shape)
            np.testing.assert_allclose(c, a, rtol=1e-10, atol=1e-10, err_msg=f"{name} {kw}")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (the windows' path, forced)
@pytest.mark.parametrize("seed", range(4))
def test_conv_non_finite_lands_as_in_the_windows_layout(seed: int,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """An inf or nan in the input, the kernel or the output gradient: the flat layout's
    zeros (between the rows, kernel slots without a tap) must not turn it into nan where
    the windows' layout (every value's own products only) has none."""
    rng = np.random.default_rng(200 + seed)
    real = _conv._finite
    for _ in range(40):
        name, kw, x, w = _geometry(rng)
        tgt = [x, w][int(rng.integers(0, 2))]
        bad = [np.inf, -np.inf, np.nan][int(rng.integers(0, 3))]
        tgt.flat[int(rng.integers(0, tgt.size))] = bad
        gy_inf = bool(rng.random() < 0.3)
        res = []
        for finite in (real, lambda a: False):
            monkeypatch.setattr(_conv, "_finite", finite)
            res.append(_run(gradsum, name, kw, x, w, None, gy_inf))
        if isinstance(res[0], type):
            assert res[0] is res[1]
            continue
        for a, c in zip(*res):
            np.testing.assert_array_equal(np.isnan(a), np.isnan(c), err_msg=f"{name} {kw}")
            np.testing.assert_array_equal(np.isinf(a), np.isinf(c), err_msg=f"{name} {kw}")


def test_conv_flat_layout_of_dcgan_and_mnist_shapes_float32() -> None:
    """The programs' own convolutions, float32, forward and gradients close to torch's."""
    rng = np.random.default_rng(3)
    cases = [("conv2d", (32, 8, 12, 12), (16, 8, 3, 3), {}),
             ("conv2d", (16, 8, 8, 8), (16, 8, 4, 4), dict(stride=2, padding=1)),
             ("conv2d", (16, 16, 4, 4), (1, 16, 4, 4), {}),
             ("conv_transpose2d", (16, 8, 1, 1), (8, 32, 4, 4), {}),
             ("conv_transpose2d", (16, 32, 4, 4), (32, 16, 4, 4), dict(stride=2, padding=1)),
             ("conv_transpose2d", (16, 16, 8, 8), (16, 1, 4, 4), dict(stride=2, padding=1))]
    for name, xs, ws, kw in cases:
        x = rng.standard_normal(xs).astype(np.float32)
        w = (rng.standard_normal(ws) * 0.1).astype(np.float32)
        t, g = _run(torch, name, kw, x, w, None), _run(gradsum, name, kw, x, w, None)
        for a, c in zip(t, g):
            assert c.dtype == np.float32
            np.testing.assert_allclose(c, a, rtol=1e-4, atol=1e-5 * np.abs(a).max())


@pytest.mark.parametrize("seed", range(4))
def test_max_pool_random_geometries_like_torch(seed: int) -> None:
    rng = np.random.default_rng(300 + seed)
    done = 0
    while done < 40:
        nd = int(rng.integers(1, 4))
        k = tuple(int(v) for v in rng.integers(1, 4, nd))
        s = tuple(int(v) for v in rng.integers(1, 4, nd))
        d = tuple(int(v) for v in rng.integers(1, 3, nd))
        p = tuple(int(rng.integers(0, ((kk - 1) * dd + 1) // 2 + 1)) for kk, dd in zip(k, d))
        size = tuple(int(v) for v in rng.integers(1, 9, nd))
        ceil = bool(rng.integers(0, 2))
        dt = [np.float32, np.float64][int(rng.integers(0, 2))]
        x = rng.standard_normal((2, 3) + size).astype(dt)
        if rng.random() < 0.4:
            x = np.round(x)  # ties (and signed zeros): the first maximum wins
            x[x == 0] = np.where(rng.random(int((x == 0).sum())) < 0.5, -0.0, 0.0)
        # every window must hold an input element (else torch's kernels index out of bounds)
        try:
            _, i = getattr(gradsum.nn.functional, f"max_pool{nd}d")(
                gradsum.tensor(x), k, s, p, d, ceil, True)
        except RuntimeError:
            continue
        if i.numel() == 0 or int(i.min()) < 0 or int(i.max()) >= int(np.prod(size)):
            continue
        res = []
        for lib in (torch, gradsum):
            xt = lib.tensor(x, requires_grad=True)
            try:
                y, i = getattr(lib.nn.functional, f"max_pool{nd}d")(xt, k, s, p, d, ceil, True)
            except RuntimeError:
                res.append(None)
                continue
            y.backward(lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape))))
            res.append((y.detach().numpy(), i.numpy(), xt.grad.numpy()))
        if res[0] is None or res[1] is None:  # (the argument checks are tested elsewhere)
            continue
        done += 1
        (ty, ti, tg), (gy, gi, gg) = res
        np.testing.assert_array_equal(gy, ty)
        np.testing.assert_array_equal(np.signbit(gy), np.signbit(ty))
        np.testing.assert_array_equal(gi, ti)
        np.testing.assert_allclose(gg, tg, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("shape", [(32, 8, 12, 12), (16, 16, 4, 4), (5, 3), (4, 6, 7)])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batch_norm_array_backward_is_the_recorded_rule(shape: tuple[int, ...],
                                                       training: bool, dtype: Any) -> None:
    rng = np.random.default_rng(4)
    c = shape[1]
    x = gradsum.tensor(rng.standard_normal(shape).astype(dtype), requires_grad=True)
    w = gradsum.tensor(rng.standard_normal(c).astype(dtype), requires_grad=True)
    b = gradsum.tensor(rng.standard_normal(c).astype(dtype), requires_grad=True)
    rm, rv = gradsum.zeros(c, dtype=x.dtype), gradsum.ones(c, dtype=x.dtype)
    y = gradsum.nn.functional.batch_norm(x, rm, rv, w, b, training=training)
    g = gradsum.tensor(rng.standard_normal(shape).astype(dtype))
    node = y.grad_fn
    with gradsum.no_grad():
        ref = _norm._norm_backward(g, x, w, node.plan, True, True, True)
        new = node.backward(g)
    for r, n in zip(ref, new):
        np.testing.assert_array_equal(n.numpy(), r.numpy())


def _col2im_plane_per_sample(f: Any, m: np.ndarray, full: np.ndarray, c: int) -> np.ndarray:
    """The tap-first col2im of the plane layout one sample row at a time (each sample's
    buffer padded by the largest offset): the reference of the flat buffer's additions."""
    n, a, r = full.shape[0], m.shape[0], c * f.nphase
    mt = m.reshape(a, r, f.taps).transpose(2, 1, 0).reshape(f.taps * r, a)
    g = (mt @ full).reshape(n, f.taps, r * f.nq)
    buf = np.zeros((n, r * f.nq + f.maxoff), dtype=g.dtype)
    for t, off in enumerate(f.offsets):
        buf[:, off:off + r * f.nq] += g[:, t]
    return buf[:, :r * f.nq].reshape(n, c, f.nphase * f.nq)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_col2im_plane_samples_back_to_back_bit_for_bit(dtype: Any) -> None:
    rng = np.random.default_rng(21)
    done = 0
    for _ in range(300):
        nd = int(rng.integers(1, 4))
        n, c, a = int(rng.integers(1, 6)), int(rng.integers(1, 12)), int(rng.integers(1, 40))
        k = tuple(int(v) for v in rng.integers(1, 6, nd))
        s = tuple(int(v) for v in rng.integers(1, 4, nd))
        d = tuple(int(v) for v in rng.integers(1, 3, nd))
        per = [int(rng.integers(0, (kk - 1) * dd // 2 + 2)) for kk, dd in zip(k, d)]
        p = tuple(v for v in per for _ in range(2))
        size = tuple(int(v) for v in rng.integers(1, 12, nd))
        try:
            geo = _conv.Geometry.make((n, c) + size, k, d, p, s)
        except RuntimeError:
            continue
        f = _conv._flat(geo)
        m = f.pack(rng.standard_normal((a, c) + k).astype(dtype))
        full = f.to_full(rng.standard_normal((n, a) + geo.out).astype(dtype), plane=True)
        np.testing.assert_array_equal(f.col2im_plane(m, full, c),
                                      _col2im_plane_per_sample(f, m, full, c))
        done += 1
    assert done > 200
