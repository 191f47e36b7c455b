"""Watch the gradient flowing through every normalization layer of the tiny Transformer, with hooks.

    python examples/norm_hooks.py                    # the LLaMA-style model with RMSNorm
    python examples/norm_hooks.py --norm layernorm   # the same model with LayerNorm

The model of examples/llama.py (float64, untrained) runs one batch of the digit-sorting task
forward and backward. Nothing in the model changes: hooks registered from the outside record, for
each norm layer,

* dL/dy, the gradient flowing **into** the layer from above: a forward hook on the module calls
  ``register_hook`` on its output y;
* dL/dx, the gradient the layer sends **back down**: a forward pre-hook passes the input through a
  no-op (x + 0.0, a new tensor that only this layer consumes) and hooks that. A hook on x itself
  would see the sum of this gradient and the residual stream's, because x also feeds the residual.

For each layer the table shows the norms of dL/dy, dL/dx and dL/dw, and cos(x, dL/dx): both RMSNorm
and LayerNorm send back a gradient orthogonal to their input (up to eps), as derived in
docs/derivations/rmsnorm.md (section 6) and layernorm.md (section 7).
Finally the graph of one small Linear + RMSNorm is printed with ``minigrad.viz``: each node's op,
shape, bytes saved for backward and gradient norm.
"""
import argparse
import os
import sys

import numpy as np

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F
from minigrad import viz

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # llama.py and lm_tasks.py live next to this file
from llama import Llama, LlamaConfig, lm_loss  # noqa: E402
from lm_tasks import SortTask  # noqa: E402

NORMS = (nn.RMSNorm, nn.LayerNorm)


class NormWatcher:
    """Hooks on every norm module of ``model``: after a forward and backward pass, ``records[name]``
    holds the layer's input ``x``, ``dy`` = dL/dy and ``dx`` = dL/dx through the layer alone."""

    def __init__(self, model):
        self.records = {}
        self.handles = []
        for name, module in model.named_modules():
            if isinstance(module, NORMS):
                self.handles.append(module.register_forward_pre_hook(self._watch_input(name)))
                self.handles.append(module.register_forward_hook(self._watch_output(name)))

    def _watch_input(self, name):
        def hook(module, args):
            x = args[0] + 0.0          # consumed by this layer only: its gradient is the layer's dx alone
            record = self.records[name] = {"x": x.detach().numpy().copy()}
            x.register_hook(_store(record, "dx"))
            return (x,) + tuple(args[1:])
        return hook

    def _watch_output(self, name):
        def hook(module, args, output):
            output.register_hook(_store(self.records[name], "dy"))
        return hook

    def remove(self):
        for handle in self.handles:
            handle.remove()


def _store(record, key):
    """A tensor hook that keeps a copy of the gradient in ``record[key]`` and leaves it unchanged."""
    def hook(grad):
        record[key] = grad.numpy().copy()
    return hook


def cosine(a, b):
    """cos of the angle between a and b, flattened (0 when either is zero)."""
    a, b = a.ravel(), b.ravel()
    denom = np.linalg.norm(a) * np.linalg.norm(b)
    return float(a @ b / denom) if denom else 0.0


def watch_transformer(norm="rmsnorm", seed=0, batch_size=8, seq_len=16):
    """One forward and backward pass of a small, untrained model on the sort task, with every norm layer
    watched. Returns (model, records)."""
    mg.manual_seed(seed)
    task = SortTask(seq_len, seed, n_eval=1)
    model = Llama(LlamaConfig(vocab_size=len(task.vocab), seq_len=seq_len, d_model=32, n_layers=2, n_heads=2,
                              norm=norm)).double()
    x, y = task.batch(0, batch_size)
    watcher = NormWatcher(model)
    loss = lm_loss(F, model(mg.from_numpy(x)), mg.from_numpy(y))
    loss.backward()
    watcher.remove()
    return model, watcher.records


def print_table(model, records):
    modules = dict(model.named_modules())
    print(f"{'layer':22}{'mean(x^2)':>12}{'|dL/dy|':>12}{'|dL/dx|':>12}{'|dL/dw|':>12}{'cos(x, dL/dx)':>16}")
    for name, r in records.items():
        weight = modules[name].weight
        dw = np.linalg.norm(weight.grad.numpy()) if weight is not None else float("nan")
        print(f"{name:22}{np.mean(r['x'] ** 2):12.4e}{np.linalg.norm(r['dy']):12.4e}{np.linalg.norm(r['dx']):12.4e}"
              f"{dw:12.4e}{cosine(r['x'], r['dx']):16.1e}")
    print("\ncos(x, dL/dx) is 0 up to eps: x . dx = eps * rstd^3 * (x . gw) per row, not negligible where mean(x^2) "
          "is small next to eps")


def small_graph(seed=0):
    """A Linear + RMSNorm graph, traced before backward and printed after it (with gradient norms)."""
    mg.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 4), nn.RMSNorm(4))
    x = mg.randn(2, 4, requires_grad=True)
    y = model(x)
    with viz.trace(y, params={"x": x, **dict(model.named_parameters())}) as graph:
        y.backward(mg.randn(2, 4))
    return graph


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--norm", choices=("rmsnorm", "layernorm"), default="rmsnorm")
    args = parser.parse_args(argv)

    model, records = watch_transformer(args.norm)
    print(f"Gradients through every {args.norm} layer of the tiny Transformer (one batch of the sort task, "
          "float64, untrained):\n")
    print_table(model, records)
    graph = small_graph()
    print("\nThe backward graph of RMSNorm(Linear(x)), traced before backward, printed after it:\n")
    print(graph.text())
    return dict(model=model, records=records, graph=graph)


if __name__ == "__main__":
    main()
