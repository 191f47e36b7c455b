"""``minigrad.nn.utils``: gradient clipping and parameter vectors (clip_grad.py), weight normalization
(weight_norm.py), spectral normalization (spectral_norm.py), parametrizations (parametrize.py,
parametrizations.py) and conv/linear-BatchNorm fusion (fusion.py), with PyTorch's names."""
from . import fusion, parametrizations, parametrize, rnn  # noqa: F401
from .clip_grad import clip_grad_norm_, clip_grad_value_, parameters_to_vector, vector_to_parameters  # noqa: F401
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights  # noqa: F401
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: F401
from .weight_norm import remove_weight_norm, weight_norm  # noqa: F401
