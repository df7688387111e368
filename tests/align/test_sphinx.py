"""PocketSphinx forced alignment on real clips (LibriVox reading, Flite TTS)."""

from __future__ import annotations

import numpy as np
import pytest

from asr_audit.align import get_aligner
from asr_audit.align.records import AlignmentError
from asr_audit.align.sphinx import match_readings
from asr_audit.errors import ConfigError
from asr_audit.text.verbalize import prepare_transcript

SR = 16000


def _check_monotonic(words, duration: float) -> None:
    prev = 0.0
    for w in words:
        assert prev <= w.start <= w.end <= duration + 1e-6, (w, prev)
        prev = w.end


def test_librivox_alignment_is_monotonic_and_covers_the_speech(sphinx_aligner, librivox) -> None:
    samples, text = librivox
    duration = len(samples) / SR
    words = sphinx_aligner.align(samples, text)
    assert [w.word for w in words] == text.split()
    _check_monotonic(words, duration)
    assert all(w.end - w.start >= 0.03 for w in words)  # every word got frames
    assert words[0].start > 0.1  # leading silence is not a word
    assert words[-1].end > duration - 0.5
    assert sum(w.end - w.start for w in words) > 0.7 * duration
    assert all(w.score is not None and w.score < 0 for w in words)


def test_number_and_oov_word_in_tts_clip(sphinx_aligner, zorblax) -> None:
    samples, text = zorblax
    words = sphinx_aligner.align(samples, text)
    assert [w.word for w in words] == ["Zorblax", "paid", "2011", "euros."]
    _check_monotonic(words, len(samples) / SR)
    oov, _paid, number, _euros = words
    assert oov.start >= 0.1 and oov.end - oov.start > 0.3  # out-of-dictionary word got its own span
    assert number.end - number.start > 0.4  # one span over all words of the spoken number
    # the number's span holds speech: louder than the leading silence
    rms = lambda a, b: float(np.sqrt(np.mean(samples[int(a * SR) : int(b * SR)] ** 2)))  # noqa: E731
    assert rms(number.start, number.end) > 10 * rms(0, oov.start)


def test_unspeakable_token_gets_zero_length_span(sphinx_aligner, librivox) -> None:
    samples, text = librivox
    toks = text.split()
    toks.insert(5, "--")
    words = sphinx_aligner.align(samples, " ".join(toks))
    assert len(words) == len(toks)
    assert words[5].word == "--" and words[5].start == words[5].end == words[4].end


def test_mismatched_transcript_is_an_alignment_error(sphinx_aligner, zorblax) -> None:
    samples, _ = zorblax
    with pytest.raises(AlignmentError):
        sphinx_aligner.align(samples, "the quick brown fox jumps over the lazy dog and runs far away from home")


@pytest.mark.parametrize("text", ["", "-- ..."])
def test_nothing_to_align(sphinx_aligner, zorblax, text: str) -> None:
    with pytest.raises(AlignmentError, match="no speakable"):
        sphinx_aligner.align(zorblax[0], text)


def test_bad_audio_shape(sphinx_aligner) -> None:
    with pytest.raises(AlignmentError):
        sphinx_aligner.align(np.zeros((10, 2), dtype=np.float32), "hello")


def test_match_readings_picks_the_spoken_reading() -> None:
    toks = prepare_transcript("paid 2011 -- euros")
    assert match_readings(toks, ["paid", "twenty", "eleven", "euros"]) == [(0, 1), (1, 3), (3, 3), (3, 4)]
    assert match_readings(toks, ["paid", "two", "thousand", "and", "eleven", "euros"]) == [
        (0, 1),
        (1, 5),
        (5, 5),
        (5, 6),
    ]
    with pytest.raises(AlignmentError):
        match_readings(toks, ["paid", "eleven", "euros"])


def test_registry() -> None:
    assert get_aligner("sphinx").identity().name == "sphinx"
    with pytest.raises(ConfigError, match="available aligners: sphinx, whisper"):
        get_aligner("mms")
    with pytest.raises(ConfigError, match="en-us"):
        get_aligner("sphinx", "fr-fr")


def test_masking_the_aligned_span_removes_the_word(sphinx_aligner, apples) -> None:
    """Silencing 'seven' where the aligner put it makes it vanish from a PocketSphinx transcript."""
    from asr_audit.models.base import load_backend

    samples, text = apples
    words = sphinx_aligner.align(samples, text)
    seven = words[2]
    assert seven.word == "seven"
    asr = load_backend("sphinx:en-us")
    masked = samples.copy()
    masked[int(seven.start * SR) : int(np.ceil(seven.end * SR))] = 0.0
    before, after = asr.transcribe([samples, masked])
    assert "seven" in before.split() and "apples" in before.split()
    assert "seven" not in after.split()
    assert "apples" in after.split()  # the neighbours survive: the span was not too wide
