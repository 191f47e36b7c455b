"""DLPack, as ``torch.utils.dlpack``: tensors shared without a copy with any library that speaks the protocol
(NumPy, PyTorch, JAX, CuPy on the CPU, ...).

    t = minigrad.from_dlpack(torch_tensor)      # minigrad's view of PyTorch's memory: writes show on both sides
    u = torch.from_dlpack(minigrad_tensor)      # and back (minigrad tensors have __dlpack__)

minigrad's memory is NumPy's, so the work is NumPy's ``from_dlpack`` and ``ndarray.__dlpack__``; this module adds
PyTorch's rules on top: a tensor that requires grad is not exported (detach it first, as in PyTorch), and a legacy
capsule (``to_dlpack``'s result) is accepted once.
"""
import enum

import numpy as np

from ..tensor import Tensor

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


class DLDeviceType(enum.IntEnum):
    """DLPack's device codes (minigrad's tensors are all on ``kDLCPU``)."""
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """The DLPack capsule of this tensor's memory (``Tensor.__dlpack__``), for another library's ``from_dlpack``."""
    if self.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    return self._data.__dlpack__(stream=None, max_version=max_version, dl_device=dl_device, copy=copy)


def __dlpack_device__(self):
    """(device type, device index): the CPU, device 0."""
    return DLDeviceType.kDLCPU, 0


Tensor.__dlpack__ = __dlpack__
Tensor.__dlpack_device__ = __dlpack_device__


class _Capsule:
    """A bare DLPack capsule (the legacy exchange ``to_dlpack`` makes) dressed as a protocol object for NumPy."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return self.capsule

    def __dlpack_device__(self):
        return DLDeviceType.kDLCPU, 0


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """A tensor over the memory of ``ext_tensor`` (an object with ``__dlpack__``, or a capsule from ``to_dlpack``,
    usable once), shared unless ``copy=True``. Only CPU memory can be read."""
    if device is not None and str(device) != "cpu":
        raise RuntimeError(f"from_dlpack: minigrad tensors live on the CPU only, got device={device!r}")
    source = ext_tensor
    if type(ext_tensor).__name__ == "PyCapsule":
        source = _Capsule(ext_tensor)
    elif not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ (a tensor or array) or a DLPack capsule, "
                        f"got {type(ext_tensor).__name__}")
    if hasattr(ext_tensor, "__dlpack_device__"):
        kind, _ = ext_tensor.__dlpack_device__()
        if int(kind) not in (DLDeviceType.kDLCPU, DLDeviceType.kDLCUDAHost):
            raise RuntimeError(f"from_dlpack: the tensor is on device type {DLDeviceType(int(kind)).name}; minigrad "
                               "reads CPU memory only (move it to the CPU first)")
    try:
        array = np.from_dlpack(source, copy=copy)
    except (BufferError, ValueError) as error:
        if source is not ext_tensor:         # a capsule NumPy refused: one already consumed, most often
            raise RuntimeError("from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed "
                               "only once, so you might have already constructed a tensor from it once.") from None
        raise RuntimeError(f"from_dlpack: {error}") from None
    return Tensor(array)


def to_dlpack(tensor):
    """The legacy exchange: a DLPack capsule of ``tensor``'s memory, for one ``from_dlpack`` in any library."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack: expected a Tensor, got {type(tensor).__name__}")
    return tensor._data.__dlpack__()
