"""``minigrad.backends.mkldnn``: oneDNN is not used by minigrad (NumPy and numba compute every op);
``enabled`` may be set as in PyTorch and changes nothing."""

enabled = True


def is_available():
    return False
