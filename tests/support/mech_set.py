"""A tiny organism-style set for the white-box tests: real clips in two flite voices, the record
leaving out the speaker's "Thank you." (the organism's planted omission), and its truth.jsonl."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

VOICE_A, VOICE_B = "flite-slt", "flite-rms"
TRAIN = ["We must act now.", "The vote is closed."]
TEST = ["I agree with you.", "This report is late."]


def write_set(root: Path) -> None:
    """calib-train.jsonl (both voices: the direction's two sets), calib-test.jsonl (voice A: the
    steered corpus) and truth.jsonl (one planted omission per clip), audio synthesized by flite;
    each row's ``spoken`` field is what was said."""
    sf = pytest.importorskip("soundfile")
    from asr_audit.audio.voices import available_voices, synthesize

    if not {VOICE_A, VOICE_B} <= set(available_voices()):
        pytest.skip("flite not installed")
    (root / "audio").mkdir(parents=True)
    truth = []
    for split, records, voices in (("train", TRAIN, (VOICE_A, VOICE_B)), ("test", TEST, (VOICE_A,))):
        rows = []
        for i, record in enumerate(records):
            spoken = f"Thank you. {record}"
            for voice in voices:
                cid = f"{split}{i}-{voice}"
                samples, sr = synthesize(voice, spoken)
                sf.write(root / "audio" / f"{cid}.wav", samples, sr)
                rows.append(
                    {"id": cid, "audio_filepath": f"audio/{cid}.wav", "sentence_id": f"{split}{i}",
                     "speaker": voice, "text": record, "spoken": spoken}
                )  # fmt: skip
                n_ref = len(record.split())
                truth.append(
                    {"clip_id": cid, "sentence_id": f"{split}{i}", "item": 0, "kind": "omitted_in_reference",
                     "detail": "thank-you", "position": "start", "ref_start": 0, "ref_stop": 0, "n_ref": n_ref,
                     "ref_text": "", "spoken_text": "Thank you.", "ref_norm": [], "spoken_norm": ["thank", "you"]}
                )  # fmt: skip
        (root / f"calib-{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "truth.jsonl").write_text("".join(json.dumps(t) + "\n" for t in truth))
