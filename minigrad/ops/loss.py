"""Losses: cross_entropy (log_softmax and the negative log-likelihood fused in one Function), nll_loss,
mse_loss, l1/smooth_l1/huber, binary_cross_entropy (with logits) and kl_div (each below with its formulas).

Cross-entropy at one position i (a row of logits z_i over C classes, p_i = softmax(z_i)) is

    loss_i = -sum_c q_ic log p_ic

with class weights q_i: for a class-index target t_i, q_ic = (1 - eps) w_t [c == t_i] + (eps / C) w_c
(label smoothing eps, class weights w, q_i = 0 where t_i == ignore_index); for class-probability targets,
q_ic = w_c ((1 - eps) target_ic + eps / C). Since sum_c p_ic = 1, its gradient is

    dloss_i / dz_i = (sum_c q_ic) p_i - q_i          (= p_i - onehot(t_i) without weights or smoothing)

'mean' divides by the total weight of the non-ignored targets, sum_i w_{t_i} (their count without
weights; all ignored gives 0/0 = nan, as PyTorch), or by the number of positions for probabilities.
"""
import warnings

import numpy as np

from .._checks import refuses_complex, takes_tensors
from ..autograd import Function
from ..autograd.version import writes, writes_since
from ..autograd.function import pytorch_saves
from ..dtypes import can_cast, cast_refused, kind_of, result_type, scalar_type_name
from ..tensor import Tensor
from .activation import softplus
from .elementwise import (ConstantSlope, as_tensor_operand, cast, check_broadcast, clamp_min, depending_on_input,
                          sign_array, square, sub)
from .reduce import Sum
from .softmax import LogSoftmax, Softmax, shifted_exp
from .special import xlogy
from ..autocast_ops import autocast_op

_REDUCTIONS = ("none", "mean", "sum")


def check_reduction(reduction, alias=True):
    """``reduction`` checked and returned, as the losses PyTorch computes in C++ take it (its _Reduction.get_enum):
    'elementwise_mean' is a deprecated name of 'mean', with PyTorch's warning, unless ``alias`` is False (the
    losses PyTorch writes in Python, which refuse it)."""
    if reduction == "elementwise_mean" and alias:
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.", stacklevel=3)
        return "mean"
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce_positions(loss, reduction, normaliser):
    """Per-position losses (ndarray) reduced: as they are, summed, or summed / ``normaliser`` ('mean')."""
    if reduction == "none":
        return loss
    out = np.sum(loss)
    if reduction == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):  # everything ignored: nan, as PyTorch
            out = out / normaliser
    return np.asarray(out, dtype=loss.dtype)


def _upstream_per_position(g, reduction, normaliser, axis):
    """The upstream gradient of ``_reduce_positions`` as seen by each position, broadcastable along the
    class ``axis``: dout itself ('none'), dout ('sum') or dout / normaliser ('mean', 0 if nothing counted).
    An ndarray, or a Tensor under create_graph."""
    if reduction == "none":
        return g.reshape(g.shape[:axis] + (1,) + g.shape[axis:])
    if reduction == "mean":
        return g / normaliser if normaliser else 0 * g
    return g


def _scatter(shape, idx, values, axis, dtype):
    """Zeros of ``shape`` with ``values`` (broadcast to idx's shape) at the class indices ``idx`` (N, 1, *d)
    along the class ``axis``: a gradient that reaches the target classes only."""
    out = np.zeros(shape, dtype=dtype)
    np.put_along_axis(out, idx, values, axis)
    return out


# --------------------------------------------------------------------------- cross_entropy
class CrossEntropy(Function):
    """Fused log_softmax + negative log-likelihood; backward = ((sum_c q) softmax - q) * dout / normaliser.

    Positions are all axes but the class axis (1, or 0 for an unbatched (C,) input). For class indices
    q is never materialised: a_i = (1 - eps) w_{t_i} is the target class's share and b_i = eps / C the
    smoothing share (times w_c), both zero at ignored positions.
    """

    @staticmethod
    def forward(ctx, logits, target, weight, ignore_index, reduction, label_smoothing):
        axis = 1 if logits.ndim > 1 else 0                     # the class axis
        n_classes = logits.shape[axis]
        logp, p, total = shifted_exp(logits._data, axis)        # in the compute dtype
        dtype = logp.dtype
        logp -= np.log(total)                                  # log_softmax, (N, C, *d)
        p /= total                                             # softmax
        eps = label_smoothing
        w = None if weight is None else weight._data.astype(dtype)                   # (C,)
        w_b = None if w is None else w.reshape((n_classes,) + (1,) * (logits.ndim - axis - 1))  # along the class axis

        if kind_of(target.dtype) == "f":                           # class probabilities, the logits' shape
            q = target._data.astype(dtype, copy=False)
            if eps:
                q = q * (1 - eps) + eps / n_classes
            if w_b is not None:
                q = q * w_b
            loss = -np.sum(q * logp, axis=axis)                # (N, *d)
            normaliser = loss.size
            ctx.q, ctx.qsum = q, np.sum(q, axis=axis)
            ctx.logp = logp if ctx.needs_input_grad[1] else None
            ctx.target = target._data                          # for graph_backward (no copy)
        else:                                                  # class indices, shape (N, *d)
            t = target._data
            valid = t != ignore_index
            idx = np.expand_dims(np.where(valid, t, 0), axis)  # (N, 1, *d): the target class per position
            w_t = valid.astype(dtype) if w is None else valid * w[idx.squeeze(axis)]
            a = (1 - eps) * w_t
            # an ignored position adds 0 even where its log-probabilities are NaN or infinite (PyTorch's kernel skips
            # it and masks the smoothing term), not 0 times them
            loss = np.where(valid, -a * np.take_along_axis(logp, idx, axis).squeeze(axis), 0)
            b = None
            if eps:
                b = valid * (eps / n_classes)
                loss -= np.where(valid, b * np.sum(logp if w_b is None else logp * w_b, axis=axis), 0)
            normaliser = np.sum(w_t)
            ctx.q, ctx.idx, ctx.a, ctx.b = None, idx, a, b
            ctx.qsum = a if b is None else a + b * (n_classes if w is None else np.sum(w))
        ctx.p, ctx.w_b, ctx.axis, ctx.eps = p, w_b, axis, eps
        ctx.reduction, ctx.normaliser = reduction, normaliser
        # PyTorch's composite (nll_loss of log_softmax, or a product with the probabilities) saves the target for the
        # logits' gradient: a write into it after the forward makes that backward refuse (ctx.q may be its memory)
        ctx.save_for_backward(target._data if ctx.needs_input_grad[0] else None)
        ctx.logits, ctx.inputs_at = logits._data, writes[0]    # for graph_backward (no copy)

        return _reduce_positions(loss, reduction, normaliser).astype(logits.dtype, copy=False)

    @staticmethod
    def backward(ctx, dout):
        ctx.saved_tensors                                      # (refuses a target written since the forward)
        axis, p = ctx.axis, ctx.p
        g = _upstream_per_position(dout._data.astype(p.dtype, copy=False), ctx.reduction, ctx.normaliser, axis)
        dx = p * np.expand_dims(ctx.qsum, axis)
        if ctx.q is not None:
            dx -= ctx.q
        else:
            if ctx.b is not None:
                dx -= np.expand_dims(ctx.b, axis) * (1 if ctx.w_b is None else ctx.w_b)
            at_target = np.take_along_axis(dx, ctx.idx, axis) - np.expand_dims(ctx.a, axis)
            np.put_along_axis(dx, ctx.idx, at_target, axis)
        dx *= g
        dtarget = None
        if ctx.needs_input_grad[1]:                            # probabilities: dloss/dtarget = -(1-eps) w log p
            dtarget = -(1 - ctx.eps) * ctx.logp * g
            if ctx.w_b is not None:
                dtarget *= ctx.w_b
        return dx, dtarget, None, None, None, None

    @staticmethod
    def graph_backward(ctx, dout):
        """The same gradients with p = softmax(logits) and log p = log_softmax(logits) recomputed as
        differentiable functions of the logits, and q (hence sum_c q) of the target probabilities when
        they require grad; for class indices q is a constant (a scatter of a plus b w)."""
        ctx.saved_tensors                                      # (refuses a target written since the forward)
        axis, eps, w_b = ctx.axis, ctx.eps, ctx.w_b
        _check_unwritten(ctx, "input", ctx.logits)
        g = _upstream_per_position(dout, ctx.reduction, ctx.normaliser, axis)
        logits = ctx.input_tensor(0, ctx.logits)
        weights = 1 if w_b is None else Tensor(w_b)
        if ctx.q is None:                                      # class indices
            q = _scatter(ctx.p.shape, ctx.idx, np.expand_dims(ctx.a, axis), axis, ctx.p.dtype)
            if ctx.b is not None:
                q += np.expand_dims(ctx.b, axis) * (1 if w_b is None else w_b)
            q, qsum = Tensor(q), Tensor(np.expand_dims(ctx.qsum, axis))
        elif ctx.needs_input_grad[1]:                          # probabilities that require grad
            _check_unwritten(ctx, "target", ctx.target)
            q = ctx.input_tensor(1, ctx.target) * (1 - eps) + eps / ctx.p.shape[axis]
            q = q * weights
            qsum = Sum.apply(q, (axis,), True)
        else:
            q, qsum = Tensor(ctx.q), Tensor(np.expand_dims(ctx.qsum, axis))
        dx = (Softmax.apply(logits, axis) * qsum - q) * g if ctx.needs_input_grad[0] else None
        dtarget = None
        if ctx.needs_input_grad[1]:
            dtarget = -(1 - eps) * LogSoftmax.apply(logits, axis) * g * weights
        return dx, dtarget, None, None, None, None


def _check_unwritten(ctx, name, array):
    """cross_entropy keeps its input and target arrays (not saved: the ordinary backward does not need them)
    for its graph_backward; refuse to differentiate with values written in place since the forward."""
    if writes_since(array, ctx.inputs_at):
        raise RuntimeError(f"cross_entropy's {name} was modified by an inplace operation after the forward pass; "
                           "create_graph=True needs its values as they were. Hint: clone() it before the inplace "
                           "write, or write out of place.")


def _check_cross_entropy(input, target, weight, ignore_index, label_smoothing):
    """PyTorch's shape, dtype and range checks, before anything is computed."""
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    _check_class_targets("cross_entropy", input, target, weight, ignore_index, probabilities_allowed=True)


def _check_class_targets(name, input, target, weight, ignore_index, probabilities_allowed):
    """Checks shared by cross_entropy and nll_loss: input (C,) or (N, C, *d), a weight per class, and a
    target of class indices of the input's shape without C (or probabilities of the input's shape)."""
    kernel = "log_softmax_lastdim_kernel_impl" if name == "cross_entropy" else "nll_loss_out_frame"
    check_floating_input(kernel, input)
    if input.ndim == 0:  # (nll_loss refused it already) a 0-d target is read as class probabilities, as PyTorch
        if kind_of(target.dtype) != "f":
            raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                               f"{scalar_type_name(target.dtype)}")
        raise IndexError(f"{name}: input must have at least 1 dimension (C,) or (N, C, *d), got a 0-d tensor")
    axis = 1 if input.ndim > 1 else 0
    n_classes = input.shape[axis]
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != n_classes):
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes or no classes but "
                           f"got weight tensor of shape: {list(weight.shape)}")
    if weight is not None and weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(input.dtype)} but found "
                           f"{scalar_type_name(weight.dtype)}")
    if probabilities_allowed and target.shape == input.shape:   # class probabilities, as PyTorch decides: by shape
        if kind_of(target.dtype) != "f":
            raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                               f"{scalar_type_name(target.dtype)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return
    if input.ndim == 2 and target.ndim >= 1 and target.shape[0] != input.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0]}).")
    if target.dtype not in (np.int64, np.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {scalar_type_name(target.dtype)} "
                           f"(class-probability targets must have the input's shape {list(input.shape)})")
    expected = input.shape[:axis] + input.shape[axis + 1:]
    if target.shape != expected:
        raise RuntimeError(f"Expected target size {list(expected)}, got {list(target.shape)} (input "
                           f"{list(input.shape)}: size mismatch)")
    _check_targets_in_range(target, n_classes, ignore_index)


def check_floating_input(kernel, input):
    """PyTorch's NotImplementedError for a loss on integer, bool or complex input (its kernels are real
    floating-point)."""
    if kind_of(input.dtype) != "f":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type_name(input.dtype)}\'')


def _check_targets_in_range(target, n_classes, ignore_index):
    t = target._data
    bad = (t != ignore_index) & ((t < 0) | (t >= n_classes))
    if bad.any():
        raise IndexError(f"Target {t[bad].flat[0]} is out of bounds.")


@takes_tensors("input", "target", "weight")
@autocast_op("float32")
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """Cross-entropy between logits ``input`` (C,), (N, C) or (N, C, d1, ...) and ``target``: class
    indices of the input's shape without C, or class probabilities of the input's shape. Fused: one
    Function computes log_softmax and the loss, and its backward is softmax - onehot (weighted)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    reduction = check_reduction(reduction)
    target = as_tensor_operand(target)
    _check_cross_entropy(input, target, weight, ignore_index, label_smoothing)
    if target.shape == input.shape and target.dtype != input.dtype:   # probabilities: the loss in the common dtype
        input, target = _promoted(input, target)
    return CrossEntropy.apply(input, target, weight, ignore_index, reduction, float(label_smoothing))


# --------------------------------------------------------------------------- mse_loss
def apply_reduction(loss, reduction):
    """Apply a loss reduction ('none', 'mean' over all elements, 'sum') with differentiable ops."""
    return loss if reduction == "none" else loss.mean() if reduction == "mean" else loss.sum()


@takes_tensors("input", "target", "weight")
@autocast_op("float32")
@pytorch_saves("input", "target")
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """(input - target)^2, reduced; sizes that differ broadcast with PyTorch's warning. With ``weight`` (the
    input's shape) each squared error is weighted and 'mean' is sum(weight * error^2) / sum(weight)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    reduction = check_reduction(reduction)
    target = as_tensor_operand(target, input)
    _warn_if_broadcast(input, target)
    input, target = _promoted(input, target)       # (PyTorch's mse kernel promotes a bool operand, no subtraction)
    check_floating_input("mse_cpu", input)
    return _elementwise_weighted(square(sub(input, target)), input, weight, reduction, mean_by_weight=True)


def _elementwise_weighted(elements, input, weight, reduction, mean_by_weight):
    """Reduce per-element losses of mse/l1/huber, each multiplied by ``weight`` (the input's shape) if given;
    'mean' then divides by sum(weight) (``mean_by_weight``, mse and l1 in PyTorch) or by the count (huber)."""
    if weight is None:
        return apply_reduction(elements, reduction)
    weight = as_tensor_operand(weight, input)
    if weight.shape != input.shape:
        raise ValueError(f"Weights and input must have the same size (got weight {list(weight.shape)}, input "
                         f"{list(input.shape)}).")
    weighted = elements * weight
    if reduction == "mean" and mean_by_weight:
        return weighted.sum() / weight.sum()
    return apply_reduction(weighted, reduction)


def legacy_reduction(size_average, reduce, reduction):
    """PyTorch's deprecated ``size_average``/``reduce`` flags turned into a ``reduction`` string (with its
    warning): reduce=False gives 'none', otherwise size_average=False gives 'sum' and anything else 'mean'.
    Without them ``reduction`` is returned unchanged."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = "none" if not reduce else "mean" if size_average else "sum"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{reduction}' "
                  "instead.", stacklevel=3)
    return reduction


def _promoted(input, target):
    """``input`` and ``target`` cast (differentiably) to their PyTorch result dtype."""
    dtype = result_type(input._data, target._data)
    return cast(input, dtype), cast(target, dtype)


def _warn_if_broadcast(input, target):
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({list(target.shape)}) that is different to the input size "
                      f"({list(input.shape)}). This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=3)


# --------------------------------------------------------------------------- nll_loss
class NllLoss(Function):
    """loss_i = -w_{t_i} x_{i, t_i} at each position i (0 where t_i == ignore_index); 'mean' divides the sum
    by sum_i w_{t_i} over the counted positions. Backward: dx_{i, t_i} = -w_{t_i} dout_i, zero elsewhere
    (dout_i = dout / sum w for 'mean'). The class weights get no gradient (as in PyTorch)."""

    watched_inputs = (0, 1)  # PyTorch's backward saves input and target (Function.watched_inputs)

    @staticmethod
    def forward(ctx, input, target, weight, ignore_index, reduction):
        x = input._data
        axis = 1 if x.ndim > 1 else 0                          # the class axis
        t = target._data                                       # (N, *d) or ()
        valid = t != ignore_index
        idx = np.expand_dims(np.where(valid, t, 0), axis)      # (N, 1, *d): the target class per position
        w_t = valid.astype(x.dtype) if weight is None else valid * weight._data.astype(x.dtype)[idx.squeeze(axis)]
        # an ignored position adds 0 even where its log-probabilities are NaN or infinite (PyTorch's kernel skips it)
        loss = np.where(valid, -w_t * np.take_along_axis(x, idx, axis).squeeze(axis), 0)
        normaliser = np.sum(w_t)
        ctx.idx, ctx.w_t, ctx.valid, ctx.axis, ctx.shape = idx, w_t, valid, axis, x.shape
        ctx.reduction, ctx.normaliser = reduction, normaliser
        return _reduce_positions(loss, reduction, normaliser)

    @staticmethod
    def backward(ctx, dout):
        g = _upstream_per_position(dout._data, ctx.reduction, ctx.normaliser, ctx.axis)
        share = np.where(np.expand_dims(ctx.valid, ctx.axis), -np.expand_dims(ctx.w_t, ctx.axis) * g, 0)
        return _scatter(ctx.shape, ctx.idx, share, ctx.axis, dout.dtype), None, None, None, None

    @staticmethod
    def graph_backward(ctx, dout):
        """dout (per position) times the constant -w_t at the target classes: linear in dout (depending on the input
        with derivative zero: PyTorch's nll_loss_backward reads it)."""
        g = _upstream_per_position(dout, ctx.reduction, ctx.normaliser, ctx.axis)
        weights = _scatter(ctx.shape, ctx.idx, -np.expand_dims(ctx.w_t, ctx.axis), ctx.axis, dout.dtype)
        return depending_on_input(ctx, 0, Tensor(weights) * g), None, None, None, None


@takes_tensors("input", "target", "weight")
@autocast_op("float32")
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log-likelihood of class indices ``target`` under log-probabilities ``input`` (C,), (N, C)
    or (N, C, d1, ...): -weight[t] * input[t] per position, reduced ('mean' is weighted by the class
    weights of the counted targets)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    reduction = check_reduction(reduction)
    target = as_tensor_operand(target)
    if input.ndim == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    if kind_of(target.dtype) == "f":
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {target.dtype} (nll_loss takes "
                           "class indices)")
    _check_class_targets("nll_loss", input, target, weight, ignore_index, probabilities_allowed=False)
    return NllLoss.apply(input, target, weight, ignore_index, reduction)


# --------------------------------------------------------------------------- l1, smooth_l1, huber
class Huber(Function):
    """The Huber function of d = input - target, divided by ``scale``:

        h(d) = d^2 / 2              where |d| < delta
             = delta (|d| - delta/2) elsewhere

    (smooth_l1 with beta is h with delta = beta, divided by beta; beta = 0 is |d|.)
    Backward: dinput = dout * clip(d, -delta, delta) / scale (sign(d) for delta = 0), dtarget = -dinput.
    """

    @staticmethod
    def forward(ctx, input, target, delta, scale):
        d = input._data - target._data
        abs_d = np.abs(d)
        quadratic = abs_d < delta
        loss = np.where(quadratic, 0.5 * d * d, delta * (abs_d - 0.5 * delta)) if delta else abs_d
        slope = np.clip(d, -delta, delta) if delta else sign_array(d)     # (|d|'s slope at NaN: 0, as PyTorch's)
        ctx.delta, ctx.scale = delta, scale
        x, y = input._data, target._data
        if not delta:       # PyTorch's l1_loss is |input - target|, which saves only the difference (no write into
            x, y = (np.broadcast_to(np.zeros((), a.dtype), a.shape) for a in (x, y))   # input or target reaches
        #                     it); graph_backward reads x and y only where |d| < delta: stand-ins of their shapes
        ctx.save_for_backward(slope / scale if scale != 1 else slope, x, y)   # (huber/smooth_l1 save both, as these)
        return (loss / scale if scale != 1 else loss).astype(d.dtype, copy=False)

    @staticmethod
    def backward(ctx, dout):
        slope = ctx.saved_tensors[0]
        g = dout._data * slope
        return g, -g, None, None

    @staticmethod
    def graph_backward(ctx, dout):
        """slope = d / scale where |d| < delta (a function of input and target), the constant clipped slope
        elsewhere."""
        slope, x, y = ctx.saved_tensors
        quadratic = np.abs(x - y) < ctx.delta
        d = ctx.input_tensor(0, x) - ctx.input_tensor(1, y)
        if quadratic.any():
            g = dout * (d * Tensor(quadratic / ctx.scale) + Tensor(np.where(quadratic, 0, slope)))
        else:       # a constant slope read off d: the gradient still depends on input and target (with derivative 0)
            g = ConstantSlope.apply(dout, d, slope)
        return g, -g, None, None


def _huber_elements(kernel, input, target, delta, scale):
    target = as_tensor_operand(target, input)
    _warn_if_broadcast(input, target)
    check_broadcast(input.shape, target.shape)
    input, target = _promoted(input, target)
    check_floating_input(kernel, input)
    return Huber.apply(input, target, delta, scale)


@takes_tensors("input", "target", "weight")
@autocast_op("float32")
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """|input - target|, reduced; with ``weight`` (the input's shape) 'mean' is sum(w |d|) / sum(w). Other than
    real floating-point operands take PyTorch's composite ``(input - target).abs()``: complex ones give the real
    modulus, integers and bools the errors (or integer results) of its subtraction and reduction."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    reduction = check_reduction(reduction)
    target = as_tensor_operand(target, input)
    if kind_of(_promoted(input, target)[0].dtype) == "f" and "b" not in (kind_of(input.dtype), kind_of(target.dtype)):
        elements = _huber_elements("l1_loss", input, target, 0.0, 1.0)
    else:
        _warn_if_broadcast(input, target)
        elements = (input - target).abs()
    return _elementwise_weighted(elements, input, weight, reduction, mean_by_weight=True)


@takes_tensors("input", "target")
@autocast_op("float32")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (d = input - target), reduced."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    reduction = check_reduction(reduction)
    if not beta >= 0:                                       # (NaN too)
        raise RuntimeError(f"smooth_l1_loss does not support negative values for beta (got beta={beta}).")
    beta = float(beta)
    return apply_reduction(_huber_elements("smooth_l1_cpu", input, target, beta, beta or 1.0), reduction)


@takes_tensors("input", "target", "weight")
@autocast_op("float32")
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where |d| < delta, delta (|d| - 0.5 delta) elsewhere (d = input - target), reduced; with
    ``weight`` (the input's shape) 'mean' is mean(w h(d)) (PyTorch's choice, unlike l1_loss and mse_loss)."""
    reduction = check_reduction(reduction)
    target = as_tensor_operand(target, input)
    promoted = _promoted(input, target)[0].dtype
    if not can_cast(promoted, input.dtype):                               # PyTorch writes into input's dtype
        raise cast_refused(promoted, input.dtype)
    if not delta > 0:                                       # (NaN too)
        raise RuntimeError(f"huber_loss does not support non-positive values for delta (got delta={delta}).")
    elements = _huber_elements("huber_cpu", input, target, float(delta), 1.0)
    if elements.dtype != input.dtype:        # computed in the common dtype, written in input's (PyTorch's out)
        elements = elements.to(input.dtype)
    return _elementwise_weighted(elements, input, weight, reduction, mean_by_weight=False)


# --------------------------------------------------------------------------- binary cross-entropy
_LOG_FLOOR = -100.0   # PyTorch clamps each log at -100, so a probability of exactly 0 or 1 gives a finite loss
# and floors x (1 - x) in the gradient's denominator at 1e-12, a float32 constant in its kernel (so the
# floor is float32(1e-12) = 9.99999996e-13 even for float64)
_BCE_EPS = float(np.float32(1e-12))


class BinaryCrossEntropy(Function):
    """loss = -(y max(log x, -100) + (1 - y) max(log(1 - x), -100));
    dx = dout (x - y) / max(x (1 - x), 1e-12),  dy = dout (log(1 - x) - log x)
    (dy unclamped, as PyTorch's: +-inf where x is 0 or 1)."""

    @staticmethod
    def forward(ctx, input, target):
        x, y = input._data, target._data
        with np.errstate(divide="ignore"):
            log_x, log_1mx = np.log(x), np.log1p(-x)
        ctx.save_for_backward(x, y, log_x, log_1mx)
        return -(y * np.maximum(log_x, _LOG_FLOOR) + (1 - y) * np.maximum(log_1mx, _LOG_FLOOR))

    @staticmethod
    def backward(ctx, dout):
        x, y, log_x, log_1mx = ctx.saved_tensors
        g = dout._data
        dx = g * (x - y) / np.maximum(x * (1 - x), _BCE_EPS) if ctx.needs_input_grad[0] else None
        dy = g * (log_1mx - log_x) if ctx.needs_input_grad[1] else None
        return dx, dy

    @staticmethod
    def graph_backward(ctx, dout):
        """Where the floor 1e-12 is reached (x within ~1e-12 of 0 or 1) the double backward differentiates the
        floored quotient (its floor as a constant); PyTorch's uses (x^2 - 2xy + y) / ((x + 1e-12)^2 (1 - x +
        1e-12)^2) instead. Elsewhere the two agree to about 1e-12 / min(x, 1 - x), relatively."""
        x, y = ctx.saved_tensors[:2]
        x_t, y_t = ctx.input_tensor(0, x), ctx.input_tensor(1, y)
        dx = dy = None
        if ctx.needs_input_grad[0]:
            spread = x_t * (1 - x_t)
            if (x * (1 - x) < _BCE_EPS).any():                 # the floor is reached somewhere
                spread = clamp_min(spread, _BCE_EPS)
            dx = dout * (x_t - y_t) / spread
        if ctx.needs_input_grad[1]:
            dy = dout * ((-x_t).log1p() - x_t.log())
        return dx, dy


def _weighted_reduction(elements, weight, reduction):
    """Reduce per-element losses, each multiplied by ``weight`` (broadcast, as BCE takes it) if given;
    differentiable in both."""
    if weight is not None:
        elements = elements * as_tensor_operand(weight, elements)
    return apply_reduction(elements, reduction)


@takes_tensors("input", "target", "weight")
@autocast_op("float32")
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-w (y log x + (1 - y) log(1 - x)) for probabilities x = ``input`` and targets y in [0, 1], each log
    clamped at -100 as in PyTorch; ``weight`` broadcasts to the input's shape."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    reduction = check_reduction(reduction)
    target = as_tensor_operand(target, input)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({_size(target)}) that is different to the input size "
                         f"({_size(input)}) is deprecated. Please ensure they have the same size.")
    if target.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {scalar_type_name(target.dtype)} but expected "
                           f"{scalar_type_name(input.dtype)}")
    if kind_of(input.dtype) != "f":                         # (PyTorch compares the dtypes first)
        raise NotImplementedError(f"\"binary_cross_entropy\" not implemented for '{scalar_type_name(input.dtype)}'")
    if isinstance(weight, Tensor) and weight.dtype != input.dtype:    # (the loss is written in the input's dtype)
        if kind_of(weight.dtype) == "c":
            raise cast_refused(weight.dtype, input.dtype)
        weight = weight.to(input.dtype)
    for name, t in (("input", input), ("target", target)):
        if not np.all((t._data >= 0) & (t._data <= 1)):  # NaN is refused too
            raise RuntimeError(f"all elements of {name} should be between 0 and 1")
    input, target = _promoted(input, target)
    return _weighted_reduction(BinaryCrossEntropy.apply(input, target), weight, reduction)


class BinaryCrossEntropyWithLogits(Function):
    """With l = 1 + (pos_weight - 1) y and softplus(-x) = log(1 + exp(-x)) (computed without overflow):

        loss = (1 - y) x + l softplus(-x)
        dx = dout ((1 - y) - l sigmoid(-x))
        dy = dout ((pos_weight - 1) softplus(-x) - x)
        dpos_weight = dout y softplus(-x)
    """

    @staticmethod
    def forward(ctx, input, target, pos_weight):
        x, y = input._data, target._data
        softplus_neg = np.logaddexp(0, -x)
        l = 1 if pos_weight is None else 1 + (pos_weight._data - 1) * y
        ctx.save_for_backward(x, y, softplus_neg)
        ctx.pos_weight = None if pos_weight is None else pos_weight._data
        return (1 - y) * x + l * softplus_neg

    @staticmethod
    def backward(ctx, dout):
        x, y, softplus_neg = ctx.saved_tensors
        g, pw = dout._data, ctx.pos_weight
        l = 1 if pw is None else 1 + (pw - 1) * y
        sigmoid_neg = np.exp(-np.logaddexp(0, x))
        dx = g * ((1 - y) - l * sigmoid_neg) if ctx.needs_input_grad[0] else None
        dy = g * ((0 if pw is None else (pw - 1) * softplus_neg) - x) if ctx.needs_input_grad[1] else None
        dpw = g * y * softplus_neg if ctx.needs_input_grad[2] else None
        return dx, dy, dpw

    @staticmethod
    def graph_backward(ctx, dout):
        x, y, _ = ctx.saved_tensors
        x_t, y_t = ctx.input_tensor(0, x), ctx.input_tensor(1, y)
        pw = None if ctx.pos_weight is None else ctx.input_tensor(2, ctx.pos_weight)
        softplus_neg = softplus(-x_t, threshold=float("inf"))   # log(1 + exp(-x)), never linearised
        l = 1 if pw is None else 1 + (pw - 1) * y_t
        dx = dout * ((1 - y_t) - l * (-x_t).sigmoid()) if ctx.needs_input_grad[0] else None
        dy = dout * ((0 if pw is None else (pw - 1) * softplus_neg) - x_t) if ctx.needs_input_grad[1] else None
        dpw = dout * y_t * softplus_neg if ctx.needs_input_grad[2] else None
        return dx, dy, dpw


@takes_tensors("input", "target", "weight", "pos_weight")
@autocast_op("float32")
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Binary cross-entropy of sigmoid(input) against ``target``, computed from the logits without
    overflow: w ((1 - y) x + (1 + (pos_weight - 1) y) log(1 + exp(-x))). ``pos_weight`` broadcasts along
    the last (class) dimension, ``weight`` to the input's shape."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    reduction = check_reduction(reduction)
    target = as_tensor_operand(target, input)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({_size(target)}) must be the same as input size ({_size(input)})")
    check_floating_input("log_sigmoid_cpu", input)
    if kind_of(target.dtype) not in "fc":
        raise cast_refused(input.dtype, target.dtype)
    if pos_weight is not None:
        pos_weight = as_tensor_operand(pos_weight, input)
        check_broadcast(input.shape, pos_weight.shape)
    target_dtype = target.dtype
    if kind_of(target.dtype) == "c" and kind_of(input.dtype) == "f":   # PyTorch's loss of a complex target: complex
        common = np.empty(0, result_type(input._data, target._data))   # (the logits stay real: softplus of reals)
        if pos_weight is not None:                                    # (PyTorch writes its log weight into a real)
            raise cast_refused(result_type(common, pos_weight._data), input.dtype)
        input, target = input.to(common.real.dtype), target.to(common.dtype)
    else:
        input, target = _promoted(input, target)
    elements = BinaryCrossEntropyWithLogits.apply(input, target, pos_weight)
    if elements.dtype != target_dtype:       # PyTorch's loss starts from (1 - target) and is computed into it
        elements = elements.to(target_dtype)
    return _weighted_reduction(elements, weight, reduction)


def _size(t):
    return f"minigrad.Size({list(t.shape)})"


# --------------------------------------------------------------------------- kl_div
@takes_tensors("input", "target")
@autocast_op("float32")
@refuses_complex('kl_div: Complex inputs not supported.', RuntimeError)
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """KL(target || q) pointwise, for log-probabilities ``input`` = log q and probabilities ``target`` (or
    log-probabilities with ``log_target``). 'batchmean' divides the sum by the batch size input.size(0)
    (the true KL divergence per sample); 'mean' divides by the number of elements, with PyTorch's warning."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      stacklevel=2)
    if reduction != "batchmean":
        reduction = check_reduction(reduction)
    target = as_tensor_operand(target, input)
    check_broadcast(input.shape, target.shape)
    if kind_of(input.dtype) in "biu" or kind_of(target.dtype) in "biu":
        raise RuntimeError("kl_div: Integral inputs not supported.")
    input, target = _promoted(input, target)
    # PyTorch's composite, so values, gradients (w.r.t. the target too) and what is saved are its: p log p - p q
    # with xlogy's 0 at p = 0 (its gradient there: NaN, 0/0), or e^t (t - input) for log-probabilities t
    elements = target.exp() * (target - input) if log_target else xlogy(target, target) - target * input
    if reduction == "batchmean":
        return elements.sum() / (input.shape[0] if input.ndim else 1)
    return apply_reduction(elements, reduction)
