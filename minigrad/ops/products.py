"""Products built from ``matmul`` and elementwise ops: ``mm``, ``mv``, ``dot``, ``vdot``, ``inner``, the fused
``addmm``/``addmv``/``addr``/``baddbmm``/``addbmm`` (and their in-place forms), ``trace``, ``kron``,
``tensordot``, ``cross``, ``block_diag``, ``chain_matmul``/``multi_dot``, ``vecdot`` and ``vander``.

Each is a composition of differentiable minigrad ops (``MatMul``, ``mul``, ``sum``, ``roll``, ``cumprod``, ...),
so its gradient is the chain rule through those, to any order. For example, with out = beta * C + alpha * A @ B:

    dC = beta * dout        dA = alpha * dout @ B^T        dB = alpha * A^T @ dout

and for the cross product c = a x b, c_i = a_{i+1} b_{i+2} - a_{i+2} b_{i+1} (indices mod 3): dc/da is the
product with b rolled, which ``roll`` and ``mul`` give.
"""
import functools

import numpy as np

from .._checks import check_tensor, takes_tensors
from ..autograd.version import bump_tensor
from ..autograd.function import pytorch_saves
from ..dtypes import kind_of, result_type, scalar_type_name
from ..limited_dtypes import check_kernel
from ..tensor import Tensor
from . import elementwise as ew
from . import reduce as rd
from . import shape as sh
from .dims import normalize_dim
from .inplace import check_result, write
from .linalg import _check_same_dtype, bmm, check_same_vector_dtype, matmul, outer
from ..autocast_ops import autocast_op


def _promoted(tensors):
    """PyTorch's promoted dtype of several tensors."""
    return functools.reduce(lambda d, t: result_type(np.empty(0, d), t._data), tensors[1:], tensors[0].dtype)


# --------------------------------------------------------------------------- plain products
@takes_tensors("input", "mat2")
@autocast_op("lower")
def mm(input, mat2):
    """The matrix product of two 2-D tensors (no broadcasting)."""
    if input.ndim != 2:
        raise RuntimeError(f"self must be a matrix, but got a {input.ndim}-D tensor")
    if mat2.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, but got a {mat2.ndim}-D tensor")
    return matmul(input, mat2)


@takes_tensors("input", "vec")
@autocast_op("inputs")
def mv(input, vec):
    """The product of a matrix (n, m) and a vector (m,)."""
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {input.ndim}, {vec.ndim}")
    return matmul(input, vec)


def _check_vectors(input, other, fname):
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    if kind_of(input.dtype) == "b" and input.dtype == other.dtype:
        raise NotImplementedError("\"dot\" not implemented for 'Bool'")
    check_same_vector_dtype(input, other, fname)
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
                           f"[{other.shape[0]}] to have the same number of elements, but got {input.shape[0]} "
                           f"and {other.shape[0]} elements respectively")


@takes_tensors("input", "tensor")
def dot(input, tensor):
    """sum_i input_i * tensor_i of two 1-D tensors of one dtype (no conjugation)."""
    _check_vectors(input, tensor, "dot")
    check_kernel("dot", input)
    return _keep_integer_dtype(rd.sum(ew.mul(input, tensor)), input.dtype)


@takes_tensors("input", "other")
def vdot(input, other):
    """sum_i conj(input_i) * other_i of two 1-D tensors."""
    _check_vectors(input, other, "dot")
    return _keep_integer_dtype(rd.sum(ew.mul(input.conj(), other)), input.dtype)


def _keep_integer_dtype(total, dtype):
    """A product's sum in its operands' integer dtype (``sum`` widens integers to int64; PyTorch's products keep
    theirs, wrapping around on overflow)."""
    return total if dtype.kind not in "biu" or total.dtype == dtype else total.to(dtype)


@takes_tensors("input", "other")
def inner(input, other):
    """The sum over the last dims of both (a 0-d operand multiplies): out[i.., j..] = sum_k a[i.., k] b[j.., k]."""
    if input.ndim == 0 or other.ndim == 0:
        return ew.mul(input, other)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ([input.ndim - 1], [other.ndim - 1]))


@takes_tensors("x", "y")
@autocast_op("lower")
def vecdot(x, y, *, dim=-1):
    """``linalg.vecdot``: sum over ``dim`` of conj(x) * y (broadcasting the other dimensions)."""
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{x.dtype} and y of type {y.dtype} instead")
    return rd.sum(ew.mul(x.conj(), y), dim)


# --------------------------------------------------------------------------- fused products: beta * C + alpha * P
def _scaled_sum(input, product, beta, alpha):
    """beta * input + alpha * product. With beta == 0 the input's values are ignored (its NaNs and infs too) and
    its gradient is zero, as in PyTorch. For integer tensors alpha and beta are truncated to integers, and for
    bool tensors the sum is a logical or (PyTorch's integral kernels)."""
    if product.dtype.kind == "b":
        keep_input, keep_product = Tensor(np.asarray(bool(beta))), Tensor(np.asarray(bool(alpha)))
        return ew.logical_or(ew.logical_and(input, keep_input), ew.logical_and(product, keep_product))
    if product.dtype.kind in "iu":
        beta, alpha = int(beta), int(alpha)
    scaled = product if alpha == 1 else ew.mul(product, alpha)
    if beta == 0:
        return ew.add(scaled, ew.masked_fill(input, Tensor(np.ones((), bool)), 0))
    return ew.add(scaled, input if beta == 1 else ew.mul(input, beta))


def _check_fused_input(input, shape, fname):
    """``input`` must broadcast to the product's shape (PyTorch's message names both)."""
    try:
        out = np.broadcast_shapes(input.shape, shape)
    except ValueError:
        out = None
    if out != tuple(shape):
        raise RuntimeError(f"{fname}: The input tensor of shape {list(input.shape)} cannot be broadcast to the "
                           f"product's shape {list(shape)}")


def _fused(fname, input, product, beta, alpha):
    _check_fused_input(input, product.shape, fname)
    return _scaled_sum(input, product, beta, alpha)


def _check_fused_dtypes(fname, input, mat1, mat2):
    """addmm, addmv, addbmm and baddbmm take no mixed dtypes (PyTorch's errors, checked before the product's)."""
    if fname == "baddbmm" and kind_of(input.dtype) == "b":     # (its kernel is looked for first)
        raise NotImplementedError("\"baddbmm\" not implemented for 'Bool'")
    if input.dtype == mat1.dtype == mat2.dtype:
        return
    names = [scalar_type_name(t.dtype) for t in (input, mat1, mat2)]
    if fname == "addmv":
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {names[0]}, {names[1]}, and "
                           f"{names[2]}")
    if fname == "baddbmm":
        raise RuntimeError(f"Input dtypes must be the same, got: input {input.dtype}, batch1: {mat1.dtype}, batch2: "
                           f"{mat2.dtype}")
    if input.dtype != mat2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {names[0]} and {names[2]}")


@takes_tensors("input", "mat1", "mat2")
@autocast_op("lower")
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2), mat1 (n, m), mat2 (m, p), input broadcastable to (n, p)."""
    _check_fused_dtypes("addmm", input, mat1, mat2)
    return _fused("addmm", input, mm(mat1, mat2), beta, alpha)


@takes_tensors("input", "mat", "vec")
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """beta * input + alpha * (mat @ vec)."""
    _check_fused_dtypes("addmv", input, mat, vec)
    return _fused("addmv", input, mv(mat, vec), beta, alpha)


@takes_tensors("input", "vec1", "vec2")
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """beta * input + alpha * outer(vec1, vec2)."""
    if vec1.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.ndim}-D" if vec1.ndim != 1 else
                           f"addr: Expected 1-D argument vec2, but got {vec2.ndim}-D")
    return _fused("addr", input, outer(vec1, vec2), beta, alpha)


@takes_tensors("input", "batch1", "batch2")
@autocast_op("lower")
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * (batch1 @ batch2) per batch matrix."""
    _check_fused_dtypes("baddbmm", input, batch1, batch2)
    return _fused("baddbmm", input, bmm(batch1, batch2), beta, alpha)


@takes_tensors("input", "batch1", "batch2")
@autocast_op("lower")
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * sum_b batch1[b] @ batch2[b]."""
    _check_fused_dtypes("addbmm", input, batch1, batch2)
    product = bmm(batch1, batch2)
    return _fused("addbmm", input, _keep_integer_dtype(rd.sum(product, 0), product.dtype), beta, alpha)


def _resized(self, value, operands):
    """``self`` becomes ``value``, of another shape (PyTorch's ``addbmm_`` resizes a self that only broadcasts)."""
    from .inplace import _records, check_leaf
    if _records(self, operands):
        check_leaf(self)
    self._data = value._data.astype(self.dtype, copy=False)
    if value.requires_grad:
        self._grad_fn, self._requires_grad = value._grad_fn, True
    bump_tensor(self)
    return self


def _inplace_fused(outofplace, product_shape, resizes=False):
    """The in-place form of a fused product: ``product_shape(a, b)`` (from the operands' shapes, checked by the
    out-of-place op) must be ``self``'s shape after broadcasting, and its dtype one ``self`` can hold; with
    ``resizes`` (PyTorch's ``addbmm_``) a self that only broadcasts to that shape takes the result's shape."""
    def op(self, *args, beta=1, alpha=1):
        operands = _OPERANDS[outofplace.__name__]
        for i, (a, (name, _)) in enumerate(zip(args, operands)):
            check_tensor(a, outofplace.__name__ + "_", name, i + 1)
        if all(a.ndim == ndim for a, (_, ndim) in zip(args, operands)):
            shape = product_shape(*args)
            if resizes and tuple(self.shape) != tuple(shape) and self._base is None:
                return _resized(self, outofplace(self, *args, beta=beta, alpha=alpha), args)
            check_result(self, shape, _promoted([self, *args]))
        return write(self, lambda old: outofplace(old, *args, beta=beta, alpha=alpha), args)
    op.__name__ = outofplace.__name__ + "_"
    op.__doc__ = f"In-place ``{outofplace.__name__}``; returns ``self``."
    return op


_OPERANDS = {"addmm": (("mat1", 2), ("mat2", 2)), "addmv": (("mat", 2), ("vec", 1)), "addr": (("vec1", 1), ("vec2", 1)),
             "baddbmm": (("batch1", 3), ("batch2", 3)), "addbmm": (("batch1", 3), ("batch2", 3))}   # (name, ndim)
addmm_ = _inplace_fused(addmm, lambda a, b: (a.shape[0], b.shape[1]))
addmv_ = _inplace_fused(addmv, lambda a, b: (a.shape[0],))
addr_ = _inplace_fused(addr, lambda a, b: (a.shape[0], b.shape[0]))
baddbmm_ = _inplace_fused(baddbmm, lambda a, b: (a.shape[0], a.shape[1], b.shape[2]))
addbmm_ = _inplace_fused(addbmm, lambda a, b: (a.shape[1], b.shape[2]), resizes=True)


# --------------------------------------------------------------------------- trace, kron, tensordot
@takes_tensors("input")
@autocast_op("float32")
def trace(input):
    """The sum of the main diagonal of a 2-D tensor (integers sum to int64; PyTorch has no bool kernel)."""
    if kind_of(input.dtype) == "b":
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    check_kernel("trace", input)
    return rd.sum(sh.diagonal(input))


@takes_tensors("input", "other")
def kron(input, other):
    """The Kronecker product: out[i*p + k, j*q + l] = a[i, j] * b[k, l], for any number of dims (the shorter
    operand gets leading 1s). Built as one broadcast product with the dims interleaved, then reshaped."""
    nd = max(input.ndim, other.ndim)
    a = input.reshape((1,) * (nd - input.ndim) + tuple(input.shape))
    b = other.reshape((1,) * (nd - other.ndim) + tuple(other.shape))
    a_shape = [s for d in a.shape for s in (d, 1)]             # (a0, 1, a1, 1, ...)
    b_shape = [s for d in b.shape for s in (1, d)]             # (1, b0, 1, b1, ...)
    # (copies: PyTorch's product reads reshapes of its own, which no later write into input or other reaches)
    out = ew.mul(a.reshape(a_shape).clone(), b.reshape(b_shape).clone())   # (a0, b0, a1, b1, ...)
    return out.reshape(tuple(x * y for x, y in zip(a.shape, b.shape)))


@takes_tensors("a", "b")
@autocast_op("lower")
def tensordot(a, b, dims=2, out=None):
    """Contract ``dims`` of ``a`` with ``dims`` of ``b``: an int n (a's last n with b's first n) or two lists.
    The contracted dims are moved together and the product is one matrix product."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        dims_a, dims_b = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(dims_a) != len(dims_b):
        raise RuntimeError(f"both dimension lists should have same length, but got {len(dims_a)} and "
                           f"{len(dims_b)}")
    dims_a = [normalize_dim(d, a.ndim) for d in dims_a]
    dims_b = [normalize_dim(d, b.ndim) for d in dims_b]
    for da, db in zip(dims_a, dims_b):   # a contracted dim of size 1 broadcasts against the other
        if a.shape[da] == 1 and b.shape[db] != 1:
            a = sh.expand(a, tuple(b.shape[db] if d == da else s for d, s in enumerate(a.shape)))
        elif b.shape[db] == 1 and a.shape[da] != 1:
            b = sh.expand(b, tuple(a.shape[da] if d == db else s for d, s in enumerate(b.shape)))
        if a.shape[da] != b.shape[db]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[da]} in dim "
                               f"{da} and second has size {b.shape[db]} in dim {db}")
    _check_same_dtype(a, b, "both tensors")
    free_a = [d for d in range(a.ndim) if d not in dims_a]
    free_b = [d for d in range(b.ndim) if d not in dims_b]
    k = int(np.prod([a.shape[d] for d in dims_a], dtype=np.int64))
    rows = sh.permute(a, *free_a, *dims_a).reshape(-1, k)       # (free a, k)
    cols = sh.permute(b, *dims_b, *free_b).reshape(k, -1)       # (k, free b)
    return matmul(rows, cols).reshape(tuple(a.shape[d] for d in free_a) + tuple(b.shape[d] for d in free_b))


# --------------------------------------------------------------------------- cross
def _cross(a, b, dim):
    """c_i = a_{i+1} b_{i+2} - a_{i+2} b_{i+1} along ``dim`` (size 3), with the indices rolled."""
    a1, a2 = sh.roll(a, -1, dim), sh.roll(a, -2, dim)
    b1, b2 = sh.roll(b, -1, dim), sh.roll(b, -2, dim)
    return ew.sub(ew.mul(a1, b2), ew.mul(a2, b1))


@takes_tensors("input", "other")
@pytorch_saves("input", "other")
def linalg_cross(input, other, *, dim=-1):
    """``linalg.cross``: the cross product along ``dim`` (size 3); the other dims broadcast."""
    if input.ndim != other.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions, got {input.ndim} and "
                           f"{other.ndim}")
    d = normalize_dim(dim, input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} and "
                           f"{other.shape[d]}")
    if kind_of(input.dtype) == "b":
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    if input.dtype != other.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(input.dtype)} but found "
                           f"{scalar_type_name(other.dtype)}")
    shape = np.broadcast_shapes(input.shape, other.shape)
    return _cross(sh.expand(input, shape), sh.expand(other, shape), d)


@takes_tensors("input", "other")
def cross(input, other, dim=None):
    """``torch.cross``: as ``linalg.cross``, but ``dim=None`` picks the first dimension of size 3."""
    if dim is None:
        sizes = np.broadcast_shapes(input.shape, other.shape) if input.ndim == other.ndim else input.shape
        found = [i for i, s in enumerate(sizes) if s == 3]
        if not found:
            raise RuntimeError("no dimension of size 3 in input")
        dim = found[0]
    return linalg_cross(input, other, dim=dim)


# --------------------------------------------------------------------------- block_diag, chains, vander
def block_diag(*tensors):
    """The block-diagonal matrix of the tensors (0-d are 1x1, 1-D are one row), in the promoted dtype."""
    blocks = []
    for i, t in enumerate(tensors):
        check_tensor(t, "block_diag", "tensors", None)
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.ndim} dimensions")
        blocks.append(t.reshape(1, 1) if t.ndim == 0 else t.reshape(1, -1) if t.ndim == 1 else t)
    dtype = _promoted(blocks) if blocks else np.dtype(np.float32)
    blocks = [b if b.dtype == dtype else ew.cast(b, dtype) for b in blocks]
    cols = sum(b.shape[1] for b in blocks)
    rows, before = [], 0
    for b in blocks:
        r, c = b.shape
        left = Tensor(np.zeros((r, before), dtype))
        right = Tensor(np.zeros((r, cols - before - c), dtype))
        rows.append(sh.cat([left, b, right], 1))
        before += c
    if not rows:
        return Tensor(np.zeros((0, 0), dtype))
    return sh.cat(rows, 0)


def _chain_order(sizes):
    """Where to split each sub-chain i..j of matrices (sizes[i] x sizes[i + 1]) so that the products take the
    fewest multiply-adds: split[i][j] = k for (M_i..M_k)(M_k+1..M_j). PyTorch's rule: for three matrices the
    cheaper of (AB)C and A(BC), (AB)C on a tie; for more, the dynamic program over sub-chains, the first best k."""
    n = len(sizes) - 1
    split = [[i] * n for i in range(n)]          # (a pair i, i+1 splits at i)
    if n == 3:
        a, b, c, d = sizes
        split[0][2] = 0 if a * c * (b + d) > b * d * (a + c) else 1
        return split
    cost = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def _chain(mats, split, i, j):
    """The product of mats[i..j] in the order ``split`` gives."""
    if i == j:
        return mats[i]
    k = split[i][j]
    return matmul(_chain(mats, split, i, k), _chain(mats, split, k + 1, j))


def multi_dot(tensors):
    """``linalg.multi_dot``: the product of a chain of matrices, in the order that takes the fewest multiply-adds
    (``_chain_order``); the first may be 1-D (a row) and the last 1-D (a column), their dimension dropped from the
    result."""
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):
        check_tensor(t, "multi_dot", "tensors", None)
        allowed = (1, 2) if i in (0, len(tensors) - 1) else (2,)
        if t.ndim not in allowed:
            where = "first" if i == 0 else "last" if i == len(tensors) - 1 else f"{i}th"
            raise RuntimeError(f"multi_dot(): the {where} tensor must be {' or '.join(f'{a}D' for a in allowed)} "
                               f"but got {t.ndim}D")
        if t.dtype != tensors[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{tensors[0].dtype} and tensor {i} {t.dtype}")
    first_vector, last_vector = tensors[0].ndim == 1, tensors[-1].ndim == 1
    mats = list(tensors)
    if first_vector:
        mats[0] = mats[0].unsqueeze(0)
    if last_vector:
        mats[-1] = mats[-1].unsqueeze(-1)
    for i in range(len(mats) - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {list(tensors[i].shape)} and "
                               f"{list(tensors[i + 1].shape)} cannot be multiplied")
    out = _chain(mats, _chain_order([m.shape[0] for m in mats] + [mats[-1].shape[1]]), 0, len(mats) - 1)
    if first_vector:
        out = out.squeeze(0)
    if last_vector:
        out = out.squeeze(-1)
    return out


def chain_matmul(*matrices):
    """``torch.chain_matmul`` (deprecated in PyTorch for ``linalg.multi_dot``): the product of 2-D tensors."""
    if len(matrices) == 1:
        return matrices[0].clone()
    for t in matrices:
        if t.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {t.ndim}, expected 2 instead.")
    return multi_dot(list(matrices))


@takes_tensors("x")
def vander(x, N=None):
    """``linalg.vander``: the powers x^0, x^1, ..., x^(N-1) along a new last dim (N defaults to x's last size),
    built as a running product so that the gradient at x = 0 is finite (as in PyTorch)."""
    if x.ndim == 0:
        x = x.reshape(1)
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    if x.dtype.kind in "b":
        raise RuntimeError("linalg.vander: x must be a numeric tensor")
    ones = Tensor(np.ones(tuple(x.shape) + (1,), x.dtype))
    powers = sh.expand(x.unsqueeze(-1), tuple(x.shape) + (n - 1,))
    return rd.cumprod(sh.cat([ones, powers], -1), -1)


METHODS = ["mm", "mv", "dot", "vdot", "inner", "addmm", "addmv", "addr", "baddbmm", "addbmm", "addmm_", "addmv_",
           "addr_", "baddbmm_", "addbmm_", "trace", "kron", "cross"]
