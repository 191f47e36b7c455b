"""What every sparse tensor shares (COO: ``coo.py``; CSR, CSC, BSR, BSC: ``compressed.py``): a size of its own, its
values in a dense Tensor ``_vals`` (dtype, autograd version and casts come from them), and no dense array (``_data``
raises the subclass's ``_NO_DENSE`` message: an op without a sparse kernel)."""
from .. import dtypes
from ..autograd.function import type_name
from ..tensor import Tensor


class SparseBase(Tensor):
    """The part of a sparse tensor's interface that does not depend on how its indices are stored."""

    __slots__ = ("_vals", "_size")
    _NO_DENSE = "this operation has no kernel for sparse tensors in minigrad"

    @property
    def _data(self):
        raise NotImplementedError(self._NO_DENSE)

    @property
    def shape(self):
        return self._size

    @property
    def dtype(self):
        return self._vals.dtype

    def size(self, dim=None):
        return self._size if dim is None else self._size[dim]

    def __len__(self):
        return self._size[0]

    def is_floating_point(self):
        return self._vals.is_floating_point()

    def is_complex(self):
        return self._vals.is_complex()

    @property
    def _version(self):
        return self._vals._version

    def detach(self):
        return self._like(self._vals.detach())

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            return "minigrad.sparse." + type_name(self.dtype).rpartition(".")[2]
        return self.to(dtype)

    def cpu(self, memory_format=None):
        return self

    @property
    def T(self):
        return self.t()

    def _repr_extras(self, pad):
        """The end of the repr: size, nnz, a dtype other than the default, the layout, then grad_fn (on a new line
        indented by ``pad``) or requires_grad, as PyTorch prints them."""
        extras = f"size={self._size}, nnz={self._nnz()}"
        if self.dtype != dtypes.get_default_dtype():
            extras += f", dtype=minigrad.{self.dtype}"
        extras += f", layout={self.layout!r}"
        if self.grad_fn is not None:
            extras += f",\n{pad}grad_fn={self.grad_fn!r}"
        elif self.requires_grad:
            extras += ", requires_grad=True"
        return extras
