"""What the MPI tests share: where the worker scripts are, the job timeout, the skip marker
for machines without mpi4py or an ``mpiexec``, and the launch of a job with a timeout."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
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


def launch(n: int, script: str, *args: str, env: dict[str, str] | None = None,
           timeout: float = JOB_TIMEOUT) -> subprocess.CompletedProcess[str]:
    """Run ``script`` on ``n`` ranks through the launcher; kill the job on timeout."""
    cmd = [sys.executable, "-m", "gradsum.distributed.run", "-n", str(n),
           "--timeout", str(timeout), str(SCRIPTS / script), *args]
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", "GRADSUM_STRICT": "0", **(env or {})}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=full_env, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout + 20)
    except subprocess.TimeoutExpired:  # the launcher's own timeout failed: kill everything
        os.killpg(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
        pytest.fail(f"job did not end within {timeout + 20}s:\n{out}\n{err}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)
