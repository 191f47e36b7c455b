"""Matrix factorizations and solves, differentiable: solve, triangular solve, det/slogdet, Cholesky, QR,
symmetric eigendecomposition, general eigendecomposition, SVD, LU, pseudo-inverse and the matrix exponential.

The forward passes call LAPACK through NumPy (``np.linalg``), or through SciPy (``scipy.linalg``, the optional
``linalg`` extra) where NumPy has no routine (LU with pivots, the matrix exponential). Every op works on batches
of matrices in the last two dims.

A minigrad ``Function`` has one output, so a factorization with several (Q and R, U S Vh) returns them packed
side by side in one array (*batch, total), which ``_run`` unpacks into Tensors by indexing; the backward gets
the packed gradient and splits it again. An output whose gradient is zero everywhere is treated as unused
(None), which is what PyTorch's formulas branch on (``svdvals`` is ``svd`` with only S used).

Each backward is written once, on Tensors with minigrad ops (``_gradient``), and runs both as the plain
backward (on the saved arrays) and as the ``graph_backward`` (on the inputs and outputs joined to the graph),
so every gradient can be differentiated again. The formulas are PyTorch's (``derivatives.yaml``), derived in
each class. Notation: G is the gradient of the output, X^H the conjugate transpose, E_ij = L_j - L_i.
"""
import numpy as np

from ..autograd import Function
from ..tensor import Tensor
from . import elementwise as ew
from . import shape as sh
from .complex import real
from .linalg import matmul


class LinAlgError(RuntimeError):
    """PyTorch's ``torch.linalg.LinAlgError``: a factorization or solve failed (singular, not positive-definite)."""


def scipy_linalg():
    """``scipy.linalg``, or an ImportError naming the extra that installs it."""
    try:
        import scipy.linalg
    except ImportError:  # pragma: no cover - scipy is in the test extra
        raise ImportError("this minigrad.linalg function needs SciPy: pip install \"minigrad[linalg]\"") from None
    return scipy.linalg


# --------------------------------------------------------------------------- Tensor helpers of the formulas
def mH(t):
    """The conjugate transpose of the matrices in the last two dims."""
    t = t.transpose(-2, -1)
    return t.conj() if t.dtype.kind == "c" else t


def eye(n, m=None, dtype=np.float64):
    return Tensor(np.eye(n, n if m is None else m, dtype=dtype))


def diag(t):
    return sh.diagonal(t, 0, -2, -1)


def off_diagonal(t):
    """``t`` with its main diagonal zeroed (square matrices)."""
    n = t.shape[-1]
    return ew.mul(t, Tensor((1 - np.eye(n)).astype(t.dtype)))


def gap_matrix(L):
    """E_ij = L_j - L_i off the diagonal and 1 on it (a divisor for the eigen/singular-vector terms)."""
    E = ew.sub(L.unsqueeze(-2), L.unsqueeze(-1))
    return ew.add(E, Tensor(np.eye(L.shape[-1], dtype=L.dtype)))


def zeros_of(t):
    return Tensor(np.zeros(t.shape, t.dtype))


def _all_zero(g):
    return not np.any(g._data)


# --------------------------------------------------------------------------- the multi-output Function base
def batched(a, tail=2):
    """``a`` as (B, *last ``tail`` dims), B the product of the leading dims (explicit: an empty batch cannot
    be reshaped with -1)."""
    lead = a.shape[:a.ndim - tail]
    return a.reshape((int(np.prod(lead, dtype=np.int64)),) + a.shape[a.ndim - tail:])


def _flat(a, batch):
    return a.reshape(tuple(batch) + (int(np.prod(a.shape[len(batch):], dtype=np.int64)),))


def _unpack(packed, batch, shapes):
    """The outputs (ndarrays or Tensors) packed side by side in the last dim of ``packed``."""
    if len(shapes) == 1:
        return [packed]
    out, start = [], 0
    for s in shapes:
        n = int(np.prod(s, dtype=np.int64))
        out.append(packed[..., start:start + n].reshape(tuple(batch) + tuple(s)))
        start += n
    return out


class Factorization(Function):
    """Base of the ops below: ``compute(*arrays, **options)`` returns (outputs, batch) and ``gradient(ctx,
    grads, inputs, outputs, **options)`` the input gradients from Tensors (a grad is None when unused).

    What is saved follows PyTorch's formulas (derivatives.yaml), so that a write into an input or an output after
    the forward makes backward refuse exactly when PyTorch's does: ``saved_inputs``, the positions of the inputs
    PyTorch saves (the others, which ``gradient`` may still read, are kept as copies no write reaches), and
    ``saves_outputs`` (else they are kept as a copy)."""

    saved_inputs = ()
    saves_outputs = True
    empty_grads_depend = True    # under create_graph, zero gradients of empty inputs depend on them (as PyTorch's)

    @classmethod
    def forward(cls, ctx, *args, side, **options):
        arrays = [a._data if isinstance(a, Tensor) else a for a in args]
        outputs, batch = cls.compute(*arrays, **options)
        shapes = [o.shape[len(batch):] for o in outputs]
        packed = outputs[0] if len(outputs) == 1 else np.concatenate([_flat(o, batch) for o in outputs], -1)
        ctx.batch, ctx.shapes, ctx.options = tuple(batch), shapes, options
        side["unpack"] = (tuple(batch), shapes)
        if any(ctx.needs_input_grad):
            kept = [a.copy() if isinstance(a, np.ndarray) and i not in cls.saved_inputs else a
                    for i, a in enumerate(arrays)]
            ctx.save_for_backward(*kept, packed if cls.saves_outputs else packed.copy())
        return packed

    @classmethod
    def backward(cls, ctx, dout):
        *arrays, packed = ctx.saved_tensors
        inputs = [Tensor(a) if isinstance(a, np.ndarray) else a for a in arrays]
        outputs = [Tensor(o) for o in _unpack(packed, ctx.batch, ctx.shapes)]
        return cls._gradients(ctx, dout, inputs, outputs)

    @classmethod
    def graph_backward(cls, ctx, dout):
        *arrays, packed = ctx.saved_tensors
        inputs = [ctx.input_tensor(i, a) if isinstance(a, np.ndarray) else a for i, a in enumerate(arrays)]
        outputs = _unpack(ctx.output_tensor(packed), ctx.batch, ctx.shapes)
        return cls._gradients(ctx, dout, inputs, outputs, graph=True)

    @classmethod
    def _gradients(cls, ctx, dout, inputs, outputs, graph=False):
        grads = [None if _all_zero(g) else g for g in _unpack(dout, ctx.batch, ctx.shapes)]
        if all(g is None for g in grads) or any(0 in i.shape for i in inputs if isinstance(i, Tensor)):
            # zeros; under create_graph depending on each input, as PyTorch's formulas (which read them) give them
            zeros = [zeros_of(i) if n else None for i, n in zip(inputs, ctx.needs_input_grad)]
            if not (graph and cls.empty_grads_depend):
                return tuple(zeros)
            return tuple(None if z is None else ew.depending_on_input(ctx, i, z) for i, z in enumerate(zeros))
        found = cls.gradient(ctx, grads, inputs, outputs, **ctx.options)
        return found if isinstance(found, tuple) else (found,)


def run(cls, *args, **options):
    """The outputs of a ``Factorization`` as Tensors (a list)."""
    side = {}
    packed = cls.apply(*args, side=side, **options)
    batch, shapes = side["unpack"]
    return _unpack(packed, batch, shapes)


# --------------------------------------------------------------------------- errors of LAPACK
def singular_error(fname, A, what="solve"):
    """PyTorch's error for a singular matrix, naming the first zero pivot of its LU factorization (which needs
    SciPy; without it the message names no element)."""
    try:
        info = lu_info(A)
    except ImportError:
        return LinAlgError(f"{fname}: The {what} could not be completed because the input matrix is singular.")
    first = int(info[info > 0].min()) if np.any(info > 0) else 0
    batch = "" if A.ndim == 2 else f"(Batch element {int(np.argmax(info.reshape(-1) > 0))}): "
    return LinAlgError(f"{fname}: {batch}The diagonal element {first} is zero, the {what} could not be "
                       "completed because the input matrix is singular.")


def lu_info(A):
    """LAPACK getrf's ``info`` per matrix: 0, or the 1-based index of the first exactly zero pivot of U."""
    if A.size == 0:
        return np.zeros(A.shape[:-2], np.int32)
    sl = scipy_linalg()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lu = sl.lu_factor(A, check_finite=False)[0]
    d = np.diagonal(lu, 0, -2, -1)
    zero = d == 0
    return np.where(zero.any(-1), zero.argmax(-1) + 1, 0).astype(np.int32)


# --------------------------------------------------------------------------- solve
def _solve_arrays(A, B, left):
    """A^-1 B (left) or B A^-1, batch dims broadcast; LinAlgError from NumPy for a singular A."""
    if left:
        return np.linalg.solve(A, B)
    return np.swapaxes(np.linalg.solve(np.swapaxes(A, -1, -2), np.swapaxes(B, -1, -2)), -1, -2)


class Solve(Factorization):
    """X = A^-1 B (left) or B A^-1 (right), B a batch of matrices.

    Left: dX = -A^-1 dA X + A^-1 dB, so gB = A^-H G and gA = -gB X^H.
    Right: dX = -X dA A^-1 + dB A^-1, so gB = G A^-H and gA = -X^H gB."""

    saved_inputs = (0,)        # A (and the solution), not B

    @staticmethod
    def compute(A, B, left=True, quiet=False):
        batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
        if A.size == 0 or B.size == 0:
            shape = batch + ((A.shape[-1], B.shape[-1]) if left else (B.shape[-2], A.shape[-2]))
            return [np.zeros(shape, np.result_type(A, B))], batch
        try:
            return [_solve_arrays(A, B, left)], batch
        except np.linalg.LinAlgError:
            if not quiet:
                raise singular_error("linalg.solve", np.broadcast_to(A, batch + A.shape[-2:])) from None
            return [_solve_singular(np.broadcast_to(A, batch + A.shape[-2:]),
                                    np.broadcast_to(B, batch + B.shape[-2:]), left)], batch

    @staticmethod
    def gradient(ctx, grads, inputs, outputs, left=True, quiet=False):
        (G,), (A, B), (X,) = grads, inputs, outputs
        gB = solve(mH(A), G, left)
        gA = None
        if ctx.needs_input_grad[0]:
            gA = ew.neg(matmul(gB, mH(X)) if left else matmul(mH(X), gB))
        return gA, (gB if ctx.needs_input_grad[1] else None)


def _solve_singular(A, B, left):
    """The LU solve LAPACK's getrs does for a singular A (a gradient's solve does not raise in PyTorch): the
    division by the zero pivot gives infs and NaNs."""
    if not left:
        return np.swapaxes(_solve_singular(np.swapaxes(A, -1, -2), np.swapaxes(B, -1, -2), True), -1, -2)
    sl = scipy_linalg()
    import warnings
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return sl.lu_solve(sl.lu_factor(A, check_finite=False), B, check_finite=False)


def solve(A, B, left=True, quiet=False):
    """Solve for batches of matrices B (no checks: the public functions check). ``quiet``: a singular A gives
    infs and NaNs instead of raising (for gradients, as in PyTorch)."""
    return run(Solve, A, B, left=left, quiet=quiet)[0]


class Inverse(Solve):
    """A^-1 as the solve A X = I; PyTorch's inverse saves only its output (A is kept as a copy)."""

    saved_inputs = ()


def inv(A, quiet=False):
    """A^-1 as the solve A X = I: its gradient is then -A^-H G A^-H."""
    return run(Inverse, A, Tensor(np.eye(A.shape[-1], dtype=A.dtype)), left=True, quiet=quiet)[0]


# --------------------------------------------------------------------------- triangular solve
def _triangle(A, upper, unitriangular):
    """The triangle of A that a triangular solve reads (with ones on the diagonal if ``unitriangular``)."""
    T = np.triu(A) if upper else np.tril(A)
    if unitriangular:
        n = A.shape[-1]
        T = T * (1 - np.eye(n, dtype=A.dtype)) + np.eye(n, dtype=A.dtype)
    return T


class SolveTriangular(Factorization):
    """X = A^-1 B or B A^-1 for A triangular (only its triangle is read, its diagonal taken as ones when
    ``unitriangular``). As for ``Solve``, gB = A^-H G (left) or G A^-H (right), and gA = -gB X^H or -X^H gB,
    restricted to the triangle read (strictly, when unitriangular): the other entries do not enter."""

    saved_inputs = (0,)        # A (and the solution), not B

    @staticmethod
    def compute(A, B, upper, left=True, unitriangular=False):
        batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
        if A.size == 0 or B.size == 0:
            shape = batch + ((A.shape[-1], B.shape[-1]) if left else (B.shape[-2], A.shape[-2]))
            return [np.zeros(shape, np.result_type(A, B))], batch
        T = _triangle(A, upper, unitriangular)
        with np.errstate(all="ignore"):
            try:
                return [_solve_arrays(T, B, left)], batch
            except np.linalg.LinAlgError:   # a zero on the diagonal: PyTorch (trsm) returns infs and NaNs
                return [_substitute(T, B, upper, left)], batch

    @staticmethod
    def gradient(ctx, grads, inputs, outputs, upper, left=True, unitriangular=False):
        (G,), (A, B), (X,) = grads, inputs, outputs
        gB = solve_triangular(mH(A), G, upper=not upper, left=left, unitriangular=unitriangular)
        gA = None
        if ctx.needs_input_grad[0]:
            gA = ew.neg(matmul(gB, mH(X)) if left else matmul(mH(X), gB))
            offset = 1 if unitriangular else 0
            gA = sh.triu(gA, offset) if upper else sh.tril(gA, -offset)
        return gA, (gB if ctx.needs_input_grad[1] else None)


def _substitute(T, B, upper, left):
    """Triangular solve by substitution (a singular triangle: infs and NaNs, as LAPACK's trsm gives)."""
    if not left:
        return np.swapaxes(_substitute(np.swapaxes(T, -1, -2), np.swapaxes(B, -1, -2), not upper, True), -1, -2)
    batch = np.broadcast_shapes(T.shape[:-2], B.shape[:-2])
    T = np.broadcast_to(T, batch + T.shape[-2:])
    X = np.array(np.broadcast_to(B, batch + B.shape[-2:]), dtype=np.result_type(T, B))
    n = T.shape[-1]
    rows = range(n - 1, -1, -1) if upper else range(n)
    for i in rows:   # one row of the substitution per step, vectorised over the batch and the columns
        done = slice(i + 1, n) if upper else slice(0, i)
        X[..., i, :] -= np.einsum("...k,...kj->...j", T[..., i, done], X[..., done, :])
        X[..., i, :] /= T[..., i, i][..., None]
    return X


def solve_triangular(A, B, upper, left=True, unitriangular=False):
    return run(SolveTriangular, A, B, upper=upper, left=left, unitriangular=unitriangular)[0]


# --------------------------------------------------------------------------- determinants
class Det(Factorization):
    """det A. d det = det tr(A^-1 dA), so gA = (G conj(det)) A^-H. An exactly singular A (det A = 0: a zero
    pivot in its LU factorization) gets a zero gradient, as PyTorch gives it: its inverse is replaced by I's
    and the factor det A is 0."""

    saved_inputs = (0,)
    empty_grads_depend = False   # PyTorch's det of an empty matrix gives a constant zero gradient

    @staticmethod
    def compute(A):
        return [np.linalg.det(A) if A.size else np.ones(A.shape[:-2], A.dtype)], A.shape[:-2]

    @staticmethod
    def gradient(ctx, grads, inputs, outputs):
        (G,), (A,), (d,) = grads, inputs, outputs
        singular = d._data == 0                                                # (*batch)
        if np.any(singular):
            identity = Tensor(np.eye(A.shape[-1], dtype=A.dtype))
            A = ew.where(Tensor(singular[..., None, None]), identity, A)
            d = ew.where(Tensor(singular), zeros_of(d), d)
        scale = ew.mul(G, d.conj() if d.dtype.kind == "c" else d)
        return ew.mul(scale.unsqueeze(-1).unsqueeze(-1), mH(inv(A)))


class SlogDet(Factorization):
    """(sign, log|det A|). d log det = tr(A^-1 dA) = d log|det| + i d theta with sign = e^{i theta}, so for
    gradients g_s, g_l of sign and logabsdet: gA = (g_l + i Im(conj(sign) g_s)) A^-H (the sign of a real
    matrix is piecewise constant: gA = g_l A^-H)."""

    saved_inputs = (0,)

    @staticmethod
    def compute(A):
        if A.size == 0:
            ones = np.ones(A.shape[:-2], A.dtype)
            return [ones, np.zeros(A.shape[:-2], np.empty(0, A.dtype).real.dtype).astype(A.dtype)], A.shape[:-2]
        sign, logabsdet = np.linalg.slogdet(A)
        return [sign.astype(A.dtype), logabsdet.astype(A.dtype)], A.shape[:-2]

    @staticmethod
    def gradient(ctx, grads, inputs, outputs):
        (g_sign, g_log), (A,), (sign, _) = grads, inputs, outputs
        h = g_log if g_log is not None else zeros_of(sign)
        if A.dtype.kind == "c" and g_sign is not None:
            from .complex import imag
            h = ew.add(real(h), ew.mul(imag(ew.mul(sign.conj(), g_sign)), 1j))
        return ew.mul(h.unsqueeze(-1).unsqueeze(-1), mH(inv(A, quiet=True)))


# --------------------------------------------------------------------------- Cholesky
def _not_positive_definite(fname, A, upper):
    try:
        info = cholesky_info(A, upper)
    except ImportError:   # the order of the minor needs SciPy's potrf
        return LinAlgError(f"{fname}: The factorization could not be completed because the input is not "
                           "positive-definite.")
    order = int(info[info > 0].min())
    batch = "" if A.ndim == 2 else f"(Batch element {int(np.argmax(info.reshape(-1) > 0))}): "
    return LinAlgError(f"{fname}: {batch}The factorization could not be completed because the input is not "
                       f"positive-definite (the leading minor of order {order} is not positive-definite).")


def cholesky_info(A, upper=False):
    """LAPACK potrf's ``info`` per matrix: 0, or the order of the first leading minor not positive-definite."""
    lapack = scipy_linalg().lapack
    flat = batched(A)
    potrf = lapack.get_lapack_funcs("potrf", (flat,))
    info = [potrf(m, lower=not upper)[1] for m in flat] if flat.size else []
    return np.array(info, np.int32).reshape(A.shape[:-2])


class Cholesky(Factorization):
    """A = L L^H (or U^H U with ``upper``). From dA = dL L^H + L dL^H, L^-1 dA L^-H = Phi^-1 with
    Phi(M) = tril(M) with half its diagonal: gA = L^-H Phi(L^H gL) L^-1, symmetrized:
    gA = L^-H P L^-1 with P = (M + tril(M, -1)^H) / 2, M = tril(L^H gL)."""

    @staticmethod
    def compute(A, upper=False):
        if A.size == 0:
            return [np.zeros(A.shape, A.dtype)], A.shape[:-2]
        try:
            L = np.linalg.cholesky(A, upper=upper)
        except np.linalg.LinAlgError:
            raise _not_positive_definite("linalg.cholesky", A, upper) from None
        return [L], A.shape[:-2]

    @staticmethod
    def gradient(ctx, grads, inputs, outputs, upper=False):
        (gL,), _, (L,) = grads, inputs, outputs
        if upper:
            L, gL = mH(L), mH(gL)
        M = sh.tril(matmul(mH(L), gL))
        P = ew.mul(ew.add(M, mH(sh.tril(M, -1))), 0.5)
        gA = solve_triangular(mH(L), P, upper=True, left=True)
        return solve_triangular(L, gA, upper=False, left=False)


# --------------------------------------------------------------------------- QR
class QR(Factorization):
    """A = QR. For m >= n (reduced): with M = R gR^H - gQ^H Q and copyltu(M) = tril(M, -1) + tril(M, -1)^H +
    Re diag(M) (the Hermitian matrix of M's lower triangle), gA = (gQ + Q copyltu(M)) R^-H.
    For m < n, A = Q [R1 R2] = [X Y]: gY = Q gR2, and X = Q R1 is the square case with gQ + Y gR2^H."""

    @staticmethod
    def compute(A, mode="reduced"):
        m, n = A.shape[-2:]
        batch = A.shape[:-2]
        if A.size == 0:
            k = min(m, n)
            q_cols, r_rows = (m, m) if mode == "complete" else (k, k)
            Q = np.zeros(batch + (m, q_cols), A.dtype)
            if mode == "complete" and m:
                Q = Q + np.eye(m, dtype=A.dtype)
            R = np.zeros(batch + (r_rows, n), A.dtype)
            return ([R] if mode == "r" else [Q, R]), batch
        if mode == "r":
            return [np.linalg.qr(A, mode="r")], batch
        Q, R = np.linalg.qr(A, mode=mode)
        return [Q, R], batch

    @staticmethod
    def gradient(ctx, grads, inputs, outputs, mode="reduced"):
        if mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                               "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
                               "through linalg.qr.")
        (gQ, gR), (A,), (Q, R) = grads, inputs, outputs
        m, n = A.shape[-2:]
        if mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                               "nrows > ncols.")
        gQ = zeros_of(Q) if gQ is None else gQ
        gR = zeros_of(R) if gR is None else gR
        if m >= n:
            return _qr_square_grad(gQ, gR, Q, R)
        R1, R2 = R[..., :, :m], R[..., :, m:]
        gR1, gR2 = gR[..., :, :m], gR[..., :, m:]
        Y = A[..., :, m:]
        gX = _qr_square_grad(ew.add(gQ, matmul(Y, mH(gR2))), gR1, Q, R1)
        return sh.cat([gX, matmul(Q, gR2)], -1)


def _qr_square_grad(gQ, gR, Q, R):
    M = ew.sub(matmul(R, mH(gR)), matmul(mH(gQ), Q))
    lower = sh.tril(M, -1)
    copyltu = ew.add(ew.add(lower, mH(lower)), sh.diag_embed(real(diag(M)) if M.dtype.kind == "c" else diag(M)))
    B = ew.add(gQ, matmul(Q, copyltu))                        # (*, m, n)
    return mH(solve_triangular(R, mH(B), upper=True))         # B R^-H


# --------------------------------------------------------------------------- symmetric eigendecomposition
def _check_gauge(VhgV_diag, what):
    if VhgV_diag.dtype.kind == "c":
        from .complex import imag
        if not np.allclose(imag(VhgV_diag)._data, 0, rtol=1e-2, atol=1e-2):
            raise RuntimeError(f"{what}: The eigenvectors in the complex case are specified up to "
                               "multiplication by e^{i phi}. The specified loss function depends on this quantity, "
                               "so it is ill-defined.")


class Eigh(Factorization):
    """A = V diag(L) V^H, A Hermitian (only the ``UPLO`` triangle read). From dL = diag(V^H dA V) and
    V^H dV = (V^H dA V) / E off the diagonal (skew-Hermitian):
    gA = V (diag(gL) + skew(V^H gV) / E) V^H, skew(M) = (M - M^H) / 2 (its diagonal dropped)."""

    @staticmethod
    def compute(A, UPLO="L"):
        batch = A.shape[:-2]
        if A.size == 0:
            L = np.zeros(A.shape[:-1], np.empty(0, A.dtype).real.dtype)
            return ([L.astype(A.dtype), np.zeros(A.shape, A.dtype)]), batch
        L, V = np.linalg.eigh(A, UPLO=UPLO)
        return [L.astype(A.dtype), V], batch

    @staticmethod
    def gradient(ctx, grads, inputs, outputs, UPLO="L"):
        (gL, gV), _, (L, V) = grads, inputs, outputs
        if gV is not None:
            VhgV = matmul(mH(V), gV)
            _check_gauge(diag(VhgV), "linalg_eigh_backward")
            inner = off_diagonal(ew.div(ew.mul(ew.sub(VhgV, mH(VhgV)), 0.5), gap_matrix(real(L))))
            if gL is not None:
                inner = ew.add(inner, sh.diag_embed(gL))
        else:
            inner = sh.diag_embed(gL)
        return matmul(V, matmul(inner, mH(V)))


# --------------------------------------------------------------------------- general eigendecomposition
def _complex_dtype(dtype):
    return np.dtype(np.complex64) if dtype in (np.float32, np.complex64) else np.dtype(np.complex128)


class Eig(Factorization):
    """A V = V diag(L), V's columns of norm 1 (complex outputs). With the projection of V^H gV that keeps
    the columns' norm, W = V^H gV - V^H V Re diag(V^H gV):
    gA = V^-H (diag(gL) + W / conj(E)) V^H (its real part for a real A)."""

    @staticmethod
    def compute(A):
        dtype = _complex_dtype(A.dtype)
        if A.size == 0:
            return [np.zeros(A.shape[:-1], dtype), np.zeros(A.shape, dtype)], A.shape[:-2]
        L, V = np.linalg.eig(A)     # LAPACK geev on A itself: PyTorch's eigenvector phases
        return [L.astype(dtype), V.astype(dtype)], A.shape[:-2]

    @staticmethod
    def gradient(ctx, grads, inputs, outputs):
        (gL, gV), (A,), (L, V) = grads, inputs, outputs
        if gV is not None:
            VhgV = matmul(mH(V), gV)
            _check_gauge(diag(VhgV), "linalg_eig_backward")
            W = ew.sub(VhgV, matmul(mH(V), ew.mul(V, real(diag(VhgV)).unsqueeze(-2))))
            inner = off_diagonal(ew.div(W, gap_matrix(L).conj()))
            if gL is not None:
                inner = ew.add(inner, sh.diag_embed(gL))
        else:
            inner = sh.diag_embed(gL)
        gA = solve(mH(V), matmul(inner, mH(V)))
        return real(gA) if A.dtype.kind != "c" else gA


# --------------------------------------------------------------------------- SVD
class SVD(Factorization):
    """A = U diag(S) Vh, k = min(m, n) (full matrices: U, Vh narrowed to k for the formula). With
    skew(M) = M - M^H, J = skew(U^H gU), K = skew(V^H gV) and E_ij = S_j^2 - S_i^2 (1 on the diagonal):
    inner = (J S + S K) / E + diag(gS) (+ diag(J) / 2S for complex A, given gU and gV), gA = U inner Vh, plus
    (I - U U^H) gU S^-1 Vh when m > k and
    U S^-1 gV^H (I - V V^H) when n > k. The complex case raises when the loss depends on the phases of the
    singular vectors (Im diag(U^H gU) != -Im diag(V^H gV)), as PyTorch does.

    ``keep`` (``svd_lowrank``'s truncation to q components): the caller drops the components from ``keep`` on, so
    no gradient flows into them and their S^-1 terms are 0, also where such an S is 0 (a rank-deficient A: there
    PyTorch's linalg.svd gives NaN, 0 / 0, while its svd_lowrank never computes those components)."""

    @staticmethod
    def compute(A, full_matrices=True, keep=None):
        m, n = A.shape[-2:]
        k = min(m, n)
        batch = A.shape[:-2]
        real_dtype = np.empty(0, A.dtype).real.dtype
        if A.size == 0:
            u_cols, v_rows = (m, n) if full_matrices else (k, k)
            U = np.zeros(batch + (m, u_cols), A.dtype) + (np.eye(m, u_cols, dtype=A.dtype) if full_matrices else 0)
            Vh = np.zeros(batch + (v_rows, n), A.dtype) + (np.eye(v_rows, n, dtype=A.dtype) if full_matrices else 0)
            return [U, np.zeros(batch + (k,), real_dtype).astype(A.dtype), Vh], batch
        U, S, Vh = np.linalg.svd(A, full_matrices=full_matrices)
        return [U, S.astype(A.dtype), Vh], batch

    @staticmethod
    def gradient(ctx, grads, inputs, outputs, full_matrices=True, keep=None):
        (gU, gS, gVh), (A,), (U, S, Vh) = grads, inputs, outputs
        m, n = A.shape[-2:]
        k = min(m, n)
        S = real(S) if S.dtype.kind == "c" else S
        truncated = keep is not None and keep < k
        if full_matrices:
            U, Vh = U[..., :, :k], Vh[..., :k, :]
            gU = None if gU is None else gU[..., :, :k]
            gVh = None if gVh is None else gVh[..., :k, :]
        if gU is None and gVh is None:
            return matmul(U, matmul(sh.diag_embed(gS), Vh))
        V, gV = mH(Vh), (None if gVh is None else mH(gVh))
        UhgU = None if gU is None else matmul(mH(U), gU)
        VhgV = None if gV is None else matmul(mH(V), gV)
        if A.dtype.kind == "c":
            from .complex import imag
            im_u = 0 if UhgU is None else imag(diag(UhgU))._data
            im_v = 0 if VhgV is None else imag(diag(VhgV))._data
            if not np.allclose(im_u, -np.asarray(im_v), rtol=1e-2, atol=1e-2):
                raise RuntimeError("svd_backward: The singular vectors in the complex case are specified up to "
                                   "multiplication by e^{i phi}. The specified loss function depends on this "
                                   "phase term, making it ill-defined.")
        S2 = ew.mul(S, S)
        E = gap_matrix(S2)
        J = None if UhgU is None else ew.sub(UhgU, mH(UhgU))          # skew(U^H gU)
        K = None if VhgV is None else ew.sub(VhgV, mH(VhgV))          # skew(V^H gV)
        terms = [t for t in (None if J is None else ew.mul(J, S.unsqueeze(-2)),
                             None if K is None else ew.mul(S.unsqueeze(-1), K)) if t is not None]
        # The diagonal is kept, as PyTorch keeps it: J's and K's are 0 for real A and cancel for a complex loss that
        # does not depend on the vectors' phases, but second derivatives differentiate them.
        inner = ew.div(terms[0] if len(terms) == 1 else ew.add(*terms), E)
        if gS is not None:
            inner = ew.add(inner, sh.diag_embed(gS))
        if A.dtype.kind == "c" and J is not None and K is not None:  # + i Im(diag(U^H gU)) / S, the phases' term
            inner = ew.add(inner, sh.diag_embed(ew.div(diag(J), ew.mul(S, 2.0))))
        if m > k and gU is not None:
            gUSinv = ew.mul(gU, _kept_reciprocal(S, keep).unsqueeze(-2)) if truncated else ew.div(gU, S.unsqueeze(-2))
            inner = ew.add(matmul(U, inner), ew.sub(gUSinv, matmul(U, matmul(mH(U), gUSinv))))
            return matmul(inner, Vh)
        if n > k and gV is not None:
            SinvgVh = (ew.mul(gVh, _kept_reciprocal(S, keep).unsqueeze(-1)) if truncated
                       else ew.div(gVh, S.unsqueeze(-1)))
            inner = ew.add(matmul(inner, Vh), ew.sub(SinvgVh, matmul(matmul(SinvgVh, V), Vh)))
            return matmul(U, inner)
        return matmul(U, matmul(inner, Vh))


def _kept_reciprocal(S, keep):
    """1 / S for the first ``keep`` singular values (..., k), 0 for the others, with no division by them."""
    kept = np.arange(S.shape[-1]) < keep                               # (k,)
    safe = ew.add(ew.mul(S, kept.astype(S.dtype)), (~kept).astype(S.dtype))   # the dropped ones replaced by 1
    return ew.mul(ew.reciprocal(safe), kept.astype(S.dtype))


# --------------------------------------------------------------------------- LU
def lu_factor_arrays(A):
    """LAPACK getrf: the packed LU (L below the diagonal, unit diagonal implied, U on and above) and the
    1-based int32 pivots (row i was swapped with row pivots[i] - 1), per matrix."""
    m, n = A.shape[-2:]
    k = min(m, n)
    if A.size == 0:
        return np.zeros(A.shape, A.dtype), np.broadcast_to(np.arange(1, k + 1, dtype=np.int32),
                                                          A.shape[:-2] + (k,)).copy()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # SciPy warns about singular matrices; PyTorch returns them
        if m == n:
            LU, piv = scipy_linalg().lu_factor(A, check_finite=False)
        else:
            getrf = scipy_linalg().lapack.get_lapack_funcs("getrf", (A,))
            flat = batched(A)
            found = [getrf(a)[:2] for a in flat]
            LU = np.stack([f[0] for f in found]).reshape(A.shape)
            piv = np.stack([f[1] for f in found]).reshape(A.shape[:-2] + (k,))
    return LU, (piv + 1).astype(np.int32)


def permutation_of(pivots, m):
    """The permutation matrices P (*, m, m) of LAPACK pivots (1-based row swaps) with A = P L U."""
    batch = pivots.shape[:-1]
    perm = batched(np.broadcast_to(np.arange(m), batch + (m,)), 1).copy()   # (B, m): row perm[i] of A ...
    swaps = batched(pivots, 1) - 1                                            # ... is row i of L U
    batch_index = np.arange(perm.shape[0])
    for i in range(swaps.shape[-1]):      # one swap per pivot, vectorised over the batch
        j = swaps[:, i]
        perm[batch_index, i], perm[batch_index, j] = perm[batch_index, j], perm[batch_index, i].copy()
    P = np.zeros((perm.shape[0], m, m))
    np.put_along_axis(P, perm[:, None, :], 1, axis=1)                         # P[perm[i], i] = 1
    return P.reshape(batch + (m, m))


def unpack_lu(LU, m, n):
    """(L, U) of a packed LU (*, m, n): L (*, m, k) unit lower, U (*, k, n) upper, k = min(m, n)."""
    k = min(m, n)
    L = np.tril(LU[..., :, :k], -1) + np.eye(m, k, dtype=LU.dtype)
    U = np.triu(LU[..., :k, :])
    return L, U


class LU(Factorization):
    """A = P L U (partial pivoting; P constant). Square: with dA = P (dL U + L dU), the gradient is
    gA = P L^-H (tril(L^H gL, -1) + triu(gU U^H)) U^-H. Wide (m < n, U = [U1 U2]): U2 = L^-1 P^T A2 adds
    gA2 = P L^-H gU2 and replaces gL by gL - L^-H gU2 U2^H. Tall (m > n, L = [L1; L2]): L2 = B2 U^-1
    (B = P^T A) adds gB2 = gL2 U^-H and replaces gU by gU - L2^H gL2 U^-H."""

    @staticmethod
    def compute(A):
        m, n = A.shape[-2:]
        LU_, pivots = lu_factor_arrays(A)
        L, U = unpack_lu(LU_, m, n)
        return [permutation_of(pivots, m).astype(A.dtype), L, U], A.shape[:-2]

    @staticmethod
    def gradient(ctx, grads, inputs, outputs):
        (_, gL, gU), (A,), (P, L, U) = grads, inputs, outputs
        m, n = A.shape[-2:]
        gL = zeros_of(L) if gL is None else gL
        gU = zeros_of(U) if gU is None else gU
        if m == n:
            return matmul(P, _lu_square_grad(gL, gU, L, U))
        if m < n:
            U1, U2, gU1, gU2 = U[..., :, :m], U[..., :, m:], gU[..., :, :m], gU[..., :, m:]
            LhgU2 = solve_triangular(mH(L), gU2, upper=True, unitriangular=True)          # L^-H gU2
            gL = ew.sub(gL, matmul(LhgU2, mH(U2)))
            return matmul(P, sh.cat([_lu_square_grad(gL, gU1, L, U1), LhgU2], -1))
        L1, L2, gL1, gL2 = L[..., :n, :], L[..., n:, :], gL[..., :n, :], gL[..., n:, :]
        gL2Uh = solve_triangular(mH(U), gL2, upper=False, left=False)                      # gL2 U^-H
        gU = ew.sub(gU, matmul(mH(L2), gL2Uh))
        return matmul(P, sh.cat([_lu_square_grad(gL1, gU, L1, U), gL2Uh], -2))


def _lu_square_grad(gL, gU, L, U):
    phi = ew.add(sh.tril(matmul(mH(L), gL), -1), sh.triu(matmul(gU, mH(U))))
    left = solve_triangular(mH(L), phi, upper=True, unitriangular=True)                    # L^-H phi
    return solve_triangular(mH(U), left, upper=False, left=False)                          # ... U^-H


# --------------------------------------------------------------------------- pseudo-inverse
def pinv_arrays(A, atol, rtol, hermitian):
    """The pseudo-inverse from the SVD (or eigendecomposition), singular values <= max(atol, rtol * max) cut."""
    m, n = A.shape[-2:]
    if A.size == 0:
        return np.zeros(A.shape[:-2] + (n, m), A.dtype)
    if hermitian:
        w, V = np.linalg.eigh(A)
        s = np.abs(w)
        smax = s.max(-1, keepdims=True)
        keep = s > np.maximum(atol, rtol * smax)
        inv_w = np.where(keep, 1 / np.where(keep, w, 1), 0)
        return (V * inv_w[..., None, :]) @ np.conj(np.swapaxes(V, -1, -2))
    U, s, Vh = np.linalg.svd(A, full_matrices=False)
    smax = s[..., :1] if s.shape[-1] else s
    keep = s > np.maximum(atol, rtol * smax)
    inv_s = np.where(keep, 1 / np.where(keep, s, 1), 0)
    return (np.conj(np.swapaxes(Vh, -1, -2)) * inv_s[..., None, :]) @ np.conj(np.swapaxes(U, -1, -2))


class Pinv(Factorization):
    """X = A^+. From dX = -X dA X + X X^H dA^H (I - A X) + (I - X A) dA^H X^H X (Golub & Pereyra):
    gA = -X^H G X^H + (I - A X) G^H X X^H + X^H X G^H (I - X A)."""

    saved_inputs = (0,)

    @staticmethod
    def compute(A, atol, rtol, hermitian=False):
        return [pinv_arrays(A, np.asarray(atol), np.asarray(rtol), hermitian)], A.shape[:-2]

    @staticmethod
    def gradient(ctx, grads, inputs, outputs, atol, rtol, hermitian=False):
        (G,), (A,), (X,) = grads, inputs, outputs
        Xh, Gh = mH(X), mH(G)
        term1 = ew.neg(matmul(Xh, matmul(G, Xh)))
        AX_G = ew.sub(Gh, matmul(A, matmul(X, Gh)))             # (I - A X) G^H
        term2 = matmul(AX_G, matmul(X, Xh))
        GX = ew.sub(Gh, matmul(matmul(Gh, X), A))               # G^H (I - X A)
        term3 = matmul(matmul(Xh, X), GX)
        return ew.add(ew.add(term1, term2), term3)


# --------------------------------------------------------------------------- matrix exponential
class MatrixExp(Factorization):
    """exp(A). Its Frechet derivative in the direction E is the upper-right block of exp([[A, E], [0, A]]), so
    the adjoint (the gradient) is the upper-right block of exp([[A^H, G], [0, A^H]])."""

    saved_inputs, saves_outputs = (0,), False

    @staticmethod
    def compute(A):
        if A.size == 0:
            return [np.zeros(A.shape, A.dtype)], A.shape[:-2]
        return [scipy_linalg().expm(A).astype(A.dtype, copy=False)], A.shape[:-2]

    @staticmethod
    def gradient(ctx, grads, inputs, outputs):
        (G,), (A,), _ = grads, inputs, outputs
        n = A.shape[-1]
        Ah = mH(A)
        top = sh.cat([Ah, G], -1)                                              # [A^H, G]
        bottom = sh.cat([zeros_of(Ah), Ah], -1)                                # [0, A^H]
        block = run(MatrixExp, sh.cat([top, bottom], -2))[0]
        return block[..., :n, n:]
