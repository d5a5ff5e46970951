"""``gradsum.nn.utils.parametrizations``: torch's ready-made parametrizations, registered
with :func:`gradsum.nn.utils.parametrize.register_parametrization`:

- :func:`weight_norm`: ``weight = g * v / ||v||`` (``original0`` is ``g``, ``original1`` is
  ``v``; the norm over every dimension but ``dim``, or the whole tensor for ``dim=None``);
- :func:`spectral_norm`: ``weight / sigma``, ``sigma`` estimated by power iteration with the
  buffers ``_u`` and ``_v`` (15 iterations at registration, ``n_power_iterations`` per access
  in training mode);
- :func:`orthogonal`: an orthogonal (or semi-orthogonal) matrix through ``matrix_exp``
  (torch's default for square matrices), ``cayley`` or ``householder`` (the default for
  non-square ones), with the ``base`` buffer of the dynamic trivialization.

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> from gradsum.nn.utils.parametrizations import weight_norm
    >>> m = weight_norm(nn.Linear(3, 2))
    >>> type(m).__name__, sorted(m.state_dict())
    ('ParametrizedLinear', ['bias', 'parametrizations.weight.original0', \
'parametrizations.weight.original1'])
    >>> tuple(m.parametrizations.weight.original0.shape)
    (2, 1)
"""

from __future__ import annotations

from enum import Enum, auto

from gradsum import _creation, linalg, ops
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import no_grad
from gradsum.nn import _messages
from gradsum.nn import functional as F
from gradsum.nn.modules.module import Module
from gradsum.nn.utils import parametrize
from gradsum.ops.rearrange import cat

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]

_EPS = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23,
        "float64": 2.0 ** -52}


# -- the linear algebra torch takes from LAPACK (real matrices) ---------------------------------
def _householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """torch's ``linalg.householder_product`` (LAPACK ``orgqr``) for real ``A`` ``(..., n, k)``:
    the first ``k`` columns of ``H_0 H_1 ... H_{k-1}``, ``H_i = I - tau_i v_i v_i^T``, ``v_i``
    being column ``i`` of ``A`` below the diagonal with a unit ``i``-th entry. Composed from
    differentiable ops, so its gradient is autograd's."""
    n, k = A.shape[-2], A.shape[-1]
    V = A.tril(-1) + _creation.eye(n, k, dtype=A.dtype)
    Q = _creation.eye(n, k, dtype=A.dtype).expand(*A.shape)
    for i in range(k - 1, -1, -1):
        v = V[..., :, i:i + 1]
        Q = Q - tau[..., i:i + 1].unsqueeze(-1) * (v @ (v.mT @ Q))
    return Q


@no_grad()
def _geqrf(A: Tensor) -> tuple[Tensor, Tensor]:
    """torch's ``geqrf`` (LAPACK ``dgeqrf``, ``dlarfg``'s conventions) for one real matrix
    or a batch: ``R`` on and above the diagonal, the Householder vectors below, and ``tau``."""
    A = A.clone()
    n, k = A.shape[-2], A.shape[-1]
    taus = []
    for j in range(min(n, k)):
        alpha = A[..., j, j]
        x = A[..., j + 1:, j]
        xnorm2 = (x * x).sum(-1)
        beta = -ops.sign(alpha) * (alpha * alpha + xnorm2).sqrt()
        beta = ops.where(alpha == 0, -(xnorm2.sqrt()), beta)
        zero = xnorm2 == 0
        safe_beta = ops.where(zero, _creation.ones_like(beta), beta)
        tau = ops.where(zero, _creation.zeros_like(beta), (beta - alpha) / safe_beta)
        denom = ops.where(zero, _creation.ones_like(alpha), alpha - beta)
        v_tail = x / denom.unsqueeze(-1)
        A[..., j + 1:, j] = ops.where(zero.unsqueeze(-1), x, v_tail)
        A[..., j, j] = ops.where(zero, alpha, beta)
        if j + 1 < k:
            v = cat([_creation.ones_like(alpha).unsqueeze(-1), A[..., j + 1:, j]], -1)
            block = A[..., j:, j + 1:]
            w = (v.unsqueeze(-2) @ block)  # (..., 1, k - j - 1)
            A[..., j:, j + 1:] = block - tau.unsqueeze(-1).unsqueeze(-1) * (v.unsqueeze(-1) @ w)
        taus.append(tau)
    return A, ops.stack(taus, -1)


def _is_orthogonal(Q: Tensor) -> bool:
    n, k = Q.shape[-2], Q.shape[-1]
    Id = _creation.eye(k, dtype=Q.dtype)
    eps = 10.0 * n * _EPS[Q.dtype.name]
    return bool(ops.allclose(Q.mH @ Q, Id, atol=eps))


def _make_orthogonal(A: Tensor) -> Tensor:
    """The Q of ``A``'s QR decomposition with a positive diagonal in R (torch's)."""
    X, tau = _geqrf(A)
    Q = _householder_product(X, tau)
    return Q * X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    base: Tensor

    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError(_messages.householder_not_complex())
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = cat([X, X.new_zeros((n, n - k)).expand(*X.shape[:-2], -1, -1)], -1)
            A = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = linalg.matrix_exp(A)
            else:
                Id = _creation.eye(n, dtype=A.dtype)
                Q = linalg.solve(Id - 0.5 * A, Id + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(-1)
            tau = 2.0 / (1.0 + (A * A).sum(-2))
            Q = _householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    @no_grad()
    def right_inverse(self, Q: Tensor) -> Tensor:
        if tuple(Q.shape) != self.shape:
            raise ValueError(_messages.expected_matrix_or_batch_matrices_shape(self, Q))
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError(_messages.cannot_assign_orthogonal_map())
            A, tau = _geqrf(Q)
            diag = A.diagonal(dim1=-2, dim2=-1)
            signs = ops.where(tau == 0.0, -diag.sign(), diag.sign())
            E = _creation.eye(n, k, dtype=A.dtype)  # (n >= k here: the diagonal has k)
            A = A * (1 - E) + E * signs.unsqueeze(-2)
            return A.mT if transpose else A
        if n == k:
            Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
        else:
            # (random completion to a square matrix: draws from gradsum's generator)
            N = _creation.randn(*Q.shape[:-2], n, n - k, dtype=Q.dtype)
            Q = _make_orthogonal(cat([Q, N], -1))
        self.base = Q
        rows, cols = Q_init.shape[-2], Q_init.shape[-1]
        return -_creation.eye(rows, cols, dtype=Q_init.dtype).expand(*Q_init.shape).clone()


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Parametrize ``module.<name>`` (a matrix or batch of matrices) as an orthogonal /
    semi-orthogonal one. ``orthogonal_map``: ``"matrix_exp"`` (the default for square
    matrices), ``"cayley"`` or ``"householder"`` (the default otherwise). The current value
    is kept when it is orthogonal (else its QR's Q), held in the ``base`` buffer.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> from gradsum.nn.utils.parametrizations import orthogonal
        >>> m = orthogonal(nn.Linear(3, 3))
        >>> Q = m.weight
        >>> bool(gradsum.allclose(Q @ Q.T, gradsum.eye(3), atol=1e-5))
        True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(_messages.module_no_parameter_or_buffer(module, name))
    if weight.ndim < 2:
        raise ValueError(_messages.expected_matrix_or_batch_matrices_tensor(weight))
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.shape[-2] == weight.shape[-1]
                          or weight.is_complex() else "householder")
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError(_messages.orthogonal_map_one_matrix_exp(orthogonal_map))
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


# -- weight norm ---------------------------------------------------------------------------------
def _norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """torch's ``norm_except_dim(v, 2, dim)``: the 2-norm over every dimension but ``dim``
    (kept, size 1), or of the whole tensor (0-d) for ``dim == -1``."""
    if dim == -1:
        return linalg.vector_norm(v)
    d = dim % v.ndim
    others = tuple(i for i in range(v.ndim) if i != d)
    if not others:
        return v.abs()
    return linalg.vector_norm(v, 2, dim=others, keepdim=True)


def _weight_norm(v: Tensor, g: Tensor, dim: int) -> Tensor:
    """torch's ``_weight_norm(v, g, dim)``: ``v * (g / norm_except_dim(v, 2, dim))``."""
    return v * (g / _norm_except_dim(v, dim))


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Parametrize ``module.<name>`` as ``g * v / ||v||`` (``original0`` = ``g``, the norms
    over every dimension but ``dim``; ``original1`` = ``v``, the current weight).
    ``dim=None`` normalises the whole tensor.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> from gradsum.nn.utils.parametrizations import weight_norm
        >>> m = nn.Linear(2, 2)
        >>> w = m.weight.detach().clone()
        >>> m = weight_norm(m)
        >>> bool(gradsum.allclose(m.weight, w))
        True
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


# -- spectral norm -------------------------------------------------------------------------------
class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(_messages.dimension_out_range_expected_range(ndim, dim))
        if n_power_iterations <= 0:
            raise ValueError(_messages.expected_n_power_iterations_positive(n_power_iterations))
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            with no_grad():
                u = weight_mat.new_empty((h,)).normal_(0, 1)
                v = weight_mat.new_empty((w,)).normal_(0, 1)
                self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
                self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    @no_grad()
    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        # (out= keeps the buffers' identity, as torch's)
        for _ in range(n_power_iterations):
            self._u = F.normalize(ops.mv(weight_mat, self._v), dim=0, eps=self.eps,
                                  out=self._u)
            self._v = F.normalize(ops.mv(weight_mat.H, self._u), dim=0, eps=self.eps,
                                  out=self._v)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = ops.vdot(u, ops.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def _is_conv_transpose(module: Module) -> bool:
    from gradsum import nn

    kinds = tuple(getattr(nn, n) for n in ("ConvTranspose1d", "ConvTranspose2d",
                                           "ConvTranspose3d") if hasattr(nn, n))
    return isinstance(module, kinds)


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Parametrize ``module.<name>`` as ``weight / sigma``, ``sigma`` its largest singular
    value estimated by power iteration (buffers ``parametrizations.<name>.0._u`` / ``_v``,
    updated ``n_power_iterations`` times per access in training mode). ``dim``: the output
    dimension (default 1 for ConvTranspose, else 0).

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> from gradsum.nn.utils.parametrizations import spectral_norm
        >>> m = spectral_norm(nn.Linear(4, 3))
        >>> sorted(m.state_dict())
        ['bias', 'parametrizations.weight.0._u', 'parametrizations.weight.0._v', \
'parametrizations.weight.original']
        >>> s = gradsum.linalg.matrix_norm(m.weight.detach(), ord=2)
        >>> bool(abs(s - 1) < 1e-3)
        True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(_messages.module_no_parameter_or_buffer(module, name))
    if dim is None:
        dim = 1 if _is_conv_transpose(module) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module

