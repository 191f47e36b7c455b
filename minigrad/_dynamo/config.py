"""``minigrad._dynamo.config``: PyTorch's defaults for the settings scripts set most often. Any setting may be
assigned (it is recorded, and changes nothing: minigrad compiles nothing); reading a setting never assigned
and not listed here raises AttributeError, as PyTorch's config does for an unknown name."""

suppress_errors = False
verbose = False
cache_size_limit = 8
recompile_limit = 8
accumulated_cache_size_limit = 256
accumulated_recompile_limit = 256
capture_scalar_outputs = False
capture_dynamic_output_shape_ops = False
automatic_dynamic_shapes = True
assume_static_by_default = True
optimize_ddp = True


def __getattr__(name):
    raise AttributeError(f"minigrad._dynamo.config.{name} does not exist")
