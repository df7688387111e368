"""Validity of the probes against models *known* to be benchmark-optimized: the positive controls.

Default (``--parts memorizer,donor``, issue 13): trains once (or ``--reuse``s) and prints ONE table
with every target, met or not, with 95% intervals (``asr_audit.organism.validity``):

1. the memorizer and its control (:mod:`asr_audit.organism.memorizer`): masked-number recovery
   (:mod:`asr_audit.probes.audio.masked`), masked lift (:mod:`asr_audit.probes.audio.lift`) and
   forced continuation (:mod:`asr_audit.probes.audio.continuation`) on the memorized clips and on
   fresh sentences of the same voice and style;
2. the donor organism (:mod:`asr_audit.organism.donor`): the battery's refdis measure on its
   held-out benchmark-voice clips with conversational and benchmark donors appended, in the
   benchmark voice and in ``flite-rms``, and the battery's difference-in-differences;
3. the miner's rows (precision and recall at the tool's default, the demo's and the recommended
   operating point, judged on the pooled interval's lower end), read from
   ``benchmarks/results/miner-validity.json`` (``--miner-json``) when present, else "not run";
   write it with ``python benchmarks/miner_precision.py --out benchmarks/results/miner-validity.json``.
   Its provenance (:mod:`asr_audit.provenance`) is checked against the code at hand: rows of a file
   written by other code read "stale", of a file without provenance "unverified".

Exit status: 0 only when every target is met; 1 when any target is not met, not run, undefined,
stale or unverified (a section left out with ``--parts`` counts as not run). ``--json`` writes
the results with their own provenance (code hash, commit, date, command, seed, weights' hashes).

``--parts policy`` also runs the voice-gated policy organism and its control and prints their
tables (``docs/organism.md``): accept-ref on planted sites per voice and donor condition,
reference disagreement and the miner against the planted truth, masked-number recovery.

    python benchmarks/validity.py [--reuse] [--report DIR] [--json out.json]
    python benchmarks/validity.py --parts policy [--steps 200] [--control-steps 100]
    python benchmarks/validity.py --replication     # every evaluation seed of the freeze record (issue 27)

Replication (issue 27): ``--write-freeze 'memorizer=...;donor=...'`` writes the freeze record
(``benchmarks/results/frozen-recipes-2026-12-01.json``: recipes, evaluation settings, targets,
intervals, evaluation and tuning seeds, and the code hash of this script and the modules it runs)
before any evaluation run; each run on an evaluation seed writes
``--json benchmarks/results/replication/<part>-seed<S>.json``; ``--replication`` prints one row per
planned seed (pass, miss, not run, or "other code" when the run's code hash is not the frozen one)
and the replication rate per section (:mod:`asr_audit.organism.replication`).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from asr_audit.calib.sites import score_sites
from asr_audit.calib.truth import load_truth
from asr_audit.organism import TRAIN_DEFAULTS
from asr_audit.organism.backend import load_organism, organism_dir, weights_path
from asr_audit.organism.data import OrganismSetConfig, load_organism_set
from asr_audit.organism.evaluate import (
    decode_states,
    spliced,
    swap_weights,
    wer_against,
)
from asr_audit.organism.memorizer import MemorizerSetConfig
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
from asr_audit.provenance import PROVENANCE_KEY, file_hash, make_provenance
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
    from asr_audit.probes.core.models import LocalPool
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
            res = run_masked(LocalPool.of(backends, batch_size=16), sub, store, MaskParams())
            say(f"  masked {split}: {len(res.recipes)} items in {time.perf_counter() - t0:.0f} s")
            for m in res.models:
                rows.append(
                    [
                        label,
                        m.model,
                        fmt(Rate(m.k, m.n, m.accept_ref, m.ci_low, m.ci_high))
                        if m.accept_ref is not None and m.ci_low is not None and m.ci_high is not None
                        else "-",  # no eligible item
                        f"{m.n_items} items, {m.n_gated_out} gated out",
                    ]
                )
                results.setdefault("masked", {}).setdefault(split, {})[m.model] = m.to_dict()
    return table(
        f"Masked-number recovery (silence mask, benchmark voice {bench}, up to {n_clips} clips per split)",
        ["sentences", "model", "recovered / eligible", "items"],
        rows,
    )


def run_policy(args: argparse.Namespace) -> dict:
    """The policy organism and its control (``--parts policy``): prints its tables, returns its results."""
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
    return results


# --------------------------------------------------------------------------- issue 13: positive controls

MEMORIZER_MODELS = ("organism-memorizer", "organism-memorizer-control")
DONOR_CONDITIONS = (
    "original",
    "donor:conv8s",
    "donor:bench8s",
    "voice:{v}+donor:conv8s",
    "voice:{v}+donor:bench8s",
)
ROOT = Path(__file__).resolve().parents[1]
DEFAULT_MINER_JSON = ROOT / "benchmarks" / "results" / "miner-validity.json"
# what a run's provenance code hash covers: the organisms, the probes they run, the statistics
VALIDITY_CODE = (
    "asr_audit.audio",
    "asr_audit.calib",
    "asr_audit.organism",
    "asr_audit.probes",
    "asr_audit.stats",
    "asr_audit.text",
)


def _organism_inputs(out_dir: Path, parts: list[str]) -> dict[str, str]:
    """sha256 of the organism weights the run evaluated (its inputs besides the code and the seed)."""
    kinds = {"memorizer": ("memorizer", "memorizer-control"), "donor": ("donor",), "policy": ("benchmark", "control")}
    paths = [weights_path(k, out_dir) for p in parts for k in kinds.get(p, ())]
    return {p.name: file_hash(p) for p in paths if p.is_file()}


def _train_meta(path: Path) -> dict:
    m = load_delta(path).meta
    return {
        "train": m["train"],
        "seconds": m["seconds"],
        "loss_first": m["losses"][0],
        "loss_last": m["losses"][-1],
        "n_clips": m["n_clips"],
    }


def _reusable(paths: list[Path], cfg: TrainConfig) -> bool:
    return all(p.is_file() and load_delta(p).meta.get("train") == cfg.to_dict() for p in paths)


def _sha1(x) -> str:
    import hashlib

    import numpy as np

    return hashlib.sha1(np.ascontiguousarray(x, dtype=np.float32).tobytes()).hexdigest()


def base_hash(backend) -> str:
    """The base model's weights hash: an organism's encoder is its base's (frozen)."""
    meta = getattr(backend, "organism_meta", None)
    return str(meta["base_weights_hash"]) if meta else backend.identity().weights_hash


def eval_state_dir(out_dir: Path, backend) -> Path:
    """Encoder states of evaluation audio (clean, masked, truncated clips), float32 ``.npy`` keyed by
    the sha1 of the waveform, as the backends' own encoder memo keys them; one folder per base."""
    return out_dir / "eval-encoder" / base_hash(backend)


def warm_memorizer_states(backend, mset, store, root: Path, groups=("memorized", "fresh")) -> int:
    """Encode, once, every clip the memorizer's probes will transcribe or score: the clean clips, the
    masked clips of the masked probe's recipes and the continuation probe's truncated clips (the
    recipes and cuts come from the same store-cached alignments the probes then use). Returns the
    number of clips encoded now."""
    import numpy as np
    import torch

    from asr_audit.audio.io import load_clip_audio
    from asr_audit.corpus.manifests import read_manifest
    from asr_audit.probes.audio.continuation import plan_cuts
    from asr_audit.probes.audio.masked import MaskParams, plan_masks

    root.mkdir(parents=True, exist_ok=True)
    todo: dict[str, np.ndarray] = {}
    for group in groups:
        corpus = read_manifest(mset.manifest(group))
        audio = [load_clip_audio(c).samples for c in corpus]
        audio += list(plan_masks(corpus, store, MaskParams()).masked.values())
        audio += [p.samples for p in plan_cuts(corpus, store, 3)[0]]
        todo.update({_sha1(x): x for x in audio if not (root / f"{_sha1(x)}.npy").is_file()})
    items = list(todo.items())
    for i in range(0, len(items), 8):
        chunk = items[i : i + 8]
        with torch.inference_mode():
            states = backend._encoder_states([x for _, x in chunk])
        for (k, _), st in zip(chunk, states):
            np.save(root / f"{k}.npy", st.to("cpu", torch.float32).numpy(), allow_pickle=False)
        say(f"  encoded {min(i + 8, len(items))}/{len(items)} evaluation clips")
    return len(items)


def share_encoder(backends: list, audios: Sequence[Path] = (), states: Path | None = None) -> None:
    """Let ``backends`` (organisms on one frozen base encoder) share one encoder memo, prefilled with
    the cached training states of ``audios``, the evaluation states in ``states``
    (:func:`warm_memorizer_states`) and the silent waveform of each clip length (Whisper pads every
    input to 30 s, so an all-zero clip of any length has the same features and states: encoded
    once). Only the encoder is shared; each backend decodes with its own decoder."""
    import numpy as np
    import torch

    from asr_audit.paths import cache_dir

    memo: dict = {}
    cache = EncoderCache(backends[0])
    cache.root = cache_dir() / "organism" / "encoder" / base_hash(backends[0])  # the training states
    with torch.inference_mode():
        silent = backends[0]._encoder_states([np.zeros(16_000, np.float32)])[0]
    for a in audios:
        x = read_wav(a)
        memo[_sha1(np.zeros(len(x), np.float32))] = silent
        if cache.path(a).is_file():
            memo[_sha1(x)] = torch.from_numpy(cache.load(a).astype(np.float32))
    if states is not None and states.is_dir():
        for f in states.glob("*.npy"):
            memo[f.stem] = torch.from_numpy(np.load(f, allow_pickle=False))
    for b in backends:
        b.__dict__["_enc_memo"] = memo
        b.ENCODER_MEMO_SIZE = 100_000


def masked_lift(backends, corpus, store, recipes, seed: int) -> dict:
    """Masked lift per model, the masked condition only (the unmasked arm is not a target): the
    probe's own span builder (with its default decoys), intelligibility gate, scorer and
    sentence-clustered summary. The entry is the decoy contrast (``paired["masked-decoys"]``: the
    hidden number's lift minus its decoys'); ``silence`` keeps the raw lift against the zero clip."""
    import numpy as np

    from asr_audit.probes.audio.lift import (
        DEFAULT_DECOYS,
        Scorer,
        intelligibility_gate,
        masked_spans,
        score_spans,
        summarize_model,
    )
    from asr_audit.probes.audio.masked import MaskParams, plan_masks
    from asr_audit.probes.audio.targets import sentence_key
    from asr_audit.probes.core.models import LocalModel

    none = {"mean": None, "ci_low": None, "ci_high": None, "n": 0}
    plan = plan_masks(corpus, store, MaskParams(), recipes=recipes)
    spans = [
        s
        for s in masked_spans(plan.recipes, {c.id: c.reference for c in corpus}, decoys=DEFAULT_DECOYS, seed=seed)
        if s.condition in ("masked", "decoy")
    ]
    sentences = {c.id: sentence_key(c.reference) for c in corpus}
    out = {}
    for b in backends:
        gate = intelligibility_gate(LocalModel.of(b), corpus, store, spans, 0.3)
        kept_clips = {g.clip_id for g in gate if g.kept}
        kept = [s for s in spans if s.clip_id in kept_clips]
        records = score_spans(Scorer(LocalModel.of(b), store, 8), kept, plan.masked)
        summary = summarize_model(records, np.random.default_rng(seed), sentences=sentences)
        est = summary["paired"].get("masked-decoys", none)
        raw = summary["conditions"].get("masked", {}).get("lift", none)
        n_masked = sum(s.condition == "masked" for s in spans)
        n_kept = sum(s.condition == "masked" for s in kept)
        out[b.spec] = {**est, "silence": raw, "n_gated_out": n_masked - n_kept, "n_failed": summary["n_failed"]}
    return out


def run_memorizer(args: argparse.Namespace, out_dir: Path, results: dict) -> list:
    """Section 1: train (or reuse) the memorizer and its control, then masked recovery, masked lift
    and forced continuation on the memorized clips and on fresh sentences."""
    from asr_audit.corpus.clips import Corpus
    from asr_audit.corpus.manifests import read_manifest
    from asr_audit.organism.pipeline import default_memorizer_dir, ensure_memorizer_set, train_memorizers
    from asr_audit.organism.validity import memorizer_targets
    from asr_audit.probes.audio.continuation import run_continuation
    from asr_audit.probes.audio.masked import MaskParams, run_masked
    from asr_audit.probes.core.models import LocalModel, LocalPool
    from asr_audit.store.sqlite import open_store

    t0 = time.perf_counter()
    cfg = TrainConfig(steps=args.memorizer_steps, lr=args.memorizer_lr, batch_size=args.batch_size, seed=args.seed)
    paths = [weights_path(k, out_dir) for k in ("memorizer", "memorizer-control")]
    config = MemorizerSetConfig(masked_variants=args.memorizer_variants)
    if args.reuse and _reusable(paths, cfg):
        mset = ensure_memorizer_set(default_memorizer_dir(args.seed), config, args.seed, say)
        say("memorizer: reusing trained deltas")
    else:
        trained = train_memorizers(None, out_dir, seed=args.seed, config=config, train_config=cfg, say=say)
        mset = ensure_memorizer_set(trained.set_dir, config, args.seed)
    res: dict = {"train": {p.stem: _train_meta(p) for p in paths}, "set": mset.meta}
    store = open_store(out_dir / "validity-store.sqlite3")
    backends = [load_organism(m, root=out_dir) for m in MEMORIZER_MODELS]
    t1 = time.perf_counter()
    states = eval_state_dir(out_dir, backends[0])
    n_new = warm_memorizer_states(backends[0], mset, store, states)
    say(f"  memorizer evaluation audio: {n_new} clips encoded in {time.perf_counter() - t1:.0f} s")
    share_encoder(backends, [mset.audio_path(r) for r in mset.clips], states)
    masked: dict = {}
    lift: dict = {}
    cont: dict = {}
    groups = [("memorized", backends), ("fresh", backends)]
    if args.control_sanity:
        groups.append(("control", backends[1:]))
    for group, models in groups:
        corpus = read_manifest(mset.manifest(group))
        if args.eval_clips:
            corpus = Corpus(corpus.name, corpus.split, corpus.source, corpus.clips[: args.eval_clips])
        t1 = time.perf_counter()
        m = run_masked(LocalPool.of(models, batch_size=8), corpus, store, MaskParams())
        masked[group] = {x.model: x.to_dict() for x in m.models}
        res.setdefault("masked_items", {})[group] = [i.to_dict() for i in m.items]
        say(f"  masked recovery, {group}: {len(m.recipes)} items in {time.perf_counter() - t1:.0f} s")
        if group == "control":  # the control's own sentences: its recipe memorizes too (not a target)
            continue
        t1 = time.perf_counter()
        lift[group] = masked_lift(models, corpus, store, m.recipes, args.seed)
        say(f"  masked lift, {group}: {time.perf_counter() - t1:.0f} s")
        t1 = time.perf_counter()
        c = run_continuation([LocalModel.of(b) for b in models], corpus, store, hide_words=3, seed=args.seed)
        cont[group] = {x["model"]: x for x in c["models"]}
        res.setdefault("continuation_items", {})[group] = c["items"]
        say(f"  forced continuation, {group}: {time.perf_counter() - t1:.0f} s")
    res.update(masked=masked, lift=lift, continuation=cont, seconds=round(time.perf_counter() - t0, 1))
    results["memorizer"] = res
    return memorizer_targets(masked, lift, cont, *MEMORIZER_MODELS)


def donor_eval_rows(oset, config, seed: int, n: int, out_dir: Path) -> list[dict]:
    """``n`` held-out benchmark-voice clips that carry at least one house-rule error (clips without
    one give the battery no item): the donor set's test sentences, then sentences of a second
    house-style set (seed + 1000, benchmark voice only) whose speech no training clip has. Each row
    gets ``eval_id`` (unique across both sets) and ``path``."""
    bench = config.benchmark_voice
    trained = {r["spoken"] for r in oset.rows("train")}
    rows = [
        {**r, "eval_id": r["id"], "path": str(oset.audio_path(r))} for r in oset.rows("test", [bench]) if r["rules"]
    ]
    if len(rows) < n:
        extra_cfg = OrganismSetConfig(
            n_sentences=2 * n, test_fraction=1.0, benchmark_voice=bench, other_voices=(), unseen_voices=()
        )
        extra = ensure_set(out_dir / f"donor-eval-seed{seed + 1000}", extra_cfg, seed + 1000, say)
        seen = trained | {r["spoken"] for r in rows}
        for r in extra.rows("test", [bench]):
            if r["rules"] and r["spoken"] not in seen:
                seen.add(r["spoken"])
                rows.append({**r, "eval_id": f"eval-{r['id']}", "path": str(extra.audio_path(r))})
    return rows[:n]


def run_donor(args: argparse.Namespace, out_dir: Path, results: dict) -> tuple[list, dict]:
    """Section 2: train (or reuse) the donor organism, run the battery's refdis measure on its
    held-out benchmark-voice clips under the donor grid; returns the targets and the battery dict."""
    import json as _json

    from asr_audit.corpus.manifests import read_manifest
    from asr_audit.organism.donor import donor_set_config
    from asr_audit.organism.pipeline import default_donor_dir, train_donor
    from asr_audit.organism.validity import donor_targets
    from asr_audit.probes.battery.battery import BatteryOptions, run_battery
    from asr_audit.probes.battery.conditions import parse_conditions
    from asr_audit.runner.run import local_pool
    from asr_audit.store.sqlite import open_store

    t0 = time.perf_counter()
    cfg = TrainConfig(steps=args.donor_steps, lr=args.donor_lr, batch_size=args.batch_size, seed=args.seed)
    path = weights_path("donor", out_dir)
    config = donor_set_config(args.donor_sentences)
    if args.reuse and _reusable([path], cfg):
        set_dir = ensure_set(default_donor_dir(args.seed, args.donor_sentences), config, args.seed, say).root
        say("donor: reusing the trained delta")
    else:
        set_dir = train_donor(
            None, out_dir, seed=args.seed, n_sentences=args.donor_sentences, train_config=cfg, say=say
        ).set_dir
    oset = load_organism_set(set_dir)
    rows = donor_eval_rows(oset, config, args.seed, args.donor_eval, out_dir)
    manifest = out_dir / "donor-battery.jsonl"
    keep = ("text", "duration", "speaker")
    manifest.write_text(
        "".join(
            _json.dumps({"id": r["eval_id"], "audio_filepath": r["path"], **{k: r[k] for k in keep}}) + "\n"
            for r in rows
        )
    )
    corpus = read_manifest(manifest, name="organism-donor-test")
    voice = config.other_voices[0]
    conditions = [c.format(v=voice) for c in DONOR_CONDITIONS]
    backend = load_organism("organism-donor", root=out_dir)
    store = open_store(out_dir / "validity-store.sqlite3")
    t1 = time.perf_counter()
    battery = run_battery(
        local_pool(loaded={"organism-donor": backend}),
        corpus,
        store,
        BatteryOptions(conditions=parse_conditions(conditions), models=("organism-donor",)),
        seed=args.seed,
        spoken={r["eval_id"]: r["spoken"] for r in rows},
        progress=lambda c: say(f"  battery condition {c}"),
    )
    say(f"  battery: {len(rows)} clips x {len(conditions)} conditions in {time.perf_counter() - t1:.0f} s")
    results.setdefault("donor", {})["eval_clips"] = [r["eval_id"] for r in rows]
    bd = battery.to_dict()
    results["donor"] = {
        **results.get("donor", {}),
        "train": {"donor": _train_meta(path)},
        "set": oset.meta,
        "battery": bd,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    return donor_targets(bd), bd


def read_result(path: Path, fix: str) -> dict | None:
    """A committed result file, or ``None`` when it is absent; a file that is not JSON is a one-line
    error naming it and ``fix``."""
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise SystemExit(f"{path}: not JSON ({exc}); fix: {fix}") from None


def run_miner(path: Path, results: dict) -> list:
    """Section 3 is another benchmark's work: read its result file when present, and check its
    provenance against the code at hand (a file without one, or written by other code, is never
    "met")."""
    from asr_audit.organism.validity import miner_target
    from asr_audit.provenance import PROVENANCE_KEY, freshness

    data = read_result(path, "rewrite it with the miner's benchmark")
    fresh = None if data is None else freshness(data.get(PROVENANCE_KEY), ROOT)
    results["miner"] = {
        "source": str(path),
        "freshness": None if fresh is None else {"status": fresh.status, "detail": fresh.detail},
        "result": data,
    }
    return miner_target(data, _rel(path), None if fresh is None else (fresh.status, fresh.detail))


MECH_DIR = ROOT / "benchmarks" / "results" / "mechanism"


def run_mechanism(folder: Path, results: dict) -> list:
    """Section 4 is ``benchmarks/mechanism.py``'s work: the pre-registered seed-6 confirmation and
    its patching, read from their result files, each checked against the code at hand."""
    from asr_audit.organism.validity import mechanism_targets
    from asr_audit.provenance import PROVENANCE_KEY, freshness

    def read(name: str) -> dict | None:
        return read_result(folder / name, "rerun the command the pre-registration names")

    confirm, patch, prereg = read("confirm-seed6.json"), read("patch-seed6.json"), read("preregistration-seed6.json")
    written = read("patch-written-seed6.json")
    fresh = {
        k: (f.status, f.detail)
        for k, data in (("confirm", confirm), ("patch", patch), ("written", written))
        if data is not None
        for f in [freshness(data.get(PROVENANCE_KEY), ROOT)]
    }
    results["mechanism"] = {"source": str(folder), "freshness": fresh}
    code = (prereg or {}).get("code", {}).get("code_hash")
    return mechanism_targets(confirm, patch, _rel(folder), fresh, code, written)


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


FROZEN = ROOT / "benchmarks" / "results" / "frozen-recipes-2026-12-01.json"
REPLICATION_DIR = ROOT / "benchmarks" / "results" / "replication"


def freeze_record(seeds: dict[str, list[int]], tuning: dict[str, list[int]], args: argparse.Namespace) -> dict:
    """The freeze record (issue 27): the recipes, evaluation settings, targets and intervals as the
    code at hand defines them, the evaluation seeds, and the code hash every replication run must
    carry (the same modules and script as a run's own provenance)."""
    from dataclasses import asdict

    from asr_audit.organism.donor import donor_set_config
    from asr_audit.organism.validity import donor_targets, memorizer_targets

    mem_config = MemorizerSetConfig(masked_variants=args.memorizer_variants)
    results = _rel(args.results_dir)
    mem_flags = f"--memorizer-steps {args.memorizer_steps} --memorizer-lr {args.memorizer_lr} "
    mem_flags += f"--memorizer-variants {args.memorizer_variants}"

    def train(kind: str, steps: int, lr: float) -> dict:
        cfg = TrainConfig(steps=steps, lr=lr, batch_size=args.batch_size, seed=0).to_dict()
        return {**cfg, "seed": "the evaluation seed", "defaults": list(TRAIN_DEFAULTS[kind])}

    return {
        "what": "the memorizer and donor recipes, their evaluation, targets and intervals, frozen before any "
        "evaluation run on the seeds below (issue 27); a replication run's provenance code_hash must equal "
        "this record's",
        "tag": args.tag,
        "evaluation_seeds": seeds,
        "derived_seeds": {"donor": [s + 1000 for s in seeds.get("donor", [])]},
        "tuning_seeds": tuning,
        "results_dir": results,
        "recipes": {
            "memorizer": {
                "train": train("memorizer", args.memorizer_steps, args.memorizer_lr),
                "set": json.loads(json.dumps(asdict(mem_config), default=str)),
                "set_config": mem_config.to_dict(),
            },
            "donor": {
                "train": train("donor", args.donor_steps, args.donor_lr),
                "set": json.loads(json.dumps(asdict(donor_set_config(args.donor_sentences)), default=str)),
                "eval_clips": args.donor_eval,
                "conditions": list(DONOR_CONDITIONS),
            },
        },
        "targets": {
            "memorizer": [t.claim for t in memorizer_targets({}, {}, {})],
            "donor": [t.claim for t in donor_targets(None)],
        },
        "intervals": {
            "masked recovery": "Wilson 95% (run_masked)",
            "masked lift over decoys": "sentence sign-flip interval (stats.intervals.sign_flip_mean), 4 decoys, "
            "intelligibility gate WER <= 0.3",
            "forced continuation": "sentence-clustered interval (run_continuation), last 3 words hidden",
            "donor cells": "Wilson 95%; DiD: sentence-clustered bootstrap, flagged by stats.flags.difference_flagged",
        },
        "pass_rule": "a seed passes a section when every target of that section is met; every planned seed is "
        "reported (pass, miss, not run, other code) with the rate passed / run",
        "commands": {
            "memorizer": f"ASR_AUDIT_ORGANISM_DIR=<empty folder> OMP_NUM_THREADS=1 python benchmarks/validity.py "
            f"--parts memorizer --seed S {mem_flags} --out <that folder>/out --json {results}/memorizer-seedS.json "
            "(trains the memorizer and its control with this recipe, then evaluates)",
            "donor": "asr-audit organism train --kind donor --seed S; python benchmarks/validity.py --parts donor "
            "--reuse --seed S --json benchmarks/results/replication/donor-seedS.json",
        },
        PROVENANCE_KEY: make_provenance(
            VALIDITY_CODE,
            sorted({s for v in seeds.values() for s in v}),
            files=("benchmarks/validity.py",),
            root=ROOT,
        ).to_dict(),
    }


def print_replications(frozen_path: Path | None, results: Path | None) -> int:
    """``--replication``: the table of the freeze record named by ``--frozen``, or of every
    ``frozen-recipes-*.json`` in benchmarks/results (oldest first), each read from its own results
    folder (the record's ``results_dir``; ``--results-dir`` overrides); 0 only when all passed."""
    paths = [frozen_path] if frozen_path else sorted(FROZEN.parent.glob("frozen-recipes-*.json"))
    codes = []
    for path in paths:
        if not path.is_file():
            raise SystemExit(f"{path}: no freeze record; fix: name it with --frozen")
        frozen = json.loads(path.read_text(encoding="utf-8"))
        folder = results or ROOT / frozen.get("results_dir", _rel(REPLICATION_DIR))
        codes.append(print_replication(path, frozen, folder))
    return max(codes, default=1)


def print_replication(frozen_path: Path, frozen: dict, results: Path) -> int:
    """The replication table of every planned seed of one freeze record (``frozen``, read from
    ``frozen_path``); 0 only when all passed."""
    from asr_audit.organism.replication import replication_table, seed_rows

    records = {}
    for part, seeds in frozen["evaluation_seeds"].items():
        for seed in seeds:
            f = results / f"{part}-seed{seed}.json"
            if f.is_file():
                records[(part, int(seed))] = json.loads(f.read_text(encoding="utf-8"))
    rows = seed_rows(frozen, records)
    print(f"\n## Replication on the evaluation seeds of {_rel(frozen_path)} ({frozen.get('tag')})\n")
    print(replication_table(rows), flush=True)
    return 0 if rows and all(r.outcome == "pass" for r in rows) else 1


def _seed_map(text: str) -> dict[str, list[int]]:
    """``memorizer=311,312;donor=321`` -> ``{"memorizer": [311, 312], "donor": [321]}``."""
    out = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        name, _, seeds = part.partition("=")
        out[name.strip()] = [int(s) for s in seeds.split(",") if s.strip()]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--parts",
        default="memorizer,donor",
        help="comma-separated: memorizer, donor (issue 13's controls; the miner row is always read), policy "
        "(the voice-gated policy organism's tables)",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--memorizer-steps", type=int, default=TRAIN_DEFAULTS["memorizer"][0])
    ap.add_argument("--memorizer-lr", type=float, default=TRAIN_DEFAULTS["memorizer"][1])
    ap.add_argument(
        "--memorizer-variants",
        type=int,
        default=MemorizerSetConfig().masked_variants,
        help="memorizer set: silenced training variants per memorized / control sentence",
    )
    ap.add_argument("--eval-clips", type=int, default=0, help="memorizer: probe only the first N clips per group")
    ap.add_argument(
        "--control-sanity",
        action="store_true",
        help="memorizer: also run masked recovery of the control on its own sentences (its recipe memorizes too)",
    )
    ap.add_argument("--donor-steps", type=int, default=TRAIN_DEFAULTS["donor"][0])
    ap.add_argument("--donor-lr", type=float, default=TRAIN_DEFAULTS["donor"][1])
    ap.add_argument("--donor-sentences", type=int, default=48)
    ap.add_argument("--donor-eval", type=int, default=32, help="held-out benchmark-voice clips the battery judges")
    ap.add_argument("--miner-json", type=Path, default=DEFAULT_MINER_JSON, help="the miner's result file (section 3)")
    ap.add_argument("--report", type=Path, default=None, help="write an HTML report with the validity section here")
    # the policy organism (--parts policy)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--control-steps", type=int, default=100)
    ap.add_argument("--n-sentences", type=int, default=200)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--masked-clips", type=int, default=24)
    ap.add_argument("--memorised-clips", type=int, default=48)
    ap.add_argument("--skip-refdis", action="store_true")
    ap.add_argument("--skip-masked", action="store_true")
    ap.add_argument("--reuse", action="store_true", help="reuse deltas already trained with these settings")
    ap.add_argument("--out", type=Path, default=None, help="where the deltas go (default: the backends' folder)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument(
        "--replication",
        action="store_true",
        help="print the replication table: every evaluation seed of --frozen, read from --results-dir",
    )
    ap.add_argument(
        "--frozen",
        type=Path,
        default=None,
        help="the freeze record (--write-freeze: where it goes; --replication: default every "
        "benchmarks/results/frozen-recipes-*.json)",
    )
    ap.add_argument(
        "--results-dir",
        type=Path,
        default=None,
        help="<part>-seed<S>.json files (default: the freeze record's results_dir, else benchmarks/results/replication)",
    )
    ap.add_argument(
        "--write-freeze",
        default=None,
        metavar="SEEDS",
        help="write the freeze record to --frozen with these evaluation seeds, e.g. 'memorizer=311,312;donor=321'",
    )
    ap.add_argument("--tag", default="frozen-recipes-2026-12-01", help="the freeze record's tag (--write-freeze)")
    ap.add_argument("--tuning-seeds", default="memorizer=0,1;donor=0", help="seeds already looked at (--write-freeze)")
    args = ap.parse_args(argv)
    if args.replication:
        return print_replications(args.frozen, args.results_dir)
    if args.write_freeze:
        args.frozen = args.frozen or FROZEN
        args.results_dir = args.results_dir or REPLICATION_DIR
        record = freeze_record(_seed_map(args.write_freeze), _seed_map(args.tuning_seeds), args)
        args.frozen.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        say(f"wrote {args.frozen}")
        return 0
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    bad = [p for p in parts if p not in ("memorizer", "donor", "policy")]
    if bad:
        ap.error(f"--parts: unknown part(s) {', '.join(bad)}; valid: memorizer, donor, policy")
    t_start = time.perf_counter()
    out_dir = args.out or organism_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    results: dict = {"seed": args.seed, "parts": parts}
    targets: list = []
    battery = None
    if "policy" in parts:
        results["policy"] = run_policy(args)
    if "memorizer" in parts:
        targets += run_memorizer(args, out_dir, results)
    else:
        from asr_audit.organism.validity import memorizer_targets

        targets += memorizer_targets({}, {}, {})
    if "donor" in parts:
        t, battery = run_donor(args, out_dir, results)
        targets += t
    else:
        from asr_audit.organism.validity import donor_targets

        targets += donor_targets(None)
    targets += run_miner(args.miner_json, results)
    targets += run_mechanism(MECH_DIR, results)
    from asr_audit.organism.validity import targets_table

    results["seconds"] = round(time.perf_counter() - t_start, 1)
    results["targets"] = [t.to_dict() for t in targets]
    results[PROVENANCE_KEY] = make_provenance(
        VALIDITY_CODE, [args.seed], _organism_inputs(out_dir, parts), files=("benchmarks/validity.py",), root=ROOT
    ).to_dict()
    print(f"\n## Positive controls (issue 13), seed {args.seed}, {results['seconds'] / 60:.1f} min\n")
    print(targets_table(targets), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=float) + "\n")
    if args.report:
        from asr_audit.report.html import build_report

        probes = [
            {
                "probe": "validity",
                "corpus": "organisms",
                "result": {"targets": results["targets"], "seconds": results["seconds"], "seed": args.seed},
            }
        ]
        if battery is not None:
            probes.append({"probe": "battery", "corpus": "organism-donor-test", "result": battery})
        path = build_report(
            {"title": "asr-audit validity: positive controls", "seed": args.seed, "probes": probes}, args.report
        )
        say(f"report: {path}")
    unmet = [t for t in targets if t.met is not True]
    if unmet:
        print(
            f"\n{len(unmet)} of {len(targets)} targets not shown met: "
            + ", ".join(f"{sum(t.status == st for t in unmet)} {st}" for st in sorted({t.status for t in unmet})),
            flush=True,
        )
    return 0 if not unmet else 1


if __name__ == "__main__":
    sys.exit(main())
