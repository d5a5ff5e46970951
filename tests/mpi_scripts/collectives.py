"""Collectives on gradsum tensors: values, in-place writes, async, and mismatch errors."""

import sys

from _worker import check, start

import gradsum
import gradsum.distributed as dist

r, W = start()
R = dist.ReduceOp


# all_reduce: every op, in place (same object, same buffer, version bumped)
for op, expect in [(R.SUM, sum(range(1, W + 1))), (R.AVG, sum(range(1, W + 1)) / W),
                   (R.MAX, W), (R.MIN, 1), (R.PRODUCT, float(__import__("math").factorial(W)))]:
    t = gradsum.full((2, 3), float(r + 1))
    buf, v = t._array, t._version
    dist.all_reduce(t, op=op)
    check(t._array is buf and t._version == v + 1, f"{op} not in place")
    check(t.tolist() == [[expect] * 3] * 2, f"{op}: {t.tolist()} != {expect}")

# async, integer, bool, float16, non-contiguous view
t = gradsum.arange(4) * (r + 1)
w = dist.all_reduce(t, async_op=True)
check(w.wait() and w.is_completed(), "async wait")
check(t.tolist() == [i * W * (W + 1) // 2 for i in range(4)], f"async int {t.tolist()}")
b = gradsum.tensor([r == 0, False])
dist.all_reduce(b)
check(b.tolist() == [True, False], f"bool {b.tolist()}")
h = gradsum.full((3,), 0.5, dtype=gradsum.float16)
dist.all_reduce(h)
check(h.tolist() == [0.5 * W] * 3 and h.dtype == gradsum.float16, f"half {h.tolist()}")
base = gradsum.zeros(3, 4)
view = base.t()  # non-contiguous: the result must land in base's buffer
view += r + 1
dist.all_reduce(view)
check(base.tolist() == [[W * (W + 1) / 2] * 4] * 3, f"view {base.tolist()}")

# broadcast, all_gather, all_reduce_count, objects, barrier
x = gradsum.full((2,), float(r))
dist.broadcast(x, src=W - 1)
check(x.tolist() == [W - 1.0] * 2, f"broadcast {x.tolist()}")
outs = [gradsum.zeros(2, dtype=gradsum.int64) for _ in range(W)]
dist.all_gather(outs, gradsum.tensor([r, 10 * r]))
check([o.tolist() for o in outs] == [[i, 10 * i] for i in range(W)], "all_gather")
w = dist.all_gather(outs, gradsum.tensor([2 * r, 0]), async_op=True)
w.wait()
check([o.tolist()[0] for o in outs] == [2 * i for i in range(W)], "async all_gather")
check(dist.all_reduce_count(r + 3) == sum(i + 3 for i in range(W)), "count")
objs: list = []
dist.all_gather_object(objs, {"rank": r})
check(objs == [{"rank": i} for i in range(W)], "objects")
dist.barrier()


# mismatches raise on every rank (no hang, nothing written)
def expect_error(fn, *needles: str) -> None:
    try:
        fn()
    except RuntimeError as e:
        msg = str(e)
        for n in needles:
            check(n in msg, f"message lacks {n!r}: {msg}")
        return
    raise AssertionError(f"rank {r}: no error")


y = gradsum.ones(3 + r)
expect_error(lambda: dist.all_reduce(y), "mismatched", "shape=(3,)", "shape=(4,)")
check(y.tolist() == [1.0] * (3 + r), "mismatch wrote into the tensor")
z = gradsum.ones(3, dtype=gradsum.float64 if r == 0 else gradsum.float32)
expect_error(lambda: dist.all_reduce(z), "dtype=float64", "dtype=float32")
expect_error(lambda: dist.all_reduce(z.float()) if r == 0 else dist.broadcast(z, 0),
             "all_reduce", "broadcast")
expect_error(lambda: dist.all_reduce(gradsum.ones(2), op=R.AVG if r else R.SUM), "op=AVG")
expect_error(lambda: dist.all_reduce(gradsum.ones(2, dtype=gradsum.int64), op=R.AVG),
             "floating-point")
# after errors the group still works
s = gradsum.ones(1)
dist.all_reduce(s)
check(s.item() == W, "group broken after errors")
dist.destroy_process_group()
check(not dist.is_initialized(), "destroy")
print(f"rank {r}: collectives OK", flush=True)
sys.exit(0)
