"""Import paths public PyTorch code uses beyond the main namespaces: a custom warmup scheduler subclassing
``optim.lr_scheduler._LRScheduler`` (its learning rates against PyTorch's), the optimizers' module paths, the
``compiler`` marks and ``types`` aliases."""
import importlib

import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip


def _warmup_cosine(lib):
    """A scheduler in the style of public training scripts: linear warmup, then cosine decay."""
    class WarmupCosine(lib.optim.lr_scheduler._LRScheduler):
        def __init__(self, optimizer, warmup, total, last_epoch=-1):
            self.warmup, self.total = warmup, total
            super().__init__(optimizer, last_epoch)

        def get_lr(self):
            step = self.last_epoch
            if step < self.warmup:
                return [base * (step + 1) / self.warmup for base in self.base_lrs]
            progress = (step - self.warmup) / max(1, self.total - self.warmup)
            return [base * 0.5 * (1 + np.cos(np.pi * progress)) for base in self.base_lrs]

    weight = lib.nn.Parameter(lib.ones(2))
    optimizer = lib.optim.AdamW([weight], lr=0.1)
    scheduler = WarmupCosine(optimizer, warmup=3, total=10)
    rates = []
    for _ in range(12):
        optimizer.zero_grad()
        (weight * weight).sum().backward()
        optimizer.step()
        scheduler.step()
        rates.append(scheduler.get_last_lr()[0])
    return rates, weight.detach().numpy()


def test_a_custom_lr_scheduler_subclass_runs_as_in_pytorch():
    torch = torch_or_skip()
    (ours, w_ours), (theirs, w_theirs) = _warmup_cosine(mg), _warmup_cosine(torch)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    np.testing.assert_allclose(w_ours, w_theirs, rtol=1e-6)
    assert issubclass(mg.optim.lr_scheduler._LRScheduler, mg.optim.lr_scheduler.LRScheduler)


@pytest.mark.parametrize("module, name", [("adadelta", "Adadelta"), ("adamw", "AdamW"), ("adamax", "Adamax"),
                                          ("nadam", "NAdam"), ("radam", "RAdam"), ("adam", "Adam"), ("sgd", "SGD"),
                                          ("adagrad", "Adagrad"), ("rmsprop", "RMSprop"), ("rprop", "Rprop"),
                                          ("lbfgs", "LBFGS"), ("optimizer", "Optimizer")])
def test_optimizer_module_paths(module, name):
    imported = importlib.import_module(f"minigrad.optim.{module}")
    assert getattr(imported, name) is getattr(mg.optim, name)
    assert getattr(mg.optim, module) is imported


def test_compiler_marks_return_what_they_are_given():
    f = lambda x: x + 1     # noqa: E731
    assert mg.compiler.disable(f) is f and mg.compiler.disable(recursive=False)(f) is f
    assert mg.compiler.allow_in_graph(f) is f and mg.compiler.assume_constant_result(f) is f
    with mg.compiler.set_stance("force_eager"):
        assert f(1) == 2
    assert mg.compiler.set_stance("force_eager")(f) is f
    assert not mg.compiler.is_dynamo_compiling() and not mg.compiler.is_exporting() and mg.compiler.reset() is None


def test_types_aliases_as_pytorch_names_them():
    torch = torch_or_skip()
    for name in ("Number", "Device", "_size", "_int", "_float", "_bool", "_dtype", "_device", "_TensorOrTensors",
                 "FileLike"):
        assert hasattr(torch.types, name) and hasattr(mg.types, name), name
    assert isinstance(3, mg.types._Number) and mg.types._dtype is np.dtype
