"""The texts of the recurrent modules."""

from __future__ import annotations

from typing import Any

from gradsum.nn._messages._format import torch_name

# -- rnn ---------------------------------------------------------------------------------------


def expected_gradsum_packedsequence_pack_sequences(name: Any, input: Any) -> str:
    return (
        f"{name}: expected a gradsum PackedSequence, got {type(input).__module__}."
        f"{type(input).__name__}: pack the sequences with "
        "gradsum.nn.utils.rnn.pack_padded_sequence / pack_sequence"
    )


def expected_input_tensor(name: Any, input: Any) -> str:
    return f"{name}: expected input to be a Tensor, got {type(input).__name__}"


def input_inconsistent_input_size_expected(input: Any, module: Any) -> str:
    return (
        f"input has inconsistent input_size: got {input.shape[1]} expected "
        f"{module.input_size}"
    )


def rnn_cell_dtype_mismatch(input: Any, w_dt: Any) -> str:
    return (
        f"mat1 and mat2 must have the same dtype, but got {torch_name(input.dtype)} "
        f"and {torch_name(w_dt)}: convert the input with .to({w_dt}) or the cell "
        f"with .to({input.dtype})"
    )


def rnn_hidden_batch_mismatch(input: Any, k: Any, hx: Any) -> str:
    return (
        f"Input batch size {input.shape[0]} doesn't match hidden{k} batch size "
        f"{hx.shape[0]}"
    )


def hidden_inconsistent_hidden_size_expected(k: Any, got: Any, module: Any) -> str:
    return (
        f"hidden{k} has inconsistent hidden_size: got {got}, expected "
        f"{module.hidden_size}"
    )


def expected_input_1d_or_2d(name: Any, input: Any) -> str:
    return f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead"


def expected_1d_or_2d_d(name: Any, what: Any, value: Any) -> str:
    return f"{name}: Expected {what} to be 1D or 2D, got {value.dim()}D instead"


def unknown_nonlinearity(module: Any) -> str:
    return f"Unknown nonlinearity: {module.nonlinearity}"


def dropout_number_range_0_1(dropout: Any) -> str:
    return (
        "dropout should be a number in range [0, 1] representing the probability of "
        f"an element being zeroed (got {dropout!r})"
    )


def dropout_option_adds_dropout_after(dropout: Any, num_layers: Any) -> str:
    return (
        "dropout option adds dropout after all but last recurrent layer, so non-zero "
        "dropout expects num_layers greater than 1, but got "
        f"dropout={dropout} and num_layers={num_layers}"
    )


def rnn_arg_type(name: Any, kind: Any, value: Any) -> str:
    return f"{name} should be of type {kind}, got: {type(value).__name__}"


def rnn_arg_not_positive(name: Any, value: Any) -> str:
    return f"{name} must be greater than zero (got {value})"


def proj_size_positive_integer_or(proj_size: Any) -> str:
    return (
        "proj_size should be a positive integer or zero to disable projections "
        f"(got {proj_size})"
    )


def proj_size_smaller_hidden_size(proj_size: Any, hidden_size: Any) -> str:
    return (
        f"proj_size has to be smaller than hidden_size (got proj_size={proj_size}, "
        f"hidden_size={hidden_size})"
    )


def unrecognized_rnn_mode(mode: Any) -> str:
    return "Unrecognized RNN mode: " + mode


def rnn_input_dtype_mismatch(input: Any, w_dt: Any) -> str:
    return (
        f"RNN input dtype ({input.dtype}) does not match weight dtype ({w_dt}). "
        f"Convert input: input.to({w_dt}), or convert model: model.to({input.dtype})"
    )


def input_dimensions(expected_input_dim: Any, input: Any) -> str:
    return f"input must have {expected_input_dim} dimensions, got {input.dim()}"


def input_size_1_equal_input(module: Any, input: Any) -> str:
    return (
        "input.size(-1) must be equal to input_size. Expected "
        f"{module.input_size}, got {input.shape[-1]}: the last dimension of input "
        f"{tuple(input.shape)} holds the features; pass {module.input_size} features there, "
        f"or build the layer with input_size={input.shape[-1]}"
    )


def expected_sequence_length_larger_0(input: Any) -> str:
    return (
        "Expected sequence length to be larger than 0 in RNN (got an input with "
        f"shape {tuple(input.shape)})"
    )


def rnn_module_dtype_mismatch(data: Any, w_dt: Any) -> str:
    return (
        f"mat1 and mat2 must have the same dtype, but got {torch_name(data.dtype)} "
        f"and {torch_name(w_dt)}: convert the input with .to({w_dt}) or the module "
        f"with .to({data.dtype})"
    )


def expected_input_2d_or_3d(name: Any, input: Any, dims_msg: Any) -> str:
    return (
        f"{name}: Expected input to be 2D or 3D, got {input.dim()}D"
        + dims_msg + f" (input of shape {tuple(input.shape)}): pass (L, N, H_in) "
        "((N, L, H_in) with batch_first=True), or (L, H_in) for one unbatched sequence"
    )


def unbatched_2_d_input_hx(hx: Any) -> str:
    return (
        "For unbatched 2-D input, hx should also be 2-D but got "
        f"{hx.dim()}-D tensor"
    )


def batched_3_d_input_hx(hx: Any) -> str:
    return f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor"


def proj_size_argument_only_supported() -> str:
    return "proj_size argument is only supported for LSTM, not RNN or GRU"


def unknown_nonlinearity_select_from_tanh(module: Any) -> str:
    return f"Unknown nonlinearity '{module.nonlinearity}'. Select from 'tanh' or 'relu'."


def input_hx_cx_also_d(kind: Any, want: Any, hx: Any) -> str:
    return (
        f"For {kind} input, hx and cx should also be {want}-D but got "
        f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors"
    )
