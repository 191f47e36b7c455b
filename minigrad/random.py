"""Random number generation: ``Generator`` (PyTorch's ``torch.Generator``) on NumPy's PCG64.

Every random function takes ``generator=`` (a ``minigrad.Generator``, or a NumPy ``Generator``) and
otherwise draws from the global default generator, which ``minigrad.manual_seed`` reseeds. The
streams differ from PyTorch's: the same seed gives other numbers than in PyTorch.
"""
import numpy as np

_DEFAULT_SEED = 0


class Generator:
    """A random stream with PyTorch's interface: ``manual_seed``, ``seed``, ``initial_seed``,
    ``get_state``/``set_state``. minigrad runs on the CPU only."""

    def __init__(self, device="cpu"):
        from .tensor import check_device
        check_device(device)
        self.device = "cpu"
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed):
        seed = int(seed)
        self._initial_seed = seed
        self.numpy = np.random.default_rng(seed & 0xFFFF_FFFF_FFFF_FFFF)
        return self

    def seed(self):
        """Reseed from fresh entropy; returns the new seed."""
        seed = int(np.random.SeedSequence().entropy) & 0xFFFF_FFFF_FFFF_FFFF
        self.manual_seed(seed)
        return seed

    def initial_seed(self):
        return self._initial_seed

    def get_state(self):
        """The stream's state (a dict: NumPy's bit-generator state), for ``set_state``."""
        return self.numpy.bit_generator.state

    def set_state(self, state):
        self.numpy.bit_generator.state = state
        return self


default_generator = Generator()


def manual_seed(seed):
    """Reseed minigrad's default generator (NumPy's PCG64; the streams differ from PyTorch's)."""
    return default_generator.manual_seed(seed)


def numpy_rng(generator=None):
    """The NumPy ``Generator`` to draw from: the default one, a ``minigrad.Generator``'s, or ``generator``
    itself if it is a NumPy ``Generator``."""
    if generator is None:
        return default_generator.numpy
    if isinstance(generator, Generator):
        return generator.numpy
    if isinstance(generator, np.random.Generator):
        return generator
    raise TypeError(f"generator must be a minigrad.Generator, not {type(generator).__name__}")
