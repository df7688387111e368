"""The white-box layer proven on the model organism (the known answer): direction, ablation,
induction, rank-k, patching, and the null on the base model and the control.

Needs trained organisms (``asr-audit organism train``; set ``ASR_AUDIT_ORGANISM_DIR``) and their
set. Steps, all through the library the ``asr-audit mech`` verbs call:

1. capture (pooled per clip) the benchmark-voice (A) and other-voice (B) *training* clips of the
   same sentences at every encoder and decoder layer output, decoder teacher-forced on the record;
2. layer sweep (held-out AUC, seed 0) and diff-in-means directions at the best encoder and the
   best decoder site, plus a rank-4 paired-SVD subspace;
3. steering on *held-out* sentences through a store: ablation on voice-A clips (accept-ref on
   planted sites, flips, random-direction and shuffled controls), WER on voice-B (faithful)
   clips under the same ablation, induction on voice-B and unseen-voice clips, rank k = 1, 2, 4;
4. the same ablation on the base model and the control (null: nothing to remove);
5. edit-locus patching on voice-A clips: encoder output from the base model (frozen encoder:
   identical), encoder output from the same sentence in voice B, decoder layers from the base;
6. the intervention site chosen by effect (issue 14 follow-up): ``screen`` scores teacher-forced
   P(ref) of every held-out voice-A edit under each candidate (voice and decision directions;
   projection, centred and mean ablation; single sites and all decoder layers at once; negative
   induction) with random controls; ``sites`` decodes the candidates (accept-ref, flips, WER) at
   decoder layers 2, 3 and all four; ``decision`` the same for the decision-position direction;
   ``induce-large`` induction with alpha 2, 4, 8 at all decoder layers on unseen-voice and
   faithful clips; ``sites-wer`` the ``sites`` arms on faithful voice-B clips; ``decision-wer``
   the decision direction's all-layer mean ablation on voice-B clips; ``decision-rank`` mean
   ablation of its top-k paired-SVD subspace (k = 1, 2, 4) at all layers; ``screen-rank`` the
   voice direction's rank-k (k up to 16) mean ablation, teacher-forced; ``null-large`` the
   decision mean ablation and the alpha = 4 induction on the base model and the control (on the
   held-out sentences, or with ``--eval-set`` on the fresh set's sentences, as the ``fresh-*`` steps);
   ``fresh-A`` / ``fresh-B`` / ``fresh-D`` / ``fresh-rank`` the decision mean ablation (voice A,
   and voice B for the side effect) / the alpha = 4 induction (voice D) / the decision rank-k on a
   second organism set of new sentences (``--eval-set``; more planted sites than the 14 held out).
7. removal without the side effect (issue 14, fourth session; all on ``--eval-set``, voice A for
   the removal and voice B for the faithful WER): ``fresh-clamp-A|B`` directional clamping of
   the decision direction at all layers (cap at voice B's decision-position mean + c |d|, c = 0,
   0.5, 0.25); ``fresh-trigger-A|B`` conditional mean ablation (positions beyond the 95th / 90th
   percentile of faithful voice-B positions' projections moved to voice B's mean);
   ``fresh-layers-A|B`` mean ablation at layers 0-2 and 1-2 and the SVD k = 1 direction;
   ``fresh-combo-A|B``, ``fresh-push-A|B``, ``fresh-l0-A|B`` layers 1-2 mean ablation combined
   with a milder edit at layers 0 and 3, clamping below voice B's mean at layers 1-2; each with
   random-direction and shuffled controls of the same centers, caps and triggers.
8. gated removal (issue 14, seventh session): ``fresh-gate-A|B|C|D`` the ``--arm`` (with its
   random and shuffled controls) applied only to the clips whose unedited activation at the
   position that predicts the first text token opens a voice gate (voice A minus voice B at one
   decoder layer, threshold at the midpoint; fitted on the training direction clips, layer by
   held-out AUC); voices A, B, C (the other faithful training voice) and D (unseen);
   ``fresh-gate-null`` the gated arm on the base model and the control.
9. a milder gated edit (seventh session, second round): ``fresh-gate2-diag`` each piece of the
   gated arm on voice A's faithful sentences of ``--eval-set`` (which piece costs WER there);
   ``fresh-gate2-A`` conditional arms on voice A (the layers 1-2 mean ablation only above a
   percentile of the projections of every decoder position of voice A's training clips with no
   planted edit); ``gate2-pool`` the tuning sets' ``--json`` files (``--pool``) pooled and the
   rule's pick; ``fresh-gate2-extra`` the chosen arm without its layers 1-2 piece. A second-round
   arm named by ``--arm`` in ``fresh-gate-A|B|C`` gets its controls piece by piece.

The *decision-position* direction contrasts the policy where it acts: for each planted edit of a
training voice-A clip, the residual at the token position that predicts the first token where the
record and the spoken rendering differ, teacher-forced on the record, in voice A minus the same
sentence in voice B (the prefix is identical, so only the audio differs).

    ASR_AUDIT_ORGANISM_DIR=/tmp/mech-organism python benchmarks/mechanism.py --n-sentences 120 --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from asr_audit.calib.sites import score_sites
from asr_audit.calib.truth import TruthItem, load_truth
from asr_audit.corpus.clips import Corpus
from asr_audit.corpus.manifests import read_manifest
from asr_audit.mech.directions import (
    Direction,
    auc,
    direction_from_sets,
    random_direction,
    save_direction,
    split_pairs,
)
from asr_audit.mech.interventions import Gate, Intervention, intervene, recording
from asr_audit.mechrun.capture import capture, load_capture
from asr_audit.mechrun.direction import layer_sweep, make_direction
from asr_audit.mechrun.patch import PatchCondition, edit_locus, edit_texts, logprob, p_ref
from asr_audit.mechrun.steer import CLEAN as CLEAN_LABEL
from asr_audit.mechrun.steer import Arm, SteerResult, control_arms, prompt_activations, run_steer
from asr_audit.organism.backend import load_organism
from asr_audit.organism.data import OrganismSetConfig, load_organism_set
from asr_audit.organism.pipeline import default_set_dir, load_base
from asr_audit.organism.train import EncoderCache, read_wav
from asr_audit.store.sqlite import open_store


def say(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


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
    from asr_audit.text.align import wer_counts
    from asr_audit.text.normalize import get_normalizer

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


def sub_corpus(corpus: Corpus, speaker: str) -> Corpus:
    return Corpus(corpus.name, corpus.split, corpus.source, tuple(c for c in corpus.clips if c.speaker == speaker))


def _jsonable(value: object) -> object:
    """An argument for the JSON record: paths as text, lists of them too."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def fresh_corpus(
    eval_set: Path, oset, out: dict, exclude: list[Path] | None = None
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-sentences", type=int, default=120, help="the organism set's size (finds its folder)")
    ap.add_argument("--n-direction", type=int, default=32, help="training sentences captured per voice")
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--n-random", type=int, default=2)
    ap.add_argument("--steps", default="ablate,wer,induce,patch,rank,null", help="which measurements, in order")
    ap.add_argument("--work", type=Path, default=Path("/tmp/mech-proof"))
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--report", type=Path, default=None, help="also write an HTML report (the mech section) here")
    ap.add_argument(
        "--eval-set",
        type=Path,
        default=None,
        help="steps fresh-* (and null-large): an organism set of new sentences (sentences the organism saw are dropped)",
    )
    ap.add_argument(
        "--exclude-set",
        type=Path,
        action="append",
        default=None,
        help="steps fresh-*: also drop the --eval-set sentences this organism set holds (the tuning set; "
        "repeat it for several sets)",
    )
    ap.add_argument(
        "--arm",
        default=None,
        help="step fresh-confirm-A/B: the labels of the arms chosen on the tuning set, |-separated (each confirmed "
        "with a random and a shuffled control)",
    )
    ap.add_argument(
        "--pool",
        type=Path,
        action="append",
        default=None,
        help="step gate2-pool: the --json file of a fresh-gate2-A run on one tuning set (repeat it)",
    )
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads (1 on a shared, loaded machine)")
    args = ap.parse_args(argv)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    steps = args.steps.split(",")
    set_dir = default_set_dir(args.seed, args.n_sentences)
    oset = load_organism_set(set_dir)
    cfg = OrganismSetConfig(n_sentences=args.n_sentences)
    va, vb, vd = cfg.benchmark_voice, cfg.other_voices[0], cfg.unseen_voices[0]
    organism = load_organism("organism-benchmark")
    out: dict = {
        "set": str(set_dir),
        "voices": {"A": va, "B": vb, "D": vd},
        "args": {k: _jsonable(v) for k, v in vars(args).items()},
    }
    tables: list[str] = []

    def flush() -> None:
        out["seconds"] = round(time.perf_counter() - t0, 1)
        if args.json:
            args.json.write_text(json.dumps(out, indent=1, default=float) + "\n")
        print("\n".join(tables), flush=True)
        tables.clear()

    # 1. capture: the same training sentences in voice A and voice B, paired by sentence, at every
    # decoder layer, teacher-forced on the record; encoder states from the organism's encoder cache
    # (the organism's encoder is the frozen base encoder)
    enc_cache = EncoderCache(organism_base_view(organism))
    train = {(r["sentence_id"], r["speaker"]): r for r in oset.rows("train", [va, vb])}
    sentences = sorted({s for s, v in train if (s, va) in train and (s, vb) in train})[: args.n_direction]
    n_dec = len(organism.torch_model.model.decoder.layers)
    sites = [f"decoder.layers.{i}.out" for i in range(n_dec)]
    caps = {}
    for label, voice in (("A", va), ("B", vb)):
        rows = [train[(s, voice)] for s in sentences]
        root = args.work / f"capture-{label}"
        if (root / "manifest.json").is_file() and load_capture(root).ids() == [r["id"] for r in rows]:
            caps[label] = load_capture(root)
            continue
        say(f"capturing {len(rows)} voice-{label} clips at {len(sites)} sites")
        enc_cache.ensure([oset.audio_path(r) for r in rows])
        path_of = {r["id"]: oset.audio_path(r) for r in rows}
        caps[label] = capture(
            organism,
            ((r["id"], read_wav(oset.audio_path(r))) for r in rows),
            sites,
            root,
            texts=[r["text"] for r in rows],
            pool="mean",
            encoded=lambda cid, path_of=path_of: enc_cache.load(path_of[cid]),
        )
    # 2. layer sweep and the direction at the best layer
    sweep = layer_sweep(caps["A"], caps["B"], sites, seed=args.seed)
    out["sweep"] = [r.to_dict() for r in sweep]
    tables.append(
        "\n### Layer sweep (held-out AUC of the diff-in-means projection, A above B)\n\n| site | AUC | norm |\n|---|---|---|\n"
        + "\n".join(f"| {r.site} | {r.auc:.3f} | {r.norm:.2f} |" for r in sweep)
    )
    site = max(sweep, key=lambda r: (round(r.auc, 3), r.norm)).site  # AUC ties: the larger separation
    out["site"] = site
    dirs_root = args.work / "directions"
    d = make_direction(f"voice-{site}", caps["A"], caps["B"], site, extra={"seed": args.seed})
    save_direction(d, dirs_root)
    svd = make_direction(f"voice-svd4-{site}", caps["A"], caps["B"], site, k=4)
    save_direction(svd, dirs_root)
    out["direction"] = {k: v for k, v in d.to_dict().items() if k != "provenance"}
    flush()

    # 3.. steering on held-out sentences, through a store (reruns resume)
    test = read_manifest(set_dir / "calib-test.jsonl")
    faithful = {r["id"]: r["faithful"] for r in oset.rows("test")}
    items = [t for t in load_truth(set_dir).errors() if t.clip_id in faithful]
    store = open_store(args.work / "store.sqlite3")
    results: dict = out.setdefault("steer", {})
    rule_free_own = {r["id"] for r in oset.rows() if not r["rules"]}
    rule_free_eval = (
        {r["id"] for r in load_organism_set(args.eval_set).rows() if not r["rules"]} if args.eval_set else set()
    )
    gate_fit: dict = {}  # the voice gate, fitted once (steps fresh-gate-*)

    def run(key: str, backend, speaker: str, arms, title: str, direction, *, on=None) -> SteerResult:
        """One steering step on ``speaker``'s clips of the held-out set, or of ``on`` (a test
        corpus, its truth items and faithful texts); its result and table are saved at once."""
        corpus, its, texts = on or (test, items, faithful)
        say(f"steer: {key}")
        res = run_steer(
            backend,
            sub_corpus(corpus, speaker),
            store,
            arms,
            items=its,
            wer_texts=texts,
            direction=direction,
            mode=arms[0].kind,
        )
        results[key] = res.to_dict()
        results[key]["by_kind"] = by_kind = outcomes_by_kind(res, its, sub_corpus(corpus, speaker))
        results[key]["wer_change"] = change = wer_changes(res, texts, seed=args.seed)
        table = steer_table(title, res) + "\n" + kinds_table(by_kind) + "\n" + wer_change_table(change)
        # the faithful sentences of this voice: clips of sentences with no planted edit (record = spoken)
        rule_free = rule_free_eval if on is not None else rule_free_own
        plain = {c: t for c, t in texts.items() if c in rule_free and c in res.hypotheses[CLEAN_LABEL]}
        if plain and res.arms[1:]:
            results[key]["wer_change_faithful_sentences"] = plain_change = wer_changes(res, plain, seed=args.seed)
            table += "\n" + wer_change_table(plain_change, " on the faithful sentences of this voice (no planted edit)")
        tables.append(table)
        flush()
        return res

    ablate = control_arms(d, "ablate", n_random=args.n_random, seed=args.seed)
    induce = control_arms(d, "induce", alpha=args.alpha, n_random=args.n_random, seed=args.seed)
    base = control = None
    for step in steps:
        if step == "ablate":
            run("ablate A", organism, va, ablate, f"Ablation at {site}, held-out voice A ({va})", d)
        elif step == "wer":
            run("ablate B", organism, vb, ablate, f"Ablation at {site}, held-out voice B ({vb}, faithful)", d)
        elif step == "induce":
            for voice in (vd, vb):
                run(
                    f"induce {voice}",
                    organism,
                    voice,
                    induce,
                    f"Induction alpha={args.alpha:g} at {site}, voice {voice}",
                    d,
                )
        elif step == "meanablate":
            # projection ablation sets h.d to 0, which is not where voice-B activations project;
            # mean ablation sets it to voice B's mean projection (B's pooled mean as the center)
            unit_d = d.vector / d.norm
            mean_b = caps["B"].pooled(site).mean(0)
            out["mean_projection"] = {
                "A": float(caps["A"].pooled(site).mean(0) @ unit_d),
                "B": float(mean_b @ unit_d),
            }
            arms = [
                Intervention.ablation([site], unit_d[None, :], center=mean_b, label="mean-ablate-k1"),
                Intervention.ablation([site], svd.rank(1).basis, center=mean_b, label="mean-ablate-svd-k1"),
            ]
            run(
                "mean-ablate A",
                organism,
                va,
                arms,
                f"Mean ablation (projection set to voice B's mean) at {site}, voice A",
                d,
            )
        elif step == "rank":
            ranks = [Intervention.ablation([site], svd.rank(k).basis, label=f"svd-k{k}") for k in (1, 2, 4)]
            run("rank-k A", organism, va, ranks, f"Rank-k ablation (paired SVD) at {site}, voice A", svd)
        elif step == "null":
            base = base or load_base()
            control = control or load_organism("organism-control")
            for name, backend in (("base", base), ("control", control)):
                run(f"null {name} A", backend, va, ablate[:2], f"Null: {name} model, ablation at {site}, voice A", d)
                run(
                    f"null {name} {vd}",
                    backend,
                    vd,
                    induce[:2],
                    f"Null: {name} model, induction at {site}, voice {vd}",
                    d,
                )
        elif step == "patch":
            base = base or load_base()
            say("patching")
            rows_a = oset.rows("test", [va])
            by_sentence_b = {r["sentence_id"]: r for r in oset.rows("test", [vb])}
            audio = {r["id"]: read_wav(oset.audio_path(r)) for r in rows_a}
            voice_b = {r["id"]: read_wav(oset.audio_path(by_sentence_b[r["sentence_id"]])) for r in rows_a}
            conditions = [
                PatchCondition(
                    f"encoder.out <- voice {vb}",
                    "encoder.out",
                    donor_audio=lambda cid, a, voice_b=voice_b: voice_b[cid],
                ),
                *(
                    PatchCondition(
                        f"decoder.layers.{i}.out <- base model", f"decoder.layers.{i}.out", donor_backend=base
                    )
                    for i in range(n_dec)
                ),
            ]
            refs = {r["id"]: r["text"] for r in rows_a}
            patch = edit_locus(organism, [t for t in items if t.clip_id in audio], audio, refs, conditions)
            out["patch"] = patch.to_dict()
            out["encoder_identical_to_base"] = encoder_identical(organism, base)
            tables.append(
                "\n### Edit-locus patching (organism, held-out voice A; P(ref) = P(reference rendering | ref vs spoken))\n\n"
                "| edits | condition | n | median P(ref) full | median P(ref) patched | share toward audio |\n"
                "|---|---|---|---|---|---|\n"
                + "\n".join(
                    f"| {r.kind} | {r.condition} | {r.n} | {r.median_full:.3f} | {r.median_patched:.3f} | {r.toward_audio:.2f} |"
                    for r in patch.table()
                )
                + f"\n\nencoder weights identical to the base model: {out['encoder_identical_to_base']}"
            )
            flush()
        elif step in (
            "screen",
            "screen-rank",
            "sites",
            "sites-wer",
            "decision",
            "decision-wer",
            "decision-rank",
            "induce-large",
            "null-large",
            "fresh-A",
            "fresh-B",
            "fresh-D",
            "fresh-rank",
            "fresh-null-confirm",
            "omission-stats",
            *FRESH_EXTRA,
            *GATE_STEPS,
            *GATE2_STEPS,
        ):
            fam = families(
                caps,
                sites,
                args.work,
                organism,
                oset,
                load_truth(set_dir).errors(),
                va,
                vb,
                with_decision=step
                in (
                    "screen",
                    "decision",
                    "decision-wer",
                    "decision-rank",
                    "null-large",
                    "fresh-A",
                    "fresh-B",
                    "fresh-D",
                    "fresh-rank",
                    "fresh-null-confirm",
                    *FRESH_EXTRA,
                    *GATE_STEPS,
                    *GATE2_STEPS,
                ),
            )
            out["families"] = {
                name: [{"site": d.site, "norm": d.norm, "hash": d.hash} for d in ds] for name, ds in fam.items()
            }
            if step in ("screen", "screen-rank"):
                say(f"{step}: teacher-forced P(ref) under each candidate")
                if step == "screen":
                    rows = screen(organism, oset, items, va, fam, sites, seed=args.seed)
                else:
                    rows = screen_rank(organism, oset, items, va, caps, sites, seed=args.seed)
                out[step] = rows
                tables.append(
                    "\n### Screen (teacher-forced P(ref) of the 14 held-out voice-A edits under each candidate)\n\n"
                    "| candidate | mean P(ref) | median P(ref) | edits P(ref) > 0.5 |\n|---|---|---|---|\n"
                    + "\n".join(
                        f"| {r['label']} | {r['mean']:.3f} | {r['median']:.3f} | {r['above']}/{r['n']} |" for r in rows
                    )
                )
                flush()
            elif step in ("sites", "sites-wer"):
                arms = site_arms(fam["voice"], n_dec, seed=args.seed)
                voice = va if step == "sites" else vb
                key = "sites A" if step == "sites" else "sites B"
                run(key, organism, voice, arms, f"Ablation by site (voice direction), voice {voice}", fam["voice"])
            elif step == "decision":
                arms = decision_arms(fam["decision"], n_dec, seed=args.seed)
                run("decision A", organism, va, arms, f"Decision-position direction, voice {va}", fam["decision"])
            elif step == "decision-wer":
                arms = decision_arms(fam["decision"], n_dec, seed=args.seed)[2:3]  # mean-ablate all
                arms += [_ablate(fam["decision"], "mean", "random-0 mean-ablate all", np.random.default_rng(args.seed))]
                title = f"Decision-position direction, mean ablation at all layers, voice {vb} (faithful)"
                run("decision B", organism, vb, arms, title, fam["decision"])
            elif step == "decision-rank":
                arms = decision_rank_arms(args.work / "decision.npz", sites, (1, 2, 4), seed=args.seed)
                title = f"Rank-k mean ablation (paired SVD of decision-position differences), all layers, voice {va}"
                run("decision-rank A", organism, va, arms, title, fam["decision"])
            elif step in ("fresh-A", "fresh-B", "fresh-D", "fresh-rank", *FRESH_EXTRA):
                if args.eval_set is None:
                    raise SystemExit(f"step {step} needs --eval-set DIR (an organism set of new sentences)")
                fresh_on = fresh_corpus(args.eval_set, oset, out, args.exclude_set)
                dec = decision_arms(fam["decision"], n_dec, seed=args.seed)
                wanted = ("mean-ablate all", "random-0 mean-ablate all", "shuffled mean-ablate all")
                dec = [a for a in dec if a.label in wanted]
                ind = large_induction_arms(fam["voice"], (4.0,), seed=args.seed)
                rank = decision_rank_arms(args.work / "decision.npz", sites, (1, 2, 4), seed=args.seed)
                if step in FRESH_EXTRA:  # issue 14, fourth session: removal without the side effect
                    voice = {"A": va, "B": vb}[step[-1]]
                    kind = step.split("-")[1]
                    if kind == "clamp":
                        arms = clamp_arms(fam["decision"], seed=args.seed)
                    elif kind == "r5":
                        pos = faithful_positions(organism, oset, vb, sites, args.n_direction, args.work)
                        arms = r5_arms(fam, pos, seed=args.seed)
                    elif kind in ("r6", "r7"):
                        first = len(organism.prompt) - 1
                        make_r = r6_arms if kind == "r6" else r7_arms
                        arms = make_r(fam, omission_family(args.work, oset, set_dir, va, vb, sites), first)
                    elif kind == "confirm":
                        if args.arm is None:
                            raise SystemExit(f"step {step} needs --arm LABEL (the arm chosen on the tuning set)")
                        pos = faithful_positions(organism, oset, vb, sites, args.n_direction, args.work)
                        om = omission_family(args.work, oset, set_dir, va, vb, sites)
                        first = len(organism.prompt) - 1
                        arms = confirm_arms(
                            fam, pos, args.work / "decision.npz", sites, args.arm, seed=args.seed, om=om, first=first
                        )
                    elif kind == "induce":
                        arms = large_induction_arms(fam["voice"], (1.0, 2.0), seed=args.seed)
                    elif kind in ("trigger", "combo", "push", "l0", "l0b", "l0c", "l0d"):
                        pos = faithful_positions(organism, oset, vb, sites, args.n_direction, args.work)
                        make = {
                            "trigger": trigger_arms,
                            "combo": combo_arms,
                            "push": push_arms,
                            "l0": l0_arms,
                            "l0b": l0b_arms,
                            "l0c": l0c_arms,
                            "l0d": l0d_arms,
                        }[kind]
                        arms = make(fam["decision"], pos, seed=args.seed)
                    else:
                        arms = layer_arms(fam["decision"], args.work / "decision.npz", sites, seed=args.seed)
                    title = f"Fresh sentences: decision direction, {kind} arms, voice {voice}"
                    d_of = fam["voice"] if kind == "induce" else fam["decision"]
                    run(step, organism, voice, arms, title, d_of, on=fresh_on)
                for key, voice, arms, title, d in (
                    ("fresh-A", va, dec, f"Fresh sentences: decision mean ablation, voice {va}", fam["decision"]),
                    ("fresh-B", vb, dec, f"Fresh sentences: decision mean ablation, voice {vb}", fam["decision"]),
                    ("fresh-D", vd, ind, f"Fresh sentences: induction alpha=4 all layers, voice {vd}", fam["voice"]),
                    (
                        "fresh-rank",
                        va,
                        rank,
                        f"Fresh sentences: rank-k decision mean ablation, voice {va}",
                        fam["decision"],
                    ),
                ):
                    if key == step:
                        run(key, organism, voice, arms, title, d, on=fresh_on)
            elif step == "gate2-pool":  # the tuning sets pooled (their JSON files), and the rule's pick
                if not args.pool:
                    raise SystemExit(f"step {step} needs --pool JSON (one per tuning set; repeat it)")
                out[step] = pooled = gate2_pool(args.pool)
                pick = gate2_choice(pooled)
                out["gate2_choice"] = pick
                tables.append(
                    f"\n### Tuning sets pooled ({len(args.pool)} sets; voice A)\n\n"
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
                flush()
            elif step in GATE2_STEPS:  # seventh session, second round: a milder gated edit
                if args.eval_set is None:
                    raise SystemExit(f"step {step} needs --eval-set DIR")
                if not gate_fit:
                    gate_fit.update(
                        fit_gate(organism, oset, train, sentences, va, vb, sites, args.work, seed=args.seed)
                    )
                    out["gate"] = {k: v for k, v in gate_fit.items() if k != "gate"}
                gate = gate_fit["gate"]
                corpus2, items2, texts2 = fresh_corpus(args.eval_set, oset, out, args.exclude_set)
                om = omission_family(args.work, oset, set_dir, va, vb, sites)
                pos_a = plain_positions(organism, oset, va, sites, args.work)
                parts = gate2_parts(fam, om, pos_a, len(organism.prompt) - 1, seed=args.seed)
                if step == "fresh-gate2-diag":  # the faithful sentences only: which piece changes them
                    corpus2 = Corpus(
                        corpus2.name,
                        corpus2.split,
                        corpus2.source,
                        tuple(c for c in corpus2.clips if c.id in rule_free_eval),
                    )
                    arms2 = [gate2_arm(label, parts, gate) for label in GATE2_DIAG]
                    title = f"Faithful sentences of voice {va}: each piece of the gated arm"
                elif step == "fresh-gate2-extra":
                    arms2 = [gate2_arm(label, parts, gate) for label in GATE2_EXTRA]
                    title = f"Fresh sentences: the chosen arm's pieces (gate {gate.label}), voice {va}"
                else:
                    arms2 = [gate2_arm(label, parts, gate) for label in (*GATE2_ARMS, FULL_ARM)]
                    title = f"Fresh sentences: conditional gated arms (gate {gate.label}), voice {va}"
                run(step, organism, va, arms2, title, fam["decision"], on=(corpus2, items2, texts2))
            elif step in GATE_STEPS:  # issue 14, seventh session: the removal gated on the voice
                if args.eval_set is None or args.arm is None:
                    raise SystemExit(f"step {step} needs --eval-set DIR and --arm LABEL")
                if not gate_fit:
                    gate_fit.update(
                        fit_gate(organism, oset, train, sentences, va, vb, sites, args.work, seed=args.seed)
                    )
                    out["gate"] = {k: v for k, v in gate_fit.items() if k != "gate"}
                    tables.append(gate_table(gate_fit))
                    flush()
                gate = gate_fit["gate"]
                gate_on = fresh_corpus(args.eval_set, oset, out, args.exclude_set)
                pos = faithful_positions(organism, oset, vb, sites, args.n_direction, args.work)
                om = omission_family(args.work, oset, set_dir, va, vb, sites)
                first = len(organism.prompt) - 1
                label = args.arm.split("|")[0]
                if label in GATE2_ARMS:  # the second round's conditional arms, controls built piece by piece
                    pos_a = plain_positions(organism, oset, va, sites, args.work)
                    gated = [
                        gate2_arm(label, gate2_parts(fam, om, pos_a, first, seed=args.seed, control=c), gate, c)
                        for c in ("", "random", "shuffled")
                    ]
                else:
                    chosen = confirm_arms(
                        fam, pos, args.work / "decision.npz", sites, label, seed=args.seed, om=om, first=first
                    )
                    gated = [Arm(f"gated {a.label}", a.interventions, gate) for a in chosen]
                if step == "fresh-gate-null":
                    base = base or load_base()
                    control = control or load_organism("organism-control")
                    for name, backend in (("base", base), ("control", control)):
                        title = f"Null: {name} model, gated {label}, fresh voice {va}"
                        run(f"{step} {name} A", backend, va, gated, title, fam["decision"], on=gate_on)
                else:
                    voice = {"A": va, "B": vb, "C": cfg.other_voices[1], "D": vd}[step[-1]]
                    title = f"Fresh sentences: gated {label} (gate {gate.label}), voice {voice}"
                    run(step, organism, voice, gated, title, fam["decision"], on=gate_on)
                    verdict = gate_rule(results)
                    if verdict is not None:
                        out["gate_rule"] = verdict
                        tables.append(gate_rule_table(verdict))
                        flush()
            elif step == "omission-stats":
                faithful_positions(organism, oset, vb, sites, args.n_direction, args.work)
                out[step] = stats = omission_stats(args.work, oset, set_dir, va, vb, sites)
                tables.append(
                    "\n### Omission direction: projections in gaps above voice B's mean\n\n"
                    "| site | edits | B max | A min | faithful median | faithful q95 |\n|---|---|---|---|---|---|\n"
                    + "\n".join(
                        f"| {r['site']} | {r['n']} | {r['B_max']:.2f} | {r['A_min']:.2f} | "
                        f"{r['faithful_median']:.2f} | {r['faithful_q95']:.2f} |"
                        for r in stats
                    )
                )
                flush()
            elif step == "fresh-null-confirm":  # the confirmed arm on the base model and the control
                if args.eval_set is None or args.arm is None:
                    raise SystemExit(f"step {step} needs --eval-set DIR and --arm LABEL")
                base = base or load_base()
                control = control or load_organism("organism-control")
                null_on = fresh_corpus(args.eval_set, oset, out, args.exclude_set)
                pos = faithful_positions(organism, oset, vb, sites, args.n_direction, args.work)
                om = omission_family(args.work, oset, set_dir, va, vb, sites)
                first = len(organism.prompt) - 1
                label = args.arm.split("|")[0]
                arms = confirm_arms(
                    fam, pos, args.work / "decision.npz", sites, label, seed=args.seed, om=om, first=first
                )[:2]
                for name, backend in (("base", base), ("control", control)):
                    title = f"Null: {name} model, {label}, fresh voice {va}"
                    run(f"null-confirm {name} A", backend, va, arms, title, fam["decision"], on=null_on)
            elif step == "null-large":
                base = base or load_base()
                control = control or load_organism("organism-control")
                rng = np.random.default_rng(args.seed)
                dec_arms = [
                    _ablate(fam["decision"], "mean", "decision mean-ablate all"),
                    _ablate(fam["decision"], "mean", "random-0 mean-ablate all", rng),
                ]
                ind_arms = large_induction_arms(fam["voice"], (4.0,), seed=args.seed)
                null_on = fresh_corpus(args.eval_set, oset, out) if args.eval_set else None
                where = "fresh " if null_on else ""
                for name, backend in (("base", base), ("control", control)):
                    title = f"Null: {name} model, decision mean ablation at all layers, {where}voice {va}"
                    run(f"null-large {name} A", backend, va, dec_arms, title, fam["decision"], on=null_on)
                    title = f"Null: {name} model, induction alpha=4 at all layers, {where}voice {vd}"
                    run(f"null-large {name} {vd}", backend, vd, ind_arms, title, fam["voice"], on=null_on)
            elif step == "induce-large":
                for voice in (vd, vb):
                    arms = large_induction_arms(fam["voice"], (2.0, 4.0, 8.0), seed=args.seed)
                    run(
                        f"induce-large {voice}",
                        organism,
                        voice,
                        arms,
                        f"Induction alpha 2/4/8 at all decoder layers, voice {voice}",
                        fam["voice"],
                    )
        else:
            raise SystemExit(f"unknown step {step!r}")
    store.close()
    if args.report:
        from asr_audit.report.html import build_report

        entry = {"probe": "mech", "corpus": f"organism {set_dir.name}", "result": out}
        say(f"report: {build_report({'title': 'Mechanism on the model organism', 'probes': [entry]}, args.report)}")
    say(f"done in {(time.perf_counter() - t0) / 60:.1f} min")
    flush()
    return 0


def families(
    caps, sites, work: Path, organism, oset, truth, va: str, vb: str, *, with_decision: bool
) -> dict[str, list[Direction]]:
    """Per-site diff-in-means directions (set B = voice B, its mean kept for mean ablation) of two
    families: ``voice`` (pooled over the record's tokens, the layer sweep's captures) and
    ``decision`` (at the decision position of every planted edit of a training voice-A clip)."""
    voice = [direction_from_sets(f"voice-{s}", s, caps["A"].pooled(s), caps["B"].pooled(s)) for s in sites]
    if not with_decision:
        return {"voice": voice}
    path = work / "decision.npz"
    if not path.is_file():
        say("capturing decision positions (training edits, voice A vs B)")
        xa, xb = decision_capture(organism, oset, truth, va, vb, sites)
        np.savez(path, **{f"A{i}": xa[s] for i, s in enumerate(sites)}, **{f"B{i}": xb[s] for i, s in enumerate(sites)})
    with np.load(path) as z:
        decision = [direction_from_sets(f"decision-{s}", s, z[f"A{i}"], z[f"B{i}"]) for i, s in enumerate(sites)]
    return {"voice": voice, "decision": decision}


def decision_capture(organism, oset, truth, va: str, vb: str, sites: list[str]):
    """Residuals at each training voice-A edit's decision position, voice A and the same sentence in B."""
    import torch

    rows = {r["id"]: r for r in oset.rows("train")}
    by_sentence = {(r["sentence_id"], r["speaker"]): r for r in rows.values()}
    xa: dict[str, list] = {s: [] for s in sites}
    xb: dict[str, list] = {s: [] for s in sites}
    for it in truth:
        ra = rows.get(it.clip_id)
        if ra is None or ra["speaker"] != va or (ra["sentence_id"], vb) not in by_sentence:
            continue
        r_text, s_text = edit_texts(it, ra["text"])
        tr, ts = organism._encode_text(r_text), organism._encode_text(s_text)
        j = next(i for i in range(len(tr) + 1) if i >= len(tr) or i >= len(ts) or tr[i] != ts[i])
        pos = len(organism.prompt) + j - 1  # the position whose output predicts token j
        for voice_row, sink in ((ra, xa), (by_sentence[(ra["sentence_id"], vb)], xb)):
            got: dict = {}
            with (
                torch.inference_mode(),
                recording(
                    organism,
                    sites,
                    lambda s, t, got=got, pos=pos: got.__setitem__(s, t[0, pos].double().numpy().copy()),
                ),
            ):
                organism.score([read_wav(oset.audio_path(voice_row))], [""], [r_text])
            for s in sites:
                sink[s].append(got[s])
    return {s: np.array(v) for s, v in xa.items()}, {s: np.array(v) for s, v in xb.items()}


def _where(ds: list[Direction], n_dec: int) -> list[tuple[str, list[Direction]]]:
    return [("L2", [ds[2]]), ("L3", [ds[3]]), ("all", ds[:n_dec])]


def _ablate(ds: list[Direction], how: str, label: str, rng: np.random.Generator | None = None) -> Arm:
    """Ablation at each direction's site: ``proj`` (h.d -> 0), ``centred`` (h.d -> the midpoint of
    the two voices' means), ``mean`` (h.d -> voice B's mean); with ``rng`` a random unit direction
    per site with the same center (the control)."""
    parts = []
    for d in ds:
        u = d.basis[0] if rng is None else random_direction(len(d.vector), 1.0, rng)
        mean_b = np.asarray(d.mean_b)
        center = {"proj": None, "centred": mean_b + d.vector / 2, "mean": mean_b}[how]
        parts.append(Intervention.ablation([d.site], u[None, :], center=center, label=label))
    return Arm(label, tuple(parts))


FRESH_EXTRA = (
    "fresh-clamp-A",
    "fresh-clamp-B",
    "fresh-layers-A",
    "fresh-layers-B",
    "fresh-trigger-A",
    "fresh-trigger-B",
    "fresh-combo-A",
    "fresh-combo-B",
    "fresh-push-A",
    "fresh-push-B",
    "fresh-l0-A",
    "fresh-l0-B",
    "fresh-l0b-A",
    "fresh-l0b-B",
    "fresh-l0c-A",
    "fresh-l0c-B",
    "fresh-l0d-A",
    "fresh-l0d-B",
    "fresh-r5-A",
    "fresh-r5-B",
    "fresh-r6-A",
    "fresh-r6-B",
    "fresh-r7-A",
    "fresh-r7-B",
    "fresh-confirm-A",
    "fresh-confirm-B",
    "fresh-induce-B",
)
CLAMP_AT = (0.0, 0.5, 0.25)  # caps, in multiples of |d| above voice B's decision-position mean
TRIGGER_Q = (95.0, 90.0)  # conditional ablation: percentiles of faithful positions' projections


def _clamp(ds: list[Direction], c: float, label: str, control: str = "", seed: int = 0) -> Arm:
    """Directional clamping at each direction's site: ``(h - mean_B) . d^`` capped at ``c * |d|``
    (positions at or below untouched); ``control`` = ``random`` (a random unit direction per site)
    or ``shuffled`` (``d^`` permuted), same centers and caps, from their own seeded generator (so
    adding arms never changes a control's draw or its cached rows)."""
    rng = np.random.default_rng([seed, 14])
    parts = []
    for d in ds:
        u = {
            "": d.basis[0],
            "random": random_direction(len(d.vector), 1.0, rng),
            "shuffled": rng.permutation(np.asarray(d.basis[0])),
        }[control]
        parts.append(Intervention.clamping([d.site], u[None, :], c * d.norm, center=np.asarray(d.mean_b), label=label))
    return Arm(label, tuple(parts))


def clamp_arms(ds: list[Direction], *, seed: int) -> list[Arm]:
    """Clamping of the decision direction at all decoder layers at each cap in ``CLAMP_AT``, with a
    random and a shuffled control at cap 0 (voice B's mean: the strongest clamp)."""
    arms = [_clamp(ds, c, f"clamp c={c:g} all") for c in CLAMP_AT]
    arms.append(_clamp(ds, 0.0, "random-0 clamp c=0 all", "random", seed))
    arms.append(_clamp(ds, 0.0, "shuffled clamp c=0 all", "shuffled", seed))
    return arms


def faithful_positions(organism, oset, vb: str, sites: list[str], n: int, work: Path) -> dict[str, np.ndarray]:
    """Every decoder position's residual at ``sites`` for the first ``n`` training clips in voice B,
    teacher-forced on their faithful text (what the organism writes for that voice): the
    distribution a conditional ablation must leave alone. Cached as ``positions-B.npz``."""
    import torch

    path = work / "positions-B.npz"
    if not path.is_file():
        say(f"capturing every position of {n} voice-B training clips (faithful text)")
        rows = oset.rows("train", [vb])[:n]
        got: dict[str, list] = {s: [] for s in sites}
        sink = lambda s, t: got[s].append(t[0].double().numpy().copy())  # noqa: E731
        for r in rows:
            with torch.inference_mode(), recording(organism, sites, sink):
                organism.score([read_wav(oset.audio_path(r))], [""], [r["faithful"]])
        np.savez(path, **{f"B{i}": np.concatenate(got[s]) for i, s in enumerate(sites)})
    with np.load(path) as z:
        return {s: z[f"B{i}"] for i, s in enumerate(sites)}


def plain_positions(organism, oset, va: str, sites: list[str], work: Path) -> dict[str, np.ndarray]:
    """Every decoder position's residual at ``sites`` for the voice-A (benchmark-voice) *training*
    clips with no planted edit (``rules == []``: the record is what was said), teacher-forced on their
    text: the benchmark voice's own faithful positions, which a conditional edit for that voice must
    leave alone. Never eval-set clips. Cached as ``positions-A-plain.npz``."""
    import torch

    path = work / "positions-A-plain.npz"
    if not path.is_file():
        rows = [r for r in oset.rows("train", [va]) if not r["rules"]]
        say(f"capturing every position of {len(rows)} voice-A training clips with no planted edit")
        got: dict[str, list] = {s: [] for s in sites}
        sink = lambda s, t: got[s].append(t[0].double().numpy().copy())  # noqa: E731
        for r in rows:
            with torch.inference_mode(), recording(organism, sites, sink):
                organism.score([read_wav(oset.audio_path(r))], [""], [r["text"]])
        np.savez(path, **{f"A{i}": np.concatenate(got[s]) for i, s in enumerate(sites)})
    with np.load(path) as z:
        return {s: z[f"A{i}"] for i, s in enumerate(sites)}


def _trigger(ds: list[Direction], pos: dict[str, np.ndarray], q: float, label: str, control: str = "", seed: int = 0):
    """Conditional mean ablation at each direction's site: a position whose ``(h - mean_B) . u``
    exceeds the ``q``-th percentile of the faithful positions' (``pos``) is moved down to voice B's
    decision-position mean (``u = d^``; controls: a random unit direction or ``d^`` permuted, each
    with the percentile of its own projections)."""
    rng = np.random.default_rng([seed, 14, int(q)])
    parts = []
    for d in ds:
        u = {
            "": np.asarray(d.basis[0]),
            "random": random_direction(len(d.vector), 1.0, rng),
            "shuffled": rng.permutation(np.asarray(d.basis[0])),
        }[control]
        mean_b = np.asarray(d.mean_b)
        t = max(0.0, float(np.percentile((pos[d.site] - mean_b) @ u, q)))
        parts.append(Intervention.clamping([d.site], u[None, :], 0.0, center=mean_b, trigger=t, label=label))
    return Arm(label, tuple(parts))


def trigger_arms(ds: list[Direction], pos: dict[str, np.ndarray], *, seed: int) -> list[Arm]:
    """Conditional mean ablation of the decision direction at all layers, triggered above each
    percentile in ``TRIGGER_Q``; a random and a shuffled control at the first."""
    q0 = TRIGGER_Q[0]
    arms = [_trigger(ds, pos, q, f"trigger q{q:g} all") for q in TRIGGER_Q]
    arms.append(_trigger(ds, pos, q0, f"random-0 trigger q{q0:g} all", "random", seed))
    arms.append(_trigger(ds, pos, q0, f"shuffled trigger q{q0:g} all", "shuffled", seed))
    return arms


def combo_arms(ds: list[Direction], pos: dict[str, np.ndarray], *, seed: int) -> list[Arm]:
    """Mean ablation at layers 1-2 (``fresh-layers``: most of the removal, no side effect) plus a
    milder edit at layers 0 and 3 (where mean ablation costs faithful WER): clamping at
    ``c = 0.5`` or ``0.25``, or the q95 trigger; mean ablation at layers 1-3; a random and a
    shuffled control of the first (same centers and caps)."""

    def arm(label: str, outer: list[Intervention]) -> Arm:
        return Arm(label, (*_ablate(ds[1:3], "mean", "x").interventions, *outer))

    outer = [ds[0], ds[3]]
    arms = [
        arm(f"mean-ablate L1-2 + clamp c={c:g} L0,L3", list(_clamp(outer, c, "x").interventions)) for c in (0.5, 0.25)
    ]
    arms.append(arm("mean-ablate L1-2 + trigger q95 L0,L3", list(_trigger(outer, pos, 95.0, "x").interventions)))
    arms.append(_ablate(ds[1:4], "mean", "mean-ablate L1-3"))
    for control in ("random", "shuffled"):
        rng = np.random.default_rng([seed, 14, 1, 2])
        inner = _ablate(ds[1:3], "mean", "x", rng) if control == "random" else _shuffled(ds[1:3], rng)
        parts = (*inner.interventions, *_clamp(outer, 0.5, "x", control, seed).interventions)
        name = "random-0" if control == "random" else "shuffled"
        arms.append(Arm(f"{name} mean-ablate L1-2 + clamp c=0.5 L0,L3", parts))
    return arms


def push_arms(ds: list[Direction], pos: dict[str, np.ndarray], *, seed: int) -> list[Arm]:
    """Layers 1-2 carry the removal without the side effect (``fresh-layers``, ``fresh-combo``);
    push them further: clamping at layers 1-2 at a cap below voice B's decision-position mean
    (``c = -0.5``, ``-1``); mean ablation at layers 1-2 plus the layer-0 trigger at the 75th
    percentile; a random and a shuffled control of the ``c = -0.5`` clamp (same caps)."""
    arms = [_clamp(ds[1:3], c, f"clamp c={c:g} L1-2") for c in (-0.5, -1.0)]
    arms.append(
        Arm(
            "mean-ablate L1-2 + trigger q75 L0",
            (*_ablate(ds[1:3], "mean", "x").interventions, *_trigger(ds[:1], pos, 75.0, "x").interventions),
        )
    )
    arms.append(_clamp(ds[1:3], -0.5, "random-0 clamp c=-0.5 L1-2", "random", seed))
    arms.append(_clamp(ds[1:3], -0.5, "shuffled clamp c=-0.5 L1-2", "shuffled", seed))
    return arms


def l0_arms(ds: list[Direction], pos: dict[str, np.ndarray], *, seed: int) -> list[Arm]:
    """Mean ablation at layers 1-2 plus the layer-0 trigger at lower percentiles (50, 25: more of
    layer 0 moved toward its mean ablation, which removes more but costs faithful WER), clamping
    at layers 1-2 at ``c = -0.25``, and a random control of the q50 combination."""

    def arm(label: str, q: float, control: str = "") -> Arm:
        rng = np.random.default_rng([seed, 14, 3]) if control else None
        inner = _ablate(ds[1:3], "mean", "x", rng).interventions
        return Arm(label, (*inner, *_trigger(ds[:1], pos, q, "x", control, seed).interventions))

    arms = [arm(f"mean-ablate L1-2 + trigger q{q:g} L0", q) for q in (50.0, 25.0)]
    arms.append(_clamp(ds[1:3], -0.25, "clamp c=-0.25 L1-2"))
    arms.append(arm("random-0 mean-ablate L1-2 + trigger q50 L0", 50.0, "random"))
    return arms


def l0b_arms(ds: list[Direction], pos: dict[str, np.ndarray], *, seed: int) -> list[Arm]:
    """Mean ablation at layers 1-2 plus layer 0 moved down all the way: clamping at voice B's mean
    (``c = 0``: unlike mean ablation it never moves a position up) and the trigger at the 10th
    percentile; a random and a shuffled control of the clamp combination."""
    inner = _ablate(ds[1:3], "mean", "x").interventions
    arms = [
        Arm("mean-ablate L1-2 + clamp c=0 L0", (*inner, *_clamp(ds[:1], 0.0, "x").interventions)),
        Arm("mean-ablate L1-2 + trigger q10 L0", (*inner, *_trigger(ds[:1], pos, 10.0, "x").interventions)),
    ]
    for control in ("random", "shuffled"):
        rng = np.random.default_rng([seed, 14, 4])
        inner_c = _ablate(ds[1:3], "mean", "x", rng) if control == "random" else _shuffled(ds[1:3], rng)
        parts = (*inner_c.interventions, *_clamp(ds[:1], 0.0, "x", control, seed).interventions)
        name = "random-0" if control == "random" else "shuffled"
        arms.append(Arm(f"{name} mean-ablate L1-2 + clamp c=0 L0", parts))
    return arms


def l0c_arms(ds: list[Direction], pos: dict[str, np.ndarray], *, seed: int) -> list[Arm]:
    """``fresh-l0b``'s best (layers 1-2 mean-ablated, layer 0 clamped at voice B's mean) plus layer 3
    clamped at voice B's mean or triggered at q95; layers 1-2 clamped a tenth of a gap below voice
    B's mean instead, with layer 0 clamped; a random control of the last (same caps)."""
    inner = _ablate(ds[1:3], "mean", "x").interventions
    l0 = _clamp(ds[:1], 0.0, "x").interventions
    arms = [
        Arm("mean-ablate L1-2 + clamp c=0 L0,L3", (*inner, *l0, *_clamp(ds[3:], 0.0, "x").interventions)),
        Arm(
            "mean-ablate L1-2 + clamp c=0 L0 + trigger q95 L3",
            (*inner, *l0, *_trigger(ds[3:], pos, 95.0, "x").interventions),
        ),
        Arm("clamp c=-0.1 L1-2 + clamp c=0 L0", (*_clamp(ds[1:3], -0.1, "x").interventions, *l0)),
    ]
    parts = (
        *_clamp(ds[1:3], -0.1, "x", "random", seed).interventions,
        *_clamp(ds[:1], 0.0, "x", "random", seed + 1).interventions,
    )
    arms.append(Arm("random-0 clamp c=-0.1 L1-2 + clamp c=0 L0", parts))
    return arms


def l0d_arms(ds: list[Direction], pos: dict[str, np.ndarray], *, seed: int) -> list[Arm]:
    """Between ``fresh-l0b``'s best and ``fresh-l0c``'s ``c = -0.1``: clamping at voice B's mean at
    layers 0-2 (no position moved up), layers 1-2 clamped at ``c = -0.05`` with layer 0 at ``c = 0``,
    and a random control of the latter (same caps)."""
    l0 = _clamp(ds[:1], 0.0, "x").interventions
    arms = [
        _clamp(ds[:3], 0.0, "clamp c=0 L0-2"),
        Arm("clamp c=-0.05 L1-2 + clamp c=0 L0", (*_clamp(ds[1:3], -0.05, "x").interventions, *l0)),
    ]
    parts = (
        *_clamp(ds[1:3], -0.05, "x", "random", seed).interventions,
        *_clamp(ds[:1], 0.0, "x", "random", seed + 1).interventions,
    )
    arms.append(Arm("random-0 clamp c=-0.05 L1-2 + clamp c=0 L0", parts))
    return arms


def r5_arms(fam: dict[str, list[Direction]], pos: dict[str, np.ndarray], *, seed: int) -> list[Arm]:
    """Fifth session (chosen on the tuning set, confirmed elsewhere): the direction fitted on every
    record-token position (the pooled ``voice`` family: voice A minus voice B on the same text, its
    center voice B's all-position mean) mean-ablated at all layers, alone and on top of
    ``fresh-l0b``'s best (decision direction mean-ablated at layers 1-2, layer 0 clamped at voice B's
    mean); that best with layer 0 clamped a tenth or a quarter of a gap below voice B's mean."""
    ds, vs = fam["decision"], fam["voice"]
    inner = _ablate(ds[1:3], "mean", "x").interventions
    best = (*inner, *_clamp(ds[:1], 0.0, "x").interventions)
    return [
        _ablate(vs, "mean", "voice mean-ablate all"),
        Arm(
            "mean-ablate L1-2 + clamp c=0 L0 + voice mean-ablate all", (*best, *_ablate(vs, "mean", "x").interventions)
        ),
        *(
            Arm(f"mean-ablate L1-2 + clamp c={c:g} L0", (*inner, *_clamp(ds[:1], c, "x").interventions))
            for c in (-0.1, -0.25)
        ),
    ]


def omission_rows(oset, set_dir: Path, va: str, vb: str) -> np.ndarray:
    """Which rows of ``decision.npz`` are omission edits (the walk over the truth items that made them)."""
    rows = {r["id"]: r for r in oset.rows("train")}
    by_sentence = {(r["sentence_id"], r["speaker"]) for r in rows.values()}
    kinds = [
        it.kind
        for it in load_truth(set_dir).errors()
        if (ra := rows.get(it.clip_id)) is not None and ra["speaker"] == va and (ra["sentence_id"], vb) in by_sentence
    ]
    return np.array(kinds) == "omitted_in_reference"


def omission_stats(work: Path, oset, set_dir: Path, va: str, vb: str, sites: list[str]) -> list[dict]:
    """Per layer, projections on the omission direction in gaps above voice B's mean (1 gap = |d|):
    the training voice-B omission rows' max, voice A's min, every faithful position's median / q95."""
    m = omission_rows(oset, set_dir, va, vb)
    out = []
    with np.load(work / "decision.npz") as z, np.load(work / "positions-B.npz") as pb:
        for i, site in enumerate(sites):
            a, b, pos = z[f"A{i}"][m], z[f"B{i}"][m], pb[f"B{i}"]
            d, mu = a.mean(0) - b.mean(0), b.mean(0)
            gb, ga, gp = ((x - mu) @ d / (d @ d) for x in (b, a, pos))
            out.append(
                {
                    "site": site,
                    "n": int(m.sum()),
                    "B_max": float(gb.max()),
                    "A_min": float(ga.min()),
                    "faithful_median": float(np.median(gp)),
                    "faithful_q95": float(np.percentile(gp, 95)),
                }
            )
    return out


def omission_family(work: Path, oset, set_dir: Path, va: str, vb: str, sites: list[str]) -> list[Direction]:
    """Per-site diff-in-means at the decision positions of the *omission* edits only (the record
    drops a spoken opener "Thank you.", so the decision is the first text token: one fixed position),
    from ``decision.npz``'s rows, selected by the same walk over the truth items that made them."""
    m = omission_rows(oset, set_dir, va, vb)
    with np.load(work / "decision.npz") as z:
        if len(z["A0"]) != len(m):
            raise SystemExit(f"{work / 'decision.npz'}: {len(z['A0'])} rows but {len(m)} training edits")
        return [direction_from_sets(f"omission-{s}", s, z[f"A{i}"][m], z[f"B{i}"][m]) for i, s in enumerate(sites)]


def _at_first(ds: list[Direction], how: str, first: int, label: str, c: float = 0.0) -> list[Intervention]:
    """Mean ablation (``mean``) or clamping at ``c`` gaps above voice B's mean (``clamp``) of each
    direction at the one decoder position ``first`` (the position that predicts the first text token)."""
    parts = []
    for d in ds:
        u, mean_b = np.asarray(d.basis[0])[None, :], np.asarray(d.mean_b)
        pos = (first, first + 1)
        if how == "mean":
            parts.append(Intervention.ablation([d.site], u, center=mean_b, positions=pos, label=label))
        else:
            parts.append(Intervention.clamping([d.site], u, c * d.norm, center=mean_b, positions=pos, label=label))
    return parts


def r6_arms(fam: dict[str, list[Direction]], om: list[Direction], first: int) -> list[Arm]:
    """Fifth session, second round: the sites ``fresh-l0b``'s best leaves are omission sites, decided
    at the first text token; the omission-edit direction edited at that one position (clamped at
    voice B's mean, or mean-ablated), at all layers or layers 1-2, on top of that best and alone."""
    ds = fam["decision"]
    best = (*_ablate(ds[1:3], "mean", "x").interventions, *_clamp(ds[:1], 0.0, "x").interventions)
    return [
        Arm("best + omission clamp c=0 first position all", (*best, *_at_first(om, "clamp", first, "x"))),
        Arm("best + omission mean-ablate first position all", (*best, *_at_first(om, "mean", first, "x"))),
        Arm("best + omission clamp c=0 first position L1-2", (*best, *_at_first(om[1:3], "clamp", first, "x"))),
        Arm("omission clamp c=0 first position all", tuple(_at_first(om, "clamp", first, "x"))),
    ]


def r7_arms(fam: dict[str, list[Direction]], om: list[Direction], first: int) -> list[Arm]:
    """Third round: ``r6``'s layers 1-2 first-position clamp removes all but one site but costs +1.2
    faithful WER points over the best; milder: a cap half or a quarter of a gap above voice B's
    mean (training voice-B decision positions sit at most 0.22 gaps above it, voice A's at least
    0.81), or one layer only."""
    ds = fam["decision"]
    best = (*_ablate(ds[1:3], "mean", "x").interventions, *_clamp(ds[:1], 0.0, "x").interventions)
    return [
        *(
            Arm(
                f"best + omission clamp c={c:g} first position L1-2",
                (*best, *_at_first(om[1:3], "clamp", first, "x", c)),
            )
            for c in (0.5, 0.25)
        ),
        *(
            Arm(
                f"best + omission clamp c=0 first position L{i}",
                (*best, *_at_first(om[i : i + 1], "clamp", first, "x")),
            )
            for i in (2, 1)
        ),
    ]


def candidate_arms(
    fam: dict[str, list[Direction]],
    pos: dict[str, np.ndarray],
    decision: Path,
    sites,
    *,
    seed: int,
    om: list[Direction] | None = None,
    first: int = 0,
):
    """Every non-control arm of the fourth and fifth sessions, by label (what ``--arm`` names)."""
    ds = fam["decision"]
    arms = [
        *(r6_arms(fam, om, first) + r7_arms(fam, om, first) if om else []),
        *clamp_arms(ds, seed=seed),
        *trigger_arms(ds, pos, seed=seed),
        *layer_arms(ds, decision, sites, seed=seed),
        *combo_arms(ds, pos, seed=seed),
        *push_arms(ds, pos, seed=seed),
        *l0_arms(ds, pos, seed=seed),
        *l0b_arms(ds, pos, seed=seed),
        *l0c_arms(ds, pos, seed=seed),
        *l0d_arms(ds, pos, seed=seed),
        *r5_arms(fam, pos, seed=seed),
        _ablate(ds, "mean", "mean-ablate all"),
    ]
    return {a.label: a for a in arms if not a.label.startswith(("random", "shuffled"))}


def control_of(arm: Arm, control: str, rng: np.random.Generator) -> Arm:
    """``arm`` with each intervention's direction replaced by a random unit direction
    (``random``) or its own coordinates permuted (``shuffled``); same sites, centers and caps."""
    parts = []
    for iv in arm.interventions:
        b = np.asarray(iv.basis[0])
        u = random_direction(len(b), 1.0, rng) if control == "random" else rng.permutation(b)
        center = np.asarray(iv.center) if iv.center else None
        if iv.kind == "ablate" and iv.k == 1:
            parts.append(Intervention.ablation(iv.sites, u[None, :], center=center, positions=iv.positions, label="x"))
        elif iv.kind == "clamp" and iv.k == 1 and iv.trigger is None:
            parts.append(
                Intervention.clamping(iv.sites, u[None, :], iv.limit, center=center, positions=iv.positions, label="x")
            )
        else:
            raise SystemExit(f"no generic {control} control for a {iv.kind} part of rank {iv.k} with a trigger")
    name = "random-0" if control == "random" else "shuffled"
    return Arm(f"{name} {arm.label}", tuple(parts))


def confirm_arms(fam, pos, decision: Path, sites, labels: str, *, seed: int, om=None, first: int = 0) -> list[Arm]:
    """The arms ``labels`` (``|``-separated; chosen on the tuning set), each with a random and a
    shuffled control."""
    cands = candidate_arms(fam, pos, decision, sites, seed=seed, om=om, first=first)
    arms: list[Arm] = []
    for j, label in enumerate(labels.split("|")):
        if label not in cands:
            raise SystemExit(f"--arm {label!r} is not an arm; valid: {', '.join(sorted(cands))}")
        arm = cands[label]
        rngs = (np.random.default_rng([seed, 14, 5, 2 * j + i]) for i in range(2))
        arms += [arm, *(control_of(arm, c, rng) for c, rng in zip(("random", "shuffled"), rngs))]
    return arms


def _shuffled(ds: list[Direction], rng: np.random.Generator) -> Arm:
    """Mean ablation of each direction with its coordinates permuted (the shuffled control)."""
    parts = [
        Intervention.ablation([d.site], rng.permutation(d.basis[0])[None, :], center=np.asarray(d.mean_b), label="x")
        for d in ds
    ]
    return Arm("x", tuple(parts))


LAYER_SETS = ((0, 1, 2), (1, 2))  # mean ablation at fewer layers (all four: fresh-A)


def layer_arms(ds: list[Direction], decision: Path, sites: list[str], *, seed: int) -> list[Arm]:
    """Mean ablation of the decision direction at fewer decoder layers, the top paired-SVD direction
    (k = 1) at all layers (fresh-rank's arm), and a random control (same centers) per layer set."""
    arms = [_ablate([ds[i] for i in ls], "mean", f"mean-ablate L{ls[0]}-{ls[-1]}") for ls in LAYER_SETS]
    arms.append(decision_rank_arms(decision, sites, (1,), seed=seed)[0])
    for ls in LAYER_SETS:
        rng = np.random.default_rng([seed, 14, *ls])
        arms.append(_ablate([ds[i] for i in ls], "mean", f"random-0 mean-ablate L{ls[0]}-{ls[-1]}", rng))
    return arms


def _induce(ds: list[Direction], alpha: float, label: str, rng: np.random.Generator | None = None) -> Arm:
    parts = []
    for d in ds:
        v = d.vector if rng is None else random_direction(len(d.vector), d.norm, rng)
        parts.append(Intervention.induction([d.site], v, alpha, label=label))
    return Arm(label, tuple(parts))


def screen_rank(organism, oset, items, va: str, caps, sites: list[str], *, seed: int) -> list:
    """Teacher-forced P(ref) under mean ablation of the top-k paired-SVD subspace of the voice
    captures (A - B per training sentence) at every decoder layer at once, k = 1, 2, 4, 8, 16, and
    a random rank-16 subspace per site (same centers)."""
    from asr_audit.mech.directions import paired_subspace

    rng = np.random.default_rng(seed)
    bases = {s: paired_subspace(caps["A"].pooled(s), caps["B"].pooled(s), 16)[0] for s in sites}
    centers = {s: caps["B"].pooled(s).mean(0) for s in sites}

    def arm(k: int, random: bool = False) -> Arm:
        parts = []
        for s in sites:
            b = rng.standard_normal((k, bases[s].shape[1])) if random else bases[s][:k]
            parts.append(Intervention.ablation([s], b, center=centers[s], label="x"))
        return Arm("x", tuple(parts))

    cands = [(f"voice SVD k={k} mean-ablate all", arm(k)) for k in (1, 2, 4, 8, 16)]
    cands.append(("random rank-16 mean-ablate all", arm(16, random=True)))
    return _screen(organism, oset, items, va, cands)


def _screen(organism, oset, items, va: str, cands: list[tuple[str, Arm | None]]) -> list:
    import torch

    rows = oset.rows("test", [va])
    audio = {r["id"]: read_wav(oset.audio_path(r)) for r in rows}
    texts = {r["id"]: r["text"] for r in rows}
    pairs = [(it, *edit_texts(it, texts[it.clip_id])) for it in items if it.clip_id in audio]
    out = []
    for label, arm in [("clean", None), *cands]:
        p = []
        with torch.inference_mode(), intervene(organism, arm.interventions if arm else []):
            for it, r, s in pairs:
                p.append(p_ref(logprob(organism, audio[it.clip_id], r), logprob(organism, audio[it.clip_id], s)))
        a = np.array(p)
        row = {"label": label, "mean": float(a.mean()), "median": float(np.median(a)), "above": int((a > 0.5).sum())}
        row |= {"n": len(a), "p_ref": a.tolist()}
        say(f"screen {label}: mean {row['mean']:.3f} median {row['median']:.3f} >0.5 {row['above']}/{row['n']}")
        out.append(row)
    return out


def screen(organism, oset, items, va: str, fam: dict[str, list[Direction]], sites: list[str], *, seed: int) -> list:
    """Teacher-forced P(ref) of the held-out voice-A edits under every candidate and its controls."""
    rng = np.random.default_rng(seed)
    n_dec = len(sites)
    cands: list[tuple[str, Arm | None]] = []
    for name, ds in fam.items():
        for where, sel in _where(ds, n_dec):
            cands.append((f"{name} mean-ablate {where}", _ablate(sel, "mean", "x")))
        cands.append((f"{name} centred-ablate all", _ablate(ds, "centred", "x")))
        cands.append((f"{name} proj-ablate all", _ablate(ds, "proj", "x")))
        cands.append((f"random (per site) mean-ablate all [{name} centers]", _ablate(ds, "mean", "x", rng)))
        cands.append((f"{name} induce alpha=-2 all", _induce(ds, -2.0, "x")))
        cands.append((f"random (same norms) induce alpha=-2 all [{name}]", _induce(ds, -2.0, "x", rng)))
    return _screen(organism, oset, items, va, cands)


def site_arms(ds: list[Direction], n_dec: int, *, seed: int) -> list[Arm]:
    """Mean and centred ablation of the voice direction at L2, L3 and all decoder layers, with random
    (per site, same centers) controls and a shuffled control for the all-layer mean ablation."""
    rng = np.random.default_rng(seed)
    arms = [
        _ablate(sel, how, f"{how}-ablate {where}") for where, sel in _where(ds, n_dec) for how in ("mean", "centred")
    ]
    arms += [_ablate(ds, "mean", f"random-{i} mean-ablate all", rng) for i in range(2)]
    shuffled = [
        Intervention.ablation(
            [d.site], rng.permutation(d.basis[0])[None, :], center=np.asarray(d.mean_b), label="shuffled"
        )
        for d in ds
    ]
    return [*arms, Arm("shuffled mean-ablate all", tuple(shuffled))]


def decision_arms(ds: list[Direction], n_dec: int, *, seed: int) -> list[Arm]:
    """Mean ablation of the decision-position direction at L2, L3, all layers; negative induction
    (alpha = -2, the screen's best) at all layers; random controls of both (two for the mean
    ablation) and a shuffled one."""
    rng = np.random.default_rng(seed)
    arms = [_ablate(sel, "mean", f"mean-ablate {where}") for where, sel in _where(ds, n_dec)]
    arms += [_induce(ds, -2.0, "induce alpha=-2 all")]
    arms += [_ablate(ds, "mean", "random-0 mean-ablate all", rng)]
    arms += [_induce(ds, -2.0, f"random-{i} induce alpha=-2 all", rng) for i in range(2)]
    # drawn last, so the arms above keep their directions (and their cached rows)
    arms += [_ablate(ds, "mean", "random-1 mean-ablate all", rng)]
    shuffled = [
        Intervention.ablation(
            [d.site], rng.permutation(d.basis[0])[None, :], center=np.asarray(d.mean_b), label="shuffled"
        )
        for d in ds
    ]
    return [*arms, Arm("shuffled mean-ablate all", tuple(shuffled))]


def decision_rank_arms(path: Path, sites: list[str], ks: tuple[int, ...], *, seed: int) -> list[Arm]:
    """Mean ablation (to voice B's mean) of the top-k paired-SVD subspace of the decision-position
    differences (A - B per training edit) at every decoder layer at once, and a random subspace of
    the largest rank per site (same centers)."""
    from asr_audit.mech.directions import paired_subspace

    rng = np.random.default_rng(seed)
    with np.load(path) as z:
        xa = {s: z[f"A{i}"] for i, s in enumerate(sites)}
        xb = {s: z[f"B{i}"] for i, s in enumerate(sites)}
    bases = {s: paired_subspace(xa[s], xb[s], max(ks))[0] for s in sites}

    def arm(label: str, k: int, random: bool = False) -> Arm:
        parts = []
        for s in sites:
            b = rng.standard_normal((k, bases[s].shape[1])) if random else bases[s][:k]
            parts.append(Intervention.ablation([s], b, center=xb[s].mean(0), label=label))
        return Arm(label, tuple(parts))

    return [arm(f"svd k={k} mean-ablate all", k) for k in ks] + [
        arm(f"random rank-{max(ks)} mean-ablate all", max(ks), random=True)
    ]


def large_induction_arms(ds: list[Direction], alphas: tuple[float, ...], *, seed: int) -> list[Arm]:
    """Induction of the voice direction at every decoder layer at each alpha, and a random direction
    per site of the same norm at each alpha."""
    rng = np.random.default_rng(seed)
    arms = []
    for a in alphas:
        arms.append(_induce(ds, a, f"induce alpha={a:g} all"))
        arms.append(_induce(ds, a, f"random-0 induce alpha={a:g} all", rng))
    return arms


GATE2_STEPS = ("fresh-gate2-diag", "fresh-gate2-A", "fresh-gate2-extra", "gate2-pool")
# triggers: percentiles of the benchmark voice's faithful training positions' projections
GATE2_Q = (("q75", 75.0), ("q95", 95.0), ("q99", 99.0), ("max", 100.0))
FULL_ARM = "best + omission clamp c=0 first position L1-2"  # the seventh session's gated arm


def gate2_parts(
    fam: dict[str, list[Direction]],
    om: list[Direction],
    pos_a: dict[str, np.ndarray],
    first: int,
    *,
    seed: int,
    control: str = "",
) -> dict[str, tuple[Intervention, ...]]:
    """The pieces of the seventh session's arm and their conditional replacements, by name, each
    with ``control`` = ``random`` / ``shuffled`` (same sites, centers, caps, positions; a trigger at
    the same percentile of the control direction's own projections):

    * ``L1-2`` the decision direction mean-ablated at layers 1-2, every position;
    * ``L0`` layer 0 clamped at voice B's decision-position mean (``c = 0``);
    * ``om`` the omission direction clamped at ``c = 0`` at the first text position, layers 1-2;
    * ``A-q95 L1-2`` (``q75``, ``q99``, ``max``; and ``A-q99 L0``): the conditional version of ``L1-2``
      (of ``L0``): a position is moved to voice B's mean only where its projection exceeds that
      percentile of the projections of every decoder position of the benchmark voice's *training*
      clips with no planted edit (``pos_a``)."""
    ds = fam["decision"]
    if control:
        rng = np.random.default_rng([seed, 14, 9, 0 if control == "random" else 1])
        inner = _ablate(ds[1:3], "mean", "x", rng) if control == "random" else _shuffled(ds[1:3], rng)
        om_parts = control_of(Arm("x", tuple(_at_first(om[1:3], "clamp", first, "x"))), control, rng).interventions
    else:
        inner = _ablate(ds[1:3], "mean", "x")
        om_parts = tuple(_at_first(om[1:3], "clamp", first, "x"))
    parts = {
        "L1-2": inner.interventions,
        "L0": _clamp(ds[:1], 0.0, "x", control, seed).interventions,
        "om": om_parts,
        "A-q99 L0": _trigger(ds[:1], pos_a, 99.0, "x", control, seed).interventions,
    }
    for name, q in GATE2_Q:
        parts[f"A-{name} L1-2"] = _trigger(ds[1:3], pos_a, q, "x", control, seed).interventions
    return parts


# label -> its pieces, in the order they are applied (decision direction first, as in FULL_ARM)
GATE2_DIAG = {
    FULL_ARM: ("L1-2", "L0", "om"),
    "mean-ablate L1-2": ("L1-2",),
    "mean-ablate L1-2 + clamp c=0 L0": ("L1-2", "L0"),
    "clamp c=0 L0": ("L0",),
    "omission clamp c=0 first position L1-2": ("om",),
    "mean-ablate L1-2 + omission clamp c=0 first position L1-2": ("L1-2", "om"),
}
GATE2_EXTRA = {  # secondary, after the confirmation: the chosen arm without its layers 1-2 piece
    "clamp c=0 L0 + omission first L1-2": ("L0", "om"),
}
GATE2_ARMS = {
    **{
        f"A-trigger {name} L1-2 + clamp c=0 L0 + omission first L1-2": (f"A-{name} L1-2", "L0", "om")
        for name, _ in GATE2_Q
    },
    "A-trigger q99 L1-2 + omission first L1-2": ("A-q99 L1-2", "om"),
    "A-trigger q99 L0-2 + omission first L1-2": ("A-q99 L1-2", "A-q99 L0", "om"),
}


def gate2_arm(label: str, parts: dict[str, tuple[Intervention, ...]], gate: Gate, control: str = "") -> Arm:
    """The arm ``label`` of ``GATE2_DIAG`` / ``GATE2_ARMS`` under ``gate``; a control's label is
    prefixed ``random-0`` / ``shuffled``."""
    names = {**GATE2_DIAG, **GATE2_ARMS, **GATE2_EXTRA}[label]
    prefix = {"": "", "random": "random-0 ", "shuffled": "shuffled "}[control]
    return Arm(f"gated {prefix}{label}", tuple(iv for n in names for iv in parts[n]), gate)


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


GATE_STEPS = ("fresh-gate-A", "fresh-gate-B", "fresh-gate-C", "fresh-gate-D", "fresh-gate-null")
GATE_LAYERS = 4  # the gate is read at decoder layers 0-3 (``decoder.layers.{i}.out``)


def fit_gate(
    organism, oset, train: dict, sentences: list, va: str, vb: str, sites: list[str], work: Path, *, seed: int
):
    """The voice gate, from the training direction clips only (``sentences`` in voice A and voice B):
    the unedited activation at the position that predicts the first text token (teacher-forced on
    the prompt alone), at each decoder layer; held-out AUC per layer (direction fitted on half of the
    sentences, AUC on the other half; seeded), the highest AUC's layer (ties: the lowest), refitted on
    all: vector mean_A - mean_B (unit), center mean_B, threshold the midpoint. Activations are kept
    in ``work/gate-train.npz``."""
    layers = sites[:GATE_LAYERS]
    path = work / "gate-train.npz"
    ids = [train[(s, v)]["id"] for v in (va, vb) for s in sentences]
    if path.is_file():
        with np.load(path) as z:
            cached = {k: z[k] for k in z.files}
        if list(cached.get("ids", [])) != ids:
            cached = {}
    else:
        cached = {}
    if not cached:
        say(f"gate: prompt-end activations of {len(ids)} training clips at {len(layers)} decoder layers")
        audios = [read_wav(oset.audio_path(train[(s, v)])) for v in (va, vb) for s in sentences]
        acts = prompt_activations(organism, audios, layers)
        cached = {"ids": np.array(ids), **{f"L{i}": acts[s] for i, s in enumerate(layers)}}
        np.savez(path, **cached)
    n = len(sentences)
    fit, held = split_pairs(n, 0.5, np.random.default_rng([seed, 14, 7]))
    rows: list[dict] = []
    aucs: list[float] = []
    for i, site in enumerate(layers):
        x = cached[f"L{i}"]
        xa, xb = x[:n], x[n:]
        g = Gate.between(site, xa[fit].mean(0), xb[fit].mean(0))
        proj = np.array([g.score(h) for h in x])
        aucs.append(auc(proj[:n][held], proj[n:][held]))
        rows.append({"site": site, "auc": aucs[-1], "n_fit": len(fit), "n_held": len(held)})
    best = max(range(len(rows)), key=lambda i: (round(aucs[i], 3), -i))
    x = cached[f"L{best}"]
    gate = Gate.between(layers[best], x[:n].mean(0), x[n:].mean(0), label=f"voice {va} vs {vb} at {layers[best]}")
    opens = [gate.opens(h) for h in x]
    return {
        "gate": gate,
        "sweep": rows,
        "site": gate.site,
        "threshold": gate.threshold,
        "key": gate.key,
        "train_open": {va: [int(sum(opens[:n])), n], vb: [int(sum(opens[n:])), n]},
    }


def gate_table(fit: dict) -> str:
    rows = "\n".join(f"| {r['site']} | {r['auc']:.3f} | {r['n_fit']} / {r['n_held']} |" for r in fit["sweep"])
    opened = ", ".join(f"{v} {k}/{n}" for v, (k, n) in fit["train_open"].items())
    return (
        "\n### Voice gate (prompt-end activation, training direction clips; held-out AUC per layer)\n\n"
        "| site | held-out AUC | sentences fit / held out |\n|---|---|---|\n"
        f"{rows}\n\ngate at {fit['site']} (threshold {fit['threshold']:.3f}, key {fit['key']}); "
        f"open on the training clips: {opened}"
    )


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


def gate_rule_table(v: dict) -> str:
    rows = "\n".join(f"| {k} | {'yes' if ok else 'no'} |" for k, ok in v["checks"].items())
    return f"\n### Pre-registered rule (seventh session)\n\n| check | met |\n|---|---|\n{rows}\n\n**{'PASS' if v['pass'] else 'MISS'}**"


def organism_base_view(backend):
    """The organism backend as the encoder cache's key: the cache is keyed by the *base* weights hash
    (the encoder is frozen), so hand it an object whose identity is the base model's."""
    from types import SimpleNamespace

    base_hash = backend.organism_meta["base_weights_hash"]
    ident = SimpleNamespace(weights_hash=base_hash)
    view = SimpleNamespace(identity=lambda: ident, _encoder_states=backend._encoder_states)
    return view


def encoder_identical(a, b) -> bool:
    """Whether two Whisper backends have bit-identical encoder parameters."""
    import torch

    pa = dict(a.torch_model.model.encoder.named_parameters())
    pb = dict(b.torch_model.model.encoder.named_parameters())
    return pa.keys() == pb.keys() and all(torch.equal(pa[k], pb[k]) for k in pa)


if __name__ == "__main__":
    sys.exit(main())
