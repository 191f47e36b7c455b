"""``Size``: a tensor's shape, as PyTorch's ``torch.Size``: a tuple of ints that also counts its elements.

    >>> mg.zeros(2, 3).shape
    minigrad.Size([2, 3])
    >>> mg.Size([2, 3]).numel()
    6

It is a ``tuple`` (equal to, and hashing like, ``(2, 3)``); slicing it, adding a tuple to it or repeating it gives
a ``Size`` again.
"""
import operator


class Size(tuple):
    """A shape: a tuple of non-negative ints with ``numel()``."""

    __slots__ = ()

    def __new__(cls, sizes=()):
        sizes = tuple(sizes)
        for i, n in enumerate(sizes):
            if not isinstance(n, int) and not hasattr(n, "__index__"):
                raise TypeError(f"minigrad.Size() takes an iterable of 'int' (item {i} is '{type(n).__name__}')")
        return super().__new__(cls, (operator.index(n) for n in sizes))

    @classmethod
    def _of_shape(cls, shape):
        """The Size of an ndarray's ``shape`` (already a tuple of Python ints: no checks, the fast path
        ``Tensor.shape`` takes)."""
        return tuple.__new__(cls, shape)

    def numel(self):
        """The number of elements of a tensor of this shape (1 for ``Size([])``)."""
        count = 1
        for n in self:
            count *= n
        return count

    def __repr__(self):
        return f"minigrad.Size({list(self)})"

    __str__ = __repr__

    def __getitem__(self, index):
        found = super().__getitem__(index)
        return Size(found) if isinstance(index, slice) else found

    def __add__(self, other):
        return Size(tuple(self) + tuple(other)) if isinstance(other, tuple) else NotImplemented

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self)) if isinstance(other, tuple) else NotImplemented

    def __mul__(self, times):
        return Size(tuple(self) * times)

    __rmul__ = __mul__

    def __reduce__(self):
        return Size, (tuple(self),)


__all__ = ["Size"]
