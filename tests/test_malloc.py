"""minigrad/_malloc.py: glibc's thresholds are raised when minigrad is imported, unless declined."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mallopt is glibc's")
def test_malloc_setting_is_applied_and_can_be_declined():
    code = "import minigrad._malloc as m; print(m.keep_freed_memory())"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = lambda **extra: subprocess.run([sys.executable, "-c", code], env=dict(env, **extra),  # noqa: E731
                                         capture_output=True, text=True, check=True).stdout.strip()
    assert run() == "True"
    assert run(MINIGRAD_MALLOC="default") == "False"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mallopt is glibc's")
def test_fresh_arrays_reuse_freed_pages():
    """Rounds of eight 3 MB arrays, freed together at the end of each round (as a training step frees its
    activations), fault their pages in once, not in every round."""
    code = """if True:
        import resource, numpy as np, minigrad
        def faults():
            return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        def round():
            return [np.ones(3 * 2 ** 18, dtype=np.float32) for _ in range(8)]
        for _ in range(3):
            round()
        before = faults()
        for _ in range(20):
            round()
        print(faults() - before)"""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    faults = {setting: int(subprocess.run([sys.executable, "-c", code], env=dict(env, MINIGRAD_MALLOC=setting),
                                          capture_output=True, text=True, check=True).stdout)
              for setting in ("", "default")}
    assert faults[""] < 100 < faults["default"], faults   # about 0 against 20 x 8 x 768 pages
