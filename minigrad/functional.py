"""``minigrad.functional``: PyTorch's ``torch.functional`` module, the tensor functions written in Python there.
Each name is the same object as minigrad's top-level one (``minigrad.functional.einsum is minigrad.einsum``)."""
from typing import overload  # noqa: F401  (torch.functional re-exports typing's overload)

# from the package itself, after ``_out`` has given its functions their out= forms (imported last in __init__)
from . import (atleast_1d, atleast_2d, atleast_3d, block_diag, broadcast_shapes, broadcast_tensors, cartesian_prod,
               cdist, chain_matmul, einsum, istft, lu, meshgrid, norm, pca_lowrank, split, stft, svd_lowrank,
               tensordot, unique, unique_consecutive, unravel_index)
from .overrides import (handle_torch_function, has_torch_function, has_torch_function_unary,  # noqa: F401
                        has_torch_function_variadic)
from .tensor import Tensor  # noqa: F401

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_shapes", "broadcast_tensors",
           "cartesian_prod", "cdist", "chain_matmul", "einsum", "istft", "lu", "meshgrid", "norm", "pca_lowrank",
           "split", "stft", "svd_lowrank", "tensordot", "unique", "unique_consecutive", "unravel_index"]


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name=None, func_name=None):
    """A function that calls ``if_true`` or ``if_false`` by the boolean argument ``arg_name`` (at position
    ``arg_index``, ``default`` when not given): how PyTorch writes ``max_pool2d(..., return_indices=...)``."""
    def fn(*args, **kwargs):
        flag = kwargs[arg_name] if arg_name in kwargs else args[arg_index] if arg_index < len(args) else default
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)
    if if_true.__doc__ is None and if_false.__doc__ is not None:
        fn.__doc__ = if_false.__doc__
    else:
        fn.__doc__ = if_true.__doc__
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    return fn
