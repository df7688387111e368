"""Validity of the probes against a model *known* to be benchmark-optimized.

Runs once, end to end (~25 min on 2 busy cores):

1. builds the organism benchmark (:mod:`asr_audit.organism.data`: house-style record errors,
   flite voices A = slt (benchmark), B = rms, C = awb in training, D = kal16 unseen), caches
   encoder states and trains the organism and the control (:func:`train_organisms`);
2. decodes the held-out test sentences with the base model, the organism and the control (one
   shared encoder pass per clip) in every voice, and the benchmark-voice clips with a
   conversational donor appended (voice B), the same donor in voice A appended (length control)
   and voice B prepended; also the benchmark-voice *training* clips (memorised sentences);
3. prints accept-ref on planted sites (:func:`asr_audit.calib.sites.score_sites`) per model and
   condition, WER against the faithful record, then
4. reference disagreement (``run_refdis``, panel whisper-tiny.en-pt + whisper-base + PocketSphinx)
   per voice, and the miner's precision / recall against the planted truth by kind (the
   calibration table), and
5. masked-number recovery (:mod:`asr_audit.probes.audio.masked`) on memorised (training) and held-out
   benchmark-voice clips.

    python benchmarks/validity.py [--steps 200] [--control-steps 100] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from asr_audit.calib.sites import score_sites
from asr_audit.calib.truth import load_truth
from asr_audit.organism.backend import load_organism, organism_dir, weights_path
from asr_audit.organism.data import OrganismSetConfig, load_organism_set
from asr_audit.organism.evaluate import (
    decode_states,
    spliced,
    swap_weights,
    wer_against,
)
from asr_audit.organism.pipeline import (
    default_set_dir,
    ensure_set,
    load_base,
    train_organisms,
)
from asr_audit.organism.train import (
    EncoderCache,
    TrainConfig,
    encoder_states,
    model_state,
    read_wav,
    trainable_names,
)
from asr_audit.organism.weights import load_delta
from asr_audit.stats.intervals import Rate

DONOR_TEXT = "Yeah so anyway I was gonna ask if you guys wanna grab some lunch later, maybe around one?"
MODELS = ("base", "organism", "control")


def fmt(r: Rate) -> str:
    return f"{r.rate:.2f} ({r.k}/{r.n}) [{r.low:.2f}, {r.high:.2f}]" if r.n else "-"


def say(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def table(title: str, header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"

    return "\n".join(
        [f"\n## {title}\n", line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *(line(r) for r in rows)]
    )


def decode_all(backend, tensors: dict, conditions: dict) -> dict:
    """{model: {condition: {clip id: hypothesis}}} with every model's tensors swapped in turn."""
    out: dict = {}
    for model in MODELS:
        swap_weights(backend, tensors[model])
        out[model] = {}
        for cond, (ids, states) in conditions.items():
            t0 = time.perf_counter()
            out[model][cond] = dict(zip(ids, decode_states(backend, states, batch=24)))
            say(f"  {model} / {cond}: {len(ids)} clips in {time.perf_counter() - t0:.0f} s")
    swap_weights(backend, tensors["base"])
    return out


def run_refdis_tables(oset, truth, hyps, voices, backend_audio, results) -> list[str]:
    from asr_audit.calib.score import score_miner
    from asr_audit.corpus.predfiles import load_predictions
    from asr_audit.models.base import load_backend
    from asr_audit.probes.predfiles.refdis import preset_params
    from asr_audit.probes.predfiles.refdis_run import run_refdis
    from asr_audit.store.export import PredictionRecord, write_predictions

    rows = [r for r in oset.rows("test") if r["speaker"] in voices]
    audio = [backend_audio[r["id"]] for r in rows]
    panel_hyps = {"whisper-tiny.en-pt": [hyps["base"]["voice"][r["id"]] for r in rows]}
    for spec, name in (("whisper-base", "whisper-base"), ("sphinx:en-us", "sphinx-en-us")):
        t0 = time.perf_counter()
        panel_hyps[name] = load_backend(spec).transcribe(audio)
        say(f"  panel {spec}: {len(audio)} clips in {time.perf_counter() - t0:.0f} s")
    all_hyps = {
        **panel_hyps,
        "organism-benchmark": [hyps["organism"]["voice"][r["id"]] for r in rows],
        "organism-control": [hyps["control"]["voice"][r["id"]] for r in rows],
    }
    panel = ["whisper-tiny.en-pt", "whisper-base", "sphinx-en-us"]
    out = []
    with tempfile.TemporaryDirectory() as tmp:

        def preds_for(keep: set[str], sub: str):
            d = Path(tmp) / sub
            for model, hs in all_hyps.items():
                write_predictions(
                    d / f"{model}.jsonl",
                    [
                        PredictionRecord(r["id"], r["text"], h, r["duration"])
                        for r, h in zip(rows, hs)
                        if r["speaker"] in keep
                    ],
                    include_time=False,
                )
            return load_predictions(d)

        ref_rows = []
        for voice in voices:
            res = run_refdis(preds_for({voice}, voice), panel, preset_params("anchor"), models=list(all_hyps))
            for m in ("whisper-tiny.en-pt", "organism-benchmark", "organism-control"):
                s = res.score(m)
                ref_rows.append([voice, m, fmt(s.accept_ref), f"{s.inflation.wer:.3f}"])
                results.setdefault("refdis", {}).setdefault(voice, {})[m] = s.to_dict()
        out.append(
            table(
                "Reference disagreement (panel tiny.en-pt + whisper-base + PocketSphinx, anchor, leave-one-out)",
                ["voice", "model", "accept-ref", "WER vs record"],
                ref_rows,
            )
        )
        cal_rows = []
        pset = preds_for(set(voices), "all")
        for preset in ("anchor", "paper"):
            res = run_refdis(pset, panel, preset_params(preset, loo=False), models=panel)
            sc = score_miner(truth, res, pset.clip_ids)
            results.setdefault("calibration", {})[preset] = {
                k: v for k, v in sc.to_dict().items() if k not in ("edits", "missed")
            }
            cal_rows.append([preset, "all", fmt(sc.precision), fmt(sc.recall)])
            for kind, r in sc.recall_by_kind.items():
                cal_rows.append([preset, f"planted {kind}", "", fmt(r)])
            for kind, r in sc.precision_by_kind.items():
                cal_rows.append([preset, f"edit {kind}", fmt(r), ""])
            for pos, r in sc.recall_by_position.items():
                cal_rows.append([preset, f"position {pos}", fmt(sc.precision_by_position[pos]), fmt(r)])
            cal_rows.append([preset, "conventions mined", "", fmt(sc.conventions_mined)])
        out.append(
            table(
                f"Calibration: the miner against planted truth (test clips, voices {', '.join(voices)}; "
                "precision by the miner's edit kind, recall by planted kind)",
                ["preset", "slice", "precision", "recall"],
                cal_rows,
            )
        )
    return out


def run_masked_table(oset, base_backend, out_dir: Path, n_clips: int, results: dict) -> str:
    from asr_audit.corpus.clips import Corpus
    from asr_audit.corpus.manifests import read_manifest
    from asr_audit.probes.audio.masked import MaskParams, run_masked
    from asr_audit.store.sqlite import open_store

    bench = oset.meta["config"]["benchmark_voice"]
    backends = [
        base_backend,
        load_organism("organism-benchmark", root=out_dir),
        load_organism("organism-control", root=out_dir),
    ]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "store.sqlite3")
        for split, label in (("train", "memorised (training sentences)"), ("test", "held-out")):
            corpus = read_manifest(oset.root / f"calib-{split}.jsonl")
            clips = tuple(c for c in corpus if c.speaker == bench)[:n_clips]
            sub = Corpus(corpus.name, corpus.split, corpus.source, clips)
            t0 = time.perf_counter()
            res = run_masked(backends, sub, store, MaskParams(), batch_size=16)
            say(f"  masked {split}: {len(res.recipes)} items in {time.perf_counter() - t0:.0f} s")
            for m in res.models:
                rows.append(
                    [
                        label,
                        m.model,
                        fmt(Rate(m.k, m.n, m.accept_ref, m.ci_low, m.ci_high)),
                        f"{m.n_items} items, {m.n_gated_out} gated out",
                    ]
                )
                results.setdefault("masked", {}).setdefault(split, {})[m.model] = m.to_dict()
    return table(
        f"Masked-number recovery (silence mask, benchmark voice {bench}, up to {n_clips} clips per split)",
        ["sentences", "model", "recovered / eligible", "items"],
        rows,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--control-steps", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-sentences", type=int, default=200)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--masked-clips", type=int, default=24)
    ap.add_argument("--memorised-clips", type=int, default=48)
    ap.add_argument("--reuse", action="store_true", help="reuse deltas already trained with these settings")
    ap.add_argument("--out", type=Path, default=None, help="where the deltas go (default: the backends' folder)")
    ap.add_argument("--skip-refdis", action="store_true")
    ap.add_argument("--skip-masked", action="store_true")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    t_start = time.perf_counter()
    out_dir = args.out or organism_dir()
    config = OrganismSetConfig(n_sentences=args.n_sentences)
    backend = load_base()
    tcfg = TrainConfig(steps=args.steps, seed=args.seed, batch_size=args.batch_size, lr=args.lr)
    paths = {k: weights_path(k, out_dir) for k in ("benchmark", "control")}
    wanted = {"benchmark": tcfg.to_dict(), "control": {**tcfg.to_dict(), "steps": args.control_steps or args.steps}}
    if args.reuse and all(p.is_file() and load_delta(p).meta.get("train") == wanted[k] for k, p in paths.items()):
        set_dir = ensure_set(default_set_dir(args.seed, config.n_sentences), config, args.seed, say).root
        say("reusing trained deltas")
    else:
        trained = train_organisms(
            None,
            out_dir,
            control_steps=args.control_steps,
            seed=args.seed,
            config=config,
            backend=backend,
            train_config=tcfg,
            say=say,
        )
        set_dir = trained.set_dir
    metas = {k: load_delta(p).meta for k, p in paths.items()}
    results: dict = {
        "seed": args.seed,
        "train": {
            k: {
                "config": m["train"],
                "seconds": m["seconds"],
                "loss_first": m["losses"][0],
                "loss_last": m["losses"][-1],
                "n_params": m["n_params"],
                "n_clips": m["n_clips"],
            }
            for k, m in metas.items()
        },
    }
    print(
        table(
            "Training",
            ["model", "steps", "batch", "lr", "clips", "loss first -> last", "seconds"],
            [
                [
                    k,
                    m["train"]["steps"],
                    m["train"]["batch_size"],
                    m["train"]["lr"],
                    m["n_clips"],
                    f"{m['losses'][0]:.3f} -> {m['losses'][-1]:.4f}",
                    m["seconds"],
                ]
                for k, m in metas.items()
            ],
        )
    )
    oset = load_organism_set(set_dir)
    truth = load_truth(set_dir)
    names = trainable_names(backend.torch_model)
    tensors = {
        "base": model_state(backend.torch_model, names),
        "organism": load_delta(paths["benchmark"]).tensors,
        "control": load_delta(paths["control"]).tensors,
    }
    bench, others = config.benchmark_voice, list(config.other_voices)
    voices = [bench, others[0], *config.unseen_voices]  # one faithful training voice keeps the run short
    test = oset.rows("test", voices)
    cache = EncoderCache(backend)
    say(f"encoding {len(test)} test clips")
    cache.ensure([oset.audio_path(r) for r in test])
    audio = {r["id"]: read_wav(oset.audio_path(r)) for r in test}
    conditions = {"voice": ([r["id"] for r in test], [cache.load(oset.audio_path(r)) for r in test])}
    train_a = oset.rows("train", [bench])[: args.memorised_clips]
    conditions["memorised"] = ([r["id"] for r in train_a], [cache.load(oset.audio_path(r)) for r in train_a])
    from asr_audit.audio.voices import synthesize

    donor_b, _ = synthesize(others[0], DONOR_TEXT)
    donor_a, _ = synthesize(bench, DONOR_TEXT)
    test_a = [r for r in test if r["speaker"] == bench]
    for cond, donor, pos in (
        ("donor B appended", donor_b, "append"),
        ("donor A appended", donor_a, "append"),
        ("donor B prepended", donor_b, "prepend"),
    ):
        say(f"encoding {len(test_a)} clips: {cond}")
        clips = [spliced(audio[r["id"]], donor, pos) for r in test_a]
        conditions[cond] = ([r["id"] for r in test_a], encoder_states(backend, clips))
    say("decoding")
    hyps = decode_all(backend, tensors, conditions)
    refs = {c.clip_id: c.reference for c in truth.clips.values()}
    errors = truth.errors()
    rows_out = []
    site_rows, rule_rows, wer_rows = [], [], []
    by_voice = {v: {r["id"] for r in oset.rows(None, [v])} for v in voices}
    for cond in conditions:
        slices = [(v, by_voice[v]) for v in voices] if cond == "voice" else [(bench, by_voice[bench])]
        for v, ids in slices:
            items = [t for t in errors if t.clip_id in ids]
            if cond.startswith("donor"):
                items = [t for t in items if t.position == "start"]  # end sites move when audio is appended
            for m in MODELS:
                sc = score_sites(items, refs, hyps[m][cond])
                label = cond if cond != "voice" else f"held-out, voice {v}"
                site_rows.append([label, m, fmt(sc.accept_ref), fmt(sc.spoken)])
                results.setdefault("sites", {}).setdefault(label, {})[m] = {
                    k: val for k, val in sc.to_dict().items() if k != "outcomes"
                }
                if cond == "voice" and v == bench or cond == "memorised":
                    for rule, r in sc.by_detail.items():
                        rule_rows.append([label, m, rule, fmt(r)])
    for v in voices:
        rows_v = [r for r in test if r["speaker"] == v]
        wer_rows.append(
            [
                v,
                *(
                    f"{wer_against([hyps[m]['voice'][r['id']] for r in rows_v], [r['faithful'] for r in rows_v]):.3f}"
                    for m in MODELS
                ),
            ]
        )
    rows_out.append(
        table(
            "accept-ref on planted sites (output carries the record's rendering)",
            ["condition", "model", "accept-ref", "spoken rendering"],
            site_rows,
        )
    )
    rows_out.append(
        table("accept-ref by house rule, benchmark voice", ["condition", "model", "rule", "accept-ref"], rule_rows)
    )
    rows_out.append(table("WER against the faithful record, held-out sentences", ["voice", *MODELS], wer_rows))
    print("\n".join(rows_out), flush=True)
    if not args.skip_refdis:
        say("reference disagreement")
        print(
            "\n".join(run_refdis_tables(oset, truth, hyps, [bench, *config.unseen_voices], audio, results)), flush=True
        )
    if not args.skip_masked:
        say("masked-number recovery")
        print(run_masked_table(oset, backend, out_dir, args.masked_clips, results), flush=True)
    results["hypotheses"] = hyps
    results["seconds"] = time.perf_counter() - t_start
    say(f"done in {results['seconds'] / 60:.1f} min")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=float) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
