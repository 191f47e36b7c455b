"""PyTorch's implementation flags (``foreach``, ``fused``, ``capturable``, ``differentiable``, ``maximize``) on
every optimizer, as PyTorch 2.13 treats them on the CPU: the same signature, the same construction and step
outcome (values after three steps, or the exception type and message), and the same keys in each group."""
import inspect

import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_replay, torch_or_skip

torch = torch_or_replay()   # PyTorch, or without it a stand-in that skips the tests using it

NAMES = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"]
FLAGS = ["foreach", "fused", "capturable", "differentiable", "maximize"]
CASES = [(name, flag, value) for name in NAMES for flag in FLAGS for value in (True, False)
         if flag in inspect.signature(getattr(torch.optim, name).__init__).parameters]
CASES += [("SGD", "fused+foreach", True), ("Adam", "fused+differentiable", True), ("RMSprop", "fused", True),
          ("AdamW", "foreach", None), ("Adam", "fused", None)]


def outcome(lib, name, flag, value, grad_mode=True):
    """('ok', parameter values after 3 steps, group keys) or ('error', type name, message)."""
    kwargs = {f: value for f in flag.split("+")}
    rng = np.random.default_rng(0)
    w = rng.standard_normal(4)
    param = (mg.nn.Parameter(mg.tensor(w)) if lib is mg else torch.nn.Parameter(torch.tensor(w)))
    try:
        optimizer = getattr(lib.optim, name)([param], lr=0.1, **kwargs)
        for _ in range(3):
            param.grad = lib.tensor(rng.standard_normal(4))
            if grad_mode:
                optimizer.step()
            else:
                with lib.no_grad():
                    optimizer.step()
    except Exception as error:          # the outcome compared is the exception itself
        return "error", type(error).__name__, str(error)
    return "ok", param.detach().numpy().copy(), sorted(optimizer.param_groups[0])


@pytest.mark.parametrize("name, flag, value", CASES, ids=[f"{n}-{f}-{v}" for n, f, v in CASES])
def test_flags_behave_as_pytorch_on_the_cpu(name, flag, value):
    theirs, ours = outcome(torch, name, flag, value), outcome(mg, name, flag, value)
    assert ours[0] == theirs[0], (ours, theirs)
    if theirs[0] == "error":
        assert ours[1] == theirs[1], (ours, theirs)
        if theirs[1] != "TypeError":          # unexpected-keyword messages name the class differently
            assert ours[2] == theirs[2]
        return
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12, atol=1e-14)
    assert ours[2] == theirs[2]


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop"])
def test_differentiable_steps_refuse_leaves_also_under_no_grad(name):
    """PyTorch turns grad mode on for a differentiable step: a leaf that requires grad is refused even when the
    step is called under no_grad."""
    theirs, ours = outcome(torch, name, "differentiable", True, False), outcome(mg, name, "differentiable", True,
                                                                                   False)
    assert ours == theirs and theirs[0] == "error"


def test_signatures_take_pytorchs_flags():
    torch_or_skip()                     # reads PyTorch's own signatures: needs PyTorch itself
    for name in NAMES + ["LBFGS"]:
        theirs = inspect.signature(getattr(torch.optim, name).__init__).parameters
        ours = inspect.signature(getattr(mg.optim, name).__init__).parameters
        for flag in FLAGS:
            assert (flag in ours) == (flag in theirs), (name, flag)
            if flag in theirs:
                assert ours[flag].default == theirs[flag].default, (name, flag)
                assert (ours[flag].kind == inspect.Parameter.KEYWORD_ONLY) == (
                    theirs[flag].kind == inspect.Parameter.KEYWORD_ONLY), (name, flag)


def _hook_log(lib, optimizer_module):
    """The order and arguments of every optimizer hook over two steps, a state_dict and a load, in ``lib``."""
    log = []
    p = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
    opt = lib.optim.SGD([p], lr=0.5)
    handles = [
        optimizer_module.register_optimizer_step_pre_hook(lambda o, a, k: log.append(("global pre", len(a)))),
        optimizer_module.register_optimizer_step_post_hook(lambda o, a, k: log.append(("global post", len(a)))),
    ]
    try:
        opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", o is opt, len(a), sorted(k))))
        doubling = opt.register_step_pre_hook(lambda o, a, k: (a, {**k, "closure": lambda: 7.0}))
        opt.register_step_post_hook(lambda o, a, k: log.append(("post", sorted(k))))
        opt.register_state_dict_pre_hook(lambda o: log.append("sd pre 1"))
        opt.register_state_dict_pre_hook(lambda o: log.append("sd pre 0"), prepend=True)
        opt.register_state_dict_post_hook(lambda o, sd: {**sd, "note": "added"})
        opt.register_load_state_dict_pre_hook(lambda o, sd: log.append(("load pre", sorted(sd))) or
                                              {k: v for k, v in sd.items() if k != "note"})
        opt.register_load_state_dict_post_hook(lambda o: log.append("load post"))
        p.grad = lib.ones(2)
        log.append(("loss", opt.step()))
        doubling.remove()
        log.append(("loss", opt.step()))
        sd = opt.state_dict()
        log.append(("state_dict", sorted(sd)))
        opt.load_state_dict(sd)
        log.append(("p", p.detach().tolist()))
    finally:
        for handle in handles:
            handle.remove()
    return log


def test_optimizer_hooks_run_as_pytorchs():
    """Step pre and post hooks (per optimizer and global, a pre hook replacing the step's arguments, removal),
    state_dict and load_state_dict hooks (prepend, a post hook replacing the dict, a pre hook filtering it): the same
    calls in the same order as PyTorch's."""
    real_torch = torch_or_skip()
    import torch.optim.optimizer as torch_optimizer
    from minigrad.optim import optimizer as mg_optimizer
    assert _hook_log(mg, mg_optimizer) == _hook_log(real_torch, torch_optimizer)
