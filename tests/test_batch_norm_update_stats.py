"""``batch_norm_update_stats`` against PyTorch's: the per-channel mean and biased variance it returns and the running
buffers it moves (by the unbiased variance) for (N, C), (N, C, L) and (N, C, H, W) inputs in float64, float32,
float16 and bfloat16 (with float32 buffers), without buffers, with one sample (NaN running variance), and
PyTorch's errors. PyTorch's side is live or recorded."""
import numpy as np
import pytest

import minigrad as mg

from .mirror import assert_raises_as_recorded, torch_result

RNG = np.random.default_rng(17)
X = {"2d": RNG.standard_normal((6, 3)), "3d": RNG.standard_normal((4, 3, 5)) * 2 + 1,
     "4d": RNG.standard_normal((2, 3, 4, 3)), "one sample": RNG.standard_normal((1, 3))}
RUNNING_MEAN, RUNNING_VAR = RNG.standard_normal(3), RNG.random(3) + 0.5

CASES = [(shape, dtype, buffers) for shape in ("2d", "3d", "4d") for dtype in ("float64", "float32")
         for buffers in (True, False)] + [("3d", "float16", False), ("4d", "bfloat16", True),
                                          ("one sample", "float64", True)]


def run(lib, shape, dtype, buffers, momentum=0.3):
    x = lib.tensor(X[shape]).to(getattr(lib, dtype))
    buffer_dtype = lib.float32 if dtype in ("float16", "bfloat16") else x.dtype
    rm = lib.tensor(RUNNING_MEAN).to(buffer_dtype) if buffers else None
    rv = lib.tensor(RUNNING_VAR).to(buffer_dtype) if buffers else None
    mean, var = lib.batch_norm_update_stats(x, rm, rv, momentum)
    out = {"mean": mean.double().numpy(), "var": var.double().numpy(), "dtype": str(mean.dtype).rpartition(".")[2]}
    if buffers:
        out.update(running_mean=rm.double().numpy(), running_var=rv.double().numpy())
    return out


@pytest.mark.parametrize("shape,dtype,buffers", CASES)
def test_batch_norm_update_stats_as_pytorch(shape, dtype, buffers):
    theirs = torch_result(lambda torch: run(torch, shape, dtype, buffers), "update_stats", shape, dtype, buffers)
    mine = run(mg, shape, dtype, buffers)
    tolerance = {"float64": 1e-12, "float32": 2e-6, "float16": 2e-3, "bfloat16": 1e-2}[dtype]
    assert mine["dtype"] == theirs["dtype"]
    for key in theirs:
        if key != "dtype":
            np.testing.assert_allclose(mine[key], theirs[key], rtol=tolerance, atol=tolerance, equal_nan=True,
                                       err_msg=key)


def test_the_statistics_from_their_definition():
    """Independently of PyTorch: the mean and biased variance over every dim but 1; the buffers moved by the
    unbiased variance."""
    x = X["4d"]
    mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    n = x.size // 3
    rm, rv = mg.tensor(RUNNING_MEAN), mg.tensor(RUNNING_VAR)
    m, v = mg.batch_norm_update_stats(mg.tensor(x), rm, rv, 0.25)
    np.testing.assert_allclose(m.numpy(), mean, rtol=1e-13)
    np.testing.assert_allclose(v.numpy(), var, rtol=1e-13)
    np.testing.assert_allclose(rm.numpy(), 0.75 * RUNNING_MEAN + 0.25 * mean, rtol=1e-13)
    np.testing.assert_allclose(rv.numpy(), 0.75 * RUNNING_VAR + 0.25 * var * n / (n - 1), rtol=1e-13)
    assert rm._version == rv._version == 1


ERRORS = {
    "1-D": lambda lib: lib.batch_norm_update_stats(lib.ones(4), None, None, 0.1),
    "empty": lambda lib: lib.batch_norm_update_stats(lib.ones(0, 3), None, None, 0.1),
    "integer": lambda lib: lib.batch_norm_update_stats(lib.ones(4, 3, dtype=lib.int64), None, None, 0.1),
    "mixed": lambda lib: lib.batch_norm_update_stats(lib.ones(4, 3), lib.zeros(3, dtype=lib.float64),
                                                     lib.ones(3), 0.1),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_as_pytorch(case):
    assert_raises_as_recorded(ERRORS[case], "update_stats error", case)


def test_no_derivative_and_nothing_changed_by_a_refusal():
    x = mg.tensor(X["3d"], requires_grad=True)
    mean, var = mg.batch_norm_update_stats(x, None, None, 0.1)
    assert mean.requires_grad and var.requires_grad           # as PyTorch's, whose backward then raises
    with pytest.raises(RuntimeError, match="derivative for aten::batch_norm_update_stats is not implemented"):
        (mean * 2 + var).sum().backward()
    with mg.no_grad():
        assert not mg.batch_norm_update_stats(x, None, None, 0.1)[0].requires_grad
    rm, rv = mg.zeros(4), mg.ones(4)
    with pytest.raises(RuntimeError, match="4 elements for 3 channels"):
        mg.batch_norm_update_stats(mg.ones(5, 3), rm, rv, 0.1)
    assert rm.tolist() == [0.0] * 4 and rv.tolist() == [1.0] * 4
