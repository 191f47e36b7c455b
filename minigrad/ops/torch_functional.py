"""PyTorch's top-level forms of the neural-network functions (``torch.layer_norm``, ``torch.dropout``,
``torch.embedding``, ``torch.kl_div``, ``torch.max_pool1d``, ``torch.convolution``, ``torch.lstm_cell``, ...).

They are the ATen ops under ``torch.nn.functional``, with ATen's argument lists: the norms take every argument
positionally (plus an ignored cudnn flag), the dropouts are ``(input, p, train)``, ``embedding`` takes the weight
first and ``padding_idx=-1`` for none, the losses take ``reduction`` as an int (0 none, 1 mean, 2 sum), the pools
without ``return_indices`` and the ``*_with_indices`` forms always return (values, indices). Each is written on
minigrad's ``nn.functional`` so that autograd goes through it; the recurrent cells are composed from linear
products, sigmoid and tanh.
"""
import numpy as np

from .._checks import takes_tensors, type_name
from ..dtypes import scalar_type_name
from ..nn import functional as F
from ..random import check_probability, keep_mask
from ..tensor import Tensor
from .activation import dropout_gate, dropout_noise
from .dropout_alpha import alpha_noise
from .pool import feature_noise, feature_noise_shape
from .recurrent import check_cell

# the same functions as nn.functional's (PyTorch's are one object too)
bilinear = F.bilinear
pixel_shuffle = F.pixel_shuffle
pixel_unshuffle = F.pixel_unshuffle
pdist = F.pdist
native_channel_shuffle = F.native_channel_shuffle
avg_pool1d = F.avg_pool1d
adaptive_avg_pool1d = F.adaptive_avg_pool1d


def _int_list(fname, name, position, value):
    """A size argument PyTorch types ``int[]``: a list or tuple of ints (an int alone is refused)."""
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, (int, np.integer)) for v in value):
        raise TypeError(f"{fname}(): argument '{name}' (position {position}) must be tuple of ints, "
                        f"not {type_name(value)}")
    return tuple(int(v) for v in value)


# --------------------------------------------------------------------------- normalization
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    """``F.layer_norm`` over the trailing ``normalized_shape`` dims (``cudnn_enable`` is ignored)."""
    return F.layer_norm(input, _int_list("layer_norm", "normalized_shape", 2, normalized_shape), weight, bias, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    """``F.batch_norm`` with ATen's argument order (``cudnn_enabled`` is ignored)."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    """``F.instance_norm`` with ATen's argument order (``cudnn_enabled`` is ignored)."""
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    """``F.group_norm`` (``cudnn_enabled`` is ignored)."""
    return F.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``F.rms_norm``: x / sqrt(mean(x^2) + eps) * weight over the trailing ``normalized_shape`` dims."""
    return F.rms_norm(input, _int_list("rms_norm", "normalized_shape", 2, normalized_shape), weight, eps)


# --------------------------------------------------------------------------- dropout
def _dropout(fname, input, p, train, feature, alpha, inplace):
    """ATen's dropout: identity unless training; else keep each element (each (n, c) channel with ``feature``)
    with probability 1 - p, scaled by 1 / (1 - p), or with ``alpha`` alpha dropout's affine map."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not {type_name(input)}")
    if not isinstance(train, (bool, np.bool_)):
        raise TypeError(f"{fname}(): argument 'train' (position 3) must be bool, not {type_name(train)}")
    noise_shape = feature_noise_shape if feature else None
    done = dropout_gate(input, p, train, inplace, alpha=alpha, noise_shape=noise_shape)
    if done is not None:
        return done
    if alpha:
        return alpha_noise(input, p, inplace, feature_noise_shape(input) if feature else input.shape)
    return feature_noise(input, p, inplace) if feature else dropout_noise(input, p, inplace)


def _dropout_function(name, feature, alpha, inplace):
    kind = ("feature " if feature else "") + ("alpha " if alpha else "")

    def fn(input, p, train):
        return _dropout(name, input, p, train, feature, alpha, inplace)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``torch.{name}``: {kind}dropout of ``input`` with probability ``p`` when ``train``"
                  + (", written into ``input``." if inplace else "."))
    return fn


_DROPOUTS = {"dropout": (False, False), "feature_dropout": (True, False),
             "alpha_dropout": (False, True), "feature_alpha_dropout": (True, True)}
for _name, (_feature, _alpha) in _DROPOUTS.items():
    globals()[_name] = _dropout_function(_name, _feature, _alpha, inplace=False)
    globals()[_name + "_"] = _dropout_function(_name + "_", _feature, _alpha, inplace=True)
del _name, _feature, _alpha


# --------------------------------------------------------------------------- embedding and channel shuffle
@takes_tensors("weight", "indices")
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """Rows ``weight[indices]``; row ``padding_idx`` gets no gradient (a negative one means none)."""
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if indices.dtype not in (np.int64, np.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got torch.{scalar_type_name(indices.dtype)}Tensor instead "
                           "(while checking arguments for embedding)")
    padding = padding_idx if 0 <= padding_idx < weight.shape[0] else None
    return F.embedding(indices, weight, padding_idx=padding, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def native_dropout(input, p, train):
    """(output, mask): in training (``train`` True or None) each element kept with probability 1 - p, scaled by
    1/(1 - p), and the boolean mask of the kept ones; otherwise (the input's values, all True). Differentiable in
    ``input`` through the mask, as PyTorch's."""
    if train is False:
        return input * 1, Tensor(np.ones(input.shape, dtype=bool))
    check_probability(1 - p)                 # (PyTorch's check of its keep probability, in its words)
    keep = keep_mask(input.shape, 1 - p, input) if p < 1 else np.zeros(input.shape, dtype=bool)
    scale = 1 / (1 - p) if p < 1 else 0.0
    return input * Tensor((keep * scale).astype(input.dtype)), Tensor(keep)


# --------------------------------------------------------------------------- losses with an int reduction
# ATen's int reduction: 1 mean, 2 sum, 0 (or any other int) none. ATen declares the default Mean, but PyTorch's
# Python binding reads that default as 0: the losses below return the unreduced loss when reduction is omitted.
_REDUCTIONS = {1: "mean", 2: "sum"}


def _reduction(fname, reduction, position):
    """ATen's int ``reduction`` as nn.functional's string."""
    if not isinstance(reduction, (int, np.integer)) or isinstance(reduction, bool):
        raise TypeError(f"{fname}(): argument 'reduction' (position {position}) must be int, "
                        f"not {type_name(reduction)}")
    return _REDUCTIONS.get(int(reduction), "none")


def _reduce(loss, reduction):
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def kl_div(input, target, reduction=0, *, log_target=False):
    """Pointwise target * (log target - input), reduced (mean over all elements with reduction 1)."""
    reduction = _reduction("kl_div", reduction, 3)    # (nn.functional's 'mean' warns; ATen's does not)
    return _reduce(F.kl_div(input, target, reduction="none", log_target=log_target), reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    """max(0, -target * (input1 - input2) + margin), reduced."""
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction("margin_ranking_loss", reduction, 5))


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    """input where target is 1, max(0, margin - input) where it is -1, reduced."""
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction("hinge_embedding_loss", reduction, 4))


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    """1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1, reduced."""
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction("cosine_embedding_loss", reduction, 5))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False, reduction=0):
    """max(d(anchor, positive) - d(anchor, negative) + margin, 0), d the p-norm distance, reduced."""
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction("triplet_margin_loss", reduction, 8))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """Poisson negative log likelihood of ``target`` given the rate ``input`` (or its log), reduced."""
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction("poisson_nll_loss", reduction, 6))


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    """Binary cross entropy of sigmoid(input), computed stably from the logits, reduced."""
    return F.binary_cross_entropy_with_logits(
        input, target, weight, reduction=_reduction("binary_cross_entropy_with_logits", reduction, 5),
        pos_weight=pos_weight)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0, zero_infinity=False):
    """Connectionist temporal classification loss; lengths as int lists or tensors (ATen's two overloads)."""
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction("ctc_loss", reduction, 6), zero_infinity)


# --------------------------------------------------------------------------- pools
def _max_pool(pool, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=False):
    """nn.functional's max pool; ATen's empty ``stride`` means the kernel size."""
    stride = None if isinstance(stride, (list, tuple)) and len(stride) == 0 else stride
    return pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """Max over windows along the last dim of (N, C, L) or (C, L) input."""
    return _max_pool(F.max_pool1d, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """Max over windows of the last two dims."""
    return _max_pool(F.max_pool2d, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """Max over windows of the last three dims."""
    return _max_pool(F.max_pool3d, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``max_pool1d``'s (values, indices), the indices along the last dim."""
    return _max_pool(F.max_pool1d, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def adaptive_max_pool1d(input, output_size):
    """(values, indices) of the max over ``output_size`` adaptive windows of the last dim."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


# --------------------------------------------------------------------------- convolution
_CONVOLUTIONS = {1: (F.conv1d, F.conv_transpose1d), 2: (F.conv2d, F.conv_transpose2d),
                 3: (F.conv3d, F.conv_transpose3d)}


@takes_tensors("input", "weight", optional=("bias",))
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """Convolution (``transposed``: its adjoint) over the weight's spatial dims, sizes as lists of ints."""
    sizes = [_int_list("convolution", name, position, value)
             for name, position, value in (("stride", 4, stride), ("padding", 5, padding),
                                           ("dilation", 6, dilation), ("output_padding", 8, output_padding))]
    stride, padding, dilation, output_padding = (s[0] if len(s) == 1 else s for s in sizes)
    dims = weight.ndim - 2
    if dims not in _CONVOLUTIONS:
        raise RuntimeError(f"convolution: expected a weight with 3, 4 or 5 dimensions, but got {weight.ndim}")
    if input.ndim != weight.ndim:
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
                           f"{list(weight.shape)}, but got {input.ndim}-dimensional input of size "
                           f"{list(input.shape)} instead")
    conv, conv_transpose = _CONVOLUTIONS[dims]
    if transposed:
        return conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation)
    return conv(input, weight, bias, stride, padding, dilation, groups)


# --------------------------------------------------------------------------- recurrent cells
@takes_tensors("input", "w_ih", "w_hh")
def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step: gates i, f, g, o of x W_ih^T + b_ih + h W_hh^T + b_hh; c' = s(f) c + s(i) tanh(g),
    h' = s(o) tanh(c'). ``hx`` is (h, c); returns (h', c')."""
    if not isinstance(hx, (list, tuple)) or not all(isinstance(h, Tensor) for h in hx):
        raise TypeError(f"lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors, not {type_name(hx)}")
    if len(hx) != 2:
        raise RuntimeError(f"lstm_cell expects two hidden states, but got {len(hx)}")
    h, c = hx
    check_cell(input, hx, w_ih, w_hh, 4)
    gates = F.linear(input, w_ih, b_ih) + F.linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, 1)
    c_next = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c_next.tanh(), c_next


@takes_tensors("input", "hx", "w_ih", "w_hh")
def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step: r, z = s(x W_ir^T + h W_hr^T + b), n = tanh(x W_in^T + b_in + r (h W_hn^T + b_hn)),
    h' = (1 - z) n + z h."""
    check_cell(input, (hx,), w_ih, w_hh, 3)
    gi_r, gi_z, gi_n = F.linear(input, w_ih, b_ih).chunk(3, 1)
    gh_r, gh_z, gh_n = F.linear(hx, w_hh, b_hh).chunk(3, 1)
    r, z = (gi_r + gh_r).sigmoid(), (gi_z + gh_z).sigmoid()
    n = (gi_n + r * gh_n).tanh()
    return n + z * (hx - n)


def _rnn_cell(input, hx, w_ih, w_hh, b_ih, b_hh):
    check_cell(input, (hx,), w_ih, w_hh, 1)
    return F.linear(input, w_ih, b_ih) + F.linear(hx, w_hh, b_hh)


@takes_tensors("input", "hx", "w_ih", "w_hh")
def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman RNN step: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)."""
    return _rnn_cell(input, hx, w_ih, w_hh, b_ih, b_hh).tanh()


@takes_tensors("input", "hx", "w_ih", "w_hh")
def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman RNN step: h' = relu(x W_ih^T + b_ih + h W_hh^T + b_hh)."""
    return _rnn_cell(input, hx, w_ih, w_hh, b_ih, b_hh).relu()


__all__ = ["layer_norm", "batch_norm", "instance_norm", "group_norm", "rms_norm",
           "dropout", "dropout_", "native_dropout", "feature_dropout", "feature_dropout_", "alpha_dropout", "alpha_dropout_",
           "feature_alpha_dropout", "feature_alpha_dropout_",
           "embedding", "bilinear", "pixel_shuffle", "pixel_unshuffle", "native_channel_shuffle", "pdist",
           "kl_div", "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss", "triplet_margin_loss",
           "poisson_nll_loss", "binary_cross_entropy_with_logits", "ctc_loss",
           "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "avg_pool1d",
           "adaptive_avg_pool1d", "adaptive_max_pool1d", "convolution",
           "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"]
