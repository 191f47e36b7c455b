"""The documentation site (mkdocs.yml): the "Write your own Function" page's code runs and prints what the page
shows, the site's hooks rewrite what they should and nothing else, and, with the [docs] extra installed, the
site builds with ``mkdocs build --strict`` (a broken link or reference fails it) without touching the checkout."""
import contextlib
import importlib.util
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def load_hooks():
    spec = importlib.util.spec_from_file_location("docs_site_hooks", DOCS / "_site" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hooks = load_hooks()


def mkdocs_or_skip():
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None:
        pytest.skip('mkdocs is not installed: pip install -e ".[docs]" to build the documentation site '
                    "(CI builds it after the tests)")


# --------------------------------------------------------------------------- the walkthrough page
def test_every_code_block_of_the_function_page_runs_and_prints_what_the_page_shows():
    """The python blocks run in order in one namespace; a ```text block right after one is its exact output."""
    blocks = [(m.group(1), m.group(2), m.end()) for m in BLOCK.finditer((DOCS / "custom_function.md").read_text())]
    text = (DOCS / "custom_function.md").read_text()
    namespace, ran, compared = {}, 0, 0
    for i, (language, code, end) in enumerate(blocks):
        if language != "python":
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"custom_function.md, block {i}", "exec"), namespace)
        ran += 1
        following = blocks[i + 1] if i + 1 < len(blocks) else None
        if following and following[0] == "text" and text[end:].lstrip().startswith("```text"):
            assert out.getvalue() == following[1], f"block {i} printed {out.getvalue()!r}"
            compared += 1
    assert ran >= 8 and compared >= 2


# --------------------------------------------------------------------------- the hooks
def test_links_to_repository_files_become_their_paths_or_repository_links():
    page = "derivations/README.md"
    site = {"derivations/README.md", "derivations/rmsnorm.md", "derivations/figures/rms.jacobian.png"}
    markdown = "\n".join([
        "[examples/jacobians.py](../../examples/jacobians.py)",          # a file outside docs/
        "[the builder](build.py)",                                        # in docs/, but not part of the site
        "[RMSNorm](rmsnorm.md#1-what-it-computes) ![J](figures/rms.jacobian.png)",   # the site's own
        "[gone](../../examples/no_such_example.py)",                      # missing: left for the build to report
        "[web](https://example.org/a.py)",
        "```text", "[in code](../../examples/jacobians.py)", "```",       # code blocks are left alone
    ])
    plain = hooks.rewrite_links(markdown, page, site, repo_url=None).splitlines()
    assert plain[0] == "`examples/jacobians.py`"
    assert plain[1] == "the builder (`docs/derivations/build.py`)"
    assert plain[2:6] == markdown.splitlines()[2:6] and plain[6] == "[in code](../../examples/jacobians.py)"
    linked = hooks.rewrite_links(markdown, page, site, repo_url="https://git.example/minigrad/").splitlines()
    assert linked[0] == "[examples/jacobians.py](https://git.example/minigrad/blob/main/examples/jacobians.py)"
    folder = hooks.rewrite_links("[solutions](../../minigrad/exercises/)", page, site, "https://git.example/m")
    assert folder == "[solutions](https://git.example/m/tree/main/minigrad/exercises)"


def test_members_lists_what_the_namespace_offers():
    mkdocs_or_skip()                                 # the hooks read minigrad as griffe (mkdocstrings) does
    block = hooks.MEMBERS.sub(hooks.members_block, "<!-- members: minigrad.optim -->")
    listed = re.findall(r"^        - (\w+)$", block, re.MULTILINE)
    import minigrad.optim
    assert block.startswith("::: minigrad.optim\n") and {"SGD", "Adam", "AdamW", "Optimizer"} <= set(listed)
    assert all(callable(getattr(minigrad.optim, name)) for name in listed)
    excluded = hooks.MEMBERS.sub(hooks.members_block, "<!-- members: minigrad.optim exclude=SGD.Adam -->")
    assert "- SGD\n" not in excluded and "- Adam\n" not in excluded and "- AdamW\n" in excluded


def test_tensor_methods_link_the_functions_they_share():
    mkdocs_or_skip()
    table = hooks.tensor_methods()
    assert "| `sum` | [`minigrad.sum`][minigrad.sum] |" in table
    assert "| `add_` | [`minigrad.add`][minigrad.add] in place |" in table
    assert "| `divide` | [`minigrad.div`][minigrad.div] |" in table          # a second name links the first


# --------------------------------------------------------------------------- the build
def build(config, site, cwd):
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
                          cwd=cwd, capture_output=True, text=True, env={**__import__("os").environ,
                                                                        "NO_MKDOCS_2_WARNING": "1"})


def test_a_broken_link_fails_the_strict_build(tmp_path):
    """The site's settings (strict, link validation, hooks) on a one-page site whose page links to a missing
    page: the build fails and names it. (The full site's build is the next test.)"""
    mkdocs_or_skip()
    import yaml
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Page\n\nSee [the missing page](missing.md).\n")
    config.update(docs_dir=str(tmp_path / "docs"), nav=["index.md"], plugins=["search"],
                  hooks=[str(DOCS / "_site" / "hooks.py")])
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    result = build(tmp_path / "mkdocs.yml", tmp_path / "site", tmp_path)
    assert result.returncode != 0 and "missing.md" in result.stderr, result.stderr[-2000:]


def test_site_builds_strict_without_touching_the_checkout(tmp_path):
    mkdocs_or_skip()
    status = ["git", "status", "--porcelain", "--untracked-files=all"]
    before = subprocess.run(status, cwd=ROOT, capture_output=True, text=True).stdout
    result = build(ROOT / "mkdocs.yml", tmp_path / "site", tmp_path)
    assert result.returncode == 0, result.stderr[-4000:]
    site = tmp_path / "site"
    api = (site / "api" / "nn" / "index.html").read_text()
    assert 'id="minigrad.nn.row_norms.RMSNorm"' in api and 'id="minigrad.nn.Linear"' in api
    assert 'id="minigrad.sum"' in (site / "api" / "minigrad" / "index.html").read_text()
    assert 'class="arithmatex"' in (site / "custom_function" / "index.html").read_text()    # math for MathJax
    assert (site / "derivations" / "figures" / "rms.jacobian.png").exists()
    assert "Your first backward pass by hand" in (site / "notebooks" / "00_first_backward_by_hand" / "index.html").read_text()
    assert "<code>examples/jacobians.py</code>" in (site / "derivations" / "index.html").read_text()
    assert subprocess.run(status, cwd=ROOT, capture_output=True, text=True).stdout == before
