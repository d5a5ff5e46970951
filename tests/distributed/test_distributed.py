"""gradsum.distributed, DDP, DistributedSampler and the launcher.

MPI jobs are started through the launcher (``python -m gradsum.distributed.run``) with a
timeout that ends the whole job; the worker scripts are in tests/mpi_scripts/. Tests that
need MPI skip when mpi4py or mpiexec is missing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import gradsum
import gradsum.distributed as dist
from gradsum.__main__ import build_parser
from gradsum.distributed.run import build_command
from gradsum.nn.parallel._reducer import assign_buckets
from gradsum.utils.data import DistributedSampler
from mpi_helpers import JOB_TIMEOUT, SCRIPTS, launch, needs_mpi


def assert_ok(res: subprocess.CompletedProcess[str], n: int, marker: str) -> None:
    assert res.returncode == 0, f"exit {res.returncode}\n{res.stdout}\n{res.stderr}"
    assert res.stdout.count(marker) == n, res.stdout + res.stderr


# -- in-process (no MPI needed) -----------------------------------------------------------------
def test_not_initialized_errors() -> None:
    assert not dist.is_initialized()
    assert isinstance(dist.is_available(), bool)
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.get_rank()
    with pytest.raises(ValueError, match="not been initialized"):
        dist.all_reduce(gradsum.ones(2))
    with pytest.raises(ValueError, match="not been initialized"):
        dist.all_reduce_count(3)
    with pytest.raises(ValueError, match="Invalid backend"):
        dist.init_process_group(backend="nccl")


def test_ddp_requires_process_group() -> None:
    from gradsum import nn
    from gradsum.nn.parallel import DistributedDataParallel

    with pytest.raises(ValueError, match="not been initialized"):
        DistributedDataParallel(nn.Linear(2, 2))
    assert nn.parallel.DistributedDataParallel is DistributedDataParallel


def test_bucket_assignment() -> None:
    ps = [gradsum.zeros(n) for n in (10, 300, 5, 1000)]  # float32: 40, 1200, 20, 4000 bytes
    assert assign_buckets(ps, cap_bytes=2000, first_bytes=100) == [[3], [2, 1, 0]]
    assert assign_buckets(ps, cap_bytes=10**6) == [[3, 2, 1, 0]]
    # a large parameter gets its own bucket at its place; the small ones keep filling theirs
    assert assign_buckets(ps, cap_bytes=10**6, direct_bytes=1000) == [[3], [1], [2, 0]]
    # a direct bucket does not count as the (smaller) first bucket
    assert assign_buckets(ps, cap_bytes=2000, first_bytes=100, direct_bytes=4000) == [
        [3], [2, 1], [0]]
    mixed = [gradsum.zeros(4), gradsum.zeros(4, dtype=gradsum.float64), gradsum.zeros(4)]
    assert sorted(map(sorted, assign_buckets(mixed, cap_bytes=10**6))) == [[0, 2], [1]]


@pytest.mark.parametrize("n", [0, 1, 5, 7, 10, 12])
@pytest.mark.parametrize("replicas", [1, 2, 3, 4])
@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_matches_torch(n: int, replicas: int, drop_last: bool) -> None:
    torch = pytest.importorskip(
        "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]")
    from torch.utils.data import DistributedSampler as TorchSampler

    for rank in range(replicas):
        ours = DistributedSampler(n, replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = TorchSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
        shuffled = DistributedSampler(list(range(n)), replicas, rank, drop_last=drop_last)
        assert len(shuffled) == len(TorchSampler(range(n), replicas, rank, drop_last=drop_last))
    del torch


def test_distributed_sampler_shuffle_epochs() -> None:
    def shards(epoch: int) -> list[list[int]]:
        return [DistributedSampler(10, 3, r, seed=4)._indices(epoch) for r in range(3)]

    e0, e1 = shards(0), shards(1)
    assert e0 == shards(0) and e0 != e1  # deterministic per epoch, changes with the epoch
    for e in (e0, e1):
        flat = sorted(i for shard in e for i in shard)
        assert set(flat) == set(range(10)) and len(flat) == 12  # 2 padding repeats
    s = DistributedSampler(10, 3, 1, seed=4)
    s.set_epoch(1)
    assert list(s) == e1[1]
    with pytest.raises(ValueError, match="Invalid rank 3"):
        DistributedSampler(10, 3, 3)
    try:
        import mpi4py  # noqa: F401
    except ImportError:  # (torch's RuntimeError when the distributed package is unavailable)
        with pytest.raises(RuntimeError, match="distributed package to be available"):
            DistributedSampler(10)
    else:
        with pytest.raises(ValueError, match="init_process_group"):
            DistributedSampler(10)


def test_launcher_command_and_cli() -> None:
    cmd = build_command(3, ["t.py", "-x"], mpiexec="/m/mpiexec", hostfile="hosts")
    assert cmd == ["/m/mpiexec", "-n", "3", "-f", "hosts", sys.executable, "t.py", "-x"]
    args = build_parser().parse_args(["run", "-n", "2", "--hostfile", "h", "s.py", "--lr", "1"])
    assert (args.command, args.nproc, args.hostfile, args.script, args.args) == (
        "run", 2, "h", "s.py", ["--lr", "1"])


# -- MPI jobs -----------------------------------------------------------------------------------
@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_collectives(n: int) -> None:
    assert_ok(launch(n, "collectives.py"), n, "collectives OK")


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_ddp_gradients_match_single_process(n: int) -> None:
    """Full-batch equality, no_sync accumulation, unused params, several buckets, views."""
    assert_ok(launch(n, "ddp_grads.py"), n, "ddp grads OK")


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_ddp_large_gradients_reduced_in_place(n: int) -> None:
    """Large .grad buffers are all-reduced where they are: mixed large/small parameters,
    pieces, no_sync, set_to_none both ways, identity, kept .grad untouched, fallback."""
    assert_ok(launch(n, "ddp_direct.py"), n, "ddp direct OK")


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_ddp_training_matches_single_process(n: int) -> None:
    pytest.importorskip("gradsum.optim")
    assert_ok(launch(n, "ddp_train.py"), n, "ddp training OK")


@needs_mpi
def test_ddp_mismatched_models_raise() -> None:
    assert_ok(launch(2, "ddp_mismatch.py"), 2, "mismatch OK")


@needs_mpi
def test_strict_mode_detects_divergence() -> None:
    assert_ok(launch(2, "strict.py", env={"GRADSUM_STRICT": "1"}), 2, "strict OK")


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_failing_rank_ends_job(n: int) -> None:
    t0 = time.monotonic()
    res = launch(n, "rank_fails.py", timeout=30)
    elapsed = time.monotonic() - t0
    log = f"exit {res.returncode} after {elapsed:.1f}s\n{res.stdout}\n{res.stderr}"
    assert res.returncode not in (0, 124), log
    assert "rank 1 failed mid-step" in res.stdout + res.stderr, log
    assert "unreachable" not in res.stdout, log
    assert elapsed < 25, log


@needs_mpi
def test_launcher_forwards_exit_code() -> None:
    assert launch(2, "exit_code.py", "0").returncode == 0
    assert launch(2, "exit_code.py", "5").returncode == 5
    assert launch(2, "exit_code.py", "6", "1").returncode == 6


@needs_mpi
def test_console_script_timeout_ends_hanging_job() -> None:
    """``gradsum run`` (the CLI) with ``--timeout`` ends a hanging job with status 124."""
    t0 = time.monotonic()
    res = subprocess.run(
        [sys.executable, "-m", "gradsum", "run", "-n", "2", "--timeout", "3",
         str(SCRIPTS / "hang.py")],
        capture_output=True, text=True, timeout=60,
    )
    assert res.returncode == 124, res.stdout + res.stderr
    assert time.monotonic() - t0 < 20


@needs_mpi
def test_ctrl_c_terminates_job() -> None:
    """SIGINT to the launcher (Ctrl-C) ends every rank; the launcher returns 130."""
    import threading

    proc = subprocess.Popen(
        [sys.executable, "-m", "gradsum.distributed.run", "-n", "2", str(SCRIPTS / "hang.py")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )
    chunks: list[str] = []
    reader = threading.Thread(target=lambda: chunks.extend(iter(proc.stdout.readline, "")),
                              daemon=True)  # type: ignore[union-attr]
    reader.start()
    try:
        deadline = time.monotonic() + 30
        # both ranks running (lines of two ranks can be merged, so count occurrences)
        while "".join(chunks).count("started") < 2:
            assert time.monotonic() < deadline and proc.poll() is None, "".join(chunks)
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 130
    finally:
        if proc.poll() is None:  # the launcher forwards SIGTERM to mpiexec, which ends ranks
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        reader.join(timeout=5)


@needs_mpi
def test_readme_ddp_example_runs(tmp_path: Path) -> None:
    """The README's DDP training script runs on 2 ranks and ends with identical parameters."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    start = readme.index("# train.py, run with")
    code = readme[start:readme.index("```", start)]
    code = code.replace(
        "dist.destroy_process_group()",
        "flat = gradsum.cat([p.detach().reshape(-1) for p in model.parameters()])\n"
        "copies = [gradsum.zeros_like(flat) for _ in range(dist.get_world_size())]\n"
        "dist.all_gather(copies, flat)\n"
        "assert all(gradsum.equal(c, copies[0]) for c in copies)\n"
        "print('README example ok')\n"
        "dist.destroy_process_group()",
    )
    script = tmp_path / "train.py"
    script.write_text(code)
    cmd = [sys.executable, "-m", "gradsum.distributed.run", "-n", "2", "--timeout",
           str(JOB_TIMEOUT), str(script)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=JOB_TIMEOUT + 20,
                         env={**os.environ, "GRADSUM_STRICT": "0"})
    assert_ok(subprocess.CompletedProcess(cmd, res.returncode, res.stdout, res.stderr), 2,
              "README example ok")
