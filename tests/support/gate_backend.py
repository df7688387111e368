"""A fake hooked backend and its clips, shared by tests/mechrun and tests/runner (tests/conftest.py
puts this folder on ``sys.path``, so it imports as ``gate_backend``). Import it after
``pytest.importorskip("torch")`` and ``("soundfile")``: it needs both."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf
import torch

from asr_audit.corpus.clips import Clip
from asr_audit.models.base import BackendIdentity

REF = "madam president we must act"
SPOKEN = "we must act"


class Gate:
    """Writes the record's opener when coordinate 0 of its ``decoder.out`` activation exceeds 0.5;
    ``calls`` counts the clips it transcribed."""

    spec = "fake-gate"
    capabilities = frozenset({"transcribe", "sites"})
    max_duration = None
    batch_size = 8

    def __init__(self) -> None:
        self.out = torch.nn.Identity()
        self.calls = 0

    def identity(self) -> BackendIdentity:
        return BackendIdentity(self.spec, "w0")

    def sites(self) -> list[str]:
        return ["decoder.out"]

    def site_module(self, name: str):
        return self.out

    def transcribe(self, audios):
        self.calls += len(audios)
        h = self.out(torch.tensor(np.stack([a[:4] for a in audios]), dtype=torch.float64))
        return [REF if float(x[0]) > 0.5 else SPOKEN for x in h]


class ScoringGate(Gate):
    """:class:`Gate` that can also teacher-force: ``score`` runs the activation through
    ``decoder.out`` as a (1, 2, 4) prompt-length output (the prompt is two tokens), so a gate reads
    position 1 by default; ``scored`` counts the clips it scored."""

    prompt = (50257, 50362)

    def __init__(self) -> None:
        super().__init__()
        self.scored = 0

    def score(self, audios, prefixes, targets):
        self.scored += len(audios)
        x = torch.tensor(np.stack([a[:4] for a in audios]), dtype=torch.float64)
        self.out(x[:, None, :].expand(-1, 2, -1).clone())
        return [None] * len(audios)


def gate_clips(folder: Path, voices: tuple[str, str] | None = None) -> list[Clip]:
    """Six clips ``c0``..``c5`` written as ``folder/c{i}.wav`` with reference :data:`REF`: the
    first four recite under :class:`Gate`, the last two do not; with ``voices``, even clips are
    spoken by the first voice and odd ones by the second."""
    clips = []
    for i in range(6):
        x = np.zeros(1600, np.float32)
        x[0] = 0.9 if i < 4 else 0.1  # four clips recite, two do not
        x[1] = 0.01 * i  # distinct audio per clip
        p = folder / f"c{i}.wav"
        sf.write(p, x, 16_000, subtype="FLOAT")
        clips.append(Clip(f"c{i}", REF, audio_path=str(p), speaker=None if voices is None else voices[i % 2]))
    return clips
