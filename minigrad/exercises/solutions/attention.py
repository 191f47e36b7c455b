"""Attention backward, worked solution: out = P v, P = softmax(S), S = q k^T * s, s = 1/sqrt(d)."""
import numpy as np


def backward(dout, q, k, v):
    s = 1 / np.sqrt(q.shape[1])
    scores = q @ k.T * s                                # (L, S)
    P = np.exp(scores - scores.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    dv = P.T @ dout                                     # out = P v
    dP = dout @ v.T                                     # (L, S)
    dS = P * (dP - (P * dP).sum(axis=1, keepdims=True))  # softmax backward, row by row
    dq = dS @ k * s
    dk = dS.T @ q * s
    return dq, dk, dv
