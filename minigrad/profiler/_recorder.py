"""What the profiler records, and how: ranges of time, each with a name, on a per-thread stack.

Three kinds of range are recorded while a profile is recording:

* ``record_function("name")`` blocks (and PyTorch's ``ProfilerStep#N`` ranges the profile opens itself);
* every call of ``Function.apply``, the single entry of minigrad's differentiable ops, named after the
  Function subclass (``Mul``, ``MatMul``, ``Tanh``...). Ops called inside another op's forward are its children;
* every node the backward engine runs (``engine.run_node``), named after the node (``MulBackward``).

Ops that do not go through ``Function.apply`` are not recorded as ops of their own: creating tensors
(``randn``, ``zeros``), ops on integer or boolean results computed straight on arrays (comparisons, ``argmax``),
and updates written on arrays (the optimizers' ``step``). Their time counts in the ranges around them
(``record_function`` blocks, ``ProfilerStep#N``).

How the ops are timed without costing anything when no profile records: while one does, ``Function.apply``
and ``engine.run_node`` are replaced by timing wrappers (``_install``), and the originals are put back when the
last recording profile stops (``_uninstall``). When no profile records, the engine runs its own code untouched.

With ``with_flops``, each op's and backward node's range also holds the flops ``utils.flop_counter.FlopCounterMode``
counts for it (its formulas, read from the shapes outside the timed range).

The same wrappers tell listeners (``add_listener``: ``utils.flop_counter.FlopCounterMode``) of every op after it
ran (``listener.op(cls, args, kwargs, out)``) and of every backward node before it runs (``listener.node(node,
grad, graph)``, which may return a function to call once the node has run: by then the node may have dropped
what it saved); they are installed while a profile records or a listener listens.
"""
import os
import sys
import threading
import time

from ..autograd import engine as _engine
from ..autograd import function as _function

_clock = time.perf_counter_ns

#: the collectors recording now (usually none or one: profiles may nest, each gets every range); a tuple replaced
#: as a whole when a profile starts or stops, so that another thread reading it never sees it half changed
_collectors = ()
_listeners = ()                   # likewise: what add_listener added
_lock = threading.Lock()
_stacks = threading.local()       # per thread: the list of ranges open now, innermost last
_originals = {}                   # what _install replaced: {"apply": classmethod, "run_node": function}
_MINIGRAD_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Range:
    """One recorded range: ``name``, its ``kind`` ("op", "backward", "user" or "step"), its thread, start and end
    (``time.perf_counter_ns``), the range it opened inside (``parent``), and what the profile asked for: the
    input shapes, the Python stack, the bytes of memory its output took, the flops it did."""

    __slots__ = ("name", "kind", "thread", "start", "end", "parent", "shapes", "stack", "memory", "flops")

    def __init__(self, name, kind, parent):
        self.name, self.kind, self.parent = name, kind, parent
        self.thread = threading.get_ident()
        self.start = self.end = None
        self.shapes = self.stack = None
        self.memory = self.flops = 0


class Collector:
    """The ranges one profile records between ``start()`` and ``stop()``, with its options."""

    def __init__(self, record_shapes=False, profile_memory=False, with_stack=False, with_flops=False):
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.with_flops = with_flops
        self.ranges = []
        self.wall_origin = self.clock_origin = None

    def start(self):
        self.wall_origin, self.clock_origin = time.time_ns(), _clock()
        _join("_collectors", self)

    def stop(self):
        _leave("_collectors", self)

    @property
    def recording(self):
        return self in _collectors


def _stack():
    try:
        return _stacks.ranges
    except AttributeError:
        _stacks.ranges = []
        return _stacks.ranges


def open_range(name, kind, args=None):
    """Start a range in every recording collector (None when nothing records); ``close_range`` ends it."""
    collectors = _collectors
    if not collectors:
        return None
    stack = _stack()
    rng = Range(name, kind, stack[-1] if stack else None)
    for collector in collectors:
        if args is not None and collector.record_shapes and rng.shapes is None:
            rng.shapes = _shapes(args)
        if collector.with_stack and rng.stack is None:
            rng.stack = _user_stack()
        collector.ranges.append(rng)
    stack.append(rng)
    rng.start = _clock()           # last: the bookkeeping above is not part of the range
    return rng


def close_range(rng, result=None, args=()):
    """End ``rng``; ``result`` and ``args`` are an op's output and inputs (for ``profile_memory``)."""
    rng.end = _clock()
    stack = _stack()
    if stack and stack[-1] is rng:
        stack.pop()
    elif rng in stack:             # ranges closed out of order (a generator's record_function, say)
        stack.remove(rng)
    if result is not None and any(c.profile_memory for c in _collectors):
        rng.memory = _new_bytes(result, args)


def _shapes(args):
    """PyTorch's "Input Shapes": each argument's shape as a list ([] for a non-tensor)."""
    Tensor = _function.Tensor
    return [list(a.shape) if isinstance(a, Tensor) else [] for a in args]


def _owner(array):
    """The array that owns ``array``'s memory (itself unless it is a view)."""
    return array.base if getattr(array, "base", None) is not None else array


def _new_bytes(result, args):
    """The bytes of the memory an op's output holds, if the op allocated it: none for a view of an input."""
    data = getattr(result, "_data", None)
    if data is None:
        return 0
    owner = _owner(data)
    for a in args:
        given = getattr(a, "_data", None)
        if given is not None and _owner(given) is owner:
            return 0
    return owner.nbytes if hasattr(owner, "nbytes") else data.nbytes


def _user_stack(limit=32):
    """The calling program's Python frames, innermost first, as "file(line): function" (minigrad's own left out)."""
    frames, frame = [], sys._getframe(2)
    while frame is not None and len(frames) < limit:
        filename = frame.f_code.co_filename
        if not os.path.abspath(filename).startswith(_MINIGRAD_DIR):
            frames.append(f"{filename}({frame.f_lineno}): {frame.f_code.co_name}")
        frame = frame.f_back
    return frames


def _counting_flops():
    """Whether a recording profile asked for flops (``with_flops``)."""
    return any(c.with_flops for c in _collectors)


def _flop_counter():
    """``utils.flop_counter``, whose formulas give the flops of the ops and backward nodes (it imports this module)."""
    from ..utils import flop_counter
    return flop_counter


# --------------------------------------------------------------------------- the timing wrappers
def _install():
    """Wrap ``Function.apply`` and ``engine.run_node`` in their timing versions (called with ``_lock`` held)."""
    original_apply = _function.Function.__dict__["apply"]
    original_run_node = _engine.run_node
    plain_apply = original_apply.__func__

    def apply(cls, *args, **kwargs):
        rng = open_range(cls.__name__, "op", args)     # (None when no profile records)
        try:
            out = plain_apply(cls, *args, **kwargs)
        except BaseException:
            if rng is not None:
                close_range(rng)
            raise
        if rng is not None:
            close_range(rng, out, args)
            if _counting_flops():
                rng.flops = _flop_counter().op_flops(cls, args, kwargs, out)
        for listener in _listeners:
            listener.op(cls, args, kwargs, out)
        return out

    def run_node(node, grad, *args, **kwargs):
        graph = kwargs.get("graph", args[2] if len(args) > 2 else False)
        after = [listener.node(node, grad, graph) for listener in _listeners]   # (before the node frees its state)
        flops = _flop_counter().node_flops(node, grad, graph) if _counting_flops() else 0   # (before the range)
        rng = open_range(node.name(), "backward")
        try:
            in_grads = original_run_node(node, grad, *args, **kwargs)
        finally:
            if rng is not None:
                close_range(rng)
                rng.flops = flops
        for then in after:
            if then is not None:
                then()
        return in_grads

    apply.__doc__ = ("``Function.apply`` timed for minigrad.profiler and told to listeners (installed only while a "
                     "profile records or a listener listens).")
    _originals.update(apply=original_apply, run_node=original_run_node)
    _function.Function.apply = classmethod(apply)
    _engine.run_node = run_node


def _uninstall():
    _function.Function.apply = _originals.pop("apply")
    _engine.run_node = _originals.pop("run_node")


def _join(name, member):
    """Add ``member`` to the tuple ``name`` (``"_collectors"`` or ``"_listeners"``; replaced as a whole), installing
    the wrappers for the first member of either."""
    with _lock:
        if not _collectors and not _listeners:
            _install()
        globals()[name] = globals()[name] + (member,)


def _leave(name, member):
    """Take ``member`` out of the tuple ``name``; the wrappers go when neither tuple has a member left."""
    with _lock:
        members = globals()[name]
        if any(m is member for m in members):
            globals()[name] = tuple(m for m in members if m is not member)
            if not _collectors and not _listeners:
                _uninstall()


def add_listener(listener):
    """Tell ``listener`` of every op and backward node from now on (module docstring) until ``remove_listener``."""
    _join("_listeners", listener)


def remove_listener(listener):
    _leave("_listeners", listener)


def is_recording():
    """Whether some profile is recording now."""
    return bool(_collectors)
