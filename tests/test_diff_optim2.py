"""Side-by-side regression tests for gradsum.optim behaviours that differed from torch's (second
sweep): loading state dicts written by older torch versions."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402

# an old-format param group: only the options every torch version had
OLD_GROUPS = {
    "SGD": {"lr": 0.1, "momentum": 0.9, "dampening": 0, "weight_decay": 0},
    "Adam": {"lr": 0.1, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0},
    "AdamW": {"lr": 0.1, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.01,
              "amsgrad": False},
    "RMSprop": {"lr": 0.1, "alpha": 0.99, "eps": 1e-8, "weight_decay": 0},
    "Adagrad": {"lr": 0.1, "lr_decay": 0, "eps": 1e-10, "weight_decay": 0,
                "initial_accumulator_value": 0},
}


def _load_old(lib: Any, name: str, state: dict[int, Any]) -> tuple[Any, Any]:
    w = lib.nn.Parameter(lib.ones(2))
    opt = getattr(lib.optim, name)([w])
    opt.load_state_dict({"state": state, "param_groups": [{**OLD_GROUPS[name], "params": [0]}]})
    return opt, w


@pytest.mark.parametrize("name", sorted(OLD_GROUPS))
def test_loading_an_old_state_dict_fills_the_missing_options(name: str) -> None:
    # gradsum kept the groups as loaded, and its step then failed with KeyError
    out = []
    for lib in (gradsum, torch):
        opt, w = _load_old(lib, name, {})
        w.grad = lib.full((2,), 0.5)
        opt.step()
        group = opt.param_groups[0]
        out.append(({k: v for k, v in group.items() if k != "params"}, w.tolist()))
    (g_group, g_w), (t_group, t_w) = out
    assert g_group == t_group
    np.testing.assert_allclose(g_w, t_w, rtol=1e-6)


@pytest.mark.parametrize("name", ["Adam", "RMSprop", "Adagrad"])
def test_a_number_step_in_a_loaded_state_becomes_a_tensor(name: str) -> None:
    out = []
    for lib in (gradsum, torch):
        state = {"step": 3.0}
        if name == "Adam":
            state.update(exp_avg=lib.zeros(2), exp_avg_sq=lib.zeros(2))
        elif name == "RMSprop":
            state.update(square_avg=lib.zeros(2))
        else:
            state.update(sum=lib.zeros(2))
        opt, w = _load_old(lib, name, {0: state})
        step = opt.state[w]["step"]
        w.grad = lib.ones(2)
        opt.step()
        out.append((isinstance(step, lib.Tensor), str(step.dtype).split(".")[1],
                    float(opt.state[w]["step"]), w.tolist()))
    (*g, g_w), (*t, t_w) = out
    assert g == t
    np.testing.assert_allclose(g_w, t_w, rtol=1e-6)
