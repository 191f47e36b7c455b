"""``torch.nn.modules.activation``: the activation modules, and MultiheadAttention (PyTorch defines it here)."""
from ..activation import (CELU, ELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid,
                          LogSoftmax, Mish, PReLU, ReLU6, RReLU, Softmax, Softmax2d, Softmin, Softplus, Softshrink,
                          Softsign, Tanhshrink, Threshold)
from ..layers import GELU, ReLU, Sigmoid, SiLU, Tanh
from ..transformer import MultiheadAttention

__all__ = ["Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh", "SiLU", "Mish",
           "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink", "LeakyReLU", "LogSigmoid", "Softplus",
           "Softshrink", "MultiheadAttention", "PReLU", "Softsign", "Tanhshrink", "Softmin", "Softmax", "Softmax2d",
           "LogSoftmax"]
