"""Random fills of a tensor in place: ``normal_``, ``uniform_``, ``bernoulli_``, ``exponential_``,
``random_``, ``geometric_``, ``cauchy_``, ``log_normal_``.

Example:
    >>> import gradsum
    >>> _ = gradsum.manual_seed(0)
    >>> x = gradsum.empty(1000).uniform_(0, 1)
    >>> bool((x >= 0).all()) and bool((x < 1).all())
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gradsum import _creation
from gradsum import _dtype as D
from gradsum._tensor import Tensor
from gradsum.ops import _messages
from gradsum.ops._core import tensor_method
from gradsum.ops.inplace import _check_leaf, _write

#: fills torch implements for floating dtypes only: its kernel name (None: its own message)
_FLOAT_ONLY_FILLS = {"normal_": "normal_kernel_cpu", "uniform_": "check_uniform_bounds",
                     "exponential_": None}


def _random_fill(name: str) -> Callable[..., Tensor]:
    def method(self: Tensor, *args: Any, generator: Any = None, **kwargs: Any) -> Tensor:
        from gradsum import _random

        _check_leaf(self, name)
        kind = self._array.dtype.kind
        if kind not in "fV" and name in _FLOAT_ONLY_FILLS:  # (torch has no integer kernel)
            kernel = _FLOAT_ONLY_FILLS[name]
            if kernel is None:
                given = _messages.torch_name(self._array.dtype)
                raise RuntimeError(_messages.exponential_dtype_not_floating(given))
            raise D.not_implemented(kernel, self._array.dtype,
                                    "Convert the tensor with .float() first.")
        arr = _random.sample(name, self._array.shape, self._array.dtype, generator, *args,
                             **kwargs)
        _write(self, arr, name)
        return self

    method.__name__ = name
    method.__doc__ = f"Fill in place with random values ({name[:-1]}), from the generator."
    return tensor_method(name)(method)


normal_ = _random_fill("normal_")
uniform_ = _random_fill("uniform_")
bernoulli_ = _random_fill("bernoulli_")
exponential_ = _random_fill("exponential_")
random_ = _random_fill("random_")


# -- random fills ---------------------------------------------------------------------------------
def _fill_random(self: Tensor, name: str, arr: Any) -> Tensor:
    _check_leaf(self, name)
    _write(self, arr.astype(self._array.dtype), name)
    return self


@tensor_method("geometric_")
def geometric_(self: Tensor, p: float, *, generator: Any = None) -> Tensor:
    """Fill in place with draws of a geometric distribution (trials to the first success,
    ``1, 2, ...``).

    Example:
        >>> import gradsum
        >>> bool((gradsum.zeros(5).geometric_(0.5) >= 1).all())
        True
    """
    from gradsum import _random

    if not 0 < p < 1:
        raise RuntimeError(_messages.geometric_p_out_of_range(p))
    return _fill_random(self, "geometric_",
                        _random.rng(generator).geometric(p, self._array.shape))


def _float_fill_check(self: Tensor, kernel: str) -> None:
    if self._array.dtype.kind not in "fV":
        raise D.not_implemented(kernel, self._array.dtype, "Convert with .float() first.")


@tensor_method("cauchy_")
def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator: Any = None
            ) -> Tensor:
    """Fill in place with draws of a Cauchy distribution.

    Example:
        >>> import gradsum
        >>> gradsum.zeros(3).cauchy_().shape
        (3,)
    """
    from gradsum import _random

    if self._array.dtype.kind not in "fV":
        given = {"int64": "long int", "int32": "int", "int16": "short int",
                 "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}
        raise RuntimeError(_messages.cauchy_dtype_not_floating(given, self))
    if not sigma > 0:
        raise RuntimeError(_messages.cauchy_sigma_not_positive(sigma))
    r = _random.rng(generator)
    return _fill_random(self, "cauchy_", median + sigma * r.standard_cauchy(self._array.shape))


@tensor_method("log_normal_")
def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator: Any = None
                ) -> Tensor:
    """Fill in place with ``exp`` of normal draws (``mean``, ``std``).

    Example:
        >>> import gradsum
        >>> bool((gradsum.zeros(3).log_normal_() > 0).all())
        True
    """
    from gradsum import _random

    _float_fill_check(self, "log_normal_cpu")
    if not std > 0:
        raise RuntimeError(_messages.log_normal_std_not_positive(std))
    r = _random.rng(generator)
    return _fill_random(self, "log_normal_", r.lognormal(mean, std, self._array.shape))

# torch's Tensor.bernoulli() and Tensor.multinomial(): the creation functions, tensor first
tensor_method("bernoulli")(_creation.bernoulli)
tensor_method("multinomial")(_creation.multinomial)
