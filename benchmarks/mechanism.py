"""The white-box layer proven on the model organism (the known answer): direction, ablation,
induction, rank-k, patching, and the null on the base model and the control.

Needs trained organisms (``asr-audit organism train``; set ``ASR_AUDIT_ORGANISM_DIR``) and their
set. Every step calls library functions of :mod:`asr_audit.mechrun` (capture, directions,
steering, patching; the experiments' arms in ``mechrun.arms`` / ``mechrun.removal``, the
organism's activations and the voice gate in ``mechrun.activations``, the screen in
``mechrun.screen``, measures in ``mechrun.measures``, tables in ``mechrun.tables``); this script
only sets up the shared state (the organism, its set, the captures at every decoder layer, the
layer sweep and the voice direction) and runs the ``--steps`` in order, printing each step's
tables and writing its results to ``--json`` as it goes.

The steps (what each measures, with its command): ``benchmarks/README.md``, "mechanism.py"; what
was tried in which order and what it found: ``docs/research/mechanism-log.md``; how to read the
tables: ``docs/mechanism.md``.

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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from asr_audit.calib.truth import load_truth
from asr_audit.corpus.clips import Corpus
from asr_audit.corpus.manifests import read_manifest
from asr_audit.errors import AuditError
from asr_audit.mech.directions import Direction, save_direction
from asr_audit.mech.interventions import Intervention
from asr_audit.mechrun import activations as acts
from asr_audit.mechrun import arms as mk
from asr_audit.mechrun import removal as rm
from asr_audit.mechrun import tables as tb
from asr_audit.mechrun.capture import capture, load_capture
from asr_audit.mechrun.direction import layer_sweep, make_direction
from asr_audit.mechrun.measures import (
    accept_ref_changes,
    fresh_corpus,
    gate2_choice,
    gate2_pool,
    gate_rule,
    interval_rule,
    outcomes_by_kind,
    sub_corpus,
    wer_changes,
)
from asr_audit.mechrun.screen import screen, screen_rank
from asr_audit.mechrun.steer import CLEAN as CLEAN_LABEL
from asr_audit.mechrun.steer import Arm, SteerResult, control_arms, run_steer
from asr_audit.organism.backend import load_organism
from asr_audit.organism.data import OrganismSetConfig, build_organism_set, load_organism_set
from asr_audit.organism.pipeline import default_set_dir, load_base
from asr_audit.organism.train import EncoderCache, read_wav
from asr_audit.provenance import PROVENANCE_KEY, make_provenance
from asr_audit.store.sqlite import open_store

#: what a result file's code hash covers (``asr_audit.provenance``): the modules the experiment runs
#: (the hooks and interventions, the experiment's library, the organism's data, training and backend, the
#: PyTorch Whisper it rebuilds, planted sites and truth, intervals, transcription through the store,
#: alignment and normalization) and this script; not the CLI's probe object or the validity targets, so
#: that an edit there does not mark these results stale
MODULES = (
    "asr_audit.mech",
    *(f"asr_audit.mechrun.{m}" for m in ("activations", "arms", "capture", "direction", "measures", "patch")),
    *(f"asr_audit.mechrun.{m}" for m in ("removal", "screen", "steer", "tables")),
    *(f"asr_audit.organism.{m}" for m in ("backend", "data", "pipeline", "train", "weights")),
    *(f"asr_audit.calib.{m}" for m in ("build", "generate", "sites", "truth")),
    *(f"asr_audit.models.{m}" for m in ("whisper_torch", "whisper_common", "whisper_features")),
    "asr_audit.stats.intervals",
    "asr_audit.store.transcribe",
    "asr_audit.text.align",
    "asr_audit.text.normalize",
)
SCRIPT = "benchmarks/mechanism.py"


def say(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def _jsonable(value: object) -> object:
    """An argument for the JSON record: paths as text, lists of them too."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


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
GATE_STEPS = ("fresh-gate-A", "fresh-gate-B", "fresh-gate-C", "fresh-gate-D", "fresh-gate-null")
GATE2_STEPS = ("fresh-gate2-diag", "fresh-gate2-A", "fresh-gate2-extra", "gate2-pool")
# steps that read the decision-position family (the others read the voice family only)
WITH_DECISION = (
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
)


@dataclass
class Run:
    """The state every step shares: the organism, its set and voices, the captures, the voice
    direction at the sweep's best site, the held-out set and its store, the JSON record ``out``
    (written at every ``flush``) and the tables not yet printed."""

    args: argparse.Namespace
    t0: float
    set_dir: Path
    oset: Any
    cfg: OrganismSetConfig
    organism: Any
    out: dict
    train: dict
    sentences: list
    sites: list[str]
    caps: dict
    site: str
    d: Direction
    svd: Direction
    test: Corpus
    faithful: dict[str, str]
    items: list
    store: Any
    rule_free_own: set[str]
    rule_free_eval: set[str]
    ablate: list = field(default_factory=list)  # the voice direction's ablation arms and their controls
    induce: list = field(default_factory=list)  # its induction arms (alpha) and their controls
    tables: list[str] = field(default_factory=list)
    gate_fit: dict = field(default_factory=dict)
    base: Any = None
    control: Any = None

    @property
    def va(self) -> str:
        return self.cfg.benchmark_voice

    @property
    def vb(self) -> str:
        return self.cfg.other_voices[0]

    @property
    def vd(self) -> str:
        return self.cfg.unseen_voices[0]

    @property
    def n_dec(self) -> int:
        return len(self.sites)

    @property
    def results(self) -> dict:
        return self.out.setdefault("steer", {})

    @property
    def first(self) -> int:
        """The decoder position that predicts the first text token."""
        return len(self.organism.prompt) - 1

    @property
    def decision_npz(self) -> Path:
        return self.args.work / "decision.npz"

    def flush(self) -> None:
        self.out["seconds"] = round(time.perf_counter() - self.t0, 1)
        if self.args.json:
            self.args.json.write_text(json.dumps(self.out, indent=1, default=float) + "\n")
        print("\n".join(self.tables), flush=True)
        self.tables.clear()

    def table(self, text: str) -> None:
        self.tables.append(text)
        self.flush()

    def steer(
        self, key: str, backend: Any, speaker: str, arms: list, title: str, direction: Any, *, on: Any = None
    ) -> SteerResult:
        """One steering step on ``speaker``'s clips of the held-out set, or of ``on`` (a test
        corpus, its truth items and faithful texts); its result and table are saved at once."""
        corpus, its, texts = on or (self.test, self.items, self.faithful)
        say(f"steer: {key}")
        res = run_steer(
            backend,
            sub_corpus(corpus, speaker),
            self.store,
            arms,
            items=its,
            wer_texts=texts,
            direction=direction,
            mode=arms[0].kind,
        )
        results = self.results
        results[key] = res.to_dict()
        results[key]["by_kind"] = by_kind = outcomes_by_kind(res, its, sub_corpus(corpus, speaker))
        results[key]["wer_change"] = change = wer_changes(res, texts, seed=self.args.seed)
        own = sub_corpus(corpus, speaker)
        results[key]["accept_ref_change"] = moved = accept_ref_changes(res, its, own, seed=self.args.seed)
        text = tb.steer_table(title, res) + "\n" + tb.kinds_table(by_kind) + "\n" + tb.wer_change_table(change)
        text += "\n" + tb.accept_ref_change_table(moved)
        # the faithful sentences of this voice: clips of sentences with no planted edit (record = spoken)
        rule_free = self.rule_free_eval if on is not None else self.rule_free_own
        plain = {c: t for c, t in texts.items() if c in rule_free and c in res.hypotheses[CLEAN_LABEL]}
        if plain and res.arms[1:]:
            results[key]["wer_change_faithful_sentences"] = plain_change = wer_changes(res, plain, seed=self.args.seed)
            text += "\n" + tb.wer_change_table(
                plain_change, " on the faithful sentences of this voice (no planted edit)"
            )
        self.table(text)
        return res

    def base_model(self) -> Any:
        self.base = self.base or load_base()
        return self.base

    def nulls(self) -> list[tuple[str, Any]]:
        """The base model and the control (loaded once)."""
        self.base = self.base or load_base()
        self.control = self.control or load_organism("organism-control")
        return [("base", self.base), ("control", self.control)]

    def family(self, step: str) -> dict[str, list[Direction]]:
        """The per-site direction families a step reads (recorded in the JSON)."""
        fam = acts.families(
            self.caps,
            self.sites,
            self.args.work,
            self.organism,
            self.oset,
            load_truth(self.set_dir).errors(),
            self.va,
            self.vb,
            with_decision=step in WITH_DECISION,
            say=say,
        )
        self.out["families"] = {
            name: [{"site": d.site, "norm": d.norm, "hash": d.hash} for d in ds] for name, ds in fam.items()
        }
        return fam

    def fresh(self, *, exclude: bool = True) -> tuple:
        return fresh_corpus(self.args.eval_set, self.oset, self.out, self.args.exclude_set if exclude else None)

    def eval_corpus(self, step: str) -> tuple:
        """The ``--eval-set`` sentences of a ``fresh-*`` step (which needs the option)."""
        if self.args.eval_set is None:
            raise SystemExit(f"step {step} needs --eval-set DIR (an organism set of new sentences)")
        return self.fresh()

    def positions_b(self) -> dict[str, np.ndarray]:
        a = self.args
        return acts.faithful_positions(self.organism, self.oset, self.vb, self.sites, a.n_direction, a.work, say=say)

    def positions_a(self) -> dict[str, np.ndarray]:
        return acts.plain_positions(self.organism, self.oset, self.va, self.sites, self.args.work, say=say)

    def omissions(self) -> list[Direction]:
        return acts.omission_family(self.args.work, self.oset, self.set_dir, self.va, self.vb, self.sites)

    def gate(self, *, show: bool):
        """The voice gate, fitted once; ``show`` prints its table when it is fitted now."""
        if not self.gate_fit:
            self.gate_fit.update(
                acts.fit_gate(
                    self.organism,
                    self.oset,
                    self.train,
                    self.sentences,
                    self.va,
                    self.vb,
                    self.sites,
                    self.args.work,
                    seed=self.args.seed,
                    say=say,
                )
            )
            self.out["gate"] = {k: v for k, v in self.gate_fit.items() if k != "gate"}
            if show:
                self.table(tb.gate_table(self.gate_fit))
        return self.gate_fit["gate"]


def setup(args: argparse.Namespace, t0: float) -> Run:
    """Steps 1-2, shared by every run: capture the same training sentences in voice A and voice B,
    paired by sentence, at every decoder layer, teacher-forced on the record (encoder states from
    the organism's encoder cache: its encoder is the frozen base encoder); the layer sweep and the
    voice direction (and its rank-4 paired-SVD subspace) at the best layer; the held-out set and
    the store steering runs through (reruns resume)."""
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
    inputs = {"organism_set": oset.content_hash(), "organism": organism.identity().to_dict()["weights_hash"]}
    for path in ([args.eval_set] if args.eval_set else []) + (args.exclude_set or []):
        inputs[f"set {path.name}"] = load_organism_set(path).content_hash()
    out[PROVENANCE_KEY] = make_provenance(MODULES, [args.seed], inputs, files=[SCRIPT]).to_dict()
    enc_cache = EncoderCache(acts.organism_base_view(organism))
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

        def encoded(cid: str, path_of: dict[str, Path] = path_of) -> np.ndarray:
            return enc_cache.load(path_of[cid])

        caps[label] = capture(
            organism,
            ((r["id"], read_wav(oset.audio_path(r))) for r in rows),
            sites,
            root,
            texts=[r["text"] for r in rows],
            pool="mean",
            encoded=encoded,
        )
    sweep = layer_sweep(caps["A"], caps["B"], sites, seed=args.seed)
    out["sweep"] = [r.to_dict() for r in sweep]
    tables = [tb.sweep_table(sweep)]
    site = max(sweep, key=lambda r: (round(r.auc, 3), r.norm)).site  # AUC ties: the larger separation
    out["site"] = site
    dirs_root = args.work / "directions"
    d = make_direction(f"voice-{site}", caps["A"], caps["B"], site, extra={"seed": args.seed})
    save_direction(d, dirs_root)
    svd = make_direction(f"voice-svd4-{site}", caps["A"], caps["B"], site, k=4)
    save_direction(svd, dirs_root)
    out["direction"] = {k: v for k, v in d.to_dict().items() if k != "provenance"}
    test = read_manifest(set_dir / "calib-test.jsonl")
    faithful = {r["id"]: r["faithful"] for r in oset.rows("test")}
    run = Run(
        args=args,
        t0=t0,
        set_dir=set_dir,
        oset=oset,
        cfg=cfg,
        organism=organism,
        out=out,
        train=train,
        sentences=sentences,
        sites=sites,
        caps=caps,
        site=site,
        d=d,
        svd=svd,
        test=test,
        faithful=faithful,
        items=[t for t in load_truth(set_dir).errors() if t.clip_id in faithful],
        store=None,
        rule_free_own={r["id"] for r in oset.rows() if not r["rules"]},
        rule_free_eval=set(),
        ablate=control_arms(d, "ablate", n_random=args.n_random, seed=args.seed),
        induce=control_arms(d, "induce", alpha=args.alpha, n_random=args.n_random, seed=args.seed),
        tables=tables,
    )
    run.flush()
    run.store = open_store(args.work / "store.sqlite3")
    out.setdefault("steer", {})  # the record's steering results, right after the setup's entries
    if args.eval_set:
        run.rule_free_eval = {r["id"] for r in load_organism_set(args.eval_set).rows() if not r["rules"]}
    return run


# --------------------------------------------------------------------------- 3-5: the first session's steps


def step_ablate(r: Run, step: str) -> None:
    r.steer("ablate A", r.organism, r.va, r.ablate, f"Ablation at {r.site}, held-out voice A ({r.va})", r.d)


def step_wer(r: Run, step: str) -> None:
    title = f"Ablation at {r.site}, held-out voice B ({r.vb}, faithful)"
    r.steer("ablate B", r.organism, r.vb, r.ablate, title, r.d)


def step_induce(r: Run, step: str) -> None:
    for voice in (r.vd, r.vb):
        title = f"Induction alpha={r.args.alpha:g} at {r.site}, voice {voice}"
        r.steer(f"induce {voice}", r.organism, voice, r.induce, title, r.d)


def step_meanablate(r: Run, step: str) -> None:
    # projection ablation sets h.d to 0, which is not where voice-B activations project;
    # mean ablation sets it to voice B's mean projection (B's pooled mean as the center)
    unit_d = r.d.vector / r.d.norm
    mean_b = r.caps["B"].pooled(r.site).mean(0)
    r.out["mean_projection"] = {"A": float(r.caps["A"].pooled(r.site).mean(0) @ unit_d), "B": float(mean_b @ unit_d)}
    arms = [
        Intervention.ablation([r.site], unit_d[None, :], center=mean_b, label="mean-ablate-k1"),
        Intervention.ablation([r.site], r.svd.rank(1).basis, center=mean_b, label="mean-ablate-svd-k1"),
    ]
    title = f"Mean ablation (projection set to voice B's mean) at {r.site}, voice A"
    r.steer("mean-ablate A", r.organism, r.va, arms, title, r.d)


def step_rank(r: Run, step: str) -> None:
    ranks = [Intervention.ablation([r.site], r.svd.rank(k).basis, label=f"svd-k{k}") for k in (1, 2, 4)]
    r.steer("rank-k A", r.organism, r.va, ranks, f"Rank-k ablation (paired SVD) at {r.site}, voice A", r.svd)


def step_null(r: Run, step: str) -> None:
    ablate, induce = r.ablate, r.induce
    for name, backend in r.nulls():
        r.steer(f"null {name} A", backend, r.va, ablate[:2], f"Null: {name} model, ablation at {r.site}, voice A", r.d)
        title = f"Null: {name} model, induction at {r.site}, voice {r.vd}"
        r.steer(f"null {name} {r.vd}", backend, r.vd, induce[:2], title, r.d)


def step_patch(r: Run, step: str) -> None:
    """``patch``: the organism's own held-out voice-A edits; ``fresh-patch``: the ``--eval-set``'s
    (sentences the organism or an ``--exclude-set`` saw dropped); ``fresh-patch-written``: the same
    on the written record against the faithful text, one-edit clips (``activations.voice_patch``)."""
    base = r.base_model()
    say(step)
    if step in ("fresh-patch", "fresh-patch-written"):
        corpus, items, _ = r.eval_corpus(step)
        keep = {c.id for c in corpus.clips}
        written = step == "fresh-patch-written"
        eset = load_organism_set(r.args.eval_set)
        patch = acts.voice_patch(r.organism, base, eset, items, r.va, r.vb, keep, written=written)
        where = f"voice A of {r.args.eval_set.name}" + (", written texts, one-edit clips" if written else "")
    else:
        patch = acts.voice_patch(r.organism, base, r.oset, r.items, r.va, r.vb, {c.id for c in r.test.clips})
        where = "held-out voice A"
    r.out[step] = patch.to_dict()
    r.out["encoder_identical_to_base"] = acts.encoder_identical(r.organism, base)
    r.table(tb.patch_table(patch, r.out["encoder_identical_to_base"], where))


# --------------------------------------------------------------------------- 6: the site chosen by effect


def step_screen(r: Run, step: str) -> None:
    fam = r.family(step)
    say(f"{step}: teacher-forced P(ref) under each candidate")
    a = r.args
    if step == "screen":
        rows = screen(r.organism, r.oset, r.items, r.va, fam, r.sites, seed=a.seed, say=say)
    else:
        rows = screen_rank(r.organism, r.oset, r.items, r.va, r.caps, r.sites, seed=a.seed, say=say)
    r.out[step] = rows
    r.table(tb.screen_table(rows))


def step_sites(r: Run, step: str) -> None:
    fam = r.family(step)
    arms = mk.site_arms(fam["voice"], r.n_dec, seed=r.args.seed)
    voice, key = (r.va, "sites A") if step == "sites" else (r.vb, "sites B")
    r.steer(key, r.organism, voice, arms, f"Ablation by site (voice direction), voice {voice}", fam["voice"])


def step_decision(r: Run, step: str) -> None:
    fam = r.family(step)
    arms = mk.decision_arms(fam["decision"], r.n_dec, seed=r.args.seed)
    r.steer("decision A", r.organism, r.va, arms, f"Decision-position direction, voice {r.va}", fam["decision"])


def step_decision_wer(r: Run, step: str) -> None:
    fam = r.family(step)
    arms = mk.decision_arms(fam["decision"], r.n_dec, seed=r.args.seed)[2:3]  # mean-ablate all
    arms += [mk.ablate_arm(fam["decision"], "mean", "random-0 mean-ablate all", np.random.default_rng(r.args.seed))]
    title = f"Decision-position direction, mean ablation at all layers, voice {r.vb} (faithful)"
    r.steer("decision B", r.organism, r.vb, arms, title, fam["decision"])


def step_decision_rank(r: Run, step: str) -> None:
    fam = r.family(step)
    arms = mk.decision_rank_arms(r.decision_npz, r.sites, (1, 2, 4), seed=r.args.seed)
    title = f"Rank-k mean ablation (paired SVD of decision-position differences), all layers, voice {r.va}"
    r.steer("decision-rank A", r.organism, r.va, arms, title, fam["decision"])


def step_induce_large(r: Run, step: str) -> None:
    fam = r.family(step)
    for voice in (r.vd, r.vb):
        arms = mk.large_induction_arms(fam["voice"], (2.0, 4.0, 8.0), seed=r.args.seed)
        title = f"Induction alpha 2/4/8 at all decoder layers, voice {voice}"
        r.steer(f"induce-large {voice}", r.organism, voice, arms, title, fam["voice"])


def step_null_large(r: Run, step: str) -> None:
    fam = r.family(step)
    rng = np.random.default_rng(r.args.seed)
    dec_arms = [
        mk.ablate_arm(fam["decision"], "mean", "decision mean-ablate all"),
        mk.ablate_arm(fam["decision"], "mean", "random-0 mean-ablate all", rng),
    ]
    ind_arms = mk.large_induction_arms(fam["voice"], (4.0,), seed=r.args.seed)
    nulls = r.nulls()
    null_on = r.fresh(exclude=False) if r.args.eval_set else None
    where = "fresh " if null_on else ""
    for name, backend in nulls:
        title = f"Null: {name} model, decision mean ablation at all layers, {where}voice {r.va}"
        r.steer(f"null-large {name} A", backend, r.va, dec_arms, title, fam["decision"], on=null_on)
        title = f"Null: {name} model, induction alpha=4 at all layers, {where}voice {r.vd}"
        r.steer(f"null-large {name} {r.vd}", backend, r.vd, ind_arms, title, fam["voice"], on=null_on)


def step_fresh(r: Run, step: str) -> None:
    """``fresh-A|B|D|rank`` on the sentences of ``--eval-set``."""
    fam = r.family(step)
    fresh_on = r.eval_corpus(step)
    s = r.args.seed
    if step in ("fresh-A", "fresh-B"):
        wanted = ("mean-ablate all", "random-0 mean-ablate all", "shuffled mean-ablate all")
        arms = [a for a in mk.decision_arms(fam["decision"], r.n_dec, seed=s) if a.label in wanted]
        voice = r.va if step == "fresh-A" else r.vb
        title, d = f"Fresh sentences: decision mean ablation, voice {voice}", fam["decision"]
    elif step == "fresh-D":
        voice, arms = r.vd, mk.large_induction_arms(fam["voice"], (4.0,), seed=s)
        title, d = f"Fresh sentences: induction alpha=4 all layers, voice {r.vd}", fam["voice"]
    else:
        voice, arms = r.va, mk.decision_rank_arms(r.decision_npz, r.sites, (1, 2, 4), seed=s)
        title, d = f"Fresh sentences: rank-k decision mean ablation, voice {r.va}", fam["decision"]
    r.steer(step, r.organism, voice, arms, title, d, on=fresh_on)


# --------------------------------------------------------------------------- 7: removal without the side effect

POSITION_ARMS: dict[str, Callable[..., list[Arm]]] = {
    "trigger": rm.trigger_arms,
    "combo": rm.combo_arms,
    "push": rm.push_arms,
    "l0": rm.l0_arms,
    "l0b": rm.l0b_arms,
    "l0c": rm.l0c_arms,
    "l0d": rm.l0d_arms,
}


def step_fresh_extra(r: Run, step: str) -> None:
    """``fresh-<kind>-A|B``: the fourth to sixth sessions' removal arms on ``--eval-set``."""
    fam = r.family(step)
    fresh_on = r.eval_corpus(step)
    s = r.args.seed
    voice = {"A": r.va, "B": r.vb}[step[-1]]
    kind = step.split("-")[1]
    if kind == "clamp":
        arms = rm.clamp_arms(fam["decision"], seed=s)
    elif kind == "r5":
        arms = rm.r5_arms(fam, r.positions_b(), seed=s)
    elif kind in ("r6", "r7"):
        make_r = rm.r6_arms if kind == "r6" else rm.r7_arms
        arms = make_r(fam, r.omissions(), r.first)
    elif kind == "confirm":
        if r.args.arm is None:
            raise SystemExit(f"step {step} needs --arm LABEL (the arm chosen on the tuning set)")
        pos, om = r.positions_b(), r.omissions()
        arms = rm.confirm_arms(fam, pos, r.decision_npz, r.sites, r.args.arm, seed=s, om=om, first=r.first)
    elif kind == "induce":
        arms = mk.large_induction_arms(fam["voice"], (1.0, 2.0), seed=s)
    elif kind in POSITION_ARMS:
        arms = POSITION_ARMS[kind](fam["decision"], r.positions_b(), seed=s)
    else:
        arms = rm.layer_arms(fam["decision"], r.decision_npz, r.sites, seed=s)
    title = f"Fresh sentences: decision direction, {kind} arms, voice {voice}"
    r.steer(step, r.organism, voice, arms, title, fam["voice"] if kind == "induce" else fam["decision"], on=fresh_on)


def step_omission_stats(r: Run, step: str) -> None:
    r.family(step)
    r.positions_b()
    r.out[step] = stats = acts.omission_stats(r.args.work, r.oset, r.set_dir, r.va, r.vb, r.sites)
    r.table(tb.omission_table(stats))


def step_null_confirm(r: Run, step: str) -> None:
    """The confirmed ``--arm`` on the base model and the control."""
    fam = r.family(step)
    if r.args.eval_set is None or r.args.arm is None:
        raise SystemExit(f"step {step} needs --eval-set DIR and --arm LABEL")
    nulls = r.nulls()
    null_on = r.fresh()
    pos, om = r.positions_b(), r.omissions()
    label = r.args.arm.split("|")[0]
    arms = rm.confirm_arms(fam, pos, r.decision_npz, r.sites, label, seed=r.args.seed, om=om, first=r.first)[:2]
    for name, backend in nulls:
        title = f"Null: {name} model, {label}, fresh voice {r.va}"
        r.steer(f"null-confirm {name} A", backend, r.va, arms, title, fam["decision"], on=null_on)


# --------------------------------------------------------------------------- 8-9: gated removal


def step_gate(r: Run, step: str) -> None:
    """``fresh-gate-A|B|C|D|null``: ``--arm`` applied where the voice gate opens, with its controls."""
    fam = r.family(step)
    if r.args.eval_set is None or r.args.arm is None:
        raise SystemExit(f"step {step} needs --eval-set DIR and --arm LABEL")
    gate = r.gate(show=True)
    gate_on = r.fresh()
    pos, om = r.positions_b(), r.omissions()
    label = r.args.arm.split("|")[0]
    s = r.args.seed
    if label in rm.GATE2_ARMS:  # the second round's conditional arms, controls built piece by piece
        pos_a = r.positions_a()
        gated = [
            rm.gate2_arm(label, rm.gate2_parts(fam, om, pos_a, r.first, seed=s, control=c), gate, c)
            for c in ("", "random", "shuffled")
        ]
    else:
        chosen = rm.confirm_arms(fam, pos, r.decision_npz, r.sites, label, seed=s, om=om, first=r.first)
        gated = [Arm(f"gated {a.label}", a.interventions, gate) for a in chosen]
    if step == "fresh-gate-null":
        for name, backend in r.nulls():
            title = f"Null: {name} model, gated {label}, fresh voice {r.va}"
            r.steer(f"{step} {name} A", backend, r.va, gated, title, fam["decision"], on=gate_on)
        return
    voice = {"A": r.va, "B": r.vb, "C": r.cfg.other_voices[1], "D": r.vd}[step[-1]]
    title = f"Fresh sentences: gated {label} (gate {gate.label}), voice {voice}"
    r.steer(step, r.organism, voice, gated, title, fam["decision"], on=gate_on)
    verdict = gate_rule(r.results)
    if verdict is not None:
        r.out["gate_rule"] = verdict
        r.table(tb.gate_rule_table(verdict))
    verdict = interval_rule(r.results)
    if verdict is not None:  # the eighth session's rule on interval bounds (pre-registered for seed 6)
        r.out["interval_rule"] = verdict
        r.table(tb.gate_rule_table(verdict, "eighth session, on interval bounds"))


def step_gate2(r: Run, step: str) -> None:
    """``fresh-gate2-diag|A|extra``: the second round's pieces and conditional arms, gated."""
    fam = r.family(step)
    if r.args.eval_set is None:
        raise SystemExit(f"step {step} needs --eval-set DIR")
    gate = r.gate(show=False)
    corpus2, items2, texts2 = r.fresh()
    parts = rm.gate2_parts(fam, r.omissions(), r.positions_a(), r.first, seed=r.args.seed)
    if step == "fresh-gate2-diag":  # the faithful sentences only: which piece changes them
        clips = tuple(c for c in corpus2.clips if c.id in r.rule_free_eval)
        corpus2 = Corpus(corpus2.name, corpus2.split, corpus2.source, clips)
        labels: Any = rm.GATE2_DIAG
        title = f"Faithful sentences of voice {r.va}: each piece of the gated arm"
    elif step == "fresh-gate2-extra":
        labels = rm.GATE2_EXTRA
        title = f"Fresh sentences: the chosen arm's pieces (gate {gate.label}), voice {r.va}"
    else:
        labels = (*rm.GATE2_ARMS, rm.FULL_ARM)
        title = f"Fresh sentences: conditional gated arms (gate {gate.label}), voice {r.va}"
    arms2 = [rm.gate2_arm(label, parts, gate) for label in labels]
    r.steer(step, r.organism, r.va, arms2, title, fam["decision"], on=(corpus2, items2, texts2))


def step_gate2_pool(r: Run, step: str) -> None:
    """The tuning sets' ``--json`` files pooled (``--pool``), and the committed rule's pick."""
    r.family(step)
    if not r.args.pool:
        raise SystemExit(f"step {step} needs --pool JSON (one per tuning set; repeat it)")
    r.out[step] = pooled = gate2_pool(r.args.pool)
    pick = gate2_choice(pooled)
    r.out["gate2_choice"] = pick
    r.table(tb.pool_table(pooled, len(r.args.pool), pick))


STEPS: dict[str, Callable[[Run, str], None]] = {
    "ablate": step_ablate,
    "wer": step_wer,
    "induce": step_induce,
    "meanablate": step_meanablate,
    "rank": step_rank,
    "null": step_null,
    "patch": step_patch,
    "fresh-patch": step_patch,
    "fresh-patch-written": step_patch,
    "screen": step_screen,
    "screen-rank": step_screen,
    "sites": step_sites,
    "sites-wer": step_sites,
    "decision": step_decision,
    "decision-wer": step_decision_wer,
    "decision-rank": step_decision_rank,
    "induce-large": step_induce_large,
    "null-large": step_null_large,
    **dict.fromkeys(("fresh-A", "fresh-B", "fresh-D", "fresh-rank"), step_fresh),
    **dict.fromkeys(FRESH_EXTRA, step_fresh_extra),
    "omission-stats": step_omission_stats,
    "fresh-null-confirm": step_null_confirm,
    **dict.fromkeys(GATE_STEPS, step_gate),
    "gate2-pool": step_gate2_pool,
    **{s: step_gate2 for s in GATE2_STEPS if s != "gate2-pool"},
}


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
    ap.add_argument(
        "--build-set",
        nargs=2,
        metavar=("SEED", "DIR"),
        default=None,
        help="only build an evaluation set of new sentences (120 sentences, all held out; TTS only, nothing "
        "decoded) from SEED into DIR, print its content hash and exit",
    )
    args = ap.parse_args(argv)
    if args.build_set:
        seed, folder = int(args.build_set[0]), Path(args.build_set[1])
        built = build_organism_set(folder, OrganismSetConfig(n_sentences=120, test_fraction=1.0), seed=seed)
        say(f"set {folder} (seed {seed}): {len(built.clips)} clips, content hash {built.content_hash()}")
        return 0
    steps = args.steps.split(",")
    unknown = [s for s in steps if s not in STEPS]
    if unknown:
        raise SystemExit(f"unknown step {unknown[0]!r}; valid: {', '.join(STEPS)}")
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    try:
        run = setup(args, t0)
        for step in steps:
            STEPS[step](run, step)
    except AuditError as exc:
        raise SystemExit(str(exc)) from None
    run.store.close()
    if args.report:
        from asr_audit.report.html import build_report

        entry = {"probe": "mech", "corpus": f"organism {run.set_dir.name}", "result": run.out}
        say(f"report: {build_report({'title': 'Mechanism on the model organism', 'probes': [entry]}, args.report)}")
    say(f"done in {(time.perf_counter() - t0) / 60:.1f} min")
    run.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
