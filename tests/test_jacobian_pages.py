"""The Jacobian and second-derivative sections of the derivation pages, their pictures, and
examples/jacobians.py: the closed forms and the pages' second-order numbers against PyTorch, the
structure the pages read off against PyTorch's Jacobians, and the pictures' freshness checks."""
import importlib.util
import re
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from minigrad.ops.norm.registry import NORMS
from tests.mirror import torch_or_skip

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "docs" / "derivations"
# page -> (block prefix, the fused Function the placeholder names, its file)
PAGE_PARTS = {"rmsnorm.md": ("rms", "RMSNormFunction", "rmsnorm.py"),
              "layernorm.md": ("ln", "LayerNormFunction", "layernorm.py"),
              "batchnorm.md": ("bn", "BatchNormFunction", "batchnorm.py"),
              "groupnorm.md": ("gn", "GroupNormFunction", "groupnorm.py"),
              "instancenorm.md": ("in", "GroupNormFunction", "groupnorm.py")}


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = load(PAGES / "build.py", "jacobian_pages_build")


@pytest.fixture(scope="module")
def numeric():
    return build._load_numeric()


@pytest.fixture(scope="module")
def jac(numeric):
    return numeric.jac


def has_matplotlib():
    return importlib.util.find_spec("matplotlib") is not None


# --------------------------------------------------------------------------- the pages
@pytest.mark.parametrize("page", sorted(PAGE_PARTS))
def test_each_page_has_a_jacobian_section_picture_and_second_order_section(page):
    prefix, function, file = PAGE_PARTS[page]
    text = (PAGES / page).read_text()
    assert re.search(r"^## \d+\. The Jacobian$", text, re.MULTILINE)
    assert re.search(r"^## \d+\. The second derivative$", text, re.MULTILINE)
    for block in (f"example {prefix}.jacobian", f"figure {prefix}.jacobian", f"example {prefix}.second_order"):
        assert f"<!-- BEGIN: {block} -->" in text, block
    assert re.search(rf"!\[[^\]]+\]\(figures/{re.escape(prefix)}\.jacobian\.png\)", text)
    assert (PAGES / "figures" / f"{prefix}.jacobian.png").exists()
    pointer = (f"Formulas of the fused double backward: see `{function}.graph_backward` in\n"
                   f"`minigrad/ops/norm/{file}`")
    assert pointer in text and re.search(r"^## \d+\. Differentiating the backward \(create_graph=True\)$", text, re.MULTILINE)
    assert f"class {function}(" in (ROOT / "minigrad" / "ops" / "norm" / file).read_text()


# --------------------------------------------------------------------------- the closed forms against PyTorch
REGISTRY = {spec.name: spec for spec in NORMS}
HAND_CASES = {"rms", "ln", "bn", "bn_eval", "gn", "in"}


def registry_params(spec):
    """The parameters ``examples/jacobians.py``'s ``registry_case`` gives ``spec`` (same seed, same rounding)."""
    rng = np.random.default_rng(0)
    np.round(rng.standard_normal(spec.shape), 2)
    return [np.round(1 + 0.5 * rng.standard_normal(shape), 2) for _, shape in spec.params]


def test_every_registered_norm_has_a_jacobian_case(jac):
    """The registry of norms (minigrad/ops/norm/registry.py): each norm is in the example, by hand or generated."""
    hand = {"RMSNorm": "rms", "LayerNorm": "ln", "BatchNorm": "bn", "GroupNorm": "gn", "InstanceNorm": "in"}
    assert set(jac.CASES) == HAND_CASES | (set(REGISTRY) - set(hand))
    assert hand == jac.HAND_WRITTEN


@pytest.mark.parametrize("name", [s.name for s in NORMS if s.name not in
                                  ("RMSNorm", "LayerNorm", "BatchNorm", "GroupNorm", "InstanceNorm")])
def test_registry_jacobians_equal_pytorch(jac, torch_jacobians, name):
    case, J_torch = torch_jacobians[name]
    np.testing.assert_allclose(jac.checked_jacobian(case), J_torch, rtol=1e-10, atol=1e-12)


def torch_norms(torch):
    """For each case of examples/jacobians.py: PyTorch's layer as a function of x (float64)."""
    F = torch.nn.functional

    def t(a):
        return torch.tensor(a, dtype=torch.float64)

    def cases(jac):
        rm, rv = (t(a) for a in jac.BN_RUNNING)
        fns = {"rms": lambda x: F.rms_norm(x, (4,), t(jac.ROW_W)),
               "ln": lambda x: F.layer_norm(x, (4,), t(jac.ROW_W)),
               "bn": lambda x: F.batch_norm(x, None, None, t(jac.BN_W), None, True),
               "bn_eval": lambda x: F.batch_norm(x, rm, rv, t(jac.BN_W), None, False),
               "gn": lambda x: F.group_norm(x, 2, t(jac.GN_W)),
               "in": lambda x: F.instance_norm(x)}
        for name, make in jac.CASES.items():       # the registry's other norms: their torch twins, same parameters
            if name not in fns:
                spec, params = REGISTRY[name], registry_params(REGISTRY[name])
                fns[name] = lambda x, spec=spec, params=params: spec.torch_twin(torch, x, *map(t, params))
        return fns
    return cases


@pytest.fixture(scope="module")
def torch_jacobians(jac):
    torch = torch_or_skip()
    fns = torch_norms(torch)(jac)
    out = {}
    for name, make in jac.CASES.items():
        case = make()
        J = torch.autograd.functional.jacobian(fns[name], torch.tensor(case.x))
        out[name] = (case, J.numpy().reshape(case.x.size, case.x.size))
    return out


@pytest.mark.parametrize("name", ["rms", "ln", "bn", "bn_eval", "gn", "in"])
def test_closed_form_jacobian_equals_pytorch(jac, torch_jacobians, name):
    case, J_torch = torch_jacobians[name]
    np.testing.assert_allclose(case.jacobian(), J_torch, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(jac.checked_jacobian(case), J_torch, rtol=1e-10, atol=1e-12)


def rows_vector(case, values):
    """One column per row of the case: ``values`` (x.size entries) kept on that row, zero elsewhere."""
    V = np.zeros((case.x.size, len(case.rows)))
    for k, idx in enumerate(case.rows):
        V[idx, k] = values[idx]
    return V


@pytest.mark.parametrize("name", ["rms", "ln", "bn", "gn", "in"])
def test_what_the_pages_read_off_holds_for_pytorchs_jacobian(torch_jacobians, name):
    """Null space, block structure, symmetry and eigenvalues, as the Jacobian sections state them."""
    case, J = torch_jacobians[name]
    x = case.x.ravel()
    centered = name != "rms"
    J_ones, J_x = J @ rows_vector(case, np.ones_like(x)), J @ rows_vector(case, x)
    if centered:
        assert np.abs(J_ones).max() < 1e-12                              # the constant vector: removed exactly
        assert 1e-8 < np.abs(J_x).max() < 1e-3                           # x: removed up to eps = 1e-5 only
    else:
        assert np.abs(J_x).max() < 1e-12                                 # RMSNorm: x removed (eps = 2.2e-16)
        assert np.abs(J_ones).max(axis=0).min() > 0.1                    # but not the constant vector
    inside = np.zeros_like(J, dtype=bool)
    for idx in case.rows:
        inside[np.ix_(idx, idx)] = True
    assert np.all(J[~inside] == 0)                                       # rows do not interact
    symmetric = name in ("bn", "in")                                     # one weight per block (or none)
    assert (np.abs(J - J.T).max() < 1e-12) == symmetric
    m = case.rows[0].size
    s = np.linalg.svd(J, compute_uv=False)
    lost = 2 if centered else 1
    assert int((s > 1e-9 * s.max()).sum()) == len(case.rows) * (m - 1)   # rank: d - 1 per row (eps > 0)
    assert int((s > 1e-3 * s.max()).sum()) == len(case.rows) * (m - lost)


def test_eval_batch_norm_jacobian_is_diagonal(jac, torch_jacobians):
    case, J = torch_jacobians["bn_eval"]
    np.testing.assert_allclose(J, np.diag(np.diag(J)), atol=0)
    rstd = 1 / np.sqrt(jac.BN_RUNNING[1] + 1e-5)                          # (C,)
    np.testing.assert_allclose(np.diag(J).reshape(case.x.shape), np.broadcast_to(jac.BN_W * rstd, case.x.shape),
                               rtol=1e-12)


def test_a_wrong_closed_form_is_caught(jac, monkeypatch):
    """build --check fails if the page's formula (here: without the xhat term) disagrees with autograd."""
    def without_xhat_term(x_row, w_row, eps, centered):
        m = x_row.size
        xc = x_row - x_row.mean()
        return w_row[:, None] / np.sqrt((xc * xc).mean() + eps) * (np.eye(m) - 1 / m)

    monkeypatch.setattr(jac, "row_jacobian", without_xhat_term)
    with pytest.raises(AssertionError, match="closed-form Jacobian vs autograd"):
        jac.checked_jacobian(jac.CASES["ln"]())


# --------------------------------------------------------------------------- second-order numbers against PyTorch
def torch_second_order(torch, fn, x, w, g, v):
    """dx, H v and the gradients of P = sum(dx^2), by PyTorch's own double backward of its layer."""
    xt, gt = torch.tensor(x, requires_grad=True), torch.tensor(g, requires_grad=True)
    wt = None if w is None else torch.tensor(w, requires_grad=True)
    dx, = torch.autograd.grad((gt * fn(xt, wt)).sum(), xt, create_graph=True)
    hv, = torch.autograd.grad((dx * torch.tensor(v)).sum(), xt, retain_graph=True)
    leaves = [t for t in (xt, wt, gt) if t is not None]
    grads = torch.autograd.grad((dx * dx).sum(), leaves)
    names = ["dP_dx", "dP_dw", "dP_dg"] if w is not None else ["dP_dx", "dP_dg"]
    return dict(dx=dx.detach().numpy(), Hv=hv.numpy(), **{n: t.numpy() for n, t in zip(names, grads)})


@pytest.mark.parametrize("prefix", ["rms", "ln", "bn", "gn", "in"])
def test_second_order_numbers_equal_pytorch(numeric, prefix):
    torch = torch_or_skip()
    F = torch.nn.functional
    by_hand = numeric.by_hand
    setups = {"rms": (lambda x, w: F.rms_norm(x, (4,), w), by_hand.X, by_hand.W, by_hand.G),
              "ln": (lambda x, w: F.layer_norm(x, (4,), w), by_hand.X, by_hand.W, by_hand.G),
              "bn": (lambda x, w: F.batch_norm(x, None, None, w, None, True), numeric.BN_X, numeric.BN_W,
                     numeric.BN_G),
              "gn": (lambda x, w: F.group_norm(x, 2, w), numeric.GN_X, numeric.GN_W, numeric.GN_G),
              "in": (lambda x, w: F.instance_norm(x), numeric.IN_X, None, numeric.IN_G)}
    fn, x, w, g = setups[prefix]
    result = getattr(numeric, f"{prefix}_second_numbers")()
    numbers, v = result[0], result[1]
    expected = torch_second_order(torch, fn, x, w, g, v)
    assert set(numbers) == set(expected)
    for key, value in expected.items():
        np.testing.assert_allclose(numbers[key], value, rtol=1e-10, atol=1e-12, err_msg=key)


def test_second_order_invariances_in_pytorch(numeric):
    """The identities the pages print: H x = -dx for RMSNorm, H 1 = 0 for LayerNorm (PyTorch's Hessians)."""
    torch = torch_or_skip()
    F = torch.nn.functional
    by_hand = numeric.by_hand
    g, w = torch.tensor(by_hand.G), torch.tensor(by_hand.W)
    x = torch.tensor(by_hand.X)
    for fn, u, expected in ((lambda x: (g * F.rms_norm(x, (4,), w)).sum(), x, "minus dx"),
                            (lambda x: (g * F.layer_norm(x, (4,), w)).sum(), torch.ones_like(x), "zero")):
        _, hu = torch.autograd.functional.hvp(fn, x, u)
        target = np.zeros(x.shape)
        if expected == "minus dx":
            target = -torch.autograd.functional.vjp(fn, x)[1].numpy()
        np.testing.assert_allclose(hu.numpy(), target, atol=1e-12)


# --------------------------------------------------------------------------- the pictures
@pytest.fixture
def copy_of_pages(tmp_path):
    for page in build.pages():
        shutil.copy(page, tmp_path / page.name)
    shutil.copytree(PAGES / build.FIGURE_DIR, tmp_path / build.FIGURE_DIR)
    return tmp_path


def replace_text_chunk(path, key, value):
    """Rewrite the PNG ``path`` with the tEXt chunk ``key`` holding ``value`` (valid CRCs)."""
    data = path.read_bytes()
    out, pos = [data[:8]], 8
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos:pos + 12 + length]
        if kind == b"tEXt" and data[pos + 8:pos + 8 + length].startswith(key.encode() + b"\0"):
            body = key.encode() + b"\0" + value.encode("latin-1")
            chunk = struct.pack(">I4s", len(body), b"tEXt") + body + struct.pack(">I", zlib.crc32(b"tEXt" + body))
        out.append(chunk)
        pos += 12 + length
    path.write_bytes(b"".join(out))


def test_committed_pictures_hold_the_current_numbers(numeric):
    names = build.figure_names()
    assert names == ["bn.jacobian", "gn.jacobian", "in.jacobian", "ln.jacobian", "rms.jacobian"]
    for name in names:
        stored = build.png_text(PAGES / build.FIGURE_DIR / f"{name}.png")[build.DATA_KEY]
        assert stored == build.figure_data(name, numeric)
    assert build.stale_figures() == []


def test_a_stale_or_missing_picture_is_detected(copy_of_pages):
    png = copy_of_pages / build.FIGURE_DIR / "ln.jacobian.png"
    stored = build.png_text(png)[build.DATA_KEY]
    position = stored.index("-0.3578")                  # an entry of LayerNorm's Jacobian
    altered = stored[:position] + "-0.3579" + stored[position + 7:]
    replace_text_chunk(png, build.DATA_KEY, altered)
    assert build.png_text(png)[build.DATA_KEY] == altered
    assert build.stale_figures(copy_of_pages) == ["ln.jacobian"]
    (copy_of_pages / build.FIGURE_DIR / "gn.jacobian.png").unlink()
    assert build.stale_figures(copy_of_pages) == ["gn.jacobian", "ln.jacobian"]
    result = subprocess.run([sys.executable, str(PAGES / "build.py"), "--check", "--dir", str(copy_of_pages)],
                            check=False, capture_output=True, text=True)
    assert result.returncode == 1
    assert "gn.jacobian.png" in result.stdout and "ln.jacobian.png" in result.stdout
    assert "rms.jacobian.png" not in result.stdout


def test_a_figure_naming_nothing_is_an_error():
    with pytest.raises(LookupError, match="no_such_figure"):
        build.generate("figure no_such_figure", build._load_numeric())


def test_png_text_of_a_missing_or_foreign_file_is_empty(tmp_path):
    assert build.png_text(tmp_path / "missing.png") == {}
    (tmp_path / "not.png").write_bytes(b"GIF89a")
    assert build.png_text(tmp_path / "not.png") == {}


@pytest.mark.skipif(not has_matplotlib(), reason="matplotlib not installed (pip install -e '.[extras]')")
def test_pictures_redraw_with_the_same_numbers(numeric, tmp_path, copy_of_pages):
    import matplotlib.image
    for name in build.figure_names():
        path = build.render_figure(name, tmp_path / f"{name}.png", numeric)
        committed = PAGES / build.FIGURE_DIR / f"{name}.png"
        assert build.png_text(path)[build.DATA_KEY] == build.png_text(committed)[build.DATA_KEY]
        image, reference = matplotlib.image.imread(path), matplotlib.image.imread(committed)
        assert image.ndim == 3 and image.shape[:2] == reference.shape[:2]
        assert image[..., :3].std() > 0.05                              # not a blank canvas
    # a rebuild of a copy with a deleted picture draws it again, and only it
    (copy_of_pages / build.FIGURE_DIR / "in.jacobian.png").unlink()
    assert [p.name for p in build.redraw_stale_figures(copy_of_pages)] == ["in.jacobian.png"]
    assert build.stale_figures(copy_of_pages) == []


# --------------------------------------------------------------------------- examples/jacobians.py
@pytest.fixture(scope="module")
def example():
    return load(ROOT / "examples" / "jacobians.py", "example_jacobians")


def test_example_prints_every_norm_and_saves_pictures_in_out(example, tmp_path, capsys, torch_jacobians):
    results = example.main(["--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert set(results) == HAND_CASES | {s.name for s in NORMS} - {"RMSNorm", "LayerNorm", "BatchNorm", "GroupNorm",
                                                                    "InstanceNorm"}
    for name, (case, J) in results.items():
        assert f"== {case.title}:" in out
        np.testing.assert_allclose(J, torch_jacobians[name][1], rtol=1e-10, atol=1e-12)
    assert out.count("rank ") == len(results) and "|J 1_row| per row:" in out
    saved = sorted(p.name for p in (tmp_path / "out").iterdir()) if has_matplotlib() else []
    if has_matplotlib():
        assert saved == sorted(f"jacobian_{name}.png" for name in results)
    else:
        assert "matplotlib is not installed" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == (["out"] if has_matplotlib() else [])


def test_example_without_matplotlib_saves_nothing(example, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)     # import matplotlib -> ImportError
    example.main(["--out", str(tmp_path / "out")])
    assert "matplotlib is not installed" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []


def test_example_without_out_writes_no_files(example, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    example.main([])
    assert list(tmp_path.iterdir()) == []


def test_layer_norm_jacobian_maps_x_to_the_eps_term(torch_jacobians):
    """LayerNorm page: J 1 = 0 exactly and J x = eps · rstd² · (y - b), row by row (eps = 1e-5)."""
    case, J = torch_jacobians["ln"]
    x, eps = case.x, 1e-5
    xc = x - x.mean(axis=1, keepdims=True)
    rstd = 1 / np.sqrt((xc ** 2).mean(axis=1, keepdims=True) + eps)
    expected = eps * rstd ** 2 * case.w * xc * rstd                     # (R, D)
    np.testing.assert_allclose((J @ x.ravel()).reshape(x.shape), expected, rtol=1e-6, atol=1e-15)


def test_a_stale_picture_without_matplotlib_is_a_clear_error(copy_of_pages, monkeypatch):
    (copy_of_pages / build.FIGURE_DIR / "rms.jacobian.png").unlink()
    monkeypatch.setitem(sys.modules, "matplotlib", None)     # import matplotlib -> ImportError
    with pytest.raises(LookupError, match=r"rms.jacobian.*needs matplotlib"):
        build.redraw_stale_figures(copy_of_pages)
    assert build.main(["--dir", str(copy_of_pages)]) == 2    # build.py reports it as an error, exit code 2
