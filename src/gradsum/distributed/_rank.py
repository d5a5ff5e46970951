"""How each rank of a ``gradsum run`` job is run, watched, and reported when it ends.

``gradsum run -n N`` starts every rank as ``python -m gradsum.distributed._rank script ...``.
That process forks: the child runs the script (it is the MPI rank); the parent stays small,
relays the child's output line by line with a ``[rank] `` prefix (one ``write`` per line, so
lines of different ranks never mix), forwards termination signals, and, when the child ends
for any reason (the script's end, ``sys.exit(n)``, an exception, ``os._exit``, a signal),
writes an *end record* and exits with the child's status (``128 + signal`` for a signal).

End records are small JSON files in the job's run directory (``GRADSUM_RUN_DIR``, made by the
launcher): ``<rank>.script`` written by the child when the script ends (its cause in words)
and ``<rank>.process`` written by the parent when the child has gone (its exit status). The
launcher reads them to name the rank that ended the job and to return its status; a rank
waiting in a collective reads them to raise instead of waiting for ever for a rank that is
gone (:func:`ended_peer`, polled by the collectives' wait loop in :mod:`._core`).

A script that ends with status 0 does not end the job: its rank waits, in a barrier, for the
others to end too (MPI's finalisation needs every rank). Any other end does: the rank leaves
without MPI's finalisation, and ``mpiexec`` stops the other ranks.

Example:
    >>> from gradsum.distributed._rank import describe_exit
    >>> describe_exit(3), describe_exit(None), describe_exit("bad config")
    ((3, 'sys.exit(3)'), (0, 'sys.exit(None)'), (1, "sys.exit('bad config')"))
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import sys
import time
import traceback
from pathlib import Path
from typing import Any

RUN_DIR_ENV = "GRADSUM_RUN_DIR"
_FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2)
_PR_SET_PDEATHSIG = 1


def rank_from_env() -> int | None:
    """This process's rank as the MPI launcher set it in the environment (before MPI starts)."""
    for name in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"):
        value = os.environ.get(name)
        if value is not None and value.isdigit():
            return int(value)
    return None


def run_dir() -> Path | None:
    """The job's run directory, when this process runs under ``gradsum run`` (else None)."""
    value = os.environ.get(RUN_DIR_ENV)
    return Path(value) if value and os.path.isdir(value) else None


def watched() -> bool:
    """Whether this process is a rank started by ``gradsum run``'s wrapper (which reports how
    it ends and ends the job itself, so the collectives need no ``MPI_Abort``)."""
    return os.environ.get("GRADSUM_RANK_WRAPPED") == "1"


def write_record(kind: str, rank: int, status: int, cause: str, peer: int | None = None) -> None:
    """Write ``<rank>.<kind>`` (``script`` or ``process``) into the run directory, atomically."""
    d = run_dir()
    if d is None:
        return
    rec = {"rank": rank, "status": status, "cause": cause, "peer": peer, "time": time.time()}
    tmp = d / f".{rank}.{kind}.{os.getpid()}"
    with contextlib.suppress(OSError):
        tmp.write_text(json.dumps(rec))
        os.replace(tmp, d / f"{rank}.{kind}")


def read_records(d: Path) -> list[dict[str, Any]]:
    """Every complete end record in ``d``, oldest first."""
    out = []
    for p in d.glob("[0-9]*.*"):
        with contextlib.suppress(OSError, ValueError):
            rec = json.loads(p.read_text())
            rec["kind"] = p.suffix[1:]
            out.append(rec)
    return sorted(out, key=lambda r: r["time"])


class PeerWatch:
    """Which other rank of the job has ended, read from the run directory at most every
    ``every`` seconds (a collective's wait loop calls :meth:`ended` on each turn)."""

    __slots__ = ("dir", "every", "found", "me", "next_at")

    def __init__(self, d: Path, me: int, every: float = 0.05) -> None:
        self.dir, self.me, self.every = d, me, every
        self.next_at = 0.0
        self.found: dict[str, Any] | None = None

    def ended(self) -> dict[str, Any] | None:
        """The first record of another rank, or None (cached once found)."""
        if self.found is None:
            now = time.monotonic()
            if now >= self.next_at:
                self.next_at = now + self.every
                recs = [r for r in read_records(self.dir) if r["rank"] != self.me]
                self.found = recs[0] if recs else None
        return self.found


def ended_peer(me: int) -> PeerWatch | None:
    """A :class:`PeerWatch` for rank ``me`` when the job runs under ``gradsum run``."""
    d = run_dir()
    return PeerWatch(d, me) if d is not None else None


def describe_exit(code: object) -> tuple[int, str]:
    """The exit status and the words for ``sys.exit(code)``, as the interpreter maps it."""
    if code is None or isinstance(code, int):
        return (0 if code is None else code & 0xFF), f"sys.exit({code!r})"
    return 1, f"sys.exit({code!r})"


def _one_line(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}".splitlines()[0] if str(e) else type(e).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def _finish_together() -> None:
    """Wait in a barrier for every rank to end its script (MPI's finalisation needs them all);
    a rank that ended otherwise brings ``mpiexec`` to stop this one.

    A rank whose script never started MPI starts it here: another rank may be starting it
    (its ``MPI_Init`` waits for every rank), and must then find this one, and its end record.
    """
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is None:
        if os.environ.get("PMI_SIZE", "1") in ("", "0", "1"):
            return
        try:
            from mpi4py import MPI as mpi
        except ImportError:  # pragma: no cover - a job without mpi4py never used MPI
            return
    if not mpi.Is_initialized() or mpi.Is_finalized():
        return
    world = mpi.COMM_WORLD
    if world.Get_size() == 1:
        return
    req = world.Ibarrier()
    pause = 1e-4
    while not req.Test():
        time.sleep(pause)
        pause = min(pause * 2, 0.01)


def _run_child(argv: list[str], rank: int) -> int:
    """Run the script; write its end record; the status to end with."""
    from gradsum import porting

    peer = None
    try:
        status, exc = porting._main_outcome(argv)
        cause = (_one_line(exc) if exc is not None else "the script ended" if status == 0
                 else f"the script could not be started (status {status})")
        peer = getattr(exc, "peer", None)
    except SystemExit as e:
        status, cause = describe_exit(e.code)
        if status and not isinstance(e.code, int) and e.code is not None:
            print(e.code, file=sys.stderr)
    except BaseException as e:  # KeyboardInterrupt and the like: as the interpreter reports
        traceback.print_exc()
        status, cause = (130 if isinstance(e, KeyboardInterrupt) else 1), _one_line(e)
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    write_record("script", rank, status, cause, peer)
    return status


def _child(argv: list[str], rank: int, out_w: int, err_w: int) -> None:
    with contextlib.suppress(Exception):  # Linux: die with the parent (killed by mpiexec)
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    os.close(out_w)
    os.close(err_w)
    os.environ["GRADSUM_RANK_WRAPPED"] = "1"
    status = _run_child(argv, rank)
    if status == 0:
        _finish_together()
        sys.exit(0)  # the interpreter's own shutdown: atexit handlers, MPI's finalisation
    import atexit

    with contextlib.suppress(BaseException):
        atexit._run_exitfuncs()  # the script's handlers; not MPI's finalisation (it would wait)
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(status)


class _Relay:
    """Copy a child's output to ours, one prefixed line per ``write``."""

    def __init__(self, prefix: bytes) -> None:
        self.prefix = prefix
        self.partial: dict[int, bytes] = {}

    def feed(self, src: int, dst: int, data: bytes) -> None:
        buf = self.partial.get(src, b"") + data
        *lines, rest = buf.split(b"\n")
        self.partial[src] = rest
        if lines:
            _write_all(dst, b"".join(self.prefix + ln + b"\n" for ln in lines))

    def flush(self, src: int, dst: int) -> None:
        rest = self.partial.pop(src, b"")
        if rest:
            _write_all(dst, self.prefix + rest + b"\n")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except InterruptedError:
            continue
        except OSError:  # our reader has gone (mpiexec ended): nothing left to tell
            return
        view = view[n:]


def _monitor(pid: int, rank: int, out_r: int, err_r: int) -> int:
    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):  # the child has ended already
            os.kill(pid, signum)

    for sig in _FORWARDED:
        signal.signal(sig, forward)
    relay = _Relay(f"[{rank}] ".encode())
    sel = selectors.DefaultSelector()
    sel.register(out_r, selectors.EVENT_READ, 1)
    sel.register(err_r, selectors.EVENT_READ, 2)
    wait_status = None
    drain_until = None
    while sel.get_map():
        for key, _ in sel.select(timeout=0.05):
            try:
                data = os.read(key.fd, 65536)
            except InterruptedError:
                continue
            if data:
                relay.feed(key.fd, key.data, data)
            else:
                relay.flush(key.fd, key.data)
                sel.unregister(key.fd)
                os.close(key.fd)
        if wait_status is None:
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                wait_status = st
                drain_until = time.monotonic() + 0.5  # what is still in the pipes
        if drain_until is not None and time.monotonic() > drain_until:
            break  # a grandchild holds the pipes open: do not wait for it
    for fd, dst in ((out_r, 1), (err_r, 2)):
        if fd in sel.get_map():
            relay.flush(fd, dst)
    if wait_status is None:
        _, wait_status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(wait_status):
        signum = os.WTERMSIG(wait_status)
        status = 128 + signum
        cause = f"killed by signal {signum} ({signal.Signals(signum).name})"
    else:
        status = os.WEXITSTATUS(wait_status)
        cause = f"the process exited with status {status}"
    write_record("process", rank, status, cause)
    return status


def main(argv: list[str] | None = None) -> int:
    """``python -m gradsum.distributed._rank [-m] script.py [args]``: one watched rank."""
    argv = list(sys.argv[1:] if argv is None else argv)
    rank = rank_from_env()
    rank = -1 if rank is None else rank
    sys.stdout.flush()
    sys.stderr.flush()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(out_r)
        os.close(err_r)
        _child(argv, rank, out_w, err_w)
        os._exit(0)  # not reached
    os.close(out_w)
    os.close(err_w)
    # (this process keeps its copy of the rank's link to mpiexec, PMI_FD, open: mpiexec sees
    # the rank end when this process exits, after it has written the end record)
    return _monitor(pid, rank, out_r, err_r)


if __name__ == "__main__":
    sys.exit(main())
