"""``check_norm``: every check a registered norm must pass, in one call (minigrad/ops/norm/registry.py).

    from .norm_kit import check_norm
    def test_scale_norm_passes_the_kit():
        check_norm(BY_NAME["ScaleNorm"], bad_inputs=BAD_INPUTS, mutants=[drop_the_projection])

runs, on the registry entry's small float64 case (random x, parameters away from zero, random upstream
gradients, never a ``sum()`` loss):

1. ``gradcheck`` of the fused functional on both kernel backends (numpy and numba);
2. the twins: fused functional and composite twin agree in the forward and every gradient (1e-12);
3. the second order: the gradients of a non-linear function of the first gradients (create_graph=True) agree
   with autograd through the composite twin (1e-12), and ``gradgradcheck`` passes;
4. PyTorch: forward, gradients and double backward against the entry's ``torch_twin`` (PyTorch's own
   functional where it has one, else the formula in torch ops);
5. the module: built from ``module_args``, its forward is the functional with its own parameters;
6. bad input: each ``(call(F, x), exception type, message pattern)`` raises, and changes nothing;
7. each mutant (``mutant(owner, name, wrong)``: a wrong backward planted for a block) is caught by checks 1-3.

Each step is also a function of its own, which the registry-wide matrices (tests/test_norm_registry.py,
tests/test_double_backward_norms.py) run for every registered norm.
"""
import contextlib

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import GradcheckError
from minigrad.kernels import use_backend

from .mirror import _second_order, assert_double_mirror, assert_mirror, check_gradgrad, torch_or_skip


def case_arrays(spec, seed=0):
    """x (standard normal) and the parameters (1 + 0.5 N(0, 1): away from zero) of the entry's small case."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(spec.shape)] + [np.asarray(1 + 0.5 * rng.standard_normal(shape))
                                                for _, shape in spec.params]


def forms(spec):
    """(fused, composite) minigrad forms of the small case, each taking the tensors positionally."""
    fused, composite = spec.functional_form(), spec.composite_form()
    return (lambda *t: spec.call(fused, *t)), (lambda *t: spec.call(composite, *t))


def values_and_grads(fn, arrays, seed):
    """[output, gradient of each input] for a random upstream gradient."""
    tensors = [mg.tensor(a, requires_grad=True) for a in arrays]
    y = fn(*tensors)
    y.backward(mg.tensor(np.random.default_rng(seed).standard_normal(y.shape)))
    return [y.detach().numpy()] + [np.zeros(t.shape) if t.grad is None else t.grad.numpy() for t in tensors]


def assert_close_to_scale(a, b, tol=1e-12, what=""):
    """|a - b| <= tol * (1 + max|b|): relative to the scale of the whole array."""
    a, b = np.asarray(a), np.asarray(b)
    scale = 1 + np.abs(b).max(initial=0)
    error = np.abs(a - b).max(initial=0)
    assert error <= tol * scale, f"{what}: differs by {error:.3e} (scale {scale:.3g})"


# --------------------------------------------------------------------------- the checks
def on_both_backends(run, parallel=False):
    """{"numba": run(), "numpy": run()}, each under its backend; ``parallel`` forces every numba kernel onto its
    parallel path (``SERIAL_BELOW = 0``), else the small cases run on the serial twins."""
    nb = pytest.importorskip("minigrad.kernels.numba_kernels")
    serial_below = nb.SERIAL_BELOW
    nb.SERIAL_BELOW = 0 if parallel else serial_below
    try:
        results = {}
        for name in ("numba", "numpy"):
            with use_backend(name):
                results[name] = run()
        return results
    finally:
        nb.SERIAL_BELOW = serial_below


def check_gradcheck_both_backends(spec, seed=0):
    fused, _ = forms(spec)
    for backend in ("numpy", "numba"):
        with use_backend(backend):
            inputs = [mg.tensor(a, requires_grad=True) for a in case_arrays(spec, seed)]
            assert mg.autograd.gradcheck(fused, inputs), backend


def check_twins(spec, seed=1):
    fused, composite = forms(spec)
    arrays = case_arrays(spec, seed)
    names = ["forward"] + [f"gradient of input {i}" for i in range(len(arrays))]
    for name, a, b in zip(names, values_and_grads(fused, arrays, seed), values_and_grads(composite, arrays, seed)):
        assert_close_to_scale(a, b, what=f"{spec.name} fused vs composite, {name}")


def second_order_values(fn, arrays, u, directions):
    inputs = [mg.tensor(a, requires_grad=True) for a in arrays]
    _, first, second = _second_order(mg, fn, inputs, mg.tensor(u, requires_grad=True),
                                     [mg.tensor(v) for v in directions])
    likes = list(arrays) + [u]
    return [np.zeros(like.shape) if g is None else g.detach().numpy()
            for g, like in zip(list(first) + list(second), list(arrays) + likes)]


def check_second_order(spec, seed=2):
    """Second-order gradients of the fused form against autograd through the composite twin, then gradgradcheck."""
    fused, composite = forms(spec)
    arrays = case_arrays(spec, seed)
    rng = np.random.default_rng(seed + 100)
    u = rng.standard_normal(spec.shape)
    directions = [rng.standard_normal(a.shape) for a in arrays]
    ours, reference = (second_order_values(f, arrays, u, directions) for f in (fused, composite))
    for i, (a, b) in enumerate(zip(ours, reference)):
        assert_close_to_scale(a, b, what=f"{spec.name} second order, value {i}")
    check_gradgrad(fused, *case_arrays(spec, seed + 1))


def torch_form(spec):
    torch = torch_or_skip()
    return lambda *t: spec.torch_twin(torch, *t)


def check_torch(spec, seed=3):
    fused, _ = forms(spec)
    assert_mirror(fused, torch_form(spec), *case_arrays(spec, seed), seed=seed)
    assert_double_mirror(fused, torch_form(spec), *case_arrays(spec, seed + 1), seed=seed)


def check_module(spec, seed=4):
    """The module's forward is the functional called with the module's own parameters (set at random)."""
    module = spec.module_class()(*spec.module_args, dtype=mg.float64)
    names = [name for name, _ in spec.params]
    assert [n for n, _ in module.named_parameters()] == names, spec.name
    rng = np.random.default_rng(seed)
    for p in module.parameters():
        p.data[...] = 1 + 0.5 * rng.standard_normal(p.shape)
    x = mg.tensor(rng.standard_normal(spec.shape))
    expected = spec.call(spec.functional_form(), x, *(getattr(module, n) for n in names))
    np.testing.assert_array_equal(module(x).detach().numpy(), expected.detach().numpy())


def check_bad_inputs(bad_inputs):
    """Each ``(call(F, x), exception type, message pattern)`` raises that, and leaves x as it was."""
    for call, error, pattern in bad_inputs:
        x = mg.tensor(np.random.default_rng(5).standard_normal((2, 3, 4)), requires_grad=True)
        before = x.detach().numpy().copy()
        with pytest.raises(error, match=pattern):
            call(mg.nn.functional, x)
        np.testing.assert_array_equal(x.detach().numpy(), before)
        assert x.grad is None


def check_catches(spec, mutant):
    """With the wrong backward ``mutant()`` planted, the gradient checks fail."""
    with mutant():
        with pytest.raises((AssertionError, GradcheckError)):
            check_gradcheck_both_backends(spec)
            check_twins(spec)
            check_second_order(spec)


def check_norm(spec, bad_inputs=(), mutants=(), module=True):
    """Every check of the module docstring, for the registry entry ``spec``."""
    check_gradcheck_both_backends(spec)
    check_twins(spec)
    check_second_order(spec)
    check_torch(spec)
    if module:
        check_module(spec)
    check_bad_inputs(bad_inputs)
    for mutant in mutants:
        check_catches(spec, mutant)


def mutant(owner, name, wrong):
    """A mutant for ``check_norm``: a context-manager factory that, for the block, replaces the formula
    ``owner.name`` by ``wrong(original)`` (a function of the same signature that computes something else)."""
    @contextlib.contextmanager
    def planted():
        original = getattr(owner, name)
        setattr(owner, name, wrong(original))
        try:
            yield
        finally:
            setattr(owner, name, original)
    return planted
