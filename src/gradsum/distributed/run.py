"""Launcher: ``gradsum run -n N script.py [args]`` / ``python -m gradsum.distributed.run ...``.

Starts ``N`` copies of ``script.py`` with the ``mpiexec`` installed beside the running Python
(the MPICH wheel's; else the first on ``PATH``), and returns the job's exit status.

Each rank runs under a small wrapper (:mod:`gradsum.distributed._rank`) that prefixes every
line the rank prints with ``[rank] `` (whole lines only: ranks never mix within a line) and
records how the rank ended. A rank that ends for any reason other than its script returning
with status 0 (an uncaught exception, ``sys.exit(n)`` with ``n != 0``, ``os._exit``, a signal)
ends the job within seconds; a rank whose script ends with status 0 while another waits for it
in a collective ends it too (that wait raises ``DistBackendError`` a second later). The launcher
then prints one line naming the rank that ended the job and how, and returns that rank's
status (``128 + N`` for signal ``N``). Ctrl-C (or SIGTERM to the launcher) terminates every
rank; ``--timeout`` kills a job that runs too long (exit status 124).

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
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from gradsum.distributed import _rank

_GRACE_S = 5.0
#: seconds mpiexec gets to stop the other ranks itself after one ended the job
_STOP_S = 1.0
#: the start of the lines of MPICH's "BAD TERMINATION" banner (it names a PID, often of a
#: bystander rank, and an exit code that is often the signal mpiexec killed it with): the
#: launcher's own line, naming the rank and the cause, replaces it
_BANNER = (b"=", b"YOUR APPLICATION TERMINATED WITH", b"This typically refers to a problem",
           b"Please see the FAQ page")


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
    watched: bool = False,
) -> list[str]:
    """The ``mpiexec`` command line that runs ``script_args`` on ``nproc`` ranks.

    With ``torch_alias``, each rank runs the script through ``python -m gradsum.porting``
    (``import torch`` resolved to gradsum); with ``watched``, through the rank wrapper
    ``python -m gradsum.distributed._rank`` (the alias too, plus line prefixes and end
    records).
    """
    cmd = [mpiexec or find_mpiexec(), "-n", str(nproc)]
    if hostfile:
        cmd += ["-f", hostfile]
    cmd.append(python or sys.executable)
    if watched:
        cmd += ["-m", "gradsum.distributed._rank"]
    elif torch_alias:
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


def _relay(src: IO[bytes], dst: IO[Any]) -> None:
    """Copy mpiexec's output to ours line by line, leaving out MPICH's termination banner."""
    out = getattr(dst, "buffer", None)
    for line in iter(src.readline, b""):
        if line.startswith(_BANNER) or not line.strip():
            continue
        if out is not None:
            out.write(line)
            out.flush()
        else:
            dst.write(line.decode(errors="replace"))
            dst.flush()
    src.close()


def _ends(records: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """One entry per rank: the script's status and words when its script ended (the
    wrapper's record), else the process's (``os._exit``, a signal), with the earliest time."""
    ends: dict[int, dict[str, Any]] = {}
    for rec in records:
        end = ends.setdefault(rec["rank"], {"time": rec["time"], "rank": rec["rank"]})
        if rec["kind"] == "script" or "status" not in end:
            end.update(status=rec["status"], cause=rec["cause"], peer=rec["peer"],
                       script=rec["kind"] == "script")
    for end in ends.values():
        if not end["script"] and end["cause"].startswith("the process exited"):
            end["cause"] += " before its script ended (os._exit(), or a crash in native code)"
    return ends


def _verdict(records: list[dict[str, Any]], mpiexec_status: int) -> tuple[int, str | None]:
    """The job's exit status and the line that names the rank that ended it (None when every
    rank's script ended with status 0), from the end records of the job's ranks.

    The rank that ended the job is the first to end with a non-zero status or before its
    script ended (``os._exit(0)``, a signal); when that rank raised because it waited for
    one that had ended already, the one it waited for.
    """
    ends = _ends(records)
    bad = sorted((e for e in ends.values() if e["status"] != 0 or not e["script"]),
                 key=lambda e: e["time"])
    if not bad:
        if mpiexec_status == 0:
            return 0, None
        return mpiexec_status, (f"gradsum run: mpiexec ended with status {mpiexec_status} "
                                f"(no rank recorded how it ended)")
    first = bad[0]
    waiter = None
    if first["peer"] is not None and first["peer"] in ends:
        waiter, first = first["rank"], ends[first["peer"]]
    line = (f"gradsum run: rank {first['rank']} ended the job: {first['cause']} (exit status "
            f"{first['status']})")
    if waiter is not None:
        line += f", while rank {waiter} waited for it in a collective"
    return first["status"], line + "; the other ranks were stopped"


def _popen(cmd: list[str], env: dict[str, str], capture: bool) -> subprocess.Popen[bytes]:
    if not capture:
        return subprocess.Popen(cmd, env=env)
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def launch(args: argparse.Namespace) -> int:
    """Run the job described by parsed launcher ``args``; returns its exit status."""
    if args.nproc < 1:
        print(f"gradsum run: -n must be >= 1, got {args.nproc}", file=sys.stderr)
        return 2
    script_args = [args.script, *args.args]
    watched = not (args.nproc == 1 and args.hostfile is None and args.mpiexec is None)
    try:
        if not watched:
            cmd = [sys.executable, "-m", "gradsum.porting", *(["-m"] if args.module else []),
                   *script_args]
        else:
            cmd = build_command(args.nproc, script_args, mpiexec=args.mpiexec,
                                hostfile=args.hostfile, module=args.module, watched=True)
    except FileNotFoundError as e:
        print(f"gradsum run: {e}", file=sys.stderr)
        return 127
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    run_dir = Path(tempfile.mkdtemp(prefix="gradsum-run-")) if watched else None
    if run_dir is not None:
        env[_rank.RUN_DIR_ENV] = str(run_dir)
    try:
        return _supervise(_popen(cmd, env, watched), args.timeout, run_dir)
    finally:
        if run_dir is not None:
            shutil.rmtree(run_dir, ignore_errors=True)


def _supervise(proc: subprocess.Popen[bytes], timeout: float | None,
               run_dir: Path | None) -> int:
    """Wait for the job: relay its output, stop it once a rank has ended it (or on timeout,
    Ctrl-C, SIGTERM), then name the rank and return its status."""
    relays = [threading.Thread(target=_relay, args=(src, dst), daemon=True)
              for src, dst in ((proc.stdout, sys.stdout), (proc.stderr, sys.stderr))
              if src is not None]
    for t in relays:
        t.start()

    def on_term(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, on_term)
    deadline = None if timeout is None else time.monotonic() + timeout
    ended_at = None
    status = None
    try:
        while status is None:
            try:
                status = proc.wait(0.05 if run_dir is not None or deadline is not None
                                   else None)
            except subprocess.TimeoutExpired:
                now = time.monotonic()
                if deadline is not None and now > deadline:
                    print(f"gradsum run: job exceeded --timeout {timeout}s, terminating",
                          file=sys.stderr)
                    _terminate(proc)
                    return 124
                if ended_at is None and run_dir is not None and any(
                        r["status"] != 0 for r in _rank.read_records(run_dir)):
                    ended_at = now
                if ended_at is not None and now - ended_at > _STOP_S:
                    _terminate(proc)  # mpiexec did not stop the other ranks itself
    except KeyboardInterrupt:
        _terminate(proc)
        return 130
    finally:
        signal.signal(signal.SIGTERM, old)
        for t in relays:
            t.join(2.0)
    if run_dir is None:
        return status
    code, line = _verdict(_rank.read_records(run_dir), status)
    if line is not None:
        print(line, file=sys.stderr, flush=True)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m gradsum.distributed.run``."""
    args = _parser("python -m gradsum.distributed.run").parse_args(argv)
    return launch(args)


if __name__ == "__main__":
    sys.exit(main())
