"""DLPack exchange (minigrad.utils.dlpack, Tensor.__dlpack__, minigrad.from_dlpack): memory shared, not copied, with
NumPy and with PyTorch in both directions; dtypes, strides; PyTorch's refusals (a tensor that requires grad, a capsule
used twice)."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.utils.dlpack import DLDeviceType, from_dlpack, to_dlpack

from .mirror import torch_or_skip


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int8, np.uint8, np.bool_, np.complex128])
def test_numpy_arrays_are_shared_both_ways(dtype):
    array = (np.arange(12) % 3).astype(dtype).reshape(3, 4)
    t = mg.from_dlpack(array)
    assert t.dtype == array.dtype and tuple(t.shape) == (3, 4)
    np.testing.assert_array_equal(t.numpy(), array)
    back = np.from_dlpack(t)                              # through Tensor.__dlpack__
    assert np.shares_memory(back, array)


def test_writes_show_on_both_sides():
    array = np.zeros((2, 3))
    t = from_dlpack(array)
    t[0, 1] = 5.0
    assert array[0, 1] == 5.0
    array[1, 2] = -1.0
    assert t[1, 2].item() == -1.0


def test_copy_true_copies():
    array = np.zeros(3)
    t = from_dlpack(array, copy=True)
    t[0] = 1.0
    assert array[0] == 0.0


def test_pytorch_reads_minigrad_and_minigrad_reads_pytorch():
    torch = torch_or_skip()
    ours = mg.arange(12.0).reshape(3, 4)[:, 1:]           # a strided view
    theirs = torch.from_dlpack(ours)
    assert theirs.stride() == (4, 1) and tuple(theirs.shape) == (3, 3)
    np.testing.assert_array_equal(theirs.numpy(), ours.numpy())
    theirs[0, 0] = 42.0
    assert ours[0, 0].item() == 42.0
    t = torch.arange(6, dtype=torch.int32).reshape(2, 3).t()
    mine = mg.from_dlpack(t)
    assert mine.dtype == np.int32 and mine.stride() == (1, 3)
    np.testing.assert_array_equal(mine.numpy(), t.numpy())
    mine[1, 1] = 7
    assert t[1, 1].item() == 7


def test_legacy_capsules_are_read_once_as_pytorch_reads_them():
    torch = torch_or_skip()
    for lib, make, read in ((mg, to_dlpack, from_dlpack),
                            (torch, torch.utils.dlpack.to_dlpack, torch.utils.dlpack.from_dlpack)):
        capsule = make(lib.tensor([1.0, 2.0]))
        np.testing.assert_array_equal(read(capsule).numpy(), [1.0, 2.0])
        with pytest.raises(RuntimeError, match="DLTensor capsules can be consumed only once"):
            read(capsule)
    np.testing.assert_array_equal(torch.from_dlpack(to_dlpack(mg.tensor([True, False]))).numpy(), [True, False])


def test_a_tensor_that_requires_grad_is_not_exported():
    torch = torch_or_skip()
    for lib in (mg, torch):
        with pytest.raises(BufferError, match="Can't export tensors that require gradient, use tensor.detach()"):
            lib.ones(2, requires_grad=True).__dlpack__()
    np.testing.assert_array_equal(np.from_dlpack(mg.ones(2, requires_grad=True).detach()), [1.0, 1.0])


def test_device_and_bad_input():
    assert mg.ones(1).__dlpack_device__() == (DLDeviceType.kDLCPU, 0)
    with pytest.raises(TypeError, match="expected an object with __dlpack__"):
        from_dlpack([1, 2])
    with pytest.raises(RuntimeError, match="CPU only"):
        from_dlpack(np.ones(2), device="cuda")
    with pytest.raises(TypeError, match="expected a Tensor"):
        to_dlpack(np.ones(2))
