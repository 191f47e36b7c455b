"""``minigrad.strided``, ``minigrad.sparse_coo``, ...: the memory layouts PyTorch names (``Tensor.layout``).

A dense tensor is ``strided``; a sparse COO tensor (``minigrad.sparse``) is ``sparse_coo``. The other
layouts exist as names only, so that code comparing against them runs; no tensor has them.
"""


class layout:  # noqa: N801 - PyTorch's name
    """One memory layout; compared by identity, printed as ``minigrad.<name>``."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"minigrad.{self.name}"

    def __reduce__(self):   # pickles as the module-level singleton
        return self.name


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
jagged = layout("jagged")
_mkldnn = layout("_mkldnn")
