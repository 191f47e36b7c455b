"""Launching the multi-rank test programs of tests/mpi/ under ``mpiexec -n N``.

Without mpi4py or mpiexec the tests skip, unless MINIGRAD_REQUIRE_MPI=1 (set by .ci/run): then a missing
MPI is a failure, so CI proves the multi-rank tests ran."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REQUIRE_MPI = os.environ.get("MINIGRAD_REQUIRE_MPI") == "1"
ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = Path(__file__).resolve().parent / "mpi"


def mpiexec_or_skip():
    """The mpiexec next to this Python (the venv's, from the mpich wheel) or on PATH; skips if absent."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        if REQUIRE_MPI:
            pytest.fail("mpi4py not installed but MINIGRAD_REQUIRE_MPI=1 (pip install -e \".[distributed]\")")
        pytest.skip("mpi4py not installed: multi-rank test skipped")
    found = shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which("mpiexec")
    if found is None:
        if REQUIRE_MPI:
            pytest.fail("mpiexec not found but MINIGRAD_REQUIRE_MPI=1")
        pytest.skip("mpiexec not found: multi-rank test skipped")
    return found


def run_mpi(program, ranks, *args, timeout=120, threads="1"):
    """Run ``tests/mpi/<program>`` on ``ranks`` processes (``threads`` each, by the thread variables; None:
    those variables unset); the CompletedProcess."""
    names = ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
    env = {k: v for k, v in os.environ.items() if k not in names}
    env.update({name: threads for name in names} if threads is not None else {})
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    command = [mpiexec_or_skip(), "-n", str(ranks), sys.executable, str(PROGRAMS / program), *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def assert_ran(result, ranks, marker):
    """Every rank printed ``marker`` and the job exited 0; else fail with the job's output."""
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"mpiexec exited {result.returncode}:\n{output[-4000:]}"
    assert result.stdout.count(marker) == ranks, output[-4000:]
