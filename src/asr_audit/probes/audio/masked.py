"""Masked-entity recovery: hide a number's audio, keep it in the reference, count who still writes it.

Per clip (see :mod:`asr_audit.probes.audio.targets` for which spans qualify):

1. forced-align the reference (``sphinx`` by default, cached in the store);
2. for every target, a *recipe*: the target's aligned span widened by ``pad`` seconds on each
   side but never into the neighbouring words (:func:`asr_audit.audio.spans.guard_span`), and a
   :class:`~asr_audit.audio.spans.Mask` over it — ``silence`` (``samples[t0:t1] = 0``, length
   kept), ``noise`` (white noise at the clip's RMS, seeded per item) or ``cut`` (span removed).
   The recipe holds the final span, the hidden reference and the transform's
   :class:`~asr_audit.audio.transforms.Provenance` (source and output audio hashes, seed), so
   exported recipes re-apply to the source audio byte for byte (:meth:`MaskRecipe.apply`
   checks both hashes);
3. every model transcribes the unmasked clips and the masked clips through the store (each
   (model, audio) pair is decoded once, keyed by the audio hash);
4. scoring, after Whisper normalization and number canonicalization
   (:mod:`asr_audit.text.numbers`): the hypothesis is aligned to the reference, the *window* is
   the hypothesis between the last matched reference word before the target and the first
   matched one after it, and the target is *present* when one of its canonical forms occurs in
   that window. **Intelligibility gate**: an item is eligible only when the model's unmasked
   hypothesis has the target present and its clip WER is at most ``gate_max_wer``. An eligible
   item is *recovered* when the target is present in the masked clip's hypothesis.

accept-ref = recovered / eligible, with a Wilson 95% interval; items gated out are counted.

**Degraded audio** (the battery's noise and reverb conditions): forced alignment fails or drifts on
noisy audio, so :func:`plan_masks` can take ``timing``, the same clips (same ids) as clean audio
that a condition did not move in time: the words are aligned there, and the masks are applied to
the degraded clips at the same times. A clip whose degraded audio has another length than its
clean audio is refused (the condition moved time: align the degraded audio itself).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from asr_audit.align import available_aligners, get_aligner
from asr_audit.align.run import align_corpus
from asr_audit.audio.io import load_clip_audio
from asr_audit.audio.spans import Mask
from asr_audit.audio.transforms import Chain, Provenance, clip_seed, derive, held_clip
from asr_audit.corpus.clips import Corpus
from asr_audit.errors import AuditError, ConfigError, InputFileError
from asr_audit.options import CliFlag, Reader, Surface, build, check, flag_table
from asr_audit.probes.audio.targets import Rejection, Target, TargetRule, select_targets
from asr_audit.probes.core.models import Model, Transcribed
from asr_audit.probes.core.probe import ModelPool
from asr_audit.stats.intervals import wilson
from asr_audit.store.base import Store
from asr_audit.text.align import align, wer_counts
from asr_audit.text.numbers import canonical_tokens, find_number, number_forms

SAMPLE_RATE = 16_000
Seconds = float
METHODS = ("silence", "noise", "cut")


@dataclass(frozen=True, slots=True, kw_only=True)
class MaskParams:
    """How targets are chosen, masked and judged."""

    rule: TargetRule = field(default_factory=TargetRule)
    method: str = "silence"
    pad: Seconds = 0.05
    gate_max_wer: float = 0.3
    seed: int = 0

    def __post_init__(self) -> None:
        check(
            self.method in METHODS,
            "method",
            self.method,
            f"is unknown (valid: {', '.join(METHODS)})",
            f"use one of {', '.join(METHODS)}",
        )
        check(self.pad >= 0, "pad", self.pad, "must be >= 0 seconds", "use 0 or more")
        check(0 <= self.gate_max_wer, "gate_max_wer", self.gate_max_wer, "must be >= 0", "e.g. 0.3")

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.rule.to_dict(),
            "method": self.method,
            "pad": self.pad,
            "gate_max_wer": self.gate_max_wer,
            "seed": self.seed,
        }


# --------------------------------------------------------------------------- recipes


@dataclass(frozen=True, slots=True)
class MaskRecipe:
    """One masked item: which clip, which reference tokens, the final span and how it was masked."""

    clip_id: str
    kind: str
    start: int
    end: int
    hidden_ref: str
    method: str
    t0: Seconds
    t1: Seconds
    provenance: Provenance

    @property
    def item_id(self) -> str:
        """The masked clip's derived id (``<clip>__mask-<method>-<t0>-<t1>s``)."""
        return self.provenance.derived_id

    def apply(self, samples: np.ndarray, sr: int = SAMPLE_RATE) -> np.ndarray:
        """Re-apply to the source audio; raises if the source or the output hash differs."""
        return self.provenance.replay(samples, sr)

    def to_dict(self) -> dict[str, Any]:
        return {
            "clip_id": self.clip_id,
            "kind": self.kind,
            "start": self.start,
            "end": self.end,
            "hidden_ref": self.hidden_ref,
            "method": self.method,
            "t0": self.t0,
            "t1": self.t1,
            "item_id": self.item_id,
            "provenance": self.provenance.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: object = "<dict>", line: int | None = None) -> MaskRecipe:
        try:
            recipe = cls(
                str(data["clip_id"]),
                str(data.get("kind", "number")),
                int(data["start"]),
                int(data["end"]),
                str(data["hidden_ref"]),
                str(data["method"]),
                float(data["t0"]),
                float(data["t1"]),
                Provenance.from_dict(data["provenance"]),
            )
        except (KeyError, TypeError, ValueError, ConfigError) as exc:
            raise InputFileError(
                source,
                f"not a mask recipe ({type(exc).__name__}: {exc})",
                "pass a file written by `asr-audit masked --recipes-out`",
                line,
            ) from None
        if recipe.method not in METHODS or recipe.provenance.source_id != recipe.clip_id:
            raise InputFileError(
                source,
                f"recipe for {recipe.clip_id!r} has method {recipe.method!r} or a provenance of another clip",
                "re-export the recipes",
                line,
            )
        return recipe


def make_recipe(
    clip_id: str,
    samples: np.ndarray,
    target: Target,
    method: str = "silence",
    pad: Seconds = 0.05,
    seed: int = 0,
    sr: int = SAMPLE_RATE,
) -> tuple[MaskRecipe, np.ndarray]:
    """The recipe masking ``target`` in ``samples``, and the masked samples."""
    guarded = Mask(target.t0, target.t1, method, pad, target.prev_end, target.next_start)
    lo, hi = guarded.span
    final = Mask(lo, hi, method)  # the recipe stores the span itself: re-applying needs no timings
    item_seed = clip_seed(seed, f"{clip_id}:{target.start}:{target.end}") if method == "noise" else None
    out = derive(clip_id, samples, sr, Chain((final,)), seed=item_seed)
    recipe = MaskRecipe(clip_id, target.kind, target.start, target.end, target.text, method, lo, hi, out.provenance)
    return recipe, out.samples


def write_recipes(path: str | Path, recipes: Sequence[MaskRecipe]) -> Path:
    """Write recipes as JSONL (one per line, sorted keys)."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        "".join(json.dumps(r.to_dict(), sort_keys=True, ensure_ascii=False) + "\n" for r in recipes), encoding="utf-8"
    )
    return out


def read_recipes(path: str | Path) -> list[MaskRecipe]:
    """Read recipes written by :func:`write_recipes`; a bad line names the file and line."""
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputFileError(p, f"cannot read ({exc.strerror})", "check the --recipes-in path") from None
    recipes = []
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputFileError(p, f"invalid JSON ({exc.msg})", "re-export the recipes", no) from None
        if not isinstance(data, dict):
            raise InputFileError(p, "line is not a JSON object", "re-export the recipes", no)
        recipes.append(MaskRecipe.from_dict(data, p, no))
    return recipes


# --------------------------------------------------------------------------- scoring


def target_window(reference: str, start: int, end: int, hypothesis: str) -> tuple[str, ...]:
    """Canonical hypothesis tokens between the matched context words around reference tokens ``[start, end)``.

    >>> target_window("we paid 45 dollars for the chair", 2, 4, "We paid $45 for a chair.")
    ('$45',)
    >>> target_window("we paid 45 dollars for the chair", 2, 4, "we paid for the chair")
    ()
    """
    toks = reference.split()
    left = canonical_tokens(" ".join(toks[:start]))
    mid = canonical_tokens(" ".join(toks[start:end]))
    ref = (*left, *mid, *canonical_tokens(" ".join(toks[end:])))
    hyp = tuple(canonical_tokens(hypothesis))
    a, b = len(left), len(left) + len(mid)
    lo, hi = 0, len(hyp)
    for tag, i1, i2, j1, _ in align(ref, hyp).opcodes:
        if tag != "equal":
            continue
        if i1 < a:
            lo = max(lo, j1 + min(i2, a) - i1)
        if i2 > b:
            hi = min(hi, j1 + max(i1, b) - i1)
    return hyp[lo : max(lo, hi)]


def target_present(reference: str, start: int, end: int, hypothesis: str) -> bool:
    """Whether the hypothesis renders reference tokens ``[start, end)`` at their aligned position."""
    forms = number_forms(" ".join(reference.split()[start:end]))
    return find_number(target_window(reference, start, end, hypothesis), forms)


def clip_wer(reference: str, hypothesis: str) -> float:
    """WER of one clip after canonicalization (1.0 for an empty reference with output)."""
    ref, hyp = canonical_tokens(reference), canonical_tokens(hypothesis)
    counts = wer_counts(ref, hyp)
    return counts.errors / counts.ref_len if counts.ref_len else float(bool(hyp))


@dataclass(frozen=True, slots=True)
class MaskedItem:
    """One model's outcome on one masked item."""

    model: str
    clip_id: str
    item_id: str
    hidden_ref: str
    method: str
    t0: Seconds
    t1: Seconds
    unmasked_hyp: str | None
    masked_hyp: str | None
    clip_wer: float | None
    unmasked_ok: bool
    eligible: bool
    recovered: bool
    reason: str = ""  # why not eligible: target_missed | wer_above_gate | failed: <why>

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True, slots=True)
class ModelRecovery:
    """accept-ref of one model: recovered / eligible with a Wilson 95% interval."""

    model: str
    backend_key: str
    k: int
    n: int
    accept_ref: float | None  # None when no item is eligible (n = 0)
    ci_low: float | None
    ci_high: float | None
    n_items: int
    n_gated_out: int
    n_failed: int

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def judge(
    model: str,
    recipe: MaskRecipe,
    reference: str,
    unmasked: str | None,
    masked: str | None,
    gate_max_wer: float,
    failure: str | None = None,
) -> MaskedItem:
    """Gate and score one item from the two hypotheses."""
    base = (model, recipe.clip_id, recipe.item_id, recipe.hidden_ref, recipe.method, recipe.t0, recipe.t1)
    if failure is not None or unmasked is None or masked is None:
        return MaskedItem(*base, unmasked, masked, None, False, False, False, f"failed: {failure or 'no transcript'}")
    wer = clip_wer(reference, unmasked)
    ok = target_present(reference, recipe.start, recipe.end, unmasked)
    eligible = ok and wer <= gate_max_wer
    reason = "" if eligible else ("target_missed" if not ok else "wer_above_gate")
    recovered = eligible and target_present(reference, recipe.start, recipe.end, masked)
    return MaskedItem(*base, unmasked, masked, wer, ok, eligible, recovered, reason)


def summarize(model: str, backend_key: str, items: Sequence[MaskedItem]) -> ModelRecovery:
    eligible = [i for i in items if i.eligible]
    k = sum(i.recovered for i in eligible)
    rate = wilson(k, len(eligible))
    failed = sum(i.reason.startswith("failed") for i in items)
    return ModelRecovery(
        model, backend_key, k, len(eligible), *rate.estimate(), len(items), len(items) - len(eligible) - failed, failed
    )


# --------------------------------------------------------------------------- running


@dataclass(frozen=True, slots=True)
class MaskedResult:
    """Everything a masked run produced (``to_dict`` is the CLI's JSON)."""

    params: MaskParams
    models: tuple[ModelRecovery, ...]
    items: tuple[MaskedItem, ...]
    recipes: tuple[MaskRecipe, ...]
    rejections: tuple[Rejection, ...] = ()
    failures: tuple[tuple[str, str], ...] = ()  # (clip id, reason) for clips that gave no items

    def to_dict(self) -> dict[str, Any]:
        reasons: dict[str, int] = {}
        for r in self.rejections:
            reasons[r.reason] = reasons.get(r.reason, 0) + 1
        return {
            "probe": "masked",
            "params": self.params.to_dict(),
            "models": [m.to_dict() for m in self.models],
            "n_recipes": len(self.recipes),
            "rejected_candidates": dict(sorted(reasons.items())),
            "items": [i.to_dict() for i in self.items],
            "failures": [{"clip_id": c, "reason": r} for c, r in self.failures],
        }


@dataclass(frozen=True, slots=True)
class MaskPlan:
    """Recipes with their masked audio, ready to transcribe."""

    recipes: tuple[MaskRecipe, ...]
    masked: Mapping[str, np.ndarray]  # item id -> samples
    rejections: tuple[Rejection, ...]
    failures: tuple[tuple[str, str], ...]


def plan_masks(
    corpus: Corpus,
    store: Store | None,
    params: MaskParams,
    *,
    aligner: Any = None,
    recipes: Sequence[MaskRecipe] | None = None,
    timing: Corpus | None = None,
) -> MaskPlan:
    """Align and choose targets (or take exported ``recipes``), and make the masked audio.

    ``timing`` (clips with the ids of ``corpus``, e.g. the clean audio of degraded clips) is what the
    aligner reads; the masks are applied to ``corpus``' audio at those times (see the module docstring).
    """

    by_id = {c.id: c for c in corpus}
    failures: list[tuple[str, str]] = []
    masked: dict[str, np.ndarray] = {}
    out: list[MaskRecipe] = []
    rejections: list[Rejection] = []
    audio: dict[str, np.ndarray] = {}

    def samples_of(clip_id: str) -> np.ndarray | None:
        if clip_id not in audio:
            try:
                audio[clip_id] = load_clip_audio(by_id[clip_id]).samples
            except AuditError as exc:
                failures.append((clip_id, str(exc)))
                return None
        return audio[clip_id]

    if recipes is not None:
        for r in recipes:
            if r.clip_id not in by_id:
                failures.append((r.clip_id, f"recipe {r.item_id!r}: clip not in the corpus"))
                continue
            x = samples_of(r.clip_id)
            if x is None:
                continue
            try:
                masked[r.item_id] = r.apply(x)
            except AuditError as exc:
                failures.append((r.clip_id, str(exc)))
                continue
            out.append(r)
        return MaskPlan(tuple(out), masked, (), tuple(failures))

    timed = list(corpus) if timing is None else [c for c in timing if c.id in by_id]
    for result in align_corpus(aligner or get_aligner("sphinx"), timed, store):
        if not result.ok:
            failures.append((result.clip_id, f"alignment failed: {result.error}"))
            continue
        targets, rejected = select_targets(result.clip_id, by_id[result.clip_id].reference, result.words, params.rule)
        rejections += rejected
        x = samples_of(result.clip_id) if targets else None
        if x is not None and timing is not None:
            clean = next(c for c in timed if c.id == result.clip_id)
            try:
                n_clean = len(load_clip_audio(clean).samples)
            except AuditError as exc:
                failures.append((result.clip_id, str(exc)))
                continue
            if n_clean != len(x):
                failures.append(
                    (
                        result.clip_id,
                        f"the audio has {len(x)} samples, its timing audio {n_clean}: "
                        "the condition moved time; fix: align the condition's own audio",
                    )
                )
                continue
        if x is None:
            continue
        for t in targets:
            try:
                recipe, y = make_recipe(t.clip_id, x, t, params.method, params.pad, params.seed)
            except AuditError as exc:
                failures.append((t.clip_id, f"mask {t.text!r}: {exc}"))
                continue
            out.append(recipe)
            masked[recipe.item_id] = y
    return MaskPlan(tuple(out), masked, tuple(rejections), tuple(failures))


def masked_corpus(corpus: Corpus, plan: MaskPlan) -> Corpus:
    """The masked clips as a corpus (ids = item ids), each holding its masked samples and how they were
    made (:class:`~asr_audit.audio.transforms.DerivedSource`: the original clip, the mask, the seed),
    so a pool whose models run elsewhere sends the recipe rather than the samples."""
    by_id = {c.id: c for c in corpus}
    clips = []
    for r in plan.recipes:
        src, x = by_id[r.clip_id], plan.masked[r.item_id]
        held = held_clip(src, x, r.provenance.chain().steps, r.provenance.seed, f"{src.audio_label} [{r.item_id}]")
        clips.append(
            replace(held, id=r.item_id, provenance=(*src.provenance, *(t["name"] for t in r.provenance.transforms)))
        )
    return Corpus(corpus.name + "-masked", corpus.split, corpus.source, tuple(clips))


def transcripts(model: Model, corpus: Corpus, store: Store | None) -> tuple[dict[str, str], dict[str, str]]:
    """``({clip id: hypothesis}, {clip id: failure reason})`` of ``model`` (wherever it runs), through the store."""

    if not len(corpus):
        return {}, {}
    return _texts(model.transcribe(corpus, store))


def _texts(got: Transcribed) -> tuple[dict[str, str], dict[str, str]]:
    """A transcription's texts and failures by clip id (a recipe built nowhere is a failure)."""
    o = got.outcome
    return {r.clip_id: r.hypothesis for r in o.records}, {**{f.clip_id: f.reason for f in o.failures}, **got.unbuilt}


@dataclass(frozen=True, slots=True)
class Heard:
    """One model's transcripts for :func:`run_masked`: of the unmasked clips (by clip id) and of the
    masked ones (by item id), with the failures of each; ``model`` is the label the result carries
    (the pool's name for the model)."""

    model: str
    backend_key: str
    clean: Mapping[str, str]
    clean_fail: Mapping[str, str]
    hidden: Mapping[str, str]
    hidden_fail: Mapping[str, str]


# (unmasked clips, the corpus, the plan) -> one Heard per model: how the masked clips are heard
# (:func:`pool_hearing` by default; the battery's degraded clips: ``probes/battery/recipe.py::recipe_hearing``)
Hear = Callable[[Corpus, Corpus, MaskPlan], Sequence[Heard]]


def pool_hearing(
    pool: ModelPool, names: Sequence[str], store: Store | None, progress: Callable[[str], None] | None = None
) -> Hear:
    """The masked probe's transcription by ``pool``'s models ``names``: every model's unmasked clips in
    one call, then its masked clips in another (the models side by side where the pool runs them
    elsewhere, the masked clips travelling as recipes), through the store."""

    def hear(plain: Corpus, corpus: Corpus, plan: MaskPlan) -> list[Heard]:
        masked = masked_corpus(corpus, plan)
        for n in names:
            if progress:
                progress(f"{n}: {len(plain)} unmasked + {len(masked)} masked clip(s)")
        clean = pool.transcribe(dict.fromkeys(names, plain), store) if len(plain) else {}
        hidden = pool.transcribe(dict.fromkeys(names, masked), store) if len(masked) else {}
        out = []
        for n in names:
            keys = [got.outcome.backend_key for got in (clean.get(n), hidden.get(n)) if got is not None]
            key = keys[0] if keys else pool.model(n, store).identity().key
            out.append(Heard(n, key, *_heard(clean.get(n)), *_heard(hidden.get(n))))
        return out

    return hear


def _heard(got: Transcribed | None) -> tuple[dict[str, str], dict[str, str]]:
    return ({}, {}) if got is None else _texts(got)


def run_masked(
    pool: ModelPool,
    corpus: Corpus,
    store: Store | None,
    params: MaskParams = MaskParams(),
    *,
    names: Sequence[str] | None = None,
    aligner: Any = None,
    recipes: Sequence[MaskRecipe] | None = None,
    progress: Callable[[str], None] | None = None,
    timing: Corpus | None = None,
    hear: Hear | None = None,
) -> MaskedResult:
    """Masked-entity recovery of ``pool``'s models ``names`` (default: all) on ``corpus`` (see the
    module docstring), labelled with their names; ``timing``: align these clips (the clean audio of
    the same clip ids) instead, see :func:`plan_masks`.

    ``hear`` replaces the pool's transcription (:func:`pool_hearing`): the battery's, which sends
    its degraded clips as recipes. The masks are planned here (alignment, and the masked audio
    whose hash each recipe records)."""
    plan = plan_masks(corpus, store, params, aligner=aligner, recipes=recipes, timing=timing)
    refs = {c.id: c.reference for c in corpus}
    needed = {r.clip_id for r in plan.recipes}
    plain = Corpus(corpus.name, corpus.split, corpus.source, tuple(c for c in corpus if c.id in needed))
    hearing = hear or pool_hearing(pool, tuple(pool.names if names is None else names), store, progress)
    models, items = [], []
    for h in hearing(plain, corpus, plan):
        mine = [
            judge(
                h.model,
                r,
                refs[r.clip_id],
                h.clean.get(r.clip_id),
                h.hidden.get(r.item_id),
                params.gate_max_wer,
                h.clean_fail.get(r.clip_id) or h.hidden_fail.get(r.item_id),
            )
            for r in plan.recipes
        ]
        items += mine
        models.append(summarize(h.model, h.backend_key, mine))
    return MaskedResult(params, tuple(models), tuple(items), plan.recipes, plan.rejections, plan.failures)


#: the flags the audio probes share (``masked``, ``lift``, ``continue``)
METHOD = CliFlag(
    "method", str, "silence", "How the target's audio is hidden: silence | noise | cut (lift: for --spans masked)."
)
ALIGNER = CliFlag("aligner", str, "sphinx", "Forced aligner: sphinx | whisper.")
GATE_MAX_WER = CliFlag(
    "gate_max_wer",
    float,
    0.3,
    "Intelligibility gate: keep a clip for a model only when its unmasked WER is at most this (inf keeps all).",
    minimum=0.0,
)
RECIPES_IN = CliFlag("recipes_in", Path, None, "Re-apply exported masking recipes instead of aligning.")
#: ``asr-audit masked``'s flag of every option it takes
FLAGS = flag_table(
    CliFlag("kind", str, "number", "What to hide: number | name | word."),
    METHOD,
    CliFlag("pad", float, 0.05, "Seconds added on each side (never into the next word).", minimum=0.0),
    GATE_MAX_WER,
    CliFlag("min_duration", float, 0.15, "Shortest aligned target, seconds.", minimum=0.0),
    ALIGNER,
    RECIPES_IN,
)
RECIPES_OUT = CliFlag("recipes_out", Path, None, "Write the masking recipes (JSONL).", output=True)
#: ``asr-audit masked --help``'s worked example: (command line, what it does)
EXAMPLES = (
    ("asr-audit masked -m whisper-tiny.en -c dev.jsonl --kind number", "silence each number; who still writes it?"),
)


def one_recipe_file(values: Mapping[str, Any]) -> None:
    """``--recipes-in`` (an option) and ``--recipes-out`` (the verb's output) exclude each other."""
    if values["recipes_in"] is not None and values["recipes_out"] is not None:
        raise ConfigError("--recipes-in and --recipes-out exclude each other; fix: pass one of them")


@dataclass(frozen=True, slots=True, kw_only=True)
class MaskedOptions:
    """The masked probe's options, from ``asr-audit masked`` flags or ``[probes.masked]``.

    ``models``: the models that run (default: every model of the run; the CLI's ``--model``);
    ``items``: keep the per-item records; ``recipes_in``: exported mask recipes to apply instead of
    aligning (a path, relative to the spec's folder in a spec).
    """

    kind: str = "number"
    method: str = "silence"
    pad: Seconds = 0.05
    gate_max_wer: float = 0.3
    min_duration: Seconds = 0.15
    max_per_clip: int | None = None
    aligner: str = "sphinx"
    models: tuple[str, ...] | None = None
    items: bool = True
    recipes_in: str | None = None

    def __post_init__(self) -> None:
        self.mask_params(0)  # TargetRule and MaskParams check their fields
        check(
            self.aligner.strip().lower() in available_aligners(),
            "aligner",
            self.aligner,
            f"is unknown (valid: {', '.join(available_aligners())})",
            f"use one of {', '.join(available_aligners())}",
        )

    def mask_params(self, seed: int) -> MaskParams:
        """The masking parameters, with ``seed`` for the noise fill."""
        rule = TargetRule(kind=self.kind, min_duration=self.min_duration, max_per_clip=self.max_per_clip)
        return MaskParams(rule=rule, method=self.method, pad=self.pad, gate_max_wer=self.gate_max_wer, seed=seed)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], surface: Surface) -> MaskedOptions:
        """Options from flag or spec values (``None`` = not given)."""
        r = Reader(values, surface, MASKED_FIELDS, "masked")
        return build(
            cls,
            surface,
            kind=r.text("kind", "number"),
            method=r.text("method", "silence"),
            pad=r.number("pad", 0.05),
            gate_max_wer=r.number("gate_max_wer", 0.3),
            min_duration=r.number("min_duration", 0.15),
            max_per_clip=r.integer("max_per_clip", None),
            aligner=r.text("aligner", "sphinx"),
            models=r.names("models", None),
            items=r.flag("items", True),
            recipes_in=r.text("recipes_in", None),
        )


MASKED_FIELDS = (
    "kind",
    "method",
    "pad",
    "gate_max_wer",
    "min_duration",
    "max_per_clip",
    "aligner",
    "models",
    "items",
    "recipes_in",
)
