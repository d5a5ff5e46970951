"""Side-by-side tests of the recurrent layers (nn.RNNCell, nn.LSTMCell, nn.GRUCell, nn.RNN,
nn.LSTM, nn.GRU) against torch: torch's initial parameters are copied into gradsum through
the state_dict, then outputs, final states and the gradients of the input, h0 / c0 and every
parameter are compared (float64 and float32) over a grid of layers, directions, batch_first,
unbatched inputs, given or default states, bias and proj_size; second-order gradients,
state_dict keys / shapes / interchange, reprs, warnings, exception types, dropout between
layers (eval exactly, training loosely) and a gradcheck of a tiny LSTMCell."""

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
from gradsum.autograd import gradcheck, gradgradcheck  # noqa: E402
from nn_helpers import (  # noqa: E402
    floats,
    twins,
)

pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported")
TOL = {"float64": 1e-10, "float32": 1e-5}
SEQ, BATCH, IN, HID = 4, 3, 3, 5


def _weights(lib: Any, y: Any) -> Any:
    """A fixed, non-uniform cotangent pattern."""
    k = np.cos(1.7 * np.arange(int(np.prod(y.shape)))).reshape(tuple(y.shape))
    return lib.tensor(k, dtype=y.dtype)


def _compare(t_vals: list[Any], g_vals: list[Any], dtype: str, what: list[str]) -> None:
    assert len(t_vals) == len(g_vals)
    for name, a, b in zip(what, t_vals, g_vals):
        if a is None or b is None:
            assert a is None and b is None, name
            continue
        assert tuple(a.shape) == tuple(b.shape), (name, a.shape, b.shape)
        assert str(b.dtype).split(".")[-1] == str(a.dtype).split(".")[-1], name
        np.testing.assert_allclose(floats(b), floats(a), rtol=TOL[dtype], atol=TOL[dtype],
                                   err_msg=name)


def _run(mod: Any, lib: Any, x_arr: np.ndarray, states: list[np.ndarray] | None,
         dtype: str, lstm: bool, cell: bool) -> tuple[list[Any], list[str]]:
    """Forward, then backward of a weighted sum of every output; returns the outputs and
    the gradients of the input, the given states and each parameter (by name)."""
    dt = getattr(lib, dtype)
    x = lib.tensor(x_arr, dtype=dt, requires_grad=True)
    hs = None if states is None else [lib.tensor(s, dtype=dt, requires_grad=True)
                                      for s in states]
    hx = None if hs is None else (tuple(hs) if lstm else hs[0])
    res = mod(x, hx)
    if cell:
        outs = list(res) if lstm else [res]
    else:
        outs = [res[0], *(res[1] if lstm else [res[1]])]
    loss = sum((_weights(lib, y) * y).sum() for y in outs)
    loss = loss + sum((y * y).sum() for y in outs) * 0.1
    loss.backward()
    names = [n for n, _ in mod.named_parameters()]
    vals = outs + [x.grad] + [h.grad for h in (hs or [])] + [p.grad for _, p in
                                                               mod.named_parameters()]
    what = [f"out{i}" for i in range(len(outs))] + ["x.grad"] + [f"h{i}.grad" for i in
                                                                  range(len(hs or []))]
    return vals, what + names


# -- cells -------------------------------------------------------------------------------------
CELLS = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("LSTMCell", {}),
         ("GRUCell", {})]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("cls", "kw"), CELLS, ids=["rnn_tanh", "rnn_relu", "lstm", "gru"])
def test_cells_values_and_gradients(cls: str, kw: dict[str, Any], dtype: str) -> None:
    rs = np.random.RandomState(11)
    lstm = cls == "LSTMCell"
    for bias in (True, False):
        for batched in (True, False):
            for given in (True, False):
                t_mod, g_mod = twins(cls, dtype, IN, HID, bias=bias, **kw)
                lead = (BATCH,) if batched else ()
                x = rs.randn(*lead, IN)
                states = [rs.randn(*lead, HID) for _ in range(2 if lstm else 1)] if given \
                    else None
                tv, what = _run(t_mod, torch, x, states, dtype, lstm, cell=True)
                gv, _ = _run(g_mod, gradsum, x, states, dtype, lstm, cell=True)
                _compare(tv, gv, dtype, what)


# -- sequence modules ----------------------------------------------------------------------------
MODES = [("RNN", {}), ("RNN", {"nonlinearity": "relu"}), ("LSTM", {}), ("GRU", {})]
#: (batch_first, unbatched, states given, bias)
VARIANTS = [(False, False, False, True), (True, False, True, True), (False, True, True, False),
            (True, True, False, True), (False, False, True, False)]


def _check_module(cls: str, kw: dict[str, Any], dtype: str, layers: int, bidir: bool,
                  batch_first: bool, unbatched: bool, given: bool, bias: bool,
                  rs: np.random.RandomState) -> None:
    lstm = cls == "LSTM"
    t_mod, g_mod = twins(cls, dtype, IN, HID, num_layers=layers, bias=bias,
                         batch_first=batch_first, bidirectional=bidir, **kw)
    proj = kw.get("proj_size", 0)
    nd = 2 if bidir else 1
    x_shape = (BATCH, SEQ, IN) if batch_first else (SEQ, BATCH, IN)
    if unbatched:
        x_shape = (SEQ, IN)
    lead = (layers * nd,) if unbatched else (layers * nd, BATCH)
    states = None
    if given:
        states = [rs.randn(*lead, proj or HID)]
        if lstm:
            states.append(rs.randn(*lead, HID))
    x = rs.randn(*x_shape)
    tv, what = _run(t_mod, torch, x, states, dtype, lstm, cell=False)
    gv, _ = _run(g_mod, gradsum, x, states, dtype, lstm, cell=False)
    _compare(tv, gv, dtype, what)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("bidir", [False, True], ids=["uni", "bi"])
@pytest.mark.parametrize("layers", [1, 2])
@pytest.mark.parametrize(("cls", "kw"), MODES, ids=["rnn_tanh", "rnn_relu", "lstm", "gru"])
def test_modules_values_and_gradients(cls: str, kw: dict[str, Any], layers: int, bidir: bool,
                                      dtype: str) -> None:
    rs = np.random.RandomState(layers * 10 + bidir)
    for batch_first, unbatched, given, bias in VARIANTS:
        _check_module(cls, kw, dtype, layers, bidir, batch_first, unbatched, given, bias, rs)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("bidir", [False, True], ids=["uni", "bi"])
@pytest.mark.parametrize("layers", [1, 2])
def test_lstm_proj_size(layers: int, bidir: bool, dtype: str) -> None:
    rs = np.random.RandomState(5)
    for batch_first, unbatched, given, bias in VARIANTS[:4]:
        _check_module("LSTM", {"proj_size": 2}, dtype, layers, bidir, batch_first, unbatched,
                      given, bias, rs)


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
def test_second_order_gradients_like_torch(cls: str) -> None:
    rs = np.random.RandomState(3)
    x_arr = rs.randn(3, 2, IN)
    res = []
    t_mod, g_mod = twins(cls, "float64", IN, 4, num_layers=2, bidirectional=True)
    for lib, mod in ((torch, t_mod), (gradsum, g_mod)):
        x = lib.tensor(x_arr, dtype=lib.float64, requires_grad=True)
        out = mod(x)[0]
        loss = (_weights(lib, out) * out).sum()
        params = list(mod.parameters())
        gs = lib.autograd.grad(loss, [x, *params], create_graph=True)
        s = sum((g * g).sum() for g in gs)
        res.append([floats(g) for g in lib.autograd.grad(s, [x, *params])])
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-10)


def test_lstm_cell_gradcheck_float64() -> None:
    gradsum.manual_seed(0)
    cell = gradsum.nn.LSTMCell(2, 3).double()
    x = gradsum.randn(2, 2, dtype=gradsum.float64, requires_grad=True)
    h = gradsum.randn(2, 3, dtype=gradsum.float64, requires_grad=True)
    c = gradsum.randn(2, 3, dtype=gradsum.float64, requires_grad=True)
    w_ih, w_hh, b_ih, b_hh = cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh

    def f(x: Any, h: Any, c: Any, *_: Any) -> Any:
        return cell(x, (h, c))

    inputs = (x, h, c, w_ih, w_hh, b_ih, b_hh)
    assert gradcheck(f, inputs)
    assert gradgradcheck(f, inputs)


# -- dropout between layers ----------------------------------------------------------------------
@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
def test_dropout_between_layers(cls: str) -> None:
    rs = np.random.RandomState(9)
    x_arr = rs.randn(SEQ, BATCH, IN)
    # eval: dropout is off, the values equal torch's
    t_mod, g_mod = twins(cls, "float64", IN, HID, num_layers=3, dropout=0.5)
    t_mod.eval()
    g_mod.eval()
    tv, what = _run(t_mod, torch, x_arr, None, "float64", cls == "LSTM", cell=False)
    gv, _ = _run(g_mod, gradsum, x_arr, None, "float64", cls == "LSTM", cell=False)
    _compare(tv, gv, "float64", what)
    # p == 1 while training: the layers above the first see zeros, deterministic in both
    t_mod, g_mod = twins(cls, "float64", IN, HID, num_layers=2, dropout=1.0)
    tv, what = _run(t_mod, torch, x_arr, None, "float64", cls == "LSTM", cell=False)
    gv, _ = _run(g_mod, gradsum, x_arr, None, "float64", cls == "LSTM", cell=False)
    _compare(tv, gv, "float64", what)
    # p == 0.5 while training: random, so the statistics are compared loosely
    t_mod, g_mod = twins(cls, "float64", IN, 64, num_layers=2, dropout=0.5)
    diffs = []
    for lib, mod in ((torch, t_mod), (gradsum, g_mod)):
        lib.manual_seed(0)
        x = lib.tensor(x_arr, dtype=lib.float64)
        mod.eval()
        ref = floats(mod(x)[0])
        mod.train()
        runs = [floats(mod(x)[0]) for _ in range(8)]
        assert not any(np.allclose(r, ref) for r in runs)
        assert not np.allclose(runs[0], runs[1])
        diffs.append(np.mean([np.abs(r - ref).mean() for r in runs]))
    assert 0.7 < diffs[1] / diffs[0] < 1.4, diffs


def test_dropout_warning_like_torch() -> None:
    msgs = []
    for lib in (torch, gradsum):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.nn.LSTM(10, 20, dropout=0.5)
            lib.nn.GRU(10, 20, num_layers=2, dropout=0.5)
        msgs.append([(x.category, str(x.message)) for x in w])
    assert msgs[0] == msgs[1] and len(msgs[0]) == 1


# -- state_dict, parameters, reprs -------------------------------------------------------------
CONFIGS = [("RNN", (3, 4), {}), ("RNN", (3, 4, 2), {"nonlinearity": "relu", "bias": False}),
           ("LSTM", (3, 4), {"num_layers": 2, "bidirectional": True}),
           ("LSTM", (3, 4), {"num_layers": 2, "bidirectional": True, "proj_size": 2}),
           ("LSTM", (3, 4), {"bias": False, "proj_size": 3}),
           ("GRU", (3, 4), {"num_layers": 3, "batch_first": True, "bidirectional": True}),
           ("RNNCell", (3, 4), {}), ("LSTMCell", (3, 4), {"bias": False}),
           ("GRUCell", (3, 4), {})]


@pytest.mark.parametrize(("cls", "args", "kw"), CONFIGS)
def test_state_dict_keys_shapes_and_interchange(cls: str, args: tuple[int, ...],
                                                kw: dict[str, Any]) -> None:
    t_mod = getattr(torch.nn, cls)(*args, **kw).double()
    g_mod = getattr(gradsum.nn, cls)(*args, **kw).double()
    t_sd, g_sd = t_mod.state_dict(), g_mod.state_dict()
    assert list(t_sd) == list(g_sd)
    assert [tuple(v.shape) for v in t_sd.values()] == [tuple(v.shape) for v in g_sd.values()]
    assert [n for n, _ in t_mod.named_parameters()] == [n for n, _ in g_mod.named_parameters()]
    # default init: every parameter within +-1/sqrt(hidden_size), spread over that range
    # (the spread over all of them: a 4-element bias alone can draw a small std)
    bound = 1 / np.sqrt(args[1])
    for v in g_sd.values():
        assert np.all(np.abs(floats(v)) <= bound)
    values = np.concatenate([floats(v).ravel() for v in g_sd.values()])
    assert values.std() > bound / 4
    # gradsum -> torch, key for key
    t_mod.load_state_dict({k: torch.tensor(floats(v), dtype=torch.float64)
                           for k, v in g_sd.items()})
    for k, v in t_mod.state_dict().items():
        np.testing.assert_array_equal(floats(v), floats(g_sd[k]))
    if hasattr(g_mod, "all_weights"):
        assert [[tuple(p.shape) for p in ws] for ws in g_mod.all_weights] == \
            [[tuple(p.shape) for p in ws] for ws in t_mod.all_weights]


REPRS = CONFIGS + [("LSTM", (10, 20), {"num_layers": 2, "batch_first": True}),
                   ("GRU", (10, 20), {"num_layers": 2, "dropout": 0.25}),
                   ("RNNCell", (3, 4), {"bias": False, "nonlinearity": "relu"})]


@pytest.mark.parametrize(("cls", "args", "kw"), REPRS)
def test_reprs_like_torch(cls: str, args: tuple[int, ...], kw: dict[str, Any]) -> None:
    assert repr(getattr(gradsum.nn, cls)(*args, **kw)) == repr(getattr(torch.nn, cls)(*args,
                                                                                       **kw))
    assert repr(gradsum.nn.LSTM(10, 20, num_layers=2, batch_first=True)) == \
        "LSTM(10, 20, num_layers=2, batch_first=True)"


# -- errors ------------------------------------------------------------------------------------
def _ones(lib: Any, *shape: int, dtype: str = "float32") -> Any:
    return lib.ones(*shape, dtype=getattr(lib, dtype))


MODULE_ERRORS = {
    "input_4d": lambda lib, cls: getattr(lib.nn, cls)(3, 4)(_ones(lib, 5, 2, 3, 1)),
    "input_1d": lambda lib, cls: getattr(lib.nn, cls)(3, 4)(_ones(lib, 5)),
    "input_size": lambda lib, cls: getattr(lib.nn, cls)(3, 4)(_ones(lib, 5, 2, 6)),
    "dtype": lambda lib, cls: getattr(lib.nn, cls)(3, 4)(_ones(lib, 5, 2, 3, dtype="float64")),
    "empty_seq": lambda lib, cls: getattr(lib.nn, cls)(3, 4)(_ones(lib, 0, 2, 3)),
}
STATE_ERRORS = {  # (input shape, hidden shape, cell shape)
    "batch": ((5, 2, 3), (1, 3, 4), (1, 2, 4)),
    "hidden": ((5, 2, 3), (1, 2, 5), (1, 2, 4)),
    "cell": ((5, 2, 3), (1, 2, 4), (1, 2, 5)),
    "layers": ((5, 2, 3), (2, 2, 4), (2, 2, 4)),
    "batched_2d_h": ((5, 2, 3), (2, 4), (2, 4)),
    "unbatched_3d_h": ((5, 3), (1, 1, 4), (1, 1, 4)),
    "state_dtype": ((5, 2, 3), (1, 2, 4), (1, 2, 4)),
}


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("case", list(MODULE_ERRORS))
def test_module_input_errors_like_torch(cls: str, case: str) -> None:
    same_error(lambda lib: MODULE_ERRORS[case](lib, cls))


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("case", list(STATE_ERRORS))
def test_module_state_errors_like_torch(cls: str, case: str) -> None:
    xs, hs, cs = STATE_ERRORS[case]
    if cls != "LSTM" and case == "cell":
        return

    def prog(lib: Any) -> Any:
        dt = "float64" if case == "state_dtype" else "float32"
        hx = (_ones(lib, *hs, dtype=dt), _ones(lib, *cs, dtype=dt)) if cls == "LSTM" \
            else _ones(lib, *hs, dtype=dt)
        return getattr(lib.nn, cls)(3, 4)(_ones(lib, *xs), hx)

    same_error(prog)


CELL_ERRORS = {
    "input_3d": lambda lib, m: m(_ones(lib, 1, 2, 3)),
    "input_size": lambda lib, m: m(_ones(lib, 2, 5)),
    "batch": lambda lib, m: m(_ones(lib, 2, 3), _states(lib, m, (3, 4))),
    "hidden": lambda lib, m: m(_ones(lib, 2, 3), _states(lib, m, (2, 5))),
    "hidden_3d": lambda lib, m: m(_ones(lib, 2, 3), _states(lib, m, (1, 2, 4))),
    "unbatched_vs_batched": lambda lib, m: m(_ones(lib, 3), _states(lib, m, (2, 4))),
    "dtype": lambda lib, m: m(_ones(lib, 2, 3, dtype="float64")),
}


def _states(lib: Any, m: Any, shape: tuple[int, ...]) -> Any:
    h = _ones(lib, *shape)
    return (h, _ones(lib, *shape)) if "LSTM" in type(m).__name__ else h


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("case", list(CELL_ERRORS))
def test_cell_errors_like_torch(cls: str, case: str) -> None:
    same_error(lambda lib: CELL_ERRORS[case](lib, getattr(lib.nn, cls)(3, 4)))


def test_cell_lstm_cx_errors_and_unknown_nonlinearity() -> None:
    same_error(lambda lib: lib.nn.LSTMCell(3, 4)(_ones(lib, 2, 3),
                                                  (_ones(lib, 2, 4), _ones(lib, 2, 5))))
    same_error(lambda lib: lib.nn.RNNCell(3, 4, nonlinearity="foo")(_ones(lib, 3)))
    assert repr(gradsum.nn.RNNCell(3, 4, nonlinearity="foo")) == "RNNCell(3, 4, nonlinearity=foo)"


CTOR_ERRORS = [("LSTM", (3, 4), {"dropout": 1.5}), ("LSTM", (3, 4), {"dropout": True}),
               ("LSTM", (3, 4), {"dropout": "0.1"}),
               ("LSTM", (3, 4), {"num_layers": 0}), ("LSTM", (3, 4), {"proj_size": 4}),
               ("LSTM", (3, 4), {"proj_size": -1}), ("GRU", (3, 4), {"bias": 1}),
               ("GRU", (3, 4), {"batch_first": 0}), ("RNN", (3, 0), {}), ("RNN", (0, 3), {}),
               ("RNN", (3.0, 4), {}), ("RNN", (3, 4.0), {}), ("GRU", (3, 4), {"proj_size": 1}),
               ("RNN", (3, 4), {"proj_size": 1}), ("RNN", (3, 4), {"nonlinearity": "gelu"}),
               ("RNN", (3, 4, 1, "sigmoid"), {})]


@pytest.mark.parametrize(("cls", "args", "kw"), CTOR_ERRORS)
def test_constructor_errors_like_torch(cls: str, args: tuple[Any, ...],
                                       kw: dict[str, Any]) -> None:
    same_error(lambda lib: getattr(lib.nn, cls)(*args, **kw))


def test_rnn_positional_nonlinearity_and_attributes() -> None:
    for lib in (torch, gradsum):
        m = lib.nn.RNN(3, 4, 2, "relu", False)
        assert (m.mode, m.nonlinearity, m.num_layers, m.bias) == ("RNN_RELU", "relu", 2, False)
        assert lib.nn.LSTM(3, 4).mode == "LSTM" and isinstance(lib.nn.GRU(3, 4), lib.nn.RNNBase)
        assert isinstance(lib.nn.GRUCell(3, 4), lib.nn.RNNCellBase)
        assert lib.nn.LSTM(3, 4, dropout=0).dropout == 0.0


def test_foreign_packed_sequence_is_rejected_clearly() -> None:
    # (gradsum's own PackedSequence is accepted: tests/nn/test_rnn_utils.py)
    packed = torch.nn.utils.rnn.pack_padded_sequence(torch.ones(3, 2, 3), [3, 2])
    with pytest.raises(TypeError, match="PackedSequence"):
        gradsum.nn.LSTM(3, 4)(packed)
    with pytest.raises(TypeError, match="Tensor"):
        gradsum.nn.GRU(3, 4)([[1.0, 2.0, 3.0]])


def test_batch_of_zero_and_no_grad_like_torch() -> None:
    t_mod, g_mod = twins("LSTM", "float64", IN, HID, bidirectional=True)
    for mod, lib in ((t_mod, torch), (g_mod, gradsum)):
        out, (h, c) = mod(lib.zeros(4, 0, IN, dtype=lib.float64))
        assert tuple(out.shape) == (4, 0, 2 * HID) and tuple(h.shape) == (2, 0, HID)
        with lib.no_grad():
            out, _ = mod(lib.ones(4, 2, IN, dtype=lib.float64))
        assert not out.requires_grad and out.grad_fn is None
