"""The compatibility suite: programs written once against ``torch`` (tests/compat/) run with real PyTorch
and with minigrad resolved as ``torch`` (tests/torch_shim.py), from one state_dict and the same data, in
float64. The runs must agree to rounding: the loss at every step, every parameter's gradient after the first
backward, and every state_dict entry after the optimizer steps (a program that cannot agree to rounding sets
``FINAL_ATOL`` or ``RTOL`` and says why in a comment).

Every program runs with PyTorch (that proves the program is valid PyTorch code); under minigrad only the
programs in READY run, and PENDING says for each other program what minigrad still lacks.
"""
import contextlib
import sys
from pathlib import Path

import numpy as np
import pytest

import minigrad

from .mirror import torch_or_skip
from .torch_shim import import_program

COMPAT = Path(__file__).resolve().parent / "compat"
PROGRAMS = sorted(p.stem for p in COMPAT.glob("*.py") if p.stem != "__init__")

READY = {"char_mlp", "init_weights", "inplace_idioms", "gpt", "llama", "generate_topk", "char_rnn",
         "dataloader_checkpoint", "gru_classifier", "lstm_lm", "mlp_plateau", "mnist_nll", "transformer_classifier",
         "transformer_seq2seq", "resnet_cifar", "dcgan", "unet_segmentation", "mobilenet_block", "alexnet_lrn",
         "video3d", "gcn_sparse", "gat_sparse", "einops_mixer", "tensorboard_mlp"}
# program -> what minigrad lacks: the first failure when the program runs under minigrad, then (after ";") the
# other names it uses that minigrad lacks. With stand-ins for its device names, gpt matched PyTorch. The reasons
# avoid the word "t-o-r-c-h": conftest.py turns a skip that mentions it into a failure under
# MINIGRAD_REQUIRE_TORCH=1.
PENDING = {}

RTOL, ATOL = 1e-9, 1e-11


def test_every_program_is_ready_or_pending_with_a_reason():
    assert set(PROGRAMS) == READY | set(PENDING), "a program is neither READY nor PENDING (or an entry is stale)"
    assert not READY & set(PENDING)
    assert len(PROGRAMS) >= 12
    for name, reason in PENDING.items():
        assert reason and "torch" not in reason.lower(), name


@contextlib.contextmanager
def float64_default(lib):
    previous = lib.get_default_dtype()
    lib.set_default_dtype(lib.float64)
    try:
        yield
    finally:
        lib.set_default_dtype(previous)


def as_numpy(t):
    return t.detach().numpy().copy()


def load_program(name, backend):
    return import_program(COMPAT / f"{name}.py", backend)


def initial_state(name):
    """The program's model built by PyTorch (seeded), as {key: ndarray}: the start of both runs."""
    torch = torch_or_skip()
    program = load_program(name, "torch")
    torch.manual_seed(0)
    with float64_default(torch):
        model = program.make_model()
    return {key: as_numpy(value) for key, value in model.state_dict().items()}


def make_data(program):
    return program.make_data(np.random.default_rng(2024))


def model_with_state(program, lib, state):
    """``program.make_model()`` under ``lib`` in float64, then the shared ``state`` loaded into it."""
    with float64_default(lib):
        model = program.make_model()
    model.load_state_dict({key: lib.tensor(value) for key, value in state.items()})
    return model


def library(backend):
    return torch_or_skip() if backend == "torch" else minigrad


def skip_if_pending(name, backend):
    if backend == "minigrad" and name in PENDING:
        pytest.skip(f"pending, minigrad lacks: {PENDING[name]}")


def run(name, backend, state, steps=None):
    """Train from ``state``: (losses, gradients after the first backward, state_dict after the steps)."""
    lib = library(backend)
    program = load_program(name, backend)
    model = model_with_state(program, lib, state)
    first_grads = {}

    def after_backward(step):
        if step == 0:
            first_grads.update({n: None if p.grad is None else as_numpy(p.grad) for n, p in model.named_parameters()})

    with float64_default(lib):
        losses = program.train(model, make_data(program), program.STEPS if steps is None else steps, after_backward)
    final = {key: as_numpy(value) for key, value in model.state_dict().items()}
    return losses, first_grads, final


def assert_same_run(expected, actual, final_atol=ATOL, rtol=RTOL):
    (losses_e, grads_e, final_e), (losses_a, grads_a, final_a) = expected, actual
    assert len(losses_a) == len(losses_e)
    assert all(isinstance(loss, float) for loss in losses_a), [type(loss) for loss in losses_a]
    np.testing.assert_allclose(losses_a, losses_e, rtol=rtol, atol=ATOL, err_msg="losses")
    assert grads_a.keys() == grads_e.keys(), "named_parameters() differ"
    for key, grad in grads_e.items():
        assert (grads_a[key] is None) == (grad is None), f"{key}: gradient presence differs"
        if grad is not None:
            np.testing.assert_allclose(grads_a[key], grad, rtol=rtol, atol=ATOL, err_msg=f"gradient of {key}")
    assert list(final_a) == list(final_e), "state_dict keys differ"
    for key, value in final_e.items():
        assert final_a[key].shape == value.shape and final_a[key].dtype == value.dtype, key
        np.testing.assert_allclose(final_a[key], value, rtol=rtol, atol=final_atol, err_msg=f"{key} after the steps")


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_is_valid_pytorch(name):
    """With real PyTorch the program trains (finite, changing losses) and repeats itself exactly."""
    state = initial_state(name)
    first = run(name, "torch", state)
    losses, grads, final = first
    assert len(losses) >= 2 and np.all(np.isfinite(losses))
    assert any(g is not None and np.any(g != 0) for g in grads.values())
    assert any(not np.array_equal(final[k], state[k]) for k in state), "the steps changed nothing"
    assert_same_run(first, run(name, "torch", state))


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_matches_pytorch_under_minigrad(name):
    skip_if_pending(name, "minigrad")
    state = initial_state(name)
    program = load_program(name, "torch")     # a program may say why it needs more tolerance (FINAL_ATOL, RTOL)
    assert_same_run(run(name, "torch", state), run(name, "minigrad", state), getattr(program, "FINAL_ATOL", ATOL),
                    getattr(program, "RTOL", RTOL))


def assert_same_state(actual, expected):
    assert list(actual) == list(expected)
    for key in expected:
        np.testing.assert_allclose(as_numpy(actual[key]), as_numpy(expected[key]), rtol=RTOL, atol=ATOL, err_msg=key)


@pytest.mark.parametrize("backend", ["torch", "minigrad"])
def test_checkpoint_restart_continues_as_an_uninterrupted_run(backend, tmp_path):
    """torch.save of model, optimizer and scheduler state after epoch 0, torch.load into new objects, go on."""
    name = "dataloader_checkpoint"
    skip_if_pending(name, backend)
    state, lib = initial_state(name), library(backend)
    program = load_program(name, backend)
    data = make_data(program)
    with float64_default(lib):
        straight = model_with_state(program, lib, state)
        losses = program.train(straight, data, program.STEPS)
        restarted = model_with_state(program, lib, state)
        losses_restarted = program.train(restarted, data, program.STEPS, checkpoint_dir=str(tmp_path),
                                         restart_after_epoch=0)
    assert (tmp_path / "checkpoint.pt").is_file()
    assert program.train.final_model is not restarted, "the program did not build a new model"
    np.testing.assert_allclose(losses_restarted, losses, rtol=RTOL, atol=ATOL)
    assert_same_state(program.train.final_model.state_dict(), straight.state_dict())


@pytest.mark.parametrize("backend", ["torch", "minigrad"])
def test_init_through_data_and_nn_init_has_the_intended_statistics(backend):
    """The program's own init (its randomness differs between libraries): exact constants, std and bounds."""
    name = "init_weights"
    skip_if_pending(name, backend)
    lib = library(backend)
    program = load_program(name, backend)
    lib.manual_seed(0)
    with float64_default(lib):
        model = program.make_model()
    params = {key: as_numpy(p) for key, p in model.named_parameters()}
    for key, value in params.items():
        if key.endswith("ln.weight"):
            np.testing.assert_array_equal(value, 1.0)
        elif key == "head.bias":
            np.testing.assert_array_equal(value, 0.1)
        elif key.endswith("bias"):
            np.testing.assert_array_equal(value, 0.0)
    bound = np.sqrt(6.0 / (program.n_embd + program.vocab))  # xavier_uniform_ of head.weight
    assert np.abs(params["head.weight"]).max() <= bound
    expected_std = {"embed.weight": 0.02, "layers.0.fc.weight": 0.02, "layers.1.fc.weight": 0.02,
                    "layers.0.proj.weight": 0.02 / np.sqrt(2 * program.n_layer),
                    "layers.1.proj.weight": 0.02 / np.sqrt(2 * program.n_layer), "head.weight": bound / np.sqrt(3)}
    for key, std in expected_std.items():
        n = params[key].size  # 3200 to 8192 draws: the sample std is within 3 % of std with overwhelming odds
        np.testing.assert_allclose(params[key].std(), std, rtol=0.06, err_msg=key)
        assert abs(params[key].mean()) < 6 * std / np.sqrt(n), key


def trained_generator(backend, state):
    lib = library(backend)
    program = load_program("generate_topk", backend)
    model = model_with_state(program, lib, state)
    with float64_default(lib):
        program.train(model, make_data(program), program.STEPS)
    return lib, program, model


def test_generation_keeps_to_the_top_k_and_greedy_decoding_agrees():
    """Random streams differ: sampled tokens must lie in PyTorch's top-k; top_k=1 must decode identically."""
    name = "generate_topk"
    skip_if_pending(name, "minigrad")
    state = initial_state(name)
    torch, th_program, th_model = trained_generator("torch", state)
    mg, mg_program, mg_model = trained_generator("minigrad", state)
    prompt = make_data(th_program)["prompt"]
    k, new = 3, 5

    for t in range(1, 4):
        th_values, th_indices = th_program.last_logits_topk(th_model, torch.tensor(prompt[:, :t]), k)
        mg_values, mg_indices = mg_program.last_logits_topk(mg_model, mg.tensor(prompt[:, :t]), k)
        np.testing.assert_allclose(as_numpy(mg_values), as_numpy(th_values), rtol=RTOL, atol=ATOL)
        np.testing.assert_array_equal(as_numpy(mg_indices), as_numpy(th_indices))

    mg.manual_seed(0)
    with float64_default(mg):
        sampled = as_numpy(mg_program.generate(mg_model, mg.tensor(prompt), new, temperature=0.8, top_k=k))
    assert sampled.shape == (2, 2 + new) and sampled.dtype == np.int64
    np.testing.assert_array_equal(sampled[:, :2], prompt)
    for t in range(2, 2 + new):
        _, allowed = th_program.last_logits_topk(th_model, torch.tensor(sampled[:, :t]), k)
        for row in range(2):
            assert sampled[row, t] in as_numpy(allowed[row]), (row, t)

    greedy = [as_numpy(program.generate(model, lib.tensor(prompt), new, top_k=1))
              for lib, program, model in [(torch, th_program, th_model), (mg, mg_program, mg_model)]]
    np.testing.assert_array_equal(greedy[1], greedy[0])


def test_the_shim_resolves_torch_to_minigrad_and_restores_pytorch(tmp_path):
    torch = torch_or_skip()
    program = tmp_path / "uses_torch.py"
    program.write_text("import torch\nimport torch.nn as nn\nfrom torch.nn import functional as F\n"
                       "import torch.optim.lr_scheduler as sched\n")
    module = import_program(program, "minigrad")
    assert module.torch is minigrad and module.nn is minigrad.nn and module.F is minigrad.nn.functional
    assert module.sched is minigrad.optim.lr_scheduler
    assert sys.modules["torch"] is torch and sys.modules["torch.nn"] is torch.nn
    assert import_program(program, "torch").torch is torch
    missing = tmp_path / "uses_missing.py"
    missing.write_text("import torch.no_such_module\n")
    with pytest.raises(ModuleNotFoundError, match="torch.no_such_module"):
        import_program(missing, "minigrad")
    assert sys.modules["torch"] is torch


def test_the_comparison_catches_a_different_start():
    """A run from a state that differs in one entry by 1e-6 fails the comparison (the harness can fail)."""
    name = "char_mlp"
    state = initial_state(name)
    nudged = dict(state)
    nudged["hidden.bias"] = state["hidden.bias"] + 1e-6
    with pytest.raises(AssertionError):
        assert_same_run(run(name, "torch", state), run(name, "minigrad", nudged))
