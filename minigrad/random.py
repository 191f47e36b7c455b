"""The global random generator behind ``randn``/``rand``/``dropout``/init, seeded by ``manual_seed``."""
import numpy as np

_generator = np.random.default_rng(0)


def manual_seed(seed):
    """Reseed minigrad's global generator (NumPy's PCG64; the streams differ from PyTorch's)."""
    global _generator
    _generator = np.random.default_rng(int(seed))
    return _generator


def default_generator():
    return _generator
