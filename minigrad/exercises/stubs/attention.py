"""Exercise attention: write the backward pass by hand, in NumPy.

Forward: scores = q @ k.T / sqrt(d);  P = softmax(scores) over each row (the keys);  out = P @ v
with q (L, d), k (S, d), v (S, e). dout (L, e) is the gradient of the loss with respect to out.

Check it:  python -m minigrad.exercises check attention attention.py
       or  from minigrad import exercises; print(exercises.check("attention", backward))
Arrays are float64 NumPy arrays; return NumPy arrays of the shapes of what they are gradients of.
"""
import numpy as np


def backward(dout, q, k, v):
    # recompute what the forward computed (statistics, normalized values, ...), then apply the chain rule
    raise NotImplementedError("write the backward: return dq (L, d), dk (S, d), dv (S, e)")
