"""``gradsum.linalg``: torch.linalg's names that gradsum provides.

Each is the op of the same meaning in :mod:`gradsum.ops.linalg` (``slogdet`` and ``cross`` are
the ``linalg_`` forms there; ``matmul`` is :func:`gradsum.ops.blas.products.matmul`).

Example:
    >>> import gradsum
    >>> a = gradsum.tensor([[2.0, 0.0], [0.0, 4.0]], dtype=gradsum.float64)
    >>> round(gradsum.linalg.det(a).item(), 12)
    8.0
    >>> gradsum.linalg.inv(a).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
"""

from __future__ import annotations

from gradsum.ops.blas.products import (
    matmul,
)
from gradsum.ops.linalg._base import (
    LinAlgError,
)
from gradsum.ops.linalg.decompositions import (
    cholesky,
    cholesky_ex,
    eigh,
    eigvalsh,
    qr,
    svd,
    svdvals,
)
from gradsum.ops.linalg.determinants import (
    det,
)
from gradsum.ops.linalg.determinants import (
    linalg_slogdet as slogdet,
)
from gradsum.ops.linalg.functions import (
    diagonal,
    matrix_exp,
    matrix_power,
    multi_dot,
    vander,
    vecdot,
)
from gradsum.ops.linalg.functions import (
    linalg_cross as cross,
)
from gradsum.ops.linalg.lu import (
    lu,
    lu_factor,
    lu_factor_ex,
    lu_solve,
)
from gradsum.ops.linalg.norms import (
    cond,
    matrix_norm,
    matrix_rank,
    norm,
    vector_norm,
)
from gradsum.ops.linalg.solvers import (
    inv,
    inv_ex,
    lstsq,
    pinv,
    solve,
    solve_ex,
    solve_triangular,
    tensorinv,
    tensorsolve,
)

__all__ = [
    "LinAlgError",
    "cholesky",
    "cholesky_ex",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eigh",
    "eigvalsh",
    "inv",
    "inv_ex",
    "lstsq",
    "lu",
    "lu_factor",
    "lu_factor_ex",
    "lu_solve",
    "matmul",
    "matrix_exp",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_ex",
    "solve_triangular",
    "svd",
    "svdvals",
    "tensorinv",
    "tensorsolve",
    "vander",
    "vecdot",
    "vector_norm",
]
