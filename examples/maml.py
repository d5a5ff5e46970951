"""Meta-learning (MAML) with ``create_graph=True``, and strict mode catching the graph leak.

MAML adapts the weights to each task with a gradient step (the inner loop) and trains the
initial weights so that the *adapted* weights do well: the meta-gradient differentiates
through the inner gradient step, so the inner gradients are taken with
``autograd.grad(..., create_graph=True)``: tensors with a graph, kept out of ``.grad``.

The classic mistake keeps the inner gradients in ``.grad`` (``loss.backward(create_graph=
True)`` then ``w - alpha * w.grad``): ``.grad`` then carries a graph into the optimizer step,
holding the whole inner loop's memory alive, and the update applies the inner gradient too.
Strict mode (:func:`gradsum.toolkit.strict`) stops that step with a ``GradGraphError``.

Run: ``python examples/maml.py``
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import gradsum
import gradsum.nn.functional as F
from gradsum import optim
from gradsum.toolkit import GradGraphError, strict

Params = list[gradsum.Tensor]


def setup(small: bool = False) -> dict[str, Any]:
    """Initial weights of a 1-h-1 MLP and the sine-regression tasks of every meta-step."""
    steps, tasks, shots, h = (3, 2, 5, 8) if small else (60, 4, 10, 40)
    g = gradsum.Generator().manual_seed(5)
    params = [
        (gradsum.randn(h, 1, generator=g) * 1.0).requires_grad_(),
        gradsum.zeros(h, requires_grad=True),
        (gradsum.randn(1, h, generator=g) / math.sqrt(h)).requires_grad_(),
        gradsum.zeros(1, requires_grad=True),
    ]
    batches = []
    for _ in range(steps):
        batch = []
        for _ in range(tasks):
            amp = gradsum.rand(1, generator=g) * 4.9 + 0.1
            phase = gradsum.rand(1, generator=g) * math.pi
            xs = gradsum.rand(2 * shots, 1, generator=g) * 10 - 5
            ys = amp * gradsum.sin(xs + phase)
            batch.append((xs[:shots], ys[:shots], xs[shots:], ys[shots:]))
        batches.append(batch)
    return {"params": params, "batches": batches, "inner_lr": 0.01, "meta_lr": 0.01}


def forward(params: Params, x: gradsum.Tensor) -> gradsum.Tensor:
    w1, b1, w2, b2 = params
    return F.linear(gradsum.relu(F.linear(x, w1, b1)), w2, b2)


def adapt(params: Params, x: gradsum.Tensor, y: gradsum.Tensor, lr: float) -> Params:
    """One inner gradient step; differentiable (``create_graph=True``), ``.grad`` untouched."""
    grads = gradsum.autograd.grad(F.mse_loss(forward(params, x), y), params, create_graph=True)
    return [p - lr * g for p, g in zip(params, grads)]


def meta_train(s: dict[str, Any]) -> tuple[list[float], list[str]]:
    """MAML's outer loop, in strict mode; returns the meta-loss of every step and strict
    mode's warnings (none expected)."""
    params = s["params"]
    opt = optim.Adam(params, lr=s["meta_lr"])
    names = {"w1": params[0], "b1": params[1], "w2": params[2], "b2": params[3]}
    losses = []
    with warnings.catch_warnings(record=True) as caught, strict(opt, params=names):
        warnings.simplefilter("always")
        for batch in s["batches"]:
            meta_loss = gradsum.zeros(())
            for xs, ys, xq, yq in batch:
                fast = adapt(params, xs, ys, s["inner_lr"])
                meta_loss = meta_loss + F.mse_loss(forward(fast, xq), yq)
            meta_loss = meta_loss / len(batch)
            meta_loss.backward()
            opt.step()
            opt.zero_grad()
            losses.append(meta_loss.item())
    return losses, [str(w.message) for w in caught]


def leaky_step(s: dict[str, Any]) -> str:
    """The mistake: inner gradients kept in ``.grad``. Returns strict mode's message."""
    params = s["params"]
    opt = optim.Adam(params, lr=s["meta_lr"])
    xs, ys, xq, yq = s["batches"][0][0]
    with strict(opt, params={"w1": params[0], "b1": params[1], "w2": params[2],
                             "b2": params[3]}):
        F.mse_loss(forward(params, xs), ys).backward(create_graph=True)
        fast = [p - s["inner_lr"] * p.grad for p in params]
        F.mse_loss(forward(fast, xq), yq).backward()
        try:
            opt.step()
        except GradGraphError as e:
            return str(e)
        finally:
            opt.zero_grad()
    return ""


def main(small: bool = False) -> dict[str, Any]:
    """Meta-train in strict mode, then show strict mode catching the leaky variant."""
    s = setup(small)
    losses, flagged = meta_train(s)
    print(f"meta-loss: first step {losses[0]:.4f}, last step {losses[-1]:.4f} "
          f"({len(losses)} steps; strict mode warnings: {len(flagged)})")
    message = leaky_step(setup(small))
    print("inner gradients kept in .grad, strict mode says:")
    print(f"  GradGraphError: {message}")
    return {
        "meta_losses": losses,
        "params": [p.tolist() for p in s["params"]],
        "graph_error": message,
        "strict_warnings": flagged,
    }


if __name__ == "__main__":
    main()
