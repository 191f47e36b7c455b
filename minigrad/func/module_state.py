"""Modules prepared for the function transforms.

``stack_module_state(models)`` stacks the parameters and buffers of several models of one architecture along a
new first dimension, for model ensembling: ``vmap`` over ``functional_call`` then runs every model at once.

    params, buffers = stack_module_state(models)
    def one(params, buffers, x):
        return functional_call(base_model, (params, buffers), (x,))
    predictions = vmap(one, in_dims=(0, 0, None))(params, buffers, x)      # [num_models, batch, ...]

``replace_all_batch_norm_modules_(root)`` makes every batch norm in ``root`` stop tracking running statistics,
so that it always normalizes with the statistics of the batch it sees (PyTorch's vmap cannot update running
buffers in place, hence this helper; minigrad's loop-based vmap could, but gives then other statistics).
"""
from ..nn.channel_norms import _BatchNorm
from ..ops.shape import stack

__all__ = ["stack_module_state", "replace_all_batch_norm_modules_"]


def _stacked_leaf(tensors, name):
    """The tensors of one name in every model, stacked into a new leaf (a copy: the models keep their own), which
    requires grad when theirs do."""
    requires_grad = tensors[0].requires_grad
    if any(t.requires_grad != requires_grad for t in tensors):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    stacked = stack([t.detach() for t in tensors]).detach()
    return stacked.requires_grad_() if requires_grad else stacked


def stack_module_state(models):
    """(params, buffers): dicts of each parameter and buffer name of ``models`` (a list or ModuleList of models of
    one class, all training or all in eval mode) to the stack of that tensor over the models (dimension 0)."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]
    params = {name: _stacked_leaf([p[name] for p in all_params], name) for name in all_params[0]}
    buffers = {name: _stacked_leaf([b[name] for b in all_buffers], name) for name in all_buffers[0]}
    return params, buffers


def replace_all_batch_norm_modules_(root):
    """In place: every batch norm module in ``root`` (``root`` included) without running statistics
    (``running_mean``, ``running_var``, ``num_batches_tracked`` None, ``track_running_stats`` False). Returns
    ``root``."""
    for module in root.modules():
        if isinstance(module, _BatchNorm):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
