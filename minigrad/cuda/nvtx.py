"""``minigrad.cuda.nvtx``: NVIDIA's profiler markers; every function raises as in PyTorch's CPU-only build."""
import contextlib

_MESSAGE = "NVTX functions not installed. Are you sure you have a CUDA build?"


def range_push(msg):
    raise RuntimeError(_MESSAGE)


def range_pop():
    raise RuntimeError(_MESSAGE)


def range_start(msg):
    raise RuntimeError(_MESSAGE)


def range_end(range_id):
    raise RuntimeError(_MESSAGE)


def mark(msg):
    raise RuntimeError(_MESSAGE)


@contextlib.contextmanager
def range(msg, *args, **kwargs):  # noqa: A001 - PyTorch's name
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
