"""The command line the seeded differential fuzzers share (``python -m tests.norm_fuzz --cases N --start S``): run
``differences(torch, minigrad, seed)`` for each seed, print every case that differs, then the count."""
import argparse


def run_seeds(differences, description, default_cases=1000, argv=None):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--cases", type=int, default=default_cases)
    parser.add_argument("--start", type=int, default=0)
    options = parser.parse_args(argv)
    import torch

    import minigrad as mg
    found = 0
    for seed in range(options.start, options.start + options.cases):
        problem = differences(torch, mg, seed)
        if problem:
            found += 1
            print(problem, flush=True)
    last = options.start + options.cases - 1
    print(f"{options.cases} cases (seeds {options.start}-{last}): {found} differ from PyTorch")
