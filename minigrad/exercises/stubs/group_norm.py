"""Exercise group_norm: write the backward pass by hand, in NumPy.

Forward, x (N, C, *spatial), C divisible by num_groups = G:
    the channels are split into G consecutive groups of C/G channels; for each sample n and group g,
    mean and var (divided by the count) are taken over the group's channels and all positions;
    xhat = (x - mean) / sqrt(var + eps);  y = xhat * weight[c] + bias[c]     weight, bias (C,)
dy has x's shape.

Check it:  python -m minigrad.exercises check group_norm group_norm.py
       or  from minigrad import exercises; print(exercises.check("group_norm", backward))
Arrays are float64 NumPy arrays; return NumPy arrays of the shapes of what they are gradients of.
"""
import numpy as np


def backward(dy, x, num_groups, weight, bias, eps):
    # recompute what the forward computed (statistics, normalized values, ...), then apply the chain rule
    raise NotImplementedError("write the backward: return dx (x's shape), dweight (C,), dbias (C,)")
