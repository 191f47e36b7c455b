"""``minigrad.utils.tensorboard``: ``SummaryWriter``, PyTorch's TensorBoard logger (``writer.py``).

Needs the ``tensorboard`` package (``pip install "minigrad[tensorboard]"``); without it, making a
``SummaryWriter`` raises an ImportError saying so.
"""
from .writer import FileWriter, SummaryWriter

__all__ = ["FileWriter", "SummaryWriter"]
