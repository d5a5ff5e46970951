"""Whole training programs run side by side in torch and gradsum: identical initial weights and
data, then losses, parameters, ``.grad`` (``None`` or values), optimizer state and learning
rates compared after every step. Each program mixes the accumulation patterns real code uses:
micro-batches with ``loss / k``, ``zero_grad(set_to_none=False)``, gradient clipping, a
parameter frozen midway, a parameter whose ``.grad`` is ``None`` on most steps, two param
groups and a checkpoint (``save``/``load`` of model, optimizer and scheduler) mid-run."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)
pytest.importorskip("safetensors", reason="checkpoints need safetensors: pip install -e .[test]")

import gradsum  # noqa: E402

STEPS = 30


def _model(lib: Any, kind: str) -> Any:
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            if kind == "mlp":
                self.body = nn.Sequential(nn.Linear(6, 10), nn.Tanh(), nn.Linear(10, 4))
            elif kind == "cnn":
                self.body = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.ReLU(),
                                          nn.Conv2d(3, 3, 3, stride=2), nn.ReLU(),
                                          nn.Flatten(), nn.Linear(3 * 2 * 2, 4))
            elif kind == "ln":
                self.body = nn.Sequential(nn.Linear(6, 8), nn.LayerNorm(8), nn.GELU(),
                                          nn.Dropout(0.5), nn.Linear(8, 4))
            else:  # a weight-tied language model: the embedding is also the output layer
                self.emb = nn.Embedding(4, 5)
                self.hid = nn.Linear(5, 5)
                self.head = nn.Linear(5, 4)
                self.head.weight = self.emb.weight
            self.aux = nn.Parameter(lib.zeros(4))  # used every third step only

        def forward(self, x: Any, use_aux: bool) -> Any:
            if kind == "lm":
                y = self.head(lib.tanh(self.hid(self.emb(x)))).reshape(-1, 4)
            else:
                y = self.body(x)
            return y + self.aux if use_aux else y

    return Net()


def _data(kind: str, dtype: Any) -> list[tuple[Any, Any]]:
    rng = np.random.default_rng(1)
    if kind == "lm":
        return [(rng.integers(0, 4, (6, 3)), rng.integers(0, 4, (6, 3))) for _ in range(STEPS)]
    shape = (6, 2, 5, 5) if kind == "cnn" else (6, 6)
    return [(rng.standard_normal(shape).astype(dtype), rng.integers(0, 4, (6,)))
            for _ in range(STEPS)]


def _optimizer(lib: Any, name: str, model: Any) -> Any:
    named = list(model.named_parameters())
    groups = [{"params": [p for n, p in named if not n.endswith("bias")]},
              {"params": [p for n, p in named if n.endswith("bias")], "lr": 0.02}]
    make: dict[str, Callable[[], Any]] = {
        "sgd": lambda: lib.optim.SGD(groups, lr=0.05, momentum=0.9, nesterov=True,
                                     weight_decay=1e-2),
        "adamw": lambda: lib.optim.AdamW(groups, lr=0.01, amsgrad=True),
        "rmsprop": lambda: lib.optim.RMSprop(groups, lr=0.01, centered=True, momentum=0.5),
        "adagrad": lambda: lib.optim.Adagrad(groups, lr=0.05, lr_decay=0.01),
        "adam": lambda: lib.optim.Adam(groups, lr=0.01, weight_decay=1e-3),
    }
    return make[name]()


def _scheduler(lib: Any, name: str, opt: Any) -> Any:
    s = lib.optim.lr_scheduler
    make: dict[str, Callable[[], Any]] = {
        "seq": lambda: s.SequentialLR(opt, [s.LinearLR(opt, 0.2, total_iters=4),
                                            s.CosineAnnealingLR(opt, T_max=8, eta_min=1e-3),
                                            s.ExponentialLR(opt, 0.9)], milestones=[4, 20]),
        "multistep": lambda: s.MultiStepLR(opt, [5, 12, 12], gamma=0.5),
        "step": lambda: s.StepLR(opt, 7, gamma=0.5),
        "lambda": lambda: s.LambdaLR(opt, [_decay, _decay]),
    }
    return make[name]()


def _decay(epoch: int) -> float:
    return 0.95 ** epoch


class _Program:
    """One training run of ``lib``: model, optimizer and scheduler built from ``cfg``."""

    def __init__(self, lib: Any, cfg: dict[str, Any], init: dict[str, np.ndarray]) -> None:
        self.lib, self.cfg = lib, cfg
        self.model = _model(lib, cfg["model"]).to(getattr(lib, cfg["dtype"]))
        self.model.load_state_dict({k: lib.tensor(v) for k, v in init.items()})
        self.model.eval()  # Dropout is the identity, so both libraries compute the same thing
        self.opt = _optimizer(lib, cfg["opt"], self.model)
        self.sched = _scheduler(lib, cfg["sched"], self.opt)

    def _first(self) -> Any:
        return next(iter(self.model.parameters()))

    def step(self, i: int, x: np.ndarray, y: np.ndarray) -> float:
        lib, cfg, k = self.lib, self.cfg, self.cfg["accum"]
        if i == cfg["freeze_at"]:
            self._first().requires_grad_(False)
        total = 0.0
        for xm, ym in zip(np.array_split(x, k), np.array_split(y, k)):
            out = self.model(lib.tensor(xm), i % 3 == 0)
            loss = lib.nn.functional.cross_entropy(out, lib.tensor(ym.reshape(-1))) / k
            loss.backward()
            total += loss.item()
        if cfg["clip"] == "norm":
            lib.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=0.3)
        elif cfg["clip"] == "value":
            lib.nn.utils.clip_grad_value_(self.model.parameters(), 0.05)
        self.opt.step()
        self.sched.step()
        self.opt.zero_grad(set_to_none=cfg["set_to_none"])
        return total

    def resume(self, path: str, init: dict[str, np.ndarray]) -> _Program:
        """Checkpoint everything, then continue in freshly built objects loaded from it."""
        lib = self.lib
        lib.save({"model": self.model.state_dict(), "opt": self.opt.state_dict(),
                  "sched": self.sched.state_dict()}, path)
        ckpt = lib.load(path)
        new = _Program(lib, self.cfg, init)
        new.model.load_state_dict(ckpt["model"])
        new._first().requires_grad_(self._first().requires_grad)
        new.opt.load_state_dict(ckpt["opt"])
        new.sched.load_state_dict(ckpt["sched"])
        return new

    def snapshot(self) -> dict[Any, Any]:
        snap: dict[Any, Any] = {"lr": [g["lr"] for g in self.opt.param_groups],
                                "last_lr": self.sched.get_last_lr()}
        for n, p in self.model.named_parameters():
            snap[n] = p.detach().numpy().copy()
            snap["grad", n] = None if p.grad is None else p.grad.numpy().copy()
        for idx, state in self.opt.state_dict()["state"].items():
            for key, v in state.items():
                snap[idx, key] = (str(v.dtype).split(".")[-1], v.numpy().copy())
        return snap


def _assert_close(a: Any, b: Any, rtol: float, where: str) -> None:
    if isinstance(b, tuple):  # (dtype, values) of optimizer state
        assert a[0] == b[0], f"{where}: dtype {a[0]} vs torch's {b[0]}"
        a, b = a[1], b[1]
    if b is None or a is None:
        assert a is None and b is None, f"{where}: {a} vs torch's {b}"
        return
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape, f"{where}: shape {a.shape} vs torch's {b.shape}"
    scale = max(float(np.abs(b).max(initial=0.0)), 1e-3)
    err = float(np.abs(a - b).max(initial=0.0)) / scale
    assert err <= rtol, f"{where}: relative error {err:.2e} > {rtol:.0e}"


CASES = [
    dict(model="mlp", dtype="float64", opt="sgd", sched="seq", accum=3, clip="norm",
         set_to_none=False, freeze_at=10, save_at=15),
    dict(model="lm", dtype="float64", opt="adamw", sched="multistep", accum=2, clip="value",
         set_to_none=True, freeze_at=20, save_at=12),
    dict(model="cnn", dtype="float64", opt="rmsprop", sched="lambda", accum=2, clip="norm",
         set_to_none=True, freeze_at=8, save_at=17),
    dict(model="ln", dtype="float64", opt="adagrad", sched="step", accum=1, clip=None,
         set_to_none=False, freeze_at=12, save_at=14),
    dict(model="ln", dtype="float32", opt="adam", sched="seq", accum=2, clip="norm",
         set_to_none=False, freeze_at=18, save_at=9),
    dict(model="mlp", dtype="float32", opt="adamw", sched="lambda", accum=4, clip="value",
         set_to_none=True, freeze_at=6, save_at=21),
]


@pytest.mark.parametrize("cfg", CASES, ids=lambda c: f"{c['model']}-{c['opt']}-{c['dtype']}")
def test_training_trajectory_matches_torch(cfg: dict[str, Any], tmp_path: Any) -> None:
    """30 steps of the same program agree with torch step by step, across a checkpoint."""
    rtol = 1e-10 if cfg["dtype"] == "float64" else 1e-4
    torch.manual_seed(0)
    init = {k: v.detach().numpy().copy() for k, v in
            _model(torch, cfg["model"]).to(getattr(torch, cfg["dtype"])).state_dict().items()}
    data = _data(cfg["model"], getattr(np, cfg["dtype"]))
    runs = {lib: _Program(lib, cfg, init) for lib in (torch, gradsum)}
    for i, (x, y) in enumerate(data):
        if i == cfg["save_at"]:
            runs = {lib: r.resume(os.path.join(tmp_path, f"{lib.__name__}.ckpt"), init)
                    for lib, r in runs.items()}
        losses = {lib: r.step(i, x, y) for lib, r in runs.items()}
        _assert_close(losses[gradsum], losses[torch], rtol, f"step {i}: loss")
        want, got = runs[torch].snapshot(), runs[gradsum].snapshot()
        assert sorted(map(str, got)) == sorted(map(str, want)), f"step {i}: keys differ"
        for key, value in want.items():
            _assert_close(got[key], value, rtol, f"step {i}: {key}")
