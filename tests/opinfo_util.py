"""PyTorch's own operator database (OpInfo) as a test oracle.

``torch.testing._internal.common_methods_invocations.op_db`` lists, for each PyTorch op, sample inputs
(``SampleInput``: an input, positional args, keyword args), and for many ops inputs that must raise
(``ErrorInput``). These helpers convert a sample to minigrad (tensors, dtypes, sizes, devices), run it in both
libraries and compare what comes out: values, dtypes, and the float64 gradients of a random upstream gradient.

    for op in opinfos("tan"):
        for sample in samples(op):
            compare_sample(op, sample, resolve(op))
"""
import itertools
import json
import random

import numpy as np
import pytest

import minigrad as mg

from . import oracle
from .mirror import torch_or_skip
from .opinfo_record import convert_recorded, leaves, snap_sample
from .oracle import RecordedError, RecordedTensor

_DB = []


def op_db():
    """PyTorch's OpInfo list (it imports ``expecttest``, which the test extra installs)."""
    if not _DB:
        torch_or_skip()
        from torch.testing._internal.common_methods_invocations import op_db as db
        _DB.extend(db)
    return _DB


def opinfos(name, variant=None):
    """The OpInfos named ``name`` (all variants, or the one whose ``variant_test_name`` is ``variant``)."""
    found = [op for op in op_db() if op.name == name and (variant is None or op.variant_test_name == variant)]
    assert found, f"no OpInfo named {name!r} (variant {variant!r})"
    return found


RANDOM_FILLS = ("uniform", "cauchy", "exponential", "geometric", "log_normal")
"""The OpInfos of PyTorch's in-place random fills: no function of that name, the op is ``Tensor.cauchy_``..."""


def resolve(op, kind="function"):
    """minigrad's callable for an OpInfo: ``kind`` is ``"function"`` (``mg.linalg.inv``, ``mg.nn.functional.x``,
    or a Tensor method called as ``Tensor.name(input, ...)`` when PyTorch's op is a method only), ``"method"``
    or ``"inplace"``. None when minigrad lacks it. ``op`` may be the OpInfo's name."""
    name = op if isinstance(op, str) else op.name
    if kind == "method":
        return tensor_attribute(name)
    if kind == "inplace":
        return tensor_attribute(name if name.endswith("_") else name + "_")
    obj = mg
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            break
    if (obj is None or not callable(obj)) and "." not in name:   # mg.float is a dtype: Tensor.float the op
        obj = tensor_attribute(name)
    if obj is None and name in RANDOM_FILLS:
        obj = tensor_attribute(name + "_")   # "cauchy": PyTorch has only the in-place fill Tensor.cauchy_
    return obj


def tensor_attribute(name):
    """``Tensor``'s own attribute ``name`` (a method or property), not one inherited from ``object`` or the
    metaclass (``type.__ror__`` builds ``int | str``: it is no Tensor operator)."""
    for cls in mg.Tensor.__mro__[:-1]:
        if name in vars(cls):
            return getattr(mg.Tensor, name)
    return None


def samples(op, dtype=None, requires_grad=None, limit=None, scan=None):
    """``op``'s sample inputs in ``dtype`` (float64 by default), with ``requires_grad`` set when the op
    supports autograd and the dtype is floating; at most ``limit`` of them (spread over the list, or over its
    first ``scan`` samples: some ops have over a thousand)."""
    torch = torch_or_skip()
    dtype = torch.float64 if dtype is None else dtype
    if requires_grad is None:
        requires_grad = bool(op.supports_autograd) and (dtype.is_floating_point or dtype.is_complex)
    torch.manual_seed(0)   # once: PyTorch's per-sample reseeding costs a stack trace per sample (lazy device seeding)
    random.seed(0)         # some sample functions draw from Python's random (eigh's UPLO, the losses' margins)
    found = list(itertools.islice(op.sample_inputs("cpu", dtype, requires_grad=requires_grad, set_seed=False), scan))
    return spread(found, limit)


def map_sample(sample, fn):
    """A new SampleInput whose tensors (in its input, args and kwargs, inside lists, tuples and dicts) are
    ``fn(tensor)``."""
    torch = torch_or_skip()

    def mapped(obj):
        if isinstance(obj, torch.Tensor):
            return fn(obj)
        if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
            return type(obj)(mapped(o) for o in obj)
        if isinstance(obj, dict):
            return {k: mapped(v) for k, v in obj.items()}
        return obj
    return type(sample)(mapped(sample.input), args=mapped(tuple(sample.args)), kwargs=mapped(dict(sample.kwargs)))


def spread(found, limit):
    """At most ``limit`` items of the list ``found``, evenly spread over it (all when ``limit`` is None)."""
    if limit is None or len(found) <= limit:
        return found
    step = len(found) / limit
    return [found[int(i * step)] for i in range(limit)]


def error_inputs(op):
    """``op``'s inputs that PyTorch refuses (``ErrorInput``: ``.sample_input``, ``.error_type``, ``.error_regex``)."""
    torch = torch_or_skip()
    if op.error_inputs_func is None:
        return []
    torch.manual_seed(0)
    random.seed(0)
    return list(op.error_inputs("cpu", set_seed=False))


# --------------------------------------------------------------------------- conversion
def dtype_to_mg(dtype):
    """minigrad's dtype of a torch dtype (``torch.float64`` -> ``mg.float64``), by name."""
    name = str(dtype).rpartition(".")[2]
    found = getattr(mg, name, None)
    if found is None:
        pytest.skip(f"minigrad has no dtype {name}")
    return found


def _storage_view(torch, obj):
    """For a sample tensor that views part of a larger storage (an offset, or more storage than it covers), the
    minigrad tensor with the same storage and geometry (``as_strided`` of a copy of the whole storage), so that ops
    that read the storage (``as_strided``) see what PyTorch's see; None for an ordinary tensor."""
    if obj.is_conj() or obj.is_neg() or obj.numel() == 0:   # an empty view may sit past its storage's end
        return None
    elements = obj.untyped_storage().nbytes() // obj.element_size()
    if obj.storage_offset() == 0 and elements == obj.numel():
        return None
    whole = _numpy(torch.as_strided(obj.detach(), (elements,), (1,), 0)).copy()
    return mg.tensor(whole, dtype=dtype_to_mg(obj.dtype)).as_strided(tuple(obj.shape), obj.stride(),
                                                                      obj.storage_offset())


def to_mg(obj, memo=None):
    """``obj`` with every torch object replaced by minigrad's: tensors (values copied, ``requires_grad`` kept;
    one torch tensor used twice becomes one minigrad tensor), dtypes, ``Size`` (a tuple), devices (``'cpu'``),
    memory formats and layouts (by name), inside lists, tuples and dicts."""
    torch = torch_or_skip()
    memo = {} if memo is None else memo
    if isinstance(obj, torch.Tensor):
        if id(obj) not in memo:
            if obj.device.type == "meta":
                pytest.skip("sample tensor on the meta device (no values)")
            if obj.layout == torch.sparse_coo and obj.dtype != torch.complex32:     # indices and values copied
                t = mg.sparse_coo_tensor(to_mg(obj._indices().clone(), memo), to_mg(obj._values().clone(), memo),
                                         tuple(obj.shape), is_coalesced=obj.is_coalesced())
                memo[id(obj)] = (obj, t.requires_grad_(obj.requires_grad))
                return t
            if obj.dtype == torch.complex32 or obj.layout != torch.strided or obj.is_quantized:
                pytest.skip(f"sample tensor of dtype {obj.dtype}, layout {obj.layout}")
            t = _storage_view(torch, obj)
            if t is None:
                array = _numpy(obj).copy()
                t = mg.tensor(array, dtype=dtype_to_mg(obj.dtype))
            if obj.requires_grad:
                t.requires_grad_(True)
            memo[id(obj)] = (obj, t)   # the torch tensor kept alive: its id cannot be reused meanwhile
        return memo[id(obj)][1]
    if isinstance(obj, torch.dtype):
        return dtype_to_mg(obj)
    if isinstance(obj, torch.Size):
        return tuple(obj)
    if isinstance(obj, torch.device):
        return str(obj)
    if isinstance(obj, (torch.memory_format, torch.layout)):
        name = str(obj).rpartition(".")[2]
        found = getattr(mg, name, None)
        if found is None:
            pytest.skip(f"minigrad has no {name}")
        return found
    if isinstance(obj, torch.nn.Module):     # PairwiseDistance() as distance_function=, a layer given to a container
        pytest.skip(f"sample passes a module instance ({type(obj).__name__}), which is not converted")
    if callable(obj) and (getattr(obj, "__module__", None) or "").startswith("torch") and hasattr(obj, "__name__"):
        found = getattr(mg.nn.functional, obj.__name__, None) or getattr(mg, obj.__name__, None)
        if found is None:                      # a torch function passed as an argument (distance_function=...)
            pytest.skip(f"minigrad has no {obj.__name__}")
        return found
    if isinstance(obj, torch.Generator):
        pytest.skip("the sample passes a random-number generator object")
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(to_mg(o, memo) for o in obj)
    if isinstance(obj, dict):
        return {k: to_mg(v, memo) for k, v in obj.items()}
    return obj


def _layer_to_mg(layer):
    """minigrad's twin of a PyTorch Transformer layer passed as a constructor argument (TransformerEncoder takes
    one), rebuilt from its attributes; its parameters are copied later with the enclosing module's."""
    torch = oracle.live_torch()
    kinds = {torch.nn.TransformerEncoderLayer: mg.nn.TransformerEncoderLayer,
             torch.nn.TransformerDecoderLayer: mg.nn.TransformerDecoderLayer}
    cls = kinds.get(type(layer))
    if cls is None:
        pytest.fail(f"no conversion for a {type(layer).__name__} constructor argument")
    attn = layer.self_attn
    return cls(attn.embed_dim, attn.num_heads, layer.linear1.out_features, layer.dropout.p,
               activation=ctor_to_mg(layer.activation), layer_norm_eps=layer.norm1.eps,
               batch_first=attn.batch_first, norm_first=layer.norm_first, bias=layer.linear1.bias is not None)


def ctor_to_mg(obj):
    """Constructor arguments in minigrad: PyTorch modules and ``torch.nn.functional`` functions by name, the rest
    as ``to_mg`` converts it."""
    torch = oracle.live_torch()
    if isinstance(obj, torch.nn.Module):
        if type(obj).__name__ in ("TransformerEncoderLayer", "TransformerDecoderLayer"):
            return _layer_to_mg(obj)
        return getattr(mg.nn, type(obj).__name__)()   # an argument-less activation module (GELU, ReLU, ...)
    if callable(obj) and getattr(torch.nn.functional, getattr(obj, "__name__", ""), None) is obj:
        return getattr(mg.nn.functional, obj.__name__)
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(ctor_to_mg(o) for o in obj)
    if isinstance(obj, dict):
        return {k: ctor_to_mg(v) for k, v in obj.items()}
    return to_mg(obj)


def convert_sample(sample):
    """(input, args, kwargs, memo) of a ``SampleInput`` in minigrad; ``memo`` maps torch tensors to minigrad's."""
    memo = {}
    return to_mg(sample.input, memo), to_mg(sample.args, memo), to_mg(sample.kwargs, memo), memo


# --------------------------------------------------------------------------- comparison
def flat_outputs(out):
    """The tensors of an op's output (a tensor, or a tuple, list or named tuple of them) in order, and numbers."""
    if isinstance(out, (list, tuple)):
        return [leaf for o in out for leaf in flat_outputs(o)]
    return [out]


def _numpy(t):
    """A torch tensor's values as an ndarray; bfloat16 ones (which torch cannot hand to NumPy) through their bits."""
    torch = torch_or_skip()
    t = t.detach().resolve_conj().resolve_neg()
    if t.dtype == torch.bfloat16:
        return t.contiguous().view(torch.int16).numpy(force=True).view(mg.bfloat16)
    return t.numpy(force=True)   # force: a ZeroTensor gradient too


def _values(t):
    if isinstance(t, RecordedTensor):
        values = t.numpy()       # bfloat16 recorded as float32 (exactly): back to bfloat16 for the ulp comparison
        return values.astype(mg.bfloat16) if t.dtype.name == "bfloat16" else values
    torch = oracle.live_torch()
    if torch is not None and isinstance(t, torch.Tensor):
        return _numpy(t)
    if isinstance(t, mg.Tensor):
        return t.detach().numpy()
    return np.asarray(t)


def _dtype_name(t):
    return str(t.dtype).rpartition(".")[2]


def _recorded(outputs, values=True):
    """PyTorch's outputs (live tensors or already recorded) as recorded, flattened."""
    torch = oracle.live_torch()
    return [oracle.snap(w, values=values, grad=False) if torch is not None and isinstance(w, torch.Tensor) else w
            for w in flat_outputs(outputs)]


def assert_same_outputs(out_mg, out_th, rtol=1e-7, atol=1e-7, what="forward", ulps=1):
    """Every output tensor has PyTorch's shape, dtype (by name) and values (NaNs where PyTorch has them);
    bfloat16 values within ``ulps`` units in the last place of PyTorch's (0: bit for bit).
    ``out_th``: PyTorch's outputs, live or recorded (``oracle.RecordedTensor``)."""
    got, want = flat_outputs(out_mg), _recorded(out_th)
    assert len(got) == len(want), f"{what}: {len(got)} outputs, PyTorch gives {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        if isinstance(w, RecordedTensor):
            assert isinstance(g, mg.Tensor), f"{what} output {i}: a {type(g).__name__}, PyTorch gives a Tensor"
            assert tuple(g.shape) == tuple(w.shape), f"{what} output {i}: shape {tuple(g.shape)}, PyTorch {tuple(w.shape)}"
            assert _dtype_name(g) == _dtype_name(w), f"{what} output {i}: dtype {g.dtype}, PyTorch {w.dtype}"
        gv, wv = _values(g), _values(w)
        if {gv.dtype, wv.dtype} & {np.dtype(mg.bfloat16), np.dtype(np.float16)}:
            assert_16_bit_ulps(gv, wv, ulps, f"{what} output {i}")
        elif gv.dtype.kind in "fc" or wv.dtype.kind in "fc":
            np.testing.assert_allclose(gv, wv, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"{what} output {i}")
        else:
            np.testing.assert_array_equal(gv, wv, err_msg=f"{what} output {i}")


def assert_same_shapes(out_mg, out_th):
    """Shapes and dtypes agree (random or uninitialized values are not compared)."""
    got, want = flat_outputs(out_mg), _recorded(out_th, values=False)
    assert len(got) == len(want), f"forward: {len(got)} outputs, PyTorch gives {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        if hasattr(w, "shape"):
            assert tuple(g.shape) == tuple(w.shape), \
                f"forward output {i}: shape {tuple(g.shape)}, PyTorch {tuple(w.shape)}"
            assert _dtype_name(g) == _dtype_name(w), f"forward output {i}: dtype {g.dtype}, PyTorch {w.dtype}"


def assert_16_bit_ulps(got, want, ulps, what):
    """Two bfloat16 or float16 arrays (the 16-bit one's dtype) within ``ulps`` of each other (NaN where the other has
    NaN; +0 and -0 one apart), or within ``ulps`` ulps of the largest value of ``want`` (a sum that cancels: its small
    results are the rounding noise of large terms, as in float32's atol)."""
    from .low_precision_helpers import EPS, ulp_distance
    got, want = np.asarray(got), np.asarray(want)
    name = "bfloat16" if np.dtype(mg.bfloat16) in (got.dtype, want.dtype) else "float16"
    got, want = got.astype(getattr(mg, name)), want.astype(getattr(mg, name))
    distance = ulp_distance(got.view(np.uint16), want.view(np.uint16), name)
    g, w = got.astype(np.float64), want.astype(np.float64)
    finite = np.isfinite(w)
    if ulps and distance.size and finite.any():      # ulps=0: bit for bit, no allowance
        largest = np.abs(w[finite]).max()
        with np.errstate(invalid="ignore"):
            distance = np.where(np.abs(g - w) <= ulps * EPS[name] * largest, 0, distance)
    worst = int(distance.max()) if distance.size else 0
    assert worst <= ulps, (f"{what}: {int((distance > ulps).sum())} of {distance.size} {name} values more than {ulps} "
                           f"ulp(s) from PyTorch's (worst {worst})")


def _differentiable(outputs, complex_outputs=False):
    torch = torch_or_skip()
    return [o for o in outputs if isinstance(o, torch.Tensor) and o.requires_grad
            and (o.dtype.is_floating_point or (complex_outputs and o.dtype.is_complex))]


def upstream_gradients(rng, outputs):
    """One random upstream gradient per output (PyTorch's or minigrad's): standard normal, with a standard normal
    imaginary part for a complex output."""
    ups = []
    for out in outputs:
        u = rng.standard_normal(tuple(out.shape))
        ups.append(u + 1j * rng.standard_normal(tuple(out.shape)) if out.is_complex() else u)
    return ups


def record_out_of_place(op, sample, torch_fn=None, *, values=True, gradients=True, processed_forward=False, seed=0,
                        watch=False, complex_outputs=False):
    """PyTorch's side of one sample, as plain data: the sample as it was, the outputs (and, with
    ``processed_forward``, the outputs as the OpInfo processes them), with ``watch`` the inputs PyTorch changed
    (their values afterwards, None where unchanged), and for float outputs (``complex_outputs``: and complex ones,
    with complex upstream gradients) of inputs that require grad the gradients of every such input for one random
    upstream gradient per output (or the exception kind when PyTorch has no derivative). An exception PyTorch
    raises is recorded as ``{"raised": ...}``."""
    torch = oracle.live_torch()
    record = {"sample": snap_sample(sample)}
    inputs_th = _torch_tensors(sample)
    before = [_numpy(t).copy() for t in inputs_th] if watch else []
    try:
        out_th = (op.op if torch_fn is None else torch_fn)(sample.input, *sample.args, **sample.kwargs)
    except Exception as error:   # noqa: BLE001 - replayed to the comparison as it happened
        record["raised"] = oracle.snap(error)
        return record
    record["out"] = _recorded(out_th, values)
    if watch:
        record["after"] = [None if _numpy(t).shape == b.shape and np.array_equal(_numpy(t), b, True)
                           else oracle.snap(t.detach(), grad=False) for t, b in zip(inputs_th, before)]
    if not values:
        return record
    if processed_forward:
        record["processed"] = _recorded(sample.output_process_fn_grad(out_th))
    if not gradients or not op.supports_autograd:
        return record
    if not any(t.requires_grad for t in leaves(record["sample"])):
        return record
    try:
        outs_th = flat_outputs(sample.output_process_fn_grad(out_th))
    except Exception as error:   # noqa: BLE001
        record["grad"] = {"skip": f"output_process_fn_grad does not apply: {error!r}"}
        return record
    pairs = [i for i, t in enumerate(outs_th) if _differentiable([t], complex_outputs)]
    grad = record["grad"] = {"pairs": pairs, "shapes": [tuple(outs_th[i].shape) for i in pairs]}
    if not pairs:
        return record
    ups = upstream_gradients(np.random.default_rng(seed), [outs_th[i] for i in pairs])
    th_inputs = [t for t in _live_leaves(sample) if t.requires_grad]
    try:
        grads_th = torch.autograd.grad([outs_th[i] for i in pairs], th_inputs,
                                       [torch.tensor(u, dtype=outs_th[i].dtype) for u, i in zip(ups, pairs)],
                                       allow_unused=True)
    except (RuntimeError, NotImplementedError) as refused:    # no derivative in PyTorch
        grad["refused"] = oracle.snap(refused)
        return record
    grad["grads"] = [None if g is None else oracle.snap(g, grad=False) for g in grads_th]
    return record


def _torch_tensors(sample):
    torch = oracle.live_torch()
    return [t for t in flat_outputs([sample.input, list(sample.args), list(sample.kwargs.values())])
            if isinstance(t, torch.Tensor)]


def _live_leaves(sample):
    """The distinct torch tensors of a live sample in the order ``convert_sample`` meets them."""
    memo = {}
    to_mg_order(sample.input, memo), to_mg_order(sample.args, memo), to_mg_order(sample.kwargs, memo)
    return list(memo.values())


def to_mg_order(obj, memo):
    torch = oracle.live_torch()
    if isinstance(obj, torch.Tensor):
        memo.setdefault(id(obj), obj)
    elif isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        for o in obj:
            to_mg_order(o, memo)
    elif isinstance(obj, dict):
        for o in obj.values():
            to_mg_order(o, memo)


def check_out_of_place(record, fn, rtol=1e-7, atol=1e-7, grad_rtol=1e-6, grad_atol=1e-6, seed=0, values=True,
                       processed_forward=False, live_sample=None, ulps=1):
    """minigrad's ``fn`` on a recorded sample, compared with PyTorch's record (``record_out_of_place``).
    ``live_sample``: the SampleInput itself when PyTorch is installed (its ``output_process_fn_grad``, a PyTorch
    lambda, is applied to minigrad's outputs as to PyTorch's; a replay of a sample that has one compares the
    forward only, and a processed forward not at all: it skips). Returns what was compared."""
    x, args, kwargs, memo = convert_recorded(record["sample"])
    if "raised" in record:
        raise record["raised"].exception()
    out_mg = fn(x, *args, **kwargs)
    if not values:
        assert_same_shapes(out_mg, record["out"])
        return "shapes"
    if processed_forward:   # outputs unique only up to sign or phase (eigenvectors): compared as the OpInfo processes them
        if live_sample is None:
            pytest.skip("the OpInfo processes this op's outputs with a PyTorch function: PyTorch not installed")
        assert_same_outputs(live_sample.output_process_fn_grad(out_mg), record["processed"], rtol, atol, ulps=ulps)
    else:
        assert_same_outputs(out_mg, record["out"], rtol, atol, ulps=ulps)
    grad = record.get("grad")
    if grad is None:
        return "forward"
    if "skip" in grad:
        pytest.skip(grad["skip"])
    if record["sample"].identity_process:
        processed_mg = out_mg
    elif live_sample is None:
        return "forward (gradient: the OpInfo's output processing needs PyTorch)"
    else:
        try:
            processed_mg = live_sample.output_process_fn_grad(out_mg)
        except Exception as error:    # a torch-only post-processing lambda: compare the raw outputs
            pytest.skip(f"output_process_fn_grad does not apply to minigrad outputs: {error!r}")
    outs_mg = flat_outputs(processed_mg)
    pairs = [(i, shape) for i, shape in zip(grad["pairs"], grad["shapes"]) if i < len(outs_mg)]
    if not pairs:
        return "forward"
    leaves = [m for r, m in memo.values() if r.requires_grad]
    mg_outs = [outs_mg[i] for i, _ in pairs]
    ups = upstream_gradients(np.random.default_rng(seed), mg_outs)    # the outputs' dtypes matched PyTorch's above
    if "refused" in grad:              # no derivative in PyTorch: minigrad must refuse too
        with pytest.raises(type(grad["refused"].exception())):
            mg.autograd.grad(mg_outs, leaves, [mg.tensor(u, dtype=m.dtype) for u, m in zip(ups, mg_outs)],
                             allow_unused=True)
        return "forward, refused gradient"
    for m in mg_outs:
        assert m.requires_grad, "minigrad's output does not require grad where PyTorch's does"
    grads_mg = mg.autograd.grad(mg_outs, leaves, [mg.tensor(u, dtype=m.dtype) for u, m in zip(ups, mg_outs)],
                                allow_unused=True)
    for i, (gm, gt) in enumerate(zip(grads_mg, grad["grads"])):
        if gt is None:
            assert gm is None or not np.any(gm.detach().numpy()), f"gradient of input {i}: PyTorch has none"
            continue
        assert gm is not None, f"gradient of input {i}: minigrad gives none, PyTorch does"
        single = gm.dtype in (np.float32, np.complex64)     # a float32 leaf beside float64 ones (cov's aweights):
        np.testing.assert_allclose(gm.detach().numpy(), _values(gt),  # its gradient is float32, summed in another order
                                   rtol=max(grad_rtol, 1e-4) if single else grad_rtol,
                                   atol=max(grad_atol, 1e-5) if single else grad_atol, err_msg=f"gradient of input {i}")
    return "forward and gradient"


def compare_sample(op, sample, fn, rtol=1e-7, atol=1e-7, grad_rtol=1e-6, grad_atol=1e-6, gradients=True, seed=0,
                   torch_fn=None, processed_forward=False, ulps=1):
    """Run ``sample`` through PyTorch's ``torch_fn`` (``op.op`` by default) and minigrad's ``fn``; compare outputs
    and, for float outputs of inputs that require grad, the gradients of every input for one random upstream
    gradient per output.

    ``fn`` is called as PyTorch's function is: ``fn(input, *args, **kwargs)`` (a method works the same way)."""
    torch_or_skip()
    record = record_out_of_place(op, sample, torch_fn, gradients=gradients, processed_forward=processed_forward,
                                 seed=seed)
    return check_out_of_place(record, fn, rtol, atol, grad_rtol, grad_atol, seed, processed_forward=processed_forward,
                              live_sample=sample, ulps=ulps)


REPLAY_SAMPLES = 6     # samples of one ``compare_samples`` call kept in its fixture (a spread); live: all of them
# a fixture keeps, of a list of recorded samples, the cheapest up to REPLAY_CHARACTERS of JSON (or, when none fits,
# the cheapest one up to REPLAY_ONE characters; none when all are larger): the fixtures stay a few MB
REPLAY_CHARACTERS, REPLAY_ONE = 3000, 40000


def _float_free(obj):
    """An encoded record with every float replaced by one fixed-width placeholder (``within_budget``'s cost), as
    long in JSON as the committed records' floats are on average (14 characters)."""
    if isinstance(obj, float):
        return "0.1234567890"
    if isinstance(obj, list):
        return [_float_free(o) for o in obj]
    if isinstance(obj, dict):
        return {k: _float_free(v) for k, v in obj.items()}
    return obj


def within_budget(items):
    """Those of the recorded ``items`` whose JSON is the cheapest, in their order, up to REPLAY_CHARACTERS in all;
    else the cheapest one if it is at most REPLAY_ONE characters; else none. A float counts as a fixed width:
    the cost, and so the choice, must not depend on PyTorch's last bits, which differ between CPUs (an FFT's
    gradients on an AVX-512 Xeon and an AVX2 EPYC printed a few characters longer or shorter and chose another
    sample of ``fft.ihfft``, failing the CI check of the committed records)."""
    cost = [len(json.dumps(_float_free(oracle.encode(item)), separators=(",", ":"))) for item in items]
    chosen, total = set(), 0
    for i in sorted(range(len(items)), key=lambda i: (cost[i], i)):
        if total + cost[i] <= REPLAY_CHARACTERS:
            chosen.add(i)
            total += cost[i]
    if not chosen and items and min(cost) <= REPLAY_ONE:
        chosen.add(cost.index(min(cost)))
    return [item for i, item in enumerate(items) if i in chosen]


def _float64_samples(op, torch):
    return samples(op)


def _record_samples(name, found, gradients, seed, complex_gradients):
    """PyTorch's side of ``compare_samples``: each sample's record, and the live SampleInputs under ``"live"``."""
    torch = oracle.live_torch()
    (op,) = opinfos(name)
    listed = found(op, torch)
    entries = [record_out_of_place(op, sample, gradients=gradients, seed=seed) for sample in listed]
    if complex_gradients:
        for entry, sample in zip(entries, listed):
            entry["complex"] = record_complex_gradients(op, sample)
    return {"entries": entries, "live": listed, "listed": len(listed),
            "complex": sum(bool(e.get("complex")) for e in entries)}


def _replayable(entry):
    """Whether minigrad can be given a recorded sample (no value it cannot hold, PyTorch did not raise)."""
    from .opinfo_record import Unconvertible, find
    return not find(entry["sample"], Unconvertible) and "raised" not in entry


def _keep_spread(record):
    """The fixture's part of a ``compare_samples`` record: a spread of REPLAY_SAMPLES replayable samples, the
    cheapest of them within the budget (``within_budget``)."""
    usable = [e for e in record["entries"] if _replayable(e)] or record["entries"]
    return {"entries": within_budget(spread(usable, REPLAY_SAMPLES)), "listed": record["listed"],
            "complex": record["complex"]}


def compare_samples(name, fn, found=_float64_samples, rtol=1e-7, atol=1e-7, grad_rtol=1e-6, grad_atol=1e-6,
                    gradients=True, seed=0, complex_gradients=False):
    """``compare_sample`` for each SampleInput of the OpInfo ``name`` (the only one so named) that
    ``found(op, torch)`` lists (default: its float64 samples), and with ``complex_gradients``
    ``compare_complex_gradients`` too; PyTorch's side live or recorded (``tests/oracle.py``; a replay compares a
    fixed spread of REPLAY_SAMPLES of them). Returns how many samples PyTorch lists (a live run compares them all),
    with ``complex_gradients`` also how many of them have complex gradients."""
    record = oracle.ask(lambda torch: _record_samples(name, found, gradients, seed, complex_gradients),
                        inputs=(name, gradients, seed, complex_gradients), tolerance=(rtol, atol), keep=_keep_spread)
    live = record.get("live") or [None] * len(record["entries"])
    for entry, sample in zip(record["entries"], live):
        check_out_of_place(entry, fn, rtol, atol, grad_rtol, grad_atol, seed, live_sample=sample)
        if entry.get("complex"):
            check_complex_gradients(entry, fn)
    return (record["listed"], record["complex"]) if complex_gradients else record["listed"]


def check_error_inputs(name, fn, select=lambda error, torch: True):
    """Each ``ErrorInput`` of the OpInfo ``name`` that ``select(error, torch)`` keeps raises PyTorch's exception
    type in minigrad's ``fn`` (``assert_raises_like``), PyTorch's side live or recorded. Returns how many."""
    def record(torch):
        (op,) = opinfos(name)
        return [{"sample": snap_sample(e.sample_input), "error_type": oracle.builtin_kind_of(e.error_type)}
                for e in error_inputs(op) if select(e, torch)]

    found = oracle.ask(record, inputs=(name,))
    for entry in found:
        x, args, kwargs, _ = convert_recorded(entry["sample"])
        with pytest.raises(RecordedError(entry["error_type"]).type):
            fn(x, *args, **kwargs)
    return len(found)


def record_complex_gradients(op, sample, seed=1):
    """PyTorch's side of ``compare_complex_gradients``: the complex outputs' positions and shapes and the gradients
    of the inputs that require grad for one random complex upstream gradient per complex output; None when the
    sample has no such output or input."""
    torch = oracle.live_torch()
    out_th = flat_outputs(op.op(sample.input, *sample.args, **sample.kwargs))
    leaves_th = [t for t in _live_leaves(sample) if t.requires_grad]
    outs = [i for i, t in enumerate(out_th) if isinstance(t, torch.Tensor) and t.dtype.is_complex]
    if not leaves_th or not outs:
        return None
    rng = np.random.default_rng(seed)
    ups = [rng.standard_normal(out_th[i].shape) + 1j * rng.standard_normal(out_th[i].shape) for i in outs]
    grads = torch.autograd.grad([out_th[i] for i in outs], leaves_th,
                                [torch.tensor(u, dtype=out_th[i].dtype) for u, i in zip(ups, outs)])
    return {"outs": outs, "seed": seed, "grads": [oracle.snap(g, grad=False) for g in grads]}


def check_complex_gradients(record, fn, rtol=1e-9, atol=1e-9):
    """minigrad's side of ``compare_complex_gradients`` against a sample's recorded ``"complex"`` gradients."""
    found = record["complex"]
    x, args, kwargs, memo = convert_recorded(record["sample"])
    out_mg = flat_outputs(fn(x, *args, **kwargs))
    leaves_mg = [m for r, m in memo.values() if r.requires_grad]
    outs = [out_mg[i] for i in found["outs"]]
    rng = np.random.default_rng(found["seed"])
    ups = [rng.standard_normal(m.shape) + 1j * rng.standard_normal(m.shape) for m in outs]
    grads_mg = mg.autograd.grad(outs, leaves_mg, [mg.tensor(u, dtype=m.dtype) for u, m in zip(ups, outs)])
    for i, (gm, gt) in enumerate(zip(grads_mg, found["grads"])):
        assert _dtype_name(gm) == _dtype_name(gt), f"gradient of input {i}: dtype {gm.dtype}, PyTorch {gt.dtype}"
        np.testing.assert_allclose(gm.numpy(), _values(gt), rtol=rtol, atol=atol, err_msg=f"gradient of input {i}")


def compare_complex_gradients(op, sample, fn, rtol=1e-9, atol=1e-9, seed=1):
    """For complex outputs, which ``compare_sample`` leaves out of its gradient check: the gradients of every
    input that requires grad for one random complex upstream gradient per complex output, PyTorch's and
    minigrad's (dtype and values). False when the sample has no such output or input."""
    torch = torch_or_skip()
    x, args, kwargs, memo = convert_sample(sample)
    out_th = op.op(sample.input, *sample.args, **sample.kwargs)
    out_mg = fn(x, *args, **kwargs)
    leaves = [(th, m) for th, m in memo.values() if th.requires_grad]
    outs = [(m, t) for m, t in zip(flat_outputs(out_mg), flat_outputs(out_th)) if t.dtype.is_complex]
    if not leaves or not outs:
        return False
    rng = np.random.default_rng(seed)
    ups = [rng.standard_normal(t.shape) + 1j * rng.standard_normal(t.shape) for _, t in outs]
    grads_th = torch.autograd.grad([t for _, t in outs], [th for th, _ in leaves],
                                   [torch.tensor(u, dtype=t.dtype) for u, (_, t) in zip(ups, outs)])
    grads_mg = mg.autograd.grad([m for m, _ in outs], [m for _, m in leaves],
                                [mg.tensor(u, dtype=m.dtype) for u, (m, _) in zip(ups, outs)])
    for i, (gm, gt) in enumerate(zip(grads_mg, grads_th)):
        assert _dtype_name(gm) == _dtype_name(gt), f"gradient of input {i}: dtype {gm.dtype}, PyTorch {gt.dtype}"
        np.testing.assert_allclose(gm.numpy(), _values(gt), rtol=rtol, atol=atol, err_msg=f"gradient of input {i}")
    return True


def assert_raises_like(op, error, fn):
    """The ``ErrorInput`` ``error`` raises in minigrad too, with PyTorch's exception type."""
    x, args, kwargs, _ = convert_sample(error.sample_input)
    with pytest.raises(error.error_type):
        fn(x, *args, **kwargs)


__all__ = ["op_db", "opinfos", "resolve", "samples", "spread", "error_inputs", "to_mg", "convert_sample", "compare_sample",
           "assert_same_outputs", "assert_raises_like", "compare_complex_gradients", "flat_outputs", "dtype_to_mg",
           "record_out_of_place", "check_out_of_place", "assert_same_shapes", "compare_samples", "check_error_inputs",
           "within_budget"]
