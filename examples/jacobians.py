"""The Jacobian dy/dx of every normalization layer, for a small input: printed, read, and drawn.

    python examples/jacobians.py                  # print each Jacobian and its structure
    python examples/jacobians.py --out            # also save one heat map PNG per norm in runs/jacobians/ (matplotlib)

Every norm of the registry (minigrad/ops/norm/registry.py) gets a case: the five below by hand, the others
(LocalResponseNorm, ScaleNorm, DyT, ...) from their registry entry (``registry_case``).

A normalization maps each "row" (the values normalized together: a row of RMSNorm and LayerNorm, a
channel over the batch for BatchNorm, a (sample, group) for GroupNorm, a (sample, channel) for
InstanceNorm) through the same matrix. For a row of m values with xhat and rstd as on the derivation
pages (docs/derivations/), and w the weight of each entry:

    uncentered (RMSNorm):   J_row = diag(w) · rstd · (I            - xhat xhatᵀ / m)
    centered (the others):  J_row = diag(w) · rstd · (I - 1 1ᵀ / m - xhat xhatᵀ / m)

and J is zero between different rows: block diagonal once the entries are ordered row by row. The
closed form is evaluated here in plain NumPy and compared with ``minigrad.autograd.functional.jacobian``
of minigrad's fused layers and of their composite twins. For each norm the script prints J, the
blocks, the rank, what J does to the constant vector and to x, the eigenvalues of one weight-free
block, and how far J is from symmetric.
"""
import argparse
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.ops.norm.batchnorm import batch_norm_composite
from minigrad.ops.norm.groupnorm import group_norm_composite, instance_norm_composite
from minigrad.ops.norm.layernorm import layer_norm_composite
from minigrad.ops.norm.registry import NORMS
from minigrad.ops.norm.rmsnorm import rms_norm_composite

RMS_EPS = float(np.finfo(np.float64).eps)   # rms_norm's eps=None in float64
EPS = 1e-5                                  # the default of the centered norms


# --------------------------------------------------------------------------- the closed form, plain NumPy
def row_jacobian(x_row, w_row, eps, centered):
    """dy/dx of one row of m values: diag(w) · rstd · (I [- 1 1ᵀ/m] - xhat xhatᵀ/m), an (m, m) matrix."""
    m = x_row.size
    xc = x_row - x_row.mean() if centered else x_row
    rstd = 1 / np.sqrt((xc * xc).mean() + eps)
    xhat = xc * rstd
    projection = np.eye(m) - np.outer(xhat, xhat) / m - (1 / m if centered else 0)
    return w_row[:, None] * rstd * projection


def block_jacobian(x, w, rows, eps, centered):
    """The Jacobian of the whole of x (x.size by x.size, entries in x.ravel() order): ``row_jacobian``
    on each row, ``rows`` a list of index arrays into x.ravel(), zero between rows. ``w`` has x's shape."""
    flat_x, flat_w = x.ravel(), w.ravel()
    J = np.zeros((x.size, x.size))
    for idx in rows:
        J[np.ix_(idx, idx)] = row_jacobian(flat_x[idx], flat_w[idx], eps, centered)
    return J


# --------------------------------------------------------------------------- the cases
@dataclass
class Case:
    """One norm on one small input: its minigrad forms (fused and composite, functions of x alone), the
    rows it normalizes (index arrays into x.ravel()), and the order in which the picture lists entries."""
    title: str
    x: np.ndarray
    w: np.ndarray                 # the weight of every entry, x's shape (ones without a weight)
    rows: list
    centered: bool
    eps: float
    forms: dict                   # {"fused": fn, "composite": fn}, each Tensor -> Tensor
    labels: list                  # one label per entry of x, in display order
    order: np.ndarray = None      # display order of the entries (default: x.ravel() order)
    closed_form: object = None    # fn() -> J; default: block_jacobian on the rows
    notes: list = field(default_factory=list)

    def jacobian(self):
        """The closed form, in x.ravel() order."""
        if self.closed_form is not None:
            return self.closed_form()
        return block_jacobian(self.x, self.w, self.rows, self.eps, self.centered)

    def autograd_jacobian(self, form):
        """``mg.autograd.functional.jacobian`` of the fused or composite form, as an (x.size, x.size) matrix."""
        J = mg.autograd.functional.jacobian(self.forms[form], mg.tensor(self.x))
        return J.numpy().reshape(self.x.size, self.x.size)

    def shown(self, J):
        """J with rows and columns in display order."""
        order = np.arange(self.x.size) if self.order is None else self.order
        return J[np.ix_(order, order)]


def entry_labels(shape, order=None):
    """'x[i,j,...]' for every entry of an array of ``shape``, in ``order`` (default: ravel order)."""
    labels = [f"x[{','.join(map(str, i))}]" for i in np.ndindex(shape)]
    return labels if order is None else [labels[k] for k in order]


ROW_X = np.array([[1.0, 2.0, 3.0, 4.0], [2.0, -1.0, 0.5, -3.0]])       # (R, D) = (2, 4)
ROW_W = np.array([1.0, 0.5, 2.0, -1.0])                                 # (D,)
BN_X = np.array([[0.5, 1.0], [2.0, 3.0], [-1.0, -2.0], [1.5, 0.0]])     # (N, C) = (4, 2)
BN_W = np.array([2.0, 0.5])                                             # (C,)
BN_RUNNING = (np.array([0.5, 0.5]), np.array([1.5, 4.0]))               # running mean, running var (eval)
GN_X = np.array([[[1.0, 2.0], [0.0, -1.0], [3.0, 1.0], [2.0, 2.5]],
                 [[-2.0, 0.5], [1.0, 1.0], [0.0, 4.0], [-1.0, 3.0]]])   # (N, C, L) = (2, 4, 2)
GN_W = np.array([1.0, 2.0, 0.5, -1.0])                                  # (C,)
IN_X = np.array([[[1.0, 2.0, 6.0], [0.0, 4.0, -1.0]],
                 [[3.0, 3.5, 0.0], [2.0, -2.0, 5.0]]])                  # (N, C, L) = (2, 2, 3)


def _ids(shape):
    return np.arange(int(np.prod(shape))).reshape(shape)


def row_case(centered):
    """RMSNorm (``centered`` False) or LayerNorm over each row of ROW_X, weight ROW_W."""
    norms = ({"fused": F.layer_norm, "composite": layer_norm_composite} if centered else
             {"fused": F.rms_norm, "composite": rms_norm_composite})
    return Case("LayerNorm" if centered else "RMSNorm", ROW_X, np.broadcast_to(ROW_W, ROW_X.shape),
                list(_ids(ROW_X.shape)), centered, EPS if centered else RMS_EPS,
                {form: (lambda x, norm=norm: norm(x, (4,), mg.tensor(ROW_W))) for form, norm in norms.items()},
                entry_labels(ROW_X.shape))


def bn_case(training=True):
    """BatchNorm on (N, C) = (4, 2): a row is a channel (a column of x); shown channel by channel."""
    ids = _ids(BN_X.shape)                                   # (N, C)
    order = ids.T.ravel()                                    # channel-major: all samples of channel 0 first
    w = np.broadcast_to(BN_W, BN_X.shape)
    running = (None, None) if training else tuple(mg.tensor(a) for a in BN_RUNNING)
    case = Case("BatchNorm, training" if training else "BatchNorm, eval", BN_X, w, list(ids.T), True, EPS,
                {"fused": lambda x: F.batch_norm(x, *running, mg.tensor(BN_W), None, training),
                 "composite": lambda x: batch_norm_composite(x, *running, mg.tensor(BN_W), None, training)},
                entry_labels(BN_X.shape, order), order)
    if not training:   # constant statistics: y = x · w_c · rstd_c + const, a diagonal Jacobian
        rstd = 1 / np.sqrt(BN_RUNNING[1] + EPS)
        case.closed_form = lambda: np.diag(np.broadcast_to(BN_W * rstd, BN_X.shape).ravel())
    return case


def gn_case(groups=2):
    n = GN_X.shape[0]
    w = np.broadcast_to(GN_W[:, None], GN_X.shape)
    return Case(f"GroupNorm, G = {groups}", GN_X, w, list(_ids(GN_X.shape).reshape(n * groups, -1)), True, EPS,
                {"fused": lambda x: F.group_norm(x, groups, mg.tensor(GN_W)),
                 "composite": lambda x: group_norm_composite(x, groups, mg.tensor(GN_W))},
                entry_labels(GN_X.shape))


def in_case():
    n, c, length = IN_X.shape
    return Case("InstanceNorm", IN_X, np.ones_like(IN_X), list(_ids(IN_X.shape).reshape(n * c, length)), True, EPS,
                {"fused": F.instance_norm, "composite": instance_norm_composite}, entry_labels(IN_X.shape))


HAND_WRITTEN = {"RMSNorm": "rms", "LayerNorm": "ln", "BatchNorm": "bn", "GroupNorm": "gn", "InstanceNorm": "in"}


def registry_case(spec):
    """A registered norm without a hand-written case above (minigrad/ops/norm/registry.py): its small case, x and
    parameters from a fixed seed. The reference Jacobian is the entry's closed form (``notes["jacobian"]``, NumPy)
    if it has one, else autograd through the composite twin; the fused layer is checked against it either way."""
    rng = np.random.default_rng(0)
    x = np.round(rng.standard_normal(spec.shape), 2)
    params = [np.round(1 + 0.5 * rng.standard_normal(shape), 2) for _, shape in spec.params]
    fused, composite = spec.functional_form(), spec.composite_form()
    forms = {"fused": lambda t: spec.call(fused, t, *map(mg.tensor, params)),
             "composite": lambda t: spec.call(composite, t, *map(mg.tensor, params))}
    closed = spec.notes.get("jacobian")
    case = Case(spec.name, x, np.ones_like(x), [np.arange(x.size)], False, 0.0, forms, entry_labels(x.shape))
    case.closed_form = ((lambda: closed(x, *params)) if closed else
                        (lambda: mg.autograd.functional.jacobian(forms["composite"], mg.tensor(x)).numpy()
                         .reshape(x.size, x.size)))
    case.notes = ["closed form of the registry entry" if closed else "autograd through the composite twin"]
    return case


CASES = {"rms": lambda: row_case(False), "ln": lambda: row_case(True),
         "bn": bn_case, "bn_eval": lambda: bn_case(training=False), "gn": gn_case, "in": in_case}
CASES.update({spec.name: (lambda spec=spec: registry_case(spec)) for spec in NORMS if spec.name not in HAND_WRITTEN})


# --------------------------------------------------------------------------- reading the structure
def checked_jacobian(case, tol=1e-12):
    """The closed form, after checking it against autograd through the fused form and the composite twin."""
    J = case.jacobian()
    for form in case.forms:
        np.testing.assert_allclose(case.autograd_jacobian(form), J, rtol=tol, atol=tol,
                                   err_msg=f"{case.title}: closed-form Jacobian vs autograd ({form})")
    return J


def numerical_rank(J, rel=1e-9):
    """The number of singular values above ``rel`` times the largest."""
    s = np.linalg.svd(J, compute_uv=False)
    return int((s > rel * s.max()).sum())


def structure(case, J):
    """What J does, as numbers: a dict read by ``structure_lines`` (and by the tests)."""
    x = case.x.ravel()
    first = case.rows[0]
    ones_rows = np.zeros((len(case.rows), x.size))             # one constant vector per row
    x_rows = np.zeros((len(case.rows), x.size))                # x restricted to each row
    for k, idx in enumerate(case.rows):
        ones_rows[k, idx] = 1
        x_rows[k, idx] = x[idx]
    off_block = J.copy()
    for idx in case.rows:
        off_block[np.ix_(idx, idx)] = 0
    weight_free = row_jacobian(x[first], np.ones(first.size), case.eps, case.centered)
    return dict(size=x.size, blocks=len(case.rows), block_size=first.size, rank=numerical_rank(J),
                off_block=np.abs(off_block).max(),
                J_ones=np.abs(J @ ones_rows.T).max(axis=0),     # |J 1_row|, per row
                J_x=np.abs(J @ x_rows.T).max(axis=0),           # |J x_row|, per row
                eigenvalues=np.sort(np.linalg.eigvalsh(weight_free)),
                asymmetry=np.abs(J - J.T).max())


def predicted_eigenvalues(case):
    """The eigenvalues of the weight-free block of the first row: rstd on the directions the norm passes,
    rstd · eps/(var + eps) along xhat (the scale direction), 0 along 1 for the centered norms."""
    idx = case.rows[0]
    x_row = case.x.ravel()[idx]
    xc = x_row - x_row.mean() if case.centered else x_row
    var = (xc * xc).mean()
    rstd = 1 / np.sqrt(var + case.eps)
    m = idx.size
    passed = m - 2 if case.centered else m - 1
    return np.sort([0.0] * case.centered + [rstd * case.eps / (var + case.eps)] + [rstd] * passed)


def _small(v, bound=1e-12):
    return f"{v:.3e}" if abs(v) >= bound else f"below {bound:g}"


def structure_lines(case, J):
    """The structure of J in words and numbers (machine-independent: small values as bounds)."""
    if case.notes:                     # a registry case: no row structure assumed
        return [f"reference: {case.notes[0]}",
                f"rank {numerical_rank(J)} of {J.shape[0]} (singular values above 1e-9 of the largest)",
                f"largest |J - J^T|: {_small(np.abs(J - J.T).max())}",
                f"diagonal: {np.abs(J - np.diag(np.diag(J))).max() < 1e-15}"]
    s = structure(case, J)
    if case.closed_form is not None:   # BatchNorm in eval: constant statistics
        return [(f"diagonal: largest entry off the diagonal {_small(np.abs(J - np.diag(np.diag(J))).max())}; "
                 "J = diag(w_c * rstd_c) with rstd_c from running_var"),
                f"rank {s['rank']} of {s['size']}: nothing is removed, samples do not interact"]
    eig = "  ".join(_small(e) if e < 1e-3 else f"{e:.4f}" for e in s["eigenvalues"])
    lines = [(f"{s['blocks']} blocks of {s['block_size']} (one per normalized row), "
              f"largest entry outside them: {_small(s['off_block'])}"),
             f"rank {s['rank']} of {s['size']} (singular values above 1e-9 of the largest)",
             "|J 1_row| per row: " + "  ".join(_small(v) for v in s["J_ones"]),
             "|J x_row| per row: " + "  ".join(_small(v) for v in s["J_x"]),
             f"eigenvalues of the first row's block without weight: {eig}",
             f"largest |J - J^T|: {_small(s['asymmetry'])}"]
    return lines


# --------------------------------------------------------------------------- printing and drawing
def format_matrix(J, decimals=4, prefix="", separator=" "):
    """J with ``decimals`` decimals (never in scientific notation), -0 shown as 0, continuation lines
    indented by the length of ``prefix``: the text that also records the numbers behind a picture."""
    return np.array2string(np.round(J, decimals) + 0.0, precision=decimals, floatmode="fixed", separator=separator,
                           prefix=prefix, max_line_width=250, suppress_small=True)


def heat_map(panels, path, title, metadata=None):
    """Draw (subtitle, matrix, labels, row blocks) panels side by side as a diverging heat map (red
    positive, blue negative, white zero, one colour scale per panel) and save a PNG at ``path``.
    ``metadata`` goes into the PNG's text chunks. Needs matplotlib (ImportError otherwise)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.8), squeeze=False)
    for ax, (subtitle, J, labels, sizes) in zip(axes[0], panels):
        vmax = np.abs(J).max() or 1.0
        image = ax.imshow(J, cmap="RdBu_r", vmin=-vmax, vmax=vmax)
        n = J.shape[0]
        ax.set_xticks(range(n), labels, rotation=90, fontsize=6)
        ax.set_yticks(range(n), labels, fontsize=6)
        ax.set_xlabel("input entry (column j: d y_i / d x_j)", fontsize=8)
        ax.set_ylabel("output entry i", fontsize=8)
        ax.set_title(subtitle, fontsize=9)
        for edge in np.cumsum(sizes)[:-1]:                       # lines between the normalized rows
            ax.axhline(edge - 0.5, color="0.4", lw=0.6)
            ax.axvline(edge - 0.5, color="0.4", lw=0.6)
        if n <= 8:                                               # small enough to print the values
            for (i, j), v in np.ndenumerate(J):
                if v != 0:                                       # not the exact zeros between rows
                    ax.text(j, i, f"{round(v, 2) + 0.0:.2f}", ha="center", va="center", fontsize=6,
                            color="white" if abs(v) > 0.6 * vmax else "black")
        fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata=metadata or {})
    plt.close(fig)
    return Path(path)


def panel(case, J, subtitle):
    """A heat-map panel of ``case``: J in display order, with the sizes of its rows (the blocks along
    the diagonal; display order lists the entries row by row)."""
    return (subtitle, case.shown(J), case.labels, [idx.size for idx in case.rows])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", nargs="?", const=os.path.join("runs", "jacobians"), metavar="DIR",
                        help="save one heat map PNG per norm in DIR (default: runs/jacobians; needs matplotlib)")
    args = parser.parse_args(argv)
    results = {}
    for name, make in CASES.items():
        case = make()
        J = checked_jacobian(case)
        results[name] = (case, J)
        order = "channel by channel" if case.order is not None else "x.ravel() order"
        print(f"== {case.title}: x of shape {case.x.shape}, J = dy/dx is {J.shape[0]} x {J.shape[1]} ({order}),"
              f" equal to mg.autograd.functional.jacobian of the fused layer and of its composite twin")
        print(format_matrix(case.shown(J)))
        for line in structure_lines(case, J):
            print("  " + line)
        print()
    if args.out:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print("matplotlib is not installed (pip install -e \".[extras]\"): no pictures saved")
            return results
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        for name, (case, J) in results.items():
            path = heat_map([panel(case, J, "dy/dx")], out / f"jacobian_{name}.png", case.title)
            print(f"saved {path}")
    return results


if __name__ == "__main__":
    main(sys.argv[1:])
