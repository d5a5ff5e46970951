"""Side by side with torch: optim.swa_utils (AveragedModel, the averaging functions, update_bn,
SWALR)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import both_or_error  # noqa: E402

# -- swa_utils ---------------------------------------------------------------------------------


def make_net(lib: Any, seed: int = 0) -> Any:
    """Linear -> BatchNorm1d -> Linear with fixed weights."""
    rng = np.random.default_rng(seed)
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for p in net.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)), dtype=p.dtype))
    return net


def perturb(lib: Any, net: Any, t: int) -> None:
    """Move the weights (and the BatchNorm statistics: a training-mode forward)."""
    rng = np.random.default_rng(100 + t)
    with lib.no_grad():
        for p in net.parameters():
            p.add_(lib.tensor(rng.standard_normal(tuple(p.shape)), dtype=p.dtype))
    net.train()
    net(lib.tensor(rng.standard_normal((5, 3)), dtype=lib.float32))


def averaging_kwargs(lib: Any, kind: str) -> dict[str, Any]:
    s = lib.optim.swa_utils
    return {
        "default": {},
        "ema": {"avg_fn": s.get_ema_avg_fn(0.8)},
        "ema_multi": {"multi_avg_fn": s.get_ema_multi_avg_fn(0.7)},
        "swa": {"avg_fn": s.get_swa_avg_fn()},
        "swa_multi": {"multi_avg_fn": s.get_swa_multi_avg_fn()},
        "custom": {"avg_fn": lambda a, c, n: a * 0.5 + c * 0.5 + n},
    }[kind]


def sd_values(sd: dict[str, Any]) -> dict[str, Any]:
    return {k: (str(v.dtype).split(".")[1], np.array(v.tolist())) for k, v in sd.items()}


@pytest.mark.parametrize("use_buffers", [False, True])
@pytest.mark.parametrize("kind", ["default", "ema", "ema_multi", "swa", "swa_multi",
                                  "custom"])
def test_averaged_model_matches_torch(kind: str, use_buffers: bool) -> None:
    def run(lib: Any) -> Any:
        net = make_net(lib)
        avg = lib.optim.swa_utils.AveragedModel(net, use_buffers=use_buffers,
                                                **averaging_kwargs(lib, kind))
        assert avg.module is not net
        out = []
        for t in range(5):
            perturb(lib, net, t)
            avg.update_parameters(net)
            out.append(sd_values(avg.state_dict()))
        avg.eval()
        x = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=lib.float32)
        return out, np.array(avg(x).tolist())

    g, t = both_or_error(run)
    if isinstance(t, type):  # (integer buffers averaged by a list function: torch refuses)
        assert g is t
        return
    (g_sds, g_out), (t_sds, t_out) = g, t
    for i, (a, b) in enumerate(zip(g_sds, t_sds)):
        assert list(a) == list(b)
        for k in b:
            assert a[k][0] == b[k][0], (i, k)
            np.testing.assert_allclose(a[k][1], b[k][1], rtol=1e-6, atol=1e-6,
                                       err_msg=f"{i} {k}")
    np.testing.assert_allclose(g_out, t_out, rtol=1e-5, atol=1e-6)


def test_averaged_model_refuses_both_functions_and_decay_out_of_range() -> None:
    def both(lib: Any) -> Any:
        s = lib.optim.swa_utils
        return s.AveragedModel(lib.nn.Linear(1, 1), avg_fn=s.get_swa_avg_fn(),
                               multi_avg_fn=s.get_swa_multi_avg_fn())

    g, t = both_or_error(both)
    assert g is t is AssertionError
    for fn in ("get_ema_avg_fn", "get_ema_multi_avg_fn"):
        for decay in (-0.1, 1.5):
            def bad(lib: Any, fn: str = fn, decay: float = decay) -> Any:
                return getattr(lib.optim.swa_utils, fn)(decay)

            g, t = both_or_error(bad)
            assert g is t is ValueError
    with pytest.raises(ValueError, match=r"Invalid decay value 2 provided"):
        gradsum.optim.swa_utils.get_ema_avg_fn(2)


def test_averaged_model_keeps_its_copy_and_module_api() -> None:
    net = gradsum.nn.Linear(2, 1)
    avg = gradsum.optim.swa_utils.AveragedModel(net)
    assert list(avg.state_dict()) == ["n_averaged", "module.weight", "module.bias"]
    assert avg.n_averaged.dtype == gradsum.int64 and avg.n_averaged.item() == 0
    with gradsum.no_grad():
        net.weight.fill_(3.0)
    assert avg.module.weight.tolist() != net.weight.tolist()  # (a deep copy)
    avg.update_parameters(net)
    assert avg.module.weight.tolist() == net.weight.tolist()
    assert avg.module.weight is not net.weight


@pytest.mark.parametrize("training", [True, False])
def test_update_bn_matches_torch(training: bool) -> None:
    def run(lib: Any) -> Any:
        net = make_net(lib)
        net[1].momentum = 0.3
        perturb(lib, net, 0)
        net.train(training)
        rng = np.random.default_rng(5)
        loader = [lib.tensor(rng.standard_normal((4, 3)), dtype=lib.float32),
                  (lib.tensor(rng.standard_normal((6, 3)), dtype=lib.float32), "label"),
                  [lib.tensor(rng.standard_normal((3, 3)), dtype=lib.float32)]]
        lib.optim.swa_utils.update_bn(loader, net)
        bn = net[1]
        return (bn.running_mean.tolist(), bn.running_var.tolist(),
                bn.num_batches_tracked.item(), bn.momentum, net.training, bn.training)

    g, t = run(gradsum), run(torch)
    np.testing.assert_allclose(g[0], t[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g[1], t[1], rtol=1e-5, atol=1e-6)
    assert g[2:] == t[2:]


def test_update_bn_without_batchnorm_leaves_the_model_alone() -> None:
    def run(lib: Any) -> Any:
        net = lib.nn.Linear(2, 2)
        net.eval()
        calls = []
        lib.optim.swa_utils.update_bn([lib.ones(1, 2)], net)
        net.register_forward_hook(lambda *a: calls.append(1))
        return net.training, calls

    assert run(gradsum) == run(torch)


SWALR_CONFIGS = [
    {"swa_lr": 0.05},
    {"swa_lr": 0.5, "anneal_epochs": 3, "anneal_strategy": "linear"},
    {"swa_lr": [0.05, 0.2], "anneal_epochs": 0},
    {"swa_lr": 0.01, "anneal_epochs": 1, "anneal_strategy": "cos"},
    {"swa_lr": [0.3, 0.0], "anneal_epochs": 4, "anneal_strategy": "linear", "lr": "LR"},
]


@pytest.mark.parametrize("kw", SWALR_CONFIGS, ids=[str(i) for i in range(len(SWALR_CONFIGS))])
def test_swalr_matches_torch(kw: dict[str, Any]) -> None:
    def run(lib: Any) -> Any:
        kw2 = dict(kw)
        lr = lib.tensor(0.4) if kw2.pop("lr", None) == "LR" else 0.4
        a, b = lib.nn.Parameter(lib.ones(1)), lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.1}], lr=lr)
        sched = lib.optim.swa_utils.SWALR(opt, **kw2)
        lrs = [[float(v) for v in sched.get_last_lr()]]
        for _ in range(7):
            opt.step()
            sched.step()
            lrs.append([float(v) for v in sched.get_last_lr()])
        sd = sched.state_dict()
        keys = sorted(sd)
        # resume: a fresh scheduler loaded from the state dict continues the same way
        opt2 = lib.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.1}], lr=0.4)
        opt2.load_state_dict(opt.state_dict())
        sched2 = lib.optim.swa_utils.SWALR(opt2, swa_lr=1.0, anneal_strategy="linear")
        sched2.load_state_dict(sd)
        more = []
        for s, o in ((sched, opt), (sched2, opt2)):
            o.step()
            s.step()
            more.append([float(v) for v in s.get_last_lr()])
        return lrs, keys, more, [g["swa_lr"] for g in opt.param_groups], sched2.anneal_func(0.5)

    g, t = run(gradsum), run(torch)
    np.testing.assert_allclose(g[0], t[0], rtol=1e-12, atol=1e-15)
    assert g[1] == t[1]
    np.testing.assert_allclose(g[2], t[2], rtol=1e-12, atol=1e-15)
    assert g[3] == t[3] and g[4] == t[4]


SWALR_BAD = [
    {"swa_lr": [0.1, 0.2, 0.3]}, {"swa_lr": 0.1, "anneal_strategy": "step"},
    {"swa_lr": 0.1, "anneal_epochs": -1}, {"swa_lr": 0.1, "anneal_epochs": 2.0},
]


@pytest.mark.parametrize("kw", SWALR_BAD, ids=[str(i) for i in range(len(SWALR_BAD))])
def test_swalr_argument_errors_like_torch(kw: dict[str, Any]) -> None:
    def run(lib: Any) -> tuple[str, str]:
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.1)
        try:
            lib.optim.swa_utils.SWALR(opt, **kw)
        except Exception as e:
            return type(e).__name__, str(e).split(".")[0]
        return "ok", ""

    g, t = run(gradsum), run(torch)
    assert g == t and t[0] == "ValueError"


def test_swalr_get_lr_outside_step_warns() -> None:
    opt = gradsum.optim.SGD([gradsum.nn.Parameter(gradsum.ones(1))], lr=0.1)
    sched = gradsum.optim.swa_utils.SWALR(opt, swa_lr=0.01)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
        sched.step()
