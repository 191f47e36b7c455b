"""``torch.nn.modules.adaptive``: the adaptive softmax, and its output namedtuple ``_ASMoutput``."""
from ..adaptive import AdaptiveLogSoftmaxWithLoss, _ASMoutput  # noqa: F401

__all__ = ["AdaptiveLogSoftmaxWithLoss"]
