"""``vmap``: a function of one sample turned into a function of a batch.

    vmap(f)(xs)                        = stack([f(xs[0]), f(xs[1]), ...])
    vmap(f, in_dims=(0, None))(xs, w)  = stack([f(xs[i], w) for i ...])        w is shared, not batched
    vmap(f, in_dims=1, out_dims=1)     the batch runs along dimension 1 of the input and of the output

``in_dims`` says, per positional argument, which dimension is the batch (None: not batched); it is an int
for all of them or a tuple with one entry per argument, and each entry may itself be a pytree matching the
argument (``({'w': 0, 'b': None},)``). ``out_dims`` says the same for the outputs. Keyword arguments are
passed unbatched. ``vmap(grad(loss), in_dims=(None, 0, 0))(params, xs, ys)`` gives per-sample gradients.

How it works here: a Python loop. PyTorch's vmap runs f once on "batched tensors" with a batching rule per
operator; minigrad's calls f once per sample (``select`` along each batch dimension) and stacks the results
along ``out_dims``. So the results and their gradients are those of ordinary operations, the time is linear
in the batch size (no speed-up over a loop you would write), and code PyTorch's vmap rejects works here:
data-dependent control flow (``if x.sum() > 0``), ``.item()``, outputs whose shape depends on the data as long
as every sample's has the same shape. ``chunk_size`` is checked and otherwise changes nothing.

``randomness``: 'error' (the default) raises PyTorch's error if f draws from the default generator (found by
comparing the generator's state before and after each call); 'different' lets each sample draw its own
numbers; 'same' gives every sample the same draws (the generator is put back in its state before each call,
then left as one call leaves it).
"""
import functools

import numpy as np

from ..creation import zeros
from ..ops.shape import stack
from ..random import default_generator, fork_rng
from ..tensor import Tensor
from ._pytree import broadcast_prefix, tree_flatten, tree_unflatten, treespec_pprint
from .transforms import _check_randomness, call_drawing_nothing

__all__ = ["vmap"]


def _name(func):
    return getattr(func, "__name__", None) or repr(func)


def _is_dim(value):
    return value is None or isinstance(value, int)


# --------------------------------------------------------------------------- inputs: which dimension, how many
def _batched_inputs(func, in_dims, args):
    """(leaves, structure, dims, batch size): the flattened arguments, each with its batch dimension (None: not
    batched, made non-negative), checked as PyTorch checks them."""
    where = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>)"
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) tuple matching the "
                         f"structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
                         "trying to vmap over a function with no inputs. The latter is unsupported.")
    leaves, structure = tree_flatten(args)
    dims = broadcast_prefix(in_dims, args)
    if dims is None:
        raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`. in_dims has structure "
                         f"{tree_flatten(in_dims)[1]!r} but inputs has structure {structure!r}.")
    checked = []
    for dim, leaf in zip(dims, leaves):
        if not _is_dim(dim):
            raise ValueError(f"{where}: Got in_dim={dim} for an input but in_dim must be either an integer dimension "
                             "or None.")
        if dim is not None and not isinstance(leaf, Tensor):
            raise ValueError(f"{where}: Got in_dim={dim} for an input but the input is of type {type(leaf)}. We "
                             "cannot vmap over non-Tensor arguments, please use None as the respective in_dim")
        if dim is not None and not -leaf.ndim <= dim < leaf.ndim:
            raise ValueError(f"{where}: Got in_dim={dim} for some input, but that input is a Tensor of "
                             f"dimensionality {leaf.ndim} so expected in_dim to satisfy -{leaf.ndim} <= in_dim < "
                             f"{leaf.ndim}.")
        checked.append(None if dim is None else dim % leaf.ndim)
    sizes = [leaf.shape[dim] for leaf, dim in zip(leaves, checked) if dim is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(size != sizes[0] for size in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return leaves, structure, checked, sizes[0]


def _sample(leaves, structure, dims, index):
    """The arguments of sample ``index``: each batched tensor's slice along its batch dimension."""
    return tree_unflatten([leaf if dim is None else leaf.select(dim, index) for leaf, dim in zip(leaves, dims)],
                          structure)


def _stand_in_sample(leaves, structure, dims):
    """Arguments shaped as one sample, filled with zeros: for an empty batch, f still runs once so that the
    results' structure, dtypes and shapes are known."""
    def one(leaf, dim):
        if dim is None:
            return leaf
        shape = tuple(leaf.shape[:dim]) + tuple(leaf.shape[dim + 1:])
        return zeros(shape, dtype=leaf.dtype)
    return tree_unflatten([one(leaf, dim) for leaf, dim in zip(leaves, dims)], structure)


# --------------------------------------------------------------------------- randomness
class _Randomness:
    """Runs each sample's call under the ``randomness`` rule (see the module docstring)."""

    def __init__(self, mode):
        self.mode = mode
        self.start = default_generator.snapshot() if mode == "same" else None

    def call(self, func, args, kwargs):
        if self.mode == "same":
            default_generator.restore(self.start)
        if self.mode == "error":
            return call_drawing_nothing(func, args, kwargs)
        return func(*args, **kwargs)


# --------------------------------------------------------------------------- outputs: stacked along out_dims
def _check_out_dims(func, out_dims):
    if not all(_is_dim(dim) for dim in tree_flatten(out_dims)[0]):
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a python "
                         "collection of ints representing where in the outputs the vmapped dimension should appear.")


def _output_dims(func, out_dims, output, structure):
    """One out_dim per output leaf (``out_dims`` broadcast over the output's structure)."""
    if isinstance(out_dims, tuple) and len(out_dims) == 1 and structure.is_leaf():
        out_dims = out_dims[0]                       # out_dims=(1,) for a single tensor, as PyTorch allows
    dims = broadcast_prefix(out_dims, output)
    if dims is None:
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with "
                         f"the structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]!r} but "
                         f"outputs has structure {structure!r}.")
    return dims


def _same_values(a, b):
    if not isinstance(a, Tensor):
        return True                                  # a non-tensor output with out_dim None: the first is kept
    return a.shape == b.shape and np.array_equal(a._data, b._data, equal_nan=a.dtype.kind in "fc")


def _joined(func, samples, dim, position):
    """The outputs at ``position`` of every sample, stacked along ``dim`` (None: one shared value)."""
    name = _name(func)
    first = samples[0]
    if dim is not None:
        for value in samples:
            if not isinstance(value, Tensor):
                raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(value)}. Did "
                                 "you mean to set out_dims= to None for output?")
        for i, value in enumerate(samples[1:], 1):
            if value.shape != first.shape:
                raise RuntimeError(f"vmap({name}, ...): output {position} has shape {list(first.shape)} for sample 0 "
                                   f"but {list(value.shape)} for sample {i}: this vmap (a loop over the samples) "
                                   "stacks the outputs, which needs one shape for all samples")
        return stack(samples, dim)
    if not all(_same_values(first, value) for value in samples[1:]):
        raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
    return first


def _empty_outputs(func, output, dims):
    """The results for a batch of size 0, from one call on a stand-in sample: each batched output with a batch
    dimension of size 0."""
    leaves, structure = tree_flatten(output)
    empty = []
    for position, (leaf, dim) in enumerate(zip(leaves, dims)):
        if dim is None:
            empty.append(leaf)
            continue
        joined = _joined(func, [leaf], dim, position)
        empty.append(joined.narrow(dim % joined.ndim, 0, 0))
    return tree_unflatten(empty, structure)


# --------------------------------------------------------------------------- vmap
def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` of one sample -> a function of a batch: ``func`` called on each sample (the slices along
    ``in_dims``) and the results stacked along ``out_dims``. A loop over the batch: see the module docstring."""
    _check_randomness(randomness)
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        leaves, structure, dims, size = _batched_inputs(func, in_dims, args)
        _check_out_dims(func, out_dims)
        if size == 0:
            with fork_rng():
                output = func(*_stand_in_sample(leaves, structure, dims), **kwargs)
            out_leaves, out_structure = tree_flatten(output)
            return _empty_outputs(func, output, _output_dims(func, out_dims, output, out_structure))
        rule = _Randomness(randomness)
        outputs = [rule.call(func, _sample(leaves, structure, dims, i), kwargs) for i in range(size)]
        flat = [tree_flatten(output) for output in outputs]
        out_structure = flat[0][1]
        for i, (_, other) in enumerate(flat[1:], 1):
            if other != out_structure:
                raise RuntimeError(f"vmap({_name(func)}, ...): `{_name(func)}` returned outputs of structure "
                                   f"{treespec_pprint(out_structure)} for sample 0 but {treespec_pprint(other)} for "
                                   f"sample {i}: "
                                   "every sample must give outputs of one structure")
        dims_out = _output_dims(func, out_dims, outputs[0], out_structure)
        joined = [_joined(func, [leaves_[position] for leaves_, _ in flat], dim, position)
                  for position, dim in enumerate(dims_out)]
        return tree_unflatten(joined, out_structure)
    return wrapper
