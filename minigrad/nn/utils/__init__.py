"""``minigrad.nn.utils``: gradient clipping (clip_grad.py), parameter vectors (convert_parameters.py), weight
normalization (weight_norm.py), spectral normalization (spectral_norm.py), parametrizations (parametrize.py,
parametrizations.py), conv/linear-BatchNorm fusion (fusion.py), convolution weights' memory layout
(memory_format.py), ``skip_init`` (init.py) and the old ``stateless.functional_call``, with PyTorch's names."""
from . import (convert_parameters, fusion, init, memory_format, parametrizations, parametrize, rnn,  # noqa: F401
               stateless)
from .clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_,  # noqa: F401
                        get_total_norm)
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights  # noqa: F401
from .init import skip_init  # noqa: F401
from .memory_format import convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format  # noqa: F401
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: F401
from .weight_norm import remove_weight_norm, weight_norm  # noqa: F401
