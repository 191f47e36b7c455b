"""Second-order gradients through a LLaMA block with RMSNorm: Hessian-vector products, the sharpness of
the loss, and a gradient penalty.

    python examples/second_order.py [--steps 60] [--iters 12] [--seed 0]

Three things need derivatives of derivatives, and each is one extra backward pass through a graph that
the first backward recorded (``create_graph=True``):

* **Hessian-vector product** H v = d<grad L, v>/d theta: backpropagate once with the graph kept, take the
  inner product of the gradient with v, backpropagate again. It costs about two gradients and never
  forms H (the model below has ~50,000 parameters: H would have 2.5e9 entries).
* **Sharpness**, the largest eigenvalue of H, by power iteration on H v: how curved the loss is along
  its steepest direction. It is printed at initialisation and after some training.
* **Gradient penalty** (as in WGAN-GP): add lambda ||dL/dx||^2 for the input x of the blocks (the token
  embeddings) to the loss; its gradient with respect to the parameters goes through the backward pass.

Every function below takes the library as ``lib`` (minigrad or PyTorch), so the tests run the same code
on both and compare (tests/test_second_order.py).
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import minigrad as mg  # noqa: E402
import minigrad.nn.functional as F  # noqa: E402
from llama import Llama, LlamaConfig, lm_loss  # noqa: E402
from lm_tasks import SortTask  # noqa: E402


def hessian_vector_product(lib, loss, params, vs):
    """H v for the loss's Hessian with respect to ``params`` (a list), v given per parameter: the gradient
    recorded with create_graph=True, its inner product with v, differentiated again."""
    grads = lib.autograd.grad(loss, params, create_graph=True)
    dot = sum((g * v).sum() for g, v in zip(grads, vs))
    return lib.autograd.grad(dot, params)


def sharpness(lib, loss_fn, params, iters, seed=0):
    """The largest eigenvalue of the Hessian of ``loss_fn()`` by power iteration on Hessian-vector products
    (the Rayleigh quotient of the last iterate), with the iterates' unit vectors."""
    rng = np.random.default_rng(seed)
    vs = [lib.tensor(rng.standard_normal(tuple(p.shape)), dtype=p.dtype) for p in params]
    eig = 0.0
    for _ in range(iters):
        norm = sum(float((v * v).sum()) for v in vs) ** 0.5
        vs = [v / norm for v in vs]
        hv = hessian_vector_product(lib, loss_fn(), params, vs)
        eig = sum(float((h * v).sum()) for h, v in zip(hv, vs))
        vs = [h.detach() for h in hv]
    return eig


def rope(lib, model, t, dtype):
    """The rotary tables (T, hd/2) of a minigrad Llama or of its PyTorch twin (bench/torch_llama.py)."""
    if hasattr(model, "rope"):
        return tuple(table[:t].astype(np.dtype(str(dtype).replace("minigrad.", ""))) for table in model.rope)
    return model.cos[:t].to(dtype), model.sin[:t].to(dtype)


def loss_from_embeddings(lib, model, x, targets, functional):
    """The LM loss of the model from its token embeddings x (B, T, D) on: blocks, final norm, head."""
    cos, sin = rope(lib, model, x.shape[1], x.dtype)
    for block in model.blocks:
        x = block(x, cos, sin)
    return lm_loss(functional, model.head(model.norm(x)), targets)


def penalized_loss(lib, model, idx, targets, functional, lam):
    """L + lam * ||dL/dx||^2 with x the token embeddings: the penalty's gradient with respect to the
    parameters is a second-order quantity (it differentiates the backward pass)."""
    x = model.tok_emb(idx)
    loss = loss_from_embeddings(lib, model, x, targets, functional)
    (dx,) = lib.autograd.grad(loss, x, create_graph=True)
    return loss + lam * (dx * dx).sum()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=60, help="training steps between the two sharpness readings")
    parser.add_argument("--iters", type=int, default=12, help="power iterations per sharpness reading")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    mg.manual_seed(args.seed)
    task = SortTask(seq_len=8, seed=args.seed)
    cfg = LlamaConfig(vocab_size=len(task.vocab), seq_len=8, d_model=32, n_layers=1, n_heads=2)
    model = Llama(cfg).to(mg.float64)
    params = list(model.parameters())
    x, y = (mg.tensor(a) for a in task.batch(0, 16))

    def loss_fn():
        return lm_loss(F, model(x), y)

    print(f"LLaMA block with RMSNorm: {sum(p.numel() for p in params)} parameters, float64")
    print(f"sharpness at initialisation (top Hessian eigenvalue, {args.iters} power iterations): "
          f"{sharpness(mg, loss_fn, params, args.iters):.4f}")
    opt = mg.optim.AdamW(params, lr=3e-3)
    for step in range(args.steps):
        xb, yb = (mg.tensor(a) for a in task.batch(step, 16))
        opt.zero_grad()
        loss = penalized_loss(mg, model, xb, yb, F, lam=0.1)
        loss.backward()
        opt.step()
    print(f"after {args.steps} steps with a gradient penalty 0.1 ||dL/dx||^2: loss {float(loss_fn()):.4f}, "
          f"sharpness {sharpness(mg, loss_fn, params, args.iters):.4f}")


if __name__ == "__main__":
    main()
