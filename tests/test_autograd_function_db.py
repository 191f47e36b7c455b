"""PyTorch's databases of custom autograd Functions (``autograd_function_db``) and custom operators
(``custom_op_db``) as oracles for ``autograd.Function`` and ``library.custom_op``.

PyTorch keeps 14 Functions and 11 custom ops, each an OpInfo, covering the ways they are written: ``forward(ctx,
...)`` or ``forward(...)`` with a separate ``setup_context`` (defaults filled in), several outputs (NumPy arrays among
them), outputs marked non-differentiable, an input marked dirty (written in place and returned), saving inputs,
outputs and intermediates, a backward built from other custom Functions or ops (so that it can be differentiated
again), ``once_differentiable``, ``jvp`` staticmethods; custom ops with ``register_fake``, ``register_autograd``
(keyword-only inputs too) and ``register_vmap``, data-dependent output shapes, lists of tensors. Their source runs
here with minigrad standing for torch (``tests/torch_shim.py``; the OpInfo entries and the samples come from
PyTorch's own databases), and for every sample both libraries' results are compared:

* the outputs: values, dtype, and which require grad;
* first gradients, for random upstream gradients;
* second order: the first gradients under ``create_graph=True``, differentiated again along random vectors;
* forward AD (dual tensors) through the Function's own ``jvp``;
* ``vmap`` over a new leading dimension (minigrad's ``vmap`` runs the function once per sample; PyTorch's uses the
  Function's ``vmap`` staticmethod or its generated rule).

Where PyTorch raises, minigrad must raise the same exception type. Differences are listed in ``KNOWN`` with their
reasons.
"""
import inspect
import re

import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip
from .opinfo_util import to_mg
from .torch_shim import minigrad_as_torch

try:   # the parametrization needs the databases at collection time
    import torch
    from torch.testing._internal import autograd_function_db as _FUNCTION_MODULE
    from torch.testing._internal import custom_op_db as _OP_MODULE
    _DATABASES = {"function": (_FUNCTION_MODULE, _FUNCTION_MODULE.autograd_function_db),
                  "op": (_OP_MODULE, _OP_MODULE.custom_op_db)}
except ImportError:   # pragma: no cover - without PyTorch (or expecttest) the tests skip
    torch, _DATABASES = None, {}
_DB = [info for _, entries in _DATABASES.values() for info in entries]

# (Function name, check) -> why minigrad's result differs from PyTorch's, by design
KNOWN = {
    ("NumpyCubeNotComposableAutogradFunction", "vmap"):
        "PyTorch refuses to vmap a Function with neither a vmap staticmethod nor generate_vmap_rule; minigrad's "
        "vmap runs the function once per sample, so every Function works",
    ("NumpyNonzeroCustomOp", "vmap"): "data-dependent output shapes: PyTorch runs the op's register_vmap rule, which "
                                      "raises NotImplementedError; minigrad's vmap runs the op per sample and refuses "
                                      "outputs of different shapes with a RuntimeError",
    ("NumpyNMSCustomOp", "vmap"): "as NumpyNonzeroCustomOp's vmap",
    ("NumpyCubeNotComposableAutogradFunction", "second order"):
        "its backward is once_differentiable: differentiating its gradient again gives PyTorch a silent None here, "
        "minigrad an error naming the Function (docs/differences.md)",
}

# Functions minigrad cannot run yet, with the reason; strict xfails, so a fix shows. Empty: all 14 run.
GAPS = {
}


def _run_on_minigrad(module, entries):
    """A database's source run with minigrad as ``torch``: {OpInfo name: op}. Its imports from
    ``torch.testing`` (the OpInfo machinery, sample functions) are stand-ins: the samples come from PyTorch's."""
    source = inspect.getsource(module)
    imported = re.findall(r"^from torch\.testing[^\n(]*(?:\([^)]*\)|[^\n]*)\n", source, flags=re.M)
    namespace = {name: _stand_in for block in imported for name in re.findall(r"\w+", block.split(" import ", 1)[1])}
    for block in imported:
        source = source.replace(block, "")
    namespace.update({"__name__": f"{module.__name__.rsplit('.', 1)[-1]}_on_minigrad",
                      "OpInfo": lambda name, **entry: (name, entry)})
    with minigrad_as_torch():
        exec(compile(source, f"{module.__name__} (minigrad as torch)", "exec"), namespace)   # noqa: S102
    return {name: entry["op"] for name, entry in namespace[entries]}


_MINE = {}


def _stand_in(*args, **kwargs):
    """What the databases import from ``torch.testing`` (dtype lists, sample makers) stands for, on minigrad."""


def _mine(name):
    if not _MINE:
        for module, entries in _DATABASES.values():
            _MINE.update(_run_on_minigrad(module, [k for k, v in vars(module).items() if v is entries][0]))
    return _MINE[name]


def _outputs(out):
    return out if isinstance(out, tuple) else (out,)


def _attempt(fn):
    try:
        return fn()
    except Exception as error:   # compared with the other library's
        return error


def _same(got, want, what):
    """Results of one check: equal values (and the same exception type where PyTorch raised)."""
    if isinstance(want, Exception) or isinstance(got, Exception):
        assert type(got) is type(want), f"{what}: PyTorch {want!r}, minigrad {got!r}"
        return
    assert len(got) == len(want), f"{what}: {len(got)} results, PyTorch {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert (g is None) == (w is None), f"{what} [{i}]: minigrad {g!r}, PyTorch {w!r}"
        if w is not None:
            g, w = np.asarray(g), np.asarray(w)
            assert g.shape == w.shape and g.dtype == w.dtype, f"{what} [{i}]: {g.shape} {g.dtype}, PyTorch's " \
                                                               f"{w.shape} {w.dtype}"
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12, err_msg=f"{what} [{i}]")


def _values(tensors):
    return [None if t is None else t.detach().numpy() for t in tensors]


def _forward(lib, op, args, kwargs):
    out = _outputs(op(*args, **kwargs))
    tensors = [o for o in out if isinstance(o, lib.Tensor)]
    return _values(tensors) + [np.array([o.requires_grad for o in tensors])]


def _gradients(lib, op, args, kwargs, upstream, second):
    """First gradients of the inputs that require grad (for ``upstream``); with ``second``, the gradients of those
    along ``second`` (random vectors), through ``create_graph=True``."""
    outs = [o for o in _outputs(op(*args, **kwargs)) if isinstance(o, lib.Tensor) and o.requires_grad]
    leaves = [a for a in args if isinstance(a, lib.Tensor) and a.requires_grad]
    ups = [lib.tensor(u, requires_grad=second is not None) for u in upstream[:len(outs)]]
    first = lib.autograd.grad(outs, leaves, ups, create_graph=second is not None, allow_unused=True)
    if second is None:
        return _values(first)
    used = [(g, lib.tensor(v)) for g, v in zip(first, second) if g is not None]
    return _values(lib.autograd.grad([g for g, _ in used], leaves, [v for _, v in used], allow_unused=True))


def _jvp(lib, op, args, kwargs, tangents):
    fwAD = lib.autograd.forward_ad
    with fwAD.dual_level():
        duals = [fwAD.make_dual(a.detach(), lib.tensor(t)) if t is not None else a for a, t in zip(args, tangents)]
        out = _outputs(op(*duals, **kwargs))
        return [fwAD.unpack_dual(o).tangent for o in out if isinstance(o, lib.Tensor) and o.is_floating_point()]


def _vmap(lib, op, args, kwargs):
    batch = lib.stack([args[0].detach(), 2 * args[0].detach(), args[0].detach() + 1])
    rest = [a.detach() if isinstance(a, lib.Tensor) else a for a in args[1:]]
    out = lib.func.vmap(lambda x: op(x, *rest, **kwargs))(batch)
    return _values([o for o in _outputs(out) if isinstance(o, lib.Tensor)])


CHECKS = ("forward", "backward", "second order", "forward AD", "vmap")


def _supported(info, check):
    """Whether PyTorch's database says the entry supports ``check``."""
    return not (check == "second order" and not info.supports_gradgrad
                or check == "forward AD" and not info.supports_forward_ad)


def _cases():
    """Every entry and check, but those the database marks unsupported and those in KNOWN."""
    return [pytest.param(info, check, id=f"{info.name}-{check}",
                         marks=[pytest.mark.xfail(reason=GAPS[info.name], strict=True)] if info.name in GAPS else [])
            for info in _DB for check in CHECKS if _supported(info, check) and (info.name, check) not in KNOWN]


@pytest.mark.parametrize("info, check", _cases())
def test_custom_function_matches_pytorch(info, check):
    torch_or_skip()
    mine = _mine(info.name)
    rng = np.random.default_rng(0)
    for n, sample in enumerate(info.sample_inputs("cpu", torch.float64, requires_grad=True)):
        args_t, kwargs_t = [sample.input, *sample.args], sample.kwargs
        args_m, kwargs_m = to_mg(args_t), to_mg(kwargs_t)
        what = f"{info.name}, sample {n}, {check}"
        if check == "forward":
            want = _attempt(lambda: _forward(torch, info.op, args_t, kwargs_t))
            got = _attempt(lambda: _forward(mg, mine, args_m, kwargs_m))
        elif check in ("backward", "second order"):
            outs = [o for o in _outputs(info.op(*args_t, **kwargs_t)) if isinstance(o, torch.Tensor)]
            upstream = [rng.standard_normal(tuple(o.shape)) for o in outs]
            second = [rng.standard_normal(tuple(a.shape)) for a in args_t if isinstance(a, torch.Tensor)]
            second = second if check == "second order" else None
            want = _attempt(lambda: _gradients(torch, info.op, args_t, kwargs_t, upstream, second))
            got = _attempt(lambda: _gradients(mg, mine, args_m, kwargs_m, upstream, second))
        elif check == "forward AD":
            tangents = [rng.standard_normal(tuple(a.shape)) if isinstance(a, torch.Tensor) and a.is_floating_point()
                        else None for a in args_t]
            want = _attempt(lambda: _jvp(torch, info.op, args_t, kwargs_t, tangents))
            got = _attempt(lambda: _jvp(mg, mine, args_m, kwargs_m, tangents))
        else:
            want = _attempt(lambda: _vmap(torch, info.op, args_t, kwargs_t))
            got = _attempt(lambda: _vmap(mg, mine, args_m, kwargs_m))
        _same(got, want, what)


def test_every_entry_of_the_databases_runs_on_minigrad():
    """The databases' sources run with minigrad as torch, and name the same Functions and ops as PyTorch's."""
    torch_or_skip()
    assert len(_DB) >= 25
    _mine(_DB[0].name)
    assert {info.name for info in _DB} == set(_MINE)


def test_the_known_differences_name_supported_checks():
    """Each KNOWN entry names an entry of the databases and a check it supports (the list cannot go stale)."""
    torch_or_skip()
    entries = {info.name: info for info in _DB}
    for name, check in KNOWN:
        assert name in entries and check in CHECKS and _supported(entries[name], check), (name, check)
