"""``Module``: the base class of layers, with torch's registration, traversal and state rules.

Assigning a :class:`~gradsum.nn.Parameter`, a ``Module`` or (via :meth:`Module.register_buffer`)
a buffer as an attribute registers it. Traversals (``parameters()``, ``named_modules()``, ...)
visit registration order and, like torch's ``remove_duplicate``, yield an object shared by two
owners once (weight tying): its ``.grad`` then sums both uses.

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> class Tiny(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.w = nn.Parameter(gradsum.ones(2))
    ...         self.register_buffer("scale", gradsum.tensor(3.0))
    ...     def forward(self, x):
    ...         return (self.w * x).sum() * self.scale
    >>> m = Tiny()
    >>> [name for name, _ in m.named_parameters()], list(m.state_dict())
    (['w'], ['w', 'scale'])
    >>> m(gradsum.tensor([1.0, 2.0])).backward()
    >>> m.w.grad
    tensor([3., 6.])
"""

from __future__ import annotations

import typing
import warnings
import weakref
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from gradsum import _device, _memory_format
from gradsum import _dtype as D
from gradsum._tensor import Tensor as _Tensor
from gradsum.autograd.grad_mode import _state
from gradsum.autograd.grad_mode import no_grad as _no_grad
from gradsum.autograd.graph import RemovableHandle as _RemovableHandle
from gradsum.autograd.graph import _clear_grad
from gradsum.nn import _messages
from gradsum.nn.modules._functions import BackwardHookFunction as _BackwardHookFunction
from gradsum.nn.parameter import Parameter as _Parameter

if typing.TYPE_CHECKING:
    from gradsum._tensor import Tensor
    from gradsum.autograd.graph import RemovableHandle
    from gradsum.nn.parameter import Parameter

__all__ = [
    "register_module_forward_pre_hook", "register_module_forward_hook",
    "register_module_full_backward_pre_hook", "register_module_full_backward_hook", "Module"
]


def _addindent(s: str, num_spaces: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(num_spaces * " " + line for line in lines)


_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


#: what ``__getattr__`` reads for a store a half-built module lacks yet (never written)
_NO_STORE: dict[str, Any] = {}


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What :meth:`Module.load_state_dict` returns (torch's ``_IncompatibleKeys``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class _Hook:
    """A registered forward (pre-)hook and its options; the handle removes this record."""

    __slots__ = ("always_call", "fn", "with_kwargs")

    def __init__(self, fn: Callable[..., Any], with_kwargs: bool, always_call: bool) -> None:
        self.fn = fn
        self.with_kwargs = with_kwargs
        self.always_call = always_call


class _ModuleHookHandle(_RemovableHandle):
    """A module hook's handle: removing the last hook puts the module back on the plain
    ``forward`` path of :meth:`Module.__call__`."""

    __slots__ = ("_module_ref",)

    def __init__(self, hooks: list[Any], hook: Any, module: Module | None) -> None:
        super().__init__(hooks, hook)
        self._module_ref = weakref.ref(module) if module is not None else None

    def remove(self) -> None:
        super().remove()
        ref = self._module_ref
        if ref is None:
            _refresh_global_hooked()
        else:
            m = ref()
            if m is not None:
                m._refresh_hooked()


# Hooks common to all modules (torch.nn.modules.module's globals): they run before the
# module's own hooks of the same kind.
_global_forward_pre_hooks: list[_Hook] = []


_global_forward_hooks: list[_Hook] = []


_global_backward_pre_hooks: list[Callable[..., Any]] = []


_global_backward_hooks: list[Callable[..., Any]] = []


#: whether any global hook is registered (read by every Module.__call__, so kept as one bool)
_global_hooked = False


def _refresh_global_hooked() -> None:
    global _global_hooked
    _global_hooked = bool(_global_forward_pre_hooks or _global_forward_hooks
                          or _global_backward_pre_hooks or _global_backward_hooks)


def _register_global(hooks: list[Any], rec: Any) -> RemovableHandle:
    global _global_hooked
    hooks.append(rec)
    _global_hooked = True
    return _ModuleHookHandle(hooks, rec, None)


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register ``hook(module, args)`` to run before every module's ``forward`` (before the
    module's own forward pre-hooks); a returned value replaces the positional arguments.

    Example:
        >>> import gradsum
        >>> from gradsum.nn.modules.module import register_module_forward_pre_hook
        >>> seen = []
        >>> h = register_module_forward_pre_hook(lambda m, args: seen.append(type(m).__name__))
        >>> _ = gradsum.nn.Identity()(gradsum.ones(1))
        >>> h.remove(); seen
        ['Identity']
    """
    return _register_global(_global_forward_pre_hooks, _Hook(hook, False, False))


def register_module_forward_hook(
    hook: Callable[..., Any], *, with_kwargs: bool = False, always_call: bool = False
) -> RemovableHandle:
    """Register ``hook(module, args, output)`` to run after every module's ``forward``
    (before the module's own forward hooks); a returned value replaces the output."""
    return _register_global(_global_forward_hooks, _Hook(hook, with_kwargs, always_call))


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register ``hook(module, grad_output)`` for every module, as
    :meth:`Module.register_full_backward_pre_hook` (it runs before the module's own)."""
    return _register_global(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register ``hook(module, grad_input, grad_output)`` for every module, as
    :meth:`Module.register_full_backward_hook` (it runs before the module's own)."""
    return _register_global(_global_backward_hooks, hook)


_NO_INPUT_GRAD_WARNING = (
    "Full backward hook is firing when gradients are computed with respect to module outputs "
    "since no inputs require gradients. See the documentation of "
    "Module.register_full_backward_hook for more details."
)


class _BackwardHook:
    """One module call's backward hooks (torch's ``torch.utils.hooks.BackwardHook``): the
    gradients w.r.t. the outputs are captured at the outputs' identity node (where the
    backward pre-hooks run), the full hooks run at the inputs' identity node."""

    __slots__ = ("grad_outputs", "input_index", "module", "n_inputs", "n_outputs",
                 "output_index", "user_hooks", "user_pre_hooks")

    def __init__(self, module: Module, user_hooks: list[Callable[..., Any]],
                 user_pre_hooks: list[Callable[..., Any]]) -> None:
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs: tuple[Any, ...] | None = None
        self.n_inputs = self.n_outputs = -1
        self.input_index: list[int] | None = None
        self.output_index: list[int] | None = None

    @staticmethod
    def _pack(indices: list[int], values: Any, size: int) -> tuple[Any, ...]:
        res: list[Any] = [None] * size
        for i, v in zip(indices, values):
            res[i] = v
        return tuple(res)

    @staticmethod
    def _wrap(args: tuple[Any, ...]) -> tuple[Any, list[int] | None, Any]:
        """``args`` with their tensors passed through :class:`BackwardHookFunction` (when one
        requires grad and grad mode is on), the tensors' positions and the identity node."""
        idx = [i for i, a in enumerate(args) if isinstance(a, _Tensor)]
        if not (_state.enabled and any(args[i].requires_grad for i in idx)):
            return args, None, None
        new = _BackwardHookFunction.apply(*[args[i] for i in idx])
        node = None
        for k, t in enumerate(new):
            if t._grad_fn is not None:
                node = t._grad_fn
                # torch: an input returned as is is a view made in a custom Function, which
                # may not be modified in place
                t._multi_view = ("BackwardHookFunction", k)
        out = list(args)
        for i, t in zip(idx, new):
            out[i] = t
        return (tuple(out) if type(args) is tuple else type(args)(*out)), idx, node

    def setup_input_hook(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        res, idx, node = self._wrap(args)
        self.n_inputs = len(args)
        self.input_index = idx
        if node is not None:
            def hook(grad_input: tuple[Any, ...], grad_output: Any) -> Any:
                return self._input_hook(grad_input, grad_output)  # (named "hook", as torch's)

            node.register_hook(hook)
        return res

    def _input_hook(self, grad_input: tuple[Any, ...], _: Any) -> tuple[Any, ...] | None:
        if self.grad_outputs is None:
            # (a gradient reaching the inputs without passing through the outputs, e.g. in a
            # double backward)
            return None
        if self.input_index is None:
            return None
        res = self._pack(self.input_index, grad_input, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError(_messages.backward_hook_returned_invalid_number(out, res))
            res = out
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_index)

    def setup_output_hook(self, result: Any) -> Any:
        is_tuple = isinstance(result, tuple)
        args = result if is_tuple else (result,)
        res, idx, node = self._wrap(args)
        self.n_outputs = len(args)
        self.output_index = idx
        if node is not None:
            def hook(grad_input: Any, grad_output: tuple[Any, ...]) -> Any:
                return self._output_hook(grad_input, grad_output)

            node.register_hook(hook)
        return res if is_tuple else res[0]

    def _output_hook(self, _: Any, grad_output: tuple[Any, ...]) -> tuple[Any, ...] | None:
        if self.output_index is None:
            return None
        self.grad_outputs = self._pack(self.output_index, grad_output, self.n_outputs)
        expected = len(self.grad_outputs)
        for pre in self.user_pre_hooks:
            new = pre(self.module, self.grad_outputs)
            if new is None:
                continue
            if len(new) != expected:
                raise RuntimeError(_messages.backward_pre_hook_returned_invalid(new, expected))
            self.grad_outputs = new
        local = self.grad_outputs
        if self.input_index is None:
            # no input requires grad: the full hooks run here, with grad_input all None
            warnings.warn(_NO_INPUT_GRAD_WARNING, UserWarning, stacklevel=5)
            grad_inputs = (None,) * self.n_inputs
            for hook in self.user_hooks:
                r = hook(self.module, grad_inputs, self.grad_outputs)
                if r is not None and not (isinstance(r, tuple)
                                          and all(el is None for el in r)):
                    raise RuntimeError(_messages.backward_hook_modules_where_no())
            self.grad_outputs = None
        if local is None:
            return None
        return tuple(local[i] for i in self.output_index)


class Module:
    """Base class for all neural network modules (torch's ``nn.Module``).

    Subclasses call ``super().__init__()`` first, assign parameters, buffers and submodules as
    attributes, and define :meth:`forward`; calling the module runs the forward pre-hooks,
    ``forward`` and the forward hooks.
    """

    training: bool
    _version: int = 1
    #: whether this module has any hook (else ``__call__`` is just ``forward``)
    _hooked: bool = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise TypeError(_messages.module_init_unexpected_arguments(self, args, kwargs))
        sa = object.__setattr__
        sa(self, "training", True)
        sa(self, "_parameters", {})
        sa(self, "_buffers", {})
        sa(self, "_non_persistent_buffers_set", set())
        sa(self, "_modules", {})
        sa(self, "_forward_hooks", [])
        sa(self, "_forward_pre_hooks", [])
        sa(self, "_backward_hooks", [])
        sa(self, "_backward_pre_hooks", [])
        sa(self, "_hooked", False)

    forward: Callable[..., Any]

    def _forward_unimplemented(self, *args: Any) -> Any:
        raise NotImplementedError(_messages.module_missing_required_forward_function(self))

    forward = _forward_unimplemented

    # -- calling -------------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not self._hooked and not _global_hooked:  # no hooks: just forward
            return self.forward(*args, **kwargs)
        return self._call_impl(args, kwargs)

    def _refresh_hooked(self) -> None:
        object.__setattr__(self, "_hooked", bool(
            self._forward_pre_hooks or self._forward_hooks
            or self.__dict__.get("_backward_hooks") or self.__dict__.get("_backward_pre_hooks")
        ))

    def _call_impl(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """torch's ``Module._call_impl``: forward pre-hooks (global, then the module's), the
        backward hooks' input wrapping, ``forward``, forward hooks, the output wrapping."""
        d = self.__dict__
        pre = [*_global_forward_pre_hooks, *self._forward_pre_hooks]
        post = [*_global_forward_hooks, *self._forward_hooks]
        # (the backward hooks are those registered when forward runs, as torch's)
        bw = [*_global_backward_hooks, *d.get("_backward_hooks", ())]
        bw_pre = [*_global_backward_pre_hooks, *d.get("_backward_pre_hooks", ())]
        result = None
        called: set[int] = set()  # ids of the always_call hooks that already ran
        try:
            for rec in pre:
                if rec.with_kwargs:
                    res = rec.fn(self, args, kwargs)
                    if res is not None:
                        if isinstance(res, tuple) and len(res) == 2:
                            args, kwargs = res
                        else:
                            raise RuntimeError(_messages.forward_pre_hook_return_none(res))
                else:
                    res = rec.fn(self, args)
                    if res is not None:
                        args = res if isinstance(res, tuple) else (res,)
            bw_hook = None
            if bw or bw_pre:
                bw_hook = _BackwardHook(self, bw, bw_pre)
                args = bw_hook.setup_input_hook(args)
            result = self.forward(*args, **kwargs)
            for rec in post:
                if rec.always_call:
                    called.add(id(rec))
                res = (rec.fn(self, args, kwargs, result) if rec.with_kwargs
                       else rec.fn(self, args, result))
                if res is not None:
                    result = res
            if bw_hook is not None:
                if not isinstance(result, (_Tensor, tuple)):
                    warnings.warn(
                        _messages.backward_hooks_called_module_output(result), stacklevel=3,
                    )
                result = bw_hook.setup_output_hook(result)
            return result
        except Exception:
            # torch runs the always_call forward hooks that did not run yet (the global ones
            # first, called as hook(module, args, result)), then re-raises; an error inside
            # one of them is only a warning (the first error wins).
            for rec in _global_forward_hooks:
                if not rec.always_call or id(rec) in called:
                    continue
                try:
                    res = rec.fn(self, args, result)
                    if res is not None:
                        result = res
                except Exception as e:
                    warnings.warn(_messages.global_module_forward_hook_always(e), stacklevel=2)
            for rec in list(self._forward_hooks):
                if not rec.always_call or id(rec) in called:
                    continue
                try:
                    res = (rec.fn(self, args, kwargs, result) if rec.with_kwargs
                           else rec.fn(self, args, result))
                    if res is not None:
                        result = res
                except Exception as e:
                    warnings.warn(
                        _messages.module_forward_hook_always_call(e),
                        stacklevel=2,
                    )
            raise

    def _add_hook(self, hooks: list[Any], rec: Any, prepend: bool) -> RemovableHandle:
        hooks.insert(0, rec) if prepend else hooks.append(rec)
        object.__setattr__(self, "_hooked", True)
        return _ModuleHookHandle(hooks, rec, self)

    def _hook_list(self, name: str) -> list[Any]:
        hooks = self.__dict__.get(name)
        if hooks is None:  # (a module restored from state made before backward hooks)
            hooks = []
            object.__setattr__(self, name, hooks)
        return hooks

    def register_full_backward_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """Run ``hook(module, grad_output)`` when the gradients w.r.t. the module's outputs
        are computed, before :meth:`register_full_backward_hook`'s hooks; a returned tuple
        replaces ``grad_output`` (``None`` entries for non-tensor outputs and for outputs
        that got no gradient). As in torch, the outputs the caller receives come out of an
        identity node ``BackwardHookFunctionBackward``, and global pre-hooks
        (:func:`register_module_full_backward_pre_hook`) run first.

        Example:
            >>> import gradsum
            >>> m = gradsum.nn.Identity()
            >>> h = m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 10,))
            >>> x = gradsum.ones(2, requires_grad=True)
            >>> m(x).sum().backward(); x.grad
            tensor([10., 10.])
            >>> h.remove()
        """
        return self._add_hook(self._hook_list("_backward_pre_hooks"), hook, prepend)

    def register_full_backward_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """Run ``hook(module, grad_input, grad_output)`` each time the gradients w.r.t. the
        module are computed (once per backward, however many outputs); a returned tuple
        replaces ``grad_input``.

        As torch 2.13: ``grad_input`` has one entry per positional argument (``None`` for a
        non-tensor; keyword arguments are ignored), ``grad_output`` one per output (``None``
        for a non-tensor or an output that got no gradient). The hook fires when the
        gradients w.r.t. the inputs are computed; when no input requires grad it fires at
        the outputs instead, with ``grad_input`` all ``None`` and a warning (it may then
        only return ``None``s); when no output requires grad it does not fire. The module's
        tensor inputs and outputs pass through an identity node
        (``BackwardHookFunctionBackward``), so modifying them in place raises. Hooks are
        taken when ``forward`` runs; global ones (:func:`register_module_full_backward_hook`)
        run first.

        Example:
            >>> import gradsum
            >>> lin = gradsum.nn.Linear(2, 1)
            >>> seen = []
            >>> h = lin.register_full_backward_hook(
            ...     lambda mod, gi, go: seen.append((tuple(gi[0].shape), tuple(go[0].shape))))
            >>> x = gradsum.ones(3, 2, requires_grad=True)
            >>> out = lin(x)
            >>> out.grad_fn.name()
            'BackwardHookFunctionBackward'
            >>> out.sum().backward()
            >>> seen
            [((3, 2), (3, 1))]
            >>> h.remove()
        """
        return self._add_hook(self._hook_list("_backward_hooks"), hook, prepend)

    def register_forward_pre_hook(
        self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """Run ``hook(module, args)`` before :meth:`forward`; a returned value replaces the
        positional arguments (a non-tuple is wrapped in a tuple). With ``with_kwargs=True`` the
        hook is ``hook(module, args, kwargs)`` and may return ``(args, kwargs)``.

        Example:
            >>> import gradsum
            >>> lin = gradsum.nn.Identity()
            >>> h = lin.register_forward_pre_hook(lambda m, args: args[0] * 2)
            >>> lin(gradsum.tensor([1.0]))
            tensor([2.])
            >>> h.remove()
        """
        return self._add_hook(self._forward_pre_hooks, _Hook(hook, with_kwargs, False), prepend)

    def register_forward_hook(
        self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """Run ``hook(module, args, output)`` after :meth:`forward`; a returned value replaces
        the output. With ``with_kwargs=True`` the hook is ``hook(module, args, kwargs, output)``.

        Example:
            >>> import gradsum
            >>> m = gradsum.nn.Identity()
            >>> seen = []
            >>> h = m.register_forward_hook(lambda mod, args, out: seen.append(out.tolist()))
            >>> _ = m(gradsum.tensor([1.0]))
            >>> seen
            [[1.0]]
        """
        return self._add_hook(self._forward_hooks, _Hook(hook, with_kwargs, always_call),
                              prepend)

    # -- registration --------------------------------------------------------------------------
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register a tensor that is module state but not a parameter (it is in
        ``state_dict()`` unless ``persistent=False``; ``to()`` converts it).

        Example:
            >>> import gradsum
            >>> m = gradsum.nn.Module()
            >>> m.register_buffer("running", gradsum.zeros(2))
            >>> [n for n, _ in m.named_buffers()]
            ['running']
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError(_messages.cannot_assign_buffer_before_module())
        if not isinstance(name, str):
            raise TypeError(_messages.buffer_name_string(name))
        if "." in name:
            raise KeyError(_messages.buffer_name_contains_dot())
        if name == "":
            raise KeyError(_messages.buffer_name_empty())
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(_messages.attribute_already_exists(name))
        if tensor is not None and not isinstance(tensor, _Tensor):
            raise TypeError(_messages.cannot_assign_object_buffer_gradsum(tensor, name))
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` (a :class:`Parameter` or None) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError(_messages.cannot_assign_parameter_before_module())
        if not isinstance(name, str):
            raise TypeError(_messages.parameter_name_string(name))
        if "." in name:
            raise KeyError(_messages.parameter_name_contains_dot())
        if name == "":
            raise KeyError(_messages.parameter_name_empty())
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(_messages.attribute_already_exists(name))
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, _Parameter):
            raise TypeError(_messages.cannot_assign_object_parameter_gradsum(param, name))
        if param.grad_fn is not None:
            raise ValueError(_messages.cannot_assign_non_leaf_tensor(name))
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Register a child module under ``name`` (same as attribute assignment)."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(_messages.not_a_module_subclass(module))
        if not isinstance(name, str):
            raise TypeError(_messages.module_name_string(name))
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(_messages.attribute_already_exists(name))
        if "." in name:
            raise KeyError(_messages.module_name_contains_dot(name))
        if name == "":
            raise KeyError(_messages.module_name_empty())
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        """The submodule at dotted path ``target`` (``""`` is ``self``)."""
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(_messages.no_attribute(mod, item))
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(_messages.not_a_module(item))
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(_messages.no_attribute(mod, name))
        param = getattr(mod, name)
        if not isinstance(param, _Parameter):
            raise AttributeError(_messages.not_a_parameter(name))
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path ``target``.

        Example:
            >>> import gradsum
            >>> m = gradsum.nn.Sequential(gradsum.nn.Module())
            >>> m[0].register_buffer("count", gradsum.zeros(1))
            >>> m.get_buffer("0.count")
            tensor([0.])
        """
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(_messages.no_attribute(mod, name))
        buffer = getattr(mod, name)
        if name not in mod._buffers:
            raise AttributeError(_messages.not_a_buffer(name))
        return buffer

    # -- attribute protocol --------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        # (every parameter, buffer and submodule read of a forward lands here: the three
        # stores looked up directly, in torch's order)
        d = self.__dict__
        store = d.get("_parameters", _NO_STORE)
        if name in store:
            return store[name]
        store = d.get("_buffers", _NO_STORE)
        if name in store:
            return store[name]
        store = d.get("_modules", _NO_STORE)
        if name in store:
            return store[name]
        raise AttributeError(_messages.object_no_attribute(self, name))

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__

        def remove_from(*stores: Any) -> None:
            for s in stores:
                if name in s:
                    if isinstance(s, dict):
                        del s[name]
                    else:
                        s.discard(name)

        params = d.get("_parameters")
        if isinstance(value, _Parameter):
            if params is None:
                raise AttributeError(_messages.cannot_assign_parameters_before_module())
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(_messages.cannot_assign_parameter_gradsum_nn(value, name))
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError(_messages.cannot_assign_module_before_module())
            remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(_messages.cannot_assign_child_module_gradsum(value, name))
            modules[name] = value
            return
        if isinstance(value, _Tensor) and getattr(value, "_is_buffer", False):
            # nn.Buffer (torch 2.5+): registers itself, with its own persistence
            self.register_buffer(name, value, value.persistent)
            return
        buffers = d.get("_buffers")
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, _Tensor):
                raise TypeError(_messages.cannot_assign_buffer_gradsum_tensor(value, name))
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        keys = list(super().__dir__())
        keys += list(self._parameters) + list(self._buffers) + list(self._modules)
        return sorted(set(k for k in keys if not k[0].isdigit()))

    # -- traversal -----------------------------------------------------------------------------
    def named_modules(
        self, memo: set[Module] | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """``(dotted_name, module)`` for this module and every descendant, each module once
        (unless ``remove_duplicate=False``). ``memo``: modules to skip (with their subtrees),
        extended as modules are visited, like torch's."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        # The recursion (each child's named_modules in turn) with a stack of the open levels,
        # so that a module deep in the tree is not handed up through one generator per
        # ancestor; a child whose class overrides named_modules is still asked itself
        stack = [(prefix, iter(self._modules.items()))]
        while stack:
            pre, it = stack[-1]
            for name, module in it:
                if module is None:
                    continue
                sub = pre + ("." if pre else "") + name
                if type(module).named_modules is not Module.named_modules:
                    yield from module.named_modules(memo, sub, remove_duplicate)
                    continue
                if module in memo:
                    continue
                if remove_duplicate:
                    memo.add(module)
                yield sub, module
                stack.append((sub, iter(module._modules.items())))
                break
            else:
                stack.pop()

    def modules(self) -> Iterator[Module]:
        """This module and every descendant (each once)."""
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """``(name, module)`` for the direct children (each module once)."""
        memo: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        """The direct children."""
        for _, m in self.named_children():
            yield m

    def _named_members(
        self, store: str, prefix: str, recurse: bool, remove_duplicate: bool
    ) -> Iterator[tuple[str, Any]]:
        memo: set[int] = set()
        mods = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse
                else [(prefix, self)])
        for mod_prefix, mod in mods:
            for k, v in getattr(mod, store).items():
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield mod_prefix + ("." if mod_prefix else "") + k, v

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """``(dotted_name, parameter)``; a parameter shared by two modules appears once, under
        the first name met (torch's ``remove_duplicate``)."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter once (tied parameters are not repeated).

        Example:
            >>> from gradsum import nn
            >>> [tuple(p.shape) for p in nn.Linear(2, 3).parameters()]
            [(3, 2), (3,)]
        """
        cls = type(self)
        if (cls.named_parameters is not Module.named_parameters
                or cls._named_members is not Module._named_members):
            for _, p in self.named_parameters(recurse=recurse):
                yield p
            return
        # named_parameters' walk without building the names
        memo: set[int] = set()
        for _, mod in self.named_modules() if recurse else [("", self)]:
            for v in mod._parameters.values():
                if v is None or id(v) in memo:
                    continue
                memo.add(id(v))
                yield v

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """``(dotted_name, buffer)`` for registered buffers (None entries skipped)."""
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # -- modes and gradients -------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode on this module and all descendants; returns ``self``."""
        if not isinstance(mode, bool):
            raise ValueError(_messages.training_mode_expected_boolean())
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self) -> Module:
        """``train(False)``: dropout becomes the identity."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` of every parameter; returns ``self``."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the parameters' gradients: ``p.grad = None`` (default), or with
        ``set_to_none=False`` detach a grad that carries a graph and zero it in place (the
        same tensor object, so a reference held elsewhere sees the zeros).

        Example:
            >>> import gradsum
            >>> lin = gradsum.nn.Linear(2, 1)
            >>> lin(gradsum.ones(1, 2)).sum().backward()
            >>> g = lin.weight.grad
            >>> lin.zero_grad(set_to_none=False)
            >>> lin.weight.grad is g, g.tolist()
            (True, [[0.0, 0.0]])
            >>> lin.zero_grad()
            >>> lin.weight.grad is None
            True
        """
        for p in self.parameters():
            _clear_grad(p, set_to_none)

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every child (recursively) and then on ``self``; returns ``self``."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # -- conversion ----------------------------------------------------------------------------
    def _apply(self, fn: Callable[[Tensor], Tensor]) -> Module:
        for m in self.children():
            m._apply(fn)
        with _no_grad():
            for p in self._parameters.values():
                if p is None:
                    continue
                # Write the converted values into the same Parameter (identity survives, as
                # torch's default param.data = fn(param)).
                p.data = fn(p)
                if p.grad is not None:
                    p.grad.data = fn(p.grad)
            for k, b in self._buffers.items():
                if b is not None:
                    self._buffers[k] = fn(b)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Convert floating parameters and buffers to a dtype (``to(gradsum.float64)``) in
        place; returns ``self``. A device other than the CPU raises what torch's CPU build
        raises (``AssertionError: Torch not compiled with CUDA enabled`` for ``'cuda'``) once
        there is a tensor to move; a malformed device or an int raises at once, as there.

        Example:
            >>> import gradsum
            >>> m = gradsum.nn.Linear(2, 2)
            >>> m.to(gradsum.device("cpu")) is m, m.to("cpu", gradsum.float64).weight.dtype
            (True, gradsum.float64)
        """
        dtype = kwargs.pop("dtype", None)
        device = kwargs.pop("device", None)
        fmt = kwargs.pop("memory_format", None)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(_messages.unexpected_keyword_arguments(kwargs))
        for a in args:
            if isinstance(a, D.dtype):
                dtype = a
            elif isinstance(a, _Tensor):
                dtype = a.dtype
            elif isinstance(a, (str, _device.device)) or (
                    isinstance(a, int) and not isinstance(a, bool)):
                device = a
        target = None if device is None else _device.as_device(device, "to")
        if target is not None and target.type != "cpu" and self._has_tensors():
            raise _device.not_compiled(target.type)
        if fmt is not None:
            fmt = _memory_format.check(fmt, "to")
        if dtype is None and fmt is None:
            return self
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(_messages.nn_module_only_accepts_floating(dtype))

        def convert(t: Tensor) -> Tensor:
            cast = dtype if dtype is not None and t.is_floating_point() else None
            if fmt is not None and t.ndim in (4, 5):  # (torch relays out 4-D and 5-D only)
                return t.to(cast, memory_format=fmt)
            return t if cast is None else t.to(cast)

        return self._apply(convert)

    def float(self) -> Module:
        """Floating parameters and buffers to float32."""
        return self.to(D.float32)

    def double(self) -> Module:
        """Floating parameters and buffers to float64."""
        return self.to(D.float64)

    def half(self) -> Module:
        return self.to(D.float16)

    def cpu(self) -> Module:
        """The module itself (its tensors are on the CPU already)."""
        return self

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """torch's in-place ``Module.compile``: the arguments are checked as
        :func:`gradsum.compile` checks them, and the module keeps running eagerly (its
        ``state_dict`` keys are unchanged, as in torch)."""
        from gradsum.compiler import compile as compile_

        compile_(self, *args, **kwargs)

    def to_empty(self, *, device: Any, recurse: bool = True) -> Module:
        """Replace parameters and buffers by uninitialised tensors on ``device`` (torch's way
        to allocate a model built without storage); gradsum's uninitialised memory is zeros.
        Parameters keep their identity. A device other than the CPU raises what torch's CPU
        build raises, once there is a tensor to move. Returns ``self``.

        Example:
            >>> import gradsum
            >>> m = gradsum.nn.Linear(2, 1)
            >>> m.to_empty(device="cpu") is m, m.weight.shape
            (True, (1, 2))
        """
        from gradsum._creation import empty_like

        if device is not None and self._has_tensors():
            _device.check_factory(device, "empty_like", "aten::empty_strided")
        with _no_grad():
            for mod in (self.modules() if recurse else [self]):
                for p in mod._parameters.values():
                    if p is not None:
                        p.data = empty_like(p)
                        if p.grad is not None:
                            p.grad.data = empty_like(p.grad)
                for k, b in mod._buffers.items():
                    if b is not None:
                        mod._buffers[k] = empty_like(b)
        return self

    def _has_tensors(self) -> bool:
        return any(True for _ in self.parameters()) or any(True for _ in self.buffers())

    def cuda(self, device: Any = None) -> Module:
        """torch's CPU build: ``AssertionError: Torch not compiled with CUDA enabled`` for a
        module with parameters or buffers (a module without any is returned as is)."""
        if self._has_tensors():
            raise _device.check_cuda_target(device, "cuda")
        return self

    def xpu(self, device: Any = None) -> Module:
        """torch's CPU build: ``AssertionError: Torch not compiled with XPU enabled`` for a
        module with parameters or buffers."""
        if self._has_tensors():
            raise _device.check_cuda_target(device, "xpu")
        return self

    def ipu(self, device: Any = None) -> Module:
        """torch's CPU build: RuntimeError "PyTorch is not linked with support for ipu
        devices" for a module with parameters or buffers."""
        if self._has_tensors():
            raise _device.not_compiled("ipu")
        return self

    def mtia(self, device: Any = None) -> Module:
        """torch's CPU build: ``AssertionError: Torch not compiled with MTIA enabled`` for a
        module with parameters or buffers."""
        if self._has_tensors():
            raise _device.not_compiled("mtia")
        return self

    def type(self, dst_type: Any) -> Module:
        """Cast every parameter and buffer with ``Tensor.type(dst_type)``: a dtype, a legacy
        type (``gradsum.DoubleTensor``) or its name, as torch's ``Module.type``."""
        return self._apply(lambda t: t.type(dst_type))

    # -- state ---------------------------------------------------------------------------------
    def get_extra_state(self) -> Any:
        """Extra (non-tensor) state to save in ``state_dict()`` under ``"<prefix>_extra_state"``.

        Override it together with :meth:`set_extra_state`; only an overriding subclass gets
        the key, like torch.

        Example:
            >>> from gradsum import nn
            >>> class Counter(nn.Module):
            ...     def __init__(self):
            ...         super().__init__()
            ...         self.count = 3
            ...     def get_extra_state(self):
            ...         return {"count": self.count}
            ...     def set_extra_state(self, state):
            ...         self.count = state["count"]
            >>> sd = nn.Sequential(Counter()).state_dict()
            >>> list(sd.items())
            [('0._extra_state', {'count': 3})]
            >>> fresh = nn.Sequential(Counter())
            >>> fresh[0].count = 0
            >>> _ = fresh.load_state_dict(sd)
            >>> fresh[0].count
            3
        """
        raise RuntimeError(_messages.get_extra_state_not_overridden())

    def set_extra_state(self, state: Any) -> None:
        """Restore what :meth:`get_extra_state` returned (called by :meth:`load_state_dict`)."""
        raise RuntimeError(_messages.set_extra_state_not_overridden())

    def _save_to_state_dict(self, destination: dict[str, Any], prefix: str,
                            keep_vars: bool) -> None:
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args: Any, destination: dict[str, Any] | None = None,
                   prefix: str = "", keep_vars: bool = False) -> dict[str, Any]:
        """An ordered ``{dotted_name: tensor}`` of parameters and persistent buffers, detached
        (sharing their buffers) unless ``keep_vars=True``. Tied parameters appear under every
        name, like torch. A fresh dict carries torch's ``_metadata`` (``{module_path:
        {"version": 1}}``).

        Example:
            >>> from gradsum import nn
            >>> list(nn.Sequential(nn.Linear(2, 2), nn.ReLU()).state_dict())
            ['0.weight', '0.bias']
        """
        if args:  # torch's deprecated positional form: (destination, prefix, keep_vars)
            warnings.warn(
                _messages.positional_args_being_deprecated_use(),
                FutureWarning, stacklevel=2,
            )
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        metadata = getattr(destination, "_metadata", None)
        if metadata is not None:
            metadata[prefix[:-1]] = {"version": self._version}
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        return destination

    def _plan_load(self, state_dict: Mapping[str, Any], prefix: str, missing: list[str],
                   unexpected: list[str], errors: list[str],
                   actions: list[tuple[Module, str, Any, Any]]) -> None:
        """torch's ``_load_from_state_dict`` checks for this module's own entries, with the
        writes deferred into ``actions`` so that nothing is loaded when anything is wrong."""
        local_state = {k: v for k, v in self._parameters.items() if v is not None}
        for k, b in self._buffers.items():
            if b is not None and k not in self._non_persistent_buffers_set:
                local_state[k] = b
        for name, target in local_state.items():
            key = prefix + name
            if key not in state_dict:
                missing.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, _Tensor):
                errors.append(_messages.state_dict_value_not_tensor(key, value))
                continue
            if target.ndim == 0 and tuple(value.shape) == (1,):  # torch 0.3's 1-element form
                value = value[0]
            if tuple(value.shape) != tuple(target.shape):
                errors.append(_messages.state_dict_size_mismatch(key, value, target))
                continue
            actions.append((self, name, target, value))
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                actions.append((self, _EXTRA_STATE_KEY_SUFFIX, None, state_dict[extra_key]))
            else:
                missing.append(extra_key)
        elif extra_key in state_dict:
            unexpected.append(extra_key)
        for key in state_dict:
            if key.startswith(prefix) and key != extra_key:
                head = key[len(prefix):].split(".", 1)
                if len(head) > 1:
                    if head[0] not in self._modules:
                        unexpected.append(key)
                elif head[0] not in local_state:
                    unexpected.append(key)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy ``state_dict``'s tensors into the parameters and buffers (in place, under
        ``no_grad``; the Parameter objects keep their identity), and hand each
        ``"_extra_state"`` entry to the module's :meth:`set_extra_state`.

        Every key and shape is checked before anything is written: on any error
        (missing/unexpected keys with ``strict=True``, a shape mismatch, a non-tensor value)
        a ``RuntimeError`` "Error(s) in loading state_dict for X:" lists them all and nothing
        is loaded. Returns ``(missing_keys, unexpected_keys)``, each in torch's order (module
        by module, shared modules under every path).

        Example:
            >>> from gradsum import nn
            >>> a, b = nn.Linear(2, 2), nn.Linear(2, 2)
            >>> b.load_state_dict(a.state_dict())
            <All keys matched successfully>
            >>> bool((a.weight == b.weight).all())
            True
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(_messages.expected_state_dict_dict_like(state_dict))
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        actions: list[tuple[Module, str, Any, Any]] = []

        metadata = getattr(state_dict, "_metadata", None)

        def visit(module: Module, local: Mapping[str, Any], prefix: str) -> None:
            # torch's walk: every child path (no de-duplication), each seeing its own keys
            # and the checkpoint's per-module metadata (versions)
            module._plan_load(local, prefix, missing, unexpected, errors, actions)
            for name, child in module._modules.items():
                if child is not None:
                    sub = prefix + name + "."
                    part = OrderedDict((k, v) for k, v in local.items() if k.startswith(sub))
                    if metadata is not None:
                        part._metadata = metadata  # type: ignore[attr-defined]
                    visit(child, part, sub)

        visit(self, state_dict, "")
        if strict:
            if unexpected:
                errors.insert(0, _messages.state_dict_unexpected_keys(unexpected))
            if missing:
                errors.insert(0, _messages.state_dict_missing_keys(missing))
        if errors:
            raise RuntimeError(_messages.load_state_dict_errors(self, errors))
        with _no_grad():
            for module, name, target, value in actions:
                if target is None:
                    module.set_extra_state(value)
                elif not assign:
                    target.copy_(value)
                elif isinstance(target, _Parameter):
                    # torch keeps a Parameter given in the checkpoint, else wraps the tensor;
                    # either way with the model parameter's requires_grad
                    if isinstance(value, _Parameter):
                        value.requires_grad_(target.requires_grad)
                    else:
                        value = _Parameter(value, target.requires_grad)
                    setattr(module, name, value)
                else:
                    setattr(module, name, value)
        return _IncompatibleKeys(missing, unexpected)

    # -- repr ----------------------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The module-specific part of ``repr`` (override in subclasses)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            "(" + key + "): " + _addindent(repr(module), 2)
            for key, module in self._modules.items()
        ]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"
