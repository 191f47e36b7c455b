"""``minigrad.nn.functional``: stateless functions with PyTorch's names and signatures."""
from ..ops.elementwise import relu, sigmoid, tanh  # noqa: F401
from ..ops.softmax import log_softmax, softmax  # noqa: F401
