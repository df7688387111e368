"""Hugging Face datasets as corpora: ``hf-dataset:<id>/<config>/<split>``.

The audio column is read with ``Audio(decode=False)`` and decoded with soundfile when a clip is
loaded, so no torchcodec/ffmpeg is needed and rows are fetched one at a time.

Two forms:

* ``hf-dataset:<org>/<name>/<config>/<split>`` (or ``<name>/<config>/<split>``): passed to
  ``datasets.load_dataset(id, config, split=split)``; it needs the dataset in the local HF cache
  or network access to the hub. Use ``default`` as the config of single-config datasets.
* ``hf-dataset:<folder>`` or ``hf-dataset:<folder>/<split>``: a dataset written with
  ``save_to_disk`` (a ``Dataset``, or a ``DatasetDict`` plus the split to use), read with
  ``datasets.load_from_disk``; fully offline.

Columns (first present wins): audio ``audio``; reference ``text``, ``sentence``,
``transcript``, ``transcription``, ``normalized_text``; id ``id``, ``audio_id``,
``segment_id``, ``utt_id``, ``key`` (else the row index as ``<split>-<index>``); speaker
``speaker_id``, ``speaker``, ``client_id``; language ``language``, ``locale``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from asr_audit.corpus.clips import Clip, Corpus
from asr_audit.corpus.manifests import corpus_token
from asr_audit.errors import ConfigError, InputFileError, require

PREFIX = "hf-dataset:"
AUDIO_COLUMNS = ("audio",)
TEXT_COLUMNS = ("text", "sentence", "transcript", "transcription", "normalized_text")
ID_COLUMNS = ("id", "audio_id", "segment_id", "utt_id", "key")
SPEAKER_COLUMNS = ("speaker_id", "speaker", "client_id")
LANGUAGE_COLUMNS = ("language", "locale")


@dataclass(frozen=True, slots=True, eq=False)
class HFRowSource:
    """One row's audio in a (memory-mapped) HF dataset, fetched when the clip is loaded."""

    dataset: Any  # datasets.Dataset restricted to the audio column, decode=False
    column: str
    index: int
    label: str
    dataset_fingerprint: str | None = None

    @property
    def fingerprint(self) -> str | None:
        if self.dataset_fingerprint is None:
            return None
        return f"hf:{self.dataset_fingerprint}:{self.column}:{self.index}"

    def load(self) -> tuple[np.ndarray, int]:
        import io

        sf = require("soundfile", "audio")
        cell = self.dataset[self.index][self.column]
        if not isinstance(cell, dict):
            raise ValueError(f"audio cell is a {type(cell).__name__}, expected {{'bytes', 'path'}}")
        if cell.get("bytes"):
            samples, sr = sf.read(io.BytesIO(cell["bytes"]), dtype="float32", always_2d=True)
        elif cell.get("path") and Path(cell["path"]).is_file():
            samples, sr = sf.read(cell["path"], dtype="float32", always_2d=True)
        else:
            raise FileNotFoundError(f"row has no audio bytes and its path {cell.get('path')!r} does not exist")
        return samples, int(sr)


def _first(columns: list[str], names: tuple[str, ...]) -> str | None:
    return next((n for n in names if n in columns), None)


def _open(arg: str) -> tuple[Any, str, str]:
    """(dataset, corpus name, split) for the text after ``hf-dataset:``."""
    datasets = require("datasets", "hf-datasets")
    folder, split = Path(arg), None
    if not folder.is_dir() and Path(arg).parent.is_dir() and "/" in arg:
        folder, split = Path(arg).parent, Path(arg).name
    if folder.is_dir() and split is None and (folder.parent / "dataset_dict.json").is_file():
        folder, split = folder.parent, folder.name  # a split folder inside a saved DatasetDict
    if folder.is_dir():
        try:
            ds = datasets.load_from_disk(str(folder))
        except Exception as exc:  # noqa: BLE001 - datasets raises several types for foreign folders
            raise InputFileError(
                folder,
                f"not a dataset saved with save_to_disk ({type(exc).__name__}: {exc})",
                "save it with Dataset.save_to_disk, or use hf-dataset:<id>/<config>/<split>",
            ) from None
        if isinstance(ds, datasets.DatasetDict):
            if split is None or split not in ds:
                raise ConfigError(
                    f"{PREFIX}{arg}: the saved dataset has splits {', '.join(ds)}; fix: use {PREFIX}{folder}/<split>"
                )
            ds = ds[split]
        elif split is not None:
            raise ConfigError(f"{PREFIX}{arg}: {folder} holds a single split; fix: use {PREFIX}{folder}")
        return ds, corpus_token(folder.name), split or "test"
    parts = arg.strip("/").split("/")
    if len(parts) < 3:
        raise ConfigError(
            f"corpus spec {PREFIX}{arg} needs <id>/<config>/<split> "
            f"(e.g. {PREFIX}openslr/librispeech_asr/clean/test), or a folder written by save_to_disk"
        )
    ds_id, config, split = "/".join(parts[:-2]), parts[-2], parts[-1]
    try:
        ds = datasets.load_dataset(ds_id, None if config == "default" else config, split=split)
    except Exception as exc:  # noqa: BLE001 - offline, unknown id, unknown config/split
        raise ConfigError(
            f"corpus spec {PREFIX}{arg}: could not load dataset {ds_id!r} config {config!r} split "
            f"{split!r} ({type(exc).__name__}: {str(exc)[:200]}); fix: check the names, or download it "
            f"first and save_to_disk, then use {PREFIX}<folder>"
        ) from None
    return ds, corpus_token(f"{ds_id}-{config}"), split


def read_hf_dataset(arg: str) -> Corpus:
    """Load ``hf-dataset:<arg>`` as a :class:`Corpus`; audio stays undecoded until loaded."""
    datasets = require("datasets", "hf-datasets")
    ds, name, split = _open(arg)
    cols = list(ds.column_names)
    audio_col = _first(cols, AUDIO_COLUMNS)
    text_col = _first(cols, TEXT_COLUMNS)
    spec = f"{PREFIX}{arg}"
    if audio_col is None:
        raise ConfigError(f"{spec}: no audio column (have: {', '.join(cols)}); fix: rename the audio column to 'audio'")
    if text_col is None:
        raise ConfigError(
            f"{spec}: no reference column (have: {', '.join(cols)}); "
            f"fix: rename the transcript column to one of {', '.join(TEXT_COLUMNS)}"
        )
    ds = ds.cast_column(audio_col, datasets.Audio(decode=False))
    meta_cols = [
        c
        for c in (text_col, _first(cols, ID_COLUMNS), _first(cols, SPEAKER_COLUMNS), _first(cols, LANGUAGE_COLUMNS))
        if c is not None
    ]
    meta = ds.select_columns(meta_cols).to_dict()
    audio_only = ds.select_columns([audio_col])
    fp = getattr(ds, "_fingerprint", None)
    id_col, spk_col, lang_col = _first(cols, ID_COLUMNS), _first(cols, SPEAKER_COLUMNS), _first(cols, LANGUAGE_COLUMNS)
    clips: list[Clip] = []
    seen: set[str] = set()
    for i, ref in enumerate(meta[text_col]):
        clip_id = str(meta[id_col][i]) if id_col else f"{split}-{i:06d}"
        if clip_id in seen:
            raise ConfigError(
                f"{spec}: row {i} repeats clip id {clip_id!r} in column {id_col!r}; fix: make the id column unique"
            )
        seen.add(clip_id)
        if ref is None or not isinstance(ref, str):
            raise ConfigError(
                f"{spec}: row {i} has reference {ref!r} in column {text_col!r}; fix: give every row a string"
            )
        clips.append(
            Clip(
                id=clip_id,
                reference=ref,
                source=HFRowSource(audio_only, audio_col, i, label=f"{spec} row {i}", dataset_fingerprint=fp),
                speaker=None if spk_col is None or meta[spk_col][i] is None else str(meta[spk_col][i]),
                language=None if lang_col is None or meta[lang_col][i] is None else str(meta[lang_col][i]),
                corpus=name,
            )
        )
    if not clips:
        raise ConfigError(f"{spec}: the dataset has no rows; fix: choose a non-empty split")
    return Corpus(name=name, split=corpus_token(split).replace("_", "-"), source=spec, clips=tuple(clips))
