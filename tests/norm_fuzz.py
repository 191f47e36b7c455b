"""A differential fuzzer of the normalization modules against PyTorch: random configurations, dtypes, layouts and
train/eval sequences, run as the same case in both libraries.

A case (``random_case(seed)``) picks a module PyTorch has (BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d, LayerNorm,
GroupNorm, RMSNorm, LocalResponseNorm) with random constructor arguments (eps, momentum including None, affine,
track_running_stats, elementwise_affine, bias, normalized_shape of 1 to all dims, groups); an input shape (batched
or not, 0 to 3 spatial dims; one batch in twenty empty); a dtype (float64, float32, float16, bfloat16; for the
16-bit ones, three times in ten a float32 module: mixed dtypes, as PyTorch's CPU norms take them); a layout
(contiguous, a transposed copy, every second column of a wider tensor); data scaled (1e-3 to 100) and shifted (0
or 5: |mean| >> std); and 1 to 3 steps, each in train or eval mode, with a random upstream gradient and each of
input and parameters requiring grad or not. Parameters start from the same random values (away from zero) in
both libraries. Four in ten float64 cases also take second derivatives: the first gradients with
``create_graph=True``, then the gradients of a random-weighted sum of them with respect to the input and the
parameters (the norms' hand-derived double backwards).

What is compared after each step: the output, the input's and every parameter's gradient, and every buffer
(running_mean, running_var, num_batches_tracked). In float64 minigrad must agree with PyTorch to 1e-9 of the
value's scale (second derivatives: 1e-8; they are sums of terms that may be much larger, as for an RMSNorm over a
single element, seed 4336). In float32, float16 and bfloat16 both libraries are held to the exact answer instead
(a float64 run of the same inputs, rounded to the dtype beforehand, on a contiguous input): minigrad may be off by
at most twice PyTorch's own error plus a few units of the dtype's precision (PyTorch's float32 GroupNorm of data
with |mean| >> std, for one, is further from the exact answer than minigrad's). A non-contiguous input is held to
that exact answer too, in every dtype: PyTorch 2.13's CPU BatchNorm returns a wrong input gradient for an input it
takes for channels_last (strides (1, 1, 1, 4) for shape (1, 4, 1, 2), say) with a contiguous upstream gradient
(seed 277). Errors: if either library raises, both must, with the same exception type, except where minigrad
computes what PyTorch refuses or fails on (``_known``, ``_known_result``; each is in docs/differences.md).

``describe(seed)`` prints the case, to paste into a regression test or a bug report.
"""
import math
import traceback
import warnings

import numpy as np

DTYPES = ("float64", "float32", "float16", "bfloat16")
DTYPE_WEIGHTS = (0.5, 0.3, 0.1, 0.1)
TOLERANCE = {"float64": 1e-9, "float32": 1e-5, "float16": 4e-3, "bfloat16": 3e-2}   # times the value's scale


def _spatial(rng, count):
    return tuple(int(s) for s in rng.integers(1, 5, size=count))


def random_case(seed):
    """The case of ``seed``: a dict of plain values (the same in both libraries)."""
    rng = np.random.default_rng(seed)
    kind = str(rng.choice(["BatchNorm", "InstanceNorm", "LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm"]))
    nd = int(rng.integers(1, 4))
    c, n = int(rng.choice([1, 2, 3, 4, 6])), int(rng.choice([1, 2, 3]))
    if kind == "BatchNorm":
        shape = ((n, c) if rng.random() < 0.5 else (n, c) + _spatial(rng, 1)) if nd == 1 else (n, c) + _spatial(rng, nd)
        name, args = f"BatchNorm{nd}d", (c,)
        kwargs = dict(eps=float(rng.choice([1e-5, 1e-3, 0.1])), momentum=[0.1, 0.5, None, 1.0][int(rng.integers(4))],
                      affine=bool(rng.random() < 0.7), track_running_stats=bool(rng.random() < 0.7))
    elif kind == "InstanceNorm":
        shape = (n, c) + _spatial(rng, nd)
        shape = shape[1:] if rng.random() < 0.25 else shape                           # unbatched
        name, args = f"InstanceNorm{nd}d", (c,)
        kwargs = dict(eps=float(rng.choice([1e-5, 1e-3])), momentum=[0.1, None][int(rng.integers(2))],
                      affine=bool(rng.random() < 0.5), track_running_stats=bool(rng.random() < 0.4))
    elif kind == "GroupNorm":
        groups = int(rng.choice([g for g in (1, 2, 3, 6) if c % g == 0]))
        shape = (n, c) + _spatial(rng, int(rng.integers(0, 4)))
        name, args = "GroupNorm", (groups, c)
        kwargs = dict(eps=float(rng.choice([1e-5, 1e-2])), affine=bool(rng.random() < 0.7))
    elif kind in ("LayerNorm", "RMSNorm"):
        shape = (n,) + _spatial(rng, nd) + (c,)
        normalized = list(shape[len(shape) - int(rng.integers(1, len(shape) + 1)):])
        name, args = kind, (normalized,)
        kwargs = (dict(eps=float(rng.choice([1e-5, 1e-2])), elementwise_affine=bool(rng.random() < 0.7),
                       bias=bool(rng.random() < 0.7)) if kind == "LayerNorm" else
                  dict(eps=[None, 1e-6, 1e-2][int(rng.integers(3))], elementwise_affine=bool(rng.random() < 0.7)))
    else:
        shape = (n, c) + _spatial(rng, nd)
        name, args = kind, (int(rng.integers(1, 5)),)
        kwargs = dict(alpha=float(rng.choice([1e-4, 0.5])), beta=float(rng.choice([0.75, 0.5, 1.5])),
                      k=float(rng.choice([1.0, 2.0])))
    dtype = DTYPES[int(rng.choice(len(DTYPES), p=DTYPE_WEIGHTS))]
    steps = int(rng.integers(1, 4))
    scale, shift = float(rng.choice([1.0, 1.0, 100.0, 1e-3])), float(rng.choice([0.0, 0.0, 5.0]))
    case = dict(name=name, args=args, kwargs=kwargs, shape=tuple(shape), dtype=dtype, layout=int(rng.integers(3)),
                training=[bool(rng.random() < 0.7) for _ in range(steps)],
                grads=(bool(rng.random() < 0.8), bool(rng.random() < 0.8)),
                x=[rng.standard_normal(shape) * scale + shift for _ in range(steps)],
                g=[rng.standard_normal(shape) for _ in range(steps)],
                param_seed=int(rng.integers(1 << 31)), scale=scale, shift=shift)
    # later additions draw from a generator of their own: the draws above, so every seed's case, stay as they were
    extra = np.random.default_rng([seed, 1])
    case["second"] = dtype == "float64" and bool(extra.random() < 0.4)
    batched = (len(shape) > len(args[0]) if kind in ("LayerNorm", "RMSNorm") else
               len(shape) == nd + 2 if kind == "InstanceNorm" else True)            # dim 0 is the batch
    if extra.random() < 0.05 and batched:                                        # an empty batch
        case.update(shape=(0,) + tuple(shape[1:]), x=[a[:0] for a in case["x"]], g=[a[:0] for a in case["g"]])
    case["mixed"] = dtype in ("float16", "bfloat16") and bool(extra.random() < 0.3)   # float32 module, 16-bit x
    return case


def describe(seed):
    case = random_case(seed)
    return (f"seed {seed}: {case['name']}(*{case['args']}, **{case['kwargs']}) on x of shape {case['shape']}, "
            f"{case['dtype']}, layout {case['layout']}, steps training={case['training']}, "
            f"grads of (x, parameters)={case['grads']}, x ~ N({case['shift']}, {case['scale']}^2)"
            + (", second order" if case["second"] else "") + (", float32 module" if case["mixed"] else ""))


def _laid_out(lib, array, layout):
    """``array`` as a tensor of ``lib``: contiguous (0), a transposed copy transposed back (1), or every second
    column of a tensor twice as wide (2)."""
    t = lib.tensor(array)
    if layout == 1 and t.ndim >= 2:
        return t.transpose(0, -1).contiguous().transpose(0, -1)
    if layout == 2 and t.ndim >= 2:
        return lib.tensor(np.repeat(array, 2, axis=-1))[..., ::2]
    return t


def _as_float64(t):
    return None if t is None else np.array(t.detach().double().numpy())


def run(lib, case, dtype, params):
    """[(what, float64 array or None)] over the case's steps in ``lib`` (minigrad or torch), computed in ``dtype``."""
    dt = getattr(lib, dtype)
    module = getattr(lib.nn, case["name"])(*case["args"], **case["kwargs"])
    with lib.no_grad():
        for p, value in zip(module.parameters(), params):
            p.copy_(lib.tensor(value))
    module = module.to(lib.float32 if case["mixed"] and dtype != "float64" else dt)
    results = []
    for x_values, g_values, training in zip(case["x"], case["g"], case["training"]):
        module.train(training)
        x = _laid_out(lib, x_values, case["layout"]).to(dt).requires_grad_(case["grads"][0])
        for p in module.parameters():
            p.grad = None
            p.requires_grad_(case["grads"][1])
        y = module(x)
        results.append(("output", _as_float64(y)))
        if y.requires_grad and case["second"]:
            results += _second_order(lib, module, x, y, lib.tensor(g_values).to(y.dtype), case)
        elif y.requires_grad:
            y.backward(lib.tensor(g_values).to(y.dtype))
            results.append(("input grad", _as_float64(x.grad)))
            results += [(f"{name} grad", _as_float64(p.grad)) for name, p in module.named_parameters()]
        results += [(name, _as_float64(b)) for name, b in module.named_buffers()]
    return results


def _second_order(lib, module, x, y, g, case):
    """The first gradients with create_graph=True (which of them require grad, and their values), then the
    gradients of a random-weighted sum of those that do, with respect to x and the parameters."""
    named = [("input", x)] + list(module.named_parameters())
    names, wrt = zip(*[(n, t) for n, t in named if t.requires_grad])
    firsts = lib.autograd.grad(y, list(wrt), g, create_graph=True, allow_unused=True)
    results = [(f"{n} grad", _as_float64(f)) for n, f in zip(names, firsts)]
    results.append(("which first gradients require grad",
                    np.array([f is not None and f.requires_grad for f in firsts], float)))
    rng = np.random.default_rng([case["param_seed"], 2])
    weights = [rng.standard_normal(tuple(t.shape)) for t in wrt]
    total = sum((f * lib.tensor(v).to(f.dtype)).sum() for f, v in zip(firsts, weights)
                if f is not None and f.requires_grad)
    if isinstance(total, int):                 # no first gradient depends on anything: nothing to differentiate
        return results
    seconds = lib.autograd.grad(total, list(wrt), allow_unused=True)
    return results + [(f"second order, {n}", _as_float64(s)) for n, s in zip(names, seconds)]


def _known(case, torch_error):
    """Where minigrad computes what PyTorch refuses on purpose (docs/differences.md): PyTorch's CPU
    LocalResponseNorm has no float16/bfloat16 kernel (its avg_pool3d), and views a 5-D input in a way a
    non-contiguous input cannot be viewed; its affine InstanceNorm fails on an empty batch (an IndexError from
    select(), before the check of the spatial size that minigrad's ValueError then reports)."""
    message = str(torch_error)
    if case["name"] == "LocalResponseNorm":
        return "not implemented for" in message or "view size" in message
    return case["name"].startswith("InstanceNorm") and case["shape"][0] == 0 and "out of range" in message


def _known_result(case, what):
    """Results that differ on purpose (docs/differences.md), on an empty batch: InstanceNorm keeps its running
    statistics (PyTorch's become NaN), and under create_graph=True a first gradient that depends on no input
    (LayerNorm's bias gradient, the sum of an empty upstream gradient) does not require grad in minigrad, whose
    norms compute an empty input through their composite twins (PyTorch's fused node marks all its gradients), so
    there may then be no second derivatives to take (they would be empty)."""
    if case["shape"][0] != 0:
        return False
    return (what == "which first gradients require grad" or what.startswith("second order")
            or (case["name"].startswith("InstanceNorm") and what in ("running_mean", "running_var")))


def _conditioning(case):
    """How much more than a few units of the dtype an answer may be off by: 1, except for BatchNorm in float32 and
    the 16-bit floats, which centers x with its mean rounded to the dtype, as PyTorch's CPU kernel does for a
    non-contiguous input (the row and group norms carry the float64 mean as two parts): x - mean is then off by up
    to half a unit of |mean|, a relative error of |mean| / std units of the dtype (seeds 3684 and 6385: mean 5,
    std 1e-3, float32)."""
    if case["name"].startswith("BatchNorm") and case["dtype"] != "float64":
        return 1 + abs(case["shift"]) / case["scale"]
    return 1


def _rounded(torch, case, dtype, params):
    """The case with x, g and the parameters rounded to ``dtype`` (then every run starts from the same values)."""
    def r(a):
        return torch.tensor(a).to(getattr(torch, dtype)).double().numpy()
    return dict(case, x=[r(a) for a in case["x"]], g=[r(a) for a in case["g"]]), [r(p) for p in params]


def _eps_driven(case):
    """[u x^2 / eps per element of each step's x] for an RMSNorm over a single element in float64, else None. Its
    gradients are eps / (x^2 + eps) times smooth factors, and both libraries get eps / (x^2 + eps) as 1 - xhat^2 (or
    a sum of terms that cancels as much), which loses x^2 / eps units of float64 rounding: seed 279688 (x = -1.2e-4,
    eps = 2.2e-16) has a second derivative of 2.5610337459634747 (60 digits), minigrad's off by 4.2e-8, PyTorch's
    by 5.3e-9, over u x^2 / eps = 6.8e-9 relative. Against PyTorch's answer, each element of a gradient of x's
    shape may then be off by 8 u x^2 / eps of its value beyond the tolerance."""
    if case["name"] != "RMSNorm" or case["dtype"] != "float64" or math.prod(case["args"][0]) != 1:
        return None
    eps = np.finfo(np.float64).eps if case["kwargs"]["eps"] is None else case["kwargs"]["eps"]
    return [np.finfo(np.float64).epsneg * np.square(x) / eps for x in case["x"]]


def differences(torch, mg, seed):
    """None if minigrad agrees with PyTorch on the case of ``seed``, else what differs (a string)."""
    case = random_case(seed)
    dtype = case["dtype"]
    shapes = [tuple(p.shape) for p in getattr(torch.nn, case["name"])(*case["args"], **case["kwargs"]).parameters()]
    rng = np.random.default_rng(case["param_seed"])
    params = [1 + 0.5 * rng.standard_normal(s) for s in shapes]
    if dtype != "float64":
        case, params = _rounded(torch, case, dtype, params)
    outcome = {}
    runs = [("torch", torch, case, dtype), ("minigrad", mg, case, dtype)]
    if dtype != "float64" or case["layout"]:   # the exact answer: float64 on a contiguous input
        runs.append(("exact", torch, dict(case, layout=0), "float64"))
    for who, lib, laid_out, dt in runs:
        try:
            with warnings.catch_warnings():    # (PyTorch's notes on mixed dtypes; warnings are not compared)
                warnings.simplefilter("ignore")
                outcome[who] = run(lib, laid_out, dt, params)
        except Exception as error:  # noqa: BLE001 - an exception is an answer to compare
            outcome[who] = error
    theirs, ours = outcome["torch"], outcome["minigrad"]
    head = describe(seed)
    if isinstance(theirs, Exception) and _known(case, theirs):
        return None
    if isinstance(theirs, Exception) or isinstance(ours, Exception):
        if isinstance(theirs, Exception) and isinstance(ours, Exception):
            if isinstance(ours, type(theirs)):
                return None
            return (f"{head}\n  PyTorch raises {type(theirs).__name__}: {theirs}\n"
                    f"  minigrad {type(ours).__name__}: {ours}")
        mine = "".join(traceback.format_exception(ours)[-3:]) if isinstance(ours, Exception) else "no error"
        return f"{head}\n  PyTorch: {theirs if isinstance(theirs, Exception) else 'no error'}\n  minigrad: {mine}"
    theirs, ours = ([(w, v) for w, v in r if not _known_result(case, w)] for r in (theirs, ours))
    if [w for w, _ in theirs] != [w for w, _ in ours]:
        return f"{head}\n  results: PyTorch {[w for w, _ in theirs]}, minigrad {[w for w, _ in ours]}"
    exact = [(w, v) for w, v in outcome["exact"] if not _known_result(case, w)] if "exact" in outcome else theirs
    step, drift = -1, _eps_driven(case)
    for (what, a), (_, b), (_, e) in zip(theirs, ours, exact):
        step += what == "output"                 # each step's results begin with its output
        if (a is None) != (b is None) or (a is not None and a.shape != b.shape):
            return (f"{head}\n  {what}: PyTorch {None if a is None else a.shape}, "
                    f"minigrad {None if b is None else b.shape}")
        if a is None:
            continue
        finite = np.isfinite(e) & np.isfinite(a)
        if not np.array_equal(np.isfinite(b), np.isfinite(a)) and not np.array_equal(np.isfinite(b), np.isfinite(e)):
            return f"{head}\n  {what}: infinities or NaN where neither PyTorch nor the exact answer has them"
        scale = 1 + np.abs(e[finite]).max(initial=0)
        ours_off = np.abs(b[finite] - e[finite]).max(initial=0)
        theirs_off = np.abs(a[finite] - e[finite]).max(initial=0)
        tolerance = TOLERANCE[dtype] * (10 if what.startswith("second order") else 1)   # (a sum of larger terms)
        if drift is not None and b.shape == drift[step].shape:        # beyond the eps-driven rounding (_eps_driven)
            ours_off = (np.abs(b - e) - 8 * drift[step] * np.abs(e))[finite].max(initial=0)
        if ours_off > 2 * theirs_off + tolerance * scale * _conditioning(case):
            return f"{head}\n  {what}: minigrad off by {ours_off:.3g}, PyTorch by {theirs_off:.3g} (scale {scale:.3g})"
    return None


if __name__ == "__main__":
    from tests.fuzz_cli import run_seeds
    run_seeds(differences, __doc__.split("\n")[0])
