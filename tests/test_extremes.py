"""Issue 24, item 5: the extremes and the small items, each against PyTorch 2.13 where PyTorch is involved.

* float32 inputs near float32's max (3e38 and -3e38 in one row): the centered norms give the exact answer,
  which is finite (PyTorch's batch_norm and instance_norm give 0 there, its variance having overflowed to
  inf; its layer_norm and group_norm give NaN). The oracle is PyTorch in float64, where these values are
  ordinary; normal data stays on the float32 path.
* instance_norm with eps=0 on a constant row: rstd = 0 as PyTorch's (y = bias, zero gradients).
* Adam/AdamW on a 0-d parameter; a scheduler state_dict that would replace its optimizer; ``tensor(['a'])``;
  norm modules called on a list; an optimizer state of the wrong shape: PyTorch's values and exception types.
"""
import copy

import numpy as np
import pytest

import minigrad as mg
from minigrad.kernels import use_backend
from tests.mirror import torch_or_skip

BACKENDS = ["numpy", "numba"]
MAX32 = float(np.finfo(np.float32).max)


# =========================================================================== float32 near its max
def extreme_input(shape, seed):
    """float32 (N, C, 5): channel 0 holds rows of four values near 3e38 and one of -3e38, whose mean (~1.8e38,
    per row, channel or group with channel 1) is so far from -3e38 that x - mean overflows float32; the other
    channels are ordinary."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    for n in range(shape[0]):
        x[n, 0] = rng.permutation([3e38, 2.9e38, 3e38, 2.8e38, -3e38])
    return x.astype(np.float32)


NORMS = {  # name -> (f(lib, x, w, b), needs (C,) affine parameters)
    "batch_norm": lambda lib, x, w, b: lib.nn.functional.batch_norm(x, None, None, w, b, training=True),
    "instance_norm": lambda lib, x, w, b: lib.nn.functional.instance_norm(x, weight=w, bias=b),
    "group_norm": lambda lib, x, w, b: lib.nn.functional.group_norm(x, 2, w, b),
    "layer_norm": lambda lib, x, w, b: lib.nn.functional.layer_norm(x, (x.shape[-1],)),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(NORMS))
def test_centered_norms_of_float32_near_its_max_give_the_exact_answer(name, backend):
    torch = torch_or_skip()
    norm = NORMS[name]
    x = extreme_input((3, 4, 5), seed=1)
    rng = np.random.default_rng(2)
    w, b = rng.uniform(0.5, 2.0, 4), rng.standard_normal(4)
    upstream = rng.standard_normal(x.shape)
    # The oracle: PyTorch in float64 on the same values (exactly representable there, far from overflow).
    xt = torch.tensor(x.astype(np.float64), requires_grad=True)
    wt, bt = (torch.tensor(a, requires_grad=True) for a in (w, b))
    yt = norm(torch, xt, wt, bt)
    yt.backward(torch.tensor(upstream))
    with use_backend(backend):
        xm = mg.tensor(x, requires_grad=True)
        wm, bm = (mg.tensor(a.astype(np.float32), requires_grad=True) for a in (w, b))
        y = norm(mg, xm, wm, bm)
        y.backward(mg.tensor(upstream.astype(np.float32)))
    assert y.dtype == mg.float32 and np.isfinite(y.detach().numpy()).all()
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-5)
    dx, dx_t = xm.grad.numpy(), xt.grad.numpy()
    assert xm.grad.dtype == mg.float32 and np.isfinite(dx).all()
    # dx is about rstd ~ 1e-39 in the extreme rows (float32's subnormals): compare relative to its scale.
    np.testing.assert_allclose(dx, dx_t, rtol=1e-4, atol=1e-5 * np.abs(dx_t).max())
    if name != "layer_norm":
        np.testing.assert_allclose(wm.grad.numpy(), wt.grad.numpy(), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(bm.grad.numpy(), bt.grad.numpy(), rtol=1e-5, atol=1e-4)


def test_pytorch_float32_is_finite_but_not_exact_there():
    """What the issue saw: PyTorch's float32 batch_norm/instance_norm stay finite (their variance overflows to
    inf, rstd to 0, y to the bias) while the exact answer is not 0; its layer_norm and group_norm give NaN."""
    torch = torch_or_skip()
    x = torch.tensor(extreme_input((3, 4, 5), seed=1))
    exact = torch.nn.functional.batch_norm(x.double(), None, None, training=True)
    approx = torch.nn.functional.batch_norm(x, None, None, training=True)
    assert torch.isfinite(approx).all() and (approx[:, 0] == 0).all() and (exact[:, 0].abs() > 0.1).any()
    assert torch.isnan(torch.nn.functional.layer_norm(x, (5,))).any()


@pytest.mark.parametrize("name", list(NORMS))
def test_ordinary_float32_data_stays_in_float32(name):
    """The float64 path is taken only where float32 would overflow: one comparison per row decides."""
    rng = np.random.default_rng(3)
    for x, dtype in ((rng.standard_normal((3, 4, 5)).astype(np.float32) * 1e3, np.float32),
                     (extreme_input((3, 4, 5), seed=4), np.float64)):
        xm = mg.tensor(x, requires_grad=True)
        y = NORMS[name](mg, xm, mg.ones(4), mg.zeros(4))
        node = (y if y._base is None else y._base).grad_fn   # (instance_norm's result is a view, as PyTorch's)
        rstd = node.saved_tensors[2]  # (x, mean, rstd, w) for each of them
        assert rstd.dtype == dtype, (name, rstd.dtype)


def test_centering_overflows_only_for_rows_that_can():
    from minigrad.ops.norm.common import centering_overflows

    count = 6
    threshold = 2 * np.sqrt(count) / MAX32
    assert centering_overflows(np.array([1.0, threshold], np.float32), count, np.float32)
    assert centering_overflows(np.array([0.0], np.float32), count, np.float32)  # float32 variance overflowed
    assert not centering_overflows(np.array([1e-30, np.inf, np.nan], np.float32), count, np.float32)
    assert not centering_overflows(np.array([0.0]), count, np.float64)


@pytest.mark.parametrize("name", ["batch_norm", "instance_norm", "group_norm"])
def test_double_backward_of_float32_near_its_max_is_pytorchs_in_float64(name):
    """create_graph=True through the float64 statistics: the gradient of <G, dx> is finite everywhere (in the
    extreme rows it is ~rstd**2 ~ 1e-77, below float32's range: 0) and PyTorch's float64 one in the ordinary
    channels 2 and 3 (their own rows, groups and channels)."""
    torch = torch_or_skip()
    x = extreme_input((3, 4, 5), seed=5)
    rng = np.random.default_rng(6)
    w = np.linspace(0.5, 2, 4)
    upstream, G = rng.standard_normal(x.shape), rng.standard_normal(x.shape)
    results = []
    for lib, dtype in ((mg, np.float32), (torch, np.float64)):
        xs, ws = lib.tensor(x.astype(dtype), requires_grad=True), lib.tensor(w.astype(dtype), requires_grad=True)
        y = NORMS[name](lib, xs, ws, None)
        (dx,) = lib.autograd.grad(y, xs, lib.tensor(upstream.astype(dtype)), create_graph=True)
        (ddx,) = lib.autograd.grad((dx * lib.tensor(G.astype(dtype))).sum(), xs)
        results.append((dx.detach().numpy(), ddx.detach().numpy()))
    (dx, ddx), (dx_t, ddx_t) = results
    assert np.isfinite(dx).all() and np.isfinite(ddx).all()
    np.testing.assert_allclose(dx[:, 2:], dx_t[:, 2:], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ddx[:, 2:], ddx_t[:, 2:], rtol=1e-3, atol=1e-4)


# =========================================================================== instance_norm with eps = 0
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_instance_norm_eps_0_on_constant_rows_is_pytorchs(dtype, backend):
    torch = torch_or_skip()
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 4)).astype(dtype)
    x[0, 1] = 2.5        # constant rows: variance 0, rstd = 0 in PyTorch
    x[1, :] = -1.0
    w, b = rng.standard_normal(3).astype(dtype), rng.standard_normal(3).astype(dtype)
    upstream = rng.standard_normal(x.shape).astype(dtype)
    outs = []
    for lib in (mg, torch):
        xs, ws, bs = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
        with use_backend(backend):
            y = lib.nn.functional.instance_norm(xs, weight=ws, bias=bs, eps=0.0)
            y.backward(lib.tensor(upstream))
        outs.append([t.detach().numpy() for t in (y, xs.grad, ws.grad, bs.grad)])
    for ours, theirs, what in zip(*outs, ("y", "dx", "dw", "db")):
        assert np.isfinite(ours).all(), what
        np.testing.assert_allclose(ours, theirs, rtol=1e-5 if dtype == "float32" else 1e-10, atol=1e-6, err_msg=what)
    np.testing.assert_array_equal(outs[0][0][1], np.broadcast_to(b[:, None], (3, 4)))  # y = bias on constant rows


def test_instance_norm_module_eps_0_with_running_stats_is_pytorchs():
    torch = torch_or_skip()
    x = np.ones((2, 3, 4), np.float32)
    x[0, 0] = [1, 2, 3, 4]
    results = []
    for lib in (mg, torch):
        norm = lib.nn.InstanceNorm1d(3, eps=0, affine=True, track_running_stats=True)
        y = norm(lib.tensor(x))
        results.append((y.detach().numpy(), norm.running_mean.numpy(), norm.running_var.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)


def test_group_norm_and_layer_norm_eps_0_on_constant_rows_stay_nan_as_pytorchs():
    """PyTorch's rstd = 0 belongs to its batch norm kernel (which its instance_norm uses); GroupNorm and
    LayerNorm give 1/sqrt(0) = inf there, and NaN, in PyTorch and in minigrad."""
    torch = torch_or_skip()
    for lib in (mg, torch):
        x = lib.ones(2, 4, 3)
        assert np.isnan(lib.nn.functional.group_norm(x, 2, eps=0.0).numpy()).all()
        assert np.isnan(lib.nn.functional.layer_norm(x, (3,), eps=0.0).numpy()).all()


# =========================================================================== optimizers and schedulers
ADAM_CASES = [("Adam", {}), ("Adam", {"amsgrad": True}), ("Adam", {"weight_decay": 0.1, "maximize": True}),
              ("AdamW", {}), ("AdamW", {"amsgrad": True, "weight_decay": 0.5})]


@pytest.mark.parametrize("name, options", ADAM_CASES, ids=[f"{n}{o}" for n, o in ADAM_CASES])
def test_adam_steps_a_0d_parameter_as_pytorch(name, options):
    torch = torch_or_skip()
    trajectories = []
    for lib in (mg, torch):
        p = lib.nn.Parameter(lib.tensor(1.5, dtype=lib.float64))
        q = lib.nn.Parameter(lib.tensor([0.5, -2.0], dtype=lib.float64))  # a 1-d one in the same group
        optimizer = getattr(lib.optim, name)([p, q], lr=0.1, **options)
        values = []
        for step in range(4):
            optimizer.zero_grad()
            (p * p * (step + 1) + (q * q * p).sum()).backward()
            optimizer.step()
            values.append([p.item(), *q.detach().numpy()])
        assert p.shape == ()
        trajectories.append(values)
    np.testing.assert_allclose(trajectories[0], trajectories[1], rtol=1e-12)


def _sgd_and_scheduler(lib):
    p = lib.nn.Parameter(lib.ones(3))
    optimizer = lib.optim.SGD([p], lr=0.1)
    scheduler = lib.optim.lr_scheduler.StepLR(optimizer, step_size=2)
    return optimizer, scheduler


def test_a_scheduler_state_that_replaces_its_optimizer_is_refused_at_load():
    torch = torch_or_skip()
    optimizer, scheduler = _sgd_and_scheduler(mg)
    other, _ = _sgd_and_scheduler(mg)
    state = {**scheduler.state_dict(), "optimizer": other}
    before = dict(scheduler.__dict__)
    with pytest.raises(ValueError, match="would replace the scheduler's optimizer"):
        scheduler.load_state_dict(state)
    assert scheduler.__dict__ == before and scheduler.optimizer is optimizer
    optimizer.step()
    scheduler.step()
    assert scheduler.get_last_lr() == [0.1]
    # PyTorch takes it and fails at the next step, with the optimizer swapped
    t_optimizer, t_scheduler = _sgd_and_scheduler(torch)
    t_scheduler.load_state_dict({**t_scheduler.state_dict(), "optimizer": "junk"})
    with pytest.raises(AttributeError):
        t_scheduler.step()


def test_a_moment_of_the_wrong_shape_raises_pytorchs_runtime_error_and_changes_nothing():
    torch = torch_or_skip()
    errors = []
    for lib in (mg, torch):
        p = lib.nn.Parameter(lib.ones(3))
        source = lib.optim.Adam([p])
        p.sum().backward()
        source.step()
        state = copy.deepcopy(source.state_dict())
        state["state"][0]["exp_avg"] = lib.zeros(4)
        optimizer = lib.optim.Adam([p])
        before = p.detach().numpy().copy()
        try:
            optimizer.load_state_dict(state)  # minigrad refuses here; PyTorch at the step
            p.grad = lib.ones(3)
            optimizer.step()
        except Exception as err:  # noqa: BLE001
            errors.append(err)
        np.testing.assert_array_equal(p.detach().numpy(), before)
        if lib is mg:
            assert not optimizer.state
    assert [type(e) for e in errors] == [RuntimeError, RuntimeError], errors
    assert "'exp_avg' of shape [4]" in str(errors[0]) and "expected shape [3]" in str(errors[0])


# =========================================================================== exception types
STRING_DATA = ["a", ["a"], [["a", "b"]], [1, "a"], ["a", 1], [[1.0], ["a"]], b"a", [b"a"], ("x",)]


@pytest.mark.parametrize("data", STRING_DATA, ids=repr)
def test_tensor_of_strings_raises_pytorchs_exception(data):
    torch = torch_or_skip()
    with pytest.raises(Exception) as theirs:
        torch.tensor(data)
    with pytest.raises(Exception) as ours:
        mg.tensor(data)
    assert type(ours.value) is type(theirs.value) and str(ours.value) == str(theirs.value)


NORM_MODULES = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "SyncBatchNorm",
                "GroupNorm", "LocalResponseNorm"]


@pytest.mark.parametrize("name", NORM_MODULES)
def test_norm_modules_on_a_list_raise_pytorchs_attribute_error(name):
    torch = torch_or_skip()
    data = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    messages = []
    for lib in (torch, mg):
        module = getattr(lib.nn, name)(*((1, 3) if name == "GroupNorm" else (2,) if name == "LocalResponseNorm"
                                         else (3,)))
        with pytest.raises(AttributeError) as info:
            module(data)
        messages.append(str(info.value))
    assert messages[0] == messages[1] == "'list' object has no attribute 'dim'"
    with pytest.raises(TypeError):  # and minigrad's kind for a wrong argument type
        getattr(mg.nn, name)(*((1, 3) if name == "GroupNorm" else (2,) if name == "LocalResponseNorm" else (3,)))(data)
