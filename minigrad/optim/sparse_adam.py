"""SparseAdam: Adam for sparse gradients (``nn.Embedding(..., sparse=True)``), updating only the rows a step's
gradient lists: their moments and their parameters. The other rows keep their moments as they were (the dense Adam
would decay them), which is what makes the step cost the rows looked up rather than the whole table."""
import math

import numpy as np

from ..sparse import gradients as sparse_gradients
from ._moments import check_betas
from .optimizer import Optimizer
from ..tensor import Tensor

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """PyTorch's SparseAdam. For each parameter p whose sparse gradient, coalesced, lists rows r with values g, at
    step t (PyTorch's order of operations):

        g = -g if maximize
        dm = (1 - beta1) (g - m[r]);        m[r] = m[r] + dm
        dv = (1 - beta2) (g * g - v[r]);    v[r] = v[r] + dv
        p[r] = p[r] - lr sqrt(1 - beta2^t) / (1 - beta1^t) * (dm + m_old[r]) / (sqrt(dv + v_old[r]) + eps)

    ``state[p]`` holds 'step' (a Python int, as PyTorch keeps it), 'exp_avg' (m) and 'exp_avg_sq' (v), dense.
    A dense gradient, a sparse or a complex parameter are refused with PyTorch's errors.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        defaults = dict(lr=lr, betas=betas, eps=eps, maximize=maximize)
        self._check_group(defaults)
        super().__init__(params, defaults)
        sparse, complex_ = [], []
        for g, group in enumerate(self.param_groups):
            for i, p in enumerate(group["params"]):
                if p.is_sparse:
                    sparse.append([g, i])
                if p.is_complex():
                    complex_.append([g, i])
        if sparse:
            raise ValueError(f"Sparse params at indices {sparse}: SparseAdam requires dense parameter tensors")
        if complex_:
            raise ValueError(f"Complex params at indices {complex_}: SparseAdam does not support complex parameters")

    def _check_group(self, group):
        if not 0.0 < group["lr"]:
            raise ValueError(f"Invalid learning rate: {group['lr']}")
        if not 0.0 < group["eps"]:
            raise ValueError(f"Invalid epsilon value: {group['eps']}")
        check_betas(group)

    def _required_state(self, group):
        return ("step", "exp_avg", "exp_avg_sq")

    def _sparse_gradient_error(self, group):
        return None

    @staticmethod
    def _restore_value(param, name, value):
        if name == "step":                              # a Python int here (other optimizers keep a 0-d tensor)
            return int(value.item() if isinstance(value, Tensor) else value)
        return Optimizer._restore_value(param, name, value)

    def _check_step_inputs(self):
        super()._check_step_inputs()
        for group in self.param_groups:
            if any(not p.grad.is_sparse for p in self._params_with_grad(group)):
                raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")

    def _update_group(self, group, params):
        lr, eps, maximize = group["lr"], group["eps"], group["maximize"]
        beta1, beta2 = group["betas"]
        for p in params:
            state = self.state[p]
            if not state:
                state.update(step=0, exp_avg=Tensor(np.zeros_like(p._data)), exp_avg_sq=Tensor(np.zeros_like(p._data)))
            state["step"] += 1
            at, g = sparse_gradients.coalesced(p.grad)                             # (nnz,), (nnz, *dense)
            if not len(at):
                continue
            if maximize:
                g = -g
            with sparse_gradients.rows(state["exp_avg"]._data, p.grad) as exp_avg:     # (positions, *dense)
                old_avg = exp_avg[at]
                avg_update = (g - old_avg) * (1 - beta1)
                exp_avg[at] += avg_update
            with sparse_gradients.rows(state["exp_avg_sq"]._data, p.grad) as exp_avg_sq:
                old_sq = exp_avg_sq[at]
                sq_update = (g * g - old_sq) * (1 - beta2)
                exp_avg_sq[at] += sq_update
            numer = avg_update + old_avg
            denom = np.sqrt(sq_update + old_sq)
            denom += eps
            step = state["step"]
            step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
            p.add_(sparse_gradients.on_positions(p.grad, at, -step_size * (numer / denom)))
