"""``gradsum.compile`` and ``gradsum.compiler``: torch.compile's interface, run eagerly.

gradsum has no graph capture yet, so :func:`compile` checks torch.compile's arguments as
torch does and then runs the model eagerly, as ``torch.compile(backend="eager")`` runs it:
the same results as the uncompiled call, to the bit. A function comes back wrapped (same
name and docstring); a Module comes back as an :class:`OptimizedModule` around it, as in
torch, so ``compiled._orig_mod`` is the original and the compiled module's ``state_dict`` keys
carry the ``_orig_mod.`` prefix, exactly as torch's (checkpoints saved from a compiled model
are prefixed, and load back into a compiled model).

Example:
    >>> import gradsum
    >>> model = gradsum.nn.Linear(2, 1)
    >>> compiled = gradsum.compile(model)
    >>> compiled._orig_mod is model, list(compiled.state_dict())
    (True, ['_orig_mod.weight', '_orig_mod.bias'])
    >>> x = gradsum.ones(3, 2)
    >>> bool((compiled(x) == model(x)).all())
    True
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gradsum.nn.modules.module import Module

__all__ = ["OptimizedModule", "compile", "disable", "is_compiling", "is_dynamo_compiling",
           "is_exporting", "list_backends", "reset"]

#: torch.compile's modes (torch checks ``mode`` against these)
MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")

#: the backend names torch 2.13 registers (``torch._dynamo.list_backends(exclude_tags=())``)
BACKENDS = ("aot_eager", "aot_eager_decomp_partition", "aot_eager_decomp_partition_crossref",
            "aot_eager_decomp_partition_with_mode", "aot_eager_default_partitioner", "aot_ts",
            "cudagraphs", "eager", "eager_debug", "eager_noexcept", "inductor",
            "invoke_subgraph", "openxla", "openxla_eval", "pre_dispatch_eager", "ts", "tvm")


class InvalidBackend(RuntimeError):
    """torch's ``torch._dynamo.exc.InvalidBackend`` (a RuntimeError)."""


class OptimizedModule(Module):
    """What :func:`compile` returns for a Module: it holds the original as ``_orig_mod``,
    forwards to it, and reads unknown attributes from it, as torch's ``OptimizedModule``."""

    def __init__(self, mod: Module) -> None:
        super().__init__()
        self._orig_mod = mod

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == "_orig_mod" or "_modules" not in self.__dict__:
                raise
            return getattr(self._modules["_orig_mod"], name)


def _check(model: Any, backend: Any, mode: str | None, options: Any) -> None:
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(MODES)}")
    if isinstance(backend, str) and backend not in BACKENDS:
        raise InvalidBackend(f"Invalid backend: '{backend}', see "
                             "`torch._dynamo.list_backends()` for available backends.")
    if backend is not None and not isinstance(backend, str) and not callable(backend):
        raise InvalidBackend(f"Invalid backend: {backend!r}: pass a backend name or a "
                             "callable.")
    if model is not None and not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is "
                             "provided.")


def compile(model: Callable[..., Any] | None = None, *, fullgraph: bool = False,
            dynamic: bool | None = None, backend: str | Callable[..., Any] | None = "inductor",
            mode: str | None = None, options: dict[str, Any] | None = None,
            name: str | None = None, disable: bool = False,
            recompile_limit: int | None = None, **kwargs: Any) -> Any:
    """torch.compile's arguments, checked as torch checks them; the model then runs eagerly
    (as ``torch.compile(backend="eager")``: gradsum has no graph capture yet).

    Used as a function (``compile(model)``) or a decorator (``@compile``,
    ``@compile(mode="max-autotune")``). ``disable=True`` returns the model itself, as torch.
    Checked as torch does: ``mode`` together with ``options``, an unknown ``mode`` or backend
    name, a model that is not callable. ``options`` configure torch's inductor, which
    gradsum does not have: their names are not checked (torch raises for an unknown one).

    Returns:
        For a Module, an :class:`OptimizedModule` wrapping it; for a function, a wrapper with
        its name; without a model, a decorator.

    Example:
        >>> import gradsum
        >>> @gradsum.compile(mode="reduce-overhead")
        ... def f(x):
        ...     return x * 2
        >>> f(gradsum.ones(2)).tolist(), f.__name__
        ([2.0, 2.0], 'f')
    """
    _check(model, backend, mode, options)
    if model is None:
        def decorator(fn: Callable[..., Any]) -> Any:
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                           mode=mode, options=options, name=name, disable=disable,
                           recompile_limit=recompile_limit, **kwargs)

        return decorator
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model)

    @functools.wraps(model)
    def compiled(*args: Any, **kw: Any) -> Any:
        return model(*args, **kw)

    compiled._torchdynamo_orig_callable = model  # type: ignore[attr-defined]
    return compiled


def disable(fn: Callable[..., Any] | None = None, recursive: bool = True, *,
            reason: str | None = None) -> Any:
    """Exclude ``fn`` from compilation (it runs eagerly anyway): a wrapper of ``fn``, as
    torch's (a decorator without ``fn``)."""
    if fn is None:
        return lambda f: disable(f, recursive, reason=reason)

    @functools.wraps(fn)
    def eager(*args: Any, **kw: Any) -> Any:
        return fn(*args, **kw)

    return eager


def is_compiling() -> bool:
    """Whether the caller is being traced by the compiler: never, in gradsum."""
    return False


def is_dynamo_compiling() -> bool:
    """Whether dynamo is tracing the caller: never, in gradsum."""
    return False


def is_exporting() -> bool:
    """Whether the caller is being exported: never, in gradsum."""
    return False


def reset() -> None:
    """Clear compilation caches: there are none."""


def list_backends(exclude_tags: Any = ("debug", "experimental")) -> list[str]:
    """torch's non-debug backend names (every name :func:`compile` accepts runs eagerly)."""
    if exclude_tags:
        return ["cudagraphs", "inductor", "openxla", "tvm"]
    return list(BACKENDS)
