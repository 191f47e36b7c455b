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
* ``save_safetensors``/``load_safetensors`` go through the ``safetensors`` package (the optional extra
  ``minigrad[safetensors]``).
"""
import json
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np

from .tensor import Tensor

__all__ = ["save", "load", "save_safetensors", "load_safetensors"]

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
        if array.dtype.kind not in _NUMERIC_KINDS:
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
    out, opened = _open(f, "wb")
    try:
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
            archive.writestr(_STRUCTURE, json.dumps(structure))
            for index, array in enumerate(encoder.arrays):
                with archive.open(_array_name(index), "w", force_zip64=True) as entry:
                    np.lib.format.write_array(entry, array, allow_pickle=False)
    finally:
        if opened:
            out.close()


# =========================================================================== minigrad's own format: reading
def _bad_archive(message):
    return RuntimeError(f"mg.load: not a valid minigrad archive: {message}")


class _Decoder:
    """Rebuilds the object ``_Encoder`` described, reading each array once."""

    def __init__(self, archive):
        self.archive = archive
        self.arrays = {}

    def array(self, index):
        if type(index) is not int or index < 0:
            raise _bad_archive(f"array index {index!r}")
        if index not in self.arrays:
            try:
                with self.archive.open(_array_name(index)) as entry:
                    array = np.lib.format.read_array(entry, allow_pickle=False)
            except KeyError:
                raise _bad_archive(f"{_array_name(index)} is missing") from None
            if array.dtype.kind not in _NUMERIC_KINDS:
                raise _bad_archive(f"{_array_name(index)} has the non-numeric dtype {array.dtype}")
            self.arrays[index] = array
        return self.arrays[index]

    def decode(self, node):
        if node is None or type(node) in (bool, int, float, str):
            return node
        if not isinstance(node, dict) or not isinstance(node.get("type"), str):
            raise _bad_archive(f"unexpected node {node!r}")
        kind = node["type"]
        if kind in ("tensor", "parameter"):
            from .nn.module import Parameter

            tensor = Tensor(self.array(node.get("array")))
            requires_grad = node.get("requires_grad") is True
            return Parameter(tensor, requires_grad) if kind == "parameter" else tensor.requires_grad_(requires_grad)
        if kind == "ndarray":
            return self.array(node.get("array"))
        if kind == "numpy_scalar":
            return self.array(node.get("array"))[()]
        if kind == "complex":
            return complex(float(node.get("real")), float(node.get("imag")))
        items = node.get("items")
        if not isinstance(items, list):
            raise _bad_archive(f"a {kind} node without items")
        if kind in ("list", "tuple"):
            values = [self.decode(item) for item in items]
            return tuple(values) if kind == "tuple" else values
        if kind in ("dict", "ordered_dict"):
            result = OrderedDict() if kind == "ordered_dict" else {}
            for pair in items:
                if not isinstance(pair, list) or len(pair) != 2:
                    raise _bad_archive(f"a dict item {pair!r}")
                result[self.decode(pair[0])] = self.decode(pair[1])
            return result
        raise _bad_archive(f"unknown node type {kind!r}")


def _load_minigrad(archive):
    try:
        structure = json.loads(archive.read(_STRUCTURE))
    except ValueError as err:
        raise _bad_archive(f"{_STRUCTURE}: {err}") from None
    if not isinstance(structure, dict) or structure.get("format") != _FORMAT:
        raise _bad_archive(f"{_STRUCTURE} does not describe a minigrad file")
    if structure.get("version") != _FORMAT_VERSION:
        raise RuntimeError(f"mg.load: this minigrad file has format version {structure.get('version')!r}; "
                           f"this minigrad reads version {_FORMAT_VERSION}")
    return _Decoder(archive).decode(structure.get("root"))


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
    "float16": ("HalfStorage", np.float16), "int64": ("LongStorage", np.int64), "int32": ("IntStorage", np.int32),
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


class _TorchUnpickler(pickle.Unpickler):
    """Reads ``data.pkl`` of a ``torch.save`` archive, admitting only ``_ADMITTED`` globals and storages."""

    def __init__(self, file, storage_names, map_location):
        super().__init__(file)
        self.storage_names = storage_names  # the archive's data/<key> entries by key
        self.map_location = map_location
        self.storages = {}

    def find_class(self, module, name):
        module = "builtins" if module == "__builtin__" else module  # protocol 2 spells it the Python 2 way
        found = _ADMITTED.get((module, name))
        if found is None:
            hint = " (NumPy has no bfloat16: convert to float32 before saving)" if "bfloat16" in name.lower() else ""
            raise _refuse(f"it names the global {module}.{name}, which is not admitted{hint}")
        return found

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

    def storage_array(self, storage):
        if storage.array is None:
            name = f"{self.prefix}data/{storage.key}"
            nbytes = storage.numel * storage.dtype.itemsize
            stored_bytes = self.archive.getinfo(name).file_size
            if stored_bytes < nbytes:
                raise _refuse(f"the storage {storage.key!r} holds {stored_bytes} bytes, fewer than its "
                              f"{storage.numel} elements of {storage.dtype} need")
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
        if record.requires_grad and array.dtype.kind not in "fc":
            raise _refuse(f"a {array.dtype} tensor that requires grad")
        if record.parameter:
            return Parameter(Tensor(array), requires_grad=record.requires_grad)
        return Tensor(array, requires_grad=record.requires_grad)

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


def _load_torch(archive, pickle_name, map_location):
    prefix = pickle_name[: -len("data.pkl")]
    names = set(archive.namelist())
    byteorder = archive.read(prefix + "byteorder").decode().strip() if prefix + "byteorder" in names else "little"
    if byteorder not in ("little", "big"):
        raise RuntimeError(f"mg.load: unknown byte order {byteorder!r} in {prefix}byteorder")
    storage_names = {name[len(prefix) + len("data/"):] for name in names if name.startswith(prefix + "data/")}
    with archive.open(pickle_name) as pickled:
        try:
            loaded = _TorchUnpickler(pickled, storage_names, map_location).load()
        except (TypeError, ValueError, AttributeError, KeyError, IndexError, EOFError) as err:
            raise _refuse(f"its pickle is malformed ({type(err).__name__}: {err})") from None
    return _Materializer(archive, prefix, "<" if byteorder == "little" else ">").convert(loaded)


# =========================================================================== load
def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None):
    """Read what ``save`` wrote, or a checkpoint PyTorch's ``torch.save`` wrote, without running its code.

    ``f`` is a path or a binary file object. PyTorch files are read as ``torch.load(weights_only=True)``
    reads them, whatever ``weights_only`` says: tensors (as minigrad Tensors with their dtype, shape
    and strides; tensors viewing one storage share memory), state_dicts, optimizer states and plain
    containers; any other global in the pickle is refused with ``pickle.UnpicklingError`` before
    anything is built from it. ``map_location`` may be None, 'cpu', a CPU device or a dict mapping
    saved locations to the CPU; other devices raise RuntimeError. ``mmap`` is accepted and the file is
    read into memory. Files in PyTorch's legacy (pre-1.6, non-zip) format raise RuntimeError.
    """
    if pickle_module is not None:
        raise RuntimeError("mg.load reads checkpoints with its own restricted unpickler; pickle_module is not "
                           "supported")
    _check_map_location(map_location)
    source, opened = _open(f, "rb")
    try:
        start = source.tell()
        head = source.read(8)
        source.seek(start)
        if not head.startswith(b"PK"):
            raise RuntimeError(_not_a_zip_message(head))
        with zipfile.ZipFile(source) as archive:
            names = archive.namelist()
            if _STRUCTURE in names:
                return _load_minigrad(archive)
            pickles = [name for name in names if name.endswith("/data.pkl") and name.count("/") == 1]
            if len(pickles) != 1:
                raise RuntimeError("mg.load: this zip archive was not written by mg.save or torch.save (it has no "
                                   f"{_STRUCTURE} and no <name>/data.pkl)")
            return _load_torch(archive, pickles[0], map_location)
    finally:
        if opened:
            source.close()


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
        if not isinstance(name, str) or not isinstance(array, np.ndarray) or array.dtype.kind not in _NUMERIC_KINDS:
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
    return {name: Tensor(np.array(array, copy=True)) for name, array in loaded.items()}
