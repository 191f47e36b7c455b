"""Threads: grad mode, inference mode and anomaly detection belong to the thread that sets them (as in PyTorch), and
threads training their own models get exactly what each would get alone."""
import threading

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn


def _in_thread(fn):
    """Run ``fn`` in a new thread; return what it returned (or raise what it raised)."""
    result = {}

    def target():
        try:
            result["value"] = fn()
        except BaseException as error:   # re-raised in the caller
            result["error"] = error
    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result["value"]


def test_a_new_thread_records_even_while_the_caller_is_inside_no_grad():
    x = mg.ones(3, requires_grad=True)
    with mg.no_grad():
        assert not (x * 2).requires_grad
        assert _in_thread(lambda: ((x * 2).requires_grad, mg.is_grad_enabled())) == (True, True)
        assert not mg.is_grad_enabled()
    assert mg.is_grad_enabled()


def test_no_grad_in_one_thread_does_not_reach_another():
    """Thread A sits inside no_grad while thread B computes: B's result requires grad."""
    x = mg.ones(3, requires_grad=True)
    inside, done = threading.Event(), threading.Event()
    seen = {}

    def a():
        with mg.no_grad():
            inside.set()
            done.wait(5)
            seen["a"] = (x * 2).requires_grad

    def b():
        inside.wait(5)
        seen["b"] = (x * 2).requires_grad
        done.set()
    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"a": False, "b": True}


def test_interleaved_enter_and_exit_restore_each_thread():
    """A enters no_grad, B enters, A exits, B exits: every thread, and the process, ends with grad mode on."""
    steps = [threading.Event() for _ in range(4)]
    seen = {}

    def a():
        with mg.no_grad():
            steps[0].set()
            steps[1].wait(5)
        seen["a"] = mg.is_grad_enabled()
        steps[2].set()

    def b():
        steps[0].wait(5)
        with mg.no_grad():
            steps[1].set()
            steps[2].wait(5)
        seen["b"] = mg.is_grad_enabled()
    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"a": True, "b": True}
    assert mg.is_grad_enabled()


def test_inference_and_anomaly_modes_are_per_thread():
    with mg.inference_mode():
        assert _in_thread(mg.is_inference_mode_enabled) is False
        assert mg.is_inference_mode_enabled()
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with mg.autograd.detect_anomaly():
            assert _in_thread(mg.autograd.is_anomaly_enabled) is False
            assert mg.autograd.is_anomaly_enabled()
    assert not mg.autograd.is_anomaly_enabled()


def test_detect_anomaly_names_the_function_that_returned_nan():
    x = mg.tensor([0.0, 1.0], dtype=mg.float64, requires_grad=True)
    y = mg.sqrt(x) * 0.0          # d sqrt(x)/dx at 0 is inf; times 0: NaN
    with pytest.warns(UserWarning):
        with mg.autograd.detect_anomaly():
            with pytest.raises(RuntimeError, match="returned nan values in its 0th output"):
                y.sum().backward()
    x.grad = None
    (mg.sqrt(x) * 0.0).sum().backward()     # outside: NaN gradients pass silently, as in PyTorch
    assert np.isnan(x.grad.numpy()[0])


def _train(seed, steps=30):
    """A small MLP trained with SGD from its own seed; returns its final parameters."""
    rng = np.random.default_rng(seed)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1)).double()
    for p in model.parameters():
        p.data.copy_(mg.tensor(rng.standard_normal(p.shape) * 0.3))
    x, target = mg.tensor(rng.standard_normal((32, 8))), mg.tensor(rng.standard_normal((32, 1)))
    opt = mg.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for step in range(steps):
        opt.zero_grad()
        loss = ((model(x) - target) ** 2).mean()
        loss.backward()
        with mg.no_grad():       # toggling grad mode in every thread while the others compute
            opt.step()
        if step % 7 == 0:
            with mg.no_grad():
                model(x)
    return [p.detach().numpy().copy() for p in model.parameters()]


def test_threads_training_their_own_models_equal_serial_training():
    """Four threads each train their own MLP (each toggles no_grad every step); each ends exactly where training
    it alone ends (the failure this guards against: 'element 0 of tensors does not require grad')."""
    serial = [_train(seed) for seed in range(4)]
    results, errors = {}, []

    def work(seed):
        try:
            results[seed] = _train(seed)
        except BaseException as error:
            errors.append(error)
    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for seed in range(4):
        for got, want in zip(results[seed], serial[seed]):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_threads_run_backward_concurrently():
    """Backward passes in several threads at once, each with its own queued callbacks."""
    def work():
        x = mg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        calls = []

        def hook(g):
            mg.autograd.engine.queue_callback(lambda: calls.append(1))
            return g
        y = (x * x).sum(1)
        y.register_hook(hook)
        y.backward(mg.tensor([1.0, 2.0], dtype=mg.float64))
        return x.grad.numpy().copy(), calls
    outs = []
    threads = [threading.Thread(target=lambda: outs.append(work())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = 2 * np.arange(6.0).reshape(2, 3) * np.array([[1.0], [2.0]])
    assert len(outs) == 4
    for grad, calls in outs:
        np.testing.assert_allclose(grad, expected)
        assert calls == [1]
