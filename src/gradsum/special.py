"""``gradsum.special``: torch.special's names, one for one.

Most are the gradsum ops of the same meaning (``expit`` is ``sigmoid``, ``gammaln`` is
``lgamma``, ``psi`` is ``digamma``, ``multigammaln`` is ``mvlgamma``, ``gammainc`` is
``igamma``); the rest live in :mod:`gradsum.ops.special`. ``airy_ai`` is not provided (see
the module's tests for the list of torch names left out and why).

Example:
    >>> import gradsum
    >>> x = gradsum.tensor([0.5, 2.0], dtype=gradsum.float64, requires_grad=True)
    >>> y = gradsum.special.entr(x)
    >>> y.grad_fn.name()
    'SpecialEntrBackward0'
    >>> p = gradsum.tensor([0.5, 0.025], dtype=gradsum.float64)
    >>> [f"{v:.12f}" for v in gradsum.special.ndtri(p).tolist()]
    ['0.000000000000', '-1.959963984540']
"""

from __future__ import annotations

from gradsum._tensor import Tensor
from gradsum.ops import (
    digamma,
    erf,
    erfc,
    erfinv,
    exp2,
    expm1,
    i0,
    lgamma,
    log1p,
    log_softmax,
    logit,
    logsumexp,
    mvlgamma,
    polygamma,
    round,
    sigmoid,
    sinc,
    softmax,
    xlogy,
)
from gradsum.ops.special.bessel import (
    bessel_j0,
    bessel_j1,
    bessel_y0,
    bessel_y1,
    i0e,
    i1,
    i1e,
    modified_bessel_i0,
    modified_bessel_i1,
    modified_bessel_k0,
    modified_bessel_k1,
    scaled_modified_bessel_k0,
    scaled_modified_bessel_k1,
    spherical_bessel_j0,
)
from gradsum.ops.special.entropy import entr, xlog1py
from gradsum.ops.special.erf import erfcx, log_ndtr, ndtr, ndtri
from gradsum.ops.special.gamma import igamma, igammac, zeta
from gradsum.ops.special.polynomials import (
    chebyshev_polynomial_t,
    chebyshev_polynomial_u,
    chebyshev_polynomial_v,
    chebyshev_polynomial_w,
    hermite_polynomial_h,
    hermite_polynomial_he,
    laguerre_polynomial_l,
    legendre_polynomial_p,
    shifted_chebyshev_polynomial_t,
    shifted_chebyshev_polynomial_u,
    shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w,
)

expit = sigmoid
gammaln = lgamma
psi = digamma
gammainc = igamma
gammaincc = igammac


def multigammaln(input: Tensor, p: int) -> Tensor:
    """torch.special.multigammaln: the multivariate log-gamma function (``mvlgamma``)."""
    return mvlgamma(input, p)




__all__ = [
    "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
    "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc",
    "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e",
    "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax",
    "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py",
    "xlogy", "zeta",
]
