"""``gradsum.version``: the version and build facts scripts print (``torch.version``).

gradsum is built without CUDA, ROCm or XPU, so those are None, as in torch's CPU build.

Example:
    >>> import gradsum
    >>> gradsum.version.cuda, gradsum.version.hip, gradsum.version.__version__[:2]
    (None, None, '0.')
"""

from __future__ import annotations

#: the only place the version is written (pyproject.toml reads it without importing)
__version__ = "0.1.0"

__all__ = ["__version__", "cuda", "debug", "git_version", "hip", "rocm", "xpu"]

#: the CUDA toolkit gradsum was built with: none
cuda: str | None = None
#: the ROCm (HIP) version: none
hip: str | None = None
rocm: str | None = None
#: the XPU (SYCL) version: none
xpu: str | None = None
#: whether this is a debug build
debug = False
#: the source revision (gradsum is installed from its package, not a git build)
git_version = "unknown"
