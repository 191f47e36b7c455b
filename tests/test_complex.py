"""Complex tensors: dtypes and promotion, creation, polar/view_as_complex/view_as_real/real/imag/conj/angle/abs,
complex arithmetic with broadcasting, gradients in PyTorch's convention (complex128 gradchecks that perturb
real and imaginary parts, PyTorch mirrors of every input gradient), and LLaMA's reference rotary embedding.

Each op is written once as ``f(lib, *tensors)`` and run with ``lib`` = minigrad and ``lib`` = torch.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg
from minigrad.autograd import Function, GradcheckError

from .mirror import torch_or_skip
from .strategies import broadcastable_shapes


def rng(seed=0):
    return np.random.default_rng(seed)


def crandn(*shape, seed=0):
    """complex128 standard normal data (both parts random)."""
    g = rng(seed)
    return g.standard_normal(shape) + 1j * g.standard_normal(shape)


def randn(*shape, seed=0):
    return rng(seed).standard_normal(shape)


def mirror(f, *arrays, rtol=1e-10, atol=1e-12, seed=1):
    """Run ``f(lib, *tensors)`` in minigrad and PyTorch on ``arrays`` (float and complex ones require grad);
    compare the output, its dtype, and every input's gradient for one random upstream gradient (complex for a
    complex output). Returns the minigrad inputs and output."""
    torch = torch_or_skip()
    grads = [a.dtype.kind in "fc" for a in arrays]
    mg_in = [mg.tensor(a, requires_grad=g) for a, g in zip(arrays, grads)]
    th_in = [torch.tensor(a, requires_grad=g) for a, g in zip(arrays, grads)]
    out_mg, out_th = f(mg, *mg_in), f(torch, *th_in)
    assert str(out_mg.dtype) == str(out_th.dtype).replace("torch.", ""), (out_mg.dtype, out_th.dtype)
    np.testing.assert_allclose(out_mg.detach().numpy(), out_th.detach().resolve_conj().numpy(), rtol=rtol, atol=atol,
                               err_msg="forward")
    g = rng(seed)
    upstream = g.standard_normal(out_mg.shape)
    if out_mg.dtype.kind == "c":
        upstream = upstream + 1j * g.standard_normal(out_mg.shape)
    upstream = upstream.astype(out_mg.dtype)
    out_mg.backward(mg.tensor(upstream))
    out_th.backward(torch.tensor(upstream))
    for i, (a, b) in enumerate(zip(mg_in, th_in)):
        if b.requires_grad:
            assert a.grad.dtype == a.dtype, (i, a.grad.dtype, a.dtype)
            np.testing.assert_allclose(a.grad.numpy(), b.grad.resolve_conj().numpy(), rtol=rtol, atol=atol,
                                       err_msg=f"gradient of input {i}")
    return mg_in, out_mg


def gradcheck(f, *arrays, **kwargs):
    """mg.gradcheck of ``f(mg, *tensors)`` on copies of ``arrays`` (float64/complex128, all require grad)."""
    inputs = [mg.tensor(np.array(a), requires_grad=True) for a in arrays]
    assert mg.gradcheck(lambda *t: f(mg, *t), inputs, **kwargs)


# --------------------------------------------------------------------------- dtypes and promotion
def test_dtype_names():
    assert mg.complex64 == mg.cfloat == np.complex64
    assert mg.complex128 == mg.cdouble == np.complex128
    assert mg.tensor([1 + 2j]).dtype == mg.complex64                  # Python complex: the default complex
    assert mg.tensor([1, 2j]).dtype == mg.complex64
    assert mg.tensor(np.array([1j])).dtype == mg.complex128           # ndarrays keep their dtype
    assert mg.tensor([1.0], dtype=mg.cdouble).dtype == mg.complex128
    z = mg.tensor([1 + 2j])
    assert z.is_complex() and mg.is_complex(z) and not mg.ones(2).is_complex()
    assert not z.is_floating_point()
    assert mg.tensor(2 + 1j).item() == 2 + 1j


def test_default_complex_follows_default_float():
    mg.set_default_dtype(mg.float64)
    try:
        assert mg.tensor([1j]).dtype == mg.complex128
        assert (mg.ones(2, dtype=mg.int64) * 1j).dtype == mg.complex128
    finally:
        mg.set_default_dtype(mg.float32)


PROMOTION_CASES = [  # (dtype a, shape a, dtype b, shape b)
    ("float64", (3,), "complex64", ()), ("float32", (3,), "complex128", ()), ("int64", (3,), "complex128", ()),
    ("float64", (3,), "complex64", (3,)), ("float32", (3,), "complex128", (3,)), ("int64", (3,), "complex64", (3,)),
    ("complex64", (3,), "float64", ()), ("complex64", (3,), "complex128", ()), ("complex128", (3,), "complex64", ()),
    ("float64", (), "complex64", ()), ("bool", (3,), "complex64", ()), ("complex64", (), "float64", (3,)),
    ("float16", (3,), "complex64", (3,)),
]


@pytest.mark.parametrize("da, sa, db, sb", PROMOTION_CASES)
def test_promotion_matches_pytorch(da, sa, db, sb):
    torch = torch_or_skip()
    a, b = np.ones(sa, da), np.ones(sb, db)
    for op in (lambda x, y: x * y, lambda x, y: y + x, lambda x, y: x / y):
        got = op(mg.tensor(a), mg.tensor(b)).dtype
        expected = op(torch.tensor(a), torch.tensor(b)).dtype
        assert str(got) == str(expected).replace("torch.", ""), (da, sa, db, sb, got, expected)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "complex64", "complex128"])
@pytest.mark.parametrize("scalar", [1j, 2.5, 3])
def test_python_scalar_promotion_matches_pytorch(dtype, scalar):
    torch = torch_or_skip()
    a = np.ones(3, dtype)
    got, expected = (mg.tensor(a) * scalar).dtype, (torch.tensor(a) * scalar).dtype
    assert str(got) == str(expected).replace("torch.", "")
    np.testing.assert_allclose((mg.tensor(a) * scalar).numpy(), (torch.tensor(a) * scalar).numpy())


def test_requires_grad_on_complex_leaves():
    z = mg.tensor([1 + 1j], requires_grad=True)
    assert z.requires_grad
    assert mg.zeros(2, dtype=mg.complex128).requires_grad_().requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        mg.ones(2, dtype=mg.int64).requires_grad_()


def test_implicit_gradient_of_complex_output_raises_as_pytorch():
    torch = torch_or_skip()
    z = mg.tensor([1 + 1j], dtype=mg.complex128, requires_grad=True)
    with pytest.raises(RuntimeError, match="only for real scalar outputs but got minigrad.complex128"):
        (z * 2).sum().backward()
    with pytest.raises(RuntimeError, match="only for real scalar outputs"):
        (torch.tensor([1 + 1j], requires_grad=True) * 2).sum().backward()
    assert z.grad is None


def test_repr():
    torch = torch_or_skip()
    data = np.array([1 + 2j, 3 - 1j])
    assert repr(mg.tensor(data.astype(np.complex64))) == repr(torch.tensor(data.astype(np.complex64)))
    assert repr(mg.tensor(data)).endswith("dtype=minigrad.complex128)")
    z = mg.tensor(crandn(2, 3), requires_grad=True)
    assert "grad_fn=<MulBackward>" in repr(z * 2)
    assert "complex64" in repr(mg.zeros(0, dtype=mg.complex64))


# --------------------------------------------------------------------------- building complex tensors
def test_complex_mirror_and_gradcheck():
    f = lambda m, re, im: m.complex(re, im)  # noqa: E731
    mirror(f, randn(3, 4), randn(4, seed=1))                          # broadcasting
    gradcheck(f, randn(3, 1), randn(4, seed=1))
    _, out = mirror(f, randn(2).astype(np.float32), randn(2, seed=1).astype(np.float32), rtol=1e-6)
    assert out.dtype == mg.complex64


def test_complex_errors_match_pytorch():
    torch = torch_or_skip()
    for a, b in [(np.ones(2, np.float32), np.ones(2)), (np.ones(2, np.int64), np.ones(2, np.int64))]:
        with pytest.raises(RuntimeError) as th:
            torch.complex(torch.tensor(a), torch.tensor(b))
        with pytest.raises(RuntimeError) as ours:
            mg.complex(mg.tensor(a), mg.tensor(b))
        assert str(ours.value).split(" but got")[-1] == str(th.value).split(" but got")[-1]
    with pytest.raises(RuntimeError, match="must match the size"):
        mg.complex(mg.ones(2), mg.ones(3))


def test_polar_mirror_and_gradcheck():
    f = lambda m, r, theta: m.polar(r, theta)  # noqa: E731
    r, theta = np.abs(randn(3, 4)) + 0.1, randn(3, 4, seed=1) * 3
    mirror(f, r, theta)
    mirror(f, r[:, :1], theta)                                        # broadcasting
    gradcheck(f, r, theta)
    gradcheck(lambda m, r, theta: m.polar(r, theta) * (2 - 1j), r, theta, fast_mode=True)
    with pytest.raises(RuntimeError, match="Expected object of scalar type Float but got scalar type Double"):
        mg.polar(mg.ones(2), mg.ones(2, dtype=mg.float64))


# --------------------------------------------------------------------------- reinterpreting memory
def test_view_as_complex_and_real_are_views():
    x = mg.tensor(randn(3, 2))
    z = mg.view_as_complex(x)
    assert z.shape == (3,) and z.dtype == mg.complex128
    assert np.shares_memory(z.numpy(), x.numpy())
    np.testing.assert_array_equal(z.numpy(), x.numpy()[:, 0] + 1j * x.numpy()[:, 1])
    pairs = mg.view_as_real(z)
    assert pairs.shape == (3, 2) and np.shares_memory(pairs.numpy(), x.numpy())
    np.testing.assert_array_equal(pairs.numpy(), x.numpy())
    x.numpy()[0, 1] = 7.0                                             # one memory: the views see the write
    assert z[0].item().imag == 7.0 and z.imag[0].item() == 7.0
    zero_dim = mg.view_as_real(mg.tensor(1 + 2j))
    assert zero_dim.shape == (2,) and zero_dim.tolist() == [1.0, 2.0]


def test_view_as_real_of_a_transposed_complex_tensor():
    torch = torch_or_skip()
    data = crandn(3, 4)
    ours = mg.view_as_real(mg.tensor(data).T)
    np.testing.assert_array_equal(ours.numpy(), torch.view_as_real(torch.tensor(data).T).numpy())


def test_view_as_complex_errors_match_pytorch():
    torch = torch_or_skip()
    cases = [lambda m: m.ones(3), lambda m: m.ones(3, 2, dtype=m.int64), lambda m: m.ones(2, 4)[:, :3:2],
             lambda m: m.ones(2, 4).T, lambda m: m.ones(3, 2).reshape(-1)[1:5].view(2, 2),
             lambda m: m.ones(3, 3)[:, :2]]
    for make in cases:
        with pytest.raises(RuntimeError) as th:
            torch.view_as_complex(make(torch))
        with pytest.raises(RuntimeError) as ours:
            mg.view_as_complex(make(mg))
        expected = str(th.value).replace("half, float", "float")
        assert str(ours.value) == expected
    with pytest.raises(RuntimeError, match="view_as_real is only supported for complex tensors"):
        mg.view_as_real(mg.ones(3))


def test_view_as_complex_accepts_pytorch_views():
    torch = torch_or_skip()
    data = randn(4, 6, 2)
    for make in (lambda t: t[1:3], lambda t: t.transpose(0, 1), lambda t: t[:, ::2]):
        ours = mg.view_as_complex(make(mg.tensor(data)))
        np.testing.assert_array_equal(ours.numpy(), torch.view_as_complex(make(torch.tensor(data))).numpy())


def test_view_as_complex_and_real_gradients():
    to_complex = lambda m, x: m.view_as_complex(x) * (0.5 + 2j)  # noqa: E731
    to_real = lambda m, z: m.view_as_real(z * (1 - 0.5j)) * 3  # noqa: E731
    mirror(to_complex, randn(3, 4, 2))
    mirror(lambda m, x: m.view_as_complex(x.transpose(0, 1)), randn(4, 3, 2))
    mirror(to_real, crandn(3, 4))
    mirror(lambda m, z: m.view_as_real(z.T), crandn(3, 4))
    gradcheck(to_complex, randn(3, 2))
    gradcheck(to_real, crandn(2, 3))


# --------------------------------------------------------------------------- parts of complex numbers
def test_real_and_imag_are_views_with_gradients():
    z = mg.tensor(crandn(2, 3))
    assert np.shares_memory(z.real.numpy(), z.numpy()) and np.shares_memory(z.imag.numpy(), z.numpy())
    np.testing.assert_array_equal(z.real.numpy(), z.numpy().real)
    np.testing.assert_array_equal(mg.imag(z).numpy(), z.numpy().imag)
    assert z.real.dtype == mg.float64 and mg.tensor([1j]).imag.dtype == mg.float32
    x = mg.ones(3)
    assert x.real is x and mg.real(x) is x
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes."):
        x.imag
    mirror(lambda m, z: z.real * 2 + z.imag ** 2, crandn(3, 4))
    mirror(lambda m, z: m.real(z * z) - m.imag(z), crandn(3))
    gradcheck(lambda m, z: z.real * z.imag, crandn(2, 3))


def test_conj_mirror_and_gradcheck():
    mirror(lambda m, z: z.conj() * z, crandn(3, 4))
    mirror(lambda m, z, w: m.conj(z) * w, crandn(3, 4), crandn(4, seed=1))
    gradcheck(lambda m, z: m.conj(z) * (1 + 2j), crandn(2, 3))
    x = mg.ones(2)
    assert x.conj() is x and not mg.tensor([1j]).conj().is_conj()


def test_angle_mirror_and_gradcheck():
    mirror(lambda m, z: z.angle(), crandn(3, 4))
    mirror(lambda m, z: m.angle(z * 2j), crandn(5))
    gradcheck(lambda m, z: z.angle(), crandn(2, 3))
    mirror(lambda m, x: (x * 3).angle(), np.array([-2.0, 0.0, 1.5, -0.0]))  # real: pi or 0, zero gradient


def test_angle_of_real_and_integer_tensors_match_pytorch():
    torch = torch_or_skip()
    data = np.array([-1.0, 0.0, 2.0, np.nan, -np.inf, np.inf])
    np.testing.assert_allclose(mg.tensor(data).angle().numpy(), torch.tensor(data).angle().numpy(),
                               rtol=1e-15, atol=0)  # atan2 may round its last bit differently across libraries
    ints = np.array([-1, 0, 1])
    assert mg.tensor(ints).angle().dtype == mg.float32
    np.testing.assert_allclose(mg.tensor(ints).angle().numpy(), torch.tensor(ints).angle().numpy())


def test_abs_mirror_and_gradcheck():
    mirror(lambda m, z: z.abs(), crandn(3, 4))
    mirror(lambda m, z: m.abs(z * z), crandn(5))
    gradcheck(lambda m, z: z.abs(), crandn(2, 3))


def test_abs_and_angle_gradients_at_zero_match_pytorch():
    data = np.array([0j, 1 + 1j, -2j])
    mirror(lambda m, z: z.abs(), data)
    mirror(lambda m, z: z.angle(), data)


# --------------------------------------------------------------------------- arithmetic
BINARY = {
    "add": lambda m, a, b: a + b,
    "sub": lambda m, a, b: m.sub(a, b, alpha=0.5),
    "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / b,
}


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 1), (4,)), ((), (2, 3))])
def test_complex_arithmetic_mirror_and_gradcheck(name, shapes):
    f = BINARY[name]
    a, b = crandn(*shapes[0]), crandn(*shapes[1], seed=1) + 0.5
    mirror(f, a, b)
    gradcheck(f, a, b)


@given(shapes=broadcastable_shapes(), name=st.sampled_from(sorted(BINARY)), kinds=st.sampled_from(["cc", "fc", "cf"]),
       seed=st.integers(0, 2**16))
def test_arithmetic_sweep_over_broadcast_shapes_and_operand_kinds(shapes, name, kinds, seed):
    """Every pair of broadcastable shapes, complex/complex, real/complex and complex/real, against PyTorch."""
    a, b = ((crandn(*shape, seed=seed + i) if kind == "c" else randn(*shape, seed=seed + i)) + 2 * i
            for i, (shape, kind) in enumerate(zip(shapes, kinds)))
    mirror(BINARY[name], a, b, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name", BINARY)
def test_real_and_complex_mixed(name):
    """A float64 operand of a complex op gets the real part of its gradient (PyTorch's rule)."""
    f = BINARY[name]
    x, z = randn(3, 4) + 3, crandn(4, seed=1) + 0.5
    mirror(f, x, z)
    mirror(f, z, x)
    gradcheck(f, x, z)
    gradcheck(f, z, x)


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("scalar", [1.5 - 2j, 2.0, 3])
def test_complex_tensor_and_python_scalar(name, scalar):
    f = BINARY[name]
    mirror(lambda m, z: f(m, z, scalar), crandn(3, 2))
    mirror(lambda m, z: f(m, scalar, z), crandn(3, 2) + 0.5)
    mirror(lambda m, x: f(m, x, scalar) if isinstance(scalar, complex) else f(m, x, 1j), randn(3, 2) + 3)


def test_complex64_arithmetic_mirror():
    data = [crandn(3, 4).astype(np.complex64), crandn(4, seed=1).astype(np.complex64) + 1]
    for f in BINARY.values():
        mirror(f, *data, rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------------- shape ops and casts
def test_shape_ops_on_complex_tensors():
    mirror(lambda m, z: z.reshape(2, 6).view(3, 4).flatten() * (1 + 1j), crandn(3, 4))
    mirror(lambda m, z: z.transpose(0, 1)[1:, None] * z[:, 0], crandn(3, 4))
    mirror(lambda m, z: z.sum(0) * z.unsqueeze(0).expand(2, 3, 4), crandn(3, 4))
    gradcheck(lambda m, z: z.view(12)[::2] * z.flatten()[1::2], crandn(3, 4))


def test_casts_around_complex_tensors():
    mirror(lambda m, x: x.to(m.complex128) * (1 + 2j), randn(3))
    mirror(lambda m, x, z: (x.type_as(z) * z).abs(), randn(3), crandn(3, seed=1))
    mirror(lambda m, z: m.view_as_real(z.to(m.complex64)).double(), crandn(3), rtol=1e-6, atol=1e-7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mirror(lambda m, z: z.double() * 2, crandn(3))                # keeps the real part
    with pytest.warns(UserWarning, match="Casting complex values to real discards the imaginary part"):
        assert mg.tensor([1 + 2j]).float().tolist() == [1.0]


def test_complex_to_bool_is_nonzero_as_pytorch():
    """A complex number cast to bool is whether it is nonzero, its imaginary part included (it took the real part
    alone, so 1j was False), without the warning; a Python NaN or inf becomes True in a bool tensor (it raised)."""
    torch = torch_or_skip()
    nan, inf = float("nan"), float("inf")
    values = [0j, 1j, 1 + 0j, complex(0, nan), complex(nan, 0), complex(0, -0.0), complex(-0.0, 0), complex(0, 1e-30)]
    for make in (lambda L: L.tensor(values).bool(), lambda L: L.tensor(values).to(L.bool),
                 lambda L: L.tensor(values, requires_grad=True).to(L.bool), lambda L: L.tensor(values, dtype=L.bool),
                 lambda L: L.tensor([nan, inf, 0.0, complex(0, nan)], dtype=L.bool)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")                # no warning: nothing is discarded
            ours = make(mg)
        assert ours.tolist() == make(torch).tolist()
    assert mg.tensor(values).bool().tolist() == [False, True, True, True, True, False, False, True]


COMPLEX_MATH = {
    "exp": lambda m, z: z.exp(), "log": lambda m, z: m.log(z), "sqrt": lambda m, z: z.sqrt(),
    "rsqrt": lambda m, z: m.rsqrt(z), "square": lambda m, z: m.square(z), "tanh": lambda m, z: m.tanh(z),
    "sigmoid": lambda m, z: m.sigmoid(z), "sin": lambda m, z: m.sin(z), "cos": lambda m, z: m.cos(z),
    "z ** w": lambda m, z, w: z ** w, "z ** 2.5": lambda m, z: z ** 2.5, "1.5 ** z": lambda m, z: 1.5 ** z,
    "x ** w": lambda m, x, w: m.pow(x.abs() + 0.5, w), "z ** y": lambda m, z, y: m.pow(z, y),
    "logaddexp": lambda m, z, w: m.logaddexp(z, w), "exp_": lambda m, z: (z * 1).exp_(),
    "sigmoid_": lambda m, z: (z * 1).sigmoid_(), "pow_": lambda m, z, w: (z * 1).pow_(w),
}
COMPLEX_ARGUMENTS = {"z ** w": "cc", "x ** w": "rc", "z ** y": "cr", "logaddexp": "cc", "pow_": "cc"}


def _complex_arguments(name, shape, seed=0):
    return [crandn(*shape, seed=seed + i) if kind == "c" else randn(*shape, seed=seed + i)
            for i, kind in enumerate(COMPLEX_ARGUMENTS.get(name, "c"))]


@pytest.mark.parametrize("name", sorted(COMPLEX_MATH))
def test_complex_math_functions_mirror_and_gradcheck(name):
    """Holomorphic functions of complex tensors: the gradient is dout * conj(f'(z)) (PyTorch's convention), in
    their first and (create_graph) second derivatives; real operands beside complex ones get the real part."""
    f = COMPLEX_MATH[name]
    mirror(f, *_complex_arguments(name, (3, 4)))
    gradcheck(f, *_complex_arguments(name, (2, 3), seed=5))
    torch = torch_or_skip()
    arrays, g, h = _complex_arguments(name, (4,), seed=9), crandn(4, seed=20), crandn(4, seed=21)
    results = []
    for lib in (mg, torch):
        inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
        first = lib.autograd.grad(f(lib, *inputs), inputs, lib.tensor(g), create_graph=True)
        second = lib.autograd.grad(first, inputs, [lib.tensor(h if a.dtype.kind == "c" else h.real) for a in arrays],
                                   allow_unused=True)
        results.append([t.detach().resolve_conj().numpy() for t in first + second if t is not None])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_complex_pow_and_logaddexp_special_values_as_pytorch():
    """pow's exponent gradient is 0 at a zero base under a real exponent >= 0 (PyTorch's mask); logaddexp
    of complex infinities and NaNs gives PyTorch's values."""
    z, w = crandn(4), crandn(4, seed=1)
    z[1], w[1], w[2] = 0, 2.0, 0
    mirror(lambda m, z, w: z ** w, z, w)
    inf, nan = np.inf, np.nan
    a = np.array([complex(-inf, 1), complex(inf, 2), complex(nan, 1), complex(1, nan), 3 + 0j, complex(-inf, -1)])
    b = np.array([complex(-inf, 2), complex(inf, -1), 1 + 1j, 2 + 2j, complex(-inf, 0), 3 + 1j])
    torch = torch_or_skip()
    for dtype in (np.complex128, np.complex64):
        ours = mg.logaddexp(mg.tensor(a.astype(dtype)), mg.tensor(b.astype(dtype)))
        theirs = torch.logaddexp(torch.tensor(a.astype(dtype)), torch.tensor(b.astype(dtype)))
        assert ours.dtype == dtype
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, equal_nan=True)


def test_ordering_ops_refuse_complex_as_pytorch():
    torch = torch_or_skip()
    for lib in (mg, torch):
        z = lib.tensor([1 + 1j])
        with pytest.raises(RuntimeError, match="maximum not implemented for complex tensors."):
            lib.maximum(z, z)
        with pytest.raises(RuntimeError, match="minimum not implemented for complex tensors."):
            lib.minimum(lib.ones(1), z)
        with pytest.raises(NotImplementedError, match="clamp is not supported for complex types"):
            z.clamp(0, 1)
        for requires_grad in (False, True):
            with pytest.raises(NotImplementedError, match="clamp is not supported for complex types"):
                lib.relu(lib.tensor([1 + 1j], requires_grad=requires_grad))


# --------------------------------------------------------------------------- gradcheck on complex inputs
class _ConjugateForgotten(Function):
    """z * w whose backward forgets the conjugates: wrong for complex inputs, right for real ones."""

    @staticmethod
    def forward(ctx, z, w):
        ctx.save_for_backward(z, w)
        return z._data * w._data

    @staticmethod
    def backward(ctx, dout):
        z, w = ctx.saved_tensors
        return dout._data * w._data, dout._data * z._data


class _ImaginaryPartLost(Function):
    """2 z whose backward drops the imaginary part of the gradient."""

    @staticmethod
    def forward(ctx, z):
        return 2 * z._data

    @staticmethod
    def backward(ctx, dout):
        return 2 * dout._data.real.astype(dout.dtype)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_catches_wrong_complex_gradients(fast_mode):
    z, w = (mg.tensor(crandn(2, 2, seed=s), requires_grad=True) for s in (0, 1))
    with pytest.raises(GradcheckError, match="mismatch"):
        mg.gradcheck(_ConjugateForgotten.apply, (z, w), fast_mode=fast_mode)
    with pytest.raises(GradcheckError, match="imaginary part" if not fast_mode else "mismatch"):
        mg.gradcheck(_ImaginaryPartLost.apply, (z,), fast_mode=fast_mode)
    x, y = (mg.tensor(randn(2, 2, seed=s), requires_grad=True) for s in (0, 1))
    assert mg.gradcheck(_ConjugateForgotten.apply, (x, y), fast_mode=fast_mode)


def test_gradcheck_of_a_real_loss_of_complex_inputs():
    gradcheck(lambda m, z, w: (z * w.conj()).real.sum() + (z / w).abs().sum(), crandn(3), crandn(3, seed=1) + 1)


# --------------------------------------------------------------------------- LLaMA's reference rotary embedding
def precompute_freqs_cis(lib, dim, end, theta=10000.0, real=None):
    """LLaMA's reference code; ``real`` replaces its ``.float()`` to run it in float64 (complex128)."""
    real = real or lib.float32
    freqs = 1.0 / (theta ** (lib.arange(0, dim, 2)[: (dim // 2)].to(real) / dim))
    t = lib.arange(end).to(real)
    freqs = (t[:, None] * freqs[None, :]).to(real)                   # torch.outer(t, freqs).float()
    return lib.polar(lib.ones_like(freqs), freqs)


def reshape_for_broadcast(freqs_cis, x):
    ndim = x.ndim
    assert 0 <= 1 < ndim
    assert freqs_cis.shape == (x.shape[1], x.shape[-1])
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)


def apply_rotary_emb(lib, xq, xk, freqs_cis, real=None):
    real = real or lib.float32
    xq_ = lib.view_as_complex(xq.to(real).reshape(*xq.shape[:-1], -1, 2))
    xk_ = lib.view_as_complex(xk.to(real).reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = lib.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = lib.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


@pytest.mark.parametrize("dtype, rtol, atol", [(np.float64, 1e-10, 1e-12), (np.float32, 1e-5, 1e-5)])
def test_llama_rotary_embedding_matches_pytorch(dtype, rtol, atol):
    """Forward and gradients (queries, keys, and the frequencies through polar) against PyTorch."""
    torch = torch_or_skip()
    batch, seqlen, heads, head_dim = 2, 5, 3, 8
    xq, xk = randn(batch, seqlen, heads, head_dim).astype(dtype), randn(batch, seqlen, heads, head_dim, seed=1)
    xk = xk.astype(dtype)
    g = rng(2)
    dq, dk = (g.standard_normal(xq.shape).astype(dtype) for _ in range(2))
    results = []
    for lib in (mg, torch):
        real = lib.float64 if dtype == np.float64 else lib.float32
        q, k = lib.tensor(xq, requires_grad=True), lib.tensor(xk, requires_grad=True)
        freqs_cis = precompute_freqs_cis(lib, head_dim, seqlen * 2, real=real)[:seqlen].detach()
        freqs_cis.requires_grad_()
        q_out, k_out = apply_rotary_emb(lib, q, k, freqs_cis, real=real)
        (q_out * lib.tensor(dq)).sum().backward(retain_graph=True)
        k_out.backward(lib.tensor(dk))
        results.append([t.detach().numpy() for t in (q_out, k_out, q.grad, k.grad, freqs_cis.grad)])
        assert str(q_out.dtype).replace("torch.", "") == np.dtype(dtype).name
        assert str(freqs_cis.dtype).replace("torch.", "") == ("complex128" if dtype == np.float64 else "complex64")
    for name, ours, theirs in zip(["q_out", "k_out", "dq", "dk", "dfreqs_cis"], *results):
        assert ours.dtype == theirs.dtype, name
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, err_msg=name)


def test_llama_rotary_embedding_gradcheck():
    batch, seqlen, heads, head_dim = 1, 3, 2, 4
    freqs_cis = precompute_freqs_cis(mg, head_dim, seqlen, real=mg.float64)

    def rotary(xq, xk, angles):
        rotations = mg.polar(mg.ones_like(angles), angles)
        q_out, k_out = apply_rotary_emb(mg, xq, xk, rotations, real=mg.float64)
        return q_out * k_out

    angles = np.angle(freqs_cis.numpy())
    shape = (batch, seqlen, heads, head_dim)
    gradcheck(lambda m, q, k, a: rotary(q, k, a), randn(*shape), randn(*shape, seed=1), angles)


def test_llama_rotary_reference_with_float_call_gives_complex64():
    """The unmodified reference (``.float()``) on float64 input: complex64 inside, float64 out, as in PyTorch."""
    torch = torch_or_skip()
    x = randn(1, 4, 2, 6)
    outs = []
    for lib in (mg, torch):
        q = lib.tensor(x, requires_grad=True)
        out, _ = apply_rotary_emb(lib, q, q, precompute_freqs_cis(lib, 6, 4))
        out.backward(lib.tensor(x[::-1].copy()))
        outs.append((out.detach().numpy(), q.grad.numpy()))
        assert str(out.dtype).endswith("float64") and str(q.grad.dtype).endswith("float64")
    for ours, theirs in zip(*outs):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_complex_matmul_and_linear_gradients():
    """Products of complex matrices conjugate the other operand in backward, as PyTorch."""
    mirror(lambda m, a, b: a @ b, crandn(2, 3, 4), crandn(4, 2, seed=1))
    mirror(lambda m, a, b: a @ b, crandn(4), crandn(2, 4, 3, seed=1))
    mirror(lambda m, x, b: x.to(m.complex128) @ b, randn(3, 4), crandn(4, seed=1))
    mirror(lambda m, x, w, b: m.nn.functional.linear(x, w, b), crandn(2, 3, 4), crandn(5, 4, seed=1),
           crandn(5, seed=2))
    gradcheck(lambda m, a, b: a @ b, crandn(2, 3), crandn(3, 2, seed=1))


def test_activations_on_complex_inputs_as_pytorch():
    torch = torch_or_skip()
    z = np.array([1 + 1j, -0.5 + 2j])
    np.testing.assert_allclose(mg.nn.functional.silu(mg.tensor(z)).numpy(),
                               torch.nn.functional.silu(torch.tensor(z)).numpy(), rtol=1e-12)
    for lib, kind in ((torch, RuntimeError), (mg, RuntimeError)):
        with pytest.raises(kind, match="silu does not support automatic differentiation"):
            lib.nn.functional.silu(lib.tensor(z, requires_grad=True))
    for lib in (torch, mg):
        with pytest.raises(NotImplementedError, match="GeluKernelImpl"):
            lib.nn.functional.gelu(lib.tensor(z))


def test_view_as_real_double_backward_with_the_pair_axis_moved():
    """create_graph=True through view_as_real when the upstream gradient's pair axis is not the innermost in
    memory (a permute after view_as_real): the gradient is read back as complex numbers from a contiguous copy,
    and equals the first-order one."""
    rng = np.random.default_rng(3)
    z_value, w = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3)), rng.standard_normal((2, 2, 3))
    grads = []
    for create_graph in (False, True):
        z = mg.tensor(z_value, requires_grad=True)
        y = (mg.view_as_real(z).permute(2, 0, 1) * mg.tensor(w)).sum()
        (g,) = mg.autograd.grad(y, z, create_graph=create_graph)
        grads.append(g.detach().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=0, atol=0)
    np.testing.assert_allclose(grads[0], w[0] + 1j * w[1], rtol=1e-15)


# --------------------------------------------------------------------------- second derivatives on the op database
# op id: why its complex second derivative (or the graph of its first) still differs from PyTorch's
GRADGRAD_KNOWN = {
    "linalg.norm.subgradients_at_zero": "at a zero vector PyTorch's second derivative of the norm has values, "
                                        "minigrad's is zeros (as in float64: docs/differences.md)",
    "ormqr": "PyTorch gives the inputs of a sample no first gradient, minigrad zeros with a graph (as in float64)",
    "stft": "without a window the first gradient is linear in the upstream only: minigrad's has no graph, PyTorch's "
            "requires grad (values agree)",
}


def _gradgrad_outcomes(op, torch):
    """For 3 complex128 samples of ``op``: (sample index, what differs) where minigrad's second derivatives (of a
    random complex upstream, then a random complex upstream of the first gradients) differ from PyTorch's."""
    from .opinfo_harness import minigrad_variant
    from .opinfo_util import flat_outputs, samples, to_mg, upstream_gradients
    found, compared = [], 0
    for i, s in enumerate(samples(op, torch.complex128, requires_grad=True, limit=3)):
        try:
            outs_th = [o for o in flat_outputs(op.op(s.input, *s.args, **s.kwargs))
                       if isinstance(o, torch.Tensor) and o.requires_grad]
            leaves_th = [t for t in flat_outputs([s.input, list(s.args), list(s.kwargs.values())])
                         if isinstance(t, torch.Tensor) and t.requires_grad]
            ups = upstream_gradients(np.random.default_rng(0), outs_th)
            first_th = torch.autograd.grad(outs_th, leaves_th, [torch.tensor(u, dtype=o.dtype) for u, o in
                                                                zip(ups, outs_th)], create_graph=True, allow_unused=True)
            first_th = [g for g in first_th if g is not None and g.requires_grad]
            hs = upstream_gradients(np.random.default_rng(1), first_th)
            second_th = torch.autograd.grad(first_th, leaves_th, [torch.tensor(u, dtype=g.dtype)
                                                                  for u, g in zip(hs, first_th)], allow_unused=True)
        except Exception:   # noqa: BLE001 - a sample PyTorch itself cannot differentiate twice: nothing to compare
            continue
        if not outs_th or not first_th:
            continue
        memo = {}
        x, args, kwargs = to_mg(s.input, memo), to_mg(list(s.args), memo), to_mg(dict(s.kwargs), memo)
        leaves = [memo[id(t)][1] for t in leaves_th]
        outs = [o for o in flat_outputs(minigrad_variant(op, "function")(x, *args, **kwargs))
                if isinstance(o, mg.Tensor) and o.requires_grad]
        first = mg.autograd.grad(outs, leaves, [mg.tensor(u, dtype=o.dtype) for u, o in zip(ups, outs)],
                                 create_graph=True, allow_unused=True)
        first = [g for g in first if g is not None and g.requires_grad]
        compared += 1
        if len(first) != len(first_th):
            found.append((i, f"{len(first)} first gradients with a graph, PyTorch {len(first_th)}"))
            continue
        second = mg.autograd.grad(first, leaves, [mg.tensor(u, dtype=g.dtype) for u, g in zip(hs, first)],
                                  allow_unused=True)
        for j, (ours, theirs) in enumerate(zip(second, second_th)):
            if theirs is not None and (ours is None or not np.allclose(
                    ours.numpy(), theirs.resolve_conj().numpy(), rtol=1e-6, atol=1e-6, equal_nan=True)):
                found.append((i, f"second derivative of input {j}"))
                break
    return found, compared


def _complex_gradgrad_ops():
    torch = torch_or_skip()
    pytest.importorskip("expecttest", reason="PyTorch's op database imports expecttest")
    from .opinfo_harness import cases, is_random, op_id
    return [op for op, variant, kind in cases() if kind == "complex128" and variant == "function"
            and op.supports_autograd and getattr(op, "supports_gradgrad", True) and not is_random(op)], torch


def test_complex_second_derivatives_match_pytorch_on_its_op_database():
    """Every op PyTorch differentiates twice on complex128 (its op database, 3 samples each): minigrad's second
    derivatives agree, but for the ops listed in GRADGRAD_KNOWN (which must still differ, so that a fixed one's
    entry goes)."""
    from .opinfo_harness import op_id
    ops, torch = _complex_gradgrad_ops()
    differing, compared = {}, 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for op in ops:
            try:
                found, n = _gradgrad_outcomes(op, torch)
            except pytest.skip.Exception:        # a sample minigrad cannot be given (a module instance)
                continue
            compared += n
            if found:
                differing[op_id(op)] = found[0]
    assert compared > 300, compared
    assert set(differing) == set(GRADGRAD_KNOWN), {k: v for k, v in differing.items() if k not in GRADGRAD_KNOWN}
