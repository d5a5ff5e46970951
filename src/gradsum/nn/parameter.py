"""``Parameter``: a leaf tensor that a :class:`~gradsum.nn.Module` registers when assigned.

Example:
    >>> import gradsum
    >>> p = gradsum.nn.Parameter(gradsum.ones(2))
    >>> p.requires_grad, p.is_leaf
    (True, True)
    >>> p
    Parameter containing:
    tensor([1., 1.], requires_grad=True)
"""

from __future__ import annotations

from typing import Any

from gradsum import _creation, _device
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.nn import _messages


class Parameter(Tensor):
    """A tensor that is a module parameter: assigning it as a module attribute registers it.

    Like ``torch.nn.Parameter(data)``, the parameter shares ``data``'s buffer (and version
    counter) but is a new leaf; ``requires_grad`` defaults to True.

    Args:
        data: the initial value (default: an empty float tensor).
        requires_grad: whether the parameter requires gradient.
    """

    #: how gradsum._tensor_str prints it: as a plain tensor (this class only: the attribute
    #: is read from the class's own namespace), a subclass wrapped in ``Parameter(...)``
    _repr_as_tensor = True
    _repr_wrapper = "Parameter"

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            from gradsum._dtype import get_default_dtype

            arr = xp.empty((0,), dtype=get_default_dtype().np)
            version = [0]
        elif isinstance(data, Tensor):
            arr, version = data._array, data._vc
        else:
            raise TypeError(_messages.parameter_data_expected_gradsum_tensor(data))
        p = cls._make(arr)
        p._vc = version
        if requires_grad:
            p.requires_grad_(True)
        return p

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass  # everything happens in __new__ (Tensor.__init__ would copy the data)

    def __copy__(self) -> Parameter:
        """``copy.copy(p)``, as torch's (``Parameter(p.data, p.requires_grad)`` plus the
        Python attributes): a new Parameter over the same buffer, with its own version
        counter (at 0), the same ``requires_grad``, no ``grad`` and no hooks (dropped without
        a warning, as in torch)."""
        result = type(self)(Tensor._make(self._array), self.requires_grad)
        result.__dict__.update(self._python_attributes())
        return result

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        """A new Parameter with a copy of the values and the same ``requires_grad``; like
        torch's, it leaves ``.grad`` and any Python attributes behind (so a deep-copied
        model starts without gradients)."""
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(Tensor._make(self._array.copy()), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol: Any) -> Any:
        """Pickling, as torch's: ``_rebuild_parameter(data, requires_grad, OrderedDict())``
        (with the Python attributes, ``_rebuild_parameter_with_state``); ``.grad`` is not
        kept."""
        from collections import OrderedDict

        from gradsum.serialization import rebuild

        data = Tensor._make(self._array)
        state = self._python_attributes()
        if state:
            return rebuild._rebuild_parameter_with_state, (data, self.requires_grad,
                                                           OrderedDict(), state)
        return rebuild._rebuild_parameter, (data, self.requires_grad, OrderedDict())

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


# -- uninitialized parameters and buffers (lazy modules) ------------------------------------------
_RAW = Tensor._array  # the slot descriptor: the mixin's ``_array`` property stands in front of it

_UNINIT_SHAPE = (
    "Can't access the shape of an uninitialized parameter or buffer. This error usually "
    "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
    "initialized one. Call `forward` to initialize the parameters before accessing their "
    "attributes."
)


# -- Buffer --------------------------------------------------------------------------------------
class _BufferMeta(type):
    """``isinstance(t, Buffer)`` is true for any tensor that ``Buffer(...)`` made (torch's
    ``Buffer(data)`` returns a plain tensor flagged ``_is_buffer``, not a subclass)."""

    def __instancecheck__(cls, instance: Any) -> bool:
        if cls is Buffer and isinstance(instance, Tensor) and getattr(
                instance, "_is_buffer", False):
            return True
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """A tensor that registers itself as a buffer when assigned as a module attribute
    (torch's ``nn.Buffer``, torch 2.5+): ``self.running = nn.Buffer(t, persistent=False)``
    is ``self.register_buffer("running", t, persistent=False)``.

    Like torch, ``Buffer(data)`` returns ``data.detach()`` (sharing its values, keeping its
    ``requires_grad``) flagged with ``persistent`` and ``_is_buffer``; ``isinstance(t,
    nn.Buffer)`` recognises it.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> b = nn.Buffer(gradsum.zeros(2), persistent=False)
        >>> isinstance(b, nn.Buffer), b.persistent, type(b).__name__
        (True, False, 'Tensor')
    """

    persistent: bool

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Any:
        if data is None:
            data = _creation.empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


class UninitializedTensorMixin:
    """What :class:`UninitializedParameter` and :class:`UninitializedBuffer` share (torch's
    ``UninitializedTensorMixin``): they hold no values yet, only a dtype. Reading their shape
    raises ``RuntimeError``; using them in any op raises ``ValueError`` (gradsum's ops read
    ``_array``, which refuses here); ``to``/``float``/``double``/``half``, ``size()``,
    ``dtype`` and ``is_floating_point()`` work. :meth:`materialize` gives them a shape and
    turns them into ``cls_to_become``."""

    cls_to_become: type

    @property
    def _array(self) -> Any:
        raise ValueError(_messages.attempted_use_uninitialized_parameter_operation(self))

    @_array.setter
    def _array(self, value: Any) -> None:
        _RAW.__set__(self, value)

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give the tensor uninitialised values of ``shape`` (and ``dtype``, default its own)
        and turn it into ``cls_to_become`` (a :class:`Parameter` or a plain tensor) in place:
        the object's identity survives, so optimizers holding it see the new values."""
        _device.check_factory(device, "empty")
        np_dtype = _RAW.__get__(self).dtype if dtype is None else dtype.np
        if isinstance(shape, int):
            shape = (shape,)
        _RAW.__set__(self, xp.empty(tuple(shape), dtype=np_dtype))
        self._vc[0] += 1
        self.__class__ = self.cls_to_become

    @property
    def shape(self) -> tuple[int, ...]:
        raise RuntimeError(_UNINIT_SHAPE)

    def size(self, dim: int | None = None) -> Any:
        arr = _RAW.__get__(self)
        return arr.shape if dim is None else arr.shape[dim]

    @property
    def dtype(self) -> Any:
        from gradsum._dtype import from_numpy_dtype

        return from_numpy_dtype(_RAW.__get__(self).dtype)

    @property
    def data(self) -> Tensor:
        return Tensor._make(_RAW.__get__(self))

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(_messages.variable_data_not_tensor(value))
        _RAW.__set__(self, value._array)

    def is_floating_point(self) -> bool:
        return bool(_RAW.__get__(self).dtype.kind in "fV")

    def is_complex(self) -> bool:
        return bool(_RAW.__get__(self).dtype.kind == "c")

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """Like torch: a plain empty tensor of the new dtype for a parameter (a module's
        ``to``/``double`` then writes it back into the parameter), a new uninitialized
        buffer for a buffer."""
        return self._converted(self.data.to(*args, **kwargs))

    def float(self) -> Tensor:
        return self._converted(self.data.float())

    def double(self) -> Tensor:
        return self._converted(self.data.double())

    def half(self) -> Tensor:
        return self._converted(self.data.half())

    def cpu(self) -> Tensor:
        return self

    def _converted(self, plain: Tensor) -> Tensor:
        return plain

    def share_memory_(self) -> Any:
        raise RuntimeError(_messages.cannot_share_uninitialized())

    def __copy__(self) -> Any:
        """A new uninitialized tensor of the same kind (what its ``__reduce_ex__`` rebuilds)."""
        rebuild, args = self.__reduce_ex__(4)
        return rebuild(*args)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


def is_lazy(param: Any) -> bool:
    """Whether ``param`` is an :class:`UninitializedParameter` or :class:`UninitializedBuffer`.

    Example:
        >>> from gradsum import nn
        >>> nn.parameter.is_lazy(nn.LazyLinear(2).weight), nn.parameter.is_lazy(1.0)
        (True, False)
    """
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A :class:`Parameter` whose shape is not known yet (torch's ``UninitializedParameter``):
    lazy modules create them and materialize them at the first forward.

    Args:
        requires_grad: whether the parameter will require gradient.
        device: the CPU (others raise as on torch's CPU build).
        dtype: the dtype it will have (default: the default float dtype).

    Example:
        >>> import gradsum
        >>> from gradsum.nn.parameter import UninitializedParameter
        >>> p = UninitializedParameter()
        >>> p, p.dtype, p.requires_grad
        (<UninitializedParameter>, gradsum.float32, True)
        >>> p.materialize((2, 3))
        >>> type(p).__name__, p.shape
        ('Parameter', (2, 3))
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None,
                dtype: Any = None) -> UninitializedParameter:
        from gradsum._dtype import get_default_dtype

        _device.check_factory(device, "empty")
        arr = xp.empty((0,), dtype=(dtype or get_default_dtype()).np)
        p = Tensor._make.__func__(cls, arr)  # type: ignore[attr-defined]
        if requires_grad:
            p._requires_grad = True
        return p  # type: ignore[no-any-return]

    def __init__(self, requires_grad: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        pass

    def __deepcopy__(self, memo: dict[int, Any]) -> UninitializedParameter:
        if id(self) in memo:
            return memo[id(self)]  # type: ignore[no-any-return]
        result = type(self)(self.requires_grad, None, self.dtype)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto: Any) -> Any:
        return (type(self), (self.requires_grad, None, self.dtype))


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (torch's ``UninitializedBuffer``); assigned as a
    module attribute it registers itself as a buffer (``persistent`` by default).

    Example:
        >>> from gradsum.nn.parameter import UninitializedBuffer
        >>> b = UninitializedBuffer()
        >>> b, b.persistent, b.requires_grad
        (<UninitializedBuffer>, True, False)
        >>> b.materialize((3,))
        >>> type(b).__name__, b.shape
        ('Tensor', (3,))
    """

    cls_to_become = Tensor
    persistent: bool

    def __new__(cls, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                persistent: bool = True) -> UninitializedBuffer:
        from gradsum._dtype import get_default_dtype

        _device.check_factory(device, "empty")
        arr = xp.empty((0,), dtype=(dtype or get_default_dtype()).np)
        b = Tensor._make.__func__(cls, arr)  # type: ignore[attr-defined]
        b._requires_grad = bool(requires_grad)
        b.persistent = persistent
        b._is_buffer = True
        return b  # type: ignore[no-any-return]

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                 persistent: bool = True) -> None:
        pass

    def _converted(self, plain: Tensor) -> Tensor:
        return UninitializedBuffer(self.requires_grad, None, plain.dtype, self.persistent)

    def __deepcopy__(self, memo: dict[int, Any]) -> UninitializedBuffer:
        if id(self) in memo:
            return memo[id(self)]  # type: ignore[no-any-return]
        result = type(self)(self.requires_grad, None, self.dtype, self.persistent)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto: Any) -> Any:
        return (type(self), (self.requires_grad, None, self.dtype, self.persistent))
