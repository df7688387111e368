"""The shared alignment equals difflib's opcodes and kaldialign's counts."""

from __future__ import annotations

import difflib

import kaldialign
from hypothesis import given, settings
from hypothesis import strategies as st

from asr_audit.text.align import (
    AlignmentCache,
    align,
    corpus_wer,
    ops_inserted,
    ops_matched,
    ops_missed,
    ops_missed_any,
    ops_replaced_range,
    ops_substitution_at,
    wer_counts,
)

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


@given(WORDS, WORDS)
@settings(max_examples=300, deadline=None)
def test_opcode_views_equal_index_based_oracles(ref: list[str], hyp: list[str]) -> None:
    """The opcode views refdis' panel mining reads (no Alignment built) against oracles written
    per reference index from difflib's own opcodes, on every span."""
    ops: list[tuple[str, int, int, int, int]] = list(
        difflib.SequenceMatcher(None, ref, hyp, autojunk=False).get_opcodes()
    )
    h = tuple(hyp)
    missed = sorted(i for t, i1, i2, _, _ in ops if t in ("delete", "replace") for i in range(i1, i2))
    assert ops_missed(ops) == missed
    assert ops_matched(ops) == len(ref) - len(missed)
    for start in range(len(ref) + 1):
        inserted = [w for o in ops if o[0] == "insert" and o[1] == start for w in h[o[3] : o[4]]]
        assert ops_inserted(h, ops, start) == tuple(inserted)
        assert not ops_missed_any(ops, start, start)  # an empty span misses nothing
        for stop in range(start + 1, len(ref) + 1):
            assert ops_missed_any(ops, start, stop) == any(start <= i < stop for i in missed)
            replaced = [o for o in ops if o[0] == "replace" and set(range(o[1], o[2])) & set(range(start, stop))]
            assert ops_substitution_at(h, ops, start, stop) == " ".join(" ".join(h[o[3] : o[4]]) for o in replaced)
            lo = min([start, *(o[1] for o in replaced)])
            hi = max([stop, *(o[2] for o in replaced)])
            # hypothesis positions that belong to ref[lo:hi]: aligned to an index in it, inside a
            # replace / delete opcode within it, or inserted strictly inside it
            owned = [o[3] + i - o[1] for o in ops if o[0] == "equal" for i in range(o[1], o[2]) if lo <= i < hi]
            owned += [
                j for o in ops if o[0] in ("replace", "delete") and lo <= o[1] and o[2] <= hi for j in range(o[3], o[4])
            ]
            owned += [j for o in ops if o[0] == "insert" and lo < o[1] < hi for j in range(o[3], o[4])]
            words = h[min(owned) : max(owned) + 1] if owned else ()
            assert ops_replaced_range(h, ops, start, stop) == (lo, hi, words)
            a = align(ref, hyp)
            assert a.replaced_range(start, stop) == (lo, hi, words) and a.missed_any(start, stop) == (
                not a.missed.isdisjoint(range(start, stop))
            )
