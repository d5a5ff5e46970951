"""Side by side with torch: the in-place random fills (uniform_, normal_, bernoulli_,
exponential_, random_) at the edges of their domains."""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import same_error  # noqa: E402


# -- left for the owners of other files (see the messages) -------------------------------------
def test_uniform_with_from_above_to() -> None:
    assert same_error(lambda lib: lib.empty(3).uniform_(5.0, 0.0)) is RuntimeError


def test_normal_with_a_negative_std() -> None:
    assert same_error(lambda lib: lib.empty(3).normal_(0.0, -1.0)) is RuntimeError


@pytest.mark.parametrize("fill", [
    lambda t: t.bernoulli_(1.5), lambda t: t.bernoulli_(-0.1), lambda t: t.exponential_(0.0),
    lambda t: t.exponential_(-1.0), lambda t: t.random_(2, 2), lambda t: t.random_(5, 2),
    lambda t: t.uniform_(float("nan"), 1.0), lambda t: t.uniform_(0.0, float("inf")),
    lambda t: t.normal_(0.0, float("nan")),
])
def test_random_fill_domain_errors(fill: Any) -> None:
    assert same_error(lambda lib: fill(lib.empty(3))) is RuntimeError


@pytest.mark.parametrize("fill", [
    lambda t: t.uniform_(1.0, 1.0), lambda t: t.normal_(2.0, 0.0), lambda t: t.bernoulli_(1.0),
    lambda t: t.bernoulli_(0.0),
])
def test_random_fill_degenerate_domains(fill: Any) -> None:
    g, t = fill(gradsum.empty(3)), fill(torch.empty(3))
    assert g.tolist() == t.tolist()
