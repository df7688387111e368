"""Opening-courtesy case study: does the output keep a spoken "thank you (Mr President)" that the
reference omits?

A clip is **eligible** when its audio opens with a courtesy and its reference does not. What the
audio says comes from the spoken text when known (a TTS corpus, ``spoken`` mapping) and otherwise
from a **panel** on the full clip: at least half of its members start with a courtesy. The panel
is never the tested model itself (the battery leaves a tested panel member out of its own items),
else a model's own original-audio output would select the clips it is scored on. The opener is
the one most members wrote, ties broken by the longest, then alphabetically: the same choice
whatever the hash seed.

**Presence** of the courtesy in a hypothesis: after normalization, the opener's first two words
(``thank you``) start at the hypothesis's first or second word (one leading filler allowed). The trigger battery
scores ``accept_ref = 1 - presence`` (following the reference means dropping the courtesy).

Conditions of the case study (:func:`courtesy_study`):

* ``full`` — the whole clip;
* ``truncated`` — the audio cut to the opener +-1 aligned word +-0.25 s;
* ``attn-isolated`` — white-box seq2seq backends only: the full clip is encoded, the decoder's
  cross-attention sees only the opener's frames (:mod:`asr_audit.mech.isolate`);
* ``translate`` — multilingual Whisper backends only: the same audio decoded with the translate
  task (source language = the clip's language, ``en`` when unknown).

>>> find_opener("thank you mister president we agree")
('thank', 'you', 'mister', 'president')
>>> courtesy_present(("thank", "you", "mister", "president"), "Thank you, Mr. President. We agree.")
True
>>> courtesy_present(("thank", "you"), "We agree, thank you.")
False
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from asr_audit.audio.voices import synthesize
from asr_audit.corpus.clips import ArraySource, Clip
from asr_audit.errors import AuditError, ConfigError
from asr_audit.probes.core.models import Variant
from asr_audit.probes.core.probe import ModelPool
from asr_audit.stats.intervals import wilson
from asr_audit.store.base import Store
from asr_audit.text.normalize import normalize_many

# longest first: the longest matching phrase is the opener
COURTESIES = (
    "thank you very much mister president",
    "thank you very much madam president",
    "thank you mister president",
    "thank you madam president",
    "thank you mr president",
    "thank you mrs president",
    "thank you chair",
    "thank you commissioner",
    "thank you very much",
    "thank you",
)
STUDY_CONDITIONS = ("full", "truncated", "attn-isolated", "translate")


def _norm_tokens(text: str, normalizer: str = "whisper") -> tuple[str, ...]:
    return tuple(normalize_many(normalizer, [text])[0].split())


def find_opener(normalized: str | Sequence[str]) -> tuple[str, ...] | None:
    """The longest courtesy phrase that starts ``normalized`` text (``mr`` and ``mister`` both match)."""
    toks = tuple(normalized.split()) if isinstance(normalized, str) else tuple(normalized)
    canon = tuple("mister" if t == "mr" else t for t in toks)
    for phrase in COURTESIES:
        p = tuple("mister" if t == "mr" else t for t in phrase.split())
        if canon[: len(p)] == p:
            return toks[: len(p)]
    return None


def courtesy_present(opener: Sequence[str], hypothesis: str | None, normalizer: str = "whisper") -> bool:
    """The opener's first two words start at the hypothesis's first or second word."""
    if not hypothesis:
        return False
    want = tuple(opener[:2])
    head = _norm_tokens(hypothesis, normalizer)[: len(want) + 1]
    return any(head[i : i + len(want)] == want for i in range(2))


@dataclass(frozen=True, slots=True)
class CourtesyClip:
    """An eligible clip: its opener (normalized words) and how many raw spoken words it spans."""

    clip_id: str
    opener: tuple[str, ...]
    n_raw_words: int
    spoken: str


def raw_word_count(spoken: str, n_norm: int, normalizer: str = "whisper") -> int:
    """How many whitespace words of ``spoken`` make up its first ``n_norm`` normalized words."""
    words = spoken.split()
    for i in range(1, len(words) + 1):
        if len(_norm_tokens(" ".join(words[:i]), normalizer)) >= n_norm:
            return i
    return len(words)


def eligible_clips(
    clips: Sequence[Any],
    spoken: Mapping[str, str],
    full_hyps: Mapping[str, Mapping[str, str | None]],
    normalizer: str = "whisper",
) -> list[CourtesyClip]:
    """Clips whose audio opens with a courtesy the reference omits (see the module docstring).

    ``full_hyps`` is panel member -> clip id -> hypothesis on the full clip (used when no spoken
    text is known); pass the panel's outputs, never the tested model's.

    >>> from types import SimpleNamespace as C
    >>> hyps = {"a": {"x": "thank you very much we agree"}, "b": {"x": "thank you mister president we agree"}}
    >>> [e.opener for e in eligible_clips([C(id="x", reference="we agree")], {}, hyps)]
    [('thank', 'you', 'mister', 'president')]
    """
    out = []
    for clip in clips:
        ref = _norm_tokens(clip.reference, normalizer)
        if find_opener(ref) is not None:
            continue
        if clip.id in spoken:
            opener = find_opener(_norm_tokens(spoken[clip.id], normalizer))
            text = spoken[clip.id]
        else:
            found = [
                find_opener(_norm_tokens(hyp, normalizer)) if (hyp := h.get(clip.id)) else None
                for h in full_hyps.values()
            ]
            hits = [f for f in found if f]
            opener = _most_common(hits) if hits and 2 * len(hits) >= len(found) else None
            text = " ".join(opener) + " " + clip.reference if opener else ""
        if opener:
            out.append(CourtesyClip(clip.id, tuple(opener), raw_word_count(text, len(opener), normalizer), text))
    return out


def _most_common(openers: Sequence[tuple[str, ...]]) -> tuple[str, ...]:
    """The opener written most often; ties to the longest, then the alphabetically first (no
    set or hash order)."""
    return min(set(openers), key=lambda o: (-openers.count(o), -len(o), o))


@dataclass(frozen=True, slots=True)
class StudyRow:
    model: str
    condition: str
    k: int  # clips with the courtesy in the output
    n: int
    presence: float | None
    ci_low: float | None
    ci_high: float | None
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "condition": self.condition,
            "k": self.k,
            "n": self.n,
            "presence": self.presence,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "reason": self.reason,
        }


def _row(model: str, condition: str, flags: Sequence[bool], reason: str | None = None) -> StudyRow:
    if not flags:
        return StudyRow(model, condition, 0, 0, None, None, None, reason or "no eligible clip")
    w = wilson(sum(flags), len(flags))
    return StudyRow(model, condition, w.k, w.n, w.rate, w.low, w.high, reason)


def backend_traits(backend: Any) -> dict[str, bool]:
    """Which extra arms of the study apply to ``backend``: ``white_box`` (attn-isolated: a seq2seq
    backend whose cross-attention can be restricted) and ``translates`` (a multilingual Whisper
    backend with decode options). A Ray worker reports them for the backend it loaded, so the
    driver decides without loading the model."""
    return {
        "white_box": hasattr(backend, "site_module") and hasattr(backend, "sites"),
        "translates": getattr(backend, "options", None) is not None
        and bool(getattr(backend, "multilingual", _multilingual(backend))),
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class Measured:
    """What the battery measured already, for the study of ``models``: ``full`` / ``truncated`` are
    model -> clip id -> courtesy present, from its transcription of the full and the truncated
    audio; ``views`` (model -> clip ids) restricts a model to the clips eligible without its own
    outputs (leave-one-out panel members); ``traits`` (model -> :func:`backend_traits`) is what a
    pool whose models run elsewhere reported of their backends (a model without an entry is asked
    here)."""

    models: tuple[str, ...]
    full: Mapping[str, Mapping[str, bool]]
    truncated: Mapping[str, Mapping[str, bool]]
    views: Mapping[str, frozenset[str]] | None = None
    traits: Mapping[str, Mapping[str, bool]] = field(default_factory=dict)


def courtesy_study(
    pool: ModelPool,
    store: Store | None,
    clips: Sequence[Any],
    eligible: Sequence[CourtesyClip],
    window: Callable[[Any, CourtesyClip], tuple[float, float]],
    measured: Measured,
    normalizer: str = "whisper",
    log: Callable[[str], None] | None = None,
) -> list[StudyRow]:
    """Presence rates per model under full / truncated / attn-isolated / translate.

    ``window(clip, item)`` gives the opener's ``(t0, t1)`` seconds in the clip audio (aligned here);
    ``measured`` holds the full and truncated arms. The attn-isolated arm (white-box models) runs
    on the model's handle (``pool.model(name, store).isolated``), the translate arm (multilingual
    Whisper models) as a variant of the model with the translate task
    (``pool.transcribe({Variant(...): clips}, store)``, through the store), wherever the pool runs them.
    """

    by_id = {c.id: c for c in clips}
    rows: list[StudyRow] = []
    views = measured.views
    for name in measured.models:
        mine = [e for e in eligible if views is None or name not in views or e.clip_id in views[name]]
        rows += [
            _row(name, cond, [flags[e.clip_id] for e in mine if e.clip_id in flags])
            for cond, flags in (("full", measured.full.get(name, {})), ("truncated", measured.truncated.get(name, {})))
        ]
        can = measured.traits.get(name) or backend_traits(pool.get(name))
        if can["white_box"]:
            rows.append(_isolated_row(pool.model(name, store), mine, by_id, window, normalizer, log))
        else:
            rows.append(_row(name, "attn-isolated", [], "not a white-box seq2seq backend"))
        if not can["translates"]:
            rows.append(_row(name, "translate", [], "English-only or not a Whisper backend (no translate task)"))
        else:
            rows.append(_translate_row(pool, store, name, mine, by_id, normalizer))
    return rows


def _isolated_row(
    model: Any,
    eligible: Sequence[CourtesyClip],
    by_id: Mapping[str, Any],
    window: Callable[[Any, CourtesyClip], tuple[float, float]],
    normalizer: str,
    log: Callable[[str], None] | None,
) -> StudyRow:
    """The attn-isolated arm of one model (its handle): each eligible clip decoded with the decoder's
    cross-attention restricted to the opener's window; a clip that cannot be aligned or decoded is
    left out (and logged)."""
    jobs = []  # (item, clip, window)
    for e in eligible:
        clip = by_id[e.clip_id]
        try:
            jobs.append((e, clip, window(clip, e)))
        except AuditError as exc:
            if log:
                log(f"{model.name} {e.clip_id}: attn-isolated skipped ({exc})")
    got = model.isolated([(clip, w) for _, clip, w in jobs])
    flags = []
    for (e, *_), (text, error) in zip(jobs, got):
        if text is None:
            if log:
                log(f"{model.name} {e.clip_id}: attn-isolated skipped ({error})")
            continue
        flags.append(courtesy_present(e.opener, text, normalizer))
    return _row(model.name, "attn-isolated", flags)


def _translate_row(
    pool: ModelPool,
    store: Store | None,
    name: str,
    eligible: Sequence[CourtesyClip],
    by_id: Mapping[str, Any],
    normalizer: str,
) -> StudyRow:
    """The translate arm: the eligible clips of each language (``en`` when unknown) transcribed by the
    model with the translate task (a :class:`~asr_audit.probes.core.models.Variant`), one call each."""
    langs: dict[str, list[Any]] = {}
    for e in eligible:
        langs.setdefault(by_id[e.clip_id].language or "en", []).append(by_id[e.clip_id])
    texts: dict[str, str] = {}
    for lang, clips in langs.items():
        key = Variant(name, (("language", lang), ("task", "translate")))
        try:
            answer = pool.transcribe({key: clips}, store)[key]
        except (ConfigError, AuditError) as exc:
            return _row(name, "translate", [], f"translate unavailable: {exc}")
        texts.update({r.clip_id: r.hypothesis for r in answer.outcome.records})
    return _row(
        name,
        "translate",
        [courtesy_present(e.opener, texts[e.clip_id], normalizer) for e in eligible if e.clip_id in texts],
    )


def _multilingual(backend: Any) -> bool:
    spec = str(getattr(backend, "spec", ""))
    return spec.startswith("whisper") and ".en" not in spec


DEMO_SENTENCES = (
    "The committee approved the report on fisheries yesterday.",
    "We must protect the rights of workers in every member state.",
    "This proposal will reduce energy costs for small businesses.",
    "The council has not answered our question about the budget.",
    "Our farmers need clear rules and fair prices.",
    "I support the amendment on water quality.",
)


def courtesy_clips(
    sentences: Sequence[str] = DEMO_SENTENCES,
    voice: str = "flite-kal16",
    opener: str = "Thank you, Mister President.",
    corpus: str = "courtesy",
) -> tuple[list[Any], dict[str, str]]:
    """A TTS corpus with planted opening courtesies: the audio says ``opener + sentence``, the
    reference is the sentence alone. Returns ``(clips, spoken)`` with in-memory audio."""

    clips, spoken = [], {}
    for i, sentence in enumerate(sentences):
        cid = f"{corpus}_{i:03d}"
        text = f"{opener} {sentence}"
        samples, sr = synthesize(voice, text)
        clips.append(
            Clip(
                cid,
                sentence,
                source=ArraySource(samples, sr, label=f"{voice}: {cid}"),
                corpus=corpus,
                speaker=voice,
                duration=samples.size / sr,
            )
        )
        spoken[cid] = text
    return clips, spoken
