"""Activation modules: thin wrappers over :mod:`gradsum.nn.functional` with torch's reprs.

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> nn.LeakyReLU(0.2)
    LeakyReLU(negative_slope=0.2)
    >>> nn.Softmax(dim=-1)(gradsum.tensor([0.0, 0.0])).tolist()
    [0.5, 0.5]
"""

from __future__ import annotations

from typing import Any

from gradsum import _creation, _device
from gradsum._tensor import Tensor
from gradsum.nn import functional as F
from gradsum.nn import init as _init
from gradsum.nn.module import Module
from gradsum.nn.parameter import Parameter


class ReLU(Module):
    """``max(x, 0)`` (``inplace=True`` overwrites the input)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    """Gaussian error linear unit (``approximate='tanh'`` for the tanh form)."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """``x * sigmoid(x)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Sigmoid(Module):
    """``1 / (1 + exp(-x))``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.sigmoid(input)


class Tanh(Module):
    """Hyperbolic tangent."""

    def forward(self, input: Tensor) -> Tensor:
        return F.tanh(input)


class LeakyReLU(Module):
    """``x`` where positive, ``negative_slope * x`` elsewhere."""

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace
                                                          else "")


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold``."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softmax(Module):
    """Softmax along ``dim``."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """Log-softmax along ``dim``."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


def _inplace_str(inplace: bool, lead: str = ", ") -> str:
    return f"{lead}inplace=True" if inplace else ""


class _Inplace(Module):
    """An activation whose only option is ``inplace``."""

    _fn = staticmethod(F.selu)

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, inplace=self.inplace)


class ELU(Module):
    """``x`` if ``x > 0`` else ``alpha * (exp(x) - 1)``.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> nn.ELU(alpha=0.5, inplace=True)
        ELU(alpha=0.5, inplace=True)
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_str(self.inplace)}"


class CELU(ELU):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)


class SELU(_Inplace):
    """``scale * elu(x, alpha)`` with the self-normalising constants."""

    _fn = staticmethod(F.selu)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace, "")


class Hardtanh(Module):
    """``clamp(x, min_val, max_val)`` (zero gradient at and beyond the bounds)."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__()
        if min_value is not None:
            min_val = min_value
        if max_value is not None:
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if not self.max_val > self.min_val:  # (torch asserts this)
            raise F._ArgAssertionError(
                f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})"
            )

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_str(self.inplace)}"


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace, "")


class Hardsigmoid(_Inplace):
    """``min(max(x + 3, 0), 6) / 6``."""

    _fn = staticmethod(F.hardsigmoid)


class Hardswish(_Inplace):
    """``x * hardsigmoid(x)``."""

    _fn = staticmethod(F.hardswish)


class Mish(_Inplace):
    """``x * tanh(softplus(x))``."""

    _fn = staticmethod(F.mish)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace, "")


class LogSigmoid(Module):
    """``log(sigmoid(x))``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.logsigmoid(input)


class Softsign(Module):
    """``x / (1 + |x|)``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softsign(input)


class Tanhshrink(Module):
    """``x - tanh(x)``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.tanhshrink(input)


class _Shrink(Module):
    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def extra_repr(self) -> str:
        return str(self.lambd)


class Softshrink(_Shrink):
    """Shrink towards 0 by ``lambd`` (0 inside ``[-lambd, lambd]``)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softshrink(input, self.lambd)


class Hardshrink(_Shrink):
    """0 inside ``[-lambd, lambd]``, ``x`` elsewhere."""

    def forward(self, input: Tensor) -> Tensor:
        return F.hardshrink(input, self.lambd)


class Threshold(Module):
    """``value`` where ``x <= threshold``, else ``x``."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return (f"threshold={self.threshold}, value={self.value}"
                f"{_inplace_str(self.inplace)}")


class Softmin(Module):
    """``softmax(-x)`` along ``dim``."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class GLU(Module):
    """Gated linear unit over the two halves of ``dim``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class PReLU(Module):
    """Leaky ReLU with a learnable slope: ``num_parameters`` slopes (1, or one per channel),
    initialised to ``init``.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> m = nn.PReLU(3, init=0.1)
        >>> m
        PReLU(num_parameters=3)
        >>> m.weight.tolist()
        [0.10000000149011612, 0.10000000149011612, 0.10000000149011612]
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(_creation.empty((num_parameters,), dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """Randomised leaky ReLU (random slopes in U(lower, upper) while training, their mean in
    ``eval()``)."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{_inplace_str(self.inplace)}"
