"""PocketSphinx forced alignment (the default aligner: offline, CPU, deterministic).

The transcript is prepared by :mod:`asr_audit.text.verbalize` (lower case, punctuation
dropped, numbers spelled out, each token's alternative readings kept). Words missing from the
bundled CMU dictionary get a pronunciation from :mod:`asr_audit.align.g2p`, added to the
decoder's dictionary for this process.

The search is a finite-state grammar that accepts exactly the transcript: one path per
token, with a branch per reading (``2011`` -> ``twenty eleven`` | ``two thousand eleven`` |
``two thousand and eleven``). PocketSphinx's FSG search allows optional silence and filler
between words, like its own ``set_align_text``. A token's span runs from the first frame of its
reading's first word to the end of its last word (10 ms frames); its ``score`` is the mean
natural-log acoustic likelihood per frame (``None`` when that underflows). When the default beams
lose the path, the clip is retried once with wide beams; a clip that still does not align raises
:class:`~asr_audit.align.records.AlignmentError`.
"""

from __future__ import annotations

import functools
import importlib.metadata
import math
from collections.abc import Sequence

import numpy as np

from asr_audit.align.g2p import pronounce
from asr_audit.align.records import AlignerIdentity, AlignmentError, WordTiming, check_timings
from asr_audit.errors import ConfigError, require
from asr_audit.text.verbalize import PreparedToken, prepare_transcript

SAMPLE_RATE = 16_000
REVISION = "1"  # bump when text preparation, G2P or span rules change results
MODELS = ("en-us",)
_WIDE_BEAMS = {"beam": 1e-80, "wbeam": 1e-60, "pbeam": 1e-80}
_FILLERS = ("<s>", "</s>", "<sil>", "[NOISE]", "[SPEECH]")


def _base_word(word: str) -> str:
    """``to(3)`` -> ``to`` (PocketSphinx marks alternative pronunciations with ``(n)``)."""
    return word.split("(", 1)[0]


def match_readings(tokens: Sequence[PreparedToken], words: Sequence[str]) -> list[tuple[int, int]]:
    """Split the aligned word sequence ``words`` back into tokens: ``[(first, stop), ...]``.

    Each speakable token consumes one of its readings; unspeakable tokens consume nothing
    (``first == stop``). Raises :class:`AlignmentError` when no choice of readings gives ``words``.

    >>> toks = prepare_transcript("paid 2011 euros")
    >>> match_readings(toks, ["paid", "two", "thousand", "eleven", "euros"])
    [(0, 1), (1, 4), (4, 5)]
    """

    @functools.cache
    def solve(t: int, w: int) -> tuple[tuple[int, int], ...] | None:
        if t == len(tokens):
            return () if w == len(words) else None
        tok = tokens[t]
        if not tok.speakable:
            rest = solve(t + 1, w)
            return None if rest is None else ((w, w), *rest)
        for reading in tok.readings:
            stop = w + len(reading)
            if tuple(words[w:stop]) == reading:
                rest = solve(t + 1, stop)
                if rest is not None:
                    return ((w, stop), *rest)
        return None

    found = solve(0, 0)
    solve.cache_clear()
    if found is None:
        raise AlignmentError(f"aligned words {' '.join(words)!r} do not match the transcript's readings")
    return list(found)


@functools.lru_cache(maxsize=2)
def _model_paths(model: str) -> tuple[str, str]:
    from pathlib import Path

    ps = require("pocketsphinx", "sphinx")
    root = Path(ps.get_model_path()) / model
    hmm, dic = root / model, root / "cmudict-en-us.dict"
    for p in (hmm, dic):
        if not p.exists():
            raise AlignmentError(
                f"PocketSphinx model file {p} is missing; fix: pip install --force-reinstall pocketsphinx"
            )
    return str(hmm), str(dic)


class SphinxAligner:
    """Forced alignment with PocketSphinx's bundled US-English acoustic model and dictionary."""

    name = "sphinx"

    def __init__(self, model: str = "en-us") -> None:
        if model not in MODELS:
            raise ConfigError(f"sphinx aligner model {model!r} is unknown; valid: {', '.join(MODELS)}")
        self.model = model
        self._decoders: dict[bool, object] = {}
        self._n_grammars = 0

    def identity(self) -> AlignerIdentity:
        from asr_audit.models.sphinx import _weights_hash  # same files as the sphinx transcription backend

        version = f"pocketsphinx-{importlib.metadata.version('pocketsphinx')}+{_weights_hash(self.model)}+r{REVISION}"
        return AlignerIdentity(self.name, self.model, version)

    def _decoder(self, wide: bool):  # noqa: ANN202 - pocketsphinx.Decoder
        if wide not in self._decoders:
            ps = require("pocketsphinx", "sphinx")
            hmm, dic = _model_paths(self.model)
            self._decoders[wide] = ps.Decoder(
                hmm=hmm, dict=dic, lm=None, samprate=SAMPLE_RATE, loglevel="FATAL", **(_WIDE_BEAMS if wide else {})
            )
        return self._decoders[wide]

    def _ensure_words(self, decoder, words: set[str]) -> None:  # noqa: ANN001
        missing = [w for w in sorted(words) if decoder.lookup_word(w) is None]
        for i, w in enumerate(missing):
            phones = pronounce(w, decoder.lookup_word)
            try:
                decoder.add_word(w, phones, i == len(missing) - 1)
            except RuntimeError as exc:
                raise AlignmentError(f"cannot add {w!r} ({phones}) to the PocketSphinx dictionary: {exc}") from exc

    def _grammar(self, decoder, tokens: Sequence[PreparedToken]) -> str:  # noqa: ANN001
        transitions: list[tuple[int, int, float, str]] = []
        state, n_states = 0, 1
        for tok in tokens:
            if not tok.speakable:
                continue
            end = n_states
            n_states += 1
            p = 1.0 / len(tok.readings)
            for reading in tok.readings:
                src = state
                for j, word in enumerate(reading):
                    dst = end if j == len(reading) - 1 else n_states
                    if dst != end:
                        n_states += 1
                    transitions.append((src, dst, p if j == 0 else 1.0, word))
                    src = dst
            state = end
        self._n_grammars += 1
        name = f"align{self._n_grammars % 2}"
        fsg = decoder.create_fsg(name, 0, state, transitions)
        decoder.add_fsg(name, fsg)
        decoder.activate_search(name)
        return name

    def _decode(self, samples: np.ndarray, tokens: Sequence[PreparedToken], wide: bool) -> list:
        decoder = self._decoder(wide)
        self._ensure_words(decoder, {w for t in tokens for r in t.readings for w in r})
        self._grammar(decoder, tokens)
        pcm = np.round(np.clip(samples, -1.0, 1.0) * 32767.0).astype("<i2")
        decoder.start_utt()
        decoder.process_raw(pcm.tobytes(), full_utt=True)
        decoder.end_utt()
        if decoder.hyp() is None:
            return []
        return [s for s in decoder.seg() if s.word not in _FILLERS and not s.word.startswith("[")]

    def align(self, samples: np.ndarray, transcript: str) -> tuple[WordTiming, ...]:
        """One :class:`WordTiming` per whitespace token of ``transcript`` (16 kHz mono float32 audio)."""
        x = np.asarray(samples, dtype=np.float32)
        if x.ndim != 1 or x.size == 0:
            raise AlignmentError(f"audio must be non-empty mono samples, got shape {x.shape}")
        duration = x.size / SAMPLE_RATE
        tokens = prepare_transcript(transcript)
        if not any(t.speakable for t in tokens):
            raise AlignmentError("the transcript has no speakable words")
        spans: list[tuple[int, int]] | None = None
        segs: list = []
        for wide in (False, True):
            segs = self._decode(x, tokens, wide)
            try:
                spans = match_readings(tokens, [_base_word(s.word) for s in segs])
                break
            except AlignmentError:
                continue
        if spans is None:
            raise AlignmentError("PocketSphinx found no path through the transcript (audio and text may not match)")
        frate = 100.0
        out: list[WordTiming] = []
        cursor = 0.0
        for tok, (a, b) in zip(tokens, spans):
            if a == b:
                out.append(WordTiming(tok.text, cursor, cursor, None))
                continue
            start = min(segs[a].start_frame / frate, duration)
            end = min((segs[b - 1].end_frame + 1) / frate, duration)
            frames = sum(s.end_frame - s.start_frame + 1 for s in segs[a:b])
            logs = [s.ascore for s in segs[a:b]]
            score = sum(math.log(v) for v in logs) / frames if all(v > 0 for v in logs) and frames else None
            out.append(WordTiming(tok.text, max(start, cursor), max(end, start, cursor), score))
            cursor = out[-1].end
        result = tuple(out)
        check_timings(result, len(tokens), duration)
        return result
