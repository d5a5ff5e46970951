"""Collective and DDP behaviours checked against torch 2.13 on gloo (2 ranks; the expected
values below were observed there): bitwise ReduceOps and their dtype errors, all_gather's
dtype ValueError, DDP's constructor (bucket caps, attributes, argument errors). Run on 2
ranks. Each section runs even if another failed and prints "<section> OK" when it passed."""

import warnings

from _worker import Failed, expect, section

import gradsum
import gradsum.distributed as dist
from gradsum import nn
from gradsum.nn.parallel import DistributedDataParallel as DDP
from gradsum.utils.data import DistributedSampler

dist.init_process_group(backend="mpi")
r, W = dist.get_rank(), dist.get_world_size()
assert W == 2, "run on 2 ranks"


def raises(exc: type[BaseException], phrase: str, fn) -> None:
    try:
        fn()
    except exc as e:
        expect(str(e).startswith(phrase), f"message {str(e)[:200]!r} lacks {phrase!r}")
        return
    except Exception as e:
        raise Failed(f"expected {exc.__name__}, got {type(e).__name__}: {e}") from e
    raise Failed(f"expected {exc.__name__}, nothing raised")


@section
def bitwise_reduce_ops() -> None:
    # torch (gloo): inputs [1, 2, 3] + 2 * rank
    want = {"BAND": [1, 0, 1], "BOR": [3, 6, 7], "BXOR": [2, 6, 6]}
    want_bool = {"BAND": [True] * 3, "BOR": [True] * 3, "BXOR": [False] * 3}
    for name, expected in want.items():
        op = getattr(dist.ReduceOp, name)
        for dt in (gradsum.int64, gradsum.uint8, gradsum.int32):
            x = (gradsum.tensor([1, 2, 3]) + 2 * r).to(dt)
            dist.all_reduce(x, op)
            expect(x.tolist() == expected, f"{name} {dt}: {x.tolist()}")
        b = gradsum.tensor([True, True, True])
        dist.all_reduce(b, op)
        expect(b.tolist() == want_bool[name], f"{name} bool: {b.tolist()}")
        for dt in (gradsum.float32, gradsum.float16):
            raises(RuntimeError, f"Cannot use ReduceOp.{name} with non-integral dtype",
                   lambda dt=dt, op=op: dist.all_reduce(gradsum.ones(3, dtype=dt), op))


@section
def all_gather_dtype_is_value_error() -> None:
    out = [gradsum.zeros(2, dtype=gradsum.float64) for _ in range(W)]
    raises(ValueError, "Invalid usage of tensors with different dtypes",
           lambda: dist.all_gather(out, gradsum.ones(2)))
    raises(RuntimeError, "invalid output tensor list",
           lambda: dist.all_gather([gradsum.zeros(2)], gradsum.ones(2)))
    ok = [gradsum.zeros(2) for _ in range(W)]
    dist.all_gather(ok, gradsum.full((2,), float(r)))
    expect([o.tolist() for o in ok] == [[0.0, 0.0], [1.0, 1.0]], "all_gather after errors")


@section
def avg_of_integers_and_bad_src() -> None:
    raises(RuntimeError, "result type Float can't be cast",
           lambda: dist.all_reduce(gradsum.ones(2, dtype=gradsum.int64), dist.ReduceOp.AVG))
    raises(RuntimeError, "invalid root rank", lambda: dist.broadcast(gradsum.ones(2), 5))


@section
def ddp_constructor_like_torch() -> None:
    for cap in (0, -1, 0.0001):  # torch accepts any cap; 0 or less: a bucket per parameter
        m = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
        d = DDP(m, bucket_cap_mb=cap)
        expect(d.bucket_bytes_cap == int(cap * 1024 * 1024), f"cap {cap}")
        d(gradsum.full((1, 2), float(r + 1))).sum().backward()
        ref = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
        ref.load_state_dict(m.state_dict())
        ref(gradsum.tensor([[1.0, 1.0], [2.0, 2.0]])).sum().backward()
        for p, q in zip(m.parameters(), ref.parameters(), strict=True):
            expect(gradsum.allclose(p.grad, q.grad / 2), f"cap {cap}: grads differ")
    d = DDP(nn.Linear(2, 1), bucket_cap_mb_list=[1, 2])
    expect(d.bucket_bytes_cap == 2 * 1024 * 1024, "bucket_cap_mb_list")
    expect(d.device_ids is None and d.output_device is None, "device attributes")
    raises(AttributeError, "'Tensor' object has no attribute 'named_parameters'",
           lambda: DDP(gradsum.ones(2)))
    raises(ValueError, "device_ids can only be None or contain a single element",
           lambda: DDP(nn.Linear(2, 1), device_ids=[0, 1]))
    raises(ValueError, "delay_all_reduce_named_params and param_to_hook_all_reduce",
           lambda: DDP(nn.Linear(2, 1), param_to_hook_all_reduce=object()))
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        DDP(nn.Linear(2, 1), check_reduction=True)
    expect(any(issubclass(w.category, FutureWarning) and "check_reduction" in str(w.message)
               for w in got), f"check_reduction warning: {[str(w.message) for w in got]}")
    d = DDP(nn.Linear(2, 1), None, None, 0, None, True, None, None, False, False, False,
            False, None, None, None, None, False, None, False, None)  # torch's 20 positionals
    expect(d.forward_sync_buffers is True, "positional arguments")


@section
def sampler_from_group() -> None:
    s = DistributedSampler(range(11), seed=5)
    s.set_epoch(2)
    expect((s.num_replicas, s.rank) == (W, r), "sampler defaults")
    # torch.utils.data.DistributedSampler(range(11), 2, rank, seed=5), epoch 2
    want = {0: [3, 9, 5, 4, 1, 6], 1: [0, 2, 8, 10, 7, 3]}
    expect(list(s) == want[r], f"sampler rank {r}: {list(s)}")


dist.destroy_process_group()
