"""PyTorch's NumPy-style keyword names: ``axis=`` for ``dim=`` and ``keepdims=`` for ``keepdim=``, taken by every
``torch`` function and Tensor method that has those parameters (``torch.sum(x, axis=0, keepdims=True)``)."""
import inspect
import types

import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip

CALLS = [
    "lib.sum(a, axis=1, keepdims=True)", "a.sum(axis=0)", "a.mean(axis=1, keepdims=True)", "lib.argsort(a, axis=1)",
    "lib.cat([a, a], axis=1)", "a.max(axis=1).values", "lib.softmax(a, axis=1)", "a.argmax(axis=1, keepdims=True)",
    "lib.linalg.norm(a, axis=1)", "a.unsqueeze(axis=0)", "lib.topk(a, 2, axis=1).values", "lib.std(a, axis=0)",
    "lib.cumsum(a, axis=1)", "lib.stack([a, a], axis=2)", "a.logsumexp(axis=1)", "lib.special.logsumexp(a, axis=0)",
    "lib.fft.fft(a, axis=0).real", "a.all(axis=1)", "lib.amax(a, axis=1, keepdims=True)",
]


@pytest.mark.parametrize("call", CALLS)
def test_numpy_names_give_pytorchs_result(call):
    torch = torch_or_skip()
    values = np.random.default_rng(0).standard_normal((3, 4))
    results = []
    for lib in (mg, torch):
        a = lib.tensor(values)
        results.append(np.asarray(eval(call).numpy()))   # noqa: S307 - the calls above, in both libraries
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12, atol=1e-12)


def test_both_spellings_at_once_is_a_type_error():
    with pytest.raises(TypeError, match="multiple values for argument 'dim'"):
        mg.sum(mg.ones(2, 2), axis=0, dim=1)
    with pytest.raises(TypeError, match="multiple values for argument 'keepdim'"):
        mg.ones(2, 2).mean(dim=0, keepdim=True, keepdims=True)


def _takes_numpy_names(fn):
    """Whether calling ``fn`` with axis= / keepdims= reaches its dim / keepdim."""
    if getattr(fn, "numpy_names", False):
        return True
    parameters = inspect.signature(fn).parameters
    return "axis" in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())


@pytest.mark.parametrize("where", ["minigrad", "linalg", "special", "fft", "Tensor"])
def test_every_function_with_a_dim_takes_axis(where):
    """No function or method with a ``dim`` or ``keepdim`` parameter is left without the NumPy names."""
    owner = mg if where == "minigrad" else mg.Tensor if where == "Tensor" else getattr(mg, where)
    missing = []
    for name, fn in vars(owner).items():
        fn = getattr(owner, name) if where == "Tensor" else fn
        if name.startswith("_") or not isinstance(fn, types.FunctionType):
            continue
        try:
            parameters = inspect.signature(inspect.unwrap(fn)).parameters
        except (TypeError, ValueError):
            continue
        if ("dim" in parameters or "keepdim" in parameters) and not _takes_numpy_names(fn):
            missing.append(name)
    assert not missing, f"{where}: {missing} take dim/keepdim but not axis/keepdims"
