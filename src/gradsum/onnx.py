"""``gradsum.onnx``: importable, as ``import torch.onnx`` at the top of a script needs.

Exporting to ONNX needs a captured graph of the model, which gradsum does not build (it runs
eagerly, op by op, in NumPy), so :func:`export` raises :class:`OnnxExporterError`, an
ImportError subclass, as torch's CPU build without the ``onnxscript`` package raises
ModuleNotFoundError there.

Example:
    >>> import gradsum
    >>> try:
    ...     gradsum.onnx.export(gradsum.nn.Linear(2, 1), (gradsum.ones(1, 2),), "m.onnx")
    ... except ImportError as e:
    ...     print(type(e).__name__)
    OnnxExporterError
"""

from __future__ import annotations

from typing import Any

__all__ = ["OnnxExporterError", "export", "is_in_onnx_export"]


class OnnxExporterError(ImportError):
    """ONNX export is not available in gradsum (an ImportError, as torch's missing
    ``onnxscript``)."""


def export(model: Any, args: Any = (), f: Any = None, *rest: Any, **kwargs: Any) -> Any:
    """Raises :class:`OnnxExporterError`: gradsum has no graph capture to export."""
    raise OnnxExporterError(
        "torch.onnx.export needs a captured graph of the model (torch.export / TorchScript), "
        "which gradsum does not have: it runs eagerly in NumPy. Export the model from torch: "
        "save its state_dict with gradsum.save, load it into the same torch model and call "
        "torch.onnx.export there."
    )


def is_in_onnx_export() -> bool:
    """Whether an ONNX export is running: never, in gradsum."""
    return False
