"""The derivation pages cannot drift from the code: their generated blocks are rebuilt and compared."""
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "docs" / "derivations"
NORM_PAGES = ["rmsnorm.md", "layernorm.md", "batchnorm.md", "instancenorm.md", "groupnorm.md"]
CODE_BLOCK = re.compile(r"<!-- BEGIN: code (?P<path>\S+)::(?P<name>\S+) -->.*?```python\n(?P<code>.*?)\n```",
                        re.DOTALL)


def load_build():
    spec = importlib.util.spec_from_file_location("derivations_build", PAGES / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = load_build()


def test_check_passes_on_the_committed_pages():
    result = subprocess.run([sys.executable, str(PAGES / "build.py"), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    # on success it says what it compared: every page, and every marked block on them
    pages = sorted(PAGES.glob("*.md"))
    blocks = sum(p.read_text().count("<!-- BEGIN: ") for p in pages)
    assert result.stdout.startswith(f"up to date: {len(pages)} pages, {blocks} generated blocks"), result.stdout


@pytest.mark.parametrize("page", NORM_PAGES)
def test_each_norm_page_has_code_and_numbers(page):
    text = (PAGES / page).read_text()
    assert "<!-- BEGIN: code " in text and "<!-- BEGIN: example " in text
    assert page in (PAGES / "README.md").read_text()


def test_every_quoted_snippet_occurs_in_its_source_file():
    quotes = [(page.name, m) for page in build.pages() for m in CODE_BLOCK.finditer(page.read_text())]
    assert len(quotes) >= 20
    for page, m in quotes:
        source = (ROOT / m["path"]).read_text()
        assert m["code"] in source, f"{page}: the quote of {m['name']} is not in {m['path']}"


def test_numbers_appear_only_inside_generated_blocks():
    """Prose holds no computed values (a number with 3 or more decimals): those come from blocks."""
    for page in build.pages():
        prose = build.BLOCK.sub("", page.read_text())
        stray = re.findall(r"\d\.\d{3,}", prose)
        assert not stray, f"{page.name}: numbers outside generated blocks: {stray}"


@pytest.fixture
def copy_of_pages(tmp_path):
    for page in build.pages():
        shutil.copy(page, tmp_path / page.name)
    shutil.copytree(PAGES / build.FIGURE_DIR, tmp_path / build.FIGURE_DIR)   # the pictures the pages show
    return tmp_path


def test_an_altered_number_is_detected(copy_of_pages):
    page = copy_of_pages / "rmsnorm.md"
    text = page.read_text()
    start = text.index("<!-- BEGIN: example rms.forward -->")
    position = text.index("0.3651", start)                # rstd of the worked example
    page.write_text(text[:position] + "0.3652" + text[position + 6:])
    assert build.outdated(copy_of_pages) == [page]
    result = subprocess.run([sys.executable, str(PAGES / "build.py"), "--check", "--dir", str(copy_of_pages)],
                            capture_output=True, text=True)
    assert result.returncode == 1 and "rmsnorm.md" in result.stdout
    assert "layernorm.md" not in result.stdout and ".png" not in result.stdout   # only the altered page
    build.write_all(copy_of_pages)                       # and a rebuild restores it
    assert page.read_text() == text


def test_an_altered_code_quote_is_detected(copy_of_pages):
    page = copy_of_pages / "layernorm.md"
    text = page.read_text()
    page.write_text(text.replace("gw -= mean_gw[:, None]", "gw += mean_gw[:, None]", 1))
    assert build.outdated(copy_of_pages) == [page]


def test_a_malformed_page_is_an_error(copy_of_pages):
    page = copy_of_pages / "groupnorm.md"
    page.write_text(page.read_text().replace("<!-- END: example gn.saved -->", "", 1))
    with pytest.raises(ValueError, match="gn.saved"):
        build.outdated(copy_of_pages)


def test_a_block_naming_unknown_code_is_an_error():
    with pytest.raises(LookupError, match="no_such_function"):
        build.generate("code minigrad/viz.py::no_such_function", None)
