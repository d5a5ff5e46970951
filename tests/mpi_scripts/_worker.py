"""What the worker scripts here start with: the MPI process group, this rank and the world
size, and a check whose failure names the rank (the launcher prints every rank's output); for
the scripts run in sections (each reports "<section> OK" or FAILED and the next one runs),
``section``, ``expect`` and the ``failed`` list."""

import gradsum.distributed as dist


def start() -> tuple[int, int]:
    """Join the MPI process group; (rank, world size)."""
    dist.init_process_group(backend="mpi")
    return dist.get_rank(), dist.get_world_size()


def check(cond: bool, what: str) -> None:
    """Fail this rank with ``what`` unless ``cond``."""
    if not cond:
        raise AssertionError(f"rank {dist.get_rank()}: {what}")


# -- sectioned scripts (ddp_torch_rules, distributed_vs_torch) -----------------------------------
failed: list[str] = []  # the names of the sections that failed, in order


class Failed(Exception):
    """A section's expectation did not hold."""


def expect(cond: bool, what: str) -> None:
    """Fail the running section with ``what`` unless ``cond``."""
    if not cond:
        raise Failed(what)


def section(fn):
    """Run ``fn`` now, as one section: print "<name> OK" or "<name> FAILED: ..." (recorded in
    ``failed``) and go on; then a barrier. Used as a decorator."""
    r = dist.get_rank()
    try:
        fn()
    except Exception as e:  # report and go on: the other sections are independent
        failed.append(fn.__name__)
        print(f"rank {r}: {fn.__name__} FAILED: {type(e).__name__}: {e}", flush=True)
    else:
        print(f"rank {r}: {fn.__name__} OK", flush=True)
    dist.barrier()
    return fn
