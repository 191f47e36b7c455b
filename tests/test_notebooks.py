"""The notebooks of docs/notebooks: stored without outputs (readable diffs), and each runs top to bottom in a
fresh kernel (nbclient, from the test extra) without an error."""
import json
import time
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "docs" / "notebooks").glob("*.ipynb"))
NORMS = ["rmsnorm", "layernorm", "batchnorm", "instancenorm", "groupnorm"]


def test_there_is_a_notebook_per_norm_plus_first_backward_and_exercises():
    stems = [p.stem for p in NOTEBOOKS]
    for part in NORMS + ["first_backward_by_hand", "exercises"]:
        assert any(s.endswith(part) for s in stems), part


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_outputs_are_stripped(path):
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, f"{path.name}: clear the outputs"
        assert not cell.get("attachments")
    assert "widgets" not in nb["metadata"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_runs_in_a_fresh_kernel(path, monkeypatch):
    nbformat = pytest.importorskip("nbformat", reason="nbformat is in the test extra: pip install -e '.[test]'")
    nbclient = pytest.importorskip("nbclient", reason="nbclient is in the test extra: pip install -e '.[test]'")
    nb = nbformat.read(path, as_version=4)
    # the kernel inherits the environment: NumPy reference kernels, so that no numba compilation (tens of
    # seconds on a cold cache) is timed here; the notebooks' content does not depend on the backend
    monkeypatch.setenv("MINIGRAD_BACKEND", "numpy")
    start = time.perf_counter()
    # run where the notebook lives, as Jupyter does; its first cell finds this repository's minigrad
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "DIFFERENT" not in text                       # every hand-written gradient agreed with autograd
    print(f"{path.name}: {time.perf_counter() - start:.1f} s")
