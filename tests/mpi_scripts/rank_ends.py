"""One rank (argv[2], default 1) ends in the way argv[1] names while the others wait for it
in a collective (argv[3]: ``barrier``, ``work`` for an async all_reduce's ``wait()``,
``ddp`` for DDP's gradient sync in ``backward()``, or ``init``: the rank ends before it starts
MPI while the others start it); the job must end within seconds."""

import os
import signal
import sys
import time

import gradsum
import gradsum.distributed as dist
from gradsum import nn
from gradsum.nn.parallel import DistributedDataParallel as DDP


def end(how: str) -> None:
    if how == "raise":
        raise ValueError(f"rank {rank} failed on purpose")
    if how.startswith("exit"):
        sys.exit(int(how[4:]))
    if how.startswith("os_exit"):
        os._exit(int(how[7:]))
    if how == "kill":
        os.kill(os.getpid(), signal.SIGKILL)


how = sys.argv[1]
who = int(sys.argv[2]) if len(sys.argv) > 2 else 1
where = sys.argv[3] if len(sys.argv) > 3 else "barrier"
rank = int(os.environ["PMI_RANK"])  # (MPICH's launcher sets it; MPI is not started yet)
if where == "init" and rank == who:
    end(how)
time.sleep(0.2)
dist.init_process_group(backend="mpi")
assert rank == dist.get_rank()
ddp = DDP(nn.Linear(4, 2)) if where == "ddp" else None
print(f"rank {rank} started", flush=True)
if rank == who:
    time.sleep(0.2)
    end(how)
if where in ("barrier", "init"):
    dist.barrier()
elif where == "work":
    dist.all_reduce(gradsum.ones(3), async_op=True).wait()
else:
    ddp(gradsum.randn(3, 4)).sum().backward()
print(f"rank {rank}: past the collective", flush=True)
