"""``Tensor``: an ``np.ndarray`` plus what autograd needs (``requires_grad``, ``grad``, ``grad_fn``).

The array is ``t._data``, internal to minigrad; users reach it through ``t.numpy()`` (no copy) or
``np.asarray(t)``. ``t.data`` is what it is in PyTorch: a Tensor sharing the memory, outside the graph.
The class holds storage, attributes, autograd entry points and Python operators.
The operations themselves live in ``minigrad/ops/`` next to their backward passes;
the table at the bottom of this file binds them as methods, so ``x.sum(1)`` and
``mg.sum(x, 1)`` are the same function.
"""
import math
import sys
import warnings
import weakref

import numpy as np

from . import dtypes
from .dtypes import FLOAT32_64
from . import layouts as _layouts
from .autograd import version as _version
from .autograd import views as _views
from .autograd.function import retained_elsewhere, type_name
from .device import CPU, check_device, cuda_device
from .device import device as Device
from .size import Size


_NO_DATA = object()  # ``Tensor()`` with no argument


class _RemovableHandle:
    """What registering a hook returns (``torch.utils.hooks.RemovableHandle``): ``remove()`` takes the hook out;
    ``with handle:`` removes it when the block ends. ``id`` numbers the handles of the process."""
    next_id = [0]

    def __init__(self, hooks, hook):
        self._hooks, self._hook = hooks, hook
        self.id = _RemovableHandle.next_id[0]
        _RemovableHandle.next_id[0] += 1

    def remove(self):
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def parse_to_args(args, dtype=None, device=None):
    """The dtype that ``to(...)`` asks for, from PyTorch's forms: ``to(dtype)``, ``to(other_tensor)`` (its
    dtype), ``to('cpu')``, ``to(device('cpu'))``, ``to('cpu', dtype)`` and the ``dtype=``/``device=`` keywords.
    A string, a ``device`` or an int (a CUDA ordinal) is always a device, as in PyTorch. None if no dtype is
    given; a device other than the CPU raises."""
    for arg in args:
        if isinstance(arg, bool):      # non_blocking, copy: PyTorch's positional flags after the target
            continue
        if isinstance(arg, Tensor):
            dtype = arg.dtype
        elif isinstance(arg, (str, Device, int)):
            device = arg
        else:
            dtype = arg
    check_device(device)
    return dtype


def legacy_array(data, sizes, dtype, constructor):
    """The array PyTorch's legacy constructors (``Tensor``, ``FloatTensor``, ...) make of their arguments:
    sizes (``Tensor(2, 3)``: uninitialized), a sequence of numbers (``Tensor([[1, 2]])``, converted to
    ``dtype``), a tensor of that dtype (its memory, shared) or nothing (``Tensor()``: empty)."""
    if data is _NO_DATA:
        return np.empty((0,), dtype=dtype)
    if isinstance(data, Tensor) and not sizes:
        if data.dtype != dtype:
            raise TypeError(f"{constructor}(): expected a tensor of dtype {dtype}, got one of dtype {data.dtype}")
        return data._data
    arguments = (data,) + sizes
    if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in arguments):
        return np.empty(_creation.size_of(arguments), dtype=dtype)
    if sizes:
        got = ", ".join(type(a).__name__ for a in arguments)
        raise TypeError(f"{constructor}(): sizes must all be ints, got ({got})")
    if isinstance(data, range):   # LongTensor(range(140)), as pygcn writes its index sets
        data = list(data)
    if not isinstance(data, (list, tuple, np.ndarray)):
        raise TypeError(f"{constructor}(): data must be a sequence (got {type(data).__name__})")
    return np.array(data, dtype=dtype)


_PRINT_PROFILES = {"default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
                   "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
                   "full": {"precision": 4, "threshold": sys.maxsize, "edgeitems": 3, "linewidth": 80}}
PRINT_OPTIONS = dict(_PRINT_PROFILES["default"], sci_mode=None)
"""How tensors print (``set_printoptions``): digits after the point, the element count above which a tensor is
summarised with ``edgeitems`` items at each end, the line width, and scientific notation (None: when needed)."""


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """``torch.set_printoptions``: ``profile`` ("default", "short" or "full") first, then the options given;
    ``sci_mode`` is set by every call (None, its default, chooses scientific notation when the values need it)."""
    PRINT_OPTIONS.update(_PRINT_PROFILES.get(profile, {}))
    given = {"precision": precision, "threshold": threshold, "edgeitems": edgeitems, "linewidth": linewidth}
    PRINT_OPTIONS.update({name: value for name, value in given.items() if value is not None})
    PRINT_OPTIONS["sci_mode"] = sci_mode


def _print_options(data):
    """``np.array2string`` options that print like PyTorch's formatter: one width for every element, that of the
    widest nonzero finite value as printed (NaN, infinities and zeros are not padded beyond it); floats as "1." when
    every nonzero finite value is an integer, with ``precision`` (4) decimals ("1.5000") otherwise, and in scientific
    notation ("1.0000e+03") when those values span more than 1000x, reach 1e8 or (not integers) go below 1e-4, or
    ``sci_mode`` asks for it; a lone ``True`` is not padded to the width of ``False``. The summary follows
    PRINT_OPTIONS, and so do the lines: as many elements per line as PyTorch puts there (``_line_options``)."""
    shape = {"threshold": PRINT_OPTIONS["threshold"], "edgeitems": PRINT_OPTIONS["edgeitems"],
             "max_line_width": PRINT_OPTIONS["linewidth"]}
    if data.dtype.kind == "b":
        width = 5 if not data.all() else 4
        return {"formatter": {"bool": lambda b: str(b).rjust(width)}, **shape, **_line_options(data, width)}
    if data.dtype.kind in "iu":
        shown = _summarized(data)
        width = max(len(str(shown.min())), len(str(shown.max()))) if shown.size else 1
        return {**shape, **_line_options(data, width)}
    if data.dtype.kind != "f":
        return shape
    digits, sci_mode = PRINT_OPTIONS["precision"], PRINT_OPTIONS["sci_mode"]
    shown = _summarized(data)                              # PyTorch decides on the values it shows
    values = shown[np.isfinite(shown) & (shown != 0)].astype(np.float64)
    integral = bool(np.all(values == np.ceil(values)))
    sci = False
    if values.size:
        largest, smallest = np.abs(values).max(), np.abs(values).min()
        sci = largest / smallest > 1000 or largest > 1e8 or (not integral and smallest < 1e-4)
    sci = sci if sci_mode is None or not values.size else sci_mode   # (no such value: PyTorch keeps "0.")

    def plain(x):
        if sci:
            return f"{x:.{digits}e}"
        if integral:
            return f"{x:.0f}" + ("." if math.isfinite(x) else "")
        return f"{x:.{digits}f}"
    widest = (values.min(), values.max(), values[np.abs(values).argmin()]) if values.size else ()
    width = max([1] + [len(plain(v)) for v in widest])    # (the longest: a sign, most digits, the longest exponent)
    return {"formatter": {"float_kind": lambda x: plain(float(x)).rjust(width)}, **shape, **_line_options(data, width)}


def _line_options(data, width):
    """NumPy's ``max_line_width`` that puts PyTorch's number of elements of ``width`` characters on a line: PyTorch
    fits floor((linewidth - indent) / (width + 2)) of them after an indent of "tensor(" and one per enclosing
    bracket but the innermost; NumPy adds an element while the line (its hanging indent, "tensor(" and every
    bracket, included) stays below max_line_width with the element and its comma. A summarized print, whose "..."
    PyTorch counts as an element, keeps ``linewidth``: there NumPy's own rule comes out as PyTorch's."""
    if data.size > PRINT_OPTIONS["threshold"]:
        return {"max_line_width": PRINT_OPTIONS["linewidth"]}
    hanging = len("tensor(") + max(data.ndim, 1)
    per_line = max(1, (PRINT_OPTIONS["linewidth"] - hanging + 1) // (width + 2))
    return {"max_line_width": hanging + per_line * (width + 2) + width}


def _summarized(data):
    """The values a summarized print shows: the first and last ``edgeitems`` along every long axis."""
    if data.size <= PRINT_OPTIONS["threshold"]:
        return data
    edge = PRINT_OPTIONS["edgeitems"]
    for axis, n in enumerate(data.shape):
        if n > 2 * edge:
            data = np.concatenate([data.take(range(edge), axis), data.take(range(n - edge, n), axis)], axis)
    return data


_PLAIN_OPERANDS = set()   # Tensor, float, int: filled in once the class exists


def _init_after_new(self, *args, **kwargs):
    """``Tensor.__init_subclass__``'s ``__init__``: nothing for an instance ``__new__`` made, ``Tensor.__init__``
    for one it did not."""
    if not hasattr(self, "_data"):
        Tensor.__init__(self, *args, **kwargs)


class Tensor:
    """An n-dimensional array that can record the operations applied to it for backpropagation."""

    # the last ones: set when used; __dict__ holds attributes a program sets on a tensor (``t.tag = ...``), as a
    # PyTorch tensor takes them (copied by deepcopy and pickle, not passed on to views or results)
    __slots__ = ("_data", "_requires_grad", "_grad", "_grad_fn", "_hooks", "_base", "_view_version", "_view_at",
                 "_view_kind", "_own_counter", "_post_accumulate_hooks", "__weakref__", "__dict__")
    __array_priority__ = 1000  # ndarray <op> Tensor defers to Tensor's reflected operator

    def __init_subclass__(cls, **kwargs):
        """A subclass that makes its instances in its own ``__new__`` (with ``Tensor._make_subclass``) and has no
        ``__init__``: Python then calls ``__init__`` with ``__new__``'s arguments, which PyTorch's ignores, so here it
        leaves the instance as ``__new__`` made it."""
        super().__init_subclass__(**kwargs)
        if "__new__" in cls.__dict__ and "__init__" not in cls.__dict__:
            cls.__init__ = _init_after_new

    def __init__(self, data=_NO_DATA, *sizes, requires_grad=False, device=None):
        # Internal constructor: an ndarray (or NumPy scalar) is taken as is, its dtype kept, memory shared
        # (use ``minigrad.tensor`` for conversions). Anything else is PyTorch's legacy constructor:
        # ``Tensor([1, 2])``, ``Tensor(2, 3)``, ``Tensor()`` (see ``legacy_array``).
        if type(data) is np.ndarray and not sizes:
            self._data = data
        elif isinstance(data, (np.ndarray, np.generic)) and not sizes:
            self._data = np.asarray(data)
        else:
            self._data = legacy_array(data, sizes, dtypes.get_default_dtype(), "Tensor")
        if device is not None:
            check_device(device)
        self._grad = None
        self._grad_fn = None
        self._hooks = ()  # a list once a hook is registered
        self._base = None  # for a view: the tensor whose memory it views (autograd/views.py)
        self._requires_grad = False
        if requires_grad:
            self.requires_grad_(True)

    # ----------------------------------------------------------------- attributes
    @property
    def data(self):
        """A tensor sharing this one's memory that does not require grad and is not recorded (PyTorch's
        ``.data``): ``p.data.add_(...)`` changes ``p`` without autograd seeing it, not even its version counter
        (so a backward that saved ``p`` uses the new values without an error, as in PyTorch; ``detach()`` is the
        safe form, which shares the counter)."""
        out = Tensor(self._data.view())     # its own array object: an op that saves it is told apart from one
        out._own_counter = [0]               # that saves this tensor's array (Context._check_versions)
        _version.own_counters_in_use[0] = True
        return out

    @data.setter
    def data(self, other):
        """``t.data = other``: ``t`` now holds ``other``'s memory (shape and dtype may change), as in PyTorch."""
        if not isinstance(other, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(other).__name__}")
        self._data = other._data

    @property
    def _version(self):
        """How many in-place writes this tensor's memory has seen (shared with its views)."""
        return _version.tensor_version(self)

    @property
    def shape(self):
        """A ``minigrad.Size`` (a tuple of ints with ``numel()``)."""
        return Size._of_shape(self._data.shape)

    @property
    def dtype(self):
        return self._data.dtype

    @property
    def ndim(self):
        return self._data.ndim

    # grad_fn and requires_grad are read through properties so that a view whose base was written in place
    # since (``base.mul_(w)``) reports the base's new history, as PyTorch's views do (``autograd/views.py``).
    @property
    def grad_fn(self):
        """The node of the backward graph that produced this tensor (None for a leaf)."""
        if self._base is not None and self._view_at != _version.writes[0]:
            _views.sync(self)
        return self._grad_fn

    @property
    def requires_grad(self):
        if self._base is None:
            return self._requires_grad
        return self._requires_grad or self._grad_fn is not None or self._base._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        """``t.requires_grad = flag``: ``requires_grad_(flag)``'s checks (only a leaf's flag can change)."""
        self.requires_grad_(value)

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def output_nr(self):
        """Which output of its ``grad_fn`` this tensor is: 0, as every minigrad node has one output (a Function with
        several outputs gives each its own node; docs/differences.md)."""
        return 0

    def _is_view(self):
        """Whether this tensor is a view of another's memory (``_base``), as PyTorch's ``_is_view()``."""
        return self._base is not None

    def dim(self):
        return self._data.ndim

    def size(self, dim=None):
        return Size._of_shape(self._data.shape) if dim is None else self._data.shape[dim]

    def numel(self):
        return self._data.size

    def is_floating_point(self):
        return dtypes.kind_of(self._data.dtype) == "f"

    def is_complex(self):
        return self._data.dtype.kind == "c"

    @property
    def real(self):
        """The real parts: a view for a complex tensor (``ops/complex.py``), the tensor itself for a real one."""
        return _complex.real(self)

    @property
    def imag(self):
        """The imaginary parts of a complex tensor, a view (a real tensor raises, as in PyTorch)."""
        return _complex.imag(self)

    def element_size(self):
        return self._data.itemsize

    @property
    def itemsize(self):
        return self._data.itemsize

    @property
    def nbytes(self):
        return self._data.nbytes

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __reversed__(self):
        """``reversed(t)``: ``t.flip(0)`` (a 0-d tensor itself), as PyTorch's."""
        return self if self._data.ndim == 0 else self.flip(0)

    def __reduce_ex__(self, protocol):
        """Pickling (and ``copy.deepcopy``): a tensor with a history comes back as a leaf with its values,
        ``requires_grad`` and attributes, as PyTorch's pickle gives it; the graph stays behind (its nodes are not
        data). A leaf pickles whole, its ``.grad`` included (docs/differences.md)."""
        if self._grad_fn is None:
            return super().__reduce_ex__(protocol)
        leaf = Tensor(self._data)
        leaf._requires_grad = self._requires_grad
        leaf.__dict__.update(self.__dict__)
        return leaf.__reduce_ex__(protocol)

    def __contains__(self, element):
        """``element in t``: whether any element of ``t`` equals ``element`` (a number, or a tensor compared by
        broadcasting), as PyTorch's."""
        if not isinstance(element, (Tensor, bool, int, float, complex, np.number, np.bool_)):
            raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
                               f"{type(element)}.")
        return bool((self == element).any())

    # ----------------------------------------------------------------- conversion
    @property
    def grad(self):
        """The accumulated gradient (a Tensor of this tensor's shape and dtype) or None. Read on a non-leaf tensor
        that does not retain its gradient, it warns as PyTorch does (backward never fills it)."""
        if self._grad is None and (self._grad_fn is not None or self._base is not None) and self.requires_grad \
                and not self.is_leaf and not self.retains_grad:
            warnings.warn("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed: backward "
                          "does not fill it. Call .retain_grad() on it before backward to keep its gradient, or read "
                          "the .grad of the leaf tensor it was computed from.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        """As in PyTorch, only None or a Tensor of this tensor's shape and dtype can be assigned."""
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
                                   f"size '{list(self.shape)}'. Please ensure that the gradient and the tensor are "
                                   "the same size")
            if value.dtype != self.dtype:
                raise RuntimeError(f"attempting to assign a gradient with dtype '{value.dtype}' to a tensor with "
                                   f"dtype '{self.dtype}'. The gradient must match the tensor's dtype")
        self._grad = value

    def numpy(self, *, force=False):
        """The underlying ndarray (no copy). Like PyTorch, refuses a tensor that requires grad while grad mode is on
        (under ``no_grad``, and so in a Function's forward, it is given), unless ``force`` (PyTorch's
        ``detach().numpy()`` then; minigrad has no device or lazy conjugate to resolve)."""
        if self.requires_grad and not force and _grad_mode._state.enabled:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        return self._data

    def __array__(self, dtype=None, copy=None):
        """``np.asarray(t)`` is the data itself (no copy); ``np.array(t)`` (NumPy passes ``copy=True``) a copy. As
        ``numpy()``, refused for a tensor that requires grad while grad mode is on (NumPy's result has no history)."""
        array = self.numpy()
        array = array if dtype is None else array.astype(dtype, copy=False)
        return array.copy() if copy and array is self._data else array

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """A NumPy function's result on tensors (``np.sin(t)``, ``np.maximum(t, 0)``) as a tensor, as PyTorch's: a
        leaf, and a bool result as uint8 (PyTorch's choice)."""
        return _creation.from_numpy(array.astype(np.uint8) if array.dtype == np.bool_ else array)

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.reshape(()).item()

    def tolist(self):
        return self._data.tolist()

    def __float__(self):
        return float(self._scalar())

    def __int__(self):
        return int(self._scalar())

    def _scalar(self):
        if self._data.size != 1:   # PyTorch: ValueError here, where item() raises RuntimeError
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def __complex__(self):
        return complex(self._scalar())

    __long__ = __int__        # Python 2's name, which PyTorch's Tensor still answers to

    def __delitem__(self, index):
        raise TypeError("Tensor does not support deleting items")

    def __index__(self):
        if self._data.dtype.kind not in "iu" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    __nonzero__ = __bool__

    def to(self, *args, dtype=None, device=None, non_blocking=False, copy=False, memory_format=None):
        """``to(dtype)``, ``to(other)`` (other's dtype), ``to('cpu')``, ``to('cpu', dtype)`` or the keywords,
        as in PyTorch; a differentiable cast, and ``self`` when the dtype already matches (a copy if
        ``copy=True``), laid out in ``memory_format`` if given. minigrad has one device, the CPU: any other
        device is an error."""
        from .ops.elementwise import cast
        from .ops.layout import clone, preserve_format, relayout
        dtype = parse_to_args(args, dtype, device)
        flags = [arg for arg in args if isinstance(arg, bool)]   # to(target, non_blocking, copy)
        if len(flags) > 1:
            copy = flags[1]
        layout = preserve_format if memory_format is None else memory_format
        if dtype is None or np.dtype(dtype) == self._data.dtype:
            return clone(self, memory_format=layout) if copy else relayout(self, layout)
        # a new tensor is made anyway: laid out in the format asked for (the cast keeps its input's layout)
        return cast(self if memory_format is None else self.contiguous(memory_format), np.dtype(dtype))

    # ----------------------------------------------------------------- device (the CPU only)
    @property
    def device(self):
        """``device(type='cpu')``: every minigrad tensor lives in main memory."""
        return CPU

    is_cuda = False
    is_cpu = True
    is_meta = False
    # the other backends PyTorch's tensors report on; a sparse tensor (``minigrad.sparse``) sets is_sparse
    is_xpu = is_mps = is_xla = is_ipu = is_maia = is_mtia = is_vulkan = is_mkldnn = is_quantized = False
    is_sparse = is_sparse_csr = is_nested = False
    _compressed = False   # True on sparse/compressed.py's CSR, CSC, BSR, BSC tensors (a class attribute: no lookup miss)
    layout = _layouts.strided

    def is_pinned(self, device=None):
        """False: there is no accelerator to pin host memory for."""
        return False

    def is_shared(self):
        return False

    def is_distributed(self):
        return False

    def is_inference(self):
        """False: minigrad's inference_mode does not mark the tensors it makes (a stand-in)."""
        return False

    def is_neg(self):
        return False

    def is_same_size(self, other):
        return self.shape == other.shape

    def is_nonzero(self):
        return bool(self)

    def get_device(self):
        """-1, PyTorch's answer for a CPU tensor."""
        return -1

    def cpu(self, memory_format=None):
        """``self``: the tensor is already on the CPU."""
        return self

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        """Always raises: minigrad runs on the CPU only."""
        check_device(cuda_device(device))

    def xpu(self, device=None, non_blocking=False, memory_format=None):
        """Always raises, as ``cuda``."""
        check_device(cuda_device(device, "xpu"))

    def mtia(self, device=None, non_blocking=False, memory_format=None):
        """Always raises, as ``cuda``."""
        check_device(cuda_device(device, "mtia"))

    # ----------------------------------------------------------------- dtype
    def type(self, dtype=None, non_blocking=False):
        """With no argument, the legacy type name (``'minigrad.FloatTensor'``); otherwise this tensor cast to
        ``dtype`` (a dtype, a legacy type such as ``minigrad.LongTensor``, or its name as a string; the
        ``torch.`` prefix of ported code is accepted), ``self`` if it already has that dtype."""
        if dtype is None:
            return type_name(self._data.dtype)
        if isinstance(dtype, str):
            dtype = legacy_dtype(dtype)
        elif isinstance(dtype, LegacyTensorType):
            dtype = dtype.dtype
        return self.to(dtype)

    def is_signed(self):
        return dtypes.kind_of(self._data.dtype) in "ifc" and self._data.dtype != dtypes.float8_e8m0fnu

    # ----------------------------------------------------------------- new tensors like this one
    def new(self, data=_NO_DATA, *sizes, device=None):
        """PyTorch's legacy ``x.new(...)``: ``Tensor(...)``'s forms with this tensor's dtype."""
        check_device(device)
        return Tensor(legacy_array(data, sizes, self._data.dtype, "new"))

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        """A copy of ``data`` with this tensor's dtype (unless ``dtype`` is given)."""
        return _creation.tensor(data, dtype=dtype or self._data.dtype, device=device, requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, **size_keyword):
        return _creation.zeros(*size, dtype=dtype or self._data.dtype, device=device, requires_grad=requires_grad,
                            **size_keyword)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False, **size_keyword):
        return _creation.ones(*size, dtype=dtype or self._data.dtype, device=device, requires_grad=requires_grad,
                            **size_keyword)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False, **size_keyword):
        return _creation.empty(*size, dtype=dtype or self._data.dtype, device=device, requires_grad=requires_grad,
                            **size_keyword)

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
        return _creation.full(size, fill_value, dtype=dtype or self._data.dtype, device=device,
                              requires_grad=requires_grad)

    def float(self, memory_format=None):
        return self.to(dtypes.float32, memory_format=memory_format)

    def double(self, memory_format=None):
        return self.to(dtypes.float64, memory_format=memory_format)

    def half(self, memory_format=None):
        return self.to(dtypes.float16, memory_format=memory_format)

    def bfloat16(self, memory_format=None):
        return self.to(dtypes.bfloat16, memory_format=memory_format)

    def long(self, memory_format=None):
        return self.to(dtypes.int64, memory_format=memory_format)

    def bool(self, memory_format=None):
        return self.to(dtypes.bool, memory_format=memory_format)

    def int(self, memory_format=None):
        return self.to(dtypes.int32, memory_format=memory_format)

    def short(self, memory_format=None):
        return self.to(dtypes.int16, memory_format=memory_format)

    def char(self, memory_format=None):
        return self.to(dtypes.int8, memory_format=memory_format)

    def byte(self, memory_format=None):
        return self.to(dtypes.uint8, memory_format=memory_format)

    def cfloat(self, memory_format=None):
        return self.to(dtypes.complex64, memory_format=memory_format)

    def cdouble(self, memory_format=None):
        return self.to(dtypes.complex128, memory_format=memory_format)

    def type_as(self, other):
        return self.to(other.dtype)

    # ----------------------------------------------------------------- autograd
    def requires_grad_(self, requires_grad=True):
        if requires_grad and not dtypes.is_differentiable(self._data.dtype):  # PyTorch's message, though complex is allowed
            raise RuntimeError(f"only Tensors of floating point dtype can require gradients (got {self._data.dtype})")
        if not requires_grad and self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use a "
                               "computed variable in a subgraph that doesn't require differentiation use "
                               "var_no_grad = var.detach().")
        self._requires_grad = bool(requires_grad)
        return self

    def detach(self):
        """A new tensor sharing this one's data and version counter, cut from the graph (``x.data.detach()`` counts
        on ``.data``'s own counter, as in PyTorch)."""
        out = Tensor(self._data)
        counter = getattr(self, "_own_counter", None)
        if counter is not None:
            out._own_counter = counter
        return out

    def detach_(self):
        """Cut this tensor from the graph, in place (PyTorch refuses it on a view: use ``detach()``)."""
        if self._base is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are using "
                               "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as "
                               "True, gradients are views of DDP buckets, and hence detach_() cannot be called on "
                               "these gradients. To fix this error, please refer to the Optimizer.zero_grad() "
                               "function in torch/optim/optimizer.py as the solution.")
        self._grad_fn = None
        self._requires_grad = False
        return self

    def retain_grad(self):
        """Keep ``.grad`` for this non-leaf tensor after backward (a no-op on leaves)."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is not None and not self.retains_grad:   # (a no-op when it does already, as in PyTorch;
            node = self.grad_fn                         # a view whose grad_fn is stale counts as a leaf here)
            if getattr(node.fn, "retained_below", False):   # PyTorch keeps the gradient of the history below, of the
                node.retained = retained_elsewhere              # shape before an in-place shape change (StaleShape)
                node = node.next_edges[0]
            node.retained = weakref.ref(self)

    @property
    def retains_grad(self):
        return self.grad_fn is not None and self.grad_fn.retained is not None

    def register_hook(self, hook):
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor replaces it."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is None and not self._hooks:
            self._hooks = []
        hooks = self._hooks if self.grad_fn is None else self.grad_fn.pre_hooks
        hooks.append(hook)
        return _RemovableHandle(hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(self)`` after a backward has accumulated this leaf's gradient into ``.grad`` (its
        return value is ignored), as PyTorch 2.1+ does; ``DistributedDataParallel`` starts its gradient
        all-reduce from it."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        hooks = _engine.post_accumulate_hooks(self)
        hooks.append(hook)
        return _RemovableHandle(hooks, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate d(self)/d(leaf) * gradient into every leaf's ``.grad`` (only into ``inputs``' if given)."""
        from .autograd import backward
        backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)

    # ----------------------------------------------------------------- printing
    def __repr__(self):
        extras = []
        if self._data.size == 0:
            body = "[]"
            if self._data.ndim != 1:
                extras.append(f"size={self._data.shape}")
        else:
            shown = self._data.astype(dtypes.float32) if self._data.dtype in dtypes.ML_FLOATS else self._data
            body = np.array2string(shown, separator=", ", prefix="tensor(", **_print_options(shown))
            body = body.replace(", ..., ", ",  ..., ")     # PyTorch's gap before a row's summary
        implied = (dtypes.get_default_dtype(),) if self._data.size == 0 else (dtypes.get_default_dtype(), dtypes.int64,
                                                                             dtypes.bool, dtypes.default_complex())
        if self._data.dtype not in implied:
            extras.append(f"dtype=minigrad.{self._data.dtype}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn={self.grad_fn!r}")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        text = "tensor(" + body
        last_line = len(text) - text.rfind("\n") + 1             # (PyTorch's count, one more than the line's)
        for extra in extras:                                     # on a new line where the line would pass linewidth
            if last_line + len(extra) + 2 > PRINT_OPTIONS["linewidth"]:
                text, last_line = text + ",\n" + " " * len("tensor(") + extra, len("tensor(") + len(extra)
            else:
                text, last_line = text + ", " + extra, last_line + len(extra) + 2
        return text + ")"

    def __format__(self, format_spec):
        """As PyTorch's: a 0-d Tensor (not a subclass such as Parameter) formats as its number, so f"{loss:.4f}"
        works; any other as object's (its str for an empty spec, else TypeError)."""
        if self._data.ndim == 0 and type(self) is Tensor:
            return self.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    __hash__ = object.__hash__

    # ----------------------------------------------------------------- operators
    # The binary operators are set after the class, as they need the ops: + - * / by ``_arithmetic``, the others
    # (2 / x, ** @ % // & | ^ << >>, comparisons, in-place) by ``_operator``

    def __neg__(self):
        return _ew.neg(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _ew.abs(self)

    def __getitem__(self, index):
        return _shape.index(self, index)

    def __setitem__(self, index, value):
        _inplace.setitem(self, index, value)

    def __invert__(self):
        if self._data.dtype.kind not in "biu":
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
        return _bitwise.bitwise_not(self)

    def t(self):
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
        return _shape.transpose(self, 0, -1)

    def where(self, condition, other):
        return _ew.where(condition, self, other)

    def softmax(self, dim, dtype=None):
        from .ops.softmax import softmax
        return softmax(self, dim, dtype=dtype)

    def log_softmax(self, dim, dtype=None):
        from .ops.softmax import log_softmax
        return log_softmax(self, dim, dtype=dtype)

    @property
    def T(self):
        return _shape.permute(self, *reversed(range(self.ndim)))

    @property
    def mT(self):
        return _shape.transpose(self, -2, -1)

    @property
    def mH(self):
        """The conjugate transpose of the matrices in the last two dims."""
        return _decomp.mH(self)

    @property
    def H(self):
        if self.ndim != 2:
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor.")
        return _decomp.mH(self)


_new = object.__new__


def wrap(array):
    """``Tensor(array)`` for an ``array`` whose type is exactly ``np.ndarray``, without the constructor's reading of its
    arguments (130 ns against 210): the engine wraps the output of every op and the gradient entering every node's
    backward. It sets what ``Tensor.__init__`` sets (tests/test_autograd.py compares the two)."""
    t = _new(Tensor)
    t._data = array
    t._grad = t._grad_fn = t._base = None
    t._hooks = ()
    t._requires_grad = False
    return t


# autograd wraps arrays in Tensors (``wrap``) but cannot import this module while it loads (circular): tell it here.
from .autograd import engine as _engine  # noqa: E402
from .autograd import function as _function  # noqa: E402
from .autograd import grad_mode as _grad_mode  # noqa: E402

_engine.Tensor = _function.Tensor = Tensor
_function.RemovableHandle = _RemovableHandle
_engine.wrap = _function.wrap = wrap

# The ops modules import Tensor, so they are imported after the class exists.
from .ops import elementwise as _ew  # noqa: E402
from .ops import linalg as _linalg  # noqa: E402
from .ops import reduce as _reduce  # noqa: E402
from .ops import shape as _shape  # noqa: E402
from .ops import inplace as _inplace  # noqa: E402
from . import creation as _creation  # noqa: E402
from . import random as _random  # noqa: E402
from .ops import index as _index  # noqa: E402
from .ops import sort as _sort  # noqa: E402
from .ops import complex as _complex  # noqa: E402
from .ops import layout as _layout  # noqa: E402
from .ops import activation as _activation  # noqa: E402
from .ops import decomp as _decomp  # noqa: E402
from .ops import products as _products  # noqa: E402
from . import linalg_legacy as _linalg_legacy  # noqa: E402
from .ops import special as _special  # noqa: E402
from .ops import spectral as _spectral  # noqa: E402
from .ops import trig as _trig  # noqa: E402
from .ops import elementwise_more as _ew_more  # noqa: E402
from .ops import floats as _floats  # noqa: E402
from .ops import division as _division  # noqa: E402
from .ops import bitwise as _bitwise  # noqa: E402
from .ops import order_stats as _order_stats  # noqa: E402
from .ops import cumulative as _cumulative  # noqa: E402
from .ops import reduce_more as _reduce_more  # noqa: E402
from .ops import inplace_more as _inplace_more  # noqa: E402

_PLAIN_OPERANDS.update((Tensor, float, int))


def _operator(op, reflected=False):
    """The operator method (``__pow__``, ``__rpow__``, ``__lt__``, ``__iadd__``...) that calls ``op(self, other)``
    (reflected: ``op(other, self)``). As PyTorch's operators, an operand the op refuses (its TypeError) gives
    NotImplemented: Python then tries the other operand's method (``None < t`` is ``t > None``), falls back from
    ``+=`` to ``+``, or raises its own "unsupported operand type(s) for **: 'Tensor' and 'NoneType'"; ``==`` with
    such an operand compares identities (False)."""
    def method(self, other):
        try:
            return op(other, self) if reflected else op(self, other)
        except TypeError:
            return NotImplemented
    return method


def _arithmetic(function, public, reflected=False):
    """The operator method (``__mul__``, ``__rmul__``...) of ``function`` (Add, Sub, Mul or Div), whose public function
    is ``public`` (``mg.mul``...). Its two common cases go straight to the Function: ``x * 0.5`` (a Python float beside
    a float32/float64 tensor: the number in the tensor's dtype, as ``public`` takes it) and ``x * y`` (two float32/
    float64 tensors). Other operands go through ``public``, without its argument check when it could not fail."""
    unchecked = public.__wrapped__
    checked = _operator(public, reflected)

    def method(self, other):
        dtype = self._data.dtype
        if dtype in FLOAT32_64:
            if other.__class__ is float:
                other = wrap(np.asarray(other, dtype))
                return function.apply(other, self) if reflected else function.apply(self, other)
            if isinstance(other, Tensor) and other._data.dtype in FLOAT32_64:
                return _ew._apply_broadcasting(function, *((other, self) if reflected else (self, other)))
        if other.__class__ in _PLAIN_OPERANDS:
            return unchecked(other, self) if reflected else unchecked(self, other)
        return checked(self, other)     # (NotImplemented for ``tensor(2) * [1]``: Python repeats the list)
    return method


for _name, _function, _public in (("add", _ew.Add, _ew.add), ("sub", _ew.Sub, _ew.sub), ("mul", _ew.Mul, _ew.mul),
                                  ("truediv", _ew.Div, _ew.div)):
    setattr(Tensor, f"__{_name}__", _arithmetic(_function, _public))
    if _name != "truediv":      # 2 / x is x.reciprocal() * 2, as in PyTorch (``__rtruediv__``)
        setattr(Tensor, f"__r{_name}__", _arithmetic(_function, _public, reflected=True))
Tensor.__div__ = Tensor.__truediv__
# PyTorch's 2 / x is x.reciprocal() * 2: its two roundings, and its saved tensor (the reciprocal, which no write into x
# reaches)
Tensor.__rtruediv__ = Tensor.__rdiv__ = _operator(lambda self, other: _ew.mul(_ew.reciprocal(self), other))


# ** @ % // & | ^ << >> and their reflections (ops/bitwise.py, ops/division.py), as PyTorch defines them
for _name, _op in (("pow", _ew.pow), ("matmul", _linalg.matmul), ("mod", _division.remainder),
                   ("floordiv", _division.floor_divide), ("and", _bitwise.bitwise_and), ("or", _bitwise.bitwise_or),
                   ("xor", _bitwise.bitwise_xor), ("lshift", _bitwise.bitwise_left_shift),
                   ("rshift", _bitwise.bitwise_right_shift)):
    setattr(Tensor, f"__{_name}__", _operator(_op))
    setattr(Tensor, f"__r{_name}__", _operator(_op, reflected=True))
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    setattr(Tensor, f"__{_name}__", _operator(getattr(_ew, _name)))
# += -= ... call the tensor's in-place method (a subclass's own, if it has one); PyTorch has no @=
for _name, _method in (("iadd", "add_"), ("isub", "sub_"), ("imul", "mul_"), ("itruediv", "div_"), ("idiv", "div_"),
                       ("ipow", "pow_"), ("imod", "remainder_"), ("ifloordiv", "floor_divide_"),
                       ("iand", "bitwise_and_"), ("ior", "bitwise_or_"), ("ixor", "bitwise_xor_"),
                       ("ilshift", "bitwise_left_shift_"), ("irshift", "bitwise_right_shift_")):
    setattr(Tensor, f"__{_name}__", _operator(lambda self, other, _method=_method: getattr(self, _method)(other)))

# Methods defined in ops/, next to their Functions: Tensor.name(self, ...) == mg.name(tensor, ...).
_METHODS = {
    _ew: ["add", "sub", "mul", "div", "pow", "neg", "abs", "exp", "log", "sqrt", "rsqrt", "square", "tanh",
          "sigmoid", "relu", "sin", "cos", "clamp", "maximum", "minimum", "masked_fill", "eq", "ne", "lt",
          "le", "gt", "ge", "logical_not", "logical_and", "logical_or", "isnan", "isfinite", "log1p", "expm1", "log2",
          "log10", "reciprocal", "erf", "sign", "floor", "ceil", "trunc", "fix", "round", "frac", "atan2",
          "arctan2", "clamp_min", "clamp_max", "less", "less_equal", "greater", "greater_equal", "not_equal",
          "logical_xor", "isinf", "isclose", "allclose", "equal"],
    _reduce: ["sum", "sum_to_size", "mean", "var", "std", "max", "min", "amax", "amin", "argmax", "argmin", "logsumexp",
              "all", "any", "cumsum", "cumprod", "norm"],
    _shape: ["reshape", "view", "flatten", "transpose", "permute", "unsqueeze", "squeeze", "expand",
             "expand_as", "repeat", "split", "chunk", "tril", "triu", "view_as", "reshape_as",
             "unbind", "select", "as_strided", "narrow", "swapaxes", "swapdims", "movedim", "moveaxis", "roll", "flip", "fliplr", "flipud",
             "diag", "diagonal", "diag_embed", "repeat_interleave", "unfold"],
    _linalg: ["matmul", "bmm", "outer", "ger"],
    _index: ["gather", "scatter", "scatter_add", "index_select", "masked_select", "nonzero", "argwhere"],
    _sort: ["sort", "argsort", "topk"],
    _inplace: _inplace.METHODS,
    _complex: ["conj", "conj_physical", "resolve_conj", "is_conj", "angle"],
    _layout: _layout.METHODS,
    _random: ["bernoulli", "multinomial"],
    _activation: ["prelu", "hardshrink"],
    _products: _products.METHODS,
    _linalg_legacy: _linalg_legacy.METHODS,
    _special: _special.METHODS,
    _spectral: _spectral.METHODS,
    _trig: _trig.METHODS,
    _ew_more: _ew_more.METHODS,
    _floats: _floats.METHODS,
    _division: _division.METHODS,
    _bitwise: _bitwise.METHODS,
    _order_stats: _order_stats.METHODS,
    _cumulative: _cumulative.METHODS,
    _reduce_more: _reduce_more.METHODS,
    _inplace_more: _inplace_more.METHODS,
}
for _module, _names in _METHODS.items():
    for _name in _names:
        _function = getattr(_module, _name)
        if getattr(_function, "checks_only_self", False):   # x.tanh(): x is a Tensor, nothing left to check
            _function = _function.__wrapped__
        setattr(Tensor, _name, _function)
Tensor.clip = Tensor.clamp
from .ops import gamma as _gamma  # noqa: E402
for _name, _function in _gamma.METHODS.items():   # lgamma, digamma, polygamma (order first), mvlgamma, in place
    setattr(Tensor, _name, _function)

# The indexing, shape, creation and counting ops of the op-database work list their methods themselves; bound
# after the table above, whose in-place methods some of them extend (index_add_ on 0-d tensors, uniform_'s checks).
from .ops import shape_more as _shape_more  # noqa: E402
from .ops import index_more as _index_more  # noqa: E402
from .ops import scatter_reduce as _scatter_reduce  # noqa: E402
from .ops import counting as _counting  # noqa: E402
from . import creation_more as _creation_more  # noqa: E402
for _module in (_shape_more, _index_more, _scatter_reduce, _counting, _creation_more):
    for _name in _module.METHODS:
        _function = getattr(_module, _name)
        setattr(Tensor, _name, _function.__wrapped__ if getattr(_function, "checks_only_self", False) else _function)


# --------------------------------------------------------------------------- legacy tensor types
class LegacyTensorType(type):
    """The metaclass of ``FloatTensor``, ``LongTensor``, ...: calling one builds a ``Tensor`` of its dtype with
    the legacy constructor's forms, and ``isinstance(t, FloatTensor)`` asks whether ``t`` is a float32 tensor
    (every tensor stays an instance of ``Tensor`` itself, as in PyTorch)."""

    def __call__(cls, data=_NO_DATA, *sizes, device=None):
        check_device(device)
        return Tensor(legacy_array(data, sizes, cls.dtype, cls.__name__))

    def __instancecheck__(cls, instance):
        return isinstance(instance, Tensor) and instance.dtype == cls.dtype

    def __repr__(cls):
        return f"<class 'minigrad.{cls.__name__}'>"


def _legacy_type(dtype):
    name = type_name(dtype)[len("minigrad."):]
    return LegacyTensorType(name, (), {"dtype": np.dtype(dtype), "__module__": "minigrad",
                                      "__doc__": f"Legacy constructor and type test for {np.dtype(dtype)} tensors."})


FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor, BoolTensor = (
    _legacy_type(dtype) for dtype in (np.float32, np.float64, np.float16, np.int64, np.int32, np.int16, np.int8,
                                      np.uint8, np.bool_))
LEGACY_TYPES = {t.__name__: t for t in (FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor, ShortTensor,
                                        CharTensor, ByteTensor, BoolTensor)}


def legacy_dtype(name):
    """The dtype of a legacy type name: ``'minigrad.FloatTensor'`` (or ``'torch.FloatTensor'``) is float32."""
    short = name.rpartition(".")[2]
    if short not in LEGACY_TYPES:
        raise ValueError(f"invalid type: '{name}' (expected one of {', '.join(LEGACY_TYPES)})")
    return LEGACY_TYPES[short].dtype


def set_default_tensor_type(t):
    """PyTorch's deprecated ``set_default_tensor_type(torch.DoubleTensor)`` (or its name as a string):
    ``set_default_dtype`` of that legacy type's dtype, with PyTorch's deprecation warning."""
    import warnings
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.", UserWarning,
                  stacklevel=2)
    if isinstance(t, str):
        if ".cuda." in t:
            raise TypeError(f"type {t} not available. Torch not compiled with CUDA enabled.")
        dtype = legacy_dtype(t)
    elif isinstance(t, LegacyTensorType):
        dtype = t.dtype
    else:
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    if dtype.kind != "f" and dtype != dtypes.bfloat16:
        raise TypeError("only floating-point types are supported as the default type")
    dtypes.set_default_dtype(dtype)


def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_nonzero(input):
    """The truth of a one-element tensor (PyTorch's error for none or several elements)."""
    if _checked_input(input, "is_nonzero")._data.size == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    return bool(input)


def _checked_input(input, fname):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input


def is_floating_point(input):
    return _checked_input(input, "is_floating_point").is_floating_point()


def is_complex(input):
    return _checked_input(input, "is_complex").is_complex()


# --------------------------------------------------------------------------- methods of issue 28's libraries
Tensor.split = _shape.split_method   # Tensor.split(split_size, dim) names its argument differently from torch.split

from .sparse import coo as _sparse_coo  # noqa: E402  (to_sparse, to_dense and the sparse-only accessors' errors)
for _name, _function in _sparse_coo.DENSE_METHODS.items():
    setattr(Tensor, _name, _function)
from .sparse import compressed as _sparse_compressed  # noqa: E402  (to_sparse_csr, ..., crow_indices' errors)
for _name, _function in _sparse_compressed.DENSE_METHODS.items():
    setattr(Tensor, _name, _function)
