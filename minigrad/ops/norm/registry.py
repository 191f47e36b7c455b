"""The registry of norms: one ``NormSpec`` per norm, the one list that everything "for every norm" iterates.

What reads it: ``minigrad.nn.functional`` and ``minigrad.nn`` (the exports: ``ops/norm/__init__.py`` and
``nn/normalization.py``), the LLaMA example's ``--norm`` choices (``examples/llama.py``), the norm benchmark
(``bench/bench_norms.py``), the Jacobian example (``examples/jacobians.py``), the derivation pages
(``docs/derivations/build.py`` checks each ``page`` quotes its ``source``), and the tests' matrices: the
``check_norm`` kit (``tests/norm_kit.py``: gradcheck on both backends, twins, gradgradcheck, the PyTorch
mirror, a wrong backward caught, bad input), the double-backward, kernel, device and bad-input matrices.
``tests/test_norm_registry.py`` fails when a registered norm is missing from any of them.

Adding a norm: its file under ``minigrad/ops/norm/`` (formula, Function, composite twin, public function,
module), an entry below, a page in ``docs/derivations/``, a ``tests/test_norm_<name>.py`` that calls
``check_norm``, a README row, and a numba twin only if it pays (docs/where_things_live.md).

Each entry's ``call(fn, x, *params)`` runs a functional form (minigrad's, its composite twin, or PyTorch's)
on a small case: ``shape`` is x's shape, ``params`` the parameters' (name, shape) in call order. Everything
is named by strings and imported when asked for, so importing the registry imports no norm.
"""
import importlib
from dataclasses import dataclass, field


@dataclass(frozen=True)
class NormSpec:
    name: str                     # the module's name: "RMSNorm"
    functional: str               # minigrad.nn.functional.<functional>
    source: str                   # the file (under minigrad/ops/norm/) with the formula, Function, composite twin
    composite: str                # the composite twin in ``source``
    page: str                     # docs/derivations/<page>
    paper: str
    modules: tuple                # the module classes (minigrad.nn.<name>)
    module_source: str            # the file (under minigrad/) that holds them
    module_args: tuple            # constructor arguments for the small case
    shape: tuple                  # x of the small case
    params: tuple                 # ((name, shape), ...) of the small case, in call order
    call: object                  # call(fn, x, *params) -> y: the small case through a functional form
    torch_twin: object = None     # torch_twin(torch, x, *params): PyTorch's same function (its F, or torch ops)
    kind: str = "row"             # "row" (trailing dims), "channel" (N, C, *), "elementwise"
    transformer: str = None       # the LLaMA example's --norm name, if it can stand in a Transformer
    make_transformer_norm: object = None   # (nn, d, eps) -> module for features of size d
    transformer_params: object = None      # d -> {name: shape} of that module's parameters (allocates nothing)
    second_order: str = "formula"  # "formula": graph_backward is the backward on Tensors; "fused": a hand-derived
    #                                double-backward Function too (checked against the composite twin)
    kernels: tuple = ()           # reference kernels with a numba twin (tests/test_kernels.py)
    scalar_params: tuple = ()     # parameters that are one number (0-d or (1,))
    takes_device: bool = True     # whether the modules take device= and dtype= (PyTorch's LocalResponseNorm does not)
    notes: dict = field(default_factory=dict)

    def load(self, attr=None, where=None):
        """The object ``attr`` (default: the functional) of ``source`` (or ``where``, a path under minigrad/)."""
        module = importlib.import_module(f"minigrad.{where or 'ops.norm.' + self.source}")
        return getattr(module, attr or self.functional)

    def functional_form(self):
        return self.load()

    def composite_form(self):
        return self.load(self.composite)

    def module_class(self, i=0):
        return self.load(self.modules[i], self.module_source)


def _f(name):
    """PyTorch's own functional ``name`` as a torch twin."""
    return lambda torch, x, *p: _CALLS[name](getattr(torch.nn.functional, name), x, *p)


def _scale_norm_torch(torch, x, g, eps=1e-5):
    return g * x / torch.linalg.vector_norm(x, dim=-1, keepdim=True).clamp_min(eps)


def _dynamic_tanh_torch(torch, x, a, w, b):
    return torch.tanh(a * x) * w + b


def _scale_norm_jacobian(x, g, eps=1e-5):
    """dy/dx of ScaleNorm (NumPy, x.ravel() order): per row g/s (I - [n > eps] u u^T), u = x/s (scalenorm.md)."""
    import numpy as np
    rows = x.reshape(-1, x.shape[-1])
    blocks = []
    for row in rows:
        n = np.linalg.norm(row)
        s = max(n, eps)
        u = row / s
        blocks.append(g / s * (np.eye(row.size) - (n > eps) * np.outer(u, u)))
    J = np.zeros((x.size, x.size))
    for i, block in enumerate(blocks):
        J[i * row.size:(i + 1) * row.size, i * row.size:(i + 1) * row.size] = block
    return J


def _dynamic_tanh_jacobian(x, a, w, b):
    """dy/dx of DyT (NumPy): diag(w * alpha * (1 - tanh(alpha x)^2)) (dynamictanh.md)."""
    import numpy as np
    return np.diag((w * a * (1 - np.tanh(a * x) ** 2)).ravel())


_CALLS = {
    "rms_norm": lambda f, x, w: f(x, (x.shape[-1],), w),
    "layer_norm": lambda f, x, w, b: f(x, (x.shape[-1],), w, b),
    "batch_norm": lambda f, x, w, b: f(x, None, None, w, b, True),
    "instance_norm": lambda f, x, w, b: f(x, None, None, w, b),
    "group_norm": lambda f, x, w, b: f(x, 2, w, b),
    "local_response_norm": lambda f, x: f(x, 3),
    "scale_norm": lambda f, x, g: f(x, g),
    "dynamic_tanh": lambda f, x, a, w, b: f(x, a, w, b),
}

NORMS = [
    NormSpec("RMSNorm", "rms_norm", "rmsnorm", "rms_norm_composite", "rmsnorm.md",
             "Zhang & Sennrich 2019, Root Mean Square Layer Normalization",
             ("RMSNorm",), "nn.row_norms", (4,), (2, 3, 4), (("weight", (4,)),), _CALLS["rms_norm"], _f("rms_norm"),
             transformer="rmsnorm", make_transformer_norm=lambda nn, d, eps: nn.RMSNorm(d, eps=eps),
             transformer_params=lambda d: {"weight": (d,)},
             second_order="fused", kernels=("rms_norm_forward", "rms_norm_backward")),
    NormSpec("LayerNorm", "layer_norm", "layernorm", "layer_norm_composite", "layernorm.md",
             "Ba, Kiros & Hinton 2016, Layer Normalization",
             ("LayerNorm",), "nn.row_norms", (4,), (2, 3, 4), (("weight", (4,)), ("bias", (4,))),
             _CALLS["layer_norm"], _f("layer_norm"),
             transformer="layernorm", make_transformer_norm=lambda nn, d, eps: nn.LayerNorm(d, eps=eps),
             transformer_params=lambda d: {"weight": (d,), "bias": (d,)},
             second_order="fused", kernels=("layer_norm_forward", "layer_norm_backward")),
    NormSpec("BatchNorm", "batch_norm", "batchnorm", "batch_norm_composite", "batchnorm.md",
             "Ioffe & Szegedy 2015, Batch Normalization",
             ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d"), "nn.channel_norms", (3,), (4, 3, 2),
             (("weight", (3,)), ("bias", (3,))), _CALLS["batch_norm"], _f("batch_norm"), kind="channel",
             second_order="fused", kernels=("batch_norm_train", "batch_norm_forward", "batch_norm_backward")),
    NormSpec("InstanceNorm", "instance_norm", "groupnorm", "instance_norm_composite", "instancenorm.md",
             "Ulyanov, Vedaldi & Lempitsky 2016, Instance Normalization",
             ("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"), "nn.channel_norms", (3,), (2, 3, 4),
             (("weight", (3,)), ("bias", (3,))), _CALLS["instance_norm"], _f("instance_norm"), kind="channel",
             second_order="fused", kernels=("group_norm_forward", "group_norm_backward")),
    NormSpec("GroupNorm", "group_norm", "groupnorm", "group_norm_composite", "groupnorm.md",
             "Wu & He 2018, Group Normalization",
             ("GroupNorm",), "nn.channel_norms", (2, 4), (2, 4, 3), (("weight", (4,)), ("bias", (4,))),
             _CALLS["group_norm"], _f("group_norm"), kind="channel",
             second_order="fused", kernels=("group_norm_forward", "group_norm_backward")),
    NormSpec("LocalResponseNorm", "local_response_norm", "localresponse", "local_response_norm_composite",
             "localresponsenorm.md", "Krizhevsky, Sutskever & Hinton 2012, ImageNet Classification (AlexNet)",
             ("LocalResponseNorm",), "nn.channel_norms", (3,), (2, 5, 3), (), _CALLS["local_response_norm"],
             _f("local_response_norm"), kind="channel", takes_device=False,
             kernels=("local_response_norm_forward", "local_response_norm_backward")),
    NormSpec("ScaleNorm", "scale_norm", "scalenorm", "scale_norm_composite", "scalenorm.md",
             "Nguyen & Salazar 2019, Transformers without Tears",
             ("ScaleNorm",), "ops.norm.scalenorm", (4,), (2, 3, 4), (("scale", ()),), _CALLS["scale_norm"],
             _scale_norm_torch, transformer="scalenorm",
             make_transformer_norm=lambda nn, d, eps: nn.ScaleNorm(d, eps=eps),
             kernels=("scale_norm_forward", "scale_norm_backward"),
             transformer_params=lambda d: {"scale": ()}, scalar_params=("scale",),
             notes={"jacobian": _scale_norm_jacobian}),
    NormSpec("DynamicTanh", "dynamic_tanh", "dynamictanh", "dynamic_tanh_composite", "dynamictanh.md",
             "Zhu, Chen, He, LeCun & Liu 2025, Transformers without Normalization",
             ("DynamicTanh",), "ops.norm.dynamictanh", (4,), (2, 3, 4),
             (("alpha", (1,)), ("weight", (4,)), ("bias", (4,))), _CALLS["dynamic_tanh"], _dynamic_tanh_torch,
             kind="elementwise", transformer="dyt",
             make_transformer_norm=lambda nn, d, eps: nn.DynamicTanh(d),
             transformer_params=lambda d: {"alpha": (1,), "weight": (d,), "bias": (d,)}, scalar_params=("alpha",),
             kernels=("dynamic_tanh_forward", "dynamic_tanh_backward"), notes={"jacobian": _dynamic_tanh_jacobian}),
]

BY_NAME = {spec.name: spec for spec in NORMS}


def transformer_norms():
    """{--norm name: spec} of the norms that can stand in a Transformer block (features of size d)."""
    return {spec.transformer: spec for spec in NORMS if spec.transformer}


def readme_rows():
    """The README's table of norms, one Markdown row per registered norm."""
    rows = ["| norm | functional | module(s) | derivation | second order | numba kernel |", "|---|---|---|---|---|---|"]
    for s in NORMS:
        rows.append(f"| {s.name} ({s.paper}) | `F.{s.functional}` | {', '.join(f'`nn.{m}`' for m in s.modules)} | "
                    f"[{s.page}](docs/derivations/{s.page}) | {s.second_order} | {'yes' if s.kernels else 'no'} |")
    return "\n".join(rows)
