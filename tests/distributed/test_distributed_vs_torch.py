"""gradsum.distributed, DistributedDataParallel and DistributedSampler against torch 2.13.

The sampler and the signatures are compared with torch in this process; the collectives and
DDP run in one 2-rank MPI job (tests/mpi_scripts/distributed_vs_torch.py) whose expected values
were observed with torch.distributed on gloo, 2 ranks.
"""

from __future__ import annotations

import inspect
import re
import subprocess

import pytest

import gradsum.distributed as dist
from gradsum.nn.parallel import DistributedDataParallel
from gradsum.utils.data import DistributedSampler
from mpi_helpers import launch, needs_mpi


def _torch() -> object:
    return pytest.importorskip(
        "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]")


# -- DistributedSampler (no MPI: num_replicas and rank are explicit) ----------------------------
@pytest.mark.parametrize("n", [0, 1, 2, 5, 7, 13, 100])
@pytest.mark.parametrize("replicas", [1, 2, 3, 4])
def test_sampler_shuffled_indices_match_torch(n: int, replicas: int) -> None:
    """torch permutes with its CPU randperm on a generator seeded with seed + epoch; gradsum
    used its own generator, so every shuffled list differed."""
    _torch()
    from torch.utils.data import DistributedSampler as TorchSampler

    for rank in range(replicas):
        for seed in (0, 1, 42, 2**32 + 3, -7):
            for drop_last in (False, True):
                ours = DistributedSampler(range(n), replicas, rank, True, seed, drop_last)
                theirs = TorchSampler(range(n), replicas, rank, True, seed, drop_last)
                for epoch in (0, 1, 5):
                    ours.set_epoch(epoch)
                    theirs.set_epoch(epoch)
                    assert list(ours) == list(theirs), (n, replicas, rank, seed, drop_last)
                    assert len(ours) == len(theirs)


def test_sampler_without_process_group_raises_value_error() -> None:
    """torch: get_world_size()/get_rank() raise ValueError("Default process group has not
    been initialized, ..."); gradsum raised a RuntimeError of its own."""
    pytest.importorskip("mpi4py", reason="without mpi4py the sampler says the distributed "
                        "package is unavailable (torch's RuntimeError for that case)")
    assert not dist.is_initialized()
    for kwargs in ({}, {"num_replicas": 2}, {"rank": 0}):
        with pytest.raises(ValueError, match=r"^Default process group has not been initialized"):
            DistributedSampler(range(4), **kwargs)


@pytest.mark.parametrize(("replicas", "rank"), [(0, 0), (-1, 0), (2, 2), (2, -1)])
def test_sampler_invalid_rank_message(replicas: int, rank: int) -> None:
    torch = _torch()
    with pytest.raises(ValueError) as theirs:
        torch.utils.data.DistributedSampler(range(4), replicas, rank)
    with pytest.raises(ValueError) as ours:
        DistributedSampler(range(4), replicas, rank)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize(("seed", "exc"), [(1.5, RuntimeError), (2**64, ValueError)])
def test_sampler_bad_seed_raises_when_iterated(seed: object, exc: type[Exception]) -> None:
    torch = _torch()
    with pytest.raises(exc) as theirs:
        list(torch.utils.data.DistributedSampler(range(4), 2, 0, seed=seed))
    with pytest.raises(exc) as ours:
        list(DistributedSampler(range(4), 2, 0, seed=seed))
    assert str(ours.value).startswith(str(theirs.value))


# -- names and signatures -----------------------------------------------------------------------
def test_reduce_op_names_and_values_match_torch() -> None:
    torch = _torch()
    for name in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"):
        assert getattr(dist.ReduceOp, name).value == int(getattr(torch.distributed.ReduceOp,
                                                                 name)), name


def test_ddp_signature_matches_torch() -> None:
    """torch 2.13 has 21 positional parameters; gradsum stopped after static_graph."""
    torch = _torch()
    theirs = inspect.signature(torch.nn.parallel.DistributedDataParallel).parameters
    ours = inspect.signature(DistributedDataParallel).parameters
    assert list(ours)[: len(theirs)] == list(theirs)
    for name, p in theirs.items():
        assert ours[name].default == p.default, name
        assert ours[name].kind == p.kind, name


# -- collectives and DDP in a 2-rank job --------------------------------------------------------
@pytest.fixture(scope="module")
def job() -> subprocess.CompletedProcess[str]:
    return launch(2, "distributed_vs_torch.py")


@needs_mpi
@pytest.mark.parametrize("section", [
    "bitwise_reduce_ops",               # ReduceOp.BAND/BOR/BXOR were missing
    "all_gather_dtype_is_value_error",  # torch: ValueError; gradsum: RuntimeError
    "avg_of_integers_and_bad_src",      # torch's phrases start the messages
    "ddp_constructor_like_torch",       # bucket_cap_mb <= 0, attributes, argument errors
    "sampler_from_group",               # defaults from the group, torch's permutation
])
def test_mpi_section(job: subprocess.CompletedProcess[str], section: str) -> None:
    log = f"exit {job.returncode}\n{job.stdout}\n{job.stderr}"
    assert len(re.findall(rf"rank \d: {section} OK", job.stdout)) == 2, log
    assert job.returncode == 0, log
