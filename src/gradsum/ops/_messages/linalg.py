"""The texts of linear algebra (ops/linalg/)."""

from __future__ import annotations

from typing import Any

from gradsum.ops._messages._format import torch_name


def _batch_prefix(x: Any, i: int) -> str:
    return f"(Batch element {i}): " if x.ndim > 2 else ""


# -- linalg/_base.py ------------------------------------------------------------------------------
def linalg_input_not_floating(name: Any, x: Any) -> str:
    return (
        f"{name}: Expected a floating point or complex tensor as input. Got "
        f"{torch_name(x.dtype)}. Convert it with .double() or .float()."
    )


def input_fewer_than_2_dims_shape(name: Any, x: Any) -> str:
    return (
        f"{name}: The input tensor A must have at least 2 dimensions "
        f"(got shape {tuple(x.shape)})."
    )


def linalg_not_square_matrices(name: Any, x: Any) -> str:
    return (
        f"{name}: A must be batches of square matrices, but they are "
        f"{x.shape[-2]} by {x.shape[-1]} matrices"
    )


# -- linalg/decompositions.py ---------------------------------------------------------------------
def qr_invalid_mode(mode: Any) -> str:
    return (
        f"qr received unrecognized mode '{mode}' but expected one of "
        "'reduced' (default), 'r', or 'complete'"
    )


def eigh_invalid_uplo(UPLO: Any) -> str:
    return f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}"


def qr_backward_mode_r() -> str:
    return (
        "The derivative of linalg.qr depends on Q, which is not computed "
        "when mode='r'. Please use linalg.qr(A, mode='reduced') if you "
        "are going to differentiate through linalg.qr."
    )


def qr_backward_complete_wide() -> str:
    return (
        "The QR decomposition is not differentiable when "
        "mode='complete' and nrows > ncols."
    )


def cholesky_not_positive_definite(x: Any, i: Any, k: Any) -> str:
    return (
        f"linalg.cholesky: {_batch_prefix(x, i)}The factorization could not "
        f"be completed because the input is not positive-definite (the "
        f"leading minor of order {k} is not positive-definite)."
    )


# -- linalg/functions.py --------------------------------------------------------------------------
def trace_not_matrix(x: Any) -> str:
    return (
        f"trace: expected a matrix, but got tensor with dim {x.ndim} (shape "
        f"{tuple(x.shape)}). Use diagonal(...).sum(-1) for batches."
    )


def cross_ndim_mismatch(x: Any, y: Any) -> str:
    return (
        f"linalg.cross: inputs must have the same number of dimensions "
        f"(got {x.ndim} and {y.ndim}; shapes {tuple(x.shape)} and "
        f"{tuple(y.shape)})"
    )


def cross_dtype_mismatch(x: Any, y: Any) -> str:
    return (
        f"linalg.cross: expected input and other to have the same dtype, "
        f"but got {torch_name(x.dtype)} and {torch_name(y.dtype)}. Convert one."
    )


def cross_dim_not_3(dim: Any, x: Any, d: Any, y: Any) -> str:
    return (
        f"linalg.cross: inputs dimension {dim} must have length 3. Got "
        f"{x.shape[d]} and {y.shape[d]}"
    )


def matrix_power_fewer_than_2_dims(shape: Any) -> str:
    return (
        "linalg.matrix_power: The input tensor A must have at least 2 "
        f"dimensions (got shape {tuple(shape)})."
    )


def matrix_power_not_square(shape: Any) -> str:
    return (
        "linalg.matrix_power: A must be batches of square matrices, but they "
        f"are {shape[-2]} by {shape[-1]} matrices"
    )


def multi_dot_too_few_tensors(n: Any) -> str:
    return f"multi_dot(): expected at least 2 tensors but got {n}"


def chain_matmul_no_matrices() -> str:
    return "chain_matmul(): Expected one or more matrices"


def vander_bad_dtype(a: Any) -> str:
    return (
        f"linalg.vander supports floating point, complex, and integer "
        f"tensors, but got {torch_name(a.dtype)}"
    )


def vander_n_too_small() -> str:
    return "N must be greater than 1."


def vecdot_not_floating(a: Any) -> str:
    return (
        f"linalg.vecdot: Expected a floating point or complex tensor as "
        f"input. Got {torch_name(a.dtype)}"
    )


def vecdot_dtype_mismatch(a: Any, b: Any) -> str:
    return (
        f"linalg.vecdot: Expected x and y to have the same dtype, but found "
        f"x of type {torch_name(a.dtype)} and y of type {torch_name(b.dtype)} "
        "instead"
    )


def multi_dot_first_not_1d_2d(first: Any) -> str:
    return (
        f"multi_dot(): the first tensor must be 1D or 2D but got "
        f"{first.dim()}D"
    )


def multi_dot_last_not_1d_2d(last: Any) -> str:
    return (
        f"multi_dot(): the last tensor must be 1D or 2D but got "
        f"{last.dim()}D"
    )


def multi_dot_middle_not_2d(i: Any, ts: Any) -> str:
    return f"multi_dot(): tensor {i} must be 2D but got {ts[i].dim()}D"


def multi_dot_dtype_mismatch(ts: Any, i: Any) -> str:
    return (
        f"multi_dot(): all tensors must have be the same dtype but "
        f"tensor 0 is {ts[0].dtype} and tensor {i} {ts[i].dtype}"
    )


def multi_dot_shapes_mismatch(i: Any, tensors: Any) -> str:
    return (
        f"multi_dot(): tensors {i - 1} and {i} with shapes "
        f"{list(tensors[i - 1].shape)} and {list(tensors[i].shape)} "
        "cannot be multiplied"
    )


def chain_matmul_not_2d(m: Any) -> str:
    return f"Tensor dimension is {m.dim()}, expected 2 instead."


# -- linalg/lu.py ---------------------------------------------------------------------------------
def lu_factor_singular(pre: Any, k: Any) -> str:
    return (
        f"torch.linalg.lu_factor: {pre}U[{k},{k}] is zero and using it on "
        "lu_solve would result in a division by zero. If you still want to "
        "perform the factorization, consider calling linalg.lu(A, pivot) or "
        "linalg.lu_factor_ex(A, pivot)"
    )


def lu_no_pivot_unsupported(name: Any) -> str:
    return f"{name}: LU without pivoting is not implemented on the CPU"


def lu_unpack_pivots_not_int32(piv: Any) -> str:
    return (
        "lu_unpack: LU_pivots is expected to be a contiguous tensor of "
        f"torch.int32 dtype. Note: this function is intended to be used with "
        f"the output produced by torch.linalg.lu_factor (got "
        f"{torch_name(piv.dtype)})"
    )


def lu_unpack_fewer_than_2_dims(lu_a: Any) -> str:
    return (
        f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
        f"size: {list(lu_a.shape)} instead"
    )


def lu_unpack_shape_mismatch(piv: Any, lu_a: Any) -> str:
    return (
        f"lu_unpack: LU_pivots of shape {list(piv.shape)} does not match "
        f"LU_data of shape {list(lu_a.shape)}"
    )


def linalg_not_square_matrices_any_ndim(name: Any, lu_a: Any) -> str:
    return (
        f"{name}: A must be batches of square matrices, but they are "
        f"{lu_a.shape[-2] if lu_a.ndim > 1 else 1} by {lu_a.shape[-1]} "
        "matrices"
    )


def lu_solve_pivots_not_int32(name: Any, piv: Any) -> str:
    return (
        f"{name}: pivots should be a Tensor of scalar type int32 (got "
        f"{torch_name(piv.dtype)})"
    )


def incompatible_shapes_for_equation(name: Any, left: Any, n: Any, b: Any) -> str:
    return (
        f"{name}: Incompatible shapes of A and B for the equation "
        f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
        f"{b.shape[-2]}x{b.shape[-1]})"
    )


def lu_solve_pivots_shape_mismatch(name: Any, lu_a: Any, piv: Any) -> str:
    return (
        f"{name}: Incompatible shapes of LU {list(lu_a.shape)} and pivots "
        f"{list(piv.shape)}"
    )


# -- linalg/norms.py ------------------------------------------------------------------------------
def vector_norm_empty_no_identity(ord: Any) -> str:
    return (
        f"linalg.vector_norm cannot compute the {ord} norm on an empty "
        "tensor because the operation does not have an identity"
    )


def input_fewer_than_2_dims(name: Any, which: Any) -> str:
    return f"{name}: The input tensor {which} must have at least 2 dimensions."


def matrix_norm_dim_not_2_tuple(name: Any, dims: Any) -> str:
    return f"{name}: dim must be a 2-tuple. Got {', '.join(map(str, dims))}"


def matrix_norm_dims_equal(name: Any, d0: Any, d1: Any) -> str:
    return f"{name}: dims must be different. Got ({d0}, {d1})"


def matrix_norm_order_unsupported(ord: Any) -> str:
    return f"linalg.matrix_norm: Order {ord} not supported."


def cond_invalid_norm(p: Any) -> str:
    return f"linalg.cond got an invalid norm type: {p}"


def cond_not_square(shown: Any, x: Any) -> str:
    return (
        f"linalg.cond(ord={shown}): A must be batches of square matrices, "
        f"but they are {x.shape[-2]} by {x.shape[-1]} matrices"
    )


def renorm_p_not_positive(p: Any) -> str:
    return f"renorm: non-positive-norm not supported (got p={p})"


def renorm_maxnorm_negative(maxnorm: Any) -> str:
    return f"renorm: expected maxnorm to be >= 0 but got {maxnorm}"


def renorm_fewer_than_2_dims(x: Any) -> str:
    return (
        f"renorm: input needs at least 2 dimensions, got {x.ndim} "
        "dimensions"
    )


def vector_norm_not_floating(x: Any) -> str:
    return (
        f"linalg.vector_norm: Expected a floating point or complex tensor "
        f"as input. Got {torch_name(x.dtype)}"
    )


def linalg_norm_dim_length(dims: Any) -> str:
    return (
        f"linalg.norm: If dim is specified, it must be of length 1 or "
        f"2. Got {list(dims)}"
    )


def linalg_norm_ord_needs_1d_or_2d(a: Any) -> str:
    return (
        f"linalg.norm: If dim is not specified but ord is, the input must "
        f"be 1D or 2D. Got {a.ndim}D."
    )


def matrix_rank_not_square(m: Any, n: Any) -> str:
    return (
        f"linalg.matrix_rank: A must be batches of square matrices, but "
        f"they are {m} by {n} matrices"
    )


# -- linalg/solvers.py ----------------------------------------------------------------------------
def matrix_singular(name: Any) -> str:
    return f"{name}: The input matrix is singular."


def solve_b_not_tensor(B: Any) -> str:
    return (
        f"linalg_solve(): argument 'B' (position 2) must be Tensor, not "
        f"{type(B).__name__}"
    )


def solve_incompatible_shapes(left: Any, n: Any, shown: Any) -> str:
    return (
        f"linalg.solve: Incompatible shapes of A and B for the equation "
        f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {shown})"
    )


def linalg_operands_dtype_mismatch(name: Any, an: Any, bn: Any, a: Any, b: Any) -> str:
    return (
        f"{name}: Expected {an} and {bn} to have the same dtype, but found "
        f"{an} of type {torch_name(a.dtype)} and {bn} of type {torch_name(b.dtype)} "
        "instead. Convert one of them."
    )


def torch_input_fewer_than_2_dims(name: Any, which: Any) -> str:
    return (
        f"torch.{name}: The input tensor {which} must have at least 2 "
        "dimensions."
    )


def triangular_solve_b_fewer_than_2_dims(x: Any) -> str:
    return (
        f"torch.triangular_solve: The input tensor b must have at least 2 "
        f"dimensions (got shape {tuple(x.shape)})."
    )


def incompatible_matrix_sizes(op: Any, a: Any, b: Any) -> str:
    return (
        f"Incompatible matrix sizes for {op}: each A matrix is "
        f"{a.shape[-1]} by {a.shape[-1]} but each b matrix is "
        f"{b.shape[-2]} by {b.shape[-1]}"
    )


def lstsq_invalid_driver(name: Any) -> str:
    return (
        f"{name}: parameter `driver` should be one of (gels, gelsy, gelsd, "
        f"gelss)"
    )


def lstsq_fewer_than_2_dims(name: Any) -> str:
    return f"{name}: input must have at least 2 dimensions."


def lstsq_ndim_mismatch(name: Any) -> str:
    return (
        f"{name}: input.dim() must be greater or equal to other.dim() and "
        f"(input.dim() - other.dim()) <= 1"
    )


def lstsq_rows_mismatch(name: Any, m: Any, bm: Any) -> str:
    return (
        f"{name}: input.size(-2) should match other.size(-2) (got {m} and "
        f"{bm.shape[-2]})"
    )


def tensorinv_ind_not_positive(ind: Any) -> str:
    return f"Expected a strictly positive integer for 'ind', but got {ind}"


def tensorinv_shape_requirement(p_end: Any, p_start: Any) -> str:
    return (
        f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
        f"prod(self.shape[:ind]), but got {p_end} != {p_start}"
    )


def tensorsolve_shape_requirement(rp: Any, bp: Any) -> str:
    return (
        f"Expected self to satisfy the requirement prod(self.shape[other.ndim:"
        f"]) == prod(self.shape[:other.ndim]), but got {rp} != {bp}"
    )


def operand_fewer_than_2_dims(which: Any, t: Any) -> str:
    return f"{which} should have at least 2 dimensions, but has {t.ndim} dimensions instead"


def tensor_method_removed(advice: Any) -> str:
    return (
        f"This function was deprecated since version 1.9 and is now "
        f"removed. {advice}"
    )


def inverse_singular_at_diagonal(name: Any, x: Any, i: Any, k: Any) -> str:
    return (
        f"{name}: {_batch_prefix(x, i)}The diagonal element {k} is zero, "
        "the inversion could not be completed because the input matrix "
        "is singular."
    )


def solve_batch_dims_not_broadcast(a: Any, b: Any) -> str:
    return (
        f"linalg.solve: the batch dimensions of A {tuple(a.shape)} and B "
        f"{tuple(b.shape)} do not broadcast"
    )


def solve_singular() -> str:
    return (
        "torch.linalg.solve: The solver failed because the input matrix is "
        "singular."
    )


def batch_dims_not_broadcast(name: Any, a: Any, b: Any) -> str:
    return (
        f"{name}: the batch dimensions of {tuple(a.shape)} and "
        f"{tuple(b.shape)} do not broadcast"
    )


def cholesky_inverse_singular(u: Any, i: Any, zero: Any) -> str:
    return (
        f"cholesky_inverse: {_batch_prefix(u, i)}The diagonal element "
        f"{int(zero[0]) + 1} is zero, the inversion could not be completed "
        "because the input matrix is singular."
    )
