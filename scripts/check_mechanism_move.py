"""Check that the mechanism experiment's code moved out of ``benchmarks/mechanism.py`` into
``asr_audit.mechrun`` builds the same arms, rules, measures and tables as the script did before the
move (issue 27, item 5): every arm builder (with its controls), the second round's pieces and gated
arms, the pooled tuning sets and their selection rule, the gate rule, the WER-change bootstrap and
the tables, on synthetic directions, old against new. Exits 1 at the first difference.

    PYTHONPATH=src python scripts/check_mechanism_move.py [--old 509ed56]   # "identical: N comparisons"
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np

from asr_audit.mech.directions import Direction, direction_from_sets
from asr_audit.mech.interventions import Gate
from asr_audit.mechrun import arms as mk
from asr_audit.mechrun import measures as ms
from asr_audit.mechrun import removal as rm
from asr_audit.mechrun import tables as tb

ROOT = Path(__file__).resolve().parents[1]
SITES = [f"decoder.layers.{i}.out" for i in range(4)]
WIDTH = 12


def load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


class Checker:
    def __init__(self) -> None:
        self.n = 0

    def same(self, a: Any, b: Any, what: str) -> None:
        if a != b:
            raise SystemExit(f"differs: {what}")
        self.n += 1


def family(prefix: str, rng: np.random.Generator) -> list[Direction]:
    return [
        direction_from_sets(f"{prefix}-{s}", s, rng.normal(1, 1, (20, WIDTH)), rng.normal(0, 1, (20, WIDTH)))
        for s in SITES
    ]


def check_arms(old: ModuleType, new: ModuleType, c: Checker, tmp: Path) -> None:
    rng = np.random.default_rng(0)
    fam = {"voice": family("voice", rng), "decision": family("decision", rng)}
    om = family("omission", rng)
    pos = {s: rng.normal(0, 1, (50, WIDTH)) for s in SITES}
    dec = tmp / "decision.npz"
    arrays = {f"A{i}": rng.normal(1, 1, (30, WIDTH)) for i in range(4)}
    arrays |= {f"B{i}": rng.normal(0, 1, (30, WIDTH)) for i in range(4)}
    np.savez(dec, **arrays)
    ds, vs = fam["decision"], fam["voice"]
    for seed in (0, 3):
        c.same(old.site_arms(vs, 4, seed=seed), mk.site_arms(vs, 4, seed=seed), "site")
        c.same(old.decision_arms(ds, 4, seed=seed), mk.decision_arms(ds, 4, seed=seed), "decision")
        ks = (1, 2, 4)
        c.same(
            old.decision_rank_arms(dec, SITES, ks, seed=seed), mk.decision_rank_arms(dec, SITES, ks, seed=seed), "rank"
        )
        alphas = (2.0, 4.0)
        c.same(
            old.large_induction_arms(vs, alphas, seed=seed), mk.large_induction_arms(vs, alphas, seed=seed), "induce"
        )
        c.same(old.clamp_arms(ds, seed=seed), rm.clamp_arms(ds, seed=seed), "clamp")
        for f in ("trigger_arms", "combo_arms", "push_arms", "l0_arms", "l0b_arms", "l0c_arms", "l0d_arms"):
            c.same(getattr(old, f)(ds, pos, seed=seed), getattr(rm, f)(ds, pos, seed=seed), f)
        c.same(old.r5_arms(fam, pos, seed=seed), rm.r5_arms(fam, pos, seed=seed), "r5")
        c.same(old.r6_arms(fam, om, 5), rm.r6_arms(fam, om, 5), "r6")
        c.same(old.r7_arms(fam, om, 5), rm.r7_arms(fam, om, 5), "r7")
        c.same(old.layer_arms(ds, dec, SITES, seed=seed), rm.layer_arms(ds, dec, SITES, seed=seed), "layers")
        cands = old.candidate_arms(fam, pos, dec, SITES, seed=seed, om=om, first=5)
        c.same(cands, rm.candidate_arms(fam, pos, dec, SITES, seed=seed, om=om, first=5), "candidates")
        labels = "|".join(list(cands)[:3])
        c.same(
            old.confirm_arms(fam, pos, dec, SITES, labels, seed=seed, om=om, first=5),
            rm.confirm_arms(fam, pos, dec, SITES, labels, seed=seed, om=om, first=5),
            "confirm",
        )
        gate = Gate.between(SITES[1], rng.normal(1, 1, WIDTH), rng.normal(0, 1, WIDTH), label="g")
        for control in ("", "random", "shuffled"):
            po = old.gate2_parts(fam, om, pos, 5, seed=seed, control=control)
            pn = rm.gate2_parts(fam, om, pos, 5, seed=seed, control=control)
            c.same(po, pn, f"gate2_parts {control}")
            for label in (*old.GATE2_DIAG, *old.GATE2_ARMS, *old.GATE2_EXTRA):
                c.same(old.gate2_arm(label, po, gate, control), rm.gate2_arm(label, pn, gate, control), label)
        for name in ("GATE2_DIAG", "GATE2_ARMS", "GATE2_EXTRA", "FULL_ARM", "GATE2_Q", "CLAMP_AT", "TRIGGER_Q"):
            c.same(getattr(old, name), getattr(rm, name), name)
        c.same(old.LAYER_SETS, rm.LAYER_SETS, "LAYER_SETS")
        for name in ("FRESH_EXTRA", "GATE_STEPS", "GATE2_STEPS"):
            c.same(getattr(old, name), getattr(new, name), name)


def tuning_run(shift: int) -> dict:
    arms = [
        {"label": label, "accept_ref": {"k": k, "n": 40, "rate": k / 40, "ci_low": 0.6, "ci_high": 0.95}}
        for label, k in (("clean", 32), ("a", 4 + shift), ("b", 2), ("c", 4 + shift))
    ]
    faithful = {
        label: {"change": 0.001 * i * shift, "words": 400.0 + i, "clips_changed": i, "n_clips": 20}
        for i, label in enumerate(("a", "b", "c"))
    }
    return {"steer": {"fresh-gate2-A": {"arms": arms, "wer_change_faithful_sentences": faithful}}}


def check_measures(old: ModuleType, c: Checker, tmp: Path) -> None:
    paths = []
    for i in range(3):
        p = tmp / f"t{i}.json"
        p.write_text(json.dumps(tuning_run(i)))
        paths.append(p)
    po, pn = old.gate2_pool(paths), ms.gate2_pool(paths)
    c.same(po, pn, "pool")
    c.same(old.gate2_choice(po), ms.gate2_choice(pn), "choice")
    c.same(old.gate2_choice(po, 0.0001), ms.gate2_choice(pn, 0.0001), "choice strict")
    arms = tuning_run(1)["steer"]["fresh-gate2-A"]["arms"][:3]
    arms[1]["label"] = "a"
    entry = {
        "arms": arms,
        "effect_share": 0.9,
        "wer_change": {"a": {"change": 0.004}},
        "wer_change_faithful_sentences": {"a": {"change": 0.02}},
    }
    res = dict.fromkeys(("fresh-gate-A", "fresh-gate-B", "fresh-gate-C"), entry)
    c.same(old.gate_rule(res), ms.gate_rule(res), "gate rule")
    c.same(old.gate_rule_table(old.gate_rule(res)), tb.gate_rule_table(ms.gate_rule(res)), "gate rule table")
    fit = {
        "sweep": [{"site": s, "auc": 0.5 + i / 10, "n_fit": 16, "n_held": 16} for i, s in enumerate(SITES)],
        "site": SITES[1],
        "threshold": 0.25,
        "key": "k",
        "train_open": {"a": [16, 16], "b": [0, 16]},
    }
    c.same(old.gate_table(fit), tb.gate_table(fit), "gate table")
    rng = np.random.default_rng(1)
    labels = ["clean", "x", "y"]
    words = ["a", "b", "c", "the"]
    hyps = {label: {f"c{i}": " ".join(rng.choice(words, 6)) for i in range(25)} for label in labels}
    texts = {f"c{i}": " ".join(rng.choice(words, 6)) for i in range(25)}
    fake = SimpleNamespace(arms=[SimpleNamespace(label=label) for label in labels], hypotheses=hyps)
    wo, wn = old.wer_changes(fake, texts, seed=3), ms.wer_changes(fake, texts, seed=3)
    c.same(wo, wn, "wer changes")
    c.same(old.wer_change_table(wo, " z"), tb.wer_change_table(wn, " z"), "wer table")
    by_kind = {
        "clean": {"omitted": {"ref": 1, "spoken": 2, "neither": 0}},
        "x": {"omitted": {"ref": 0, "spoken": 3, "neither": 0}, "sub": {"ref": 1, "spoken": 0, "neither": 1}},
    }
    c.same(old.kinds_table(by_kind), tb.kinds_table(by_kind), "kinds table")
    rate = {"n": 5, "rate": 0.4, "k": 2, "ci_low": 0.1, "ci_high": 0.8}
    c.same(old.fmt_rate(rate), tb.fmt_rate(rate), "fmt")
    c.same(old.fmt_rate({"n": 0}), tb.fmt_rate({"n": 0}), "fmt undefined")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--old", default="509ed56", help="the commit whose benchmarks/mechanism.py is the reference")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    text = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{args.old}:benchmarks/mechanism.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    (tmp / "old_mechanism.py").write_text(text)
    old = load("old_mechanism", tmp / "old_mechanism.py")
    new = load("new_mechanism", ROOT / "benchmarks" / "mechanism.py")
    c = Checker()
    check_arms(old, new, c, tmp)
    check_measures(old, c, tmp)
    print(f"identical: {c.n} comparisons")
    return 0


if __name__ == "__main__":
    sys.exit(main())
