"""``torch.nn.modules.linear_cross_entropy``: PyTorch's chunked implementation of ``LinearCrossEntropyLoss``
(defined in ``loss``); it exports no names."""

__all__ = []
