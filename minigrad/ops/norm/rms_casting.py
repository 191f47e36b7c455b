"""Where RMSNorm rounds under float16/bfloat16: the casting modes of ``rms_norm(..., casting=...)``.

The models that made RMSNorm common train in bfloat16 and write the norm with explicit casts, and the
casts differ in *where* the 16-bit rounding happens (docs/derivations/low_precision.md shows what each
costs). With x of a 16-bit dtype, xhat = x / sqrt(mean(x^2) + eps) and w the weight:

* ``"pytorch"`` (the default): ``torch.nn.functional.rms_norm``. xhat * w is computed in float32 and
  rounded once to x's dtype.
* ``"llama"``: LLaMA's ``self._norm(x.float()).type_as(x) * self.weight``. xhat is computed in float32
  and rounded to x's dtype, *then* multiplied by w in the dtype the two promote to (a float32 weight
  gives a float32 output): two roundings.
* ``"minimind"``: minimind's ``self.weight * (x.float() * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) +
  self.eps)).type_as(x)``. It looks like LLaMA's, but ``x.pow(2)`` squares the 16-bit x, so x^2, its
  mean, + eps and rsqrt are each rounded to 16 bits: rstd carries a 16-bit rounding before the float32
  product with x.float(); then as LLaMA.
* ``"gemma"``: Gemma's ``(self._norm(x.float()) * (1.0 + self.weight.float())).type_as(x)``. The weight
  is an offset from 1 (zeros at initialization, ``nn.RMSNorm(..., casting="gemma")`` makes it so) and the
  multiply is done in float32: one rounding, at the end.
* ``"none"``: the formula with no cast, ``x * rsqrt(mean(x*x) + eps) * w``, every op in x's dtype. Each op
  computes in float32 and rounds its result, so x*x, its mean, rsqrt and both products each round: what
  code that forgets the upcast gets (and, in float16, x*x overflows above |x| = 256).

For float32 and float64 input every mode but ``"gemma"`` (whose weight means 1 + w) gives ``"pytorch"``'s
values. The float32 normalization is ``RMSNormFunction`` itself (its kernels, its backward); the casts and
products around it are minigrad ops, so the gradients follow the same rounding points as PyTorch running
the reference code.
"""
from ...dtypes import compute_dtype, float32

CASTINGS = ("pytorch", "llama", "minimind", "gemma", "none")


def check_casting(casting):
    if casting not in CASTINGS:
        raise ValueError(f"casting must be one of {', '.join(map(repr, CASTINGS))} (where RMSNorm rounds under "
                         f"float16/bfloat16), but got casting={casting!r}")


def cast_rms_norm(normalize, input, weight, bias, eps, casting):
    """RMSNorm with the casting mode ``casting`` (not "pytorch"); ``normalize(x, eps, scaled=None)`` is xhat of x
    (``scaled * rstd(x)`` if given), with the row options (partial, eps_inside_sqrt) already bound: by the fused
    Function, or for "none" and "minimind" by ops in x's own dtype."""
    if casting == "none":
        xhat = normalize(input, eps)                       # every op in x's own dtype (rmsnorm.rms_rows)
        y = xhat if weight is None else xhat * weight
        return y if bias is None else y + bias
    wide = input.to(float32) if input.dtype != compute_dtype(input.dtype) else input   # x.float() for 16-bit x
    if casting == "minimind":                              # rstd of the 16-bit x, times x.float()
        xhat = normalize(input, eps, scaled=wide)
    else:
        xhat = normalize(wide, eps)                        # float32 (or x's dtype when x is wider)
    if casting in ("llama", "minimind"):
        y = xhat.to(input.dtype)                           # .type_as(x): the first rounding
        y = y if weight is None else y * weight            # the second, in the promoted dtype
        return y if bias is None else y + bias
    scale = 1.0 if weight is None else 1.0 + weight.to(xhat.dtype)   # gemma: (1 + w.float()), multiplied in float32
    y = xhat * scale
    if bias is not None:
        y = y + bias.to(xhat.dtype)
    return y.to(input.dtype)                               # .type_as(x): the one rounding
