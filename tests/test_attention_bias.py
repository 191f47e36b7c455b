"""``nn.attention.bias`` (causal masks for ``scaled_dot_product_attention``) against PyTorch: the attention's values
and gradients for both variants, more queries than keys and fewer, its printed mask, its errors and warning."""
import importlib
import warnings

import numpy as np
import pytest

import minigrad as mg

from .mirror import assert_mirror, run_both, torch_result

SIZES = [(3, 5), (5, 5), (6, 4)]
VARIANTS = ["causal_upper_left", "causal_lower_right"]


def bias_module(lib):
    return importlib.import_module(f"{lib.__name__}.nn.attention.bias")


@pytest.mark.parametrize("L, S", SIZES)
@pytest.mark.parametrize("variant", VARIANTS)
def test_attention_with_a_causal_bias_as_pytorch(variant, L, S):
    def attend(lib, q, k, v):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")                  # lower right with L > S warns
            mask = getattr(bias_module(lib), variant)(L, S)
        return lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    rng = np.random.default_rng(L * 10 + S)
    q, k, v = rng.standard_normal((2, 2, L, 4)), rng.standard_normal((2, 2, S, 4)), rng.standard_normal((2, 2, S, 3))
    assert_mirror(*run_both(attend), q, k, v, rtol=1e-10, atol=1e-12)


def _printed(lib, variant):
    module = bias_module(lib)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        text = repr(getattr(module, variant)(5, 3))
    return {"repr": text, "warnings": [str(w.message) for w in caught]}


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_mask_prints_and_warns_as_pytorch_s(variant):
    theirs = torch_result(lambda torch: _printed(torch, variant), variant)
    assert _printed(mg, variant) == theirs


ERRORS = {
    "with_is_causal": lambda lib, module: lib.nn.functional.scaled_dot_product_attention(
        lib.zeros(1, 3, 4), lib.zeros(1, 5, 4), lib.zeros(1, 5, 4), module.causal_upper_left(3, 5), is_causal=True),
    "three_sizes": lambda lib, module: module.causal_lower_right(2, 3, 4),
    "not_a_variant": lambda lib, module: module.CausalBias(2, 3, 4),
}


@pytest.mark.parametrize("case", ERRORS)
def test_errors_as_pytorch(case):
    def run(lib):
        return ERRORS[case](lib, bias_module(lib))
    theirs = torch_result(run, case, values=False)
    with pytest.raises(Exception) as caught:
        run(mg)
    assert type(caught.value) is theirs.type and str(caught.value) == theirs.message
