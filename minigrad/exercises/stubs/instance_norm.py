"""Exercise instance_norm: write the backward pass by hand, in NumPy.

Forward, x (N, C, *spatial): each (sample, channel) normalized over its positions:
    mean, var (divided by the count) over the spatial axes;  xhat = (x - mean) / sqrt(var + eps)
    y = xhat * weight[c] + bias[c]            weight, bias (C,)
dy has x's shape.

Check it:  python -m minigrad.exercises check instance_norm instance_norm.py
       or  from minigrad import exercises; print(exercises.check("instance_norm", backward))
Arrays are float64 NumPy arrays; return NumPy arrays of the shapes of what they are gradients of.
"""
import numpy as np


def backward(dy, x, weight, bias, eps):
    # recompute what the forward computed (statistics, normalized values, ...), then apply the chain rule
    raise NotImplementedError("write the backward: return dx (x's shape), dweight (C,), dbias (C,)")
