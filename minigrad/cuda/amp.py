"""``minigrad.cuda.amp``: PyTorch's older spelling of ``minigrad.amp`` for CUDA; both disable themselves
(with a warning) since minigrad has no CUDA, as PyTorch does on a machine without it."""
from .. import amp as _amp


def autocast(enabled=True, dtype=None, cache_enabled=True):
    return _amp.autocast("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


def GradScaler(init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,  # noqa: N802
               enabled=True):
    return _amp.GradScaler("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """PyTorch's deprecated spelling of ``minigrad.amp.custom_fwd(..., device_type='cuda')``."""
    import warnings
    warnings.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return _amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    """PyTorch's deprecated spelling of ``minigrad.amp.custom_bwd(..., device_type='cuda')``."""
    import warnings
    warnings.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return _amp.custom_bwd(bwd, device_type="cuda")
