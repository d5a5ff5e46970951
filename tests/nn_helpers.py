"""Shared helpers for the nn/optim tests: build the same values in gradsum and torch, run a
function on both, compare outputs and gradients; errors with their messages (``raised``,
``same_error_text``); programs ``fn(lib, functional)`` (``both_raise``, ``same_values``); each
module's random arrays (``randn_arrays``, ``wide_randn_arrays``); values, reprs and tensors
(``floats``, ``gradsum_repr``, ``lib_tensor``); torch/gradsum module twins (``twins``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import gradsum


def g_of(a: np.ndarray, requires_grad: bool = False) -> gradsum.Tensor:
    return gradsum.tensor(np.array(a), requires_grad=requires_grad)


def t_of(torch: Any, a: np.ndarray, requires_grad: bool = False) -> Any:
    return torch.tensor(np.array(a), requires_grad=requires_grad)


def to_np(t: Any) -> np.ndarray:
    if isinstance(t, gradsum.Tensor):
        return np.array(t.detach().numpy())
    return t.detach().numpy()


def compare(
    torch: Any,
    fn_g: Callable[..., Any],
    fn_t: Callable[..., Any],
    arrays: Sequence[np.ndarray],
    diff: Sequence[bool] | None = None,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    seed: int = 0,
) -> None:
    """Run ``fn_g`` on gradsum tensors and ``fn_t`` on torch tensors made from ``arrays``;
    check outputs and the gradients of ``sum(out * r)`` for a random ``r``."""
    diff = [a.dtype.kind == "f" for a in arrays] if diff is None else list(diff)
    gs = [g_of(a, d) for a, d in zip(arrays, diff)]
    ts = [t_of(torch, a, d) for a, d in zip(arrays, diff)]
    out_g, out_t = fn_g(*gs), fn_t(*ts)
    np.testing.assert_allclose(to_np(out_g), to_np(out_t), rtol=rtol, atol=atol)
    if not any(diff) or not out_t.requires_grad:
        return
    r = np.random.default_rng(seed).standard_normal(tuple(out_t.shape)).astype(
        to_np(out_t).dtype)
    (out_g * g_of(r)).sum().backward()
    (out_t * t_of(torch, r)).sum().backward()
    for g, t, d in zip(gs, ts, diff):
        if d:
            assert g.grad is not None, "gradsum produced no gradient where torch did"
            np.testing.assert_allclose(to_np(g.grad), to_np(t.grad), rtol=rtol, atol=atol)


# -- one program per library, errors with their messages (test_data_parallel, test_lazy, ...) -----
def np_copy(t: Any) -> np.ndarray:
    """A copy of ``t``'s values as a NumPy array."""
    return np.array(t.detach().numpy())


def close(g: Any, t: Any, tol: float) -> None:
    np.testing.assert_allclose(np_copy(g), np_copy(t), rtol=tol, atol=tol)


def raised(fn: Any) -> tuple[type | None, str]:
    """``(type, message)`` of the exception ``fn()`` raised, ``(None, "")`` when it returned."""
    try:
        fn()
    except Exception as e:  # (the outcome is what is compared)
        return type(e), str(e)
    return None, ""


def same_error_text(fg: Any, ft: Any, exact: bool = True) -> None:
    """``fg()`` and ``ft()`` both raise, gradsum's type a subclass of torch's; with ``exact``,
    gradsum's message starts with torch's (torch's names read as gradsum's; what follows is
    gradsum's values and fix)."""
    g, t = raised(fg), raised(ft)
    assert g[0] is not None and t[0] is not None, (g, t)
    assert issubclass(g[0], t[0]) or g[0] is t[0], (g, t)
    if exact:
        # (torch's C++ errors may end with a line naming the tensor type)
        expected = t[1].split("\n[ torch.")[0].replace("torch.", "gradsum.")
        # (legacy type names are torch's in both: Tensor.type() says 'torch.FloatTensor')
        got = g[1].replace("gradsum._tensor.Tensor", "gradsum.Tensor").replace("torch.",
                                                                              "gradsum.")
        assert got.startswith(expected), (g, t)


def copy_state(gm: Any, tm: Any) -> None:
    """torch's values into gradsum's module (same keys)."""
    sd = {k: gradsum.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()}
    gm.load_state_dict(sd)


# -- one program ``fn(lib, functional)`` in both libraries (test_argument_errors, ...) -------------
Both = Callable[[Any, Any], Any]  # fn(lib, functional) -> result


def error_type_of(fn: Callable[[], Any]) -> type[BaseException] | None:
    """The type of the exception ``fn()`` raised, None when it returned."""
    try:
        fn()
    except Exception as e:  # (any type: the type is what is compared)
        return type(e)
    return None


def both_raise(fn: Both) -> type[BaseException]:
    """Run ``fn`` with torch and with gradsum: both raise, gradsum an instance of torch's type."""
    import pytest
    import torch
    import torch.nn.functional as TF

    import gradsum.nn.functional as F

    t_err = error_type_of(lambda: fn(torch, TF))
    assert t_err is not None, "torch did not raise"
    with pytest.raises(t_err):
        fn(gradsum, F)
    return t_err


def same_values(fn: Both, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Run ``fn`` with both libraries; each returns a list of tensors (or None) to compare."""
    import torch
    import torch.nn.functional as TF

    import gradsum.nn.functional as F

    got, want = fn(gradsum, F), fn(torch, TF)
    assert len(got) == len(want)
    for g, t in zip(got, want):
        assert (g is None) == (t is None)
        if t is None:
            continue
        gn, tn = to_np(g), to_np(t)
        assert gn.shape == tn.shape and gn.dtype == tn.dtype, (gn, tn)
        np.testing.assert_allclose(gn, tn, rtol=rtol, atol=atol, equal_nan=True)


# -- arrays from a test module's own RandomState --------------------------------------------------
def randn_arrays(rs: np.random.RandomState) -> Callable[..., np.ndarray]:
    """``arr(*shape)``: ``rs.randn(*shape)``; ``rs`` is the test module's own RandomState, so each
    module draws the values it drew before."""
    def arr(*shape: int) -> np.ndarray:
        return rs.randn(*shape)

    return arr


def wide_randn_arrays(rs: np.random.RandomState) -> Callable[..., np.ndarray]:
    """``arr(*shape, ties=False)``: ``rs.randn(*shape) * 2.5``, rounded to integers (ties) when
    ``ties``; ``rs`` as in ``randn_arrays``."""
    def arr(*shape: int, ties: bool = False) -> np.ndarray:
        a = rs.randn(*shape) * 2.5
        return np.round(a) if ties else a

    return arr


# -- values, reprs, tensors ------------------------------------------------------------------------
def floats(t: Any) -> np.ndarray:
    """``t``'s values as a float64 NumPy array (through ``tolist``)."""
    return np.asarray(t.detach().tolist(), dtype=float)


def floats_or_none(t: Any) -> np.ndarray | None:
    """``floats(t)``, None for None."""
    return None if t is None else floats(t)


def gradsum_repr(obj: Any) -> str:
    """``repr(obj)`` with torch's module prefix read as gradsum's."""
    return repr(obj).replace("torch.", "gradsum.")


def lib_tensor(lib: Any, arr: Any, dtype: str = "float64", requires_grad: bool = True) -> Any:
    """``arr`` as a tensor of ``lib`` of ``dtype`` (a name), requiring grad by default."""
    return lib.tensor(np.asarray(arr), dtype=getattr(lib, dtype), requires_grad=requires_grad)


def twins(cls: str, dtype: str, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """The torch module ``torch.nn.<cls>(*args, **kwargs)`` and a gradsum one holding torch's
    (initial) parameters, both in ``dtype`` (warnings ignored while building)."""
    import warnings

    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_mod = getattr(torch.nn, cls)(*args, **kwargs).to(getattr(torch, dtype))
        g_mod = getattr(gradsum.nn, cls)(*args, **kwargs).to(getattr(gradsum, dtype))
    state = {k: gradsum.tensor(v.detach().numpy()) for k, v in t_mod.state_dict().items()}
    g_mod.load_state_dict(state)
    return t_mod, g_mod
