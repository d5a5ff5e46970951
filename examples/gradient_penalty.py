"""A gradient penalty (WGAN-GP) inside an ordinary training step, without contaminating .grad.

The penalty needs the gradient of the critic's output with respect to its *input*, and then
the gradient of that penalty with respect to the critic's *weights*: a gradient of a
gradient. ``autograd.grad(..., create_graph=True)`` returns the inner gradient as a tensor
with a graph and accumulates into nothing, so the only thing in ``.grad`` when the optimizer
steps is the gradient of the total loss. Computing the inner gradient with
``backward(create_graph=True)`` instead would leave it in the weights' ``.grad`` (and a graph
with it): the optimizer would apply a gradient that is not the loss's.

Run: ``python examples/gradient_penalty.py``
"""

from __future__ import annotations

from typing import Any

import gradsum
from gradsum import nn, optim


def setup(small: bool = False) -> dict[str, Any]:
    """A critic, real and generated samples, interpolation weights (deterministic)."""
    n, d, h = (4, 3, 5) if small else (64, 8, 32)
    gradsum.manual_seed(4)
    critic = nn.Sequential(nn.Linear(d, h), nn.Tanh(), nn.Linear(h, 1))
    real = gradsum.randn(n, d) + 1.0
    fake = gradsum.randn(n, d)
    eps = gradsum.rand(n, 1)
    return {"critic": critic, "real": real, "fake": fake, "eps": eps, "lam": 10.0, "lr": 0.05}


def critic_loss(critic: nn.Module, real: gradsum.Tensor, fake: gradsum.Tensor,
                eps: gradsum.Tensor, lam: float) -> tuple[gradsum.Tensor, gradsum.Tensor]:
    """Wasserstein critic loss plus ``lam * (|grad_x critic(x_hat)| - 1)^2``."""
    x_hat = (eps * real + (1 - eps) * fake).requires_grad_()
    (g,) = gradsum.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    penalty = ((g.norm(2, dim=1) - 1) ** 2).mean()
    loss = critic(fake).mean() - critic(real).mean() + lam * penalty
    return loss, penalty


def main(small: bool = False) -> dict[str, Any]:
    """One critic step with a gradient penalty; check what ``.grad`` holds."""
    s = setup(small)
    critic = s["critic"]
    params = list(critic.parameters())
    opt = optim.SGD(params, lr=s["lr"])

    loss, penalty = critic_loss(critic, s["real"], s["fake"], s["eps"], s["lam"])
    untouched = all(p.grad is None for p in params)  # autograd.grad wrote no .grad
    print(f"after autograd.grad(create_graph=True): every .grad is None: {untouched}")
    expected = gradsum.autograd.grad(loss, params, retain_graph=True)
    loss.backward()
    diff = max((p.grad - e).abs().max().item() for p, e in zip(params, expected))
    graph_free = all(p.grad.grad_fn is None and not p.grad.requires_grad for p in params)
    print(f"loss {loss.item():.4f} (penalty {penalty.item():.4f}); .grad == d loss / d weights:"
          f" max abs difference {diff:.2e}; .grad carries no graph: {graph_free}")
    grads = [p.grad.tolist() for p in params]
    opt.step()
    opt.zero_grad()

    # the contaminated version: the inner gradient through backward(create_graph=True)
    s2 = setup(small)
    critic2 = s2["critic"]
    x_hat = (s2["eps"] * s2["real"] + (1 - s2["eps"]) * s2["fake"]).requires_grad_()
    critic2(x_hat).sum().backward(create_graph=True)
    leaked = [p.grad for p in critic2.parameters()]
    contaminated = sum(g is not None for g in leaked)
    with_graph = sum(g is not None and g.requires_grad for g in leaked)
    print(f"with backward(create_graph=True) for the inner gradient instead: {contaminated} of "
          f"{len(leaked)} weights get a .grad that is not the loss's gradient "
          f"({with_graph} of them carrying a graph)")
    return {
        "loss": loss.item(),
        "penalty": penalty.item(),
        "grad_none_after_autograd_grad": untouched,
        "max_abs_diff": diff,
        "grad_graph_free": graph_free,
        "grads": grads,
        "params_after_step": [p.tolist() for p in params],
        "contaminated_params": contaminated,
        "contaminated_with_graph": with_graph,
    }


if __name__ == "__main__":
    main()
