"""``minigrad.func``, PyTorch's ``torch.func``: function transforms and running a module as a function.

- ``functional_call``: a module run with given tensors as its parameters and buffers (functional_call.py)
- ``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``linearize``, ``jacrev``, ``jacfwd``, ``hessian``:
  derivatives as functions, built on minigrad's reverse-mode autograd (transforms.py)
- ``vmap``: a function of one sample applied to a batch, as a loop over the samples (vmap.py)
- ``stack_module_state``, ``replace_all_batch_norm_modules_``: models prepared for ensembling and vmap
  (module_state.py)
- ``functionalize``, ``debug_unwrap``: PyTorch's names, stand-ins with nothing to do here (stand_ins.py)

Transforms compose: ``vmap(grad(loss), in_dims=(None, 0, 0))(params, xs, ys)`` gives per-sample gradients,
``jacrev(grad(f))`` or ``hessian(f)`` second derivatives. ``minigrad.autograd.functional`` has PyTorch's older
API for the same quantities (``jacobian``, ``hessian``, ``vjp``, ``jvp``, ``hvp``, ``vhp``).
"""
from .functional_call import functional_call
from .module_state import replace_all_batch_norm_modules_, stack_module_state
from .stand_ins import debug_unwrap, functionalize
from .transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from .vmap import vmap

__all__ = ["functional_call", "grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian",
           "vmap", "stack_module_state", "replace_all_batch_norm_modules_", "functionalize", "debug_unwrap"]
