"""Side by side with torch: gradsum.utils.checkpoint (checkpoint, both variants, and
checkpoint_sequential): same gradients as without checkpointing, RNG state replayed for the
recomputation, torch 2.13's warnings and errors, and the activations not kept."""

from __future__ import annotations

import gc
import tracemalloc
import warnings
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the side-by-side tests compare with torch")

import gradsum  # noqa: E402
from gradsum.utils.checkpoint import checkpoint, checkpoint_sequential  # noqa: E402


def _ckpt(lib: Any) -> Any:
    return (checkpoint if lib is gradsum else torch.utils.checkpoint.checkpoint)


def _seq(lib: Any) -> Any:
    return (checkpoint_sequential if lib is gradsum
            else torch.utils.checkpoint.checkpoint_sequential)


W = np.random.default_rng(0).standard_normal((4, 4))


def _block(lib: Any, w: Any) -> Any:
    def f(x: Any, scale: Any = 1.0) -> Any:
        return ((x @ w).tanh() * x).sin() * scale

    return f


@pytest.mark.parametrize("reentrant", [True, False])
def test_same_gradients_as_plain_and_torch(reentrant: bool) -> None:
    res = {}
    for lib in (gradsum, torch):
        w = lib.tensor(W, requires_grad=True)
        x = lib.tensor(W[:2] * 0.5, requires_grad=True)
        y = _ckpt(lib)(_block(lib, w), x, use_reentrant=reentrant)
        (y ** 2).sum().backward()
        res[lib.__name__] = (y.detach().numpy(), w.grad.numpy(), x.grad.numpy())
        w2 = lib.tensor(W, requires_grad=True)
        x2 = lib.tensor(W[:2] * 0.5, requires_grad=True)
        (_block(lib, w2)(x2) ** 2).sum().backward()
        np.testing.assert_allclose(w.grad.numpy(), w2.grad.numpy(), rtol=1e-12)
        np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-12)
    for a, b in zip(res["gradsum"], res["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-10)


def test_non_reentrant_kwargs_and_autograd_grad() -> None:
    res = {}
    for lib in (gradsum, torch):
        w = lib.tensor(W, requires_grad=True)
        x = lib.tensor(W[:2], requires_grad=True)
        y = _ckpt(lib)(_block(lib, w), x, scale=lib.tensor(2.0, dtype=lib.float64),
                       use_reentrant=False)
        gw, gx = lib.autograd.grad(y.sum(), (w, x), retain_graph=True)
        gw2, = lib.autograd.grad(y.sum(), w)  # (a second backward recomputes again)
        res[lib.__name__] = (gw.numpy(), gx.numpy(), gw2.numpy(), w.grad is None)
    for a, b in zip(res["gradsum"], res["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-10)


def test_rng_state_replayed_for_dropout() -> None:
    for reentrant in (True, False):
        gradsum.manual_seed(3)
        w = gradsum.tensor(W, requires_grad=True)
        x = gradsum.tensor(W, requires_grad=True)

        def f(t: Any, w: Any = w) -> Any:
            return gradsum.nn.functional.dropout(t @ w, p=0.5, training=True) * t

        y = checkpoint(f, x, use_reentrant=reentrant)
        after = gradsum.rand(1).item()
        y.sum().backward()
        gradsum.manual_seed(3)
        w2 = gradsum.tensor(W, requires_grad=True)
        x2 = gradsum.tensor(W, requires_grad=True)
        f(x2, w2).sum().backward()
        assert gradsum.rand(1).item() == after  # (backward left the RNG where it was)
        np.testing.assert_array_equal(w.grad.numpy(), w2.grad.numpy())
        np.testing.assert_array_equal(x.grad.numpy(), x2.grad.numpy())


def test_use_reentrant_not_passed_warns_and_defaults_true() -> None:
    def prog(lib: Any) -> Any:
        x = lib.ones(2, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = _ckpt(lib)(lambda t: t * 2, x)
            z = _seq(lib)([lambda t: t * 2, lambda t: t + 1], 2, x)
        msgs = [(m.category.__name__, str(m.message)) for m in w]
        return msgs, type(y.grad_fn).__name__.endswith("CheckpointFunctionBackward"), z.shape

    a, b = prog(gradsum), prog(torch)
    assert a[0] == b[0] and a[1] and b[1]


def test_errors_like_torch() -> None:
    def run(lib: Any, case: str) -> Any:
        x = lib.ones(2, requires_grad=True)
        try:
            if case == "kwargs":
                _ckpt(lib)(lambda t, k=1: t * k, x, k=2, use_reentrant=True)
            elif case == "context_fn":
                _ckpt(lib)(lambda t: t, x, use_reentrant=True, debug=True)
            elif case == "determinism":
                _ckpt(lib)(lambda t: t * 2, x, use_reentrant=False, determinism_check="x")
            elif case == "grad_reentrant":
                y = _ckpt(lib)(lambda t: t * 2, x, use_reentrant=True)
                lib.autograd.grad(y.sum(), x)
            elif case == "inputs_reentrant":
                y = _ckpt(lib)(lambda t: t * 2, x, use_reentrant=True)
                y.sum().backward(inputs=[x])
            elif case == "segments":
                _seq(lib)([lambda t: t] * 3, 5, x, use_reentrant=False)
            elif case == "twice":
                y = _ckpt(lib)(lambda t: t.exp(), x, use_reentrant=False)
                y.sum().backward()
                y.sum().backward()
        except Exception as e:
            return type(e).__name__, str(e)[:30]
        return None

    for case in ("kwargs", "context_fn", "determinism", "grad_reentrant",
                 "inputs_reentrant", "segments", "twice"):
        a, b = run(gradsum, case), run(torch, case)
        assert a == b and a is not None, (case, a, b)


def test_checkpoint_sequential_matches() -> None:
    res = {}
    for lib in (gradsum, torch):
        lib.manual_seed(0)
        layers = [lib.nn.Linear(4, 4), lib.nn.Tanh(), lib.nn.Linear(4, 4), lib.nn.ReLU(),
                  lib.nn.Linear(4, 2)]
        with lib.no_grad():
            for i, m in enumerate(layers):
                if isinstance(m, lib.nn.Linear):
                    m.weight.copy_(lib.tensor(W[: m.weight.shape[0]] * (i + 1) / 4,
                                              dtype=lib.float32))
                    m.bias.fill_(0.1)
        model = lib.nn.Sequential(*layers)
        x = lib.tensor(W[:3].astype(np.float32), requires_grad=True)
        out = {}
        for reentrant in (True, False):
            model.zero_grad()
            x.grad = None
            y = _seq(lib)(model, 2, x, use_reentrant=reentrant)
            y.sum().backward()
            out[reentrant] = (y.detach().numpy(), x.grad.numpy(),
                              layers[0].weight.grad.numpy())
        res[lib.__name__] = out
    for r in (True, False):
        for a, b in zip(res["gradsum"][r], res["torch"][r]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _held_after_forward(use_ckpt: bool) -> int:
    """Bytes allocated by a 20-op forward and still held (by its graph) afterwards."""
    x = gradsum.randn(256, 256, requires_grad=True)

    def f(t: Any) -> Any:
        for _ in range(20):
            t = (t * 1.01).sin()
        return t

    gc.collect()
    tracemalloc.start()
    try:
        y = checkpoint(f, x, use_reentrant=False) if use_ckpt else f(x)
        gc.collect()
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del y
    return held


def test_activations_not_kept() -> None:
    plain = _held_after_forward(False)
    ckpt = _held_after_forward(True)
    one = 256 * 256 * 4
    assert plain > 15 * one  # (each sin saves its input)
    assert ckpt < 3 * one  # (only the output, plus small holders)


def test_saved_holders_released_after_backward() -> None:
    x = gradsum.randn(8, requires_grad=True)
    y = checkpoint(lambda t: t.sin().exp(), x, use_reentrant=False)
    node = y.grad_fn
    assert node._saved and type(node._saved[0]).__name__ == "PackedSavedTensor"
    y.sum().backward()
    assert node._saved is None
