"""nextafter on the integer bits (float32/float64): NumPy's loop bit for bit, torch's values."""

import numpy as np
import pytest

import gradsum
from gradsum.ops.pointwise import _nextafter

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]")


def _specials(dt):
    f = np.finfo(dt)
    v = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, f.max, -f.max, f.smallest_subnormal,
         -f.smallest_subnormal, f.tiny, -f.tiny]
    return np.array(v, dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_nextafter_bits_match_numpy_loop(dt):
    rng = np.random.default_rng(0)
    ui = np.uint32 if dt == np.float32 else np.uint64
    n = 20000

    def bits():
        return rng.integers(0, np.iinfo(ui).max, n, dtype=ui, endpoint=True).view(dt)

    sp = _specials(dt)
    x = np.concatenate([bits(), rng.choice(sp, n), bits(), rng.uniform(-3, 3, n).astype(dt)])
    y = np.concatenate([bits(), rng.choice(sp, n), rng.choice(sp, n),
                        rng.uniform(-3, 3, n).astype(dt)])
    y[-500:] = x[-500:]
    with np.errstate(all="ignore"):
        for a, b in [(x, y), (sp[:, None], sp[None, :]), (x[:300, None], y[None, :200]),
                     (x, y[:1].reshape(())), (x[:1].reshape(()), y)]:
            want = np.nextafter(a, b)
            got = _nextafter(a, b)
            assert got.shape == want.shape
            assert (got.view(ui) == want.view(ui)).all()
    gx, gy = gradsum.from_numpy(x.copy()), gradsum.from_numpy(y.copy())
    out = gradsum.nextafter(gx, gy).numpy()
    ref = torch.nextafter(torch.from_numpy(x), torch.from_numpy(y)).numpy()
    nan = np.isnan(ref)
    assert (np.isnan(out) == nan).all()
    assert (out[~nan].view(ui) == ref[~nan].view(ui)).all()
