"""Alignment records: validation and dict round trips."""

from __future__ import annotations

import pytest

from asr_audit.align.records import (
    AlignerIdentity,
    AlignmentError,
    ClipAlignment,
    WordTiming,
    check_timings,
    transcript_key,
)
from asr_audit.errors import InputFileError

IDENT = AlignerIdentity("sphinx", "en-us", "v1")


def test_word_timing_validates() -> None:
    with pytest.raises(ValueError):
        WordTiming("a", 1.0, 0.5)
    with pytest.raises(ValueError):
        WordTiming("a", -0.1, 0.5)
    assert WordTiming("a", 0.5, 0.5).duration == 0.0


def test_round_trip() -> None:
    ca = ClipAlignment("c1", "a b", IDENT, (WordTiming("a", 0.1, 0.2, -1.5), WordTiming("b", 0.2, 0.4, None)), 1.0)
    again = ClipAlignment.from_dict(ca.to_dict())
    assert again == ca and again.span(1) == (0.2, 0.4)
    failed = ClipAlignment("c2", "x", IDENT, error="audio file not found")
    assert not ClipAlignment.from_dict(failed.to_dict()).ok


def test_identity_key_changes_with_version() -> None:
    assert IDENT.key != AlignerIdentity("sphinx", "en-us", "v2").key
    assert IDENT.to_dict()["spec"] == "align:sphinx:en-us" and IDENT.to_dict()["key"] == IDENT.key
    assert transcript_key("a b") != transcript_key("a  b")


def test_malformed_record_names_source_and_line() -> None:
    with pytest.raises(InputFileError, match=r"t\.jsonl:3: not an alignment record"):
        ClipAlignment.from_dict({"clip_id": "c"}, source="t.jsonl", line=3)
    with pytest.raises(InputFileError):
        ClipAlignment.from_dict(
            {
                "clip_id": "c",
                "transcript": "a",
                "aligner": IDENT.to_dict(),
                "words": [{"word": "a", "start": 2, "end": 1}],
            }
        )


def test_check_timings() -> None:
    good = (WordTiming("a", 0.0, 0.5), WordTiming("b", 0.5, 1.0))
    check_timings(good, 2, 1.0)
    with pytest.raises(AlignmentError, match="2 timings for 3 tokens"):
        check_timings(good, 3, 1.0)
    with pytest.raises(AlignmentError, match="not monotonic"):
        check_timings((WordTiming("a", 0.0, 0.6), WordTiming("b", 0.5, 1.0)), 2, 1.0)
    with pytest.raises(AlignmentError, match="leaves"):
        check_timings(good, 2, 0.8)
