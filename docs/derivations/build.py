"""Regenerate the generated parts of the derivation pages, or check that they are up to date.

    python docs/derivations/build.py            # rewrite every page's generated blocks from minigrad
    python docs/derivations/build.py --check    # exit 1 (and name them) if any page differs

A page is hand-written Markdown except for marked blocks, which this script owns:

    <!-- BEGIN: code minigrad/ops/norm/rmsnorm.py::RMSNormFunction.backward -->
    ...the exact source lines of that function or method, as a fenced block...
    <!-- END: code minigrad/ops/norm/rmsnorm.py::RMSNormFunction.backward -->

    <!-- BEGIN: example rms.backward -->
    ...text printed by the generator ``rms.backward`` of numeric.py, which runs minigrad...
    <!-- END: example rms.backward -->

A block whose content starts on a new line is a block; otherwise it is inline (a number inside a
sentence). Every number on a page comes from such a block, and ``tests/test_docs.py`` runs
``--check``, so a page cannot silently disagree with the code it explains.
"""
import argparse
import ast
import importlib.util
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]                      # the repository: code paths in blocks are relative to it
BLOCK = re.compile(r"<!-- BEGIN: (?P<name>[^>]+?) -->(?P<body>.*?)<!-- END: (?P=name) -->", re.DOTALL)
MARKER = re.compile(r"<!-- (BEGIN|END): ([^>]+?) -->")


def _load_numeric():
    spec = importlib.util.spec_from_file_location("derivation_numbers", HERE / "numeric.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def source_of(path, qualname):
    """The exact source lines (with their indentation) of the function or class ``qualname``
    (``Class.method`` for a method) in the file ``path``, relative to the repository."""
    text = (ROOT / path).read_text()
    scope = ast.parse(text).body
    node = None
    for part in qualname.split("."):
        node = next((n for n in scope if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == part), None)
        if node is None:
            raise LookupError(f"{path} has no function or class {qualname!r}")
        scope = node.body
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return "\n".join(text.splitlines()[start - 1:node.end_lineno])


def code_block(spec):
    """``path::qualname`` -> a fenced Python block quoting that source, headed by where it lives."""
    path, qualname = spec.split("::")
    return f"`{path}`, `{qualname}`:\n\n```python\n{source_of(path, qualname)}\n```"


def generate(name, numeric):
    """The content of the block called ``name`` ("code PATH::QUALNAME" or "example NAME")."""
    kind, _, arg = name.partition(" ")
    if kind == "code":
        return code_block(arg)
    if kind == "example":
        if arg not in numeric.EXAMPLES:
            raise LookupError(f"no generator {arg!r} in numeric.py (known: {', '.join(sorted(numeric.EXAMPLES))})")
        return numeric.EXAMPLES[arg]().rstrip("\n")
    raise ValueError(f"unknown block kind {kind!r} in {name!r}: expected 'code PATH::QUALNAME' or 'example NAME'")


def check_markers(text, page):
    """Every BEGIN has its END, blocks do not nest: else the page is malformed (a ValueError)."""
    open_name = None
    for match in MARKER.finditer(text):
        kind, name = match.groups()
        if kind == "BEGIN" and open_name is None:
            open_name = name
        elif kind == "END" and name == open_name:
            open_name = None
        else:
            raise ValueError(f"{page}: unexpected '<!-- {kind}: {name} -->' (open block: {open_name!r})")
    if open_name is not None:
        raise ValueError(f"{page}: block {open_name!r} has no END marker")


def rebuild(text, numeric, page="page"):
    """The page ``text`` with every generated block replaced by what the code produces now."""
    check_markers(text, page)

    def fill(match):
        name, body = match.group("name"), match.group("body")
        content = generate(name, numeric)
        if body.startswith("\n"):
            content = f"\n{content}\n"
        return f"<!-- BEGIN: {name} -->{content}<!-- END: {name} -->"

    return BLOCK.sub(fill, text)


def pages(directory=HERE):
    return sorted(Path(directory).glob("*.md"))


def outdated(directory=HERE):
    """The pages in ``directory`` whose generated blocks differ from what the code produces now."""
    numeric = _load_numeric()
    return [p for p in pages(directory) if rebuild(p.read_text(), numeric, p.name) != p.read_text()]


def write_all(directory=HERE):
    """Rewrite the pages; returns the ones that changed."""
    numeric = _load_numeric()
    changed = []
    for p in pages(directory):
        old = p.read_text()
        new = rebuild(old, numeric, p.name)
        if new != old:
            p.write_text(new)
            changed.append(p)
    return changed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a page is out of date")
    parser.add_argument("--dir", default=str(HERE), help="the directory of pages (default: this script's)")
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except (LookupError, ValueError) as e:   # a malformed page or a block naming nothing
        print(f"error: {e}", file=sys.stderr)
        return 2


def _run(args):
    if args.check:
        stale = outdated(args.dir)
        for p in stale:
            print(f"out of date: {p} (run: python docs/derivations/build.py)")
        return 1 if stale else 0
    for p in write_all(args.dir):
        print(f"rewrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
