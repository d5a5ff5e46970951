"""The texts of the products (ops/blas/)."""

from __future__ import annotations

from typing import Any

from gradsum.ops._messages._format import torch_name


def _dtype_name(dt: Any) -> str:
    """The lowercase C type name torch's mm texts print ("float", "double", "long")."""
    return {"float32": "float", "float64": "double", "int64": "long", "int32": "int"}.get(
        str(dt), str(dt)
    )


def matmul_argument_not_tensor(bad: Any) -> str:
    return f"matmul(): argument must be Tensor, not {bad}. Wrap it with tensor()."


def matmul_needs_1d_arguments(x: Any, y: Any) -> str:
    return (
        f"both arguments to matmul need to be at least 1D, but they are {x.ndim}D and "
        f"{y.ndim}D"
    )


def mm_dtype_mismatch(x: Any, y: Any) -> str:
    return (
        f"expected m1 and m2 to have the same dtype, but got: {_dtype_name(x.dtype)} != "
        f"{_dtype_name(y.dtype)}. Convert one operand (e.g. b.to(a.dtype))."
    )


def inconsistent_tensor_size(n_a: Any, n_b: Any) -> str:
    return (
        f"inconsistent tensor size, expected tensor [{n_a}] and src [{n_b}] to have the same "
        f"number of elements, but got {n_a} and {n_b} elements respectively: the dot "
        f"product of two vectors needs equal lengths"
    )


def mat1_mat2_shapes_cannot_be_multiplied(sa: Any, sb: Any, k_a: Any, k_b: Any) -> str:
    return (
        f"mat1 and mat2 shapes cannot be multiplied ({sa} and {sb}): the inner dimensions "
        f"{k_a} and {k_b} must agree. Transpose or reshape one operand."
    )


def matmul_batch_dims_not_broadcastable(x: Any, y: Any) -> str:
    return (
        f"matmul: batch dimensions of shapes {tuple(x.shape)} and {tuple(y.shape)} cannot "
        "be broadcast"
    )


def product_argument_not_matrix(which: Any, t: Any) -> str:
    return (
        f"{which} must be a matrix, but got a {t._array.ndim}-D tensor of shape "
        f"{tuple(t._array.shape)}. Use matmul() for other ranks."
    )


def bmm_argument_not_3d(which: Any, arr: Any) -> str:
    return (
        f"{which} must be a 3D tensor, but got a {arr.ndim}-D tensor of shape "
        f"{tuple(arr.shape)}. Use matmul() for other ranks."
    )


def bmm_batch2_size_mismatch(x: Any, y: Any) -> str:
    return (
        f"Expected size for first two dimensions of batch2 tensor to be: "
        f"[{x.shape[0]}, {x.shape[2]}] but got: [{y.shape[0]}, {y.shape[1]}]: batch1 has "
        f"shape {tuple(x.shape)}, batch2 {tuple(y.shape)} (bmm does not broadcast)."
    )


def bmm_dtype_mismatch(x: Any, y: Any) -> str:
    return (
        f"expected scalar type {torch_name(x.dtype)} but found {torch_name(y.dtype)}. "
        "Convert one operand (e.g. mat2.to(input.dtype))."
    )


def mv_matrix_has_no_dimensions() -> str:
    return (
        "Dimension specified as 0 but tensor has no dimensions: mv() needs a 2-D matrix "
        "as its first argument."
    )


def mv_vector_matrix_vector_expected(x: Any, y: Any) -> str:
    return (
        f"vector + matrix @ vector expected, got 1, {x.ndim}, {y.ndim}: mv() takes a 2-D "
        f"matrix and a 1-D vector (shapes {tuple(x.shape)} and {tuple(y.shape)})."
    )


def mv_size_mismatch(x: Any, y: Any) -> str:
    return (
        f"size mismatch, got input ({x.shape[0]}), mat ({x.shape[0]}x{x.shape[1]}), vec "
        f"({y.shape[0]}). The vector needs as many entries as the matrix has columns."
    )


def addmv_dtype_mismatch(x: Any, y: Any) -> str:
    vn, mn = torch_name(y.dtype), torch_name(x.dtype)
    return (
        f"addmv input tensors must have the same dtype, but got {vn}, {mn}, and {vn}. "
        "Convert one operand (e.g. vec.to(input.dtype))."
    )


def dot_expects_1d_tensors(x: Any, y: Any) -> str:
    return (
        f"1D tensors expected, but got {x.ndim}D and {y.ndim}D tensors (shapes "
        f"{tuple(x.shape)} and {tuple(y.shape)}). Use matmul() for other ranks."
    )


def dot_dtype_mismatch(x: Any, y: Any) -> str:
    return (
        f"dot : expected both vectors to have same dtype, but found "
        f"{torch_name(x.dtype)} and {torch_name(y.dtype)}. Convert one operand "
        "(e.g. tensor.to(input.dtype))."
    )


def linear_dtype_mismatch(xa: Any, wa: Any, b: Any) -> str:
    return (
        f"mat1 and mat2 must have the same dtype, but got {_dtype_name(xa.dtype)} and "
        f"{_dtype_name(wa.dtype)}" + ("" if b is None else
                                      f" (bias {_dtype_name(b._array.dtype)})")
        + ". Convert with .to(dtype)."
    )


def linear_shapes_cannot_be_multiplied(rows: Any, xa: Any, wa: Any) -> str:
    return (
        f"mat1 and mat2 shapes cannot be multiplied ({rows}x{xa.shape[-1]} and "
        f"{wa.shape[1]}x{wa.shape[0]}): the input of shape {tuple(xa.shape)} must end "
        f"with the in_features of the weight of shape {tuple(wa.shape)}."
    )


def inner_dtype_mismatch(input: Any, other: Any) -> str:
    return (
        f"both inputs should have same dtype (got "
        f"{torch_name(input._array.dtype)} and {torch_name(other._array.dtype)}). "
        "Convert one with .to(other.dtype)."
    )


def inner_last_dimension_mismatch(input: Any, other: Any) -> str:
    return (
        "inner() the last dimension must match on both input tensors but "
        f"got shapes {list(input._array.shape)} and "
        f"{list(other._array.shape)}"
    )


def vdot_expects_1d_tensors(x: Any, y: Any) -> str:
    return (
        f"1D tensors expected, but got {x.ndim}D and {y.ndim}D tensors. "
        "Flatten them (t.reshape(-1)) first."
    )


def vdot_dtype_mismatch(x: Any, y: Any) -> str:
    return (
        "dot : expected both vectors to have same dtype, but found "
        f"{torch_name(x.dtype)} and {torch_name(y.dtype)}"
    )


def einsum_fewer_operands_than_equation(terms: Any, shapes: Any) -> str:
    return (
        f"einsum(): fewer operands were provided than specified in the "
        f"equation ({len(terms)} subscripts, {len(shapes)} operands)"
    )


def einsum_more_operands_than_equation(terms: Any, shapes: Any) -> str:
    return (
        f"einsum(): more operands were provided than specified in the "
        f"equation ({len(terms)} subscripts, {len(shapes)} operands)"
    )


def einsum_ellipsis_already_found(k: Any) -> str:
    return (
        f"einsum(): found '.' for operand {k} for which an "
        "ellipsis was already found"
    )


def einsum_dot_not_part_of_ellipsis(k: Any) -> str:
    return (
        f"einsum(): found '.' for operand {k} that is not part "
        "of any ellipsis"
    )


def einsum_invalid_subscript(pos: Any) -> str:
    return (
        f"einsum(): invalid subscript given at index {pos} in the "
        "equation string, subscripts must be in [a-zA-Z]"
    )


def einsum_more_subscripts_than_dimensions(named: Any, shape: Any, k: Any) -> str:
    return (
        f"einsum(): the number of subscripts in the equation "
        f"({named}) is more than the number of dimensions "
        f"({len(shape)}) for operand {k}"
    )


def einsum_subscripts_do_not_match_dimensions(named: Any, shape: Any, k: Any) -> str:
    return (
        f"einsum(): the number of subscripts in the equation ({named}) "
        f"does not match the number of dimensions ({len(shape)}) for "
        f"operand {k} and no ellipsis was given"
    )


def einsum_repeated_subscript_size_mismatch(lab: Any, k: Any, own: Any, s: Any) -> str:
    return (
        f"einsum(): subscript {lab} is repeated for operand {k} but "
        f"the sizes don't match, {own[lab]} != {s}"
    )


def einsum_subscript_does_not_broadcast(shown: Any, s: Any, k: Any, prev: Any) -> str:
    return (
        f"einsum(): subscript {shown} has size {s} for operand {k} "
        f"which does not broadcast with previously seen size {prev}"
    )


def einsum_output_dot(after_an_ellipsis: bool) -> str:
    # torch's two texts, chosen as torch chooses: by whether the output had an ellipsis before
    if after_an_ellipsis:
        return "einsum(): found '.' for output but an ellipsis (...) was already found"
    return "einsum(): found '.' for output that is not part of any ellipsis (...)"


def einsum_invalid_output_subscript(lhs: Any, i: Any) -> str:
    return (
        f"einsum(): invalid subscript given at index {len(lhs) + 2 + i}"
        " in the equation string, subscripts must be in [a-zA-Z]"
    )


def einsum_output_subscript_repeated(c: Any) -> str:
    return (
        f"einsum(): output subscript {c} appears more than once in "
        "the output"
    )


def einsum_output_subscript_not_in_inputs(c: Any) -> str:
    return (
        f"einsum(): output subscript {c} does not appear in the "
        "equation for any input operand"
    )


def einsum_equation_not_str(equation: Any) -> str:
    return (
        f"einsum(): argument 'equation' (position 1) must be str, not "
        f"{type(equation).__name__}"
    )


def einsum_dtype_mismatch(arrays: Any, arr: Any) -> str:
    return (
        f"expected scalar type {torch_name(arrays[0].dtype)} but found "
        f"{torch_name(arr.dtype)}: einsum operands must share one dtype. "
        "Convert them (t.to(dtype))."
    )


def tensordot_out_not_supported() -> str:
    return (
        "tensordot(out=...) is not supported by gradsum; assign the "
        "result instead."
    )


def tensordot_negative_dims(n: Any) -> str:
    return f"tensordot expects dims >= 0, but got dims={n}"


def tensordot_dims_too_large(n: Any) -> str:
    return f"tensordot expects dims < ndim_a or ndim_b, but got dims={n}"


def tensordot_dim_lists_length_mismatch(da: Any, db: Any) -> str:
    return (
        f"both dimension lists should have same length (got {len(da)} "
        f"and {len(db)})"
    )


def tensordot_contracted_sizes_mismatch(sa: Any, x: Any, sb: Any, y: Any) -> str:
    return (
        f"contracted dimensions need to match, but first has size {sa} "
        f"in dim {x} and second has size {sb} in dim {y}"
    )


def cdist_needs_2d(name: Any, arr: Any) -> str:
    return (
        f"cdist only supports at least 2D tensors, {name} got: "
        f"{arr.ndim}D (shape {tuple(arr.shape)})"
    )


def cdist_needs_floating_point(name: Any, arr: Any) -> str:
    return (
        f"cdist only supports floating-point dtypes, {name} got: "
        f"{torch_name(arr.dtype)}. Convert with .float()."
    )


def cdist_columns_mismatch(a: Any, b: Any) -> str:
    return (
        f"X1 and X2 must have the same number of columns. X1: {a.shape[-1]} "
        f"X2: {b.shape[-1]} (shapes {tuple(a.shape)} and {tuple(b.shape)})"
    )


def cdist_negative_p(p: Any) -> str:
    return f"cdist only supports non-negative p values (got p={p})"


def cdist_dtype_mismatch(a: Any, b: Any) -> str:
    return (
        f"expected scalar type {torch_name(a.dtype)} but found "
        f"{torch_name(b.dtype)}: convert X2 with .to(X1.dtype)"
    )


def fused_argument_wrong_rank(kind: Any, arg: Any, nd: Any, arr: Any) -> str:
    return (
        f"{kind}: {arg} must be a {nd}D tensor, but got a {arr.ndim}D "
        f"tensor of shape {tuple(arr.shape)}"
    )


def addmv_size_mismatch(x: Any, a: Any, b: Any) -> str:
    return (
        f"size mismatch, got input ({', '.join(map(str, x.shape))}), "
        f"mat ({a.shape[0]}x{a.shape[1]}), vec ({b.shape[0]})"
    )


def addmm_shapes_cannot_be_multiplied(a: Any, b: Any) -> str:
    return (
        f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x"
        f"{a.shape[1]} and {b.shape[0]}x{b.shape[1]})"
    )


def baddbmm_incompatible_matrix_sizes(a: Any, b: Any) -> str:
    return (
        f"Incompatible matrix sizes for bmm ({a.shape[1]}x{a.shape[2]} "
        f"and {b.shape[1]}x{b.shape[2]}); batch1 {tuple(a.shape)}, "
        f"batch2 {tuple(b.shape)}"
    )


def baddbmm_batch2_size_mismatch(a: Any, b: Any) -> str:
    return (
        f"Expected size for first two dimensions of batch2 tensor to be: "
        f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, "
        f"{b.shape[1]}]."
    )


def fused_dtype_mismatch(x: Any, arr: Any, kind: Any) -> str:
    return (
        f"expected scalar type {torch_name(x.dtype)} but found "
        f"{torch_name(arr.dtype)}: all operands of {kind} need one dtype"
    )


def fused_expanded_size_mismatch(shape: Any, x: Any, dim: Any) -> str:
    return (
        f"The expanded size of the tensor ({shape[-1]}) must match the existing size "
        f"({x.shape[-1] if x.ndim else 1}) at non-singleton dimension {dim}.  "
        f"Target sizes: {list(shape)}.  Tensor sizes: {list(x.shape)}"
    )


def addr_expected_1d_argument(name: Any, v: Any) -> str:
    return (
        f"addr: Expected 1-D argument {name}, but got "
        f"{v._array.ndim}-D"
    )


def addr_float_scalar_for_integral_input(name: Any) -> str:
    return (
        f"For integral input tensors, argument {name} must not be "
        "a floating point number."
    )
