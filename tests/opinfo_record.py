"""PyTorch's OpInfo samples as plain data, so that a run without PyTorch can replay them (``tests/oracle.py``).

A ``RecordedSample`` is a ``SampleInput`` taken apart: its input, args and kwargs with every tensor a
``RecordedTensor`` (values, dtype, ``requires_grad``, and ``ident``: one torch tensor used twice is one
minigrad tensor), dtypes by name, devices as strings, memory formats and layouts by name, PyTorch functions by
name, and what minigrad cannot be given (a complex32 or sparse tensor, a module instance, a generator) as
``Unconvertible`` with the reason. ``convert_recorded`` builds minigrad's (input, args, kwargs, memo) from it,
as ``opinfo_util.convert_sample`` does from a live sample; both paths go through it, so a run with PyTorch
converts exactly what a run without it replays.
"""
import numpy as np
import pytest

import minigrad as mg

from .oracle import RecordedDtype, RecordedObject, RecordedTensor, live_torch, register, snap, tensor_values


class Unconvertible:
    """A sample value minigrad cannot be given, with the reason (the sample is reported as not applicable)."""

    def __init__(self, reason):
        self.reason = reason

    def __repr__(self):
        return f"<unconvertible: {self.reason}>"


class TorchName:
    """A PyTorch memory format or layout, by name (``contiguous_format``, ``strided``)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


class TorchFunction:
    """A PyTorch function passed as an argument (``distance_function=torch.pairwise_distance``), by name."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<torch function {self.name}>"


class RecordedSample:
    """``SampleInput``'s input, args, kwargs as plain data; ``identity_process``: whether the sample's
    ``output_process_fn_grad`` leaves outputs as they are (else a live run applies PyTorch's lambda, and a
    replay compares the outputs unprocessed, forward only)."""

    def __init__(self, input, args, kwargs, identity_process=True, broadcasts_input=False):
        self.input, self.args, self.kwargs = input, tuple(args), dict(kwargs)
        self.identity_process, self.broadcasts_input = identity_process, broadcasts_input

    def __repr__(self):
        return f"RecordedSample(input={self.input!r}, args={self.args!r}, kwargs={self.kwargs!r})"


register("@U", Unconvertible, lambda u: u.reason, Unconvertible)
register("@name", TorchName, lambda n: n.name, TorchName)
register("@fn", TorchFunction, lambda f: f.name, TorchFunction)
register("@slice", slice, lambda s: [s.start, s.stop, s.step], lambda v: slice(*v))
register("@ellipsis", type(Ellipsis), lambda e: None, lambda v: Ellipsis)
# kwargs as a list of pairs: their order is kept (a fixture's dicts are written with sorted keys), and with it the
# order in which a sample's tensors are met (their gradients and writes are recorded in that order)
def _dump_sample(s):
    return {"input": s.input, "args": s.args, "kwargs": list(s.kwargs.items()), "identity": s.identity_process,
            "broadcasts": s.broadcasts_input}


def _without_out_values(s):
    """A sample as the staleness check compares it: ``out=`` tensors by dtype and shape only (PyTorch's samples
    make them with ``torch.empty``: their values are uninitialized memory, and minigrad, which has no ``out=``,
    never reads them)."""
    def meta(v):
        if isinstance(v, RecordedTensor):
            return RecordedTensor(v.dtype, v.shape)
        return type(v)(meta(x) for x in v) if isinstance(v, (list, tuple)) else v
    return dict(_dump_sample(s), kwargs=[(k, meta(v) if k == "out" else v) for k, v in s.kwargs.items()])


register("@S", RecordedSample, _dump_sample,
         lambda v: RecordedSample(v["input"], v["args"], dict(v["kwargs"]), v["identity"], v["broadcasts"]),
         compared=_without_out_values)


_IDENTITY = (lambda x: x).__code__


def _is_identity(fn):
    """Whether ``fn`` is ``lambda x: x`` (SampleInput's default), judged by its code: a probe cannot tell (the
    OpInfo of eigh returns anything but a tuple unchanged)."""
    code = getattr(fn, "__code__", None)
    return (code is not None and code.co_code == _IDENTITY.co_code and code.co_argcount == 1
            and not code.co_names and not getattr(fn, "__closure__", None))


def snap_value(obj, memo):
    """One sample value as plain data (``memo``: id of a torch tensor -> its RecordedTensor)."""
    torch = live_torch()
    if isinstance(obj, torch.Tensor):
        if id(obj) not in memo:
            if obj.dtype == torch.complex32 or obj.layout != torch.strided or obj.is_quantized:
                found = Unconvertible(f"sample tensor of dtype {obj.dtype}, layout {obj.layout}")
            elif obj.dim() > 64:
                found = Unconvertible(f"not expressible in NumPy: a tensor of {obj.dim()} dimensions")
            else:
                found = RecordedTensor(str(obj.dtype).rpartition(".")[2], tuple(obj.shape), tensor_values(obj),
                                       bool(obj.requires_grad), ident=len(memo))
                found.storage = _storage_view(torch, obj)
            memo[id(obj)] = (obj, found)      # the torch tensor kept alive: its id cannot be reused meanwhile
        return memo[id(obj)][1]
    if isinstance(obj, torch.dtype):
        return RecordedDtype(str(obj).rpartition(".")[2])
    if isinstance(obj, torch.Size):
        return tuple(int(s) for s in obj)
    if isinstance(obj, torch.device):
        return str(obj)
    if isinstance(obj, (torch.memory_format, torch.layout)):
        return TorchName(str(obj).rpartition(".")[2])
    if isinstance(obj, torch.nn.Module):
        return Unconvertible(f"sample passes a module instance ({type(obj).__name__}), which is not converted")
    if callable(obj) and (getattr(obj, "__module__", None) or "").startswith("torch") and hasattr(obj, "__name__"):
        return TorchFunction(obj.__name__)
    if isinstance(obj, torch.Generator):
        return Unconvertible("the sample passes a random-number generator object")
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(snap_value(o, memo) for o in obj)
    if isinstance(obj, dict):
        return {k: snap_value(v, memo) for k, v in obj.items()}
    return obj


def _storage_view(torch, obj):
    """For a sample tensor that views part of a larger storage (an offset, or more storage than it covers): the
    whole storage's values, the strides and the offset (``to_mg_recorded`` rebuilds the view with ``as_strided``,
    so that ops that read the storage see what PyTorch's see); None for an ordinary tensor."""
    if obj.is_conj() or obj.is_neg() or obj.numel() == 0:   # an empty view may sit past its storage's end
        return None
    elements = obj.untyped_storage().nbytes() // obj.element_size()
    if obj.storage_offset() == 0 and elements == obj.numel():
        return None
    whole = tensor_values(torch.as_strided(obj.detach(), (elements,), (1,), 0))
    return whole, list(obj.stride()), int(obj.storage_offset())


def snap_sample(sample):
    """A live ``SampleInput`` as a RecordedSample (values as they are now)."""
    memo = {}
    return RecordedSample(snap_value(sample.input, memo), snap_value(list(sample.args), memo),
                          snap_value(dict(sample.kwargs), memo), _is_identity(sample.output_process_fn_grad),
                          bool(getattr(sample, "broadcasts_input", False)))


def _dtype_to_mg(name):
    found = getattr(mg, name, None)
    if found is None:
        pytest.skip(f"minigrad has no dtype {name}")
    return found


def to_mg_recorded(obj, memo):
    """A recorded sample value in minigrad (``memo``: ident -> (RecordedTensor, minigrad tensor))."""
    if isinstance(obj, RecordedTensor):
        if obj.ident not in memo:
            dtype = _dtype_to_mg(obj.dtype.name)
            if obj.storage is None:
                t = mg.tensor(obj.values.copy(), dtype=dtype)
            else:                       # a view into a larger storage, rebuilt as one
                whole, stride, offset = obj.storage
                t = mg.tensor(whole.copy(), dtype=dtype).as_strided(obj.shape, tuple(stride), offset)
            if obj.requires_grad:
                t.requires_grad_(True)
            memo[obj.ident] = (obj, t)
        return memo[obj.ident][1]
    if isinstance(obj, RecordedDtype):
        return _dtype_to_mg(obj.name)
    if isinstance(obj, TorchName):
        found = getattr(mg, obj.name, None)
        if found is None:
            pytest.skip(f"minigrad has no {obj.name}")
        return found
    if isinstance(obj, TorchFunction):
        found = getattr(mg.nn.functional, obj.name, None) or getattr(mg, obj.name, None)
        if found is None:
            pytest.skip(f"minigrad has no {obj.name}")
        return found
    if isinstance(obj, Unconvertible):
        pytest.skip(obj.reason)
    if isinstance(obj, RecordedObject):
        pytest.skip(f"the sample passes a {obj.type_name}, which is not recorded")
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(to_mg_recorded(o, memo) for o in obj)
    if isinstance(obj, dict):
        return {k: to_mg_recorded(v, memo) for k, v in obj.items()}
    return obj


def convert_recorded(sample):
    """(input, args, kwargs, memo) of a RecordedSample in minigrad; ``memo`` maps ident -> (recorded, minigrad)."""
    memo = {}
    return (to_mg_recorded(sample.input, memo), to_mg_recorded(list(sample.args), memo),
            to_mg_recorded(dict(sample.kwargs), memo), memo)


def find(sample, cls, into_dicts=True):
    """Every ``cls`` instance in a recorded sample's (input, args, kwargs), in order (repeats included), looking
    into lists and tuples (and, with ``into_dicts``, dicts)."""
    found = []

    def walk(v):
        if isinstance(v, cls):
            found.append(v)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        elif into_dicts and isinstance(v, dict):
            for x in v.values():
                walk(x)
    walk([sample.input, list(sample.args), list(sample.kwargs.values())])
    return found


def leaves(sample):
    """The distinct RecordedTensors of a sample in ident order (the order ``convert_sample`` meets them)."""
    return sorted({t.ident: t for t in find(sample, RecordedTensor)}.values(), key=lambda t: t.ident)


__all__ = ["RecordedSample", "Unconvertible", "snap_sample", "snap", "convert_recorded", "find", "leaves"]
