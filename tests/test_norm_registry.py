"""The registry of norms (minigrad/ops/norm/registry.py) is the one list: every registered norm appears in every
matrix that claims to cover "every norm", and a norm missing from one of them fails here.

The matrices: the exports (nn.functional, nn, the numpy kernel backend), the LLaMA example's --norm choices,
the norm benchmark, the Jacobian example, the derivation pages, the double-backward, kernel, device and
bad-input test matrices, the README table; and the check kit's first-order checks run for every norm here.
``test_a_forgotten_norm_is_caught`` registers a norm that nothing knows and shows each matrix reports it.
"""
import importlib.util
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
from minigrad.ops import norm as ops_norm
from minigrad.ops.norm import registry
from minigrad.ops.norm.registry import NORMS, transformer_norms

from . import bad_input_cases, test_devices, test_double_backward_norms, test_kernels
from .norm_kit import check_gradcheck_both_backends, check_twins

ROOT = Path(__file__).resolve().parents[1]


def load(path, name):
    """A script of the repository as a module (its directory first on sys.path, as when it runs)."""
    if name in sys.modules:
        return sys.modules[name]
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def matrices():
    """{matrix: set of registry names it covers}, each read from the matrix itself."""
    llama = load(ROOT / "examples" / "llama.py", "llama")
    bench = load(ROOT / "bench" / "bench_norms.py", "bench_norms_for_registry")
    backward_bench = load(ROOT / "bench" / "bench_backward.py", "bench_backward_for_registry")
    jac = load(ROOT / "examples" / "jacobians.py", "jacobians_for_registry")
    build = load(ROOT / "docs" / "derivations" / "build.py", "build_for_registry")
    by_transformer = {s.transformer: s.name for s in NORMS if s.transformer}
    bad_cases = {name for name, _ in bad_input_cases.CASES}
    kit_tested = {}
    for path in (ROOT / "tests").glob("test_norm_*.py"):
        text = path.read_text()
        for s in NORMS:
            if f'BY_NAME["{s.name}"]' in text and "check_norm(" in text and "BAD_INPUTS" in text:
                kit_tested[s.name] = path.name
    return {
        "nn.functional": {s.name for s in NORMS if hasattr(mg.nn.functional, s.functional)},
        "nn modules": {s.name for s in NORMS if all(hasattr(mg.nn, m) for m in s.modules)},
        "numpy kernel backend": {s.name for s in NORMS if all(hasattr(ops_norm, k) for k in s.kernels)
                                 and hasattr(ops_norm, s.composite)},
        "LLaMA --norm": {by_transformer[n] for n in llama.NORMS if n in by_transformer}
                        | {s.name for s in NORMS if not s.transformer},
        "bench/bench_norms.py": {n.registry for n in bench.NORMS},
        "bench/bench_backward.py": {c.registry for c in backward_bench.cases((8, 4), (2, 4, 2, 2))},
        "examples/jacobians.py": {s.name for s in NORMS if s.name in jac.CASES or s.name in jac.HAND_WRITTEN},
        "derivation pages": {s.name for s in NORMS} - {p.split(":")[0] for p in build.registry_problems()},
        "double-backward tests": {p.values[0].name for p in test_double_backward_norms.REGISTERED},
        "kernel tests": {s.name for s in test_kernels.NORMS},
        "device tests": {s.name for s, _ in test_devices.REGISTERED_MODULES} | {s.name for s in NORMS
                                                                                 if not s.takes_device},
        "bad-input tests": {s.name for s in NORMS if any(c.startswith(f"norm:{s.functional}_") for c in bad_cases)}
                           | set(kit_tested),
        "README table": {s.name for s in NORMS if f"| {s.name} (" in registry.readme_rows()},
    }


def missing(norms):
    """{matrix: sorted names of ``norms`` it lacks}, only the matrices that lack some."""
    found = matrices()
    return {m: sorted(s.name for s in norms if s.name not in names) for m, names in found.items()
            if any(s.name not in names for s in norms)}


def test_every_registered_norm_is_in_every_matrix():
    assert missing(NORMS) == {}


def test_a_forgotten_norm_is_caught(monkeypatch):
    """A norm registered and added nowhere else: every matrix that reads a list of its own names reports it."""
    ghost = replace(registry.BY_NAME["RMSNorm"], name="GhostNorm", functional="ghost_norm", modules=("GhostNorm",),
                    page="ghostnorm.md", transformer="ghost", kernels=())
    monkeypatch.setattr(registry, "NORMS", NORMS + [ghost])
    report = missing([ghost])
    assert set(report) >= {"nn.functional", "nn modules", "LLaMA --norm", "bench/bench_norms.py",
                           "bench/bench_backward.py", "examples/jacobians.py", "double-backward tests", "kernel tests",
                           "device tests", "bad-input tests", "derivation pages"}
    assert all(names == ["GhostNorm"] for names in report.values())


def test_the_transformer_norms_build_and_train_a_step():
    """Each of the registry's Transformer norms (and none) in the LLaMA example: the model's parameters are the
    config's ``parameter_shapes`` and one backward reaches every one of them."""
    llama = load(ROOT / "examples" / "llama.py", "llama")
    assert set(llama.NORMS) == set(transformer_norms()) | {"none"}
    tokens = mg.tensor(np.random.default_rng(0).integers(0, 11, (2, 8)))
    for norm in llama.NORMS:
        cfg = llama.LlamaConfig(vocab_size=11, seq_len=8, d_model=8, n_layers=1, n_heads=2, norm=norm)
        model = llama.Llama(cfg)
        assert {n: tuple(p.shape) for n, p in model.named_parameters()} == cfg.parameter_shapes()
        assert sum(p.numel() for p in model.parameters()) == cfg.num_parameters()
        llama.lm_loss(mg.nn.functional, model(tokens), tokens).backward()
        assert all(p.grad is not None for p in model.parameters()), norm


@pytest.mark.parametrize("spec", [pytest.param(s, id=s.name) for s in NORMS])
def test_every_registered_norm_passes_the_first_order_checks(spec):
    """The check kit's gradcheck on both backends and the twins, for every norm (tests/norm_kit.py)."""
    check_gradcheck_both_backends(spec)
    check_twins(spec)


def test_readme_rows_list_every_norm_once():
    rows = registry.readme_rows().splitlines()
    assert len(rows) == 2 + len(NORMS)
    assert [r.split(" (")[0].strip("| ") for r in rows[2:]] == [s.name for s in NORMS]
