"""``minigrad._inductor.config``: PyTorch's defaults for the settings scripts set most often, and the
``triton`` and ``cpp`` sections. Any setting may be assigned (recorded; it changes nothing: minigrad
generates no kernels); reading one never assigned and not listed raises AttributeError, as PyTorch's."""
import types

coordinate_descent_tuning = False
coordinate_descent_check_all_directions = False
epilogue_fusion = True
max_autotune = False
max_autotune_gemm = False
freezing = False
fx_graph_cache = True
force_fuse_int_mm_with_mul = False
use_mixed_mm = True
shape_padding = True
triton = types.SimpleNamespace(unique_kernel_names=True, cudagraphs=False, cudagraph_trees=True)
cpp = types.SimpleNamespace(threads=-1, simdlen=None, enable_kernel_profile=False)


def __getattr__(name):
    raise AttributeError(f"minigrad._inductor.config.{name} does not exist")
