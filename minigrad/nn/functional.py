"""``minigrad.nn.functional``: stateless functions with PyTorch's names and signatures."""
from .._checks import takes_tensors
from ..ops.activation import dropout, elu, gelu, hardswish, leaky_relu, mish, silu, softplus  # noqa: F401
from ..ops.attention import scaled_dot_product_attention  # noqa: F401
from ..ops.elementwise import relu as _relu
from ..ops.elementwise import sigmoid, tanh  # noqa: F401
from ..ops.index import one_hot  # noqa: F401
from ..ops.linalg import embedding, linear  # noqa: F401
from ..ops.loss import (binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy,  # noqa: F401
                        huber_loss, kl_div, l1_loss, mse_loss, nll_loss, smooth_l1_loss)
from ..ops.norm import *  # noqa: F401,F403 - the norms listed in ops/norm/__init__.py's __all__ (rms_norm, ...)
from ..ops.softmax import functional_log_softmax as log_softmax, functional_softmax as softmax  # noqa: F401
from ..ops.conv import conv1d, conv2d, conv_transpose2d  # noqa: F401,E402


@takes_tensors("input")
def relu(input, inplace=False):
    """max(x, 0); with ``inplace``, ``input.relu_()``."""
    return input.relu_() if inplace else _relu(input)
from ..ops.pool import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d,  # noqa: F401,E402
                        adaptive_max_pool2d, avg_pool1d, avg_pool2d, dropout1d, dropout2d, interpolate, max_pool1d,
                        max_pool2d, pad, pixel_shuffle, pixel_unshuffle)
from ..ops.conv import conv3d, conv_tbc, conv_transpose1d, conv_transpose3d  # noqa: F401,E402
from ..ops.fold import fold, unfold  # noqa: F401,E402
from ..ops.pool import (adaptive_avg_pool3d, adaptive_max_pool1d_with_indices,  # noqa: F401,E402
                        adaptive_max_pool2d_with_indices, adaptive_max_pool3d, adaptive_max_pool3d_with_indices,
                        avg_pool3d, channel_shuffle, dropout3d, max_pool1d_with_indices, max_pool2d_with_indices,
                        max_pool3d, max_pool3d_with_indices, max_unpool1d, max_unpool2d, max_unpool3d)
from ..ops.activation import (celu, celu_, elu_, glu, hardshrink, hardsigmoid, hardtanh, hardtanh_,  # noqa: F401,E402
                              leaky_relu_, logsigmoid, prelu, relu6, relu_, rrelu, rrelu_, selu, selu_, softshrink,
                              softsign, tanhshrink, threshold, threshold_)
from ..ops.distance import (cosine_embedding_loss, cosine_similarity, normalize, pairwise_distance,  # noqa: F401,E402
                            triplet_margin_loss)
from ..ops.softmax import gumbel_softmax, softmin  # noqa: F401,E402
from ..ops.sampling import affine_grid, grid_sample  # noqa: F401,E402
from ..ops.loss_more import *  # noqa: F401,F403,E402 - margin, ranking and likelihood losses (loss_more.py's __all__)
from ..ops.ctc import ctc_loss  # noqa: F401,E402
from ..ops.pool_more import *  # noqa: F401,F403,E402 - lp_pool, fractional_max_pool, upsample_* (pool_more.py's __all__)
from ..ops.bilinear import bilinear  # noqa: F401,E402
from ..ops.embedding_bag import embedding_bag  # noqa: F401,E402
from ..ops.mha import multi_head_attention_forward  # noqa: F401,E402
from ..ops.distance import pdist  # noqa: F401,E402
from ..ops.dropout_alpha import alpha_dropout, feature_alpha_dropout  # noqa: F401,E402
from ..overrides import (handle_torch_function, has_torch_function, has_torch_function_unary,  # noqa: F401,E402
                         has_torch_function_variadic)   # (PyTorch's functional module imports them too)
from ..tensor import Tensor  # noqa: F401,E402


@takes_tensors("input")
def native_channel_shuffle(input, groups):
    """``channel_shuffle``'s values, (N, g * k, *) -> channels reordered as the transpose of (k, g); as in PyTorch,
    this form (also ``minigrad.native_channel_shuffle``) has no derivative: backward through it raises."""
    from ..autograd import no_grad
    from ..autograd.function import NoDerivative
    channels = input.shape[1] if input.ndim > 1 else 0
    if groups > 0 and channels % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {channels} channels and "
                           f"{groups} groups.")
    with no_grad():
        values = channel_shuffle(input, groups)._data
    return NoDerivative.apply(RuntimeError, "derivative for aten::native_channel_shuffle is not implemented", values,
                              input)
