"""The flags of a probe's inputs, declared once for every verb that takes them (issue 28).

A probe's own options declare their flags next to their records (``refdis_options.FLAGS``,
``ortho.FLAGS``, ...); the flags here set what every front door hands a probe in its
:class:`~asr_audit.probes.core.probe.ProbeInputs` (the prediction files, the corpus and its models,
the store, the seed, the normalizer) and the result files a verb writes. ``cli/probe_verbs.py``
builds the verbs from them; a verb that needs another default takes ``dataclasses.replace(FLAG,
default=...)``, never a second help text (a verb's nuance goes into its own help).
"""

from __future__ import annotations

from pathlib import Path

from asr_audit.options import REQUIRED, CliFlag, split_names

PREDS = CliFlag("preds", Path, REQUIRED, "Folder (or file) of per-model prediction files.")
DATASET = CliFlag("dataset", str, None, "Pick one dataset in a folder holding several (e.g. calib-test).")
PANEL = CliFlag("panel", str, None, "Comma-separated panel models (consensus miners).")
MODELS = CliFlag("models", str, None, "Models to score (default: every file).", parse=split_names)
SEED = CliFlag("seed", int, 0, "Seed of the run's random draws (bootstrap, noise, controls): same seed, same result.")
RESAMPLES = CliFlag("resamples", int, 1000, "Bootstrap resamples.")
NORMALIZER = CliFlag(
    "normalizer",
    str,
    "whisper",
    "whisper (OpenAI Whisper's) | whisper-normalizer-0.1.15 | oal | basic | whisper-basic | "
    "basic-es | basic-fr | basic-de | basic-chars (see docs/normalizers.md)",
)
LANGUAGE = CliFlag(
    "language",
    str,
    "en",
    "Language of the corpus, its primary subtag decides (en-GB is English). Scoring: non-English text uses "
    "basic-es / basic-fr / basic-de for those languages, basic for others (under --preset anchor: whisper-basic, as "
    "the paper's code); Chinese, Japanese, Korean, Thai, Lao, Khmer and Myanmar are scored by character "
    "(basic-chars; anchor: the paper's CJK spacing). switch-rate: the convention families of en, es, fr, de "
    "(percent only: it, nl, pl, pt).",
)
CORPUS = CliFlag(
    "corpus",
    str,
    REQUIRED,
    "Manifest JSONL, LibriSpeech folder, Kaldi data dir, or hf-dataset:<id>/<config>/<split>.",
    ("--corpus", "-c"),
)
MODEL = CliFlag("model", str, REQUIRED, "Model spec(s), comma-separated.", ("--model", "-m"))
LIMIT = CliFlag("limit", int, None, "Only the first N clips of the corpus.", minimum=1)
STORE = CliFlag("store", Path, None, "Result store (SQLite); default: user cache dir or $ASR_AUDIT_STORE.")
SPEAKER = CliFlag("speaker", str, None, "Only clips of these speakers, comma-separated.")
JSON = CliFlag("json_out", Path, None, "Write the full result as JSON.", ("--json",), output=True)
CSV = CliFlag("csv_out", Path, None, "Write the result's table as CSV.", ("--csv",), output=True)
