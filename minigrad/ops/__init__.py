"""Differentiable operations, one module per concept; each op's Function holds forward and backward together."""
