"""The texts of linear algebra (ops/linalg/)."""

from __future__ import annotations

from typing import Any

from gradsum import _dtype as D


def _tname(dt: Any) -> str:
    """torch's scalar-type name of a NumPy dtype (``Float``, ``Long``), as the ops print it."""
    return D._TORCH_SCALAR_NAMES.get(str(dt), str(dt))


def _batch_prefix(x: Any, i: int) -> str:
    return f"(Batch element {i}): " if x.ndim > 2 else ""


# -- linalg/_base.py ------------------------------------------------------------------------------


def expected_floating_point_complex(name: Any, x: Any) -> str:
    return (
        f"{name}: Expected a floating point or complex tensor as input. Got "
        f"{_tname(x.dtype)}. Convert it with .double() or .float()."
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


def linalg_argument_not_tensor(name: Any, arg: Any, pos: Any, t: Any) -> str:
    return (
        f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
        f"{type(t).__name__}. Wrap it with gradsum.tensor()."
    )


# -- linalg/decompositions.py ---------------------------------------------------------------------
def qr_received_unrecognized_mode(mode: Any) -> str:
    return (
        f"qr received unrecognized mode '{mode}' but expected one of "
        "'reduced' (default), 'r', or 'complete'"
    )


def expected_uplo_argument_l(UPLO: Any) -> str:
    return f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}"


def derivative_linalg_qr_depends() -> str:
    return (
        "The derivative of linalg.qr depends on Q, which is not computed "
        "when mode='r'. Please use linalg.qr(A, mode='reduced') if you "
        "are going to differentiate through linalg.qr."
    )


def qr_decomposition_not_differentiable() -> str:
    return (
        "The QR decomposition is not differentiable when "
        "mode='complete' and nrows > ncols."
    )


def linalg_cholesky_factorization_could(x: Any, i: Any, k: Any) -> str:
    return (
        f"linalg.cholesky: {_batch_prefix(x, i)}The factorization could not "
        f"be completed because the input is not positive-definite (the "
        f"leading minor of order {k} is not positive-definite)."
    )


# -- linalg/functions.py --------------------------------------------------------------------------
def trace_expected_matrix_tensor(x: Any) -> str:
    return (
        f"trace: expected a matrix, but got tensor with dim {x.ndim} (shape "
        f"{tuple(x.shape)}). Use diagonal(...).sum(-1) for batches."
    )


def linalg_cross_inputs_have(x: Any, y: Any) -> str:
    return (
        f"linalg.cross: inputs must have the same number of dimensions "
        f"(got {x.ndim} and {y.ndim}; shapes {tuple(x.shape)} and "
        f"{tuple(y.shape)})"
    )


def linalg_cross_expected_input(x: Any, y: Any) -> str:
    return (
        f"linalg.cross: expected input and other to have the same dtype, "
        f"but got {_tname(x.dtype)} and {_tname(y.dtype)}. Convert one."
    )


def linalg_cross_inputs_dimension(dim: Any, x: Any, d: Any, y: Any) -> str:
    return (
        f"linalg.cross: inputs dimension {dim} must have length 3. Got "
        f"{x.shape[d]} and {y.shape[d]}"
    )


def linalg_matrix_power_input_tensor(shape: Any) -> str:
    return (
        "linalg.matrix_power: The input tensor A must have at least 2 "
        f"dimensions (got shape {tuple(shape)})."
    )


def linalg_matrix_power_batches_square(shape: Any) -> str:
    return (
        "linalg.matrix_power: A must be batches of square matrices, but they "
        f"are {shape[-2]} by {shape[-1]} matrices"
    )


def multi_dot_expected_least_tensors(n: Any) -> str:
    return f"multi_dot(): expected at least 2 tensors but got {n}"


def chain_matmul_expected_one_more() -> str:
    return "chain_matmul(): Expected one or more matrices"


def linalg_vander_supports_floating(a: Any) -> str:
    return (
        f"linalg.vander supports floating point, complex, and integer "
        f"tensors, but got {_tname(a.dtype)}"
    )


def n_greater() -> str:
    return "N must be greater than 1."


def linalg_vecdot_expected_floating(a: Any) -> str:
    return (
        f"linalg.vecdot: Expected a floating point or complex tensor as "
        f"input. Got {_tname(a.dtype)}"
    )


def linalg_vecdot_expected_x(a: Any, b: Any) -> str:
    return (
        f"linalg.vecdot: Expected x and y to have the same dtype, but found "
        f"x of type {_tname(a.dtype)} and y of type {_tname(b.dtype)} "
        "instead"
    )


def multi_dot_first_tensor_d(first: Any) -> str:
    return (
        f"multi_dot(): the first tensor must be 1D or 2D but got "
        f"{first.dim()}D"
    )


def multi_dot_last_tensor_d(last: Any) -> str:
    return (
        f"multi_dot(): the last tensor must be 1D or 2D but got "
        f"{last.dim()}D"
    )


def multi_dot_tensor_d_d(i: Any, ts: Any) -> str:
    return f"multi_dot(): tensor {i} must be 2D but got {ts[i].dim()}D"


def multi_dot_all_tensors_have(ts: Any, i: Any) -> str:
    return (
        f"multi_dot(): all tensors must have be the same dtype but "
        f"tensor 0 is {ts[0].dtype} and tensor {i} {ts[i].dtype}"
    )


def multi_dot_tensors_shapes_cannot(i: Any, tensors: Any) -> str:
    return (
        f"multi_dot(): tensors {i - 1} and {i} with shapes "
        f"{list(tensors[i - 1].shape)} and {list(tensors[i].shape)} "
        "cannot be multiplied"
    )


def tensor_dimension_expected_instead(m: Any) -> str:
    return f"Tensor dimension is {m.dim()}, expected 2 instead."


# -- linalg/lu.py ---------------------------------------------------------------------------------
def torch_linalg_lu_factor_u(pre: Any, k: Any) -> str:
    return (
        f"torch.linalg.lu_factor: {pre}U[{k},{k}] is zero and using it on "
        "lu_solve would result in a division by zero. If you still want to "
        "perform the factorization, consider calling linalg.lu(A, pivot) or "
        "linalg.lu_factor_ex(A, pivot)"
    )


def lu_without_pivoting_not(name: Any) -> str:
    return f"{name}: LU without pivoting is not implemented on the CPU"


def lu_unpack_lu_pivots_expected_contiguous(piv: Any) -> str:
    return (
        "lu_unpack: LU_pivots is expected to be a contiguous tensor of "
        f"torch.int32 dtype. Note: this function is intended to be used with "
        f"the output produced by torch.linalg.lu_factor (got "
        f"{_tname(piv.dtype)})"
    )


def torch_lu_unpack_expected_tensor(lu_a: Any) -> str:
    return (
        f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
        f"size: {list(lu_a.shape)} instead"
    )


def lu_unpack_lu_pivots_shape_does(piv: Any, lu_a: Any) -> str:
    return (
        f"lu_unpack: LU_pivots of shape {list(piv.shape)} does not match "
        f"LU_data of shape {list(lu_a.shape)}"
    )


def input_tensor_b_have(name: Any) -> str:
    return f"{name}: The input tensor B must have at least 2 dimensions."


def lu_solve_not_square_matrices(name: Any, lu_a: Any) -> str:
    return (
        f"{name}: A must be batches of square matrices, but they are "
        f"{lu_a.shape[-2] if lu_a.ndim > 1 else 1} by {lu_a.shape[-1]} "
        "matrices"
    )


def pivots_tensor_scalar_type(name: Any, piv: Any) -> str:
    return (
        f"{name}: pivots should be a Tensor of scalar type int32 (got "
        f"{_tname(piv.dtype)})"
    )


def incompatible_shapes_b_equation(name: Any, left: Any, n: Any, b: Any) -> str:
    return (
        f"{name}: Incompatible shapes of A and B for the equation "
        f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
        f"{b.shape[-2]}x{b.shape[-1]})"
    )


def incompatible_shapes_lu_pivots(name: Any, lu_a: Any, piv: Any) -> str:
    return (
        f"{name}: Incompatible shapes of LU {list(lu_a.shape)} and pivots "
        f"{list(piv.shape)}"
    )


# -- linalg/norms.py ------------------------------------------------------------------------------
def linalg_vector_norm_cannot_compute(ord: Any) -> str:
    return (
        f"linalg.vector_norm cannot compute the {ord} norm on an empty "
        "tensor because the operation does not have an identity"
    )


def input_fewer_than_2_dims(name: Any) -> str:
    return f"{name}: The input tensor A must have at least 2 dimensions."


def dim_tuple(name: Any, dims: Any) -> str:
    return f"{name}: dim must be a 2-tuple. Got {', '.join(map(str, dims))}"


def dims_different(name: Any, d0: Any, d1: Any) -> str:
    return f"{name}: dims must be different. Got ({d0}, {d1})"


def linalg_matrix_norm_order_not(ord: Any) -> str:
    return f"linalg.matrix_norm: Order {ord} not supported."


def torch_linalg_matrix_rank_input() -> str:
    return (
        "torch.linalg.matrix_rank: The input tensor input must have at "
        "least 2 dimensions."
    )


def linalg_cond_invalid_norm(p: Any) -> str:
    return f"linalg.cond got an invalid norm type: {p}"


def linalg_cond_input_tensor() -> str:
    return "linalg.cond: The input tensor A must have at least 2 dimensions."


def linalg_cond_ord_batches(shown: Any, x: Any) -> str:
    return (
        f"linalg.cond(ord={shown}): A must be batches of square matrices, "
        f"but they are {x.shape[-2]} by {x.shape[-1]} matrices"
    )


def renorm_non_positive_norm(p: Any) -> str:
    return f"renorm: non-positive-norm not supported (got p={p})"


def renorm_expected_maxnorm(maxnorm: Any) -> str:
    return f"renorm: expected maxnorm to be >= 0 but got {maxnorm}"


def renorm_input_needs_least(x: Any) -> str:
    return (
        f"renorm: input needs at least 2 dimensions, got {x.ndim} "
        "dimensions"
    )


def linalg_vector_norm_expected_floating(x: Any) -> str:
    return (
        f"linalg.vector_norm: Expected a floating point or complex tensor "
        f"as input. Got {_tname(x.dtype)}"
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


def linalg_matrix_rank_batches_square(m: Any, n: Any) -> str:
    return (
        f"linalg.matrix_rank: A must be batches of square matrices, but "
        f"they are {m} by {n} matrices"
    )


# -- linalg/solvers.py ----------------------------------------------------------------------------
def input_matrix_singular(name: Any) -> str:
    return f"{name}: The input matrix is singular."


def linalg_solve_argument_b_position(B: Any) -> str:
    return (
        f"linalg_solve(): argument 'B' (position 2) must be Tensor, not "
        f"{type(B).__name__}"
    )


def linalg_solve_expected_b(a: Any, b: Any) -> str:
    return (
        f"linalg.solve: Expected A and B to have the same dtype, but found "
        f"A of type {_tname(a.dtype)} and B of type {_tname(b.dtype)} "
        "instead. Convert one of them."
    )


def linalg_solve_incompatible_shapes(left: Any, n: Any, shown: Any) -> str:
    return (
        f"linalg.solve: Incompatible shapes of A and B for the equation "
        f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {shown})"
    )


def expected_have_same_dtype(name: Any, an: Any, bn: Any, a: Any, b: Any) -> str:
    return (
        f"{name}: Expected {an} and {bn} to have the same dtype, but found "
        f"{an} of type {_tname(a.dtype)} and {bn} of type {_tname(b.dtype)} "
        "instead. Convert one of them."
    )


def torch_input_fewer_than_2_dims(name: Any, which: Any) -> str:
    return (
        f"torch.{name}: The input tensor {which} must have at least 2 "
        "dimensions."
    )


def torch_triangular_solve_input_tensor(x: Any) -> str:
    return (
        f"torch.triangular_solve: The input tensor b must have at least 2 "
        f"dimensions (got shape {tuple(x.shape)})."
    )


def triangular_solve_batches_square_matrices(a: Any) -> str:
    return (
        f"triangular_solve: A must be batches of square matrices, but they "
        f"are {a.shape[-2] if a.ndim > 1 else 1} by {a.shape[-1]} matrices"
    )


def incompatible_matrix_sizes_triangular_solve(a: Any, x: Any) -> str:
    return (
        f"Incompatible matrix sizes for triangular_solve: each A matrix is "
        f"{a.shape[-1]} by {a.shape[-1]} but each b matrix is "
        f"{x.shape[-2]} by {x.shape[-1]}"
    )


def parameter_driver_one_gels(name: Any) -> str:
    return (
        f"{name}: parameter `driver` should be one of (gels, gelsy, gelsd, "
        f"gelss)"
    )


def input_have_least_dimensions(name: Any) -> str:
    return f"{name}: input must have at least 2 dimensions."


def input_dim_greater_equal(name: Any) -> str:
    return (
        f"{name}: input.dim() must be greater or equal to other.dim() and "
        f"(input.dim() - other.dim()) <= 1"
    )


def input_size_match_other(name: Any, m: Any, bm: Any) -> str:
    return (
        f"{name}: input.size(-2) should match other.size(-2) (got {m} and "
        f"{bm.shape[-2]})"
    )


def expected_strictly_positive_integer(ind: Any) -> str:
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


def b_have_least_dimensions(b: Any) -> str:
    return (
        f"b should have at least 2 dimensions, but has {b.ndim} dimensions "
        "instead"
    )


def u_have_least_dimensions(u: Any) -> str:
    return (
        f"u should have at least 2 dimensions, but has {u.ndim} dimensions "
        "instead"
    )


def cholesky_solve_batches_square_matrices(u: Any) -> str:
    return (
        f"cholesky_solve: A must be batches of square matrices, but they are "
        f"{u.shape[-2]} by {u.shape[-1]} matrices"
    )


def incompatible_matrix_sizes_cholesky_solve(u: Any, b: Any) -> str:
    return (
        f"Incompatible matrix sizes for cholesky_solve: each A matrix is "
        f"{u.shape[-1]} by {u.shape[-1]} but each b matrix is {b.shape[-2]} "
        f"by {b.shape[-1]}"
    )


def cholesky_inverse_batches_square_matrices(u: Any) -> str:
    return (
        f"cholesky_inverse: A must be batches of square matrices, but they "
        f"are {u.shape[-2] if u.ndim > 1 else 1} by {u.shape[-1]} matrices"
    )


def function_was_deprecated_since(advice: Any) -> str:
    return (
        f"This function was deprecated since version 1.9 and is now "
        f"removed. {advice}"
    )


def diagonal_element_zero_inversion(name: Any, x: Any, i: Any, k: Any) -> str:
    return (
        f"{name}: {_batch_prefix(x, i)}The diagonal element {k} is zero, "
        "the inversion could not be completed because the input matrix "
        "is singular."
    )


def linalg_solve_batch_dimensions(a: Any, b: Any) -> str:
    return (
        f"linalg.solve: the batch dimensions of A {tuple(a.shape)} and B "
        f"{tuple(b.shape)} do not broadcast"
    )


def torch_linalg_solve_solver() -> str:
    return (
        "torch.linalg.solve: The solver failed because the input matrix is "
        "singular."
    )


def batch_dimensions_do_not(name: Any, a: Any, b: Any) -> str:
    return (
        f"{name}: the batch dimensions of {tuple(a.shape)} and "
        f"{tuple(b.shape)} do not broadcast"
    )


def cholesky_inverse_diagonal_element_zero(u: Any, i: Any, zero: Any) -> str:
    return (
        f"cholesky_inverse: {_batch_prefix(u, i)}The diagonal element "
        f"{int(zero[0]) + 1} is zero, the inversion could not be completed "
        "because the input matrix is singular."
    )
