"""Keyword forms of arguments PyTorch also takes by name: ``zeros(size=(2, 3))``, ``rand(size=...)``."""
import functools


def size_keyword(create):
    """``create(size=(2, 3))`` read as ``create((2, 3))``: PyTorch's keyword form of a creator's size."""
    @functools.wraps(create)
    def creator(*size, **kwargs):
        if "size" in kwargs:
            if size:
                raise TypeError(f"{create.__name__}() got multiple values for argument 'size'")
            size = (kwargs.pop("size"),)
        return create(*size, **kwargs)
    return creator
