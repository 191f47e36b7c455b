"""Derivatives as functions (``torch.func``): each transform takes a function and returns a new one.

For f with Jacobian J at x (one block per output and input):

    grad(f)(x)             = df/dx for a scalar f: one backward pass (``grad_and_value`` also returns f(x))
    vjp(f, x)              = (f(x), u -> u^T J): the backward pass, as a function of the upstream gradient u
    jvp(f, (x,), (v,))     = (f(x), J v): the directional derivative along v
    linearize(f, x)        = (f(x), v -> J v): jvp for many v from one evaluation of f
    jacrev(f)(x)           = J, one row u^T J per output element (u running over the unit vectors)
    jacfwd(f)(x)           = J as well (PyTorch builds it column by column with forward mode)
    hessian(f)(x)          = jacfwd(jacrev(f))(x): the Jacobian of the gradient

``argnums`` picks the positional arguments to differentiate (an int, or a tuple: then one result per argument);
an argument may be a pytree (tuple, list, dict, named tuple of tensors, e.g. a model's parameter dict) and the
derivative has the same structure. ``has_aux=True``: f returns (output, aux), aux is passed through untouched.

How it works here. minigrad has reverse-mode autograd only. A transform runs f on stand-ins of the chosen
inputs: a fresh leaf that requires grad when the input does not, or a view of the input (still connected to
its graph) when it does, and calls ``autograd.grad`` on the result. That gradient is built with
``create_graph=True`` exactly when the output's graph reaches a tensor requiring grad other than the stand-ins
(an outer transform's input, a parameter f closes over): then ``grad(grad(f))``, ``jacrev(grad(f))`` and plain
``backward()`` through a result work, and otherwise the result is a constant, as PyTorch's (``grad(f)(x)`` of
a plain x does not require grad). jvp, linearize and jacfwd run in reverse mode too: with g(u) = J^T u, which
is linear in u, the gradient of <g(u), v> with respect to u is J v (the "double vjp"); jacfwd is built row by
row like jacrev. The values are PyTorch's; the cost is that of reverse mode (one backward pass per output
element for a Jacobian).
"""
import functools
import weakref

import numpy as np

from .. import autograd
from ..autograd.function import is_ours
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..creation import zeros_like
from ..dtypes import is_differentiable
from ..ops.shape import stack
from ..random import default_generator, same_snapshot
from ..tensor import Tensor
from ._pytree import tree_flatten, tree_unflatten, treespec_pprint

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian"]

_VJP = "vjp(f, *primals)"
_JVP = "jvp(f, primals, tangents)"
_RANDOMNESS = ("error", "different", "same")
RANDOM_IN_ERROR_MODE = ("vmap: called random operation while in randomness error mode. Please either use the "
                        "'same' or 'different' randomness flags on vmap or perform the randomness operation out of "
                        "vmap")


# --------------------------------------------------------------------------- which arguments, as what
def _checked_argnums(argnums, num_args):
    """``argnums`` with negative positions counted from the end; PyTorch's errors for a bad one."""
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    positions = argnums if isinstance(argnums, tuple) else (argnums,)
    if not positions:
        raise RuntimeError("argnums must be non-empty")
    for position in positions:
        if not isinstance(position, int):
            raise RuntimeError(f"argnum must be int, got: {type(position)}")
        if not -num_args <= position < num_args:
            raise RuntimeError(f"Got argnum={position}, but only {num_args} positional inputs")
    normalized = tuple(position % num_args for position in positions)
    if len(set(normalized)) != len(normalized):
        raise RuntimeError(f"argnums elements must be unique, got {normalized}")
    return normalized if isinstance(argnums, tuple) else normalized[0]


def _check_tensors(leaves):
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(leaf)}")


def _check_forward_dtypes(leaves):
    """Forward-mode transforms (jvp, linearize, jacfwd) take floating point or complex primals only."""
    for leaf in leaves:
        if not is_differentiable(leaf.dtype):
            raise ValueError(f"Expected primal to be floating point or complex, but got: minigrad.{leaf.dtype}")


def _stand_in(tensor, tracking):
    """What f sees in place of an input it is differentiated with respect to: a view of the input when the input
    requires grad (and grad mode is on), so that the caller's graph continues through f; otherwise a fresh leaf
    sharing its values."""
    if tracking and tensor.requires_grad:
        return tensor.view_as(tensor)
    return tensor.detach().requires_grad_()


def _stand_in_arguments(args, argnums, tracking, forward=False):
    """(stand-ins, structure, arguments): the leaves of the chosen arguments replaced by stand-ins, their pytree
    structure (one argument's, or the tuple of the chosen arguments'), and the full argument tuple to call f
    with."""
    argnums = _checked_argnums(argnums, len(args))
    chosen = args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)
    leaves, structure = tree_flatten(chosen)
    _check_tensors(leaves)
    if forward:
        _check_forward_dtypes(leaves)
    stand_ins = [_stand_in(leaf, tracking) for leaf in leaves]
    return stand_ins, structure, _placed(args, argnums, structure, stand_ins)


def _placed(args, argnums, structure, leaves):
    """``args`` with the chosen arguments (``argnums``) rebuilt from ``leaves`` (their pytree ``structure``)."""
    argnums = _checked_argnums(argnums, len(args))
    rebuilt, arguments = tree_unflatten(list(leaves), structure), list(args)
    for position, value in ((argnums, rebuilt),) if isinstance(argnums, int) else zip(argnums, rebuilt):
        arguments[position] = value
    return tuple(arguments)


def _split_aux(result, has_aux, context):
    """(output, aux) of f's result; PyTorch's errors for a result that is not such a pair, or non-tensor aux."""
    if not has_aux:
        return result, None
    if not (isinstance(result, tuple) and len(result) == 2):
        raise RuntimeError(f"{context}: output of function f should be a tuple: (output, aux) if has_aux is True")
    for leaf in tree_flatten(result[1])[0]:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(leaf)}")
    return result


def _tensor_leaves(tree, context):
    leaves, structure = tree_flatten(tree)
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"{context}: expected f(*primals) to return only tensors, got unsupported type "
                               f"{type(leaf)}")
    return leaves, structure


# --------------------------------------------------------------------------- when to keep a graph
_retired = {}   # id -> weak reference: the fresh leaves of transforms that have returned


def _retire(stand_ins):
    """Once a transform has returned, its fresh leaves are nobody's input any more: an outer transform seeing
    them in a graph (a result that kept its graph for the outer one) need not keep a graph for them."""
    for t in stand_ins:
        if t.grad_fn is None and id(t) not in _retired:
            _retired[id(t)] = weakref.ref(t, lambda _, key=id(t): _retired.pop(key, None))


def _counts(leaf, own_ids):
    """Whether a leaf requiring grad met in a graph is someone else's input: not one of ours, not retired."""
    if id(leaf) in own_ids:
        return False
    ref = _retired.get(id(leaf))
    return ref is None or ref() is not leaf


def _reaches_beyond(tensors, own):
    """Whether the graph of any of ``tensors`` leads to a tensor requiring grad other than the leaves ``own``
    (and the retired leaves of finished transforms): then an outer transform (or the caller's autograd) can
    differentiate through them."""
    own_ids = {id(t) for t in own}
    roots = []
    for t in tensors:
        if isinstance(t, Tensor) and t.requires_grad:
            if t.grad_fn is None:
                if _counts(t, own_ids):
                    return True
            else:
                roots.append(t.grad_fn)
    return any(isinstance(edge, Tensor) and _counts(edge, own_ids)
               for node in _graph_nodes(roots) for edge in node.next_edges)


def _graph_nodes(roots):
    """Every node of the graphs under the nodes ``roots``, once each (a node's ``next_edges`` hold the nodes it
    leads to, and the leaves as Tensors)."""
    stack_, seen = list(roots), set()
    while stack_:
        node = stack_.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        stack_.extend(edge for edge in node.next_edges if edge is not None and not isinstance(edge, Tensor))


def _keeps_graph(tensors, own, tracking):
    """Whether derivatives of ``tensors`` must be built with create_graph (see the module docstring)."""
    return tracking and _reaches_beyond(tensors, own)


def _released(tree, own, tracking):
    """``tree`` with each tensor detached unless its graph reaches beyond the transform's own stand-ins ``own``:
    a result only an outer transform or the caller's autograd could differentiate keeps its graph, others are
    constants (PyTorch's ``requires_grad`` on transform results)."""
    def release(t):
        if isinstance(t, Tensor) and t.requires_grad and not _keeps_graph([t], own, tracking):
            return t.detach()
        return t
    leaves, structure = tree_flatten(tree)
    return tree_unflatten([release(t) for t in leaves], structure)


# --------------------------------------------------------------------------- the one primitive: u^T J
def _vector_jacobian(outputs, inputs, cotangents, create_graph, retain_graph=True):
    """sum_i cotangents_i^T d outputs_i / d inputs, zeros for an input no output depends on."""
    pairs = [(o, u) for o, u in zip(outputs, cotangents) if o.requires_grad]
    grads = [None] * len(inputs)
    if pairs and inputs:
        grads = autograd.grad([o for o, _ in pairs], inputs, [u for _, u in pairs], retain_graph=retain_graph,
                              create_graph=create_graph, allow_unused=True)
    return [zeros_like(x) if g is None else g for g, x in zip(grads, inputs)]


def _check_cotangent_shapes(cotangents, outputs):
    for i, (u, o) in enumerate(zip(cotangents, outputs)):
        if isinstance(u, Tensor) and u.shape != o.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {u.shape!r} and output[{i}] has a "
                               f"shape of {o.shape!r}.")


# --------------------------------------------------------------------------- grad
def grad_and_value(func, argnums=0, has_aux=False):
    """``func`` -> a function returning (gradient, value) of the scalar ``func(*args)`` with respect to the
    arguments ``argnums``; with ``has_aux``: (gradient, (value, aux))."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        tracking = is_grad_enabled()
        with enable_grad():
            stand_ins, structure, arguments = _stand_in_arguments(args, argnums, tracking)
            value, aux = _split_aux(func(*arguments, **kwargs), has_aux, "grad_and_value(f)(*args)")
            if not isinstance(value, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(value)}")
            if value.ndim != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                                   f"with {value.ndim} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            gradient = _vector_jacobian([value], stand_ins, [None], _keeps_graph([value], stand_ins, tracking))
        gradient = _released(tree_unflatten(gradient, structure), stand_ins, tracking)
        value = _released(value, stand_ins, tracking)
        _retire(stand_ins)
        if has_aux:
            return gradient, (value, _released(aux, stand_ins, tracking))
        return gradient, value
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """``func`` -> its gradient function: d func(*args) / d args[argnums] for a scalar-valued ``func``, shaped as
    those arguments (a tuple of them for a tuple ``argnums``); with ``has_aux``: (gradient, aux)."""
    value_and_grad = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        gradient, value = value_and_grad(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient
    return wrapper


# --------------------------------------------------------------------------- vjp
def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn) (and aux with ``has_aux``): ``vjp_fn(cotangents)`` is u^T J for cotangents u
    shaped as the output, a tuple with one entry per primal. ``vjp_fn`` may be called many times."""
    tracking = is_grad_enabled()
    with enable_grad():
        leaves, structure = tree_flatten(primals)
        _check_tensors(leaves)
        stand_ins = [_stand_in(leaf, tracking) for leaf in leaves]
        output, aux = _split_aux(func(*tree_unflatten(stand_ins, structure)), has_aux, _VJP)
        outputs, output_structure = _tensor_leaves(output, _VJP)
        keep = _keeps_graph(outputs, stand_ins, tracking)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        given, given_structure = tree_flatten(cotangents)
        if given_structure != output_structure:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                               f"to the function. cotangents: {treespec_pprint(given_structure)}, primal output: "
                               f"{treespec_pprint(output_structure)}")
        _check_cotangent_shapes(given, outputs)
        graph = create_graph
        if graph is None:
            graph = keep or (is_grad_enabled() and any(isinstance(u, Tensor) and u.requires_grad for u in given))
        with enable_grad():
            grads = _vector_jacobian(outputs, stand_ins, given, graph, retain_graph)
        return _released(tree_unflatten(grads, structure), stand_ins, graph)

    result = (_released(output, stand_ins, tracking), vjp_fn)
    _retire(stand_ins)
    return result + (_released(aux, stand_ins, tracking),) if has_aux else result


# --------------------------------------------------------------------------- jvp, linearize (reverse mode)
class _JacobianVectorProducts:
    """v -> J v for one evaluation of f, by the double vjp: with dummy upstream gradients u (zeros requiring
    grad), g(u) = J^T u is built with create_graph, and the gradient of <g(u), v> with respect to u is J v.
    Exact, whatever the value of u, since g is linear in u."""

    def __init__(self, outputs, inputs, tracking):
        self.outputs, self.inputs, self.tracking = outputs, inputs, tracking
        self.dummies = [zeros_like(o).requires_grad_() if o.requires_grad else None for o in outputs]
        used = [(o, u) for o, u in zip(outputs, self.dummies) if u is not None]
        self.transposed = [None] * len(inputs)
        if used:
            self.transposed = autograd.grad([o for o, _ in used], inputs, [u for _, u in used], retain_graph=True,
                                            create_graph=True, allow_unused=True)
        self.keep = _keeps_graph(outputs, inputs, tracking)
        self.own = list(inputs) + [u for u in self.dummies if u is not None]    # the leaves this product made

    def __call__(self, tangents):
        pairs = [(g, v) for g, v in zip(self.transposed, tangents) if g is not None and g.requires_grad]
        dummies = [u for u in self.dummies if u is not None]
        graph = self.keep or (self.tracking and any(v.requires_grad for v in tangents))
        products = [None] * len(dummies)
        if pairs and dummies:
            with enable_grad():
                products = autograd.grad([g for g, _ in pairs], dummies, [v for _, v in pairs], retain_graph=True,
                                         create_graph=graph, allow_unused=True)
        products = iter(products)
        out = []
        for o, u in zip(self.outputs, self.dummies):
            product = next(products) if u is not None else None
            out.append(zeros_like(o) if product is None else product)
        return [_released(p, self.own, graph) for p in out]


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), J v) for tangents v shaped as the primals (and aux with ``has_aux``): the derivative of
    ``func`` at ``primals`` in the direction ``tangents``. Computed in reverse mode (the double vjp)."""
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    leaves, structure = tree_flatten(primals)
    directions, direction_structure = tree_flatten(tangents)
    if direction_structure != structure:
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python structure. For example, if "
                           f"primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{structure!r} and tangents with structure {direction_structure!r}")
    if not leaves:
        raise RuntimeError(f"{_JVP}: Expected primals to contain at least one Tensor.")
    for what, items in (("primals", leaves), ("tangents", directions)):
        for item in items:
            if not isinstance(item, Tensor):
                raise RuntimeError(f"{_JVP}: Expected {what} to only contain Tensors, got {type(item)}")
    _check_forward_dtypes(leaves)
    for p, v in zip(leaves, directions):
        if p.shape != v.shape:
            raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                               f"Tensor, this is not supported. Tensor is of size {list(p.shape)} while the given "
                               f"forward gradient is of size {list(v.shape)}.")
    tracking = is_grad_enabled()
    with enable_grad():
        stand_ins = [_stand_in(leaf, tracking) for leaf in leaves]
        output, aux = _split_aux(func(*tree_unflatten(stand_ins, structure)), has_aux, _JVP)
        outputs, output_structure = _tensor_leaves(output, _JVP)
        if _user_functions(outputs):
            _retire(stand_ins)
            return _forward_mode_jvp(func, leaves, directions, structure, has_aux)
        linear = _JacobianVectorProducts(outputs, stand_ins, tracking)
        products = linear(directions)
    result = (_released(output, stand_ins, tracking), tree_unflatten(products, output_structure))
    _retire(linear.own)
    return result + (_released(aux, stand_ins, tracking),) if has_aux else result


def _user_functions(outputs):
    """Whether the graph of ``outputs`` holds a node of a user's ``autograd.Function``: its ``jvp`` (or the lack of
    one) decides its tangent, as in PyTorch's forward mode, not its backward."""
    roots = [o.grad_fn for o in outputs if o.grad_fn is not None]
    classes = (getattr(node, "fn", None) for node in _graph_nodes(roots))
    return any(isinstance(cls, type) and not is_ours(cls) for cls in classes)


def _forward_mode_jvp(func, primals, tangents, structure, has_aux):
    """``jvp`` for a function that calls a user's ``autograd.Function``: ``func`` runs again in forward mode
    (``autograd.forward_ad``), the user's Function contributing its own ``jvp`` (PyTorch's error without one) and
    minigrad's ops their Jacobian-vector products; the results are this run's."""
    from ..autograd import forward_ad

    def primal(t):
        return forward_ad.unpack_dual(t).primal if isinstance(t, Tensor) else t
    with forward_ad.dual_level():
        duals = [forward_ad.make_dual(p, v) for p, v in zip(primals, tangents)]
        output, aux = _split_aux(func(*tree_unflatten(duals, structure)), has_aux, _JVP)
        outputs, output_structure = _tensor_leaves(output, _JVP)
        products = [forward_ad.unpack_dual(o).tangent for o in outputs]
        values = [primal(o) for o in outputs]
        aux = tree_unflatten([primal(t) for t in tree_flatten(aux)[0]], tree_flatten(aux)[1]) if has_aux else None
    products = [zeros_like(v) if t is None else t for v, t in zip(values, products)]
    result = (tree_unflatten(values, output_structure), tree_unflatten(products, output_structure))
    return result + (aux,) if has_aux else result


def linearize(func, *primals):
    """(func(*primals), jvp_fn) where ``jvp_fn(*tangents)`` is J v at ``primals``: f is evaluated once, each
    call of ``jvp_fn`` is one more backward pass (reverse mode, the double vjp)."""
    leaves, structure = tree_flatten(primals)
    _check_tensors(leaves)
    _check_forward_dtypes(leaves)
    tracking = is_grad_enabled()
    with enable_grad():
        stand_ins = [_stand_in(leaf, tracking) for leaf in leaves]
        output = func(*tree_unflatten(stand_ins, structure))
        outputs, output_structure = _tensor_leaves(output, "linearize(f, *primals)")
        custom = _user_functions(outputs)     # (a user's Function: each call runs f in forward mode, for its jvp)
        products = None if custom else _JacobianVectorProducts(outputs, stand_ins, tracking)

    def jvp_fn(*tangents):
        directions, direction_structure = tree_flatten(tangents)
        if direction_structure != structure:
            raise RuntimeError(f"Expected the tangents {direction_structure!r} to have the same argspec as the "
                               f"primals {structure!r}")
        for i, (v, p) in enumerate(zip(directions, leaves)):
            if not isinstance(v, Tensor):
                raise RuntimeError(f"tangent:{i} in flattened pytree must be a Tensor, got {type(v)}")
            if v.shape != p.shape:
                raise RuntimeError(f"tangent:{i} with shape {v.shape!r} in flattened pytree doesn't match the shape "
                                   f"{p.shape!r} of the corresponding primal.")
            if v.dtype != p.dtype:
                raise RuntimeError(f"tangent:{i} with dtype minigrad.{v.dtype} in flattened pytree doesn't match the "
                                   f"dtype minigrad.{p.dtype} of the corresponding primal.")
        if custom:
            return _forward_mode_jvp(func, [t.detach() for t in leaves], directions, structure, False)[1]
        return tree_unflatten(products(directions), output_structure)

    _retire(stand_ins if custom else products.own)
    return _released(output, stand_ins, tracking), jvp_fn


# --------------------------------------------------------------------------- Jacobians
def _jacobian_blocks(outputs, inputs, create_graph):
    """blocks[i][j] = d outputs[i] / d inputs[j], of shape outputs[i].shape + inputs[j].shape. Row k of the
    Jacobian is e_k^T J, one backward pass per output element; per input, the rows of all outputs are stacked
    into one matrix that the blocks are views of (as PyTorch's are: one block requires grad when another of the
    same input does)."""
    rows = []
    for o in outputs:
        if not o.requires_grad:
            rows.extend([zeros_like(x) for x in inputs] for _ in range(o.numel()))
            continue
        unit = np.eye(o.numel(), dtype=o.dtype)
        rows.extend(_vector_jacobian([o], inputs, [Tensor(unit[k].reshape(o.shape))], create_graph)
                    for k in range(o.numel()))
    sizes = [o.numel() for o in outputs]
    blocks = [[] for _ in outputs]
    for j, x in enumerate(inputs):
        if not rows:
            matrix = Tensor(np.zeros((0,) + tuple(x.shape), dtype=x.dtype))
        else:
            matrix = stack([row[j] for row in rows])
        start = 0
        for i, (o, size) in enumerate(zip(outputs, sizes)):
            blocks[i].append(matrix[start:start + size].reshape(tuple(o.shape) + tuple(x.shape)))
            start += size
    return blocks


def _forward_mode_blocks(func, inputs, outputs):
    """``_jacobian_blocks`` in forward mode (a function calling a user's ``autograd.Function``, whose ``jvp`` gives
    its part): column k of input j is the tangent of ``func(*inputs)`` in the direction e_k of input j."""
    blocks = [[] for _ in outputs]
    structure = tree_flatten(tuple(inputs))[1]
    for j, x in enumerate(inputs):
        columns = []
        for k in range(x.numel()):
            direction = np.zeros(x.numel(), dtype=x.dtype)
            direction[k] = 1
            tangents = [zeros_like(t) for t in inputs]
            tangents[j] = Tensor(direction.reshape(x.shape))
            columns.append(tree_flatten(_forward_mode_jvp(func, inputs, tangents, structure, False)[1])[0])
        for i, o in enumerate(outputs):
            column_i = [c[i].reshape(-1) for c in columns]
            matrix = stack(column_i, 1) if column_i else Tensor(np.zeros((o.numel(), 0), dtype=o.dtype))
            blocks[i].append(matrix.reshape(tuple(o.shape) + tuple(x.shape)))
    return blocks


def call_drawing_nothing(func, args, kwargs):
    """``func(*args, **kwargs)``; randomness 'error': PyTorch's error if it drew from the default generator (found by
    comparing the generator's state before and after), the generator put back as if the draw had not happened."""
    before = default_generator.snapshot()
    result = func(*args, **kwargs)
    if not same_snapshot(default_generator.snapshot(), before):
        default_generator.restore(before)
        raise RuntimeError(RANDOM_IN_ERROR_MODE)
    return result


def _check_randomness(randomness):
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")


def _check_real(name, what, tensors):
    for i, t in enumerate(tensors):
        if t.dtype.kind == "c":
            raise RuntimeError(f"{name}: Expected all {what} to be real but received complex tensor at flattened "
                               f"input idx: {i}")


def _jacobian(func, argnums, has_aux, context, forward, randomness=None):
    """jacrev and jacfwd: the same Jacobian (built in reverse mode), each with PyTorch's error texts. Real tensors
    only, as PyTorch's."""
    name = "jacfwd" if forward else "jacrev"
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if randomness is not None:
            _check_randomness(randomness)
        tracking = is_grad_enabled()
        with enable_grad():
            stand_ins, structure, arguments = _stand_in_arguments(args, argnums, tracking, forward=forward)
            result = (call_drawing_nothing(func, arguments, kwargs) if randomness == "error"
                      else func(*arguments, **kwargs))
            output, aux = _split_aux(result, has_aux, context)
            outputs, output_structure = _tensor_leaves(output, context)
            _check_real(name, "inputs", stand_ins)
            _check_real(name, "outputs", outputs)
            keep = _keeps_graph(outputs, stand_ins, tracking)
            if forward and _user_functions(outputs):      # (their own jvp, in forward mode, as PyTorch's jacfwd)
                blocks = _forward_mode_blocks(lambda *leaves: _split_aux(
                    func(*_placed(args, argnums, structure, leaves), **kwargs), has_aux, context)[0],
                    [t.detach() for t in stand_ins], outputs)
            else:
                blocks = _jacobian_blocks(outputs, stand_ins, keep)
        jacobian = tree_unflatten([tree_unflatten(row, structure) for row in blocks], output_structure)
        jacobian = _released(jacobian, stand_ins, tracking)
        _retire(stand_ins)
        return (jacobian, _released(aux, stand_ins, tracking)) if has_aux else jacobian
    return wrapper


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """``func`` -> its Jacobian function: d func(*args) / d args[argnums], each block of shape output.shape +
    input.shape, nested as the outputs then the inputs. ``chunk_size`` is accepted and checked; the rows are
    computed one at a time whatever it is."""
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    return _jacobian(func, argnums, has_aux, _VJP, forward=False)


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian as ``jacrev`` gives it. PyTorch computes it column by column in forward mode; minigrad computes
    it row by row in reverse mode (same values, one backward pass per output element), except through a user's
    ``autograd.Function``, whose ``jvp`` PyTorch uses: then column by column in forward mode (``func`` runs once per
    column). ``randomness``: 'error' (the default) raises if ``func`` draws random numbers; with 'same' or
    'different' ``func`` runs once, so all columns share its draws."""
    return _jacobian(func, argnums, has_aux, _JVP, forward=True, randomness=randomness)


def hessian(func, argnums=0):
    """``func`` -> its Hessian function: the Jacobian of the gradient, ``jacfwd(jacrev(func, argnums), argnums)``
    (both in reverse mode here)."""
    return jacfwd(jacrev(func, argnums), argnums)
