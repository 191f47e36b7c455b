"""MkDocs hooks of the documentation site (mkdocs.yml, ``hooks:``). Two rewrites of a page's Markdown before
MkDocs renders it:

1. **Links to the repository's files.** The pages are written to be read on the repository too, so they link to
   source files outside ``docs/`` (``../../examples/jacobians.py``). The site does not hold those files: such a
   link becomes a link to the file in the repository when ``repo_url`` is set in mkdocs.yml, and the file's
   path as code otherwise. Only links to files that exist are rewritten, so a link to a missing file still
   fails the strict build.
2. **API pages.** A line ``<!-- members: minigrad.nn -->`` becomes a mkdocstrings block (``::: minigrad.nn``)
   listing the module's public classes and functions by name: minigrad's namespaces re-export what their
   files define, and mkdocstrings renders a re-exported name only when it is listed. A line
   ``<!-- tensor-methods -->`` becomes a table of the methods that ``minigrad/tensor.py`` binds to ``Tensor``
   from the ops' files (``x.sum()``, ``x.add_()``, ...), which the static reading of the class cannot see.
"""
import importlib
import inspect
import os
import posixpath
import re
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # the repository
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)      # document this checkout's minigrad, wherever mkdocs runs from
FENCE = re.compile(r"^(```|~~~)", re.MULTILINE)
LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)\)")
MEMBERS = re.compile(r"^<!-- members: (?P<module>[\w.]+)(?P<options>(?: [\w]+=[\w.]+)*) -->$", re.MULTILINE)


def public_names(module_name, exclude=()):
    """The public classes and functions that ``module_name`` offers, defined in minigrad, sorted by name
    (modules, constants, dtypes and NumPy's objects left out)."""
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    keep = []
    for name in names:
        obj = getattr(module, name, None)
        if isinstance(obj, types.ModuleType) or name in exclude:
            continue
        if (inspect.isclass(obj) or callable(obj)) and getattr(obj, "__module__", "").startswith("minigrad"):
            keep.append(name)
    return sorted(set(keep), key=str.lower)


_GRIFFE = {}


def _static_package():
    """minigrad as griffe reads it (statically, as mkdocstrings does), loaded once per build."""
    if "minigrad" not in _GRIFFE:
        import griffe
        _GRIFFE["minigrad"] = griffe.load("minigrad", search_paths=[ROOT], resolve_aliases=True,
                                          resolve_external=False)
    return _GRIFFE["minigrad"]


def _statically_found(module_name, name):
    """Whether mkdocstrings can render ``module_name.name``: griffe finds it there and can resolve it."""
    package = _static_package()
    try:
        module = package if module_name == "minigrad" else package[module_name[len("minigrad."):]]
        member = module.members[name]
        if member.is_alias:
            member.final_target
        return True
    except Exception:     # griffe's KeyError or AliasResolutionError: a name made at run time
        return False


def members_block(match):
    """The mkdocstrings blocks for a ``<!-- members: MODULE [exclude=A.B] -->`` line: one for the names that
    griffe finds in MODULE, and one per name that MODULE gets from a wildcard import griffe does not follow,
    rendered from the file that defines it. Names made at run time (a tuple assignment, a second name for a
    function) have no static source and are left out."""
    module = match.group("module")
    options = dict(o.split("=") for o in match.group("options").split())
    names = public_names(module, exclude=options.get("exclude", "").split("."))
    found = [n for n in names if _statically_found(module, n)]
    listed = "\n".join(f"        - {n}" for n in found)
    blocks = [f"::: {module}\n    options:\n      show_root_heading: false\n      heading_level: 3\n"
              f"      members:\n{listed}\n"]
    imported = importlib.import_module(module)
    for name in names:
        obj = getattr(imported, name)
        home = getattr(obj, "__module__", "")
        if name in found or getattr(obj, "__name__", None) != name or not _statically_found(home, name):
            continue
        blocks.append(f"::: {home}.{name}\n    options:\n      show_root_full_path: false\n"
                      f"      heading_level: 3\n")
    return "\n".join(blocks)


def tensor_methods(_match=None):
    """A table of the Tensor methods bound from elsewhere: each links to the function of the same name in
    ``minigrad`` when there is one (an in-place ``name_`` to ``name``), else shows its docstring's first line."""
    import minigrad
    functions = set(public_names("minigrad"))
    cls = minigrad.Tensor
    rows = ["| method | what it is |", "|---|---|"]
    for name in sorted((n for n in dir(cls) if not n.startswith("_")), key=str.lower):
        obj = inspect.getattr_static(cls, name)
        if getattr(obj, "__qualname__", "").startswith("Tensor.") or not callable(obj):
            continue                                   # defined in the class body: rendered above
        base = name[:-1] if name.endswith("_") and name[:-1] in functions else name
        target = base if base in functions and _statically_found("minigrad", base) else None
        if base in functions and target is None:       # a second name (divide for div): link the first
            first = getattr(getattr(minigrad, base), "__name__", "")
            target = first if first in functions and _statically_found("minigrad", first) else None
        if target:
            what = f"[`minigrad.{target}`][minigrad.{target}]" + (" in place" if base != name else "")
        else:
            doc = inspect.getdoc(obj) or ""
            what = doc.split("\n\n")[0].replace("\n", " ").replace("|", "\\|") or "&nbsp;"
        rows.append(f"| `{name}` | {what} |")
    return "\n".join(rows) + "\n"


def _repo_path(page_path, target):
    """The repository path that the relative link ``target`` of the page ``page_path`` (relative to docs/)
    points to, or None if it points elsewhere (a URL, an anchor, outside the repository)."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith(("#", "/")):
        return None
    path = target.split("#")[0].split("?")[0]
    if not path:
        return None
    joined = posixpath.normpath(posixpath.join("docs", posixpath.dirname(page_path), path))
    return None if joined.startswith("..") else joined


def rewrite_links(markdown, page_path, site_files, repo_url):
    """Links (outside code blocks) to repository files that the site does not hold: to ``repo_url`` or code."""
    def fix(match):
        bang, text, target = match.groups()
        path = _repo_path(page_path, target)
        if path is None or not os.path.exists(os.path.join(ROOT, path)):
            return match.group(0)                      # a URL, an anchor, or a missing file (the build reports it)
        if path.startswith("docs/") and path[len("docs/"):].rstrip("/") in site_files:
            return match.group(0)                      # a page or picture of the site: MkDocs resolves it
        if repo_url:
            kind = "tree" if os.path.isdir(os.path.join(ROOT, path)) else "blob"
            return f"{bang}[{text}]({repo_url.rstrip('/')}/{kind}/main/{path})"
        plain = text.strip("`")
        return f"`{path}`" if plain in (path, posixpath.basename(path.rstrip("/")), target) else f"{text} (`{path}`)"

    parts = FENCE.split(markdown)
    # FENCE.split gives [text, fence, body, fence, text, ...]: rewrite only the text outside fences
    out, inside = [], False
    for i, part in enumerate(parts):
        if i % 2 == 1:                                 # a fence marker toggles
            inside = not inside
            out.append(part)
        else:
            out.append(part if inside else LINK.sub(fix, part))
    return "".join(out)


def on_page_markdown(markdown, page, config, files):
    site_files = {f.src_uri for f in files}
    markdown = MEMBERS.sub(members_block, markdown)
    markdown = re.sub(r"^<!-- tensor-methods -->$", tensor_methods, markdown, flags=re.MULTILINE)
    return rewrite_links(markdown, page.file.src_uri, site_files, config.get("repo_url"))
