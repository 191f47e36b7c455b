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

Accuracy: sums and means accumulate in float64 and are rounded once to the compute dtype, and
centering subtracts the float64 mean as hi + lo parts (numpy_common.py), so float32 rows of 65,536
elements stay within 1e-5 of a float64 computation even when |mean| >> std.
"""
from .numpy_channels import (batch_norm_backward, batch_norm_forward, batch_norm_stats,  # noqa: F401
                             group_norm_backward, group_norm_forward)
from .numpy_rows import layer_norm_backward, layer_norm_forward, rms_norm_backward, rms_norm_forward  # noqa: F401
