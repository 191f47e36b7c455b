"""Utilities with PyTorch's names: ``minigrad.utils.data`` (datasets, samplers, ``DataLoader``),
``minigrad.utils.checkpoint`` (activation checkpointing), ``minigrad.utils.dlpack`` (sharing memory with other
libraries) and ``minigrad.utils.hooks`` (hook handles)."""
from . import benchmark, checkpoint, data, dlpack, hooks

__all__ = ["benchmark", "checkpoint", "data", "dlpack", "hooks"]
