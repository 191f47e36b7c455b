"""Matrix products: ``matmul`` (1-D, 2-D and batched operands, broadcasting batch dimensions), ``linear``
and ``embedding``.

For out = a @ b the chain rule gives, per matrix in the batch,

    da = dout @ b^T        db = a^T @ dout        (b, a conjugated when complex: ``ops/complex.py``)

returned at the broadcast batch shape: the engine sums broadcast batch dimensions away. float16 operands
are multiplied in float32 (NumPy has no half-precision BLAS) and the result is cast back, as PyTorch's CPU
kernels accumulate half products in float.
"""
import math

import numpy as np

from .. import kernels
from ..kernels.fused import add_rows_
from .._checks import takes_tensors, type_name
from ..autograd import Function
from ..dtypes import compute_dtype, kind_of, result_type, scalar_type_name
from ..tensor import Tensor
from .elementwise import as_tensor_operand, check_broadcast, conj_if_complex
from .shape import Index, IndexAdjoint
from ..autocast_ops import autocast_op


# --------------------------------------------------------------------------- checks
def _check_same_dtype(a, b, what="m1 and m2"):
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected {what} to have the same dtype, but got: {a.dtype} != {b.dtype}")


def check_same_vector_dtype(a, b, fname="dot"):
    """PyTorch's dot (and so matmul of two vectors) refuses vectors of two dtypes in its own words."""
    if a.dtype != b.dtype:
        raise RuntimeError(f"{fname} : expected both vectors to have same dtype, but found "
                           f"{scalar_type_name(a.dtype)} and {scalar_type_name(b.dtype)}")


def refuse_bool_product(t, kernel):
    """PyTorch has no bool kernel for its matrix products (``kernel``: the one it names)."""
    if t._data.dtype.kind == "b":
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _product_kernel(sa, sb):
    """The kernel PyTorch's matmul runs for operands of shapes ``sa`` and ``sb`` (as its errors name it)."""
    if len(sa) == 1 and len(sb) == 1:
        return "dot"
    if len(sa) == 2 and len(sb) == 1:
        return "addmv_impl_cpu"
    return "addmm_impl_cpu_" if len(sb) <= 2 else "bmm"


def _dims(shape):
    return "x".join(str(s) for s in shape)


def _check_matmul_shapes(sa, sb):
    """PyTorch's errors for operands that cannot be multiplied, naming both shapes. PyTorch folds the
    batch dimensions of an N-D ``input`` into its rows when ``other`` is 1-D or 2-D, so do the messages."""
    if not sa or not sb:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {len(sa)}D and {len(sb)}D")
    k_a, k_b = sa[-1], sb[0] if len(sb) == 1 else sb[-2]
    if len(sb) > 2 or (len(sa) > 2 and len(sb) > 1):
        check_broadcast(sa[:-2], sb[:-2])
    if k_a == k_b:
        return
    rows = math.prod(sa[:-1])  # input's rows once its batch dims are folded in (1 for a 1-D input): messages only
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
        return kernels.matmul(x.reshape(-1, x.shape[-1]), y).reshape(x.shape[:-1] + (y.shape[-1],))
    return kernels.matmul(x, y)


def _in_compute_dtype(t):
    dtype = compute_dtype(t.dtype)
    return t._data if t.dtype == dtype else t._data.astype(dtype)


class MatMul(Function):
    """out = a @ b with NumPy's (and PyTorch's) matmul semantics.

    Backward works on the operands lifted to matrices: a 1-D ``a`` is a row (1, k), a 1-D ``b`` a column
    (k, 1), and ``dout`` gets the dimensions matmul removed back. Then da = dout @ b^T, db = a^T @ dout
    per batch matrix, and the lifted dimension is dropped again.
    """
    saved_as = (("self", 0), ("mat2", 1))

    @staticmethod
    def forward(ctx, a, b):
        x, y = _in_compute_dtype(a), _in_compute_dtype(b)
        ctx.a_vector, ctx.b_vector, ctx.b_matrix = x.ndim == 1, y.ndim == 1, y.ndim <= 2
        ctx.shapes = (x.shape, y.shape)        # (for utils.flop_counter: the saved arrays may be freed)
        ctx.save_for_backward(x if ctx.needs_input_grad[1] else None, y if ctx.needs_input_grad[0] else None)
        return _mm(x, y).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, dout):
        x, y = (None if t is None else conj_if_complex(t) for t in ctx.saved_tensors)  # complex: conj(a), conj(b)
        x, y = (x if ctx.needs_input_grad[1] else None), (y if ctx.needs_input_grad[0] else None)  # (autograd.grad)
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
                rows = int(np.prod(g.shape[:-1], dtype=np.int64))   # not -1: a reshape of an empty array needs it
                db = kernels.matmul(xa.reshape(rows, xa.shape[-1]).T, g.reshape(rows, g.shape[-1]))  # (k, p)
            else:
                db = _mm(np.swapaxes(xa, -1, -2), g)                              # (*batch, k, p)
            if ctx.b_vector:
                db = db[..., 0]
        return da, db

    @staticmethod
    def graph_backward(ctx, dout):
        """The backward above with minigrad ops: the products are MatMuls again, so the gradients can be
        differentiated to any order. A shared ``b``'s gradient is left per batch matrix, (*batch, k, p): the
        engine sums the batch away."""
        x, y = ctx.saved_tensors
        x, y = (x if ctx.needs_input_grad[1] else None), (y if ctx.needs_input_grad[0] else None)  # (autograd.grad)
        g = dout.to(compute_dtype(dout.dtype))
        if ctx.b_vector:
            g = g.unsqueeze(-1)                # (*batch, n, 1)
        if ctx.a_vector:
            g = g.unsqueeze(-2)                # (*batch, 1, p)
        da = db = None
        if y is not None:
            yb = ctx.input_tensor(1, y).conj()
            yb = yb.unsqueeze(-1) if ctx.b_vector else yb
            da = MatMul.apply(g, yb.transpose(-1, -2))          # (*batch, n, k)
            if ctx.a_vector:
                da = da.squeeze(-2)
        if x is not None:
            xa = ctx.input_tensor(0, x).conj()
            xa = xa.unsqueeze(0) if ctx.a_vector else xa
            db = MatMul.apply(xa.transpose(-1, -2), g)          # (*batch, k, p)
            if ctx.b_vector:
                db = db.squeeze(-1)
        return da, db


@takes_tensors(numbers=("input", "other"))
@autocast_op("lower")
def matmul(input, other):
    """Matrix product with PyTorch's rules: 1-D operands get a dimension prepended (input) or appended
    (other) that is removed from the result; leading (batch) dimensions broadcast. An ndarray operand is taken as a
    tensor (as by ``+`` and ``*``); a number is PyTorch's TypeError, so ``t @ 2`` raises Python's."""
    for position, (name, value) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(value, (Tensor, np.ndarray)):
            raise TypeError(f"matmul(): argument '{name}' (position {position}) must be Tensor, not "
                            f"{type_name(value)}")
    if getattr(input, "is_sparse", False) or getattr(other, "is_sparse", False):   # a sparse COO operand
        from ..sparse.products import matmul as sparse_matmul
        return sparse_matmul(input, other)
    if getattr(input, "_compressed", False) or getattr(other, "_compressed", False):   # CSR, CSC, BSR, BSC
        from ..sparse.compressed import matmul as compressed_matmul
        return compressed_matmul(input, other)
    a = as_tensor_operand(input)
    b = as_tensor_operand(other, a)
    _check_matmul_shapes(a.shape, b.shape)
    if b.ndim > 2:                         # (batched: PyTorch looks for the kernel before comparing dtypes)
        refuse_bool_product(a, "bmm")
    if a.ndim == b.ndim == 1:
        check_same_vector_dtype(a, b)
    _check_same_dtype(a, b)
    if a._data.dtype.kind == "b":          # (both bool now)
        refuse_bool_product(a, _product_kernel(a.shape, b.shape))
    if a.shape[-1] == 0:
        return _empty_inner_product(a, b)
    return MatMul.apply(a, b)


def _empty_inner_product(a, b):
    """a @ b when the inner dimension is 0: zeros of the product's shape, built from broadcasting ops so that
    the gradients are the (empty) arrays of a's and b's shapes."""
    x = a.unsqueeze(0) if a.ndim == 1 else a             # (*batch, n, 0)
    y = b.unsqueeze(-1) if b.ndim == 1 else b            # (*batch, 0, p)
    out = (x.unsqueeze(-1) * y.unsqueeze(-3)).sum(-2)    # (*batch, n, 0, p) summed over the 0 -> (*batch, n, p)
    if out.dtype != a.dtype:                               # sum widens integers to int64; matmul keeps the dtype
        out = out.to(a.dtype)
    if a.ndim == 1:
        out = out.squeeze(-2)
    return out.squeeze(-1) if b.ndim == 1 else out


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
        out = kernels.matmul(x2, w.T).reshape(x.shape[:-1] + (w.shape[0],))   # (*, out)
        if bias is not None:
            out += bias._data
        return out.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, dout):
        x2, w = (None if t is None else conj_if_complex(t) for t in ctx.saved_tensors)  # complex: conj(x), conj(W)
        x2, w = (x2 if ctx.needs_input_grad[1] else None), (w if ctx.needs_input_grad[0] else None)  # (autograd.grad)
        g = dout._data.astype(compute_dtype(dout.dtype), copy=False)
        g2 = g.reshape(math.prod(ctx.x_shape[:-1]), g.shape[-1])   # (M, out); out may be 0
        dx = kernels.matmul(g2, w).reshape(ctx.x_shape) if w is not None else None
        dw = kernels.matmul(g2.T, x2) if x2 is not None else None  # (out, in)
        return dx, dw, (dout if ctx.needs_input_grad[2] else None)

    @staticmethod
    def graph_backward(ctx, dout):
        """The backward above with minigrad ops (MatMuls), differentiable to any order."""
        x2, w = ctx.saved_tensors
        x2, w = (x2 if ctx.needs_input_grad[1] else None), (w if ctx.needs_input_grad[0] else None)  # (autograd.grad)
        g = dout.to(compute_dtype(dout.dtype))
        g2 = g.reshape(math.prod(ctx.x_shape[:-1]), g.shape[-1])   # (M, out); out may be 0
        dx = MatMul.apply(g2, ctx.input_tensor(1, w).conj()).reshape(ctx.x_shape) if w is not None else None
        dw = None
        if x2 is not None:
            x = ctx.input_tensor(0, x2.reshape(ctx.x_shape)).conj()   # joined to the graph at x's own shape
            dw = MatMul.apply(g2.transpose(0, 1), x.reshape(x2.shape))  # (out, in)
        return dx, dw, (dout if ctx.needs_input_grad[2] else None)


@takes_tensors("input", "weight", "bias")
@autocast_op("lower")
def linear(input, weight, bias=None):
    """y = input @ weight^T + bias (PyTorch's ``F.linear``): input (*, in), weight (out, in) or (in,)."""
    if weight.ndim == 1 or (weight.ndim == 2 and weight.shape[1] == 0 and input.ndim and input.shape[-1] == 0):
        # a single output feature (removed from the result as matmul does), or no input features at all
        out = matmul(input, weight if weight.ndim == 1 else weight.t())
        return out if bias is None else out + bias
    if weight.ndim != 2 or input.ndim == 0:
        raise RuntimeError(f"linear(): expected input of at least 1 dimension and a 1-D or 2-D weight, "
                           f"got shapes {list(input.shape)} and {list(weight.shape)}")
    _check_same_dtype(input, weight, "input and weight")
    refuse_bool_product(input, "addmm_impl_cpu_")
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

    Backward scatters dout back onto the rows: dweight[i] = sum of dout over the positions holding index i, in
    their order (``kernels.fused.add_rows_``); the ``padding_idx`` row gets no gradient. With ``scale_grad_by_freq`` each
    row's gradient is divided by the number of times its index occurs in ``indices``. With ``sparse`` the
    gradient is left as the sum it is: a sparse tensor with one entry per lookup (``sparse/gradients.py``).
    """

    @staticmethod
    def forward(ctx, weight, indices, padding_idx, scale_grad_by_freq=False, sparse=False):
        ctx.indices, ctx.padding_idx, ctx.weight_shape = indices, padding_idx, weight.shape
        ctx.frequencies = _index_frequencies(indices) if scale_grad_by_freq else None
        ctx.sparse = sparse
        return weight._data[indices]

    @staticmethod
    def _sparse_gradient(ctx, dout):
        if ctx.frequencies is not None:
            raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients")
        from ..sparse.gradients import lookup_gradient
        return lookup_gradient(ctx.indices, dout, ctx.weight_shape, ctx.padding_idx), None, None, None, None

    @staticmethod
    def backward(ctx, dout):
        if ctx.sparse:
            return Embedding._sparse_gradient(ctx, dout)
        dweight = np.zeros(ctx.weight_shape, dtype=dout.dtype)                     # (V, D)
        indices = ctx.indices.reshape(-1)                                          # (N,), in range
        add_rows_(dweight, indices, dout._data.reshape(-1, ctx.weight_shape[1]))
        if ctx.frequencies is not None:                                            # occurrences of each index
            dweight /= np.maximum(np.bincount(indices, minlength=ctx.weight_shape[0]), 1)[:, None]
        if ctx.padding_idx is not None:
            dweight[ctx.padding_idx] = 0
        return dweight, None, None, None, None

    @staticmethod
    def graph_backward(ctx, dout):
        """dweight = zeros with dout's rows added at their indices (``IndexAdjoint``), the lookups of the
        padding row left out (or, ``sparse``, those rows as the values of the sparse gradient)."""
        if ctx.sparse:
            return Embedding._sparse_gradient(ctx, dout)
        indices = ctx.indices
        if ctx.frequencies is not None:                                            # dout / count of its index
            dout = dout / Tensor(ctx.frequencies.astype(dout.dtype)[..., None])
        if ctx.padding_idx is not None:
            keep = indices != ctx.padding_idx                                      # indices.shape
            dout, indices = Index.apply(dout, keep), indices[keep]                 # (N, D), (N,)
        return IndexAdjoint.apply(dout, ctx.weight_shape, indices), None, None, None, None


def _index_frequencies(indices):
    """For each position of ``indices``, how many times its index occurs in the whole array (indices.shape)."""
    _, inverse, counts = np.unique(indices.reshape(-1), return_inverse=True, return_counts=True)
    return counts[inverse].reshape(indices.shape)


def embedding_renorm_(weight, indices, max_norm, norm_type=2.0):
    """Rescale in place (no gradient recorded) the rows of ``weight`` that ``indices`` look up and whose
    ``norm_type``-norm exceeds ``max_norm``, to norm max_norm (divided by norm + 1e-7, as PyTorch)."""
    rows = np.unique(indices.reshape(-1))
    norms = np.linalg.norm(weight._data[rows].astype(np.float64), ord=norm_type, axis=1)
    over = norms > max_norm
    if np.any(over):
        from ..autograd import no_grad
        scale = (max_norm / (norms[over] + 1e-7)).astype(weight.dtype)[:, None]
        with no_grad():
            weight[Tensor(rows[over])] = Tensor(weight._data[rows[over]] * scale)
    return weight


def check_lookup(indices, num, padding_idx, padding_name):
    """``padding_idx`` in [0, num) (negative ones counted from the end), after checking it and every index
    against the table's ``num`` rows as PyTorch does."""
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise AssertionError(f"{padding_name} must be within num_embeddings")
        padding_idx %= num
    if indices.size and (indices.min() < 0 or indices.max() >= num):
        raise IndexError("index out of range in self")
    return padding_idx


@takes_tensors("input", "weight")
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Look up rows of ``weight`` (num_embeddings, embedding_dim) for integer indices of any shape. With
    ``max_norm``, the rows looked up are first renormalised in place (``embedding_renorm_``); with
    ``scale_grad_by_freq``, each row's gradient is divided by its index's count in ``input``. With ``sparse``,
    weight's gradient is a sparse COO tensor of the rows looked up (``sparse/gradients.py``)."""
    indices = as_tensor_operand(input)._data
    if indices.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {indices.dtype} instead (while checking arguments for embedding)")
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    padding_idx = check_lookup(indices, weight.shape[0], padding_idx, "Padding_idx")
    if max_norm is not None:
        embedding_renorm_(weight, indices, max_norm, norm_type)
    return Embedding.apply(weight, indices, padding_idx, bool(scale_grad_by_freq), bool(sparse))


# --------------------------------------------------------------------------- bmm, outer
@takes_tensors("input", "mat2")
@autocast_op("lower")
def bmm(input, mat2):
    """Batched matrix product of (b, n, m) and (b, m, p) tensors (no broadcasting, as in PyTorch)."""
    for name, t in (("batch1", input), ("batch2", mat2)):
        if t.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    expected = [input.shape[0], input.shape[2]]
    if list(mat2.shape[:2]) != expected:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: {expected} but got: "
                           f"{list(mat2.shape[:2])}.")
    return matmul(input, mat2)


@takes_tensors("input", "vec2")
def outer(input, vec2):
    """out[i, j] = input[i] * vec2[j] for 1-D tensors (gradients through the broadcast product)."""
    for name, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    from .shape import unsqueeze
    return unsqueeze(input, 1) * unsqueeze(vec2, 0)


ger = outer


# --------------------------------------------------------------------------- einsum
def _parse_einsum(equation, shapes):
    """(input subscripts, output subscripts) of ``equation``, the implicit output made explicit: the letters used
    once, in alphabetical order, after the ellipsis. Subscripts keep ``...`` as one character, ``.``."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation"
                           if len(inputs) < len(shapes) else
                           "einsum(): fewer operands were provided than specified in the equation")
    inputs = [s.replace("...", ".") for s in inputs]
    rhs = rhs.replace("...", ".")
    for s in inputs + [rhs]:
        bad = [c for c in s if not (c.isalpha() or c == ".")]
        if bad or s.count(".") > 1:
            raise RuntimeError(f"einsum(): invalid subscript given at index {equation.index(bad[0]) if bad else 0} "
                               f"in the equation string, subscripts must be in [a-zA-Z]")
    for s, shape in zip(inputs, shapes):
        named = len(s) - s.count(".")
        if named > len(shape) or ("." not in s and named != len(shape)):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) does not match the "
                               f"number of dimensions ({len(shape)}) for operand {inputs.index(s)}"
                               + ("" if "." in s else " and no ellipsis was given"))
    if arrow:
        output = rhs
    else:
        letters = "".join(inputs).replace(".", "")
        output = ("." if any("." in s for s in inputs) else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1))
    return inputs, output


def _einsum_dtype(inputs, output, operands):
    """The result dtype by PyTorch's rule: the operands are combined left to right; a pair sharing a subscript
    that no later operand nor the output uses is a matrix product (bmm), which needs equal dtypes; any other
    pair is an elementwise product, whose dtype is promoted (float64 x float32 -> float64). Mixed operands are
    cast to that dtype up front (PyTorch rounds a float32 partial product to float32 first)."""
    letters, dtype, ndim = set(inputs[0]), operands[0].dtype, operands[0].ndim
    for k in range(1, len(operands)):
        needed_later = set(output).union(*inputs[k + 1:])
        contracted = (letters & set(inputs[k])) - needed_later
        other = operands[k].dtype
        if contracted and kind_of(dtype) == "b":          # (PyTorch has no bool bmm)
            raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
        if contracted and other != dtype:
            raise RuntimeError(f"expected scalar type {scalar_type_name(dtype)} but found {scalar_type_name(other)}")
        dtype = result_type(np.empty((1,) * min(ndim, 1), dtype), np.empty((1,) * min(operands[k].ndim, 1), other))
        letters = (letters | set(inputs[k])) & needed_later
        ndim = len(letters)
    return dtype


def _ellipsis(subscripts):
    return subscripts.replace(".", "...")


class Einsum(Function):
    """out = np.einsum(equation, *operands). Backward for operand k with subscripts s_k:

        d operand_k = einsum(out_subs, *other subscripts -> s_k)(dout, *conj(other operands))

    For the letters of s_k that appear nowhere else the gradient is broadcast along them (they were summed
    over in operand k alone); a letter repeated in s_k (a diagonal, ``ii``) gets the gradient on that
    diagonal and 0 off it; ellipsis dims that operand k broadcast (size 1 or missing) are summed away.
    """

    @staticmethod
    def forward(ctx, *operands, inputs, output):
        ctx.inputs, ctx.output = inputs, output
        ctx.save_for_backward(*(t if any(ctx.needs_input_grad[:i] + ctx.needs_input_grad[i + 1:]) else None
                                for i, t in enumerate(operands)))
        ctx.shapes = [t.shape for t in operands]
        return _contract(inputs, output, [t._data for t in operands])

    @staticmethod
    def backward(ctx, dout):
        operands = [None if t is None else conj_if_complex(t._data) for t in ctx.saved_tensors]
        return tuple(_einsum_operand_grad(ctx, k, dout._data, operands, _contract, np.broadcast_to, _place_diagonal)
                     if need else None for k, need in enumerate(ctx.needs_input_grad))

    @staticmethod
    def graph_backward(ctx, dout):
        """The backward above with minigrad ops: the contraction is an Einsum again, the broadcast an expand and
        the diagonal placement an ``IndexAdjoint``."""
        operands = [None if t is None else ctx.input_tensor(i, t._data).conj() for i, t in enumerate(ctx.saved_tensors)]
        return tuple(_einsum_operand_grad(ctx, k, dout, operands, _contract_graph, _expand, IndexAdjoint.apply)
                     if need else None for k, need in enumerate(ctx.needs_input_grad))


def _contract(inputs, output, arrays):
    """np.einsum of ``arrays`` with these subscripts. NumPy refuses an output that drops the inputs' ellipsis;
    PyTorch sums over its dims: computed here as the output ``...<output>``, then summed."""
    summed = "." not in output and any("." in s for s in inputs)
    equation = ",".join(map(_ellipsis, inputs)) + "->" + _ellipsis("." + output if summed else output)
    out = np.asarray(np.einsum(equation, *arrays, optimize=len(arrays) > 2))
    return out.sum(axis=tuple(range(out.ndim - len(output)))) if summed else out


def _contract_graph(inputs, output, tensors):
    """``_contract`` of Tensors, recorded (an Einsum)."""
    return Einsum.apply(*tensors, inputs=inputs, output=output)


def _expand(tensor, shape):
    return tensor.expand(shape)


def _place_diagonal(full, shape, positions):
    """zeros(shape) with ``full`` written at ``positions`` (which never repeat)."""
    grad = np.zeros(shape, full.dtype)
    grad[positions] = full
    return grad


def _einsum_operand_grad(ctx, k, g, operands, contract, broadcast, place):
    """d operand_k (see ``Einsum``) from dout ``g`` and the other ``operands``: ndarrays, or Tensors under
    create_graph. ``contract``, ``broadcast`` and ``place`` are the matching forms of ``_contract``,
    ``np.broadcast_to`` and ``_place_diagonal``."""
    subs, shape = ctx.inputs[k], ctx.shapes[k]
    others = [(s, t) for i, (s, t) in enumerate(zip(ctx.inputs, operands)) if i != k]
    available = set(ctx.output).union(*(set(s) for s, _ in others))
    unique = "".join(dict.fromkeys(subs))                                  # s_k without repeats, in order
    target = "".join(c for c in unique if c in available)                  # what the other factors determine
    partial = contract([ctx.output] + [s for s, _ in others], target, [g] + [a for _, a in others])
    sizes = _letter_sizes(subs, shape)
    full = _broadcast_letters(partial, target, unique, sizes, broadcast)   # shape of ``unique``
    if len(unique) == len(subs):
        return full
    return place(full, shape, _diagonal_positions(subs, unique, sizes))    # repeated letters: the diagonal


def _letter_sizes(subs, shape):
    """Size of each letter of operand k; under ``'.'`` the shape of its ellipsis dims."""
    named = len(subs) - subs.count(".")
    ellipsis_rank = len(shape) - named
    sizes, dim = {}, 0
    for c in subs:
        if c == ".":
            sizes["."] = shape[dim:dim + ellipsis_rank]
            dim += ellipsis_rank
        else:
            sizes[c] = shape[dim]
            dim += 1
    return sizes


def _letter_dims(c, sizes):
    """The sizes of the dims subscript ``c`` stands for: one letter one dim, the ellipsis ``.`` several."""
    return sizes["."] if c == "." else (sizes[c],)


def _broadcast_letters(partial, target, unique, sizes, broadcast):
    """``partial`` (subscripts ``target``; an ndarray or a Tensor) brought to subscripts ``unique``: its
    ellipsis dims summed down to operand k's (extra leading dims, and dims where operand k has size 1),
    then reshaped with 1s for the missing letters and ``broadcast`` to their sizes."""
    kept = {c: _letter_dims(c, sizes) for c in target if c != "."}        # partial's dims per letter
    if "." in target:
        at = target.index(".")
        width = partial.ndim - (len(target) - 1)                           # partial's ellipsis dims
        have, want = tuple(partial.shape[at:at + width]), sizes["."]
        lead = max(width - len(want), 0)
        shared = width - lead                                              # dims lined up on the right
        axes = tuple(range(at, at + lead)) + tuple(
            at + lead + i for i, (h, w) in enumerate(zip(have[lead:], want[len(want) - shared:])) if w == 1 and h != 1)
        if axes:
            partial = partial.sum(axes)
        aligned = (1,) * (len(want) - shared) + have[lead:]
        kept["."] = tuple(h if h == w else 1 for h, w in zip(aligned, want))
    shape = [n for c in unique for n in kept.get(c, (1,) * len(_letter_dims(c, sizes)))]
    full_shape = [n for c in unique for n in _letter_dims(c, sizes)]
    return broadcast(partial.reshape(shape), full_shape)


def _diagonal_positions(subs, unique, sizes):
    """Index arrays that place a tensor with subscripts ``unique`` onto the diagonal ``subs`` (letters repeated)."""
    grids = {}
    mesh = np.indices([n for c in unique for n in _letter_dims(c, sizes)], sparse=True)
    at = 0
    for c in unique:
        width = len(_letter_dims(c, sizes))
        grids[c] = mesh[at:at + width]
        at += width
    return tuple(g for c in subs for g in grids[c])


def _sublist_equation(*args):
    """The sublist form ``(op1, sublist1, op2, sublist2, ..., [output sublist])`` as (equation, operands): each
    sublist holds integers 0-51 (letters a-z, A-Z) or ``Ellipsis``."""
    def letters(sublist, what):
        if not isinstance(sublist, (list, tuple)):
            raise TypeError(f"einsum(): {what} must be a list of integers, not {type(sublist).__name__}")
        out = []
        for s in sublist:
            if s is Ellipsis:
                out.append("...")
            elif isinstance(s, (int, np.integer)) and not isinstance(s, bool) and 0 <= s < 52:
                out.append("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[s])
            else:
                raise ValueError(f"einsum(): subscript in subscript list is not within the valid range [0, 52), "
                                 f"got {s!r}")
        return "".join(out)
    pairs, output = args[:len(args) - len(args) % 2], args[len(args) - len(args) % 2:]
    operands = list(pairs[0::2])
    inputs = [letters(sub, f"the subscripts of operand {i}") for i, sub in enumerate(pairs[1::2])]
    equation = ",".join(inputs) + ("->" + letters(output[0], "the output subscripts") if output else "")
    return equation, operands


@autocast_op("lower")
def einsum(equation, *operands):
    """Einstein summation over ``operands`` (a list or separate tensors) as NumPy's einsum computes it,
    differentiable in every operand. Also PyTorch's sublist form, ``einsum(a, [0, 1], b, [1, 2], [0, 2])``."""
    if not isinstance(equation, str):
        equation, operands = _sublist_equation(equation, *operands)
    if len(operands) == 1 and isinstance(operands[0], (tuple, list)):
        operands = tuple(operands[0])
    operands = [as_tensor_operand(t) for t in operands]
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    inputs, output = _parse_einsum(equation, [t.shape for t in operands])
    dtype = _einsum_dtype(inputs, output, operands)
    operands = [t if t.dtype == dtype else t.to(dtype) for t in operands]
    try:
        out = Einsum.apply(*operands, inputs=inputs, output=output)
        if len(operands) == 1 and out.dtype.kind in "biu" and set(inputs[0]) - set(output):
            out = out.to(np.int64)     # PyTorch sums a lone operand's integers (``'ij->j'``) as int64, as sum does
        return out
    except ValueError as e:
        raise RuntimeError(f"einsum(): operands do not match the equation {equation!r}: {e}") from None
