"""The refdis probe as one object: ``asr-audit refdis``, ``[probes.refdis]`` and :func:`asr_audit.api.refdis` run it.

The probe chooses the engine, so no front door does (issue 28): on prediction files read as they are
(:attr:`~asr_audit.probes.core.probe.PredictionFiles.plain`) with the text cache on, the set is read back
as columns from the cache (a warm run, :func:`~asr_audit.probes.predfiles.refdis_run.run_refdis_warm`) or
streamed file by file into columns (:func:`~asr_audit.probes.predfiles.refdis_run.run_refdis_streamed`);
otherwise, and wherever those report a miss, the prediction set is read and
:func:`~asr_audit.probes.predfiles.refdis_run.run_refdis` runs on it. Every engine gives the same result
(tests/probes/predfiles/test_refdis_columns.py).

The mined edits are verified by at most one source: a calibration folder's planted truth (``truth``,
turned into a step by the front door's :attr:`~asr_audit.probes.core.probe.ProbeInputs.verify_truth`:
``calib`` sits above the probes), people's labels (``labels``), or other models scoring each edit on
the audio (``verify_with``: mined once, verified, then run again with the verification as the run's
step). The probe sits in ``probes/audio/`` for that last one (``verify_edits``); the rest of refdis
lives in ``probes/predfiles/``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from asr_audit.corpus.predfiles import PredictionSet, load_references
from asr_audit.errors import AuditError, ConfigError, InputFileError
from asr_audit.options import CLI, TOML, Surface
from asr_audit.probes.core.probe import Probe, ProbeInputs, register_probe
from asr_audit.probes.predfiles.refdis_columns import StreamMiss
from asr_audit.probes.predfiles.refdis_options import EXAMPLES, FIELDS, FLAGS, RUN_FIELDS, VERIFY_FIELDS, RefdisOptions
from asr_audit.probes.predfiles.refdis_result import RefdisResult
from asr_audit.probes.predfiles.refdis_run import (
    isolated_panel_members,
    load_warm_set,
    refdis_text_cache,
    run_refdis,
    run_refdis_streamed,
    run_refdis_warm,
)
from asr_audit.probes.predfiles.verified import Verify

if TYPE_CHECKING:
    import numpy as np

    from asr_audit.probes.audio.verify_edits import AudioVerification
    from asr_audit.probes.predfiles.corrected import CorrectedClip

# The verifications (labels, audio) and the cleaned benchmark are imported where a run asks for
# them: a warm run needs none, and their imports (the label store, the backends, the audio reader)
# cost it a tenth of its time.

__all__ = ["REFDIS", "REFDIS_PARAMS", "RefdisProbe", "RefdisRun"]

REFDIS_PARAMS = (*FIELDS, *VERIFY_FIELDS, *RUN_FIELDS)


@dataclass(frozen=True, slots=True)
class RefdisRun:
    """One refdis run: its ``result``, the ``audio`` verification of its edits (``verify_with``), and
    ``data``, the JSON-able dictionary the report, ``results.json`` and ``--json`` write (the
    result's, with the audio scores and the labels' summary where they apply)."""

    result: RefdisResult
    data: dict[str, Any]
    audio: AudioVerification | None = None


class RefdisProbe(Probe[RefdisOptions, RefdisRun]):
    """Reference disagreement with a consensus panel (or corrected references), and WER inflation."""

    name = "refdis"
    params = REFDIS_PARAMS
    description = "reference disagreement with a consensus panel, and WER inflation"
    flags = FLAGS
    examples = EXAMPLES

    def options_from(self, values: Mapping[str, Any], surface: Surface) -> RefdisOptions:
        return RefdisOptions.from_mapping(values, surface)

    def check(self, options: RefdisOptions, inputs: ProbeInputs, surface: Surface) -> None:
        """A spec's panel against ``min_panel`` and leave-one-out's quorum (the verb's and the API's
        panel is checked by the run, in its own words), the verb's panel or corrected references,
        and audio for ``verify_with``."""
        if surface.kind == CLI and not inputs.panel and options.corrected_refs is None:
            raise ConfigError(
                f"refdis needs {surface.name('panel')} a,b,c (consensus mode) or {surface.name('corrected_refs')} "
                "FILE (two-reference mode)"
            )
        if surface.kind == TOML:
            panel = inputs.panel
            if len(panel) < options.mining.min_panel:
                raise ConfigError(
                    f"corpus {inputs.corpus!r}: the panel has {len(panel)} model(s) "
                    f"({', '.join(panel) or 'none'}) but min_panel is {options.mining.min_panel}; "
                    f"fix: list more [panel] models or set {surface.name('min_panel')} lower"
                )
            options.check_panel(len(panel), surface, inputs.corpus)
        if options.verify_with and options.audio_root is None and inputs.clips is None:
            raise ConfigError(
                f"corpus {inputs.corpus!r}: {surface.name('verify_with')} scores each edit on its audio, and the "
                f"corpus has none; fix: set {surface.name('audio_root')} to the folder of the clips' audio"
            )

    def run(self, inputs: ProbeInputs, options: RefdisOptions) -> RefdisRun:
        verify = self.verification(inputs, options)  # read before the work: a bad folder or file fails now
        result = self.mine(inputs, options, verify)
        audio = None
        if options.verify_with:  # verified on the audio, then run again with the verification as its step
            audio = self.audio_verification(inputs, options, result)
            result = self.mine(inputs, options, audio.step())
        data = result.to_dict()
        if audio is not None:
            # imported on use (see the note at the imports)
            from asr_audit.probes.audio.verify_edits import with_audio_details

            data = with_audio_details(data, audio)
        if options.labels is not None:
            # imported on use (see the note at the imports)
            from asr_audit.probes.predfiles.verified_labels import with_labels_summary

            data = with_labels_summary(data, inputs.resolve(options.labels))
        return RefdisRun(result, data, audio)

    def to_dict(self, result: RefdisRun) -> dict[str, Any]:
        return result.data

    def verification(self, inputs: ProbeInputs, options: RefdisOptions) -> Verify | None:
        """The step that verifies the mined edits (``truth`` or ``labels``:
        :func:`~asr_audit.probes.predfiles.verified_labels.edits_verify`), or ``None``."""
        if options.truth is None and options.labels is None:
            return None
        # imported on use (see the note at the imports)
        from asr_audit.probes.predfiles.verified_labels import edits_verify

        return edits_verify(inputs, options.truth, options.labels)

    def mine(self, inputs: ProbeInputs, options: RefdisOptions, verify: Verify | None = None) -> RefdisResult:
        """The run's result with the verification step ``verify``, by the fastest engine that applies."""
        files = inputs.files
        # the text cache's entries are keyed by the files' bytes, not by how they were read: only
        # prediction files read as they are use it
        cached = options.text_cache and files is not None and files.plain
        if cached and options.corrected_refs is None:
            result = self._columns(inputs, options, verify)
            if result is not None:
                return result
        preds = inputs.predictions
        refs = self._corrected(preds, inputs, options)
        panel = list(inputs.panel)
        self._warn_isolated(inputs, isolated_panel_members(preds, [p for p in panel if p in preds.models]))
        persist = (
            refdis_text_cache(
                options.normalizer_for(inputs.normalizer),
                options.mining.preset,
                text2num=options.text2num,
                language=options.language,
            )
            if cached
            else None
        )
        result = run_refdis(
            preds,
            panel,
            options.mining,
            models=None if options.models is None else list(options.models),
            corrected=refs,
            seed=inputs.seed,
            normalize_workers=_workers(options),
            text_cache=persist,
            verify=verify,
            **options.run_settings(inputs.normalizer),
        )
        if persist is not None:
            inputs.say(persist.stats().describe())
        return result

    def _columns(self, inputs: ProbeInputs, options: RefdisOptions, verify: Verify | None) -> RefdisResult | None:
        """refdis on the set as columns: read back from the text cache (a warm run), else read file
        by file. ``None`` when the plain path must run: the settings or the files have an error it
        reports in its own words and order."""
        files = inputs.files
        assert files is not None  # mine() checked
        panel = list(inputs.panel)
        models = None if options.models is None else list(options.models)
        try:
            name = options.normalizer_for(inputs.normalizer)
            persist = refdis_text_cache(
                name, options.mining.preset, text2num=options.text2num, language=options.language
            )
            warm = load_warm_set(files.path, files.dataset, persist, panel=panel, models=models)
        except (AuditError, OSError):
            return None
        common: dict[str, Any] = {
            "normalizer": name,
            "models": models,
            "seed": inputs.seed,
            "n_resamples": options.resamples,
            "text2num": options.text2num,
            "merge_compounds": options.merge_compounds,
            "language": options.language,
            "verify": verify,
        }
        if warm is not None:  # the files are unchanged since a run that stored them as columns
            self._warn_isolated(inputs, warm.isolated_panel_members([p for p in panel if p in warm.columns.models]))
            result = run_refdis_warm(warm, panel, options.mining, **common)  # serial: forking measured no gain here
        else:
            try:
                result = run_refdis_streamed(
                    files.path,
                    files.dataset,
                    panel,
                    options.mining,
                    text_cache=persist,
                    workers=_workers(options),
                    warn=lambda members: self._warn_isolated(inputs, members),
                    **common,
                )
            except StreamMiss:
                return None
        inputs.say(persist.stats().describe())
        return result

    @staticmethod
    def _corrected(preds: PredictionSet, inputs: ProbeInputs, options: RefdisOptions) -> dict[str, str] | None:
        """The corrected references of two-reference mode (``corrected_refs``), or ``None``."""
        if options.corrected_refs is None:
            return None
        path = inputs.resolve(options.corrected_refs)
        refs = load_references(path)
        if not any(c in preds.references for c in refs):
            raise InputFileError(
                path,
                f"no clip id matches the prediction files of {preds.source} "
                f"(here first {next(iter(refs))!r}, there first {next(iter(preds.references))!r})",
                "use the clip ids of the prediction files",
            )
        return refs

    @staticmethod
    def _warn_isolated(inputs: ProbeInputs, members: Sequence[str]) -> None:
        for m in members:
            inputs.say(
                f"warning: panel model {m} shares no answered clip id with the other panel models; "
                "it never votes beside them (is its file from another corpus?)"
            )

    def audio_verification(
        self, inputs: ProbeInputs, options: RefdisOptions, result: RefdisResult
    ) -> AudioVerification:
        """The edits of ``result`` verified on the audio (``probes/audio/verify_edits.py``): the
        corpus's own clips where it has audio and no ``audio_root`` is set, else the files under
        ``audio_root``; the models under test are the scored models outside the panel."""
        # imported on use (see the note at the imports)
        from asr_audit.audio.io import load_audio  # (the same note)
        from asr_audit.probes.audio.verify_edits import MARGIN, summary_line, verify_run

        load = None
        if inputs.clips is not None and options.audio_root is None:
            by_id = {c.id: c for c in inputs.clips}

            def load(cid: str) -> np.ndarray:
                if cid not in by_id:
                    raise ConfigError(f"corpus {inputs.corpus!r}: clip {cid!r} has no audio in the corpus")
                return load_audio(by_id[cid])

        audio = verify_run(
            result,
            options.verify_with,
            options.audio_root,
            result.references,
            tested=[s.model for s in result.scores if s.model not in result.panel],
            margin=MARGIN if options.verify_margin is None else options.verify_margin,
            load=load,
        )
        inputs.say(summary_line(audio))
        return audio

    def corrected(self, inputs: ProbeInputs, options: RefdisOptions, run: RefdisRun) -> tuple[list[CorrectedClip], str]:
        """The cleaned benchmark of ``run`` (``asr-audit refdis --write-corrected``): every clip with
        the panel's corrections, each verified on its audio by the one ``verify_with`` backend, if set;
        and how its texts are written."""
        # imported on use (see the note at the imports)
        from asr_audit.probes.audio.verify import cleaned_benchmark

        return cleaned_benchmark(
            inputs.predictions,
            run.result,
            verify_with=options.verify_with[0] if options.verify_with else None,
            audio_root=options.audio_root,
        )


def _workers(options: RefdisOptions) -> int:
    return options.normalize_workers or (os.cpu_count() or 1)


REFDIS: RefdisProbe = register_probe(RefdisProbe())
