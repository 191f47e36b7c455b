"""``minigrad._inductor``: only ``config``, which scripts tune before ``torch.compile`` (a stand-in: minigrad
generates no kernels, see ``minigrad/compiler.py``)."""
from . import config  # noqa: F401
