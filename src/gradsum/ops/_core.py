"""Shared machinery for ops: recording a node, operand promotion, the op registry.

Every primitive follows the same shape (Chainer's): a public function computes the result on
backend arrays, then, when recording, creates its ``<Op>Backward0`` node with edges to the
inputs and saves only what the backward rule needs. Backward rules are written in gradsum ops,
so under ``create_graph=True`` they are themselves recorded (double backward for free).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from gradsum import _dtype as D
from gradsum._backend import silenced, xp
from gradsum._tensor import Tensor
from gradsum.autograd import _messages
from gradsum.autograd.grad_mode import _state
from gradsum.autograd.graph import Node, grad_accumulator
from gradsum.ops import _messages as _ops_messages

FnT = TypeVar("FnT", bound=Callable[..., Any])

#: name -> public function, for every op gradsum provides (the test table must cover all).
OPS: dict[str, Callable[..., Any]] = {}


@dataclass(frozen=True)
class Twin:
    """An in-place twin that :func:`bind_surface` makes from an out-of-place function:
    ``t.<op>_(...)`` computes the op and writes the result back into ``t``
    (``ops.inplace._op_inplace``).

    ``names``: the Tensor attributes it is bound to (one object; the first name is the one its
    messages give, the others are torch's aliases and augmented operators, ``__ifloordiv__``).
    ``check_cast`` and ``elementwise``: as ``_op_inplace``'s. ``cmp``: a comparison's twin
    (``t.eq_(other)``: the 0/1 result in ``t``'s dtype), recorded with the ``<cmp>Backward0/1``
    nodes. ``untracked``: an op torch gives no derivative (``bitwise_not_``). ``no_overlap``:
    ``(position, keyword)`` of a source operand that must not overlap ``t`` (torch's
    ``assert_no_overlap``).
    """

    names: tuple[str, ...]
    check_cast: bool = False
    elementwise: bool = False
    cmp: str = ""
    untracked: bool = False
    no_overlap: tuple[int, str] | None = None


def twin(*names: str, cast: bool = False, elementwise: bool = False, cmp: str = "",
         untracked: bool = False, no_overlap: tuple[int, str] | None = None) -> Twin:
    """A :class:`Twin` bound to ``names``; ``cast``: the binary ops' check that the promoted
    dtype fits ``t`` and that the operand broadcasts to ``t``'s shape (both checks first)."""
    return Twin(names, check_cast=cast, elementwise=elementwise or cast, cmp=cmp,
                untracked=untracked, no_overlap=no_overlap)


@dataclass(frozen=True)
class OpSpec:
    """One declaration of the surface: a function and the names it is reached under.

    ``names``: its names in :data:`OPS` (and so in ``gradsum.ops``); ``methods``: the Tensor
    methods that are the function itself; ``dunders``: the operators that are; ``twins``: the
    in-place twins made from it. A function may be declared in several steps (a factory
    registers the op, the family file then adds its methods): the steps merge.
    """

    fn: Callable[..., Any]
    names: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    dunders: tuple[str, ...] = ()
    twins: tuple[Twin, ...] = ()


#: every declaration, by function (see :func:`register`, :func:`tensor_method`)
SPECS: dict[Callable[..., Any], OpSpec] = {}

_Names = bool | str | tuple[str, ...]
_Twins = str | Twin | tuple[str | Twin, ...]


def _declare(fn: Callable[..., Any], names: tuple[str, ...], method: _Names,
             dunders: str | tuple[str, ...], inplace: _Twins) -> None:
    if method is True:
        methods: tuple[str, ...] = names
    elif method is False:
        methods = ()
    else:
        methods = (method,) if isinstance(method, str) else tuple(method)
    dunders = (dunders,) if isinstance(dunders, str) else tuple(dunders)
    items = (inplace,) if isinstance(inplace, (str, Twin)) else tuple(inplace)
    twins = tuple(Twin((t,)) if isinstance(t, str) else t for t in items)
    prev = SPECS.get(fn)
    if prev is not None:
        names, methods = prev.names + names, prev.methods + methods
        dunders, twins = prev.dunders + dunders, prev.twins + twins
    SPECS[fn] = OpSpec(fn, names, methods, dunders, twins)


def register(*names: str, method: _Names = False, dunders: str | tuple[str, ...] = (),
             inplace: _Twins = ()) -> Callable[[FnT], FnT]:
    """Declare a public op under its torch name(s) (default: the function's name), listed in
    :data:`OPS`, and the surface made from it.

    ``method``: ``True`` binds it as the Tensor methods of the same names, a name or tuple of
    names binds it under those; ``dunders``: the operators that are the op itself
    (``("__mul__", "__rmul__")``); ``inplace``: the in-place twins :func:`bind_surface` makes
    from it, a name (``"mul_"``) or :class:`Twin` (see :func:`twin`), or a tuple of those.

    Example:
        >>> from gradsum.ops._core import SPECS
        >>> from gradsum.ops.pointwise import expm1
        >>> SPECS[expm1].methods, SPECS[expm1].twins[0].names
        (('expm1',), ('expm1_',))
    """

    def deco(fn: FnT) -> FnT:
        own = names or (fn.__name__,)
        for n in own:
            OPS[n] = fn
        _declare(fn, own, method, dunders, inplace)
        return fn

    return deco


def tensor_method(*names: str, dunders: str | tuple[str, ...] = (),
                  inplace: _Twins = ()) -> Callable[[FnT], FnT]:
    """Declare Tensor methods (``names``), operators and in-place twins made from a function
    that is not an op of its own: a composite of ops, an adapter that orders the arguments
    as the method takes them (``Tensor.max``, ``Tensor.where``), a hand-written twin's alias."""

    def deco(fn: FnT) -> FnT:
        _declare(fn, (), names, dunders, inplace)
        return fn

    return deco


def surface() -> dict[str, Any]:
    """Every Tensor attribute the declarations give, by name: the functions (methods and
    operators) and the in-place twins made once for all their names. A name declared twice
    raises (each attribute has one home)."""
    from gradsum.ops import inplace as _inplace

    out: dict[str, Any] = {}

    def put(name: str, obj: Any) -> None:
        if name in out and out[name] is not obj:
            raise RuntimeError(_ops_messages.tensor_method_declared_twice(name, out, obj))
        out[name] = obj

    for spec in SPECS.values():
        for name in spec.methods + spec.dunders:
            put(name, spec.fn)
        for tw in spec.twins:
            first = tw.names[0]
            if tw.cmp:
                obj = _inplace._cmp_inplace(first, spec.fn, tw.cmp)
            elif tw.untracked:
                obj = _inplace._untracked_inplace(first, spec.fn)
            else:
                obj = _inplace._op_inplace(first, spec.fn, registered=False,
                                           check_cast=tw.check_cast,
                                           elementwise=tw.elementwise)
            if tw.no_overlap is not None:
                obj = _inplace._no_overlap(first, obj, *tw.no_overlap)
            for name in tw.names:
                put(name, obj)
    return out


def bind_surface() -> dict[str, Any]:
    """Bind :func:`surface` onto :class:`Tensor` (once, when ``gradsum.ops`` is imported:
    the methods are the functions themselves, so a method call costs no extra frame).
    Returns what it bound."""
    bound = surface()
    for name, obj in bound.items():
        setattr(Tensor, name, obj)
    return bound


_make = Tensor._make
_new = object.__new__
_ndarray = xp.ndarray
_as_array = xp.asarray


_NO_EDGE: tuple[None, int] = (None, 0)
_weakref = weakref.ref


def edge(t: Any) -> tuple[Node | None, int]:
    """Where the gradient of ``t`` goes: its grad_fn, its leaf sink, or nowhere."""
    if isinstance(t, Tensor):
        fn = t._grad_fn
        if fn is not None:
            return (fn, t._output_nr)
        if t._requires_grad:
            if t._nograd_view_version is not None:  # (no gradient reaches it, as torch's)
                t._check_nograd_view()
                return _NO_EDGE
            return (grad_accumulator(t), 0)
    return _NO_EDGE


def needs_grad(a: Any, b: Any = None, c: Any = None, d: Any = None, /) -> bool:
    """Whether an op on these operands (up to four; numbers and None count as constants)
    must be recorded: grad mode is on and one of them has a ``grad_fn`` or requires grad.
    Every op asks this before it builds a node, so it takes its operands as fixed positional
    arguments (no tuple of them is built) and tests each in line; :func:`any_needs_grad`
    asks it of a sequence."""
    if not _state.enabled:
        return False
    if isinstance(a, Tensor) and (a._grad_fn is not None or a._requires_grad):
        return True
    if b is not None and isinstance(b, Tensor) and (b._grad_fn is not None or b._requires_grad):
        return True
    if c is None and d is None:
        return False
    return any_needs_grad((c, d))


def any_needs_grad(tensors: Iterable[Any]) -> bool:
    """:func:`needs_grad` of any number of operands."""
    if not _state.enabled:
        return False
    for t in tensors:
        if isinstance(t, Tensor) and (t._grad_fn is not None or t._requires_grad):
            return True
    return False


def record(node: Node, inputs: Sequence[Any], out: Any, output_nr: int = 0) -> Tensor:
    """Attach ``node`` (edges to ``inputs``) and return the output tensor for array ``out``."""
    n = len(inputs)
    if n == 1:
        t = inputs[0]  # edge(t), inlined for the common input: a tensor with a grad_fn
        fn = t._grad_fn if isinstance(t, Tensor) else None
        node._next = ((fn, t._output_nr),) if fn is not None else (edge(t),)
    elif n == 2:
        a, b = inputs
        fa = a._grad_fn if isinstance(a, Tensor) else None
        fb = b._grad_fn if isinstance(b, Tensor) else None
        # (a constant operand, e.g. a weight without grad: no call to edge())
        node._next = ((fa, a._output_nr) if fa is not None else edge(a),
                      (fb, b._output_nr) if fb is not None else
                      edge(b) if b.__class__ is not Tensor or b._requires_grad else _NO_EDGE)
    else:
        node._next = tuple([edge(t) for t in inputs])
    t = _new(Tensor)  # _make(out, False, node, output_nr), inlined
    t._array = out if out.__class__ is _ndarray else _as_array(out)
    t._requires_grad = False
    t._grad_fn = node
    t._output_nr = output_nr
    t._vc = [0]
    return t


_CONST: dict[tuple[Any, int], Any] = {}


def const(dt: Any, v: int) -> Any:
    """A read-only 0-d array of the integer ``v`` in dtype ``dt``. As an operand it gives the
    same result as the Python int (NumPy converts that to ``dt`` too, on every call: for a
    small array the conversion costs as much as the arithmetic), e.g. ``one - x`` or
    ``x / n``."""
    c = _CONST.get((dt, v))
    if c is None:
        if len(_CONST) >= 256:  # (the counts of means vary: keep the cache small)
            _CONST.clear()
        c = _CONST[dt, v] = xp.full((), v, dtype=dt)
        c.flags.writeable = False
    return c


@silenced
def quietly(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` without NumPy's floating-point warnings (see :func:`silenced`)."""
    return fn(*args)


def require_tensor(name: str, arg: str, pos: int, v: Any) -> Tensor:
    """``v``, or torch's TypeError for a non-tensor argument ``arg`` at position ``pos``."""
    if not isinstance(v, Tensor):
        raise TypeError(_ops_messages.argument_not_tensor(name, arg, pos, v))
    return v


def wrap_dim(dim: int, ndim: int) -> int:
    """Normalise a possibly negative ``dim``; IndexError with torch's message if out of range."""
    lo, hi = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not lo <= dim <= hi:
        raise IndexError(_ops_messages.wrap_dim_out_of_range(lo, hi, dim))
    return dim + ndim if dim < 0 else (dim if ndim else 0)


def wrap_dims(dim: Any, ndim: int) -> tuple[int, ...]:
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (int, xp.integer)):
        return (wrap_dim(int(dim), ndim),)
    out = tuple(wrap_dim(int(d), ndim) for d in dim)
    if len(set(out)) != len(out):
        raise RuntimeError(_ops_messages.dim_appears_multiple_times(dim))
    return out


def scalar_value(v: Any) -> Any:
    """Plain Python number for a Python/NumPy scalar (NumPy scalars would upcast float32).
    A NumPy bool is a float, as torch's argument parser reads it (``int_t + np.bool_(True)``
    is float32)."""
    if isinstance(v, (bool, int, float)):
        return v if v.__class__ is not xp.float64 else float(v)
    if isinstance(v, xp.generic):
        return float(v) if isinstance(v, xp.bool_) else v.item()
    raise TypeError(_ops_messages.unsupported_operand_type(v))


def as_tensor_like(v: Any, ref: Tensor) -> Tensor:
    """A constant tensor for a non-tensor operand (array, list or scalar)."""
    if isinstance(v, Tensor):
        return v
    arr = xp.asarray(v)
    if arr.dtype.kind in "fV" and arr.dtype != ref._array.dtype and not hasattr(v, "dtype"):
        arr = arr.astype(ref._array.dtype)
    return _make(arr)


def binary_arrays(a: Tensor, b: Any) -> tuple[Any, Any, bool]:
    """Arrays (or a Python scalar for ``b``) of a binary op, cast to torch's result dtype.

    Returns ``(x, y, b_is_tensor)``.
    """
    x = a._array
    if isinstance(b, Tensor):
        y = b._array
        if x.dtype is y.dtype or x.dtype == y.dtype:
            return x, y, True
        rt = D.result_type(a, b).np
        return (x if x.dtype == rt else x.astype(rt)), (y if y.dtype == rt else y.astype(rt)), True
    cls = b.__class__
    if cls is not float and cls is not int and cls is not bool:
        if hasattr(b, "shape") and not isinstance(b, xp.generic):
            t = as_tensor_like(b, a)
            return binary_arrays(a, t)
        b = scalar_value(b)  # (NumPy scalars: a Python number, as torch wraps them)
    kind = x.dtype.kind
    if kind in "fV":
        return x, b, False
    rt = D.result_type(a, b).np
    if x.dtype != rt:
        x = x.astype(rt)
    if rt.kind in "fV":
        b = float(b)
    elif rt.kind in "iu":
        b = int(b)
    return x, b, False


def scalar_opmath(op: Callable[[Any, Any], Any], x: Any, y: Any) -> Any:
    """``op(x, y)`` for a bfloat16 array ``x`` and a Python number ``y`` as torch's kernels
    compute it: both in float32, rounded once (NumPy's bfloat16 loop would first round the
    number to bfloat16: ``x * 0.1`` would multiply by 0.10009765625)."""
    with xp.errstate(invalid="ignore", over="ignore"):  # (inf * 0, as torch: silently)
        return op(x.astype(xp.float32), xp.float32(y)).astype(x.dtype)


def check_broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    """Raise torch's RuntimeError when two shapes cannot broadcast."""
    for i in range(min(len(a), len(b))):
        sa, sb = a[len(a) - 1 - i], b[len(b) - 1 - i]
        if sa != sb and sa != 1 and sb != 1:
            raise RuntimeError(_messages.broadcast_mismatch(a, b, i))


def broadcast_error(a: Any, b: Any) -> RuntimeError:
    sa = tuple(getattr(a, "shape", ()))
    sb = tuple(getattr(b, "shape", ()))
    try:
        check_broadcast(sa, sb)
    except RuntimeError as e:
        return e
    return RuntimeError(_ops_messages.operation_failed_for_shapes(sa, sb))


def mark_view(out: Tensor, base: Tensor, view_fn: Callable[[Tensor], Tensor] | None) -> Tensor:
    """Make ``out`` a view of ``base``: shared version counter, remembered base and view fn.

    ``view_fn`` recomputes the view from a (new) base; in-place ops on the view use it to
    rewrite the base's history, and in-place ops on the base (or a sibling view) use it to
    bring the view's own history up to date (see ``ops.inplace``, note "Views after an
    in-place op"). Views made in grad mode are remembered (weakly) by their root for that.
    """
    out._vc = base._vc
    root = base._base
    if root is None:
        root = base
        out._base = base
        out._view_fn = view_fn
    else:
        out._base = root
        prev = base._view_fn
        if prev is None or view_fn is None:
            out._view_fn = None
        else:
            out._view_fn = lambda r, _p=prev, _f=view_fn: _f(_p(r))
    g = base._view_guard
    if g is not None and _state.enabled and out._grad_fn is not None:
        # (a view of an output of split/unbind, or of a view made in no_grad mode)
        name = type(out._grad_fn).__name__.split("Backward")[0]
        if g[0] == "multi":
            out._multi_view = (name, 0)
        guard_view(out, "multi" if g[0] == "multi" else "nograd_of", name, 0)
    if not _state.enabled and (root._requires_grad or root._grad_fn is not None):
        # torch: a view made in no_grad mode of a tensor that requires grad requires grad
        # too, but is a leaf no gradient reaches (edge() gives it none). torch's view asks its
        # root base (a grad-mode view in between whose base was detached since does not count)
        out._requires_grad = True
        out._nograd_view_version = out._vc[0]
        out._view_guard = ("nograd", None, 0)
        # torch's such view asks its base whether it requires grad: remembered (weakly) by
        # the root, so that detach_() / requires_grad_() on it can tell the view
        _remember(root, "_nograd_views", out)
    if _state.enabled and out._view_fn is not None and root._array.dtype.kind in "fc":
        # (an integer or bool root never gets a history, so its views never need a new one:
        # the index tensors a training step views, y.unsqueeze(1), are not remembered)
        _remember(root, "_views", out)
    return out


def _remember(root: Tensor, attr: str, view: Tensor) -> None:
    """Add ``view`` (weakly) to ``root``'s list ``attr``, pruning dead entries as it grows."""
    refs = root.__dict__.get(attr)
    if refs is None:
        refs = []
        setattr(root, attr, refs)
    elif len(refs) >= 64 and len(refs) & (len(refs) - 1) == 0:
        refs[:] = [r for r in refs if r() is not None]
    refs.append(_weakref(view))


def guard_view(v: Tensor, kind: str, node: str, output_nr: int) -> None:
    """Note "Views torch cannot regenerate": torch regenerates a view's grad_fn lazily once
    the version counter it shares with its base moved, and refuses to for an output of
    split/chunk/unbind (``kind`` "multi") or a grad-mode view of a view made in no_grad mode
    ("nograd_of"): reading its grad_fn or is_leaf, or using it in a recorded op, raises from
    then on. gradsum registers such a view (weakly) in the version counter itself (the list
    every alias shares, detached ones too); the next in-place bump (``stale_views``) turns it
    into a leaf-like tensor with the no_grad view's check (``Tensor._check_nograd_view``), so
    the hot paths (record/edge) pay nothing."""
    v._view_guard = (kind, node, output_nr)
    ver = v._vc
    n = len(ver)
    if n >= 65 and (n - 1) & (n - 2) == 0:  # (prune dead views as the list grows)
        ver[1:] = [r for r in ver[1:] if r() is not None]
    ver.append(_weakref(v))


def stale_views(ver: list[Any]) -> None:
    """After an in-place bump of version counter ``ver``: its guarded views (see
    :func:`guard_view`) can no longer be used in grad mode, as in torch; its views with
    tensor hooks get a new grad_fn (see ``Tensor.register_hook``: torch regenerates a view's
    grad_fn once the version moved, and the hooks stay with the old node)."""
    refs = ver[1:]
    del ver[1:]
    for r in refs:
        v = r()
        if v is None:
            continue
        if v._view_guard is not None and v._view_guard[0] != "nograd":
            v._grad_fn = None  # (a retain_grad stays with the old node, as in torch)
            v._output_nr = 0
            v._requires_grad = True
            v._nograd_view_version = -1  # (never the version again: every check raises)
        elif v._nograd_view_version is None and v._view_fn is not None:
            prev = _state.enabled
            _state.enabled = True
            try:
                nv = v._view_fn(v._base)
                fn = nv._grad_fn
                if fn is None and v._grad_fn is not None:  # (its base was detached since)
                    from gradsum.ops.inplace import _history_to_nowhere

                    fn = _history_to_nowhere(v)
            finally:
                _state.enabled = prev
            set_history(v, fn, nv._output_nr)
            ver.append(r)


def set_history(t: Tensor, fn: Node | None, output_nr: int, rebase: bool = False) -> None:
    """Give ``t`` a new grad_fn (an in-place op, a regenerated view); a retain_grad moves
    with it to the new node, as torch's. ``rebase`` (an in-place op on ``t`` or through a
    view of it): torch also drops the tensor's hook dict, so the next register_hook starts
    one on the new node (see ``Tensor.register_hook``)."""
    if rebase and "_hook_home" in t.__dict__:
        del t.__dict__["_hook_home"]
    if t._retains_grad:
        old = t._grad_fn
        if old is not None and old._hooks is not None:
            old._hooks.retains.pop(t._output_nr, None)
        if fn is not None:
            fn._get_hooks().retains[output_nr] = _weakref(t)
        else:
            t._retains_grad = False
    t._grad_fn = fn
    t._output_nr = output_nr


def float_dtype_for(a: Tensor) -> Any:
    """The backend dtype of a floating op's result (integers promote to the default float)."""
    dt = a._array.dtype
    return dt if dt.kind in "fV" else D.get_default_dtype().np


#: read-only ``arange`` index columns by (length, axis, ndim), see :func:`index_range`
_RANGES: dict[tuple[int, int, int], Any] = {}


def index_range(n: int, axis: int, ndim: int) -> Any:
    """``arange(n)`` shaped to run along ``axis`` of an ``ndim``-D fancy index (ones
    elsewhere); read-only and cached, since a training step indexes with the same shapes
    every time."""
    r = _RANGES.get((n, axis, ndim))
    if r is None:
        if len(_RANGES) >= 256:
            _RANGES.clear()
        shape = [1] * ndim
        shape[axis] = n
        r = _RANGES[(n, axis, ndim)] = xp.arange(n).reshape(shape)
        r.flags.writeable = False
    return r


def broadcast_view(x: Any, shape: tuple[int, ...]) -> Any:
    """A read-only broadcast view of array ``x`` with ``shape`` (like ``xp.broadcast_to``,
    which is ten times slower for the small arrays of a training step)."""
    if not x.flags.c_contiguous or len(shape) < x.ndim:
        return xp.broadcast_to(x, shape)
    lead = len(shape) - x.ndim
    strides = [0] * lead
    for i, s in enumerate(x.shape):
        target = shape[lead + i]
        if s == target:
            strides.append(x.strides[i])
        elif s == 1:
            strides.append(0)
        else:
            return xp.broadcast_to(x, shape)  # raises numpy's error for the caller to map
    out = xp.ndarray(shape, x.dtype, x, 0, tuple(strides))
    out.flags.writeable = False
    return out
