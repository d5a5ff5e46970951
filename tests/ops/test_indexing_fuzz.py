"""A seeded indexing fuzz against torch: random ``__getitem__``/``__setitem__`` keys on random
shapes (0-size dimensions included), run side by side in torch and in gradsum.

A key mixes ints (negative too, sometimes out of range), slices (steps 1-3; a negative step,
which torch refuses with ValueError), None, Ellipsis, bool scalars, bool masks (full-shape or
per-dimension, sometimes of the wrong length), integer index tensors and lists (1-D or 2-D,
repeated indices, several of them broadcast together, separated by slices or not: torch's
placement of the advanced dimensions) and 0-d index tensors. For each key the fuzz compares:

- get: the outcome (or exception type), values, shape, dtype, and whether the result is a view
  (a write through it reaches the base);
- set: with a number, a tensor broadcast to the indexed region, and a tensor requiring grad:
  the outcome, the written tensor, and the gradients of the base and of the value (a
  non-number value only where the key names each element once: torch leaves the winner of a
  repeated index unspecified);
- the gradient of the base through a get.

Minimised regression tests for what the fuzz found follow the sweep.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402


def _key(m: Any, key: tuple[Any, ...]) -> tuple[Any, ...]:
    out: list[Any] = []
    for k in key:
        if isinstance(k, np.ndarray):
            out.append(m.tensor(k))
        elif isinstance(k, tuple) and k and k[0] == "list":
            out.append(list(k[1]))
        else:
            out.append(k)
    return tuple(out)


def _np(t: Any) -> np.ndarray:
    return np.array(t.detach().tolist(), dtype=float).reshape(tuple(t.shape))


def _gen_key(rng: np.random.Generator, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """A random key for ``shape`` (mostly valid; sometimes not, to compare the errors)."""
    key: list[Any] = []
    d = 0
    nd = len(shape)
    used_ellipsis = False
    adv_shape: tuple[int, ...] | None = None  # (index arrays mostly broadcast together)
    n_items = int(rng.integers(0, nd + 2))
    while len(key) < n_items:
        s = shape[d] if d < nd else 1
        r = rng.random()
        if r < 0.18:
            if s and rng.random() < 0.95:
                key.append(int(rng.integers(-s, s)))
            else:
                key.append(s + int(rng.integers(0, 2)))  # (out of range)
            d += 1
        elif r < 0.45:
            start = int(rng.integers(-s - 1, s + 2)) if rng.random() < 0.5 else None
            stop = int(rng.integers(-s - 1, s + 2)) if rng.random() < 0.5 else None
            step = (None if rng.random() < 0.4 else
                    int(rng.choice([1, 2, 3])) if rng.random() < 0.97 else -1)
            key.append(slice(start, stop, step))
            d += 1
        elif r < 0.52:
            key.append(None)
        elif r < 0.57 and not used_ellipsis:
            key.append(Ellipsis)
            used_ellipsis = True
            d = max(d, nd - (n_items - len(key)))
        elif r < 0.6:
            key.append(bool(rng.random() < 0.5))
        elif r < 0.7 and d < nd:
            if rng.random() < 0.4 and d == 0 and not key:  # a full-shape mask
                key.append(rng.random(shape) < 0.5)
                d = nd
            else:
                n = s if rng.random() < 0.95 else s + 1
                key.append(rng.random(n) < 0.5)
                d += 1
        elif r < 0.92:
            k = int(rng.integers(0, 4))
            shp = (k,) if rng.random() < 0.7 else (int(rng.integers(1, 3)), k)
            if adv_shape is not None and rng.random() < 0.7:
                shp = adv_shape if rng.random() < 0.7 else (*adv_shape[:-1], 1)
            adv_shape = shp
            hi = s if rng.random() < 0.97 else s + 2
            idx = rng.integers(-hi, hi, size=shp) if hi else np.zeros(shp, dtype=np.int64)
            if rng.random() < 0.2:
                key.append(("list", [int(v) for v in idx.reshape(-1)]))
            else:
                key.append(idx.astype(np.int64))
            d += 1
        else:
            key.append(np.array(int(rng.integers(-s, s)) if s else 0, dtype=np.int64))
            d += 1
    return tuple(key)


def _outcome(fn: Any) -> tuple[str, Any]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", fn()
    except Exception as e:
        return type(e).__name__, None


def _region_ids(shape: tuple[int, ...], key: tuple[Any, ...]) -> np.ndarray | None:
    """torch's flat positions named by ``key`` (None if torch refuses it)."""
    ok, ids = _outcome(lambda: torch.arange(int(np.prod(shape))).view(shape)[_key(torch, key)])
    return None if ok != "ok" else ids.numpy()


def _observe(m: Any, x0: np.ndarray, key: tuple[Any, ...], value: Any, rng_w: np.ndarray
             ) -> list[Any]:
    """Everything one key shows in library ``m``."""
    log: list[Any] = []
    # get: values, shape, dtype, view-ness
    x = m.tensor(x0)
    res, y = _outcome(lambda: x[_key(m, key)])
    log.append(("get", res))
    if y is not None:
        log.append((tuple(y.shape), str(y.dtype).split(".")[-1], _np(y)))
        if y.numel():
            with m.no_grad():
                y.add_(1.0) if y.dim() else y.fill_(7.0)
        log.append(_np(x))
    # the gradient of the base through a get
    xr = m.tensor(x0, requires_grad=True)
    res, y = _outcome(lambda: xr[_key(m, key)])
    if y is not None:
        w = m.tensor(np.resize(rng_w, y.numel()).reshape(tuple(y.shape)))
        (y * w).sum().backward()
        log.append(("get grad", _np(xr.grad)))
    # set, with the value given (a number or an array), then with it requiring grad
    for rg in (False, True):
        if rg and not isinstance(value, np.ndarray):
            continue
        xr = m.tensor(x0, requires_grad=True)
        h = xr * 1
        v = m.tensor(value, requires_grad=rg) if isinstance(value, np.ndarray) else value
        res, _ = _outcome(lambda h=h, v=v: h.__setitem__(_key(m, key), v))
        log.append(("set", rg, res))
        if res != "ok":
            continue
        log.append(_np(h))
        w = m.tensor(np.resize(rng_w, h.numel()).reshape(tuple(h.shape)))
        (h * w).sum().backward()
        log.append((_np(xr.grad), _np(v.grad) if rg else None))
    return log


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                and np.allclose(a, b, rtol=1e-12, atol=1e-12, equal_nan=True))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def check_index_seed(seed: int) -> None:
    rng = np.random.default_rng(seed)
    nd = int(rng.choice([0, 1, 1, 2, 2, 3, 4]))
    shape = tuple(int(rng.choice([0, 1, 2, 3, 4], p=[0.08, 0.17, 0.25, 0.25, 0.25]))
                  for _ in range(nd))
    x0 = np.round(rng.normal(size=shape), 3)
    key = _gen_key(rng, shape)
    rng_w = np.round(rng.normal(size=max(64, 4 * (int(np.prod(shape)) + 1))), 3)
    ids = _region_ids(shape, key)
    value: Any = float(np.round(rng.normal(), 2))
    if ids is not None and rng.random() < 0.7:
        unique = ids.size == len(np.unique(ids))
        region = ids.shape
        if unique:  # (a tensor value only where every element is named once)
            vshape = tuple(region[int(rng.integers(0, len(region) + 1)):])
            vshape = tuple(1 if rng.random() < 0.3 else s for s in vshape)
            value = np.round(rng.normal(size=vshape), 3)
    want = _observe(torch, x0, key, value, rng_w)
    got = _observe(gradsum, x0, key, value, rng_w)
    assert _same(want, got), (
        f"seed {seed}: shape {shape}, key {key!r}, value {value!r}\n"
        f"torch:   {want}\ngradsum: {got}"
    )


@pytest.mark.parametrize("batch", range(4))
def test_random_keys_agree_with_torch(batch: int) -> None:
    for seed in range(batch * 250, batch * 250 + 250):
        check_index_seed(seed)


# --------------------------------------------------------------------------- regressions
def _outcomes(key_of: Any, shape: tuple[int, ...]) -> list[Any]:
    out = []
    for m in (torch, gradsum):
        x = m.zeros(shape)
        got = _outcome(lambda m=m, x=x: tuple(x[key_of(m)].shape))
        h = m.zeros(shape, requires_grad=True) * 1
        put = _outcome(lambda m=m, h=h: h.__setitem__(key_of(m), 1.0))
        put2 = _outcome(lambda m=m, x=x: x.__setitem__(key_of(m), m.tensor(1.0)))
        out.append((got, put[0], put2[0]))
    return out


@pytest.mark.parametrize("key_of, shape", [
    (lambda m: (slice(None),), ()),                    # seeds 160, 277
    (lambda m: (slice(0, None),), ()),
    (lambda m: (slice(2, None, -1),), ()),             # seeds 1619, 3064
    (lambda m: (m.tensor([1]), slice(None, -2, -1)), (3,)),  # seeds 835, 1638, 2084 ...
    (lambda m: (slice(None, None, 3), 5, slice(None, None, -1)), (2, 4)),
    (lambda m: (5, slice(None, None, -1)), (3, 3)),
    (lambda m: (slice(None, None, -1), 5), (3, 3)),
    (lambda m: ([3], None, slice(-3, -3, 2)), (3, 2, 1, 1)),  # seeds 1061, 2847, 3102
    (lambda m: (slice(None), [5]), (0, 3)),
    (lambda m: ([5],), (3, 0)),
    (lambda m: ([0],), (0, 0)),
    (lambda m: ([0],), (0, 3)),
])
def test_key_errors_and_empty_results_like_torch(key_of: Any, shape: tuple[int, ...]) -> None:
    # torch refuses a slice of a 0-d tensor (setitem too), counts "too many indices" (and
    # applies the ints before it) before refusing a negative step, and checks no advanced
    # index when the result is empty (still when it indexes a size-0 dimension); gradsum
    # wrote into a 0-d tensor, raised ValueError first and IndexError for empty results
    want, got = _outcomes(key_of, shape)
    assert want == got


def test_gradients_through_an_empty_index_with_out_of_range_indices() -> None:
    def run(m: Any) -> list[Any]:
        x = m.ones(3, 2, 1, requires_grad=True)
        y = x[[3], -3:-3]
        y.sum().backward()
        h = x * 1
        v = m.ones(1, 0, 1, requires_grad=True)
        h[[3], -3:-3] = v
        (h * 2).sum().backward()
        return [tuple(y.shape), _np(x.grad), tuple(v.grad.shape)]

    assert _same(run(torch), run(gradsum))
