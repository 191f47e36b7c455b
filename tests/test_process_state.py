"""Process-wide state PyTorch programs read and set: the default generator's state as a tensor
(get_rng_state, set_rng_state, fork_rng, seed), print options, deterministic algorithms, anomaly detection,
typename; mirrored against PyTorch where the values can be compared."""
import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip


# ----------------------------------------------------------------------------- the random stream's state
def test_rng_state_round_trip_and_fork():
    mg.manual_seed(5)
    assert mg.initial_seed() == 5
    state = mg.get_rng_state()
    assert state.dtype == mg.uint8 and state.ndim == 1
    first = mg.rand(6).numpy()
    mg.set_rng_state(state)
    np.testing.assert_array_equal(mg.rand(6).numpy(), first)          # the same draws again
    mg.random.default_generator.set_state(state)                     # a Generator takes the tensor too
    np.testing.assert_array_equal(mg.rand(6).numpy(), first)
    mg.set_rng_state(state)
    with mg.random.fork_rng():
        mg.randn(100)
    np.testing.assert_array_equal(mg.rand(6).numpy(), first)          # the block's draws are forgotten
    mg.set_rng_state(state)
    with mg.random.fork_rng(enabled=False):
        mg.randn(100)
    assert not np.array_equal(mg.rand(6).numpy(), first)
    new_seed = mg.seed()
    assert mg.initial_seed() == new_seed
    mg.manual_seed(0)


def test_set_rng_state_refuses_what_is_not_a_state_as_pytorch():
    torch = torch_or_skip()
    kept = mg.get_rng_state()
    for lib in (mg, torch):
        with pytest.raises(TypeError, match="expected a torch.ByteTensor, but got list"):
            lib.set_rng_state([1, 2])
        with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):
            lib.set_rng_state(lib.zeros(40))
        with pytest.raises(RuntimeError, match="found the input RNG state size to be 3"):
            lib.set_rng_state(lib.zeros(3, dtype=lib.uint8))
    assert mg.equal(mg.get_rng_state(), kept)                        # nothing changed


# ----------------------------------------------------------------------------- printing
@pytest.fixture
def print_options():
    torch = torch_or_skip()
    yield torch
    for lib in (mg, torch):
        lib.set_printoptions(profile="default")


@pytest.mark.parametrize("options", [{"precision": 2}, {"sci_mode": True}, {"sci_mode": False, "precision": 3},
                                     {"profile": "short"}, {"threshold": 5, "edgeitems": 2},
                                     {"precision": 6, "linewidth": 40}, {"profile": "full"}])
def test_set_printoptions_prints_as_pytorch(print_options, options):
    torch = print_options
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(7), [1e-6, 1.0, 1e9], [1.5, 2.0, -3.25], [1.0, 2.0], rng.standard_normal(20) * 50,
              [0.0, 0.0]]
    for lib in (mg, torch):
        lib.set_printoptions(**options)
    for v in values:
        ours, theirs = repr(mg.tensor(np.float32(v))), repr(torch.tensor(np.float32(v)))
        assert ours == theirs, (options, ours, theirs)
    for lib in (mg, torch):
        lib.set_printoptions()                                       # a call without sci_mode resets it
    assert repr(mg.tensor([1.5, 2.0])) == repr(torch.tensor([1.5, 2.0]))


# ----------------------------------------------------------------------------- switches
def test_deterministic_algorithms_switches_as_pytorch():
    torch = torch_or_skip()
    calls = [("use_deterministic_algorithms", (True,), {"warn_only": True}),
             ("set_deterministic_debug_mode", ("error",), {}), ("set_deterministic_debug_mode", (0,), {}),
             ("use_deterministic_algorithms", (True,), {}), ("set_deterministic_debug_mode", ("warn",), {})]
    try:
        for name, args, kwargs in calls:
            seen = []
            for lib in (mg, torch):
                getattr(lib, name)(*args, **kwargs)
                seen.append((lib.are_deterministic_algorithms_enabled(),
                             lib.is_deterministic_algorithms_warn_only_enabled(), lib.get_deterministic_debug_mode()))
            assert seen[0] == seen[1], (name, args, seen)
        for bad, error in (("bogus", RuntimeError), (5, RuntimeError), (1.5, TypeError)):
            for lib in (mg, torch):
                with pytest.raises(error, match="debug_mode"):
                    lib.set_deterministic_debug_mode(bad)
        for lib in (mg, torch):
            with pytest.raises(TypeError, match="must be bool, not str"):
                lib.use_deterministic_algorithms("yes")
    finally:
        for lib in (mg, torch):
            lib.use_deterministic_algorithms(False)


def test_anomaly_warn_always_and_thread_switches():
    torch = torch_or_skip()
    try:
        mg.set_anomaly_enabled(True, check_nan=False)
        assert mg.is_anomaly_enabled() and not mg.is_anomaly_check_nan_enabled()
        assert mg.autograd.grad_mode.is_anomaly_enabled()            # the switch detect_anomaly reads
        mg.set_anomaly_enabled(True)
        assert mg.is_anomaly_check_nan_enabled()
    finally:
        mg.set_anomaly_enabled(False)
    assert not mg.is_anomaly_enabled()
    mg.set_warn_always(True)
    assert mg.is_warn_always_enabled()
    mg.set_warn_always(False)
    assert mg.set_flush_denormal(True) is False
    for lib in (mg, torch):
        with pytest.raises(RuntimeError, match="set_num_interop_threads expects a positive integer"):
            lib.set_num_interop_threads(0)
    assert mg.get_num_interop_threads() >= 1


def test_typename_as_pytorch():
    torch = torch_or_skip()
    for dtype in ("float32", "float64", "int64", "bool", "uint8"):
        assert mg.typename(mg.zeros(2, dtype=getattr(mg, dtype))) == \
            torch.typename(torch.zeros(2, dtype=getattr(torch, dtype))).replace("torch.", "minigrad.")
    for obj in (3, "a", [1], None, np.zeros):
        assert mg.typename(obj) == torch.typename(obj)
    assert mg.typename(mg.nn.Linear) == "minigrad.nn.layers.Linear" == mg.typename(mg.nn.Linear(1, 1))
