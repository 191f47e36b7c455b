"""PyTorch's module database (``common_modules.module_db``) as an oracle for ``minigrad.nn``.

For every ModuleInfo (114 in PyTorch 2.13), in training and in eval mode, each of a spread of its
``ModuleInput``s is run through both libraries:

* the module is constructed from the same (converted) constructor arguments, PyTorch's cast to float64 as
  PyTorch's own module tests do; minigrad's state_dict keys must be PyTorch's, and PyTorch's parameter and
  buffer values are copied into minigrad's by name;
* forward: every output's shape, dtype and values;
* backward: one random float64 upstream gradient per differentiable output; the gradients of every input
  that requires grad and of every parameter;
* afterwards every buffer (running statistics, ``num_batches_tracked``) agrees;
* and the database's error inputs (``module_error_inputs_func``) raise as PyTorch's do.

Lazy modules are materialised by a first forward without grad in both libraries, then PyTorch's parameters
are copied and the comparison runs as for any module. A module minigrad lacks, or an input it does not
support, fails unless it is listed in ``SKIP_MODULES`` / ``SKIP_INPUTS`` with the reason.
"""
import os
import re
import warnings

import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip
from .opinfo_util import assert_same_outputs, ctor_to_mg, flat_outputs, to_mg

try:   # the parametrization needs the database at collection time
    import torch
    from torch.testing._internal.common_modules import module_db as _MODULE_DB
except ImportError:   # pragma: no cover - without PyTorch (or expecttest) the tests skip
    torch, _MODULE_DB = None, []

# a fixed spread of each module's inputs (per mode), to keep the file fast; MINIGRAD_MODINFO_ALL=1 runs every input
INPUTS_PER_MODULE = 10**9 if os.environ.get("MINIGRAD_MODINFO_ALL") == "1" else 6

# Whole modules minigrad does not compare, with the reason (reviewed; never a silent skip). Empty: all 114 pass.
SKIP_MODULES = {
}

# (module name, input desc) -> reason: single inputs skipped.
SKIP_INPUTS = {
}


def _extra_module_infos():
    """ModuleInfos in PyTorch's format for minigrad modules the database does not list (lazy linear and norm
    layers, EmbeddingBag, Embedding's max_norm and scale_grad_by_freq, TripletMarginWithDistanceLoss, the alpha
    dropouts in eval), compared the same way."""
    if torch is None:
        return []
    from torch.testing._internal.common_modules import FunctionInput, ModuleInfo, ModuleInput

    def inputs(*cases):
        def module_inputs_func(module_info, device, dtype, requires_grad, training, **kwargs):
            gen = torch.Generator().manual_seed(0)

            def x(*shape):
                return torch.randn(*shape, generator=gen, dtype=dtype).requires_grad_(requires_grad)
            return [ModuleInput(FunctionInput(*c_args, **c_kwargs), FunctionInput(*f(x)), desc=desc)
                    for desc, c_args, c_kwargs, f in cases]
        return module_inputs_func

    def idx(*rows):
        return torch.tensor(rows)

    nn = torch.nn
    norm_cases = [("affine", (), {}, None), ("no_stats", (), {"track_running_stats": False}, None),
                  ("no_affine", (), {"affine": False}, None)]

    def norm_inputs(shape):
        cases = norm_cases + [("no_bias", (), {"bias": False}, None)]
        return inputs(*[(d, a, k, lambda x, shape=shape: (x(*shape),)) for d, a, k, _ in cases])

    bags = idx(1, 2, 4, 5, 4, 3, 2, 9)
    return [
        ModuleInfo(nn.LazyLinear, module_inputs_func=inputs(
            ("", (3,), {}, lambda x: (x(4, 5),)), ("no_bias", (3,), {"bias": False}, lambda x: (x(2, 4, 5),)))),
        ModuleInfo(nn.LazyBatchNorm1d, module_inputs_func=norm_inputs((4, 3))),
        ModuleInfo(nn.LazyBatchNorm2d, module_inputs_func=norm_inputs((2, 3, 4, 4))),
        ModuleInfo(nn.LazyBatchNorm3d, module_inputs_func=norm_inputs((2, 3, 2, 3, 2))),
        ModuleInfo(nn.LazyInstanceNorm1d, module_inputs_func=norm_inputs((2, 3, 5))),
        ModuleInfo(nn.LazyInstanceNorm2d, module_inputs_func=norm_inputs((2, 3, 4, 4))),
        ModuleInfo(nn.LazyInstanceNorm3d, module_inputs_func=norm_inputs((2, 3, 2, 3, 2))),
        ModuleInfo(nn.EmbeddingBag, module_inputs_func=inputs(
            ("mean_offsets", (10, 3), {}, lambda x: (bags, idx(0, 4, 4, 6))),
            ("sum_2d_padding", (10, 3), {"mode": "sum", "padding_idx": 2}, lambda x: (idx([1, 2, 4], [4, 3, 2]),)),
            ("max", (10, 3), {"mode": "max"}, lambda x: (bags, idx(0, 3, 5))),
            ("per_sample_weights", (10, 3), {"mode": "sum"}, lambda x: (bags, idx(0, 2), x(8))),
            ("include_last_offset", (10, 3), {"mode": "sum", "include_last_offset": True},
             lambda x: (bags, idx(0, 4, 8))),
            ("max_norm", (10, 3), {"max_norm": 1.0}, lambda x: (bags, idx(0, 5))))),
        ModuleInfo(nn.Embedding, module_inputs_func=inputs(
            ("max_norm", (6, 3), {"max_norm": 1.0, "norm_type": 1.0}, lambda x: (idx([0, 2, 2], [5, 2, 1]),)),
            ("scale_grad_by_freq", (6, 3), {"scale_grad_by_freq": True, "padding_idx": 1},
             lambda x: (idx([0, 2, 2], [5, 2, 1]),)))),
        ModuleInfo(nn.TripletMarginWithDistanceLoss, module_inputs_func=inputs(
            ("default", (), {}, lambda x: (x(4, 5), x(4, 5), x(4, 5))),
            ("swap_margin", (), {"swap": True, "margin": 2.0, "reduction": "none"},
             lambda x: (x(4, 5), x(4, 5), x(4, 5))))),
        ModuleInfo(nn.AlphaDropout, module_inputs_func=inputs(("eval", (0.3,), {}, lambda x: (x(4, 5),)))),
        ModuleInfo(nn.FeatureAlphaDropout, module_inputs_func=inputs(("eval", (0.3,), {}, lambda x: (x(2, 4, 5),)))),
    ]


# Extra modules that are random in training mode: compared in eval only (the formula: test_functional_more.py).
EVAL_ONLY = {"AlphaDropout", "FeatureAlphaDropout"}


def _name(info):
    return info.module_cls.__name__


def _spread(items, limit):
    if len(items) <= limit:
        return items
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


def _params(infos, prefix=""):
    seen = {}
    for info in infos:
        name = _name(info)
        seen[name] = seen.get(name, 0) + 1
        ident = prefix + (name if seen[name] == 1 else f"{name}-{seen[name]}")
        for training in (True, False):
            if not (training and name in EVAL_ONLY):
                yield pytest.param(info, training, id=f"{ident}-{'train' if training else 'eval'}")


def _copy_state(m_th, m_mg):
    """PyTorch's parameters and buffers into minigrad's, by name; the names must be the same."""
    state_th = m_th.state_dict()
    state_mg = m_mg.state_dict()
    assert list(state_mg.keys()) == list(state_th.keys()), "state_dict keys differ from PyTorch's"
    m_mg.load_state_dict({k: v.detach().numpy().copy() for k, v in state_th.items()})
    buffers_mg = dict(m_mg.named_buffers())
    for name, b in m_th.named_buffers():   # non-persistent buffers too
        assert name in buffers_mg, f"minigrad lacks buffer {name}"
        if b is not None:
            buffers_mg[name]._data = b.detach().numpy().copy()


def _construct(info, module_input):
    cls_mg = getattr(mg.nn, _name(info))
    c = module_input.constructor_input
    torch.manual_seed(0)
    m_th = info.module_cls(*c.args, **c.kwargs).to(torch.float64)
    m_mg = cls_mg(*ctor_to_mg(c.args), **ctor_to_mg(c.kwargs)).to(mg.float64)
    return m_th, m_mg


def _materialise(info, m_th, m_mg, f):
    """A lazy module's parameters exist after its first forward: run one without grad in both libraries."""
    if not info.is_lazy:
        return
    with torch.no_grad():
        m_th(*f.args, **f.kwargs)
    with mg.no_grad():
        m_mg(*to_mg(f.args), **to_mg(f.kwargs))
    assert not any(isinstance(p, torch.nn.parameter.UninitializedParameter) for p in m_th.parameters())


def compare_module(info, module_input, training, rtol=1e-7, atol=1e-7, seed=0):
    """One ModuleInput through both libraries: forward outputs, gradients of inputs and parameters for a random
    upstream, buffers after the step."""
    m_th, m_mg = _construct(info, module_input)
    m_th.train(training)
    m_mg.train(training)
    f = module_input.forward_input
    _materialise(info, m_th, m_mg, f)
    _copy_state(m_th, m_mg)

    memo = {}
    args, kwargs = to_mg(f.args, memo), to_mg(f.kwargs, memo)
    out_th = m_th(*f.args, **f.kwargs)
    out_mg = m_mg(*args, **kwargs)
    assert type(m_mg).__name__ == type(m_th).__name__, "a lazy module did not become its eager class"
    assert_same_outputs(out_mg, out_th, rtol, atol)

    buffers_mg = dict(m_mg.named_buffers())
    for name, b in m_th.named_buffers():
        if b is not None:
            np.testing.assert_allclose(buffers_mg[name].numpy(), b.detach().numpy(), rtol=rtol, atol=atol,
                                       err_msg=f"buffer {name} after forward")

    params_th = [p for _, p in m_th.named_parameters() if p.requires_grad]
    params_mg = [p for _, p in m_mg.named_parameters() if p.requires_grad]
    assert len(params_mg) == len(params_th)
    leaves = [(th, m) for th, m in memo.values() if th.requires_grad]
    wrt_th = [th for th, _ in leaves] + params_th
    wrt_mg = [m for _, m in leaves] + params_mg
    outs = [(m, t) for m, t in zip(flat_outputs(out_mg), flat_outputs(out_th))
            if isinstance(t, torch.Tensor) and t.requires_grad and t.dtype.is_floating_point]
    if not outs or not wrt_th:
        return
    rng = np.random.default_rng(seed)
    ups = [rng.standard_normal(tuple(t.shape)) for _, t in outs]
    grads_th = torch.autograd.grad([t for _, t in outs], wrt_th, [torch.tensor(u) for u in ups], allow_unused=True)
    for m, _ in outs:
        assert isinstance(m, mg.Tensor) and m.requires_grad, "minigrad's output does not require grad"
    grads_mg = mg.autograd.grad([m for m, _ in outs], wrt_mg, [mg.tensor(u) for u in ups], allow_unused=True)
    names = [f"input {i}" for i in range(len(leaves))] + [n for n, p in m_th.named_parameters() if p.requires_grad]
    for name, gm, gt in zip(names, grads_mg, grads_th):
        if gt is None:
            assert gm is None or not np.any(gm.numpy()), f"gradient of {name}: PyTorch has none"
            continue
        assert gm is not None, f"gradient of {name}: minigrad gives none, PyTorch does"
        np.testing.assert_allclose(gm.numpy(), gt.numpy(), rtol=rtol * 10, atol=atol * 10,
                                   err_msg=f"gradient of {name}")


@pytest.mark.parametrize("info, training", list(_params(_MODULE_DB)) + list(_params(_extra_module_infos(), "extra-"))
                         or [pytest.param(None, None, id="no-torch")])
def test_module(info, training):
    torch_or_skip()
    if info is None:
        pytest.skip("PyTorch's module database (torch, expecttest) not importable")
    name = _name(info)
    if name in SKIP_MODULES:
        pytest.skip(f"{name}: {SKIP_MODULES[name]}")
    assert hasattr(mg.nn, name), f"minigrad.nn has no {name}"
    inputs = [mi for mi in info.module_inputs_func(info, device="cpu", dtype=torch.float64, requires_grad=True,
                                                   training=training) if mi.forward_input is not None]
    inputs = [mi for mi in inputs if (name, mi.desc) not in SKIP_INPUTS]
    assert inputs, f"{name}: every input skipped"
    for module_input in _spread(inputs, INPUTS_PER_MODULE):
        try:
            compare_module(info, module_input, training)
        except Exception as error:
            raise AssertionError(f"{name} input {module_input.desc!r}: {type(error).__name__}: {error}") from error


def _error_cases():
    cases = []
    for info in _MODULE_DB:
        if info.module_error_inputs_func is None:
            continue
        for training in (True, False):
            errors = info.module_error_inputs_func(info, device="cpu", dtype=torch.float64, requires_grad=False,
                                                   training=training)
            cases += [pytest.param(info, training, i, id=f"{_name(info)}-{'train' if training else 'eval'}-{i}")
                      for i in range(len(errors))]
    return cases or [pytest.param(None, None, None, id="no-torch")]


def _raised(lib, info, error_input, training):
    """What constructing the module (and, for a forward error, calling it) raises in ``lib``: the exception, or
    None. minigrad gets the same arguments, converted."""
    module_input = error_input.module_error_input
    convert = (lambda x: x) if lib is torch else to_mg
    cls = info.module_cls if lib is torch else getattr(mg.nn, info.module_cls.__name__)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = cls(*convert(list(module_input.constructor_input.args)),
                         **convert(dict(module_input.constructor_input.kwargs)))
            module.train(training)
            forward = module_input.forward_input
            if forward is not None and error_input.error_on.name == "FORWARD_ERROR":
                module(*convert(list(forward.args)), **convert(dict(forward.kwargs)))
    except Exception as error:   # compared with PyTorch's
        return error
    return None


@pytest.mark.parametrize("info, training, index", _error_cases())
def test_module_error_inputs_match_pytorch(info, training, index):
    """The database's bad constructions and calls (``module_error_inputs_func``): minigrad raises where PyTorch
    raises, the same exception type, and a message that matches the database's pattern wherever PyTorch's does.
    (PyTorch itself does not raise on a few of them, BatchNorm with eps=0 in eval mode; nor must minigrad.)"""
    torch_or_skip()
    if info is None:
        pytest.skip("PyTorch's module database (torch, expecttest) not importable")
    error_input = info.module_error_inputs_func(info, device="cpu", dtype=torch.float64, requires_grad=False,
                                                training=training)[index]
    want = _raised(torch, info, error_input, training)
    got = _raised(mg, info, error_input, training)
    assert type(got) is type(want), f"PyTorch: {want!r}; minigrad: {got!r}"
    if want is not None and re.search(error_input.error_regex, str(want)):
        assert re.search(error_input.error_regex, str(got)), \
            f"minigrad's message {str(got)!r} does not match PyTorch's pattern {error_input.error_regex!r}"
