"""Bessel functions: ``i0``/``i1`` and their scaled forms ``i0e``/``i1e``, ``bessel_j0/j1/y0/y1``,
the modified ``modified_bessel_i0/i1/k0/k1`` (and scaled k), ``spherical_bessel_j0``.

Example:
    >>> import gradsum
    >>> gradsum.i0(gradsum.tensor([0.0], dtype=gradsum.float64)).tolist()
    [1.0]
"""

from __future__ import annotations

import math
from typing import Any

import gradsum.ops as F
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.graph import Node
from gradsum.ops._core import (
    _make,
    needs_grad,
    quietly,
    record,
    register,
    require_tensor,
)
from gradsum.ops.arithmetic import _ERR, _unary, _unary_float
from gradsum.ops.pointwise import _back, _f64, _float_in
from gradsum.ops.special.erf import (
    _BLOCK,
    _BLOCK_MIN,
    _back_quiet,
    _blocked,
    _InputOutputBackward,
    _kernel_blocks,
    _poly,
    _unary_saving_both,
)


def _i0_array(x: Any) -> Any:
    """I0 in float64 as NumPy's ``i0`` computes it (Cephes' Chebyshev series, ``exp(|x|)``
    times the series; the same values), with the series beyond 8 on those elements only: in
    :func:`_i1_array` below."""

    return _i_exp(xp.abs(_f64(x)), _I0_A, _I0_B, False)


class SpecialI1Backward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a, out) = self.saved()
        # torch's i1_backward: I1'(x) = I0(x) - I1(x) / x where |x| > eps, else 1/2 (the
        # limit at 0; a nan input takes that branch too: ``nan > eps`` is false)
        dt = a._array.dtype
        eps = xp.finfo(dt).eps
        tiny = _make(~(xp.abs(a._array) > eps))
        safe = F.where(tiny, _make(xp.asarray(eps, dtype=dt)), a)
        d = F.sub(i0(safe), F.mul(out, F.reciprocal(safe)))
        return F.mul(g, F.where(tiny, _make(xp.asarray(0.5, dtype=dt)), d))


def _special_i1(input: Tensor) -> Tensor:
    """torch.special.i1 (the derivative of i0; used by its backward)."""
    x = _float_in(input)
    out = _back(_i1_array(x), x)
    if not needs_grad(input):
        return _make(out)
    node = SpecialI1Backward0()
    t = record(node, (input,), out)
    node.save(input, outputs=(t,))
    return t


class I0Backward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        return F.mul(g, _special_i1(a))


@register("i0", method=True, inplace="i0_")
def i0(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind, order 0.

    Example:
        >>> import gradsum
        >>> gradsum.i0(gradsum.tensor([0.0, 1.0], dtype=gradsum.float64)).tolist()
        [1.0, 1.2660658777520082]
    """
    x = _float_in(input)
    # (NumPy's i0 warns on overflow where torch is silent)
    out = quietly(_back, _i0_array(x), x)
    return _unary(input, out, I0Backward0, "input")


def _chbevl(x: Any, coeffs: tuple[float, ...]) -> Any:
    """Clenshaw's sum of a Chebyshev series (Cephes' ``chbevl``)."""
    if xp.size(x) > 4 * _BLOCK:
        return _blocked(_chbevl, x, coeffs)
    b0 = xp.asarray(xp.zeros_like(x) + coeffs[0])
    b1 = xp.zeros_like(b0)
    b2 = xp.zeros_like(b0)
    for c in coeffs[1:]:  # (in place, three buffers in turn: the same roundings)
        b2, b1, b0 = b1, b0, b2
        xp.multiply(x, b1, out=b0)
        b0 -= b2
        b0 += c
    b0 -= b2
    b0 *= 0.5
    return b0


# == Cephes tables ==============================================================================
_I0_A = (-4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
         1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
         -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
         9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
         -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
         1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
         -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
         1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
         -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
         1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1)
_I0_B = (-7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
         3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
         1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
         -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
         7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
         -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
         3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
         2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
         8.04490411014108831608E-1)
_I1_A = (2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
         -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
         3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
         -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
         9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
         -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
         4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
         -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
         2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
         -1.76416518357834055153E-1, 2.52587186443633654823E-1)
_I1_B = (7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
         -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
         -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
         4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
         -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
         3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10,
         -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
         -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
         7.78576235018280120474E-1)
_K0_A = (1.37446543561352307156e-16, 4.25981614279661018399e-14, 1.03496952576338420167e-11,
         1.90451637722020886025e-09, 2.53479107902614945675e-07, 2.28621210311945178607e-05,
         1.26461541144692592338e-03, 3.59799365153615016266e-02, 3.44289899924628486886e-01,
         -5.35327393233902768720e-01)
_K0_B = (5.30043377268626276149e-18, -1.64758043015242134646e-17, 5.21039150503902756861e-17,
         -1.67823109680541210385e-16, 5.51205597852431940784e-16, -1.84859337734377901440e-15,
         6.34007647740507060557e-15, -2.22751332699166985548e-14, 8.03289077536357521100e-14,
         -2.98009692317273043925e-13, 1.14034058820847496303e-12, -4.51459788337394416547e-12,
         1.85594911495471785253e-11, -7.95748924447710747776e-11, 3.57739728140030116597e-10,
         -1.69753450938905987466e-09, 8.57403401741422608519e-09, -4.66048989768794782956e-08,
         2.76681363944501510342e-07, -1.83175552271911948767e-06, 1.39498137188764993662e-05,
         -1.28495495816278026384e-04, 1.56988388573005337491e-03, -3.14481013119645005427e-02,
         2.44030308206595545468e+00)
_K1_A = (-7.02386347938628759343e-18, -2.42744985051936593393e-15, -6.66690169419932900609e-13,
         -1.41148839263352776110e-10, -2.21338763073472585583e-08, -2.43340614156596823496e-06,
         -1.73028895751305206302e-04, -6.97572385963986435018e-03, -1.22611180822657148235e-01,
         -3.53155960776544875667e-01, 1.52530022733894777053e+00)
_K1_B = (-5.75674448366501715755e-18, 1.79405087314755922667e-17, -5.68946255844285935196e-17,
         1.83809354436663880070e-16, -6.05704724837331885336e-16, 2.03870316562433424052e-15,
         -7.01983709041831346144e-15, 2.47715442448130437068e-14, -8.97670518232499435011e-14,
         3.34841966607842919884e-13, -1.28917396095102890680e-12, 5.13963967348173025100e-12,
         -2.12996783842756842877e-11, 9.21831518760500529508e-11, -4.19035475934189648750e-10,
         2.01504975519703286596e-09, -1.03457624656780970260e-08, 5.74108412545004946722e-08,
         -3.50196060308781257119e-07, 2.40648494783721712015e-06, -1.93619797416608296024e-05,
         1.95215518471351631108e-04, -2.85781685962277938680e-03, 1.03923736576817238437e-01,
         2.72062619048444266945e+00)
_J0_PP = (7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e+00,
          5.44725003058768775090e+00, 8.74716500199817011941e+00, 5.30324038235394892183e+00,
          9.99999999999999997821e-01)
_J0_PQ = (9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e+00,
          5.47097740330417105182e+00, 8.76190883237069594232e+00, 5.30605288235394617618e+00,
          1.00000000000000000218e+00)
_J0_QP = (-1.13663838898469149931e-02, -1.28252718670509318512e+00, -1.95539544257735972385e+01,
          -9.32060152123768231369e+01, -1.77681167980488050595e+02, -1.47077505154951170175e+02,
          -5.14105326766599330220e+01, -6.05014350600728481186e+00)
_J0_QQ = (6.43178256118178023184e+01, 8.56430025976980587198e+02, 3.88240183605401609683e+03,
          7.24046774195652478189e+03, 5.93072701187316984827e+03, 2.06209331660327847417e+03,
          2.42005740240291393179e+02)
_J0_RP = (-4.79443220978201773821e+09, 1.95617491946556577543e+12, -2.49248344360967716204e+14,
          9.70862251047306323952e+15)
_J0_RQ = (4.99563147152651017219e+02, 1.73785401676374683123e+05, 4.84409658339962045305e+07,
          1.11855537045356834862e+10, 2.11277520115489217587e+12, 3.10518229857422583814e+14,
          3.18121955943204943306e+16, 1.71086294081043136091e+18)
_Y0_YP = (1.55924367855235737965e+04, -1.46639295903971606143e+07, 5.43526477051876500413e+09,
          -9.82136065717911466409e+11, 8.75906394395366999549e+13, -3.46628303384729719441e+15,
          4.42733268572569800351e+16, -1.84950800436986690637e+16)
_Y0_YQ = (1.04128353664259848412e+03, 6.26107330137134956842e+05, 2.68919633393814121987e+08,
          8.64002487103935000337e+10, 2.02979612750105546709e+13, 3.17157752842975028269e+15,
          2.50596256172653059228e+17)
_J1_PP = (7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e+00,
          5.11207951146807644818e+00, 8.42404590141772420927e+00, 5.21451598682361504063e+00,
          1.00000000000000000254e+00)
_J1_PQ = (5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e+00,
          5.07386386128601488557e+00, 8.39985554327604159757e+00, 5.20982848682361821619e+00,
          9.99999999999999997461e-01)
_J1_QP = (5.10862594750176621635e-02, 4.98213872951233449420e+00, 7.58238284132545283818e+01,
          3.66779609360150777800e+02, 7.10856304998926107277e+02, 5.97489612400613639965e+02,
          2.11688757100572135698e+02, 2.52070205858023719784e+01)
_J1_QQ = (7.42373277035675149943e+01, 1.05644886038262816351e+03, 4.98641058337653607651e+03,
          9.56231892404756170795e+03, 7.99704160447350683650e+03, 2.82619278517639096600e+03,
          3.36093607810698293419e+02)
_J1_RP = (-8.99971225705559398224e+08, 4.52228297998194034323e+11, -7.27494245221818276015e+13,
          3.68295732863852883286e+15)
_J1_RQ = (6.20836478118054335476e+02, 2.56987256757748830383e+05, 8.35146791431949253037e+07,
          2.21511595479792499675e+10, 4.74914122079991414898e+12, 7.84369607876235854894e+14,
          8.95222336184627338078e+16, 5.32278620332680085395e+18)
_Y1_YP = (1.26320474790178026440e+09, -6.47355876379160291031e+11, 1.14509511541823727583e+14,
          -8.12770255501325109621e+15, 2.02439475713594898196e+17, -7.78877196265950026825e+17)
_Y1_YQ = (5.94301592346128195359e+02, 2.35564092943068577943e+05, 7.34811944459721705660e+07,
          1.87601316108706159478e+10, 3.88231277496238566008e+12, 6.20557727146953693363e+14,
          6.87141087355300489866e+16, 3.97270608116560655612e+18)


# == float64 kernels ===========================================================================
def _i0e_i1e(x: Any, a: tuple[float, ...], b: tuple[float, ...], odd: bool) -> Any:
    """Cephes' i0e (i1e when ``odd``) of a float64 array: the series in ``|x|/2 - 2`` up to 8
    on every element (clamped), the series in ``32/|x| - 2`` beyond 8 on those elements only
    (rare in practice: picked by index)."""
    shape = xp.shape(x)
    if xp.size(x) > _BLOCK_MIN:  # (in blocks, in cache; the same values)
        return _kernel_blocks(lambda v: _i0e_i1e(v, a, b, odd), x)
    x = xp.atleast_1d(x)
    ax = xp.abs(x)
    with xp.errstate(**_ERR):
        t = xp.minimum(ax, 8.0)
        t /= 2.0
        t -= 2.0
        out = _chbevl(t, a)
        if odd:
            out *= ax
        far = xp.flatnonzero(ax > 8.0)
        if far.size:
            af = ax.flat[far]
            out.flat[far] = _chbevl(32.0 / af - 2.0, b) / xp.sqrt(af)
        if odd:  # (-out below 0, as products: -0.0 keeps +0)
            neg = xp.less(x, 0.0, out=t, casting="unsafe")
            neg *= -2.0
            neg += 1.0
            out *= neg
    return out.reshape(shape)


def _i0e_array(x: Any) -> Any:
    return _i0e_i1e(_f64(x), _I0_A, _I0_B, False)


def _i1e_array(x: Any) -> Any:
    return _i0e_i1e(_f64(x), _I1_A, _I1_B, True)


def _k_array(x: Any, a: tuple[float, ...], b: tuple[float, ...], order: int,
             scaled: bool) -> Any:
    """K0/K1 (``scaled``: times ``exp(x)``): Chebyshev series with the log term up to 2."""
    x = _f64(x)
    with xp.errstate(**_ERR):
        xs = xp.minimum(x, 2.0)
        ser = _chbevl(xs * xs - 2.0, a)
        if order == 0:
            i = xp.exp(xp.abs(xs)) * _i0e_array(xs)
            small = ser - xp.log(0.5 * xs) * i
        else:
            i = xp.exp(xp.abs(xs)) * _i1e_array(xs)
            small = xp.log(0.5 * xs) * i + ser / xs
        if scaled:
            small = small * xp.exp(xs)
        xb = xp.maximum(x, 2.0)
        big = _chbevl(8.0 / xb - 2.0, b) / xp.sqrt(xb)
        if not scaled:
            big = xp.exp(-xb) * big
        out = xp.where(x <= 2.0, small, big)
        out = xp.where(x == 0, xp.inf, out)
        return xp.where(x < 0, xp.nan, out)


def _bessel_j_asym(x: Any, pp: Any, pq: Any, qp: Any, qq: Any, phase: float, y: bool) -> Any:
    """The Hankel asymptotic form above 5 (x >= 5 here)."""
    z = 25.0 / (x * x)
    p = _poly(z, pp) / _poly(z, pq)
    q = _poly(z, qp) / _poly(z, qq)
    xn = x - phase
    if y:
        s = p * xp.sin(xn) + 5.0 / x * q * xp.cos(xn)
    else:
        s = p * xp.cos(xn) - 5.0 / x * q * xp.sin(xn)
    return s * math.sqrt(2.0 / math.pi) / xp.sqrt(x)


def _j0_array(x: Any) -> Any:
    ax = xp.abs(_f64(x))
    with xp.errstate(**_ERR):
        xs = xp.minimum(ax, 5.0)
        z = xs * xs
        small = (z - 5.78318596294678452118e+00) * (z - 3.04712623436620863991e+01) * \
            _poly(z, _J0_RP) / _poly(z, _J0_RQ)
        small = xp.where(xs < 1e-5, 1.0 - z / 4.0, small)
        big = _bessel_j_asym(xp.maximum(ax, 5.0), _J0_PP, _J0_PQ, _J0_QP, _J0_QQ,
                             math.pi / 4, False)
    return xp.where(ax <= 5.0, small, big)


def _j1_array(x: Any) -> Any:
    x = _f64(x)
    ax = xp.abs(x)
    with xp.errstate(**_ERR):
        xs = xp.minimum(ax, 5.0)
        z = xs * xs
        small = _poly(z, _J1_RP) / _poly(z, _J1_RQ) * xs * (z - 1.46819706421238932572e+01) * \
            (z - 4.92184563216946036703e+01)
        big = _bessel_j_asym(xp.maximum(ax, 5.0), _J1_PP, _J1_PQ, _J1_QP, _J1_QQ,
                             3 * math.pi / 4, False)
    out = xp.where(ax <= 5.0, small, big)
    return xp.where(x < 0, -out, out)


def _y_array(x: Any, order: int) -> Any:
    x = _f64(x)
    with xp.errstate(**_ERR):
        xs = xp.clip(x, 1e-300, 5.0)
        z = xs * xs
        if order == 0:
            small = _poly(z, _Y0_YP) / _poly(z, _Y0_YQ) + \
                2.0 / math.pi * xp.log(xs) * _j0_array(xs)
            big = _bessel_j_asym(xp.maximum(x, 5.0), _J0_PP, _J0_PQ, _J0_QP, _J0_QQ,
                                 math.pi / 4, True)
        else:
            small = xs * (_poly(z, _Y1_YP) / _poly(z, _Y1_YQ)) + \
                2.0 / math.pi * (_j1_array(xs) * xp.log(xs) - 1.0 / xs)
            big = _bessel_j_asym(xp.maximum(x, 5.0), _J1_PP, _J1_PQ, _J1_QP, _J1_QQ,
                                 3 * math.pi / 4, True)
        out = xp.where(x <= 5.0, small, big)
        out = xp.where(x == 0, -xp.inf, out)
        return xp.where((x < 0) | xp.isnan(x), xp.nan, out)


def _spherical_j0_array(x: Any) -> Any:
    x = _f64(x)
    with xp.errstate(**_ERR):
        z = x * x
        ser = xp.zeros_like(x) + 1.0 / 6227020800.0
        for c in (-1.0 / 39916800.0, 1.0 / 362880.0, -1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0):
            ser = c + z * ser
        out = xp.where(xp.abs(x) < 0.5, 1.0 + z * ser, xp.sin(x) / x)
    return xp.where(xp.isinf(x), 0.0, out)


class SpecialI0EBackward0(_InputOutputBackward):
    __slots__ = ()

    @staticmethod
    def _arrays(ga: Any, aa: Any, oa: Any) -> Any:
        sg = xp.asarray(xp.sign(aa))  # (0 at nan, as sign)
        xp.copyto(sg, 0, where=xp.isnan(sg))
        sg *= oa
        r = xp.asarray(_back_quiet(_i1e_array(aa), aa))
        r -= sg
        return xp.asarray(xp.multiply(ga, r))

    @staticmethod
    def _graph(g: Tensor, a: Tensor, out: Tensor) -> Tensor:
        return F.mul(g, F.sub(i1e(a), F.mul(F.sign(a), out)))


@register("special_i0e")
def i0e(input: Tensor) -> Tensor:
    """The exponentially scaled modified Bessel function ``exp(-|x|) * i0(x)``.

    Example:
        >>> import gradsum
        >>> round(gradsum.special.i0e(gradsum.tensor([1.0], dtype=gradsum.float64)).item(), 12)
        0.465759607594
    """
    return _unary_saving_both("special_i0e", input, _i0e_array, SpecialI0EBackward0)


class SpecialI1EBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        a, out = self.saved()
        eps = float(xp.finfo(a._array.dtype).eps)
        big = _make(xp.abs(a._array) > eps)
        safe = F.where(big, a, _make(xp.full(a._array.shape, eps, dtype=a._array.dtype)))
        d = F.sub(i0e(safe), F.mul(out, F.add(F.sign(safe), F.reciprocal(safe))))
        half = _make(xp.full(a._array.shape, 0.5, dtype=a._array.dtype))
        return F.mul(g, F.where(big, d, half))


@register("special_i1e")
def i1e(input: Tensor) -> Tensor:
    """The exponentially scaled modified Bessel function ``exp(-|x|) * i1(x)``."""
    return _unary_saving_both("special_i1e", input, _i1e_array, SpecialI1EBackward0)


def _i1_array(x: Any) -> Any:
    """Cephes' ``i1``: ``exp(|x|) * i1e(x)`` (nan at +-inf, as torch's); the series beyond 8
    on those elements only (picked by index)."""
    return _i_exp(_f64(x), _I1_A, _I1_B, True)


def _i_exp(x: Any, a: tuple[float, ...], b: tuple[float, ...], odd: bool) -> Any:
    """Cephes' i0 (i1 when ``odd``) of a float64 array, ``exp(|x|)`` times the series of
    :func:`_i0e_i1e` with its roundings (``exp(|x|) series |x|`` below 8, ``exp(|x|)
    series / sqrt(|x|)`` beyond, on those elements only)."""
    shape = xp.shape(x)
    if xp.size(x) > _BLOCK_MIN:  # (in blocks, in cache; the same values)
        return _kernel_blocks(lambda v: _i_exp(v, a, b, odd), x)
    x = xp.atleast_1d(x)
    ax = xp.abs(x)
    with xp.errstate(**_ERR):
        t = xp.minimum(ax, 8.0)
        t /= 2.0
        t -= 2.0
        ser = _chbevl(t, a)
        out = xp.exp(ax)
        out *= ser
        if odd:
            out *= ax
        if odd:  # (-out below 0, as products: -0.0 keeps +0)
            neg = xp.less(x, 0.0, out=t, casting="unsafe")
            neg *= -2.0
            neg += 1.0
            out *= neg
        far = xp.flatnonzero(ax > 8.0)
        if far.size:
            af = ax.flat[far]
            v = xp.exp(af) * _chbevl(32.0 / af - 2.0, b) / xp.sqrt(af)
            out.flat[far] = xp.where(x.flat[far] < 0, -v, v) if odd else v  # (nan at -inf)
    return out.reshape(shape)


@register("special_i1")
def i1(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order 1.

    Example:
        >>> import gradsum
        >>> round(gradsum.special.i1(gradsum.tensor([1.0], dtype=gradsum.float64)).item(), 12)
        0.565159103992
    """
    return _unary_saving_both("special_i1", input, _i1_array, SpecialI1Backward0)


# == not differentiable in torch ===============================================================
def _nondiff_unary(input: Tensor, kernel: Any, name: str) -> Tensor:
    """A function torch does not differentiate: the result never requires grad."""
    require_tensor(name, "input", 1, input)
    x = _unary_float(input)
    with xp.errstate(**_ERR):
        return _make(_back_quiet(kernel(x), x))


def bessel_j0(input: Tensor) -> Tensor:
    """The Bessel function of the first kind of order 0 (not differentiable, as torch).

    Example:
        >>> import gradsum
        >>> round(gradsum.special.bessel_j0(gradsum.tensor([1.0],
        ...                                                dtype=gradsum.float64)).item(), 12)
        0.765197686558
    """
    return _nondiff_unary(input, _j0_array, "special_bessel_j0")


def _nondiff_fn(name: str, kernel: Any, doc: str) -> Any:
    """The public ``name(input)``: ``kernel`` through :func:`_nondiff_unary` (torch's texts
    call it ``special_<name>``)."""
    torch_name = f"special_{name}"

    def fn(input: Tensor) -> Tensor:
        return _nondiff_unary(input, kernel, torch_name)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


bessel_j1 = _nondiff_fn("bessel_j1", _j1_array, "The Bessel function of the first kind of order 1.")
bessel_y0, bessel_y1 = (
    _nondiff_fn(f"bessel_y{n}", lambda x, n=n: _y_array(x, n), "The Bessel function of the "
                f"second kind of order {n} (``-inf`` at 0, nan below).")
    for n in (0, 1))
modified_bessel_i0, modified_bessel_i1 = (
    _nondiff_fn(f"modified_bessel_i{n}", lambda x, e=e: xp.exp(xp.abs(_f64(x))) * e(x),
                f"The modified Bessel function of the first kind of order {n} (not "
                "differentiable).")
    for n, e in ((0, _i0e_array), (1, _i1e_array)))
modified_bessel_k0, modified_bessel_k1, scaled_modified_bessel_k0, scaled_modified_bessel_k1 = (
    _nondiff_fn(f"scaled_modified_bessel_k{n}" if scaled else f"modified_bessel_k{n}",
                lambda x, a=a, b=b, n=n, scaled=scaled: _k_array(x, a, b, n, scaled),
                f"``exp(x) * modified_bessel_k{n}(x)``." if scaled
                else f"The modified Bessel function of the second kind of order {n}.")
    for scaled in (False, True) for n, a, b in ((0, _K0_A, _K0_B), (1, _K1_A, _K1_B)))
spherical_bessel_j0 = _nondiff_fn(
    "spherical_bessel_j0", _spherical_j0_array,
    "The spherical Bessel function ``sin(x) / x`` of the first kind of order 0.")
