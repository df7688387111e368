"""Build a calibration set on disk: sentences, TTS audio per voice, manifests, ground truth.

Layout of ``out/``::

    calib-train.jsonl, calib-test.jsonl   leaderboard manifests (audio_filepath, id, text = the
                                          reference, duration, speaker = voice, spoken, sentence_id)
    truth.jsonl                           every planted item per clip (see asr_audit.calib.truth)
    calib.json                            config, seed, voices, counts and realized error rates
    audio/<sentence_id>-<voice>.wav       16 kHz mono PCM-16

Manifests, truth and ``calib.json`` are byte-identical for a seed; the audio is as deterministic
as the TTS engines (flite and espeak-ng are). Synthesis goes through the voice layer's cache.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from asr_audit.audio.voices import VOICES, get_voice, voices_for_language
from asr_audit.calib import generate as G
from asr_audit.calib.languages import calib_normalizer
from asr_audit.calib.truth import NORMALIZER, TRUTH_FILE, TruthItem, clip_items, render_truth, sentence_items
from asr_audit.errors import AuditError, ConfigError, require
from asr_audit.probes.predfiles.refdis import char_error
from asr_audit.text.normalize import get_normalizer

FORMAT_VERSION = 1
Synthesizer = Callable[[str, str], tuple[np.ndarray, int]]
ProgressFn = Callable[[int, int], None]


def far_enough(normalize) -> G.FarEnough:  # noqa: ANN001
    """A number substitution must differ by >= 50% characters after normalization, measured as the
    miner does (reference span against the panel's rendering; its artefact filter drops < 30%)."""

    return lambda original, alt: char_error(normalize(alt), normalize(original)) >= 0.5


@dataclass(frozen=True, slots=True)
class Sentences:
    """Generated sentences with their labelled items (per sentence, clip-independent)."""

    sentences: tuple[G.CalibSentence, ...]
    items: tuple[tuple[dict, ...], ...]
    n_rejected: int  # draws whose normalization could not be located exactly (redrawn)


def generate_sentences(config: G.CalibConfig, rng: np.random.Generator) -> Sentences:
    """``config.n_sentences`` distinct sentences, errors planted, split into train/test."""

    normalize = get_normalizer(calib_normalizer(config.language))
    far = far_enough(normalize)
    est = [G.strip_sites(G.clean_sentence(rng, config)[1]) for _ in range(100)]
    mean_words = float(np.mean([len(normalize(G.render(u, "written")).split()) for u in est]))
    lam = G.errors_per_clip(config, mean_words)
    drawn: list[tuple[tuple[int, ...], tuple[G.Unit, ...], list[dict]]] = []
    seen: set[str] = set()
    rejected = 0
    while len(drawn) < config.n_sentences:
        if rejected > 50 + 10 * config.n_sentences:
            raise ConfigError(f"could only draw {len(drawn)} distinct sentences; fix: lower --n-sentences")
        tid, units = G.clean_sentence(rng, config)
        if rng.random() < config.error_rate:
            k = min(len(G.POSITIONS), 1 + int(rng.poisson(lam)))
            units = G.plant_errors(units, k, config, rng, far)
        final = G.strip_sites(units)
        sent = G.CalibSentence("", tid, "", final)
        items = sentence_items(sent, normalize)
        if items is None or sent.spoken in seen:  # a spoken sentence occurs once: no train/test overlap
            rejected += 1
            continue
        seen.add(sent.spoken)
        drawn.append((tid, final, items))
    splits = G.assign_splits([d[0] for d in drawn], config, rng)
    sentences = tuple(
        G.CalibSentence(f"s{i:05d}", tid, split, units) for i, ((tid, units, _), split) in enumerate(zip(drawn, splits))
    )
    return Sentences(sentences, tuple(tuple(d[2]) for d in drawn), rejected)


def realized_rates(sentences: Sentences, normalizer: str = NORMALIZER) -> dict[str, object]:
    """Shares of sentences with an error and of reference words in error, and counts by kind/position
    (words counted after ``normalizer``, the set's own)."""
    n_words = err_words = n_err_sent = 0
    by_kind: dict[str, int] = {}
    by_pos: dict[str, int] = {}
    for items in sentences.items:
        errs = [it for it in items if it["kind"] != G.CONVENTION]
        n_err_sent += bool(errs)
        if items:
            n_words += int(items[0]["n_ref"])
        for it in items:
            by_kind[str(it["kind"])] = by_kind.get(str(it["kind"]), 0) + 1
            if it["kind"] != G.CONVENTION:
                by_pos[str(it["position"])] = by_pos.get(str(it["position"]), 0) + 1
                err_words += max(len(it["ref_norm"]), len(it["spoken_norm"]))
    # sentences without any item still count their words
    normalize = get_normalizer(normalizer)
    n_words += sum(
        len(normalize(s.reference).split()) for s, items in zip(sentences.sentences, sentences.items) if not items
    )
    n = len(sentences.sentences)
    return {
        "sentences": n,
        "sentences_with_error": n_err_sent,
        "error_rate": round(n_err_sent / n, 4),
        "reference_words": n_words,
        "error_words": err_words,
        "word_error_rate": round(err_words / n_words, 4) if n_words else 0.0,
        "items_by_kind": dict(sorted(by_kind.items())),
        "errors_by_position": dict(sorted(by_pos.items())),
    }


def default_voices(language: str) -> list[str]:
    """The voices ``calib build`` uses without ``--voices``: four flite voices in English, the
    installed voices of ``language`` otherwise (an error naming the fix when there are none)."""
    if language == "en":
        return ["slt", "rms", "awb", "kal"]
    found = voices_for_language(language)
    if not found:
        raise ConfigError(
            f"no installed TTS voice speaks {language!r}; fix: apt-get install espeak-ng, or register one "
            f"with language = {language!r} and pass it with --voices"
        )
    return found


def check_voice_languages(voices: Sequence[str], language: str) -> None:
    """Refuse a voice that speaks another language than the set's (a voice without a declared
    language, such as a registered clone, is trusted)."""

    known = set(VOICES.names())  # resolve_voice has refused any other name
    wrong = [v for v in voices if v in known and get_voice(v).language not in (None, language)]
    if wrong:
        suggestion = ",".join(voices_for_language(language)) or f"a registered voice with language = {language!r}"
        raise ConfigError(
            f"--voices {','.join(wrong)} speak{'s' if len(wrong) == 1 else ''} "
            f"{get_voice(wrong[0]).language}, the set is {language!r}; fix: use --voices {suggestion}"
        )


def resolve_voice(name: str) -> str:
    """A registered voice name; short flite names (``slt``) resolve to ``flite-slt``."""

    try:
        return get_voice(name).name
    except ConfigError:
        try:
            return get_voice(f"flite-{name}").name
        except ConfigError:
            get_voice(name)  # raises the error listing every voice
            raise


@dataclass(frozen=True, slots=True)
class BuildResult:
    out_dir: Path
    n_sentences: int
    n_clips: int
    failures: tuple[tuple[str, str], ...]  # (clip id, reason) for clips that could not be synthesized
    rates: dict

    def summary(self, n_voices: int) -> list[str]:
        """What ``asr-audit calib build`` prints: the clips written, and the planted errors' realized rates."""
        r = self.rates
        return [
            f"wrote {self.n_clips} clips ({self.n_sentences} sentences x {n_voices} voices) to {self.out_dir}",
            f"planted errors on {r['sentences_with_error']}/{r['sentences']} sentences "
            f"({r['error_rate']:.1%}), {r['error_words']}/{r['reference_words']} reference words "
            f"({r['word_error_rate']:.2%}); items by kind: {r['items_by_kind']}",
        ]


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file, so a reader never sees half of it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8", newline="\n")
    os.replace(tmp, path)


def synthesize_clip(out: Path, clip_id: str, voice: str, text: str, synthesize: Synthesizer, sf) -> tuple[str, float]:  # noqa: ANN001
    """Synthesize ``text`` with ``voice`` into ``out/audio/<clip_id>.wav`` (16 kHz PCM-16).

    Returns the file's path relative to ``out`` and its duration in seconds; a voice that fails,
    or returns another sample rate, raises an :class:`AuditError` for the caller to record.
    """
    rel = f"audio/{clip_id}.wav"
    samples, sr = synthesize(voice, text)
    if sr != 16_000:
        raise ConfigError(f"voice {voice!r} returned {sr} Hz audio, expected 16000")
    sf.write(out / rel, np.asarray(samples, dtype=np.float32), sr, subtype="PCM_16", format="WAV")
    return rel, round(len(samples) / sr, 6)


def build_calibration(
    out_dir: str | Path,
    config: G.CalibConfig,
    voices: Sequence[str],
    seed: int,
    synthesize: Synthesizer | None = None,
    progress: ProgressFn | None = None,
) -> BuildResult:
    """Generate sentences from ``seed``, synthesize each with every voice, write the set to ``out_dir``."""
    sf = require("soundfile", "audio")
    if not voices:
        raise ConfigError("--voices needs at least one voice, e.g. --voices slt,rms")
    if synthesize is None:
        voices = [resolve_voice(v) for v in voices]
        check_voice_languages(voices, config.language)
        # looked up when called, not imported with the module: tests replace voices.synthesize
        from asr_audit.audio.voices import synthesize as synth

        synthesize = synth
    if len(set(voices)) != len(voices):
        raise ConfigError(f"--voices names a voice twice: {','.join(voices)}")
    rng = np.random.default_rng(seed)
    sents = generate_sentences(config, rng)
    out = Path(out_dir)
    (out / "audio").mkdir(parents=True, exist_ok=True)
    rows: dict[str, list[str]] = {s: [] for s in G.SPLITS}
    truth: list[TruthItem] = []
    failures: list[tuple[str, str]] = []
    total, done = len(sents.sentences) * len(voices), 0
    for sent, items in zip(sents.sentences, sents.items):
        for voice in voices:
            clip_id = f"{sent.sentence_id}-{voice}"
            try:
                rel, duration = synthesize_clip(out, clip_id, voice, sent.spoken, synthesize, sf)
            except AuditError as exc:
                failures.append((clip_id, " ".join(str(exc).split())))
                continue
            finally:
                done += 1
                if progress:
                    progress(done, total)
            row = {
                "audio_filepath": rel,
                "id": clip_id,
                "text": sent.reference,
                "duration": duration,
                "speaker": voice,
                "spoken": sent.spoken,
                "sentence_id": sent.sentence_id,
                **({} if config.language == "en" else {"language": config.language}),
            }
            rows[sent.split].append(json.dumps(row, ensure_ascii=False))
            truth.extend(clip_items(clip_id, sent.sentence_id, items))
    for split, lines in rows.items():
        write_text_atomic(out / f"calib-{split}.jsonl", "".join(line + "\n" for line in lines))
    write_text_atomic(out / TRUTH_FILE, render_truth(truth))
    rates = realized_rates(sents, calib_normalizer(config.language))
    meta = {
        "format": "asr-audit-calib",
        "version": FORMAT_VERSION,
        "seed": seed,
        "config": config.to_dict(),
        "voices": list(voices),
        "normalizer": calib_normalizer(config.language),
        "rejected_draws": sents.n_rejected,
        "sentences_by_split": {s: sum(x.split == s for x in sents.sentences) for s in G.SPLITS},
        "clips_by_split": {s: len(v) for s, v in rows.items()},
        "failures": [list(f) for f in failures],
        "realized": rates,
    }
    write_text_atomic(out / "calib.json", json.dumps(meta, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    return BuildResult(out, len(sents.sentences), sum(len(v) for v in rows.values()), tuple(failures), rates)
