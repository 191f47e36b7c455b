"""RMSNorm and LayerNorm modules: normalize each row over the trailing ``normalized_shape`` dims.

Both hold an elementwise ``weight`` (ones) and, where present, ``bias`` (zeros) of shape
``normalized_shape``, with PyTorch's names, so ``state_dict`` keys match ``torch.nn``'s.
``forward`` calls the fused functional form (``F.rms_norm`` / ``F.layer_norm``); the composite
twins are ``minigrad.ops.norm.rmsnorm.rms_norm_composite`` and ``minigrad.ops.norm.layernorm.layer_norm_composite``.
"""
from ..autograd import no_grad
from ..creation import empty
from ..ops.norm.layernorm import layer_norm
from ..ops.norm.rms_casting import check_casting
from ..ops.norm.rmsnorm import check_partial, rms_norm
from ..ops.norm.rows import as_normalized_shape
from ..tensor import check_device
from .module import Module, Parameter

__all__ = ["LayerNorm", "RMSNorm"]


class _RowNorm(Module):
    """Parameters shared by the row norms: weight (ones) if ``elementwise_affine``, and bias (zeros) if
    also ``bias``; otherwise they are registered as None, as PyTorch does."""

    def __init__(self, normalized_shape, eps, elementwise_affine, bias, device, dtype):
        super().__init__()
        check_device(device)
        self.normalized_shape = as_normalized_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        affine = [("weight", elementwise_affine), ("bias", elementwise_affine and bias)]
        for name, present in affine:
            self.register_parameter(name, Parameter(empty(self.normalized_shape, dtype=dtype)) if present else None)
        self.reset_parameters()

    def reset_parameters(self):
        """weight = 1, bias = 0 (in place: optimizers holding the parameters keep working)."""
        with no_grad():
            if self.weight is not None:
                self.weight.fill_(1.0)
            if self.bias is not None:
                self.bias.fill_(0.0)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class RMSNorm(_RowNorm):
    """``torch.nn.RMSNorm``: y = x / sqrt(mean(x^2) + eps) * weight over the trailing ``normalized_shape``.

    ``eps=None`` is the machine epsilon of the compute dtype (float32 for float16 input).
    minigrad's variants (keyword-only, off by default; see ``minigrad.ops.norm.rmsnorm``):
    ``bias=True`` adds a bias parameter (zeros), ``eps_inside_sqrt=False`` uses x / (rms + eps),
    and ``partial=p`` is partial RMSNorm, the RMS estimated from the first ceil(p * d) elements.
    ``casting`` says where float16/bfloat16 input is rounded: "pytorch" (``F.rms_norm``), "llama",
    "minimind", "gemma" (whose weight is an offset from 1, so it starts at zeros) or "none"
    (``minigrad.ops.norm.rms_casting``).
    """

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None, *, bias=False,
                 eps_inside_sqrt=True, partial=None, casting="pytorch"):
        check_partial(partial)
        check_casting(casting)
        super().__init__(normalized_shape, eps, elementwise_affine, bias, device, dtype)
        self.eps_inside_sqrt = eps_inside_sqrt
        self.partial = partial
        self.casting = casting
        if casting == "gemma":
            self.reset_parameters()

    def reset_parameters(self):
        """As every row norm's, except that Gemma's weight, the w in (1 + w), starts at zeros."""
        super().reset_parameters()
        if getattr(self, "casting", "pytorch") == "gemma" and self.weight is not None:
            with no_grad():
                self.weight.fill_(0.0)

    def forward(self, input):
        return rms_norm(input, self.normalized_shape, self.weight, self.eps, bias=self.bias,
                        eps_inside_sqrt=self.eps_inside_sqrt, partial=self.partial, casting=self.casting)

    def extra_repr(self):
        extras = [("bias", self.bias is not None, False), ("eps_inside_sqrt", self.eps_inside_sqrt, True),
                  ("partial", self.partial, None), ("casting", repr(self.casting), repr("pytorch"))]
        return super().extra_repr() + "".join(f", {name}={value}" for name, value, default in extras
                                              if value != default)


class LayerNorm(_RowNorm):
    """``torch.nn.LayerNorm``: y = (x - mean) / sqrt(var + eps) * weight + bias over the trailing
    ``normalized_shape`` (biased variance); ``bias=False`` keeps the weight and drops the bias."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__(normalized_shape, eps, elementwise_affine, bias, device, dtype)

    def forward(self, input):
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return super().extra_repr() + f", bias={self.bias is not None}"
