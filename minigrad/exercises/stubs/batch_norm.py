"""Exercise batch_norm: write the backward pass by hand, in NumPy.

Forward in training mode, x (N, C): each channel c normalized over the batch:
    mean_c = mean of x[:, c];  var_c = mean((x[:, c] - mean_c)**2) (divided by N)
    rstd_c = 1 / sqrt(var_c + eps);  xhat = (x - mean) * rstd
    y = xhat * weight + bias                  weight, bias (C,)
dy (N, C) is the gradient of the loss with respect to y.

Check it:  python -m minigrad.exercises check batch_norm batch_norm.py
       or  from minigrad import exercises; print(exercises.check("batch_norm", backward))
Arrays are float64 NumPy arrays; return NumPy arrays of the shapes of what they are gradients of.
"""
import numpy as np


def backward(dy, x, weight, bias, eps):
    # recompute what the forward computed (statistics, normalized values, ...), then apply the chain rule
    raise NotImplementedError("write the backward: return dx (N, C), dweight (C,), dbias (C,)")
