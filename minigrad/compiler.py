"""``minigrad.compile``: accepted and returns what it is given (minigrad has no compiler).

Works as ``model = mg.compile(model, mode=...)``, ``@mg.compile`` and ``@mg.compile(fullgraph=True)``;
every keyword of ``torch.compile`` is accepted and ignored.
"""


def compile(model=None, **options):  # noqa: A001 - PyTorch's name
    """``model`` unchanged; without a model, a decorator that returns the function unchanged."""
    if model is None:
        return lambda fn: fn
    return model


def is_compiling():
    return False
