"""A sequence classifier on ``nn.TransformerEncoder``: token embeddings plus a learned position
embedding, ``nn.TransformerEncoderLayer(batch_first=True)``, a padding mask, mean pooling over the real
tokens, ``nn.CrossEntropyLoss`` and Adam."""
import numpy as np
import torch
import torch.nn as nn

STEPS = 3
vocab_size, max_len, n_classes, pad_idx = 20, 7, 3, 0
device = 'cuda' if torch.cuda.is_available() else 'cpu'


class TransformerClassifier(nn.Module):
    def __init__(self, d_model=16, nhead=2, num_layers=2, dim_feedforward=32):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_idx)
        self.pos_embedding = nn.Parameter(torch.zeros(1, max_len, d_model))
        encoder_layer = nn.TransformerEncoderLayer(d_model=d_model, nhead=nhead, dim_feedforward=dim_feedforward,
                                                   dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(encoder_layer, num_layers=num_layers)
        self.classifier = nn.Linear(d_model, n_classes)

    def forward(self, src):
        padding_mask = src == pad_idx  # (B, T), True where padded
        x = self.embedding(src) + self.pos_embedding[:, :src.size(1)]
        x = self.encoder(x, src_key_padding_mask=padding_mask)
        keep = (~padding_mask).unsqueeze(-1).to(x.dtype)
        pooled = (x * keep).sum(dim=1) / keep.sum(dim=1)
        return self.classifier(pooled)


def make_model():
    model = TransformerClassifier()
    nn.init.normal_(model.pos_embedding, std=0.02)
    return model.to(device)


def make_data(rng):
    src = rng.integers(1, vocab_size, size=(5, max_len))
    lengths = np.array([7, 5, 6, 3, 7])
    src[np.arange(max_len)[None, :] >= lengths[:, None]] = pad_idx
    return {"src": src, "labels": rng.integers(0, n_classes, size=5)}


def train(model, data, steps, after_backward=None):
    src, labels = torch.from_numpy(data["src"]).to(device), torch.from_numpy(data["labels"]).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    losses = []
    for step in range(steps):
        optimizer.zero_grad()
        loss = criterion(model(src), labels)
        loss.backward()
        if after_backward is not None:
            after_backward(step)
        optimizer.step()
        losses.append(loss.item())
    return losses

