"""Exercise layer_norm: write the backward pass by hand, in NumPy.

Forward, per row of x (N, D):
    mean = mean of the row;  var = mean((x - mean)**2) over the row (divided by D)
    rstd = 1 / sqrt(var + eps);  xhat = (x - mean) * rstd
    y = xhat * weight + bias                  weight, bias (D,)
dy (N, D) is the gradient of the loss with respect to y.

Check it:  python -m minigrad.exercises check layer_norm layer_norm.py
       or  from minigrad import exercises; print(exercises.check("layer_norm", backward))
Arrays are float64 NumPy arrays; return NumPy arrays of the shapes of what they are gradients of.
"""
import numpy as np


def backward(dy, x, weight, bias, eps):
    # recompute what the forward computed (statistics, normalized values, ...), then apply the chain rule
    raise NotImplementedError("write the backward: return dx (N, D), dweight (D,), dbias (D,)")
