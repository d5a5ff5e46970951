"""Side-by-side regression tests for gradsum.optim behaviours that differed from torch's: the
same construction and steps on both libraries, then parameters, state and errors compared."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import assert_torch_bits  # noqa: E402
from nn_helpers import to_np  # noqa: E402


def same_error(fn: Callable[[Any], Any]) -> None:
    """``fn(lib)`` raises with torch; with gradsum it raises exactly torch's type (not a
    subclass: NotImplementedError is a RuntimeError)."""
    try:
        fn(torch)
    except Exception as e:  # (any type: the type is what is compared)
        err = type(e)
    else:
        raise AssertionError("torch did not raise")
    with pytest.raises(err) as info:
        fn(gradsum)
    assert info.type is err, (info.type, err)


def _run(lib: Any, make: Callable[[Any, list[Any]], Any], steps: int = 3) -> tuple[Any, Any]:
    rng = np.random.default_rng(0)
    params = [lib.nn.Parameter(lib.tensor(rng.standard_normal(s).astype(np.float32)))
              for s in [(3,), (2, 2)]]
    opt = make(lib, params)
    for _ in range(steps):
        for p in params:
            p.grad = lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32))
        opt.step()
    return params, opt


def _assert_same_run(make: Callable[[Any, list[Any]], Any]) -> None:
    (gp, gopt), (tp, topt) = _run(gradsum, make), _run(torch, make)
    for g, t in zip(gp, tp):
        np.testing.assert_allclose(to_np(g.detach()), to_np(t.detach()), rtol=1e-5, atol=1e-6)
    gs, ts = gopt.state_dict()["state"], topt.state_dict()["state"]
    assert list(gs) == list(ts)
    for k in ts:
        assert list(gs[k]) == list(ts[k])
        for name in ts[k]:
            np.testing.assert_allclose(to_np(gs[k][name]), to_np(ts[k][name]), rtol=1e-5)


def test_adagrad_state_starts_from_the_constructor_accumulator_value() -> None:
    # torch fills 'sum' from the constructor's initial_accumulator_value, not the group's
    _assert_same_run(lambda lib, ps: lib.optim.Adagrad(
        [{"params": ps[:1], "initial_accumulator_value": 0.5},
         {"params": ps[1:]}], lr=0.1, initial_accumulator_value=0.25))


def test_sgd_accepts_a_nan_learning_rate_like_torch() -> None:
    # torch's SGD checks lr < 0 (nan passes); Adam's `not 0 <= lr` refuses it
    for lib in (torch, gradsum):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=float("nan"))
        assert np.isnan(opt.param_groups[0]["lr"])
    same_error(lambda lib: lib.optim.Adam([lib.nn.Parameter(lib.ones(1))], lr=float("nan")))


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad"])
@pytest.mark.parametrize("kw", [{"fused": True, "foreach": True},
                                {"fused": True, "differentiable": True}])
def test_fused_argument_errors(name: str, kw: dict[str, Any]) -> None:
    same_error(lambda lib: getattr(lib.optim, name)([lib.nn.Parameter(lib.ones(1))], **kw))


@pytest.mark.parametrize("betas", [(0.9, 0), (0, 0), (0.9,)])
def test_adam_beta_types(betas: tuple[Any, ...]) -> None:
    same_error(lambda lib: lib.optim.Adam([lib.nn.Parameter(lib.ones(1))], betas=betas))


@pytest.mark.parametrize("kw", [{"lr": 0.1}, {"betas": (0.5, 0.6)}])
def test_adam_tensor_hyper_parameters_with_foreach(kw: dict[str, Any]) -> None:
    def make(lib: Any) -> Any:
        args = {k: (tuple(lib.tensor(b) for b in v) if isinstance(v, tuple) else lib.tensor(v))
                for k, v in kw.items()}
        return lib.optim.Adam([lib.nn.Parameter(lib.ones(1))], foreach=True, **args)

    same_error(make)


def test_adam_tensor_betas_stay_tensors() -> None:
    def make(lib: Any, ps: list[Any]) -> Any:
        return lib.optim.Adam(ps, lr=0.1, betas=(lib.tensor([0.5]), lib.tensor(0.8)))

    _assert_same_run(make)
    g_betas = _run(gradsum, make)[1].param_groups[0]["betas"]
    t_betas = _run(torch, make)[1].param_groups[0]["betas"]
    assert [(type(b).__name__, tuple(b.shape)) for b in g_betas] == \
        [(type(b).__name__, tuple(b.shape)) for b in t_betas]


# -- torch's bits, update by update ------------------------------------------------------------
# Each optimizer's step is torch's single-tensor update (foreach=False, what torch runs on the
# CPU) operation for operation: on torch's AVX2/AVX-512 kernels, where ``add`` with ``alpha``,
# ``addcmul`` and ``lerp`` are fused multiply-adds, gradsum's parameters and state are bitwise
# torch's, float32 and float64, after every step (gradsum._fma emulates the fused rounding).
# Under ATEN_CPU_CAPABILITY=default torch rounds each product first; the tests then assert the
# tolerance of _NORMWISE_TOL (see there).
#
# One kernel is not IEEE arithmetic on every CPU: torch's ``sqrt`` is MKL's vector math
# (vsSqrt/vdSqrt), which on some processors (an AMD EPYC, in every ATEN_CPU_CAPABILITY) is one
# unit in the last place off for about 17% of float32 and 1% of float64 inputs. gradsum keeps
# IEEE's square root (optimizer._sqrt). Where torch's is not IEEE's, the bitwise tests of the
# optimizers that take square roots (Adam, AdamW, RMSprop, Adagrad, NAdam, RAdam, Adadelta)
# substitute torch's own sqrt kernel for optimizer._sqrt, which checks every other operation
# bit for bit; test_updates_with_gradsums_own_sqrt_agree_with_torch checks the real thing
# within a tolerance there.

_DTYPES = ["float32", "float64"]

#: The tolerance where bits are not claimed (torch's default kernel; gradsum's own sqrt where
#: torch's is not IEEE's; sums added in another order), relative to each tensor's largest
#: magnitude: ``|gradsum - torch| <= tol * max|torch|`` elementwise. A product torch rounds
#: separately (or a square root a unit off) is half a unit in the last place off, and steps
#: carry such differences into every later quantity; elements near zero (a momentum buffer
#: whose terms cancel) inherit the absolute size of the others' differences, so the bound is
#: normwise, not per element. Where an update divides by a cancelling quantity the difference
#: is amplified: Adam's step of an element whose decayed gradient ``g + wd * p`` cancels to the
#: size of ``eps`` moves by up to ``lr`` on a last-bit change. Measured over every case here
#: (AMD EPYC, torch 2.13): at most 6.0e-6 (float32: one element of 280,000, that Adam case,
#: default kernel; every other case below 4.1e-7) and 1.0e-15 (float64) of the largest
#: magnitude; the bounds leave a factor of three (float32) and of a hundred (float64, whose
#: cancellations are amplified alike: 2**-29 of float32's):
_NORMWISE_TOL = {"float32": 2e-5, "float64": 1e-13}

_SQRT_FREE = {"SGD", "Adamax", "ASGD", "Rprop"}


def _ieee(a: Any) -> Any:
    return np.sqrt(a.astype(np.float64)).astype(a.dtype) if a.dtype == np.float32 else np.sqrt(a)


_TORCH_SQRT_IEEE: list[bool] = []


def torch_sqrt_is_ieee() -> bool:
    """Whether torch's ``sqrt`` gives the correctly rounded square root on this CPU (float32
    and float64, 20,000 random inputs each: an inexact kernel shows hundreds of differences)."""
    if not _TORCH_SQRT_IEEE:
        rng = np.random.default_rng(0)
        ok = True
        for dtype in (np.float32, np.float64):
            a = (rng.standard_normal(20000) ** 2 * np.exp(rng.uniform(-20, 20, 20000))
                 ).astype(dtype)
            ok &= bool(np.array_equal(torch.from_numpy(a).sqrt().numpy(), _ieee(a)))
        _TORCH_SQRT_IEEE.append(ok)
    return _TORCH_SQRT_IEEE[0]


def _torch_sqrt(x: Any, out: Any = None) -> Any:
    """torch's ``sqrt`` kernel on a NumPy array or scalar, with ``np.sqrt``'s signature."""
    r = torch.from_numpy(np.ascontiguousarray(np.asarray(x))).sqrt().numpy()
    if out is None:
        return r if np.ndim(x) else r[()]
    out[...] = r
    return out


def _use_torchs_sqrt(monkeypatch: pytest.MonkeyPatch) -> None:
    """gradsum's optimizers take their square roots with torch's kernel (optimizer._sqrt, and
    the name imported by each optimizer module)."""
    import importlib
    import pkgutil

    import gradsum.optim

    for info in pkgutil.iter_modules(gradsum.optim.__path__):
        mod = importlib.import_module(f"gradsum.optim.{info.name}")
        if hasattr(mod, "_sqrt"):
            monkeypatch.setattr(mod, "_sqrt", _torch_sqrt)


def _torchs_sqrt_where_needed(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if name not in _SQRT_FREE and not torch_sqrt_is_ieee():
        _use_torchs_sqrt(monkeypatch)


def _run_steps(lib: Any, name: str, kw: dict[str, Any], dtype: str,
               shapes: list[tuple[int, ...]], transposed_grad: bool = False, steps: int = 8,
               tensor_lr: bool = False) -> list[Any]:
    """``steps`` steps of optimizer ``name`` from the same numbers in either library (a tensor
    ``lr`` with ``tensor_lr``); the parameters and every tensor of the state after them, as
    ``(label, tensor of that library)`` pairs."""
    rng = np.random.default_rng(1)
    params = [lib.nn.Parameter(lib.tensor(rng.standard_normal(s).astype(dtype)))
              for s in shapes]
    if tensor_lr:
        kw = {**kw, "lr": lib.tensor(kw["lr"])}
    opt = getattr(lib.optim, name)(params, **kw)
    for _ in range(steps):
        for p in params:
            flip = transposed_grad and len(p.shape) == 2
            g = lib.tensor(rng.standard_normal(tuple(p.shape)[::-1] if flip else p.shape)
                           .astype(dtype))
            p.grad = g.T if flip else g
        opt.step()
    return [(f"param {i}", p.detach().clone()) for i, p in enumerate(params)] + [
        (f"state {i} {key}", t.detach().clone()) for i, p in enumerate(params)
        for key, t in opt.state[p].items() if isinstance(t, lib.Tensor)]


def _normwise_atol(t: Any, dtype: str, tol: float | None = None) -> float:
    scale = float(np.abs(t.numpy()).max()) if t.numel() else 0.0
    return (_NORMWISE_TOL[dtype] if tol is None else tol) * max(scale, 1e-30)


def _assert_all_torch_bits(got: list[Any], ref: list[Any], dtype: str, what: str) -> None:
    """Every tensor bitwise torch's under its AVX2/AVX-512 kernels, within _NORMWISE_TOL under
    the default one."""
    assert [k for k, _ in got] == [k for k, _ in ref], what
    for (k, g), (_, t) in zip(got, ref, strict=True):
        assert str(g.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (what, k)
        assert_torch_bits(g, t, rtol=0, atol=_normwise_atol(t, dtype), what=f"{what}: {k}")


def _assert_all_close(got: list[Any], ref: list[Any], dtype: str, what: str,
                      tol: float | None = None) -> None:
    """Every tensor within ``tol`` (default _NORMWISE_TOL) of torch's, relative to its
    largest magnitude."""
    assert [k for k, _ in got] == [k for k, _ in ref], what
    for (k, g), (_, t) in zip(got, ref, strict=True):
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=0,
                                   atol=_normwise_atol(t, dtype, tol), err_msg=f"{what}: {k}")


_LARGE_CASES = [
    ("SGD", {"lr": 0.01}),
    ("SGD", {"lr": 0.01, "momentum": 0.9, "dampening": 0.1, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.01, "momentum": 0.9, "nesterov": True}),
    ("SGD", {"lr": 0.01, "momentum": 0.9, "weight_decay": 0.01, "maximize": True}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.01, "amsgrad": True}),
    ("AdamW", {"lr": 0.01, "amsgrad": True, "maximize": True}),
    ("Adam", {"lr": 0.01, "betas": (0.3, 0.9)}),  # (lerp's other branch: weight >= 0.5)
    ("RMSprop", {"lr": 0.01, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True}),
    ("RMSprop", {"lr": 0.01, "centered": True, "maximize": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "alpha": 0.9}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "initial_accumulator_value": 0.5, "maximize": True}),
    ("Adamax", {"lr": 0.01, "weight_decay": 0.1}),
    ("Adamax", {"lr": 0.01, "betas": (0.3, 0.99), "maximize": True}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.01, "momentum_decay": 0.01, "maximize": True}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1}),  # (eight steps: the rectified branch too)
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.01, "maximize": True}),
    ("Adadelta", {"lr": 1.0, "weight_decay": 0.1}),
    ("Adadelta", {"lr": 0.5, "rho": 0.5, "maximize": True}),
    ("ASGD", {"lr": 0.01, "t0": 2, "weight_decay": 0.1}),  # (t0=2: the averaging branch)
    ("ASGD", {"lr": 0.05, "t0": 3, "lambd": 0.01, "maximize": True}),
    ("Rprop", {"lr": 0.01}),
    ("Rprop", {"lr": 0.01, "etas": (0.3, 1.5), "step_sizes": (1e-4, 0.05), "maximize": True}),
]
_LARGE_IDS = [f"{n}-{i}" for i, (n, _) in enumerate(_LARGE_CASES)]


@pytest.mark.bitwise
@pytest.mark.parametrize(("name", "kw"), _LARGE_CASES, ids=_LARGE_IDS)
@pytest.mark.parametrize(("dtype", "transposed_grad"),
                         [("float32", False), ("float32", True), ("float64", False)])
def test_update_of_a_large_parameter_is_torchs_and_the_unblocked_update(
        name: str, kw: dict[str, Any], dtype: str, transposed_grad: bool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Eight steps on a parameter larger than one block of the blocked update (75,000
    elements, with blocks of 2**15: three blocks, the last one partial) and a small one: the
    parameters and every
    state tensor are exactly torch's on its AVX2/AVX-512 kernels (bitwise, float32 and
    float64; every optimizer and option here); under ATEN_CPU_CAPABILITY=default within
    _NORMWISE_TOL (2e-5 float32, 1e-13 float64, of each tensor's largest magnitude: the
    products torch rounds there, half a unit each, over eight steps). Where torch's sqrt is
    not IEEE's (see above) the
    square-root optimizers run with torch's sqrt kernel. The blocked update is also bitwise
    the whole-tensor one (every element sees the same operations in the same order). With
    ``transposed_grad`` the gradient is not C-contiguous: the update runs on whole tensors."""
    from gradsum.optim import optimizer

    _torchs_sqrt_where_needed(name, monkeypatch)
    shapes = [(300, 250), (7,)]
    monkeypatch.setattr(optimizer, "BLOCK", 1 << 15)
    blocked = _run_steps(gradsum, name, kw, dtype, shapes, transposed_grad)
    ref = _run_steps(torch, name, kw, dtype, shapes, transposed_grad)
    _assert_all_torch_bits(blocked, ref, dtype, f"{name} {kw} {dtype}")
    monkeypatch.setattr(optimizer, "BLOCK", 1 << 30)  # one block: the whole tensor
    whole = _run_steps(gradsum, name, kw, dtype, shapes, transposed_grad)
    for (k, b), (_, w) in zip(blocked, whole, strict=True):
        assert np.array_equal(b.numpy(), w.numpy(), equal_nan=True), k


@pytest.mark.bitwise
@pytest.mark.parametrize(("name", "kw"), [
    ("SGD", {"lr": 0.01, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True}),
], ids=["SGD", "Adam", "RMSprop"])
@pytest.mark.parametrize("transposed_grad", [False, True])
def test_update_at_the_default_block_size_is_torchs(name: str, kw: dict[str, Any],
                                                    transposed_grad: bool,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A 400x700 float32 parameter (280,000 elements) at the default BLOCK: two full blocks
    and a partial one, each one call of the emulated FMA; with a transposed gradient the whole
    tensor at once, which gradsum._fma splits into chunks. torch's bits (AVX2/AVX-512),
    _NORMWISE_TOL under the default kernel."""
    _torchs_sqrt_where_needed(name, monkeypatch)
    shapes = [(400, 700)]
    got = _run_steps(gradsum, name, kw, "float32", shapes, transposed_grad, steps=3)
    ref = _run_steps(torch, name, kw, "float32", shapes, transposed_grad, steps=3)
    _assert_all_torch_bits(got, ref, "float32", f"{name} {kw}")


@pytest.mark.bitwise
@pytest.mark.parametrize(("name", "kw"), _LARGE_CASES, ids=_LARGE_IDS)
@pytest.mark.parametrize("dtype", _DTYPES)
def test_update_of_small_parameters_is_torchs(name: str, kw: dict[str, Any], dtype: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Parameters below one block (and below the cached scratch buffers' threshold: fresh
    temporaries), 0-d and 1-element ones included, over 12 steps: torch's bits on its
    AVX2/AVX-512 kernels, _NORMWISE_TOL under the default kernel."""
    _torchs_sqrt_where_needed(name, monkeypatch)
    shapes = [(120, 90), (3, 1), (1,), ()]
    got = _run_steps(gradsum, name, kw, dtype, shapes, steps=12)
    ref = _run_steps(torch, name, kw, dtype, shapes, steps=12)
    _assert_all_torch_bits(got, ref, dtype, f"{name} {kw} {dtype}")


_TENSOR_LR_CASES = [
    ("SGD", {"lr": 0.01, "momentum": 0.9}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01}),
    ("Adamax", {"lr": 0.01}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("Adadelta", {"lr": 0.5}),
    ("ASGD", {"lr": 0.01, "t0": 2}),
    ("Rprop", {"lr": 0.01}),
]


@pytest.mark.bitwise
@pytest.mark.parametrize(("name", "kw"), _TENSOR_LR_CASES,
                         ids=[n for n, _ in _TENSOR_LR_CASES])
@pytest.mark.parametrize("dtype", _DTYPES)
def test_tensor_lr_is_torchs_arithmetic(name: str, kw: dict[str, Any], dtype: str,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A float32 0-d ``lr`` tensor: torch computes the step sizes (``lr / bias_correction``,
    ``1 - lr * weight_decay``, ASGD's ``eta``) in float32 tensor arithmetic, not in Python
    floats; gradsum's are the same numbers, so the update is torch's bits (AVX2/AVX-512;
    _NORMWISE_TOL under the default kernel)."""
    _torchs_sqrt_where_needed(name, monkeypatch)
    shapes = [(300, 250), (7,)]
    got = _run_steps(gradsum, name, kw, dtype, shapes, tensor_lr=True)
    ref = _run_steps(torch, name, kw, dtype, shapes, tensor_lr=True)
    _assert_all_torch_bits(got, ref, dtype, f"{name} {kw} {dtype} lr tensor")


@pytest.mark.bitwise
@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("amsgrad", [False, True])
def test_adam_tensor_betas_are_torchs_arithmetic(dtype: str, amsgrad: bool,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Tensor ``betas`` (and ``lr``): torch's bias corrections are 0-d float32 tensor
    arithmetic, ``lr / bias_correction1`` a number over a tensor (its reciprocal times the
    number) and ``bias_correction2 ** 0.5`` its sqrt kernel; the first moment's lerp weight
    ``1 - beta1`` is taken in the parameter's dtype. Bitwise torch's (AVX2/AVX-512)."""
    _torchs_sqrt_where_needed("Adam", monkeypatch)
    shapes = [(300, 250), (7,)]
    for lr_tensor in (False, True):
        out = []
        for lib in (gradsum, torch):
            kw = {"lr": 0.01, "amsgrad": amsgrad, "weight_decay": 0.1,
                  "betas": (lib.tensor(0.8), lib.tensor([0.95]))}
            out.append(_run_steps(lib, "Adam", kw, dtype, shapes, tensor_lr=lr_tensor))
        _assert_all_torch_bits(out[0], out[1], dtype, f"tensor betas, lr tensor {lr_tensor}")


@pytest.mark.parametrize(("name", "kw"), [c for c in _LARGE_CASES if c[0] not in _SQRT_FREE],
                         ids=[i for i, c in zip(_LARGE_IDS, _LARGE_CASES)
                              if c[0] not in _SQRT_FREE])
@pytest.mark.parametrize("dtype", _DTYPES)
def test_updates_with_gradsums_own_sqrt_agree_with_torch(name: str, kw: dict[str, Any],
                                                         dtype: str) -> None:
    """The square-root optimizers with gradsum's own (IEEE) sqrt, on a CPU where torch's is
    not IEEE's (elsewhere the bitwise tests above cover them unsubstituted): torch's update
    within _NORMWISE_TOL (2e-5 float32, 1e-13 float64, of each tensor's largest magnitude)
    after eight steps, a unit in the last place of a denominator here and there, not bit for
    bit (under any ATEN_CPU_CAPABILITY)."""
    if torch_sqrt_is_ieee():
        pytest.skip("torch's sqrt is IEEE's on this CPU: the bitwise tests cover this")
    shapes = [(300, 250), (7,)]
    got = _run_steps(gradsum, name, kw, dtype, shapes)
    ref = _run_steps(torch, name, kw, dtype, shapes)
    _assert_all_close(got, ref, dtype, f"{name} {kw} {dtype}")


_MUON_CASES = [
    {"lr": 0.01},
    {"lr": 0.01, "nesterov": False, "weight_decay": 0.0},
    {"lr": 0.02, "momentum": 0.3, "adjust_lr_fn": "match_rms_adamw"},
]


@pytest.mark.bitwise
@pytest.mark.parametrize("kw", _MUON_CASES, ids=["default", "plain", "match_rms_adamw"])
@pytest.mark.parametrize("dtype", _DTYPES)
def test_muon_momentum_is_torchs_bits_and_its_update_torchs_to_bfloat16_rounding(
        kw: dict[str, Any], dtype: str) -> None:
    """Muon on a wide and a tall matrix (the iteration's transposed path), eight steps. The
    momentum buffer (``lerp_``, fused on torch's AVX2/AVX-512 kernels) is bitwise torch's
    there (_NORMWISE_TOL under the default kernel). The parameters are NOT claimed bitwise:
    the Newton-Schulz iteration multiplies bfloat16 matrices, whose float32 sums torch's
    kernels and NumPy's add in different orders (bit for bit on tiny matrices only), and a
    bfloat16 step is 2**-8 relative. They agree within 2**-5 of the step size (the adjusted
    learning rate times an update entry, entries of size about one: a few bfloat16 steps;
    measured at most 7.3e-3 of it, about 2**-7, after eight steps)."""
    import math

    shapes = [(300, 250), (70, 40)]
    got = _run_steps(gradsum, "Muon", kw, dtype, shapes)
    ref = _run_steps(torch, "Muon", kw, dtype, shapes)
    assert [k for k, _ in got] == [k for k, _ in ref]
    bufs = [(k, g, t) for (k, g), (_, t) in zip(got, ref, strict=True) if "momentum" in k]
    assert len(bufs) == 2
    _assert_all_torch_bits([(k, g) for k, g, _ in bufs], [(k, t) for k, _, t in bufs], dtype,
                           f"Muon {kw}")
    for (rows, cols), (k, g), (_, t) in zip(shapes, got, ref):  # (the parameters come first)
        ratio = (0.2 * math.sqrt(max(rows, cols)) if kw.get("adjust_lr_fn") == "match_rms_adamw"
                 else math.sqrt(max(1, rows / cols)))
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=0,
                                   atol=2**-5 * kw["lr"] * ratio, err_msg=f"Muon {kw}: {k}")


_ADAFACTOR_CASES = [
    {"lr": 0.01},
    {"lr": 0.01, "weight_decay": 0.1, "maximize": True},
    {"lr": 0.05, "beta2_decay": -0.5, "eps": (1e-30, 1e-3), "d": 2.0},
]


@pytest.mark.bitwise
@pytest.mark.parametrize("kw", _ADAFACTOR_CASES, ids=["default", "decay-max", "options"])
@pytest.mark.parametrize("dtype", _DTYPES)
def test_adafactor_is_torchs_to_the_rounding_of_its_sums(kw: dict[str, Any],
                                                         dtype: str) -> None:
    """Adafactor, eight steps (a matrix: row and column factors; a vector: a full variance).
    Its elementwise steps are torch's operations (fused lerps and ``add_``), so a vector's
    ``variance`` (``lerp_`` of ``grad * grad``) is bitwise torch's on its AVX2/AVX-512
    kernels. The rest goes through sums (``param.norm()``, the row and column means, the
    update's RMS) that NumPy adds in another order than torch: NOT claimed bitwise; within
    _NORMWISE_TOL (2e-5 float32, 1e-13 float64, of the largest magnitude; measured 2.1e-7 and
    3.9e-16), under every kernel."""
    shapes = [(300, 250), (7,)]
    got = _run_steps(gradsum, "Adafactor", kw, dtype, shapes)
    ref = _run_steps(torch, "Adafactor", kw, dtype, shapes)
    var = [i for i, (k, _) in enumerate(ref) if k.endswith("variance")]
    assert len(var) == 1
    _assert_all_torch_bits([got[var[0]]], [ref[var[0]]], dtype, f"Adafactor {kw}")
    _assert_all_close(got, ref, dtype, f"Adafactor {kw}")


@pytest.mark.parametrize(("dtype", "line_search_fn"),
                         [("float32", None), ("float64", None), ("float64", "strong_wolfe")])
def test_lbfgs_on_a_large_parameter_is_torchs_to_the_rounding_of_its_dot_products(
        dtype: str, line_search_fn: str | None) -> None:
    """LBFGS on a 75,000-element weighted least-squares problem, two steps of up to five
    iterations. The parameter moves by ``add_`` with ``alpha`` (fused: torch's bits per
    element), but every step length and direction comes from dot products and sums
    (``y.dot(s)``, the two-loop recursion, ``abs().sum()``, the loss), which NumPy adds in
    another order than torch: NOT bitwise; within 2e-6 (float32) and 5e-13 (float64) of the
    largest magnitude, under every kernel (measured 1.6e-7; 4.9e-16 on torch's AVX-512 kernels,
    7.9e-14 under its default one). (A float32 line search is left out: its branches compare
    float32 losses whose last bits depend on the sums' order, and a flipped comparison moves
    the result by a percent: measured 1.2e-2, the same before and after the fused updates.)"""
    rng = np.random.default_rng(3)
    w0 = rng.standard_normal((300, 250)).astype(dtype)
    target = rng.standard_normal((300, 250)).astype(dtype)
    scale = rng.uniform(0.5, 2.0, (300, 250)).astype(dtype)
    out = []
    for lib in (gradsum, torch):
        w = lib.nn.Parameter(lib.tensor(w0))
        tt, ss = lib.tensor(target), lib.tensor(scale)
        opt = lib.optim.LBFGS([w], lr=0.5, max_iter=5, line_search_fn=line_search_fn)

        def closure(w: Any = w, tt: Any = tt, ss: Any = ss, opt: Any = opt) -> Any:
            opt.zero_grad()
            loss = (ss * (w - tt) ** 2).sum()
            loss.backward()
            return loss

        for _ in range(2):
            opt.step(closure)
        out.append([("param", w.detach().clone())])
    _assert_all_close(out[0], out[1], dtype, "LBFGS",
                      tol={"float32": 2e-6, "float64": 5e-13}[dtype])


@pytest.mark.bitwise
@pytest.mark.parametrize("kind", ["default", "ema_multi", "swa_multi", "ema", "swa"])
@pytest.mark.parametrize("dtype", _DTYPES)
def test_averaged_model_is_torchs_bits(kind: str, dtype: str) -> None:
    """swa_utils.AveragedModel over five models, a 160,000-element weight (above the emulated
    FMA's chunk size) and a bias: the default (SWA's ``avg + (p - avg) / (n + 1)``), the list
    functions (``lerp_``: fused on torch's AVX2/AVX-512 kernels) and the per-tensor ones give
    torch's bits there, _NORMWISE_TOL under the default kernel."""
    rng = np.random.default_rng(5)
    weights = [(rng.standard_normal((400, 400)).astype(dtype),
                rng.standard_normal(400).astype(dtype)) for _ in range(5)]
    out = []
    for lib in (gradsum, torch):
        s = lib.optim.swa_utils
        kw = {"default": {}, "ema_multi": {"multi_avg_fn": s.get_ema_multi_avg_fn(0.7)},
              "swa_multi": {"multi_avg_fn": s.get_swa_multi_avg_fn()},
              "ema": {"avg_fn": s.get_ema_avg_fn(0.8)}, "swa": {"avg_fn": s.get_swa_avg_fn()}}
        net = lib.nn.Linear(400, 400, dtype=getattr(lib, dtype))
        avg = s.AveragedModel(net, **kw[kind])
        for w, b in weights:
            with lib.no_grad():
                net.weight.copy_(lib.tensor(w))
                net.bias.copy_(lib.tensor(b))
            avg.update_parameters(net)
        out.append([(k, v.detach().clone()) for k, v in avg.module.state_dict().items()])
    _assert_all_torch_bits(out[0], out[1], dtype, f"AveragedModel {kind}")
