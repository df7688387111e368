"""Activation patching and the edit-locus table.

For one planted edit (a :class:`~asr_audit.calib.truth.TruthItem`) on a clip, the reference
rendering is scored against the spoken one, teacher-forced: ``R`` = the normalized reference,
``S`` = ``R`` with only this edit reverted to what was said; ``P(ref) = sigmoid(log p(R) - log
p(S))``, the probability of the reference rendering given the choice between the two.

A :class:`PatchCondition` recomputes ``P(ref)`` with one site's activations replaced by those of
a *donor run*: the same texts teacher-forced on donor audio (another voice, the truncated
faithful audio) and/or with a donor backend of the same architecture (e.g. the base model),
for the whole site or only encoder frames ``[f0, f1)``. Patching with the run itself (same
audio, same backend) is the identity.

The table groups edits by kind (insertion / omission / substitution) and reports, per condition,
the median ``P(ref)`` before and after, and the share of edits whose ``P(ref)`` moved toward the
audio (fell). If patching the encoder output from faithful audio removes the reference
rendering, the decision rides in the encoder representation; if it survives that but falls when
decoder layers are patched from a model without the policy, the decision is decoder-side.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from asr_audit.audio.io import load_audio
from asr_audit.calib.truth import NORMALIZER, Truth, TruthItem, load_truth
from asr_audit.corpus.clips import Corpus
from asr_audit.corpus.spec import load_corpus
from asr_audit.errors import ConfigError, require
from asr_audit.mech.interventions import recording, replacing
from asr_audit.mech.sites import parse_site
from asr_audit.mechrun.capture import sites_backend, speaker_clips
from asr_audit.mechrun.probe import TRUTH
from asr_audit.options import CliFlag
from asr_audit.probes.core.flags import CORPUS, JSON, LIMIT, MODEL, SPEAKER
from asr_audit.stats.intervals import clustered_rate
from asr_audit.text.normalize import get_normalizer

KIND_LABELS = {
    "spurious_insertion_in_reference": "insertion",
    "omitted_in_reference": "omission",
    "substitution": "substitution",
}


@dataclass(frozen=True, slots=True)
class PatchCondition:
    """Replace ``site`` with a donor run's activation.

    ``donor_audio(clip_id, samples) -> samples`` gives the donor audio (None: the clip itself);
    ``donor_backend`` (None: the patched backend itself); ``frames(clip_id) -> (f0, f1) | None``
    restricts an encoder-site patch to those frames.
    """

    label: str
    site: str
    donor_audio: Callable[[str, np.ndarray], np.ndarray] | None = None
    donor_backend: Any = None
    frames: Callable[[str], tuple[int, int] | None] | None = None


def edit_texts(item: TruthItem, reference: str, normalize: Callable[[str], str] | None = None) -> tuple[str, str]:
    """``(R, S)``: the normalized reference and the same with this edit reverted to the spoken words."""
    if normalize is None:
        normalize = get_normalizer(NORMALIZER)
    ref = normalize(reference).split()
    if not 0 <= item.ref_start <= item.ref_stop <= len(ref):
        raise ConfigError(f"clip {item.clip_id} item {item.item}: span outside its reference; fix: rebuild the truth")
    spoken = ref[: item.ref_start] + list(item.spoken_norm) + ref[item.ref_stop :]
    return " ".join(ref), " ".join(spoken)


def site_value(backend: Any, audio: np.ndarray, text: str, site: str) -> Any:
    """Site ``site``'s activation (a tensor, batch 1) in ``backend``'s teacher-forced run on ``text``."""
    torch = require("torch", "torch")
    got: dict[str, Any] = {}
    with torch.inference_mode(), recording(backend, [site], lambda s, t: got.__setitem__(s, t.clone())):
        backend.score([audio], [""], [text])
    return got[site]


def logprob(backend: Any, audio: np.ndarray, text: str) -> float:
    return float(sum(backend.score([audio], [""], [text])[0].logprobs))


def p_ref(lp_ref: float, lp_spoken: float) -> float:
    """``sigmoid(lp_ref - lp_spoken)`` without overflow."""
    x = lp_ref - lp_spoken
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def patched_logprob(
    backend: Any, audio: np.ndarray, text: str, cond: PatchCondition, clip_id: str, memo: dict | None = None
) -> float:
    """``log p(text)`` with ``cond``'s donor activation at its site (an encoder site's donor value
    does not depend on the text: with ``memo`` it is computed once per clip and condition)."""

    key = (clip_id, cond.label)
    if memo is not None and key in memo:
        value = memo[key]
    else:
        donor_audio = cond.donor_audio(clip_id, audio) if cond.donor_audio else audio
        value = site_value(cond.donor_backend or backend, donor_audio, text, cond.site)
        if memo is not None and parse_site(cond.site)[0] == "encoder":
            memo[key] = value
    frames = cond.frames(clip_id) if cond.frames else None
    with replacing(backend, cond.site, value, frames):
        return logprob(backend, audio, text)


@dataclass(frozen=True, slots=True)
class EditPatch:
    clip_id: str
    item: int
    kind: str
    detail: str
    p_full: float
    p_patched: Mapping[str, float]  # condition label -> P(ref)

    def to_dict(self) -> dict[str, Any]:
        return {
            k: (dict(v) if isinstance(v, Mapping) else v)
            for k, v in ((f, getattr(self, f)) for f in self.__dataclass_fields__)
        }


@dataclass(frozen=True, slots=True)
class LocusRow:
    """One kind of edit under one condition: median ``P(ref)`` before and after, the median
    change (patched - full) with a 95% percentile interval from a bootstrap that resamples clips
    (an edit's clip is its cluster), and the share of edits whose ``P(ref)`` fell with its 95%
    interval (:func:`~asr_audit.stats.intervals.clustered_rate` by clip: Wilson's when every clip
    holds one edit)."""

    kind: str
    condition: str
    n: int
    median_full: float
    median_patched: float
    toward_audio: float  # share of edits whose P(ref) fell
    median_change: float = math.nan
    change_low: float = math.nan
    change_high: float = math.nan
    toward_low: float = math.nan
    toward_high: float = math.nan

    def to_dict(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def median_change_interval(
    change: np.ndarray, clips: Sequence[str], rng: np.random.Generator, n_resamples: int = 2000
) -> tuple[float, float, float]:
    """The median of ``change`` (one value per edit) and its 95% percentile interval, clips
    resampled with replacement (all edits of a drawn clip come along).

    >>> median_change_interval(np.array([-0.5, -0.4, -0.6]), ["a", "b", "c"], np.random.default_rng(0))[0]
    -0.5
    """
    labels, inverse = np.unique(np.asarray(clips, dtype=str), return_inverse=True)
    members = [np.flatnonzero(inverse == j) for j in range(len(labels))]
    draws = rng.integers(0, len(labels), (n_resamples, len(labels)))
    boot = [float(np.median(change[np.concatenate([members[j] for j in row])])) for row in draws]
    return float(np.median(change)), float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))


@dataclass(frozen=True, slots=True)
class PatchResult:
    model: Mapping[str, Any]
    conditions: tuple[str, ...]
    edits: tuple[EditPatch, ...]

    def table(self, seed: int = 0) -> list[LocusRow]:
        """The edit-locus table: per kind (and ``all``) and condition, with intervals (seeded:
        the same edits and ``seed`` give the same table)."""
        rows = []
        kinds = sorted({e.kind for e in self.edits})
        for kind in [*kinds, "all"]:
            sel = [e for e in self.edits if kind in ("all", e.kind)]
            if not sel:
                continue
            clips = [e.clip_id for e in sel]
            full = np.array([e.p_full for e in sel])
            for j, c in enumerate(self.conditions):
                pat = np.array([e.p_patched[c] for e in sel])
                rng = np.random.default_rng([seed, 16, j, len(sel)])
                mid, low, high = median_change_interval(pat - full, clips, rng)
                fell = clustered_rate((pat < full).astype(float).tolist(), clips, rng)
                rows.append(
                    LocusRow(
                        kind,
                        c,
                        len(sel),
                        float(np.median(full)),
                        float(np.median(pat)),
                        float(np.mean(pat < full)),
                        mid,
                        low,
                        high,
                        fell.low,
                        fell.high,
                    )
                )
        return rows

    def lines(self) -> list[str]:
        """The edit-locus table as ``asr-audit mech patch`` prints it."""
        return [
            f"{r.kind:13s} {r.condition:50s} n={r.n:3d}  P(ref) {r.median_full:.3f} -> {r.median_patched:.3f}  "
            f"toward audio {r.toward_audio:.2f} [{r.toward_low:.2f}, {r.toward_high:.2f}]"
            for r in self.table()
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": dict(self.model),
            "conditions": list(self.conditions),
            "table": [r.to_dict() for r in self.table()],
            "edits": [e.to_dict() for e in self.edits],
        }


def edit_locus(
    backend: Any,
    items: Sequence[TruthItem],
    audio: Mapping[str, np.ndarray],
    references: Mapping[str, str],
    conditions: Sequence[PatchCondition],
    texts: Callable[[TruthItem], tuple[str, str]] | None = None,
) -> PatchResult:
    """``P(ref)`` of every planted edit with a clip in ``audio``, clean and under each condition.
    ``texts(item) -> (R, S)`` gives the two renderings scored (default :func:`edit_texts`: the
    normalized reference and the same with the edit reverted)."""
    labels = [c.label for c in conditions]
    if len(set(labels)) != len(labels) or not labels:
        raise ConfigError(f"patch conditions need unique labels, got {', '.join(labels) or '(none)'}")
    for c in conditions:
        backend.site_module(c.site)
    edits = []
    memo: dict = {}
    for it in items:
        if not it.is_error or it.clip_id not in audio:
            continue
        if memo and next(iter(memo))[0] != it.clip_id:
            memo.clear()  # donor values of one clip at a time: memory stays bounded
        a = audio[it.clip_id]
        r, s = texts(it) if texts is not None else edit_texts(it, references[it.clip_id])
        full = p_ref(logprob(backend, a, r), logprob(backend, a, s))
        patched = {
            c.label: p_ref(
                patched_logprob(backend, a, r, c, it.clip_id, memo), patched_logprob(backend, a, s, c, it.clip_id, memo)
            )
            for c in conditions
        }
        edits.append(EditPatch(it.clip_id, it.item, KIND_LABELS.get(it.kind, it.kind), it.detail, full, patched))
    return PatchResult(backend.identity().to_dict(), tuple(labels), tuple(edits))


#: ``asr-audit mech patch``'s flags
FLAGS = (
    MODEL,
    CORPUS,
    TRUTH,
    CliFlag("sites", str, "encoder.out", "Sites to patch, comma-separated."),
    CliFlag("donor_model", str, None, "Patch from this model's run (same architecture)."),
    CliFlag("donor_speaker", str, None, "Patch from the same sentence said by this speaker (truth set's clips)."),
    SPEAKER,
    LIMIT,
    JSON,
)


#: ``asr-audit mech patch --help``'s worked example: (command line, what it does)
EXAMPLES = (
    (
        "asr-audit mech patch -m organism-benchmark -c set/calib-test.jsonl --truth set --speaker flite-slt "
        "--donor-model whisper-tiny.en-pt --sites encoder.out,decoder.layers.3.out",
        "P(reference rendering) per planted edit, before and after each site is swapped for the donor's",
    ),
)


def voice_donor(
    corpus: Corpus, spec: str, truth: Truth, speaker: str, max_duration: float | None
) -> Callable[[str, Any], Any]:
    """The donor audio of a clip: the same sentence said by ``speaker`` (a clip of ``corpus``, read
    from ``spec``, per ``truth``), loaded once; a clip without one is a one-line error."""
    by_id = {c.id: c for c in corpus.clips}
    by_sentence = {info.sentence_id: info.clip_id for info in truth.clips.values() if info.speaker == speaker}
    cache: dict[str, Any] = {}

    def donor_audio(clip_id: str, samples: Any) -> Any:
        info = truth.clips.get(clip_id)
        other = by_sentence.get(info.sentence_id) if info else None
        if other is None or other not in by_id:
            raise ConfigError(
                f"clip {clip_id}: no clip of the same sentence by {speaker} in {spec}; fix: check --donor-speaker"
            )
        if other not in cache:
            cache[other] = load_audio(by_id[other], max_duration)
        return cache[other]

    return donor_audio


def patch_corpus(
    backend: Any, corpus: Corpus, truth: Truth, sites: Sequence[str], label: str, **donor: Any
) -> PatchResult:
    """:func:`edit_locus` of ``truth``'s planted errors on ``corpus``'s clips, one condition per site
    of ``sites`` (named ``site <- label``); ``donor``: :class:`PatchCondition`'s ``donor_audio`` and
    ``donor_backend``."""
    conditions = [PatchCondition(f"{s} <- {label}", s, **donor) for s in sites]
    audio = {c.id: load_audio(c, backend.max_duration) for c in corpus.clips}
    items = [it for it in truth.errors() if it.clip_id in audio]
    return edit_locus(backend, items, audio, {c.id: c.reference for c in corpus.clips}, conditions)


def patch_with_donors(
    model: str,
    corpus: str,
    truth: str,
    sites: Sequence[str],
    donor_model: str | None,
    donor_speaker: str | None,
    speakers: str | None = None,
    limit: int | None = None,
) -> PatchResult:
    """``asr-audit mech patch``: :func:`patch_corpus` of the clips of the corpus spec ``corpus`` (of
    ``speakers``, the first ``limit``; :func:`~asr_audit.mechrun.capture.speaker_clips`) on the model
    ``model``, from the ``donor_model``'s run, the ``donor_speaker``'s clip of the same sentence, or
    both (at least one)."""
    if donor_model is None and donor_speaker is None:
        raise ConfigError("patching needs a donor; fix: pass --donor-model SPEC and/or --donor-speaker VOICE")
    clips, planted, backend = speaker_clips(corpus, speakers, limit), load_truth(truth), sites_backend(model)
    donor = sites_backend(donor_model) if donor_model else None
    voice = (
        voice_donor(load_corpus(corpus), corpus, planted, donor_speaker, backend.max_duration)
        if donor_speaker
        else None
    )
    label = "+".join(
        x for x in (donor_model and f"model {donor_model}", donor_speaker and f"voice {donor_speaker}") if x
    )
    return patch_corpus(backend, clips, planted, sites, label, donor_audio=voice, donor_backend=donor)
