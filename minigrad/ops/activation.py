"""Activations and dropout: gelu (exact and tanh), silu, dropout."""


def gelu(input, approximate="none"):
    raise NotImplementedError


def silu(input):
    raise NotImplementedError


def dropout(input, p=0.5, training=True):
    raise NotImplementedError
