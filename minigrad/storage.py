"""Storages (``Tensor.untyped_storage()``, ``Tensor.storage()``, ``minigrad.UntypedStorage``): the memory a tensor
and its views share, seen as bytes or as elements; PyTorch's legacy classes (``FloatStorage``, ``LongStorage``...,
which ``Tensor.storage_type()`` returns) make typed storages of their dtype.

A minigrad tensor's memory is a NumPy array's; its storage is the array that owns that memory (the end of the
``.base`` chain: ``autograd.version.storage_of``). Two tensors share memory exactly when their storages have the same
``data_ptr()``, which is what programs check. Reads and writes go to the memory itself. NumPy cannot resize memory
it does not own in place, so ``resize_`` to another size is refused (PyTorch's error for a storage that is not
resizable), and so is pickling a storage on its own (save the tensor).
"""
import warnings

import numpy as np

from . import dtypes
from .autograd.version import bump, storage_of
from .device import device as _device
from .dtypes import scalar_type_name
from .tensor import Tensor

__all__ = ["UntypedStorage", "TypedStorage", "is_storage", "DoubleStorage", "FloatStorage", "HalfStorage",
           "BFloat16Storage", "LongStorage", "IntStorage", "ShortStorage", "CharStorage", "ByteStorage", "BoolStorage",
           "ComplexDoubleStorage", "ComplexFloatStorage"]


class _Storage:
    """What both kinds share: the owning array ``_owner`` and a flat view ``_flat`` of its memory."""

    def __init__(self, owner, flat):
        self._owner, self._flat = owner, flat

    @classmethod
    def _over(cls, owner, flat):
        """A storage of this kind over ``flat``, a view of the memory ``owner`` owns (no new memory)."""
        storage = cls.__new__(cls)
        _Storage.__init__(storage, owner, flat)
        return storage

    def data_ptr(self):
        """The address of the storage's first byte."""
        return self._owner.__array_interface__["data"][0]

    def nbytes(self):
        return self._flat.nbytes

    def __len__(self):
        return self._flat.size

    def size(self):
        return self._flat.size

    def element_size(self):
        return self._flat.itemsize

    @property
    def device(self):
        return _device("cpu")

    @property
    def is_cuda(self):
        return False

    @property
    def is_sparse(self):
        return False

    def is_shared(self):
        return False

    def is_pinned(self, device="cuda"):
        return False

    def get_device(self):
        return -1

    def cpu(self):
        return self

    def share_memory_(self):
        return self

    def resizable(self):
        return False

    def resize_(self, size):
        if size != len(self):
            raise RuntimeError("Trying to resize storage that is not resizable")
        return self

    def tolist(self):
        return self._flat.tolist()

    def __iter__(self):
        return iter(self.tolist())

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)._over(self._owner, self._flat[index])
        return self._flat[index].item()

    def __setitem__(self, index, value):
        self._flat[index] = value
        bump(self._owner)

    def fill_(self, value):
        self._flat[...] = value
        bump(self._owner)
        return self

    def copy_(self, source, non_blocking=False):
        if len(source) != len(self):
            raise RuntimeError(f"size mismatch: cannot copy a storage of {len(source)} into one of {len(self)}")
        self._flat[...] = np.asarray(source._flat).view(self._flat.dtype)
        bump(self._owner)
        return self

    def __reduce__(self):
        raise RuntimeError("minigrad cannot pickle a storage on its own: save the tensor (minigrad.save) instead")


def _bytes_of(owner):
    """A flat uint8 view of the memory of ``owner`` (an array that owns its memory), in memory order."""
    if not (owner.flags.c_contiguous or owner.flags.f_contiguous):
        raise RuntimeError("this tensor's memory is not one contiguous block NumPy owns, so it has no storage view")
    return owner.reshape(-1, order="A").view(np.uint8)


class UntypedStorage(_Storage):
    """A tensor's memory as bytes (``torch.UntypedStorage``). ``UntypedStorage(n)`` is n fresh zero bytes."""

    def __init__(self, size=0, *, device=None):
        if isinstance(size, (list, tuple)):
            owner = np.array(size, dtype=np.uint8)
        else:
            owner = np.zeros(int(size), dtype=np.uint8)
        super().__init__(owner, owner)

    def untyped(self):
        return self

    def clone(self):
        return UntypedStorage(self._flat.tolist())

    def type(self):
        return "minigrad.storage.UntypedStorage"

    def __repr__(self):
        lines = "\n".join(f" {b}" for b in self._flat.tolist())
        return f"{lines}\n[minigrad.storage.UntypedStorage(device=cpu) of size {len(self)}]"


class TypedStorage(_Storage):
    """A tensor's memory as elements of its dtype (``Tensor.storage()``; PyTorch deprecates it for
    ``untyped_storage()``)."""

    def __init__(self, *args, dtype=None, device=None):
        dtype = np.dtype(np.float32 if dtype is None else dtype)
        size = args[0] if args else 0
        owner = np.array(size, dtype=dtype).reshape(-1) if isinstance(size, (list, tuple)) else np.zeros(size, dtype)
        super().__init__(owner, owner)

    @property
    def dtype(self):
        return self._flat.dtype

    def untyped(self):
        return UntypedStorage._over(self._owner, self._flat.view(np.uint8))

    _untyped_storage = property(untyped)

    def clone(self):
        return TypedStorage(self._flat.tolist(), dtype=self.dtype)

    def type(self):
        return f"minigrad.{scalar_type_name(self.dtype)}Storage"

    def __repr__(self):
        lines = "\n".join(f" {v}" for v in self._flat.tolist())
        return f"{lines}\n[minigrad.storage.TypedStorage(dtype={self.dtype}, device=cpu) of size {len(self)}]"


class _LegacyStorageMeta(type):
    """The metaclass of the legacy storage classes: ``isinstance(s, FloatStorage)`` asks whether ``s`` is a
    TypedStorage of float32, as in PyTorch."""

    def __instancecheck__(cls, instance):
        return isinstance(instance, TypedStorage) and instance.dtype == cls.dtype


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageMeta):
    """``FloatStorage(n)``, ``LongStorage([1, 2])``...: a TypedStorage of the class's dtype (PyTorch's legacy
    storage classes, which ``Tensor.storage_type()`` returns)."""

    dtype = None

    def __new__(cls, *args, device=None):
        return TypedStorage(*args, dtype=cls.dtype, device=device)


_LEGACY = {}     # dtype -> its legacy storage class
for _dtype in (np.float64, np.float32, np.float16, dtypes.bfloat16, np.int64, np.int32, np.int16, np.int8, np.uint8,
               np.bool_, np.complex128, np.complex64):
    _dtype = np.dtype(_dtype)
    _name = f"{scalar_type_name(_dtype)}Storage"
    _LEGACY[_dtype] = globals()[_name] = _LegacyStorageMeta(_name, (_LegacyStorage,), {
        "dtype": _dtype, "__module__": "minigrad", "__qualname__": _name,
        "__doc__": f"A TypedStorage of {_dtype.name} (PyTorch's legacy ``torch.{_name}``)."})
del _dtype, _name


def _owner_of(tensor):
    return storage_of(tensor._data)


def untyped_storage(self):
    """The memory this tensor (and every view of it) lives in, as bytes."""
    owner = _owner_of(self)
    return UntypedStorage._over(owner, _bytes_of(owner))


_TYPED_STORAGE_WARNING = ("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be "
                          "the only storage class. This should only matter to you if you are using storages directly. "
                          " To access UntypedStorage directly, use tensor.untyped_storage() instead of "
                          "tensor.storage()")


def storage(self):
    """The memory this tensor lives in, as elements of its dtype (PyTorch's deprecation warning included)."""
    warnings.warn(_TYPED_STORAGE_WARNING, UserWarning, stacklevel=2)
    owner = _owner_of(self)
    return TypedStorage._over(owner, _bytes_of(owner).view(self._data.dtype))


def storage_type(self):
    """The legacy storage class of this tensor's dtype (``minigrad.FloatStorage`` for float32; None for a dtype that
    has none), with PyTorch's deprecation warning for typed storages."""
    warnings.warn(_TYPED_STORAGE_WARNING, UserWarning, stacklevel=2)
    return _LEGACY.get(self._data.dtype)


def is_storage(obj):
    """Whether ``obj`` is a storage (``torch.is_storage``)."""
    return isinstance(obj, _Storage)


Tensor.untyped_storage = untyped_storage
Tensor.storage = storage
Tensor.storage_type = storage_type
