"""Markdown tables of the white-box experiments (``benchmarks/mechanism.py``), from their result
records and dictionaries: steering arms, sites by kind, WER changes, the layer sweep, the screen,
edit-locus patching, the omission direction's statistics, the voice gate, the pre-registered rule
and the pooled tuning sets. Pure functions returning strings."""

from __future__ import annotations

from asr_audit.mechrun.patch import PatchResult
from asr_audit.mechrun.steer import SteerResult


def fmt_rate(r: dict) -> str:
    if not r["n"]:
        return "undefined (0 sites)"
    return f"{r['rate']:.2f} ({r['k']}/{r['n']}) [{r['ci_low']:.2f}, {r['ci_high']:.2f}]"


def steer_table(title: str, res: SteerResult) -> str:
    arms = res.to_dict()["arms"]
    gated = any("gate_open" in a for a in arms)
    lines = [
        f"\n### {title}\n",
        "| arm | accept-ref | ref->spoken | spoken->ref | WER vs faithful |" + (" gate open |" if gated else ""),
        "|---|---|---|---|---|" + ("---|" if gated else ""),
    ]
    for a in arms:
        wer = f"{a['wer']:.3f}" if a["wer"] is not None else "-"
        g = a.get("gate_open")
        lines.append(
            f"| {a['label']} | {fmt_rate(a['accept_ref'])} | {a['flips']['ref_to_spoken']} | "
            f"{a['flips']['spoken_to_ref']} | {wer} |" + ((f" {g['k']}/{g['n']} |" if g else " - |") if gated else "")
        )
    share = res.effect_share()
    lines.append(f"\neffect share (1 - arm/clean): {share:.2f}" if share is not None else "\neffect share: undefined")
    return "\n".join(lines)


def wer_change_table(change: dict[str, dict], what: str = "") -> str:
    rows = [
        f"| {label} | {c['change'] * 100:+.1f} [{c['low'] * 100:+.1f}, {c['high'] * 100:+.1f}] | "
        f"{c['clips_changed']}/{c['n_clips']} | {c['largest_clip_share']:.2f} |"
        for label, c in change.items()
    ]
    return (
        f"\nWER change against clean{what} (points; paired clip bootstrap 95%):\n\n"
        "| arm | change [95%] | clips changed | largest clip's share |\n|---|---|---|---|\n" + "\n".join(rows)
    )


def kinds_table(by_kind: dict[str, dict[str, dict[str, int]]]) -> str:
    kinds = sorted({k for arm in by_kind.values() for k in arm})
    lines = ["\nsites by kind (ref / spoken / neither):\n", "| arm | " + " | ".join(kinds) + " |"]
    lines.append("|---|" + "---|" * len(kinds))
    for label, arm in by_kind.items():
        cells = [f"{c['ref']} / {c['spoken']} / {c['neither']}" if (c := arm.get(k)) else "-" for k in kinds]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def gate_table(fit: dict) -> str:
    rows = "\n".join(f"| {r['site']} | {r['auc']:.3f} | {r['n_fit']} / {r['n_held']} |" for r in fit["sweep"])
    opened = ", ".join(f"{v} {k}/{n}" for v, (k, n) in fit["train_open"].items())
    return (
        "\n### Voice gate (prompt-end activation, training direction clips; held-out AUC per layer)\n\n"
        "| site | held-out AUC | sentences fit / held out |\n|---|---|---|\n"
        f"{rows}\n\ngate at {fit['site']} (threshold {fit['threshold']:.3f}, key {fit['key']}); "
        f"open on the training clips: {opened}"
    )


def gate_rule_table(v: dict, which: str = "seventh session") -> str:
    rows = "\n".join(f"| {k} | {'yes' if ok else 'no'} |" for k, ok in v["checks"].items())
    return f"\n### Pre-registered rule ({which})\n\n| check | met |\n|---|---|\n{rows}\n\n**{'PASS' if v['pass'] else 'MISS'}**"


def accept_ref_change_table(change: dict[str, dict]) -> str:
    """Each arm's paired accept-ref change against clean (:func:`~asr_audit.mechrun.measures.accept_ref_changes`)."""
    rows = [
        f"| {label} | {c['change']:+.3f} [{c['low']:+.3f}, {c['high']:+.3f}] | {c['n_sites']} |"
        for label, c in change.items()
        if c["change"] is not None
    ]
    return (
        "\naccept-ref change against clean (paired, clip bootstrap 95%):\n\n"
        "| arm | change [95%] | sites |\n|---|---|---|\n" + "\n".join(rows)
    )


def sweep_table(sweep: list) -> str:
    """The layer sweep's rows (:class:`~asr_audit.mechrun.direction.SweepRow`)."""
    return (
        "\n### Layer sweep (held-out AUC of the diff-in-means projection, A above B)\n\n| site | AUC | norm |\n|---|---|---|\n"
        + "\n".join(f"| {r.site} | {r.auc:.3f} | {r.norm:.2f} |" for r in sweep)
    )


def screen_table(rows: list[dict]) -> str:
    """The screen's rows (:func:`asr_audit.mechrun.screen.screen`)."""
    return (
        "\n### Screen (teacher-forced P(ref) of the 14 held-out voice-A edits under each candidate)\n\n"
        "| candidate | mean P(ref) | median P(ref) | edits P(ref) > 0.5 |\n|---|---|---|---|\n"
        + "\n".join(f"| {r['label']} | {r['mean']:.3f} | {r['median']:.3f} | {r['above']}/{r['n']} |" for r in rows)
    )


def patch_table(patch: PatchResult, encoder_identical: bool, where: str = "held-out voice A") -> str:
    """Edit-locus patching (:func:`asr_audit.mechrun.patch.edit_locus`), with the 95% intervals
    of the median change (clip bootstrap) and of the share toward audio (by clip)."""
    return (
        f"\n### Edit-locus patching (organism, {where}; P(ref) = P(reference rendering | ref vs spoken))\n\n"
        "| edits | condition | n | median P(ref) full | median P(ref) patched | median change [95%] "
        "| share toward audio [95%] |\n"
        "|---|---|---|---|---|---|---|\n"
        + "\n".join(
            f"| {r.kind} | {r.condition} | {r.n} | {r.median_full:.3f} | {r.median_patched:.3f} "
            f"| {r.median_change:+.3f} [{r.change_low:+.3f}, {r.change_high:+.3f}] "
            f"| {r.toward_audio:.2f} [{r.toward_low:.2f}, {r.toward_high:.2f}] |"
            for r in patch.table()
        )
        + f"\n\nencoder weights identical to the base model: {encoder_identical}"
    )


def pool_table(pooled: list[dict], n_sets: int, pick: str | None) -> str:
    """The tuning sets pooled (:func:`asr_audit.mechrun.measures.gate2_pool`) and the rule's pick."""
    return (
        f"\n### Tuning sets pooled ({n_sets} sets; voice A)\n\n"
        "| arm | accept-ref | share | faithful sentences: WER change (clips changed) | by set |\n"
        "|---|---|---|---|---|\n"
        + "\n".join(
            f"| {r['label']} | {r['k']}/{r['n']} | "
            + (
                f"{r['share']:.3f} | {r['faithful_change'] * 100:+.2f} "
                f"({r['faithful_clips_changed']}/{r['faithful_clips']}) | "
                + ", ".join(f"{c * 100:+.1f} / {sh:.2f}" for c, sh in r["by_set"])
                + " |"
                if "share" in r
                else " | | |"
            )
            for r in pooled
        )
        + f"\n\nrule's pick (highest pooled share with faithful-sentence change <= +0.5 point): {pick}"
    )


def omission_table(stats: list[dict]) -> str:
    """The omission direction's projections (:func:`asr_audit.mechrun.activations.omission_stats`)."""
    return (
        "\n### Omission direction: projections in gaps above voice B's mean\n\n"
        "| site | edits | B max | A min | faithful median | faithful q95 |\n|---|---|---|---|---|---|\n"
        + "\n".join(
            f"| {r['site']} | {r['n']} | {r['B_max']:.2f} | {r['A_min']:.2f} | "
            f"{r['faithful_median']:.2f} | {r['faithful_q95']:.2f} |"
            for r in stats
        )
    )


__all__ = [
    "fmt_rate",
    "gate_rule_table",
    "gate_table",
    "kinds_table",
    "omission_table",
    "patch_table",
    "pool_table",
    "screen_table",
    "steer_table",
    "sweep_table",
    "wer_change_table",
]
