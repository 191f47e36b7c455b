"""Optimizers and learning-rate schedulers, with PyTorch's update rules, defaults, state keys and state_dicts.

Optimizers: ``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad``, ``Adadelta``, ``Adamax``, ``NAdam``, ``RAdam``,
``Rprop``, ``ASGD``, ``Adafactor``, ``Muon``, ``SparseAdam`` (each follows PyTorch's single-tensor path, so updates
agree with PyTorch to rounding; Muon's Newton-Schulz iteration runs in bfloat16 as PyTorch's), and ``LBFGS`` (with
or without the strong-Wolfe line search). Sparse gradients (``nn.Embedding(..., sparse=True)``) are taken by SGD,
Adagrad, SparseAdam and LBFGS, and refused by the others with PyTorch's errors. Parameters may come as
``model.named_parameters()`` (the names are kept in the state_dict), a complex parameter updates as its pairs of
reals, and ``lr`` (and Adam's betas) may be one-element Tensors, as in PyTorch. The hooks are PyTorch's:
``register_step_pre_hook``/``post_hook``, the state_dict and load_state_dict ones, and the global
``optimizer.register_optimizer_step_pre_hook``/``post_hook``. PyTorch's ``foreach``/``fused``/
``capturable``/``differentiable`` flags are taken where PyTorch takes them and act as on PyTorch's CPU: ``foreach``
and ``fused`` change nothing, ``capturable=True`` and ``differentiable=True`` (on leaves) fail at the step.

Schedulers (``minigrad.optim.lr_scheduler``): ``LambdaLR``, ``MultiplicativeLR``, ``StepLR``, ``MultiStepLR``,
``ConstantLR``, ``LinearLR``, ``ExponentialLR``, ``PolynomialLR``, ``CosineAnnealingLR``,
``CosineAnnealingWarmRestarts``, ``OneCycleLR``, ``SequentialLR``, ``ReduceLROnPlateau``, ``CyclicLR``,
``ChainedScheduler``.

Weight averaging (``minigrad.optim.swa_utils``): ``AveragedModel``, ``SWALR``, ``update_bn`` and the
``get_{ema,swa}_{multi_,}avg_fn`` averaging functions.
"""
import sys

from . import adagrad, adam, adam_variants, lr_scheduler, swa_utils
from .adafactor import Adafactor
from .adagrad import Adadelta, Adagrad
from .adam import Adam, AdamW
from .adam_variants import Adamax, NAdam, RAdam
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

# PyTorch's module paths for optimizers minigrad keeps beside their relatives (``from torch.optim.adamw import AdamW``)
for _name, _module in (("adadelta", adagrad), ("adamw", adam), ("adamax", adam_variants), ("nadam", adam_variants),
                       ("radam", adam_variants)):
    sys.modules[f"{__name__}.{_name}"] = _module
    globals()[_name] = _module
del _name, _module

__all__ = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "Rprop", "SparseAdam",
           "Optimizer", "lr_scheduler", "swa_utils", "LBFGS", "Adafactor", "Muon", "ASGD"]
