"""flex_attention: minigrad against PyTorch eager, each library in its own fresh processes.

    python bench/bench_flex_attention.py              # 3 rounds, idle and with one busy process, 2 threads
    python bench/bench_flex_attention.py --quick      # 1 round: a check that it runs

Float32 query, key and value of (4, 8, 512, 64) (batch, heads, length, head size), three attentions a LLaMA- or
Gemma-style model writes with flex_attention:

* "causal": a causal BlockMask (tiles of 128), no score_mod;
* "causal + alibi": the causal BlockMask and an ALiBi score_mod (a slope per head, captured);
* "softcap, sliding window": a tanh soft-cap score_mod (Gemma 2) and a sliding-window BlockMask of 128 keys.

"fwd" is flex_attention under no_grad, which PyTorch 2.13 runs uncompiled on the CPU (it warns that the
unfused implementation materializes the scores, as minigrad's does). PyTorch refuses flex_attention's backward on
the CPU, so "fwd+bwd" compares minigrad's flex_attention with what a PyTorch user trains with on a CPU instead:
``scaled_dot_product_attention`` with the same mask and score modification as an additive float mask (for the
soft-cap, which is not additive, the written-out math: scores, tanh, mask, softmax, product). Each library runs
in its own processes (bench/common.py), rounds alternating, thread counts set before import; a second set of
rounds runs beside one process keeping a core busy.
"""
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import (comparison_arguments, comparison_workers, emit, environment, fmt_ms, machine_line,  # noqa: E402
                    median_over_rounds, ratio, run_rounds_beside, set_threads, spread, table, time_call, write_json)

B, H, L, E = 4, 8, 512, 64
WINDOW = 128
CASES = ("causal", "causal + alibi", "softcap, sliding window")
PASSES = ("fwd", "fwd+bwd")
LIBRARIES = ("minigrad", "pytorch")


def _masks(lib, case):
    """(mask_mod, score_mod, additive float mask or None for the soft-cap) for ``case``, in ``lib``."""
    slopes = lib.tensor(2.0 ** (-8.0 * np.arange(1, H + 1) / H), dtype=lib.float32)          # ALiBi's (H,)
    i, j = np.arange(L)[:, None], np.arange(L)[None, :]
    if case == "causal":
        return (lambda b, h, q, kv: q >= kv), None, lib.tensor(np.where(j <= i, 0.0, -np.inf), dtype=lib.float32)
    if case == "causal + alibi":
        bias = np.where(j <= i, 0.0, -np.inf) + (j - i)[None] * slopes.numpy()[:, None, None]   # (H, L, L)
        return ((lambda b, h, q, kv: q >= kv), (lambda s, b, h, q, kv: s + slopes[h] * (kv - q)),
                lib.tensor(bias, dtype=lib.float32))
    return (lambda b, h, q, kv: (q >= kv) & (q - kv < WINDOW)), (lambda s, b, h, q, kv: 30 * lib.tanh(s / 30)), None


def worker(library, threads, quick):
    lib = __import__("minigrad" if library == "minigrad" else "torch")
    set_threads(threads)
    flex = __import__(f"{lib.__name__}.nn.attention.flex_attention", fromlist=["flex_attention"])
    import warnings
    warnings.simplefilter("ignore")                     # PyTorch's warning about running uncompiled
    rng = np.random.default_rng(0)
    q, k, v = (lib.tensor(rng.standard_normal((B, H, L, E), dtype=np.float32), requires_grad=True) for _ in range(3))
    g = lib.tensor(rng.standard_normal((B, H, L, E), dtype=np.float32))
    samples, budget = (3, 0.5) if quick else (7, 2.0)
    result = {}
    for case in CASES:
        mask_mod, score_mod, additive = _masks(lib, case)
        block_mask = flex.create_block_mask(mask_mod, None, None, L, L)

        def forward():                                   # inputs without requires_grad (PyTorch refuses it on the CPU)
            with lib.no_grad():
                flex.flex_attention(q.detach(), k.detach(), v.detach(), score_mod=score_mod, block_mask=block_mask)

        def train_step():
            for t in (q, k, v):
                t.grad = None
            if library == "minigrad":
                out = flex.flex_attention(q, k, v, score_mod=score_mod, block_mask=block_mask)
            elif additive is not None:
                out = lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=additive)
            else:                                        # the soft-cap written out
                s = score_mod(q @ k.transpose(-1, -2) / E ** 0.5, None, None, None, None)
                keep = lib.tensor(np.tril(np.ones((L, L), bool)) & ~np.tril(np.ones((L, L), bool), -WINDOW))
                out = lib.softmax(s.masked_fill(~keep, -float("inf")), -1) @ v
            out.backward(g)

        result[f"{case}|fwd"] = time_call(forward, warmup=1, samples=samples, budget=budget)
        result[f"{case}|fwd+bwd"] = time_call(train_step, warmup=1, samples=samples, budget=budget)
    emit(result)


def main(argv=None):
    args = comparison_arguments(__doc__.split("\n\n")[0], str(HERE / "results" / "flex_attention.json"), LIBRARIES,
                                threads=2).parse_args(argv)
    if args.worker:
        return worker(args.worker, args.threads, args.quick)
    rounds, threads, libraries, workers = comparison_workers(args, LIBRARIES)
    print(f"# flex_attention, float32 ({B}, {H}, {L}, {E}): each library in its own fresh processes, median over "
          f"{rounds} alternating rounds of each process's median after warm-up\n\n{machine_line()}; {threads} "
          "threads. Times in ms; the range is over processes.")
    records = []
    for busy in (0, 1):
        results = run_rounds_beside(busy, __file__, workers, rounds)
        medians = {lib: median_over_rounds(results[lib]) for lib in libraries}
        rows = []
        for case in CASES:
            for pass_name in PASSES:
                key = f"{case}|{pass_name}"
                times = {lib: medians[lib].get(key) for lib in libraries}
                ranges = [f"{fmt_ms(lo)}-{fmt_ms(hi)}" for lo, hi in (spread(results[lib], key) for lib in libraries)]
                pytorch_what = "flex_attention" if pass_name == "fwd" or not libraries[1:] else (
                    "sdpa, float mask" if case != "softcap, sliding window" else "written-out math")
                rows.append([case, pass_name, pytorch_what, *(fmt_ms(times[lib]) for lib in libraries),
                             ratio(times.get("minigrad"), times.get("pytorch")), *ranges])
                records.append({"case": case, "pass": pass_name, "busy": busy, "median_s": times,
                                "processes_s": {lib: [r[key] for r in results[lib]] for lib in libraries}})
        print(f"\n## {'idle' if busy == 0 else 'beside one busy process'}\n")
        print(table(["attention", "pass", "PyTorch runs", *(f"{lib} ms" for lib in libraries), "minigrad / PyTorch",
                     *(f"{lib} over processes" for lib in libraries)], rows))
    write_json(args.json, {"environment": environment(), "rounds": rounds, "records": records})
    print(f"\njson: {args.json}")


if __name__ == "__main__":
    main()
