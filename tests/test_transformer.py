"""The tiny LLaMA-style Transformer (examples/): parity with its PyTorch twin, resuming, the command line.

Parity: the same weights loaded through ``state_dict`` in float64 give the same logits, loss, every
parameter's gradient and five AdamW steps (warmup/cosine schedule, active gradient clipping) as
PyTorch, to 1e-9; converted with ``model.bfloat16()``, loss and gradients as close to the float64 answer as
PyTorch's bfloat16 twin's. Resuming from a checkpoint repeats the uninterrupted run's losses exactly.
"""
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip

ROOT = Path(__file__).resolve().parents[1]
for sub in ("examples", "bench"):
    if str(ROOT / sub) not in sys.path:
        sys.path.insert(0, str(ROOT / sub))

import tiny_transformer  # noqa: E402
from llama import IGNORE_INDEX, Llama, LlamaConfig, Rotary, lm_loss, rope_tables  # noqa: E402
from lm_tasks import SHIPPED_TEXT, SortTask, TextTask, read_text, shipped_text  # noqa: E402

TINY = ["--d-model", "16", "--n-layers", "2", "--n-heads", "2", "--batch-size", "4", "--eval-every", "0"]


def torch_twin(mg_model):
    torch_or_skip()
    import torch_llama
    return torch_llama.twin_of(mg_model)


def tiny_model(norm, dtype=mg.float64, seed=0):
    mg.manual_seed(seed)
    model = Llama(LlamaConfig(vocab_size=11, seq_len=8, d_model=16, n_layers=2, n_heads=2, norm=norm))
    return model.to(dtype)


def perturb_norms(model, seed=1):
    """Move the norm gains (and LayerNorm biases) off their initial ones and zeros, so parity sees them."""
    rng = np.random.default_rng(seed)
    for name, p in model.named_parameters():
        if p.ndim == 1:
            p.data[...] = p.data + 0.1 * rng.standard_normal(p.shape)


# --------------------------------------------------------------------------- parity with PyTorch
def test_rotary_backward_matches_finite_differences():
    cos, sin = rope_tables(5, 6)
    x = mg.tensor(np.random.default_rng(0).standard_normal((2, 3, 5, 6)), requires_grad=True)
    assert mg.gradcheck(lambda x: Rotary.apply(x, cos, sin), (x,))


@pytest.mark.parametrize("norm", ["rmsnorm", "layernorm"])
def test_logits_loss_and_every_gradient_match_pytorch(norm):
    torch = torch_or_skip()
    model = tiny_model(norm)
    perturb_norms(model)
    twin = torch_twin(model)
    assert list(twin.state_dict()) == list(model.state_dict())
    rng = np.random.default_rng(2)
    x = rng.integers(0, 11, size=(3, 8))
    y = rng.integers(0, 11, size=(3, 8))
    y[:, :3] = IGNORE_INDEX                                       # some targets do not count

    logits = model(mg.tensor(x))
    logits_t = twin(torch.from_numpy(x))
    np.testing.assert_allclose(logits.detach().numpy(), logits_t.detach().numpy(), rtol=1e-9, atol=1e-9)
    loss = lm_loss(mg.nn.functional, logits, mg.tensor(y))
    loss_t = lm_loss(torch.nn.functional, logits_t, torch.from_numpy(y))
    assert abs(loss.item() - loss_t.item()) < 1e-9
    loss.backward()
    loss_t.backward()
    torch_grads = {name: p.grad.numpy() for name, p in twin.named_parameters()}
    for name, p in model.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), torch_grads[name], rtol=1e-9, atol=1e-9, err_msg=name)



@pytest.mark.parametrize("norm", ["rmsnorm", "layernorm"])
def test_a_bfloat16_model_computes_as_pytorch_bfloat16_does(norm):
    """``model.bfloat16()`` and PyTorch's twin converted alike: each library's loss and every gradient are held to
    the float64 answer, minigrad's no further from it than twice PyTorch's own bfloat16 error plus 2% of each
    gradient's largest value (its gradients lose about 1-3% to bfloat16 rounding, as PyTorch's do)."""
    torch = torch_or_skip()
    model = tiny_model(norm, dtype=mg.float32)
    perturb_norms(model)
    exact = torch_twin(model.to(mg.float64))
    twin = torch_twin(model.to(mg.float32))
    assert model.bfloat16() is model and {p.dtype for p in model.parameters()} == {mg.bfloat16}
    twin.bfloat16()
    rng = np.random.default_rng(2)
    x, y = rng.integers(0, 11, size=(3, 8)), rng.integers(0, 11, size=(3, 8))
    y[:, :3] = IGNORE_INDEX
    results = {}
    for who, lib, m in (("minigrad", mg, model), ("torch", torch, twin), ("exact", torch, exact)):
        tensor = mg.tensor if lib is mg else torch.from_numpy
        logits = m(tensor(x))
        loss = lm_loss(lib.nn.functional, logits, tensor(y))
        loss.backward()
        results[who] = (logits.dtype, float(loss.float().item()),
                        {n: np.asarray(p.grad.float().numpy(), np.float64) for n, p in m.named_parameters()})
    assert results["minigrad"][0] == mg.bfloat16 and results["torch"][0] == torch.bfloat16
    exact_loss, ulp = results["exact"][1], 2.0 ** -7 * abs(results["exact"][1])
    assert abs(results["minigrad"][1] - exact_loss) <= 2 * abs(results["torch"][1] - exact_loss) + 2 * ulp
    for name, want in results["exact"][2].items():
        scale = np.abs(want).max()
        ours = np.abs(results["minigrad"][2][name] - want).max()
        theirs = np.abs(results["torch"][2][name] - want).max()
        assert ours <= 2 * theirs + 0.02 * scale, f"{name}: minigrad off by {ours:.3g}, PyTorch by {theirs:.3g}"

def test_five_adamw_steps_with_schedule_and_clipping_match_pytorch():
    torch = torch_or_skip()
    cfg = dict(tiny_transformer.DEFAULTS["common"], steps=5, warmup=2, lr=1e-2, batch_size=4, seq_len=8,
               grad_clip=0.05, eval_every=0)
    task = SortTask(8, seed=0)
    model = tiny_model("rmsnorm")
    perturb_norms(model)
    ours = tiny_transformer.Trainer(mg, model, task, cfg)
    theirs = tiny_transformer.Trainer(torch, torch_twin(model), task, cfg)
    for step in range(5):
        assert abs(ours.train_step() - theirs.train_step()) < 1e-9, f"loss at step {step}"
        assert abs(ours.grad_norm - theirs.grad_norm) < 1e-9
        assert ours.grad_norm > cfg["grad_clip"], "the clipping should be active in this test"
        np.testing.assert_allclose(ours.scheduler.get_last_lr(), theirs.scheduler.get_last_lr(), rtol=1e-15)
    torch_params = dict(theirs.model.named_parameters())
    for name, p in model.named_parameters():
        np.testing.assert_allclose(p.detach().numpy(), torch_params[name].detach().numpy(), rtol=1e-9, atol=1e-9, err_msg=name)


# --------------------------------------------------------------------------- tasks
def test_sort_task_batches_are_sorted_answers_and_never_held_out():
    task = SortTask(12, seed=3)
    x, y = task.batch(7, 50)
    n = 6
    assert x.shape == y.shape == (50, 12)
    assert (x[:, n] == task.SEP).all() and (y[:, :n] == IGNORE_INDEX).all()
    np.testing.assert_array_equal(y[:, n:], np.sort(x[:, :n], axis=1))         # the answer is the sorted prompt
    np.testing.assert_array_equal(x[:, n + 1:], y[:, n:-1])                      # inputs are targets shifted
    heldout = {tuple(p) for p in task.eval_x[:, :n]}
    assert not any(tuple(p) in heldout for s in range(20) for p in task.batch(s, 50)[0][:, :n])
    np.testing.assert_array_equal(task.batch(7, 50)[0], x)                     # a step's batch is fixed


def test_text_task_splits_and_windows(tmp_path):
    path = tmp_path / "t.txt"
    text = "".join(np.random.default_rng(0).choice(list("abcdé \n"), size=3000))
    path.write_text(text, encoding="utf-8")
    task = TextTask(str(path), seq_len=10, seed=0)
    assert task.vocab == "".join(sorted(set(text)))
    decoded = "".join(task.vocab[i] for i in np.concatenate([task.train, task.val]))
    assert decoded == text and len(task.val) == 300
    x, y = task.batch(0, 5)
    np.testing.assert_array_equal(x[:, 1:], y[:, :-1])


# --------------------------------------------------------------------------- command line
def run_cli(*args):
    return tiny_transformer.main([*TINY, *map(str, args)])


def test_resume_repeats_the_uninterrupted_losses_exactly(tmp_path):
    full = run_cli("--steps", 6, "--save-every", 3, "--seq-len", 8, "--out", tmp_path / "a")
    resumed = run_cli("--resume", tmp_path / "a" / "checkpoint_000003.npz", "--out", tmp_path / "b")
    assert len(full["history"]["loss"]) == 6
    assert resumed["history"]["loss"] == full["history"]["loss"]
    assert resumed["final"] == full["final"]
    with np.load(tmp_path / "a" / "checkpoint.npz", allow_pickle=False) as a, \
            np.load(tmp_path / "b" / "checkpoint.npz", allow_pickle=False) as b:
        for key in a.files:
            if key != "meta":
                np.testing.assert_array_equal(a[key], b[key], err_msg=key)


def test_resume_refuses_changed_settings(tmp_path):
    run_cli("--steps", 1, "--seq-len", 8, "--out", tmp_path)
    with pytest.raises(SystemExit, match="d-model 32 differs"):
        tiny_transformer.main(["--resume", str(tmp_path / "checkpoint.npz"), "--d-model", "32"])


def test_sort_run_writes_curve_history_and_samples(tmp_path, capsys):
    result = run_cli("--steps", 4, "--seq-len", 8, "--sample", 3, "--norm", "layernorm", "--out", tmp_path)
    out = capsys.readouterr().out
    assert "exact match" in out and out.count(" = ") == 3                    # three sampled answers
    assert 0.0 <= result["final"]["accuracy"] <= 1.0
    history = json.loads((tmp_path / "history.json").read_text())
    assert history["config"]["norm"] == "layernorm" and len(history["loss"]) == 4
    pytest.importorskip("matplotlib", reason="matplotlib not installed: no loss curve")
    assert (tmp_path / "loss.png").stat().st_size > 0


def test_text_run_reports_validation_loss_and_samples(tmp_path, capsys):
    path = tmp_path / "t.txt"
    path.write_text("to be or not to be, that is the question.\n" * 40, encoding="utf-8")
    result = run_cli("--text", path, "--steps", 3, "--seq-len", 16, "--sample", 25, "--out", tmp_path / "run")
    out = capsys.readouterr().out
    assert "validation loss" in out
    vocab = len(set(path.read_text()))
    assert abs(result["final"]["val_loss"] - math.log(vocab)) < 0.5          # near chance after 3 steps


def test_tinyshakespeare_learns_characters(tmp_path):
    path = shipped_text()          # the copy in examples/data/ (or $MINIGRAD_DATA_DIR's): never skipped
    result = run_cli("--text", path, "--steps", 30, "--seq-len", 32, "--batch-size", 16, "--lr", 1e-2,
                     "--warmup", 5, "--out", tmp_path)
    assert len(TextTask(str(path), 32, 0).vocab) == 65
    assert result["final"]["val_loss"] < math.log(65) - 1.0                  # well below chance (4.17 nats)


# --------------------------------------------------------------------------- data in the clone, run folders
def test_shipped_tinyshakespeare_is_the_whole_text():
    """The gzipped copy in examples/data/ unpacks to tinyshakespeare: 1,115,394 characters of 65 symbols,
    with its first line and its known SHA-256 (of the published file)."""
    import hashlib
    text = read_text(SHIPPED_TEXT)
    assert len(text) == 1_115_394 and len(set(text)) == 65
    assert text.startswith("First Citizen:\nBefore we proceed any further, hear me speak.")
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == \
        "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
    assert SHIPPED_TEXT.stat().st_size < 500_000


def test_text_alone_means_the_shipped_copy(monkeypatch):
    monkeypatch.delenv("MINIGRAD_DATA_DIR", raising=False)
    args = tiny_transformer.build_parser().parse_args(["--text", "--steps", "3"])
    assert args.text == str(SHIPPED_TEXT) and args.steps == 3


def test_compressed_text_reads_like_the_plain_file(tmp_path):
    import gzip
    import lzma
    text = "".join(np.random.default_rng(1).choice(list("xyzé \n"), size=2000))
    (tmp_path / "t.txt").write_text(text, encoding="utf-8")
    with gzip.open(tmp_path / "t.txt.gz", "wt", encoding="utf-8") as f:
        f.write(text)
    with lzma.open(tmp_path / "t.txt.xz", "wt", encoding="utf-8") as f:
        f.write(text)
    plain = TextTask(str(tmp_path / "t.txt"), seq_len=10, seed=0)
    for name in ("t.txt.gz", "t.txt.xz"):
        packed = TextTask(str(tmp_path / name), seq_len=10, seed=0)
        assert packed.vocab == plain.vocab
        np.testing.assert_array_equal(packed.train, plain.train)
        np.testing.assert_array_equal(packed.val, plain.val)


def test_a_compressed_text_that_unpacks_past_the_limit_is_refused(tmp_path):
    import gzip
    with gzip.open(tmp_path / "big.txt.gz", "wt", encoding="utf-8") as f:
        f.write("a" * 100_000)                     # about 100 bytes packed, 100,000 characters unpacked
    with pytest.raises(SystemExit, match="more than 50,000 characters"):
        run_cli("--text", tmp_path / "big.txt.gz", "--steps", 1, "--max-text-bytes", 50_000)


def test_each_configuration_has_its_own_run_folder(tmp_path, monkeypatch):
    """The default --out: runs/tiny_transformer/<task>-<norm>[-<changed settings>], relative to the working
    directory; a LayerNorm run leaves the RMSNorm run's checkpoint alone, and --resume without --out writes
    back into the folder of the run it resumes."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MINIGRAD_DATA_DIR", raising=False)
    parse = tiny_transformer.build_parser().parse_args
    folder = {}
    for argv in ([], ["--norm", "layernorm"], ["--text"], ["--steps", "200", "--d-model", "32", "--lr", "0.001"],
                 ["--dtype", "bfloat16"], ["--dtype", "float32"]):
        cfg, _, _ = tiny_transformer.resolve_config(parse(argv))
        folder[" ".join(argv)] = tiny_transformer.run_dir(cfg)
    assert folder == {"": "runs/tiny_transformer/sort-rmsnorm",
                      "--norm layernorm": "runs/tiny_transformer/sort-layernorm",
                      "--text": "runs/tiny_transformer/tinyshakespeare-rmsnorm",
                      "--steps 200 --d-model 32 --lr 0.001":
                          "runs/tiny_transformer/sort-rmsnorm-d_model32-lr0.001-steps200",
                      "--dtype bfloat16": "runs/tiny_transformer/sort-rmsnorm-bfloat16",
                      "--dtype float32": "runs/tiny_transformer/sort-rmsnorm"}

    run_cli("--steps", 2, "--seq-len", 8)     # TINY's --eval-every 0 is not part of the name: it changes no weight
    rms = tmp_path / "runs/tiny_transformer/sort-rmsnorm-batch_size4-d_model16-n_heads2-seq_len8-steps2"
    before = (rms / "checkpoint.npz").read_bytes()
    run_cli("--steps", 2, "--seq-len", 8, "--norm", "layernorm")
    assert (rms / "checkpoint.npz").read_bytes() == before
    assert (tmp_path / "runs/tiny_transformer/sort-layernorm-batch_size4-d_model16-n_heads2-seq_len8-steps2"
            / "checkpoint.npz").exists()
    result = tiny_transformer.main(["--resume", str(rms / "checkpoint.npz"), "--sample", "2"])
    assert result["config"]["norm"] == "rmsnorm"
    assert sorted(p.name for p in (tmp_path / "runs/tiny_transformer").iterdir()) == [
        "sort-layernorm-batch_size4-d_model16-n_heads2-seq_len8-steps2",
        "sort-rmsnorm-batch_size4-d_model16-n_heads2-seq_len8-steps2"]


# --------------------------------------------------------------------------- bfloat16 autocast
def bf16_trainer(lib, dtype, steps=3, seed=0):
    """A tiny model's Trainer with --dtype ``dtype``, for ``lib`` (PyTorch: the twin of the same weights)."""
    cfg = dict(tiny_transformer.DEFAULTS["common"], steps=steps, warmup=1, lr=1e-2, batch_size=8, seq_len=8,
               eval_every=0, dtype=dtype)
    model = tiny_model("rmsnorm", mg.float32, seed=seed)
    return tiny_transformer.Trainer(lib, model if lib is mg else torch_twin(model), SortTask(8, seed=0), cfg)


def test_bfloat16_autocast_runs_matrix_products_in_bfloat16_and_keeps_float32_master_weights(monkeypatch):
    """--dtype bfloat16: every Linear's output and the attention's are bfloat16 while training and evaluating,
    the loss is float32, and the parameters, their gradients and AdamW's moments stay float32."""
    import llama
    seen = {"attention": set(), "loss": set()}
    trainer = bf16_trainer(mg, "bfloat16")
    for name, module in trainer.model.named_modules():
        if isinstance(module, mg.nn.Linear):
            seen[name] = set()
            module.register_forward_hook(lambda m, inputs, out, name=name: seen[name].add(out.dtype))
    attention, loss_of = llama.F.scaled_dot_product_attention, tiny_transformer.lm_loss
    monkeypatch.setattr(llama.F, "scaled_dot_product_attention",
                        lambda *a, **k: _noted(seen["attention"], attention(*a, **k)))
    monkeypatch.setattr(tiny_transformer, "lm_loss", lambda *a: _noted(seen["loss"], loss_of(*a)))
    for _ in range(3):
        trainer.train_step()
    assert len(seen) == 2 + 2 * 7 + 1        # q, k, v, o, w1, w2, w3 per block, and the head
    assert all(dtypes == {mg.bfloat16} for name, dtypes in seen.items() if name != "loss"), seen
    assert seen["loss"] == {mg.float32}
    assert all(p.dtype == mg.float32 and p.grad.dtype == mg.float32 for p in trainer.model.parameters())
    moments = [state[k] for state in trainer.optimizer.state.values() for k in ("exp_avg", "exp_avg_sq")]
    assert len(moments) == 2 * len(list(trainer.model.parameters()))
    assert all(m.dtype == mg.float32 for m in moments)
    for dtypes in seen.values():
        dtypes.clear()
    trainer.evaluate()                       # the evaluation runs under the same autocast
    assert seen["head"] == seen["attention"] == {mg.bfloat16}
    assert not mg.is_autocast_enabled("cpu")  # and autocast is off again


def _noted(dtypes, tensor):
    dtypes.add(tensor.dtype)
    return tensor


def test_bfloat16_autocast_losses_follow_pytorch_autocast():
    """Three AdamW steps under CPU bfloat16 autocast: minigrad's losses are PyTorch's (same weights, batches
    and recipe) to 4e-4, while the float32 run's losses are more than 4e-4 away from them by the third step
    (so the comparison sees whether autocast ran). The gap between float32 and bfloat16 training this short
    depends on the weights: seed 2's (6e-5 from PyTorch's against 9e-4 for float32; over seeds 0-5 the float32
    run's distance ranged from 1.2e-4 to 9e-4, the bfloat16 run's from 4e-5 to 5e-4)."""
    torch = torch_or_skip()
    ours, theirs, plain = (bf16_trainer(lib, dtype, seed=2) for lib, dtype in
                           ((mg, "bfloat16"), (torch, "bfloat16"), (mg, "float32")))
    losses = {name: np.array([t.train_step() for _ in range(3)]) for name, t in
              (("ours", ours), ("theirs", theirs), ("plain", plain))}
    np.testing.assert_allclose(losses["ours"], losses["theirs"], rtol=0, atol=4e-4)
    assert abs(losses["plain"][-1] - losses["theirs"][-1]) > 4e-4


def test_bfloat16_run_keeps_float32_checkpoints_in_its_own_folder(tmp_path, monkeypatch):
    """A --dtype bfloat16 run writes runs/.../<task>-<norm>-...-bfloat16 (not the float32 run's folder), its
    checkpoint holds float32 weights and AdamW moments, and resuming it as float32 is refused."""
    monkeypatch.chdir(tmp_path)
    result = run_cli("--steps", 2, "--seq-len", 8, "--dtype", "bfloat16")
    assert result["config"]["dtype"] == "bfloat16" and len(result["history"]["loss"]) == 2
    (folder,) = (tmp_path / "runs/tiny_transformer").iterdir()
    assert folder.name == "sort-rmsnorm-bfloat16-batch_size4-d_model16-n_heads2-seq_len8-steps2"
    with np.load(folder / "checkpoint.npz", allow_pickle=False) as z:
        floats = [z[k].dtype for k in z.files if k.startswith(("model/", "optimizer/state")) and z[k].ndim]
    assert floats and all(dtype == np.float32 for dtype in floats)
    with pytest.raises(SystemExit, match="dtype float32 differs from the checkpoint's bfloat16"):
        tiny_transformer.main(["--resume", str(folder / "checkpoint.npz"), "--dtype", "float32"])


# --------------------------------------------------------------------------- norm placements and QK-norm
@pytest.mark.parametrize("qk_norm", ["none", "head", "model"])
@pytest.mark.parametrize("placement", ["pre", "post", "peri", "deepnorm"])
def test_placements_and_qk_norm_build_and_train(placement, qk_norm):
    """Every placement and QK-norm option: the parameters are the config's ``parameter_shapes`` in order, one
    backward reaches each of them, and post-norm and DeepNorm have no norm before the head."""
    cfg = LlamaConfig(vocab_size=11, seq_len=8, d_model=16, n_layers=2, n_heads=2, placement=placement,
                      qk_norm=qk_norm)
    model = Llama(cfg)
    assert [(n, tuple(p.shape)) for n, p in model.named_parameters()] == list(cfg.parameter_shapes().items())
    assert sum(p.numel() for p in model.parameters()) == cfg.num_parameters()
    assert isinstance(model.norm, mg.nn.Identity) == (placement in ("post", "deepnorm"))
    tokens = mg.tensor(np.random.default_rng(0).integers(0, 11, (2, 8)))
    lm_loss(mg.nn.functional, model(tokens), tokens).backward()
    assert all(p.grad is not None and np.abs(p.grad.numpy()).max() > 0 for p in model.parameters())


def test_deepnorm_scales_the_residual_and_the_initial_weights():
    """DeepNet's decoder-only rule for N layers: x = norm(alpha x + f(x)), alpha = (2N)^(1/4); v, o and the MLP
    matrices start beta = (8N)^(-1/4) times smaller than q and k (0.02)."""
    n = 3
    model = Llama(LlamaConfig(vocab_size=11, seq_len=8, d_model=64, n_layers=n, n_heads=4, placement="deepnorm"))
    assert all(math.isclose(block.alpha, (2 * n) ** 0.25) for block in model.blocks)
    beta = (8 * n) ** -0.25
    attn, mlp = model.blocks[0].attn, model.blocks[0].mlp
    for weight, std in ((attn.q_proj.weight, 0.02), (attn.k_proj.weight, 0.02), (attn.v_proj.weight, 0.02 * beta),
                        (attn.o_proj.weight, 0.02 * beta), (mlp.w1.weight, 0.02 * beta), (mlp.w2.weight, 0.02 * beta)):
        assert abs(weight.detach().numpy().std() / std - 1) < 0.1


@pytest.mark.parametrize("qk_norm", ["head", "model"])
def test_qk_norm_makes_attention_blind_to_the_scale_of_q_and_k(qk_norm):
    """RMSNorm on q and k removes their scale: multiplying q_proj and k_proj by 10 changes nothing (eps tiny),
    while without QK-norm it sharpens the attention and changes the output."""
    tokens = mg.tensor(np.random.default_rng(1).integers(0, 11, (2, 8)))

    def logits(qk, scale):
        mg.manual_seed(0)
        model = Llama(LlamaConfig(vocab_size=11, seq_len=8, d_model=16, n_layers=1, n_heads=2, qk_norm=qk,
                                  norm_eps=1e-12))     # (eps: the only scale the norms would see)
        model.to(mg.float64)
        with mg.no_grad():
            for proj in (model.blocks[0].attn.q_proj, model.blocks[0].attn.k_proj):
                proj.weight.mul_(scale)
            return model(tokens).numpy()
    np.testing.assert_allclose(logits(qk_norm, 10.0), logits(qk_norm, 1.0), rtol=1e-6, atol=1e-8)
    assert np.abs(logits("none", 10.0) - logits("none", 1.0)).max() > 1e-3
