"""How much of PyTorch's operator database minigrad covers, measured: prints and writes
``docs/results/opinfo_coverage.md``.

    python bench/opinfo_coverage.py                 # the whole database (about a minute or two)
    python bench/opinfo_coverage.py --no-run        # names, variants and modules only (seconds)

It runs exactly what ``tests/test_opinfo.py`` runs (``tests/opinfo_harness.py``: the same cases, samples and
checks, the same reviewed skip lists) and counts: op names resolved by family, the missing names, samples
compared and agreeing (forward and float64 backward), error inputs raising PyTorch's exception type, the method
and in-place variants PyTorch has and minigrad lacks, and the modules of ``common_modules.module_db`` that
``minigrad.nn`` has by name. Needs PyTorch and expecttest (the test extra); it lives under bench/ because it
imports torch, which the library never does.
"""
import argparse
import collections
import os
import sys
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
warnings.filterwarnings("ignore")

from tests.opinfo_harness import (cases, minigrad_module, minigrad_variant, missing_dtypes,  # noqa: E402
                                  module_db, op_id, run_case, run_module, torch_name, torch_variant)
from tests.opinfo_util import op_db  # noqa: E402
from tests.test_opinfo import SAMPLE_SKIPS, SKIPS, case_settings  # noqa: E402

OUT = os.path.join(ROOT, "docs", "results", "opinfo_coverage.md")
DOTTED = ("fft", "linalg", "special", "masked", "nn.functional", "signal", "sparse", "nn", "torch")
BY_CLASS = {"UnaryUfuncInfo": "elementwise unary", "BinaryUfuncInfo": "elementwise binary",
            "ReductionOpInfo": "reductions", "SpectralFuncInfo": "fft", "ShapeFuncInfo": "shape"}


def family(op):
    """``fft``, ``linalg``, ``special``, ``masked``, ``nn.functional``, ``signal``, ``sparse``, or for top-level
    names the OpInfo's class (``elementwise unary``, ``elementwise binary``, ``reductions``) or ``top-level``."""
    for prefix in DOTTED:
        if op.name.startswith(prefix + "."):
            return prefix
    return BY_CLASS.get(type(op).__name__, "top-level")


def name_table(ops):
    """{family: (resolved names, all names)} and the sorted missing names, per family."""
    names = collections.defaultdict(set)
    resolved = collections.defaultdict(set)
    for op in ops:
        fam = family(op)
        names[fam].add(op.name)
        if minigrad_variant(op, "function") is not None:
            resolved[fam].add(op.name)
    return names, resolved


def missing_variants(ops):
    """[(op name, 'Tensor.x' or 'Tensor.x_')] of variants PyTorch has where minigrad has the op but not them."""
    found = set()
    for op in ops:
        if minigrad_variant(op, "function") is None:
            continue
        for variant in ("method", "inplace"):
            if torch_variant(op, variant) is not None and minigrad_variant(op, variant) is None:
                found.add((op.name, torch_name(op, variant)))
    return sorted(found)


def module_lines(run):
    """The modules of ``module_db`` minigrad has by name, and (``run``) those whose float64 forward outputs agree
    with PyTorch's on a spread of the database's inputs, parameters copied over."""
    infos = module_db()
    names = [info.module_cls.__name__ for info in infos]
    have = [info for info in infos if minigrad_module(info) is not None]
    lines = ["## Modules (`common_modules.module_db`)", "",
             f"**{len(have)} of {len(names)} modules** exist under `minigrad.nn` by name; missing: "
             + ", ".join(sorted(set(names) - {info.module_cls.__name__ for info in have})), ""]
    if run:
        agreeing, failing = [], []
        for info in have:
            outcomes = run_module(info)
            bad = [o for o in outcomes if o.status == "fail"]
            (failing if bad or not any(o.status == "ok" for o in outcomes) else agreeing).append((info, bad))
        lines += [f"**{len(agreeing)} of {len(have)}** agree with PyTorch on every compared input (float64 forward "
                  "outputs, eval mode, up to 4 inputs each, PyTorch's parameters loaded); the others:", ""]
        lines += [f"* `{info.module_cls.__name__}`: {bad[0].message[:200] if bad else 'no input ran'}"
                  for info, bad in failing] + [""]
    return lines


def run_all(ops, progress=True):
    """{(op id, variant, kind): [Outcome]}, every case run with the test's sample skips."""
    results = {}
    todo = cases(ops)
    start = time.time()
    for i, (op, variant, kind) in enumerate(todo):
        try:
            results[(op_id(op), variant, kind)] = run_case(op, variant, kind, **case_settings(op))
        except Exception as error:     # a case that cannot even produce its samples
            results[(op_id(op), variant, kind)] = error
        if progress and i % 100 == 0:
            print(f"  {i}/{len(todo)} cases, {time.time() - start:.0f} s", file=sys.stderr)
    return results


def tally(results):
    """Counts per kind: ok, fail, skipped (a reviewed sample skip), n/a (not expressible in minigrad); and the
    failing samples grouped by case."""
    counts = collections.defaultdict(collections.Counter)
    failing = collections.defaultdict(list)
    for (oid, variant, kind), outcomes in results.items():
        if isinstance(outcomes, Exception):
            counts[kind]["case error"] += 1
            failing[(oid, variant, kind)].append(f"the case raised {type(outcomes).__name__}: {outcomes}")
            continue
        for o in outcomes:
            status = "skipped" if o.what == "skipped" else o.status
            counts[kind][status] += 1
            if o.what == "message matches":
                counts[kind]["message matches"] += 1
            if o.status == "fail":
                counts[kind][f"fail: {o.what}"] += 1
                failing[(oid, variant, kind)].append(f"{o.dtype} #{o.index} {o.what}: {o.message[:160]}")
    return counts, failing


def percent(part, whole):
    return f"{100 * part / whole:.1f}%" if whole else "-"


def report(ops, results):
    names, resolved = name_table(ops)
    all_names = set().union(*names.values())
    all_resolved = set().union(*resolved.values())
    lines = ["# PyTorch's operator database (OpInfo): minigrad's coverage", "",
             "Written by `bench/opinfo_coverage.py` (PyTorch " + __import__("torch").__version__ + "); the cases are "
             "those of `tests/test_opinfo.py`.", "",
             f"**{len(all_resolved)} of {len(all_names)} op names resolve** in minigrad "
             f"({len(ops)} OpInfos in the database).", "",
             "| family | resolved | names | missing |", "|---|---:|---:|---|"]
    for fam in sorted(names, key=lambda f: -len(names[f])):
        missing = sorted(names[fam] - resolved[fam])
        lines.append(f"| {fam} | {len(resolved[fam])} | {len(names[fam])} | {', '.join(missing) or '-'} |")
    if results is not None:
        counts, failing = tally(results)
        f64, c128, dt, er = counts["float64"], counts["complex128"], counts["dtypes"], counts["errors"]
        cu, wo, wd = counts["complex_unlisted"], counts["out"], counts["out_dtypes"]
        compared = f64["ok"] + f64["fail"] + f64["skipped"]
        lines += ["", "## Samples", "",
                  "Full pass (float64, or the op's own dtype; forward values, dtypes, float64 gradients of a random "
                  "upstream, inputs mutated only as PyTorch mutates them; function, method and in-place variants):", "",
                  f"* **{f64['ok']} of {compared} samples agree ({percent(f64['ok'], compared)})**; "
                  f"{f64['fail']} fail ({', '.join(f'{k[6:]}: {v}' for k, v in sorted(f64.items()) if k.startswith('fail: '))}"
                  f"), {f64['skipped']} are left out by a reviewed skip, {f64['n/a']} cannot be expressed in minigrad "
                  "(a bfloat16 tensor, a torch.Generator, a dtype minigrad lacks).",
                  f"* **complex pass: {c128['ok']} of {c128['ok'] + c128['fail'] + c128['skipped']} complex128 samples "
                  f"agree** (float ops PyTorch also computes on complex numbers: values, dtypes, and the gradients of "
                  f"a random complex upstream in PyTorch's convention), {c128['fail']} fail, {c128['skipped']} "
                  f"skipped, {c128['n/a']} not expressible.",
                  f"* **complex inputs to real-only ops: {cu['ok']} of {cu['ok'] + cu['fail']} complexified float64 "
                  f"samples behave as PyTorch** (refused with its exception type, or, where PyTorch computes them "
                  f"all the same, its values), {cu['fail']} fail, {cu['skipped']} skipped, {cu['n/a']} not counted.",
                  f"* **out=: {wo['ok']} of {wo['ok'] + wo['fail']} samples write PyTorch's values into empty tensors "
                  f"given as out** (resized, returned as PyTorch returns them), {wo['fail']} fail, {wo['skipped']} "
                  f"skipped, {wo['n/a']} not counted.",
                  f"* **out= of the other dtypes: {wd['ok']} of {wd['ok'] + wd['fail']} ops behave as PyTorch with an "
                  f"out of each of nine dtypes** (computing where PyTorch computes, with its values cast into out's "
                  f"dtype; refusing with its exception type, out left empty, where it refuses), {wd['fail']} fail, "
                  f"{wd['skipped']} skipped, {wd['n/a']} not counted (no tensor result, or no out= call to compare).",
                  f"* cheap pass (float32, integer/bool dtypes, bfloat16 and float16, forward and dtype): "
                  f"{dt['ok']} of "
                  f"{dt['ok'] + dt['fail'] + dt['skipped']} agree, {dt['fail']} fail, {dt['skipped']} skipped, "
                  f"{dt['n/a']} not expressible.",
                  f"* **error inputs: {er['ok']} of {er['ok'] + er['fail']} raise PyTorch's exception type "
                  f"({percent(er['ok'], er['ok'] + er['fail'])}; {percent(er['ok'], er['ok'] + er['fail'] + er['skipped'])}"
                  f" of {er['ok'] + er['fail'] + er['skipped']} counting the skipped ones)**, {er['message matches']} of "
                  f"them with a message matching PyTorch's pattern; {er['fail']} do not raise it, {er['skipped']} "
                  f"skipped, {er['n/a']} not counted (PyTorch accepts them itself, or NumPy cannot hold "
                  "the input).", ""]
        if failing:
            lines += ["### Failing samples (by case)", ""]
            for (oid, variant, kind), msgs in sorted(failing.items()):
                listed = skip_reason_by_id(oid, variant, kind)
                note = f" *(listed: {listed})*" if listed else ""
                lines.append(f"* `{oid}` {variant} {kind}: {len(msgs)}{note} — {msgs[0]}")
        lines += ["", "### Reviewed skips (`tests/test_opinfo.py`)", ""]
        lines += [f"* `{key}`: {reason}" for key, reason in SKIPS.items()] or ["* none"]
        lines += ["", "Samples left out (`SAMPLE_SKIPS`):", ""]
        lines += [f"* {'every op' if ops == '*' else ', '.join(f'`{o}`' for o in ((ops,) if isinstance(ops, str) else ops))}:"
                  f" {reason}" for ops, _, reason in SAMPLE_SKIPS]
    variants = missing_variants(ops)
    lines += ["", "## Method and in-place variants missing", "",
              f"{len(variants)} variants PyTorch has for ops minigrad has: "
              + ", ".join(f"`{v}`" for _, v in variants), ""]
    dtype_gaps = collections.Counter(d for op in ops if minigrad_variant(op, "function") for d in missing_dtypes(op))
    if dtype_gaps:
        lines += [f"dtypes PyTorch supports for resolved ops that minigrad lacks: {dict(dtype_gaps)}", ""]
    lines += module_lines(results is not None)
    return "\n".join(lines), len(all_resolved), len(all_names)


def skip_reason_by_id(oid, variant, kind):
    return SKIPS.get((oid, variant, kind)) or SKIPS.get((oid, variant))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-run", action="store_true", help="count names, variants and modules only")
    parser.add_argument("--out", default=OUT)
    args = parser.parse_args()
    ops = op_db()
    start = time.time()
    results = None if args.no_run else run_all(ops)
    text, n_resolved, n_names = report(ops, results)
    text += f"\n_Run time: {time.time() - start:.0f} s._\n"
    print(text)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)
    print(f"\nwritten to {os.path.relpath(args.out, ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
