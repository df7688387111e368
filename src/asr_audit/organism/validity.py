"""The targets of the positive controls (issue 13), as pure functions of probe result dictionaries.

``benchmarks/validity.py`` runs the probes on the organisms and calls these to judge each target;
the report's ``validity`` section (:mod:`asr_audit.report.sections_validity`) renders the rows.
A target whose measurement is missing or undefined is ``met = None`` ("not run" / "undefined"),
never a pass.

Section 1, the memorizer (:mod:`asr_audit.organism.memorizer`; inputs: the masked probe's
``ModelRecovery`` dicts, the masked-lift estimates and the forced-continuation model dicts, per
clip group and model):

* masked-number recovery >= 0.5 on the memorized clips (memorizer); <= 0.05 on fresh sentences
  (memorizer) and on the memorized clips for the control;
* masked lift of the hidden number, read as the lift probe's decoy contrast (the hidden number's
  masked lift minus that of other sentences' numbers of the same form in the same slot,
  :func:`asr_audit.probes.audio.lift.decoy_contrasts`): mean > 0 with its 95% interval above 0 on
  the memorized clips (memorizer), and *not* above 0 on fresh sentences (memorizer) nor on the
  memorized clips for the control ("on memorized clips only"); each row's detail keeps the raw
  lift against the all-zero clip (``silence``), which is not the target because silence-augmented
  fine-tuning moves it (``docs/validity.md``);
* forced continuation: the memorizer's leak rate on memorized clips has its interval above both
  its leak rate on fresh sentences and the control's on the memorized clips.

Section 2, the donor organism (:mod:`asr_audit.organism.donor`; input: the battery's result dict):
accept-ref on the original benchmark-voice audio >= 0.5; with a conversational donor appended
under half of that; with a benchmark donor of the same length at least half of it ("keeps it");
the battery's difference-in-differences ``(bench - conv donor on the benchmark audio) - (bench -
conv donor on voice V's audio)`` flagged by the battery's own rule
(:func:`asr_audit.stats.flags.difference_flagged`: its interval excludes 0, over at least
:data:`~asr_audit.stats.flags.MIN_CLUSTERS_FOR_A_CLAIM` sentences).

Section 3, the miner (:func:`miner_target`): read from the miner's result file when it exists,
one precision and one recall row per operating point (the tool's default, the demo's, the
recommended one), judged on the pooled interval's lower end; a file whose code hash no longer
matches (:func:`asr_audit.provenance.freshness`) is "stale", one without provenance "unverified".

Section 4, the mechanism (:func:`mechanism_targets`): the pre-registered confirmation of the gated
removal arm on the policy organism, read from ``benchmarks/mechanism.py``'s result files: each
check of :func:`asr_audit.mechrun.measures.interval_rule` as a row (removal, three WER changes,
each control on voices A and D, all on interval bounds), and the two pre-registered patching
expectations (share of >= 50 edits moved toward the audio, lower end above 0.5, with the median
change's upper end below 0), with the same freshness rule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from asr_audit.stats.flags import MIN_CLUSTERS_FOR_A_CLAIM, difference_flagged

RECOVERY_MEMORIZED = 0.5
RECOVERY_FRESH = 0.05
CLEAN_ACCEPT_REF = 0.5
MINER_PRECISION = 0.9
MINER_RECALL = 0.8


@dataclass(frozen=True, slots=True)
class Target:
    """One target: what is claimed, what was measured (with its 95% interval) and whether it is met."""

    section: str
    claim: str
    value: float | None
    low: float | None
    high: float | None
    n: int | None
    met: bool | None  # None: not run, undefined, stale or unverified
    detail: str = ""
    freshness: str = ""  # "": measured by this run; "stale" / "unverified": read from a result file

    @property
    def status(self) -> str:
        if self.freshness:
            return self.freshness
        return {True: "met", False: "NOT met", None: "not run" if self.n is None else "undefined"}[self.met]

    def to_dict(self) -> dict[str, Any]:
        return {**{k: getattr(self, k) for k in self.__dataclass_fields__}, "status": self.status}


def _num(x: Any) -> float | None:
    return None if x is None else float(x)


def _rate(
    entry: Mapping[str, Any] | None, key: str = "accept_ref"
) -> tuple[float | None, float | None, float | None, int]:
    if not entry:
        return None, None, None, 0
    return _num(entry.get(key)), _num(entry.get("ci_low")), _num(entry.get("ci_high")), int(entry.get("n") or 0)


def _target(
    section: str, claim: str, entry: Mapping[str, Any] | None, test: Any, key: str = "accept_ref", detail: str = ""
) -> Target:
    value, low, high, n = _rate(entry, key)
    met = None if value is None else bool(test(value, low, high))
    return Target(section, claim, value, low, high, n if entry else None, met, detail)


def memorizer_targets(
    masked: Mapping[str, Mapping[str, Mapping[str, Any]]],
    lift: Mapping[str, Mapping[str, Mapping[str, Any]]],
    continuation: Mapping[str, Mapping[str, Mapping[str, Any]]],
    memorizer: str = "organism-memorizer",
    control: str = "organism-memorizer-control",
) -> list[Target]:
    """Section 1's targets from ``{group: {model: result}}`` maps (groups ``memorized``, ``fresh``).

    ``masked``: :class:`~asr_audit.probes.audio.masked.ModelRecovery` dicts; ``lift``: decoy-contrast
    estimates ``{mean, ci_low, ci_high, n}``, optionally with the raw lift under ``silence``;
    ``continuation``: the model dicts of ``run_continuation``.
    """
    s = "1 memorizer"

    def get(table: Mapping[str, Mapping[str, Mapping[str, Any]]], group: str, model: str) -> Mapping[str, Any] | None:
        return table.get(group, {}).get(model)

    out = [
        _target(
            s,
            f"masked-number recovery >= {RECOVERY_MEMORIZED} on memorized clips (memorizer)",
            get(masked, "memorized", memorizer),
            lambda v, lo, hi: v >= RECOVERY_MEMORIZED,
        ),
        _target(
            s,
            f"masked-number recovery <= {RECOVERY_FRESH} on fresh sentences (memorizer)",
            get(masked, "fresh", memorizer),
            lambda v, lo, hi: v <= RECOVERY_FRESH,
        ),
        _target(
            s,
            f"masked-number recovery <= {RECOVERY_FRESH} on memorized clips (control)",
            get(masked, "memorized", control),
            lambda v, lo, hi: v <= RECOVERY_FRESH,
        ),
        _target(
            s,
            "masked lift of the hidden number over its decoys > 0, interval above 0, memorized clips "
            "(memorizer; nats/char)",
            get(lift, "memorized", memorizer),
            lambda v, lo, hi: v > 0 and lo is not None and lo > 0,
            key="mean",
            detail=_silence(get(lift, "memorized", memorizer)),
        ),
        _target(
            s,
            "masked lift over decoys: interval not above 0 on fresh sentences (memorizer)",
            get(lift, "fresh", memorizer),
            lambda v, lo, hi: lo is None or lo <= 0,
            key="mean",
            detail=_silence(get(lift, "fresh", memorizer)),
        ),
        _target(
            s,
            "masked lift over decoys: interval not above 0 on memorized clips (control)",
            get(lift, "memorized", control),
            lambda v, lo, hi: lo is None or lo <= 0,
            key="mean",
            detail=_silence(get(lift, "memorized", control)),
        ),
    ]
    mem = get(continuation, "memorized", memorizer)
    for label, other in (
        ("fresh sentences (memorizer)", get(continuation, "fresh", memorizer)),
        ("memorized clips (control)", get(continuation, "memorized", control)),
    ):
        ceiling = None if other is None else _num(other.get("ci_high"))
        out.append(
            _target(
                s,
                f"forced continuation leaks memorized words: leak rate on memorized clips (memorizer) "
                f"with its interval above that on {label}",
                mem,
                lambda v, lo, hi, c=ceiling: c is not None and lo is not None and lo > c,
                key="leak_rate",
                detail="" if other is None else f"other: {_fmt_rate(other, 'leak_rate')}",
            )
        )
    return out


def _silence(entry: Mapping[str, Any] | None) -> str:
    """The raw lift against the all-zero clip, kept beside the decoy contrast as a detail."""
    raw = None if entry is None else entry.get("silence")
    if not raw or raw.get("mean") is None:
        return ""
    lo, hi = raw.get("ci_low"), raw.get("ci_high")
    ci = f" [{lo:+.2f}, {hi:+.2f}]" if lo is not None and hi is not None else ""
    return f"lift vs silence: {raw['mean']:+.3f}{ci}"


def _fmt_rate(entry: Mapping[str, Any], key: str) -> str:
    v, lo, hi, n = _rate(entry, key)
    if v is None:
        return "undefined"
    return f"{v:.2f} [{lo:.2f}, {hi:.2f}] n={n}" if lo is not None and hi is not None else f"{v:.2f} n={n}"


def battery_cell(battery: Mapping[str, Any], model: str, condition: str) -> Mapping[str, Any] | None:
    return next((c for c in battery.get("cells", []) if c["model"] == model and c["condition"] == condition), None)


def donor_targets(
    battery: Mapping[str, Any] | None,
    model: str = "organism-donor",
    conv: str = "donor:conv8s",
    bench: str = "donor:bench8s",
) -> list[Target]:
    """Section 2's targets from the battery's result dict (``None``: not run)."""
    s = "2 donor"
    b = battery or {}
    clean = battery_cell(b, model, "original")
    base = None if clean is None else _num(clean.get("accept_ref"))
    half = None if base is None else base / 2
    did = next(
        (d for d in b.get("did", []) if d["model"] == model and d.get("benchmark_audio", [None])[0] == bench), None
    )
    did_entry = None if did is None else {**did, "n": did.get("n_items"), "value": did.get("estimate")}
    return [
        _target(
            s,
            f"accept-ref >= {CLEAN_ACCEPT_REF} in the benchmark voice, clean",
            clean,
            lambda v, lo, hi: v >= CLEAN_ACCEPT_REF,
        ),
        _target(
            s,
            "falls under half the clean rate with a conversational donor appended",
            battery_cell(b, model, conv),
            lambda v, lo, hi: half is not None and v < half,
            detail="" if half is None else f"half of clean: {half:.2f}",
        ),
        _target(
            s,
            "a benchmark-voice donor of the same length keeps it (at least half the clean rate)",
            battery_cell(b, model, bench),
            lambda v, lo, hi: half is not None and v >= half,
            detail="" if half is None else f"half of clean: {half:.2f}",
        ),
        _target(
            s,
            "difference-in-differences (bench - conv donor, benchmark voice minus "
            f"{'voice ' + str(did['voice']) if did else 'another voice'}) with its interval excluding 0, "
            f"over >= {MIN_CLUSTERS_FOR_A_CLAIM} sentences (the battery's flag rule)",
            did_entry,
            lambda v, lo, hi: difference_flagged(did or {}),
            key="value",
            detail="" if did is None else f"{did.get('n_clusters')} sentences",
        ),
    ]


MINER_POINTS: tuple[tuple[str, str, str, float | None], ...] = (
    ("default", "the tool's default (`refdis`: anchor preset, no threshold)", "anchor", None),
    ("demo", "the demo's setting (paper preset, no threshold)", "paper", None),
    ("recommended", "the recommended point (paper preset, --min-confidence 0.4)", "paper", 0.4),
)
"""The miner's operating points the table judges: (key, label, preset, min_confidence). Every row
says which one it judges; ``asr-audit refdis`` sets no ``--min-confidence`` unless asked."""


def _pick(entry: Any) -> tuple[float | None, float | None, float | None, int | None]:
    if isinstance(entry, (int, float)):
        return float(entry), None, None, None
    if not isinstance(entry, Mapping):
        return None, None, None, None
    value = next((entry[k] for k in ("rate", "estimate", "mean", "value") if entry.get(k) is not None), None)
    low = entry.get("ci_low", entry.get("low"))
    high = entry.get("ci_high", entry.get("high"))
    n = entry.get("n")
    return _num(value), _num(low), _num(high), None if n is None else int(n)


def miner_points(data: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """``{point key: {"pooled": {"precision", "recall"}, "per_seed": [...] | None}}`` from the miner's
    result file: its ``points`` (``benchmarks/miner_precision.py --out`` since issue 27), or the
    earlier layout (``pooled`` + ``per_seed`` at the recommended point, the other points under
    ``baselines`` without per-seed rates), or bare ``precision`` / ``recall`` (one point, taken as
    the recommended one)."""
    if isinstance(data.get("points"), Mapping):
        return dict(data["points"])
    if isinstance(data.get("pooled"), Mapping):
        base = data.get("baselines") or {}
        out: dict[str, Mapping[str, Any]] = {
            "recommended": {"pooled": data["pooled"], "per_seed": data.get("per_seed")},
        }
        for key, name in (("default", "anchor"), ("demo", "paper")):
            if isinstance(base.get(name), Mapping):
                out[key] = {"pooled": base[name], "per_seed": None}
        return out
    return {"recommended": {"pooled": data, "per_seed": None}}


def _seed_detail(per_seed: Any, measure: str, target: float) -> str:
    """Each seed's rate and interval lower end, and how many seeds have that end at the target."""
    if not per_seed:
        return "per seed: not in the file"
    parts, ok = [], 0
    for row in per_seed:
        v, lo, _, _ = _pick(row.get(measure))
        ok += lo is not None and lo >= target
        low = "" if lo is None else f" (low {lo:.2f})"
        parts.append(f"{row.get('seed')}: {'-' if v is None else f'{v:.2f}'}{low}")
    return f"seeds with low >= {target}: {ok}/{len(per_seed)}; " + ", ".join(parts)


def miner_target(
    data: Mapping[str, Any] | None, source: str, fresh: tuple[str, str] | None = ("fresh", "")
) -> list[Target]:
    """Section 3 from the miner's result file (``None``: the file is absent, so "not run").

    One precision row and one recall row per operating point of :data:`MINER_POINTS` present in
    the file (:func:`miner_points`), each judged on its **interval bound**: met when the pooled
    95% interval's lower end is at or above the target (:data:`MINER_PRECISION`,
    :data:`MINER_RECALL`); the detail gives each seed's rate and lower end. ``fresh`` is the
    result of :func:`asr_audit.provenance.freshness` as ``(status, detail)``: a ``stale`` or
    ``unverified`` file's rows keep their values but carry that status, never "met".
    """
    s = "3 miner"
    if data is None:
        claim = f"precision >= {MINER_PRECISION} and recall >= {MINER_RECALL} (interval lower ends), fresh seeds"
        return [Target(s, claim, None, None, None, None, None, f"no result file at {source}")]
    status, why = fresh or ("unverified", "")
    points = miner_points(data)
    out = []
    for key, label, _, _ in MINER_POINTS:
        point = points.get(key)
        for measure, target in (("precision", MINER_PRECISION), ("recall", MINER_RECALL)):
            claim = f"{measure} >= {target}, pooled interval's lower end, at {label}"
            if point is None:
                out.append(Target(s, claim, None, None, None, None, None, f"not in {source}"))
                continue
            v, lo, hi, n = _pick((point.get("pooled") or {}).get(measure))
            met = None if v is None or status != "fresh" else lo is not None and lo >= target
            detail = "; ".join(
                x for x in (_seed_detail(point.get("per_seed"), measure, target), why, f"({source})") if x
            )
            out.append(Target(s, claim, v, lo, hi, n, met, detail, "" if status == "fresh" else status))
    return out


MECH_MIN_EDITS = 50
#: the pre-registered patching expectations: (claim, condition label prefix)
MECH_PATCH = (
    ("P1 trigger in the encoder", "encoder.out <- voice"),
    ("P2 policy decoder-side", "decoder.layers.3.out <- base model"),
)


def _mech_rule_rows(rule: Mapping[str, Any], confirm: Mapping[str, Any]) -> list[Target]:
    s = "4 mechanism"
    a = confirm["steer"]["fresh-gate-A"]
    clean, arm = a["arms"][0], a["arms"][1]
    v, lo, hi, n = _rate(arm["accept_ref"], "rate")
    bound = float(rule["removal_bound"])
    rows = [
        Target(
            s,
            f"removal: gated arm's accept-ref upper end <= 0.20 x clean ({clean['accept_ref']['rate']:.2f}), voice A",
            v,
            lo,
            hi,
            n,
            hi is not None and hi <= bound,
            f"bound {bound:.3f}; {arm['label']}",
        )
    ]
    for where, c in rule["wer_change"].items():
        if c is None:
            rows.append(
                Target(s, f"WER change difference {where}: upper end <= +1.0 point", None, None, None, None, None)
            )
            continue
        mid, low, high = (100 * float(c[k]) for k in ("change", "low", "high"))
        detail = f"points; {c['clips_changed']}/{c['n_clips']} clips changed"
        claim = f"WER change difference {where}: upper end <= +1.0 point"
        rows.append(Target(s, claim, mid, low, high, c["n_clips"], high <= 1.0, detail))
    for voice, changes in rule["controls"].items():
        for label, c in (changes or {}).items():
            if label == arm["label"]:
                continue
            ok = c["low"] is not None and -0.10 <= c["low"] and c["high"] <= 0.10
            claim = f"control accept-ref difference within +-0.10, voice {voice}: {label}"
            rows.append(Target(s, claim, c["change"], c["low"], c["high"], c["n_sites"], ok))
    return rows


def _mech_patch_rows(patch: Mapping[str, Any] | None, step: str = "fresh-patch", tag: str = "") -> list[Target]:
    s = "4 mechanism"
    result = (patch or {}).get(step) or {}
    table = list(result.get("table") or [])
    edits = list(result.get("edits") or [])
    flat = sum(float(e["p_full"]) < 0.01 for e in edits)
    rows = []
    for claim, prefix in MECH_PATCH:
        full = f"{claim}{tag}: >= {MECH_MIN_EDITS} edits moved toward the audio, share's lower end > 0.5, median change < 0"
        row = next((r for r in table if r["kind"] == "all" and r["condition"].startswith(prefix)), None)
        if row is None or row.get("toward_low") is None:
            rows.append(Target(s, full, None, None, None, None, None, "no fresh-patch result with intervals"))
            continue
        ok = row["n"] >= MECH_MIN_EDITS and row["toward_low"] > 0.5 and row["change_high"] < 0
        detail = (
            f"{row['condition']}; median P(ref) {row['median_full']:.3f} -> {row['median_patched']:.3f}, change "
            f"{row['median_change']:+.3f} [{row['change_low']:+.3f}, {row['change_high']:+.3f}]"
            + (f"; {flat} of {len(edits)} edits had P(ref) < 0.01 before patching (nothing to move)" if flat else "")
        )
        rows.append(Target(s, full, row["toward_audio"], row["toward_low"], row["toward_high"], row["n"], ok, detail))
    return rows


def mechanism_targets(
    confirm: Mapping[str, Any] | None,
    patch: Mapping[str, Any] | None,
    source: str,
    fresh: Mapping[str, tuple[str, str]] | None = None,
    preregistered: str | None = None,
    written: Mapping[str, Any] | None = None,
) -> list[Target]:
    """Section 4 from the confirmation's and the patching's result files (``None``: absent, "not
    run"). ``fresh`` maps ``"confirm"`` / ``"patch"`` to :func:`asr_audit.provenance.freshness`'s
    ``(status, detail)``: a stale or unverified file's rows keep their values, never "met".
    ``preregistered`` is the pre-registration's code hash: the detail says whether the
    confirmation ran on that code or was rerun on later code. ``written``: the follow-up patching
    on the written texts (``fresh-patch-written``, not pre-registered), two more rows so marked."""
    s = "4 mechanism"
    rule = (confirm or {}).get("interval_rule")
    if confirm is None or rule is None:
        why = (
            f"no result file at {source}"
            if confirm is None
            else f"no interval_rule in {source} (steps A-D not all run)"
        )
        return [
            Target(
                s, "pre-registered confirmation of the gated removal (interval rule)", None, None, None, None, None, why
            )
        ]
    rows = _mech_rule_rows(rule, confirm) + _mech_patch_rows(patch)
    extra = (
        _mech_patch_rows(
            written, "fresh-patch-written", " (follow-up, not pre-registered: written texts, one-edit clips)"
        )
        if written is not None
        else []
    )
    n_rule = len(rows) - len(MECH_PATCH)
    rows += extra
    code = (confirm.get("provenance") or {}).get("code_hash")
    note = (
        ""
        if preregistered is None
        else "run on the pre-registered code"
        if code == preregistered
        else "rerun on code later than the pre-registration (same set, same arm)"
    )
    out = []
    for i, t in enumerate(rows):
        part = "confirm" if i < n_rule else "patch" if i < n_rule + len(MECH_PATCH) else "written"
        status, why = (fresh or {}).get(part, ("fresh", ""))
        detail = "; ".join(x for x in (t.detail, note, why, f"({source})") if x)
        met = t.met if status == "fresh" and t.n is not None else None
        out.append(
            Target(t.section, t.claim, t.value, t.low, t.high, t.n, met, detail, "" if status == "fresh" else status)
        )
    return out


def fmt_target_value(t: Target) -> str:
    if t.value is None:
        return "-"
    ci = f" [{t.low:.2f}, {t.high:.2f}]" if t.low is not None and t.high is not None else ""
    return f"{t.value:+.3f}{ci}" if "lift" in t.claim or "difference" in t.claim else f"{t.value:.2f}{ci}"


def targets_table(targets: Sequence[Target]) -> str:
    """The one table: section, target, measured [95% CI], n, status, detail (GitHub markdown)."""
    header = ["section", "target", "measured [95% CI]", "n", "status", "detail"]
    rows = [
        [t.section, t.claim, fmt_target_value(t), "-" if t.n is None else str(t.n), t.status, t.detail] for t in targets
    ]
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"

    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *(line(r) for r in rows)])


__all__ = [
    "MINER_POINTS",
    "Target",
    "battery_cell",
    "donor_targets",
    "fmt_target_value",
    "mechanism_targets",
    "memorizer_targets",
    "miner_points",
    "miner_target",
    "targets_table",
]
