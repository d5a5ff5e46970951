"""Ranks with different parameter sets: every rank raises a RuntimeError naming the difference."""

import sys

import gradsum.distributed as dist
from gradsum import nn
from gradsum.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="mpi")
r = dist.get_rank()
cases = {
    "shape": (lambda: nn.Sequential(nn.Linear(4, 3 + (r == 1))), ["'0.weight'", "(3, 4)"]),
    "count": (lambda: nn.Sequential(*[nn.Linear(4, 4) for _ in range(1 + (r == 1))]),
              ["'1.weight'", "lacks"]),
    "dtype": (lambda: nn.Linear(2, 2).double() if r == 1 else nn.Linear(2, 2),
              ["float64", "float32"]),
}
for name, (build, needles) in cases.items():
    try:
        DDP(build())
    except RuntimeError as e:
        msg = str(e)
        missing = [n for n in needles if n not in msg]
        if "same model across all ranks" not in msg or missing:
            print(f"rank {r}: {name}: bad message {msg!r}", flush=True)
            sys.exit(3)
    else:
        print(f"rank {r}: {name}: no error", flush=True)
        sys.exit(4)
DDP(nn.Linear(2, 2))  # the group still works
print(f"rank {r}: mismatch OK", flush=True)
