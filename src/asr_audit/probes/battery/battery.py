"""The trigger battery: one accept-ref measure under a grid of audio conditions.

For every condition (:mod:`asr_audit.probes.battery.conditions`) each clip is realized (re-voiced, noised,
reverberated, truncated, spliced), transcribed by every model through the store (derived audio is
cached by its hash), and judged. An *item* is one judged unit with a 0/1 value, 1 = the output
follows the reference:

* ``refdis`` — one item per reference error. The errors are the differences between the
  reference and a corrected reference: the spoken text when known (a TTS corpus), else the
  reference corrected by the panel's consensus on the original audio. A model's verdict on each
  is read as in refdis' two-reference mode. Under ``truncate`` each error gets its own clip, cut
  to the error +-k aligned words +-pad seconds, and judged by distance: 1 when the hypothesis is
  closer (word edits) to the reference window (+-1 word around the error) than to the corrected
  window, 0 when closer to the corrected one, left out on a tie. (Two-reference verdicts are too
  strict at a cut edge: a half-cut neighbour word turns an opener insertion into a substitution.)
* ``courtesy`` — one item per clip that opens with a courtesy the reference omits
  (:mod:`asr_audit.probes.battery.courtesy`); 1 = the courtesy is absent from the output.
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
from asr_audit.errors import ConfigError
from asr_audit.options import OptionError, Reader, Surface, build, check
from asr_audit.probes.battery.conditions import Condition, ConditionContext, Realized, parse_conditions, realize
from asr_audit.probes.predfiles.refdis import PRESETS, RefdisParams, preset_params
from asr_audit.registry import Registry
from asr_audit.stats.did import difference_in_differences, paired_difference
from asr_audit.stats.intervals import wilson
from asr_audit.text.align import opcodes

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
        return {"model": self.model, "condition": self.condition, "accept_ref": self.accept_ref, "k": self.k,
                "n": self.n, "ci_low": self.ci_low, "ci_high": self.ci_high, "n_failed": self.n_failed}


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
        return {"probe": "battery", "measure": self.probe, "corpus": self.corpus, "seed": self.seed,
                "conditions": list(self.conditions), "models": list(self.models),
                "cells": [c.to_dict() for c in self.cells], "differences": list(self.differences),
                "did": list(self.did), "n_items": dict(self.n_items), "failures": list(self.failures),
                "study": list(self.study), "notes": list(self.notes)}


# --- judges: what an item is for each probe ---------------------------------------------------------

class _Judge:
    truncatable = False

    def units(self, clip_id: str) -> list[Unit]:
        return [Unit(clip_id, clip_id)]

    def span_units(self, clip_id: str) -> list[Unit]:
        raise ConfigError(f"the {self.name} measure has no spans to truncate to; fix: drop truncate conditions "  # type: ignore[attr-defined]
                          "or use --probe refdis / courtesy")

    def judge(self, unit: Unit, hyp: Tokens | None, model: str) -> dict[str, int]:
        raise NotImplementedError


class RefdisJudge(_Judge):
    """Two-reference verdicts against corrected references (spoken text or original-audio consensus)."""

    name = "refdis"
    truncatable = True

    def __init__(self, refs: Mapping[str, Tokens], corrected: Mapping[str, Tokens], spoken_raw: Mapping[str, str],
                 normalize: Callable[[str], Tokens], params: Any) -> None:
        from asr_audit.text.align import AlignmentCache

        self.refs, self.corrected, self.params, self.cache = refs, corrected, params, AlignmentCache()
        self.ops = {c: [o for o in opcodes(refs[c], corrected[c]) if o[0] != "equal"] for c in refs}
        self.spoken_raw, self.normalize = spoken_raw, normalize

    def _verdicts(self, cid: str, ref: Tokens, corr: Tokens, hyp: Tokens | None, model: str) -> list[int | None]:
        from asr_audit.probes.predfiles.refdis import REF, ClipInput, mine_two_references

        clip = ClipInput(cid, ref, {model: hyp})
        edits = mine_two_references(clip, corr, [model], self.params, self.cache)
        return [None if e.verdicts.get(model) is None else int(e.verdicts[model] == REF) for e in edits]

    def units(self, clip_id: str) -> list[Unit]:
        return [Unit(clip_id, clip_id)] if self.ops[clip_id] else []

    def span_units(self, clip_id: str) -> list[Unit]:
        out = []
        raw_of = self._raw_index(clip_id)
        for i, (_, _, _, j1, j2) in enumerate(self.ops[clip_id]):
            if j2 > j1:
                span = (raw_of[j1], raw_of[j2 - 1] + 1)
            else:  # reference words the speaker never said: keep the boundary point
                at = raw_of[j1] if j1 < len(raw_of) else len(self.spoken_raw[clip_id].split())
                span = (at, at)
            out.append(Unit(f"{clip_id}#{i}", clip_id, span))
        return out

    def _raw_index(self, cid: str) -> list[int]:
        """For every corrected token, the index of the raw spoken word it comes from."""
        words = self.spoken_raw[cid].split()
        flat, owner = [], []
        for w_i, w in enumerate(words):
            toks = self.normalize(w)
            flat += list(toks)
            owner += [w_i] * len(toks)
        out = [0] * len(self.corrected[cid])
        last = 0
        for tag, i1, i2, j1, j2 in opcodes(self.corrected[cid], tuple(flat)):
            for i in range(i1, i2):
                j = j1 + (i - i1) * max(j2 - j1, 1) // max(i2 - i1, 1) if j2 > j1 else None
                last = owner[min(j, len(owner) - 1)] if j is not None and owner else last
                out[i] = last
        return out

    def judge(self, unit: Unit, hyp: Tokens | None, model: str) -> dict[str, int]:
        cid = unit.clip_id
        ref, corr = self.refs[cid], self.corrected[cid]
        if unit.span is None:
            vals = self._verdicts(cid, ref, corr, hyp, model)
            return {f"{cid}#{i}": v for i, v in enumerate(vals) if v is not None}
        i = int(unit.key.rsplit("#", 1)[1])
        k = 1
        _, i1, i2, j1, j2 = self.ops[cid][i]
        wref, wcorr = ref[max(i1 - k, 0): i2 + k], corr[max(j1 - k, 0): j2 + k]
        if hyp is None:
            return {}
        d_ref, d_corr = self.cache.wer(wref, hyp).errors, self.cache.wer(wcorr, hyp).errors
        return {} if d_ref == d_corr else {unit.key: int(d_ref < d_corr)}


class CourtesyJudge(_Judge):
    name = "courtesy"
    truncatable = True

    def __init__(self, eligible: Sequence[Any]) -> None:
        self.by_id = {e.clip_id: e for e in eligible}

    def units(self, clip_id: str) -> list[Unit]:
        return [Unit(clip_id, clip_id)] if clip_id in self.by_id else []

    def span_units(self, clip_id: str) -> list[Unit]:
        e = self.by_id.get(clip_id)
        return [Unit(clip_id, clip_id, (0, e.n_raw_words))] if e else []

    def judge(self, unit: Unit, hyp: Tokens | None, model: str) -> dict[str, int]:
        from asr_audit.probes.battery.courtesy import courtesy_present

        if hyp is None:
            return {}
        return {unit.key: int(not courtesy_present(self.by_id[unit.clip_id].opener, " ".join(hyp)))}


class OrthoJudge(_Judge):
    name = "ortho"

    def __init__(self, clips: Sequence[Any], families: Sequence[str] | None) -> None:
        self.clips, self.families = clips, families
        self.refs = {c.id: c.reference.strip() for c in clips}

    def judge_all(self, raw_hyps: Mapping[str, str | None], model: str) -> dict[str, int]:
        from asr_audit.corpus.predfiles import PredictionSet
        from asr_audit.corpus.records import PredictionFile, PredictionRow
        from pathlib import Path

        from asr_audit.probes.predfiles.ortho import switch_rate

        rows = {cid: PredictionRow(cid, ref, raw_hyps.get(cid)) for cid, ref in self.refs.items()}
        pf = PredictionFile(model, Path("battery"), "battery", "test", rows)
        pset = PredictionSet((pf,), self.refs, "battery", "battery", {model: pf})
        res = switch_rate(pset, self.families)
        return {f"{o.item.clip_id}#{o.item.family}#{o.item.start}": int(o.status == "same")
                for o in res.outcomes if o.status in ("same", "other")}


# --- the grid -------------------------------------------------------------------------------------

def _transcribe(backend: Any, clips: Sequence[Any], store: Any, name: str) -> tuple[dict[str, str], list[dict[str, str]]]:
    from asr_audit.store.transcribe import transcribe_corpus

    if not clips:
        return {}, []
    out = transcribe_corpus(backend, Corpus("battery", "test", "battery", tuple(clips)), store)
    fails = [{"model": name, "clip_id": f.clip_id, "reason": f.reason} for f in out.failures]
    return {r.clip_id: r.hypothesis for r in out.records}, fails


@dataclass(frozen=True, slots=True, kw_only=True)
class MeasureSettings:
    """What a measure reads of the battery's options: ``mining`` (refdis), ``families`` (ortho),
    ``gate_max_wer`` (masked)."""

    mining: RefdisParams
    families: Sequence[str] | None
    gate_max_wer: float


JudgeBuilder = Callable[[Corpus, ConditionContext, Mapping[str, Mapping[str, str]], Callable[[str], Tokens],
                         MeasureSettings, Sequence[str]], _Judge]


def _courtesy_judge(corpus: Corpus, ctx: ConditionContext, hyps0: Mapping[str, Mapping[str, str]],
                    normalize: Callable[[str], Tokens], settings: MeasureSettings, panel: Sequence[str]) -> _Judge:
    from asr_audit.probes.battery.courtesy import eligible_clips

    eligible = eligible_clips(corpus.clips, ctx.spoken, hyps0)
    ctx.spoken = {**ctx.spoken, **{e.clip_id: e.spoken for e in eligible}}
    return CourtesyJudge(eligible)


def _ortho_judge(corpus: Corpus, ctx: ConditionContext, hyps0: Mapping[str, Mapping[str, str]],
                 normalize: Callable[[str], Tokens], settings: MeasureSettings, panel: Sequence[str]) -> _Judge:
    return OrthoJudge(corpus.clips, settings.families)


def _refdis_judge(corpus: Corpus, ctx: ConditionContext, hyps0: Mapping[str, Mapping[str, str]],
                  normalize: Callable[[str], Tokens], settings: MeasureSettings, panel: Sequence[str]) -> _Judge:
    clips = corpus.clips
    rp = settings.mining
    refs = {c.id: normalize(c.reference) for c in clips}
    corrected = {cid: normalize(ctx.spoken[cid]) for cid in refs if cid in ctx.spoken}
    missing = [c for c in clips if c.id not in corrected]
    if missing:
        corrected.update(_consensus(missing, hyps0, panel, rp, normalize, refs))
    spoken_raw = {cid: ctx.spoken.get(cid) or " ".join(corrected[cid]) for cid in refs}
    ctx.spoken = {**ctx.spoken, **{cid: t for cid, t in spoken_raw.items() if cid not in ctx.spoken}}
    return RefdisJudge(refs, corrected, spoken_raw, normalize, rp)


def _consensus(clips: Sequence[Any], hyps0: Mapping[str, Mapping[str, str]], panel: Sequence[str], rp: Any,
               normalize: Callable[[str], Tokens], refs: Mapping[str, Tokens]) -> dict[str, Tokens]:
    """References corrected by the panel's consensus on the original audio (refdis mining)."""
    from asr_audit.probes.predfiles.inflation import apply_edits
    from asr_audit.probes.predfiles.refdis import ClipInput, mine

    if len(panel) < rp.min_panel:
        raise ConfigError(f"refdis needs the spoken text or a consensus panel of >= {rp.min_panel} models, got "
                          f"{len(panel)}; fix: pass --spoken, more --model entries, or probes.battery.min_panel")
    inputs = [ClipInput(c.id, refs[c.id], {m: (normalize(h[c.id]) if c.id in h else None) for m, h in hyps0.items()})
              for c in clips]
    mining = mine(inputs, list(panel), list(panel), replace(rp, loo=False))
    by_clip: dict[str, list] = defaultdict(list)
    for e in mining.edits:
        by_clip[e.clip_id].append(e)
    return {c.id: apply_edits(refs[c.id], by_clip.get(c.id, [])) for c in clips}


def run_battery(
    corpus: Corpus,
    backends: Mapping[str, Any],
    probe: str,
    conditions: str | Sequence[str],
    store: Any,
    *,
    seed: int = 0,
    spoken: Mapping[str, str] | None = None,
    conv_donors: Sequence[Any] = (),
    normalizer: str = "whisper",
    panel: Sequence[str] | None = None,
    mining: RefdisParams | None = None,
    families: Sequence[str] | None = None,
    gate_max_wer: float = 0.3,
    n_resamples: int = 1000,
    timings: Callable[[Any, str], Sequence[tuple[str, float, float]]] | None = None,
    progress: Callable[[str], None] | None = None,
    study: bool = True,
) -> BatteryResult:
    """Run ``probe`` over ``corpus`` under every condition for every backend (name -> backend).

    ``mining`` configures the ``refdis`` measure (default: the anchor preset), ``families`` the
    ``ortho`` measure (default: all), ``gate_max_wer`` the ``masked`` measure; see
    :class:`BatteryOptions` for the options record the CLI and the runner build them from.
    """
    from asr_audit.text.normalize import get_normalizer, normalize_many
    from asr_audit.text.text2num import with_text2num

    measure = MEASURES.get(probe)
    if not backends:
        raise ConfigError("the battery needs at least one model; fix: --model whisper-tiny.en,...")
    conds = parse_conditions(conditions)
    norm = with_text2num(get_normalizer(normalizer)) if measure.text2num else get_normalizer(normalizer)

    def normalize(text: str) -> Tokens:
        return tuple(normalize_many(norm, [text])[0].split())

    ctx = ConditionContext(corpus.clips, seed, dict(spoken or {}), tuple(conv_donors), timings)
    failures: list[dict[str, str]] = []
    hyps0: dict[str, dict[str, str]] = {}
    for name, b in backends.items():
        hyps0[name], f = _transcribe(b, corpus.clips, store, name)
        failures += [{**x, "condition": "original"} for x in f]
    settings = MeasureSettings(mining=mining or RefdisParams(), families=families, gate_max_wer=gate_max_wer)
    judge = None if measure.judge is None else measure.judge(corpus, ctx, hyps0, normalize, settings,
                                                             list(panel or backends))
    items: dict[str, dict[str, dict[str, int]]] = {}
    n_items: dict[str, int] = {}
    clusters = {c.id: " ".join(normalize(c.reference)) for c in corpus.clips}
    for cond in conds:
        if progress:
            progress(cond.name)
        if measure.condition is not None:
            items[cond.name], f = measure.condition(cond, corpus, backends, ctx, store, settings)
        else:
            items[cond.name], f = _run_condition(cond, corpus, backends, judge, ctx, store, normalize, hyps0)
        failures += f
        n_items[cond.name] = len({k for per in items[cond.name].values() for k in per})
    cells = []
    for cond in conds:
        for name in backends:
            vals = list(items[cond.name].get(name, {}).values())
            w = wilson(sum(vals), len(vals))
            n_fail = sum(1 for x in failures if x["model"] == name and x["condition"] == cond.name)
            cells.append(Cell(model=name, condition=cond.name, k=w.k, n=w.n, accept_ref=w.rate if w.n else None,
                              ci_low=w.low if w.n else None, ci_high=w.high if w.n else None, n_failed=n_fail))
    diffs = _differences(conds, list(backends), items, clusters, seed, n_resamples)
    dids = _dids(conds, list(backends), items, clusters, seed, n_resamples)
    rows: tuple[dict[str, Any], ...] = ()
    if measure.study is not None and study:
        rows = measure.study(backends, corpus, judge, ctx, items, store, hyps0, conds, normalize)
    return BatteryResult(probe=probe, corpus=corpus.name, conditions=tuple(c.name for c in conds),
                         models=tuple(backends), cells=tuple(cells), differences=tuple(diffs), did=tuple(dids),
                         seed=seed, n_items=n_items, failures=tuple(failures), study=rows, notes=(), items=items)


def _run_condition(cond: Condition, corpus: Corpus, backends: Mapping[str, Any], judge: _Judge, ctx: ConditionContext,
                   store: Any, normalize: Callable[[str], Tokens], hyps0: Mapping[str, Mapping[str, str]],
                   ) -> tuple[dict[str, dict[str, int]], list[dict[str, str]]]:
    from asr_audit.errors import AuditError

    failures: list[dict[str, str]] = []
    realized: list[tuple[Unit, Realized]] = []
    for clip in corpus.clips:
        units = judge.span_units(clip.id) if cond.truncate is not None else judge.units(clip.id)
        if isinstance(judge, OrthoJudge) and cond.truncate is None:
            units = [Unit(clip.id, clip.id)]
        for u in units:
            try:
                realized.append((u, realize(cond, clip, ctx, u.span)))
            except ConfigError:
                raise
            except AuditError as exc:
                failures += [{"model": m, "clip_id": u.key, "condition": cond.name, "reason": str(exc)} for m in backends]
    out: dict[str, dict[str, int]] = {}
    for name, b in backends.items():
        if cond.is_original:
            texts = dict(hyps0[name])
        else:
            texts, f = _transcribe(b, [r.clip for _, r in realized] + [r.donor for _, r in realized if r.donor], store, name)
            failures += [{**x, "condition": cond.name} for x in f]
        per: dict[str, int] = {}
        raw: dict[str, str | None] = {}
        for u, r in realized:
            text = texts.get(r.clip.id)
            if text is None:
                continue
            hyp = normalize(text)
            if r.donor is not None:
                donor_text = texts.get(r.donor.id)
                if donor_text is None:
                    continue
                orig = judge.corrected[u.clip_id] if isinstance(judge, RefdisJudge) else normalize(
                    ctx.spoken_text(u.clip_id, next(c.reference for c in corpus.clips if c.id == u.clip_id)))
                hyp = original_part(hyp, orig, normalize(donor_text), cond.donor.get("position"))
            raw[u.clip_id] = " ".join(hyp)
            if not isinstance(judge, OrthoJudge):
                per.update(judge.judge(u, hyp, name))
        if isinstance(judge, OrthoJudge):
            per = judge.judge_all(raw if not cond.is_original else texts, name)
        out[name] = per
    return out, failures


def _masked_condition(cond: Condition, corpus: Corpus, backends: Mapping[str, Any], ctx: ConditionContext,
                      store: Any, settings: MeasureSettings) -> tuple[dict[str, dict[str, int]], list[dict[str, str]]]:
    """Masked-entity recovery (:func:`asr_audit.probes.audio.masked.run_masked`) on the clips under ``cond``.

    The condition is applied first (clip ids kept). Words are aligned on the audio before the
    conditions that keep time (noise, reverb: the same samples at the same times), i.e. on the
    original or, with ``voice:``, on the re-synthesized clip (a new voice moves time); the masks go
    onto the degraded audio at those times, so an aligner that fails on noisy audio does not empty
    the condition. An item is 1 when an eligible masked target is recovered. Truncation and donors
    do not apply.
    """
    from asr_audit.errors import AuditError
    from asr_audit.probes.audio.masked import MaskParams, run_masked

    if cond.truncate is not None or cond.donor is not None:
        raise ConfigError(f"condition {cond.name!r} does not combine with the masked measure (it masks spans of the "
                          "clip itself); fix: use noise, reverb or voice conditions")
    timing_cond = cond.without("noise").without("reverb")
    keeps_time = timing_cond.name != cond.name
    clips, timing, failures = [], [], []
    for clip in corpus.clips:
        try:
            clips.append(replace(realize(cond, clip, ctx).clip, id=clip.id))
            if keeps_time:
                timing.append(replace(realize(timing_cond, clip, ctx).clip, id=clip.id))
        except AuditError as exc:
            failures += [{"model": m, "clip_id": clip.id, "condition": cond.name, "reason": str(exc)} for m in backends]
    mp = MaskParams(seed=ctx.seed, gate_max_wer=settings.gate_max_wer)
    res = run_masked(list(backends.values()), replace(corpus, clips=tuple(clips)), store, mp,
                     timing=replace(corpus, clips=tuple(timing)) if keeps_time else None)
    name_of = {b.spec: n for n, b in backends.items()}
    where = {r.item_id: f"{r.clip_id}#{r.start}-{r.end}" for r in res.recipes}  # stable across conditions
    out: dict[str, dict[str, int]] = {n: {} for n in backends}
    for it in res.items:
        if it.eligible:
            out[name_of[it.model]][where[it.item_id]] = int(it.recovered)
    failures += [{"model": "*", "clip_id": c, "condition": cond.name, "reason": r} for c, r in res.failures]
    return out, failures


def _differences(conds: Sequence[Condition], models: Sequence[str], items: Mapping[str, Any],
                 clusters: Mapping[str, str], seed: int, n_resamples: int) -> list[dict[str, Any]]:
    from asr_audit.stats.rng import model_rng

    out = []
    for cond in conds[1:]:
        for m in models:
            base, treat = items["original"].get(m, {}), items[cond.name].get(m, {})
            keys = sorted(set(base) & set(treat))
            d = paired_difference([base[k] for k in keys], [treat[k] for k in keys],
                                  [clusters[k.split("#")[0]] for k in keys], model_rng(seed, m + "\x1f" + cond.name),
                                  n_resamples)
            out.append({"model": m, "condition": cond.name, "baseline": "original", **d.to_dict()})
    return out


def _dids(conds: Sequence[Condition], models: Sequence[str], items: Mapping[str, Any], clusters: Mapping[str, str],
          seed: int, n_resamples: int) -> list[dict[str, Any]]:
    from asr_audit.stats.rng import model_rng

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
            d = difference_in_differences([a_t[k] for k in ka], [a_c[k] for k in ka], [clusters[k.split("#")[0]] for k in ka],
                                          [b_t[k] for k in kb], [b_c[k] for k in kb], [clusters[k.split("#")[0]] for k in kb],
                                          model_rng(seed, m + "\x1fdid\x1f" + c.name), n_resamples)
            out.append({"model": m, "voice": c.voice, "benchmark_audio": [plain_bench, plain_conv],
                        "voice_audio": [c.name, voiced_conv], **d.to_dict()})
    return out


def _study(backends: Mapping[str, Any], corpus: Corpus, judge: _Judge, ctx: ConditionContext, items: Mapping[str, Any],
           store: Any, hyps0: Mapping[str, Mapping[str, str]], conds: Sequence[Condition],
           normalize: Callable[[str], Tokens]) -> tuple[dict[str, Any], ...]:
    """The courtesy case study: full / truncated from the battery, attn-isolated and translate added."""
    from asr_audit.probes.battery.conditions import parse_condition
    from asr_audit.probes.battery.courtesy import courtesy_study

    if not isinstance(judge, CourtesyJudge):
        raise ConfigError("the courtesy study needs the courtesy measure")
    trunc = next((c for c in conds if c.truncate is not None and len(c.atoms) == 1), None)
    if trunc is not None:
        t_items = items[trunc.name]
    else:
        t_items, _ = _run_condition(parse_condition("truncate:1w0.25s"), corpus, backends, judge, ctx, store,
                                    normalize, hyps0)

    def presence(per: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, bool]]:
        return {m: {k: not v for k, v in vals.items()} for m, vals in per.items()}

    def window(clip: Any, e: Any) -> tuple[float, float]:
        words = ctx.word_timings(clip, e.spoken)
        return words[0][1], words[e.n_raw_words - 1][2]

    rows = courtesy_study(backends, corpus.clips, list(judge.by_id.values()), window,
                          presence(items["original"]), presence(t_items))
    return tuple(r.to_dict() for r in rows)


# --- the measures -----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Measure:
    """A battery measure: what an item is and how a condition is scored.

    ``judge`` builds the :class:`_Judge` that scores realized clips (from the corpus, the condition
    context, the original-audio hypotheses, the normalizer, the parameters and the panel); a
    measure with ``condition`` instead realizes and scores each condition itself (``masked``).
    ``text2num`` normalizes spelled numbers to digits; ``study`` adds case-study rows.
    """

    name: str
    judge: JudgeBuilder | None = None
    condition: Callable[..., tuple[dict[str, dict[str, int]], list[dict[str, str]]]] | None = None
    text2num: bool = False
    study: Callable[..., tuple[dict[str, Any], ...]] | None = None

    def __post_init__(self) -> None:
        if (self.judge is None) == (self.condition is None):
            raise ValueError(f"battery measure {self.name!r} needs exactly one of judge and condition")


MEASURES: Registry[Measure] = Registry(
    "battery measure", fix="use one of them (asr-audit battery --probe, or measure = ... in [probes.battery])")
MEASURES.register("refdis", Measure("refdis", judge=_refdis_judge, text2num=True))
MEASURES.register("courtesy", Measure("courtesy", judge=_courtesy_judge, study=_study))
MEASURES.register("ortho", Measure("ortho", judge=_ortho_judge))
MEASURES.register("masked", Measure("masked", condition=_masked_condition))


BATTERY_FIELDS = ("measure", "conditions", "donor_conv", "spoken", "models", "resamples", "preset", "min_ref_match",
                  "families", "study")


@dataclass(frozen=True, slots=True, kw_only=True)
class BatteryOptions:
    """The battery's options, from ``asr-audit battery`` flags or ``[probes.battery]`` /
    ``[probes.courtesy]`` (the courtesy measure with its case study).

    ``mining`` (built from ``preset`` and ``min_ref_match``) configures the refdis measure,
    ``families`` the ortho measure; ``models`` is read by the runner only (the CLI's ``--model``
    names its models).
    """

    measure: str = "refdis"
    conditions: tuple[str, ...]
    donor_conv: tuple[str, ...] = ()
    spoken: str | None = None
    models: tuple[str, ...] | None = None
    resamples: int = 1000
    study: bool = True
    mining: RefdisParams = field(default_factory=RefdisParams)
    families: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        check(self.measure in MEASURES, "measure", self.measure, f"is unknown (valid: {', '.join(MEASURES.names())})",
              f"use one of {', '.join(MEASURES.names())}")
        check(bool(self.conditions), "conditions", self.conditions, "names no condition",
              'name at least one, e.g. ["noise:10db", "donor:conv8s"]')
        try:
            parse_conditions(list(self.conditions))
        except OptionError:
            raise
        except ConfigError as exc:
            raise OptionError("conditions", self.conditions, f"does not parse ({exc})",
                              "write each condition in the grammar above") from None
        check(self.resamples >= 1, "resamples", self.resamples, "must be >= 1", "use 1 or more bootstrap resamples")
        if self.families is not None:
            from asr_audit.probes.predfiles.ortho import SwitchRateOptions

            SwitchRateOptions(families=self.families)  # checks the family names

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], surface: Surface, measure: str | None = None) -> BatteryOptions:
        """Options from flag or spec values (``None`` = not given); ``measure`` fixes the measure
        (``[probes.courtesy]``), which the values may then not name."""
        known = BATTERY_FIELDS if measure is None else tuple(f for f in BATTERY_FIELDS if f != "measure")
        r = Reader(values, surface, known, "battery" if measure is None else measure)
        mining = build(preset_params, surface, preset=r.choice("preset", tuple(PRESETS), "anchor"),
                       min_ref_match=r.number("min_ref_match", None))
        if not r.has("conditions"):
            raise surface.missing("conditions", 'e.g. conditions = ["noise:10db", "donor:conv8s"]')
        return build(cls, surface, measure=measure or r.text("measure", "refdis"),
                     conditions=r.names("conditions", ()), donor_conv=r.names("donor_conv", ()),
                     spoken=r.text("spoken", None), models=r.names("models", None), resamples=r.integer("resamples", 1000),
                     study=r.flag("study", True), mining=mining, families=r.names("families", None))
