"""Complex tensors: building them (``complex``, ``polar``), reinterpreting their memory (``view_as_real``,
``view_as_complex``) and taking them apart (``real``, ``imag``, ``conj``, ``angle``).

Gradients follow PyTorch's convention. A complex z = x + iy is the pair of reals (x, y); for a real loss L
the gradient stored for z is ``dL/dx + i dL/dy``. Then:

* a holomorphic f (``a * b``, ``a / b``) has the backward ``grad * conj(f'(z))``;
* a real input x feeding a complex output z gets ``Re(grad * conj(dz/dx))`` (the engine keeps the real part
  of a complex gradient that reaches a real input);
* a real output of a complex input (``abs``, ``angle``, ``real``, ``imag``) sends back
  ``grad * (dout/dx + i dout/dy)``.

``view_as_real`` and ``view_as_complex`` share memory with their input as in PyTorch, and so do ``.real``
and ``.imag`` (views of ``view_as_real``). Unlike PyTorch, writing in place into one of these views in grad
mode changes the other tensor's values but not its recorded history: they reinterpret the memory with
another dtype, which minigrad's view tracking (``autograd/views.py``, element positions in one dtype)
does not follow. ``conj`` is a copy, not PyTorch's lazy conjugate view (``is_conj()`` is always False).
"""
import numpy as np

from .._checks import takes_tensors
from ..autograd import Function
from ..autograd.version import storage_of
from ..dtypes import complex_of, get_default_dtype, scalar_type_name
from ..tensor import Tensor
from .elementwise import _apply_broadcasting, array_of, cast, select


def _real_dtype(dtype):
    """float32 for complex64, float64 for complex128."""
    return np.empty(0, dtype).real.dtype


def _as_real_pairs(z):
    """A complex ndarray (...) seen as real pairs (..., 2) in the same memory (re, im last)."""
    return z[..., None].view(_real_dtype(z.dtype))   # a length-1 last axis lets NumPy split each element


def _as_complex(pairs):
    """A real ndarray (..., 2) with a contiguous last axis seen as complex numbers (...), same memory."""
    return pairs.view(complex_of(pairs.dtype))[..., 0]


def _from_parts(re, im):
    """The complex ndarray re + i im (broadcast), complex64 for float32 parts, complex128 for float64."""
    z = np.empty(np.broadcast_shapes(re.shape, im.shape), complex_of(re.dtype))
    z.real, z.imag = re, im
    return z


def _check_same_float_dtypes(a, b):
    """PyTorch's checks for ``complex``/``polar``: two float tensors of one dtype (half has no complex here)."""
    if a.dtype.kind != "f" or b.dtype.kind != "f" or a.dtype == np.float16 or b.dtype == np.float16:
        raise RuntimeError(f"Expected both inputs to be Float or Double tensors but got "
                           f"{scalar_type_name(a.dtype)} and {scalar_type_name(b.dtype)}")
    if a.dtype != b.dtype:
        raise RuntimeError(f"Expected object of scalar type {scalar_type_name(a.dtype)} but got scalar type "
                           f"{scalar_type_name(b.dtype)} for second argument")


# --------------------------------------------------------------------------- building complex tensors
class Complex(Function):
    """z = x + iy. Backward: dL/dx = Re(grad), dL/dy = Im(grad)."""

    @staticmethod
    def forward(ctx, real, imag):
        return _from_parts(real._data, imag._data)

    @staticmethod
    def backward(ctx, dout):
        return dout._data.real, dout._data.imag

    @staticmethod
    def graph_backward(ctx, dout):
        return dout.real if ctx.needs_input_grad[0] else None, dout.imag if ctx.needs_input_grad[1] else None


@takes_tensors("real", "imag")
def complex(real, imag):  # noqa: A001 - PyTorch's name
    """The complex tensor ``real + i imag`` (float32 parts give complex64, float64 complex128; broadcasts)."""
    _check_same_float_dtypes(real, imag)
    return _apply_broadcasting(Complex, real, imag)


class Polar(Function):
    """z = r e^{i theta}. Backward, with the phase p = e^{i theta}:

        dL/dr = Re(grad * conj(p))        dL/dtheta = Re(grad * conj(i z))
    """

    @staticmethod
    def forward(ctx, abs, angle):
        theta = angle._data
        phase = _from_parts(np.cos(theta), np.sin(theta))
        z = abs._data * phase
        ctx.save_for_backward(phase, z)
        return z

    @staticmethod
    def backward(ctx, dout):
        phase, z = ctx.saved_tensors
        return Polar.grads(ctx, dout._data, phase, z)

    @staticmethod
    def graph_backward(ctx, dout):
        """``backward``'s formulas with z (this node's output) and p in the graph. p depends on theta only:
        p = polar(1, theta), theta recovered from the saved p (mod 2 pi, all that cos and sin see)."""
        phase, z = ctx.saved_tensors
        theta = ctx.input_tensor(1, np.angle(phase))
        phase = Polar.apply(Tensor(np.ones(phase.shape, phase.real.dtype)), theta)
        return Polar.grads(ctx, dout, phase, ctx.output_tensor(z))

    @staticmethod
    def grads(ctx, g, phase, z):
        """(dL/dr, dL/dtheta) of the class docstring, for ndarrays or Tensors in a graph."""
        dabs = (g * phase.conj()).real if ctx.needs_input_grad[0] else None
        dangle = (g * (1j * z).conj()).real if ctx.needs_input_grad[1] else None
        return dabs, dangle


@takes_tensors("abs", "angle")
def polar(abs, angle):  # noqa: A002 - PyTorch's argument names
    """``abs * (cos(angle) + i sin(angle))``, complex64 from float32 inputs, complex128 from float64."""
    if abs.dtype == angle.dtype == np.float16:      # (complex() makes complex32 of these, which minigrad lacks)
        raise NotImplementedError("\"polar_cpu\" not implemented for 'Half'")
    _check_same_float_dtypes(abs, angle)
    return _apply_broadcasting(Polar, abs, angle)


# --------------------------------------------------------------------------- reinterpreting memory
class ViewAsReal(Function):
    """A complex (...) tensor's memory as real pairs (..., 2). Backward: the pairs' gradient read back as
    complex numbers, (g[..., 0] + i g[..., 1])."""

    @staticmethod
    def forward(ctx, z):
        return _as_real_pairs(z._data)

    @staticmethod
    def backward(ctx, dout):
        return _as_complex(np.ascontiguousarray(dout._data))

    @staticmethod
    def graph_backward(ctx, dout):
        return ViewAsComplex.apply(dout.contiguous())      # pairs along a contiguous last axis


class ViewAsComplex(Function):
    """Real pairs (..., 2) as complex numbers (...), same memory. Backward: the complex gradient's memory as
    pairs, (Re g, Im g)."""

    @staticmethod
    def forward(ctx, x):
        return _as_complex(x._data)

    @staticmethod
    def backward(ctx, dout):
        return _as_real_pairs(dout._data)

    @staticmethod
    def graph_backward(ctx, dout):
        return ViewAsReal.apply(dout)


@takes_tensors("input")
def view_as_real(input):
    """A real view (..., 2) of a complex tensor (...): real parts at ``[..., 0]``, imaginary at ``[..., 1]``."""
    if input.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return ViewAsReal.apply(input)


@takes_tensors("input")
def view_as_complex(input):
    """A complex view (...) of a float32/float64 tensor (..., 2) whose last dimension has stride 1."""
    x = input._data
    if x.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"view_as_complex is only supported for float and double tensors, but got a tensor of "
                           f"scalar type: {scalar_type_name(x.dtype)}")
    if x.ndim == 0 or x.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if x.strides[-1] != x.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % (2 * x.itemsize) for s, n in zip(x.strides[:-1], x.shape[:-1]) if n > 1):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    offset = x.__array_interface__["data"][0] - storage_of(x).__array_interface__["data"][0]
    if offset % (2 * x.itemsize):
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return ViewAsComplex.apply(input)


# --------------------------------------------------------------------------- parts of complex numbers
@takes_tensors("input")
def real(input):
    """The real parts, a view (``view_as_real(input)[..., 0]``); a real tensor itself, as in PyTorch."""
    return view_as_real(input)[..., 0] if input.dtype.kind == "c" else input


@takes_tensors("input")
def imag(input):
    """The imaginary parts, a view (``view_as_real(input)[..., 1]``); PyTorch refuses real tensors."""
    if input.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return view_as_real(input)[..., 1]


class Conj(Function):
    """conj(z) = x - iy, a copy. Backward: conj(grad)."""

    @staticmethod
    def forward(ctx, z):
        return np.conj(z._data)

    @staticmethod
    def backward(ctx, dout):
        return np.conj(dout._data)

    @staticmethod
    def graph_backward(ctx, dout):
        return Conj.apply(dout)


@takes_tensors("input")
def conj(input):
    """The complex conjugate: a new tensor (PyTorch returns a lazy view; the values are the same). A real
    tensor is returned as is."""
    return Conj.apply(input) if input.dtype.kind == "c" else input


@takes_tensors("input")
def conj_physical(input):
    """``conj`` computed at once (minigrad's ``conj`` is never lazy, so the same values); a function of its own
    because, unlike ``conj``, it takes PyTorch's ``out=``."""
    return conj(input)


@takes_tensors("input")
def resolve_conj(input):
    """``input`` itself: minigrad's conjugates are computed at once, never lazy."""
    return input


@takes_tensors("input")
def is_conj(input):
    """Always False: minigrad has no lazy conjugate views."""
    return False


class Angle(Function):
    """theta = atan2(y, x) for complex z; for a real x, pi where x < 0 and 0 elsewhere (NaN stays NaN).
    Backward, complex: grad * i z / |z|^2 (0 at z = 0, as PyTorch); real: 0 (theta is piecewise constant)."""

    @staticmethod
    def forward(ctx, a):
        x = a._data
        ctx.save_for_backward(x)
        if x.dtype.kind == "c":
            return np.angle(x)
        return np.where(np.isnan(x), x, np.where(x < 0, np.pi, 0.0)).astype(x.dtype)

    @staticmethod
    def backward(ctx, dout):
        (z,) = ctx.saved_tensors
        if z.dtype.kind != "c":
            return np.zeros_like(dout._data)
        return Angle.complex_grad(dout._data, z)

    @staticmethod
    def graph_backward(ctx, dout):
        (z,) = ctx.saved_tensors
        if z.dtype.kind != "c":
            return Tensor(np.zeros_like(dout._data))    # a constant: every higher derivative is 0 too
        return Angle.complex_grad(dout, ctx.input_tensor(0, z))

    @staticmethod
    def complex_grad(g, z):
        """g * i z / |z|^2, 0 where |z|^2 = 0: ndarrays, or Tensors in a graph."""
        squared = (z * z.conj()).real                               # |z|^2
        zero = array_of(squared) == 0
        return select(zero, 0, g * 1j * z / select(zero, 1, squared))


@takes_tensors("input")
def angle(input):
    """The argument of each complex element in radians (a real tensor); for real inputs 0 or pi."""
    if input.dtype.kind in "biu":
        input = cast(input, get_default_dtype())                   # PyTorch: integers give the default float
    return Angle.apply(input)

