"""The refdis probe's options: one record, built from ``asr-audit refdis`` flags or ``[probes.refdis]``.

The same :meth:`RefdisOptions.from_mapping` reads both surfaces (see :mod:`asr_audit.options`),
so a flag and a spec field with the same value give the same record, and a bad value is named
as the user wrote it (``--min-panel`` or ``audit.toml: [probes.refdis] min_panel``).

Besides mining, the record says how texts are compared: ``merge_compounds`` (WER counted as the
Open ASR Leaderboard does, ``--merge-compounds`` / ``merge_compounds = true``) and ``language``
(the corpus language, kept as its primary subtag: ``en-GB`` is English), which decides the
normalizer and the ``text2num`` step (:meth:`RefdisOptions.normalizer_for`,
:attr:`RefdisOptions.text2num`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from asr_audit.errors import ConfigError
from asr_audit.options import CLI, CliFlag, Reader, Surface, build, check, flag_table, refuse, split_names
from asr_audit.probes.core.flags import LANGUAGE, MODELS, RESAMPLES
from asr_audit.probes.predfiles.refdis import PRESETS, RefdisParams, loo_quorum, preset_params
from asr_audit.text.languages import ENGLISH_ONLY, primary_language, scoring_normalizer

__all__ = [
    "ENGLISH_ONLY",
    "EXAMPLES",
    "FIELDS",
    "FLAGS",
    "MINING_FIELDS",
    "RUN_FIELDS",
    "WRITE_CORRECTED",
    "RefdisOptions",
    "check_loo_panel",
    "check_panel",
    "check_unique_panel",
    "check_verifications",
    "check_write_corrected",
    "primary_language",
]

MINING_FIELDS = (
    "majority",
    "include_middle",
    "min_run_len",
    "min_ref_match",
    "min_consensus_cer",
    "min_panel",
    "loo",
    "min_confidence",
)
FIELDS = ("preset", *MINING_FIELDS, "resamples", "published", "merge_compounds", "language", "truth", "labels")
#: audio verification of the edits (``probes/audio/verify_edits.py``): verifiers, where the audio
#: is (prediction-file corpora; an audio corpus's clips carry their own paths), the margin
VERIFY_FIELDS = ("verify_with", "audio_root", "verify_margin")
#: what the run scores and how it reads: the models scored (default every model), the corrected
#: references of two-reference mode (instead of a panel), the persistent text cache, the processes
#: normalizing a large set (0: one per core)
RUN_FIELDS = ("models", "corrected_refs", "text_cache", "normalize_workers")


#: the command-line flag of every option (``asr-audit refdis``; ``gate`` and ``calib score`` take
#: some of them): one declaration, one help text
FLAGS = flag_table(
    CliFlag(
        "preset",
        str,
        "anchor",
        "anchor (the public code's defaults: boundary edits, 0.8) | paper (0.75, interior edits).",
    ),
    CliFlag("majority", float, None, "Panel supermajority share."),
    CliFlag(
        "include_middle", bool, None, "Keep interior deletion/substitution runs.", ("--include-middle/--boundary-only",)
    ),
    CliFlag("min_run_len", int, None, "Shortest edit run mined, in tokens (default: the preset's)."),
    CliFlag("min_ref_match", float, None, "Competence gate: share of reference tokens a model must reproduce."),
    CliFlag("min_consensus_cer", float, None, "Drop edits whose panel rendering is this close (CER) to the reference."),
    CliFlag("min_panel", int, None, "Smallest panel that mines (default: the preset's)."),
    CliFlag(
        "min_confidence",
        float,
        None,
        "Keep only edits whose confidence (0-1: panel votes, rendering agreement, distance from the reference) is at "
        "least this; default: keep all (calibrated operating point: 0.4, docs/calibration.md).",
    ),
    CliFlag(
        "loo",
        bool,
        True,
        "Score panel members leave-one-out (the paper's rule; --no-loo: the public code's).",
        ("--loo/--no-loo",),
    ),
    RESAMPLES,
    CliFlag(
        "merge_compounds",
        bool,
        False,
        "Count WER as the Open ASR Leaderboard does: a compound split on one side and joined on the other is no "
        "error (kaldialign merge_compounds).",
        ("--merge-compounds/--no-merge-compounds",),
    ),
    LANGUAGE,
    CliFlag(
        "truth",
        Path,
        None,
        "A calibration folder (asr-audit calib build) whose planted truth verifies the mined edits: copying is then "
        "judged on verified reference errors (docs/refdis.md).",
    ),
    CliFlag(
        "labels",
        Path,
        None,
        "Labels file of asr-audit annotate: the miner's precision and accept-ref on verified edits (docs/annotate.md).",
    ),
    CliFlag(
        "verify_with",
        str,
        None,
        "Comma-separated scoring backends (never a tested model) that verify each edit on the audio (needs "
        "--audio-root): edits labelled reference-wrong / reference-right, accept-ref on verified edits per model; "
        "with --write-corrected (one backend) each correction also gets its audio's vote.",
        parse=split_names,
    ),
    CliFlag("audio_root", Path, None, "Folder of the clips' audio (clip id = path under it), for --verify-with."),
    CliFlag(
        "verify_margin",
        float,
        None,
        "Nats per token every verifier must clear (default: the calibrated margin, docs/refdis.md; another margin "
        "has no measured precision).",
    ),
    MODELS,
    CliFlag(
        "corrected_refs",
        Path,
        None,
        "Two-reference mode: file of corrected references (clip id + text, e.g. from refdis --write-corrected) "
        "instead of a panel.",
    ),
    CliFlag(
        "text_cache",
        bool,
        True,
        "Reuse the normalized texts and alignments of earlier runs on the same files ($ASR_AUDIT_CACHE_DIR/text; "
        "results are identical either way).",
        ("--text-cache/--no-text-cache",),
    ),
    CliFlag(
        "normalize_workers",
        int,
        0,
        "Processes normalizing (and, in a cold cached run, aligning and mining) a large prediction set; 0 = one "
        "per core, 1 = serial.",
    ),
)


#: ``asr-audit refdis``'s own output: the cleaned benchmark
WRITE_CORRECTED = CliFlag(
    "write_corrected",
    Path,
    None,
    "Write the consensus-corrected references (a cleaned benchmark, manifest JSONL) with every change.",
    output=True,
)


def check_write_corrected(values: Mapping[str, Any]) -> None:
    """``--write-corrected`` (the verb's own output, ``values``: its flags by field) with the options it
    cannot go with."""
    if values["write_corrected"] is not None and values["corrected_refs"] is not None:
        raise ConfigError(
            "--write-corrected writes the panel's corrections, but --corrected-refs gives them; fix: use --panel"
        )
    if values["write_corrected"] is not None and len(split_names(values["verify_with"], "--verify-with") or ()) > 1:
        raise ConfigError(
            "--write-corrected records one backend's vote on each correction; fix: name one --verify-with backend"
        )


#: ``asr-audit refdis --help``'s worked examples: (command line, what it does)
EXAMPLES = (
    (
        "asr-audit refdis --preds preds/ --panel m1,m2,m3,m4 --json refdis.json",
        "accept-ref per model, panel members scored leave-one-out",
    ),
    ("asr-audit refdis --preds preds/ --panel m1,m2,m3 --preset anchor --no-loo", "the paper's public-code semantics"),
    (
        "asr-audit refdis --preds exports/ --panel a,b,c --models d --id-from stem --references normalized",
        "raw CSV exports: ids from paths, references equal once normalized",
    ),
)


def check_verifications(given: Collection[str]) -> None:
    """At most one verification of the mined edits: ``given`` names those set (``truth``, ``labels``,
    ``verify_with``); two are refused on every surface in its words (:func:`~asr_audit.options.refuse`)."""
    for a, b in combinations(("truth", "labels", "verify_with"), 2):
        problem = f"{{{a}}} and {{{b}}} are two verifications of the same edits"
        refuse({a, b} <= set(given), (a, b), problem, "name one of them")


@dataclass(frozen=True, slots=True, kw_only=True)
class RefdisOptions:
    """What a refdis run is configured with: the mining parameters, the bootstrap size, the report's
    published comparison set (``published``, read by the report only), how WER is counted
    (``merge_compounds``), the corpus language (``language``, a primary subtag), and what verifies the
    mined edits: a calibration folder's planted truth (``truth``) or a labels file of
    ``asr-audit annotate`` (``labels``), one at most.

    >>> RefdisOptions(language="fr").normalizer_for("whisper"), RefdisOptions(language="fr").text2num
    ('whisper-basic', True)
    >>> paper = RefdisOptions(mining=preset_params("paper"), language="fr")
    >>> paper.normalizer_for("whisper"), paper.text2num
    ('basic-fr', False)
    >>> RefdisOptions(mining=preset_params("paper"), language="ja").normalizer_for("whisper")
    'basic-chars'
    """

    mining: RefdisParams = field(default_factory=RefdisParams)
    resamples: int = 1000
    published: str | None = None
    merge_compounds: bool = False  # WER with kaldialign's merge_compounds=True (the leaderboard's)
    language: str = "en"
    # a calibration folder (``asr-audit calib build``) whose planted truth verifies the mined edits;
    # read by the runner and the CLI (``calib`` sits above the probes), see ``docs/refdis.md``
    truth: str | None = None
    # a labels file of ``asr-audit annotate``: people's labels verify the mined edits (docs/annotate.md)
    labels: str | None = None
    verify_with: tuple[str, ...] = ()  # audio verifiers (scoring backends), none: no audio verification
    audio_root: str | None = None
    verify_margin: float | None = None  # None: the calibrated margin
    models: tuple[str, ...] | None = None  # the models scored; None: every model of the set
    corrected_refs: str | None = None  # two-reference mode: a file of corrected references (clip id + text)
    text_cache: bool = True  # reuse the normalized texts and alignments of earlier runs (same results)
    normalize_workers: int = 1  # processes normalizing a large set; 0: one per core

    def __post_init__(self) -> None:
        check(
            self.normalize_workers >= 0,
            "normalize_workers",
            self.normalize_workers,
            "must be >= 0 (0 = one per core)",
            "use 1 (serial) or more",
        )
        check(self.resamples >= 1, "resamples", self.resamples, "must be >= 1", "use 1 or more bootstrap resamples")
        check(
            self.truth is None or Path(self.truth).is_dir(),
            "truth",
            self.truth,
            "is not a folder",
            "name the folder `asr-audit calib build` wrote",
        )
        check_verifications([n for n in ("truth", "labels", "verify_with") if getattr(self, n)])
        refuse(
            bool(self.verify_with) and self.corrected_refs is not None,
            ("verify_with", "corrected_refs"),
            "{verify_with} verifies the panel's edits, but {corrected_refs} gives them",
            "mine with a panel (drop {corrected_refs})",
        )
        refuse(
            self.verify_margin is not None and not self.verify_with,
            ("verify_margin", "verify_with"),
            "{verify_margin} is the audio verifiers' margin, and {verify_with} names none",
            "add {verify_with} or drop {verify_margin}",
        )
        check(
            self.language == primary_language(self.language),
            "language",
            self.language,
            "is not a primary language subtag",
            f"use {primary_language(self.language)!r}",
        )

    @property
    def english(self) -> bool:
        """Whether the corpus is English (its primary subtag is ``en``)."""
        return self.language == "en"

    @property
    def text2num(self) -> bool:
        """Whether spelled numbers become digits: for English, and under ``anchor`` in any language
        (``text2num`` in the corpus language, as the paper's code)."""
        return self.english or self.mining.preset == "anchor"

    def normalizer_for(self, requested: str) -> str:
        """The normalizer a run uses when ``requested`` was asked for: an English-only one on a
        non-English corpus becomes ``whisper-basic`` under ``anchor`` (the paper's code: OpenAI's
        ``BasicTextNormalizer(remove_diacritics=True)``, whose CJK characters the anchor steps space
        out); otherwise :func:`~asr_audit.text.languages.scoring_normalizer` decides (``basic-es``,
        ``basic-fr``, ``basic-de`` for those languages, ``basic-chars`` for a language scored by
        character: Chinese, Japanese, Korean, ...; ``basic`` for the rest)."""
        if self.mining.preset == "anchor":
            return "whisper-basic" if not self.english and requested in ENGLISH_ONLY else requested
        return scoring_normalizer(requested, self.language)

    def run_settings(self, requested: str) -> dict[str, Any]:
        """The keyword arguments of :func:`~asr_audit.probes.predfiles.refdis_run.run_refdis` these
        options set (``requested``: the normalizer asked for, see :meth:`normalizer_for`), so the
        verb, the spec runner and the Python API pass them alike.

        >>> sorted(RefdisOptions().run_settings("whisper"))
        ['language', 'merge_compounds', 'n_resamples', 'normalizer', 'text2num']
        """
        return {
            "normalizer": self.normalizer_for(requested),
            "n_resamples": self.resamples,
            "text2num": self.text2num,
            "merge_compounds": self.merge_compounds,
            "language": self.language,
        }

    def check_panel(self, n_panel: int, surface: Surface, corpus: str | None = None) -> None:
        """Refuse leave-one-out for a panel of ``n_panel`` too small for it: :func:`check_loo_panel`."""
        check_loo_panel(self.mining, n_panel, surface, corpus)

    @classmethod
    def from_mapping(
        cls, values: Mapping[str, Any], surface: Surface, probe: str = "refdis", extra: tuple[str, ...] = ()
    ) -> RefdisOptions:
        """Options from flag or spec values (``None`` = not given); ``extra`` names keys another
        probe reads from the same table (ignored here)."""
        r = Reader(
            {k: v for k, v in values.items() if k not in extra}, surface, (*FIELDS, *VERIFY_FIELDS, *RUN_FIELDS), probe
        )
        preset = r.choice("preset", tuple(PRESETS), "anchor")
        overrides = {
            "majority": r.number("majority", None),
            "include_middle": r.flag("include_middle", None),
            "min_run_len": r.integer("min_run_len", None),
            "min_ref_match": r.number("min_ref_match", None),
            "min_consensus_cer": r.number("min_consensus_cer", None),
            "min_panel": r.integer("min_panel", None),
            "loo": r.flag("loo", None),
            "min_confidence": r.number("min_confidence", None),
        }
        mining = build(preset_params, surface, preset=preset, **overrides)
        return build(
            cls,
            surface,
            mining=mining,
            resamples=r.integer("resamples", 1000),
            published=r.text("published", None),
            merge_compounds=r.flag("merge_compounds", False),
            language=primary_language(r.text("language", "en")),
            truth=r.text("truth", None),
            labels=r.text("labels", None),
            verify_with=r.names("verify_with", ()),
            audio_root=r.text("audio_root", None),
            verify_margin=r.number("verify_margin", None),
            models=r.names("models", None),
            corrected_refs=r.text("corrected_refs", None),
            text_cache=r.flag("text_cache", True),
            normalize_workers=r.integer("normalize_workers", 1),
        )


def check_loo_panel(
    mining: RefdisParams, n_panel: int, surface: Surface, corpus: str | None = None, n_outside: int = 0
) -> None:
    """Refuse leave-one-out when the panel less one is below :func:`loo_quorum` (issue 11,
    defect 3): its members could not be judged fairly. Checked where the panel is known (the
    spec's ``[panel]`` when it loads, the CLI's ``--panel``, and :func:`run_refdis` for library
    callers), before any inference; the error names the flags (CLI) or the TOML fields (spec). A
    panel below ``min_panel`` is left to the run's own error. A run that scores ``n_outside``
    models outside the panel goes on (issue 29): they are scored by the whole panel, and its
    members get no accept-ref (:func:`~asr_audit.probes.predfiles.refdis.loo_unscored`)."""
    quorum = loo_quorum(mining)
    if not mining.loo or n_panel < mining.min_panel or n_panel - 1 >= quorum or n_outside > 0:
        return
    if surface.kind == CLI:
        raise ConfigError(
            f"leave-one-out mines each panel member's edits with the other {n_panel - 1}, fewer than {quorum} "
            f"(--min-panel {mining.min_panel}, and 3 voters at least: two are no consensus): its members cannot be "
            f"judged fairly; fix: name at least {quorum + 1} panel members, name a model outside the panel "
            "to score (--models), or pass --no-loo"
        )
    where = f"{surface.path or '<spec>'}: " + ("" if corpus is None else f"corpus {corpus!r}: ")
    raise ConfigError(
        f"{where}leave-one-out ({surface.name('loo')}) mines each of the {n_panel} panel models' edits with the "
        f"other {n_panel - 1}, fewer than {quorum} ({surface.name('min_panel')} = {mining.min_panel}, and 3 voters "
        f"at least: two are no consensus), so its panel models cannot be judged fairly; fix: list at least "
        f"{quorum + 1} [panel] models or set {surface.name('loo')} = false"
    )


def check_unique_panel(panel: Sequence[str]) -> None:
    """Refuse a ``--panel`` that names a model twice."""
    if len(set(panel)) != len(panel):
        raise ConfigError(f"--panel names a model twice: {','.join(panel)}")


def check_panel(mining: RefdisParams, panel: Sequence[str], models: Sequence[str] = ()) -> None:
    """The checks a consensus-mode run makes of its ``--panel``, in this order: no model named
    twice (:func:`check_unique_panel`), at least ``min_panel`` members, and leave-one-out's
    quorum (:func:`check_loo_panel`; met when ``models``, those the run scores, include one
    outside the panel)."""
    check_unique_panel(panel)
    if len(panel) < mining.min_panel:
        raise ConfigError(
            f"the panel has {len(panel)} member(s) but --min-panel is {mining.min_panel}; "
            "fix: name more panel members or lower --min-panel"
        )
    check_loo_panel(mining, len(panel), Surface.cli(), n_outside=len(set(models) - set(panel)))
