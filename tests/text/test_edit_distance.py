"""The rapidfuzz edit distance equals kaldialign's total, collisions included."""

from __future__ import annotations

import kaldialign
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asr_audit.text import align
from asr_audit.text.align import AlignmentCache, TokenKeys, edit_distance, wer_counts

# one-character tokens are compared by code point, longer ones by hash: mix both
VOCAB = ["a", "b", "é", "the", "of", "thé", "ab", "w1", "w2", "w10", "1", "11"]
seqs = st.lists(st.sampled_from(VOCAB), max_size=25)


def kaldi_total(a: list[str], b: list[str]) -> int:
    if not a:
        return len(b)
    if not b:
        return len(a)
    d = kaldialign.edit_distance(a, b)
    return d["sub"] + d["ins"] + d["del"]


@settings(max_examples=600, deadline=None)
@given(seqs, seqs)
def test_edit_distance_equals_kaldialign_total(a: list[str], b: list[str]) -> None:
    assert edit_distance(a, b) == kaldi_total(a, b) == wer_counts(a, b).errors


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(seqs, seqs), min_size=1, max_size=8))
def test_cache_errors_equal_wer_counts(pairs: list[tuple[list[str], list[str]]]) -> None:
    cache = AlignmentCache()
    for a, b in pairs:
        ta, tb = tuple(a), tuple(b)
        assert cache.errors(ta, tb) == wer_counts(ta, tb).errors
        assert cache.errors(ta, tb) == cache.wer(ta, tb).errors  # memoized, still equal


def test_a_key_collision_falls_back_to_kaldialign(monkeypatch: pytest.MonkeyPatch) -> None:
    # every multi-character token gets the same key: rapidfuzz would see "cat" == "dog"
    monkeypatch.setattr(align, "_rapidfuzz_key", lambda t: 7 if len(t) > 1 else ord(t))
    from rapidfuzz.distance import Levenshtein

    class Colliding(str):
        def __hash__(self) -> int:
            return 7

    ref, hyp = ("the", "cat", "sat"), ("the", "dog", "sat")
    assert Levenshtein.distance([Colliding(t) for t in ref], [Colliding(t) for t in hyp]) == 0  # the hazard
    assert edit_distance(ref, hyp) == 1
    cache = AlignmentCache()
    assert cache.errors(("the",), ("thee",)) == 1  # "the" and "thee" collide under the patch
    assert cache._keys.collision
    assert cache.errors(ref, hyp) == 1


def test_token_keys_record_and_flag() -> None:
    keys = TokenKeys()
    assert keys.admit(("a", "bb"), ("bb", "c"))
    assert keys.seen == {"a", "bb", "c"}
    assert not keys.collision
    keys.owner[align._rapidfuzz_key("zz")] = "not-zz"  # pretend another token owns zz's key
    assert not keys.admit(("zz",), ())
    assert not keys.admit(("a",), ("a",))  # stays flagged


def test_empty_and_equal_sequences() -> None:
    assert edit_distance((), ("a", "b")) == 2
    assert edit_distance(("a", "b"), ()) == 2
    assert edit_distance(("x", "y"), ("x", "y")) == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(seqs, seqs), min_size=1, max_size=8))
def test_edit_distances_of_many_pairs_equal_kaldialign(pairs: list[tuple[list[str], list[str]]]) -> None:
    from asr_audit.text.align import edit_distances

    assert edit_distances(pairs) == [kaldi_total(a, b) for a, b in pairs]


def test_edit_distances_fall_back_from_a_collision_on(monkeypatch: pytest.MonkeyPatch) -> None:
    # "cat" and "dog" share a key: the pair that brings "dog" in and every pair after it (even one
    # whose tokens were all seen before) go to kaldialign; the pair before stays with rapidfuzz
    from asr_audit.text.align import edit_distances

    key = align._rapidfuzz_key
    monkeypatch.setattr(align, "_rapidfuzz_key", lambda t: 7 if t in ("cat", "dog") else key(t))
    counted: list[int] = []
    wer_counts_ = align.wer_counts

    def counting(ref, hyp, *args, **kwargs):
        counted.append(1)
        return wer_counts_(ref, hyp, *args, **kwargs)

    monkeypatch.setattr(align, "wer_counts", counting)
    pairs = [(("a", "cat"), ("a", "cat", "b")), (("cat", "x"), ("dog", "x")), (("a", "cat"), ("b", "cat"))]
    assert edit_distances(pairs) == [1, 1, 1]
    assert len(counted) == 2
