"""minigrad: a NumPy tensor library with reverse-mode autograd, built around normalization layers.

    import minigrad as mg
    x = mg.randn(4, 8, requires_grad=True)
    y = mg.nn.functional.rms_norm(x, (8,))
    y.backward(mg.randn(4, 8))
"""
import warnings as _warnings

# PyTorch computes NaN and infinities silently; NumPy warns where minigrad's ops compute them ("invalid value
# encountered in multiply"). Those warnings, raised in minigrad's own modules, are ignored (a NumPy reduction's,
# raised in NumPy's module, is silenced where minigrad calls it).
_warnings.filterwarnings("ignore", r"(invalid value|divide by zero|overflow|underflow) encountered in",
                         RuntimeWarning, r"minigrad\.")

from . import _malloc, dtypes  # noqa: E402
from .autograd import enable_grad, gradcheck, gradgradcheck, is_grad_enabled, no_grad, set_grad_enabled
from .autograd.grad_mode import inference_mode, is_inference_mode_enabled
from .creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace, logspace,
                       ones, ones_like, tensor, zeros, zeros_like)
from .device import device, get_default_device, set_default_device
from .dtypes import (bool, cdouble, cfloat, complex64, complex128, double, float, float16, float32, float64,
                     get_default_dtype, half, int32, int64, long, set_default_dtype)
from .kernels import get_backend, get_num_threads, set_backend, set_num_threads
from .kernels import has_lapack, has_mkl, has_openmp, has_spectral, init_num_threads
from .ops.elementwise import (abs, add, clamp, clip, cos, div, eq, exp, ge, gt, isfinite, isnan, le, log,
                              logical_and, logical_not, logical_or, lt, masked_fill, maximum, minimum, mul, ne,
                              neg, pow, relu, rsqrt, sigmoid, sin, sqrt, square, sub, tanh, where)
from .ops.complex import (angle, complex, conj, conj_physical, imag, is_conj, polar, real, resolve_conj,
                          view_as_complex, view_as_real)
from .ops.layout import (channels_last, channels_last_3d, clone, contiguous_format, memory_format,  # noqa: F401
                         preserve_format)
from .ops.linalg import matmul
from .ops.reduce import all, amax, amin, any, argmax, argmin, logsumexp, max, mean, min, std, sum, var
from .ops.shape import (cat, chunk, expand, flatten, permute, repeat, reshape, split, squeeze, stack, transpose,
                        tril, triu, unsqueeze)
from .ops.softmax import log_softmax, softmax
from .ops.elementwise import (allclose, arctan2, atan2, ceil, clamp_max, clamp_min, equal, erf, expm1, fix, floor,
                              frac, greater, greater_equal, isclose, isinf, less, less_equal, log1p, log2, log10,
                              logical_xor, not_equal, reciprocal, round, sign, trunc)
from .ops.index import argwhere, gather, index_select, masked_select, nonzero, scatter, scatter_add
from .ops.linalg import bmm, einsum, ger, outer
from .ops.reduce import cumprod, cumsum, norm
from .ops.shape import (diag, diag_embed, diagonal, flip, fliplr, flipud, moveaxis, movedim, narrow,
                        repeat_interleave, roll, swapaxes, swapdims, unbind)
from .ops.sort import argsort, sort, topk
from .random import (Generator, bernoulli, default_generator, manual_seed, multinomial, normal, poisson, rand,
                     rand_like, randint, randint_like, randn, randn_like, randperm)
from .serialization import load, save
from .tensor import (BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor,
                     LongTensor, ShortTensor, Tensor, is_complex, is_floating_point, is_tensor)
from . import low_precision  # noqa: F401 - float16/bfloat16 ops computed in float32, rounded once
from .backends.cuda import get_float32_matmul_precision, set_float32_matmul_precision
from .compiler import compile  # noqa: A004 - PyTorch's name shadows the builtin in this namespace

# subpackages that build on the names above
from . import (accelerator, amp, autograd, backends, compiler, cuda, linalg, masked, nn, optim, serialization,  # noqa: E402
               utils)
from .amp import autocast, is_autocast_enabled  # noqa: E402

# the libraries real programs import (issue 28): legacy names, stand-ins for the CPU, sparse tensors, layouts
from .tensor import set_default_tensor_type  # noqa: E402
from .layouts import layout, strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc  # noqa: E402
from . import hub, multiprocessing  # noqa: E402
from . import sparse  # noqa: E402
from .sparse import spmm  # noqa: E402
from .sparse.coo import sparse_coo_tensor  # noqa: E402
from .sparse.compressed import (sparse_bsc_tensor, sparse_bsr_tensor, sparse_compressed_tensor,  # noqa: E402
                                sparse_csc_tensor, sparse_csr_tensor)
from .cuda.runtime import OutOfMemoryError  # noqa: E402


def _register_einops():
    """einops (if installed) learns minigrad tensors from a backend class defined in ``_einops.py``."""
    import importlib.util
    if importlib.util.find_spec("einops") is not None:
        try:
            from . import _einops  # noqa: F401
        except ImportError:   # an einops too old (or broken) to import its backends: minigrad works without it
            pass


_register_einops()

from .amp import get_autocast_dtype, set_autocast_dtype  # noqa: E402
from . import cpu  # noqa: E402  (minigrad.cpu.amp.autocast, PyTorch's older spelling)
from . import viz  # noqa: E402
from .ops.conv import conv1d, conv2d, conv_transpose2d  # noqa: E402
from .ops.conv import conv3d, conv_tbc, conv_transpose1d, conv_transpose3d  # noqa: E402
from .ops.pool import channel_shuffle, constant_pad_nd  # noqa: E402
from .ops.finite_differences import gradient  # noqa: E402
from .ops.sampling import grid_sampler_2d, grid_sampler_3d  # noqa: E402
from . import tensor_extras  # noqa: E402,F401  (ndimension, nelement, adjoint, fill_diagonal_, ...)
from .tensor_extras import resize_as_, zero_  # noqa: E402
from .ops.activation import (celu, celu_, hardshrink, prelu, relu_, rrelu, rrelu_, selu, selu_,  # noqa: E402
                             threshold, threshold_)
from .ops.distance import cosine_similarity, pairwise_distance  # noqa: E402
from .ops.distance import cdist  # noqa: E402
from .ops.shape import as_strided, as_strided_copy, cartesian_prod, meshgrid, select  # noqa: E402
from . import testing  # noqa: E402
from .ops.products import (addbmm, addmm, addmv, addr, baddbmm, block_diag, chain_matmul, cross, dot,  # noqa: E402
                           inner, kron, mm, mv, tensordot, trace, vdot)
from .linalg_legacy import (cholesky, cholesky_inverse, cholesky_solve, det, geqrf, inverse, logdet, lu,  # noqa: E402
                            lu_solve, lu_unpack, matrix_exp, matrix_power, ormqr, pca_lowrank, pinverse, qr,
                            slogdet, svd, svd_lowrank, triangular_solve)
from .linalg_legacy import eig, lstsq, matrix_rank, solve, symeig  # noqa: E402  (removed: they raise, as PyTorch's)
from .linalg_legacy import frobenius_norm, nuclear_norm, orgqr  # noqa: E402
from .random import binomial  # noqa: E402
from .amp import GradScaler  # noqa: E402  (torch.GradScaler is torch.amp.GradScaler)
from .amp import (autocast_decrement_nesting, autocast_increment_nesting, clear_autocast_cache,  # noqa: E402
                  get_autocast_cpu_dtype, get_autocast_gpu_dtype, is_autocast_cache_enabled, is_autocast_cpu_enabled,
                  set_autocast_cache_enabled, set_autocast_cpu_dtype, set_autocast_cpu_enabled, set_autocast_enabled,
                  set_autocast_gpu_dtype)
from . import fft  # noqa: E402
from . import special  # noqa: E402
from . import signal  # noqa: E402
from .signal.windows import (bartlett_window, blackman_window, hamming_window, hann_window,  # noqa: E402
                             kaiser_window)
from .ops.special import erfc, erfinv, exp2, i0, igamma, igammac, logit, sinc, xlogy  # noqa: E402
from .ops.spectral import istft, stft  # noqa: E402
from .ops.gamma import digamma, lgamma, mvlgamma, polygamma  # noqa: E402
from . import distributions  # noqa: E402
from .ops.trig import *  # noqa: E402,F401,F403 - the names in trig.__all__
from .ops.elementwise_more import *  # noqa: E402,F401,F403
from .ops.floats import *  # noqa: E402,F401,F403
from .ops.division import *  # noqa: E402,F401,F403
from .ops.bitwise import *  # noqa: E402,F401,F403
from .ops.order_stats import *  # noqa: E402,F401,F403
from .ops.cumulative import *  # noqa: E402,F401,F403
from .ops.reduce_more import *  # noqa: E402,F401,F403

from .ops.norm.weightnorm import _weight_norm, norm_except_dim  # noqa: E402
from .ops.norm.native import _native_batch_norm_legit, native_batch_norm, native_group_norm, native_layer_norm  # noqa: E402,F401
from .ops.norm.native import batch_norm_update_stats  # noqa: E402,F401
# indexing, shape, creation and counting (the op-database work)
from .ops.shape_more import (alias_copy, atleast_1d, atleast_2d, atleast_3d, broadcast_shapes,  # noqa: E402
                             broadcast_tensors, broadcast_to, column_stack, combinations, diagflat, diagonal_copy,
                             dsplit, dstack, expand_copy, hsplit, hstack, narrow_copy, permute_copy, ravel,
                             resolve_neg, rot90, row_stack, split_with_sizes, split_with_sizes_copy, squeeze_copy,
                             t_copy, tensor_split, tile, transpose_copy, unbind_copy, unflatten, unfold_copy,
                             unsafe_chunk, unsafe_split, unsqueeze_copy, view_copy, vsplit, vstack)
from .ops.index_more import (as_strided_scatter, diagonal_scatter, index_add, index_copy, index_fill,  # noqa: E402
                             index_put, masked_scatter, put, select_scatter, slice_scatter, take, take_along_dim)
from .ops.scatter_reduce import index_reduce, scatter_reduce  # noqa: E402
from .ops.counting import (bincount, bucketize, histc, histogram, histogramdd, isin, nonzero_static,  # noqa: E402
                           searchsorted, unique, unique_consecutive)
from .creation_more import (empty_permuted, empty_strided, fill, scalar_tensor, tril_indices,  # noqa: E402
                            triu_indices, unravel_index)
from .ops.index_more import _unsafe_masked_index, _unsafe_masked_index_put_accumulate  # noqa: E402
from .ops.shape_more import _chunk_cat  # noqa: E402

# dtypes, their limits and promotion; shapes; layouts; constants (PyTorch's names)
from .dtypes import bfloat16  # noqa: E402
from numpy import dtype  # noqa: E402  (torch.dtype: minigrad's dtypes are NumPy's, mg.float32 among them)
from .dtypes import (can_cast, finfo, iinfo, int, int8, int16, promote_types,  # noqa: E402,A004
                     result_type, short, uint8)
from .dtypes import (float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu,  # noqa: E402
                     uint16, uint32, uint64)
from .size import Size  # noqa: E402
from .ops.layout import layout, strided  # noqa: E402
from .tensor import is_nonzero  # noqa: E402
from .random import get_rng_state, initial_seed, seed, set_rng_state  # noqa: E402
from .tensor import set_printoptions  # noqa: E402
from .switches import *  # noqa: E402,F401,F403 - deterministic algorithms, anomaly, warn_always, typename, ...
from math import e, inf, nan, pi  # noqa: E402
from .ops.torch_functional import *  # noqa: E402,F401,F403
from .ops.torch_misc import *  # noqa: E402,F401,F403
from . import func  # noqa: E402  (functional_call)
from . import jit, profiler  # noqa: E402
from .func import vmap  # noqa: E402  (torch.vmap, as torch.func.vmap)
from .utils.dlpack import from_dlpack, to_dlpack  # noqa: E402
from .storage import TypedStorage, UntypedStorage, is_storage  # noqa: E402  (Tensor.untyped_storage, .storage)
from .storage import (BFloat16Storage, BoolStorage, ByteStorage, CharStorage, ComplexDoubleStorage,  # noqa: E402
                      ComplexFloatStorage, DoubleStorage, FloatStorage, HalfStorage, IntStorage, LongStorage,
                      ShortStorage)
from . import types  # noqa: E402,F401  (torch.types: typing aliases)
newaxis = None

from . import torch_version, version  # noqa: E402
__version__ = torch_version.__version__   # "0.1.0" (version.py), comparing as a version
from .control_flow import *  # noqa: E402,F401,F403 - sym_int, sym_max, ..., cond, while_loop, SymInt, _assert
from . import _dynamo, _inductor, mps, xpu  # noqa: E402,F401  (stand-ins: torch.compile's config, other devices)

# out=: the tensor functions of these namespaces write their result into a given tensor, as PyTorch's (_out.py)
from . import _out  # noqa: E402
for _namespace in (globals(), vars(linalg), vars(special), vars(fft), vars(nn.functional)):
    _out.install(_namespace)
del _namespace
# axis= for dim=, keepdims= for keepdim=: the namespaces' functions take them in their out= wrapper, the rest here
from . import _numpy_names  # noqa: E402
_numpy_names.install([globals(), vars(linalg), vars(special), vars(fft)], Tensor)

# torch.library, torch.overrides, torch.futures, torch.return_types, torch.functional, torch.quasirandom
from . import futures, library, overrides, quasirandom, return_types  # noqa: E402
from . import functional  # noqa: E402  (after _out: the same objects as the top-level names)
from .futures import Future, fork, wait  # noqa: E402  (torch.Future, torch.fork, torch.wait)

_malloc.keep_freed_memory()   # freed arrays' pages serve the next arrays: no page faults (see _malloc.py)
