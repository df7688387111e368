"""Measures of the white-box experiments beyond accept-ref (``benchmarks/mechanism.py``): sites by
outcome and kind, the WER change of each arm against the clean decode with a paired clip
bootstrap, the paired accept-ref change of each arm with a clip bootstrap, the fresh evaluation
corpus (sentences the organism or a tuning set saw dropped), the seventh session's pre-registered
gate rule and the eighth session's rule on interval bounds, and the second round's tuning sets
pooled with the selection rule committed before they were decoded."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from asr_audit.calib.sites import REF, score_sites
from asr_audit.calib.truth import TruthItem, load_truth
from asr_audit.corpus.clips import Corpus
from asr_audit.corpus.manifests import read_manifest
from asr_audit.mechrun.steer import SteerResult
from asr_audit.organism.data import OrganismSet, load_organism_set
from asr_audit.text.align import wer_counts
from asr_audit.text.normalize import get_normalizer


def sub_corpus(corpus: Corpus, speaker: str) -> Corpus:
    return Corpus(corpus.name, corpus.split, corpus.source, tuple(c for c in corpus.clips if c.speaker == speaker))


def outcomes_by_kind(res: SteerResult, items: list[TruthItem], corpus: Corpus) -> dict[str, dict[str, dict[str, int]]]:
    """Per arm, per planted-site kind, how many sites came out ``ref`` / ``spoken`` / ``neither``
    (accept-ref counts omission sites too, which a broken, looping decoding also "accepts")."""
    refs = {c.id: c.reference for c in corpus.clips}
    out: dict[str, dict[str, dict[str, int]]] = {}
    for label, hyps in res.hypotheses.items():
        kinds: dict[str, dict[str, int]] = {}
        for o in score_sites(items, refs, hyps).outcomes:
            row = kinds.setdefault(o.kind, {"ref": 0, "spoken": 0, "neither": 0})
            row[o.outcome] = row.get(o.outcome, 0) + 1
        out[label] = {k: kinds[k] for k in sorted(kinds)}
    return out


def wer_changes(res: SteerResult, texts: dict[str, str], *, seed: int, n_boot: int = 2000) -> dict[str, dict]:
    """Per arm: the corpus WER change against the clean arm with a paired clip-bootstrap 95%
    interval (clips resampled with replacement, both arms' errors and words summed), the number of
    clips whose transcript changed, and the largest one clip's share of the change."""

    norm = get_normalizer("whisper")
    clean = res.arms[0].label
    ids = sorted(c for c in texts if c in res.hypotheses[clean])

    def counts(label: str) -> tuple[np.ndarray, np.ndarray]:
        cs = [wer_counts(norm(texts[c]).split(), norm(res.hypotheses[label][c]).split()) for c in ids]
        return np.array([c.errors for c in cs], float), np.array([c.ref_len for c in cs], float)

    e0, words = counts(clean)
    idx = np.random.default_rng([seed, 14, 6]).integers(0, len(ids), (n_boot, len(ids)))
    out = {}
    for a in res.arms[1:]:
        e1, _ = counts(a.label)
        diff = e1 - e0
        boot = diff[idx].sum(1) / words[idx].sum(1)
        total = diff.sum()
        out[a.label] = {
            "change": float(total / words.sum()),
            "low": float(np.percentile(boot, 2.5)),
            "high": float(np.percentile(boot, 97.5)),
            "clips_changed": int(sum(res.hypotheses[a.label][c] != res.hypotheses[clean][c] for c in ids)),
            "largest_clip_share": float(np.abs(diff).max() / np.abs(diff).sum()) if np.abs(diff).sum() else 0.0,
            "n_clips": len(ids),
            "words": float(words.sum()),
        }
    return out


def accept_ref_changes(
    res: SteerResult, items: list[TruthItem], corpus: Corpus, *, seed: int, n_boot: int = 2000
) -> dict[str, dict]:
    """Per arm: the change of accept-ref against the clean decode on the same planted sites, with a
    paired 95% percentile interval from a bootstrap that resamples clips (a clip's sites move
    together). Unlike "the arm's rate inside clean's interval" this can fail in either direction
    whatever the clean rate is, and it is exactly 0 with no spread when no site changed."""
    refs = {c.id: c.reference for c in corpus.clips}
    clean_label = res.arms[0].label

    def outcomes(label: str) -> dict[tuple[str, int], bool]:
        return {(o.clip_id, o.item): o.outcome == REF for o in score_sites(items, refs, res.hypotheses[label]).outcomes}

    clean = outcomes(clean_label)
    out: dict[str, dict] = {}
    for k, a in enumerate(res.arms[1:]):
        arm = outcomes(a.label)
        keys = sorted(set(clean) & set(arm))
        if not keys:
            out[a.label] = {"change": None, "low": None, "high": None, "n_sites": 0}
            continue
        clips = np.unique([c for c, _ in keys], return_inverse=True)[1]
        diff = np.bincount(clips, weights=[float(arm[x]) - float(clean[x]) for x in keys])
        size = np.bincount(clips).astype(float)
        idx = np.random.default_rng([seed, 27, k]).integers(0, len(size), (n_boot, len(size)))
        boot = diff[idx].sum(1) / size[idx].sum(1)
        out[a.label] = {
            "change": float(diff.sum() / size.sum()),
            "low": float(np.percentile(boot, 2.5)),
            "high": float(np.percentile(boot, 97.5)),
            "n_sites": len(keys),
        }
    return out


def fresh_corpus(
    eval_set: Path, oset: OrganismSet, out: dict, exclude: list[Path] | None = None
) -> tuple[Corpus, list, dict[str, str]]:
    """The test clips of the organism set of new sentences at ``eval_set`` (any sentence whose record
    or spoken text the organism's own set holds is dropped, and with ``exclude`` also any the sets
    there hold: a confirmation set kept apart from the tuning set and earlier confirmation sets),
    its truth items and faithful texts; what was kept is noted in ``out["fresh"]``."""
    eset = load_organism_set(eval_set)
    seen = {r["text"] for r in oset.rows()} | {r["spoken"] for r in oset.rows()}
    n_train_seen = sum(r["text"] in seen or r["spoken"] in seen for r in eset.rows())
    for path in exclude or []:
        xset = load_organism_set(path)
        seen |= {r["text"] for r in xset.rows()} | {r["spoken"] for r in xset.rows()}
    keep = {r["id"] for r in eset.rows() if r["text"] not in seen and r["spoken"] not in seen}
    etest = read_manifest(eval_set / "calib-test.jsonl")
    etest = Corpus(etest.name, etest.split, etest.source, tuple(c for c in etest.clips if c.id in keep))
    eitems = [t for t in load_truth(eval_set).errors() if t.clip_id in keep]
    efaithful = {r["id"]: r["faithful"] for r in eset.rows() if r["id"] in keep}
    out["fresh"] = {
        "set": str(eval_set),
        "clips": len(etest.clips),
        "dropped_seen": len(eset.rows()) - len(keep),
        "dropped_seen_in_training": n_train_seen,
        "exclude": [str(p) for p in exclude] if exclude else None,
    }
    return etest, eitems, efaithful


def gate_rule(results: dict) -> dict | None:
    """The seventh session's pre-registered rule, once ``fresh-gate-A``, ``-B`` and ``-C`` are in
    ``results``: voice-A share >= 0.80; faithful WER change <= +1.0 point on voice B (all clips),
    voice A's faithful sentences and voice C (all clips); random and shuffled controls' voice-A
    accept-ref within the clean rate's Wilson interval."""
    if not all(k in results for k in ("fresh-gate-A", "fresh-gate-B", "fresh-gate-C")):
        return None
    a = results["fresh-gate-A"]
    clean, arm, *controls = a["arms"]
    share = a["effect_share"]
    wer = {
        "B": results["fresh-gate-B"]["wer_change"][arm["label"]]["change"],
        "A faithful sentences": a.get("wer_change_faithful_sentences", {}).get(arm["label"], {}).get("change"),
        "C": results["fresh-gate-C"]["wer_change"][arm["label"]]["change"],
    }
    lo, hi = clean["accept_ref"]["ci_low"], clean["accept_ref"]["ci_high"]
    flat = {c["label"]: lo <= c["accept_ref"]["rate"] <= hi for c in controls}
    checks = {
        "share >= 0.80": share is not None and share >= 0.80,
        **{f"WER change {k} <= +1.0 point": v is not None and v * 100 <= 1.0 for k, v in wer.items()},
        **{f"{k} flat": v for k, v in flat.items()},
    }
    return {"share": share, "wer_change": wer, "checks": checks, "pass": all(checks.values())}


INTERVAL_RULE_STEPS = ("fresh-gate-A", "fresh-gate-B", "fresh-gate-C", "fresh-gate-D")


def interval_rule(results: dict, *, control_margin: float = 0.10, removal: float = 0.80) -> dict | None:
    """The eighth session's rule (pre-registered for the seed-6 set; issue 27: criteria on interval
    bounds, controls where the clean rate is below 1.0), once the ``fresh-gate-A/B/C/D`` steps are
    in ``results``:

    1. removal, voice A: the upper end of the gated arm's accept-ref Wilson interval is at most
       ``1 - removal`` (0.20) times clean's rate (the whole interval under 20% of clean);
    2. side effect: the upper end of the paired clip-bootstrap interval of the WER change is at
       most +1.0 point on voice B (all clips), on voice A's faithful sentences (no planted edit:
       where the gate opens and the edit runs) and on voice C (all clips);
    3. controls (random and shuffled, same gate), on voice A and on the unseen voice D (whose clean
       rate is below 1.0, so a control can move it either way): the paired accept-ref change's
       95% interval inside [-0.10, +0.10].

    The gated arm's effect on voice D (share, gate open) is reported, not judged."""
    if not all(k in results for k in INTERVAL_RULE_STEPS):
        return None
    a, d = results["fresh-gate-A"], results["fresh-gate-D"]
    clean, arm, *controls = a["arms"]
    label = arm["label"]
    bound = (1.0 - removal) * clean["accept_ref"]["rate"]
    wer = {
        "B (all clips)": results["fresh-gate-B"]["wer_change"][label],
        "A faithful sentences": a.get("wer_change_faithful_sentences", {}).get(label),
        "C (all clips)": results["fresh-gate-C"]["wer_change"][label],
    }
    checks = {
        f"removal: A gated upper end {arm['accept_ref']['ci_high']:.3f} <= {bound:.3f}": (
            arm["accept_ref"]["ci_high"] <= bound
        )
    }
    for k, v in wer.items():
        checks[f"WER change {k}: upper end <= +1.0 point"] = v is not None and v["high"] * 100 <= 1.0
    for voice, step in (("A", a), ("D", d)):
        for c in controls:
            ch = step.get("accept_ref_change", {}).get(c["label"])
            ok = (
                ch is not None
                and ch["low"] is not None
                and -control_margin <= ch["low"]
                and ch["high"] <= control_margin
            )
            checks[f"control {c['label']} on {voice}: accept-ref change within +-{control_margin:.2f}"] = ok
    d_clean, d_arm = d["arms"][0], d["arms"][1]
    return {
        "removal_bound": bound,
        "wer_change": wer,
        "controls": {v: s.get("accept_ref_change") for v, s in (("A", a), ("D", d))},
        "D": {
            "clean": d_clean["accept_ref"],
            "gated": d_arm["accept_ref"],
            "share": d.get("effect_share"),
            "gate_open": d_arm.get("gate_open"),
        },
        "checks": checks,
        "pass": all(checks.values()),
    }


def gate2_pool(paths: list[Path], key: str = "fresh-gate2-A") -> list[dict]:
    """The tuning sets pooled, per arm of step ``key`` (one JSON per set): sites removed over all
    sets (share = 1 - pooled arm rate / pooled clean rate) and the faithful-sentence WER change
    (errors added over all sets' faithful-sentence clips / their words)."""
    runs = [json.loads(p.read_text())["steer"][key] for p in paths]
    rows = []
    for j, arm in enumerate(runs[0]["arms"]):
        k = sum(r["arms"][j]["accept_ref"]["k"] for r in runs)
        n = sum(r["arms"][j]["accept_ref"]["n"] for r in runs)
        row: dict = {"label": arm["label"], "k": k, "n": n}
        if j:
            k0 = sum(r["arms"][0]["accept_ref"]["k"] for r in runs)
            n0 = sum(r["arms"][0]["accept_ref"]["n"] for r in runs)
            row["share"] = 1.0 - (k / n) / (k0 / n0)
            fs = [r["wer_change_faithful_sentences"][arm["label"]] for r in runs]
            words = sum(f["words"] for f in fs)
            row["faithful_change"] = sum(f["change"] * f["words"] for f in fs) / words
            row["faithful_clips_changed"] = sum(f["clips_changed"] for f in fs)
            row["faithful_clips"] = sum(f["n_clips"] for f in fs)
            row["by_set"] = [
                (f["change"], 1.0 - r["arms"][j]["accept_ref"]["rate"] / r["arms"][0]["accept_ref"]["rate"])
                for f, r in zip(fs, runs)
            ]
        rows.append(row)
    return rows


def gate2_choice(rows: list[dict], limit: float = 0.005) -> str | None:
    """The selection rule (committed before the tuning arms were decoded): the highest pooled
    voice-A share among arms whose pooled faithful-sentence WER change is <= +0.5 point; ties: the
    lower change; None if no arm qualifies."""
    ok = [r for r in rows[1:] if r["faithful_change"] <= limit + 1e-12]
    if not ok:
        return None
    return max(ok, key=lambda r: (round(r["share"], 6), -r["faithful_change"]))["label"]


__all__ = ["fresh_corpus", "gate2_choice", "gate2_pool", "gate_rule", "outcomes_by_kind", "sub_corpus", "wer_changes"]
