"""Side by side with torch: the Module API (get_buffer, named_modules' memo, always-call forward
hooks, state_dict positional arguments, metadata and extra state, load_state_dict's key order,
0-d parameters and ``assign``, deepcopy of a parameter) and nn.Buffer."""

from __future__ import annotations

import copy
import inspect
import warnings
from typing import Any

import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import (  # noqa: E402  # noqa: E402
    same,
    same_error,
)
from gradsum.nn.modules.module import Module as _GModule  # noqa: E402


# -- forward hooks with always_call ---------------------------------------------------------------
def _always_call_log(lib: Any, where: str) -> list[str]:
    log: list[str] = []

    class M(lib.nn.Module):
        def forward(self, x: Any) -> Any:
            if where == "forward":
                raise ValueError("forward")
            return x

    m = M()

    def bad_pre(mod: Any, args: Any) -> None:
        raise KeyError("pre")

    def bad_post(mod: Any, args: Any, out: Any) -> None:
        log.append("post")
        raise IndexError("post")

    if where == "pre":
        m.register_forward_pre_hook(bad_pre)
    m.register_forward_hook(lambda mod, args, out: log.append(f"always {out is None}"),
                            always_call=True)
    if where == "post":
        m.register_forward_hook(bad_post)
    m.register_forward_hook(lambda mod, args, kw, out: log.append("always kw"),
                            always_call=True, with_kwargs=True)
    m.register_forward_hook(lambda mod, args, out: log.append("normal"))
    try:
        m(lib.ones(1))
    except Exception as e:
        log.append(type(e).__name__)
    return log


@pytest.mark.parametrize("where", ["pre", "forward", "post"])
def test_always_call_forward_hooks_run_when_the_call_raises(where: str) -> None:
    # gradsum accepted always_call=True and ignored it
    same(lambda lib: _always_call_log(lib, where))


def test_an_always_call_hook_error_after_another_error_is_a_warning() -> None:
    def program(lib: Any) -> list[Any]:
        m = lib.nn.Identity()

        def bad(mod: Any, args: Any, out: Any) -> None:
            raise RuntimeError("hook")

        m.register_forward_pre_hook(lambda mod, args: 1 / 0)
        m.register_forward_hook(bad, always_call=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with pytest.raises(ZeroDivisionError):
                m(lib.ones(1))
        return [(x.category, str(x.message).split(":")[0]) for x in w]

    assert same(program) == [(UserWarning, "module forward hook with ``always_call=True`` "
                                           "raised an exception that was silenced as another "
                                           "error was raised in forward")]


# -- traversal and state_dict ------------------------------------------------------------------
def test_named_modules_memo_holds_modules() -> None:
    def program(lib: Any) -> list[str]:
        a = lib.nn.Linear(1, 1)
        return [n for n, _ in lib.nn.Sequential(a, lib.nn.ReLU()).named_modules(memo={a})]

    assert same(program) == ["", "1"]


def test_state_dict_positional_arguments_warn_like_torch() -> None:
    def program(lib: Any) -> Any:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            keys = list(lib.nn.Linear(1, 1).state_dict(None, "p."))
            keys2 = list(lib.nn.Linear(1, 1).state_dict(None, "ignored.", prefix="kw."))
        return keys, keys2, [x.category for x in w]

    assert same(program) == (["p.weight", "p.bias"], ["kw.weight", "kw.bias"],
                             [FutureWarning, FutureWarning])


def test_state_dict_metadata() -> None:
    def program(lib: Any) -> Any:
        net = lib.nn.Sequential(lib.nn.Sequential(lib.nn.Linear(1, 1)), lib.nn.ReLU())
        return (dict(net.state_dict()._metadata), dict(net.state_dict(prefix="m.")._metadata),
                hasattr(net.state_dict(destination={}), "_metadata"))

    same(program)


def _extra(lib: Any, get: bool = True, set_: bool = True) -> Any:
    body: dict[str, Any] = {}
    if get:
        body["get_extra_state"] = lambda self: {"n": 7}
    if set_:
        body["set_extra_state"] = lambda self, state: setattr(self, "loaded", state)
    return type("Extra", (lib.nn.Module,), body)()


@pytest.mark.parametrize("get,set_", [(True, True), (True, False), (False, True),
                                      (False, False)])
def test_extra_state_keys(get: bool, set_: bool) -> None:
    # gradsum ignored get_extra_state/set_extra_state
    def program(lib: Any) -> Any:
        net = lib.nn.Sequential(lib.nn.Linear(1, 1), _extra(lib, get, set_))
        sd = net.state_dict()
        loaded = net.load_state_dict({**sd, "1._extra_state": {"n": 8}}, strict=False)
        return (list(sd), sd.get("1._extra_state"), loaded.missing_keys,
                loaded.unexpected_keys, getattr(net[1], "loaded", None),
                net.load_state_dict({}, strict=False).missing_keys)

    same(program)


def test_extra_state_missing_with_strict() -> None:
    same_error(lambda lib: lib.nn.Sequential(_extra(lib)).load_state_dict({}))


def test_load_state_dict_unexpected_keys_in_module_order() -> None:
    def program(lib: Any) -> Any:
        m = lib.nn.Module()
        m.a, m.b = lib.nn.Linear(1, 1), lib.nn.Linear(1, 1)
        res = m.load_state_dict({"b.x": lib.ones(1), "z": lib.ones(1), "a.y": lib.ones(1),
                                 "c.q": lib.ones(1)}, strict=False)
        return res.unexpected_keys

    assert same(program) == ["z", "c.q", "a.y", "b.x"]


def test_load_state_dict_takes_one_element_into_a_0d_parameter() -> None:
    def program(lib: Any) -> Any:
        m = lib.nn.Module()
        m.p = lib.nn.Parameter(lib.tensor(1.0))
        m.load_state_dict({"p": lib.tensor([3.0])})
        return tuple(m.p.shape), m.p.item()

    assert same(program) == ((), 3.0)


def test_load_state_dict_assign_keeps_a_checkpoint_parameter() -> None:
    def program(lib: Any) -> Any:
        m = lib.nn.Linear(1, 1)
        p = lib.nn.Parameter(lib.ones(1, 1), requires_grad=False)
        m.load_state_dict({"weight": p, "bias": lib.zeros(1)}, assign=True)
        return m.weight is p, m.weight.requires_grad, type(m.bias).__name__

    assert same(program) == (True, True, "Parameter")


def test_deepcopy_of_a_parameter_leaves_grad_behind() -> None:
    def program(lib: Any) -> Any:
        m = lib.nn.Linear(2, 1)
        m(lib.ones(1, 2)).sum().backward()
        m2 = copy.deepcopy(m)
        return (m2.weight.grad is None, type(m2.weight).__name__, m2.weight.requires_grad,
                m.weight.grad is not None, m2.weight.tolist() == m.weight.tolist())

    assert same(program) == (True, "Parameter", True, True, True)


# -- Buffer --------------------------------------------------------------------------------------
def _buffer_object(lib: Any) -> list[Any]:
    src = lib.ones(2, requires_grad=True)
    b = lib.nn.Buffer(src, persistent=False)
    e = lib.nn.Buffer()
    return [isinstance(b, lib.nn.Buffer), isinstance(src, lib.nn.Buffer), b.persistent,
            b.requires_grad, b.grad_fn is None, type(b).__name__, tuple(e.shape),
            isinstance(lib.nn.Buffer(lib.zeros(1)), lib.Tensor)]


def test_buffer_object_matches_torch() -> None:
    assert _buffer_object(gradsum) == _buffer_object(torch)


_SETATTR_KNOWS_BUFFER = "Buffer" in inspect.getsource(_GModule.__setattr__)


@pytest.mark.skipif(not _SETATTR_KNOWS_BUFFER,
                    reason="Module.__setattr__ does not register nn.Buffer yet (module.py)")
def test_buffer_assignment_registers_like_torch() -> None:
    def prog(lib: Any) -> list[Any]:
        m = lib.nn.Module()
        m.a = lib.nn.Buffer(lib.ones(2))
        m.b = lib.nn.Buffer(lib.zeros(1), persistent=False)
        m.plain = lib.ones(1)
        return [[n for n, _ in m.named_buffers()], list(m.state_dict())]

    assert prog(gradsum) == prog(torch)
