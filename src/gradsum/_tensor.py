"""The Tensor: state and API, no math (ops live in :mod:`gradsum.ops`).

A tensor wraps one backend array (``_array``) plus the autograd state: ``requires_grad``,
``grad_fn`` (the node that produced it), ``grad``, a version counter shared with its views, and
hooks. Methods with torch's names forward to the ops.

Example:
    >>> import gradsum
    >>> w = gradsum.tensor([1.0], requires_grad=True)
    >>> (w * 2).sum().backward()
    >>> w.grad
    tensor([2.])
    >>> (w * 3).sum().backward()     # backward() adds into .grad, it never replaces it
    >>> w.grad
    tensor([5.])
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from gradsum import _backend, _device, _memory_format
from gradsum import _dtype as D
from gradsum._backend import xp
from gradsum.autograd import _messages
from gradsum.autograd.graph import _assign_grad, _set_grad

if TYPE_CHECKING:
    from gradsum.autograd.graph import Node, RemovableHandle

_F: Any = None  # gradsum.ops, bound at the end of gradsum/__init__.py (import cycle)
_new = object.__new__
_ndarray = xp.ndarray
_as_array = xp.asarray

class Size(tuple):  # type: ignore[type-arg]
    """``torch.Size``: a tuple of dimension sizes, what ``Tensor.size()`` returns. Slices,
    sums and repeats of a Size are Sizes; ``numel()`` is their product. It prints as the tuple
    it is, and pickles as a plain tuple (any checkpoint loader reads it back).

    ``x.shape`` stays a plain tuple in gradsum (the hot path); the difference matters only to
    torch's legacy constructors, which take a Size as a size and a tuple as data:
    ``FloatTensor(x.size())`` is a tensor of ``x``'s shape, ``FloatTensor(x.shape)`` one of
    those numbers.

    Example:
        >>> import gradsum
        >>> s = gradsum.zeros(2, 3).size()
        >>> s, s.numel(), s[1:], isinstance(s, tuple)
        ((2, 3), 6, (3,), True)
        >>> gradsum.FloatTensor(s).shape
        (2, 3)
    """

    __slots__ = ()

    def __new__(cls, sizes: Any = ()) -> Size:
        items = tuple(sizes)
        for i, s in enumerate(items):
            if not hasattr(s, "__index__"):  # (ints, bools, NumPy integers)
                raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is "
                                f"'{type(s).__name__}')")
        return super().__new__(cls, (s.__index__() for s in items))

    def numel(self) -> int:
        """The number of elements of a tensor of this size (1 for ``Size([])``)."""
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, key: Any) -> Any:
        out = tuple.__getitem__(self, key)
        return Size(out) if isinstance(key, slice) else out

    def __add__(self, other: Any) -> Any:
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other: Any) -> Any:
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(other) + tuple(self))

    def __mul__(self, n: Any) -> Any:
        return Size(tuple(self) * n)

    __rmul__ = __mul__

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (tuple(self),))


#: the autograd package, loaded on the first backward (a layer above Tensor:
#: docs/ARCHITECTURE.md): its engine's run_backward and its seed of a scalar output
_autograd: Any = None


def _load_autograd() -> Any:
    global _autograd
    import gradsum.autograd

    _autograd = gradsum.autograd
    return _autograd


class Tensor:
    """A multi-dimensional array that records the operations applied to it for autograd.

    Create tensors with :func:`gradsum.tensor`, :func:`gradsum.zeros`, ... ``Tensor(data)`` is
    also accepted and, like ``torch.Tensor(data)``, gives the default float dtype.
    """

    # The hot state lives in slots; rarely used state (grad, hooks, views) are class-level
    # defaults that an instance overrides in its __dict__ only when needed, so creating the
    # many intermediate tensors of a graph stays cheap.
    __slots__ = ("__dict__", "__weakref__", "_array", "_grad_fn", "_output_nr",
                 "_requires_grad", "_vc")
    __array_priority__ = 1000  # so ndarray + Tensor calls Tensor.__radd__
    _grad: Tensor | None = None
    _base: Tensor | None = None
    _view_fn: Callable[[Tensor], Tensor] | None = None
    _hooks: list[Callable[..., Any]] | None = None
    _post_acc_hooks: list[Callable[..., Any]] | None = None
    _retains_grad: bool = False
    _acc_ref: Any = None
    # the version counter's value when this view was made in no_grad mode of a tensor that
    # requires grad (torch: such a view requires grad, is a leaf, and no gradient reaches it)
    _nograd_view_version: int | None = None
    # (node name, output index) of an output of split/chunk/unbind made in grad mode, and of
    # views of it: torch refuses to modify those in place
    _multi_view: tuple[Any, ...] | None = None
    # (kind, node name, output index) of a view torch refuses to use once its base changed
    # (see _messages.view_base_modified): set on outputs of split/chunk/unbind made in grad
    # mode of a tensor that requires grad, on views made in no_grad mode of such a tensor,
    # and on grad-mode views of either; mark_view propagates it
    _view_guard: tuple[str, str | None, int] | None = None

    def __init__(self, data: Any = None, *sizes: int, requires_grad: bool = False) -> None:
        if data is None:
            data = []
        if isinstance(data, Size) and not sizes:  # torch.Tensor(x.size()): that size
            arr = xp.zeros(tuple(data), dtype=D.get_default_dtype().np)
        elif sizes or (isinstance(data, int) and not isinstance(data, bool)):
            # torch.Tensor(2, 3): a tensor of that size (gradsum fills it with zeros)
            arr = xp.zeros((data, *sizes), dtype=D.get_default_dtype().np)
        else:
            arr = data._array if isinstance(data, Tensor) else xp.asarray(data)
            arr = xp.array(arr, dtype=D.get_default_dtype().np)
        self._init(arr, False, None, 0)
        if requires_grad:
            self._require_grad(True, "factory")

    def _init(self, array: Any, requires_grad: bool, grad_fn: Node | None, output_nr: int) -> None:
        self._array = array
        self._requires_grad = requires_grad
        self._grad_fn = grad_fn
        self._output_nr = output_nr
        self._vc = [0]

    @classmethod
    def _make(
        cls, array: Any, requires_grad: bool = False, grad_fn: Node | None = None,
        output_nr: int = 0,
    ) -> Tensor:
        """Wrap a backend array without copying (internal fast path). A NumPy scalar (what
        arithmetic on 0-d arrays returns) becomes a 0-d array: a tensor's buffer must be
        writable in place."""
        t = _new(cls)
        t._array = array if array.__class__ is _ndarray else _as_array(array)
        t._requires_grad = requires_grad
        t._grad_fn = grad_fn
        t._output_nr = output_nr
        t._vc = [0]
        return t

    # -- metadata -------------------------------------------------------------------------------
    @property
    def _xp(self) -> Any:
        """The array namespace of this tensor's backend."""
        return xp

    @property
    def shape(self) -> tuple[int, ...]:
        """The size of each dimension, as a tuple (torch's ``torch.Size`` is a tuple too)."""
        return self._array.shape

    def size(self, dim: int | None = None) -> Any:
        """``shape`` as a :class:`Size`, or the size of one dimension."""
        if dim is None:
            return Size(self._array.shape)
        return self._array.shape[_F._wrap_dim(dim, self._array.ndim)]

    @property
    def dtype(self) -> D.dtype:
        """The element type (``gradsum.float32`` by default)."""
        return D.from_numpy_dtype(self._array.dtype)

    @property
    def device(self) -> _device.device:
        """Where the tensor lives: ``device(type='cpu')``, always, in gradsum."""
        return _device._CPU

    @property
    def ndim(self) -> int:
        return self._array.ndim

    @property
    def nbytes(self) -> int:
        """The size of the elements in bytes (``numel() * itemsize``)."""
        return self._array.nbytes

    @property
    def itemsize(self) -> int:
        """The size of one element in bytes."""
        return self._array.itemsize

    @property
    def is_cpu(self) -> bool:
        """Whether the tensor lives on the CPU: always, in gradsum."""
        return True

    @property
    def is_sparse(self) -> bool:
        """Whether the layout is sparse COO: never (gradsum is dense only)."""
        return False

    @property
    def is_sparse_csr(self) -> bool:
        return False

    @property
    def is_quantized(self) -> bool:
        return False

    @property
    def is_meta(self) -> bool:
        return False

    @property
    def is_mkldnn(self) -> bool:
        return False

    @property
    def is_nested(self) -> bool:
        return False

    @property
    def real(self) -> Tensor:
        """The real part: the tensor itself, for gradsum's real dtypes."""
        return self

    @property
    def imag(self) -> Tensor:
        """torch's error: a real tensor has no imaginary part."""
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")

    def dim(self) -> int:
        return self._array.ndim

    def ndimension(self) -> int:
        """The number of dimensions (torch's alias of :meth:`dim`).

        Example:
            >>> import gradsum
            >>> gradsum.zeros(2, 3).ndimension()
            2
        """
        return self._array.ndim

    def numel(self) -> int:
        return int(self._array.size)

    def nelement(self) -> int:
        return int(self._array.size)

    def element_size(self) -> int:
        return int(self._array.itemsize)

    def is_floating_point(self) -> bool:
        return D.is_float_np(self._array.dtype)

    def is_signed(self) -> bool:
        """Whether the dtype can hold negative values (False for bool and uint8)."""
        return self._array.dtype.kind in "fi" or self._array.dtype == D._BF16_NP

    def is_contiguous(self, *, memory_format: Any = None) -> bool:
        """Whether the elements lie in ``memory_format``'s order (default: row-major)."""
        if memory_format is None:
            return bool(self._array.flags.c_contiguous)
        return _memory_format.is_contiguous(
            self._array, _memory_format.check(memory_format, "is_contiguous"))

    def stride(self, dim: int | None = None) -> Any:
        st = tuple(s // self._array.itemsize for s in self._array.strides)
        return st if dim is None else st[dim]

    @property
    def is_cuda(self) -> bool:
        """Whether the tensor is on a CUDA GPU: never, in gradsum (as on torch's CPU build)."""
        return False

    # (torch's other accelerator flags: all False on its CPU build, as here)
    @property
    def is_xpu(self) -> bool:
        return False

    @property
    def is_mps(self) -> bool:
        return False

    @property
    def is_ipu(self) -> bool:
        return False

    @property
    def is_xla(self) -> bool:
        return False

    @property
    def is_vulkan(self) -> bool:
        return False

    @property
    def is_mtia(self) -> bool:
        return False

    @property
    def is_maia(self) -> bool:
        return False

    # -- autograd state -------------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        """True for leaves created with ``requires_grad=True`` and for every result computed
        from such tensors while grad mode is on (a view made in no_grad mode of a tensor that
        requires grad: while its base does, as torch's, which asks the base)."""
        if self._grad_fn is not None:
            return True
        if self._requires_grad:
            nv = self._nograd_view_version
            return nv is None or nv == -1 or self._base is None or self._base.requires_grad
        return False

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if not isinstance(value, bool):  # (torch refuses 0/1 here too)
            raise RuntimeError(
                f"requires_grad must be a bool, got {type(value).__name__} {value!r}. Assign "
                "True or False."
            )
        self._require_grad(value, "attribute")

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` of a leaf in place; returns ``self``.

        Example:
            >>> import gradsum
            >>> gradsum.zeros(2).requires_grad_().requires_grad
            True
        """
        if not isinstance(requires_grad, bool):
            raise TypeError(
                "requires_grad_(): argument 'requires_grad' (position 1) must be bool, not "
                f"{type(requires_grad).__name__}. Pass True or False."
            )
        return self._require_grad(requires_grad, "method")

    def _require_grad(self, requires_grad: bool, entry: str) -> Tensor:
        """:meth:`requires_grad_` for a bool, asked for at ``entry`` (its text names it)."""
        if self._grad_fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(_messages.nonleaf_requires_grad())
        if requires_grad and not D.is_float_np(self._array.dtype):
            raise RuntimeError(_messages.int_requires_grad(self.dtype.name, entry))
        self._requires_grad = bool(requires_grad)
        if "_nograd_views" in self.__dict__:
            self._tell_nograd_views(self._requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        """True for tensors not produced by a recorded op (they can hold ``.grad``)."""
        return self.grad_fn is None

    @property
    def grad_fn(self) -> Node | None:
        """The node that produced this tensor (``None`` for leaves)."""
        fn = self._grad_fn
        if fn is None and self._nograd_view_version is not None and self.requires_grad:
            self._check_nograd_view()  # (torch asks only while the view requires grad)
        return fn

    def _check_nograd_view(self) -> None:
        """torch refuses to read the history of a view made in no_grad mode (of a tensor that
        requires grad) once it or its base was modified in place."""
        if self._vc[0] != self._nograd_view_version:
            g = self._view_guard
            raise RuntimeError(_messages.view_base_modified(*g) if g is not None else
                               _messages.nograd_view_base_modified())

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient. ``backward()`` adds into it; it is never cleared for you."""
        g = self._grad
        if g is None and self._grad_fn is not None and not self._retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "Its .grad attribute won't be populated during autograd.backward(). If you "
                "indeed want the .grad field to be populated for a non-leaf Tensor, use "
                ".retain_grad() on the non-leaf Tensor.",
                UserWarning,
                stacklevel=2,
            )
        return g

    grad = grad.setter(_assign_grad)  # (the sink writes every .grad: autograd.graph)

    @grad.deleter
    def grad(self) -> None:
        _set_grad(self, None)

    @property
    def _version(self) -> int:
        """The version counter (torch's ``_version``): bumped by every in-place change of this
        tensor or of a tensor sharing its buffer as a view. Saved tensors compare it to detect
        a value modified since it was saved. (Internally ``_vc``, a one-element list shared
        with the views, whose later entries track guarded views.)"""
        return self._vc[0]

    @property
    def data(self) -> Tensor:
        """A detached tensor sharing this tensor's buffer (changes to it are not tracked).

        Unlike :meth:`detach`, it has its own version counter (as torch's): an in-place change
        through it is invisible to the saved-tensor checks.
        """
        return Tensor._make(self._array)

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        if self._requires_grad and not D.is_float_np(value._array.dtype):
            raise RuntimeError(
                "data set to a tensor that requires gradients must be floating point or "
                f"complex dtype (got {value.dtype} for a tensor that requires grad). Convert "
                "the value first (value.float()) or call requires_grad_(False)."
            )
        self._array = value._array

    def detach(self) -> Tensor:
        """A new leaf sharing the buffer and version counter, outside the graph.

        Example:
            >>> import gradsum
            >>> x = gradsum.ones(2, requires_grad=True)
            >>> (x * 2).detach().requires_grad
            False
        """
        t = Tensor._make(self._array)
        t._vc = self._vc
        root = self._base if self._base is not None else self
        if "_views" in root.__dict__:
            # (an unrecorded write through this alias moves the version of root's views:
            # ops.inplace regenerates their grad_fn, as torch does on their next use)
            t._alias_root = weakref.ref(root)
        return t

    def detach_(self) -> Tensor:
        """Detach in place: this tensor becomes a leaf that does not require grad."""
        if self._base is not None:  # (torch refuses every view, requiring grad or not)
            raise RuntimeError(_messages.detach_view_inplace(tuple(self._base.shape)))
        self._grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        if "_nograd_views" in self.__dict__:
            self._tell_nograd_views(False)
        return self

    def _tell_nograd_views(self, requires_grad: bool) -> None:
        """The views made in no_grad mode of this base (while it required grad) require grad
        while it does: torch's ask the base; gradsum's hold a flag the hot paths read."""
        for ref in self.__dict__["_nograd_views"]:
            v = ref()
            if v is not None and v._grad_fn is None and v._nograd_view_version not in (None, -1):
                v._requires_grad = requires_grad

    def retain_grad(self) -> None:
        """Make this non-leaf keep its gradient in ``.grad`` (accumulating like a leaf).

        Example:
            >>> import gradsum
            >>> x = gradsum.ones(2, requires_grad=True)
            >>> y = x * 3
            >>> y.retain_grad()
            >>> y.sum().backward()
            >>> y.grad.tolist()
            [1.0, 1.0]
        """
        if not self.requires_grad:
            raise RuntimeError(_messages.retain_grad_no_grad())
        if self._nograd_view_version == -1:  # (a stale view that had a grad_fn: ops._core)
            self._check_nograd_view()
        if self._grad_fn is None or self._retains_grad:
            return
        self._grad_fn._get_hooks().retains[self._output_nr] = weakref.ref(self)
        self._retains_grad = True

    @property
    def retains_grad(self) -> bool:
        """True for a non-leaf on which :meth:`retain_grad` was called."""
        return self._retains_grad

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """Run ``hook(grad)`` when the gradient of this tensor is computed; a returned tensor
        replaces the gradient. On a leaf it runs once per backward, before accumulation.

        Example:
            >>> import gradsum
            >>> x = gradsum.ones(2, requires_grad=True)
            >>> h = x.register_hook(lambda g: g * 10)
            >>> (x * 2).sum().backward()
            >>> x.grad.tolist()
            [20.0, 20.0]
        """
        from gradsum.autograd.graph import RemovableHandle

        if not self.requires_grad:
            raise RuntimeError(_messages.no_hook_without_grad(self.shape))
        if self._nograd_view_version is not None:
            self._check_nograd_view()
        # torch keeps a tensor's hooks in one dict, attached to the grad_fn it has at the
        # first registration: later hooks join that node even after an in-place op gave the
        # tensor a new grad_fn (and a view's grad_fn, regenerated after its version moved,
        # starts without them: ops._core.stale_views)
        home = self.__dict__.get("_hook_home")
        if home is None and self._grad_fn is not None:
            home = self._hook_home = (self._grad_fn, self._output_nr)
            if self._base is not None and self._view_fn is not None:
                self._vc.append(weakref.ref(self))
        if home is not None:
            return home[0]._add_tensor_hook(home[1], hook)
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        return RemovableHandle(self._hooks, hook)

    def register_post_accumulate_grad_hook(
        self, hook: Callable[[Tensor], None]
    ) -> RemovableHandle:
        """Run ``hook(tensor)`` after backward has updated this leaf's ``.grad``.

        Example:
            >>> import gradsum
            >>> x = gradsum.ones(2, requires_grad=True)
            >>> seen = []
            >>> h = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.sum().item()))
            >>> (x * 2).sum().backward()
            >>> seen
            [4.0]
        """
        from gradsum.autograd.graph import RemovableHandle

        if self._grad_fn is not None:
            raise RuntimeError(_messages.non_leaf_post_hook())
        if not self._requires_grad:
            raise RuntimeError(_messages.no_hook_without_grad(self.shape))
        if self._post_acc_hooks is None:
            self._post_acc_hooks = []
        self._post_acc_hooks.append(hook)
        return RemovableHandle(self._post_acc_hooks, hook)

    def backward(
        self,
        gradient: Tensor | None = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Sequence[Tensor] | Tensor | None = None,
    ) -> None:
        """Accumulate the gradient of this tensor into ``.grad`` of the leaves (see
        :func:`gradsum.autograd.backward`)."""
        if (gradient is None and inputs is None and not create_graph
                and self._grad_fn is not None and self._array.size == 1
                and self._array.dtype.kind == "f"):
            # ``loss.backward()``, the call of every training step: its checks hold (a
            # floating scalar with a graph), so straight to the engine
            autograd = _autograd or _load_autograd()
            autograd.run_backward((self,), (autograd._implicit_seed(self),),
                                  bool(retain_graph), False)
            return
        from gradsum.autograd import backward

        # (gradient passed as is, as torch: a number or a list is refused the same way)
        backward([self], gradient, retain_graph, create_graph, inputs=inputs)

    # -- conversion -----------------------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> Any:
        """The backing NumPy array (shared, not copied). Refused while it requires grad."""
        if self.requires_grad and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        return self._array

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        arr = self.numpy()
        if dtype is not None:
            return arr.astype(dtype)
        return arr

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number."""
        if self._array.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._array.size} elements cannot be converted to Scalar. "
                "Reduce it first (e.g. .sum()) or index one element."
            )
        return self._array.reshape(()).item()

    def tolist(self) -> Any:
        """Nested Python lists of the values."""
        return self._array.tolist()

    def __float__(self) -> float:
        if self._array.size != 1:
            raise ValueError(_messages.not_one_element(tuple(self.shape)))
        return float(self.item())

    def __int__(self) -> int:
        if self._array.size != 1:
            raise ValueError(_messages.not_one_element(tuple(self.shape)))
        return int(self.item())

    def __index__(self) -> int:
        if self._array.dtype.kind not in "iub" or self._array.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self._array.size != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with more than one value is ambiguous (shape "
                f"{tuple(self.shape)}). Use .any() or .all()."
            )
        return bool(self._array.reshape(()))

    def __len__(self) -> int:
        if self._array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._array.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        if self._array.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(_F.unbind(self, 0))

    def __contains__(self, element: Any) -> bool:
        """``element in t``: whether any element equals ``element`` (a number or tensor)."""
        if not isinstance(element, (Tensor, bool, int, float, xp.generic)):
            raise RuntimeError(
                "Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
                f"{type(element)}. Compare with (t == gradsum.tensor(value)).any() instead."
            )
        return bool((self == element).any().item())

    def __hash__(self) -> int:
        return id(self)

    def __format__(self, spec: str) -> str:
        """A 0-d tensor formats as its Python number (``f"{loss:.3f}"``), like torch; any
        other tensor only with an empty spec (its repr)."""
        if self._array.ndim == 0 and type(self) is Tensor:
            return format(self.item(), spec)
        return object.__format__(self, spec)

    def __repr__(self) -> str:
        return _format(self)

    def __reduce_ex__(self, protocol: Any) -> Any:
        """Pickling (``pickle.dumps(t)``, multiprocessing), as torch's: the values, the class,
        ``requires_grad`` (a non-leaf loads as a leaf) and the Python attributes; not
        ``.grad``, ``grad_fn`` or hooks. ``gradsum.save`` writes torch's form instead."""
        from gradsum.serialization.rebuild import _rebuild_from_numpy

        state = self._python_attributes() or None
        new_type = None if type(self) is Tensor else type(self)
        return _rebuild_from_numpy, (self._array, self.requires_grad, state, new_type)

    def __copy__(self) -> Tensor:
        """``copy.copy(t)``, as torch's (which rebuilds the tensor from its storage): a new
        leaf of the same class sharing the buffer (a write through either shows in the other)
        but with its own version counter (at 1, as torch's after it sets the storage), the
        same ``requires_grad`` (also for a non-leaf, whose copy is a leaf requiring grad),
        no ``grad``, no ``grad_fn``, no hooks, and the original's Python attributes (the same
        objects, in a new ``__dict__``). A copy of a view is no view: it has the view's shape
        and strides over the same memory. As torch, it warns when hooks are left behind.

        Example:
            >>> import copy, gradsum
            >>> x = gradsum.zeros(2, requires_grad=True)
            >>> c = copy.copy(x)
            >>> c is x, c.requires_grad, c.grad is None
            (False, True, True)
            >>> with gradsum.no_grad():
            ...     _ = c.add_(1)
            >>> x
            tensor([1., 1.], requires_grad=True)
        """
        if self._has_tensor_hooks():
            for hook in self._tensor_hooks():
                warnings.warn(f"backward hook {hook!r} on tensor is not copied: "
                              "copy.copy(t) makes a tensor without hooks (as torch's). "
                              "Register it on the copy too if it should run there.",
                              UserWarning, stacklevel=3)
        new = type(self)._make(self._array, self.requires_grad)
        new._vc = [1]
        new.__dict__.update(self._python_attributes())
        return new

    def _has_tensor_hooks(self) -> bool:
        return bool(self._hooks) or "_hook_home" in self.__dict__

    def _tensor_hooks(self) -> list[Callable[..., Any]]:
        """The hooks registered with :meth:`register_hook` and not removed."""
        hooks = list(self._hooks or ())
        home = self.__dict__.get("_hook_home")
        if home is not None and home[0]._hooks is not None:
            hooks += home[0]._hooks.tensor.get(home[1], ())
        return hooks

    def _python_attributes(self) -> dict[str, Any]:
        """The entries of ``__dict__`` a user (or a subclass) set, without gradsum's own
        state (grad, hooks, view links): what torch keeps as a tensor's Python state."""
        return {k: v for k, v in self.__dict__.items() if k not in _INTERNAL_ATTRIBUTES}

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        if not self.is_leaf:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the "
                "deepcopy protocol at the moment. Use detach().clone() first."
            )
        new = type(self)._make(self._array.copy(), self._requires_grad)
        new.__dict__.update(self.__dict__)
        # like torch, hooks are not copied, and the copy is no view (it owns a new buffer):
        # it neither claims the original's base nor inherits the original's registered views
        # (an in-place op on the copy would otherwise rewrite their history)
        # (nor the marks of a view made in no_grad mode or of a split output: a copy of such
        # a view is a plain leaf, as in torch)
        for k in ("_hooks", "_post_acc_hooks", "_acc_ref", "_base", "_view_fn", "_views",
                  "_nograd_view_version", "_multi_view", "_view_guard", "_hook_home",
                  "_alias_root",
                  "_nograd_views"):
            new.__dict__.pop(k, None)
        if self._grad is not None:
            _set_grad(new, self._grad.__deepcopy__(memo))
        memo[id(self)] = new
        return new

    # -- type conversion ------------------------------------------------------------------------
    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """Convert dtype (``to(gradsum.float64)``); a device other than the CPU raises what
        torch's CPU build raises (``AssertionError`` for ``'cuda'``).

        Example:
            >>> import gradsum
            >>> x = gradsum.ones(2)
            >>> x.to("cpu") is x, x.to(gradsum.device("cpu"), gradsum.float64).dtype
            (True, gradsum.float64)
        """
        dtype = kwargs.pop("dtype", None)
        copy = kwargs.pop("copy", False)
        kwargs.pop("non_blocking", None)
        device = kwargs.pop("device", None)
        fmt = kwargs.pop("memory_format", None)
        dtype = D.from_python_type(dtype, "to")  # (float/int/bool: float64/int64/bool)
        for a in args:
            if isinstance(a, D.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                dtype = a.dtype
            elif isinstance(a, (str, _device.device)) or (
                    isinstance(a, int) and not isinstance(a, bool)):
                device = a
            elif isinstance(a, type):
                dtype = D.from_python_type(a, "to")
        # ("cpu:0" names an index, so torch copies even to the same device)
        if device is not None and _device.check_transfer(device).index is not None:
            copy = True
        if fmt is not None and fmt is not _memory_format.preserve_format:
            fmt = _memory_format.check(fmt, "to")
            _memory_format.check_rank(self._array, fmt)
            if not _memory_format.has_canonical_strides(self._array, fmt):  # (a copy, laid out)
                out = _F.to_dtype(self, dtype or self.dtype)
                out._array = _memory_format.relayout(out._array, fmt)
                return out
        if dtype is None or dtype.np == self._array.dtype:
            return self.clone() if copy else self
        return _F.to_dtype(self, dtype)

    def type(self, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
        """Without ``dtype``: torch's legacy type name, spelt as torch spells it
        (``'torch.FloatTensor'``); with a legacy type (``gradsum.DoubleTensor``), its name or a
        dtype: this tensor converted (itself when the dtype is already that one). See
        :mod:`gradsum._legacy_types`."""
        from gradsum._legacy_types import tensor_type

        return tensor_type(self, dtype, non_blocking, **kwargs)

    def new(self, *args: Any, **kwargs: Any) -> Tensor:
        """torch's legacy ``x.new(...)``: the legacy constructor of this tensor's type
        (``x.new(2, 3)``, ``x.new([1, 2])``, ``x.new()``), a plain tensor of ``x``'s dtype
        that does not require grad. Prefer ``new_zeros``/``new_tensor``/``new_empty``.

        Example:
            >>> import gradsum
            >>> gradsum.zeros(1, dtype=gradsum.float64).new([1, 2])
            tensor([1., 2.], dtype=gradsum.float64)
        """
        from gradsum._legacy_types import tensor_new

        return tensor_new(self, args, kwargs)

    def float(self) -> Tensor:
        return self.to(D.float32)

    def double(self) -> Tensor:
        return self.to(D.float64)

    def half(self) -> Tensor:
        return self.to(D.float16)

    def bfloat16(self) -> Tensor:
        """``to(gradsum.bfloat16)``: rounds to nearest even, as torch (needs ``ml_dtypes``)."""
        return self.to(D.bfloat16)

    def long(self) -> Tensor:
        return self.to(D.int64)

    def int(self) -> Tensor:
        return self.to(D.int32)

    def bool(self) -> Tensor:
        return self.to(D.bool_)

    def byte(self) -> Tensor:
        """``to(gradsum.uint8)`` (out-of-range values wrap, as in torch).

        Example:
            >>> import gradsum
            >>> gradsum.tensor([1.5, 255.0]).byte().tolist()
            [1, 255]
        """
        return self.to(D.uint8)

    def char(self) -> Tensor:
        """``to(gradsum.int8)``.

        Example:
            >>> import gradsum
            >>> gradsum.tensor([-1.5, 2.0]).char().tolist()
            [-1, 2]
        """
        return self.to(D.int8)

    def short(self) -> Tensor:
        """``to(gradsum.int16)``.

        Example:
            >>> import gradsum
            >>> gradsum.tensor([-1.5, 2.0]).short().tolist()
            [-1, 2]
        """
        return self.to(D.int16)

    def cpu(self, memory_format: Any = None) -> Tensor:
        """The tensor itself (it is on the CPU already), as in torch."""
        return self

    def cuda(self, device: Any = None, non_blocking: bool = False,
             memory_format: Any = None) -> Tensor:
        """torch's CPU build: ``AssertionError: Torch not compiled with CUDA enabled`` (an int
        or a non-CUDA device raises its RuntimeError first, as there)."""
        raise _device.check_cuda_target(device, "cuda")

    def xpu(self, device: Any = None, non_blocking: bool = False,
            memory_format: Any = None) -> Tensor:
        """torch's CPU build: ``AssertionError: Torch not compiled with XPU enabled``."""
        raise _device.check_cuda_target(device, "xpu")

    def pin_memory(self, device: Any = None) -> Tensor:
        """torch's CPU build: RuntimeError "Cannot access accelerator device when none is
        available." (page-locked memory exists for copies to an accelerator)."""
        if device is not None:
            warnings.warn("The argument 'device' of Tensor.pin_memory() is deprecated. Please "
                          "do not pass this argument.", DeprecationWarning, stacklevel=2)
            if _device.as_device(device, "pin_memory").type == "cpu":
                raise RuntimeError("CPU device type not an accelerator.")
        raise _device.no_accelerator()

    def clone(self, *, memory_format: Any = None) -> Tensor:
        """A copy that stays in the graph (its gradient flows back to ``self``), laid out in
        ``memory_format``'s order when one other than ``preserve_format`` is given."""
        out = _F.clone(self)
        if memory_format is not None and memory_format is not _memory_format.preserve_format:
            fmt = _memory_format.check(memory_format, "clone")
            out._array = _memory_format.relayout(out._array, fmt)
        return out

    def new_tensor(self, data: Any, dtype: D.dtype | None = None, device: Any = None,
                   requires_grad: bool = False) -> Tensor:
        from gradsum._creation import tensor

        # (a new_* tensor is on self's device, whatever the default device)
        device = _device._CPU if device is None else device
        return tensor(data, dtype=dtype or self.dtype, device=device,
                      requires_grad=requires_grad)

    def new_zeros(self, *size: Any, dtype: D.dtype | None = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
        from gradsum._creation import zeros

        # (a new_* tensor is on self's device, whatever the default device)
        device = _device._CPU if device is None else device
        return zeros(*size, dtype=dtype or self.dtype, device=device,
                     requires_grad=requires_grad)

    def new_ones(self, *size: Any, dtype: D.dtype | None = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
        from gradsum._creation import ones

        # (a new_* tensor is on self's device, whatever the default device)
        device = _device._CPU if device is None else device
        return ones(*size, dtype=dtype or self.dtype, device=device,
                    requires_grad=requires_grad)

    def new_full(self, size: Any, fill_value: Any, dtype: D.dtype | None = None,
                 device: Any = None, requires_grad: bool = False) -> Tensor:
        from gradsum._creation import full

        # (a new_* tensor is on self's device, whatever the default device)
        device = _device._CPU if device is None else device
        return full(size, fill_value, dtype=dtype or self.dtype, device=device,
                    requires_grad=requires_grad)

    def new_empty(self, *size: Any, dtype: D.dtype | None = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
        from gradsum._creation import empty

        # (a new_* tensor is on self's device, whatever the default device)
        device = _device._CPU if device is None else device
        return empty(*size, dtype=dtype or self.dtype, device=device,
                     requires_grad=requires_grad)

    # -- operators (math lives in gradsum.ops) ----------------------------------------------------
    def __add__(self, other: Any) -> Tensor:
        return _F.add(self, other)

    def __radd__(self, other: Any) -> Tensor:
        return _F.add(self, other)

    def __sub__(self, other: Any) -> Tensor:
        return _F.sub(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return _F.rsub(self, other)

    def __mul__(self, other: Any) -> Tensor:
        return _F.mul(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return _F.mul(self, other)

    def __truediv__(self, other: Any) -> Tensor:
        return _F.div(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return _F.rdiv(self, other)

    def __pow__(self, other: Any) -> Tensor:
        return _F.pow(self, other)

    def __rpow__(self, other: Any) -> Tensor:
        return _F.rpow(self, other)

    def __neg__(self) -> Tensor:
        return _F.neg(self)

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return _F.abs(self)

    def __matmul__(self, other: Any) -> Tensor:
        return _F.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return _F.matmul(_F.as_tensor_like(other, self), self)

    def __floordiv__(self, other: Any) -> Tensor:
        return _F.floor_divide(self, other)

    def __mod__(self, other: Any) -> Tensor:
        return _F.remainder(self, other)

    def __rfloordiv__(self, other: Any) -> Tensor:
        return _F.rfloor_divide(self, other)

    def __rmod__(self, other: Any) -> Tensor:
        return _F.rremainder(self, other)

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        if other is None:  # torch: a tensor never equals None (a Python bool)
            return False  # type: ignore[return-value]
        try:
            return _F.eq(self, other)
        except TypeError:  # torch: NotImplemented, so Python compares identities (False)
            return NotImplemented

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        if other is None:
            return True  # type: ignore[return-value]
        try:
            return _F.ne(self, other)
        except TypeError:
            return NotImplemented

    def __lt__(self, other: Any) -> Tensor:
        return _F.lt(self, other)

    def __le__(self, other: Any) -> Tensor:
        return _F.le(self, other)

    def __gt__(self, other: Any) -> Tensor:
        return _F.gt(self, other)

    def __ge__(self, other: Any) -> Tensor:
        return _F.ge(self, other)

    # (& | ^ ~ and their reflections are torch's bitwise ops, bound in ops/__init__.py)

    def __getitem__(self, key: Any) -> Tensor:
        return _F.getitem(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        _F.setitem_(self, key, value)

    def __iadd__(self, other: Any) -> Tensor:
        return _F.add_(self, other)

    def __isub__(self, other: Any) -> Tensor:
        return _F.sub_(self, other)

    def __imul__(self, other: Any) -> Tensor:
        return _F.mul_(self, other)

    def __itruediv__(self, other: Any) -> Tensor:
        return _F.div_(self, other)

    @property
    def T(self) -> Tensor:
        """Dimensions reversed (for 2-D: the transpose); torch deprecates it for other ranks
        and warns, and so does gradsum."""
        nd = self._array.ndim
        if nd == 0:
            warnings.warn("Tensor.T is deprecated on 0-D tensors. This function is the "
                          "identity in these cases.", UserWarning, stacklevel=2)
        elif nd != 2:
            warnings.warn(
                "The use of `x.T` on tensors of dimension other than 2 to reverse their shape "
                "is deprecated and it will throw an error in a future release. Consider `x.mT` "
                "to transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, "
                "-1))` to reverse the dimensions of a tensor.", UserWarning, stacklevel=2)
        shape_ops = _F.views  # (gradsum.ops.views: permute with dims known to be valid)
        return shape_ops._permute(self, tuple(range(self._array.ndim - 1, -1, -1)),
                                  shape_ops.PermuteBackward0, True)

    @property
    def mT(self) -> Tensor:
        """The last two dimensions swapped (a batch of matrices transposed).

        Example:
            >>> import gradsum
            >>> gradsum.ones(4, 2, 3).mT.shape
            (4, 3, 2)
        """
        return self._matrix_transpose("mT")

    @property
    def mH(self) -> Tensor:
        """The conjugate of :attr:`mT`: for gradsum's real tensors, the same."""
        return self._matrix_transpose("mH")

    def _matrix_transpose(self, name: str) -> Tensor:
        nd = self._array.ndim
        if nd == 0:
            warnings.warn(f"Tensor.{name} is deprecated on 0-D tensors. "
                          + ("This function is the identity in these cases." if name == "mT"
                             else "Consider using x.conj()."), UserWarning, stacklevel=3)
            return self
        if nd == 1:
            raise RuntimeError(
                f"tensor.{name} is only supported on matrices or batches of matrices. Got 1-D "
                "tensor. Use t.unsqueeze(0) (a row) or t.unsqueeze(1) (a column) first."
            )
        return _F.transpose(self, -2, -1)

    @property
    def H(self) -> Tensor:
        """The conjugate transpose of a matrix: for gradsum's real tensors, the transpose.

        Example:
            >>> import gradsum
            >>> gradsum.tensor([[1, 2, 3]]).H.shape
            (3, 1)
        """
        nd = self._array.ndim
        if nd == 0:
            warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
                          UserWarning, stacklevel=2)
            return self
        if nd != 2:
            hint = " For batches of matrices, consider using tensor.mH" if nd > 2 else ""
            raise RuntimeError(
                f"tensor.H is only supported on matrices (2-D tensors). Got {nd}-D tensor.{hint}"
            )
        return _F.transpose(self, 0, 1)


#: gradsum's own entries of a tensor's ``__dict__``: the class-level defaults an instance
#: overrides (grad, hooks, view marks) and the state only instances hold (the views a base
#: remembers, the node its hooks live on, the alias of a detached view)
_INTERNAL_ATTRIBUTES = frozenset(
    {k for k, v in vars(Tensor).items()
     if k.startswith("_") and not k.startswith("__") and not callable(v)
     and not isinstance(v, (property, staticmethod, classmethod))}
    | {"_views", "_nograd_views", "_hook_home", "_alias_root"})


def _format(t: Tensor) -> str:
    """``repr(t)``: torch's printing rules (see :mod:`gradsum._tensor_str`)."""
    from gradsum._tensor_str import tensor_repr

    return tensor_repr(t)


def is_tensor(obj: object) -> bool:
    """True for gradsum tensors (and parameters)."""
    return isinstance(obj, Tensor)


def _tensor_arg(name: str, t: Any) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(t).__name__}")
    return t


def is_floating_point(input: Tensor) -> bool:
    """``input.is_floating_point()``, as a function (torch's name)."""
    return _tensor_arg("is_floating_point", input).is_floating_point()


def numel(input: Tensor) -> int:
    """``input.numel()``, as a function (torch's name).

    Example:
        >>> import gradsum
        >>> gradsum.numel(gradsum.ones(2, 3))
        6
    """
    return _tensor_arg("numel", input).numel()


def is_nonzero(input: Tensor) -> bool:
    """The truth value of a one-element tensor (torch's ``is_nonzero``)."""
    n = _tensor_arg("is_nonzero", input)._array.size
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input._array.reshape(()))


_ = _backend  # the seam is imported here so that tensors and ops share one namespace
