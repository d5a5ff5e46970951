"""The C allocator tuning gradsum applies at import (``_process_settings.tune_allocator``):
on glibc the mmap and trim thresholds are raised so that NumPy's temporaries are reused, not
page-faulted in anew on every call; ``GRADSUM_MALLOC_TUNING=0`` or glibc's own variables
leave the allocator alone. Each case imports gradsum in a fresh interpreter."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import textwrap

import pytest

_GLIBC = platform.libc_ver()[0] == "glibc"


def _tuned(env: dict[str, str]) -> str:
    code = "import gradsum; print(repr(gradsum._process_settings.allocator_tuned))"
    full = {k: v for k, v in os.environ.items()
            if k not in ("GRADSUM_MALLOC_TUNING", "MALLOC_MMAP_THRESHOLD_",
                         "MALLOC_TRIM_THRESHOLD_")}
    full.update(env)
    out = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True,
                         text=True, timeout=120, check=True)
    return out.stdout.strip()


@pytest.mark.skipif(not _GLIBC, reason="the thresholds are glibc's")
def test_tuned_on_import() -> None:
    assert _tuned({}) == "True"


def test_switched_off_by_the_environment() -> None:
    assert _tuned({"GRADSUM_MALLOC_TUNING": "0"}) == "'GRADSUM_MALLOC_TUNING=0'"
    if _GLIBC:
        assert "MALLOC" in _tuned({"MALLOC_TRIM_THRESHOLD_": "1000000"})


@pytest.mark.skipif(not _GLIBC, reason="the thresholds are glibc's")
def test_temporaries_are_not_page_faulted_in_again() -> None:
    """A kernel of many full-size temporaries (log_ndtr's forward and backward on 64K
    float32 elements) runs without page faults once warm; with the tuning off it faulted
    about a thousand times per call on the machine this was written on (not asserted: that
    depends on the heap's state)."""
    code = textwrap.dedent("""
        import resource
        import numpy as np
        import gradsum
        x = gradsum.tensor(np.random.default_rng(0).standard_normal((64, 1024)),
                           dtype=gradsum.float32, requires_grad=True)
        def step():
            x.grad = None
            gradsum.special.log_ndtr(x).sum().backward()
        for _ in range(3):
            step()
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(20):
            step()
        print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 20)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert float(out.stdout.strip()) < 50, out.stdout
