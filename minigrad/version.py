"""``minigrad.version`` (PyTorch's ``torch.version``): what this build of minigrad is. minigrad runs on the CPU
only, so the accelerator toolkits it was built with are None; it is pure Python, never a debug build.

``__version__`` here is the plain string; ``minigrad.__version__`` is the same value as a ``TorchVersion``
(``torch_version.py``), which compares as a version. setup.cfg reads the package version from this file.
"""
__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]

__version__ = "0.1.0"
debug = False
cuda = None
hip = None
rocm = None
xpu = None
git_version = "Unknown"     # PyTorch's value for a build made outside a git checkout: minigrad records no commit
