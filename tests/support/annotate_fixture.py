"""A tiny real labelling set: flite speaks 30 sentences, their references carry planted edits.

Clips 0-15: the reference misnames the speaker's first and last words (two true reference errors
the panel corrects); 16-19: the panel mishears both where the reference is right; 20-24: the
reference adds a word nobody said at the end (a deletion edit) and misnames the first word;
25-29: the reference drops the last word (an insertion edit) and misnames the first. Three panel
models write what the panel hears, ``copier`` writes the reference, ``listener`` what was said.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

NAMES = ("peter", "anna", "maria", "david", "susan", "robert")
VERBS = ("painted", "cleaned", "opened", "carried", "repaired")
OBJECTS = ("red door", "old boat", "small table", "green window", "heavy box")
DAYS = ("monday", "tuesday", "friday", "sunday", "yesterday")
PANEL = ("p1", "p2", "p3")
N_CLIPS = 30


@dataclass(frozen=True)
class LabelSet:
    preds: Path
    audio: Path
    reference_wrong: dict[str, bool]  # clip id -> whether its planted edits are true reference errors


def _other(words: tuple[str, ...], w: str) -> str:
    return words[(words.index(w) + 1) % len(words)]


def build_label_set(root: Path, n_clips: int = N_CLIPS) -> LabelSet:
    """Prediction files, flite audio (``<clip>.wav``) and the truth of each clip's edits."""
    preds, audio = root / "preds", root / "audio"
    preds.mkdir(parents=True)
    audio.mkdir(parents=True)
    rows: dict[str, list[dict[str, str]]] = {m: [] for m in (*PANEL, "copier", "listener")}
    truth: dict[str, bool] = {}
    for i in range(n_clips):
        cid = f"clip{i:02d}"
        name, day = NAMES[i % len(NAMES)], DAYS[(i // 2) % len(DAYS)]
        words = [name, VERBS[i % len(VERBS)], "the", *OBJECTS[(i // 3) % len(OBJECTS)].split(), "on", day]
        spoken = " ".join(words)
        wrong_start = " ".join([_other(NAMES, name), *words[1:]])
        if i < 16:
            ref, heard = " ".join([_other(NAMES, name), *words[1:-1], _other(DAYS, day)]), spoken
        elif i < 20:
            ref, heard = spoken, " ".join([_other(NAMES, name), *words[1:-1], _other(DAYS, day)])
        elif i < 25:
            ref, heard = f"{wrong_start} again", spoken
        else:
            ref, heard = " ".join(wrong_start.split()[:-1]), spoken
        truth[cid] = i < 16 or i >= 20
        subprocess.run(
            ["flite", "-voice", "slt", "-t", spoken, "-o", str(audio / f"{cid}.wav")], check=True, timeout=60
        )
        for m in PANEL:
            rows[m].append({"id": cid, "text": ref, "pred_text": heard})
        rows["copier"].append({"id": cid, "text": ref, "pred_text": ref})
        rows["listener"].append({"id": cid, "text": ref, "pred_text": spoken})
    for m, rs in rows.items():
        (preds / f"{m}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rs), encoding="utf-8")
    return LabelSet(preds, audio, truth)
