"""L-BFGS (Nocedal, 1980; Liu & Nocedal, 1989) with PyTorch's iteration, stopping rules and strong-Wolfe line
search (Nocedal & Wright, Numerical Optimization, algorithms 3.5 and 3.6, with cubic interpolation).

One ``step(closure)`` runs up to ``max_iter`` iterations on the flattened parameters x:

    g = grad f(x);  stop if max|g| <= tolerance_grad
    d = -H g        H applied by the two-loop recursion over the last ``history_size`` pairs
                    (s = t d, y = g_new - g_old, kept when y.s > 1e-10), H_0 = (y.s / y.y) I
    t = min(1, 1 / sum|g|) * lr on the very first iteration, lr afterwards (or the line search's t)
    x = x + t d
    stop on max_iter, max_eval evaluations, max|g| <= tolerance_grad, max|t d| <= tolerance_change,
    |f - f_prev| < tolerance_change, or a direction that does not descend (g.d > -tolerance_change).

The state carries over between steps (the history, d, t, the previous gradient and loss), so calling
``step`` repeatedly continues one optimisation, as in PyTorch.
"""
import numpy as np

from ..autograd import enable_grad, no_grad
from ..tensor import Tensor
from .optimizer import Optimizer, _number, real_view

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1, g2, clamped to ``bounds``
    (by default [min(x1, x2), max(x1, x2)]); their midpoint when the cubic has no minimum."""
    xmin_bound, xmax_bound = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _dense(grad):
    """A gradient's array (a sparse one's dense form)."""
    return grad.to_dense()._data if grad.is_sparse else grad._data


class _Bracket:
    """An interval of step sizes [t_a, t_b] with the loss, gradient and slope g.d at each end."""

    def __init__(self, *ends):
        self.t = [e[0] for e in ends]
        self.f = [e[1] for e in ends]
        self.g = [e[2] for e in ends]
        self.gtd = [e[3] for e in ends]

    def set(self, i, t, f, g, gtd):
        self.t[i], self.f[i], self.g[i], self.gtd[i] = t, f, g, gtd


def _strong_wolfe(obj_func, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step t along d satisfying the strong Wolfe conditions
        f(x + t d) <= f + c1 t g.d   (sufficient decrease)   and   |g(x + t d).d| <= -c2 g.d   (curvature):
    grow t until an interval brackets such a step, then shrink the interval by cubic interpolation (zoom).
    Returns (f_new, g_new, t, evaluations)."""
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(t, d)
    evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    bracket = None
    while ls_iter < max_ls:                       # bracketing phase
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket = _Bracket((t_prev, f_prev, g_prev, gtd_prev), (t, f_new, g_new.copy(), gtd_new))
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket = _Bracket((t, f_new, g_new, None))
            done = True
            break
        if gtd_new >= 0:
            bracket = _Bracket((t_prev, f_prev, g_prev, gtd_prev), (t, f_new, g_new.copy(), gtd_new))
            break
        min_step, max_step = t + 0.01 * (t - t_prev), t * 10
        t_next = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new.copy(), gtd_new
        t = t_next
        f_new, g_new = obj_func(t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket = _Bracket((0, f, g, None), (t, f_new, g_new, None))

    insufficient_progress = False
    low, high = (0, 1) if bracket.f[0] <= bracket.f[-1] else (1, 0)
    while not done and ls_iter < max_ls:          # zoom phase
        if abs(bracket.t[1] - bracket.t[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket.t[0], bracket.f[0], bracket.gtd[0], bracket.t[1], bracket.f[1],
                               bracket.gtd[1])
        # keep t at least 10% of the interval's width away from its ends, unless that was just tried
        top, bottom = max(bracket.t), min(bracket.t)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < eps:
            if insufficient_progress or t >= top or t <= bottom:
                t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = obj_func(t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket.f[low]:
            bracket.set(high, t, f_new, g_new.copy(), gtd_new)
            low, high = (0, 1) if bracket.f[0] <= bracket.f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket.t[high] - bracket.t[low]) >= 0:
                bracket.set(high, bracket.t[low], bracket.f[low], bracket.g[low], bracket.gtd[low])
            bracket.set(low, t, f_new, g_new.copy(), gtd_new)
    return bracket.f[low], bracket.g[low], bracket.t[low], evals


def _float(value):
    return float(value.item() if isinstance(value, Tensor) else value)


class LBFGS(Optimizer):
    """PyTorch's ``optim.LBFGS``: one parameter group; ``step(closure)`` needs a closure that zeroes the
    gradients, computes the loss, calls ``backward`` and returns the loss."""

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def add_param_group(self, param_group):
        super().add_param_group(param_group)   # PyTorch's checks of the group come first
        if len(self.param_groups) > 1:
            self.param_groups.pop()
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")

    # ------------------------------------------------------------------ the flat parameter vector
    def _gather_flat_grad(self):
        """Every parameter's gradient (zeros for none), flattened and concatenated: a fresh array. A complex
        parameter counts as its (real, imaginary) pairs, as in PyTorch, so x is a real vector."""
        return np.concatenate([np.zeros(_real_size(p), p._data.real.dtype) if p.grad is None
                               else real_view(_dense(p.grad)).reshape(-1) for p in self._params])

    def _sparse_gradient_error(self, group):
        return None                                  # a sparse gradient is read dense, as PyTorch's LBFGS reads it

    def _add_grad(self, step_size, update):
        """x = x + step_size * update, parameter by parameter."""
        offset = 0
        for p in self._params:
            n = _real_size(p)
            piece = step_size * update[offset:offset + n]
            p.add_(Tensor(piece.view(p._data.dtype).reshape(p.shape) if p.is_complex() else piece.reshape(p.shape)))
            offset += n

    def _clone_param(self):
        return [p._data.copy() for p in self._params]

    def _set_param(self, values):
        for p, value in zip(self._params, values):
            p.copy_(Tensor(value))

    def _directional_evaluate(self, closure, x, t, d):
        """f and grad f at x + t d; the parameters are put back to x afterwards."""
        self._add_grad(t, d)
        loss = _float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    # ------------------------------------------------------------------ the step
    def step(self, closure):
        """Up to ``max_iter`` L-BFGS iterations; returns the loss the closure gave first."""
        group = self.param_groups[0]
        lr = _float(group["lr"]) if isinstance(group["lr"], Tensor) else group["lr"]   # an int lr stays int in 't
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        def evaluate():
            with enable_grad():
                return closure()

        with no_grad():
            state = self.state[self._params[0]]
            state.setdefault("func_evals", 0)
            state.setdefault("n_iter", 0)
            orig_loss = evaluate()
            loss = _float(orig_loss)
            current_evals = 1
            state["func_evals"] += 1
            flat_grad = self._gather_flat_grad()
            if np.abs(flat_grad).max() <= tolerance_grad:
                return orig_loss

            d, t = _array_or_none(state.get("d")), _number(state.get("t"))
            old_dirs = [_array_or_none(v) for v in state.get("old_dirs", [])]
            old_stps = [_array_or_none(v) for v in state.get("old_stps", [])]
            ro, H_diag = [_number(r) for r in state.get("ro", [])], _number(state.get("H_diag"))
            prev_flat_grad, prev_loss = _array_or_none(state.get("prev_flat_grad")), state.get("prev_loss")

            n_iter = 0
            while n_iter < max_iter:
                n_iter += 1
                state["n_iter"] += 1
                if state["n_iter"] == 1:
                    d = -flat_grad
                    old_dirs, old_stps, ro, H_diag = [], [], [], 1
                else:
                    y = flat_grad - prev_flat_grad
                    s = d * t
                    ys = y.dot(s)
                    if ys > 1e-10:                              # keep the pair only if the curvature is positive
                        if len(old_dirs) == history_size:
                            old_dirs.pop(0)
                            old_stps.pop(0)
                            ro.pop(0)
                        old_dirs.append(y)
                        old_stps.append(s)
                        ro.append(1.0 / ys)
                        H_diag = ys / y.dot(y)
                    al = state.setdefault("al", [None] * history_size)
                    d = _two_loop(-flat_grad, old_dirs, old_stps, ro, H_diag, al)
                prev_flat_grad = flat_grad.copy()
                prev_loss = loss
                if state["n_iter"] == 1:
                    t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr
                else:
                    t = lr
                gtd = flat_grad.dot(d)
                if gtd > -tolerance_change:                     # not a descent direction
                    break

                evals = 0
                if line_search_fn is not None:
                    if line_search_fn != "strong_wolfe":
                        raise RuntimeError("only 'strong_wolfe' is supported")
                    x_init = self._clone_param()
                    loss, flat_grad, t, evals = _strong_wolfe(
                        lambda step, direction: self._directional_evaluate(evaluate, x_init, step, direction),
                        t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals)
                    self._add_grad(t, d)
                    optimal = np.abs(flat_grad).max() <= tolerance_grad
                else:
                    self._add_grad(t, d)
                    optimal = False
                    if n_iter != max_iter:
                        loss = _float(evaluate())
                        flat_grad = self._gather_flat_grad()
                        optimal = np.abs(flat_grad).max() <= tolerance_grad
                        evals = 1
                current_evals += evals
                state["func_evals"] += evals

                if (n_iter == max_iter or current_evals >= max_eval or optimal
                        or np.abs(d * t).max() <= tolerance_change or abs(loss - prev_loss) < tolerance_change):
                    break

            state["d"], state["t"] = Tensor(d), t
            state["old_dirs"], state["old_stps"] = [Tensor(v) for v in old_dirs], [Tensor(v) for v in old_stps]
            state["ro"], state["H_diag"] = [_scalar(r) for r in ro], _scalar(H_diag)
            if "al" in state:
                state["al"] = [_scalar(a) for a in state["al"]]
            state["prev_flat_grad"], state["prev_loss"] = Tensor(prev_flat_grad), prev_loss
        return orig_loss

    # ------------------------------------------------------------------ state_dict checks
    def _state_error(self, param, state, group):
        """LBFGS keeps its whole state under the first parameter: flat vectors of every parameter's total
        size, lists of them, and numbers."""
        if not isinstance(state, dict):
            return f"must be a dict, got {type(state).__name__}"
        size = sum(_real_size(p) for p in self._params)
        for name, value in state.items():
            values = value if isinstance(value, list) else [value]
            for v in values:
                if isinstance(v, (Tensor, np.ndarray)):
                    array = v._data if isinstance(v, Tensor) else v
                    if array.ndim == 1 and array.size != size:
                        return f"has {name!r} of {array.size} elements, expected {size} (all parameters, flattened)"
                elif not (v is None or isinstance(v, (int, float, np.number))):
                    return f"has {name!r} = {type(v).__name__}, expected numbers and Tensors"
        return None

    @staticmethod
    def _restore_value(param, name, value):
        if isinstance(value, list):
            return [Tensor(np.array(v._data if isinstance(v, Tensor) else v)) if isinstance(v, (Tensor, np.ndarray))
                    else v for v in value]
        if isinstance(value, (Tensor, np.ndarray)):
            return Tensor(np.array(value._data if isinstance(value, Tensor) else value))
        return value


def _scalar(value):
    """A number of the history as PyTorch keeps it: a 0-d tensor (the first H_diag, the int 1, and None stay)."""
    return Tensor(np.array(value)) if isinstance(value, (float, np.floating)) else value


def _real_size(param):
    return param.numel() * (2 if param.is_complex() else 1)


def _array_or_none(value):
    return None if value is None else (value._data if isinstance(value, Tensor) else np.asarray(value))


def _two_loop(q, old_dirs, old_stps, ro, H_diag, al):
    """H q by the two-loop recursion: q is projected back through the stored pairs (newest first), scaled by
    H_0 = H_diag I, and corrected forward through them (oldest first). ``al`` (kept in the state, as PyTorch
    keeps it) receives the first loop's coefficients."""
    for i in range(len(old_dirs) - 1, -1, -1):
        al[i] = old_stps[i].dot(q) * ro[i]
        q = q - al[i] * old_dirs[i]
    r = q * H_diag
    for i in range(len(old_dirs)):
        be_i = old_dirs[i].dot(r) * ro[i]
        r = r + (al[i] - be_i) * old_stps[i]
    return r
