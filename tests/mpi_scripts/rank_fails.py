"""Rank 1 raises in the middle of a training step while the others wait in the all-reduce:
the job must end (non-zero) instead of hanging."""

import gradsum
import gradsum.distributed as dist
from gradsum import nn
from gradsum.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="mpi")
r = dist.get_rank()
ddp = DDP(nn.Linear(4, 2))
for step in range(3):
    out = ddp(gradsum.randn(3, 4)).sum()
    if r == 1 and step == 1:
        raise ValueError("rank 1 failed mid-step")
    out.backward()
print(f"rank {r}: unreachable", flush=True)
