"""An LSTM word language model in the classic example's style: (seq, batch) layout from ``batchify``,
``get_batch`` windows, embedding -> 2-layer LSTM -> decoder, the hidden state detached between batches,
gradient clipping and a manual SGD update through ``p.data.add_``."""
import torch
import torch.nn as nn

STEPS = 3
ntokens = 17
bptt = 5


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.0):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid = nhid
        self.nlayers = nlayers

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, self.decoder.out_features)
        return nn.functional.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()  # (nbatch, bsz)


def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].view(-1)
    return data, target


def make_model():
    return RNNModel(ntokens, 8, 10, 2, dropout=0.0)


def make_data(rng):
    return {"corpus": rng.integers(0, ntokens, size=3 * (STEPS * bptt + 1))}


def train(model, data, steps, after_backward=None):
    train_data = batchify(torch.tensor(data["corpus"]), 3)
    criterion = nn.NLLLoss()
    lr, clip = 0.5, 0.25
    model.train()
    hidden = model.init_hidden(3)
    losses = []
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        if batch == steps:
            break
        data_, targets = get_batch(train_data, i)
        hidden = repackage_hidden(hidden)
        model.zero_grad()
        output, hidden = model(data_, hidden)
        loss = criterion(output, targets)
        loss.backward()
        if after_backward is not None:
            after_backward(batch)
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        losses.append(loss.item())
    return losses
