"""The default generator's seed, as torch's: random per process (a 64-bit value from the
operating system's randomness, which ``initial_seed()`` returns), repeatable once
``manual_seed(s)`` is called; ``seed()`` reseeds randomly. A ``Generator()`` the user makes
starts from torch's fixed default seed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import gradsum
from diff_helpers import torch_or_skip

_SRC = str(Path(gradsum.__file__).resolve().parents[1])


def _run(code: str, lib: str = "gradsum") -> Any:
    """Run ``code`` (which prints one JSON value) in a fresh interpreter importing ``lib``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = _SRC + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", f"import json, {lib}\n{code}"], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, f"exit {out.returncode}\n{out.stdout}\n{out.stderr}"
    return json.loads(out.stdout)


_DRAW = "print(json.dumps([gradsum.initial_seed(), gradsum.rand(3).tolist()]))"


def test_two_processes_start_from_different_seeds_and_draw_different_numbers() -> None:
    (seed_a, draw_a), (seed_b, draw_b) = _run(_DRAW), _run(_DRAW)
    assert seed_a != seed_b
    assert draw_a != draw_b
    for s in (seed_a, seed_b):
        assert isinstance(s, int) and 0 <= s < 2**64


def test_manual_seed_makes_two_processes_draw_the_same_numbers() -> None:
    code = ("gradsum.manual_seed(0)\n"
            "print(json.dumps([gradsum.initial_seed(), gradsum.rand(3).tolist(), "
            "gradsum.randn(2).tolist(), gradsum.randint(0, 100, (4,)).tolist()]))")
    a, b = _run(code), _run(code)
    assert a == b
    assert a[0] == 0


def test_manual_seed_in_process_repeats_the_stream() -> None:
    gradsum.manual_seed(123)
    a = gradsum.rand(5)
    gradsum.manual_seed(123)
    assert gradsum.equal(a, gradsum.rand(5))


def test_seed_reseeds_randomly_and_initial_seed_reports_it() -> None:
    s1 = gradsum.seed()
    assert gradsum.initial_seed() == s1
    a = gradsum.rand(4)
    s2 = gradsum.seed()
    assert s2 != s1
    assert gradsum.initial_seed() == s2
    gradsum.manual_seed(s1)  # the reported seed reproduces the stream
    assert gradsum.equal(a, gradsum.rand(4))


def test_seeds_span_64_bits() -> None:
    """As torch's, the random seeds are 64-bit values: of 64 of them, some are >= 2**63."""
    seeds = [gradsum.seed() for _ in range(64)]
    assert len(set(seeds)) == 64
    assert all(0 <= s < 2**64 for s in seeds)
    assert any(s >= 2**63 for s in seeds)


def test_a_users_generator_starts_from_torchs_fixed_default_seed() -> None:
    g1, g2 = gradsum.Generator(), gradsum.Generator()
    assert g1.initial_seed() == 67280421310721
    assert gradsum.equal(gradsum.rand(3, generator=g1), gradsum.rand(3, generator=g2))


# -- against torch ------------------------------------------------------------------------------
@pytest.mark.parametrize("s", [0, 1, 2**63, 2**64 - 1, -1, -(2**63)])
def test_initial_seed_after_manual_seed_matches_torch(s: int) -> None:
    torch = torch_or_skip()
    state = torch.get_rng_state()
    try:
        torch.manual_seed(s)
        gradsum.manual_seed(s)
        assert gradsum.initial_seed() == torch.initial_seed()
    finally:
        torch.set_rng_state(state)


def test_the_fresh_process_behaviour_matches_torch() -> None:
    """In torch too, two processes start from different 64-bit seeds, and a user's
    Generator() from the same fixed one."""
    torch_or_skip()
    code = "print(json.dumps([{m}.initial_seed(), {m}.Generator().initial_seed()]))"
    for lib in ("torch", "gradsum"):
        (a, ga), (b, gb) = _run(code.format(m=lib), lib), _run(code.format(m=lib), lib)
        assert a != b and 0 <= a < 2**64 and 0 <= b < 2**64, lib
        assert ga == gb == 67280421310721, lib


def test_seed_returns_a_64_bit_value_as_torch() -> None:
    torch = torch_or_skip()
    state = torch.get_rng_state()
    try:
        t = torch.seed()
        assert torch.initial_seed() == t
    finally:
        torch.set_rng_state(state)
    g = gradsum.seed()
    assert gradsum.initial_seed() == g
    assert type(g) is type(t) is int
