"""Sampling from a language model as minimal-GPT code does: crop the context, scale the last logits by
a temperature, keep the ``topk`` logits (the rest set to ``-inf``), ``softmax`` and ``multinomial``, under
``torch.no_grad()``; the model is a small causal MLP LM trained for a few steps first."""
import torch
import torch.nn as nn
from torch.nn import functional as F

STEPS = 3
vocab_size, block_size, n_embd = 12, 4, 10


class ContextLM(nn.Module):
    """Predicts the next token from the last ``block_size`` tokens (padded on the left with token 0)."""

    def __init__(self):
        super().__init__()
        self.token_embedding_table = nn.Embedding(vocab_size, n_embd)
        self.position_embedding_table = nn.Embedding(block_size, n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        tok_emb = self.token_embedding_table(idx)  # (B, T, C)
        pos_emb = self.position_embedding_table(torch.arange(T))  # (T, C)
        x = torch.cumsum(tok_emb + pos_emb, dim=1) / torch.arange(1, T + 1).view(1, T, 1)  # causal mean
        logits = self.lm_head(x)
        if targets is None:
            return logits, None
        B, T, C = logits.shape
        loss = F.cross_entropy(logits.view(B * T, C), targets.view(B * T))
        return logits, loss


@torch.no_grad()
def generate(model, idx, max_new_tokens, temperature=1.0, top_k=None):
    for _ in range(max_new_tokens):
        idx_cond = idx if idx.size(1) <= block_size else idx[:, -block_size:]
        logits, _ = model(idx_cond)
        logits = logits[:, -1, :] / temperature
        if top_k is not None:
            v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
            logits[logits < v[:, [-1]]] = -float('Inf')
        probs = F.softmax(logits, dim=-1)
        idx_next = torch.multinomial(probs, num_samples=1)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx


def last_logits_topk(model, idx, k):
    """The top ``k`` logits and their indices for the next token after each row of ``idx``."""
    model.eval()
    with torch.inference_mode():
        logits, _ = model(idx[:, -block_size:])
        return torch.topk(logits[:, -1, :], k, dim=-1)


def make_model():
    return ContextLM()


def make_data(rng):
    data = rng.integers(0, vocab_size, size=(3, block_size + 1))
    return {"x": data[:, :-1].copy(), "y": data[:, 1:].copy(), "prompt": rng.integers(0, vocab_size, size=(2, 2))}


def train(model, data, steps, after_backward=None):
    xb, yb = torch.tensor(data["x"]), torch.tensor(data["y"])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for step in range(steps):
        logits, loss = model(xb, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if after_backward is not None:
            after_backward(step)
        optimizer.step()
        losses.append(loss.item())
    return losses
