"""The numbers of low_precision.md ("why the norm upcasts"): one generator per example block.

Loaded by numeric.py, which merges ``EXAMPLES`` into its own. Every number is computed here from minigrad
(and from plain NumPy / ml_dtypes for the arithmetic shown step by step) and checked; sums that the page
shows are accumulated one element at a time, in a fixed order, so they are the same on any machine.
"""
import math

import ml_dtypes
import numpy as np

import minigrad as mg
import minigrad.nn.functional as F

EXAMPLES = {}
BF16 = np.dtype(ml_dtypes.bfloat16)
WIDTH = 4096                     # a LLaMA-7B hidden size


def example(name):
    def register(fn):
        EXAMPLES[name] = fn
        return fn
    return register


def _text(*lines):
    return "```text\n" + "\n".join(lines) + "\n```"


def _row(seed=0):
    """A 4096-wide activation row, N(0, 1), rounded to bfloat16 (what a bf16 model holds)."""
    return np.random.default_rng(seed).standard_normal(WIDTH).astype(np.float32).astype(BF16)


def _running_sum(values, dtype):
    """sum(values) added left to right, each partial sum rounded to ``dtype``."""
    total = np.zeros((), dtype)
    for v in values.astype(dtype):
        total = (total + v).astype(dtype)
    return float(total)


def _rel(value, exact):
    return abs(value - exact) / abs(exact)


# --------------------------------------------------------------------------- 0. the formats
@example("lowp.formats")
def formats():
    rows = ["| dtype | bits: sign, exponent, mantissa | eps (ulp of 1) | largest | smallest normal |", "|---|---|---|---|---|"]
    layout = {"float16": "1, 5, 10", "bfloat16": "1, 8, 7", "float32": "1, 8, 23"}
    for name in ("float16", "bfloat16", "float32"):
        info = mg.finfo(getattr(mg, name))
        rows.append(f"| {name} | {layout[name]} | {info.eps:g} | {info.max:.4g} | {info.tiny:.4g} |")
    assert mg.finfo(mg.bfloat16).max > 1e38 > mg.finfo(mg.float16).max
    return "\n".join(rows)


# --------------------------------------------------------------------------- 1. the mean square of a row
@example("lowp.mean_square")
def mean_square():
    x = _row()
    squares = (x.astype(np.float64) ** 2)                     # exact: a bf16 value squared fits in float64
    exact = math.fsum(squares) / WIDTH
    sq16 = (x.astype(np.float32) ** 2).astype(BF16)           # x*x in bf16: each square rounded
    in_bf16 = _running_sum(sq16, BF16) / WIDTH
    in_fp32 = _running_sum(squares.astype(np.float32), np.float32) / WIDTH
    minigrad = float((mg.tensor(x.view(np.int16)).view(mg.bfloat16).pow(2).mean()).float())
    stuck = _running_sum(sq16[:1200], BF16)
    rel16, rel32, relmg = _rel(in_bf16, exact), _rel(in_fp32, exact), _rel(minigrad, exact)
    assert rel16 > 0.1 and rel32 < 1e-5 and relmg <= 2.0 ** -9, (rel16, rel32, relmg)
    return _text(f"mean(x^2) of one 4096-wide bfloat16 row, x ~ N(0, 1):",
                 f"  exact (float64, math.fsum)                      {exact:.6f}",
                 f"  squares and running sum in bfloat16             {in_bf16:.6f}   relative error {rel16:.1%}",
                 f"  squares and running sum in float32              {in_fp32:.6f}   relative error {rel32:.1e}",
                 f"  minigrad x.pow(2).mean() on the bfloat16 tensor {minigrad:.6f}   relative error {relmg:.1e}",
                 f"    (each square rounded to bfloat16, summed in float32, the mean rounded once to bfloat16)",
                 f"the bfloat16 running sum after 1200 squares is {stuck:g}: its ulp there is "
                 f"{float(np.spacing(np.array(stuck, BF16))):g},",
                 "so each new square (about 1) is rounded away or to a whole ulp")


# --------------------------------------------------------------------------- 2. float16 overflow of x^2
@example("lowp.fp16_overflow")
def fp16_overflow():
    values = np.array([300.0, -20.0, 5.0, 0.5], dtype=np.float16)
    x = mg.tensor(values).reshape(1, 4)
    none = F.rms_norm(x, (4,), casting="none").float().numpy()[0]
    upcast = F.rms_norm(x, (4,)).float().numpy()[0]
    square = float((mg.tensor(values[:1]) * mg.tensor(values[:1])).float().item())
    exact = values.astype(np.float64) / np.sqrt(np.mean(values.astype(np.float64) ** 2) + 1e-7)
    assert math.isinf(square) and np.all(none == 0) and np.allclose(upcast, exact, rtol=1e-3)
    fmt = lambda a: "[" + ", ".join(f"{v:8.4f}" for v in a) + "]"   # noqa: E731
    return _text(f"x (float16)                             {fmt(values)}",
                 f"300 * 300 in float16                    {square}   (largest float16: 65504; 256^2 = 65536)",
                 f"rms_norm, casting='none' (x*x in fp16)  {fmt(none)}   x * rsqrt(inf) = 0",
                 f"rms_norm (PyTorch's: float32 inside)    {fmt(upcast)}",
                 f"exact                                   {fmt(exact)}")


# --------------------------------------------------------------------------- 3. the one-pass variance
@example("lowp.one_pass_variance")
def one_pass_variance():
    rng = np.random.default_rng(1)
    x32 = (1000 + rng.standard_normal(WIDTH)).astype(np.float32)
    x = x32.astype(np.float64)
    exact = float(np.mean((x - math.fsum(x) / WIDTH) ** 2))
    mean32 = _running_sum(x32, np.float32) / WIDTH
    mean_sq32 = _running_sum(x32 * x32, np.float32) / WIDTH
    one_pass = np.float32(mean_sq32) - np.float32(mean32) * np.float32(mean32)
    two_pass = _running_sum((x32 - np.float32(mean32)) ** 2, np.float32) / WIDTH
    ln = mg.tensor(x32).reshape(1, -1)
    minigrad_var = float(((ln - ln.mean(-1, keepdim=True)) ** 2).mean())
    ours = F.layer_norm(ln, (WIDTH,)).numpy()
    want = (x - x.mean()) / np.sqrt(exact + 1e-5)
    err_ln = float(np.max(np.abs(ours - want)))
    assert _rel(float(one_pass), exact) > 0.05 and _rel(two_pass, exact) < 1e-3 and err_ln < 1e-6
    return _text(f"x = 1000 + N(0, 1), 4096 values in float32; exact variance {exact:.6f}",
                 f"  one pass, E[x^2] - E[x]^2 in float32   {float(one_pass):12.6f}   "
                 f"(E[x^2] = {mean_sq32:.1f}: its float32 ulp is {float(np.spacing(np.float32(mean_sq32))):g})",
                 f"  two passes, E[(x - E[x])^2] in float32 {two_pass:12.6f}",
                 f"  minigrad ((x - x.mean())**2).mean()    {minigrad_var:12.4f}",
                 "  layer_norm(x) in float32: every value within 1e-6 of the exact one (minigrad centers with a "
                 "float64 mean)")


# --------------------------------------------------------------------------- 4. each norm's gradient in bf16
def _norm_cases():
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((8, 4, 64)) * 3 + 1).astype(np.float32)
    return {
        "layer_norm": (lambda L, t: L.nn.functional.layer_norm(t, (64,)), x),
        "rms_norm": (lambda L, t: L.nn.functional.rms_norm(t, (64,)), x),
        "batch_norm": (lambda L, t: L.nn.functional.batch_norm(t, None, None, training=True), x),
        "group_norm": (lambda L, t: L.nn.functional.group_norm(t, 2), x),
        "instance_norm": (lambda L, t: L.nn.functional.instance_norm(t), x),
    }


def _composite_bf16(name, t):
    """The norm written as plain ops on the bfloat16 tensor, every op rounding to bfloat16 (no upcast)."""
    if name == "rms_norm":
        return t * ((t * t).mean(-1, keepdim=True) + 1e-5).rsqrt()
    axes = {"layer_norm": (-1,), "batch_norm": (0, 2), "instance_norm": (2,)}.get(name)
    if name == "group_norm":
        g = t.reshape(8, 2, 128)
        c = g - g.mean(-1, keepdim=True)
        return (c * ((c * c).mean(-1, keepdim=True) + 1e-5).rsqrt()).reshape(t.shape)
    c = t - t.mean(axes, keepdim=True)
    return c * ((c * c).mean(axes, keepdim=True) + 1e-5).rsqrt()


def _ulps(got, exact):
    """Distance of bfloat16 values ``got`` from float64 ``exact`` in ulps of bfloat16 at ``exact``."""
    spacing = np.spacing(np.abs(exact).astype(np.float32).astype(BF16)).astype(np.float64)
    return np.abs(got.astype(np.float64) - exact) / spacing


@example("lowp.norm_gradients")
def norm_gradients():
    rows = []
    g = np.random.default_rng(3).standard_normal((8, 4, 64)).astype(np.float32).astype(BF16)
    for name, (fn, x) in _norm_cases().items():
        xb = x.astype(BF16)
        t = mg.tensor(xb.view(np.int16)).view(mg.bfloat16).requires_grad_()
        fn(mg, t).backward(mg.tensor(g.view(np.int16)).view(mg.bfloat16))
        t64 = mg.tensor(xb.astype(np.float64), requires_grad=True)
        fn(mg, t64).backward(mg.tensor(g.astype(np.float64)))
        exact = t64.grad.numpy()
        scale = np.abs(exact).max()
        fused = np.abs(t.grad.float().numpy() - exact).max() / scale
        c = mg.tensor(xb.view(np.int16)).view(mg.bfloat16).requires_grad_()
        _composite_bf16(name, c).backward(mg.tensor(g.view(np.int16)).view(mg.bfloat16))
        naive = np.abs(c.grad.float().numpy() - exact).max() / scale
        fused, naive = fused * 2 ** 7, naive * 2 ** 7          # in ulps of the largest |dx|
        assert fused < 0.5 < naive, (name, fused, naive)
        rows.append(f"| {name} | {_below(fused)} | {_above(naive)} |")
    return "\n".join(["| norm | fused: float32 inside, one rounding (minigrad) | every op in bfloat16 |",
                      "|---|---|---|"] + rows)


def _below(value, step=0.5):
    """``value`` as a bound that holds on any machine: "below" the next multiple of ``step``."""
    bound = math.floor(value / step + 1) * step
    assert value < bound
    return f"below {bound:g}"


def _above(value, step=0.5):
    bound = math.floor(value / step) * step
    assert value > bound
    return f"above {bound:g}"


def _share(p):
    return "none" if p == 0 else "below 1%" if p < 0.01 else f"about {p:.0%}"


# --------------------------------------------------------------------------- 5. RMSNorm's casting modes
@example("lowp.casting_modes")
def casting_modes():
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((64, WIDTH)) * 2).astype(np.float32).astype(BF16)
    w = (1 + 0.1 * rng.standard_normal(WIDTH)).astype(np.float32).astype(BF16)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    exact = x64 / np.sqrt((x64 ** 2).mean(-1, keepdims=True) + 1e-6) * w64
    lines = ["| casting | what the model's code does | largest error (bfloat16 ulps of the result) | "
             "results off by 1 ulp or more |",
             "|---|---|---|---|"]
    code = {"pytorch": "`F.rms_norm`: normalize and multiply by w in float32, round once",
            "llama": "`self._norm(x.float()).type_as(x) * self.weight`",
            "minimind": "`self.weight * (x.float() * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)).type_as(x)`",
            "none": "`x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * self.weight`, no cast"}
    worst = {}
    for casting in ("pytorch", "llama", "minimind", "none"):
        t = mg.tensor(x.view(np.int16)).view(mg.bfloat16)
        wt = mg.tensor(w.view(np.int16)).view(mg.bfloat16)
        y = F.rms_norm(t, (WIDTH,), wt, 1e-6, casting=casting).float().numpy()
        ulps = _ulps(y, exact)
        worst[casting] = ulps.max()
        largest = "0.5: correctly rounded" if ulps.max() <= 0.5 + 1e-6 else _below(ulps.max())
        lines.append(f"| `{casting}` | {code[casting]} | {largest} | {_share(np.mean(ulps >= 1))} |")
    assert worst["pytorch"] <= 0.5 + 1e-6 and worst["llama"] < worst["none"], worst
    return "\n".join(lines)
