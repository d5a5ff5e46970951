"""Watching an optimizer's ``step`` and ``zero_grad`` (and a module's ``zero_grad``).

Step hooks use the optimizer's own ``register_step_pre_hook`` / ``register_step_post_hook``
when it has them (gradsum.optim and torch.optim do), so other code that wraps ``step`` keeps
working; otherwise ``step`` is wrapped on the instance. ``zero_grad`` has no hook in torch's
API, so it is wrapped on the instance. Every installer returns a function that undoes it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

Undo = Callable[[], None]


def _wrap_method(obj: Any, name: str, before: Callable[..., Any] | None,
                 after: Callable[..., Any] | None) -> Undo:
    original = getattr(obj, name)
    had_instance_attr = name in getattr(obj, "__dict__", {})

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if before is not None:
            before(args, kwargs)
        out = original(*args, **kwargs)
        if after is not None:
            after(args, kwargs)
        return out

    wrapper.__gradsum_toolkit_wrapper__ = True  # type: ignore[attr-defined]
    setattr(obj, name, wrapper)

    def undo() -> None:
        if getattr(obj, name, None) is wrapper:
            if had_instance_attr:
                setattr(obj, name, original)
            else:
                delattr(obj, name)

    return undo


def watch_step(optimizer: Any, pre: Callable[[], None], post: Callable[[], None]) -> Undo:
    """Call ``pre()`` before and ``post()`` after every ``optimizer.step()``."""
    if hasattr(optimizer, "register_step_pre_hook") and hasattr(
        optimizer, "register_step_post_hook"
    ):
        h1 = optimizer.register_step_pre_hook(lambda opt, args, kwargs: pre())
        h2 = optimizer.register_step_post_hook(lambda opt, args, kwargs: post())

        def undo() -> None:
            h1.remove()
            h2.remove()

        return undo
    return _wrap_method(optimizer, "step", lambda a, k: pre(), lambda a, k: post())


def watch_zero_grad(obj: Any, after: Callable[[str], None]) -> Undo:
    """Call ``after(description)`` after every ``obj.zero_grad(...)``."""
    owner = "optimizer" if hasattr(obj, "param_groups") else "module"

    def _after(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        set_to_none = kwargs.get("set_to_none", args[0] if args else True)
        after(f"{owner}.zero_grad(set_to_none={set_to_none})")

    return _wrap_method(obj, "zero_grad", None, _after)
