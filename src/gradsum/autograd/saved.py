"""Versioned saved tensors: what a node keeps for its backward rule.

A saved tensor remembers the version counter of the tensor it saves. Every in-place op bumps
that counter (views share it with their base), so backward can tell when a value it needs was
overwritten and raise instead of returning a wrong gradient. A node's own outputs are saved
without a reference back to the tensor (only its buffer and counter): holding the output would
make a cycle output -> grad_fn -> saved output, and the graph would outlive its last user.
After backward (unless ``retain_graph``) every saved tensor is released.

Example:
    >>> import gradsum
    >>> x = gradsum.tensor([1.0, 2.0], requires_grad=True)
    >>> y = x * 1
    >>> z = y * y
    >>> _ = y.add_(1)
    >>> try:
    ...     z.sum().backward()
    ... except RuntimeError as e:
    ...     print(str(e)[:60])
    one of the variables needed for gradient computation has bee
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gradsum.autograd import _messages

if TYPE_CHECKING:
    from gradsum._tensor import Tensor
    from gradsum.autograd.graph import Node


_make: Any = None  # Tensor._make


class SavedTensor:
    """One tensor saved by a node, with the version it had when saved."""

    __slots__ = ("_array", "_is_output", "_output_nr", "_tensor", "_vc",
                 "_version_at_save")

    def __init__(self, t: Tensor | None, is_output: bool) -> None:
        self._is_output = is_output
        if t is None:
            self._tensor = self._array = self._vc = None
            self._version_at_save = self._output_nr = 0
        elif is_output:
            self._tensor = None
            self._array = t._array
            self._output_nr = t._output_nr
            self._vc = v = t._vc
            self._version_at_save = v[0]
        else:
            self._tensor = t
            self._array = None
            # (-1: ``t`` was a non-leaf when saved; a later ``detach_()`` makes it unusable)
            self._output_nr = -1 if t._grad_fn is not None else 0
            self._vc = v = t._vc
            self._version_at_save = v[0]

    def check(self, node: Node) -> None:
        ver = self._vc
        if self._output_nr < 0 and self._tensor is not None and self._tensor._grad_fn is None:
            raise RuntimeError(_messages.saved_detached_inplace(self._tensor, node.name()))
        if ver is not None and ver[0] != self._version_at_save:
            t = self._tensor
            if t is None:
                from gradsum._tensor import Tensor

                t = Tensor._make(self._array)
                producer = f"output {self._output_nr} of {node.name()}"
            else:
                producer = (
                    f"output {t._output_nr} of {t._grad_fn.name()}"
                    if t._grad_fn is not None
                    else "a leaf tensor"
                )
            raise RuntimeError(
                _messages.modified_inplace(t, producer, self._version_at_save, ver[0],
                                           node.name())
            )

    def unpack(self, node: Node) -> Any:
        ver = self._vc
        if ver is None:
            return None
        if ver[0] != self._version_at_save or self._output_nr < 0:
            self.check(node)
        if not self._is_output:
            return self._tensor
        global _make
        if _make is None:
            from gradsum._tensor import Tensor  # (import cycle: bound on first use)

            _make = Tensor._make
        # Rebuild the output tensor so that differentiating through it (double backward)
        # reaches this node, without the node ever holding the output object itself.
        out = _make(self._array, False, node, self._output_nr)
        out._vc = ver
        return out

    def release(self) -> None:
        self._tensor = None
        self._array = None
