"""``minigrad.autograd.forward_ad``: forward-mode AD with PyTorch's API (``torch.autograd.forward_ad``).

Inside a ``dual_level``, ``make_dual(x, t)`` gives a tensor equal to ``x`` that carries a *tangent* ``t``; every op on
it gives a result carrying J t (J the op's Jacobian), and ``unpack_dual(y)`` reads ``(primal, tangent)`` back.

How minigrad computes it: there are no per-op forward formulas. ``Function.apply`` hands an op whose arguments carry
tangents to :func:`_apply` (one module-global test per op while no level is active). It runs the op as usual, then
runs it again on detached copies of its inputs and gets J t from two reverse passes (the "double vjp"):
g(u) = J^T u is linear in u, so d/du <g(u), t> = J t. Every op of minigrad with a differentiable backward (the ones
``create_graph=True`` supports) thus gets forward AD; an op whose backward is not differentiable raises an error
naming it. In-place ops (``ops/inplace.py``'s ``write``) call :func:`_write`, which updates the tensor's tangent in
place, so that views of the tangent (a view's tangent is the same view of its base's tangent) see it.

Tangents live outside the Tensor class: a dict keyed by ``id(tensor)``, whose entry a weakref callback drops when
the tensor dies; ``exit_dual_level`` drops them all.
"""
import contextlib
from typing import Any, NamedTuple

import numpy as np

from ..dtypes import is_differentiable
from . import function as _function
from . import grad_mode

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]

_current_level = -1          # as PyTorch's module attribute: the active level, -1 when none
_generation = [0]            # counts the levels entered: a tangent recorded on a node in an earlier one is stale
_fwd_grad_enabled = [True]   # _set_fwd_grad_enabled(False) stops tangents from flowing (they are kept)
_tangents = {}               # id(tensor) -> (weakref to the tensor, its tangent Tensor)
_probe = np.random.default_rng(0x5EED)   # the u of the double vjp (never the user's random streams)

# Function.apply reads ``dual_active`` (True while a level is active and forward grad is enabled) and then calls
# ``dual_apply``; ops/inplace.py's ``write`` calls ``dual_write``. Both are set here, at import (autograd/__init__.py
# imports this module before any op can run).
_function.dual_active = False


def _refresh():
    _function.dual_active = _current_level >= 0 and _fwd_grad_enabled[0]


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the ``primal`` (a view of the dual tensor) and its ``tangent`` (or None)."""
    primal: Any
    tangent: Any


# --------------------------------------------------------------------------- levels
def enter_dual_level():
    """Start a forward AD level and return its index (0: minigrad, as PyTorch, supports one level at a time)."""
    global _current_level
    if _current_level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current_level = 0
    _generation[0] += 1
    _refresh()
    return _current_level


def exit_dual_level(*, level=None):
    """End the level (the current one by default): every tangent made in it is dropped."""
    global _current_level
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if _current_level < 0:
        raise RuntimeError("Trying to access a forward AD level with an invalid index. This index was either "
                           "not created or is already deleted.")
    if level != _current_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is "
                           "not supported.")
    _tangents.clear()
    _current_level = -1
    _refresh()


class dual_level:
    """Context manager (and decorator) for a forward AD level: ``with dual_level(): ...``. All tangents are dropped
    when the block ends; ``__enter__`` returns the level's index."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapped


def _is_fwd_grad_enabled():
    return _fwd_grad_enabled[0]


class _set_fwd_grad_enabled:
    """Turn the flow of tangents through ops on (True) or off (False), now; as a context manager, restore it after."""

    def __init__(self, mode):
        self.prev = _fwd_grad_enabled[0]
        _fwd_grad_enabled[0] = bool(mode)
        _refresh()

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _fwd_grad_enabled[0] = self.prev
        _refresh()
        return False


# --------------------------------------------------------------------------- dual tensors
def _tangent_of(t):
    entry = _tangents.get(id(t))
    return None if entry is None else entry[1]


def _store(t, tangent):
    """``t`` carries ``tangent`` (until either dies or the level exits)."""
    import weakref
    key = id(t)

    def drop(ref, key=key):
        entry = _tangents.get(key)
        if entry is not None and entry[0] is ref:
            del _tangents[key]
    _tangents[key] = (weakref.ref(t, drop), tangent)


@contextlib.contextmanager
def _suspended():
    """Ops run inside this block propagate no tangent (minigrad's own bookkeeping ops)."""
    prev = _function.dual_active
    _function.dual_active = False
    try:
        yield
    finally:
        _function.dual_active = prev


def _alias(t):
    """A view of ``t`` (all of it) with the same history, carrying no tangent."""
    from ..ops import shape as _shape
    with _suspended():
        return _shape.view(t, tuple(t.shape))


def _dtype_name(dtype):
    return f"minigrad.{dtype}"


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` carrying ``tangent`` (same shape, floating point) at the current level: ops on it give
    results whose tangent is the Jacobian-vector product. Its ``requires_grad`` is ``tensor``'s."""
    Tensor = _function.Tensor
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    for what, t in (("primal", tensor), ("tangent", tangent)):
        if not isinstance(t, Tensor):
            raise AttributeError(f"'{type(t).__name__}' object has no attribute 'is_floating_point'")
        if t._data.dtype.kind not in "fc" and not (t.is_floating_point() or t.is_complex()):
            raise ValueError(f"Expected {what} to be floating point or complex, but got: {_dtype_name(t.dtype)}")
    if _current_level < 0:
        raise RuntimeError("Trying to access a forward AD level with an invalid index. This index was either "
                           "not created or is already deleted.")
    if level != _current_level:
        raise RuntimeError("Invalid level given to _make_dual")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")
    if _tangent_of(tensor) is not None:
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
                           f"level {level} is not supported.")
    if tensor.is_complex() or tangent.is_complex():
        raise NotImplementedError("minigrad's forward AD supports real floating-point tensors only (complex "
                                  "tangents are not implemented)")
    dual = _alias(tensor)
    _store(dual, tangent)
    return dual


def unpack_dual(tensor, *, level=None):
    """``UnpackedDualTensor(primal, tangent)``: ``primal`` a view of ``tensor`` without tangent, ``tangent`` the
    tangent it carries at the level (None when it has none). Outside a level: ``(tensor, None)``."""
    Tensor = _function.Tensor
    if not isinstance(tensor, Tensor):
        raise TypeError(f"_unpack_dual(): argument 'dual' (position 1) must be Tensor, not {type(tensor).__name__}")
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    tangent = _tangent_of(tensor) if level == _current_level and _fwd_grad_enabled[0] else None
    if tangent is None:
        return UnpackedDualTensor(_alias(tensor), None)
    return UnpackedDualTensor(_alias(tensor), tangent)


# --------------------------------------------------------------------------- propagation through ops
def _generators(args, kwargs):
    """The random streams the op may draw from (the default one and any given): their states, to replay draws."""
    from .. import random as _random
    gens = [_random.default_generator] + [g for g in list(args) + list(kwargs.values())
                                          if isinstance(g, _random.Generator)]
    return [(g, g.snapshot()) for g in gens]


def _differentiable(t):
    return is_differentiable(t._data.dtype)     # floating (bfloat16 too) or complex


def _apply(cls, args, kwargs):
    """``cls.apply(*args, **kwargs)`` while a level is active (Function.apply calls this): the op's result, carrying
    J t when some argument carries a tangent."""
    Tensor = _function.Tensor
    tangents = None
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            entry = _tangents.get(id(a))
            if entry is not None:
                if tangents is None:
                    tangents = [None] * len(args)
                tangents[i] = entry[1]
    _function.dual_active = False
    try:
        if tangents is None:
            return cls.apply(*args, **kwargs)
        if not _function.is_ours(cls):                    # a user's Function: its own jvp, as in PyTorch
            return _custom_apply(cls, args, kwargs, tangents)
        states = _generators(args, kwargs)
        out = cls.apply(*args, **kwargs)
        if _differentiable(out):
            tangent = _jvp(cls, args, kwargs, tangents, out, states)
            if tangent is not None:
                _store(out, tangent)
            node = out._grad_fn
            if node is not None and not isinstance(node, Tensor):   # for a backward run inside this level
                node.dual_tangents = (_generation[0], tangents, tangent)   # (``_joined_with_tangent``)
        return out
    finally:
        _function.dual_active = True


def _joined_with_tangent(node, which, joined):
    """A ``graph_backward``'s view of input ``which`` of ``node`` (an index; None: the output; ("saved", origin): the
    saved tensor from that place in the graph, the input whose edge it is), carrying the tangent that tensor carried
    when the node ran forward in this level: forward AD over a backward pass (``autograd.grad`` with
    ``create_graph=True`` inside a level: forward-over-reverse, as ``gradgradcheck(check_fwd_over_rev=True)`` runs
    it). ``Context.input_tensor``, ``output_tensor`` and ``graph_saved`` call it while a level is active."""
    generation, tangents, out_tangent = node.dual_tangents
    if isinstance(which, tuple):
        edges = node.next_edges or ()
        which = next((i for i, edge in enumerate(edges) if edge is which[1] and which[1] is not None), -1)
    tangent = out_tangent if which is None else (tangents[which] if 0 <= which < len(tangents) else None)
    if generation != _generation[0] or tangent is None or _tangent_of(joined) is not None:
        return joined
    if joined._grad_fn is None:       # the leaf itself: a view of it carries the tangent (the leaf stays plain)
        joined = _alias(joined)
    _store(joined, tangent if tangent.dtype == joined.dtype else tangent.to(joined.dtype))
    return joined


def _no_forward_ad(cls):
    return NotImplementedError(
        f"Trying to use forward AD with {cls.__name__} that does not support it because its backward is not "
        "differentiable in minigrad (minigrad computes forward AD from the backward: "
        "docs/forward_ad.md)")


def _jvp(cls, args, kwargs, tangents, out, states):
    """J t for one op: its result's tangent (a Tensor shaped and typed as ``out``), or None for none."""
    Tensor = _function.Tensor
    # a view op (linear in its first input, the only one carrying a tangent): the same view of the tangent, so that
    # an in-place write through the view reaches the base's tangent, as in PyTorch
    if (cls.view and tangents[0] is not None and all(t is None for t in tangents[1:]) and out._base is not None
            and tangents[0].dtype == args[0].dtype):
        with grad_mode.no_grad():
            return cls.apply(tangents[0], *args[1:], **kwargs)
    from . import grad
    stand_ins, wrt, directions = [], [], []
    for a, t in zip(args, tangents):
        if isinstance(a, Tensor):
            s = Tensor(a._data)
            if t is not None and _differentiable(a):
                s._requires_grad = True
                wrt.append(s)
                directions.append(t if t.dtype == a.dtype else t.to(a.dtype))
            stand_ins.append(s)
        else:
            stand_ins.append(a)
    if not wrt:
        return None
    for g, state in states:          # the op draws the same random numbers again (dropout's mask)
        g.restore(state)
    replayed = [(g, g.snapshot()) for g, _ in states]
    try:
        with grad_mode.enable_grad():
            y = cls.apply(*stand_ins, **kwargs)
            if not y.requires_grad:
                return _zeros(out)
            u = Tensor(_probe.standard_normal(y.shape).astype(y._data.dtype), requires_grad=True)
            grads = grad(y, wrt, u, create_graph=True, allow_unused=True)
            linear, dirs = [], []
            for g, d in zip(grads, directions):
                if g is None:
                    continue
                if not g.requires_grad:          # the backward ran outside the graph: it cannot be differentiated
                    if np.any(g._data):          # (a zero gradient is a constant: an op with zero derivative)
                        raise _no_forward_ad(cls)
                    continue
                linear.append(g)
                dirs.append(d)
            if not linear:
                return _zeros(out)
            try:
                (jv,) = grad(linear, [u], dirs, allow_unused=True)
            except RuntimeError as e:      # a backward that is once_differentiable (or not written with ops)
                if "differentiate twice" not in str(e):
                    raise
                raise _no_forward_ad(cls) from e
    finally:
        for g, state in replayed:
            g.restore(state)
    if jv is None:
        return _zeros(out)
    # a copy: the reverse passes may hand back the direction's own memory (an identity-like op), and a tangent
    # is written in place by in-place ops
    return Tensor(np.array(jv._data, dtype=out._data.dtype, copy=True).reshape(out._data.shape))


class _JvpContext:
    """The ``ctx`` a custom Function's ``jvp`` receives: its forward's ctx, whose ``saved_tensors`` are the tensors
    given to ``ctx.save_for_forward`` (when it was called)."""

    def __init__(self, ctx):
        object.__setattr__(self, "_ctx", ctx)

    def __getattr__(self, name):
        if name == "saved_tensors" and "forward_saved" in self._ctx.__dict__:
            return self._ctx.__dict__["forward_saved"]
        return getattr(self._ctx, name)

    def __setattr__(self, name, value):
        setattr(self._ctx, name, value)


def _custom_apply(cls, args, kwargs, tangents):
    """A user's Function on arguments carrying tangents: its ``jvp(ctx, *tangents)`` gives the result's tangent
    (zeros for a tensor argument without one, None for any other argument), as in PyTorch."""
    Tensor = _function.Tensor
    jvp = getattr(cls, "jvp", None)
    if jvp is None:
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")
    with _function.recording_nodes() as made:
        out = cls.apply(*args, **kwargs)
    ctx = next(node for node in made if node.fn is cls)
    given = [t if t is not None else Tensor(np.zeros_like(a._data)) if isinstance(a, Tensor) else None
             for a, t in zip(args, tangents)]
    with grad_mode.no_grad():
        tangent = jvp(_JvpContext(ctx), *given)
    outputs = out if isinstance(out, tuple) else (out,)       # a Function may have several outputs: one tangent each
    tangents = tangent if isinstance(tangent, tuple) else (tangent,)
    for o, t in zip(outputs, tangents):
        if t is None or not isinstance(o, Tensor) or not _differentiable(o):
            continue
        values = t._data if isinstance(t, Tensor) else np.asarray(t)
        if values.shape != o._data.shape:
            raise RuntimeError(f"{cls.__name__}.jvp returned a tangent of size {list(values.shape)} for an output of "
                               f"size {list(o._data.shape)}")
        _store(o, Tensor(np.array(values, dtype=o._data.dtype, copy=True)))
    return out


def _zeros(out):
    return _function.Tensor(np.zeros(out._data.shape, dtype=out._data.dtype))


def _write(write, t, compute, operands, *rest):
    """``write(t, compute, operands, *rest)`` (ops/inplace.py: ``t`` becomes ``compute(t)`` in place) while a level is
    active: ``t``'s tangent becomes the tangent of ``compute(t)`` (written into its tangent in place)."""
    Tensor = _function.Tensor
    has = _tangent_of(t) is not None or any(isinstance(o, Tensor) and _tangent_of(o) is not None for o in operands)
    if not has:
        with _suspended():
            return write(t, compute, operands, *rest)
    old = Tensor(t._data.copy())
    if _tangent_of(t) is not None:
        _store(old, _tangent_of(t))
    states = _generators((), {})
    with grad_mode.no_grad():
        value = compute(old)
    for g, state in states:             # the real write draws the same random numbers (dropout_ in place)
        g.restore(state)
    new = _tangent_of(value)
    new = np.zeros(t._data.shape, t._data.dtype) if new is None else np.broadcast_to(new._data, t._data.shape)
    with _suspended():
        write(t, compute, operands, *rest)
    current = _tangent_of(t)
    if current is not None and current._data.shape == new.shape and current._data.flags.writeable:
        np.copyto(current._data, new, casting="unsafe")
    else:
        _store(t, Tensor(np.array(new, dtype=t._data.dtype)))
    return t


_function.dual_apply = _apply
_function.dual_write = _write
_function.dual_joined = _joined_with_tangent
