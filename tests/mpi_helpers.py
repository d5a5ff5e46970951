"""What the MPI tests share: where the worker scripts are, the job timeout, and the skip
marker for machines without mpi4py or an ``mpiexec``."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from gradsum.distributed.run import find_mpiexec

SCRIPTS = Path(__file__).parent / "mpi_scripts"
JOB_TIMEOUT = 60.0


def mpi_skip_reason() -> str | None:
    """Why MPI jobs cannot run here, or None when they can."""
    if importlib.util.find_spec("mpi4py") is None:
        return "mpi4py is not installed: pip install -e .[test] (or .[mpi])"
    try:
        find_mpiexec()
    except FileNotFoundError:
        return "mpiexec not found: pip install mpich (the 'mpi' extra)"
    return None


needs_mpi = pytest.mark.skipif(mpi_skip_reason() is not None, reason=str(mpi_skip_reason()))
