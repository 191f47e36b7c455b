"""Storages (Tensor.untyped_storage, Tensor.storage, UntypedStorage): which tensors share memory (the check programs
make with data_ptr), sizes in bytes and elements, element values and writes through a storage, against PyTorch."""
import warnings

import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip


def _pairs(lib):
    """(a, b, whether they share memory) for views, copies and reshapes."""
    x = lib.arange(12.0).reshape(3, 4)
    return [(x, x[:, 1:], True), (x, x.t(), True), (x, x.reshape(12), True), (x, x[1], True),
            (x, x.clone(), False), (x, x.contiguous(), True), (x, x.t().contiguous(), False),
            (x, x.detach(), True), (x[0], x[2], True), (x, lib.arange(12.0), False)]


def test_sharing_as_pytorch_sees_it():
    torch = torch_or_skip()
    for (a, b, shared), (ta, tb, _) in zip(_pairs(mg), _pairs(torch)):
        ours = a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
        theirs = ta.untyped_storage().data_ptr() == tb.untyped_storage().data_ptr()
        assert ours == theirs == shared


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int8", "bool", "complex64"])
def test_sizes_and_values_as_pytorch(dtype):
    torch = torch_or_skip()
    values = (np.arange(10) % 3).astype(dtype)
    ours, theirs = mg.tensor(values)[2:7], torch.tensor(values)[2:7]
    assert ours.untyped_storage().nbytes() == theirs.untyped_storage().nbytes() == values.nbytes
    assert len(ours.untyped_storage()) == len(theirs.untyped_storage())
    assert ours.storage_offset() == theirs.storage_offset() == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        typed, their_typed = ours.storage(), theirs.storage()
    assert typed.size() == their_typed.size() == 10 and typed.element_size() == their_typed.element_size()
    assert typed.tolist() == their_typed.tolist()
    assert ours.untyped_storage().tolist() == theirs.untyped_storage().tolist()


def test_storage_warns_as_pytorch():
    """PyTorch's deprecation text (PyTorch itself warns once per process, so only minigrad's is caught here)."""
    with pytest.warns(UserWarning, match="TypedStorage is deprecated. It will be removed in the future and "
                                         "UntypedStorage will be the only storage class"):
        mg.ones(2).storage()


def test_writes_through_a_storage_reach_every_view_and_count_as_writes():
    x = mg.zeros(2, 3)
    view = x[:, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x.storage()[4] = 5.0
    assert view[1].item() == 5.0 and x[1, 1].item() == 5.0
    x.untyped_storage().fill_(0)
    assert x.abs().sum().item() == 0.0
    w = mg.ones(3, requires_grad=True)
    saved = w.detach()
    y = (w * saved).sum()          # mul saves `saved`
    saved.untyped_storage()[0] = 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_new_storages_and_refusals():
    s = mg.UntypedStorage(8)
    assert s.nbytes() == 8 and s.tolist() == [0] * 8 and mg.is_storage(s) and not mg.is_storage(mg.ones(1))
    with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
        mg.ones(2).untyped_storage().resize_(0)
    assert mg.ones(2).untyped_storage().resize_(8).nbytes() == 8
