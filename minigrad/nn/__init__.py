"""Neural-network building blocks: modules, layers, losses, recurrent and Transformer layers, the
normalization layers, init and utils."""
from . import functional, init, parallel, utils  # noqa: F401
from .activation import (ELU, Flatten, Hardswish, LeakyReLU, LogSoftmax, Mish, Softmax, Softplus,  # noqa: F401
                         Unflatten)
from .layers import (GELU, Dropout, Embedding, Identity, Linear, ModuleDict, ModuleList, ReLU,  # noqa: F401
                     Sequential, Sigmoid, SiLU, Tanh)
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss,  # noqa: F401
                   MSELoss, NLLLoss, SmoothL1Loss)
from .module import Buffer, Module, Parameter  # noqa: F401
from .parameter_containers import ParameterDict, ParameterList  # noqa: F401
from .normalization import *  # noqa: F401,F403 - the norm modules (RMSNorm, ..., listed in their files' __all__)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase  # noqa: F401
from .transformer import (MultiheadAttention, Transformer, TransformerDecoder,  # noqa: F401
                          TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer)
from .pooling import *  # noqa: F401,F403 - pooling, padding, resampling, channel dropout (pooling.py's __all__)
from .conv import Conv1d, Conv2d, ConvTranspose2d  # noqa: F401,E402
from .sync_batchnorm import SyncBatchNorm  # noqa: F401
from .conv import Conv3d, ConvTranspose1d, ConvTranspose3d  # noqa: F401,E402
from .fold import Fold, Unfold  # noqa: F401,E402
from .activation import (CELU, GLU, Hardshrink, Hardsigmoid, Hardtanh, LogSigmoid, PReLU, ReLU6,  # noqa: F401,E402
                         RReLU, SELU, Softmax2d, Softmin, Softshrink, Softsign, Tanhshrink, Threshold)
from .distance import CosineEmbeddingLoss, CosineSimilarity, PairwiseDistance, TripletMarginLoss  # noqa: F401,E402
from .loss_more import *  # noqa: F401,F403,E402 - margin, ranking, likelihood and CTC losses (loss_more.py's __all__)
from .lazy import *  # noqa: F401,F403,E402 - Lazy* modules and the uninitialized placeholders (lazy.py's __all__)
from .pooling_more import *  # noqa: F401,F403,E402 - LPPool1d/2d/3d, FractionalMaxPool2d/3d (pooling_more.py's __all__)
from .layers_more import AlphaDropout, Bilinear, EmbeddingBag, FeatureAlphaDropout  # noqa: F401,E402
from .adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: F401,E402 - Grave et al.'s adaptive softmax
from .parallel import DataParallel  # noqa: F401,E402 - a pass-through on the CPU, as PyTorch's without GPUs
from . import parameter  # noqa: F401,E402 - torch.nn.parameter, where programs import Parameter from
from . import common_types, modules  # noqa: F401,E402 - torch.nn.common_types and torch.nn.modules' files
from . import attention, grad  # noqa: F401,E402 - sdpa_kernel; the convolution gradients as functions


def factory_kwargs(kwargs):
    """The keyword arguments of a module's constructor meant for tensor factories (``device``, ``dtype``,
    ``memory_format``, or a dict given as ``factory_kwargs``) as one dict: ``empty(10, **factory_kwargs(kwargs))``.
    Any other key, or a key given both ways, is a TypeError."""
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    unexpected = set(kwargs) - simple - {"factory_kwargs"}
    if unexpected:
        raise TypeError(f"unexpected kwargs {unexpected}")
    merged = dict(kwargs.get("factory_kwargs", {}))
    for key in simple & set(kwargs):
        if key in merged:
            raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
        merged[key] = kwargs[key]
    return merged
