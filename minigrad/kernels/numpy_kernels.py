"""NumPy reference kernels for the normalization layers: the executable specification.

Every function here has a numba twin with the same name and signature in
``numba_kernels.py``; ``minigrad.kernels.backend()`` returns the active module.

Conventions (the callers in ``minigrad/ops/norm`` guarantee them):
* arrays are C-contiguous and already in the *compute* dtype (float32 or float64;
  float16 inputs are upcast to float32 by the caller, which casts results back once);
* ``weight``/``bias`` are None or 1-D arrays in the compute dtype;
* statistics are 1-D per row (row family) or (N, G) / (C,) (channel family);
* ``need_dx``/``need_dw``/``need_db`` say which gradients to compute; the others are None.

Row family, x of shape (R, D): RMSNorm and LayerNorm over the trailing dims.
Channel family, x of shape (N, C, S) with S = prod(spatial) (1 for (N, C) input):
GroupNorm (InstanceNorm is GroupNorm with G = C) and BatchNorm.

Accuracy: the reference computes a float32 call in float64 and rounds each result once, so
float32 rows of 65,536 elements (even with mean 1e4 and std 1e-2) stay within 1e-5 of a
float64 computation; the numba kernels get the same by accumulating in float64.
"""
import functools

import numpy as np

from . import numpy_channels, numpy_rows


def _float64_inside(kernel):
    """Run ``kernel`` in float64 when its arrays are float32, rounding every array result once."""
    @functools.wraps(kernel)
    def run(*args):
        if not any(isinstance(a, np.ndarray) and a.dtype == np.float32 for a in args):
            return kernel(*args)
        out = kernel(*(a.astype(np.float64) if isinstance(a, np.ndarray) else a for a in args))
        if isinstance(out, np.ndarray):
            return out.astype(np.float32)
        return tuple(None if o is None else o.astype(np.float32) for o in out)
    return run


rms_norm_forward = _float64_inside(numpy_rows.rms_norm_forward)
rms_norm_backward = _float64_inside(numpy_rows.rms_norm_backward)
layer_norm_forward = _float64_inside(numpy_rows.layer_norm_forward)
layer_norm_backward = _float64_inside(numpy_rows.layer_norm_backward)
group_norm_forward = _float64_inside(numpy_channels.group_norm_forward)
group_norm_backward = _float64_inside(numpy_channels.group_norm_backward)
batch_norm_stats = _float64_inside(numpy_channels.batch_norm_stats)
batch_norm_forward = _float64_inside(numpy_channels.batch_norm_forward)
batch_norm_backward = _float64_inside(numpy_channels.batch_norm_backward)
