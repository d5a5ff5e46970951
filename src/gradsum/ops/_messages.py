"""The error texts of ops that nn.functional shares (the distances, hardshrink, logsigmoid).

One function per error, named for it, taking the values the text names and returning the
text (as ``autograd/_messages.py`` and ``nn/_messages/``); a raise site reads
``raise RuntimeError(_messages.expected_common_dtype_floating_point(dt))``. The texts are
PyTorch's phrases followed by the fix. ``torch_name`` prints a dtype as torch's texts do; the
nn messages (``nn/_messages/_format.py``) use it from here, since ops may not import nn.
"""

from __future__ import annotations

from typing import Any

_TORCH_NAMES = {
    "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
    "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
    "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}


def torch_name(dtype: Any) -> str:
    """torch's ScalarType name of a dtype ("Float", "Long", ...), as its messages print it."""
    return _TORCH_NAMES.get(dtype.name, dtype.name)


# -- activations -------------------------------------------------------------------------------
def kernel_not_floating_input(kernel: Any, input: Any) -> str:
    return (
        f"\"{kernel}\" not implemented for '{torch_name(input.dtype)}': "
        "convert the input with .float()"
    )


# -- distances ---------------------------------------------------------------------------------
def expected_common_dtype_floating_point(dt: Any) -> str:
    return (
        f"expected common dtype to be floating point, yet common dtype is {torch_name(dt)}"
        ": convert the inputs with .float()"
    )


def size_tensor_match_size_tensor_b_cosine(x1: Any, x2: Any) -> str:
    return (
        f"The size of tensor a ({x1.shape[-1] if x1.ndim else 1}) must match the size of "
        f"tensor b ({x2.shape[-1] if x2.ndim else 1}): cosine_similarity broadcasts "
        f"x1 {list(x1.shape)} and x2 {list(x2.shape)}"
    )
