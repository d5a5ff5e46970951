"""Side-by-side tests of the N-D convolution and pooling layers (Conv1d/3d, ConvTranspose1d/2d/3d,
the 1-D/3-D, adaptive, unpooling and power-average pools): the same program in gradsum and
torch, forward values, first and second derivatives (float64), float32 module runs with
copied parameters, output shapes over a grid of arguments, reprs, initialisation and error
types."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import check_grads, same_error, same_repr  # noqa: E402
from nn_helpers import floats  # noqa: E402

RNG = np.random.default_rng(0)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


def distinct(*shape: int) -> np.ndarray:
    """Values without ties (max pooling's argmax is then unique)."""
    return RNG.permutation(math.prod(shape)).reshape(shape) / 7.0 - 1.0


# -- convolution: values, gradients, grad_fn -------------------------------------------------
CONV_CASES = [
    dict(),
    dict(stride=2, padding=1),
    dict(padding="same", dilation=2),
    dict(padding="valid", groups=2),
    dict(stride=(2,), dilation=(2,), padding=2, groups=2),
]


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_conv_values_and_two_derivatives(nd: int, case: int) -> None:
    kw = CONV_CASES[case]
    size = (6, 5, 4)[:nd] if nd < 3 else (5, 4, 4)
    k = (3, 2, 3)[:nd]

    def fn(lib: Any, F: Any, x: Any, w: Any, b: Any) -> Any:
        return getattr(F, f"conv{nd}d")(x, w, b, **kw)

    check_grads(fn, [rand(2, 4, *size), rand(6, 2 if kw.get("groups") else 4, *k), rand(6)],
                name=True, second=nd < 3 or case < 2)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_conv_unbatched_and_no_bias(nd: int) -> None:
    def fn(lib: Any, F: Any, x: Any, w: Any) -> Any:
        return getattr(F, f"conv{nd}d")(x, w, stride=1, padding=1)

    check_grads(fn, [rand(3, *(4,) * nd), rand(2, 3, *(2,) * nd)], name=True)


TRANS_CASES = [
    dict(),
    dict(stride=2, padding=1, output_padding=1),
    dict(stride=(2,), dilation=2, groups=2),
    dict(stride=3, padding=2, output_padding=2, dilation=2, groups=2),
    dict(dilation=3, output_padding=2),  # (output_padding < dilation, not < stride)
]


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("case", range(len(TRANS_CASES)))
def test_conv_transpose_values_and_two_derivatives(nd: int, case: int) -> None:
    kw = TRANS_CASES[case]
    size = (4, 3, 3)[:nd]

    def fn(lib: Any, F: Any, x: Any, w: Any, b: Any) -> Any:
        return getattr(F, f"conv_transpose{nd}d")(x, w, b, **kw)

    check_grads(fn, [rand(2, 4, *size), rand(4, 3, *(3, 2, 2)[:nd]),
                     rand(6 if kw.get("groups") else 3)],
                name=True, second=nd < 3 or case < 2)


def test_conv_gradcheck_and_gradgradcheck() -> None:
    import gradsum.nn.functional as F

    x = gradsum.tensor(rand(1, 2, 4, 3), requires_grad=True)
    w = gradsum.tensor(rand(2, 1, 2, 2), requires_grad=True)
    b = gradsum.tensor(rand(2), requires_grad=True)
    for f in (lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=1, groups=2),
              lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, output_padding=1,
                                                 groups=2),
              lambda x, w, b: F.conv3d(x[None], w[..., None], b, padding=(1, 0, 1))):
        assert gradsum.autograd.gradcheck(f, (x, w, b))
        assert gradsum.autograd.gradgradcheck(f, (x, w, b))


def test_conv_double_backward_node_name_is_convolution_free() -> None:
    # the first-order node is torch's; the gradient's graph is made of differentiable ops
    x = gradsum.tensor(rand(1, 2, 5), requires_grad=True)
    w = gradsum.tensor(rand(3, 2, 2), requires_grad=True)
    y = gradsum.nn.functional.conv1d(x, w)
    assert y.grad_fn.name() == "ConvolutionBackward0"
    (gx,) = gradsum.autograd.grad(y.sum(), x, create_graph=True)
    assert gx.requires_grad


# -- modules: float32 runs with copied parameters, padding modes -----------------------------
def _copy_params(gm: Any, tm: Any) -> None:
    with torch.no_grad():
        for tp, gp in zip(tm.parameters(), gm.parameters()):
            tp.copy_(torch.tensor(gp.detach().numpy()))


def _run_module_both(make: Any, x: np.ndarray, fwd_kw: dict[str, Any] | None = None,
                     tol: float = 1e-5) -> None:
    gradsum.manual_seed(0)
    gm, tm = make(gradsum), make(torch)
    _copy_params(gm, tm)
    xg = gradsum.tensor(x.astype(np.float32), requires_grad=True)
    xt = torch.tensor(x.astype(np.float32), requires_grad=True)
    yg, yt = gm(xg, **(fwd_kw or {})), tm(xt, **(fwd_kw or {}))
    assert tuple(yg.shape) == tuple(yt.shape)
    assert yg.dtype.name == "float32" and yt.dtype == torch.float32
    np.testing.assert_allclose(floats(yg), floats(yt), rtol=tol, atol=tol)
    r = rand(*yt.shape).astype(np.float32)
    (yg * gradsum.tensor(r)).sum().backward()
    (yt * torch.tensor(r)).sum().backward()
    np.testing.assert_allclose(floats(xg.grad), floats(xt.grad), rtol=tol, atol=tol)
    for (n, tp), (_, gp) in zip(tm.named_parameters(), gm.named_parameters()):
        np.testing.assert_allclose(floats(gp.grad), floats(tp.grad), rtol=tol, atol=tol,
                                   err_msg=n)
    assert yg.grad_fn.name() == yt.grad_fn.name()


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_conv_modules_padding_modes_float32(nd: int, mode: str) -> None:
    cls = f"Conv{nd}d"
    for kw in (dict(padding=1), dict(padding="same", dilation=2), dict(padding=(1,) * nd,
                                                                         stride=2, groups=2)):
        def make(lib: Any, kw: dict[str, Any] = kw) -> Any:
            return getattr(lib.nn, cls)(4, 6, 3, padding_mode=mode, **kw)

        _run_module_both(make, rand(2, 4, *(5, 6, 5)[:nd]))


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_conv_transpose_modules_float32_and_output_size(nd: int) -> None:
    cls = f"ConvTranspose{nd}d"
    x = rand(2, 4, *(3, 4, 3)[:nd])
    _run_module_both(lambda lib: getattr(lib.nn, cls)(4, 6, 3, stride=2, padding=1,
                                                      groups=2), x)
    target = [2 * s for s in x.shape[2:]]
    for size in (target, [2, 6, *target]):
        _run_module_both(lambda lib: getattr(lib.nn, cls)(4, 6, 3, stride=2, padding=1), x,
                         dict(output_size=size))
    _run_module_both(lambda lib: getattr(lib.nn, cls)(4, 2, 2, bias=False, dilation=2),
                     x[0])  # unbatched


def test_module_output_size_errors() -> None:
    x = [2, 4, 3]
    same_error(lambda lib: lib.nn.ConvTranspose1d(4, 6, 3, stride=2)(lib.ones(*x),
                                                                       output_size=[20]))
    same_error(lambda lib: lib.nn.ConvTranspose1d(4, 6, 3, stride=2)(lib.ones(*x),
                                                                       output_size=[7, 7]))
    same_error(lambda lib: lib.nn.ConvTranspose2d(4, 6, 3, padding_mode="reflect"))


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_conv_module_init_attributes_and_repr(nd: int) -> None:
    for kw in (dict(), dict(stride=2, padding=1, bias=False), dict(padding="same", dilation=2),
               dict(groups=2, padding_mode="circular", padding=1), dict(padding="valid")):
        mods = [getattr(lib.nn, f"Conv{nd}d")(4, 6, 3, **kw) for lib in (gradsum, torch)]
        assert repr(mods[0]) == repr(mods[1])
        for attr in ("kernel_size", "stride", "padding", "dilation", "groups", "padding_mode",
                     "transposed", "output_padding", "_reversed_padding_repeated_twice"):
            assert getattr(mods[0], attr) == getattr(mods[1], attr), attr
        assert tuple(mods[0].weight.shape) == tuple(mods[1].weight.shape)
        assert (mods[0].bias is None) == (mods[1].bias is None)
    for kw in (dict(), dict(stride=2, output_padding=1, groups=2, bias=False, dilation=2)):
        mods = [getattr(lib.nn, f"ConvTranspose{nd}d")(4, 6, 3, **kw) for lib in (gradsum, torch)]
        assert repr(mods[0]) == repr(mods[1])
        assert tuple(mods[0].weight.shape) == tuple(mods[1].weight.shape)
        assert mods[0].transposed and mods[0].output_padding == mods[1].output_padding


@pytest.mark.parametrize("cls", ["Conv1d", "Conv3d", "ConvTranspose1d", "ConvTranspose3d"])
def test_conv_default_init_bounds(cls: str) -> None:
    # kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)) on the weight too
    gradsum.manual_seed(0)
    m = getattr(gradsum.nn, cls)(4, 8, 3, groups=2)
    w = m.weight.detach().numpy()
    fan_in = w.shape[1] * math.prod(w.shape[2:])
    bound = 1 / math.sqrt(fan_in)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert np.abs(m.bias.detach().numpy()).max() <= bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.25 * bound


def test_conv_dtypes() -> None:
    for nd in (1, 3):
        x = gradsum.ones(1, 2, *(3,) * nd, dtype=gradsum.float64)
        conv = getattr(gradsum.nn, f"Conv{nd}d")(2, 2, 2, dtype=gradsum.float64)
        assert conv(x).dtype == gradsum.float64
    same_error(lambda lib: lib.nn.functional.conv1d(lib.ones(1, 2, 4),
                                                    lib.ones(1, 2, 2, dtype=lib.float64)))


# -- shapes over a grid, and error types ------------------------------------------------------
def _shape_or_error(fn: Any, *args: Any) -> Any:
    out = []
    for lib in (gradsum, torch):
        try:
            out.append(tuple(fn(lib, *args).shape))
        except Exception as e:  # (the type is what is compared)
            out.append(type(e))
    return out


def _conv_shape(lib: Any, nd: int, k: int, s: int, p: int, d: int) -> Any:
    f = getattr(lib.nn.functional, f"conv{nd}d")
    return f(lib.ones(1, 2, *(5,) * nd), lib.ones(3, 2, *(k,) * nd), None, s, p, d)


def _tconv_shape(lib: Any, k: int, s: int, p: int, d: int, op: int) -> Any:
    return lib.nn.functional.conv_transpose1d(lib.ones(1, 2, 4), lib.ones(2, 3, k), None, s, p,
                                              op, 1, d)


def test_conv_output_shapes_grid() -> None:
    for k, s, p, d in itertools.product((1, 2, 3), (1, 2, 3), (0, 1, 2), (1, 2)):
        for nd in (1, 2):
            g, t = _shape_or_error(_conv_shape, nd, k, s, p, d)
            assert g == t, (nd, k, s, p, d)
        for op in range(3):
            g, t = _shape_or_error(_tconv_shape, k, s, p, d, op)
            assert g == t, (k, s, p, d, op)


def _pool_shapes(lib: Any, k: int, s: int, p: int, d: int, ceil: bool) -> Any:
    F = lib.nn.functional
    outs = [F.max_pool3d(lib.ones(1, 1, 5, 6, 4), k, s, p, d, ceil),
            F.avg_pool3d(lib.ones(1, 5, 6, 4), k, s, p, ceil),
            F.lp_pool1d(lib.ones(2, 7), 2, k, s, ceil)]
    return lib.tensor([list(o.shape) + [0] * (5 - o.ndim) for o in outs])


def test_pool_output_shapes_grid() -> None:
    for k, s, p, d, ceil in itertools.product((1, 2, 3), (1, 2, 3), (0, 1), (1, 2),
                                              (False, True)):
        outs = []
        for lib in (gradsum, torch):
            try:
                outs.append(_pool_shapes(lib, k, s, p, d, ceil).tolist())
            except Exception as e:  # (the type is what is compared)
                outs.append(type(e))
        assert outs[0] == outs[1], (k, s, p, d, ceil)


CONV_ERRORS = [
    lambda lib: lib.nn.functional.conv1d(lib.ones(2, 4, 4, 4), lib.ones(2, 4, 3)),
    lambda lib: lib.nn.functional.conv1d(lib.ones(4, 4), lib.ones(2, 4, 2, 3)),
    lambda lib: lib.nn.functional.conv1d(lib.ones(4, 4), lib.ones(2, 4, 3), lib.ones(3)),
    lambda lib: lib.nn.functional.conv1d(lib.ones(4, 4), lib.ones(2, 4, 5)),
    lambda lib: lib.nn.functional.conv1d(lib.ones(4, 4), lib.ones(2, 4, 3), stride=(1, 2)),
    lambda lib: lib.nn.functional.conv1d(lib.ones(4, 4), lib.ones(2, 4, 3), stride=0),
    lambda lib: lib.nn.functional.conv1d(lib.ones(4, 4), lib.ones(2, 4, 3), padding=-1),
    lambda lib: lib.nn.functional.conv1d(lib.ones(4, 4), lib.ones(2, 4, 3), dilation=0),
    lambda lib: lib.nn.functional.conv1d(lib.ones(4, 4), lib.ones(2, 4, 3), groups=0),
    lambda lib: lib.nn.functional.conv1d(lib.ones(4, 4), lib.ones(3, 2, 3), groups=2),
    lambda lib: lib.nn.functional.conv1d(lib.ones(3, 4), lib.ones(2, 2, 3), groups=2),
    lambda lib: lib.nn.functional.conv1d(lib.ones(4, 6), lib.ones(2, 4, 3), stride=2,
                                         padding="same"),
    lambda lib: lib.nn.functional.conv3d(lib.ones(1, 2, 4, 4, 4), lib.ones(2, 2, 5, 1, 1)),
    lambda lib: lib.nn.functional.conv3d(lib.ones(1, 2, 4, 4, 4), lib.ones(2, 2, 1, 1, 1),
                                         padding="foo"),
    lambda lib: lib.nn.functional.conv_transpose1d(lib.ones(2, 4, 4, 4), lib.ones(4, 2, 3)),
    lambda lib: lib.nn.functional.conv_transpose1d(lib.ones(4, 4), lib.ones(4, 2, 3),
                                                   stride=2, output_padding=2),
    lambda lib: lib.nn.functional.conv_transpose1d(lib.ones(4, 4), lib.ones(4, 2, 3),
                                                   groups=3),
    lambda lib: lib.nn.functional.conv_transpose1d(lib.ones(4, 4), lib.ones(4, 2, 3),
                                                   padding="same"),
    lambda lib: lib.nn.functional.conv_transpose1d(lib.ones(4, 4), lib.ones(3, 2, 3)),
    lambda lib: lib.nn.functional.conv_transpose1d(lib.ones(4, 4), lib.ones(4, 2, 3),
                                                   lib.ones(3)),
    lambda lib: lib.nn.functional.conv_transpose2d(lib.ones(1, 4, 2, 2), lib.ones(4, 2, 3, 3),
                                                   padding=4),
    lambda lib: lib.nn.Conv1d(4, 6, 3, groups=0),
    lambda lib: lib.nn.Conv1d(4, 6, 3, groups=4),
    lambda lib: lib.nn.Conv3d(4, 6, 3, padding="full"),
    lambda lib: lib.nn.Conv3d(4, 6, 3, padding="same", stride=2),
    lambda lib: lib.nn.Conv1d(4, 6, 3, padding_mode="mirror"),
]


@pytest.mark.parametrize("i", range(len(CONV_ERRORS)))
def test_conv_errors(i: int) -> None:
    same_error(CONV_ERRORS[i])


# -- pooling ----------------------------------------------------------------------------------
POOL_FNS = [
    lambda lib, F, x: F.max_pool3d(x, 2),
    lambda lib, F, x: F.max_pool3d(x, (2, 3, 2), stride=(1, 2, 1), padding=1, dilation=(1, 1, 2),
                                   ceil_mode=True),
    lambda lib, F, x: F.max_pool3d_with_indices(x, 3, 2, 1),
    lambda lib, F, x: F.max_pool3d(x[0], 2, return_indices=True),
    lambda lib, F, x: F.max_pool2d_with_indices(x[0], 2, 1, ceil_mode=True),
    lambda lib, F, x: F.max_pool1d_with_indices(x[0, 0], 3, 2, 1),
    lambda lib, F, x: F.avg_pool3d(x, 2),
    lambda lib, F, x: F.avg_pool3d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    lambda lib, F, x: F.avg_pool3d(x, (2, 3, 2), (2, 1, 3), (1, 1, 0), True, True),
    lambda lib, F, x: F.avg_pool3d(x[0], 2, 1, 1, divisor_override=3),
    lambda lib, F, x: F.adaptive_avg_pool3d(x, (2, 3, None)),
    lambda lib, F, x: F.adaptive_avg_pool3d(x[0], 1),
    lambda lib, F, x: F.adaptive_avg_pool3d(x, (4, 3, 3)),
    lambda lib, F, x: F.adaptive_avg_pool1d(x[0, 0], 3),
    lambda lib, F, x: F.adaptive_avg_pool1d(x[0, :, 0], (4,)),
    lambda lib, F, x: F.adaptive_max_pool3d(x, (2, 3, 2), return_indices=True),
    lambda lib, F, x: F.adaptive_max_pool3d(x[0], 1),
    lambda lib, F, x: F.adaptive_max_pool1d(x[0, 0], 3, return_indices=True),
    lambda lib, F, x: F.adaptive_max_pool1d_with_indices(x[0, :, 0], 2),
    lambda lib, F, x: F.adaptive_max_pool2d_with_indices(x[0], (2, 2)),
    lambda lib, F, x: F.adaptive_max_pool3d_with_indices(x, 2),
    lambda lib, F, x: F.lp_pool1d(x[0, 0], 2, 3, 2, True),
    lambda lib, F, x: F.lp_pool2d(x[0], 3, (2, 3)),
    lambda lib, F, x: F.lp_pool2d(x[0], 1.5, 2, ceil_mode=True),
    lambda lib, F, x: F.lp_pool3d(x, 2, 2),
    lambda lib, F, x: F.lp_pool3d(x, float("inf"), 2),
]


@pytest.mark.parametrize("i", range(len(POOL_FNS)))
def test_pool_values_indices_and_two_derivatives(i: int) -> None:
    # positive distinct values: no argmax ties, powers of a fractional norm defined
    x = distinct(2, 3, 4, 5, 4) + (2.0 if i >= 21 else 0.0)
    check_grads(POOL_FNS[i], [x], name=True)


UNPOOL_CASES = [
    (1, dict(kernel_size=2), (2, 3, 6)),
    (1, dict(kernel_size=3, stride=2, padding=1), (3, 7)),
    (2, dict(kernel_size=2), (2, 2, 4, 5)),
    (2, dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 1)), (2, 5, 5)),
    (3, dict(kernel_size=2), (1, 2, 4, 4, 5)),
    (3, dict(kernel_size=3, stride=2, padding=1), (2, 5, 4, 5)),
]


@pytest.mark.parametrize("case", range(len(UNPOOL_CASES)))
def test_max_unpool_values_and_derivatives(case: int) -> None:
    nd, kw, shape = UNPOOL_CASES[case]
    x = distinct(*shape)
    pool = {1: "max_pool1d", 2: "max_pool2d", 3: "max_pool3d"}[nd]
    tp = getattr(torch.nn.functional, pool)(torch.tensor(x), return_indices=True, **kw)
    y = floats(tp[0])
    idx = tp[1].numpy()

    def fn_size(lib: Any, F: Any, y: Any, i: Any) -> Any:
        return getattr(F, f"max_unpool{nd}d")(y, i, output_size=list(shape[-nd:]), **kw)

    check_grads(fn_size, [y, idx], consts=(1,), name=True)
    k, s = kw["kernel_size"], kw.get("stride", kw["kernel_size"])
    k, s, p = (np.broadcast_to(v, (nd,)) for v in (k, s, kw.get("padding", 0)))
    if all((o - 1) * ss + kk - 2 * pp == n
           for o, ss, kk, pp, n in zip(y.shape[-nd:], s, k, p, shape[-nd:])):

        def fn(lib: Any, F: Any, y: Any, i: Any) -> Any:  # the default output size
            return getattr(F, f"max_unpool{nd}d")(y, i, **kw)

        check_grads(fn, [y, idx], consts=(1,), second=False)


def test_pool_modules_float32_and_repr() -> None:
    x5, x3 = rand(2, 3, 5, 6, 4), rand(2, 3, 7)
    mods = [
        (lambda lib: lib.nn.MaxPool3d(2, 1, 1, ceil_mode=True), x5),
        (lambda lib: lib.nn.MaxPool3d((2, 3, 2), dilation=2), x5),
        (lambda lib: lib.nn.AvgPool3d(3, 2, 1, True, False), x5),
        (lambda lib: lib.nn.AvgPool3d(2, divisor_override=2), x5),
        (lambda lib: lib.nn.AdaptiveAvgPool1d(3), x3),
        (lambda lib: lib.nn.AdaptiveAvgPool3d((3, None, 2)), x5),
        (lambda lib: lib.nn.AdaptiveMaxPool1d(4), x3),
        (lambda lib: lib.nn.AdaptiveMaxPool3d(2), x5),
        (lambda lib: lib.nn.LPPool1d(2, 3, 2), np.abs(x3) + 1),
        (lambda lib: lib.nn.LPPool2d(1.5, (2, 3), ceil_mode=True), np.abs(x5[0]) + 1),
        (lambda lib: lib.nn.LPPool3d(3, 2), np.abs(x5) + 1),
    ]
    for make, x in mods:
        same_repr(make)
        _run_module_both(make, x)
    for make in (lambda lib: lib.nn.MaxUnpool1d(2), lambda lib: lib.nn.MaxUnpool2d(3, 2, 1),
                 lambda lib: lib.nn.MaxUnpool3d((1, 2, 3), (2, 2, 1)),
                 lambda lib: lib.nn.AdaptiveMaxPool1d(2, return_indices=True),
                 lambda lib: lib.nn.MaxPool3d(2, return_indices=True)):
        same_repr(make)


def test_pool_modules_return_indices_and_unpool_roundtrip() -> None:
    x = distinct(1, 2, 4, 4, 6)
    outs = []
    for lib in (gradsum, torch):
        t = lib.tensor(x)
        y, i = lib.nn.MaxPool3d(2, return_indices=True)(t)
        outs.append((floats(y), floats(i), floats(lib.nn.MaxUnpool3d(2)(y, i)),
                     floats(lib.nn.AdaptiveMaxPool3d(2, return_indices=True)(t)[1])))
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)


def test_pool_float32_nan_and_int() -> None:
    x = rand(1, 2, 4, 4, 4).astype(np.float32)
    x[0, 0, 1, 1, 1] = np.nan
    for f in (lambda lib, t: lib.nn.functional.max_pool3d(t, 2),
              lambda lib, t: lib.nn.functional.adaptive_max_pool3d(t, 3),
              lambda lib, t: lib.nn.functional.avg_pool3d(t, 2, 1, 1)):
        g, t = (floats(f(lib, lib.tensor(x))) for lib in (gradsum, torch))
        np.testing.assert_allclose(g, t, rtol=1e-6, atol=1e-6, equal_nan=True)
    xi = RNG.integers(-9, 9, (1, 2, 4, 4, 4))
    g, t = (f(lib, lib.tensor(xi)) for lib in (gradsum, torch)
            for f in [lambda lib, t: lib.nn.functional.max_pool3d(t, 2)])
    assert g.tolist() == t.tolist() and g.dtype.name == "int64"


POOL_ERRORS = [
    lambda lib: lib.nn.functional.max_pool3d(lib.ones(4, 4, 4), 2),
    lambda lib: lib.nn.functional.max_pool3d(lib.ones(1, 2, 4, 4, 4), 0),
    lambda lib: lib.nn.functional.max_pool3d(lib.ones(1, 2, 4, 4, 4), 2, padding=2),
    lambda lib: lib.nn.functional.max_pool3d(lib.ones(1, 2, 4, 4, 4), 2, dilation=0),
    lambda lib: lib.nn.functional.max_pool3d(lib.ones(1, 2, 4, 4, 4), 5),
    lambda lib: lib.nn.functional.max_pool3d(lib.ones(1, 2, 4, 4, 4), (2, 2)),
    lambda lib: lib.nn.functional.avg_pool3d(lib.ones(1, 2, 4, 4, 4), 5),
    lambda lib: lib.nn.functional.avg_pool3d(lib.ones(4, 4), 2),
    lambda lib: lib.nn.functional.avg_pool3d(lib.ones(1, 2, 4, 4, 4), (2, 2)),
    lambda lib: lib.nn.functional.avg_pool3d(lib.ones(1, 2, 4, 4, 4), 2, divisor_override=0),
    lambda lib: lib.nn.functional.adaptive_avg_pool3d(lib.ones(4, 4, 4), 2),
    lambda lib: lib.nn.functional.adaptive_max_pool3d(lib.ones(4, 4, 4), 2),
    lambda lib: lib.nn.functional.adaptive_avg_pool3d(lib.ones(1, 2, 4, 4, 4), (2, 2)),
    lambda lib: lib.nn.functional.adaptive_max_pool3d(lib.ones(1, 2, 4, 4, 4), (2, 2)),
    lambda lib: lib.nn.functional.adaptive_avg_pool1d(lib.ones(1, 2, 4, 4), 2),
    lambda lib: lib.nn.functional.adaptive_max_pool1d(lib.ones(4), 2),
    lambda lib: lib.nn.functional.adaptive_avg_pool3d(lib.ones(1, 2, 4, 4, 4), -1),
    lambda lib: lib.nn.functional.max_unpool2d(lib.ones(1, 1, 2, 2),
                                               lib.zeros(1, 1, 2, 2, dtype=lib.int64), 2,
                                               output_size=[9, 9]),
    lambda lib: lib.nn.functional.max_unpool2d(lib.ones(1, 1, 2, 2),
                                               lib.zeros(1, 1, 2, 2, dtype=lib.int64), 2,
                                               output_size=[4, 4, 4]),
    lambda lib: lib.nn.functional.max_unpool2d(lib.ones(1, 1, 2, 2),
                                               lib.full((1, 1, 2, 2), 99, dtype=lib.int64), 2),
    lambda lib: lib.nn.functional.max_unpool2d(lib.ones(1, 1, 2, 2),
                                               lib.zeros(1, 1, 2, 1, dtype=lib.int64), 2),
    lambda lib: lib.nn.functional.max_unpool3d(lib.ones(2, 2), lib.zeros(2, 2, dtype=lib.int64),
                                               2),
]


@pytest.mark.parametrize("i", range(len(POOL_ERRORS)))
def test_pool_errors(i: int) -> None:
    same_error(POOL_ERRORS[i])
