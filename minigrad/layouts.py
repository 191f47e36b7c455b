"""``minigrad.strided``, ``minigrad.sparse_coo``, ...: the memory layouts PyTorch names (``Tensor.layout``).

A dense tensor is ``strided`` (the ``layout`` class and ``strided`` live in ``ops/layout.py``, beside the
memory formats); a sparse COO tensor (``minigrad.sparse``) is ``sparse_coo``; the compressed sparse matrices
(``minigrad/sparse/compressed.py``) are ``sparse_csr``, ``sparse_csc``, ``sparse_bsr`` and ``sparse_bsc``. The
other layouts exist as names only, so that code comparing against them runs; no tensor has them.
"""
from .ops.layout import layout, strided  # noqa: F401 - re-exported with the sparse layouts below


sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
jagged = layout("jagged")
_mkldnn = layout("_mkldnn")
