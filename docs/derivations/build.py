"""Regenerate the generated parts of the derivation pages, or check that they are up to date.

    python docs/derivations/build.py            # rewrite every page's generated blocks from minigrad
    python docs/derivations/build.py --check    # exit 1 (and name them) if any page or picture differs
    python docs/derivations/build.py --redraw   # also redraw every picture (after changing the drawing code)

A page is hand-written Markdown except for marked blocks, which this script owns:

    <!-- BEGIN: code minigrad/ops/norm/rmsnorm.py::RMSNormFunction.backward -->
    ...the exact source lines of that function or method, as a fenced block...
    <!-- END: code minigrad/ops/norm/rmsnorm.py::RMSNormFunction.backward -->

    <!-- BEGIN: example rms.backward -->
    ...text printed by the generator ``rms.backward`` of numeric.py, which runs minigrad...
    <!-- END: example rms.backward -->

    <!-- BEGIN: figure rms.jacobian -->![...](figures/rms.jacobian.png)<!-- END: figure rms.jacobian -->

    <!-- BEGIN: registry pages -->...one line per norm of minigrad/ops/norm/registry.py...<!-- END: registry pages -->

``--check`` also fails if a registered norm has no page here, or a page that quotes nothing of its source file.

A block whose content starts on a new line is a block; otherwise it is inline (a number inside a
sentence). Every number on a page comes from such a block, and ``tests/test_docs.py`` runs
``--check``, so a page cannot silently disagree with the code it explains.

A ``figure NAME`` block links the picture ``figures/NAME.png``, drawn with matplotlib from the
panels that the generator ``FIGURES[NAME]`` of numeric.py computes (and checks). The numbers behind
the picture, as text with 4 decimals, are stored in the PNG itself (a text chunk named
``minigrad-data``): ``--check`` compares them with what the code computes now, so a stale picture is
caught without comparing pixels and without matplotlib; a rebuild redraws only the stale pictures
(drawing needs matplotlib: ``pip install -e ".[extras]"``).
"""
import argparse
import ast
import importlib.util
import re
import struct
import sys
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]                      # the repository: code paths in blocks are relative to it
sys.path.insert(0, str(ROOT))               # and its minigrad is the one the pages describe (not an installed one)
BLOCK = re.compile(r"<!-- BEGIN: (?P<name>[^>]+?) -->(?P<body>.*?)<!-- END: (?P=name) -->", re.DOTALL)
MARKER = re.compile(r"<!-- (BEGIN|END): ([^>]+?) -->")
FIGURE_DIR = "figures"                      # the pictures, next to the pages
DATA_KEY = "minigrad-data"                  # the PNG text chunk holding the numbers behind a picture


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
    if kind == "figure":
        title, _ = figure_spec(arg, numeric)
        return f"![{title}]({FIGURE_DIR}/{arg}.png)"
    if kind == "registry" and arg == "pages":
        return registry_pages()
    raise ValueError(f"unknown block kind {kind!r} in {name!r}: expected 'code PATH::QUALNAME', 'example NAME', "
                     "'figure NAME' or 'registry pages'")


# --------------------------------------------------------------------------- the registry of norms
def _registry():
    """The registry's NORMS, read from this repository's file (it imports no part of minigrad)."""
    spec = importlib.util.spec_from_file_location("norm_registry", ROOT / "minigrad" / "ops" / "norm" / "registry.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.NORMS


def registry_pages():
    """The list of every registered norm's page (a ``registry pages`` block), from minigrad/ops/norm/registry.py."""
    return "\n".join(f"* [{s.page}]({s.page}): {s.name} ({s.paper}); `F.{s.functional}`, "
                             + ", ".join(f"`nn.{m}`" for m in s.modules) for s in _registry())


def registry_problems(directory=HERE):
    """Registered norms whose page is missing or quotes nothing of the norm's source file."""
    problems = []
    for s in _registry():
        page = Path(directory) / s.page
        if not page.exists():
            problems.append(f"{s.name}: no page {page}")
        elif f"<!-- BEGIN: code minigrad/ops/norm/{s.source}.py::" not in page.read_text():
            problems.append(f"{s.name}: {page} quotes nothing of minigrad/ops/norm/{s.source}.py")
    return problems


# --------------------------------------------------------------------------- figures
def figure_spec(name, numeric):
    """(title, panel function) of the figure ``name``."""
    if name not in numeric.FIGURES:
        raise LookupError(f"no figure {name!r} in numeric.py (known: {', '.join(sorted(numeric.FIGURES))})")
    return numeric.FIGURES[name]


def figure_data(name, numeric):
    """The numbers behind figure ``name`` as text: each panel's title and matrix (4 decimals)."""
    title, panels = figure_spec(name, numeric)
    parts = [title] + [f"{subtitle}\n{numeric.jac.format_matrix(J)}" for subtitle, J, _, _ in panels()]
    return "\n\n".join(parts)


def figure_names(directory=HERE):
    """The figures that the pages in ``directory`` show, in page order."""
    names = []
    for p in pages(directory):
        for match in BLOCK.finditer(p.read_text()):
            kind, _, arg = match.group("name").partition(" ")
            if kind == "figure" and arg not in names:
                names.append(arg)
    return names


def png_text(path):
    """The text chunks (tEXt) of the PNG file ``path`` as a dict; {} if it is missing or not a PNG."""
    path = Path(path)
    if not path.exists():
        return {}
    data = path.read_bytes()
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return {}
    chunks, pos = {}, 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"tEXt":
            key, _, value = body.partition(b"\0")
            chunks[key.decode("latin-1")] = value.decode("latin-1")
        elif kind == b"zTXt":
            key, _, value = body.partition(b"\0")
            chunks[key.decode("latin-1")] = zlib.decompress(value[1:]).decode("latin-1")
        pos += 12 + length
    return chunks


def render_figure(name, path, numeric=None):
    """Draw figure ``name`` into the PNG ``path`` with its numbers in the text chunk ``DATA_KEY``.
    Needs matplotlib (ImportError otherwise)."""
    numeric = numeric or _load_numeric()
    title, panels = figure_spec(name, numeric)
    return numeric.jac.heat_map(panels(), path, title, metadata={DATA_KEY: figure_data(name, numeric)})


def stale_figures(directory=HERE):
    """The figures shown in ``directory`` whose PNG is missing or holds numbers other than the code's now."""
    numeric = _load_numeric()
    folder = Path(directory) / FIGURE_DIR
    return [name for name in figure_names(directory)
            if png_text(folder / f"{name}.png").get(DATA_KEY) != figure_data(name, numeric)]


def redraw_stale_figures(directory=HERE, everything=False):
    """Redraw the stale figures (``everything``: all of them, after a change to the drawing code);
    returns their paths. Without matplotlib, a figure to draw is an error."""
    stale = figure_names(directory) if everything else stale_figures(directory)
    if not stale:
        return []
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise LookupError(f"figures out of date: {', '.join(stale)}; drawing them needs matplotlib "
                          "(pip install -e \".[extras]\")") from None
    folder = Path(directory) / FIGURE_DIR
    folder.mkdir(exist_ok=True)
    return [render_figure(name, folder / f"{name}.png") for name in stale]


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


def summary(directory=HERE):
    """What --check compares, counted: pages, generated blocks by kind, pictures."""
    found = pages(directory)
    kinds = {"code": 0, "example": 0, "figure": 0}
    for p in found:
        for match in BLOCK.finditer(p.read_text()):
            kind = match.group("name").partition(" ")[0]
            kinds[kind] = kinds.get(kind, 0) + 1
    return (f"{len(found)} pages, {sum(kinds.values())} generated blocks ({kinds['code']} source quotes, "
            f"{kinds['example']} numeric examples, {kinds['figure']} figures) and the numbers behind "
            f"{len(figure_names(directory))} pictures match what the code computes now")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a page is out of date")
    parser.add_argument("--dir", default=str(HERE), help="the directory of pages (default: this script's)")
    parser.add_argument("--redraw", action="store_true", help="redraw every figure, not only the stale ones")
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
        figures = stale_figures(args.dir)
        for name in figures:
            print(f"out of date: {Path(args.dir) / FIGURE_DIR / name}.png (run: python docs/derivations/build.py)")
        problems = registry_problems(args.dir) if Path(args.dir).resolve() == HERE else []
        for problem in problems:
            print(f"registry: {problem}")
        if stale or figures or problems:
            return 1
        print(f"up to date: {summary(args.dir)}")
        return 0
    for p in write_all(args.dir):
        print(f"rewrote {p}")
    for p in redraw_stale_figures(args.dir, everything=args.redraw):
        print(f"drew {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
