"""Less common names public PyTorch programs use, mirrored against PyTorch: Tensor.dim_order, dense_dim,
sparse_dim, is_set_to, const_data_ptr, apply_/map_/map2_; utils.data.StackDataset; nn.NLLLoss2d;
linalg.matmul; conv_tbc; autograd.set_multithreading_enabled; the *_copy functions, adjoint, is_neg, dtype."""
import warnings

import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip


def test_layout_queries_as_pytorch():
    torch = torch_or_skip()
    cases = [lambda lib: lib.zeros(2, 3), lambda lib: lib.zeros(2, 3).t(),
             lambda lib: lib.zeros(2, 3, 4, 5).to(memory_format=lib.channels_last), lambda lib: lib.zeros(4, 6)[:, ::2],
             lambda lib: lib.zeros(3, 4, 5).permute(2, 0, 1)]
    for make in cases:
        ours, theirs = make(mg), make(torch)
        assert ours.dim_order() == theirs.dim_order()
        assert (ours.dense_dim(), ours.sparse_dim()) == (theirs.dense_dim(), theirs.sparse_dim())
        assert ours.is_set_to(ours) and not ours.is_set_to(ours.clone())
        assert ours.const_data_ptr() == ours.data_ptr()
    for lib in (mg, torch):
        with pytest.raises(RuntimeError, match="does not have unique dim order"):
            lib.zeros(1, 3, 1, 1).dim_order(ambiguity_check=True)
        assert lib.zeros(2, 3).dim_order(ambiguity_check=True) == (0, 1)
    x = mg.zeros(2, 3)
    assert x.is_set_to(x.view(2, 3)) and not x.is_set_to(x.t()) and not x[1:].is_set_to(x)


def test_python_function_maps_as_pytorch():
    torch = torch_or_skip()
    results = []
    for lib in (mg, torch):
        a = lib.arange(4)                     # int64: float results are cast back (truncated)
        a.apply_(lambda v: v * 2.7)
        b = lib.arange(6.).reshape(2, 3)
        b.map_(lib.tensor([1.0, 10.0, 100.0]), lambda u, v: u * v + 1)      # broadcast along the rows
        b.map2_(lib.ones(2, 3), lib.full((2, 3), 3.0), lambda u, v, w: u - v * w)
        results.append((a.tolist(), b.tolist()))
    assert results[0] == results[1]
    grad = mg.zeros(2, requires_grad=True)
    for call, name in ((lambda: grad.apply_(abs), "apply_"), (lambda: mg.zeros(2).map_(grad, max), "map_"),
                       (lambda: grad.map2_(mg.ones(2), mg.ones(2), max), "map2_")):
        with pytest.raises(RuntimeError, match=rf"Can't call {name}\(\) on Variable that requires grad"):
            call()
    with pytest.raises(RuntimeError, match="expanded size"):
        mg.zeros(2).map_(mg.zeros(3), max)


def test_apply_counts_as_a_write_into_a_saved_tensor():
    """PyTorch does not count apply_ as a write (the gradient then silently uses the new values); minigrad does,
    so backward refuses."""
    w = mg.ones(3, requires_grad=True)
    x = mg.arange(3.)
    y = w * x                                     # saves x for w's gradient
    x.apply_(lambda v: v + 1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward(mg.ones(3))


def test_stack_dataset_as_pytorch():
    torch = torch_or_skip()
    for lib in (mg, torch):
        data = lib.utils.data
        first, second = data.TensorDataset(lib.arange(4)), [10, 11, 12, 13]
        by_position, by_name = data.StackDataset(first, second), data.StackDataset(x=first, y=second)
        assert len(by_position) == 4 and by_position[1][1] == 11 and int(by_position[2][0][0]) == 2
        assert by_name[3]["y"] == 13 and int(by_name[3]["x"][0]) == 3
        assert [s[1] for s in by_position.__getitems__([0, 3])] == [10, 13]
        assert [s["y"] for s in by_name.__getitems__([2, 1])] == [12, 11]
        for args, kwargs, message in (((), {}, "At least one dataset"), ((first,), {"y": second}, "both types"),
                                      ((first, [1]), {}, "Size mismatch"),
                                      ((), {"a": first, "b": [1]}, "Size mismatch")):
            with pytest.raises(ValueError, match=message):
                data.StackDataset(*args, **kwargs)
    batches = list(mg.utils.data.DataLoader(mg.utils.data.StackDataset(mg.utils.data.TensorDataset(mg.arange(4.)),
                                                                       mg.arange(4) * 10), batch_size=2))
    assert batches[1][1].tolist() == [20, 30] and batches[1][0][0].tolist() == [2.0, 3.0]


def test_nllloss2d_warns_and_is_nllloss(rng):
    torch = torch_or_skip()
    logp = np.log(rng.dirichlet(np.ones(3), size=(2, 4, 5)).transpose(0, 3, 1, 2))      # (N, C, H, W)
    target = rng.integers(0, 3, size=(2, 4, 5))
    values = []
    for lib in (mg, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loss = lib.nn.NLLLoss2d(ignore_index=1)
        assert [w.category for w in caught] == [FutureWarning] and "NLLLoss2d" in str(caught[0].message)
        assert isinstance(loss, lib.nn.NLLLoss)
        values.append(loss(lib.tensor(logp), lib.tensor(target)).item())
    np.testing.assert_allclose(values[0], values[1], rtol=1e-12)


def test_linalg_matmul_and_multithreading_switch():
    torch = torch_or_skip()
    assert mg.linalg.matmul is mg.matmul
    for lib in (mg, torch):
        assert lib.autograd.is_multithreading_enabled()
        with lib.autograd.set_multithreading_enabled(False):
            assert not lib.autograd.is_multithreading_enabled()
        assert lib.autograd.is_multithreading_enabled()
        lib.autograd.set_multithreading_enabled(False)
        assert not lib.autograd.is_multithreading_enabled()
        lib.autograd.set_multithreading_enabled(True)


def test_conv_tbc_as_pytorch(rng):
    torch = torch_or_skip()
    x, w, b = rng.standard_normal((7, 2, 3)), rng.standard_normal((3, 3, 4)), rng.standard_normal(4)
    upstream = rng.standard_normal((7, 2, 4))
    grads = []
    for lib in (mg, torch):
        tensors = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        out = lib.nn.functional.conv_tbc(*tensors, 1)
        assert tuple(out.shape) == (7, 2, 4) and lib.conv_tbc is lib.nn.functional.conv_tbc
        out.backward(lib.tensor(upstream))
        grads.append([out.detach().numpy()] + [t.grad.numpy() for t in tensors])
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    for lib in (mg, torch):
        t = [lib.tensor(a) for a in (x, w, b)]
        for args, message in (((t[0][0], t[1], t[2]), "Input must have 3 dims"),
                              ((t[0], t[1][0], t[2]), "Weight tensor must have 3 dims"),
                              ((t[0], t[1], t[2][:3]), "Bias size must equal dim 2"),
                              ((t[0], t[1][:, :2], t[2]), "Input dim 2 \\(input channels\\)")):
            with pytest.raises(RuntimeError, match=message):
                lib.conv_tbc(*args)


def test_copy_forms_and_small_functions_as_pytorch(rng):
    torch = torch_or_skip()
    x = rng.standard_normal((3, 4))
    calls = [lambda lib, t: lib.slice_copy(t, 1, 1, 4, 2), lambda lib, t: lib.slice_copy(t),
             lambda lib, t: lib.select_copy(t, 0, -1), lambda lib, t: lib.detach_copy(t), lambda lib, t: lib.adjoint(t)]
    for call in calls:
        ours, theirs = call(mg, mg.tensor(x)), call(torch, torch.tensor(x))
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    for split in (lambda lib, t: lib.split_copy(t, 3, 1), lambda lib, t: lib.unsafe_split_with_sizes(t, [1, 2], 0)):
        ours, theirs = split(mg, mg.tensor(x)), split(torch, torch.tensor(x))
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    source = mg.tensor(x)
    copies = (mg.slice_copy(source), mg.select_copy(source, 0, 0), mg.detach_copy(source), mg.split_copy(source, 2)[0])
    for copy in copies:
        assert not np.shares_memory(copy.numpy(), source.numpy())
    assert mg.is_neg(source) is torch.is_neg(torch.tensor(x)) is False
    assert isinstance(mg.float32, mg.dtype) and isinstance(source.dtype, mg.dtype)
