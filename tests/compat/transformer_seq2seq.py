"""A translation model on ``nn.Transformer`` in the tutorial style: source and target token embeddings
scaled by sqrt(d_model) plus sinusoidal positions from a registered buffer, a causal target mask from
``generate_square_subsequent_mask``, additive padding masks, teacher forcing, ``nn.CrossEntropyLoss`` with
``ignore_index`` and ``label_smoothing``, Adam(betas=(0.9, 0.98), eps=1e-9) and a warmup ``LambdaLR``."""
import math

import numpy as np
import torch
import torch.nn as nn
from torch import Tensor

STEPS = 3
# The key bias inside in_proj_bias has a true gradient of exactly 0 (adding one constant to every key's score leaves
# each softmax unchanged): both libraries compute rounding noise (~1e-17) there, and Adam, dividing by
# sqrt(v) + eps = ~1e-9, turns the noise into steps of ~1e-10 that differ between them. The parameters after the
# steps are compared to this absolute tolerance; losses and first gradients keep the strict ones.
FINAL_ATOL = 1e-8
PAD_IDX, BOS_IDX = 0, 1
SRC_VOCAB, TGT_VOCAB = 14, 12
EMB_SIZE = 16


class PositionalEncoding(nn.Module):
    def __init__(self, emb_size: int, dropout: float = 0.0, maxlen: int = 32):
        super().__init__()
        den = torch.exp(-torch.arange(0, emb_size, 2) * math.log(10000) / emb_size)
        pos = torch.arange(0, maxlen).reshape(maxlen, 1)
        pos_embedding = torch.zeros((maxlen, emb_size))
        pos_embedding[:, 0::2] = torch.sin(pos * den)
        pos_embedding[:, 1::2] = torch.cos(pos * den)
        pos_embedding = pos_embedding.unsqueeze(0)  # (1, maxlen, emb): batch first
        self.dropout = nn.Dropout(dropout)
        self.register_buffer('pos_embedding', pos_embedding)

    def forward(self, token_embedding: Tensor):
        return self.dropout(token_embedding + self.pos_embedding[:, :token_embedding.size(1), :])


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size: int, emb_size):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_size)
        self.emb_size = emb_size

    def forward(self, tokens: Tensor):
        return self.embedding(tokens.long()) * math.sqrt(self.emb_size)


class Seq2SeqTransformer(nn.Module):
    def __init__(self, num_encoder_layers=1, num_decoder_layers=1, nhead=2, dim_feedforward=32):
        super().__init__()
        self.transformer = nn.Transformer(d_model=EMB_SIZE, nhead=nhead, num_encoder_layers=num_encoder_layers,
                                          num_decoder_layers=num_decoder_layers, dim_feedforward=dim_feedforward,
                                          dropout=0.0, batch_first=True)
        self.generator = nn.Linear(EMB_SIZE, TGT_VOCAB)
        self.src_tok_emb = TokenEmbedding(SRC_VOCAB, EMB_SIZE)
        self.tgt_tok_emb = TokenEmbedding(TGT_VOCAB, EMB_SIZE)
        self.positional_encoding = PositionalEncoding(EMB_SIZE)

    def forward(self, src, trg, tgt_mask, src_padding_mask, tgt_padding_mask):
        src_emb = self.positional_encoding(self.src_tok_emb(src))
        tgt_emb = self.positional_encoding(self.tgt_tok_emb(trg))
        outs = self.transformer(src_emb, tgt_emb, tgt_mask=tgt_mask, src_key_padding_mask=src_padding_mask,
                                tgt_key_padding_mask=tgt_padding_mask, memory_key_padding_mask=src_padding_mask)
        return self.generator(outs)


def create_mask(src, tgt):
    tgt_seq_len = tgt.shape[1]
    tgt_mask = nn.Transformer.generate_square_subsequent_mask(tgt_seq_len)
    # additive float masks like the causal one (mixing bool and float masks is deprecated)
    src_padding_mask = torch.zeros(src.shape).masked_fill(src == PAD_IDX, float('-inf'))
    tgt_padding_mask = torch.zeros(tgt.shape).masked_fill(tgt == PAD_IDX, float('-inf'))
    return tgt_mask, src_padding_mask, tgt_padding_mask


def make_model():
    model = Seq2SeqTransformer()
    for p in model.parameters():
        if p.dim() > 1:
            nn.init.xavier_uniform_(p)
    return model


def make_data(rng):
    src = rng.integers(2, SRC_VOCAB, size=(4, 6))
    tgt = rng.integers(2, TGT_VOCAB, size=(4, 6))
    tgt[:, 0] = BOS_IDX
    src[np.arange(6)[None, :] >= np.array([6, 4, 5, 6])[:, None]] = PAD_IDX
    tgt[np.arange(6)[None, :] >= np.array([6, 5, 3, 6])[:, None]] = PAD_IDX
    return {"src": src, "tgt": tgt}


def train(model, data, steps, after_backward=None):
    src, tgt = torch.tensor(data["src"]), torch.tensor(data["tgt"])
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=PAD_IDX, label_smoothing=0.1)
    optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    warmup = 4
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: EMB_SIZE ** -0.5 * min((step + 1) ** -0.5, (step + 1) * warmup ** -1.5))
    model.train()
    losses = []
    for step in range(steps):
        tgt_input = tgt[:, :-1]
        tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(src, tgt_input)
        logits = model(src, tgt_input, tgt_mask, src_padding_mask, tgt_padding_mask)
        optimizer.zero_grad()
        tgt_out = tgt[:, 1:]
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
        loss.backward()
        if after_backward is not None:
            after_backward(step)
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
    return losses
