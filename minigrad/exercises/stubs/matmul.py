"""Exercise matmul: write the backward pass by hand, in NumPy.

Forward: out = a @ b with a (n, k), b (k, m). dout (n, m) is the gradient of the loss with respect to out.

Check it:  python -m minigrad.exercises check matmul matmul.py
       or  from minigrad import exercises; print(exercises.check("matmul", backward))
Arrays are float64 NumPy arrays; return NumPy arrays of the shapes of what they are gradients of.
"""
import numpy as np


def backward(dout, a, b):
    # recompute what the forward computed (statistics, normalized values, ...), then apply the chain rule
    raise NotImplementedError("write the backward: return da (n, k), db (k, m)")
