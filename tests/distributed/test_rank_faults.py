"""A rank that ends for any reason ends the whole job within seconds, with that rank's exit
status (``128 + N`` for signal ``N``) and a line naming the rank and the cause; output lines
of different ranks never mix (each is prefixed with its rank).

Run at 2 and 4 ranks through the launcher (``gradsum run``), each job under 10 s; the cases
outside ``DEFAULT`` are marked ``slow`` (CI runs them).
"""

from __future__ import annotations

import re
import time

import pytest
from tests.mpi_helpers import launch, needs_mpi

from gradsum.distributed import _rank
from gradsum.distributed.run import _verdict

#: (how the rank ends, where the others wait) -> (exit status, words in the launcher's line)
CASES = {
    ("raise", "barrier"): (1, "ValueError: rank {who} failed on purpose"),
    ("exit3", "barrier"): (3, "sys.exit(3)"),
    ("exit0", "barrier"): (0, "sys.exit(0)"),
    ("exit0", "work"): (0, "sys.exit(0)"),
    ("exit0", "ddp"): (0, "sys.exit(0)"),
    ("os_exit3", "barrier"): (3, "exited with status 3 before its script ended"),
    ("os_exit0", "barrier"): (0, "exited with status 0 before its script ended"),
    ("kill", "barrier"): (137, "killed by signal 9 (SIGKILL)"),
    ("exit0", "init"): (0, "sys.exit(0)"),  # before the rank started MPI
    ("exit4", "init"): (4, "sys.exit(4)"),
}
#: the cases of the default run (the others are marked slow: the default run stays short)
DEFAULT = {2: {("raise", "barrier"), ("exit3", "barrier"), ("exit0", "barrier"),
               ("os_exit3", "barrier"), ("kill", "barrier"), ("exit0", "init")},
           4: {("exit0", "barrier"), ("kill", "barrier")}}


def _params() -> list[object]:
    out: list[object] = []
    for n in (2, 4):
        for key in CASES:
            marks = [] if key in DEFAULT[n] else [pytest.mark.slow]
            out.append(pytest.param(n, *key, marks=marks, id=f"{n}-{key[0]}-{key[1]}"))
    return out


@needs_mpi
@pytest.mark.parametrize(("n", "how", "where"), _params())
def test_a_rank_that_ends_ends_the_job(n: int, how: str, where: str) -> None:
    who = n - 1
    status, words = CASES[(how, where)]
    t0 = time.monotonic()
    res = launch(n, "rank_ends.py", how, str(who), where, timeout=30)
    elapsed = time.monotonic() - t0
    log = f"exit {res.returncode} after {elapsed:.1f}s\n{res.stdout}\n{res.stderr}"
    assert res.returncode == status, log
    assert elapsed < 10, log
    line = [ln for ln in res.stderr.splitlines() if ln.startswith("gradsum run: rank")]
    assert len(line) == 1, log
    assert line[0].startswith(f"gradsum run: rank {who} ended the job: "), log
    assert words.format(who=who) in line[0] and f"(exit status {status})" in line[0], log
    assert "past the collective" not in res.stdout, log
    assert "BAD TERMINATION" not in res.stdout + res.stderr, log  # MPICH's banner is replaced
    if how.startswith("exit0"):  # a waiting rank says why it stopped waiting
        assert "PeerEndedError: Connection closed by peer: rank" in res.stderr, log


@needs_mpi
@pytest.mark.parametrize("n", [2, pytest.param(4, marks=pytest.mark.slow)])
def test_output_lines_never_interleave(n: int) -> None:
    res = launch(n, "interleave.py", timeout=30)
    assert res.returncode == 0, res.stderr
    pattern = re.compile(r"\[(\d)\] rank (\d) line (\d+) x* end")
    seen = {r: 0 for r in range(n)}
    for ln in res.stdout.splitlines():
        m = pattern.fullmatch(ln)
        assert m is not None and m[1] == m[2], ln
        assert int(m[3]) == seen[int(m[1])], ln  # each rank's lines in order, none lost
        seen[int(m[1])] += 1
    assert seen == {r: 200 for r in range(n)}
    for r in range(n):  # a last line without its newline is still one whole line
        assert f"[{r}] rank {r} on stderr, no newline at the end" in res.stderr.splitlines()


def _rec(rank: int, kind: str, status: int, cause: str, t: float,
         peer: int | None = None) -> dict[str, object]:
    return {"rank": rank, "kind": kind, "status": status, "cause": cause, "time": t,
            "peer": peer}


def test_verdict_names_the_first_rank_that_ended_the_job() -> None:
    # every script ended with 0: the job succeeded, no line
    ok = [_rec(r, k, 0, "the script ended", t) for r in (0, 1) for k, t in
          (("script", 1.0), ("process", 2.0))]
    assert _verdict(ok, 0) == (0, None)
    # rank 1 raised first; rank 0 was killed afterwards (a bystander)
    recs = [_rec(1, "script", 1, "ValueError: x", 1.0), _rec(1, "process", 1, "exited", 1.1),
            _rec(0, "process", 143, "killed by signal 15 (SIGTERM)", 1.2)]
    code, line = _verdict(recs, 9)
    assert code == 1 and line is not None and line.startswith("gradsum run: rank 1 ended")
    # rank 0 raised because it waited for rank 1, whose script had ended with sys.exit(0)
    recs = [_rec(1, "script", 0, "sys.exit(0)", 1.0),
            _rec(0, "script", 1, "PeerEndedError: ...", 2.0, peer=1),
            _rec(1, "process", 137, "killed by signal 9 (SIGKILL)", 2.1)]
    code, line = _verdict(recs, 1)
    assert code == 0 and line is not None
    assert "rank 1 ended the job: sys.exit(0)" in line and "while rank 0 waited" in line
    # no record (a rank on another machine): mpiexec's status, said as such
    assert _verdict([], 7) == (7, "gradsum run: mpiexec ended with status 7 (no rank "
                                  "recorded how it ended)")


def test_describe_exit_maps_codes_as_the_interpreter_does() -> None:
    assert _rank.describe_exit(None) == (0, "sys.exit(None)")
    assert _rank.describe_exit(3) == (3, "sys.exit(3)")
    assert _rank.describe_exit(256 + 3) == (3, "sys.exit(259)")
    assert _rank.describe_exit("stop") == (1, "sys.exit('stop')")


def test_a_wait_for_an_ended_rank_raises_torchs_backend_error() -> None:
    """``except dist.DistBackendError`` (torch's type for a peer's closed connection) catches
    the error a waiting rank raises; the classes sit where torch's do."""
    import gradsum.distributed as dist
    from gradsum.distributed._core import PeerEndedError

    assert issubclass(PeerEndedError, dist.DistBackendError)
    assert issubclass(dist.DistBackendError, dist.DistError)
    assert issubclass(dist.DistError, RuntimeError)
    torch_dist = pytest.importorskip("torch.distributed", reason="torch not installed")
    ours = [c.__name__ for c in dist.DistBackendError.__mro__]
    assert ours == [c.__name__ for c in torch_dist.DistBackendError.__mro__]
