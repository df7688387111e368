"""The trigger battery: one accept-ref measure under a grid of audio conditions.

For every condition (:mod:`asr_audit.probes.battery.conditions`) each clip is realized (re-voiced, noised,
reverberated, truncated, spliced), transcribed by every model through the store (derived audio is
cached by its hash), and judged. An *item* is one judged unit with a 0/1 value, 1 = the output
follows the reference:

* ``refdis`` — one item per reference error. The errors are the differences between the
  reference and a corrected reference: the spoken text when known (a TTS corpus), else the
  reference corrected by the consensus of the **panel** on the original audio — never by the
  tested model itself: a tested model that is a panel member is judged against the consensus of
  the panel without it (leave-one-out), so its own original-audio output cannot select its items
  (see :func:`panel_views`). Without the spoken text and without a panel the measure refuses to
  run. A model's verdict on each is read as in refdis' two-reference mode. Under ``truncate``
  each error gets its own clip, cut to the error +-k aligned words +-pad seconds, and judged by
  distance (the *window rule*): 1 when the hypothesis is closer (word edits) to the reference
  window (+-1 word around the error) than to the corrected window, 0 when closer to the corrected
  one, left out on a tie. (Two-reference verdicts are too strict at a cut edge: a half-cut
  neighbour word turns an opener insertion into a substitution.) The paired baseline of a
  truncation is the original audio judged by the same window rule, on the words of the
  original-audio hypothesis aligned to the corrected window (:func:`hyp_window`): both arms of a
  difference use one rule.
* ``courtesy`` — one item per clip that opens with a courtesy the reference omits
  (:mod:`asr_audit.probes.battery.courtesy`), found in the spoken text or by the panel (with the
  same leave-one-out); 1 = the courtesy is absent from the output.
* ``ortho`` — one item per convention item of the orthographic switch-rate probe; 1 = the model
  writes the reference's spelling (items where it writes neither are left out).

**Donor splices.** The score of the original span is read from the part of the hypothesis aligned
to the original clip: the hypothesis (normalized) is aligned to the original's reference followed
(or preceded) by the donor's own transcript (the same model on the donor audio alone, exactly as
spliced); hypothesis words aligned to the original's reference words are kept, a ``replace`` block
is split proportionally, and words inserted at the seam between clip and donor go to the
original (an opener or closer is an edit of the original).

Outputs (:class:`BatteryResult`): accept-ref per model per condition with Wilson intervals; the
paired difference against the original audio (items judged in both) with a sentence-clustered
bootstrap interval; and, for every voice ``V`` with ``donor:benchS``, ``donor:convS``,
``voice:V+donor:benchS`` and ``voice:V+donor:convS`` in the grid, the difference-in-differences
``(bench - conv on the benchmark audio) - (bench - conv on V's audio)``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from asr_audit.corpus.clips import Corpus
from asr_audit.corpus.predfiles import PredictionSet
from asr_audit.corpus.records import PredictionFile, PredictionRow
from asr_audit.errors import AuditError, ConfigError
from asr_audit.options import OptionError, Reader, Surface, build, check
from asr_audit.probes.audio.masked import MaskParams, run_masked
from asr_audit.probes.battery.conditions import (
    Condition,
    ConditionContext,
    Realized,
    parse_condition,
    parse_conditions,
    realize,
)
from asr_audit.probes.battery.courtesy import Measured, courtesy_present, courtesy_study, eligible_clips
from asr_audit.probes.battery.recipe import built, is_recipe, recipe_hearing
from asr_audit.probes.core.probe import ModelPool
from asr_audit.probes.predfiles.inflation import apply_edits
from asr_audit.probes.predfiles.ortho import SwitchRateOptions, switch_rate
from asr_audit.probes.predfiles.refdis import (
    CONSENSUS,
    PRESETS,
    REF,
    ClipInput,
    RefdisParams,
    mine,
    mine_two_references,
    preset_params,
)
from asr_audit.registry import Registry
from asr_audit.stats.did import difference_in_differences, paired_difference
from asr_audit.stats.intervals import wilson
from asr_audit.stats.rng import model_rng
from asr_audit.store.base import Store
from asr_audit.text.align import AlignmentCache, opcodes
from asr_audit.text.normalize import get_normalizer, normalize_many
from asr_audit.text.text2num import with_text2num

Tokens = tuple[str, ...]


def original_part(hyp: Tokens, original: Tokens, donor: Tokens, position: str = "append") -> Tokens:
    """The words of ``hyp`` aligned to ``original`` when the audio was original + donor (or donor +
    original for ``prepend``); see the module docstring for the rule.

    >>> original_part(("thank", "you", "we", "agree", "so", "yeah"), ("we", "agree"), ("so", "yeah"))
    ('thank', 'you', 'we', 'agree')
    >>> original_part(("so", "yeah", "we", "agree"), ("we", "agree"), ("so", "yeah"), "prepend")
    ('we', 'agree')
    """
    if position not in ("append", "prepend"):
        raise ConfigError(f"unknown splice position {position!r}; valid: append, prepend")
    target = original + donor if position == "append" else donor + original
    lo, hi = (0, len(original)) if position == "append" else (len(donor), len(target))
    keep: list[str] = []
    for tag, i1, i2, j1, j2 in opcodes(target, hyp):
        if tag == "delete":
            continue
        if tag == "insert":
            if lo <= i1 <= hi:  # inside the original or at its seam with the donor
                keep.extend(hyp[j1:j2])
            continue
        for j in range(j1, j2):
            i = i1 + (j - j1) * (i2 - i1) // (j2 - j1)
            if lo <= i < hi:
                keep.append(hyp[j])
    return tuple(keep)


@dataclass(frozen=True, slots=True)
class Unit:
    """What one realized clip is judged on: a whole clip, or one span of it (truncation)."""

    key: str
    clip_id: str
    span: tuple[int, int] | None = None  # raw spoken-word indices kept by a truncation


@dataclass(frozen=True, slots=True, kw_only=True)
class Cell:
    model: str
    condition: str
    k: int
    n: int
    accept_ref: float | None
    ci_low: float | None
    ci_high: float | None
    n_failed: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "condition": self.condition,
            "accept_ref": self.accept_ref,
            "k": self.k,
            "n": self.n,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "n_failed": self.n_failed,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class BatteryResult:
    probe: str
    corpus: str
    conditions: tuple[str, ...]
    models: tuple[str, ...]
    cells: tuple[Cell, ...]
    differences: tuple[dict[str, Any], ...]
    did: tuple[dict[str, Any], ...]
    seed: int
    n_items: Mapping[str, int]
    failures: tuple[dict[str, str], ...] = ()
    study: tuple[dict[str, Any], ...] = ()  # courtesy case study rows
    notes: tuple[str, ...] = ()
    items: Mapping[str, Any] = field(default_factory=dict)  # condition -> model -> item -> value

    def cell(self, model: str, condition: str) -> Cell:
        return next(c for c in self.cells if c.model == model and c.condition == condition)

    def to_dict(self) -> dict[str, Any]:
        return {
            "probe": "battery",
            "measure": self.probe,
            "corpus": self.corpus,
            "seed": self.seed,
            "conditions": list(self.conditions),
            "models": list(self.models),
            "cells": [c.to_dict() for c in self.cells],
            "differences": list(self.differences),
            "did": list(self.did),
            "n_items": dict(self.n_items),
            "failures": list(self.failures),
            "study": list(self.study),
            "notes": list(self.notes),
        }


# --- judges: what an item is for each probe ---------------------------------------------------------


class _Judge:
    truncatable = False

    def units(self, clip_id: str) -> list[Unit]:
        return [Unit(clip_id, clip_id)]

    def span_units(self, clip_id: str) -> list[Unit]:
        raise ConfigError(
            f"the {self.name} measure has no spans to truncate to; fix: drop truncate conditions "  # type: ignore[attr-defined]
            "or use --probe refdis / courtesy"
        )

    def judge(self, unit: Unit, hyp: Tokens | None, model: str) -> dict[str, int]:
        raise NotImplementedError

    def applies(self, unit: Unit, model: str) -> bool:
        """Whether ``unit`` holds items of ``model`` (only those units are transcribed for it)."""
        return True


def hyp_window(hyp: Tokens, corrected: Tokens, lo: int, hi: int) -> Tokens:
    """The words of ``hyp`` aligned to ``corrected[lo:hi]``: words aligned (``equal`` / ``replace``,
    a ``replace`` block split proportionally) to a position in ``[lo, hi)``, and words inserted at a
    position in ``[lo, hi]`` (the window's edges included, as a cut clip keeps +-pad seconds).

    >>> hyp_window(("a", "b", "x", "c", "d"), ("a", "b", "c", "d"), 1, 3)
    ('b', 'x', 'c')
    >>> hyp_window(("the", "committee"), ("thank", "you", "the", "committee"), 0, 3)
    ('the',)
    """
    keep: list[str] = []
    for tag, i1, i2, j1, j2 in opcodes(corrected, hyp):
        if tag == "delete":
            continue
        if tag == "insert":
            if lo <= i1 <= hi:
                keep.extend(hyp[j1:j2])
            continue
        for j in range(j1, j2):
            if lo <= i1 + (j - j1) * (i2 - i1) // (j2 - j1) < hi:
                keep.append(hyp[j])
    return tuple(keep)


def panel_views(panel: Sequence[str], models: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """For every tested model, the panel members whose original-audio outputs mine its items: the
    whole panel, less the model itself when it is a member (leave-one-out).

    >>> panel_views(["a", "b", "c"], ["a", "z"])
    {'a': ('b', 'c'), 'z': ('a', 'b', 'c')}
    """
    return {m: tuple(p for p in panel if p != m) for m in models}


class RefdisJudge(_Judge):
    """Two-reference verdicts against corrected references (spoken text or the panel's consensus).

    ``corrected`` is what the audio says (clip -> tokens): the text realized conditions are built
    from (voices, timings, donor read-back). ``views`` (model -> clip -> tokens, optional) is the
    corrected reference each model is judged against (leave-one-out for panel members); a model
    without a view is judged against ``corrected``. Item keys are ``clip#i``, ``i`` the index of the
    edit in that model's list, the same in every condition.
    """

    name = "refdis"
    truncatable = True

    def __init__(
        self,
        refs: Mapping[str, Tokens],
        corrected: Mapping[str, Tokens],
        spoken_raw: Mapping[str, str],
        normalize: Callable[[str], Tokens],
        params: Any,
        views: Mapping[str, Mapping[str, Tokens]] | None = None,
    ) -> None:
        self.refs, self.corrected, self.params, self.cache = refs, corrected, params, AlignmentCache()
        self.views: Mapping[str, Mapping[str, Tokens]] = views or {}
        self.spoken_raw, self.normalize = spoken_raw, normalize
        self._ops: dict[tuple[str, str], list[tuple[str, int, int, int, int]]] = {}
        self._spans: dict[tuple[str, str], list[tuple[int, int]]] = {}

    def corrected_for(self, model: str | None, cid: str) -> Tokens:
        """The corrected reference ``model`` is judged against on clip ``cid``."""
        view = self.views.get(model) if model is not None else None
        return view[cid] if view is not None and cid in view else self.corrected[cid]

    def ops(self, model: str | None, cid: str) -> list[tuple[str, int, int, int, int]]:
        """The edits (non-equal opcodes of reference -> corrected reference) of ``model`` on ``cid``."""
        key = (model if model is not None and model in self.views else "", cid)
        if key not in self._ops:
            self._ops[key] = [o for o in opcodes(self.refs[cid], self.corrected_for(model, cid)) if o[0] != "equal"]
        return self._ops[key]

    def _verdicts(self, cid: str, ref: Tokens, corr: Tokens, hyp: Tokens | None, model: str) -> list[int | None]:
        clip = ClipInput(cid, ref, {model: hyp})
        edits = mine_two_references(clip, corr, [model], self.params, self.cache)
        return [int(e.verdicts[model] == REF) if e.verdicts.get(model) in (REF, CONSENSUS) else None for e in edits]

    def _models(self) -> list[str | None]:
        return [None, *sorted(self.views)]

    def units(self, clip_id: str) -> list[Unit]:
        return [Unit(clip_id, clip_id)] if any(self.ops(m, clip_id) for m in self._models()) else []

    def spans(self, model: str | None, cid: str) -> list[tuple[int, int]]:
        """For each of ``model``'s edits on ``cid``, the raw spoken words a truncation keeps."""
        key = (model if model is not None and model in self.views else "", cid)
        if key not in self._spans:
            out = []
            raw_of = self._raw_index(cid, self.corrected_for(model, cid))
            for _, _, _, j1, j2 in self.ops(model, cid):
                if j2 > j1:
                    out.append((raw_of[j1], raw_of[j2 - 1] + 1))
                else:  # reference words the speaker never said: keep the boundary point
                    at = raw_of[j1] if j1 < len(raw_of) else len(self.spoken_raw[cid].split())
                    out.append((at, at))
            self._spans[key] = out
        return self._spans[key]

    def span_units(self, clip_id: str) -> list[Unit]:
        seen: list[tuple[int, int]] = []
        for m in self._models():
            seen += [s for s in self.spans(m, clip_id) if s not in seen]
        return [Unit(f"{clip_id}#{i}", clip_id, span) for i, span in enumerate(seen)]

    def applies(self, unit: Unit, model: str) -> bool:
        return unit.span is None or unit.span in self.spans(model, unit.clip_id)

    def _raw_index(self, cid: str, corrected: Tokens | None = None) -> list[int]:
        """For every corrected token, the index of the raw spoken word it comes from."""
        corrected = self.corrected[cid] if corrected is None else corrected
        words = self.spoken_raw[cid].split()
        flat, owner = [], []
        for w_i, w in enumerate(words):
            toks = self.normalize(w)
            flat += list(toks)
            owner += [w_i] * len(toks)
        out = [0] * len(corrected)
        last = 0
        for _tag, i1, i2, j1, j2 in opcodes(corrected, tuple(flat)):
            for i in range(i1, i2):
                j = j1 + (i - i1) * max(j2 - j1, 1) // max(i2 - i1, 1) if j2 > j1 else None
                last = owner[min(j, len(owner) - 1)] if j is not None and owner else last
                out[i] = last
        return out

    def _window_rule(self, cid: str, model: str, i: int, hyp: Tokens) -> int | None:
        """1 / 0 / None (tie): is ``hyp`` closer to the reference window of edit ``i`` or to the corrected one?"""
        k = 1
        _, i1, i2, j1, j2 = self.ops(model, cid)[i]
        ref, corr = self.refs[cid], self.corrected_for(model, cid)
        wref, wcorr = ref[max(i1 - k, 0) : i2 + k], corr[max(j1 - k, 0) : j2 + k]
        d_ref, d_corr = self.cache.wer(wref, hyp).errors, self.cache.wer(wcorr, hyp).errors
        return None if d_ref == d_corr else int(d_ref < d_corr)

    def judge(self, unit: Unit, hyp: Tokens | None, model: str) -> dict[str, int]:
        cid = unit.clip_id
        if hyp is None:
            return {}
        if unit.span is None:
            vals = self._verdicts(cid, self.refs[cid], self.corrected_for(model, cid), hyp, model)
            return {f"{cid}#{i}": v for i, v in enumerate(vals) if v is not None}
        out = {}
        for i, span in enumerate(self.spans(model, cid)):
            if span == unit.span and (v := self._window_rule(cid, model, i, hyp)) is not None:
                out[f"{cid}#{i}"] = v
        return out

    def window_items(self, cid: str, hyp: Tokens | None, model: str) -> dict[str, int]:
        """The window rule on a whole-clip hypothesis: for each edit, the words of ``hyp`` aligned to
        the corrected window (:func:`hyp_window`) judged as a truncated clip's output is (the paired
        baseline of truncation conditions)."""
        if hyp is None:
            return {}
        k, corr, out = 1, self.corrected_for(model, cid), {}
        for i, (_, _, _, j1, j2) in enumerate(self.ops(model, cid)):
            window = hyp_window(hyp, corr, max(j1 - k, 0), j2 + k)
            if (v := self._window_rule(cid, model, i, window)) is not None:
                out[f"{cid}#{i}"] = v
        return out


class CourtesyJudge(_Judge):
    """Presence of the opener in the output. ``eligible`` are the clips realized (what the audio
    opens with); ``views`` (model -> clip ids, optional) the clips each model is scored on
    (leave-one-out for panel members); a model without a view is scored on every eligible clip."""

    name = "courtesy"
    truncatable = True

    def __init__(self, eligible: Sequence[Any], views: Mapping[str, frozenset[str]] | None = None) -> None:
        self.by_id = {e.clip_id: e for e in eligible}
        self.views: Mapping[str, frozenset[str]] = views or {}

    def applies(self, unit: Unit, model: str) -> bool:
        return model not in self.views or unit.clip_id in self.views[model]

    def units(self, clip_id: str) -> list[Unit]:
        return [Unit(clip_id, clip_id)] if clip_id in self.by_id else []

    def span_units(self, clip_id: str) -> list[Unit]:
        e = self.by_id.get(clip_id)
        return [Unit(clip_id, clip_id, (0, e.n_raw_words))] if e else []

    def judge(self, unit: Unit, hyp: Tokens | None, model: str) -> dict[str, int]:
        if hyp is None or not self.applies(unit, model):
            return {}
        return {unit.key: int(not courtesy_present(self.by_id[unit.clip_id].opener, " ".join(hyp)))}


class OrthoJudge(_Judge):
    name = "ortho"

    def __init__(self, clips: Sequence[Any], families: Sequence[str] | None) -> None:
        self.clips, self.families = clips, families
        self.refs = {c.id: c.reference.strip() for c in clips}

    def judge_all(self, raw_hyps: Mapping[str, str | None], model: str) -> dict[str, int]:
        from pathlib import Path

        rows = {cid: PredictionRow(cid, ref, raw_hyps.get(cid)) for cid, ref in self.refs.items()}
        pf = PredictionFile(model, Path("battery"), "battery", "test", rows)
        pset = PredictionSet((pf,), self.refs, "battery", "battery", {model: pf})
        res = switch_rate(pset, self.families)
        return {
            f"{o.item.clip_id}#{o.item.family}#{o.item.start}": int(o.status == "same")
            for o in res.outcomes
            if o.status in ("same", "other")
        }


# --- the grid -------------------------------------------------------------------------------------


def _texts(outcome: Any, name: str) -> tuple[dict[str, str], list[dict[str, str]]]:
    """A transcription outcome as (clip id -> text, failure rows of model ``name``)."""
    fails = [{"model": name, "clip_id": f.clip_id, "reason": f.reason} for f in outcome.failures]
    return {r.clip_id: r.hypothesis for r in outcome.records}, fails


Texts = tuple[dict[str, str], list[dict[str, str]]]  # clip id -> text, failure rows
Scored = tuple[dict[str, dict[str, int]], list[dict[str, str]]]  # model -> item -> 0/1, failure rows


def _transcribe_all(
    pool: ModelPool, jobs: Mapping[str, Sequence[Any]], store: Store | None
) -> tuple[dict[str, Texts], dict[str, str], dict[str, dict[str, bool]]]:
    """Every model's clips (model name -> clips, recipes included) transcribed by the pool in one call:
    per model (texts, failure rows); the recipe clips that could be built nowhere (clip id -> why,
    as a realization raises it: see :func:`_unbuildable`); and what the pool reported of each
    model's backend (:func:`~asr_audit.probes.battery.courtesy.backend_traits`, where it runs the
    model elsewhere)."""
    answers = pool.transcribe({name: clips for name, clips in jobs.items() if clips}, store)
    unbuilt: dict[str, str] = {}
    traits: dict[str, dict[str, bool]] = {}
    out: dict[str, Texts] = {}
    for name in jobs:
        if name not in answers:
            out[name] = ({}, [])
            continue
        out[name] = _texts(answers[name].outcome, name)
        unbuilt.update(answers[name].unbuilt)
        if answers[name].traits:
            traits[name] = dict(answers[name].traits)
    unbuilt.update(_unbuildable(jobs, out, unbuilt))
    return out, unbuilt, traits


def _unbuildable(
    jobs: Mapping[str, Sequence[Any]], out: Mapping[str, Texts], unbuilt: Mapping[str, str]
) -> dict[str, str]:
    """The recipe clips that failed and cannot be built here either (clip id -> the error building
    raises): a realization that fails, told apart from a model that fails on audio that exists. A
    pool that builds recipes where it reads them (a local pool) reports such a clip as a failed
    transcription; one whose workers build them reports it as unbuilt already. Only failed clips are
    built again."""
    recipes = {c.id: c for clips in jobs.values() for c in clips if is_recipe(c)}
    failed = {f["clip_id"] for _, fails in out.values() for f in fails} & set(recipes) - set(unbuilt)
    found: dict[str, str] = {}
    for cid in sorted(failed):
        try:
            built(recipes[cid])
        except AuditError as exc:
            found[cid] = str(exc)
    return found


@dataclass(frozen=True, slots=True)
class _Grid:
    """What every condition of one battery run reads: the pool and the store, the corpus, the tested
    models, the realization context, the normalizer, the original-audio transcripts of every model
    (tested and panel: model -> clip id -> text), what the pool reported of each backend, and the
    measure's settings."""

    pool: ModelPool
    store: Store | None
    corpus: Corpus
    models: tuple[str, ...]
    ctx: ConditionContext
    normalize: Callable[[str], Tokens]
    hyps0: Mapping[str, Mapping[str, str]]
    traits: Mapping[str, Mapping[str, bool]]
    settings: MeasureSettings


@dataclass(frozen=True, slots=True, kw_only=True)
class MeasureSettings:
    """What a measure reads of the battery's options: ``mining`` (refdis), ``families`` (ortho),
    ``gate_max_wer`` (masked)."""

    mining: RefdisParams
    families: Sequence[str] | None
    gate_max_wer: float


JudgeBuilder = Callable[
    [
        Corpus,
        ConditionContext,
        Mapping[str, Mapping[str, str]],
        Callable[[str], Tokens],
        MeasureSettings,
        Sequence[str],
        Sequence[str],
    ],
    _Judge,
]


def _no_panel(measure: str, n: int) -> ConfigError:
    return ConfigError(
        f"the {measure} measure needs what the audio says: {n} clip(s) have no spoken text and no "
        "panel was given (the tested models may not judge themselves); fix: pass --panel m1,m2,m3 "
        "(in a spec: the panel table, or panel in probes.battery) or --spoken spoken.jsonl"
    )


def _courtesy_judge(
    corpus: Corpus,
    ctx: ConditionContext,
    hyps0: Mapping[str, Mapping[str, str]],
    normalize: Callable[[str], Tokens],
    settings: MeasureSettings,
    panel: Sequence[str],
    models: Sequence[str],
) -> _Judge:
    """Eligible clips from the spoken text, else from the panel's original-audio outputs: the
    whole panel for the clips realized, the panel less the model for a member's own items."""

    unknown = [c for c in corpus.clips if c.id not in ctx.spoken]
    if unknown and not panel:
        raise _no_panel("courtesy", len(unknown))
    realized = {e.clip_id: e for e in eligible_clips(corpus.clips, ctx.spoken, {p: hyps0[p] for p in panel})}
    views: dict[str, frozenset[str]] = {}
    for m, view in panel_views(panel, models).items():
        if len(view) == len(panel):
            continue
        if unknown and not view:
            raise ConfigError(
                f"the courtesy measure scores panel member {m!r} leave-one-out and no other panel "
                "model is left; fix: add panel models (--panel) or pass --spoken spoken.jsonl"
            )
        own = eligible_clips(corpus.clips, ctx.spoken, {p: hyps0[p] for p in view})
        views[m] = frozenset(e.clip_id for e in own)
        for e in own:
            realized.setdefault(e.clip_id, e)
    eligible = [realized[c.id] for c in corpus.clips if c.id in realized]
    ctx.spoken = {**ctx.spoken, **{e.clip_id: e.spoken for e in eligible}}
    return CourtesyJudge(eligible, views)


def _ortho_judge(
    corpus: Corpus,
    ctx: ConditionContext,
    hyps0: Mapping[str, Mapping[str, str]],
    normalize: Callable[[str], Tokens],
    settings: MeasureSettings,
    panel: Sequence[str],
    models: Sequence[str],
) -> _Judge:
    return OrthoJudge(corpus.clips, settings.families)


def _refdis_judge(
    corpus: Corpus,
    ctx: ConditionContext,
    hyps0: Mapping[str, Mapping[str, str]],
    normalize: Callable[[str], Tokens],
    settings: MeasureSettings,
    panel: Sequence[str],
    models: Sequence[str],
) -> _Judge:
    """Corrected references from the spoken text, else the panel's consensus on the original audio:
    the whole panel's for the text realized, the panel less the model for a member's own items."""
    clips = corpus.clips
    rp = settings.mining
    refs = {c.id: normalize(c.reference) for c in clips}
    corrected = {cid: normalize(ctx.spoken[cid]) for cid in refs if cid in ctx.spoken}
    missing = [c for c in clips if c.id not in corrected]
    views: dict[str, dict[str, Tokens]] = {}
    if missing:
        if not panel:
            raise _no_panel("refdis", len(missing))
        known = dict(corrected)
        corrected.update(_consensus(missing, hyps0, panel, rp, normalize, refs))
        for m, view in panel_views(panel, models).items():
            if len(view) < len(panel):
                views[m] = {**known, **_consensus(missing, hyps0, view, rp, normalize, refs, held_out=m)}
    spoken_raw = {cid: ctx.spoken.get(cid) or " ".join(corrected[cid]) for cid in refs}
    ctx.spoken = {**ctx.spoken, **{cid: t for cid, t in spoken_raw.items() if cid not in ctx.spoken}}
    return RefdisJudge(refs, corrected, spoken_raw, normalize, rp, views)


def _consensus(
    clips: Sequence[Any],
    hyps0: Mapping[str, Mapping[str, str]],
    panel: Sequence[str],
    rp: Any,
    normalize: Callable[[str], Tokens],
    refs: Mapping[str, Tokens],
    held_out: str | None = None,
) -> dict[str, Tokens]:
    """References corrected by the panel's consensus on the original audio (refdis mining)."""

    if len(panel) < rp.min_panel:
        loo = f" after leaving out the tested model {held_out!r}" if held_out else ""
        raise ConfigError(
            f"refdis needs the spoken text or a consensus panel of >= {rp.min_panel} models, got "
            f"{len(panel)}{loo}; fix: pass --spoken, or more --panel models (in a spec: the panel table)"
        )
    inputs = [
        ClipInput(c.id, refs[c.id], {m: (normalize(hyps0[m][c.id]) if c.id in hyps0[m] else None) for m in panel})
        for c in clips
    ]
    mining = mine(inputs, list(panel), list(panel), replace(rp, loo=False))
    by_clip: dict[str, list] = defaultdict(list)
    for e in mining.edits:
        by_clip[e.clip_id].append(e)
    return {c.id: apply_edits(refs[c.id], by_clip.get(c.id, [])) for c in clips}


def run_battery(
    pool: ModelPool,
    corpus: Corpus,
    store: Store | None,
    options: BatteryOptions,
    *,
    seed: int = 0,
    normalizer: str = "whisper",
    spoken: Mapping[str, str] | None = None,
    conv_donors: Sequence[Any] = (),
    timings: Callable[[Any, str], Sequence[tuple[str, float, float]]] | None = None,
    progress: Callable[[str], None] | None = None,
) -> BatteryResult:
    """The measure of ``options`` over ``corpus`` under every condition, for every tested model.

    The tested models are ``options.models`` and the panel ``options.panel``, all taken from
    ``pool`` (the models wherever they run). The panel (members may be tested models too) says
    what the audio says when ``spoken`` (clip id -> text) does not: the ``refdis`` and ``courtesy``
    measures mine it from the panel's outputs on the original audio, leaving a tested member out
    of its own items (:func:`panel_views`), and refuse to run without either. ``conv_donors`` are
    conversational donor recordings (``donor:conv``); ``timings`` replaces the aligner's word
    timings (tests); ``progress`` is told each condition's name as it starts.

    Every model runs through the pool, wherever it runs: the original audio as it is, every judged
    condition's realized clips as recipes (:func:`~asr_audit.probes.battery.conditions.realize` with
    ``lazy``), all conditions in one call, so a pool whose models run elsewhere builds them there (a
    local pool builds each when it reads it: the same samples). The masked measure transcribes
    through the pool too (its degraded and masked clips as recipes; the masks are planned here), and
    so do the courtesy study's translate and attn-isolated arms.
    """

    measure = MEASURES.get(options.measure)
    if not options.models:
        raise ConfigError("the battery needs at least one model; fix: --model whisper-tiny.en,...")
    models, panel = tuple(options.models), tuple(options.panel or ())
    norm = with_text2num(get_normalizer(normalizer)) if measure.text2num else get_normalizer(normalizer)

    def normalize(text: str) -> Tokens:
        return tuple(normalize_many(norm, [text])[0].split())

    ctx = ConditionContext(corpus.clips, seed, dict(spoken or {}), tuple(conv_donors), timings)
    unknown = [c for c in corpus.clips if c.id not in ctx.spoken]
    if measure.spoken_or_panel and unknown and not panel:  # refuse before transcribing anything
        raise _no_panel(options.measure, len(unknown))
    everyone = tuple(dict.fromkeys([*models, *panel]))
    originals, _, traits = _transcribe_all(pool, dict.fromkeys(everyone, corpus.clips), store)
    failures = [{**x, "condition": "original"} for _, f in originals.values() for x in f]
    settings = MeasureSettings(mining=options.mining, families=options.families, gate_max_wer=options.gate_max_wer)
    g = _Grid(pool, store, corpus, models, ctx, normalize, {m: t for m, (t, _) in originals.items()}, traits, settings)
    judge = None if measure.judge is None else measure.judge(corpus, ctx, g.hyps0, normalize, settings, panel, models)
    items, f = _grid_items(g, measure, judge, options.conditions, progress)
    failures += f
    conds = options.conditions
    baselines, notes = _baselines(judge, conds, corpus, models, items, g.hyps0, normalize)
    clusters = {c.id: " ".join(normalize(c.reference)) for c in corpus.clips}
    rows: tuple[dict[str, Any], ...] = ()
    if measure.study is not None and options.study:
        rows = measure.study(g, judge, items, conds)
    return BatteryResult(
        probe=options.measure,
        corpus=corpus.name,
        conditions=tuple(c.name for c in conds),
        models=models,
        cells=tuple(_cells(conds, models, items, failures)),
        differences=tuple(_differences(conds, models, items, baselines, clusters, seed, options.resamples)),
        did=tuple(_dids(conds, models, items, clusters, seed, options.resamples)),
        seed=seed,
        n_items={c.name: len({k for per in items[c.name].values() for k in per}) for c in conds},
        failures=tuple(failures),
        study=rows,
        notes=notes,
        items=items,
    )


def _grid_items(
    g: _Grid,
    measure: Measure,
    judge: _Judge | None,
    conds: Sequence[Condition],
    progress: Callable[[str], None] | None,
) -> tuple[dict[str, dict[str, dict[str, int]]], list[dict[str, str]]]:
    """Every condition's items (condition -> model -> item -> 0/1) and failure rows: a judged measure
    realizes every condition (``progress`` told each), then transcribes them all in one pool call;
    a measure that scores a condition itself (``masked``) runs them one after another."""
    items: dict[str, dict[str, dict[str, int]]] = {}
    failures: list[dict[str, str]] = []
    if judge is None:
        score = measure.condition
        assert score is not None  # a measure has exactly one of judge and condition (Measure.__post_init__)
        for cond in conds:
            if progress:
                progress(cond.name)
            items[cond.name], f = score(g, cond)
            failures += f
        return items, failures
    plans = []
    for cond in conds:
        if progress:
            progress(cond.name)
        plans.append(_plan_condition(g, cond, judge))
    for cond, planned, (transcribed, unbuilt) in zip(conds, plans, _transcribe_planned(g, plans)):
        items[cond.name], f = _judge_condition(g, cond, judge, planned, transcribed, unbuilt)
        failures += f
    return items, failures


def _cells(
    conds: Sequence[Condition],
    models: Sequence[str],
    items: Mapping[str, Mapping[str, Mapping[str, int]]],
    failures: Sequence[Mapping[str, str]],
) -> list[Cell]:
    """Accept-ref with its Wilson interval per condition and model, and the failures counted there."""
    cells = []
    for cond in conds:
        for name in models:
            vals = list(items[cond.name].get(name, {}).values())
            w = wilson(sum(vals), len(vals))
            cells.append(
                Cell(
                    model=name,
                    condition=cond.name,
                    k=w.k,
                    n=w.n,
                    accept_ref=w.rate if w.n else None,
                    ci_low=w.low if w.n else None,
                    ci_high=w.high if w.n else None,
                    n_failed=sum(1 for x in failures if x["model"] == name and x["condition"] == cond.name),
                )
            )
    return cells


def _baselines(
    judge: _Judge | None,
    conds: Sequence[Condition],
    corpus: Corpus,
    models: Sequence[str],
    items: Mapping[str, Any],
    hyps0: Mapping[str, Mapping[str, str]],
    normalize: Callable[[str], Tokens],
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Per condition the items it is paired with (the original audio's; for a refdis truncation,
    the original audio judged by the window rule, the same rule in both arms), and the note saying so."""
    baselines = {c.name: items["original"] for c in conds}
    if not isinstance(judge, RefdisJudge) or all(c.truncate is None for c in conds):
        return baselines, ()
    window = {
        m: {
            k: v
            for c in corpus.clips
            for k, v in judge.window_items(c.id, _norm_or_none(hyps0[m].get(c.id), normalize), m).items()
        }
        for m in models
    }
    baselines.update({c.name: window for c in conds if c.truncate is not None})
    return baselines, (
        "truncation conditions are judged by the window rule and paired with the original audio judged "
        "by the same rule (baseline 'original (window rule)'); the original cell uses two-reference "
        "verdicts",
    )


def _norm_or_none(text: str | None, normalize: Callable[[str], Tokens]) -> Tokens | None:
    return None if text is None else normalize(text)


@dataclass(frozen=True, slots=True)
class _Planned:
    """One condition's realized units (``(position, unit, realized)``), the units that could not be
    realized (``(position, unit key, why)``), and per model the clips to transcribe."""

    realized: list[tuple[int, Unit, Realized]]
    unusable: list[tuple[int, str, str]]
    jobs: dict[str, list[Any]]


def _plan_condition(g: _Grid, cond: Condition, judge: _Judge) -> _Planned:
    """Realize every unit of ``cond`` as recipes (built where the pool reads them), and list each
    tested model's clips to transcribe."""

    unusable: list[tuple[int, str, str]] = []
    realized: list[tuple[int, Unit, Realized]] = []
    for clip in g.corpus.clips:
        units = judge.span_units(clip.id) if cond.truncate is not None else judge.units(clip.id)
        if isinstance(judge, OrthoJudge) and cond.truncate is None:
            units = [Unit(clip.id, clip.id)]
        for u in units:
            at = len(realized) + len(unusable)
            try:
                realized.append((at, u, realize(cond, clip, g.ctx, u.span, lazy=True)))
            except ConfigError:
                raise
            except AuditError as exc:
                unusable.append((at, u.key, str(exc)))
    jobs: dict[str, list[Any]] = {}
    if not cond.is_original:
        for name in g.models:
            mine = [r for _, u, r in realized if judge.applies(u, name)]
            jobs[name] = [r.clip for r in mine] + [r.donor for r in mine if r.donor]
    return _Planned(realized, unusable, jobs)


def _transcribe_planned(g: _Grid, planned: Sequence[_Planned]) -> list[tuple[dict[str, Texts], dict[str, str]]]:
    """Transcribe the clips of several planned conditions in one pool call (a pool that runs its
    models elsewhere starts each model's workers once); per condition the texts and failure rows of
    each model, and the recipe clips built nowhere."""
    merged = {name: [c for p in planned for c in p.jobs.get(name, [])] for name in g.models}
    every, unbuilt, _ = _transcribe_all(g.pool, merged, g.store)
    out = []
    for p in planned:
        per: dict[str, Texts] = {}
        for name, clips in p.jobs.items():
            ids = {c.id for c in clips}
            texts, fails = every[name]
            per[name] = ({k: v for k, v in texts.items() if k in ids}, [f for f in fails if f["clip_id"] in ids])
        ids = {c.id for clips in p.jobs.values() for c in clips}
        out.append((per, {k: v for k, v in unbuilt.items() if k in ids}))
    return out


def _run_condition(g: _Grid, cond: Condition, judge: _Judge) -> Scored:
    """One condition planned, transcribed and judged (the courtesy study's own truncation)."""
    planned = _plan_condition(g, cond, judge)
    ((transcribed, unbuilt),) = _transcribe_planned(g, [planned])
    return _judge_condition(g, cond, judge, planned, transcribed, unbuilt)


def _judge_condition(
    g: _Grid,
    cond: Condition,
    judge: _Judge,
    planned: _Planned,
    transcribed: dict[str, Texts],
    unbuilt: Mapping[str, str],
) -> tuple[dict[str, dict[str, int]], list[dict[str, str]]]:
    """Items and failure rows of one condition from its planned units and their transcripts."""
    normalize = g.normalize
    realized, unusable = list(planned.realized), list(planned.unusable)
    if unbuilt:  # built nowhere (the driver raised what a local realization raises): as if it had failed here
        gone = [(at, u, r) for at, u, r in realized if r.clip.id in unbuilt or (r.donor and r.donor.id in unbuilt)]
        unusable += [(at, u.key, unbuilt.get(r.clip.id) or unbuilt[r.donor.id]) for at, u, r in gone]  # type: ignore[union-attr]
        dropped = {r.clip.id for _, _, r in gone} | {r.donor.id for _, _, r in gone if r.donor}
        realized = [x for x in realized if x[2].clip.id not in dropped]
        for name, (texts, f) in transcribed.items():
            transcribed[name] = (texts, [x for x in f if x["clip_id"] not in dropped])
    failures: list[dict[str, str]] = []
    for _, key, reason in sorted(unusable):
        failures += [{"model": m, "clip_id": key, "condition": cond.name, "reason": reason} for m in g.models]
    out: dict[str, dict[str, int]] = {}
    for name in g.models:
        mine = [(u, r) for _, u, r in realized if judge.applies(u, name)]
        if cond.is_original:
            texts = dict(g.hyps0[name])
        else:
            texts, f = transcribed.get(name, ({}, []))
            failures += [{**x, "condition": cond.name} for x in f]
        per: dict[str, int] = {}
        raw: dict[str, str | None] = {}
        for u, r in mine:
            text = texts.get(r.clip.id)
            if text is None:
                continue
            hyp = normalize(text)
            if r.donor is not None and cond.donor is not None:  # a realized donor implies the condition's
                donor_text = texts.get(r.donor.id)
                if donor_text is None:
                    continue
                orig = (
                    judge.corrected[u.clip_id]
                    if isinstance(judge, RefdisJudge)
                    else normalize(
                        g.ctx.spoken_text(u.clip_id, next(c.reference for c in g.corpus.clips if c.id == u.clip_id))
                    )
                )
                hyp = original_part(hyp, orig, normalize(donor_text), cond.donor.get("position"))
            raw[u.clip_id] = " ".join(hyp)
            if not isinstance(judge, OrthoJudge):
                per.update(judge.judge(u, hyp, name))
        if isinstance(judge, OrthoJudge):
            per = judge.judge_all(raw if not cond.is_original else texts, name)
        out[name] = per
    return out, failures


def _masked_condition(g: _Grid, cond: Condition) -> Scored:
    """Masked-entity recovery (:func:`asr_audit.probes.audio.masked.run_masked`) on the clips under ``cond``.

    The condition is applied first (clip ids kept). Words are aligned on the audio before the
    conditions that keep time (noise, reverb: the same samples at the same times), i.e. on the
    original or, with ``voice:``, on the re-synthesized clip (a new voice moves time); the masks go
    onto the degraded audio at those times, so an aligner that fails on noisy audio does not empty
    the condition. An item is 1 when an eligible masked target is recovered. Truncation and donors
    do not apply.

    The degraded and the masked clips reach the pool as recipes (the masked one: the degraded
    recipe and the span); the degraded audio is also built here, to align and to plan the masks
    (whose recipes record the masked audio's hash).
    """

    if cond.truncate is not None or cond.donor is not None:
        raise ConfigError(
            f"condition {cond.name!r} does not combine with the masked measure (it masks spans of the "
            "clip itself); fix: use noise, reverb or voice conditions"
        )
    timing_cond = cond.without("noise").without("reverb")
    keeps_time = timing_cond.name != cond.name
    clips, timing, failures = [], [], []
    sent: dict[str, Any] = {}  # clip id -> its degraded clip as a recipe
    for clip in g.corpus.clips:
        try:  # the same code builds it here (raising what realize raises) and where the pool reads it
            sent[clip.id] = replace(realize(cond, clip, g.ctx, lazy=True).clip, id=clip.id)
            clips.append(built(sent[clip.id]))
            if keeps_time:
                timing.append(replace(realize(timing_cond, clip, g.ctx).clip, id=clip.id))
        except AuditError as exc:
            failures += [{"model": m, "clip_id": clip.id, "condition": cond.name, "reason": str(exc)} for m in g.models]
    res = run_masked(
        g.pool,
        replace(g.corpus, clips=tuple(clips)),
        g.store,
        MaskParams(seed=g.ctx.seed, gate_max_wer=g.settings.gate_max_wer),
        names=g.models,
        timing=replace(g.corpus, clips=tuple(timing)) if keeps_time else None,
        hear=recipe_hearing(g.pool, g.models, g.store, sent),
    )
    where = {r.item_id: f"{r.clip_id}#{r.start}-{r.end}" for r in res.recipes}  # stable across conditions
    out: dict[str, dict[str, int]] = {n: {} for n in g.models}
    for it in res.items:
        if it.eligible:
            out[it.model][where[it.item_id]] = int(it.recovered)
    failures += [{"model": "*", "clip_id": c, "condition": cond.name, "reason": r} for c, r in res.failures]
    return out, failures


def _differences(
    conds: Sequence[Condition],
    models: Sequence[str],
    items: Mapping[str, Any],
    baselines: Mapping[str, Any],
    clusters: Mapping[str, str],
    seed: int,
    n_resamples: int,
) -> list[dict[str, Any]]:
    """Each condition against its baseline items (the original audio, judged by the condition's rule)."""

    out = []
    for cond in conds[1:]:
        label = "original" if baselines[cond.name] is items["original"] else "original (window rule)"
        for m in models:
            base, treat = baselines[cond.name].get(m, {}), items[cond.name].get(m, {})
            keys = sorted(set(base) & set(treat))
            d = paired_difference(
                [base[k] for k in keys],
                [treat[k] for k in keys],
                [clusters[k.split("#")[0]] for k in keys],
                model_rng(seed, m + "\x1f" + cond.name),
                n_resamples,
            )
            out.append({"model": m, "condition": cond.name, "baseline": label, **d.to_dict()})
    return out


def _dids(
    conds: Sequence[Condition],
    models: Sequence[str],
    items: Mapping[str, Any],
    clusters: Mapping[str, str],
    seed: int,
    n_resamples: int,
) -> list[dict[str, Any]]:
    names = {c.name for c in conds}
    out = []
    for c in conds:
        if c.voice is None or c.donor is None or c.donor.get("source") != "bench":
            continue
        conv_atom = c.donor.text.replace("donor:bench", "donor:conv")
        voiced_conv = c.name.replace(c.donor.text, conv_atom)
        plain_bench, plain_conv = c.without("voice").name, c.without("voice").name.replace(c.donor.text, conv_atom)
        if not {voiced_conv, plain_bench, plain_conv} <= names:
            continue
        for m in models:
            a_t, a_c = items[plain_bench].get(m, {}), items[plain_conv].get(m, {})
            b_t, b_c = items[c.name].get(m, {}), items[voiced_conv].get(m, {})
            ka, kb = sorted(set(a_t) & set(a_c)), sorted(set(b_t) & set(b_c))
            d = difference_in_differences(
                [a_t[k] for k in ka],
                [a_c[k] for k in ka],
                [clusters[k.split("#")[0]] for k in ka],
                [b_t[k] for k in kb],
                [b_c[k] for k in kb],
                [clusters[k.split("#")[0]] for k in kb],
                model_rng(seed, m + "\x1fdid\x1f" + c.name),
                n_resamples,
            )
            out.append(
                {
                    "model": m,
                    "voice": c.voice,
                    "benchmark_audio": [plain_bench, plain_conv],
                    "voice_audio": [c.name, voiced_conv],
                    **d.to_dict(),
                }
            )
    return out


def _study(
    g: _Grid, judge: _Judge | None, items: Mapping[str, Any], conds: Sequence[Condition]
) -> tuple[dict[str, Any], ...]:
    """The courtesy case study: full / truncated from the battery, attn-isolated and translate added."""

    if not isinstance(judge, CourtesyJudge):
        raise ConfigError("the courtesy study needs the courtesy measure")
    trunc = next((c for c in conds if c.truncate is not None and len(c.atoms) == 1), None)
    if trunc is not None:
        t_items = items[trunc.name]
    else:
        t_items, _ = _run_condition(g, parse_condition("truncate:1w0.25s"), judge)

    def presence(per: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, bool]]:
        return {m: {k: not v for k, v in vals.items()} for m, vals in per.items()}

    def window(clip: Any, e: Any) -> tuple[float, float]:
        words = g.ctx.word_timings(clip, e.spoken)
        return words[0][1], words[e.n_raw_words - 1][2]

    measured = Measured(
        models=g.models,
        full=presence(items["original"]),
        truncated=presence(t_items),
        views=judge.views,
        traits=g.traits,
    )
    rows = courtesy_study(g.pool, g.store, g.corpus.clips, list(judge.by_id.values()), window, measured)
    return tuple(r.to_dict() for r in rows)


# --- the measures -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Measure:
    """A battery measure: what an item is and how a condition is scored.

    ``judge`` builds the :class:`_Judge` that scores realized clips (from the corpus, the condition
    context, the original-audio hypotheses, the normalizer, the parameters, the panel and the
    tested models); a
    measure with ``condition`` instead realizes and scores each condition itself (``masked``).
    ``text2num`` normalizes spelled numbers to digits; ``study`` adds case-study rows;
    ``spoken_or_panel``: the measure needs what the audio says, from the spoken text or a panel.
    """

    name: str
    judge: JudgeBuilder | None = None
    condition: Callable[[_Grid, Condition], Scored] | None = None
    text2num: bool = False
    study: (
        Callable[[_Grid, _Judge | None, Mapping[str, Any], Sequence[Condition]], tuple[dict[str, Any], ...]] | None
    ) = None
    spoken_or_panel: bool = False

    def __post_init__(self) -> None:
        if (self.judge is None) == (self.condition is None):
            raise ValueError(f"battery measure {self.name!r} needs exactly one of judge and condition")


MEASURES: Registry[Measure] = Registry(
    "battery measure", fix="use one of them (asr-audit battery --probe, or measure = ... in [probes.battery])"
)
MEASURES.register("refdis", Measure("refdis", judge=_refdis_judge, text2num=True, spoken_or_panel=True))
MEASURES.register("courtesy", Measure("courtesy", judge=_courtesy_judge, study=_study, spoken_or_panel=True))
MEASURES.register("ortho", Measure("ortho", judge=_ortho_judge))
MEASURES.register("masked", Measure("masked", condition=_masked_condition))


BATTERY_FIELDS = (
    "measure",
    "conditions",
    "donor_conv",
    "spoken",
    "models",
    "panel",
    "resamples",
    "preset",
    "min_ref_match",
    "families",
    "study",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class BatteryOptions:
    """The battery's options, from ``asr-audit battery`` flags, ``[probes.battery]`` /
    ``[probes.courtesy]`` (the courtesy measure with its case study) or the API's keywords.

    ``conditions`` are parsed once (:func:`~asr_audit.probes.battery.conditions.parse_conditions`:
    ``original`` first); ``mining`` (built from ``preset`` and ``min_ref_match``) configures the
    refdis measure, ``families`` the ortho measure, ``gate_max_wer`` the masked measure (not a
    spec field). ``models`` names the tested models (default: the corpus's models, the spec's
    ``[[models]]``; the CLI's ``--model``); ``panel`` the models whose original-audio outputs say
    what the audio says when ``spoken`` does not (refdis, courtesy; default: the spec's ``[panel]``).
    ``spoken`` and ``donor_conv`` are paths, read when the probe runs.
    """

    measure: str = "refdis"
    conditions: tuple[Condition, ...]
    donor_conv: tuple[str, ...] = ()
    spoken: str | None = None
    models: tuple[str, ...] | None = None
    panel: tuple[str, ...] | None = None
    resamples: int = 1000
    study: bool = True
    mining: RefdisParams = field(default_factory=RefdisParams)
    families: tuple[str, ...] | None = None
    gate_max_wer: float = 0.3

    def __post_init__(self) -> None:
        check(
            self.measure in MEASURES,
            "measure",
            self.measure,
            f"is unknown (valid: {', '.join(MEASURES.names())})",
            f"use one of {', '.join(MEASURES.names())}",
        )
        check(
            bool(self.conditions) and all(isinstance(c, Condition) for c in self.conditions),
            "conditions",
            self.conditions,
            "names no parsed condition",
            "build them with parse_conditions, e.g. parse_conditions(['noise:10db', 'donor:conv8s'])",
        )
        check(self.resamples >= 1, "resamples", self.resamples, "must be >= 1", "use 1 or more bootstrap resamples")
        if self.families is not None:
            SwitchRateOptions(families=self.families)  # checks the family names

    @property
    def condition_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.conditions)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], surface: Surface, measure: str | None = None) -> BatteryOptions:
        """Options from flag, spec or keyword values (``None`` = not given); ``measure`` fixes the
        measure (``[probes.courtesy]``), which the values may then not name."""
        known = BATTERY_FIELDS if measure is None else tuple(f for f in BATTERY_FIELDS if f != "measure")
        r = Reader(values, surface, known, "battery" if measure is None else measure)
        mining = build(
            preset_params,
            surface,
            preset=r.choice("preset", tuple(PRESETS), "anchor"),
            min_ref_match=r.number("min_ref_match", None),
        )
        if not r.has("conditions"):
            raise surface.missing("conditions", 'e.g. conditions = ["noise:10db", "donor:conv8s"]')
        try:
            conditions = read_conditions(r.names("conditions", ()))
        except OptionError as exc:
            raise surface.reword(exc) from None
        return build(
            cls,
            surface,
            measure=measure or r.text("measure", "refdis"),
            conditions=conditions,
            donor_conv=r.names("donor_conv", ()),
            spoken=r.text("spoken", None),
            models=r.names("models", None),
            panel=r.names("panel", None),
            resamples=r.integer("resamples", 1000),
            study=r.flag("study", True),
            mining=mining,
            families=r.names("families", None),
        )


def read_conditions(names: Sequence[str]) -> tuple[Condition, ...]:
    """The conditions as written (``original`` first, see :func:`parse_conditions`), or an
    :class:`~asr_audit.options.OptionError` on the ``conditions`` field.

    >>> [c.name for c in read_conditions(["noise:10.0db", "reverb:0.6"])]
    ['original', 'noise:10db', 'reverb:0.6']
    """
    check(
        bool(names),
        "conditions",
        tuple(names),
        "names no condition",
        'name at least one, e.g. ["noise:10db", "donor:conv8s"]',
    )
    try:
        return parse_conditions(list(names))
    except ConfigError as exc:
        raise OptionError(
            "conditions", tuple(names), f"does not parse ({exc})", "write each condition in the grammar above"
        ) from None
