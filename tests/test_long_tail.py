"""The long tail of names public PyTorch programs use (issue 28, item 7), each mirrored against PyTorch:
comparisons with non-tensors, keyword forms, einsum's dtype rule, ``set_default_tensor_type``, the
``is_<backend>`` flags and ``layout``, ``Variable``, ``hub``, ``DataParallel``, ``multiprocessing`` and the
``cuda`` functions as PyTorch's CPU-only build answers them."""
import warnings

import numpy as np
import pytest

import minigrad as mg
from tests.mirror import torch_or_skip


def _both(fn):
    """``fn(lib)`` in minigrad and in PyTorch: (value or exception type) for each."""
    torch = torch_or_skip()
    results = []
    for lib in (mg, torch):
        try:
            results.append(fn(lib))
        except Exception as e:  # noqa: BLE001 - the exception's type is the result compared
            results.append(type(e))
    return results


def _plain(value):
    """A value comparable across the libraries: tensors as lists, sizes as tuples, dtypes by name."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist") and hasattr(value, "dtype"):
        return (value.tolist(), str(value.dtype).rpartition(".")[2])
    if type(value).__name__ in ("dtype", "Size"):
        return str(value).rpartition(".")[2] if type(value).__name__ == "dtype" else tuple(value)
    return value


# --------------------------------------------------------------------------- == and != with non-tensors
@pytest.mark.parametrize("other", [None, "a", "sum-method", object, [1.0, 2.0], (1.0,), {"a": 1}])
def test_comparison_with_a_non_tensor_is_false_as_in_torch(other):
    def compare(lib):
        t = lib.tensor([1.0, 2.0])
        value = t.sum if other == "sum-method" else other() if other is object else other
        return (t == value, t != value, t.__eq__(value) is NotImplemented)
    ours, theirs = _both(compare)
    assert ours == theirs == (False, True, True)


@pytest.mark.parametrize("other", [1.0, 1, True, 1j, np.float64(1.0), "array"])
def test_comparison_with_numbers_and_arrays_stays_elementwise(other):
    def compare(lib):
        t = lib.tensor([1.0, 2.0])
        if isinstance(other, str):   # (PyTorch's ``tensor != ndarray`` is a plain True: a quirk not copied)
            return _plain(t == np.array([1.0, 3.0]))
        return [_plain(t == other), _plain(t != other)]
    ours, theirs = _both(compare)
    assert ours == theirs


def test_ordering_with_none_still_raises_type_error():
    ours, theirs = _both(lambda lib: lib.tensor([1.0]) < None)
    assert ours is theirs is TypeError


# --------------------------------------------------------------------------- keyword forms
KEYWORD_FORMS = {
    "empty(size=)": lambda L: L.empty(size=(2, 3)).shape,
    "zeros(size=)": lambda L: L.zeros(size=(2, 3)).tolist(),
    "ones(size=)": lambda L: L.ones(size=[2], dtype=L.float64).tolist(),
    "rand(size=)": lambda L: L.rand(size=(2,)).shape,
    "randn(size=)": lambda L: L.randn(size=(2, 1)).shape,
    "arange(end=)": lambda L: L.arange(end=4).tolist(),
    "arange(start=, end=)": lambda L: L.arange(start=1, end=4).tolist(),
    "Tensor.split(split_size=)": lambda L: [p.tolist() for p in L.arange(5).split(split_size=2)],
    "Tensor.split(split_size=, dim=)": lambda L: [p.shape for p in L.ones(2, 4).split(split_size=3, dim=1)],
    "split(split_size_or_sections=)": lambda L: [p.tolist() for p in L.split(L.arange(4),
                                                                           split_size_or_sections=[1, 3])],
    "Tensor.view(size=)": lambda L: L.arange(6).view(size=(2, 3)).tolist(),
    "Tensor.reshape(shape=)": lambda L: L.arange(6).reshape(shape=(3, 2)).tolist(),
    "reshape(input=, shape=)": lambda L: L.reshape(input=L.arange(6), shape=(2, 3)).tolist(),
    "Tensor.permute(dims=)": lambda L: L.arange(6).reshape(2, 3).permute(dims=(1, 0)).tolist(),
    "permute(input=, dims=)": lambda L: L.permute(input=L.arange(6).reshape(2, 3), dims=(1, 0)).tolist(),
    "Tensor.repeat(repeats=)": lambda L: L.arange(2).repeat(repeats=(2,)).tolist(),
    "Tensor.expand(size=)": lambda L: L.arange(2).reshape(1, 2).expand(size=(3, 2)).tolist(),
    "Tensor.new_zeros(size=)": lambda L: L.ones(2, dtype=L.float64).new_zeros(size=(3,)).tolist(),
    "Tensor.new_ones(size=)": lambda L: L.ones(2).new_ones(size=(3,)).tolist(),
    "Tensor.new_empty(size=)": lambda L: L.ones(2).new_empty(size=(3, 1)).shape,
}


@pytest.mark.parametrize("name", KEYWORD_FORMS)
def test_keyword_form_as_torch(name):
    ours, theirs = _both(KEYWORD_FORMS[name])
    assert not isinstance(ours, type), f"minigrad raised {ours.__name__}"
    assert _plain(ours) == _plain(theirs)


@pytest.mark.parametrize("call", [lambda L: L.rand(2, size=(3,)), lambda L: L.zeros(2, size=(3,)),
                                  lambda L: L.arange(6).reshape(2, 3, shape=(6,)),
                                  lambda L: L.ones(4).view(2, 2, size=(4,))])
def test_a_size_given_twice_is_a_type_error(call):
    ours, theirs = _both(call)
    assert ours is theirs is TypeError


# --------------------------------------------------------------------------- einsum's dtype rule
EINSUM_CASES = [
    ("ij,j->i", ["float64", "float32"]),        # a contraction: bmm, needs equal dtypes
    ("ij,ij->ij", ["float64", "float32"]),      # elementwise: promoted
    ("ij,ij->ij", ["float32", "float64"]),
    ("ij,jk->ijk", ["float64", "float32"]),     # an outer product: promoted
    ("ij,k->", ["float64", "float32"]),         # each operand summed alone, then a product
    ("ij,j->j", ["float64", "float32"]),
    ("ij,j,j->i", ["float64", "float64", "float32"]),   # the last pair contracts j: refused
    ("ij,j,j->i", ["float64", "float32", "float64"]),   # j is still needed: promoted, then contracted in float64
    ("i,i->i", ["float32", "int64"]),
    ("i,i->", ["float32", "int64"]),
    ("...i,...i->...", ["float64", "float32"]),
    ("bi,bi->b", ["float32", "float64"]),
]


@pytest.mark.parametrize("equation,dtypes", EINSUM_CASES)
def test_einsum_mixed_dtypes_as_torch(equation, dtypes):
    torch = torch_or_skip()
    rng = np.random.default_rng(0)
    letters = equation.split("->")[0].split(",")
    sizes = {"i": 2, "j": 3, "k": 4, "b": 2, ".": 2}
    arrays = [(rng.standard_normal([sizes[c] for c in s.replace("...", ".")]) * 3).astype(d)
              for s, d in zip(letters, dtypes)]
    results = []
    for lib in (mg, torch):
        operands = [lib.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
        try:
            out = lib.einsum(equation, *operands)
        except RuntimeError as e:
            results.append(str(e))
            continue
        upstream = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)).astype(arrays[0].dtype)
                              ).to(out.dtype)
        out.backward(upstream)
        results.append((out.detach().numpy(), str(out.dtype).rpartition(".")[2],
                        [o.grad.numpy() for o in operands if o.requires_grad],
                        [str(o.grad.dtype).rpartition(".")[2] for o in operands if o.requires_grad]))
    ours, theirs = results
    if isinstance(theirs, str):
        assert ours == theirs        # "expected scalar type Double but found Float"
        return
    assert ours[1] == theirs[1] and ours[3] == theirs[3]
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    for a, b in zip(ours[2], theirs[2]):
        np.testing.assert_allclose(a, b, rtol=1e-6)


# --------------------------------------------------------------------------- set_default_tensor_type
@pytest.mark.parametrize("kind", ["DoubleTensor", "torch.DoubleTensor", "FloatTensor", "LongTensor", "float64",
                                  "torch.cuda.FloatTensor"])
def test_set_default_tensor_type_as_torch(kind):
    def run(lib):
        before = lib.get_default_dtype()
        arg = getattr(lib, kind) if not kind.startswith("torch.") else kind
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch warns once per process (checked below for minigrad)
            try:
                lib.set_default_tensor_type(arg)
                return str(lib.tensor([1.0]).dtype).rpartition(".")[2]
            except TypeError as e:
                return "TypeError", str(e).replace("minigrad", "torch")
            finally:
                lib.set_default_dtype(before)
    ours, theirs = _both(run)
    assert ours == theirs


def test_set_default_tensor_type_warns_as_torch_deprecated():
    with pytest.warns(UserWarning, match=r"set_default_tensor_type\(\) is deprecated as of PyTorch 2.1"):
        mg.set_default_tensor_type(mg.FloatTensor)


# --------------------------------------------------------------------------- backend flags and layout
FLAGS = ["is_xpu", "is_mps", "is_xla", "is_ipu", "is_maia", "is_mtia", "is_vulkan", "is_mkldnn", "is_quantized",
         "is_sparse", "is_sparse_csr", "is_nested", "is_meta", "is_cuda", "is_cpu"]
METHODS = ["is_pinned", "is_shared", "is_distributed", "is_inference", "is_neg"]


def test_backend_flags_and_methods_as_torch():
    ours, theirs = _both(lambda L: [getattr(L.ones(2), n) for n in FLAGS] +
                         [getattr(L.ones(2), n)() for n in METHODS] +
                         [L.ones(2).is_same_size(L.ones(2)), L.ones(1).is_nonzero(), L.zeros(1).is_nonzero()])
    assert ours == theirs


def test_layout_names_as_torch():
    torch = torch_or_skip()
    for name in ("strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"):
        assert repr(getattr(mg, name)).replace("minigrad", "torch") == repr(getattr(torch, name))
    assert mg.ones(2).layout is mg.strided and isinstance(mg.strided, mg.layout)
    assert isinstance(mg.sparse_coo, mg.layout) and mg.sparse_coo_tensor([[0]], [1.0]).layout is mg.sparse_coo


# --------------------------------------------------------------------------- Variable
def test_variable_returns_a_detached_tensor_as_torch():
    def run(lib):
        x = lib.tensor([1.0, 2.0])
        y = (x * 2).requires_grad_() * 3
        v = lib.autograd.Variable(x, requires_grad=True)
        w = lib.autograd.Variable(y)
        return [type(v) is lib.Tensor, v.requires_grad, v.is_leaf, v is x, w.grad_fn is None, w.requires_grad,
                isinstance(x, lib.autograd.Variable), lib.autograd.Variable().tolist(), v.tolist()]
    ours, theirs = _both(run)
    assert ours == theirs


def test_variable_shares_memory_and_refuses_non_tensors():
    x = mg.tensor([1.0, 2.0])
    v = mg.autograd.Variable(x)
    v.data.add_(1)
    assert x.tolist() == [2.0, 3.0]
    ours, theirs = _both(lambda L: L.autograd.Variable([1.0]))
    assert ours is theirs is TypeError
    with pytest.warns(UserWarning, match="volatile was removed"):
        mg.autograd.Variable(x, volatile=True)


# --------------------------------------------------------------------------- DataParallel, hub, multiprocessing
def test_data_parallel_is_a_pass_through_as_torch_on_cpu():
    torch = torch_or_skip()
    weight = np.random.default_rng(1).standard_normal((2, 3))
    x = np.random.default_rng(2).standard_normal((4, 3))
    results = []
    for lib in (mg, torch):
        model = lib.nn.Linear(3, 2, dtype=lib.float64)
        with lib.no_grad():
            model.weight.copy_(lib.tensor(weight))
            model.bias.zero_()
        wrapped = lib.nn.DataParallel(model, device_ids=[0, 1], output_device=0)
        out = wrapped(lib.tensor(x))
        out.backward(lib.ones_like(out))
        results.append((wrapped.module is model, wrapped.device_ids, list(wrapped.state_dict()),
                        out.detach().numpy(), model.weight.grad.numpy()))
    (a, b, c, d, e), (a2, b2, c2, d2, e2) = results
    assert (a, b, c) == (a2, b2, c2)
    np.testing.assert_allclose(d, d2, rtol=1e-12)
    np.testing.assert_allclose(e, e2, rtol=1e-12)
    ours, theirs = _both(lambda L: L.nn.parallel.data_parallel(L.nn.Linear(3, 2), L.ones(1, 3)))
    assert ours is theirs is RuntimeError


def test_hub_refuses_to_load_with_a_clear_error():
    with pytest.raises(NotImplementedError, match="PyTorch Hub models are PyTorch code"):
        mg.hub.load("pytorch/vision", "resnet18", pretrained=True)
    with pytest.raises(NotImplementedError, match="load_state_dict_from_url"):
        mg.hub.load_state_dict_from_url("https://example.com/w.pth")
    before = mg.hub.get_dir()
    try:
        mg.hub.set_dir("/tmp/somewhere")
        assert mg.hub.get_dir() == "/tmp/somewhere"
    finally:
        mg.hub._hub_dir = None
    assert mg.hub.get_dir() == before


def test_multiprocessing_reexports_pythons_as_torch():
    torch_or_skip()
    import multiprocessing
    import torch.multiprocessing as tmp
    for name in ("Process", "Queue", "Pool", "get_context", "cpu_count", "set_start_method", "Manager"):
        assert getattr(mg.multiprocessing, name) is getattr(multiprocessing, name)
        assert hasattr(tmp, name)
    assert mg.multiprocessing.get_sharing_strategy() == tmp.get_sharing_strategy()
    assert mg.multiprocessing.get_all_sharing_strategies() == tmp.get_all_sharing_strategies()


def _child(rank, code):
    raise SystemExit(code if rank == 1 else 0)


def test_multiprocessing_spawn_runs_and_reports_a_failed_process():
    assert mg.multiprocessing.spawn(_child, args=(0,), nprocs=2, start_method="fork") is None
    with pytest.raises(mg.multiprocessing.ProcessExitedException, match="process 1 terminated with exit code 3"):
        mg.multiprocessing.spawn(_child, args=(3,), nprocs=2, start_method="fork")


# --------------------------------------------------------------------------- cuda, as PyTorch's CPU build
CUDA_CALLS = {
    "is_available": (), "device_count": (), "current_device": (), "memory_allocated": (), "memory_allocated(0)": (0,),
    "memory_allocated('cuda:0')": ("cuda:0",), "max_memory_allocated": (), "memory_reserved": (),
    "max_memory_reserved": (), "memory_stats": (), "memory_summary": (), "reset_peak_memory_stats": (),
    "reset_peak_memory_stats(0)": (0,), "reset_accumulated_memory_stats": (), "memory_snapshot": (),
    "empty_cache": (), "synchronize": (), "synchronize(0)": (0,), "get_device_name": (), "get_device_name(0)": (0,),
    "get_device_properties": (0,), "get_device_capability": (), "manual_seed": (1,), "manual_seed_all": (1,),
    "seed": (), "seed_all": (), "initial_seed": (), "is_initialized": (), "init": (), "mem_get_info": (),
    "is_bf16_supported": (), "get_arch_list": (), "ipc_collect": (), "current_stream": (), "default_stream": (),
    "get_rng_state": (), "get_rng_state_all": (), "get_sync_debug_mode": (), "_is_compiled": (),
    "is_tf32_supported": (), "set_device": (0,), "set_device(-1)": (-1,), "set_device('cpu')": ("cpu",),
    "Event": (), "Stream": (), "set_per_process_memory_fraction": (0.5,), "current_blas_handle": (),
    "get_gencode_flags": (), "FloatTensor": (2,), "LongTensor([1])": ([1],), "BoolTensor": (2,),
}


@pytest.mark.parametrize("call", CUDA_CALLS)
def test_cuda_function_answers_as_torch_cpu_build(call):
    name = call.partition("(")[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        ours, theirs = _both(lambda L: getattr(L.cuda, name)(*CUDA_CALLS[call]))
    if isinstance(theirs, type):
        assert isinstance(ours, type) and issubclass(ours, theirs), (ours, theirs)
    else:
        assert ours == theirs and type(ours) is type(theirs)


@pytest.mark.parametrize("name", ["memory_cached", "max_memory_cached", "reset_max_memory_allocated",
                                  "reset_max_memory_cached"])
def test_cuda_deprecated_memory_names_warn_as_torch(name):
    def run(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = getattr(lib.cuda, name)()
            except AttributeError:
                result = AttributeError
        return result, [(w.category, str(w.message)) for w in caught]
    ours, theirs = _both(run)
    assert ours == theirs


def test_cuda_device_context_as_torch():
    def run(lib):
        with lib.cuda.device(-1):
            pass
        with lib.cuda.device(0):
            pass
    ours, theirs = _both(run)
    assert ours is theirs is RuntimeError


# --------------------------------------------------------------------------- small legacy names
def test_autograd_inference_mode_is_torch_s():
    ours, theirs = _both(lambda L: L.autograd.inference_mode is L.inference_mode)
    assert ours is theirs is True


def test_legacy_constructor_takes_a_range_and_parameter_module_exists_as_torch():
    ours, theirs = _both(lambda L: [_plain(L.LongTensor(range(2, 5))), _plain(L.Tensor(range(3))),
                                    L.nn.parameter.Parameter is L.nn.Parameter])
    assert ours == theirs


def test_cuda_context_managers_nvtx_and_legacy_types_as_torch():
    def run(lib):
        with lib.cuda.stream(None):
            pass
        with lib.cuda.device_of(lib.ones(1)):
            pass
        answers = [isinstance(lib.ones(1), lib.cuda.FloatTensor), issubclass(lib.cuda.OutOfMemoryError, RuntimeError),
                   issubclass(lib.OutOfMemoryError, RuntimeError), lib.cuda.OutOfMemoryError is lib.OutOfMemoryError]
        for call in (lambda: lib.cuda.nvtx.range_push("a"), lambda: lib.cuda.nvtx.range_pop(),
                     lambda: lib.cuda.nvtx.mark("a"), lambda: lib.cuda.nvtx.range("a").__enter__()):
            try:
                call()
            except RuntimeError as e:
                answers.append(str(e))
        return answers
    ours, theirs = _both(run)
    assert ours == theirs


# --------------------------------------------------------------------------- amp.custom_fwd / custom_bwd
def _scaled_square(lib, decorate_fwd, decorate_bwd):
    class ScaledSquare(lib.autograd.Function):
        @staticmethod
        @decorate_fwd
        def forward(ctx, x, scale):
            ctx.save_for_backward(x)
            ctx.scale = scale
            return x * x * scale

        @staticmethod
        @decorate_bwd
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 2 * x * ctx.scale, None
    return ScaledSquare


@pytest.mark.parametrize("spelling", ["amp", "cuda.amp", "amp cpu cast", "amp cpu cast in autocast"])
def test_custom_fwd_and_bwd_decorate_a_function_as_torch(spelling):
    from tests.mirror import assert_mirror, run_both

    def f(L, x):
        if spelling == "amp":
            fwd, bwd = L.amp.custom_fwd(device_type="cuda"), L.amp.custom_bwd(device_type="cuda")
        elif spelling == "cuda.amp":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                fwd, bwd = L.cuda.amp.custom_fwd(cast_inputs=L.float64), L.cuda.amp.custom_bwd
        else:   # outside an autocast region cast_inputs changes nothing; inside, float64 inputs become float32
            fwd, bwd = L.amp.custom_fwd(device_type="cpu", cast_inputs=L.float32), L.amp.custom_bwd(device_type="cpu")
            if spelling.endswith("in autocast"):
                with L.autocast("cpu"):
                    return _scaled_square(L, fwd, bwd).apply(x, 3.0)
        return _scaled_square(L, fwd, bwd).apply(x, 3.0)
    x = np.random.default_rng(3).standard_normal((2, 3))
    if spelling.endswith("in autocast"):   # float16 in, cast to float32 (PyTorch leaves float64 alone)
        out = assert_mirror(*run_both(f), x.astype(np.float16), rtol=1e-3)
        assert out.dtype == mg.float32
        assert assert_mirror(*run_both(f), x).dtype == mg.float64
    else:
        assert assert_mirror(*run_both(f), x).dtype == mg.float64
    with pytest.raises(ValueError, match="device_type"):
        mg.amp.custom_fwd(device_type=0)
