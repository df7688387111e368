"""``asr-audit demo``: a complete audit on data shipped with the package, no network needed.

The demo is an ordinary experiment spec (see :func:`demo_spec`) run by the ordinary runner:

* the bundled offline models (Whisper tiny.en and base through CTranslate2, PocketSphinx) on
  the bundled real LibriVox clips;
* a generated parliament-style benchmark whose record follows four house rules (the organism
  benchmark, :mod:`asr_audit.organism.data`, rendered with offline flite voices), audited with
  the bundled models **and a model with a catch**: the model organism (Whisper tiny.en trained on
  that benchmark to write its record in its voice) and its control (the same clips, faithful
  transcripts), trained with small settings (:data:`DEMO_ORGANISM`). The package ships that pair
  trained once (:mod:`asr_audit.organism.shipped`); the demo uses it only when it matches what the
  demo would train here (seed, recipe, training clips' bytes, base weights), else (another
  ``--seed``, ``--train-organism``) trains the pair on the first run; either way it is kept in
  ``<out>/organism`` (never the user's organism folder), so a rerun reuses it, and the output and
  the report's title say which happened. The pair shares one encoder: each clip is encoded once;
* a Spanish mini-benchmark (:data:`SPANISH_SENTENCES`: eight sentences whose record writes the
  honorific and the percent both ways, spoken by an installed espeak-ng Spanish voice) transcribed
  by the bundled multilingual whisper-base with ``language = "es"`` and scored with the Spanish
  normalizer: WER and the orthographic switch rate. Reference disagreement needs a panel of at
  least two multilingual models, which the bundle does not have, so the report says it is
  undefined there instead of faking a panel;
* the paper's VoxPopuli example predictions (five models, 150 clips).

The report shows the organism flagged by reference disagreement (its edits verified by the
generated benchmark's planted truth) and by the battery's voice condition, and the control and the
honest models not flagged. It writes ``report.html`` (and
results.json, tables, plots) and prints each stage with its progress.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from rich.text import Text

from asr_audit.cli import app, console, examples
from asr_audit.data import DEMO_ORGANISM_MANIFEST
from asr_audit.store.counts import describe

DEMO_MODELS = (("whisper-tiny.en", "whisper-tiny.en"), ("whisper-base", "whisper-base"), ("sphinx", "sphinx:en-us"))
ORGANISM_MODELS = ("organism-benchmark", "organism-control")
BENCHMARK_MANIFEST = "benchmark-voice.jsonl"  # the benchmark voice's clips of both splits
BATTERY_VOICE = "flite-rms"  # a training voice the organism was taught to transcribe faithfully
# the honest models the battery re-runs in that voice (PocketSphinx, the slowest, only sits on the panel)
BATTERY_MODELS = ("whisper-tiny.en", "whisper-base")
SPANISH_MODEL = "whisper-base"  # the bundle's only multilingual model
SPANISH_CORPUS = "generated-spanish"
# The record writes each convention both ways (Sr. x4 / señor x4, % x3 / por ciento x3, three items per
# arm at least, the switch rate's min_per_arm): the voice says one thing, the record decides the spelling.
SPANISH_SENTENCES = (
    "El Sr. García votó a favor del informe con un 12 % de apoyo.",
    "La comisión aprobó el presupuesto, dijo el señor Martínez.",
    "El Sr. López pidió la palabra para una cuestión de orden.",
    "El paro bajó un 3 por ciento, según el señor Fernández.",
    "El señor Ruiz recordó que la inflación llegó al 8 % este año.",
    "El Sr. Torres propuso reducir las emisiones un 40 por ciento.",
    "Gracias, señor Presidente; el acuerdo cubre el 25 % del comercio.",
    "El Sr. Navarro dijo que el 60 por ciento de los ciudadanos lo apoya.",
)


@dataclass(frozen=True, slots=True)
class DemoOrganism:
    """The demo's small organism settings: sized so the first run fits in minutes on 2 CPU cores
    and the organism still learns the house rules (``docs/organism.md`` has the full-size run)."""

    n_sentences: int = 80
    steps: int = 80
    control_steps: int = 30
    batch_size: int = 8
    lr: float = 3e-4


DEMO_ORGANISM = DemoOrganism()


def demo_spec(
    out: Path,
    audio: bool = True,
    calib_dir: Path | None = None,
    seed: int = 0,
    organism: bool = False,
    spanish_dir: Path | None = None,
) -> dict[str, Any]:
    """The demo's experiment spec as a TOML-shaped dict (``organism``: audit the trained pair too;
    ``spanish_dir``: the Spanish mini-benchmark's folder, see :func:`_spanish_set`)."""
    from asr_audit.data import LIBRIVOX_MANIFEST, VOXPOPULI_EXAMPLES, VOXPOPULI_PANEL

    corpora: list[dict[str, Any]] = []
    skip_audio_probes = {"battery": {"skip": True}}
    if audio:
        corpora.append(
            {
                "name": "librivox",
                "spec": str(LIBRIVOX_MANIFEST),
                # three panel models: too few for leave-one-out (it needs 3 voters besides the held-out one)
                "probes": {"refdis": {"min_panel": 2, "loo": False}, **skip_audio_probes},
            }
        )
        if calib_dir is not None:
            manifest = str(calib_dir / BENCHMARK_MANIFEST)
            corpora.append(
                {
                    "name": "generated-parliament",
                    "spec": manifest,
                    "probes": {
                        # three panel models: no leave-one-out; the set's planted truth verifies the edits
                        "refdis": {"min_panel": 2, "loo": False, "truth": str(calib_dir)},
                        "miner_calibration": {"truth": str(calib_dir), "min_panel": 2, "loo": False},
                        "battery": {"spoken": manifest},
                    },
                }
            )
    if audio and spanish_dir is not None:
        corpora.append(
            {
                "name": SPANISH_CORPUS,
                "predictions": str(spanish_dir / "predictions"),
                "panel": [SPANISH_MODEL],  # one multilingual model: no consensus, so no refdis
                "probes": {
                    "refdis": {"skip": True},
                    "switch_rate": {"language": "es"},
                    "wer": {"skip": False, "language": "es"},
                    **skip_audio_probes,
                },
            }
        )
    corpora.append(
        {
            "name": "voxpopuli-examples",
            "predictions": str(VOXPOPULI_EXAMPLES),
            "panel": list(VOXPOPULI_PANEL),
            "probes": skip_audio_probes if audio else {},
        }
    )
    models = [{"name": n, "spec": s} for n, s in DEMO_MODELS] if audio else []
    if audio and organism:
        models += [{"name": n, "spec": n} for n in ORGANISM_MODELS]
    return {
        "title": "asr-audit demo",
        "seed": seed,
        "output": str(out),
        "store": str(out / "store.sqlite"),
        "normalizer": "whisper",
        "corpus": corpora,
        "model": models,
        "panel": {"models": [n for n, _ in DEMO_MODELS] if audio else []},
        "probes": {
            "refdis": {"preset": "paper"},
            "switch_rate": {"min_per_arm": 3},
            "miner_calibration": {"preset": "paper"},
            **(
                {
                    "battery": {
                        "measure": "refdis",
                        "conditions": [f"voice:{BATTERY_VOICE}"],
                        "models": [*BATTERY_MODELS, *(ORGANISM_MODELS if organism else ())],
                    }
                }
                if audio
                else {}
            ),
            **({"wer": {"skip": True}} if audio and spanish_dir is not None else {}),  # the Spanish corpus only
        },
    }


def _benchmark_set(out: Path, seed: int, say: Any) -> Path | None:
    """Build (or reuse) the demo's generated benchmark in ``out/generated-benchmark`` and write
    its benchmark-voice manifest. ``None`` (and a note) when no TTS voice can synthesize it: the
    rest of the demo still runs."""
    import json

    from asr_audit.errors import AuditError
    from asr_audit.organism.data import OrganismSetConfig
    from asr_audit.organism.pipeline import ensure_set

    target = out / "generated-benchmark"
    config = OrganismSetConfig(n_sentences=DEMO_ORGANISM.n_sentences)
    try:
        oset = ensure_set(target, config, seed, say)
    except AuditError as exc:
        console.print(Text.assemble(("skipping the generated benchmark:", "yellow"), f" {exc}"))
        return None
    rows = oset.rows(voices=[config.benchmark_voice])
    if not rows:
        console.print(Text.assemble(("skipping the generated benchmark:", "yellow"), " no clip was synthesized"))
        return None
    manifest = target / BENCHMARK_MANIFEST
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in sorted(rows, key=lambda r: r["id"]))
    if not manifest.is_file() or manifest.read_text(encoding="utf-8") != text:
        manifest.write_text(text, encoding="utf-8")
    return target


def _spanish_set(out: Path, say: Any) -> Path | None:
    """Build (or reuse) the Spanish mini-benchmark in ``out/generated-spanish``: the sentences
    spoken by the first installed espeak-ng Spanish voice, transcribed by whisper-base with
    ``language = "es"`` through the demo's store (a rerun transcribes nothing), written as a
    prediction folder. ``None`` (and a note) when no Spanish voice or the model is missing."""
    import soundfile as sf

    from asr_audit.audio.voices import synthesize, voices_for_language
    from asr_audit.corpus.clips import Clip, Corpus
    from asr_audit.errors import AuditError
    from asr_audit.models.base import DecodeOptions, load_backend
    from asr_audit.store.export import write_predictions
    from asr_audit.store.sqlite import open_store
    from asr_audit.store.transcribe import transcribe_corpus

    target = out / SPANISH_CORPUS
    voices = [v for v in voices_for_language("es") if v.startswith("espeak")]
    if not voices:
        console.print(
            Text.assemble(
                ("skipping the Spanish benchmark:", "yellow"), " no espeak-ng Spanish voice; apt-get install espeak-ng"
            )
        )
        return None
    try:
        clips = []
        for k, sentence in enumerate(SPANISH_SENTENCES, 1):
            path = target / "audio" / f"es-{k:02d}.wav"
            if not path.is_file():
                samples, rate = synthesize(voices[0], sentence)
                path.parent.mkdir(parents=True, exist_ok=True)
                sf.write(path, samples, rate)
            clips.append(Clip(id=f"es-{k:02d}", reference=sentence, audio_path=str(path)))
        corpus = Corpus(name=SPANISH_CORPUS, split="test", source=str(target), clips=tuple(clips))
        backend = load_backend(SPANISH_MODEL, DecodeOptions(language="es"))
        store = open_store(str(out / "store.sqlite"))
        try:
            outcome = transcribe_corpus(backend, corpus, store)
        finally:
            store.close()
    except (AuditError, ImportError) as exc:
        console.print(Text.assemble(("skipping the Spanish benchmark:", "yellow"), f" {exc}"))
        return None
    write_predictions(target / "predictions" / f"{SPANISH_MODEL}.jsonl", outcome.records)
    say(
        f"Spanish mini-benchmark: {len(clips)} sentences spoken by {voices[0]}, transcribed by {SPANISH_MODEL} "
        f"(language es; {outcome.n_computed} computed, {outcome.n_cached} from the store)"
    )
    return target


def _organisms(
    out: Path, set_dir: Path, seed: int, say: Any, train_here: bool = False
) -> tuple[dict[str, Any], str] | None:
    """The organism and control backends and where their weights came from: the pair already in
    ``out/organism`` when made with the demo's settings, else the shipped pair when it matches
    what the demo would train (:func:`asr_audit.organism.shipped.ensure_pair`), else trained now
    (always trained now with ``train_here``). ``None`` (and a note) when they cannot be had here."""
    from asr_audit.errors import AuditError
    from asr_audit.models.base import DecodeOptions
    from asr_audit.organism.backend import load_organism
    from asr_audit.organism.data import OrganismSetConfig
    from asr_audit.organism.shipped import ensure_pair
    from asr_audit.organism.train import TrainConfig

    d = DEMO_ORGANISM
    folder = out / "organism"
    try:
        _, origin = ensure_pair(
            set_dir,
            folder,
            DEMO_ORGANISM_MANIFEST,
            seed=seed,
            config=OrganismSetConfig(n_sentences=d.n_sentences),
            train_config=TrainConfig(steps=d.steps, lr=d.lr, batch_size=d.batch_size, seed=seed),
            control_steps=d.control_steps,
            train_here=train_here,
            say=say,
        )
        say(f"organism pair: {origin}")
        # lazy: a rerun that finds every transcript in the store never loads the weights; the pair
        # shares one encoder, so each clip is encoded once for both
        backends = {
            name: load_organism(name, DecodeOptions(), root=folder, lazy=True, share_encoder=True)
            for name in ORGANISM_MODELS
        }
        return backends, origin
    except (AuditError, ImportError) as exc:
        console.print(Text.assemble(("skipping the model organism:", "yellow"), f" {exc}"))
        return None


@app.command(
    epilog=examples(
        (
            "asr-audit demo",
            "the full demo into ./asr-audit-demo; the organism pair comes shipped, a rerun reads the store",
        ),
        ("asr-audit demo --train-organism", "train the organism pair here instead of using the shipped one"),
        ("asr-audit demo --no-audio --out demo-preds", "only the prediction-file probes, no inference"),
    )
)
def demo(
    out: Path = typer.Option(Path("asr-audit-demo"), "--out", help="Output folder for the report and results."),
    seed: int = typer.Option(
        0, "--seed", help="Seed of the generated benchmark, the organism's training and the bootstrap intervals."
    ),
    no_audio: bool = typer.Option(False, "--no-audio", help="Only the prediction-file probes (no model inference)."),
    no_progress: bool = typer.Option(False, "--no-progress", help="Hide the transcription progress bars."),
    train_organism: bool = typer.Option(
        False,
        "--train-organism",
        help="Train the organism pair here (minutes) even where the shipped pair matches the demo's settings.",
    ),
) -> None:
    """Run a complete audit on bundled data and models, with a model organism that recites the
    benchmark's record, and write the HTML report."""
    from asr_audit.runner.run import LocalExecutor, run_experiment
    from asr_audit.runner.spec import parse_spec

    out = out.resolve()
    t0 = time.monotonic()
    n_stages = 2 if no_audio else 4

    def stage(k: int, what: str) -> None:
        console.print(
            Text.assemble((f"[{k}/{n_stages}] ", "bold"), what, (f"  ({time.monotonic() - t0:.0f} s)", "dim"))
        )

    def say(message: str) -> None:
        console.print(f"      {message}", highlight=False)

    console.rule("asr-audit demo")
    calib = organisms = spanish = None
    origin = ""
    if not no_audio:
        stage(1, "generated benchmark: sentences with house-rule reference errors, synthesized with flite voices")
        calib = _benchmark_set(out, seed, say)
        spanish = _spanish_set(out, say)
        stage(2, f"model organism and control: reuse {out / 'organism'}, the shipped pair, or train them")
        pair = _organisms(out, calib, seed, say, train_organism) if calib is not None else None
        if pair is not None:
            organisms, origin = pair
    raw = demo_spec(
        out, audio=not no_audio, calib_dir=calib, seed=seed, organism=organisms is not None, spanish_dir=spanish
    )
    if organisms is not None:
        raw["title"] += f" (organism pair: {origin})"  # the report says where the organism's weights came from
    spec = parse_spec(raw, "<demo spec>")
    stage(n_stages - 1, "transcribe through the store, then run every probe")
    console.print(
        "      corpora: "
        + ", ".join(c.name for c in spec.corpora)
        + (("; models: " + ", ".join(m.name for m in spec.models)) if spec.models else ""),
        highlight=False,
    )
    executor = LocalExecutor(not no_progress, backends=dict(organisms or {}))
    outcome = run_experiment(spec, executor=executor, log=say)
    stage(n_stages, "report written; the verdicts")
    from asr_audit.report.summary import summary_rows, summary_table

    console.print(summary_table(summary_rows(outcome.results)))
    console.print(
        f"{outcome.n_computed} transcriptions computed, {outcome.n_cached} from the store; "
        f"{len(outcome.results['failures'])} failure(s); {time.monotonic() - t0:.0f} s in all",
        highlight=False,
    )
    console.print(describe(outcome.decodes), highlight=False)
    console.print(Text.assemble(("report:", "bold green"), f" {outcome.report}"))
