"""``gradsum.nn.utils.rnn``: torch's packed sequences. :class:`PackedSequence` holds the time
steps of a batch of variable-length sequences back to back (``data``, ``(sum(lengths), *)``)
with ``batch_sizes`` (how many sequences are still running at each step, an int64 tensor) and
the permutations that sorted the batch by decreasing length (``sorted_indices``) and undo it
(``unsorted_indices``).

Packing and padding are built from differentiable ops (slices, ``cat``, ``stack``,
``index_select``), so gradients flow through both, as in torch: the gradient of a padded
position is zero.

Example:
    >>> import gradsum
    >>> from gradsum.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    >>> x = gradsum.tensor([[1.0, 4.0], [2.0, 5.0], [3.0, 0.0]])    # (T=3, B=2)
    >>> packed = pack_padded_sequence(x, [3, 2])
    >>> packed.data, packed.batch_sizes
    (tensor([1., 4., 2., 5., 3.]), tensor([2, 2, 1]))
    >>> padded, lengths = pad_packed_sequence(packed)
    >>> padded.tolist(), lengths.tolist()
    ([[1.0, 4.0], [2.0, 5.0], [3.0, 0.0]], [3, 2])
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import pairwise
from typing import Any, NamedTuple

from gradsum import _creation
from gradsum import _dtype as D
from gradsum._tensor import Tensor
from gradsum.nn import _messages
from gradsum.ops import sort
from gradsum.ops.rearrange import cat, stack

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(PackedSequence_):
    """The data and ``batch_sizes`` of a packed batch of sequences (torch's
    ``nn.utils.rnn.PackedSequence``, a named tuple). Made by :func:`pack_padded_sequence` and
    :func:`pack_sequence`, read by the recurrent modules and :func:`pad_packed_sequence`.

    ``PackedSequence(data, batch_sizes, sorted_indices=None, unsorted_indices=None)``, or
    ``PackedSequence((data, batch_sizes))``; ``unsorted_indices`` defaults to the inverse of
    ``sorted_indices``.

    Example:
        >>> import gradsum
        >>> from gradsum.nn.utils.rnn import PackedSequence
        >>> p = PackedSequence(gradsum.ones(3), gradsum.tensor([2, 1]))
        >>> p
        PackedSequence(data=tensor([1., 1., 1.]), batch_sizes=tensor([2, 1]), \
sorted_indices=None, unsorted_indices=None)
        >>> p.double().data.dtype
        gradsum.float64
    """

    def __new__(cls, data: Any, batch_sizes: Tensor | None = None,
                sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:
        return super().__new__(cls, *_packed_sequence_init_args(data, batch_sizes,
                                                                sorted_indices,
                                                                unsorted_indices))

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """Convert ``data`` like ``Tensor.to``; ``self`` when nothing changes, else a new
        PackedSequence (the index tensors are kept)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def cpu(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """``self`` (gradsum runs on the CPU)."""
        return self.to(*args, **kwargs)

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """As ``Tensor.cuda``: torch's CPU build raises ``AssertionError: Torch not compiled
        with CUDA enabled``."""
        return self.to(*args, device="cuda", **kwargs)

    def is_pinned(self) -> bool:
        """Whether ``data`` is in page-locked memory: never, in gradsum."""
        return False

    def pin_memory(self) -> PackedSequence:
        """As ``Tensor.pin_memory``: raises torch's "Cannot access accelerator device when
        none is available."."""
        return type(self)(self.data.pin_memory(), self.batch_sizes, self.sorted_indices,
                          self.unsorted_indices)

    def double(self) -> PackedSequence:
        return self.to(dtype=D.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=D.float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=D.float16)

    def long(self) -> PackedSequence:
        return self.to(dtype=D.int64)

    def int(self) -> PackedSequence:
        return self.to(dtype=D.int32)

    def short(self) -> PackedSequence:
        return self.to(dtype=D.int16)

    def char(self) -> PackedSequence:
        return self.to(dtype=D.int8)

    def byte(self) -> PackedSequence:
        return self.to(dtype=D.uint8)

    @property
    def is_cuda(self) -> bool:
        """Whether ``data`` is on a GPU (never, in gradsum)."""
        return bool(self.data.is_cuda)


def _packed_sequence_init_args(
    data: Any, batch_sizes: Tensor | None, sorted_indices: Tensor | None,
    unsorted_indices: Tensor | None,
) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    if batch_sizes is not None:
        return data, batch_sizes, sorted_indices, unsorted_indices
    if not (isinstance(data, (list, tuple)) and len(data) == 2):
        raise AssertionError(_messages.expected_data_list_or_tuple())
    return data[0], data[1], sorted_indices, unsorted_indices


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a 1-D permutation tensor (``None`` stays ``None``).

    Example:
        >>> import gradsum
        >>> from gradsum.nn.utils.rnn import invert_permutation
        >>> invert_permutation(gradsum.tensor([2, 0, 1]))
        tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    output = _creation.empty_like(permutation)
    output.scatter_(0, permutation, _creation.arange(0, permutation.numel()))
    return output


def _torch_type_name(t: Tensor) -> str:
    names = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
             "uint8": "Byte", "float32": "Float", "float64": "Double", "float16": "Half",
             "bool": "Bool", "bfloat16": "BFloat16"}
    return names.get(t.dtype.name, t.dtype.name)


def pack_padded_sequence(input: Tensor, lengths: Tensor | Sequence[int],
                         batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) of sequences
    of the given ``lengths``. With ``enforce_sorted=True`` the lengths must be decreasing;
    otherwise the batch is sorted first and the permutation kept in the result.

    Raises ``RuntimeError`` as torch for unsorted lengths with ``enforce_sorted=True``, a
    length ``<= 0``, as many lengths as the batch, or ``lengths`` that is not 1-D.

    Example:
        >>> import gradsum
        >>> from gradsum.nn.utils.rnn import pack_padded_sequence
        >>> x = gradsum.tensor([[1.0, 0.0], [2.0, 3.0]])               # (B=2, T=2)
        >>> p = pack_padded_sequence(x, [1, 2], batch_first=True, enforce_sorted=False)
        >>> p.data, p.batch_sizes, p.sorted_indices
        (tensor([2., 1., 3.]), tensor([2, 1]), tensor([1, 0]))
    """
    if not isinstance(lengths, Tensor):
        lengths = _creation.as_tensor(lengths, dtype=D.int64)
    else:
        lengths = lengths.to(dtype=D.int64)
    sorted_indices: Tensor | None = None
    if not enforce_sorted:
        lengths, sorted_indices = sort(lengths, descending=True)
        batch_dim = 0 if batch_first else 1
        input = input.index_select(batch_dim, sorted_indices)
    data, batch_sizes = _pack_padded(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def _dim_error(dim: int, ndim: int) -> IndexError:
    lo, hi = (-ndim, ndim - 1) if ndim else (-1, 0)
    return IndexError(_messages.wrap_dim_out_of_range(lo, hi, dim))


def _pack_padded(input: Tensor, lengths: Tensor, batch_first: bool) -> tuple[Tensor, Tensor]:
    """torch's ``_pack_padded_sequence``, its checks in its order."""
    if batch_first:
        if input.dim() < 2:
            raise _dim_error(1, input.dim())
        input = input.transpose(0, 1)
    if lengths.dim() != 1:
        raise RuntimeError(_messages.pack_lengths_not_1d(lengths, _torch_type_name(lengths)))
    if input.dim() < 2:
        raise _dim_error(1, input.dim())
    batch_size = input.shape[1]
    lens = [int(v) for v in lengths.tolist()]
    if input.numel() == 0:
        raise RuntimeError(_messages.cannot_pack_empty_tensors())
    if len(lens) != batch_size:
        raise RuntimeError(_messages.expected_len_lengths_equal_batch(lens, batch_size))
    if lens[-1] <= 0:
        raise RuntimeError(_messages.length_all_samples_greater_0())
    if any(a < b for a, b in pairwise(lens)):
        raise RuntimeError(_messages.lengths_array_sorted_decreasing_order())
    if lens[0] > input.shape[0]:
        # (torch reads past the end of the input here; refuse instead)
        raise RuntimeError(_messages.expected_longest_length_at_most(lens, input))
    batch_sizes = [sum(1 for n in lens if n > t) for t in range(lens[0])]
    data = cat([input[t, :bs] for t, bs in enumerate(batch_sizes)], 0)
    return data, _creation.tensor(batch_sizes, dtype=D.int64)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """Undo :func:`pack_padded_sequence`: the padded batch ``(T, B, *)`` (``(B, T, *)`` with
    ``batch_first``), padded with ``padding_value`` to ``total_length`` steps if given, and
    the int64 lengths, both in the batch's original order.

    Example:
        >>> import gradsum
        >>> from gradsum.nn.utils.rnn import pack_sequence, pad_packed_sequence
        >>> p = pack_sequence([gradsum.tensor([1.0]), gradsum.tensor([2.0, 3.0])],
        ...                   enforce_sorted=False)
        >>> padded, lengths = pad_packed_sequence(p, batch_first=True, padding_value=-1.0)
        >>> padded.tolist(), lengths.tolist()
        ([[1.0, -1.0], [2.0, 3.0]], [1, 2])
    """
    batch_sizes = [int(v) for v in sequence.batch_sizes.tolist()]
    max_seq_length = len(batch_sizes)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(_messages.expected_total_length_at_least(total_length, max_seq_length))
        max_seq_length = total_length
    data = sequence.data
    max_batch = batch_sizes[0]
    trailing = tuple(data.shape[1:])
    rows: list[Tensor] = []
    offset = 0
    for bs in batch_sizes:
        step = data[offset:offset + bs]
        offset += bs
        if bs < max_batch:
            fill = _creation.full((max_batch - bs, *trailing), padding_value, dtype=data.dtype)
            step = cat([step, fill], 0)
        rows.append(step)
    if max_seq_length > len(batch_sizes):
        rows.append(_creation.full((max_seq_length - len(batch_sizes), max_batch, *trailing),
                                   padding_value, dtype=data.dtype))
        padded = cat([stack(rows[:-1]), rows[-1]], 0)
    else:
        padded = stack(rows)
    if batch_first:
        padded = padded.transpose(0, 1)
    lengths = _creation.tensor([sum(1 for bs in batch_sizes if bs > b) for b in range(max_batch)],
                               dtype=D.int64)
    unsorted_indices = sequence.unsorted_indices
    if unsorted_indices is not None:
        batch_dim = 0 if batch_first else 1
        return padded.index_select(batch_dim, unsorted_indices), lengths[unsorted_indices]
    return padded, lengths


def pad_sequence(sequences: Tensor | Iterable[Tensor], batch_first: bool = False,
                 padding_value: float = 0.0, padding_side: str = "right") -> Tensor:
    """Stack variable-length tensors ``(L_i, *)`` into ``(T, B, *)`` (``(B, T, *)`` with
    ``batch_first``), padding each with ``padding_value`` on ``padding_side`` (``"right"``
    or ``"left"``). The result has the first sequence's dtype.

    Example:
        >>> import gradsum
        >>> from gradsum.nn.utils.rnn import pad_sequence
        >>> a, b = gradsum.tensor([1.0, 2.0]), gradsum.tensor([3.0])
        >>> pad_sequence([a, b], batch_first=True).tolist()
        [[1.0, 2.0], [3.0, 0.0]]
        >>> pad_sequence([a, b], batch_first=True, padding_side="left").tolist()
        [[1.0, 2.0], [0.0, 3.0]]
    """
    if not isinstance(sequences, Iterable):
        raise RuntimeError(_messages.pad_sequence_expected_iterable_input(sequences))
    seqs = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(_messages.expected_padding_side_one_left(padding_side))
    if not seqs:
        raise RuntimeError(_messages.received_empty_list_sequences())
    first = seqs[0]
    if first.dim() == 0:
        raise RuntimeError(_messages.arrayref_invalid_slice_n_1())
    trailing = tuple(first.shape[1:])
    dtype = first.dtype
    max_len = max(int(s.shape[0]) for s in seqs)
    columns: list[Tensor] = []
    for s in seqs:
        n = int(s.shape[0])
        s = s.to(dtype)
        if tuple(s.shape[1:]) != trailing:
            s = _copy_broadcast(s, (n, *trailing))
        if n < max_len:
            fill = _creation.full((max_len - n, *trailing), padding_value, dtype=dtype)
            s = cat([fill, s] if padding_side == "left" else [s, fill], 0)
        columns.append(s)
    return stack(columns, 0 if batch_first else 1)


def _copy_broadcast(s: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``copy_``'s broadcast of a source into a slot of ``shape`` (torch's message)."""
    src = tuple(s.shape)
    if len(src) <= len(shape):
        for k in range(1, len(src) + 1):
            a, b = shape[-k], src[-k]
            if b != a and b != 1:
                raise RuntimeError(_messages.size_mismatch_at_dim(a, b, shape, k))
    return s.expand(*shape)


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor,
                   batch_first: bool = False) -> list[Tensor]:
    """Split a padded batch back into a list of its sequences (``lengths[i]`` steps each).

    As in torch, a time-major input (``batch_first=False``) is transposed **in place**
    (``padded_sequences.transpose_(0, 1)``), so the caller's tensor is left batch-major.

    Example:
        >>> import gradsum
        >>> from gradsum.nn.utils.rnn import unpad_sequence
        >>> x = gradsum.tensor([[1.0, 2.0], [3.0, 0.0]])
        >>> [s.tolist() for s in unpad_sequence(x, gradsum.tensor([2, 1]), batch_first=True)]
        [[1.0, 2.0], [3.0]]
    """
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    max_length = padded_sequences.shape[1]
    idx = _creation.arange(max_length)
    out = []
    for seq, length in zip(padded_sequences, lengths, strict=True):
        out.append(seq[idx < length])
    return out


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of variable-length tensors ``(L_i, *)`` (decreasing lengths unless
    ``enforce_sorted=False``): ``pack_padded_sequence(pad_sequence(sequences), lengths)``.

    Example:
        >>> import gradsum
        >>> from gradsum.nn.utils.rnn import pack_sequence
        >>> p = pack_sequence([gradsum.tensor([1, 2, 3]), gradsum.tensor([4, 5])])
        >>> p.data, p.batch_sizes
        (tensor([1, 4, 2, 5, 3]), tensor([2, 2, 1]))
    """
    lengths = _creation.as_tensor([v.shape[0] for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a PackedSequence holds, in their original order.

    Example:
        >>> import gradsum
        >>> from gradsum.nn.utils.rnn import pack_sequence, unpack_sequence
        >>> p = pack_sequence([gradsum.tensor([1.0]), gradsum.tensor([2.0, 3.0])],
        ...                   enforce_sorted=False)
        >>> [s.tolist() for s in unpack_sequence(p)]
        [[1.0], [2.0, 3.0]]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
