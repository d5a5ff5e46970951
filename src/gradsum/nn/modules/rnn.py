"""Recurrent layers with torch.nn's names, parameters and semantics: the cells ``RNNCell``
(tanh / relu), ``LSTMCell``, ``GRUCell`` and the sequence modules ``RNN``, ``LSTM`` (with
``proj_size``), ``GRU`` (``num_layers``, ``bias``, ``batch_first``, ``dropout`` between
layers, ``bidirectional``, batched or unbatched inputs).

Each layer in each direction (and each cell call) is one op and one graph node,
:func:`gradsum.ops.rnn.rnn_layer`: the input projection of the whole sequence in one product,
the recurrence and its backward (through time) on arrays, and under ``create_graph`` a
backward recomputed from gradsum ops, so second-order gradients work too. Parameters are
named, shaped, ordered and initialised like torch's (``weight_ih_l0``, ``weight_hh_l0``,
``bias_ih_l0``, ``bias_hh_l0``, ``weight_hr_l0``, then the ``_reverse`` ones;
U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) for each), so state_dicts interchange with torch
key for key. Gate
order: LSTM ``i, f, g, o``; GRU ``r, z, n`` with ``n = tanh(W_in x + b_in + r * (W_hn h +
b_hn))``. The sequence modules also take a :class:`~gradsum.nn.utils.rnn.PackedSequence`
(each sequence stops at its own length; the output is packed the same way and ``h_n`` / ``c_n``
hold each sequence's state at its last step, in the batch's original order).

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> _ = gradsum.manual_seed(0)
    >>> lstm = nn.LSTM(10, 20, num_layers=2, batch_first=True)
    >>> lstm
    LSTM(10, 20, num_layers=2, batch_first=True)
    >>> x = gradsum.randn(3, 5, 10)                  # (batch, seq, feature)
    >>> output, (h_n, c_n) = lstm(x)
    >>> output.shape, h_n.shape, c_n.shape
    ((3, 5, 20), (2, 3, 20), (2, 3, 20))
    >>> output.sum().backward()
    >>> lstm.weight_ih_l0.grad.shape
    (80, 10)
    >>> list(lstm.state_dict())[:4]
    ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0']
"""

from __future__ import annotations

import math
import numbers
import typing
import warnings
from typing import Any

from gradsum import _creation, _device
from gradsum import _dtype as D
from gradsum._tensor import Tensor as _Tensor
from gradsum.nn import _messages
from gradsum.nn import functional as _F
from gradsum.nn import init as _init
from gradsum.nn.modules.module import Module as _Module
from gradsum.nn.parameter import Parameter as _Parameter
from gradsum.nn.utils.rnn import PackedSequence as _PackedSequence
from gradsum.ops._core import needs_grad as _needs_grad
from gradsum.ops.rearrange import cat as _cat
from gradsum.ops.rearrange import stack as _stack
from gradsum.ops.rnn import Steps as _Steps
from gradsum.ops.rnn import rnn_layer as _rnn_layer

if typing.TYPE_CHECKING:
    from gradsum._tensor import Tensor
    from gradsum.nn.parameter import Parameter
    from gradsum.nn.utils.rnn import PackedSequence
    from gradsum.ops.rnn import Steps

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _reject_packed(input: Any, name: str) -> None:
    """A clear error for an input that is neither a Tensor nor gradsum's PackedSequence
    (torch's own PackedSequence among them: its data are torch tensors)."""
    if isinstance(input, (_Tensor, _PackedSequence)):
        return
    if hasattr(input, "batch_sizes"):
        raise TypeError(_messages.expected_gradsum_packedsequence_pack_sequences(name, input))
    raise TypeError(_messages.expected_input_tensor(name, input))


def _mini_batch(module: Any, input: Tensor, batch_sizes: Any) -> int:
    """The batch size a state must have: the first step's for packed input."""
    if batch_sizes is not None:
        return int(batch_sizes[0])
    return int(input.shape[0] if module.batch_first else input.shape[1])


def _picker(states: Tensor) -> Any:
    """``idx -> states[idx]``; for states no gradient reaches, the array's row wrapped as is
    (no indexing op), sharing the version counter so that saving it still notices an
    in-place change."""
    if _needs_grad(states):
        return states.__getitem__
    arr, vc = states._array, states._vc

    def pick(idx: int) -> Tensor:
        t = _Tensor._make(arr[idx])
        t._vc = vc
        return t

    return pick


# -- cells ---------------------------------------------------------------------------------------
class RNNCellBase(_Module):
    """The shared parameters of the cells: ``weight_ih`` ``(chunks * hidden, input)``,
    ``weight_hh`` ``(chunks * hidden, hidden)``, ``bias_ih`` and ``bias_hh``
    ``(chunks * hidden,)``, each from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: Any = None, dtype: D.dtype | None = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = _Parameter(_creation.empty((num_chunks * hidden_size, input_size),
                                                   dtype=dtype))
        self.weight_hh = _Parameter(_creation.empty((num_chunks * hidden_size, hidden_size),
                                                   dtype=dtype))
        if bias:
            self.bias_ih = _Parameter(_creation.empty((num_chunks * hidden_size,), dtype=dtype))
            self.bias_hh = _Parameter(_creation.empty((num_chunks * hidden_size,), dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += f", bias={self.bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            _init.uniform_(weight, -stdv, stdv)

    # torch's checks (at::check_rnn_cell_forward_input / _hidden)
    def _check_cell(self, input: Tensor, hxs: tuple[Tensor, ...]) -> None:
        if input.shape[1] != self.input_size:
            raise RuntimeError(_messages.input_inconsistent_input_size_expected(input, self))
        w_dt = self.weight_ih.dtype
        if input.dtype != w_dt:
            raise RuntimeError(_messages.rnn_cell_dtype_mismatch(input, w_dt))
        for k, hx in enumerate(hxs):
            if hx.shape[0] != input.shape[0]:
                raise RuntimeError(_messages.rnn_hidden_batch_mismatch(input, k, hx))
            if hx.ndim < 2 or hx.shape[1] != self.hidden_size:
                got = hx.shape[1] if hx.ndim >= 2 else "none"
                raise RuntimeError(_messages.hidden_inconsistent_hidden_size_expected(k, got, self))

    def _prepare(self, name: str, input: Tensor, hx: Any, n_states: int,
                 hidden_word: str) -> tuple[Tensor, tuple[Tensor, ...], bool]:
        _reject_packed(input, name)
        if input.dim() not in (1, 2):
            raise ValueError(_messages.expected_input_1d_or_2d(name, input))
        if hx is not None:
            states = (hx,) if n_states == 1 else tuple(hx)
            for idx, value in enumerate(states):
                if value.dim() not in (1, 2):
                    what = hidden_word if n_states == 1 else f"hx[{idx}]"
                    raise ValueError(_messages.expected_1d_or_2d_d(name, what, value))
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = _creation.zeros((input.shape[0], self.hidden_size), dtype=input.dtype)
            states = (zeros,) * n_states
        elif not is_batched:
            states = tuple(s.unsqueeze(0) for s in states)
        self._check_cell(input, states)
        return input, states, is_batched


class RNNCell(RNNCellBase):
    """An Elman cell: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or relu).

    Example:
        >>> import gradsum
        >>> cell = gradsum.nn.RNNCell(3, 4, nonlinearity="relu")
        >>> cell(gradsum.ones(2, 3)).shape
        (2, 4)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None,
                 dtype: D.dtype | None = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device,
                         dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, (h,), is_batched = self._prepare("RNNCell", input, hx, 1, "hidden")
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(_messages.unknown_nonlinearity(self))
        mode = "RNN_RELU" if self.nonlinearity == "relu" else "RNN_TANH"
        ret = _rnn_layer(mode, input, self.weight_ih, self.bias_ih, self.weight_hh,
                        self.bias_hh, None, h, None, _Steps.uniform(1, input.shape[0], False))[0]
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """A long short-term memory cell; gates ``i, f, g, o`` are the four row blocks of
    ``weight_ih`` / ``weight_hh``. Returns ``(h', c')``.

    Example:
        >>> import gradsum
        >>> cell = gradsum.nn.LSTMCell(3, 4)
        >>> h, c = cell(gradsum.ones(3))
        >>> h.shape, c.shape
        ((4,), (4,))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: D.dtype | None = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device,
                         dtype=dtype)

    def forward(self, input: Tensor,
                hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        input, (h, c), is_batched = self._prepare("LSTMCell", input, hx, 2, "hx")
        h, _, c = _rnn_layer("LSTM", input, self.weight_ih, self.bias_ih, self.weight_hh,
                            self.bias_hh, None, h, c, _Steps.uniform(1, input.shape[0], False))
        assert c is not None
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """A gated recurrent unit cell (gates ``r, z, n``;
    ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``, ``h' = (1 - z) * n + z * h``).

    Example:
        >>> import gradsum
        >>> cell = gradsum.nn.GRUCell(3, 4)
        >>> cell(gradsum.ones(2, 3), gradsum.zeros(2, 4)).shape
        (2, 4)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: D.dtype | None = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device,
                         dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, (h,), is_batched = self._prepare("GRUCell", input, hx, 1, "hidden")
        ret = _rnn_layer("GRU", input, self.weight_ih, self.bias_ih, self.weight_hh,
                        self.bias_hh, None, h, None, _Steps.uniform(1, input.shape[0], False))[0]
        return ret if is_batched else ret.squeeze(0)


# -- sequence modules ----------------------------------------------------------------------------
class RNNBase(_Module):
    """The shared constructor, parameters and checks of ``RNN``, ``LSTM`` and ``GRU``
    (``mode`` is ``"RNN_TANH"``, ``"RNN_RELU"``, ``"LSTM"`` or ``"GRU"``)."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: D.dtype | None = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):  # type: ignore[operator]
            raise ValueError(_messages.dropout_number_range_0_1(dropout))
        self.dropout = float(dropout)  # type: ignore[arg-type]
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if dropout > 0 and num_layers == 1:  # type: ignore[operator]
            warnings.warn(
                _messages.dropout_option_adds_dropout_after(dropout, num_layers),
                stacklevel=3,
            )
        if not isinstance(bias, bool):
            raise TypeError(_messages.rnn_arg_type("bias", "bool", bias))
        if not isinstance(batch_first, bool):
            raise TypeError(_messages.rnn_arg_type("batch_first", "bool", batch_first))
        if not isinstance(input_size, int):
            raise TypeError(_messages.rnn_arg_type("input_size", "int", input_size))
        if input_size <= 0:
            raise ValueError(_messages.rnn_arg_not_positive("input_size", input_size))
        if not isinstance(hidden_size, int):
            raise TypeError(_messages.rnn_arg_type("hidden_size", "int", hidden_size))
        if hidden_size <= 0:
            raise ValueError(_messages.rnn_arg_not_positive("hidden_size", hidden_size))
        if num_layers <= 0:
            raise ValueError(_messages.rnn_arg_not_positive("num_layers", num_layers))
        if proj_size < 0:
            raise ValueError(_messages.proj_size_positive_integer_or(proj_size))
        if proj_size >= hidden_size:
            raise ValueError(_messages.proj_size_smaller_hidden_size(proj_size, hidden_size))
        if mode not in _GATES:
            raise ValueError(_messages.unrecognized_rnn_mode(mode))
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input = input_size if layer == 0 else real_hidden * num_directions
                suffix = "_reverse" if direction == 1 else ""
                shapes = {"weight_ih": (gate_size, layer_input),
                          "weight_hh": (gate_size, real_hidden)}
                if bias:
                    shapes["bias_ih"] = (gate_size,)
                    shapes["bias_hh"] = (gate_size,)
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                names = []
                for base, shape in shapes.items():
                    name = f"{base}_l{layer}{suffix}"
                    setattr(self, name, _Parameter(_creation.empty(shape, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list[Parameter | None]:
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters of each (layer, direction), in torch's order."""
        return [[getattr(self, w) for w in ws] for ws in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op (torch's only acts on cuDNN weights)."""

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            _init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- checks (torch's check_input / check_hidden_size) ------------------------------------
    def check_input(self, input: Tensor, batch_sizes: Any = None) -> None:
        w_dt = self.weight_ih_l0.dtype
        if input.dtype != w_dt:
            raise ValueError(_messages.rnn_input_dtype_mismatch(input, w_dt))
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(_messages.input_dimensions(expected_input_dim, input))
        if self.input_size != input.shape[-1]:
            raise RuntimeError(_messages.input_size_1_equal_input(self, input))

    def get_expected_hidden_size(self, input: Tensor,
                                 batch_sizes: Any = None) -> tuple[int, int, int]:
        mini_batch = _mini_batch(self, input, batch_sizes)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx: Tensor, expected_hidden_size: tuple[int, int, int],
                          msg: str = "Expected hidden size {}, got {}") -> None:
        if tuple(hx.shape) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.shape)))

    def check_forward_args(self, input: Tensor, hidden: Any, batch_sizes: Any = None) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Any, permutation: Tensor | None) -> Any:
        """``hx`` (or each of ``(h, c)``) with its batch dimension reordered by
        ``permutation`` (``None``: unchanged)."""
        if permutation is None:
            return hx
        if isinstance(hx, tuple):
            return tuple(h.index_select(1, permutation) for h in hx)
        return hx.index_select(1, permutation)

    # -- the recurrence ----------------------------------------------------------------------
    def _run(self, input: Tensor, hx: Tensor, cx: Tensor | None,
             ) -> tuple[Tensor, Tensor, Tensor | None]:
        """The stacked recurrence over a 3-D input; ``cx`` is the LSTM cell state."""
        seq = input.transpose(0, 1) if self.batch_first else input
        if seq.shape[0] == 0:
            raise RuntimeError(_messages.expected_sequence_length_larger_0(input))
        t, b = seq.shape[0], seq.shape[1]
        output, h_n, c_n = self._layers(seq, hx, cx, _Steps.uniform(t, b, False),
                                        _Steps.uniform(t, b, True))
        output = output.transpose(0, 1) if self.batch_first else output
        return output, h_n, c_n

    def _run_packed(self, data: Tensor, batch_sizes: list[int], hx: Tensor,
                    cx: Tensor | None) -> tuple[Tensor, Tensor, Tensor | None]:
        """The stacked recurrence over packed ``data`` (``(sum(lengths), H_in)``, time-major
        runs of ``batch_sizes[t]`` rows), as torch's ``PackedLayer`` /
        ``ReversedPackedLayer``: a sequence that ends leaves its final state behind."""
        return self._layers(data, hx, cx, _Steps.packed(batch_sizes, False),
                            _Steps.packed(batch_sizes, True))

    def _layers(self, layer_input: Tensor, hx: Tensor, cx: Tensor | None, forward: Steps,
                backward: Steps) -> tuple[Tensor, Tensor, Tensor | None]:
        """Every layer and direction, each one :func:`~gradsum.ops.rnn.rnn_layer` (one graph
        node), dropout between layers; the final states stacked as torch's ``h_n``/``c_n``."""
        num_directions = 2 if self.bidirectional else 1
        h_n: list[Tensor] = []
        c_n: list[Tensor] = []
        names = self._all_weights
        pick = _picker(hx)
        pick_c = None if cx is None else _picker(cx)
        for layer in range(self.num_layers):
            outs = []
            for direction in range(num_directions):
                idx = layer * num_directions + direction
                ws = [getattr(self, w) for w in names[idx]]
                b_ih, b_hh = (ws[2], ws[3]) if self.bias else (None, None)
                w_hr = ws[-1] if self.proj_size > 0 else None
                y, h, c = _rnn_layer(self.mode, layer_input, ws[0], b_ih, ws[1], b_hh, w_hr,
                                    pick(idx), None if pick_c is None else pick_c(idx),
                                    backward if direction == 1 else forward)
                outs.append(y)
                h_n.append(h)
                if c is not None:
                    c_n.append(c)
            layer_output = outs[0] if num_directions == 1 else _cat(outs, -1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                layer_output = _F.dropout(layer_output, self.dropout, True)
            layer_input = layer_output
        return layer_input, _stack(h_n), (_stack(c_n) if cx is not None else None)

    def _packed_forward(self, input: PackedSequence, hx: Any,
                        ) -> tuple[PackedSequence, Any]:
        """torch's packed branch of ``forward``: zeros or the permuted ``hx``, the checks,
        the recurrence, and the states put back in the batch's original order."""
        data, batch_sizes_t, sorted_indices, unsorted_indices = input
        batch_sizes = [int(b) for b in batch_sizes_t.tolist()]
        num_directions = 2 if self.bidirectional else 1
        lstm = self.mode == "LSTM"
        if hx is None:
            real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
            shape = (self.num_layers * num_directions, batch_sizes[0])
            h0 = _creation.zeros((*shape, real_hidden), dtype=data.dtype)
            hx = (h0, _creation.zeros((*shape, self.hidden_size), dtype=data.dtype)) if lstm \
                else h0
        else:
            hx = self.permute_hidden(tuple(hx) if lstm else hx, sorted_indices)
        w_dt = self.weight_ih_l0.dtype
        if lstm and data.dtype != w_dt:
            # torch's packed LSTM skips check_forward_args: its kernel's matmul refuses
            raise RuntimeError(_messages.rnn_module_dtype_mismatch(data, w_dt))
        # (torch's packed LSTM checks no sizes either, and may crash: gradsum checks them)
        self.check_forward_args(data, hx, batch_sizes_t)
        if lstm:
            output, h_n, c_n = self._run_packed(data, batch_sizes, hx[0], hx[1])
            hidden: Any = (h_n, c_n)
        else:
            output, hidden, _ = self._run_packed(data, batch_sizes, hx, None)
        packed = _PackedSequence(output, batch_sizes_t, sorted_indices, unsorted_indices)
        return packed, self.permute_hidden(hidden, unsorted_indices)

    def _batch_input(self, input: Tensor, name: str,
                     dims_msg: str) -> tuple[Tensor, bool, int]:
        _reject_packed(input, name)
        if input.dim() not in (2, 3):
            raise ValueError(_messages.expected_input_2d_or_3d(name, input, dims_msg))
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        return input, is_batched, batch_dim

    def _zeros(self, input: Tensor, size: int) -> Tensor:
        num_directions = 2 if self.bidirectional else 1
        mini_batch = input.shape[0] if self.batch_first else input.shape[1]
        return _creation.zeros((self.num_layers * num_directions, mini_batch, size),
                               dtype=input.dtype)

    def _single_state_forward(self, name: str, dims_msg: str, input: Any,
                              hx: Tensor | None) -> tuple[Any, Tensor]:
        if isinstance(input, _PackedSequence):
            return self._packed_forward(input, hx)
        input, is_batched, batch_dim = self._batch_input(input, name, dims_msg)
        if not is_batched:
            if hx is not None:
                if hx.dim() != 2:
                    raise RuntimeError(_messages.unbatched_2_d_input_hx(hx))
                hx = hx.unsqueeze(1)
        elif hx is not None and hx.dim() != 3:
            raise RuntimeError(_messages.batched_3_d_input_hx(hx))
        if hx is None:
            hx = self._zeros(input, self.hidden_size)
        self.check_forward_args(input, hx)
        output, hidden, _ = self._run(input, hx, None)
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = hidden.squeeze(1)
        return output, hidden


class RNN(RNNBase):
    """A multi-layer Elman RNN, ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``
    (``nonlinearity="relu"`` for relu). ``forward(input, hx=None)`` returns
    ``(output, h_n)``.

    Example:
        >>> import gradsum
        >>> rnn = gradsum.nn.RNN(4, 6, num_layers=2, bidirectional=True)
        >>> out, h_n = rnn(gradsum.ones(5, 3, 4))
        >>> out.shape, h_n.shape
        ((5, 3, 12), (4, 3, 6))
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError(_messages.proj_size_argument_only_supported())
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(_messages.unknown_nonlinearity_select_from_tanh(self))
        super().__init__(mode, *args, **kwargs)

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple[Any, Tensor]:
        return self._single_state_forward("RNN", " tensor instead", input, hx)


class GRU(RNNBase):
    """A multi-layer gated recurrent unit (gates ``r, z, n``). ``forward(input, hx=None)``
    returns ``(output, h_n)``.

    Example:
        >>> import gradsum
        >>> gru = gradsum.nn.GRU(4, 6, batch_first=True)
        >>> out, h_n = gru(gradsum.ones(3, 5, 4))
        >>> out.shape, h_n.shape
        ((3, 5, 6), (1, 3, 6))
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError(_messages.proj_size_argument_only_supported())
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple[Any, Tensor]:
        return self._single_state_forward("GRU", " instead", input, hx)


class LSTM(RNNBase):
    """A multi-layer long short-term memory RNN (gates ``i, f, g, o``; with ``proj_size > 0``
    the hidden state is projected by ``weight_hr_l{k}``). ``forward(input, hx=None)`` with
    ``hx = (h_0, c_0)`` returns ``(output, (h_n, c_n))``.

    Example:
        >>> import gradsum
        >>> lstm = gradsum.nn.LSTM(10, 20, proj_size=5)
        >>> out, (h_n, c_n) = lstm(gradsum.ones(7, 10))      # unbatched (seq, feature)
        >>> out.shape, h_n.shape, c_n.shape
        ((7, 5), (1, 5), (1, 20))
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor,
                               batch_sizes: Any = None) -> tuple[int, int, int]:
        mini_batch = _mini_batch(self, input, batch_sizes)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input: Tensor, hidden: Any,  # type: ignore[override]
                           batch_sizes: Any = None) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def forward(self, input: Any, hx: tuple[Tensor, Tensor] | None = None,
                ) -> tuple[Any, tuple[Tensor, Tensor]]:
        if isinstance(input, _PackedSequence):
            return self._packed_forward(input, hx)  # type: ignore[return-value]
        input, is_batched, batch_dim = self._batch_input(input, "LSTM", " instead")
        if hx is None:
            real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
            hx = (self._zeros(input, real_hidden), self._zeros(input, self.hidden_size))
        else:
            want = 3 if is_batched else 2
            if hx[0].dim() != want or hx[1].dim() != want:
                kind = "batched 3-D" if is_batched else "unbatched 2-D"
                raise RuntimeError(_messages.input_hx_cx_also_d(kind, want, hx))
            if not is_batched:
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        self.check_forward_args(input, hx)
        output, h_n, c_n = self._run(input, hx[0], hx[1])
        assert c_n is not None
        if not is_batched:
            output = output.squeeze(batch_dim)
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return output, (h_n, c_n)
