"""``minigrad.utils.module_tracker``: which modules a program is inside, in the forward pass and in the backward.

``ModuleTracker`` keeps ``parents``, the set of the names of the modules running now, always with ``"Global"``.
A module is named by its class for a module met first (the model: ``"Net"``) and by its path below it for the
modules it holds (``"Net.blocks.0.attn"``), as PyTorch names them.

Forward: a global forward pre-hook adds the module's name, a global forward hook removes it. Backward runs the
other way round: the module's outputs' gradients arrive first and its inputs' last, so a multi-gradient hook on the
outputs (``autograd.graph.register_multi_grad_hook``) adds the name when their gradients have arrived, and one on
the inputs removes it when theirs have. A module whose inputs need no gradient (the first layer) is never left in
the backward: ``parents`` goes back to ``{"Global"}`` when the backward pass ends. ``utils.flop_counter`` charges
each op to every module in ``parents``.
"""
import logging
import weakref

from ..autograd import engine
from ..autograd.graph import register_multi_grad_hook
from ..nn.module_hooks import register_module_forward_hook, register_module_forward_pre_hook
from ..tensor import Tensor
from ._pytree import tree_flatten

__all__ = ["ModuleTracker"]

logger = logging.getLogger(__name__)


class ModuleTracker:
    """``with ModuleTracker() as tracker:`` ... ``tracker.parents`` names the modules running now (module
    docstring); ``tracker.is_bw`` tells whether a backward pass is running."""

    parents: set

    def __init__(self):
        self.parents = {"Global"}
        self._known_modules = weakref.WeakKeyDictionary()   # module -> its name
        self._seen_modules = weakref.WeakSet()              # modules whose children have been named
        self._hooks = []
        self._has_callback = False

    @property
    def is_bw(self):
        """Whether a backward pass is running in this thread."""
        return engine.backward_running()

    def _get_mod_name(self, mod):
        if mod not in self._known_modules:
            self._known_modules[mod] = type(mod).__name__
        name = self._known_modules[mod]
        if mod not in self._seen_modules:
            for child_name, child in mod.named_children():
                self._known_modules[child] = f"{name}.{child_name}"
                self._get_mod_name(child)
            self._seen_modules.add(mod)
        return name

    def _back_to_global(self):
        """At the end of a backward pass: whatever a module left open (module docstring) is closed."""
        self.parents = {"Global"}
        self._has_callback = False

    def _enter(self, name, backward):
        if backward and not self._has_callback:
            engine.queue_callback(self._back_to_global)
            self._has_callback = True
        if name in self.parents:
            logger.info("The module hierarchy tracking seems to be broken: %s was entered again during the %s",
                        name, "backward" if backward else "forward")
        self.parents.add(name)

    def _leave(self, name, backward):
        if name in self.parents:
            self.parents.remove(name)
        else:
            logger.info("The module hierarchy tracking is confused: %s was left during the %s without being "
                        "entered", name, "backward" if backward else "forward")

    def _watch(self, values, action):
        """Call ``action`` in the backward once the gradients of the tensors in ``values`` that need one arrived."""
        tensors = [v for v in tree_flatten(values)[0] if isinstance(v, Tensor) and v.requires_grad]
        if tensors:
            self._hooks.append(register_multi_grad_hook(tensors, lambda grads: action()))

    def _fw_pre_hook(self, mod, args):
        name = self._get_mod_name(mod)
        self._enter(name, False)
        self._watch(args, lambda: self._leave(name, True))     # its inputs' gradients: the module is done

    def _fw_post_hook(self, mod, args, output):
        name = self._get_mod_name(mod)
        self._leave(name, False)
        self._watch(output, lambda: self._enter(name, True))   # its outputs' gradients: the module begins

    def __enter__(self):
        self._fw_pre_handle = register_module_forward_pre_hook(self._fw_pre_hook)
        self._fw_post_handle = register_module_forward_hook(self._fw_post_hook)
        return self

    def __exit__(self, *args):
        self._fw_pre_handle.remove()
        self._fw_post_handle.remove()
        for handle in self._hooks:
            handle.remove()
        self._hooks.clear()
