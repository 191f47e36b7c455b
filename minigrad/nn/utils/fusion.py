"""``nn.utils.fusion``: fold an eval-mode BatchNorm into the convolution or linear layer before it.

BatchNorm in eval is an affine map per channel c with constant statistics:
bn(z)_c = (z_c - mean_c) * s_c + beta_c, s_c = gamma_c / sqrt(var_c + eps). With z = W x + b (a convolution or a
linear layer, output channel c), bn(z) = (s_c W_c) x + (b_c - mean_c) * s_c + beta_c: one layer with
W'_c = s_c W_c and b'_c = (b_c - mean_c) * s_c + beta_c.
"""
import copy

from ...creation import ones_like, zeros_like
from ..module import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]


def _check_eval(layer, bn):
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("Fusion needs the BatchNorm's running statistics (track_running_stats=True)")


def _bn_affine(bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """(s, beta) of the eval BatchNorm: s = gamma / sqrt(var + eps) per channel; gamma 1 and beta 0 if absent."""
    bn_w = ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = zeros_like(bn_rm) if bn_b is None else bn_b
    return bn_w * (bn_rv + bn_eps).rsqrt(), bn_b


def _fused(weight, bias, scale_shape, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """(W', b') = (s W, (b - mean) s + beta), s reshaped to ``scale_shape`` against W's output-channel dim."""
    weight_dtype = weight.dtype
    bias_dtype = weight_dtype if bias is None else bias.dtype
    bias = zeros_like(bn_rm) if bias is None else bias
    scale, shift = _bn_affine(bn_rm, bn_rv, bn_eps, bn_w, bn_b)
    fused_weight = (weight * scale.reshape(scale_shape)).to(weight_dtype)
    fused_bias = ((bias - bn_rm) * scale + shift).to(bias_dtype)
    return Parameter(fused_weight, weight.requires_grad), Parameter(fused_bias, bias.requires_grad)


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The fused convolution's (weight, bias) as Parameters. The output channels are W's dim 0, or dim 1 for a
    transposed convolution (``transpose=True``)."""
    channel_shape = [1, -1] if transpose else [-1, 1]
    return _fused(conv_w, conv_b, channel_shape + [1] * (conv_w.ndim - 2), bn_rm, bn_rv, bn_eps, bn_w, bn_b)


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The fused linear layer's (weight, bias) as Parameters (W is (out, in): s scales its rows)."""
    return _fused(linear_w, linear_b, (-1, 1), bn_rm, bn_rv, bn_eps, bn_w, bn_b)


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of the eval-mode ``conv`` whose output equals ``bn(conv(x))`` with ``bn`` in eval mode."""
    _check_eval(conv, bn)
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                    bn.eps, bn.weight, bn.bias, transpose)
    return fused


def fuse_linear_bn_eval(linear, bn):
    """A copy of the eval-mode ``linear`` whose output equals ``bn(linear(x))`` with ``bn`` in eval mode."""
    _check_eval(linear, bn)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features == bn.num_features or bn.num_features == 1")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused
