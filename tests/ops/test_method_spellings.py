"""Side by side with torch: Tensor-method spellings and in-place variants of the products and
other ops the op table runs as functions, linalg.cross's default dim, repeat_interleave's forms
and the dtypes of tril_indices / triu_indices."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import pair64 as _pair  # noqa: E402
from diff_helpers import same_tensor as _same  # noqa: E402

# -- Tensor methods and in-place variants ------------------------------------------------------
METHOD_CALLS: list[tuple[str, Any]] = [
    ("cumprod", lambda x: x.cumprod(1)), ("roll", lambda x: x.roll(1, 0)),
    ("roll", lambda x: x.roll((1, 2), (0, 1))), ("diagonal", lambda x: x.diagonal(1)),
    ("diag", lambda x: x.diag()), ("diag_embed", lambda x: x.diag_embed()),
    ("trace", lambda x: x.trace()), ("movedim", lambda x: x.movedim(0, 1)),
    ("moveaxis", lambda x: x.moveaxis(1, 0)),
    ("repeat_interleave", lambda x: x.repeat_interleave(2, dim=1)),
    ("kron", lambda x: x.kron(x)), ("logcumsumexp", lambda x: x.logcumsumexp(0)),
    ("cummax", lambda x: x.cummax(1)[0]), ("cummin", lambda x: x.cummin(0)[0]),
    ("fliplr", lambda x: x.fliplr()), ("flipud", lambda x: x.flipud()),
    ("rot90", lambda x: x.rot90(1, (1, 0))),
    ("addmm", lambda x: x.addmm(x, x.t(), beta=0.5, alpha=2)),
    ("addmv", lambda x: x[0].addmv(x, x[1])),
    ("baddbmm", lambda x: x.unsqueeze(0).baddbmm(x.unsqueeze(0), x.t().unsqueeze(0))),
    ("addbmm", lambda x: x.addbmm(x.unsqueeze(0), x.t().unsqueeze(0), alpha=3)),
]


@pytest.mark.parametrize(("name", "call"), METHOD_CALLS,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(METHOD_CALLS)])
def test_methods_match_torch(name: str, call: Any) -> None:
    vals = np.array([[0.3, -1.2, 0.8], [1.1, 0.4, -0.6], [0.9, 0.2, 1.7]])
    gx, tx = _pair(vals)
    gy, ty = call(gx), call(tx)
    _same(gy, ty)
    gy.sum().backward()
    ty.sum().backward()
    _same(gx.grad, tx.grad)


INPLACE_CALLS: list[tuple[str, Any, Any]] = [
    ("cumprod_", np.array([[0.5, -1.0], [2.0, 0.0]]), lambda x, o: x.cumprod_(1)),
    ("addmm_", np.array([[0.5, -1.0], [2.0, 0.25]]), lambda x, o: x.addmm_(o, o, beta=0.5)),
    ("addmv_", np.array([0.5, -1.0]), lambda x, o: x.addmv_(o, o[0], alpha=2)),
    ("baddbmm_", np.array([[[0.5, -1.0], [2.0, 0.25]]]),
     lambda x, o: x.baddbmm_(o[None], o[None])),
    ("addbmm_", np.array([[0.5, -1.0], [2.0, 0.25]]), lambda x, o: x.addbmm_(o[None], o[None])),
]


@pytest.mark.parametrize(("name", "x", "call"), INPLACE_CALLS,
                         ids=[n for n, _, _ in INPLACE_CALLS])
def test_inplace_variants(name: str, x: Any, call: Any) -> None:
    """The in-place products (addmm_, baddbmm_, ...) return self, bump the version once, record
    torch's node and give torch's gradients."""
    gx, tx = _pair(x)
    go, to = _pair(np.array([[1.5, 0.5], [-0.5, 1.0]]))
    gy, ty = gx * 1, tx * 1
    assert call(gy, go) is gy and call(ty, to) is ty
    _same(gy, ty)
    assert gy._version == ty._version == 1
    assert gy.grad_fn.name() == type(ty.grad_fn).__name__
    gy.sum().backward()
    ty.sum().backward()
    _same(gx.grad, tx.grad)
    if to.grad is not None:
        _same(go.grad, to.grad)


def test_linalg_cross_and_default_dim() -> None:
    ga, ta = _pair(np.arange(15.0).reshape(5, 3) / 4)
    gb, tb = _pair(np.cos(np.arange(15.0)).reshape(5, 3))
    _same(gradsum.linalg.cross(ga, gb), torch.linalg.cross(ta, tb))
    gc, tc = gradsum.linalg.cross(ga, gb), torch.linalg.cross(ta, tb)
    assert gc.grad_fn.name() == type(tc.grad_fn).__name__ == "LinalgCrossBackward0"
    gc.sum().backward()
    tc.sum().backward()
    _same(ga.grad, ta.grad)
    _same(gb.grad, tb.grad)
    import gradsum.linalg as glinalg

    assert glinalg.cross is gradsum.linalg.cross
    with pytest.raises(RuntimeError) as te:
        torch.linalg.cross(torch.zeros(3, 5), torch.zeros(3, 5))
    with pytest.raises(RuntimeError) as ge:
        gradsum.linalg.cross(gradsum.zeros(3, 5), gradsum.zeros(3, 5))
    assert str(te.value).split(".")[0] in str(ge.value)


def test_repeat_interleave_forms() -> None:
    r = [2, 0, 3]
    assert (gradsum.repeat_interleave(gradsum.tensor(r)).tolist()
            == torch.repeat_interleave(torch.tensor(r)).tolist())
    gx, tx = _pair(np.arange(6.0).reshape(3, 2))
    gy = gradsum.repeat_interleave(gx, gradsum.tensor(r), dim=0, output_size=5)
    ty = torch.repeat_interleave(tx, torch.tensor(r), dim=0, output_size=5)
    _same(gy, ty)
    assert gy.grad_fn.name() == type(ty.grad_fn).__name__
    gz, tz = gx.repeat_interleave(3), tx.repeat_interleave(3)
    assert gz.grad_fn.name() == type(tz.grad_fn).__name__ == "ViewBackward0"
    (gy.sum() + gz.sum()).backward()
    (ty.sum() + tz.sum()).backward()
    _same(gx.grad, tx.grad)


def test_triangle_indices_dtypes() -> None:
    for args, kw in (((3, 4, 1), {}), ((4, 4), {"dtype": "int32"})):
        kg = {k: getattr(gradsum, v) for k, v in kw.items()}
        kt = {k: getattr(torch, v) for k, v in kw.items()}
        for name in ("triu_indices", "tril_indices"):
            g, t = getattr(gradsum, name)(*args, **kg), getattr(torch, name)(*args, **kt)
            assert g.tolist() == t.tolist() and g.dtype.name == str(t.dtype)[6:]
            assert not g.requires_grad
