"""Tensor methods public programs call that are spelled differently elsewhere in minigrad: ``ndimension``,
``nelement``, ``adjoint``, ``swapaxes_``/``swapdims_``, ``fill_diagonal_``, and the memory stand-ins
``share_memory_`` (CPU memory: a no-op, as PyTorch's on one process) and ``pin_memory`` (PyTorch's CPU-only
build raises: pinned memory is for copies to an accelerator)."""
import numpy as np

from ._checks import takes_tensors
from .tensor import Tensor


def ndimension(self):
    """``dim()``."""
    return self.ndim


def nelement(self):
    """``numel()``."""
    return self.numel()


def adjoint(self):
    """The conjugate transpose of the last two dims (``mH``)."""
    return self.mH


def swapaxes_(self, axis0, axis1):
    """In-place ``swapaxes``: ``transpose_``."""
    return self.transpose_(axis0, axis1)


swapdims_ = swapaxes_


def fill_diagonal_(self, fill_value, wrap=False):
    """Write ``fill_value`` on the main diagonal (every dim the same length, or a 2-D tensor); ``wrap=True`` on a
    tall matrix starts the diagonal again below each square block, one row apart, as NumPy's fill_diagonal."""
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    rows = self.shape[0]
    if self.ndim > 2 and any(n != rows for n in self.shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    if self.ndim == 2:
        cols = self.shape[1]
        flat = np.arange(0, rows * cols if wrap else min(rows, cols) * cols, cols + 1)   # positions, C order
        index = np.unravel_index(flat, self.shape)
    else:
        index = (np.arange(rows),) * self.ndim
    values = Tensor(np.full(len(index[0]), fill_value, dtype=self.dtype))
    return self.index_put_(tuple(Tensor(i.astype(np.int64)) for i in index), values)


def share_memory_(self):
    """Returns ``self``: a tensor's memory is already shared by the processes that fork from this one."""
    return self


def pin_memory(self, device=None):
    """PyTorch's CPU-only build raises here; so does minigrad."""
    raise RuntimeError("Cannot access accelerator device when none is available.")


METHODS = {"ndimension": ndimension, "nelement": nelement, "adjoint": adjoint, "swapaxes_": swapaxes_,
           "swapdims_": swapdims_, "fill_diagonal_": fill_diagonal_, "share_memory_": share_memory_,
           "pin_memory": pin_memory}
for _name, _method in METHODS.items():
    setattr(Tensor, _name, _method)


# functions PyTorch also exposes at the top level for these in-place methods
@takes_tensors("input")
def zero_(input):
    """``torch.zero_``: ``input.zero_()``."""
    return input.zero_()


@takes_tensors("input", "the_template")
def resize_as_(input, the_template, *, memory_format=None):
    """``torch.resize_as_``: ``input.resize_as_(the_template)``."""
    return input.resize_as_(the_template, memory_format=memory_format)
