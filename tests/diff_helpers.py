"""Shared helpers of the side-by-side tests: run one program, ``fn(lib)``, in gradsum and in
torch and compare results or exception types. torch is imported on first use (the test
modules skip themselves first when it is missing)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest

import gradsum

Program = Callable[[Any], Any]  # fn(lib) -> a result


def _torch() -> Any:
    import torch

    return torch


def both_or_error(fn: Program, quiet: bool = False) -> tuple[Any, Any]:
    """``fn(gradsum)`` and ``fn(torch)``, or the exception type each raised (warnings
    ignored when ``quiet``)."""
    out = []
    for lib in (gradsum, _torch()):
        try:
            with warnings.catch_warnings():
                if quiet:
                    warnings.simplefilter("ignore")
                out.append(fn(lib))
        except Exception as e:  # (the type is what is compared)
            out.append(type(e))
    return out[0], out[1]


def same_error_type(fn: Program, quiet: bool = False) -> None:
    """Both raise, the same exception type."""
    g, t = both_or_error(fn, quiet)
    assert isinstance(t, type) and issubclass(t, Exception), t
    assert g is t


def same_meta(fn: Program, quiet: bool = False) -> tuple[Any, Any]:
    """Both return tensors with the same shape, dtype name, values and requires_grad."""
    g, t = both_or_error(fn, quiet)
    assert not isinstance(t, type), t
    assert not isinstance(g, type), g
    assert tuple(g.shape) == tuple(t.shape)
    assert str(g.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert g.requires_grad == t.requires_grad
    assert g.detach().tolist() == t.detach().tolist()
    return g, t


def same_error(fn: Program) -> type[BaseException]:
    """Both libraries raise; gradsum an instance of torch's type (returned)."""
    try:
        fn(_torch())
    except Exception as e:  # (any type: the type is what is compared)
        t_err = type(e)
    else:
        raise AssertionError("torch did not raise")
    with pytest.raises(t_err):
        fn(gradsum)
    return t_err


def pair64(values: Any, requires_grad: bool = True) -> tuple[Any, Any]:
    """The same float64 values as a gradsum tensor and a torch tensor."""
    import numpy as np

    torch = _torch()
    arr = np.asarray(values, dtype=np.float64)
    return (gradsum.tensor(arr, dtype=gradsum.float64, requires_grad=requires_grad),
            torch.tensor(arr, dtype=torch.float64, requires_grad=requires_grad))


def same_tensor(g: Any, t: Any, tol: float = 1e-12) -> None:
    """Same shape, dtype name and values (nan where nan)."""
    import numpy as np

    assert tuple(g.shape) == tuple(t.shape)
    np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol,
                               equal_nan=True)
    assert g.dtype.name == str(t.dtype).replace("torch.", "")
