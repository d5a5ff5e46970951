"""A seeded random-PROGRAM differential fuzzer: small autograd programs run side by side in
torch and in gradsum, to find the bugs that live between features (views + in-place ops,
hooks + retain_grad + in-place, no_grad + saved tensors, double backward through it all).

A program is plain data (a list of step dicts, then an ``end`` dict), generated from a seed by
running its forward steps in torch to learn shapes (and which steps raise). :func:`run` then
executes one program against a library module (``torch`` or ``gradsum``) from scratch and
returns an :class:`Obs` of everything observable: the outcome (ok / exception type) of every
step, every live tensor's value, ``requires_grad`` and ``is_leaf``, the loss, each backward's
outcome, every leaf's and retained intermediate's ``.grad``, what each hook saw and what
``autograd.grad`` returned. The two observations must match (values to rtol 1e-10).

Coverage of the generator (weights in :data:`_KINDS`):
- leaves: 1-3 float64 tensors of random shapes (0-d to 3-d, sizes 1-4), requires_grad mixes;
- elementwise: add/sub/mul/div/pow/maximum/where (with broadcasting, with another live tensor,
  a constant or a number) and exp/tanh/sigmoid/relu/abs/clamp/neg;
- reductions: sum/mean/amax/norm/logsumexp, with dim (int or tuple) and keepdim;
- matmul (vector, matrix and batched operands, on either side);
- views: basic indexing (steps, negative indices, ints, None), select, transpose, permute,
  reshape, view, expand, unsqueeze, squeeze, narrow, T, chunk/split/unbind, detach;
- in-place ops on non-leaves and on views of them: add_/sub_/mul_/div_/clamp_/relu_/tanh_/
  sigmoid_/exp_/zero_/fill_/copy_/masked_fill_/index_add_ (when gradsum has it),
  ``__setitem__`` with slices, ints, masks and index tensors, unsqueeze_/transpose_;
  in-place on leaves (raises) and on leaves under no_grad;
- detach_(), clone, retain_grad, register_hook (scaling the gradient), no_grad around steps;
- the end: a weighted scalar loss of 1-3 live tensors, then one of: backward; backward twice
  (with retain_graph, or without: the second raises); backward(inputs=[...]);
  autograd.grad (with create_graph, then a backward through the gradients; or plain, then a
  backward that must see untouched .grad).

Minimised regression tests for what the fuzzer found are at the bottom of this file.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import outcome as _outcome  # noqa: E402

RTOL = 1e-10
ATOL = 1e-10

# phrases of torch's autograd errors that gradsum's message must contain too when torch's does
_PHRASES = (
    "modified by an inplace operation",
    "a leaf Variable that requires grad",
    "is a view and is being modified inplace",
    "Trying to backward through the graph a second time",
    "does not require grad",
)


# --------------------------------------------------------------------------- the interpreter
class Ctx:
    """One run of a program against module ``m``: live tensors and what hooks saw."""

    def __init__(self, m: Any) -> None:
        self.m = m
        self.env: list[Any] = []
        self.retained: list[int] = []
        self.hook_log: list[tuple[int, Any]] = []

    def t(self, spec: Any) -> Any:
        """An operand: ("slot", i), ("const", array), ("num", x) or ("bool", array)."""
        kind, v = spec
        if kind == "slot":
            return self.env[v]
        if kind == "num":
            return v
        return self.m.tensor(v)


def _np(t: Any) -> np.ndarray:
    return np.array(t.detach().tolist(), dtype=float)


def _key(m: Any, key: tuple[Any, ...]) -> tuple[Any, ...]:
    out = []
    for k in key:
        if isinstance(k, np.ndarray):
            out.append(m.tensor(k))
        else:
            out.append(k)
    return tuple(out)


def _apply(c: Ctx, st: dict[str, Any]) -> Any:
    """Execute one step; returns the new tensor (appended to env) or None."""
    m = c.m
    op = st["op"]
    x = c.env[st["x"]] if "x" in st else None
    a = st.get("a", ())
    if op == "unary":
        fn = st["fn"]
        if fn == "clamp":
            return x.clamp(*a)
        if fn == "pow":
            return x.pow(*a)
        return getattr(x, fn)()
    if op == "binary":
        fn, y = st["fn"], c.t(st["y"])
        if st.get("safe"):  # an operand kept away from 0 (div) or made positive (pow base)
            if fn == "div":
                y = abs(y) + 0.5
            else:
                x = x.abs() + 0.5
        if fn == "where":
            return m.where(x > 0, x, y)
        if fn == "maximum":
            return m.maximum(x, y)
        if fn == "add" and st.get("alpha") is not None:
            return m.add(x, y, alpha=st["alpha"])
        if fn == "rsub":
            return y - x
        return getattr(m, fn)(x, y)
    if op == "reduce":
        fn = st["fn"]
        if fn == "norm":
            return x.norm(dim=st.get("dim"), keepdim=st.get("keepdim", False))
        if "dim" not in st:
            return getattr(x, fn)()
        return getattr(x, fn)(st["dim"], keepdim=st["keepdim"])
    if op == "matmul":
        y = c.t(st["y"])
        return y @ x if st.get("left") else x @ y
    if op == "view":
        fn = st["fn"]
        if fn == "getitem":
            return x[_key(m, st["key"])]
        if fn == "T":
            return x.T
        if fn in ("chunk", "split", "unbind"):
            return getattr(x, fn)(*a)[st["i"]]
        if fn in ("reshape", "view"):
            return getattr(x, fn)(a)
        return getattr(x, fn)(*a)
    if op == "inplace":
        fn = st["fn"]
        if fn == "setitem":
            x[_key(m, st["key"])] = c.t(st["y"])
            return None
        if fn == "masked_fill_":
            x.masked_fill_(m.tensor(st["mask"]), c.t(st["y"]))
            return None
        if fn == "index_add_":
            x.index_add_(st["dim"], m.tensor(st["index"]), c.t(st["y"]))
            return None
        if fn in ("add_", "sub_") and st.get("alpha") is not None:
            getattr(x, fn)(c.t(st["y"]), alpha=st["alpha"])
            return None
        if "y" in st:
            getattr(x, fn)(c.t(st["y"]))
            return None
        getattr(x, fn)(*a)
        return None
    if op == "clone":
        return x.clone()
    if op == "detach":
        return x.detach()
    if op == "detach_":
        x.detach_()
        return None
    if op == "retain_grad":
        x.retain_grad()
        if st["x"] not in c.retained:
            c.retained.append(st["x"])
        return None
    if op == "hook":
        slot, scale = st["x"], st["scale"]

        def hook(g: Any, slot: int = slot, scale: float = scale) -> Any:
            c.hook_log.append((slot, _np(g)))
            return g * scale

        x.register_hook(hook)
        return None
    raise AssertionError(op)


def _step(c: Ctx, st: dict[str, Any]) -> tuple[str, Any]:
    """Run a step (under no_grad when asked); the outcome and the exception, if any."""
    cm = c.m.no_grad() if st.get("nograd") else contextlib.nullcontext()
    try:
        with cm:
            out = _apply(c, st)
    except Exception as e:
        c.env.append(None)
        return type(e).__name__, e
    c.env.append(out)
    return "ok", None


class Obs:
    """What a run observed: a list of (label, value) with arrays compared approximately."""

    def __init__(self) -> None:
        self.items: list[tuple[str, Any]] = []
        self.errors: list[tuple[str, BaseException]] = []

    def add(self, label: str, value: Any) -> None:
        self.items.append((label, value))


def _tensor_summary(t: Any) -> Any:
    if t is None:
        return None
    try:
        meta: Any = (bool(t.requires_grad), bool(t.is_leaf))
    except Exception as e:  # (torch: a no_grad view whose base changed in grad mode)
        meta = type(e).__name__
    return ("T", tuple(t.shape), _np(t), meta)


def _grad_summary(t: Any) -> Any:
    g = t.grad
    return None if g is None else ("G", tuple(g.shape), _np(g))


def _grads(c: Ctx, n_leaves: int) -> list[Any]:
    out = [("leaf", i, _grad_summary(c.env[i])) for i in range(n_leaves)]
    for i in c.retained:
        if c.env[i] is not None:
            out.append(("retained", i, _grad_summary(c.env[i])))
    return out


def run(m: Any, prog: dict[str, Any]) -> Obs:
    """Execute ``prog`` against module ``m`` (torch or gradsum) and observe everything."""
    c = Ctx(m)
    obs = Obs()
    for arr, rg in prog["leaves"]:
        c.env.append(m.tensor(arr, requires_grad=rg))
    for i, st in enumerate(prog["steps"]):
        res, err = _step(c, st)
        obs.add(f"step {i} ({st['op']} {st.get('fn', '')})", res)
        if err is not None:
            obs.errors.append((f"step {i}", err))
    for i, t in enumerate(c.env):
        obs.add(f"value of slot {i}", _tensor_summary(t))
    _end(c, prog, obs)
    obs.add("hooks", sorted(((s, tuple(g.shape), g) for s, g in c.hook_log),
                            key=lambda x: x[0]))
    return obs


def _loss(c: Ctx, end: dict[str, Any]) -> Any:
    loss = None
    for i, w in zip(end["slots"], end["weights"]):
        term = (c.env[i] * c.m.tensor(w)).sum()
        loss = term if loss is None else loss + term
    return loss


def _call(c: Ctx, obs: Obs, label: str, fn: Callable[[], Any], n_leaves: int) -> Any:
    before = _grads(c, n_leaves)
    try:
        res = fn()
    except Exception as e:
        obs.add(label, type(e).__name__)
        obs.errors.append((label, e))
        obs.add(f"{label}: grads after the error", _grads(c, n_leaves))
        obs.add(f"{label}: grads unchanged by the error",
                _same_obs(before, _grads(c, n_leaves)) is None)
        return None
    obs.add(label, "ok")
    return res if res is not None else True


def _end(c: Ctx, prog: dict[str, Any], obs: Obs) -> None:
    end = prog["end"]
    n = len(prog["leaves"])
    m = c.m
    try:
        loss = _loss(c, end)
    except Exception as e:
        obs.add("loss", type(e).__name__)
        return
    obs.add("loss", _tensor_summary(loss))
    mode = end["mode"]
    ins = [c.env[i] for i in end.get("inputs", ())]
    if mode == "backward":
        _call(c, obs, "backward", lambda: loss.backward(), n)
    elif mode == "twice":
        _call(c, obs, "backward 1", lambda: loss.backward(retain_graph=end["retain"]), n)
        obs.add("grads between", _grads(c, n))
        _call(c, obs, "backward 2", lambda: loss.backward(), n)
    elif mode == "inputs":
        _call(c, obs, "backward(inputs)", lambda: loss.backward(inputs=ins), n)
    elif mode in ("grad", "grad_create"):
        cg = mode == "grad_create"
        gs = _call(c, obs, "autograd.grad", lambda: m.autograd.grad(
            loss, ins, create_graph=cg, retain_graph=True, allow_unused=True), n)
        if gs is not None:
            obs.add("autograd.grad result", [_tensor_summary(g) for g in gs])
            obs.add("grads after autograd.grad", _grads(c, n))
            if cg:
                total = loss
                for g, w in zip(gs, end["gweights"]):
                    if g is not None and g.requires_grad:
                        total = total + (g * g * m.tensor(w)).sum()
                obs.add("penalised loss", _tensor_summary(total))
                _call(c, obs, "backward through the grads", lambda: total.backward(), n)
            else:
                _call(c, obs, "backward after grad", lambda: loss.backward(), n)
    obs.add("grads", _grads(c, n))


# --------------------------------------------------------------------------- comparison
def _same_obs(a: Any, b: Any, path: str = "") -> str | None:
    """None when ``a`` and ``b`` match (arrays to RTOL/ATOL, nan where nan); else where not."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return f"{path}: {a!r} vs {b!r}"
        if a.shape != b.shape:
            return f"{path}: shape {a.shape} vs {b.shape}"
        if not np.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True):
            return f"{path}: values\n{a}\nvs\n{b}"
        return None
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return f"{path}: length {len(a)} vs {len(b)}: {a!r} vs {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            r = _same_obs(x, y, f"{path}[{i}]")
            if r is not None:
                return r
        return None
    if a != b:
        return f"{path}: {a!r} vs {b!r}"
    return None


def compare(prog: dict[str, Any]) -> str | None:
    """Run ``prog`` in both libraries; None when they agree, else a description."""
    want, got = run(torch, prog), run(gradsum, prog)
    for (lw, vw), (lg, vg) in zip(want.items, got.items):
        if lw != lg:
            return f"different observations: {lw!r} vs {lg!r}"
        r = _same_obs(vw, vg, lw)
        if r is not None:
            return f"{r}\n(torch errors: {want.errors}; gradsum errors: {got.errors})"
    if len(want.items) != len(got.items):
        return f"observation count {len(want.items)} vs {len(got.items)}"
    for (lw, ew), (_, eg) in zip(want.errors, got.errors):
        for p in _PHRASES:
            if p in str(ew) and p not in str(eg):
                return f"{lw}: torch says {p!r}: {ew}\ngradsum: {eg}"
    return None


# --------------------------------------------------------------------------- the generator
def _bshape(rng: np.random.Generator, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A random shape that broadcasts against ``shape`` to ``shape`` (or wider)."""
    r = rng.random()
    if r < 0.2 or not shape:
        return () if rng.random() < 0.5 or not shape else tuple(shape)
    out = list(shape[rng.integers(0, len(shape)):])
    for i in range(len(out)):
        if rng.random() < 0.3:
            out[i] = 1
    if rng.random() < 0.1 and len(shape) < 3:
        out = [int(rng.integers(1, 3)), *out]
    return tuple(out)


def _arr(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return np.round(rng.normal(size=shape), 3).astype(np.float64)


def _broadcasts(a: tuple[int, ...], b: tuple[int, ...], into_a: bool = False) -> bool:
    try:
        s = np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return not into_a or tuple(s) == tuple(a)


class Gen:
    """Builds a program step by step, running each forward step in torch to learn shapes."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.c = Ctx(torch)
        self.steps: list[dict[str, Any]] = []
        self.leaves: list[tuple[np.ndarray, bool]] = []
        self.views: set[int] = set()

    # -- helpers
    def live(self, pred: Callable[[Any], bool] = lambda t: True) -> list[int]:
        return [i for i, t in enumerate(self.c.env) if t is not None and pred(t)]

    def pick(self, pred: Callable[[Any], bool] = lambda t: True, recent: bool = True
             ) -> int | None:
        ids = self.live(pred)
        if not ids:
            return None
        if recent and self.rng.random() < 0.6:
            ids = ids[-3:]
        return int(self.rng.choice(ids))

    def operand(self, shape: tuple[int, ...], into: bool = False) -> tuple[str, Any]:
        """Another operand broadcasting with ``shape`` (into it when ``into``)."""
        rng = self.rng
        r = rng.random()
        if r < 0.45:
            ids = self.live(lambda t: _broadcasts(shape, tuple(t.shape), into))
            if ids:
                return ("slot", int(rng.choice(ids)))
        if r < 0.6:
            return ("num", float(np.round(rng.normal(), 2)))
        s = _bshape(rng, shape)
        if into and not _broadcasts(shape, s, True):
            s = ()
        return ("const", _arr(rng, s))

    def dim(self, nd: int) -> int:
        return int(self.rng.integers(-nd, nd))

    # -- steps
    def step(self) -> dict[str, Any] | None:
        rng = self.rng
        kinds, weights = zip(*_KINDS)
        kind = str(rng.choice(kinds, p=np.array(weights) / sum(weights)))
        st = getattr(self, "g_" + kind)()
        if st is None:
            return None
        if rng.random() < 0.12 and st["op"] not in ("hook", "retain_grad"):
            st["nograd"] = True
        return st

    def g_unary(self) -> dict[str, Any] | None:
        x = self.pick()
        if x is None:
            return None
        fn = str(self.rng.choice(["exp", "tanh", "sigmoid", "relu", "abs", "clamp", "pow",
                                  "neg"]))
        st: dict[str, Any] = {"op": "unary", "fn": fn, "x": x}
        if fn == "clamp":
            lo = float(np.round(self.rng.uniform(-1, 0), 2))
            st["a"] = [(lo, None), (None, -lo), (lo, lo + 1.0)][self.rng.integers(3)]
        elif fn == "pow":
            st["a"] = (int(self.rng.choice([2, 3])),)
        elif fn == "exp" and float(self.c.env[x].detach().abs().max()) > 5 if (
                self.c.env[x].numel()) else False:
            st["fn"] = "tanh"
        return st

    def g_binary(self) -> dict[str, Any] | None:
        x = self.pick()
        if x is None:
            return None
        shape = tuple(self.c.env[x].shape)
        fn = str(self.rng.choice(["add", "sub", "mul", "div", "pow", "maximum", "where",
                                  "rsub"]))
        st: dict[str, Any] = {"op": "binary", "fn": fn, "x": x, "y": self.operand(shape)}
        if fn == "add" and self.rng.random() < 0.3:
            st["alpha"] = 2.0
        if fn == "pow":
            if st["y"][0] == "num":
                st["y"] = ("num", float(self.rng.choice([2.0, 0.5, -1.0, 3.0])))
            st["safe"] = True
        if fn == "div":
            y = self.c.t(st["y"])
            yv = np.abs(np.asarray(y.detach() if hasattr(y, "detach") else y, dtype=float))
            if yv.size == 0 or yv.min() < 0.25:
                st["safe"] = True
        return st

    def g_reduce(self) -> dict[str, Any] | None:
        x = self.pick()
        if x is None:
            return None
        t = self.c.env[x]
        nd = t.dim()
        fn = str(self.rng.choice(["sum", "mean", "amax", "norm", "logsumexp"]))
        st: dict[str, Any] = {"op": "reduce", "fn": fn, "x": x}
        if nd == 0 or (self.rng.random() < 0.3 and fn in ("sum", "mean", "norm")):
            if fn in ("sum", "mean", "norm"):
                return st
            st["dim"], st["keepdim"] = (0 if nd == 0 else -1), bool(self.rng.random() < 0.5)
            return st
        if fn in ("sum", "mean", "amax", "norm") and nd >= 2 and self.rng.random() < 0.4:
            dims = self.rng.choice(nd, size=2, replace=False)
            st["dim"] = tuple(int(d) - (nd if self.rng.random() < 0.5 else 0) for d in dims)
        else:
            st["dim"] = self.dim(nd)
        st["keepdim"] = bool(self.rng.random() < 0.5)
        return st

    def g_matmul(self) -> dict[str, Any] | None:
        x = self.pick(lambda t: 1 <= t.dim() <= 3)
        if x is None:
            return None
        shape = tuple(self.c.env[x].shape)
        left = bool(self.rng.random() < 0.3)
        k = int(self.rng.integers(1, 4))
        if left:
            need = shape[-2] if len(shape) >= 2 else shape[0]
            yshape: tuple[int, ...] = (k, need) if self.rng.random() < 0.7 else (need,)
            ids = self.live(lambda t: tuple(t.shape)[-1:] == (need,) and t.dim() <= 2)
        else:
            need = shape[-1]
            yshape = (need, k) if self.rng.random() < 0.7 else (need,)
            ids = self.live(lambda t: t.dim() in (1, 2) and t.shape[0] == need)
        y: tuple[str, Any]
        if ids and self.rng.random() < 0.5:
            y = ("slot", int(self.rng.choice(ids)))
        else:
            y = ("const", _arr(self.rng, yshape))
        return {"op": "matmul", "x": x, "y": y, "left": left}

    def g_view(self) -> dict[str, Any] | None:
        x = self.pick()
        if x is None:
            return None
        rng = self.rng
        t = self.c.env[x]
        shape = tuple(t.shape)
        nd = len(shape)
        opts = ["unsqueeze", "reshape", "detach"]
        if nd:
            opts += ["getitem", "getitem", "getitem", "select", "narrow", "transpose",
                     "permute", "view", "squeeze", "chunk", "split", "unbind", "expand"]
        if nd == 2:
            opts.append("T")
        fn = str(rng.choice(opts))
        st: dict[str, Any] = {"op": "view", "fn": fn, "x": x}
        if fn == "getitem":
            key: list[Any] = []
            for s in shape:
                r = rng.random()
                if r < 0.35:
                    key.append(slice(None))
                elif r < 0.55 and s > 0:
                    key.append(int(rng.integers(-s, s)))
                elif r < 0.62:
                    key.append(None)
                    key.append(slice(None))
                else:
                    start = int(rng.integers(-s, s)) if rng.random() < 0.7 else None
                    stop = int(rng.integers(-s, s + 1)) if rng.random() < 0.5 else None
                    key.append(slice(start, stop, int(rng.choice([1, 1, 2, 3]))))
            if rng.random() < 0.3:
                key = key[: rng.integers(1, len(key) + 1)]
            if rng.random() < 0.15:
                key = [Ellipsis, *key[1:]]
            st["key"] = tuple(key)
        elif fn == "select":
            d = self.dim(nd)
            st["a"] = (d, int(rng.integers(-shape[d], shape[d])))
        elif fn == "narrow":
            d = self.dim(nd)
            start = int(rng.integers(0, shape[d]))
            st["a"] = (d, start, int(rng.integers(0, shape[d] - start + 1)))
        elif fn == "transpose":
            st["a"] = (self.dim(nd), self.dim(nd))
        elif fn == "permute":
            st["a"] = tuple(int(v) for v in rng.permutation(nd))
        elif fn in ("reshape", "view"):
            n = int(np.prod(shape))
            cands = [(n,), (-1,), (1, n), (n, 1), (-1, 1)]
            for a_ in range(2, n + 1):
                if n % a_ == 0:
                    cands += [(a_, n // a_), (a_, -1), (1, a_, n // a_)]
            if n == 1:
                cands.append(())
            st["a"] = cands[rng.integers(len(cands))]
        elif fn == "unsqueeze":
            st["a"] = (int(rng.integers(-nd - 1, nd + 1)),)
        elif fn == "squeeze":
            st["a"] = () if rng.random() < 0.4 else (self.dim(nd),)
        elif fn in ("chunk", "split", "unbind"):
            d = self.dim(nd)
            if fn == "unbind":
                st["a"] = (d,)
                n_out = shape[d]
            else:
                k = int(rng.integers(1, 3))
                st["a"] = (k, d)
                n_out = (math.ceil(shape[d] / math.ceil(shape[d] / k)) if fn == "chunk"
                         else math.ceil(shape[d] / k)) if shape[d] else 1
            if n_out == 0:
                return None
            st["i"] = int(rng.integers(0, n_out))
        elif fn == "expand":
            new = [int(rng.integers(2, 4)) if s == 1 and rng.random() < 0.7 else
                   (-1 if rng.random() < 0.3 else s) for s in shape]
            if rng.random() < 0.3:
                new = [int(rng.integers(1, 3)), *new]
            st["a"] = tuple(new)
        return st

    def g_inplace(self) -> dict[str, Any] | None:
        rng = self.rng
        r = rng.random()
        if r < 0.5 and self.views:
            x = self.pick(lambda t: True, recent=False)
            vs = [v for v in self.views if self.c.env[v] is not None]
            if vs:
                x = int(rng.choice(vs))
        else:
            x = self.pick()
        if x is None:
            return None
        t = self.c.env[x]
        shape = tuple(t.shape)
        nd = len(shape)
        opts = ["add_", "sub_", "mul_", "div_", "clamp_", "relu_", "tanh_", "sigmoid_",
                "exp_", "zero_", "fill_", "copy_", "setitem", "setitem", "masked_fill_",
                "unsqueeze_"]
        if nd >= 2:
            opts.append("transpose_")
        if nd and hasattr(gradsum.Tensor, "index_add_"):
            opts.append("index_add_")
        fn = str(rng.choice(opts))
        st: dict[str, Any] = {"op": "inplace", "fn": fn, "x": x}
        if fn in ("add_", "sub_", "mul_", "copy_"):
            st["y"] = self.operand(shape, into=True)
            if st["y"][0] == "num" and fn == "copy_":
                st["y"] = ("const", _arr(rng, ()))
            if fn in ("add_", "sub_") and rng.random() < 0.3:
                st["alpha"] = -1.5
        elif fn == "div_":
            st["y"] = ("num", float(rng.choice([2.0, -0.5, 4.0])))
        elif fn == "clamp_":
            st["a"] = (-0.5, 0.5) if rng.random() < 0.5 else (0.0,)
        elif fn == "fill_":
            ids = self.live(lambda t: t.dim() == 0)
            st["y"] = (("slot", int(rng.choice(ids))) if ids and rng.random() < 0.5
                       else ("num", float(np.round(rng.normal(), 2))))
        elif fn == "masked_fill_":
            st["mask"] = rng.random(_bshape(rng, shape)) < 0.5
            if not _broadcasts(shape, st["mask"].shape, True):
                st["mask"] = rng.random(shape) < 0.5
            ids = self.live(lambda t: t.dim() == 0)
            st["y"] = (("slot", int(rng.choice(ids))) if ids and rng.random() < 0.5
                       else ("num", 0.5))
        elif fn == "unsqueeze_":
            st["a"] = (int(rng.integers(-nd - 1, nd + 1)),)
        elif fn == "transpose_":
            st["a"] = (self.dim(nd), self.dim(nd))
        elif fn == "index_add_":
            d = self.dim(nd)
            k = int(rng.integers(1, shape[d] + 2))
            st["dim"] = d
            st["index"] = rng.integers(0, max(shape[d], 1), size=k).astype(np.int64)
            vshape = list(shape)
            vshape[d] = k
            ids = self.live(lambda t: tuple(t.shape) == tuple(vshape))
            st["y"] = (("slot", int(rng.choice(ids))) if ids and rng.random() < 0.5
                       else ("const", _arr(rng, tuple(vshape))))
        elif fn == "setitem":
            self._setitem(st, shape)
        return st

    def _setitem(self, st: dict[str, Any], shape: tuple[int, ...]) -> None:
        rng = self.rng
        nd = len(shape)
        r = rng.random()
        if nd and r < 0.2:
            st["key"] = (rng.random(shape) < 0.5,)  # a mask
            region: tuple[int, ...] = (int(st["key"][0].sum()),)
        elif nd and r < 0.4 and shape[0]:
            k = int(rng.integers(1, shape[0] + 1))
            idx = rng.permutation(shape[0])[:k].astype(np.int64)
            if rng.random() < 0.3:
                idx = idx - shape[0]
            st["key"] = (idx,)
            region = (k, *shape[1:])
        else:
            key: list[Any] = []
            for s in shape[: rng.integers(0, nd + 1)]:
                if rng.random() < 0.3 and s:
                    key.append(int(rng.integers(-s, s)))
                else:
                    start = int(rng.integers(-s, s)) if s and rng.random() < 0.5 else None
                    key.append(slice(start, None, int(rng.choice([1, 2]))))
            if not key:
                key = [Ellipsis]
            st["key"] = tuple(key)
            region = tuple(torch.empty(shape)[st["key"]].shape)
        r = rng.random()
        ids = self.live(lambda t: _broadcasts(region, tuple(t.shape), True))
        if ids and r < 0.5:
            st["y"] = ("slot", int(rng.choice(ids)))
        elif r < 0.75:
            st["y"] = ("num", float(np.round(rng.normal(), 2)))
        else:
            st["y"] = ("const", _arr(rng, region))

    def g_leaf_inplace(self) -> dict[str, Any] | None:
        x = int(self.rng.integers(len(self.leaves)))
        if self.c.env[x] is None:
            return None
        fn = str(self.rng.choice(["add_", "mul_", "zero_", "fill_"]))
        st: dict[str, Any] = {"op": "inplace", "fn": fn, "x": x}
        if fn in ("add_", "mul_", "fill_"):
            st["y"] = ("num", 1.5)
        if self.rng.random() < 0.8:
            st["nograd"] = True
        return st

    def g_clone(self) -> dict[str, Any] | None:
        x = self.pick()
        return None if x is None else {"op": "clone", "x": x}

    def g_detach_(self) -> dict[str, Any] | None:
        x = self.pick()
        return None if x is None else {"op": "detach_", "x": x}

    def g_retain_grad(self) -> dict[str, Any] | None:
        x = self.pick(lambda t: t.requires_grad or self.rng.random() < 0.1)
        return None if x is None else {"op": "retain_grad", "x": x}

    def g_hook(self) -> dict[str, Any] | None:
        x = self.pick(lambda t: t.requires_grad or self.rng.random() < 0.1)
        if x is None:
            return None
        return {"op": "hook", "x": x, "scale": float(self.rng.choice([2.0, -1.0, 0.5]))}

    # -- the whole program
    def program(self, n_steps: int) -> dict[str, Any]:
        rng = self.rng
        for _ in range(int(rng.integers(1, 4))):
            nd = int(rng.choice([0, 1, 1, 2, 2, 2, 3]))
            shape = tuple(int(v) for v in rng.integers(1, 5, size=nd))
            rg = bool(rng.random() < 0.7)
            arr = _arr(rng, shape)
            self.leaves.append((arr, rg))
            self.c.env.append(torch.tensor(arr, requires_grad=rg))
        tries = 0
        while len(self.steps) < n_steps and tries < 4 * n_steps:
            tries += 1
            try:
                st = self.step()
            except (ValueError, IndexError, RuntimeError):  # (e.g. a size-0 dimension)
                continue
            if st is None:
                continue
            res, _ = _step(self.c, st)
            self.steps.append(st)
            out = self.c.env[-1]
            if out is not None and st["op"] == "view":
                self.views.add(len(self.c.env) - 1)
            if res != "ok" and rng.random() < 0.5:
                break  # an error ends most programs early (the rest still runs)
        return {"leaves": self.leaves, "steps": self.steps, "end": self.end()}

    def end(self) -> dict[str, Any]:
        rng = self.rng
        grad_ids = self.live(lambda t: t.requires_grad)
        pool = grad_ids if grad_ids and rng.random() < 0.9 else self.live()
        k = int(rng.integers(1, 4))
        slots = [int(v) for v in rng.choice(pool, size=min(k, len(pool)), replace=False)]
        weights = [_arr(rng, tuple(self.c.env[i].shape)) for i in slots]
        mode = str(rng.choice(["backward", "backward", "twice", "inputs", "grad",
                               "grad_create", "grad_create"]))
        end: dict[str, Any] = {"slots": slots, "weights": weights, "mode": mode}
        if mode == "twice":
            end["retain"] = bool(rng.random() < 0.75)
        if mode in ("inputs", "grad", "grad_create"):
            leaves = [i for i in range(len(self.leaves))
                      if self.c.env[i] is not None and self.c.env[i].requires_grad]
            cands = leaves + ([i for i in grad_ids if i >= len(self.leaves)]
                              if rng.random() < 0.4 else [])
            if not cands or rng.random() < 0.05:
                cands = self.live()
            n = int(rng.integers(1, len(cands) + 1))
            end["inputs"] = [int(v) for v in rng.choice(cands, size=n, replace=False)]
            end["gweights"] = [_arr(rng, tuple(self.c.env[i].shape)) for i in end["inputs"]]
        return end


_KINDS = [("unary", 3), ("binary", 4), ("reduce", 1.5), ("matmul", 1.5), ("view", 5),
          ("inplace", 5), ("leaf_inplace", 0.6), ("clone", 0.7), ("detach_", 0.4),
          ("retain_grad", 1), ("hook", 1)]


def make_program(seed: int) -> dict[str, Any]:
    g = Gen(seed)
    n = int(g.rng.integers(5, 26))
    with np.errstate(all="ignore"):
        return g.program(n)


def show(prog: dict[str, Any]) -> str:
    """A readable listing of a program (for a failure message)."""
    np.set_printoptions(precision=3, threshold=20)
    lines = [f"leaf {i}: {arr.tolist()!r} requires_grad={rg}"
             for i, (arr, rg) in enumerate(prog["leaves"])]
    n = len(prog["leaves"])
    for i, st in enumerate(prog["steps"]):
        lines.append(f"step {i} -> slot {n + i}: {st}")
    lines.append(f"end: {prog['end']}")
    return "\n".join(lines)


#: known, not yet fixed differences (see the report in the module's regression section):
#: (a phrase of the failure, why)
KNOWN_GAPS = [
    ("grads after the error", "torch runs part of a failing backward; gradsum checks first"),
    ("hooks: length", "torch runs part of a failing backward; gradsum checks first"),
    ("backward 2: 'ok' vs 'RuntimeError'",
     "torch raises for a freed graph only when a node unpacks a saved tensor"),
]


def check_seed(seed: int, allow_known: bool = True) -> str | None:
    """Compare one program; returns the reason of a known gap it hit (else asserts)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prog = make_program(seed)
        with np.errstate(all="ignore"):
            r = compare(prog)
    if r is None:
        return None
    if allow_known:
        for phrase, why in KNOWN_GAPS:
            if phrase in r:
                return why
        if seed in KNOWN_SEEDS:
            return KNOWN_SEEDS[seed]
    raise AssertionError(f"seed {seed}: {r}\n{show(prog)}")


#: seeds of the default run that hit a known gap no phrase above identifies
KNOWN_SEEDS: dict[int, str] = {
    201: "a chunk output of a base that required no grad, read after a recorded in-place op "
         "on a sibling view: torch's creation-meta rules for multi-output views made "
         "before the base had a history (torch reads it; gradsum raises)",
}


def _sweep(seeds: range) -> None:
    known = [s for s in seeds if check_seed(s) is not None]
    assert len(known) <= len(seeds) // 5, f"too many known-gap programs: {known}"


@pytest.mark.parametrize("batch", range(8))
def test_random_programs_agree_with_torch(batch: int) -> None:
    _sweep(range(batch * 40, batch * 40 + 40))


# A wider sweep (seeds 10000-10399) found differences in 4 programs besides the known gaps
# above. Fixed: 10042 (detach_() of a base with live views: torch's views read the base's
# requires_grad when asked) and 10286 (torch refuses a saved non-leaf detached in place since).
# Open: 10104 (ops on a no_grad view of a base detached in place since are still recorded),
# 10359 (an internal assert of torch). ``check_seed(seed, allow_known=False)`` prints any one
# of them as a program.
@pytest.mark.parametrize("seed", [10286])  # (10042: tests/autograd/test_views_inplace.py)
def test_wider_sweep_programs_fixed_since(seed: int) -> None:
    assert check_seed(seed, allow_known=False) is None


# --------------------------------------------------------------------------- regressions
def _same_run(program: Callable[[Any, list[Any]], None]) -> None:
    """Run ``program(m, log)`` with torch and with gradsum; the logs must match."""
    want: list[Any] = []
    got: list[Any] = []
    program(torch, want)
    program(gradsum, got)
    assert _same_obs(want, got) is None, (want, got)


def test_a_view_made_in_no_grad_mode_requires_grad_but_gets_no_gradient() -> None:
    # seed 15: torch marks a no_grad view of a tensor that requires grad as requiring grad (a
    # leaf no gradient reaches); gradsum said requires_grad=False, so ops on it were not
    # recorded and a loss built from it alone could not backward
    def program(m: Any, log: list[Any]) -> None:
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        h = x * 2
        with m.no_grad():
            w, v = x[:2], h.split(1)[0]
        log.append((w.requires_grad, w.is_leaf, v.requires_grad, v.is_leaf))
        loss = (w * 3).sum() + (v * 2).sum() + x.sum()
        log.append(loss.requires_grad)
        loss.backward()
        log.append((_np(x.grad), w.grad, v.grad))
        log.append(m.autograd.grad((w * 3).sum(), [w], allow_unused=True))

    _same_run(program)


def test_an_inplace_op_on_a_no_grad_view_in_grad_mode_raises() -> None:
    # seed 24: torch refuses the write ("A view was created in no_grad mode ..."); gradsum
    # wrote it (and, for a view of a leaf, raised the leaf error instead)
    def program(m: Any, log: list[Any]) -> None:
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        h = x * 2
        with m.no_grad():
            w, v = x[:2], h[1:]
        for t in (w, v):
            log.append(_outcome(lambda t=t: t.add_(1.0)))
            log.append(_outcome(lambda t=t: t.__setitem__(0, 5.0)))
        with m.no_grad():
            v.mul_(2.0)  # (allowed: both in no_grad)
        log.append(_np(h))

    _same_run(program)
    with pytest.raises(RuntimeError, match="no_grad mode"):
        x = gradsum.ones(3, requires_grad=True)
        with gradsum.no_grad():
            w = x[:2]
        w.zero_()


def test_a_no_grad_view_whose_buffer_changed_refuses_to_join_a_graph() -> None:
    # torch regenerates a view's history after its version moved, and refuses for a view made
    # in no_grad mode: reading grad_fn or using it in a recorded op raises
    def program(m: Any, log: list[Any]) -> None:
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with m.no_grad():
            w = x[:2]
            w.mul_(2.0)
        log.append(_outcome(lambda: w.grad_fn))
        log.append(_outcome(lambda: w * 2))
        with m.no_grad():
            log.append(_outcome(lambda: w * 2))
        log.append(_np(x))

    _same_run(program)


def test_outputs_of_split_chunk_unbind_refuse_inplace_ops() -> None:
    # seed 16: torch refuses an in-place op on an output of a function returning several views
    # (and on a view of one); gradsum wrote through them
    def program(m: Any, log: list[Any]) -> None:
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        h = x * 1
        outs = [h.split(1)[0], h.chunk(2, 1)[1], h.unbind(0)[1], h.split(2)[0],
                h.unbind(1)[0][:1]]
        for o in outs:
            log.append(_outcome(lambda o=o: o.fill_(0.0)))
            log.append(_outcome(lambda o=o: o.mul_(2.0)))
        with m.no_grad():
            log.append(_outcome(lambda: outs[0].add_(1.0)))  # (allowed in no_grad)
        y = m.tensor([[1.0, 2.0], [3.0, 4.0]])
        log.append(_outcome(lambda: y.unbind(0)[0].add_(1.0)))  # (no grad anywhere: fine)
        log.append(_outcome(lambda: h.split(1)[0].detach().add_(1.0)))
        log.append(_np(h))
        h.sum().backward()
        log.append(_np(x.grad))

    _same_run(program)
    with pytest.raises(RuntimeError, match="returns multiple views"):
        gradsum.ones(2, 2, requires_grad=True).mul(1).unbind(0)[0].add_(1)


def test_detach_after_the_graph_was_built_skips_the_leaf_but_not_its_hooks() -> None:
    def program(m: Any, log: list[Any]) -> None:
        x = m.ones(2, requires_grad=True)
        x.register_hook(lambda g: log.append("hook"))
        x.register_post_accumulate_grad_hook(lambda p: log.append("post"))
        y = (x * 2).sum()
        x.detach_()
        y.backward()
        log.append(x.grad is None)
        log.append(x.requires_grad)

    _same_run(program)


def test_expand_to_its_own_shape_is_a_new_writable_view() -> None:
    def program(m: Any, log: list[Any]) -> None:
        y = m.ones(2, 2, requires_grad=True) * 1
        e = y.expand(2, -1)
        log.append(e is y)
        log.append(e.grad_fn.name())
        e.mul_(3)
        log.append(type(y.grad_fn).__name__)  # (torch's name() says torch::autograd::...)
        y.sum().backward()

    _same_run(program)


@pytest.mark.parametrize("dim", [None, 0, -1, (0, 2), [0]])
def test_squeeze_grad_fn_names(dim: Any) -> None:
    def program(m: Any, log: list[Any]) -> None:
        x = m.ones(1, 2, 1, requires_grad=True) * 1
        log.append((x.squeeze() if dim is None else x.squeeze(dim)).grad_fn.name())

    _same_run(program)


def test_split_unbind_outputs_and_no_grad_views_refuse_use_after_base_modified() -> None:
    # seeds 94, 107, 254: torch regenerates a view's grad_fn once its version moved and
    # refuses to for an output of split/chunk/unbind (or a view of one) and for a grad-mode
    # view of a no_grad view: grad_fn, is_leaf, a recorded op, retain_grad and register_hook
    # raise (requires_grad, detach and ops under no_grad do not); gradsum used them
    def program(m: Any, log: list[Any]) -> None:
        x = m.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
        mods: list[Callable[[Any, Any], Any]] = [
            lambda h, v: h.add_(1), lambda h, v: h[1].mul_(2),
            lambda h, v: h.detach().add_(1)]
        makes: list[Callable[[Any], Any]] = [
            lambda h: h.split(1)[0], lambda h: h.split([1, 2])[1], lambda h: h.unbind(0)[2],
            lambda h: h.chunk(2)[1].t(), lambda h: h.unbind(1)[0][1:]]
        for make in makes:
            for mod in mods:
                h = x * 2
                v = make(h)
                mod(h, v)
                log.append((v.requires_grad, _outcome(lambda v=v: v.grad_fn),
                            _outcome(lambda v=v: v.is_leaf), _outcome(lambda v=v: v * 2),
                            _outcome(lambda v=v: v[0]), _outcome(lambda v=v: v.retain_grad()),
                            _outcome(lambda v=v: v.register_hook(lambda g: g)), _np(v)))
                with m.no_grad():
                    log.append(_np(v * 2))
        h = x * 2
        v = h.split(1)[0]
        with m.no_grad():
            v.add_(1)  # (its own write, in no_grad mode: stale too)
        log.append(_outcome(lambda: v.grad_fn))
        with m.no_grad():
            w = h[1:]
        u = w.t()  # (grad mode: a view of a view made in no_grad mode)
        log.append((u.requires_grad, u.is_leaf))
        h.mul_(2)
        log.append((_outcome(lambda: u.grad_fn), _outcome(lambda: u + 1),
                    _outcome(lambda: w.grad_fn), _outcome(lambda: w.retain_grad())))
        y = m.ones(3)
        s = y.split(1)[0]
        y.add_(1)  # (no grad anywhere: nothing to refuse)
        log.append((_outcome(lambda: s.grad_fn), s.requires_grad))

    _same_run(program)
    with pytest.raises(RuntimeError, match="Output 1 of SplitWithSizes is a view and its base"):
        h = gradsum.ones(3, requires_grad=True) * 1
        v = h.split([1, 2])[1]
        h.zero_()
        _ = v.is_leaf


def test_tensor_hooks_stay_with_their_first_grad_fn_and_retain_grad_moves() -> None:
    # seeds 113, 317, 10073: torch keeps a tensor's hooks in one dict attached to the grad_fn
    # of the first register_hook (a view's grad_fn regenerated after its version moved, even
    # by a no_grad write to its base or a detached alias, runs none of them), while
    # retain_grad follows the tensor to its new grad_fn after an in-place op
    def program(m: Any, log: list[Any]) -> None:
        x = m.tensor([1.0, 2.0], requires_grad=True)
        writes: list[Callable[[Any, Any], Any]] = [
            lambda y, v: y.mul_(3), lambda y, v: v.mul_(3), lambda y, v: y.detach().mul_(3),
            lambda y, v: y[1:].mul_(3)]
        for write in writes:
            for nograd in (False, True):
                y = x * 2
                v = y[:1]
                v.register_hook(lambda g: g * 10)
                with m.no_grad() if nograd else contextlib.nullcontext():
                    write(y, v)
                v.register_hook(lambda g: g * 100)
                x.grad = None
                (v * 1).sum().backward()
                log.append(_np(x.grad))
        y = x * 2
        y.retain_grad()
        y.add_(y[:1] * 1)
        y.sum().backward()
        log.append(_np(y.grad))
        for write in writes[:2]:
            y = x * 2
            v = y[:1]
            v.retain_grad()
            write(y, v)
            (v * 1).sum().backward()
            log.append(_np(v.grad))

    _same_run(program)


def test_writes_whose_source_partly_overlaps_the_destination_raise() -> None:
    # seeds 79, 244, 10061, 10349, 10166: torch refuses copy_/binary in-place ops/basic
    # setitem when source and destination are dense and their memory partly overlaps (the
    # same elements with the same strides are fine), and index_put_ (advanced setitem) on any
    # overlap, unless it becomes a masked_fill; gradsum wrote
    cases: list[Callable[[Any, Any], Any]] = [
        lambda m, x: x[1:].copy_(x[:-1]), lambda m, x: x[1:].copy_(x[1:]),
        lambda m, x: x[:4].view(2, 2).copy_(x[:4].view(2, 2).t()),
        lambda m, x: x[::2].copy_(x[1::2]), lambda m, x: x[:5].copy_(x[::2]),
        lambda m, x: x[1:3].copy_(x[0]), lambda m, x: x[0:3].copy_(x[1]),
        lambda m, x: x[1:].add_(x[:-1]), lambda m, x: x.add_(x),
        lambda m, x: x[:4].view(2, 2).mul_(x[:4].view(2, 2).t()),
        lambda m, x: x.__setitem__(slice(1, None), x[:-1]),
        lambda m, x: x.__setitem__(slice(1, 3), x[1:3]),
        lambda m, x: x.__setitem__(0, x[1]), lambda m, x: x.__setitem__(Ellipsis, x),
        lambda m, x: x.__setitem__(slice(1, 3), x[0]),
        lambda m, x: x.__setitem__(m.tensor([0, 1]), x[1:3]),
        lambda m, x: x.__setitem__(m.tensor([0, 1]), x[5:7]),
        lambda m, x: x.__setitem__(m.tensor([0, 1]), x[5]),
        lambda m, x: x.__setitem__(m.tensor([0, 1]), x[::5]),
        lambda m, x: x.__setitem__(m.arange(10) < 2, x[1:3]),
        lambda m, x: x.__setitem__(m.arange(10) < 2, x[1:2]),
        lambda m, x: x[2:].__setitem__(m.tensor([0, 1]), x[0:2]),
        lambda m, x: x.view(2, 5).__setitem__((0, m.tensor([0, 1])), x.view(2, 5)[1, :2]),
    ]

    def program(m: Any, log: list[Any]) -> None:
        for rg in (False, True):
            for f in cases:
                x = m.arange(10.0)
                h = x * m.ones(10, requires_grad=True) if rg else x
                log.append((_outcome(lambda f=f, h=h: f(m, h)), _np(h)))

    _same_run(program)


def test_a_recorded_write_into_a_no_grad_or_split_view_of_a_plain_tensor_raises() -> None:
    # seeds 24, 135, 10376: a view made in no_grad mode, or an output of split/unbind of a
    # tensor that does not require grad (and views of those), refuses a write that must be
    # recorded (a value requiring grad); gradsum wrote it
    def program(m: Any, log: list[Any]) -> None:
        w = m.tensor(2.0, requires_grad=True)

        def make(kind: str) -> Any:
            y = m.zeros(3, 2)
            if kind.startswith("nograd"):
                with m.no_grad():
                    v = y[1:]
                return v[0] if kind == "nograd-of" else v
            if kind == "unbind":
                return y.unbind(0)[0]
            if kind == "split-of":
                return y.split(1)[0][0]
            return y[1:]

        for kind in ("nograd", "nograd-of", "unbind", "split-of", "plain"):
            log.append((kind, _outcome(lambda k=kind: make(k).add_(w)),
                        _outcome(lambda k=kind: make(k).__setitem__(0, w)),
                        _outcome(lambda k=kind: make(k).fill_(w)),
                        _outcome(lambda k=kind: make(k).add_(1.0)),
                        _outcome(lambda k=kind: make(k).__setitem__((m.tensor([0]),), w))))

    _same_run(program)


def test_autograd_grad_of_a_non_leaf_whose_node_runs_anyway_skips_its_hooks() -> None:
    # seed 10070: torch captures the gradient of a non-leaf input before its tensor hooks
    # when its node must run for another input, after them otherwise; gradsum always after
    def program(m: Any, log: list[Any]) -> None:
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        y = x.exp()
        n = y.sum()
        n.register_hook(lambda g: g * -1)
        loss = n * 3
        log.append([_np(g) for g in m.autograd.grad(loss, [x, n], retain_graph=True)])
        log.append([_np(g) for g in m.autograd.grad(loss, [n], retain_graph=True)])
        log.append([_np(g) for g in m.autograd.grad(loss, [y, x])])

    _same_run(program)


def test_expanded_tensors_refuse_only_writes_to_shared_elements() -> None:
    # seeds 83, 10102, 10151, 10168: torch fills an expanded tensor (fill_, zero_, a 0-d
    # setitem), writes an expand that only adds size-1 dimensions, and refuses the backward
    # through a recorded fill_ of an expanded view (CopySlices writes its gradient into the
    # expanded region); gradsum refused every write to a read-only buffer and raised
    # NumPy's ValueError in that backward
    def program(m: Any, log: list[Any]) -> None:
        writes: list[Callable[[Any], Any]] = [
            lambda e: e.fill_(1.0), lambda e: e.zero_(), lambda e: e.__setitem__(0, 2.0),
            lambda e: e.__setitem__(slice(0, 2), 2.0), lambda e: e.add_(1.0),
            lambda e: e.relu_(), lambda e: e.__setitem__(m.tensor([0]), 3.0)]
        for f in writes:
            x = m.arange(4.0)
            log.append((_outcome(lambda f=f, x=x: f(x[:1].expand(3))), _np(x)))
            x = m.arange(4.0).view(2, 2)
            log.append((_outcome(lambda f=f, x=x: f(x.expand(1, 2, 2)[0, :, :])), _np(x)))
        x = m.tensor([[1.0, 2.0]], requires_grad=True)
        e = x.clone().expand(3, 2)
        e.fill_(0.5)
        log.append(_outcome(lambda: m.autograd.grad((e * 2).sum(), [x], allow_unused=True)))

    _same_run(program)


def test_a_gradient_of_the_wrong_shape_is_a_runtime_error() -> None:
    # seed 10156: after an unsqueeze_ in no_grad mode the tensor keeps its grad_fn of the
    # old shape; a recorded write makes CopySlices pass a gradient of the new shape, which
    # torch's engine refuses (RuntimeError "invalid gradient"); gradsum raised ValueError
    def program(m: Any, log: list[Any]) -> None:
        x = m.ones(4, 4, requires_grad=True)
        y = x - x
        with m.no_grad():
            y.unsqueeze_(1)
        y[::2, :] = m.ones(2, 1, 4)
        log.append(_outcome(lambda: (y * m.ones(4, 1, 4)).sum().backward()))

    _same_run(program)


def test_relu_double_backward_records_for_the_result_alone() -> None:
    def program(m: Any, log: list[Any]) -> None:
        x = m.tensor([1.0, -1.0, 2.0], requires_grad=True)
        (g,) = m.autograd.grad(m.relu(x).sum(), x, create_graph=True)
        log.append(g.requires_grad)
        log.append(type(g.grad_fn).__name__)
        g.sum().backward()
        log.append(x.grad.tolist())

    _same_run(program)


def test_deepcopy_of_a_no_grad_view_is_a_plain_leaf() -> None:
    import copy

    def program(m: Any, log: list[Any]) -> None:
        x = m.ones(3, requires_grad=True)
        with m.no_grad():
            w = x[:2]
        c = copy.deepcopy(w)
        (c * 2).sum().backward()
        log.append((c.requires_grad, c.is_leaf, c.grad.tolist(), x.grad))
        with m.no_grad():
            x.mul_(2)
        log.append(c.is_leaf)  # (the copy is not a view: the write to x does not concern it)

    _same_run(program)


def test_a_grad_mode_view_of_a_base_detached_in_place_keeps_requiring_grad() -> None:
    # seed 10611: once the version moved, torch regenerates the grad_fn of a view that had
    # one even when its base requires grad no more (detach_() since): a node whose edge leads
    # nowhere, so the view still requires grad, retain_grad() works and ops on it are
    # recorded; gradsum's regenerated view had no grad_fn (requires_grad=False)
    def program(m: Any, log: list[Any]) -> None:
        x = m.ones(4, 2, dtype=m.float64, requires_grad=True)
        h = x * 2
        v = x.narrow(-1, 1, 1)[1:3].t()
        x.detach_()
        with m.no_grad():
            x.add_(1)  # (an unrecorded write: the view is regenerated)
        log.append((v.requires_grad, v.is_leaf, v.grad_fn.next_functions))
        v.retain_grad()
        z = (v * h[:1, :2]).sum()
        log.append(z.requires_grad)
        z.backward()
        log.append((x.grad, _np(v.grad)))

    _same_run(program)


@pytest.mark.parametrize("op", ["mm", "matmul", "linear", "linear_w", "linear_3d"])
def test_an_operand_is_saved_only_for_an_input_with_an_edge(op: str) -> None:
    # seed 11821: a view made in no_grad mode of a tensor that requires grad requires grad but
    # has no edge; torch's mm/linear do not save the other operand for it, so modifying that
    # operand in place later does not break the backward (gradsum saved it, and raised)
    def program(m: Any, log: list[Any]) -> None:
        a = m.tensor([[0.5, 1.0], [0.25, 2.0]], dtype=m.float64, requires_grad=True)
        base = m.ones(3, 2, dtype=m.float64, requires_grad=True)
        with m.no_grad():
            v = base.split(2, 0)[0]  # (2, 2)
        if op == "mm":
            y = a @ v
        elif op == "matmul":
            y = a[0] @ v
        elif op == "linear":
            y = m.nn.functional.linear(a, v)
        elif op == "linear_3d":
            y = m.nn.functional.linear(v.unsqueeze(0), a)
        else:
            y = m.nn.functional.linear(v, a)
        # (3-d: torch shows the reshape back, UnsafeViewBackward0; gradsum one LinearBackward0)
        log.append((y.requires_grad, op == "linear_3d" or y.grad_fn.name()))
        with m.no_grad():
            a.fill_(1.5)
        log.append(_outcome(lambda: y.sum().backward()))
        log.append((None if a.grad is None else _np(a.grad), base.grad))

    _same_run(program)


def test_an_empty_view_regenerated_after_a_write_gives_plain_zeros() -> None:
    # seed 11994: torch regenerates a view whose version moved as AsStridedBackward0, whose
    # backward gives an empty view plain zeros: under create_graph the gradient of its base
    # then carries no graph (gradsum replayed the slice, whose backward recorded)
    def program(m: Any, log: list[Any]) -> None:
        x = m.tensor(np.arange(16.0).reshape(4, 4), requires_grad=True)
        s = x[0, -1:2:2]  # (empty)
        with m.no_grad():
            x.zero_()
        r = s.expand(0).relu()
        log.append(r.grad_fn.next_functions[0][0].next_functions[0][0].name())
        loss = (r.tanh() * m.tensor(np.zeros(0))).sum() + r.sum()
        (g,) = m.autograd.grad(loss, [x], create_graph=True)
        log.append((g.requires_grad, g.grad_fn is None, _np(g)))

    _same_run(program)
