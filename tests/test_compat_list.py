"""docs/compatibility.md is generated (docs/compat_list.py): regenerated here and compared, so that it
cannot drift from the code. After adding or removing names, run
``python docs/compat_list.py > docs/compatibility.md``."""
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mirror import torch_or_skip

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "compatibility.md"


def load_generator():
    spec = importlib.util.spec_from_file_location("compat_list", ROOT / "docs" / "compat_list.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_page_is_up_to_date():
    torch = torch_or_skip()
    committed = PAGE.read_text()
    version = re.search(r"names of PyTorch (\S+) in", committed).group(1)
    if torch.__version__.split("+")[0] != version:
        pytest.skip(f"the page was generated with PyTorch {version}; this one is {torch.__version__}")
    # a fresh interpreter: which torch submodules are attributes of torch depends on what was imported before
    fresh = subprocess.run([sys.executable, str(ROOT / "docs" / "compat_list.py")], capture_output=True, text=True,
                           cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True).stdout
    assert fresh == committed, "docs/compatibility.md is stale: run python docs/compat_list.py > docs/compatibility.md"


def test_names_are_classified_by_what_minigrad_has():
    torch_or_skip()
    generator = load_generator()
    present, stand_ins, absent = generator.classify("torch.nn")
    assert "Linear" in present and "DataParallel" in stand_ins and "Linear" not in absent
    present, stand_ins, absent = generator.classify("torch.cuda")
    assert "memory_allocated" in stand_ins and not present
    generator.STAND_INS["torch.nn.NoSuchModule"] = "stale"
    try:
        with pytest.raises(SystemExit, match="NoSuchModule"):
            generator.check_stand_ins()
    finally:
        del generator.STAND_INS["torch.nn.NoSuchModule"]
