"""torch's ``torch.optim.adamw`` path: ``from torch.optim.adamw import AdamW`` ports
unchanged. gradsum defines AdamW beside Adam (:mod:`gradsum.optim.adam`, one update rule with
decoupled weight decay); this module re-exports it.

Example:
    >>> import gradsum
    >>> from gradsum.optim.adamw import AdamW
    >>> AdamW is gradsum.optim.AdamW
    True
"""

from gradsum.optim.adam import AdamW

__all__ = ["AdamW"]
