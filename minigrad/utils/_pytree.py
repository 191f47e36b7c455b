"""``minigrad.utils._pytree``: PyTorch's pytrees. A pytree is a value made of containers (tuples, lists, dicts,
named tuples, ``OrderedDict``, ``defaultdict``, ``deque``, the ops' result types, and any class registered with
``register_pytree_node``) around leaves (everything else, None included). ``tree_flatten`` splits it into its
leaves, depth first, and a ``TreeSpec`` recording the containers; ``tree_unflatten`` puts leaves back:

    leaves, spec = tree_flatten({"w": w, "b": [b, None]})     # [w, b, None], TreeSpec(dict, ['w', 'b'], ...)
    tree_unflatten([x, y, None], spec)                         # {"w": x, "b": [y, None]}
    tree_map_only(Tensor, lambda t: t.double(), batch)         # the same structure, each tensor converted

Containers are matched by exact type (a dict subclass is a leaf unless registered), dicts keep their insertion
order, and ``is_leaf=`` stops the descent where it says so. minigrad's function transforms (``func``, ``vmap``)
flatten their arguments with these functions. ``treespec_dumps``/``treespec_loads`` (a JSON form of specs) are
not here.
"""
import dataclasses
import typing
from collections import OrderedDict, defaultdict, deque, namedtuple

__all__ = ["PyTree", "Context", "FlattenFn", "UnflattenFn", "TreeSpec", "LeafSpec", "PyTreeSpec", "keystr", "key_get",
           "register_pytree_node", "register_dataclass", "tree_is_leaf", "tree_flatten", "tree_flatten_with_path",
           "tree_unflatten", "tree_iter", "tree_leaves", "tree_leaves_with_path", "tree_structure", "tree_map",
           "tree_map_with_path", "tree_map_", "tree_map_only", "tree_map_only_", "tree_all", "tree_any",
           "tree_all_only", "tree_any_only", "treespec_pprint", "treespec_leaf", "treespec_tuple", "treespec_dict",
           "arg_tree_leaves", "map_only", "is_namedtuple", "is_namedtuple_class", "is_namedtuple_instance",
           "is_structseq", "is_structseq_class", "is_structseq_instance", "pytree_register_structseq", "SequenceKey",
           "MappingKey", "GetAttrKey"]

PyTree = typing.Any
Context = typing.Any
FlattenFn = typing.Callable[[PyTree], typing.Tuple[typing.List, Context]]
UnflattenFn = typing.Callable[[typing.Iterable, Context], PyTree]


# --------------------------------------------------------------------------- keys: where a leaf sits in its tree
@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    key: typing.Any

    def __str__(self):
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self):
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


def keystr(kp):
    """A key path as the code that reaches the leaf: ``['a'][1].x``."""
    return "".join(str(k) for k in kp)


def key_get(obj, kp):
    """The value at key path ``kp`` in ``obj``."""
    for k in kp:
        obj = k.get(obj)
    return obj


# --------------------------------------------------------------------------- the node types
NodeDef = namedtuple("NodeDef", ["type", "flatten_fn", "unflatten_fn", "flatten_with_keys_fn"])
SUPPORTED_NODES = {}          # class -> NodeDef (exact types; named tuples and result types are found by kind)


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None, to_dumpable_context=None,
                         from_dumpable_context=None, flatten_with_keys_fn=None):
    """Make ``cls`` a container: ``flatten_fn(obj) -> (children, context)``, ``unflatten_fn(children, context) ->
    obj``, and optionally ``flatten_with_keys_fn(obj) -> ([(key, child), ...], context)`` for the path functions.
    The serialization arguments are accepted (minigrad has no ``treespec_dumps``)."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


_register_pytree_node = register_pytree_node   # the older private name (transformers registers ModelOutput by it)


def register_dataclass(cls, *, field_names=None, drop_field_names=None, serialized_type_name=None):
    """Make a dataclass (or a class built from keyword arguments named ``field_names``) a container whose children
    are its fields' values; fields that are None are kept in the context instead, as PyTorch does. A dataclass's
    ``field_names`` default to its ``__init__`` fields, less ``drop_field_names``."""
    dropped = set(drop_field_names or ())
    if not dataclasses.is_dataclass(cls):
        if field_names is None:
            raise ValueError("field_names must be specified with a list of all fields used to initialize "
                             f"{cls}, as it is not a dataclass.")
    else:
        init_fields = {f.name for f in dataclasses.fields(cls) if f.init} - dropped
        if field_names is None:
            field_names = [f.name for f in dataclasses.fields(cls) if f.init and f.name not in dropped]
        elif init_fields != set(field_names):
            message = "field_names does not include all dataclass fields.\n"
            missing, unexpected = init_fields - set(field_names), set(field_names) - init_fields
            if missing:
                message += (f"Missing fields in `field_names`: {missing}. If you want to include these fields in the "
                            "pytree, please add them to `field_names`, otherwise please add them to "
                            "`drop_field_names`.\n")
            if unexpected:
                message += (f"Unexpected fields in `field_names`: {unexpected}. Please remove these fields, or add "
                            "them to `drop_field_names`.\n")
            raise ValueError(message)
    names = list(field_names)

    def flatten(obj):
        present = [n for n in names if getattr(obj, n) is not None]
        return [getattr(obj, n) for n in present], [present, [n for n in names if n not in present]]

    def unflatten(values, context):
        present, absent = context
        return cls(**dict(zip(present, values)), **dict.fromkeys(absent))

    def flatten_with_keys(obj):
        values, (present, _) = flatten(obj)
        return [(GetAttrKey(n), v) for n, v in zip(present, values)], present
    register_pytree_node(cls, flatten, unflatten, flatten_with_keys_fn=flatten_with_keys)


def _sequence_keys(children, context):
    return [(SequenceKey(i), c) for i, c in enumerate(children)], context


def _mapping_keys(children, keys):
    return [(MappingKey(k), c) for k, c in zip(keys, children)]


register_pytree_node(tuple, lambda t: (list(t), None), lambda values, _: tuple(values),
                     flatten_with_keys_fn=lambda t: _sequence_keys(list(t), None))
register_pytree_node(list, lambda t: (list(t), None), lambda values, _: list(values),
                     flatten_with_keys_fn=lambda t: _sequence_keys(list(t), None))
register_pytree_node(dict, lambda d: (list(d.values()), list(d.keys())),
                     lambda values, keys: dict(zip(keys, values)),
                     flatten_with_keys_fn=lambda d: (_mapping_keys(d.values(), d.keys()), list(d.keys())))
register_pytree_node(OrderedDict, lambda d: (list(d.values()), list(d.keys())),
                     lambda values, keys: OrderedDict(zip(keys, values)),
                     flatten_with_keys_fn=lambda d: (_mapping_keys(d.values(), d.keys()), list(d.keys())))
register_pytree_node(defaultdict, lambda d: (list(d.values()), [d.default_factory, list(d.keys())]),
                     lambda values, context: defaultdict(context[0], zip(context[1], values)),
                     flatten_with_keys_fn=lambda d: (_mapping_keys(d.values(), d.keys()),
                                                     [d.default_factory, list(d.keys())]))
register_pytree_node(deque, lambda d: (list(d), d.maxlen), lambda values, maxlen: deque(values, maxlen=maxlen),
                     flatten_with_keys_fn=lambda d: _sequence_keys(list(d), d.maxlen))


# the node type of every named tuple class is ``collections.namedtuple`` itself, as in PyTorch (printed
# ``TreeSpec(namedtuple, <class P>, ...)``: the context is the class)
_NamedTupleNode = namedtuple


_NAMEDTUPLE_NODE = NodeDef(_NamedTupleNode, lambda t: (list(t), type(t)), lambda values, cls: cls(*values),
                           lambda t: ([(GetAttrKey(f), c) for f, c in zip(t._fields, t)], type(t)))
_STRUCTSEQ_TYPES = set()      # the classes pytree_register_structseq registered


def pytree_register_structseq(cls):
    """Make an ops' result type (``minigrad.max(x, 0)``'s class; PyTorch's are structseqs) a container of its
    fields, context None (``TreeSpec(max, None, [*, *])``). ``minigrad.return_types`` registers them all."""
    register_pytree_node(cls, lambda result: (list(result), None), lambda values, _: cls(*values),
                         flatten_with_keys_fn=lambda result: _sequence_keys(list(result), None))
    _STRUCTSEQ_TYPES.add(cls)


def is_namedtuple_class(cls):
    return (isinstance(cls, type) and issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple)
            and all(isinstance(f, str) for f in cls._fields) and callable(getattr(cls, "_make", None))
            and callable(getattr(cls, "_asdict", None)) and not is_structseq_class(cls))


def is_namedtuple_instance(obj):
    return is_namedtuple_class(type(obj))


def is_namedtuple(obj):
    """A named tuple class or instance."""
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_structseq_class(cls):
    """One of the ops' result types (``minigrad.return_types``), which PyTorch makes structseqs."""
    return isinstance(cls, type) and cls in _STRUCTSEQ_TYPES


def is_structseq_instance(obj):
    return is_structseq_class(type(obj))


def is_structseq(obj):
    return is_structseq_class(obj if isinstance(obj, type) else type(obj))


_BUILTIN_TYPES = (tuple, list, dict, OrderedDict, defaultdict, deque, namedtuple)   # (the result types: registered)
_DICT_TYPES = (dict, OrderedDict, defaultdict)


def _node_of(tree):
    """(node type, flatten_fn, unflatten_fn, flatten_with_keys_fn) of a container, None for a leaf."""
    node = SUPPORTED_NODES.get(type(tree))
    if node is not None:
        return node
    if isinstance(tree, tuple) and is_namedtuple_instance(tree):    # (the result types are registered)
        return _NAMEDTUPLE_NODE
    return None


def tree_is_leaf(tree, is_leaf=None):
    """Whether ``tree`` is a leaf: not a container, or one ``is_leaf`` says to keep whole."""
    return (is_leaf is not None and is_leaf(tree)) or _node_of(tree) is None


# --------------------------------------------------------------------------- TreeSpec
class TreeSpec:
    """A pytree's structure without its leaves: the node's ``type``, its ``context`` (a dict's keys, a named tuple's
    class, a deque's maxlen, ...) and ``children_specs``; a leaf's spec is ``LeafSpec()`` (printed ``*``)."""

    def __init__(self, type, context, children_specs):   # noqa: A002 - PyTorch's name
        self.type, self.context, self.children_specs = type, context, list(children_specs)
        self.num_leaves = sum(child.num_leaves for child in self.children_specs)
        self.num_nodes = 1 + sum(child.num_nodes for child in self.children_specs)
        self.num_children = len(self.children_specs)

    def is_leaf(self):
        return self.type is None

    def children(self):
        return list(self.children_specs)

    def child(self, index):
        return self.children_specs[index]

    def _type_name(self):
        return self.type.__name__

    def __repr__(self, indent=0):
        if self.is_leaf():
            return "*"
        context = str(self.context)     # (PyTorch's: str, not repr)
        children = f",\n{' ' * (indent + 2)}".join(child.__repr__(indent + 2) for child in self.children_specs)
        return f"TreeSpec({self._type_name()}, {context}, [{children}])"

    def __eq__(self, other):
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (self.type == other.type and self.context == other.context
                and self.children_specs == other.children_specs)

    def __hash__(self):
        return hash((self.type, self.num_leaves, self.num_nodes))

    def unflatten(self, leaves):
        """The tree of this structure holding ``leaves`` (in ``tree_flatten``'s order)."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers to "
                             f"a pytree that holds {self.num_leaves} items ({self!r}).")
        position = iter(leaves)

        def build(spec):
            if spec.is_leaf():
                return next(position)
            children = [build(child) for child in spec.children_specs]
            return _unflatten_fn(spec)(children, spec.context)
        return build(self)

    def flatten_up_to(self, tree):
        """``tree``'s subtrees at this structure's leaves: ``tree`` must have this structure down to them (it may
        go deeper there), with PyTorch's leeway: a dict, OrderedDict or defaultdict stands for any of the three if
        it has the same keys (in any order), and a deque's maxlen is not compared. ValueError naming the first
        place where it does not fit."""
        out = []

        def walk(spec, node):
            if spec.is_leaf():
                out.append(node)
                return
            found = _node_of(node)
            node_type = type(node) if found is None else found.type      # (a named tuple's is ``namedtuple``)
            if spec.type not in _BUILTIN_TYPES:                          # registered classes match exactly
                if node_type is not spec.type:
                    raise ValueError(f"Type mismatch; expected {spec.type!r}, but got {node_type!r}.")
                children, context = found.flatten_fn(node)
                if len(children) != spec.num_children:
                    raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got {len(children)}.")
                if context != spec.context:
                    raise ValueError(f"Node context mismatch for custom node type {spec.type!r}.")
            else:
                both_dicts = spec.type in _DICT_TYPES and node_type in _DICT_TYPES
                if not both_dicts and node_type is not spec.type:
                    raise ValueError(f"Node type mismatch; expected {spec.type!r}, but got {node_type!r}.")
                if len(node) != spec.num_children:
                    raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got {len(node)}.")
                if both_dicts:
                    keys = spec.context[1] if spec.type is defaultdict else spec.context
                    missing, extra = set(keys) - set(node), set(node) - set(keys)
                    if missing or extra:
                        raise ValueError("Node keys mismatch" + (f"; missing key(s): {missing}" if missing else "")
                                         + (f"; extra key(s): {extra}" if extra else "") + ".")
                    children = [node[k] for k in keys]
                else:
                    children, context = found.flatten_fn(node)
                    if node_type is not deque and context != spec.context:
                        raise ValueError(f"Node context mismatch for node type {spec.type!r}; expected "
                                         f"{spec.context!r}, but got {context!r}.")
            for child_spec, child in zip(spec.children_specs, children):
                walk(child_spec, child)
        walk(self, tree)
        return out


class LeafSpec(TreeSpec):
    """The spec of a leaf (``*``)."""

    def __init__(self):
        super().__init__(None, None, [])
        self.num_leaves, self.num_nodes = 1, 1


PyTreeSpec = TreeSpec
_LEAF = LeafSpec()


def _unflatten_fn(spec):
    return (_NAMEDTUPLE_NODE if spec.type is _NamedTupleNode else SUPPORTED_NODES[spec.type]).unflatten_fn


# --------------------------------------------------------------------------- flatten / unflatten / map
def tree_flatten(tree, is_leaf=None):
    """(leaves, spec): the leaves of ``tree`` in order (depth first) and its structure."""
    leaves = []

    def walk(node):
        if tree_is_leaf(node, is_leaf):
            leaves.append(node)
            return _LEAF
        found = _node_of(node)
        children, context = found.flatten_fn(node)
        return TreeSpec(found.type, context, [walk(child) for child in children])
    return leaves, walk(tree)


def tree_unflatten(leaves, treespec):
    """The tree of structure ``treespec`` holding ``leaves``."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance of TreeSpec but got "
                        f"item of type {type(treespec)}.")
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    """The leaves of ``tree``, one at a time."""
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    children, _ = _node_of(tree).flatten_fn(tree)
    for child in children:
        yield from tree_iter(child, is_leaf)


def tree_leaves(tree, is_leaf=None):
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func, tree, *rests, is_leaf=None):
    """``tree`` with each leaf replaced by ``func(leaf, *the leaves at its place in rests)``; each of ``rests`` must
    have ``tree``'s structure (or go deeper at its leaves, whose subtrees ``func`` then gets)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    flat = [leaves] + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(map(func, *flat))


def tree_map_(func, tree, *rests, is_leaf=None):
    """Call ``func`` on each leaf (for its effect, an in-place update say) and return ``tree`` itself."""
    leaves, spec = tree_flatten(tree, is_leaf)
    flat = [leaves] + [spec.flatten_up_to(r) for r in rests]
    for args in zip(*flat):
        func(*args)
    return tree


def _predicate(type_or_types_or_pred):
    if isinstance(type_or_types_or_pred, type) or (isinstance(type_or_types_or_pred, tuple) and all(
            isinstance(t, type) for t in type_or_types_or_pred)):
        return lambda x: isinstance(x, type_or_types_or_pred)
    if callable(type_or_types_or_pred):
        return type_or_types_or_pred
    raise TypeError("Argument must be a type, a tuple of types, or a callable.")


def _only(type_or_types_or_pred, func):
    """``func`` applied to the leaves the type(s) or predicate select; the others pass through."""
    pred = _predicate(type_or_types_or_pred)
    return lambda x: func(x) if pred(x) else x


def tree_map_only(type_or_types_or_pred, func, tree, is_leaf=None):
    return tree_map(_only(type_or_types_or_pred, func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, func, tree, is_leaf=None):
    return tree_map_(_only(type_or_types_or_pred, func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, pred, tree, is_leaf=None):
    selected = _predicate(type_or_types)
    return all(pred(x) for x in tree_iter(tree, is_leaf) if selected(x))


def tree_any_only(type_or_types, pred, tree, is_leaf=None):
    selected = _predicate(type_or_types)
    return any(pred(x) for x in tree_iter(tree, is_leaf) if selected(x))


# --------------------------------------------------------------------------- key paths
def tree_flatten_with_path(tree, is_leaf=None):
    """([(key path, leaf), ...], spec): each leaf with the keys that reach it (``keystr`` prints them)."""
    out = []

    def walk(node, path):
        if tree_is_leaf(node, is_leaf):
            out.append((path, node))
            return
        found = _node_of(node)
        if found.flatten_with_keys_fn is None:
            raise ValueError(f"Did not find a flatten_with_keys_fn for type: {found.type}. Please pass a "
                             "flatten_with_keys_fn argument to register_pytree_node.")
        keyed, _ = found.flatten_with_keys_fn(node)
        for key, child in keyed:
            walk(child, path + (key,))
    walk(tree, ())
    return out, tree_structure(tree, is_leaf)


def tree_leaves_with_path(tree, is_leaf=None):
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    """As ``tree_map``, ``func`` getting each leaf's key path first: ``func(path, leaf, *others)``."""
    keyed, spec = tree_flatten_with_path(tree, is_leaf)
    flat = [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(path, leaf, *others) for (path, leaf), *others in zip(keyed, *flat))


# --------------------------------------------------------------------------- printing
class _DummyLeaf:
    def __repr__(self):
        return "*"


def treespec_leaf():
    """The spec of a leaf."""
    return _LEAF


def treespec_tuple(iterable=()):
    """The spec of a tuple of subtrees of the given specs."""
    return TreeSpec(tuple, None, list(iterable))


def treespec_dict(mapping=(), **kwargs):
    """The spec of a dict whose values have the given specs (keys in the given order)."""
    specs = dict(mapping, **kwargs)
    return TreeSpec(dict, list(specs.keys()), list(specs.values()))


def arg_tree_leaves(*args, **kwargs):
    """The leaves of ``args`` then of ``kwargs``' values (a call's arguments)."""
    return tree_leaves(args) + tree_leaves(list(kwargs.values()))


def map_only(type_or_types_or_pred):
    """A decorator: ``map_only(Tensor)(fn)`` applies ``fn`` to values the type(s) or predicate select and returns
    the others as they are."""
    return lambda func: _only(type_or_types_or_pred, func)


def treespec_pprint(treespec):
    """The structure written as its containers with ``*`` for the leaves: ``(*, {'a': *})``."""
    return repr(treespec.unflatten([_DummyLeaf()] * treespec.num_leaves))


def _broadcast_to_and_flatten(tree, treespec, is_leaf=None):
    """One value of ``tree`` per leaf of ``treespec``, where ``tree`` is a prefix of that structure: each of its
    leaves stands for every leaf of the subtree at its place (vmap's ``in_dims=(0, None)``). None when ``tree``
    is not a prefix of ``treespec``."""
    out = []

    def walk(node, spec):
        if tree_is_leaf(node, is_leaf):
            out.extend([node] * spec.num_leaves)
            return True
        if spec.is_leaf():
            return False
        found = _node_of(node)
        children, context = found.flatten_fn(node)
        if found.type is not spec.type or context != spec.context or len(children) != spec.num_children:
            return False
        return all(walk(child, child_spec) for child, child_spec in zip(children, spec.children_specs))
    return out if walk(tree, treespec) else None
