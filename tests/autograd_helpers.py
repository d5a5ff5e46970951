"""Shared helpers of the autograd side-by-side tests: run one program ``program(lib)`` in
gradsum and in torch and compare a comparable form of the results. Two forms:

- exact (test_function, test_grad, test_grad_mode, test_views_inplace): tensors as
  ``("T", values, requires_grad)``, exceptions as their type, warnings ignored;
- rounded (test_anomaly_mode, test_graph, test_saved_tensor_hooks, test_variable): tensors as
  ``("T", flat values rounded to 5 places, requires_grad)``, dicts too, exceptions as their
  type's name and the first 40 characters of the message.

torch is imported on first use (the test modules skip themselves first when it is missing).
The summary form shared with the ops and tensor tests (``same_summary``) is in diff_helpers."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import gradsum
from diff_helpers import _torch


# -- exact form ---------------------------------------------------------------------------------
def exact_form(x: Any) -> Any:
    """A comparable form: tensors as (values, requires_grad), exceptions as their type."""
    if isinstance(x, (_torch().Tensor, gradsum.Tensor)):
        return ("T", x.detach().tolist(), x.requires_grad)
    if isinstance(x, (list, tuple)):
        return type(x)(exact_form(v) for v in x)
    return x


def same_exact(program: Any) -> None:
    """``program(torch)`` and ``program(gradsum)`` (warnings ignored) give the same exact form
    or raise the same exception type."""
    out = []
    for lib in (_torch(), gradsum):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(exact_form(program(lib)))
        except Exception as e:  # (the type is what is compared)
            out.append(type(e))
    assert out[1] == out[0], out


# -- rounded form -------------------------------------------------------------------------------
def rounded_form(x: Any) -> Any:
    """Tensors as ``("T", flat values rounded to 5 places, requires_grad)``, in lists, tuples
    and dicts."""
    if isinstance(x, (_torch().Tensor, gradsum.Tensor)):
        return ("T", [round(v, 5) for v in x.detach().reshape(-1).tolist()], x.requires_grad)
    if isinstance(x, (list, tuple)):
        return type(x)(rounded_form(v) for v in x)
    if isinstance(x, dict):
        return {k: rounded_form(v) for k, v in x.items()}
    return x


def rounded_outcome(lib: Any, program: Callable[[Any], Any]) -> Any:
    """The rounded form of ``program(lib)``, or the exception's type name and first words."""
    try:
        return rounded_form(program(lib))
    except Exception as e:  # (compared by type and first words)
        return (type(e).__name__, str(e)[:40])


def same_rounded(program: Callable[[Any], Any]) -> Any:
    """gradsum's and torch's rounded outcomes are equal (gradsum's returned)."""
    a, b = rounded_outcome(gradsum, program), rounded_outcome(_torch(), program)
    assert a == b, (a, b)
    return a


def tensor64(lib: Any, values: Any, rg: bool = True) -> Any:
    return lib.tensor(values, dtype=lib.float64, requires_grad=rg)
