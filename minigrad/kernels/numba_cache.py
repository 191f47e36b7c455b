"""numba's on-disk cache, kept fresh across files.

numba caches a compiled function next to its source file and trusts the cache while that one file is unchanged
(its *source stamp*: the file's hash, or its time and size in older numba). A kernel that calls a jitted helper from
another file (``fused_numba.py``'s softmax calls ``numba_kernels._exp``; ``conv_numba.py`` and ``pool_numba.py`` call
``_inline`` and ``_helper`` functions) has the helper compiled into it, so after a change to the helper's file alone
(an edit, a ``git pull`` into an editable install) numba would go on loading the old machine code from the cache.

``stamp_helper_files()`` registers, in front of numba's own, a cache locator for minigrad's kernel functions whose
module imported names from another minigrad module: it keeps the cache where numba's own locator puts it and adds to
the source stamp the hashes of those other modules' files. Functions that import nothing from another minigrad module
(and every function outside minigrad) keep numba's stamp: whether they load before or after this module, their
cache entries stay valid. numba's locator list is not public API: if it is missing (another numba version), nothing
is registered and each cache follows its own file, as before.
"""
import functools
import hashlib
import os
import sys

_PACKAGE = "minigrad."


def _file_hash(path):
    stat = os.stat(path)
    return _hash(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=None)
def _hash(path, mtime_ns, size):   # read again if the file changes while the process runs
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def helper_files(py_func, package=_PACKAGE):
    """The source files of the other modules of ``package`` that ``py_func``'s module took names from (jitted
    helpers, decorators), sorted; empty for a function outside the package."""
    module = py_func.__globals__.get("__name__", "")
    if not module.startswith(package):
        return []
    files = set()
    for value in list(py_func.__globals__.values()):
        source = getattr(value, "__module__", None)
        if isinstance(source, str) and source.startswith(package) and source != module and source in sys.modules:
            path = getattr(sys.modules[source], "__file__", None)
            if path:
                files.add(path)
    return sorted(files)


def _locator_class(numba_locators, package):
    """A numba cache locator class that wraps the locator numba would choose (from ``numba_locators``) for a function
    of ``package`` with helpers in other files, adding their hashes to its source stamp."""

    class HelperFilesLocator:
        def __init__(self, inner, files):
            self._inner = inner
            self._files = files

        @classmethod
        def from_function(cls, py_func, py_file):
            files = helper_files(py_func, package)
            if not files:
                return None
            for locator_class in numba_locators:
                inner = locator_class.from_function(py_func, py_file)
                if inner is not None:
                    return cls(inner, files)
            return None

        def get_source_stamp(self):
            return self._inner.get_source_stamp(), tuple(_file_hash(path) for path in self._files)

        def __getattr__(self, name):   # the cache path, the disambiguator, the file name for warnings
            return getattr(self._inner, name)

    return HelperFilesLocator


def stamp_helper_files(package=_PACKAGE):
    """Register the locator (module docstring) once per package prefix; return whether it is registered."""
    from numba.core import caching
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    locators = getattr(impl, "_locator_classes", None)
    if not isinstance(locators, list):
        return False
    if any(getattr(cls, "package", None) == package for cls in locators):
        return True
    locator = _locator_class(list(locators), package)
    locator.package = package
    locators.insert(0, locator)
    return True

