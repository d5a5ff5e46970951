"""Every rank writes many lines in pieces (partial writes, flushed): the launcher's output
must still hold each line whole, prefixed with its rank."""

import sys
import time

import gradsum.distributed as dist

dist.init_process_group(backend="mpi")
rank = dist.get_rank()
for i in range(200):
    sys.stdout.write(f"rank {rank} line {i} ")
    sys.stdout.flush()
    if i % 20 == 0:
        time.sleep(0.001)
    sys.stdout.write("x" * (i % 50) + " end\n")
    sys.stdout.flush()
sys.stderr.write(f"rank {rank} on stderr, no newline at the end")
dist.barrier()
