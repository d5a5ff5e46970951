"""Multi-task heads whose losses arrive at different points of the training step.

A shared trunk feeds a classification head and a regression head. The classification loss
is back-propagated as soon as it is known; the regression loss only later in the step (its
targets come from elsewhere, a slower pipeline, another device...). Because ``backward()``
adds into ``.grad``, the trunk ends up with the sum of both tasks' gradients, exactly as if
the summed loss had been back-propagated once; each head gets only its own task's gradient.
The :class:`~gradsum.toolkit.Ledger` shows who contributed what.

Run: ``python examples/multi_task.py``
"""

from __future__ import annotations

from typing import Any

import gradsum
import gradsum.nn.functional as F
from gradsum import nn, optim
from gradsum.toolkit import Ledger


class MultiTask(nn.Module):
    """Shared trunk, one classification head and one regression head."""

    def __init__(self, d: int, h: int, classes: int) -> None:
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(d, h), nn.ReLU())
        self.classify = nn.Linear(h, classes)
        self.regress = nn.Linear(h, 1)


def setup(small: bool = False) -> dict[str, Any]:
    """Model, inputs and both tasks' targets (deterministic)."""
    n, d, h = (5, 4, 6) if small else (64, 20, 32)
    gradsum.manual_seed(3)
    model = MultiTask(d, h, 3)
    x = gradsum.randn(n, d)
    labels = gradsum.randint(0, 3, (n,))
    values = gradsum.randn(n, 1)
    return {"model": model, "x": x, "labels": labels, "values": values, "lr": 0.1}


def step(model: MultiTask, opt: optim.Optimizer, x: gradsum.Tensor, labels: gradsum.Tensor,
         values: gradsum.Tensor, ledger: Ledger | None = None) -> tuple[float, float]:
    """One training step with the two losses back-propagated at different moments."""
    features = model.trunk(x)
    loss_cls = F.cross_entropy(model.classify(features), labels)
    if ledger is not None:
        ledger.next_label("classify")
    loss_cls.backward(retain_graph=True)  # the trunk's graph is used again by the second task
    # ... later in the step, the regression targets are available
    loss_reg = F.mse_loss(model.regress(features), values)
    if ledger is not None:
        ledger.next_label("regress")
    loss_reg.backward()
    opt.step()
    opt.zero_grad()
    return loss_cls.item(), loss_reg.item()


def main(small: bool = False) -> dict[str, Any]:
    """Show the gradients of staggered backwards equal those of the summed loss."""
    s = setup(small)
    model, x, labels, values = s["model"], s["x"], s["labels"], s["values"]

    # reference: one backward of the summed loss (no step)
    features = model.trunk(x)
    total = (F.cross_entropy(model.classify(features), labels)
             + F.mse_loss(model.regress(features), values))
    reference = gradsum.autograd.grad(total, list(model.parameters()))

    # the real step, with a ledger; look at .grad just before the optimizer uses it
    opt = optim.SGD(model.parameters(), lr=s["lr"])
    ledger = Ledger(model)
    seen: dict[str, Any] = {}

    def snapshot(*_: Any) -> None:
        seen["grads"] = [p.grad.clone() for p in model.parameters()]
        seen["counts"] = {name: [c.call.label for c in ledger.contributions(name)]
                          for name in ledger.names()}

    opt.register_step_pre_hook(snapshot)
    with ledger:
        loss_cls, loss_reg = step(model, opt, x, labels, values, ledger)
    counts = seen["counts"]
    diff = max((g - r).abs().max().item() for g, r in zip(seen["grads"], reference))
    print(f"classification loss {loss_cls:.4f}, regression loss {loss_reg:.4f}")
    print(".grad just before optimizer.step(), as the sum of these backward calls:")
    for name, labels_ in counts.items():
        print(f"  {name:<16} {' + '.join(labels_)}")
    print(f"staggered backwards vs one backward of the sum: max abs difference {diff:.2e}")
    return {
        "loss_cls": loss_cls,
        "loss_reg": loss_reg,
        "contributions": counts,
        "max_abs_diff": diff,
        "params_after_step": [p.tolist() for p in model.parameters()],
    }


if __name__ == "__main__":
    main()
