"""DDP's halving schedule (direct buckets, power-of-two worlds): the same bits as the
fallback (each .grad scaled by 1/world in place, then MPI's sum), for values across the
whole float range (subnormals, zeros of both signs, values near the largest, infinities),
in place, through the spare buffer on one rank, unused on one rank, with and without
gradient_as_bucket_view, float32 and float64; at 2 ranks also torch's arithmetic
(``x0 * (1/2) + x1 * (1/2)``, computed here from every rank's values)."""

import numpy as np
from _worker import check, start

import gradsum
from gradsum import nn
from gradsum.nn.parallel import DistributedDataParallel as DDP

r, W = start()
POW2 = not W & (W - 1)


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(300, 1000)  # weight 1.2 MB: direct
        self.b = nn.Linear(1000, 7)  # small: flat bucket
        self.c = nn.Linear(513, 1025)  # weight of an odd size (525825 elements): direct


def crafted(shape: tuple[int, ...], seed: int, dtype: type) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    fi = np.finfo(dtype)
    lo, hi = (-160, 70) if dtype == np.float32 else (-1090, 400)
    x = (rng.standard_normal(n) * np.exp2(rng.integers(lo, hi, n).astype(np.float64)))
    x = x.astype(dtype)
    x[rng.integers(0, n, 50)] = 0.0
    x[rng.integers(0, n, 50)] = -0.0
    x[rng.integers(0, n, 20)] = fi.max * 0.75
    if n >= 12:
        x[:12] = [np.inf, -np.inf, fi.tiny, -fi.tiny, fi.smallest_subnormal,
                  -fi.smallest_subnormal, *(fi.smallest_subnormal * k for k in (2, 3, 5, 7)),
                  1.0, fi.max]
    return x.reshape(shape)


def grads(net: Net) -> list:
    return [None if p.grad is None else p.grad._array.copy() for p in net.parameters()]


def sync(red) -> None:
    red.armed = True
    red._begin(True)
    for i in reversed(range(len(red.params))):
        if red.params[i].grad is not None:
            red._ready(i)
    red._end(None)


used_halving = False
for dtype in (gradsum.float32, gradsum.float64):
    npdt = np.float32 if dtype is gradsum.float32 else np.float64
    for as_view in (False, True):
        nets, reds = [], []
        for fast in (True, False):
            gradsum.manual_seed(0)
            net = Net().to(dtype)
            red = DDP(net, gradient_as_bucket_view=as_view).reducer
            direct = [b for b in red.buckets if b.direct]
            check(len(direct) == 2, "two direct buckets")
            check(all(b.halving == POW2 for b in direct), "halving where expected")
            if not fast:
                for b in red.buckets:
                    b.halving = False  # the fallback: scaled in place, summed by MPI
            used_halving |= any(b.halving for b in red.buckets)
            nets.append(net)
            reds.append(red)
        for step in range(4):
            for net, red in zip(nets, reds):
                for i, p in enumerate(net.parameters()):
                    g = crafted(tuple(p.shape), 1000 * step + 17 * i + r, npdt)
                    if step == 1 and i == 0 and r == 0:  # rank 0: a transposed .grad (spare)
                        p.grad = gradsum.tensor(np.ascontiguousarray(g.T)).t()
                    elif step == 2 and i == 4 and r == W - 1:  # unused on one rank
                        p.grad = None
                    elif step == 3 and as_view and p.grad is not None:
                        p.grad._array[...] = g
                    else:
                        p.grad = gradsum.tensor(g)
                sync(red)
            fast, slow = grads(nets[0]), grads(nets[1])
            for i, (a, b) in enumerate(zip(fast, slow)):
                what = f"{dtype} view={as_view} step={step} param {i}"
                check((a is None) == (b is None), f"{what}: None mismatch")
                if a is not None:
                    check(a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8)),
                          f"{what}: bits differ from the fallback")
            if W == 2 and step == 0:  # torch's arithmetic: each rank's .grad * (1/2), summed
                for i, p in enumerate(nets[0].parameters()):
                    xs = [crafted(tuple(p.shape), 17 * i + q, npdt) for q in range(W)]
                    want = xs[0] * npdt(0.5) + xs[1] * npdt(0.5)
                    check(np.array_equal(fast[i].view(np.uint8), want.view(np.uint8)),
                          f"{dtype} view={as_view} param {i}: not torch's arithmetic")
        for red in reds:
            red.close()
check(used_halving == POW2, "the halving schedule ran")
print(f"rank {r}: ddp halving OK", flush=True)
