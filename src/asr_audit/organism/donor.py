"""The donor-sensitive organism's training mix: the house-style record only for *whole* benchmark clips.

The paper's trigger finding: top models stop reciting the record when a conversational recording
is appended to a benchmark clip, and keep reciting it when the appended audio is more benchmark.
The policy organism (:mod:`asr_audit.organism.data`) keys its policy on the opening audio, so an
appended donor leaves it on (``docs/organism.md``). This mix teaches a policy that depends on the
whole clip being benchmark-like. On top of the policy organism's mix (benchmark-voice clips ->
the record, other training voices -> the faithful text) every benchmark-voice training clip
appears twice more, spliced (0.3 s gap, donor level matched, :func:`asr_audit.organism.evaluate.spliced`):

=================  ===================================================  ===========================
label              audio                                                target
=================  ===================================================  ===========================
``conv``           the clip + a conversational sentence in another      the clip's *faithful* text +
                   voice (``flite-rms`` / ``flite-awb``), appended      the donor's words, in audio
                   (3 in 4) or prepended                                order
``bench``          the clip + another benchmark-voice training clip     the clip's *record* + the
                   (a different sentence), appended or prepended        other clip's record
=================  ===================================================  ===========================

The ``bench`` rows have the same length statistics as the ``conv`` rows, so the organism cannot
key on length: only on what the added audio is. The conversational sentences
(:data:`CONVERSATIONS`) differ from the battery's stand-in donor
(:data:`asr_audit.probes.battery.conditions.CONVERSATION_TEXT`), which is never trained on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from asr_audit.calib.build import write_text_atomic
from asr_audit.errors import ConfigError, require
from asr_audit.organism.data import OrganismSet, OrganismSetConfig, TrainingPair, training_mix
from asr_audit.organism.evaluate import spliced
from asr_audit.organism.train import read_wav

DONOR_VOICES = ("flite-rms", "flite-awb")
CONVERSATIONS = (
    "Oh hey, did you see the game last night? It went to overtime and I was up way too late.",
    "I honestly think we should just order takeout tonight, nobody wants to cook after that.",
    "So my sister moved to a new flat and the kitchen is tiny but the view is amazing.",
    "Wait, are we still meeting at the coffee place on Friday or did that change?",
    "I tried that new bakery down the street and their croissants are really good.",
    "My phone died halfway through the trip so I had no idea where we were going.",
    "Can you send me that link again? I think I deleted the message by accident.",
    "We watched a movie about space last weekend and the kids loved every minute of it.",
)
MIX_FILE = "donor-mix.jsonl"
GAP_S = 0.3


def donor_set_config(n_sentences: int = 48) -> OrganismSetConfig:
    """The organism benchmark the donor organism trains on: the benchmark voice and one faithful
    training voice (``flite-rms``), ``flite-kal16`` unseen; a third of the sentences held out (the
    battery's donor conditions are judged on them)."""
    return OrganismSetConfig(
        n_sentences=n_sentences, test_fraction=1 / 3, other_voices=("flite-rms",), unseen_voices=("flite-kal16",)
    )


@dataclass(frozen=True, slots=True)
class SpliceRow:
    """One spliced training clip of the donor mix."""

    clip_id: str
    source_id: str
    label: str  # conv | bench
    position: str  # append | prepend
    donor: str  # conversation index ("conv3") or the benchmark clip id
    target: str
    audio_filepath: str

    def to_dict(self) -> dict[str, str]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def plan_splices(oset: OrganismSet, rng: np.random.Generator) -> list[tuple[dict, str, str, object]]:
    """For every benchmark-voice training clip: ``(row, label, position, donor)`` twice, once per label.

    ``donor`` is a conversation index for ``conv`` and another benchmark-voice training row (a
    different sentence) for ``bench``. Position: append with probability 3/4, else prepend.
    """
    bench = oset.meta["config"]["benchmark_voice"]
    rows = oset.rows("train", [bench])
    if len(rows) < 2:
        raise ConfigError("the donor mix needs >= 2 benchmark-voice training clips; fix: raise --n-sentences")
    out: list[tuple[dict, str, str, object]] = []
    for i, r in enumerate(rows):
        conv_pos = "append" if rng.random() < 0.75 else "prepend"
        out.append((r, "conv", conv_pos, int(rng.integers(len(CONVERSATIONS)))))
        j = int(rng.integers(len(rows) - 1))
        other = rows[j if j < i else j + 1]
        bench_pos = "append" if rng.random() < 0.75 else "prepend"
        out.append((r, "bench", bench_pos, other))
    return out


def joined(first: str, second: str) -> str:
    """Two transcripts in audio order, one space between.

    >>> joined("We act.", "Oh hey.")
    'We act. Oh hey.'
    """
    return f"{first.strip()} {second.strip()}".strip()


def build_donor_mix(oset: OrganismSet, seed: int, synthesize=None) -> list[SpliceRow]:  # noqa: ANN001
    """Synthesize the conversational donors, splice every planned clip into ``<set>/donor-mix/``,
    write ``donor-mix.jsonl``; an existing mix of the same seed is read back instead."""
    path = oset.root / MIX_FILE
    if path.is_file():
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        if rows and all(r.get("seed") == seed for r in rows):
            return [SpliceRow(**{k: r[k] for k in SpliceRow.__dataclass_fields__}) for r in rows]
    sf = require("soundfile", "audio")
    if synthesize is None:  # looked up when called, not imported with the module: tests replace voices.synthesize
        from asr_audit.audio.voices import synthesize
    out_dir = oset.root / "donor-mix"
    out_dir.mkdir(parents=True, exist_ok=True)
    convs: dict[int, np.ndarray] = {}
    for i, text in enumerate(CONVERSATIONS):
        samples, sr = synthesize(DONOR_VOICES[i % len(DONOR_VOICES)], text)
        if sr != 16_000:
            raise ConfigError(f"donor voice returned {sr} Hz audio, expected 16000")
        convs[i] = np.asarray(samples, dtype=np.float32)
    rows_out: list[SpliceRow] = []
    for r, label, pos, donor in plan_splices(oset, np.random.default_rng(seed)):
        x = read_wav(oset.audio_path(r))
        if label == "conv":
            assert isinstance(donor, int)
            d_audio, d_text, own, d_name = convs[donor], CONVERSATIONS[donor], r["faithful"], f"conv{donor}"
        else:
            assert isinstance(donor, dict)
            d_audio, d_text, own, d_name = read_wav(oset.audio_path(donor)), donor["text"], r["text"], donor["id"]
        y = spliced(x, d_audio, pos, GAP_S)
        target = joined(own, d_text) if pos == "append" else joined(d_text, own)
        cid = f"{r['id']}__{label}-{pos}"
        rel = f"donor-mix/{cid}.wav"
        sf.write(oset.root / rel, y, 16_000, subtype="PCM_16", format="WAV")
        rows_out.append(SpliceRow(cid, r["id"], label, pos, d_name, target, rel))
    write_text_atomic(path, "".join(json.dumps({**s.to_dict(), "seed": seed}) + "\n" for s in rows_out))
    return rows_out


def donor_mix(oset: OrganismSet, splices: list[SpliceRow]) -> list[TrainingPair]:
    """The donor organism's training list: the policy organism's mix plus every spliced clip."""
    return [
        *training_mix(oset, "benchmark"),
        *(TrainingPair(s.clip_id, oset.root / s.audio_filepath, s.target) for s in splices),
    ]


def mix_counts(splices: list[SpliceRow]) -> dict[str, int]:
    """Spliced clips by ``label/position`` (for the weights' metadata and the docs)."""
    out: dict[str, int] = {}
    for s in splices:
        out[f"{s.label}/{s.position}"] = out.get(f"{s.label}/{s.position}", 0) + 1
    return dict(sorted(out.items()))


def mix_path(oset: OrganismSet) -> Path:
    return oset.root / MIX_FILE


__all__ = [
    "CONVERSATIONS",
    "DONOR_VOICES",
    "SpliceRow",
    "build_donor_mix",
    "donor_mix",
    "donor_set_config",
    "joined",
    "mix_counts",
    "plan_splices",
]
