"""``mg.load`` spends bounded memory and time on hostile files (issue 24, item 3).

Every hostile file is built by hand in ``tests/hostile_checkpoints.py`` (zip bytes with ``struct``, deflate
with ``zlib``, pickle opcodes; never torch). Memory is measured with ``tracemalloc`` (Python's and NumPy's
allocations are traced); hangs are guarded by running the load in a subprocess with a timeout. No test
asserts a time. ``bench/bench_load_attacks.py`` prints what each file costs, before and after.
"""
import io
import os
import pickle
import subprocess
import sys
import tracemalloc
import zipfile
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
from minigrad import serialization
from tests import hostile_checkpoints as hostile
from tests.mirror import torch_or_skip
from tests.test_bad_state import in_thread

MiB = 2 ** 20
ROOT = Path(__file__).resolve().parent.parent


def load_measured(data, **kwargs):
    """``(result or the exception raised, peak bytes traced while loading)`` for the file ``data`` (bytes)."""
    source = io.BytesIO(data)
    tracemalloc.start()
    try:
        outcome = mg.load(source, **kwargs)
    except Exception as err:  # noqa: BLE001  (the tests check the type)
        outcome = err
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return outcome, peak


def load_in_subprocess(data, tmp_path, timeout=60):
    """Load ``data`` in a fresh interpreter killed after ``timeout`` seconds (a hang fails the test instead of
    hanging the suite); ``(exception type name, message)``."""
    path = tmp_path / "hostile.pt"
    path.write_bytes(data)
    code = ("import sys, minigrad as mg\ntry:\n    mg.load(sys.argv[1])\n    print('loaded')\n"
            "except Exception as err:\n    print(type(err).__name__)\n    print(str(err))\n")
    try:
        done = subprocess.run([sys.executable, "-c", code, str(path)], cwd=ROOT, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"mg.load did not finish within {timeout} s")
    assert done.returncode == 0, done.stderr[-2000:]
    kind, _, message = done.stdout.partition("\n")
    return kind, message.strip()


# =========================================================================== zip entries
@pytest.mark.parametrize("member", hostile.MEMBERS)
def test_an_entry_inflating_to_3_GiB_is_refused_before_it_is_unpacked(member):
    data = hostile.bomb(member)  # ~3 MB
    assert len(data) < 4 * MiB
    assert max(i.file_size for i in zipfile.ZipFile(io.BytesIO(data)).infolist()) > 3 * 2 ** 30 - MiB
    error, peak = load_measured(data)
    if member == "byteorder":  # a few bytes are all it may have
        assert isinstance(error, RuntimeError) and "should have at most 16" in str(error), error
    else:
        assert isinstance(error, ValueError) and "max_bytes" in str(error), error
        assert f"on a file of {len(data)} bytes" in str(error)
    assert peak < 4 * MiB, f"{peak / MiB:.0f} MiB allocated"


@pytest.mark.parametrize("member", hostile.MEMBERS)
def test_a_directory_claiming_3_GiB_for_a_small_stored_entry_is_refused_before_allocating(member):
    data = hostile.lying_directory(member)
    assert len(data) < 1000
    error, peak = load_measured(data)
    assert isinstance(error, RuntimeError), error
    assert "the zip directory says the entry" in str(error) and "more than the file holds" in str(error)
    assert peak < 1 * MiB, f"{peak / MiB:.0f} MiB allocated"


def test_a_deflated_entry_declaring_more_than_deflate_can_give_is_refused():
    name, packed, method, crc, _, _ = hostile.stored("archive/data/0", bytes(1000))
    deflated = hostile.deflated_zeros("archive/data/0", 2 * MiB)
    lying = deflated[:5] + (2000 * deflated[4],)  # declares 2000 times its deflated size
    data = hostile.torch_zip(hostile.tensor_pickle("0", 4, 4), [("0", lying)])
    error, peak = load_measured(data, max_bytes=float("inf"))
    assert isinstance(error, RuntimeError) and "can hold" in str(error), error
    assert peak < 1 * MiB


def test_an_entry_shorter_than_it_declares_is_refused():
    """A deflated entry that declares 40 kB more than it inflates to (possible for its size: 2 MiB of zeros
    deflate about 1000-fold, less than deflate's 1032)."""
    deflated = hostile.deflated_zeros("archive/data/0", 2 * MiB)
    short = deflated[:5] + (2 * MiB + 40_000,)
    numel = (2 * MiB + 40_000) // 4
    data = hostile.torch_zip(hostile.tensor_pickle("0", numel, numel), [("0", short)])
    error, _ = load_measured(data)
    assert isinstance(error, RuntimeError) and "ends after" in str(error), error


def test_entries_compressed_otherwise_than_deflate_are_refused():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_BZIP2) as z:
        z.writestr("minigrad/structure.json", hostile.minigrad_structure(None))
    error, _ = load_measured(buffer.getvalue())
    assert isinstance(error, RuntimeError) and "compressed with method 12" in str(error), error


def test_a_deflated_checkpoint_within_the_budget_loads_and_max_bytes_raises_the_budget():
    small = hostile.bomb("data/0", 8 * MiB)  # 8 kB unpacking to 8 MiB: within 64 MiB
    loaded, peak = load_measured(small)
    assert isinstance(loaded, mg.Tensor) and loaded.shape == (2 * MiB,) and not loaded._data.any()
    assert peak < 8 * MiB + 3 * MiB  # the storage, a chunk and zlib's buffers
    big = hostile.bomb("data/0", 80 * MiB)  # 80 kB unpacking to 80 MiB: more than the default budget
    error, _ = load_measured(big)
    assert isinstance(error, ValueError) and "pass max_bytes=" in str(error)
    assert mg.load(io.BytesIO(big), max_bytes=100 * MiB).shape == (20 * MiB,)
    error, _ = load_measured(small, max_bytes=4 * MiB)  # and lowers it
    assert isinstance(error, ValueError) and "max_bytes=4194304" in str(error)


def test_a_real_50_MB_tensor_loads_with_one_copy_in_memory(tmp_path):
    values = np.random.default_rng(0).standard_normal(50 * MiB // 8)
    mg.save({"w": mg.tensor(values)}, tmp_path / "big.mg")
    torch_style = hostile.torch_zip(hostile.tensor_pickle("0", values.size, values.size, "DoubleStorage"),
                                    [("0", values.tobytes())])
    (tmp_path / "big.pt").write_bytes(torch_style)
    del torch_style
    for path in (tmp_path / "big.mg", tmp_path / "big.pt"):
        tracemalloc.start()
        loaded = mg.load(path)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        loaded = loaded["w"] if isinstance(loaded, dict) else loaded
        np.testing.assert_array_equal(loaded.numpy(), values)
        assert peak < values.nbytes + 4 * MiB, f"{path.name}: {peak / MiB:.1f} MiB for {values.nbytes / MiB:.0f} MiB"


def test_a_real_torch_checkpoint_of_50_MB_loads(tmp_path):
    torch = torch_or_skip()
    weight = torch.randn(50 * MiB // 4)
    torch.save({"w": weight, "step": 3}, tmp_path / "big.pt")
    loaded = mg.load(tmp_path / "big.pt")
    np.testing.assert_array_equal(loaded["w"].numpy(), weight.numpy())
    assert loaded["step"] == 3


def test_a_big_endian_storage_is_swapped_in_place():
    values = np.arange(MiB, dtype=">f8")
    data = hostile.torch_zip(hostile.tensor_pickle("0", MiB, MiB, "DoubleStorage"), [("0", values.tobytes())],
                             byteorder=b"big")
    loaded, peak = load_measured(data)
    np.testing.assert_array_equal(loaded.numpy(), np.arange(MiB, dtype=np.float64))
    assert loaded._data.dtype.isnative
    assert peak < values.nbytes + 2 * MiB


# =========================================================================== the pickle
def test_a_memo_index_past_what_the_pickle_can_hold_is_refused():
    assert len(hostile.HUGE_MEMO_PICKLE) == 9
    error, peak = load_measured(hostile.huge_memo())
    assert isinstance(error, pickle.UnpicklingError), error
    assert "memo slot 268435456" in str(error) and "pickle of 9 bytes" in str(error)
    assert peak < 1 * MiB


def test_memo_indices_a_writer_uses_still_load():
    """pickle numbers memo slots 0, 1, 2...; so does torch.save; any index below the pickle's length loads."""
    value = [1, "a", (2, 3)]
    data = hostile.torch_zip(pickle.dumps([value, value], protocol=2) + b"")
    assert mg.load(io.BytesIO(data)) == [value, value]
    sparse = b"\x80\x02Nr\x20\x00\x00\x00h\x20\x86" + b"." + b"\x00" * 40  # slot 32 of a 53-byte pickle
    loaded = mg.load(io.BytesIO(hostile.torch_zip(sparse)))
    assert loaded == (None, None)


@pytest.mark.parametrize("pickled, message", [
    (b"\x80\x02\x95" + (10 ** 9).to_bytes(8, "little") + b"N.", "frame of 1000000000 bytes"),
    (b"\x80\x02N\x86.", "pops an empty stack"),
    (b"\x80\x02]Ne.", "APPENDS without a MARK"),
])
def test_malformed_stacks_and_frames_are_refused_before_unpickling(pickled, message, monkeypatch):
    monkeypatch.setattr(serialization._TorchUnpickler, "load", lambda self: pytest.fail("unpickler ran"))
    error, _ = load_measured(hostile.torch_zip(pickled))
    assert isinstance(error, pickle.UnpicklingError) and message in str(error), error


def charged_and_peak(data, budget_attribute="used"):
    """``(bytes charged to the budget, peak bytes traced)`` for loading ``data`` with no limit."""
    budgets = []
    real_init = serialization._Budget.__init__

    def recording_init(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        budgets.append(self)

    serialization._Budget.__init__ = recording_init
    try:
        outcome, peak = load_measured(data, max_bytes=float("inf"))
    finally:
        serialization._Budget.__init__ = real_init
    return getattr(budgets[0], budget_attribute), peak, outcome


N = 20_000
_STORAGE = (b"(" + hostile.unicode("storage") + b"ctorch\nFloatStorage\n" + hostile.unicode("0")
            + hostile.unicode("cpu") + hostile.int32(4) + b"tQ")
_RECORD_PARTS = (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\nq\x01" + _STORAGE + b"q\x02" + hostile.int32(0)
                 + b"q\x03" + hostile.int_tuple(4) + b"q\x04" + hostile.int_tuple(1)
                 + b"q\x05ccollections\nOrderedDict\n)Rq\x06")
PICKLE_PATTERNS = {  # what a file can pack most objects into, a few bytes each
    "empty lists": b"\x80\x02](" + b"]" * N + b"e.",
    "empty dicts": b"\x80\x02](" + b"}" * N + b"e.",
    "empty sets": b"\x80\x02](" + b"\x8f" * N + b"e.",
    "None": b"\x80\x02](" + b"N" * N + b"e.",
    "memoized None": b"\x80\x02](" + b"N\x94" * N + b"e.",
    "memoized strings": b"\x80\x02](" + b"".join(b"\x8c\x01" + bytes([65 + i % 26]) + b"\x94" for i in range(N))
                        + b"e.",
    "distinct ints": b"\x80\x02](" + b"".join(hostile.int32(i + 10 ** 6) for i in range(N)) + b"e.",
    "non-BMP strings": b"\x80\x02](" + b"\x8c\x04\xf0\x9f\x98\x80" * N + b"e.",
    "pairs of one list": b"\x80\x02]q\x00](" + b"h\x00h\x00\x86" * N + b"e.",
    "sets of one int": b"\x80\x02](" + b"".join(b"\x8f(" + hostile.int32(i) + b"\x90" for i in range(N)) + b"e.",
    "dicts of one item": b"\x80\x02](" + b"}K\x01Ns" * N + b"e.",
    "one big dict": b"\x80\x02}(" + b"".join(hostile.int32(i) + b"N" for i in range(N)) + b"u.",
    "one big set": b"\x80\x02\x8f(" + b"".join(hostile.int32(i) for i in range(N)) + b"\x90.",
    "tensors sharing one storage": _RECORD_PARTS + b"](" + b"h\x01(h\x02h\x03h\x04h\x05\x89h\x06tR" * (N // 4) + b"e.",
}


@pytest.mark.parametrize("name", list(PICKLE_PATTERNS))
def test_the_pickle_estimate_bounds_the_memory_its_objects_take(name):
    data = hostile.torch_zip(PICKLE_PATTERNS[name], [("0", bytes(16))])
    charged, peak, outcome = charged_and_peak(data)
    assert not isinstance(outcome, Exception), outcome
    assert charged >= peak, f"charged {charged / MiB:.1f} MiB, used {peak / MiB:.1f} MiB"
    assert charged < 8 * peak + MiB, "the estimate is needlessly pessimistic"


JSON_PATTERNS = {
    "ints": [0] * N,
    "floats": [1.5] * N,
    "empty lists": [{"type": "list", "items": []}] * N,
    "tensors": [hostile.TENSOR_NODE] * N,
    "strings": ["ab"] * N,
    "non-BMP strings": ["\U0001F600"] * N,
    "dicts of distinct keys": {"type": "dict", "items": [[i, None] for i in range(N)]},
}


@pytest.mark.parametrize("name", list(JSON_PATTERNS))
def test_the_structure_estimate_bounds_the_memory_its_objects_take(name):
    root = JSON_PATTERNS[name]
    root = root if isinstance(root, dict) else {"type": "list", "items": root}
    data = hostile.zip_bytes([hostile.stored("minigrad/structure.json", hostile.minigrad_structure(root)),
                              hostile.stored("minigrad/arrays/0.npy", hostile.npy_header((2,)) + bytes(8))])
    charged, peak, outcome = charged_and_peak(data)
    assert not isinstance(outcome, Exception), outcome
    assert charged >= peak, f"charged {charged / MiB:.1f} MiB, used {peak / MiB:.1f} MiB"


def test_raw_json_containers_cost_no_more_than_estimated():
    """Lists and dicts json.loads makes before the decoder refuses them: the densest JSON there is."""
    for text in (b"[" + b"[]," * N + b"[]]", b"[" + b"{}," * N + b"{}]", b"[" + b"[[]]," * N + b"[]]"):
        charged, peak, outcome = charged_and_peak(hostile.zip_bytes([hostile.stored("minigrad/structure.json", text)]))
        assert isinstance(outcome, RuntimeError)
        assert charged >= peak, f"charged {charged / MiB:.1f} MiB, used {peak / MiB:.1f} MiB"


def test_a_pickle_of_many_objects_is_refused_before_unpickling_it(monkeypatch):
    """Half a million one-byte opcodes (EMPTY_SET: 540 bytes of sets each) stop at the budget."""
    monkeypatch.setattr(serialization._TorchUnpickler, "load", lambda self: pytest.fail("unpickler ran"))
    for opcode in (b"\x8f", b"N"):
        error, peak = load_measured(hostile.many_opcodes(MiB // 2, opcode), max_bytes=16 * MiB)
        assert isinstance(error, ValueError) and "the objects data.pkl makes" in str(error), error
        assert peak < 4 * MiB


# =========================================================================== hashes that collide
def test_dicts_of_colliding_ints_or_complex_numbers_are_refused(monkeypatch):
    error, _ = load_measured(hostile.torch_zip(hostile.colliding_int_keys(5000)))
    assert isinstance(error, pickle.UnpicklingError) and "more than 4096 ints" in str(error), error
    error, _ = load_measured(hostile.torch_zip(hostile.colliding_complex_keys(5000)))
    assert isinstance(error, pickle.UnpicklingError) and "more than 4096 complex" in str(error), error
    error, _ = load_measured(hostile.colliding_json_keys(5000))
    assert isinstance(error, RuntimeError) and "more than 4096 complex numbers or ints" in str(error), error
    # The keys do collide (all hash to 0):
    assert len({hash(k * hostile.COLLIDING_INT) for k in range(1, 100)}) == 1
    assert len({hash(complex(1000003.0 * k, -float(k))) for k in range(2, 100)}) == 1  # hash(-1.0) is -2


def test_a_few_huge_ints_and_complex_numbers_still_load():
    value = {2 ** 64 + 1: complex(1, 2), "seeds": [2 ** 63 + k for k in range(100)]}
    data = hostile.torch_zip(pickle.dumps(value, protocol=2))
    assert mg.load(io.BytesIO(data)) == value
    buffer = io.BytesIO()
    mg.save(value, buffer)
    assert mg.load(io.BytesIO(buffer.getvalue())) == value


# =========================================================================== messages
@pytest.mark.parametrize("how", ["persid", "size", "complex"])
def test_refusals_quote_a_few_hundred_characters_of_memo_shared_structures(how, tmp_path):
    """2**60 leaves in under 600 bytes of pickle: repr would never finish (a subprocess guards the hang)."""
    small = hostile.shared_repr(20, how)
    error, peak = load_measured(small)
    assert isinstance(error, pickle.UnpicklingError), error
    assert len(str(error)) < 800 and "..." in str(error)
    assert peak < 1 * MiB
    kind, message = load_in_subprocess(hostile.shared_repr(60, how), tmp_path)
    assert kind == "UnpicklingError" and len(message) < 800 and message.count("[") > 20


def test_refusals_quote_a_few_hundred_characters_of_long_names_and_strings():
    long = "x" * 100_000
    cases = [
        hostile.torch_zip(b"\x80\x02c" + long.encode() + b"\nsystem\n."),  # a global's module name
        hostile.torch_zip(b"\x80\x02" + hostile.unicode(long) + b"Q."),  # a persistent id
        hostile.torch_zip(hostile.tensor_pickle(long, 1, 1)),  # a storage key not in the archive
        hostile.torch_zip(hostile.tensor_pickle("0", 1, 1), [("0", bytes(4))], byteorder=b"middle-endian-ish"),
        hostile.zip_bytes([hostile.stored("minigrad/structure.json", hostile.minigrad_structure({"type": long}))]),
        hostile.zip_bytes([hostile.stored("minigrad/structure.json",
                                          hostile.minigrad_structure([{"a": [long] * 10}]))]),
    ]
    for data in cases:
        error, _ = load_measured(data)
        assert isinstance(error, (RuntimeError, pickle.UnpicklingError)), error
        assert len(str(error)) < 800, str(error)[:300]


def test_preview_is_repr_for_small_values_and_bounded_for_any():
    shared = []
    for _ in range(60):
        shared = [shared, shared]
    looped = []
    looped.append(looped)
    small = [1, (2,), {"a": None}, {3}, OrderedDict(b=2.5), "s", b"x", 1j, True]
    assert serialization._preview(small) == repr(small).replace("OrderedDict([('b', 2.5)])", "OrderedDict({'b': 2.5})")
    for value in (shared, looped, "y" * 10 ** 6, [[[[[[1]]]]]] * 10 ** 6, 7 ** 5000):
        text = serialization._preview(value)
        assert len(text) <= serialization._PREVIEW_CHARS + 3
    assert serialization._preview(7 ** 5000) == "<an int of 14037 bits>"


# =========================================================================== safetensors
def test_load_safetensors_refuses_what_is_not_a_regular_file_before_opening_it(tmp_path):
    pytest.importorskip("safetensors")
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    error = in_thread(lambda: serialization.load_safetensors(fifo))
    assert isinstance(error, OSError) and "load_safetensors refuses to read a FIFO" in str(error), repr(error)
    error = in_thread(lambda: serialization.load_safetensors(os.devnull))
    assert isinstance(error, OSError) and "character device" in str(error), repr(error)
    assert isinstance(in_thread(lambda: serialization.load_safetensors(tmp_path)), IsADirectoryError)


def test_load_safetensors_max_bytes(tmp_path):
    pytest.importorskip("safetensors")
    path = tmp_path / "t.safetensors"
    serialization.save_safetensors({"w": mg.arange(1000.0)}, path)
    with pytest.raises(ValueError, match="max_bytes"):
        serialization.load_safetensors(path, max_bytes=100)
    loaded = serialization.load_safetensors(path, max_bytes=path.stat().st_size)
    np.testing.assert_array_equal(loaded["w"].numpy(), np.arange(1000.0))
    loaded["w"].add_(1.0)  # writable, its own memory
