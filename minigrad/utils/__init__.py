"""Utilities with PyTorch's names: ``minigrad.utils.data`` (datasets, samplers, ``DataLoader``) and
``minigrad.utils.checkpoint`` (activation checkpointing)."""
from . import checkpoint, data

__all__ = ["checkpoint", "data"]
