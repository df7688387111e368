"""A regression gate for CI: is a candidate model worse than its baseline, beyond noise?

Both models are scored by the refdis probe on the same clips and the same mined edits (a
consensus panel, or a corrected reference file: :func:`~asr_audit.probes.predfiles.refdis_run.run_refdis`),
then three measures are compared pairwise, candidate minus baseline, in percentage points:

* ``accept_ref``: the share of judged reference errors a model reproduces (higher: copies more);
* ``wer``: WER against the given references;
* ``wer_inflation``: corrected-reference WER minus given WER (higher: the reference's errors
  flatter it more).

For each measure: a paired cluster bootstrap (clusters are clips, or sentences / recordings
given by a mapping) of the difference (:func:`~asr_audit.stats.contrast.ratio_contrast`) and a
one-sided test of ``difference <= min_effect``: a *regression* when the bootstrap's lower
percentile bound at ``level / k`` is above ``min_effect`` (Bonferroni over the ``k`` measures that
have enough data, so the gate as a whole is a ``level`` test). A measure without enough data
(fewer than ``min_clusters`` clusters, or fewer than ``min_edits`` judged edits in an arm) is not
tested and says why; a gate that tested nothing is *undecided*. Both models must have been
evaluated on the same clips (a row per clip, answered or failed): when fewer than
:data:`MIN_SHARED` of the clips either has a row for are shared (a candidate evaluated on other
clips), nothing is tested and the gate is *undecided*. Exit codes of
``asr-audit gate``: 0 pass, 1 regression, 2 error or undecided (:attr:`GateResult.exit_code`).

In consensus mode accept-ref and WER inflation are compared only on *verified* edits (a
:class:`~asr_audit.probes.predfiles.verified.Verification` labelling them reference-wrong); without
one they are not tested and the gate decides on WER: a candidate that hears better than the panel
raises both on consensus edits without copying anything (issue 25, ``docs/validity.md``).

The false-positive rate of the whole decision on two equally good models is measured by the
null-calibration benchmark (``benchmarks/null_calibration.py --only gate``, ``docs/validity.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from asr_audit.corpus.groups import resolve_groups
from asr_audit.corpus.predfiles import PredictionSet, load_references
from asr_audit.corpus.reading import ReadOptions, Repairs
from asr_audit.errors import ConfigError
from asr_audit.options import REQUIRED, TOML, CliFlag, Reader, Surface, build, check, flag_table, refuse, split_names
from asr_audit.probes.core.flags import RESAMPLES
from asr_audit.probes.core.probe import FunctionProbe, ProbeInputs, probe
from asr_audit.probes.predfiles.inflation import inflation_columns
from asr_audit.probes.predfiles.refdis import CONSENSUS, REF, ClipInput, Edit, RefdisParams, loo_unscored
from asr_audit.probes.predfiles.refdis_options import FLAGS as REFDIS_FLAGS
from asr_audit.probes.predfiles.refdis_options import RefdisOptions, check_verifications
from asr_audit.probes.predfiles.refdis_result import RefdisResult
from asr_audit.probes.predfiles.verified import REFERENCE_WRONG, Verification, Verify, edit_key
from asr_audit.probes.predfiles.verified_labels import edits_verify
from asr_audit.stats.contrast import Contrast, cluster_sums, ratio_contrast
from asr_audit.text.align import AlignmentCache

ACCEPT_REF, WER, WER_INFLATION = "accept_ref", "wer", "wer_inflation"
MEASURES = (ACCEPT_REF, WER_INFLATION, WER)
#: Default minimum effect (percentage points) below which a worse candidate still passes.
DEFAULT_MIN_EFFECT: Mapping[str, float] = MappingProxyType({ACCEPT_REF: 2.0, WER_INFLATION: 0.5, WER: 0.5})
#: Clusters a measure needs before it is tested (the percentile bootstrap under-covers with few;
#: the battery's rule, :data:`asr_audit.stats.flags.MIN_CLUSTERS_FOR_A_CLAIM`).
MIN_CLUSTERS = 30
#: Judged edits each model needs before accept-ref is compared (the refdis verdict's minimum).
MIN_EDITS = 10
#: Share of the clips either model was evaluated on that both must share before anything is compared.
MIN_SHARED = 0.9
PASS, REGRESSION, UNDECIDED, NOT_TESTED = "pass", "regression", "undecided", "not tested"
#: Why accept-ref and WER inflation are not tested on consensus edits without a verification.
UNVERIFIED = (
    "unverified consensus edits: a candidate that hears better than the panel raises it without copying; "
    "verify edits (planted truth or labels) to gate on it"
)
EXIT_CODES = MappingProxyType({PASS: 0, REGRESSION: 1, UNDECIDED: 2})

# columns of gate_columns(): ref verdicts, judged verdicts, errors, words, corrected errors, corrected words
_K, _N, _E, _W, _EC, _WC = range(6)
# (numerator, denominator) column pairs and coefficients of each measure's candidate-minus-baseline contrast
_RATIOS: Mapping[str, tuple[tuple[tuple[int, int], ...], tuple[float, ...]]] = {
    ACCEPT_REF: (((_K, _N),), (1.0,)),
    WER: (((_E, _W),), (1.0,)),
    WER_INFLATION: (((_EC, _WC), (_E, _W)), (1.0, -1.0)),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class GateOptions:
    """How the gate decides. ``min_effect`` is in percentage points per measure."""

    level: float = 0.025
    min_effect: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_MIN_EFFECT))
    measures: tuple[str, ...] = MEASURES
    n_resamples: int = 2000
    min_clusters: int = MIN_CLUSTERS
    min_edits: int = MIN_EDITS

    def __post_init__(self) -> None:
        check(0 < self.level < 0.5, "level", self.level, "must be in (0, 0.5)", "e.g. --level 0.025")
        check(
            len(self.measures) > 0 and all(m in MEASURES for m in self.measures),
            "measures",
            ",".join(self.measures),
            f"names an unknown measure (valid: {', '.join(MEASURES)})",
            f"e.g. --measures {','.join(MEASURES)}",
        )
        check(
            len(set(self.measures)) == len(self.measures),
            "measures",
            ",".join(self.measures),
            "names a measure twice",
            "name each once",
        )
        for name, value in self.min_effect.items():
            check(
                name in MEASURES,
                "min_effect",
                name,
                f"is not a measure (valid: {', '.join(MEASURES)})",
                "e.g. --min-effect wer=0.5",
            )
            check(value >= 0, "min_effect", f"{name}={value}", "must be >= 0 (points)", "e.g. --min-effect wer=0.5")
        check(self.n_resamples >= 200, "resamples", self.n_resamples, "must be >= 200", "use 2000 (the default)")
        check(self.min_clusters >= 2, "min_clusters", self.min_clusters, "must be >= 2", "use 30 (the default)")
        check(self.min_edits >= 1, "min_edits", self.min_edits, "must be >= 1", "use 10 (the default)")

    def effect(self, measure: str) -> float:
        """The minimum effect (points) of ``measure``: given, else the default."""
        return float(self.min_effect.get(measure, DEFAULT_MIN_EFFECT[measure]))

    def to_dict(self) -> dict[str, object]:
        return {
            "level": self.level,
            "correction": "bonferroni over the tested measures",
            "min_effect_points": {m: self.effect(m) for m in self.measures},
            "measures": list(self.measures),
            "bootstrap_resamples": self.n_resamples,
            "min_clusters": self.min_clusters,
            "min_edits": self.min_edits,
        }


GATE_KEYS = ("candidate", "baseline", "level", "min_effect", "measures", "resamples", "min_clusters", "min_edits")
#: what the gate reads besides the two models: verified edits (a calibration folder's planted truth or a
#: labels file), the corrected references of two-reference mode, and the bootstrap's clusters
INPUT_KEYS = ("truth", "labels", "corrected_refs", "cluster_pattern", "cluster_file")
REFDIS_KEYS = ("preset", "loo", "min_panel", "majority", "include_middle", "merge_compounds", "language")


@dataclass(frozen=True, slots=True, kw_only=True)
class GateRunOptions:
    """A run's ``[probes.gate]`` table: the two models, the gate's options and refdis's mining options."""

    candidate: str
    baseline: str
    gate: GateOptions
    refdis: RefdisOptions
    truth: str | None = None  # a calibration folder whose planted truth verifies the mined edits
    labels: str | None = None  # a labels file of asr-audit annotate that verifies them
    corrected_refs: str | None = None  # two-reference mode: the corrected references
    cluster_pattern: str | None = None  # regex over clip ids: its first (or 'group') group is the cluster
    cluster_file: str | None = None  # clip id + group columns: the bootstrap's clusters

    def __post_init__(self) -> None:
        refuse(
            self.candidate == self.baseline,
            ("candidate", "baseline"),
            f"{{candidate}} and {{baseline}} are the same model {self.candidate!r}",
            "name two models",
        )
        check_verifications([n for n in ("truth", "labels") if getattr(self, n) is not None])

    def check_panel(self, n_panel: int, surface: Surface, corpus: str | None = None) -> None:
        """The refdis options' leave-one-out quorum check (the gate mines with them), in consensus mode."""
        if self.corrected_refs is None:
            self.refdis.check_panel(n_panel, surface, corpus)

    @classmethod
    def from_mapping(cls, values: Mapping[str, object], surface: Surface) -> GateRunOptions:
        """Options from a spec table (``None`` = not given); ``candidate`` and ``baseline`` are required."""
        r = Reader(values, surface, (*GATE_KEYS, *REFDIS_KEYS, *INPUT_KEYS), "gate")
        for key in ("candidate", "baseline"):
            if not r.has(key):
                raise surface.missing(key, f'name the {key} model, e.g. {key} = "my-model"')
        raw = r.values.get("min_effect")
        if isinstance(raw, Mapping):
            effects = {str(k): v for k, v in raw.items()}
            for k, v in effects.items():
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    raise surface.error(
                        "min_effect", dict(raw), f"has {k} = {v!r}, not a number", "write points, e.g. { wer = 0.5 }"
                    )
            min_effect = {k: float(v) for k, v in effects.items()}
        elif isinstance(raw, (int, float)) and not isinstance(raw, bool):
            min_effect = dict.fromkeys(MEASURES, float(raw))
        elif raw is None:
            min_effect = dict(DEFAULT_MIN_EFFECT)
        else:
            raise surface.error(
                "min_effect", raw, "is not a number or a table", "write min_effect = 0.5 or { wer = 0.5 }"
            )
        gate = build(
            GateOptions,
            surface,
            level=r.number("level", 0.025),
            min_effect=min_effect,
            measures=r.names("measures", MEASURES),
            n_resamples=r.integer("resamples", 2000),
            min_clusters=r.integer("min_clusters", MIN_CLUSTERS),
            min_edits=r.integer("min_edits", MIN_EDITS),
        )
        refdis = RefdisOptions.from_mapping({k: values.get(k) for k in REFDIS_KEYS}, surface, "gate")
        return build(
            cls,
            surface,
            candidate=r.text("candidate", ""),
            baseline=r.text("baseline", ""),
            gate=gate,
            refdis=refdis,
            **{key: r.text(key, None) for key in INPUT_KEYS},
        )


def parse_min_effect(text: str | None) -> dict[str, float]:
    """``--min-effect``: one number for every measure, or ``measure=points`` pairs.

    >>> parse_min_effect("1"), parse_min_effect("wer=0.25,accept_ref=3")
    ({'accept_ref': 1.0, 'wer_inflation': 1.0, 'wer': 1.0}, {'wer': 0.25, 'accept_ref': 3.0})
    """
    if text is None:
        return dict(DEFAULT_MIN_EFFECT)
    fix = "fix: e.g. --min-effect 1 (points, every measure) or --min-effect wer=0.5,accept_ref=2"
    try:
        if "=" not in text:
            return dict.fromkeys(MEASURES, float(text))
        out = {}
        for item in text.split(","):
            name, _, value = item.partition("=")
            name = name.strip().replace("-", "_")
            if name not in MEASURES:
                raise ConfigError(
                    f"--min-effect {text!r}: {name!r} is not a measure (valid: {', '.join(MEASURES)}); {fix}"
                )
            out[name] = float(value)
        return out
    except ValueError:
        raise ConfigError(f"--min-effect {text!r} is not a number or measure=number list; {fix}") from None


#: ``asr-audit gate``'s flag of every option (the mining options as refdis declares them)
FLAGS = flag_table(
    CliFlag("candidate", str, REQUIRED, "Candidate: a model of --preds, or its prediction file."),
    CliFlag("baseline", str, REQUIRED, "Baseline: a model of --preds, or its prediction file."),
    CliFlag("level", float, 0.025, "One-sided level of the whole gate (split over the tested measures)."),
    CliFlag(
        "min_effect",
        str,
        None,
        "Smallest regression that fails, in points: one number or measure=points pairs "
        "(default accept_ref=2,wer_inflation=0.5,wer=0.5).",
        parse=lambda text, flag: parse_min_effect(text),
    ),
    CliFlag(
        "measures", str, ",".join(MEASURES), "Measures to gate on: accept_ref, wer_inflation, wer.", parse=split_names
    ),
    replace(RESAMPLES, default=2000),
    CliFlag(
        "cluster_pattern", str, None, "Regex over clip ids whose first (or 'group') group is the bootstrap cluster."
    ),
    CliFlag(
        "cluster_file", Path, None, "File of clip id + group (sentence, recording) columns: the bootstrap clusters."
    ),
    *(REFDIS_FLAGS[k] for k in ("preset", "min_panel", "loo", "merge_compounds", "language")),
    *(REFDIS_FLAGS[k] for k in INPUT_KEYS[:3]),
)
#: ``asr-audit gate``'s own output: the pull-request comment
MARKDOWN = CliFlag(
    "markdown_out",
    Path,
    None,
    "Write the Markdown summary (a pull-request comment) here.",
    ("--markdown",),
    output=True,
)


def check_panel_given(values: Mapping[str, Any]) -> None:
    """``asr-audit gate``'s ``--panel`` or ``--corrected-refs`` (``values``: its flags by field): one of them."""
    if values["panel"] is None and values["corrected_refs"] is None:
        raise ConfigError("gate needs --panel a,b,c,d (consensus mode) or --corrected-refs FILE (two-reference mode)")


#: ``asr-audit gate --help``'s worked examples: (command line, what it does)
EXAMPLES = (
    (
        "asr-audit gate --preds preds/ --candidate my-model-v2 --baseline my-model-v1 "
        "--panel whisper-small.en,whisper-base.en,distil-small.en,wav2vec2-base-960h --markdown gate.md",
        "two models of one folder, with a pull-request comment",
    ),
    (
        "asr-audit gate --preds panel/ --candidate new.jsonl --baseline main.jsonl "
        "--panel a,b,c,d --min-effect wer=0.25,accept_ref=2 --level 0.05",
        "two result files against a panel's folder, with other thresholds",
    ),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class MeasureTest:
    """One measure's comparison: both models' values, the difference and the decision (points)."""

    measure: str
    candidate: float | None
    baseline: float | None
    difference: float | None
    lower: float | None  # one-sided lower bound at alpha (percentile)
    upper: float | None  # one-sided upper bound at alpha
    alpha: float | None  # this measure's level after the Bonferroni split (None: not tested)
    min_effect: float
    p_value: float | None  # bootstrap share of differences <= min_effect
    n_clusters: int
    status: str  # regression | pass | not tested
    reason: str | None = None  # why not tested

    def to_dict(self) -> dict[str, object]:
        return {
            "measure": self.measure,
            "candidate": self.candidate,
            "baseline": self.baseline,
            "difference": self.difference,
            "lower_bound": self.lower,
            "upper_bound": self.upper,
            "alpha": self.alpha,
            "min_effect": self.min_effect,
            "p_value": self.p_value,
            "n_clusters": self.n_clusters,
            "status": self.status,
            **({"reason": self.reason} if self.reason else {}),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class GateResult:
    """The gate's decision with every measure's test and what is needed to reproduce it."""

    candidate: str
    baseline: str
    mode: str  # panel | two-reference
    source: str
    panel: tuple[str, ...]
    clustering: str
    n_clips: int
    n_edits: int
    options: GateOptions
    tests: tuple[MeasureTest, ...]
    normalizer: Mapping[str, object]
    seed: int

    @property
    def decision(self) -> str:
        tested = [t for t in self.tests if t.status != NOT_TESTED]
        if not tested:
            return UNDECIDED
        return REGRESSION if any(t.status == REGRESSION for t in tested) else PASS

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.decision]

    def to_dict(self) -> dict[str, object]:
        return {
            "probe": "gate",
            "decision": self.decision,
            "exit_code": self.exit_code,
            "candidate": self.candidate,
            "baseline": self.baseline,
            "mode": self.mode,
            "source": self.source,
            "panel": list(self.panel),
            "clustering": self.clustering,
            "n_clips": self.n_clips,
            "n_edits": self.n_edits,
            "options": self.options.to_dict(),
            "tests": [t.to_dict() for t in self.tests],
            "normalizer": dict(self.normalizer),
            "seed": self.seed,
        }


def gate_columns(
    clips: Sequence[ClipInput],
    model: str,
    edits: Sequence[Edit],
    cache: AlignmentCache,
    *,
    merge_compounds: bool = False,
) -> np.ndarray:
    """``model``'s per-clip ``[ref verdicts, judged verdicts, errors, words, corrected errors,
    corrected words]`` (one row per clip of ``clips``), from the edits it is judged on.

    The WER columns are :func:`~asr_audit.probes.predfiles.inflation.inflation_columns`' (a missing
    hypothesis deletes every reference word); the verdict columns count ``ref`` and ``ref`` or
    ``consensus`` verdicts, as accept-ref does.
    """
    wer, _ = inflation_columns(clips, model, edits, cache, merge_compounds=merge_compounds)
    row = {c.clip_id: i for i, c in enumerate(clips)}
    verdicts = np.zeros((len(clips), 2), dtype=np.float64)
    for e in edits:
        v = e.verdicts.get(model)
        if v in (REF, CONSENSUS) and e.clip_id in row:
            verdicts[row[e.clip_id], 0] += v == REF
            verdicts[row[e.clip_id], 1] += 1
    return np.concatenate([verdicts, wer], axis=1)


def compare(
    candidate: np.ndarray,
    baseline: np.ndarray,
    options: GateOptions,
    rng: np.random.Generator,
    clusters: Sequence[object] | None = None,
    skip: Mapping[str, str] | None = None,
) -> tuple[MeasureTest, ...]:
    """Every measure of ``options`` compared on :func:`gate_columns` arrays of the two models.

    ``clusters`` labels each row (clip) with its cluster (sentence, recording); ``None``: each clip
    is its own. ``skip``: measures not to test, with the reason shown. Resamples are drawn from
    ``rng`` in the order of ``options.measures``.
    """
    if candidate.shape != baseline.shape:
        raise ValueError(f"gate arrays differ in shape: {candidate.shape} vs {baseline.shape}")
    cand, base = cluster_sums(candidate, clusters), cluster_sums(baseline, clusters)
    skip = skip or {}
    reasons = {m: skip.get(m) or _not_enough(m, cand, base, options) for m in options.measures}
    n_tested = sum(r is None for r in reasons.values())
    alpha = options.level / n_tested if n_tested else None
    out = []
    for m in options.measures:
        pairs, coef = _RATIOS[m]
        cols = [(arm, num, den) for arm in (cand, base) for num, den in pairs]
        nums = np.stack([arm[:, num] for arm, num, _ in cols], axis=1)
        dens = np.stack([arm[:, den] for arm, _, den in cols], axis=1)
        weights = (*coef, *(-c for c in coef))
        value_c = _ratio_value(cand, pairs, coef)
        value_b = _ratio_value(base, pairs, coef)
        effect = options.effect(m)
        used = int(np.sum((dens > 0).any(axis=1)))
        if reasons[m] is not None or alpha is None:
            diff = None if value_c is None or value_b is None else value_c - value_b
            out.append(
                MeasureTest(
                    measure=m,
                    candidate=value_c,
                    baseline=value_b,
                    difference=diff,
                    lower=None,
                    upper=None,
                    alpha=None,
                    min_effect=effect,
                    p_value=None,
                    n_clusters=used,
                    status=NOT_TESTED,
                    reason=reasons[m],
                )
            )
            continue
        c: Contrast = ratio_contrast(
            nums, dens, weights, rng, n_resamples=options.n_resamples, alpha=alpha, threshold=effect / 100
        )
        regression = c.lower is not None and 100 * c.lower > effect
        out.append(
            MeasureTest(
                measure=m,
                candidate=value_c,
                baseline=value_b,
                difference=_points(c.estimate),
                lower=_points(c.lower),
                upper=_points(c.upper),
                alpha=alpha,
                min_effect=effect,
                p_value=c.p_at_or_below,
                n_clusters=used,
                status=REGRESSION if regression else PASS,
            )
        )
    return tuple(out)


def _points(x: float | None) -> float | None:
    return None if x is None else 100 * x


def _ratio_value(arm: np.ndarray, pairs: Sequence[tuple[int, int]], coef: Sequence[float]) -> float | None:
    """One model's measure in points (``None`` when a denominator is 0)."""
    total = 0.0
    for (num, den), w in zip(pairs, coef):
        d = arm[:, den].sum()
        if d <= 0:
            return None
        total += w * arm[:, num].sum() / d
    return 100 * total


def _not_enough(measure: str, cand: np.ndarray, base: np.ndarray, options: GateOptions) -> str | None:
    """Why ``measure`` cannot be tested on these clusters (``None``: it can)."""
    den = _N if measure == ACCEPT_REF else _W
    clusters = int(np.sum((cand[:, den] > 0) | (base[:, den] > 0)))
    if clusters < options.min_clusters:
        what = "with a judged edit" if measure == ACCEPT_REF else "with reference words"
        return f"{clusters} cluster(s) {what}, fewer than {options.min_clusters}"
    if measure in (ACCEPT_REF, WER_INFLATION):
        judged = [int(arm[:, _N].sum()) for arm in (cand, base)]
        if min(judged) < options.min_edits:
            return f"judged edits {judged[0]} (candidate) and {judged[1]} (baseline), need {options.min_edits} each"
    return None


def run_gate(
    preds: PredictionSet,
    candidate: str,
    baseline: str,
    params: RefdisParams,
    *,
    panel: Sequence[str] = (),
    corrected: Mapping[str, str] | None = None,
    options: GateOptions | None = None,
    clusters: Mapping[str, str] | None = None,
    clustering: str = "clip",
    normalizer: str = "whisper",
    text2num: bool = True,
    seed: int = 0,
    merge_compounds: bool = False,
    language: str = "en",
    normalize_workers: int = 1,
    cache: AlignmentCache | None = None,
    verification: Verification | Verify | None = None,
    unverified_edits: bool = False,
) -> GateResult:
    """Score ``candidate`` and ``baseline`` with refdis on ``preds`` and compare them.

    ``panel`` (consensus mode) or ``corrected`` (two-reference mode) as for
    :func:`~asr_audit.probes.predfiles.refdis_run.run_refdis`. ``clusters`` maps clip ids to their
    cluster (a clip absent from it is its own); ``clustering`` names where they came from.
    ``cache`` (an :class:`~asr_audit.text.align.AlignmentCache`) may be shared by gates on the same set.

    What a better listener cannot move (issue 25): in consensus mode, accept-ref and WER inflation
    are compared on the edits ``verification`` labels reference-wrong only (planted truth, human
    labels: :mod:`~asr_audit.probes.predfiles.verified`; or a verification step, called once on
    the run's every edit, as ``asr-audit gate --truth / --labels`` pass); without one they are not
    tested (:data:`UNVERIFIED`: a candidate that hears better than the panel raises both on
    consensus edits without copying) and the gate decides on WER alone.
    ``unverified_edits=True`` restores the earlier gate on every consensus edit (measured in
    ``docs/validity.md`` to fail honest, more accurate candidates).
    """
    from asr_audit.probes.predfiles.refdis_inputs import prepare_clips
    from asr_audit.probes.predfiles.refdis_run import run_normalizer, run_refdis

    options = options or GateOptions()
    if candidate == baseline:
        raise ConfigError(f"--candidate and --baseline are the same model {candidate!r}; fix: name two models")
    inside = [m for m in (candidate, baseline) if m in panel]
    if corrected is None and inside and loo_unscored(list(panel), params) is not None:
        raise ConfigError(
            f"{inside[0]!r} is a member of a panel of {len(panel)}, too few to score it leave-one-out, "
            "so candidate and baseline would be judged on different edits; fix: add a panel model, "
            "take it out of --panel, or pass --no-loo"
        )
    cache = AlignmentCache() if cache is None else cache  # an empty cache is falsy (__len__)
    result: RefdisResult = run_refdis(
        preds,
        list(panel),
        params,
        normalizer=normalizer,
        models=[candidate, baseline],
        corrected=corrected,
        seed=seed,
        n_resamples=200,  # the run's own intervals are not used by the gate
        text2num=text2num,
        cache=cache,
        normalize_workers=normalize_workers,
        merge_compounds=merge_compounds,
        language=language,
    )
    norm = run_normalizer(normalizer, params.preset)
    refs = None if corrected is None else {c: preds.references[c] for c in preds.references if c in corrected}
    clips = prepare_clips(preds, [candidate, baseline], norm, text2num, references=refs, cache=cache, language=language)
    skip: dict[str, str] = {}
    edits = {m: list(result.mining.scored_edits(m)) for m in (candidate, baseline)}
    if callable(verification):  # a step: label the run's every edit (full panel and leave-one-out)
        verification = verification([*result.mining.edits, *(e for es in result.mining.loo_edits.values() for e in es)])
    if result.mode == "panel" and verification is not None:
        wrong = {k for k, lab in verification.labels.items() if lab.label == REFERENCE_WRONG}
        edits = {m: [e for e in es if edit_key(e) in wrong] for m, es in edits.items()}
    elif result.mode == "panel" and not unverified_edits:
        skip = {ACCEPT_REF: UNVERIFIED, WER_INFLATION: UNVERIFIED}
    columns = {m: gate_columns(clips, m, edits[m], cache, merge_compounds=merge_compounds) for m in edits}
    labels = None if clusters is None else [clusters.get(c.clip_id, c.clip_id) for c in clips]
    tests = compare(columns[candidate], columns[baseline], options, np.random.default_rng(seed), labels, skip)
    unshared = _unshared(preds, candidate, baseline)
    if unshared is not None:  # not the same clips: no measure is tested, the gate is undecided
        tests = tuple(
            replace(t, lower=None, upper=None, alpha=None, p_value=None, status=NOT_TESTED, reason=unshared)
            for t in tests
        )
    return GateResult(
        candidate=candidate,
        baseline=baseline,
        mode=result.mode,
        source=result.source,
        panel=result.panel,
        clustering=clustering,
        n_clips=len(clips),
        n_edits=len(result.edits),
        options=options,
        tests=tests,
        normalizer=result.normalizer,
        seed=seed,
    )


def _unshared(preds: PredictionSet, candidate: str, baseline: str) -> str | None:
    """Why the two models cannot be paired, or ``None``: fewer than :data:`MIN_SHARED` of the clips
    either was evaluated on (a row, answered or failed) were evaluated on by both."""
    evaluated = [set(preds.file(m).rows) for m in (candidate, baseline)]
    either, both = evaluated[0] | evaluated[1], evaluated[0] & evaluated[1]
    if either and len(both) >= MIN_SHARED * len(either):
        return None
    return (
        f"the candidate and the baseline were evaluated on {len(both)} clip(s) in common of the {len(either)} "
        f"either was (need {MIN_SHARED:.0%}); compare models evaluated on the same clips"
    )


def gate_inputs(
    preds: str | Path | None,
    candidate: str,
    baseline: str,
    dataset: str | None = None,
    *,
    read: ReadOptions | None = None,
    normalize: Callable[[str], str] | None = None,
) -> tuple[PredictionSet, str, str]:
    """The prediction set a gate runs on and the candidate's and baseline's model names in it.

    ``candidate`` and ``baseline`` are each a model of ``preds`` (two models in one run) or a
    prediction file of its own (two result files), added to ``preds``' set (or to an empty one);
    a file whose model name is already taken is named ``candidate:<name>`` / ``baseline:<name>``.
    ``read`` (and ``normalize``) say how the folder is read
    (:func:`~asr_audit.corpus.predfiles.load_predictions`); its columns and id rule apply to the
    two files too.
    """
    from dataclasses import replace
    from pathlib import Path

    from asr_audit.corpus.predfiles import add_prediction_files, load_predictions, read_prediction_file

    pset = load_predictions(preds, dataset, read=read, normalize=normalize) if preds is not None else None
    files, names = [], []
    repaired = Repairs()  # what reading the two files changed, reported with the folder's
    taken = set(pset.models) if pset is not None else set()
    for role, value in (("candidate", candidate), ("baseline", baseline)):
        path = Path(value)
        if pset is not None and value in pset.models:
            names.append(value)
            continue
        if not path.is_file():
            have = f"models of {preds}: {', '.join(pset.models)}" if pset is not None else "no --preds folder"
            raise ConfigError(
                f"--{role} {value!r} is neither a model of the prediction folder nor a prediction file ({have}); "
                f"fix: name a model of --preds or pass the path of its prediction file"
            )
        pf = read_prediction_file(path, read=read, repairs=repaired)
        if pf.model in taken:
            pf = replace(pf, model=f"{role}:{pf.model}")
        taken.add(pf.model)
        files.append(pf)
        names.append(pf.model)
    if files:
        source = str(preds) if preds is not None else " + ".join(str(f.path) for f in files)
        pset = replace(
            add_prediction_files(pset, files, source), repairs=(*(pset.repairs if pset else ()), *repaired.done())
        )
    if pset is None:  # unreachable: without --preds both roles are files
        raise ConfigError("gate needs --preds or two prediction files; fix: pass --preds DIR")
    return pset, names[0], names[1]


def _check_gate(options: GateRunOptions, inputs: ProbeInputs, surface: Surface) -> None:
    """Both models in the corpus, and a spec's panel against leave-one-out's quorum (refdis's options)."""
    for key in ("candidate", "baseline"):
        name = getattr(options, key)
        if name not in inputs.predictions.models:
            raise ConfigError(
                f"{surface.path or '<spec>'}: {surface.name(key)} = {name!r} is not a model of corpus "
                f"{inputs.corpus!r} (models: {', '.join(inputs.predictions.models)}); fix: name one of them"
            )
    if surface.kind == TOML:  # the verb's panel: checked by the run, in its own words
        options.check_panel(len(inputs.panel), surface, inputs.corpus)


def _run_gate_probe(inputs: ProbeInputs, options: GateRunOptions) -> GateResult:
    verification = edits_verify(inputs, options.truth, options.labels)
    preds = inputs.predictions
    groups, clustering = resolve_groups(
        preds.clip_ids,
        pattern=options.cluster_pattern,
        path=None if options.cluster_file is None else inputs.resolve(options.cluster_file),
        flag="--cluster",
    )
    refdis = options.refdis
    return run_gate(
        preds,
        options.candidate,
        options.baseline,
        refdis.mining,
        panel=inputs.panel,
        corrected=None if options.corrected_refs is None else load_references(inputs.resolve(options.corrected_refs)),
        options=options.gate,
        clusters=None if groups is None else {c: m.group for c, m in groups.items()},
        clustering=clustering,
        normalizer=refdis.normalizer_for(inputs.normalizer),
        text2num=refdis.text2num,
        seed=inputs.seed,
        merge_compounds=refdis.merge_compounds,
        language=refdis.language,
        verification=verification,
    )


#: the regression gate: ``asr-audit gate`` and ``[probes.gate]`` (candidate and baseline models of the corpus)
GATE: FunctionProbe[GateRunOptions, GateResult] = probe(
    "gate",
    (*GATE_KEYS, *REFDIS_KEYS, *INPUT_KEYS),
    "regression gate: candidate vs baseline on accept-ref, WER inflation and WER (one-sided, paired)",
    GateRunOptions.from_mapping,
    _run_gate_probe,
    _check_gate,
    flags=FLAGS,
    examples=EXAMPLES,
)
