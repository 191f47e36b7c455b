"""Writes docs/compatibility.md: for each PyTorch namespace programs import, which of its public names
minigrad has, which of those are stand-ins (they exist so that ported code runs, but do not do what
PyTorch's do on a GPU or in a compiler), and which are absent.

    python docs/compat_list.py > docs/compatibility.md

PyTorch's names come from the installed PyTorch (its public attributes, modules outside ``torch`` and
constants in capitals left out); minigrad's from importing it. The stand-ins are listed below, by name or
by namespace, each with what it does; a listed name minigrad lacks is an error, so the list cannot go
stale. ``tests/test_compat_list.py`` regenerates the page and compares it with the committed one.
"""
import importlib
import inspect
import sys

NAMESPACES = ["torch", "torch.Tensor", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.optim",
              "torch.optim.lr_scheduler", "torch.utils.data", "torch.linalg", "torch.fft", "torch.special",
              "torch.distributions", "torch.sparse", "torch.cuda", "torch.autograd", "torch.autograd.functional",
              "torch.multiprocessing", "torch.hub", "torch.amp", "torch.nn.utils", "torch.random",
              "torch.func", "torch.utils.checkpoint", "torch.utils.dlpack", "torch.utils.hooks", "torch.jit",
              "torch.profiler", "torch.autograd.graph", "torch.nn.attention", "torch.nn.grad", "torch.compiler",
              "torch.utils.benchmark", "torch.library", "torch.overrides", "torch.futures", "torch.return_types",
              "torch.quasirandom", "torch.functional", "torch.nn.attention.flex_attention", "torch.nn.attention.bias",
              "torch.nn.Module", "torch.nn.modules.module", "torch.xpu", "torch.mps", "torch.utils._pytree",
              "torch.serialization", "torch.utils.flop_counter", "torch.utils.module_tracker"]

# every name minigrad has in these namespaces answers as on a machine without the hardware
STAND_IN_NAMESPACES = {
    "torch.compiler": "accepted: minigrad runs everything eagerly, so each mark returns what it is given and each "
                      "query answers as outside a compiled region",
    "torch.cuda": "answers as PyTorch's CPU-only build does: 0 / False / an empty dict, or the same exception type",
    "torch.xpu": "answers as PyTorch's build without XPU does: 0 / False / an empty dict, or the same exception "
                 "type",
    "torch.mps": "answers as PyTorch's build without MPS does: False / 0, or its RuntimeError",
    "torch.hub": "get_dir/set_dir keep a directory; loading raises NotImplementedError (hub models are PyTorch "
                 "code)",
}

STAND_INS = {
    "torch.compile": "returns the model or function unchanged; options ignored",
    "torch.inference_mode": "turns recording off like no_grad; the tensors made inside are ordinary tensors",
    "torch.autocast": "'cuda' disables itself with a warning (as without CUDA); 'cpu' is PyTorch's CPU autocast "
                      "(its op lists, bfloat16 or float16)",
    "torch.device": "any device object can be made; using one other than the CPU raises",
    "torch.set_default_device": "the CPU only",
    "torch.get_default_device": "the CPU",
    "torch.set_float32_matmul_precision": "recorded; float32 products are always full precision",
    "torch.get_float32_matmul_precision": "returns what was recorded",
    "torch.set_num_threads": "numba's thread count for the calling thread",
    "torch.get_num_threads": "numba's thread count",
    "torch.multiprocessing": "Python's multiprocessing, with spawn and the sharing-strategy functions",
    "torch.Tensor.cuda": "raises: minigrad runs on the CPU only",
    "torch.Tensor.xpu": "raises: minigrad runs on the CPU only",
    "torch.Tensor.mtia": "raises: minigrad runs on the CPU only",
    "torch.SymInt": "a class for annotations and isinstance checks (False for every value): minigrad traces nothing",
    "torch.SymFloat": "as SymInt",
    "torch.SymBool": "as SymInt",
    "torch.xpu": "answers as PyTorch's build without XPU (see the torch.xpu section)",
    "torch.mps": "answers as PyTorch's build without MPS (see the torch.mps section)",
    "torch.Tensor.is_pinned": "False",
    "torch.Tensor.is_shared": "False",
    "torch.Tensor.is_inference": "False (inference_mode makes ordinary tensors)",
    "torch.nn.DataParallel": "a pass-through wrapper, as PyTorch's on a machine without GPUs",
    "torch.amp.GradScaler": "'cuda' disables itself with a warning, as without CUDA; 'cpu' scales as PyTorch",
    "torch.amp.autocast": "as torch.autocast",
    "torch.multiprocessing.spawn": "runs fn(i, *args) in nprocs processes; no tensor sharing to set up",
    "torch.use_deterministic_algorithms": "recorded and reported back; every minigrad op is deterministic already",
    "torch.set_deterministic_debug_mode": "as use_deterministic_algorithms",
    "torch.set_flush_denormal": "returns False (NumPy gives no control of the CPU's flag); nothing changes",
    "torch.set_num_interop_threads": "recorded: minigrad runs no inter-op thread pool",
    "torch.get_num_interop_threads": "what set_num_interop_threads recorded (1 by default)",
    "torch.set_warn_always": "recorded; minigrad's warnings follow Python's warning filters",
    "torch.func.functionalize": "returns a wrapper calling the function itself (no functionalization pass); same "
                                "results and input mutations",
    "torch.func.debug_unwrap": "returns its tensor (minigrad's transforms wrap nothing)",
    "torch.jit.script": "returns the module (made a ScriptModule in place, same parameters) or the function; no "
                        "TorchScript: it runs eagerly",
    "torch.jit.trace": "returns the module or function as script does; the example inputs are not run",
    "torch.jit.trace_module": "as jit.trace",
    "torch.jit.save": "minigrad's own archive (class names, attributes, tensors), not TorchScript",
    "torch.jit.load": "reads jit.save's archives (the model's classes must be imported); TorchScript files are "
                      "refused with the state_dict route",
    "torch.jit.is_scripting": "always False",
    "torch.jit.is_tracing": "always False",
    "torch.jit.fork": "runs the call at once; wait returns its result",
    "torch.jit.freeze": "PyTorch's checks, then the module itself (parameters kept)",
    "torch.jit.optimize_for_inference": "PyTorch's checks, then the module itself",
    "torch.jit.set_fusion_strategy": "checked and recorded; nothing is fused",
    "torch.jit.enable_onednn_fusion": "recorded; nothing is fused",
    "torch.profiler.profile": "times minigrad ops (Function.apply), backward nodes and record_function ranges on the "
                              "CPU; schedule, step and on_trace_ready as PyTorch's; CUDA records nothing; "
                              "with_flops: the flop counter's counts per event",
    "torch.autograd.profiler.emit_nvtx": "a context manager that does nothing",
    "torch.autograd.profiler.emit_itt": "a context manager that does nothing",
    "torch.init_num_threads": "does nothing (numba starts its threads itself)",
    "torch.utils.checkpoint.create_selective_checkpoint_contexts": "accepted; every op of the segment is recomputed "
                                                                   "whatever the policy (the same results)",
    "torch.utils.checkpoint.set_checkpoint_early_stop": "accepted; minigrad recomputes whole segments",
    "torch.fork": "runs the call at once and returns a finished Future (no asynchronous TorchScript task)",
    "torch.library.register_fake": "stored and run only by opcheck, on real inputs (minigrad has no fake tensors or "
                                   "tracing)",
    "torch.library.impl_abstract": "as register_fake",
    "torch.library.get_ctx": "new_dynamic_size() has no symbolic size to make: it returns min (opcheck then skips "
                             "its shape check)",
    "torch.library.register_torch_dispatch": "stored, never called: minigrad has no __torch_dispatch__",
    "torch.library.register_vmap": "stored, never called: minigrad's vmap runs the op on each slice",
    "torch.library.register_autocast": "recorded, not applied: autocast casts minigrad's own ops only",
    "torch.library.fallthrough_kernel": "a marker: registering it does nothing (no dispatcher)",
    "torch.library.opcheck": "PyTorch's four test names with minigrad's own checks: undeclared mutation, an autograd "
                             "registration, the fake impl's shapes and dtypes, the backward against finite "
                             "differences",
    "torch.overrides.TorchFunctionMode": "sees only the calls made through handle_torch_function; minigrad's own ops "
                                         "do not dispatch on __torch_function__",
    "torch.overrides.BaseTorchFunctionMode": "as TorchFunctionMode",
    "torch.overrides.enable_reentrant_dispatch": "a context manager that does nothing (no dispatcher)",
    "torch.overrides.has_torch_function": "False for minigrad tensors and their subclasses (minigrad.Tensor has no "
                                          "__torch_function__ and its ops do not dispatch on it); True for objects "
                                          "defining one or under a TorchFunctionMode, as PyTorch's",
    "torch.overrides.has_torch_function_unary": "as has_torch_function",
    "torch.overrides.has_torch_function_variadic": "as has_torch_function",
    "torch.functional.has_torch_function": "as torch.overrides.has_torch_function",
    "torch.functional.has_torch_function_unary": "as torch.overrides.has_torch_function",
    "torch.functional.has_torch_function_variadic": "as torch.overrides.has_torch_function",
    "torch.autograd.has_torch_function": "as torch.overrides.has_torch_function",
    "torch.nn.functional.has_torch_function": "as torch.overrides.has_torch_function",
    "torch.nn.functional.has_torch_function_unary": "as torch.overrides.has_torch_function",
    "torch.nn.functional.has_torch_function_variadic": "as torch.overrides.has_torch_function",
    "torch.nn.Module.compile": "runs the module as it is (minigrad compiles nothing)",
    "torch.nn.Module.cuda": "raises: minigrad runs on the CPU only",
    "torch.nn.Module.xpu": "raises: minigrad runs on the CPU only",
    "torch.nn.Module.mtia": "raises: minigrad runs on the CPU only",
    "torch.nn.Module.ipu": "raises: minigrad runs on the CPU only",
    "torch.nn.Module.share_memory": "returns the module: its CPU memory is not moved to shared memory",
    "torch.nn.utils.skip_init": "builds the module with its usual initial values, the random stream left where it "
                                "was (PyTorch leaves the memory uninitialised)",
}


def public_names(namespace):
    """PyTorch's public names in ``namespace``: attributes not starting with '_', no constants in capitals (classes
    in capitals, ``SGD`` or ``LSTM``, count), modules only if they are submodules of ``namespace`` (not ``os`` or
    ``torch`` itself), and nothing imported from outside torch (typing helpers, Python's own functions)."""
    obj = _resolve("torch", namespace)
    prefix = (namespace if inspect.ismodule(obj) else "torch") + "."
    names = []
    for name in dir(obj):
        if name.startswith("_"):
            continue
        try:
            value = getattr(obj, name)
        except Exception:  # noqa: BLE001 - a lazy attribute that fails to load is not a name programs use
            continue
        if name.isupper() and not inspect.isclass(value):
            continue
        if inspect.ismodule(value):
            if value.__name__.startswith(prefix):
                names.append(name)
            continue
        module = getattr(value, "__module__", None) if (inspect.isclass(value) or callable(value)) \
            else type(value).__module__
        if module is None or module.startswith("torch") or isinstance(value, (int, float)) and module == "builtins":
            names.append(name)
    return sorted(set(names))


def _resolve(root, namespace):
    """``torch.nn.functional`` -> the module (or ``torch.Tensor`` -> the class), imported from ``root``."""
    parts = namespace.split(".")[1:]
    obj = importlib.import_module(root)
    for i, part in enumerate(parts):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            obj = importlib.import_module(".".join([root] + parts[:i + 1]))
    return obj


def minigrad_namespace(namespace):
    try:
        return _resolve("minigrad", namespace)
    except (ImportError, AttributeError):
        return None


def classify(namespace):
    """(present, stand-ins with notes, absent) for one namespace."""
    ours = minigrad_namespace(namespace)
    present, stand_ins, absent = [], {}, []
    for name in public_names(namespace):
        qualified = f"{namespace}.{name}"
        if ours is None or not hasattr(ours, name):
            absent.append(name)
        elif namespace in STAND_IN_NAMESPACES:
            stand_ins[name] = STAND_IN_NAMESPACES[namespace]
        elif qualified in STAND_INS:
            stand_ins[name] = STAND_INS[qualified]
        else:
            present.append(name)
    return present, stand_ins, absent


def check_stand_ins():
    """Every listed stand-in exists in minigrad (else this list is stale)."""
    for qualified in STAND_INS:
        namespace, _, name = qualified.rpartition(".")
        ours = minigrad_namespace(namespace)
        if ours is None or not hasattr(ours, name):
            raise SystemExit(f"compat_list.py lists {qualified} as a stand-in, but minigrad has no such name")


def render():
    import torch
    check_stand_ins()
    rows, sections = [], []
    for namespace in NAMESPACES:
        present, stand_ins, absent = classify(namespace)
        total = len(present) + len(stand_ins) + len(absent)
        rows.append(f"| `{namespace}` | {total} | {len(present)} | {len(stand_ins)} | {len(absent)} |")
        section = [f"## `{namespace}`", ""]
        if stand_ins:
            section += ["Stand-ins:", "", "| name | what it does in minigrad |", "| --- | --- |"]
            section += [f"| `{name}` | {note} |" for name, note in stand_ins.items()]
            section.append("")
        section += [f"Present ({len(present)}): " + (", ".join(f"`{n}`" for n in present) or "none"), "",
                    f"Absent ({len(absent)}): " + (", ".join(f"`{n}`" for n in absent) or "none"), ""]
        sections.append("\n".join(section))
    header = [
        "# What minigrad has of PyTorch's API",
        "",
        "<!-- Generated by `python docs/compat_list.py > docs/compatibility.md`; do not edit by hand. -->",
        "",
        f"The public names of PyTorch {torch.__version__.split('+')[0]} in the namespaces programs import, and "
        "whether `import minigrad as torch` has them. *Present* names exist with PyTorch's semantics (see "
        "`docs/porting.md` for the documented differences); *stand-ins* exist so that ported code runs but do "
        "not do what PyTorch's do on a GPU or in a compiler; *absent* names raise AttributeError. Names are "
        "checked by existence only: a present function may still lack an argument PyTorch accepts.",
        "",
        "| namespace | PyTorch names | present | stand-ins | absent |",
        "| --- | --- | --- | --- | --- |",
    ]
    return "\n".join(header + rows + [""] + sections)


if __name__ == "__main__":
    sys.stdout.write(render())
