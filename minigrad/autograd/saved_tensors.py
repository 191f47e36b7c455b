"""What a node keeps for its backward, seen and moved by the user (``torch.autograd.graph``'s saved-tensor hooks).

Every op's node keeps what its backward reads: ``x * y`` keeps x and y, ``x.exp()`` its result, a LayerNorm its
input, mean, rstd and weight. Two ways to see them, as in PyTorch:

* by name: ``y.grad_fn._saved_self``, ``_saved_result``, ``_saved_result2`` (a LayerNorm's rstd), ... for the ops
  whose Function declares PyTorch's names (``Function.saved_as``); ``dir(y.grad_fn)`` lists them;
* by hooks: within ``with saved_tensors_hooks(pack, unpack):`` every tensor an op saves for backward is given to
  ``pack`` (as a Tensor) when the op runs, and the node keeps only what ``pack`` returned; the backward gets the
  tensor back from ``unpack(packed)``, each time it reads it. ``pack`` may return anything (a copy in float16, a
  file name, the tensor itself); ``unpack`` must return a Tensor with the saved values. The hooks of the innermost
  ``with`` apply, in the thread that entered it. ``grad_fn._raw_saved_self.register_hooks(pack, unpack)`` sets
  hooks on one saved tensor after the fact.

A hooked node's saved tensors are the hooks' business: as in PyTorch, a later in-place write into a tensor it saved
is not caught (the hooks may have kept a copy). In minigrad the hooks see what ops pass to ``save_for_backward``; a
few ops keep other arrays as ``ctx`` attributes, which hooks do not see.
"""
import contextlib
import threading

import numpy as np

from . import function, grad_mode
from .function import FREED, Context
from .version import writes, writes_since

_local = threading.local()     # .stack: the (pack, unpack) pairs entered in this thread; .disabled: a message or None
_count_lock = threading.Lock()  # guards function.saving_hooks (the pairs entered in all threads)


def _stack():
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


class saved_tensors_hooks:
    """``with saved_tensors_hooks(pack_hook, unpack_hook):`` every tensor saved for backward by an op run inside is
    kept as ``pack_hook(tensor)``, and given back to the backward as ``unpack_hook(packed)`` (module docstring)."""

    def __init__(self, pack_hook, unpack_hook):
        for hook in (pack_hook, unpack_hook):
            if not callable(hook):
                raise TypeError(f"saved_tensors_hooks(): pack_hook and unpack_hook must be callables, got "
                                f"{type(hook).__name__}")
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        message = getattr(_local, "disabled", None)
        if message is not None:
            raise RuntimeError(message)
        _stack().append((self.pack_hook, self.unpack_hook))
        with _count_lock:
            function.saving_hooks[0] += 1
        return self

    def __exit__(self, *exc):
        _stack().pop()
        with _count_lock:
            function.saving_hooks[0] -= 1
        return False


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept in CPU memory and moved back to their device for the backward. minigrad's tensors are
    all on the CPU, so each is kept as it is (``pin_memory`` has nothing to pin)."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            return tensor.device, tensor.cpu()

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Within the block, entering ``saved_tensors_hooks`` raises ``RuntimeError(error_message)``; so does entering this
    block while hooks are in use (code that must not have its saved tensors moved)."""
    if _stack():
        raise RuntimeError(error_message)
    before = getattr(_local, "disabled", None)
    _local.disabled = error_message
    try:
        yield
    finally:
        _local.disabled = before


def hooks_disabled():
    """Whether entering ``saved_tensors_hooks`` in this thread would raise (``disable_saved_tensors_hooks``)."""
    return getattr(_local, "disabled", None) is not None


class _AllowMutationOnSavedContext:
    """What ``allow_mutation_on_saved_tensors`` yields: whether its block is still open."""

    def __init__(self):
        self.open = True


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Within the block, a tensor saved for backward may be written in place afterwards: the backward reads the values
    it had when saved. minigrad keeps a copy of each saved tensor as it is saved (PyTorch copies one when it is first
    written: the same gradients, with less memory). A graph recorded in the block must run its backward there."""
    if getattr(_local, "mutation_allowed", False):
        raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
    context = _AllowMutationOnSavedContext()

    def pack(tensor):
        return tensor.detach().clone()

    def unpack(copy):
        if not context.open:
            raise AssertionError("Trying to backward outside of the 'allow_mutation_on_saved_tensors' contextin which "
                                 "the graph was originally recorded.")      # (PyTorch's text, its missing space too)
        return copy

    _local.mutation_allowed = True
    try:
        with saved_tensors_hooks(pack, unpack):
            yield context
    finally:
        context.open = False
        _local.mutation_allowed = False


# --------------------------------------------------------------------------- packing
class _Packed:
    """One saved tensor as a hooked node keeps it: what ``pack`` returned, the ``unpack`` that gives it back, and
    what the backward expects (an ndarray or a Tensor, of the saved dtype)."""

    __slots__ = ("packed", "unpack_hook", "as_array", "dtype")

    def __init__(self, item, given, pack_hook, unpack_hook):
        stamp = writes[0]
        with grad_mode.no_grad():             # pack runs with recording off, as in PyTorch
            self.packed = pack_hook(given)
        if writes[0] != stamp and writes_since(given._data, stamp):
            raise RuntimeError(
                "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook "
                "cannot be modified by in-place operations as this can lead to unexpected side-effects. Please "
                "open an issue if you need to perform in-place operations on the input to a pack hook.")
        self.unpack_hook = unpack_hook
        self.as_array = isinstance(item, np.ndarray)
        self.dtype = given._data.dtype

    def unpacked(self):
        t = self.unpack_hook(self.packed)
        if not isinstance(t, function.Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                            f"{type(t).__name__}")
        if not self.as_array:
            return t
        # the backward's kernels take the saved dtype (PyTorch would compute in the unpacked one, then cast)
        return t._data if t._data.dtype == self.dtype else t._data.astype(self.dtype)


class HookedContext(Context):
    """A node whose saved tensors were packed by hooks: ``saved_tensors`` unpacks them each time it is read. A node
    becomes one through ``hooked``, which keeps its type's name."""

    __slots__ = ()

    @property
    def saved_tensors(self):
        if self.freed:
            raise RuntimeError(FREED)
        return tuple([item.unpacked() if type(item) is _Packed else item for item in self.saved])

    def _check_versions(self):
        """Nothing: a hooked tensor's in-place writes are not checked, as in PyTorch (the hooks may keep a copy)."""


def hooked(node):
    """``node`` made a HookedContext of its own type's name (a subclass of both, made once per type)."""
    own = type(node)
    if not isinstance(node, HookedContext):
        if "_hooked" not in own.__dict__:
            own._hooked = type(own.__name__, (HookedContext, own), {"__slots__": ()})
        node.__class__ = own._hooked


def _given(item, args, out):
    """The Tensor ``pack`` receives for a saved ``item``: the op's input or output itself when the item is its
    array (as PyTorch gives the tensor itself), else a Tensor over the saved array."""
    array = item._data if isinstance(item, function.Tensor) else item
    for a in args:
        if isinstance(a, function.Tensor) and _same(a._data, array):
            return a
    if _same(out._data, array):
        return out
    return item if isinstance(item, function.Tensor) else function.wrap(array)


def _same(a, b):
    """Whether two ndarrays are the same elements (one object, or a view over the same memory laid out alike: the
    weight an op reshaped to (D,) from (D,))."""
    return a is b or (a.shape == b.shape and a.dtype == b.dtype and a.strides == b.strides
                      and a.__array_interface__["data"][0] == b.__array_interface__["data"][0])


def _pack(ctx, args, out):
    """Function.apply's call for a new node when hooks are in use: pack each saved tensor with this thread's
    innermost hooks (other saved values, numbers and shapes, stay as they are)."""
    stack = _stack()
    if not stack:                     # the hooks are another thread's
        return
    pack_hook, unpack_hook = stack[-1]
    numbers = any(isinstance(a, (int, float, complex, np.generic)) for a in args)
    ctx.saved = tuple([_Packed(item, _given(item, args, out), pack_hook, unpack_hook)
                       if _is_tensor(item, numbers) else item for item in ctx.saved])
    hooked(ctx)


def _is_tensor(item, numbers):
    """Whether PyTorch would have saved ``item`` as a tensor: a 0-d array made of a number argument (``x * 2`` saves
    2 as an array) is a number there, which hooks do not see."""
    if isinstance(item, function.Tensor):
        return True
    return isinstance(item, np.ndarray) and not (numbers and item.ndim == 0)


function.pack_saved = _pack


# --------------------------------------------------------------------------- by name
class SavedTensor:
    """One saved tensor of a node (``grad_fn._raw_saved_self``): ``register_hooks(pack, unpack)`` packs it now and
    unpacks it whenever the backward reads it."""

    def __init__(self, node, position):
        self._node, self._position = node, position

    def register_hooks(self, pack_hook, unpack_hook):
        for hook in (pack_hook, unpack_hook):
            if not callable(hook):
                raise TypeError(f"register_hooks(): pack_hook and unpack_hook must be callables, got "
                                f"{type(hook).__name__}")
        node = self._node
        if node.freed:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you "
                "need to backward through the graph a second time or if you need to access saved variables after "
                "calling backward.")
        saved = list(node.saved)
        item = saved[self._position] if self._position < len(saved) else None
        if type(item) is _Packed:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. Hint: "
                               "only one pair of hooks is allowed at a time.")
        if item is None:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is forbidden")
        given = item if isinstance(item, function.Tensor) else function.wrap(item)
        saved[self._position] = _Packed(item, given, pack_hook, unpack_hook)
        node.saved = tuple(saved)
        hooked(node)

    def __repr__(self):
        return f"<SavedTensor {self._position} of {self._node.name()}>"


def _by_name(node, name):
    """``node._saved_<key>`` (the saved tensor as a Tensor: an input's own tensor where it is a leaf, the result
    with its grad_fn) or ``node._raw_saved_<key>`` (a ``SavedTensor``); a declared non-tensor value by its name."""
    raw = name.startswith("_raw_saved_")
    key = name[len("_raw_saved_" if raw else "_saved_"):]
    names = [n for n, _ in node.fn.saved_as]
    if key not in names:
        attribute = node.fn.saved_values.get(key)
        if attribute is None or raw:
            raise AttributeError(f"'{node.name()}' object has no attribute '{name}'")
        if node.freed:
            raise RuntimeError(FREED)
        return node.__dict__[attribute]
    position = names.index(key)
    if raw:
        return SavedTensor(node, position)
    if node.freed:
        raise RuntimeError(FREED)
    item = node.saved[position] if position < len(node.saved) else None
    if type(item) is _Packed:
        item = item.unpacked()
    if item is None:
        return None
    array = item._data if isinstance(item, function.Tensor) else np.asarray(item)
    role = node.fn.saved_as[position][1]
    if role == "out":
        return node.output_tensor(array)
    meta = node.input_meta[role] if isinstance(role, int) and role < len(node.input_meta) else None
    if meta and meta[0] == array.shape:        # the input's place in the graph (the leaf itself when it is one)
        return node.input_tensor(role, array)
    return function.Tensor(array)


function.saved_by_name = _by_name
