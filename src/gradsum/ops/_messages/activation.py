"""The texts of the activations (and of what nn.functional shares with them: the distances)."""

from __future__ import annotations

from typing import Any

from gradsum.ops._messages._format import torch_name


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
