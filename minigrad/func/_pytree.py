"""A small pytree utility: nested tuples, lists, dicts and named tuples seen as a flat list of leaves plus a
``TreeSpec`` that records the nesting, so a transform can treat ``f(params_dict, (x, y))`` like ``f(a, b, c)``.

    leaves, spec = tree_flatten(({"w": w, "b": b}, [x]))     # leaves [w, b, x]
    tree_unflatten([2 * t for t in leaves], spec)            # ({"w": 2w, "b": 2b}, [2x])

Containers are matched by exact type (a dict subclass other than OrderedDict is a leaf, as in PyTorch), dicts
keep their insertion order, and None is a leaf. ``repr(spec)`` and ``spec.pretty()`` print a structure as
PyTorch's error messages do (``TreeSpec(tuple, None, [*])`` and ``(*,)``).
"""
from collections import OrderedDict

__all__ = ["TreeSpec", "LEAF", "tree_flatten", "tree_unflatten", "tree_map", "broadcast_prefix"]


def _kind(tree):
    """The container kind of ``tree`` ('tuple', 'list', 'dict', 'OrderedDict', 'namedtuple'), None for a leaf."""
    kind = type(tree)
    if kind is tuple:
        return "tuple"
    if kind is list:
        return "list"
    if kind is dict:
        return "dict"
    if kind is OrderedDict:
        return "OrderedDict"
    if isinstance(tree, tuple) and hasattr(kind, "_fields"):
        return "namedtuple"
    return None


def _children(tree, kind):
    """(context, children): the keys of a dict, the class of a named tuple, None for a tuple or list."""
    if kind in ("dict", "OrderedDict"):
        return list(tree.keys()), list(tree.values())
    if kind == "namedtuple":
        return type(tree), list(tree)
    return None, list(tree)


class TreeSpec:
    """The shape of a pytree without its leaves: ``kind`` (None for a leaf), ``context`` and child specs."""

    __slots__ = ("kind", "context", "children", "num_leaves")

    def __init__(self, kind=None, context=None, children=()):
        self.kind, self.context, self.children = kind, context, list(children)
        self.num_leaves = 1 if kind is None else sum(child.num_leaves for child in self.children)

    def is_leaf(self):
        return self.kind is None

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and self.kind == other.kind and self.context == other.context
                and self.children == other.children)

    def __hash__(self):
        return hash((self.kind, len(self.children)))

    def __repr__(self, indent=0):
        if self.is_leaf():
            return "*"
        context = repr(self.context)
        children = f",\n{' ' * (indent + 2)}".join(child.__repr__(indent + 2) for child in self.children)
        return f"TreeSpec({self.kind}, {context}, [{children}])"

    def pretty(self):
        """The structure written as the containers themselves, leaves as ``*``: ``(*, {'a': *})``."""
        if self.is_leaf():
            return "*"
        parts = [child.pretty() for child in self.children]
        if self.kind == "tuple":
            return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
        if self.kind == "list":
            return "[" + ", ".join(parts) + "]"
        if self.kind in ("dict", "OrderedDict"):
            body = "{" + ", ".join(f"{key!r}: {part}" for key, part in zip(self.context, parts)) + "}"
            return body if self.kind == "dict" else f"OrderedDict({body})"
        fields = ", ".join(f"{name}={part}" for name, part in zip(self.context._fields, parts))
        return f"{self.context.__name__}({fields})"


LEAF = TreeSpec()


def tree_flatten(tree):
    """(leaves, spec): the leaves of ``tree`` in order (depth first) and its structure."""
    leaves = []

    def walk(node):
        kind = _kind(node)
        if kind is None:
            leaves.append(node)
            return LEAF
        context, children = _children(node, kind)
        return TreeSpec(kind, context, [walk(child) for child in children])
    return leaves, walk(tree)


def _build(spec, children):
    if spec.kind == "tuple":
        return tuple(children)
    if spec.kind == "list":
        return list(children)
    if spec.kind == "dict":
        return dict(zip(spec.context, children))
    if spec.kind == "OrderedDict":
        return OrderedDict(zip(spec.context, children))
    return spec.context(*children)


def tree_unflatten(leaves, spec):
    """The pytree of structure ``spec`` holding ``leaves`` (in ``tree_flatten``'s order)."""
    leaves = list(leaves)
    if len(leaves) != spec.num_leaves:
        raise ValueError(f"tree_unflatten: the structure has {spec.num_leaves} leaves but {len(leaves)} were given")
    position = iter(leaves)

    def build(node):
        if node.is_leaf():
            return next(position)
        return _build(node, [build(child) for child in node.children])
    return build(spec)


def tree_map(fn, tree):
    """``tree`` with every leaf replaced by ``fn(leaf)``."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(leaf) for leaf in leaves], spec)


def broadcast_prefix(prefix, tree):
    """One value of ``prefix`` per leaf of ``tree``, where ``prefix`` is ``tree`` cut short: each of its leaves
    stands for every leaf of the subtree of ``tree`` at that place (vmap's ``in_dims=(0, None)`` for
    ``f(x, params_dict)``). None when ``prefix`` is not a prefix of ``tree``'s structure."""
    out = []

    def walk(pre, node):
        pre_kind = _kind(pre)
        if pre_kind is None:
            out.extend([pre] * tree_flatten(node)[1].num_leaves)
            return True
        kind = _kind(node)
        if kind != pre_kind:
            return False
        pre_context, pre_children = _children(pre, pre_kind)
        context, children = _children(node, kind)
        if pre_context != context or len(pre_children) != len(children):
            return False
        return all(walk(p, c) for p, c in zip(pre_children, children))
    return out if walk(prefix, tree) else None
