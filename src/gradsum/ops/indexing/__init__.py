"""Selecting by index or mask: ``subscript`` (``t[key]``), ``index`` (index_select and
the index_* family), ``gather_scatter``, ``masked`` (where, masked_fill, masked_select).
"""
