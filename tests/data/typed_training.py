"""A torch-style training script, fully annotated, that type checkers must accept as it is.

``tests/test_typecheck.py`` runs mypy (and pyright, where installed) on this file and expects
no errors: it uses Tensor methods, properties and operators the way ported PyTorch code does,
most of which gradsum binds on ``Tensor`` at import time (the checkers see them through the
generated ``gradsum/_tensor.pyi``). The test also runs it, so it stays real code: a small
classifier trained for a few steps on random data, with the loss going down.
"""

from __future__ import annotations

import math

import gradsum
import gradsum.nn.functional as F
from gradsum import Tensor, nn, optim
from gradsum.optim.lr_scheduler import StepLR
from gradsum.utils.data import DataLoader, TensorDataset


class Classifier(nn.Module):
    def __init__(self, features: int, hidden: int, classes: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.fc2 = nn.Linear(hidden, classes)
        self.scale = nn.Parameter(gradsum.ones(hidden))

    def forward(self, x: Tensor) -> Tensor:
        h: Tensor = self.fc1(x)
        h = h.relu() * self.scale + 0.1 * h.tanh()
        h = h.view(h.shape[0], -1).reshape(-1, h.size(1)).contiguous()
        out: Tensor = self.fc2(h)
        return out


def attention_scores(q: Tensor, k: Tensor) -> Tensor:
    """Scaled dot products through views, permutes and a matmul."""
    b, n, d = q.shape
    qh = q.unsqueeze(1).transpose(1, 2)  # (b, n, 1, d)
    kh = k.unsqueeze(1).permute(0, 2, 3, 1)  # (b, n, d, 1)
    scores = (qh @ kh).squeeze(-1).squeeze(-1) / math.sqrt(d)
    return scores.softmax(dim=-1).flatten().view(b, n)


def statistics(x: Tensor) -> dict[str, float]:
    """Reductions, elementwise math and comparisons, each turned into a Python number."""
    centred = x - x.mean(dim=0, keepdim=True)
    stats = {
        "sum": x.sum().item(),
        "std": x.std().item(),
        "var": x.var(dim=0).mean().item(),
        "max": x.amax().item(),
        "min": x.amin().item(),
        "norm": x.norm().item(),
        "abs": x.abs().sum().item(),
        "exp": x.clamp(-3, 3).exp().log().sum().item(),
        "sqrt": (x * x + 1).sqrt().rsqrt().sum().item(),
        "pow": x.pow(2).sum().item() + (x**3).abs().mean().item(),
        "sigmoid": x.sigmoid().prod().item(),
        "cumsum": x.cumsum(dim=0)[-1].sum().item(),
        "frac_pos": (x > 0).float().mean().item(),
        "neg": (-x).neg().sum().item(),
        "centred": centred.square().mean().item(),
        "rounded": x.round().floor().ceil().sign().sum().item(),
        "log_softmax": x.log_softmax(dim=-1).logsumexp(dim=-1).sum().item(),
    }
    mask = (x >= 0) & (x <= 1) | (x == 2)
    stats["masked"] = x.masked_fill(~mask, 0.0).sum().item()
    stats["where"] = x.where(x != 0, 1.0).sum().item()
    stats["any_all"] = float((x < -10).any().item()) + float((x > -10).all().item())
    return stats


def train(steps: int = 5, seed: int = 0) -> list[float]:
    """Trains the classifier for a few steps; returns the loss of each step."""
    gradsum.manual_seed(seed)
    features, hidden, classes, batch = 8, 16, 4, 32
    model = Classifier(features, hidden, classes)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = gradsum.randn(batch, features)
    y = gradsum.randint(0, classes, (batch,))
    losses: list[float] = []
    for _ in range(steps):
        opt.zero_grad()
        logits: Tensor = model(x)
        loss = F.cross_entropy(logits, y) + 1e-4 * sum(
            (p**2).sum() for p in model.parameters())
        loss.backward()
        opt.step()
        losses.append(loss.detach().item())

    # gradients, in-place updates and autograd state, as hand-written SGD code uses them
    logits = model(x)
    w = model.fc1.weight
    grad = w.grad
    assert grad is not None and grad.shape == w.shape and w.is_leaf and w.requires_grad
    with gradsum.no_grad():
        saved = w.clone()
        w.sub_(grad.mul(0.0)).add_(gradsum.zeros_like(w)).mul_(1.0).div_(1.0)
        w.copy_(saved)
        grad.zero_()
    assert w.grad_fn is None and (logits.grad_fn is not None)
    assert w.dtype == gradsum.float32 and str(w.device) == "cpu" and w.ndim == 2
    assert w.T.shape == (w.shape[1], w.shape[0]) and w.t().numel() == w.numel()
    assert w.data.dim() == 2 and w.detach().requires_grad_(False).is_leaf

    # indexing, selection and rearranging
    probs = logits.detach().softmax(dim=1)
    predicted = probs.argmax(dim=1)
    accuracy = (predicted == y).long().sum().item() / len(y)
    top = probs.topk(2, dim=1)
    first, second = probs.chunk(2, dim=0)
    assert first.shape[0] + second.shape[0] == batch and 0.0 <= accuracy <= 1.0
    assert top[0].shape == (batch, 2)
    rows = probs[0], probs[1:3], probs[:, 0], probs[probs > 0.5]
    picked = probs.gather(1, y.unsqueeze(1)).squeeze(1)
    selected = probs.index_select(0, gradsum.arange(4))
    tiled = picked.expand(2, batch).repeat(2, 1).type_as(probs).to(gradsum.float64)
    assert rows[0].shape == (classes,) and selected.shape == (4, classes)
    assert tiled.shape == (4, batch) and tiled.dtype == gradsum.float64
    parts = [probs.split(8, dim=0)[0], probs.narrow(0, 8, 8)]
    joined = gradsum.cat(parts, dim=0)
    assert joined.tolist()[0] == probs[0].tolist() and joined.numpy().shape == (16, classes)
    ordered = probs.sort(dim=1, descending=True)[0]
    assert bool((ordered[:, 0] >= ordered[:, 1]).all())

    # operators with Python numbers on either side, and the reflected forms
    z = 2 * probs - 1 + probs / 2 - 3 / (probs + 1) + 1 - probs
    z = z @ z.T + (probs @ probs.mT).max() - z.min()
    z = z.matmul(z).mm(z).add(z, alpha=2).sub(z).mul(z).div(z + 10)
    z = z.maximum(z.clone().fill_(0.0)).minimum(gradsum.ones_like(z))
    assert isinstance(z.sum(dim=(0, 1)).item(), float)

    scores = attention_scores(gradsum.randn(2, 3, 4), gradsum.randn(2, 3, 4))
    stats = statistics(gradsum.randn(5, 3))
    assert scores.shape == (2, 3) and len(stats) > 10
    return losses


@gradsum.no_grad()
def evaluate(model: nn.Module, x: Tensor) -> float:
    out: Tensor = model(x)
    return float(out.mean())


def fit(epochs: int = 2, seed: int = 0) -> float:
    """The other common loop: Sequential, Adam, a scheduler, a DataLoader, clipping, and a
    state_dict round trip; returns the evaluation of the trained model."""
    gradsum.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.1), nn.Linear(8, 2))
    opt = optim.Adam(model.parameters(), lr=1e-3, weight_decay=0.0)
    sched = StepLR(opt, step_size=1, gamma=0.5)
    data = TensorDataset(gradsum.randn(16, 4), gradsum.randint(0, 2, (16,)))
    loader: DataLoader[tuple[Tensor, ...]] = DataLoader(data, batch_size=4, shuffle=True)
    model.train()
    for _ in range(epochs):
        for xb, yb in loader:
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        sched.step()
    model.eval()
    model.load_state_dict(model.state_dict())
    assert sum(p.numel() for p in model.parameters()) == 4 * 8 + 8 + 8 * 2 + 2
    return evaluate(model, gradsum.stack([gradsum.tensor([1.0, 2.0, 3.0, 4.0])] * 2))


if __name__ == "__main__":
    print(train(), fit())
