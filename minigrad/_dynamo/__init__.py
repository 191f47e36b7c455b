"""``minigrad._dynamo``: the ``torch._dynamo`` names training scripts touch around ``torch.compile``.

minigrad's ``compile`` returns the model unchanged (``minigrad/compiler.py``), so there is nothing to
configure, reset or guard: ``config`` takes what scripts set (``suppress_errors``, ``cache_size_limit``, ...)
and changes nothing, and the functions here do what PyTorch's do for code that never compiles.
"""
from ..compiler import disable, is_compiling  # noqa: F401
from . import config  # noqa: F401


def reset():
    """Nothing to clear: nothing was compiled."""


def mark_dynamic(t, index, *, min=None, max=None, specialize_on=None):  # noqa: A002 - PyTorch's names
    """A no-op: minigrad traces no shapes."""


def maybe_mark_dynamic(t, index):
    """A no-op, as ``mark_dynamic``."""


def mark_static(t, index=None):
    """A no-op, as ``mark_dynamic``."""


def graph_break(msg=""):
    """A no-op: there is no graph to break."""


def allow_in_graph(fn):
    return fn


def disallow_in_graph(fn):
    return fn


def list_backends(exclude_tags=("debug", "experimental")):
    """No compiler backends: minigrad runs every op eagerly."""
    return []
