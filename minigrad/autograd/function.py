"""``Function``: one differentiable operation, forward and backward side by side.

Every op in minigrad (and any user extension) is a subclass::

    class Mul(Function):
        @staticmethod
        def forward(ctx, a, b):              # Tensors in, nothing is recorded in here
            ctx.save_for_backward(a, b)
            return a * b                     # a Tensor or an ndarray
        @staticmethod
        def backward(ctx, dout):             # one gradient per output, as a Tensor
            a, b = ctx.saved_tensors
            return dout * b, dout * a        # one per input: Tensor, ndarray or None

    y = Mul.apply(a, b)

``apply`` runs ``forward`` with recording off and, if any Tensor argument requires
grad, makes the ``ctx`` the output's ``grad_fn``: a node of the backward graph.
A node keeps *edges* to the nodes (or leaf tensors) that produced its inputs, and
the arrays saved for backward. It never keeps its own output, so the graph has no
reference cycles and is freed as soon as the last tensor of a step goes away.

Gradients returned by ``backward`` may have the broadcast shape of the forward's
output: the engine sums them down to each input's shape (the only place in minigrad
where broadcasting is undone) and casts them to the input's dtype.

A user's Function may use the rest of PyTorch's API: ``setup_context``, several
outputs, ``ctx.mark_dirty`` / ``mark_non_differentiable`` / ``set_materialize_grads``
(``custom_function.py`` records those).
"""
import contextlib
import functools
import inspect
import threading

import numpy as np

from ..dtypes import FLOAT32_64, NOT_PLAIN, is_differentiable, scalar_type_name
from . import grad_mode
from .version import own_counters_in_use, storage_of, version_of, writes, writes_since

Tensor = None  # minigrad.tensor sets this once the class exists (importing it here would be circular)
RemovableHandle = None   # and the handle class its hooks return
wrap = None    # and its fast Tensor(array) for an ndarray (tensor.wrap)
mark_view = None  # views.py (which imports this module) sets it to views.mark_view


FREED = ("Trying to backward through the graph a second time (or directly access saved tensors after they have "
         "already been freed). Saved intermediate values of the graph are freed when you call .backward(). Specify "
         "retain_graph=True if you need to backward through the graph a second time or if you need to access saved "
         "tensors after calling backward.")
saving_hooks = [0]   # saved-tensor hook pairs in use, in all threads (saved_tensors.py): Function.apply packs if any
pack_saved = None    # saved_tensors.py sets it: packs a new node's saved tensors with the thread's hooks
saved_by_name = None  # and this: a node's ``_saved_<name>`` / ``_raw_saved_<name>``
limited_call = None  # low_precision.py sets it: limited_dtypes.gated_call, which wraps a minigrad Function's
# classmethod forward (bound to its class) in the refusals on float8 and uint16/32/64, for calls with such arguments
dual_active = False  # forward_ad.py sets it while a forward AD level is active, and ``dual_apply`` (and ops/inplace.py's
dual_apply = None    # ``dual_write``), which propagate tangents
dual_write = None
dual_joined = None   # and this: a graph_backward's input_tensor/output_tensor/graph_saved given the tangent recorded
#                      at forward

node_logs = {}   # thread id -> lists receiving the nodes made in that thread while they are here (utils.checkpoint)


def log_node(node):
    """Note ``node`` in the calling thread's node logs (``recording_nodes``)."""
    for log in node_logs.get(threading.get_ident(), ()):
        log.append(node)


@contextlib.contextmanager
def recording_nodes():
    """Within the block, every node the calling thread makes is appended to the list it yields (in order): a
    checkpointed segment tells the nodes it made from those that were there before it ran (``utils/checkpoint.py``)."""
    log, thread = [], threading.get_ident()
    node_logs.setdefault(thread, []).append(log)
    try:
        yield log
    finally:
        logs = node_logs[thread]
        logs.pop()                 # this block's log: blocks of one thread nest
        if not logs:
            del node_logs[thread]


class Context:
    """The ``ctx`` of one ``Function`` call, and that call's node in the backward graph."""

    __slots__ = ("fn", "saved", "saved_at", "next_edges", "input_meta", "needs_input_grad",
                 "pre_hooks", "retained", "freed", "__dict__", "__weakref__")
    # Defaults of attributes few nodes set (in the node's __dict__, which reading these does not create):
    watched = ()           # arrays PyTorch saves that this backward does not read (``watch``)
    low_precision = None   # the 16-bit dtype of the inputs, for a forward run in float32 (low_precision.py)

    def __init__(self, fn):
        self.fn = fn
        self.saved = ()
        self.next_edges = ()       # per input: its grad_fn Context, the leaf Tensor, or None
        self.input_meta = ()       # per input: (shape, dtype) the gradient must have; None, False for a non-tensor
        self.needs_input_grad = ()
        self.pre_hooks = []        # hooks registered on this node's output tensor
        self.retained = None       # weakref to the output tensor when it called retain_grad()
        self.freed = False
        if node_logs:              # (empty but while a checkpointed segment runs: one test per node otherwise)
            log_node(self)

    def save_for_backward(self, *tensors):
        """Keep these for backward. Tensors are kept as detached views (no cycles); ndarrays as is.
        When they were saved is noted, so that an in-place write into one before backward is caught."""
        saved = tensors
        for t in tensors:  # a plain loop: most ops save ndarrays only, and then keep the tuple itself
            if isinstance(t, Tensor):
                saved = tuple([t.detach() if isinstance(t, Tensor) else t for t in tensors])
                # where each saved Tensor sits in the graph, for create_graph (in __dict__: most nodes have none);
                # not when nothing is recorded (reading a stale view's grad_fn may raise, which only a recorded
                # op should do, as in PyTorch)
                if True in self.needs_input_grad:
                    self.origins = tuple([_origin(t) for t in tensors])
                break
        self.saved = saved
        self.saved_at = writes[0]

    # PyTorch's marks on a user Function's outputs (custom_function.py carries them out)
    marked = False

    def mark_non_differentiable(self, *tensors):
        """These outputs (Tensors the forward returns) do not require grad; backward gets zeros for them."""
        self._marks()["non_differentiable"] += tensors

    def mark_dirty(self, *tensors):
        """The forward wrote into these inputs in place and returns them: each output is the input itself, its history
        continued through this Function (as after any in-place op)."""
        self._marks()["dirty"] += tensors

    def set_materialize_grads(self, value):
        """False: backward gets None, not zeros, for an output whose gradient did not arrive."""
        self._marks()["materialize"] = bool(value)

    def _marks(self):
        self.marked = True
        return _custom_function.marks(self)

    def save_for_forward(self, *tensors):
        """Tensors a custom Function's ``jvp`` reads as ``ctx.saved_tensors`` under forward AD (forward_ad.py)."""
        self.__dict__["forward_saved"] = tuple([t.detach() if isinstance(t, Tensor) else t for t in tensors])

    def watch(self, *arrays):
        """Arrays the backward does not read but PyTorch's saves (a norm's weight, which minigrad keeps as a converted
        copy; a pooling's input, whose shape is all its backward needs): a write into one after the forward makes
        backward refuse, as it does for a saved one (the engine checks before running the node)."""
        self.watched = self.watched + tuple(a for a in arrays if a is not None)
        if not self.saved:                 # (nothing saved yet: the writes counted from now)
            self.saved_at = writes[0]

    @property
    def saved_tensors(self):
        if self.freed:
            raise RuntimeError(FREED)
        if self.saved and writes[0] != self.saved_at:  # something was written in place since the save
            self._check_versions()
        return self.saved

    def _check_versions(self):
        noted = self.__dict__.get("own_counters", ())       # inputs that were .data tensors (or their views)
        for item in self.saved + self.watched:
            array = _array(item)
            if array is None:
                continue
            newer = writes_since(array, self.saved_at)
            version = version_of(array)
            for storage, counter, at_save, own in noted:      # their writes count on their own counter
                if array is own:                              # the .data tensor's own array, saved as is: only its
                    newer, version = counter[0] - at_save, counter[0]   # counter counts (not its base's writes)
                    break
                if counter[0] != at_save and storage_of(array) is storage:
                    newer, version = counter[0] - at_save, counter[0]
            if newer:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: [{type_name(array.dtype)} {list(array.shape)}], saved by {self.name()}, is at "
                    f"version {version}; expected version {version - newer} instead. Hint: the tensor was "
                    f"changed in place after the forward pass saved it for {self.name()}; clone() it before "
                    "the in-place write, or write out of place.")

    # ----------------------------------------------------------------- create_graph=True
    def input_tensor(self, i, array):
        """``array`` (input i's values, as saved) as a Tensor joined to input i's place in the graph: the
        leaf itself, or a tensor whose ``grad_fn`` is the node that produced the input. A ``graph_backward``
        builds its gradient from these, so that the gradient can be differentiated with respect to them."""
        edge = self.next_edges[i] if self.next_edges else None
        if edge is None and i in self.__dict__.get("edgeless", ()):  # requires grad but leads nowhere (a view
            stand_in = Tensor(array)                     # made under no_grad): the gradient still depends on it,
            #                                              as in PyTorch
            stand_in._requires_grad = True
            return stand_in
        if dual_active and "dual_tangents" in self.__dict__:   # forward AD over this backward (forward_ad.py)
            return dual_joined(self, i, _joined(array, edge))
        return _joined(array, edge)

    def output_tensor(self, array):
        """This node's output (``array``, as saved in forward) as a Tensor whose ``grad_fn`` is this node; for an
        in-place op on a view, the view's node after the write (PyTorch's saved result is the view itself)."""
        origin = self.__dict__.get("result_origin")
        origin = origin() if origin is not None else None
        if dual_active and "dual_tangents" in self.__dict__:   # forward AD over this backward (forward_ad.py)
            return dual_joined(self, None, _joined(array, self if origin is None else origin))
        return _joined(array, self if origin is None else origin)

    def graph_saved(self):
        """``saved_tensors`` with each saved Tensor that required grad joined to the graph again (what a
        user Function's ``backward`` sees under ``create_graph=True``, as in PyTorch)."""
        saved = self.saved_tensors
        if "origins" not in self.__dict__:
            return saved
        joined = tuple(_joined(t._data, o) if o is not None else t for t, o in zip(saved, self.origins))
        if dual_active and "dual_tangents" in self.__dict__:   # forward AD over this backward (forward_ad.py)
            return tuple(dual_joined(self, ("saved", o), j) for o, j in zip(self.origins, joined))
        return joined

    def release(self):
        """Drop what was saved for backward (called by the engine unless retain_graph=True). A node that saved
        nothing keeps its state and may run again: PyTorch allows a second backward through such a graph."""
        for item in self.saved:  # a plain loop, no generator: this runs once per node of every backward
            if item is not None:
                break
        else:
            return
        self.saved = ()
        self.__dict__.clear()
        self.freed = True

    def name(self):
        return self.fn.__name__ + "Backward"

    # ----------------------------------------------------------------- PyTorch's Node interface (graph.py)
    post_hooks = ()        # fn(grad_inputs, grad_outputs) after the backward (``register_hook``); in __dict__ if any

    @property
    def next_functions(self):
        """One ``(node, 0)`` per input: the node that made it, a leaf's ``AccumulateGrad`` node, or None."""
        from .graph import as_node
        return tuple((as_node(edge), 0) for edge, meta in zip(self.next_edges, self.input_meta) if meta is not False)

    @property
    def metadata(self):
        """A dict kept with the node for the user's own notes."""
        return self.__dict__.setdefault("user_metadata", {})

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` (a 1-tuple: this node's incoming gradient) before the node runs; a returned tuple
        replaces the gradient. Runs after the hooks registered on the output tensor."""
        def hook(grad):
            result = fn((grad,))
            return None if result is None else result[0]
        self.pre_hooks.append(hook)
        return RemovableHandle(self.pre_hooks, hook)

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` after the node has run: ``grad_inputs`` holds one gradient (or None) per
        input, ``grad_outputs`` the incoming one; a returned tuple replaces ``grad_inputs``."""
        if "post_hooks" not in self.__dict__:
            self.post_hooks = []
        self.post_hooks.append(fn)
        return RemovableHandle(self.post_hooks, fn)

    def __getattr__(self, name):
        """PyTorch's names of what a node saved (``_saved_self``, ``_saved_result``, ``_raw_saved_self``, ...), for
        the Functions that declare them (``Function.saved_as``). Called only for a name not found otherwise."""
        if name.startswith(("_saved_", "_raw_saved_")):
            return saved_by_name(self, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __dir__(self):
        names = [n for n, _ in self.fn.saved_as if n] + list(self.fn.saved_values)
        return list(super().__dir__()) + [f"_saved_{n}" for n in names] + [f"_raw_saved_{n}" for n, _ in
                                                                          self.fn.saved_as if n]

    def __repr__(self):
        return f"<{self.name()}>"


def watching(out, *tensors):
    """``out`` (a Tensor, or a tuple or named tuple led by one) with its node made to refuse its backward after an
    in-place write into one of ``tensors`` (Tensors; None and numbers are skipped): for an op whose PyTorch backward
    saves those tensors while minigrad's reads copies, or only their shapes (``Context.watch``)."""
    first = out[0] if isinstance(out, tuple) else out
    node = first.grad_fn
    if node is not None:
        node.watch(*[t._data for t in tensors if isinstance(t, Tensor)])
    return out


def pytorch_saves(*names, outputs=()):
    """Decorator of an op composed of others (or reading only shapes or copies) whose PyTorch backward saves its
    arguments ``names`` and its outputs at positions ``outputs`` (of a tuple result; 0 for a single one): its result
    refuses its backward after an in-place write into one of them (``watching``)."""
    def decorate(fn):
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def op(*args, **kwargs):
            out = fn(*args, **kwargs)
            if not grad_mode._state.enabled:
                return out
            bound = signature.bind_partial(*args, **kwargs).arguments
            results = out if isinstance(out, tuple) else (out,)
            return watching(out, *[bound.get(name) for name in names], *[results[i] for i in outputs])
        return op
    return decorate


def retained_elsewhere():
    """A node's ``retained`` when the tensor's retained gradient is received by the node below it (``StaleShape``,
    an in-place shape op): ``retains_grad`` holds, and this node hands no gradient to any tensor."""
    return None


def _origin(t):
    """Where a saved Tensor sits in the graph: its grad_fn, itself if it is a leaf that requires grad, else None."""
    if not isinstance(t, Tensor) or not t.requires_grad:
        return None
    return t if t.grad_fn is None else t.grad_fn


def _joined(array, origin):
    """A Tensor over ``array`` at ``origin`` in the graph (a leaf Tensor, a node, or None: a constant)."""
    if origin is None:
        return Tensor(array)
    if isinstance(origin, Tensor):          # a leaf: itself, so that gradients reach its .grad
        if origin._data is array or (origin._data.shape == array.shape and origin._data.dtype == array.dtype):
            return origin
        if origin._data.shape == array.shape:
            return origin.to(array.dtype)   # a promoted copy of the leaf: the cast is part of the graph
        raise RuntimeError(f"internal: saved array of shape {array.shape} is not the leaf's {origin._data.shape}")
    t = Tensor(array)
    # a node may stand for another here: an in-place op on a hooked view saves the view's old values (inplace.write)
    t._grad_fn, t._requires_grad = origin.__dict__.get("joined_origin", origin), True
    return t


def _array(item):
    """The ndarray behind a saved item (None for a number, a shape, ...)."""
    if isinstance(item, Tensor):
        return item._data
    return item if isinstance(item, np.ndarray) else None


def type_name(dtype):
    """PyTorch's legacy type name of a dtype: ``minigrad.FloatTensor`` for float32, ``LongTensor`` for int64."""
    return f"minigrad.{scalar_type_name(dtype)}Tensor"


class Function:
    """Base class of differentiable operations: subclass it, write ``forward`` and ``backward``.

    A Function whose output may be a NumPy view of its first input's memory sets ``view = True``: its
    output then remembers that input's base, so that writes through it reach the base (``views.py``)."""

    view = False
    watched_inputs = ()
    """Positions of the inputs PyTorch's backward saves that this Function's does not (``Context.watch``)."""
    saved_as = ()
    """PyTorch's name of each tensor ``forward`` passes to ``save_for_backward``, in order, with where it comes from: an
    input's position, "out" for the result, or None; a node then has ``_saved_<name>`` (saved_tensors.py)."""
    saved_values = {}
    """PyTorch's names of saved non-tensor values (``normalized_shape``, ``eps``) -> the ``ctx`` attribute holding each."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # the class of this Function's nodes, a Context named as PyTorch names a node's type: type(y.grad_fn).__name__
        # is "SqBackward" for a Function Sq (what graph printers such as torchviz label nodes with)
        cls._node_type = type(cls.__name__ + "Backward", (Context,), {"__slots__": ()})

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("a Function subclass must implement forward(ctx, *args)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("a Function subclass must implement backward(ctx, *grad_outputs)")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """PyTorch's second style of Function: ``forward(*inputs)`` takes no ctx, and this, given the inputs (the
        arguments with forward's defaults filled in) and what forward returned, saves what backward needs."""
        raise NotImplementedError("setup_context is not implemented.")

    # While a minigrad.profiler profile records, this method is swapped for a timed wrapper of it (and put back
    # when recording stops: profiler/_recorder.py), so that profiling costs nothing here when it is off.
    @classmethod
    def apply(cls, *args, **kwargs):
        if cls.setup_context is not _no_setup_context:   # the inputs setup_context sees: every argument, by position
            args, kwargs = _bound_arguments(cls.forward, args, kwargs), {}
        if dual_active:   # a forward AD level is active (set by autograd/forward_ad.py, which propagates tangents)
            return dual_apply(cls, args, kwargs)
        ctx = cls._node_type(cls)
        needs = []
        edgeless = None   # inputs that require grad only through their base, with no grad_fn: no edge (below)
        plain = True      # no argument is a 16-bit tensor
        for a in args:  # a loop rather than a comprehension: no frame to build per call (Python 3.11)
            if isinstance(a, Tensor):
                if a._base is None:
                    needs.append(a._requires_grad)
                elif a._requires_grad or a._grad_fn is not None:
                    needs.append(True)
                elif a._view_kind is None or a._view_kind[0] == "multi_output":
                    needs.append(a._base._requires_grad)    # made with grad on: its grad_fn comes when read
                else:
                    # a view made under no_grad of a tensor that requires grad: it requires grad, so the output
                    # does, but no gradient reaches it. As in PyTorch, its gradient is not computed, and nothing
                    # is saved for it alone (a write into such a saved tensor is no error at backward)
                    needs.append(False)
                    if a._base._requires_grad:
                        edgeless = (edgeless or ()) + (len(needs) - 1,)
                if a._data.dtype in NOT_PLAIN:   # 16-bit floats; uint16/32/64, float8 (limited_dtypes)
                    plain = False
            else:
                needs.append(False)
        needs = tuple(needs)
        state = grad_mode._state
        prev = state.enabled
        record = prev and (True in needs or edgeless is not None)
        ctx.needs_input_grad = needs if record else (False,) * len(args)
        if record and edgeless is not None:
            ctx.edgeless = edgeless

        forward = cls.forward
        if plain:         # low_precision.py's wrapper would only pass the call on: the forward it wraps, directly
            forward = getattr(forward, "_minigrad_plain", forward)
        elif limited_call is not None and getattr(forward, "__self__", None) is cls and is_ours(cls):
            forward = limited_call(forward, cls)    # a classmethod forward of minigrad's (tan, hypot, ...): checked
        state.enabled = False
        try:
            if cls.setup_context is _no_setup_context:
                out = forward(ctx, *args, **kwargs)
            else:     # PyTorch's other style: forward(*inputs) without ctx, then setup_context(ctx, inputs, output)
                out = forward(*args)
                cls.setup_context(ctx, args, out)
        finally:
            state.enabled = prev

        if ctx.marked or isinstance(out, tuple):   # several outputs, or marked ones (a user's Function)
            return _custom_function.finish(cls, ctx, args, out, record)
        if type(out) is np.ndarray:  # the common case first
            out = wrap(out)
        elif not isinstance(out, Tensor):    # a NumPy scalar (a ufunc on 0-d arrays), say
            array = np.asarray(out)
            if any(item is out for item in ctx.saved):     # saved as the result: the result's array is saved
                ctx.saved = tuple(array if item is out else item for item in ctx.saved)
            out = Tensor(array)
        elif any(out is a for a in args):
            out = Tensor(out._data)  # never turn an input into this Function's output
        if cls.view and storage_of(out._data) is storage_of(args[0]._data):   # a view (an empty one too)
            mark_view(out, args[0])

        if record:
            if out._data.dtype not in FLOAT32_64 and not is_differentiable(out._data.dtype):
                raise RuntimeError(f"{cls.__name__}.forward returned a {out._data.dtype} tensor from inputs that "
                                   "require grad: only floating-point and complex outputs can be differentiated")
            edges, meta = [], []
            noting = own_counters_in_use[0]   # a .data tensor exists: note the inputs with a counter of their own
            if edgeless is not None:    # an edgeless input may still raise PyTorch's error for a stale view below
                needs = tuple([n or i in edgeless for i, n in enumerate(needs)])
            for a, n in zip(args, needs):
                if n:
                    node = a._grad_fn if a._base is None else a.grad_fn   # a view is brought up to date
                    # a tensor with no grad_fn is a leaf only if it requires grad itself; a view that requires
                    # grad only through its base, with no grad_fn yet, has no edge (as in PyTorch)
                    edges.append(node if node is not None else a if a._requires_grad else None)
                    meta.append((a._data.shape, a._data.dtype))
                else:
                    edges.append(None)
                    meta.append(None if isinstance(a, Tensor) else False)   # False: not a tensor (next_functions)
                # (a .data tensor may require grad too: after an in-place op with an operand that does)
                if noting and isinstance(a, Tensor):
                    note_own_counter(ctx, a)
            ctx.next_edges, ctx.input_meta = tuple(edges), tuple(meta)
            if cls.watched_inputs:
                ctx.watch(*[args[i]._data for i in cls.watched_inputs if isinstance(args[i], Tensor)])
            out._grad_fn = ctx
            out._requires_grad = True
            if "origins" in ctx.__dict__:     # Tensors were saved: the output among them is this node's output
                join_saved_outputs(ctx, {id(out._data): ctx})
            if saving_hooks[0] and ctx.saved:     # saved-tensor hooks are in use (in some thread)
                pack_saved(ctx, args, out)
        return out


_no_setup_context = Function.__dict__["setup_context"].__func__


def is_ours(cls):
    """Whether the Function ``cls`` is one of minigrad's own, not a user's (a user's is never refused for its dtypes
    nor wrapped for 16-bit computing, and gives its own jvp to forward AD)."""
    return cls.__module__.startswith("minigrad.")


def join_saved_outputs(ctx, nodes, dirty=()):
    """A Function's output that its forward saved (``ctx.save_for_backward(out)``) sits in the graph at the node that
    made it (``nodes``: id of the output's array -> that node), as PyTorch's saved outputs do: under
    ``create_graph=True`` a backward that reads it is differentiated through it, not as through a constant. So does
    an input the forward wrote into (``dirty``: ids of their arrays): what was saved is its new value."""
    origins = list(ctx.origins)
    for j, item in enumerate(ctx.saved):
        if not isinstance(item, Tensor) or item.layout is not Tensor.layout or id(item._data) not in nodes:
            continue                                     # (a sparse tensor has no one array to compare)
        if origins[j] is None or id(item._data) in dirty:
            origins[j] = nodes[id(item._data)]
    ctx.origins = tuple(origins)


def _bound_arguments(forward, args, kwargs):
    """``forward``'s arguments as one tuple in its parameters' order, defaults filled in (PyTorch's
    ``bind_default_args``)."""
    bound = inspect.signature(forward).bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple(bound.args) + tuple(bound.kwargs.values())


def note_own_counter(ctx, a):
    """For a tensor whose array ``ctx`` keeps (an input, or the tensor an in-place op's saved result now is) that
    counts its writes on a counter of its own (``.data`` and its views, as PyTorch's ``.data`` has a fresh version
    counter): its storage, counter, the counter's value now and its array, for ``_check_versions``."""
    counter = getattr(a, "_own_counter", None)
    if counter is not None:
        ctx.__dict__.setdefault("own_counters", []).append((storage_of(a._data), counter, counter[0], a._data))


class NoDerivative(Function):
    """``values`` (computed from the tensors ``inputs``) as a function of them that PyTorch does not
    differentiate: differentiating through it raises ``error_type(message)``, PyTorch's exception for that op."""

    @staticmethod
    def forward(ctx, error_type, message, values, *inputs):
        ctx.error = error_type, message
        return values

    @staticmethod
    def backward(ctx, dout):
        error_type, message = ctx.error
        raise error_type(message)

    graph_backward = backward


def once_differentiable(backward):
    """Decorate a Function's ``backward`` that cannot be differentiated (it works on arrays, say), as in
    PyTorch: it runs with recording off, and under ``create_graph=True`` the gradients it returns are
    right but differentiating them again raises an error naming the Function, never a silent zero."""
    @functools.wraps(backward)
    def wrapper(ctx, *grad_outputs):
        with grad_mode.no_grad():
            return backward(ctx, *grad_outputs)
    wrapper.once_differentiable = True
    return wrapper


from . import custom_function as _custom_function  # noqa: E402  (it builds its nodes on Function, above)
