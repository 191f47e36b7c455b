"""A differential fuzzer for autograd's hardest corners: views, in-place writes, hooks, ``retain_grad``,
``detach``, ``no_grad`` and double backward, run as the same random short program in minigrad and in PyTorch.

A program is a list of statements ``(op, i, j, k, no_grad)``: ``op`` names a statement below, ``i`` and ``j``
pick its operands among the tensors made so far (modulo their number), ``k`` picks its parameters from the
operand's shape (a dim, a start, a shape to view as...), and ``no_grad`` runs it inside ``no_grad()``. The
program starts from three tensors: ``a`` (2, 3) and ``w`` (3,), leaves that require grad, and ``v0`` (2, 3),
a plain tensor. Every statement's parameters depend only on shapes, so both libraries run the same program as
long as they agree; the first disagreement is reported.

What is compared, after each statement: whether it raised (and the exception's type, then the program stops),
whether it returned its operand itself (in-place ops do), and the new tensor's shape, dtype, values,
``requires_grad`` and ``is_leaf`` (which may raise too). At the end: every tensor's values, then a backward of a
random-weighted sum of every tensor that requires grad (optionally through ``autograd.grad(create_graph=True)``
and a second backward), and the ``.grad`` of every leaf and every tensor that retains its gradient.

``describe(program)`` prints a program as Python, to paste into a regression test or a bug report.
"""
import numpy as np

from minigrad.ops.layout import dense_order   # (an ndarray's layout; no tensor involved)

SHAPE_A, SHAPE_W, SHAPE_V = (2, 3), (3,), (2, 3)


def _dim(x, k):
    return k % max(x.ndim, 1)


def _constant(lib, shape, k):
    """A fixed random float64 tensor of ``shape`` (the same in both libraries)."""
    rng = np.random.default_rng(k)
    return lib.tensor(rng.standard_normal(shape))


def _factorizations(n):
    out = [(n,)]
    for p in range(2, n + 1):
        if n % p == 0:
            out += [(p, n // p), (n // p, p), (1, n // p, p)]
    return out


def _slice_index(x, k):
    """A basic index of ``x``: slices (with steps), an integer, None or Ellipsis, from ``k``."""
    if x.ndim == 0:
        return (None, Ellipsis)[k % 2]
    d = _dim(x, k)
    n = x.shape[d]
    kind = (k // 7) % 4
    if kind == 0:
        part = slice(k % (n + 1), None)
    elif kind == 1:
        part = slice(None, None, 1 + k % 2)
    elif kind == 2 and n:
        part = (k // 3) % n
    else:
        part = slice(0, 0) if k % 5 == 0 else slice(None, max(n - 1, 0))
    return (slice(None),) * d + (part,)


# --------------------------------------------------------------------------- statements
# Each takes (lib, x, y, k) and returns a tensor (a new one, or x itself for an in-place op), or None.
def _view(lib, x, y, k):
    shapes = _factorizations(x.numel()) if x.numel() else [(0,), (0, 1)]
    return x.view(shapes[k % len(shapes)])


def _reshape(lib, x, y, k):
    shapes = _factorizations(x.numel()) if x.numel() else [(0,)]
    return x.reshape(shapes[k % len(shapes)])


def _expand(lib, x, y, k):
    if k % 3 == 0:
        return x.expand(2, *x.shape)
    shape = tuple(3 if s == 1 and (k >> i) & 1 else s for i, s in enumerate(x.shape))
    return x.expand(*shape) if shape else x.expand(())


def _narrow(lib, x, y, k):
    d = _dim(x, k)
    n = x.shape[d] if x.ndim else 0
    start = (k // 5) % (n + 1)
    return x.narrow(d, start, (k // 11) % (n - start + 1))


def _select(lib, x, y, k):
    d = _dim(x, k)
    n = x.shape[d] if x.ndim else 1
    return x.select(d, (k // 5) % max(n, 1))


def _diagonal(lib, x, y, k):
    return x.diagonal((k % 3) - 1, 0, x.ndim - 1)    # (a 0-d or 1-D x: an error in both)


def _piece(lib, x, y, k):
    d = _dim(x, k)
    kind = k % 3
    pieces = x.unbind(d) if kind == 0 else x.split(1, d) if kind == 1 else x.chunk(2, d)
    return pieces[(k // 3) % len(pieces)] if len(pieces) else x


def _permute(lib, x, y, k):
    dims = list(range(x.ndim))
    rng = np.random.default_rng(k)
    rng.shuffle(dims)
    return x.permute(*dims) if dims else x.permute(())


def _setitem_number(lib, x, y, k):
    x[_slice_index(x, k)] = float(k % 7) - 3.0
    return x


def _setitem_tensor(lib, x, y, k):
    target = x[_slice_index(x, k)]
    if y.shape != target.shape and y.numel() == 1:
        y = y.reshape(())
    value = y if y.numel() == 1 or y.shape == target.shape else y.sum()
    if _undefined_alias(target, value):
        return SKIPPED
    x[_slice_index(x, k)] = value
    return x


def _hook(lib, x, y, k):
    factor = 1.0 + (k % 3)
    x.grad_fn       # PyTorch 2.13 crashes (segmentation fault) hooking a view whose grad_fn is stale: read it first
    # (PyTorch calls the hook with None when the tensor's node runs in a second backward without a gradient for
    # this output, as group_norm's does for its saved statistics; minigrad does not call it then)
    x.register_hook(lambda g: None if g is None else g * factor)
    return None


def _retain(lib, x, y, k):
    x.retain_grad()
    return None


def _undefined_alias(x, y):
    """Whether an in-place write into ``x`` reading ``y`` has no defined result: they share memory and one of them
    does not fill its memory densely, so PyTorch neither refuses it nor defines the order of reads and writes."""
    xa, ya = x.detach().numpy(), y.detach().numpy()
    if not np.shares_memory(xa, ya):
        return False
    return not (dense_order(xa) and dense_order(ya))


def _inplace_binary(method, reduce):
    def statement(lib, x, y, k):
        operand = y if _broadcasts_into(y.shape, x.shape) else reduce(y)
        if _undefined_alias(x, operand):
            return SKIPPED
        return getattr(x, method)(operand)
    return statement


READ_MODIFY_WRITE = {"mul_number_", "data_mul_", "add_", "mul_", "sub_", "copy_", "tanh_", "exp_", "sigmoid_", "pow_",
                     "addcmul_", "lerp_", "index_put_", "setitem_tensor", "index_add_", "index_copy_", "scatter_",
                     "scatter_add_", "masked_scatter_", "div_", "neg_", "abs_", "sin_", "cos_"}


def _windows_overlap(x):
    """Whether elements of ``x`` share memory other than through a stride 0 (which both libraries refuse to write):
    two elements at the same byte offset."""
    array = x.detach().numpy()
    if 0 in array.strides or array.size <= 1:
        return False
    offsets = np.zeros((), np.int64)
    for n, stride in zip(array.shape, array.strides):
        offsets = np.add.outer(offsets, np.arange(n, dtype=np.int64) * stride)
    return np.unique(offsets).size < array.size


SKIPPED = "skipped"   # a statement whose result is undefined in PyTorch itself: neither library runs it
NORMS = {"layer_norm", "rms_norm", "group_norm", "batch_norm", "instance_norm"}
UNTRACKED_WRITES = {"data", "data_mul_"}   # statements that write, or make a tensor that writes, behind autograd's back
PYTORCH_BUG = ("PyTorch failed an internal assertion",)   # a program PyTorch cannot run: not compared


def _broadcasts_into(small, big):
    if len(small) > len(big):
        return False
    return all(s in (1, b) for s, b in zip(small[::-1], big[::-1]))


def _binary(lib, x, y, k):
    try:
        np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        y = y.sum()
    return x * y if k % 2 else x + y


def _unfold(lib, x, y, k):
    if x.ndim == 0:
        return x.unfold(0, 1, 1)
    d = _dim(x, k)
    n = x.shape[d]
    size = k % (n + 1)
    return x.unfold(d, size, 1 + (k // 5) % 2)


def _movedim(lib, x, y, k):
    if x.ndim == 0:
        return x.movedim(0, 0) if k % 2 else x.movedim((), ())
    return x.movedim(_dim(x, k), _dim(x, k // 5))


def _unflatten(lib, x, y, k):
    if x.ndim == 0:
        return SKIPPED     # PyTorch: unflatten needs a dim
    d = _dim(x, k)
    shapes = _factorizations(x.shape[d]) if x.shape[d] else [(0,), (0, 1)]
    return x.unflatten(d, shapes[(k // 3) % len(shapes)])


def _inplace_shape(method):
    """transpose_, t_, squeeze_, unsqueeze_: change the tensor's own shape (and its history) in place. Not on a leaf
    that requires grad (possible under no_grad): PyTorch's gradient accumulator of that leaf keeps the shape it had
    when an op first used it, and a later gradient of the new shape is an error; minigrad accumulates any shape that
    adds up (a known difference, ``KNOWN_DIFFERENCES`` in test_fuzz_views.py)."""
    def statement(lib, x, y, k):
        if x.is_leaf and x.requires_grad:
            return SKIPPED
        if method == "transpose_":
            return x.transpose_(0, -1) if x.ndim else x.t_()
        if method == "t_":
            return x.t_() if x.ndim <= 2 else SKIPPED
        if method == "squeeze_":
            return x.squeeze_(_dim(x, k)) if x.ndim else x.squeeze_()
        return x.unsqueeze_(k % (x.ndim + 1))
    return statement


def _masked_fill_(lib, x, y, k):
    mask = np.random.default_rng(k).random(x.shape) < 0.5
    return x.masked_fill_(lib.tensor(mask), float(k % 5) - 2.0)


def _index_put_(lib, x, y, k):
    if x.ndim == 0 or x.shape[0] == 0:
        return SKIPPED
    rows = np.random.default_rng(k).integers(0, x.shape[0], size=1 + k % 2)
    rows = np.unique(rows)        # repeated positions: PyTorch leaves which write wins undefined
    value = y if y.numel() == 1 else y.sum()
    if _undefined_alias(x, value):
        return SKIPPED
    return x.index_put_((lib.tensor(rows),), value)


def _addcmul_(lib, x, y, k):
    operand = y if _broadcasts_into(y.shape, x.shape) else y.sum()
    if _undefined_alias(x, operand):
        return SKIPPED
    return x.addcmul_(operand, operand, value=0.5)


def _lerp_(lib, x, y, k):
    operand = y if _broadcasts_into(y.shape, x.shape) else y.sum()
    if _undefined_alias(x, operand):
        return SKIPPED
    return x.lerp_(operand, 0.25 + (k % 3) * 0.25)


def _rows(x, k, count=None):
    """Distinct positions along dim 0 of ``x`` (repeated ones would leave which write wins undefined)."""
    n = x.shape[0]
    count = 1 + k % 2 if count is None else count
    return np.unique(np.random.default_rng(k).integers(0, n, size=count))


def _index_op_(method):
    """index_add_, index_copy_, index_fill_ along dim 0 at distinct rows, the source made from ``y``."""
    def statement(lib, x, y, k):
        if x.ndim == 0 or x.shape[0] == 0:
            return SKIPPED
        rows = _rows(x, k)
        index = lib.tensor(rows)
        if method == "index_fill_":
            return x.index_fill_(0, index, float(k % 5) - 2.0)
        source = y.sum() * _constant(lib, (len(rows),) + tuple(x.shape[1:]), k)
        if _undefined_alias(x, source):
            return SKIPPED
        return getattr(x, method)(0, index, source)
    return statement


def _scatter_(method):
    """scatter_ / scatter_add_ along dim 0 with distinct rows per column, the source made from ``y``."""
    def statement(lib, x, y, k):
        if x.ndim == 0 or x.shape[0] == 0:
            return SKIPPED
        rng = np.random.default_rng(k)
        index = np.stack([rng.permutation(x.shape[0]) for _ in range(int(np.prod(x.shape[1:], dtype=int)))], -1)
        index = index.reshape(x.shape)[:1 + k % x.shape[0]]
        source = y.sum() * _constant(lib, index.shape, k)
        if _undefined_alias(x, source):
            return SKIPPED
        return getattr(x, method)(0, lib.tensor(index), source)
    return statement


def _masked_scatter_(lib, x, y, k):
    mask = np.random.default_rng(k).random(x.shape) < 0.5
    source = y.sum() * _constant(lib, x.shape, k)
    if _undefined_alias(x, source):
        return SKIPPED
    return x.masked_scatter_(lib.tensor(mask), source)


def _index_select(lib, x, y, k):
    if x.ndim == 0:
        return SKIPPED
    d = _dim(x, k)
    n = x.shape[d]
    rows = np.random.default_rng(k).integers(0, n, size=1 + k % 3) if n else np.zeros(0, np.int64)
    return x.index_select(d, lib.tensor(rows.astype(np.int64)))


# Ops whose backward reads what they saved (inputs, outputs, statistics), so a later write into a saved tensor must
# make backward refuse, and whose second derivatives are not constant: the norms, and a few others.
NORM_EPS = 0.1
"""The norms' eps: large, so a row made constant by fill_ or zero_ (variance 0) gives 1/sqrt(eps) ~ 3, not ~316,
and the libraries' last-bit differences stay far below the comparison's tolerance in a double backward."""


def _affine(y, count, k):
    """(weight, bias) of a norm over ``count`` features: ``y`` as the weight when bit 0 of ``k`` is set and its shape
    fits, and as the bias too when bit 1 is. Never a bias without a weight: PyTorch 2.13 fails that norm's backward
    (group_norm: "tensor does not have a device") or double backward (layer, batch, instance norm: "Expected a
    proper Tensor but got None")."""
    weight = y if k & 1 and tuple(y.shape) == (count,) else None
    return weight, weight if (k >> 1) & 1 else None


def _row_norm(name):
    """layer_norm / rms_norm over the last dim, with ``y`` as the weight (and bias) when it fits (``_affine``)."""
    def statement(lib, x, y, k):
        if x.ndim == 0:
            return SKIPPED     # both refuse a 0-d input, each with an error of its own
        F, d = lib.nn.functional, x.shape[-1]
        w, b = _affine(y, d, k)
        if name == "rms_norm":
            return F.rms_norm(x, (d,), w, eps=NORM_EPS)
        return F.layer_norm(x, (d,), w, b, eps=NORM_EPS)
    return statement


def _channel_norm(name):
    """group_norm (a group count dividing the channels), batch_norm (training, no running statistics) and
    instance_norm over dim 1, with ``y`` as the weight (and bias) when it fits."""
    def statement(lib, x, y, k):
        if x.ndim < 2 or x.shape[1] == 0:
            return SKIPPED
        F, c = lib.nn.functional, x.shape[1]
        w, b = _affine(y, c, k)
        if name == "group_norm":
            if x.numel() == 0:   # under create_graph PyTorch's weight gradient is NaN here, minigrad's 0 (listed)
                return SKIPPED
            groups = [g for g in range(1, c + 1) if c % g == 0]
            return F.group_norm(x, groups[(k // 4) % len(groups)], w, b, eps=NORM_EPS)
        if name == "batch_norm":
            return F.batch_norm(x, None, None, w, b, training=True, eps=NORM_EPS)
        return F.instance_norm(x, weight=w, bias=b, eps=NORM_EPS)
    return statement


def _norm(lib, x, y, k):
    if not np.abs(x.detach().numpy()).max(initial=0) > 1e-8:   # (not exact: the libraries' roundings may differ)
        return SKIPPED     # a zero vector: the norm's second derivative there is NaN in PyTorch, 0 in minigrad (listed)
    return x.norm()


def _matmul(lib, x, y, k):
    if x.ndim == 0:
        return SKIPPED
    return x @ x.mT if x.ndim >= 2 else x @ x


def _stack(lib, x, y, k):
    if tuple(x.shape) != tuple(y.shape):
        return lib.cat([x, x]) if x.ndim else lib.stack([x, x])
    return lib.stack([x, y], _dim(x, k) if x.ndim else 0)


def _reduction(method):
    """prod, amax, var, softmax, log_softmax, logsumexp along a dim (over everything for a 0-d tensor)."""
    def statement(lib, x, y, k):
        d = _dim(x, k)
        if method in ("softmax", "log_softmax"):
            return getattr(x, method)(d)
        if method == "var":
            return x.var(d, correction=k % 2) if x.ndim else SKIPPED    # PyTorch refuses var of a 0-d along dim 0
        if method == "amax":
            return x.amax(d) if x.ndim and x.shape[d] else SKIPPED      # both refuse an empty max, errors differ
        return getattr(x, method)(d)
    return statement


STATEMENTS = {
    # views
    "view": _view,
    "reshape": _reshape,
    "t": lambda lib, x, y, k: x.t(),
    "transpose": lambda lib, x, y, k: x.transpose(0, -1) if x.ndim else x.t(),
    "permute": _permute,
    "unsqueeze": lambda lib, x, y, k: x.unsqueeze(k % (x.ndim + 1)),
    "squeeze": lambda lib, x, y, k: x.squeeze() if k % 2 else x.squeeze(_dim(x, k)) if x.ndim else x.squeeze(),
    "expand": _expand,
    "narrow": _narrow,
    "select": _select,
    "diagonal": _diagonal,
    "index": lambda lib, x, y, k: x[_slice_index(x, k)],
    "piece": _piece,
    "flatten": lambda lib, x, y, k: x.flatten(),
    "view_as_self": lambda lib, x, y, k: x.view_as(x),
    "detach": lambda lib, x, y, k: x.detach(),
    "data": lambda lib, x, y, k: x.data,
    "contiguous": lambda lib, x, y, k: x.contiguous(),
    "index_select": _index_select,
    "cumsum": lambda lib, x, y, k: x.cumsum(_dim(x, k)) if x.ndim else x.cumsum(0),
    "unfold": _unfold,
    "movedim": _movedim,
    "unflatten": _unflatten,
    "mT": lambda lib, x, y, k: x.mT if x.ndim >= 2 else SKIPPED,
    "expand_as": lambda lib, x, y, k: x.expand_as(y) if _broadcasts_into(x.shape, y.shape) else SKIPPED,
    # out of place
    "mul_const": lambda lib, x, y, k: x * _constant(lib, x.shape, k),
    "times_one": lambda lib, x, y, k: x * 1,
    "binary": _binary,
    "tanh": lambda lib, x, y, k: x.tanh(),
    "clone": lambda lib, x, y, k: x.clone(),
    "sum_dim": lambda lib, x, y, k: x.sum(_dim(x, k), keepdim=bool(k % 2)) if x.ndim else x.sum(),
    "layer_norm": _row_norm("layer_norm"),
    "rms_norm": _row_norm("rms_norm"),
    "group_norm": _channel_norm("group_norm"),
    "batch_norm": _channel_norm("batch_norm"),
    "instance_norm": _channel_norm("instance_norm"),
    "matmul": _matmul,
    "stack": _stack,
    "pow3": lambda lib, x, y, k: x.pow(3),
    "exp": lambda lib, x, y, k: x.exp(),
    "norm": _norm,
    "prod": _reduction("prod"),
    "amax": _reduction("amax"),
    "var": _reduction("var"),
    "softmax": _reduction("softmax"),
    "log_softmax": _reduction("log_softmax"),
    "logsumexp": _reduction("logsumexp"),
    # in place
    "mul_number_": lambda lib, x, y, k: x.mul_(1.5 + k % 3),
    "data_mul_": lambda lib, x, y, k: x.data.mul_(1.5 + k % 3),
    "add_": _inplace_binary("add_", lambda y: y.sum()),
    "mul_": _inplace_binary("mul_", lambda y: y.sum() * 0.5),
    "copy_": _inplace_binary("copy_", lambda y: y.sum()),
    "fill_": lambda lib, x, y, k: x.fill_(float(k % 5) - 2.0),
    "zero_": lambda lib, x, y, k: x.zero_(),
    "clamp_": lambda lib, x, y, k: x.clamp_(-0.5, 0.5),
    "tanh_": lambda lib, x, y, k: x.tanh_(),
    "exp_": lambda lib, x, y, k: x.exp_(),
    "sigmoid_": lambda lib, x, y, k: x.sigmoid_(),
    "pow_": lambda lib, x, y, k: x.pow_(2),
    "relu_": lambda lib, x, y, k: x.relu_(),
    "sub_": _inplace_binary("sub_", lambda y: y.sum()),
    "addcmul_": _addcmul_,
    "lerp_": _lerp_,
    "masked_fill_": _masked_fill_,
    "index_put_": _index_put_,
    "index_add_": _index_op_("index_add_"),
    "index_copy_": _index_op_("index_copy_"),
    "index_fill_": _index_op_("index_fill_"),
    "scatter_": _scatter_("scatter_"),
    "scatter_add_": _scatter_("scatter_add_"),
    "masked_scatter_": _masked_scatter_,
    "div_": lambda lib, x, y, k: x.div_(2.5 + k % 3),
    "neg_": lambda lib, x, y, k: x.neg_(),
    "sin_": lambda lib, x, y, k: x.sin_(),
    "cos_": lambda lib, x, y, k: x.cos_(),
    "abs_": lambda lib, x, y, k: x.abs_(),
    "clamp_min_": lambda lib, x, y, k: x.clamp_min_(-0.25),
    "squeeze_all_": lambda lib, x, y, k: x.squeeze_() if not (x.is_leaf and x.requires_grad) else SKIPPED,
    "transpose_": _inplace_shape("transpose_"),
    "t_": _inplace_shape("t_"),
    "squeeze_": _inplace_shape("squeeze_"),
    "unsqueeze_": _inplace_shape("unsqueeze_"),
    "setitem_number": _setitem_number,
    "setitem_tensor": _setitem_tensor,
    "requires_grad_": lambda lib, x, y, k: x.requires_grad_(),
    "detach_": lambda lib, x, y, k: x.detach_() if x.grad_fn is None else SKIPPED,
    # (detach_() of a non-leaf: PyTorch refuses to use it later where an op saved it, "Trying to use a saved tensor
    # that has been detached in-place"; minigrad's ops save arrays, not tensors, and cannot tell: not compared)
    # autograd state
    "hook": _hook,
    "retain_grad": _retain,
}
NAMES = sorted(STATEMENTS)


# --------------------------------------------------------------------------- running
class Stop(Exception):
    """The program stopped at a statement that raised."""


def _state(lib, t):
    """What is compared of a tensor: shape, dtype name, values, requires_grad, is_leaf (or the error reading it)."""
    try:
        leaf = t.is_leaf
    except Exception as error:     # PyTorch refuses to read the grad_fn of some stale views
        leaf = type(error).__name__
    return (tuple(t.shape), str(t.dtype).rpartition(".")[2], t.detach().numpy().copy(), t.requires_grad, leaf)


def run(lib, program, create_graph=False, loss_seed=0, trace=None):
    """Run ``program`` with ``lib`` (``torch`` or ``minigrad``); returns the list of observations. ``trace``, a
    list, receives one line of Python per statement, with the tensors it used and made."""
    env = [lib.tensor(np.random.default_rng(1).standard_normal(SHAPE_A), requires_grad=True),
           lib.tensor(np.random.default_rng(2).standard_normal(SHAPE_W), requires_grad=True),
           lib.tensor(np.random.default_rng(3).standard_normal(SHAPE_V))]
    leaves = list(env[:2])
    seen = []
    untracked_writes = any(statement[0] in UNTRACKED_WRITES for statement in program)
    for step, (op, i, j, k, no_grad) in enumerate(program):
        x, y = env[i % len(env)], env[j % len(env)]
        line = f"{'with no_grad(): ' if no_grad else ''}{op}(t{i % len(env)}, t{j % len(env)}, k={k})"
        if op in READ_MODIFY_WRITE and _windows_overlap(x):
            # an in-place op that reads what it writes, into overlapping windows (unfold): PyTorch computes the
            # elements in turn, so a shared one is updated twice, in an order it leaves undefined; not compared
            seen.append((step, SKIPPED))
            _note(trace, f"# skipped: {line}")
            continue
        if (op in NORMS or op == "norm") and untracked_writes:
            # a write through .data into what a norm saved: PyTorch's backward then combines the new values with
            # the old statistics, a gradient its documentation calls incorrect; minigrad's kernels recover the mean
            # from x (for float32 accuracy), so the two give different incorrect answers: not compared. The vector
            # norm saves its output: written to 0 that way, it meets the listed difference of the second derivative
            # at a zero norm (NaN in PyTorch, 0 in minigrad; seed 5,604,752)
            seen.append((step, SKIPPED))
            continue
        if create_graph and op == "requires_grad_":
            # a known difference: PyTorch's saved tensors are the tensors themselves, so one that comes to require
            # grad after an op saved it makes that op's create_graph gradient depend on it; minigrad saves arrays
            seen.append((step, SKIPPED))
            continue
        try:
            if no_grad:
                with lib.no_grad():
                    out = STATEMENTS[op](lib, x, y, k)
            else:
                out = STATEMENTS[op](lib, x, y, k)
        except Exception as error:
            if "INTERNAL ASSERT FAILED" in str(error):      # a bug of PyTorch's own: nothing to compare with
                return [PYTORCH_BUG]
            seen.append((step, "raised", type(error).__name__))
            _note(trace, f"{line}  # raises {type(error).__name__}")
            return seen
        if out is None or out is SKIPPED:
            seen.append((step, "none" if out is None else SKIPPED))
            _note(trace, line if out is None else f"# skipped: {line}")
            continue
        same = out is x
        _note(trace, line if same else f"t{len(env)} = {line}".replace("= with no_grad(): ", "= (no_grad) "))
        seen.append((step, "same" if same else "new", _state(lib, out)))
        if op == "requires_grad_":
            leaves.append(out)
        if not same:
            env.append(out)
    seen.append(("values", [t.detach().numpy().copy() for t in env]))
    try:
        seen.extend(_backward(lib, env, leaves, create_graph, loss_seed))
    except Exception as error:
        if "INTERNAL ASSERT FAILED" in str(error):          # a bug of PyTorch's own, in its backward this time
            return [PYTORCH_BUG]
        seen.append(("backward raised", type(error).__name__))
    return seen


def _values(t):
    """``t``'s values as an ndarray. PyTorch's gradients may be a ZeroTensor, which ``numpy()`` refuses and which has
    no memory behind it: ``numpy(force=True)`` of one read from a null pointer and crashed the fuzzer now and then
    (a segmentation fault in libc), so its zeros are made here."""
    if getattr(t, "_is_zerotensor", lambda: False)():
        return t.detach().new_zeros(t.shape).numpy()
    try:
        return t.detach().numpy().copy()
    except RuntimeError:
        return t.detach().numpy(force=True).copy()


def _note(trace, line):
    if trace is not None:
        trace.append(line)


def _backward(lib, env, leaves, create_graph, seed):
    terms = [(t * _constant(lib, t.shape, seed + n)).sum() for n, t in enumerate(env)
             if t.requires_grad and t.is_floating_point()]
    if not terms:
        return [("no loss",)]
    loss = terms[0]
    for term in terms[1:]:
        loss = loss + term
    if create_graph:
        wanted = [t for t in leaves if t.requires_grad]
        grads = lib.autograd.grad(loss, wanted, create_graph=True, allow_unused=True)
        second = [(g * _constant(lib, g.shape, seed + 100 + n)).sum() for n, g in enumerate(grads)
                  if g is not None and g.requires_grad]
        if not second:
            return [("first order only", [None if g is None else _values(g) for g in grads])]
        total = second[0]
        for s in second[1:]:
            total = total + s
        total.backward()
    else:
        loss.backward()
    out = []
    for n, t in enumerate(env):
        keeps = t.is_leaf or t.retains_grad
        out.append(("grad", n, None if not keeps or t.grad is None else _values(t.grad)))
    return out


def differences(torch, mg, program, create_graph=False, rtol=1e-9, atol=1e-9):
    """The first place where minigrad's run of ``program`` differs from PyTorch's, as a string, or None."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = run(torch, program, create_graph)
        if want == [PYTORCH_BUG]:
            return None
        got = run(mg, program, create_graph)
    for w, g in zip(want, got):
        problem = _compare(w, g, rtol, atol)
        if problem:
            return f"{problem}\n  PyTorch:  {_short(w)}\n  minigrad: {_short(g)}"
    if len(want) != len(got):
        return f"PyTorch made {len(want)} observations, minigrad {len(got)}: {_short(want[-1])} / {_short(got[-1])}"
    return None


def _compare(w, g, rtol, atol):
    if type(w) is not type(g):
        return "different kinds"
    if isinstance(w, np.ndarray):
        if w.shape != g.shape:
            return f"shapes {w.shape} / {g.shape}"
        if w.dtype.kind in "fc":
            if not np.allclose(w, g, rtol=rtol, atol=atol, equal_nan=True):
                return "values differ"
        elif not np.array_equal(w, g):
            return "values differ"
        return None
    if isinstance(w, (list, tuple)):
        if len(w) != len(g):
            return f"lengths {len(w)} / {len(g)}"
        for a, b in zip(w, g):
            problem = _compare(a, b, rtol, atol)
            if problem:
                return problem
        return None
    if w != g:
        return f"{w!r} / {g!r}"
    return None


def _short(obs):
    text = repr(obs)
    return text if len(text) < 400 else text[:400] + "..."


# --------------------------------------------------------------------------- making and printing programs
def random_program(rng, length=None):
    """A random program (for seeded batches; hypothesis draws its own)."""
    length = int(rng.integers(1, 9)) if length is None else length
    return [(NAMES[int(rng.integers(len(NAMES)))], int(rng.integers(64)), int(rng.integers(64)),
             int(rng.integers(1 << 16)), bool(rng.random() < 0.15)) for _ in range(length)]


def describe(program, create_graph=False):
    """The program as Python-like lines (``t3 = view(t0, t2, k=5)``, the tensors as minigrad ran them), with its
    starting tensors and the final backward."""
    import minigrad as mg
    trace = []
    run(mg, program, create_graph, trace=trace)
    lines = ["t0 = a (2, 3), leaf requiring grad; t1 = w (3,), leaf requiring grad; t2 = v0 (2, 3), plain"] + trace
    lines.append(f"backward of sum(t * R) over tensors requiring grad{' (create_graph, then again)' if create_graph else ''}")
    return "\n".join(lines)


def main(argv=None):
    """``python -m tests.view_fuzz --programs N --start S``: run N seeded programs against PyTorch (for long hunts
    beyond what CI runs) and print how many differ, with the first program of each kind of difference."""
    import argparse
    import collections
    import torch
    import minigrad as mg
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--programs", type=int, default=10000)
    parser.add_argument("--start", type=int, default=100000, help="first seed (CI runs seeds 0-2999)")
    args = parser.parse_args(argv)
    kinds, first = collections.Counter(), {}
    for seed in range(args.start, args.start + args.programs):
        rng = np.random.default_rng(seed)
        program, create_graph = random_program(rng), bool(rng.random() < 0.2)
        problem = differences(torch, mg, program, create_graph)
        if problem:
            kind = problem.splitlines()[0]
            kinds[kind] += 1
            first.setdefault(kind, (seed, program, create_graph, problem))
    print(f"{args.programs} programs (seeds {args.start}-{args.start + args.programs - 1}): "
          f"{sum(kinds.values())} differ from PyTorch")
    for kind, count in kinds.most_common():
        seed, program, create_graph, problem = first[kind]
        print(f"\n{count} x {kind}; first at seed {seed}:\n{describe(program, create_graph)}\n{problem}")


if __name__ == "__main__":
    main()
