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


def torch_or_skip() -> Any:
    """torch, or skip the calling test when it is not installed."""
    return pytest.importorskip(
        "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]")


def both(fn: Program) -> tuple[Any, Any]:
    """``(gradsum's result, torch's result)`` of the same program."""
    return fn(gradsum), fn(_torch())


def same(fn: Program) -> Any:
    """Both return equal results (torch's returned)."""
    got, want = both(fn)
    assert got == want
    return want


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


def outcome(fn: Callable[[], Any]) -> str:
    """``"ok"``, or the name of the exception type ``fn()`` raised."""
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "ok"


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


def as_np(t: Any) -> Any:
    """A tensor of either library as a float64 NumPy array (None stays None)."""
    import numpy as np

    return None if t is None else np.asarray(t.detach().tolist(), dtype=float)


def run_grads_both(fn: Callable[..., Any], arrays: list[Any], consts: tuple[int, ...] = (),
                   second: bool = True) -> list[list[Any]]:
    """``fn(lib, F, *tensors)`` on torch, then gradsum (``arrays`` as float64 tensors that
    require grad, except the indices in ``consts``): the output, its grad_fn name, any extra
    outputs (when ``fn`` returns a tuple), the gradients of ``sum(y**2)`` and, if ``second``,
    the gradients of the squared-gradient sum (create_graph=True)."""
    res = []
    for lib in (_torch(), gradsum):
        xs = [lib.tensor(a) if i in consts else lib.tensor(a, dtype=lib.float64,
                                                           requires_grad=True)
              for i, a in enumerate(arrays)]
        diff = [x for i, x in enumerate(xs) if i not in consts]
        y = fn(lib, lib.nn.functional, *xs)
        extra = []
        if isinstance(y, tuple):
            y, extra = y[0], [as_np(t) for t in y[1:]]
        gs = lib.autograd.grad((y * y).sum(), diff, create_graph=second, allow_unused=True)
        out = [as_np(y), y.grad_fn.name().split("::")[-1] if y.grad_fn else None, *extra,
               *[as_np(g) for g in gs]]
        if second:
            s = sum((g * g).sum() for g in gs if g is not None)
            out += [as_np(g) for g in lib.autograd.grad(s, diff, allow_unused=True)]
        res.append(out)
    return res


def check_grads(fn: Callable[..., Any], arrays: list[Any], consts: tuple[int, ...] = (),
                second: bool = True, name: bool = False, atol: float = 1e-10) -> None:
    """:func:`run_grads_both`, compared: values and gradients to rtol 1e-9 (None where
    None), the grad_fn names too when ``name``."""
    import numpy as np

    t_res, g_res = run_grads_both(fn, arrays, consts, second)
    for i, (a, b) in enumerate(zip(t_res, g_res)):
        if i == 1:
            if name:
                assert a == b, (a, b)
            continue
        if a is None or b is None:
            assert a is None and b is None, i
            continue
        assert a.shape == b.shape, (i, a.shape, b.shape)
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=atol, equal_nan=True, err_msg=str(i))


def same_repr(make: Callable[[Any], Any]) -> None:
    assert repr(make(gradsum)) == repr(make(_torch()))


# -- bit parity with torch's CPU kernels -------------------------------------------------------
# torch picks its CPU kernels per processor (ATEN_CPU_CAPABILITY: default, avx2, avx512). The
# vectorised ones (AVX2, AVX-512) compute ``x + alpha * y`` (add/sub with alpha, addcmul, lerp,
# and so every optimizer update built from them) as one fused multiply-add, which gradsum
# reproduces bit for bit (gradsum._fma); the default kernel rounds the product first, a
# different but equally valid result. A test marked ``bitwise`` asserts equal bits under the
# vectorised kernels and, under the default one, closeness within the bound it states.
VECTORISED = ("AVX2", "AVX512")


def torch_capability() -> str:
    """The CPU kernel torch runs in this process: ``"AVX2"``, ``"AVX512"``, ``"DEFAULT"``
    (or what else ``torch.backends.cpu.get_cpu_capability()`` says)."""
    return str(_torch().backends.cpu.get_cpu_capability())


def fused_kernels() -> bool:
    """Whether torch's kernels here fuse multiply-adds (AVX2 or AVX-512)."""
    return torch_capability() in VECTORISED


def assert_torch_bits(actual: Any, expected: Any, *, rtol: float = 1e-6, atol: float = 1e-7,
                      what: str = "") -> None:
    """``actual`` (gradsum) has the bits of ``expected`` (torch) under torch's vectorised
    kernels; under its default kernel, agrees within ``rtol``/``atol`` (the bound the test
    states for the product rounded separately)."""
    import numpy as np

    a, e = np.asarray(as_np(actual)), np.asarray(as_np(expected))
    assert a.shape == e.shape and a.dtype == e.dtype, (what, a.shape, e.shape, a.dtype, e.dtype)
    if fused_kernels():
        same = (a == e) | (np.isnan(a) & np.isnan(e))
        bad = np.flatnonzero(~same)
        assert bad.size == 0, (
            f"{what}: {bad.size} of {a.size} elements differ from torch's {torch_capability()} "
            f"kernel, first at {bad[:5].tolist()}: {a.ravel()[bad[:5]].tolist()} vs "
            f"{e.ravel()[bad[:5]].tolist()}")
    else:
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


# -- the summary form (autograd, ops and tensor tests) ------------------------------------------
def summary(x: Any) -> Any:
    """What is compared: tensors as (shape, dtype name, values, requires_grad)."""
    import numpy as np

    if isinstance(x, (_torch().Tensor, gradsum.Tensor)):
        return (tuple(x.shape), str(x.dtype).split(".")[-1],
                np.asarray(x.detach().tolist(), dtype=float).round(5).tolist(), x.requires_grad)
    if isinstance(x, (tuple, list)):
        return tuple(summary(v) for v in x)
    if isinstance(x, str):
        return x.replace("torch::autograd::", "").replace("torch.", "").replace("gradsum.", "")
    return x


def summary_outcome(fn: Callable[[Any], Any], m: Any) -> Any:
    """``("ok", summary of fn(m))`` or ``("raises", the exception's type name)``."""
    try:
        return "ok", summary(fn(m))
    except Exception as e:  # the exception's type is part of the contract
        return "raises", type(e).__name__


def same_summary(fn: Callable[[Any], Any]) -> Any:
    """Run ``fn(torch)`` and ``fn(gradsum)``; assert the outcomes match; return gradsum's."""
    want, got = summary_outcome(fn, _torch()), summary_outcome(fn, gradsum)
    assert got == want, f"gradsum: {got}\ntorch:   {want}"
    return got


def leaf(m: Any, data: Any) -> Any:
    return m.tensor(data, requires_grad=True)


# -- the op outcome (ops and tensor tests): exact values and the grad_fn name ---------------------
def op_outcome(lib: Any, fn: Callable[[Any], Any]) -> tuple[Any, ...]:
    """What ``fn(lib)`` does: ('err', exception type name) or ('ok', dtype, shape, values,
    requires_grad, grad_fn name)."""
    import numpy as np

    torch = _torch()
    try:
        out = fn(lib)
    except Exception as e:  # any exception is an outcome to compare
        return ("err", type(e).__name__)
    if isinstance(out, (torch.dtype, gradsum.dtype)):
        return ("dtype", str(out).split(".")[-1].replace("bool_", "bool"))
    arr = out.detach().numpy() if isinstance(out, torch.Tensor) else out._array
    fn_name = None
    if out.grad_fn is not None:
        fn_name = (type(out.grad_fn).__name__ if isinstance(out, torch.Tensor)
                   else out.grad_fn.name())
    values = [repr(float(v)) if isinstance(v, float) else v for v in np.ravel(arr).tolist()]
    return ("ok", str(out.dtype).split(".")[-1].replace("bool_", "bool"), tuple(out.shape),
            values, out.requires_grad, fn_name)


def same_op(fn: Callable[[Any], Any]) -> None:
    """torch's and gradsum's ``op_outcome`` of ``fn`` are equal."""
    t, g = op_outcome(_torch(), fn), op_outcome(gradsum, fn)
    assert g == t, f"gradsum {g} != torch {t}"


def bool_of(lib: Any) -> Any:
    """The library's bool dtype (``torch.bool``, ``gradsum.bool_``)."""
    return lib.bool if lib is _torch() else lib.bool_


def ramp(lib: Any, shape: tuple[int, ...], dtype: str = "float32", rg: bool = False) -> Any:
    """A tensor of ``1, 2, ...`` modulo 7 (modulo 2 for bool) of ``shape`` and ``dtype``."""
    import math

    import numpy as np

    dt = bool_of(lib) if dtype == "bool" else getattr(lib, dtype)
    n = math.prod(shape)
    vals = np.arange(1, n + 1).reshape(shape) % (2 if dtype == "bool" else 7)
    return lib.tensor(vals.tolist(), dtype=dt, requires_grad=rg)
