"""autocast and GradScaler against torch's CPU build: which ops cast to what (torch's CPU
lists), values and gradients through the casts, nesting, the cache, warnings and errors of
the CPU-only build, the deprecated ``cpu.amp``/``cuda.amp`` spellings, custom Functions, and
GradScaler step by step (scales, skipped steps, parameters, state dicts, errors)."""

from __future__ import annotations

import copy
import pickle
import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip("torch", reason="differential tests compare against torch")
pytest.importorskip("ml_dtypes", reason="CPU autocast computes in bfloat16 (ml_dtypes)")

LIBS = (gradsum, torch)


def _name(dt: Any) -> str:
    return str(dt).rsplit(".", 1)[-1]


def _warnings_of(fn: Callable[[], Any]) -> tuple[Any, list[tuple[str, str]]]:
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return out, [(x.category.__name__, str(x.message).replace("gradsum", "torch")) for x in w]


# -- which ops cast: torch's CPU lists ------------------------------------------------------------
def _rand(lib: Any, dt: Any, *shape: int, s: int = 0) -> Any:
    rng = np.random.default_rng(sum(shape) + 100 * s)
    return lib.tensor(rng.standard_normal(shape), dtype=dt)


def _pos(lib: Any, dt: Any, *shape: int) -> Any:
    return lib.tensor(np.random.default_rng(7).uniform(0.1, 0.9, shape), dtype=dt)


CASES: dict[str, Callable[[Any, Any], Any]] = {
    # torch's lower-precision list
    "linear": lambda T, d: T.nn.functional.linear(_rand(T, d, 2, 3), _rand(T, d, 4, 3),
                                                  _rand(T, d, 4)),
    "matmul": lambda T, d: T.matmul(_rand(T, d, 2, 3), _rand(T, d, 3, 4)),
    "matmul_op": lambda T, d: _rand(T, d, 2, 2, 3) @ _rand(T, d, 3, 4),
    "mm": lambda T, d: T.mm(_rand(T, d, 2, 3), _rand(T, d, 3, 4)),
    "mm_method": lambda T, d: _rand(T, d, 2, 3).mm(_rand(T, d, 3, 4)),
    "bmm": lambda T, d: T.bmm(_rand(T, d, 2, 2, 3), _rand(T, d, 2, 3, 4)),
    "addmm": lambda T, d: T.addmm(_rand(T, d, 2, 4), _rand(T, d, 2, 3), _rand(T, d, 3, 4)),
    "baddbmm": lambda T, d: T.baddbmm(_rand(T, d, 2, 2, 4), _rand(T, d, 2, 2, 3),
                                      _rand(T, d, 2, 3, 4)),
    "addbmm": lambda T, d: T.addbmm(_rand(T, d, 2, 4), _rand(T, d, 2, 2, 3),
                                    _rand(T, d, 2, 3, 4)),
    "conv1d": lambda T, d: T.nn.functional.conv1d(_rand(T, d, 1, 2, 5), _rand(T, d, 3, 2, 2)),
    "conv2d": lambda T, d: T.nn.functional.conv2d(_rand(T, d, 1, 2, 5, 5),
                                                  _rand(T, d, 3, 2, 2, 2), _rand(T, d, 3)),
    "conv3d": lambda T, d: T.nn.functional.conv3d(_rand(T, d, 1, 2, 3, 3, 3),
                                                  _rand(T, d, 3, 2, 2, 2, 2)),
    "conv_transpose1d": lambda T, d: T.nn.functional.conv_transpose1d(_rand(T, d, 1, 2, 5),
                                                                      _rand(T, d, 2, 3, 2)),
    "conv_transpose2d": lambda T, d: T.nn.functional.conv_transpose2d(
        _rand(T, d, 1, 2, 5, 5), _rand(T, d, 2, 3, 2, 2)),
    "conv_transpose3d": lambda T, d: T.nn.functional.conv_transpose3d(
        _rand(T, d, 1, 2, 3, 3, 3), _rand(T, d, 2, 3, 2, 2, 2)),
    "prelu": lambda T, d: T.nn.functional.prelu(_rand(T, d, 2, 3), _rand(T, d, 1)),
    "sdpa": lambda T, d: T.nn.functional.scaled_dot_product_attention(
        _rand(T, d, 1, 2, 3, 4), _rand(T, d, 1, 2, 3, 4, s=1), _rand(T, d, 1, 2, 3, 4, s=2)),
    "linalg_vecdot": lambda T, d: T.linalg.vecdot(_rand(T, d, 2, 3), _rand(T, d, 2, 3)),
    "einsum": lambda T, d: T.einsum("ij,jk->ik", _rand(T, d, 2, 3), _rand(T, d, 3, 4)),
    "einsum_one": lambda T, d: T.einsum("ij->ji", _rand(T, d, 2, 3)),
    # torch's fp32 list
    "mse_loss": lambda T, d: T.nn.functional.mse_loss(_rand(T, d, 3), _rand(T, d, 3, s=1)),
    "l1_loss": lambda T, d: T.nn.functional.l1_loss(_rand(T, d, 3), _rand(T, d, 3, s=1)),
    "smooth_l1_loss": lambda T, d: T.nn.functional.smooth_l1_loss(_rand(T, d, 3),
                                                                  _rand(T, d, 3, s=1)),
    "huber_loss": lambda T, d: T.nn.functional.huber_loss(_rand(T, d, 3), _rand(T, d, 3, s=1)),
    "cross_entropy": lambda T, d: T.nn.functional.cross_entropy(_rand(T, d, 2, 3),
                                                                T.tensor([0, 1])),
    "nll_loss": lambda T, d: T.nn.functional.nll_loss(_rand(T, d, 2, 3), T.tensor([0, 1])),
    "kl_div": lambda T, d: T.nn.functional.kl_div(_rand(T, d, 3), _pos(T, d, 3),
                                                  reduction="batchmean"),
    "binary_cross_entropy": lambda T, d: T.nn.functional.binary_cross_entropy(
        _pos(T, d, 3), _pos(T, d, 3)),
    "bce_with_logits": lambda T, d: T.nn.functional.binary_cross_entropy_with_logits(
        _rand(T, d, 3), _pos(T, d, 3)),
    "soft_margin_loss": lambda T, d: T.nn.functional.soft_margin_loss(_rand(T, d, 3),
                                                                      _rand(T, d, 3, s=1)),
    "margin_ranking_loss": lambda T, d: T.nn.functional.margin_ranking_loss(
        _rand(T, d, 3), _rand(T, d, 3, s=1), _rand(T, d, 3, s=2)),
    "hinge_embedding_loss": lambda T, d: T.nn.functional.hinge_embedding_loss(
        _rand(T, d, 3), _rand(T, d, 3, s=1)),
    "cosine_embedding_loss": lambda T, d: T.nn.functional.cosine_embedding_loss(
        _rand(T, d, 2, 3), _rand(T, d, 2, 3, s=1), T.tensor([1, -1])),
    "poisson_nll_loss": lambda T, d: T.nn.functional.poisson_nll_loss(_rand(T, d, 3),
                                                                      _rand(T, d, 3, s=1)),
    "triplet_margin_loss": lambda T, d: T.nn.functional.triplet_margin_loss(
        _rand(T, d, 2, 3), _rand(T, d, 2, 3, s=1), _rand(T, d, 2, 3, s=2)),
    "multi_margin_loss": lambda T, d: T.nn.functional.multi_margin_loss(_rand(T, d, 2, 3),
                                                                        T.tensor([0, 1])),
    "multilabel_margin_loss": lambda T, d: T.nn.functional.multilabel_margin_loss(
        _rand(T, d, 2, 3), T.tensor([[0, 1, -1], [1, -1, 0]])),
    "prod": lambda T, d: _rand(T, d, 3).prod(),
    "trace": lambda T, d: _rand(T, d, 3, 3).trace(),
    "cdist": lambda T, d: T.cdist(_rand(T, d, 2, 3), _rand(T, d, 4, 3)),
    "inverse": lambda T, d: T.linalg.inv(_rand(T, d, 3, 3)),
    "pinverse": lambda T, d: T.pinverse(_rand(T, d, 3, 3)),
    "cholesky": lambda T, d: T.linalg.cholesky(T.eye(3, dtype=d)),
    "avg_pool3d": lambda T, d: T.nn.functional.avg_pool3d(_rand(T, d, 1, 1, 2, 2, 2), 2),
    "max_pool3d": lambda T, d: T.nn.functional.max_pool3d(_rand(T, d, 1, 1, 2, 2, 2), 2),
    "adaptive_avg_pool3d": lambda T, d: T.nn.functional.adaptive_avg_pool3d(
        _rand(T, d, 1, 1, 2, 2, 2), 1),
    "reflect_pad": lambda T, d: T.nn.functional.pad(_rand(T, d, 1, 2, 3), (1, 1),
                                                    mode="reflect"),
    "replicate_pad": lambda T, d: T.nn.functional.pad(_rand(T, d, 1, 2, 3), (1, 1),
                                                      mode="replicate"),
    "circular_pad": lambda T, d: T.nn.functional.pad(_rand(T, d, 1, 2, 3), (1, 1),
                                                     mode="circular"),
    "constant_pad": lambda T, d: T.nn.functional.pad(_rand(T, d, 1, 2, 3), (1, 1)),
    "quantile": lambda T, d: T.quantile(_rand(T, d, 5), 0.5),
    "grid_sample": lambda T, d: T.nn.functional.grid_sample(
        _rand(T, d, 1, 1, 3, 3), _rand(T, d, 1, 2, 2, 2) * 0.5, align_corners=False),
    # on neither list: the input dtypes
    "max_pool2d": lambda T, d: T.nn.functional.max_pool2d(_rand(T, d, 1, 1, 2, 2), 2),
    "avg_pool2d": lambda T, d: T.nn.functional.avg_pool2d(_rand(T, d, 1, 1, 2, 2), 2),
    "softmax": lambda T, d: _rand(T, d, 3).softmax(0),
    "log_softmax": lambda T, d: _rand(T, d, 3).log_softmax(0),
    "layer_norm": lambda T, d: T.nn.functional.layer_norm(_rand(T, d, 2, 3), (3,)),
    "sum": lambda T, d: _rand(T, d, 3).sum(),
    "exp": lambda T, d: _rand(T, d, 3).exp(),
    "add": lambda T, d: _rand(T, d, 3) + _rand(T, d, 3, s=1),
    "cat": lambda T, d: T.cat([_rand(T, d, 2), _rand(T, d, 3)]),
    "dot": lambda T, d: T.dot(_rand(T, d, 3), _rand(T, d, 3)),
    "mv": lambda T, d: T.mv(_rand(T, d, 2, 3), _rand(T, d, 3)),
    "bilinear": lambda T, d: T.nn.functional.bilinear(_rand(T, d, 2, 3), _rand(T, d, 2, 3),
                                                      _rand(T, d, 4, 3, 3)),
    "vector_norm": lambda T, d: T.linalg.vector_norm(_rand(T, d, 3)),
    "group_norm": lambda T, d: T.nn.functional.group_norm(_rand(T, d, 2, 4, 3), 2),
    "embedding_bag": lambda T, d: T.nn.functional.embedding_bag(T.tensor([[0, 1]]),
                                                                _rand(T, d, 3, 4)),
    "cumsum": lambda T, d: _rand(T, d, 3).cumsum(0),
    # composites: cast where torch's are built on a listed op (tensordot, inner, multi_dot and
    # matrix_power through mm/bmm), not where theirs are not (outer, kron, addmv, addr)
    "tensordot": lambda T, d: T.tensordot(_rand(T, d, 2, 3), _rand(T, d, 3, 2), 1),
    "inner": lambda T, d: T.inner(_rand(T, d, 2, 3), _rand(T, d, 2, 3, s=1)),
    "multi_dot": lambda T, d: T.linalg.multi_dot([_rand(T, d, 2, 2), _rand(T, d, 2, 2, s=1)]),
    "matrix_power": lambda T, d: _rand(T, d, 2, 2).matrix_power(2),
    "affine_grid": lambda T, d: T.nn.functional.affine_grid(_rand(T, d, 1, 2, 3), (1, 1, 2, 2),
                                                            align_corners=False),
    "outer": lambda T, d: T.outer(_rand(T, d, 2), _rand(T, d, 3)),
    "kron": lambda T, d: T.kron(_rand(T, d, 2, 2), _rand(T, d, 2, 2, s=1)),
    "addmv": lambda T, d: T.addmv(_rand(T, d, 2), _rand(T, d, 2, 2), _rand(T, d, 2, s=1)),
    "addr": lambda T, d: T.addr(_rand(T, d, 2, 2), _rand(T, d, 2), _rand(T, d, 2, s=1)),
    # modules built from them
    "linear_module": lambda T, d: T.nn.Linear(3, 2).to(d)(_rand(T, d, 2, 3)),
    "conv_module": lambda T, d: T.nn.Conv2d(2, 3, 2).to(d)(_rand(T, d, 1, 2, 4, 4)),
    "rnn": lambda T, d: T.nn.RNN(3, 4).to(d)(_rand(T, d, 2, 1, 3))[0],
    "gru": lambda T, d: T.nn.GRU(3, 4).to(d)(_rand(T, d, 2, 1, 3))[0],
    "rnn_cell": lambda T, d: T.nn.RNNCell(3, 4).to(d)(_rand(T, d, 1, 3)),
    "lstm_cell": lambda T, d: T.nn.LSTMCell(3, 4).to(d)(_rand(T, d, 1, 3))[0],
    "gru_cell": lambda T, d: T.nn.GRUCell(3, 4).to(d)(_rand(T, d, 1, 3)),
    "mha": lambda T, d: T.nn.MultiheadAttention(4, 2).to(d)(
        _rand(T, d, 3, 1, 4), _rand(T, d, 3, 1, 4), _rand(T, d, 3, 1, 4))[0],
    "encoder_layer": lambda T, d: T.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0).to(d)(
        _rand(T, d, 3, 1, 4)),
    "embedding": lambda T, d: T.nn.Embedding(5, 3).to(d)(T.tensor([1, 2])),
}


def _policy(lib: Any, case: Callable[[Any, Any], Any]) -> list[str]:
    """Result dtypes of ``case``: float32, bfloat16 and float64 inputs under bfloat16
    autocast, float32 inputs under float16 autocast, and float32 inputs outside."""
    out = []
    lib.manual_seed(0)
    for dt, fast in ((lib.float32, lib.bfloat16), (lib.bfloat16, lib.bfloat16),
                     (lib.float64, lib.bfloat16), (lib.float32, lib.float16)):
        with lib.autocast("cpu", dtype=fast):
            out.append(_name(case(lib, dt).dtype))
    out.append(_name(case(lib, lib.float32).dtype))
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_cast_policy_matches_torch(name: str) -> None:
    g, t = (_policy(lib, CASES[name]) for lib in LIBS)
    assert g == t


def test_policy_lists_are_torchs_names() -> None:
    from gradsum import _autocast

    assert {"linear", "matmul", "conv2d", "prelu"} <= _autocast.LOWER_PRECISION
    assert {"mse_loss", "cross_entropy_loss", "prod", "cdist"} <= _autocast.FP32
    assert not _autocast.LOWER_PRECISION & _autocast.FP32
    with pytest.raises(ValueError, match="neither"):
        _autocast.autocast_policy("softmax")


# -- values and gradients ----------------------------------------------------------------------
@pytest.mark.parametrize("fast", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", ["linear", "matmul", "bmm", "conv2d", "conv1d", "addmm"])
def test_values_under_autocast(name: str, fast: str) -> None:
    g, t = (CASES[name](lib, lib.float32) for lib in LIBS)  # (the float32 reference)
    res = []
    for lib in LIBS:
        with lib.autocast("cpu", dtype=getattr(lib, fast)):
            res.append(CASES[name](lib, lib.float32))
    assert _name(res[0].dtype) == _name(res[1].dtype) == fast
    gv, tv = res[0].float().numpy(), res[1].float().numpy()
    # the products of the rounded inputs, summed in float32 in another order and rounded to
    # the fast dtype: within one step of it (2**-8 relative for bfloat16, 2**-11 for float16)
    rtol = 2.0 ** -7 if fast == "bfloat16" else 2.0 ** -10
    np.testing.assert_allclose(gv, tv, rtol=rtol, atol=rtol)
    assert (gv == tv).mean() >= 0.9


@pytest.mark.parametrize("fast", ["bfloat16", "float16"])
def test_training_step_gradients_in_parameter_dtype(fast: str) -> None:
    rng = np.random.default_rng(0)
    w1, b1 = rng.standard_normal((8, 5)), rng.standard_normal(8)
    w2, b2 = rng.standard_normal((3, 8)), rng.standard_normal(3)
    x, y = rng.standard_normal((6, 5)), np.array([0, 2, 1, 1, 0, 2])
    out = []
    for lib in LIBS:
        params = [lib.tensor(a, dtype=lib.float32, requires_grad=True) for a in (w1, b1, w2, b2)]
        with lib.autocast("cpu", dtype=getattr(lib, fast)):
            h = lib.relu(lib.nn.functional.linear(lib.tensor(x, dtype=lib.float32), *params[:2]))
            logits = lib.nn.functional.linear(h, *params[2:])
            loss = lib.nn.functional.cross_entropy(logits, lib.tensor(y))
        assert _name(h.dtype) == _name(logits.dtype) == fast
        assert _name(loss.dtype) == "float32"
        loss.backward()
        assert all(_name(p.grad.dtype) == "float32" for p in params)
        out.append((loss.item(), [p.grad.numpy() for p in params]))
    assert abs(out[0][0] - out[1][0]) <= 2e-2 * abs(out[1][0])
    for gg, tg in zip(out[0][1], out[1][1]):
        np.testing.assert_allclose(gg, tg, rtol=5e-2, atol=5e-2)


def test_bfloat16_parameters_get_bfloat16_grads() -> None:
    out = []
    for lib in LIBS:
        w = lib.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=lib.bfloat16, requires_grad=True)
        with lib.autocast("cpu"):
            loss = lib.nn.functional.mse_loss(lib.mm(lib.ones(3, 2), w), lib.zeros(3, 2))
        loss.backward()
        out.append((_name(loss.dtype), _name(w.grad.dtype), w.grad.float().tolist()))
    assert out[0] == out[1]


# -- state, nesting, cache ---------------------------------------------------------------------
def _states(lib: Any) -> list[Any]:
    seen = []

    def note() -> None:
        seen.append((lib.is_autocast_enabled("cpu"), lib.is_autocast_enabled(),
                     lib.is_autocast_enabled("cuda"), _name(lib.get_autocast_dtype("cpu")),
                     _name(lib.get_autocast_dtype("cuda")), lib.is_autocast_cache_enabled(),
                     _name(lib.mm(lib.ones(2, 2), lib.ones(2, 2)).dtype)))

    note()
    with lib.autocast("cpu"):
        note()
        with lib.autocast("cpu", enabled=False):
            note()
            with lib.autocast("cpu", dtype=lib.float16, cache_enabled=False):
                note()
            note()
        with lib.autocast(device_type="cpu", dtype=lib.float16):
            note()
        note()
    note()

    @lib.autocast("cpu")
    def decorated() -> None:
        note()

    decorated()
    note()
    return seen


def test_nesting_and_state_functions() -> None:
    assert _states(gradsum) == _states(torch)


def test_region_restores_after_an_exception() -> None:
    for lib in LIBS:
        with pytest.raises(KeyError), lib.autocast("cpu"):
            raise KeyError("x")
        assert not lib.is_autocast_enabled("cpu")


def _cache_facts(lib: Any) -> tuple[bool, ...]:
    w = lib.ones(2, 2, requires_grad=True)
    x = lib.ones(2, 2)
    nodes = []
    with lib.autocast("cpu"):
        y1, y2 = lib.mm(x, w), lib.mm(x, w)
        nodes.append(y1.grad_fn.next_functions[1][0])
        nodes.append(y2.grad_fn.next_functions[1][0])
        with lib.autocast("cpu", cache_enabled=False):
            nodes.append(lib.mm(x, w).grad_fn.next_functions[1][0])
        z1, z2 = lib.mm(x, w.detach()), lib.mm(x, w.detach())
        (y1.sum() + y2.sum()).backward()
    with lib.autocast("cpu"):  # a new outermost region: a new cast
        nodes.append(lib.mm(x, w).grad_fn.next_functions[1][0])
    return (nodes[0] is nodes[1], nodes[2] is nodes[0], nodes[3] is nodes[0],
            type(nodes[0]).__name__ == "ToCopyBackward0", z1.grad_fn is None,
            z2.grad_fn is None, w.grad.tolist() == [[4.0, 4.0], [4.0, 4.0]])


def test_cast_cache_as_torch() -> None:
    assert _cache_facts(gradsum) == _cache_facts(torch)


def _cache_and_grad_mode(lib: Any) -> tuple[bool, ...]:
    w, x = lib.ones(2, 2, requires_grad=True), lib.ones(2, 2)
    with lib.autocast("cpu"):
        with lib.no_grad():
            y1 = lib.mm(x, w)  # (a cast without history: not reused below)
        y2 = lib.mm(x, w)
        with lib.no_grad():
            y3 = lib.mm(x, w)
        y4 = lib.mm(x, w)
    return (y1.requires_grad, y2.requires_grad, y3.requires_grad, y4.requires_grad,
            y2.grad_fn.next_functions[1][0] is y4.grad_fn.next_functions[1][0])


def test_cast_cache_and_no_grad() -> None:
    assert _cache_and_grad_mode(gradsum) == _cache_and_grad_mode(torch)


def test_autocast_is_thread_local() -> None:
    for lib in LIBS:
        seen: list[bool] = []
        with lib.autocast("cpu"):
            t = threading.Thread(target=lambda s=seen, T=lib: s.append(
                T.is_autocast_enabled("cpu")))
            t.start()
            t.join()
            seen.append(lib.is_autocast_enabled("cpu"))
        assert seen == [False, True]


# -- the CPU build's warnings and errors -------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda T: T.autocast("cuda"),
    lambda T: T.amp.autocast("cuda", dtype=T.bfloat16),
    lambda T: T.autocast("cpu", dtype=T.float32),
    lambda T: T.autocast("cpu", dtype=T.float64),
    lambda T: T.autocast("cpu", dtype=T.float16),
    lambda T: T.autocast("cpu", enabled=False, dtype=T.float32),
    lambda T: T.autocast("mps"),
    lambda T: T.autocast("xla"),
    lambda T: T.cpu.amp.autocast(),
    lambda T: T.cpu.amp.autocast(dtype=T.float16),
    lambda T: T.cuda.amp.autocast(),
    lambda T: T.cuda.amp.autocast(enabled=False),
])
def test_warnings_and_disabling(make: Callable[[Any], Any]) -> None:
    facts = []
    for lib in LIBS:
        a, warned = _warnings_of(lambda T=lib: make(T))
        with a:
            inside = (lib.is_autocast_enabled(a.device), _name(lib.get_autocast_dtype("cpu")))
        facts.append((a.device, a._enabled, _name(a.fast_dtype), inside, warned))
    assert facts[0] == facts[1]


@pytest.mark.parametrize("make", [
    lambda T: T.autocast(3),
    lambda T: T.autocast("gpu"),
    lambda T: T.autocast("xla2"),
    lambda T: T.autocast("meta"),
    lambda T: T.autocast(),
    lambda T: T.autocast("cpu")(5),
    lambda T: T.get_autocast_dtype("meta"),
    lambda T: T.amp.is_autocast_available("foo"),
    lambda T: T.amp.custom_fwd(device_type=3),
])
def test_errors(make: Callable[[Any], Any]) -> None:
    errs = []
    for lib in LIBS:
        with pytest.raises(Exception) as info:
            make(lib)
        errs.append((info.type, str(info.value).replace("gradsum", "torch").split("\n")[0]))
    assert errs[0][0] is errs[1][0]
    assert errs[0][1][:40] == errs[1][1][:40]


@pytest.mark.parametrize("device", ["cpu", "cuda", "mps", "xla", "xpu", "hpu", "meta"])
def test_is_autocast_available(device: str) -> None:
    assert gradsum.amp.is_autocast_available(device) == torch.amp.is_autocast_available(device)


@pytest.mark.parametrize("name", ["is_autocast_cpu_enabled", "get_autocast_cpu_dtype",
                                  "get_autocast_gpu_dtype"])
def test_deprecated_getters(name: str) -> None:
    g, t = (_warnings_of(getattr(lib, name)) for lib in LIBS)
    assert str(g[0]).rsplit(".", 1)[-1] == str(t[0]).rsplit(".", 1)[-1]
    assert g[1][0][0] == t[1][0][0] == "DeprecationWarning"
    assert t[1][0][1].startswith(g[1][0][1])  # (torch adds where it was triggered)


def test_namespaces() -> None:
    assert gradsum.autocast is gradsum.amp.autocast is gradsum.amp.autocast_mode.autocast
    assert issubclass(gradsum.cpu.amp.autocast, gradsum.amp.autocast)
    assert issubclass(gradsum.cuda.amp.GradScaler, gradsum.amp.GradScaler)
    import gradsum.cuda.amp as cuda_amp

    assert cuda_amp.amp_definitely_not_available() is torch.cuda.amp.common.\
        amp_definitely_not_available()
    for name in ("GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"):
        assert callable(getattr(gradsum.amp, name)) and callable(getattr(torch.amp, name))
    assert gradsum.amp.grad_scaler.OptState.STEPPED.value == torch.amp.grad_scaler.\
        OptState.STEPPED.value


# -- custom Functions --------------------------------------------------------------------------
def _custom(lib: Any, cast_inputs: Any, in_autocast: bool) -> tuple[Any, ...]:
    seen = {}

    class MyMM(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type="cpu", cast_inputs=cast_inputs)
        def forward(ctx: Any, a: Any, b: Any) -> Any:
            seen["fwd"] = (lib.is_autocast_enabled("cpu"), _name(a.dtype))
            ctx.save_for_backward(a, b)
            return a.mm(b)

        @staticmethod
        @lib.amp.custom_bwd(device_type="cpu")
        def backward(ctx: Any, g: Any) -> Any:
            a, b = ctx.saved_tensors
            seen["bwd"] = lib.is_autocast_enabled("cpu")
            return g.mm(b.t()), a.t().mm(g)

    a = lib.ones(2, 3, requires_grad=True)
    b = lib.ones(3, 2, requires_grad=True)
    if in_autocast:
        with lib.autocast("cpu"):
            out = MyMM.apply(a, b)
    else:
        out = MyMM.apply(a, b)
    out.float().sum().backward()
    return (_name(out.dtype), seen["fwd"], seen["bwd"], _name(a.grad.dtype),
            a.grad.float().tolist())


@pytest.mark.parametrize("cast_inputs", [None, "float32", "bfloat16"])
@pytest.mark.parametrize("in_autocast", [True, False])
def test_custom_fwd_bwd(cast_inputs: str | None, in_autocast: bool) -> None:
    g, t = (_custom(lib, None if cast_inputs is None else getattr(lib, cast_inputs),
                    in_autocast) for lib in LIBS)
    assert g == t


# -- GradScaler --------------------------------------------------------------------------------
def _scaler(lib: Any, *args: Any, **kwargs: Any) -> Any:
    return lib.amp.GradScaler(*args, **kwargs)


def test_disabled_scaler_is_a_pass_through() -> None:
    facts = []
    for lib in LIBS:
        w = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([w], lr=0.5)
        s = _scaler(lib, "cpu", enabled=False)
        loss = (w * 3).sum()
        same = s.scale(loss) is loss
        lst = [loss]
        loss.backward()
        s.unscale_(opt)
        ret = s.step(opt)
        s.update()
        s.update(4.0)
        s.load_state_dict({})
        facts.append((same, s.scale(lst) is lst, ret, w.tolist(), s.get_scale(),
                      s.state_dict(), s.is_enabled(), s._get_growth_tracker()))
    assert facts[0] == facts[1]


@pytest.mark.parametrize("make", [
    lambda T: T.amp.GradScaler(),
    lambda T: T.amp.GradScaler("cuda", init_scale=8.0),
    lambda T: T.amp.GradScaler("cuda", enabled=False),
    lambda T: T.cuda.amp.GradScaler(),
    lambda T: T.cuda.amp.GradScaler(enabled=False),
    lambda T: T.cpu.amp.GradScaler(init_scale=4.0),
    lambda T: T.amp.GradScaler("cpu"),
])
def test_scaler_construction_warnings(make: Callable[[Any], Any]) -> None:
    facts = []
    for lib in LIBS:
        s, warned = _warnings_of(lambda T=lib: make(T))
        facts.append((s.is_enabled(), s.get_scale(), s.state_dict(), warned))
    assert facts[0] == facts[1]


def _train(lib: Any, opt_name: str, dtype: str, infs: set[int], steps: int = 12,
           unscale_first: bool = False, **scaler_kw: Any) -> list[Any]:
    rng = np.random.default_rng(1)
    w0, x0 = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
    dt = getattr(lib, dtype)
    w = lib.nn.Parameter(lib.tensor(w0, dtype=dt))
    b = lib.nn.Parameter(lib.zeros(4, dtype=dt))
    opt = (lib.optim.SGD([w, b], lr=0.1, momentum=0.9) if opt_name == "sgd"
           else lib.optim.Adam([w, b], lr=0.01))
    scaler = lib.amp.GradScaler("cpu", **scaler_kw)
    x = lib.tensor(x0, dtype=dt)
    log = []
    for i in range(steps):
        opt.zero_grad()
        loss = (lib.nn.functional.linear(x, w, b) ** 2).mean()
        scaled = scaler.scale(loss)
        scaled.backward()
        if i in infs:
            with lib.no_grad():
                w.grad[0, 0] = float("inf") if i % 2 else float("nan")
        if unscale_first:
            scaler.unscale_(opt)
            lib.nn.utils.clip_grad_norm_([w, b], 0.5)
        ret = scaler.step(opt)
        found = sum(v.item() for v in scaler._found_inf_per_device(opt).values())
        scaler.update()
        log.append((scaled.item(), ret, found, scaler.get_scale(), scaler._get_growth_tracker(),
                    w.detach().double().numpy().copy(), b.detach().double().numpy().copy()))
    return log


@pytest.mark.parametrize("opt_name", ["sgd", "adam"])
@pytest.mark.parametrize("dtype,unscale_first", [("float32", False), ("float32", True),
                                                 ("float64", False)])
def test_scaler_training_matches_torch(opt_name: str, dtype: str, unscale_first: bool) -> None:
    kw = dict(init_scale=2.0 ** 10, growth_interval=3, growth_factor=4.0, backoff_factor=0.25)
    g, t = (_train(lib, opt_name, dtype, {0, 1, 5, 9}, unscale_first=unscale_first, **kw)
            for lib in LIBS)
    rtol = {"float32": 1e-6, "float64": 1e-12}[dtype]
    for i, (a, b) in enumerate(zip(g, t)):
        assert a[1:5] == b[1:5], (i, a[1:5], b[1:5])  # step's return, inf found, scale, tracker
        np.testing.assert_allclose(a[0], b[0], rtol=rtol)
        np.testing.assert_allclose(a[5], b[5], rtol=rtol, atol=rtol)
        np.testing.assert_allclose(a[6], b[6], rtol=rtol, atol=rtol)


def test_scale_tensors_and_outputs() -> None:
    facts = []
    for lib in LIBS:
        s = _scaler(lib, "cpu", init_scale=8.0)
        before = (s._scale, s.get_scale(), s.state_dict())
        a, b = lib.tensor([1.0, 2.0]), lib.tensor(3.0, dtype=lib.float64)
        out = s.scale([a, (b, [a.bfloat16()])])
        facts.append((before[0] is None, before[1], before[2], type(out).__name__,
                      type(out[1]).__name__, out[0].tolist(), _name(out[1][0].dtype),
                      out[1][0].item(), _name(out[1][1][0].dtype), tuple(s._scale.shape),
                      _name(s._scale.dtype), _name(s._growth_tracker.dtype),
                      _name(s.scale(a.half()).dtype)))
        with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable"):
            s.scale([1.0])
    assert facts[0] == facts[1]


def _misuse(lib: Any, which: str) -> Any:
    w = lib.nn.Parameter(lib.ones(2, dtype=lib.float16 if which == "fp16" else lib.float32))
    opt = lib.optim.SGD([w], lr=0.1)
    s = lib.amp.GradScaler("cpu")
    if which == "step_first":
        return s.step(opt)
    if which == "update_first":
        return s.update()
    if which == "unscale_first":
        return s.unscale_(opt)
    s.scale(w.float().sum()).backward()
    if which == "fp16":
        return s.step(opt)
    if which == "twice":
        s.unscale_(opt)
        return s.unscale_(opt)
    if which == "after_step":
        s.step(opt)
        return s.unscale_(opt)
    if which == "step_twice":
        s.step(opt)
        return s.step(opt)
    if which == "closure":
        return s.step(opt, closure=lambda: 0.0)
    if which == "no_grads":
        opt.zero_grad()
        return s.step(opt)
    if which == "empty_state":
        return s.load_state_dict({})
    if which == "pickle_mid_step":
        s.step(opt)
        return pickle.dumps(s)
    if which == "growth":
        return lib.amp.GradScaler("cpu", growth_factor=1.0)
    if which == "backoff":
        return lib.amp.GradScaler("cpu", backoff_factor=1.0)
    if which == "new_scale_grad":
        s.step(opt)
        return s.update(lib.tensor(2.0, requires_grad=True))
    raise AssertionError(which)


@pytest.mark.parametrize("which", ["step_first", "update_first", "unscale_first", "fp16",
                                   "twice", "after_step", "step_twice", "closure", "no_grads",
                                   "empty_state", "pickle_mid_step", "growth", "backoff",
                                   "new_scale_grad"])
def test_scaler_errors(which: str) -> None:
    errs = []
    for lib in LIBS:
        with pytest.raises(Exception) as info:
            _misuse(lib, which)
        errs.append((info.type, str(info.value)))
    assert errs[0] == errs[1]


def _state_round_trip(lib: Any) -> list[Any]:
    w = lib.nn.Parameter(lib.ones(2))
    opt = lib.optim.SGD([w], lr=0.1)
    s = lib.amp.GradScaler("cpu", init_scale=16.0, growth_interval=2)
    out = [s.state_dict()]
    for _ in range(3):
        s.scale(w.sum()).backward()
        s.step(opt)
        s.update()
    out.append(s.state_dict())
    s2 = lib.amp.GradScaler("cpu")
    s2.load_state_dict(s.state_dict())
    out.append((s2.state_dict(), s2.get_scale()))
    s2.scale(w.sum())  # (the scale tensor made from the loaded state)
    out.append((s2._scale.item(), s2._growth_tracker.item()))
    s.load_state_dict({"scale": 3.0, "growth_factor": 3.0, "backoff_factor": 0.125,
                       "growth_interval": 7, "_growth_tracker": 2})
    out.append((s.state_dict(), s._scale.item(), s._growth_tracker.item()))
    s.update(5.0)
    out.append(s.get_scale())
    s.update(lib.tensor(6.0))
    out.append(s.get_scale())
    s3 = pickle.loads(pickle.dumps(s))
    s4 = copy.deepcopy(s)
    out.append((s3.state_dict(), s3._scale, s4.state_dict()))
    s3.set_growth_factor(5.0)
    s3.set_backoff_factor(0.2)
    s3.set_growth_interval(9)
    out.append((s3.get_growth_factor(), s3.get_backoff_factor(), s3.get_growth_interval()))
    return out


def test_state_dict_and_pickle() -> None:
    assert _state_round_trip(gradsum) == _state_round_trip(torch)


def test_step_returns_the_optimizers_value() -> None:
    res = []
    for lib in LIBS:
        w = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([w], lr=0.1)
        opt.step = (lambda orig: (lambda *a, **k: (orig(*a, **k), "stepped")[1]))(opt.step)
        s = lib.amp.GradScaler("cpu")
        s.scale(w.sum()).backward()
        res.append(s.step(opt))
    assert res == ["stepped", "stepped"]


# -- a training program as ported scripts write it -----------------------------------------------
def _amp_training(lib: Any, fast: str, steps: int = 6) -> list[float]:
    """A small CNN classifier with torch's AMP idiom: autocast around the forward and the
    loss, GradScaler('cpu') around backward and step, clip_grad_norm_ after unscale_."""
    rng = np.random.default_rng(3)
    lib.manual_seed(0)
    model = lib.nn.Sequential(
        lib.nn.Conv2d(1, 4, 3, padding=1), lib.nn.ReLU(), lib.nn.MaxPool2d(2),
        lib.nn.Flatten(), lib.nn.Linear(4 * 4 * 4, 16), lib.nn.GELU(), lib.nn.Linear(16, 3))
    with lib.no_grad():  # the same initial weights in both
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)) * 0.3, dtype=lib.float32))
    opt = lib.optim.AdamW(model.parameters(), lr=1e-2)
    scaler = lib.amp.GradScaler("cpu", init_scale=2.0 ** 8)
    x = lib.tensor(rng.standard_normal((8, 1, 8, 8)), dtype=lib.float32)
    y = lib.tensor(rng.integers(0, 3, 8))
    losses = []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        with lib.autocast(device_type="cpu", dtype=getattr(lib, fast)):
            logits = model(x)
            loss = lib.nn.functional.cross_entropy(logits, y)
        assert _name(logits.dtype) == fast and _name(loss.dtype) == "float32"
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        assert all(_name(p.dtype) == _name(p.grad.dtype) == "float32"
                   for p in model.parameters())
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("fast", ["bfloat16", "float16"])
def test_amp_training_program(fast: str) -> None:
    g, t = (_amp_training(lib, fast) for lib in LIBS)
    # the same casts, products summed in float32 in another order and rounded to the fast
    # dtype, and gradsum's composite ops (gelu) rounding their steps: measured within 1e-4
    # at the first step and 1e-3 after six (both dtypes)
    np.testing.assert_allclose(g[0], t[0], rtol=1e-3)
    np.testing.assert_allclose(g, t, rtol=1e-2)
    assert g[-1] < g[0] and t[-1] < t[0]


# -- normalisation of bfloat16 activations with float32 parameters (torch's mixed type) ----------
NORM_CASES: dict[str, Callable[[Any], Any]] = {
    "ln f32 in, bf16 w": lambda T: T.nn.functional.layer_norm(T.ones(2, 3), (3,),
                                                             T.ones(3).bfloat16()),
    "ln f64 in, f32 w": lambda T: T.nn.functional.layer_norm(T.ones(2, 3).double(), (3,),
                                                            T.ones(3)),
    "ln bf16 in, f64 w": lambda T: T.nn.functional.layer_norm(T.ones(2, 3).bfloat16(), (3,),
                                                             T.ones(3).double()),
    "ln bf16 in, f32 w, bf16 b": lambda T: T.nn.functional.layer_norm(
        T.ones(2, 3).bfloat16(), (3,), T.ones(3), T.ones(3).bfloat16()),
    "bn f32 in, bf16 w": lambda T: T.nn.functional.batch_norm(T.ones(2, 3), T.ones(3),
                                                             T.ones(3), T.ones(3).bfloat16()),
    "bn f64 in, f32 stats": lambda T: T.nn.functional.batch_norm(T.ones(2, 3).double(),
                                                                T.ones(3), T.ones(3)),
    "bn bf16 in, f64 stats": lambda T: T.nn.functional.batch_norm(
        T.ones(2, 3).bfloat16(), T.ones(3).double(), T.ones(3).double()),
    "gn f32 in, bf16 w": lambda T: T.nn.functional.group_norm(T.ones(2, 4), 2,
                                                             T.ones(4).bfloat16()),
    "gn f64 in, f32 w": lambda T: T.nn.functional.group_norm(T.ones(2, 4).double(), 2,
                                                            T.ones(4)),
}


@pytest.mark.parametrize("name", list(NORM_CASES))
def test_norm_dtype_mixes_refused_as_torch(name: str) -> None:
    errs = []
    for lib in LIBS:
        with pytest.raises(RuntimeError) as info:
            NORM_CASES[name](lib)
        errs.append(str(info.value).split(":")[0] + ":" + str(info.value).split(":")[1][:30])
    assert errs[0] == errs[1]


def _mixed_norms(lib: Any, fast: str) -> list[Any]:
    rng = np.random.default_rng(5)
    dt = getattr(lib, fast)
    x4 = lib.tensor(rng.standard_normal((3, 4, 5, 5)), dtype=dt, requires_grad=True)
    x2 = lib.tensor(rng.standard_normal((6, 8)), dtype=dt, requires_grad=True)
    bn, gn = lib.nn.BatchNorm2d(4), lib.nn.GroupNorm(2, 4)
    ln, inorm = lib.nn.LayerNorm(8), lib.nn.InstanceNorm2d(4, affine=True)
    outs = [bn(x4), gn(x4), ln(x2), inorm(x4)]
    sum(o.float().sum() * (i + 1) + (o.float() ** 2).sum() for i, o in enumerate(outs)
        ).backward()
    res = [(_name(o.dtype), o.float().detach().numpy()) for o in outs]
    res.append((_name(bn.running_mean.dtype), bn.running_mean.numpy()))
    res.append((_name(bn.running_var.dtype), bn.running_var.numpy()))
    res += [(_name(t.grad.dtype), t.grad.float().numpy()) for t in (x4, x2)]
    res += [(_name(m.weight.grad.dtype), m.weight.grad.numpy()) for m in (bn, gn, ln, inorm)]
    return res


@pytest.mark.parametrize("fast", ["bfloat16", "float16"])
def test_mixed_type_norms_match_torch(fast: str) -> None:
    g, t = (_mixed_norms(lib, fast) for lib in LIBS)
    for (gd, gv), (td, tv) in zip(g, t):
        assert gd == td
        # computed in float32 from the rounded input, rounded once: within one step of the
        # fast dtype (gradients: sums over the batch in another order)
        np.testing.assert_allclose(gv, tv, rtol=2 ** -7, atol=2 ** -6)
