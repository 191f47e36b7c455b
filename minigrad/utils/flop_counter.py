"""``minigrad.utils.flop_counter``: count the floating-point operations of a forward and backward pass, by module.

    with FlopCounterMode(model, display=False) as counter:
        loss_fn(model(x), y).backward()
    counter.get_total_flops()          # all of them
    counter.get_flop_counts()          # {"Global": {"aten.addmm": ..., "aten.mm": ...}, "Net": {...}, "Net.fc1": {...}}
    print(counter.get_table(depth=2))  # the same, as a table

What is counted is what PyTorch counts: the matrix products (a multiply-add is 2 flops: ``(m, k) @ (k, n)`` is
``2*m*k*n``), convolutions (``conv_flop_count``) and attention's two products. Elementwise work, reductions and
normalization are not counted (they are cheap next to the products, and PyTorch leaves them out too). Each count
is filed under the ATen op PyTorch's CPU build runs for the same call, named as PyTorch prints it, so that the
tables of the two libraries read alike:

* ``matmul``, ``mm``, ``bmm``, ``@``: ``aten.mm`` when PyTorch folds the batch into the rows (a batched operand
  times a matrix), ``aten.bmm`` when it multiplies batch by batch, nothing for a product with a 1-D ``other``
  (PyTorch runs ``dot`` or ``mv``, which it does not count); ``addmm`` and ``baddbmm`` under their own names;
  ``linear`` with a bias ``aten.addmm``; ``einsum`` ``aten.bmm`` per pair of operands, left to right;
* convolutions and transposed convolutions: ``aten.convolution``, their backward ``aten.convolution_backward``;
* ``scaled_dot_product_attention``: ``aten.bmm``, its two products (PyTorch's CPU build decomposes it under a
  flop counter);
* the backward of a product: one product per input that needs a gradient (``aten.mm`` or ``aten.bmm``).

How: minigrad's ops all enter through ``Function.apply`` and their backward through ``engine.run_node``; the
counter listens to both while it is active (``profiler._recorder.add_listener``: nothing is wrapped otherwise),
and reads the shapes. Which module an op belongs to comes from ``utils.module_tracker.ModuleTracker``. Only the
thread that entered the counter is counted, as PyTorch's counting mode is per thread.
"""
import functools
import math
import sys
import threading
from collections import defaultdict

from ..autograd import Function
from ..profiler import _recorder
from ..tensor import Tensor
from ._pytree import tree_flatten, tree_map, tree_unflatten
from .module_tracker import ModuleTracker

__all__ = ["FlopCounterMode", "register_flop_formula"]

suffixes = ["", "K", "M", "B", "T"]
_PYTREE = (tree_flatten, tree_map, tree_unflatten)   # importable from here, as from PyTorch's module


# --------------------------------------------------------------------------- the formulas (PyTorch's, on shapes)
def get_shape(i):
    return i.shape if isinstance(i, Tensor) else i


def shape_wrapper(formula):
    """``formula`` called with the shapes of the tensors it is given (and ``out_shape``), as PyTorch's are."""
    def on_shapes(*args, out_val=None, **kwargs):
        shapes = [get_shape(a) for a in args]
        return formula(*shapes, out_shape=get_shape(out_val), **{k: get_shape(v) for k, v in kwargs.items()})
    return functools.update_wrapper(on_shapes, formula)      # (its __wrapped__: the formula on shapes)


@shape_wrapper
def mm_flop(a_shape, b_shape, *args, out_shape=None, **kwargs):
    """(m, k) @ (k, n): m*n dot products of length k, 2 flops per term."""
    m, k = a_shape
    k2, n = b_shape
    if k != k2:
        raise AssertionError(f"mm_flop: inner dimensions differ: {k} and {k2}")
    return 2 * m * n * k


@shape_wrapper
def addmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs):
    """The product only (the added matrix is not counted)."""
    return mm_flop(a_shape, b_shape)


@shape_wrapper
def bmm_flop(a_shape, b_shape, out_shape=None, **kwargs):
    """(b, m, k) @ (b, k, n): b products of (m, k) @ (k, n)."""
    b, m, k = a_shape
    b2, k2, n = b_shape
    if b != b2 or k != k2:
        raise AssertionError(f"bmm_flop: shapes do not fit: {list(a_shape)} and {list(b_shape)}")
    return 2 * b * m * n * k


@shape_wrapper
def baddbmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs):
    return bmm_flop(a_shape, b_shape)


def conv_flop_count(x_shape, w_shape, out_shape, transposed=False):
    """A convolution's flops: for every output position (every input position, transposed) and sample, each
    (output channel, input channel of its group) pair multiplies a kernel's worth of values: 2 flops per term.
    Bias and padding are not counted (PyTorch's rule)."""
    batch_size = x_shape[0]
    positions = (x_shape if transposed else out_shape)[2:]
    c_out, c_in, *kernel = w_shape
    return 2 * math.prod(positions) * math.prod(kernel) * batch_size * c_out * c_in


@shape_wrapper
def conv_flop(x_shape, w_shape, _bias, _stride, _padding, _dilation, transposed, *args, out_shape=None, **kwargs):
    return conv_flop_count(x_shape, w_shape, out_shape, transposed=transposed)


def _swap_batch_and_channels(shape):
    return [shape[1], shape[0]] + list(shape[2:])


@shape_wrapper
def conv_backward_flop(grad_out_shape, x_shape, w_shape, _bias, _stride, _padding, _dilation, transposed,
                       _output_padding, _groups, output_mask, out_shape):
    """A convolution's backward: the input's gradient is the transposed convolution of the output's gradient
    with the weight (and the convolution, for a transposed one); the weight's gradient is a convolution of the
    input with the output's gradient, batch and channels swapped. ``output_mask``: which gradients are wanted."""
    flops = 0
    if output_mask[0]:
        flops += conv_flop_count(grad_out_shape, w_shape, get_shape(out_shape[0]), not transposed)
    if output_mask[1]:
        w_grad_shape = _swap_batch_and_channels(get_shape(out_shape[1]))
        if transposed:
            flops += conv_flop_count(_swap_batch_and_channels(grad_out_shape), _swap_batch_and_channels(x_shape),
                                     w_grad_shape)
        else:
            flops += conv_flop_count(_swap_batch_and_channels(x_shape), _swap_batch_and_channels(grad_out_shape),
                                     w_grad_shape)
    return flops


def sdpa_flop_count(query_shape, key_shape, value_shape):
    """Attention's two products: scores = q @ k^T, (b*h, L, E) @ (b*h, E, S), and out = scores @ v,
    (b*h, L, S) @ (b*h, S, Ev)."""
    *batch, L, E = query_shape
    S, Ev = key_shape[-2], value_shape[-1]
    bh = math.prod(batch)
    return bmm_flop((bh, L, E), (bh, E, S)) + bmm_flop((bh, L, S), (bh, S, Ev))


@shape_wrapper
def sdpa_flop(query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs):
    return sdpa_flop_count(query_shape, key_shape, value_shape)


def sdpa_backward_flop_count(grad_out_shape, query_shape, key_shape, value_shape):
    """Attention's backward as a fused (flash) kernel runs it, every input needing a gradient: the scores
    recomputed (q @ k^T), dp = dout @ v^T, dv = p^T @ dout, dq = ds @ k and dk = ds^T @ q: three products of the
    scores' size over E and two over Ev (PyTorch's formula; ``FlopCounterMode`` counts what minigrad runs)."""
    *batch, L, E = query_shape
    S, Ev = key_shape[-2], value_shape[-1]
    bh = math.prod(batch)
    return 3 * bmm_flop((bh, L, E), (bh, E, S)) + 2 * bmm_flop((bh, L, Ev), (bh, Ev, S))


@shape_wrapper
def sdpa_backward_flop(grad_out_shape, query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs):
    return sdpa_backward_flop_count(grad_out_shape, query_shape, key_shape, value_shape)


def normalize_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def get_suffix_str(number):
    """The unit a total is shown in: K, M, B or T, by its digits (1.01B shows as 1010M: one digit more is kept)."""
    return suffixes[max(0, min(len(suffixes) - 1, (len(str(number)) - 2) // 3))]


def convert_num_with_suffix(number, suffix):
    return f"{number / 1000 ** suffixes.index(suffix):.3f}{suffix}"


def convert_to_percent_str(num, denom):
    return "0%" if denom == 0 else f"{num / denom:.2%}"


# --------------------------------------------------------------------------- which ATen op PyTorch runs
def _should_fold(a, b):
    """PyTorch's matmul folds an N-D operand (N >= 3) times a 1-D or 2-D one into one 2-D product (``mm``,
    ``mv``) when the fold needs no copy, or when the smaller operand needs a gradient; otherwise it runs ``bmm``.
    ``a`` and ``b``: (shape, strides, requires_grad); a 2-D ``a`` is not folded unless ``b`` needs a gradient."""
    (sa, stra, rga), (sb, strb, rgb) = a, b
    a_larger = len(sa) >= len(sb)
    if a_larger:
        big_shape, big_strides, small_dims, small_rg = sa, stra, len(sb), rgb
    else:                                       # b^T is folded: its last two dimensions swapped
        big_shape = sb[:-2] + (sb[-1], sb[-2])
        big_strides = None if strb is None else strb[:-2] + (strb[-1], strb[-2])
        small_dims, small_rg = len(sa), rga
    if not (len(big_shape) >= 3 and small_dims <= 2):
        return False
    if small_rg:
        return True
    if len(sa) == 2:
        return False
    if math.prod(big_shape) == 0 or big_strides is None:      # (None: taken to be contiguous)
        return True
    if not big_strides:                                         # (): known not to fold without a copy
        return False
    return all(big_strides[i] == big_strides[i + 1] * big_shape[i + 1] for i in range(len(big_shape) - 2))


def _product_name(a, b):
    """The ATen product PyTorch's ``matmul`` runs for operands ``a``, ``b`` (as in ``_should_fold``), or None
    when it runs one it does not count (``dot``, ``mv``)."""
    da, db = len(a[0]), len(b[0])
    if db == 1 and da <= 2:
        return None                             # dot, mv
    if db == 2 and da <= 2:
        return "aten.mm"                        # (a 1-D a is a row)
    if _should_fold(a, b):
        smaller_dims = db if da >= db else da
        return None if smaller_dims == 1 else "aten.mm"
    return "aten.bmm"


def _operand(t):
    return tuple(t.shape), tuple(t.stride()), t.requires_grad


# --------------------------------------------------------------------------- einsum, pair by pair
def _einsum_labels(inputs, output, shapes):
    """Each operand's dimensions as labels (the ellipsis' dimensions become labels 0, 1, ... aligned at the right,
    as they broadcast), the output's, and each label's size."""
    ellipsis = max((len(shape) - (len(s) - 1) for s, shape in zip(inputs, shapes) if "." in s), default=0)

    def expand(s, ndim):
        if "." not in s:
            return list(s)
        at = s.index(".")
        n = ndim - (len(s) - 1)
        return list(s[:at]) + list(range(ellipsis - n, ellipsis)) + list(s[at + 1:])

    labels = [expand(s, len(shape)) for s, shape in zip(inputs, shapes)]
    sizes = {}
    for ls, shape in zip(labels, shapes):
        for label, size in zip(ls, shape):
            sizes[label] = max(sizes.get(label, 1), size)
    return labels, expand(output, len(output) - 1 + ellipsis), sizes


def _einsum_pairs(inputs, output, shapes, needs):
    """PyTorch's einsum without opt_einsum: the operands are contracted left to right, each pair by one ``bmm``
    (batch: labels both keep; rows, columns: labels only one keeps; inner: labels both have and nothing later
    needs). Yields (flops of the pair's bmm, needs of its two operands): 0 for a pair with no inner label."""
    labels, out, sizes = _einsum_labels(inputs, output, shapes)
    left, left_needs = set(labels[0]), needs[0]
    for i in range(1, len(labels)):
        right = set(labels[i])
        later = set(out).union(*labels[i + 1:])
        left &= right | later                   # what one operand alone has and nothing needs is summed first
        right &= left | later
        kept = (left | right) & later
        inner = (left & right) - later
        if not inner:                           # nothing summed: PyTorch multiplies elementwise (not counted)
            yield 0, (left_needs, needs[i])
        else:
            yield 2 * math.prod(sizes[x] for x in kept) * math.prod(sizes[x] for x in inner), (left_needs, needs[i])
        left, left_needs = kept, left_needs or needs[i]


# --------------------------------------------------------------------------- what each Function counts
def _caller_product():
    """``addmm``, ``baddbmm`` and ``addbmm`` reach ``MatMul`` through ``mm``/``bmm``; PyTorch names the fused op
    (and does not count ``addbmm``). The caller is read off the stack, only while a counter is active."""
    frame = sys._getframe(3)
    for _ in range(16):
        if frame is None:
            break
        name = frame.f_code.co_name
        if name in ("addmm", "baddbmm", "addbmm") and frame.f_code.co_filename.endswith("products.py"):
            return name
        frame = frame.f_back
    return None


def _matmul_forward(args, kwargs, out):
    a, b = args[:2]
    name = _product_name(_operand(a), _operand(b))
    if out.grad_fn is not None:
        out.grad_fn.product = name              # the backward's products are of this kind
    caller = _caller_product()
    if caller is not None:
        name = None if caller == "addbmm" else f"aten.{caller}"
    return name, 2 * math.prod(out.shape) * a.shape[-1]


def _matmul_backward(node, grad_shape):
    """One product per input that needs a gradient, of the kind the forward ran (``addmm``'s are ``mm``); for a
    forward run before the counter started, the kind PyTorch runs for contiguous operands."""
    sa, sb = node.shapes
    needs = node.needs_input_grad[:2]
    name = node.__dict__.get("product") or _product_name((tuple(sa), None, needs[0]), (tuple(sb), None, needs[1]))
    return name, 2 * math.prod(grad_shape) * sa[-1] * sum(needs)


def _linear_name(x_shape, x_contiguous, x_needs, w_shape, w_needs, bias_dims):
    """PyTorch's ``linear`` runs ``addmm`` for a bias and a 2-D input, or a contiguous input that is 3-D or has a
    1-D bias (the batch flattened into rows); otherwise ``matmul(input, weight.T)`` (and adds the bias)."""
    if bias_dims is not None and (len(x_shape) == 2 or (x_contiguous and (len(x_shape) == 3 or bias_dims == 1))):
        return "aten.addmm"
    return _product_name((tuple(x_shape), None if x_contiguous else (), x_needs), ((w_shape[1], w_shape[0]), None,
                                                                                   w_needs))


def _linear_forward(args, kwargs, out):
    x, w, bias = args[:3]
    name = _linear_name(x.shape, x.is_contiguous(), x.requires_grad, w.shape, w.requires_grad,
                        None if bias is None else bias.ndim)
    if out.grad_fn is not None:                 # the backward's products: addmm's are mm
        out.grad_fn.product = "aten.mm" if name == "aten.addmm" else name
    return name, 2 * math.prod(out.shape) * x.shape[-1]


def _linear_backward(node, grad_shape):
    """The backward of ``addmm``, or of the product: one ``mm`` (``bmm``) per input that needs a gradient."""
    products = node.needs_input_grad[0] + node.needs_input_grad[1]       # (none when only the bias needs one)
    name = node.__dict__.get("product", "aten.mm") if products else None
    return name, 2 * math.prod(grad_shape) * node.x_shape[-1] * products


def _conv_forward(transposed):
    def count(args, kwargs, out):
        return "aten.convolution", conv_flop_count(args[0].shape, args[1].shape, out.shape, transposed)
    return count


def _conv_backward(transposed):
    def count(node, grad_shape):
        sx, sw = node.shapes
        return "aten.convolution_backward", conv_backward_flop.__wrapped__(
            grad_shape, sx, sw, None, None, None, None, transposed, None, None, node.needs_input_grad, [sx, sw])
    return count


def _conv_weight_flops(x_shape, y_shape, w_shape):
    return conv_flop_count(_swap_batch_and_channels(x_shape), _swap_batch_and_channels(y_shape),
                           _swap_batch_and_channels(w_shape))


def _conv_weight_forward(args, kwargs, out):
    """The weight gradient as an op of its own (create_graph=True): a convolution, batch and channels swapped."""
    return "aten.convolution", _conv_weight_flops(args[0].shape, args[1].shape, out.shape)


def _conv_weight_backward(node, grad_shape):
    """Its backward: one convolution of the same size per operand that needs a gradient (PyTorch's double
    backward of a convolution computes them as convolutions)."""
    needs = node.needs_input_grad
    return "aten.convolution", _conv_weight_flops(*node.shapes, grad_shape) * (needs[0] + needs[1])


def _attention_forward(args, kwargs, out):
    q, k, v = args[:3]
    return "aten.bmm", sdpa_flop_count(q.shape, k.shape, v.shape)


def _attention_backward(node, grad_shape):
    """The backward of scores = q @ k^T and out = p @ v: each product gives one product per operand that needs
    a gradient (p needs one when q or k does)."""
    sq, sk, sv = node.shapes
    nq, nk, nv = node.needs_input_grad[:3]
    *batch, L, E = sq
    bh, S, Ev = math.prod(batch), sk[-2], sv[-1]
    scores, values = bmm_flop((bh, L, E), (bh, E, S)), bmm_flop((bh, L, S), (bh, S, Ev))
    return "aten.bmm", values * ((nq or nk) + nv) + scores * (nq + nk)


def _einsum_forward(args, kwargs, out):
    shapes = [t.shape for t in args]
    needs = [t.requires_grad for t in args]
    flops = sum(f for f, _ in _einsum_pairs(kwargs["inputs"], kwargs["output"], shapes, needs))
    return ("aten.bmm" if flops else None), flops


def _einsum_backward(node, grad_shape):
    pairs = _einsum_pairs(node.inputs, node.output, node.shapes, node.needs_input_grad)
    flops = sum(f * (a + b) for f, (a, b) in pairs)
    return ("aten.bmm" if flops else None), flops


def _recurrent_forward(args, kwargs, out):
    """PyTorch's recurrent layers (its CPU composite): the input projection of all steps at once (``linear``, so
    ``addmm`` for a contiguous input with a bias, else ``mm``), then per step the state's projection (``addmm``,
    ``mm`` without bias) and, for an LSTM with ``proj_size``, the output projection (``mm``)."""
    x, w_hh, b_ih, b_hh, w_hr = args[0], args[4], args[5], args[6], args[7]
    (L, N, I), (G, P) = x.shape, w_hh.shape          # x (L, N, I), w_ih (G, I), w_hh (G, P), w_hr (P, H)
    counts = [("aten.addmm" if b_ih is not None and x.is_contiguous() else "aten.mm", 2 * L * N * I * G),
              ("aten.addmm" if b_hh is not None else "aten.mm", L * 2 * N * P * G)]
    if w_hr is not None:
        counts.append(("aten.mm", L * 2 * N * w_hr.shape[1] * P))
    return counts


def _recurrent_backward(node, grad_shape):
    """The backward of those products, per input that needs a gradient: every step's state needs one, the first
    step's only if h0 does; the output projection's input needs one unless only ``w_hr`` does."""
    from ..ops.recurrent import GATES
    L, N, P, H = node.shapes
    G, I = GATES[node.mode] * H, node.input_size
    needs = node.needs_input_grad
    state = 2 * N * P * G
    flops = (needs[0] + needs[3]) * 2 * L * N * I * G + (L * needs[4] + (L - 1) + needs[1]) * state
    if P != H:                                  # an LSTM with proj_size P < H
        flops += L * (any(needs[:7]) + needs[7]) * 2 * N * H * P
    return "aten.mm", flops


def _library_formulas():
    from ..ops.attention import Attention
    from ..ops.conv import Conv, ConvTranspose, ConvWeight
    from ..ops.linalg import Einsum, Linear, MatMul
    from ..ops.recurrent import RecurrentLayer
    forward = {MatMul: _matmul_forward, Linear: _linear_forward, Einsum: _einsum_forward,
               Conv: _conv_forward(False), ConvTranspose: _conv_forward(True), ConvWeight: _conv_weight_forward,
               Attention: _attention_forward, RecurrentLayer: _recurrent_forward}
    backward = {MatMul: _matmul_backward, Linear: _linear_backward, Einsum: _einsum_backward,
                Conv: _conv_backward(False), ConvTranspose: _conv_backward(True), ConvWeight: _conv_weight_backward,
                Attention: _attention_backward, RecurrentLayer: _recurrent_backward}
    return forward, backward


# --------------------------------------------------------------------------- user formulas
#: formulas registered for users' Functions: {Function subclass: formula(*input shapes, out_shape=...)}
flop_registry = {}


def _check_target(target):
    if not (isinstance(target, type) and issubclass(target, Function)):
        raise ValueError(f"register_flop_formula(targets): expected each target to be a minigrad.autograd.Function "
                         f"subclass (minigrad has no torch.ops.* operators: a custom op is a Function), got {target} "
                         f"which is of type {type(target)}")


def register_flop_formula(targets, get_raw=False):
    """Decorator: ``formula(*input_shapes, out_shape)`` gives the flops of each forward of the Function(s)
    ``targets``, counted under the Function's name. ``get_raw``: the formula takes the tensors themselves."""
    targets = list(targets) if isinstance(targets, (list, tuple)) else [targets]
    for target in targets:
        _check_target(target)

    def register(formula):
        wrapped = formula if get_raw else shape_wrapper(formula)
        wrapped._get_raw = True             # (the registry holds what to call on the tensors)
        for target in targets:
            if target in flop_registry:
                raise RuntimeError(f"duplicate registrations for {target}")
            flop_registry[target] = wrapped
        return wrapped
    return register


def _user_forward(formula, target):
    def count(args, kwargs, out):
        return target.__name__, formula(*args, out_val=out, **kwargs)
    return count


# --------------------------------------------------------------------------- for the profiler's with_flops
_library = []                    # [(forward, backward)] once built: the formulas of minigrad's own Functions


def _formulas():
    if not _library:
        _library.append(_library_formulas())
    return _library[0]


def _pairs(counts):
    """A formula's ``counts``, (op name, flops) or a list of them, as a list."""
    return counts if isinstance(counts, list) else [counts]


def _flops_of(counts):
    """The flops of a formula's ``counts``, less those PyTorch does not count (named None)."""
    return sum(flops for name, flops in _pairs(counts) if name is not None)


def op_flops(cls, args, kwargs, out):
    """The flops ``FlopCounterMode`` counts for one forward of the Function ``cls`` (0 for one it does not count):
    the profiler's ``with_flops``."""
    if not isinstance(out, Tensor):
        return 0
    formula = flop_registry.get(cls)
    count = _user_forward(formula, cls) if formula is not None else _formulas()[0].get(cls)
    return 0 if count is None else _flops_of(count(args, kwargs, out))


def _node_counts(backward, node, grad, graph):
    """A backward node's counts by the formulas ``backward``, taken before it runs (what it saved is still there);
    None without a formula, or under create_graph for a Function with a graph_backward (its ops count as they run)."""
    count = backward.get(node.fn)
    if count is None or (graph and getattr(node.fn, "graph_backward", None) is not None):
        return None
    return count(node, tuple(grad.shape))


def node_flops(node, grad, graph):
    """The flops ``FlopCounterMode`` counts for the backward ``node``, called before it runs: the profiler's
    ``with_flops``."""
    counts = _node_counts(_formulas()[1], node, grad, graph)
    return 0 if counts is None else _flops_of(counts)


# --------------------------------------------------------------------------- the counter
class FlopCounterMode:
    """Counts the flops of everything run inside ``with FlopCounterMode() as counter:``, forward and backward,
    per module (module docstring). ``display``: print the table (``get_table(depth)``) on leaving;
    ``custom_mapping``: formulas for users' Functions, ``{Function subclass: formula(*shapes, out_shape)}``;
    ``mods``: accepted and not needed (modules are found as they run)."""

    def __init__(self, mods=None, depth=2, display=True, custom_mapping=None):
        self.flop_counts = defaultdict(lambda: defaultdict(int))
        self.depth = depth
        self.display = display
        if mods is not None:
            import warnings
            warnings.warn("mods argument is not needed anymore, you can stop passing it", stacklevel=2)
        self._forward, self._backward = _library_formulas()
        formulas = dict(flop_registry)
        for target, formula in (custom_mapping or {}).items():
            _check_target(target)
            formulas[target] = formula if getattr(formula, "_get_raw", False) else shape_wrapper(formula)
        for target, formula in formulas.items():
            self._forward[target] = _user_forward(formula, target)
        self.mod_tracker = ModuleTracker()
        self._thread = None

    def get_total_flops(self):
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self):
        """{module name: {op: flops}}, "Global" holding every op."""
        return {name: dict(ops) for name, ops in self.flop_counts.items()}

    def get_table(self, depth=None):
        """The counts as PyTorch prints them: each module to ``depth`` levels, its total and its ops, in the unit
        of the global total; "Global" first when some flops are in no module."""
        depth = 999999 if depth is None and self.depth is None else (self.depth if depth is None else depth)
        total = self.get_total_flops()
        suffix = get_suffix_str(total)
        global_subsumed = False

        def rows_of(name, indent):
            nonlocal global_subsumed
            ops = self.flop_counts[name]
            flops = sum(ops.values())
            global_subsumed |= flops >= total
            pad = " " * indent
            rows = [[pad + name, convert_num_with_suffix(flops, suffix), convert_to_percent_str(flops, total)]]
            rows += [[pad + " - " + str(op), convert_num_with_suffix(n, suffix), convert_to_percent_str(n, total)]
                     for op, n in ops.items()]
            return rows

        rows = []
        for name in sorted(self.flop_counts):
            if name != "Global" and name.count(".") + 1 <= depth:
                rows += rows_of(name, name.count("."))
        if "Global" in self.flop_counts and not global_subsumed:
            rows = rows_of("Global", 0) + [[" " + row[0]] + row[1:] for row in rows]
        return _format_table(["Module", "FLOP", "% Total"], rows or [["Global", "0", "0%"]])

    def __enter__(self):
        self.flop_counts.clear()
        self._thread = threading.get_ident()
        self.mod_tracker.__enter__()
        _recorder.add_listener(self)
        return self

    def __exit__(self, *exc):
        _recorder.remove_listener(self)
        self.mod_tracker.__exit__()
        self._thread = None
        if self.display:
            print(self.get_table(self.depth))
        return False

    # the recorder's listener interface (profiler/_recorder.py)
    def op(self, cls, args, kwargs, out):
        count = self._forward.get(cls)
        if count is not None and threading.get_ident() == self._thread and isinstance(out, Tensor):
            self._add_all(count(args, kwargs, out))

    def node(self, node, grad, graph):
        """Before ``node`` runs (what it saved is still there): its count, added once it has run, when the
        modules its gradients leave and enter are known."""
        if threading.get_ident() != self._thread:
            return None
        counts = _node_counts(self._backward, node, grad, graph)
        return None if counts is None else lambda: self._add_all(counts)

    def _add_all(self, counts):
        """``counts``: (op name, flops), or a list of them."""
        for name, flops in _pairs(counts):
            self._add(name, flops)

    def _add(self, name, flops):
        if name is None:                        # a product PyTorch does not count, or none at all
            return
        for parent in set(self.mod_tracker.parents):
            self.flop_counts[parent][name] += flops


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def _format_table(header, rows):
    """A plain-text table in the layout of ``tabulate``'s "simple" format, which PyTorch's table uses: the first
    column left-aligned, the others right-aligned, two spaces apart, a rule of dashes under the header, each column
    at least two characters wider than its header; a column of plain numbers (a total under 10,000: no unit)
    printed as numbers (``12.000`` as ``12``). The modules are indented by depth, as PyTorch asks ``tabulate`` to
    keep them (its version 0.10 drops the indentation)."""
    columns = [[str(r[i]) for r in rows] for i in range(len(header))]
    for i in range(1, len(columns)):
        if all(_is_number(c) for c in columns[i]):
            columns[i] = [f"{float(c):g}" for c in columns[i]]
    widths = [max([len(h) + 2] + [len(c) for c in col]) for h, col in zip(header, columns)]

    def line(cells):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([line(header), "  ".join("-" * w for w in widths)] + [line(r) for r in zip(*columns)])
