"""Exercise softmax_cross_entropy: write the backward pass by hand, in NumPy.

Forward: p = softmax(logits) over the classes (axis 1), logits (N, C), target (N,) class indices;
    loss = mean over the N rows of -log p[n, target[n]]   (a number)
dloss is the gradient of the final result with respect to loss (a number, not necessarily 1).

Check it:  python -m minigrad.exercises check softmax_cross_entropy softmax_cross_entropy.py
       or  from minigrad import exercises; print(exercises.check("softmax_cross_entropy", backward))
Arrays are float64 NumPy arrays; return NumPy arrays of the shapes of what they are gradients of.
"""
import numpy as np


def backward(dloss, logits, target):
    # recompute what the forward computed (statistics, normalized values, ...), then apply the chain rule
    raise NotImplementedError("write the backward: return dlogits (N, C)")
