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
   identical), encoder output from the same sentence in voice B, decoder layers from the base.

    ASR_AUDIT_ORGANISM_DIR=/tmp/mech-organism python benchmarks/mechanism.py --n-sentences 120 --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from asr_audit.calib.truth import load_truth
from asr_audit.corpus.clips import Corpus
from asr_audit.corpus.manifests import read_manifest
from asr_audit.mech.directions import save_direction
from asr_audit.mech.interventions import Intervention
from asr_audit.mechrun.capture import capture, load_capture
from asr_audit.mechrun.direction import layer_sweep, make_direction
from asr_audit.mechrun.patch import PatchCondition, edit_locus
from asr_audit.mechrun.steer import SteerResult, control_arms, run_steer
from asr_audit.organism.backend import load_organism
from asr_audit.organism.data import OrganismSetConfig, load_organism_set
from asr_audit.organism.pipeline import default_set_dir, load_base
from asr_audit.organism.train import read_wav
from asr_audit.store.sqlite import open_store


def say(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def fmt_rate(r: dict) -> str:
    if not r["n"]:
        return "undefined (0 sites)"
    return f"{r['rate']:.2f} ({r['k']}/{r['n']}) [{r['ci_low']:.2f}, {r['ci_high']:.2f}]"


def steer_table(title: str, res: SteerResult) -> str:
    lines = [
        f"\n### {title}\n",
        "| arm | accept-ref | ref->spoken | spoken->ref | WER vs faithful |",
        "|---|---|---|---|---|",
    ]
    for a in res.to_dict()["arms"]:
        wer = f"{a['wer']:.3f}" if a["wer"] is not None else "-"
        lines.append(
            f"| {a['label']} | {fmt_rate(a['accept_ref'])} | {a['flips']['ref_to_spoken']} | "
            f"{a['flips']['spoken_to_ref']} | {wer} |"
        )
    share = res.effect_share()
    lines.append(f"\neffect share (1 - arm/clean): {share:.2f}" if share is not None else "\neffect share: undefined")
    return "\n".join(lines)


def sub_corpus(corpus: Corpus, speaker: str) -> Corpus:
    return Corpus(corpus.name, corpus.split, corpus.source, tuple(c for c in corpus.clips if c.speaker == speaker))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-sentences", type=int, default=120, help="the organism set's size (finds its folder)")
    ap.add_argument("--n-direction", type=int, default=48, help="training sentences captured per voice")
    ap.add_argument("--alphas", default="1,2")
    ap.add_argument("--n-random", type=int, default=2)
    ap.add_argument("--work", type=Path, default=Path("/tmp/mech-proof"))
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    set_dir = default_set_dir(args.seed, args.n_sentences)
    oset = load_organism_set(set_dir)
    cfg = OrganismSetConfig(n_sentences=args.n_sentences)
    va, vb, vd = cfg.benchmark_voice, cfg.other_voices[0], cfg.unseen_voices[0]
    organism = load_organism("organism-benchmark")
    out: dict = {"set": str(set_dir), "voices": {"A": va, "B": vb, "D": vd}}
    tables: list[str] = []

    # 1. capture: same training sentences in voice A and voice B, paired by sentence
    train = {(r["sentence_id"], r["speaker"]): r for r in oset.rows("train", [va, vb])}
    sentences = sorted({s for s, v in train if (s, va) in train and (s, vb) in train})[: args.n_direction]
    n_enc = len(organism.torch_model.model.encoder.layers)
    n_dec = len(organism.torch_model.model.decoder.layers)
    sites = [f"encoder.layers.{i}.out" for i in range(n_enc)] + [f"decoder.layers.{i}.out" for i in range(n_dec)]
    caps = {}
    for label, voice in (("A", va), ("B", vb)):
        rows = [train[(s, voice)] for s in sentences]
        root = args.work / f"capture-{label}"
        if (root / "manifest.json").is_file() and len(load_capture(root).clips) == len(rows):
            caps[label] = load_capture(root)
            continue
        say(f"capturing {len(rows)} voice-{label} clips at {len(sites)} sites")
        caps[label] = capture(
            organism,
            ((r["id"], read_wav(oset.audio_path(r))) for r in rows),
            sites,
            root,
            texts=[r["text"] for r in rows],
            pool="mean",
        )
    # 2. layer sweep and directions
    sweep = layer_sweep(caps["A"], caps["B"], sites, seed=args.seed)
    out["sweep"] = [r.to_dict() for r in sweep]
    tables.append(
        "\n### Layer sweep (held-out AUC of the diff-in-means projection, A above B)\n\n| site | AUC | norm |\n|---|---|---|\n"
        + "\n".join(f"| {r.site} | {r.auc:.3f} | {r.norm:.2f} |" for r in sweep)
    )

    def best(prefix: str) -> str:
        cand = [r for r in sweep if r.site.startswith(prefix)]
        return max(cand, key=lambda r: (round(r.auc, 3), r.site)).site  # ties: the deeper layer

    enc_site, dec_site = best("encoder"), best("decoder")
    dirs_root = args.work / "directions"
    directions = {}
    for site in (enc_site, dec_site):
        d = make_direction(f"voice-{site}", caps["A"], caps["B"], site, extra={"seed": args.seed})
        save_direction(d, dirs_root)
        directions[site] = d
    out["directions"] = {s: d.to_dict() | {"provenance": None} for s, d in directions.items()}

    # 3. steering on held-out sentences
    test = read_manifest(set_dir / "calib-test.jsonl")
    faithful = {r["id"]: r["faithful"] for r in oset.rows("test")}
    items = [t for t in load_truth(set_dir).errors() if t.clip_id in faithful]
    store = open_store(args.work / "store.sqlite3")
    results: dict = {}

    def run(key: str, backend, speaker: str, arms, title: str, direction) -> SteerResult:
        say(f"steer: {key}")
        res = run_steer(
            backend,
            sub_corpus(test, speaker),
            store,
            arms,
            items=items,
            wer_texts=faithful,
            direction=direction,
            mode=arms[0].kind,
        )
        results[key] = res.to_dict()
        tables.append(steer_table(title, res))
        return res

    for site, d in directions.items():
        arms = control_arms(d, "ablate", n_random=args.n_random, seed=args.seed)
        run(f"ablate {site} A", organism, va, arms, f"Ablation at {site}, held-out voice A ({va})", d)
        run(f"ablate {site} B", organism, vb, arms, f"Ablation at {site}, held-out voice B ({vb}, faithful)", d)
    shares = {site: results[f"ablate {site} A"]["effect_share"] or 0.0 for site in directions}
    site = max(directions, key=lambda x: (shares[x], x))  # induction and rank-k where ablation worked best
    out["steer_site"] = site
    d = directions[site]
    for alpha in [float(a) for a in args.alphas.split(",")]:
        arms = control_arms(d, "induce", alpha=alpha, n_random=args.n_random, seed=args.seed)
        for voice in (vb, vd):
            run(
                f"induce {site} a{alpha:g} {voice}",
                organism,
                voice,
                arms,
                f"Induction alpha={alpha:g} at {site}, voice {voice}",
                d,
            )
    svd = make_direction(f"voice-svd4-{site}", caps["A"], caps["B"], site, k=4)
    save_direction(svd, dirs_root)
    ranks = [Intervention.ablation([site], svd.rank(k).basis, label=f"svd-k{k}") for k in (1, 2, 4)]
    run(f"rank-k {site} A", organism, va, ranks, f"Rank-k ablation (paired SVD) at {site}, voice A", svd)
    base = load_base()
    control = load_organism("organism-control")
    for name, backend in (("base", base), ("control", control)):
        arms = control_arms(d, "ablate", n_random=1, seed=args.seed)
        run(f"null {name} {site} A", backend, va, arms, f"Null: {name} model, ablation at {site}, voice A", d)
        arms = control_arms(d, "induce", alpha=float(args.alphas.split(",")[-1]), n_random=1, seed=args.seed)
        run(f"null {name} {site} {vd}", backend, vd, arms, f"Null: {name} model, induction at {site}, voice {vd}", d)
    out["steer"] = results

    # 5. patching
    say("patching")
    rows_a = oset.rows("test", [va])
    by_sentence_b = {r["sentence_id"]: r for r in oset.rows("test", [vb])}
    audio = {r["id"]: read_wav(oset.audio_path(r)) for r in rows_a}
    voice_b = {r["id"]: read_wav(oset.audio_path(by_sentence_b[r["sentence_id"]])) for r in rows_a}
    conditions = [
        PatchCondition("encoder.out <- base model", "encoder.out", donor_backend=base),
        PatchCondition(f"encoder.out <- voice {vb}", "encoder.out", donor_audio=lambda cid, a: voice_b[cid]),
        *(
            PatchCondition(f"decoder.layers.{i}.out <- base model", f"decoder.layers.{i}.out", donor_backend=base)
            for i in range(n_dec)
        ),
    ]
    refs = {r["id"]: r["text"] for r in rows_a}
    patch = edit_locus(organism, [t for t in items if t.clip_id in audio], audio, refs, conditions)
    out["patch"] = patch.to_dict()
    tables.append(
        "\n### Edit-locus patching (organism, held-out voice A; P(ref) = P(reference rendering | ref vs spoken))\n\n"
        "| edits | condition | n | median P(ref) full | median P(ref) patched | share toward audio |\n|---|---|---|---|---|---|\n"
        + "\n".join(
            f"| {r.kind} | {r.condition} | {r.n} | {r.median_full:.3f} | {r.median_patched:.3f} | {r.toward_audio:.2f} |"
            for r in patch.table()
        )
    )
    store.close()
    out["seconds"] = round(time.perf_counter() - t0, 1)
    print("\n".join(tables), flush=True)
    say(f"done in {out['seconds'] / 60:.1f} min")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, default=float) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
