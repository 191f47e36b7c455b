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


# ``torch.compiler``'s other names, for code that marks what the compiler should leave alone: minigrad runs
# everything eagerly, so each marks nothing and returns what it is given.
def disable(fn=None, recursive=True, *, reason=None):
    """``fn`` unchanged (as a decorator with or without arguments)."""
    return (lambda f: f) if fn is None else fn


def allow_in_graph(fn):
    return fn


def assume_constant_result(fn):
    return fn


def substitute_in_graph(original_fn, *, can_constant_fold_through=False, skip_signature_check=False):
    """A decorator returning the substitute unchanged (nothing is traced, so ``original_fn`` keeps running)."""
    return lambda fn: fn


def reset():
    """Nothing compiled, nothing to forget."""


def is_dynamo_compiling():
    return False


def is_exporting():
    return False


def list_backends(exclude_tags=("debug", "experimental")):
    """No compiler backends."""
    return []


def cudagraph_mark_step_begin():
    """No CUDA graphs."""


class set_stance:  # noqa: N801 - PyTorch's name
    """A context manager and decorator accepted as PyTorch's (``set_stance("force_eager")``): minigrad is always
    eager."""

    def __init__(self, stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
        self.stance = stance

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        return fn
