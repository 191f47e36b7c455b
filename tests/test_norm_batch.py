"""BatchNorm1d/2d and F.batch_norm: gradchecks, fused == composite, PyTorch mirrors (forward, every
gradient and every buffer over several training steps, then eval), properties, edge cases, errors."""
import inspect
import itertools
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F
from minigrad.autograd import GradcheckError
from minigrad.ops.norm.batchnorm import BatchNormFunction as FusedBatchNorm
from minigrad.ops.norm.batchnorm import batch_norm_composite

from .mirror import check_grad, torch_or_skip, torch_result
from .oracle import RecordedError

SHAPES = [(5, 3), (3, 3, 4), (2, 3, 2, 3)]  # (N, C), (N, C, L), (N, C, H, W)


def randn(shape, seed, scale=1.0, shift=0.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale + shift


def affine_arrays(c, affine, seed=7):
    """Random (weight, bias) of C elements, or (None, None)."""
    return (randn(c, seed), randn(c, seed + 1)) if affine else (None, None)


def as_tensors(*arrays):
    return [None if a is None else mg.tensor(a, requires_grad=True) for a in arrays]


def assert_close(ours, theirs, what, rtol=1e-10, atol=1e-10):
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, err_msg=what)


def assert_raises_like_torch(call):
    """``call(lib, F)`` raises in minigrad (lib = minigrad) the exception PyTorch raises (lib = torch):
    same type, same message."""
    expected = torch_result(lambda torch: call(torch, torch.nn.functional), values=False)
    assert isinstance(expected, RecordedError), f"PyTorch does not raise: it gives {expected!r}"
    with pytest.raises(type(expected.exception()), match=f"^{re.escape(expected.message)}$"):
        call(mg, F)


def constructor_parameters(cls, extras=()):
    """(name, default, kind) of each ``__init__`` parameter of ``cls``, leaving out ``extras``
    (minigrad's keyword-only additions)."""
    return [(p.name, p.default, p.kind) for p in inspect.signature(cls.__init__).parameters.values()
            if not (p.name in extras and p.kind == p.KEYWORD_ONLY)]


# ----------------------------------------------------------------------------- mirror helpers
def mirror_steps(mg_fn, th_fn, shape, params=(), state=None, steps=3, seed=0, shift=0.5):
    """``steps`` training steps, then one eval step, of ``mg_fn(x, training)`` and ``th_fn(x, training)``
    on the same float64 input and random upstream gradient. After every step: output, input gradient,
    the gradient of every (minigrad, torch) parameter pair, and ``state()`` (two dicts name -> array,
    the buffers) must agree to 1e-10. Parameters get the same random values first."""
    torch = torch_or_skip()
    rng = np.random.default_rng(seed)
    for p, tp in params:
        values = rng.standard_normal(p.shape)
        p.data[...] = values
        with torch.no_grad():
            tp.copy_(torch.tensor(values))
    for step in range(steps + 1):
        training, where = step < steps, f"step {step}"
        xa, g = rng.standard_normal(shape) * 2 + shift, rng.standard_normal(shape)
        x, tx = mg.tensor(xa, requires_grad=True), torch.tensor(xa, requires_grad=True)
        for p, tp in params:
            p.grad, tp.grad = None, None
        y, ty = mg_fn(x, training), th_fn(tx, training)
        assert_close(y.detach().numpy(), ty.detach().numpy(), f"forward, {where}")
        y.backward(mg.tensor(g))
        ty.backward(torch.tensor(g))
        assert_close(x.grad.numpy(), tx.grad.numpy(), f"input gradient, {where}")
        for i, (p, tp) in enumerate(params):
            assert_close(p.grad.numpy(), tp.grad.numpy(), f"gradient of parameter {i}, {where}")
        if state is not None:
            ours, theirs = state()
            assert sorted(ours) == sorted(theirs), (sorted(ours), sorted(theirs))
            for name in theirs:
                assert_close(np.asarray(ours[name]), theirs[name].numpy(), f"{name}, {where}")


def functional_buffers(c, torch):
    """Fresh running_mean/var pairs for minigrad and torch, plus the state() callable comparing them."""
    rm, rv = mg.zeros(c, dtype=mg.float64), mg.ones(c, dtype=mg.float64)
    trm, trv = torch.zeros(c, dtype=torch.float64), torch.ones(c, dtype=torch.float64)
    return rm, rv, trm, trv, lambda: ({"running_mean": rm.detach().numpy(), "running_var": rv.detach().numpy()},
                                      {"running_mean": trm, "running_var": trv})


def mirror_module(module, torch_module, shape, steps=3, seed=0):
    """``mirror_steps`` for a minigrad module and its PyTorch twin, both in float64: every parameter's
    gradient and the whole state_dict (keys, parameters, all buffers) compared after every step."""
    module.double()
    torch_module.double()
    names = [n for n, _ in module.named_parameters()]
    assert names == [n for n, _ in torch_module.named_parameters()]
    mirror_steps(lambda x, training: module.train(training)(x), lambda x, training: torch_module.train(training)(x),
                 shape, params=list(zip(module.parameters(), torch_module.parameters())), steps=steps, seed=seed,
                 state=lambda: ({k: v.detach().numpy() for k, v in module.state_dict().items()}, torch_module.state_dict()))


# ----------------------------------------------------------------------------- gradchecks
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("eps", [1e-5, 0.3])
def test_gradcheck_training_batch_statistics(shape, affine, eps):
    # running buffers None: batch statistics, nothing updated while the checker perturbs x
    w, b = affine_arrays(shape[1], affine)
    check_grad(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True, eps=eps), randn(shape, 1), w, b)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("eps", [0.0, 1e-5])
def test_gradcheck_eval_running_statistics(shape, affine, eps):
    c = shape[1]
    rm, rv = mg.tensor(randn(c, 2)), mg.tensor(np.abs(randn(c, 3)) + 0.5)
    w, b = affine_arrays(c, affine)
    check_grad(lambda x, w, b: F.batch_norm(x, rm, rv, w, b, training=False, eps=eps), randn(shape, 1), w, b)


def test_gradcheck_rejects_a_wrong_backward():
    class EvalFormulaInTraining(FusedBatchNorm):
        """A classic bug: treating the batch statistics as constants (dx = rstd * gw) in training."""
        @staticmethod
        def backward(ctx, dout):
            ctx.training = False
            return FusedBatchNorm.backward(ctx, dout)

    def wrong(x):
        mean, var = x.detach().numpy().mean(axis=(0, 2)), x.detach().numpy().var(axis=(0, 2))
        return EvalFormulaInTraining.apply(x, None, None, mean, 1 / np.sqrt(var + 1e-5), True)

    x = mg.tensor(randn((4, 3, 2), 0), requires_grad=True)
    with pytest.raises(GradcheckError, match="input 0"):
        mg.gradcheck(wrong, (x,))


# ----------------------------------------------------------------------------- fused == composite
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_fused_equals_composite(shape, training, affine):
    c, g = shape[1], randn(shape, 9)
    results = []
    for fn in (F.batch_norm, batch_norm_composite):
        x, w, b = as_tensors(randn(shape, 1, 3.0, 2.0), *affine_arrays(c, affine))
        rm, rv = mg.tensor(randn(c, 2)), mg.tensor(np.abs(randn(c, 3)) + 0.5)
        y = fn(x, rm, rv, w, b, training=training, momentum=0.3, eps=1e-3)
        y.backward(mg.tensor(g))
        results.append([y._data, rm._data, rv._data] + [t.grad._data for t in (x, w, b) if t is not None])
    for i, (fused, composite) in enumerate(zip(*results)):
        assert_close(fused, composite, f"item {i}", rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------------------- PyTorch mirrors (functional)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("momentum", [0.1, 0.6])
def test_mirror_functional_with_running_buffers(shape, momentum):
    torch = torch_or_skip()
    c = shape[1]
    rm, rv, trm, trv, state = functional_buffers(c, torch)
    w, b = as_tensors(*affine_arrays(c, True))
    tw, tb = (torch.tensor(t.detach().numpy(), requires_grad=True) for t in (w, b))
    mirror_steps(lambda x, tr: F.batch_norm(x, rm, rv, w, b, tr, momentum, 1e-4),
                 lambda x, tr: torch.nn.functional.batch_norm(x, trm, trv, tw, tb, tr, momentum, 1e-4),
                 shape, params=[(w, tw), (b, tb)], state=state)


def test_strided_running_buffers_are_updated_in_their_memory():
    """Running buffers that are strided views of a larger tensor: the blend lands in that tensor's memory (the
    kernel works on a contiguous copy, written back), element for element as PyTorch updates the same views."""
    torch = torch_or_skip()
    x, base = randn((4, 3, 5), 3), randn(12, 4)
    ours, theirs = mg.tensor(base.copy()), torch.tensor(base.copy())
    for _ in range(2):
        F.batch_norm(mg.tensor(x), ours[::4], ours[1::4], training=True, momentum=0.3)
        torch.nn.functional.batch_norm(torch.tensor(x), theirs[::4], theirs[1::4], training=True, momentum=0.3)
    assert_close(ours._data, theirs.numpy(), "the tensor under the buffers", rtol=1e-12, atol=1e-12)
    assert not np.allclose(ours._data[::4], base[::4]) and np.array_equal(ours._data[2::4], base[2::4])


def test_mirror_constant_channel():
    """A channel with zero variance: xhat = 0, y = bias, rstd = 1/sqrt(eps); gradients stay finite."""
    torch = torch_or_skip()
    x = randn((4, 3, 5), 1)
    x[:, 1, :] = 2.5
    rm, rv, trm, trv, state = functional_buffers(3, torch)
    w, b = as_tensors(*affine_arrays(3, True))
    tw, tb = (torch.tensor(t.detach().numpy(), requires_grad=True) for t in (w, b))
    xs, tx = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y = F.batch_norm(xs, rm, rv, w, b, True)
    ty = torch.nn.functional.batch_norm(tx, trm, trv, tw, tb, True)
    g = randn(x.shape, 2)
    y.backward(mg.tensor(g))
    ty.backward(torch.tensor(g))
    assert_close(y.detach().numpy()[:, 1], b.detach().numpy()[1], "constant channel gives the bias")
    for ours, theirs, what in [(y, ty, "forward"), (xs.grad, tx.grad, "dx"), (w.grad, tw.grad, "dw"),
                               (b.grad, tb.grad, "db"), (rm, trm, "running_mean"), (rv, trv, "running_var")]:
        assert_close(ours.detach().numpy(), theirs.detach().numpy(), what)
    assert np.isfinite(xs.grad.numpy()).all()


def assert_float16_like_torch(ours, torch_results, loose):
    """``ours``: minigrad's results of a float16 computation; ``torch_results(dtype)``: torch's on the same
    values, in the inputs' own dtypes (dtype None) or in float64. Ours must be within about one float16 ulp
    of both. ``loose``: torch's own float16 path keeps statistics in float16 there (all-float16 inputs),
    so against it a few ulps are allowed."""
    for dtype in (None, "float64"):
        for i, (mine, theirs) in enumerate(zip(ours, torch_results(dtype))):
            tol = 1e-2 if loose and dtype is None else 2e-3
            np.testing.assert_allclose(mine.detach().numpy().astype(np.float64),
                                       theirs.detach().numpy().astype(np.float64),
                                       rtol=tol, atol=tol, err_msg=f"item {i} vs torch in {dtype or 'float16'}")


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("param_dtype", [np.float16, np.float32])  # PyTorch's two accepted CPU combinations
def test_float16_matches_torch(training, param_dtype):
    """float16 input is computed in float32 and cast back once; dx comes back as float16."""
    torch = torch_or_skip()
    x = (randn((6, 3, 4), 1, 40.0, 300.0)).astype(np.float16)  # |x| > 256: x**2 overflows float16
    g = randn(x.shape, 2).astype(np.float16)
    arrays = [a.astype(param_dtype) for a in (randn(3, 3, 10.0, 300.0), np.full(3, 1600.0), *affine_arrays(3, True))]
    rm, rv, w, b = (mg.tensor(a, requires_grad=i >= 2) for i, a in enumerate(arrays))
    xs = mg.tensor(x, requires_grad=True)
    y = F.batch_norm(xs, rm, rv, w, b, training)
    y.backward(mg.tensor(g))
    assert (y.dtype, xs.grad.dtype, w.grad.dtype, rm.dtype) == (np.float16, np.float16, param_dtype, param_dtype)

    def torch_results(dtype):
        tx, trm, trv, tw, tb = (torch.tensor(a, dtype=torch.float64 if dtype else None, requires_grad=i in (0, 3, 4))
                                for i, a in enumerate([x] + arrays))
        ty = torch.nn.functional.batch_norm(tx, trm, trv, tw, tb, training)
        ty.backward(torch.tensor(g, dtype=ty.dtype))
        return [ty, tx.grad, tw.grad, tb.grad, trm, trv]

    assert_float16_like_torch([y, xs.grad, w.grad, b.grad, rm, rv], torch_results, param_dtype == np.float16)


@pytest.mark.parametrize("fn", [lambda x: F.batch_norm(x, None, None, training=True), lambda x: F.group_norm(x, 3)],
                         ids=["batch_norm", "group_norm"])
def test_float32_large_mean_small_std_needs_two_pass_variance(fn):
    """mean 1e4, std 1e-2 in float32: E[x^2] - E[x]^2 would cancel to noise of ~1e1 (x^2 ~ 1e8, ulp 8)
    against a variance of 1e-4. The two-pass kernels stay within the float32 rounding of the mean
    (ulp(1e4) / std ~ 0.1) of the float64 result on the same values."""
    x = randn((64, 3, 32), 0, 1e-2, 1e4).astype(np.float32)
    lo, hi = fn(mg.tensor(x)).detach().numpy(), fn(mg.tensor(x.astype(np.float64))).detach().numpy()
    assert np.abs(lo - hi).max() < 0.25


# ----------------------------------------------------------------------------- properties
@given(st.integers(0, 10**6), st.floats(-2.0, 3.0), st.sampled_from(SHAPES))
def test_eval_is_affine_in_x(seed, a, shape):
    c = shape[1]
    rm, rv = mg.tensor(randn(c, seed)), mg.tensor(np.abs(randn(c, seed + 1)) + 0.1)
    w, b = (mg.tensor(t) for t in affine_arrays(c, True, seed + 2))
    x1, x2 = randn(shape, seed + 3, 3.0), randn(shape, seed + 4)

    def f(x):
        return F.batch_norm(mg.tensor(x), rm, rv, w, b, training=False).detach().numpy()

    assert_close(f(a * x1 + (1 - a) * x2), a * f(x1) + (1 - a) * f(x2), "affinity", rtol=1e-9, atol=1e-9)


@given(st.integers(0, 10**6), st.sampled_from(SHAPES), st.booleans())
def test_float32_close_to_float64(seed, shape, training):
    c = shape[1]
    x = randn(shape, seed, 2.0, 1.0)
    stats = randn(c, seed + 1), np.abs(randn(c, seed + 2)) + 0.5
    w, b = affine_arrays(c, True, seed + 3)
    outs = []
    for dtype in (np.float32, np.float64):
        rm, rv = (mg.tensor(s.astype(dtype)) for s in stats)
        y = F.batch_norm(mg.tensor(x.astype(dtype)), rm, rv, mg.tensor(w.astype(dtype)), mg.tensor(b.astype(dtype)),
                         training)
        assert y.dtype == dtype and rm.dtype == dtype
        outs.append([y.detach().numpy(), rm.detach().numpy(), rv.detach().numpy()])
    for lo, hi in zip(*outs):
        np.testing.assert_allclose(lo, hi, rtol=1e-5, atol=1e-5 * np.abs(hi).max())


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize("shape", [(1, 3), (1, 3, 1), (1, 3, 1, 1)])
def test_functional_one_value_per_channel_in_training(shape):
    rm, rv = mg.zeros(3, dtype=mg.float64), mg.ones(3, dtype=mg.float64)
    with pytest.raises(ValueError, match=rf"^Expected more than 1 value per channel when training, got input size "
                                         rf"\[{', '.join(map(str, shape))}\]$"):
        F.batch_norm(mg.tensor(randn(shape, 0)), rm, rv, training=True)
    assert rm.detach().numpy().tolist() == [0, 0, 0] and rv.detach().numpy().tolist() == [1, 1, 1]
    F.batch_norm(mg.tensor(randn(shape, 0)), rm, rv, training=False)  # eval is fine
    F.batch_norm(mg.tensor(randn((1, 3, 4), 0)), rm, rv, training=True)  # n = 4 values per channel


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(training=True, eps=0.0), ValueError, "batch_norm eps must be positive during training, but got 0.0"),
    (dict(training=False, eps=-1.0), ValueError, "batch_norm eps must be non-negative, but got -1.0"),
    (dict(running_mean=mg.zeros(4)), RuntimeError, "running_mean should contain 3 elements not 4"),
    (dict(running_var=mg.ones(2)), RuntimeError, "running_var should contain 3 elements not 2"),
    (dict(weight=mg.ones(4)), RuntimeError, "weight should contain 3 elements not 4"),
    (dict(bias=mg.ones(5)), RuntimeError, "bias should contain 3 elements not 5"),
    (dict(running_var=None, training=True), ValueError,
     "running_mean and running_var must either both be None or neither be None"),
    (dict(running_mean=None, running_var=None, training=False), RuntimeError,
     "running_mean must be defined in evaluation mode"),
    (dict(input=mg.zeros(3)), RuntimeError, "Expected at least 2 dimensions for input tensor but received 1"),
])
def test_functional_errors_leave_buffers_unchanged(kwargs, error, message):
    rm, rv = mg.zeros(3, dtype=mg.float64), mg.ones(3, dtype=mg.float64)
    args = dict(input=mg.tensor(randn((4, 3), 0)), running_mean=rm, running_var=rv, training=True)
    args.update(kwargs)
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        F.batch_norm(**args)
    assert rm.detach().numpy().tolist() == [0, 0, 0] and rv.detach().numpy().tolist() == [1, 1, 1]


DTYPES = ("float16", "float32", "float64")
CHANNEL_CALLS = {  # (lib, F, x, weight, bias, running_mean, running_var) -> output
    "batch_norm train": lambda lib, F, x, w, b, rm, rv: F.batch_norm(x, rm, rv, w, b, training=True),
    "batch_norm eval": lambda lib, F, x, w, b, rm, rv: F.batch_norm(x, rm, rv, w, b, training=False),
    "instance_norm": lambda lib, F, x, w, b, rm, rv: F.instance_norm(x, rm, rv, w, b),
    "group_norm": lambda lib, F, x, w, b, rm, rv: F.group_norm(x, 3, w, b),
}


@pytest.mark.parametrize("call", CHANNEL_CALLS)
@pytest.mark.parametrize("x_dtype, param_dtype, stat_dtype", list(itertools.product(DTYPES, DTYPES, DTYPES)))
def test_parameter_and_buffer_dtypes_follow_pytorch(call, x_dtype, param_dtype, stat_dtype):
    """PyTorch's CPU rule: parameters and buffers in the input's dtype, or all float32 under float16 input;
    InstanceNorm takes running stats of any dtype. Otherwise the same error (type and text) as PyTorch."""

    def run(lib, F):
        dtype = lambda name: getattr(lib, name)  # noqa: E731
        x = lib.tensor(randn((4, 3, 5), 0)).to(dtype(x_dtype))
        w, b = lib.ones(3, dtype=dtype(param_dtype)), lib.zeros(3, dtype=dtype(param_dtype))
        rm, rv = lib.zeros(3, dtype=dtype(stat_dtype)), lib.ones(3, dtype=dtype(stat_dtype))
        return CHANNEL_CALLS[call](lib, F, x, w, b, rm, rv)

    expected = torch_result(lambda torch: run(torch, torch.nn.functional), values=False)
    if isinstance(expected, RecordedError):
        if expected.kind != "RuntimeError":
            raise expected.exception()
        assert_raises_like_torch(run)
    else:
        assert run(mg, F).dtype == getattr(mg, str(expected.dtype).split(".")[1])


# ----------------------------------------------------------------------------- modules
MODULE_CASES = [("BatchNorm1d", (5, 3)), ("BatchNorm1d", (4, 3, 5)), ("BatchNorm2d", (3, 3, 2, 4)),
                ("BatchNorm3d", (2, 3, 2, 3, 2))]


@pytest.mark.parametrize("name, shape", MODULE_CASES)
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("training, eps", [(True, 1e-5), (True, 0.2), (False, 0.0), (False, 1e-3)])
def test_module_gradcheck(name, shape, affine, training, eps):
    # training: track_running_stats=False (batch statistics, no buffer moves while x is perturbed);
    # eval: the (random) running buffers are constants
    module = getattr(nn, name)(shape[1], eps=eps, affine=affine, track_running_stats=not training).double()
    if not training:
        module.running_mean.data[...] = randn(shape[1], 2)
        module.running_var.data[...] = np.abs(randn(shape[1], 3)) + 0.5
    module.train(training)
    params = list(module.parameters())
    for p in params:
        p.data[...] = randn(p.shape, 4)
    assert mg.gradcheck(lambda x, *ps: module(x), [mg.tensor(randn(shape, 1), requires_grad=True)] + params)


@pytest.mark.parametrize("name, shape", MODULE_CASES)
@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("track_running_stats", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_module_mirror_three_steps_then_eval(name, shape, momentum, track_running_stats, affine):
    torch = torch_or_skip()
    kwargs = dict(momentum=momentum, affine=affine, track_running_stats=track_running_stats)
    mirror_module(getattr(nn, name)(3, **kwargs), getattr(torch.nn, name)(3, **kwargs), shape)


@pytest.mark.parametrize("kwargs", [dict(eps=1e-3, bias=False), dict(momentum=0.7, eps=0.5)])
def test_module_mirror_other_options(kwargs):
    torch = torch_or_skip()
    mirror_module(nn.BatchNorm2d(3, **kwargs), torch.nn.BatchNorm2d(3, **kwargs), (2, 3, 3, 2))


def test_module_mirror_track_running_stats_switched_off_after_construction():
    """Training then stops updating the buffers; eval still uses them (PyTorch 2.13)."""
    torch = torch_or_skip()
    module, torch_module = nn.BatchNorm1d(3), torch.nn.BatchNorm1d(3)
    mirror_module(module, torch_module, (4, 3, 2), steps=2)
    module.track_running_stats = torch_module.track_running_stats = False
    mirror_module(module, torch_module, (4, 3, 2), steps=2, seed=1)


def test_momentum_none_is_the_average_of_all_batches():
    module = nn.BatchNorm1d(3, momentum=None).double()
    batches = [randn((4, 3, 5), seed, 2.0, seed) for seed in range(4)]
    for x in batches:
        module(mg.tensor(x))
    np.testing.assert_allclose(module.running_mean.detach().numpy(), np.mean([x.mean(axis=(0, 2)) for x in batches], 0),
                               rtol=1e-13)
    np.testing.assert_allclose(module.running_var.detach().numpy(), np.mean([x.var(axis=(0, 2), ddof=1) for x in batches], 0),
                               rtol=1e-13)
    assert module.num_batches_tracked.item() == 4 and module.num_batches_tracked.dtype == np.int64


def assert_same_fresh_module(module, torch_module):
    """Same repr and state_dict (keys, shapes, dtypes, values) as the freshly built PyTorch module."""
    assert repr(module) == repr(torch_module)
    ours, theirs = module.state_dict(), torch_module.state_dict()
    assert list(ours) == list(theirs)
    for key in theirs:
        assert ours[key].shape == tuple(theirs[key].shape) and ours[key].dtype == theirs[key].numpy().dtype
        np.testing.assert_array_equal(ours[key].detach().numpy(), theirs[key].numpy())


def test_module_defaults_repr_state_dict_and_resets():
    torch = torch_or_skip()
    for name in ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d"):
        for kwargs in (dict(), dict(momentum=None, affine=False), dict(track_running_stats=False, bias=False)):
            assert_same_fresh_module(getattr(nn, name)(4, **kwargs), getattr(torch.nn, name)(4, **kwargs))
    module = nn.BatchNorm1d(3, dtype=mg.float64)
    module(mg.tensor(randn((4, 3), 0)))
    module.weight.data[...] = 5.0
    module.reset_running_stats()
    assert module.running_mean.detach().numpy().tolist() == [0] * 3 and module.running_var.detach().numpy().tolist() == [1] * 3
    assert module.num_batches_tracked.item() == 0 and module.weight.detach().numpy().tolist() == [5] * 3
    module.reset_parameters()
    assert module.weight.detach().numpy().tolist() == [1] * 3


def test_module_constructor_signatures_are_pytorchs():
    torch = torch_or_skip()
    for name in ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d"):
        assert constructor_parameters(getattr(nn, name)) == constructor_parameters(getattr(torch.nn, name))


def test_module_loads_a_torch_state_dict():
    torch = torch_or_skip()
    torch_module = torch.nn.BatchNorm2d(3).double()
    torch_module(torch.randn(4, 3, 2, 2, dtype=torch.float64) * 3 + 1)
    module = nn.BatchNorm2d(3).double()
    module.load_state_dict({k: v.numpy() for k, v in torch_module.state_dict().items()})
    x = randn((2, 3, 2, 2), 5)
    np.testing.assert_allclose(module.eval()(mg.tensor(x)).detach().numpy(),
                               torch_module.eval()(torch.tensor(x)).detach().numpy(), rtol=1e-12)
    assert module.num_batches_tracked.item() == 1


def snapshot(module):
    return {k: np.asarray(v).copy() for k, v in module.state_dict().items()}


def assert_unchanged(module, before):
    after = snapshot(module)
    assert list(after) == list(before)
    for key in before:
        np.testing.assert_array_equal(after[key], before[key], err_msg=key)


@pytest.mark.parametrize("name, shape", [("BatchNorm1d", (1, 3)), ("BatchNorm1d", (1, 3, 1)),
                                         ("BatchNorm2d", (1, 3, 1, 1)), ("BatchNorm3d", (1, 3, 1, 1, 1))])
@pytest.mark.parametrize("momentum", [0.1, None])
def test_module_one_value_per_channel_changes_nothing(name, shape, momentum):
    module = getattr(nn, name)(3, momentum=momentum, dtype=mg.float64)
    module(mg.tensor(randn((2,) + shape[1:], 0)))  # one good step so the buffers are not at their defaults
    before = snapshot(module)
    with pytest.raises(ValueError, match=re.escape(f"got input size {list(shape)}")):
        module(mg.tensor(randn(shape, 1)))
    assert_unchanged(module, before)
    module.eval()(mg.tensor(randn(shape, 1)))  # eval is fine
    assert_unchanged(module, before)


@pytest.mark.parametrize("name, shape, message", [
    ("BatchNorm1d", (2, 3, 4, 4), "expected 2D or 3D input (got 4D input)"),
    ("BatchNorm1d", (3,), "expected 2D or 3D input (got 1D input)"),
    ("BatchNorm2d", (2, 3, 4), "expected 4D input (got 3D input)"),
    ("BatchNorm2d", (2, 3, 4, 4, 1), "expected 4D input (got 5D input)"),
    ("BatchNorm3d", (2, 3, 4, 4), "expected 5D input (got 4D input)"),
    ("BatchNorm3d", (2, 3, 4, 4, 1, 1), "expected 5D input (got 6D input)"),
])
def test_module_wrong_input_dims(name, shape, message):
    module = getattr(nn, name)(3)
    before = snapshot(module)
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        module(mg.tensor(randn(shape, 0)))
    assert_unchanged(module, before)


def test_module_wrong_channel_count_changes_nothing():
    module = nn.BatchNorm1d(3)
    before = snapshot(module)
    with pytest.raises(RuntimeError, match="^running_mean should contain 4 elements not 3$"):
        module(mg.tensor(randn((5, 4), 0)))
    assert_unchanged(module, before)


@pytest.mark.parametrize("dtype, unit", [("float16", 2.0 ** -10), ("bfloat16", 2.0 ** -7)])
@pytest.mark.parametrize("instance", [False, True], ids=["BatchNorm", "InstanceNorm"])
def test_16_bit_data_far_from_zero_normalizes_to_the_dtypes_rounding(dtype, unit, instance):
    """1000 + N(0, 1) in float16 or bfloat16: statistics in float32 with float64 sums keep the normalized values
    within about an ulp of the exact answer (computed here in float64 from the 16-bit values), where PyTorch 2.13's
    CPU loses up to 0.58 (docs/differences.md)."""
    x = mg.tensor(1000 + np.random.default_rng(0).standard_normal((4, 8)), dtype=getattr(mg, dtype))
    exact_input = x.float().numpy().astype(np.float64)                                  # the 16-bit values, exactly
    if instance:
        y = F.instance_norm(x.reshape(2, 4, 4)).reshape(4, 8)
        rows = exact_input.reshape(2, 4, 4)
        exact = ((rows - rows.mean(2, keepdims=True)) / np.sqrt(rows.var(2, keepdims=True) + 1e-5)).reshape(4, 8)
    else:
        y = F.batch_norm(x, None, None, training=True)
        exact = (exact_input - exact_input.mean(0)) / np.sqrt(exact_input.var(0) + 1e-5)
    got = y.float().numpy().astype(np.float64)
    assert np.abs(got - exact).max() <= unit * np.abs(exact).max()
