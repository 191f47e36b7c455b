"""``functional_call``: a module run with other tensors in place of its parameters and buffers (as
``torch.func.functional_call``). Meta-learning, ensembles and per-sample gradients write the model's weights as
arguments this way, so that the function transforms (``grad``, ``vmap``, ...) can act on them.

    params = {name: p.detach().requires_grad_() for name, p in model.named_parameters()}
    loss = loss_fn(functional_call(model, params, (x,)), y)    # gradients reach params, not the model's own
"""
from collections.abc import Mapping

__all__ = ["functional_call"]


def _merged(dicts):
    """One dict of the name -> tensor dicts, PyTorch's error for a name given twice."""
    if isinstance(dicts, Mapping):
        dicts = [dicts]
    merged, repeated = {}, []
    for d in dicts:
        for name, value in d.items():
            if name in merged:
                repeated.append(name)
            merged[name] = value
    if repeated:
        raise ValueError(f"{sorted(set(repeated))} appeared in multiple dictionaries; behavior of functional call is "
                         "ambiguous")
    return merged


def _state_names(module):
    """Every name of a parameter or buffer in ``module``, shared ones under each of their names, grouped by the
    tensor they name (tied weights are one group)."""
    groups = {}
    for named in (module.named_parameters(remove_duplicate=False), module.named_buffers(remove_duplicate=False)):
        for name, tensor in named:
            groups.setdefault(id(tensor), []).append(name)
    return list(groups.values())


def _tie(values, groups):
    """A value given for one name of tied weights stands for all its names; different values for two of them are
    PyTorch's error."""
    for names in groups:
        given = [name for name in names if name in values]
        if len({id(values[name]) for name in given}) > 1:
            raise ValueError(f"functional_call got multiple values for keys {given}, which are tied. Consider using "
                             "tie_weights=False")
        if given:
            for name in names:
                values.setdefault(name, values[given[0]])
    return values


def _check_names(module, values, groups):
    """``strict``: the names given are exactly the module's parameters and buffers (PyTorch's error otherwise)."""
    expected = {name for names in groups for name in names}
    unexpected, missing = sorted(set(values) - expected), sorted(expected - set(values))
    if unexpected or missing:
        lines = [f"Error(s) in reparametrizing for {type(module).__name__}:"]
        if unexpected:
            lines.append("\tUnexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + ".")
        if missing:
            lines.append("\tMissing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
        raise RuntimeError("\n".join(lines))


def _swap(module, name, value):
    """Put ``value`` at the dotted ``name`` (a parameter, a buffer, or a new attribute) of ``module``; returns how
    to put back what was there."""
    *path, attr = name.split(".")
    owner = module
    for part in path:
        owner = getattr(owner, part)
    for registry in ("_parameters", "_buffers"):
        table = owner.__dict__.get(registry, {})
        if attr in table:
            old = table[attr]
            table[attr] = value                # the registry itself: a plain tensor may stand for a Parameter
            return lambda: table.__setitem__(attr, old)
    missing = object()
    old = owner.__dict__.get(attr, missing)
    object.__setattr__(owner, attr, value)
    if old is missing:
        return lambda: object.__delattr__(owner, attr)
    return lambda: object.__setattr__(owner, attr, old)


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the tensors of ``parameter_and_buffer_dicts`` (a dict, or several with no
    name in two) standing in for the parameters and buffers of those dotted names; the others are the module's
    own. Afterwards the module holds its own tensors again, also when the call raised. ``tie_weights``: a tensor
    given for one name of weights the module shares serves all of them. ``strict``: the names must be exactly
    the module's parameters and buffers. Gradients flow to the tensors given."""
    values = _merged(parameter_and_buffer_dicts)
    groups = _state_names(module)
    if tie_weights:
        values = _tie(dict(values), groups)
    if strict:
        _check_names(module, values, groups)
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    restores = []
    try:
        for name, value in values.items():
            restores.append(_swap(module, name, value))
        return module(*args, **(kwargs or {}))
    finally:
        for restore in reversed(restores):
            restore()
