"""Matrix products: ``matmul`` (1-D, 2-D and batched operands, broadcasting batch dimensions), ``linear``
and ``embedding``.

For out = a @ b the chain rule gives, per matrix in the batch,

    da = dout @ b^T        db = a^T @ dout        (b, a conjugated when complex: ``ops/complex.py``)

returned at the broadcast batch shape: the engine sums broadcast batch dimensions away. float16 operands
are multiplied in float32 (NumPy has no half-precision BLAS) and the result is cast back, as PyTorch's CPU
kernels accumulate half products in float.
"""
import numpy as np

from ..autograd import Function
from .elementwise import as_tensor_operand, check_broadcast, conj_if_complex
from .norm.common import compute_dtype


# --------------------------------------------------------------------------- checks
def _check_same_dtype(a, b, what="m1 and m2"):
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected {what} to have the same dtype, but got: {a.dtype} != {b.dtype}")


def _dims(shape):
    return "x".join(str(s) for s in shape)


def _check_matmul_shapes(sa, sb):
    """PyTorch's errors for operands that cannot be multiplied, naming both shapes. PyTorch folds the
    batch dimensions of an N-D ``input`` into its rows when ``other`` is 1-D or 2-D, so do the messages."""
    if not sa or not sb:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {len(sa)}D and {len(sb)}D")
    k_a, k_b = sa[-1], sb[0] if len(sb) == 1 else sb[-2]
    rows = int(np.prod(sa[:-1]))  # input's rows once its batch dims are folded in (1 for a 1-D input)
    if len(sb) > 2 or (len(sa) > 2 and len(sb) > 1):
        check_broadcast(sa[:-2], sb[:-2])
    if k_a == k_b:
        return
    if len(sa) == 1 and len(sb) == 1:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{k_a}] and src [{k_b}] to have the same "
                           f"number of elements, but got {k_a} and {k_b} elements respectively")
    if len(sb) == 1:
        raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{k_a}), vec ({k_b})")
    if len(sb) == 2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k_a} and {_dims(sb)})")
    raise RuntimeError(f"batched matmul shapes cannot be multiplied ({list(sa)} and {list(sb)}): the last "
                       f"dimension of input ({k_a}) must equal the second-to-last dimension of other ({k_b})")


# --------------------------------------------------------------------------- matmul
def _mm(x, y):
    """x @ y; a batched x times a matrix y becomes one (rows, k) @ (k, p) product (one BLAS call)."""
    if x.ndim > 2 and y.ndim == 2:
        return (x.reshape(-1, x.shape[-1]) @ y).reshape(x.shape[:-1] + (y.shape[-1],))
    return np.matmul(x, y)


def _in_compute_dtype(t):
    dtype = compute_dtype(t.dtype)
    return t._data if t.dtype == dtype else t._data.astype(dtype)


class MatMul(Function):
    """out = a @ b with NumPy's (and PyTorch's) matmul semantics.

    Backward works on the operands lifted to matrices: a 1-D ``a`` is a row (1, k), a 1-D ``b`` a column
    (k, 1), and ``dout`` gets the dimensions matmul removed back. Then da = dout @ b^T, db = a^T @ dout
    per batch matrix, and the lifted dimension is dropped again.
    """

    @staticmethod
    def forward(ctx, a, b):
        x, y = _in_compute_dtype(a), _in_compute_dtype(b)
        ctx.a_vector, ctx.b_vector, ctx.b_matrix = x.ndim == 1, y.ndim == 1, y.ndim <= 2
        ctx.save_for_backward(x if ctx.needs_input_grad[1] else None, y if ctx.needs_input_grad[0] else None)
        return _mm(x, y).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, dout):
        x, y = (None if t is None else conj_if_complex(t) for t in ctx.saved_tensors)  # complex: conj(a), conj(b)
        g = dout._data.astype(compute_dtype(dout.dtype), copy=False)
        if ctx.b_vector:
            g = g[..., None]                   # (*batch, n, 1)
        if ctx.a_vector:
            g = np.expand_dims(g, -2)          # (*batch, 1, p)
        da = db = None
        if y is not None:
            yb = y[:, None] if ctx.b_vector else y
            da = _mm(g, np.swapaxes(yb, -1, -2))    # (*batch, n, k)
            if ctx.a_vector:
                da = da[..., 0, :]
        if x is not None:
            xa = x[None, :] if ctx.a_vector else x
            if ctx.b_matrix:
                # b is one matrix shared by the whole batch: db = sum over the batch of xa^T @ dout,
                # which is a single (k, rows) @ (rows, p) product once the batch is folded into the rows
                db = xa.reshape(-1, xa.shape[-1]).T @ g.reshape(-1, g.shape[-1])  # (k, p)
            else:
                db = np.matmul(np.swapaxes(xa, -1, -2), g)                        # (*batch, k, p)
            if ctx.b_vector:
                db = db[..., 0]
        return da, db


def matmul(input, other):
    """Matrix product with PyTorch's rules: 1-D operands get a dimension prepended (input) or appended
    (other) that is removed from the result; leading (batch) dimensions broadcast."""
    a = as_tensor_operand(input)
    b = as_tensor_operand(other, a)
    _check_matmul_shapes(a.shape, b.shape)
    _check_same_dtype(a, b)
    return MatMul.apply(a, b)


# --------------------------------------------------------------------------- linear
class Linear(Function):
    """y = x W^T + b for x (*, in), W (out, in), b broadcastable to (*, out).

    With the batch folded into rows, x2 (M, in) and dout2 (M, out):
        dx = dout2 @ W        dW = dout2^T @ x2        db = dout (the engine sums it down to b's shape)
    """

    @staticmethod
    def forward(ctx, x, weight, bias):
        x2 = _in_compute_dtype(x).reshape(-1, x.shape[-1])  # (M, in)
        w = _in_compute_dtype(weight)                          # (out, in)
        ctx.x_shape = x.shape
        ctx.save_for_backward(x2 if ctx.needs_input_grad[1] else None, w if ctx.needs_input_grad[0] else None)
        out = (x2 @ w.T).reshape(x.shape[:-1] + (w.shape[0],))   # (*, out)
        if bias is not None:
            out += bias._data
        return out.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, dout):
        x2, w = (None if t is None else conj_if_complex(t) for t in ctx.saved_tensors)  # complex: conj(x), conj(W)
        g = dout._data.astype(compute_dtype(dout.dtype), copy=False)
        g2 = g.reshape(-1, g.shape[-1])                        # (M, out)
        dx = (g2 @ w).reshape(ctx.x_shape) if w is not None else None
        dw = g2.T @ x2 if x2 is not None else None             # (out, in)
        return dx, dw, (dout if ctx.needs_input_grad[2] else None)


def linear(input, weight, bias=None):
    """y = input @ weight^T + bias (PyTorch's ``F.linear``): input (*, in), weight (out, in) or (in,)."""
    if weight.ndim == 1:  # a single output feature, removed from the result as matmul does
        out = matmul(input, weight)
        return out if bias is None else out + bias
    if weight.ndim != 2 or input.ndim == 0:
        raise RuntimeError(f"linear(): expected input of at least 1 dimension and a 1-D or 2-D weight, "
                           f"got shapes {list(input.shape)} and {list(weight.shape)}")
    _check_same_dtype(input, weight, "input and weight")
    if input.shape[-1] != weight.shape[1]:
        rows = int(np.prod(input.shape[:-1]))
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} and "
                           f"{weight.shape[1]}x{weight.shape[0]})")
    if bias is not None:
        _check_same_dtype(input, bias, "input and bias")
        out_shape = input.shape[:-1] + (weight.shape[0],)
        try:
            fits = np.broadcast_shapes(bias.shape, out_shape) == out_shape
        except ValueError:
            fits = False
        if not fits:
            raise RuntimeError(f"linear(): bias of shape {list(bias.shape)} does not broadcast to the output "
                               f"shape {list(out_shape)}")
    return Linear.apply(input, weight, bias)


# --------------------------------------------------------------------------- embedding
class Embedding(Function):
    """out = weight[indices]: rows of the table, one per index, out shape indices.shape + (D,).

    Backward scatters dout back onto the rows: dweight[i] = sum of dout over the positions holding index i
    (``np.add.at`` accumulates repeated indices); the ``padding_idx`` row gets no gradient.
    """

    @staticmethod
    def forward(ctx, weight, indices, padding_idx):
        ctx.indices, ctx.padding_idx, ctx.weight_shape = indices, padding_idx, weight.shape
        return weight._data[indices]

    @staticmethod
    def backward(ctx, dout):
        dweight = np.zeros(ctx.weight_shape, dtype=dout.dtype)                     # (V, D)
        np.add.at(dweight, ctx.indices.reshape(-1), dout._data.reshape(-1, ctx.weight_shape[1]))
        if ctx.padding_idx is not None:
            dweight[ctx.padding_idx] = 0
        return dweight, None, None


def embedding(input, weight, padding_idx=None):
    """Look up rows of ``weight`` (num_embeddings, embedding_dim) for integer indices of any shape."""
    indices = as_tensor_operand(input)._data
    if indices.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {indices.dtype} instead (while checking arguments for embedding)")
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx %= num
    if indices.size and (indices.min() < 0 or indices.max() >= num):
        raise IndexError("index out of range in self")
    return Embedding.apply(weight, indices, padding_idx)
