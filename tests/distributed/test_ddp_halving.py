"""DDP's halving schedule for large gradients (power-of-two worlds): the same bits as the
fallback path (scaled in place by 1/world, then MPI's sum) for values across the whole float
range, and torch's arithmetic at 2 ranks; a 3-rank world takes the fallback."""

from __future__ import annotations

import pytest

from mpi_helpers import launch, needs_mpi


@needs_mpi
@pytest.mark.parametrize("n", [2, 3, 4])
def test_halving_matches_fallback_bit_for_bit(n: int) -> None:
    res = launch(n, "ddp_halving.py", timeout=120)
    assert res.returncode == 0, f"exit {res.returncode}\n{res.stdout}\n{res.stderr}"
    assert res.stdout.count("ddp halving OK") == n, res.stdout + res.stderr
