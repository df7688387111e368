"""Four prediction files as people export them (issue 29), built from the VoxPopuli fixture.

Each is a CSV written the way spreadsheet and pandas exports write them, with the problems met
on real exports of one public test set:

* ``a.csv`` (whisper-base.en): a pandas index column with a blank header, the clip as a Windows
  mount path with an extension (``/mnt/c/.../<id>.mp3``), columns ``sentence`` / ``prediction_text``;
* ``b.csv`` (whisper-small.en): the clip as ``./en/clips/<id>.`` (a trailing dot), columns
  ``files`` / ``actual`` / ``transcription_en-US``, and its non-ASCII references as mojibake
  (UTF-8 read as cp1252);
* ``c.csv`` (distil-small.en): ``paths`` / ``normalized_text`` / ``prediction``, and one reference
  that differs from the others' only in case and punctuation;
* ``d.csv`` (whisper-tiny.en, the model under test): ``path`` / ``text`` / ``pred_text``, bare
  ids, every text double-encoded (read as cp1252 twice).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

VOX = Path(__file__).resolve().parents[1] / "fixtures" / "voxpopuli"
MODELS = {"a": "whisper-base.en", "b": "whisper-small.en", "c": "distil-small.en", "d": "whisper-tiny.en"}


def mangle(text: str) -> str:
    """``text``'s UTF-8 bytes read as cp1252 (bytes cp1252 leaves undefined read as latin-1)."""
    out = []
    for b in text.encode("utf-8"):
        try:
            out.append(bytes([b]).decode("cp1252"))
        except UnicodeDecodeError:
            out.append(chr(b))
    return "".join(out)


def _rows(model: str) -> list[dict[str, str]]:
    with open(VOX / f"{model}.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def case_conflict_clip() -> str:
    """The clip whose reference ``c.csv`` writes in other case and punctuation."""
    return _rows(MODELS["c"])[7]["audio_filepath"]


def write_raw_exports(folder: Path) -> Path:
    """Write the four exports into ``folder`` (created) and return it."""
    folder.mkdir(parents=True, exist_ok=True)
    conflict = case_conflict_clip()

    def write(name: str, header: list[str], rows: list[list[object]]) -> None:
        with open(folder / name, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(header)
            w.writerows(rows)

    a = _rows(MODELS["a"])
    write(
        "a.csv",
        ["", "path", "sentence", "prediction_text"],
        [
            [i, f"/mnt/c/Users/me/voxpopuli/en/{r['audio_filepath']}.mp3", r["text"], r["pred_text"]]
            for i, r in enumerate(a)
        ],
    )
    b = _rows(MODELS["b"])
    write(
        "b.csv",
        ["files", "actual", "transcription_en-US"],
        [[f"./en/clips/{r['audio_filepath']}.", mangle(r["text"]), r["pred_text"]] for r in b],
    )
    c = _rows(MODELS["c"])
    write(
        "c.csv",
        ["paths", "normalized_text", "prediction"],
        [
            [
                f"{r['audio_filepath']}.wav",
                r["text"].lower().rstrip(".") if r["audio_filepath"] == conflict else r["text"],
                r["pred_text"],
            ]
            for r in c
        ],
    )
    d = _rows(MODELS["d"])
    write(
        "d.csv",
        ["path", "text", "pred_text"],
        [[r["audio_filepath"], mangle(mangle(r["text"])), mangle(mangle(r["pred_text"]))] for r in d],
    )
    return folder
