"""The fused recurrent layers (``gradsum.ops.rnn``: one graph node per layer and direction)
against torch: values and gradients of LSTM / GRU / RNN (tanh, relu) and the cells over
layers, directions, batch_first, given or default states, bias, proj_size and packed
sequences, in float32 and float64; float64 gradcheck and gradgradcheck of the fused node
(its array backward, and its backward under create_graph, which recomputes the layer in
gradsum ops); the first-order gradients of both backward forms agree; the number of graph
nodes per call stays pinned; saved-tensor checks as torch's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from gradsum.autograd import gradcheck, gradgradcheck  # noqa: E402
from gradsum.ops import rnn as _rnn  # noqa: E402
from nn_helpers import (  # noqa: E402
    floats,
    twins,
)

pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported")
TOL = {"float64": 1e-10, "float32": 2e-5}
IN, HID = 3, 5


def _cot(lib: Any, y: Any, k: float) -> Any:
    w = np.cos(k * np.arange(int(np.prod(tuple(y.shape))))).reshape(tuple(y.shape))
    return lib.tensor(w, dtype=y.dtype)


def _flat(res: Any) -> list[Any]:
    out = []
    for r in res if isinstance(res, tuple) else (res,):
        if isinstance(r, tuple):
            out.extend(r)
        elif hasattr(r, "batch_sizes"):
            out.append(r.data)
        else:
            out.append(r)
    return out


def _run(lib: Any, mod: Any, x_arr: np.ndarray, states: list[np.ndarray] | None,
         dtype: str, packed: list[int] | None) -> tuple[list[Any], list[Any]]:
    """Outputs, then the gradients of the input, the states and every parameter, of a fixed
    weighted sum of all outputs."""
    dt = getattr(lib, dtype)
    if packed is not None:
        seqs = [lib.tensor(x_arr[:n, i], dtype=dt, requires_grad=True)
                for i, n in enumerate(packed)]
        x: Any = lib.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)
        leaves = seqs
    else:
        x = lib.tensor(x_arr, dtype=dt, requires_grad=True)
        leaves = [x]
    hs = None
    if states is not None:
        hs = [lib.tensor(s, dtype=dt, requires_grad=True) for s in states]
        leaves = leaves + hs
    res = mod(x) if hs is None else mod(x, hs[0] if len(hs) == 1 else tuple(hs))
    outs = _flat(res)
    loss = sum((_cot(lib, o, 0.7 + k) * o).sum() for k, o in enumerate(outs))
    params = list(mod.parameters())
    grads = lib.autograd.grad(loss, leaves + params)
    return outs, list(grads)


def _compare(cls: str, kw: dict[str, Any], dtype: str, seq: int = 4, batch: int = 3,
             states: bool = False, packed: list[int] | None = None) -> None:
    t_mod, g_mod = twins(cls, dtype, IN, HID, **kw)
    rs = np.random.RandomState(5)
    if kw.get("batch_first") and packed is None:
        x_arr = rs.randn(batch, seq, IN)
    else:
        x_arr = rs.randn(seq, batch, IN)
    st = None
    if states:
        dirs = (2 if kw.get("bidirectional") else 1) * kw.get("num_layers", 1)
        real = kw.get("proj_size", 0) or HID
        st = [rs.randn(dirs, batch, real)]
        if cls == "LSTM":
            st.append(rs.randn(dirs, batch, HID))
    t_res = _run(torch, t_mod, x_arr, st, dtype, packed)
    g_res = _run(gradsum, g_mod, x_arr, st, dtype, packed)
    for part_t, part_g in zip(t_res, g_res):
        assert len(part_t) == len(part_g)
        for a, b in zip(part_t, part_g):
            assert tuple(a.shape) == tuple(b.shape)
            np.testing.assert_allclose(floats(b), floats(a), rtol=TOL[dtype], atol=TOL[dtype])


MODULES = [("LSTM", {}), ("GRU", {}), ("RNN", {}), ("RNN", {"nonlinearity": "relu"})]
CONFIGS = [
    {}, {"num_layers": 2}, {"bidirectional": True}, {"batch_first": True},
    {"num_layers": 2, "bidirectional": True, "batch_first": True}, {"bias": False},
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(c) or "plain")
@pytest.mark.parametrize("cls,kw", MODULES, ids=["lstm", "gru", "rnn_tanh", "rnn_relu"])
def test_modules_like_torch(cls: str, kw: dict[str, Any], config: dict[str, Any],
                            dtype: str) -> None:
    _compare(cls, {**kw, **config}, dtype)


@pytest.mark.parametrize("cls,kw", MODULES, ids=["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("bidir", [False, True])
def test_given_states_like_torch(cls: str, kw: dict[str, Any], bidir: bool) -> None:
    _compare(cls, {**kw, "num_layers": 2, "bidirectional": bidir}, "float64", states=True)


@pytest.mark.parametrize("cls,kw", MODULES, ids=["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("bidir", [False, True])
@pytest.mark.parametrize("states", [False, True])
def test_packed_like_torch(cls: str, kw: dict[str, Any], bidir: bool, states: bool) -> None:
    _compare(cls, {**kw, "num_layers": 2, "bidirectional": bidir}, "float64", seq=5,
             batch=4, states=states, packed=[2, 5, 1, 3])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("config", [{}, {"num_layers": 2, "bidirectional": True},
                                    {"batch_first": True}], ids=["plain", "stacked", "bf"])
@pytest.mark.parametrize("states", [False, True])
def test_lstm_projection_like_torch(config: dict[str, Any], states: bool, dtype: str) -> None:
    _compare("LSTM", {**config, "proj_size": 2}, dtype, states=states)
    if states and dtype == "float64":
        _compare("LSTM", {**config, "proj_size": 2}, dtype, seq=4, batch=3, states=True,
                 packed=[4, 2, 3])


def test_longer_sequence_float32_like_torch() -> None:
    _compare("LSTM", {"num_layers": 2}, "float32", seq=35, batch=4)
    _compare("GRU", {"num_layers": 2}, "float32", seq=35, batch=4)


CELLS = [("LSTMCell", {}), ("GRUCell", {}), ("RNNCell", {}),
         ("RNNCell", {"nonlinearity": "relu"}), ("LSTMCell", {"bias": False})]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("given", [False, True])
@pytest.mark.parametrize("cls,kw", CELLS,
                         ids=["lstm", "gru", "rnn_tanh", "rnn_relu", "lstm_nobias"])
def test_cells_like_torch(cls: str, kw: dict[str, Any], given: bool, dtype: str) -> None:
    t_mod, g_mod = twins(cls, dtype, IN, HID, **kw)
    rs = np.random.RandomState(2)
    x_arr = rs.randn(3, IN)
    st = [rs.randn(3, HID) for _ in range(2 if cls == "LSTMCell" else 1)]
    res = []
    for lib, mod in ((torch, t_mod), (gradsum, g_mod)):
        dt = getattr(lib, dtype)
        x = lib.tensor(x_arr, dtype=dt, requires_grad=True)
        hs = [lib.tensor(s, dtype=dt, requires_grad=True) for s in st]
        if given:
            out = mod(x, tuple(hs) if len(hs) == 2 else hs[0])
        else:
            out = mod(x)
            hs = []
        outs = list(out) if isinstance(out, tuple) else [out]
        loss = sum((_cot(lib, o, 1.3 + k) * o).sum() for k, o in enumerate(outs))
        grads = lib.autograd.grad(loss, [x, *hs, *mod.parameters()])
        res.append(outs + list(grads))
    for a, b in zip(*res):
        np.testing.assert_allclose(floats(b), floats(a), rtol=TOL[dtype], atol=TOL[dtype])


# -- gradcheck / gradgradcheck of the fused node -------------------------------------------------
def _layer_inputs(mode: str, proj: int, bias: bool, b0: int, n_in: int, seed: int
                  ) -> list[Any]:
    gradsum.manual_seed(seed)
    hid = 3
    gate = _rnn.GATES[mode] * hid
    p = proj or hid

    def param(*shape: int) -> Any:
        return (gradsum.rand(*shape, dtype=gradsum.float64) - 0.5).requires_grad_()

    return [param(gate, n_in), param(gate) if bias else None, param(gate, p),
            param(gate) if bias else None, param(p, hid) if proj else None, param(b0, p),
            param(b0, hid) if mode == "LSTM" else None]


LAYERS = [("LSTM", 0, True), ("LSTM", 2, True), ("LSTM", 0, False), ("GRU", 0, True),
          ("GRU", 0, False), ("RNN_TANH", 0, True), ("RNN_RELU", 0, True)]


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("mode,proj,bias", LAYERS)
def test_fused_layer_gradcheck_and_gradgradcheck(mode: str, proj: int, bias: bool,
                                                 reverse: bool, packed: bool) -> None:
    n_in = 2
    if packed:
        sizes = [3, 2, 2, 1]
        steps = _rnn.Steps.packed(sizes, reverse)
        x = gradsum.randn(sum(sizes), n_in, dtype=gradsum.float64, requires_grad=True)
        b0 = 3
    else:
        steps = _rnn.Steps.uniform(3, 2, reverse)
        x = gradsum.randn(3, 2, n_in, dtype=gradsum.float64, requires_grad=True)
        b0 = 2
    rest = _layer_inputs(mode, proj, bias, b0, n_in, 7)
    if mode == "RNN_RELU":  # (away from relu's kink, where central differences break)
        x = (x.detach() * 0.3 + 0.5).requires_grad_()
    slots = [k for k, t in enumerate(rest) if t is not None]
    inputs = [x] + [rest[k] for k in slots]

    def f(x: Any, *present: Any) -> Any:
        args: list[Any] = [None] * len(rest)
        for k, t in zip(slots, present):
            args[k] = t
        w_ih, b_ih, w_hh, b_hh, w_hr, h0, c0 = args
        y, h, c = _rnn.rnn_layer(mode, x, w_ih, b_ih, w_hh, b_hh, w_hr, h0, c0, steps)
        assert type(y.grad_fn) is _rnn._NODES[mode]
        return (y, h) if c is None else (y, h, c)

    assert gradcheck(f, inputs)
    assert gradgradcheck(f, inputs)


@pytest.mark.parametrize("mode,proj,bias", LAYERS)
def test_both_backward_forms_agree(mode: str, proj: int, bias: bool) -> None:
    """The array backward and the composed one (under create_graph) give the same
    first-order gradients, also when only some outputs get a gradient."""
    steps = _rnn.Steps.packed([3, 3, 1], True)
    x = gradsum.randn(7, 2, dtype=gradsum.float64, requires_grad=True)
    rest = _layer_inputs(mode, proj, bias, 3, 2, 3)
    leaves = [x] + [t for t in rest if t is not None]
    for which in ([0], [1], [0, 1, 2]):
        res = []
        for create in (False, True):
            outs = _rnn.rnn_layer(mode, x, *rest, steps)
            used = [outs[k] for k in which if outs[k] is not None]
            loss = sum((_cot(gradsum, o, 0.4) * o).sum() for o in used)
            gs = gradsum.autograd.grad(loss, leaves, create_graph=create, allow_unused=True)
            res.append(gs)
            if create:
                assert any(g is not None and g.requires_grad for g in gs)
        for a, b in zip(*res):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_allclose(floats(a), floats(b), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
def test_module_double_backward_like_torch(cls: str) -> None:
    rs = np.random.RandomState(1)
    x_arr = rs.randn(4, 2, IN)
    res = []
    t_mod, g_mod = twins(cls, "float64", IN, 4, num_layers=2, batch_first=True)
    for lib, mod in ((torch, t_mod), (gradsum, g_mod)):
        x = lib.tensor(x_arr, dtype=lib.float64, requires_grad=True)
        out, hid = mod(x)
        h = hid[0] if isinstance(hid, tuple) else hid
        loss = (_cot(lib, out, 0.3) * out).sum() + (h * h).sum()
        params = list(mod.parameters())
        gs = lib.autograd.grad(loss, [x, *params], create_graph=True)
        s = sum((g * g).sum() for g in gs)
        res.append([floats(g) for g in lib.autograd.grad(s, [x, *params])])
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-10)


# -- the fusion: graph nodes per call ------------------------------------------------------------
def _count_nodes(*outputs: Any) -> dict[str, int]:
    seen: set[int] = set()
    counts: dict[str, int] = {}
    todo = [o.grad_fn for o in outputs if o.grad_fn is not None]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        name = node.name()
        if name != "AccumulateGrad":
            counts[name] = counts.get(name, 0) + 1
        todo.extend(n for n, _ in node.next_functions)
    return counts


@pytest.mark.parametrize("cls,bidir,batch_first,layers,limit", [
    ("LSTM", False, False, 2, 4),   # two layer nodes, stack(h_n), stack(c_n)
    ("GRU", False, True, 2, 5),     # + the transpose of the batch_first input
    ("RNN", True, False, 1, 4),     # two direction nodes, cat, stack
    ("LSTM", True, True, 2, 10),    # four nodes, two cats, the transposes, the stacks
])
def test_graph_nodes_per_call(cls: str, bidir: bool, batch_first: bool, layers: int,
                              limit: int) -> None:
    mod = getattr(gradsum.nn, cls)(8, 8, layers, bidirectional=bidir,
                                   batch_first=batch_first)
    x = gradsum.randn(10, 4, 8, requires_grad=True)
    out, hid = mod(x)
    states = hid if isinstance(hid, tuple) else (hid,)
    counts = _count_nodes(out, *states)
    layer_nodes = sum(v for k, v in counts.items() if k in {
        "MkldnnRnnLayerBackward0", "GruLayerBackward0", "RnnTanhLayerBackward0"})
    assert layer_nodes == layers * (2 if bidir else 1), counts
    assert sum(counts.values()) <= limit, counts


def test_cell_is_one_node() -> None:
    for cell in (gradsum.nn.LSTMCell(4, 4), gradsum.nn.GRUCell(4, 4), gradsum.nn.RNNCell(4, 4)):
        out = cell(gradsum.randn(2, 4, requires_grad=True))
        outs = out if isinstance(out, tuple) else (out,)
        assert sum(_count_nodes(*outs).values()) == 1


# -- saved tensors -------------------------------------------------------------------------------
def test_weight_changed_in_place_after_forward_raises_like_torch() -> None:
    t_mod, g_mod = twins("LSTM", "float64", IN, HID)
    for lib, mod in ((torch, t_mod), (gradsum, g_mod)):
        out, _ = mod(lib.ones(2, 1, IN, dtype=lib.float64))
        with lib.no_grad():
            mod.weight_hh_l0.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()


def test_second_backward_needs_retain_graph() -> None:
    mod = gradsum.nn.GRU(IN, HID)
    out, _ = mod(gradsum.ones(2, 1, IN))
    out.sum().backward(retain_graph=True)
    first = mod.weight_hh_l0.grad.clone()
    out.sum().backward()
    np.testing.assert_allclose(mod.weight_hh_l0.grad.numpy(), 2 * first.numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="second time"):
        out.sum().backward()


def test_no_grad_and_other_dtypes() -> None:
    mod = gradsum.nn.LSTM(IN, HID)
    with gradsum.no_grad():
        out, (h, c) = mod(gradsum.ones(2, 1, IN))
    assert out.grad_fn is None and h.grad_fn is None
    # (float16 takes the composed form, step by step)
    half = gradsum.nn.GRU(IN, HID).half()
    out, _ = half(gradsum.ones(2, 1, IN, dtype=gradsum.float16))
    assert out.dtype == gradsum.float16
    assert out.grad_fn.name() == "StackBackward0"


@pytest.mark.parametrize("cls", ["LSTMCell", "GRUCell", "LSTM", "GRU"])
@pytest.mark.parametrize("sizes", [(1, 5), (3, 1), (1, 1)], ids=["in1", "hid1", "both1"])
def test_repeated_calls_leave_the_weights_alone(cls: str, sizes: tuple[int, int]) -> None:
    """With one input feature or one hidden unit a gate's transposed weight is already
    row-major; the negated copy the fused kernel makes must still be a copy (it once negated
    the parameter itself, so every second call of ports/lbfgs_sequence's LSTMCell was wrong)."""
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    t_mod, g_mod = twins(cls, "float64", *sizes)
    before = {k: floats(v).copy() for k, v in g_mod.state_dict().items()}
    shape = (3, sizes[0]) if cls.endswith("Cell") else (4, 3, sizes[0])
    x = rng.standard_normal(shape)
    want = t_mod(torch.tensor(x))
    for _ in range(3):
        got = g_mod(gradsum.tensor(x))
        w, gv = (want[0], got[0]) if isinstance(want, tuple) else (want, got)
        np.testing.assert_allclose(floats(gv), floats(w), rtol=1e-12, atol=1e-14)
    for k, v in g_mod.state_dict().items():
        np.testing.assert_array_equal(floats(v), before[k])
