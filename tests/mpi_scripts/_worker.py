"""What the worker scripts here start with: the MPI process group, this rank and the world
size, and a check whose failure names the rank (the launcher prints every rank's output)."""

import gradsum.distributed as dist


def start() -> tuple[int, int]:
    """Join the MPI process group; (rank, world size)."""
    dist.init_process_group(backend="mpi")
    return dist.get_rank(), dist.get_world_size()


def check(cond: bool, what: str) -> None:
    """Fail this rank with ``what`` unless ``cond``."""
    if not cond:
        raise AssertionError(f"rank {dist.get_rank()}: {what}")
