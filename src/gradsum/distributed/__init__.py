"""Data-parallel training over MPI: torch.distributed's API on gradsum tensors.

Start a job with the launcher, which runs ``mpiexec`` for you::

    gradsum run -n 4 train.py --epochs 3        # or: python -m gradsum.distributed.run -n 4 ...

and in the script::

    import gradsum.distributed as dist
    dist.init_process_group(backend="mpi")
    model = gradsum.nn.parallel.DistributedDataParallel(model)

Collectives (:func:`all_reduce`, :func:`broadcast`, :func:`all_gather`, :func:`barrier`)
work in place on gradsum tensors (the buffer is overwritten and the version counter bumped)
and accept ``async_op=True`` (MPI non-blocking collectives; ``work.wait()`` completes them).
Ranks that pass mismatched shapes or dtypes get a ``RuntimeError`` naming what each rank
passed, not a hang. mpi4py is imported only when :func:`init_process_group` runs.

Example:
    >>> import gradsum.distributed as dist
    >>> dist.ReduceOp.SUM.name
    'SUM'
    >>> dist.is_initialized()
    False
"""

from __future__ import annotations

from gradsum.distributed._core import (
    DistBackendError,
    DistError,
    ReduceOp,
    Work,
    all_gather,
    all_gather_object,
    all_reduce,
    all_reduce_count,
    barrier,
    broadcast,
    broadcast_object_list,
    destroy_process_group,
    get_backend,
    get_rank,
    get_world_size,
    init_process_group,
    is_available,
    is_initialized,
)

__all__ = [
    "DistBackendError",
    "DistError",
    "ReduceOp",
    "Work",
    "all_gather",
    "all_gather_object",
    "all_reduce",
    "all_reduce_count",
    "barrier",
    "broadcast",
    "broadcast_object_list",
    "destroy_process_group",
    "get_backend",
    "get_rank",
    "get_world_size",
    "init_process_group",
    "is_available",
    "is_initialized",
]
