"""Built-in report sections, one renderer per probe (registered with :func:`register_section`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from asr_audit.report import plots
from asr_audit.report.format import TEMPLATE_HELPERS
from asr_audit.report.published import load_published
from asr_audit.report.section import ReportContext, Section, register_section
from asr_audit.report.switch_rate import switch_rate_csv
from asr_audit.report.tables import REFDIS_COLUMNS, to_csv
from asr_audit.report.verdict import model_verdict
from asr_audit.stats.intervals import wilson

KINDS = ("deletion", "substitution", "insertion")
POSITIONS = ("start", "middle", "end")


def _edit_rows(r: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    refs = r.get("references", {})
    for e in r["edits"]:
        toks = refs.get(e["clip_id"], "").split()
        idx = e["ref_indices"]
        if e["kind"] == "insertion":
            at = idx[0]
            before, span, after = " ".join(toks[:at]), f"[+ {e['alt_text']}]", " ".join(toks[at:])
        else:
            before, span, after = " ".join(toks[: idx[0]]), " ".join(e["ref_tokens"]), " ".join(toks[idx[-1] + 1 :])
        rows.append(
            {**e, "before": before + (" " if before else ""), "span": span, "after": (" " if after else "") + after}
        )
    return rows


@register_section("refdis")
def refdis_section(ctx: ReportContext, entry: Mapping[str, Any]) -> Section:
    r = entry["result"]
    corpus = entry.get("corpus", "")
    anchor = ctx.slug(f"refdis-{corpus}")
    models = r["models"]
    pub_name = entry.get("published", "vox_en_newwl4")
    pub = load_published(pub_name)
    scatter = plots.wer_vs_acceptref(
        [
            {
                "name": m["model"],
                "wer": m["wer"],
                "rate": m["accept_ref"],
                "ci_low": m["ci_low"],
                "ci_high": m["ci_high"],
            }
            for m in models
            if m["accept_ref"] is not None and m["wer"] is not None
        ],
        [
            {"name": p.model, "rate": p.rate, "ci_low": p.ci_low, "ci_high": p.ci_high, "in_panel": p.in_panel}
            for p in pub.models
        ],
        f"{pub.dataset} ({len(pub.models)} models, panel {', '.join(pub.panel)})",
        colours=ctx.colours,
    )
    figs = [
        ctx.figure(
            f"{anchor}-wer-vs-acceptref.png",
            scatter,
            f"accept-ref on one shared axis: WER vs accept-ref on {corpus} (left); your models ranked among the "
            f"paper's published models on {pub.dataset} (right; theirs come from another corpus and panel)",
        ),
        ctx.figure(
            f"{anchor}-inflation.png",
            plots.inflation([m for m in models if m["wer_inflation"] is not None], f"WER inflation on {corpus}"),
            "WER against consensus-corrected references minus WER, with clip-bootstrap 95% intervals",
        ),
    ]
    html = ctx.render(
        "refdis.html.j2",
        r=r,
        kinds=KINDS,
        positions=POSITIONS,
        edits=_edit_rows(r),
        model_names=[m["model"] for m in models],
        table_id=f"edits-{anchor}",
        **TEMPLATE_HELPERS,
    )
    loo = bool(r.get("params", {}).get("loo", True))
    verdicts = tuple({"model": m["model"], "corpus": corpus, "text": model_verdict(m, loo=loo)} for m in models)
    return Section(
        f"Reference disagreement — {corpus}",
        anchor,
        html,
        tuple(figs),
        verdicts,
        {f"{anchor}.csv": to_csv(models, REFDIS_COLUMNS)},
    )


@register_section("transcribe")
def transcribe_section(ctx: ReportContext, entry: Mapping[str, Any]) -> Section:
    r = entry["result"]
    corpus = entry.get("corpus", "")
    html = ctx.render("transcribe.html.j2", r=r, **TEMPLATE_HELPERS)
    cols = ("model", "n_clips", "n_failed", "wer", "coverage")
    return Section(
        f"Transcription — {corpus}",
        ctx.slug(f"transcribe-{corpus}"),
        html,
        tables={f"{ctx.slug('transcribe-' + corpus)}.csv": to_csv(r["models"], cols)},
    )


@register_section("wer")
def wer_section(ctx: ReportContext, entry: Mapping[str, Any]) -> Section:
    r = entry["result"]
    corpus = entry.get("corpus", "")
    anchor = ctx.slug(f"wer-{corpus}")
    html = ctx.render("wer.html.j2", r=r, **TEMPLATE_HELPERS)
    cols = ("model", "n_clips", "n_missing", "wer")
    return Section(f"WER — {corpus}", anchor, html, tables={f"{anchor}.csv": to_csv(r["models"], cols)})


@register_section("switch_rate")
def switch_rate_section(ctx: ReportContext, entry: Mapping[str, Any]) -> Section:
    r = entry["result"]
    corpus = entry.get("corpus", "")
    anchor = ctx.slug(f"switch-{corpus}")
    rows = [row for row in [*r["rows"], *r["pooled"]] if row["n_items"] > 0]
    figs = []
    arm_rows = []
    for row in r["rows"]:
        for arm in row["arms"]:
            if row["n_items"] > 0 and arm["n"] > 0:
                w = wilson(arm["k"], arm["n"])
                arm_rows.append(
                    {
                        "model": row["model"],
                        "arm": f"{row['family']}: {arm['label']}",
                        "rate": w.rate,
                        "ci_low": w.low,
                        "ci_high": w.high,
                    }
                )
    if arm_rows:
        figs.append(
            ctx.figure(
                f"{anchor}-arms.png",
                plots.rates_by_group(
                    arm_rows,
                    "arm",
                    f"Spelling follows the reference — {corpus}",
                    "P(model writes arm | reference writes arm)",
                    chance=0.5,
                    colours=ctx.colours,
                ),
                "Per arm: share of items where the model wrote the reference's spelling (Wilson 95%); "
                "switch = the minimum over a family's arms, > 0.5 (dashed) only for a model that tracks the corpus convention",
            )
        )
    defined = [
        {
            "model": row["model"],
            "family": row["family"],
            "rate": row["switch"],
            "ci_low": row["ci_low"],
            "ci_high": row["ci_high"],
        }
        for row in rows
        if row["switch"] is not None
    ]
    if defined:
        figs.append(
            ctx.figure(
                f"{anchor}-switch.png",
                plots.rates_by_group(
                    defined, "family", f"Switch rate — {corpus}", "switch rate", chance=0.5, colours=ctx.colours
                ),
                "Switch rate per family with the 0.5 chance line",
            )
        )
    html = ctx.render("switch_rate.html.j2", r=r, rows=rows, **TEMPLATE_HELPERS)
    return Section(
        f"Orthographic switch rate — {corpus}", anchor, html, tuple(figs), tables={f"{anchor}.csv": switch_rate_csv(r)}
    )


@register_section("miner_calibration")
def miner_calibration_section(ctx: ReportContext, entry: Mapping[str, Any]) -> Section:
    r = entry["result"]
    corpus = entry.get("corpus", "")
    anchor = ctx.slug(f"calibration-{corpus}")
    rows = [
        {"model": "miner recall", "group": k, "rate": v["rate"], "ci_low": v["ci_low"], "ci_high": v["ci_high"]}
        for k, v in r["recall_by_kind"].items()
        if v["n"] > 0
    ]
    rows += [
        {"model": "miner recall", "group": f"at {k}", "rate": v["rate"], "ci_low": v["ci_low"], "ci_high": v["ci_high"]}
        for k, v in r["recall_by_position"].items()
        if v["n"] > 0
    ]
    p = r["precision"]
    rows.append(
        {
            "model": "miner precision",
            "group": "all edits",
            "rate": p["rate"],
            "ci_low": p["ci_low"],
            "ci_high": p["ci_high"],
        }
    )
    figs = (
        ctx.figure(
            f"{anchor}.png",
            plots.rates_by_group(
                rows,
                "group",
                f"Reference-error miner vs planted truth — {corpus}",
                "share (95%, sentence-clustered)",
                colours=ctx.colours,
            ),
            "Recall of planted reference errors by kind and position, and precision of the mined edits",
        ),
    )
    html = ctx.render("miner_calibration.html.j2", r=r, **TEMPLATE_HELPERS)
    table = [{"measure": name, **r[name]} for name in ("precision", "recall", "recall_boundary", "conventions_mined")]
    return Section(
        f"Miner calibration (planted ground truth) — {corpus}",
        anchor,
        html,
        figs,
        tables={f"{anchor}.csv": to_csv(table, ("measure", "k", "n", "rate", "ci_low", "ci_high"))},
    )
