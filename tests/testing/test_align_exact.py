"""The fast alignment primitives agree exactly with the references they replace."""

from __future__ import annotations

import difflib

import kaldialign
from hypothesis import given, settings
from hypothesis import strategies as st

from asr_audit.text.align import EditCounts, opcodes, wer_counts

# Small alphabets make repeated tokens, ties between equally long blocks and adjacent blocks
# common: the cases where a re-implementation of difflib could go wrong.
small = st.lists(st.sampled_from(["a", "b", "c", "the"]), max_size=14)
wide = st.lists(st.sampled_from([f"w{i}" for i in range(30)]), max_size=40)


def difflib_opcodes(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    return list(difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes())


@settings(max_examples=800, deadline=None)
@given(small, small)
def test_opcodes_equal_difflib_small_alphabet(a: list[str], b: list[str]) -> None:
    assert opcodes(a, b) == difflib_opcodes(a, b)


@settings(max_examples=500, deadline=None)
@given(wide, st.data())
def test_opcodes_equal_difflib_on_edited_copies(a: list[str], data: st.DataObject) -> None:
    """Hypotheses are mostly the reference with a few edits: the realistic case."""
    b = list(a)
    for _ in range(data.draw(st.integers(0, 4))):
        op = data.draw(st.sampled_from(["drop", "sub", "ins"]))
        pos = data.draw(st.integers(0, len(b)))
        if op == "ins" or not b:
            b.insert(pos, data.draw(st.sampled_from(["a", "w3", "w7"])))
        elif op == "drop":
            del b[min(pos, len(b) - 1)]
        else:
            b[min(pos, len(b) - 1)] = data.draw(st.sampled_from(["x", "w1", "w2"]))
    assert opcodes(a, b) == difflib_opcodes(a, b)


def test_opcodes_known_case_prefers_longest_block_over_common_prefix() -> None:
    a = "x y z x y z w".split()
    b = "x y z w".split()
    assert opcodes(a, b) == [("delete", 0, 3, 0, 0), ("equal", 3, 7, 0, 4)]
    assert opcodes(a, b) == difflib_opcodes(a, b)


@settings(max_examples=400, deadline=None)
@given(small, st.one_of(small, st.just(None)))
def test_wer_counts_equal_kaldialign(ref: list[str], hyp: list[str] | None) -> None:
    hyp = list(ref) if hyp is None else hyp  # exercise the identical-sequence fast path too
    got = wer_counts(tuple(ref), tuple(hyp))
    if ref and hyp:
        d = kaldialign.edit_distance(ref, hyp)
        assert got == EditCounts(d["sub"], d["ins"], d["del"], len(ref))
    assert got.errors == (kaldialign.edit_distance(ref, hyp)["total"] if ref and hyp else max(len(ref), len(hyp)))
