"""python -m minigrad.exercises list | stub NAME | check NAME FILE.py [--seed N]"""
import argparse
import importlib.util
import sys

from . import check, names, signature, stub


def _load_backward(path):
    spec = importlib.util.spec_from_file_location("student_solution", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not hasattr(module, "backward"):
        raise SystemExit(f"{path} defines no function named backward")
    return module.backward


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m minigrad.exercises",
                                     description="Backward-pass exercises that say which term is wrong.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the exercises and their signatures")
    p_stub = sub.add_parser("stub", help="print a file to start an exercise from")
    p_stub.add_argument("name", choices=names())
    p_check = sub.add_parser("check", help="check the backward defined in a file")
    p_check.add_argument("name", choices=names())
    p_check.add_argument("file")
    p_check.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.command == "list":
        for name in names():
            print(f"{name:24s} {signature(name)}")
        return 0
    if args.command == "stub":
        sys.stdout.write(stub(args.name))
        return 0
    result = check(args.name, _load_backward(args.file), seed=args.seed)
    print(result)
    return 0 if result.passed else 1


if __name__ == "__main__":
    sys.exit(main())
