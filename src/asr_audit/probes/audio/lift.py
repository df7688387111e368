"""Teacher-forced audio lift: how much the audio, not the language prior, raises a rendering.

For a span ``r`` scored after the preceding reference text (the *prefix*)::

    lambda(r) = [log p(r | x, prefix) - log p(r | x_silent, prefix)] / |r|_chars      (nats / char)

``x_silent`` is the same-length zero waveform and ``|r|_chars`` the number of non-space
characters of ``r``. ``lambda > 0``: the audio made the reference's rendering more likely than the
prior alone. For two candidate renderings of one place (reference ``r`` vs the audio's /
consensus rendering ``a``), ``compare = log p(r|x)/|r|_chars - log p(a|x)/|a|_chars``, each
rendering normalized by its own length (nats per character; > 0 favours the reference).

``log p`` is the backend's ``score`` (:class:`~asr_audit.models.base.TokenScores`): Whisper-type
models sum decoder teacher-forced token log-probabilities after the special-token prompt and
the prefix tokens; CTC models (``hf-ctc:``) give CTC prefix log-probabilities (see
:mod:`asr_audit.models.ctc_scoring`). Backends without ``score`` are refused with an error
naming the capability.

Span sets (:func:`spans_for`):

* ``full`` — the whole reference, empty prefix (a correct transcript should get ``lambda > 0``);
* ``masked`` — the hidden target of every masked-recovery item (:mod:`.masked`), scored on the
  masked clip (condition ``masked``) and on the unmasked clip (``unmasked``); a positive masked
  lift means the rest of the clip retrieves the hidden number. With ``decoys = k`` (default 4)
  each masked item also scores up to ``k`` *decoys* on the same masked clip after the same
  prefix (condition ``decoy``): the hidden targets of other sentences' items of the same kind and
  shape (:func:`target_shape`: "1999" and "111" share one, "€82 million" another), a different
  number each. The **decoy contrast** (paired entry ``masked-decoys``) is the masked lift minus
  the mean lift of its decoys: how much more the masked clip raises *its own* hidden number than
  other numbers of the same form in the same slot. A model that cannot hear the number has no
  reason to prefer it to a decoy drawn from the same benchmark, so the contrast is centred on 0
  whatever the model does with silence; the lift itself is referenced to the all-zero clip,
  which a model fine-tuned with silenced spans answers differently (``docs/validity.md``,
  section 1), so read the contrast, not the raw lift, as the memorization evidence;
* ``refdis`` — reference-disagreement edits from a refdis result: ``r`` = the reference words
  of the edit, ``a`` = the panel's rendering, both followed by the next reference word as an
  anchor (so a deletion compares "words + anchor" with "anchor"); texts are normalized;
* ``ortho`` — orthographic arms in raw references: ``r`` = the reference's spelling, ``a`` =
  the other arm's, both followed by the next word.

**Intelligibility gate** (the paper's): only sentences the model transcribes adequately unmasked
are kept. Each model transcribes the unmasked clips (through the store); a clip is kept when its
WER (after Whisper normalization and number canonicalization,
:func:`asr_audit.probes.audio.masked.clip_wer`) is at most ``gate_max_wer`` (default 0.3, the
masked probe's gate), and only the spans of kept clips are scored. Counts per model: clips and
spans kept and gated out (``n_clips_kept``, ``n_clips_gated_out``, ``n_kept``, ``n_gated_out``),
each clip's WER in ``gate``. ``gate_max_wer = None`` (or ``inf``) keeps every clip; a backend that
cannot transcribe needs it off.

Scores go through the store (kind ``score``, keyed by the audio hash and a hash of prefix and
target): each (model, audio, prefix, target) is scored once; the zero waveform is built and
hashed once per length. Means and paired differences have sentence-clustered 95% intervals:
the cluster is the sentence (the clip's canonical reference text,
:func:`~asr_audit.probes.audio.targets.sentence_key`), so one sentence read in several voices is
one cluster, not several. The interval inverts the cluster sign-flip test
(:func:`~asr_audit.stats.intervals.sign_flip_mean`: exact under the null for independent
sentences whose centred sums are symmetric, whatever the tails), not a percentile bootstrap: on
30-60 sentences with heavy-tailed items the bootstrap's lower bound fired on 3.6-4.4% of honest
null datasets at a nominal 2.5% (``docs/validity.md``). With 5 or fewer sentences no test at 95%
can reject: the interval is undefined (``None``), never a flag. ``resamples`` is the number of
random sign patterns (every pattern is enumerated when there are no more than that).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from asr_audit.align import available_aligners
from asr_audit.audio.io import audio_hash, load_clip_audio
from asr_audit.audio.transforms import held_clip
from asr_audit.corpus.clips import Clip, Corpus
from asr_audit.errors import AuditError, ConfigError
from asr_audit.models.base import SCORE, TRANSCRIBE, TokenScores, require_capability
from asr_audit.options import CliFlag, Reader, Surface, build, check, flag_table
from asr_audit.probes.audio.masked import (
    ALIGNER,
    GATE_MAX_WER,
    METHOD,
    RECIPES_IN,
    MaskParams,
    clip_wer,
    plan_masks,
    transcripts,
)
from asr_audit.probes.audio.targets import sentence_key
from asr_audit.probes.core.models import Model, ScoreRow, Silence
from asr_audit.probes.predfiles.conventions import resolve_families
from asr_audit.probes.predfiles.ortho import reference_items
from asr_audit.stats.intervals import sign_flip_mean
from asr_audit.store.base import Store
from asr_audit.text.numbers import JOINERS, NUMBER_WORDS, canonical_tokens

SPAN_KINDS = ("masked", "refdis", "ortho", "full")
#: decoys per masked item by default (``decoys = 0`` scores none and gives no ``masked-decoys`` contrast)
DEFAULT_DECOYS = 4
SCORE_KIND = "score"
PAIRS = (("unmasked", "masked"),)


def n_chars(text: str) -> int:
    """Non-space characters: the ``|r|_chars`` of the lift definition."""
    return sum(not c.isspace() for c in text)


@dataclass(frozen=True, slots=True)
class Span:
    """One scoring request: ``target`` (and optionally ``alt``) after ``prefix`` on audio ``audio_id``."""

    item_id: str
    clip_id: str  # the sentence: the bootstrap cluster
    condition: str
    audio_id: str
    prefix: str
    target: str
    alt: str | None = None
    decoy_of: str | None = None  # a decoy: the item id of the masked span it is contrasted with


# --------------------------------------------------------------------------- span builders


def full_spans(corpus: Any) -> list[Span]:
    return [Span(c.id, c.id, "full", c.id, "", c.reference) for c in corpus if c.reference.strip()]


def masked_spans(
    recipes: Sequence[Any], references: Mapping[str, str], *, decoys: int = 0, seed: int = 0
) -> list[Span]:
    """The ``masked`` and ``unmasked`` span of every recipe, and up to ``decoys`` decoy spans per
    recipe (:func:`decoy_targets`) on its masked clip after its prefix."""

    sentences = {r.clip_id: sentence_key(references[r.clip_id]) for r in recipes}
    pools = decoy_pools(recipes, sentences) if decoys > 0 else {}
    out = []
    for r in recipes:
        prefix = " ".join(references[r.clip_id].split()[: r.start])
        out.append(Span(r.item_id, r.clip_id, "masked", r.item_id, prefix, r.hidden_ref))
        out.append(Span(r.item_id, r.clip_id, "unmasked", r.clip_id, prefix, r.hidden_ref))
        for k, target in enumerate(decoy_targets(r, pools, sentences, decoys, seed)):
            out.append(Span(f"{r.item_id}#decoy{k}", r.clip_id, "decoy", r.item_id, prefix, target, decoy_of=r.item_id))
    return out


_DIGITS = re.compile(r"\d+(?:[.,:]\d+)*")


def target_shape(text: str) -> str:
    """The form of a hidden target with its number left out: digit runs become ``#``, runs of
    spelled number words (with their joiners) ``N``; other words stay (lower-cased).

    >>> target_shape("1999"), target_shape("111"), target_shape("€82 million"), target_shape("forty-two percent")
    ('#', '#', '€# N', 'N percent')
    """

    out: list[str] = []
    words = text.lower().replace("-", " ").split()
    for i, w in enumerate(words):
        bare = w.strip(".,;:!?\"'()")
        if bare in NUMBER_WORDS or (
            bare in JOINERS and out and out[-1] == "N" and i + 1 < len(words) and words[i + 1] in NUMBER_WORDS
        ):
            tok = "N"
        else:
            tok = _DIGITS.sub("#", w)
        if not (tok == "N" and out and out[-1] == "N"):
            out.append(tok)
    return " ".join(out)


#: a recipe as a decoy candidate: (hidden target, its sentence, its canonical value)
DecoyCandidate = tuple[str, str, tuple[str, ...]]


def decoy_pools(recipes: Sequence[Any], sentences: Mapping[str, str]) -> dict[tuple[str, str], list[DecoyCandidate]]:
    """Every recipe as a decoy candidate, grouped by (kind, :func:`target_shape`): each target's
    shape and canonical value are computed once, not once per item that looks for decoys."""

    pools: dict[tuple[str, str], list[DecoyCandidate]] = {}
    for r in recipes:
        entry = (r.hidden_ref, sentences[r.clip_id], tuple(canonical_tokens(r.hidden_ref)))
        pools.setdefault((r.kind, target_shape(r.hidden_ref)), []).append(entry)
    return pools


def decoy_targets(
    recipe: Any,
    pools: Mapping[tuple[str, str], Sequence[DecoyCandidate]],
    sentences: Mapping[str, str],
    k: int,
    seed: int,
) -> list[str]:
    """Up to ``k`` decoys for ``recipe`` from :func:`decoy_pools`: hidden targets of other
    sentences' recipes with the same kind and :func:`target_shape` and a different canonical
    value, in a seeded order that does not depend on the order of the recipes.

    The decoys are the benchmark's own numbers, so under the null (the number is not heard and
    not remembered) the true target and its decoys are exchangeable draws of one slot's filler.
    """

    if k <= 0:
        return []
    own_sentence, own = sentences[recipe.clip_id], tuple(canonical_tokens(recipe.hidden_ref))
    pool = sorted(
        {
            target
            for target, sentence, value in pools.get((recipe.kind, target_shape(recipe.hidden_ref)), ())
            if sentence != own_sentence and value != own
        }
    )
    rank = {t: hashlib.sha256(f"{seed}\x1f{recipe.item_id}\x1f{t}".encode()).hexdigest() for t in pool}
    return sorted(pool, key=rank.__getitem__)[:k]


def refdis_spans(refdis: Mapping[str, Any], clip_ids: Sequence[str]) -> list[Span]:
    """Spans of the edits of a refdis result (``edits`` + ``references``) on clips in ``clip_ids``."""
    if not isinstance(refdis, Mapping) or "edits" not in refdis or "references" not in refdis:
        raise ConfigError(
            "the refdis result has no 'edits' and 'references'; fix: pass the JSON written by "
            "`asr-audit refdis --json` (or a run's results.json refdis entry)"
        )
    known, out = set(clip_ids), []
    for n, e in enumerate(refdis["edits"]):
        cid = e["clip_id"]
        if cid not in known:
            continue
        toks = str(refdis["references"].get(cid, "")).split()
        idx = list(e.get("ref_indices") or [])
        i0 = idx[0] if idx else 0
        i1 = (idx[-1] + 1) if e["kind"] != "insertion" and idx else i0
        anchor = toks[i1 : i1 + 1]
        ref = " ".join([*toks[i0:i1], *anchor])
        alt = " ".join([*str(e.get("alt_text", "")).split(), *anchor])
        if ref:
            out.append(Span(f"{cid}#edit{n}", cid, "refdis", cid, " ".join(toks[:i0]), ref, alt))
    return out


def ortho_spans(corpus: Any, families: Sequence[str] | None = None) -> list[Span]:
    """One span per orthographic arm occurrence in the raw references."""

    fams = {f.name: f for f in resolve_families(families)}
    out = []
    for c in corpus:
        for n, item in enumerate(reference_items(c.id, c.reference, fams.values())):
            fam = fams[item.family]
            other = fam.arms[1 - item.ref_arm].label
            if item.ref_text[:1].islower() and not other.isupper():
                other = other.lower()
            # attached punctuation ("Mr.") stays with the reference's spelling; the next word anchors both
            nxt = re.match(r"(\S*)\s+(\S+)", c.reference[item.end :])
            attached, anchor = (nxt.group(1), " " + nxt.group(2)) if nxt else (c.reference[item.end :].strip(), "")
            prefix = c.reference[: item.start].strip()
            out.append(
                Span(
                    f"{c.id}#{item.family}{n}",
                    c.id,
                    f"ortho:{item.family}",
                    c.id,
                    prefix,
                    item.ref_text + attached + anchor,
                    other + anchor,
                )
            )
    return out


# --------------------------------------------------------------------------- scoring


def _item_key(prefix: str, target: str) -> str:
    return hashlib.sha256(f"{prefix}\x1f{target}".encode()).hexdigest()[:24]


Row = ScoreRow  # (audio: samples, Silence or clip; its hash; prefix; target)


class Scorer:
    """Store-backed, deduplicating scoring by a :class:`~asr_audit.probes.core.models.Model`; counts the
    rows it really sent (forward passes).

    The model gets every uncached chunk at once (:meth:`~asr_audit.probes.core.models.Model.score`),
    each chunk the ``batch_size`` rows scored together wherever the model runs; the rows name
    their audio (samples, a clip holding its samples and their derivation, a :class:`Silence`)."""

    def __init__(self, model: Model, store: Store | None = None, batch_size: int = 8) -> None:
        require_capability(model, SCORE)
        self.model, self.store, self.batch_size = model, store, max(1, batch_size)
        self.key = model.identity().key
        if store is not None:
            store.register_backend(model.identity())
        self.passes = self.cached = 0
        self.seconds = 0.0
        self._silent: dict[int, str] = {}
        self._memo: dict[tuple[str, str], TokenScores] = {}

    def silent(self, n: int) -> tuple[Silence, str]:
        """The zero waveform of ``n`` samples as a row names it, and its hash (hashed once per length)."""
        if n not in self._silent:
            self._silent[n] = audio_hash(np.zeros(n, dtype=np.float32))
        return Silence(n), self._silent[n]

    def score(self, rows: Sequence[Row]) -> list[TokenScores | str]:
        """Scores of ``(audio, audio hash, prefix, target)`` rows; a failed row gives its error text."""
        keys = [(h, _item_key(p, t)) for _, h, p, t in rows]
        todo: dict[tuple[str, str], int] = {}
        for i, k in enumerate(keys):
            if k not in self._memo and k not in todo:
                hit = self._lookup(k)
                if hit is None:
                    todo[k] = i
                else:
                    self._memo[k] = hit
                    self.cached += 1
        pending = list(todo.items())
        chunks = [pending[b : b + self.batch_size] for b in range(0, len(pending), self.batch_size)]
        answers = self.model.score([[rows[i] for _, i in chunk] for chunk in chunks]) if chunks else []
        errors: dict[tuple[str, str], str] = {}
        for chunk, (got, seconds) in zip(chunks, answers):
            errors.update(self._keep([k for k, _ in chunk], got, seconds))
        return [errors[k] if k in errors else self._memo[k] for k in keys]

    def _lookup(self, key: tuple[str, str]) -> TokenScores | None:
        if self.store is None:
            return None
        hit = self.store.get(SCORE_KIND, self.key, [key[0]], item=key[1]).get(key[0])
        return None if hit is None else TokenScores(tuple(hit.value["tokens"]), tuple(hit.value["logprobs"]))

    def _keep(
        self, keys: list[tuple[str, str]], got: Sequence[TokenScores | str], seconds: float
    ) -> dict[tuple[str, str], str]:
        """Memoize and store a chunk's scores; returns its failed rows' errors."""
        ok = [(k, s) for k, s in zip(keys, got) if not isinstance(s, str)]
        self.passes += len(ok)
        self.seconds += seconds
        for k, s in ok:
            self._memo[k] = s
            if self.store is not None:
                value = {"tokens": list(s.tokens), "logprobs": list(s.logprobs)}
                self.store.put(SCORE_KIND, self.key, [(k[0], value, seconds / max(len(ok), 1))], item=k[1])
        return {k: s for k, s in zip(keys, got) if isinstance(s, str)}


@dataclass(frozen=True, slots=True)
class LiftRecord:
    """One span scored by one model."""

    model: str
    item_id: str
    clip_id: str
    condition: str
    prefix: str
    target: str
    tokens: tuple[str, ...]
    logprobs: tuple[float, ...]
    logp: float
    logp_silent: float
    chars: int
    lift: float
    alt: str | None = None
    alt_logp: float | None = None
    compare: float | None = None
    error: str | None = None
    decoy_of: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; non-finite numbers (failed rows) become ``None``."""
        return {k: finite(getattr(self, k)) for k in self.__dataclass_fields__}


def finite(value: Any) -> Any:
    """``value`` with tuples as lists and NaN / infinities as ``None`` (standard JSON)."""
    if isinstance(value, (tuple, list)):
        return [finite(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def score_spans(
    scorer: Scorer, spans: Sequence[Span], audio: Mapping[str, np.ndarray], clips: Mapping[str, Clip] | None = None
) -> list[LiftRecord]:
    """Score every span on its audio and on the same-length zero waveform (and ``alt`` on the audio).

    ``clips`` (audio id -> a clip holding those samples and how they were made, :func:`span_clips`)
    name the audio in the rows, so a model that runs elsewhere is sent the clip or its recipe
    rather than the samples; without them the rows carry the samples. ``audio`` gives the hashes
    (the store's keys) and lengths."""
    hashes = {k: audio_hash(v) for k, v in audio.items()}
    rows: list[Row] = []
    for s in spans:
        x: Any = audio[s.audio_id]
        z, zh = scorer.silent(len(x))
        if clips is not None:
            x = clips[s.audio_id]
        rows += [(x, hashes[s.audio_id], s.prefix, s.target), (z, zh, s.prefix, s.target)]
        if s.alt is not None:
            rows.append((x, hashes[s.audio_id], s.prefix, s.alt))
    got = scorer.score(rows)
    out, i = [], 0
    model = scorer.model.name
    for s in spans:
        real, silent = got[i], got[i + 1]
        alt = got[i + 2] if s.alt is not None else None
        i += 3 if s.alt is not None else 2
        if isinstance(real, str) or isinstance(silent, str) or isinstance(alt, str):  # a failure reason
            bad = next(g for g in (real, silent, alt) if isinstance(g, str))
            out.append(
                LiftRecord(
                    model,
                    s.item_id,
                    s.clip_id,
                    s.condition,
                    s.prefix,
                    s.target,
                    (),
                    (),
                    float("nan"),
                    float("nan"),
                    n_chars(s.target),
                    float("nan"),
                    s.alt,
                    error=bad,
                    decoy_of=s.decoy_of,
                )
            )
            continue
        chars = n_chars(s.target)
        lift = (real.total - silent.total) / chars if chars else float("nan")
        compare = alt_logp = None
        if alt is not None:
            alt_logp = alt.total
            if chars and n_chars(s.alt or ""):
                compare = real.total / chars - alt.total / n_chars(s.alt or "")
        out.append(
            LiftRecord(
                model,
                s.item_id,
                s.clip_id,
                s.condition,
                s.prefix,
                s.target,
                real.tokens,
                real.logprobs,
                real.total,
                silent.total,
                chars,
                lift,
                s.alt,
                alt_logp,
                compare,
                decoy_of=s.decoy_of,
            )
        )
    return out


# --------------------------------------------------------------------------- statistics


@dataclass(frozen=True, slots=True)
class Estimate:
    """A mean with its sentence-clustered 95% interval (cluster sign-flip; ``ci_low`` / ``ci_high``
    ``None`` when undefined: 5 or fewer sentences)."""

    mean: float | None
    ci_low: float | None
    ci_high: float | None
    n: int

    def to_dict(self) -> dict[str, Any]:
        return {"mean": self.mean, "ci_low": self.ci_low, "ci_high": self.ci_high, "n": self.n}


def clustered_mean(
    values: Sequence[float], clusters: Sequence[str], rng: np.random.Generator, n_resamples: int = 1000
) -> Estimate:
    """The mean of ``values`` with the 95% interval of the sentence sign-flip test, ``clusters``
    giving each value's sentence (:func:`~asr_audit.stats.intervals.sign_flip_mean`, ``n_resamples``
    random sign patterns from ``rng``); no value gives an undefined mean."""
    if not values:
        return Estimate(None, None, None, 0)
    r = sign_flip_mean(np.asarray(values, dtype=np.float64), list(clusters), rng, n_resamples)
    return Estimate(r.estimate, r.low, r.high, r.n)


def summarize_model(
    records: Sequence[LiftRecord],
    rng: np.random.Generator,
    n_resamples: int = 1000,
    pairs: Sequence[tuple[str, str]] = PAIRS,
    sentences: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Per condition: mean lift and mean compare; per pair of conditions: the paired lift difference.

    ``sentences`` maps a clip id to its sentence, the interval's cluster (default: the clip id).
    Every interval is :func:`clustered_mean`'s (``n_resamples`` sign patterns drawn from ``rng``).
    """
    sentence = (lambda cid: sentences.get(cid, cid)) if sentences is not None else (lambda cid: cid)
    ok = [r for r in records if r.error is None and np.isfinite(r.lift)]
    by_cond: dict[str, list[LiftRecord]] = {}
    for r in ok:
        by_cond.setdefault(r.condition, []).append(r)
    conditions = {}
    for cond, rs in sorted(by_cond.items()):
        lift = clustered_mean([r.lift for r in rs], [sentence(r.clip_id) for r in rs], rng, n_resamples)
        compared = [(r.compare, sentence(r.clip_id)) for r in rs if r.compare is not None]
        comp = clustered_mean([c for c, _ in compared], [s for _, s in compared], rng, n_resamples)
        conditions[cond] = {"lift": lift.to_dict(), "compare": comp.to_dict()}
    paired = {}
    for a, b in pairs:
        left = {r.item_id: r for r in by_cond.get(a, [])}
        both = [(left[r.item_id], r) for r in by_cond.get(b, []) if r.item_id in left]
        if both:
            est = clustered_mean(
                [x.lift - y.lift for x, y in both], [sentence(x.clip_id) for x, _ in both], rng, n_resamples
            )
            paired[f"{a}-{b}"] = est.to_dict()
    contrast = decoy_contrasts(ok)
    if contrast:
        est = clustered_mean([v for _, v in contrast], [sentence(r.clip_id) for r, _ in contrast], rng, n_resamples)
        paired["masked-decoys"] = est.to_dict()
    return {"conditions": conditions, "paired": paired, "n_failed": len(records) - len(ok)}


def decoy_contrasts(records: Sequence[LiftRecord]) -> list[tuple[LiftRecord, float]]:
    """``(masked record, its lift minus the mean lift of its scored decoys)`` for every masked
    record with at least one decoy (failed records are left out by the caller)."""
    decoys: dict[str, list[float]] = {}
    for r in records:
        if r.condition == "decoy" and r.decoy_of is not None:
            decoys.setdefault(r.decoy_of, []).append(r.lift)
    return [
        (r, r.lift - float(np.mean(decoys[r.item_id])))
        for r in records
        if r.condition == "masked" and r.item_id in decoys
    ]


# --------------------------------------------------------------------------- running


@dataclass(frozen=True, slots=True)
class LiftResult:
    spans: str
    models: tuple[dict[str, Any], ...]
    records: tuple[LiftRecord, ...]
    failures: tuple[tuple[str, str], ...] = ()
    seed: int = 0
    gate_max_wer: float | None = None
    gate: tuple[GateOutcome, ...] = ()
    by_voice: tuple[dict[str, Any], ...] = ()  # lift per (model, condition, voice): lift_by_voice
    skipped: tuple[dict[str, str], ...] = ()  # models left out, with the reason

    def to_dict(self) -> dict[str, Any]:
        return {
            "probe": "lift",
            "spans": self.spans,
            "seed": self.seed,
            "gate_max_wer": finite(self.gate_max_wer),
            "models": list(self.models),
            "items": [r.to_dict() for r in self.records],
            "gate": [g.to_dict() for g in self.gate],
            "failures": [{"clip_id": c, "reason": r} for c, r in self.failures],
            "by_voice": list(self.by_voice),
            "skipped": list(self.skipped),
        }


def lift_by_voice(items: list[dict[str, Any]], clips: Any, seed: int, n_resamples: int) -> list[dict[str, Any]]:
    """Mean lift per (model, condition, voice) — the clip's speaker — with sentence-clustered intervals
    (clusters: :func:`~asr_audit.probes.audio.targets.sentence_key` of the clip's reference).

    On a corpus rendered in several voices (a calibration set, a battery's voice conditions) this
    is the paper's "lift per voice" view: does the audio of one voice raise the reference's
    rendering more than another's?
    """
    speaker = {c.id: c.speaker or "unknown" for c in clips}
    sentence = {c.id: sentence_key(c.reference) for c in clips}
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for it in items:
        if it.get("error") is None and it.get("lift") is not None:
            key = (it["model"], it["condition"], speaker.get(it["clip_id"], "unknown"))
            groups.setdefault(key, []).append(it)
    rows = []
    rng = np.random.default_rng(seed)
    for (model, cond, voice), its in sorted(groups.items()):
        est = clustered_mean(
            [i["lift"] for i in its], [sentence.get(i["clip_id"], i["clip_id"]) for i in its], rng, n_resamples
        )
        rows.append({"model": model, "condition": cond, "voice": voice, **est.to_dict()})
    return rows


@dataclass(frozen=True, slots=True)
class GateOutcome:
    """The intelligibility gate for one (model, clip): its unmasked WER and whether its spans are kept."""

    model: str
    clip_id: str
    clip_wer: float | None  # None when the clip could not be transcribed
    kept: bool
    n_spans: int
    reason: str = ""  # why gated out: wer_above_gate | failed: <why>

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def intelligibility_gate(
    model: Model, corpus: Any, store: Store | None, spans: Sequence[Span], gate_max_wer: float | None
) -> list[GateOutcome]:
    """One :class:`GateOutcome` per clip with spans: the model transcribes the unmasked clip (through the
    store) and the clip is kept when its WER is at most ``gate_max_wer`` (``None``: every clip kept)."""

    counts: dict[str, int] = {}
    for sp in spans:
        counts[sp.clip_id] = counts.get(sp.clip_id, 0) + 1
    if gate_max_wer is None or not np.isfinite(gate_max_wer):
        return [GateOutcome(model.name, cid, None, True, n) for cid, n in counts.items()]
    if TRANSCRIBE not in model.capabilities:
        raise ConfigError(
            f"backend {model.spec!r} cannot transcribe, which the lift probe's intelligibility gate "
            "needs; fix: use a backend that transcribes, or turn the gate off (gate_max_wer = inf)"
        )
    clips = tuple(c for c in corpus if c.id in counts)
    texts, failed = transcripts(model, Corpus(corpus.name, corpus.split, corpus.source, clips), store)
    out = []
    for c in clips:
        if c.id not in texts:
            out.append(
                GateOutcome(model.name, c.id, None, False, counts[c.id], f"failed: {failed.get(c.id, 'no transcript')}")
            )
            continue
        wer = clip_wer(c.reference, texts[c.id])
        kept = wer <= gate_max_wer
        out.append(GateOutcome(model.name, c.id, wer, kept, counts[c.id], "" if kept else "wer_above_gate"))
    return out


def spans_for(
    kind: str, corpus: Any, store: Store | None, **options: Any
) -> tuple[list[Span], dict[str, np.ndarray], list[tuple[str, str]]]:
    """The spans of ``kind``, the audio they need (by id) and clips that failed; ``options`` are
    :func:`_spans`' (``mask_params``, ``aligner``, ``recipes``, ``refdis``, ``families``, and
    ``decoys`` and ``seed``, which choose the decoys of ``masked`` spans: :func:`masked_spans`)."""
    spans, audio, failures, _ = _spans(kind, corpus, store, **options)
    return spans, audio, failures


def _spans(
    kind: str,
    corpus: Any,
    store: Store | None,
    *,
    mask_params: Any = None,
    aligner: Any = None,
    recipes: Sequence[Any] | None = None,
    refdis: Mapping[str, Any] | None = None,
    families: Sequence[str] | None = None,
    decoys: int = 0,
    seed: int = 0,
) -> tuple[list[Span], dict[str, np.ndarray], list[tuple[str, str]], tuple[Any, ...]]:
    """:func:`spans_for`, and the mask recipes of ``masked`` spans (their audio ids are the recipes' item ids)."""

    masks: tuple[Any, ...] = ()

    if kind not in SPAN_KINDS:
        raise ConfigError(f"unknown span set {kind!r}; valid: {', '.join(SPAN_KINDS)}")
    failures: list[tuple[str, str]] = []
    audio: dict[str, np.ndarray] = {}
    if kind == "masked":
        plan = plan_masks(corpus, store, mask_params or MaskParams(), aligner=aligner, recipes=recipes)
        failures += plan.failures
        audio.update(plan.masked)
        masks = plan.recipes
        spans = masked_spans(plan.recipes, {c.id: c.reference for c in corpus}, decoys=decoys, seed=seed)
    elif kind == "refdis":
        if refdis is None:
            raise ConfigError(
                "span set 'refdis' needs a refdis result; fix: pass --refdis PATH "
                "(the JSON of `asr-audit refdis --json`)"
            )
        spans = refdis_spans(refdis, [c.id for c in corpus])
    elif kind == "ortho":
        spans = ortho_spans(corpus, families)
    else:
        spans = full_spans(corpus)
    by_id = {c.id: c for c in corpus}
    kept = []
    for s in spans:
        if s.audio_id not in audio:
            try:
                audio[s.audio_id] = load_clip_audio(by_id[s.audio_id]).samples
            except AuditError as exc:
                failures.append((s.clip_id, str(exc)))
                continue
        kept.append(s)
    return kept, audio, failures, masks


def span_clips(corpus: Any, audio: Mapping[str, np.ndarray], masks: Sequence[Any] = ()) -> dict[str, Clip]:
    """The clip behind each span audio id, holding the samples the spans are scored on and how they were
    made (:func:`~asr_audit.audio.transforms.held_clip`): a clip's own audio, or a masked clip (the
    mask recipe's original and its mask), so a model that runs elsewhere is sent the clip's path or
    the mask's recipe rather than the samples."""
    by_id = {c.id: c for c in corpus}
    recipes = {r.item_id: r for r in masks}
    out = {}
    for aid, x in audio.items():
        r = recipes.get(aid)
        if r is None:
            out[aid] = held_clip(by_id[aid], x)
        else:
            out[aid] = replace(held_clip(by_id[r.clip_id], x, r.provenance.chain().steps, r.provenance.seed), id=aid)
    return out


def run_lift(
    models: Sequence[Model],
    corpus: Any,
    store: Store | None,
    kind: str = "masked",
    *,
    seed: int = 0,
    n_resamples: int = 1000,
    batch_size: int = 8,
    gate_max_wer: float | None = 0.3,
    decoys: int = DEFAULT_DECOYS,
    **span_options: Any,
) -> LiftResult:
    """Audio lift of every model on the ``kind`` spans of ``corpus`` (see the module docstring), wherever
    the models run (each a :class:`~asr_audit.probes.core.models.Model`, labelled by its name); each
    model scores only the spans of the clips its intelligibility gate keeps. ``decoys``: decoys per
    masked item (``masked`` spans only; seeded by ``seed``). The spans, the masks and the audio
    hashes are planned here; the rows name their audio (:func:`span_clips`)."""

    for m in models:
        require_capability(m, SCORE)
        if gate_max_wer is not None and np.isfinite(gate_max_wer) and TRANSCRIBE not in m.capabilities:
            intelligibility_gate(m, corpus, store, [], gate_max_wer)  # raises the one-line error
    spans, audio, failures, masks = _spans(kind, corpus, store, decoys=decoys, seed=seed, **span_options)
    clips = span_clips(corpus, audio, masks)
    sentences = {c.id: sentence_key(c.reference) for c in corpus}
    results, records, gates = [], [], []
    for m in models:
        gate = intelligibility_gate(m, corpus, store, spans, gate_max_wer)
        gates += gate
        kept_clips = {g.clip_id for g in gate if g.kept}
        kept = [s for s in spans if s.clip_id in kept_clips]
        scorer = Scorer(m, store, batch_size)
        mine = score_spans(scorer, kept, audio, clips)
        records += mine
        summary = summarize_model(mine, np.random.default_rng(seed), n_resamples, sentences=sentences)
        main = summary["conditions"].get("masked" if kind == "masked" else next(iter(summary["conditions"]), ""), {})
        lift = main.get("lift", {})
        results.append(
            {
                "model": m.name,
                "backend_key": scorer.key,
                "lift_mean": lift.get("mean"),
                "ci_low": lift.get("ci_low"),
                "ci_high": lift.get("ci_high"),
                "n": lift.get("n", 0),
                **summary,
                "n_kept": len(kept),
                "n_gated_out": len(spans) - len(kept),
                "n_clips_kept": len(kept_clips),
                "n_clips_gated_out": len(gate) - len(kept_clips),
                "scored_rows": scorer.passes + scorer.cached,  # computed now or read back: the same every run
                "rows_per_item": (scorer.passes + scorer.cached) / len(kept) if kept else None,
            }
        )
    return LiftResult(kind, tuple(results), tuple(records), tuple(failures), seed, gate_max_wer, tuple(gates))


#: ``asr-audit lift``'s flag of every option it takes (the gate accepts any value: inf keeps all)
FLAGS = flag_table(
    CliFlag("spans", str, "masked", "Which spans: masked | refdis | ortho | full."),
    CliFlag("refdis", Path, None, "For --spans refdis: the JSON of `asr-audit refdis --json`."),
    RECIPES_IN,
    METHOD,
    ALIGNER,
    replace(GATE_MAX_WER, minimum=None),
    CliFlag(
        "decoys",
        int,
        DEFAULT_DECOYS,
        "For --spans masked: decoy numbers scored per item (other sentences' hidden numbers of the same form), "
        "for the masked-decoys contrast; 0 scores none.",
    ),
)
#: ``asr-audit lift --help``'s worked example: (command line, what it does)
EXAMPLES = (
    (
        "asr-audit lift -m whisper-tiny.en-pt -c dev.jsonl --spans masked",
        "audio lift of the hidden numbers, nats per character",
    ),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class LiftOptions:
    """The lift probe's options, from ``asr-audit lift`` flags or ``[probes.lift]``.

    ``method``, ``aligner`` and ``recipes_in`` (exported mask recipes, applied instead of aligning)
    apply to ``spans = "masked"``; ``refdis`` (the JSON of ``asr-audit refdis --json``) is what
    ``spans = "refdis"`` reads; both paths are relative to the spec's folder in a spec. ``models``:
    the models that score (default: every model of the run); ``items``: keep the per-span records.
    ``gate_max_wer`` is the intelligibility gate: a sentence is kept for a model when the model's
    transcript of the unmasked clip has a WER at most this (``inf`` keeps all). ``resamples``:
    random sign patterns of the sentence sign-flip intervals (:func:`clustered_mean`).
    """

    spans: str = "masked"
    method: str = "silence"
    aligner: str = "sphinx"
    resamples: int = 1000
    gate_max_wer: float = 0.3
    decoys: int = DEFAULT_DECOYS
    models: tuple[str, ...] | None = None
    items: bool = True
    refdis: str | None = None
    recipes_in: str | None = None

    def __post_init__(self) -> None:
        check(
            self.spans in SPAN_KINDS,
            "spans",
            self.spans,
            f"is unknown (valid: {', '.join(SPAN_KINDS)})",
            f"use one of {', '.join(SPAN_KINDS)}",
        )
        self.mask_params(0)  # MaskParams checks the method
        check(
            self.aligner.strip().lower() in available_aligners(),
            "aligner",
            self.aligner,
            f"is unknown (valid: {', '.join(available_aligners())})",
            f"use one of {', '.join(available_aligners())}",
        )
        check(self.resamples >= 1, "resamples", self.resamples, "must be >= 1", "use 1 or more sign patterns")
        check(
            self.gate_max_wer >= 0,
            "gate_max_wer",
            self.gate_max_wer,
            "must be >= 0",
            "e.g. 0.3 (inf keeps every sentence)",
        )
        check(
            self.decoys >= 0,
            "decoys",
            self.decoys,
            "must be >= 0",
            f"use 0 (no decoy contrast) or more; the default is {DEFAULT_DECOYS}",
        )
        check(
            self.spans != "refdis" or self.refdis is not None,
            "spans",
            self.spans,
            "needs a refdis result file",
            "name the JSON of `asr-audit refdis --json` with refdis (--refdis PATH), or use spans masked, ortho or full",
        )

    def mask_params(self, seed: int) -> Any:
        """The masking parameters of ``spans = "masked"``, with ``seed`` for the noise fill."""

        return MaskParams(method=self.method, seed=seed)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], surface: Surface) -> LiftOptions:
        """Options from flag or spec values (``None`` = not given)."""
        r = Reader(values, surface, LIFT_FIELDS, "lift")
        return build(
            cls,
            surface,
            spans=r.text("spans", "masked"),
            method=r.text("method", "silence"),
            aligner=r.text("aligner", "sphinx"),
            resamples=r.integer("resamples", 1000),
            gate_max_wer=r.number("gate_max_wer", 0.3),
            decoys=r.integer("decoys", DEFAULT_DECOYS),
            models=r.names("models", None),
            items=r.flag("items", True),
            refdis=r.text("refdis", None),
            recipes_in=r.text("recipes_in", None),
        )


LIFT_FIELDS = (
    "spans",
    "method",
    "aligner",
    "models",
    "resamples",
    "gate_max_wer",
    "decoys",
    "items",
    "refdis",
    "recipes_in",
)
