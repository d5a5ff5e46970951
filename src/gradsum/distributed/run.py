"""Launcher: ``gradsum run -n N script.py [args]`` / ``python -m gradsum.distributed.run ...``.

Starts ``N`` copies of ``script.py`` with the ``mpiexec`` installed beside the running Python
(the MPICH wheel's; else the first on ``PATH``), and returns the job's exit status. A rank
that dies of an uncaught exception takes the job down (the excepthook installed by
``init_process_group`` calls ``MPI_Abort``), so the launcher returns non-zero instead of
hanging. Ctrl-C (or SIGTERM to the launcher) terminates every rank; ``--timeout`` kills a job
that runs too long (exit status 124).

Every rank runs the script with ``import torch`` resolved to gradsum
(:mod:`gradsum.porting`), so a PyTorch script runs as written. One rank on this machine (the
default ``-n 1``, no ``--hostfile``/``--mpiexec``) needs no MPI launcher: the script runs in
one child process, as ``python script.py`` would run it (``gradsum.distributed`` then starts
MPI as a single process of world size 1).

Several machines: pass ``--hostfile FILE`` (one host per line, optionally ``host:slots``);
every host needs the same Python environment at the same path and passwordless ``ssh``.

Example:
    >>> from gradsum.distributed.run import build_command
    >>> cmd = build_command(2, ["train.py", "--lr", "0.1"], mpiexec="mpiexec")
    >>> cmd[:3], cmd[-3:]
    (['mpiexec', '-n', '2'], ['train.py', '--lr', '0.1'])
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

_GRACE_S = 5.0


def find_mpiexec() -> str:
    """The ``mpiexec`` matching this interpreter's mpi4py (beside ``sys.executable``).

    Raises:
        FileNotFoundError: none is installed.
    """
    here = Path(sys.executable).parent / "mpiexec"
    if here.exists():
        return str(here)
    found = shutil.which("mpiexec")
    if found:
        return found
    raise FileNotFoundError(
        "mpiexec not found beside the Python interpreter or on PATH: pip install mpi4py mpich "
        "(in a clone of gradsum: pip install -e '.[mpi]')"
    )


def build_command(
    nproc: int,
    script_args: Sequence[str],
    *,
    mpiexec: str | None = None,
    hostfile: str | None = None,
    module: bool = False,
    python: str | None = None,
    torch_alias: bool = False,
) -> list[str]:
    """The ``mpiexec`` command line that runs ``script_args`` on ``nproc`` ranks.

    With ``torch_alias``, each rank runs the script through ``python -m gradsum.porting``
    (``import torch`` resolved to gradsum).
    """
    cmd = [mpiexec or find_mpiexec(), "-n", str(nproc)]
    if hostfile:
        cmd += ["-f", hostfile]
    cmd.append(python or sys.executable)
    if torch_alias:
        cmd += ["-m", "gradsum.porting"]
    if module:
        cmd.append("-m")
    cmd += list(script_args)
    return cmd


def _parser(prog: str = "gradsum run") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description="Run a Python script on N MPI ranks (data-parallel gradsum training), "
                    "with import torch resolved to gradsum.",
    )
    add_arguments(p)
    return p


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the launcher's options to ``p`` (used by ``gradsum run``)."""
    p.add_argument("-n", "--nproc", "--nproc-per-node", dest="nproc", type=int, default=1,
                   help="number of ranks (processes) to start (default 1)")
    p.add_argument("--hostfile", "-f", default=None,
                   help="MPI hostfile for several machines (passed to mpiexec as -f)")
    p.add_argument("--mpiexec", default=None,
                   help="mpiexec to use (default: the one beside this Python, then PATH)")
    p.add_argument("--timeout", type=float, default=None,
                   help="kill the job after this many seconds (exit status 124)")
    p.add_argument("-m", dest="module", action="store_true",
                   help="run a module (like python -m) instead of a script")
    p.add_argument("script", help="the script (or module with -m) every rank runs")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")


def _terminate(proc: subprocess.Popen[bytes]) -> None:
    # mpiexec (hydra) forwards SIGTERM/SIGINT to every rank and cleans up; SIGKILL only
    # if it does not finish within the grace period (ranks run in their own sessions, so a
    # killed mpiexec could orphan them: try hard not to get there).
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(_GRACE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def launch(args: argparse.Namespace) -> int:
    """Run the job described by parsed launcher ``args``; returns its exit status."""
    if args.nproc < 1:
        print(f"gradsum run: -n must be >= 1, got {args.nproc}", file=sys.stderr)
        return 2
    script_args = [args.script, *args.args]
    try:
        if args.nproc == 1 and args.hostfile is None and args.mpiexec is None:
            cmd = [sys.executable, "-m", "gradsum.porting", *(["-m"] if args.module else []),
                   *script_args]
        else:
            cmd = build_command(args.nproc, script_args, mpiexec=args.mpiexec,
                                hostfile=args.hostfile, module=args.module, torch_alias=True)
    except FileNotFoundError as e:
        print(f"gradsum run: {e}", file=sys.stderr)
        return 127
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    proc = subprocess.Popen(cmd, env=env)

    def on_term(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, on_term)
    deadline = None if args.timeout is None else time.monotonic() + args.timeout
    try:
        while True:
            try:
                return proc.wait(0.2 if deadline is not None else None)
            except subprocess.TimeoutExpired:
                if deadline is not None and time.monotonic() > deadline:
                    print(f"gradsum run: job exceeded --timeout {args.timeout}s, terminating",
                          file=sys.stderr)
                    _terminate(proc)
                    return 124
    except KeyboardInterrupt:
        _terminate(proc)
        return 130
    finally:
        signal.signal(signal.SIGTERM, old)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m gradsum.distributed.run``."""
    args = _parser("python -m gradsum.distributed.run").parse_args(argv)
    return launch(args)


if __name__ == "__main__":
    sys.exit(main())
