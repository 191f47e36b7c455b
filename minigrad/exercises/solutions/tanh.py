"""tanh backward, worked solution: y = tanh(x), d tanh / dx = 1 - tanh(x)^2."""
import numpy as np


def backward(dout, x):
    y = np.tanh(x)
    return dout * (1 - y * y)
