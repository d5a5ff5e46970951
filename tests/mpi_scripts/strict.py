"""GRADSUM_STRICT=1: a parameter that diverges across ranks raises, naming it."""

import os

import gradsum
import gradsum.distributed as dist
from gradsum import nn
from gradsum.nn.parallel import DistributedDataParallel as DDP

assert os.environ.get("GRADSUM_STRICT") == "1"
dist.init_process_group(backend="mpi")
r = dist.get_rank()
net = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 1))
ddp = DDP(net)
assert ddp.check_consistency
for step in range(3):
    ddp(gradsum.randn(2, 3)).sum().backward()
    with gradsum.no_grad():
        for p in net.parameters():
            p -= 0.1 * p.grad
        if step == 1 and r == 1:
            net[1].bias += 1e-7  # a rank-dependent update
    try:
        if ddp._step_hook is None:
            ddp(gradsum.randn(2, 3))  # strict check at the next forward
        else:
            ddp.check_parameters()
    except RuntimeError as e:
        assert step == 1 and "'1.bias'" in str(e), str(e)
        print(f"rank {r}: strict OK", flush=True)
        break
    net.zero_grad()
else:
    raise AssertionError("divergence not detected")
