"""Per-example gradient norms and an influence score, with ``autograd.grad``.

Which training examples push the model hardest, and which ones help (or hurt) a given test
prediction? One gradient per training example answers both: its norm, and its dot product
with the test example's gradient (a first-order influence score: a small SGD step on
training example ``i`` changes the test loss by about ``-lr * g_i . g_test``).
``autograd.grad`` returns each gradient without touching ``.grad``, so this can run in the
middle of training without disturbing the accumulator the optimizer reads.

Uses the handwritten digits shipped with gradsum (:func:`gradsum.datasets.load_digits`).

Run: ``python examples/per_example_grads.py``
"""

from __future__ import annotations

from typing import Any

import gradsum
import gradsum.nn.functional as F
from gradsum import nn, optim
from gradsum.datasets import load_digits


def setup(small: bool = False) -> dict[str, Any]:
    """A linear classifier briefly trained on a few digits, plus one test digit."""
    n_train = 12 if small else 200
    x, y = load_digits()
    gradsum.manual_seed(6)
    model = nn.Linear(64, 10)
    opt = optim.SGD(model.parameters(), lr=0.5)
    for _ in range(5):  # a few full-batch steps so that the gradients mean something
        F.cross_entropy(model(x[:n_train]), y[:n_train]).backward()
        opt.step()
        opt.zero_grad()
    return {"model": model, "x": x[:n_train], "y": y[:n_train],
            "x_test": x[-1:], "y_test": y[-1:]}


def flat_grad(model: nn.Module, x: gradsum.Tensor, y: gradsum.Tensor) -> gradsum.Tensor:
    """The gradient of the loss on ``(x, y)`` w.r.t. every parameter, as one vector."""
    grads = gradsum.autograd.grad(F.cross_entropy(model(x), y), list(model.parameters()))
    return gradsum.cat([g.reshape(-1) for g in grads])


def main(small: bool = False) -> dict[str, Any]:
    """Per-example gradient norms and influence on one test digit."""
    s = setup(small)
    model, x, y = s["model"], s["x"], s["y"]
    g_test = flat_grad(model, s["x_test"], s["y_test"])
    norms, influence = [], []
    for i in range(x.shape[0]):
        g = flat_grad(model, x[i:i + 1], y[i:i + 1])
        norms.append(g.norm().item())
        influence.append((g * g_test).sum().item())
    untouched = all(p.grad is None for p in model.parameters())
    loudest = max(range(len(norms)), key=norms.__getitem__)
    helpful = max(range(len(influence)), key=influence.__getitem__)
    harmful = min(range(len(influence)), key=influence.__getitem__)
    print(f"{len(norms)} per-example gradients; mean norm {sum(norms) / len(norms):.4f}")
    print(f"largest gradient norm: example {loudest} (digit {y[loudest].item()}), "
          f"{norms[loudest]:.4f}")
    print(f"test digit {s['y_test'].item()}: most helpful training example {helpful} "
          f"(digit {y[helpful].item()}, score {influence[helpful]:+.4f}), most harmful "
          f"{harmful} (digit {y[harmful].item()}, score {influence[harmful]:+.4f})")
    print(f"every .grad still None: {untouched}")
    return {"norms": norms, "influence": influence, "grad_untouched": untouched,
            "loudest": loudest, "most_helpful": helpful, "most_harmful": harmful,
            "params": [p.tolist() for p in model.parameters()]}


if __name__ == "__main__":
    main()
