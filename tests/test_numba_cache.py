"""numba's on-disk cache notices a change to a jitted helper in another file (minigrad/kernels/numba_cache.py)."""
import os
import subprocess
import sys
import textwrap

import pytest

numba = pytest.importorskip("numba")

from minigrad.kernels import numba_cache  # noqa: E402

HELPER = "from numba import njit\n\n\n@njit(cache=True)\ndef h():\n    return {}\n"
USER = "from numba import njit\n\nfrom .helper import h\n\n\n@njit(cache=True)\ndef f():\n    return h() + 0.5\n"


def _probe(root, stamp):
    """f() of the package under ``root`` in a fresh process (numba's cache in root's __pycache__ directories)."""
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(root)!r})
        if {stamp}:
            from minigrad.kernels.numba_cache import stamp_helper_files
            assert stamp_helper_files("probe_pkg.")
        from probe_pkg.user import f
        print(f())
    """)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return float(done.stdout.split()[-1])


def _package(root, value):
    package = root / "probe_pkg"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "helper.py").write_text(HELPER.format(value))
    (package / "user.py").write_text(USER)


@pytest.mark.parametrize("stamp", [False, True], ids=["numba alone", "helper files stamped"])
def test_a_changed_helper_file_reaches_the_cached_caller(tmp_path, stamp):
    _package(tmp_path, "1.0")
    assert _probe(tmp_path, stamp) == 1.5          # compiled, and written to the cache
    assert _probe(tmp_path, stamp) == 1.5          # loaded from the cache
    _package(tmp_path, "2.0")                       # only helper.py changes
    expected = 2.5 if stamp else 1.5               # numba alone keeps the caller's stale machine code
    assert _probe(tmp_path, stamp) == expected


def test_minigrad_kernels_that_call_helpers_of_another_file_are_stamped():
    from minigrad.kernels import conv_numba, fused_numba, numba_kernels, pool_numba
    stamped = 0
    for module in (numba_kernels, fused_numba, conv_numba, pool_numba):
        for value in vars(module).values():
            py_func = getattr(value, "py_func", None)
            if py_func is None or py_func.__module__ != module.__name__ or value._cache is None:
                continue
            files = numba_cache.helper_files(py_func)
            locator = value._cache._impl._locator
            if module is numba_kernels:
                assert files == [], (value, files)
            else:
                assert files == [numba_kernels.__file__], (value, files)
                assert getattr(type(locator), "package", None) == "minigrad.", value
                stamp = locator.get_source_stamp()
                assert stamp[1] == (numba_cache._file_hash(numba_kernels.__file__),)
                stamped += 1
    assert stamped >= 10


@pytest.mark.parametrize("module", ["someone_elses.module", "minigrad.kernels.probe"])
def test_only_minigrads_functions_take_their_helpers_files(module):
    namespace = {"__name__": module, "h": numba_cache.helper_files, "np": numba_cache.os}
    exec("def f():\n    return h\n", namespace)
    expected = [numba_cache.__file__] if module.startswith("minigrad.") else []
    assert numba_cache.helper_files(namespace["f"]) == expected
