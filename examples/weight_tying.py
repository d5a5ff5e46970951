"""Weight tying: one matrix is both the input embedding and the output projection.

A tiny language model looks tokens up in an embedding matrix ``E`` and scores the next token
with the same ``E`` (``logits = h @ E.T``). Gradient reaches ``E`` along two paths, and the
multivariable chain rule says its gradient is the sum of both. One ``backward()`` sums them
inside the graph; two backwards (one per path) sum them in ``.grad``. The toolkit's
:class:`~gradsum.toolkit.Ledger` shows what ``E.grad`` is made of.

Run: ``python examples/weight_tying.py``
"""

from __future__ import annotations

from typing import Any

import gradsum
import gradsum.nn.functional as F
from gradsum import nn
from gradsum.toolkit import Ledger


class TiedLM(nn.Module):
    """Embedding -> tanh(Linear) -> logits through the embedding matrix again."""

    def __init__(self, vocab: int, dim: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.hidden = nn.Linear(dim, dim)

    def forward(self, tokens: gradsum.Tensor, w_in: Any = None, w_out: Any = None
                ) -> gradsum.Tensor:
        # w_in / w_out replace the tied matrix on one path (to look at the paths one by one)
        w_in = self.embed.weight if w_in is None else w_in
        w_out = self.embed.weight if w_out is None else w_out
        h = gradsum.tanh(self.hidden(F.embedding(tokens, w_in)))
        return F.linear(h, w_out)  # (batch, seq, vocab): scores through the same matrix


def setup(small: bool = False) -> dict[str, Any]:
    """The model's initial weights and a batch of token sequences (deterministic)."""
    vocab, dim, batch, seq = (12, 8, 3, 5) if small else (50, 32, 16, 24)
    gradsum.manual_seed(0)
    model = TiedLM(vocab, dim)
    tokens = gradsum.randint(0, vocab, (batch, seq + 1))
    return {"model": model, "inputs": tokens[:, :-1], "targets": tokens[:, 1:]}


def lm_loss(logits: gradsum.Tensor, targets: gradsum.Tensor) -> gradsum.Tensor:
    """Mean next-token cross-entropy."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def main(small: bool = False) -> dict[str, Any]:
    """Show that the tied matrix's ``.grad`` is the sum of both paths; return the numbers."""
    s = setup(small)
    model, x, y = s["model"], s["inputs"], s["targets"]
    E = model.embed.weight

    # one backward: both paths summed inside the graph
    loss = lm_loss(model(x), y)
    loss.backward()
    tied = E.grad.clone()
    print(f"loss {loss.item():.4f}; one backward: |E.grad| = {tied.norm().item():.6f}")

    # the two paths one at a time: the other use of E is detached (a constant)
    model.zero_grad()
    with Ledger({"E": E}, store_values=True) as ledger:
        with ledger.label("input path"):
            lm_loss(model(x, w_out=E.detach()), y).backward()
        with ledger.label("output path"):
            lm_loss(model(x, w_in=E.detach()), y).backward()
        explanation = ledger.explain(E)
    print(explanation)
    parts = explanation.contributions
    diff = (E.grad - tied).abs().max().item()
    print(f"input path |g| = {parts[0].norm:.6f}, output path |g| = {parts[1].norm:.6f}")
    print(f"sum of the two paths vs one backward: max abs difference {diff:.2e}")
    return {
        "loss": loss.item(),
        "grad": tied.tolist(),
        "grad_norm": tied.norm().item(),
        "input_path_norm": parts[0].norm,
        "output_path_norm": parts[1].norm,
        "contributions": len(parts),
        "paths_vs_tied_max_abs_diff": diff,
        "ledger_max_abs_error": explanation.max_abs_error,
    }


if __name__ == "__main__":
    main()
