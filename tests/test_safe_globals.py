"""Globals a user trusts in PyTorch checkpoints (``serialization.add_safe_globals`` / ``safe_globals`` /
``get_safe_globals`` / ``clear_safe_globals``): refused until listed, loaded once listed, refused again after the
``with`` block; a trusted object's tensors become minigrad tensors; what is not listed stays refused, and the
opcode that instantiates a class is refused unless something is trusted. Handmade archives run without PyTorch;
files written by ``torch.save`` are compared with ``torch.load``."""
import argparse
import collections
import dataclasses
import io
import pickle
import zipfile

import numpy as np
import pytest

import minigrad as mg
from minigrad import serialization

from .mirror import torch_or_skip


@dataclasses.dataclass
class RunInfo:
    """A small class of a project's own, saved in its checkpoints."""
    name: str
    scores: list


class Bag(dict):
    """A dict of a project's own (a record of metrics, say)."""


class Trail(list):
    """A list of a project's own."""


Pair = collections.namedtuple("Pair", "left right")


def archive(obj, protocol=2):
    """``obj`` pickled into a zip laid out as torch.save lays it out (no tensors: no storages needed)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zipped:
        zipped.writestr("archive/data.pkl", pickle.dumps(obj, protocol=protocol))
        zipped.writestr("archive/byteorder", b"little")
        zipped.writestr("archive/version", b"3\n")
    buffer.seek(0)
    return buffer


@pytest.fixture(autouse=True)
def nothing_trusted():
    serialization.clear_safe_globals()
    yield
    serialization.clear_safe_globals()


CHECKPOINT = {"args": argparse.Namespace(lr=0.1, layers=[64, 64]), "raw": b"\x00\xffab", "epoch": 3}


def test_refused_until_listed_then_loaded_then_refused_again():
    with pytest.raises(pickle.UnpicklingError, match=r"argparse\.Namespace.*add_safe_globals"):
        mg.load(archive(CHECKPOINT))
    with serialization.safe_globals([argparse.Namespace]):
        assert serialization.get_safe_globals() == [argparse.Namespace]
        loaded = mg.load(archive(CHECKPOINT))
    assert loaded == CHECKPOINT and type(loaded["args"]) is argparse.Namespace
    assert serialization.get_safe_globals() == []
    with pytest.raises(pickle.UnpicklingError, match="argparse.Namespace"):
        mg.load(archive(CHECKPOINT))


def test_add_and_clear_and_the_named_form():
    serialization.add_safe_globals([(RunInfo, f"{RunInfo.__module__}.RunInfo")])
    loaded = mg.load(archive({"run": RunInfo("a", [1, 2.5])}))
    assert loaded["run"] == RunInfo("a", [1, 2.5])
    serialization.add_safe_globals([argparse.Namespace])
    assert serialization.get_safe_globals() == [(RunInfo, f"{RunInfo.__module__}.RunInfo"), argparse.Namespace]
    serialization.clear_safe_globals()
    with pytest.raises(pickle.UnpicklingError, match="RunInfo"):
        mg.load(archive({"run": RunInfo("a", [])}))
    with pytest.raises(ValueError, match="tuple of length 2"):
        serialization.add_safe_globals([(RunInfo, "x", "y")])
    with pytest.raises(TypeError, match="str of callable full path"):
        serialization.add_safe_globals([(RunInfo, 3)])
    assert serialization.get_safe_globals() == []          # a bad list adds nothing


def test_bytes_are_read_without_listing_anything():
    assert mg.load(archive({"raw": b"\x00\x01\xfe"})) == {"raw": b"\x00\x01\xfe"}


def test_what_is_not_listed_stays_refused():
    class Payload:
        def __reduce__(self):
            return (print, ("called",))
    with serialization.safe_globals([argparse.Namespace]):
        with pytest.raises(pickle.UnpicklingError, match="builtins.print"):
            mg.load(archive({"args": argparse.Namespace(a=1), "payload": Payload()}))


def raw_archive(pickled):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zipped:
        zipped.writestr("archive/data.pkl", pickled)
    buffer.seek(0)
    return buffer


def test_instantiating_a_class_is_refused_unless_something_is_trusted():
    # NEWOBJ on an admitted global (OrderedDict): refused as an opcode torch.save does not write ...
    newobj = b"\x80\x02ccollections\nOrderedDict\n)\x81."
    with pytest.raises(pickle.UnpicklingError, match="opcode NEWOBJ"):
        mg.load(raw_archive(newobj))
    # ... and once something is trusted, refused by pickle itself: the admitted globals are not classes
    with serialization.safe_globals([argparse.Namespace]), pytest.raises(pickle.UnpicklingError):
        mg.load(raw_archive(newobj))
    # a trusted function named where the pickle wants a class: refused too
    forged = pickle.dumps(argparse.Namespace(), protocol=2).replace(b"cargparse\nNamespace\n", b"cbuiltins\nlen\n")
    with serialization.safe_globals([len]), pytest.raises(pickle.UnpicklingError):
        mg.load(raw_archive(forged))


def test_torch_save_checkpoints_as_torch_load_reads_them(tmp_path):
    torch = torch_or_skip()
    path = tmp_path / "ckpt.pt"
    torch.save({"model": {"w": torch.arange(4.0).reshape(2, 2)}, "args": argparse.Namespace(lr=0.1, t=torch.ones(2)),
                "best": np.float64(0.25), "run": RunInfo("r", [1]), "raw": b"\x01"}, path)
    steps = [[], [argparse.Namespace], [argparse.Namespace, RunInfo],
             [argparse.Namespace, RunInfo, np._core.multiarray.scalar]]
    for trusted in steps:          # each step short of the numpy globals: both refuse
        with torch.serialization.safe_globals(trusted), pytest.raises(pickle.UnpicklingError):
            torch.load(path)
        with serialization.safe_globals(trusted), pytest.raises(pickle.UnpicklingError):
            mg.load(path)
    # PyTorch also wants the dtype's class to set its state (numpy.dtypes.Float64DType); minigrad lets the trusted
    # numpy.dtype set up what it made
    everything = steps[-1] + [np.dtype, np.dtypes.Float64DType]
    with torch.serialization.safe_globals(everything):
        theirs = torch.load(path)
    with serialization.safe_globals(everything):
        mine = mg.load(path)
    assert isinstance(mine["args"].t, mg.Tensor) and mine["args"].lr == theirs["args"].lr
    np.testing.assert_array_equal(mine["args"].t.numpy(), theirs["args"].t.numpy())
    np.testing.assert_array_equal(mine["model"]["w"].numpy(), theirs["model"]["w"].numpy())
    assert mine["best"] == theirs["best"] and type(mine["best"]) is np.float64
    assert mine["run"] == theirs["run"] and mine["raw"] == theirs["raw"]


def test_trusted_containers_hold_minigrad_tensors(tmp_path):
    """A trusted named tuple of a project's own: its items' tensors become minigrad tensors, as its attributes'
    do, and it loads as in PyTorch. A trusted dict or list subclass also loads, its items converted alike, where
    PyTorch's weights-only load refuses to fill anything but a dict, OrderedDict, Counter or list (listed in
    docs/differences.md)."""
    torch = torch_or_skip()
    path = tmp_path / "ckpt.pt"
    torch.save({"pair": Pair(torch.arange(4.0), "x")}, path)
    with torch.serialization.safe_globals([Pair]):
        theirs = torch.load(path)
    with serialization.safe_globals([Pair]):
        mine = mg.load(path)
    assert type(mine["pair"]) is Pair and isinstance(mine["pair"].left, mg.Tensor) and mine["pair"].right == "x"
    np.testing.assert_array_equal(mine["pair"].left.numpy(), theirs["pair"].left.numpy())

    bag = Bag(w=torch.arange(3.0), n=3)
    bag.note = torch.ones(1)
    torch.save({"bag": bag, "trail": Trail([torch.zeros(2), 2])}, path)
    with torch.serialization.safe_globals([Bag, Trail]), pytest.raises(pickle.UnpicklingError, match="Can only"):
        torch.load(path)
    with serialization.safe_globals([Bag, Trail]):
        mine = mg.load(path)
    assert type(mine["bag"]) is Bag and type(mine["trail"]) is Trail
    for ours, want in [(mine["bag"]["w"], [0.0, 1.0, 2.0]), (mine["bag"].note, [1.0]), (mine["trail"][0], [0.0, 0.0])]:
        assert isinstance(ours, mg.Tensor)
        np.testing.assert_array_equal(ours.numpy(), want)
    assert mine["bag"]["n"] == 3 and mine["trail"][1] == 2


def test_get_unsafe_globals_in_checkpoint():
    data = archive({"args": argparse.Namespace(a=1), "run": RunInfo("r", []), "raw": b"x"})
    assert serialization.get_unsafe_globals_in_checkpoint(data) == ["argparse.Namespace",
                                                                    f"{RunInfo.__module__}.RunInfo"]
    data.seek(0)
    with serialization.safe_globals([RunInfo]):
        assert serialization.get_unsafe_globals_in_checkpoint(data) == ["argparse.Namespace"]
    own = io.BytesIO()
    mg.save({"w": mg.ones(2)}, own)
    own.seek(0)
    with pytest.raises(ValueError, match="Expected input to be a checkpoint returned by torch.save"):
        serialization.get_unsafe_globals_in_checkpoint(own)
    with pytest.raises(ValueError, match="Expected input to be a checkpoint returned by torch.save"):
        serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(b"not a zip"))


def test_get_unsafe_globals_in_checkpoint_as_pytorch(tmp_path):
    torch = torch_or_skip()
    path = tmp_path / "ckpt.pt"
    torch.save({"w": torch.ones(2), "args": argparse.Namespace(lr=0.1), "best": np.float64(0.25),
                "run": RunInfo("r", [1]), "raw": b"\x01"}, path)
    for trusted in ([], [argparse.Namespace, RunInfo]):
        with torch.serialization.safe_globals(trusted):
            theirs = torch.serialization.get_unsafe_globals_in_checkpoint(path)
        with serialization.safe_globals(trusted):
            assert serialization.get_unsafe_globals_in_checkpoint(path) == sorted(theirs)
