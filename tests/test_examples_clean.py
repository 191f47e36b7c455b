"""Every example's documented command, with short settings, run from a temporary working directory: each writes
only under ``runs/<example>/<config>/`` there, and the repository's ``git status`` is unchanged afterwards (no
tracked file rewritten, no stray file left in the checkout)."""
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
TINY = ["--steps", "2", "--d-model", "16", "--n-layers", "1", "--n-heads", "2", "--batch-size", "4",
        "--eval-every", "0"]


def git_status():
    """``git status --porcelain`` of the repository (untracked files included), or a skip outside a checkout."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed: cannot compare the checkout's status")
    result = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                            capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip(f"{ROOT} is not a git checkout: {result.stderr.strip()}")
    return result.stdout


def run_example(script, *argv):
    """Run ``examples/<script>`` as ``python examples/<script> argv...`` would, in this process."""
    saved = sys.argv
    sys.argv = [str(EXAMPLES / script), *argv]
    try:
        runpy.run_path(str(EXAMPLES / script), run_name="__main__")
    finally:
        sys.argv = saved


@pytest.fixture
def elsewhere(tmp_path, monkeypatch):
    """A temporary working directory, the examples importable, and the checkout's status before."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(EXAMPLES))
    monkeypatch.delenv("MINIGRAD_DATA_DIR", raising=False)
    before = git_status()
    yield tmp_path
    assert git_status() == before, "an example changed the repository's checkout"


def folders(path):
    return sorted(p.name for p in path.iterdir()) if path.exists() else []


def test_tiny_transformer_commands(elsewhere):
    run_example("tiny_transformer.py", *TINY, "--seq-len", "8")
    run_example("tiny_transformer.py", *TINY, "--seq-len", "8", "--norm", "layernorm")
    run_example("tiny_transformer.py", *TINY, "--seq-len", "16", "--text")
    runs = elsewhere / "runs" / "tiny_transformer"
    config = "batch_size4-d_model16-n_heads2-n_layers1"
    assert folders(runs) == [f"sort-layernorm-{config}-seq_len8-steps2", f"sort-rmsnorm-{config}-seq_len8-steps2",
                             f"tinyshakespeare-rmsnorm-{config}-seq_len16-steps2"]
    rms = runs / f"sort-rmsnorm-{config}-seq_len8-steps2"
    assert folders(rms) == ["checkpoint.npz", "history.json"] + (["loss.png"] if _has("matplotlib") else [])
    run_example("tiny_transformer.py", "--resume", str(rms / "checkpoint.npz"), "--sample", "2")
    assert len(folders(runs)) == 3                   # resuming writes back into the run's own folder


def test_cnn_norms_writes_under_runs(elsewhere):
    pytest.importorskip("sklearn", reason="scikit-learn (the [examples] extra) not installed")
    run_example("cnn_norms.py", "--norms", "GroupNorm G=4", "--batch-sizes", "64", "--seeds", "1", "--epochs", "1")
    out = elsewhere / "runs" / "cnn_norms" / "seeds1-epochs1-b64-norms-GroupNormG4"
    assert "cnn_norms.json" in folders(out)
    with pytest.raises(SystemExit):                  # the committed results are the full study's alone
        run_example("cnn_norms.py", "--quick", "--write-results")


def test_teaching_examples(elsewhere):
    run_example("jacobians.py", "--out")
    if _has("matplotlib"):
        assert len(folders(elsewhere / "runs" / "jacobians")) >= 5      # one heat map per norm
    run_example("rmsnorm_by_hand.py")
    run_example("norm_hooks.py", "--norm", "layernorm")
    run_example("second_order.py", "--steps", "1", "--iters", "1")
    run_example("sync_batchnorm.py")
    assert folders(elsewhere) in ([], ["runs"])      # nothing beside runs/ in the working directory


def _has(module):
    try:
        __import__(module)
    except ImportError:
        return False
    return True
