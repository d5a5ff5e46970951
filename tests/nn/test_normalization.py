"""Side-by-side tests of batch, group and instance normalisation (F.batch_norm, F.group_norm,
F.instance_norm, nn.BatchNorm1d/2d/3d, nn.GroupNorm, nn.InstanceNorm1d/2d/3d) against torch:
values, first- and second-order gradients in float64 and float32, grad_fn names, running
statistics over several training steps then evaluation, state_dict keys / versions / old
checkpoints, reprs and exception types; the functional forms pass gradcheck and
gradgradcheck in float64."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import same_error  # noqa: E402
from gradsum.autograd import gradcheck, gradgradcheck  # noqa: E402
from nn_helpers import floats_or_none  # noqa: E402

Program = Callable[..., Any]
RS = np.random.RandomState(4321)
TOL = {"float64": {"rtol": 1e-9, "atol": 1e-10}, "float32": {"rtol": 2e-4, "atol": 1e-5}}
#: float32 second-order gradients: both libraries are only this close to the float64 truth
#: (torch's own error there is of the same size as the difference to torch)
TOL2_F32 = {"rtol": 2e-3, "atol": 2e-3}


def _arr(*shape: int) -> np.ndarray:
    return RS.randn(*shape) * 1.5 + 0.3


def _weights(lib: Any, y: Any) -> Any:
    """A fixed, non-uniform cotangent pattern (sum(y**2) would be nearly constant here)."""
    k = np.cos(np.arange(int(np.prod(y.shape)))).reshape(tuple(y.shape))
    return lib.tensor(k, dtype=y.dtype)


def run_both(fn: Program, arrays: list[np.ndarray], dtype: str = "float64",
             second: bool = True) -> list[list[Any]]:
    """``fn(lib, F, dt, *tensors)`` on both libraries (it returns ``y`` or ``(y, extras)``):
    its output, grad_fn name, extras, the gradients of ``sum(k * y**3)`` and, if ``second``,
    the gradients of the sum of squared gradients (create_graph=True)."""
    res = []
    for lib in (torch, gradsum):
        dt = getattr(lib, dtype)
        xs = [lib.tensor(a, dtype=dt, requires_grad=True) for a in arrays]
        y = fn(lib, lib.nn.functional, dt, *xs)
        extra: list[Any] = []
        if isinstance(y, tuple):
            y, extra = y[0], [floats_or_none(t) for t in y[1]]
        loss = (_weights(lib, y) * y * y * y).sum()
        gs = lib.autograd.grad(loss, xs, create_graph=second, allow_unused=True)
        out = [floats_or_none(y), y.grad_fn.name() if y.grad_fn else None, *extra,
               *[floats_or_none(g) for g in gs]]
        if second:
            s = sum((g * g).sum() for g in gs if g is not None)
            out += [floats_or_none(g) for g in lib.autograd.grad(s, xs, allow_unused=True)]
        res.append(out)
    return res


def check(fn: Program, arrays: list[np.ndarray], dtype: str = "float64",
          second: bool = True) -> None:
    t_res, g_res = run_both(fn, arrays, dtype, second)
    assert len(t_res) == len(g_res)
    first = len(t_res) - (len(arrays) if second else 0)
    for i, (a, b) in enumerate(zip(t_res, g_res)):
        tol = TOL2_F32 if dtype == "float32" and i >= first else TOL[dtype]
        if i == 1:
            assert a == b, (a, b)
            continue
        if a is None or b is None:
            assert a is None and b is None, i
            continue
        assert a.shape == b.shape, (i, a.shape, b.shape)
        scale = max(1.0, float(np.abs(a).max())) if a.size else 1.0
        np.testing.assert_allclose(b, a, rtol=tol["rtol"], atol=tol["atol"] * scale,
                                   err_msg=str(i))


# -- F.batch_norm ------------------------------------------------------------------------------
SHAPES = [(5, 3), (4, 3, 6), (3, 2, 4, 3), (2, 2, 3, 2, 3)]


def _stats(lib: Any, dt: Any, c: int) -> tuple[Any, Any]:
    rm = lib.tensor(np.linspace(-0.5, 0.5, c), dtype=dt)
    rv = lib.tensor(np.linspace(0.5, 2.0, c), dtype=dt)
    return rm, rv


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("shape", SHAPES, ids=[f"{len(s)}d" for s in SHAPES])
def test_batch_norm_values_and_gradients(shape: tuple[int, ...], training: bool,
                                         dtype: str) -> None:
    c = shape[1]

    def prog(lib: Any, F: Any, dt: Any, x: Any, w: Any, b: Any) -> Any:
        rm, rv = _stats(lib, dt, c)
        y = F.batch_norm(x, rm, rv, w, b, training=training, momentum=0.3, eps=1e-3)
        return y, [rm, rv]

    check(prog, [_arr(*shape), _arr(c), _arr(c)], dtype)


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_batch_norm_without_affine_or_stats(training: bool) -> None:
    def no_affine(lib: Any, F: Any, dt: Any, x: Any) -> Any:
        rm, rv = _stats(lib, dt, 3)
        return F.batch_norm(x, rm, rv, training=training), [rm, rv]

    check(no_affine, [_arr(4, 3, 5)])
    # (torch's double backward fails with a bias and no weight: "Expected a proper Tensor but
    # got None ... for argument #1 'other'"; gradsum's works; first order compared here)
    check(lambda lib, F, dt, x, b: F.batch_norm(x, *_stats(lib, dt, 3), None, b,
                                                training=training), [_arr(4, 3, 5), _arr(3)],
          second=False)
    if training:  # batch statistics only, no running ones to update
        check(lambda lib, F, dt, x, w: F.batch_norm(x, None, None, w, training=True),
              [_arr(6, 3), _arr(3)])


def test_batch_norm_grad_fn_edges_like_torch() -> None:
    names = []
    for lib in (torch, gradsum):
        x = lib.tensor(_arr(3, 2, 4), dtype=lib.float32)
        w = lib.ones(2, requires_grad=True)
        y = lib.nn.functional.batch_norm(x, lib.zeros(2), lib.ones(2), w, None, False)
        fn = y.grad_fn
        names.append([fn.name()] + [None if n is None else n.name().split("::")[-1]
                                    for n, _ in fn.next_functions])
        assert lib.nn.functional.batch_norm(x, lib.zeros(2), lib.ones(2)).grad_fn is None
    assert names[0] == names[1]


def test_batch_norm_empty_batch_like_torch() -> None:
    check(lambda lib, F, dt, x, w, b: F.batch_norm(x, *_stats(lib, dt, 3), w, b, True),
          [np.zeros((0, 3, 2)), _arr(3), _arr(3)], second=False)


# -- F.group_norm / F.instance_norm ------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("shape", "groups"), [((3, 6), 2), ((2, 6, 5), 3), ((2, 4, 3, 3), 4),
                                               ((2, 4, 2, 2, 3), 1), ((1, 6, 4), 2)])
def test_group_norm_values_and_gradients(shape: tuple[int, ...], groups: int,
                                         dtype: str) -> None:
    c = shape[1]
    check(lambda lib, F, dt, x, w, b: F.group_norm(x, groups, w, b, eps=1e-4),
          [_arr(*shape), _arr(c), _arr(c)], dtype)
    check(lambda lib, F, dt, x: F.group_norm(x, groups), [_arr(*shape)], dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("mode", ["plain", "affine", "stats", "eval_stats"])
def test_instance_norm_values_and_gradients(mode: str, dtype: str) -> None:
    def prog(lib: Any, F: Any, dt: Any, x: Any, w: Any, b: Any) -> Any:
        if mode == "plain":
            return F.instance_norm(x)
        if mode == "affine":
            return F.instance_norm(x, weight=w, bias=b, eps=1e-3)
        rm, rv = _stats(lib, dt, 3)
        y = F.instance_norm(x, rm, rv, w, b, use_input_stats=mode == "stats", momentum=0.2)
        return y, [rm, rv]

    check(prog, [_arr(4, 3, 5), _arr(3), _arr(3)], dtype)
    check(lambda lib, F, dt, x: F.instance_norm(x), [_arr(2, 3, 3, 4)], dtype)


# -- modules: training steps, running statistics, evaluation -----------------------------------
def _train_then_eval(lib: Any, make: Program, shapes: list[tuple[int, ...]],
                     dtype: str) -> list[np.ndarray | None]:
    m = make(lib.nn)
    dt = getattr(lib, dtype)
    m.to(dt)
    rs = np.random.RandomState(7)
    params = list(m.parameters())
    opt = lib.optim.SGD(params, lr=0.1) if params else None
    out: list[np.ndarray | None] = []
    for shape in shapes:  # several training steps (the parameters move too)
        x = lib.tensor(rs.randn(*shape) * 2 + 1, dtype=dt, requires_grad=True)
        y = m(x)
        loss = (_weights(lib, y) * y * y * y).sum()
        if opt is not None:
            opt.zero_grad()
        loss.backward()
        if opt is not None:
            opt.step()
        out += [floats_or_none(y), floats_or_none(x.grad)]
        out += [floats_or_none(b) for b in m.buffers()]
    m.eval()
    x = lib.tensor(rs.randn(*shapes[0]), dtype=dt, requires_grad=True)
    y = m(x)
    (_weights(lib, y) * y).sum().backward()
    out += ([floats_or_none(y), floats_or_none(x.grad)] + [floats_or_none(p.grad) for p in params]
            + [floats_or_none(p) for p in params])
    out.append(np.array([y.grad_fn.name() == "NativeBatchNormBackward0"]))
    return out


MODULES: dict[str, tuple[Program, list[tuple[int, ...]]]] = {
    "bn1d": (lambda nn: nn.BatchNorm1d(3), [(6, 3), (4, 3), (5, 3)]),
    "bn1d_3d": (lambda nn: nn.BatchNorm1d(3, momentum=0.3), [(4, 3, 5), (2, 3, 3)]),
    "bn1d_cma": (lambda nn: nn.BatchNorm1d(3, momentum=None), [(4, 3), (5, 3), (3, 3)]),
    "bn2d": (lambda nn: nn.BatchNorm2d(2), [(3, 2, 4, 4), (2, 2, 3, 5), (4, 2, 2, 2)]),
    "bn2d_noaffine": (lambda nn: nn.BatchNorm2d(2, affine=False), [(3, 2, 3, 3), (2, 2, 4, 2)]),
    "bn2d_nostats": (lambda nn: nn.BatchNorm2d(2, track_running_stats=False),
                     [(3, 2, 3, 3), (2, 2, 4, 2)]),
    "bn2d_nobias": (lambda nn: nn.BatchNorm2d(2, bias=False), [(3, 2, 3, 3), (2, 2, 2, 2)]),
    "bn3d": (lambda nn: nn.BatchNorm3d(2, eps=1e-3), [(2, 2, 3, 2, 3), (3, 2, 2, 2, 2)]),
    "gn": (lambda nn: nn.GroupNorm(2, 4), [(3, 4, 5), (2, 4, 3, 2)]),
    "gn_noaffine": (lambda nn: nn.GroupNorm(1, 3, affine=False), [(2, 3, 4)]),
    "in1d": (lambda nn: nn.InstanceNorm1d(3), [(2, 3, 5), (4, 3, 3)]),
    "in1d_stats": (lambda nn: nn.InstanceNorm1d(3, affine=True, track_running_stats=True),
                   [(2, 3, 5), (4, 3, 3), (3, 3, 4)]),
    "in2d_stats": (lambda nn: nn.InstanceNorm2d(2, momentum=0.5, track_running_stats=True),
                   [(2, 2, 3, 3), (3, 2, 2, 4)]),
    "in2d_affine": (lambda nn: nn.InstanceNorm2d(2, affine=True), [(2, 2, 3, 3)]),
    "in3d": (lambda nn: nn.InstanceNorm3d(2, track_running_stats=True), [(2, 2, 2, 3, 2)]),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_training_steps_then_eval(name: str, dtype: str) -> None:
    make, shapes = MODULES[name]
    t_out = _train_then_eval(torch, make, shapes, dtype)
    g_out = _train_then_eval(gradsum, make, shapes, dtype)
    assert len(t_out) == len(g_out)
    tol = TOL[dtype]
    for i, (a, b) in enumerate(zip(t_out, g_out)):
        if a is None or b is None:
            assert a is None and b is None, i
            continue
        scale = max(1.0, float(np.abs(a).max())) if a.size else 1.0
        np.testing.assert_allclose(b, a, rtol=tol["rtol"], atol=tol["atol"] * scale,
                                   err_msg=f"{name}: item {i}")


def test_num_batches_tracked_and_buffers_like_torch() -> None:
    for lib in (torch, gradsum):
        m = lib.nn.BatchNorm1d(2, momentum=None)
        assert m.num_batches_tracked.dtype == lib.int64
        for _ in range(3):
            m(lib.ones(4, 2))
        assert m.num_batches_tracked.item() == 3
        m.eval()
        m(lib.ones(4, 2))
        assert m.num_batches_tracked.item() == 3
        m.reset_running_stats()
        assert m.num_batches_tracked.item() == 0 and m.running_var.tolist() == [1.0, 1.0]
        m.double()
        assert m.num_batches_tracked.dtype == lib.int64
        assert m.running_mean.dtype == lib.float64
        n = lib.nn.InstanceNorm1d(2)
        assert n.running_mean is None and n.num_batches_tracked is None
        assert [k for k, _ in n.named_buffers()] == []


def test_unbatched_instance_norm_and_mismatch_warning() -> None:
    a = _arr(3, 5)
    res = []
    for lib in (torch, gradsum):
        res.append(floats_or_none(lib.nn.InstanceNorm1d(3)(lib.tensor(a))))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.nn.InstanceNorm1d(4)(lib.tensor(_arr(2, 3, 5)))
        assert any("does not match num_features" in str(x.message) for x in w)
    np.testing.assert_allclose(res[1], res[0], rtol=1e-10, atol=1e-12)


def test_batch_norm_inside_a_model_trains_like_torch() -> None:
    x_eval = np.random.RandomState(3).randn(2, 2, 5, 5)
    out = []
    for lib in (torch, gradsum):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Conv2d(2, 3, 3, padding=1), lib.nn.BatchNorm2d(3),
                                  lib.nn.ReLU(), lib.nn.GroupNorm(3, 3)).double()
        sd = model.state_dict()
        model.load_state_dict({k: lib.tensor(np.cos(np.arange(v.numel())).reshape(
            tuple(v.shape)), dtype=v.dtype) for k, v in sd.items()})
        opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        for step in range(4):
            x = lib.tensor(np.random.RandomState(step).randn(4, 2, 5, 5), dtype=lib.float64)
            loss = (model(x) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        y = model(lib.tensor(x_eval, dtype=lib.float64))
        out.append([[floats_or_none(v) for v in model.state_dict().values()], floats_or_none(y)])
    for a, b in zip(out[0][0], out[1][0]):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-9, atol=1e-10)


# -- state_dict --------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda nn: nn.BatchNorm2d(3), lambda nn: nn.BatchNorm1d(3, affine=False),
    lambda nn: nn.BatchNorm1d(3, track_running_stats=False), lambda nn: nn.GroupNorm(1, 3),
    lambda nn: nn.InstanceNorm1d(3), lambda nn: nn.InstanceNorm2d(3, True, True, True),
    lambda nn: nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3)),
])
def test_state_dict_keys_versions_and_round_trip(make: Program) -> None:
    t_sd = make(torch.nn).state_dict()
    g_mod = make(gradsum.nn)
    g_sd = g_mod.state_dict()
    assert list(g_sd) == list(t_sd)
    assert dict(g_sd._metadata) == dict(t_sd._metadata)
    assert [str(v.dtype).split(".")[-1] for v in g_sd.values()] == \
        [str(v.dtype).split(".")[-1] for v in t_sd.values()]
    other = make(gradsum.nn)
    with gradsum.no_grad():
        for v in g_sd.values():
            v.add_(3)  # (state_dict shares the buffers)
    assert repr(other.load_state_dict(g_sd)) == "<All keys matched successfully>"
    for a, b in zip(other.state_dict().values(), g_mod.state_dict().values()):
        assert a.tolist() == b.tolist()


def test_old_checkpoint_without_num_batches_tracked() -> None:
    for lib in (torch, gradsum):
        src = lib.nn.BatchNorm1d(2)
        src(lib.tensor([[1.0, 2.0], [3.0, 5.0]]))
        old = {k: v for k, v in src.state_dict().items() if k != "num_batches_tracked"}
        dst = lib.nn.BatchNorm1d(2)
        with lib.no_grad():
            dst.num_batches_tracked.fill_(7)
        assert repr(dst.load_state_dict(old)) == "<All keys matched successfully>"
        assert "num_batches_tracked" not in old  # (the caller's dict is not changed)
        assert dst.num_batches_tracked.item() == 7  # the module keeps its own count
        assert dst.running_mean.tolist() == src.running_mean.tolist()
        # a version-1 checkpoint: the same; a version-2 one must hold the key
        sd = src.state_dict()
        del sd["num_batches_tracked"]
        with pytest.raises(RuntimeError, match="Missing key"):
            dst.load_state_dict(sd)
        sd._metadata[""]["version"] = 1
        dst.load_state_dict(sd)


def test_instance_norm_rejects_old_running_stats() -> None:
    for lib in (torch, gradsum):
        sd = {"running_mean": lib.zeros(2), "running_var": lib.ones(2)}
        with pytest.raises(RuntimeError, match="Unexpected running stats buffer"):
            lib.nn.InstanceNorm1d(2).load_state_dict(sd)
        with pytest.raises(RuntimeError, match="Unexpected running stats buffer"):
            lib.nn.InstanceNorm1d(2).load_state_dict(sd, strict=False)  # (errors, not keys)
        m = lib.nn.InstanceNorm1d(2, track_running_stats=True)
        # (a tracking one loads them; num_batches_tracked is optional in an old checkpoint)
        assert repr(m.load_state_dict(sd)) == "<All keys matched successfully>"


# -- reprs and errors --------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda nn: nn.BatchNorm1d(3), lambda nn: nn.BatchNorm2d(3),
    lambda nn: nn.BatchNorm3d(4, eps=1e-3, momentum=None, affine=False),
    lambda nn: nn.BatchNorm2d(2, track_running_stats=False, bias=False),
    lambda nn: nn.GroupNorm(2, 4), lambda nn: nn.GroupNorm(3, 6, 1e-6, False),
    lambda nn: nn.InstanceNorm1d(3), lambda nn: nn.InstanceNorm2d(3, affine=True),
    lambda nn: nn.InstanceNorm3d(2, momentum=0.2, track_running_stats=True),
    lambda nn: nn.Sequential(nn.BatchNorm1d(2), nn.GroupNorm(1, 2)),
])
def test_module_reprs(make: Program) -> None:
    assert repr(make(gradsum.nn)) == repr(make(torch.nn))


def _F(lib: Any) -> Any:
    return lib.nn.functional


@pytest.mark.parametrize("prog", [
    lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(2, 3, 4, 5)),
    lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(3)),
    lambda lib: lib.nn.BatchNorm2d(3)(lib.ones(2, 3, 4)),
    lambda lib: lib.nn.BatchNorm3d(3)(lib.ones(2, 3, 4, 4)),
    lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(1, 3)),
    lambda lib: lib.nn.BatchNorm2d(3)(lib.ones(1, 3, 1, 1)),
    lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(4, 2)),
    lambda lib: lib.nn.BatchNorm1d(3, affine=False)(lib.ones(4, 2)),
    lambda lib: lib.nn.BatchNorm1d(3).eval()(lib.ones(4, 2)),
    lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(4, 3, dtype=lib.int64)),
    lambda lib: _F(lib).batch_norm(lib.ones(4, 3), None, None, training=False),
    lambda lib: _F(lib).batch_norm(lib.ones(4, 3), lib.zeros(3), None, training=True),
    lambda lib: _F(lib).batch_norm(lib.ones(4, 3), None, None, lib.ones(2), training=True),
    lambda lib: _F(lib).batch_norm(lib.ones(4, 3), None, None, None, lib.ones(4), True),
    lambda lib: _F(lib).batch_norm(lib.ones(4, 3), lib.zeros(3), lib.ones(2), training=True),
    lambda lib: _F(lib).batch_norm(lib.ones(4, 3), None, None, training=True, eps=0.0),
    lambda lib: _F(lib).batch_norm(lib.ones(4, 3), lib.zeros(3), lib.ones(3), eps=-1.0),
    lambda lib: _F(lib).batch_norm(lib.ones(4, 3), lib.zeros(3), lib.ones(3), None, None,
                                   True, None),
    lambda lib: _F(lib).batch_norm(lib.ones(4, 3, dtype=lib.float64), lib.zeros(3),
                                   lib.ones(3)),
    lambda lib: _F(lib).batch_norm(lib.ones(4, 3), None, None, lib.ones(3, dtype=lib.float64),
                                   training=True),
    lambda lib: lib.nn.GroupNorm(3, 4),
    lambda lib: _F(lib).group_norm(lib.ones(2, 4, 3), 3),
    lambda lib: _F(lib).group_norm(lib.ones(4), 2),
    lambda lib: _F(lib).group_norm(lib.ones(1, 3), 3),
    lambda lib: _F(lib).group_norm(lib.ones(2, 4, 3), -1),
    lambda lib: _F(lib).group_norm(lib.ones(2, 4, 3), 0),
    lambda lib: _F(lib).group_norm(lib.ones(2, 4, 3), 2, lib.ones(3)),
    lambda lib: _F(lib).group_norm(lib.ones(2, 4, 3), 2, None, lib.ones(4, 1)),
    lambda lib: _F(lib).group_norm(lib.ones(2, 4, dtype=lib.int64), 2),
    lambda lib: lib.nn.GroupNorm(2, 4)(lib.ones(2, 6, 3)),
    lambda lib: lib.nn.InstanceNorm1d(3)(lib.ones(2, 3, 4, 5)),
    lambda lib: lib.nn.InstanceNorm2d(3)(lib.ones(2, 3)),
    lambda lib: lib.nn.InstanceNorm1d(3, affine=True)(lib.ones(2, 4, 5)),
    lambda lib: lib.nn.InstanceNorm1d(3)(lib.ones(2, 3, 1)),
    lambda lib: _F(lib).instance_norm(lib.ones(2, 3, 4), use_input_stats=False),
    lambda lib: _F(lib).instance_norm(lib.ones(2, 3, 4), lib.zeros(2), lib.ones(2)),
    lambda lib: _F(lib).instance_norm(lib.ones(2, 3, 4), weight=lib.ones(2)),
])
def test_errors_like_torch(prog: Program) -> None:
    same_error(prog)


def test_failed_training_call_leaves_buffers_unchanged() -> None:
    m = gradsum.nn.BatchNorm1d(3)
    for bad in (gradsum.ones(1, 3), gradsum.ones(4, 2)):
        with pytest.raises((ValueError, RuntimeError)):
            m(bad)
    assert m.num_batches_tracked.item() == 0
    assert m.running_mean.tolist() == [0.0, 0.0, 0.0]


def test_second_backward_raises_like_torch() -> None:
    for lib in (torch, gradsum):
        x = lib.tensor(_arr(4, 3), requires_grad=True)
        for y in (lib.nn.functional.batch_norm(x, None, None, training=True),
                  lib.nn.functional.group_norm(x, 3)):
            y.sum().backward()
            with pytest.raises(RuntimeError):
                y.sum().backward()


# -- gradcheck / gradgradcheck -----------------------------------------------------------------
F = gradsum.nn.functional


def _t(a: np.ndarray) -> gradsum.Tensor:
    return gradsum.tensor(a, dtype=gradsum.float64, requires_grad=True)


@pytest.mark.parametrize(("name", "fn", "shapes"), [
    ("batch_norm_train", lambda x, w, b: F.batch_norm(x, None, None, w, b, True), [(4, 3, 2),
                                                                                  (3,), (3,)]),
    ("batch_norm_eval", lambda x, w, b: F.batch_norm(
        x, gradsum.tensor([0.1, -0.2, 0.3], dtype=gradsum.float64),
        gradsum.tensor([0.5, 1.0, 2.0], dtype=gradsum.float64), w, b), [(4, 3, 2), (3,), (3,)]),
    ("batch_norm_4d", lambda x: F.batch_norm(x, None, None, training=True), [(2, 2, 2, 3)]),
    ("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), [(2, 4, 3), (4,), (4,)]),
    ("instance_norm", lambda x, w, b: F.instance_norm(x, weight=w, bias=b), [(2, 3, 4), (3,),
                                                                             (3,)]),
])
def test_functional_gradcheck(name: str, fn: Program, shapes: list[tuple[int, ...]]) -> None:
    inputs = tuple(_t(_arr(*s)) for s in shapes)
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_nested_batch_norm_sees_the_checkpoint_version() -> None:
    """A BatchNorm inside another module reads its own ``_metadata`` version: a version-2
    checkpoint missing num_batches_tracked reports the key missing, as torch's."""
    got = []
    for lib in (torch, gradsum):
        m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        sd = m.state_dict()
        del sd["1.num_batches_tracked"]
        got.append(list(m.load_state_dict(sd, strict=False).missing_keys))
    assert got[0] == got[1] == ["1.num_batches_tracked"]
