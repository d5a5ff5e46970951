"""Side by side with torch: activations recorded as one node named as torch's (``GluBackward0``,
``MishBackward0``, ``LogSigmoidBackward0``, ``CeluBackward0``, ELU's for elu and selu, PReLU's)
with torch's first and second derivatives, composites keeping torch's names, and the in-place
``leaky_relu`` with a negative slope."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import as_np, same_error  # noqa: E402

RNG = np.random.default_rng(8)


def _name(t: Any) -> str | None:
    if t is None or t.grad_fn is None:
        return None
    return t.grad_fn.name().replace("torch::autograd::", "")


def _close(a: Any, b: Any, tol: float = 1e-10) -> None:
    np.testing.assert_allclose(as_np(a), as_np(b), rtol=tol, atol=tol, equal_nan=True)


def _run(lib: Any, fn: Callable[..., Any], arrays: list[Any], grad_idx: tuple[int, ...],
         seed: int, second: bool = True) -> dict[str, Any]:
    """``fn(lib, *tensors)``; the first and second derivatives (create_graph) with respect to
    the tensors at ``grad_idx`` (float64), against fixed random output weights."""
    ts = [lib.tensor(a, requires_grad=i in grad_idx) if np.asarray(a).dtype.kind == "f"
          else lib.tensor(a) for i, a in enumerate(arrays)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = fn(lib, *ts)
    rng = np.random.default_rng(seed)
    w = lib.tensor(rng.standard_normal(tuple(y.shape)))
    ins = [ts[i] for i in grad_idx]
    gs = lib.autograd.grad((y * w).sum(), ins, create_graph=True)
    res: dict[str, Any] = {"y": y, "name": _name(y), "g": gs,
                           "g_rg": [g.requires_grad for g in gs],
                           "g_names": [_name(g) for g in gs]}
    live = [(g, i) for g, i in zip(gs, grad_idx) if g.requires_grad]
    if live and second:
        vs = [lib.tensor(rng.standard_normal(tuple(g.shape))) for g, _ in live]
        tot = sum((g * v).sum() for (g, _), v in zip(live, vs))
        res["gg"] = lib.autograd.grad(tot, ins, allow_unused=True)
    return res


def _compare(fn: Callable[..., Any], arrays: list[Any], grad_idx: tuple[int, ...] = (0,),
             names: bool = True, tol: float = 1e-10, second: bool = True) -> dict[str, Any]:
    """Values, first and (``second``) second derivatives, ``requires_grad`` of the first
    derivatives and (``names``) the ``grad_fn`` names of the output and of the first
    derivatives."""
    t = _run(torch, fn, arrays, grad_idx, 1, second)
    g = _run(gradsum, fn, arrays, grad_idx, 1, second)
    _close(g["y"], t["y"], tol)
    assert g["name"] == t["name"]
    for a, b in zip(g["g"], t["g"]):
        _close(a, b, tol)
    assert g["g_rg"] == t["g_rg"]
    if names:
        assert g["g_names"] == t["g_names"]
    assert ("gg" in g) == ("gg" in t)
    if "gg" in t:
        for a, b in zip(g["gg"], t["gg"]):
            if b is None:
                assert a is None or not as_np(a).any()
            else:
                assert a is not None
                _close(a, b, tol)
    return t


def _arr(*shape: int) -> Any:
    return RNG.standard_normal(shape)


# -- activations ----------------------------------------------------------------------------------
A = np.array([[-30.0, -2.0, -0.5, 0.0, 0.3, 1.2], [3.0, 25.0, -1.0, 0.7, -0.2, 2.0]])


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_glu_one_node_two_derivatives(dim: int) -> None:
    x = _arr(4, 6, 2)
    t = _compare(lambda lib, xx: lib.nn.functional.glu(xx, dim), [x])
    assert t["name"] == "GluBackward0" and t["g_names"] == ["GluBackwardBackward0"]
    _compare(lambda lib, xx: lib.nn.GLU(dim)(xx), [x])


def test_mish_one_node_two_derivatives() -> None:
    t = _compare(lambda lib, xx: lib.nn.functional.mish(xx), [A])
    assert t["name"] == "MishBackward0" and t["g_names"] == ["MulBackward0"]
    _compare(lambda lib, xx: lib.nn.Mish()(xx), [A])


def test_logsigmoid_one_node_two_derivatives() -> None:
    t = _compare(lambda lib, xx: lib.nn.functional.logsigmoid(xx), [A * 3])
    assert t["name"] == "LogSigmoidBackward0"
    assert t["g_names"] == ["LogSigmoidBackwardBackward0"]
    _compare(lambda lib, xx: lib.nn.LogSigmoid()(xx), [A])


@pytest.mark.parametrize("alpha", [1.0, 2.0, 0.5])
def test_celu_node_is_celus(alpha: float) -> None:
    t = _compare(lambda lib, xx: lib.nn.functional.celu(xx, alpha), [A])
    assert t["name"] == "CeluBackward0" and t["g_names"] == ["EluBackwardBackward0"]
    _compare(lambda lib, xx: lib.nn.CELU(alpha)(xx), [A])


def test_elu_and_selu_keep_elus_node() -> None:
    assert _compare(lambda lib, xx: lib.nn.functional.elu(xx), [A])["name"] == "EluBackward0"
    assert _compare(lambda lib, xx: lib.nn.functional.selu(xx), [A])["name"] == "EluBackward0"


def test_other_composites_keep_torch_names() -> None:
    x, y, z = _arr(3, 4), _arr(3, 4), _arr(3, 4)
    s = np.array([1.0, -1.0, 1.0])
    for fn, arrays in [
        (lambda lib, a, b, c: lib.nn.functional.gaussian_nll_loss(a, b, c.abs() + 0.1),
         [x, y, z]),
        (lambda lib, a, b, c: lib.nn.functional.margin_ranking_loss(a[0], b[0], c),
         [x[:, :3], y[:, :3], s]),
        (lambda lib, a, b, c: lib.nn.functional.cosine_embedding_loss(a, b, c), [x, y, s]),
        (lambda lib, a, b, c: lib.nn.functional.triplet_margin_loss(a, b, c), [x, y, z]),
        (lambda lib, a: lib.nn.functional.softsign(a), [x]),
        (lambda lib, a: lib.nn.functional.tanhshrink(a), [x]),
        (lambda lib, a: lib.nn.functional.softmin(a, 1), [x]),
        (lambda lib, a: lib.nn.functional.normalize(a), [x]),
    ]:
        n = len(arrays)
        _compare(fn, arrays, tuple(i for i in range(n) if arrays[i] is not s), names=False)


# -- prelu ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("xshape,wshape", [((2, 3, 4), (3,)), ((2, 3), (1,)), ((5,), (1,)),
                                           ((5,), ()), ((), (1,)), ((2, 3, 2, 2), (3,)),
                                           ((4,), (1,))])
def test_prelu_one_node_two_derivatives(xshape: tuple[int, ...],
                                        wshape: tuple[int, ...]) -> None:
    x = np.round(_arr(*xshape), 1)
    x.reshape(-1)[:1] = 0.0  # (the kink: torch's x > 0 and x >= 0 masks)
    w = _arr(*wshape) * 0.3
    for idx in [(0, 1), (0,), (1,)]:
        t = _compare(lambda lib, xx, ww: lib.nn.functional.prelu(xx, ww), [x, w], idx)
        assert t["name"] == "PreluKernelBackward0" and all(t["g_rg"])
        _compare(lambda lib, xx, ww: xx.prelu(ww), [x, w], idx)


def test_prelu_module_and_shared_implementation() -> None:
    x = _arr(2, 3, 4)
    names = []
    for lib in (torch, gradsum):
        m = lib.nn.PReLU(3)
        y = m(lib.tensor(x, dtype=lib.float32, requires_grad=True))
        (g,) = lib.autograd.grad(y.sum(), m.weight, create_graph=True)
        assert g.requires_grad
        names.append(_name(g))
    assert names[0] == names[1] == "ViewBackward0"
    assert gradsum.nn.functional.prelu.__doc__ and gradsum.prelu(
        gradsum.tensor([-2.0]), gradsum.tensor([0.5])).tolist() == [-1.0]


@pytest.mark.parametrize("wshape", [(1, 1), (3, 1), (2, 2)])
def test_prelu_errors(wshape: tuple[int, ...]) -> None:
    same_error(lambda lib: lib.nn.functional.prelu(lib.ones(2, 3), lib.ones(*wshape)))


# -- in-place leaky_relu with a negative slope ----------------------------------------------------
def test_inplace_leaky_relu_negative_slope_raises_at_backward() -> None:
    x = _arr(5)

    def prog(lib: Any) -> Any:
        a = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.leaky_relu(a * 1, -0.5, inplace=True)
        assert _name(y) == "LeakyReluBackward1"
        y.sum().backward()

    same_error(prog)
    for slope in (0.0, 0.2):
        grads = []
        for lib in (torch, gradsum):
            a = lib.tensor(x, requires_grad=True)
            y = lib.nn.functional.leaky_relu(a * 1, slope, inplace=True)
            assert _name(y) == "LeakyReluBackward1"
            y.sum().backward()
            grads.append(as_np(a.grad))
        np.testing.assert_allclose(grads[1], grads[0])
    for lib in (torch, gradsum):  # (nothing recorded: nothing raises)
        with lib.no_grad():
            lib.nn.functional.leaky_relu(lib.tensor(x), -0.5, inplace=True)
        lib.nn.functional.leaky_relu(lib.tensor(x), -0.5, inplace=True)
