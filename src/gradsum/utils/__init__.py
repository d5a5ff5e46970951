"""Utilities (torch's ``torch.utils`` names): :mod:`gradsum.utils.data`."""
