"""PyTorch as the tests' oracle: live when it is installed, recorded when it is not.

A mirror test asks PyTorch what it does (``oracle.ask(compute, inputs=..., tolerance=...)``): ``compute(torch)``
runs the PyTorch side and returns a *record*, plain data (``snap`` turns PyTorch objects into it: tensors
become ``RecordedTensor``, exceptions ``RecordedError``). The test then compares minigrad with the record, the
same way whichever of the three modes ran:

* **live** (PyTorch importable): ``compute`` runs and its fresh record is compared with minigrad. Under
  ``MINIGRAD_REQUIRE_TORCH=1`` (CI) or ``MINIGRAD_CHECK_FIXTURES=1`` the fresh record must also equal the
  committed one (within the call's tolerance): a fixture that no longer matches, or a call that has none,
  fails with the command that regenerates it.
* **replay** (no PyTorch): the committed record of the same call is returned; the call's inputs must match the
  fingerprint stored with it, else the test skips as stale. A call with no record skips ("PyTorch not
  installed").
* **record** (``MINIGRAD_RECORD_FIXTURES=1``, set by ``tests/fixtures/record.py``): live, and every record is
  written at the end of the session to ``tests/fixtures/<test module>.json.gz``.

Calls are keyed by the test's id and their order within the test, and checked against a fingerprint of their
inputs; a hypothesis test's calls are found by the fingerprint alone, which then also holds the parameters the
test drew (``parameters``), since the order of its examples can differ from session to session. The records of one
test module live in one gzipped JSON file (floats written with ``repr``, so they round-trip exactly).
"""
import builtins
import functools
import gzip
import json
import os
from pathlib import Path

import numpy as np
import pytest

FIXTURES = Path(__file__).parent / "fixtures"
RECORDING = os.environ.get("MINIGRAD_RECORD_FIXTURES") == "1"
CHECKING = RECORDING is False and (os.environ.get("MINIGRAD_REQUIRE_TORCH") == "1"
                                   or os.environ.get("MINIGRAD_CHECK_FIXTURES") == "1")
RECORD_COMMAND = "python tests/fixtures/record.py"

_TORCH = []


def live_torch():
    """PyTorch, or None when it is not installed."""
    if not _TORCH:
        try:
            import torch
        except ModuleNotFoundError:
            torch = None
        _TORCH.append(torch)
    return _TORCH[0]


# --------------------------------------------------------------------------- what PyTorch gave, as plain data
class RecordedDtype:
    """A PyTorch dtype by name: prints as ``torch.float64``, equal to the same name."""

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"

    __repr__ = __str__

    def __eq__(self, other):
        return str(self) == str(other)

    def __hash__(self):
        return hash(str(self))

    @property
    def is_floating_point(self):
        return self.name in ("float16", "bfloat16", "float32", "float64")

    @property
    def is_complex(self):
        return self.name.startswith("complex")


class RecordedTensor:
    """A PyTorch tensor as the comparisons read it: dtype, shape, values (None when not recorded: random or
    uninitialized results), ``requires_grad`` and ``grad``."""

    def __init__(self, dtype, shape, values=None, requires_grad=False, grad=None, ident=None, storage=None):
        self.dtype = dtype if isinstance(dtype, RecordedDtype) else RecordedDtype(dtype)
        self.shape = tuple(shape)
        self.values = values
        self.requires_grad = requires_grad
        self.grad = grad
        self.ident = ident          # which tensor of a recorded sample it is (one tensor used twice: one ident)
        self.storage = storage      # a sample view of a larger storage: (the storage's values, strides, offset)

    def detach(self):
        return self

    def numpy(self, force=False):
        assert self.values is not None, "PyTorch's values were not recorded for this tensor (random or uninitialized)"
        return self.values.copy()

    def _is_view(self):
        """Whether the recorded sample tensor views a larger storage (recorded with it: ``storage``)."""
        return self.storage is not None

    def resolve_conj(self):
        return self

    resolve_neg = resolve_conj

    @property
    def ndim(self):
        return len(self.shape)

    def dim(self):
        return len(self.shape)

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def numel(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def item(self):
        return self.numpy().item()

    def tolist(self):
        return self.numpy().tolist()

    def __repr__(self):
        return f"RecordedTensor({self.dtype}, shape={self.shape})"


class RecordedError:
    """An exception PyTorch raised: ``kind`` is the nearest built-in class (``torch._C._LinAlgError`` is a
    RuntimeError); ``exception()`` rebuilds it as that class."""

    def __init__(self, kind, message=""):
        self.kind, self.message = kind, message

    @property
    def type(self):
        return type(self.exception())

    def exception(self):
        cls = getattr(builtins, self.kind, None)
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            cls = RuntimeError
        try:
            return cls(self.message)
        except TypeError:          # a built-in exception with other constructor arguments
            return RuntimeError(self.message)

    def __repr__(self):
        return f"{self.kind}({self.message!r})"


class RecordedObject:
    """Anything else PyTorch returned (a module, an optimizer, a generator): its class name."""

    def __init__(self, type_name):
        self.type_name = type_name

    def __repr__(self):
        return f"<recorded {self.type_name}>"


def builtin_kind(error):
    """The nearest built-in exception class name of ``error`` (``torch._C._LinAlgError`` -> RuntimeError)."""
    return builtin_kind_of(type(error))


def builtin_kind_of(cls):
    for base in cls.__mro__:
        if getattr(builtins, base.__name__, None) is base:
            return base.__name__
    return "Exception"


def dtype_name(dtype):
    return str(dtype).rpartition(".")[2]


def tensor_values(t):
    """The values of a PyTorch tensor as a NumPy array (bfloat16 as float32, complex32 as complex64)."""
    torch = live_torch()
    t = t.detach().resolve_conj().resolve_neg()
    if t.dtype == torch.bfloat16:
        t = t.float()
    elif t.dtype == torch.complex32:
        t = t.to(torch.complex64)
    if t.layout != torch.strided:
        t = t.to_dense()
    return np.array(t.numpy(force=True))


def snap(obj, values=True, grad=True):
    """``obj`` from PyTorch as plain data: tensors -> RecordedTensor (with their ``grad`` when ``grad``),
    dtypes -> RecordedDtype, ``Size`` -> tuple, exceptions -> RecordedError, lists/tuples/dicts item by item,
    Python and NumPy values unchanged, anything else -> RecordedObject. ``values=False``: shapes and dtypes only."""
    torch = live_torch()
    if torch is not None:
        if isinstance(obj, torch.Tensor):
            g = snap(obj.grad, values) if grad and obj.is_leaf and obj.grad is not None else None
            return RecordedTensor(dtype_name(obj.dtype), tuple(obj.shape), tensor_values(obj) if values else None,
                                  bool(obj.requires_grad), g)
        if isinstance(obj, torch.dtype):
            return RecordedDtype(dtype_name(obj))
        if isinstance(obj, torch.Size):
            return tuple(int(s) for s in obj)
    if isinstance(obj, BaseException):
        return RecordedError(builtin_kind(obj), str(obj)[:300])
    if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
        return tuple(snap(o, values, grad) for o in obj)
    if isinstance(obj, tuple):                       # a named tuple (torch.return_types.max): its fields in order
        return tuple(snap(o, values, grad) for o in obj)
    if isinstance(obj, list):
        return [snap(o, values, grad) for o in obj]
    if isinstance(obj, dict):
        return {str(k): snap(v, values, grad) for k, v in obj.items()}
    if obj is None or isinstance(obj, (bool, int, float, complex, str, np.ndarray, np.generic,
                                       RecordedTensor, RecordedDtype, RecordedError, RecordedObject)):
        return obj
    return RecordedObject(type(obj).__name__)


# --------------------------------------------------------------------------- JSON encoding (exact floats)
_EXTRA = {}           # tag -> (class, to plain data, from plain data): record types of other helpers


_COMPARED = {}        # class -> what of it the staleness check compares (default: its dump)


def register(tag, cls, dump, load, compared=None):
    """Let records hold ``cls`` (``dump(obj)`` -> data ``encode`` can write; ``load(data)`` rebuilds it;
    ``compared(obj)``: the part of it two records must agree on, when not all of its dump)."""
    _EXTRA[tag] = (cls, dump, load)
    if compared is not None:
        _COMPARED[cls] = compared


def _encode_array(a):
    a = np.asarray(a)
    out = {"dtype": a.dtype.str.lstrip("<>|="), "shape": list(a.shape)}
    flat = a.reshape(-1)
    if a.dtype.kind == "c":
        out["re"], out["im"] = flat.real.tolist(), flat.imag.tolist()
    elif a.dtype.kind == "b":
        out["data"] = flat.astype(np.int8).tolist()
    else:
        out["data"] = flat.tolist()      # float16/32/64 as Python floats: repr round-trips them exactly
    return out


def _decode_array(d):
    dtype = np.dtype(d["dtype"])
    if dtype.kind == "c":
        flat = np.array(d["re"], dtype=np.float64) + 1j * np.array(d["im"], dtype=np.float64)
    else:
        exact = np.float64 if dtype.kind == "f" else dtype if dtype.kind in "iu" else None   # (uint64 above 2**53)
        flat = np.array(d["data"], dtype=exact)
    return flat.astype(dtype).reshape(d["shape"])


def encode(obj):
    """A record as JSON-able data (``decode`` inverts it exactly)."""
    if isinstance(obj, np.ndarray):
        return {"@nd": _encode_array(obj)}
    if isinstance(obj, np.generic):
        return {"@np": _encode_array(np.asarray(obj))}
    if isinstance(obj, RecordedTensor):
        return {"@T": [obj.dtype.name, list(obj.shape), None if obj.values is None else _encode_array(obj.values),
                       obj.requires_grad, encode(obj.grad)] + ([] if obj.ident is None else [obj.ident])
                + ([] if obj.storage is None else [encode(obj.storage)])}
    if isinstance(obj, RecordedDtype):
        return {"@dtype": obj.name}
    if isinstance(obj, RecordedError):
        return {"@E": [obj.kind, obj.message]}
    if isinstance(obj, RecordedObject):
        return {"@O": obj.type_name}
    if isinstance(obj, complex):
        return {"@c": [obj.real, obj.imag]}
    if isinstance(obj, tuple):
        return {"@t": [encode(o) for o in obj]}
    if isinstance(obj, list):
        return [encode(o) for o in obj]
    if isinstance(obj, dict):
        return {"@d": {k: encode(v) for k, v in obj.items()}}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    for tag, (cls, dump, _) in _EXTRA.items():
        if isinstance(obj, cls):
            return {tag: encode(dump(obj))}
    return {"@O": type(obj).__name__}       # anything else: its class name (a replay cannot use it)


def decode(obj):
    if isinstance(obj, list):
        return [decode(o) for o in obj]
    if not isinstance(obj, dict):
        return obj
    (tag, value), = obj.items()
    if tag == "@nd":
        return _decode_array(value)
    if tag == "@np":
        return _decode_array(value)[()]
    if tag == "@T":
        dtype, shape, values, requires_grad, grad, *ident = value
        ident, storage = (ident + [None, None])[:2]
        return RecordedTensor(dtype, shape, None if values is None else _decode_array(values), requires_grad,
                              decode(grad), ident, None if storage is None else decode(storage))
    if tag == "@dtype":
        return RecordedDtype(value)
    if tag == "@a":                   # an array's fingerprint
        return ["array"] + decode(value)
    if tag == "@E":
        return RecordedError(*value)
    if tag == "@O":
        return RecordedObject(value)
    if tag == "@c":
        return complex(*value)
    if tag == "@t":
        return tuple(decode(o) for o in value)
    if tag == "@d":
        return {k: decode(v) for k, v in value.items()}
    if tag in _EXTRA:
        return _EXTRA[tag][2](decode(value))
    raise ValueError(f"unknown record tag {tag!r}")


# --------------------------------------------------------------------------- comparing two records (staleness)
def _tolerance(dtype, tolerance):
    if dtype.kind in "fc" and dtype.itemsize <= (8 if dtype.kind == "c" else 4):   # float16/32, complex64
        return max(tolerance[0], 1e-4), max(tolerance[1], 1e-5)
    return tolerance


BFLOAT16_RECORD_ULPS = 4
"""How far (bfloat16 ulps, of each value or of the tensor's largest) a fresh bfloat16 result of PyTorch may be from its
record and still match it: PyTorch's own bfloat16 kernels round differently on different CPUs (on AVX2 its
conv_transpose1d and conv_transpose3d add the overlapping windows in bfloat16, on AVX-512 they do not)."""


def _bfloat16_tolerance(a, b):
    """(rtol, atol) of ``BFLOAT16_RECORD_ULPS`` bfloat16 ulps for records a, b (bfloat16 values held as float32)."""
    largest = max((float(np.nanmax(np.abs(v), initial=0.0)) for v in (a, b) if isinstance(v, np.ndarray)
                   and v.size and np.isfinite(v).any()), default=0.0)
    ulp = 2.0 ** -7
    return BFLOAT16_RECORD_ULPS * ulp, BFLOAT16_RECORD_ULPS * ulp * (largest if np.isfinite(largest) else 0.0)


def differences(a, b, tolerance=(1e-9, 1e-12), where="record"):
    """Where the records ``a`` and ``b`` differ (floats within ``tolerance`` = (rtol, atol), NaNs where the other
    has them), as a list of strings; empty when they agree."""
    if isinstance(a, RecordedTensor) or isinstance(b, RecordedTensor):
        if not (isinstance(a, RecordedTensor) and isinstance(b, RecordedTensor)):
            return [f"{where}: {a!r} vs {b!r}"]
        if (a.dtype, a.shape, a.requires_grad) != (b.dtype, b.shape, b.requires_grad):
            return [f"{where}: {a.dtype}{list(a.shape)} requires_grad={a.requires_grad} vs "
                    f"{b.dtype}{list(b.shape)} requires_grad={b.requires_grad}"]
        values = _bfloat16_tolerance(a.values, b.values) if a.dtype.name == "bfloat16" else tolerance
        found = differences(a.values, b.values, values, where + " values")
        return found + differences(a.grad, b.grad, tolerance, where + ".grad")
    if isinstance(a, (np.ndarray, np.generic)) or isinstance(b, (np.ndarray, np.generic)):
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype != b.dtype or a.shape != b.shape:
            return [f"{where}: {a.dtype}{list(a.shape)} vs {b.dtype}{list(b.shape)}"]
        if a.dtype.kind in "fc":
            rtol, atol = _tolerance(a.dtype, tolerance)
            same = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        else:
            same = a == b
        return [] if np.all(same) else [f"{where}: values differ at {np.argwhere(~np.asarray(same))[:3].tolist()}"]
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        if type(a) is not type(b) or len(a) != len(b):
            return [f"{where}: {type(a).__name__} of {len(a) if hasattr(a, '__len__') else '-'} vs "
                    f"{type(b).__name__} of {len(b) if hasattr(b, '__len__') else '-'}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, tolerance, f"{where}[{i}]")]
    if isinstance(a, dict) or isinstance(b, dict):
        if not (isinstance(a, dict) and isinstance(b, dict)) or a.keys() != b.keys():
            return [f"{where}: keys {sorted(a) if isinstance(a, dict) else a!r} vs "
                    f"{sorted(b) if isinstance(b, dict) else b!r}"]
        return [d for k in a for d in differences(a[k], b[k], tolerance, f"{where}[{k!r}]")]
    if isinstance(a, RecordedError) or isinstance(b, RecordedError):
        same = isinstance(a, RecordedError) and isinstance(b, RecordedError) and a.kind == b.kind
        return [] if same else [f"{where}: {a!r} vs {b!r}"]
    if isinstance(a, (RecordedDtype, RecordedObject)) or isinstance(b, (RecordedDtype, RecordedObject)):
        return [] if type(a) is type(b) and repr(a) == repr(b) else [f"{where}: {a!r} vs {b!r}"]
    if type(a) in [c for c, _, _ in _EXTRA.values()] or type(b) in [c for c, _, _ in _EXTRA.values()]:
        if type(a) is not type(b):
            return [f"{where}: {a!r} vs {b!r}"]
        dump = _COMPARED.get(type(a)) or next(d for c, d, _ in _EXTRA.values() if c is type(a))
        return differences(dump(a), dump(b), tolerance, where)
    if isinstance(a, float) and isinstance(b, float):
        same = (np.isnan(a) and np.isnan(b)) or np.isclose(a, b, rtol=tolerance[0], atol=tolerance[1])
        return [] if same else [f"{where}: {a!r} vs {b!r}"]
    if isinstance(a, complex) and isinstance(b, complex):
        return differences(np.complex128(a), np.complex128(b), tolerance, where)
    return [] if type(a) is type(b) and a == b else [f"{where}: {a!r} vs {b!r}"]


# --------------------------------------------------------------------------- fingerprints of a call's inputs
_WEIGHTS = {}


def _weights(n):
    if n not in _WEIGHTS:
        _WEIGHTS[n] = np.cos(np.arange(n) * 0.7071) + 1.5      # fixed, so a permutation changes the print
    return _WEIGHTS[n]


def fingerprint(obj):
    """A compact description of a call's inputs: arrays by dtype, shape and a few sums (compared with a
    tolerance, so the last bit of a libm on another CPU does not matter); Python values as themselves."""
    if isinstance(obj, np.ndarray) or isinstance(obj, np.generic):
        a = np.asarray(obj)
        head = [a.dtype.str.lstrip("<>|="), list(a.shape)]
        if a.dtype.kind not in "biufc" or a.size == 0:
            return {"@a": head}
        x = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64).reshape(-1)
        finite = np.isfinite(x)
        y = np.where(finite, x, 0)
        sums = [complex(np.sum(y)), float(np.sum(np.abs(y))), complex(np.sum(y * _weights(y.size))),
                int(np.sum(np.isnan(x))), int(np.sum(np.isposinf(x.real))), int(np.sum(np.isneginf(x.real)))]
        return {"@a": head + [encode(s) for s in sums]}
    if isinstance(obj, (list, tuple)):
        return [fingerprint(o) for o in obj]
    if isinstance(obj, dict):
        return {"@d": {str(k): fingerprint(v) for k, v in obj.items()}}
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return obj if np.isfinite(obj) else repr(obj)
    return type(obj).__name__


_TESTS_DIR = str(Path(__file__).parent)


def parameters(compute, depth=0):
    """What a call computes beyond its arrays: the values that ``compute`` and the test functions it calls hold in
    their closures and defaults (a hypothesis test's drawn ``dim``, ``reduction``...), found recursively. Only the
    tests' own functions are looked into; anything else (a module, PyTorch or its stand-in, an object) is ``"?"``,
    the same whether PyTorch is installed or not."""
    if isinstance(compute, functools.partial):
        return [parameters(compute.func, depth), parameters(list(compute.args), depth),
                parameters(compute.keywords, depth)]
    code = getattr(compute, "__code__", None)
    if code is not None:
        if depth > 6 or not code.co_filename.startswith(_TESTS_DIR):
            return "?"
        cells = [c.cell_contents for c in (compute.__closure__ or ()) if _filled(c)]
        return {"@f": compute.__qualname__, "cells": parameters(cells, depth + 1),
                "defaults": parameters(list(compute.__defaults__ or ()) + sorted((compute.__kwdefaults__ or {}).items()),
                                       depth + 1)}
    if isinstance(compute, (list, tuple)):
        return [parameters(c, depth) for c in compute]
    if isinstance(compute, dict):
        return {"@d": {str(k): parameters(v, depth) for k, v in compute.items()}}
    if isinstance(compute, (np.ndarray, np.generic)) or compute is None or isinstance(compute, (bool, int, str, float)):
        return fingerprint(compute)
    return "?"


def _filled(cell):
    try:
        cell.cell_contents
    except ValueError:          # a closure variable not assigned yet (a function that refers to itself, say)
        return False
    return True


def same_fingerprint(a, b):
    return not differences(decode(a), decode(b), (1e-9, 1e-9))


# --------------------------------------------------------------------------- the store
class _Test:
    """The test running now: its module's fixture file, its name within it, and how many calls it has made."""

    def __init__(self, module, name, generated=False):
        self.module, self.name, self.calls = module, name, 0
        self.generated = generated      # a hypothesis test: how many examples it runs depends on the session


_current = [None]
_loaded = {}          # module -> {test name: [entry, ...]} as committed
_recorded = {}        # module -> {test name: [entry, ...]} recorded in this session (record mode)
_ran_modules = set()
_ran_tests = {}       # module -> names of its tests run in this session


def fixture_path(module):
    return FIXTURES / f"{module}.json.gz"


def _committed(module):
    if module not in _loaded:
        path = fixture_path(module)
        _loaded[module] = json.loads(gzip.decompress(path.read_bytes())) if path.exists() else {}
    return _loaded[module]


def recorded_tests(module):
    """The names of the tests of ``module`` (``test_opinfo``) that have records, sorted."""
    return sorted(_committed(module))


def begin_test(item):
    """Called by ``tests/conftest.py`` before each test: the calls that follow belong to ``item``."""
    module = Path(str(item.path)).stem
    _ran_modules.add(module)
    name = item.nodeid.split("::", 1)[1]
    _ran_tests.setdefault(module, set()).add(name)
    _current[0] = _Test(module, name, bool(getattr(getattr(item, "obj", None), "is_hypothesis_test", False)))
    seed_global_generators()


_module_generators = {}   # id -> (a test module's NumPy generator, its state when the first test began)
_scanned = [0, set()]     # len(sys.modules) at the last scan, the test modules scanned


def seed_global_generators():
    """Each test starts from the same state of PyTorch's, NumPy's and Python's global random generators, and of
    the generators the test modules keep (``RNG = np.random.default_rng(12)``), whatever ran or skipped before
    it: a record made in one run (a module's weights from PyTorch's init, inputs drawn from a module's
    generator) is found again in any other (CI runs every file in one process; a run without PyTorch skips
    some tests, which then draw nothing)."""
    import random
    import sys
    random.seed(0)
    np.random.seed(0)
    if len(sys.modules) != _scanned[0]:          # a module imported since: note its generators as they are now
        _scanned[0] = len(sys.modules)
        for name, module in list(sys.modules.items()):
            if name.startswith(("tests.", "test_")) and name not in _scanned[1]:
                _scanned[1].add(name)
                for value in list(vars(module).values()):
                    if isinstance(value, (np.random.Generator, np.random.RandomState)):
                        _module_generators.setdefault(id(value), (value, _state(value)))
    for generator, state in _module_generators.values():
        _set_state(generator, state)
    torch = live_torch()
    if torch is not None:
        torch.manual_seed(0)


def _state(generator):
    return generator.bit_generator.state if isinstance(generator, np.random.Generator) else generator.get_state()


def _set_state(generator, state):
    if isinstance(generator, np.random.Generator):
        generator.bit_generator.state = state
    else:
        generator.set_state(state)


def end_test():
    _current[0] = None


def _lookup(test, index, print_):
    entries = _committed(test.module).get(test.name, [])
    order = ([entries[index]] if index < len(entries) else []) + entries   # its own place first, then any
    for entry in order:
        if same_fingerprint(entry["in"], print_):
            return decode(entry["out"])
    return None


def ask(compute, inputs=(), tolerance=(1e-9, 1e-12), keep=None, stable=True):
    """PyTorch's record of this call: ``compute(torch)`` when PyTorch is installed (checked against the
    committed record under CI, stored when recording), else the committed record of the same call (the same
    test, the same place in it, inputs matching the fingerprint) or a skip. ``tolerance`` (rtol, atol) is the
    comparison's own: a fresh and a committed record agree when they agree to it. ``keep(record)``: the part of
    a fresh record that is stored and checked (a replay gets only that; a live run compares all of it).
    ``stable=False``: PyTorch's side differs from run to run by design (the CI check only requires a record)."""
    test = _current[0]
    torch = live_torch()
    if test is None:                    # outside a test (bench/opinfo_coverage.py): live only
        assert torch is not None, "oracle.ask outside a test needs PyTorch"
        return compute(torch)
    index, test.calls = test.calls, test.calls + 1
    # A hypothesis test's examples come in an order that depends on the session (Hypothesis draws some values from
    # constants in the modules loaded so far): its calls are found by what they compute, not by their place.
    print_ = encode_fingerprint((inputs, parameters(compute)) if test.generated else inputs)
    if torch is not None:
        record = compute(torch)
        kept = encode(record if keep is None else keep(record))
        if RECORDING:
            _recorded.setdefault(test.module, {}).setdefault(test.name, []).append({"in": print_, "out": kept})
        elif CHECKING:
            committed = _lookup(test, index, print_)
            regenerate = f"re-run `{RECORD_COMMAND} tests/{test.module}.py` with PyTorch installed and commit it"
            if committed is None and test.generated:
                return record           # an example the recording session did not generate: nothing to check
            if committed is None:
                pytest.fail(f"no recorded PyTorch output for call {index} of this test in "
                            f"tests/fixtures/{test.module}.json.gz: {regenerate}")
            found = differences(decode(kept), committed, tolerance) if stable else []
            if found:
                pytest.fail(f"the recorded PyTorch output of call {index} is stale ({'; '.join(found[:3])}): "
                            f"{regenerate}")
        return record
    committed = _lookup(test, index, print_)
    if committed is None:
        reason = ("no recorded PyTorch output for these inputs (stale fixture)"
                  if test.name in _committed(test.module) else "no recorded PyTorch output for this test")
        pytest.skip(f"PyTorch not installed and {reason}: mirror test skipped")
    return committed


def encode_fingerprint(inputs):
    return encode_plain(fingerprint(inputs))


def encode_plain(obj):
    """A fingerprint (already JSON-able but for complex sums and tuples) as JSON data."""
    return json.loads(json.dumps(obj))


def write_recorded(keep_others=False):
    """Record mode, end of session: each module that ran gets its fixture file rewritten from this session's
    records (or removed, when none of its tests asks PyTorch any more). ``keep_others`` (a run of some tests
    only, ``-k``): the committed records of the module's tests that did not run are kept."""
    FIXTURES.mkdir(exist_ok=True)
    written = []
    for module in sorted(_ran_modules):
        path = fixture_path(module)
        records = _recorded.get(module)
        if keep_others:
            records = {**{name: entries for name, entries in _committed(module).items()
                          if name not in _ran_tests.get(module, ())}, **(records or {})}
        if not records:
            if path.exists():
                path.unlink()
            continue
        text = json.dumps(records, sort_keys=True, separators=(",", ":"))
        path.write_bytes(gzip.compress(text.encode(), compresslevel=9, mtime=0))
        written.append((path, sum(len(v) for v in records.values())))
    return written
