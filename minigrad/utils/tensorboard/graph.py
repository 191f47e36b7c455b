"""``SummaryWriter.add_graph``: a model's computation as the GraphDef TensorBoard's Graphs tab draws.

PyTorch traces the model with ``torch.jit``; minigrad has no tracer, so the graph is read from what autograd
records instead. The model runs once (in eval mode, its floating-point inputs made to require grad so that
every op on them is recorded); forward hooks note which module's call produced which autograd nodes, and the
nodes reachable from the outputs become the graph:

* ``input/<argument name>`` and ``output/output.<k>``: "IO Node"s, with their shapes;
* each parameter, ``<scope>/<name>`` (op ``prim::GetAttr``), under the scope of the module that holds it,
  and the buffers of the modules that ran an operation (unconnected: autograd does not record their use);
* each recorded operation, ``<scope>/<Op>.<k>`` (op ``minigrad::<Op>``, named after its Function), with the
  shape of its output and its inputs as edges.

Scopes are named as PyTorch's: the model's class, then ``Class[attribute]`` for each submodule on the way
(``Net/Block[block]/Conv2d[conv]``). What the graph cannot show, unlike PyTorch's: operations on tensors that
do not require grad (integer inputs, buffers, constants), which autograd does not record.
"""
import inspect

from ...autograd.grad_mode import enable_grad
from ...tensor import Tensor


def _node(t):
    """The graph node behind tensor ``t``: its grad_fn, or the tensor itself for a leaf."""
    return t.grad_fn if t.grad_fn is not None else t


def _tensors(value):
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def _walk(starts, stop=()):
    """The nodes reachable from ``starts`` through autograd's edges, not going past the ids in ``stop``."""
    seen, order, todo = set(), [], list(starts)
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        order.append(node)
        if id(node) not in stop and not isinstance(node, Tensor):
            todo.extend(node.next_edges)
    return order


def _scopes(model):
    """{module: its PyTorch-style scope name} for ``model`` and its descendants."""
    scopes = {model: type(model).__name__}
    for path, module in model.named_modules():
        if path:
            parent = model.get_submodule(path.rpartition(".")[0]) if "." in path else model
            scopes[module] = f"{scopes[parent]}/{type(module).__name__}[{path.rpartition('.')[2]}]"
    return scopes


def _record_scopes(model, args):
    """Run ``model(*args)``: (its output, {node id: scope of the innermost module whose call made it})."""
    scopes, owner = _scopes(model), {}

    def note(module, inputs, output):   # inner modules finish first, so they claim their nodes first
        stop = {id(_node(t)) for t in _tensors(inputs)}
        for node in _walk([_node(t) for t in _tensors(output)], stop):
            if id(node) not in stop:
                owner.setdefault(id(node), scopes[module])
    handles = [module.register_forward_hook(note) for module in scopes]
    training = model.training
    model.train(False)
    try:
        with enable_grad():
            output = model(*args)
    finally:
        for handle in handles:
            handle.remove()
        model.train(training)
    return output, owner


def graph_def(model, input_to_model):
    """(GraphDef, RunMetadata) of ``model`` run on ``input_to_model`` (a tensor or a tuple/list of them)."""
    from tensorboard.compat.proto.attr_value_pb2 import AttrValue
    from tensorboard.compat.proto.config_pb2 import RunMetadata
    from tensorboard.compat.proto.graph_pb2 import GraphDef
    from tensorboard.compat.proto.node_def_pb2 import NodeDef
    from tensorboard.compat.proto.step_stats_pb2 import DeviceStepStats, StepStats
    from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
    from tensorboard.compat.proto.versions_pb2 import VersionDef

    if input_to_model is None:
        raise ValueError("add_graph: minigrad draws the graph by running the model, so input_to_model is needed")
    given = tuple(input_to_model) if isinstance(input_to_model, (list, tuple)) else (input_to_model,)
    args = tuple(a.detach().requires_grad_() if isinstance(a, Tensor) and a.is_floating_point() else a
                 for a in given)
    output, owner = _record_scopes(model, args)
    outputs = _tensors(output)

    names = {}
    arg_names = list(inspect.signature(model.forward).parameters)
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            names[id(a)] = "input/" + (arg_names[i] if i < len(arg_names) else f"input.{i + 1}")
    scopes = _scopes(model)
    for path, p in model.named_parameters():
        holder = model.get_submodule(path.rpartition(".")[0]) if "." in path else model
        names.setdefault(id(p), f"{scopes[holder]}/{path.rpartition('.')[2]}")
    nodes = _walk([_node(t) for t in outputs])
    shapes = {id(_node(t)): t.shape for t in outputs}
    for node in nodes:   # an op's output shape is what its consumers record for that input
        if not isinstance(node, Tensor):
            for edge, meta in zip(node.next_edges, node.input_meta):
                if edge is not None and meta is not None:
                    shapes.setdefault(id(edge), meta[0])
    counts = {}
    for node in reversed(nodes):   # inputs before the ops that use them
        if id(node) not in names:
            kind = "constant" if isinstance(node, Tensor) else node.name().removesuffix("Backward")
            scope = owner.get(id(node), scopes[model])
            counts[(scope, kind)] = counts.get((scope, kind), 0) + 1
            names[id(node)] = f"{scope}/{kind}.{counts[(scope, kind)]}"

    def attrs(node_id, text=""):
        out = {"attr": AttrValue(s=text.encode())}
        if node_id in shapes:
            shape = TensorShapeProto(dim=[TensorShapeProto.Dim(size=d) for d in shapes[node_id]])
            out["_output_shapes"] = AttrValue(list=AttrValue.ListValue(shape=[shape]))
        return out

    defs = []
    for node in reversed(nodes):
        name = names[id(node)]
        if isinstance(node, Tensor):
            op = "IO Node" if name.startswith("input/") else "prim::GetAttr"
            defs.append(NodeDef(name=name, op=op, attr=attrs(id(node))))
        else:
            inputs = [names[id(e)] for e in node.next_edges if e is not None and id(e) in names]
            defs.append(NodeDef(name=name, op="minigrad::" + node.name().removesuffix("Backward"), input=inputs,
                                attr=attrs(id(node), "{}")))
    used = set(owner.values())
    for path, buffer in model.named_buffers():   # running statistics and the like: shown, though not recorded
        holder = model.get_submodule(path.rpartition(".")[0]) if "." in path else model
        if scopes[holder] in used and isinstance(buffer, Tensor):
            shape = TensorShapeProto(dim=[TensorShapeProto.Dim(size=d) for d in buffer.shape])
            defs.append(NodeDef(name=f"{scopes[holder]}/{path.rpartition('.')[2]}", op="prim::GetAttr",
                                attr={"attr": AttrValue(s=b""),
                                      "_output_shapes": AttrValue(list=AttrValue.ListValue(shape=[shape]))}))
    for k, t in enumerate(outputs, start=1):
        defs.append(NodeDef(name=f"output/output.{k}", op="IO Node", input=[names[id(_node(t))]],
                            attr=attrs(id(_node(t)))))
    stats = RunMetadata(step_stats=StepStats(dev_stats=[DeviceStepStats(device="/device:CPU:0")]))
    return GraphDef(node=defs, versions=VersionDef(producer=22)), stats
