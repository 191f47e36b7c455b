"""The generated bad-input table: every public function, module, optimizer and scheduler called with bad
(and edge-case) arguments, each call written once against ``lib`` and run in minigrad and in PyTorch.

A case is ``(id, call)`` where ``call(c)`` uses ``c.lib`` (``minigrad`` or ``torch``), ``c.F`` (its
``nn.functional``), ``c.t(array_like, grad=False)`` to make an input tensor (recorded, so the test can check
afterwards that the call changed none of its inputs) and ``c.mod(module)`` to give a module's parameters fixed
values (so outputs can be compared). ``tests/test_bad_input.py`` runs each case in both libraries: PyTorch
raises -> minigrad raises the same kind of exception; PyTorch computes -> minigrad computes the same result.

The families are built as cross products of functions and bad arguments, so a new public function gets the
whole set by being added to one list.
"""
import numpy as np

NAN, INF = float("nan"), float("inf")

M23 = np.arange(6.0).reshape(2, 3) / 4 - 0.5          # float64 2x3
V3 = np.array([0.5, -1.0, 2.0])
INT23 = np.arange(6).reshape(2, 3) - 2               # int64
BOOL3 = np.array([True, False, True])
SPECIAL = np.array([NAN, INF, -INF, 0.0, -0.0, 1.0])  # float64 with NaN and infinities
EMPTY = np.zeros((0, 3))
EMPTY_INNER = np.zeros((2, 0))
SCALAR = np.array(0.5)


class Context:
    """What a case sees of one library: ``lib``, ``F``, and recorded input tensors."""

    def __init__(self, lib):
        self.lib = lib
        self.F = lib.nn.functional
        self.nn = lib.nn
        self.optim = lib.optim
        self.inputs = []       # (tensor, array at creation) in creation order
        self.modules = []      # (module, its state_dict's arrays once its parameters were set)

    def t(self, value, grad=False, dtype=None):
        arr = np.array(value, dtype=dtype)
        t = self.lib.tensor(arr, requires_grad=grad)
        self.inputs.append((t, arr.copy()))
        return t

    def mod(self, module):
        """``module`` with parameters set to fixed values (same in both libraries), recorded."""
        with self.lib.no_grad():
            for i, (_, p) in enumerate(sorted(module.named_parameters(), key=lambda kv: kv[0])):
                values = np.cos(np.arange(p.numel()) + i).reshape(tuple(p.shape)) / 2
                p.copy_(self.lib.tensor(values, dtype=p.dtype))
        self.modules.append((module, {k: np.array(v.detach().numpy()) for k, v in module.state_dict().items()}))
        return module

    def params(self, n=2):
        """``n`` float64 parameters (with gradients) for optimizer cases."""
        ps = [self.t(np.linspace(-1, 1, 3 + i), grad=True) for i in range(n)]
        for p in ps:
            p.grad = self.lib.ones_like(p)
        return ps

    def sgd(self, lr=0.1):
        return self.lib.optim.SGD(self.params(), lr=lr)


CASES = []


def case(name, call):
    CASES.append((name, call))


def family(prefix, functions, arguments):
    """The cross product: every ``(fname, f)`` in ``functions`` with every ``(aname, a)`` in ``arguments``;
    the case calls ``f(c, a)`` where ``a`` is a value, or ``a(c)`` for an argument built per library."""
    for fname, f in functions:
        for aname, a in arguments:
            case(f"{prefix}:{fname}:{aname}",
                 lambda c, f=f, a=a: f(c, a(c) if callable(a) else a))


# --------------------------------------------------------------------------- tensor-like arguments
NOT_TENSORS = [("list", [1.0, 2.0]), ("None", None), ("str", "x"), ("tuple", (1.0,)),
               ("ndarray", np.ones(2)), ("dict", {}), ("float", 1.5), ("int", 2), ("py_bool", True)]
EDGE_TENSORS = [("0d", lambda c: c.t(SCALAR)), ("empty", lambda c: c.t(EMPTY)),
                ("int64", lambda c: c.t(INT23)), ("bool", lambda c: c.t(BOOL3)),
                ("special", lambda c: c.t(SPECIAL)), ("float32", lambda c: c.t(M23, dtype=np.float32)),
                ("0d_int", lambda c: c.t(np.array(3))), ("empty_inner", lambda c: c.t(EMPTY_INNER)),
                ("grad_special", lambda c: c.t(SPECIAL, grad=True))]

UNARY = ["abs", "neg", "exp", "log", "sqrt", "rsqrt", "square", "tanh", "sigmoid", "relu", "sin", "cos", "log1p",
         "expm1", "reciprocal", "erf", "log2", "log10", "sign", "floor", "ceil", "trunc", "round", "frac",
         "isnan", "isfinite", "isinf", "logical_not"]
family("unary", [(n, lambda c, x, n=n: getattr(c.lib, n)(x)) for n in UNARY], NOT_TENSORS + EDGE_TENSORS)

BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "atan2", "eq", "ne", "lt", "le", "gt", "ge",
          "logical_and", "logical_or", "logical_xor"]
OTHERS = [("None", None), ("str", "x"), ("list", [1.0, 2.0, 3.0]), ("dict", {}),
          ("wrong_shape", lambda c: c.t(np.ones(4))), ("0d", lambda c: c.t(SCALAR)), ("empty", lambda c: c.t(EMPTY)),
          ("int64", lambda c: c.t(np.array([1, 2, 3]))), ("bool", lambda c: c.t(BOOL3)),
          ("special", lambda c: c.t(SPECIAL[:3])), ("nan_float", NAN), ("inf_float", INF), ("int", 2)]
family("binary_other", [(n, lambda c, y, n=n: getattr(c.lib, n)(c.t(V3), y)) for n in BINARY], OTHERS)
family("binary_input", [(n, lambda c, x, n=n: getattr(c.lib, n)(x, c.t(V3))) for n in BINARY],
       [a for a in OTHERS if a[0] not in ("nan_float", "inf_float", "int")])
family("binary_bool_pair", [(n, lambda c, _, n=n: getattr(c.lib, n)(c.t(BOOL3), c.t(BOOL3[::-1].copy())))
                            for n in BINARY], [("bools", None)])
family("binary_int_pair", [(n, lambda c, _, n=n: getattr(c.lib, n)(c.t(INT23), c.t(INT23[::-1].copy())))
                           for n in BINARY], [("ints", None)])

# Every public function of minigrad and minigrad.nn.functional whose first parameter is a tensor and that PyTorch
# has under the same name, called with a non-Tensor first argument (found by name: a new function is covered).
def _tensor_first_functions(namespace, torch_namespace_name):
    import inspect

    import minigrad as mg
    module = mg if namespace == "mg" else mg.nn.functional
    names = []
    for name in sorted(dir(module)):
        f = getattr(module, name)
        if name.startswith("_") or not inspect.isfunction(f):
            continue
        params = list(inspect.signature(f).parameters)
        if params and params[0] in ("input", "tensor", "tensors", "condition", "real", "abs"):
            names.append(name)
    return [(f"{torch_namespace_name}.{n}", lambda c, x, n=n, ns=namespace: getattr(c.lib if ns == "mg" else c.F, n)(x))
            for n in names]


_NOT_TENSOR_FIRST = [("list", [1.0, 2.0]), ("None", None), ("str", "x")]
family("public_first_arg", _tensor_first_functions("mg", "torch") + _tensor_first_functions("F", "F"),
       _NOT_TENSOR_FIRST)


# --------------------------------------------------------------------------- reductions and dims
REDUCTIONS = ["sum", "mean", "amax", "amin", "argmax", "argmin", "logsumexp", "std", "var", "all", "any",
              "cumsum", "cumprod", "softmax", "log_softmax", "max", "min"]
BAD_DIMS = [("dim5", 5), ("dim-4", -4), ("dim2", 2), ("dim-3", -3), ("dim_float", 1.5), ("dim_str", "a"),
            ("dim_tuple_dup", (0, 0)), ("dim_tuple_oob", (0, 3)), ("dim_list", [0, 1]), ("dim_-1", -1),
            ("dim_tuple_empty", ())]
family("reduce_dim", [(n, lambda c, d, n=n: getattr(c.lib, n)(c.t(M23), d)) for n in REDUCTIONS], BAD_DIMS)
family("reduce_0d", [(n, lambda c, d, n=n: getattr(c.lib, n)(c.t(SCALAR), d)) for n in REDUCTIONS],
       [("dim0", 0), ("dim-1", -1), ("dim1", 1), ("dim-2", -2)])
family("reduce_empty", [(n, lambda c, d, n=n: getattr(c.lib, n)(c.t(EMPTY), d)) for n in REDUCTIONS],
       [("dim0", 0), ("dim1", 1)])
family("reduce_all", [(n, lambda c, x, n=n: getattr(c.lib, n)(x))
                      for n in ["sum", "mean", "amax", "amin", "argmax", "argmin", "std", "var", "all", "any",
                                "max", "min", "norm"]],
       NOT_TENSORS[:4] + [("0d", lambda c: c.t(SCALAR)), ("empty", lambda c: c.t(EMPTY)),
                          ("int64", lambda c: c.t(INT23)), ("bool", lambda c: c.t(BOOL3)),
                          ("special", lambda c: c.t(SPECIAL))])

# --------------------------------------------------------------------------- shape ops
SHAPE_CALLS = [
    ("reshape_float", lambda c: c.lib.reshape(c.t(M23), (2.5, 2))),
    ("reshape_two_minus1", lambda c: c.lib.reshape(c.t(M23), (-1, -1))),
    ("reshape_wrong_numel", lambda c: c.lib.reshape(c.t(M23), (4, 2))),
    ("reshape_negative", lambda c: c.lib.reshape(c.t(M23), (-2, -3))),
    ("reshape_none", lambda c: c.lib.reshape(c.t(M23), None)),
    ("reshape_str", lambda c: c.lib.reshape(c.t(M23), "ab")),
    ("reshape_empty_minus1", lambda c: c.lib.reshape(c.t(EMPTY), (0, -1))),
    ("reshape_empty_ok", lambda c: c.lib.reshape(c.t(EMPTY), (3, 0))),
    ("reshape_list_input", lambda c: c.lib.reshape([1.0, 2.0], (2,))),
    ("view_float", lambda c: c.t(M23).view(2.5, 2)),
    ("permute_short", lambda c: c.lib.permute(c.t(M23), (0,))),
    ("permute_dup", lambda c: c.lib.permute(c.t(M23), (0, 0))),
    ("permute_oob", lambda c: c.lib.permute(c.t(M23), (0, 2))),
    ("permute_float", lambda c: c.lib.permute(c.t(M23), (0, 1.0))),
    ("transpose_oob", lambda c: c.lib.transpose(c.t(M23), 0, 2)),
    ("transpose_neg_oob", lambda c: c.lib.transpose(c.t(M23), 0, -3)),
    ("transpose_float", lambda c: c.lib.transpose(c.t(M23), 0, 1.0)),
    ("transpose_0d", lambda c: c.lib.transpose(c.t(SCALAR), 0, -1)),
    ("squeeze_oob", lambda c: c.lib.squeeze(c.t(M23), 2)),
    ("squeeze_0d", lambda c: c.lib.squeeze(c.t(SCALAR), 0)),
    ("squeeze_tuple", lambda c: c.lib.squeeze(c.t(np.ones((1, 2, 1))), (0, 2))),
    ("unsqueeze_oob", lambda c: c.lib.unsqueeze(c.t(M23), 3)),
    ("unsqueeze_neg_oob", lambda c: c.lib.unsqueeze(c.t(M23), -4)),
    ("unsqueeze_0d", lambda c: c.lib.unsqueeze(c.t(SCALAR), -1)),
    ("unsqueeze_float", lambda c: c.lib.unsqueeze(c.t(M23), 1.0)),
    ("flatten_oob", lambda c: c.lib.flatten(c.t(M23), 0, 2)),
    ("flatten_reversed", lambda c: c.lib.flatten(c.t(M23), 1, 0)),
    ("flatten_0d", lambda c: c.lib.flatten(c.t(SCALAR))),
    ("cat_empty_list", lambda c: c.lib.cat([])),
    ("cat_mismatch", lambda c: c.lib.cat([c.t(M23), c.t(np.ones((2, 2)))], 0)),
    ("cat_rank", lambda c: c.lib.cat([c.t(M23), c.t(V3)])),
    ("cat_oob", lambda c: c.lib.cat([c.t(M23), c.t(M23)], 2)),
    ("cat_not_list", lambda c: c.lib.cat(c.t(M23))),
    ("cat_none", lambda c: c.lib.cat([c.t(M23), None])),
    ("cat_0d", lambda c: c.lib.cat([c.t(SCALAR), c.t(SCALAR)])),
    ("cat_legacy_empty", lambda c: c.lib.cat([c.t(M23), c.t(np.zeros(0))])),
    ("cat_dtypes", lambda c: c.lib.cat([c.t(M23), c.t(INT23)])),
    ("stack_empty", lambda c: c.lib.stack([])),
    ("stack_mismatch", lambda c: c.lib.stack([c.t(M23), c.t(M23.T.copy())])),
    ("stack_oob", lambda c: c.lib.stack([c.t(M23), c.t(M23)], 4)),
    ("stack_0d", lambda c: c.lib.stack([c.t(SCALAR), c.t(SCALAR)])),
    ("split_zero", lambda c: c.lib.split(c.t(M23), 0, 1)),
    ("split_negative", lambda c: c.lib.split(c.t(M23), -1, 1)),
    ("split_sections_bad", lambda c: c.lib.split(c.t(M23), [1, 1], 1)),
    ("split_oob", lambda c: c.lib.split(c.t(M23), 1, 2)),
    ("chunk_zero", lambda c: c.lib.chunk(c.t(M23), 0)),
    ("chunk_negative", lambda c: c.lib.chunk(c.t(M23), -2)),
    ("chunk_oob", lambda c: c.lib.chunk(c.t(M23), 2, 3)),
    ("expand_bad", lambda c: c.t(M23).expand(3, 3)),
    ("expand_fewer", lambda c: c.t(M23).expand(3)),
    ("expand_negative_new", lambda c: c.t(V3).expand(-1, 3)),
    ("expand_float", lambda c: c.t(V3).expand(2.0, 3)),
    ("repeat_fewer", lambda c: c.t(M23).repeat(2)),
    ("repeat_negative", lambda c: c.t(M23).repeat(-1, 1)),
    ("repeat_float", lambda c: c.t(M23).repeat(1.5, 1)),
    ("tril_1d", lambda c: c.lib.tril(c.t(V3))),
    ("triu_0d", lambda c: c.lib.triu(c.t(SCALAR))),
    ("tril_float_diag", lambda c: c.lib.tril(c.t(M23), 0.5)),
    ("narrow_oob", lambda c: c.lib.narrow(c.t(M23), 1, 2, 2)),
    ("narrow_negative_length", lambda c: c.lib.narrow(c.t(M23), 1, 0, -1)),
    ("narrow_dim_oob", lambda c: c.lib.narrow(c.t(M23), 2, 0, 1)),
    ("flip_oob", lambda c: c.lib.flip(c.t(M23), (2,))),
    ("flip_dup", lambda c: c.lib.flip(c.t(M23), (0, 0))),
    ("roll_oob", lambda c: c.lib.roll(c.t(M23), 1, 2)),
    ("roll_mismatch", lambda c: c.lib.roll(c.t(M23), (1, 2), (0,))),
    ("movedim_oob", lambda c: c.lib.movedim(c.t(M23), 0, 2)),
    ("movedim_dup", lambda c: c.lib.movedim(c.t(M23), (0, 0), (0, 1))),
    ("diagonal_same_dims", lambda c: c.lib.diagonal(c.t(M23), 0, 0, 0)),
    ("diagonal_oob", lambda c: c.lib.diagonal(c.t(M23), 0, 0, 2)),
    ("diag_3d", lambda c: c.lib.diag(c.t(np.ones((2, 2, 2))))),
    ("unbind_oob", lambda c: c.lib.unbind(c.t(M23), 2)),
    ("unbind_0d", lambda c: c.lib.unbind(c.t(SCALAR))),
    ("index_select_oob", lambda c: c.lib.index_select(c.t(M23), 1, c.t(np.array([0, 3])))),
    ("index_select_float_index", lambda c: c.lib.index_select(c.t(M23), 1, c.t(np.array([0.0])))),
    ("index_select_2d_index", lambda c: c.lib.index_select(c.t(M23), 1, c.t(np.array([[0]])))),
    ("index_select_negative", lambda c: c.lib.index_select(c.t(M23), 1, c.t(np.array([-1])))),
    ("index_select_oob_dim0", lambda c: c.lib.index_select(c.t(M23), 0, c.t(np.array([2])))),
    ("index_select_negative_1d", lambda c: c.lib.index_select(c.t(np.arange(3.0)), 0, c.t(np.array([-1])))),
    ("index_select_oob_3d_last", lambda c: c.lib.index_select(c.t(np.zeros((2, 3, 4))), 2, c.t(np.array([4])))),
    ("gather_oob", lambda c: c.lib.gather(c.t(M23), 1, c.t(np.array([[0, 3], [1, 1]])))),
    ("gather_float_index", lambda c: c.lib.gather(c.t(M23), 1, c.t(np.array([[0.0]])))),
    ("gather_rank", lambda c: c.lib.gather(c.t(M23), 1, c.t(np.array([0])))),
    ("scatter_oob", lambda c: c.lib.scatter(c.t(M23), 1, c.t(np.array([[5]])), c.t(np.ones((1, 1))))),
    ("masked_select_float_mask", lambda c: c.lib.masked_select(c.t(V3), c.t(V3))),
    ("masked_select_shape", lambda c: c.lib.masked_select(c.t(V3), c.t(np.array([True, False])))),
    ("where_float_cond", lambda c: c.lib.where(c.t(V3), c.t(V3), c.t(V3))),
    ("where_shape", lambda c: c.lib.where(c.t(BOOL3), c.t(V3), c.t(np.ones(2)))),
    ("masked_fill_float_mask", lambda c: c.lib.masked_fill(c.t(V3), c.t(V3), 0.0)),
    ("masked_fill_vector_value", lambda c: c.lib.masked_fill(c.t(V3), c.t(BOOL3), c.t(V3))),
    ("masked_fill_nan", lambda c: c.lib.masked_fill(c.t(V3), c.t(BOOL3), NAN)),
    ("sort_oob", lambda c: c.lib.sort(c.t(M23), 2)),
    ("argsort_oob", lambda c: c.lib.argsort(c.t(M23), -3)),
    ("topk_too_many", lambda c: c.lib.topk(c.t(V3), 4)),
    ("topk_negative", lambda c: c.lib.topk(c.t(V3), -1)),
    ("topk_float", lambda c: c.lib.topk(c.t(V3), 1.5)),
    ("topk_0d", lambda c: c.lib.topk(c.t(SCALAR), 1)),
    ("sort_empty", lambda c: c.lib.sort(c.t(EMPTY), 0)),
    ("matmul_0d", lambda c: c.lib.matmul(c.t(SCALAR), c.t(V3))),
    ("matmul_mismatch", lambda c: c.lib.matmul(c.t(M23), c.t(M23))),
    ("matmul_list", lambda c: c.lib.matmul(c.t(M23), [1.0, 2.0, 3.0])),
    ("matmul_none", lambda c: c.lib.matmul(c.t(M23), None)),
    ("matmul_int_float", lambda c: c.lib.matmul(c.t(INT23), c.t(M23.T.copy()))),
    ("matmul_empty_inner", lambda c: c.lib.matmul(c.t(EMPTY_INNER, grad=True), c.t(np.zeros((0, 4)), grad=True))),
    ("matmul_empty_inner_backward", lambda c: _backward_sum(c, c.lib.matmul(
        c.t(EMPTY_INNER, grad=True), c.t(np.zeros((0, 4)), grad=True)))),
    ("matmul_empty_batch", lambda c: c.lib.matmul(c.t(np.zeros((0, 2, 3))), c.t(np.ones((3, 2))))),
    ("bmm_2d", lambda c: c.lib.bmm(c.t(M23), c.t(M23.T.copy()))),
    ("bmm_batch_mismatch", lambda c: c.lib.bmm(c.t(np.ones((2, 2, 3))), c.t(np.ones((3, 3, 2))))),
    ("outer_2d", lambda c: c.lib.outer(c.t(M23), c.t(V3))),
    ("einsum_bad", lambda c: c.lib.einsum("ij,jk->ik", c.t(M23), c.t(M23))),
    ("einsum_operands", lambda c: c.lib.einsum("ij->i", c.t(M23), c.t(M23))),
    ("norm_p_str", lambda c: c.lib.norm(c.t(M23), p="bad")),
    ("norm_dim_oob", lambda c: c.lib.norm(c.t(M23), dim=2)),
    ("std_correction_big", lambda c: c.lib.std(c.t(V3), correction=5)),
    ("var_one_element", lambda c: c.lib.var(c.t(np.ones(1)))),
    ("repeat_interleave_negative", lambda c: c.lib.repeat_interleave(c.t(V3), -1)),
    ("clamp_none", lambda c: c.lib.clamp(c.t(V3))),
    ("clamp_str", lambda c: c.lib.clamp(c.t(V3), "a")),
    ("clamp_nan_bound", lambda c: c.lib.clamp(c.t(V3), NAN)),
    ("clamp_list", lambda c: c.lib.clamp([1.0], 0.0)),
    ("clamp_int_float", lambda c: c.lib.clamp(c.t(INT23), 0.5)),
    ("clamp_bool", lambda c: c.lib.clamp(c.t(BOOL3), 0)),
    ("where_scalar_args", lambda c: c.lib.where(c.t(BOOL3), 1.0, 0.0)),
]
for name, call in SHAPE_CALLS:
    case(f"shape:{name}", call)


def _backward_sum(c, out):
    out.sum().backward()
    return [t.grad for t, _ in c.inputs if t.requires_grad]


# --------------------------------------------------------------------------- creation
SIZES = [("float", 2.5), ("negative", -1), ("str", "a"), ("None", None), ("tuple_float", (2, 2.5)),
         ("tuple_negative", (2, -1)), ("list_float", [2.5]), ("zero", 0), ("empty_tuple", ()),
         ("bool", True), ("nested", ((2,),)), ("ndarray", np.array([2, 3])), ("np_int", np.int64(3)),
         ("huge_negative", -(2 ** 40)), ("float_int", 2.0), ("tensor", lambda c: c.t(np.array(2)))]
family("size", [(n, lambda c, s, n=n: getattr(c.lib, n)(s)) for n in ["zeros", "ones", "empty", "rand", "randn"]],
       SIZES)
family("size_pair", [(n, lambda c, s, n=n: getattr(c.lib, n)(2, s)) for n in ["zeros", "ones", "randn"]],
       [a for a in SIZES if not isinstance(a[1], (tuple, list, np.ndarray)) or a[0] == "ndarray"])
family("full_size", [("full", lambda c, s: c.lib.full(s, 1.5))],
       [a for a in SIZES if a[0] not in ("tensor",)] + [("list_ok", [2, 3])])
CREATION = [
    ("arange_step0", lambda c: c.lib.arange(0, 10, 0)),
    ("arange_wrong_sign", lambda c: c.lib.arange(0, 10, -1)),
    ("arange_inf", lambda c: c.lib.arange(0, INF)),
    ("arange_nan", lambda c: c.lib.arange(0, NAN)),
    ("arange_str", lambda c: c.lib.arange("a")),
    ("arange_none", lambda c: c.lib.arange(None)),
    ("arange_empty", lambda c: c.lib.arange(5, 5)),
    ("arange_float_step", lambda c: c.lib.arange(0, 1, 0.25)),
    ("arange_negative_end", lambda c: c.lib.arange(-3)),
    ("arange_bool_dtype", lambda c: c.lib.arange(3, dtype=c.lib.bool)),
    ("arange_tensor", lambda c: c.lib.arange(c.t(np.array(3)))),
    ("linspace_negative", lambda c: c.lib.linspace(0, 1, -1)),
    ("linspace_float_steps", lambda c: c.lib.linspace(0, 1, 2.5)),
    ("linspace_zero", lambda c: c.lib.linspace(0, 1, 0)),
    ("linspace_one", lambda c: c.lib.linspace(0, 1, 1)),
    ("linspace_str", lambda c: c.lib.linspace(0, 1, "3")),
    ("linspace_nan", lambda c: c.lib.linspace(0, NAN, 3)),
    ("logspace_negative", lambda c: c.lib.logspace(0, 1, -2)),
    ("logspace_float_steps", lambda c: c.lib.logspace(0, 1, 2.5)),
    ("eye_negative", lambda c: c.lib.eye(-1)),
    ("eye_float", lambda c: c.lib.eye(2.5)),
    ("eye_m_negative", lambda c: c.lib.eye(2, -3)),
    ("eye_m_float", lambda c: c.lib.eye(2, 1.5)),
    ("eye_none", lambda c: c.lib.eye(None)),
    ("eye_zero", lambda c: c.lib.eye(0)),
    ("tensor_str", lambda c: c.lib.tensor("abc")),
    ("tensor_ragged", lambda c: c.lib.tensor([[1.0, 2.0], [3.0]])),
    ("tensor_none", lambda c: c.lib.tensor(None)),
    ("tensor_dict", lambda c: c.lib.tensor({})),
    ("tensor_mixed", lambda c: c.lib.tensor([1, 2.5, True])),
    ("tensor_empty_list", lambda c: c.lib.tensor([])),
    ("tensor_nested_empty", lambda c: c.lib.tensor([[], []])),
    ("tensor_bad_dtype", lambda c: c.lib.tensor([1.0], dtype="float32")),
    ("tensor_object_array", lambda c: c.lib.tensor(np.array([1, "a"], dtype=object))),
    ("tensor_huge_int", lambda c: c.lib.tensor([2 ** 70])),
    ("tensor_nan", lambda c: c.lib.tensor([NAN, INF])),
    ("tensor_int_nan_dtype", lambda c: c.lib.tensor([NAN], dtype=c.lib.int64)),
    ("tensor_requires_grad_int", lambda c: c.lib.tensor([1, 2], requires_grad=True)),
    ("tensor_requires_grad_bool", lambda c: c.lib.tensor([1.0], requires_grad="yes")),
    ("from_numpy_object", lambda c: c.lib.from_numpy(np.array([1, "a"], dtype=object))),
    ("from_numpy_object_numbers", lambda c: c.lib.from_numpy(np.array([1.0, 2.0], dtype=object))),
    ("from_numpy_list", lambda c: c.lib.from_numpy([1.0])),
    ("from_numpy_str_array", lambda c: c.lib.from_numpy(np.array(["a", "b"]))),
    ("from_numpy_datetime", lambda c: c.lib.from_numpy(np.array(["2020-01-01"], dtype="datetime64[D]"))),
    ("from_numpy_0d", lambda c: c.lib.from_numpy(np.array(2.5))),
    ("as_tensor_object", lambda c: c.lib.as_tensor(np.array([1, "a"], dtype=object))),
    ("as_tensor_str", lambda c: c.lib.as_tensor("abc")),
    ("zeros_like_list", lambda c: c.lib.zeros_like([1.0, 2.0])),
    ("zeros_like_none", lambda c: c.lib.zeros_like(None)),
    ("ones_like_ndarray", lambda c: c.lib.ones_like(np.ones(2))),
    ("full_like_list", lambda c: c.lib.full_like([1.0], 2.0)),
    ("empty_like_str", lambda c: c.lib.empty_like("a")),
    ("randn_like_list", lambda c: c.lib.randn_like([1.0])),
    ("rand_like_int", lambda c: c.lib.rand_like(c.t(INT23))),
    ("randn_like_int", lambda c: c.lib.randn_like(c.t(INT23))),
    ("zeros_like_int_requires_grad", lambda c: c.lib.zeros_like(c.t(INT23), requires_grad=True)),
    ("zeros_requires_grad_int", lambda c: c.lib.zeros(2, dtype=c.lib.int64, requires_grad=True)),
    ("randn_int_dtype", lambda c: c.lib.randn(2, dtype=c.lib.int64)),
    ("randint_low_high", lambda c: c.lib.randint(5, 3, (2,))),
    ("randint_equal", lambda c: c.lib.randint(3, 3, (2,))),
    ("randint_float_size", lambda c: c.lib.randint(0, 3, (2.5,))),
    ("randint_no_size", lambda c: c.lib.randint(3)),
    ("randint_negative_size", lambda c: c.lib.randint(0, 3, (-1,))),
    ("randperm_negative", lambda c: c.lib.randperm(-1)),
    ("randperm_float", lambda c: c.lib.randperm(2.5)),
    ("multinomial_negative", lambda c: c.lib.multinomial(c.t(np.array([-1.0, 2.0])), 1)),
    ("multinomial_zero_sum", lambda c: c.lib.multinomial(c.t(np.array([0.0, 0.0])), 1)),
    ("multinomial_too_many", lambda c: c.lib.multinomial(c.t(np.array([0.5, 0.5])), 3)),
    ("multinomial_nan", lambda c: c.lib.multinomial(c.t(np.array([NAN, 0.5])), 1)),
    ("multinomial_3d", lambda c: c.lib.multinomial(c.t(np.ones((2, 2, 2))), 1)),
    ("bernoulli_bad_p", lambda c: c.lib.bernoulli(c.t(np.array([1.5, 0.5])))),
    ("bernoulli_nan_p", lambda c: c.lib.bernoulli(c.t(np.array([NAN])))),
    ("normal_negative_std", lambda c: c.lib.normal(0.0, c.t(np.array([-1.0])))),
    ("manual_seed_str", lambda c: c.lib.manual_seed("a")),
    ("manual_seed_float", lambda c: c.lib.manual_seed(1.5)),
    ("set_default_dtype_int", lambda c: c.lib.set_default_dtype(c.lib.int64)),
]
for name, call in CREATION:
    case(f"creation:{name}", call)

# --------------------------------------------------------------------------- nn.functional: activations
ACTIVATIONS = ["relu", "silu", "gelu", "elu", "leaky_relu", "softplus", "mish", "hardswish", "sigmoid", "tanh"]
family("activation", [(n, lambda c, x, n=n: getattr(c.F, n)(x)) for n in ACTIVATIONS],
       NOT_TENSORS[:5] + EDGE_TENSORS)
ACT_ARGS = [
    ("gelu_approx_bad", lambda c: c.F.gelu(c.t(V3), approximate="bad")),
    ("gelu_approx_none_str", lambda c: c.F.gelu(c.t(V3), approximate="none")),
    ("gelu_approx_tanh", lambda c: c.F.gelu(c.t(V3), approximate="tanh")),
    ("elu_negative_alpha", lambda c: c.F.elu(c.t(V3), alpha=-1.0)),
    ("leaky_relu_str_slope", lambda c: c.F.leaky_relu(c.t(V3), "a")),
    ("softplus_zero_beta", lambda c: c.F.softplus(c.t(V3), beta=0)),
    ("softmax_no_dim_3d", lambda c: c.F.softmax(c.t(np.ones((2, 2, 2))), dim=None)),
    ("softmax_oob", lambda c: c.F.softmax(c.t(M23), dim=2)),
    ("softmax_int", lambda c: c.F.softmax(c.t(INT23), dim=1)),
    ("softmax_int_dtype", lambda c: c.F.softmax(c.t(INT23), dim=1, dtype=c.lib.float64)),
    ("log_softmax_0d", lambda c: c.F.log_softmax(c.t(SCALAR), dim=0)),
    ("log_softmax_empty", lambda c: c.F.log_softmax(c.t(EMPTY), dim=0)),
    ("softmax_special", lambda c: c.F.softmax(c.t(SPECIAL), dim=0)),
    ("dropout_negative", lambda c: c.F.dropout(c.t(V3), p=-0.1)),
    ("dropout_above_one", lambda c: c.F.dropout(c.t(V3), p=1.5)),
    ("dropout_str", lambda c: c.F.dropout(c.t(V3), p="a")),
    ("dropout_nan", lambda c: c.F.dropout(c.t(V3), p=NAN)),
    ("dropout_eval", lambda c: c.F.dropout(c.t(V3), p=0.5, training=False)),
    ("dropout_one", lambda c: c.F.dropout(c.t(V3), p=1.0)),
    ("dropout_list", lambda c: c.F.dropout([1.0], p=0.5)),
    ("dropout_int", lambda c: c.F.dropout(c.t(INT23), p=0.5)),
    ("linear_shape", lambda c: c.F.linear(c.t(M23), c.t(M23))),
    ("linear_bias_shape", lambda c: c.F.linear(c.t(M23), c.t(M23), c.t(np.ones(3)))),
    ("linear_list", lambda c: c.F.linear([1.0, 2.0, 3.0], c.t(M23))),
    ("linear_none_weight", lambda c: c.F.linear(c.t(M23), None)),
    ("linear_int", lambda c: c.F.linear(c.t(INT23), c.t(M23))),
    ("linear_0d", lambda c: c.F.linear(c.t(SCALAR), c.t(M23))),
    ("linear_empty_batch", lambda c: c.F.linear(c.t(EMPTY), c.t(M23))),
    ("linear_empty_in", lambda c: _backward_sum(c, c.F.linear(c.t(EMPTY_INNER, grad=True),
                                                              c.t(np.zeros((4, 0)), grad=True)))),
    ("embedding_oob", lambda c: c.F.embedding(c.t(np.array([0, 5])), c.t(M23.T.copy()))),
    ("embedding_negative", lambda c: c.F.embedding(c.t(np.array([-1])), c.t(M23.T.copy()))),
    ("embedding_float_index", lambda c: c.F.embedding(c.t(np.array([0.0])), c.t(M23.T.copy()))),
    ("embedding_1d_weight", lambda c: c.F.embedding(c.t(np.array([0])), c.t(V3))),
    ("embedding_list", lambda c: c.F.embedding([0, 1], c.t(M23.T.copy()))),
    ("one_hot_negative", lambda c: c.F.one_hot(c.t(np.array([-1, 0])))),
    ("one_hot_small", lambda c: c.F.one_hot(c.t(np.array([0, 3])), 2)),
    ("one_hot_float", lambda c: c.F.one_hot(c.t(np.array([0.0, 1.0])))),
    ("one_hot_empty", lambda c: c.F.one_hot(c.t(np.zeros(0, dtype=np.int64)), 3)),
    ("one_hot_empty_no_classes", lambda c: c.F.one_hot(c.t(np.zeros(0, dtype=np.int64)))),
    ("one_hot_zero_classes", lambda c: c.F.one_hot(c.t(np.array([0])), 0)),
]
for name, call in ACT_ARGS:
    case(f"functional:{name}", call)

# --------------------------------------------------------------------------- losses
LOGITS = np.array([[0.2, -1.0, 0.5], [1.5, 0.1, -0.3]])
LOSS_CALLS = [
    ("ce_int_logits", lambda c: c.F.cross_entropy(c.t(INT23), c.t(np.array([0, 1])))),
    ("ce_float_target_shape", lambda c: c.F.cross_entropy(c.t(LOGITS), c.t(np.array([0.0, 1.0])))),
    ("ce_probs_target", lambda c: c.F.cross_entropy(c.t(LOGITS), c.t(np.full((2, 3), 1 / 3)))),
    ("ce_target_oob", lambda c: c.F.cross_entropy(c.t(LOGITS), c.t(np.array([0, 3])))),
    ("ce_target_negative", lambda c: c.F.cross_entropy(c.t(LOGITS), c.t(np.array([0, -2])))),
    ("ce_target_ignore", lambda c: c.F.cross_entropy(c.t(LOGITS), c.t(np.array([0, -100])))),
    ("ce_all_ignored", lambda c: c.F.cross_entropy(c.t(LOGITS), c.t(np.array([-100, -100])))),
    ("ce_batch_mismatch", lambda c: c.F.cross_entropy(c.t(LOGITS), c.t(np.array([0, 1, 2])))),
    ("ce_bad_reduction", lambda c: c.F.cross_entropy(c.t(LOGITS), c.t(np.array([0, 1])), reduction="bad")),
    ("ce_smoothing_negative", lambda c: c.F.cross_entropy(c.t(LOGITS), c.t(np.array([0, 1])),
                                                          label_smoothing=-0.1)),
    ("ce_smoothing_big", lambda c: c.F.cross_entropy(c.t(LOGITS), c.t(np.array([0, 1])), label_smoothing=1.5)),
    ("ce_weight_shape", lambda c: c.F.cross_entropy(c.t(LOGITS), c.t(np.array([0, 1])), weight=c.t(np.ones(2)))),
    ("ce_list_input", lambda c: c.F.cross_entropy([[1.0, 2.0]], c.t(np.array([0])))),
    ("ce_none_target", lambda c: c.F.cross_entropy(c.t(LOGITS), None)),
    ("ce_0d_input", lambda c: c.F.cross_entropy(c.t(SCALAR), c.t(np.array(0)))),
    ("ce_1d_input", lambda c: c.F.cross_entropy(c.t(V3), c.t(np.array(1)))),
    ("ce_empty_batch", lambda c: c.F.cross_entropy(c.t(EMPTY), c.t(np.zeros(0, dtype=np.int64)))),
    ("ce_empty_batch_sum", lambda c: c.F.cross_entropy(c.t(EMPTY), c.t(np.zeros(0, dtype=np.int64)),
                                                       reduction="sum")),
    ("ce_nan_logits", lambda c: c.F.cross_entropy(c.t(np.array([[NAN, 0.0]])), c.t(np.array([0])))),
    ("ce_inf_logits", lambda c: c.F.cross_entropy(c.t(np.array([[INF, 0.0]])), c.t(np.array([1])))),
    ("ce_bool_target", lambda c: c.F.cross_entropy(c.t(LOGITS), c.t(np.array([True, False])))),
    ("nll_float_target", lambda c: c.F.nll_loss(c.t(LOGITS), c.t(np.array([0.0, 1.0])))),
    ("nll_oob", lambda c: c.F.nll_loss(c.t(LOGITS), c.t(np.array([0, 7])))),
    ("nll_int_input", lambda c: c.F.nll_loss(c.t(INT23), c.t(np.array([0, 1])))),
    ("nll_bad_reduction", lambda c: c.F.nll_loss(c.t(LOGITS), c.t(np.array([0, 1])), reduction="avg")),
    ("nll_batch_mismatch", lambda c: c.F.nll_loss(c.t(LOGITS), c.t(np.array([0])))),
    ("nll_empty", lambda c: c.F.nll_loss(c.t(EMPTY), c.t(np.zeros(0, dtype=np.int64)))),
    ("mse_shape", lambda c: c.F.mse_loss(c.t(M23), c.t(np.ones((3, 2))))),
    ("mse_int", lambda c: c.F.mse_loss(c.t(INT23), c.t(INT23))),
    ("mse_bad_reduction", lambda c: c.F.mse_loss(c.t(M23), c.t(M23), reduction="bad")),
    ("mse_list", lambda c: c.F.mse_loss([1.0], c.t(V3))),
    ("mse_empty", lambda c: c.F.mse_loss(c.t(EMPTY), c.t(EMPTY))),
    ("mse_empty_sum", lambda c: c.F.mse_loss(c.t(EMPTY), c.t(EMPTY), reduction="sum")),
    ("mse_0d", lambda c: c.F.mse_loss(c.t(SCALAR), c.t(SCALAR))),
    ("mse_mixed_dtype", lambda c: c.F.mse_loss(c.t(V3), c.t(V3, dtype=np.float32))),
    ("l1_shape", lambda c: c.F.l1_loss(c.t(M23), c.t(np.ones((3, 2))))),
    ("l1_int", lambda c: c.F.l1_loss(c.t(INT23), c.t(INT23))),
    ("l1_bad_reduction", lambda c: c.F.l1_loss(c.t(M23), c.t(M23), reduction=None)),
    ("huber_negative_delta", lambda c: c.F.huber_loss(c.t(V3), c.t(V3 * 2), delta=-1.0)),
    ("huber_zero_delta", lambda c: c.F.huber_loss(c.t(V3), c.t(V3 * 2), delta=0.0)),
    ("smooth_l1_negative_beta", lambda c: c.F.smooth_l1_loss(c.t(V3), c.t(V3 * 2), beta=-1.0)),
    ("smooth_l1_zero_beta", lambda c: c.F.smooth_l1_loss(c.t(V3), c.t(V3 * 2), beta=0.0)),
    ("bce_out_of_range", lambda c: c.F.binary_cross_entropy(c.t(np.array([1.5, 0.5])), c.t(np.array([1.0, 0.0])))),
    ("bce_negative", lambda c: c.F.binary_cross_entropy(c.t(np.array([-0.5])), c.t(np.array([1.0])))),
    ("bce_nan", lambda c: c.F.binary_cross_entropy(c.t(np.array([NAN])), c.t(np.array([1.0])))),
    ("bce_shape", lambda c: c.F.binary_cross_entropy(c.t(np.array([0.5, 0.5])), c.t(np.array([1.0])))),
    ("bce_int_target", lambda c: c.F.binary_cross_entropy(c.t(np.array([0.5])), c.t(np.array([1])))),
    ("bce_target_out_of_range", lambda c: c.F.binary_cross_entropy(c.t(np.array([0.5])), c.t(np.array([2.0])))),
    ("bce_weight_shape", lambda c: c.F.binary_cross_entropy(c.t(np.array([0.5, 0.2])), c.t(np.array([1.0, 0.0])),
                                                            weight=c.t(np.ones(3)))),
    ("bce_logits_shape", lambda c: c.F.binary_cross_entropy_with_logits(c.t(V3), c.t(np.ones(2)))),
    ("bce_logits_int_target", lambda c: c.F.binary_cross_entropy_with_logits(c.t(V3), c.t(np.array([1, 0, 1])))),
    ("bce_logits_pos_weight", lambda c: c.F.binary_cross_entropy_with_logits(c.t(V3), c.t(np.ones(3)),
                                                                             pos_weight=c.t(np.ones(2)))),
    ("bce_logits_inf", lambda c: c.F.binary_cross_entropy_with_logits(c.t(np.array([INF, -INF])),
                                                                      c.t(np.array([1.0, 0.0])))),
    ("kl_bad_reduction", lambda c: c.F.kl_div(c.t(V3), c.t(V3), reduction="bad")),
    ("kl_shape", lambda c: c.F.kl_div(c.t(V3), c.t(np.ones(2)))),
    ("kl_int", lambda c: c.F.kl_div(c.t(np.array([1, 2])), c.t(np.array([1, 2])))),
    ("kl_log_target_str", lambda c: c.F.kl_div(c.t(V3), c.t(V3), reduction="batchmean", log_target=True)),
]
for name, call in LOSS_CALLS:
    case(f"loss:{name}", call)

# --------------------------------------------------------------------------- normalization functionals
X4 = np.cos(np.arange(24.0)).reshape(2, 3, 4)
NORM_CALLS = [
    ("layer_norm_float_shape", lambda c: c.F.layer_norm(c.t(X4), (4.5,))),
    ("layer_norm_float_shape_whole", lambda c: c.F.layer_norm(c.t(X4), (4.0,))),
    ("layer_norm_mismatch", lambda c: c.F.layer_norm(c.t(X4), (3,))),
    ("layer_norm_int_shape", lambda c: c.F.layer_norm(c.t(X4), 4)),
    ("layer_norm_too_long", lambda c: c.F.layer_norm(c.t(X4), (1, 2, 3, 4))),
    ("layer_norm_empty_shape", lambda c: c.F.layer_norm(c.t(X4), ())),
    ("layer_norm_weight_shape", lambda c: c.F.layer_norm(c.t(X4), (4,), c.t(np.ones(3)))),
    ("layer_norm_bias_shape", lambda c: c.F.layer_norm(c.t(X4), (4,), c.t(np.ones(4)), c.t(np.ones(5)))),
    ("layer_norm_int", lambda c: c.F.layer_norm(c.t(INT23), (3,))),
    ("layer_norm_bool", lambda c: c.F.layer_norm(c.t(BOOL3), (3,))),
    ("layer_norm_list", lambda c: c.F.layer_norm([1.0, 2.0], (2,))),
    ("layer_norm_none_shape", lambda c: c.F.layer_norm(c.t(X4), None)),
    ("layer_norm_str_shape", lambda c: c.F.layer_norm(c.t(X4), "4")),
    ("layer_norm_negative_eps", lambda c: c.F.layer_norm(c.t(X4), (4,), eps=-1.0)),
    ("layer_norm_zero_size_batch", lambda c: c.F.layer_norm(c.t(np.zeros((0, 4))), (4,))),
    ("layer_norm_zero_size_dim", lambda c: _backward_sum(c, c.F.layer_norm(c.t(np.zeros((2, 0)), grad=True), (0,)))),
    ("layer_norm_0d", lambda c: c.F.layer_norm(c.t(SCALAR), ())),
    ("layer_norm_nan", lambda c: c.F.layer_norm(c.t(SPECIAL), (6,))),
    ("layer_norm_mixed_dtype_weight", lambda c: c.F.layer_norm(c.t(X4), (4,), c.t(np.ones(4), dtype=np.float32))),
    ("rms_norm_float_shape", lambda c: c.F.rms_norm(c.t(X4), (4.5,))),
    ("rms_norm_mismatch", lambda c: c.F.rms_norm(c.t(X4), (3,))),
    ("rms_norm_weight_shape", lambda c: c.F.rms_norm(c.t(X4), (4,), c.t(np.ones(3)))),
    ("rms_norm_int", lambda c: c.F.rms_norm(c.t(INT23), (3,))),
    ("rms_norm_list", lambda c: c.F.rms_norm([1.0], (1,))),
    ("rms_norm_zero_size_dim", lambda c: _backward_sum(c, c.F.rms_norm(c.t(np.zeros((2, 0)), grad=True), (0,)))),
    ("rms_norm_zero_batch", lambda c: c.F.rms_norm(c.t(np.zeros((0, 4))), (4,))),
    ("rms_norm_0d", lambda c: c.F.rms_norm(c.t(SCALAR), ())),
    ("rms_norm_str_eps", lambda c: c.F.rms_norm(c.t(X4), (4,), eps="a")),
    ("batch_norm_int64", lambda c: c.F.batch_norm(c.t(INT23), None, None, training=True)),
    ("batch_norm_bool", lambda c: c.F.batch_norm(c.t(np.ones((2, 3), dtype=bool)), None, None, training=True)),
    ("batch_norm_eval_no_stats", lambda c: c.F.batch_norm(c.t(M23), None, None, training=False)),
    ("batch_norm_stats_shape", lambda c: c.F.batch_norm(c.t(M23), c.t(np.zeros(2)), c.t(np.ones(2)))),
    ("batch_norm_weight_shape", lambda c: c.F.batch_norm(c.t(M23), c.t(np.zeros(3)), c.t(np.ones(3)),
                                                         c.t(np.ones(2)))),
    ("batch_norm_one_value", lambda c: c.F.batch_norm(c.t(np.ones((1, 3))), None, None, training=True)),
    ("batch_norm_empty_batch", lambda c: c.F.batch_norm(c.t(np.zeros((0, 3))), None, None, training=True)),
    ("batch_norm_empty_eval", lambda c: c.F.batch_norm(c.t(np.zeros((0, 3))), c.t(np.zeros(3)), c.t(np.ones(3)))),
    ("batch_norm_1d", lambda c: c.F.batch_norm(c.t(V3), None, None, training=True)),
    ("batch_norm_0d", lambda c: c.F.batch_norm(c.t(SCALAR), None, None, training=True)),
    ("batch_norm_list", lambda c: c.F.batch_norm([[1.0, 2.0]], None, None, training=True)),
    ("batch_norm_train_stats_update", lambda c: c.F.batch_norm(c.t(X4), c.t(np.zeros(3)), c.t(np.ones(3)),
                                                               training=True)),
    ("batch_norm_int_running", lambda c: c.F.batch_norm(c.t(X4), c.t(np.zeros(3, dtype=np.int64)),
                                                        c.t(np.ones(3, dtype=np.int64)), training=True)),
    ("group_norm_indivisible", lambda c: c.F.group_norm(c.t(X4), 2)),
    ("group_norm_zero_groups", lambda c: c.F.group_norm(c.t(X4), 0)),
    ("group_norm_negative_groups", lambda c: c.F.group_norm(c.t(X4), -1)),
    ("group_norm_float_groups", lambda c: c.F.group_norm(c.t(X4), 1.5)),
    ("group_norm_weight_shape", lambda c: c.F.group_norm(c.t(X4), 3, c.t(np.ones(2)))),
    ("group_norm_int", lambda c: c.F.group_norm(c.t(np.ones((2, 3, 4), dtype=np.int64)), 3)),
    ("group_norm_1d", lambda c: c.F.group_norm(c.t(V3), 1)),
    ("group_norm_empty_batch", lambda c: c.F.group_norm(c.t(np.zeros((0, 3, 4))), 3)),
    ("group_norm_empty_spatial", lambda c: c.F.group_norm(c.t(np.zeros((2, 3, 0))), 3)),
    ("group_norm_list", lambda c: c.F.group_norm([[1.0]], 1)),
    ("instance_norm_int", lambda c: c.F.instance_norm(c.t(np.ones((2, 3, 4), dtype=np.int64)))),
    ("instance_norm_one_value", lambda c: c.F.instance_norm(c.t(np.ones((2, 3, 1))))),
    ("instance_norm_2d", lambda c: c.F.instance_norm(c.t(M23))),
    ("instance_norm_stats_shape", lambda c: c.F.instance_norm(c.t(X4), c.t(np.zeros(2)), c.t(np.ones(2)))),
    ("instance_norm_empty", lambda c: c.F.instance_norm(c.t(np.zeros((2, 3, 0))))),
    ("local_response_norm_2d", lambda c: c.F.local_response_norm(c.t(M23), 2)),
    ("local_response_norm_zero_size", lambda c: c.F.local_response_norm(c.t(X4), 0)),
    ("local_response_norm_float_size", lambda c: c.F.local_response_norm(c.t(X4), 2.5)),
    ("local_response_norm_int", lambda c: c.F.local_response_norm(c.t(np.ones((2, 3, 4), dtype=np.int64)), 2)),
    ("local_response_norm_empty", lambda c: c.F.local_response_norm(c.t(np.zeros((0, 3, 4))), 2)),
]
for name, call in NORM_CALLS:
    case(f"norm:{name}", call)

# --------------------------------------------------------------------------- attention
Q = np.cos(np.arange(24.0)).reshape(1, 2, 3, 4)
ATTN_CALLS = [
    ("mask_and_causal", lambda c: c.F.scaled_dot_product_attention(c.t(Q), c.t(Q), c.t(Q),
                                                                    attn_mask=c.t(np.ones((3, 3), dtype=bool)),
                                                                    is_causal=True)),
    ("mask_float_and_causal", lambda c: c.F.scaled_dot_product_attention(c.t(Q), c.t(Q), c.t(Q),
                                                                          attn_mask=c.t(np.zeros((3, 3))),
                                                                          is_causal=True)),
    ("mask_shape", lambda c: c.F.scaled_dot_product_attention(c.t(Q), c.t(Q), c.t(Q),
                                                               attn_mask=c.t(np.ones((2, 2), dtype=bool)))),
    ("mask_int", lambda c: c.F.scaled_dot_product_attention(c.t(Q), c.t(Q), c.t(Q),
                                                             attn_mask=c.t(np.ones((3, 3), dtype=np.int64)))),
    ("key_dim_mismatch", lambda c: c.F.scaled_dot_product_attention(c.t(Q), c.t(Q[..., :3]), c.t(Q))),
    ("value_len_mismatch", lambda c: c.F.scaled_dot_product_attention(c.t(Q), c.t(Q), c.t(Q[:, :, :2]))),
    ("1d", lambda c: c.F.scaled_dot_product_attention(c.t(V3), c.t(V3), c.t(V3))),
    ("2d", lambda c: c.F.scaled_dot_product_attention(c.t(M23), c.t(M23), c.t(M23))),
    ("list", lambda c: c.F.scaled_dot_product_attention([1.0], c.t(Q), c.t(Q))),
    ("none_value", lambda c: c.F.scaled_dot_product_attention(c.t(Q), c.t(Q), None)),
    ("int", lambda c: c.F.scaled_dot_product_attention(c.t(Q.astype(np.int64)), c.t(Q.astype(np.int64)),
                                                        c.t(Q.astype(np.int64)))),
    ("dtype_mismatch", lambda c: c.F.scaled_dot_product_attention(c.t(Q), c.t(Q, dtype=np.float32), c.t(Q))),
    ("negative_dropout", lambda c: c.F.scaled_dot_product_attention(c.t(Q), c.t(Q), c.t(Q), dropout_p=-0.5)),
    ("zero_scale", lambda c: c.F.scaled_dot_product_attention(c.t(Q), c.t(Q), c.t(Q), scale=0.0)),
    ("empty_keys", lambda c: c.F.scaled_dot_product_attention(c.t(Q), c.t(Q[:, :, :0]), c.t(Q[:, :, :0]))),
    ("empty_queries", lambda c: c.F.scaled_dot_product_attention(c.t(Q[:, :, :0]), c.t(Q), c.t(Q))),
    ("all_masked_row", lambda c: c.F.scaled_dot_product_attention(c.t(Q), c.t(Q), c.t(Q),
                                                                   attn_mask=c.t(np.zeros((3, 3), dtype=bool)))),
    ("causal_more_keys", lambda c: c.F.scaled_dot_product_attention(c.t(Q[:, :, :2]), c.t(Q), c.t(Q),
                                                                     is_causal=True)),
    ("gqa_mismatch", lambda c: c.F.scaled_dot_product_attention(c.t(np.ones((1, 3, 2, 4))), c.t(np.ones((1, 2, 2, 4))),
                                                                 c.t(np.ones((1, 2, 2, 4))))),
]
for name, call in ATTN_CALLS:
    case(f"attention:{name}", call)

# --------------------------------------------------------------------------- module constructors
BAD_FEATURES = [("float", 2.5), ("negative", -1), ("str", "3"), ("None", None), ("zero", 0), ("bool", True),
                ("float_whole", 3.0), ("list", [3]), ("np_int", np.int64(3)), ("tensor", lambda c: c.t(np.array(3)))]
CONSTRUCTORS = [
    ("Linear_in", lambda c, v: c.nn.Linear(v, 3)),
    ("Linear_out", lambda c, v: c.nn.Linear(3, v)),
    ("Embedding_num", lambda c, v: c.nn.Embedding(v, 3)),
    ("Embedding_dim", lambda c, v: c.nn.Embedding(3, v)),
    ("LayerNorm", lambda c, v: c.nn.LayerNorm(v)),
    ("LayerNorm_tuple", lambda c, v: c.nn.LayerNorm((2, v))),
    ("RMSNorm", lambda c, v: c.nn.RMSNorm(v)),
    ("BatchNorm1d", lambda c, v: c.nn.BatchNorm1d(v)),
    ("BatchNorm2d", lambda c, v: c.nn.BatchNorm2d(v)),
    ("InstanceNorm1d", lambda c, v: c.nn.InstanceNorm1d(v)),
    ("GroupNorm_groups", lambda c, v: c.nn.GroupNorm(v, 6)),
    ("GroupNorm_channels", lambda c, v: c.nn.GroupNorm(3, v)),
    ("RNN_hidden", lambda c, v: c.nn.RNN(3, v)),
    ("LSTM_input", lambda c, v: c.nn.LSTM(v, 3)),
    ("GRU_layers", lambda c, v: c.nn.GRU(3, 3, num_layers=v)),
    ("RNNCell", lambda c, v: c.nn.RNNCell(v, 3)),
    ("LSTMCell", lambda c, v: c.nn.LSTMCell(3, v)),
    ("GRUCell", lambda c, v: c.nn.GRUCell(v, 3)),
    ("MultiheadAttention_embed", lambda c, v: c.nn.MultiheadAttention(v, 1)),
    ("MultiheadAttention_heads", lambda c, v: c.nn.MultiheadAttention(4, v)),
    ("Flatten_start", lambda c, v: c.nn.Flatten(v)),
]
family("constructor", CONSTRUCTORS, BAD_FEATURES)
HYPER = [("negative", -0.5), ("above_one", 1.5), ("nan", NAN), ("str", "a"), ("None", None), ("zero", 0.0),
         ("one", 1.0), ("inf", INF)]
family("hyper", [
    ("Dropout_p", lambda c, v: c.nn.Dropout(v)),
    ("BatchNorm1d_momentum", lambda c, v: c.nn.BatchNorm1d(3, momentum=v)),
    ("BatchNorm1d_eps", lambda c, v: c.nn.BatchNorm1d(3, eps=v)),
    ("LayerNorm_eps", lambda c, v: c.nn.LayerNorm(3, eps=v)),
    ("LeakyReLU", lambda c, v: c.nn.LeakyReLU(v)),
    ("ELU", lambda c, v: c.nn.ELU(v)),
    ("Softplus_beta", lambda c, v: c.nn.Softplus(beta=v)),
    ("RNN_dropout", lambda c, v: c.nn.RNN(3, 3, num_layers=2, dropout=v)),
    ("MultiheadAttention_dropout", lambda c, v: c.nn.MultiheadAttention(4, 2, dropout=v)),
    ("TransformerEncoderLayer_dropout", lambda c, v: c.nn.TransformerEncoderLayer(4, 2, 8, dropout=v)),
    ("CrossEntropyLoss_smoothing", lambda c, v: c.nn.CrossEntropyLoss(label_smoothing=v)),
    ("HuberLoss_delta", lambda c, v: c.nn.HuberLoss(delta=v)),
], HYPER)
MODULE_MISC = [
    ("MultiheadAttention_indivisible", lambda c: c.nn.MultiheadAttention(5, 2)),
    ("TransformerEncoderLayer_indivisible", lambda c: c.nn.TransformerEncoderLayer(5, 2, 8)),
    ("TransformerEncoderLayer_activation", lambda c: c.nn.TransformerEncoderLayer(4, 2, 8, activation="bad")),
    ("RNN_nonlinearity", lambda c: c.nn.RNN(3, 3, nonlinearity="bad")),
    ("LayerNorm_float_shape", lambda c: c.nn.LayerNorm((6.5,))),
    ("GroupNorm_indivisible", lambda c: c.nn.GroupNorm(4, 6)),
    ("Embedding_padding_oob", lambda c: c.nn.Embedding(3, 2, padding_idx=5)),
    ("Embedding_padding_negative_oob", lambda c: c.nn.Embedding(3, 2, padding_idx=-4)),
    ("Loss_bad_reduction", lambda c: c.nn.MSELoss(reduction="bad")),
    ("Softmax_dim_str", lambda c: c.nn.Softmax(dim="a")),
    ("Unflatten_bad", lambda c: c.nn.Unflatten(1, (2, 2))(c.t(M23))),
    ("Sequential_non_module", lambda c: c.nn.Sequential(c.nn.ReLU(), 3)),
    ("ModuleList_non_module", lambda c: c.nn.ModuleList([c.nn.ReLU(), "a"])),
    ("add_module_bad_name", lambda c: c.nn.ReLU().add_module("a.b", c.nn.ReLU())),
    ("add_module_non_module", lambda c: c.nn.ReLU().add_module("a", 3)),
    ("register_buffer_non_tensor", lambda c: c.nn.ReLU().register_buffer("b", [1.0])),
    ("register_parameter_tensor", lambda c: c.nn.ReLU().register_parameter("p", c.t(V3))),
    ("Parameter_list", lambda c: c.nn.Parameter([1.0])),
    ("Parameter_int_grad", lambda c: c.nn.Parameter(c.t(np.array([1, 2])))),
]
for name, call in MODULE_MISC:
    case(f"module:{name}", call)

# --------------------------------------------------------------------------- module forwards
FORWARDS = [
    ("Linear", lambda c: c.mod(c.nn.Linear(3, 2, dtype=c.lib.float64))),
    ("LayerNorm", lambda c: c.mod(c.nn.LayerNorm(3, dtype=c.lib.float64))),
    ("RMSNorm", lambda c: c.mod(c.nn.RMSNorm(3, dtype=c.lib.float64))),
    ("BatchNorm1d", lambda c: c.mod(c.nn.BatchNorm1d(3, dtype=c.lib.float64))),
    ("BatchNorm2d", lambda c: c.mod(c.nn.BatchNorm2d(3, dtype=c.lib.float64))),
    ("GroupNorm", lambda c: c.mod(c.nn.GroupNorm(1, 3, dtype=c.lib.float64))),
    ("InstanceNorm1d", lambda c: c.mod(c.nn.InstanceNorm1d(3, dtype=c.lib.float64))),
    ("Embedding", lambda c: c.mod(c.nn.Embedding(3, 2, dtype=c.lib.float64))),
    ("ReLU", lambda c: c.nn.ReLU()),
    ("Softmax", lambda c: c.nn.Softmax(dim=1)),
    ("Flatten", lambda c: c.nn.Flatten()),
    ("MSELoss1", lambda c: (lambda x: c.nn.MSELoss()(x, x))),
]
FORWARD_INPUTS = NOT_TENSORS[:4] + [
    ("0d", lambda c: c.t(SCALAR)), ("1d", lambda c: c.t(V3)), ("2d", lambda c: c.t(M23)),
    ("3d", lambda c: c.t(X4)), ("int64", lambda c: c.t(INT23)), ("bool", lambda c: c.t(np.ones((2, 3), dtype=bool))),
    ("empty_batch", lambda c: c.t(EMPTY)), ("wrong_features", lambda c: c.t(np.ones((2, 4)))),
    ("float32", lambda c: c.t(M23, dtype=np.float32)), ("special", lambda c: c.t(SPECIAL.reshape(2, 3))),
    ("int_indices", lambda c: c.t(np.array([[0, 2], [1, 3]]))),
]
family("forward", [(n, lambda c, x, m=m: m(c)(x)) for n, m in FORWARDS], FORWARD_INPUTS)
LOSS_MODULES = ["BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "HuberLoss", "KLDivLoss", "L1Loss", "MSELoss",
                "NLLLoss", "SmoothL1Loss"]
family("loss_module", [(n, lambda c, x, n=n: getattr(c.nn, n)()(x, c.t(np.array([0.25, 0.5, 0.75]))))
                       for n in LOSS_MODULES],
       NOT_TENSORS[:4] + [("int64", lambda c: c.t(np.array([0, 1, 1]))), ("wrong_shape", lambda c: c.t(np.ones(4) / 2)),
                          ("0d", lambda c: c.t(SCALAR)), ("empty", lambda c: c.t(np.zeros(0)))])
ACTIVATION_MODULES = ["ReLU", "GELU", "SiLU", "ELU", "LeakyReLU", "Softplus", "Mish", "Hardswish", "Sigmoid", "Tanh",
                      "Identity"]
family("activation_module", [(n, lambda c, x, n=n: getattr(c.nn, n)()(x)) for n in ACTIVATION_MODULES],
       NOT_TENSORS[:4] + EDGE_TENSORS)
RNN_CALLS = [
    ("rnn_wrong_features", lambda c: c.mod(c.nn.RNN(3, 2, dtype=c.lib.float64))(c.t(np.ones((2, 4))))),
    ("rnn_4d", lambda c: c.mod(c.nn.RNN(3, 2, dtype=c.lib.float64))(c.t(np.ones((1, 2, 2, 3))))),
    ("rnn_h0_shape", lambda c: c.mod(c.nn.GRU(3, 2, dtype=c.lib.float64))(c.t(np.ones((2, 3))), c.t(np.ones((1, 3))))),
    ("lstm_h0_not_tuple", lambda c: c.mod(c.nn.LSTM(3, 2, dtype=c.lib.float64))(c.t(np.ones((2, 3))),
                                                                               c.t(np.ones((1, 2))))),
    ("rnn_list", lambda c: c.mod(c.nn.RNN(3, 2, dtype=c.lib.float64))([[1.0, 2.0, 3.0]])),
    ("rnn_int", lambda c: c.mod(c.nn.RNN(3, 2, dtype=c.lib.float64))(c.t(np.ones((2, 3), dtype=np.int64)))),
    ("rnncell_shape", lambda c: c.mod(c.nn.RNNCell(3, 2, dtype=c.lib.float64))(c.t(np.ones((2, 4))))),
    ("mha_wrong_dim", lambda c: c.mod(c.nn.MultiheadAttention(4, 2, dtype=c.lib.float64))(
        c.t(np.ones((2, 3))), c.t(np.ones((2, 3))), c.t(np.ones((2, 3))))),
    ("mha_mask_shape", lambda c: c.mod(c.nn.MultiheadAttention(4, 2, dtype=c.lib.float64))(
        c.t(np.ones((3, 4))), c.t(np.ones((3, 4))), c.t(np.ones((3, 4))), attn_mask=c.t(np.ones((2, 2), dtype=bool)))),
    ("embedding_oob", lambda c: c.mod(c.nn.Embedding(3, 2, dtype=c.lib.float64))(c.t(np.array([3])))),
    ("batchnorm_channels", lambda c: c.mod(c.nn.BatchNorm1d(4, dtype=c.lib.float64))(c.t(M23))),
    ("batchnorm_eval_one", lambda c: c.mod(c.nn.BatchNorm1d(3, dtype=c.lib.float64)).eval()(c.t(np.ones((1, 3))))),
    ("groupnorm_channels", lambda c: c.mod(c.nn.GroupNorm(1, 4, dtype=c.lib.float64))(c.t(M23))),
    ("cross_map_lrn_3d", lambda c: c.nn.CrossMapLRN2d(3)(c.t(X4))),
    ("cross_map_lrn_5d", lambda c: c.nn.CrossMapLRN2d(3)(c.t(np.ones((1, 2, 2, 2, 2))))),
    ("cross_map_lrn_int", lambda c: c.nn.CrossMapLRN2d(3)(c.t(np.ones((2, 3, 2, 2), dtype=np.int64)))),
    ("cross_map_lrn_no_channels", lambda c: c.nn.CrossMapLRN2d(3)(c.t(np.ones((2, 0, 2, 2))))),
    ("cross_map_lrn_empty_batch", lambda c: c.nn.CrossMapLRN2d(3)(c.t(np.ones((0, 3, 2, 2))))),
    ("cross_map_lrn_zero_size", lambda c: c.nn.CrossMapLRN2d(0)(c.t(X4.reshape(2, 3, 2, 2)))),
    ("cross_map_lrn_negative_size", lambda c: c.nn.CrossMapLRN2d(-1)(c.t(X4.reshape(2, 3, 2, 2)))),
    ("cross_map_lrn_float_size", lambda c: c.nn.CrossMapLRN2d(2.5)(c.t(X4.reshape(2, 3, 2, 2)))),
    ("cross_map_lrn_list", lambda c: c.nn.CrossMapLRN2d(3)([[[[1.0]]]])),
]
for name, call in RNN_CALLS:
    case(f"module_forward:{name}", call)

# --------------------------------------------------------------------------- optimizers
OPTIMIZERS = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"]
OPT_BAD = [("lr_negative", dict(lr=-0.1)), ("lr_nan", dict(lr=NAN)), ("lr_str", dict(lr="a")),
           ("lr_none", dict(lr=None)), ("weight_decay_negative", dict(weight_decay=-0.1)),
           ("weight_decay_str", dict(weight_decay="a")), ("lr_zero", dict(lr=0.0)), ("lr_int", dict(lr=1)),
           ("lr_tensor", lambda c: dict(lr=c.t(np.array(0.1)))), ("unknown_kw", dict(bogus=1))]
OPT_SPECIFIC = {
    "SGD": [("momentum_negative", dict(momentum=-0.9)), ("nesterov_no_momentum", dict(nesterov=True)),
            ("dampening_nesterov", dict(momentum=0.9, dampening=0.1, nesterov=True))],
    "Adam": [("betas_one", dict(betas=(1.0, 0.99))), ("betas_negative", dict(betas=(0.9, -0.1))),
             ("eps_negative", dict(eps=-1e-8)), ("betas_short", dict(betas=(0.9,))),
             ("betas_str", dict(betas="ab")), ("betas_nan", dict(betas=(NAN, 0.9)))],
    "AdamW": [("betas_one", dict(betas=(0.9, 1.0))), ("eps_negative", dict(eps=-1.0))],
    "RMSprop": [("alpha_negative", dict(alpha=-0.1)), ("eps_negative", dict(eps=-1.0)),
                ("momentum_negative", dict(momentum=-1.0))],
    "Adagrad": [("lr_decay_negative", dict(lr_decay=-0.1)), ("eps_negative", dict(eps=-1.0)),
                ("initial_accumulator_negative", dict(initial_accumulator_value=-1.0))],
    "Adadelta": [("rho_above_one", dict(rho=1.5)), ("rho_negative", dict(rho=-0.1)), ("eps_negative", dict(eps=-1.0))],
    "Adamax": [("betas_one", dict(betas=(1.0, 0.9))), ("eps_negative", dict(eps=-1.0))],
    "NAdam": [("betas_one", dict(betas=(1.0, 0.9))), ("momentum_decay_negative", dict(momentum_decay=-1.0))],
    "RAdam": [("betas_one", dict(betas=(0.9, 1.5))), ("eps_negative", dict(eps=-1.0))],
}
for opt in OPTIMIZERS:
    for aname, kw in OPT_BAD + OPT_SPECIFIC[opt]:
        case(f"optimizer:{opt}:{aname}",
             lambda c, opt=opt, kw=kw: getattr(c.optim, opt)(c.params(), **(kw(c) if callable(kw) else kw)))
OPT_PARAMS = [("tensor", lambda c: c.params(1)[0]), ("empty_list", lambda c: []), ("none", lambda c: None),
              ("int", lambda c: 3), ("list_of_ints", lambda c: [1, 2]), ("duplicate", lambda c: c.params(1) * 2),
              ("non_leaf", lambda c: [c.params(1)[0] * 2]), ("group_no_params", lambda c: [{"lr": 0.1}]),
              ("dict", lambda c: {"params": c.params(1)}), ("generator", lambda c: (p for p in c.params(1))),
              ("groups_overlap", lambda c: (lambda ps: [{"params": ps}, {"params": ps[:1]}])(c.params(2)))]
for opt in OPTIMIZERS:
    for aname, params in OPT_PARAMS:
        case(f"optimizer_params:{opt}:{aname}", lambda c, opt=opt, params=params: getattr(c.optim, opt)(params(c)))
OPT_USE = [
    ("zero_grad_then_step", lambda c: (lambda o: (o.zero_grad(), o.step()))(c.sgd())),
    ("add_param_group_dup", lambda c: (lambda ps: c.optim.SGD(ps[:1], lr=0.1).add_param_group({"params": ps[:1]}))(
        c.params(2))),
    ("add_param_group_not_dict", lambda c: c.sgd().add_param_group([1])),
    ("add_param_group_no_lr", lambda c: c.optim.SGD(c.params(1)).add_param_group({"params": c.params(1)})),
    ("sgd_no_lr_step", lambda c: c.optim.SGD(c.params(1)).step()),
    ("step_closure_not_callable", lambda c: c.sgd().step(3)),
    ("state_dict_load_wrong_groups", lambda c: c.sgd().load_state_dict({"state": {}, "param_groups": []})),
    ("step_nan_grad", lambda c: (lambda ps: (_set_grad(ps[0], c.t(np.array([NAN, 1.0, 1.0]))),
                                             c.optim.Adam(ps, lr=0.1).step()))(c.params(2))),
    ("step_sparse_grad_none", lambda c: (lambda ps: (setattr(ps[0], "grad", None),
                                                     c.optim.Adam(ps, lr=0.1).step()))(c.params(2))),
]
for name, call in OPT_USE:
    case(f"optimizer_use:{name}", call)


def _set_grad(p, g):
    p.grad = g


# --------------------------------------------------------------------------- schedulers
SCHEDULERS = [
    ("StepLR_step_size", lambda c, v: c.optim.lr_scheduler.StepLR(c.sgd(), step_size=v)),
    ("StepLR_gamma", lambda c, v: c.optim.lr_scheduler.StepLR(c.sgd(), step_size=2, gamma=v)),
    ("MultiStepLR_gamma", lambda c, v: c.optim.lr_scheduler.MultiStepLR(c.sgd(), [1, 2], gamma=v)),
    ("ExponentialLR", lambda c, v: c.optim.lr_scheduler.ExponentialLR(c.sgd(), gamma=v)),
    ("CosineAnnealingLR_T_max", lambda c, v: c.optim.lr_scheduler.CosineAnnealingLR(c.sgd(), T_max=v)),
    ("CosineAnnealingLR_eta_min", lambda c, v: c.optim.lr_scheduler.CosineAnnealingLR(c.sgd(), 3, eta_min=v)),
    ("LinearLR_start", lambda c, v: c.optim.lr_scheduler.LinearLR(c.sgd(), start_factor=v)),
    ("LinearLR_end", lambda c, v: c.optim.lr_scheduler.LinearLR(c.sgd(), end_factor=v)),
    ("LinearLR_total", lambda c, v: c.optim.lr_scheduler.LinearLR(c.sgd(), total_iters=v)),
    ("ConstantLR_factor", lambda c, v: c.optim.lr_scheduler.ConstantLR(c.sgd(), factor=v)),
    ("PolynomialLR_power", lambda c, v: c.optim.lr_scheduler.PolynomialLR(c.sgd(), power=v)),
    ("PolynomialLR_total", lambda c, v: c.optim.lr_scheduler.PolynomialLR(c.sgd(), total_iters=v)),
    ("WarmRestarts_T_0", lambda c, v: c.optim.lr_scheduler.CosineAnnealingWarmRestarts(c.sgd(), T_0=v)),
    ("WarmRestarts_T_mult", lambda c, v: c.optim.lr_scheduler.CosineAnnealingWarmRestarts(c.sgd(), 2, T_mult=v)),
    ("OneCycleLR_total", lambda c, v: c.optim.lr_scheduler.OneCycleLR(c.sgd(), max_lr=1.0, total_steps=v)),
    ("OneCycleLR_pct", lambda c, v: c.optim.lr_scheduler.OneCycleLR(c.sgd(), max_lr=1.0, total_steps=10,
                                                                    pct_start=v)),
    ("ReduceLROnPlateau_factor", lambda c, v: c.optim.lr_scheduler.ReduceLROnPlateau(c.sgd(), factor=v)),
    ("ReduceLROnPlateau_patience", lambda c, v: c.optim.lr_scheduler.ReduceLROnPlateau(c.sgd(), patience=v)),
    ("ReduceLROnPlateau_min_lr", lambda c, v: c.optim.lr_scheduler.ReduceLROnPlateau(c.sgd(), min_lr=v)),
    ("ReduceLROnPlateau_cooldown", lambda c, v: c.optim.lr_scheduler.ReduceLROnPlateau(c.sgd(), cooldown=v)),
]
SCHED_VALUES = [("zero", 0), ("negative", -1), ("float", 1.5), ("half", 0.5), ("str", "a"), ("None", None),
                ("nan", NAN), ("two", 2), ("one", 1.0)]
family("scheduler", SCHEDULERS, SCHED_VALUES)
SCHED_MISC = [
    ("not_optimizer", lambda c: c.optim.lr_scheduler.StepLR("opt", 2)),
    ("not_optimizer_none", lambda c: c.optim.lr_scheduler.ExponentialLR(None, 0.9)),
    ("MultiStepLR_unsorted", lambda c: c.optim.lr_scheduler.MultiStepLR(c.sgd(), [3, 1]).get_last_lr()),
    ("MultiStepLR_str", lambda c: c.optim.lr_scheduler.MultiStepLR(c.sgd(), "ab")),
    ("ReduceLROnPlateau_mode", lambda c: c.optim.lr_scheduler.ReduceLROnPlateau(c.sgd(), mode="bad")),
    ("ReduceLROnPlateau_threshold_mode", lambda c: c.optim.lr_scheduler.ReduceLROnPlateau(c.sgd(),
                                                                                         threshold_mode="bad")),
    ("ReduceLROnPlateau_step_str", lambda c: c.optim.lr_scheduler.ReduceLROnPlateau(c.sgd()).step("a")),
    ("ReduceLROnPlateau_min_lr_list", lambda c: c.optim.lr_scheduler.ReduceLROnPlateau(c.sgd(), min_lr=[0.1, 0.2])),
    ("OneCycleLR_no_total", lambda c: c.optim.lr_scheduler.OneCycleLR(c.sgd(), max_lr=1.0)),
    ("OneCycleLR_anneal", lambda c: c.optim.lr_scheduler.OneCycleLR(c.sgd(), 1.0, 10, anneal_strategy="bad")),
    ("OneCycleLR_max_lr_list", lambda c: c.optim.lr_scheduler.OneCycleLR(c.sgd(), [1.0, 2.0], 10)),
    ("OneCycleLR_overstep", lambda c: (lambda s: [s.step() for _ in range(3)])(
        c.optim.lr_scheduler.OneCycleLR(c.sgd(), 1.0, 2))),
    ("LambdaLR_not_callable", lambda c: c.optim.lr_scheduler.LambdaLR(c.sgd(), 3)),
    ("LambdaLR_list_length", lambda c: c.optim.lr_scheduler.LambdaLR(c.sgd(), [lambda e: 1.0] * 2)),
    ("MultiplicativeLR_not_callable", lambda c: c.optim.lr_scheduler.MultiplicativeLR(c.sgd(), "a")),
    ("SequentialLR_milestones", lambda c: (lambda o: c.optim.lr_scheduler.SequentialLR(
        o, [c.optim.lr_scheduler.ConstantLR(o), c.optim.lr_scheduler.ExponentialLR(o, 0.9)], milestones=[1, 2]))(
        c.sgd())),
    ("SequentialLR_other_optimizer", lambda c: c.optim.lr_scheduler.SequentialLR(
        c.sgd(), [c.optim.lr_scheduler.ConstantLR(c.sgd())], milestones=[])),
    ("SequentialLR_empty", lambda c: c.optim.lr_scheduler.SequentialLR(c.sgd(), [], milestones=[])),
    ("last_epoch_without_initial_lr", lambda c: c.optim.lr_scheduler.StepLR(c.sgd(), 2, last_epoch=3)),
]
for name, call in SCHED_MISC:
    case(f"scheduler_misc:{name}", call)

# --------------------------------------------------------------------------- tensor methods and autograd
METHOD_CALLS = [
    ("view_wrong", lambda c: c.t(M23).view(4, 2)),
    ("view_str", lambda c: c.t(M23).view("a")),
    ("item_many", lambda c: c.t(V3).item()),
    ("item_empty", lambda c: c.t(EMPTY).item()),
    ("index_oob", lambda c: c.t(V3)[3]),
    ("index_neg_oob", lambda c: c.t(V3)[-4]),
    ("index_too_many", lambda c: c.t(V3)[0, 0]),
    ("index_float", lambda c: c.t(V3)[1.5]),
    ("index_str", lambda c: c.t(V3)["a"]),
    ("index_0d", lambda c: c.t(SCALAR)[0]),
    ("index_bool_shape", lambda c: c.t(V3)[c.t(np.array([True, False]))]),
    ("index_tensor_oob", lambda c: c.t(V3)[c.t(np.array([0, 3]))]),
    ("index_float_tensor", lambda c: c.t(V3)[c.t(np.array([0.0]))]),
    ("setitem_shape", lambda c: c.t(V3).__setitem__(slice(None), c.t(np.ones(2)))),
    ("setitem_str", lambda c: c.t(V3).__setitem__(0, "a")),
    ("setitem_leaf_grad", lambda c: c.t(V3, grad=True).__setitem__(0, 1.0)),
    ("add_inplace_broadcast", lambda c: c.t(V3).add_(c.t(M23))),
    ("add_inplace_dtype", lambda c: c.t(INT23).add_(c.t(M23))),
    ("mul_inplace_leaf", lambda c: c.t(V3, grad=True).mul_(2.0)),
    ("add_inplace_list", lambda c: c.t(V3).add_([1.0, 2.0, 3.0])),
    ("fill_tensor_1d", lambda c: c.t(V3).fill_(c.t(V3))),
    ("copy_shape", lambda c: c.t(V3).copy_(c.t(np.ones(2)))),
    ("copy_list", lambda c: c.t(V3).copy_([1.0, 2.0, 3.0])),
    ("backward_non_scalar", lambda c: (c.t(V3, grad=True) * 2).backward()),
    ("backward_no_grad", lambda c: c.t(V3).sum().backward()),
    ("backward_gradient_shape", lambda c: (c.t(V3, grad=True) * 2).backward(c.t(np.ones(2)))),
    ("backward_gradient_list", lambda c: (c.t(V3, grad=True) * 2).backward([1.0, 1.0, 1.0])),
    ("backward_gradient_dtype", lambda c: (c.t(V3, grad=True) * 2).backward(c.t(np.ones(3, dtype=np.int64)))),
    ("backward_twice", lambda c: (lambda y: (y.backward(retain_graph=False), y.backward()))(
        (c.t(V3, grad=True) ** 2).sum())),
    ("backward_twice_nothing_saved", lambda c: (lambda x: (lambda y: (y.backward(), y.backward(), x.grad))(
        (x + 1.0).sum()))(c.t(V3, grad=True))),
    ("backward_twice_mul_by_const", lambda c: (lambda x: (lambda y: (y.backward(), y.backward(), x.grad))(
        (x * 2.0).sum()))(c.t(V3, grad=True))),
    ("grad_not_tensor_outputs", lambda c: c.lib.autograd.grad([1.0], [c.t(V3, grad=True)])),
    ("grad_unused", lambda c: c.lib.autograd.grad(c.t(V3, grad=True).sum(), [c.t(V3, grad=True)])),
    ("grad_input_no_grad", lambda c: c.lib.autograd.grad(c.t(V3, grad=True).sum(), [c.t(V3)])),
    ("requires_grad_int", lambda c: c.t(INT23).requires_grad_()),
    ("set_grad_shape", lambda c: setattr(c.t(V3, grad=True), "grad", c.t(np.ones(2)))),
    ("set_grad_list", lambda c: setattr(c.t(V3, grad=True), "grad", [1.0, 1.0, 1.0])),
    ("set_grad_dtype", lambda c: setattr(c.t(V3, grad=True), "grad", c.t(np.ones(3, dtype=np.int64)))),
    ("hook_wrong_shape", lambda c: (lambda x: (x.register_hook(lambda g: g[:2]), (x * 2).sum().backward(),
                                               x.grad))(c.t(V3, grad=True))),
    ("hook_wrong_dtype", lambda c: (lambda x: (x.register_hook(lambda g: g.to(c.lib.float32)),
                                               (x * 2).sum().backward(), x.grad))(c.t(V3, grad=True))),
    ("hook_not_tensor", lambda c: (lambda x: (x.register_hook(lambda g: 3.0), (x * 2).sum().backward(),
                                              x.grad))(c.t(V3, grad=True))),
    ("hook_nonleaf_wrong_shape", lambda c: (lambda x: (lambda y: (y.register_hook(lambda g: g[:2]),
                                                                  y.sum().backward(), x.grad))(x * 2))(
        c.t(V3, grad=True))),
    ("register_hook_not_callable", lambda c: c.t(V3, grad=True).register_hook(3)),
    ("register_hook_no_grad", lambda c: c.t(V3).register_hook(lambda g: g)),
    ("to_bad_dtype", lambda c: c.t(V3).to("float")),
    ("to_int", lambda c: c.t(V3).to(3.5)),
    ("type_bad", lambda c: c.t(V3).type("float")),
    ("numpy_requires_grad", lambda c: c.t(V3, grad=True).numpy()),
    ("size_oob", lambda c: c.t(V3).size(1)),
    ("size_str", lambda c: c.t(V3).size("a")),
    ("tolist_0d", lambda c: c.t(SCALAR).tolist()),
    ("float_of_many", lambda c: float(c.t(V3))),
    ("int_of_empty", lambda c: int(c.t(EMPTY))),
    ("bool_of_many", lambda c: bool(c.t(V3))),
    ("len_0d", lambda c: len(c.t(SCALAR))),
    ("iter_0d", lambda c: list(c.t(SCALAR))),
    ("relu_nan_grad", lambda c: _backward_sum(c, c.lib.relu(c.t(SPECIAL, grad=True)))),
    ("abs_nan_grad", lambda c: _backward_sum(c, c.lib.abs(c.t(SPECIAL, grad=True)))),
    ("max_nan_grad", lambda c: _backward_sum(c, c.lib.max(c.t(SPECIAL, grad=True)))),
    ("min_nan_grad", lambda c: _backward_sum(c, c.lib.min(c.t(SPECIAL, grad=True)))),
    ("amax_nan_grad", lambda c: _backward_sum(c, c.lib.amax(c.t(SPECIAL, grad=True)))),
    ("amin_nan_grad", lambda c: _backward_sum(c, c.lib.amin(c.t(SPECIAL.reshape(2, 3), grad=True), 1))),
    ("max_dim_nan_grad", lambda c: _backward_sum(c, c.lib.max(c.t(SPECIAL.reshape(3, 2), grad=True), 1)[0])),
    ("clamp_nan_grad", lambda c: _backward_sum(c, c.lib.clamp(c.t(SPECIAL, grad=True), -1.0, 1.0))),
    ("clamp_min_nan_grad", lambda c: _backward_sum(c, c.lib.clamp(c.t(SPECIAL, grad=True), min=0.0))),
    ("clamp_tensor_nan_grad", lambda c: _backward_sum(c, c.lib.clamp(c.t(SPECIAL, grad=True),
                                                                     c.t(np.zeros(6), grad=True),
                                                                     c.t(np.ones(6), grad=True)))),
    ("clamp_nan_bound_grad", lambda c: _backward_sum(c, c.lib.clamp(c.t(V3, grad=True),
                                                                    c.t(np.array([NAN, 0.0, 0.0]), grad=True)))),
    ("maximum_nan_grad", lambda c: _backward_sum(c, c.lib.maximum(c.t(SPECIAL, grad=True),
                                                                  c.t(np.zeros(6), grad=True)))),
    ("minimum_nan_grad", lambda c: _backward_sum(c, c.lib.minimum(c.t(SPECIAL, grad=True),
                                                                  c.t(SPECIAL[::-1].copy(), grad=True)))),
    ("sqrt_zero_grad", lambda c: _backward_sum(c, c.lib.sqrt(c.t(np.array([0.0, 1.0]), grad=True)))),
    ("leaky_relu_nan_grad", lambda c: _backward_sum(c, c.F.leaky_relu(c.t(SPECIAL, grad=True)))),
    ("elu_nan_grad", lambda c: _backward_sum(c, c.F.elu(c.t(SPECIAL, grad=True)))),
    ("hardswish_nan_grad", lambda c: _backward_sum(c, c.F.hardswish(c.t(SPECIAL, grad=True)))),
    ("sign_nan_grad", lambda c: _backward_sum(c, c.lib.sign(c.t(SPECIAL, grad=True)))),
    ("silu_0d_grad", lambda c: _backward_sum(c, c.F.silu(c.t(SCALAR, grad=True)))),
    ("gelu_0d_grad", lambda c: _backward_sum(c, c.F.gelu(c.t(SCALAR, grad=True)))),
    ("softplus_0d_grad", lambda c: _backward_sum(c, c.F.softplus(c.t(SCALAR, grad=True)))),
    ("norm_empty_grad", lambda c: _backward_sum(c, c.lib.norm(c.t(EMPTY, grad=True)))),
    ("sum_empty_grad", lambda c: _backward_sum(c, c.lib.sum(c.t(EMPTY, grad=True), 0))),
    ("mean_empty_grad", lambda c: _backward_sum(c, c.lib.mean(c.t(EMPTY, grad=True), 1))),
    ("softmax_empty_grad", lambda c: _backward_sum(c, c.lib.softmax(c.t(EMPTY, grad=True), 0))),
    ("logsumexp_empty", lambda c: c.lib.logsumexp(c.t(EMPTY), 0)),
    ("cumsum_0d_grad", lambda c: _backward_sum(c, c.lib.cumsum(c.t(SCALAR, grad=True), 0))),
    ("prod_like_cumprod_zero_grad", lambda c: _backward_sum(c, c.lib.cumprod(c.t(np.array([2.0, 0.0, 3.0]),
                                                                               grad=True), 0))),
]
for name, call in METHOD_CALLS:
    case(f"tensor:{name}", call)


# --------------------------------------------------------------------------- NaN, infinite and negative parameters
# (each call with each value: PyTorch refuses some, NaN included, and computes others; the random ones are
# compared by shape and dtype: their names hold "normal", "bernoulli" or "rand")
NUMBER_PARAMETERS = [
    ("cosine_similarity_eps", lambda c, v: c.F.cosine_similarity(c.t(M23), c.t(M23 + 1), eps=v)),
    ("pairwise_distance_p", lambda c, v: c.F.pairwise_distance(c.t(M23), c.t(M23 + 1), p=v)),
    ("renorm_p", lambda c, v: c.lib.renorm(c.t(M23), v, 0, 1.0)),
    ("renorm_maxnorm", lambda c, v: c.lib.renorm(c.t(M23), 2, 0, v)),
    ("smooth_l1_beta", lambda c, v: c.F.smooth_l1_loss(c.t(M23), c.t(M23 * 0), beta=v)),
    ("huber_delta", lambda c, v: c.F.huber_loss(c.t(M23), c.t(M23 * 0), delta=v)),
    ("rrelu_lower", lambda c, v: c.F.rrelu(c.t(M23), lower=v, upper=0.5)),
    ("rrelu_upper", lambda c, v: c.F.rrelu(c.t(M23), lower=-2.0, upper=v)),
    ("arange_step", lambda c, v: c.lib.arange(0.0, 3.0, v)),
    ("logit_eps", lambda c, v: c.lib.logit(c.t(np.array([0.2, 0.7, 1.2, -0.1])), eps=v)),
    ("elu_alpha", lambda c, v: c.F.elu(c.t(M23), v)),
    ("pad_value", lambda c, v: c.F.pad(c.t(M23), (1, 1), value=v)),
    ("interpolate_scale", lambda c, v: c.F.interpolate(c.t(M23.reshape(1, 2, 3)), scale_factor=v)),
    ("quantile_q", lambda c, v: c.lib.quantile(c.t(V3), v)),
    ("normal_std", lambda c, v: c.lib.normal(0.0, v, size=(3,))),
    ("bernoulli_p", lambda c, v: c.lib.bernoulli(c.t(np.full(3, 0.5)), p=v)),
    ("rand_uniform_from", lambda c, v: c.lib.zeros(3).uniform_(v, 1.0)),
    ("layer_norm_eps", lambda c, v: c.F.layer_norm(c.t(M23), (3,), eps=v)),
    ("rms_norm_eps", lambda c, v: c.F.rms_norm(c.t(M23), (3,), eps=v)),
    ("group_norm_eps", lambda c, v: c.F.group_norm(c.t(M23.reshape(1, 2, 3)), 1, eps=v)),
    ("instance_norm_eps", lambda c, v: c.F.instance_norm(c.t(M23.reshape(1, 2, 3)), eps=v)),
    ("batch_norm_eps", lambda c, v: c.F.batch_norm(c.t(M23), c.t(np.zeros(3)), c.t(np.ones(3)), training=True,
                                                   eps=v)),
    ("batch_norm_momentum", lambda c, v: c.F.batch_norm(c.t(M23), c.t(np.zeros(3)), c.t(np.ones(3)),
                                                        training=True, momentum=v)),
    ("local_response_norm_alpha", lambda c, v: c.F.local_response_norm(c.t(M23.reshape(1, 2, 3)), 2, alpha=v)),
    ("local_response_norm_beta", lambda c, v: c.F.local_response_norm(c.t(M23.reshape(1, 2, 3)), 2, beta=v)),
    ("local_response_norm_k", lambda c, v: c.F.local_response_norm(c.t(M23.reshape(1, 2, 3)), 2, k=v)),
    ("normalize_p", lambda c, v: c.F.normalize(c.t(M23), p=v)),
    ("Adam_lr", lambda c, v: c.optim.Adam(c.params(), lr=v)),
    ("Adam_eps", lambda c, v: c.optim.Adam(c.params(), eps=v)),
    ("AdamW_weight_decay", lambda c, v: c.optim.AdamW(c.params(), weight_decay=v)),
    ("SGD_momentum", lambda c, v: c.optim.SGD(c.params(), lr=0.1, momentum=v)),
]
family("number_parameter", NUMBER_PARAMETERS, [("nan", NAN), ("inf", INF), ("-inf", -INF), ("-1", -1.0), ("0", 0.0)])

# Cases where minigrad deliberately differs from PyTorch 2.13: id -> (what minigrad does: the exception class it
# raises, or None for "computes a result"; the reason). The test checks minigrad does exactly that and changes
# nothing. (Generic rule, in test_bad_input.kind: where PyTorch's Python wrapper crashes with AttributeError on a
# non-Tensor argument, minigrad raises TypeError.)
DOCUMENTED_DIFFERENCES = {
    "reduce_dim:logsumexp:dim_tuple_empty": (None, "PyTorch's logsumexp(x, dim=()) fails inside with a shape error; "
                                                   "minigrad reduces over every dim, as sum and mean do for dim=()"),
    "loss:ce_smoothing_negative": (RuntimeError, "PyTorch checks only label_smoothing <= 1 and computes a loss for "
                                                 "a negative smoothing; minigrad refuses values outside [0, 1]"),
    "norm:batch_norm_1d": (RuntimeError, "PyTorch's IndexError comes from looking up dim 1; minigrad says the input "
                                         "needs at least 2 dimensions (N, C, ...)"),
    "norm:batch_norm_0d": (RuntimeError, "as batch_norm_1d"),
    "attention:value_len_mismatch": (RuntimeError, "PyTorch's CPU kernel does not check value's sequence length "
                                                   "against key's and returns numbers; minigrad names the shapes"),
    **{f"constructor:{c}:bool": (TypeError, "PyTorch refuses a bool size in some positions of its parameter "
                                            "shapes and takes it (as 1) in others; minigrad refuses bool sizes")
       for c in ("LSTM_input", "Linear_in", "Embedding_dim")},
    "module_forward:lstm_h0_not_tuple": (RuntimeError, "PyTorch's IndexError comes from unpacking a tensor as the "
                                                       "(h_0, c_0) pair; minigrad names the shapes it expected"),
    "tensor:grad_not_tensor_outputs": (TypeError, "PyTorch asserts (AssertionError); minigrad raises the TypeError "
                                                  "of every other non-Tensor argument"),
    "module_forward:cross_map_lrn_zero_size": (ValueError, "PyTorch divides alpha by the size 0 (ZeroDivisionError); "
                                                           "minigrad says the size must be at least 1"),
    "module_forward:cross_map_lrn_negative_size": (ValueError, "PyTorch computes numbers with a window of no "
                                                               "channels; minigrad says the size must be at least 1"),
    "module_forward:cross_map_lrn_float_size": (TypeError, "PyTorch's forward takes a float size (its backward "
                                                           "then fails); minigrad refuses it, as local_response_norm"),
    "tensor:to_int": (TypeError, "PyTorch's Tensor.to(3.5) returns the tensor unchanged; minigrad refuses an "
                                 "argument that is neither a dtype, a device nor a tensor"),
    **{f"number_parameter:local_response_norm_{p}:-inf": (None, "k + alpha * mean(x^2) is -inf: PyTorch's pow gives "
                                                                "(-inf)^-0.75 = 0, minigrad's square roots NaN")
       for p in ("alpha", "k")},
}

# Known open cases (xfail, strict: fixing one makes its test fail until it is removed from here): id -> reason.
OPEN = {}   # none left: every generated case raises PyTorch's exception type or computes its result
