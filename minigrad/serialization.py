"""Saving and loading without running code: ``save``/``load``, PyTorch checkpoints, safetensors.

``pickle`` runs code while it reads (any callable a file names is called), so nothing here unpickles
freely:

* ``save(obj, f)`` writes a zip archive: ``minigrad/structure.json`` describes the nested containers,
  numbers and strings, and each array is a raw ``minigrad/arrays/<i>.npy`` written and read with
  ``allow_pickle=False``. Reading it parses JSON and ``.npy`` headers only.
* ``load(f)`` also reads what PyTorch's ``torch.save`` writes (the zip format: ``<name>/data.pkl``, the
  storages in ``<name>/data/<key>``, ``<name>/byteorder``) without importing torch. Its pickle goes
  through ``_TorchUnpickler``, which admits only what a ``weights_only`` checkpoint holds (tensor
  rebuild records, storage and dtype names, ``OrderedDict``, ``torch.Size``, ``set``, ``complex`` and
  plain containers and scalars) and refuses any other global before creating anything from it. The
  records it builds are inert placeholders; tensors are made from them only after the pickle is read.
* ``load`` treats the file as untrusted: it refuses anything but a regular file (a directory, FIFO or
  device) before opening it, refuses a file, and a total of entries to read, larger than ``max_bytes``
  (``MAX_LOAD_BYTES`` unless given), checks PyTorch's pickle stream opcode by opcode against the few
  opcodes ``torch.save`` writes before running it, and checks every entry's kind, dtype and size
  before it reads any array data or builds any tensor.
* ``save_safetensors``/``load_safetensors`` go through the ``safetensors`` package (the optional extra
  ``minigrad[safetensors]``).
"""
import errno
import io
import json
import math
import os
import pickle
import pickletools
import stat
import zipfile
from collections import OrderedDict

import numpy as np

from .dtypes import bfloat16, is_differentiable
from .tensor import Tensor

__all__ = ["save", "load", "save_safetensors", "load_safetensors", "MAX_LOAD_BYTES"]

#: ``load``'s default limit, in bytes, on the file's size and on the total size of the entries it reads
#: (the arrays' data, the structure, PyTorch's pickle). Set it (``minigrad.serialization.MAX_LOAD_BYTES =
#: 2**40``) or pass ``load(f, max_bytes=...)``; ``math.inf`` lifts it. minigrad's own name: PyTorch has none.
MAX_LOAD_BYTES = 16 * 2 ** 30

_STRUCTURE = "minigrad/structure.json"
_FORMAT = "minigrad"
_FORMAT_VERSION = 1
_NUMERIC_KINDS = "biufc"  # bool, signed and unsigned integers, floating point, complex


def _array_name(index):
    return f"minigrad/arrays/{index}.npy"


def _open(f, mode):
    """``(file object, whether we opened it)`` for a path or an already open binary file."""
    if isinstance(f, (str, os.PathLike)):
        return open(f, mode), True
    if not hasattr(f, "write" if mode == "wb" else "read"):
        raise TypeError(f"f must be a path (str or os.PathLike) or a binary file object, got {type(f).__name__}")
    return f, False


# =========================================================================== minigrad's own format: writing
class _Encoder:
    """Turns a nested object into a JSON-able description plus the list of arrays it refers to.

    Every node but ``None``, ``bool``, ``int``, ``float`` and ``str`` (stored as JSON's own values) is
    a ``{"type": ...}`` object. Arrays are numbered once per ndarray object, so a tensor or array
    that occurs twice, or two tensors holding the same array (tied weights), share one file and load
    sharing one array.
    """

    def __init__(self):
        self.arrays = []
        self.index_of = {}  # id(ndarray) -> its number in self.arrays
        self.open_containers = set()

    def array(self, array, path):
        if array.dtype.kind not in _NUMERIC_KINDS and array.dtype != bfloat16:
            raise TypeError(f"mg.save cannot save an array of dtype {array.dtype} at {path}: only bool, integer, "
                            "floating-point and complex arrays can be saved")
        index = self.index_of.get(id(array))
        if index is None:
            index = self.index_of[id(array)] = len(self.arrays)
            self.arrays.append(array)
        return index

    def encode(self, obj, path):
        from .nn.module import Parameter  # nn builds on this package's top level

        if isinstance(obj, Tensor):
            kind = "parameter" if isinstance(obj, Parameter) else "tensor"
            return {"type": kind, "array": self.array(obj._data, path), "requires_grad": obj.requires_grad}
        if isinstance(obj, np.ndarray):
            return {"type": "ndarray", "array": self.array(obj, path)}
        if isinstance(obj, np.generic):
            return {"type": "numpy_scalar", "array": self.array(np.asarray(obj), path)}
        if obj is None:
            return None
        for plain in (bool, int, float, str):  # subclasses (IntEnum, ...) are saved as their plain value
            if isinstance(obj, plain):
                return plain(obj)
        if isinstance(obj, complex):
            return {"type": "complex", "real": obj.real, "imag": obj.imag}
        if isinstance(obj, (dict, list, tuple)):
            if id(obj) in self.open_containers:
                raise TypeError(f"mg.save cannot save {path}: it contains itself")
            self.open_containers.add(id(obj))
            try:
                return self._container(obj, path)
            finally:
                self.open_containers.discard(id(obj))
        hint = " (save its state_dict() instead)" if hasattr(obj, "state_dict") else ""
        raise TypeError(f"mg.save cannot save an object of type {type(obj).__name__} at {path}{hint}: only "
                        "tensors, ndarrays, numbers (int, float, complex, bool), None, strings and dicts, "
                        "OrderedDicts, lists and tuples of these can be saved")

    def _container(self, obj, path):
        if isinstance(obj, dict):
            items = []
            for key, value in obj.items():
                if key is not None and not isinstance(key, (bool, int, float, str, tuple)):
                    raise TypeError(f"mg.save cannot save the key {key!r} of type {type(key).__name__} in {path}: "
                                    "keys must be strings, numbers, None or tuples of these")
                items.append([self.encode(key, f"{path} key {key!r}"), self.encode(value, f"{path}[{key!r}]")])
            return {"type": "ordered_dict" if isinstance(obj, OrderedDict) else "dict", "items": items}
        return {"type": "tuple" if isinstance(obj, tuple) else "list",
                "items": [self.encode(value, f"{path}[{i}]") for i, value in enumerate(obj)]}


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True):
    """Write ``obj`` (a state_dict, an optimizer state, nested containers of tensors...) to ``f``.

    ``f`` is a path (str or os.PathLike) or a binary file object. ``obj`` may nest dicts, OrderedDicts,
    lists and tuples of Tensors (Parameters stay Parameters, ``requires_grad`` is kept), ndarrays and
    NumPy scalars of numeric dtypes, ints, floats, complex numbers, bools, None and strings; anything
    else raises TypeError naming where it is (``obj['layers'][2]``) before ``f`` is touched. The file
    is a zip archive of JSON and ``.npy`` files that cannot run code when read; ``torch.load`` does not
    read it. PyTorch's pickle arguments are accepted and ignored.
    """
    encoder = _Encoder()
    structure = {"format": _FORMAT, "version": _FORMAT_VERSION, "root": encoder.encode(obj, "obj")}
    # .npy has no bfloat16: those arrays are stored as their uint16 bit patterns, listed here
    bfloat16_arrays = [i for i, array in enumerate(encoder.arrays) if array.dtype == bfloat16]
    if bfloat16_arrays:
        structure["bfloat16_arrays"] = bfloat16_arrays
    out, opened = _open(f, "wb")
    try:
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
            archive.writestr(_STRUCTURE, json.dumps(structure))
            for index, array in enumerate(encoder.arrays):
                with archive.open(_array_name(index), "w", force_zip64=True) as entry:
                    stored = array.view(np.uint16) if array.dtype == bfloat16 else array
                    np.lib.format.write_array(entry, stored, allow_pickle=False)
    finally:
        if opened:
            out.close()


# =========================================================================== minigrad's own format: reading
def _bad_archive(message):
    return RuntimeError(f"mg.load: not a valid minigrad archive: {message}")


class _Budget:
    """The bytes ``load`` may still read: each entry's size is charged before it is read."""

    def __init__(self, max_bytes):
        self.max_bytes, self.used = max_bytes, 0

    def charge(self, nbytes, what):
        self.used += nbytes
        if self.used > self.max_bytes:
            raise ValueError(f"mg.load: reading {what} would bring the data read to {self.used} bytes, more than "
                             f"max_bytes={self.max_bytes} (pass a larger max_bytes, or set "
                             "minigrad.serialization.MAX_LOAD_BYTES)")


def _entry_size(archive, name):
    try:
        return archive.getinfo(name).file_size
    except KeyError:
        raise _bad_archive(f"{name} is missing") from None


_NPY_HEADER_READERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}


class _Decoder:
    """Rebuilds the object ``_Encoder`` described in two passes: ``check`` walks the whole description
    (node kinds, fields, array indices, each array's ``.npy`` header: numeric dtype, a size its entry
    holds, within the budget) without reading any array data; ``decode`` then builds, reading each array
    once."""

    _CONTAINERS = ("list", "tuple", "dict", "ordered_dict")

    def __init__(self, archive, budget, bfloat16_arrays=()):
        self.archive, self.budget = archive, budget
        self.bfloat16_arrays = set(bfloat16_arrays)   # indices of arrays stored as bfloat16 bit patterns (uint16)
        self.headers = {}  # array index -> (shape, fortran_order, dtype), from check
        self.arrays = {}

    def check(self, node):
        if node is None or type(node) in (bool, int, float, str):
            return
        if not isinstance(node, dict) or not isinstance(node.get("type"), str):
            raise _bad_archive(f"unexpected node {node!r:.80}")
        kind = node["type"]
        if kind in ("tensor", "parameter", "ndarray", "numpy_scalar"):
            shape, _, dtype = self.check_array(node.get("array"))
            if kind == "numpy_scalar" and shape != ():
                raise _bad_archive(f"a NumPy scalar stored with shape {list(shape)}")
            if kind in ("tensor", "parameter") and node.get("requires_grad") is True and not is_differentiable(dtype):
                raise _bad_archive(f"a {dtype} tensor that requires grad")
        elif kind == "complex":
            if not all(type(node.get(part)) in (int, float) for part in ("real", "imag")):
                raise _bad_archive(f"a complex number {node!r:.80}")
        elif kind in self._CONTAINERS:
            items = node.get("items")
            if not isinstance(items, list):
                raise _bad_archive(f"a {kind} node without items")
            for item in items:
                if kind in ("dict", "ordered_dict"):
                    if not isinstance(item, list) or len(item) != 2:
                        raise _bad_archive(f"a dict item {item!r:.80}")
                    self.check_key(item[0])
                    self.check(item[1])
                else:
                    self.check(item)
        else:
            raise _bad_archive(f"unknown node type {kind!r}")

    def check_key(self, node):
        """Dict keys are plain values or tuples of them (what ``save`` writes), never arrays or lists."""
        if isinstance(node, dict) and node.get("type") == "tuple" and isinstance(node.get("items"), list):
            for item in node["items"]:
                self.check_key(item)
        elif isinstance(node, dict) and node.get("type") == "complex":
            self.check(node)
        elif not (node is None or type(node) in (bool, int, float, str)):
            raise _bad_archive(f"a dict key {node!r:.80}")

    def check_array(self, index):
        if type(index) is not int or index < 0:
            raise _bad_archive(f"array index {index!r}")
        if index not in self.headers:
            name = _array_name(index)
            stored = _entry_size(self.archive, name)
            self.budget.charge(stored, name)
            with self.archive.open(name) as entry:
                try:
                    version = np.lib.format.read_magic(entry)
                    read_header = _NPY_HEADER_READERS.get(version)
                    if read_header is None:
                        raise ValueError(f"the .npy format version {version} is not one mg.save writes")
                    header = read_header(entry, max_header_size=10_000)
                except ValueError as err:
                    raise _bad_archive(f"{name}: {err}") from None
                header_bytes = entry.tell()
            shape, _, dtype = header
            if dtype.kind not in _NUMERIC_KINDS or dtype.hasobject:
                raise _bad_archive(f"{name} has the non-numeric dtype {dtype}")
            if stored - header_bytes < math.prod(shape) * dtype.itemsize:
                raise _bad_archive(f"{name} declares shape {list(shape)} of {dtype}, more than its "
                                   f"{stored - header_bytes} bytes of data hold")
            if index in self.bfloat16_arrays:
                if dtype != np.uint16:
                    raise _bad_archive(f"{name} is listed as bfloat16 but holds {dtype}, not uint16 bit patterns")
                header = (shape, header[1], bfloat16)
            self.headers[index] = header
        return self.headers[index]

    def array(self, index):
        if index not in self.arrays:
            with self.archive.open(_array_name(index)) as entry:
                array = np.lib.format.read_array(entry, allow_pickle=False)
                self.arrays[index] = array.view(bfloat16) if index in self.bfloat16_arrays else array
        return self.arrays[index]

    def decode(self, node):
        """The object ``node`` describes (``check`` has vetted it)."""
        if node is None or type(node) in (bool, int, float, str):
            return node
        kind = node["type"]
        if kind in ("tensor", "parameter"):
            from .nn.module import Parameter

            tensor = Tensor(self.array(node["array"]))
            requires_grad = node.get("requires_grad") is True
            return Parameter(tensor, requires_grad) if kind == "parameter" else tensor.requires_grad_(requires_grad)
        if kind == "ndarray":
            return self.array(node["array"])
        if kind == "numpy_scalar":
            return self.array(node["array"])[()]
        if kind == "complex":
            return complex(node["real"], node["imag"])
        if kind in ("list", "tuple"):
            values = [self.decode(item) for item in node["items"]]
            return tuple(values) if kind == "tuple" else values
        result = OrderedDict() if kind == "ordered_dict" else {}
        for key, value in node["items"]:
            result[self.decode(key)] = self.decode(value)
        return result


def _load_minigrad(archive, budget):
    budget.charge(_entry_size(archive, _STRUCTURE), _STRUCTURE)
    try:
        structure = json.loads(archive.read(_STRUCTURE))
    except ValueError as err:
        raise _bad_archive(f"{_STRUCTURE}: {err}") from None
    if not isinstance(structure, dict) or structure.get("format") != _FORMAT:
        raise _bad_archive(f"{_STRUCTURE} does not describe a minigrad file")
    if structure.get("version") != _FORMAT_VERSION:
        raise RuntimeError(f"mg.load: this minigrad file has format version {structure.get('version')!r}; "
                           f"this minigrad reads version {_FORMAT_VERSION}")
    bfloat16_arrays = structure.get("bfloat16_arrays", [])
    if not (isinstance(bfloat16_arrays, list) and all(type(i) is int and i >= 0 for i in bfloat16_arrays)):
        raise _bad_archive(f"bfloat16_arrays {bfloat16_arrays!r:.80}")
    decoder = _Decoder(archive, budget, bfloat16_arrays)
    decoder.check(structure.get("root"))
    return decoder.decode(structure.get("root"))


# =========================================================================== PyTorch's zip format
def _refuse(message):
    return pickle.UnpicklingError(f"mg.load refused the checkpoint: {message}. minigrad reads only the weights-only "
                                  "subset of PyTorch checkpoints: tensors, Parameters, state_dicts, optimizer states "
                                  "and plain containers of these, numbers and strings")


class _Inert:
    """Base of every object the unpickler can hand to pickle: pickle's BUILD opcode may not set its state."""

    __slots__ = ()

    def __setstate__(self, state):
        raise _refuse(f"the pickle sets the state of {self!r}")


class _Global(_Inert):
    """An admitted callable global (``collections.OrderedDict``, ``torch._utils._rebuild_tensor_v2`` ...)."""

    __slots__ = ("name", "function")

    def __init__(self, name, function):
        self.name, self.function = name, function

    def __call__(self, *args):
        return self.function(*args)

    def __repr__(self):
        return self.name


class _Marker(_Inert):
    """A non-callable global that names a dtype: ``torch.FloatStorage`` (``storage=True``) or ``torch.float32``."""

    __slots__ = ("name", "dtype", "storage")

    def __init__(self, name, dtype, storage):
        self.name, self.dtype, self.storage = name, dtype, storage

    def __repr__(self):
        return self.name


class _Storage(_Inert):
    """One storage of the checkpoint: the ``data/<key>`` entry read as ``numel`` elements of ``dtype``."""

    __slots__ = ("key", "dtype", "numel", "array")

    def __init__(self, key, dtype, numel):
        self.key, self.dtype, self.numel, self.array = key, dtype, numel, None

    def __repr__(self):
        return f"storage {self.key!r}"


class _TensorRecord(_Inert):
    """What ``_rebuild_tensor_v2`` was called with; made into a Tensor after the whole pickle is read."""

    __slots__ = ("storage", "offset", "size", "stride", "requires_grad", "parameter")

    def __init__(self, storage, offset, size, stride, requires_grad, parameter=False):
        self.storage, self.offset, self.size, self.stride = storage, offset, size, stride
        self.requires_grad, self.parameter = requires_grad, parameter

    def __repr__(self):
        return f"tensor of size {list(self.size)}"


def _is_index(value):
    return type(value) is int and value >= 0


def _index_tuple(value, what):
    if not isinstance(value, tuple) or not all(_is_index(v) for v in value):
        raise _refuse(f"{what} must be a tuple of non-negative ints, got {value!r}")
    return value


def _no_hooks(backward_hooks):
    if not isinstance(backward_hooks, OrderedDict) or backward_hooks:
        raise _refuse(f"a tensor with backward hooks {backward_hooks!r}")


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    """``torch._utils._rebuild_tensor_v2``: the tensor ``size``/``stride`` elements into ``storage``."""
    if not isinstance(storage, _Storage):
        raise _refuse(f"a tensor rebuilt from {storage!r} instead of a storage")
    if not _is_index(storage_offset):
        raise _refuse(f"a tensor with storage offset {storage_offset!r}")
    size, stride = _index_tuple(size, "a tensor's size"), _index_tuple(stride, "a tensor's stride")
    if len(size) != len(stride) or type(requires_grad) is not bool:
        raise _refuse(f"a tensor with size {size}, stride {stride}, requires_grad {requires_grad!r}")
    _no_hooks(backward_hooks)
    if metadata:
        raise _refuse(f"a tensor with metadata {metadata!r}")
    if 0 not in size:  # the last element read: offset + sum((size_d - 1) * stride_d) must be in the storage
        last = storage_offset + sum((n - 1) * s for n, s in zip(size, stride))
        if last >= storage.numel:
            raise _refuse(f"a tensor of size {list(size)}, stride {list(stride)} and offset {storage_offset} "
                          f"reaching past its storage of {storage.numel} elements")
    return _TensorRecord(storage, storage_offset, size, stride, requires_grad)


def _rebuild_parameter(data, requires_grad, backward_hooks):
    """``torch._utils._rebuild_parameter``: a saved ``nn.Parameter``."""
    if not isinstance(data, _TensorRecord) or type(requires_grad) is not bool:
        raise _refuse(f"a parameter rebuilt from {data!r}, requires_grad {requires_grad!r}")
    _no_hooks(backward_hooks)
    return _TensorRecord(data.storage, data.offset, data.size, data.stride, requires_grad, parameter=True)


def _torch_size(sizes=()):
    return _index_tuple(tuple(sizes) if isinstance(sizes, (tuple, list)) else sizes, "torch.Size")


def _complex(real=0.0, imag=0.0):
    if not all(type(v) in (int, float) for v in (real, imag)):
        raise _refuse(f"complex({real!r}, {imag!r})")
    return complex(real, imag)


def _set(items=()):
    if not isinstance(items, (list, tuple)):
        raise _refuse(f"set({items!r})")
    return set(items)


def _ordered_dict(items=()):
    if not isinstance(items, (list, tuple, dict)):
        raise _refuse(f"OrderedDict({items!r})")
    return OrderedDict(items)


# PyTorch's dtype names -> NumPy dtypes; each has a torch.<Name>Storage class and a torch.<name> global.
_TORCH_DTYPES = {
    "float64": ("DoubleStorage", np.float64), "float32": ("FloatStorage", np.float32),
    "float16": ("HalfStorage", np.float16), "bfloat16": ("BFloat16Storage", bfloat16), "int64": ("LongStorage", np.int64), "int32": ("IntStorage", np.int32),
    "int16": ("ShortStorage", np.int16), "int8": ("CharStorage", np.int8), "uint8": ("ByteStorage", np.uint8),
    "bool": ("BoolStorage", np.bool_), "complex64": ("ComplexFloatStorage", np.complex64),
    "complex128": ("ComplexDoubleStorage", np.complex128),
}
_DTYPE_ALIASES = {"double": "float64", "float": "float32", "half": "float16", "long": "int64", "int": "int32",
                  "short": "int16", "cfloat": "complex64", "cdouble": "complex128"}


def _admitted_globals():
    admitted = {
        ("collections", "OrderedDict"): _Global("collections.OrderedDict", _ordered_dict),
        ("torch._utils", "_rebuild_tensor_v2"): _Global("torch._utils._rebuild_tensor_v2", _rebuild_tensor_v2),
        ("torch._utils", "_rebuild_parameter"): _Global("torch._utils._rebuild_parameter", _rebuild_parameter),
        ("torch", "Size"): _Global("torch.Size", _torch_size),
        ("builtins", "set"): _Global("builtins.set", _set),
        ("builtins", "complex"): _Global("builtins.complex", _complex),
        ("torch", "UntypedStorage"): _Marker("torch.UntypedStorage", np.dtype(np.uint8), storage=True),
    }
    for name, (storage_name, dtype) in _TORCH_DTYPES.items():
        admitted["torch", storage_name] = _Marker(f"torch.{storage_name}", np.dtype(dtype), storage=True)
        admitted["torch", name] = _Marker(f"torch.{name}", np.dtype(dtype), storage=False)
    for alias, name in _DTYPE_ALIASES.items():
        admitted["torch", alias] = admitted["torch", name]
    return admitted


_ADMITTED = _admitted_globals()


def _admitted_global(module, name):
    """What the pickle's global ``module.name`` stands for, if admitted; else refuse the checkpoint."""
    module = "builtins" if module == "__builtin__" else module  # protocol 2 spells it the Python 2 way
    found = _ADMITTED.get((module, name))
    if found is None:
        raise _refuse(f"it names the global {module}.{name}, which is not admitted")
    return found


class _TorchUnpickler(pickle.Unpickler):
    """Reads ``data.pkl`` of a ``torch.save`` archive, admitting only ``_ADMITTED`` globals and storages."""

    def __init__(self, file, storage_names, map_location):
        super().__init__(file)
        self.storage_names = storage_names  # the archive's data/<key> entries by key
        self.map_location = map_location
        self.storages = {}

    def find_class(self, module, name):
        return _admitted_global(module, name)

    def persistent_load(self, pid):
        """``('storage', storage_type, key, location, numel)``: the storage in ``data/<key>``."""
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise _refuse(f"the persistent id {pid!r} is not a storage record")
        _, storage_type, key, location, numel = pid
        if not (isinstance(storage_type, _Marker) and storage_type.storage and isinstance(key, str)
                and isinstance(location, str) and _is_index(numel)):
            raise _refuse(f"the storage record {pid!r}")
        if key not in self.storage_names:
            raise _refuse(f"the storage {key!r} is not in the archive")
        _check_location(location, self.map_location)
        storage = self.storages.get(key)
        if storage is None:
            storage = self.storages[key] = _Storage(key, storage_type.dtype, numel)
        elif storage.dtype != storage_type.dtype or storage.numel != numel:
            raise _refuse(f"the storage {key!r} is read as two different types or sizes")
        return storage


def _is_cpu(device):
    return str(device).split(":")[0] == "cpu"


def _check_map_location(map_location):
    """PyTorch's ``map_location``: None, a device or its name, or a dict of locations; only the CPU here."""
    if map_location is None or isinstance(map_location, dict):
        targets = [] if map_location is None else map_location.values()
    elif callable(map_location):
        raise TypeError("mg.load: map_location as a function is not supported; minigrad loads everything onto "
                        "the CPU (pass map_location='cpu' or None)")
    else:
        targets = [map_location]
    for target in targets:
        if not _is_cpu(target):
            raise RuntimeError(f"mg.load: map_location={target!r}: minigrad runs on the CPU only; "
                               "use map_location='cpu'")


def _check_location(location, map_location):
    """A storage saved on ``location`` must end up on the CPU, by itself or through ``map_location``."""
    if _is_cpu(location) or (map_location is not None and not isinstance(map_location, dict)):
        return
    if isinstance(map_location, dict) and location in map_location:
        return
    raise RuntimeError(f"mg.load: the checkpoint holds tensors saved on the device '{location}', and minigrad "
                       "runs on the CPU only; pass map_location='cpu' to load them onto the CPU")


class _Materializer:
    """Turns what the unpickler built into plain objects and minigrad Tensors, checking every type.

    Tensors viewing one storage share one array (``np.ndarray`` views of it), as in PyTorch.
    """

    def __init__(self, archive, prefix, byteorder):
        self.archive, self.prefix, self.byteorder = archive, prefix, byteorder
        self.done, self.open = {}, set()

    def check_storages(self, storages, budget):
        """Before any storage is read: each entry holds its elements, and all of them fit in the budget."""
        for storage in storages:
            name = f"{self.prefix}data/{storage.key}"
            nbytes = storage.numel * storage.dtype.itemsize
            stored_bytes = self.archive.getinfo(name).file_size
            if stored_bytes < nbytes:
                raise _refuse(f"the storage {storage.key!r} holds {stored_bytes} bytes, fewer than its "
                              f"{storage.numel} elements of {storage.dtype} need")
            budget.charge(nbytes, name)

    def storage_array(self, storage):
        if storage.array is None:
            name = f"{self.prefix}data/{storage.key}"
            nbytes = storage.numel * storage.dtype.itemsize
            raw = bytearray(nbytes)  # read straight into one writable buffer, nothing past it
            with self.archive.open(name) as entry:
                if entry.readinto(raw) != nbytes:
                    raise _refuse(f"the storage {storage.key!r} ends early")
            stored = np.frombuffer(raw, dtype=storage.dtype.newbyteorder(self.byteorder))
            storage.array = stored if stored.dtype.isnative else stored.astype(storage.dtype)
        return storage.array

    def tensor(self, record):
        from .nn.module import Parameter

        base = self.storage_array(record.storage)
        itemsize = base.dtype.itemsize
        if 0 in record.size:
            array = np.empty(record.size, dtype=base.dtype)
        else:  # shape (*size), element [i] at base[offset + sum(i_d * stride_d)]
            array = np.ndarray(record.size, dtype=base.dtype, buffer=base, offset=record.offset * itemsize,
                               strides=tuple(s * itemsize for s in record.stride))
        if record.requires_grad and not is_differentiable(array.dtype):
            raise _refuse(f"a {array.dtype} tensor that requires grad")
        if record.parameter:
            return Parameter(Tensor(array), requires_grad=record.requires_grad)
        return Tensor(array, requires_grad=record.requires_grad)

    def check(self, root):
        """Refuse the first value that is not a plain value, container, dtype or tensor record, before
        ``convert`` builds anything (iterative: a deeply nested pickle cannot exhaust the stack)."""
        pending, seen = [root], set()
        while pending:
            obj = pending.pop()
            if obj is None or type(obj) in (bool, int, float, complex, str, bytes) or id(obj) in seen:
                continue
            seen.add(id(obj))
            if isinstance(obj, _TensorRecord) or (isinstance(obj, _Marker) and not obj.storage):
                continue
            if type(obj) in (list, tuple, set):
                pending.extend(obj)
            elif type(obj) in (dict, OrderedDict):
                pending.extend(obj.keys())
                pending.extend(obj.values())
                metadata = getattr(obj, "_metadata", None)
                if isinstance(metadata, dict):
                    pending.append(metadata)
            else:
                raise _refuse(f"it holds {obj!r} as a value")

    def convert(self, obj):
        if obj is None or type(obj) in (bool, int, float, complex, str, bytes):
            return obj
        key = id(obj)
        if key in self.done:
            return self.done[key]
        if key in self.open:
            raise _refuse("an object that contains itself")
        self.open.add(key)
        try:
            self.done[key] = result = self._convert(obj)
        finally:
            self.open.discard(key)
        return result

    def _convert(self, obj):
        if isinstance(obj, _TensorRecord):
            return self.tensor(obj)
        if isinstance(obj, _Marker) and not obj.storage:
            return obj.dtype
        if type(obj) in (list, tuple, set):
            return type(obj)(self.convert(v) for v in obj)
        if type(obj) in (dict, OrderedDict):
            result = type(obj)((self.convert(k), self.convert(v)) for k, v in obj.items())
            metadata = getattr(obj, "_metadata", None)  # a state_dict's per-module versions, kept as PyTorch does
            if isinstance(metadata, dict):
                result._metadata = self.convert(metadata)
            return result
        raise _refuse(f"it holds {obj!r} as a value")


# The opcodes torch.save writes (protocols 2 to 5) and nothing else: no INST/OBJ/NEWOBJ (instances of
# arbitrary classes), no EXT* (the copyreg registry), no out-of-band buffers, no text-protocol opcodes.
_ADMITTED_OPCODES = frozenset({
    "PROTO", "FRAME", "STOP", "MARK", "MEMOIZE", "BINPUT", "LONG_BINPUT", "BINGET", "LONG_BINGET",
    "GLOBAL", "STACK_GLOBAL", "REDUCE", "BUILD", "BINPERSID",
    "NONE", "NEWTRUE", "NEWFALSE", "BININT", "BININT1", "BININT2", "LONG1", "BINFLOAT",
    "SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "SHORT_BINBYTES", "BINBYTES", "BINBYTES8",
    "EMPTY_TUPLE", "TUPLE", "TUPLE1", "TUPLE2", "TUPLE3", "EMPTY_LIST", "APPEND", "APPENDS",
    "EMPTY_DICT", "SETITEM", "SETITEMS", "EMPTY_SET", "ADDITEMS",
})


_STRING_OPCODES = ("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8")
_MEMO_OPCODES = ("MEMOIZE", "BINPUT", "LONG_BINPUT")


def _check_opcodes(pickled):
    """Parse (never run) the pickle ``pickled`` and refuse it if it uses an opcode outside
    ``_ADMITTED_OPCODES`` or names a global outside ``_ADMITTED``: checked before the unpickler starts.

    ``GLOBAL`` carries its names; ``STACK_GLOBAL`` (protocol 4+) takes them from the two values pushed
    before it, which must be strings written there or fetched from the memo (as ``pickle`` writes them).
    """
    memo, recent = {}, [None, None]  # memo index -> its string (None: not a string); the last two pushed
    try:
        for opcode, arg, position in pickletools.genops(pickled):
            name = opcode.name
            if name not in _ADMITTED_OPCODES:
                raise _refuse(f"its pickle uses the opcode {name} at byte {position}, which torch.save "
                              "does not write")
            if name == "GLOBAL":
                _admitted_global(*arg.split(" ", 1))
            elif name == "STACK_GLOBAL":
                if None in recent:
                    raise _refuse(f"its pickle names a global computed at run time (byte {position})")
                _admitted_global(*recent)
            if name in _MEMO_OPCODES:
                memo[len(memo) if name == "MEMOIZE" else arg] = recent[-1]
            elif name != "FRAME":
                pushed = arg if name in _STRING_OPCODES else memo.get(arg) if name.endswith("BINGET") else None
                recent = [recent[-1], pushed]
    except ValueError as err:  # pickletools' word for a truncated or malformed stream
        raise _refuse(f"its pickle is malformed ({err})") from None


def _load_torch(archive, pickle_name, map_location, budget):
    prefix = pickle_name[: -len("data.pkl")]
    names = set(archive.namelist())
    byteorder = archive.read(prefix + "byteorder").decode().strip() if prefix + "byteorder" in names else "little"
    if byteorder not in ("little", "big"):
        raise RuntimeError(f"mg.load: unknown byte order {byteorder!r} in {prefix}byteorder")
    storage_names = {name[len(prefix) + len("data/"):] for name in names if name.startswith(prefix + "data/")}
    budget.charge(archive.getinfo(pickle_name).file_size, pickle_name)
    pickled = archive.read(pickle_name)
    _check_opcodes(pickled)
    unpickler = _TorchUnpickler(io.BytesIO(pickled), storage_names, map_location)
    try:
        loaded = unpickler.load()
    except (TypeError, ValueError, AttributeError, KeyError, IndexError, EOFError, RecursionError) as err:
        raise _refuse(f"its pickle is malformed ({type(err).__name__}: {err})") from None
    materializer = _Materializer(archive, prefix, "<" if byteorder == "little" else ">")
    materializer.check(loaded)
    materializer.check_storages(unpickler.storages.values(), budget)
    return materializer.convert(loaded)


# =========================================================================== load
def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, max_bytes=None):
    """Read what ``save`` wrote, or a checkpoint PyTorch's ``torch.save`` wrote, without running its code.

    ``f`` is a path or a binary file object. PyTorch files are read as ``torch.load(weights_only=True)``
    reads them, whatever ``weights_only`` says: tensors (as minigrad Tensors with their dtype, shape
    and strides; tensors viewing one storage share memory), state_dicts, optimizer states and plain
    containers; any other global in the pickle, or any opcode ``torch.save`` does not write, is refused
    with ``pickle.UnpicklingError`` before anything is built from it. ``map_location`` may be None,
    'cpu', a CPU device or a dict mapping saved locations to the CPU; other devices raise RuntimeError.
    ``mmap`` is accepted and the file is read into memory. Files in PyTorch's legacy (pre-1.6, non-zip)
    format raise RuntimeError.

    The file is untrusted input. A path that is not a regular file (a directory: IsADirectoryError; a
    FIFO, socket or device: OSError) is refused before it is opened for reading. ``max_bytes``
    (minigrad's own argument; default ``minigrad.serialization.MAX_LOAD_BYTES``, 16 GiB; ``math.inf``
    for no limit) bounds the file's size and the total size of the entries read from it: a larger one
    raises ValueError before the excess is read. Every entry's kind, dtype and size is checked before
    any array is read or any tensor built; a malformed file raises RuntimeError (or
    ``pickle.UnpicklingError`` for PyTorch's pickle) saying what was wrong.
    """
    if pickle_module is not None:
        raise RuntimeError("mg.load reads checkpoints with its own restricted unpickler; pickle_module is not "
                           "supported")
    max_bytes = MAX_LOAD_BYTES if max_bytes is None else max_bytes
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, (int, float)) or not max_bytes >= 0:
        raise ValueError(f"mg.load: max_bytes must be a non-negative number of bytes (or math.inf), got "
                         f"{max_bytes!r}")
    _check_map_location(map_location)
    source, opened = _open_for_load(f, max_bytes)
    budget = _Budget(max_bytes)
    try:
        start = source.tell()
        head = source.read(8)
        source.seek(start)
        if not head.startswith(b"PK"):
            raise RuntimeError(_not_a_zip_message(head))
        try:
            archive = zipfile.ZipFile(source)
        except (zipfile.BadZipFile, ValueError, OSError, EOFError) as err:
            raise RuntimeError(f"mg.load: the file is not a readable zip archive ({err})") from None
        with archive:
            names = archive.namelist()
            try:
                if _STRUCTURE in names:
                    return _load_minigrad(archive, budget)
                pickles = [name for name in names if name.endswith("/data.pkl") and name.count("/") == 1]
                if len(pickles) != 1:
                    raise RuntimeError("mg.load: this zip archive was not written by mg.save or torch.save (it has "
                                       f"no {_STRUCTURE} and no <name>/data.pkl)")
                return _load_torch(archive, pickles[0], map_location, budget)
            except RecursionError:
                raise RuntimeError("mg.load: the file nests containers too deeply to be read") from None
            except (zipfile.BadZipFile, EOFError, zipfile.LargeZipFile, NotImplementedError) as err:
                raise RuntimeError(f"mg.load: a zip entry cannot be read ({type(err).__name__}: {err})") from None
    finally:
        if opened:
            source.close()


_FILE_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
               (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _check_regular(mode, size, name, max_bytes):
    """Refuse what is not a regular file of at most ``max_bytes`` bytes (``mode``, ``size``: its stat)."""
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "mg.load: a directory, not a checkpoint file", name)
    if not stat.S_ISREG(mode):
        kind = next((label for test, label in _FILE_KINDS if test(mode)), "not a regular file")
        raise OSError(errno.EINVAL, f"mg.load refuses to read {kind}: checkpoints must be regular files", name)
    if size > max_bytes:
        raise ValueError(f"mg.load: {name} has {size} bytes, more than max_bytes={max_bytes} (pass a larger "
                         "max_bytes, or set minigrad.serialization.MAX_LOAD_BYTES)")


def _open_for_load(f, max_bytes):
    """``(binary file, whether we opened it)`` for ``load``, after checking that ``f`` is a regular file
    (a path is checked before it is opened, and its descriptor again after) within ``max_bytes``."""
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        before = os.stat(path)
        _check_regular(before.st_mode, before.st_size, path, max_bytes)
        # O_NONBLOCK: should the path have become a FIFO since the stat, opening it does not wait for a writer.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
        try:
            after = os.fstat(fd)
            _check_regular(after.st_mode, after.st_size, path, max_bytes)
        except BaseException:
            os.close(fd)
            raise
        return os.fdopen(fd, "rb"), True
    source, _ = _open(f, "rb")
    try:
        fileno = source.fileno()
    except (AttributeError, OSError, ValueError):
        fileno = None
    name = getattr(source, "name", type(source).__name__)
    if fileno is not None:
        info = os.fstat(fileno)
        _check_regular(info.st_mode, info.st_size, name, max_bytes)
    if not (hasattr(source, "seek") and hasattr(source, "tell")) or not getattr(source, "seekable", lambda: True)():
        raise ValueError(f"mg.load: f must be a seekable binary file (a zip archive is read from its end), got "
                         f"{type(source).__name__}")
    start = source.tell()
    size = source.seek(0, os.SEEK_END) - start
    source.seek(start)
    if size > max_bytes:
        raise ValueError(f"mg.load: the file has {size} bytes, more than max_bytes={max_bytes} (pass a larger "
                         "max_bytes, or set minigrad.serialization.MAX_LOAD_BYTES)")
    return source, False


def _not_a_zip_message(head):
    if head.startswith(b"\x80"):
        return ("mg.load: this is a pickle file, such as PyTorch's legacy (non-zip) checkpoint format, which "
                "minigrad does not read because unpickling it could run code; re-save it with PyTorch's default "
                "zip format (torch.save(obj, f) in PyTorch >= 1.6, without _use_new_zipfile_serialization=False)")
    if len(head) == 8 and int.from_bytes(head, "little") < 100_000_000:
        return ("mg.load: this file is not a zip archive; if it is a safetensors file, read it with "
                "minigrad.serialization.load_safetensors")
    return "mg.load: this file was not written by mg.save or torch.save (it is not a zip archive)"


# =========================================================================== safetensors
def _safetensors_numpy():
    try:
        import safetensors.numpy
    except ImportError as err:
        raise ImportError("reading and writing safetensors files needs the 'safetensors' package: "
                          "pip install 'minigrad[safetensors]' (or pip install safetensors)") from err
    return safetensors.numpy


def save_safetensors(tensors, filename, metadata=None):
    """Write ``tensors`` (a dict of names to Tensors or ndarrays) to the safetensors file ``filename``.

    ``metadata`` is None or a dict of strings to strings, stored in the file's header.
    """
    backend = _safetensors_numpy()
    if not isinstance(tensors, dict):
        raise TypeError(f"tensors must be a dict of names to Tensors or ndarrays, got {type(tensors).__name__}")
    arrays = {}
    for name, value in tensors.items():
        array = value._data if isinstance(value, Tensor) else value
        numeric = isinstance(array, np.ndarray) and (array.dtype.kind in _NUMERIC_KINDS or array.dtype == bfloat16)
        if not isinstance(name, str) or not numeric:
            raise TypeError(f"tensors[{name!r}] must be a numeric Tensor or ndarray under a string name, got "
                            f"{type(value).__name__}" + (f" of dtype {array.dtype}" if hasattr(array, "dtype") else ""))
        arrays[name] = np.ascontiguousarray(array)
    if metadata is not None and not (isinstance(metadata, dict)
                                     and all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())):
        raise TypeError(f"metadata must be None or a dict of strings to strings, got {metadata!r}")
    backend.save_file(arrays, os.fspath(filename), metadata=metadata)


def load_safetensors(filename):
    """The tensors of the safetensors file ``filename``: a dict of names to minigrad Tensors, in file order."""
    backend = _safetensors_numpy()
    loaded = backend.load_file(os.fspath(filename))
    bf16 = _safetensors_bf16_names(filename)
    return {name: Tensor(_as_bfloat16(array) if name in bf16 else np.array(array, copy=True))
            for name, array in loaded.items()}


def _safetensors_bf16_names(filename):
    """The names of the BF16 tensors in a safetensors file, from its header (8 bytes of length, then JSON)."""
    with open(filename, "rb") as f:
        length = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(length))
    return {name for name, entry in header.items() if name != "__metadata__" and entry.get("dtype") == "BF16"}


def _as_bfloat16(array):
    """A BF16 tensor as the safetensors package returned it: bfloat16 already (ml_dtypes), or, from versions
    without it, its raw 2-byte elements, read as bfloat16 bit patterns. A copy either way."""
    array = np.array(array, copy=True)
    return array if array.dtype == bfloat16 else array.view(np.uint16).view(bfloat16)
