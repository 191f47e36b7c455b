"""Hand-derived backward against autograd, for every norm: time, memory saved for backward, agreement.

    python bench/bench_backward.py            # moderate sizes, float32
    python bench/bench_backward.py --quick    # small sizes, few rounds
    python bench/bench_backward.py --dtype float64

For RMSNorm, LayerNorm, BatchNorm2d (training), InstanceNorm2d and GroupNorm, each with weight and
bias (RMSNorm: weight only, as PyTorch's), and every other norm of the registry (minigrad/ops/norm/registry.py,
with the parameters of its registry case), three implementations of the same layer:

* the fused Function with its hand-derived backward, on each kernel backend (numpy, and numba when
  it can be imported);
* the composite twin, the same forward written with primitive ops, differentiated by autograd.

Printed as a markdown table:

* time (minigrad against itself, so in one process): medians over interleaved rounds after warm-up
  (fused numpy, fused numba, composite, fused numpy, ...), of the forward alone and of forward +
  backward; backward = their difference. One
  thread unless the environment says otherwise (NUMBA_NUM_THREADS=2 ...): autograd's primitive ops
  are single-threaded NumPy, and on a busy machine a parallel kernel waits for its second thread;
* memory saved for backward: the sum of the bytes every node of the graph saves (``minigrad.viz``),
  and the part of it that is new memory (each buffer once, arrays that are the inputs left out);
* the largest absolute difference between the fused gradients (of x, w, b) and autograd's, for the
  same random upstream gradient.
"""
import os

if __name__ == "__main__":   # run as the benchmark (not imported by a test, whose process must stay as it is)
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ.setdefault(_var, "1")  # before NumPy and numba load: one thread, like the composite ops

import argparse  # noqa: E402
import contextlib  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import numpy as np  # noqa: E402

import minigrad as mg  # noqa: E402
import minigrad.nn.functional as F  # noqa: E402
from common import fmt_ms, machine_line, table, time_interleaved  # noqa: E402
from minigrad import viz  # noqa: E402
from minigrad.kernels import BACKENDS, get_backend, use_backend  # noqa: E402
from minigrad.ops.norm.batchnorm import batch_norm_composite  # noqa: E402
from minigrad.ops.norm.groupnorm import group_norm_composite, instance_norm_composite  # noqa: E402
from minigrad.ops.norm.layernorm import layer_norm_composite  # noqa: E402
from minigrad.ops.norm.registry import NORMS  # noqa: E402
from minigrad.ops.norm.rmsnorm import rms_norm_composite  # noqa: E402

ROWS, CHANNELS = (2048, 512), (32, 64, 16, 16)             # moderate: 4 MB / 2 MB of float32
QUICK_ROWS, QUICK_CHANNELS = (256, 128), (8, 16, 8, 8)


@dataclass
class Case:
    """One norm: its two forms, each called as fn(x, w, b) (or fn(x, *params) with ``param_shapes``), and the
    input shape."""
    name: str
    fused: object
    composite: object
    shape: tuple
    params: int             # size of w and b
    bias: bool = True
    param_shapes: list = None   # the parameters' shapes, instead of w and b of ``params`` elements
    registry: str = None        # the norm's name in the registry


def registry_case(spec, rows, channels):
    """A registered norm without a hand-written case: its registry call, on the shapes of its kind (each
    parameter of the case's feature size gets the input's)."""
    shape = channels if spec.kind == "channel" else rows
    axis = 1 if spec.kind == "channel" else -1
    shapes = [tuple(shape[axis] if n == spec.shape[axis] else n for n in s) for _, s in spec.params]
    fused, composite = spec.functional_form(), spec.composite_form()
    return Case(spec.name, lambda *t: spec.call(fused, *t), lambda *t: spec.call(composite, *t), shape, 0,
                param_shapes=shapes, registry=spec.name)


def cases(rows, channels):
    d, c = rows[-1], channels[1]
    hand = [
        Case("RMSNorm", lambda x, w, b: F.rms_norm(x, (d,), w), lambda x, w, b: rms_norm_composite(x, (d,), w),
             rows, d, bias=False, registry="RMSNorm"),
        Case("LayerNorm", lambda x, w, b: F.layer_norm(x, (d,), w, b),
             lambda x, w, b: layer_norm_composite(x, (d,), w, b), rows, d, registry="LayerNorm"),
        Case("BatchNorm2d (train)", lambda x, w, b: F.batch_norm(x, None, None, w, b, True),
             lambda x, w, b: batch_norm_composite(x, None, None, w, b, True), channels, c, registry="BatchNorm"),
        Case("InstanceNorm2d (affine)", lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
             lambda x, w, b: instance_norm_composite(x, weight=w, bias=b), channels, c, registry="InstanceNorm"),
        Case("GroupNorm (8 groups)", lambda x, w, b: F.group_norm(x, 8, w, b),
             lambda x, w, b: group_norm_composite(x, 8, w, b), channels, c, registry="GroupNorm"),
    ]
    return hand + [registry_case(spec, rows, channels) for spec in NORMS
                   if spec.name not in {case.registry for case in hand}]


def implementations(case):
    """(label, backend, fn) for the fused form on each kernel backend and for the composite twin
    (backend None: it calls no kernel)."""
    return [(f"fused, hand-derived ({b})", b, case.fused) for b in available_backends()] + \
           [("composite, autograd", None, case.composite)]


def on(backend):
    """Run a block on ``backend``. It must cover the backward too: the engine calls the fused Function's
    backward kernels after the forward has returned."""
    return use_backend(backend) if backend else contextlib.nullcontext()


def available_backends():
    """The kernel backends that run here (numba falls back to numpy when it cannot be imported)."""
    names = []
    for name in BACKENDS:
        with use_backend(name):
            if get_backend() == name:
                names.append(name)
    return names


def leaves(case, dtype, seed=0):
    """Fresh x, w, b (b None without bias) that require grad, and an upstream gradient g."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(case.shape).astype(dtype)
    if case.param_shapes is not None:
        params = [np.asarray(1 + 0.1 * rng.standard_normal(s), dtype=dtype) for s in case.param_shapes]
        return ([mg.tensor(a, requires_grad=True) for a in [x] + params],
                mg.tensor(rng.standard_normal(case.shape).astype(dtype)))
    w, b = (1 + 0.1 * rng.standard_normal(case.params)).astype(dtype), rng.standard_normal(case.params).astype(dtype)
    tensors = [mg.tensor(a, requires_grad=True) for a in (x, w, b)]
    if not case.bias:
        tensors[2] = None
    return tensors, mg.tensor(rng.standard_normal(case.shape).astype(dtype))


def grads_and_memory(backend, fn, case, dtype):
    """One untimed run: the gradients of x, w, b and the graph's (saved, new) bytes."""
    tensors, g = leaves(case, dtype)
    with on(backend):
        y = fn(*tensors)
        graph = viz.trace(y)
        graph.remove_hooks()
        y.backward(g)
    memory = graph.saved_bytes(), graph.saved_bytes(unique=True, include_leaves=False)
    return [t.grad.numpy() for t in tensors if t is not None], memory


def timers(backend, fn, case, dtype):
    """(forward only, forward + backward) callables on one set of leaves; grads are reset each call."""
    tensors, g = leaves(case, dtype)
    params = [t for t in tensors if t is not None]

    def forward():
        with on(backend):
            fn(*tensors)

    def step():
        for t in params:
            t.grad = None
        with on(backend):
            fn(*tensors).backward(g)

    return forward, step


def size(n):
    return f"{n / 2 ** 20:.2f} MiB" if n >= 2 ** 20 else f"{n / 2 ** 10:.1f} KiB"


def measure(case, dtype, rounds, warmup):
    impls = implementations(case)
    calls = {}
    for label, backend, fn in impls:
        calls[(label, "forward")], calls[(label, "step")] = timers(backend, fn, case, dtype)
    medians = time_interleaved(calls, rounds=rounds, warmup=warmup)
    reference, _ = grads_and_memory(None, case.composite, case, dtype)
    rows = []
    for label, backend, fn in impls:
        grads, (saved, new) = grads_and_memory(backend, fn, case, dtype)
        diff = max(float(np.abs(a.astype(np.float64) - r).max()) for a, r in zip(grads, reference))
        fwd, total = medians[(label, "forward")], medians[(label, "step")]
        rows.append((label, fwd, total - fwd, total, saved, new, diff))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small inputs, few rounds")
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    parser.add_argument("--rounds", type=int, default=None, help="timed rounds per implementation")
    args = parser.parse_args(argv)
    rows_shape, channels_shape = (QUICK_ROWS, QUICK_CHANNELS) if args.quick else (ROWS, CHANNELS)
    rounds = args.rounds or (5 if args.quick else 15)
    warmup = 2 if args.quick else 3
    dtype = np.dtype(args.dtype)

    print(f"## Hand-derived backward vs autograd ({args.dtype}, median of {rounds} interleaved rounds after "
          f"{warmup} warm-up; backend numba falls back to numpy when it cannot be imported)\n\n{machine_line()}\n")
    headers = ["norm", "input", "implementation", "forward ms", "backward ms", "fwd + bwd ms", "saved for backward",
               "of which new", "max abs diff vs autograd"]
    rows, results = [], {}
    for case in cases(rows_shape, channels_shape):
        results[case.name] = measure(case, dtype, rounds, warmup)
        for label, fwd, bwd, total, saved, new, diff in results[case.name]:
            rows.append([case.name, "x".join(map(str, case.shape)), label, fmt_ms(fwd), fmt_ms(bwd), fmt_ms(total),
                         size(saved), size(new), "(reference)" if label.startswith("composite") else f"{diff:.1e}"])
    print(table(headers, rows))
    return results


if __name__ == "__main__":
    main()
