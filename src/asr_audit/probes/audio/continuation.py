"""Forced continuation (EOS-ban): does a model write words it never heard?

Each clip is cut before a hidden tail of its last ``hide_words`` reference words: the cut lies
halfway between the end of the last kept word and the start of the first hidden one (forced
alignment), so the kept words are intact and the hidden ones absent. The truncated audio is
decoded greedily; at the step where the model first wants to end (end-of-text is its argmax)
the *plain* transcript is complete, and from there end-of-text is banned for ``extra_tokens``
more steps (the runner-up token is taken), after which decoding runs until end-of-text or
``2 * extra_tokens`` tokens after the plain transcript. Everything before the first end-of-text is identical to
a plain greedy decode, so one pass yields both.

*Hidden content words*: canonical tokens (:func:`asr_audit.text.numbers.canonical_tokens`) of
the tail that are not function words and do not occur in the kept part. *Leak rate* = hidden
content words present anywhere in the forced output / hidden content words. The words of one
clip are not independent trials (a model that recites a tail recites all of it), nor are the
clips of one sentence read in several voices: the 95% interval is sentence-clustered
(:func:`asr_audit.stats.intervals.clustered_rate`, clusters =
:func:`~asr_audit.probes.audio.targets.sentence_key` of the clip's reference); clips are reported too. An honest model fills the banned steps with
filler, repeats or punctuation; a model that has memorized the reference continues it.

Backends: PyTorch Whisper (``hf:``, ``*-pt``) through their ``torch_model``; any backend with a
``transcribe_forced(audios, extra_tokens) -> [(plain, forced)]`` method; others are refused.
Forced outputs are cached in the store (kind ``forced``, item ``extra=<n>``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from asr_audit.align import available_aligners, get_aligner
from asr_audit.align.run import align_corpus
from asr_audit.audio.io import audio_hash, load_clip_audio
from asr_audit.audio.spans import Truncate
from asr_audit.audio.transforms import held_clip
from asr_audit.corpus.clips import Clip
from asr_audit.errors import AuditError, BackendError, ConfigError
from asr_audit.options import CliFlag, Reader, Surface, build, check, flag_table
from asr_audit.probes.audio.masked import ALIGNER
from asr_audit.probes.audio.targets import sentence_key
from asr_audit.probes.core.models import Model
from asr_audit.stats.intervals import clustered_rate
from asr_audit.stats.rng import model_rng
from asr_audit.store.base import Store
from asr_audit.text.numbers import canonical_tokens

SAMPLE_RATE = 16_000
FORCED_KIND = "forced"
_FUNCTION = frozenset(
    """a an and are as at be been but by for from had has have he her his i in is it its me my
no not of on or our she so that the their them they this to us was we were what which who will with you your""".split()
)


@dataclass(frozen=True, slots=True)
class ContinuationItem:
    model: str
    clip_id: str
    cut_s: float
    kept: str
    hidden: str
    hidden_words: tuple[str, ...]
    leaked: tuple[str, ...]
    plain: str | None
    forced: str | None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            k: (list(v) if isinstance(v, tuple) else v) for k in self.__dataclass_fields__ for v in [getattr(self, k)]
        }


def hidden_content_words(kept: str, hidden: str) -> tuple[str, ...]:
    """Canonical tail tokens that are content words and absent from the kept part.

    >>> hidden_content_words("The bridge was finished in", "2011 after years of delay.")
    ('2011', 'after', 'years', 'delay')
    """
    seen = set(canonical_tokens(kept))
    out: list[str] = []
    for t in canonical_tokens(hidden):
        if t not in _FUNCTION and t not in seen and t not in out:
            out.append(t)
    return tuple(out)


def leaked_words(hidden_words: Sequence[str], forced: str) -> tuple[str, ...]:
    said = set(canonical_tokens(forced))
    return tuple(w for w in hidden_words if w in said)


@dataclass(frozen=True, slots=True)
class ContinuationPlan:
    clip_id: str
    cut_s: float
    kept: str
    hidden: str
    samples: np.ndarray


def plan_cuts(
    corpus: Any, store: Store | None, hide_words: int = 3, *, aligner: Any = None
) -> tuple[list[ContinuationPlan], list[tuple[str, str]]]:
    """Aligned cut points and truncated audio for every clip with more than ``hide_words + 1`` words."""

    if hide_words < 1:
        raise ConfigError(f"--hide-words must be >= 1, got {hide_words}")
    plans, failures = [], []
    eligible = [c for c in corpus if len(c.reference.split()) > hide_words + 1]
    by_id = {c.id: c for c in eligible}
    for res in align_corpus(aligner or get_aligner("sphinx"), eligible, store):
        if not res.ok:
            failures.append((res.clip_id, f"alignment failed: {res.error}"))
            continue
        toks = by_id[res.clip_id].reference.split()
        k = len(toks) - hide_words
        cut = (res.words[k - 1].end + res.words[k].start) / 2
        try:
            x = load_clip_audio(by_id[res.clip_id]).samples
        except AuditError as exc:
            failures.append((res.clip_id, str(exc)))
            continue
        n = int(round(cut * SAMPLE_RATE))
        if n <= 0 or n >= len(x):
            failures.append((res.clip_id, f"cut at {cut:.3f} s leaves no audio on one side"))
            continue
        plans.append(ContinuationPlan(res.clip_id, cut, " ".join(toks[:k]), " ".join(toks[k:]), x[:n].copy()))
    return plans, failures


def cut_clips(corpus: Any, plans: Sequence[ContinuationPlan]) -> dict[str, Clip]:
    """Each plan's truncated clip (by clip id), holding the cut samples and how they were made (the
    original clip and :class:`~asr_audit.audio.spans.Truncate` to the plan's samples), so a model that
    runs elsewhere is sent the cut's recipe rather than the samples."""
    by_id = {c.id: c for c in corpus}
    return {
        p.clip_id: held_clip(by_id[p.clip_id], p.samples, [Truncate(0.0, len(p.samples) / SAMPLE_RATE)]) for p in plans
    }


def refuse_forced(model: Model) -> None:
    """A :class:`~asr_audit.errors.BackendError` saying why ``model`` cannot decode with end-of-text banned."""
    if model.forced_refusal:
        raise BackendError(model.forced_refusal)


def forced_outputs(
    model: Model,
    plans: Sequence[ContinuationPlan],
    store: Store | None,
    extra_tokens: int,
    clips: Mapping[str, Clip] | None = None,
) -> dict[str, tuple[str, str] | str]:
    """``{clip id: (plain, forced)}`` or an error text, through the store: every uncached plan in one
    call of the model (:meth:`~asr_audit.probes.core.models.Model.forced`), each row naming its audio
    (the plan's clip from ``clips``, :func:`cut_clips`, or its samples)."""

    refuse_forced(model)  # refuse an unsupported model first
    key, item = model.identity().key, f"extra={extra_tokens}"
    if store is not None:
        store.register_backend(model.identity())
    hashes = {p.clip_id: audio_hash(p.samples) for p in plans}
    cached = store.get(FORCED_KIND, key, list(hashes.values()), item=item) if store is not None else {}
    out: dict[str, tuple[str, str] | str] = {}
    todo = []
    for p in plans:
        h = hashes[p.clip_id]
        if h in cached:
            out[p.clip_id] = tuple(cached[h].value)
        else:
            todo.append(p)
    rows = [((clips or {}).get(p.clip_id, p.samples), hashes[p.clip_id]) for p in todo]
    answers = model.forced(rows, extra_tokens) if rows else []
    for p, got in zip(todo, answers):
        out[p.clip_id] = got
        if store is not None and not isinstance(got, str):
            store.put(FORCED_KIND, key, [(hashes[p.clip_id], list(got), None)], item=item)
    return out


def run_continuation(
    models: Sequence[Model],
    corpus: Any,
    store: Store | None,
    hide_words: int = 3,
    *,
    extra_tokens: int = 16,
    aligner: Any = None,
    seed: int = 0,
    n_resamples: int = 1000,
) -> dict[str, Any]:
    """Leak rate of every model, wherever it runs (see the module docstring; each a
    :class:`~asr_audit.probes.core.models.Model`, labelled by its name); the CLI's JSON. ``seed``
    seeds the sentence-clustered bootstrap (one stream per model). The cuts are planned here; the
    rows name their audio (:func:`cut_clips`)."""

    sentence = {c.id: sentence_key(c.reference) for c in corpus}
    for m in models:
        refuse_forced(m)  # refuse unsupported models before any work
    plans, failures = plan_cuts(corpus, store, hide_words, aligner=aligner)
    clips = cut_clips(corpus, plans)
    results, items = [], []
    for m in models:
        got = forced_outputs(m, plans, store, extra_tokens, clips)
        mine = []
        for p in plans:
            words = hidden_content_words(p.kept, p.hidden)
            res = got[p.clip_id]
            if isinstance(res, str):
                mine.append(ContinuationItem(m.name, p.clip_id, p.cut_s, p.kept, p.hidden, words, (), None, None, res))
            else:
                mine.append(
                    ContinuationItem(
                        m.name, p.clip_id, p.cut_s, p.kept, p.hidden, words, leaked_words(words, res[1]), res[0], res[1]
                    )
                )
        ok = [i for i in mine if i.error is None]
        scored = [(w in i.leaked, sentence.get(i.clip_id, i.clip_id)) for i in ok for w in i.hidden_words]
        rate = clustered_rate([x for x, _ in scored], [c for _, c in scored], model_rng(seed, m.spec), n_resamples)
        leak, low, high = rate.estimate()  # None when no hidden word was scored (n = 0)
        results.append(
            {
                "model": m.name,
                "backend_key": m.identity().key,
                "leak_rate": leak,
                "accept_ref": leak,
                "k": rate.k,
                "n": rate.n,
                "ci_low": low,
                "ci_high": high,
                "interval": rate.interval,
                "n_sentences": len({c for _, c in scored}),
                "n_clips": len(ok),
                "n_clips_leaking": sum(bool(i.leaked) for i in ok),
                "n_failed": len(mine) - len(ok),
            }
        )
        items += mine
    return {
        "probe": "continue",
        "params": {"hide_words": hide_words, "extra_tokens": extra_tokens, "seed": seed},
        "models": results,
        "items": [i.to_dict() for i in items],
        "failures": [{"clip_id": c, "reason": r} for c, r in failures],
    }


#: ``asr-audit continue``'s flag of every option it takes
FLAGS = flag_table(
    CliFlag("hide_words", int, 3, "Reference words cut off the end of each clip.", minimum=1),
    CliFlag("extra_tokens", int, 16, "Steps with end-of-text banned after the plain transcript.", minimum=1),
    ALIGNER,
)
#: ``asr-audit continue --help``'s worked example: (command line, what it does)
EXAMPLES = (
    (
        "asr-audit continue -m whisper-tiny.en-pt -c dev.jsonl --hide-words 3",
        "cut the last 3 words; count those that leak",
    ),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ContinuationOptions:
    """The forced-continuation probe's options (``asr-audit continue`` flags, or ``[probes.continuation]``;
    ``resamples``, ``models`` and ``items`` are read by the runner only)."""

    hide_words: int = 3
    extra_tokens: int = 16
    aligner: str = "sphinx"
    resamples: int = 1000
    models: tuple[str, ...] | None = None
    items: bool = True

    def __post_init__(self) -> None:
        check(self.hide_words >= 1, "hide_words", self.hide_words, "must be >= 1", "hide 1 or more words")
        check(self.extra_tokens >= 1, "extra_tokens", self.extra_tokens, "must be >= 1", "use 1 or more steps")
        check(
            self.aligner.strip().lower() in available_aligners(),
            "aligner",
            self.aligner,
            f"is unknown (valid: {', '.join(available_aligners())})",
            f"use one of {', '.join(available_aligners())}",
        )
        check(self.resamples >= 1, "resamples", self.resamples, "must be >= 1", "use 1 or more bootstrap resamples")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], surface: Surface) -> ContinuationOptions:
        """Options from flag or spec values (``None`` = not given)."""
        r = Reader(values, surface, CONTINUATION_FIELDS, "continue")
        return build(
            cls,
            surface,
            hide_words=r.integer("hide_words", 3),
            extra_tokens=r.integer("extra_tokens", 16),
            aligner=r.text("aligner", "sphinx"),
            resamples=r.integer("resamples", 1000),
            models=r.names("models", None),
            items=r.flag("items", True),
        )


CONTINUATION_FIELDS = ("hide_words", "extra_tokens", "aligner", "resamples", "models", "items")
