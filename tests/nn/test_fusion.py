"""Side by side with torch: nn.utils' fusion (fuse_conv_bn_eval, the fused weights),
skip_init and parameters_to_vector / vector_to_parameters."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import as_np, same_error  # noqa: E402

LIBS = [gradsum, torch]


# -- nn.utils ------------------------------------------------------------------------------------
def _copy_module(src: Any, dst: Any) -> None:
    """torch module ``src``'s parameters and buffers into gradsum module ``dst``."""
    sd = {k: gradsum.tensor(v.detach().numpy()) for k, v in src.state_dict().items()}
    dst.load_state_dict(sd)


def _bn_stats(bn: Any) -> None:
    with torch.no_grad():
        n = bn.num_features
        bn.running_mean.copy_(torch.linspace(-1.0, 1.0, n))
        bn.running_var.copy_(torch.linspace(0.5, 2.0, n))
        if bn.weight is not None:
            bn.weight.copy_(torch.linspace(0.7, 1.3, n))
            bn.bias.copy_(torch.linspace(-0.2, 0.4, n))


@pytest.mark.parametrize("bias,affine", [(True, True), (False, True), (True, False)])
def test_fuse_conv_bn_eval_matches_torch(bias: bool, affine: bool) -> None:
    tconv = torch.nn.Conv2d(3, 4, 3, padding=1, bias=bias).eval()
    tbn = torch.nn.BatchNorm2d(4, affine=affine).eval()
    _bn_stats(tbn)
    gconv = gradsum.nn.Conv2d(3, 4, 3, padding=1, bias=bias).eval()
    gbn = gradsum.nn.BatchNorm2d(4, affine=affine).eval()
    _copy_module(tconv, gconv)
    _copy_module(tbn, gbn)
    tf = torch.nn.utils.fuse_conv_bn_eval(tconv, tbn)
    gf = gradsum.nn.utils.fuse_conv_bn_eval(gconv, gbn)
    assert gf is not gconv and type(gf) is type(gconv)
    for name in ("weight", "bias"):
        np.testing.assert_allclose(as_np(getattr(gf, name)), as_np(getattr(tf, name)),
                                   rtol=1e-6, atol=1e-7)
        assert type(getattr(gf, name)).__name__ == "Parameter"
        assert getattr(gf, name).requires_grad == getattr(tf, name).requires_grad
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)
    np.testing.assert_allclose(as_np(gf(gradsum.tensor(x))), as_np(tbn(tconv(torch.tensor(x)))),
                               rtol=1e-5, atol=1e-5)
    assert gconv.bias is None if not bias else gconv.bias is not gf.bias


def test_fuse_weights_and_errors_match_torch() -> None:
    rng = np.random.default_rng(2)
    arrs = [rng.standard_normal(s) for s in [(4, 2, 3), (4,), (4,), (4,), (4,), (4,)]]
    arrs[3] = np.abs(arrs[3]) + 0.1
    for transpose in (False, True):
        cw = arrs[0] if not transpose else rng.standard_normal((2, 4, 3))
        res = []
        for lib in (torch, gradsum):
            ts = [lib.tensor(a) for a in [cw, *arrs[1:]]]
            w, b = lib.nn.utils.fuse_conv_bn_weights(ts[0], ts[1], ts[2], ts[3], 1e-3, ts[4],
                                                     ts[5], transpose)
            res.append([as_np(w), as_np(b), w.requires_grad, type(w).__name__])
        np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-12)
        np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-12)
        assert res[1][2:] == res[0][2:]
    # linear
    tl, tbn = torch.nn.Linear(3, 4).eval(), torch.nn.BatchNorm1d(4).eval()
    _bn_stats(tbn)
    gl, gbn = gradsum.nn.Linear(3, 4).eval(), gradsum.nn.BatchNorm1d(4).eval()
    _copy_module(tl, gl)
    _copy_module(tbn, gbn)
    tf, gf = torch.nn.utils.fuse_linear_bn_eval(tl, tbn), gradsum.nn.utils.fuse_linear_bn_eval(
        gl, gbn)
    for name in ("weight", "bias"):
        np.testing.assert_allclose(as_np(getattr(gf, name)), as_np(getattr(tf, name)),
                                   rtol=1e-6, atol=1e-7)
    tw, tb = torch.nn.utils.fuse_linear_bn_weights(tl.weight, None, tbn.running_mean,
                                                   tbn.running_var, 1e-5, tbn.weight, tbn.bias)
    gw, gb = gradsum.nn.utils.fuse_linear_bn_weights(gl.weight, None, gbn.running_mean,
                                                     gbn.running_var, 1e-5, gbn.weight,
                                                     gbn.bias)
    np.testing.assert_allclose(as_np(gw), as_np(tw), rtol=1e-6)
    np.testing.assert_allclose(as_np(gb), as_np(tb), rtol=1e-6, atol=1e-7)
    assert gb.requires_grad == tb.requires_grad
    # errors
    assert same_error(lambda lib: lib.nn.utils.fuse_linear_bn_eval(
        lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4).eval())) is AssertionError
    assert same_error(lambda lib: lib.nn.utils.fuse_linear_bn_eval(
        lib.nn.Linear(3, 4).eval(), lib.nn.BatchNorm1d(3).eval())) is AssertionError
    assert same_error(lambda lib: lib.nn.utils.fuse_conv_bn_eval(
        lib.nn.Conv2d(3, 4, 1).eval(),
        lib.nn.BatchNorm2d(4, track_running_stats=False).eval())) is AssertionError
    assert same_error(lambda lib: lib.nn.utils.fuse_conv_bn_eval(
        lib.nn.Conv2d(3, 4, 1).eval(), lib.nn.BatchNorm2d(4))) is AssertionError


def test_skip_init_and_vector_conversion_match_torch() -> None:
    out = []
    for lib in LIBS:
        lib.manual_seed(3)
        m = lib.nn.utils.skip_init(lib.nn.Linear, 3, 4, bias=False)
        after = lib.rand(2).tolist()
        lib.manual_seed(3)
        fresh = lib.rand(2).tolist()
        out.append([type(m).__name__, tuple(m.weight.shape), m.bias is None, after == fresh,
                    list(m.state_dict()), m.weight.requires_grad])
    assert out[0] == out[1]

    class NoDevice(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()

    class GNoDevice(gradsum.nn.Module):
        def __init__(self) -> None:
            super().__init__()

    with pytest.raises(RuntimeError):
        torch.nn.utils.skip_init(NoDevice)
    with pytest.raises(RuntimeError):
        gradsum.nn.utils.skip_init(GNoDevice)
    assert same_error(lambda lib: lib.nn.utils.skip_init(int)) is RuntimeError
    # parameters_to_vector / vector_to_parameters
    res = []
    for lib in (torch, gradsum):
        lin = lib.nn.Linear(2, 3)
        with lib.no_grad():
            for i, p in enumerate(lin.parameters()):
                p.copy_(lib.arange(float(p.numel())).reshape(tuple(p.shape)) + i)
        v = lib.nn.utils.parameters_to_vector(lin.parameters())
        (v * v).sum().backward()
        lib.nn.utils.vector_to_parameters(v.detach() * 2, lin.parameters())
        res.append([as_np(v), as_np(lin.weight.grad), as_np(lin.bias), v.grad_fn.name()])
    for a, b in zip(res[1][:3], res[0][:3]):
        np.testing.assert_allclose(a, b)
    assert res[1][3] == res[0][3]
    assert same_error(lambda lib: lib.nn.utils.vector_to_parameters(
        [1.0], lib.nn.Linear(1, 1).parameters())) is TypeError
