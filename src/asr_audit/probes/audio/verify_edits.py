"""Audio verification of mined edits by other models: a :class:`~asr_audit.probes.predfiles.verified.Verification`.

A mined edit says "the reference is wrong here; the audio says the panel's rendering". Each
*verifier* (a backend with the ``score`` capability, never the tested model) scores, on the clip's
audio and teacher-forced, two texts: the normalized reference, and the reference with that one
edit applied (the panel's rendering over the edit's correction range). As in
:mod:`asr_audit.probes.audio.verify`, the statistic is the difference of the two texts' *mean*
log-probabilities per token, ``d = mean(corrected) - mean(reference)`` in nats (the backends do not
score the end of a text, so a total always favours the shorter one). An edit is

* ``reference-wrong`` when every verifier has ``d > margin``,
* ``reference-right`` when every verifier has ``d < -margin``,
* ``unsure`` otherwise (the verifiers disagree, or one is within the margin, or a clip's audio
  could not be loaded or scored).

The source is inexact: its ``precision`` (the share of its reference-wrong calls that are true
reference errors) is the one measured on calibration sets with planted truth at the same
verifiers and margin (:data:`MEASURED`, written by ``benchmarks/audio_verify.py``, on edits no
verifier helped make). For any other configuration, and whenever a verifier is a panel member
(its model helped mine the edits it judges, and a model prefers its own mishearing), it is not
carried, and :func:`~asr_audit.probes.predfiles.verified.verified_score`'s ``copy_low`` is then 0:
such a verification shows rates but cannot support a claim of copying.

Every verifier's own model is ``excluded`` (it may not verify itself, :func:`verifier_models`); a
verifier that is the model under test is refused (:func:`check_verifiers`), and a panel member that
verifies edits it helped mine is said so in the verification's notes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from asr_audit.errors import AuditError, ConfigError
from asr_audit.probes.predfiles.refdis import Edit
from asr_audit.probes.predfiles.verified import (
    AUDIO,
    REFERENCE_RIGHT,
    REFERENCE_WRONG,
    UNSURE,
    EditLabel,
    Verification,
    edit_key,
)
from asr_audit.stats.intervals import Rate, wilson

#: The margin (nats per token) every verifier must clear; chosen by the rule of
#: ``benchmarks/audio_verify.py`` on its tuning seed 101 (whisper-tiny.en-pt + whisper-base-pt:
#: precision 13/13 at 0, the smallest margin of the grid), frozen before the evaluation seeds
#: 201, 202 were scored (``docs/refdis.md``).
MARGIN = 0.0

#: Measured precision of the reference-wrong calls, ``(sorted verifier specs, margin) -> (k, n)``,
#: from the evaluation seeds 201, 202 of ``benchmarks/audio_verify.py``
#: (``benchmarks/results/audio-verify.json``: matched pairs of flite readings; recall 33/39).
MEASURED: Mapping[tuple[tuple[str, ...], float], tuple[int, int]] = {
    (("whisper-base-pt", "whisper-tiny.en-pt"), 0.0): (33, 34),
}


def verifier_models(spec: str) -> tuple[str, ...]:
    """The model names a verifier is known by in prediction files: its spec, the spec as a file
    name token (``sphinx:en-us`` -> ``sphinx-en-us``), the bundled CTranslate2 model a PyTorch
    rebuild shares its weights with (``whisper-tiny.en-pt`` -> ``whisper-tiny.en``), and a hub
    id's last part (``hf:openai/whisper-tiny.en`` -> ``whisper-tiny.en``).

    >>> verifier_models("whisper-tiny.en-pt")
    ('whisper-tiny.en-pt', 'whisper-tiny.en')
    >>> verifier_models("hf:openai/whisper-small.en")
    ('hf:openai/whisper-small.en', 'hf-openai-whisper-small.en', 'whisper-small.en')
    """
    names = [spec, re.sub(r"[^A-Za-z0-9._-]+", "-", spec).strip("-")]
    if spec.endswith("-pt"):
        names.append(spec[: -len("-pt")])
    if ":" in spec:
        names.append(spec.split(":", 1)[1].rstrip("/").rsplit("/", 1)[-1])
    return tuple(dict.fromkeys(n for n in names if n))


def check_verifiers(verifiers: Sequence[str], tested: Iterable[str], panel: Iterable[str] = ()) -> tuple[str, ...]:
    """Refuse a verifier that is a model under test (one line naming it and the fix); return the
    panel members that are verifiers (they verify edits they helped mine, and are excluded).

    >>> check_verifiers(["whisper-base-pt"], ["m1"], ["whisper-base", "x", "y"])
    ('whisper-base',)
    >>> check_verifiers(["whisper-base-pt"], ["whisper-base"])
    Traceback (most recent call last):
    ...
    asr_audit.errors.ConfigError: --verify-with whisper-base-pt is the model under test (whisper-base): a model never verifies its own edits; fix: verify with other models, or leave whisper-base out of --models
    """
    if not verifiers:
        raise ConfigError("--verify-with names no verifier; fix: name a scoring backend, e.g. whisper-base-pt")
    if len(set(verifiers)) != len(verifiers):
        raise ConfigError(f"--verify-with names a verifier twice: {','.join(verifiers)}; fix: name each once")
    tested_set, panel_set = set(tested), set(panel)
    members: list[str] = []
    for v in verifiers:
        own = set(verifier_models(v))
        if own & tested_set:
            m = sorted(own & tested_set)[0]
            raise ConfigError(
                f"--verify-with {v} is the model under test ({m}): a model never verifies its own edits; "
                f"fix: verify with other models, or leave {m} out of --models"
            )
        members.extend(sorted(own & panel_set))
    return tuple(dict.fromkeys(members))


@dataclass(frozen=True, slots=True, kw_only=True)
class EditScore:
    """One verifier's scores of one edit: mean log-probability per token of the reference and of the
    corrected text, and their difference ``d`` (``error`` instead when the clip could not be scored)."""

    verifier: str
    mean_reference: float | None = None
    mean_corrected: float | None = None
    error: str | None = None

    @property
    def diff(self) -> float | None:
        if self.mean_reference is None or self.mean_corrected is None:
            return None
        return self.mean_corrected - self.mean_reference

    def to_dict(self) -> dict[str, object]:
        if self.error is not None:
            return {"verifier": self.verifier, "error": self.error}
        d = self.diff
        return {
            "verifier": self.verifier,
            "mean_reference": None if self.mean_reference is None else round(self.mean_reference, 4),
            "mean_corrected": None if self.mean_corrected is None else round(self.mean_corrected, 4),
            "diff": None if d is None else round(d, 4),
        }


def decide(scores: Sequence[EditScore], margin: float) -> str:
    """The verifiers' joint label: all ``d > margin`` -> reference-wrong, all ``d < -margin`` ->
    reference-right, else unsure.

    >>> s = lambda d: EditScore(verifier="v", mean_reference=-1.0, mean_corrected=-1.0 + d)
    >>> decide([s(0.3), s(0.1)], 0.05), decide([s(-0.3), s(-0.1)], 0.05), decide([s(0.3), s(-0.1)], 0.05)
    ('reference-wrong', 'reference-right', 'unsure')
    """
    diffs = [s.diff for s in scores]
    if not diffs or any(d is None for d in diffs):
        return UNSURE
    if all(d is not None and d > margin for d in diffs):
        return REFERENCE_WRONG
    if all(d is not None and d < -margin for d in diffs):
        return REFERENCE_RIGHT
    return UNSURE


def corrected_text(reference: Sequence[str], edit: Edit) -> str:
    """The normalized reference with ``edit`` alone applied over its correction range."""
    start, stop, tokens = edit.fix
    return " ".join((*reference[:start], *tokens, *reference[stop:]))


def _mean(scores: Any) -> float:
    return float(scores.total) / len(scores.tokens) if scores.tokens else 0.0


def score_edits(
    edits: Sequence[Edit],
    references: Mapping[str, Sequence[str]],
    backend: Any,
    load: Callable[[str], np.ndarray],
) -> dict[str, EditScore]:
    """``edit key -> score`` of every edit by one scoring ``backend`` (one call per clip, scoring the
    reference and each single-edit text). ``load(clip_id)`` gives the clip's 16 kHz mono audio; a
    clip that cannot be loaded or scored gives its edits an ``error``, never a crash."""
    from asr_audit.models.base import SCORE, require_capability

    require_capability(backend, SCORE)
    spec = backend.identity().spec
    by_clip: dict[str, list[Edit]] = {}
    for e in edits:
        by_clip.setdefault(e.clip_id, []).append(e)
    out: dict[str, EditScore] = {}
    for cid, own in by_clip.items():
        ref = tuple(references.get(cid, ()))
        targets = [" ".join(ref), *(corrected_text(ref, e) for e in own)]
        try:
            audio = load(cid)
            scores = backend.score([audio] * len(targets), [""] * len(targets), targets)
        except AuditError as exc:
            for e in own:
                out[edit_key(e)] = EditScore(verifier=spec, error=" ".join(str(exc).split()))
            continue
        base = _mean(scores[0])
        for e, s in zip(own, scores[1:]):
            out[edit_key(e)] = EditScore(verifier=spec, mean_reference=base, mean_corrected=_mean(s))
    return out


def measured_precision(verifiers: Sequence[str], margin: float) -> Rate | None:
    """The measured precision of ``verifiers`` at ``margin`` (Wilson), or ``None`` when this
    configuration was never measured on planted truth."""
    kn = MEASURED.get((tuple(sorted(verifiers)), round(float(margin), 6)))
    return None if kn is None else wilson(*kn)


@dataclass(frozen=True, slots=True, kw_only=True)
class AudioVerification:
    """A :class:`Verification` from audio verifiers, with every edit's scores for the record."""

    verification: Verification
    scores: Mapping[str, tuple[EditScore, ...]]
    margin: float

    def step(self) -> Callable[[Sequence[Edit]], Verification]:
        """The run's verification step (``run_refdis(..., verify=...)``): these labels, whatever
        edits it is given (a run on the same files and settings mines the same edits)."""
        verification = self.verification
        return lambda edits: verification

    def details(self) -> dict[str, object]:
        """The JSON the refdis output keeps under ``verification.audio``: the margin and, per edit
        key, the label and each verifier's scores."""
        return {
            "margin": self.margin,
            "edits": {
                k: {"label": self.verification.labels[k].label, "scores": [s.to_dict() for s in v]}
                for k, v in self.scores.items()
            },
        }


def unique_edits(result: Any) -> list[Edit]:
    """A refdis result's full-panel and leave-one-out edits, each edit key once."""
    seen: set[str] = set()
    out: list[Edit] = []
    for e in [*result.edits, *(e for es in result.mining.loo_edits.values() for e in es)]:
        k = edit_key(e)
        if k not in seen:
            seen.add(k)
            out.append(e)
    return out


def verify_edits(
    result: Any,
    verifiers: Sequence[str],
    backends: Mapping[str, Any],
    load: Callable[[str], np.ndarray],
    *,
    margin: float = MARGIN,
    panel_members: Sequence[str] = (),
) -> AudioVerification:
    """Label every edit of a refdis ``result`` (full panel and leave-one-out) by the ``verifiers``
    (spec -> loaded backend in ``backends``) on the clips' audio (``load``). ``panel_members``: the
    panel models that are verifiers (from :func:`check_verifiers`), named in the notes."""
    if not (np.isfinite(margin) and margin >= 0):
        raise ConfigError(f"--verify-margin {margin!r} must be a number >= 0 (nats per token)")
    edits = unique_edits(result)
    refs = {cid: tuple(text.split()) for cid, text in result.references.items()}
    per = [score_edits(edits, refs, backends[v], load) for v in verifiers]
    scores = {edit_key(e): tuple(p[edit_key(e)] for p in per) for e in edits}
    labels = {k: EditLabel(label=decide(s, margin)) for k, s in scores.items()}
    measured = measured_precision(verifiers, margin)
    # measured on edits no verifier helped make: a panel member prefers its own mishearings
    precision = None if panel_members else measured
    if precision is not None:
        said = f"precision {precision.k}/{precision.n} measured on planted truth"
    elif measured is not None:
        said = (
            f"precision {measured.k}/{measured.n} was measured on edits no verifier helped mine, and here a panel "
            "member verifies: not carried, copy_low is 0 (verify with models outside the panel)"
        )
    else:
        said = "precision never measured on planted truth for these verifiers and margin; copy_low is 0"
    notes = [f"verifiers {', '.join(verifiers)} at margin {margin:g} nats/token: {said}"]
    notes += [
        f"panel member {m} is a verifier: it verifies edits it helped mine (its own rows excluded)"
        for m in panel_members
    ]
    errors = sum(1 for s in scores.values() if any(x.error is not None for x in s))
    if errors:
        notes.append(f"{errors} edit(s) could not be scored on their audio (unsure)")
    excluded = tuple(dict.fromkeys(n for v in verifiers for n in verifier_models(v)))
    return AudioVerification(
        verification=Verification(
            source=AUDIO,
            name=f"audio verification by {', '.join(verifiers)}",
            labels=labels,
            precision=precision if precision is not None else wilson(0, 0),
            excluded=excluded,
            notes=tuple(notes),
        ),
        scores=scores,
        margin=margin,
    )


def audio_loader(
    audio_root: str, references: Mapping[str, str], paths: Mapping[str, str] | None = None
) -> Callable[[str], np.ndarray]:
    """``clip id -> audio`` for clips at ``audio_root / clip id`` (an absolute id as it is; or at
    ``audio_root / paths[clip id]`` where ``paths`` names the file, e.g. a manifest's
    ``audio_filepath``), the folder checked first (one-line error)."""
    from pathlib import Path

    from asr_audit.audio.io import load_audio
    from asr_audit.corpus.clips import Clip

    root = Path(audio_root)
    if not root.is_dir():
        raise ConfigError(f"--audio-root {audio_root} is not a folder; fix: pass the folder holding the audio files")

    def load(cid: str) -> np.ndarray:
        rel = cid if paths is None else paths.get(cid, cid)
        return load_audio(Clip(cid, references.get(cid, ""), audio_path=str(root / rel)))

    return load


def verify_run(
    result: Any,
    verifiers: Sequence[str],
    audio_root: str | None,
    references: Mapping[str, str],
    *,
    tested: Iterable[str] = (),
    margin: float = MARGIN,
    paths: Mapping[str, str] | None = None,
    load: Callable[[str], np.ndarray] | None = None,
) -> AudioVerification:
    """:func:`verify_edits` of a refdis ``result`` with the verifiers loaded by spec and the audio
    under ``audio_root`` (or at ``audio_root / paths[clip id]``; raw ``references`` by clip id, for
    the loader's records), or by ``load`` (clip id -> audio) when given: refuses a verifier under
    test, and a run without audio."""
    from asr_audit.models.base import load_backend

    if audio_root is None and load is None:
        raise ConfigError(
            "--verify-with scores each edit on the clip's audio; fix: add --audio-root DIR (where the audio files are)"
        )
    members = check_verifiers(verifiers, tested, result.panel)
    if load is None:
        assert audio_root is not None
        load = audio_loader(audio_root, references, paths)
    backends = {v: load_backend(v) for v in verifiers}
    return verify_edits(result, verifiers, backends, load, margin=margin, panel_members=members)


def with_audio_details(data: Mapping[str, Any], av: AudioVerification) -> dict[str, Any]:
    """A refdis result dict already verified by ``av.step()`` with every edit's scores kept under
    ``verification.audio``."""
    out = dict(data)
    out["verification"] = {**dict(out.get("verification") or av.verification.to_dict()), "audio": av.details()}
    return out


def with_audio_verification(data: Mapping[str, Any], av: AudioVerification) -> dict[str, Any]:
    """A refdis result dict with ``av``'s verification applied (each model's ``verified``, see
    :func:`~asr_audit.probes.predfiles.verified.with_verification`) and every edit's scores kept
    under ``verification.audio``."""
    from asr_audit.probes.predfiles.verified import with_verification

    out = with_verification(data, av.verification)
    out["verification"] = {**out["verification"], "audio": av.details()}
    return out


def summary_line(av: AudioVerification) -> str:
    """One line for the terminal: the counts of each label and the precision used."""
    v = av.verification
    counts = {
        lab: sum(1 for x in v.labels.values() if x.label == lab) for lab in (REFERENCE_WRONG, REFERENCE_RIGHT, UNSURE)
    }
    p = v.precision
    prec = (
        f"precision {p.k}/{p.n} [{p.low:.2f}, {p.high:.2f}]"
        if p is not None and p.defined
        else "precision not measured"
    )
    return (
        f"{v.name}: {len(v.labels)} edits, {counts[REFERENCE_WRONG]} reference-wrong, "
        f"{counts[REFERENCE_RIGHT]} reference-right, {counts[UNSURE]} unsure; {prec}"
    )
