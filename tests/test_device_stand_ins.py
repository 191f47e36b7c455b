"""The names device-agnostic and compile-tuned scripts touch, against PyTorch's CPU build: ``torch.xpu`` and
``torch.mps`` (what a build without those devices returns, or the exception type it raises), ``Tensor.xpu`` and
``Module.xpu/mtia/ipu``, ``torch._assert``, the symbolic-number classes, ``amp.is_autocast_available``, the
``autograd`` names of the profiler and anomaly modules, ``torch._dynamo`` and
``torch._inductor.config`` (PyTorch's defaults for the settings listed; setting them changes nothing), and the
older import paths ``torch.utils.model_zoo`` and ``torch.utils.data._utils.collate``. PyTorch's side is live or
recorded."""
import importlib
from collections import OrderedDict

import pytest

import minigrad as mg
from minigrad.device import DeviceUnavailableError

from .mirror import torch_result

XPU_CALLS = ["is_available()", "device_count()", "empty_cache()", "synchronize()", "manual_seed(0)",
             "manual_seed_all(0)", "seed()", "seed_all()", "current_device()", "is_initialized()", "init()",
             "memory_allocated()", "max_memory_allocated()", "memory_reserved()", "max_memory_reserved()",
             "memory_stats()", "reset_peak_memory_stats()", "get_device_name()", "get_device_properties()",
             "get_device_capability()", "is_bf16_supported()", "set_device(0)", "initial_seed()", "get_rng_state()",
             "mem_get_info()", "current_stream()", "get_arch_list()", "is_tf32_supported()"]
MPS_CALLS = ["is_available()", "device_count()", "empty_cache()", "synchronize()", "manual_seed(0)", "seed()",
             "current_allocated_memory()", "driver_allocated_memory()", "recommended_max_memory()",
             "get_rng_state()", "set_per_process_memory_fraction(0.5)"]
OTHER_CALLS = ["zeros(2).xpu()", "zeros(2).mtia()", "nn.Linear(2, 2).xpu()", "nn.Linear(2, 2).mtia()",
               "nn.Linear(2, 2).ipu()", "_assert(True, 'unused')", "_assert(1 > 2, 'one is not above two')",
               "_assert(tensor(0), 'a zero tensor')", "_assert(tensor([1, 1]), 'two elements')",
               "isinstance(3, SymInt)", "isinstance(2.5, SymFloat)", "isinstance(True, SymBool)",
               "_dynamo.reset()", "_dynamo.is_compiling()", "_dynamo.mark_dynamic(zeros(3), 0)",
               "_dynamo.maybe_mark_dynamic(zeros(3), 0)", "_dynamo.mark_static(zeros(3), 0)",
               "_dynamo.disable(lambda x: x + 1)(3)", "_dynamo.graph_break()",
               # a new function: allow_in_graph(len) would change how PyTorch's dynamo treats len for later tests
               "(lambda f: _dynamo.allow_in_graph(f) is f)(lambda x: x)",
               "backends.mkl.is_available() in (True, False)", "backends.openmp.is_available() in (True, False)",
               "backends.mkldnn.enabled", "_dynamo.config.no_such_setting",
               "amp.is_autocast_available('cpu')", "amp.is_autocast_available('cuda')",
               "amp.is_autocast_available('meta')", "amp.is_autocast_available('mps')",
               "amp.is_autocast_available('tpu')", "autograd.kineto_available()", "profiler.kineto_available()",
               "autograd.is_view_replay_enabled()", "autograd.ProfilerActivity is profiler.ProfilerActivity",
               "autograd.anomaly_mode.detect_anomaly is autograd.detect_anomaly",
               "autograd.profiler_util.EventList is autograd.profiler.EventList"]
DYNAMO_SETTINGS = ["suppress_errors", "verbose", "cache_size_limit", "recompile_limit", "accumulated_cache_size_limit",
                   "accumulated_recompile_limit", "capture_scalar_outputs", "capture_dynamic_output_shape_ops",
                   "automatic_dynamic_shapes", "assume_static_by_default", "optimize_ddp"]
INDUCTOR_SETTINGS = ["coordinate_descent_tuning", "coordinate_descent_check_all_directions", "epilogue_fusion",
                     "max_autotune", "max_autotune_gemm", "freezing", "fx_graph_cache", "force_fuse_int_mm_with_mul",
                     "use_mixed_mm", "shape_padding", "triton.unique_kernel_names", "triton.cudagraphs",
                     "triton.cudagraph_trees", "cpp.threads", "cpp.simdlen", "cpp.enable_kernel_profile"]


def plain(value):
    """A result as comparable data (OrderedDicts as dicts), in a list: a record cannot hold a bare None."""
    return [dict(value) if isinstance(value, OrderedDict) else value]


def check(namespace_call):
    """Run ``torch.<call>`` and ``minigrad.<call>``: the same value, or an exception of PyTorch's type."""
    theirs = torch_result(lambda torch: _run(torch, namespace_call), "device_stand_in", namespace_call)
    if hasattr(theirs, "type") and hasattr(theirs, "message"):
        with pytest.raises(theirs.type):
            _run(mg, namespace_call)
        return
    assert _run(mg, namespace_call) == theirs


def _run(lib, call):
    if lib is not mg:
        importlib.import_module("torch._dynamo")
    namespace = {name: getattr(lib, name) for name in dir(lib) if not name.startswith("__")}
    namespace["_assert"], namespace["_dynamo"] = lib._assert, lib._dynamo
    return plain(eval(call, namespace))   # noqa: S307 - our own literal calls


@pytest.mark.parametrize("call", XPU_CALLS)
def test_xpu_answers_as_pytorch_without_xpu(call):
    check(f"xpu.{call}")


@pytest.mark.parametrize("call", MPS_CALLS)
def test_mps_answers_as_pytorch_without_mps(call):
    check(f"mps.{call}")


@pytest.mark.parametrize("call", OTHER_CALLS)
def test_device_methods_assert_symbolic_types_and_dynamo_functions(call):
    check(call)


@pytest.mark.parametrize("name", DYNAMO_SETTINGS)
def test_dynamo_config_defaults(name):
    check(f"_dynamo.config.{name}")


@pytest.mark.parametrize("name", INDUCTOR_SETTINGS)
def test_inductor_config_defaults(name):
    def setting(lib):
        config = importlib.import_module(f"{lib.__name__}._inductor.config")
        return plain(eval(f"config.{name}", {"config": config}))   # noqa: S307 - our own literal names
    assert setting(mg) == torch_result(setting, "inductor_setting", name)


def test_settings_can_be_set_and_read_back():
    import minigrad._dynamo.config as config
    before = config.suppress_errors
    try:
        mg._dynamo.config.suppress_errors = True
        assert config.suppress_errors is True
        mg._inductor.config.triton.cudagraphs = True
        assert mg._inductor.config.triton.cudagraphs is True
    finally:
        config.suppress_errors = before
        mg._inductor.config.triton.cudagraphs = False


def test_what_minigrad_answers_of_its_own():
    # oneDNN is not used by minigrad (PyTorch's CPU wheel has it: True there)
    assert mg.backends.mkldnn.is_available() is False
    assert mg.backends.mkl.is_available() is mg.has_mkl and mg.backends.openmp.is_available() is mg.has_openmp
    assert mg._dynamo.list_backends() == []
    with pytest.raises(TypeError, match="traced by a compiler"):
        mg.SymInt(3)
    with pytest.raises(DeviceUnavailableError, match="xpu"):
        mg.zeros(2).xpu(1)


def test_older_import_paths():
    from minigrad.utils.data._utils.collate import default_collate, default_convert
    from minigrad.utils.model_zoo import load_url
    assert default_collate is mg.utils.data.default_collate and default_convert is mg.utils.data.default_convert
    assert load_url is mg.hub.load_state_dict_from_url
