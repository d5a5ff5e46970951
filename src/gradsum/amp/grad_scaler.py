"""``gradsum.amp.GradScaler``: torch's dynamic loss scaling, working on the CPU as torch's does.

``scale(loss)`` multiplies by the current scale (a 0-d float32 tensor, created on first use),
``unscale_(optimizer)`` divides the gradients by it in place and records whether any is inf or
nan, ``step(optimizer)`` unscales if that was not done and skips ``optimizer.step()`` when a
gradient was not finite, and ``update()`` multiplies the scale by ``backoff_factor`` after a
skipped step, or by ``growth_factor`` after ``growth_interval`` finite steps in a row. The
arithmetic is torch's: the inverse scale is ``1 / scale`` in float64 rounded to float32, the
gradients are multiplied by it in their own dtype's compute type (float32 for half and
bfloat16), and the scale is updated in float32.

``GradScaler("cuda")`` (the default device, as in torch) warns and disables itself on this
CPU-only build, as torch's does; disabled, ``scale`` returns its input, ``step`` calls
``optimizer.step()``, ``update``/``unscale_`` do nothing, ``get_scale()`` is 1.0 and
``state_dict()`` is ``{}``.

Example:
    >>> import gradsum
    >>> w = gradsum.nn.Parameter(gradsum.ones(2))
    >>> opt = gradsum.optim.SGD([w], lr=0.1)
    >>> scaler = gradsum.amp.GradScaler("cpu", init_scale=4.0)
    >>> scaler.scale((w * 3).sum()).backward()
    >>> w.grad.tolist()
    [12.0, 12.0]
    >>> scaler.step(opt)
    >>> w.grad.tolist(), w.tolist()
    ([3.0, 3.0], [0.699999988079071, 0.699999988079071])
    >>> scaler.update()
    >>> scaler.get_scale()
    4.0
"""

from __future__ import annotations

import warnings
from collections import abc, defaultdict
from enum import Enum
from typing import Any

from gradsum import _creation
from gradsum import _dtype as D
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import no_grad

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state() -> dict[str, Any]:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


_FIX = ("This may indicate your script did not use scaler.scale(loss or outputs) earlier in "
        "the iteration.")


def _non_finite_check_and_unscale_(grads: list[Tensor], found_inf: Tensor,
                                   inv_scale: Tensor) -> None:
    """torch's ``_amp_foreach_non_finite_check_and_unscale_`` on the CPU: ``found_inf`` is set
    to 1.0 if any gradient holds an inf or nan, and every gradient is multiplied by
    ``inv_scale`` in place (in float32 for half and bfloat16 gradients, as torch's opmath)."""
    inv = inv_scale._array
    for g in grads:
        arr = g._array
        if not bool(xp.isfinite(arr).all()):
            found_inf._array[...] = 1.0
        if float(inv) != 1.0:
            wide = arr.astype(xp.float32) if arr.itemsize < 4 else arr
            arr[...] = (wide * inv).astype(arr.dtype, copy=False)
        g._vc[0] += 1  # (an in-place write, as torch's kernel)


def _update_scale_(scale: Tensor, growth_tracker: Tensor, found_inf: Tensor,
                   growth_factor: float, backoff_factor: float, growth_interval: int) -> None:
    """torch's ``_amp_update_scale_`` on the CPU (float32 scale, int32 tracker)."""
    s = scale._array
    t = growth_tracker._array
    if float(found_inf._array):
        s[...] = xp.float32(float(s) * backoff_factor)
        t[...] = 0
    else:
        successful = int(t) + 1
        if successful == growth_interval:
            new_scale = xp.float32(float(s) * growth_factor)
            if xp.isfinite(new_scale):
                s[...] = new_scale
            t[...] = 0
        else:
            t[...] = successful
    scale._vc[0] += 1
    growth_tracker._vc[0] += 1


class GradScaler:
    """Dynamic loss scaling (torch's ``torch.amp.GradScaler``).

    Args:
        device: ``"cpu"`` scales for real; ``"cuda"`` (the default, as in torch) warns and
            disables itself on this CPU-only build.
        init_scale: the first scale.
        growth_factor: multiplies the scale after ``growth_interval`` finite steps in a row.
        backoff_factor: multiplies the scale after a step with inf/nan gradients.
        growth_interval: finite steps before the scale grows.
        enabled: ``False`` makes every method a pass-through (``step`` still steps).
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled:  # (torch's CPU build: no CUDA)
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale: Tensor | None = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker: Tensor | None = None
            self._per_optimizer_states: dict[int, dict[str, Any]] = defaultdict(
                _refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname: str) -> tuple[Tensor, Tensor]:
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + _FIX)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + _FIX)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self) -> None:
        if self._growth_tracker is not None:
            raise AssertionError("_growth_tracker initialized before _scale")
        self._scale = _creation.full((), self._init_scale, dtype=D.float32)
        self._growth_tracker = _creation.full((), self._init_growth_tracker, dtype=D.int32)

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a tensor, or an iterable of them, nested) times the current scale;
        returned unchanged when the scaler is disabled."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker()
            return outputs * self._scale

        def apply_scale(val: Any) -> Any:
            if isinstance(val, Tensor):
                if self._scale is None:
                    self._lazy_init_scale_growth_tracker()
                return val * self._scale
            if isinstance(val, abc.Iterable):
                iterable = map(apply_scale, val)
                if isinstance(val, (list, tuple)):
                    return type(val)(iterable)
                return iterable
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer: Any, inv_scale: Tensor, found_inf: Tensor,
                        allow_fp16: bool) -> dict[str, Tensor]:
        grads_by_dtype: dict[Any, list[Tensor]] = defaultdict(list)
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, Tensor):
                        raise AssertionError(
                            f"expected param to be torch.Tensor, got {type(param).__name__}")
                    if param.grad is None:
                        continue
                    if not allow_fp16 and param.grad.dtype is D.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    grads_by_dtype[param.grad.dtype].append(param.grad)
            for grads in grads_by_dtype.values():
                _non_finite_check_and_unscale_(grads, found_inf, inv_scale)
        # (torch keys this by device; the one device here is the CPU)
        return {"cpu": found_inf} if grads_by_dtype else {}

    def unscale_(self, optimizer: Any) -> None:
        """Divide ``optimizer``'s gradients by the scale in place (once per step), recording
        whether any is inf or nan; gradients may then be clipped before :meth:`step`."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        assert self._scale is not None  # (checked above)
        inv_scale = _creation.full((), xp.float32(1.0 / float(self._scale._array)),
                                   dtype=D.float32)  # (torch: scale.double().reciprocal())
        found_inf = _creation.full((), 0.0, dtype=D.float32)
        optimizer_state["found_inf_per_device"] = self._unscale_grads_(
            optimizer, inv_scale, found_inf, False)
        optimizer_state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer: Any, optimizer_state: dict[str, Any], *args: Any,
                        **kwargs: Any) -> Any:
        retval = None
        if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        return retval

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """:meth:`unscale_` (unless already called), then ``optimizer.step(*args, **kwargs)``
        unless a gradient was inf or nan; returns what ``optimizer.step`` returned."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale_growth_tracker("step")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if optimizer_state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(optimizer_state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, optimizer_state, *args, **kwargs)
        optimizer_state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Back off the scale after a skipped step, grow it after ``growth_interval`` finite
        ones; or set it to ``new_scale``. Call once per iteration, after every step."""
        if not self._enabled:
            return
        _scale, _growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                _scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if not isinstance(new_scale, Tensor) or new_scale.numel() != 1 or \
                        new_scale.requires_grad:
                    raise AssertionError(reason)
                _scale.copy_(new_scale)
        else:
            found_infs = [found_inf for state in self._per_optimizer_states.values()
                          for found_inf in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_inf_combined = found_infs[0]
            for extra in found_infs[1:]:
                found_inf_combined = found_inf_combined + extra
            _update_scale_(_scale, _growth_tracker, found_inf_combined, self._growth_factor,
                           self._backoff_factor, self._growth_interval)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _get_scale_async(self) -> Tensor | None:
        return self._scale

    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled)."""
        if self._enabled:
            scale = self._get_scale_async()
            return self._init_scale if scale is None else float(scale.item())
        return 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if self._enabled:
            return (self._init_growth_tracker if self._growth_tracker is None
                    else int(self._growth_tracker.item()))
        return 0

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """``scale``, ``growth_factor``, ``backoff_factor``, ``growth_interval`` and
        ``_growth_tracker`` (Python numbers); ``{}`` when disabled."""
        if self._enabled:
            return {
                "scale": self.get_scale(),
                "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker(),
            }
        return {}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`'s entries (a no-op when disabled)."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the "
                                     "beginning of an iteration, or at the end after "
                                     "scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def _check_inf_per_device(self, optimizer: Any) -> dict[str, Any]:
        _scale, _ = self._check_scale_growth_tracker("_check_inf_per_device")
        dummy_inv_scale = _creation.full((), 1.0, dtype=D.float32)
        found_inf = _creation.full((), 0.0, dtype=D.float32)
        self._per_optimizer_states[id(optimizer)]["found_inf_per_device"] = (
            self._unscale_grads_(optimizer, dummy_inv_scale, found_inf, True))
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

    def _found_inf_per_device(self, optimizer: Any) -> dict[str, Any]:
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]
