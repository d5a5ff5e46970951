"""A batch too big for memory, split into micro-batches, with exact normalisation.

Accumulating over micro-batches gives the big batch's gradient only if every token is
weighted as in the big batch's mean. The usual recipe, each micro-batch's *mean* loss divided
by the number of micro-batches, is a mean of means: wrong as soon as micro-batches count
different numbers of tokens (padding excluded by ``ignore_index``, a short last batch). The
exact rule: sum each micro-batch's loss and divide by the token count of the whole window,
which :func:`gradsum.toolkit.micro_batches` computes up front.

Run: ``python examples/big_batch_split.py``
"""

from __future__ import annotations

from typing import Any

import gradsum
import gradsum.nn.functional as F
from gradsum import nn
from gradsum.toolkit import AccumulationMismatchError, check_accumulation, micro_batches

PAD = -100


class Tagger(nn.Module):
    """Per-token classifier: embedding -> tanh -> class scores."""

    def __init__(self, vocab: int, dim: int, classes: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, classes)

    def forward(self, tokens: gradsum.Tensor) -> gradsum.Tensor:
        return self.out(gradsum.tanh(self.embed(tokens)))  # (batch, seq, classes)


def loss_fn(scores: gradsum.Tensor, tags: gradsum.Tensor, reduction: str = "mean"
            ) -> gradsum.Tensor:
    """Cross-entropy over the real tokens (padding, tag ``PAD``, is ignored)."""
    return F.cross_entropy(scores.reshape(-1, scores.shape[-1]), tags.reshape(-1),
                           ignore_index=PAD, reduction=reduction)


def setup(small: bool = False) -> dict[str, Any]:
    """Padded sequences of very different lengths, their tags and a model (deterministic)."""
    n, seq, vocab, classes = (6, 7, 10, 4) if small else (48, 40, 100, 8)
    gradsum.manual_seed(2)
    model = Tagger(vocab, 16, classes)
    tokens = gradsum.randint(1, vocab, (n, seq))
    tags = gradsum.randint(0, classes, (n, seq))
    # long sequences first, then short ones: the micro-batches count very different tokens
    lengths = [seq - (seq - 1) * i // (n - 1) for i in range(n)]
    for i, length in enumerate(lengths):
        tokens[i, length:] = 0
        tags[i, length:] = PAD
    return {"model": model, "tokens": tokens, "tags": tags, "n_micro": 3}


def main(small: bool = False) -> dict[str, Any]:
    """Compare exact and naive accumulation with the full batch's gradient."""
    s = setup(small)
    model, x, y, k = s["model"], s["tokens"], s["tags"], s["n_micro"]
    params = list(model.parameters())

    # the reference: the whole batch at once (if it fitted in memory)
    full_loss = loss_fn(model(x), y)
    full = gradsum.autograd.grad(full_loss, params)

    # exact: summed loss per micro-batch, scaled by 1 / (real tokens in the whole batch)
    mbs = micro_batches(x, y, k, ignore_index=PAD)
    window = 0.0
    for mb, scale in mbs:
        loss = loss_fn(model(mb.x), mb.y, reduction="sum") * scale
        loss.backward()
        window += loss.item()
    exact = max((p.grad - f).abs().max().item() for p, f in zip(params, full))
    counts = [mb.count for mb, _ in mbs]
    print(f"{len(mbs)} micro-batches counting {counts} real tokens of {mbs[0][0].total}")
    print(f"full-batch loss {full_loss.item():.6f}, accumulated {window:.6f}")
    print(f"exact accumulation:  max abs difference to the full batch {exact:.2e}")

    # naive: the mean loss of each micro-batch divided by the number of micro-batches
    model.zero_grad()
    for mb, _ in mbs:
        (loss_fn(model(mb.x), mb.y) / k).backward()
    naive = max((p.grad - f).abs().max().item() for p, f in zip(params, full))
    print(f"naive mean of means: max abs difference to the full batch {naive:.2e}")
    model.zero_grad()

    # the toolkit's check, for a test suite: passes for the exact rule, fails for the naive one
    checked = check_accumulation(model, loss_fn, (x, y), k, ignore_index=PAD)

    def naive_loop(m: nn.Module, batch: Any, n: int) -> None:
        for mb, _ in micro_batches(batch[0], batch[1], n, ignore_index=PAD):
            (loss_fn(m(mb.x), mb.y) / n).backward()

    try:
        check_accumulation(model, loss_fn, (x, y), k, accumulate=naive_loop)
        caught = ""
    except AccumulationMismatchError as e:
        caught = " ".join(line.strip() for line in str(e).splitlines()[:2])
    print(f"check_accumulation, exact rule: max abs difference {checked:.2e}")
    print(f"check_accumulation, naive rule: AccumulationMismatchError: {caught} ...")
    return {
        "counts": counts,
        "full_loss": full_loss.item(),
        "accumulated_loss": window,
        "full_grads": [f.tolist() for f in full],
        "exact_max_abs_diff": exact,
        "naive_max_abs_diff": naive,
        "check_accumulation": checked,
        "naive_error": caught,
    }


if __name__ == "__main__":
    main()
