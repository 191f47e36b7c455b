"""The two training tasks of tiny_transformer.py: the built-in digit-sorting task and a character-level
language model on any text file.

Each task hands out the batch of a training step as NumPy arrays, decided by (seed, step) alone, so a
run resumed from a checkpoint sees exactly the batches an uninterrupted run would have seen, and the
PyTorch twin (bench/torch_llama.py) trains on the very same batches. Evaluation and sampling take the
tensor library (``minigrad`` or ``torch``) as an argument: the same code drives both.

The text task reads any UTF-8 file, plain or compressed (``.gz``, ``.xz``); the repository ships
tinyshakespeare (public domain) as ``examples/data/tinyshakespeare.txt.gz``, which ``shipped_text()`` finds.
"""
import gzip
import lzma
import os
from pathlib import Path

import numpy as np

from llama import IGNORE_INDEX, lm_loss

_EVAL_STREAM = 2 ** 32 - 1   # a step number no run reaches: the seed stream of the fixed evaluation data


SHIPPED_TEXT = Path(__file__).resolve().parent / "data" / "tinyshakespeare.txt.gz"   # 1,115,394 characters


def shipped_text():
    """The path of tinyshakespeare: ``$MINIGRAD_DATA_DIR/tinyshakespeare.txt`` when that variable names a
    folder holding it, else the compressed copy shipped in ``examples/data/`` (the same text)."""
    folder = os.environ.get("MINIGRAD_DATA_DIR")
    if folder and (Path(folder) / "tinyshakespeare.txt").is_file():
        return str(Path(folder) / "tinyshakespeare.txt")
    return str(SHIPPED_TEXT)


def read_text(path, max_chars=None):
    """The text of a UTF-8 file, decompressed on the way if its name ends in ``.gz`` or ``.xz``; a text
    longer than ``max_chars`` (a compressed file can unpack to far more than its size) is refused."""
    opener = {".gz": gzip.open, ".xz": lzma.open}.get(Path(path).suffix, open)
    with opener(path, "rt", encoding="utf-8") as f:
        text = f.read(-1 if max_chars is None else max_chars + 1)
    if max_chars is not None and len(text) > max_chars:
        raise ValueError(f"{path} holds more than {max_chars:,} characters")
    return text


def step_rng(seed, step):
    """The generator of one training step: independent streams for every (seed, step)."""
    return np.random.default_rng([seed, step])


def _forward(lib, model, x):
    """Logits of a forward pass without recording a graph, as an ndarray."""
    with lib.no_grad():
        return np.asarray(model(lib.from_numpy(x)))


def _logits_and_losses(lib, model, batches):
    """For each batch of (x, y) ndarrays: its logits (an ndarray) and its mean next-token loss."""
    F = lib.nn.functional
    with lib.no_grad():
        for x, y in batches:
            logits = model(lib.from_numpy(x))
            yield np.asarray(logits), lm_loss(F, logits, lib.from_numpy(y)).item()


class SortTask:
    """Sort a string of digits: the model reads ``31415926=`` and must write ``11234569``.

    The loss counts only the answer tokens (the prompt's targets are IGNORE_INDEX). A model input of
    ``seq_len`` tokens holds ``seq_len // 2`` digits, the ``=`` and all but the last answer digit.
    Accuracy is exact match on held-out prompts that training never draws: with every
    teacher-forced prediction right, greedy decoding writes the whole answer right, and conversely.
    """

    name = "sort"
    metric = "accuracy"
    vocab = "0123456789="
    SEP = 10

    def __init__(self, seq_len, seed, n_eval=1000):
        if seq_len < 4 or seq_len % 2:
            raise ValueError(f"the sort task needs an even --seq-len >= 4 (got {seq_len})")
        self.seq_len, self.seed, self.n_digits = seq_len, seed, seq_len // 2
        self._place = 10 ** np.arange(self.n_digits, dtype=np.int64)   # a prompt's digits as one integer key
        prompts = step_rng(seed, _EVAL_STREAM).integers(0, 10, size=(n_eval, self.n_digits))
        self._heldout_keys = np.unique(prompts @ self._place)
        self.eval_x, self.eval_y = self._examples(prompts)

    def _examples(self, prompts):
        """Model inputs and targets (N, seq_len) for prompts (N, n): ``prompt = sorted`` shifted by one."""
        n = self.n_digits
        seqs = np.concatenate([prompts, np.full((len(prompts), 1), self.SEP), np.sort(prompts, axis=1)], axis=1)
        x, y = seqs[:, :-1].copy(), seqs[:, 1:].copy()                # (N, 2n)
        y[:, :n] = IGNORE_INDEX                                        # targets inside the prompt and the "="
        return x, y

    def _draw_prompts(self, rng, size):
        """Random prompts (size, n), redrawing any that belong to the held-out set."""
        prompts = rng.integers(0, 10, size=(size, self.n_digits))
        while True:
            clash = np.isin(prompts @ self._place, self._heldout_keys)
            if not clash.any():
                return prompts
            prompts[clash] = rng.integers(0, 10, size=(int(clash.sum()), self.n_digits))

    def batch(self, step, batch_size):
        return self._examples(self._draw_prompts(step_rng(self.seed, step), batch_size))

    def evaluate(self, lib, model, chunk=500):
        """Exact-match accuracy and answer loss on the held-out prompts."""
        batches = [(self.eval_x[i:i + chunk], self.eval_y[i:i + chunk]) for i in range(0, len(self.eval_x), chunk)]
        n = self.n_digits
        right, losses = [], []
        for (_, y), (logits, loss) in zip(batches, _logits_and_losses(lib, model, batches)):
            right.append((logits[:, n:].argmax(-1) == y[:, n:]).all(axis=1))   # (chunk,) all answer digits right
            losses.append(loss)
        return {"accuracy": float(np.concatenate(right).mean()), "loss": float(np.mean(losses))}

    def sample(self, lib, model, count, seed):
        """Greedy answers for ``count`` new prompts, decoded one token at a time; returns printable lines."""
        prompts = self._draw_prompts(np.random.default_rng(seed), count)
        seqs = np.concatenate([prompts, np.full((count, 1), self.SEP)], axis=1)
        for _ in range(self.n_digits):
            next_token = _forward(lib, model, seqs)[:, -1].argmax(-1)
            seqs = np.concatenate([seqs, next_token[:, None]], axis=1)
        lines = []
        for prompt, answer in zip(prompts, seqs[:, self.n_digits + 1:]):
            ok = np.array_equal(answer, np.sort(prompt))
            lines.append(f"{''.join(map(str, prompt))} = {''.join(self.vocab[t] for t in answer)}  "
                         f"{'ok' if ok else 'WRONG (' + ''.join(map(str, np.sort(prompt))) + ')'}")
        return lines


class TextTask:
    """Character-level language modelling on a text file: the first 90% trains, the last 10% validates."""

    name = "text"
    metric = "val_loss"

    def __init__(self, path, seq_len, seed, val_fraction=0.1, eval_batches=16, eval_batch_size=32, max_chars=None):
        text = read_text(path, max_chars)
        self.vocab = "".join(sorted(set(text)))
        codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)       # one code point per char
        data = np.searchsorted(np.frombuffer(self.vocab.encode("utf-32-le"), dtype=np.uint32), codes)
        n_train = int(len(data) * (1 - val_fraction))
        self.train, self.val = data[:n_train].astype(np.int64), data[n_train:].astype(np.int64)
        if len(self.val) <= seq_len + 1:
            raise ValueError(f"{path}: {len(text)} characters leave too little validation text for "
                             f"--seq-len {seq_len} (need more than {int((seq_len + 1) / val_fraction)})")
        self.seq_len, self.seed = seq_len, seed
        rng = step_rng(seed, _EVAL_STREAM)
        self.eval_batches = [self._windows(self.val, rng, eval_batch_size) for _ in range(eval_batches)]

    def _windows(self, data, rng, batch_size):
        """Random windows of seq_len + 1 characters: inputs (B, T) and next-character targets (B, T)."""
        starts = rng.integers(0, len(data) - self.seq_len, size=batch_size)
        chunk = data[starts[:, None] + np.arange(self.seq_len + 1)]           # (B, T + 1)
        return chunk[:, :-1], chunk[:, 1:]

    def batch(self, step, batch_size):
        return self._windows(self.train, step_rng(self.seed, step), batch_size)

    def evaluate(self, lib, model):
        """Mean loss (nats per character) on fixed windows of the validation text."""
        return {"val_loss": float(np.mean([loss for _, loss in _logits_and_losses(lib, model, self.eval_batches)]))}

    def sample(self, lib, model, count, seed, temperature=0.8):
        """``count`` characters sampled after a newline, as one string."""
        rng = np.random.default_rng(seed)
        start = self.vocab.find("\n")
        tokens = [max(start, 0)]
        for _ in range(count):
            context = np.array([tokens[-self.seq_len:]])
            logits = _forward(lib, model, context)[0, -1].astype(np.float64) / temperature
            p = np.exp(logits - logits.max())
            tokens.append(int(rng.choice(len(p), p=p / p.sum())))
        return ["".join(self.vocab[t] for t in tokens[1:])]
