"""Run the reference-disagreement probe over a prediction set: normalize, mine, score.

This is the library entry point behind ``asr-audit refdis``: it turns raw prediction files
into a :class:`~asr_audit.probes.predfiles.refdis_result.RefdisResult` (edits, accept-ref per model with
Wilson intervals, WER and WER inflation with bootstrap intervals), serializable to JSON with
every parameter, the normalizer and the seed recorded. The steps live in their own modules:
inputs (:mod:`~asr_audit.probes.predfiles.refdis_inputs`), mining (:mod:`~asr_audit.probes.predfiles.refdis`),
scoring (:mod:`~asr_audit.probes.predfiles.refdis_score`), WER inflation
(:mod:`~asr_audit.probes.predfiles.inflation`) and the result record (:mod:`~asr_audit.probes.predfiles.refdis_result`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from asr_audit.corpus.predfiles import PredictionSet, gc_paused
from asr_audit.errors import ConfigError
from asr_audit.probes.predfiles.adequacy import base_counts, panel_adequacy
from asr_audit.probes.predfiles.inflation import Inflation, inflation_columns, wer_inflations
from asr_audit.probes.predfiles.refdis import ClipInput, Edit, Mining, RefdisParams, mine, mine_two_references
from asr_audit.probes.predfiles.refdis_columns import (
    Columns,
    StreamMiss,
    Workers,
    columns_from_run,
    isolated_in_columns,
    run_refdis_columns,
    stream_columns,
)
from asr_audit.probes.predfiles.refdis_inputs import prepare_clips
from asr_audit.probes.predfiles.refdis_options import check_panel, check_unique_panel
from asr_audit.probes.predfiles.refdis_result import RefdisResult
from asr_audit.probes.predfiles.refdis_score import assemble_result, clips_with_edits
from asr_audit.probes.predfiles.verified import Verify, verify_mining
from asr_audit.text.align import AlignmentCache, Opcode
from asr_audit.text.persist import TextCache, fingerprint


def run_refdis(
    preds: PredictionSet,
    panel: Sequence[str],
    params: RefdisParams,
    *,
    normalizer: str = "whisper",
    models: Sequence[str] | None = None,
    corrected: Mapping[str, str] | None = None,
    seed: int = 0,
    n_resamples: int = 1000,
    text2num: bool = True,
    cache: AlignmentCache | None = None,
    normalize_workers: int = 1,
    merge_compounds: bool = False,
    language: str = "en",
    text_cache: TextCache | None = None,
    verify: Verify | None = None,
) -> RefdisResult:
    """Reference disagreement over ``preds`` with ``panel`` (or a corrected reference set).

    ``normalize_workers > 1`` normalizes new strings in that many forked processes (see
    :func:`~asr_audit.text.normalize.normalize_many`); the result is the same.
    ``merge_compounds`` counts WER as the Open ASR Leaderboard does (kaldialign's
    ``merge_compounds=True``); mining is unchanged. ``language`` (a primary subtag) is the
    language ``text2num`` reads numbers in. Under the ``anchor`` preset the normalizer runs
    inside the public code's parenthesis and CJK steps (:mod:`asr_audit.text.anchor`).
    ``text_cache`` (from :func:`refdis_text_cache` with the same normalizer, preset, text2num and
    language) reads normalized texts and alignments of earlier runs on the same files and writes
    this run's back; the result is the same with or without it. ``verify`` (a verification step,
    :data:`~asr_audit.probes.predfiles.verified.Verify`) labels the mined edits: each model entry
    then has ``verified`` (accept-ref split into copying and hearing better, and the WER inflation
    with only reference-wrong edits applied).
    """
    with gc_paused():  # millions of token tuples and alignments, no reference cycles
        norm = run_normalizer(normalizer, params.preset)
        models = list(models) if models is not None else preds.models
        for m in [*panel, *models]:
            preds.file(m)  # raises a ConfigError naming the available models
        check_unique_panel(panel)
        cache = AlignmentCache() if cache is None else cache  # an empty cache is falsy (__len__)
        known: dict[str, str] | None = None
        files = [preds.file(m) for m in dict.fromkeys([*models, *panel])]
        if text_cache is not None:
            known = {}
            text_cache.load([(f.model, f.path) for f in files], known, cache)
        inputs = _Inputs(
            normalize=norm, text2num=text2num, cache=cache, workers=normalize_workers, language=language, known=known
        )
        if corrected is None:
            clips, mining = _mine_panel(preds, panel, models, params, inputs)
            mode = "panel"
        else:
            clips, mining = _mine_corrected(preds, corrected, models, params, inputs)
            mode, panel = "two-reference", []
        result = score_mining(
            clips,
            mining,
            models=models,
            panel=panel,
            params=params,
            cache=cache,
            normalizer=normalizer_record(norm, text2num, language),
            mode=mode,
            source=preds.source,
            seed=seed,
            n_resamples=n_resamples,
            merge_compounds=merge_compounds,
            verify=verify,
        )
        if text_cache is not None and known is not None:
            hyps = {(f.model, f.path): [r.hypothesis for r in f.rows.values()] for f in files}
            refs = {(f.model, f.path): [r.reference for r in f.rows.values()] for f in files}
            text_cache.save(hyps, refs, known, cache)
            if corrected is None:  # the whole set as columns, for a warm run's fast path (run_refdis_warm)
                everyone = list(dict.fromkeys([*models, *panel]))
                key = text_cache.set_key([(f.model, f.path) for f in preds.files], preds.dataset)
                text_cache.write_set(key, columns_from_run(preds.models, clips, everyone, cache).to_data())
        return result


@dataclass(frozen=True, slots=True)
class WarmSet:
    """A prediction set read whole from the persistent text cache (:func:`load_warm_set`)."""

    columns: Columns
    key: str
    source: str
    text_cache: TextCache

    def isolated_panel_members(self, panel: Sequence[str]) -> list[str]:
        """:func:`isolated_panel_members` of the set."""
        return isolated_in_columns(self.columns, panel)


def load_warm_set(
    path: str | Path,
    dataset: str | None,
    text_cache: TextCache,
    *,
    panel: Sequence[str],
    models: Sequence[str] | None,
) -> WarmSet | None:
    """The set under ``path`` as the columns an earlier run stored, if its files' bytes are
    unchanged and the columns hold every model this run names; ``None`` otherwise (run the plain
    path). Raises what :func:`~asr_audit.corpus.predfiles.load_predictions` raises for a bad
    folder or ``dataset``."""
    from asr_audit.corpus.predfiles import select_prediction_files

    found, name = select_prediction_files(path, dataset)
    key = text_cache.set_key([(n.model, p) for p, n in found], name)
    cols = Columns.from_data(text_cache.read_set(key))
    if cols is None or cols.models != [n.model for _, n in found]:
        return None
    named = [*panel, *(cols.models if models is None else models)]
    if any(m in cols.models and m not in cols.hyps for m in named):
        return None  # a model the earlier run did not normalize
    text_cache.used_set(len(found))
    return WarmSet(cols, key, str(Path(path)), text_cache)


def run_refdis_streamed(
    path: str | Path,
    dataset: str | None,
    panel: Sequence[str],
    params: RefdisParams,
    *,
    text_cache: TextCache,
    normalizer: str = "whisper",
    models: Sequence[str] | None = None,
    seed: int = 0,
    n_resamples: int = 1000,
    text2num: bool = True,
    merge_compounds: bool = False,
    language: str = "en",
    workers: int = 1,
    warn: Callable[[list[str]], None] | None = None,
    verify: Verify | None = None,
) -> RefdisResult:
    """:func:`run_refdis` in consensus mode on the prediction folder ``path``, read file by file
    into columns (:func:`~asr_audit.probes.predfiles.refdis_columns.stream_columns`): no row
    objects are kept, and normalizing, aligning, edit distances and mining run in ``workers``
    forked processes. The same result; the columns are then stored in ``text_cache`` for a warm run
    (:func:`load_warm_set`). ``warn`` is called with the isolated panel members
    (:func:`isolated_panel_members`) once the files are read.

    Raises :class:`~asr_audit.probes.predfiles.refdis_columns.StreamMiss` when reading fails in
    any way (a bad file, a normalizer crash, two references for a clip): the plain path
    (``load_predictions`` + :func:`run_refdis`) then reports it in its own words.
    """
    from asr_audit.corpus.predfiles import select_prediction_files
    from asr_audit.text.text2num import with_text2num

    norm = run_normalizer(normalizer, params.preset)
    composed = with_text2num(norm, language) if text2num else norm
    named = None if models is None else list(dict.fromkeys([*models, *panel]))
    with gc_paused(), Workers(workers, composed) as pool:
        try:
            cols = stream_columns(path, dataset, pool, named)
        except Exception as exc:
            raise StreamMiss(f"{type(exc).__name__}: {exc}") from exc
        if warn is not None:
            warn(isolated_in_columns(cols, [p for p in panel if p in cols.models]))
        result = run_refdis_columns(
            cols,
            panel,
            params,
            normalizer=normalizer_record(norm, text2num, language),
            source=str(Path(path)),
            models=models,
            seed=seed,
            n_resamples=n_resamples,
            merge_compounds=merge_compounds,
            workers=pool,
            mine_workers=workers,
            verify=verify,
        )
    if result is None:  # every named model was normalized: unreachable
        raise AssertionError("the streamed set lacks a model's texts")
    found, name = select_prediction_files(path, dataset)
    text_cache.write_set(text_cache.set_key([(n.model, p) for p, n in found], name), cols.to_data())
    return result


def run_refdis_warm(
    warm: WarmSet,
    panel: Sequence[str],
    params: RefdisParams,
    *,
    normalizer: str = "whisper",
    models: Sequence[str] | None = None,
    seed: int = 0,
    n_resamples: int = 1000,
    text2num: bool = True,
    merge_compounds: bool = False,
    language: str = "en",
    workers: int = 1,
    verify: Verify | None = None,
) -> RefdisResult:
    """:func:`run_refdis` in consensus mode on a set read by :func:`load_warm_set` with the same
    normalizer settings: the same result, without reading the files (results it computes are
    written back). ``workers > 1`` mines a large candidate set in that many forked processes (the
    CLI's warm runs stay serial: on a busy 2-core machine forking cost CPU and gained no wall time,
    ``docs/scale.md``)."""
    norm = run_normalizer(normalizer, params.preset)
    with gc_paused():
        result = run_refdis_columns(
            warm.columns,
            panel,
            params,
            normalizer=normalizer_record(norm, text2num, language),
            source=warm.source,
            models=models,
            seed=seed,
            n_resamples=n_resamples,
            merge_compounds=merge_compounds,
            mine_workers=workers,
            verify=verify,
        )
    if result is None:  # load_warm_set checked the models: unreachable
        raise AssertionError("the warm set lacks a model's texts")
    if warm.columns.changed:
        warm.text_cache.write_set(warm.key, warm.columns.to_data())
    return result


def normalizer_record(norm: Any, text2num: bool, language: str) -> dict[str, Any]:
    """The ``normalizer`` record of a result: the normalizer's description, text2num, the language if not English."""
    return {**norm.describe(), "text2num": text2num, **({} if language == "en" else {"language": language})}


def score_mining(
    clips: Sequence[ClipInput],
    mining: Mining,
    *,
    models: Sequence[str],
    panel: Sequence[str],
    params: RefdisParams,
    cache: AlignmentCache,
    normalizer: dict[str, Any],
    mode: str,
    source: str,
    seed: int,
    n_resamples: int,
    merge_compounds: bool,
    verify: Verify | None = None,
) -> RefdisResult:
    """Score every model on a mining's edits: accept-ref, WER and WER inflation with one stream of
    resamples for the run (every model's interval uses the same resamples of the clips); in
    consensus mode, the panel's adequacy; with ``verify``, the verified scores."""
    scored = {m: mining.scored_edits(m) for m in models}

    def inflate(edits: Mapping[str, Sequence[Edit]]) -> dict[str, Inflation]:
        rng = np.random.default_rng(seed)  # the same resamples for the verified inflation
        return wer_inflations(clips, edits, cache, rng, n_resamples, merge_compounds=merge_compounds)

    inflations = inflate(scored)
    with_edits = clips_with_edits(mining)
    verification, verified = verify_mining(verify, mining, scored, inflate) if verify is not None else (None, {})
    adequacy = None
    if mode == "panel":
        everyone = list(dict.fromkeys([*models, *panel]))
        rows = [c for c in clips if c.ref]
        base = {m: inflation_columns(rows, m, [], cache, merge_compounds=merge_compounds)[0] for m in everyone}
        adequacy = panel_adequacy(
            [c for c in rows if c.clip_id in with_edits],
            mining.edits,
            mining.loo_edits,
            scored,
            panel,
            models,
            base_counts(base, [c.clip_id for c in rows], with_edits),
            partial(_opcodes_of, cache),
        )
    return assemble_result(
        mining,
        scored,
        inflations,
        models=models,
        panel=panel,
        params=params,
        normalizer=normalizer,
        mode=mode,
        source=source,
        n_clips=len(clips),
        seed=seed,
        n_resamples=n_resamples,
        references={c.clip_id: " ".join(c.ref) for c in clips if c.clip_id in with_edits},
        merge_compounds=merge_compounds,
        verification=verification,
        verified_inflation=verified,
        adequacy=adequacy,
    )


def _opcodes_of(cache: AlignmentCache, model: str, clip: ClipInput) -> tuple[Opcode, ...]:
    hyp = clip.hyps[model]
    assert hyp is not None  # called only where the model answered
    return cache.pair_opcodes(clip.ref, hyp)


def run_normalizer(normalizer: str, preset: str | None) -> Any:
    """The normalizer a refdis run uses: the registered one, inside the public code's parenthesis
    and CJK steps under the ``anchor`` preset (:mod:`asr_audit.text.anchor`)."""
    from asr_audit.text.anchor import anchor_normalizer
    from asr_audit.text.normalize import get_normalizer

    norm = get_normalizer(normalizer)
    return anchor_normalizer(norm) if preset == "anchor" else norm


def refdis_text_cache(
    normalizer: str, preset: str | None, *, text2num: bool = True, language: str = "en", root: str | Path | None = None
) -> TextCache:
    """The persistent text cache :func:`run_refdis` reads and writes for these settings.

    ``root`` defaults to ``<cache dir>/text`` (``$ASR_AUDIT_CACHE_DIR``); the normalizer is keyed
    as the run uses it (wrapped in the public code's steps under the ``anchor`` preset).
    """
    from asr_audit.paths import cache_dir

    key = fingerprint(run_normalizer(normalizer, preset).describe(), text2num=text2num, language=language)
    return TextCache(cache_dir() / "text" if root is None else root, key)


def isolated_panel_members(preds: PredictionSet, panel: Sequence[str]) -> list[str]:
    """Panel models that share no answered clip id with the rest of the panel: such a member never
    votes beside the others, so the panel is smaller than it looks (usually a file of another corpus)."""
    answered = {m: {c for c, r in preds.file(m).rows.items() if r.hypothesis is not None} for m in panel}
    return [
        m
        for m in panel
        if len(panel) > 1 and answered[m].isdisjoint(set().union(*(answered[o] for o in panel if o != m)))
    ]


@dataclass(frozen=True, slots=True, kw_only=True)
class _Inputs:
    """How a run turns prediction rows into mining inputs (one normalizer, one cache)."""

    normalize: Any
    text2num: bool
    cache: AlignmentCache
    workers: int
    language: str = "en"
    known: dict[str, str] | None = None  # raw -> normalized texts of the persistent cache (grown here)

    def clips(
        self, preds: PredictionSet, models: Sequence[str], references: Mapping[str, str] | None = None
    ) -> list[ClipInput]:
        return prepare_clips(
            preds,
            models,
            self.normalize,
            self.text2num,
            references=references,
            cache=self.cache,
            workers=self.workers,
            language=self.language,
            known=self.known,
        )


def _mine_panel(
    preds: PredictionSet, panel: Sequence[str], models: Sequence[str], params: RefdisParams, inputs: _Inputs
) -> tuple[list[ClipInput], Mining]:
    """Consensus mode: the panel's supermajority mines the edits, every model is judged on them."""
    check_panel(params, panel, models)
    everyone = list(dict.fromkeys([*models, *panel]))
    clips = inputs.clips(preds, everyone)
    return clips, mine(clips, panel, models, params, inputs.cache)


def _mine_corrected(
    preds: PredictionSet, corrected: Mapping[str, str], models: Sequence[str], params: RefdisParams, inputs: _Inputs
) -> tuple[list[ClipInput], Mining]:
    """Two-reference mode: the edits are the diff of each reference and its corrected version."""
    shared = {cid: preds.references[cid] for cid in preds.references if cid in corrected}
    if not shared:
        raise ConfigError(
            "no clip id of the corrected references matches the prediction files; fix: use the same clip ids in both"
        )
    clips = inputs.clips(preds, models, shared)
    fixed = inputs.clips(preds, [], {c: corrected[c] for c in shared})
    edits = []
    for clip, fx in zip(clips, fixed):
        edits.extend(mine_two_references(clip, fx.ref, models, params, inputs.cache))
    return clips, Mining(tuple(edits), {})
