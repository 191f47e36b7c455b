"""minigrad.nn.modules (PyTorch's module files: ``from torch.nn.modules.loss import _Loss``, ``from
torch.nn.modules.utils import _pair``, ...) and minigrad.nn.common_types, against torch's.

Every name of every file's ``__all__`` is the very object ``minigrad.nn`` has (or absent, as listed), the private
bases are minigrad's own and relate to the public classes as PyTorch's do (known differences listed), the
helpers of ``utils`` behave as PyTorch's, and two programs written against ``torch`` that subclass ``_Loss`` /
``_WeightedLoss`` and ``_BatchNorm`` and use ``_pair`` agree with PyTorch in float64: outputs, gradients of a
random upstream, running statistics.
"""
import collections
import contextlib
import importlib
import inspect
import pkgutil
import subprocess
import sys
import typing

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.modules as mods
from minigrad.nn import common_types
from minigrad.nn.modules import utils as mutils

from .mirror import torch_or_skip
from .torch_shim import import_program

SUBMODULES = ("activation", "adaptive", "batchnorm", "channelshuffle", "container", "conv", "distance", "dropout",
              "flatten", "fold", "instancenorm", "lazy", "linear", "linear_cross_entropy",
              "linear_cross_entropy_options", "loss", "module", "normalization", "padding", "pixelshuffle", "pooling",
              "rnn", "sparse", "transformer", "upsampling", "utils")

# Names of PyTorch's files' __all__ that minigrad does not have: absent from minigrad.nn and from the file here.
EXPECTED_ABSENT = {
    "container": {"Container"},
    "linear_cross_entropy_options": {"LinearCrossEntropyOptions"},
}
# Names of those __all__ that minigrad.nn does not export (nor does torch.nn): where minigrad has them.
ELSEWHERE = {("lazy", "LazyModuleMixin"): mg.nn.lazy.LazyModuleMixin,
             ("utils", "consume_prefix_in_state_dict_if_present"): mutils.consume_prefix_in_state_dict_if_present,
             **{("module", f"register_module_{kind}"): getattr(mg.nn.module_hooks, f"register_module_{kind}")
                for kind in ("forward_pre_hook", "forward_hook", "full_backward_pre_hook", "backward_hook",
                             "full_backward_hook", "buffer_registration_hook", "module_registration_hook",
                             "parameter_registration_hook")}}

# The private names programs import from PyTorch's files, and minigrad's objects for them.
PRIVATE = {
    ("loss", "_Loss"): mg.nn.loss._Loss,
    ("loss", "_WeightedLoss"): mg.nn.loss._WeightedLoss,
    ("batchnorm", "_NormBase"): mg.nn.channel_norms._NormBase,
    ("batchnorm", "_BatchNorm"): mg.nn.channel_norms._BatchNorm,
    ("instancenorm", "_InstanceNorm"): mg.nn.channel_norms._InstanceNorm,
    ("conv", "_ConvNd"): mg.nn.conv._ConvNd,
    ("conv", "_ConvTransposeNd"): mg.nn.conv._ConvTranspose,
    ("pooling", "_MaxPoolNd"): mg.nn.pooling._MaxPoolNd,
    ("pooling", "_AvgPoolNd"): mg.nn.pooling._AvgPoolNd,
    ("pooling", "_AdaptiveAvgPoolNd"): mg.nn.pooling._AdaptivePool,
    ("pooling", "_AdaptiveMaxPoolNd"): mg.nn.pooling._AdaptiveMaxPool,
    ("pooling", "_MaxUnpoolNd"): mg.nn.pooling._MaxUnpoolNd,
    ("pooling", "_LPPoolNd"): mg.nn.pooling_more._LPPoolNd,
    ("padding", "_ConstantPadNd"): mg.nn.pooling._ConstantPadNd,
    ("padding", "_CircularPadNd"): mg.nn.pooling._CircularPadNd,
    ("adaptive", "_ASMoutput"): mg.nn.adaptive._ASMoutput,
    ("module", "_IncompatibleKeys"): mg.nn.module._IncompatibleKeys,
    ("container", "_addindent"): mg.nn.module._indent,
    ("transformer", "_get_clones"): mg.nn.transformer._clones,
    ("transformer", "_get_activation_fn"): mg.nn.transformer._get_activation,
    ("transformer", "_generate_square_subsequent_mask"): mg.nn.transformer.generate_square_subsequent_mask,
}
# Private helpers minigrad had no equivalent of, written in the file here (checked against PyTorch's below):
# torch.nn.modules.module._addindent empties blank lines, minigrad's _indent (container's) does not.
OWN = {("module", "_addindent")}
# PyTorch's private classes minigrad has no equivalent of (absent here), and its internals nobody imports.
PRIVATE_ABSENT = {("dropout", "_DropoutNd"), ("padding", "_ReflectionPadNd"), ("padding", "_ReplicationPadNd"),
                  ("conv", "_ConvTransposeMixin"), ("conv", "_LazyConvXdMixin"), ("batchnorm", "_LazyNormBase")}
INTERNAL = {("module", "_WrappedHook"), ("lazy", "_LazyProtocol"), ("linear_cross_entropy", "_ChunkContext"),
            ("linear_cross_entropy", "_ChunkViews"), ("linear_cross_entropy_options", "_AutoDefault")}
# (class, private base) where minigrad's subclass relation differs from PyTorch's: AvgPool1d is no _AvgPoolNd,
# and the adaptive max pools derive from the adaptive average pools' base.
KNOWN_MRO_DIFFERENCES = {("AvgPool1d", "_AvgPoolNd"), ("AdaptiveMaxPool1d", "_AdaptiveAvgPoolNd"),
                         ("AdaptiveMaxPool2d", "_AdaptiveAvgPoolNd"), ("AdaptiveMaxPool3d", "_AdaptiveAvgPoolNd"),
                         ("_AdaptiveMaxPoolNd", "_AdaptiveAvgPoolNd")}


def _torch_file(name):
    return importlib.import_module(f"torch.nn.modules.{name}")


def _ours(name):
    return importlib.import_module(f"minigrad.nn.modules.{name}")


# --------------------------------------------------------------------------- the files and their names
def test_one_file_per_pytorch_submodule():
    torch = torch_or_skip()
    theirs = {info.name for info in pkgutil.iter_modules(torch.nn.modules.__path__)} - {"_functions"}
    assert set(SUBMODULES) == theirs
    for name in SUBMODULES:
        assert getattr(mods, name) is _ours(name)


@pytest.mark.parametrize("sub", SUBMODULES)
def test_every_name_of_the_file_is_minigrads_own_object(sub):
    torch_or_skip()
    ours, missing = _ours(sub), set()
    for name in _torch_file(sub).__all__:
        if (sub, name) in ELSEWHERE:
            assert getattr(ours, name) is ELSEWHERE[sub, name]
        elif hasattr(mg.nn, name):
            assert getattr(ours, name) is getattr(mg.nn, name), (sub, name)
        else:
            missing.add(name)
            assert not hasattr(ours, name), (sub, name)
    assert missing == EXPECTED_ABSENT.get(sub, set())
    assert set(ours.__all__) == set(_torch_file(sub).__all__) - missing     # star-imports find every name


def test_the_package_exports_what_torch_nn_modules_exports():
    torch = torch_or_skip()
    absent = set().union(*EXPECTED_ABSENT.values())
    assert set(mods.__all__) == set(torch.nn.modules.__all__) - absent
    for name in mods.__all__:
        assert getattr(mods, name) is getattr(mg.nn, name), name
    assert mods.Module is mg.nn.Module and mods.MultiheadAttention is mg.nn.MultiheadAttention


def test_private_names_are_minigrads_own_objects():
    torch_or_skip()
    for (sub, name), obj in PRIVATE.items():
        assert hasattr(_torch_file(sub), name), (sub, name)
        assert getattr(_ours(sub), name) is obj, (sub, name)
    for sub, name in OWN:
        assert callable(getattr(_ours(sub), name)) and hasattr(_torch_file(sub), name)
    for sub, name in PRIVATE_ABSENT:
        assert hasattr(_torch_file(sub), name) and not hasattr(_ours(sub), name), (sub, name)
    # every private class PyTorch defines in these files is accounted for
    defined = {(sub, name) for sub in SUBMODULES for name, obj in vars(_torch_file(sub)).items()
               if name.startswith("_") and not name.startswith("__") and inspect.isclass(obj)
               and obj.__module__ == f"torch.nn.modules.{sub}"}
    assert defined - set(PRIVATE) - PRIVATE_ABSENT - INTERNAL == set()


def test_the_private_bases_relate_to_the_classes_as_pytorchs_do():
    """issubclass(C, B) for every public class C and every private base B, in both libraries: equal but for
    the differences listed (a change in minigrad's classes shows here, both ways)."""
    torch = torch_or_skip()
    bases = {name: (getattr(_torch_file(sub), name), obj) for (sub, name), obj in PRIVATE.items()
             if inspect.isclass(obj) and issubclass(obj, mg.nn.Module)}
    classes = {name: (getattr(torch.nn, name), getattr(mg.nn, name)) for name in mods.__all__}
    classes.update(bases)
    differences = {(cname, bname) for cname, (tc, mc) in classes.items() for bname, (tb, mb) in bases.items()
                   if cname != bname and issubclass(tc, tb) != issubclass(mc, mb)}
    assert differences == KNOWN_MRO_DIFFERENCES
    assert issubclass(mg.nn.BatchNorm2d, mods.batchnorm._BatchNorm)
    assert issubclass(mg.nn.modules.loss.CrossEntropyLoss, mods.loss._WeightedLoss)
    assert issubclass(mg.nn.ConvTranspose2d, mods.conv._ConvTransposeNd)
    assert issubclass(mg.nn.ConvTranspose2d, mods.conv._ConvNd)


@pytest.mark.parametrize("statement", [
    "import minigrad.nn.modules.utils as m; assert m._pair(1) == (1, 1)",
    "from minigrad.nn.common_types import _size_2_t; import minigrad; assert minigrad.nn.common_types._size_2_t",
    "from minigrad.nn.modules.batchnorm import _BatchNorm; import minigrad.nn as nn; "
    "assert _BatchNorm is nn.channel_norms._BatchNorm and nn.modules.batchnorm._BatchNorm is _BatchNorm",
    "import minigrad.nn.modules.loss; import minigrad; assert minigrad.nn.modules.loss._Loss is minigrad.nn.loss._Loss",
])
def test_importing_a_file_first_works_without_torch(statement):
    """In a fresh interpreter (no import cycle whichever file comes first), and minigrad never imports torch."""
    code = statement + "; import sys; assert 'torch' not in sys.modules"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


# --------------------------------------------------------------------------- utils
NTUPLE_CASES = [3, 0, -2, 2.5, None, True, "ab", "", (1, 2), (1, 2, 3), (), [4, 5], [7], range(3), {"k": 1},
                np.int64(3), np.float64(1.5), np.array([1, 2])]


@pytest.mark.parametrize("fname", ["_single", "_pair", "_triple", "_quadruple"])
def test_ntuples_as_pytorchs(fname):
    torch = torch_or_skip()
    ours, theirs = getattr(mutils, fname), getattr(torch.nn.modules.utils, fname)
    assert ours.__name__ == theirs.__name__ == fname
    for value in NTUPLE_CASES:
        got, expected = ours(value), theirs(value)
        assert type(got) is tuple and got == expected, (fname, value)
        assert [type(x) for x in got] == [type(x) for x in expected]
    assert ours(x for x in (1, 2)) == theirs(x for x in (1, 2)) == (1, 2)     # any iterable, as it is
    t = ours(mg.tensor([3, 4]))                                             # a tensor: its 0-d elements
    assert len(t) == 2 and all(isinstance(x, mg.Tensor) and x.ndim == 0 for x in t) and [int(x) for x in t] == [3, 4]
    for lib, parse in ((mg, ours), (torch, theirs)):                       # a 0-d tensor is iterable, emptily
        with pytest.raises(TypeError):
            parse(lib.tensor(3))
    with pytest.raises(TypeError):
        theirs(np.array(3))
    with pytest.raises(TypeError):
        ours(np.array(3))


def test_ntuple_factory_as_pytorchs():
    torch = torch_or_skip()
    for n in (0, 1, 5):
        for name in (None, "_five"):
            args = (n,) if name is None else (n, name)
            ours, theirs = mutils._ntuple(*args), torch.nn.modules.utils._ntuple(*args)
            assert ours.__name__ == theirs.__name__
            for value in (7, (1, 2), [3], "xy"):
                assert ours(value) == theirs(value)
    assert mutils._ntuple(2)(5) == (5, 5) and mutils._ntuple(2)(np.int64(5)) == (5, 5)


def test_reverse_repeat_tuple_and_list_with_default_as_pytorchs():
    torch = torch_or_skip()
    tu = torch.nn.modules.utils
    for t, n in [((1, 2, 3), 2), ((1, 2), 1), ((), 3), ((4,), 0), ([5, 6], 2), ((1, 2), 3)]:
        got = mutils._reverse_repeat_tuple(t, n)
        assert type(got) is tuple and got == tu._reverse_repeat_tuple(t, n)
    for out_size, defaults in [([None, 3], [8, 5, 6]), ((None,), [4, 5]), ([2, None], (1, 2, 7, 9)), (7, [1]),
                               (True, []), ([None, None], torch.Size([2, 3, 4])), ([], [1])]:
        assert mutils._list_with_default(out_size, defaults) == tu._list_with_default(out_size, defaults)
    for out_size, defaults in [([1, 2], [3, 4]), ([None], [5]), ([1, 2, 3], []), ([None], [])]:
        with pytest.raises(ValueError) as expected:
            tu._list_with_default(out_size, defaults)
        with pytest.raises(ValueError) as got:
            mutils._list_with_default(out_size, defaults)
        assert str(got.value) == str(expected.value)
    with pytest.raises(TypeError):
        tu._list_with_default(np.int64(3), [1, 2])
    with pytest.raises(TypeError):
        mutils._list_with_default(np.int64(3), [1, 2])


def _state_with_metadata():
    state = collections.OrderedDict([("module.0.weight", 1), ("module.0.bias", 2), ("other.weight", 3),
                                     ("module.1.running_mean", 4), ("modulex", 5), ("module.", 6)])
    state._metadata = collections.OrderedDict([("", {"version": 1}), ("module", {"version": 9}),
                                               ("module.0", {"version": 2}), ("other", {"version": 3}),
                                               ("module.1", {"version": 4}), ("modulex", {"version": 5})])
    return state


def test_consume_prefix_as_pytorchs():
    torch = torch_or_skip()
    tu = torch.nn.modules.utils
    for prefix in ("module.", "module", "other.", "module.0.", "", "absent."):
        ours, theirs = _state_with_metadata(), _state_with_metadata()
        assert mutils.consume_prefix_in_state_dict_if_present(ours, prefix) is None
        tu.consume_prefix_in_state_dict_if_present(theirs, prefix)
        assert list(ours.items()) == list(theirs.items()), prefix             # the same keys in the same order
        assert list(ours._metadata.items()) == list(theirs._metadata.items()), prefix
    ours, theirs = {"module.a": 1, "b": 2}, {"module.a": 1, "b": 2}               # a plain dict: no metadata
    mutils.consume_prefix_in_state_dict_if_present(ours, "module.")
    tu.consume_prefix_in_state_dict_if_present(theirs, "module.")
    assert list(ours.items()) == list(theirs.items()) == [("b", 2), ("a", 1)]


def test_consume_prefix_on_a_wrapped_models_state_dict(rng):
    """A DataParallel checkpoint loads into the bare model after the prefix is consumed: keys and versions as
    PyTorch's, and strict loading finds every entry."""
    torch = torch_or_skip()
    states = []
    for lib, consume in ((mg, mutils.consume_prefix_in_state_dict_if_present),
                         (torch, torch.nn.modules.utils.consume_prefix_in_state_dict_if_present)):
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4)).double()
        state = lib.nn.DataParallel(model).state_dict()
        consume(state, "module.")
        bare = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4)).double()
        result = bare.load_state_dict(state)
        assert list(result.missing_keys) == [] and list(result.unexpected_keys) == []
        states.append((list(state.keys()), dict(state._metadata)))
    assert states[0] == states[1]


def test_addindent_and_transformer_helpers_as_pytorchs():
    torch = torch_or_skip()
    for text in ("one line", "a\nb\n  c", "", "x\n", "\n", "a\n \n\tb\n\n", "  lead\nz"):
        for spaces in (0, 2, 4):
            assert mods.module._addindent(text, spaces) == torch.nn.modules.module._addindent(text, spaces)
            assert mods.container._addindent(text, spaces) == torch.nn.modules.container._addindent(text, spaces)
    layer = mg.nn.Linear(2, 3)
    clones = mods.transformer._get_clones(layer, 3)
    assert type(clones) is mg.nn.ModuleList and len(clones) == 3
    assert all(c is not layer and c.weight is not layer.weight for c in clones)
    np.testing.assert_array_equal(clones[2].weight.detach().numpy(), layer.weight.detach().numpy())
    assert mods.transformer._get_activation_fn("relu") is mg.nn.functional.relu
    assert mods.transformer._get_activation_fn("gelu") is mg.nn.functional.gelu
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        mods.transformer._get_activation_fn("tanh")
    for sz in (1, 4):
        np.testing.assert_array_equal(mods.transformer._generate_square_subsequent_mask(sz).numpy(),
                                      torch.nn.modules.transformer._generate_square_subsequent_mask(sz).numpy())


# --------------------------------------------------------------------------- common_types
def _structure(alias, tensor_class):
    """An alias as nested tuples of names (Tensor for either library's tensor class)."""
    if alias is tensor_class:
        return "Tensor"
    if isinstance(alias, typing.TypeVar):
        return f"~{alias.__name__}"
    origin = typing.get_origin(alias)
    if origin is None:
        return alias if alias is Ellipsis else getattr(alias, "__name__", repr(alias))
    args = [_structure(a, tensor_class) for a in typing.get_args(alias)]
    if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
        return ("Union", frozenset(args))
    return (getattr(origin, "__name__", repr(origin)), tuple(args))


def test_common_types_as_pytorchs():
    torch = torch_or_skip()
    import torch.nn.common_types as theirs
    names = {n for n in vars(theirs) if n.startswith("_") and not n.startswith("__") and n != "_TypeAlias"}
    assert len(names) == 22 and {"_size_2_t", "_ratio_any_t", "_maybe_indices_t", "_tensor_list_t"} <= names
    for name in names:
        assert _structure(getattr(common_types, name), mg.Tensor) == _structure(getattr(theirs, name), torch.Tensor)
    assert mg.Tensor in typing.get_args(common_types._tensor_list_t)
    assert mg.nn.common_types is common_types
    assert common_types._size_2_t == typing.Union[int, tuple[int, int]]
    assert common_types._size_any_opt_t == typing.Union[int, None, tuple[typing.Optional[int], ...]]


# --------------------------------------------------------------------------- programs written against torch
LOSS_PROGRAM = '''
import torch
import torch.nn as nn
from torch.nn.modules.loss import _Loss, _WeightedLoss


class CharbonnierLoss(_Loss):
    """sqrt((x - y)^2 + eps^2), a smooth L1 used in image restoration."""

    def __init__(self, eps=1e-3, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.eps = eps

    def forward(self, input, target):
        loss = torch.sqrt((input - target) ** 2 + self.eps ** 2)
        if self.reduction == "mean":
            return loss.mean()
        if self.reduction == "sum":
            return loss.sum()
        return loss


class SoftTargetCrossEntropy(_WeightedLoss):
    """Cross entropy against soft labels (mixup), each class weighted by self.weight."""

    def forward(self, logits, soft_targets):
        per_class = -soft_targets * torch.log_softmax(logits, dim=-1)
        if self.weight is not None:
            per_class = per_class * self.weight
        loss = per_class.sum(dim=-1)
        if self.reduction == "none":
            return loss
        return loss.sum() if self.reduction == "sum" else loss.mean()


def build():
    return nn.Linear(5, 4)
'''

NORM_PROGRAM = '''
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.common_types import _size_2_t
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.utils import _pair


class Conv2dSame(nn.Conv2d):
    """TensorFlow's 'SAME' padding: the input padded (more after than before when odd) so that the output has
    ceil(size / stride) positions."""

    def __init__(self, in_channels, out_channels, kernel_size: _size_2_t, stride: _size_2_t = 1,
                 dilation: _size_2_t = 1, bias=True):
        super().__init__(in_channels, out_channels, kernel_size, stride, 0, dilation, 1, bias)
        self.k, self.s, self.d = _pair(kernel_size), _pair(stride), _pair(dilation)

    def forward(self, x):
        pads = []
        for size, k, s, d in zip(x.shape[-2:], self.k, self.s, self.d):
            total = max((math.ceil(size / s) - 1) * s + (k - 1) * d + 1 - size, 0)
            pads.append((total // 2, total - total // 2))
        x = F.pad(x, [pads[1][0], pads[1][1], pads[0][0], pads[0][1]])
        return F.conv2d(x, self.weight, self.bias, self.stride, _pair(0), self.dilation, self.groups)


class BatchNormAct2d(_BatchNorm):
    """BatchNorm over (N, C, H, W) followed by an activation, with the running statistics of _BatchNorm."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, act=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats)
        self.act = nn.SiLU() if act else nn.Identity()

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError("expected 4D input (got {}D input)".format(input.dim()))

    def forward(self, x):
        self._check_input_dim(x)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked)
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        x = F.batch_norm(x, self.running_mean if keep else None, self.running_var if keep else None,
                         self.weight, self.bias, use_batch, factor, self.eps)
        return self.act(x)


class PlainBN2d(_BatchNorm):
    """_BatchNorm's own forward; only the input check is the subclass's."""

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError("expected 4D input")


def build(momentum):
    return nn.Sequential(Conv2dSame(3, 4, 3, stride=2), BatchNormAct2d(4, momentum=momentum),
                         Conv2dSame(4, 5, (3, 2), dilation=(1, 2), bias=False), PlainBN2d(5, momentum=momentum))
'''


def _programs(tmp_path, source, name):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    return import_program(path, "minigrad"), import_program(path, "torch")


def _same_params(ours, theirs, rng):
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        value = rng.standard_normal(tuple(q.shape))
        with mg.no_grad():
            p.copy_(mg.tensor(value))
        q.data.copy_(q.new_tensor(value))


def _assert_close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction, legacy", [("mean", {}), ("sum", {}), ("none", {}),
                                               ("mean", {"size_average": False}), ("mean", {"reduce": False})])
def test_custom_losses_subclassing_loss_and_weighted_loss(tmp_path, rng, reduction, legacy):
    torch = torch_or_skip()
    ours, theirs = _programs(tmp_path, LOSS_PROGRAM, "custom_losses")
    assert ours.torch is mg and ours._Loss is mg.nn.loss._Loss and theirs.torch is torch
    x, y = rng.standard_normal((6, 5)), rng.standard_normal((6, 4))
    soft = rng.dirichlet(np.ones(4), size=6)
    weight = rng.uniform(0.5, 2.0, 4)
    models = [ours.build().double(), theirs.build().double()]
    _same_params(models[0], models[1], rng)
    outputs, upstream = [], None
    for lib, program, model in zip((mg, torch), (ours, theirs), models):
        inputs = lib.tensor(x, requires_grad=True)
        logits = model(inputs)
        with pytest.warns(UserWarning, match="size_average and reduce") if legacy else contextlib.nullcontext():
            charb = program.CharbonnierLoss(eps=1e-2, reduction=reduction, **legacy)
            soft_ce = program.SoftTargetCrossEntropy(lib.tensor(weight), reduction=reduction, **legacy)
        assert isinstance(soft_ce.weight, lib.Tensor) and "weight" in dict(soft_ce.named_buffers())
        loss_a, loss_b = charb(logits, lib.tensor(y)), soft_ce(logits, lib.tensor(soft))
        if upstream is None:
            upstream = [rng.standard_normal(tuple(loss_a.shape)), rng.standard_normal(tuple(loss_b.shape))]
        total = (loss_a * lib.tensor(upstream[0])).sum() + (loss_b * lib.tensor(upstream[1])).sum()
        total.backward()
        outputs.append([charb.reduction, soft_ce.reduction, loss_a.detach().numpy(), loss_b.detach().numpy(),
                        inputs.grad.numpy(), model.weight.grad.numpy(), model.bias.grad.numpy()])
    assert outputs[0][:2] == outputs[1][:2]
    for a, b in zip(outputs[0][2:], outputs[1][2:]):
        _assert_close(a, b)


@pytest.mark.parametrize("momentum", [0.1, None])
def test_custom_conv_and_norm_subclassing_batchnorm_with_pair(tmp_path, rng, momentum):
    torch = torch_or_skip()
    ours, theirs = _programs(tmp_path, NORM_PROGRAM, "custom_norm")
    assert ours._pair is mutils._pair and ours._BatchNorm is mg.nn.channel_norms._BatchNorm
    models = [ours.build(momentum).double(), theirs.build(momentum).double()]
    _same_params(models[0], models[1], rng)
    batches = [rng.standard_normal((2, 3, 7, 6)) for _ in range(3)]
    upstream = rng.standard_normal((2, 5, 4, 3))
    results = []
    for lib, model in zip((mg, torch), models):
        outs = []
        for i, batch in enumerate(batches):                          # training: batch statistics, buffers move
            inputs = lib.tensor(batch, requires_grad=(i == 0))
            out = model(inputs)
            if i == 0:
                (out * lib.tensor(upstream)).sum().backward()
                grads = [inputs.grad.numpy()] + [p.grad.numpy() for p in model.parameters()]
            outs.append(out.detach().numpy())
        model.eval()
        outs.append(model(lib.tensor(batches[0])).detach().numpy())   # eval: the running statistics
        buffers = [b.numpy() for b in model.buffers()]
        results.append((outs, grads, buffers))
        with pytest.raises(ValueError, match="expected 4D input"):
            model[1](lib.zeros(2, 4, 3, dtype=lib.float64))
    assert results[0][0][0].shape == (2, 5, 4, 3)
    for part in range(3):
        assert len(results[0][part]) == len(results[1][part])
        for a, b in zip(results[0][part], results[1][part]):
            _assert_close(a, b)
    assert int(models[0][1].num_batches_tracked) == 3


CONVND_PROGRAM = '''
import torch.nn.functional as F
from torch.nn.modules.conv import _ConvNd
from torch.nn.modules.utils import _pair


class MyConv2d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True):
        super().__init__(in_channels, out_channels, _pair(kernel_size), _pair(stride), _pair(padding),
                         _pair(dilation), False, _pair(0), groups, bias, "zeros")

    def forward(self, x):
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)
'''


def test_a_conv_subclassing_convnd_with_pytorchs_signature(tmp_path, rng):
    torch_or_skip()
    ours, theirs = _programs(tmp_path, CONVND_PROGRAM, "custom_convnd")
    import torch
    layers = [ours.MyConv2d(3, 4, 3, padding=1, stride=2).double(), theirs.MyConv2d(3, 4, 3, padding=1, stride=2).double()]
    assert tuple(layers[0].weight.shape) == tuple(layers[1].weight.shape) == (4, 3, 3, 3)
    assert repr(layers[0]) == repr(layers[1])
    x, upstream = rng.standard_normal((2, 3, 7, 6)), rng.standard_normal((2, 4, 4, 3))
    weight, bias = rng.standard_normal((4, 3, 3, 3)), rng.standard_normal(4)
    results = []
    for lib, layer in zip((mg, torch), layers):
        layer.weight.data, layer.bias.data = lib.tensor(weight), lib.tensor(bias)
        inp = lib.tensor(x, requires_grad=True)
        out = layer(inp)
        out.backward(lib.tensor(upstream))
        results.append([out.detach().numpy(), inp.grad.numpy(), layer.weight.grad.numpy(), layer.bias.grad.numpy()])
    for a, b in zip(*results):
        _assert_close(a, b)
    from minigrad.nn.modules.conv import _ConvNd
    from minigrad.nn.modules.utils import _single
    one_d = _ConvNd(2, 6, _single(3), _single(1), _single(0), _single(1), True, _single(0), 2, False, "zeros")
    assert tuple(one_d.weight.shape) == (2, 3, 3) and one_d.transposed and one_d.bias is None
