"""Thread-local gradient recording switches: ``no_grad``, ``enable_grad``, ``set_grad_enabled``.

Each is a context manager and a decorator, like torch's.

Example:
    >>> import gradsum
    >>> x = gradsum.ones(2, requires_grad=True)
    >>> with gradsum.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    >>> @gradsum.no_grad()
    ... def f(t):
    ...     return t + 1
    >>> f(x).requires_grad
    False
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable, Generator
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class _State(threading.local):
    def __init__(self) -> None:
        self.enabled = True


_state = _State()


def is_grad_enabled() -> bool:
    """Whether operations are being recorded for autograd in this thread."""
    return _state.enabled


def _wrap_generator(func: Callable[..., Generator[Any, Any, Any]], target: bool
                    ) -> Callable[..., Generator[Any, Any, Any]]:
    """A decorated generator function, as torch's: the mode holds while the generator's body
    runs (each resumption), not while the caller runs between its yields."""

    def step(gen: Generator[Any, Any, Any], how: str, arg: Any = None) -> Any:
        prev = _state.enabled
        try:
            _state.enabled = target  # (inside the try: see _run_in_mode)
            if how == "send":
                return gen.send(arg)
            if how == "throw":
                return gen.throw(arg)
            return gen.close()
        finally:
            _state.enabled = prev

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
        gen = func(*args, **kwargs)
        try:
            response = step(gen, "send")
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    step(gen, "close")
                    raise
                except BaseException as e:
                    response = step(gen, "throw", e)
                else:
                    response = step(gen, "send", request)
        except StopIteration as e:
            return e.value

    return wrapper


def _run_in_mode(enabled: bool, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` with grad mode ``enabled``, the previous mode put back however it ends.

    What ``with no_grad():`` does, for gradsum's own steps (the optimizer's update, its
    closure), without a context manager: an interrupt can land at the start of any Python
    call, ``__exit__`` too, and one there would leave the mode changed for the rest of the
    program. Here the mode is read first, changed inside the ``try`` and put back by an
    assignment, so no exception at any point leaves it changed."""
    prev = _state.enabled
    try:
        _state.enabled = enabled
        return fn(*args)
    finally:
        _state.enabled = prev


class _GradModeBase:
    _target: bool

    def __enter__(self) -> None:
        self._prev = _state.enabled
        _state.enabled = self._target

    def __exit__(self, *exc: object) -> None:
        _state.enabled = self._prev

    def __call__(self, func: F) -> F:
        target = self._target
        if inspect.isgeneratorfunction(func):
            return _wrap_generator(func, target)  # type: ignore[return-value]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            prev = _state.enabled
            try:
                _state.enabled = target  # (inside the try: see _run_in_mode)
                return func(*args, **kwargs)
            finally:
                _state.enabled = prev

        return wrapper  # type: ignore[return-value]


class _NoParamDecorator(_GradModeBase):
    """A mode that is also a decorator without parentheses (``@no_grad`` as ``@no_grad()``),
    like torch's."""

    def __new__(cls, orig_func: Callable[..., Any] | None = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)

    def __init__(self, orig_func: Callable[..., Any] | None = None) -> None:
        pass


class no_grad(_NoParamDecorator):
    """Disable recording: results of ops do not require grad and no graph is built."""

    _target = False


class enable_grad(_NoParamDecorator):
    """Enable recording (inside a ``no_grad`` block, for example)."""

    _target = True


class set_grad_enabled(_GradModeBase):
    """Set recording on or off; takes effect immediately and also works as a context manager.

    Example:
        >>> import gradsum
        >>> _ = gradsum.set_grad_enabled(False)
        >>> gradsum.is_grad_enabled()
        False
        >>> _ = gradsum.set_grad_enabled(True)
    """

    def __init__(self, mode: bool) -> None:
        self._prev = _state.enabled
        self._target = bool(mode)
        _state.enabled = self._target

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _state.enabled = self._prev

    def __call__(self, func: F) -> F:
        # Used as a decorator: undo the immediate switch done in __init__.
        _state.enabled = self._prev
        return super().__call__(func)


class inference_mode(_GradModeBase):
    """Alias of :class:`no_grad` (gradsum has no separate inference tensors); like torch's,
    also a decorator without parentheses."""

    def __new__(cls, mode: Any = True) -> Any:
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __init__(self, mode: Any = True) -> None:
        self._target = not mode
