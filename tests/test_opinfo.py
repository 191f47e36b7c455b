"""PyTorch's operator database (``op_db``, ``torch.testing._internal.common_methods_invocations``) run against
every op minigrad has: one test per (op, variant, kind), e.g. ``test_opinfo[tan-method-float64]``.

* kind ``float64``: a fixed spread of the op's float64 samples (or, for ops PyTorch defines on other dtypes
  only, complex128 or int64): values, dtypes, float64 gradients of a random upstream, inputs changed only where
  PyTorch changes them; the in-place variant returns its input object holding PyTorch's values;
* kind ``dtypes``: float32 and the integer and bool dtypes PyTorch lists for the op, a few samples each
  (values and dtypes), and bfloat16 and float16 (function and in-place variants), whose values are compared in ulps
  of their dtype: bit for bit for the families in ``BFLOAT16_EXACT``, within ``BFLOAT16_ULPS`` (float16:
  ``FLOAT16_ULPS`` first) where listed, within 1 ulp otherwise;
* kind ``errors``: every ``ErrorInput`` raises PyTorch's exception type (and changes nothing);
* kinds ``out`` and ``out_dtypes`` (ops with ``out=``): the values written into an ``out`` of the result's dtype,
  and, for an ``out`` of each other dtype, whether PyTorch computes (then its values, cast) or refuses (its
  exception type, ``out`` left empty) (``tests/opinfo_out.py``).

minigrad's ops are found by name (``tests/opinfo_harness.py``): an op added anywhere in minigrad is run here
from then on. An op minigrad lacks is not run (``bench/opinfo_coverage.py`` counts it).

Known failures are listed below with their reasons, nothing else is left out: ``SKIPS`` names whole cases,
which are run and must still fail (a fixed one is reported, so its entry goes); ``SAMPLE_SKIPS`` leaves out
single samples by a predicate. Samples that cannot be expressed in minigrad at all (a complex32 tensor, a
``torch.Generator``, a sparse layout) are not counted either; the coverage report lists them.
"""
import pytest

from . import oracle
from .opinfo_harness import cases, op_id, run_case
from .oracle import RecordedTensor

LIVE = oracle.live_torch() is not None
if LIVE:
    pytest.importorskip("expecttest", reason="expecttest not installed: PyTorch's OpInfo database imports it")

# --------------------------------------------------------------------------- the reviewed lists
# (op id, variant) or (op id, variant, kind): the whole case fails for the reason given (strict xfail).
SKIPS = {
    **{(name, "function", "out"): "PyTorch 2.13's composite returns a new tensor for a sample with s= and leaves the "
       "out tensor empty; minigrad writes the result into out" for name in ("fft.ihfft2", "fft.ihfftn")},
    ("linalg.eigh", "function", "out"): "eigenvectors are unique up to sign: the float64 pass compares them as |Q|, "
                                        "this pass as written",
    **{(name, "function", "complex_unlisted"): "PyTorch 2.13's masked ops crash on a complex input with a TypeError "
       "(torch.iinfo() of a complex dtype, or an assertion) before any kernel; minigrad refuses it with the "
       "reduction's own error or computes it" for name in ("masked.amax", "masked.amin", "masked.argmax",
                                                           "masked.argmin", "masked.norm", "masked.softmax",
                                                           "masked.log_softmax", "masked.softmin", "masked.logaddexp")},
    ("bernoulli", "function", "complex_unlisted"): "PyTorch refuses complex probabilities only when it actually "
                                                   "draws (p = 0 or 1 and empty inputs pass); minigrad refuses them "
                                                   "always",
    **{(name, "function", "complex_unlisted"): "PyTorch's Python wrapper checks acc_dtype against real dtypes "
       "first (ValueError); minigrad's log_softmax refuses the complex input (NotImplementedError)"
       for name in ("nn.functional.linear_cross_entropy.chunked", "nn.functional.linear_cross_entropy.chunked_none")},
}


# op id: (rtol, atol) of the full pass where an op's float64 values legitimately differ more than 1e-7 (gradients:
# at least 1e-6), each with its reason in a comment. Empty: every op agrees to 1e-7.
TOLERANCES = {
    # PyTorch's float64 Bessel functions of the first and second kind are accurate to about 1e-6 absolute (measured
    # over 0.01..200: up to 3.8e-7 for j0, 4.7e-7 j1, 2.1e-7 y0, 8.7e-7 y1); minigrad's are SciPy's, which agree with
    # mpmath to the last bits. The samples' values near the functions' zeros differ by that much.
    **{f"special.bessel_{kind}": (1e-6, 2e-6) for kind in ("j0", "j1", "y0", "y1")},
}

# op id: why its outputs are compared as the OpInfo's output_process_fn_grad leaves them (for the gradients PyTorch
# compares them so too): outputs that are unique only up to sign or phase.
PROCESSED = {
    "linalg.eigh": "eigenvectors are unique up to sign: compared as |Q|",
    "linalg.eig": "eigenvectors are unique up to a complex phase: compared as the OpInfo normalizes them",
}


# op id: why its float64 pass compares values but not gradients with PyTorch's.
NO_GRADIENTS = {
    "as_strided_scatter": "PyTorch 2.13's own backward of as_strided_scatter fails its gradcheck; minigrad's gradient is "
                          "checked by finite differences in tests/test_ops_index_more.py",
}


def _integral(dtype):
    return dtype in ("uint8", "int8", "int16", "int32", "int64", "bool")


def _not_a_tensor(value):
    return not isinstance(value, RecordedTensor)      # samples are filtered as recorded (tests/opinfo_record.py)


# (a tuple of op ids, or "*" for every op; predicate(op, sample, variant, dtype); reason): single samples left out.
SAMPLE_SKIPS = [
    ("*", lambda op, s, variant, dtype: op.name.startswith("__r") and _not_a_tensor(s.input),
     "Tensor.__radd__(2, 3): PyTorch's C method refuses a non-Tensor self; minigrad's is a Python function, "
     "reached only through a Tensor operand in real code"),
    (("grid_sampler_2d", "grid_sampler_3d"), lambda op, s, variant, dtype: dtype in ("bfloat16", "float16"),
     "PyTorch computes the sampling coordinates in bfloat16 or float16 (a point can move to another pixel), minigrad "
     "in float32; the float32 and float64 samples are compared"),
    (("istft",), lambda op, s, variant, dtype: dtype == "complex128" and _window_is_a_view(s),
     "PyTorch 2.13 gives no gradient to a window that is a no-grad view of a complex leaf (a fresh leaf of the same "
     "values gets the gradient minigrad gives; tests/test_fft.py compares that)"),
    (("nn.functional.triplet_margin_with_distance_loss",), lambda op, s, variant, dtype: True,
     "its samples pass a PyTorch module instance as distance_function, which the conversion cannot turn into minigrad's; "
     "tests/test_functional_more.py and tests/test_modinfo.py compare it with minigrad's own distance modules"),
    (("polygamma.polygamma_n_0", "polygamma.polygamma_n_1", "polygamma.polygamma_n_2", "polygamma.polygamma_n_3",
      "polygamma.polygamma_n_4", "special.polygamma.special_polygamma_n_0"),
     lambda op, s, variant, dtype: _integral(dtype),
     "at the poles (0 and the negative integers, which integer samples hit) PyTorch's float32 polygamma returns large "
     "finite numbers (1.7e16 at -3), SciPy's returns inf, the exact value"),
    (("sort", "argsort", "topk", "msort", "kthvalue", "mode", "median", "nanmedian"),
     lambda op, s, variant, dtype: ((_integral(dtype) or dtype in ("bfloat16", "float16"))
                                    and not s.kwargs.get("stable")),
     "ties in integer, bool, bfloat16 and float16 data (256 or 1024 values per binade): the order of equal elements "
     "is unspecified unless stable=True"),
    (("sparse.mm.reduce",), lambda op, s, variant, dtype: True,
     "its samples pass reduce= other than 'sum' to CSR products, which minigrad's sparse.mm does not take "
     "(tests/test_sparse.py and tests/test_sparse_compressed.py compare sparse.mm)"),
    (("sparse.sampled_addmm",), lambda op, s, variant, dtype: True,
     "the result is a CSR tensor, which the harness does not compare; tests/test_sparse_compressed.py compares "
     "sampled_addmm's values and gradients"),
    (("to_sparse",), lambda op, s, variant, dtype: True,
     "the result is a sparse tensor, which the harness does not compare; tests/test_sparse.py compares to_sparse "
     "and to_dense with their gradients"),
    (("matrix_exp",), lambda op, s, variant, dtype: dtype in ("bfloat16", "float16"),
     "PyTorch's bfloat16 and float16 matrix_exp return NaN for these samples (its scaling and squaring runs in the "
     "16-bit dtype); minigrad computes in float32 and rounds once"),
    (("complex", "view_as_complex"), lambda op, s, variant, dtype: dtype == "float16",
     "PyTorch makes complex32 (ComplexHalf) of float16 parts, a dtype minigrad does not have (it refuses float16 "
     "parts, as PyTorch refuses bfloat16 ones)"),
]


def _window_is_a_view(sample):
    window = sample.kwargs.get("window")
    return window is not None and window._is_view()


def _family(*names):
    return set(names)


# bfloat16 samples compared bit for bit: families whose result is one correctly rounded float32 operation, or no
# arithmetic at all, rounded once to bfloat16 in both libraries (checked on every CPU: IEEE arithmetic)
BFLOAT16_EXACT = (
    _family(  # values moved, not computed: views, copies, gathers, creation, padding
        "H", "T", "mH", "mT", "__getitem__", "_chunk_cat", "_unsafe_masked_index", "alias_copy", "argwhere",
        "as_strided_scatter", "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_tensors",
        "broadcast_to", "cartesian_prod", "cat", "chunk", "clone", "column_stack", "combinations", "contiguous",
        "diag", "diag_embed", "diagflat", "diagonal", "diagonal_copy", "diagonal_scatter", "dsplit", "dstack",
        "expand", "expand_as", "expand_copy", "fft.fftshift", "fft.ifftshift", "fill", "flatten", "flip", "fliplr",
        "flipud", "full", "full_like", "gather", "hsplit", "hstack", "index_copy", "index_fill", "index_put",
        "index_select", "item", "linalg.diagonal", "masked_fill", "masked_scatter", "masked_select", "movedim",
        "narrow", "narrow_copy", "new_full", "new_ones", "new_zeros", "nn.functional.channel_shuffle",
        "nn.functional.pad.circular", "nn.functional.pad.constant",
        "nn.functional.pad.reflect", "nn.functional.pad.replicate", "nn.functional.pad.replicate_negative",
        "nn.functional.pixel_shuffle", "nn.functional.pixel_unshuffle", "nn.functional.unfold", "nonzero",
        "nonzero_static", "ones", "ones_like", "permute", "permute_copy", "put", "ravel", "repeat",
        "repeat_interleave", "reshape", "reshape_as", "roll", "rot90", "scalar_tensor", "scatter", "select",
        "select_scatter", "slice_scatter", "split", "split_with_sizes", "squeeze", "squeeze_copy", "stack", "t",
        "t_copy", "take", "take_along_dim", "tile", "transpose", "transpose_copy", "tril", "triu", "unbind",
        "unflatten", "unfold", "unfold_copy", "unsqueeze", "unsqueeze_copy", "view", "view_as", "view_copy",
        "vsplit", "vstack", "where", "zeros", "zeros_like")
    | _family(  # comparisons, selections and orderings: a value of the input is chosen, none computed
        "all", "amax", "amin", "aminmax", "any", "argmax", "argmin", "bucketize", "clamp", "clamp_max", "clamp_min",
        "count_nonzero", "cummax", "cummin", "eq", "equal", "fmax", "fmin", "ge", "gt", "isfinite", "isin", "isinf",
        "isnan", "isneginf", "isposinf", "isreal", "kthvalue", "le", "logical_and", "logical_not", "logical_or",
        "logical_xor", "lt", "max.binary", "max.reduction_no_dim", "max.reduction_with_dim", "maximum", "median",
        "min.binary", "min.reduction_no_dim", "min.reduction_with_dim", "minimum", "mode", "msort", "nanmedian", "ne",
        "nn.functional.adaptive_max_pool1d", "nn.functional.adaptive_max_pool2d", "nn.functional.adaptive_max_pool3d",
        "nn.functional.hardshrink", "nn.functional.hardtanh", "nn.functional.max_pool1d", "nn.functional.max_pool2d",
        "nn.functional.max_pool3d", "nn.functional.max_unpool1d", "nn.functional.max_unpool1d.grad",
        "nn.functional.max_unpool2d", "nn.functional.max_unpool2d.grad", "nn.functional.max_unpool3d",
        "nn.functional.max_unpool3d.grad", "nn.functional.relu", "nn.functional.relu6", "nn.functional.threshold",
        "searchsorted", "sgn", "sign", "signbit", "topk")
    | _family(  # one correctly rounded IEEE operation in float32, rounded once
        "__radd__", "__rmul__", "__rsub__", "abs", "add", "ceil", "copysign", "div.floor_rounding",
        "div.no_rounding_mode", "float_power", "floor", "floor_divide", "fmod", "frac", "heaviside", "ldexp", "mul",
        "neg", "positive", "reciprocal", "round", "round.decimals_0", "rsub", "sqrt", "square", "sub", "true_divide",
        "trunc")
    | _family(  # conversions
        "bfloat16", "bool", "byte", "cdouble", "cfloat", "char", "conj", "conj_physical", "double", "float", "half",
        "int", "long", "real", "resolve_conj", "resolve_neg", "short")
)

# op id: (ulps, reason) where bfloat16 values may differ by more than 1 ulp from PyTorch's. Every other op not in
# BFLOAT16_EXACT: within 1 ulp (float32 arithmetic in another order, or another float32 exp/log/..., rounded once;
# a result that cancels may differ by 1 ulp of the tensor's largest value).
BFLOAT16_ULPS = {
    "addbmm": (2, "PyTorch rounds the batch sum of products to bfloat16 before adding the input"),
    "tensordot": (2, "PyTorch's tensordot is a bfloat16 mm of reshaped operands, reduced in another order"),
    "nn.functional.binary_cross_entropy_with_logits": (2, "PyTorch rounds the elementwise losses to bfloat16 "
                                                          "before the mean"),
    "nn.functional.huber_loss": (2, "PyTorch rounds the elementwise losses to bfloat16 before the mean"),
    "_unsafe_masked_index_put_accumulate": (2, "PyTorch accumulates repeated indices in bfloat16"),
    "nn.functional.embedding": (2, "with max_norm the looked-up rows are renormalized: PyTorch computes their norms "
                                   "and scales in bfloat16"),
    "nn.functional.conv_transpose3d": (4, "on CPUs without AVX-512, PyTorch adds the overlapping windows' "
                                          "contributions in bfloat16, rounding at each addition (2 ulps seen on an "
                                          "AMD EPYC with AVX2, up to 3 in 400 random samples)"),
    "nn.functional.grid_sample": (32, "PyTorch computes the sampling coordinates ((g + 1) / 2 * (size - 1)) in "
                                      "bfloat16: its interpolation weights carry bfloat16 rounding, minigrad's are "
                                      "float32"),
}


# op id: (ulps, reason) where float16 values may differ from PyTorch's by more than BFLOAT16_ULPS allows (which
# applies to float16 too, in float16 ulps: 1 unless listed, 0 for BFLOAT16_EXACT)
FLOAT16_ULPS = {
    "index_put": (2, "with accumulate=True PyTorch adds repeated indices in float16, rounding at each addition"),
    "renorm": (2, "PyTorch scales by maxnorm / norm computed in float16"),
}


def bfloat16_ulps(op):
    """How far (bfloat16 ulps) ``op``'s bfloat16 values may be from PyTorch's: 0, the listed bound, or 1."""
    if op_id(op) in BFLOAT16_EXACT:
        return 0
    return BFLOAT16_ULPS.get(op_id(op), (1, ""))[0]


def float16_ulps(op):
    """How far (float16 ulps) ``op``'s float16 values may be from PyTorch's: FLOAT16_ULPS's bound, else bfloat16's."""
    return FLOAT16_ULPS[op_id(op)][0] if op_id(op) in FLOAT16_ULPS else bfloat16_ulps(op)


def case_settings(op):
    """The reviewed rules above for ``op``, as ``run_case``'s keyword arguments (bench/opinfo_coverage.py uses
    them too, so the published coverage counts what this test counts)."""
    return dict(sample_filter=sample_skip, tolerance=TOLERANCES.get(op_id(op), (1e-7, 1e-7)),
                processed=op_id(op) in PROCESSED, gradients=op_id(op) not in NO_GRADIENTS,
                bfloat16_ulps=bfloat16_ulps(op), float16_ulps=float16_ulps(op))


def sample_skip(op, variant, sample, dtype):
    """The reason ``sample`` is left out of (op, variant), or None."""
    for ops, predicate, reason in SAMPLE_SKIPS:
        if not (ops == "*" or op_id(op) in ops):
            continue
        try:
            if predicate(op, sample, variant, dtype):
                return reason
        except AttributeError:      # no sample (one no record could hold): only rules that need none apply
            if sample is not None:
                raise
    return None


def skip_reason(op, variant, kind):
    return SKIPS.get((op_id(op), variant, kind)) or SKIPS.get((op_id(op), variant))


# --------------------------------------------------------------------------- the test
def _param(op, variant, kind):
    reason = skip_reason(op, variant, kind)
    # strict with PyTorch: a listed case that passes is reported (its entry goes); a replay runs a few recorded
    # samples of the case, which need not include the failing ones
    marks = [pytest.mark.xfail(strict=LIVE, reason=reason)] if reason else []
    return pytest.param(op, variant, kind, id=f"{op_id(op)}-{variant}-{kind}", marks=marks)


def _recorded_cases():
    """Without PyTorch: the cases recorded in tests/fixtures/test_opinfo.json.gz, as (op id, variant, kind)."""
    names = [n[len("test_opinfo["):-1] for n in oracle.recorded_tests("test_opinfo") if n.startswith("test_opinfo[")]
    return [tuple(n.rsplit("-", 2)) for n in names]


CASES = [_param(*case) for case in (cases() if LIVE else _recorded_cases())]


def _report(failures):
    lines = [f"{len(failures)} sample(s) disagree with PyTorch:"]
    for o in failures[:12]:
        sample = o.sample.sample_input if hasattr(o.sample, "sample_input") else o.sample
        lines.append(f"  [{o.dtype} #{o.index}] {o.what}: {o.message}\n      sample: {_brief(sample)}")
    return "\n".join(lines)


def _brief(sample):
    def show(v):
        if hasattr(v, "shape") and hasattr(v, "dtype"):
            return f"Tensor{list(v.shape)}:{str(v.dtype).rpartition('.')[2]}"
        if isinstance(v, (list, tuple)):
            return type(v)(show(x) for x in v) if not hasattr(v, "_fields") else v
        return v
    return f"input={show(sample.input)} args={show(list(sample.args))} kwargs={ {k: show(v) for k, v in sample.kwargs.items()} }"


@pytest.mark.parametrize("op, variant, kind", CASES)
def test_opinfo(op, variant, kind):
    outcomes = run_case(op, variant, kind, **case_settings(op))
    failures = [o for o in outcomes if o.status == "fail"]
    assert not failures, _report(failures)
    if not LIVE and not any(o.status == "ok" for o in outcomes):
        pytest.skip("PyTorch not installed and none of the recorded samples applies: "
                    + "; ".join(sorted({o.message for o in outcomes}))[:300])
    # every sample either ran or was left out by a reviewed rule above (or, say, holds a complex32 tensor)
    assert any(o.status == "ok" or o.what == "skipped" for o in outcomes) or not outcomes, \
        "no sample ran: " + "; ".join(sorted({o.message for o in outcomes}))[:500]


def test_harness_catches_a_wrong_gradient():
    """The harness is not vacuous: minigrad's tan with a deliberately wrong backward (d tan = 1 + tan, not
    1 + tan^2) fails the float64 pass, and a tan that writes into its input fails the mutation check."""
    import minigrad as mg
    from . import opinfo_harness
    from .mirror import WrongTan

    def mutating_tan(x):
        out = mg.tan(x) if hasattr(mg, "tan") else mg.sin(x) / mg.cos(x)
        x.data.mul_(2)
        return out

    from .opinfo_util import opinfos
    op = opinfos("tan")[0] if LIVE else "tan"
    real = opinfo_harness.minigrad_variant
    for wrong, what in ((lambda x: WrongTan.apply(x), "gradient"), (mutating_tan, "mutation")):
        opinfo_harness.minigrad_variant = lambda op, variant, wrong=wrong: wrong
        try:
            outcomes = run_case(op, "function", "float64", limit=3)
        finally:
            opinfo_harness.minigrad_variant = real
        assert any(o.status == "fail" and o.what == what for o in outcomes), (what, outcomes)
