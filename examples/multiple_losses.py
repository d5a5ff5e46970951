"""Several loss terms: back-propagated one by one, or summed first. Same gradients.

``loss_a.backward(retain_graph=True); loss_b.backward()`` leaves the same ``.grad`` as
``(loss_a + loss_b).backward()``, because backward adds into ``.grad``. ``retain_graph=True``
is needed only because both terms share part of the graph (the trunk), whose saved tensors
the first backward would otherwise free; it has nothing to do with accumulation.

Run: ``python examples/multiple_losses.py``
"""

from __future__ import annotations

from typing import Any

import gradsum
import gradsum.nn.functional as F
from gradsum import nn


def setup(small: bool = False) -> dict[str, Any]:
    """A two-layer model, its inputs and two kinds of targets (deterministic)."""
    n, d, h = (6, 4, 5) if small else (64, 16, 32)
    gradsum.manual_seed(1)
    model = nn.Sequential(nn.Linear(d, h), nn.Tanh(), nn.Linear(h, 3))
    x = gradsum.randn(n, d)
    labels = gradsum.randint(0, 3, (n,))
    return {"model": model, "x": x, "labels": labels}


def losses(model: nn.Module, x: gradsum.Tensor, labels: gradsum.Tensor
           ) -> tuple[gradsum.Tensor, gradsum.Tensor]:
    """A classification loss and an activity penalty on the hidden layer (shared trunk)."""
    hidden = model[1](model[0](x))
    logits = model[2](hidden)
    return F.cross_entropy(logits, labels), 0.1 * hidden.pow(2).mean()


def grads(model: nn.Module) -> list[gradsum.Tensor]:
    return [p.grad.clone() for p in model.parameters()]


def main(small: bool = False) -> dict[str, Any]:
    """Compare separate backwards with one backward of the sum; return the numbers."""
    s = setup(small)
    model, x, labels = s["model"], s["x"], s["labels"]

    loss_a, loss_b = losses(model, x, labels)
    (loss_a + loss_b).backward()
    summed = grads(model)

    model.zero_grad()
    loss_a, loss_b = losses(model, x, labels)
    loss_a.backward(retain_graph=True)  # the trunk's graph is needed again by loss_b
    loss_b.backward()
    separate = grads(model)
    diff = max((a - b).abs().max().item() for a, b in zip(summed, separate))
    print(f"loss_a {loss_a.item():.4f}, loss_b {loss_b.item():.4f}")
    print(f"separate backwards vs one backward of the sum: max abs difference {diff:.2e}")

    # without retain_graph the second backward meets the freed trunk
    model.zero_grad()
    loss_a, loss_b = losses(model, x, labels)
    loss_a.backward()
    try:
        loss_b.backward()
        error = ""
    except RuntimeError as e:
        error = str(e).splitlines()[0]
    print(f"without retain_graph=True: RuntimeError: {error}")
    return {
        "loss_a": loss_a.item(),
        "loss_b": loss_b.item(),
        "grads": [g.tolist() for g in separate],
        "max_abs_diff": diff,
        "error_without_retain_graph": error,
    }


if __name__ == "__main__":
    main()
