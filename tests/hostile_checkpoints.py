"""Hostile checkpoint files for ``mg.load``, built by hand (``zlib``, ``struct`` and pickle opcodes; never torch).

Shared by ``tests/test_load_budget.py`` and ``bench/load_attacks.py`` (which measures what each costs).
Every builder returns the file's bytes; none of them allocates what the file claims.
"""
import struct
import zlib

GiB = 2 ** 30
STORED, DEFLATED = 0, 8


# =========================================================================== zip archives written byte by byte
def zip_bytes(entries):
    """A zip archive of ``entries``: ``(name, data, method, crc, declared_compressed, declared_size)`` tuples,
    ``data`` being the member's bytes as they lie in the file (already deflated for ``DEFLATED``). The sizes
    are written into the local header and the central directory as given (so they may lie)."""
    body, directory, offset = [], [], 0
    for name, data, method, crc, compressed, size in entries:
        name = name.encode()
        #                          signature  version flags method time date crc  compressed size  name extra
        local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0x21, crc, compressed, size, len(name), 0)
        body += [local, name, data]
        directory += [struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0x21, crc, compressed, size,
                                  len(name), 0, 0, 0, 0, 0, offset), name]
        offset += len(local) + len(name) + len(data)
    directory = b"".join(directory)
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(directory), offset, 0)
    return b"".join(body) + directory + end


def stored(name, data):
    return (name, data, STORED, zlib.crc32(data), len(data), len(data))


_ZERO_PIECES = {}


def deflated_zeros(name, nbytes, prefix=b"", real_crc=None):
    """A member whose deflate stream inflates to ``prefix`` and then zeros, about ``nbytes`` in all (the zeros
    are whole MiBs), about 1000 times smaller than that. The stream is one compressed 1 MiB block of zeros
    repeated: a full flush ends each block byte-aligned with no history, so every block is the same.
    ``real_crc`` (default: for up to 128 MiB) computes the true crc32; otherwise it is 0 and the member fails
    its check only once read to the end."""
    chunk = 2 ** 20
    if chunk not in _ZERO_PIECES:
        squeezer = zlib.compressobj(9, zlib.DEFLATED, -15)
        _ZERO_PIECES[chunk] = squeezer.compress(bytes(chunk)) + squeezer.flush(zlib.Z_FULL_FLUSH)
    squeezer = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = squeezer.compress(prefix) + squeezer.flush(zlib.Z_FULL_FLUSH)
    repeats = (nbytes - len(prefix)) // chunk
    data = head + _ZERO_PIECES[chunk] * repeats + zlib.compressobj(9, zlib.DEFLATED, -15).flush()
    crc = 0
    if real_crc or (real_crc is None and nbytes <= 128 * chunk):
        crc, zeros = zlib.crc32(prefix), bytes(chunk)
        for _ in range(repeats):
            crc = zlib.crc32(zeros, crc)
    return (name, data, DEFLATED, crc, len(data), len(prefix) + repeats * chunk)


def lying_stored(name, data, declared):
    """A stored member of ``data`` whose local header and central directory both claim ``declared`` bytes."""
    return (name, data, STORED, zlib.crc32(data), declared, declared)


# =========================================================================== pickle opcodes
def unicode(text):
    return b"X" + struct.pack("<I", len(text.encode())) + text.encode()


def int32(value):
    return b"J" + struct.pack("<i", value)


def int_tuple(*values):
    return b"(" + b"".join(int32(v) for v in values) + b"t"


def tensor_pickle(key, numel, size, storage_type="FloatStorage"):
    """The protocol 2 pickle torch.save writes for one contiguous 1-d tensor of ``size`` elements viewing
    the storage ``key`` of ``numel`` elements (``_rebuild_tensor_v2(storage, 0, (size,), (1,), False, {})``)."""
    storage = (b"(" + unicode("storage") + b"ctorch\n" + storage_type.encode() + b"\n" + unicode(key)
               + unicode("cpu") + int32(numel) + b"tQ")
    return (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(" + storage + int32(0) + int_tuple(size) + int_tuple(1)
            + b"\x89ccollections\nOrderedDict\n)RtR.")


def torch_zip(pickled, storages=(), byteorder=b"little", pickle_entry=None, byteorder_entry=None):
    """The entries of a torch.save-style archive: ``archive/data.pkl`` (``pickled`` stored, or the entry
    ``pickle_entry``), ``archive/byteorder`` and ``archive/data/<key>`` for each ``(key, entry-or-bytes)``."""
    entries = [pickle_entry or stored("archive/data.pkl", pickled),
               byteorder_entry or stored("archive/byteorder", byteorder)]
    for key, data in storages:
        entries.append(data if isinstance(data, tuple) else stored(f"archive/data/{key}", data))
    return zip_bytes(entries)


def shared_list_pickle(levels):
    """A pickle of ``levels`` nested lists, each holding the one below twice (memo-shared): a few bytes
    per level, ``2 ** levels`` leaves when walked as a tree (``repr`` walks it so)."""
    out = b"\x80\x02]q\x00"  # level 0: [] in memo 0
    for level in range(1, levels + 1):  # EMPTY_LIST, BINPUT level, MARK, BINGET level - 1 (twice), APPENDS
        out += b"]q" + bytes([level]) + b"(h" + bytes([level - 1]) + b"h" + bytes([level - 1]) + b"e"
    return out


def refused_with(structure_ops, top, how):
    """A pickle that hands the structure ``structure_ops`` build (in memo slot ``top``) to something mg.load
    refuses with a message about it: ``how`` is 'persid' (a persistent id that is not a storage), 'size'
    (``torch.Size`` of it) or 'complex' (``complex`` of it)."""
    fetch = b"h" + bytes([top])
    if how == "persid":
        return structure_ops + fetch + b"Q."
    callee = {"size": b"ctorch\nSize\n", "complex": b"c__builtin__\ncomplex\n"}[how]
    return structure_ops + callee + fetch + b"\x85R."


# =========================================================================== minigrad's own format
def npy_header(shape, descr="<f4"):
    header = repr({"descr": descr, "fortran_order": False, "shape": shape}).encode("latin1")
    header += b" " * (63 - (len(header) + 10) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header


def minigrad_structure(root):
    import json

    return json.dumps({"format": "minigrad", "version": 1, "root": root}).encode()


TENSOR_NODE = {"type": "tensor", "array": 0, "requires_grad": False}


# =========================================================================== the attacks
def bomb(member, inflated=3 * GiB):
    """A zip of about ``inflated / 1000`` bytes (3 MB for 3 GiB) in which ``member`` inflates to ``inflated``
    bytes: 'data/0' (a torch storage), 'data.pkl', 'structure.json', '.npy' or 'byteorder'."""
    if member == "data/0":
        numel = inflated // 4
        return torch_zip(tensor_pickle("0", numel, numel), [("0", deflated_zeros("archive/data/0", inflated))])
    if member == "data.pkl":
        return torch_zip(b"", pickle_entry=deflated_zeros("archive/data.pkl", inflated, prefix=b"\x80\x02N"))
    if member == "byteorder":
        return torch_zip(tensor_pickle("0", 1, 1), [("0", bytes(4))],
                         byteorder_entry=deflated_zeros("archive/byteorder", inflated, prefix=b"little"))
    if member == "structure.json":
        return zip_bytes([deflated_zeros("minigrad/structure.json", inflated, prefix=b"{\"format\": ")])
    if member == ".npy":
        header = npy_header((inflated // 4 - 2 ** 18,))  # fewer elements than the zeros after the header hold
        return zip_bytes([stored("minigrad/structure.json", minigrad_structure(TENSOR_NODE)),
                          deflated_zeros("minigrad/arrays/0.npy", inflated, prefix=header)])
    raise ValueError(member)


def lying_directory(member, declared=3 * GiB):
    """A stored member of a few dozen bytes whose zip directory claims ``declared`` bytes."""
    if member == "data/0":
        numel = declared // 4
        return torch_zip(tensor_pickle("0", numel, numel), [("0", lying_stored("archive/data/0", bytes(48), declared))])
    if member == "data.pkl":
        return torch_zip(b"", pickle_entry=lying_stored("archive/data.pkl", b"\x80\x02N." + bytes(44), declared))
    if member == "byteorder":
        return torch_zip(tensor_pickle("0", 1, 1), [("0", bytes(4))],
                         byteorder_entry=lying_stored("archive/byteorder", b"little" + bytes(42), declared))
    if member == "structure.json":
        return zip_bytes([lying_stored("minigrad/structure.json", minigrad_structure(None), declared)])
    if member == ".npy":
        header = npy_header((declared // 4 - 32,))
        return zip_bytes([stored("minigrad/structure.json", minigrad_structure(TENSOR_NODE)),
                          lying_stored("minigrad/arrays/0.npy", header + bytes(48), declared)])
    raise ValueError(member)


MEMBERS = ["data/0", "data.pkl", "structure.json", ".npy", "byteorder"]

#: ``LONG_BINPUT 268435456`` in a 9-byte pickle: PROTO 2, NONE, memo[2**28] = None, STOP.
HUGE_MEMO_PICKLE = b"\x80\x02Nr" + struct.pack("<I", 2 ** 28) + b"."


def huge_memo():
    return torch_zip(HUGE_MEMO_PICKLE)


def shared_repr(levels, how="persid"):
    """A data.pkl whose refusal message would ``repr`` a memo-shared structure of ``2 ** levels`` leaves."""
    return torch_zip(refused_with(shared_list_pickle(levels), levels, how))


# =========================================================================== beyond the issue: other costs
def long1(value):
    """LONG1: ``value`` in little-endian two's complement, as pickle writes it."""
    raw = value.to_bytes((value.bit_length() + 8) // 8, "little", signed=True)
    return b"\x8a" + bytes([len(raw)]) + raw


COLLIDING_INT = 2 ** 61 - 1  # hash(k * COLLIDING_INT) == 0 for every int k on 64-bit CPython


def colliding_int_keys(count):
    """A dict of ``count`` int keys that all hash to 0: inserting them costs count**2 / 2 comparisons."""
    return b"\x80\x02}(" + b"".join(long1(k * COLLIDING_INT) + b"N" for k in range(1, count + 1)) + b"u."


def colliding_complex_keys(count):
    """A dict of ``count`` complex keys 1000003k - kj, which all hash to 0 (hash(x) + 1000003 hash(y))."""
    out = b"\x80\x02c__builtin__\ncomplex\nq\x01}("
    for k in range(1, count + 1):
        out += b"h\x01(G" + struct.pack(">d", 1000003.0 * k) + b"G" + struct.pack(">d", -float(k)) + b"tRN"
    return out + b"u."


def colliding_json_keys(count):
    items = ",".join(f"[{k * COLLIDING_INT}, null]" for k in range(1, count + 1))
    return zip_bytes([stored("minigrad/structure.json", minigrad_structure(None)[:-5] + b'{"type": "dict", "items": ['
                             + items.encode() + b"]}}")])


def many_opcodes(nbytes, opcode=b"N"):
    """A stored data.pkl of about ``nbytes`` bytes: a list of one-byte opcodes (None, [], {}, set() ...)."""
    return torch_zip(b"\x80\x02](" + opcode * nbytes + b"e.")


def empty_lists_json(nbytes):
    """A stored structure.json of about ``nbytes`` bytes: a JSON list of empty lists (refused by the decoder,
    after json.loads has made them)."""
    return zip_bytes([stored("minigrad/structure.json", b"[" + b"[]," * (nbytes // 3) + b"[]]")])


def many_entries(count):
    """A zip of ``count`` (at most 65535) empty stored entries: 86 bytes an entry."""
    return zip_bytes([stored(f"{i}", b"") for i in range(count)])
