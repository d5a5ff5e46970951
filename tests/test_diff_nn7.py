"""Side-by-side tests of the seventh nn sweep: ``ParameterList``/``ParameterDict``,
``nn.Buffer``, the padding modules, the channel-wise and alpha dropouts, ``RMSNorm``,
``LocalResponseNorm``, ``Softmax2d``, the rest of ``nn.init`` (deprecated aliases, gains,
eye/dirac/orthogonal/sparse) and ``nn.utils`` (fusion, ``skip_init``). The same program runs
in torch and gradsum; where initialisation or masks are random, parameters are copied across
or statistics compared."""

from __future__ import annotations

import inspect
import math
import warnings
from collections import OrderedDict
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import as_np, same_error  # noqa: E402
from gradsum.nn.modules.module import Module as _GModule  # noqa: E402

LIBS = [gradsum, torch]


def _repr(obj: Any) -> str:
    return repr(obj).replace("torch.", "gradsum.")


def _t(lib: Any, arr: Any, dtype: str = "float64", requires_grad: bool = True) -> Any:
    return lib.tensor(np.asarray(arr), dtype=getattr(lib, dtype), requires_grad=requires_grad)


def _tol(dtype: str) -> float:
    return 1e-12 if dtype == "float64" else 2e-6


# -- ParameterList / ParameterDict ---------------------------------------------------------------
def _plist_program(lib: Any) -> list[Any]:
    nn = lib.nn
    pl = nn.ParameterList([nn.Parameter(lib.ones(2)), lib.zeros(3, 2)])
    out: list[Any] = [len(pl), type(pl[1]).__name__, pl[1].requires_grad, pl[-1].shape]
    pl.append(lib.full((1,), 2.0))
    pl.extend([lib.ones(4)])
    pl += [nn.Parameter(lib.zeros(1), requires_grad=False)]
    pl[0] = lib.tensor([5.0, 6.0])
    out += [len(pl), type(pl[0]).__name__, pl[0].tolist(), pl[4].requires_grad]
    sl = pl[1:4:2]
    out += [type(sl).__name__, len(sl), sl[0] is pl[1], sl[1] is pl[3]]
    out += [[n for n, _ in pl.named_parameters()], list(pl.state_dict())]
    out += [[tuple(p.shape) for p in pl], _repr(pl)]
    pl.append("not a tensor")
    out += [_repr(pl).splitlines()[-2], len(list(pl.parameters()))]
    return out


def test_parameter_list_matches_torch() -> None:
    g, t = _plist_program(gradsum), _plist_program(torch)
    assert g == t


def test_parameter_list_errors_match_torch() -> None:
    same_error(lambda lib: lib.nn.ParameterList([lib.ones(1)])[3])
    same_error(lambda lib: lib.nn.ParameterList([lib.ones(1)])[-2])
    same_error(lambda lib: lib.nn.ParameterList().extend(lib.ones(2)))
    same_error(lambda lib: lib.nn.ParameterList()(lib.ones(1)))
    same_error(lambda lib: lib.nn.ParameterList([lib.ones(1)])["0"])
    e = same_error(lambda lib: lib.nn.ParameterList().extend(5))
    assert e is TypeError


def _pdict_program(lib: Any) -> list[Any]:
    nn = lib.nn
    pd = nn.ParameterDict({"b": lib.ones(2), "a": nn.Parameter(lib.zeros(1))})
    out: list[Any] = [list(pd), type(pd["b"]).__name__]
    pd.update([("z", lib.ones(1)), ("c", lib.ones(3))])
    pd.update(OrderedDict([("y", lib.ones(1)), ("x", lib.ones(1))]))
    pd["m"] = lib.zeros(2, 2)
    out += [list(pd.keys()), [k for k, _ in pd.items()], [tuple(v.shape) for v in pd.values()]]
    out += [list(reversed(pd)), "m" in pd, "q" in pd, len(pd)]
    popped = pd.pop("z")
    out += [tuple(popped.shape), list(pd)]
    k, v = pd.popitem()
    out += [k, tuple(v.shape), list(pd)]
    out += [pd.get("q") is None, tuple(pd.get("a").shape)]
    out += [tuple(pd.setdefault("s", lib.ones(5)).shape), list(pd)]
    cp = pd.copy()
    out += [list(cp), cp["a"] is pd["a"]]
    merged = pd | nn.ParameterDict({"new": lib.ones(1)})
    out += [list(merged), list(pd)]
    pd |= nn.ParameterDict({"w": lib.ones(1)})
    out += [list(pd), list(pd.fromkeys(["u", "v"]))]
    out += [[n for n, _ in pd.named_parameters()], list(pd.state_dict())]
    del pd["a"]
    out += [list(pd), _repr(pd)]
    pd.clear()
    out += [len(pd), list(pd.parameters())]
    return out


def test_parameter_dict_matches_torch() -> None:
    assert _pdict_program(gradsum) == _pdict_program(torch)


def test_parameter_dict_errors_match_torch() -> None:
    assert same_error(lambda lib: lib.nn.ParameterDict()[3]) is TypeError
    assert same_error(lambda lib: lib.nn.ParameterDict()["nope"]) is AttributeError
    assert same_error(lambda lib: lib.nn.ParameterDict().update(3)) is TypeError
    assert same_error(lambda lib: lib.nn.ParameterDict().update([(1,)])) is ValueError
    assert same_error(lambda lib: lib.nn.ParameterDict().update([3])) is TypeError
    assert same_error(lambda lib: lib.nn.ParameterDict({"a.b": lib.ones(1)})) is KeyError
    same_error(lambda lib: lib.nn.ParameterDict()(lib.ones(1)))


def _containers_in_module(lib: Any) -> list[Any]:
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ws = nn.ParameterList([lib.tensor([[1.0, 2.0], [3.0, 4.0]]),
                                        lib.tensor([[0.5, -1.0], [2.0, 0.0]])])
            self.bs = nn.ParameterDict({"first": lib.tensor([0.1, 0.2]),
                                        "second": lib.tensor([-0.3, 0.4])})

        def forward(self, x: Any) -> Any:
            x = x @ self.ws[0] + self.bs["first"]
            return (x.tanh() @ self.ws[1] + self.bs["second"]).pow(2).sum()

    net = Net()
    opt = lib.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    x = lib.tensor([[0.3, -0.2], [0.1, 0.5]])
    for _ in range(3):
        opt.zero_grad()
        net(x).backward()
        opt.step()
    return [list(net.state_dict()), [n for n, _ in net.named_parameters()], _repr(net),
            [p.detach().numpy().tolist() for p in net.parameters()]]


def test_containers_inside_a_module_train_like_torch() -> None:
    g, t = _containers_in_module(gradsum), _containers_in_module(torch)
    assert g[:3] == t[:3]
    for a, b in zip(g[3], t[3]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


# -- Buffer --------------------------------------------------------------------------------------
def _buffer_object(lib: Any) -> list[Any]:
    src = lib.ones(2, requires_grad=True)
    b = lib.nn.Buffer(src, persistent=False)
    e = lib.nn.Buffer()
    return [isinstance(b, lib.nn.Buffer), isinstance(src, lib.nn.Buffer), b.persistent,
            b.requires_grad, b.grad_fn is None, type(b).__name__, tuple(e.shape),
            isinstance(lib.nn.Buffer(lib.zeros(1)), lib.Tensor)]


def test_buffer_object_matches_torch() -> None:
    assert _buffer_object(gradsum) == _buffer_object(torch)


_SETATTR_KNOWS_BUFFER = "Buffer" in inspect.getsource(_GModule.__setattr__)


@pytest.mark.skipif(not _SETATTR_KNOWS_BUFFER,
                    reason="Module.__setattr__ does not register nn.Buffer yet (module.py)")
def test_buffer_assignment_registers_like_torch() -> None:
    def prog(lib: Any) -> list[Any]:
        m = lib.nn.Module()
        m.a = lib.nn.Buffer(lib.ones(2))
        m.b = lib.nn.Buffer(lib.zeros(1), persistent=False)
        m.plain = lib.ones(1)
        return [[n for n, _ in m.named_buffers()], list(m.state_dict())]

    assert prog(gradsum) == prog(torch)


# -- padding -------------------------------------------------------------------------------------
PADS = [
    ("ZeroPad1d", 2, (2, 3)), ("ZeroPad1d", (1, 0), (2, 4)),
    ("ZeroPad2d", 1, (1, 2, 3)), ("ZeroPad2d", (1, 0, 2, -1), (2, 1, 3, 4)),
    ("ZeroPad3d", (1, 0, 0, 2, 1, 1), (1, 2, 2, 3, 2)),
    ("ReflectionPad1d", 2, (2, 2, 4)), ("ReflectionPad1d", (0, 3), (3, 5)),
    ("ReflectionPad2d", (1, 2, 0, 1), (2, 3, 4)), ("ReflectionPad2d", 1, (1, 2, 3, 3)),
    ("ReflectionPad3d", 1, (1, 1, 2, 3, 3)),
    ("ReflectionPad3d", (1, 0, 2, 1, 0, 1), (2, 3, 3, 3)),
    ("ReplicationPad1d", (3, 1), (2, 2, 2)), ("ReplicationPad2d", (2, 0, 1, 3), (1, 2, 2, 3)),
    ("ReplicationPad3d", 2, (1, 2, 2, 2)),
    ("ReplicationPad3d", (0, 1, 1, 0, 2, 2), (1, 1, 2, 2, 3)),
    ("CircularPad1d", (2, 1), (2, 3, 3)), ("CircularPad1d", 1, (2, 3)),
    ("CircularPad2d", (1, 1, 2, 0), (1, 2, 3, 3)), ("CircularPad2d", (-1, 2, 1, 1), (2, 3, 4)),
    ("CircularPad3d", 1, (1, 1, 2, 2, 2)), ("CircularPad3d", (1, 0, 0, 1, 1, 1), (2, 2, 3, 3)),
]


def _pad_program(lib: Any, name: str, padding: Any, shape: tuple[int, ...], dtype: str,
                 value: float | None = None) -> list[Any]:
    arr = np.random.default_rng(len(shape) * 7 + sum(shape)).standard_normal(shape)
    x = _t(lib, arr, dtype)
    m = getattr(lib.nn, name)(padding) if value is None else getattr(lib.nn, name)(padding, value)
    y = m(x)
    w = _t(lib, np.linspace(-1.0, 2.0, y.numel()).reshape(tuple(y.shape)), dtype, False)
    (g,) = lib.autograd.grad((y * w).sum(), x)
    return [as_np(y), as_np(g), y.grad_fn.name().split("::")[-1], _repr(m), m.padding,
            list(m.state_dict()), str(y.dtype).split(".")[-1]]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,padding,shape", PADS)
def test_padding_modules_match_torch(name: str, padding: Any, shape: tuple[int, ...],
                                     dtype: str) -> None:
    g = _pad_program(gradsum, name, padding, shape, dtype)
    t = _pad_program(torch, name, padding, shape, dtype)
    tol = _tol(dtype)
    np.testing.assert_allclose(g[0], t[0], rtol=tol, atol=tol)
    np.testing.assert_allclose(g[1], t[1], rtol=tol, atol=tol)
    assert g[2:] == t[2:]


@pytest.mark.parametrize("name,padding,value,shape", [
    ("ConstantPad1d", 2, 3.5, (2, 3)), ("ConstantPad1d", (1, -1), -2.0, (1, 2, 4)),
    ("ConstantPad2d", (1, 2, 0, 1), 1, (2, 2, 3)), ("ConstantPad3d", 1, 0.25, (1, 2, 2, 2)),
    ("ConstantPad3d", (2, 0, 1, 0, 0, 1), -1.5, (2, 1, 2, 2, 2)),
])
def test_constant_padding_modules_match_torch(name: str, padding: Any, value: float,
                                              shape: tuple[int, ...]) -> None:
    g = _pad_program(gradsum, name, padding, shape, "float64", value)
    t = _pad_program(torch, name, padding, shape, "float64", value)
    np.testing.assert_allclose(g[0], t[0])
    np.testing.assert_allclose(g[1], t[1])
    assert g[2:] == t[2:]


def test_padding_module_classes_and_errors_match_torch() -> None:
    for lib in LIBS:
        assert isinstance(lib.nn.ZeroPad2d(1), lib.nn.ConstantPad2d)
    for name, bad in [("CircularPad1d", (4,)), ("CircularPad2d", (2, 2)),
                      ("CircularPad3d", (2, 2, 2)), ("CircularPad3d", (1, 1, 1, 1, 1, 1))]:
        assert same_error(
            lambda lib, name=name, bad=bad: getattr(lib.nn, name)(1)(lib.ones(*bad))
        ) is ValueError
    same_error(lambda lib: lib.nn.ReflectionPad1d(3)(lib.ones(1, 2, 3)))
    same_error(lambda lib: lib.nn.ReflectionPad2d(1)(lib.ones(3)))
    same_error(lambda lib: lib.nn.ReplicationPad3d(1)(lib.ones(2, 2)))


# -- dropout variants ----------------------------------------------------------------------------
def _channel_masks(y: Any, x: Any, feature_dims: int) -> np.ndarray:
    """Per-channel keep flags of a feature dropout (asserting one draw per channel)."""
    ya, xa = as_np(y), as_np(x)
    lead = ya.reshape(ya.shape[:feature_dims] + (-1,))
    kept = lead != 0
    assert (kept.all(-1) | (~kept).all(-1)).all(), "mask is not channel-wise"
    ratio = lead[kept.all(-1)] / xa.reshape(lead.shape)[kept.all(-1)]
    return kept.all(-1), ratio


@pytest.mark.parametrize("fn,shape,lead", [
    ("dropout1d", (40, 30, 5), 2), ("dropout1d", (1500, 2), 1),
    ("dropout2d", (40, 30, 2, 3), 2), ("dropout2d", (40, 30, 4), 2),
    ("dropout3d", (40, 30, 2, 2, 2), 2), ("dropout3d", (1500, 1, 2, 1), 1),
])
def test_feature_dropout_statistics_and_masks(fn: str, shape: tuple[int, ...],
                                              lead: int) -> None:
    p = 0.3
    rates = []
    for lib in LIBS:
        lib.manual_seed(0)
        x = lib.rand(*shape, dtype=lib.float64) + 0.5
        x.requires_grad_(True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = getattr(lib.nn.functional, fn)(x, p)
        kept, ratio = _channel_masks(y, x, lead)
        np.testing.assert_allclose(ratio, 1 / (1 - p), rtol=1e-12)
        (g,) = lib.autograd.grad(y.sum(), x)
        np.testing.assert_allclose(as_np(g) * as_np(x), as_np(y), rtol=1e-12, atol=1e-12)
        rates.append(1 - kept.mean())
        assert y.grad_fn.name() in ("MulBackward0", "SqueezeBackward1")
    for r in rates:
        assert abs(r - p) < 0.06


def _dropout_grad_fn(lib: Any, fn: str, shape: tuple[int, ...], **kw: Any) -> Any:
    x = lib.ones(*shape, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = getattr(lib.nn.functional, fn)(x, **kw)
    return [y is x, None if y.grad_fn is None else y.grad_fn.name(), tuple(y.shape)]


@pytest.mark.parametrize("fn,shape,kw", [
    ("dropout1d", (2, 3), {}), ("dropout1d", (2, 3, 4), {}), ("dropout1d", (2, 3), {"p": 1.0}),
    ("dropout1d", (2, 3), {"training": False}), ("dropout1d", (2, 3, 4), {"training": False}),
    ("dropout2d", (2, 3, 2, 2), {}), ("dropout2d", (2, 3, 2, 2), {"p": 0.0}),
    ("dropout3d", (2, 3, 2, 2), {}), ("dropout3d", (1, 2, 3, 2, 2), {}),
    ("dropout3d", (2, 3, 2, 2), {"training": False}),
    ("alpha_dropout", (5, 4), {}), ("alpha_dropout", (5, 4), {"training": True}),
    ("alpha_dropout", (5, 4), {"training": True, "p": 1.0}),
    ("feature_alpha_dropout", (5, 4, 3), {"training": True}),
    ("feature_alpha_dropout", (0, 4, 3), {"training": True}),
])
def test_dropout_identity_paths_and_graph_match_torch(fn: str, shape: tuple[int, ...],
                                                      kw: dict[str, Any]) -> None:
    assert _dropout_grad_fn(gradsum, fn, shape, **kw) == _dropout_grad_fn(torch, fn, shape, **kw)


@pytest.mark.parametrize("fn,shape", [("dropout2d", (4, 5)), ("dropout2d", (2, 3, 4)),
                                      ("dropout2d", (1, 2, 3, 4, 5)), ("dropout3d", (2, 3, 4)),
                                      ("dropout3d", (1, 1, 2, 3, 4, 5)),
                                      ("dropout2d", (2, 3, 4, 5))])
def test_dropout_rank_warnings_match_torch(fn: str, shape: tuple[int, ...]) -> None:
    seen = []
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            getattr(lib.nn.functional, fn)(lib.ones(*shape), 0.5)
        seen.append([(type(m.message).__name__, str(m.message), m.filename) for m in w])
    assert [s[:2] for s in seen[0]] == [s[:2] for s in seen[1]]
    assert all(s[2] == __file__ for s in seen[0])  # (stacklevel points at the caller)


def test_dropout_errors_match_torch() -> None:
    for fn in ("dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"):
        for p in (-0.1, 1.5):
            assert same_error(lambda lib, fn=fn, p=p: getattr(lib.nn.functional, fn)(
                lib.ones(2, 3, 4), p)) is ValueError
    assert same_error(lambda lib: lib.nn.functional.dropout1d(lib.ones(2, 3, 4, 5))) \
        is RuntimeError
    assert same_error(lambda lib: lib.nn.functional.dropout1d(lib.ones(4))) is RuntimeError
    assert same_error(
        lambda lib: lib.nn.functional.feature_alpha_dropout(lib.ones(4), 0.5, True)
    ) is RuntimeError
    for name in ("Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"):
        assert same_error(lambda lib, name=name: getattr(lib.nn, name)(1.2)) is ValueError


@pytest.mark.parametrize("name", ["Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                                  "FeatureAlphaDropout"])
def test_dropout_modules_repr_train_eval_and_inplace(name: str) -> None:
    shape = {"Dropout1d": (4, 6, 3), "Dropout2d": (4, 6, 3, 3), "Dropout3d": (4, 6, 2, 2, 2),
             "AlphaDropout": (4, 6), "FeatureAlphaDropout": (4, 6, 3)}[name]
    out = []
    for lib in LIBS:
        m = getattr(lib.nn, name)(0.25, inplace=True)
        m2 = getattr(lib.nn, name)()
        x = lib.ones(*shape)
        y_eval = m.eval()(x)
        m.train()
        x2 = lib.ones(*shape)
        y_train = m(x2)
        out.append([_repr(m), _repr(m2), y_eval is x, list(m.state_dict()),
                    y_train is x2 if "Alpha" not in name else None,
                    bool((as_np(x2) != 1).any()) if "Alpha" not in name else None])
    assert out[0] == out[1]


@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_keeps_mean_and_variance_like_torch(feature: bool) -> None:
    p, stats = 0.2, []
    for lib in LIBS:
        lib.manual_seed(1)
        x = lib.randn(400, 50, 4, dtype=lib.float64)
        F = lib.nn.functional
        fn = F.feature_alpha_dropout if feature else F.alpha_dropout
        y = fn(x, p, True)
        ya, xa = as_np(y), as_np(x)
        # y is a * x + b(mask): two affine maps, one per mask value
        a = 1.0 / math.sqrt((1.7580993408473766 ** 2 * p + 1) * (1 - p))
        kept = np.isclose(ya, a * xa + 1.7580993408473766 * a * p)
        dropped = np.isclose(ya, 1.7580993408473766 * a * (p - 1))
        assert (kept | dropped).all()
        if feature:
            assert (kept.all(-1) | dropped.all(-1)).all()
        stats.append([ya.mean(), ya.std(), dropped.mean()])
    for s in stats:
        assert abs(s[0]) < 0.03 and abs(s[1] - 1) < 0.03 and abs(s[2] - p) < 0.03


def test_alpha_dropout_inplace_and_float32_match_torch_formula() -> None:
    p = 0.4
    for lib in LIBS:
        x = lib.linspace(-2.0, 2.0, 50)
        y = lib.nn.functional.alpha_dropout(x, p, True, inplace=True)
        assert y is x and y.dtype == lib.float32


# -- RMSNorm / LocalResponseNorm / Softmax2d -----------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("ns,eps,affine,shape", [
    (4, None, True, (3, 4)), ((2, 3), 1e-3, True, (2, 2, 3)), ([3], None, False, (5, 3)),
    ((4,), 0.5, True, (4,)), ((2, 2), None, False, (3, 1, 2, 2)),
])
def test_rmsnorm_matches_torch(ns: Any, eps: float | None, affine: bool,
                               shape: tuple[int, ...], dtype: str) -> None:
    res = []
    arr = np.random.default_rng(3).standard_normal(shape)
    for lib in (torch, gradsum):
        m = lib.nn.RMSNorm(ns, eps=eps, elementwise_affine=affine)
        if dtype == "float64":
            m = m.double()
        if affine:
            with lib.no_grad():
                m.weight.copy_(_t(lib, np.linspace(0.5, 1.5, m.weight.numel()).reshape(
                    tuple(m.weight.shape)), dtype, False))
        x = _t(lib, arr, dtype)
        y = m(x)
        gs = lib.autograd.grad((y * y * y).sum(), [x, *m.parameters()], create_graph=True)
        gg = lib.autograd.grad(sum((g * g).sum() for g in gs), x)
        res.append([as_np(y), *[as_np(g) for g in gs], as_np(gg[0]), y.grad_fn.name(),
                    _repr(m), list(m.state_dict()), m.eps, str(y.dtype).split(".")[-1]])
    t, g = res
    tol = 1e-10 if dtype == "float64" else 2e-5
    n = len(t) - 5
    for a, b in zip(g[:n], t[:n]):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    assert g[n:] == t[n:]


def test_rmsnorm_default_init_and_errors_match_torch() -> None:
    for lib in LIBS:
        m = lib.nn.RMSNorm([2, 3])
        assert as_np(m.weight).tolist() == [[1.0] * 3] * 2
        assert tuple(m.weight.shape) == (2, 3) and m.weight.requires_grad
    assert same_error(lambda lib: lib.nn.functional.rms_norm(lib.ones(2, 3), [4])) \
        is RuntimeError
    assert same_error(lambda lib: lib.nn.functional.rms_norm(lib.ones(2, 3), [3],
                                                             lib.ones(2))) is RuntimeError
    assert same_error(lambda lib: lib.nn.functional.rms_norm(lib.ones(2, 3), 3)) is TypeError
    assert same_error(lambda lib: lib.nn.functional.rms_norm(lib.ones(2, 3, dtype=lib.int64),
                                                             [3])) is NotImplementedError
    # a float64 weight on a float32 input: float32 out, with torch's warning
    out = []
    for lib in LIBS:
        with pytest.warns(UserWarning, match="Mismatch dtype between input and weight"):
            y = lib.nn.functional.rms_norm(lib.ones(2, 3), [3], lib.ones(3, dtype=lib.float64))
        out.append(str(y.dtype).split(".")[-1])
    assert out[0] == out[1]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("size,shape,kw", [
    (2, (2, 5, 4), {}), (3, (2, 5, 4), {"alpha": 0.5, "beta": 0.5, "k": 2.0}),
    (5, (1, 4, 3, 3), {"alpha": 1.0}), (4, (2, 6, 2, 2, 2), {"alpha": 0.3, "k": 0.5}),
    (1, (2, 3, 2), {"alpha": 2.0}), (7, (1, 3, 2, 2), {"alpha": 0.9}),
])
def test_local_response_norm_matches_torch(size: int, shape: tuple[int, ...], kw: dict[str, Any],
                                           dtype: str) -> None:
    res = []
    arr = np.random.default_rng(5).standard_normal(shape)
    for lib in (torch, gradsum):
        m = lib.nn.LocalResponseNorm(size, **kw)
        x = _t(lib, arr, dtype)
        y = m(x)
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        res.append([as_np(y), as_np(g), as_np(gg), y.grad_fn.name(), _repr(m)])
    t, g = res
    tol = 1e-10 if dtype == "float64" else 5e-5
    for a, b in zip(g[:3], t[:3]):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    assert g[3:] == t[3:]


def test_local_response_norm_edges_match_torch() -> None:
    assert same_error(lambda lib: lib.nn.functional.local_response_norm(lib.ones(2, 3), 2)) \
        is ValueError
    for lib in LIBS:
        x = lib.ones(0, 3, 2)
        assert lib.nn.functional.local_response_norm(x, 2) is x


@pytest.mark.parametrize("shape", [(2, 3, 2, 2), (3, 2, 4)])
def test_softmax2d_matches_torch(shape: tuple[int, ...]) -> None:
    res = []
    arr = np.random.default_rng(6).standard_normal(shape)
    for lib in (torch, gradsum):
        x = _t(lib, arr)
        y = lib.nn.Softmax2d()(x)
        (g,) = lib.autograd.grad((y * y).sum(), x)
        res.append([as_np(y), as_np(g), y.grad_fn.name(), _repr(lib.nn.Softmax2d())])
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-12)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-10, atol=1e-14)
    assert res[1][2:] == res[0][2:]
    for bad in [(3, 4), (1, 2, 3, 4, 5)]:
        assert same_error(lambda lib, bad=bad: lib.nn.Softmax2d()(lib.ones(*bad))) is ValueError


# -- nn.init -------------------------------------------------------------------------------------
GAINS = [("linear", None), ("conv1d", None), ("conv2d", None), ("conv3d", None),
         ("conv_transpose1d", None), ("conv_transpose2d", None), ("conv_transpose3d", None),
         ("sigmoid", None), ("tanh", None), ("relu", None), ("leaky_relu", None),
         ("leaky_relu", 0.2), ("leaky_relu", 3), ("selu", None)]


def test_calculate_gain_matches_torch() -> None:
    for name, param in GAINS:
        g = gradsum.nn.init.calculate_gain(name, param)
        t = torch.nn.init.calculate_gain(name, param)
        assert g == t and type(g) is type(t), (name, param)
    for name, param in [("softmax", None), ("leaky_relu", True), ("leaky_relu", "0.1")]:
        assert same_error(
            lambda lib, name=name, param=param: lib.nn.init.calculate_gain(name, param)
        ) is ValueError


ALIASES = ["uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"]


@pytest.mark.parametrize("name", ALIASES)
def test_deprecated_init_aliases_warn_and_call_like_torch(name: str) -> None:
    args = {"constant": (0.5,), "sparse": (0.5,)}.get(name, ())
    shape = (4, 3, 3) if name == "dirac" else (4, 3)
    out = []
    for lib in LIBS:
        lib.manual_seed(0)
        w = lib.empty(*shape)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            r = getattr(lib.nn.init, name)(w, *args)
        out.append([[(type(m.message).__name__, str(m.message)) for m in rec], r is w,
                    getattr(lib.nn.init, name).__name__])
        if name in ("eye", "dirac", "constant"):
            out[-1].append(as_np(w).tolist())
    assert out[0] == out[1]


def test_eye_and_dirac_match_torch() -> None:
    for shape in [(3, 5), (4, 2), (3, 3)]:
        g = gradsum.nn.init.eye_(gradsum.empty(*shape, requires_grad=True))
        t = torch.nn.init.eye_(torch.empty(*shape, requires_grad=True))
        assert as_np(g).tolist() == as_np(t).tolist() and g.requires_grad
    for shape, groups in [((4, 2, 3), 1), ((6, 2, 3, 3), 2), ((4, 3, 2, 3, 3), 2),
                          ((6, 1, 2, 2), 3), ((2, 4, 5), 1)]:
        g = gradsum.nn.init.dirac_(gradsum.empty(*shape), groups)
        t = torch.nn.init.dirac_(torch.empty(*shape), groups)
        assert as_np(g).tolist() == as_np(t).tolist(), (shape, groups)
    same_error(lambda lib: lib.nn.init.eye_(lib.empty(2, 2, 2)))
    same_error(lambda lib: lib.nn.init.dirac_(lib.empty(2, 2)))
    same_error(lambda lib: lib.nn.init.dirac_(lib.empty(3, 2, 3), 2))


@pytest.mark.parametrize("shape,gain", [((5, 3), 1.0), ((3, 7), 2.0), ((4, 2, 3), 0.5),
                                        ((6, 6), 1.0)])
def test_orthogonal_is_orthogonal_and_distributed_like_torch(shape: tuple[int, ...],
                                                             gain: float) -> None:
    rows = shape[0]
    cols = int(np.prod(shape[1:]))
    stats = []
    for lib in LIBS:
        lib.manual_seed(0)
        samples = []
        for _ in range(300):
            w = lib.nn.init.orthogonal_(lib.empty(*shape, dtype=lib.float64), gain=gain)
            q = as_np(w).reshape(rows, cols)
            gram = q @ q.T if rows <= cols else q.T @ q
            np.testing.assert_allclose(gram, gain ** 2 * np.eye(min(rows, cols)), atol=1e-10)
            samples.append(q)
        s = np.stack(samples)
        # Haar-distributed: each entry has mean 0 and variance gain^2 / max(rows, cols)
        stats.append([s.mean(), (s ** 2).mean(axis=0).mean()])
    for m, v in stats:
        assert abs(m) < 0.03 * gain
        assert abs(v - gain ** 2 / max(rows, cols)) < 0.1 * gain ** 2 / max(rows, cols)
    same_error(lambda lib: lib.nn.init.orthogonal_(lib.empty(3)))
    for lib in LIBS:
        e = lib.empty(0, 3)
        assert lib.nn.init.orthogonal_(e) is e


def test_sparse_and_trunc_normal_match_torch_statistically() -> None:
    out = []
    for lib in LIBS:
        lib.manual_seed(0)
        w = lib.nn.init.sparse_(lib.empty(10, 400, dtype=lib.float64), sparsity=0.35, std=0.5)
        a = as_np(w)
        t = as_np(lib.nn.init.trunc_normal_(lib.empty(20000, dtype=lib.float64), mean=0.5,
                                            std=2.0, a=-1.0, b=1.5))
        out.append([(a == 0).sum(0).tolist(), a[a != 0].std(), t.min() >= -1.0,
                    t.max() <= 1.5, t.mean()])
    assert out[0][0] == out[1][0]
    assert abs(out[0][1] - out[1][1]) < 0.05
    assert out[0][2:4] == out[1][2:4] == [True, True]
    assert abs(out[0][4] - out[1][4]) < 0.05
    same_error(lambda lib: lib.nn.init.sparse_(lib.empty(2, 2, 2), 0.1))


# -- nn.utils ------------------------------------------------------------------------------------
def _copy_module(src: Any, dst: Any) -> None:
    """torch module ``src``'s parameters and buffers into gradsum module ``dst``."""
    sd = {k: gradsum.tensor(v.detach().numpy()) for k, v in src.state_dict().items()}
    dst.load_state_dict(sd)


def _bn_stats(bn: Any) -> None:
    with torch.no_grad():
        n = bn.num_features
        bn.running_mean.copy_(torch.linspace(-1.0, 1.0, n))
        bn.running_var.copy_(torch.linspace(0.5, 2.0, n))
        if bn.weight is not None:
            bn.weight.copy_(torch.linspace(0.7, 1.3, n))
            bn.bias.copy_(torch.linspace(-0.2, 0.4, n))


@pytest.mark.parametrize("bias,affine", [(True, True), (False, True), (True, False)])
def test_fuse_conv_bn_eval_matches_torch(bias: bool, affine: bool) -> None:
    tconv = torch.nn.Conv2d(3, 4, 3, padding=1, bias=bias).eval()
    tbn = torch.nn.BatchNorm2d(4, affine=affine).eval()
    _bn_stats(tbn)
    gconv = gradsum.nn.Conv2d(3, 4, 3, padding=1, bias=bias).eval()
    gbn = gradsum.nn.BatchNorm2d(4, affine=affine).eval()
    _copy_module(tconv, gconv)
    _copy_module(tbn, gbn)
    tf = torch.nn.utils.fuse_conv_bn_eval(tconv, tbn)
    gf = gradsum.nn.utils.fuse_conv_bn_eval(gconv, gbn)
    assert gf is not gconv and type(gf) is type(gconv)
    for name in ("weight", "bias"):
        np.testing.assert_allclose(as_np(getattr(gf, name)), as_np(getattr(tf, name)),
                                   rtol=1e-6, atol=1e-7)
        assert type(getattr(gf, name)).__name__ == "Parameter"
        assert getattr(gf, name).requires_grad == getattr(tf, name).requires_grad
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)
    np.testing.assert_allclose(as_np(gf(gradsum.tensor(x))), as_np(tbn(tconv(torch.tensor(x)))),
                               rtol=1e-5, atol=1e-5)
    assert gconv.bias is None if not bias else gconv.bias is not gf.bias


def test_fuse_weights_and_errors_match_torch() -> None:
    rng = np.random.default_rng(2)
    arrs = [rng.standard_normal(s) for s in [(4, 2, 3), (4,), (4,), (4,), (4,), (4,)]]
    arrs[3] = np.abs(arrs[3]) + 0.1
    for transpose in (False, True):
        cw = arrs[0] if not transpose else rng.standard_normal((2, 4, 3))
        res = []
        for lib in (torch, gradsum):
            ts = [lib.tensor(a) for a in [cw, *arrs[1:]]]
            w, b = lib.nn.utils.fuse_conv_bn_weights(ts[0], ts[1], ts[2], ts[3], 1e-3, ts[4],
                                                     ts[5], transpose)
            res.append([as_np(w), as_np(b), w.requires_grad, type(w).__name__])
        np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-12)
        np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-12)
        assert res[1][2:] == res[0][2:]
    # linear
    tl, tbn = torch.nn.Linear(3, 4).eval(), torch.nn.BatchNorm1d(4).eval()
    _bn_stats(tbn)
    gl, gbn = gradsum.nn.Linear(3, 4).eval(), gradsum.nn.BatchNorm1d(4).eval()
    _copy_module(tl, gl)
    _copy_module(tbn, gbn)
    tf, gf = torch.nn.utils.fuse_linear_bn_eval(tl, tbn), gradsum.nn.utils.fuse_linear_bn_eval(
        gl, gbn)
    for name in ("weight", "bias"):
        np.testing.assert_allclose(as_np(getattr(gf, name)), as_np(getattr(tf, name)),
                                   rtol=1e-6, atol=1e-7)
    tw, tb = torch.nn.utils.fuse_linear_bn_weights(tl.weight, None, tbn.running_mean,
                                                   tbn.running_var, 1e-5, tbn.weight, tbn.bias)
    gw, gb = gradsum.nn.utils.fuse_linear_bn_weights(gl.weight, None, gbn.running_mean,
                                                     gbn.running_var, 1e-5, gbn.weight,
                                                     gbn.bias)
    np.testing.assert_allclose(as_np(gw), as_np(tw), rtol=1e-6)
    np.testing.assert_allclose(as_np(gb), as_np(tb), rtol=1e-6, atol=1e-7)
    assert gb.requires_grad == tb.requires_grad
    # errors
    assert same_error(lambda lib: lib.nn.utils.fuse_linear_bn_eval(
        lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4).eval())) is AssertionError
    assert same_error(lambda lib: lib.nn.utils.fuse_linear_bn_eval(
        lib.nn.Linear(3, 4).eval(), lib.nn.BatchNorm1d(3).eval())) is AssertionError
    assert same_error(lambda lib: lib.nn.utils.fuse_conv_bn_eval(
        lib.nn.Conv2d(3, 4, 1).eval(),
        lib.nn.BatchNorm2d(4, track_running_stats=False).eval())) is AssertionError
    assert same_error(lambda lib: lib.nn.utils.fuse_conv_bn_eval(
        lib.nn.Conv2d(3, 4, 1).eval(), lib.nn.BatchNorm2d(4))) is AssertionError


def test_skip_init_and_vector_conversion_match_torch() -> None:
    out = []
    for lib in LIBS:
        lib.manual_seed(3)
        m = lib.nn.utils.skip_init(lib.nn.Linear, 3, 4, bias=False)
        after = lib.rand(2).tolist()
        lib.manual_seed(3)
        fresh = lib.rand(2).tolist()
        out.append([type(m).__name__, tuple(m.weight.shape), m.bias is None, after == fresh,
                    list(m.state_dict()), m.weight.requires_grad])
    assert out[0] == out[1]

    class NoDevice(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()

    class GNoDevice(gradsum.nn.Module):
        def __init__(self) -> None:
            super().__init__()

    with pytest.raises(RuntimeError):
        torch.nn.utils.skip_init(NoDevice)
    with pytest.raises(RuntimeError):
        gradsum.nn.utils.skip_init(GNoDevice)
    assert same_error(lambda lib: lib.nn.utils.skip_init(int)) is RuntimeError
    # parameters_to_vector / vector_to_parameters
    res = []
    for lib in (torch, gradsum):
        lin = lib.nn.Linear(2, 3)
        with lib.no_grad():
            for i, p in enumerate(lin.parameters()):
                p.copy_(lib.arange(float(p.numel())).reshape(tuple(p.shape)) + i)
        v = lib.nn.utils.parameters_to_vector(lin.parameters())
        (v * v).sum().backward()
        lib.nn.utils.vector_to_parameters(v.detach() * 2, lin.parameters())
        res.append([as_np(v), as_np(lin.weight.grad), as_np(lin.bias), v.grad_fn.name()])
    for a, b in zip(res[1][:3], res[0][:3]):
        np.testing.assert_allclose(a, b)
    assert res[1][3] == res[0][3]
    assert same_error(lambda lib: lib.nn.utils.vector_to_parameters(
        [1.0], lib.nn.Linear(1, 1).parameters())) is TypeError
