"""Op tests driven by the table in ``ops/opinfo`` (one module per ops family): forward values
against torch and NumPy, gradcheck/gradgradcheck in float64, parity with torch (values, dtypes,
grad_fn names, first and second gradients) in float32 and float64, error parity; then in-place
ops, indexing and hypothesis properties on broadcast shapes."""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from gradsum.autograd import gradcheck, gradgradcheck  # noqa: E402
from gradsum.ops import OPS  # noqa: E402
from ops.opinfo import (  # noqa: E402
    OPINFOS,
    ErrorCase,
    OpInfo,
    Sample,
    convert,
    flat_outputs,
    has_float_operand,
    missing_entries,
)
from ops.opinfo import grad_leaves as _leaves  # noqa: E402
from ops.opinfo import walk_tensors as _walk  # noqa: E402

torch.set_default_dtype(torch.float32)

CASES = [
    pytest.param(info, i, s, id=f"{info.name}-{i}")
    for info in OPINFOS
    for i, s in enumerate(info.samples(np.random.default_rng(zlib.crc32(info.name.encode()))))
]
DIFF_CASES = [
    c for c in CASES
    if c.values[0].differentiable and not c.values[2].forward_only
    and has_float_operand(c.values[2])
]
ERROR_CASES = [
    pytest.param(info, i, e, id=f"{info.name}-{i}")
    for info in OPINFOS
    if info.errors is not None
    for i, e in enumerate(info.errors(np.random.default_rng(1)))
]


# -- helpers ----------------------------------------------------------------------------------
def _substitute(value: Any, mapping: dict[int, Any]) -> Any:
    if id(value) in mapping:
        return mapping[id(value)]
    if isinstance(value, list):
        return [_substitute(v, mapping) for v in value]
    if isinstance(value, tuple) and type(value) is tuple:
        return tuple(_substitute(v, mapping) for v in value)
    return value


def _dtype_name(t: Any) -> str:
    if isinstance(t, torch.Tensor):
        return str(t.dtype).replace("torch.", "")
    return t.dtype.name


def _np(t: Any) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        if t._is_zerotensor():  # torch's symbolic zeros (e.g. the second derivative of abs)
            return np.zeros(tuple(t.shape), dtype=str(t.dtype).replace("torch.", ""))
        return t.detach().numpy()
    return t.detach().numpy()


def _out_dtype(t: Any, dtype: str) -> str:
    """Tolerances follow the result's dtype (an int op may give float32 in a float64 test)."""
    return "float32" if isinstance(t, torch.Tensor) and t.dtype == torch.float32 else dtype


def _tol(dtype: str, info: OpInfo | None = None) -> dict[str, float]:
    if dtype == "float64":
        return {"rtol": 1e-7, "atol": 1e-9}
    return {"rtol": info.rtol32 if info else 2e-5, "atol": info.atol32 if info else 1e-5}


def _assert_same(g: Any, t: Any, what: str, **tol: float) -> None:
    if isinstance(t, torch.Tensor):
        assert isinstance(g, gradsum.Tensor), f"{what}: expected a tensor, got {type(g)}"
        assert tuple(g.shape) == tuple(t.shape), f"{what}: shape {g.shape} vs {tuple(t.shape)}"
        assert _dtype_name(g) == _dtype_name(t), f"{what}: dtype {g.dtype} vs {t.dtype}"
        gv, tv = _np(g), _np(t)
        if gv.dtype.kind in "biu":
            np.testing.assert_array_equal(gv, tv, err_msg=what)
        else:
            np.testing.assert_allclose(gv, tv, equal_nan=True, err_msg=what, **tol)
    else:
        assert g == t, f"{what}: {g!r} vs {t!r}"


def _rng(*parts: Any) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(parts).encode()))


def _diff_outputs(outs: list[Any], lib: type) -> list[Any]:
    return [o for o in outs if isinstance(o, lib) and o.requires_grad]


# -- (d) coverage -----------------------------------------------------------------------------
def test_every_op_has_an_entry() -> None:
    missing = missing_entries(list(OPS))
    assert not missing, f"ops without an entry in tests/ops/opinfo/<family>.py: {missing}"


def test_aliases_are_the_canonical_op() -> None:
    for info in OPINFOS:
        for alias in info.aliases:
            assert OPS[alias] is OPS[info.name], (alias, info.name)


# -- (a) forward ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("info", "i", "sample"), CASES)
def test_forward(info: OpInfo, i: int, sample: Sample, dtype: str) -> None:
    gargs, gkw = convert(sample, "g", dtype, False)
    targs, tkw = convert(sample, "t", dtype, False)
    tout = info.ref(*targs, **tkw)
    gout = info.op(*gargs, **gkw)
    touts, gouts = flat_outputs(tout), flat_outputs(gout)
    assert len(gouts) == len(touts)
    for k, (g, t) in enumerate(zip(gouts, touts)):
        _assert_same(g, t, f"{info.name}{sample} output {k}", **_tol(_out_dtype(t, dtype), info))
        if isinstance(g, gradsum.Tensor):
            assert not g.requires_grad
    if info.np_ref is not None and dtype == "float64":
        nargs = [a._array if isinstance(a, gradsum.Tensor) else a for a in gargs]
        actual = _np(gouts[0])
        expected = np.asarray(info.np_ref(*nargs, **gkw)).astype(actual.dtype)
        np.testing.assert_allclose(actual, expected, rtol=1e-7, atol=1e-12)


# -- (b) numerical gradients ------------------------------------------------------------------
@pytest.mark.parametrize(("info", "i", "sample"), DIFF_CASES)
def test_gradcheck(info: OpInfo, i: int, sample: Sample) -> None:
    if sample.no_gradcheck:
        pytest.skip(sample.no_gradcheck)
    args, kwargs = convert(sample, "g", "float64", True)
    leaves = _leaves(args, kwargs, gradsum.Tensor)
    if not leaves:
        pytest.skip("no floating operand requires grad")

    def fn(*ts: Any) -> Any:
        mapping = {id(old): new for old, new in zip(leaves, ts)}
        a = tuple(_substitute(v, mapping) for v in args)
        kw = {k: _substitute(v, mapping) for k, v in kwargs.items()}
        return info.op(*a, **kw)

    assert gradcheck(fn, tuple(leaves), eps=1e-6, atol=1e-5, rtol=1e-4)
    if info.no_gradgrad is None:
        assert gradgradcheck(fn, tuple(leaves), eps=1e-6, atol=1e-5, rtol=1e-4)


# -- (c) parity with torch --------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("info", "i", "sample"), DIFF_CASES)
def test_torch_parity(info: OpInfo, i: int, sample: Sample, dtype: str) -> None:
    gargs, gkw = convert(sample, "g", dtype, True)
    targs, tkw = convert(sample, "t", dtype, True)
    gleaves = _leaves(gargs, gkw, gradsum.Tensor)
    tleaves = _leaves(targs, tkw, torch.Tensor)
    assert len(gleaves) == len(tleaves)
    gouts, touts = flat_outputs(info.op(*gargs, **gkw)), flat_outputs(info.ref(*targs, **tkw))
    assert len(gouts) == len(touts)
    for k, (g, t) in enumerate(zip(gouts, touts)):
        _assert_same(g, t, f"{info.name}{sample} output {k}",
                     **_tol(_out_dtype(t, dtype), info))
        if isinstance(t, torch.Tensor):
            assert g.requires_grad == t.requires_grad, f"output {k} requires_grad"
            assert g.is_leaf == t.is_leaf, f"output {k} is_leaf"
            if t.grad_fn is not None and info.check_grad_fn:
                tname = type(t.grad_fn).__name__
                want = info.grad_fn or info.grad_fn_map.get(tname, tname)
                assert g.grad_fn.name() == want, (
                    f"{info.name}{sample}: grad_fn {g.grad_fn.name()} vs torch {want}"
                )
    gdiff, tdiff = _diff_outputs(gouts, gradsum.Tensor), _diff_outputs(touts, torch.Tensor)
    assert len(gdiff) == len(tdiff)
    if not tdiff:
        return
    rng = _rng(info.name, i, dtype)
    ups = [rng.standard_normal(t.shape) for t in tdiff]
    gups = [gradsum.tensor(u, dtype=gdiff[0].dtype) for u in ups]
    tups = [torch.tensor(u, dtype=tdiff[0].dtype) for u in ups]
    gtol = {"rtol": 1e-4, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-7, "atol": 1e-9}

    # first gradient, through .backward (accumulating into .grad)
    gradsum.autograd.backward(gdiff, gups, retain_graph=True)
    torch.autograd.backward(tdiff, tups, retain_graph=True)
    for k, (gl, tl) in enumerate(zip(gleaves, tleaves)):
        assert (gl.grad is None) == (tl.grad is None), f"leaf {k}: grad None-ness"
        if tl.grad is not None:
            _assert_same(gl.grad, tl.grad, f"{info.name}{sample} grad of leaf {k}", **gtol)

    # second gradient: grad of <w, grad(outputs, leaves, v, create_graph=True)>
    gfirst = gradsum.autograd.grad(gdiff, gleaves, gups, create_graph=True, allow_unused=True)
    tfirst = torch.autograd.grad(tdiff, tleaves, tups, create_graph=True, allow_unused=True)
    ws = [rng.standard_normal(tuple(t.shape)) if t is not None else None for t in tfirst]
    gs = [(g * gradsum.tensor(w, dtype=g.dtype)).sum() for g, w in zip(gfirst, ws)
          if g is not None and g.requires_grad]
    ts = [(t * torch.tensor(w, dtype=t.dtype)).sum() for t, w in zip(tfirst, ws)
          if t is not None and t.requires_grad]
    gsec = (gradsum.autograd.grad(sum(gs[1:], gs[0]), gleaves, allow_unused=True) if gs
            else [None] * len(gleaves))
    tsec = (torch.autograd.grad(sum(ts[1:], ts[0]), tleaves, allow_unused=True) if ts
            else [None] * len(tleaves))
    for k, (g2, t2, tl) in enumerate(zip(gsec, tsec, tleaves)):
        gv = np.zeros(tuple(tl.shape)) if g2 is None else _np(g2)
        tv = np.zeros(tuple(tl.shape)) if t2 is None else _np(t2)
        np.testing.assert_allclose(gv, tv, equal_nan=True, err_msg=f"second grad of leaf {k}",
                                   rtol=gtol["rtol"] * 10, atol=gtol["atol"] * 10)


# -- (e) error parity -------------------------------------------------------------------------
def _names_shape(msg: str, shape: tuple[int, ...]) -> bool:
    forms = {
        "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")",
        "[" + ", ".join(map(str, shape)) + "]",
        "x".join(map(str, shape)),
    }
    return any(f in msg for f in forms)


@pytest.mark.parametrize(("info", "i", "case"), ERROR_CASES)
def test_error_parity(info: OpInfo, i: int, case: ErrorCase) -> None:
    targs, tkw = convert(case, "t", "float32", False)
    with pytest.raises(Exception) as texc:
        info.ref(*targs, **tkw)
    gargs, gkw = convert(case, "g", "float32", False)
    with pytest.raises(Exception) as gexc:
        info.op(*gargs, **gkw)
    ttype = texc.type
    # torch's own subclasses (e.g. torch.AcceleratorError) are not part of the contract
    while ttype.__module__.startswith("torch"):
        ttype = ttype.__mro__[1]
    assert (issubclass(gexc.type, ttype) and gexc.type.__module__ == "builtins") or (
        gexc.type is ttype
    ), f"{info.name}: gradsum raised {gexc.type.__name__}, torch {ttype.__name__}: {gexc.value}"
    assert gexc.type.__name__ == ttype.__name__, (gexc.type, ttype, str(gexc.value))
    msg = str(gexc.value)
    for shape in case.shapes:
        assert _names_shape(msg, shape), f"message does not name shape {shape}: {msg}"
    for s in case.contains:
        assert s in msg, f"message does not contain {s!r}: {msg}"


# -- in-place ops -----------------------------------------------------------------------------
def _pair(arr: np.ndarray, requires_grad: bool = True) -> tuple[Any, Any]:
    return (gradsum.tensor(arr, dtype=gradsum.float64, requires_grad=requires_grad),
            torch.tensor(arr, dtype=torch.float64, requires_grad=requires_grad))


INPLACE_CALLS: list[tuple[str, Any]] = [
    ("add_", lambda t, o: t.add_(o)),
    ("add_", lambda t, o: t.add_(o, alpha=2.0)),
    ("sub_", lambda t, o: t.sub_(o)),
    ("mul_", lambda t, o: t.mul_(o)),
    ("div_", lambda t, o: t.div_(o)),
    ("mul_", lambda t, o: t.mul_(2.5)),
    ("zero_", lambda t, o: t.zero_()),
    ("fill_", lambda t, o: t.fill_(0.5)),
    ("copy_", lambda t, o: t.copy_(o)),
    ("clamp_", lambda t, o: t.clamp_(-0.5, 0.5)),
    ("clamp_", lambda t, o: t.clip_(min=0.1)),
    ("masked_fill_", lambda t, o: t.masked_fill_(o > 0, -1.0)),
]


@pytest.mark.parametrize(("name", "call"), INPLACE_CALLS,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(INPLACE_CALLS)])
def test_inplace_parity(name: str, call: Any) -> None:
    rng = _rng("inplace", name)
    xa, oa = rng.uniform(-1, 1, (2, 3)), rng.uniform(0.3, 1.2, (3,))
    gx, tx = _pair(xa)
    go, to = _pair(oa)
    gy, ty = gx * 1.5, tx * 1.5
    gv0, tv0 = gy._version, ty._version
    gr, tr = call(gy, go), call(ty, to)
    assert gr is gy and tr is ty  # in-place ops return self
    assert gy._version - gv0 == ty._version - tv0 == 1
    _assert_same(gy, ty, f"{name} value", rtol=1e-12, atol=1e-12)
    assert gy.grad_fn.name() == type(ty.grad_fn).__name__
    up = rng.standard_normal((2, 3))
    gy.backward(gradsum.tensor(up, dtype=gradsum.float64))
    ty.backward(torch.tensor(up, dtype=torch.float64))
    for gl, tl, what in ((gx, tx, "x"), (go, to, "other")):
        assert (gl.grad is None) == (tl.grad is None), what
        if tl.grad is not None:
            _assert_same(gl.grad, tl.grad, f"{name} grad of {what}", rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("name", "call"), INPLACE_CALLS[:1] + INPLACE_CALLS[6:8])
def test_inplace_on_leaf_raises_and_no_grad_allows(name: str, call: Any) -> None:
    gx, tx = _pair(np.ones(3))
    go, to = _pair(np.ones(3), requires_grad=False)
    with pytest.raises(RuntimeError) as te:
        call(tx, to)
    with pytest.raises(RuntimeError) as ge:
        call(gx, go)
    assert "leaf Variable that requires grad" in str(te.value)
    assert "leaf Variable that requires grad" in str(ge.value)
    assert gx._version == 0 and gx.tolist() == [1.0, 1.0, 1.0]  # unchanged on failure
    with gradsum.no_grad():
        call(gx, go)
    with torch.no_grad():
        call(tx, to)
    assert gx._version == tx._version == 1
    assert gx.is_leaf and gx.grad_fn is None and gx.requires_grad
    _assert_same(gx.detach(), tx.detach(), name)


def test_view_of_leaf_inplace_raises() -> None:
    gx, tx = _pair(np.ones((2, 3)))
    with pytest.raises(RuntimeError):
        tx[0].mul_(2)
    with pytest.raises(RuntimeError):
        gx[0].mul_(2)


def test_saved_tensor_modified_inplace_raises() -> None:
    gx, tx = _pair(np.arange(3.0))
    gy, ty = gx * 1, tx * 1
    gz, tz = gy * gy, ty * ty
    gy.add_(1)
    ty.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        tz.sum().backward()
    with pytest.raises(RuntimeError) as e:
        gz.sum().backward()
    assert "inplace" in str(e.value).replace("in-place", "inplace")
    assert gx.grad is None


def test_inplace_on_view_copyslices() -> None:
    gx, tx = _pair(np.arange(6.0).reshape(2, 3))
    gw, tw = _pair(np.array([1.0, 2.0, 3.0]))
    gy, ty = gx * 2, tx * 2
    gv, tv = gy[1], ty[1]
    gv.mul_(gw)
    tv.mul_(tw)
    assert gy._version == ty._version == 1 and gv._version == tv._version
    assert gy.grad_fn.name() == type(ty.grad_fn).__name__ == "CopySlices"
    # the view's own grad_fn: torch shows AsStridedBackward0 (it regenerates views by
    # as_strided), gradsum replays the view op (SelectBackward0): a deliberate difference.
    assert gv.grad_fn.name() == "SelectBackward0"
    _assert_same(gy, ty, "values")
    up = np.arange(6.0).reshape(2, 3) + 1
    (gy * gradsum.tensor(up, dtype=gradsum.float64)).sum().backward()
    (ty * torch.tensor(up)).sum().backward()
    _assert_same(gx.grad, tx.grad, "grad of base")
    _assert_same(gw.grad, tw.grad, "grad of value")


SETITEM_KEYS: list[Any] = [
    (slice(0, 2),), (1,), ((slice(None), 1)), (Ellipsis, 0), (slice(None, None, 2), slice(1, 3)),
    "mask", "intarray", "intarray_pair", (-1, -2),
]


def _key(spec: Any, lib: str) -> Any:
    mod = gradsum if lib == "g" else torch
    if spec == "mask":
        return mod.tensor([[True, False, True, False], [False, False, True, True],
                           [True, True, False, False]])
    if spec == "intarray":
        return mod.tensor([2, 0])
    if spec == "intarray_pair":
        return (mod.tensor([0, 2, 1]), mod.tensor([3, 1, 1]))
    return spec


@pytest.mark.parametrize("value_kind", ["scalar", "tensor"])
@pytest.mark.parametrize("spec", SETITEM_KEYS, ids=[str(k) for k in SETITEM_KEYS])
def test_setitem_parity(spec: Any, value_kind: str) -> None:
    rng = _rng("setitem", str(spec), value_kind)
    gx, tx = _pair(rng.standard_normal((3, 4)))
    gy, ty = gx * 1.0, tx * 1.0
    gk, tk = _key(spec, "g"), _key(spec, "t")
    region = tuple(ty[tk].shape)
    if value_kind == "scalar":
        gval, tval = 0.25, 0.25
    else:
        gval, tval = _pair(rng.standard_normal(region))
    gv0, tv0 = gy._version, ty._version
    gy[gk] = gval
    ty[tk] = tval
    assert gy._version - gv0 == ty._version - tv0
    _assert_same(gy, ty, "value after setitem")
    assert gy.grad_fn.name() == type(ty.grad_fn).__name__
    up = rng.standard_normal((3, 4))
    gy.backward(gradsum.tensor(up, dtype=gradsum.float64))
    ty.backward(torch.tensor(up))
    _assert_same(gx.grad, tx.grad, "grad of x")
    if value_kind == "tensor":
        _assert_same(gval.grad, tval.grad, "grad of value")


def test_setitem_errors() -> None:
    gy, ty = gradsum.zeros(3, 4), torch.zeros(3, 4)
    for key, val in [((0,), np.ones(3)), ((slice(0, 2),), np.ones((3, 4)))]:
        with pytest.raises(RuntimeError):
            ty[key] = torch.tensor(val)
        with pytest.raises(RuntimeError) as e:
            gy[key] = gradsum.tensor(val)
        assert _names_shape(str(e.value), np.shape(val))
    with pytest.raises(IndexError):
        ty[5] = 1.0
    with pytest.raises(IndexError):
        gy[5] = 1.0


# -- indexing ---------------------------------------------------------------------------------
GETITEM_KEYS: list[Any] = [
    1, -1, slice(None), slice(1, 3), (slice(None), 2), (1, slice(0, 3, 2)), None,
    (None, 1), (slice(None), None), Ellipsis, (Ellipsis, 1), (0, Ellipsis, None),
    "mask", "row_mask", "intarray_repeat", "intarray_pair_repeat", "intarray_2d",
    (slice(None), "intarray_repeat"), ((0, 1),), (1, 2),
]


def _gkey(spec: Any, lib: str) -> Any:
    mod = gradsum if lib == "g" else torch
    table = {
        "mask": lambda: mod.tensor([[True, False, True, False], [False, False, True, True],
                                    [True, True, False, False]]),
        "row_mask": lambda: mod.tensor([True, False, True]),
        "intarray_repeat": lambda: mod.tensor([0, 2, 0, 0]),
        "intarray_pair_repeat": lambda: (mod.tensor([0, 2, 0]), mod.tensor([1, 3, 1])),
        "intarray_2d": lambda: mod.tensor([[0, 1], [1, 1]]),
    }
    if isinstance(spec, str):
        return table[spec]()
    if isinstance(spec, tuple):
        return tuple(_gkey(s, lib) if isinstance(s, str) else s for s in spec)
    return spec


@pytest.mark.parametrize("spec", GETITEM_KEYS, ids=[str(k) for k in GETITEM_KEYS])
def test_getitem_parity(spec: Any) -> None:
    rng = _rng("getitem", str(spec))
    gx, tx = _pair(rng.standard_normal((3, 4)))
    gy, ty = gx[_gkey(spec, "g")], tx[_gkey(spec, "t")]
    _assert_same(gy, ty, f"x[{spec}]")
    assert gy.grad_fn.name() == type(ty.grad_fn).__name__, spec
    up = rng.standard_normal(tuple(ty.shape))
    gy.backward(gradsum.tensor(up, dtype=gradsum.float64))
    ty.backward(torch.tensor(up))
    _assert_same(gx.grad, tx.grad, f"grad of x[{spec}]")  # repeated indices add up
    # double backward: the gradient of a gradient through indexing
    gx2, tx2 = _pair(rng.standard_normal((3, 4)))
    (gg,) = gradsum.autograd.grad((gx2 * gx2)[_gkey(spec, "g")].sum(), gx2, create_graph=True)
    (tg,) = torch.autograd.grad((tx2 * tx2)[_gkey(spec, "t")].sum(), tx2, create_graph=True)
    _assert_same(gradsum.autograd.grad(gg.sum(), gx2)[0], torch.autograd.grad(tg.sum(), tx2)[0],
                 "second grad")


def test_getitem_views_share_version() -> None:
    gx = gradsum.zeros(3, 4)
    tx = torch.zeros(3, 4)
    gv, tv = gx[1:], tx[1:]
    gv.add_(1)
    tv.add_(1)
    assert gx._version == tx._version == gv._version == tv._version == 1
    _assert_same(gx, tx, "base sees the write through the view")
    gc, tc = gx[gradsum.tensor([0, 1])], tx[torch.tensor([0, 1])]
    gc.add_(1)
    tc.add_(1)  # advanced indexing copies: the base is not written
    _assert_same(gx, tx, "copy")
    assert gx._version == tx._version == 1


@pytest.mark.parametrize("key", [(5,), (slice(None), 4), (0, 0, 0), "bad_mask", "oob_array",
                                 "float_index"])
def test_getitem_errors(key: Any) -> None:
    gx, tx = gradsum.zeros(3, 4), torch.zeros(3, 4)

    def mk(mod: Any) -> Any:
        return {"bad_mask": lambda: mod.tensor([True, False]),
                "oob_array": lambda: mod.tensor([0, 5]),
                "float_index": lambda: mod.tensor([0.5])}[key]() if isinstance(key, str) else key

    with pytest.raises(Exception) as te:
        tx[mk(torch)]
    with pytest.raises(Exception) as ge:
        gx[mk(gradsum)]
    assert ge.type is te.type, (ge.value, te.value)


# -- hypothesis properties on broadcast shapes ------------------------------------------------
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.numpy import mutually_broadcastable_shapes  # noqa: E402

BINARY = {
    "add": lambda a, b: gradsum.add(a, b, alpha=2.0),
    "sub": gradsum.sub,
    "mul": gradsum.mul,
    "div": lambda a, b: gradsum.div(a, b.abs() + 0.5),
    "pow": lambda a, b: gradsum.pow(a.abs() + 0.5, b),
    "maximum": gradsum.maximum,
    "minimum": gradsum.minimum,
    "where": lambda a, b: gradsum.where(a > 0, a, b),
    "masked_fill_via_where": lambda a, b: gradsum.where(b > 0, a * b, b),
}
SHAPES = mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3)


def _broadcast_inputs(shapes: Any, seed: int) -> tuple[Any, Any, np.random.Generator]:
    rng = np.random.default_rng(seed)
    sa, sb = shapes.input_shapes
    a = gradsum.tensor(rng.standard_normal(sa), dtype=gradsum.float64, requires_grad=True)
    b = gradsum.tensor(rng.standard_normal(sb), dtype=gradsum.float64, requires_grad=True)
    return a, b, rng


@pytest.mark.parametrize("name", sorted(BINARY))
@settings(max_examples=15, deadline=None)
@given(shapes=SHAPES, seed=st.integers(0, 2**16), c=st.floats(-3, 3).filter(lambda v: v != 0))
def test_broadcast_grad_shape_linearity_and_accumulation(name: str, shapes: Any, seed: int,
                                                         c: float) -> None:
    fn = BINARY[name]
    a, b, rng = _broadcast_inputs(shapes, seed)
    y = fn(a, b)
    assert tuple(y.shape) == tuple(shapes.result_shape)
    g = gradsum.tensor(rng.standard_normal(shapes.result_shape), dtype=gradsum.float64)
    y.backward(g, retain_graph=True)
    ga, gb = a.grad.detach().clone(), b.grad.detach().clone()
    assert tuple(ga.shape) == tuple(a.shape) and tuple(gb.shape) == tuple(b.shape)
    assert ga.dtype == a.dtype and gb.dtype == b.dtype
    # a second retained backward adds the same again (accumulation, SEMANTICS 1)
    y.backward(g, retain_graph=True)
    np.testing.assert_allclose(a.grad.numpy(), 2 * ga.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), 2 * gb.numpy(), rtol=1e-12, atol=1e-12)
    # linearity in the upstream gradient
    ca, cb = gradsum.autograd.grad(y, (a, b), g * c)
    np.testing.assert_allclose(ca.numpy(), c * ga.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(cb.numpy(), c * gb.numpy(), rtol=1e-10, atol=1e-12)


# -- no gradient buffer aliasing (SEMANTICS 1: the sink takes over only unshared buffers) -------
@pytest.mark.parametrize(("info", "i", "sample"), DIFF_CASES)
def test_accumulation_never_aliases(info: OpInfo, i: int, sample: Sample) -> None:
    """Two backwards accumulate to twice one, in place into .grad, and never write into an
    input, another leaf's .grad, or the seed gradient (a rule returning a tensor it shares
    must not have that buffer taken over)."""
    args, kwargs = convert(sample, "g", "float64", True)
    leaves = _leaves(args, kwargs, gradsum.Tensor)
    if not leaves:
        pytest.skip("no floating operand requires grad")
    every = _walk(list(args) + list(kwargs.values()), gradsum.Tensor)
    before = [t.detach().numpy().copy() for t in every]
    outs = _diff_outputs(flat_outputs(info.op(*args, **kwargs)), gradsum.Tensor)
    if not outs:
        pytest.skip("no differentiable output")
    seeds = [gradsum.ones_like(o) for o in outs]
    gradsum.autograd.backward(outs, seeds, retain_graph=True)
    first = [None if t.grad is None else t.grad.numpy().copy() for t in leaves]
    grads = [t.grad for t in leaves]
    gradsum.autograd.backward(outs, seeds)
    for t, g0, f in zip(leaves, grads, first):
        if f is None:
            assert t.grad is None
            continue
        assert t.grad is g0  # updated in place
        np.testing.assert_allclose(t.grad.numpy(), 2 * f, rtol=1e-12, atol=1e-12)
    for t, b in zip(every, before):
        np.testing.assert_array_equal(t.detach().numpy(), b)
    for s in seeds:
        np.testing.assert_array_equal(s.numpy(), 1.0)
    arrays = [t.grad.numpy() for t in leaves if t.grad is not None]
    for k, a in enumerate(arrays):
        for other in arrays[k + 1:]:
            assert not np.shares_memory(a, other)


# -- a second backward without retain_graph raises exactly where torch's does -----------------
@pytest.mark.parametrize(("info", "i", "sample"), DIFF_CASES)
def test_second_backward_raises_like_torch(info: OpInfo, i: int, sample: Sample) -> None:
    """torch frees a node's saved variables after backward, so a second backward through a
    node that saved any (an input, an index, a mask, a number wrapped as a tensor) raises,
    and through one that saved none it does not (SEMANTICS 4). gradsum must agree, op by op."""
    outcome = []
    for tag, fn in (("t", info.ref), ("g", info.op)):
        args, kwargs = convert(sample, tag, "float64", True)
        outs = [o for o in flat_outputs(fn(*args, **kwargs))
                if isinstance(o, (torch.Tensor, gradsum.Tensor)) and o.requires_grad]
        y = outs[0].sum()
        for o in outs[1:]:
            y = y + o.sum()
        y.backward()
        try:
            y.backward()
            outcome.append("second backward runs")
        except RuntimeError as e:
            assert "backward through the graph a second time" in str(e)
            outcome.append("second backward raises")
    assert outcome[1] == outcome[0], f"{info.name}{sample}: torch: {outcome[0]}"
