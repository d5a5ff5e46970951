"""Linear algebra by family: ``solvers``, ``lu``, ``decompositions``, ``determinants``,
``norms``, ``functions`` (matrix functions); ``_base`` holds what they share.
:mod:`gradsum.linalg` is torch.linalg's namespace over these.
"""
