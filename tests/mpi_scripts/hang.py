"""Rank 0 waits in a barrier that rank 1 never reaches (a hang the launcher must end)."""

import time

import gradsum.distributed as dist

dist.init_process_group(backend="mpi")
print(f"rank {dist.get_rank()}: started", flush=True)
if dist.get_rank() == 1:
    time.sleep(120)  # bounded: a broken test cannot hang for ever
dist.barrier()
