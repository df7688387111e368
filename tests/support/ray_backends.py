"""Cheap backends for the Ray executor tests, registered in the test process and, through Ray's
``worker_process_setup_hook`` (``ray_backends.setup``), in every Ray worker.

* ``echo-test:<tag>`` — a deterministic text made from the audio (its length and level);
* ``crash-once-test:<marker file>`` — the same texts, but the first call anywhere creates the
  marker and kills its own process (``os._exit``), as a worker lost mid-batch would;
* ``score-test:<tag>`` — the echo texts, teacher-forced scores made from the audio's level and the
  text (the lift probe has something to score), and a forced continuation (the echo twice);
  ``score-test:crash=<marker file>`` also kills its process on the first ``score`` call anywhere;
* ``translate-test:<tag>`` — the echo texts from a "multilingual" backend whose translate task
  opens every text with a courtesy (the courtesy study's translate arm has something to find);
* ``whitebox-test:<tag>`` — the translate-test texts from a backend with one decoder cross-attention
  site (a tiny torch module), so the courtesy study's attn-isolated arm runs on it.

``setup_hide`` also makes every worker treat files under a folder named ``driver-only`` as
unreachable, so the driver must ship their bytes; ``setup_worker`` (the local Ray's hook) makes
every worker's TTS engines missing while the file named by ``$NO_TTS_MARKER`` exists, so the
driver must build a voice's recipe.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from asr_audit.models.base import BACKENDS, SCORE, TRANSCRIBE, BaseBackend, DecodeOptions, register_backend

HIDDEN = "driver-only"


class EchoBackend(BaseBackend):
    code_version = "echo-test/1"

    def transcribe(self, audios):
        return [f"clip of {len(a) // 1600} tenths at level {int(np.abs(a).max() * 10)}" for a in audios]


class TranslateBackend(EchoBackend):
    multilingual = True

    def transcribe(self, audios):
        texts = super().transcribe(audios)
        if self.options.task == "translate":
            return [f"thank you mister president, {t}" for t in texts]
        return texts


class WhiteBoxBackend(TranslateBackend):
    """The translate-test texts from a "white-box" backend: one decoder cross-attention site (a tiny
    torch module) that every transcription passes through, so the courtesy study's attn-isolated arm
    applies; while that site's attention is restricted (``mech.isolate``), the text opens with the
    courtesy and says how many encoder frames the decoder could hear."""

    def sites(self):
        return ["decoder.layers.0.cross_attn"]

    def site_module(self, name):
        if not hasattr(self, "_attn"):
            import torch

            class CrossAttn(torch.nn.Module):
                def forward(self, hidden_states, key_value_states=None, attention_mask=None):
                    if attention_mask is None:
                        return None
                    return int((attention_mask[0, 0, 0] == 0).sum())

            self._attn = CrossAttn()
        return self._attn

    def transcribe(self, audios):
        import torch

        texts = super().transcribe(audios)
        attn = self.site_module("decoder.layers.0.cross_attn")
        heard = attn(torch.zeros(1, 1, 4), key_value_states=torch.zeros(1, 1500, 4))
        return texts if heard is None else [f"thank you mister president, {heard} frames heard" for _ in texts]


class CrashOnceBackend(EchoBackend):
    def __init__(self, spec: str, options: DecodeOptions, marker: str) -> None:
        super().__init__(spec, options, "none")
        self.marker = Path(marker)

    def transcribe(self, audios):
        if not self.marker.exists():
            self.marker.write_text(str(os.getpid()))
            os._exit(1)  # the worker process dies mid-batch
        return super().transcribe(audios)


class ScoreBackend(EchoBackend):
    """The echo texts, and teacher-forced scores made from the audio and the text: each target word
    costs more the quieter the audio (the zero waveform the most), so lift is defined and differs by
    clip; a target containing ``unscorable`` fails (the row isolation has something to isolate).
    With a ``marker`` path, the first ``score`` call anywhere creates the marker and kills its own
    process, as a worker lost mid-chunk would."""

    code_version = "score-test/1"
    capabilities = frozenset({TRANSCRIBE, SCORE})

    def __init__(self, spec: str, options: DecodeOptions, marker: str | None = None) -> None:
        super().__init__(spec, options, "none")
        self.marker = Path(marker) if marker else None

    def score(self, audios, prefixes, targets):
        from asr_audit.errors import BackendError
        from asr_audit.models.base import TokenScores

        if self.marker is not None and not self.marker.exists():
            self.marker.write_text(str(os.getpid()))
            os._exit(1)  # the worker process dies mid-chunk
        if any("unscorable" in t for t in targets):
            raise BackendError(f"backend {self.spec!r}: a target it cannot score; fix: none (a test)")
        out = []
        for a, p, t in zip(audios, prefixes, targets):
            level = float(np.sqrt(np.mean(np.square(a, dtype=np.float64)))) if len(a) else 0.0
            words = t.split()
            logprobs = tuple(-(0.5 + 0.1 * len(w) + 0.01 * len(p.split())) / (1.0 + 20 * level) for w in words)
            out.append(TokenScores(tuple(words), logprobs))
        return out

    def transcribe_forced(self, audios, extra_tokens):
        """The echo text, and with end-of-text banned the echo text again and ``extra_tokens``."""
        return [(t, f"{t} {t} {extra_tokens}") for t in self.transcribe(audios)]


@dataclass(frozen=True, slots=True, eq=False)
class DriverOnlySource:
    """Audio only the process that made it can load (like an ``hf-dataset:`` row whose Arrow cache a
    worker cannot see); ``broken`` sources fail to load anywhere."""

    samples: np.ndarray
    pid: int
    broken: bool = False
    label: str = "<driver-only>"

    @property
    def fingerprint(self) -> str | None:
        return None

    def load(self) -> tuple[np.ndarray, int]:
        if self.broken:
            raise ValueError("this row's audio is damaged")
        if os.getpid() != self.pid:
            raise RuntimeError(f"loaded in process {os.getpid()}, not on the driver")
        return self.samples, 8000


def driver_only_corpus():
    """Three clips behind :class:`DriverOnlySource` (8 kHz tones; the last one broken)."""
    from asr_audit.corpus.clips import Clip, Corpus

    t = np.arange(8000, dtype=np.float32) / 8000
    clips = tuple(
        Clip(
            id=f"row{i}",
            reference="a tone",
            source=DriverOnlySource(
                (0.1 * (i + 1) * np.sin(2 * np.pi * 220 * (i + 1) * t)).astype(np.float32), os.getpid(), i == 2
            ),
        )
        for i in range(3)
    )
    return Corpus("rows", "test", "memory", clips)


def setup() -> None:
    """Register the test backends (idempotent; Ray calls it in every worker process)."""
    if "echo-test" not in BACKENDS:
        register_backend("echo-test", description="test echo", capabilities=[TRANSCRIBE])(
            lambda arg, options: EchoBackend(f"echo-test:{arg}", options, "none")
        )
    if "translate-test" not in BACKENDS:
        register_backend("translate-test", description="test translate", capabilities=[TRANSCRIBE])(
            lambda arg, options: TranslateBackend(f"translate-test:{arg}", options, "none")
        )
    if "score-test" not in BACKENDS:  # score-test:<tag>, or score-test:crash=<marker file> (dies once)
        register_backend("score-test", description="test scorer", capabilities=[TRANSCRIBE, SCORE])(
            lambda arg, options: ScoreBackend(
                f"score-test:{arg}", options, arg.removeprefix("crash=") if arg.startswith("crash=") else None
            )
        )
    if "whitebox-test" not in BACKENDS:
        register_backend("whitebox-test", description="test white-box", capabilities=[TRANSCRIBE])(
            lambda arg, options: WhiteBoxBackend(f"whitebox-test:{arg}", options, "none")
        )
    if "crash-once-test" not in BACKENDS:
        register_backend("crash-once-test", description="test crash", capabilities=[TRANSCRIBE])(
            lambda arg, options: CrashOnceBackend(f"crash-once-test:{arg}", options, arg)
        )


NO_TTS_MARKER = "ASR_AUDIT_TEST_NO_TTS_MARKER"


def setup_worker() -> None:
    """:func:`setup`, and no TTS engine on this worker while the file ``$ASR_AUDIT_TEST_NO_TTS_MARKER`` exists."""
    from asr_audit.audio import voices

    setup()
    marker, speak = os.environ.get(NO_TTS_MARKER), voices.synthesize

    def synthesize(voice_name: str, text: str, cache: bool = True):
        if marker and Path(marker).exists():
            raise voices.MissingEngineError(voice_name, "flite", "apt-get install flite (not on this test worker)")
        return speak(voice_name, text, cache)

    voices.synthesize = synthesize


def setup_hide() -> None:
    """:func:`setup`, and files under a ``driver-only`` folder are unreachable from this worker."""
    from asr_audit.runner import ray_worker

    setup()
    plain = ray_worker.reachable
    ray_worker.reachable = lambda clip: HIDDEN not in str(clip.audio_path) and plain(clip)


CLIPS = ("0880.flac", "0930.flac", "0890.flac", "0920.flac")


def build_world(root: Path, folder: str = "audio") -> Path:
    """Four LibriVox clips and one missing file in ``root/folder``, with a manifest, and a prediction
    file answering three of them; returns the manifest."""
    import json
    import shutil

    from asr_audit.data import LIBRIVOX_MANIFEST

    rows = {json.loads(line)["audio_filepath"]: json.loads(line) for line in LIBRIVOX_MANIFEST.read_text().splitlines()}
    audio = root / folder
    audio.mkdir(parents=True, exist_ok=True)
    lines, preds = [], []
    for name in CLIPS:
        shutil.copy(LIBRIVOX_MANIFEST.parent / name, audio / name)
        lines.append(json.dumps({"audio_filepath": name, "text": rows[name]["text"]}))
    lines.append(json.dumps({"audio_filepath": "gone.flac", "text": "A CLIP WHOSE FILE IS MISSING"}))
    for name in CLIPS[:3]:
        words = rows[name]["text"].split()
        preds.append(json.dumps({"audio_filepath": name, "text": rows[name]["text"], "pred_text": " ".join(words[1:])}))
    manifest = audio / "manifest.jsonl"
    manifest.write_text("\n".join(lines) + "\n")
    (root / "preds.jsonl").write_text("\n".join(preds) + "\n")
    return manifest


def write_spec(
    root: Path, manifest: Path, echo: str = "echo-test:a", replicas: int = 2, num_cpus: float = 0.5, full: bool = True
) -> Path:
    """An experiment spec: the manifest's corpus and the echo model (``replicas`` actors, one clip per
    batch); ``full`` adds the prediction-file model and refdis over both, else no probe runs."""
    corpus_probes = "[corpus.probes.refdis]\nmin_panel = 2\nloo = false" if full else ""
    preds = f"""
[[model]]
name = "preds"
spec = "preds:{root / "preds.jsonl"}"
batch_size = 2
num_cpus = {num_cpus}
[panel]
models = ["echo", "preds"]
[probes.refdis]
resamples = 20
"""
    spec = root / "audit.toml"
    spec.write_text(
        f"""
title = "ray"
seed = 1
output = "out"
[[corpus]]
name = "clips"
spec = "{manifest}"
{corpus_probes}
[[model]]
name = "echo"
spec = "{echo}"
batch_size = 1
num_cpus = {num_cpus}
replicas = {replicas}
{preds if full else "[probes]"}
"""
    )
    return spec


def run_both(spec_path: Path, executor, store: Path):
    """Run ``spec_path`` with ``executor`` into its output folder; returns (outcome, results.json bytes)."""
    from asr_audit.runner.run import run_experiment
    from asr_audit.runner.spec import load_spec

    spec = load_spec(spec_path)
    outcome = run_experiment(spec, executor=executor, store_path=str(store), log=lambda _: None)
    return outcome, (Path(spec.output) / "results.json").read_bytes()


def write_probe_spec(root: Path, name: str, manifest: Path, model: str, model_spec: str, probe: str) -> Path:
    """``root/<name>.toml``: a spec titled "ray <name>" writing to ``<name>-out``, with the manifest's
    corpus, one model (``model`` = ``model_spec``, 4 clips a batch, one CPU) and ``probe`` (its TOML
    tables, ending in a newline)."""
    spec = root / f"{name}.toml"
    spec.write_text(
        f"""
title = "ray {name}"
seed = 1
output = "{name}-out"
[[corpus]]
name = "clips"
spec = "{manifest}"
[[model]]
name = "{model}"
spec = "{model_spec}"
batch_size = 4
num_cpus = 1
{probe}"""
    )
    return spec


def write_battery_spec(root: Path, manifest: Path, conditions: tuple[str, ...]) -> Path:
    """A spec running the battery (refdis measure, what the clips say in a spoken-text file: each
    reference with its third word changed) under ``conditions`` with the echo model."""
    import json

    from asr_audit.corpus.spec import load_corpus

    spoken = root / "spoken.jsonl"
    lines = []
    for c in load_corpus(str(manifest)).clips:
        words = c.reference.split()
        lines.append(json.dumps({"id": c.id, "spoken": " ".join([*words[:2], "really", *words[3:]])}))
    spoken.write_text("\n".join(lines) + "\n")
    probe = f"""[probes.battery]
measure = "refdis"
conditions = {json.dumps(list(conditions))}
spoken = "{spoken}"
resamples = 20
study = false
"""
    return write_probe_spec(root, "battery", manifest, "echo", "echo-test:a", probe)


def build_courtesy_world(root: Path, n: int = 3) -> tuple[Path, Path]:
    """``n`` flite clips that say "Thank you, Mister President." before a sentence the reference holds
    alone (``courtesy.courtesy_clips``), written as WAV files with a manifest; returns the manifest
    and the spoken-text file (what the audio says)."""
    import json

    import soundfile as sf

    from asr_audit.probes.battery.courtesy import DEMO_SENTENCES, courtesy_clips

    clips, spoken = courtesy_clips(DEMO_SENTENCES[:n])
    folder = root / "courtesy"
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for c in clips:
        samples, sr = c.source.load()
        sf.write(folder / f"{c.id}.wav", samples, sr)
        lines.append(json.dumps({"audio_filepath": f"{c.id}.wav", "text": c.reference}))
    manifest = folder / "manifest.jsonl"
    manifest.write_text("\n".join(lines) + "\n")
    said = root / "courtesy-said.jsonl"
    said.write_text("".join(json.dumps({"id": f"{cid}.wav", "spoken": text}) + "\n" for cid, text in spoken.items()))
    return manifest, said


def write_courtesy_spec(
    root: Path, manifest: Path, model_spec: str = "translate-test:a", spoken: Path | None = None
) -> Path:
    """A spec running the courtesy battery and its study (noise, and the study's own truncation) with
    the translate-test model (or ``model_spec``); the spoken-text file (``spoken``, by default one that
    opens every clip whose file exists with "Thank you, Mister President.": what the audio says, for
    the test, which the reference omits)."""
    import json

    from asr_audit.corpus.spec import load_corpus

    if spoken is None:
        spoken = root / "courtesy-spoken.jsonl"
        lines = []
        for c in load_corpus(str(manifest)).clips:
            opener = "Thank you, Mister President. " if c.audio_path and Path(c.audio_path).is_file() else ""
            lines.append(json.dumps({"id": c.id, "spoken": opener + c.reference}))
        spoken.write_text("\n".join(lines) + "\n")
    probe = f"""[probes.courtesy]
conditions = ["noise:10db"]
spoken = "{spoken}"
resamples = 20
"""
    return write_probe_spec(root, "courtesy", manifest, "tr", model_spec, probe)
