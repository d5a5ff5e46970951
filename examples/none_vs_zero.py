"""``None`` is not zero: what optimizers do with a skipped parameter and a zero gradient.

Two parameters get the same real gradient at step 1. From step 2 on neither gets any
gradient, but ``a.grad`` is ``None`` (what ``zero_grad()`` leaves, the default
``set_to_none=True``) while ``b.grad`` holds exact zeros (what ``zero_grad(set_to_none=False)``
or ``p.grad.zero_()`` leaves). An optimizer skips ``a`` entirely; ``b`` keeps moving: SGD's
momentum buffer still pushes it, AdamW's moment estimates and weight decay still act.

Run: ``python examples/none_vs_zero.py``
"""

from __future__ import annotations

from typing import Any

import gradsum
from gradsum import optim


def setup(small: bool = False) -> dict[str, Any]:
    """Initial values, the step-1 gradient and the optimizers to compare."""
    return {
        "init": 1.0,
        "grad": 0.5,
        "steps": 3 if small else 5,
        "optimizers": {
            "SGD(momentum=0.9)": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
            "AdamW(weight_decay=0.1)": lambda ps: optim.AdamW(ps, lr=0.1, weight_decay=0.1),
        },
    }


def trajectories(make_opt: Any, init: float, grad: float, steps: int
                 ) -> dict[str, list[float]]:
    """Values of ``a`` (grad ``None`` after step 1) and ``b`` (grad zero) after each step."""
    a = gradsum.tensor([init], requires_grad=True)
    b = gradsum.tensor([init], requires_grad=True)
    opt = make_opt([a, b])
    out: dict[str, list[float]] = {"a (None)": [a.item()], "b (zero)": [b.item()]}
    for step in range(1, steps + 1):
        if step == 1:
            (a * grad + b * grad).sum().backward()  # the same real gradient for both
        else:
            a.grad = None                  # skipped: no update, no state change
            b.grad = gradsum.zeros_like(b)  # a real (zero) gradient
        opt.step()
        out["a (None)"].append(a.item())
        out["b (zero)"].append(b.item())
    return out


def main(small: bool = False) -> dict[str, Any]:
    """Print how ``a`` and ``b`` move under each optimizer; return the trajectories."""
    s = setup(small)
    result: dict[str, Any] = {}
    for name, make_opt in s["optimizers"].items():
        traj = trajectories(make_opt, s["init"], s["grad"], s["steps"])
        result[name] = traj
        print(f"{name}: value before and after each step (only step 1 has a gradient)")
        for who, values in traj.items():
            cells = "  ".join(f"{v:+.4f}" for v in values)
            print(f"  {who:<9} {cells}")
        moved = traj["b (zero)"][-1] - traj["b (zero)"][1]
        still = traj["a (None)"][-1] - traj["a (None)"][1]
        print(f"  after step 1: a moved {still:+.4f}, b moved {moved:+.4f}")
    return result


if __name__ == "__main__":
    main()
