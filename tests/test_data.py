"""minigrad.utils.data against torch.utils.data: the same samples in the same sampler order give the same
batches (structure, container types, shapes, dtypes, values); random samplers are checked for their semantics
(every index once per epoch, reproducible from a seed), since their streams differ from PyTorch's."""
import collections
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.utils import data

from .mirror import torch_or_skip


@pytest.fixture
def torch():
    return torch_or_skip()


Point = collections.namedtuple("Point", "x y")


def assert_same_batch(ours, theirs, torch, path="batch"):
    """Recursively: tensors equal in shape, dtype and values; containers of the same type; the rest equal."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, mg.Tensor), (path, type(ours))
        assert tuple(ours.shape) == tuple(theirs.shape), path
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], (path, ours.dtype, theirs.dtype)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=path)
    elif isinstance(theirs, dict):
        assert type(ours) is type(theirs) and list(ours) == list(theirs), path
        for key in theirs:
            assert_same_batch(ours[key], theirs[key], torch, f"{path}[{key!r}]")
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), (path, type(ours), type(theirs))
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_same_batch(a, b, torch, f"{path}[{i}]")
    else:
        assert type(ours) is type(theirs) and ours == theirs, path


def samples_for(lib, n=5):
    """Samples exercising every collation rule, built with ``lib`` (minigrad or torch) for the tensor fields."""
    rng = np.random.default_rng(0)
    out = []
    for i in range(n):
        arr = rng.standard_normal((2, 3)).astype(np.float32)
        out.append({
            "tensor": lib.tensor(arr),
            "long": lib.tensor([i, i + 1]),
            "array64": rng.standard_normal(4),
            "array_int32": np.arange(3, dtype=np.int32) * i,
            "array_bool": np.array([i % 2 == 0, True]),
            "np_float32": np.float32(i / 3),
            "np_int16": np.int16(i),
            "float": i / 7,
            "int": i * 3,
            "bool": i % 2 == 1,
            "str": f"s{i}",
            "bytes": b"b",
            "tuple": (i, float(i), "t"),
            "list": [np.float64(i), [i, i]],
            "point": Point(i, lib.tensor(float(i))),
            "ordered": collections.OrderedDict(b=i, a=float(i)),
        })
    return out


def test_default_collate_equals_pytorch(torch):
    from torch.utils.data import default_collate
    assert_same_batch(data.default_collate(samples_for(mg)), default_collate(samples_for(torch)), torch)


def test_default_convert_equals_pytorch(torch):
    from torch.utils.data import default_convert
    for ours, theirs in zip(samples_for(mg, 2), samples_for(torch, 2)):
        assert_same_batch(data.default_convert(ours), default_convert(theirs), torch)


@pytest.mark.parametrize("batch", [
    [(1, 2), (3,)],                      # sequences of unequal length
    [object(), object()],                # an unsupported type
    [np.array(["a"]), np.array(["b"])],  # a string array
])
def test_default_collate_errors_equal_pytorch(torch, batch):
    from torch.utils.data import default_collate
    with pytest.raises((RuntimeError, TypeError)) as expected:
        default_collate(batch)
    with pytest.raises(expected.type) as got:
        data.default_collate(batch)
    assert str(got.value) == str(expected.value)


def tensor_datasets(torch, n=11):
    x = np.random.default_rng(1).standard_normal((n, 3)).astype(np.float32)
    y = np.arange(n) % 3
    return data.TensorDataset(mg.tensor(x), mg.tensor(y)), torch.utils.data.TensorDataset(torch.tensor(x),
                                                                                          torch.tensor(y))


@pytest.mark.parametrize("kwargs", [
    {}, {"batch_size": 4}, {"batch_size": 4, "drop_last": True}, {"batch_size": None},
    {"batch_size": 3, "sampler": [10, 2, 5, 5, 0, 7, 1]},
    {"batch_sampler": [[3, 1], [0], [10, 9, 8, 7]]},
    {"batch_size": 2, "collate_fn": lambda batch: len(batch)},
])
def test_loader_batches_equal_pytorch_for_the_same_order(torch, kwargs):
    ours_ds, theirs_ds = tensor_datasets(torch)
    ours = data.DataLoader(ours_ds, **kwargs)
    theirs = torch.utils.data.DataLoader(theirs_ds, **kwargs)
    assert len(ours) == len(theirs)
    got, expected = list(ours), list(theirs)
    assert len(got) == len(expected) > 0
    for a, b in zip(got, expected):
        assert_same_batch(a, b, torch)
    assert_same_batch(list(ours), expected, torch)  # a second epoch, same order


class Squares(data.Dataset):
    def __init__(self, lib, n=7):
        self.lib, self.n = lib, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": np.full(2, i, dtype=np.float32), "y": i * i, "name": str(i)}


def stream_class(base):
    """An iterable dataset of (NumPy scalar, list) samples on either library's IterableDataset."""

    class Stream(base):
        def __init__(self, n=10):
            self.n = n

        def __iter__(self):
            return iter((np.float64(i), [i, -i]) for i in range(self.n))

        def __len__(self):
            return self.n

    return Stream


Stream = stream_class(data.IterableDataset)


@pytest.mark.parametrize("kwargs", [{"batch_size": 3}, {"batch_size": 3, "drop_last": True}, {"batch_size": None}])
def test_custom_and_iterable_datasets_equal_pytorch(torch, kwargs):
    TorchStream = stream_class(torch.utils.data.IterableDataset)
    for ours_ds, theirs_ds in ((Squares(mg), Squares(torch)), (Stream(), TorchStream())):
        ours, theirs = data.DataLoader(ours_ds, **kwargs), torch.utils.data.DataLoader(theirs_ds, **kwargs)
        assert len(ours) == len(theirs)
        assert_same_batch(list(ours), list(theirs), torch)


def test_shuffle_visits_every_index_once_per_epoch_and_is_reproducible():
    ds = data.TensorDataset(mg.arange(23))
    orders = []
    for _ in range(2):
        loader = data.DataLoader(ds, batch_size=5, shuffle=True, generator=mg.Generator().manual_seed(7))
        epochs = [np.concatenate([b[0].numpy() for b in loader]).tolist() for _ in range(3)]
        for order in epochs:
            assert sorted(order) == list(range(23))
        assert epochs[0] != epochs[1] != epochs[2]  # a new permutation each epoch
        assert [len(b[0]) for b in loader] == [5, 5, 5, 5, 3]
        orders.append(epochs)
    assert orders[0] == orders[1]  # the same seed gives the same epochs
    mg.manual_seed(3)
    first = [b[0].tolist() for b in data.DataLoader(ds, batch_size=4, shuffle=True)]
    mg.manual_seed(3)
    assert first == [b[0].tolist() for b in data.DataLoader(ds, batch_size=4, shuffle=True)]
    assert first != [b[0].tolist() for b in data.DataLoader(ds, batch_size=4, shuffle=True)]


def test_random_sampler_semantics_and_lengths_equal_pytorch(torch):
    ds = list(range(10))
    gen = mg.Generator().manual_seed(0)
    for kwargs in ({}, {"num_samples": 25}, {"num_samples": 4}, {"replacement": True, "num_samples": 40}):
        ours = data.RandomSampler(ds, generator=gen, **kwargs)
        theirs = torch.utils.data.RandomSampler(ds, **kwargs)
        drawn = list(ours)
        assert len(ours) == len(theirs) == len(drawn) == len(list(theirs))
        assert all(type(i) is int and 0 <= i < 10 for i in drawn)
        if not kwargs.get("replacement"):  # whole permutations, then part of one
            for start in range(0, len(drawn), 10):
                chunk = drawn[start:start + 10]
                assert len(set(chunk)) == len(chunk)
    assert list(data.SequentialSampler(ds)) == list(torch.utils.data.SequentialSampler(ds))
    twice = [list(data.RandomSampler(ds, generator=mg.Generator().manual_seed(5))) for _ in range(2)]
    assert twice[0] == twice[1]


def test_subset_random_sampler_permutes_the_given_indices():
    indices = [4, 9, 1, 16, 25]
    sampler = data.SubsetRandomSampler(indices, generator=mg.Generator().manual_seed(1))
    epochs = [list(sampler) for _ in range(4)]
    assert all(sorted(e) == sorted(indices) for e in epochs) and len(sampler) == 5
    assert len({tuple(e) for e in epochs}) > 1


def test_weighted_random_sampler_follows_the_weights():
    weights = [0.0, 1.0, 3.0, 0.0, 6.0]
    drawn = list(data.WeightedRandomSampler(weights, 20000, generator=mg.Generator().manual_seed(2)))
    counts = np.bincount(drawn, minlength=5) / len(drawn)
    assert counts[0] == counts[3] == 0
    np.testing.assert_allclose(counts[[1, 2, 4]], [0.1, 0.3, 0.6], atol=0.02)
    distinct = list(data.WeightedRandomSampler(mg.tensor(weights), 3, replacement=False))
    assert sorted(distinct) == [1, 2, 4]


@pytest.mark.parametrize("make", [
    lambda d: d.RandomSampler(range(3), replacement=1),
    lambda d: d.RandomSampler(range(3), num_samples=0),
    lambda d: d.WeightedRandomSampler([1.0, 2.0], num_samples=-1),
    lambda d: d.WeightedRandomSampler([1.0, 2.0], num_samples=2, replacement="yes"),
    lambda d: d.WeightedRandomSampler([[1.0, 2.0]], num_samples=2),
    lambda d: d.BatchSampler(range(3), batch_size=0, drop_last=False),
    lambda d: d.BatchSampler(range(3), batch_size=True, drop_last=False),
    lambda d: d.BatchSampler(range(3), batch_size=2, drop_last=None),
])
def test_sampler_errors_equal_pytorch(torch, make):
    with pytest.raises((ValueError, TypeError)) as expected:
        make(torch.utils.data)
    with pytest.raises(expected.type) as got:
        make(data)
    assert str(got.value) == str(expected.value)


def test_weighted_sampler_without_replacement_needs_enough_nonzero_weights():
    with pytest.raises(RuntimeError, match="without replacement"):
        data.WeightedRandomSampler([1.0, 0.0, 2.0], 3, replacement=False)
    with pytest.raises(RuntimeError, match="non-negative"):
        data.WeightedRandomSampler([1.0, -1.0], 1)


@pytest.mark.parametrize("drop_last", [False, True])
def test_batch_sampler_equals_pytorch(torch, drop_last):
    ours = data.BatchSampler(data.SequentialSampler(range(10)), 4, drop_last)
    theirs = torch.utils.data.BatchSampler(torch.utils.data.SequentialSampler(range(10)), 4, drop_last)
    assert list(ours) == list(theirs) and len(ours) == len(theirs)


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.5, 0.25, 0.25], [0.34, 0.33, 0.33], [1, 2, 3, 4]])
def test_random_split_sizes_equal_pytorch_and_partition_the_dataset(torch, lengths):
    ds = list(range(10))
    parts = data.random_split(ds, lengths, generator=mg.Generator().manual_seed(0))
    expected = torch.utils.data.random_split(ds, lengths)
    assert [len(p) for p in parts] == [len(p) for p in expected]
    assert all(isinstance(p, data.Subset) for p in parts)
    assert sorted(i for p in parts for i in p) == ds
    again = data.random_split(ds, lengths, generator=mg.Generator().manual_seed(0))
    assert [list(p) for p in parts] == [list(p) for p in again]


def test_random_split_errors_equal_pytorch(torch):
    for lengths in ([3, 3], [0.5, 0.6], [-0.2, 1.2]):
        with pytest.raises(ValueError) as expected:
            torch.utils.data.random_split(range(10), lengths)
        with pytest.raises(ValueError) as got:
            data.random_split(range(10), lengths)
        assert str(got.value) == str(expected.value)
    with pytest.warns(UserWarning) as record:
        data.random_split(range(2), [0.9, 0.05, 0.05])
    assert [str(w.message) for w in record] == [f"Length of split at index {i} is 0. This might result in an empty "
                                                "dataset." for i in (1, 2)]


def test_concat_dataset_and_subset_equal_pytorch(torch):
    parts = [list(range(3)), list(range(10, 15)), list(range(20, 22))]
    ours, theirs = data.ConcatDataset(parts), torch.utils.data.ConcatDataset(parts)
    assert len(ours) == len(theirs) and ours.cumulative_sizes == theirs.cumulative_sizes
    assert [ours[i] for i in range(-10, 10)] == [theirs[i] for i in range(-10, 10)]
    with pytest.raises(ValueError, match="absolute value of index should not exceed dataset length"):
        ours[-11]
    with pytest.raises(AssertionError, match="datasets should not be an empty iterable"):
        data.ConcatDataset([])
    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        data.ConcatDataset([Stream()])
    assert len(Squares(mg) + Squares(mg, 3)) == 10
    assert list(Stream(2) + Stream(3)) == list(Stream(2)) + list(Stream(3))
    sub = data.Subset(ours, [9, 0, 4])
    assert [sub[i] for i in range(3)] == [21, 0, 11] and len(sub) == 3
    assert sub.__getitems__([2, 0]) == [11, 21]


def test_tensor_dataset_indexing_and_size_check():
    x, y = mg.arange(12).reshape(4, 3), mg.arange(4)
    ds = data.TensorDataset(x, y)
    assert len(ds) == 4
    first = ds[1]
    assert isinstance(first, tuple) and first[0].tolist() == [3, 4, 5] and first[1].item() == 1
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        data.TensorDataset(x, mg.arange(3))


def test_dataset_getitems_is_used_for_whole_batches():
    class Batched(data.Dataset):
        calls = []

        def __len__(self):
            return 6

        def __getitems__(self, indices):
            self.calls.append(list(indices))
            return [float(i) for i in indices]

    batches = [b.tolist() for b in data.DataLoader(Batched(), batch_size=4)]
    assert batches == [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0]] and Batched.calls == [[0, 1, 2, 3], [4, 5]]


@pytest.mark.parametrize("kwargs", [
    {"sampler": [0, 1], "shuffle": True},
    {"batch_sampler": [[0]], "batch_size": 2},
    {"batch_sampler": [[0]], "drop_last": True},
    {"batch_size": None, "drop_last": True},
    {"num_workers": -1},
    {"prefetch_factor": 2},
    {"persistent_workers": True},
])
def test_loader_argument_errors_equal_pytorch(torch, kwargs):
    ours_ds, theirs_ds = tensor_datasets(torch)
    with pytest.raises(ValueError) as expected:
        torch.utils.data.DataLoader(theirs_ds, **kwargs)
    with pytest.raises(ValueError) as got:
        data.DataLoader(ours_ds, **kwargs)
    assert str(got.value) == str(expected.value)


def test_iterable_dataset_refuses_shuffle_and_samplers_like_pytorch(torch):
    TorchStream = stream_class(torch.utils.data.IterableDataset)
    for kwargs in ({"shuffle": True}, {"sampler": [0]}, {"batch_sampler": [[0]]}):
        with pytest.raises(ValueError) as expected:
            torch.utils.data.DataLoader(TorchStream(), **kwargs)
        with pytest.raises(ValueError) as got:
            data.DataLoader(Stream(), **kwargs)
        assert str(got.value) == str(expected.value)


def test_workers_fall_back_to_serial_loading_with_one_warning(monkeypatch):
    from minigrad.utils.data import dataloader
    monkeypatch.setattr(dataloader, "_warned_serial", False)
    ds = data.TensorDataset(mg.arange(8))
    loader = data.DataLoader(ds, batch_size=3, num_workers=2, persistent_workers=True, prefetch_factor=4)
    with pytest.warns(UserWarning, match="num_workers=2.*calling process"):
        first = [b[0].tolist() for b in loader]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        second = [b[0].tolist() for b in loader]
    assert first == second == [b[0].tolist() for b in data.DataLoader(ds, batch_size=3)]
    assert data.get_worker_info() is None


def test_reachable_as_torch_utils_data():
    import minigrad as torch_like
    assert torch_like.utils.data.DataLoader is data.DataLoader
    it = iter(data.DataLoader(data.TensorDataset(mg.arange(5)), batch_size=2))
    assert len(it) == 3 and next(it)[0].tolist() == [0, 1]
