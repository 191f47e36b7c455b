"""PyTorch's optimizer database (``common_optimizers.optim_db``) as an oracle for ``minigrad.optim``.

For every OptimizerInfo (15 in PyTorch 2.13), every configuration PyTorch's own optimizer tests run on the CPU
(``_get_optim_inputs_including_global_cliquey_kwargs``: each input alone and with each of ``foreach``, ``fused``
and ``differentiable``) and a few of ours on top (a Tensor ``lr``, two parameter groups, named parameters,
complex and float32 parameters):

* both libraries minimise the same loss from the same parameters for five steps (a new loss each step, as a new
  batch would give; LBFGS through its closure). Every parameter after every step agrees. The tolerance is set
  by PyTorch's own sensitivity: PyTorch runs a second time from parameters one ulp apart, and minigrad may
  differ from PyTorch by ten times that spread, plus ``RTOL`` of the parameter's scale. Where the update is
  well conditioned the spread is an ulp or so; LBFGS near its minimum amplifies an ulp to 1e-8;
* afterwards the state_dicts agree: every group option (names included), and every parameter's state: the same
  keys, a Tensor wherever PyTorch has one, with its dtype and shape, and the values;
* if PyTorch refuses a configuration (``differentiable=True`` on leaf parameters, two groups for LBFGS),
  minigrad raises the same exception type;
* a state_dict PyTorch saved after two steps, loaded into minigrad, continues as PyTorch continues, and one
  minigrad saved, loaded into PyTorch, continues as minigrad continues;
* every error input of the database: the same exception type and a message PyTorch's pattern matches, or the
  same warning.

Not compared, each with its reason: ``SKIP_OPTIMIZERS``, ``LOOSER`` and ``REPRESENTATION`` below.
"""
import copy
import re
import warnings

import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip
from .opinfo_util import to_mg

try:   # the parametrization needs the database at collection time
    import torch
    from torch.testing._internal.common_optimizers import (
        OptimizerErrorEnum, _get_optim_inputs_including_global_cliquey_kwargs, optim_db as _OPTIM_DB)
except ImportError:   # pragma: no cover - without PyTorch (or expecttest) the tests skip
    torch, _OPTIM_DB = None, []

STEPS = 5
RTOL = {np.float64: 1e-13, np.complex128: 1e-13, np.float32: 1e-6}

# Whole optimizers not compared, with the reason.
SKIP_OPTIMIZERS = {}

# Optimizers compared more loosely (an rtol of each value's scale), with the reason. LBFGS's history (ro = 1 / y.s and
# the rest) is made of dot products over ~100 iterations, each summed in its own order by NumPy and PyTorch; in
# float64 its later entries differ by up to 5e-8 of themselves while the parameters agree within PyTorch's spread.
LOOSER = {"LBFGS": 1e-6}

# State entries whose type differs, with the reason; their values are compared. LBFGS's step size 't' is a 0-d
# tensor in PyTorch when ``lr`` is a Tensor (its arithmetic carries the type); minigrad keeps it a float.
REPRESENTATION = {("LBFGS", "t")}

# Configurations compared over fewer steps, with the reason. LBFGS in float32 runs its steps down to rounding noise
# (its last directions are ~1e-5, its curvature pairs y.s ~1e-7 with 1/(y.s) up to 1e9), and the next step's first
# pair is kept or dropped by the sign of such a y.s: on an AMD Zen 4 minigrad's came out +8e-7 and PyTorch's -6e-6,
# and step 4 went to another basin (the float64 runs of both agree to 1e-13 there). Steps 1-3 stay above the noise.
FEWER_STEPS = {("LBFGS", "float32"): 3}


def _cases():
    """(info, kwargs, variant) for every configuration: PyTorch's, then ours."""
    cases = []
    for info in _OPTIM_DB:
        if info.name in SKIP_OPTIMIZERS:
            continue
        for optim_input in _get_optim_inputs_including_global_cliquey_kwargs("cpu", torch.float64, info):
            cases.append(pytest.param(info, optim_input.kwargs, "", id=f"{info.name}-{optim_input.desc}"))
        ours = ["tensor lr", "two groups", "named", "float32"] + (["complex"] if info.supports_complex else [])
        for variant in ours:
            cases.append(pytest.param(info, {}, variant, id=f"{info.name}-ours: {variant}"))
    return cases


def _lib_of(params):
    return torch if isinstance(params[0], torch.Tensor) else mg


def _initial_params(info, dtype):
    """Two parameters (a matrix and a vector; two matrices for Muon, which takes only 2-D ones) as NumPy arrays."""
    rng = np.random.default_rng(0)
    shapes = [(4, 3), (5, 3)] if info.name == "Muon" or info.only_supports_sparse_grads else [(4, 3), (4,)]
    arrays = [rng.standard_normal(s) for s in shapes]
    if dtype == np.complex128:
        arrays = [a + 1j * rng.standard_normal(a.shape) for a in arrays]
    return [a.astype(dtype) for a in arrays]


def _nudged(arrays, sign=1):
    """Each array one ulp away: each real component scaled by 1 + eps (``sign=-1``: by 1 - eps)."""
    out = []
    for a in arrays:
        factor = 1 + sign * np.finfo(a.real.dtype).eps
        out.append(a * factor if not np.iscomplexobj(a) else a.real * factor + 1j * a.imag * factor)
    return out


def _loss(lib, params, step, sparse=False):
    """A different smooth, non-convex loss for each step: sum(c * sin(p)) + |p|^2 / 2 over the real components.
    ``sparse`` (SparseAdam): over rows of each (2-D) parameter looked up with ``embedding(..., sparse=True)``, some
    rows twice and some not at all, so that its gradient is sparse."""
    total = 0
    for i, p in enumerate(params):
        real = lib.view_as_real(p) if p.is_complex() else p
        if sparse:
            rows = np.random.default_rng([step, i, 1]).integers(0, p.shape[0], size=p.shape[0] + 1)
            real = lib.nn.functional.embedding(lib.tensor(rows), p, sparse=True)
        c = np.random.default_rng([step, i]).standard_normal(tuple(real.shape))
        total = total + (lib.tensor(c) * real.sin()).sum() + 0.5 * (real * real).sum()
    return total


def _make(lib, info, kwargs, arrays, variant):
    """The parameters (fresh leaves holding ``arrays``) and the optimizer over them, arranged as ``variant`` says."""
    params = [lib.nn.Parameter(lib.tensor(a.copy())) for a in arrays]
    kwargs = dict(kwargs) if lib is torch else to_mg(kwargs)
    if variant == "tensor lr":
        kwargs["lr"] = lib.tensor(0.01)
    arranged = params
    if variant == "two groups":
        arranged = [{"params": params[:1]}, {"params": params[1:], "lr": 0.002}]
    elif variant == "named":
        arranged = [(f"layer.p{i}", p) for i, p in enumerate(params)]
    return params, getattr(lib.optim, info.name)(arranged, **kwargs)


def _run(optimizer, params, info, steps):
    """Take ``steps`` (a range of step indices); return each step's parameters as float64/complex128 arrays."""
    lib = _lib_of(params)
    trajectory = []
    for k in steps:
        def closure(k=k):
            optimizer.zero_grad()
            loss = _loss(lib, params, k, sparse=info.only_supports_sparse_grads)
            loss.backward()
            return loss
        if info.step_requires_closure:
            optimizer.step(closure)
        else:
            closure()
            optimizer.step()
        trajectory.append([_array(p) for p in params])
    return trajectory


def _array(value):
    if isinstance(value, (torch.Tensor, mg.Tensor)):
        value = value.detach()
        return np.array(value.numpy() if not isinstance(value, torch.Tensor) else value.numpy(), copy=True)
    return np.asarray(value)


def _within(got, want, spreads, rtol, what):
    """|got - want| <= 10 * |spread - want| + rtol * scale, each a max over the array and over PyTorch's nudged
    runs (``spreads``)."""
    got, want = _array(got), _array(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, PyTorch's {want.shape}"
    if want.size == 0:
        return
    scale = max(1.0, float(np.max(np.abs(want))))
    spread = max(float(np.max(np.abs(_array(s) - want))) for s in spreads)
    allowed = 10 * spread + rtol * scale
    error = float(np.max(np.abs(got.astype(want.dtype) - want)))
    assert error <= allowed, f"{what}: off by {error:.3g}, allowed {allowed:.3g} (PyTorch's own spread x10 + rtol)"


def _compare_trajectories(got, want, spreads, rtol, what):
    for k, (g, w) in enumerate(zip(got, want)):
        for i in range(len(w)):
            _within(g[i], w[i], [s[k][i] for s in spreads], rtol, f"{what}: parameter {i} after step {k + 1}")


def _same_option(got, want, where):
    if isinstance(want, torch.Tensor):
        assert isinstance(got, mg.Tensor), f"{where}: PyTorch has a Tensor, minigrad {type(got).__name__}"
        np.testing.assert_array_equal(_array(got), _array(want), err_msg=where)   # copied from one argument: exact
    elif isinstance(want, (tuple, list)):
        assert isinstance(got, type(want)) and len(got) == len(want), f"{where}: {got!r} against {want!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            _same_option(g, w, f"{where}[{i}]")
    else:
        assert type(got) is type(want) and (got == want or got != got and want != want), \
            f"{where}: {got!r} against PyTorch's {want!r}"


def _compare_state_dicts(name, got, want, spreads, rtol):
    """Groups: the same options with equal values. State: per parameter the same entries, Tensors where PyTorch has
    Tensors (dtype and shape too), values within PyTorch's own spread (``spreads``: the nudged runs' state_dicts)."""
    assert len(got["param_groups"]) == len(want["param_groups"])
    for g, (mine, theirs) in enumerate(zip(got["param_groups"], want["param_groups"])):
        assert set(mine) == set(theirs), f"group {g}: options {sorted(set(mine) ^ set(theirs))} differ"
        for key in theirs:
            _same_option(mine[key], theirs[key], f"group {g} option {key!r}")
    assert set(got["state"]) == set(want["state"]), f"state of parameters {sorted(got['state'])}, PyTorch's " \
                                                    f"{sorted(want['state'])}"
    for index, theirs in want["state"].items():
        mine, nudged = got["state"][index], [s["state"][index] for s in spreads]
        assert set(mine) == set(theirs), f"state of parameter {index}: {sorted(mine)}, PyTorch's {sorted(theirs)}"
        # PyTorch's own runs took different numbers of evaluations (LBFGS in float32): the histories are not
        # comparable entry by entry, so only their types and shapes are
        counts = [key for key, value in theirs.items() if isinstance(value, int) and not isinstance(value, bool)]
        chaotic = any(n[key] != theirs[key] for n in nudged for key in counts)
        for key, value in theirs.items():
            where = f"state[{index}][{key!r}]"
            if isinstance(value, list):   # LBFGS's history
                assert isinstance(mine[key], list) and (chaotic or len(mine[key]) == len(value)), where
                for j, (m, t) in enumerate(zip(mine[key], value)):
                    _compare_entry(name, key, m, t, None if chaotic else [n[key][j] for n in nudged], rtol,
                                   f"{where}[{j}]")
            else:
                _compare_entry(name, key, mine[key], value, None if chaotic else [n[key] for n in nudged], rtol,
                               where)


def _compare_entry(name, key, mine, theirs, nudged, rtol, where):
    if nudged is None and (mine is None or theirs is None):
        return          # a history entry only one of two chaotic runs reached (LBFGS's al, ro: None beyond its length)
    if isinstance(theirs, torch.Tensor) and (name, key) not in REPRESENTATION:
        assert isinstance(mine, mg.Tensor), f"{where}: PyTorch has a Tensor, minigrad {type(mine).__name__}"
        assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], \
            f"{where}: dtype {mine.dtype}, PyTorch's {theirs.dtype}"
    if nudged is None:   # types only (of the entries both histories reached)
        assert type(mine) is type(theirs) or (isinstance(mine, mg.Tensor) and isinstance(theirs, torch.Tensor)), where
    elif isinstance(theirs, (torch.Tensor, float)) and not isinstance(theirs, bool):
        _within(mine, theirs, nudged, rtol, where)
    else:   # counts (LBFGS's evaluations): equal, unless PyTorch's own count moved with a nudge
        assert mine == theirs or any(n != theirs for n in nudged), f"{where}: {mine!r}, PyTorch's {theirs!r}"


def _dtype_of(variant):
    return {"float32": np.float32, "complex": np.complex128}.get(variant, np.float64)


def _default_dtype_for(variant):
    return torch.float32 if variant == "float32" else torch.float64


@pytest.fixture
def float64_default():
    """PyTorch's optimizer tests run in float64; each library's default dtype is set to match (the step counters'
    dtype follows it) and put back."""
    torch_or_skip()
    saved = torch.get_default_dtype(), mg.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    mg.set_default_dtype(mg.float64)
    yield
    torch.set_default_dtype(saved[0])
    mg.set_default_dtype(saved[1])


def _attempt(lib, info, kwargs, arrays, variant, steps):
    """(trajectory, optimizer) or the exception the library raised."""
    try:
        params, optimizer = _make(lib, info, kwargs, arrays, variant)
        return _run(optimizer, params, info, steps), optimizer
    except Exception as error:   # compared with the other library's
        return error


@pytest.mark.parametrize("info, kwargs, variant", _cases())
def test_optimizer_matches_pytorch(info, kwargs, variant, float64_default):
    _check_case(info, kwargs, variant)


def _check_case(info, kwargs, variant):
    arrays = _initial_params(info, _dtype_of(variant))
    if variant == "float32":
        torch.set_default_dtype(torch.float32)
        mg.set_default_dtype(mg.float32)
    steps = range(FEWER_STEPS.get((info.name, variant), STEPS))
    want = _attempt(torch, info, kwargs, arrays, variant, steps)
    got = _attempt(mg, info, kwargs, arrays, variant, steps)
    if isinstance(want, Exception) or isinstance(got, Exception):
        assert type(got) is type(want), f"PyTorch: {want!r}; minigrad: {got!r}"
        return
    spreads = [_attempt(torch, info, kwargs, _nudged(arrays, sign), variant, steps) for sign in (1, -1)]
    rtol = max(RTOL[_dtype_of(variant)], LOOSER.get(info.name, 0))
    _compare_trajectories(got[0], want[0], [s[0] for s in spreads], rtol, info.name)
    _compare_state_dicts(info.name, got[1].state_dict(), want[1].state_dict(), [s[1].state_dict() for s in spreads],
                         rtol)


def _info(name):
    return next(info for info in _OPTIM_DB if info.name == name)


def test_the_comparison_catches_planted_mistakes(float64_default):
    """Small mistakes of the kinds this file found or could miss: Adam's eps doubled (an update off by about 1e-8 of
    itself), a fused optimizer's step counter in float64 (PyTorch keeps it float32), and complex parameters updated
    as complex numbers (|g|^2) instead of as pairs of reals."""
    from minigrad.optim import adam, optimizer
    update = adam.Adam._update_group
    cases = [
        (lambda mp: mp.setattr(adam.Adam, "_update_group",
                               lambda self, group, params: update(self, {**group, "eps": 2 * group["eps"]}, params)),
         "Adam", {}, ""),
        (lambda mp: mp.setattr(adam, "_scalar_tensor", lambda value, fused=False: optimizer._scalar_tensor(value)),
         "Adam", {"fused": True}, ""),
        (lambda mp: mp.setattr(optimizer.Optimizer, "_takes_complex", False), "RMSprop", {}, "complex"),
    ]
    for plant, name, kwargs, variant in cases:
        _check_case(_info(name), kwargs, variant)   # right before the mistake
        with pytest.MonkeyPatch.context() as mp:
            plant(mp)
            with pytest.raises(AssertionError):
                _check_case(_info(name), kwargs, variant)


def _to_torch(obj):
    """A minigrad state_dict in PyTorch's types: Tensors become torch tensors, everything else is kept."""
    if isinstance(obj, mg.Tensor):
        return torch.from_numpy(np.array(obj.detach().numpy(), copy=True))
    if isinstance(obj, dict):
        return {k: _to_torch(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_torch(v) for v in obj)
    return obj


def _resume(lib, info, kwargs, arrays, state_dict, steps):
    params, optimizer = _make(lib, info, kwargs, arrays, "")
    optimizer.load_state_dict(state_dict)
    return _run(optimizer, params, info, steps)


@pytest.mark.parametrize("info", [i for i in _OPTIM_DB if i.name not in SKIP_OPTIMIZERS], ids=lambda i: i.name)
def test_state_dicts_cross_between_libraries(info, float64_default):
    """Two steps in one library, its state_dict loaded into the other beside the parameters it reached, three more
    steps in both: PyTorch's checkpoint continues in minigrad as in PyTorch, and minigrad's in PyTorch."""
    for optim_input in info.optim_inputs_func(device="cpu"):
        kwargs = optim_input.kwargs
        arrays = _initial_params(info, np.float64)
        where = f"{info.name} ({optim_input.desc})"
        for first, second, convert in ((torch, mg, to_mg), (mg, torch, _to_torch)):
            params, optimizer = _make(first, info, kwargs, arrays, "")
            reached = _run(optimizer, params, info, range(2))[-1]
            saved = convert(copy.deepcopy(optimizer.state_dict()))
            continued = _run(optimizer, params, info, range(2, STEPS))
            nudged = []
            for sign in (1, -1):
                _, nudged_optimizer = _make(first, info, kwargs, _nudged(arrays, sign), "")
                nudged_params = nudged_optimizer.param_groups[0]["params"]
                nudged.append(_run(nudged_optimizer, nudged_params, info, range(STEPS))[2:])
            resumed = _resume(second, info, kwargs, reached, saved, range(2, STEPS))
            _compare_trajectories(resumed, continued, nudged, max(RTOL[np.float64], LOOSER.get(info.name, 0)),
                                  f"{where}: {first.__name__}'s state_dict resumed in {second.__name__}")


def _error_cases():
    cases = []
    for info in _OPTIM_DB:
        if info.name in SKIP_OPTIMIZERS:
            continue
        for i, error_input in enumerate(info.optim_error_inputs_func(device="cpu", dtype=torch.float64)):
            cases.append(pytest.param(info, error_input, id=f"{info.name}-{i}-{error_input.error_type.__name__}"))
    return cases


@pytest.mark.parametrize("info, error_input", _error_cases())
def test_error_inputs_match_pytorch(info, error_input):
    """The database's bad constructions and steps: minigrad raises PyTorch's exception type with a message its
    pattern matches (or warns as PyTorch warns)."""
    torch_or_skip()
    optim_input = error_input.optimizer_error_input
    params = optim_input.params
    if params is None:
        params = [mg.nn.Parameter(mg.tensor(a)) for a in _initial_params(info, np.float64)]
    else:
        params = to_mg(params)
    kwargs = to_mg(optim_input.kwargs)
    expected, pattern = error_input.error_type, error_input.error_regex
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            optimizer = getattr(mg.optim, info.name)(params, **kwargs)
            if error_input.error_on == OptimizerErrorEnum.STEP_ERROR:
                for group in optimizer.param_groups:
                    for p in group["params"]:
                        p.grad = mg.ones_like(p)
                optimizer.step()
        except Exception as error:
            assert isinstance(error, expected) and re.search(pattern, str(error)), \
                f"expected {expected.__name__} matching {pattern!r}, got {error!r}"
            return
    if issubclass(expected, Warning):
        assert any(issubclass(w.category, expected) and re.search(pattern, str(w.message)) for w in caught), \
            f"expected a {expected.__name__} matching {pattern!r}, got {[str(w.message) for w in caught]}"
    else:
        pytest.fail(f"expected {expected.__name__} matching {pattern!r}; nothing was raised")


def test_every_optimizer_in_the_database_is_compared():
    """A new OptimizerInfo in a later PyTorch is compared, or listed in SKIP_OPTIMIZERS with its reason."""
    torch_or_skip()
    names = {info.name for info in _OPTIM_DB}
    assert len(names) >= 15 and not set(SKIP_OPTIMIZERS) - names
    for name in names - set(SKIP_OPTIMIZERS):
        assert hasattr(mg.optim, name), f"minigrad.optim lacks {name}"
