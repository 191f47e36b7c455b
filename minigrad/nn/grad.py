"""The gradients of a convolution written as functions (``torch.nn.grad``): what the backward pass of ``conv2d``
gives its input and its weight for an upstream gradient ``grad_output``.

    dx = conv2d_input(x.shape, w, dy, stride, padding)       # = d<conv2d(x, w), dy>/dx
    dw = conv2d_weight(x, w.shape, dy, stride, padding)      # = d<conv2d(x, w), dy>/dw

A convolution is linear in its input and in its weight, so each gradient depends on the other operand and on
``grad_output`` only; here each is the backward pass itself (minigrad's ``autograd.grad`` of the convolution at a
zero stand-in for the missing operand), so it is differentiable with respect to the tensors given, as PyTorch's.
"""
from .. import autograd
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..creation import zeros
from ..tensor import Tensor
from . import functional as F

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]


def _gradient(conv, name, x, w, grad_output, wanted, stride, padding, dilation, groups):
    """d<conv(x, w), grad_output> / d wanted (``wanted`` is x or w, the other is given)."""
    for label, t in (("grad_output", grad_output), ("weight" if wanted is x else "input", w if wanted is x else x)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}: {label} must be a Tensor, got {type(t).__name__}")
    keep_graph = is_grad_enabled() and (grad_output.requires_grad or (w if wanted is x else x).requires_grad)
    with enable_grad():
        out = conv(x, w, None, stride, padding, dilation, groups)
        if tuple(out.shape) != tuple(grad_output.shape):
            raise RuntimeError(f"{name}: grad_output has shape {list(grad_output.shape)}, but the convolution of the "
                               f"given sizes with this stride, padding and dilation has output shape "
                               f"{list(out.shape)}")
        (grad,) = autograd.grad(out, wanted, grad_output, create_graph=keep_graph)
    return grad if keep_graph else grad.detach()


def _gradient_function(conv, wanted):
    """``conv``'s gradient with respect to its ``wanted`` operand ("input" or "weight") as PyTorch's function of
    that operand's size, the other operand and ``grad_output``."""
    name = f"{conv.__name__}_{wanted}"

    def gradient(given, size, grad_output, stride=1, padding=0, dilation=1, groups=1):
        stand_in = zeros(*size, dtype=grad_output.dtype if isinstance(grad_output, Tensor) else None,
                         requires_grad=True)
        x, w = (stand_in, given) if wanted == "input" else (given, stand_in)
        return _gradient(conv, name, x, w, grad_output, stand_in, stride, padding, dilation, groups)

    def input_gradient(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
        return gradient(weight, input_size, grad_output, stride, padding, dilation, groups)

    def weight_gradient(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
        return gradient(input, weight_size, grad_output, stride, padding, dilation, groups)

    public = input_gradient if wanted == "input" else weight_gradient
    public.__name__ = public.__qualname__ = name
    public.__doc__ = (f"The gradient of ``{conv.__name__}(input, weight, ...)`` with respect to a {wanted} of size "
                      f"``{wanted}_size``, for the upstream gradient ``grad_output``.")
    return public


conv1d_input, conv1d_weight = _gradient_function(F.conv1d, "input"), _gradient_function(F.conv1d, "weight")
conv2d_input, conv2d_weight = _gradient_function(F.conv2d, "input"), _gradient_function(F.conv2d, "weight")
conv3d_input, conv3d_weight = _gradient_function(F.conv3d, "input"), _gradient_function(F.conv3d, "weight")
