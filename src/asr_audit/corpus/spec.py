"""Resolve a corpus spec string to a :class:`~asr_audit.corpus.clips.Corpus`.

Detected from what is there:

* ``hf-dataset:...`` — a Hugging Face dataset (see :mod:`asr_audit.corpus.hf`);
* a ``.jsonl`` / ``.json`` / ``.ndjson`` file — a leaderboard manifest;
* a folder with ``wav.scp`` — a Kaldi data directory;
* a folder with ``*.trans.txt`` files — the LibriSpeech layout.
"""

from __future__ import annotations

from pathlib import Path

from asr_audit.corpus.clips import Corpus
from asr_audit.corpus.hf import PREFIX as HF_PREFIX
from asr_audit.corpus.hf import read_hf_dataset
from asr_audit.corpus.layouts import is_kaldi_dir, is_librispeech_dir, read_kaldi, read_librispeech
from asr_audit.corpus.manifests import MANIFEST_SUFFIXES, read_manifest
from asr_audit.errors import InputFileError

CORPUS_FORMS = (
    "a JSONL manifest (audio_filepath, text, duration)",
    "a LibriSpeech-layout folder (*.trans.txt + .flac)",
    "a Kaldi data folder (wav.scp, text, utt2spk)",
    "hf-dataset:<id>/<config>/<split> or hf-dataset:<save_to_disk folder>",
)


def load_corpus(spec: str | Path) -> Corpus:
    """The corpus named by ``spec`` (see the module docstring for the accepted forms)."""
    text = str(spec).strip()
    if text.startswith(HF_PREFIX):
        return read_hf_dataset(text[len(HF_PREFIX) :])
    path = Path(text).expanduser()
    fix = "pass " + "; or ".join(CORPUS_FORMS)
    if path.is_file():
        if path.suffix.lower() in MANIFEST_SUFFIXES:
            return read_manifest(path)
        raise InputFileError(path, f"unknown corpus file type {path.suffix or '(none)'!r}", fix)
    if path.is_dir():
        if is_kaldi_dir(path):
            return read_kaldi(path)
        if is_librispeech_dir(path):
            return read_librispeech(path)
        raise InputFileError(
            path, "folder is neither a Kaldi data dir (no wav.scp) nor LibriSpeech layout (no *.trans.txt)", fix
        )
    raise InputFileError(path, "no such file or directory", fix)
