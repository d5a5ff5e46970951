"""Side-by-side regression tests for gradsum.nn behaviours that differed from torch's (second
sweep: the Module API, containers and layer constructors): the same program on both libraries,
then the results or the exception types compared."""

from __future__ import annotations

import copy
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import same_error  # noqa: E402

Program = Callable[[Any], Any]  # fn(lib) -> a plain Python result


def both(fn: Program) -> tuple[Any, Any]:
    """``(gradsum's result, torch's result)`` of the same program."""
    return fn(gradsum), fn(torch)


def same(fn: Program) -> Any:
    got, want = both(fn)
    assert got == want
    return want




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


# -- containers --------------------------------------------------------------------------------
def test_module_dict_update_from_a_module_dict() -> None:
    def program(lib: Any) -> list[str]:
        d = lib.nn.ModuleDict({"z": lib.nn.ReLU()})
        d.update(lib.nn.ModuleDict({"a": lib.nn.ReLU(), "b": lib.nn.Tanh()}))
        return list(d)

    assert same(program) == ["z", "a", "b"]


@pytest.mark.parametrize("value,message", [
    (5, "ModuleDict.update should be called with an iterable of key/value pairs, but got int"),
    (["ab"], "str is not a Module subclass"),  # a 2-character string is a (key, value) pair
])
def test_module_dict_update_errors(value: Any, message: str) -> None:
    assert same_error(lambda lib: lib.nn.ModuleDict().update(value)) is TypeError
    with pytest.raises(TypeError, match=f"^{message}"):
        gradsum.nn.ModuleDict().update(value)


def test_sequential_insert_into_named_keys() -> None:
    def program(lib: Any) -> Any:
        s = lib.nn.Sequential(OrderedDict(a=lib.nn.ReLU(), b=lib.nn.Tanh()))
        s.insert(2, lib.nn.ReLU())  # at the end: a new key "2"
        return list(s._modules)

    assert same(program) == ["a", "b", "2"]
    same_error(lambda lib: lib.nn.Sequential(OrderedDict(a=lib.nn.ReLU(), b=lib.nn.Tanh()))
               .insert(1, lib.nn.ReLU()))


# -- layers ------------------------------------------------------------------------------------
def test_layer_norm_over_an_empty_shape() -> None:
    def program(lib: Any) -> Any:
        ln = lib.nn.LayerNorm([])
        return repr(ln), [tuple(p.shape) for p in ln.parameters()]

    same(program)


def test_embedding_from_pretrained_asserts_2d() -> None:
    same_error(lambda lib: lib.nn.Embedding.from_pretrained(lib.ones(3)))


def test_conv2d_unknown_padding_mode_message() -> None:
    with pytest.raises(ValueError, match=r"^padding_mode must be one of"):
        gradsum.nn.Conv2d(1, 1, 1, padding_mode="foo")
    # the padding string is checked first, like torch
    with pytest.raises(ValueError, match=r"^Invalid padding string"):
        gradsum.nn.Conv2d(1, 1, 1, padding="foo", padding_mode="foo")


@pytest.mark.parametrize("dtype", ["int64", "bool"])
@pytest.mark.parametrize("p", [0.0, 0.5, 1.0])
def test_dropout_of_integer_tensors(dtype: str, p: float) -> None:
    def program(lib: Any) -> Any:
        return lib.nn.functional.dropout(lib.ones(3, dtype=getattr(lib, dtype)), p).tolist()

    if 0 < p < 1:
        assert same_error(program) is RuntimeError
    else:
        same(program)


def test_unflatten() -> None:
    def program(lib: Any) -> Any:
        m = lib.nn.Unflatten(1, (2, -1))
        return repr(m), tuple(m(lib.ones(4, 6)).shape)

    assert same(program) == ("Unflatten(dim=1, unflattened_size=(2, -1))", (4, 2, 3))
    for bad in (3, (2.0, 3)):
        same_error(lambda lib, bad=bad: lib.nn.Unflatten(1, bad))
