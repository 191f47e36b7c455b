"""What a user's ``autograd.Function`` may do beyond one output, as in PyTorch: return several outputs (a tuple, with
non-tensor objects among them), ``ctx.mark_non_differentiable(...)``, ``ctx.mark_dirty(...)`` (the forward wrote into
an input and returns it), ``ctx.set_materialize_grads(False)``.

A node of minigrad's graph has one output, so a Function with several is recorded as two kinds of node (the way the
recurrent layers are, ``ops/recurrent.py``):

    packed = Packed(*inputs)            one node: its output is every differentiable output, flattened and joined;
                                        its backward splits the gradient and calls the user's ``backward`` once
    out_i  = Unpacked(packed, i)        one node per differentiable output: a copy of its piece, whose backward
                                        puts the output's gradient at its place in a zero vector

The engine sums the pieces' gradients at ``packed``, so an output the loss does not reach contributes zeros, which is
what PyTorch's backward receives for it; with ``set_materialize_grads(False)`` it receives None (each ``Unpacked``
notes that its gradient arrived). Non-differentiable outputs (marked, or of an integer or bool dtype) are plain
tensors; the user's backward gets zeros (or None) for them, and None for non-tensor outputs. A dirty input gets its
new history from a ``copy_`` of its output (values unchanged), so views and version counters behave as after any
in-place op.
"""
import numpy as np

from ..dtypes import is_differentiable
from . import function as _function
from . import grad_mode
from .version import bump_tensor

_adapters = {}   # user Function class -> its Packed subclass (named as the user's, so the node is "<Name>Backward")


def has_marks(ctx):
    return "marks" in ctx.__dict__


def marks(ctx):
    """The ctx's record of ``mark_dirty`` / ``mark_non_differentiable`` / ``set_materialize_grads``."""
    return ctx.__dict__.setdefault("marks", {"dirty": (), "non_differentiable": (), "materialize": True})


def finish(cls, ctx, args, out, record):
    """The outputs of a user Function whose forward returned a tuple or marked something (``Function.apply``)."""
    Tensor = _function.Tensor
    single = not isinstance(out, tuple)
    outputs = (out,) if single else out
    outputs = tuple(Tensor(o) if isinstance(o, (np.ndarray, np.generic)) else o for o in outputs)
    state = marks(ctx)
    plain = _identities(state["non_differentiable"])
    dirty = _identities(state["dirty"])
    layout, pieces, offset = [], [], 0
    for o in outputs:
        if not isinstance(o, Tensor):
            layout.append(("object", None))
        elif record and id(o) not in plain and is_differentiable(o._data.dtype):
            size = o._data.size
            layout.append(("differentiable", (offset, size, o._data.shape, o._data.dtype)))
            pieces.append(o._data.reshape(-1))
            offset += size
        else:
            layout.append(("plain", (o._data.shape, o._data.dtype)))
    if not pieces:                   # nothing to record: the outputs as they are, without grad
        results = tuple(_plain_output(o, args, dirty) for o in outputs)
        _bump_dirty(results, dirty)
        return results[0] if single else results
    common = np.result_type(*[p.dtype for p in pieces])
    flat = np.concatenate([p.astype(common, copy=False) for p in pieces])
    adapter = _adapters.get(cls)
    if adapter is None:
        adapter = _adapters[cls] = type(cls.__name__, (Packed,), {"user": cls, "__qualname__": cls.__qualname__})
    packed = adapter.apply(*args, user_ctx=ctx, flat=flat, layout=tuple(layout))
    node = packed.grad_fn
    results, made_by = [], {}
    for i, (o, (kind, spec)) in enumerate(zip(outputs, layout)):
        if kind == "differentiable":
            piece = Unpacked.apply(packed, index=i, spec=spec, node=node)
            made_by[id(o._data)] = piece.grad_fn
            if id(o) in dirty:       # the input the forward wrote into: it is the output, with the new history
                with grad_mode.enable_grad():
                    o.copy_(piece)
                node.saved_at = _function.writes[0]   # that copy wrote the values already there
                piece = o
            results.append(piece)
        else:
            results.append(_plain_output(o, args, dirty))
    if "origins" in node.__dict__:
        _function.join_saved_outputs(node, made_by, {id(o._data) for o in outputs if id(o) in dirty})
    return results[0] if single else tuple(results)


def _identities(tensors):
    return {id(t) for t in tensors}


def _plain_output(o, args, dirty):
    """A non-differentiable output: a new Tensor over its values (never an input itself, unless marked dirty)."""
    Tensor = _function.Tensor
    if isinstance(o, Tensor) and id(o) not in dirty and any(o is a for a in args):
        return Tensor(o._data)
    return o


def _bump_dirty(results, dirty):
    for o in results:
        if id(o) in dirty:
            bump_tensor(o)


class Packed(_function.Function):
    """The node of a user Function with several outputs (subclassed per user Function, ``user``): its output is the
    differentiable outputs flattened and joined; its backward hands the user's ``backward`` one gradient per output."""

    user = None

    @staticmethod
    def forward(ctx, *args, user_ctx, flat, layout):
        # this node stands for the user's ctx: what forward / setup_context saved and set on it
        if user_ctx.saved:
            ctx.saved, ctx.saved_at = user_ctx.saved, user_ctx.saved_at
        ctx.__dict__.update(user_ctx.__dict__)
        ctx.needs_input_grad = user_ctx.needs_input_grad   # as the user's forward left it
        ctx.marked = False            # (the marks are carried out: this node's output is the joined one)
        ctx._packed_layout, ctx._packed_received = layout, set()
        return flat

    @classmethod
    def backward(cls, ctx, dflat):
        materialize = marks(ctx)["materialize"]
        grads = []
        for i, (kind, spec) in enumerate(ctx._packed_layout):
            if kind == "differentiable":
                offset, size, shape, dtype = spec
                if materialize or i in ctx._packed_received:
                    grads.append(dflat[offset:offset + size].reshape(shape).to(dtype))
                else:
                    grads.append(None)
            elif kind == "plain" and materialize:
                shape, dtype = spec
                grads.append(_function.Tensor(np.zeros(shape, dtype)))
            else:
                grads.append(None)
        ctx._packed_received = set()
        return cls.user.backward(ctx, *grads)


class Unpacked(_function.Function):
    """Output ``index`` of a ``Packed`` node: a copy of its piece of the joined outputs."""

    @staticmethod
    def forward(ctx, packed, *, index, spec, node):
        offset, size, shape, dtype = spec
        ctx.index, ctx.spec, ctx.node = index, spec, node
        return packed._data[offset:offset + size].reshape(shape).astype(dtype)

    @staticmethod
    def backward(ctx, dout):
        offset, size, shape, dtype = ctx.spec
        ctx.node._packed_received.add(ctx.index)
        (total,), flat_dtype = ctx.input_meta[0]          # the joined outputs' shape and dtype, as apply noted them
        Tensor = _function.Tensor
        before = Tensor(np.zeros(offset, flat_dtype))
        after = Tensor(np.zeros(total - offset - size, flat_dtype))
        from ..ops.shape import cat   # (ops import autograd: not at the top)
        return cat([before, dout.reshape(-1).to(flat_dtype), after])
