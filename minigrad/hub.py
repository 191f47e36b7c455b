"""``minigrad.hub``: the names of ``torch.hub``, without its loading.

PyTorch Hub repositories are PyTorch code (a ``hubconf.py`` that imports torch), so ``load``, ``list``,
``help`` and ``load_state_dict_from_url`` raise ``NotImplementedError`` saying so; ``get_dir`` and
``set_dir`` keep a cache directory as PyTorch's do (``$MINIGRAD_HOME/hub``, ``~/.cache/minigrad/hub`` by
default), so code that only reads the setting runs.
"""
import os

_hub_dir = None


def get_dir():
    """The hub cache directory: ``set_dir``'s, else ``$MINIGRAD_HOME/hub`` (``$XDG_CACHE_HOME/minigrad/hub``)."""
    if _hub_dir is not None:
        return _hub_dir
    cache = os.getenv("XDG_CACHE_HOME", os.path.join(os.path.expanduser("~"), ".cache"))
    return os.path.join(os.getenv("MINIGRAD_HOME", os.path.join(cache, "minigrad")), "hub")


def set_dir(d):
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


def _unavailable(what):
    raise NotImplementedError(f"minigrad.hub.{what}: PyTorch Hub models are PyTorch code and cannot be loaded "
                              "by minigrad. Build the model with minigrad.nn and load its weights with "
                              "minigrad.load (or Module.load_state_dict).")


def load(repo_or_dir, model, *args, **kwargs):
    _unavailable("load")


def list(github, force_reload=False, skip_validation=False, trust_repo=None, verbose=True):  # noqa: A001
    _unavailable("list")


def help(github, model, force_reload=False, skip_validation=False, trust_repo=None):  # noqa: A001
    _unavailable("help")


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False,
                             file_name=None, weights_only=False):
    _unavailable("load_state_dict_from_url")


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    _unavailable("download_url_to_file")
