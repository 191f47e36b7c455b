"""PyTorch's symbolic-shape helpers and structured control flow, run eagerly: ``sym_int``, ``sym_float``,
``sym_max``, ``sym_min``, ``sym_not``, ``sym_sqrt``, ``sym_ite``, ``sym_sum``, ``sym_fresh_size``, ``cond`` and
``while_loop``.

minigrad never traces a program, so there are no symbolic sizes: each ``sym_*`` function gives what PyTorch's gives
for plain Python numbers (and 0-d tensors where PyTorch takes them), with its type rules (``sym_max(2, 3.0)`` is
``3.0``: a float as soon as one argument is a float) and its errors (AssertionError for an argument it does not
take). ``cond`` and ``while_loop`` run the branch taken / the loop in Python, on the tensors given, so gradients
flow through the ops the branch or the body ran. With a tensor predicate PyTorch compiles the call, which checks
the arguments and the outputs; minigrad checks the same things on what actually ran (the branch not taken is not
run, so a mismatch between the two branches' outputs goes unnoticed).
"""
import builtins
import math

import numpy as np

from .autograd.version import storage_of
from .tensor import Tensor

__all__ = ["sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_sqrt", "sym_ite", "sym_sum",
           "sym_fresh_size", "cond", "while_loop", "SymInt", "SymFloat", "SymBool", "_assert"]


# --------------------------------------------------------------------------- symbolic numbers: never made here
class _Symbolic:
    """Base of PyTorch's symbolic numbers, which exist only while a compiler traces a program. minigrad traces
    nothing, so none is ever made: the classes are there for type annotations and ``isinstance`` checks (which
    are False for every number, as in eager PyTorch)."""

    def __init__(self, node):
        raise TypeError(f"{type(self).__name__} stands for a size traced by a compiler; minigrad runs eagerly and "
                        "has none (use a Python number)")


class SymInt(_Symbolic):
    """A traced integer (``isinstance(n, SymInt)`` is False for every value in minigrad)."""


class SymFloat(_Symbolic):
    """A traced float (``isinstance(x, SymFloat)`` is False for every value in minigrad)."""


class SymBool(_Symbolic):
    """A traced bool (``isinstance(b, SymBool)`` is False for every value in minigrad)."""


for _cls in (SymInt, SymFloat, SymBool):
    _cls.__module__ = "minigrad"
del _cls


def _assert(condition, message):
    """``assert condition, message`` as a function (models call it where a statement cannot be traced): raises
    AssertionError(message) when ``condition`` is false; a tensor condition must have one element."""
    assert condition, message


# --------------------------------------------------------------------------- the sym_* helpers
def sym_int(a):
    """``int(a)`` (a float truncated toward zero)."""
    return builtins.int(a)


def sym_float(a):
    """``float(a)``."""
    if hasattr(a, "__sym_float__"):
        return a.__sym_float__()
    return builtins.float(a)


_ALL_TYPES = (np.integer, np.floating, builtins.int, builtins.float)
_FLOAT_TYPES = (np.floating, builtins.float)


def _check_number(value):
    if not isinstance(value, _ALL_TYPES):
        raise AssertionError(f"expected {_ALL_TYPES}, got {type(value)}")


def sym_max(a, b):
    """The larger of two numbers; a float if either is one (``sym_max(2, 3.0) == 3.0``, ``sym_max(3, 2.0) ==
    3.0``), otherwise as ``max`` (ints, bools). Tensors are refused, as in PyTorch."""
    _check_number(a)
    _check_number(b)
    if isinstance(a, _FLOAT_TYPES) or isinstance(b, _FLOAT_TYPES):
        return builtins.float(builtins.max(a, b))
    return builtins.max(a, b)


def sym_min(a, b):
    """The smaller of two numbers, with ``sym_max``'s type rules."""
    _check_number(a)
    _check_number(b)
    if isinstance(a, _FLOAT_TYPES) or isinstance(b, _FLOAT_TYPES):
        return builtins.float(builtins.min(a, b))
    return builtins.min(a, b)


def sym_not(a):
    """``not a`` (a one-element tensor gives its truth value negated, a Python bool)."""
    if hasattr(a, "__sym_not__"):
        return a.__sym_not__()
    return not a


def sym_sqrt(a):
    """``math.sqrt(a)``: a Python float."""
    if hasattr(a, "__sym_sqrt__"):
        return a.__sym_sqrt__()
    return math.sqrt(a)


def sym_ite(b, t, f):
    """``t if b else f``: ``b`` a Python bool, ``t`` and ``f`` of the same type."""
    if not isinstance(b, builtins.bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f


def sym_sum(*args):
    """The sum of the arguments, given as ``sym_sum([a, b, c])`` or ``sym_sum(a, b, c)`` (``sum`` from 0: tensors
    add up to a tensor)."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    return builtins.sum(args)


def sym_fresh_size(expr):
    """``expr`` as a tensor's Python number (``tensor(expr).item()``)."""
    from .creation import tensor
    return tensor(expr).item()


# --------------------------------------------------------------------------- nested inputs and outputs
def _leaves(tree):
    """The leaves of nested tuples, lists and dicts (dict values in key order), as PyTorch's pytree flattens."""
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in _leaves(item)]
    if isinstance(tree, dict):
        return [leaf for key in tree for leaf in _leaves(tree[key])]
    return [tree]


def _map(fn, tree):
    """``tree`` with each leaf replaced by ``fn(leaf)``, the containers rebuilt (a namedtuple as a namedtuple)."""
    if isinstance(tree, tuple):
        items = [_map(fn, item) for item in tree]
        return type(tree)(*items) if hasattr(tree, "_fields") else type(tree)(items)
    if isinstance(tree, list):
        return type(tree)(_map(fn, item) for item in tree)
    if isinstance(tree, dict):
        return type(tree)((key, _map(fn, value)) for key, value in tree.items())
    return fn(tree)


_ALIASING = ("{op}: an output of {fn} is one of its inputs or a view of one (higher order ops do not support "
             "aliasing): return input.clone() instead of input")


def _check_no_aliasing(outputs, inputs, op, fn):
    memories = {id(storage_of(t._data)) for t in inputs if isinstance(t, Tensor)}
    if any(isinstance(o, Tensor) and id(storage_of(o._data)) in memories for o in outputs):
        raise RuntimeError(_ALIASING.format(op=op, fn=fn))


# --------------------------------------------------------------------------- cond
def cond(pred, true_fn, false_fn, operands=()):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``. ``pred`` is a Python bool or number (the
    branch is simply called, as in PyTorch's eager mode) or a one-element tensor; then, as PyTorch checks, both
    branches must be callable, ``operands`` a tuple or list of (possibly nested tuples, lists and dicts of)
    tensors, and the branch's outputs tensors or ints that are not its inputs nor views of them."""
    if isinstance(pred, (builtins.bool, builtins.int, builtins.float)):
        return true_fn(*operands) if pred else false_fn(*operands)
    if not isinstance(pred, Tensor):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    if not isinstance(operands, (tuple, list)) or not all(isinstance(t, Tensor) for t in _leaves(operands)):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple that only consists of "
                           f"tensor leaves, but got {operands}.")
    out = (true_fn if pred.item() else false_fn)(*operands)
    outputs = _leaves(out)
    for o in outputs:
        if not isinstance(o, (Tensor, builtins.int)):
            raise RuntimeError(f"torch.cond: a branch's output must consist of tensors or ints/bools only, but got "
                               f"{type(o)}")
    _check_no_aliasing(outputs, _leaves(operands), "torch.cond", "the branch")
    return out


# --------------------------------------------------------------------------- while_loop
def _metadata_differences(outputs, carried):
    """PyTorch's description of how the body's outputs differ from the carried inputs (type, shape, dtype)."""
    found = []
    for i, (o, c) in enumerate(zip(outputs, carried)):
        if isinstance(o, Tensor) and isinstance(c, Tensor):
            diffs = [f"{what}: {x} vs {y}" for what, x, y in (("shape", tuple(o.shape), tuple(c.shape)),
                                                               ("dtype", o.dtype, c.dtype)) if x != y]
            if diffs:
                found.append(f"pair[{i}] differ in '{', '.join(diffs)}'")
        elif not (isinstance(o, builtins.int) and isinstance(c, builtins.int)) and not (
                isinstance(o, Tensor) and isinstance(c, Tensor)):
            found.append(f"pair[{i}] differ in type: {type(o).__name__} vs {type(c).__name__}, where lhs is {o!r} "
                         f"and rhs is {c!r}")
    return found


def while_loop(cond_fn, body_fn, carried_inputs):
    """``val = carried_inputs; while cond_fn(*val): val = body_fn(*val)``, returned. ``carried_inputs`` is a tuple
    or list of (nested tuples, lists and dicts of) tensors and ints; ``cond_fn`` returns a Python bool or a 0-d bool
    tensor; ``body_fn`` returns new values of the same structure, types, shapes and dtypes, none of them an input
    or a view of one (PyTorch's checks). With no iteration, the result is a tuple of copies of the inputs."""
    if not callable(cond_fn) or not callable(body_fn):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list but got {type(carried_inputs)}")
    carried = _leaves(carried_inputs)
    if not all(isinstance(leaf, (Tensor, builtins.int)) for leaf in carried):
        raise AssertionError(f"{carried} can only be of ({Tensor}, {builtins.int}) but got "
                             f"{tuple(type(leaf) for leaf in carried)}")

    def check_pred(pred):
        if isinstance(pred, builtins.bool) or (isinstance(pred, Tensor) and pred.shape == () and
                                               pred.dtype == np.bool_):
            return builtins.bool(pred)
        raise RuntimeError(f"cond_fn must return a boolean scalar tensor or a boolean but got {pred}")

    values = carried_inputs
    if not check_pred(cond_fn(*values)):
        return _map(lambda v: v.clone() if isinstance(v, Tensor) else v, tuple(carried_inputs))
    while True:
        out = body_fn(*values)
        outputs, inputs = _leaves(out), _leaves(values)
        if len(outputs) != len(inputs):
            raise RuntimeError(f"Expected body_fn_output and carried_inputs to have same number of outputs but got "
                               f"lhs:{outputs} and rhs:{inputs}")
        differences = _metadata_differences(outputs, inputs)
        if differences:
            raise RuntimeError("Expected body_fn_output and carried_inputs to have same metadata but found:\n"
                               + "\n".join(differences))
        _check_no_aliasing(outputs, inputs, "torch.while_loop", "body_fn")
        values = out if isinstance(out, (tuple, list)) else (out,)
        if not check_pred(cond_fn(*values)):
            return out
