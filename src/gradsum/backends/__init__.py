"""Switches for the libraries gradsum computes with (like ``torch.backends``).

- :mod:`gradsum.backends.mkl`: Intel MKL's GEMM for large float matrix products, used when
  the optional ``mkl`` package is installed.
- :mod:`gradsum.backends.cudnn`, :mod:`~gradsum.backends.cuda`, :mod:`~gradsum.backends.mps`:
  as torch's CPU-only build answers them (nothing available; switches kept, so
  ``cudnn.benchmark = True`` runs unchanged).
- :mod:`gradsum.backends.mkldnn`, :mod:`~gradsum.backends.openmp`,
  :mod:`~gradsum.backends.opt_einsum`: what gradsum does not use (``is_available()`` False).
- :mod:`gradsum.backends.mha`: the inference fast path of attention layers (on by default).
"""

from gradsum.backends import cuda, cudnn, mha, mkl, mkldnn, mps, openmp, opt_einsum

__all__ = ["cuda", "cudnn", "mha", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]
