"""A character-level RNN (``nn.RNN``, batch_first) predicting the next character at every position,
trained with Adam; the classic tutorial idioms: one-hot inputs, ``view(-1, n)`` before the loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F

STEPS = 3
n_chars = 10
hidden_size = 12


class CharRNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size, n_layers=2):
        super().__init__()
        self.hidden_size = hidden_size
        self.n_layers = n_layers
        self.rnn = nn.RNN(input_size, hidden_size, n_layers, batch_first=True, nonlinearity='tanh')
        self.fc = nn.Linear(hidden_size, output_size)

    def forward(self, x, hidden):
        out, hidden = self.rnn(x, hidden)
        out = out.contiguous().view(-1, self.hidden_size)
        return self.fc(out), hidden

    def init_hidden(self, batch_size):
        return torch.zeros(self.n_layers, batch_size, self.hidden_size)


def make_model():
    return CharRNN(n_chars, hidden_size, n_chars)


def make_data(rng):
    text = rng.integers(0, n_chars, size=(4, 7))
    return {"inputs": text[:, :-1].copy(), "targets": text[:, 1:].copy()}


def train(model, data, steps, after_backward=None):
    inputs = F.one_hot(torch.from_numpy(data["inputs"]), n_chars).to(torch.get_default_dtype())
    targets = torch.from_numpy(data["targets"])
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    criterion = nn.CrossEntropyLoss()
    losses = []
    for step in range(steps):
        hidden = model.init_hidden(inputs.size(0))
        optimizer.zero_grad()
        output, hidden = model(inputs, hidden)
        loss = criterion(output, targets.view(-1).long())
        loss.backward()
        if after_backward is not None:
            after_backward(step)
        optimizer.step()
        losses.append(loss.item())
    return losses
