"""A name classifier on ``nn.GRU`` in the tutorial style: padded character sequences through
``nn.Embedding``, a bidirectional two-layer GRU (batch_first), the final hidden states of both
directions concatenated, ``nn.Linear``, ``F.cross_entropy``, Adam and gradient clipping."""
import torch
import torch.nn as nn
import torch.nn.functional as F

STEPS = 3
n_letters, n_categories = 15, 4


class GRUClassifier(nn.Module):
    def __init__(self, hidden_size=9):
        super().__init__()
        self.embedding = nn.Embedding(n_letters, 6)
        self.gru = nn.GRU(6, hidden_size, num_layers=2, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * hidden_size, n_categories)

    def forward(self, x):
        output, h_n = self.gru(self.embedding(x))  # h_n: (num_layers * 2, B, H)
        hidden = torch.cat((h_n[-2], h_n[-1]), dim=1)
        return self.fc(hidden)


def make_model():
    return GRUClassifier()


def make_data(rng):
    return {"names": rng.integers(0, n_letters, size=(6, 5)), "categories": rng.integers(0, n_categories, size=6)}


def train(model, data, steps, after_backward=None):
    names = torch.LongTensor(data["names"].tolist())
    categories = torch.LongTensor(data["categories"].tolist())
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    losses = []
    for step in range(steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(names), categories)
        loss.backward()
        if after_backward is not None:
            after_backward(step)
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        losses.append(loss.item())
    return losses
