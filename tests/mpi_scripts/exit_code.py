"""Exit with the status given in argv[1] on rank argv[2] (all ranks if absent)."""

import sys

import gradsum.distributed as dist

dist.init_process_group(backend="mpi")
dist.barrier()
code = int(sys.argv[1])
who = int(sys.argv[2]) if len(sys.argv) > 2 else None
dist.barrier()
sys.exit(code if who is None or who == dist.get_rank() else 0)
