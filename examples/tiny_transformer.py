"""Train a tiny LLaMA-style Transformer with minigrad: RMSNorm, rotary positions, SwiGLU, AdamW.

    python examples/tiny_transformer.py                          # sort 8 digits: >= 99% exact match, ~20 s
    python examples/tiny_transformer.py --norm layernorm         # the same model with LayerNorm
    python examples/tiny_transformer.py --text                   # character-level LM on the shipped tinyshakespeare
    python examples/tiny_transformer.py --text input.txt         # ... or on any text file (.gz and .xz too)
    python examples/tiny_transformer.py --norm dyt --placement peri --qk-norm head   # DyT, Peri-LN, QK-norm
    python examples/tiny_transformer.py --dtype bfloat16         # CPU bfloat16 autocast, float32 master weights
    python examples/tiny_transformer.py --resume runs/tiny_transformer/sort-rmsnorm/checkpoint.npz --sample 10
    mpiexec -n 2 python examples/tiny_transformer.py --ddp     # data-parallel on 2 processes (MPI)

The default task needs no files: the model reads a string of digits and writes it sorted
(``31415926=11234569``), and is scored by exact match on held-out strings. With ``--text FILE`` it
learns to predict the next character, scored by the loss on the last 10% of the file; ``--text`` alone
reads the copy of tinyshakespeare shipped in ``examples/data/``.

With ``--dtype bfloat16`` the forward pass and the loss run under ``autocast("cpu", dtype=bfloat16)``, as a
PyTorch mixed-precision loop does: the parameters, their gradients and AdamW's state stay float32 (master
weights), the matrix products and attention run in bfloat16 (their float32 weights cast to bfloat16 copies
whose gradients flow back into the float32 ones), the loss in float32, the rest in their inputs' dtypes.
The evaluation runs under the same autocast. Compare the curves with ``examples/compare_runs.py``.

Training: AdamW (weight decay on the matrices only), linear warmup then cosine decay to 10% of
``--lr`` (a LambdaLR schedule), gradients clipped to norm 1. The run's folder, ``--out DIR`` or by default
``runs/tiny_transformer/<task>-<norm>[-bfloat16][-<other settings that differ from the defaults>]`` (one folder per
configuration, so no run overwrites another configuration's checkpoint), receives the loss curve
(``loss.png``, with matplotlib), the history (``history.json``) and checkpoints (``.npz``, read back
with ``allow_pickle=False``). The batch of step s depends only on (seed, s), so ``--resume``
continues with exactly the losses the uninterrupted run would have had.

With ``--ddp`` (under ``mpiexec -n N``, ``pip install -e ".[distributed]"``) each process trains on its
1/N of every global batch (the same global batch as one process; ``--batch-size`` must be a multiple of
N) with the model wrapped in ``DistributedDataParallel``: the same steps as one process, up to rounding.
Only rank 0 prints, evaluates and saves.

The training loop (``Trainer``) and the tasks take the tensor library as an argument:
``bench/torch_llama.py`` runs the very same loop on the same batches with PyTorch.
"""
import argparse
import json
import math
import os
import stat
import sys
import time
import zipfile

import numpy as np

import minigrad as mg
from llama import NORMS, PLACEMENTS, QK_NORMS, Llama, LlamaConfig, lm_loss
from lm_tasks import SortTask, TextTask, shipped_text

TARGET_ACCURACY = 0.99   # the sort task's goal: exact match on the held-out strings

# Defaults per task; any option given on the command line wins.
DEFAULTS = {
    "sort": dict(steps=1000, batch_size=64, seq_len=16, d_model=64, n_layers=2, n_heads=4, lr=3e-3,
                 warmup=100, eval_every=250),
    "text": dict(steps=2000, batch_size=32, seq_len=64, d_model=128, n_layers=4, n_heads=4, lr=2e-3,
                 warmup=100, eval_every=100),
    "common": dict(norm="rmsnorm", min_lr_ratio=0.1, weight_decay=0.1, grad_clip=1.0, seed=0, placement="pre",
                   qk_norm="none", dtype="float32"),
}
# What a checkpoint fixes: resuming with a different value of any of these is refused.
RUN_KEYS = ("text", "batch_size", "seq_len", "d_model", "n_layers", "n_heads", "norm", "lr", "min_lr_ratio",
            "warmup", "weight_decay", "grad_clip", "seed", "placement", "qk_norm", "dtype")
# What --resume and --text will read at most; each has its command-line option (see --help).
LIMITS = {"max_checkpoint_bytes": 2 * 2 ** 30, "max_params": 100_000_000, "max_text_bytes": 2 ** 30}
DTYPES = ("float32", "bfloat16")   # --dtype: float32, or bfloat16 under CPU autocast
INT_KEYS = {"steps": 0, "batch_size": 1, "seq_len": 1, "d_model": 2, "n_layers": 1, "n_heads": 1, "warmup": 0,
            "eval_every": 0, "seed": 0}                       # the config's integers and their least values
REAL_KEYS = ("lr", "min_lr_ratio", "weight_decay", "grad_clip")  # finite, non-negative numbers


# --------------------------------------------------------------------------- the training loop
def warmup_cosine(warmup, total, min_ratio):
    """LambdaLR factor for optimizer step ``s``: linear warmup to 1 over ``warmup`` steps, then a
    cosine decay from 1 to ``min_ratio`` at step ``total``."""
    def factor(s):
        if s < warmup:
            return (s + 1) / warmup
        progress = min(1.0, (s - warmup) / max(1, total - warmup))
        return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))
    return factor


class Trainer:
    """One optimization step at a time, written once for both ``minigrad`` and ``torch`` (``lib``).

    The history holds the training loss of every step and the task's metrics at each evaluation;
    ``grad_norm`` is the last step's gradient norm before clipping.
    """

    def __init__(self, lib, model, task, cfg, rank=0, world_size=1, wrap=None):
        """``rank`` of ``world_size`` processes trains on its shard of every batch, through ``wrap(model)``
        (``DistributedDataParallel``) if given; ``model`` itself is what is evaluated and saved."""
        self.lib, self.model, self.task, self.cfg = lib, model, task, cfg
        self.rank, self.world_size = rank, world_size
        self.train_model = model if wrap is None else wrap(model)
        matrices = [p for p in model.parameters() if p.ndim >= 2]
        vectors = [p for p in model.parameters() if p.ndim < 2]   # norm gains and biases: no weight decay
        self.optimizer = lib.optim.AdamW([{"params": matrices, "weight_decay": cfg["weight_decay"]},
                                          {"params": vectors, "weight_decay": 0.0}], lr=cfg["lr"], betas=(0.9, 0.95))
        self.scheduler = lib.optim.lr_scheduler.LambdaLR(
            self.optimizer, warmup_cosine(cfg["warmup"], cfg["steps"], cfg["min_lr_ratio"]))
        self.step, self.grad_norm = 0, None
        self.history = {"loss": [], "evals": []}

    def train_step(self):
        """Forward, backward, clip, AdamW update and schedule on the batch of ``self.step``; returns the loss."""
        lib = self.lib
        x, y = self.task.batch(self.step, self.cfg["batch_size"])
        n = len(x) // self.world_size                                   # rows of this rank's shard
        x, y = x[self.rank * n:(self.rank + 1) * n], y[self.rank * n:(self.rank + 1) * n]
        with self.autocast():
            loss = lm_loss(lib.nn.functional, self.train_model(lib.from_numpy(x)), lib.from_numpy(y))
        self.optimizer.zero_grad()
        loss.backward()
        self.grad_norm = float(lib.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg["grad_clip"]))
        self.optimizer.step()
        self.scheduler.step()
        self.step += 1
        if self.world_size > 1:                    # the loss on the whole batch: the mean of the shards'
            loss = loss.detach()
            lib.distributed.all_reduce(loss, op=lib.distributed.ReduceOp.AVG)
        self.history["loss"].append(loss.item())
        return self.history["loss"][-1]

    def autocast(self):
        """The forward passes' context: CPU autocast to bfloat16 for ``--dtype bfloat16``, else a no-op."""
        return self.lib.autocast("cpu", dtype=self.lib.bfloat16, enabled=self.cfg.get("dtype") == "bfloat16")

    def evaluate(self):
        self.model.eval()
        with self.autocast():
            metrics = self.task.evaluate(self.lib, self.model)
        self.model.train()
        self.history["evals"].append({"step": self.step, **metrics})
        return metrics

    def eval_due(self):
        every = self.cfg["eval_every"]
        return self.step == self.cfg["steps"] or (every > 0 and self.step % every == 0)


def make_task(cfg, max_text_bytes=LIMITS["max_text_bytes"]):
    if cfg["text"]:
        check_regular_file(cfg["text"], max_text_bytes, "text file", "--max-text-bytes")
        try:
            return TextTask(cfg["text"], cfg["seq_len"], cfg["seed"], max_chars=max_text_bytes)
        except (ValueError, OSError, EOFError, UnicodeDecodeError) as err:   # too short, too long, not text
            raise CheckpointError(f"text file {cfg['text']}: {err}") from None
    return SortTask(cfg["seq_len"], cfg["seed"])


def run_dir(cfg):
    """The default output folder of a run: ``runs/tiny_transformer/<task>-<norm>[-bfloat16]``, followed by every
    other setting that differs from the task's defaults (``sort-layernorm``, ``tinyshakespeare-rmsnorm``,
    ``sort-rmsnorm-d_model32-steps200``, ``sort-rmsnorm-bfloat16``), so that each configuration keeps its own
    checkpoint."""
    task = "sort" if not cfg["text"] else os.path.basename(cfg["text"]).split(".")[0] or "text"
    defaults = {**DEFAULTS["common"], **DEFAULTS["text" if cfg["text"] else "sort"]}
    changed = [f"{key}{cfg[key]:g}" if isinstance(cfg[key], float) else f"{key}{cfg[key]}"
               for key in sorted(defaults)
               if key not in ("norm", "dtype", "eval_every") and cfg.get(key, defaults[key]) != defaults[key]]
    low = [cfg["dtype"]] if cfg.get("dtype", "float32") != "float32" else []      # bfloat16 autocast
    return os.path.join("runs", "tiny_transformer", "-".join([task, str(cfg["norm"]), *low, *changed]))


def model_config(cfg, vocab_size):
    return LlamaConfig(vocab_size=vocab_size, seq_len=cfg["seq_len"], d_model=cfg["d_model"],
                       n_layers=cfg["n_layers"], n_heads=cfg["n_heads"], norm=cfg["norm"],
                       placement=cfg.get("placement", "pre"), qk_norm=cfg.get("qk_norm", "none"))


def make_model(cfg, vocab_size):
    """The minigrad model, initialized from ``cfg["seed"]`` (the PyTorch twin copies these weights)."""
    mg.manual_seed(cfg["seed"])
    return Llama(model_config(cfg, vocab_size))


# --------------------------------------------------------------------------- checkpoints
class CheckpointError(ValueError):
    """A checkpoint, or a file it names, that a run refuses; the message says what was wrong."""


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _is_real(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_regular_file(path, max_bytes, what, option):
    """Refuse ``path`` unless it is a regular file of at most ``max_bytes`` (checked before opening it: a
    FIFO would block the read, a device never end)."""
    try:
        info = os.stat(path)
    except OSError as err:
        raise CheckpointError(f"{what} {path}: {err.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise CheckpointError(f"{what} {path} is not a regular file (a directory, FIFO or device): not reading it")
    if info.st_size > max_bytes:
        raise CheckpointError(f"{what} {path} has {info.st_size:,} bytes, more than the limit of {max_bytes:,} "
                              f"({option})")


def _check_npy_header(archive, name, max_bytes):
    """A member of the .npz: a numeric array whose declared size its stored bytes hold (read before the data,
    so a header declaring a huge shape allocates nothing)."""
    with archive.open(name) as member:
        version = np.lib.format.read_magic(member)
        read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                       (2, 0): np.lib.format.read_array_header_2_0}.get(version)
        if read_header is None:
            raise ValueError(f"{name}: .npy format version {version}")
        shape, _, dtype = read_header(member)
        data_bytes = archive.getinfo(name).file_size - member.tell()
    if dtype.kind not in "biuf" or dtype.hasobject:
        raise CheckpointError(f"entry {name} has dtype {dtype}: checkpoints hold numeric arrays only")
    if math.prod(shape) * dtype.itemsize > min(data_bytes, max_bytes):
        raise CheckpointError(f"entry {name} declares shape {list(shape)} of {dtype}, more than its "
                              f"{data_bytes:,} stored bytes")


def read_checkpoint(path, max_bytes=LIMITS["max_checkpoint_bytes"]):
    """(meta dict, arrays dict) of a checkpoint: a regular file of at most ``max_bytes`` holding an .npz of
    numeric arrays (their total within ``max_bytes``) and a JSON 'meta' entry; read without pickle."""
    check_regular_file(path, max_bytes, "checkpoint", "--max-checkpoint-bytes")
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            total = sum(m.file_size for m in members)
            if total > max_bytes:
                raise CheckpointError(f"checkpoint {path} unpacks to {total:,} bytes, more than the limit of "
                                      f"{max_bytes:,} (--max-checkpoint-bytes)")
            names = [m.filename for m in members]
            if "meta.npy" not in names:
                raise CheckpointError(f"{path} has no 'meta' entry: it is not a checkpoint written by "
                                      "tiny_transformer.py (a plain .npz of arrays?)")
            for name in names:
                if name != "meta.npy":
                    if not name.endswith(".npy"):
                        raise CheckpointError(f"checkpoint {path} holds {name!r}, which is not an array")
                    _check_npy_header(archive, name, max_bytes)
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
        if isinstance(err, CheckpointError):
            raise
        raise CheckpointError(f"{path} is not a readable checkpoint (.npz of plain arrays): {err}") from None
    meta = arrays.pop("meta")
    if meta.dtype.kind != "U" or meta.shape != ():
        raise CheckpointError(f"{path}: 'meta' must be one JSON string, got shape {list(meta.shape)} of {meta.dtype}")
    try:
        meta = json.loads(str(meta))
    except ValueError as err:
        raise CheckpointError(f"{path}: 'meta' is not valid JSON ({err})") from None
    if not isinstance(meta, dict):
        raise CheckpointError(f"{path}: 'meta' must be a JSON object, got {type(meta).__name__}")
    return meta, arrays


def check_config(cfg, max_params=LIMITS["max_params"], vocab_size=None):
    """Refuse a config of wrong types or ranges, or whose model would exceed ``max_params`` parameters
    (counted from the config alone, for ``vocab_size`` symbols: nothing is allocated)."""
    if not isinstance(cfg, dict):
        raise CheckpointError(f"'config' must be a dict, got {type(cfg).__name__}")
    missing = sorted((set(INT_KEYS) | set(REAL_KEYS) | {"norm", "text"}) - set(cfg))
    if missing:
        raise CheckpointError(f"'config' lacks {missing}")
    for key, least in INT_KEYS.items():
        if not _is_int(cfg[key]) or cfg[key] < least:
            raise CheckpointError(f"config {key!r} must be an integer >= {least}, got {cfg[key]!r:.60}")
    for key in REAL_KEYS:
        if not _is_real(cfg[key]) or cfg[key] < 0:
            raise CheckpointError(f"config {key!r} must be a finite number >= 0, got {cfg[key]!r:.60}")
    for key, choices in (("norm", NORMS), ("placement", PLACEMENTS), ("qk_norm", QK_NORMS), ("dtype", DTYPES)):
        if cfg.get(key, choices[0] if key != "norm" else None) not in choices:   # (older checkpoints: pre, none)
            raise CheckpointError(f"config {key!r} must be one of {', '.join(map(repr, choices))}, got "
                                  f"{cfg[key]!r:.60}")
    if cfg["text"] is not None and not isinstance(cfg["text"], str):
        raise CheckpointError(f"config 'text' must be a file name or null, got {cfg['text']!r:.60}")
    if cfg["d_model"] % cfg["n_heads"] or (cfg["d_model"] // cfg["n_heads"]) % 2:
        raise CheckpointError(f"config 'd_model' ({cfg['d_model']}) must be 'n_heads' ({cfg['n_heads']}) times an "
                              "even head size")
    if vocab_size is not None:
        count = model_config(cfg, vocab_size).num_parameters()
        if count > max_params:
            raise CheckpointError(f"the config's model has {count:,} parameters, more than the limit of "
                                  f"{max_params:,} (--max-params)")


def _check_numbers(value, what, length=None):
    if not isinstance(value, list) or not all(_is_real(v) for v in value) or length not in (None, len(value)):
        raise CheckpointError(f"{what} must be a list of{'' if length is None else f' {length}'} finite numbers")


def check_checkpoint(meta, arrays, vocab_size, max_params=LIMITS["max_params"]):
    """Refuse a checkpoint unless every field has the type and shape the run needs: the config (and its
    model's size), step, history, RNG state, the model's arrays, AdamW's state and the schedule's."""
    check_config(meta.get("config"), max_params, vocab_size)
    cfg, step = meta["config"], meta.get("step")
    if not _is_int(step) or not 0 <= step <= cfg["steps"]:
        raise CheckpointError(f"'step' must be an integer from 0 to the config's steps ({cfg['steps']}), got "
                              f"{step!r:.60}")
    history = meta.get("history")
    if not isinstance(history, dict) or not isinstance(history.get("evals"), list) \
            or not all(isinstance(e, dict) for e in history["evals"]):
        raise CheckpointError("'history' must be a dict with 'loss' and 'evals' (a list of dicts)")
    _check_numbers(history.get("loss"), "history 'loss'", step)
    rng = meta.get("rng")
    try:
        if not isinstance(rng, list) or not all(_is_int(b) and 0 <= b < 256 for b in rng):
            raise TypeError("expected a list of bytes")
        mg.Generator().set_state(mg.tensor(np.array(rng, dtype=np.uint8)))  # a throwaway: restore sets the real one
    except (TypeError, RuntimeError) as err:
        raise CheckpointError(f"'rng' is not a generator state ({err})") from None
    shapes = model_config(cfg, vocab_size).parameter_shapes()
    model_keys = {k[len("model/"):] for k in arrays if k.startswith("model/")}
    if model_keys != set(shapes):
        missing, unexpected = sorted(set(shapes) - model_keys)[:5], sorted(model_keys - set(shapes))[:5]
        raise CheckpointError(f"the model arrays do not match the config's model: missing {missing}, "
                              f"unexpected {unexpected}")
    for name, shape in shapes.items():
        array = arrays["model/" + name]
        if array.shape != shape or array.dtype.kind != "f":
            raise CheckpointError(f"model array {name!r} has shape {list(array.shape)} and dtype {array.dtype}, "
                                  f"expected shape {list(shape)} of floats")
    optimizer = _unpack(meta.get("optimizer"), arrays, "optimizer")
    matrices_then_vectors = sorted(shapes.values(), key=lambda shape: len(shape) < 2)  # the Trainer's groups
    check_adamw_state(optimizer, matrices_then_vectors)
    scheduler = _unpack(meta.get("scheduler"), arrays, "scheduler")
    if not isinstance(scheduler, dict) or not _is_int(scheduler.get("last_epoch")):
        raise CheckpointError("'scheduler' must be a LambdaLR state_dict with an integer 'last_epoch'")
    for key in ("base_lrs", "_last_lr"):
        _check_numbers(scheduler.get(key), f"scheduler {key!r}", 2)
    return optimizer, scheduler


def check_adamw_state(state_dict, param_shapes):
    """AdamW's state_dict for the Trainer's two groups (matrices, then vectors; ``param_shapes`` in that
    order): every started parameter has a numeric 'step' and moments of its parameter's shape."""
    groups = state_dict.get("param_groups") if isinstance(state_dict, dict) else None
    if not isinstance(groups, list) or len(groups) != 2 or not all(isinstance(g, dict) for g in groups):
        raise CheckpointError("'optimizer' must be an AdamW state_dict with two parameter groups")
    indices = [i for g in groups for i in (g.get("params") if isinstance(g.get("params"), list) else [None])]
    if indices != list(range(len(param_shapes))):
        raise CheckpointError(f"the optimizer's groups list the parameters {indices[:8]}..., expected 0 to "
                              f"{len(param_shapes) - 1} in order")
    state = state_dict.get("state")
    if not isinstance(state, dict) or not set(state) <= set(indices):
        raise CheckpointError("the optimizer's 'state' must map parameter indices to their state")
    for index, entry in state.items():
        step = entry.get("step") if isinstance(entry, dict) else entry
        if isinstance(step, np.ndarray) and step.shape == () and step.dtype.kind in "iuf":
            step = step.item()   # the 0-d tensor PyTorch's format keeps
        if not _is_real(step) or step < 0:
            raise CheckpointError(f"optimizer state {index} must hold a numeric 'step' >= 0, got {step!r:.60}")
        for name in ("exp_avg", "exp_avg_sq"):
            moment = entry.get(name)
            if not isinstance(moment, np.ndarray) or moment.shape != param_shapes[index] or moment.dtype.kind != "f":
                raise CheckpointError(f"optimizer state {index} {name!r} must be a float array of shape "
                                      f"{list(param_shapes[index])}, got {_describe(moment)}")


def _describe(value):
    return f"shape {list(value.shape)} of {value.dtype}" if isinstance(value, np.ndarray) else type(value).__name__


def _pack(obj, arrays, path):
    """A JSON-able skeleton of ``obj`` (an optimizer or scheduler state_dict); its arrays and tensors move
    into ``arrays`` under ``path``. Dicts become key/value pairs so integer keys survive."""
    if isinstance(obj, dict):
        return {"dict": [[k, _pack(v, arrays, f"{path}/{k}")] for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        return [_pack(v, arrays, f"{path}/{i}") for i, v in enumerate(obj)]
    if isinstance(obj, np.generic):
        return obj.item()
    if hasattr(obj, "shape"):
        arrays[path] = np.array(obj)
        return {"array": path}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise TypeError(f"cannot store a {type(obj).__name__} in a checkpoint (at {path})")


def _unpack(skeleton, arrays, path):
    """The plain object (ndarrays for arrays) a ``_pack`` skeleton describes; refuses malformed skeletons."""
    if isinstance(skeleton, list):
        return [_unpack(v, arrays, f"{path}/{i}") for i, v in enumerate(skeleton)]
    if isinstance(skeleton, dict) and set(skeleton) == {"dict"} and isinstance(skeleton["dict"], list):
        pairs = skeleton["dict"]
        if not all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], (str, int)) for p in pairs):
            raise CheckpointError(f"{path}: malformed dict entries")
        return {k: _unpack(v, arrays, f"{path}/{k}") for k, v in pairs}
    if isinstance(skeleton, dict):
        name = skeleton.get("array")
        if not isinstance(name, str) or name not in arrays:
            raise CheckpointError(f"{path}: refers to the array {name!r:.60}, which the checkpoint does not hold")
        return arrays[name]
    return skeleton


def save_checkpoint(path, trainer):
    """Model, optimizer and schedule state, step, history, minigrad's RNG state and the run's config,
    in one ``.npz`` of plain arrays (the non-array parts as a JSON string)."""
    arrays = {f"model/{k}": np.array(v) for k, v in trainer.model.state_dict().items()}
    meta = {"step": trainer.step, "config": trainer.cfg, "history": trainer.history,
            "optimizer": _pack(trainer.optimizer.state_dict(), arrays, "optimizer"),
            "scheduler": _pack(trainer.scheduler.state_dict(), arrays, "scheduler"),
            "rng": mg.get_rng_state().tolist()}          # PyTorch's 5056 state bytes
    tmp = path + ".tmp.npz"
    np.savez(tmp, meta=np.array(json.dumps(meta)), **arrays)
    os.replace(tmp, path)   # a crash while writing never leaves a half-written checkpoint


def restore(trainer, meta, arrays):
    """Put a trainer back into the state ``save_checkpoint`` recorded, after ``check_checkpoint`` has
    vetted every field: a refused checkpoint leaves the trainer as it was."""
    optimizer, scheduler = check_checkpoint(meta, arrays, trainer.model.cfg.vocab_size)
    if meta["config"] != trainer.cfg:
        raise CheckpointError("the checkpoint's config differs from the trainer's")
    lib = trainer.lib
    trainer.model.load_state_dict({k[len("model/"):]: lib.from_numpy(v.copy()) for k, v in arrays.items()
                                   if k.startswith("model/")})
    trainer.optimizer.load_state_dict(optimizer)
    trainer.scheduler.load_state_dict(scheduler)
    trainer.step, trainer.history = meta["step"], meta["history"]
    mg.set_rng_state(mg.tensor(np.array(meta["rng"], dtype=np.uint8)))


# --------------------------------------------------------------------------- progress and plots
class _LineProgress:
    """The progress bar without tqdm: one line every few seconds."""

    def __init__(self, total, initial):
        self.total, self.n, self.last = total, initial, 0.0

    def set_postfix_str(self, text):
        self.text = text

    def update(self, n):
        self.n += n
        now = time.perf_counter()
        if now - self.last > 5 or self.n == self.total:
            self.last = now
            print(f"step {self.n}/{self.total} {self.text}", flush=True)

    def write(self, text):
        print(text, flush=True)

    def close(self):
        pass


def progress_bar(total, initial):
    try:
        from tqdm import tqdm
    except ImportError:
        return _LineProgress(total, initial)
    return tqdm(total=total, initial=initial, unit="step", dynamic_ncols=True, mininterval=0.5)


def _duration(seconds):
    m, s = divmod(int(round(seconds)), 60)
    return f"{m}m{s:02d}s"


def plot_history(path, history, metric, title):
    """Training loss per step and the evaluations, as a PNG (skipped without matplotlib)."""
    return plot_histories(path, {"": history}, metric, title)


def plot_histories(path, histories, metric, title):
    """The training loss per step and the evaluations of one or more runs (``{label: history}``) in one PNG;
    returns False without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(7, 4))
    ax2 = ax.twinx() if metric != "val_loss" else None
    for i, (label, history) in enumerate(histories.items()):
        named = f" ({label})" if label else ""
        loss, evals = np.array(history["loss"]), history["evals"]
        ax.plot(np.arange(1, len(loss) + 1), loss, lw=0.6, alpha=0.6, color=f"C{2 * i}", label="train loss" + named)
        steps, values = [e["step"] for e in evals], [e[metric] for e in evals]
        if ax2 is None:
            ax.plot(steps, values, "o-", color=f"C{2 * i + 1}", label="validation loss" + named)
        else:
            ax2.plot(steps, values, "o-", color=f"C{2 * i + 1}", label=metric + named)
    if ax2 is not None:
        ax2.set_ylabel(metric)
        ax2.set_ylim(0, 1.02)
        ax2.legend(loc="center right")
    ax.set(xlabel="step", ylabel="loss (nats)", yscale="log", title=title)
    ax.legend(loc="upper right" if ax2 is None else "lower left")   # (the accuracy climbs to the upper right)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


# --------------------------------------------------------------------------- command line
def build_parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="Task defaults: " + "; ".join(
                                    f"{task}: " + ", ".join(f"{k}={v}" for k, v in d.items())
                                    for task, d in DEFAULTS.items()))
    arg = p.add_argument
    arg("--text", metavar="FILE", nargs="?", const=shipped_text(),
        help="train a character-level language model on this text file (.gz, .xz too); without FILE, on the "
             "shipped tinyshakespeare (examples/data/tinyshakespeare.txt.gz)")
    arg("--steps", type=int, help="total optimization steps (the cosine schedule ends here)")
    arg("--batch-size", type=int)
    arg("--seq-len", type=int, help="tokens per sequence (sort: seq_len/2 digits)")
    arg("--d-model", type=int)
    arg("--n-layers", type=int)
    arg("--n-heads", type=int)
    arg("--lr", type=float, help="peak learning rate")
    arg("--norm", choices=NORMS, help="the norm of every block (the registry's Transformer norms, or none)")
    arg("--placement", choices=PLACEMENTS, help="pre-norm (default), post-norm, Peri-LN or DeepNorm")
    arg("--qk-norm", choices=QK_NORMS, help="RMSNorm of queries and keys: per head, over the model dim, or none")
    arg("--dtype", choices=DTYPES, help="float32 (default), or bfloat16 under CPU autocast (float32 master weights)")
    arg("--seed", type=int)
    arg("--warmup", type=int, help="linear warmup steps")
    arg("--weight-decay", type=float)
    arg("--grad-clip", type=float, help="max gradient norm")
    arg("--eval-every", type=int, help="steps between evaluations (0: only at the end)")
    arg("--out", metavar="DIR",
        help="where the loss curve, history and checkpoints go (default: runs/tiny_transformer/<task>-<norm>"
             "[-<settings that differ from the defaults>])")
    arg("--save-every", type=int, default=0, help="also keep checkpoint_<step>.npz every this many steps")
    arg("--resume", metavar="CHECKPOINT", help="continue the run saved in this .npz")
    arg("--max-checkpoint-bytes", type=int, default=LIMITS["max_checkpoint_bytes"], metavar="N",
        help="refuse a --resume checkpoint larger than this, on disk or unpacked (default: %(default)s)")
    arg("--max-params", type=int, default=LIMITS["max_params"], metavar="N",
        help="refuse a model (given or resumed) with more parameters than this (default: %(default)s)")
    arg("--max-text-bytes", type=int, default=LIMITS["max_text_bytes"], metavar="N",
        help="refuse a --text file larger than this (default: %(default)s)")
    arg("--ddp", action="store_true",
        help="data-parallel over the processes of mpiexec -n N (DistributedDataParallel; needs mpi4py)")
    arg("--sample", type=int, default=0, metavar="N",
        help="after training, answer N new prompts (sort) or write N characters (text)")
    return p


def resolve_config(args):
    """The run's settings: the task defaults, overridden by the checkpoint when resuming, overridden by
    the options given. Resuming with different data, model or optimizer settings is refused, and so is
    a checkpoint that is not a regular file within ``--max-checkpoint-bytes`` or whose config is malformed
    (checked before anything is built from it)."""
    given = {k: v for k, v in vars(args).items() if v is not None and k != "ddp"}
    cfg = {**DEFAULTS["common"], **DEFAULTS["text" if args.text else "sort"], "text": args.text}
    meta = arrays = None
    if args.resume:
        meta, arrays = read_checkpoint(args.resume, args.max_checkpoint_bytes)
        check_config(meta.get("config"))
        saved = meta["config"]
        for key in RUN_KEYS:
            was = saved.get(key, cfg[key])       # (a key older checkpoints lack: its default)
            if key in given and given[key] != was:
                raise SystemExit(f"--{key.replace('_', '-')} {given[key]} differs from the checkpoint's "
                                 f"{was}: a resumed run keeps the data, model and optimizer settings")
        cfg = dict(saved)
    cfg.update({k: given[k] for k in cfg if k in given})
    return cfg, meta, arrays


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        cfg, meta, arrays = resolve_config(args)
        check_config(cfg)
        task = make_task(cfg, args.max_text_bytes)
        check_config(cfg, args.max_params, len(task.vocab))   # the model's size, before it is built
        if meta is not None:
            check_checkpoint(meta, arrays, len(task.vocab), args.max_params)
    except CheckpointError as err:
        raise SystemExit(f"{'--resume ' + args.resume if args.resume else 'config'}: {err}") from None
    rank, world_size, wrap = 0, 1, None
    if args.ddp:
        import minigrad.distributed as dist
        from minigrad.nn.parallel import DistributedDataParallel
        if not dist.is_initialized():
            dist.init_process_group(backend="mpi")
        rank, world_size, wrap = dist.get_rank(), dist.get_world_size(), DistributedDataParallel
        if cfg["batch_size"] % world_size:
            raise SystemExit(f"--ddp: --batch-size {cfg['batch_size']} must be a multiple of the "
                             f"{world_size} processes")
    if rank:
        return _follow(args, cfg, meta, arrays, task, rank, world_size, wrap)
    args.out = args.out or run_dir(cfg)
    model = make_model(cfg, len(task.vocab))
    trainer = Trainer(mg, model, task, cfg, rank, world_size, wrap)
    if meta is not None:
        restore(trainer, meta, arrays)
    os.makedirs(args.out, exist_ok=True)
    n_params = sum(p.numel() for p in model.parameters())
    what = (f"sort {cfg['seq_len'] // 2} digits" if task.name == "sort"
            else f"text {cfg['text']} ({len(task.vocab)} symbols)")
    print(("" if world_size == 1 else f"{world_size} processes (DistributedDataParallel) | ") +
          f"{what} | {n_params:,} parameters ({cfg['n_layers']} layers, d_model {cfg['d_model']}, "
          f"{cfg['n_heads']} heads, {cfg['norm']}, {cfg.get('placement', 'pre')}-norm, QK-norm "
          f"{cfg.get('qk_norm', 'none')}) | {cfg.get('dtype', 'float32')}"
          f"{' autocast' if cfg.get('dtype', 'float32') != 'float32' else ''} | {cfg['steps']} steps of {cfg['batch_size']}x{cfg['seq_len']} "
          f"tokens" + (f" | resumed at step {trainer.step}" if meta is not None else ""), flush=True)

    start, first = time.perf_counter(), trainer.step
    bar = progress_bar(cfg["steps"], trainer.step)
    while trainer.step < cfg["steps"]:
        loss = trainer.train_step()
        tokens_per_s = (trainer.step - first) * cfg["batch_size"] * cfg["seq_len"] / (time.perf_counter() - start)
        bar.set_postfix_str(f"loss {loss:.4f}, {tokens_per_s:,.0f} tok/s")
        bar.update(1)
        if trainer.eval_due():
            metrics = trainer.evaluate()
            bar.write(f"step {trainer.step}: " + ", ".join(f"{k} {v:.4f}" for k, v in metrics.items()))
        if args.save_every and trainer.step % args.save_every == 0:
            save_checkpoint(os.path.join(args.out, f"checkpoint_{trainer.step:06d}.npz"), trainer)
    bar.close()
    wall = time.perf_counter() - start

    if not trainer.history["evals"] or trainer.history["evals"][-1]["step"] != trainer.step:
        trainer.evaluate()
    final = trainer.history["evals"][-1]
    save_checkpoint(os.path.join(args.out, "checkpoint.npz"), trainer)
    with open(os.path.join(args.out, "history.json"), "w") as f:
        json.dump({"config": cfg, **trainer.history, "wall_time_s": round(wall, 1)}, f)
    plotted = plot_history(os.path.join(args.out, "loss.png"), trainer.history, task.metric,
                           f"{what}, {cfg['norm']}, {cfg.get('dtype', 'float32')}")

    if args.sample:
        with trainer.autocast():
            print("\n".join(task.sample(mg, model, args.sample, seed=cfg["seed"] + trainer.step)))
    if task.name == "sort":
        verdict = "reached" if final["accuracy"] >= TARGET_ACCURACY else (
            "MISSED; a float32 run's result depends on the seed, the thread count and the CPU: the default recipe "
            "measured 99.2-100% with either norm over 17 runs, docs/results/transformer.md")
        result = (f"exact match {final['accuracy']:.1%} on {len(task.eval_x)} held-out strings "
                  f"(target >= {TARGET_ACCURACY:.0%}: {verdict})")
    else:
        result = f"validation loss {final['val_loss']:.4f} nats/char"
    print(f"done: {result} | train loss {trainer.history['loss'][-1]:.4f} | {trainer.step - first} steps in "
          f"{_duration(wall)} | saved {args.out}/checkpoint.npz" + (", loss.png" if plotted else ""))
    return {"config": cfg, "history": trainer.history, "final": final, "wall_time": wall}


def _follow(args, cfg, meta, arrays, task, rank, world_size, wrap):
    """A rank other than 0 under --ddp: the same training steps, silently (rank 0 evaluates and saves)."""
    trainer = Trainer(mg, make_model(cfg, len(task.vocab)), task, cfg, rank, world_size, wrap)
    if meta is not None:
        restore(trainer, meta, arrays)
    while trainer.step < cfg["steps"]:
        trainer.train_step()
    return None


if __name__ == "__main__":
    main(sys.argv[1:])
