"""Side-by-side tests of ``nn.utils.rnn`` (packing / padding, PackedSequence through RNN /
LSTM / GRU), ``nn.utils.parametrize`` and ``nn.utils.parametrizations`` (weight_norm,
spectral_norm, orthogonal), the legacy ``weight_norm`` / ``spectral_norm`` hooks and
``stateless.functional_call`` / ``func.functional_call`` against torch: the same weights in
both, then values, gradients (float64 tightly, float32 loosely), dtypes, state_dict keys,
reprs and exception types / opening phrases."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import same_error  # noqa: E402
from nn_helpers import (  # noqa: E402
    floats,
    twins,
)

TOL = {"float64": 1e-10, "float32": 1e-5}
LIBS = (torch, gradsum)


def _close(g: Any, t: Any, dtype: str = "float64", what: str = "") -> None:
    assert tuple(g.shape) == tuple(t.shape), (what, g.shape, t.shape)
    assert str(g.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], what
    np.testing.assert_allclose(floats(g), floats(t), rtol=TOL[dtype], atol=TOL[dtype], err_msg=what)


def _cot(lib: Any, y: Any) -> Any:
    """A fixed, non-uniform cotangent pattern."""
    k = np.cos(1.3 * np.arange(int(np.prod(y.shape)))).reshape(tuple(y.shape))
    return lib.tensor(k, dtype=y.dtype)


def _both(arr: np.ndarray, dtype: str = "float64", grad: bool = True) -> tuple[Any, Any]:
    return (gradsum.tensor(arr, dtype=getattr(gradsum, dtype), requires_grad=grad),
            torch.tensor(arr, dtype=getattr(torch, dtype), requires_grad=grad))


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


# -- packing and padding -------------------------------------------------------------------
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_pad_roundtrip_values_and_grads(batch_first: bool, enforce_sorted: bool) -> None:
    lengths = [4, 3, 3, 1] if enforce_sorted else [3, 4, 1, 3]
    shape = (4, 5, 2) if batch_first else (5, 4, 2)
    x = _rng(1).standard_normal(shape)
    res = []
    for lib, xt in zip(LIBS, _both(x)[::-1]):
        ru = lib.nn.utils.rnn
        p = ru.pack_padded_sequence(xt, lengths, batch_first=batch_first,
                                    enforce_sorted=enforce_sorted)
        assert type(p).__name__ == "PackedSequence"
        out, lens = ru.pad_packed_sequence(p, batch_first=batch_first, padding_value=-2.0,
                                           total_length=5)
        loss = (p.data * _cot(lib, p.data)).sum() + (out * _cot(lib, out)).sum()
        loss.backward()
        res.append((p, out, lens, xt.grad))
    (tp, to, tl, tg), (gp, go, gl, gg) = res
    _close(gp.data, tp.data, what="data")
    assert gp.batch_sizes.tolist() == tp.batch_sizes.tolist()
    assert str(gp.batch_sizes.dtype).endswith("int64")
    for a, b in ((gp.sorted_indices, tp.sorted_indices),
                 (gp.unsorted_indices, tp.unsorted_indices)):
        assert (a is None and b is None) or a.tolist() == b.tolist()
    _close(go, to, what="padded")
    assert gl.tolist() == tl.tolist() and str(gl.dtype).endswith("int64")
    _close(gg, tg, what="grad")


def test_pad_sequence_sides_dtypes_and_grads() -> None:
    arrs = [_rng(2).standard_normal((n, 2)) for n in (2, 4, 1)]
    for side in ("right", "left"):
        for bf in (False, True):
            res = []
            for k, lib in enumerate(LIBS):
                xs = [_both(a)[1 - k] for a in arrs]
                y = lib.nn.utils.rnn.pad_sequence(xs, batch_first=bf, padding_value=0.5,
                                                  padding_side=side)
                (y * _cot(lib, y)).sum().backward()
                res.append((y, [x.grad for x in xs]))
            _close(res[1][0], res[0][0], what=f"{side} {bf}")
            for a, b in zip(res[1][1], res[0][1]):
                _close(a, b)
    # dtype of the first sequence; a tensor input is iterated over its first dim
    for lib in LIBS:
        y = lib.nn.utils.rnn.pad_sequence([lib.ones(2, 3), lib.ones(1, 3, dtype=lib.float64)])
        assert str(y.dtype).endswith("float32") and tuple(y.shape) == (2, 2, 3)
        assert tuple(lib.nn.utils.rnn.pad_sequence(lib.ones(2, 3)).shape) == (3, 2)


def test_pack_sequence_unpack_unpad() -> None:
    arrs = [_rng(3).standard_normal((n, 3)) for n in (2, 5, 3)]
    res = []
    for k, lib in enumerate(LIBS):
        ru = lib.nn.utils.rnn
        xs = [_both(a)[1 - k] for a in arrs]
        p = ru.pack_sequence(xs, enforce_sorted=False)
        back = ru.unpack_sequence(p)
        sum((b * b).sum() for b in back).backward()
        padded = ru.pad_sequence([x.detach() for x in xs])
        un = ru.unpad_sequence(padded, lib.tensor([2, 5, 3]))
        res.append((p, back, [x.grad for x in xs], un, tuple(padded.shape)))
    (tp, tb, tg, tu, ts), (gp, gb, gg, gu, gs) = res
    _close(gp.data, tp.data)
    assert gp.sorted_indices.tolist() == tp.sorted_indices.tolist()
    for group in ((gb, tb), (gg, tg), (gu, tu)):
        for a, b in zip(*group):
            _close(a, b)
    assert gs == ts  # (unpad_sequence transposes a time-major input in place, as torch)


def test_packed_sequence_namedtuple_repr_and_conversion() -> None:
    reprs = []
    for lib in LIBS:
        p = lib.nn.utils.rnn.pack_sequence([lib.tensor([1.0, 2.0]), lib.tensor([3.0])])
        reprs.append(repr(p).replace("torch.", "").replace("gradsum.", ""))
        assert p._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
        d = p.double()
        assert str(d.data.dtype).endswith("float64") and d.batch_sizes is p.batch_sizes
        assert p.float() is p and p.to(lib.float32) is p
        data, bs, si, ui = p
        assert si is None and ui is None and bs.tolist() == [2, 1]
        q = lib.nn.utils.rnn.PackedSequence(data, bs, lib.tensor([1, 0]))
        assert q.unsorted_indices.tolist() == [1, 0]
        assert lib.nn.utils.rnn.PackedSequence((data, bs)).batch_sizes is bs
        assert lib.nn.utils.rnn.invert_permutation(lib.tensor([2, 0, 1])).tolist() == [1, 2, 0]
    assert reprs[0] == reprs[1]


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.ones(4, 3, 2), [2, 3, 1]),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.ones(4, 3, 2), [3, 2, 0]),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.ones(4, 3, 2), [3, 0, 2],
                                                      enforce_sorted=False),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.ones(4, 3, 2), [3, 2]),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.ones(4, 3, 2), [[3, 2, 1]]),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.ones(4), [2]),
    lambda lib: lib.nn.utils.rnn.pad_packed_sequence(
        lib.nn.utils.rnn.pack_padded_sequence(lib.ones(3, 2), [3, 1]), total_length=2),
    lambda lib: lib.nn.utils.rnn.pad_sequence([]),
    lambda lib: lib.nn.utils.rnn.pad_sequence(5),
    lambda lib: lib.nn.utils.rnn.pad_sequence([lib.ones(2, 3)], padding_side="middle"),
    lambda lib: lib.nn.utils.rnn.pad_sequence([lib.ones(2, 3), lib.ones(3, 2)]),
    lambda lib: lib.nn.utils.rnn.PackedSequence(lib.ones(3)),
])
def test_packing_errors_like_torch(call: Any) -> None:
    try:
        call(torch)
    except Exception as e:
        t_err, t_msg = type(e), str(e)
    else:
        raise AssertionError("torch did not raise")
    with pytest.raises(t_err) as info:
        call(gradsum)
    assert str(info.value)[:30] == t_msg[:30]


def test_float_lengths_are_truncated_like_torch() -> None:
    for lib in LIBS:
        p = lib.nn.utils.rnn.pack_padded_sequence(lib.ones(4, 3), lib.tensor([3.5, 2.0, 1.0]))
        assert p.batch_sizes.tolist() == [3, 2, 1]


# -- PackedSequence through the recurrent modules ------------------------------------------
RNN_CASES = [
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("LSTM", dict(proj_size=2, batch_first=True)),
    ("LSTM", dict(bidirectional=True, proj_size=3, num_layers=2)),
    ("GRU", dict(num_layers=2, bidirectional=True, batch_first=True)),
    ("GRU", dict(bias=False)),
    ("RNN", dict(nonlinearity="relu", num_layers=2)),
    ("RNN", dict(bidirectional=True)),
]


def _packed_run(lib: Any, mod: Any, x: Any, lengths: list[int], h0: Any, batch_first: bool,
                enforce_sorted: bool) -> tuple[Any, ...]:
    ru = lib.nn.utils.rnn
    p = ru.pack_padded_sequence(x, lengths, batch_first=batch_first,
                                enforce_sorted=enforce_sorted)
    out, hid = mod(p, h0)
    assert type(out).__name__ == "PackedSequence"
    padded, _ = ru.pad_packed_sequence(out, batch_first=batch_first)
    states = hid if isinstance(hid, tuple) else (hid,)
    loss = (padded * _cot(lib, padded)).sum()
    for s in states:
        loss = loss + (s * _cot(lib, s)).sum()
    loss.backward()
    return (out.data, padded, *states)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", range(len(RNN_CASES)))
def test_rnn_modules_on_packed_input(case: int, dtype: str) -> None:
    cls, kw = RNN_CASES[case]
    IN, HID, T, B = 3, 4, 5, 4
    t_mod, g_mod = twins(cls, dtype, IN, HID, **kw)
    bf = kw.get("batch_first", False)
    lengths = [3, 5, 1, 3]
    x = _rng(case).standard_normal((B, T, IN) if bf else (T, B, IN))
    nd = 2 if kw.get("bidirectional") else 1
    hsize = kw.get("proj_size", 0) or HID
    h0 = _rng(10 + case).standard_normal((kw.get("num_layers", 1) * nd, B, hsize))
    c0 = _rng(20 + case).standard_normal((kw.get("num_layers", 1) * nd, B, HID))
    for given in (False, True):
        g_x, t_x = _both(x, dtype)
        g_h, t_h = _both(h0, dtype)
        g_c, t_c = _both(c0, dtype)
        if given:
            g_s, t_s = ((g_h, g_c), (t_h, t_c)) if cls == "LSTM" else (g_h, t_h)
        else:
            g_s = t_s = None
        t_mod.zero_grad()
        g_mod.zero_grad()
        t_res = _packed_run(torch, t_mod, t_x, lengths, t_s, bf, False)
        g_res = _packed_run(gradsum, g_mod, g_x, lengths, g_s, bf, False)
        for k, (a, b) in enumerate(zip(g_res, t_res)):
            _close(a, b, dtype, f"output {k}")
        _close(g_x.grad, t_x.grad, dtype, "input grad")
        if given:
            _close(g_h.grad, t_h.grad, dtype, "h0 grad")
            if cls == "LSTM":
                _close(g_c.grad, t_c.grad, dtype, "c0 grad")
        for (name, gp), (_, tp) in zip(g_mod.named_parameters(), t_mod.named_parameters()):
            _close(gp.grad, tp.grad, dtype, name)


def test_packed_sorted_input_and_packed_checks() -> None:
    t_mod, g_mod = twins("GRU", "float64", 2, 3)
    x = _rng(5).standard_normal((3, 2, 2))
    outs = []
    for lib, mod, xt in ((torch, t_mod, _both(x)[1]), (gradsum, g_mod, _both(x)[0])):
        p = lib.nn.utils.rnn.pack_padded_sequence(xt, [3, 2])
        out, h = mod(p)
        assert out.sorted_indices is None and out.unsorted_indices is None
        outs.append((out.data, h))
    _close(outs[1][0], outs[0][0])
    _close(outs[1][1], outs[0][1])

    def wrong_hidden(lib: Any) -> Any:
        mod = lib.nn.GRU(2, 3)
        p = lib.nn.utils.rnn.pack_padded_sequence(lib.ones(3, 2, 2), [3, 2])
        return mod(p, lib.zeros(1, 3, 3))

    def wrong_dtype(lib: Any) -> Any:
        p = lib.nn.utils.rnn.pack_padded_sequence(lib.ones(3, 2, 2, dtype=lib.float64), [3, 2])
        return lib.nn.LSTM(2, 3)(p)

    def wrong_features(lib: Any) -> Any:
        p = lib.nn.utils.rnn.pack_padded_sequence(lib.ones(3, 2, 4), [3, 2])
        return lib.nn.RNN(2, 3)(p)

    for fn in (wrong_hidden, wrong_dtype, wrong_features):
        same_error(fn)
    with pytest.raises(TypeError, match="PackedSequence"):
        gradsum.nn.LSTM(3, 4)(torch.nn.utils.rnn.pack_padded_sequence(torch.ones(3, 2, 3),
                                                                      [3, 2]))


# -- parametrize -----------------------------------------------------------------------------
def _load_from_torch(g_mod: Any, t_mod: Any) -> None:
    g_mod.load_state_dict({k: gradsum.tensor(v.detach().numpy())
                           for k, v in t_mod.state_dict().items()})


def _param_grads(mod: Any) -> dict[str, Any]:
    return {n: p.grad for n, p in mod.named_parameters()}


def _run_twins(t_mod: Any, g_mod: Any, x: np.ndarray, dtype: str, what: str,
               steps: int = 1) -> None:
    """Forward (``steps`` times, as a training loop) and backward in both; compare outputs,
    weights, state_dicts and parameter gradients."""
    for _ in range(steps):
        outs = []
        for lib, mod in ((torch, t_mod), (gradsum, g_mod)):
            y = mod(lib.tensor(x, dtype=getattr(lib, dtype)))
            (y * _cot(lib, y)).sum().backward()
            outs.append(y)
        _close(outs[1], outs[0], dtype, f"{what} output")
    tsd, gsd = t_mod.state_dict(), g_mod.state_dict()
    assert list(gsd) == list(tsd), (list(gsd), list(tsd))
    for k in tsd:
        _close(gsd[k], tsd[k], dtype, f"{what} {k}")
    tg, gg = _param_grads(t_mod), _param_grads(g_mod)
    assert list(gg) == list(tg)
    for k in tg:
        _close(gg[k], tg[k], dtype, f"{what} grad {k}")


class _Sym:
    """A parametrization class built for either library (symmetric matrices)."""

    @staticmethod
    def make(lib: Any) -> Any:
        class Symmetric(lib.nn.Module):
            def forward(self, X: Any) -> Any:
                return X.triu() + X.triu(1).transpose(-1, -2)

            def right_inverse(self, A: Any) -> Any:
                return A.triu()

        return Symmetric()


def _split(lib: Any) -> Any:
    class Split(lib.nn.Module):
        def forward(self, A: Any, B: Any) -> Any:
            return A + B

        def right_inverse(self, X: Any) -> Any:
            return X / 4, 3 * X / 4

    return Split()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_register_parametrization_values_grads_and_keys(dtype: str) -> None:
    t_mod, g_mod = twins("Linear", dtype, 3, 3)
    reprs = []
    for lib, mod in ((torch, t_mod), (gradsum, g_mod)):
        pz = lib.nn.utils.parametrize
        pz.register_parametrization(mod, "weight", _Sym.make(lib))
        pz.register_parametrization(mod, "bias", _split(lib))
        assert type(mod).__name__ == "ParametrizedLinear"
        assert pz.is_parametrized(mod) and pz.is_parametrized(mod, "weight")
        assert not pz.is_parametrized(mod, "other")
        assert pz.type_before_parametrizations(mod) is lib.nn.Linear
        assert isinstance(mod.parametrizations.weight, pz.ParametrizationList)
        assert type(mod.parametrizations.bias.original1).__name__ == "Parameter"
        reprs.append(repr(mod))
    assert reprs[0] == reprs[1]
    x = _rng(7).standard_normal((2, 3))
    _run_twins(t_mod, g_mod, x, dtype, "sym", steps=2)
    # assigning through right_inverse, and caching
    value = _rng(8).standard_normal((3, 3))
    for lib, mod in ((torch, t_mod), (gradsum, g_mod)):
        mod.weight = lib.tensor(value, dtype=getattr(lib, dtype))
        mod.bias = lib.tensor([1.0, 2.0, 3.0], dtype=getattr(lib, dtype))
        with lib.nn.utils.parametrize.cached():
            assert mod.weight is mod.weight
        assert mod.weight is not mod.weight
    for k, v in t_mod.state_dict().items():
        _close(g_mod.state_dict()[k], v, dtype, k)


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations(leave: bool) -> None:
    t_mod, g_mod = twins("Linear", "float64", 3, 3)
    for lib, mod in ((torch, t_mod), (gradsum, g_mod)):
        pz = lib.nn.utils.parametrize
        w = mod.weight
        pz.register_parametrization(mod, "weight", _Sym.make(lib))
        pz.register_parametrization(mod, "weight", lib.nn.Tanh())
        assert len(mod.parametrizations.weight) == 2
        pz.register_parametrization(mod, "bias", _split(lib))
        pz.remove_parametrizations(mod, "weight", leave_parametrized=leave)
        assert type(mod).__name__ == "ParametrizedLinear" and mod.weight is w
        pz.remove_parametrizations(mod, "bias")
        assert type(mod) is lib.nn.Linear and not hasattr(mod, "parametrizations")
        assert list(mod.state_dict()) == ["weight", "bias"]
    for k, v in t_mod.state_dict().items():
        _close(g_mod.state_dict()[k], v, what=k)


def _shape_changer(lib: Any) -> Any:
    class Grow(lib.nn.Module):
        def forward(self, X: Any) -> Any:
            return lib.cat([X, X])

    return Grow()


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.utils.parametrize.register_parametrization(
        lib.nn.Linear(2, 2), "weight", _shape_changer(lib)),
    lambda lib: lib.nn.utils.parametrize.register_parametrization(
        lib.nn.Linear(2, 2), "nothing", lib.nn.Tanh()),
    lambda lib: lib.nn.utils.parametrize.remove_parametrizations(lib.nn.Linear(2, 2), "weight"),
    lambda lib: lib.nn.utils.parametrize.remove_parametrizations(
        lib.nn.utils.parametrize.register_parametrization(lib.nn.Linear(2, 2), "bias",
                                                          _split(lib)),
        "bias", leave_parametrized=False),
    lambda lib: setattr(lib.nn.utils.parametrize.register_parametrization(
        lib.nn.Linear(2, 2), "weight", lib.nn.Tanh()), "weight", lib.ones(2, 2)),
    lambda lib: lib.nn.utils.parametrize.ParametrizationList([], lib.ones(2)),
    lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2), "bias"),
    lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2),
                                                         orthogonal_map="qr"),
    lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2), "nothing"),
    lambda lib: lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2), dim=3),
    lambda lib: lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2),
                                                            n_power_iterations=0),
])
def test_parametrize_errors_like_torch(call: Any) -> None:
    try:
        call(torch)
    except Exception as e:
        t_err, t_msg = type(e), str(e)
    else:
        raise AssertionError("torch did not raise")
    with pytest.raises(t_err) as info:
        call(gradsum)
    assert str(info.value)[:25] == t_msg[:25], (str(info.value), t_msg)


# -- parametrizations ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("dim", [0, 1, None, -1, -2])
def test_weight_norm_parametrization(dim: Any, dtype: str) -> None:
    t_mod, g_mod = twins("Conv1d", dtype, 2, 3, 2)
    for lib, mod in ((torch, t_mod), (gradsum, g_mod)):
        lib.nn.utils.parametrizations.weight_norm(mod, dim=dim)
    g0 = g_mod.parametrizations.weight.original0
    assert tuple(g0.shape) == tuple(t_mod.parametrizations.weight.original0.shape)
    _close(g_mod.weight, t_mod.weight, dtype, "weight")
    _run_twins(t_mod, g_mod, _rng(9).standard_normal((2, 2, 4)), dtype, f"wn {dim}")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("cls,args,kw", [
    ("Linear", (4, 3), {}),
    ("Conv2d", (2, 3, 2), {"dim": 1, "n_power_iterations": 3}),
    ("ConvTranspose1d", (2, 3, 2), {}),
])
def test_spectral_norm_parametrization(cls: str, args: tuple[int, ...], kw: dict[str, Any],
                                       dtype: str) -> None:
    t_mod, g_mod = twins(cls, dtype, *args)
    for lib, mod in ((torch, t_mod), (gradsum, g_mod)):
        lib.nn.utils.parametrizations.spectral_norm(mod, **kw)
    assert list(g_mod.state_dict()) == list(t_mod.state_dict())
    _load_from_torch(g_mod, t_mod)  # torch's random u / v
    shape = {"Linear": (2, 4), "Conv2d": (1, 2, 4, 4), "ConvTranspose1d": (2, 2, 3)}[cls]
    x = _rng(11).standard_normal(shape)
    _run_twins(t_mod, g_mod, x, dtype, "sn train", steps=2)
    t_mod.eval()
    g_mod.eval()
    _run_twins(t_mod, g_mod, x, dtype, "sn eval")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape,omap", [
    ((3, 3), None), ((3, 3), "cayley"), ((3, 3), "householder"),
    ((3, 5), None), ((5, 3), None), ((5, 3), "matrix_exp"), ((3, 5), "cayley"),
])
def test_orthogonal_parametrization(shape: tuple[int, int], omap: str | None,
                                    dtype: str) -> None:
    t_mod, g_mod = twins("Linear", dtype, shape[1], shape[0])
    for lib, mod in ((torch, t_mod), (gradsum, g_mod)):
        lib.nn.utils.parametrizations.orthogonal(mod, orthogonal_map=omap)
    assert list(g_mod.state_dict()) == list(t_mod.state_dict())
    tol = "float32" if dtype == "float32" else "float64"
    if shape[0] == shape[1]:  # deterministic: the QR of the initial weight
        _close(g_mod.weight, t_mod.weight, tol, "weight before copy")
    _load_from_torch(g_mod, t_mod)  # (non-square: torch's random completion in base)
    _run_twins(t_mod, g_mod, _rng(12).standard_normal((2, shape[1])), dtype, "orth")
    q = g_mod.weight.detach()
    gram = q @ q.T if shape[0] <= shape[1] else q.T @ q
    np.testing.assert_allclose(floats(gram), np.eye(min(shape)), atol=1e-5)
    # assigning an orthogonal matrix goes through right_inverse
    for lib, mod in ((torch, t_mod), (gradsum, g_mod)):
        with lib.no_grad():
            mod.weight = lib.tensor(np.eye(*shape), dtype=getattr(lib, dtype))
    if shape[0] == shape[1]:
        _close(g_mod.weight, t_mod.weight, dtype, "assigned")


def test_orthogonal_without_trivialization() -> None:
    for omap in ("matrix_exp", "cayley", "householder"):
        t_mod, g_mod = twins("Linear", "float64", 3, 4)
        for lib, mod in ((torch, t_mod), (gradsum, g_mod)):
            lib.nn.utils.parametrizations.orthogonal(mod, orthogonal_map=omap,
                                                     use_trivialization=False)
        assert list(g_mod.state_dict()) == list(t_mod.state_dict())
        _close(g_mod.parametrizations.weight.original, t_mod.parametrizations.weight.original,
               what=omap)
        _run_twins(t_mod, g_mod, _rng(13).standard_normal((2, 3)), "float64", omap)


# -- the legacy hooks ------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, None])
def test_legacy_weight_norm(dim: Any) -> None:
    t_mod, g_mod = twins("Linear", "float64", 3, 4)
    for lib, mod in ((torch, t_mod), (gradsum, g_mod)):
        with pytest.warns(FutureWarning, match="`torch.nn.utils.weight_norm` is deprecated"):
            lib.nn.utils.weight_norm(mod, dim=dim)
    assert list(g_mod.state_dict()) == list(t_mod.state_dict())
    x = _rng(14).standard_normal((2, 3))
    _run_twins(t_mod, g_mod, x, "float64", "legacy wn", steps=2)
    for lib, mod in ((torch, t_mod), (gradsum, g_mod)):
        with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.nn.utils.weight_norm(mod, dim=dim)
        lib.nn.utils.remove_weight_norm(mod)
        assert type(mod.weight).__name__ == "Parameter"
        with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
            lib.nn.utils.remove_weight_norm(mod)
    _run_twins(t_mod, g_mod, x, "float64", "legacy wn removed")


def test_legacy_spectral_norm() -> None:
    t_mod, g_mod = twins("Linear", "float64", 4, 3)
    for lib, mod in ((torch, t_mod), (gradsum, g_mod)):
        lib.nn.utils.spectral_norm(mod, n_power_iterations=2)
    assert list(g_mod.state_dict()) == list(t_mod.state_dict())
    _load_from_torch(g_mod, t_mod)
    x = _rng(15).standard_normal((2, 4))
    _run_twins(t_mod, g_mod, x, "float64", "legacy sn", steps=3)
    for lib, mod in ((torch, t_mod), (gradsum, g_mod)):
        with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
            lib.nn.utils.spectral_norm(mod)
        lib.nn.utils.remove_spectral_norm(mod)
        with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in"):
            lib.nn.utils.remove_spectral_norm(mod)
    assert list(g_mod.state_dict()) == list(t_mod.state_dict())
    _run_twins(t_mod, g_mod, x, "float64", "legacy sn removed")


# -- functional_call -------------------------------------------------------------------------
def _tied(lib: Any) -> Any:
    class Tied(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = lib.nn.Linear(2, 2)
            self.out = lib.nn.Linear(2, 2)
            self.out.weight = self.lin.weight
            self.register_buffer("scale", lib.ones(()))

        def forward(self, x: Any) -> Any:
            return self.out(self.lin(x)) * self.scale

    return Tied()


def test_functional_call_values_grads_ties_and_errors() -> None:
    w = _rng(16).standard_normal((2, 2))
    x = _rng(17).standard_normal((3, 2))
    res = []
    mods = {torch: _tied(torch), gradsum: _tied(gradsum)}
    _load_from_torch(mods[gradsum], mods[torch])
    for lib in LIBS:
        mod = mods[lib]
        before = {k: v.detach().clone() for k, v in mod.state_dict().items()}
        wt = lib.tensor(w, requires_grad=True, dtype=lib.float32)
        xt = lib.tensor(x, dtype=lib.float32)
        y = lib.func.functional_call(mod, {"lin.weight": wt, "scale": lib.tensor(2.0)}, (xt,))
        y2 = lib.func.functional_call(mod, ({"lin.weight": wt},), xt, tie_weights=False)
        (y.sum() + y2.sum()).backward()
        assert all(bool((mod.state_dict()[k] == v).all()) for k, v in before.items())
        assert mod.out.weight is mod.lin.weight  # (its grad: from y2, untied)
        with pytest.warns(FutureWarning, match="`torch.nn.utils.stateless.functional_call`"):
            y3 = lib.nn.utils.stateless.functional_call(mod, {"out.weight": wt}, (xt,))
        with pytest.raises(ValueError, match="functional_call got multiple values for keys"):
            lib.func.functional_call(mod, {"lin.weight": wt, "out.weight": wt * 1}, xt)
        with pytest.raises(RuntimeError, match="Error\\(s\\) in reparametrizing for Tied"):
            lib.func.functional_call(mod, {"lin.weight": wt, "bogus": wt}, xt, strict=True)
        with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
            lib.func.functional_call(mod, ({"scale": wt}, {"scale": wt}), xt)
        res.append((y, y2, y3, wt.grad, mod.lin.weight.grad, mod.out.bias.grad))
    for a, b in zip(res[1], res[0]):
        _close(a, b, "float32")
    # a buffer set by the call shows in the caller's dict, as torch
    for lib in LIBS:
        bn = lib.nn.BatchNorm1d(2)
        stats = {"running_mean": lib.zeros(2)}
        lib.func.functional_call(bn, stats, lib.ones(4, 2))
        assert stats["running_mean"].tolist() == pytest.approx([0.1, 0.1])
        assert bn.running_mean.tolist() == [0.0, 0.0]


def test_functional_call_through_parametrization() -> None:
    t_mod, g_mod = twins("Linear", "float64", 3, 3)
    orig = _rng(18).standard_normal((3, 3))
    outs = []
    for lib, mod in ((torch, t_mod), (gradsum, g_mod)):
        lib.nn.utils.parametrize.register_parametrization(mod, "weight", _Sym.make(lib))
        o = lib.tensor(orig, requires_grad=True)
        y = lib.func.functional_call(mod, {"parametrizations.weight.original": o},
                                     lib.ones(2, 3, dtype=lib.float64))
        y.sum().backward()
        outs.append((y, o.grad))
    for a, b in zip(outs[1], outs[0]):
        _close(a, b)
