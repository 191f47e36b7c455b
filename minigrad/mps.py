"""``minigrad.mps``: ``torch.mps`` (Apple's Metal GPUs) as PyTorch's build without MPS answers it.

``is_available()`` is False, ``device_count()`` 0 and ``manual_seed`` does nothing; the other functions need
the MPS backend and raise ``RuntimeError`` as PyTorch's do ("Cannot execute ...() without MPS backend.").
"""


def _without_mps(native):
    def call(*args, **kwargs):
        raise RuntimeError(f"Cannot execute {native}() without MPS backend.")
    call.__doc__ = f"Raises RuntimeError, as PyTorch without MPS ({native})."
    return call


def is_available():
    return False


def device_count():
    return 0


def manual_seed(seed):
    """A no-op (there is no MPS random stream)."""


empty_cache = _without_mps("emptyCache")
synchronize = _without_mps("deviceSynchronize")
seed = get_rng_state = set_rng_state = _without_mps("getDefaultGenerator")
current_allocated_memory = _without_mps("getCurrentAllocatedMemory")
driver_allocated_memory = _without_mps("getDriverAllocatedMemory")
recommended_max_memory = _without_mps("getRecommendedMaxMemory")
set_per_process_memory_fraction = _without_mps("setMemoryFraction")
