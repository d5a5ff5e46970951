"""DDP's direct (in-place) path for large gradients: mixed large/small parameters, pieces,
no_sync, set_to_none both ways, .grad identity, kept old .grad untouched, a large parameter
used on one rank only, the fallback for a .grad that is not a plain buffer of its own."""

import copy

from _worker import check, start

import gradsum
from gradsum import nn
from gradsum._backend import xp
from gradsum.nn.parallel import DistributedDataParallel as DDP
from gradsum.nn.parallel import _reducer

r, W = start()


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.big = nn.Linear(520, 512)  # weight 1.0 MiB: direct; bias small
        self.small = nn.Linear(512, 4)  # small: flat bucket
        self.side = nn.Linear(520, 520)  # weight 1.03 MiB, used only for some examples

    def forward(self, x, use_side: bool):
        h = self.big(x).tanh()
        if use_side:
            h = h + self.side(x)[:, :512]
        return self.small(h)


def loss_of(model, x, y, denom):
    use_side = bool(x.shape[0]) and float(x[0, 0]) > 0
    return ((model(x, use_side) - y) ** 2).sum() / denom


def same(m1, m2, what):
    for (n, p), (_, q) in zip(m1.named_parameters(), m2.named_parameters()):
        a, b = p.grad, q.grad
        check((a is None) == (b is None), f"{what}: {n} None mismatch")
        if a is not None:
            check(gradsum.allclose(a, b, rtol=1e-5, atol=1e-6),
                  f"{what}: {n} max diff {float((a - b).abs().max())}")


gradsum.manual_seed(3 + r)  # different init per rank: DDP broadcasts rank 0's
for piece, as_view in [(_reducer.PIECE_BYTES, False), (4096, False), (4096, True)]:
    _reducer.PIECE_BYTES = piece  # small pieces: many collectives per bucket
    net = Net()
    ddp = DDP(net, gradient_as_bucket_view=as_view)
    red = ddp.reducer
    direct = {id(red.params[b.members[0]]) for b in red.buckets if b.direct}
    check(direct == {id(net.big.weight), id(net.side.weight)},
          f"direct buckets: {[b.members for b in red.buckets]}")
    check(all(b.spare is None for b in red.buckets if b.direct), "no bucket memory")
    ref = copy.deepcopy(net)
    gen = gradsum.Generator()
    gen.manual_seed(11)
    B, k, n = 2 * W, 2, 2
    for step in range(4):
        X = gradsum.randn(k * B, 520, generator=gen)
        Y = gradsum.randn(k * B, 4, generator=gen)
        X[:, 0] = -X[:, 0].abs()  # side unused ...
        if step >= 2:  # ... except by rank 0's first micro-batch (under no_sync)
            for q in range(W):
                X[q * n, 0] = 1.0 if q == 0 else -1.0
        set_to_none = step % 2 == 0
        ref.zero_grad(set_to_none=set_to_none)
        ddp.zero_grad(set_to_none=set_to_none)
        for j in range(k):
            for q in range(W):
                rows = slice(j * B + q * n, j * B + (q + 1) * n)
                loss_of(ref, X[rows], Y[rows], k * B).backward()
        held = net.big.weight.grad  # None after set_to_none, else the zeroed .grad
        for j in range(k):
            rows = slice(j * B + r * n, j * B + (r + 1) * n)
            if j < k - 1:
                with ddp.no_sync():
                    (loss_of(ddp, X[rows], Y[rows], k * B) * W).backward()
            else:
                before = net.big.weight.grad
                buf = before._array
                (loss_of(ddp, X[rows], Y[rows], k * B) * W).backward()
                check(net.big.weight.grad is before, "direct .grad identity")
                check(net.big.weight.grad._array is buf, "direct .grad reduced in place")
        if held is not None:
            check(net.big.weight.grad is held, "held .grad keeps its identity")
        same(net, ref, f"piece={piece} view={as_view} step={step}")
        if step < 2:
            check(net.side.weight.grad is None, "unused everywhere must stay None")
        check(all(b.flat is None and b.grad is None for b in red.buckets if b.direct),
              "direct buckets hold no buffer after the sync")

    # a .grad kept across `p.grad = None` is never written again, direct or small
    kept = {n: p.grad for n, p in net.named_parameters() if p.grad is not None}
    values = {n: g.clone() for n, g in kept.items()}
    for p in net.parameters():
        p.grad = None
    loss_of(ddp, X[:n], Y[:n], n).backward()
    for name, g in kept.items():
        if as_view and name not in ("big.weight", "side.weight"):
            continue  # gradient_as_bucket_view: a kept small .grad is its bucket slot
        check(gradsum.equal(g, values[name]), f"kept .grad of {name} was written")
        p = dict(net.named_parameters())[name]
        check(p.grad is not g and not xp.shares_memory(p.grad._array, g._array),
              f"{name}: new .grad aliases the kept one")

    # fallback on rank 0 only: a .grad that is a transposed view (not C-contiguous, not its
    # own buffer) goes through the spare buffer, while the other ranks reduce in place
    base = gradsum.zeros(520, 512)
    net.big.weight.grad = base.t() if r == 0 else gradsum.zeros(512, 520)
    ref.zero_grad(set_to_none=True)
    for q in range(W):
        loss_of(ref, X[q * n : (q + 1) * n], Y[q * n : (q + 1) * n], n).backward()
    g = net.big.weight.grad
    loss_of(ddp, X[r * n : (r + 1) * n], Y[r * n : (r + 1) * n], n).backward()
    i = next(i for i, p in enumerate(red.params) if p is net.big.weight)
    check((red.buckets[red.bucket_of[i]].spare is not None) == (r == 0), "spare use")
    check(net.big.weight.grad is g, "fallback .grad identity")
    check(gradsum.allclose(net.big.weight.grad * W, ref.big.weight.grad, rtol=1e-5,
                           atol=1e-6), "fallback average")
    check(r != 0 or gradsum.allclose(base.t(), g), "fallback wrote through the view")
    ddp.check_parameters()
    red.close()
print(f"rank {r}: ddp direct OK", flush=True)
