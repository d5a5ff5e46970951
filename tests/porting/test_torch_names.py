"""The public torch names real training scripts use (tests/data/torch_names.txt, where the
list's comment says which programs they come from) exist in gradsum with torch's kind: a
module where torch has a module, a class where torch has a class (scripts subclass and
``isinstance``-check them), a callable where torch has a function, and otherwise a value of
the same type (a ``dtype``, a ``bool`` flag such as ``backends.cudnn.benchmark``).

``KNOWN_MISSING`` names what gradsum lacks today, each with the reason; the test fails if a
name is missing that the set does not list, and if a listed name now exists, so the set
stays true (it is the list of torch names still missing that the issue's closing note
reports). ``KNOWN_OTHER_KIND`` does the same for names that exist with another kind.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

NAMES_FILE = Path(__file__).resolve().parents[1] / "data" / "torch_names.txt"

#: torch names gradsum does not have, with the reason (what it would take)
KNOWN_MISSING: dict[str, str] = {
    "torch.fft": "no FFT namespace yet (fft/rfft/irfft with their backward rules)",
    "torch.fft.fft": "no FFT namespace yet",
    "torch.fft.rfft": "no FFT namespace yet",
    "torch.fft.irfft": "no FFT namespace yet",
    "torch.distributions": "no probability distributions (a namespace of its own: sampling, "
                           "log_prob, entropy, rsample, kl registry)",
    "torch.distributions.Normal": "no torch.distributions",
    "torch.distributions.Categorical": "no torch.distributions",
    "torch.distributions.Bernoulli": "no torch.distributions",
    "torch.distributions.MultivariateNormal": "no torch.distributions",
    "torch.distributions.kl_divergence": "no torch.distributions",
    "torch.jit": "no TorchScript (scripting/tracing compile to torch's IR)",
    "torch.jit.script": "no TorchScript",
    "torch.jit.trace": "no TorchScript",
    "torch.hub": "no model hub (downloads torch checkpoints and code from GitHub)",
    "torch.hub.load": "no model hub",
    "torch.multiprocessing": "no torch.multiprocessing (shared-memory tensors across "
                             "processes); DataLoader workers use the standard library",
    "torch.multiprocessing.set_start_method": "no torch.multiprocessing",
    "torch.optim.SparseAdam": "gradsum has no sparse gradients",
    "torch.autograd.forward_ad": "no forward-mode AD (dual tensors)",
    "torch.autograd.profiler": "no autograd profiler",
    "torch.func.grad": "torch.func has functional_call only (no functorch transforms)",
    "torch.func.vmap": "torch.func has functional_call only (no vmap)",
    "torch.func.jacrev": "torch.func has functional_call only",
    "torch.profiler": "no profiler (torch.profiler.profile, record_function, schedules)",
    "torch.profiler.profile": "no profiler",
    "torch.sparse": "no sparse tensors (COO/CSR layouts, sparse ops and gradients)",
    "torch.nn.utils.prune": "no pruning utilities (masks as forward pre-hooks)",
    "torch.set_flush_denormal": "NumPy offers no switch for the CPU's flush-to-zero mode",
    "torch.lu": "deprecated in torch (linalg.lu_factor); not in gradsum",
    "torch.qr": "deprecated in torch (linalg.qr, which gradsum has); the alias is not",
    "torch.stft": "needs complex tensors, which gradsum does not have",
    "torch.hann_window": "window functions are not in gradsum",
    "torch.view_as_complex": "gradsum has no complex dtypes",
    "torch.complex64": "gradsum has no complex dtypes",
    "torch.cfloat": "gradsum has no complex dtypes",
}

#: names gradsum has with another kind than torch's, with the reason
KNOWN_OTHER_KIND: dict[str, str] = {}


def names() -> list[str]:
    out = []
    for line in NAMES_FILE.read_text().splitlines():
        name = line.split("#", 1)[0].strip()
        if name:
            out.append(name)
    return out


def resolve(root: Any, dotted: str) -> Any:
    """``torch.a.b.c`` looked up from ``root`` (torch or gradsum), importing submodules on
    the way as ``import torch.a.b`` does. Raises AttributeError/ImportError if absent."""
    cur = root
    for part in dotted.split(".")[1:]:
        if hasattr(cur, part):
            cur = getattr(cur, part)
        elif inspect.ismodule(cur):
            cur = importlib.import_module(f"{cur.__name__}.{part}")
        else:
            raise AttributeError(f"{dotted}: {type(cur).__name__} has no attribute {part!r}")
    return cur


def kind(value: Any) -> str:
    """module, class, callable, or ``value:<type name>``."""
    if inspect.ismodule(value):
        return "module"
    if inspect.isclass(value):
        return "class"
    if callable(value):
        return "callable"
    return f"value:{type(value).__name__}"


def _gradsum_kind(name: str) -> str | None:
    try:
        return kind(resolve(gradsum, name))
    except (AttributeError, ImportError):
        return None


def test_the_list_is_long_enough_and_each_name_once():
    listed = names()
    assert len(listed) >= 300
    assert len(set(listed)) == len(listed)
    assert all(n.startswith("torch.") for n in listed)


def test_every_listed_name_is_torch_s():
    for name in names():
        resolve(torch, name)  # (a name torch 2.13 lacks would not be one scripts use)
    for name in (*KNOWN_MISSING, *KNOWN_OTHER_KIND):
        assert name in names(), f"{name} is not in {NAMES_FILE.name}"


def test_each_name_exists_in_gradsum_with_torch_s_kind():
    missing, other_kind = {}, {}
    for name in names():
        want, got = kind(resolve(torch, name)), _gradsum_kind(name)
        if got is None:
            missing[name] = want
        elif got != want:
            other_kind[name] = f"torch: {want}, gradsum: {got}"
    unexplained = sorted(set(missing) - set(KNOWN_MISSING))
    assert not unexplained, f"missing in gradsum and not in KNOWN_MISSING: {unexplained}"
    now_there = sorted(set(KNOWN_MISSING) - set(missing))
    assert not now_there, f"in KNOWN_MISSING but gradsum has them now (drop them): {now_there}"
    unexplained = {n: k for n, k in other_kind.items() if n not in KNOWN_OTHER_KIND}
    assert not unexplained, f"another kind than torch's: {unexplained}"
    now_same = sorted(set(KNOWN_OTHER_KIND) - set(other_kind))
    assert not now_same, f"in KNOWN_OTHER_KIND but the kinds agree now (drop them): {now_same}"


@pytest.mark.parametrize("name", ["torch.float32", "torch.int64", "torch.bool",
                                  "torch.float", "torch.long", "torch.int", "torch.double"])
def test_dtype_aliases_name_the_same_dtype(name):
    assert str(resolve(gradsum, name)).split(".")[-1] == str(resolve(torch, name)).split(".")[-1]


# -- names added with this list: cheap aliases of what gradsum already has (affine_grid and
# gumbel_softmax, pdist and grid_sample, compositions, have test files of their own under tests/nn)
_SCATTER_CALLS = {
    "src": lambda m, x, idx, idx2, src: m.scatter(x, 0, idx, src),
    "value": lambda m, x, idx, idx2, src: m.scatter(x, 1, idx2, 5.0),
    "keywords": lambda m, x, idx, idx2, src: m.scatter(x, dim=0, index=idx, src=src),
    "value keyword": lambda m, x, idx, idx2, src: m.scatter(x, 0, idx, value=2.0),
    "bad index dtype": lambda m, x, idx, idx2, src: m.scatter(x, 0, idx.float(), src),
}


@pytest.mark.parametrize("call", sorted(_SCATTER_CALLS))
def test_top_level_scatter_is_tensor_scatter(call):
    def run(m):
        x = m.zeros(2, 3)
        try:
            out = _SCATTER_CALLS[call](m, x, m.tensor([[1, 0, 1]]), m.tensor([[2], [0]]),
                                       m.tensor([[7.0, 8.0, 9.0]]))
        except Exception as e:
            return type(e)
        return np.asarray(out.tolist()), x.tolist()

    g, t = run(gradsum), run(torch)
    if isinstance(t, type):
        assert g is t
    else:
        np.testing.assert_array_equal(g[0], t[0])
        assert g[1] == t[1]


def test_top_level_detach_typename_and_warn_always():
    def run(m):
        x = m.ones(2, requires_grad=True)
        d = m.detach(x * 2)
        names = [m.typename(v) for v in (m.zeros(2), m.zeros(2, dtype=m.int64), 3, "a", len,
                                          object(), [1], m.nn.Linear(1, 1), m.nn.Module)]
        before = m.is_warn_always_enabled()
        m.set_warn_always(True)
        during = m.is_warn_always_enabled()
        m.set_warn_always(False)
        try:
            m.set_warn_always(1)
            bad = None
        except Exception as e:
            bad = (type(e).__name__, str(e).split(".")[0])
        return (d.requires_grad, d.grad_fn, d.tolist(),
                [n.replace("torch.nn.modules.", "gradsum.nn.modules.") for n in names],
                before, during, m.is_warn_always_enabled(), bad)

    assert run(gradsum) == run(torch)
