"""The shared alignment equals difflib's opcodes and kaldialign's counts."""

from __future__ import annotations

import difflib

import kaldialign
from hypothesis import given, settings
from hypothesis import strategies as st

from asr_audit.text.align import AlignmentCache, align, corpus_wer, wer_counts

WORDS = st.lists(st.sampled_from(["a", "b", "c", "the", "eu", "madam", "president", "5"]), max_size=14)


@given(WORDS, WORDS)
@settings(max_examples=300, deadline=None)
def test_opcodes_equal_difflib(ref: list[str], hyp: list[str]) -> None:
    a = align(ref, hyp)
    expected = difflib.SequenceMatcher(None, ref, hyp, autojunk=False).get_opcodes()
    assert [tuple(o) for o in expected] == list(a.opcodes)
    missed = {i for t, i1, i2, _, _ in expected if t in ("delete", "replace") for i in range(i1, i2)}
    assert a.missed == missed
    assert a.matched == sum(i2 - i1 for t, i1, i2, _, _ in expected if t == "equal")
    assert sum(len(v) for v in a.insertions.values()) == sum(j2 - j1 for t, _, _, j1, j2 in expected if t == "insert")


@given(WORDS, WORDS)
@settings(max_examples=300, deadline=None)
def test_wer_counts_equal_kaldialign(ref: list[str], hyp: list[str]) -> None:
    c = wer_counts(ref, hyp)
    if ref and hyp:
        d = kaldialign.edit_distance(ref, hyp)
        assert (c.sub, c.ins, c.dele) == (d["sub"], d["ins"], d["del"])
    assert c.errors >= abs(len(ref) - len(hyp))
    if ref == hyp:
        assert c.errors == 0


def test_views_and_cache() -> None:
    a = align("madam president the commission agrees".split(), "the commissioner agrees thank you".split())
    assert a.substitution_at(3, 4) == "commissioner"
    assert a.hyp_span(2, 5) == "the commissioner agrees"
    assert a.insertions == {5: ("thank", "you")}
    cache = AlignmentCache()
    r, h = ("x", "y"), ("x",)
    assert cache.align(r, h) is cache.align(r, h)
    assert len(cache) == 1
    assert corpus_wer([(("a", "b"), ("a",)), (("c",), ("c", "d"))]) == 2 / 3
