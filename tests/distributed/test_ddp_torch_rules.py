"""DDP and collectives against torch 2.13's documented behaviour (established with
torch.distributed on gloo, 2 ranks; the values are written into tests/mpi_scripts/
ddp_torch_rules.py, so these tests need MPI but not torch.distributed).

One 2-rank job runs every section of the script once; each test checks its section.
"""

from __future__ import annotations

import inspect
import re
import subprocess

import pytest

import gradsum.distributed as dist
from gradsum.nn.parallel import DistributedDataParallel
from mpi_helpers import launch, needs_mpi


@pytest.fixture(scope="module")
def rules_job() -> subprocess.CompletedProcess[str]:
    """``ddp_torch_rules.py`` on 2 ranks through the launcher, killed on timeout."""
    return launch(2, "ddp_torch_rules.py")


def _section_ok(res: subprocess.CompletedProcess[str], name: str) -> None:
    log = f"exit {res.returncode}\n{res.stdout}\n{res.stderr}"
    assert len(re.findall(rf"rank \d: {name} OK", res.stdout)) == 2, log


@needs_mpi
def test_no_sync_is_decided_by_the_forward(rules_job: subprocess.CompletedProcess[str]) -> None:
    """torch: a forward outside no_sync synchronises its backward even inside no_sync, and a
    forward inside no_sync accumulates locally even when its backward runs outside."""
    _section_ok(rules_job, "no_sync_forward_decides")


@needs_mpi
def test_buffers_broadcast_after_grad_forwards(
        rules_job: subprocess.CompletedProcess[str]) -> None:
    """torch: buffers are broadcast before a forward iff the previous forward had grad
    enabled outside no_sync, in eval mode too."""
    _section_ok(rules_job, "buffer_broadcast_rule")


@needs_mpi
def test_broadcast_buffers_false_skips_init_sync(
        rules_job: subprocess.CompletedProcess[str]) -> None:
    _section_ok(rules_job, "broadcast_buffers_false")


@needs_mpi
def test_forward_sync_buffers_flag(rules_job: subprocess.CompletedProcess[str]) -> None:
    _section_ok(rules_job, "forward_sync_buffers")


@needs_mpi
def test_ddp_constructor_argument_errors(rules_job: subprocess.CompletedProcess[str]) -> None:
    """No parameter requiring grad: RuntimeError; device_ids on a CPU module: ValueError."""
    _section_ok(rules_job, "constructor_errors")


@needs_mpi
def test_destroy_twice_raises_assertion(rules_job: subprocess.CompletedProcess[str]) -> None:
    _section_ok(rules_job, "destroy_twice")
    assert rules_job.returncode == 0, rules_job.stdout + rules_job.stderr


def test_destroy_before_init_raises_assertion() -> None:
    assert not dist.is_initialized()
    with pytest.raises(AssertionError, match=r"^Process group cannot be None"):
        dist.destroy_process_group()


def test_ddp_positional_parameters_match_torch() -> None:
    torch = pytest.importorskip(
        "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]")
    theirs = list(inspect.signature(torch.nn.parallel.DistributedDataParallel).parameters)
    ours = list(inspect.signature(DistributedDataParallel).parameters)
    assert ours[:12] == theirs[:12]
    assert "forward_sync_buffers" in ours
