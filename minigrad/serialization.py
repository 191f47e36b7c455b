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
  device) before opening it, refuses a file larger than ``max_bytes`` (``MAX_LOAD_BYTES`` unless given),
  and spends memory from a budget (``_Budget``: ``max_bytes``, or 48 times the file's size): every zip
  entry's declared size is checked against what the file can hold and charged before the entry is read
  in chunks, and the objects the structure or pickle describes are estimated and charged before they are
  built. It checks PyTorch's pickle stream opcode by opcode against the few opcodes ``torch.save``
  writes before running it (memo slots within the pickle's length, at most ``_MAX_COLLIDING_NUMBERS``
  numbers whose hashes can collide), checks every entry's kind, dtype and size before it reads any
  array data or builds any tensor, and quotes file data in messages through ``_preview`` (a few hundred
  characters, whatever the data shares or nests).
* ``save_safetensors``/``load_safetensors`` go through the ``safetensors`` package (the optional extra
  ``minigrad[safetensors]``); ``load_safetensors`` refuses non-regular files before opening them, too.
"""
import contextlib
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

import ml_dtypes
import numpy as np

from . import safe_globals as _trust
from .dtypes import FLOAT8, LIMITED_UINTS, ML_FLOATS, bfloat16, is_differentiable
from .layouts import sparse_coo, strided
from .tensor import Tensor

from .safe_globals import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals  # noqa: E402,F401

__all__ = ["save", "load", "save_safetensors", "load_safetensors", "MAX_LOAD_BYTES", "add_safe_globals",
           "get_safe_globals", "clear_safe_globals", "safe_globals", "get_unsafe_globals_in_checkpoint"]

#: ``load``'s (and ``load_safetensors``') default limit, in bytes, on the file's size, and the most memory ``load``
#: spends on one file (less for a small file: 48 times its size, at least 64 MiB; ``_Budget``). Set it
#: (``minigrad.serialization.MAX_LOAD_BYTES = 2**40``) or pass ``load(f, max_bytes=...)``, which replaces both
#: limits; ``math.inf`` lifts them. minigrad's own name: PyTorch has none.
MAX_LOAD_BYTES = 16 * 2 ** 30

_STRUCTURE = "minigrad/structure.json"
_FORMAT = "minigrad"
_FORMAT_VERSION = 1
_NUMERIC_KINDS = "biufc"  # bool, signed and unsigned integers, floating point, complex

#: Unless ``max_bytes`` is given, ``load`` spends at most this many bytes of memory per byte of the file (and at
#: least ``_MIN_BUDGET``): on the entries it unpacks and the objects it builds. Checkpoints are stored
#: uncompressed (by mg.save and torch.save), so theirs is about 1; a zip bomb's is about 1000.
_BYTES_PER_FILE_BYTE = 48
_MIN_BUDGET = 64 * 2 ** 20
_CHUNK = 2 ** 20  # entries are read this many bytes at a time
_PREVIEW_CHARS = 200  # at most this many characters of anything the file controls go into a message
#: At most this many numbers whose hashes a file can make collide (ints of magnitude 2**61 - 1 or more, complex
#: numbers): n of them as dict keys or set members cost n**2 / 2 comparisons to insert.
_MAX_COLLIDING_NUMBERS = 4096
#: An upper bound on the memory the objects of minigrad/structure.json take, per byte of it: json.loads makes
#: up to ~30 bytes of objects per byte ("[]," is a 56-byte list and its 8-byte slot); decode fewer (a Tensor per
#: 28-byte tensor node). Measured on CPython 3.11; the tests check it against tracemalloc.
_JSON_BYTES_PER_BYTE = 40
_COLLIDING_INT = 2 ** 61 - 1  # sys.hash_info.modulus on 64-bit CPython: hash(k * 2**61 - k) == 0 for every k


# =========================================================================== messages about what a file holds
class _Text(str):
    """A piece of ``_preview``'s output (a bracket, a separator), as opposed to a string the file holds."""


_BRACKETS = {list: ("[", "]"), tuple: ("(", ")"), set: ("{", "}"), dict: ("{", "}"),
             OrderedDict: ("OrderedDict({", "})")}


def _container_pieces(container):
    """The pieces of ``container``'s repr, lazily: brackets and separators as ``_Text``, items as themselves."""
    opening, closing = _BRACKETS[type(container)]
    yield _Text(opening)
    pairs = isinstance(container, dict)
    for i, item in enumerate(container.items() if pairs else container):
        if i:
            yield _Text(", ")
        if pairs:
            yield item[0]
            yield _Text(": ")
            yield item[1]
        else:
            yield item
    if type(container) is tuple and len(container) == 1:
        yield _Text(",")
    yield _Text(closing)


def _leaf_text(obj, room):
    if isinstance(obj, (str, bytes)):
        return repr(obj[: room + 1])
    if type(obj) is int and obj.bit_length() > 256:
        return f"<an int of {obj.bit_length()} bits>"
    if obj is None or type(obj) in (bool, int, float, complex) or isinstance(obj, _Inert):
        return repr(obj)  # short: minigrad's own records and plain numbers
    return f"<{type(obj).__name__}>"


def _preview(obj, limit=_PREVIEW_CHARS):
    """``repr(obj)`` cut to ``limit`` characters, in O(limit) steps whatever ``obj`` holds: a file can build
    structures that share parts (2**60 leaves in a few hundred bytes of pickle) or contain themselves, which
    ``repr`` would walk in full. Lists, tuples, sets and dicts look as ``repr`` shows them."""
    out, size, pending = [], 0, [iter((obj,))]  # a stack of iterators over text pieces and objects
    while pending and size <= limit:
        piece = next(pending[-1], _Text())
        if piece == "" and isinstance(piece, _Text):
            pending.pop()  # that iterator is done
            continue
        if not isinstance(piece, _Text) and type(piece) in _BRACKETS:
            pending.append(_container_pieces(piece))
            continue
        text = piece if isinstance(piece, _Text) else _leaf_text(piece, limit - size)
        out.append(text)
        size += len(text)
    text = "".join(out)
    return text[:limit] + "..." if size > limit or pending else text


def _clip(text, limit=_PREVIEW_CHARS):
    """``text`` (an error's message, a name from the zip directory) cut to ``limit`` characters."""
    text = str(text)
    return text if len(text) <= limit else text[:limit] + "..."


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
        if array.dtype.kind not in _NUMERIC_KINDS and array.dtype not in ML_FLOATS:
            raise TypeError(f"mg.save cannot save an array of dtype {array.dtype} at {path}: only bool, integer, "
                            "floating-point and complex arrays can be saved")
        index = self.index_of.get(id(array))
        if index is None:
            index = self.index_of[id(array)] = len(self.arrays)
            self.arrays.append(array)
        return index

    def _sparse(self, obj, path):
        """A sparse COO tensor (SGD's momentum for a sparse gradient, a sparse matrix): its indices and values."""
        if obj.layout is not sparse_coo:
            raise TypeError(f"mg.save cannot save a {obj.layout} tensor at {path}: convert it with to_sparse_coo() or "
                            "to_dense() first")
        return {"type": "sparse_coo", "indices": self.array(obj._idx, path), "values": self.array(obj._vals._data, path),
                "size": list(obj.shape), "coalesced": obj.is_coalesced(), "requires_grad": obj.requires_grad}

    def encode(self, obj, path):
        from .nn.module import Parameter  # nn builds on this package's top level

        if isinstance(obj, Tensor) and obj.layout is not strided:
            return self._sparse(obj, path)
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
    # nor float8: stored as their uint8 bit patterns, their dtype names listed by array number
    float8_arrays = {str(i): array.dtype.name for i, array in enumerate(encoder.arrays) if array.dtype in FLOAT8}
    if float8_arrays:
        structure["float8_arrays"] = float8_arrays
    out, opened = _open(f, "wb")
    try:
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
            archive.writestr(_STRUCTURE, json.dumps(structure))
            for index, array in enumerate(encoder.arrays):
                with archive.open(_array_name(index), "w", force_zip64=True) as entry:
                    stored = array.view(np.uint16) if array.dtype == bfloat16 else \
                        array.view(np.uint8) if array.dtype in FLOAT8 else array
                    np.lib.format.write_array(entry, stored, allow_pickle=False)
    finally:
        if opened:
            out.close()


# =========================================================================== minigrad's own format: reading
def _bad_archive(message):
    return RuntimeError(f"mg.load: not a valid minigrad archive: {message}")


class _Budget:
    """The bytes of memory ``load`` may still spend: each entry it unpacks is charged at its declared size
    before it is read, and the objects the structure or the pickle will make are estimated and charged
    before they are made. The limit is ``max_bytes`` when given; otherwise ``_BYTES_PER_FILE_BYTE`` times the
    file's size (at least ``_MIN_BUDGET``, at most ``MAX_LOAD_BYTES``), so that a small file cannot make load
    allocate gigabytes."""

    def __init__(self, max_bytes, file_size, explicit=True):
        self.used, self.limit = 0, max_bytes
        if explicit:
            self.why = f"max_bytes={max_bytes} (pass a larger max_bytes)"
        else:
            scaled = max(_MIN_BUDGET, _BYTES_PER_FILE_BYTE * file_size)
            if scaled < max_bytes:
                self.limit = scaled
                self.why = (f"{scaled} bytes, what mg.load spends at most on a file of {file_size} bytes unless told "
                            "otherwise (a zip bomb unpacks to much more than it holds; if you trust the file, pass "
                            "max_bytes=<bytes> to allow more)")
            else:
                self.why = (f"max_bytes={max_bytes} (pass a larger max_bytes, or set "
                            "minigrad.serialization.MAX_LOAD_BYTES)")

    def charge(self, nbytes, what):
        self.used += nbytes
        if self.used > self.limit:
            raise ValueError(f"mg.load: {_clip(what)} would bring the memory it spends to {self.used} bytes, more "
                             f"than {self.why}")


# Deflate's largest expansion: 258 bytes from 2 bits; with each block's header, a little less.
_MAX_DEFLATE_RATIO = 1032


class _Entries:
    """The zip archive being loaded, read only through checks and the budget.

    An entry is read only once its declared sizes are possible (``info``): compressed with no method but
    deflate, its compressed bytes inside the file, and no more unpacked bytes declared than those can give
    (a stored entry: as many; deflated: at most 1032 times as many); then its unpacked size is charged to the
    budget, and it is read in chunks of ``_CHUNK`` bytes, which must add up to the declared size.
    """

    def __init__(self, archive, file_end, budget):
        self.archive, self.file_end, self.budget = archive, file_end, budget
        self.names = set(archive.namelist())

    def info(self, name):
        try:
            info = self.archive.getinfo(name)
        except KeyError:
            raise RuntimeError(f"mg.load: the zip entry {_clip(name)} is missing") from None
        method, packed, size = info.compress_type, info.compress_size, info.file_size
        if method not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise RuntimeError(f"mg.load: the zip entry {_clip(name)} is compressed with method {method}; mg.load "
                               "reads stored and deflated entries only")
        data_start = info.header_offset + 30 + len(info.orig_filename.encode("utf-8", "surrogateescape"))
        if data_start + packed > self.file_end:
            raise RuntimeError(f"mg.load: the zip directory says the entry {_clip(name)} has {packed} bytes, more "
                               f"than the file holds ({self.file_end} bytes in all)")
        if size > (packed if method == zipfile.ZIP_STORED else _MAX_DEFLATE_RATIO * packed + 64):
            raise RuntimeError(f"mg.load: the zip directory says the entry {_clip(name)} unpacks to {size} bytes, "
                               f"more than its {packed} {'stored' if method == zipfile.ZIP_STORED else 'deflated'} "
                               "bytes can hold")
        return info

    def size(self, name):
        """The declared unpacked size of ``name``, once it is possible (nothing is charged or read)."""
        return self.info(name).file_size

    def open(self, name, charge=None):
        """``name`` opened for reading, after charging ``charge`` bytes (its declared size unless given)."""
        info = self.info(name)
        self.budget.charge(info.file_size if charge is None else charge, f"unpacking {name}")
        return self.archive.open(info)

    def read(self, name, most=None):
        """All of ``name``'s bytes (at most ``most`` of them, or RuntimeError before anything is read)."""
        size = self.size(name)
        if most is not None and size > most:
            raise RuntimeError(f"mg.load: the zip entry {_clip(name)} has {size} bytes; it should have at most {most}")
        with self.open(name, charge=2 * size) as entry:  # the buffer, and the bytes made of it for a moment
            buffer = bytearray(size)
            self._read_into(entry, memoryview(buffer), name)
        return bytes(buffer)

    def read_into(self, name, buffer):
        """Fill ``buffer`` (a writable 1-d uint8 array, charged by the caller) from the start of ``name``."""
        with self.open(name, charge=0) as entry:
            self._read_into(entry, memoryview(buffer), name)

    @staticmethod
    def _read_into(entry, view, name):
        done = 0
        while done < len(view):
            got = entry.readinto(view[done: done + _CHUNK])
            if not got:
                raise RuntimeError(f"mg.load: the zip entry {_clip(name)} ends after {done} of the {len(view)} "
                                   "bytes it declares")
            done += got


_NPY_HEADER_READERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}


class _Decoder:
    """Rebuilds the object ``_Encoder`` described in two passes: ``check`` walks the whole description
    (node kinds, fields, array indices, each array's ``.npy`` header: numeric dtype, a size its entry
    holds, within the budget) without reading any array data; ``decode`` then builds, reading each array
    once."""

    _CONTAINERS = ("list", "tuple", "dict", "ordered_dict")

    def __init__(self, entries, bfloat16_arrays=(), float8_arrays=None):
        self.float8_arrays = {int(i): _FLOAT8_BY_NAME[name] for i, name in (float8_arrays or {}).items()}
        self.entries = entries
        self.bfloat16_arrays = set(bfloat16_arrays)   # indices of arrays stored as bfloat16 bit patterns (uint16)
        self.headers = {}  # array index -> (shape, fortran_order, dtype), from check
        self.arrays = {}
        self.colliding = 0  # numbers whose hashes can be made to collide, seen so far

    def check(self, node):
        if node is None or type(node) in (bool, float, str):
            return
        if type(node) is int:
            if abs(node) >= _COLLIDING_INT:
                self.count_colliding()
            return
        if not isinstance(node, dict) or not isinstance(node.get("type"), str):
            raise _bad_archive(f"unexpected node {_preview(node)}")
        kind = node["type"]
        if kind in ("tensor", "parameter", "ndarray", "numpy_scalar"):
            shape, _, dtype = self.check_array(node.get("array"))
            if kind == "numpy_scalar" and shape != ():
                raise _bad_archive(f"a NumPy scalar stored with shape {list(shape)}")
            if kind in ("tensor", "parameter") and node.get("requires_grad") is True and not is_differentiable(dtype):
                raise _bad_archive(f"a {dtype} tensor that requires grad")
        elif kind == "sparse_coo":
            self.check_sparse(node)
        elif kind == "complex":
            if not all(type(node.get(part)) in (int, float) for part in ("real", "imag")):
                raise _bad_archive(f"a complex number {_preview(node)}")
            self.count_colliding()
        elif kind in self._CONTAINERS:
            items = node.get("items")
            if not isinstance(items, list):
                raise _bad_archive(f"a {kind} node without items")
            for item in items:
                if kind in ("dict", "ordered_dict"):
                    if not isinstance(item, list) or len(item) != 2:
                        raise _bad_archive(f"a dict item {_preview(item)}")
                    self.check_key(item[0])
                    self.check(item[1])
                else:
                    self.check(item)
        else:
            raise _bad_archive(f"unknown node type {_preview(kind)}")

    def count_colliding(self):
        self.colliding += 1
        if self.colliding > _MAX_COLLIDING_NUMBERS:
            raise _bad_archive(f"it holds more than {_MAX_COLLIDING_NUMBERS} complex numbers or ints of magnitude "
                               "2**61 - 1 or more (their hashes can be made to collide, which makes building dicts "
                               "and sets of them take quadratic time)")

    def check_sparse(self, node):
        """A sparse COO node: int64 indices (d, nnz), values (nnz, *dense), a size of d + len(dense) non-negative
        ints ending in dense; the indices' range is checked when they are read (``decode``)."""
        index_shape, _, index_dtype = self.check_array(node.get("indices"))
        value_shape, _, value_dtype = self.check_array(node.get("values"))
        size = node.get("size")
        if (index_dtype != np.int64 or len(index_shape) != 2 or not value_shape or value_shape[0] != index_shape[1]
                or not isinstance(size, list) or not all(type(n) is int and n >= 0 for n in size)
                or len(size) != index_shape[0] + len(value_shape) - 1 or tuple(size[index_shape[0]:]) != value_shape[1:]
                or type(node.get("coalesced")) is not bool or type(node.get("requires_grad")) is not bool):
            raise _bad_archive(f"a sparse tensor with indices {list(index_shape)} of {index_dtype}, values "
                               f"{list(value_shape)} and size {_preview(size)}")
        if node["requires_grad"] and not is_differentiable(value_dtype):
            raise _bad_archive(f"a {value_dtype} tensor that requires grad")

    def check_key(self, node):
        """Dict keys are plain values or tuples of them (what ``save`` writes), never arrays or lists."""
        if isinstance(node, dict) and node.get("type") == "tuple" and isinstance(node.get("items"), list):
            for item in node["items"]:
                self.check_key(item)
        elif isinstance(node, dict) and node.get("type") == "complex":
            self.check(node)
        elif node is None or type(node) in (bool, int, float, str):
            self.check(node)
        else:
            raise _bad_archive(f"a dict key {_preview(node)}")

    def check_array(self, index):
        if type(index) is not int or index < 0:
            raise _bad_archive(f"array index {_preview(index)}")
        if index not in self.headers:
            name = _array_name(index)
            if name not in self.entries.names:
                raise _bad_archive(f"{name} is missing")
            stored = self.entries.size(name)
            with self.entries.open(name) as entry:  # charged its whole size: read_array reads it all
                try:
                    version = np.lib.format.read_magic(entry)
                    read_header = _NPY_HEADER_READERS.get(version)
                    if read_header is None:
                        raise ValueError(f"the .npy format version {version} is not one mg.save writes")
                    header = read_header(entry, max_header_size=10_000)
                except ValueError as err:
                    raise _bad_archive(f"{name}: {_clip(err)}") from None
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
            if index in self.float8_arrays:
                if dtype != np.uint8:
                    raise _bad_archive(f"{name} is listed as float8 but holds {dtype}, not uint8 bit patterns")
                header = (shape, header[1], self.float8_arrays[index])
            self.headers[index] = header
        return self.headers[index]

    def array(self, index):
        if index not in self.arrays:
            # Checked and charged already; read_array reads in chunks into one array of the header's shape.
            with self.entries.archive.open(_array_name(index)) as entry:
                try:
                    array = np.lib.format.read_array(entry, allow_pickle=False)
                except ValueError as err:  # NumPy's word for data that ends early
                    raise _bad_archive(f"{_array_name(index)}: {_clip(err)}") from None
            self.arrays[index] = array.view(bfloat16) if index in self.bfloat16_arrays else \
                array.view(self.float8_arrays[index]) if index in self.float8_arrays else array
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
        if kind == "sparse_coo":
            return self.sparse(node)
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


    def sparse(self, node):
        from .sparse.coo import SparseTensor, _linear
        indices, size = self.array(node["indices"]), node["size"]
        if indices.size and (indices.min() < 0 or (indices.max(axis=1) >= size[:len(indices)]).any()):
            raise _bad_archive(f"a sparse tensor of size {size} with an index out of range")
        if node["coalesced"] and indices.shape[1] and (np.diff(_linear(indices, size)) <= 0).any():
            raise _bad_archive("a sparse tensor marked coalesced whose indices are not sorted and distinct")
        tensor = SparseTensor(indices, Tensor(self.array(node["values"])), size, coalesced=node["coalesced"])
        return tensor.requires_grad_(node["requires_grad"])


def _load_minigrad(entries):
    text = entries.read(_STRUCTURE)
    entries.budget.charge(_JSON_BYTES_PER_BYTE * len(text), f"building the objects {_STRUCTURE} describes")
    try:
        structure = json.loads(text)
    except ValueError as err:
        raise _bad_archive(f"{_STRUCTURE}: {_clip(err)}") from None
    if not isinstance(structure, dict) or structure.get("format") != _FORMAT:
        raise _bad_archive(f"{_STRUCTURE} does not describe a minigrad file")
    if structure.get("version") != _FORMAT_VERSION:
        raise RuntimeError(f"mg.load: this minigrad file has format version {_preview(structure.get('version'))}; "
                           f"this minigrad reads version {_FORMAT_VERSION}")
    bfloat16_arrays = structure.get("bfloat16_arrays", [])
    if not (isinstance(bfloat16_arrays, list) and all(type(i) is int and i >= 0 for i in bfloat16_arrays)):
        raise _bad_archive(f"bfloat16_arrays {_preview(bfloat16_arrays)}")
    float8_arrays = structure.get("float8_arrays", {})
    if not (isinstance(float8_arrays, dict) and all(isinstance(i, str) and i.isdigit() and name in _FLOAT8_BY_NAME
                                                    for i, name in float8_arrays.items())):
        raise _bad_archive(f"float8_arrays {_preview(float8_arrays)}")
    decoder = _Decoder(entries, bfloat16_arrays, float8_arrays)
    decoder.check(structure.get("root"))
    return decoder.decode(structure.get("root"))


_FLOAT8_BY_NAME = {dtype.name: dtype for dtype in FLOAT8}


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
        return f"storage {_preview(self.key, 60)}"


class _TensorRecord(_Inert):
    """What ``_rebuild_tensor_v2`` was called with; made into a Tensor after the whole pickle is read."""

    __slots__ = ("storage", "offset", "size", "stride", "requires_grad", "parameter", "dtype")

    def __init__(self, storage, offset, size, stride, requires_grad, parameter=False, dtype=None):
        self.storage, self.offset, self.size, self.stride = storage, offset, size, stride
        self.requires_grad, self.parameter = requires_grad, parameter
        self.dtype = dtype      # the elements' dtype when the storage is untyped bytes (_rebuild_tensor_v3)

    def __repr__(self):
        return f"tensor of size {list(self.size)}"


def _is_index(value):
    return type(value) is int and value >= 0


def _index_tuple(value, what):
    if not isinstance(value, tuple) or not all(_is_index(v) for v in value):
        raise _refuse(f"{what} must be a tuple of non-negative ints, got {_preview(value)}")
    return value


def _no_hooks(backward_hooks):
    if not isinstance(backward_hooks, OrderedDict) or backward_hooks:
        raise _refuse(f"a tensor with backward hooks {_preview(backward_hooks)}")


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    """``torch._utils._rebuild_tensor_v3``: as v2, over an untyped (byte) storage read as ``dtype``; PyTorch
    writes it for the dtypes without a typed storage class (uint16/32/64, the float8 dtypes)."""
    if not (isinstance(dtype, _Marker) and not dtype.storage) or not isinstance(storage, _Storage) \
            or storage.dtype != np.uint8:
        raise _refuse(f"a tensor rebuilt from {_preview(storage)} as {_preview(dtype)}")
    elements = _Storage(storage.key, dtype.dtype, storage.numel // dtype.dtype.itemsize)   # for the bounds check
    record = _rebuild_tensor_v2(elements, storage_offset, size, stride, requires_grad, backward_hooks, metadata)
    record.storage, record.dtype = storage, dtype.dtype
    return record


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    """``torch._utils._rebuild_tensor_v2``: the tensor ``size``/``stride`` elements into ``storage``."""
    if not isinstance(storage, _Storage):
        raise _refuse(f"a tensor rebuilt from {_preview(storage)} instead of a storage")
    if not _is_index(storage_offset):
        raise _refuse(f"a tensor with storage offset {_preview(storage_offset)}")
    size, stride = _index_tuple(size, "a tensor's size"), _index_tuple(stride, "a tensor's stride")
    if len(size) != len(stride) or len(size) > 64 or type(requires_grad) is not bool:
        raise _refuse(f"a tensor with size {_preview(size)}, stride {_preview(stride)}, requires_grad "
                      f"{_preview(requires_grad)}")
    _no_hooks(backward_hooks)
    if metadata:
        raise _refuse(f"a tensor with metadata {_preview(metadata)}")
    if 0 not in size:  # the last element read: offset + sum((size_d - 1) * stride_d) must be in the storage
        last = storage_offset + sum((n - 1) * s for n, s in zip(size, stride))
        if last >= storage.numel:
            raise _refuse(f"a tensor of size {list(size)}, stride {list(stride)} and offset {storage_offset} "
                          f"reaching past its storage of {storage.numel} elements")
    return _TensorRecord(storage, storage_offset, size, stride, requires_grad)


def _rebuild_parameter(data, requires_grad, backward_hooks):
    """``torch._utils._rebuild_parameter``: a saved ``nn.Parameter``."""
    if not isinstance(data, _TensorRecord) or type(requires_grad) is not bool:
        raise _refuse(f"a parameter rebuilt from {_preview(data)}, requires_grad {_preview(requires_grad)}")
    _no_hooks(backward_hooks)
    return _TensorRecord(data.storage, data.offset, data.size, data.stride, requires_grad, parameter=True,
                         dtype=data.dtype)


def _torch_size(sizes=()):
    return _index_tuple(tuple(sizes) if isinstance(sizes, (tuple, list)) else sizes, "torch.Size")


def _complex(real=0.0, imag=0.0):
    if not all(type(v) in (int, float) for v in (real, imag)):
        raise _refuse(f"complex({_preview(real)}, {_preview(imag)})")
    return complex(real, imag)


def _set(items=()):
    if not isinstance(items, (list, tuple)):
        raise _refuse(f"set({_preview(items)})")
    return set(items)


def _latin1_bytes(text, encoding):
    """``_codecs.encode(text, 'latin1')``: how pickle's protocol 2 writes a ``bytes`` value (a str of its bytes)."""
    if type(text) is not str or encoding != "latin1":
        raise _refuse(f"it calls _codecs.encode on {_preview(text)} with {_preview(encoding)} (pickle writes bytes "
                      "as a str and 'latin1')")
    return text.encode("latin1")


def _ordered_dict(items=()):
    if not isinstance(items, (list, tuple, dict)):
        raise _refuse(f"OrderedDict({_preview(items)})")
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
        ("torch._utils", "_rebuild_tensor_v3"): _Global("torch._utils._rebuild_tensor_v3", _rebuild_tensor_v3),
        ("torch._utils", "_rebuild_parameter"): _Global("torch._utils._rebuild_parameter", _rebuild_parameter),
        ("torch", "Size"): _Global("torch.Size", _torch_size),
        ("builtins", "set"): _Global("builtins.set", _set),
        ("builtins", "complex"): _Global("builtins.complex", _complex),
        ("_codecs", "encode"): _Global("_codecs.encode", _latin1_bytes),
        ("torch", "UntypedStorage"): _Marker("torch.UntypedStorage", np.dtype(np.uint8), storage=True),
    }
    admitted["torch.storage", "UntypedStorage"] = admitted["torch", "UntypedStorage"]
    for dtype in FLOAT8 + LIMITED_UINTS:          # no storage class of their own: _rebuild_tensor_v3 names them
        admitted["torch", dtype.name] = _Marker(f"torch.{dtype.name}", dtype, storage=False)
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
        found = _trust.trusted(module, name)
    if found is None:
        raise _refuse(f"it names the global {_clip(module, 100)}.{_clip(name, 100)}, which is not admitted (if "
                      "you trust it, list it with minigrad.serialization.add_safe_globals, or the safe_globals "
                      "context manager, as for PyTorch's weights_only load)")
    return found


class _TorchUnpickler(pickle.Unpickler):
    """Reads ``data.pkl`` of a ``torch.save`` archive, admitting only ``_ADMITTED`` globals and storages."""

    def __init__(self, file, storage_names, map_location):
        super().__init__(file)
        self.storage_names = storage_names  # the archive's data/<key> entries by key
        self.map_location = map_location
        self.storages = {}
        self.complex_numbers = 0
        self.trusted = False

    def find_class(self, module, name):
        found = _admitted_global(module, name)
        if not isinstance(found, _Inert):
            self.trusted = True          # a global the user trusts: what it makes may be any object
        return _Global(found.name, self.complex) if found is _ADMITTED["builtins", "complex"] else found

    def complex(self, *parts):
        """``complex``, counted: complex numbers' hashes can be made to collide (hash(x + yj) is
        hash(x) + 1000003 * hash(y)), and n colliding dict keys or set members cost n**2 / 2 comparisons."""
        self.complex_numbers += 1
        if self.complex_numbers > _MAX_COLLIDING_NUMBERS:
            raise _refuse(f"its pickle makes more than {_MAX_COLLIDING_NUMBERS} complex numbers (their hashes can be "
                          "made to collide: dicts and sets of them take quadratic time)")
        return _complex(*parts)

    def persistent_load(self, pid):
        """``('storage', storage_type, key, location, numel)``: the storage in ``data/<key>``."""
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise _refuse(f"the persistent id {_preview(pid)} is not a storage record")
        _, storage_type, key, location, numel = pid
        if not (isinstance(storage_type, _Marker) and storage_type.storage and isinstance(key, str)
                and isinstance(location, str) and _is_index(numel)):
            raise _refuse(f"the storage record {_preview(pid)}")
        if key not in self.storage_names:
            raise _refuse(f"the storage {_preview(key)} is not in the archive")
        _check_location(location, self.map_location)
        storage = self.storages.get(key)
        if storage is None:
            storage = self.storages[key] = _Storage(key, storage_type.dtype, numel)
        elif storage.dtype != storage_type.dtype or storage.numel != numel:
            raise _refuse(f"the storage {_preview(key)} is read as two different types or sizes")
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
    raise RuntimeError(f"mg.load: the checkpoint holds tensors saved on the device {_preview(location)}, and minigrad "
                       "runs on the CPU only; pass map_location='cpu' to load them onto the CPU")


class _Materializer:
    """Turns what the unpickler built into plain objects and minigrad Tensors, checking every type.

    Tensors viewing one storage share one array (``np.ndarray`` views of it), as in PyTorch.
    """

    def __init__(self, entries, prefix, byteorder, trusted=False):
        self.entries, self.prefix, self.byteorder = entries, prefix, byteorder
        self.done, self.open = {}, set()
        self.trusted = trusted     # the pickle named globals the user trusts: other objects are accepted

    def check_storages(self, storages):
        """Before any storage is read: each entry's declared size is possible and holds its elements, and
        all of them fit in the budget."""
        for storage in storages:
            name = f"{self.prefix}data/{storage.key}"
            nbytes = storage.numel * storage.dtype.itemsize
            stored_bytes = self.entries.size(name)
            if stored_bytes < nbytes:
                raise _refuse(f"the storage {_preview(storage.key)} holds {stored_bytes} bytes, fewer than its "
                              f"{storage.numel} elements of {storage.dtype} need")
            self.entries.budget.charge(nbytes, f"reading the storage {name}")

    def storage_array(self, storage):
        if storage.array is None:
            nbytes = storage.numel * storage.dtype.itemsize
            raw = np.empty(nbytes, dtype=np.uint8)  # one writable buffer, filled chunk by chunk, nothing past it
            self.entries.read_into(f"{self.prefix}data/{storage.key}", raw)
            stored = raw.view(storage.dtype.newbyteorder(self.byteorder))
            if not stored.dtype.isnative:
                stored = stored.byteswap(inplace=True).view(storage.dtype)  # in place: no second copy
            storage.array = stored
        return storage.array

    def tensor(self, record):
        from .nn.module import Parameter

        base = self.storage_array(record.storage)
        if record.dtype is not None and record.dtype != base.dtype:     # bytes read as their elements' dtype
            base = base[:base.size // record.dtype.itemsize * record.dtype.itemsize].view(
                record.dtype.newbyteorder(self.byteorder) if record.dtype.itemsize > 1 else record.dtype)
            if not base.dtype.isnative:
                base = base.byteswap().view(record.dtype)
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
            elif self.trusted and not isinstance(obj, _Inert):
                pending.extend(_attributes(obj).values())    # made by a trusted global: what it holds is checked
                pending.extend(_items(obj))
            else:
                raise _refuse(f"it holds {_preview(obj)} as a value")

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
        if self.trusted and not isinstance(obj, _Inert):   # (check has seen it) kept, what it holds converted
            attributes = _attributes(obj)
            for key, value in list(attributes.items()):
                attributes[key] = self.convert(value)
            return self._convert_items(obj)
        raise _refuse(f"it holds {_preview(obj)} as a value")

    def _convert_items(self, obj):
        """A trusted object that is a dict, list or tuple of a subclass: its items converted as its attributes are
        (in place through the base class's own methods, so a subclass's ``__setitem__`` does not run again; a
        tuple, being immutable, made again, by ``_make`` for a named tuple)."""
        if isinstance(obj, dict):
            for key, value in list(dict.items(obj)):
                dict.__setitem__(obj, key, self.convert(value))
        elif isinstance(obj, list):
            for i, value in enumerate(list.__iter__(obj)):
                list.__setitem__(obj, i, self.convert(value))
        elif isinstance(obj, tuple):
            items = [self.convert(v) for v in tuple.__iter__(obj)]
            if any(a is not b for a, b in zip(items, obj)):
                made = obj._make(items) if hasattr(obj, "_make") else type(obj)(items)
                _attributes(made).update(_attributes(obj))
                return made
        return obj


def _items(obj):
    """What a trusted object holds as a container (a dict's keys and values, a list's or tuple's items)."""
    if isinstance(obj, dict):
        return [*dict.keys(obj), *dict.values(obj)]
    if isinstance(obj, (list, tuple)):
        return list(obj)
    return []


def _attributes(obj):
    """An object's instance ``__dict__`` (empty for one without, a NumPy scalar say)."""
    attributes = getattr(obj, "__dict__", None)
    return attributes if type(attributes) is dict else {}


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
_BYTES_OPCODES = ("SHORT_BINBYTES", "BINBYTES", "BINBYTES8")
_MEMO_OPCODES = ("MEMOIZE", "BINPUT", "LONG_BINPUT")

# What unpickling one opcode may cost in memory, at most, in bytes (measured on CPython 3.11; the tests check
# the estimate against tracemalloc): the object it makes, its slots on the unpickler's stack, in its memo
# and in a container, and the copy ``_Materializer.convert`` makes of a container. Any opcode costs
# ``_OPCODE_BYTES``, these more; a string or bytes costs its length on top (4 bytes a character: a str
# with one character beyond U+FFFF stores all of them in 4 bytes, after an 80-byte header).
_OPCODE_BYTES = 64
_OPCODE_BYTES_FOR = {"EMPTY_LIST": 320, "EMPTY_DICT": 400, "EMPTY_SET": 640, "TUPLE": 128, "TUPLE1": 144,
                     "TUPLE2": 160, "TUPLE3": 176, "REDUCE": 640, "NEWOBJ": 640, "NEWOBJ_EX": 640,
                     "BINPERSID": 256, "SETITEM": 192,
                     **dict.fromkeys(_STRING_OPCODES, 144), **dict.fromkeys(_BYTES_OPCODES, 112)}
# ... and each item that these add to a container (a dict's or set's table grows up to 8-fold past its
# items, in the unpickler's set and again in convert's copy).
_ITEM_BYTES = {"APPENDS": 16, "TUPLE": 16, "SETITEMS": 128, "ADDITEMS": 288}
_MEMO_SLOT_BYTES = 16  # CPython's unpickler grows its memo (8-byte slots) to twice the largest index put
_STRING, _BYTES, _MEMO, _GET, _GLOBAL, _STACK_GLOBAL, _FRAME, _LONG, _MARK = range(1, 10)  # opcodes _check_opcodes
_SPECIAL = {"GLOBAL": _GLOBAL, "STACK_GLOBAL": _STACK_GLOBAL, "FRAME": _FRAME, "LONG1": _LONG, "MARK": _MARK,
            **dict.fromkeys(_STRING_OPCODES, _STRING), **dict.fromkeys(_BYTES_OPCODES, _BYTES),
            **dict.fromkeys(_MEMO_OPCODES, _MEMO), **dict.fromkeys(("BINGET", "LONG_BINGET"), _GET)}


def _opcode_rules(admitted=None):
    """admitted opcode name (``_ADMITTED_OPCODES`` unless given) -> ``(bytes it costs, bytes per item it adds,
    what _check_opcodes does with it, below, change)``: ``below`` is None and ``change`` the change of the
    stack's depth, or, for opcodes that pop down to the last MARK, ``below`` the number of items they take
    from under it and ``change`` the number they push."""
    rules = {}
    for opcode in pickletools.opcodes:
        if opcode.name not in (_ADMITTED_OPCODES if admitted is None else admitted):
            continue
        before, after = opcode.stack_before, opcode.stack_after
        if pickletools.markobject in before:
            below, change = before.index(pickletools.markobject), len(after)
        else:
            below, change = None, len(after) - len(before)
        rules[opcode.name] = (_OPCODE_BYTES_FOR.get(opcode.name, _OPCODE_BYTES), _ITEM_BYTES.get(opcode.name, 0),
                              _SPECIAL.get(opcode.name, 0), below, change)
    return rules


_OPCODE_RULES = _opcode_rules()
# ... and, once the user trusts some globals (add_safe_globals), the opcode that makes an instance of a class
# (protocol 2's way of pickling an object): the class can only be one of those globals, since the unpickler
# resolves no other class; a non-class there is refused by pickle itself
_TRUSTED_OPCODES = frozenset({"NEWOBJ", "NEWOBJ_EX"})
_TRUSTED_OPCODE_RULES = _opcode_rules(_TRUSTED_OPCODES)


def _check_opcodes(pickled, budget):
    """Parse (never run) the pickle ``pickled`` and refuse it if it uses an opcode outside
    ``_ADMITTED_OPCODES`` or names a global outside ``_ADMITTED``, and charge ``budget`` with an estimate of
    the memory its objects take (``_OPCODE_RULES``): checked before the unpickler starts.

    ``GLOBAL`` carries its names; ``STACK_GLOBAL`` (protocol 4+) takes them from the two values pushed
    before it, which must be strings written there or fetched from the memo (as ``pickle`` writes them).
    A memo slot past the pickle's length (which CPython's unpickler would allocate, 8 bytes a slot up to
    the index, for nothing) is refused, and so are more than ``_MAX_COLLIDING_NUMBERS`` huge ints. One
    loop with local variables: it runs once per opcode, millions of times for a large pickle.
    """
    size, rules = len(pickled), _OPCODE_RULES
    memo, recent, before_recent = {}, None, None  # memo index -> its string (None: not a string); last two pushed
    depth, marks, memo_slots, colliding = 0, [], 0, 0
    cost, room = 0, budget.limit - budget.used  # charged to the budget at the end, or once over
    try:
        for opcode, arg, position in pickletools.genops(pickled):
            rule = rules.get(opcode.name)
            if rule is None and opcode.name in _TRUSTED_OPCODES and _trust.any_trusted():
                rule = _TRUSTED_OPCODE_RULES[opcode.name]
            if rule is None:
                raise _refuse(f"its pickle uses the opcode {opcode.name} at byte {position}, which torch.save "
                              "does not write")
            unit, item_bytes, special, below, change = rule
            cost += unit
            pushed = None
            if below is None:
                depth += change
            else:
                if not marks:
                    raise _refuse(f"its pickle is malformed ({opcode.name} without a MARK at byte {position})")
                mark = marks.pop()
                cost += (depth - mark) * item_bytes
                depth = mark - below + change
            if depth < 0:
                raise _refuse(f"its pickle is malformed ({opcode.name} at byte {position} pops an empty stack)")
            if special:
                if special == _STRING:
                    cost += 4 * len(arg)
                    pushed = arg
                elif special == _BYTES:
                    cost += len(arg)
                elif special == _GET:
                    pushed = memo.get(arg)
                elif special == _MEMO:
                    index = len(memo) if arg is None else arg  # MEMOIZE: the next slot
                    if index >= size:
                        raise _refuse(f"its pickle puts an object in memo slot {index} at byte {position}, more "
                                      f"slots than a pickle of {size} bytes can fill")
                    memo[index] = recent
                    if index >= memo_slots:
                        cost += (index + 1 - memo_slots) * _MEMO_SLOT_BYTES
                        memo_slots = index + 1
                    continue  # pushes nothing
                elif special == _MARK:
                    marks.append(depth)
                elif special == _GLOBAL:
                    _admitted_global(*arg.split(" ", 1))
                elif special == _STACK_GLOBAL:
                    if recent is None or before_recent is None:
                        raise _refuse(f"its pickle names a global computed at run time (byte {position})")
                    _admitted_global(before_recent, recent)
                elif special == _FRAME:
                    if position + 9 + arg > size:
                        raise _refuse(f"its pickle has a frame of {arg} bytes at byte {position}, past its end")
                    continue
                elif special == _LONG and abs(arg) >= _COLLIDING_INT:
                    colliding += 1
                    if colliding > _MAX_COLLIDING_NUMBERS:
                        raise _refuse(f"its pickle holds more than {_MAX_COLLIDING_NUMBERS} ints of magnitude "
                                      "2**61 - 1 or more (their hashes can be made to collide: dicts and sets of "
                                      "them take quadratic time)")
            before_recent, recent = recent, pushed
            if cost > room:
                break
    except ValueError as err:  # pickletools' word for a truncated or malformed stream
        raise _refuse(f"its pickle is malformed ({_clip(err)})") from None
    budget.charge(cost, "building the objects data.pkl makes")


def _load_torch(entries, pickle_name, map_location):
    prefix = pickle_name[: -len("data.pkl")]
    byteorder = "little"
    if prefix + "byteorder" in entries.names:
        byteorder = entries.read(prefix + "byteorder", most=16).decode("ascii", "replace").strip()
    if byteorder not in ("little", "big"):
        raise RuntimeError(f"mg.load: unknown byte order {_preview(byteorder)} in {_clip(prefix)}byteorder")
    storage_names = {name[len(prefix) + len("data/"):] for name in entries.names if name.startswith(prefix + "data/")}
    pickled = entries.read(pickle_name)
    _check_opcodes(pickled, entries.budget)
    unpickler = _TorchUnpickler(io.BytesIO(pickled), storage_names, map_location)
    try:
        loaded = unpickler.load()
    except (TypeError, ValueError, AttributeError, KeyError, IndexError, EOFError, RecursionError) as err:
        raise _refuse(f"its pickle is malformed ({type(err).__name__}: {_clip(err)})") from None
    materializer = _Materializer(entries, prefix, "<" if byteorder == "little" else ">", unpickler.trusted)
    materializer.check(loaded)
    materializer.check_storages(unpickler.storages.values())
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
    FIFO, socket or device: OSError) is refused before it is opened for reading. Memory is budgeted:
    each zip entry's declared sizes must be possible (its bytes inside the file; a stored entry unpacks to
    as many, a deflated one to at most 1032 times as many) and are charged before it is read, in chunks;
    the objects ``structure.json`` or ``data.pkl`` would make are estimated and charged before they are
    made. Without ``max_bytes`` the budget is 48 times the file's size (at least 64 MiB, at most
    ``minigrad.serialization.MAX_LOAD_BYTES``, 16 GiB, which also bounds the file's size): plenty for a
    checkpoint (mg.save and torch.save store, not compress), not for a zip bomb. ``max_bytes``
    (minigrad's own argument; ``math.inf`` for no limit) replaces that budget and bounds the file's size;
    going over either raises ValueError before the excess is read. Every entry's kind, dtype and size is
    checked before any array is read or any tensor built; a malformed file raises RuntimeError (or
    ``pickle.UnpicklingError`` for PyTorch's pickle) saying what was wrong, quoting at most a few hundred
    characters of what the file holds.
    """
    if pickle_module is not None:
        raise RuntimeError("mg.load reads checkpoints with its own restricted unpickler; pickle_module is not "
                           "supported")
    _check_map_location(map_location)
    with _archive(f, max_bytes) as entries:
        if _STRUCTURE in entries.names:
            return _load_minigrad(entries)
        return _load_torch(entries, _torch_pickle_name(entries), map_location)


@contextlib.contextmanager
def _archive(f, max_bytes):
    """The zip archive ``f`` as ``_Entries`` on a budget (``load``'s rules), closed after; what goes wrong inside
    (a nesting too deep, an entry zipfile cannot read) raises RuntimeError saying so."""
    explicit = max_bytes is not None
    max_bytes = _checked_max_bytes(max_bytes, "mg.load")
    source, opened, size = _open_for_load(f, max_bytes)
    try:
        start = source.tell()
        head = source.read(8)
        source.seek(start)
        if not head.startswith(b"PK"):
            raise RuntimeError(_not_a_zip_message(head))
        try:
            archive = zipfile.ZipFile(source)
        except (zipfile.BadZipFile, ValueError, OSError, EOFError) as err:
            raise RuntimeError(f"mg.load: the file is not a readable zip archive ({_clip(err)})") from None
        with archive:
            try:
                yield _Entries(archive, start + size, _Budget(max_bytes, size, explicit))
            except RecursionError:
                raise RuntimeError("mg.load: the file nests containers too deeply to be read") from None
            except (zipfile.BadZipFile, EOFError, zipfile.LargeZipFile, NotImplementedError) as err:
                raise RuntimeError(f"mg.load: a zip entry cannot be read ({type(err).__name__}: "
                                   f"{_clip(err)})") from None
    finally:
        if opened:
            source.close()


def _torch_pickle_name(entries):
    """The one ``<name>/data.pkl`` of a ``torch.save`` archive."""
    pickles = [name for name in entries.names if name.endswith("/data.pkl") and name.count("/") == 1]
    if len(pickles) != 1:
        raise RuntimeError("mg.load: this zip archive was not written by mg.save or torch.save (it has "
                           f"no {_STRUCTURE} and no <name>/data.pkl)")
    return pickles[0]


def get_unsafe_globals_in_checkpoint(f):
    """The globals (``"module.name"``) a ``torch.save`` checkpoint names that ``load`` would refuse: neither in
    the weights-only subset nor listed with ``add_safe_globals``. Read statically, as PyTorch reads them (the
    pickle is parsed, never run; GLOBAL opcodes, those of protocol 2, which ``torch.save`` writes)."""
    try:
        with _archive(f, None) as entries:
            if _STRUCTURE in entries.names:
                raise ValueError("Expected input to be a checkpoint returned by torch.save (this is mg.save's)")
            pickled = entries.read(_torch_pickle_name(entries))
    except RuntimeError as err:
        raise ValueError(f"Expected input to be a checkpoint returned by torch.save: {err}") from None
    names = set()
    try:
        for opcode, arg, _ in pickletools.genops(pickled):
            if opcode.name == "GLOBAL":
                module, name = arg.split(" ", 1)
                module = "builtins" if module == "__builtin__" else module
                if (module, name) not in _ADMITTED and _trust.trusted(module, name) is None:
                    names.add(f"{module}.{name}")
    except ValueError as err:
        raise _refuse(f"its pickle is malformed ({_clip(err)})") from None
    return sorted(names)


_FILE_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
               (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _checked_max_bytes(max_bytes, who):
    max_bytes = MAX_LOAD_BYTES if max_bytes is None else max_bytes
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, (int, float)) or not max_bytes >= 0:
        raise ValueError(f"{who}: max_bytes must be a non-negative number of bytes (or math.inf), got "
                         f"{max_bytes!r}")
    return max_bytes


def _check_regular(mode, size, name, max_bytes, who="mg.load"):
    """Refuse what is not a regular file of at most ``max_bytes`` bytes (``mode``, ``size``: its stat)."""
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, f"{who}: a directory, not a checkpoint file", name)
    if not stat.S_ISREG(mode):
        kind = next((label for test, label in _FILE_KINDS if test(mode)), "not a regular file")
        raise OSError(errno.EINVAL, f"{who} refuses to read {kind}: checkpoints must be regular files", name)
    if size > max_bytes:
        raise ValueError(f"{who}: {name} has {size} bytes, more than max_bytes={max_bytes} (pass a larger "
                         "max_bytes, or set minigrad.serialization.MAX_LOAD_BYTES)")


def _open_regular(path, max_bytes, who):
    """``(binary file, size)`` of the regular file at ``path``, checked before it is opened and its
    descriptor again after (a FIFO, device or directory is refused without waiting for a writer)."""
    before = os.stat(path)
    _check_regular(before.st_mode, before.st_size, path, max_bytes, who)
    # O_NONBLOCK: should the path have become a FIFO since the stat, opening it does not wait for a writer.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        after = os.fstat(fd)
        _check_regular(after.st_mode, after.st_size, path, max_bytes, who)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb"), after.st_size


def _open_for_load(f, max_bytes):
    """``(binary file, whether we opened it, its size from where it is)`` for ``load``, after checking that
    ``f`` is a regular file (a path is checked before it is opened, and its descriptor again after) within
    ``max_bytes``."""
    if isinstance(f, (str, os.PathLike)):
        source, size = _open_regular(os.fspath(f), max_bytes, "mg.load")
        return source, True, size
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
    return source, False, size


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
        numeric = isinstance(array, np.ndarray) and (array.dtype.kind in _NUMERIC_KINDS or array.dtype in ML_FLOATS)
        if not isinstance(name, str) or not numeric:
            raise TypeError(f"tensors[{name!r}] must be a numeric Tensor or ndarray under a string name, got "
                            f"{type(value).__name__}" + (f" of dtype {array.dtype}" if hasattr(array, "dtype") else ""))
        arrays[name] = np.ascontiguousarray(array)
    if metadata is not None and not (isinstance(metadata, dict)
                                     and all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())):
        raise TypeError(f"metadata must be None or a dict of strings to strings, got {metadata!r}")
    backend.save_file(arrays, os.fspath(filename), metadata=metadata)


def load_safetensors(filename, *, max_bytes=None):
    """The tensors of the safetensors file ``filename``: a dict of names to minigrad Tensors, in file order.

    As for ``load``, a path that is not a regular file (a directory: IsADirectoryError; a FIFO, socket or
    device: OSError) is refused before it is opened for reading, and so is a file larger than ``max_bytes``
    (minigrad's own argument; default ``minigrad.serialization.MAX_LOAD_BYTES``): ValueError.
    """
    _safetensors_numpy()                            # or ImportError naming the extra
    source, _ = _open_regular(os.fspath(filename), _checked_max_bytes(max_bytes, "load_safetensors"),
                              "load_safetensors")
    with source:
        data = source.read()
    from safetensors import deserialize             # importable: _safetensors_numpy checked the package
    tensors = {}
    for name, view in deserialize(data):     # the package checks the header and the byte ranges
        code = view["dtype"]
        if code not in _SAFETENSORS_DTYPES:
            raise ValueError(f"load_safetensors: tensor {_clip(name, 100)} has the dtype {_clip(code, 20)}, "
                             f"which minigrad does not read (it reads {', '.join(_SAFETENSORS_DTYPES)})")
        array = np.frombuffer(view["data"], _SAFETENSORS_DTYPES[code]).reshape(view["shape"])
        tensors[name] = Tensor(array.copy())        # each its own memory, writable
    return tensors


# safetensors' dtype codes (little-endian, as x86 and ARM are) and minigrad's dtypes; BF16 through ml_dtypes
_SAFETENSORS_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "BF16": bfloat16, "I64": np.int64,
                       "I32": np.int32, "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_,
                       "C64": np.complex64, "U16": np.uint16, "U32": np.uint32, "U64": np.uint64,
                       "F8_E4M3": ml_dtypes.float8_e4m3fn, "F8_E5M2": ml_dtypes.float8_e5m2,
                       "F8_E8M0": ml_dtypes.float8_e8m0fnu}
