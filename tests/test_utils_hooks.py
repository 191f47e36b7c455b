"""minigrad.utils.hooks: the handle hooks return (remove, and removal at the end of a with block, for tensor and
module hooks), and PyTorch's warning for hooks that saving a tensor drops."""
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.utils.hooks import RemovableHandle, unserializable_hook, warn_if_has_hooks

from .mirror import torch_or_skip


def test_a_handle_removes_its_hook_at_the_end_of_a_with_block():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    with x.register_hook(lambda g: seen.append(g.numpy().copy())) as handle:
        assert isinstance(handle, RemovableHandle)
        (x * 3).sum().backward()
    (x * 3).sum().backward()
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], [3.0, 3.0])


def test_module_hook_handles():
    layer = mg.nn.Linear(2, 2)
    calls = []
    first = layer.register_forward_hook(lambda module, args, out: calls.append(1))
    second = layer.register_forward_pre_hook(lambda module, args: calls.append(0))
    assert isinstance(first, RemovableHandle) and first.id != second.id
    with first, second:
        layer(mg.ones(1, 2))
    layer(mg.ones(1, 2))
    assert calls == [0, 1]


def test_warn_if_has_hooks_as_pytorch():
    torch = torch_or_skip()
    for lib, warn, mark in ((mg, warn_if_has_hooks, unserializable_hook),
                            (torch, torch.utils.hooks.warn_if_has_hooks, torch.utils.hooks.unserializable_hook)):
        x = lib.ones(2, requires_grad=True)
        x.register_hook(lambda g: g)
        with pytest.warns(UserWarning, match="on tensor will not be serialized.  If this is expected, you can"):
            warn(x)
        y = lib.ones(2, requires_grad=True)
        y.register_hook(mark(lambda g: g))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            warn(y)
