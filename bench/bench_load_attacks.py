"""What each hostile checkpoint of issue 24 costs ``mg.load``: peak memory and time, one subprocess per file.

    python bench/bench_load_attacks.py                      # this tree's minigrad
    python bench/bench_load_attacks.py --tree /tmp/old      # another tree (a directory holding minigrad/)
    python bench/bench_load_attacks.py --only memo,repr     # attacks whose name contains one of these

Each file is built by ``tests/hostile_checkpoints.py`` (by hand: zlib, struct, pickle opcodes) and written to
a temporary directory; a fresh interpreter imports minigrad, notes its peak resident memory
(``getrusage(RUSAGE_SELF).ru_maxrss``), loads the file, and prints the outcome (the exception's type and the
first 100 characters of its message), the time taken and how much the peak grew. A load still running after
``--timeout`` seconds (60) is killed and reported as such. Printed as a markdown table.
"""
import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tests import hostile_checkpoints as hostile  # noqa: E402

CHILD = r"""
import resource, sys, time
import minigrad as mg
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
try:
    mg.load(sys.argv[1])
    outcome = "loaded"
except BaseException as err:
    outcome = f"{type(err).__name__}: {str(err)[:100]}"
seconds = time.perf_counter() - start
grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
print(f"{seconds:.2f}\t{grown:.0f}\t{outcome!r}")
"""


def attacks():
    for member in hostile.MEMBERS:
        yield f"3 GiB inflated from {member}", lambda m=member: hostile.bomb(m)
    for member in hostile.MEMBERS:
        yield f"directory claims 3 GiB for a stored {member}", lambda m=member: hostile.lying_directory(m)
    yield "LONG_BINPUT 268435456 (memo)", hostile.huge_memo
    for levels, how in ((20, "persid"), (24, "persid"), (60, "persid"), (60, "size"), (60, "complex")):
        yield f"repr of 2**{levels} shared leaves ({how})", lambda n=levels, h=how: hostile.shared_repr(n, h)
    ten_mb = 10 * 2 ** 20
    yield "10 MB data.pkl of None", lambda: hostile.many_opcodes(ten_mb)
    yield "10 MB data.pkl of EMPTY_SET", lambda: hostile.many_opcodes(ten_mb, b"\x8f")
    yield "10 MB structure.json of []", lambda: hostile.empty_lists_json(ten_mb)
    yield "65,000 zip entries", lambda: hostile.many_entries(65_000)
    yield "100,000 colliding int keys (pickle)", lambda: hostile.torch_zip(hostile.colliding_int_keys(100_000))
    yield "100,000 colliding complex keys (pickle)", lambda: hostile.torch_zip(hostile.colliding_complex_keys(100_000))
    yield "100,000 colliding int keys (structure.json)", lambda: hostile.colliding_json_keys(100_000)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", default=ROOT, help="directory holding the minigrad package to measure")
    parser.add_argument("--only", default="", help="comma-separated substrings of attack names")
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args()
    wanted = [w for w in args.only.split(",") if w]
    env = {**os.environ, "PYTHONPATH": os.path.abspath(args.tree)}
    print("| attack | file size | outcome | seconds | peak memory grew (MiB) |\n|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, build in attacks():
            if wanted and not any(w in name for w in wanted):
                continue
            path = os.path.join(tmp, "hostile.pt")
            with open(path, "wb") as f:
                f.write(build())
            size = os.path.getsize(path)
            try:
                done = subprocess.run([sys.executable, "-c", CHILD, path], env=env, cwd=tmp, capture_output=True,
                                      text=True, timeout=args.timeout)
                seconds, grown, outcome = (done.stdout.strip().split("\t") + ["?", "?", done.stderr[-200:]])[:3]
            except subprocess.TimeoutExpired:
                seconds, grown, outcome = f"> {args.timeout:.0f} (killed)", "?", "hung"
            print(f"| {name} | {size:,} | {outcome} | {seconds} | {grown} |", flush=True)


if __name__ == "__main__":
    main()
