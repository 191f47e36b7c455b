"""``minigrad.utils._pytree`` against PyTorch's ``torch.utils._pytree``: random pytrees (tuples, lists, dicts,
OrderedDicts, defaultdicts, deques, named tuples, around ints, floats, strings and None) are flattened, printed,
mapped (with other trees of the same structure, and with trees that differ: the same error), walked by key paths,
and rebuilt, by both libraries, and every answer compared as text. The trees are plain Python, so the very same
objects go to both. PyTorch's side is live or recorded."""
import dataclasses
import random
import re
from collections import OrderedDict, defaultdict, deque, namedtuple

import pytest

import minigrad as mg
from minigrad.utils import _pytree as pytree

from .mirror import torch_result

Point = namedtuple("Point", "x y")
Triple = namedtuple("Triple", "a b c")
CASES = 300


def random_tree(rng, depth=0):
    """A random pytree: containers of each kind down to depth 4, leaves of several kinds."""
    if depth >= 4 or rng.random() < 0.3:
        return rng.choice([None, rng.randint(-9, 9), rng.random(), "s" + str(rng.randint(0, 9))])
    kind = rng.choice(["tuple", "list", "dict", "ordered", "default", "deque", "point", "triple"])
    width = rng.randint(0, 3)
    children = [random_tree(rng, depth + 1) for _ in range(width)]
    keys = rng.sample(["a", "b", "c", 1, 2, "zz"], width)
    if kind == "tuple":
        return tuple(children)
    if kind == "list":
        return children
    if kind == "dict":
        return dict(zip(keys, children))
    if kind == "ordered":
        return OrderedDict(zip(keys, children))
    if kind == "default":
        return defaultdict(rng.choice([int, list]), zip(keys, children))
    if kind == "deque":
        return deque(children, maxlen=rng.choice([None, 5]))
    if kind == "point":
        return Point(random_tree(rng, depth + 1), random_tree(rng, depth + 1))
    return Triple(*(random_tree(rng, depth + 1) for _ in range(3)))


def bump(x):
    """A leaf function that changes every kind of leaf visibly."""
    if x is None:
        return "none"
    return x * 2 if not isinstance(x, str) else x + "!"


def attempt(fn):
    """``repr(fn())``, or the error it raised; addresses left out (PyTorch prints ``<function namedtuple at 0x...>``
    as the node type of named tuples)."""
    try:
        return repr(fn())
    except Exception as error:   # noqa: BLE001 - the error is part of the answer
        message = re.sub(r" at 0x[0-9a-f]+", "", f"{type(error).__name__}: {error}")
        # sets (of missing keys, of fields) print in an order that changes from process to process: sorted here
        return re.sub(r"\{([^{}:]*)\}", lambda m: str(sorted(m.group(1).split(", "))), message)


def summary(p, tree, other, seed):
    """Everything compared, as text, computed with the pytree module ``p``."""
    leaves, spec = p.tree_flatten(tree)
    twin = p.tree_unflatten([bump(x) for x in leaves], spec)          # the same structure, other leaves
    keyed, _ = p.tree_flatten_with_path(tree)
    return {
        "leaves": repr(leaves), "spec": repr(spec), "pprint": p.treespec_pprint(spec),
        "counts": [spec.num_leaves, spec.num_nodes, spec.num_children, spec.is_leaf()],
        "round trip": repr(p.tree_unflatten(leaves, spec)),
        "map": repr(p.tree_map(bump, tree)),
        "map two": attempt(lambda: p.tree_map(lambda a, b: [a, b], tree, twin)),
        "map other": attempt(lambda: p.tree_map(lambda a, b: [a, b], tree, other)),
        "map only": repr(p.tree_map_only(int, lambda x: x + 100, tree)),
        "map only types": repr(p.tree_map_only((int, float), lambda x: -x, tree)),
        "lists as leaves": repr(p.tree_flatten(tree, is_leaf=lambda x: isinstance(x, list))),
        "paths": [p.keystr(path) for path, _ in keyed],
        "all any": [p.tree_all(lambda x: x is not None, tree), p.tree_any(lambda x: isinstance(x, str), tree),
                    p.tree_all_only(int, lambda x: x > 0, tree), p.tree_any_only(float, lambda x: x > 0.5, tree)],
        "leaf": [p.tree_is_leaf(tree), p.tree_is_leaf(tree, is_leaf=lambda x: True)],
        "equal specs": [p.tree_structure(twin) == spec, p.tree_structure(other) == spec],
        "too many": attempt(lambda: p.tree_unflatten(leaves + [0], spec)),
        "seed": seed,
    }


def case(seed):
    rng = random.Random(seed)
    return random_tree(rng), random_tree(rng)


@pytest.mark.parametrize("seed", range(CASES))
def test_random_pytrees_as_pytorch(seed):
    tree, other = case(seed)
    theirs = torch_result(lambda torch: summary(__import__("torch.utils._pytree").utils._pytree, tree, other, seed),
                          "pytree", seed)
    mine = summary(pytree, tree, other, seed)
    for key in theirs:
        assert mine[key] == theirs[key], (key, tree)


def test_the_random_trees_have_every_kind_of_node():
    """The generator reaches every container kind, empty containers and nested ones (else the test proves less)."""
    kinds, empty = set(), 0
    for seed in range(CASES):
        for tree in case(seed):
            stack = [tree]
            while stack:
                node = stack.pop()
                if not pytree.tree_is_leaf(node):
                    kinds.add(pytree.tree_structure(node).type)
                    children, _ = pytree._node_of(node).flatten_fn(node)
                    empty += not children
                    stack.extend(children)
    assert kinds == {tuple, list, dict, OrderedDict, defaultdict, deque, namedtuple} and empty > 20


class Pair:
    """A user class registered as a container in both libraries."""

    def __init__(self, first, second, tag="t"):
        self.first, self.second, self.tag = first, second, tag

    def __repr__(self):
        return f"Pair({self.first!r}, {self.second!r}, tag={self.tag!r})"


def register_pair(p):
    if Pair not in p.SUPPORTED_NODES:
        p.register_pytree_node(Pair, lambda q: ([q.first, q.second], q.tag), lambda xs, tag: Pair(*xs, tag=tag),
                               flatten_with_keys_fn=lambda q: ([(p.GetAttrKey("first"), q.first),
                                                                (p.GetAttrKey("second"), q.second)], q.tag))


def registered(p):
    register_pair(p)
    tree = {"p": Pair(1, [2, Pair(3, None, tag="inner")]), "q": (4,)}
    again = attempt(lambda: p.register_pytree_node(Pair, lambda q: ([], None), lambda xs, c: None))
    return {"flat": repr(p.tree_flatten(tree)), "map": repr(p.tree_map(bump, tree)),
            "paths": [p.keystr(k) for k, _ in p.tree_flatten_with_path(tree)[0]],
            "context differs": attempt(lambda: p.tree_map(lambda a, b: a, tree, {"p": Pair(1, [2, Pair(3, None)]),
                                                                                  "q": (4,)})),
            "twice": again.split(":")[0], "pprint": p.treespec_pprint(p.tree_structure(tree))}


def test_a_registered_class_as_pytorch():
    theirs = torch_result(lambda torch: registered(__import__("torch.utils._pytree").utils._pytree), "registered")
    assert registered(pytree) == theirs


@dataclasses.dataclass
class Batch:
    """A dataclass registered with ``register_dataclass`` in both libraries."""
    inputs: list
    labels: object = None
    name: str = "batch"


def dataclass_and_builders(p):
    if Batch not in p.SUPPORTED_NODES:
        p.register_dataclass(Batch)
    tree = (Batch([1, 2], labels=(3,)), Batch([4]))
    leaves, spec = p.tree_flatten(tree)
    return {"flat": repr((leaves, spec)), "rebuilt": repr(p.tree_unflatten([bump(x) for x in leaves], spec)),
            "paths": [p.keystr(k) for k, _ in p.tree_flatten_with_path(tree)[0]],
            "builders": repr([p.treespec_leaf(), p.treespec_tuple([p.treespec_leaf()] * 2),
                              p.treespec_dict({"a": p.treespec_leaf(), "b": p.treespec_tuple()})]),
            "same as flattened": p.treespec_tuple([p.treespec_leaf()] * 2) == p.tree_structure((1, 2)),
            "arg leaves": repr(p.arg_tree_leaves(1, [2, (3,)], k={"z": 4})),
            "map only": [p.map_only(int)(bump)(3), p.map_only((str, float))(bump)("s"), p.map_only(str)(bump)(2)],
            "bad fields": attempt(lambda: p.register_dataclass(Batch, field_names=["inputs", "extra"]))}


def test_register_dataclass_and_the_spec_builders_as_pytorch():
    theirs = torch_result(lambda torch: dataclass_and_builders(__import__("torch.utils._pytree").utils._pytree),
                          "dataclass")
    assert dataclass_and_builders(pytree) == theirs


def test_result_types_are_nodes_and_tensors_leaves():
    x = mg.tensor([[1.0, 5.0], [3.0, 2.0]])
    result = mg.max(x, 1)
    leaves, spec = pytree.tree_flatten({"r": result, "x": x})
    assert leaves[0] is result.values and leaves[1] is result.indices and leaves[2] is x
    assert repr(spec.child(0)) == "TreeSpec(max, None, [*,\n  *])" and spec.child(0).type is type(result)
    assert pytree.is_structseq_instance(result) and not pytree.is_namedtuple_instance(result)
    assert [pytree.keystr(k) for k, _ in pytree.tree_leaves_with_path(result)] == ["[0]", "[1]"]
    rebuilt = pytree.tree_unflatten(leaves, spec)
    assert type(rebuilt["r"]) is type(result) and rebuilt["r"].values is result.values
    doubled = pytree.tree_map_only(mg.Tensor, lambda t: t * 2, {"r": result, "n": 3})
    assert doubled["n"] == 3 and mg.equal(doubled["r"].values, result.values * 2)
    # a dict subclass is a leaf, as in PyTorch, and the transforms use these functions
    class Config(dict):
        pass
    assert pytree.tree_leaves(Config(a=1)) == [Config(a=1)]
    assert mg.func.vmap(lambda d: d["a"] * d["b"][0], in_dims=({"a": 0, "b": [None]},))(
        {"a": mg.arange(3.0), "b": [mg.tensor(2.0)]}).tolist() == [0.0, 2.0, 4.0]
