"""NaN and infinities are computed silently, as in PyTorch: NumPy's floating-point warnings ("invalid value
encountered in multiply") raised inside minigrad are ignored, and a program's own NumPy warnings are not."""
import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent("""
    import numpy as np
    import minigrad as mg
    F = mg.nn.functional
    x = mg.tensor([float("inf"), 0.0, -float("inf"), float("nan")], requires_grad=True)
    programs = [
        lambda x: x * 0, lambda x: x / 0, lambda x: x - x, lambda x: x.log(), lambda x: (-x).sqrt(),
        lambda x: x.reciprocal(), lambda x: x.sin(), lambda x: x ** 2.5, lambda x: x % 0, lambda x: x.sum(),
        lambda x: x.mean(), lambda x: x.var(), lambda x: x.std(), lambda x: x.prod(), lambda x: x.cumsum(0),
        lambda x: x.cumprod(0), lambda x: x.logsumexp(0), lambda x: x.softmax(0), lambda x: x.norm(),
        lambda x: mg.complex(x, x).reciprocal().real, lambda x: (mg.complex(x, x) / mg.complex(x, x)).real,
        lambda x: F.layer_norm(x, (4,)), lambda x: F.rms_norm(x, (4,)), lambda x: F.mse_loss(x, x.detach() * 0),
        lambda x: F.batch_norm(x.reshape(2, 2), None, None, training=True), lambda x: mg.std_mean(x)[0],
        lambda x: F.cross_entropy(x.reshape(1, 4), mg.tensor([1])), lambda x: x[:0].mean(),
    ]
    for program in programs:
        program(x).sum().backward()
    try:
        np.log(np.zeros(1))
    except RuntimeWarning:
        print("the program's own warning was raised")
""")


def test_nan_and_inf_are_silent_but_a_programs_own_numpy_warnings_are_not():
    """Under -W error every warning is an exception: minigrad's ops on inf and NaN (forward and backward) raise
    none, and the program's own np.log(0) still raises."""
    done = subprocess.run([sys.executable, "-W", "error", "-c", PROGRAM], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "the program's own warning was raised" in done.stdout
