"""Side by side with torch: swap_in_optimizer_params_and_state and its errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402

# -- swap_in_optimizer_params_and_state --------------------------------------------------------


def test_swap_in_optimizer_params_and_state_matches_torch() -> None:
    def run(lib: Any) -> Any:
        w = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        v = lib.nn.Parameter(lib.tensor([[0.5, -0.5]]))
        opt = lib.optim.Adam([{"params": [w]}, {"params": [v], "lr": 0.1}], lr=0.01)
        w.grad, v.grad = lib.ones(2), lib.ones(1, 2)
        opt.step()
        sd = opt.state_dict()
        swap_sd = {"state": {i: {k: t.clone() for k, t in s.items()}
                             for i, s in sd["state"].items()},
                   "param_groups": [dict(g) for g in sd["param_groups"]]}
        swap_sd["param_groups"][0]["lr"] = 1.0
        w2 = lib.nn.Parameter(lib.tensor([3.0, 3.0]))
        v2 = lib.nn.Parameter(lib.tensor([[0.0, 0.0]]))
        w2.grad, v2.grad = lib.tensor([1.0, -1.0]), lib.ones(1, 2)
        params_before = opt.param_groups[0]["params"]
        with lib.optim.swap_in_optimizer_params_and_state(opt, {"w": w2, "v": v2}, swap_sd):
            opt.step()
            inside = (opt.param_groups[0]["lr"], opt.param_groups[0]["params"][0] is w2)
        after = (opt.param_groups[0]["lr"], opt.param_groups[0]["params"] is params_before,
                 float(opt.state[w]["step"]))
        return (inside, after, w.tolist(), w2.tolist(), v2.tolist(),
                swap_sd["state"][0]["exp_avg"].tolist(), float(swap_sd["state"][0]["step"]))

    g, t = run(gradsum), run(torch)
    assert g[:2] == t[:2]
    for a, b in zip(g[2:], t[2:]):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_swap_in_errors_like_torch() -> None:
    def run(lib: Any) -> list[str]:
        w = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
        out = []
        cases = [{"state": {}, "param_groups": []}]
        try:
            with lib.optim.swap_in_optimizer_params_and_state(opt, {"w": w}, cases[0]):
                pass
        except RuntimeError as e:
            out.append(str(e))
        w.grad = lib.ones(2)
        opt.step()
        sd = opt.state_dict()
        bad = [
            [],
            {"state": [], "param_groups": sd["param_groups"]},
            {"state": {0: 1}, "param_groups": sd["param_groups"]},
            {"state": sd["state"], "param_groups": []},
            {"state": sd["state"], "param_groups": [{**sd["param_groups"][0], "x": 1}]},
            {"state": {5: {}}, "param_groups": sd["param_groups"]},
        ]
        for b in bad:
            try:
                with lib.optim.swap_in_optimizer_params_and_state(opt, {"w": w}, b):
                    pass
            except RuntimeError as e:
                out.append(str(e).split(".")[0])
        try:
            with lib.optim.swap_in_optimizer_params_and_state(opt, {}, sd):
                pass
        except RuntimeError as e:
            out.append(str(e).split(".")[0])
        return out

    g, t = run(gradsum), run(torch)
    assert len(g) == len(t) == 8
    assert [s[:60] for s in g] == [s[:60] for s in t]
