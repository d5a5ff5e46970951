"""Side-by-side regressions against torch: ``repr``/``str`` of tensors.

Each case builds the same values as a torch tensor and as a gradsum tensor and asserts that
``repr(gradsum_tensor) == repr(torch_tensor).replace("torch.", "gradsum.")``: int mode,
scientific mode, precision, widths, summarisation, line wrapping, nesting, suffixes, under
every print profile and a set of custom print options.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

SHAPES: list[tuple[int, ...]] = [
    (), (5,), (30,), (3, 4), (2, 3, 4), (1001,), (40, 40), (0,), (0, 3), (2, 0, 4),
]


def _mixed(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 4, n)


def _specials(rng: np.random.Generator, n: int, pool: list[float]) -> np.ndarray:
    base = rng.standard_normal(n)
    mask = rng.random(n) < 0.3
    base[mask] = rng.choice(pool, int(mask.sum()))
    return base


#: value kind -> how to draw n float values
FLOAT_KINDS: dict[str, Callable[[np.random.Generator, int], np.ndarray]] = {
    "small": lambda r, n: r.standard_normal(n),
    "large": lambda r, n: r.standard_normal(n) * 1e9,
    "tiny": lambda r, n: r.standard_normal(n) * 1e-6,
    "mixed": _mixed,
    "integral": lambda r, n: r.integers(-50, 50, n).astype(float),
    "big_integral": lambda r, n: r.integers(-50, 50, n) * 1e7,
    "negzero": lambda r, n: r.choice([0.0, -0.0, 3.0, -12.0], n),
    "only_zeros": lambda r, n: r.choice([0.0, -0.0], n),
    "inf": lambda r, n: _specials(r, n, [np.inf, -np.inf]),
    "nan": lambda r, n: _specials(r, n, [np.nan]),
    "mix_all": lambda r, n: _specials(r, n, [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e5]),
    "int_inf_nan": lambda r, n: r.choice([1.0, -7.0, np.inf, np.nan, -np.inf], n),
    "all_nan": lambda r, n: np.full(n, np.nan),
    "all_inf": lambda r, n: r.choice([np.inf, -np.inf], n),
    "rounding": lambda r, n: r.choice([9.99996, -9.99996, 0.99995, 99.99999, 0.00015], n),
    "extreme": lambda r, n: r.choice([1e300, -1e-300, 1.5, 1e38, -2e-38], n),
}

INT_KINDS: dict[str, Callable[[np.random.Generator, int], np.ndarray]] = {
    "small": lambda r, n: r.integers(-10, 10, n),
    "large": lambda r, n: r.integers(-10**12, 10**12, n),
    "positive": lambda r, n: r.integers(0, 1000, n),
    "zeros": lambda r, n: np.zeros(n, dtype=np.int64),
}

BOOL_KINDS: dict[str, Callable[[np.random.Generator, int], np.ndarray]] = {
    "random": lambda r, n: r.random(n) < 0.5,
    "all_true": lambda r, n: np.ones(n, dtype=bool),
    "all_false": lambda r, n: np.zeros(n, dtype=bool),
}

CASES: list[tuple[str, str]] = (
    [("float32", k) for k in FLOAT_KINDS] + [("float64", k) for k in FLOAT_KINDS]
    + [("int64", k) for k in INT_KINDS] + [("bool", k) for k in BOOL_KINDS]
)


def _values(dtype: str, kind: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    table = FLOAT_KINDS if dtype.startswith("float") else (
        INT_KINDS if dtype == "int64" else BOOL_KINDS)
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    with np.errstate(over="ignore", under="ignore"):
        return np.ascontiguousarray(table[kind](rng, n).astype(dtype).reshape(shape))


def _pair(arr: np.ndarray, variant: str = "plain") -> tuple[str, str]:
    """(torch's repr with gradsum names, gradsum's repr) of the same values."""
    t = torch.from_numpy(arr.copy())
    g = gradsum.from_numpy(arr.copy())
    if variant != "plain":
        t.requires_grad_()
        g.requires_grad_()
        if variant == "grad_fn":
            t, g = t * 1.0, g * 1.0
    return repr(t).replace("torch.", "gradsum."), repr(g)


def _variants(dtype: str) -> list[str]:
    return ["plain", "requires_grad", "grad_fn"] if dtype.startswith("float") else ["plain"]


def _set_both(**opts: Any) -> None:
    torch.set_printoptions(**opts)
    gradsum.set_printoptions(**opts)


@pytest.fixture(autouse=True)
def _restore_options() -> Iterator[None]:
    old_torch = torch._tensor_str.get_printoptions()
    old_gradsum = gradsum.get_printoptions()
    old_default = torch.get_default_dtype()
    yield
    torch.set_printoptions(**old_torch)
    gradsum.set_printoptions(**old_gradsum)
    torch.set_default_dtype(old_default)
    gradsum.set_default_dtype(getattr(gradsum, str(old_default).split(".")[-1]))


def _check_all_shapes(dtype: str, kind: str, seed: int, grad_variants: bool = True) -> None:
    for shape in SHAPES:
        arr = _values(dtype, kind, shape, seed)
        # (suffixes do not depend on the size: big tensors are checked plain only, for speed)
        small = arr.size < 100 and grad_variants
        for variant in _variants(dtype) if small else ["plain"]:
            want, got = _pair(arr, variant)
            assert got == want, f"{dtype} {kind} {shape} {variant}\n{want}\n{got}"


@pytest.mark.parametrize("profile", ["default", "short", "full"])
@pytest.mark.parametrize(("dtype", "kind"), CASES, ids=[f"{d}-{k}" for d, k in CASES])
def test_repr_matches_torch(dtype: str, kind: str, profile: str) -> None:
    _set_both(profile=profile)
    _check_all_shapes(dtype, kind, seed=sum(map(ord, dtype + kind)),
                      grad_variants=profile == "default")


CUSTOM_OPTIONS: list[dict[str, Any]] = [
    {"precision": 2},
    {"precision": 7},
    {"precision": 0},
    {"sci_mode": True},
    {"sci_mode": False},
    {"threshold": 10},
    {"threshold": 10, "edgeitems": 1},
    {"threshold": 10, "edgeitems": 0},
    {"edgeitems": 5, "threshold": 20},
    {"linewidth": 40},
    {"linewidth": 120, "precision": 3},
    {"linewidth": 10},
    {"profile": "short", "precision": 6, "sci_mode": True},
]
CUSTOM_KINDS = [("float32", "small"), ("float64", "mixed"), ("float32", "integral"),
                ("float64", "mix_all"), ("int64", "large"), ("bool", "random")]


@pytest.mark.parametrize("opts", CUSTOM_OPTIONS, ids=[str(o) for o in CUSTOM_OPTIONS])
def test_repr_matches_torch_custom_options(opts: dict[str, Any]) -> None:
    _set_both(**opts)
    for seed, (dtype, kind) in enumerate(CUSTOM_KINDS):
        _check_all_shapes(dtype, kind, seed, grad_variants=False)


@pytest.mark.parametrize("seed", range(6))
def test_repr_random_shapes_and_options(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    _set_both(precision=int(rng.integers(0, 8)), threshold=int(rng.integers(5, 200)),
              edgeitems=int(rng.integers(1, 4)), linewidth=int(rng.integers(20, 140)))
    for _ in range(25):
        ndim = int(rng.integers(0, 5))
        shape = tuple(int(s) for s in rng.integers(1, 8, ndim))
        dtype, kind = CASES[int(rng.integers(len(CASES)))]
        arr = _values(dtype, kind, shape, int(rng.integers(1000)))
        want, got = _pair(arr, _variants(dtype)[int(rng.integers(len(_variants(dtype))))])
        assert got == want, f"{dtype} {kind} {shape}\n{want}\n{got}"


def test_repr_high_rank_summarised() -> None:
    for shape in [(10, 10, 10), (2, 3, 2, 4), (7, 1, 7, 2), (3, 3, 3, 3, 3)]:
        for dtype, kind in [("float32", "small"), ("int64", "small"), ("float64", "mixed")]:
            _set_both(threshold=20)
            want, got = _pair(_values(dtype, kind, shape, 7))
            assert got == want, f"{shape}\n{want}\n{got}"


@pytest.mark.parametrize("dtype", ["float16", "int32", "int16", "int8", "uint8"])
def test_repr_other_dtypes(dtype: str) -> None:
    for shape in [(), (4,), (2, 3), (0,), (0, 2)]:
        rng = np.random.default_rng(3)
        arr = np.ascontiguousarray((rng.standard_normal(shape) * 20).astype(dtype))
        want, got = _pair(arr)
        assert got == want, f"{shape}\n{want}\n{got}"


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_repr_default_dtype_float64(dtype: str) -> None:
    torch.set_default_dtype(torch.float64)
    gradsum.set_default_dtype(gradsum.float64)
    kind = {"int64": "small", "bool": "random"}.get(dtype, "small")
    _check_all_shapes(dtype, kind, seed=11)


def test_repr_suffixes_wrap_and_names() -> None:
    # long suffixes wrap under the "tensor(" prefix
    t = torch.arange(20, dtype=torch.float32).reshape(2, 10).requires_grad_()
    g = gradsum.arange(20, dtype=gradsum.float32).reshape(2, 10).requires_grad_()
    for ft, fg in [((t * 3).sum, (g * 3).sum), ((t[:, :7] + 1.5).exp, (g[:, :7] + 1.5).exp)]:
        want, got = repr(ft()).replace("torch.", "gradsum."), repr(fg())
        assert got == want
    wide_t = torch.full((9,), 1.25, dtype=torch.float64, requires_grad=True) * 2
    wide_g = gradsum.full((9,), 1.25, dtype=gradsum.float64, requires_grad=True) * 2
    _set_both(linewidth=60)
    assert repr(wide_g) == repr(wide_t).replace("torch.", "gradsum.")
    assert str(wide_g) == str(wide_t).replace("torch.", "gradsum.")


def test_repr_parameter() -> None:
    arr = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
    p_t = torch.nn.Parameter(torch.from_numpy(arr.copy()))
    p_g = gradsum.nn.Parameter(gradsum.from_numpy(arr.copy()))
    assert repr(p_g) == repr(p_t)


def test_repr_large_tensor_is_summarised_quickly() -> None:
    arr = np.random.default_rng(0).standard_normal((1000, 1000)).astype(np.float32)
    want, got = _pair(arr)
    assert got == want


def test_printoptions_api() -> None:
    assert gradsum.get_printoptions() == torch._tensor_str.get_printoptions()
    for kwargs in [{"profile": "short"}, {"profile": "full"}, {"precision": 3, "sci_mode": True},
                   {"threshold": 7}, {"profile": "nonsense"}, {"profile": "default"}]:
        _set_both(**kwargs)
        assert gradsum.get_printoptions() == torch._tensor_str.get_printoptions()
