"""A character-level MLP language model in the Bengio et al. style: a context of embedded characters,
flattened, a tanh hidden layer, cross-entropy, minibatches, SGD with the learning rate decayed by hand
through ``optimizer.param_groups``."""
import torch
import torch.nn as nn
import torch.nn.functional as F

STEPS = 4
block_size = 3  # characters of context
vocab_size = 27
n_embd = 5
n_hidden = 32


class CharMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.C = nn.Embedding(vocab_size, n_embd)
        self.hidden = nn.Linear(block_size * n_embd, n_hidden)
        self.out = nn.Linear(n_hidden, vocab_size)

    def forward(self, X):
        emb = self.C(X)  # (B, block_size, n_embd)
        h = torch.tanh(self.hidden(emb.view(emb.shape[0], -1)))
        return self.out(h)


def make_model():
    return CharMLP()


def make_data(rng):
    # words as streams of character indices (0 = '.'): contexts X and next characters Y
    X = rng.integers(0, vocab_size, size=(64, block_size))
    Y = rng.integers(0, vocab_size, size=64)
    batches = rng.integers(0, 64, size=(STEPS, 16))  # the minibatch indices (torch.randint in such scripts)
    return {"X": X, "Y": Y, "batches": batches}


def train(model, data, steps, after_backward=None):
    Xtr, Ytr = torch.tensor(data["X"]), torch.tensor(data["Y"])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for i in range(steps):
        ix = torch.tensor(data["batches"][i % len(data["batches"])])
        logits = model(Xtr[ix])
        loss = F.cross_entropy(logits, Ytr[ix])
        for p in model.parameters():
            p.grad = None
        loss.backward()
        if after_backward is not None:
            after_backward(i)
        lr = 0.1 if i < steps // 2 else 0.01
        for g in optimizer.param_groups:
            g['lr'] = lr
        optimizer.step()
        losses.append(loss.item())
    return losses
