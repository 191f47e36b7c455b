"""Exercise rms_norm: write the backward pass by hand, in NumPy.

Forward, per row of x (N, D):
    rstd = 1 / sqrt(mean(x**2 over the row) + eps)
    y = x * rstd * weight                     weight (D,)
dy (N, D) is the gradient of the loss with respect to y.

Check it:  python -m minigrad.exercises check rms_norm rms_norm.py
       or  from minigrad import exercises; print(exercises.check("rms_norm", backward))
Arrays are float64 NumPy arrays; return NumPy arrays of the shapes of what they are gradients of.
"""
import numpy as np


def backward(dy, x, weight, eps):
    # recompute what the forward computed (statistics, normalized values, ...), then apply the chain rule
    raise NotImplementedError("write the backward: return dx (N, D), dweight (D,)")
