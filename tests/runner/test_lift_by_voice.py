"""Lift per voice: items grouped by their clip's speaker, with clustered intervals."""

from __future__ import annotations

import numpy as np

from asr_audit.corpus.clips import Clip
from asr_audit.probes.audio.lift import lift_by_voice


def test_lift_is_grouped_by_the_clips_voice() -> None:
    clips = [
        Clip(id=f"s{i}-{v}", reference=f"sentence {i}", audio_path="x.wav", speaker=v)
        for i in range(6)
        for v in ("slt", "rms")
    ]
    items = [
        {
            "model": "m",
            "condition": "unmasked",
            "clip_id": c.id,
            "error": None,
            "lift": (1.0 if c.speaker == "slt" else -0.5) + 0.01 * i,
        }
        for i, c in enumerate(clips)
    ]
    items.append({"model": "m", "condition": "unmasked", "clip_id": "s0-slt", "error": "boom", "lift": None})
    rows = lift_by_voice(items, clips, seed=0, n_resamples=200)
    by = {(r["voice"], r["condition"]): r for r in rows}
    assert set(by) == {("slt", "unmasked"), ("rms", "unmasked")}
    assert by[("slt", "unmasked")]["n"] == 6 and by[("rms", "unmasked")]["n"] == 6  # the failed row is left out
    assert by[("slt", "unmasked")]["mean"] > 0.9 > 0 > by[("rms", "unmasked")]["mean"]
    for r in rows:
        assert r["ci_low"] <= r["mean"] <= r["ci_high"]
    assert rows == lift_by_voice(items, clips, seed=0, n_resamples=200)  # seeded: identical
    assert np.isclose(
        by[("rms", "unmasked")]["mean"], np.mean([it["lift"] for it in items[:-1] if "rms" in it["clip_id"]])
    )
    # one sentence read six times is one cluster: its interval is undefined, not [mean, mean]
    same = [Clip(id=c.id, reference="x", audio_path="x.wav", speaker=c.speaker) for c in clips]
    for r in lift_by_voice(items, same, seed=0, n_resamples=200):
        assert r["n"] == 6 and r["mean"] is not None and (r["ci_low"], r["ci_high"]) == (None, None)
