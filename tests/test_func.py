"""minigrad.func.functional_call (and the old nn.utils.stateless one) against torch.func.functional_call: outputs,
gradients reaching the tensors given (random upstream), buffers updated in them, tied weights, strict names,
errors, and the module left as it was."""
import warnings

import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip


def _twins(torch, build, rng):
    """The same module in both libraries, float64, with the same values."""
    ours, theirs = build(mg).double(), build(torch).double()
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        q.data = torch.tensor(rng.standard_normal(tuple(q.shape)))
        p.data = mg.tensor(q.data.numpy())
    return ours, theirs


def _mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))


def test_outputs_and_gradients_reach_the_given_tensors(rng):
    torch = torch_or_skip()
    ours, theirs = _twins(torch, _mlp, rng)
    kept = {name: p.detach().numpy().copy() for name, p in ours.named_parameters()}
    given = {"0.weight": rng.standard_normal((4, 3)), "2.bias": rng.standard_normal(2)}
    x, upstream = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    results = []
    for lib, module in ((mg, ours), (torch, theirs)):
        tensors = {name: lib.tensor(value, requires_grad=True) for name, value in given.items()}
        out = lib.func.functional_call(module, tensors, lib.tensor(x))
        out.backward(lib.tensor(upstream))
        results.append([out.detach().numpy()] + [tensors[name].grad.numpy() for name in given]
                       + [module[2].weight.grad.numpy()])           # the module's own weight, used as it is
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    for name, p in ours.named_parameters():                          # the module holds its own tensors again
        assert type(p) is mg.nn.Parameter
        np.testing.assert_array_equal(p.detach().numpy(), kept[name])
    assert ours[0].weight.grad is None and ours[2].bias.grad is None


def test_buffers_given_are_updated_in_training(rng):
    torch = torch_or_skip()
    x = rng.standard_normal((6, 3))
    results = []
    for lib in (mg, torch):
        bn = lib.nn.BatchNorm1d(3).double()
        stats = {"running_mean": lib.zeros(3, dtype=lib.float64), "running_var": lib.ones(3, dtype=lib.float64),
                 "num_batches_tracked": lib.tensor(0)}
        out = lib.func.functional_call(bn, (stats,), args=(lib.tensor(x),), kwargs={})
        results.append([out.detach().numpy(), stats["running_mean"].numpy(), stats["running_var"].numpy(),
                        bn.running_mean.numpy(), int(stats["num_batches_tracked"]), int(bn.num_batches_tracked)])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_array_equal(results[0][3], np.zeros(3))          # the module's own buffer untouched


class _Tied:
    """Two layers sharing one weight (as an embedding and an output head do)."""

    @staticmethod
    def build(lib):
        class Tied(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.first, self.second = lib.nn.Linear(3, 3, bias=False), lib.nn.Linear(3, 3, bias=False)
                self.second.weight = self.first.weight

            def forward(self, x):
                return self.second(self.first(x).tanh())
        return Tied()


@pytest.mark.parametrize("tie_weights", [True, False])
def test_tied_weights_as_pytorch(rng, tie_weights):
    torch = torch_or_skip()
    ours, theirs = _twins(torch, _Tied.build, rng)
    w, x = rng.standard_normal((3, 3)), rng.standard_normal((2, 3))
    outs = [lib.func.functional_call(m, {"first.weight": lib.tensor(w)}, (lib.tensor(x),), tie_weights=tie_weights)
            for lib, m in ((mg, ours), (torch, theirs))]
    np.testing.assert_allclose(outs[0].detach().numpy(), outs[1].detach().numpy(), rtol=1e-12)
    for lib, m in ((mg, ours), (torch, theirs)):
        with pytest.raises(ValueError, match="which are tied. Consider using tie_weights=False"):
            lib.func.functional_call(m, {"first.weight": lib.zeros(3, 3), "second.weight": lib.ones(3, 3)},
                                     (lib.tensor(x),))


def test_errors_as_pytorch_and_the_module_restored_after_one(rng):
    torch = torch_or_skip()
    ours, _ = _twins(torch, _mlp, rng)
    for lib in (mg, torch):
        module = _mlp(lib)
        w = lib.zeros(4, 3)
        with pytest.raises(RuntimeError, match=r"(?s)Error\(s\) in reparametrizing for Sequential:.*"
                                               r"Unexpected key\(s\): 'bogus'\..*Missing key\(s\): '0.bias', "):
            lib.func.functional_call(module, {"0.weight": w, "bogus": w}, lib.ones(1, 3), strict=True)
        with pytest.raises(ValueError, match=r"\['0.weight'\] appeared in multiple dictionaries"):
            lib.func.functional_call(module, ({"0.weight": w}, {"0.weight": w}), lib.ones(1, 3))
    kept = ours[0].weight
    with pytest.raises(RuntimeError):                               # the forward fails: wrong input width
        mg.func.functional_call(ours, {"0.weight": mg.zeros(4, 3, dtype=mg.float64)}, mg.ones(1, 5))
    assert ours[0].weight is kept


def test_the_old_stateless_name_warns_and_computes_the_same(rng):
    torch = torch_or_skip()
    ours, theirs = _twins(torch, _mlp, rng)
    x = rng.standard_normal((2, 3))
    outs = []
    for lib, module in ((mg, ours), (torch, theirs)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            outs.append(lib.nn.utils.stateless.functional_call(module, {"2.bias": lib.zeros(2, dtype=lib.float64)},
                                                               (lib.tensor(x),)).detach().numpy())
        assert [w.category for w in caught] == [FutureWarning]
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12)
