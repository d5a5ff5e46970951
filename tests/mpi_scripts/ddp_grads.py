"""DDP gradients equal one process's full-batch gradients (also with no_sync, unused
parameters, several buckets, bucket views); misuse raises."""

import copy

from _worker import check, start

import gradsum
import gradsum.distributed as dist
from gradsum import nn
from gradsum.nn.parallel import DistributedDataParallel as DDP

r, W = start()


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(5, 8)
        self.b = nn.Linear(8, 3)
        self.branch = nn.Linear(8, 3)  # used only for some examples
        self.never = nn.Linear(3, 3)  # never used
        self.register_buffer("scale", gradsum.full((1,), float(r + 1)))

    def forward(self, x, use_branch: bool):
        h = self.a(x).tanh() * self.scale
        out = self.b(h)
        if use_branch:
            out = out + self.branch(h)
        return out


def loss_of(model, x, y, denom: int):  # sum of per-example losses / global count
    return ((model(x, use_branch=bool(x.shape[0]) and float(x[0, 0]) > 0) - y) ** 2).sum() / denom


def grads(model):
    return {n: None if p.grad is None else p.grad.clone() for n, p in model.named_parameters()}


def same(g1, g2, what):
    for n in g1:
        a, b = g1[n], g2[n]
        check((a is None) == (b is None), f"{what}: {n} None mismatch ({a}, {b})")
        if a is not None:
            check(gradsum.allclose(a, b, rtol=1e-5, atol=1e-6), f"{what}: {n} {a} vs {b}")


gradsum.manual_seed(100 + r)  # different init on every rank: DDP must broadcast rank 0's
for cap, as_view in [(25, False), (0.0001, False), (0.0001, True)]:
    net = Net()
    ddp = DDP(net, bucket_cap_mb=cap, gradient_as_bucket_view=as_view)
    check(net.scale.item() == 1.0, "buffers not broadcast from rank 0")
    check(len(ddp.reducer.buckets) >= (2 if cap < 1 else 1), "bucketing")
    ref = copy.deepcopy(net)  # rank 0's parameters, no DDP
    gen = gradsum.Generator()
    gen.manual_seed(7)
    B, k = 4 * W, 2  # global batch, micro-batches per rank
    for step in range(3):
        X = gradsum.randn(k * B, 5, generator=gen)
        Y = gradsum.randn(k * B, 3, generator=gen)
        X[:, 0] = X[:, 0].abs() * (1 if step != 1 else -1)  # step 1: branch unused anywhere
        if step == 2:
            X[: k * B // 2, 0] = -1.0  # branch used by some ranks/micro-batches only
        # single process, whole batch, in micro-batches of B/W (same rows as the ranks)
        set_to_none = step != 2
        ref.zero_grad(set_to_none=set_to_none)
        ddp.zero_grad(set_to_none=set_to_none)
        n = B // W
        for j in range(k):
            for q in range(W):
                rows = slice(j * B + q * n, j * B + (q + 1) * n)
                loss_of(ref, X[rows], Y[rows], k * B).backward()
        # DDP: this rank's rows, k micro-batches, all but the last under no_sync;
        # the loss is normalised by the global example count (all_reduce_count)
        total = dist.all_reduce_count(k * n)
        check(total == k * B, "count")
        for j in range(k):
            rows = slice(j * B + r * n, j * B + (r + 1) * n)
            if j < k - 1:
                with ddp.no_sync():
                    (loss_of(ddp, X[rows], Y[rows], total) * W).backward()
            else:
                (loss_of(ddp, X[rows], Y[rows], total) * W).backward()
        same(grads(ddp.module), grads(ref), f"cap={cap} view={as_view} step={step}")
        if step == 1:
            check(net.branch.weight.grad is None, "globally unused must stay None")
        check(net.never.weight.grad is None, "never-used param got a grad")
    # a held .grad object keeps its identity and sees the average in place
    g = net.a.weight.grad
    (loss_of(ddp, X[:n], Y[:n], n)).backward()
    check(net.a.weight.grad is g, ".grad identity")
    # a second backward through the same forward outside no_sync raises
    out = loss_of(ddp, X[:n], Y[:n], n)
    out.backward(retain_graph=True)
    try:
        out.backward()
    except RuntimeError as e:
        check("no forward of the DDP wrapper" in str(e), str(e))
    else:
        raise AssertionError("second backward did not raise")
    ddp.check_parameters()
    check("module.a.weight" in ddp.state_dict(), "state_dict keys")
    ddp.reducer.close()

# autograd.grad through DDP: no sync, no .grad writes
net = Net()
ddp = DDP(net)
x = gradsum.randn(2, 5)
(gx,) = gradsum.autograd.grad(loss_of(ddp, x, gradsum.zeros(2, 3), 2), [net.a.weight])
check(net.a.weight.grad is None, "autograd.grad wrote .grad")
print(f"rank {r}: ddp grads OK", flush=True)
