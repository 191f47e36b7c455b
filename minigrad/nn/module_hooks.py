"""A module call with its hooks, as PyTorch's ``Module.__call__`` runs them: forward pre-hooks, forward, forward
hooks, and the backward hooks that gradients meet later; the hooks registered for every module
(``nn.modules.module.register_module_*``) run before a module's own.

Forward hooks take PyTorch's options: ``prepend`` (run first), ``with_kwargs`` (the hook sees and may replace the
keyword arguments: ``hook(module, args, kwargs)`` returns ``(args, kwargs)``; ``hook(module, args, kwargs, output)``),
and ``always_call`` (a forward hook that runs even when forward raises, with output None; an error it raises then is
turned into a warning, and forward's error propagates).

Backward hooks, as PyTorch's ``BackwardHook`` places them. When a module with backward hooks is called with grad
mode on, its positional tensor arguments pass through one identity node and its outputs (a tensor or a tuple) through
another. In backward the outputs' node is reached first: the backward pre-hooks see ``grad_output`` (one entry per
output, None for an output the loss does not reach) and may replace it. The inputs' node is reached once the
gradients have gone through the module: the full backward hooks see ``(module, grad_input, grad_output)``
(``grad_input``: one entry per positional argument, None for one that is not a tensor) and may replace
``grad_input``. When no input requires grad, the full hooks run at the outputs' node, with ``grad_input`` all None,
and warn as PyTorch's do. The identity nodes copy what passes through them (minigrad's Functions return new
tensors), so an in-place write into a hooked module's input does not reach the caller's tensor: PyTorch refuses it
("is a view and is being modified inplace").
"""
import warnings
from collections import OrderedDict

from ..autograd import Function, grad_mode
from ..tensor import Tensor, _RemovableHandle

# hooks registered for every module (``register_module_*``), each list in call order
GLOBAL = {"forward_pre": [], "forward": [], "backward_pre": [], "backward": []}
_global_backward_kind = [None]     # "full" or "legacy" once a global backward hook is registered


class Flagged:
    """A forward hook registered with ``with_kwargs`` or ``always_call`` (a plain hook is stored as itself)."""

    def __init__(self, hook, with_kwargs=False, always_call=False):
        self.hook, self.with_kwargs, self.always_call = hook, with_kwargs, always_call

    def __call__(self, *args):
        return self.hook(*args)

    def __eq__(self, other):                       # removal by handle compares the entry
        return self is other


def add_hook(hooks, hook, prepend=False, with_kwargs=False, always_call=False):
    """Put ``hook`` in the list ``hooks`` (first if ``prepend``); a handle that removes it."""
    entry = Flagged(hook, with_kwargs, always_call) if with_kwargs or always_call else hook
    hooks.insert(0, entry) if prepend else hooks.append(entry)
    return _RemovableHandle(hooks, entry)


def module_hooks(module, name):
    """The module's own list of ``name`` hooks (``_forward_pre_hooks``...), made on first use for the backward ones."""
    hooks = module.__dict__.get(name)
    if hooks is None:
        hooks = []
        object.__setattr__(module, name, hooks)
    return hooks


def check_backward_kind(kind, current, where):
    """PyTorch refuses both kinds of backward hook on one module (or globally)."""
    if current is not None and current != kind:
        raise RuntimeError(f"Cannot use both regular backward hooks and full backward hooks {where}. Please use only "
                           "one of them.")


def hooked(module):
    """Whether calling ``module`` has any hook to run (else ``__call__`` is just ``forward``)."""
    d = module.__dict__
    return bool(d["_forward_pre_hooks"] or d["_forward_hooks"] or d.get("_backward_hooks")
                or d.get("_backward_pre_hooks") or any(GLOBAL.values()))


def call(module, args, kwargs):
    """``module(*args, **kwargs)`` with its hooks (module docstring)."""
    for hook in GLOBAL["forward_pre"] + module._forward_pre_hooks:
        if getattr(hook, "with_kwargs", False):
            result = hook(module, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"forward pre-hook must return None or a tuple of (new_args, new_kwargs), but "
                                       f"got {result}.")
                args, kwargs = result
        else:
            result = hook(module, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
    backward = _BackwardHooks(module) if grad_mode.is_grad_enabled() else None
    if backward is not None and backward.active:
        args = backward.setup_inputs(args)
    forward_hooks = GLOBAL["forward"] + module._forward_hooks
    global_ids = {id(hook) for hook in GLOBAL["forward"]}
    called = set()
    output = None
    try:
        output = module.forward(*args, **kwargs)
        for hook in forward_hooks:
            called.add(id(hook))
            result = hook(module, args, kwargs, output) if getattr(hook, "with_kwargs", False) else hook(module, args,
                                                                                                       output)
            if result is not None:
                output = result
    except Exception:
        for hook in forward_hooks:
            if getattr(hook, "always_call", False) and id(hook) not in called:
                try:
                    result = hook(module, args, kwargs, output) if hook.with_kwargs else hook(module, args, output)
                    if result is not None:
                        output = result
                except Exception as error:   # noqa: BLE001 - PyTorch silences it, forward's error goes on
                    where = "global module" if id(hook) in global_ids else "module"
                    warnings.warn(f"{where} forward hook with ``always_call=True`` raised an exception that was "
                                  f"silenced as another error was raised in forward: {error}", stacklevel=3)
        raise
    if backward is not None and backward.active:
        output = backward.setup_outputs(output)
    return output


class _BackwardHooks:
    """One call's backward hooks: the identity nodes on its inputs and outputs, and what the first saw."""

    def __init__(self, module):
        self.module = module
        self.pre_hooks = GLOBAL["backward_pre"] + module.__dict__.get("_backward_pre_hooks", [])
        self.hooks = GLOBAL["backward"] + module.__dict__.get("_backward_hooks", [])
        self.active = bool(self.pre_hooks or self.hooks)
        self.inputs_hooked = False
        self.grad_output = None

    def setup_inputs(self, args):
        self.n_inputs = len(args)
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not self.hooks or not any(args[i].requires_grad for i in positions):
            return args
        self.input_positions, self.inputs_hooked = positions, True
        return _placed(_through(self.on_grad_input, True, [args[i] for i in positions]), positions, args)

    def setup_outputs(self, output):
        outputs = output if isinstance(output, tuple) else (output,)
        positions = [i for i, o in enumerate(outputs) if isinstance(o, Tensor)]
        if not any(outputs[i].requires_grad for i in positions):
            if not positions:
                warnings.warn(f"For backward hooks to be called, module output should be a Tensor or a tuple of "
                              f"Tensors but received {type(output)}", stacklevel=3)
            return output
        self.n_outputs, self.output_positions = len(outputs), positions
        outputs = _placed(_through(self.on_grad_output, False, [outputs[i] for i in positions]), positions, outputs)
        return outputs if isinstance(output, tuple) else outputs[0]

    def on_grad_output(self, grads):
        """The outputs' node: pre-hooks on grad_output; the full hooks too when no input is hooked."""
        grad_output = _placed(grads, self.output_positions, (None,) * self.n_outputs)
        grad_output = _replaced(self.pre_hooks, lambda hook, g: hook(self.module, g), grad_output,
                                "Backward pre hook returned an invalid number of grad_output")
        if not self.inputs_hooked and self.hooks:
            warnings.warn("Full backward hook is firing when gradients are computed with respect to module outputs "
                          "since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
                          "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details.",
                          stacklevel=2)
            for hook in self.hooks:
                result = hook(self.module, (None,) * self.n_inputs, grad_output)
                if result is not None and not (isinstance(result, tuple) and all(r is None for r in result)):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                       "return None or None for all gradients.")
        else:
            self.grad_output = grad_output
        return tuple(grad_output[i] for i in self.output_positions)

    def on_grad_input(self, grads):
        """The inputs' node: the full hooks on (grad_input, grad_output)."""
        grad_input = _placed(grads, self.input_positions, (None,) * self.n_inputs)
        grad_input = _replaced(self.hooks, lambda hook, g: hook(self.module, g, self.grad_output), grad_input,
                               "Backward hook returned an invalid number of grad_input")
        self.grad_output = None
        return tuple(grad_input[i] for i in self.input_positions)


def _through(on_grads, materialize, tensors):
    """The tensors passed through one ``BackwardHookFunction`` node (a tuple, however many)."""
    through = BackwardHookFunction.apply(on_grads, materialize, *tensors)
    return through if isinstance(through, tuple) else (through,)


def _placed(values, positions, into):
    """``into`` as a tuple, with ``values`` at ``positions``."""
    out = list(into)
    for i, value in zip(positions, values):
        out[i] = value
    return tuple(out)


def _replaced(hooks, call, grads, error):
    """``grads`` after each hook (``call(hook, grads)``) that returns a replacement of the same length."""
    for hook in hooks:
        result = call(hook, grads)
        if result is not None:
            if len(result) != len(grads):
                raise RuntimeError(f"{error}, got {len(result)}, but expected {len(grads)}")
            grads = tuple(result)
    return grads


class BackwardHookFunction(Function):
    """Identity on a module's tensor arguments or outputs (PyTorch's node of that name); its backward hands the
    gradients that reach it to ``on_grads`` (``_BackwardHooks.on_grad_input`` / ``on_grad_output``). ``materialize``:
    zeros for a tensor whose gradient does not arrive (the inputs, as PyTorch's), or None (the outputs)."""

    @staticmethod
    def forward(ctx, on_grads, materialize, *tensors):
        ctx.on_grads = on_grads
        ctx.set_materialize_grads(materialize)
        copies = tuple(t.detach().clone() for t in tensors)
        return copies if len(copies) > 1 else copies[0]

    @staticmethod
    def backward(ctx, *grads):
        return (None, None) + ctx.on_grads(grads)


# --------------------------------------------------------------------------- the global registrations
def register_module_forward_pre_hook(hook):
    """``hook(module, args)`` before every module's forward (before its own pre-hooks)."""
    return add_hook(GLOBAL["forward_pre"], hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """``hook(module, args, output)`` after every module's forward (before its own forward hooks)."""
    return add_hook(GLOBAL["forward"], hook, with_kwargs=with_kwargs, always_call=always_call)


def register_module_full_backward_pre_hook(hook):
    """``hook(module, grad_output)`` for every module, when its outputs' gradients are computed."""
    return add_hook(GLOBAL["backward_pre"], hook)


def register_module_full_backward_hook(hook):
    """``hook(module, grad_input, grad_output)`` for every module, when its inputs' gradients are computed."""
    check_backward_kind("full", _global_backward_kind[0], "as a global Module hook")
    _global_backward_kind[0] = "full"
    return add_hook(GLOBAL["backward"], hook)


def register_module_backward_hook(hook):
    """The legacy form of ``register_module_full_backward_hook`` (minigrad gives it the full hook's semantics)."""
    check_backward_kind("legacy", _global_backward_kind[0], "as a global Module hook")
    _global_backward_kind[0] = "legacy"
    return add_hook(GLOBAL["backward"], hook)


REGISTRATION = {"buffer": OrderedDict(), "module": OrderedDict(), "parameter": OrderedDict()}


def _registration_hook(kind):
    def register(hook):
        handle = _RemovableHandle(_DictHooks(REGISTRATION[kind]), hook)
        REGISTRATION[kind][handle.id] = hook
        return handle
    register.__name__ = f"register_module_{kind}_registration_hook"
    register.__doc__ = (f"``hook(module, name, {kind})`` whenever any module registers a {kind}; a returned value "
                        f"replaces the {kind}.")
    return register


class _DictHooks:
    """The list interface ``_RemovableHandle`` removes from, over an id -> hook dict."""

    def __init__(self, hooks):
        self.hooks = hooks

    def __contains__(self, hook):
        return any(h is hook for h in self.hooks.values())

    def remove(self, hook):
        for key, h in list(self.hooks.items()):
            if h is hook:
                del self.hooks[key]
                return


register_module_buffer_registration_hook = _registration_hook("buffer")
register_module_module_registration_hook = _registration_hook("module")
register_module_parameter_registration_hook = _registration_hook("parameter")


def registered(kind, module, name, value):
    """``value`` after the global registration hooks of ``kind`` (each may replace it)."""
    for hook in list(REGISTRATION[kind].values()):
        result = hook(module, name, value)
        if result is not None:
            value = result
    return value
