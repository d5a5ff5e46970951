"""Every script in examples/ runs (small sizes) and its numbers match the same computation
written in torch (the "torch twin" of each test; skipped when torch is not installed)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import gradsum
from diff_helpers import torch_or_skip
from gradsum._backend import xp

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
NAMES = ["weight_tying", "multiple_losses", "big_batch_split", "multi_task",
         "gradient_penalty", "maml", "per_example_grads", "none_vs_zero"]


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"gradsum_example_{name}",
                                                  EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def T(t: gradsum.Tensor, requires_grad: bool = False) -> Any:
    """A torch copy of a gradsum tensor."""
    torch = torch_or_skip()
    return torch.tensor(t.detach().numpy().copy(), requires_grad=requires_grad)


def close(a: Any, b: Any, rtol: float = 1e-4, atol: float = 1e-5) -> None:
    a = a.detach().numpy() if hasattr(a, "detach") else a
    b = b.detach().numpy() if hasattr(b, "detach") else b
    a, b = xp.asarray(a, dtype=xp.float64), xp.asarray(b, dtype=xp.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert xp.allclose(a, b, rtol=rtol, atol=atol), float(xp.max(xp.abs(a - b)))


def test_every_example_is_listed():
    assert sorted(p.stem for p in EXAMPLES.glob("*.py")) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_example_has_main_small(name, capsys):
    mod = load(name)
    result = mod.main(small=True)
    assert isinstance(result, dict) and result
    assert capsys.readouterr().out.strip()


def test_examples_run_as_scripts():
    """``python examples/X.py`` works at full size (one interpreter for all, to stay fast)."""
    code = ("import runpy, sys\n"
            "for path in sys.argv[1:]:\n"
            "    runpy.run_path(path, run_name='__main__')\n")
    paths = [str(EXAMPLES / f"{n}.py") for n in NAMES]
    proc = subprocess.run([sys.executable, "-c", code, *paths], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "max abs difference" in proc.stdout


# -- 1. weight tying ------------------------------------------------------------------------------
def test_weight_tying_matches_torch():
    torch = torch_or_skip()
    F = torch.nn.functional
    ex = load("weight_tying")
    r = ex.main(small=True)
    assert r["contributions"] == 2
    assert r["paths_vs_tied_max_abs_diff"] < 1e-6
    assert r["ledger_max_abs_error"] < 1e-6

    s = ex.setup(small=True)
    sd = s["model"].state_dict()
    E = T(sd["embed.weight"], True)
    W, b = T(sd["hidden.weight"]), T(sd["hidden.bias"])
    x, y = T(s["inputs"]).long(), T(s["targets"]).long()

    def loss(w_in, w_out):
        logits = F.linear(torch.tanh(F.linear(F.embedding(x, w_in), W, b)), w_out)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))

    total = loss(E, E)
    total.backward()
    close(r["loss"], total.item())
    close(r["grad"], E.grad)
    (g_in,) = torch.autograd.grad(loss(E, E.detach()), E)
    (g_out,) = torch.autograd.grad(loss(E.detach(), E), E)
    close(r["input_path_norm"], g_in.norm().item())
    close(r["output_path_norm"], g_out.norm().item())
    close(E.grad, g_in + g_out)


# -- 2. multiple losses ---------------------------------------------------------------------------
def test_multiple_losses_matches_torch():
    torch = torch_or_skip()
    ex = load("multiple_losses")
    r = ex.main(small=True)
    assert r["max_abs_diff"] < 1e-6
    s = ex.setup(small=True)
    sd = s["model"].state_dict()
    ps = [T(sd[k], True) for k in ("0.weight", "0.bias", "2.weight", "2.bias")]
    x, labels = T(s["x"]), T(s["labels"]).long()

    def losses():
        hidden = torch.tanh(torch.nn.functional.linear(x, ps[0], ps[1]))
        logits = torch.nn.functional.linear(hidden, ps[2], ps[3])
        return torch.nn.functional.cross_entropy(logits, labels), 0.1 * hidden.pow(2).mean()

    loss_a, loss_b = losses()
    loss_a.backward()
    with pytest.raises(RuntimeError) as info:
        loss_b.backward()
    assert r["error_without_retain_graph"].split(". ")[0] == str(info.value).split(". ")[0]
    for p in ps:
        p.grad = None
    loss_a, loss_b = losses()
    (loss_a + loss_b).backward()
    close(r["loss_a"], loss_a.item())
    close(r["loss_b"], loss_b.item())
    for got, p in zip(r["grads"], ps):
        close(got, p.grad)


# -- 3. big batch split ---------------------------------------------------------------------------
def test_big_batch_split_matches_torch():
    torch = torch_or_skip()
    F = torch.nn.functional
    ex = load("big_batch_split")
    r = ex.main(small=True)
    assert r["exact_max_abs_diff"] < 1e-6
    assert r["naive_max_abs_diff"] > 1e-3
    assert len(set(r["counts"])) == len(r["counts"])  # micro-batches count different tokens
    assert "micro-batched gradients differ" in r["naive_error"]
    close(r["accumulated_loss"], r["full_loss"])

    s = ex.setup(small=True)
    sd = s["model"].state_dict()
    ps = [T(sd[k], True) for k in ("embed.weight", "out.weight", "out.bias")]
    x, y, k = T(s["tokens"]).long(), T(s["tags"]).long(), s["n_micro"]

    def loss(xs, ys, reduction="mean"):
        scores = F.linear(torch.tanh(F.embedding(xs, ps[0])), ps[1], ps[2])
        return F.cross_entropy(scores.reshape(-1, scores.shape[-1]), ys.reshape(-1),
                               ignore_index=-100, reduction=reduction)

    full_loss = loss(x, y)
    full = torch.autograd.grad(full_loss, ps)
    close(r["full_loss"], full_loss.item())
    for got, g in zip(r["full_grads"], full):
        close(got, g)
    # torch's naive mean of means is off by the same amount
    naive = [torch.zeros_like(p) for p in ps]
    for xs, ys in zip(torch.tensor_split(x, k), torch.tensor_split(y, k)):
        naive = [a + b for a, b in zip(naive, torch.autograd.grad(loss(xs, ys) / k, ps))]
    torch_naive = max((a - b).abs().max().item() for a, b in zip(naive, full))
    close(r["naive_max_abs_diff"], torch_naive, rtol=1e-3, atol=1e-6)


# -- 4. multi-task --------------------------------------------------------------------------------
def test_multi_task_matches_torch():
    torch = torch_or_skip()
    F = torch.nn.functional
    ex = load("multi_task")
    r = ex.main(small=True)
    assert r["max_abs_diff"] < 1e-6
    c = r["contributions"]
    assert c["trunk.0.weight"] == ["classify", "regress"]
    assert c["classify.weight"] == ["classify"] and c["regress.bias"] == ["regress"]

    s = ex.setup(small=True)
    sd = s["model"].state_dict()
    names = ["trunk.0.weight", "trunk.0.bias", "classify.weight", "classify.bias",
             "regress.weight", "regress.bias"]
    ps = [T(sd[k], True) for k in names]
    opt = torch.optim.SGD(ps, lr=s["lr"])
    feats = torch.relu(F.linear(T(s["x"]), ps[0], ps[1]))
    loss_cls = F.cross_entropy(F.linear(feats, ps[2], ps[3]), T(s["labels"]).long())
    loss_cls.backward(retain_graph=True)
    loss_reg = F.mse_loss(F.linear(feats, ps[4], ps[5]), T(s["values"]))
    loss_reg.backward()
    opt.step()
    close(r["loss_cls"], loss_cls.item())
    close(r["loss_reg"], loss_reg.item())
    for got, p in zip(r["params_after_step"], ps):
        close(got, p)


# -- 5. gradient penalty --------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_gradient_penalty_matches_torch():
    torch = torch_or_skip()
    F = torch.nn.functional
    ex = load("gradient_penalty")
    r = ex.main(small=True)
    assert r["grad_none_after_autograd_grad"] is True
    assert r["grad_graph_free"] is True
    assert r["max_abs_diff"] < 1e-6
    assert r["contaminated_params"] == 4

    s = ex.setup(small=True)
    sd = s["critic"].state_dict()
    ps = [T(sd[k], True) for k in ("0.weight", "0.bias", "2.weight", "2.bias")]

    def critic(x):
        return F.linear(torch.tanh(F.linear(x, ps[0], ps[1])), ps[2], ps[3])

    real, fake, eps = T(s["real"]), T(s["fake"]), T(s["eps"])
    x_hat = (eps * real + (1 - eps) * fake).requires_grad_()
    (g,) = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    assert all(p.grad is None for p in ps)
    penalty = ((g.norm(2, dim=1) - 1) ** 2).mean()
    loss = critic(fake).mean() - critic(real).mean() + s["lam"] * penalty
    loss.backward()
    close(r["loss"], loss.item())
    close(r["penalty"], penalty.item())
    for got, p in zip(r["grads"], ps):
        close(got, p.grad)
    torch.optim.SGD(ps, lr=s["lr"]).step()
    for got, p in zip(r["params_after_step"], ps):
        close(got, p)
    # the contaminated variant, in torch
    for p in ps:
        p.grad = None
    x_hat = (eps * real + (1 - eps) * fake).requires_grad_()
    critic(x_hat).sum().backward(create_graph=True)
    assert sum(p.grad is not None for p in ps) == r["contaminated_params"]
    assert sum(p.grad.requires_grad for p in ps) == r["contaminated_with_graph"]


# -- 6. MAML --------------------------------------------------------------------------------------
def test_maml_matches_torch():
    torch = torch_or_skip()
    F = torch.nn.functional
    ex = load("maml")
    r = ex.main(small=True)
    assert r["strict_warnings"] == []
    assert r["graph_error"].startswith("optimizer step 1: the .grad of 'w1', 'b1', 'w2', 'b2' "
                                       "carries an autograd graph")

    s = ex.setup(small=True)
    ps = [T(p, True) for p in s["params"]]
    opt = torch.optim.Adam(ps, lr=s["meta_lr"])

    def forward(params, x):
        w1, b1, w2, b2 = params
        return F.linear(torch.relu(F.linear(x, w1, b1)), w2, b2)

    losses = []
    for batch in s["batches"]:
        meta = torch.zeros(())
        for xs, ys, xq, yq in batch:
            xs, ys, xq, yq = T(xs), T(ys), T(xq), T(yq)
            grads = torch.autograd.grad(F.mse_loss(forward(ps, xs), ys), ps, create_graph=True)
            fast = [p - s["inner_lr"] * g for p, g in zip(ps, grads)]
            meta = meta + F.mse_loss(forward(fast, xq), yq)
        meta = meta / len(batch)
        meta.backward()
        opt.step()
        opt.zero_grad()
        losses.append(meta.item())
    close(r["meta_losses"], losses)
    for got, p in zip(r["params"], ps):
        close(got, p)


# -- 7. per-example gradients ---------------------------------------------------------------------
def test_per_example_grads_matches_torch():
    torch = torch_or_skip()
    F = torch.nn.functional
    ex = load("per_example_grads")
    r = ex.main(small=True)
    assert r["grad_untouched"] is True
    s = ex.setup(small=True)
    w, b = (torch.tensor(xp.asarray(v, dtype=xp.float32), requires_grad=True)
            for v in r["params"])
    close(w, s["model"].weight)

    def flat(x, y):
        gs = torch.autograd.grad(F.cross_entropy(F.linear(x, w, b), y), [w, b])
        return torch.cat([g.reshape(-1) for g in gs])

    x, y = T(s["x"]), T(s["y"]).long()
    g_test = flat(T(s["x_test"]), T(s["y_test"]).long())
    per = [flat(x[i:i + 1], y[i:i + 1]) for i in range(x.shape[0])]
    close(r["norms"], [g.norm().item() for g in per])
    close(r["influence"], [(g * g_test).sum().item() for g in per], atol=1e-4)
    assert w.grad is None and b.grad is None


# -- 8. None versus zero --------------------------------------------------------------------------
def test_none_vs_zero_matches_torch():
    torch = torch_or_skip()
    ex = load("none_vs_zero")
    r = ex.main(small=True)
    s = ex.setup(small=True)
    makers = {
        "SGD(momentum=0.9)": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
        "AdamW(weight_decay=0.1)": lambda ps: torch.optim.AdamW(ps, lr=0.1, weight_decay=0.1),
    }
    assert set(makers) == set(r)
    for name, make in makers.items():
        a = torch.tensor([s["init"]], requires_grad=True)
        b = torch.tensor([s["init"]], requires_grad=True)
        opt = make([a, b])
        traj = {"a (None)": [a.item()], "b (zero)": [b.item()]}
        for step in range(1, s["steps"] + 1):
            if step == 1:
                (a * s["grad"] + b * s["grad"]).sum().backward()
            else:
                a.grad = None
                b.grad = torch.zeros_like(b)
            opt.step()
            traj["a (None)"].append(a.item())
            traj["b (zero)"].append(b.item())
        close(r[name]["a (None)"], traj["a (None)"], rtol=1e-6, atol=1e-7)
        close(r[name]["b (zero)"], traj["b (zero)"], rtol=1e-6, atol=1e-7)
        assert len(set(r[name]["a (None)"][1:])) == 1      # skipped after step 1
        assert len(set(r[name]["b (zero)"][1:])) == s["steps"]  # kept moving
