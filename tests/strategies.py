"""Hypothesis strategies for the op tests, and the check that an op does not care about memory layout.

* ``shapes`` / ``broadcastable_shapes``: small shapes, and pairs that broadcast together
  (leading dims dropped, some sizes replaced by 1 on either side).
* ``dims_and_keepdim(shape)``: the ``dim`` arguments a reduction over ``shape`` accepts
  (None, an int, negative ints, a tuple of distinct dims) with a ``keepdim`` flag.
* ``float64_arrays`` / ``noncontiguous_arrays``: float64 data; the latter as transposed or
  strided NumPy views, which is how non-contiguous data arises inside minigrad
  (``transpose``, ``permute`` and slicing return views).

Values come from a NumPy generator seeded by hypothesis rather than from hypothesis'
float strategy: standard normal values keep finite-difference checks away from kinks
and ties (which get their own deterministic tests).
"""
import numpy as np
from hypothesis import strategies as st

import minigrad as mg

MAX_DIMS, MAX_SIDE = 3, 3


def shapes(min_dims=0, max_dims=MAX_DIMS, min_side=1, max_side=MAX_SIDE):
    return st.lists(st.integers(min_side, max_side), min_size=min_dims, max_size=max_dims).map(tuple)


@st.composite
def broadcastable_shapes(draw, max_dims=MAX_DIMS, max_side=MAX_SIDE):
    """Two shapes that broadcast together: each drops some leading dims of a common shape and may put
    1 in place of any size."""
    full = draw(shapes(max_dims=max_dims, max_side=max_side))

    def operand():
        kept = full[draw(st.integers(0, len(full))):]
        ones = draw(st.lists(st.booleans(), min_size=len(kept), max_size=len(kept)))
        return tuple(1 if one else s for s, one in zip(kept, ones))

    return operand(), operand()


@st.composite
def dims_and_keepdim(draw, shape):
    """``(dim, keepdim)`` for a reduction over ``shape``: None, one dim (maybe negative) or a tuple of
    distinct dims (maybe negative, in any order)."""
    rank = max(len(shape), 1)  # a 0-d tensor accepts dim 0 and -1
    one_dim = st.integers(-rank, rank - 1)
    some_dims = st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank, unique=True).flatmap(
        lambda axes: st.tuples(*[st.sampled_from([a, a - rank]) for a in axes]))
    dims = one_dim | some_dims if shape else one_dim
    return draw(st.none() | dims), draw(st.booleans())


def _normal(seed, shape):
    return np.random.default_rng(seed).standard_normal(shape)


def float64_arrays(shape):
    return st.integers(0, 2**32 - 1).map(lambda seed: _normal(seed, shape))


@st.composite
def noncontiguous_arrays(draw, shape):
    """A float64 array of ``shape`` (some size > 1) that is a non-contiguous view:
    the transpose of a contiguous array, or every other element of a larger one."""
    seed = draw(st.integers(0, 2**32 - 1))
    long_dims = [d for d, s in enumerate(shape) if s > 1]  # size-1 dims do not count for contiguity
    layout = draw(st.sampled_from(["transposed", "strided"]) if len(long_dims) > 1 else st.just("strided"))
    if layout == "transposed":
        view = _normal(seed, shape[::-1]).T
    else:
        step = draw(st.sampled_from(long_dims))  # the dim that skips every other element
        big = tuple(2 * s if d == step else s for d, s in enumerate(shape))
        view = _normal(seed, big)[tuple(slice(None, None, 2) if d == step else slice(None) for d in range(len(shape)))]
    assert view.shape == tuple(shape) and not view.flags.c_contiguous
    return view


def check_on_views(fn, *views, rtol=1e-12, atol=1e-12):
    """``fn`` on leaves that share the non-contiguous ``views`` passes a float64 gradcheck, and gives the same
    output and gradients as on contiguous copies (random upstream gradient)."""
    leaves = [mg.from_numpy(v).requires_grad_() for v in views]
    assert mg.gradcheck(fn, leaves)  # perturbs the views in place, so the op really reads strided memory
    results = []
    for arrays in (views, [np.ascontiguousarray(v) for v in views]):
        leaves = [mg.from_numpy(a).requires_grad_() for a in arrays]
        out = fn(*leaves)
        out.backward(mg.tensor(np.random.default_rng(0).standard_normal(out.shape)))
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in leaves])
    for got, expected in zip(*results):
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
