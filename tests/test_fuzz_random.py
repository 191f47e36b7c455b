"""Differential fuzzing of the random functions against PyTorch (the cases and what is compared:
``tests/random_fuzz.py``): seeded cases, fixed so CI runs the same ones every time, and two planted mistakes the
fuzzer must notice (a ``*_like`` result filled in C order whatever the input's layout; uniforms drawn in reverse)."""
import pytest

import minigrad as mg
from minigrad import _pytorch_stream as stream
from minigrad import random as mg_random

from . import random_fuzz as rf
from .mirror import torch_or_skip

CHUNK, CHUNKS = 400, 3


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_seeded_cases_agree_with_pytorch(chunk):
    torch = torch_or_skip()
    found = [p for p in (rf.differences(torch, mg, s) for s in range(chunk * CHUNK, (chunk + 1) * CHUNK)) if p]
    assert not found, f"{len(found)} of {CHUNK} cases differ from PyTorch; the first:\n{found[0]}"


def test_the_fuzzer_notices_a_like_result_filled_in_c_order(monkeypatch):
    torch = torch_or_skip()
    monkeypatch.setattr(mg_random, "like_strides", lambda input: None)
    assert sum(1 for s in range(CHUNK) if rf.differences(torch, mg, s)) >= 3


def test_the_fuzzer_notices_uniforms_drawn_in_reverse(monkeypatch):
    torch = torch_or_skip()
    unit_uniform = stream.unit_uniform
    monkeypatch.setattr(stream, "unit_uniform", lambda gen, n, double: unit_uniform(gen, n, double)[::-1].copy())
    assert sum(1 for s in range(CHUNK) if rf.differences(torch, mg, s)) >= CHUNK // 4
