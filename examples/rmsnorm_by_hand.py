"""RMSNorm by hand: a 2 x 4 example, forward and backward, checked five ways.

    python examples/rmsnorm_by_hand.py

x = [[1, 2, 3, 4], [-1, -2, -3, -4]] is normalized row by row, step by step (mean of squares,
RMS, xhat, y), then an upstream gradient g is pushed back through the hand-derived formula

    dx = rstd * (gw - xhat * sum(gw * xhat) / d),   gw = g * w        dw = sum over rows of g * xhat

and the result is printed next to four other ways of getting it: minigrad's fused RMSNormFunction,
autograd through the composite twin (RMSNorm written with ordinary ops), central finite differences,
and PyTorch's ``F.rms_norm`` when PyTorch is installed. The derivation is docs/derivations/rmsnorm.md.
"""
import numpy as np

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.ops.norm.rmsnorm import rms_norm_composite

X = np.array([[1.0, 2.0, 3.0, 4.0], [-1.0, -2.0, -3.0, -4.0]])   # (R, D) = (2, 4)
W = np.array([1.0, 0.5, 2.0, -1.0])                              # (D,) the RMSNorm weight (gain)
G = np.array([[0.1, -0.2, 0.3, 0.4], [0.5, 0.1, -0.3, 0.2]])     # (R, D) upstream gradient dL/dy
EPS = float(np.finfo(np.float64).eps)   # eps=None in PyTorch: the machine epsilon of float64


# --------------------------------------------------------------------------- the hand formulas, plain NumPy
def hand_forward(x, w, eps=EPS):
    """The forward, one named step at a time: returns ms, rms, rstd (per row) and xhat, y."""
    ms = (x * x).mean(axis=1)            # (R,) mean of squares of each row
    rms = np.sqrt(ms + eps)              # (R,)
    rstd = 1.0 / rms                     # (R,)
    xhat = x * rstd[:, None]             # (R, D) every row now has mean square 1
    return dict(ms=ms, rms=rms, rstd=rstd, xhat=xhat, y=xhat * w)


def hand_backward(x, w, g, eps=EPS):
    """The hand-derived backward, one named step at a time: returns gw, s (per row), dx, dw."""
    f = hand_forward(x, w, eps)
    gw = g * w                                           # (R, D) gradient reaching xhat
    s = (gw * f["xhat"]).sum(axis=1) / x.shape[1]        # (R,) projection of gw onto xhat, divided by d
    dx = f["rstd"][:, None] * (gw - f["xhat"] * s[:, None])
    dw = (g * f["xhat"]).sum(axis=0)                     # (D,)
    return dict(gw=gw, s=s, dx=dx, dw=dw)


# --------------------------------------------------------------------------- the other four ways
def minigrad_grads(norm):
    """dx, dw from minigrad: ``norm`` is F.rms_norm (fused) or rms_norm_composite (autograd)."""
    x, w = mg.tensor(X, requires_grad=True), mg.tensor(W, requires_grad=True)
    norm(x, (4,), w).backward(mg.tensor(G))
    return x.grad.numpy(), w.grad.numpy()


def finite_differences(h=1e-6):
    """Central differences of L = sum(g * rms_norm(x, w)) in every entry of x and w (float64)."""
    def loss(x, w):
        with mg.no_grad():
            return float((F.rms_norm(mg.tensor(x), (4,), mg.tensor(w)).numpy() * G).sum())

    grads = []
    for arg in (0, 1):
        base = [X.copy(), W.copy()]
        grad = np.zeros_like(base[arg])
        for i in np.ndindex(grad.shape):
            plus, minus = [a.copy() for a in base], [a.copy() for a in base]
            plus[arg][i] += h
            minus[arg][i] -= h
            grad[i] = (loss(*plus) - loss(*minus)) / (2 * h)
        grads.append(grad)
    return tuple(grads)


def torch_grads():
    """dx, dw from PyTorch's F.rms_norm (eps=None: float64 machine epsilon), or None without PyTorch."""
    try:
        import torch
    except ImportError:
        return None
    x, w = torch.tensor(X, requires_grad=True), torch.tensor(W, requires_grad=True)
    torch.nn.functional.rms_norm(x, (4,), w).backward(torch.tensor(G))
    return x.grad.numpy(), w.grad.numpy()


# --------------------------------------------------------------------------- printing
def format_array(name, a, indent=4):
    """``name = a`` with 4 decimals (-0.0000 shown as 0.0000), continuation lines aligned under the first."""
    head = " " * indent + f"{name} = "
    body = np.array2string(np.round(np.asarray(a, dtype=np.float64), 4) + 0.0, precision=4, floatmode="fixed",
                           separator="  ", prefix=head, max_line_width=200)
    return head + body


def show(name, a):
    print(format_array(name, a))


def side_by_side(results, hand):
    """One column per method, one row per gradient entry, then each method's largest difference."""
    names = list(results)
    entries = [(f"dx[{i},{j}]", 0, (i, j)) for i, j in np.ndindex(X.shape)] + [(f"dw[{j}]", 1, (j,))
                                                                              for j in range(W.size)]
    print("    " + f"{'':9}" + "".join(f"{n:>16}" for n in names))
    for label, which, index in entries:
        print("    " + f"{label:9}" + "".join(f"{results[n][which][index]:16.10f}" for n in names))
    diffs = {n: max(np.abs(results[n][k] - hand[k]).max() for k in (0, 1)) for n in names}
    print("    " + f"{'max |diff|':9}" + "".join(f"{diffs[n]:16.1e}" for n in names))
    return diffs


def main(argv=None):
    f = hand_forward(X, W)
    b = hand_backward(X, W, G)
    d = X.shape[1]
    print("RMSNorm over each row of x (d = 4), weight w, eps = float64 machine epsilon (PyTorch's eps=None)\n")
    show("x", X)
    show("w", W)
    print("\nForward")
    show("step 1  ms   = mean(x^2) per row", f["ms"])
    show("step 2  rms  = sqrt(ms + eps)    ", f["rms"])
    show("        rstd = 1 / rms           ", f["rstd"])
    show("step 3  xhat = x * rstd", f["xhat"])
    show("step 4  y    = xhat * w", f["y"])

    print("\nBackward, for the upstream gradient g = dL/dy")
    show("g", G)
    show("step 5  gw = g * w", b["gw"])
    show(f"step 6  s  = sum(gw * xhat) / {d} per row", b["s"])
    show("step 7  dx = rstd * (gw - xhat * s)", b["dx"])
    show("step 8  dw = sum over rows of g * xhat", b["dw"])
    ortho = (X * b["dx"]).sum(axis=1)
    print(f"\n    x . dx per row = {ortho[0]:.1e}, {ortho[1]:.1e}: RMSNorm does not change when x is scaled, "
          "so dx has no component along x")

    hand = (b["dx"], b["dw"])
    results = {"hand (NumPy)": hand, "fused": minigrad_grads(F.rms_norm),
               "composite": minigrad_grads(rms_norm_composite), "finite diff": finite_differences()}
    th = torch_grads()
    if th is not None:
        results["PyTorch"] = th
    print("\nThe same gradients five ways (fused: RMSNormFunction's hand-derived backward; composite: autograd "
          "through rms_norm_composite;\nfinite diff: central differences, h = 1e-6)"
          + ("" if th is not None else "; PyTorch is not installed, so its column is missing") + "\n")
    diffs = side_by_side(results, hand)
    return dict(forward=f, backward=b, results=results, diffs=diffs)


if __name__ == "__main__":
    main()
