"""torch.special's remaining functions: ``entr``, ``ndtr``/``ndtri``/``log_ndtr``, ``erfcx``,
``xlog1py``, ``i0e``/``i1e``, ``zeta`` (Hurwitz), ``gammainc``/``gammaincc`` (torch's
``igamma``/``igammac``), the Bessel functions ``bessel_j0/j1/y0/y1``,
``modified_bessel_i0/i1/k0/k1``, ``scaled_modified_bessel_k0/k1``, ``spherical_bessel_j0``,
and the orthogonal polynomial families.

The kernels run in float64 on NumPy arrays and round to the input's dtype. The Chebyshev and
rational coefficients of the Bessel functions, ``i0e``/``i1e`` and ``ndtri`` are the Cephes
Math Library's (Copyright (c) 2018 Steven Moshier, 3-clause BSD), the same tables torch
evaluates, so the values agree to a few ulps. ``erfcx`` is ``exp(x^2) erfc(x)`` below 2 and
Laplace's continued fraction above; ``gammainc`` is the power series below ``a + 1`` and
Legendre's continued fraction above, each with the prefactor ``x^a e^-x / Gamma(a)`` taken
through ``lgamma``. The differentiable ones have torch's node (``SpecialEntrBackward0``,
``IgammaBackward0``, ...) with torch's derivative written in gradsum ops, so double backward
works; the derivatives torch does not implement (``zeta`` and ``igamma`` in their first
argument) raise torch's ``NotImplementedError`` when backward reaches them. The Bessel
functions and polynomials are not differentiable in torch: their results never require grad.

Example:
    >>> import gradsum
    >>> from gradsum.ops.special2 import ndtri
    >>> [round(v, 12) for v in ndtri(gradsum.tensor([0.5, 0.975],
    ...                                             dtype=gradsum.float64)).tolist()]
    [0.0, 1.95996398454]
"""

from __future__ import annotations

import math
from typing import Any

import gradsum.ops as F
from gradsum import _dtype as D
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import _state
from gradsum.autograd.graph import Node
from gradsum.ops._core import _make, broadcast_error, needs_grad, record, register, scalar_value
from gradsum.ops._erf import _C as _ERF_C
from gradsum.ops._erf import _D as _ERF_D
from gradsum.ops._erf import _F32_P as _ERF_F32_P
from gradsum.ops._erf import _F32_Q as _ERF_F32_Q
from gradsum.ops._erf import _F32_SMALL_BOUND as _ERF_F32_SMALL_BOUND
from gradsum.ops._erf import _P as _ERF_P
from gradsum.ops._erf import _Q as _ERF_Q
from gradsum.ops._erf import _SMALL as _ERF_SMALL
from gradsum.ops._erf import _ratio as _erf_ratio
from gradsum.ops._erf import _small as _erf_small
from gradsum.ops._erf import _small_f32 as _erf_small_f32
from gradsum.ops._scipy_special import kernel as _scipy_kernel
from gradsum.ops.elementwise import _sum_to, _unary, _unary_float
from gradsum.ops.special import (
    _ERR,
    SpecialI1Backward0,
    _bcast,
    _erfc_array,
    _f64,
    _float_pair,
    _lgamma_array,
    _masked_zero,
    _promoted_float,
    _record2,
    _require_tensor,
    xlog_op,
)

_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_SQRT1_2 = math.sqrt(0.5)
_F32_F64 = (xp.dtype(xp.float32), xp.dtype(xp.float64))


def _back(out: Any, x: Any) -> Any:
    with xp.errstate(**_ERR):  # (a float64 result beyond float32's range rounds to inf)
        return xp.asarray(out).astype(x.dtype, copy=False)


#: the block (elements) a long series runs over at a time: its buffers stay in cache
_BLOCK = 1 << 14
#: the size from which a whole kernel runs in blocks (below it, one pass each is cheaper)
_BLOCK_MIN = 1 << 18


def _blocked(fn: Any, x: Any, coeffs: tuple[float, ...]) -> Any:
    """``fn(x, coeffs)`` over blocks of ``_BLOCK`` elements of a long ``x`` (each pass of a
    long series then runs in cache, not through memory), the same values."""
    flat = xp.ravel(x)
    first = fn(flat[:_BLOCK], coeffs)
    out = xp.empty(flat.shape, dtype=first.dtype)
    out[:_BLOCK] = first
    for i in range(_BLOCK, flat.size, _BLOCK):
        out[i:i + _BLOCK] = fn(flat[i:i + _BLOCK], coeffs)
    return out.reshape(xp.shape(x))


def _kernel_blocks(fn: Any, x: Any) -> Any:
    """``fn(x)``, an elementwise float64 kernel, over blocks of ``_BLOCK`` elements of a long
    ``x`` (its temporaries then stay in cache), the same values."""
    flat = xp.ravel(x)
    out = xp.empty(flat.shape, dtype=xp.float64)
    for i in range(0, flat.size, _BLOCK):
        out[i:i + _BLOCK] = fn(flat[i:i + _BLOCK])
    return out.reshape(xp.shape(x))


def _poly(x: Any, coeffs: tuple[float, ...]) -> Any:
    """Horner, highest power first (Cephes' ``polevl``)."""
    if xp.size(x) > 4 * _BLOCK:
        return _blocked(_poly, x, coeffs)
    acc = xp.asarray(xp.zeros_like(x) + coeffs[0])
    for c in coeffs[1:]:  # (in place: the same roundings as acc * x + c)
        acc *= x
        acc += c
    return acc


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
_NDTRI_P0 = (-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
             1.39312609387279679503E1, -1.23916583867381258016E0)
_NDTRI_Q0 = (1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
             -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
             1.59056225126211695515E1, -1.18331621121330003142E0)
_NDTRI_P1 = (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
             4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
             -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4)
_NDTRI_Q1 = (1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
             1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
             -3.80806407691578277194E-2, -9.33259480895457427372E-4)
_NDTRI_P2 = (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
             1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
             3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9)
_NDTRI_Q2 = (1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
             2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
             2.89247864745380683936E-6, 6.79019408009981274425E-9)


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


def _erfcx_ratio(y: Any, exact: bool) -> Any:
    """``exp(y^2) erfc(y)`` for ``y`` in the erf kernels' middle region (clamped to it by the
    caller): the rational function of their erfc rule, without its ``exp(-y^2)`` (Cody's for
    a float64 result, the float32-result rule otherwise), in place in a new array."""
    p, q = (_ERF_C, _ERF_D) if exact else (_ERF_F32_P, _ERF_F32_Q[1:])
    n = len(q)
    num = y * p[n]
    den = y.copy() if exact else y * q[n - 1]
    for i in range(n - 1):
        num += p[i] if exact else p[n - 1 - i]
        num *= y
        den += q[i] if exact else q[n - 2 - i]
        den *= y
    num += p[n - 1] if exact else p[0]
    den += q[n - 1] if exact else 1.0
    num /= den
    return num


def _erfcx_large(y: Any) -> Any:
    """``exp(y^2) erfc(y)`` beyond the middle region (Cody's rule for erfc above 4 without its
    ``exp(-y^2)``; 0 at inf)."""
    s = y * y
    xp.reciprocal(s, out=s)
    num = _erf_ratio(s, _ERF_P, _ERF_Q)
    num *= s
    xp.subtract(1.0 / _SQRT_PI, num, out=num)
    num /= y
    return num


def _erfcx_array(x: Any) -> Any:
    """``exp(x^2) erfc(x)`` in float64: ``exp(x^2) (1 - erf(x))`` below the erf kernels'
    small bound, the rational functions of their erfc rules without the ``exp(-x^2)`` above
    (Cody's large rule beyond 4, on those elements only), ``2 exp(x^2) - erfcx(-x)`` for
    negative x (inf below -26.7); the float32-result rules for a narrower ``x``. The regions
    are blended with products of 0 and 1 (no select)."""
    exact = xp.asarray(x).dtype.itemsize >= 8
    shape = xp.shape(x)
    if xp.size(x) > _BLOCK_MIN:  # (in blocks, in cache; the same values)
        return _kernel_blocks(_erfcx_array, x)
    x = xp.atleast_1d(_f64(x))
    ax = xp.abs(x)
    with xp.errstate(**_ERR):
        bound = _ERF_SMALL if exact else _ERF_F32_SMALL_BOUND
        ys = xp.minimum(ax, bound)
        e = ys * ys
        xp.exp(e, out=e)
        small = _erf_small(ys) if exact else _erf_small_f32(ys)
        xp.subtract(1.0, small, out=small)
        small *= e
        xp.clip(ax, bound, 4.0, out=ys)
        pos = _erfcx_ratio(ys, exact)
        far = xp.flatnonzero(ax > 4.0)
        if far.size:
            pos.flat[far] = _erfcx_large(ax.flat[far])
        lo = xp.less(ax, bound, out=e, casting="unsafe")
        small *= lo
        xp.subtract(1.0, lo, out=lo)
        pos *= lo
        pos += small
        # x < 0: 2 exp(x^2) - erfcx(|x|) (exp(0) elsewhere: no inf times 0)
        xn = xp.minimum(x, 0.0, out=ys)
        xn *= xn
        xp.exp(xn, out=xn)
        xn *= 2.0
        xn -= pos
        neg = xp.less(x, 0.0, out=lo, casting="unsafe")
        xn *= neg
        xp.subtract(1.0, neg, out=neg)
        pos *= neg
        pos += xn
    return pos.reshape(shape)


@_scipy_kernel("ndtri")
def _ndtri_array(y0: Any) -> Any:
    """Cephes' ``ndtri``: a rational function of ``y - 1/2`` in the centre and of
    ``1 / sqrt(-2 log y)`` in the tails."""
    if xp.size(y0) > _BLOCK_MIN:  # (in blocks, in cache; the same values)
        return _kernel_blocks(_ndtri_array, y0)
    y0 = _f64(y0)
    with xp.errstate(**_ERR):
        hi = y0 > 1.0 - 0.13533528323661269189
        y = xp.where(hi, 1.0 - y0, y0)
        yc = y - 0.5
        y2 = yc * yc
        centre = (yc + yc * (y2 * _poly(y2, _NDTRI_P0) / _poly(y2, _NDTRI_Q0))) * _SQRT_2PI
        out = xp.atleast_1d(centre)
        # the tails on their elements only (picked by index; the same steps per element)
        idx = xp.flatnonzero(~(y > 0.13533528323661269189))
        if idx.size:
            yi, y0i = y.flat[idx], y0.flat[idx]
            yt = xp.clip(yi, 1e-300, 1.0)
            t = xp.sqrt(-2.0 * xp.log(yt))
            x0 = t - xp.log(t) / t
            z = 1.0 / t
            x1 = xp.where(t < 8.0, z * _poly(z, _NDTRI_P1) / _poly(z, _NDTRI_Q1),
                          z * _poly(z, _NDTRI_P2) / _poly(z, _NDTRI_Q2))
            tail = x0 - x1
            tail = xp.where(hi.flat[idx], tail, -tail)
            tail = xp.where(y0i == 0.0, -xp.inf, xp.where(y0i == 1.0, xp.inf, tail))
            out.flat[idx] = xp.where((y0i < 0) | (y0i > 1) | xp.isnan(y0i), xp.nan, tail)
        return out.reshape(xp.shape(y0))


@_scipy_kernel("log_ndtr")
def _log_ndtr_array(x: Any) -> Any:
    if xp.size(x) > 4 * _BLOCK:  # (in blocks, in cache; the same values)
        return _kernel_blocks(_log_ndtr_array, x)
    x = _f64(x)
    with xp.errstate(**_ERR):
        t = xp.atleast_1d(x * _SQRT1_2)
        out = xp.log1p(-_erfc_array(t) / 2.0)
        # below -1 the erfcx form, on those elements only (picked by index)
        idx = xp.flatnonzero(x < -1.0)
        if idx.size:
            ti = t.flat[idx]
            out.flat[idx] = xp.log(_erfcx_array(-ti) / 2.0) - ti * ti
        return out.reshape(xp.shape(x))


def _entr_array(x: Any) -> Any:
    with xp.errstate(**_ERR):
        out = xp.where(x > 0, -x * xp.log(xp.where(x > 0, x, 1)), 0)
        out = xp.where(x < 0, -xp.inf, out)
        return xp.where(xp.isnan(x), xp.nan, out).astype(x.dtype, copy=False)


def _zeta_array(x: Any, q: Any) -> Any:
    """Cephes' Hurwitz ``zeta(x, q)`` for arrays of both (direct sum while ``a <= 9``, then
    Euler-Maclaurin), with Cephes' early exits element by element."""
    x, q = xp.broadcast_arrays(_f64(x), _f64(q))
    x, q = x.copy(), q.copy()
    a_coef = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
              7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
              -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)
    eps = 1.11022302462515654042E-16
    with xp.errstate(**_ERR):
        special = xp.full(x.shape, xp.nan)
        settled = (x == 1.0) | (x < 1.0) | xp.isnan(x) | xp.isnan(q)
        special = xp.where(x == 1.0, xp.inf, special)
        qpole = (q <= 0) & (q == xp.floor(q)) & ~settled
        special = xp.where(qpole, xp.inf, special)
        settled |= qpole
        bad = (q <= 0) & (x != xp.floor(x)) & ~settled
        settled |= bad
        done = settled.copy()
        s = xp.power(q, -x)
        a = q.copy()
        b = xp.zeros_like(q)
        i = 0
        while True:
            m = ~done & ((i < 9) | (a <= 9.0))
            if not m.any():
                break
            i += 1
            a = xp.where(m, a + 1.0, a)
            b = xp.where(m, xp.power(a, -x), b)
            s = xp.where(m, s + b, s)
            done |= m & (-eps * s < b) & (b < eps * s)
        w = a
        live = ~done
        s = xp.where(live, s + b * w / (x - 1.0) - 0.5 * b, s)
        fa = xp.ones_like(x)
        k = 0.0
        for c in a_coef:
            fa = fa * (x + k)
            b = b / w
            t = fa * b / c
            s = xp.where(live, s + t, s)
            live &= ~(xp.abs(t / s) < eps)
            k += 1.0
            fa = fa * (x + k)
            b = b / w
            k += 1.0
        return xp.where(settled, special, s)


def _igam_prefactor(a: Any, x: Any) -> Any:
    """``x^a e^-x / Gamma(a)`` through logs (0 where it underflows)."""
    return xp.exp(a * xp.log(x) - x - _lgamma_array(a))


def _igamma_pair(a: Any, x: Any) -> tuple[Any, Any]:
    """The regularized lower and upper incomplete gamma functions ``(P, Q)`` for finite
    ``a > 0, x > 0``: the series of P below ``a + 1``, the continued fraction of Q above."""
    with xp.errstate(**_ERR):
        pre = _igam_prefactor(a, x)
        use_series = x < a + 1.0
        # P = pre / a * sum x^n / ((a+1)...(a+n))
        # (each loop runs on its live elements only, dropping those that have converged: the
        # same steps per element as on the whole array)
        tot = xp.ones_like(a)
        idx = xp.flatnonzero(use_series)
        r, xs = a.flat[idx], x.flat[idx]
        c = xp.ones_like(r)
        ts = xp.ones_like(r)
        for _ in range(2000):
            if not idx.size:
                break
            r += 1.0  # (in place: the same roundings)
            c *= xs
            c /= r
            ts += c
            done = c <= 1.11e-16 * ts
            if done.any():
                tot.flat[idx[done]] = ts[done]
                keep = ~done
                idx, r, xs, c, ts = idx[keep], r[keep], xs[keep], c[keep], ts[keep]
        tot.flat[idx] = ts
        p_ser = tot * pre / a
        # Q = pre * 1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - ...)) (modified Lentz)
        tiny = 1e-300
        bq = x + 1.0 - a
        cq = xp.full(a.shape, 1.0 / tiny)
        dq = 1.0 / xp.where(bq == 0, tiny, bq)
        h = dq.copy()
        idx = xp.flatnonzero(~use_series)
        ai, bi, ci, di, hi = a.flat[idx], bq.flat[idx], cq.flat[idx], dq.flat[idx], h.flat[idx]
        for n in range(1, 2000):
            if not idx.size:
                break
            an = n - ai  # (in place: the same roundings)
            an *= -n
            bi += 2.0
            di *= an
            di += bi
            xp.copyto(di, tiny, where=xp.abs(di) < tiny)
            xp.divide(1.0, di, out=di)
            xp.divide(an, ci, out=ci)
            ci += bi
            xp.copyto(ci, tiny, where=xp.abs(ci) < tiny)
            delta = xp.multiply(ci, di, out=an)
            hi *= delta
            delta -= 1.0
            done = xp.abs(delta, out=delta) < 1.11e-16
            if done.any():
                h.flat[idx[done]] = hi[done]
                keep = ~done
                idx, ai, bi, ci, di, hi = (idx[keep], ai[keep], bi[keep], ci[keep], di[keep],
                                           hi[keep])
        h.flat[idx] = hi
        q_cf = pre * h
        p = xp.where(use_series, p_ser, 1.0 - q_cf)
        q = xp.where(use_series, 1.0 - p_ser, q_cf)
    return p, q


@_scipy_kernel("igamma")
def _igamma_array(a: Any, x: Any, upper: bool) -> Any:
    a, x = xp.broadcast_arrays(_f64(a), _f64(x))
    out = xp.full(a.shape, xp.nan)
    fin = (a > 0) & (x > 0) & xp.isfinite(a) & xp.isfinite(x)
    if fin.any():
        p, q = _igamma_pair(a[fin], x[fin])
        out[fin] = q if upper else p
    lo, hi = (1.0, 0.0) if upper else (0.0, 1.0)
    ok = (a >= 0) & (x >= 0)
    out = xp.where(ok & (a == 0) & (x > 0), hi, out)
    out = xp.where(ok & (a > 0) & (x == 0), lo, out)
    out = xp.where(ok & xp.isinf(a) & xp.isfinite(x) & (x > 0), lo, out)
    out = xp.where(ok & xp.isinf(a) & (x == 0), lo, out)
    out = xp.where(ok & (a > 0) & xp.isfinite(a) & xp.isinf(x), hi, out)
    return out


# == unary differentiable ops ==================================================================
class SpecialEntrBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        return F.mul(g, F.neg(F.add(F.log(a), 1)))


@register("special_entr")
def entr(input: Tensor) -> Tensor:
    """The elementwise entropy ``-x log x`` (0 at 0, ``-inf`` below 0).

    Example:
        >>> import gradsum
        >>> gradsum.special.entr(gradsum.tensor([0.0, 0.5, -1.0])).tolist()
        [0.0, 0.3465735912322998, -inf]
    """
    _require_tensor("special_entr", "input", 1, input)
    x = _unary_float(input)
    return _unary(input, _entr_array(x), SpecialEntrBackward0, "input")


def _alike_float(*arrays: Any) -> bool:
    """Whether the arrays share one float32 or float64 dtype and one shape: the case an
    array backward computes directly (others go through the recorded rule)."""
    first = arrays[0]
    return first.dtype in _F32_F64 and all(
        a.dtype == first.dtype and a.shape == first.shape for a in arrays[1:])


class SpecialErfcxBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        if not _state.enabled:  # (nothing to record: the same steps on arrays)
            aa, oa = self.saved_arrays()
            ga = g._array
            if _alike_float(aa, ga, oa):
                with xp.errstate(**_ERR):
                    t = xp.asarray(aa * oa)
                    t *= 2.0
                    t -= 2.0 / _SQRT_PI
                    t *= ga
                return _make(t)
        a, out = self.saved()
        return F.mul(F.sub(F.mul(F.mul(a, out), 2.0), 2.0 / _SQRT_PI), g)


def _unary_saving_both(input: Tensor, out: Any, node: Node) -> Tensor:
    if not needs_grad(input):
        return _make(out)
    t = record(node, (input,), out)
    node.save(input, outputs=(t,))
    return t


@register("special_erfcx")
def erfcx(input: Tensor) -> Tensor:
    """The scaled complementary error function ``exp(x**2) * erfc(x)``, without overflow.

    Example:
        >>> import gradsum
        >>> [f"{v:.12g}" for v in gradsum.special.erfcx(
        ...     gradsum.tensor([0.0, 30.0], dtype=gradsum.float64)).tolist()]
        ['1', '0.0187958888614']
    """
    _require_tensor("special_erfcx", "input", 1, input)
    x = _unary_float(input)
    return _unary_saving_both(input, _back(_erfcx_array(x), x), SpecialErfcxBackward0())


class SpecialNdtriBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        if not _state.enabled:  # (nothing to record: the same steps on arrays)
            (oa,) = self.saved_arrays()
            ga = g._array
            if oa.dtype == ga.dtype and oa.shape == ga.shape and oa.dtype in _F32_F64:
                with xp.errstate(**_ERR):
                    t = xp.asarray(oa * oa)
                    t /= 2
                    xp.exp(t, out=t)
                    r = xp.multiply(ga, _SQRT_2PI)
                    r *= t
                return _make(xp.asarray(r))
        (out,) = self.saved()
        return F.mul(F.mul(g, _SQRT_2PI), F.exp(F.div(F.mul(out, out), 2)))


@register("special_ndtri")
def ndtri(input: Tensor) -> Tensor:
    """The inverse of the standard normal CDF (``-inf`` at 0, ``inf`` at 1, nan outside)."""
    _require_tensor("special_ndtri", "input", 1, input)
    x = _unary_float(input)
    return _unary(input, _back(_ndtri_array(x), x), SpecialNdtriBackward0, "output")


class SpecialLogNdtrBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        if not _state.enabled:  # (nothing to record: the same steps on arrays)
            aa, oa = self.saved_arrays()
            ga = g._array
            if _alike_float(aa, ga, oa):
                with xp.errstate(**_ERR):
                    t = xp.asarray(aa * aa)
                    t /= 2
                    t += oa
                    xp.negative(t, out=t)
                    xp.exp(t, out=t)
                    r = xp.asarray(xp.divide(ga, _SQRT_2PI))
                    r *= t
                return _make(r)
        a, out = self.saved()
        e = F.exp(F.neg(F.add(out, F.div(F.mul(a, a), 2))))
        return F.mul(F.div(g, _SQRT_2PI), e)


@register("special_log_ndtr")
def log_ndtr(input: Tensor) -> Tensor:
    """The log of the standard normal CDF, accurate far into the left tail.

    Example:
        >>> import gradsum
        >>> round(gradsum.special.log_ndtr(gradsum.tensor([-10.0],
        ...                                               dtype=gradsum.float64)).item(), 9)
        -53.231285151
    """
    _require_tensor("special_log_ndtr", "input", 1, input)
    x = _unary_float(input)
    return _unary_saving_both(input, _back(_log_ndtr_array(x), x), SpecialLogNdtrBackward0())


class MulBackward1(Node):
    """torch's node for ``tensor * scalar`` called from C++ (``ndtr`` is composed of these)."""

    __slots__ = ("value",)

    def backward(self, g: Tensor) -> Tensor:
        return F.mul(g, self.value)


class AddBackward1(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        return g


def _scalar_op(input: Tensor, value: float, mul: bool) -> Tensor:
    x = input._array
    v = x.dtype.type(value)
    out = xp.asarray(x * v if mul else x + v).astype(x.dtype, copy=False)
    if not needs_grad(input):
        return _make(out)
    if mul:
        node = MulBackward1()
        node.value = value
        return record(node, (input,), out)
    return record(AddBackward1(), (input,), out)


@register("special_ndtr")
def ndtr(input: Tensor) -> Tensor:
    """The standard normal CDF, composed as torch's: ``(1 + erf(x / sqrt(2))) * 0.5`` (so
    the far left tail rounds to 0, and the grad_fn is ``MulBackward1``).

    Example:
        >>> import gradsum
        >>> gradsum.special.ndtr(gradsum.tensor([0.0, 1.0], dtype=gradsum.float64)).tolist()
        [0.5, 0.841344746068543]
    """
    _require_tensor("special_ndtr", "input", 1, input)
    if input._array.dtype.kind not in "fV":
        input = F.to_dtype(input, D.get_default_dtype())
    e = F.erf(_scalar_op(input, _SQRT1_2, True))
    return _scalar_op(_scalar_op(e, 1.0, False), 0.5, True)


class SpecialI0EBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        if not _state.enabled:  # (nothing to record: the same steps on arrays)
            aa, oa = self.saved_arrays()
            ga = g._array
            if _alike_float(aa, ga, oa):
                with xp.errstate(**_ERR):
                    sg = xp.asarray(xp.sign(aa))  # (0 at nan, as sign)
                    xp.copyto(sg, 0, where=xp.isnan(sg))
                    sg *= oa
                    r = xp.asarray(_back(_i1e_array(aa), aa))
                    r -= sg
                    r = xp.asarray(xp.multiply(ga, r))
                return _make(r)
        a, out = self.saved()
        return F.mul(g, F.sub(i1e(a), F.mul(F.sign(a), out)))


@register("special_i0e")
def i0e(input: Tensor) -> Tensor:
    """The exponentially scaled modified Bessel function ``exp(-|x|) * i0(x)``.

    Example:
        >>> import gradsum
        >>> round(gradsum.special.i0e(gradsum.tensor([1.0], dtype=gradsum.float64)).item(), 12)
        0.465759607594
    """
    _require_tensor("special_i0e", "input", 1, input)
    x = _unary_float(input)
    return _unary_saving_both(input, _back(_i0e_array(x), x), SpecialI0EBackward0())


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
    _require_tensor("special_i1e", "input", 1, input)
    x = _unary_float(input)
    return _unary_saving_both(input, _back(_i1e_array(x), x), SpecialI1EBackward0())


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
    _require_tensor("special_i1", "input", 1, input)
    x = _unary_float(input)
    return _unary_saving_both(input, _back(_i1_array(x), x), SpecialI1Backward0())


# == binary differentiable ops =================================================================
class SpecialXlog1PyBackward0(Node):
    __slots__ = ("shapes",)

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = self.saved()
        ga = gb = None
        if self.needs(0):
            ga = _sum_to(_masked_zero(xlog1py(g, b), (a._array == 0) & (b._array <= -1)),
                         self.shapes[0])
        if self.needs(1):
            gb = _sum_to(F.div(F.mul(g, a), F.add(b, 1)), self.shapes[1])
        return ga, gb


class SpecialXlog1PyBackward1(Node):
    """``xlog1py(number, tensor)``."""

    __slots__ = ("shapes", "value")

    def backward(self, g: Tensor) -> Tensor:
        (b,) = self.saved()
        return _sum_to(F.div(F.mul(g, self.value), F.add(b, 1)), self.shapes[1])


class SpecialXlog1PyBackward2(Node):
    """``xlog1py(tensor, number)``."""

    __slots__ = ("shapes", "value")

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        mask = (a._array == 0) & (self.value <= -1)
        return _sum_to(_masked_zero(xlog1py(g, self.value), mask), self.shapes[0])


def _xlog1py_array(x: Any, y: Any) -> Any:
    with xp.errstate(**_ERR):
        out = xp.where(x == 0, 0.0, x * xp.log1p(y))
        return xp.where(xp.isnan(y), xp.nan, out)


@register("special_xlog1py")
def xlog1py(input: Any, other: Any) -> Tensor:
    """``input * log1p(other)``, 0 where ``input`` is 0 (unless ``other`` is nan); either
    operand may be a number.

    Example:
        >>> import gradsum
        >>> x, y = gradsum.tensor([0.0, 2.0]), gradsum.tensor([-1.0, 0.0])
        >>> gradsum.special.xlog1py(x, y).tolist()
        [0.0, 0.0]
    """
    return xlog_op("special_xlog1py", input, other, _xlog1py_array,
                   (SpecialXlog1PyBackward0, SpecialXlog1PyBackward1, SpecialXlog1PyBackward2))


def _no_derivative(what: str) -> NotImplementedError:
    return NotImplementedError(f"the derivative for '{what}' is not implemented.")


class SpecialZetaBackward0(Node):
    __slots__ = ("shapes",)

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        if self.needs(0):
            raise _no_derivative("zeta")
        a, b = self.saved()
        return None, _sum_to(F.mul(g, F.mul(F.neg(a), zeta(F.add(a, 1.0), b))),
                             self.shapes[1])


class SpecialZetaBackward1(Node):
    """``zeta(number, tensor)``."""

    __slots__ = ("shapes", "value")

    def backward(self, g: Tensor) -> Tensor:
        (b,) = self.saved()
        return _sum_to(F.mul(g, F.mul(zeta(self.value + 1.0, b), -self.value)), self.shapes[1])


class SpecialZetaBackward2(Node):
    """``zeta(tensor, number)``: torch has no derivative for the first argument."""

    __slots__ = ("shapes",)

    def backward(self, g: Tensor) -> Tensor:
        raise _no_derivative("zeta")


@register("special_zeta")
def zeta(input: Any, other: Any) -> Tensor:
    """The Hurwitz zeta function ``sum_k (k + other) ** -input`` (``input`` > 1; inf at 1,
    nan below); differentiable in ``other`` only, as torch.

    Example:
        >>> import gradsum
        >>> round(gradsum.special.zeta(gradsum.tensor([2.0], dtype=gradsum.float64),
        ...                            gradsum.tensor([1.0], dtype=gradsum.float64)).item(), 12)
        1.644934066848
    """
    if not isinstance(input, Tensor):
        _require_tensor("special_zeta", "other", 2, other)
        rt = D.result_type(other, input).np
        if rt.kind not in "fV":
            rt = D.get_default_dtype().np
        q = other._array.astype(rt, copy=False)
        v = scalar_value(input)
        out = _back(_zeta_array(xp.asarray(v, dtype=rt), q), q)
        if not needs_grad(other):
            return _make(out)
        node1 = SpecialZetaBackward1()
        node1.shapes, node1.value = ((), q.shape), float(v)
        t = record(node1, (other,), out)
        node1.save(other)
        return t
    x, q, qt = _promoted_float("special_zeta", input, other)
    out = _bcast(_zeta_array(x, q), x, q)
    if not needs_grad(input, other):
        return _make(out)
    if qt:
        return _record2(SpecialZetaBackward0(), input, other, out, x, q, (input, other))
    node2 = SpecialZetaBackward2()
    node2.shapes = (x.shape, ())
    return record(node2, (input,), out)


class IgammaBackward0(Node):
    __slots__ = ("shapes",)
    sign = 1.0
    op = "igamma"

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        if self.needs(0):
            raise _no_derivative(f"{self.op}: input")
        a, x = self.saved()
        e = F.exp(F.sub(F.sub(F.mul(F.sub(a, 1), F.log(x)), x), F.lgamma(a)))
        return None, _sum_to(F.mul(F.mul(g, self.sign), e), self.shapes[1])


class IgammacBackward0(IgammaBackward0):
    __slots__ = ()
    sign = -1.0
    op = "igammac"


def _igamma(name: str, input: Tensor, other: Tensor, upper: bool) -> Tensor:
    a, x = _float_pair(name, input, other)
    out = _bcast(_igamma_array(a, x, upper), a, x)
    if not needs_grad(input, other):
        return _make(out)
    node = IgammacBackward0() if upper else IgammaBackward0()
    return _record2(node, input, other, out, a, x, (input, other))


@register("igamma", "special_gammainc")
def igamma(input: Tensor, other: Tensor) -> Tensor:
    """The regularized lower incomplete gamma function ``P(input, other)``
    (``torch.special.gammainc``); differentiable in ``other`` only, as torch.

    Example:
        >>> import gradsum
        >>> a = gradsum.tensor([1.0, 2.0], dtype=gradsum.float64)
        >>> x = gradsum.tensor([1.0, 1.0], dtype=gradsum.float64)
        >>> [round(v, 12) for v in gradsum.igamma(a, x).tolist()]
        [0.632120558829, 0.264241117657]
    """
    return _igamma("igamma", input, other, upper=False)


@register("igammac", "special_gammaincc")
def igammac(input: Tensor, other: Tensor) -> Tensor:
    """The regularized upper incomplete gamma function ``Q(input, other) = 1 - P``
    (``torch.special.gammaincc``)."""
    return _igamma("igammac", input, other, upper=True)


# == not differentiable in torch ===============================================================
def _nondiff_unary(input: Tensor, kernel: Any, name: str) -> Tensor:
    """A function torch does not differentiate: the result never requires grad."""
    _require_tensor(name, "input", 1, input)
    x = _unary_float(input)
    with xp.errstate(**_ERR):
        return _make(_back(kernel(x), x))


def bessel_j0(input: Tensor) -> Tensor:
    """The Bessel function of the first kind of order 0 (not differentiable, as torch).

    Example:
        >>> import gradsum
        >>> round(gradsum.special.bessel_j0(gradsum.tensor([1.0],
        ...                                                dtype=gradsum.float64)).item(), 12)
        0.765197686558
    """
    return _nondiff_unary(input, _j0_array, "special_bessel_j0")


def bessel_j1(input: Tensor) -> Tensor:
    """The Bessel function of the first kind of order 1."""
    return _nondiff_unary(input, _j1_array, "special_bessel_j1")


def bessel_y0(input: Tensor) -> Tensor:
    """The Bessel function of the second kind of order 0 (``-inf`` at 0, nan below)."""
    return _nondiff_unary(input, lambda x: _y_array(x, 0), "special_bessel_y0")


def bessel_y1(input: Tensor) -> Tensor:
    """The Bessel function of the second kind of order 1 (``-inf`` at 0, nan below)."""
    return _nondiff_unary(input, lambda x: _y_array(x, 1), "special_bessel_y1")


def modified_bessel_i0(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order 0 (not differentiable)."""
    return _nondiff_unary(input, lambda x: xp.exp(xp.abs(_f64(x))) * _i0e_array(x),
                          "special_modified_bessel_i0")


def modified_bessel_i1(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order 1 (not differentiable)."""
    return _nondiff_unary(input, lambda x: xp.exp(xp.abs(_f64(x))) * _i1e_array(x),
                          "special_modified_bessel_i1")


def modified_bessel_k0(input: Tensor) -> Tensor:
    """The modified Bessel function of the second kind of order 0."""
    return _nondiff_unary(input, lambda x: _k_array(x, _K0_A, _K0_B, 0, False),
                          "special_modified_bessel_k0")


def modified_bessel_k1(input: Tensor) -> Tensor:
    """The modified Bessel function of the second kind of order 1."""
    return _nondiff_unary(input, lambda x: _k_array(x, _K1_A, _K1_B, 1, False),
                          "special_modified_bessel_k1")


def scaled_modified_bessel_k0(input: Tensor) -> Tensor:
    """``exp(x) * modified_bessel_k0(x)``."""
    return _nondiff_unary(input, lambda x: _k_array(x, _K0_A, _K0_B, 0, True),
                          "special_scaled_modified_bessel_k0")


def scaled_modified_bessel_k1(input: Tensor) -> Tensor:
    """``exp(x) * modified_bessel_k1(x)``."""
    return _nondiff_unary(input, lambda x: _k_array(x, _K1_A, _K1_B, 1, True),
                          "special_scaled_modified_bessel_k1")


def spherical_bessel_j0(input: Tensor) -> Tensor:
    """The spherical Bessel function ``sin(x) / x`` of the first kind of order 0."""
    return _nondiff_unary(input, _spherical_j0_array, "special_spherical_bessel_j0")


# -- the orthogonal polynomials ----------------------------------------------------------------
def _poly_operands(name: str, input: Any, n: Any) -> tuple[Any, Any, Any]:
    """``(x, n, dtype)`` broadcast, with torch's promotion of the pair (integers give the
    default float); ``n`` truncated to an integer (nan/inf give -1: the polynomial is 0)."""
    if not isinstance(input, Tensor) and not isinstance(n, Tensor):
        raise TypeError(f"{name}(): expected a Tensor for 'input' or 'n', got "
                        f"{type(input).__name__} and {type(n).__name__}")
    if isinstance(input, Tensor):
        rt = D.result_type(input, n).np
    else:
        rt = D.result_type(n, input).np
    if rt.kind not in "fV":
        rt = D.get_default_dtype().np
    xa = input._array if isinstance(input, Tensor) else xp.asarray(scalar_value(input))
    na = n._array if isinstance(n, Tensor) else xp.asarray(scalar_value(n))
    x = xp.asarray(xa, dtype=rt)
    nf = xp.asarray(na, dtype=rt).astype(xp.float64)
    try:
        x, nf = xp.broadcast_arrays(x, nf)
    except ValueError:
        raise broadcast_error(xa, na) from None
    with xp.errstate(**_ERR):
        # (torch converts n to int64: nan, inf and values out of its range become negative)
        ni = xp.where(xp.isfinite(nf) & (xp.abs(nf) < 2.0**63), xp.trunc(nf), -1.0)
    return x.astype(xp.float64), ni, rt


def _recurrence(x: Any, n: Any, p0: Any, p1: Any, step: Any, needed: Any = None) -> Any:
    """``P_n`` from ``P_0 = p0``, ``P_1 = p1`` and ``P_{k+1} = step(k, P_k, P_{k-1})``
    (``k`` from 1), evaluated for every element up to its own ``n``. Only the elements of
    ``needed`` (all by default; the others take a closed form or an edge value) set how far
    it runs, and it stops early once every element still running is nan in both of its last
    two terms (the recurrence then stays nan, as torch's loop does)."""
    out = xp.where(n == 0, p0, p1)
    nn = n if needed is None else n[needed]
    nmax = int(nn.max(initial=0))
    p, q = p0, p1
    for k in range(1, nmax):
        with xp.errstate(**_ERR):
            r = step(k, q, p)
        p, q = q, r
        out = xp.where(n == k + 1, r, out)
        if k % 64 == 0:
            running = n > k + 1
            if needed is not None:
                running &= needed
            if not running.any() or bool(
                    (xp.isnan(xp.broadcast_to(p, n.shape)[running])
                     & xp.isnan(xp.broadcast_to(q, n.shape)[running])).all()):
                out = xp.where(running, xp.nan, out)
                break
    return xp.where(n < 0, 0.0, out)


def _finish(out: Any, rt: Any) -> Tensor:
    return _make(xp.asarray(out).astype(rt, copy=False))


def _cheb_kind(x: Any, n: Any, kind: str) -> Any:
    """T, U, V, W at ``x`` by their shared recurrence ``P_{k+1} = 2 x P_k - P_{k-1}``, with
    torch's values at ``|x| = 1`` and its closed forms for large n inside ``(-1, 1)``."""
    one = xp.ones_like(x)
    p1 = {"t": x, "u": 2 * x, "v": 2 * x - 1, "w": 2 * x + 1}[kind]
    closed = (xp.abs(x) < 1.0) & (n > (6 if kind == "t" else 8))
    out = _recurrence(x, n, one, p1, lambda k, q, p: (x + x) * q - p, ~closed)
    out = xp.where(closed, _cheb_kind_closed(x, n, kind), out)
    odd = xp.fmod(n, 2) != 0
    edge = {"t": xp.where((x > 0) | ~odd, 1.0, -1.0),
            "u": xp.where((x > 0) | ~odd, n + 1, -(n + 1)),
            "v": xp.where(x > 0, 1.0, xp.where(odd, -(2 * n + 1), 2 * n + 1)),
            "w": xp.where(x > 0, 2 * n + 1, xp.where(odd, -1.0, 1.0))}[kind]
    out = xp.where((xp.abs(x) == 1.0) & (n >= 0), edge, out)
    return xp.where(n < 0, 0.0, out)


def _cheb_kind_closed(z: Any, n: Any, kind: str) -> Any:
    """The trigonometric forms torch switches to for large n inside ``(-1, 1)``."""
    with xp.errstate(**_ERR):
        th = xp.arccos(xp.clip(z, -1.0, 1.0))
        odd = xp.fmod(n, 2) != 0
        if kind == "t":
            return xp.cos(n * th)
        if kind == "u":
            s = xp.sin(th)
            return xp.where(s != 0, xp.sin((n + 1) * th) / s, (n + 1) * xp.cos((n + 1) * th) / z)
        if kind == "v":
            return xp.where(xp.sin(th / 2) != 1.0, xp.cos((n + 0.5) * th) / xp.cos(th / 2),
                            xp.where(odd, -(2 * n + 1), 2 * n + 1))
        return xp.where(xp.cos(th / 2) != 1.0, xp.sin((n + 0.5) * th) / xp.sin(th / 2),
                        xp.where(z > 0, 2 * n + 1, xp.where(odd, -1.0, 1.0)))


def _shifted(x: Any, n: Any, kind: str) -> Any:
    """The shifted Chebyshev polynomials ``P*(x) = P(2x - 1)`` with torch's branches (edge
    values at x = 1 and 0, the closed form for n > 6 (W: n > 4) inside ``(0, 1)``)."""
    z = x + x - 1.0
    one = xp.ones_like(z)
    p1 = {"t": z, "u": 2 * z, "v": 2 * z - 1, "w": 2 * z + 1}[kind]
    closed = (n > (4 if kind == "w" else 6)) & (xp.abs(z) < 1.0)
    out = _recurrence(z, n, one, p1, lambda k, q, p: (z + z) * q - p, ~closed)
    out = xp.where(closed, _cheb_kind_closed(z, n, kind), out)
    odd = xp.fmod(n, 2) != 0
    at1 = {"t": one, "u": n + 1, "v": one, "w": 2 * n + 1}[kind]
    at0 = {"t": xp.where(odd, -1.0, 1.0), "u": xp.where(odd, -(n + 1), n + 1),
           "v": xp.where(odd, -(2 * n + 1), 2 * n + 1), "w": xp.where(odd, -1.0, 1.0)}[kind]
    out = xp.where(x == 0.0, at0, out)
    out = xp.where(x == 1.0, at1, out)
    return xp.where(n < 0, 0.0, out)


def _poly_fn(name: str, kernel: Any, doc: str) -> Any:
    def fn(input: Any, n: Any) -> Tensor:
        x, ni, rt = _poly_operands(f"special_{name}", input, n)
        return _finish(kernel(x, ni, rt), rt)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc + " Not differentiable (as torch); ``n`` is truncated to an integer."
    return fn


def _hermite(x: Any, n: Any, rt: Any, physicists: bool) -> Any:
    limit = 128 if rt == xp.float32 else 512
    c = 2.0 if physicists else 1.0
    out = _recurrence(x, n, xp.ones_like(x), c * x, lambda k, q, p: c * x * q - c * k * p,
                      n <= limit)
    return xp.where(n > limit, xp.nan, out)


def _laguerre(x: Any, n: Any, rt: Any) -> Any:
    out = _recurrence(x, n, xp.ones_like(x), 1.0 - x,
                      lambda k, q, p: ((2 * k + 1.0 - x) * q - k * p) / (k + 1))
    return xp.where((x == 0) & (n >= 0), 1.0, out)


def _legendre(x: Any, n: Any, rt: Any) -> Any:
    out = _recurrence(x, n, xp.ones_like(x), x,
                      lambda k, q, p: ((2 * k + 1) * x * q - k * p) / (k + 1))
    odd = xp.fmod(n, 2) != 0
    edge = xp.where((x > 0) | ~odd, 1.0, -1.0)
    return xp.where((xp.abs(x) == 1.0) & (n >= 0), edge, out)


chebyshev_polynomial_t = _poly_fn("chebyshev_polynomial_t",
                                  lambda x, n, rt: _cheb_kind(x, n, "t"),
                                  "The Chebyshev polynomial of the first kind ``T_n(input)``.")
chebyshev_polynomial_u = _poly_fn("chebyshev_polynomial_u",
                                  lambda x, n, rt: _cheb_kind(x, n, "u"),
                                  "The Chebyshev polynomial of the second kind ``U_n(input)``.")
chebyshev_polynomial_v = _poly_fn("chebyshev_polynomial_v",
                                  lambda x, n, rt: _cheb_kind(x, n, "v"),
                                  "The Chebyshev polynomial of the third kind ``V_n(input)``.")
chebyshev_polynomial_w = _poly_fn("chebyshev_polynomial_w",
                                  lambda x, n, rt: _cheb_kind(x, n, "w"),
                                  "The Chebyshev polynomial of the fourth kind ``W_n(input)``.")
shifted_chebyshev_polynomial_t = _poly_fn("shifted_chebyshev_polynomial_t",
                                          lambda x, n, rt: _shifted(x, n, "t"),
                                          "The shifted Chebyshev polynomial ``T*_n(input)``.")
shifted_chebyshev_polynomial_u = _poly_fn("shifted_chebyshev_polynomial_u",
                                          lambda x, n, rt: _shifted(x, n, "u"),
                                          "The shifted Chebyshev polynomial ``U*_n(input)``.")
shifted_chebyshev_polynomial_v = _poly_fn("shifted_chebyshev_polynomial_v",
                                          lambda x, n, rt: _shifted(x, n, "v"),
                                          "The shifted Chebyshev polynomial ``V*_n(input)``.")
shifted_chebyshev_polynomial_w = _poly_fn("shifted_chebyshev_polynomial_w",
                                          lambda x, n, rt: _shifted(x, n, "w"),
                                          "The shifted Chebyshev polynomial ``W*_n(input)``.")
hermite_polynomial_h = _poly_fn("hermite_polynomial_h",
                                lambda x, n, rt: _hermite(x, n, rt, True),
                                "The physicists' Hermite polynomial ``H_n(input)``.")
hermite_polynomial_he = _poly_fn("hermite_polynomial_he",
                                 lambda x, n, rt: _hermite(x, n, rt, False),
                                 "The probabilists' Hermite polynomial ``He_n(input)``.")
laguerre_polynomial_l = _poly_fn("laguerre_polynomial_l", _laguerre,
                                 "The Laguerre polynomial ``L_n(input)``.")
legendre_polynomial_p = _poly_fn("legendre_polynomial_p", _legendre,
                                 "The Legendre polynomial ``P_n(input)``.")
