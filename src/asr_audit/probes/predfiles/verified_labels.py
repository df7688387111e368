"""People's labels as a verification: the sample they label, how labels combine, what they measure.

* :func:`draw_sample` — a seeded sample of a refdis run's edits, stratified by edit kind and
  position, each sampled edit carrying its weight ``N_h / n_h`` (the inverse of its inclusion
  probability in its stratum ``h``), so weighted rates over the sample are unbiased for the
  whole edit set. Without ``n`` every edit is taken with weight 1.
* :func:`labels_verification` — the labels of a :class:`~asr_audit.store.labels.LabelStore` as a
  :class:`~asr_audit.probes.predfiles.verified.Verification` (source ``LABELS_SOURCE``): "the panel
  is right" is ``REFERENCE_WRONG``, "the reference is right" ``REFERENCE_RIGHT``, "neither" and
  "can't tell" ``UNSURE``. With several annotators an edit takes the label more than half of the
  annotators who labelled it gave (two annotators: both), else ``UNSURE``
  (:func:`combine`).
* :func:`cohen_kappa` — agreement of two annotators on the edits both labelled, on the four
  choices, with the large-sample interval ``kappa ± 1.96 sqrt(po (1 - po) / (n (1 - pe)^2))``.
* :func:`labels_verify` — a labels file as the run's verification step
  (``run_refdis(..., verify=...)``: verified accept-ref and WER inflation), and
  :func:`labels_summary` — what the labels add under ``result["verification"]``: the miner's
  precision on the labelled edits overall and per edit kind (weighted, Wilson on Kish's effective
  size), the agreement of every pair of annotators and the runs the labels were made on;
  :func:`with_labels` applies both to a finished result dict.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from asr_audit.errors import ConfigError
from asr_audit.probes.core.probe import ProbeInputs
from asr_audit.probes.predfiles.refdis import Edit
from asr_audit.probes.predfiles.verified import (
    LABELS_SOURCE,
    REFERENCE_RIGHT,
    REFERENCE_WRONG,
    UNSURE,
    EditLabel,
    Verification,
    Verify,
    edit_key,
    labelled_precision,
    labeller_accuracy,
    weighted_rate,
    with_verification,
)
from asr_audit.stats.intervals import Z95, Rate, wilson
from asr_audit.store.labels import CANT_TELL, CHOICES, NEITHER, PANEL, REFERENCE, LabelRow

#: A choice on the page -> what it says of the edit.
CHOICE_LABEL = {PANEL: REFERENCE_WRONG, REFERENCE: REFERENCE_RIGHT, NEITHER: UNSURE, CANT_TELL: UNSURE}


def all_edits(result: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every edit a refdis result judges some model on (full panel and leave-one-out), each once,
    in the result's order."""
    seen: set[str] = set()
    out: list[Mapping[str, Any]] = []
    loo = result.get("loo_edits", {}) or {}
    for e in [*result.get("edits", []), *(e for m in sorted(loo) for e in loo[m])]:
        key = edit_key(e)
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out


def run_hash(result: Mapping[str, Any]) -> str:
    """A short hash naming a refdis run by what people label: its parameters, normalizer and edit
    keys (the same for a rerun on the same files and settings)."""
    body = {
        "params": result.get("params"),
        "normalizer": result.get("normalizer"),
        "edits": sorted(edit_key(e) for e in all_edits(result)),
    }
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:16]


def refdis_result_of(data: Mapping[str, Any], corpus: str | None, where: str) -> Mapping[str, Any]:
    """The refdis result in ``data``: a refdis ``--json`` output, or a run's ``results.json`` (its
    refdis probe's result for ``corpus``; ``corpus`` may be omitted when there is one)."""
    if data.get("probe") == "refdis" and "edits" in data:
        return data
    found = [p for p in data.get("probes", []) if p.get("probe") == "refdis"]
    if corpus is not None:
        found = [p for p in found if p.get("corpus") == corpus]
    if len(found) == 1:
        return dict(found[0]["result"])
    names = ", ".join(str(p.get("corpus")) for p in data.get("probes", []) if p.get("probe") == "refdis")
    if not found:
        raise ConfigError(
            f"{where} holds no refdis result{'' if corpus is None else f' for corpus {corpus!r}'}"
            f"{f' (corpora: {names})' if names else ''}; fix: pass refdis --json output or a run's results.json"
        )
    raise ConfigError(f"{where} holds refdis results for several corpora ({names}); fix: add --corpus NAME")


@dataclass(frozen=True, slots=True)
class SampledEdit:
    """One edit of a sample, its stratum and its weight (inverse inclusion probability)."""

    edit: Mapping[str, Any]
    key: str
    stratum: str
    weight: float


def stratum(edit: Mapping[str, Any]) -> str:
    """An edit's stratum: ``kind/position``."""
    return f"{edit.get('kind', '?')}/{edit.get('position', '?')}"


def _allocate(sizes: Mapping[str, int], n: int) -> dict[str, int]:
    """``n`` draws shared among strata in proportion to their sizes (largest remainders), at least
    one per stratum when ``n`` allows it, never more than a stratum holds."""
    total = sum(sizes.values())
    if n >= total:
        return dict(sizes)
    exact = {h: n * s / total for h, s in sizes.items()}
    alloc = {h: min(sizes[h], max(1 if n >= len(sizes) else 0, math.floor(x))) for h, x in exact.items()}
    while sum(alloc.values()) > n:  # the minimum of one pushed it over: take from the largest
        h = max((h for h in alloc if alloc[h] > 1), key=lambda h: (alloc[h] - exact[h], h))
        alloc[h] -= 1
    for h in sorted(exact, key=lambda h: (-(exact[h] - math.floor(exact[h])), h)):
        if sum(alloc.values()) >= n:
            break
        if alloc[h] < sizes[h]:
            alloc[h] += 1
    while sum(alloc.values()) < n:  # rounding left room: fill strata that still have edits
        h = max((h for h in alloc if alloc[h] < sizes[h]), key=lambda h: (sizes[h] - alloc[h], h))
        alloc[h] += 1
    return alloc


def draw_sample(result: Mapping[str, Any], n: int | None, seed: int) -> list[SampledEdit]:
    """A seeded stratified sample of ``n`` of the run's edits (every edit, weight 1, when ``n`` is
    ``None`` or covers them all), in a seeded presentation order.

    >>> edits = [{"clip_id": f"c{i}", "kind": "substitution" if i < 6 else "insertion", "position": "start",
    ...           "ref_indices": [0], "ref_tokens": ["a"], "alt_text": "b"} for i in range(8)]
    >>> s = draw_sample({"edits": edits}, 4, seed=1)
    >>> sorted((x.stratum, x.weight) for x in s)
    [('insertion/start', 2.0), ('substitution/start', 2.0), ('substitution/start', 2.0), ('substitution/start', 2.0)]
    >>> sum(x.weight for x in s)
    8.0
    """
    edits = all_edits(result)
    if n is not None and n < 1:
        raise ConfigError(f"--sample {n} must be at least 1")
    by: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for e in edits:
        by[stratum(e)].append(e)
    rng = np.random.default_rng(seed)
    alloc = _allocate({h: len(v) for h, v in by.items()}, len(edits) if n is None else n)
    chosen: list[SampledEdit] = []
    for h in sorted(by):
        group = by[h]
        take = alloc[h]
        if take == 0:
            continue
        idx = sorted(rng.choice(len(group), size=take, replace=False).tolist()) if take < len(group) else range(take)
        chosen.extend(SampledEdit(group[i], edit_key(group[i]), h, len(group) / take) for i in idx)
    order = rng.permutation(len(chosen))
    return [chosen[i] for i in order]


def combine(choices: Sequence[str]) -> str:
    """One edit's label from its annotators' choices: the label more than half of them gave, else
    ``UNSURE``.

    >>> combine(["panel"]), combine(["panel", "reference"]), combine(["panel", "panel", "neither"])
    ('reference-wrong', 'unsure', 'reference-wrong')
    """
    counts = Counter(CHOICE_LABEL[c] for c in choices)
    label, k = counts.most_common(1)[0] if counts else (UNSURE, 0)
    return label if 2 * k > len(choices) else UNSURE


@dataclass(frozen=True, slots=True)
class Kappa:
    """Cohen's kappa of two annotators over ``n`` edits both labelled."""

    a: str
    b: str
    n: int
    agreement: float | None
    kappa: float | None
    low: float | None
    high: float | None

    def to_dict(self) -> dict[str, object]:
        return {
            "annotators": [self.a, self.b],
            "n": self.n,
            "agreement": self.agreement,
            "kappa": self.kappa,
            "ci_low": self.low,
            "ci_high": self.high,
        }


def cohen_kappa(a: str, b: str, pairs: Sequence[tuple[str, str]]) -> Kappa:
    """Cohen's kappa over the four choices of ``pairs`` (annotator a's, annotator b's), with the
    large-sample 95% interval (undefined without pairs or when chance agreement is 1).

    >>> k = cohen_kappa("x", "y", [("panel", "panel")] * 8 + [("reference", "reference")] * 8 + [("panel", "neither")] * 4)
    >>> round(k.kappa, 3), k.n
    (0.667, 20)
    """
    n = len(pairs)
    if n == 0:
        return Kappa(a, b, 0, None, None, None, None)
    po = sum(x == y for x, y in pairs) / n
    ca, cb = Counter(x for x, _ in pairs), Counter(y for _, y in pairs)
    pe = sum(ca[c] * cb[c] for c in CHOICES) / (n * n)
    if pe >= 1.0:
        return Kappa(a, b, n, po, None, None, None)
    kappa = (po - pe) / (1 - pe)
    se = math.sqrt(max(po * (1 - po), 0.0) / (n * (1 - pe) ** 2))
    return Kappa(a, b, n, po, kappa, max(-1.0, kappa - Z95 * se), min(1.0, kappa + Z95 * se))


def agreements(rows: Iterable[LabelRow]) -> list[Kappa]:
    """Cohen's kappa of every pair of annotators on the edits both labelled (latest rows)."""
    by: dict[str, dict[str, str]] = defaultdict(dict)
    for r in rows:
        by[r.annotator][r.edit_key] = r.choice
    names = sorted(by)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            common = sorted(set(by[a]) & set(by[b]))
            out.append(cohen_kappa(a, b, [(by[a][k], by[b][k]) for k in common]))
    return out


def labels_verification(rows: Sequence[LabelRow], name: str = "asr-audit annotate") -> Verification:
    """The latest rows of a labels file (:meth:`~asr_audit.store.labels.LabelStore.latest`) as a
    verification, by :func:`combine`; an edit's weight is its first label's sampling weight."""
    by: dict[str, list[LabelRow]] = defaultdict(list)
    for r in rows:
        by[r.edit_key].append(r)
    labels = {k: EditLabel(label=combine([r.choice for r in rs]), weight=rs[0].weight) for k, rs in by.items()}
    annotators = sorted({r.annotator for r in rows})
    note = (
        f"{len(annotators)} annotators ({', '.join(annotators)}): an edit takes the label more than half of "
        "its annotators gave, else unsure"
        if len(annotators) > 1
        else f"one annotator ({', '.join(annotators) or 'none'})"
    )
    precision, precision_note = labels_precision(by, labels)
    return Verification(
        source=LABELS_SOURCE, name=name, labels=labels, precision=precision, notes=(note, precision_note)
    )


def labels_precision(by_edit: Mapping[str, Sequence[LabelRow]], labels: Mapping[str, EditLabel]) -> tuple[Rate, str]:
    """The precision of the labels' "reference-wrong" calls, and a sentence saying how it was had.

    People err: a labeller of accuracy q < 1 calls some correct references wrong, and on those
    edits a model that hears better than the panel "writes the reference" — so a copy rate read
    off imperfect labels is biased upward for exactly the models the verdict must protect
    (``docs/refdis.md``, simulated labellers). The labeller's accuracy is measured from the edits
    two people labelled (:func:`~asr_audit.probes.predfiles.verified.labeller_accuracy`: the first
    two annotators' definite choices, agreeing or not) and carried into the labels' precision
    (:func:`~asr_audit.probes.predfiles.verified.labelled_precision`), which bounds the copy rate
    (``copy_low``). With no edit labelled twice the accuracy is unmeasured: the precision's lower
    bound is 0, so the labels give rates but cannot support a copying claim.
    """
    definite = (REFERENCE_WRONG, REFERENCE_RIGHT)
    agree = double = 0
    for rows in by_edit.values():
        seen: dict[str, str] = {}
        for r in rows:
            seen.setdefault(r.annotator, CHOICE_LABEL[r.choice])
        pair = list(seen.values())[:2]
        if len(pair) == 2 and all(lab in definite for lab in pair):
            double += 1
            agree += pair[0] == pair[1]
    judged = [lab.label for lab in labels.values() if lab.label in definite]
    share = wilson(sum(lab == REFERENCE_WRONG for lab in judged), len(judged))
    accuracy = labeller_accuracy(agree, double)
    precision = labelled_precision(accuracy, share)
    if double == 0:
        return precision, (
            "labeller accuracy unmeasured (no edit labelled by two annotators): the labels give rates but no "
            "copying claim; have a second annotator label a sample (asr-audit annotate --annotator B)"
        )
    return precision, (
        f"labeller accuracy {accuracy.rate:.2f} [{accuracy.low:.2f}, {accuracy.high:.2f}] from {agree} of {double} "
        f"edits two annotators agreed on; precision of reference-wrong labels >= {precision.low:.2f}"
    )


def _matched(rows: Sequence[LabelRow], keys: set[str], where: str) -> list[LabelRow]:
    """The rows labelling one of ``keys`` (a run's edits); a one-line error when there is none."""
    if not rows:
        raise ConfigError(f"{where} holds no labels; fix: label some edits with asr-audit annotate first")
    matched = [r for r in rows if r.edit_key in keys]
    if not matched:
        raise ConfigError(
            f"none of the {len({r.edit_key for r in rows})} labelled edits of {where} is an edit of this refdis run; "
            "fix: pass the labels made on this run's edits (same predictions, panel and settings)"
        )
    return matched


def labels_summary(result: Mapping[str, Any], rows: Sequence[LabelRow], where: str) -> dict[str, Any]:
    """What a verified ``result`` (its ``verification`` made from ``rows``) adds under
    ``result["verification"]``: the miner's precision overall and per edit kind (weighted), every
    pair of annotators' agreement, the annotators, this run's hash and those the labels were made on."""
    edits = {edit_key(e): e for e in all_edits(result)}
    matched = _matched(rows, set(edits), where)
    verification = labels_verification(matched)
    judged = [(k, lab) for k, lab in verification.labels.items() if lab.label != UNSURE]
    by_kind: dict[str, list[tuple[bool, float]]] = defaultdict(list)
    for k, lab in judged:
        by_kind[str(edits[k].get("kind"))].append((lab.label == REFERENCE_WRONG, lab.weight))
    this = run_hash(result)
    runs = sorted({r.run_hash for r in matched})
    notes = list((result.get("verification") or {}).get("notes", []))
    if any(h != this for h in runs):
        notes.append("some labels were made on another run; they are matched by edit key")
    return {
        "miner_precision": weighted_rate([(lab.label == REFERENCE_WRONG, lab.weight) for _, lab in judged]).to_dict(),
        "miner_precision_by_kind": {kind: weighted_rate(v).to_dict() for kind, v in sorted(by_kind.items())},
        "agreement": [k.to_dict() for k in agreements(matched)],
        "annotators": sorted({r.annotator for r in matched}),
        "run_hash": this,
        "labelled_runs": runs,
        "unmatched_labels": len(rows) - len(matched),
        "notes": notes,
        "labelled": _examples(edits, verification, matched),
    }


def _examples(
    edits: Mapping[str, Mapping[str, Any]], verification: Verification, rows: Sequence[LabelRow]
) -> list[dict[str, object]]:
    """The labelled edits for the report: the edit, its combined label and weight, each
    annotator's choice, in edit-key order."""
    choices: dict[str, dict[str, str]] = defaultdict(dict)
    for r in rows:
        choices[r.edit_key][r.annotator] = r.choice
    out: list[dict[str, object]] = []
    for key in sorted(verification.labels):
        e, lab = edits[key], verification.labels[key]
        out.append(
            {
                "key": key,
                "clip_id": e.get("clip_id"),
                "kind": e.get("kind"),
                "position": e.get("position"),
                "reference": " ".join(e.get("ref_tokens") or ()),
                "panel": e.get("alt_text") or "",
                "label": lab.label,
                "weight": lab.weight,
                "choices": dict(sorted(choices[key].items())),
            }
        )
    return out


def with_labels(result: Mapping[str, Any], rows: Sequence[LabelRow], where: str) -> dict[str, Any]:
    """``result`` (a refdis ``to_dict``) verified by the labels ``rows`` (the latest of each
    annotator and edit) with :func:`~asr_audit.probes.predfiles.verified.with_verification`, and
    :func:`labels_summary` under ``result["verification"]``. ``where`` names the labels file in
    errors."""
    keys = {edit_key(e) for e in all_edits(result)}
    out = with_verification(result, labels_verification(_matched(rows, keys, where)))
    out["verification"] = {**out["verification"], **labels_summary(out, rows, where)}
    return out


def read_labels(path: str | Path) -> list[LabelRow]:
    """Every annotator's latest labels in the labels file ``path`` (a missing file: one line)."""
    from asr_audit.store.labels import open_labels

    with open_labels(path) as store:
        return store.latest()


def labels_verify(path: str | Path) -> Verify:
    """The verification step (:data:`~asr_audit.probes.predfiles.verified.Verify`) of a labels
    file: read now (a bad file fails before any work), it labels a run's edits when called
    (``asr-audit refdis --labels FILE``, ``[probes.refdis] labels = "FILE"``); add
    :func:`labels_summary` to the result's ``verification`` afterwards (:func:`with_labels_summary`)."""
    rows = read_labels(path)
    where = str(path)
    _matched(rows, {r.edit_key for r in rows}, where)  # an empty file fails now

    def verify(edits: Sequence[Edit]) -> Verification:
        return labels_verification(_matched(rows, {edit_key(e) for e in edits}, where))

    return verify


def with_labels_summary(result: Mapping[str, Any], path: str | Path) -> dict[str, Any]:
    """A refdis result verified by :func:`labels_verify` (``path``), with :func:`labels_summary`
    under its ``verification``."""
    out = dict(result)
    out["verification"] = {**out["verification"], **labels_summary(result, read_labels(path), str(path))}
    return out


def edits_verify(inputs: ProbeInputs, truth: str | None, labels: str | None) -> Verify | None:
    """The step that verifies a probe's mined edits (refdis, the gate): people's ``labels`` (a labels
    file, read from :attr:`ProbeInputs.base` when relative) or a calibration folder's planted ``truth``
    (through the front door's :attr:`ProbeInputs.verify_truth`: ``calib`` sits above the probes), or
    ``None``. The files are read now, so a bad one fails before any work."""
    if labels is not None:
        return labels_verify(inputs.resolve(labels))
    if truth is None:
        return None
    if inputs.verify_truth is None:
        raise ConfigError(
            f"corpus {inputs.corpus!r}: truth verifies the edits with a calibration folder, and this caller "
            "cannot read one; fix: run the probe through asr-audit or asr_audit.api"
        )
    return inputs.verify_truth(Path(truth))
