"""Differential fuzzing: random short programs of ops on random float64 tensors, run in minigrad and in PyTorch.

A program starts from two input tensors whose shapes broadcast together (0-d and zero-size shapes included)
and applies a few ops, each to one or two of the values computed so far (inputs or earlier results). Whether
an op applies is decided from the shapes alone (so both libraries run the same program); an op that does not
fit the shapes is skipped. The last value's forward and the gradients of both inputs (random upstream
gradient) must agree with PyTorch to float64 precision, and every intermediate value too.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg

from .mirror import torch_or_skip

UNARY = {
    "tanh": lambda lib, x: lib.tanh(x),
    "sin": lambda lib, x: lib.sin(x),
    "sigmoid": lambda lib, x: lib.sigmoid(x),
    "square": lambda lib, x: lib.square(x),
    "abs": lambda lib, x: lib.abs(x),
    "relu": lambda lib, x: lib.relu(x),
    "neg": lambda lib, x: lib.neg(x),
    "exp_tanh": lambda lib, x: lib.exp(lib.tanh(x)),
    "log1p_square": lambda lib, x: lib.log1p(x * x),
    "sqrt_1p_square": lambda lib, x: lib.sqrt(1 + x * x),
    "scale": lambda lib, x: x * 0.5 - 1.25,
    "clamp": lambda lib, x: lib.clamp(x, -0.5, 0.75),
    "silu": lambda lib, x: lib.nn.functional.silu(x),
    "gelu": lambda lib, x: lib.nn.functional.gelu(x),
    "elu": lambda lib, x: lib.nn.functional.elu(x),
}
# ops that need at least one dimension: (name, function of (lib, x))
WITH_DIM = {
    "sum_last": lambda lib, x: x.sum(-1),
    "mean_first_keepdim": lambda lib, x: x.mean(0, keepdim=True),
    "softmax_last": lambda lib, x: lib.softmax(x, -1),
    "log_softmax_first": lambda lib, x: lib.log_softmax(x, 0),
    "cumsum_last": lambda lib, x: lib.cumsum(x, -1),
    "flip_first": lambda lib, x: lib.flip(x, (0,)),
    "unsqueeze_transpose": lambda lib, x: lib.unsqueeze(x, 0).transpose(0, -1),
    "flatten": lambda lib, x: lib.flatten(x),
    "layer_norm": lambda lib, x: lib.nn.functional.layer_norm(x, x.shape[-1:]),
    "rms_norm": lambda lib, x: lib.nn.functional.rms_norm(x, x.shape[-1:]),
}
BINARY = {
    "add": lambda lib, a, b: a + b,
    "sub": lambda lib, a, b: a - b,
    "mul": lambda lib, a, b: a * b,
    "div": lambda lib, a, b: a / (1 + b * b),
    "maximum": lambda lib, a, b: lib.maximum(a, b),
    "minimum": lambda lib, a, b: lib.minimum(a, b),
    "where": lambda lib, a, b: lib.where(a > b, a, b * 2),
    "atan2": lambda lib, a, b: lib.atan2(a, 1.5 + b * b),
    "matmul": lambda lib, a, b: lib.matmul(a, b),
}
OPS = sorted(UNARY) + sorted(WITH_DIM) + sorted(BINARY)


def broadcasts(*shapes):
    try:
        np.broadcast_shapes(*shapes)
        return True
    except ValueError:
        return False


def matmul_fits(sa, sb):
    if not sa or not sb:
        return False
    try:
        np.matmul(np.empty(sa), np.empty(sb))
        return True
    except ValueError:
        return False


def fits(op, shapes):
    """Whether ``op`` applies to values of ``shapes`` (one shape, or two for a binary op)."""
    if op in UNARY:
        return True
    if op in WITH_DIM:
        (shape,) = shapes
        return len(shape) >= 1
    if op == "matmul":
        return matmul_fits(*shapes)
    return broadcasts(*shapes)


@st.composite
def programs(draw):
    full = draw(st.lists(st.integers(0, 3), max_size=3).map(tuple))
    kept = full[draw(st.integers(0, len(full))):]
    ones = draw(st.lists(st.booleans(), min_size=len(kept), max_size=len(kept)))
    second = tuple(1 if one else s for s, one in zip(kept, ones))
    steps = draw(st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 7), st.integers(0, 7)), min_size=1,
                          max_size=5))
    return (full, second), steps, draw(st.integers(0, 2 ** 32 - 1))


def run(lib, arrays, steps):
    """Run the program in ``lib``: returns (inputs, every value computed)."""
    inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
    values = list(inputs)
    for op, i, j in steps:
        a, b = values[i % len(values)], values[j % len(values)]
        if op in BINARY:
            if fits(op, (tuple(a.shape), tuple(b.shape))):
                values.append(BINARY[op](lib, a, b))
        elif fits(op, (tuple(a.shape),)):
            values.append((UNARY.get(op) or WITH_DIM[op])(lib, a))
    return inputs, values


@settings(max_examples=60, deadline=None)
@given(programs())
def test_random_programs_match_pytorch(program):
    torch = torch_or_skip()
    shapes, steps, seed = program
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in shapes]
    mg_inputs, mg_values = run(mg, arrays, steps)
    th_inputs, th_values = run(torch, arrays, steps)
    assert len(mg_values) == len(th_values)
    for k, (ours, theirs) in enumerate(zip(mg_values, th_values)):
        assert tuple(ours.shape) == tuple(theirs.shape), f"value {k}"
        assert str(ours.dtype) == str(theirs.dtype).replace("torch.", ""), f"value {k}"
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=f"value {k} of {steps}")
    upstream = rng.standard_normal(tuple(mg_values[-1].shape))
    if not mg_values[-1].requires_grad:
        return
    mg_values[-1].backward(mg.tensor(upstream))
    th_values[-1].backward(torch.tensor(upstream))
    for k, (a, b) in enumerate(zip(mg_inputs, th_inputs)):
        assert (a.grad is None) == (b.grad is None), f"gradient presence of input {k}"
        if b.grad is not None:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12,
                                       err_msg=f"gradient of input {k} for {steps}")


@pytest.mark.parametrize("op", OPS)
def test_every_op_appears_in_a_fitting_program(op):
    """The fuzzer can apply each op: it fits some pair of the input shapes it draws."""
    shapes = [(2, 3), (3,), (3, 2)]
    assert any(fits(op, (a, b) if op in BINARY else (a,)) for a in shapes for b in shapes)
